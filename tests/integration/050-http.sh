#!/usr/bin/env bash
# HTTP limits and errors: 404, 405, 400, 431, 413/400 on bodies, slowloris timeout, keep-alive.
. "$(dirname "$0")/common.sh"
start_server --http-request-timeout-ms 500 --http-idle-timeout-ms 2000 --http-max-body-bytes 1048576
check "GET /healthz is 200 JSON" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/healthz') = 200 ]"
check "unknown route is 404 JSON" sh -c "[ \$(curl -s -o '$WORK/b1' -w '%{http_code}' '$HTTP/nope') = 404 ] && grep -q '\"status\":404' '$WORK/b1'"
check "unknown job is 404" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/zzz/ranks') = 404 ]"
check "bad parameter is 400" sh -c "[ \$(curl -s -o '$WORK/b2' -w '%{http_code}' '$HTTP/v1/jobs?limit=x') = 400 ] && grep -q limit '$WORK/b2'"
check "unknown parameter is 400" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs?foo=1') = 400 ]"
check "invalid job name is 400" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/a%20b/ranks') = 400 ]"
check "POST /v1/import of bytes that are no AgentBatch is 400, GET is 405" sh -c "
[ \$(curl -s -o '$WORK/b3' -w '%{http_code}' -X POST --data-binary 'garbage' -H 'Content-Type: application/x-protobuf' '$HTTP/v1/import') = 400 ] &&
grep -q AgentBatch '$WORK/b3' && [ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/import') = 405 ]"
check "POST is 405" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' -X POST -d '{}' '$HTTP/v1/jobs') = 405 ]"
check "oversized header is 431" python3 "$(dirname "$0")/http_probe.py" "$HTTP_HOST" "$HTTP_PORT" bigheader
check "oversized body is 413" python3 "$(dirname "$0")/http_probe.py" "$HTTP_HOST" "$HTTP_PORT" bigbody
check "malformed request is 400" python3 "$(dirname "$0")/http_probe.py" "$HTTP_HOST" "$HTTP_PORT" garbage
check "slowloris request is cut off with 408" python3 "$(dirname "$0")/http_probe.py" "$HTTP_HOST" "$HTTP_PORT" slowloris
check "idle keep-alive connection is closed" python3 "$(dirname "$0")/http_probe.py" "$HTTP_HOST" "$HTTP_PORT" idle
check "two requests on one keep-alive connection" python3 "$(dirname "$0")/http_probe.py" "$HTTP_HOST" "$HTTP_PORT" keepalive
check "an escaped '/' in the path is 400, not a path separator" sh -c "
[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/a%2Fb/ranks') = 400 ]"
check "bytes that are not UTF-8 in the path or query are 400 (they were 500)" sh -c "
[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/%ff/ranks') = 400 ] &&
[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/x/top?rank=%c3%28') = 400 ]"
check "Expect: 100-continue is answered before the body, then the request" sh -c "
curl -sv -o '$WORK/b4' -w '%{http_code}' -X POST -H 'Expect: 100-continue' --expect100-timeout 5 \
    -H 'Content-Type: application/x-protobuf' --data-binary 'garbage' '$HTTP/v1/import' \
    2>'$WORK/b4.err' >'$WORK/b4.code' &&
grep -q '< HTTP/1.1 100 Continue' '$WORK/b4.err' && [ \$(cat '$WORK/b4.code') = 400 ]"
check "a body over the limit is refused on its Content-Length, no 100 Continue" sh -c "
head -c 20000000 /dev/zero > '$WORK/big.bin' &&
curl -sv -o /dev/null -w '%{http_code}' -X POST -H 'Expect: 100-continue' \
    --data-binary @'$WORK/big.bin' '$HTTP/v1/import' 2>'$WORK/b5.err' >'$WORK/b5.code';
[ \$(cat '$WORK/b5.code') = 413 ] && ! grep -q '100 Continue' '$WORK/b5.err'"
check "DNS rebinding: a Host that is not a loopback name is 403 on a loopback server" sh -c "
[ \$(curl -s -o '$WORK/h1' -w '%{http_code}' -H 'Host: evil.example' '$HTTP/v1/jobs') = 403 ] &&
grep -q 'is not this server' '$WORK/h1' &&
[ \$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: localhost:$HTTP_PORT' '$HTTP/v1/jobs') = 200 ] &&
for h in 127.0.0.1.evil.example 127.evil.example:1 '[::1]evil' '127.0.0.1:1@evil.example'; do
    [ \$(curl -s -o /dev/null -w '%{http_code}' -H \"Host: \$h\" '$HTTP/v1/jobs') = 403 ] ||
        { echo \"\$h was let in\"; exit 1; }
done"
check "CSRF: a text/plain POST /v1/import (what a form sends) is 415" sh -c "
[ \$(curl -s -o '$WORK/h2' -w '%{http_code}' -X POST -H 'Content-Type: text/plain' --data-binary 'x' \
    '$HTTP/v1/import') = 415 ] && grep -q 'application/x-protobuf' '$WORK/h2'"
check "CSRF: a DELETE with another Origin is 403; the same origin goes through (404: no such job)" sh -c "
[ \$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H 'Origin: http://evil.example' \
    '$HTTP/v1/jobs/nope') = 403 ] &&
[ \$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H 'Origin: $HTTP' '$HTTP/v1/jobs/nope') = 404 ]"
start fdsrv sh -c "ulimit -Sn 256; exec '$BIN/rankscope-server' --data '$WORK/fd-data' \
    --http 127.0.0.1:0 --listen tcp://127.0.0.1:0 --ready-file '$WORK/fd.ready'"
wait_file "$WORK/fd.ready"
check "the server raises its open-file limit to the hard one (a soft 256 let idle sockets win)" \
    sh -c "pid=\$(sed -n 's/^pid=//p' '$WORK/fd.ready'); [ -n \"\$pid\" ] &&
    awk '/Max open files/ { exit !(\$4 == \$5 && \$4 != 256) }' /proc/\$pid/limits &&
    grep -q 'file descriptors' '$WORK/fdsrv.log'"
check "timeouts are counted" sh -c "curl -s '$HTTP/healthz' | python3 -c 'import json,sys; assert json.load(sys.stdin)[\"counters\"][\"http_timeouts\"] >= 2'"
finish
