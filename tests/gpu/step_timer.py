"""Step timing shared by the GPU test jobs (ddp_train.py, pp_train.py)."""
import torch


def timed_steps(step, n):
    """Runs step() n times; returns each run's GPU time in ms (CUDA events around it, the host
    waiting for the second before the next run, as a training loop that reads its loss does)."""
    times = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return times
