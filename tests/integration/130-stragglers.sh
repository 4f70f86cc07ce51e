#!/usr/bin/env bash
# The straggler rule end to end on simulated jobs: a GPU straggler (cause gpu_slow, drain
# candidate), a host stall (cause host_side), and a fault-free job (no verdict, with its spread).
. "$(dirname "$0")/common.sh"
start_server
start_agent
sim() { "$BIN/rankscope-sim" --ranks 8 --steps 150 --speed 0 --agent "$WORK/agent.sock" --log-level warn "$@"; }
sim --job gpu --slow-rank 3 --slowdown 0.1 --onset-step 40 >"$WORK/gpu.json"
sim --job host --host-stall 6 --stall-ms 5 --onset-step 40 >"$WORK/host.json"
sim --job clean --seed 7 >"$WORK/clean.json"
for j in gpu host clean; do wait_for_records "$j" "$WORK/$j.json"; done
for j in gpu host clean; do curl -s "$HTTP/v1/jobs/$j/stragglers" >"$WORK/$j.verdict"; done
check "GPU straggler: rank 3, gpu_slow, ~10% slower, last at >= 90%, drain candidate" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
(v,) = d["stragglers"]
assert v["rank"] == 3 and v["cause"] == "gpu_slow", v
assert 0.07 < v["slowdown"] - 1 < 0.13 and v["last_frac"] >= 0.9, v
assert v["action"] == "drain-candidate" and v["gpu_uuid"].startswith("GPU-") and v["host"], v
assert d["action"] == "drain-candidate", d["action"]
assert 40 - 30 < v["since_step"] <= 40 + 30, v["since_step"]
assert 0 < v["impact_pct"] < 15 and v["peer_wait_s"] > v["impact_s"], v
assert v["evidence"] and v["evidence"][0]["ratio_to_peers"] > 1.05, v["evidence"]' "$WORK/gpu.verdict"
check "host stall: rank 6, host_side, with the host gap as evidence" python3 -c '
import json, sys
(v,) = json.load(open(sys.argv[1]))["stragglers"]
assert v["rank"] == 6 and v["cause"] == "host_side", v
assert 4.5 < v["evidence"][0]["host_gap_ms"] < 5.5, v["evidence"]
assert v["action"] == "observe", v' "$WORK/host.verdict"
check "host stall: its Stream Sync per stalled step reaches top as host_sync, its peers have none" python3 -c '
import json, sys, urllib.request
sent = json.load(open(sys.argv[2]))["sent"]
assert sent["syncs"] == 150 - 40, sent
top = lambda r: json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/host/top?rank=%d" % r))
(s,) = top(6)["host_sync"]
assert s["name"] == "Stream Sync" and abs(s["calls"] - 110 / 150) < 1e-9 and s["ms"] > 0, s
assert top(0)["host_sync"] == [], top(0)' "$HTTP" "$WORK/host.json"
check "fault-free job: no verdict, and the spread it saw" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["stragglers"] == [] and d["summary"].startswith("no straggler"), d["summary"]
assert d["action"] == "none", d["action"]
assert all(abs(r["slowdown"] - 1) < 0.03 for r in d["ranks"]), d["ranks"]' "$WORK/clean.verdict"
check "rankscope stragglers says it for people" sh -c "'$BIN/rankscope' --server '$HTTP' stragglers gpu | grep -q '^rank 3 on sim-node-000'"
check "ETag: revalidating an unchanged verdict gives 304 without a body" sh -c "
    tag=\$(curl -s -D - -o /dev/null '$HTTP/v1/jobs/gpu/stragglers' | sed -n 's/^ETag: //p' | tr -d '\r')
    [ -n \"\$tag\" ] &&
    [ \$(curl -s -o '$WORK/body304' -w '%{http_code}' -H \"If-None-Match: \$tag\" '$HTTP/v1/jobs/gpu/stragglers') = 304 ] &&
    [ ! -s '$WORK/body304' ] &&
    [ \$(curl -s -o /dev/null -w '%{http_code}' -H 'If-None-Match: \"other\"' '$HTTP/v1/jobs/gpu/stragglers') = 200 ]"
check "past verdicts: none as of step 35 (onset at 40); as of step 99, rank 3 since step 40" python3 -c '
import json, sys, urllib.request
get = lambda q: json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/gpu/stragglers?" + q))
d = get("until_step=35")
assert d["stragglers"] == [] and d["windows_evaluated"] == 1, d
(v,) = get("until_step=99")["stragglers"]
assert v["rank"] == 3 and v["since_step"] == 40 and v["windows"] == 2, v' "$HTTP"
check "rankscope stragglers --until-step" sh -c "'$BIN/rankscope' --server '$HTTP' stragglers gpu --until-step 35 | grep -q 'not enough data\|no straggler'"
check "windows of 60 s when 30 steps take longer: 3 s steps, 20 per window; ?window=30 exact" sh -c "
    '$BIN/rankscope-sim' --job long --ranks 4 --steps 50 --step-ms 3000 --speed 0 --agent '$WORK/agent.sock' --log-level warn >/dev/null; sleep 1
    curl -s '$HTTP/v1/jobs/long/stragglers' | grep -q '\"window_steps\":20' &&
    curl -s '$HTTP/v1/jobs/long/stragglers?window=30' | grep -q '\"window_steps\":30'"
check "window=2 is 400" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/gpu/stragglers?window=2') = 400 ]"
check "a job too short for two windows says so" sh -c "'$BIN/rankscope-sim' --job short --ranks 2 --steps 20 --speed 0 --agent '$WORK/agent.sock' --log-level warn >/dev/null; sleep 1; curl -s '$HTTP/v1/jobs/short/stragglers' | grep -q 'not enough data'"
finish
