"""Summarises tests/gpu/after.sh: usage after_report.py after.jsonl [--before-s S].

Per run, the median step of three phases by wall time against the window the run was timed
around (window_ns, window_ms): before (from the first timed step to 0.3 s before the window),
inside (0.3 s after it opened to its end: the collector's flush thread opens it up to one flush
late) and after (from 0.5 s after its end). Per arm against `none`, runs paired in their order (the
i-th run of the arm with the i-th run of none, which ran next to it): the paired ratios of each
phase's medians and of the whole timed span's, their median with a distribution-free 95% interval
(order statistics, "n too small" under 6 pairs) and a bootstrap one; and within each process the
ratio after / before, whose none runs say how much a process drifts by itself."""
import argparse
import json
import os
import statistics as st
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from paired_stats import boot_ci, fmt_ci, median_ci  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("runs")
ap.add_argument("--before-s", type=float, default=3)
a = ap.parse_args()


def phases(r):
    """Median step (ms) of before / inside / after / whole for one run, None where no step."""
    res = r["result"]
    w0 = (r["window_ns"] - res["t0_ns"]) / 1e6  # the window's start, ms since t0
    w1 = w0 + r["window_ms"]
    cut = {"before": (-1e12, w0 - 300), "inside": (w0 + 300, w1), "after": (w1 + 500, 1e12),
           "whole": (-1e12, 1e12)}
    out = {}
    for name, (lo, hi) in cut.items():
        xs = [ms for ms, end in zip(res["step_ms"], res["step_end_ms"]) if lo <= end - ms and end <= hi]
        out[name] = (st.median(xs), len(xs)) if xs else (None, 0)
    return out


runs = [json.loads(line) for line in open(a.runs) if line.strip()]
runs = [r for r in runs if r.get("result")]
by_arm = {}
for r in runs:
    r["phases"] = phases(r)
    by_arm.setdefault(r["arm"], []).append(r)

print("runs (ms, median step; steps in brackets):")
for r in runs:
    p = r["phases"]
    cells = "  ".join(f"{k} {p[k][0]:.3f} ({p[k][1]})" if p[k][0] else f"{k} -" for k in
                      ("before", "inside", "after", "whole"))
    print(f"  {r['seq']:>3} {r['arm']:<6} windows {r.get('windows')}  {cells}")


def line(label, xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return f"  {label:<34} no data"
    return (f"  {label:<34} median {st.median(xs):.4f}  CI {fmt_ci(median_ci(xs))}  "
            f"bootstrap {fmt_ci(boot_ci(xs))}  range {min(xs):.4f} - {max(xs):.4f}  n={len(xs)}")


def ratio(x, y):
    return x / y if x and y else None


print("\nwithin each process, after / before (a none run: the process's own drift):")
for arm, rs in sorted(by_arm.items()):
    print(line(arm, [ratio(r["phases"]["after"][0], r["phases"]["before"][0]) for r in rs]))
    print(line(arm + " inside / before", [ratio(r["phases"]["inside"][0], r["phases"]["before"][0])
                                          for r in rs]))

base = by_arm.get("none", [])
for arm, rs in sorted(by_arm.items()):
    if arm == "none":
        continue
    pairs = list(zip(rs, base))
    print(f"\n{arm} / none, paired in order ({len(pairs)} pairs: "
          + ", ".join(f"{x['seq']}/{y['seq']}" for x, y in pairs) + "):")
    for ph in ("before", "inside", "after", "whole"):
        print(line(ph, [ratio(x["phases"][ph][0], y["phases"][ph][0]) for x, y in pairs]))
