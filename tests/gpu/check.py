"""Checks the GPU test results (tests/gpu/run.sh) and prints '<suite>: N passed, N failed'."""
import json
import sys

jobs = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    jobs[d["job"]] = d
passed = failed = 0


def check(what, ok, detail=""):
    global passed, failed
    passed, failed = passed + bool(ok), failed + (not ok)
    print(("ok    " if ok else "FAIL  ") + what + (f"  [{detail}]" if detail else ""))


def store(job):
    return (jobs.get(job) or {}).get("store") or {}


b = store("gpu-baseline")
ranks = b.get("ranks", [])
check("baseline: both ranks stored", b.get("ranks_seen") == 2 and len(ranks) == 2,
      f"ranks_seen={b.get('ranks_seen')}")
check("baseline: kernels on every rank", len(ranks) == 2 and all(r["kernels"] > 100 for r in ranks),
      ", ".join(f"r{r['rank']}={r['kernels']}" for r in ranks))
check("baseline: NCCL kernels on every rank",
      len(ranks) == 2 and all(r["collectives"] > 0 for r in ranks),
      ", ".join(f"r{r['rank']}={r['collectives']}" for r in ranks))
check("baseline: GPU UUIDs known and distinct",
      len(ranks) == 2 and all(r["gpu_uuid"].startswith("GPU-") for r in ranks)
      and ranks[0]["gpu_uuid"] != ranks[1]["gpu_uuid"], ", ".join(r["gpu_uuid"] for r in ranks))
tot, comp = b.get("collective_instances", 0), b.get("complete_instances", 0)
check("baseline: collective instances matched across ranks", tot > 0 and comp == tot,
      f"{comp} of {tot} complete, mean skew {b.get('mean_skew_ms')} ms")
check("baseline: steps from NVTX 'ProfilerStep#N' ranges on every rank (10 warm-up + 60)",
      len(ranks) == 2 and all(r["steps"] == 70 for r in ranks),
      ", ".join(f"r{r['rank']}={r['steps']}" for r in ranks))
check("baseline: collectors report no condition, CUPTI clock is CLOCK_REALTIME",
      len(ranks) == 2 and all(r.get("collector_flags") == 0 and abs(r.get("clock_offset_ns", 1e18)) < 1e9
                              for r in ranks),
      ", ".join(f"flags={r.get('collector_flags')} offset={r.get('clock_offset_ns')}ns" for r in ranks))
check("baseline: nothing dropped", all(r["dropped"] == 0 for r in ranks),
      ", ".join(str(r["dropped"]) for r in ranks))

rf = store("gpu-recfn").get("ranks", [])
check("record_function steps under emit_nvtx ('train_step, op_id = N'): 30 steps on every rank",
      len(rf) == 2 and all(r["steps"] == 30 for r in rf),
      ", ".join(f"r{r['rank']}={r['steps']}" for r in rf))

s = store("gpu-straggler")
sr = s.get("ranks", [])
last = s.get("last_arriver_counts", [0, 0])
check("straggler: rank 0 arrives last at most collectives",
      s.get("complete_instances", 0) > 0 and last[0] > 0.8 * s["complete_instances"],
      f"last arrivals {last} of {s.get('complete_instances')}")
if len(sr) == 2:
    check("straggler: rank 0 has more kernel time, rank 1 waits longer in NCCL",
          sr[0]["kernel_ms"] > sr[1]["kernel_ms"] and sr[1]["nccl_ms"] > sr[0]["nccl_ms"],
          f"kernel ms {sr[0]['kernel_ms']:.0f}/{sr[1]['kernel_ms']:.0f}, "
          f"nccl ms {sr[0]['nccl_ms']:.0f}/{sr[1]['nccl_ms']:.0f}")
else:
    check("straggler: both ranks stored", False)

def load(path):
    try:
        return json.load(open(path))
    except Exception as e:  # the server may not have answered
        return {"error": str(e)}


v = load(sys.argv[3])
(first,) = v.get("stragglers", [{}])[:1] or [{}]
check("straggler: the server's verdict names rank 0, cause extra_work, drain or observe",
      first.get("rank") == 0 and first.get("cause") == "extra_work" and first.get("last_frac", 0) > 0.9,
      f"{v.get('summary')}; rank {first.get('rank')}, cause {first.get('cause')}, "
      f"slowdown {first.get('slowdown')}")
bv = load(sys.argv[4])
check("baseline: the server finds no straggler", bv.get("stragglers") == [], bv.get("summary"))

f = jobs.get("gpu-fork", {})
check("fork: DataLoader workers job finished", f.get("result") is not None)
check("fork: data from both ranks", store("gpu-fork").get("ranks_seen") == 2)

pr = jobs.get("gpu-profiler", {})
res = pr.get("result") or {}
alone = (jobs.get("gpu-profiler-alone", {}).get("result") or {}).get("profiler_gpu_events") or 0
seen = res.get("profiler_gpu_events") or 0
check("coexistence: job under torch.profiler finished", pr.get("result") is not None)
check("coexistence: torch.profiler keeps >= 90% of its GPU events with rankscope present",
      alone > 0 and seen >= 0.9 * alone, f"{seen} with rankscope, {alone} without")
