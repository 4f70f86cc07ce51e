#!/usr/bin/env bash
# Top kernels, comparison and stall reasons end to end on simulated jobs with synthetic PC
# sampling: a job with a GPU straggler (rank 3, 20% slower kernels sampled as memory waits) and a
# fault-free one; REST answers, the CLI's tables and watch, and the errors people get.
. "$(dirname "$0")/common.sh"
start_server
start_agent
sim() { "$BIN/rankscope-sim" --ranks 4 --steps 100 --speed 0 --pc-sampling --agent "$WORK/agent.sock" --log-level warn "$@"; }
sim --job slow --slow-rank 3 --slowdown 0.2 --onset-step 0 >"$WORK/slow.json"
sim --job base --seed 5 >"$WORK/base.json"
for j in slow base; do wait_for_records "$j" "$WORK/$j.json"; done
cli() { "$BIN/rankscope" --server "$HTTP" "$@"; }

check "top: GEMMs and AllReduce lead, rows add up to the total" python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/base/top?limit=5"))
names = [k["name"] for k in d["kernels"]]
assert "AllReduce" in names[:4] and all("gemm" in n for n in names[:3]), names
s = sum(k["ms"] for k in d["kernels"]) + d["other"]["ms"]
assert abs(s - d["total_ms"]) < 1e-6 and d["scope"]["rank_steps"] == 400, (s, d["total_ms"])' "$HTTP"
check "compare two jobs: the slow job spends more in GEMMs, totals add up" python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/base/compare?with=slow&limit=4"))
assert d["a"]["job"] == "base" and d["b"]["job"] == "slow", d
s = sum(i["change_ms"] for i in d["items"]) + d["other"]["change_ms"]
assert abs(s - d["total"]["change_ms"]) < 1e-6, s
gemm = [i for i in d["items"] if "gemm" in i["name"]]
assert gemm and all(i["change_pct"] > 2 for i in gemm), d["items"]' "$HTTP"
check "compare two ranks: rank 3 runs the GEMMs ~20% longer and waits less in NCCL" python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/slow/compare?rank=0&with_rank=3"))
by = {i["name"]: i for i in d["items"]}
assert by["AllReduce"]["change_ms"] < 0, by["AllReduce"]
g = [i for n, i in by.items() if "gemm" in n]
assert all(15 < i["change_pct"] < 25 for i in g), g
assert d["stall_mix"][0]["reason"] == "long_scoreboard" and d["stall_mix"][0]["change_pts"] > 5' "$HTTP"
check "stalls: the straggler against its peers, found on its own" python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/slow/stalls"))
assert d["samples"] > 0 and d["reasons"] and d["kernels"], d
v = d["vs_peers"]
assert v["rank"] == 3 and v["why"] == "straggler", v
assert v["comparison"]["stall_mix"][0]["reason"] == "long_scoreboard", v["comparison"]["stall_mix"]' "$HTTP"
check "CLI top, compare, stalls print tables" sh -c "
    cli() { '$BIN/rankscope' --server '$HTTP' \"\$@\"; }
    cli top base --limit 3 | grep -q 'GPU time per step of the mean rank' &&
    cli compare base slow | grep -q '^B: slow, 4 ranks' &&
    cli compare slow --rank 0 --with-rank 3 | grep -q 'long_scoreboard' &&
    cli stalls slow | grep -q 'rank 3 (the straggler) against its peers' &&
    cli top base --json | python3 -c 'import json,sys; json.load(sys.stdin)'"
for pair in "0 1" "1 2" "0 2"; do
    set -- $pair
    cli compare base --rank "$1" --with-rank "$2" --limit 30 >>"$WORK/zero.txt"
    curl -s "$HTTP/v1/jobs/base/compare?rank=$1&with_rank=$2&limit=30" >>"$WORK/zero.jsonl"
    echo >>"$WORK/zero.jsonl"
done
check "compare prints no signed zero (-0.0%, +0.000, -0.0 pts); changes that round to 0 are marked" python3 -c '
import json, re, sys
docs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
# the fault-free ranks have changes that round to zero at the printed precision: the check bites
tiny = [it for d in docs for it in d["items"] if round(abs(it["change_ms"]), 3) == 0 and it["change_ms"] != 0]
tiny_pts = [m for d in docs for m in d["stall_mix"] if round(abs(m["change_pts"]), 1) == 0]
assert tiny and tiny_pts, (len(tiny), len(tiny_pts))
text = open(sys.argv[1]).read()
bad = [l for l in text.splitlines() if re.search(r"(?<![\d.])[+-]0\.0+(?![\d])", l)]
assert not bad, bad
assert len([l for l in text.splitlines() if " = " in l and " 0.000 " in l]) >= len(tiny), text' \
    "$WORK/zero.txt" "$WORK/zero.jsonl"
check "watch refreshes the verdict, skew and top kernels" sh -c "'$BIN/rankscope' --server '$HTTP' watch slow --iterations 2 --interval-s 0.2 >'$WORK/watch.out' && [ \$(grep -c '^rankscope watch slow' '$WORK/watch.out') = 2 ] && grep -q 'rank 3 on sim-node-000' '$WORK/watch.out' && grep -q 'NCCL wait skew' '$WORK/watch.out'"
check "compare without a second side is 400 with what to give" sh -c "curl -s '$HTTP/v1/jobs/base/compare' | grep -q 'with=JOB, with_rank=R'"
check "a rank without data is 404 that says so; exit code 3" sh -c "
    curl -s '$HTTP/v1/jobs/base/top?rank=9' | grep -q "job 'base' has no rank 9" &&
    { '$BIN/rankscope' --server '$HTTP' top base --rank 9 2>/dev/null; [ \$? = 3 ]; }"
check "bad parameters are 400" sh -c "
    [ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/base/top?limit=0') = 400 ] &&
    [ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/base/compare?with=bad/name') = 400 ] &&
    [ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/base/stalls?nope=1') = 400 ]"
sim_job nopc 2 10
check "a job without PC samples says how to get them" sh -c "'$BIN/rankscope' --server '$HTTP' stalls nopc | grep -q 'no PC-sampling data'"
finish
