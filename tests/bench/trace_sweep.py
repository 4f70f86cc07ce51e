#!/usr/bin/env python3
"""Straggler accuracy of `rankscope analyze` on traces it did not design (issue 22).

For each setting (ranks x fault x bucket layout x step markers x seed) tests/bench/ddp_tracegen.py
writes a job's PyTorch-profiler traces and truth.json from the physics of DDP; `rankscope analyze
--json` judges them; the verdicts are scored against the truth:
  recall      slow ranks named / slow ranks expected (faults with straggler_expected)
  false       verdicts naming a rank that is not slow (every fault, fault-free and spikes too)
  cause       named slow ranks whose cause is the expected one
  precision   verdicts naming a slow rank / verdicts
  suspects    suspects that are slow ranks / suspects (informational list)
  onset error |verdict onset - true onset| in steps (with markers: ProfilerStep numbers)
  since error |since_ns - the true onset's GPU time| in steps of the job (GPU time, not markers)
  confidence  per verdict (confidence, right): the calibration table at the end
Prints one row per setting (sums over seeds) and writes the rows as JSON with --json-out.

usage: python3 tests/bench/trace_sweep.py [--ranks 8,32] [--seeds 3] [--steps 60]
           [--faults none,gpu5,gpu10,...] [--layouts interleaved,after] [--markers yes,no]
           [--build build] [--work /tmp/rs-sweep] [--json-out FILE] [--gen-args "--sync none"]
"""
import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# name -> generator --fault arguments ({r}: the slow rank(s), {o}: onset step)
FAULTS = {
    "none": [],
    "gpu3": ["slow_gpu:ranks={r},factor=1.03,onset={o}"],
    "gpu5": ["slow_gpu:ranks={r},factor=1.05,onset={o}"],
    "gpu10": ["slow_gpu:ranks={r},factor=1.10,onset={o}"],
    "ramp10": ["ramp:ranks={r},factor=1.10,ramp=10,onset={o}"],
    "two-slow": ["slow_gpu:ranks={r2},factor=1.08,onset={o}"],
    "5pct-slow": ["slow_gpu:ranks={r5},factor=1.08,onset={o}"],
    "extra": ["extra_work:ranks={r},extra_ms=3,n=3,onset={o}"],
    "host5": ["host_stall:ranks={r},stall_ms=5,onset={o}"],
    "intermittent": ["intermittent:ranks={r},factor=1.5,period=4,duty=0.25,onset={o}"],
    "spikes": ["spikes:prob=0.02,factor=1.4"],
}


