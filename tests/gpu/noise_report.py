"""Summarises tests/gpu/noise.sh: usage noise_report.py noise.jsonl [sampler.jsonl]
[--window-ms W --period-ms P].

Per workload and mode: the per-run median step, and against the same round's `none` the paired
ratio: its median with a distribution-free 95% interval (order statistics of the paired ratios,
binomial, at least 95%) and a bootstrap one (10,000 resamples of the pairs, fixed seed). The A/A
pair (none2 / none) says what any ratio can mean. Where the spread comes from: the run medians in
time order (von Neumann ratio: well under 2 means slow drift, about 2 independent runs), within a
run (first half of the timed steps against the second), and against the GPU's SM clock and the
CPUs' steal time read during each run. For the `inproc` run (kernel windows of W ms every P ms,
aligned on CLOCK_REALTIME): each window's steps against the steps just before it in the same
process. Concurrent pairs (`pair`, sides a: no collector, b: the mode): both runs' steps in
blocks of --block-ms of wall time; per block the ratio of b's median step to a's, blocks classed
by b's kernel-window schedule (--par-window-ms every --par-period-ms; 300 ms margins for the
flush thread) as inside a window or between windows (for the A/A pair as if it had the
schedule); per pair the median over its blocks of each class; `mean`: b's mean step over a's
mean step, of the steps each began in the seconds both timed (the cost of the whole span, slow
steps in windows at their true share: the figure for a duty-cycled schedule); `before` and
`after`: the blocks before the first window that starts in the timed seconds and those from 300
ms after its end (a window's cost that stays after it closes); across pairs median and
intervals."""
import argparse
import bisect
import json
import os
import statistics as st
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from paired_stats import boot_ci, fmt_ci, median_ci  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("runs")
ap.add_argument("sampler", nargs="?")
ap.add_argument("--window-ms", type=float, default=1000)
ap.add_argument("--period-ms", type=float, default=3000)
ap.add_argument("--par-window-ms", type=float, default=2000)
ap.add_argument("--par-period-ms", type=float, default=6000)
ap.add_argument("--block-ms", type=float, default=500)
ap.add_argument("--persist-window-ms", type=float, default=2000)
ap.add_argument("--persist-period-ms", type=float, default=30000)
a = ap.parse_args()

runs = [json.loads(line) for line in open(a.runs) if line.strip()]
samples = []
if a.sampler:
    for line in open(a.sampler):
        try:
            samples.append(json.loads(line))
        except ValueError:
            pass  # a line cut by the sampler's end
sample_t = [s["t_ns"] for s in samples]


def window_of(t0, t1):
    """The sampler's rows between two CLOCK_REALTIME instants."""
    return samples[bisect.bisect_left(sample_t, t0):bisect.bisect_right(sample_t, t1)]


