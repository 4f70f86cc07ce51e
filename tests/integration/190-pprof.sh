#!/usr/bin/env bash
# pprof export end to end: simulated jobs with and without PC sampling, exported by the CLI from
# the server (GET /v1/jobs/{job}/pprof) and from the store directory, read back by an independent
# Python decoder (pprof_read.py) and by `go tool pprof` itself (golang-go, from make test-deps),
# with totals checked against the REST API; then the errors people get.
. "$(dirname "$0")/common.sh"
start_server
start_agent
sim() { "$BIN/rankscope-sim" --ranks 4 --steps 60 --speed 0 --agent "$WORK/agent.sock" --log-level warn "$@"; }
sim --job slow --pc-sampling --slow-rank 3 --slowdown 0.2 --onset-step 0 >"$WORK/slow.json"
sim --job nopc --seed 5 >"$WORK/nopc.json"
for j in slow nopc; do wait_for_records "$j" "$WORK/$j.json"; done
cli() { "$BIN/rankscope" --server "$HTTP" "$@"; }
read_pprof() { python3 tests/integration/pprof_read.py "$1"; }

check "export --format pprof from the server writes a stall profile" sh -c "
    '$BIN/rankscope' --server '$HTTP' export slow --format pprof --out '$WORK/slow.pb.gz' >'$WORK/export.out' &&
    grep -q 'go tool pprof' '$WORK/export.out' && [ -s '$WORK/slow.pb.gz' ]"
read_pprof "$WORK/slow.pb.gz" >"$WORK/slow.pprof.json"
check "stall flame graph: rank -> kernel -> kernel+0xpc (in its cubin) -> reason; totals = /stalls per rank" python3 -c '
import json, sys, urllib.request
p = json.load(open(sys.argv[2]))
assert p["sample_types"] == [["samples", "count"]], p["sample_types"]
assert p["samples"], "no samples"
per_rank = {}
for s in p["samples"]:
    rank, kernel, pc, reason = s["stack"]
    assert rank == "rank %d" % s["labels"]["rank"], s
    assert pc.startswith(kernel + "+0x") and int(pc.rsplit("+", 1)[1], 16) == s["addresses"][2], s
    assert s["mappings"][2].startswith("cubin-") and s["mappings"][:2] == [None, None], s
    assert isinstance(s["labels"]["host"], str) and s["labels"]["host"]
    per_rank[s["labels"]["rank"]] = per_rank.get(s["labels"]["rank"], 0) + s["values"][0]
assert sorted(per_rank) == [0, 1, 2, 3], per_rank
for r, n in per_rank.items():
    d = json.load(urllib.request.urlopen("%s/v1/jobs/slow/stalls?rank=%d" % (sys.argv[1], r)))
    assert d["samples"] == n, (r, d["samples"], n)
print(per_rank)' "$HTTP" "$WORK/slow.pprof.json"
check "the straggler's flame graph leans on long_scoreboard" python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
def share(rank):
    tot = sum(s["values"][0] for s in p["samples"] if s["labels"]["rank"] == rank)
    ls = sum(s["values"][0] for s in p["samples"] if s["labels"]["rank"] == rank and s["stack"][-1] == "long_scoreboard")
    return ls / tot
assert share(3) > share(0) + 0.05, (share(3), share(0))' "$WORK/slow.pprof.json"
check "go tool pprof reads it: -top ranks the reasons, -tagfocus picks a rank" sh -c "
    go tool pprof -top '$WORK/slow.pb.gz' >'$WORK/top.out' 2>&1 &&
    grep -q 'Type: samples' '$WORK/top.out' && grep -q 'long_scoreboard' '$WORK/top.out' &&
    grep -q 'rankscope: job slow, PC-sampling stall reasons, 4 ranks' '$WORK/top.out' &&
    ! grep -qi 'error\\|warning\\|failed' '$WORK/top.out' &&
    go tool pprof -traces -tagfocus=rank=3 '$WORK/slow.pb.gz' >'$WORK/traces.out' 2>/dev/null &&
    grep -q '^ *rank 3$' '$WORK/traces.out' && ! grep -q '^ *rank 0$' '$WORK/traces.out'"
check "go tool pprof fetches the profile straight from the server URL" sh -c "
    go tool pprof -top '$HTTP/v1/jobs/slow/pprof?rank=3' 2>'$WORK/url.err' | grep -q 'long_scoreboard'"
