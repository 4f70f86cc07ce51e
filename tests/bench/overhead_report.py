"""Summarises tests/bench/collector_overhead.sh: per-round ratios, median and spread."""
import json
import statistics
import sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]


def by(kind, mode):
    return {r["round"]: r["result"] for r in rows if r["kind"] == kind and r["mode"] == mode
            and r["result"]}


def report(kind, base, other, field, label):
    a, b = by(kind, base), by(kind, other)
    ratios = [b[i][field] / a[i][field] for i in sorted(a) if i in b]
    if not ratios:
        print(f"{label}: no data")
        return
    print(f"{label}: median ratio {statistics.median(ratios):.4f} "
          f"(min {min(ratios):.4f}, max {max(ratios):.4f}, {len(ratios)} pairs); "
          f"{base} median {statistics.median(x[field] for x in a.values()):.3f}, "
          f"{other} median {statistics.median(x[field] for x in b.values()):.3f}")


report("ddp", "none", "collector", "step_ms_median", "DDP step time, collector / none")
report("ddp", "none", "pcsampling", "step_ms_median",
       "DDP step time, collector + PC sampling / none")
report("ddp", "none", "pcsampling", "step_ms_mean",
       "DDP mean step time, collector + PC sampling / none")
report("ddp", "none", "collector", "step_ms_mean", "DDP mean step time, collector / none")
report("ddp", "none", "profiler", "step_ms_median", "DDP step time, torch.profiler / none")
# each DDP_VARIANTS setting ("collector A=1"): against none, and against the collector as
# configured in the same round
for mode in dict.fromkeys(r["mode"] for r in rows if r["kind"] == "ddp"):
    if mode.startswith("collector "):
        report("ddp", "none", mode, "step_ms_median", f"DDP step time, {mode} / none")
        report("ddp", "collector", mode, "step_ms_median", f"DDP step time, {mode} / collector")
# the collector as configured, then each LAUNCH_VARIANTS setting ("collector A=1"); per launch
# over the whole run, and the median chunk's when the runs were chunked (LAUNCH_CHUNKS > 1)
def launch_costs(mode, field, what):
    a, b, c = by("launch", "none"), by("launch", mode), by("launch", "collector")
    extra = [b[i][field] - a[i][field] for i in sorted(a) if i in b]
    if extra:
        print(f"{mode}: cost per launch ({what}) median {statistics.median(extra):.3f} us "
              f"(min {min(extra):.3f}, max {max(extra):.3f}, {len(extra)} rounds)")
    diff = [b[i][field] - c[i][field] for i in sorted(c) if i in b]
    if diff and mode != "collector":
        print(f"{mode}: minus the collector as configured ({what}), same round: median "
              f"{statistics.median(diff):+.3f} us (min {min(diff):+.3f}, max {max(diff):+.3f})")


launch_rows = [r for r in rows if r["kind"] == "launch" and r["result"]]
chunked = any(r["result"].get("chunks", 1) > 1 for r in launch_rows)
for mode in dict.fromkeys(r["mode"] for r in launch_rows if r["mode"] != "none"):
    report("launch", "none", mode, "per_launch_us", f"launch-bound loop, per launch us, {mode} / none")
    launch_costs(mode, "per_launch_us", "whole run")
    if chunked:
        report("launch", "none", mode, "chunk_median_us",
               f"launch-bound loop, median chunk's us per launch, {mode} / none")
        launch_costs(mode, "chunk_median_us", "median chunk")
try:
    s = json.load(open(sys.argv[2]))
    k = sum(r["kernels"] for r in s["ranks"])
    d = sum(r["dropped"] for r in s["ranks"])
    print(f"launch-bound runs: {k} kernels stored, {d} dropped (collector + CUPTI)")
except Exception as e:  # the store may hold nothing if the collector failed
    print(f"launch-bound runs: store not readable ({e})")
