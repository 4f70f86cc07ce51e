"""The advisor's catalogue (issue 27): small single-GPU PyTorch jobs, each with one planted
inefficiency, and one clean job. For every job it writes a torch.profiler trace without step
markers (no schedule, no prof.step(): the steps must be inferred), gzipped, and measures the step
time of the planted version against the fixed one (the change the advisor recommends).

    python3 tests/gpu/advise_catalogue.py OUTDIR [JOB ...]
    python3 tests/gpu/advise_catalogue.py --live STEPS JOB   (no profiler: for the collector)

OUTDIR gets advise_<job>.json.gz (traces) and catalogue.json: per job the profiled step count,
the profiled wall time per step (the period the step inference must find), and the timed rounds
of planted and fixed step times (ms, median of ROUNDS alternating rounds of TIMED_STEPS steps,
torch.cuda.synchronize() around each round)."""
import gzip
import json
import os
import queue
import shutil
import sys
import threading
import time

import torch
import torch.nn.functional as F

DEV = "cuda"
WARMUP = 8
PROFILED = int(os.environ.get("PROFILED_STEPS", "16"))
TIMED_STEPS = int(os.environ.get("TIMED_STEPS", "40"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))


def linears(d, layers, dtype):
    return [torch.nn.Linear(d, d, device=DEV, dtype=dtype) for _ in range(layers)]


def params(ls):
    return [p for l in ls for p in l.parameters()]


def tanh_gelu_unfused(x):
    # the tanh GELU written out: about eight elementwise kernels forward, more backward
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def host_work(seconds):
    """Python work on the host (a logger formatting the value it read, say)."""
    t = time.perf_counter()
    while time.perf_counter() - t < seconds:
        pass


class Mlp:
    """Linear layers with an activation, mse loss, fused AdamW: the step every job varies."""

    def __init__(self, d, layers, batch, dtype, act=None, stats=None, host_s=0.0):
        self.ls = linears(d, layers, dtype)
        self.opt = torch.optim.AdamW(params(self.ls), lr=1e-5, fused=True)
        self.x = torch.randn(batch, d, device=DEV, dtype=dtype)
        self.y = torch.randn(batch, d, device=DEV, dtype=dtype)
        self.act = act or (lambda h: F.gelu(h))
        self.stats = stats  # None, "item" (host reads a value per layer) or "tensor"
        self.host_s = host_s  # host work after each statistic (read or not)

    def forward(self, x):
        h = x
        kept = []
        for l in self.ls:
            h = self.act(l(h))
            if self.stats == "item":
                kept.append(h.detach().abs().mean().item())
            elif self.stats == "tensor":
                kept.append(h.detach().abs().mean())
            if self.stats:
                host_work(self.host_s)
        return h

    def step(self, x=None):
        out = self.forward(self.x if x is None else x)
        loss = F.mse_loss(out, self.y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        if self.stats == "item":
            loss.item()
        if self.stats:
            host_work(self.host_s)


def job_clean(fixed):
    m = Mlp(4096, 4, 8192, torch.bfloat16)
    return m.step


def job_launch_bound(fixed):
    # many tiny layers at a small batch: each kernel runs for a few µs, the host needs longer to
    # launch the next (no fix measured: CUDA graphs / torch.compile)
    m = Mlp(256, 48, 128, torch.bfloat16)
    return m.step


def job_host_sync(fixed):
    # a statistic read on the host after every layer (.item()) and the loss read every step, each
    # followed by 0.3 ms of host work (logging it); fixed: the statistics stay on the GPU (the
    # host work stays, but the host no longer waits for the GPU first). The GPU work (~5 ms) is
    # longer than the host's, so without the reads the host runs ahead.
    m = Mlp(4096, 4, 8192, torch.bfloat16, stats="tensor" if fixed else "item", host_s=3e-4)
    return m.step


def job_input_pipeline(fixed):
    # each step's batch is prepared on the host (decode stand-in: 2 ms of sleep and a 16 MB copy
    # into a pinned buffer) before the GPU gets it; fixed: a prefetching thread prepares the
    # next batches while the GPU computes (DataLoader workers / prefetch in PyTorch terms)
    d, batch = 2048, 4096
    m = Mlp(d, 8, batch, torch.bfloat16)
    src = torch.randn(batch, d, dtype=torch.bfloat16)
    bufs = [torch.empty(batch, d, dtype=torch.bfloat16).pin_memory() for _ in range(4)]
    state = {"i": 0}

    def prepare(buf):
        time.sleep(0.002)
        buf.copy_(src)
        return buf

    if not fixed:
        def step():
            buf = prepare(bufs[state["i"] % len(bufs)])
            state["i"] += 1
            m.step(buf.to(DEV, non_blocking=True))
        return step

    q = queue.Queue(maxsize=2)

    def worker():
        i = 0
        while True:
            q.put(prepare(bufs[i % len(bufs)]))
            i += 1

    threading.Thread(target=worker, daemon=True).start()

    def step_fixed():
        m.step(q.get().to(DEV, non_blocking=True))
    return step_fixed


def job_pageable_copy(fixed):
    # 128 MB copied host->device every step from pageable memory (synchronous); fixed: pinned
    # memory and non_blocking=True
    m = Mlp(2048, 8, 4096, torch.bfloat16)
    host = torch.randn(32 * 1024 * 1024)
    if fixed:
        host = host.pin_memory()
    dev = torch.empty(host.shape, device=DEV)

    def step():
        dev.copy_(host, non_blocking=fixed)
        m.step()
    return step


def job_fp32_gemm(fixed):
    # fp32 GEMMs without TF32: no tensor cores; fixed: allow_tf32 (the fixed run sets it)
    m = Mlp(2048, 6, 4096, torch.float32)
    return m.step


def job_unfused_elementwise(fixed):
    # the tanh GELU written out elementwise; fixed: F.gelu(approximate="tanh"), one kernel
    act = (lambda h: F.gelu(h, approximate="tanh")) if fixed else tanh_gelu_unfused
    m = Mlp(2048, 6, 8192, torch.bfloat16, act=act)
    return m.step


JOBS = {
    "clean": (job_clean, False),
    "launch_bound": (job_launch_bound, False),
    "host_sync": (job_host_sync, True),
    "input_pipeline": (job_input_pipeline, True),
    "pageable_copy": (job_pageable_copy, True),
    "fp32_gemm": (job_fp32_gemm, True),
    "unfused_elementwise": (job_unfused_elementwise, True),
}


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def timed(step, n):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3 / n


def profiler_config():
    try:
        from torch._C._profiler import _ExperimentalConfig
        return _ExperimentalConfig(enable_cuda_sync_events=True)
    except Exception as e:  # an older PyTorch: no sync events, said in catalogue.json
        print("no cuda sync events:", e, file=sys.stderr)
        return None


def profile(name, step, outdir):
    from torch.profiler import ProfilerActivity, profile as tprofile
    cfg = profiler_config()
    kw = {"experimental_config": cfg} if cfg is not None else {}
    torch.cuda.synchronize()
    with tprofile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], **kw) as prof:
        t0 = time.perf_counter()
        for _ in range(PROFILED):
            step()
        torch.cuda.synchronize()
        wall = (time.perf_counter() - t0) * 1e3 / PROFILED
    raw = os.path.join(outdir, f"advise_{name}.json")
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.unlink(raw)
    return wall, cfg is not None


