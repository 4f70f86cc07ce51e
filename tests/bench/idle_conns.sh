#!/usr/bin/env bash
# Idle connections (issue 23 §3): the server's resident memory with N idle keep-alive HTTP
# connections (each past one request), and its descriptors and service with many idle agent (NNG)
# connections, as the issue's "~20,000 idle NNG sockets": while they are held, an authenticated
# agent's batch is stored and authenticated REST answers. Prints one line per measurement.
# usage: tests/bench/idle_conns.sh http [N]      (default 10000)
#        tests/bench/idle_conns.sh nng [N]       (default 20000 idle agents; two client processes,
#                                                 all from 127.0.0.1: per-peer cap raised to N)
#        tests/bench/idle_conns.sh nng-silent [N] (the same, sockets that never send a header)
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
TOOLS=${BUILD:-build}/tests/tools
KIND=${1:-http}
N=${2:-$([ "$KIND" = http ] && echo 10000 || echo 20000)}
WORK=$(mktemp -d /tmp/rankscope-idle.XXXXXX)
trap 'set +e; touch "$WORK/stop"; stop_all; rm -rf "$WORK"' EXIT
ulimit -n "$(ulimit -Hn)"
"$BIN/rankscope-server" --new-token bench --role admin >"$WORK/t.new"
grep '^rst_' "$WORK/t.new" >"$WORK/bench.token"
grep '^bench admin sha256:' "$WORK/t.new" >"$WORK/tokens"
"$BIN/rankscope-server" --new-token agent --role ingest >"$WORK/a.new"
grep '^agent ingest sha256:' "$WORK/a.new" >>"$WORK/tokens"
chmod 600 "$WORK/tokens" "$WORK/bench.token"
TOKEN=$(cat "$WORK/bench.token")
if [ "$KIND" = http ]; then
    LIMITS="--http-max-connections $((N + 100)) --http-max-connections-per-peer $((N + 100)) --agent-max-connections 256 --http-idle-timeout-ms 600000"
else
    LIMITS="--agent-idle-timeout-s 600 --agent-max-connections-per-peer $N"
fi
start server "$BIN/rankscope-server" --data "$WORK/data" --http 127.0.0.1:0 \
    --listen tcp://127.0.0.1:0 --ready-file "$WORK/server.ready" --token-file "$WORK/tokens" \
    $LIMITS ${SERVER_ARGS:-}
wait_file "$WORK/server.ready"
HTTP=$(field "$WORK/server.ready" http)
LISTEN=$(field "$WORK/server.ready" listen)
rss() { awk '/^VmRSS/ {print $2}' "/proc/$PID_server/status"; }
fds() { ls "/proc/$PID_server/fd" | wc -l; }
curl -sf -H "Authorization: Bearer $TOKEN" "http://$HTTP/v1/jobs" >/dev/null
echo "# idle $KIND connections: $N ($(nproc) cores, commit $(git rev-parse --short HEAD), open-files limit $(ulimit -n))"
echo "before: server rss $(rss) KiB, $(fds) descriptors"
if [ "$KIND" = http ]; then
    python3 tests/bench/idle_conns.py http 127.0.0.1 "${HTTP##*:}" "$N" "$WORK/c1.json" "$WORK/stop" &
    PIDS+=($!)
    for _ in $(seq 600); do [ -s "$WORK/c1.json" ] && break; sleep 0.5; done
    sleep 1
    echo "clients: $(cat "$WORK/c1.json")"
else
    PORT=${LISTEN##*:}
    half=$((N / 2))
    python3 tests/bench/idle_conns.py "$KIND" 127.0.0.1 "$PORT" "$half" "$WORK/c1.json" "$WORK/stop" &
    PIDS+=($!)
    python3 tests/bench/idle_conns.py "$KIND" 127.0.0.1 "$PORT" "$((N - half))" "$WORK/c2.json" "$WORK/stop" &
    PIDS+=($!)
    for _ in $(seq 600); do [ -s "$WORK/c1.json" ] && [ -s "$WORK/c2.json" ] && break; sleep 0.5; done
    sleep 2
    echo "clients: $(cat "$WORK/c1.json") $(cat "$WORK/c2.json")"
fi
echo "held: server rss $(rss) KiB, $(fds) descriptors"
sleep 10
echo "held 10 s later: server rss $(rss) KiB, $(fds) descriptors"
t0=$(date +%s.%N)
code=$(curl -s -o /dev/null -w '%{http_code}' -m 10 -H "Authorization: Bearer $TOKEN" "http://$HTTP/v1/jobs")
t1=$(date +%s.%N)
echo "authenticated REST while held: HTTP $code in $(echo "$t1 - $t0" | bc) s"
AT=$(grep '^rst_' "$WORK/a.new")
echo "authenticated agent batch while held: $("$TOOLS/rs-nng-send" "$LISTEN" --valid idle 1 --token "$AT" 2>&1)"
curl -s "http://$HTTP/healthz" | python3 -c '
import json, sys
c = json.load(sys.stdin)["counters"]
print("server counters:", {k: c[k] for k in ("http_connections", "agent_connections", "http_accept_errors",
      "http_evicted", "agent_pipes_refused", "agent_pipes_evicted", "batches_committed")})'
grep -E 'RS-(HTTP|AGENT|NNG|INGEST)[A-Z-]*' "$WORK/server.log" | cut -c1-200 | sort -k3,3 -u | head -5 | sed 's/^/log: /'
