#!/usr/bin/env bash
# The server closing agent connections while NNG reads a message from them (issue 23). NNG
# 1.5.2 starts each next read of a message from the last read's callback without checking that
# the pipe was closed meanwhile; a pipe closed in that window leaves a read that never completes,
# NNG's one reaper thread waits for it for good, and from then on no connection is ever freed
# (descriptors, memory, the per-peer counts: ingest stops). Hostile peers that trickle a message
# byte by byte (nng_pipe_race.py) keep a read completing on every connection, and the server
# closes them three ways: the idle sweep (agent-idle-timeout-s), eviction at
# agent-max-connections, and over tls+tcp://. After each attack every connection must be gone
# (agent_connections 0, descriptors back) and a real request answered. Before the server shut
# the sockets down instead of calling nng_pipe_close, the idle sweep's attack left the reaper
# stuck in 15 of 20 3-s runs (docs/BENCHMARKS.md "Closing agent connections mid-message").
# Last, a client stalled in its TLS handshake is closed after agent-handshake-timeout-s.
. "$(dirname "$0")/common.sh"
. scripts/tls-certs.sh
RACE=tests/integration/nng_pipe_race.py

counter() {
    curl -sf ${CURL_TLS:-} "$HTTP/healthz" |
        python3 -c "import json,sys; print(json.load(sys.stdin)['counters']['$1'])"
}
fds() { ls "/proc/$1/fd" | wc -l; }
# settled PID FDS0: within 10 s every agent connection is gone and the server holds no more
# descriptors than before the attack (a stuck reaper frees neither, ever)
settled() {
    local c f end=$((SECONDS + 10))
    while [ "$SECONDS" -le "$end" ]; do
        c=$(counter agent_connections); f=$(fds "$1")
        [ "$c" = 0 ] && [ "$f" -le "$2" ] && { echo "connections 0, descriptors $f (before $2)"; return 0; }
        sleep 0.2
    done
    echo "after 10 s: agent_connections $c, descriptors $f (before $2); NNG's reaper:"
    gdb -batch -p "$1" -ex "thread apply all bt 10" 2>/dev/null | grep -A10 'nng:reap' | head -12
    return 1
}
attacked() { python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(s); assert s['closed_by_server'] >= int(sys.argv[2])" "$@"; }
# answers JOB SEQ: a new batch (the store is the same across the parts) is acknowledged
answers() { timeout 10 "$TOOLS/rs-nng-send" "$LISTEN" --valid "$1" "$2" | grep "^status=1 seq=$2 "; }

# ---- the idle sweep: 50 tricklers for 8 s, closed after 1 s each -------------------------------
start_server --agent-idle-timeout-s 1 --agent-max-connections-per-peer 1000
FDS0=$(fds "$PID_server")
python3 "$RACE" trickle "${LISTEN##*:}" 50 8 "$WORK/idle.json"
check "idle sweep: the server closed the tricklers as they stalled" attacked "$WORK/idle.json" 100
check "idle sweep: ... counted" sh -c "[ $(counter agent_pipes_idle_closed) -ge 100 ]"
check "idle sweep: every connection is freed after the attack" settled "$PID_server" "$FDS0"
check "idle sweep: a real request is answered after it" answers idle-after 1
stop "$PID_server"

# ---- eviction: 40 tricklers at agent-max-connections 20, for 8 s -------------------------------
start_server --agent-max-connections 20 --agent-max-connections-per-peer 1000
FDS0=$(fds "$PID_server")
python3 "$RACE" trickle "${LISTEN##*:}" 40 8 "$WORK/evict.json"
check "eviction: the server made room by closing tricklers" attacked "$WORK/evict.json" 20
check "eviction: ... counted" sh -c "[ $(counter agent_pipes_evicted) -ge 20 ]"
check "eviction: every connection is freed after the attack" settled "$PID_server" "$FDS0"
check "eviction: a real request is answered after it" answers evict-after 2
stop "$PID_server"

# ---- tls+tcp://: tricklers inside TLS, and clients stalled in the handshake --------------------
C=$WORK/certs
mkdir -p "$C"
make_ca "$C" ca >/dev/null 2>&1 && make_cert "$C" ca srv >/dev/null 2>&1 ||
    { echo "$SUITE: cannot make certificates with openssl"; exit 1; }
start_server_at tls+tcp://127.0.0.1:0 --tls-cert "$C/srv.crt" --tls-key "$C/srv.key" \
    --agent-idle-timeout-s 1 --agent-handshake-timeout-s 2 --agent-max-connections-per-peer 1000
HTTP=https://${HTTP#http://}
CURL_TLS="--cacert $C/ca.crt"
FDS0=$(fds "$PID_server")
python3 "$RACE" trickle-tls "${LISTEN##*:}" 30 8 "$WORK/tls.json"
check "tls: the server closed the tricklers as they stalled" attacked "$WORK/tls.json" 60
check "tls: every connection is freed after the attack" settled "$PID_server" "$FDS0"
python3 tests/integration/tls_hostile.py stall "${LISTEN##*:}" 10 20 >"$WORK/stall.out"
check "tls: 10 clients stalled in the handshake are closed after 2 s (agent-handshake-timeout-s)" \
    sh -c "cat '$WORK/stall.out'; grep -Eq 'closed=10 of=10 last_s=([2-9]|1[0-5])\.' '$WORK/stall.out'"
check "tls: ... counted" sh -c "[ $(counter agent_handshakes_timed_out) -ge 10 ]"
check "tls: ... and logged" grep -q RS-INGEST-HANDSHAKE-TIMEOUT "$WORK/server.log"
finish
