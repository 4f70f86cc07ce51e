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
# the collector as configured, then each LAUNCH_VARIANTS setting ("collector A=1")
for mode in dict.fromkeys(r["mode"] for r in rows if r["kind"] == "launch" and r["mode"] != "none"):
    report("launch", "none", mode, "per_launch_us", f"launch-bound loop, per launch us, {mode} / none")
    a, b = by("launch", "none"), by("launch", mode)
    extra = [b[i]["per_launch_us"] - a[i]["per_launch_us"] for i in sorted(a) if i in b]
    if extra:
        print(f"{mode}: cost per launch median {statistics.median(extra):.3f} us "
              f"(min {min(extra):.3f}, max {max(extra):.3f}, {len(extra)} rounds)")
try:
    s = json.load(open(sys.argv[2]))
    k = sum(r["kernels"] for r in s["ranks"])
    d = sum(r["dropped"] for r in s["ranks"])
    print(f"launch-bound runs: {k} kernels stored, {d} dropped (collector + CUPTI)")
except Exception as e:  # the store may hold nothing if the collector failed
    print(f"launch-bound runs: store not readable ({e})")
