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
# /healthz asked while a query spends its 500 ms in the server (sent first, its answer read
# after), and timed from its own request, not from a process's start (curl's alone took up to
# 920 ms on a loaded machine, 220-tls.sh)
check "/healthz answers meanwhile (200 within 250 ms)" python3 -c '
import http.client, sys, time
from urllib.parse import urlparse
u = urlparse(sys.argv[1])
slow = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
slow.request("GET", "/v1/jobs/late/top")
time.sleep(0.05)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=2)
t0 = time.monotonic()
c.request("GET", "/healthz")
r = c.getresponse(); r.read()
ms = (time.monotonic() - t0) * 1000
s = slow.getresponse(); s.read()
print("healthz %d in %.0f ms; the slow query %d" % (r.status, ms, s.status))
assert r.status == 200 and ms < 250 and s.status == 504' "$HTTP"
stop "$PID_server"
start_server --query-timeout-ms 5000 --fault-query-delay-ms 500
check "with time left after the delay: 200" [ "$(code "$HTTP/v1/jobs/late/ranks")" = 200 ]
check "... the answer whole (JSON with the ranks)" python3 -c "
import json; r = json.load(open('$WORK/body'))['ranks']; assert len(r) == 2, r"
check "an ETag revalidation still answers 304" sh -c "
    etag=\$(curl -s -D - -o /dev/null '$HTTP/v1/jobs/late/ranks' | sed -n 's/^[Ee][Tt]ag: *//p' | tr -d '\r')
    [ -n \"\$etag\" ] && [ \"\$(curl -s -o /dev/null -w '%{http_code}' -H \"If-None-Match: \$etag\" '$HTTP/v1/jobs/late/ranks')\" = 304 ]"
finish
