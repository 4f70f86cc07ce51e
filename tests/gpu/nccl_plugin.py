"""World-size-1 NCCL communicator on one GPU, driven through ctypes (torch.distributed refuses a
send to oneself, and NCCL runs one-rank collectives as plain copies without profiler events), for
tests/gpu/plugin.sh: grouped send/recv to self (a real NCCL kernel with kernel-channel events),
timed per operation; one-rank all-reduces; then a send/recv queued behind torch.cuda._sleep on the
same stream, far longer than the collector's hang limit, while a thread polls the server for the
rank's collector condition. Prints one JSON line.

usage: nccl_plugin.py OPS HANG_S [HTTP JOB]   (HTTP/JOB: poll the server during the hang)
START_AT=UNIX_S in the environment: after the warm-up, wait until that second before the timed
operations (two processes started together then time the same seconds: tests/gpu/plugin.sh
PAIRS_PAR). The line carries the calling thread's CPU time per operation (getrusage
RUSAGE_THREAD: NCCL calls the plugin's start/stop on it) besides wall time."""
import ctypes
import json
import os
import resource
import sys
import threading
import time
import urllib.request

import torch

OPS = int(sys.argv[1])
HANG_S = float(sys.argv[2])
HTTP = sys.argv[3] if len(sys.argv) > 3 else ""
JOB = sys.argv[4] if len(sys.argv) > 4 else ""

torch.cuda.init()
torch.zeros(1, device="cuda")  # CUDA (and the injected collector) up before NCCL
nccl = ctypes.CDLL("libnccl.so.2")


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_byte * 128)]


def check(rc, what):
    if rc != 0:
        raise SystemExit(f"{what} failed: {rc}")


version = ctypes.c_int()
check(nccl.ncclGetVersion(ctypes.byref(version)), "ncclGetVersion")
uid = UniqueId()
check(nccl.ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
comm = ctypes.c_void_p()
nccl.ncclCommInitRank.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, UniqueId,
                                  ctypes.c_int]
check(nccl.ncclCommInitRank(ctypes.byref(comm), 1, uid, 0), "ncclCommInitRank")
for f in (nccl.ncclSend, nccl.ncclRecv):
    f.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                  ctypes.c_void_p]
nccl.ncclAllReduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                               ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
FLOAT32 = 7

stream = torch.cuda.Stream()
s = ctypes.c_void_p(stream.cuda_stream)
n = 1024  # 4 KiB: launch-bound, what a plugin's per-operation cost shows on
a = torch.ones(n, device="cuda")
b = torch.zeros(n, device="cuda")


def sendrecv():
    check(nccl.ncclGroupStart(), "ncclGroupStart")
    check(nccl.ncclSend(a.data_ptr(), n, FLOAT32, 0, comm, s), "ncclSend")
    check(nccl.ncclRecv(b.data_ptr(), n, FLOAT32, 0, comm, s), "ncclRecv")
    check(nccl.ncclGroupEnd(), "ncclGroupEnd")


def thread_cpu_s():
    ru = resource.getrusage(resource.RUSAGE_THREAD)
    return ru.ru_utime + ru.ru_stime


for _ in range(50):
    sendrecv()
torch.cuda.synchronize()
start_at = float(os.environ.get("START_AT", "0"))
if start_at > time.time():
    time.sleep(start_at - time.time())
t0_ns = time.time_ns()
cpu0 = thread_cpu_s()
t0 = time.perf_counter()
for _ in range(OPS):
    sendrecv()
host_s = time.perf_counter() - t0
torch.cuda.synchronize()
wall_s = time.perf_counter() - t0
cpu_s = thread_cpu_s() - cpu0
ok = bool(torch.equal(a, b))

for _ in range(100):  # one rank: NCCL copies, no profiler events expected
    check(nccl.ncclAllReduce(a.data_ptr(), b.data_ptr(), n, FLOAT32, 0, comm, s), "ncclAllReduce")
torch.cuda.synchronize()

polls = []
hang = {}
if HANG_S > 0:
    stop = threading.Event()

    def poll():
        while not stop.is_set():
            try:
                ranks = json.loads(urllib.request.urlopen(f"{HTTP}/v1/jobs/{JOB}/ranks",
                                                          timeout=2).read())
                r = ranks["ranks"][0] if isinstance(ranks, dict) else ranks[0]
                c = r.get("collector", {})
                polls.append([round(time.time(), 2), c.get("flags"), c.get("status")])
            except Exception as e:  # the server may not know the job yet
                polls.append([round(time.time(), 2), "error", str(e)[:80]])
            stop.wait(0.5)

    th = threading.Thread(target=poll)
    if HTTP:
        th.start()
    time.sleep(2)
    with torch.cuda.stream(stream):
        torch.cuda._sleep(int(HANG_S * 1.98e9))  # H100 SXM: ~1.98 GHz
    hang["enqueued_at"] = time.time()
    sendrecv()
    stream.synchronize()
    hang["completed_at"] = time.time()
    time.sleep(3)
    stop.set()
    if HTTP:
        th.join()

print(json.dumps({"nccl_version": version.value, "ops": OPS, "host_us_per_op": host_s / OPS * 1e6,
                  "wall_us_per_op": wall_s / OPS * 1e6, "thread_cpu_us_per_op": cpu_s / OPS * 1e6,
                  "t0_ns": t0_ns, "data_ok": ok, "hang": hang,
                  "polls": polls}))
nccl.ncclCommDestroy(comm)