def run_stats(r):
    res = r["result"]
    xs = res["step_ms"]
    h = len(xs) // 2
    out = {"median": st.median(xs), "p10": sorted(xs)[len(xs) // 10],
           "half2_over_half1": st.median(xs[h:]) / st.median(xs[:h]),
           "within_iqr_pct": 100 * (sorted(xs)[3 * len(xs) // 4] - sorted(xs)[len(xs) // 4]) / st.median(xs)}
    rows = window_of(res["t0_ns"], res["t1_ns"])
    sm = [x["sm_mhz"] for x in rows if "sm_mhz" in x]
    out["sm_mhz"] = st.mean(sm) if sm else None
    if len(rows) >= 2 and rows[0].get("cpu"):
        dt = sum(rows[-1]["cpu"][c]["steal"] - rows[0]["cpu"][c]["steal"] for c in rows[0]["cpu"])
        out["steal_jiffies"] = dt
    return out


def pearson(xs, ys):
    if len(xs) < 3 or st.pstdev(xs) == 0 or st.pstdev(ys) == 0:
        return None
    mx, my = st.mean(xs), st.mean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (len(xs) * st.pstdev(xs) * st.pstdev(ys))


for wl in sorted({r["workload"] for r in runs}):
    rs = [r for r in runs if r["workload"] == wl and r["result"] and r["mode"] != "inproc"
          and not r.get("pair") and not r["mode"].startswith("persist-")]
    if not rs:
        continue
    for r in rs:
        r["s"] = run_stats(r)
    modes = []
    for r in rs:
        if r["mode"] not in modes:
            modes.append(r["mode"])
    print(f"== {wl}: {len(rs)} runs")
    by = {}
    for r in rs:
        by.setdefault(r["round"], {})[r["mode"]] = r
    print("  mode     runs  median step ms (range)              paired ratio to none: median, "
          "95% order-stat CI, bootstrap CI, range")
    for m in modes:
        meds = [r["s"]["median"] for r in rs if r["mode"] == m]
        line = f"  {m:8s} {len(meds):4d}  {st.median(meds):8.3f} ({min(meds):.3f} - {max(meds):.3f})"
        ratios = [x[m]["s"]["median"] / x["none"]["s"]["median"]
                  for x in by.values() if m in x and "none" in x]
        if m != "none" and ratios:
            line += (f"   {st.median(ratios):.4f} {fmt_ci(median_ci(ratios))} "
                     f"{fmt_ci(boot_ci(ratios))} ({min(ratios):.4f} - {max(ratios):.4f}, n={len(ratios)})")
        print(line)
    if "default" in modes:
        for opened in (False, True):
            ratios = [x["default"]["s"]["median"] / x["none"]["s"]["median"] for x in by.values()
                      if "default" in x and "none" in x and bool(x["default"]["windows"]) == opened]
            if ratios:
                print(f"  default runs {'with' if opened else 'without'} a kernel window: "
                      f"n={len(ratios)}, paired ratio median {st.median(ratios):.4f} "
                      f"{fmt_ci(median_ci(ratios))}")
    # where the spread comes from
    nones = sorted((r for r in rs if r["mode"] in ("none", "none2")), key=lambda r: r["seq"])
    meds = [r["s"]["median"] for r in nones]
    if len(meds) >= 3:
        d2 = sum((b - c) ** 2 for b, c in zip(meds[1:], meds)) / (len(meds) - 1)
        vn = d2 / st.pvariance(meds) if st.pvariance(meds) else float("nan")
        print(f"  no-collector runs in time order (ms): {' '.join(f'{x:.2f}' for x in meds)}")
        print(f"  between runs: CV {100 * st.pstdev(meds) / st.mean(meds):.2f}%, von Neumann ratio "
              f"{vn:.2f} (2: independent; << 2: drift)")
        print(f"  within runs: second half / first half median "
              f"{st.median(r['s']['half2_over_half1'] for r in nones):.4f} (range "
              f"{min(r['s']['half2_over_half1'] for r in nones):.4f} - "
              f"{max(r['s']['half2_over_half1'] for r in nones):.4f}); steps' IQR "
              f"{st.median(r['s']['within_iqr_pct'] for r in nones):.2f}% of the median")
    norm = {m: st.median(r["s"]["median"] for r in rs if r["mode"] == m) for m in modes}
    pts = [(r["s"]["median"] / norm[r["mode"]], r["s"]["sm_mhz"], r["s"].get("steal_jiffies"))
           for r in rs if r["s"]["sm_mhz"] is not None]
    if pts:
        c = pearson([p[0] for p in pts], [p[1] for p in pts])
        print(f"  SM clock during runs: {min(p[1] for p in pts):.0f} - {max(p[1] for p in pts):.0f} "
              f"MHz (mean per run); correlation with the run's step (over its mode's median): "
              f"{c if c is None else round(c, 3)}")
        st_ = [p for p in pts if p[2] is not None]
        if st_:
            c = pearson([p[0] for p in st_], [p[2] for p in st_])
            print(f"  steal on the workload CPUs per run: {min(p[2] for p in st_)} - "
                  f"{max(p[2] for p in st_)} jiffies; correlation with the step: "
                  f"{c if c is None else round(c, 3)}")

for r in runs:
    if r["mode"] != "inproc" or not r["result"]:
        continue
    res = r["result"]
    W, P = a.window_ms * 1e6, a.period_ms * 1e6
    t, steps = res["t0_ns"], []
    for ms in res["step_ms"]:  # the timed steps run back to back from t0_ns
        steps.append((t, t + ms * 1e6, ms))
        t += ms * 1e6
    margin = 100e6  # the flush thread opens and closes windows up to a flush period late

    def where(s0, s1):
        k0, k1 = int(s0 // P), int(s1 // P)
        if k0 != k1:
            return None, None
        off0, off1 = s0 - k0 * P, s1 - k0 * P
        if off0 >= margin and off1 <= W:
            return "in", k0
        if off0 >= W + margin and off1 <= P:
            return "out", k0  # between window k0 and k0 + 1
        return None, None

    ins, outs = {}, {}
    for s0, s1, ms in steps:
        w, k = where(s0, s1)
        if w == "in":
            ins.setdefault(k, []).append(ms)
        elif w == "out":
            outs.setdefault(k, []).append(ms)
    pairs = [st.median(ins[k]) / st.median(outs[k - 1]) for k in ins if k - 1 in outs]
    print(f"== in one process (lm.py, windows of {a.window_ms:.0f} ms every {a.period_ms:.0f} ms, "
          f"{r['windows']} opened): {sum(map(len, ins.values()))} steps inside windows, "
          f"{sum(map(len, outs.values()))} between")
    if ins and outs:
        print(f"  median step inside {st.median(x for v in ins.values() for x in v):.3f} ms, "
              f"between {st.median(x for v in outs.values() for x in v):.3f} ms")
    if pairs:
        print(f"  each window against the stretch just before it: median {st.median(pairs):.4f} "
              f"{fmt_ci(median_ci(pairs))} (range {min(pairs):.4f} - {max(pairs):.4f}, "
              f"{len(pairs)} windows)")


def timeline(res):
    t, out = res["t0_ns"], []
    for ms in res["step_ms"]:
        out.append((t, ms))
        t += ms * 1e6
    return out


pairs = {}
for r in runs:
    if r.get("pair") and r["result"]:
        pairs.setdefault((r["round"], r["pair"]), {})[r["side"]] = r
kinds = {}
for (_, _), pr in sorted(pairs.items()):
    if "a" not in pr or "b" not in pr:
        continue
    kind = pr["b"]["mode"]
    a_steps, b_steps = timeline(pr["a"]["result"]), timeline(pr["b"]["result"])
    lo = max(a_steps[0][0], b_steps[0][0])
    hi = min(a_steps[-1][0], b_steps[-1][0])
    blk, W, P, margin = a.block_ms * 1e6, a.par_window_ms * 1e6, a.par_period_ms * 1e6, 300e6
    cls = {"in": [], "between": [], "all": [], "before": [], "after": []}
    first_w = -(-lo // P) * P  # the first window to start in the timed seconds
    ma = [ms for ts, ms in a_steps if lo <= ts < hi]
    mb = [ms for ts, ms in b_steps if lo <= ts < hi]
    t = lo
    while t + blk <= hi:
        xa = [ms for ts, ms in a_steps if t <= ts < t + blk]
        xb = [ms for ts, ms in b_steps if t <= ts < t + blk]
        if xa and xb:
            ratio = st.median(xb) / st.median(xa)
            k0, k1 = int(t // P), int((t + blk) // P)
            off0, off1 = t - k0 * P, t + blk - k0 * P
            if k0 == k1 and off0 >= margin and off1 <= W:
                cls["in"].append(ratio)
            elif k0 == k1 and off0 >= W + margin:
                cls["between"].append(ratio)
            if t + blk <= first_w:
                cls["before"].append(ratio)
            elif t >= first_w + W + margin:
                cls["after"].append(ratio)
            cls["all"].append(ratio)
        t += blk
    d = kinds.setdefault(kind, {"in": [], "between": [], "all": [], "whole": [], "mean": [],
                                "before": [], "after": [], "after_minus_before": [],
                                "overlap_s": []})
    if cls["before"] and cls["after"]:
        d["after_minus_before"].append(st.median(cls["after"]) - st.median(cls["before"]))
    if ma and mb:
        d["mean"].append(st.mean(mb) / st.mean(ma))
    for c in cls:
        if cls[c]:
            d[c].append(st.median(cls[c]))
    d["whole"].append(st.median(x for _, x in b_steps) / st.median(x for _, x in a_steps))
    d["overlap_s"].append((hi - lo) / 1e9)
for kind, d in kinds.items():
    print(f"== concurrent pairs, lm.py, {kind} against none: {len(d['whole'])} pairs, timed "
          f"steps overlapping {min(d['overlap_s']):.1f} - {max(d['overlap_s']):.1f} s")
    for c in ("mean", "whole", "all", "between", "in", "before", "after", "after_minus_before"):
        xs = d[c]
        if xs:
            print(f"  {c:18s} median {st.median(xs):.4f} {fmt_ci(median_ci(xs))} boot "
                  f"{fmt_ci(boot_ci(xs))} (range {min(xs):.4f} - {max(xs):.4f}, n={len(xs)})")


def block_medians(steps, lo, hi, blk=500e6):
    out, t = [], lo
    while t + blk <= hi:
        xs = [ms for ts, ms in steps if t <= ts < t + blk]
        if xs:
            out.append(st.median(xs))
        t += blk
    return out


for r in runs:
    if not r["mode"].startswith("persist-") or not r["result"]:
        continue
    steps = timeline(r["result"])
    P, W, m = a.persist_period_ms * 1e6, a.persist_window_ms * 1e6, 300e6
    b = (steps[-1][0] // P) * P  # the window the timed steps ran through
    seg = {"before": [x for ts, x in steps if ts < b - m],
           "in": [x for ts, x in steps if b + m <= ts < b + W],
           "after": [x for ts, x in steps if ts >= b + W + m]}
    print(f"== one process, {r['mode']} (windows of {a.persist_window_ms:.0f} ms every "
          f"{a.persist_period_ms:.0f} ms; {r['windows']} opened): steps before its first window, "
          f"inside it, after it")
    if not all(seg.values()):
        print("  a segment is empty:", {k: len(v) for k, v in seg.items()})
        continue
    base = st.median(seg["before"])
    for k in ("before", "in", "after"):
        lo, hi = {"before": (steps[0][0], b - m), "in": (b + m, b + W),
                  "after": (b + W + m, steps[-1][0])}[k]
        bm = block_medians(steps, lo, hi)
        print(f"  {k:6s} {len(seg[k]):4d} steps, median {st.median(seg[k]):7.3f} ms "
              f"({st.median(seg[k]) / base:.4f} of before); 500-ms blocks' medians "
              f"{min(bm) if bm else 0:.2f} - {max(bm) if bm else 0:.2f} ms")
