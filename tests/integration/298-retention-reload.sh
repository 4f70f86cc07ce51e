#!/usr/bin/env bash
# Retention settings reload on SIGHUP (issue 23): the server reads its configuration again (the
# config file here) and applies what changed of retention-s, raw-retention-s, rollup-window-s and
# disk-budget-gb from the next maintenance sweep, with an RS-AUDIT line saying old -> new; a
# reload that changes nothing says so; a configuration that no longer parses changes nothing and
# the server keeps serving. Before: retention changed only with a restart.
. "$(dirname "$0")/common.sh"
printf 'retention-s = 3600\nmaintenance-s = 1\n' >"$WORK/server.conf"
start_server --config "$WORK/server.conf"
start_agent
sim_job old 2 10
sleep 3
check "with retention-s 3600 the job stays (3 s without data, sweeps every second)" \
    sh -c "curl -sf '$HTTP/v1/jobs/old/ranks' >/dev/null"
printf 'retention-s = 2\nmaintenance-s = 1\ndisk-budget-gb = 5\n' >"$WORK/server.conf"
kill -HUP "$PID_server"
for _ in $(seq 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$HTTP/v1/jobs/old/ranks")" = 404 ] && break
    sleep 0.1
done
check "after SIGHUP with retention-s 2 in the file: the job is expired" \
    sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/old/ranks') = 404 ]"
check "... an audit line names what changed, old -> new" grep -q \
    'RS-AUDIT who=server role=none from=local action=retention-reload retention_s=3600->2 disk_budget_gb=0->5$' \
    "$WORK/server.log"
check "... and the sweep's own audit line uses the new setting" grep -qE \
    'action=expire jobs=[1-9][0-9]* entries=[1-9][0-9]* retention_s=2' "$WORK/server.log"
kill -HUP "$PID_server"
sleep 0.5
check "SIGHUP with nothing changed: audited as unchanged" grep -q \
    'action=retention-reload unchanged retention_s=2' "$WORK/server.log"
printf 'retention-s = 2\nno-such-setting = 1\n' >"$WORK/server.conf"
kill -HUP "$PID_server"
sleep 0.5
check "a configuration that no longer parses: logged, nothing changed, still serving" sh -c "
    grep -q 'RS-RETENTION-RELOAD.*could not be read again.*no-such-setting' '$WORK/server.log' &&
    [ \$(grep -c 'action=retention-reload' '$WORK/server.log') = 2 ] &&
    curl -sf '$HTTP/healthz' >/dev/null"
stop "$PID_server"
check "the store is consistent" "$BIN/rankscope-server" --check --data "$WORK/data"
finish
