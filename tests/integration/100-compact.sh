#!/usr/bin/env bash
# rankscope-server --compact-to: after deleting a job, the compacted copy is smaller, consistent,
# and serves the same remaining data; an existing store is never overwritten.
. "$(dirname "$0")/common.sh"
start_server
start_agent
sim_job big 8 100
sim_job small 2 10
curl -s -X DELETE "$HTTP/v1/jobs/big" >/dev/null
check "compacting while the server runs works" "$BIN/rankscope-server" --data "$WORK/data" --compact-to "$WORK/compact"
check "the compacted copy is its owner's only (0700 directory, 0600 data.mdb)" sh -c "[ \$(stat -c %a '$WORK/compact') = 700 ] && [ \$(stat -c %a '$WORK/compact/data.mdb') = 600 ]"
check "the copy is smaller" sh -c "[ \$(du -k '$WORK/compact/data.mdb' | cut -f1) -lt \$(du -k '$WORK/data/data.mdb' | cut -f1) ]"
check "the copy is consistent" "$BIN/rankscope-server" --check --data "$WORK/compact"
check "an existing store is never overwritten" sh -c "! '$BIN/rankscope-server' --data '$WORK/data' --compact-to '$WORK/compact'"
stop "$PID_server"
stop "$PID_agent"
rm -f "$WORK/server.ready"
start server "$BIN/rankscope-server" --data "$WORK/compact" --http 127.0.0.1:0 \
    --listen tcp://127.0.0.1:0 --ready-file "$WORK/server.ready"
wait_file "$WORK/server.ready"
HTTP=http://$(field "$WORK/server.ready" http)
check "the copy serves the remaining job" totals_match small "$WORK/small.json"
check "and not the deleted one" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/big/ranks') = 404 ]"
finish
