"""Reads tests/gpu/detach.sh's detach.jsonl from rounds of the kinds none, default (the collector
with its defaults), none2 and default2, which started together and timed the same seconds (on
GPUs of their own with GPUS=...), and prints what the default collector costs:
  B/A   default / none and default2 / none2: the mean step over the timed seconds (the job's
        speed), per round and pair
  A/A   none2 / none: the same figure where nothing differs — the method's own spread
  B/B   default2 / default
medians over the pairs with a distribution-free and a bootstrap 95% interval (paired_stats.py), and
the same for the CPU time of the launching thread per step (launch_cpu_us). Each default process's
timeline (RANKSCOPE_DEBUG) says how many windows opened and how often CUPTI detached within its
timed seconds; a pair whose timed seconds began more than 0.5 s apart is left out and counted."""
import argparse
import json
import os
import statistics as st
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from paired_stats import boot_ci, fmt_ci, median_ci  # noqa: E402

PAIRS = (("default", "none", "B/A"), ("default2", "none2", "B/A"), ("none2", "none", "A/A"),
         ("default2", "default", "B/B"))


def mean_of(result, field):
    xs = [x for x in (result.get(field) or []) if x is not None]
    return sum(xs) / len(xs) if xs else None


def timeline(run):
    """(windows opened, detaches done) within the run's timed seconds."""
    res = run["result"]
    a, b = res["t0_ns"] / 1e6, res["t1_ns"] / 1e6
    ev = [(w, t) for w, t in run.get("events", []) if a <= t <= b]
    return sum(w == "O" for w, _ in ev), sum(w == "D" for w, _ in ev)


def summary(label, xs):
    if not xs:
        print(f"  {label}: no pairs")
        return
    print(f"  {label}: median {st.median(xs):.4f} {fmt_ci(median_ci(xs))} bootstrap "
          f"{fmt_ci(boot_ci(xs))}, mean {st.mean(xs):.4f}, range {min(xs):.4f} .. {max(xs):.4f},"
          f" {len(xs)} pairs")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("jsonl", nargs="+", help="detach.jsonl of one run, or of several to pool "
                    "(rounds of the same machine kind only)")
    args = ap.parse_args()
    runs = [dict(json.loads(l), round=(i, json.loads(l)["round"]))
            for i, path in enumerate(args.jsonl) for l in open(path) if l.strip()]
    figures, skipped = {}, 0
    for rnd in sorted({r["round"] for r in runs}):
        by = {r["kind"]: r for r in runs if r["round"] == rnd and r.get("result")}
        rnd = f"{rnd[0] + 1}.{rnd[1]}" if len(args.jsonl) > 1 else rnd[1]
        for kind in ("default", "default2"):
            if kind in by:
                w, d = timeline(by[kind])
                print(f"round {rnd} {kind} (GPU {by[kind].get('gpu', '?')}): {by[kind]['result']['steps']}"
                      f" steps, {w} window(s) opened and {d} detach(es) in its timed seconds")
        for b, a, how in PAIRS:
            if a not in by or b not in by:
                continue
            ra, rb = by[a]["result"], by[b]["result"]
            if abs(ra["t0_ns"] - rb["t0_ns"]) > 5e8:
                skipped += 1
                continue
            for field in ("step_ms", "launch_cpu_us"):
                ma, mb = mean_of(ra, field), mean_of(rb, field)
                if ma and mb:
                    figures.setdefault((how, field), []).append(mb / ma)
                    if field == "step_ms":
                        print(f"round {rnd} {b}/{a} (GPUs {by[b].get('gpu')}/{by[a].get('gpu')}):"
                              f" {mb / ma:.4f} ({mb:.3f} / {ma:.3f} ms)")
    print()
    for how in ("B/A", "A/A", "B/B"):
        for field in ("step_ms", "launch_cpu_us"):
            if (how, field) in figures:
                summary(f"{how} {'step time' if field == 'step_ms' else 'launch CPU/step'}",
                        figures[(how, field)])
    if skipped:
        print(f"  {skipped} pairs left out: timed seconds began more than 0.5 s apart")


if __name__ == "__main__":
    main()
