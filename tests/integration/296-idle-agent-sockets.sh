#!/usr/bin/env bash
# Idle agent connections cannot keep a working agent out (issue 23 §3, "~20,000 idle NNG
# sockets"): more idle sockets than agent-max-connections, each past NNG's handshake and silent,
# fill the bound; a new agent's connection then takes the place of the one idle longest (counted,
# logged) and its batch is stored, and REST keeps answering. The issue's scale (20,000 sockets):
# tests/bench/idle_conns.sh nng.
. "$(dirname "$0")/common.sh"
start_server --agent-max-connections 40 --agent-max-connections-per-peer 100
python3 tests/bench/idle_conns.py nng 127.0.0.1 "${LISTEN##*:}" 60 "$WORK/c.json" "$WORK/stop" &
CLIENT=$!
for _ in $(seq 100); do [ -s "$WORK/c.json" ] && break; sleep 0.1; done
sleep 2.5 # past the 2 s an idle connection keeps its place
check "the idle sockets fill the bound (40 held, 20 refused)" sh -c "
    curl -sf '$HTTP/healthz' | python3 -c 'import json,sys; c=json.load(sys.stdin)[\"counters\"]; print(c[\"agent_connections\"], c[\"agent_pipes_refused\"]); assert c[\"agent_connections\"] == 40 and c[\"agent_pipes_refused\"] == 20'"
check "a new agent's batch is stored (status 1)" sh -c "
    timeout 10 '$TOOLS/rs-nng-send' '$LISTEN' --valid fresh 1 | grep -q '^status=1 seq=1 '"
check "an idle connection made room: counted" sh -c "
    curl -sf '$HTTP/healthz' | python3 -c 'import json,sys; c=json.load(sys.stdin)[\"counters\"]; assert c[\"agent_pipes_evicted\"] >= 1, c'"
check "... and logged" grep -q 'RS-INGEST-PIPE-EVICTED' "$WORK/server.log"
check "REST answers meanwhile" curl -sf -m 2 "$HTTP/v1/jobs/fresh/ranks"
start_agent
sim_job busy 2 10
check "a real agent with a simulated job gets through too: every record stored" \
    totals_match busy "$WORK/busy.json"
touch "$WORK/stop"
wait "$CLIENT"
finish
