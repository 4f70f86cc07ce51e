#!/usr/bin/env bash
# TLS and tokens together, end to end (issue 23's "done when"): a server with a token file, HTTPS
# on its REST port and tls+tcp:// for agents; an agent with the server's CA and an ingest token
# delivers a simulated job; the CLI reads it over HTTPS with a read token; `rankscope import`
# sends traces with an ingest token; what lacks the token, the role or the CA is refused.
. "$(dirname "$0")/common.sh"
. scripts/tls-certs.sh
C=$WORK/certs
mkdir -p "$C"
make_ca "$C" ca && make_cert "$C" ca server || { echo "$SUITE: cannot make certificates"; exit 1; }

: >"$WORK/tokens"
chmod 600 "$WORK/tokens"
for p in reader:read agent1:ingest importer:ingest; do
    name=${p%%:*} role=${p#*:}
    "$BIN/rankscope-server" --new-token "$name" --role "$role" >"$WORK/$name.new" || exit 1
    grep '^rst_' "$WORK/$name.new" >"$WORK/$name.token"
    chmod 600 "$WORK/$name.token"
    grep "^$name $role sha256:" "$WORK/$name.new" >>"$WORK/tokens"
done

start server "$BIN/rankscope-server" --data "$WORK/data" --http 127.0.0.1:0 \
    --listen tls+tcp://127.0.0.1:0 --tls-cert "$C/server.crt" --tls-key "$C/server.key" \
    --token-file "$WORK/tokens" --ready-file "$WORK/server.ready"
wait_file "$WORK/server.ready" || exit 1
PORT=$(field "$WORK/server.ready" http); PORT=${PORT##*:}
HTTPS=https://127.0.0.1:$PORT
LISTEN=$(field "$WORK/server.ready" listen)
cli() { "$BIN/rankscope" --server "$HTTPS" --ca-file "$C/ca.crt" "$@"; }

check "HTTPS without a token: 401" sh -c "
    [ \"\$(curl -s --cacert '$C/ca.crt' -o /dev/null -w '%{http_code}' '$HTTPS/v1/jobs')\" = 401 ]"

start agent "$BIN/rankscope-agent" --server "$LISTEN" --socket "$WORK/agent.sock" \
    --tls-ca "$C/ca.crt" --tls-server-name localhost --token-file "$WORK/agent1.token" \
    --reply-timeout-ms 1000 --ready-file "$WORK/agent.ready"
wait_file "$WORK/agent.ready" || exit 1
"$BIN/rankscope-sim" --job tls-job --ranks 4 --steps 20 --speed 0 --agent "$WORK/agent.sock" \
    --log-level warn >"$WORK/sim.json"

ranks_of() { cli --token-file "$WORK/reader.token" ranks "$1" --json 2>/dev/null |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin)["ranks"]))' 2>/dev/null; }
arrived() {
    local i
    for i in $(seq 100); do [ "$(ranks_of tls-job)" = 4 ] && return 0; sleep 0.2; done
    return 1
}
check "agent over tls+tcp:// with an ingest token: the job's 4 ranks stored" arrived
check "CLI over HTTPS with a read token (file) lists the job" sh -c "
    '$BIN/rankscope' --server '$HTTPS' --ca-file '$C/ca.crt' --token-file '$WORK/reader.token' jobs |
    grep -q tls-job"
check "CLI over HTTPS with the token from the environment" sh -c "
    RANKSCOPE_CLI_TOKEN=\$(cat '$WORK/reader.token') '$BIN/rankscope' --server '$HTTPS' \
        --ca-file '$C/ca.crt' jobs | grep -q tls-job"
check "CLI over HTTPS without a token: exit 5" sh -c "
    '$BIN/rankscope' --server '$HTTPS' --ca-file '$C/ca.crt' jobs 2>/dev/null; [ \$? = 5 ]"
check "rankscope import over HTTPS with an ingest token" sh -c "
    '$BIN/rankscope' --server '$HTTPS' --ca-file '$C/ca.crt' --token-file '$WORK/importer.token' \
        import tests/fixtures/kineto-h200x2/fixture_rank0slow_rank*.json.gz --json |
    python3 -c 'import json,sys; a=json.load(sys.stdin); assert a[\"batches_committed\"] == 2, a'"
check "rankscope import over HTTPS with a read token: refused (exit 5), nothing stored" sh -c "
    '$BIN/rankscope' --server '$HTTPS' --ca-file '$C/ca.crt' --token-file '$WORK/reader.token' \
        import --job refused-job tests/fixtures/kineto-h200x2/fixture_baseline_rank*.json.gz \
        >/dev/null 2>&1; rc=\$?; [ \$rc = 5 ] && [ -z \"\$(cli --token-file '$WORK/reader.token' jobs | grep refused-job)\" ]"
check "the audit log names the importer" grep -q "RS-AUDIT.*importer" "$WORK/server.log"
check "a token over HTTPS to a server whose certificate the CLI cannot check: not sent (exit 1)" sh -c "
    '$BIN/rankscope' --server '$HTTPS' --token-file '$WORK/reader.token' jobs 2>/dev/null; [ \$? = 1 ]"
finish
