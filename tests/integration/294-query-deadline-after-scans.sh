#!/usr/bin/env bash
# A REST query's deadline holds after its scans too (issue 23 §3): CPU work after the store's
# scans (a large answer's encoding, a pprof profile's) counts against query-timeout-ms, so a query
# that finishes its scans in time but its answer late is a 504, counted, not a 200 the client
# stopped waiting for. --fault-query-delay-ms (tests only) makes every query spend that long after
# its scans. The answers are encoded on the query's thread: /healthz still answers meanwhile.
. "$(dirname "$0")/common.sh"
start_server
start_agent
sim_job late 2 20
stop "$PID_server"
start_server --query-timeout-ms 300 --fault-query-delay-ms 500
code() { curl -s -o "$WORK/body" -w '%{http_code}' "$@"; }
for path in /v1/jobs /v1/jobs/late/ranks /v1/jobs/late/top /v1/jobs/late/pprof/time; do
    check "GET $path: 504 (scans in time, the answer late)" [ "$(code "$HTTP$path")" = 504 ]
done
check "the 504 says what to do" grep -q 'query-timeout-ms' "$WORK/body"
check "each counted as timed out" health_is queries_timed_out 4
# timed by curl from its connect to the answer (time_total), not from the process's start, which
# alone took up to 920 ms on a loaded machine (220-tls.sh)
check "/healthz answers meanwhile" sh -c "
    curl -s '$HTTP/v1/jobs/late/top' >/dev/null & sleep 0.05
    t=\$(curl -sf -m 2 -o /dev/null -w '%{time_total}' '$HTTP/healthz' | awk '{printf \"%d\", \$1 * 1000}'); wait
    echo \"\${t} ms\"; [ -n \"\$t\" ] && [ \$t -lt 250 ]"
stop "$PID_server"
start_server --query-timeout-ms 5000 --fault-query-delay-ms 500
check "with time left after the delay: 200" [ "$(code "$HTTP/v1/jobs/late/ranks")" = 200 ]
check "... the answer whole (JSON with the ranks)" python3 -c "
import json; r = json.load(open('$WORK/body'))['ranks']; assert len(r) == 2, r"
check "an ETag revalidation still answers 304" sh -c "
    etag=\$(curl -s -D - -o /dev/null '$HTTP/v1/jobs/late/ranks' | sed -n 's/^[Ee][Tt]ag: *//p' | tr -d '\r')
    [ -n \"\$etag\" ] && [ \"\$(curl -s -o /dev/null -w '%{http_code}' -H \"If-None-Match: \$etag\" '$HTTP/v1/jobs/late/ranks')\" = 304 ]"
finish