def run_job(name, outdir):
    build, has_fix = JOBS[name]
    res = {"job": name, "profiled_steps": PROFILED}
    set_tf32(False)
    step = build(False)
    for _ in range(WARMUP):
        step()
    res["profiled_ms_per_step"], res["sync_events"] = profile(name, step, outdir)
    if has_fix:
        fixed = None
        planted_ms, fixed_ms = [], []
        for _ in range(ROUNDS):
            set_tf32(False)
            planted_ms.append(timed(step, TIMED_STEPS))
            set_tf32(name == "fp32_gemm")
            if fixed is None:
                fixed = build(True)
                for _ in range(WARMUP):
                    fixed()
            fixed_ms.append(timed(fixed, TIMED_STEPS))
        set_tf32(False)
        res["planted_ms"] = planted_ms
        res["fixed_ms"] = fixed_ms
        p, f = sorted(planted_ms)[len(planted_ms) // 2], sorted(fixed_ms)[len(fixed_ms) // 2]
        res["planted_median_ms"], res["fixed_median_ms"], res["gain_ms"] = p, f, p - f
    else:
        res["planted_ms"] = [timed(step, TIMED_STEPS) for _ in range(ROUNDS)]
    return res


def live(steps, name):
    """The job alone, no profiler, for the collector: prints its ms per step."""
    set_tf32(False)
    step = JOBS[name][0](False)
    for _ in range(WARMUP):
        step()
    print(json.dumps({"job": name, "live_ms_per_step": timed(step, steps)}), flush=True)


def main():
    if sys.argv[1] == "--live":
        live(int(sys.argv[2]), sys.argv[3])
        return
    outdir = sys.argv[1]
    names = sys.argv[2:] or list(JOBS)
    os.makedirs(outdir, exist_ok=True)
    results = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0),
               "timed_steps": TIMED_STEPS, "rounds": ROUNDS, "jobs": []}
    for name in names:
        t0 = time.time()
        r = run_job(name, outdir)
        r["seconds"] = round(time.time() - t0, 1)
        print(json.dumps(r), flush=True)
        results["jobs"].append(r)
        torch.cuda.empty_cache()
    with open(os.path.join(outdir, "catalogue.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
