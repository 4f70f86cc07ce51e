#!/usr/bin/env bash
# Retention by space: over a disk budget, and with a full map, the server deletes the job that
# received data least recently, says so, and ingest goes on — the newer job's records all arrive
# (agents keep and resend what the full store refused).
. "$(dirname "$0")/common.sh"
sim() { "$BIN/rankscope-sim" --ranks 4 --steps 100 --speed 0 --agent "$WORK/agent.sock" --log-level warn "$@"; }
job_exists() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$HTTP/v1/jobs/$1/ranks")" = 200 ]; }
wait_gone() { for _ in $(seq 100); do job_exists "$1" || return 0; sleep 0.1; done; return 1; }

# 1. a disk budget of 2 MB; each job holds ~2 MB
start_server --disk-budget-gb 0.002
start_agent
sim --job old >"$WORK/old.json"
wait_for_records old "$WORK/old.json"
sim --job new >"$WORK/new.json"
wait_for_records new "$WORK/new.json"
check "over the budget, the older job is deleted" wait_gone old
check "the newer job is complete" totals_match new "$WORK/new.json"
check "the log says which job and why" grep -q "RS-RETENTION-SPACE deleted job old .*exceeded its budget" "$WORK/server.log"
check "counted in /healthz" health_is jobs_deleted_for_space 1
check "an audit line names the job deleted for space" \
    grep -qE 'RS-AUDIT who=server .* action=delete-for-space job=old entries=[1-9]' "$WORK/server.log"
stop_all

# 2. a 4 MB map and no budget: the second job takes the store past 90% of it (or fills it)
rm -rf "$WORK/data" "$WORK/spool"
start_server --map-size-gb 0.004 --evaluate-ms 0
start_agent
sim --job first >"$WORK/first.json"
wait_for_records first "$WORK/first.json"
sim --job second --seed 3 >"$WORK/second.json"
wait_for_records second "$WORK/second.json"
for _ in $(seq 100); do totals_match second "$WORK/second.json" >/dev/null && break; sleep 0.2; done
check "the older job made room" wait_gone first
check "every record of the newer job arrived (what a full store refused was resent)" totals_match second "$WORK/second.json"
check "the log says why" grep -qE "RS-RETENTION-SPACE deleted job first .*(map was full|90% of its map)" "$WORK/server.log"
check "the store is consistent" sh -c "'$BIN/rankscope-server' --check --data '$WORK/data' >/dev/null"
finish