check "... and keeps its copy in \$WORK (PPROF_TMPDIR), not in ~/pprof" sh -c "
    ls '$WORK'/pprof/*.pb.gz"
check "time profile from the store directory: launches per rank = the server's kernels + NCCL + copies" sh -c "
    '$BIN/rankscope' export nopc --format pprof --data '$WORK/data' --out '$WORK' 2>'$WORK/time.err' >/dev/null &&
    grep -q 'time profile: 4 ranks' '$WORK/time.err' &&
    python3 tests/integration/pprof_read.py '$WORK/nopc.pb.gz' >'$WORK/nopc.pprof.json' && python3 -c '
import json, sys, urllib.request
p = json.load(open(sys.argv[2]))
assert p[\"sample_types\"] == [[\"launches\", \"count\"], [\"gpu_time\", \"nanoseconds\"]] and p[\"default\"] == \"gpu_time\"
ranks = json.load(urllib.request.urlopen(sys.argv[1] + \"/v1/jobs/nopc/ranks\"))[\"ranks\"]
for r in ranks:
    got = sum(s[\"values\"][0] for s in p[\"samples\"] if s[\"labels\"][\"rank\"] == r[\"rank\"])
    assert got == r[\"kernels\"] + r[\"collectives\"] + r[\"memcpys\"], (r[\"rank\"], got, r)
    nccl = [s for s in p[\"samples\"] if s[\"labels\"][\"rank\"] == r[\"rank\"] and s[\"stack\"][1].startswith(\"NCCL \")]
    assert sum(s[\"values\"][0] for s in nccl) == r[\"collectives\"]
    assert all(len(s[\"stack\"]) == 2 for s in p[\"samples\"])
' '$HTTP' '$WORK/nopc.pprof.json' &&
    go tool pprof -top -sample_index=gpu_time '$WORK/nopc.pb.gz' 2>/dev/null | grep -q 'NCCL AllReduce'"
check "pprof-time of the sampled job equals the server's per-rank totals too; the same bytes either way" sh -c "
    '$BIN/rankscope' --server '$HTTP' export slow --format pprof-time --out '$WORK/a.pb.gz' >/dev/null &&
    '$BIN/rankscope' export slow --format pprof-time --data '$WORK/data' --out '$WORK/b.pb.gz' >/dev/null 2>&1 &&
    cmp '$WORK/a.pb.gz' '$WORK/b.pb.gz'"
check "stalls asked of a job without PC samples: 404 that says how, exit 3" sh -c "
    curl -s '$HTTP/v1/jobs/nopc/pprof/stalls' | grep -q 'turn PC sampling on' &&
    [ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/nopc/pprof/stalls') = 404 ] &&
    { '$BIN/rankscope' --server '$HTTP' export nopc --format pprof-stalls --out '$WORK/x.pb.gz' 2>'$WORK/e.err'; [ \$? = 3 ]; } &&
    grep -q 'turn PC sampling on' '$WORK/e.err' && [ ! -e '$WORK/x.pb.gz' ]"
check "unknown job, absent rank, bad parameters, unknown format" sh -c "
    [ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/absent/pprof') = 404 ] &&
    [ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/slow/pprof?rank=9') = 404 ] &&
    [ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/slow/pprof?limit=3') = 400 ] &&
    [ \$(curl -s -o /dev/null -w '%{http_code}' -X POST '$HTTP/v1/jobs/slow/pprof') = 405 ] &&
    { '$BIN/rankscope' --server '$HTTP' export absent --format pprof 2>/dev/null; [ \$? = 3 ]; } &&
    { '$BIN/rankscope' --server '$HTTP' export slow --format svg 2>/dev/null; [ \$? = 2 ]; }"
mkdir -p "$WORK/cwd"
check "without --out: JOB.pb.gz in the current directory, said so; never replaced unnamed (exit 2)" sh -c "
    cd '$WORK/cwd' && '$BIN/rankscope' --server '$HTTP' export slow --format pprof >'$WORK/d1.out' &&
    grep -q 'to slow.pb.gz in the current directory, $WORK/cwd' '$WORK/d1.out' && [ -s slow.pb.gz ] &&
    cp slow.pb.gz first.pb.gz && echo keep > slow.pb.gz &&
    { '$BIN/rankscope' --server '$HTTP' export slow --format pprof 2>'$WORK/d2.err'; [ \$? = 2 ]; } &&
    grep -q 'already exists' '$WORK/d2.err' && [ \"\$(cat slow.pb.gz)\" = keep ] &&
    '$BIN/rankscope' --server '$HTTP' export slow --format pprof --out slow.pb.gz >/dev/null &&
    cmp slow.pb.gz first.pb.gz"
finish
