#!/usr/bin/env bash
# Agent summaries on real GPUs (issue 4): the same 2-rank DDP straggler job (extra GPU work on
# rank 0) through the plain agent and through a second agent with --summarize, both to one
# server. Writes $OUT/summaries.json: per job the straggler verdict, the step medians, and where
# the store keeps the kernels (raw records vs windows) and how many steps the agent measured; then
# prints the comparison and "gpu-summaries: N passed, N failed".
. "$(dirname "$0")/common.sh"
daemons_up
LD_LIBRARY_PATH=$B/lib "$B/bin/rankscope-agent" \
    --server "$(sed -n 's/^listen=//p' "$W/server.ready")" --socket "$W/agent-sum.sock" \
    --ready-file "$W/agent-sum.ready" --summarize --summary-window-s 5 >"$W/agent-sum.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -s "$W/agent-sum.ready" ] && break; sleep 0.1; done
: >"$OUT/train-logs.txt"
train gpu-raw --collector --steps 200 --extra-work-rank 0 --nvtx-steps
AGENT_SOCK=$W/agent-sum.sock train gpu-sum --collector --steps 200 --extra-work-rank 0 --nvtx-steps
sleep 4 # the summarizing agent sends a quiet rank's last windows and steps after 2 s
{
    echo '{'
    for job in gpu-raw gpu-sum; do
        printf '"%s": {"stragglers": %s, "steps": %s, "top": %s, "store": %s},\n' "$job" \
            "$(get "/v1/jobs/$job/stragglers?since_ns=0")" "$(get "/v1/jobs/$job/steps?last=150")" \
            "$(get "/v1/jobs/$job/top?limit=10")" \
            "$(LD_LIBRARY_PATH=$B/lib "$B/bin/rs-store-dump" "$W/data" "$job")"
    done
    echo '"end": null}'
} >"$OUT/summaries.json" 2>>"$OUT/train-logs.txt"
daemons_down
cat "$W/server.log" "$W/agent.log" "$W/agent-sum.log" >"$OUT/daemon-logs.txt"
python3 - "$OUT/summaries.json" <<'PY' | tee "$OUT/summary.txt"
import json, statistics, sys
d = json.load(open(sys.argv[1]))
ok = bad = 0
def check(what, cond, detail=""):
    global ok, bad
    print(("PASS " if cond else "FAIL ") + what + (f"  [{detail}]" if detail else ""))
    ok, bad = ok + bool(cond), bad + (not cond)
raw, s = d["gpu-raw"], d["gpu-sum"]
for r in s["store"]["ranks"]:
    # summaries start at a rank's first step marker: what came before (start-up) stays records
    check(f"summarized rank {r['rank']}: records until the first marker, then windows; "
          "every step measured",
          r["raw_kernels"] + r["window_kernels"] == r["kernels"] > 0
          and r["window_kernels"] >= 0.99 * r["kernels"]
          and r["measured_steps"] == r["steps"] > 0, json.dumps(r))
for name, j in (("raw", raw), ("summarized", s)):
    v = j["stragglers"]["stragglers"]
    check(f"{name}: rank 0 is the straggler, extra_work",
          [x["rank"] for x in v] == [0] and v[0]["cause"] == "extra_work",
          json.dumps([(x["rank"], x["cause"], round(x["slowdown"], 3)) for x in v]))
def medians(j):
    return {r["rank"]: {k: statistics.median(st[k] for st in r["steps"])
                        for k in ("step_ms", "compute_ms", "comm_ms", "idle_ms")} for r in j["steps"]["ranks"]}
mr, ms = medians(raw), medians(s)
for rank in sorted(mr):
    close = all(abs(mr[rank][k] - ms[rank][k]) <= 0.1 * mr[rank]["step_ms"] for k in mr[rank])
    check(f"rank {rank}: step medians of the two runs within 10% of a step", close,
          f"raw {mr[rank]} summarized {ms[rank]}")
top_raw = [k["name"] for k in raw["top"]["kernels"][:5]]
top_sum = [k["name"] for k in s["top"]["kernels"][:5]]
check("the top kernels are the same names", set(top_raw) == set(top_sum), f"{top_raw} / {top_sum}")
print(f"gpu-summaries: {ok} passed, {bad} failed")
PY
