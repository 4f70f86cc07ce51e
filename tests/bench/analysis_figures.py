#!/usr/bin/env python3
"""Reproduces the measured figures that docs/analysis.md states (issue 22), each from a trace:

  two-rank-mean   a 5% straggler among 2 ranks against the median of all ranks (their mean) and
                  against its peer (ddp_tracegen, 2 ranks, seeds 1-3)
  near-threshold  a 3% slower GPU with interleaved buckets: the slowdown the trace shows
                  (truth.json) and the analysis measures, and its share of last arrivals (8 ranks)
  clean-128       the spread of fault-free ranks' slowdowns at 128 ranks: range and robust sigma
  h200-exposed    exposed NCCL time and compute of the real 2 x H200 traces (extra work on rank 0
                  and the baseline job)
  clean-idle      the GPU idle per step of the advisor catalogue's clean job (H100 trace)
  kernel-speed    a 3% slower GPU with interleaved buckets (8 ranks, seed 16): its kernels by name
                  against its peers', its GPU's built speed, and the slowdown of its work

usage: python3 tests/bench/analysis_figures.py [--build build] [--work /tmp/rs-figures] [NAME...]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def analyze(a, files):
    p = subprocess.run([os.path.join(a.build, "bin", "rankscope"), "analyze", "--json", "--job",
                        "fig"] + files, capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def generate(a, ranks, steps, seed, layout, *extra):
    out = os.path.join(a.work, "job")
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([sys.executable, os.path.join(HERE, "ddp_tracegen.py"), "-o", out, "--ranks",
                    str(ranks), "--steps", str(steps), "--seed", str(seed), "--bucket-mode",
                    layout, "-q"] + list(extra), check=True)
    files = sorted(os.path.join(out, f) for f in os.listdir(out) if f.startswith("ddp_rank"))
    return json.load(open(os.path.join(out, "truth.json"))), analyze(a, files)


def two_rank_mean(a):
    for seed in (1, 2, 3):
        for layout in ("interleaved", "after"):
            truth, d = generate(a, 2, 80, seed, layout,
                                "--fault", "slow_gpu:ranks=1,factor=1.05,onset=10")
            s = {r["rank"]: r["slowdown"] for r in d["stragglers"]["ranks"]}[1]
            print("two-rank-mean seed %d %-11s: rank 1 vs its peer %.4f, vs the mean of both "
                  "%.4f (2s / (1 + s))" % (seed, layout, s, 2 * s / (1 + s)))


def near_threshold(a):
    for seed in (1, 2, 3):
        truth, d = generate(a, 8, 80, seed, "interleaved",
                            "--fault", "slow_gpu:ranks=3,factor=1.03,onset=10")
        f = truth["faults"][0]
        r = {x["rank"]: x for x in d["stragglers"]["ranks"]}[3]
        print("near-threshold seed %d: truth measured_compute_slowdown %.4f (intrinsic %.4f); "
              "analysis slowdown %.4f, last_frac %.3f" % (
                  seed, f["measured_compute_slowdown"]["3"], f["intrinsic_compute_slowdown"]["3"],
                  r["slowdown"], r["last_frac"]))


def clean_128(a):
    for layout, extra in (("after", ["--no-step-markers"]), ("interleaved", [])):
        truth, d = generate(a, 128, 64, 1, layout, *extra)
        s = [r["slowdown"] for r in d["stragglers"]["ranks"]]
        m = statistics.median(s)
        sigma = 1.4826 * statistics.median(abs(x - m) for x in s)
        print("clean-128 %-11s %s: slowdown − 1 from %+.2f%% to %+.2f%%, robust sigma %.2f%%, "
              "verdicts %d, suspects %d" % (
                  layout, "no markers" if extra else "markers", 100 * (min(s) - 1),
                  100 * (max(s) - 1), 100 * sigma, len(d["stragglers"]["stragglers"]),
                  len(d["stragglers"].get("suspects", []))))


def h200_exposed(a):
    fx = os.path.join(ROOT, "tests", "fixtures", "kineto-h200x2")
    for job in ("rank0slow", "baseline"):
        d = analyze(a, [os.path.join(fx, "fixture_%s_rank%d.json.gz" % (job, r)) for r in (0, 1)])
        med = {r["rank"]: r["median"] for r in d["steps"]["ranks"]}
        print("h200-exposed %-9s: exposed NCCL ms rank 0 %.2f, rank 1 %.2f; compute ms rank 0 "
              "%.2f, rank 1 %.2f (difference %.2f); rank 1's exposed less the difference %.2f" % (
                  job, med[0]["exposed_comm_ms"], med[1]["exposed_comm_ms"],
                  med[0]["compute_ms"], med[1]["compute_ms"],
                  med[0]["compute_ms"] - med[1]["compute_ms"],
                  med[1]["exposed_comm_ms"] - (med[0]["compute_ms"] - med[1]["compute_ms"])))


def clean_idle(a):
    d = analyze(a, [os.path.join(ROOT, "tests", "fixtures", "advise-h100", "advise_clean.json.gz")])
    st = d["steps"]["ranks"][0]["steps"]
    print("clean-idle: GPU idle per step median %.1f%% of the step (%d steps; idle %.3f ms of "
          "%.3f ms median); advice findings %d" % (
              100 * statistics.median(s["idle_ms"] / s["step_ms"] for s in st), len(st),
              statistics.median(s["idle_ms"] for s in st),
              statistics.median(s["step_ms"] for s in st), len(d["advice"]["findings"])))


def kernel_speed(a):
    """Rank 3's kernels by name against its peers' (median duration per rank, then the peers'
    median) from the traces themselves, from the fault's onset on; its GPU's built speed over the
    median of the others' (truth.json); and the analysis's slowdown of its work."""
    import gzip
    truth, d = generate(a, 8, 80, 16, "interleaved",
                        "--fault", "slow_gpu:ranks=3,factor=1.03,onset=10")
    out = os.path.join(a.work, "job")
    first = truth["faults"][0]["onset_profiler_step"]
    per = []
    for r in range(8):
        ev = json.load(gzip.open(os.path.join(out, "ddp_rank%d.json.gz" % r)))["traceEvents"]
        t0 = min(e["ts"] for e in ev if e.get("cat") == "user_annotation"
                 and e["name"] == "ProfilerStep#%d" % first)
        names = {}
        for e in ev:
            if e.get("cat") == "kernel" and "nccl" not in e["name"] and e["ts"] >= t0:
                names.setdefault(e["name"], []).append(e["dur"])
        per.append({n: statistics.median(v) for n, v in names.items()})
    ratios = []
    for n in sorted(per[3], key=lambda n: -per[3][n]):
        ratio = per[3][n] / statistics.median(p[n] for i, p in enumerate(per) if i != 3)
        ratios.append(ratio)
        print("kernel-speed seed 16 rank 3 %-60s %.4f" % (n[:60], ratio))
    made = [x["gpu_speed_factor"] for x in truth["ranks"]]
    made[3] *= 1.03
    built = made[3] / statistics.median(made[:3] + made[4:])
    s = {x["rank"]: x["slowdown"] for x in d["stragglers"]["ranks"]}[3]
    f = truth["faults"][0]
    print("kernel-speed seed 16: median over %d names %.4f, built %.4f; analysis slowdown %.4f; "
          "truth measured_compute_slowdown %.4f (intrinsic %.4f)" % (
              len(ratios), statistics.median(ratios), built, s,
              f["measured_compute_slowdown"]["3"], f["intrinsic_compute_slowdown"]["3"]))


FIGURES = {"kernel-speed": kernel_speed, "two-rank-mean": two_rank_mean, "near-threshold": near_threshold,
           "clean-128": clean_128, "h200-exposed": h200_exposed, "clean-idle": clean_idle}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.environ.get("BUILD", os.path.join(ROOT, "build")))
    p.add_argument("--work", default="/tmp/rs-figures")
    p.add_argument("names", nargs="*", default=list(FIGURES))
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    try:
        for n in a.names:
            FIGURES[n](a)
    finally:
        shutil.rmtree(a.work, ignore_errors=True)


if __name__ == "__main__":
    main()
