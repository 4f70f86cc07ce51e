#!/usr/bin/env bash
# Retention: a job with no new data for --retention-s is deleted by the server's maintenance
# sweep; a job still receiving data stays; the store stays consistent.
. "$(dirname "$0")/common.sh"
start_server --retention-s 2 --maintenance-s 1
start_agent
"$BIN/rankscope-sim" --job old --ranks 2 --steps 10 --speed 0 --agent "$WORK/agent.sock" \
    --log-level warn >"$WORK/old.json"
wait_for_records old "$WORK/old.json"
check "the job is there at first" sh -c "curl -sf '$HTTP/v1/jobs/old/ranks' >/dev/null"
# a live job: keeps sending for ~5 s in real time
"$BIN/rankscope-sim" --job live --ranks 2 --duration-s 5 --agent "$WORK/agent.sock" \
    --log-level warn >"$WORK/live.json" &
SIM=$!
for _ in $(seq 60); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$HTTP/v1/jobs/old/ranks")" = 404 ] && break
    sleep 0.1
done
check "the old job is deleted after 2 s without data" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/old/ranks') = 404 ]"
check "the live job stays" sh -c "curl -sf '$HTTP/v1/jobs/live/ranks' >/dev/null"
check "retention leaves an audit line, and each start one with the settings in force" sh -c "
    grep -qE 'RS-AUDIT who=server role=none from=local action=expire jobs=[1-9][0-9]* entries=[1-9][0-9]* retention_s=2' '$WORK/server.log' &&
    grep -q 'RS-AUDIT who=server role=none from=local action=retention-settings retention_s=2 ' '$WORK/server.log'"
check "expired jobs are counted" sh -c "curl -s '$HTTP/healthz' | python3 -c 'import json,sys; assert json.load(sys.stdin)[\"counters\"][\"jobs_expired\"] >= 1'"
wait "$SIM"
stop "$PID_server"
check "the store is consistent" "$BIN/rankscope-server" --check --data "$WORK/data"
finish
