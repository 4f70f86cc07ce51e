"""A 2-stage pipeline-parallel training job for tests/gpu/pipeline.sh (run under torchrun, 2 ranks).

Rank 0 holds the first half of the layers, rank 1 the second; each step runs --microbatches
microbatches on a 1F1B schedule (one warm-up forward on stage 0, then one forward and one
backward each), exchanging activations and gradients with NCCL point-to-point operations, the
way Megatron-style jobs do: --p2p batched sends and receives each exchange in one
batch_isend_irecv (a NCCL group), --p2p ordered as separate isend/irecv calls in the same order
on both ranks. The host never waits for the exchanges (req.wait() only orders the streams), so
NCCL kernels that need the peer's matching launch are in flight whenever a rank launches more
work: the case where the collector's PC-sampling windows, which synchronize the context at a
launch, could wait on a peer that is itself waiting. Rank 0 prints one JSON line with per-step
times (CUDA events).
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist

from step_timer import timed_steps

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=60)
p.add_argument("--warmup", type=int, default=5)
p.add_argument("--size", type=int, default=4096)
p.add_argument("--layers", type=int, default=4, help="per stage")
p.add_argument("--batch", type=int, default=256, help="per microbatch")
p.add_argument("--microbatches", type=int, default=8)
p.add_argument("--p2p", choices=["batched", "ordered"], default="batched")
args = p.parse_args()

dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
assert world == 2, "two stages: run with --nproc_per_node=2"
local = int(os.environ.get("LOCAL_RANK", rank))
torch.cuda.set_device(local)
dev = torch.device("cuda", local)
torch.manual_seed(1234 + rank)
peer = 1 - rank

layers = []
for _ in range(args.layers):
    layers += [torch.nn.Linear(args.size, args.size), torch.nn.GELU()]
stage = torch.nn.Sequential(*layers).to(dev)
opt = torch.optim.SGD(stage.parameters(), lr=1e-4)
inputs = [torch.randn(args.batch, args.size, device=dev) for _ in range(args.microbatches)]


def exchange(send, recv_shape):
    """Sends `send` (or nothing) to the peer and receives a tensor of `recv_shape` (or nothing)."""
    recv = torch.empty(recv_shape, device=dev) if recv_shape else None
    ops = []
    if send is not None:
        ops.append(dist.P2POp(dist.isend, send.contiguous(), peer))
    if recv is not None:
        ops.append(dist.P2POp(dist.irecv, recv, peer))
    if args.p2p == "batched":
        reqs = dist.batch_isend_irecv(ops) if ops else []
    else:  # the same order on both ranks: stage 0 sends first, stage 1 receives first
        ops.sort(key=lambda op: (op.op is dist.irecv) == (rank == 0))
        reqs = [op.op(op.tensor, op.peer) for op in ops]
    for r in reqs:
        r.wait()
    return recv


shape = (args.batch, args.size)


def step_stage0():
    acts = []
    for m in range(args.microbatches):
        a = stage(inputs[m])
        acts.append(a)
        grad = exchange(a.detach(), shape if m > 0 else None)  # send act m, recv grad m-1
        if m > 0:
            acts[m - 1].backward(grad)
    grad = exchange(None, shape)  # the last gradient
    acts[-1].backward(grad)


def step_stage1():
    grad_prev = None
    for m in range(args.microbatches):
        x = exchange(grad_prev, shape)  # send grad m-1, recv act m
        x.requires_grad_(True)
        loss = stage(x).float().pow(2).mean()
        loss.backward()
        grad_prev = x.grad
    exchange(grad_prev, None)


def step():
    opt.zero_grad(set_to_none=False)
    (step_stage0 if rank == 0 else step_stage1)()
    opt.step()


def run(n):
    return timed_steps(step, n)


run(args.warmup)
torch.cuda.synchronize()
t0 = time.perf_counter()
times = run(args.steps)
torch.cuda.synchronize()
wall = time.perf_counter() - t0
dist.barrier()
if rank == 0:
    print(json.dumps({"rank": rank, "world": world, "steps": args.steps, "p2p": args.p2p,
                      "step_ms_median": statistics.median(times),
                      "step_ms_mean": statistics.fmean(times), "wall_s": wall}), flush=True)
dist.destroy_process_group()
