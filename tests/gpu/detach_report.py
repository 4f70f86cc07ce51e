"""Reads tests/gpu/detach.sh's detach.jsonl and prints what CUPTI attached between windows costs
the LM, and what the detach saves. Each round has three processes that timed the same seconds:
none, detach (CUPTI detached between windows), attached (RANKSCOPE_DETACH=0). Each collector
process's steps are placed by its own timeline (RANKSCOPE_DEBUG: O/C a window's kinds on/off,
R/D a detach asked/done, A attached again, X called off):
  window    from O to C + margin
  idle      attached, no kinds: from C + margin to D (detach), to the next O (attached)
  detached  from D + margin to the next O (detach only)
A segment's figure is the mean step of the process over the steps that lie wholly in it, against
the mean step of `none` over its steps in the same seconds (ratio; the host's noise is common to
both); `none2`, a second process without the collector, is placed by the detach process's
timeline (the A/A figures: what the method reads where nothing differs); pooled per round over
the round's segments, then the median over rounds with the range and
a bootstrap 95% interval. In-process: the detach process's idle seconds against its detached
ones. The same for the CPU time of the launching thread while it launches (launch_cpu_us)."""
import argparse
import json
import random
import statistics


def steps(result):
    """(start_ms, end_ms, wall_ms, cpu_us) per timed step, CLOCK_REALTIME in ms."""
    t0 = result["t0_ns"] / 1e6
    cpu = result.get("launch_cpu_us") or [None] * len(result["step_ms"])
    return [(t0 + e - d, t0 + e, d, c) for d, e, c in zip(result["step_ms"], result["step_end_ms"],
                                                          cpu)]


def segments(events, kind, t_end, margin_ms):
    """[(name, from_ms, to_ms)] from a collector's timeline."""
    out, state, since = [], "idle", None
    for what, t in events + [["END", t_end]]:
        if what == "O" or what == "END":
            if since is not None and state in ("idle", "detached"):
                out.append((state, since, t))
            if what == "O":
                state, since = "window", t
        elif what == "C":
            if since is not None:
                out.append(("window", since, t + margin_ms))
            state, since = "idle", t + margin_ms
        elif what == "D" and state == "idle":
            if since is not None:
                out.append(("idle", since, t))
            state, since = "detached", t + margin_ms
    return out


def mean_in(st, a, b, field):
    v = [s[field] for s in st if s[0] >= a and s[1] <= b and s[field] is not None]
    return (sum(v), len(v))


def boot(vals, n=2000):
    if len(vals) < 2:
        return (float("nan"), float("nan"))
    rnd = random.Random(1)
    meds = sorted(statistics.median(rnd.choices(vals, k=len(vals))) for _ in range(n))
    return meds[int(0.025 * n)], meds[int(0.975 * n) - 1]


def line(label, vals):
    if not vals:
        print(f"  {label}: no data")
        return
    lo, hi = boot(vals)
    print(f"  {label}: median {statistics.median(vals):.4f} over {len(vals)} rounds "
          f"(range {min(vals):.4f} - {max(vals):.4f}; bootstrap 95% [{lo:.4f}, {hi:.4f}]); "
          + ", ".join(f"{v:.4f}" for v in vals))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("jsonl")
    ap.add_argument("--window-ms", type=float, default=2000)
    ap.add_argument("--period-ms", type=float, default=8000)
    ap.add_argument("--margin-ms", type=float, default=300)
    args = ap.parse_args()
    runs = [json.loads(l) for l in open(args.jsonl) if l.strip()]
    rounds = sorted({r["round"] for r in runs})
    figures = {}
    for rnd in rounds:
        by = {r["kind"]: r for r in runs if r["round"] == rnd and r.get("result")}
        if "none" not in by:
            continue
        base = steps(by["none"]["result"])
        t_end = max(s[1] for s in base)
        for kind in ("detach", "attached", "attachednl", "none2"):
            if kind not in by:
                continue
            st = steps(by[kind]["result"])
            # none2 (a second run without the collector): the A/A pair, placed by the detach
            # process's timeline — the method's own spread over the same seconds
            timeline = by.get("detach" if kind == "none2" else kind, {}).get("events", [])
            segs = segments(timeline, kind, t_end, args.margin_ms)
            for field, unit in ((2, "wall"), (3, "cpu")):
                per = {}
                for name, a, b in segs:
                    xs, xn = mean_in(st, a, b, field)
                    ns, nn = mean_in(base, a, b, field)
                    if xn and nn:
                        acc = per.setdefault(name, [0, 0, 0, 0])
                        acc[0] += xs; acc[1] += xn; acc[2] += ns; acc[3] += nn
                for name, (xs, xn, ns, nn) in per.items():
                    figures.setdefault((kind, name, unit, "vs none"), []).append(
                        (xs / xn) / (ns / nn))
                if kind == "detach" and "none2" in by:
                    # against the A/A run too: the same seconds, the other process without one
                    other = steps(by["none2"]["result"])
                    xs = xn = os_ = on = 0
                    for name, a, b in segs:
                        if name == "detached":
                            s1, n1 = mean_in(st, a, b, field)
                            s2, n2 = mean_in(other, a, b, field)
                            if n1 and n2:
                                xs, xn, os_, on = xs + s1, xn + n1, os_ + s2, on + n2
                    if xn and on:
                        figures.setdefault((kind, "detached", unit, "vs none2"), []).append(
                            (xs / xn) / (os_ / on))
                if kind in ("detach", "none2") and "idle" in per and "detached" in per:
                    i, d = per["idle"], per["detached"]
                    figures.setdefault((kind, "idle/detached", unit, "in-process"), []).append(
                        (i[0] / i[1]) / (d[0] / d[1]))
            whole = statistics.mean(s[2] for s in st) / statistics.mean(s[2] for s in base)
            figures.setdefault((kind, "whole run", "wall", "vs none"), []).append(whole)
            stats = [c for c in by[kind].get("collector", []) if "CUPTI between" in c
                     or "kernel windows" in c or "converted" in c]
            print(f"round {rnd} {kind}: " + " | ".join(s.split(": ", 1)[-1] for s in stats))
    print(f"\nwindows of {args.window_ms:.0f} ms every {args.period_ms:.0f} ms; margin "
          f"{args.margin_ms:.0f} ms after a window's kinds go off and after a detach")
    for key in sorted(figures):
        kind, name, unit, how = key
        line(f"{kind:8s} {name:14s} {unit:4s} {how}", figures[key])


if __name__ == "__main__":
    main()
