#!/usr/bin/env bash
# TLS: HTTPS on the REST port (right CA, wrong CA, plain HTTP, hostile handshakes), agents over
# tls+tcp:// (end to end; client certificates required), and reloading certificates on SIGHUP.
# Certificates are made here with the openssl command (scripts/tls-certs.sh).
. "$(dirname "$0")/common.sh"
. scripts/tls-certs.sh
C=$WORK/certs
mkdir -p "$C"
make_ca "$C" ca && make_ca "$C" other-ca &&
    make_cert "$C" ca srv-a && make_cert "$C" ca srv-b && make_cert "$C" ca agent1 &&
    make_cert "$C" other-ca rogue ||
    { echo "$SUITE: cannot make certificates with openssl"; exit 1; }
cp "$C/srv-a.crt" "$C/server.crt"
cp "$C/srv-a.key" "$C/server.key"
HOSTILE=tests/integration/tls_hostile.py

# start_tls_server NAME [options]: HTTPS with $C/server.{crt,key}, agents on tls+tcp://.
start_tls_server() {
    local name=$1; shift
    rm -f "$WORK/$name.ready"
    start "$name" "$BIN/rankscope-server" --data "$WORK/$name-data" --http 127.0.0.1:0 \
        --listen tls+tcp://127.0.0.1:0 --tls-cert "$C/server.crt" --tls-key "$C/server.key" \
        --http-request-timeout-ms 3000 --ready-file "$WORK/$name.ready" "$@"
    wait_file "$WORK/$name.ready" || exit 1
    PORT=$(field "$WORK/$name.ready" http); PORT=${PORT##*:}
    HTTPS=https://127.0.0.1:$PORT
    LISTEN=$(field "$WORK/$name.ready" listen)
    APORT=${LISTEN##*:}
}
# counter NAME: a counter of the last server started, over HTTPS.
counter() {
    curl -s --cacert "$C/ca.crt" "$HTTPS/healthz" |
        python3 -c "import json,sys; print(json.load(sys.stdin)['counters']['$1'])"
}
counter_is() { local v; v=$(counter "$1"); echo "$1=$v"; [ "$v" = "$2" ]; }
counter_ge() { local v; v=$(counter "$1"); echo "$1=$v"; [ "$v" -ge "$2" ]; }
# settled_rss_kb PID: the least RSS seen over 3 s. The server gives freed heap back to the system
# (malloc_trim) after each evaluation (--evaluate-ms, 2 s) and after a heavy query, so its RSS
# at one instant swings by ~4 MB of freed memory, and which side a sample lands on is timing:
# the low after a trim is what the server still holds.
settled_rss_kb() {
    local i
    for i in $(seq 30); do awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; sleep 0.1; done | sort -n | head -1
}
# fp_is PORT FINGERPRINT: the certificate a new TLS connection to PORT sees.
fp_is() { local f; f=$(peer_fingerprint "$1"); echo "sees $f, want $2"; [ "$f" = "$2" ]; }
nothing_stored() { local n; n=$(stored "$1"); echo "$1: $n kernels stored"; [ "$n" = 0 ]; }
# agent NAME [options]: an agent on $WORK/NAME.sock sending to $LISTEN.
agent() {
    local name=$1; shift
    rm -f "$WORK/$name.ready"
    start "$name" "$BIN/rankscope-agent" --server "$LISTEN" --socket "$WORK/$name.sock" \
        --ready-file "$WORK/$name.ready" --reply-timeout-ms 1000 --tls-server-name localhost "$@"
    wait_file "$WORK/$name.ready" || exit 1
}
# job NAME AGENT: a small simulated job through that agent; its summary in $WORK/NAME.json.
job() {
    "$BIN/rankscope-sim" --job "$1" --ranks 4 --steps 20 --speed 0 --agent "$WORK/$2.sock" \
        --log-level warn >"$WORK/$1.json"
}
# stored JOB: kernels the server holds for JOB (0 when it has none).
stored() {
    curl -s --cacert "$C/ca.crt" "$HTTPS/v1/jobs/$1/ranks" |
        python3 -c 'import json,sys; print(sum(r["kernels"] for r in json.load(sys.stdin).get("ranks", [])))' 2>/dev/null || echo 0
}
https_totals_match() { HTTP=$HTTPS CURL_CA_BUNDLE=$C/ca.crt totals_match "$@"; }

# ---- HTTPS -------------------------------------------------------------------------------------
start_tls_server s1
SERVER_PID=$PID_s1
# 20 clients stalled in their handshake with the agents' port: NNG 1.5.2 never times them out, the
# server closes them after agent-handshake-timeout-s (10 s; tests/integration/238); meanwhile they
# must not keep agents out
python3 "$HOSTILE" stall "$APORT" 20 120 >"$WORK/nng-stall.out" 2>&1 &
NNG_STALL=$!
check "HTTPS GET with the right CA" sh -c "curl -sf --cacert '$C/ca.crt' '$HTTPS/healthz' | grep -q '\"status\":\"ok\"'"
check "HTTPS GET with another CA fails the certificate check (curl 60)" \
    sh -c "curl -s --cacert '$C/other-ca.crt' '$HTTPS/healthz'; [ \$? = 60 ]"
sleep 1.1 # failures are logged once a second at most: let the wrong CA's line pass
FAILS=$(counter http_tls_failures)
check "the server offers no TLS 1.1 (the client allows it; the server counts a failed handshake)" \
    sh -c "! openssl s_client -connect 127.0.0.1:$PORT -tls1_1 -cipher 'DEFAULT@SECLEVEL=0' </dev/null >/dev/null 2>&1"
check "... the server refused it (counted, logged)" sh -c "
    [ \$(curl -s --cacert '$C/ca.crt' '$HTTPS/healthz' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"counters\"][\"http_tls_failures\"])') = $((FAILS + 1)) ] &&
    grep -q 'RS-HTTP-TLS TLS with 127.0.0.1 failed: handshake: .*not within min/max' '$WORK/s1.log'"
check "plain HTTP to the HTTPS port gets a plain 400 saying to use https" \
    sh -c "curl -s -w ' %{http_code}' 'http://127.0.0.1:$PORT/healthz' | grep -q 'serves HTTPS.* 400\$'"
check "plain HTTP counted and logged" sh -c "grep -q 'RS-HTTP-TLS plain HTTP from 127.0.0.1' '$WORK/s1.log'"
check "the server keeps serving HTTPS after it" counter_is http_tls_plaintext 1
check "rankscope --ca-file: https works" \
    "$BIN/rankscope" --server "$HTTPS" --ca-file "$C/ca.crt" jobs
head -c 2000000 /dev/urandom >"$WORK/2mb.bin"
check "a 2 MB POST over HTTPS: 100 Continue through TLS, then the server's answer" sh -c "
    curl -sv --cacert '$C/ca.crt' -H 'Content-Type: application/x-protobuf' --data-binary @'$WORK/2mb.bin' \
        '$HTTPS/v1/import' >'$WORK/2mb.out' 2>&1
    grep -q '< HTTP/1.1 100 Continue' '$WORK/2mb.out' && grep -q '< HTTP/1.1 400' '$WORK/2mb.out'"
head -c 17000000 /dev/zero >"$WORK/17mb.bin"
check "a body over the limit over HTTPS: 413, answered before the client finishes sending" sh -c "
    curl -s --cacert '$C/ca.crt' -H 'Content-Type: application/x-protobuf' --data-binary @'$WORK/17mb.bin' \
        -w ' %{http_code}' '$HTTPS/v1/import' | grep -q 'exceeds 16777216 bytes.* 413\$'"
check "rankscope import over HTTPS" sh -c "
    '$BIN/rankscope' --server '$HTTPS' --ca-file '$C/ca.crt' import tests/fixtures/kineto-h200x2/fixture_rank0slow_rank*.json.gz --json |
    python3 -c 'import json,sys; a=json.load(sys.stdin); assert a[\"batches_committed\"] == 2, a'"
check "RANKSCOPE_CLI_CA_FILE works the same" \
    env RANKSCOPE_CLI_CA_FILE="$C/ca.crt" "$BIN/rankscope" --server "$HTTPS" jobs
check "rankscope without the CA: exit 1 and says what to do" sh -c "
    '$BIN/rankscope' --server '$HTTPS' --ca-file '$C/other-ca.crt' jobs 2>'$WORK/cli.err'; rc=\$?
    cat '$WORK/cli.err'; [ \$rc = 1 ] && grep -q 'cannot trust rankscope-server.*--ca-file' '$WORK/cli.err'"
check "rankscope by the name in the certificate (https://localhost) works" \
    "$BIN/rankscope" --server "https://localhost:$PORT" --ca-file "$C/ca.crt" jobs
check "a wrong CA file for the CLI: refused with the file named in curl's words" sh -c "
    '$BIN/rankscope' --server '$HTTPS' --ca-file /nonexistent.pem jobs 2>&1 | grep -q 'cannot trust'"

# Hostile peers: garbage, and 100 clients that stop mid-handshake, while a client is served.
check "garbage handshakes: the server hangs up on each" sh -c "python3 '$HOSTILE' garbage $PORT 20 | tee /dev/stderr | grep -q 'closed=20 of=20'"
python3 "$HOSTILE" stall "$PORT" 100 8 >"$WORK/stall1.out" 2>&1 &
STALL=$!
sleep 0.3
# Timed by curl from its connect to the answer (time_total), not from its start, and against a
# request timeout of 3 s: on this 2-core machine at load 12 starting curl took up to 920 ms more
# than its time_total, and time_total itself reached 503 ms (20 tries) — the 500 ms bound on the
# wall time failed under load (532, 581 ms). A server that made the client wait for the stalled
# handshakes answers when they time out, 2.7 s after the client connected at the least.
check "with 100 handshakes stalled, an HTTPS client is served at once (well before their 3 s timeout)" \
    sh -c "t=\$(curl -sf --max-time 5 --cacert '$C/ca.crt' -o /dev/null -w '%{time_total}' '$HTTPS/healthz' | awk '{printf \"%d\", \$1 * 1000}'); echo \"\${t} ms\"; [ -n \"\$t\" ] && [ \$t -lt 1500 ]"
wait "$STALL"
check "stalled handshakes are closed after the request timeout (3 s)" \
    sh -c "cat '$WORK/stall1.out'; grep -Eq 'closed=100 of=100 last_s=(2\.9|[3-7]\.)' '$WORK/stall1.out'"
check "... counted as handshake timeouts" counter_ge http_tls_timeouts 100
RSS1=$(settled_rss_kb "$SERVER_PID")
python3 "$HOSTILE" stall "$PORT" 100 8 >"$WORK/stall2.out" 2>&1
python3 "$HOSTILE" garbage "$PORT" 50 >/dev/null 2>&1
RSS2=$(settled_rss_kb "$SERVER_PID")
check "a second wave of 100 stalled and 50 garbage connections: all closed" \
    grep -q 'closed=100 of=100' "$WORK/stall2.out"
if ldd "$BIN/rankscope-server" | grep -q libasan; then
    # ASan's quarantine keeps freed memory resident; its leak check at exit stands in
    echo "  note: RSS check skipped under ASan (RSS $RSS1 -> $RSS2 kB)" >&2
else
    check "... and left the server's memory where the first wave did (RSS $RSS1 -> $RSS2 kB)" \
        sh -c "[ '$RSS2' -le $((RSS1 + 2048)) ]"
fi
check "no connection left open" counter_is http_connections 1

# ---- agents over tls+tcp:// --------------------------------------------------------------------
REJECTED=$(counter batches_rejected) # the garbage POSTs above
agent a1 --tls-ca "$C/ca.crt"
job e2e a1
# up to 300 tries: under load (2 cores beside other suites) a batch once took over 13 s to show
for i in $(seq 300); do [ "$(stored e2e)" != 0 ] && https_totals_match e2e "$WORK/e2e.json" >/dev/null 2>&1 && break; sleep 0.1; done
check "an agent over tls+tcp:// delivers every record, acknowledged once" https_totals_match e2e "$WORK/e2e.json"
check "... none rejected" counter_is batches_rejected "$REJECTED"
wait "$NNG_STALL" 2>/dev/null
check "... and the 20 clients stalled in their handshake with the agents' port were closed" \
    sh -c "cat '$WORK/nng-stall.out'; grep -q 'closed=20 of=20' '$WORK/nng-stall.out'"
agent a2 --tls-ca "$C/other-ca.crt"
job wrongca a2
sleep 2
check "an agent that does not trust the server's CA sends nothing" nothing_stored wrongca
check "... and says why: the server's certificate is refused (its test connections tell)" \
    logged "$WORK/a2.log" "RS-AGENT-TLS .*the server's certificate is refused here"
stop "$PID_a2"
check "an agent with TLS settings and a tcp:// server is refused at start" sh -c "
    timeout 5 '$BIN/rankscope-agent' --server tcp://127.0.0.1:1 --tls-ca '$C/ca.crt' --socket '$WORK/x.sock' 2>&1 | grep -q 'need a tls+tcp:// --server'"
check "an agent given an IP address without --tls-server-name is refused at start, saying why" sh -c "
    timeout 5 '$BIN/rankscope-agent' --server '$LISTEN' --tls-ca '$C/ca.crt' --tls-server-name '' --socket '$WORK/z.sock' 2>&1 | grep -q 'DNS names only'"

# ---- reload on SIGHUP --------------------------------------------------------------------------
FP_A=$(fingerprint "$C/srv-a.crt")
FP_B=$(fingerprint "$C/srv-b.crt")
check "HTTPS shows certificate A before the reload" fp_is "$PORT" "$FP_A"
check "the agents' port shows certificate A" fp_is "$APORT" "$FP_A"
cp "$C/srv-b.crt" "$C/server.crt"
cp "$C/srv-b.key" "$C/server.key"
kill -HUP "$SERVER_PID"
for i in $(seq 50); do [ "$(grep -c 'RS-TLS-RELOAD.*reloaded' "$WORK/s1.log")" -ge 2 ] && break; sleep 0.1; done
check "SIGHUP with a new pair: new HTTPS connections get certificate B" fp_is "$PORT" "$FP_B"
check "... new agent connections too (NNG's already-started accept retired)" \
    fp_is "$APORT" "$FP_B"
check "... the same process" sh -c "grep -qx 'pid=$SERVER_PID' '$WORK/s1.ready' && kill -0 $SERVER_PID"
check "... logged with the new fingerprint" grep -q "RS-TLS-RELOAD HTTPS certificate .* reloaded, SHA-256 $FP_B" "$WORK/s1.log"
job after-reload a1
for i in $(seq 300); do https_totals_match after-reload "$WORK/after-reload.json" >/dev/null 2>&1 && break; sleep 0.1; done
check "the agent connected before the reload still delivers" https_totals_match after-reload "$WORK/after-reload.json"
cp "$C/srv-a.key" "$C/server.key" # a key that is not the certificate's
kill -HUP "$SERVER_PID"
for i in $(seq 50); do grep -q 'keeps its previous' "$WORK/s1.log" && break; sleep 0.1; done
check "SIGHUP with a mismatched pair: HTTPS keeps certificate B" fp_is "$PORT" "$FP_B"
check "... agents too" fp_is "$APORT" "$FP_B"
check "... and the log says why" grep -q "RS-TLS-RELOAD HTTPS keeps its previous certificate: key .* does not belong" "$WORK/s1.log"
echo garbage >"$C/server.crt"
kill -HUP "$SERVER_PID"
sleep 0.5
check "SIGHUP with a certificate that does not parse: still serving B" fp_is "$PORT" "$FP_B"
check "failed reloads counted" counter_is tls_reload_failures 4
stop "$PID_a1"
stop "$SERVER_PID"

# ---- client certificates -----------------------------------------------------------------------
cp "$C/srv-a.crt" "$C/server.crt"
cp "$C/srv-a.key" "$C/server.key"
start_tls_server s2 --agent-tls-ca "$C/ca.crt"
agent nocert --tls-ca "$C/ca.crt"
agent rogue --tls-ca "$C/ca.crt" --tls-cert "$C/rogue.crt" --tls-key "$C/rogue.key"
agent good --tls-ca "$C/ca.crt" --tls-cert "$C/agent1.crt" --tls-key "$C/agent1.key"
job by-nocert nocert
job by-rogue rogue
job by-good good
for i in $(seq 300); do https_totals_match by-good "$WORK/by-good.json" >/dev/null 2>&1 && break; sleep 0.1; done
check "client certificates required: an agent with one the CA signed delivers" https_totals_match by-good "$WORK/by-good.json"
check "... an agent without a certificate is refused" nothing_stored by-nocert
check "... an agent whose certificate another CA signed is refused" nothing_stored by-rogue
check "... the one without says the server wants a client certificate its CA signed" \
    logged "$WORK/nocert.log" "RS-AGENT-TLS .*it wants a client certificate signed by its --agent-tls-ca"
check "... and so does the one with another CA's" \
    logged "$WORK/rogue.log" "RS-AGENT-TLS .*it wants a client certificate signed by its --agent-tls-ca"
check "... the agent with a good one says nothing of the kind" sh -c "! grep -q RS-AGENT-TLS '$WORK/good.log'"
check "a key that is not the agent's certificate's is refused at start" sh -c "
    timeout 5 '$BIN/rankscope-agent' --server '$LISTEN' --tls-ca '$C/ca.crt' --tls-server-name localhost --tls-cert '$C/agent1.crt' --tls-key '$C/rogue.key' --socket '$WORK/y.sock' 2>&1 | grep -q 'does not belong'"
check "a server whose certificate lacks its key refuses to start (exit 2)" sh -c "
    timeout 5 '$BIN/rankscope-server' --data '$WORK/d3' --http 127.0.0.1:0 --tls-cert '$C/srv-a.crt' 2>&1 | grep -q 'needs its key'; \
    timeout 5 '$BIN/rankscope-server' --data '$WORK/d3' --http 127.0.0.1:0 --tls-cert '$C/srv-a.crt'; [ \$? = 2 ]"
check "tls+tcp:// without a certificate: refused at start" sh -c "
    timeout 5 '$BIN/rankscope-server' --data '$WORK/d3' --http 127.0.0.1:0 --listen tls+tcp://127.0.0.1:0 2>&1 | grep -q 'needs a certificate'"
finish
