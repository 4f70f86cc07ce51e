#!/usr/bin/env bash
# The straggler rule end to end on simulated jobs: a GPU straggler (cause gpu_slow, drain
# candidate), a host stall (cause host_side), and a fault-free job (no verdict, with its spread).
# The onset of a fault is found per step (the simulator's --onset-step is the truth), every figure
# names its window, a short job gets windows fitted to it, and "not enough data" exits 4.
. "$(dirname "$0")/common.sh"
start_server
start_agent
sim() { "$BIN/rankscope-sim" --ranks 8 --steps 150 --speed 0 --agent "$WORK/agent.sock" --log-level warn "$@"; }
sim --job gpu --slow-rank 3 --slowdown 0.1 --onset-step 40 >"$WORK/gpu.json"
sim --job host --host-stall 6 --stall-ms 5 --onset-step 40 >"$WORK/host.json"
sim --job clean --seed 7 >"$WORK/clean.json"
# README's tour: 16 ranks, 300 steps, rank 5 10% slower from step 100
"$BIN/rankscope-sim" --job tour --ranks 16 --steps 300 --speed 0 --slow-rank 5 --slowdown 0.1 \
    --onset-step 100 --agent "$WORK/agent.sock" --log-level warn >"$WORK/tour.json"
for j in gpu host clean tour; do wait_for_records "$j" "$WORK/$j.json"; done
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
check "onset found per step: step 40, 100 in the tour's job; since is the onset" python3 -c '
import json, sys, urllib.request
get = lambda j: json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/%s/stragglers" % j))
for job, rank, onset in (("gpu", 3, 40), ("tour", 5, 100)):
    (v,) = get(job)["stragglers"]
    o = v["onset"]
    assert v["rank"] == rank and o["step"] == onset and not o["before_search"], (job, v)
    assert o["searched_from_step"] < onset < o["searched_to_step"] and o["steps_disagreeing"] <= 2, o
(v,) = get("tour")["stragglers"]
assert v["since_step"] == 100, v["since_step"]  # the onset (the window that first met the rule: 90)
assert v["since_ns"] == v["onset"]["start_ns"], v' "$HTTP"
check "every figure names its window: the newest window, the instances, the impact's steps" python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/tour/stragglers"))
w, (v,) = d["window"], d["stragglers"]
assert (w["first_step"], w["last_step"]) == (270, 299) and w["until_ns"] > w["since_ns"], w
assert d["window_choice"] == "default" and d["enough_data"] is True, d
assert v["instances"] == 4 * 30 and v["last_frac"] == 1.0, v  # 4 AllReduce per step
iw = v["impact_window"]
assert (iw["first_step"], iw["last_step"]) == (90, 299), iw' "$HTTP"
"$BIN/rankscope" --server "$HTTP" stragglers tour >"$WORK/tour.txt"
check "rankscope stragglers names the windows and the onset" sh -c "
    grep -q '^newest window: steps 270..299 ' '$WORK/tour.txt' &&
    grep -q 'arrives last at 100% of its 120 collective instances, 100% of the others.* waiting (newest window)' '$WORK/tour.txt' &&
    grep -q '  slow since step 100: ' '$WORK/tour.txt' &&
    grep -q 'impact: .* over steps 90..299 ' '$WORK/tour.txt'"
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
d = get("until_step=35")  # 36 steps: two windows of 18, fitted to them
assert d["stragglers"] == [] and d["windows_evaluated"] == 2 and d["window_steps"] == 18, d
assert d["window_choice"] == "short_job" and d["summary"].startswith("no straggler"), d
d = get("until_step=35&window=30")
assert d["stragglers"] == [] and d["windows_evaluated"] == 1 and not d["enough_data"], d
(v,) = get("until_step=99")["stragglers"]
assert v["rank"] == 3 and v["since_step"] == 40 and v["windows"] == 2, v' "$HTTP"
check "rankscope stragglers --until-step" sh -c "'$BIN/rankscope' --server '$HTTP' stragglers gpu --until-step 35 | grep -q 'not enough data\|no straggler'"
"$BIN/rankscope-sim" --job long --ranks 4 --steps 50 --step-ms 3000 --speed 0 \
    --agent "$WORK/agent.sock" --log-level warn >"$WORK/long.json"
wait_for_records long "$WORK/long.json"
check "windows of 60 s when 30 steps take longer: 3 s steps, 20 per window; ?window=30 exact" sh -c "
    curl -s '$HTTP/v1/jobs/long/stragglers' | grep -q '\"window_steps\":20' &&
    curl -s '$HTTP/v1/jobs/long/stragglers?window=30' | grep -q '\"window_steps\":30'"
check "window=2 is 400" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/gpu/stragglers?window=2') = 400 ]"
"$BIN/rankscope-sim" --job short --ranks 2 --steps 20 --speed 0 --slow-rank 1 --slowdown 0.2 \
    --agent "$WORK/agent.sock" --log-level warn >"$WORK/short.json"
"$BIN/rankscope-sim" --job tiny --ranks 2 --steps 6 --speed 0 --agent "$WORK/agent.sock" \
    --log-level warn >"$WORK/tiny.json"
wait_for_records short "$WORK/short.json"
wait_for_records tiny "$WORK/tiny.json"
check "a job shorter than two default windows gets windows fitted to its steps, and a verdict" python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/short/stragglers"))
assert d["window_choice"] == "short_job" and d["window_steps"] == 10 and d["enough_data"], d
assert "windows of 10 steps: the job has 20 steps per rank" in d["summary"], d["summary"]
assert [v["rank"] for v in d["stragglers"]] == [1], d["stragglers"]' "$HTTP"
check "a job too short even for that says so; the CLI exits 4, with --json too" sh -c "
    curl -s '$HTTP/v1/jobs/tiny/stragglers' | grep -q '\"enough_data\":false' || exit 1
    '$BIN/rankscope' --server '$HTTP' stragglers tiny >'$WORK/tiny.txt'; [ \$? = 4 ] || exit 1
    grep -q 'not enough data' '$WORK/tiny.txt' || exit 1
    '$BIN/rankscope' --server '$HTTP' stragglers tiny --json >/dev/null; [ \$? = 4 ] || exit 1
    '$BIN/rankscope' --server '$HTTP' stragglers short >/dev/null"
finish
