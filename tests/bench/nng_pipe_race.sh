#!/usr/bin/env bash
# How often peers trickling a message make the server's closing of agent connections leave NNG's
# reaper stuck (issue 23; docs/BENCHMARKS.md "Closing agent connections mid-message").
#   tests/bench/nng_pipe_race.sh MODE TRIES [CONNS SECONDS]
#   MODE: idle  (agent-idle-timeout-s 1; default 50 tricklers for 3 s)
#         evict (agent-max-connections 20, idle timeout 300 s; default 40 for 5 s)
#         tls   (as idle, over tls+tcp://, trickle-tls; default 30 for 5 s)
# Each try: a fresh server (BIN: the folder of the rankscope-server to measure, default build/bin),
# the attack (tests/integration/nng_pipe_race.py), then up to WAIT (5) s for agent_connections
# to reach 0 — a stuck reaper never frees a connection. Prints one line per try and "N of M stuck".
set -u
cd "$(dirname "$0")/../.."
MODE=$1 TRIES=$2
BIN=${BIN:-build/bin}
W=$(mktemp -d /tmp/rankscope-race.XXXXXX)
trap 'rm -rf "$W"' EXIT
URL=tcp://127.0.0.1:0 ATTACK=trickle SCHEME=http OPTS=(--agent-idle-timeout-s 1)
case $MODE in
idle) CONNS=${3:-50} SECS=${4:-3} ;;
evict) CONNS=${3:-40} SECS=${4:-5} OPTS=(--agent-max-connections 20 --agent-idle-timeout-s 300) ;;
tls)
    CONNS=${3:-30} SECS=${4:-5} URL=tls+tcp://127.0.0.1:0 ATTACK=trickle-tls SCHEME=https
    (. scripts/tls-certs.sh && make_ca "$W" ca && make_cert "$W" ca srv) >/dev/null 2>&1 ||
        { echo "cannot make certificates"; exit 1; }
    OPTS+=(--tls-cert "$W/srv.crt" --tls-key "$W/srv.key") ;;
*) echo "MODE: idle, evict or tls"; exit 2 ;;
esac
counters() {
    curl -skf "$SCHEME://$1/healthz" | python3 -c 'import json,sys; c=json.load(sys.stdin)["counters"]
print(c["agent_connections"], c["agent_pipes_idle_closed"], c["agent_pipes_evicted"])'
}
stuck=0
for i in $(seq "$TRIES"); do
    rm -rf "$W/data" "$W/ready"
    "$BIN/rankscope-server" --data "$W/data" --http 127.0.0.1:0 --listen "$URL" \
        --ready-file "$W/ready" --agent-max-connections-per-peer 100000 "${OPTS[@]}" >"$W/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do [ -s "$W/ready" ] && break; sleep 0.1; done
    http=$(sed -n 's/^http=//p' "$W/ready"); listen=$(sed -n 's/^listen=//p' "$W/ready")
    python3 tests/integration/nng_pipe_race.py "$ATTACK" "${listen##*:}" "$CONNS" "$SECS" "$W/out.json"
    end=$((SECONDS + ${WAIT:-5})) ok=0
    while [ "$SECONDS" -le "$end" ]; do
        read -r conns idle evicted < <(counters "$http")
        [ "$conns" = 0 ] && { ok=1; break; }
        sleep 0.2
    done
    fds=$(ls "/proc/$pid/fd" | wc -l)
    [ $ok = 1 ] && verdict=ok || { verdict=STUCK; stuck=$((stuck + 1)); }
    echo "$i: $verdict connections=$conns descriptors=$fds idle_closed=$idle evicted=$evicted attack=$(cat "$W/out.json")"
    kill -9 "$pid"; wait "$pid" 2>/dev/null
done
echo "$stuck of $TRIES stuck"
