#!/usr/bin/env bash
# Adversarial: what hostile or broken peers do to the server's ports (issue 23 §3), attacks
# written from the outside (adversary.py), each judged by what a legitimate client still gets:
# a crowd of slow HTTP clients from one address and from many; a request trickled byte by byte;
# request bodies that hog memory; a descriptor flood past the open-files limit; idle NNG
# connections from one address; an NNG message that stalls half-sent.
. "$(dirname "$0")/common.sh"
adv() { python3 tests/integration/adversary.py "$1" "$HTTP_HOST" "$HTTP_PORT" "${@:2}"; }
j() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d); assert $2, d" "$1"; }
counter() { curl -s "$HTTP/healthz" | python3 -c "import json,sys; print(json.load(sys.stdin)['counters']['$1'])"; }

start_server --http-max-connections=1024 --http-max-connections-per-peer=256 \
    --http-request-timeout-ms=20000 --http-max-body-total-mb=2
out=$(adv slow-crowd 1100 1 4)
check "1,100 slow clients from one address: 256 held, the rest 429; every other client's request answered" \
    j "$out" 'd["legit_failed"] == 0 and d["legit_ok"] >= 5 and d["crowd"].get("429", 0) >= 1100 - 256'
check "... counted (http_refused_peer)" sh -c "[ \$(curl -s '$HTTP/healthz' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"counters\"][\"http_refused_peer\"])') -ge 844 ]"
out=$(adv slow-crowd 1100 25 4)
check "1,100 slow clients from 25 addresses (under the per-peer cap, over the total): every other client's request answered, the oldest slow ones closed" \
    j "$out" 'd["legit_failed"] == 0 and d["legit_ok"] >= 5'
check "... counted (http_evicted)" sh -c "[ \$(curl -s '$HTTP/healthz' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"counters\"][\"http_evicted\"])') -ge 1 ]"
out=$(adv body-hog 4 900000)
check "request bodies past --http-max-body-total-mb (2 MiB): the third and fourth 503, /healthz still 200" \
    j "$out" 'd["answers"].get("503", 0) >= 2 and d["healthz"] == 200'
stop "$PID_server"

# Connections refused as they arrive (429) wait for their answer like any other; under load a
# crowd's 844 of them once kept the count over --http-max-connections, and every client meanwhile
# was refused 503 after pushing out a slow one. The server is stopped while the burst queues, so
# that it takes all of it in one turn of its loop: 2 slow connections, 10 refused, then a client.
start_server --http-max-connections=4 --http-max-connections-per-peer=2 --http-request-timeout-ms=20000
out=$(adv refused-burst "$PID_server" 2 10)
check "a burst of connections refused per address does not count toward --http-max-connections (4): the client behind it is answered 200, the slow ones kept" \
    j "$out" 'd["client"] == "200" and d["crowd"].get("429", 0) == 10 and d["crowd"].get("open", 0) == 2'
check "... none evicted for it (http_evicted 0)" sh -c "[ \$(curl -s '$HTTP/healthz' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"counters\"][\"http_evicted\"])') = 0 ]"
stop "$PID_server"

start_server --http-request-timeout-ms=1000
out=$(adv trickle-timeout)
check "a request trickled byte by byte (slowloris): 408 with a JSON error after the request timeout" \
    j "$out" 'd["status"] == 408 and 0.8 < d["after_s"] < 5 and "request not received" in d["body"]'
stop "$PID_server"

# Out of descriptors: the server under a 64-file limit (soft and hard: it cannot raise it).
rm -f "$WORK/server.ready"
start server bash -c "ulimit -n 64 && exec '$BIN/rankscope-server' --data '$WORK/data' --http 127.0.0.1:0 --listen tcp://127.0.0.1:0 --ready-file '$WORK/server.ready'"
wait_file "$WORK/server.ready" || exit 1
HTTP=http://$(field "$WORK/server.ready" http); HTTP_PORT=${HTTP##*:}
out=$(adv fd-flood 150)
check "150 connections against a 64-file limit: the server keeps running, answers /healthz once they close" \
    j "$out" 'd["healthz_after"] == 200'
check "... counts the failed accepts and logs them (RS-HTTP-ACCEPT)" sh -c "
    [ \$(curl -s '$HTTP/healthz' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"counters\"][\"http_accept_errors\"])') -ge 1 ] &&
    grep -q RS-HTTP-ACCEPT '$WORK/server.log'"
stop "$PID_server"

start_server --agent-max-connections-per-peer=20 --agent-idle-timeout-s=2
NNG_PORT=${LISTEN##*:}
start_agent
nadv() { python3 tests/integration/adversary.py "$1" 127.0.0.1 "$NNG_PORT" "${@:2}"; }
out=$(nadv nng-idle 100 127.0.0.2)
check "100 NNG connections from one address over --agent-max-connections-per-peer (20): 80 closed at once" \
    j "$out" 'd["handshaken"] + d["handshake_failed"] == 100 and d["closed_by_server"] >= 80'
check "... counted (agent_pipes_refused), and a real agent on another address still ingests" sh -c "
    [ \$(curl -s '$HTTP/healthz' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"counters\"][\"agent_pipes_refused\"])') -ge 80 ]"
sim_job after 2 5
check "... (the job it sends is stored whole)" totals_match after "$WORK/after.json"
out=$(nadv nng-stall 16000000 10)
check "an NNG message stalled after 1 KiB of 16 MB: its connection closed after --agent-idle-timeout-s (2 s)" \
    j "$out" 'd["closed_after_s"] is not None and 1.5 < d["closed_after_s"] < 9'
check "... counted (agent_pipes_idle_closed)" sh -c "
    [ \$(curl -s '$HTTP/healthz' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"counters\"][\"agent_pipes_idle_closed\"])') -ge 1 ]"
finish
