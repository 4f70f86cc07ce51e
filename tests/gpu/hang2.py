"""Two ranks, one GPU each (torchrun --nproc_per_node=2), NCCL AllReduces with the collector and
its profiler plugin (tests/gpu/hang2.sh sets them). After a warm-up of AllReduces (the
communicator's usual time), two hangs of HANG_S seconds, each on rank 1 only:
  gpu_held   rank 1 queues torch.cuda._sleep(HANG_S) on its stream, then the AllReduce: NCCL
             enqueues it on both ranks; rank 0's kernel starts and waits for rank 1's, which is
             queued behind the sleep (a rank whose GPU is busy elsewhere)
  host_held  rank 1's host sleeps HANG_S before it calls the AllReduce (a rank stuck outside
             NCCL: it never arrives)
Meanwhile a thread of rank 0 polls the server every 0.25 s: GET /v1/jobs/JOB/hangs and the
rankscope_hangs_active line of /metrics. Rank 0 prints one JSON line: per phase when the
AllReduce was called and completed (CLOCK_REALTIME seconds) and the polls.
usage: hang2.py HTTP JOB HANG_S"""
import json
import os
import sys
import threading
import time
import urllib.request

import torch
import torch.distributed as dist

HTTP, JOB, HANG_S = sys.argv[1], sys.argv[2], float(sys.argv[3])
rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
dist.init_process_group("nccl", device_id=torch.device("cuda", local))
x = torch.ones(1 << 20, device="cuda")
for _ in range(300):
    dist.all_reduce(x)
    torch.cuda.synchronize()
# the GPU's sleep cycles per second, measured on this rank's GPU
t = time.perf_counter()
torch.cuda._sleep(int(2e8))
torch.cuda.synchronize()
cycles_per_s = 2e8 / (time.perf_counter() - t)


def get(path):
    return urllib.request.urlopen(HTTP + path, timeout=2).read().decode()


def brief(answer):
    """A hang answer reduced to what the checks read."""
    return [{"comm": h.get("comm"), "op": h.get("op"), "seq": h.get("seq"),
             "since_ns": h.get("since_ns"),
             "waiting": [[w["rank"], w.get("gpu_started")] for w in h.get("waiting", [])],
             "never_arrived": [[a["rank"], a.get("host"), a.get("gpu_uuid")]
                               for a in h.get("never_arrived", [])]}
            for h in answer.get("hangs", [])]


def poll(out, stop):
    while not stop.is_set():
        t = time.time()
        try:
            answer = json.loads(get(f"/v1/jobs/{JOB}/hangs"))
            active = [l for l in get("/metrics").splitlines()
                      if l.startswith("rankscope_hangs_active")]
            out.append([t, brief(answer), active])
        except Exception as e:  # noqa: BLE001 — kept in the record, the check reads it
            out.append([t, {"error": str(e)}, []])
        stop.wait(0.25)


phases = {}
for phase in ("gpu_held", "host_held"):
    dist.barrier()
    torch.cuda.synchronize()
    polls, stop = [], threading.Event()
    poller = threading.Thread(target=poll, args=(polls, stop)) if rank == 0 else None
    if poller:
        poller.start()
    called = time.time()
    if rank == 1:
        if phase == "gpu_held":
            torch.cuda._sleep(int(HANG_S * cycles_per_s))
        else:
            time.sleep(HANG_S)
    dist.all_reduce(x)
    torch.cuda.synchronize()
    completed = time.time()
    if poller:
        time.sleep(5)  # the clearing
        stop.set()
        poller.join()
    phases[phase] = {"called_at": called, "completed_at": completed, "polls": polls}
    for _ in range(50):
        dist.all_reduce(x)
    torch.cuda.synchronize()
x.fill_(1.0)  # a last AllReduce checked: every rank's ones summed
dist.all_reduce(x)
ok = bool(torch.all(x == dist.get_world_size()).item())
try:
    final = json.loads(get(f"/v1/jobs/{JOB}/hangs")) if rank == 0 else None
except Exception as e:  # noqa: BLE001
    final = {"error": str(e)}
dist.destroy_process_group()
if rank == 0:
    print(json.dumps({"rank": rank, "hang_s": HANG_S, "cycles_per_s": cycles_per_s,
                      "nccl": ".".join(map(str, torch.cuda.nccl.version())), "data_ok": ok,
                      "phases": phases, "final": final}), flush=True)
