"""A small PyTorch DDP training job for tests/gpu/ and tests/bench/ (run under torchrun).

The model follows the fixtures in tests/fixtures/kineto-h200x2 (Linear + GELU layers, SGD; their
job had layers of 8192, --size 8192). Options add a GPU straggler (extra matmuls on one rank),
DataLoader worker processes (fork), and torch.profiler running in the same process. Rank 0 prints
one JSON line with per-step times (CUDA events).
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from step_timer import timed_steps

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=60)
p.add_argument("--warmup", type=int, default=10)
p.add_argument("--size", type=int, default=4096)
p.add_argument("--layers", type=int, default=4)
p.add_argument("--batch", type=int, default=1024)
p.add_argument("--extra-work-rank", type=int, default=-1)
p.add_argument("--extra-matmuls", type=int, default=3)
p.add_argument("--host-stall-rank", type=int, default=-1,
               help="this rank waits for its GPU and then sleeps at the start of each step (a "
                    "host-side straggler: a .item() followed by a slow input pipeline)")
p.add_argument("--host-stall-ms", type=float, default=20.0)
p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes (fork)")
p.add_argument("--profiler", action="store_true", help="run torch.profiler around the steps")
p.add_argument("--record-function-steps", action="store_true",
               help="each step in record_function('train_step'), the run under emit_nvtx()")
p.add_argument("--nvtx-steps", action="store_true",
               help="mark each step with an NVTX range 'ProfilerStep#N' (as Megatron-style jobs do)")
args = p.parse_args()

dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
local = int(os.environ.get("LOCAL_RANK", rank))
torch.cuda.set_device(local)
dev = torch.device("cuda", local)
torch.manual_seed(1234 + rank)

layers = []
for _ in range(args.layers):
    layers += [torch.nn.Linear(args.size, args.size), torch.nn.GELU()]
model = DDP(torch.nn.Sequential(*layers).to(dev), device_ids=[local])
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
extra = torch.randn(4096, 4096, device=dev)

if args.workers > 0:
    data = torch.utils.data.TensorDataset(torch.randn(args.batch * 8, args.size))
    loader = torch.utils.data.DataLoader(data, batch_size=args.batch, num_workers=args.workers,
                                         persistent_workers=True)
    batches = iter(())
else:
    fixed = torch.randn(args.batch, args.size, device=dev)


def next_batch():
    global batches
    if args.workers == 0:
        return fixed
    try:
        (x,) = next(batches)
    except StopIteration:
        batches = iter(loader)
        (x,) = next(batches)
    return x.to(dev, non_blocking=True)


def step():
    if rank == args.host_stall_rank:
        torch.cuda.current_stream().synchronize()
        time.sleep(args.host_stall_ms / 1000)
    if rank == args.extra_work_rank:
        for _ in range(args.extra_matmuls):
            torch.mm(extra, extra)
    out = model(next_batch())
    loss = out.float().pow(2).mean()
    opt.zero_grad(set_to_none=False)
    loss.backward()
    opt.step()


step_number = 0


def marked_step():
    """One step, inside the NVTX range or record_function the options ask for."""
    global step_number
    if args.nvtx_steps:
        torch.cuda.nvtx.range_push(f"ProfilerStep#{step_number}")
    if args.record_function_steps:
        with torch.autograd.profiler.record_function("train_step"):
            step()
    else:
        step()
    if args.nvtx_steps:
        torch.cuda.nvtx.range_pop()
    step_number += 1


def run(n):
    return timed_steps(marked_step, n)


run(args.warmup)
torch.cuda.synchronize()
t0 = time.perf_counter()
gpu_events = None
if args.profiler:
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        times = run(args.steps)
    gpu_events = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
elif args.record_function_steps:
    with torch.autograd.profiler.emit_nvtx():
        times = run(args.steps)
else:
    times = run(args.steps)
torch.cuda.synchronize()
wall = time.perf_counter() - t0
dist.barrier()
if rank == 0:
    print(json.dumps({"rank": rank, "world": world, "steps": args.steps,
                      "step_ms_median": statistics.median(times),
                      "step_ms_mean": statistics.fmean(times), "wall_s": wall,
                      "profiler_gpu_events": gpu_events}), flush=True)
dist.destroy_process_group()
