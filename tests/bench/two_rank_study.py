#!/usr/bin/env python3
"""What separates a 3% slower GPU from two healthy GPUs among 2 ranks (issue 22)?

For seeds 1..N and both bucket layouts, tests/bench/ddp_tracegen.py writes a fault-free 2-rank job
and the same job with rank 1's GPU 3% slower from step steps/8; `rankscope analyze --json` judges
each. Per job it prints, from the traces alone (not from truth.json): each rank's compute per step
(its compute-stream kernels launched inside the step's ProfilerStep range), the slower rank's
median compute over the other's before and after the onset step, and the change; from analyze:
the slower rank's slowdown, last_frac and wait_share of the newest window, and the verdict.
Then the distributions (min, 10%, median, 90%, max) per layout and fault.

usage: python3 tests/bench/two_rank_study.py [--seeds 20] [--steps 80] [--build build]
"""
import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def compute_per_step(path):
    """{ProfilerStep number: compute-stream kernel ms launched within it} of one rank's trace."""
    ev = json.load(gzip.open(path, "rt"))["traceEvents"]
    steps = sorted((e["ts"], e["ts"] + e["dur"], int(e["name"].split("#")[1])) for e in ev
                   if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))
    launch = {e["args"]["correlation"]: e["ts"] for e in ev
              if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    out = {}
    for e in ev:
        if e.get("cat") != "kernel" or e["args"].get("stream") != 7:
            continue
        t = launch.get(e["args"].get("correlation"))
        for a, b, n in steps:
            if t is not None and a <= t < b:
                out[n] = out.get(n, 0.0) + e["dur"] / 1000.0
                break
    return out


def one(a, seed, layout, fault):
    out = os.path.join(a.work, "%s-%s-%d" % (fault, layout, seed))
    shutil.rmtree(out, ignore_errors=True)
    onset = a.steps // 8
    gen = [sys.executable, os.path.join(HERE, "ddp_tracegen.py"), "-o", out, "--ranks", "2",
           "--steps", str(a.steps), "--seed", str(seed), "--bucket-mode", layout, "-q"]
    if fault == "gpu3":
        gen += ["--fault", "slow_gpu:ranks=1,factor=1.03,onset=%d" % onset]
    subprocess.run(gen, check=True)
    truth = json.load(open(os.path.join(out, "truth.json")))
    files = [os.path.join(out, "ddp_rank%d.json.gz" % r) for r in (0, 1)]
    p = subprocess.run([os.path.join(a.build, "bin", "rankscope"), "analyze", "--json", "--job",
                        "study"] + files, capture_output=True, text=True, check=True)
    st = json.loads(p.stdout)["stragglers"]
    c = [compute_per_step(f) for f in files]
    first = truth["first_step_number"]
    common = sorted(set(c[0]) & set(c[1]))
    ratio = {n: c[1][n] / c[0][n] for n in common}
    # rank 1 is the faulty one; for fault-free jobs the slower one over the whole job
    whole = statistics.median(ratio.values())
    slow = 1 if fault == "gpu3" or whole >= 1 else 0
    if slow == 0:
        ratio = {n: 1 / v for n, v in ratio.items()}
    k = first + onset
    before = [v for n, v in ratio.items() if first + 2 <= n < k]   # past 2 warm-up steps
    after = [v for n, v in ratio.items() if n >= k]
    rk = {x["rank"]: x for x in st.get("ranks", [])}.get(slow, {})
    named = [v["rank"] for v in st.get("stragglers", [])]
    shutil.rmtree(out, ignore_errors=True)
    return {"seed": seed, "layout": layout, "fault": fault, "slow": slow,
            "gpu_speed": [x["gpu_speed_factor"] for x in truth["ranks"]],
            "before": statistics.median(before), "after": statistics.median(after),
            "change": statistics.median(after) / statistics.median(before),
            "step_sd_after": statistics.pstdev(after),
            "slowdown": rk.get("slowdown"), "last_frac": rk.get("last_frac"),
            "wait_share": rk.get("wait_share"), "named": named,
            "suspects": [x["rank"] for x in st.get("suspects", [])]}


def dist(xs):
    xs = sorted(xs)
    q = lambda f: xs[min(len(xs) - 1, int(f * len(xs)))]
    return "min %.4f  p10 %.4f  median %.4f  p90 %.4f  max %.4f" % (xs[0], q(0.1), q(0.5), q(0.9),
                                                                     xs[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--steps", type=int, default=80)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--work", default="/tmp/rs-two-rank")
    p.add_argument("--jsonl")
    a = p.parse_args()
    rows = []
    for layout in ("interleaved", "after"):
        for fault in ("none", "gpu3"):
            for seed in range(1, a.seeds + 1):
                r = one(a, seed, layout, fault)
                rows.append(r)
                print(json.dumps(r), flush=True)
                if a.jsonl:
                    with open(a.jsonl, "a") as fh:
                        fh.write(json.dumps(r) + "\n")
    for layout in ("interleaved", "after"):
        for fault in ("none", "gpu3"):
            rs = [r for r in rows if r["layout"] == layout and r["fault"] == fault]
            print("%s %s (%d jobs; the slower rank; %s)" % (
                layout, fault, len(rs), "rank 1" if fault == "gpu3" else "whole job"))
            for key in ("before", "after", "change", "step_sd_after", "slowdown", "last_frac",
                        "wait_share"):
                vals = [r[key] for r in rs if r[key] is not None]
                if vals:
                    print("  %-14s %s" % (key, dist(vals)))
            print("  named %d of %d, suspects %d" % (sum(1 for r in rs if r["named"]), len(rs),
                                                     sum(1 for r in rs if r["suspects"])))


if __name__ == "__main__":
    main()
