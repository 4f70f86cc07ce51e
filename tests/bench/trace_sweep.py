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
  measured    the truth's slowdown of each missed slow rank against its peers (what the trace
              shows after interference and the GPUs' own spread, not the injected factor)
Prints one row per setting (sums over seeds) and writes the rows as JSON with --json-out.

Settings run in parallel with --jobs N (each job its own folder under --work); --jsonl FILE appends
one line per job as it ends (a run cut short keeps what it did), and --report FILE... prints the
table and the calibration from such files alone. --variants adds settings where verdicts can go
wrong: `noisy` (3x the kernel, GPU and step noise), `short` (40 steps: windows of 20).

usage: python3 tests/bench/trace_sweep.py [--ranks 8,32] [--seeds 3] [--steps 60]
           [--faults none,gpu5,gpu10,...] [--layouts interleaved,after] [--markers yes,no]
           [--variants default,noisy,short] [--jobs 1] [--jsonl FILE]
           [--build build] [--work /tmp/rs-sweep] [--json-out FILE] [--gen-args "--sync none"]
       python3 tests/bench/trace_sweep.py --report FILE.jsonl...
"""
import argparse
import concurrent.futures
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
    "gpu2": ["slow_gpu:ranks={r},factor=1.02,onset={o}"],
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
    # every rank's collectives slow alike (ring): no rank is late, none should be named
    "slowlink": ["slow_link:ranks={r},factor=2,onset={o}"],
}

# name -> (more generator arguments, steps or None for --steps)
VARIANTS = {
    "default": ([], None),
    "noisy": (["--kernel-noise", "0.03", "--gpu-noise", "0.015", "--step-noise", "0.015"], None),
    "short": ([], 40),
}


def vs_peers(x, ranks):
    """The truth's slowdowns are over the median of all ranks; among 2 that is their mean, which
    holds the slow rank itself: x = a / ((a + b) / 2) gives a / b = x / (2 - x)."""
    return x / (2 - x) if ranks == 2 else x


def run_setting(a, ranks, fault, layout, markers, seed, variant="default"):
    out = os.path.join(a.work, "job-%d-%s-%s-%s-%d-%s" % (ranks, fault, layout, markers, seed,
                                                          variant))
    shutil.rmtree(out, ignore_errors=True)
    try:
        return judge(a, out, ranks, fault, layout, markers, seed, variant)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def generate(out, ranks, fault, layout, markers, seed, variant, steps, gen_args=""):
    """Writes one setting's traces and truth.json into out (ddp_tracegen.py); returns (truth, the
    trace files). steps: the job's steps unless the variant sets them."""
    vargs, vsteps = VARIANTS[variant]
    steps = vsteps or steps
    slow = ranks // 2 - 1 if ranks > 2 else 1
    onset = steps // 8  # the rule needs its 2 newest windows (30 steps each) slow
    fault_args = []
    k5 = max(1, ranks * 5 // 100)  # 5% of the ranks, spread over them
    r5 = "/".join(str(1 + i * (ranks // k5)) for i in range(k5))
    for f in FAULTS[fault]:
        fault_args += ["--fault", f.format(r=slow, r2="%d/%d" % (slow, ranks - 1), r5=r5,
                                           o=onset)]
    gen = [sys.executable, os.path.join(HERE, "ddp_tracegen.py"), "-o", out, "--ranks", str(ranks),
           "--steps", str(steps), "--seed", str(seed), "--bucket-mode", layout, "-q"] + vargs
    if markers == "no":
        gen.append("--no-step-markers")
    gen += gen_args.split()
    subprocess.run(gen + fault_args, check=True)
    truth = json.load(open(os.path.join(out, "truth.json")))
    files = sorted(os.path.join(out, f) for f in os.listdir(out) if f.startswith("ddp_rank"))
    return truth, files


def judge(a, out, ranks, fault, layout, markers, seed, variant):
    truth, files = generate(out, ranks, fault, layout, markers, seed, variant, a.steps, a.gen_args)
    t0 = time.time()
    p = subprocess.run([os.path.join(a.build, "bin", "rankscope"), "analyze", "--json",
                        "--job", "sweep"] + files, capture_output=True, text=True)
    seconds = time.time() - t0
    if p.returncode != 0:
        return {"error": p.stderr.strip()[-300:]}
    d = json.loads(p.stdout)
    verdicts = d["stragglers"].get("stragglers", [])
    expected, causes, onsets, onset_ns, kinds, measured = set(), {}, {}, {}, {}, {}
    with gzip.open(os.path.join(out, "ddp_rank0.json.gz"), "rt") as fh:
        base = int(re.search(r'"baseTimeNanoseconds":\s*(\d+)', fh.read(1 << 20)).group(1))
    for f in truth["faults"]:
        # a slow link slows every rank's collectives alike: no rank is late (truth.json's note)
        if f.get("straggler_expected") and f["expected_cause"] != "communication":
            for r in f["slow_ranks"]:
                expected.add(r)
                m = (f.get("measured_effective_slowdown") or f.get("measured_compute_slowdown")
                     or {}).get(str(r))
                if m:
                    measured[r] = round(vs_peers(m, ranks), 4)
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
    window = d["stragglers"].get("window_steps") or 30
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
        "ranks": ranks, "fault": fault, "layout": layout, "markers": markers, "seed": seed,
        "variant": variant, "window": window,
        "missed_measured": sorted(measured[r] for r in expected - set(named) if r in measured),
        "expected": len(expected), "named": len(hits),
        "verdicts": len(named),
        "false": len(set(named) - expected),
        "cause_right": sum(1 for r in hits if named[r].get("cause") == causes[r]),
        "kind_right": sum(1 for r in hits if named[r].get("kind", "straggler") == kinds[r]),
        "suspects": len(suspects), "suspects_slow": len(suspects & expected),
        "onset_err": onset_err, "since_err": since_err, "seconds": seconds,
        "confidence": [(v.get("confidence", 0), v["rank"] in expected) for v in verdicts],
        "cause_wrong": sorted("%s->%s" % (causes[r], named[r].get("cause")) for r in hits
                              if named[r].get("cause") != causes[r]),
        "enough_data": d["stragglers"].get("enough_data", True),
    }


SUMS = ("expected", "named", "false", "cause_right", "seconds", "verdicts", "kind_right",
        "suspects", "suspects_slow")


def print_table(results, seeds_asked=None):
    """One row per setting (sums over its seeds), then the calibration table; returns the rows."""
    order, groups = [], {}
    for r in results:
        key = (r["ranks"], r["fault"], r["layout"], r["markers"], r.get("variant", "default"))
        if key not in groups:
            order.append(key)
            groups[key] = []
        groups[key].append(r)
    print("| ranks | fault | buckets | markers | variant | seeds | recall | missed (measured "
          "slowdown) | precision | false verdicts | cause right | kind right | suspects slow | "
          "onset error (steps, max) | since error (windows, max) | analyze s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows, conf = [], []
    for key in sorted(order, key=lambda k: (k[0], list(FAULTS).index(k[1]) if k[1] in FAULTS
                                             else 99, k[2], k[3], k[4])):
        jobs = groups[key]
        ok = [j for j in jobs if "error" not in j]
        agg = {k: sum(j[k] for j in ok) for k in SUMS}
        agg["errors"] = len(jobs) - len(ok)
        agg["onset_err"] = [e for j in ok for e in j["onset_err"]]
        agg["since_win"] = [e / j["window"] for j in ok for e in j["since_err"]]
        agg["missed_measured"] = sorted(m for j in ok for m in j.get("missed_measured", []))
        agg["cause_wrong"] = [c for j in ok for c in j.get("cause_wrong", [])]
        agg["confidence"] = [c for j in ok for c in j["confidence"]]
        conf += [(c, okv, key) for c, okv in agg["confidence"]]
        ranks, fault, layout, markers, variant = key
        rows.append(dict(ranks=ranks, fault=fault, layout=layout, markers=markers, variant=variant,
                         seeds=len(ok), **agg))
        recall = ("%d/%d" % (agg["named"], agg["expected"])) if agg["expected"] else "-"
        missed = (" ".join("%.3f" % m for m in agg["missed_measured"][:6]) +
                  (" …" if len(agg["missed_measured"]) > 6 else "")) or "-"
        cause = ("%d/%d" % (agg["cause_right"], agg["named"])) if agg["named"] else "-"
        if agg["cause_wrong"]:
            cause += " (%s)" % ", ".join(sorted(set(agg["cause_wrong"])))
        kind = ("%d/%d" % (agg["kind_right"], agg["named"])) if agg["named"] else "-"
        prec = (("%d/%d" % (agg["verdicts"] - agg["false"], agg["verdicts"]))
                if agg["verdicts"] else "-")
        susp = "%d/%d" % (agg["suspects_slow"], agg["suspects"]) if agg["suspects"] else "-"
        onset = ("%d" % max(agg["onset_err"])) if agg["onset_err"] else "-"
        since = ("%.2f" % max(agg["since_win"])) if agg["since_win"] else "-"
        print("| %d | %s | %s | %s | %s | %d | %s | %s | %s | %d | %s | %s | %s | %s | %s | %.1f |%s"
              % (ranks, fault, layout, markers, variant, len(ok), recall, missed, prec,
                 agg["false"], cause, kind, susp, onset, since,
                 agg["seconds"] / max(1, len(ok)),
                 " %d errors" % agg["errors"] if agg["errors"] else ""), flush=True)
    print("\n| confidence | verdicts | right | fraction right |")
    print("|---|---|---|---|")
    for lo, hi in ((0.9, 1.01), (0.7, 0.9), (0.5, 0.7), (0.3, 0.5), (0.0, 0.3)):
        sel = [okv for c, okv, _ in conf if lo <= c < hi]
        print("| %.1f – %.1f | %d | %d | %s |" % (lo, min(hi, 1.0), len(sel), sum(sel),
                                                 "%.3f" % (sum(sel) / len(sel)) if sel else "-"))
    wrong = sorted((c, k) for c, okv, k in conf if not okv)
    if wrong:
        print("\nwrong verdicts (confidence, setting): " +
              "; ".join("%.2f %s" % (c, "/".join(str(x) for x in k)) for c, k in wrong))
    return rows


def print_summary(results):
    """Per rank count and fault, the default variant over both layouts and marker settings."""
    faults = [f for f in FAULTS if any(r["fault"] == f for r in results)]
    sizes = sorted({r["ranks"] for r in results})
    print("| fault | " + " | ".join("%d ranks" % n for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for f in faults:
        cells = []
        for n in sizes:
            ok = [r for r in results if r["ranks"] == n and r["fault"] == f and "error" not in r
                  and r.get("variant", "default") == "default"]
            if not ok:
                cells.append("not run")
                continue
            exp, named = sum(r["expected"] for r in ok), sum(r["named"] for r in ok)
            false = sum(r["false"] for r in ok)
            cell = ("recall %d/%d" % (named, exp)) if exp else "no straggler"
            cells.append("%s, %d false (%d jobs)" % (cell, false, len(ok)))
        print("| %s | %s |" % (f, " | ".join(cells)))
    print()


def one_job(args):
    a, ranks, fault, layout, markers, seed, variant = args
    r = run_setting(a, ranks, fault, layout, markers, seed, variant)
    r.update(ranks=ranks, fault=fault, layout=layout, markers=markers, seed=seed, variant=variant)
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ranks", default="8,32")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--faults", default=",".join(FAULTS))
    p.add_argument("--layouts", default="interleaved,after")
    p.add_argument("--markers", default="yes,no")
    p.add_argument("--variants", default="default", help=",".join(VARIANTS))
    p.add_argument("--jobs", type=int, default=1, help="settings run at once")
    p.add_argument("--jsonl", help="append one JSON line per job as it ends")
    p.add_argument("--report", nargs="+", metavar="FILE.jsonl",
                   help="print the table of earlier --jsonl files, run nothing")
    p.add_argument("--summary", action="store_true",
                   help="with --report: first a table per rank count and fault")
    p.add_argument("--build", default=os.environ.get("BUILD", os.path.join(ROOT, "build")))
    p.add_argument("--work", default="/tmp/rs-sweep")
    p.add_argument("--json-out")
    p.add_argument("--gen-args", default="",
                   help="more ddp_tracegen.py arguments, e.g. '--sync none' (a host running ahead)")
    a = p.parse_args()
    if a.report:
        results = []
        for f in a.report:
            for line in open(f):
                try:
                    results.append(json.loads(line))
                except ValueError:  # a line cut by a run stopped at its limit
                    pass
        if a.summary:
            print_summary(results)
        rows = print_table(results)
    else:
        os.makedirs(a.work, exist_ok=True)
        todo = [(a, ranks, fault, layout, markers, seed, variant)
                for ranks in [int(x) for x in a.ranks.split(",")]
                for fault in a.faults.split(",") for layout in a.layouts.split(",")
                for markers in a.markers.split(",") for variant in a.variants.split(",")
                for seed in range(a.first_seed, a.first_seed + a.seeds)]
        results = []
        with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            for r in ex.map(one_job, todo):
                results.append(r)
                if "error" in r:
                    print("  error: %s" % r["error"], file=sys.stderr)
                if a.jsonl:
                    with open(a.jsonl, "a") as fh:
                        fh.write(json.dumps(r) + "\n")
        rows = print_table(results)
    if a.json_out:
        json.dump(rows, open(a.json_out, "w"), indent=1)


if __name__ == "__main__":
    main()
