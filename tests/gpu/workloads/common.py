"""Shared by the single-GPU workloads (lm.py, gpubound.py): options every workload takes, the
timed loop and the one JSON line a runner parses. Timing is the host's wall clock per step, the
host waiting for the GPU at the end of each step (as a loop that reads its loss does), so a
collector's cost on the launching thread shows whether the job is launch- or GPU-bound."""
import argparse
import json
import os
import statistics
import time

import torch


def parser(doc):
    """The options every workload takes; a workload adds its own."""
    p = argparse.ArgumentParser(description=doc)
    p.add_argument("--steps", type=int, default=200, help="timed steps")
    p.add_argument("--warmup", type=int, default=20, help="steps run before timing")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--host-sleep-ms", type=float, default=0.0,
                   help="after each step's sync the host sleeps this long (an input-bound loop: "
                        "known host-side idle, the GPU waiting for its next launch)")
    p.add_argument("--nvtx-steps", action="store_true",
                   help="each step in an NVTX range 'ProfilerStep#N' (as Megatron-style jobs do)")
    p.add_argument("--start-at", type=float, default=0, metavar="UNIX_S",
                   help="after the warm-up, wait until this CLOCK_REALTIME second before the "
                        "timed steps (runs started together then time the same seconds)")
    p.add_argument("--timed-s", type=float, default=0, metavar="S",
                   help="time steps for S seconds of wall time (at most --steps of them)")
    p.add_argument("--turns", metavar="IN,OUT", default="",
                   help="take turns with other processes on the same CPUs (two named pipes): "
                        "from --start-at, wait for a byte on IN, run steps for --slice-ms, "
                        "write a byte to OUT; the process whose IN is the first pipe of the "
                        "ring (--turn-first) begins. Runs compared this way share the same "
                        "seconds of the same cores, alternating in slices (tests/gpu/detach.sh "
                        "TURNS=1)")
    p.add_argument("--slice-ms", type=float, default=250.0)
    p.add_argument("--turn-first", action="store_true", help="this process takes the first turn")
    p.add_argument("--count-cpu", action="store_true",
                   help="per timed step, the instructions (where the machine counts them) and "
                        "the CPU time of this thread while step() launches its work, before the "
                        "synchronize: launch_instr and launch_cpu_us (perfcount.py)")
    p.add_argument("--count-kernels", type=int, default=0, metavar="N",
                   help="after timing, run N steps under torch.profiler and report GPU kernels "
                        "per step and per ms of step time (needs no other CUPTI client)")
    return p


def run(name, args, step, extra=None):
    """Runs step() warmup + steps times and prints one JSON line:
    {"workload", "steps", "step_ms": [...], "step_ms_median", "wall_s", "host_sleep_ms_sum",
     "t0_ns", "t1_ns" (CLOCK_REALTIME around the timed steps), "step_end_ms" (with --timed-s:
     each step's end since t0_ns), "kernels_per_step",
     "kernels_per_ms", ...extra}."""
    torch.manual_seed(args.seed)
    n = 0
    counters = None
    launch_instr, launch_cpu = [], []
    if args.count_cpu:
        import perfcount
        counters = perfcount.Counters()

    def one(count=False):
        nonlocal n
        if args.nvtx_steps:
            torch.cuda.nvtx.range_push(f"ProfilerStep#{n}")
        if count and counters:
            i0, c0 = counters.read()
        step()
        if count and counters:
            i1, c1 = counters.read()
            launch_instr.append(None if i0 is None else i1 - i0)
            launch_cpu.append(round((c1 - c0) / 1000, 2))
        if args.nvtx_steps:
            torch.cuda.nvtx.range_pop()
        n += 1
        torch.cuda.synchronize()

    for _ in range(args.warmup):
        one()
    if args.start_at > time.time():
        time.sleep(args.start_at - time.time())
    turn_in = turn_out = None
    if args.turns:  # O_RDWR: opening a named pipe neither blocks nor fails for want of the other end
        turn_in, turn_out = (os.open(p, os.O_RDWR) for p in args.turns.split(","))
    # taking turns: one end for all (the wall clock's start_at + timed_s), and a process that ends
    # passes "e" on instead of the turn ("t"), which each passes on as it ends: none is left
    # waiting for a turn from a process gone (also when one fails: finally)
    deadline = args.start_at + args.timed_s if turn_in is not None and args.timed_s > 0 else None
    times, ends, slept = [], [], 0.0
    t0_ns = time.time_ns()
    t_start = time.perf_counter()
    slice_end = None
    try:
        for _ in range(args.steps):
            if turn_in is not None and (slice_end is None or time.perf_counter() >= slice_end):
                if slice_end is not None:
                    os.write(turn_out, b"t")
                if (slice_end is not None or not args.turn_first) and os.read(turn_in, 1) == b"e":
                    break  # another process ended the run
                slice_end = time.perf_counter() + args.slice_ms / 1000
            if args.timed_s > 0 and time.perf_counter() - t_start >= args.timed_s:
                break
            if deadline is not None and time.time() >= deadline:
                break
            if args.host_sleep_ms > 0:
                s0 = time.perf_counter()
                time.sleep(args.host_sleep_ms / 1000)
                slept += time.perf_counter() - s0
            t0 = time.perf_counter()
            one(True)
            times.append((time.perf_counter() - t0) * 1000)
            ends.append((time.perf_counter() - t_start) * 1000)
    finally:
        if turn_out is not None:
            os.write(turn_out, b"e")
    wall = time.perf_counter() - t_start
    t1_ns = time.time_ns()
    out = {"workload": name, "steps": len(times), "step_ms": [round(t, 4) for t in times],
           "step_ms_median": statistics.median(times), "wall_s": wall,
           "host_sleep_ms_sum": slept * 1000, "t0_ns": t0_ns, "t1_ns": t1_ns, "kernels_per_step": None, "kernels_per_ms": None}
    if args.count_kernels > 0:
        acts = [torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts) as prof:
            for _ in range(args.count_kernels):
                one()
        kernels = sum(1 for e in prof.events()
                      if e.device_type == torch.autograd.DeviceType.CUDA)
        out["kernels_per_step"] = kernels / args.count_kernels
        out["kernels_per_ms"] = out["kernels_per_step"] / statistics.median(times)
    if counters:
        out["launch_instr"], out["launch_cpu_us"] = launch_instr, launch_cpu
        out["counters_refused"] = counters.why
    if args.timed_s > 0:
        out["step_end_ms"] = [round(t, 3) for t in ends]  # since t0_ns: phases by wall time
    out.update(extra or {})
    print(json.dumps(out), flush=True)
