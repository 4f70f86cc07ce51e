#!/usr/bin/env python3
"""What the straggler verdicts on fault-free ranks are, physically (issue 22, the `noisy` variant).

ddp_tracegen.py gives every GPU a constant speed factor for the whole job (lognormal, sigma
--gpu-noise: 0.5% by default, 1.5% in trace_sweep.py's `noisy` variant) apart from any fault it
injects. For each job this writes, per verdict and suspect of `rankscope analyze`, the rank's
factor over the median factor of the other ranks (`born`: how much slower the generator made that
GPU from step 0, before interference), the rule's figures (slowdown, separation, last_frac,
wait_share, confidence) and whether the truth marks the rank slow; and per job the largest `born`
of any rank without an injected fault. --report prints, per ranks x variant x fault: jobs, named
slow ranks / expected, verdicts on ranks without a fault with their `born` and confidence, and the
share of fault-free ranks born ≥ 1.8% / ≥ 3% slower than their peers.

usage: python3 tests/bench/noise_verdicts.py --ranks 2,8 --faults none,gpu3 --variants noisy
           --first-seed 11 --seeds 20 [--layouts interleaved,after] [--jobs N] --jsonl FILE
       python3 tests/bench/noise_verdicts.py --report FILE.jsonl...
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import trace_sweep  # noqa: E402  (FAULTS, VARIANTS, generate)


def one(args):
    a, ranks, fault, layout, variant, seed = args
    out = os.path.join(a.work, "nv-%d-%s-%s-%s-%d" % (ranks, fault, layout, variant, seed))
    shutil.rmtree(out, ignore_errors=True)
    try:
        truth, files = trace_sweep.generate(out, ranks, fault, layout, "yes", seed, variant,
                                            a.steps)
        p = subprocess.run([os.path.join(a.build, "bin", "rankscope"), "analyze", "--json",
                            "--job", "nv"] + files, capture_output=True, text=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    row = {"ranks": ranks, "fault": fault, "layout": layout, "variant": variant, "seed": seed}
    if p.returncode != 0:
        row["error"] = p.stderr.strip()[-300:]
        return row
    d = json.loads(p.stdout)["stragglers"]
    speed = [r["gpu_speed_factor"] for r in truth["ranks"]]
    born = [s / statistics.median(speed[:i] + speed[i + 1:]) for i, s in enumerate(speed)]
    # `built`: the GPU's speed as the generator made it once every fault had begun — its own
    # constant factor times the factor of a slow_gpu or ramp fault on it — over the median of the
    # other GPUs' (the physics truth: a rank whose GPU was built >= threshold slower than the
    # median GPU slows the job, whatever the label of the fault)
    made = list(speed)
    for f in truth["faults"]:
        if f["type"] in ("slow_gpu", "ramp"):
            for r in f["slow_ranks"]:
                made[r] *= f["params"]["factor"]
    built = [s / statistics.median(made[:i] + made[i + 1:]) for i, s in enumerate(made)]
    slow = {r for f in truth["faults"]
            if f.get("straggler_expected") and f["expected_cause"] != "communication"
            for r in f["slow_ranks"]}

    def fig(v):
        return {"rank": v["rank"], "born": round(born[v["rank"]], 4),
                "built": round(built[v["rank"]], 4), "slow": v["rank"] in slow,
                **{k: v.get(k) for k in ("slowdown", "separation", "last_frac", "wait_share",
                                         "confidence", "kernel_ratio")}}
    row.update(expected=len(slow), verdicts=[fig(v) for v in d.get("stragglers", [])],
               suspects=[fig(v) for v in d.get("suspects", [])],
               born_clean=[round(b, 4) for i, b in enumerate(born) if i not in slow],
               built=[round(b, 4) for b in built])
    return row


def report(rows):
    groups = {}
    for r in rows:
        if "error" not in r:
            groups.setdefault((r["ranks"], r["variant"], r["fault"]), []).append(r)
    print("| ranks | variant | fault | jobs | slow named | verdicts on ranks without a fault "
          "(born slower by, confidence) | fault-free ranks born ≥ 1.8% / ≥ 3% slower |")
    print("|---|---|---|---|---|---|---|")
    for k in sorted(groups):
        g = groups[k]
        named = sum(1 for r in g for v in r["verdicts"] if v["slow"])
        false = sorted((v["born"], v["confidence"]) for r in g for v in r["verdicts"]
                       if not v["slow"])
        clean = [b for r in g for b in r["born_clean"]]
        print("| %d | %s | %s | %d | %s | %d%s | %d / %d of %d |" % (
            k[0], k[1], k[2], len(g),
            "%d/%d" % (named, sum(r["expected"] for r in g)) if k[2] != "none" else "-",
            len(false), (": " + ", ".join("%+.1f%% %.2f" % (100 * (b - 1), c) for b, c in false))
            if false else "", sum(b >= 1.018 for b in clean), sum(b >= 1.03 for b in clean),
            len(clean)))


def report_built(rows, thr=0.03):
    """Scored on the physics truth (`built`, above): true when built >= 1 + thr (a verdict is
    right, no verdict a miss), borderline from 1 + thr / 2 (either answer right, counted apart),
    below that a verdict is false. Per ranks x variant x fault x layout."""
    groups = {}
    for r in rows:
        if "error" not in r and "built" in r:
            groups.setdefault((r["ranks"], r["variant"], r["fault"], r["layout"]), []).append(r)
    print("| ranks | variant | fault | buckets | jobs | planted named | built ≥ thr: named "
          "| borderline: named | false (built, confidence) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in sorted(groups):
        g = groups[k]
        true = named_true = border = named_border = 0
        false = []
        for r in g:
            named = {v["rank"]: v for v in r["verdicts"]}
            for i, b in enumerate(r["built"]):
                if b >= 1 + thr:
                    true += 1
                    named_true += i in named
                elif b >= 1 + thr / 2:
                    border += 1
                    named_border += i in named
                elif i in named:
                    false.append((b, named[i]["confidence"]))
        planted = sum(1 for r in g for v in r["verdicts"] if v["slow"])
        print("| %d | %s | %s | %s | %d | %s | %d/%d | %d/%d | %d%s |" % (
            k[0], k[1], k[2], k[3], len(g),
            "%d/%d" % (planted, sum(r["expected"] for r in g)) if k[2] != "none" else "-",
            named_true, true, named_border, border, len(false),
            (": " + ", ".join("%+.1f%% %.2f" % (100 * (b - 1), c) for b, c in sorted(false)))
            if false else ""))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ranks", default="2,8")
    p.add_argument("--faults", default="none,gpu3")
    p.add_argument("--layouts", default="interleaved,after")
    p.add_argument("--variants", default="noisy")
    p.add_argument("--first-seed", type=int, default=11)
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--steps", type=int, default=80)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--jsonl")
    p.add_argument("--report", nargs="+", metavar="FILE.jsonl")
    p.add_argument("--build", default=os.environ.get("BUILD", os.path.join(trace_sweep.ROOT,
                                                                           "build")))
    p.add_argument("--work", default="/tmp/rs-noise-verdicts")
    a = p.parse_args()
    if a.report:
        rows = []
        for f in a.report:
            for line in open(f):
                try:
                    rows.append(json.loads(line))
                except ValueError:  # a line cut by a run stopped at its limit
                    pass
        report(rows)
        print()
        report_built(rows)
        return
    os.makedirs(a.work, exist_ok=True)
    todo = [(a, int(n), f, l, v, s) for n in a.ranks.split(",") for f in a.faults.split(",")
            for l in a.layouts.split(",") for v in a.variants.split(",")
            for s in range(a.first_seed, a.first_seed + a.seeds)]
    rows = []
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        for r in ex.map(one, todo):
            rows.append(r)
            if a.jsonl:
                with open(a.jsonl, "a") as fh:
                    fh.write(json.dumps(r) + "\n")
    report(rows)
    print()
    report_built(rows)


if __name__ == "__main__":
    main()