def run_setting(a, ranks, fault, layout, markers, seed):
    out = os.path.join(a.work, "job")
    shutil.rmtree(out, ignore_errors=True)
    slow = ranks // 2 - 1 if ranks > 2 else 1
    onset = a.steps // 8  # the rule needs its 2 newest windows (30 steps each) slow
    fault_args = []
    k5 = max(1, ranks * 5 // 100)  # 5% of the ranks, spread over them
    r5 = "/".join(str(1 + i * (ranks // k5)) for i in range(k5))
    for f in FAULTS[fault]:
        fault_args += ["--fault", f.format(r=slow, r2="%d/%d" % (slow, ranks - 1), r5=r5,
                                           o=onset)]
    gen = [sys.executable, os.path.join(HERE, "ddp_tracegen.py"), "-o", out, "--ranks", str(ranks),
           "--steps", str(a.steps), "--seed", str(seed), "--bucket-mode", layout, "-q"]
    if markers == "no":
        gen.append("--no-step-markers")
    gen += a.gen_args.split()
    subprocess.run(gen + fault_args, check=True)
    truth = json.load(open(os.path.join(out, "truth.json")))
    t0 = time.time()
    p = subprocess.run([os.path.join(a.build, "bin", "rankscope"), "analyze", "--json",
                        "--job", "sweep", out], capture_output=True, text=True)
    seconds = time.time() - t0
    if p.returncode != 0:
        return {"error": p.stderr.strip()[-300:]}
    d = json.loads(p.stdout)
    verdicts = d["stragglers"].get("stragglers", [])
    expected, causes, onsets, onset_ns, kinds = set(), {}, {}, {}, {}
    with gzip.open(os.path.join(out, "ddp_rank0.json.gz"), "rt") as fh:
        base = int(re.search(r'"baseTimeNanoseconds":\s*(\d+)', fh.read(4096)).group(1))
    for f in truth["faults"]:
        if f.get("straggler_expected"):
            for r in f["slow_ranks"]:
                expected.add(r)
                causes[r] = f["expected_cause"]
                kinds[r] = "intermittent" if f.get("intermittent") else "straggler"
                onsets[r] = f["onset_profiler_step"] if markers == "yes" else f["onset_step"]
                ts = (f.get("onset_gpu_ts_us") or {}).get(str(r))
                if ts is not None:
                    onset_ns[r] = base + ts * 1000
    named = {v["rank"]: v for v in verdicts}
    hits = expected & set(named)
    onset_err, since_err = [], []
    step_ns = truth["job_step_ms_median"] * 1e6
    for r in hits:
        o = (named[r].get("onset") or {}).get("step")
        if o is None:
            o = named[r].get("since_step")
        if o is not None and r in onsets:
            onset_err.append(abs(o - onsets[r]))
        if r in onset_ns and named[r].get("since_ns"):
            since_err.append(abs(named[r]["since_ns"] - onset_ns[r]) / step_ns)
    suspects = {x["rank"] for x in d["stragglers"].get("suspects", [])}
    return {
        "expected": len(expected), "named": len(hits),
        "verdicts": len(named),
        "false": len(set(named) - expected),
        "cause_right": sum(1 for r in hits if named[r].get("cause") == causes[r]),
        "kind_right": sum(1 for r in hits if named[r].get("kind", "straggler") == kinds[r]),
        "suspects": len(suspects), "suspects_slow": len(suspects & expected),
        "onset_err": onset_err, "since_err": since_err, "seconds": seconds,
        "confidence": [(v.get("confidence", 0), v["rank"] in expected) for v in verdicts],
        "enough_data": d["stragglers"].get("enough_data", True),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ranks", default="8,32")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--faults", default=",".join(FAULTS))
    p.add_argument("--layouts", default="interleaved,after")
    p.add_argument("--markers", default="yes,no")
    p.add_argument("--build", default=os.environ.get("BUILD", os.path.join(ROOT, "build")))
    p.add_argument("--work", default="/tmp/rs-sweep")
    p.add_argument("--json-out")
    p.add_argument("--gen-args", default="",
                   help="more ddp_tracegen.py arguments, e.g. '--sync none' (a host running ahead)")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rows = []
    print("| ranks | fault | buckets | markers | recall | precision | false verdicts | cause right | "
          "kind right | suspects slow | onset error (steps, max) | since error (steps, max) | "
          "analyze s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    conf = []
    for ranks in [int(x) for x in a.ranks.split(",")]:
        for fault in a.faults.split(","):
            for layout in a.layouts.split(","):
                for markers in a.markers.split(","):
                    agg = {"expected": 0, "named": 0, "false": 0, "cause_right": 0,
                           "verdicts": 0, "kind_right": 0, "suspects": 0, "suspects_slow": 0,
                           "onset_err": [], "since_err": [], "seconds": 0.0, "errors": 0,
                           "confidence": []}
                    for seed in range(1, a.seeds + 1):
                        r = run_setting(a, ranks, fault, layout, markers, seed)
                        if "error" in r:
                            agg["errors"] += 1
                            print("  error: %s" % r["error"], file=sys.stderr)
                            continue
                        for k in ("expected", "named", "false", "cause_right", "seconds",
                                  "verdicts", "kind_right", "suspects", "suspects_slow"):
                            agg[k] += r[k]
                        agg["onset_err"] += r["onset_err"]
                        agg["since_err"] += r["since_err"]
                        conf += r["confidence"]
                        agg["confidence"] += r["confidence"]
                    row = dict(ranks=ranks, fault=fault, layout=layout, markers=markers,
                               seeds=a.seeds, **agg)
                    rows.append(row)
                    recall = ("%d/%d" % (agg["named"], agg["expected"])) if agg["expected"] else "-"
                    cause = ("%d/%d" % (agg["cause_right"], agg["named"])) if agg["named"] else "-"
                    kind = ("%d/%d" % (agg["kind_right"], agg["named"])) if agg["named"] else "-"
                    prec = (("%d/%d" % (agg["verdicts"] - agg["false"], agg["verdicts"]))
                            if agg["verdicts"] else "-")
                    susp = ("%d/%d" % (agg["suspects_slow"], agg["suspects"])
                            if agg["suspects"] else "-")
                    onset = ("%d" % max(agg["onset_err"])) if agg["onset_err"] else "-"
                    since = ("%.1f" % max(agg["since_err"])) if agg["since_err"] else "-"
                    print("| %d | %s | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s | %.1f |%s" % (
                        ranks, fault, layout, markers, recall, prec, agg["false"], cause, kind,
                        susp, onset, since,
                        agg["seconds"] / max(1, a.seeds - agg["errors"]),
                        " %d errors" % agg["errors"] if agg["errors"] else ""), flush=True)
    print("\n| confidence | verdicts | right |")
    print("|---|---|---|")
    for lo, hi in ((0.9, 1.01), (0.7, 0.9), (0.5, 0.7), (0.0, 0.5)):
        sel = [ok for c, ok in conf if lo <= c < hi]
        print("| %.1f – %.1f | %d | %s |" % (lo, min(hi, 1.0), len(sel),
                                            "%.3f" % (sum(sel) / len(sel)) if sel else "-"))
    if a.json_out:
        json.dump(rows, open(a.json_out, "w"), indent=1)
    shutil.rmtree(a.work, ignore_errors=True)


if __name__ == "__main__":
    main()