prr = store("gpu-profiler").get("ranks", [])
check("coexistence: each rank's collector reports that torch.profiler took CUPTI's buffers "
      "(stepped_aside)", len(prr) == 2 and all(r.get("collector_flags", 0) & 1 for r in prr),
      ", ".join(f"r{r['rank']} flags={r.get('collector_flags')}" for r in prr))
print(f"info  coexistence: rankscope stored "
      f"{sum(r['kernels'] for r in store('gpu-profiler').get('ranks', []))} kernels of that job "
      "(torch.profiler owns CUPTI's callbacks from its first session on)")
check("no collector, no data", not store("gpu-disabled-check"))

pc = jobs.get("gpu-pcsampling", {})
check("PC sampling: the job finished", pc.get("result") is not None)
try:
    st = json.load(open(sys.argv[2]))
except Exception as e:
    st = {"error": str(e)}
reasons = [r["reason"] for r in st.get("reasons", [])]
check("PC sampling: stall samples stored, with CUPTI's reason names",
      st.get("samples", 0) > 0 and reasons and all(not r.startswith("smsp__") for r in reasons),
      f"{st.get('samples')} samples, reasons {reasons[:6]}")
ks = st.get("kernels", [])
check("PC sampling: top kernels have samples and reason mixes",
      len(ks) > 0 and all(k["samples"] > 0 and k["reasons"] for k in ks),
      "; ".join(f"{k['name'][:40]}: {k['samples']}" for k in ks[:3]))
vs = st.get("vs_peers") or {}
print(f"info  PC sampling: vs_peers rank {vs.get('rank')} ({vs.get('why')}), stall mix "
      + ", ".join(f"{m['reason']} {m['change_pts']:+.1f} pts"
                  for m in ((vs.get('comparison') or {}).get('stall_mix') or [])[:4]))
top = load(sys.argv[5]) if len(sys.argv) > 5 else {}
names = [k["name"] for k in top.get("kernels", []) if k.get("kind") == "kernel"]
check("kernel names are demangled by the agent (none left in the _Z form)",
      names and not [n for n in names if n.startswith("_Z")],
      "; ".join(n[:60] for n in names[:4]))


def syncs(top):
    return {s["name"]: s for s in top.get("host_sync") or []}


bs = syncs(top).get("Event Sync", {})
step_ms = ((jobs.get("gpu-baseline") or {}).get("result") or {}).get("step_ms_median") or 0
check("host syncs: the step timer's Event.synchronize() holds the host for most of each step",
      step_ms > 0 and bs.get("ms", 0) >= 0.5 * step_ms,
      f"Event Sync {bs.get('ms', 0):.2f} ms of a {step_ms:.2f} ms step; {syncs(top)}")
hv = load(sys.argv[6]) if len(sys.argv) > 6 else {}
(hs,) = hv.get("stragglers", [{}])[:1] or [{}]
check("host stall: the server's verdict names rank 1, cause host_side",
      hs.get("rank") == 1 and hs.get("cause") == "host_side",
      f"{hv.get('summary')}; rank {hs.get('rank')}, cause {hs.get('cause')}, "
      f"evidence {hs.get('evidence')}")
h1 = syncs(load(sys.argv[7])) if len(sys.argv) > 7 else {}
h0 = syncs(load(sys.argv[8])) if len(sys.argv) > 8 else {}
extra = (h1.get("Stream Sync", {}).get("calls", 0) - h0.get("Stream Sync", {}).get("calls", 0))
check("host stall: rank 1 makes one Stream Sync per step more than rank 0 (its stall's)",
      0.9 <= extra <= 1.1, f"{extra:+.2f} per step; rank 1 {h1}; rank 0 {h0}")
wait0, wait1 = h0.get("Event Sync", {}).get("ms", 0), h1.get("Event Sync", {}).get("ms", 0)
check("host stall: rank 0's host waits >= 10 ms per step longer in Event Sync (for rank 1)",
      wait0 >= wait1 + 10, f"rank 0 {wait0:.2f} ms, rank 1 {wait1:.2f} ms per step")
lw1, lw0 = h1.get("Launch Wait", {}).get("ms", 0), h0.get("Launch Wait", {}).get("ms", 0)
check("launch waits: rank 1's GPU waits >= 15 ms per step for its host (the 20 ms sleep after a "
      "synchronize), rank 0's >= 10 ms less",
      lw1 >= 15 and lw1 >= lw0 + 10, f"rank 1 {lw1:.2f} ms, rank 0 {lw0:.2f} ms per step")
bw = syncs(top).get("Launch Wait", {})
check("launch waits: the baseline's GPUs wait for the host at each step start (after the step "
      "timer's synchronize), for less than the step",
      0 < bw.get("ms", 0) < step_ms and 0.5 <= bw.get("calls", 0),
      f"{bw.get('ms', 0):.3f} ms in {bw.get('calls', 0):.1f} waits per step of {step_ms:.2f} ms")
print(f"gpu: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
