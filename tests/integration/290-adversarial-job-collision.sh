#!/usr/bin/env bash
# Adversarial: two job names with the same 64-bit FNV-1a hash (issue 23 §2: a job's key was that
# hash, and one such job overwrote the other's ranks; deleting one wiped both). The pair was found
# by tests/tools/fnv-collide (1,005 s on one shared core, seed 1) and is checked here by an
# independent FNV-1a in Python before use. Through the real server: both jobs keep their own
# ranks and records, deleting one leaves the other whole, and the store checks consistent.
. "$(dirname "$0")/common.sh"
A=c7d90fed280757412
B=cfdabd6aa15112d86
check "the two names collide in FNV-1a 64 (an independent implementation)" python3 -c '
import sys
def fnv(s):
    h = 0xcbf29ce484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h
a, b = sys.argv[1], sys.argv[2]
assert a != b and fnv(a) == fnv(b), (hex(fnv(a)), hex(fnv(b)))
print(hex(fnv(a)))' "$A" "$B"
start_server
start_agent
"$BIN/rankscope-sim" --job "$A" --ranks 4 --steps 20 --speed 0 --seed 1 --agent "$WORK/agent.sock" \
    --log-level warn >"$WORK/a.json"
"$BIN/rankscope-sim" --job "$B" --ranks 2 --steps 30 --speed 0 --seed 2 --agent "$WORK/agent.sock" \
    --log-level warn >"$WORK/b.json"
wait_for_records "$A" "$WORK/a.json"
wait_for_records "$B" "$WORK/b.json"
check "job A holds exactly what was sent to it (4 ranks)" totals_match "$A" "$WORK/a.json"
check "job B holds exactly what was sent to it (2 ranks)" totals_match "$B" "$WORK/b.json"
check "both are listed, with their own rank counts" python3 -c '
import json, sys, urllib.request
jobs = {j["job"]: j for j in json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs"))["jobs"]}
assert jobs[sys.argv[2]]["ranks_seen"] == 4 and jobs[sys.argv[3]]["ranks_seen"] == 2, jobs' "$HTTP" "$A" "$B"
check "deleting A leaves B whole" sh -c "
    curl -sf -X DELETE '$HTTP/v1/jobs/$A' >/dev/null &&
    [ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/$A/ranks') = 404 ]"
check "... B still holds everything it was sent" totals_match "$B" "$WORK/b.json"
stop "$PID_server"
check "the store checks consistent (rankscope-server --check)" "$BIN/rankscope-server" --check --data "$WORK/data"
finish
