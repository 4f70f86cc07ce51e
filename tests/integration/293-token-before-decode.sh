#!/usr/bin/env bash
# The server checks an agent's token before it decodes the agent's batch (issue 23): a peer
# without a valid ingest token sends a batch of megabytes, and the server answers "unauthorized"
# having decoded none of it (rankscope_batch_decoded_bytes_total does not move); a batch with a
# read token (the wrong role) is refused the same way; the same batch with an ingest token is
# decoded and stored. And a request whose top level is not protobuf is refused undecoded too.
. "$(dirname "$0")/common.sh"
: >"$WORK/tokens"
chmod 600 "$WORK/tokens"
new_token agent1 ingest
new_token reader read
start_server --token-file "$WORK/tokens"
decoded() { curl -sf "$HTTP/healthz" | python3 -c 'import json,sys; print(json.load(sys.stdin)["counters"]["batch_decoded_bytes"])'; }
decoded_is() { [ "$(decoded)" = "$1" ]; }
decoded_over() { [ "$(decoded)" -gt "$1" ]; }

"$TOOLS/rs-nng-send" "$LISTEN" --valid big 1 --kernels 400000 >"$WORK/none.out"
check "a 400,000-kernel batch without a token: unauthorized (status 5)" \
    grep -q '^status=5 seq=1 ' "$WORK/none.out"
"$TOOLS/rs-nng-send" "$LISTEN" --valid big 2 --kernels 400000 --token "rst_$(printf '%064d' 7)" \
    >"$WORK/wrong.out"
check "... with an unknown token: unauthorized" grep -q '^status=5 seq=2 ' "$WORK/wrong.out"
"$TOOLS/rs-nng-send" "$LISTEN" --valid big 3 --kernels 400000 --token "$(cat "$WORK/reader.token")" \
    >"$WORK/read.out"
check "... with a read token: unauthorized, naming the role" \
    grep -q '^status=5 seq=3 .*ingest' "$WORK/read.out"
check "none of them was decoded (batch_decoded_bytes 0)" decoded_is 0
check "the refusals are counted" health_is batches_unauthorized 3
printf '\x0b\x0c' >"$WORK/group"
"$TOOLS/rs-nng-send" "$LISTEN" --raw "$WORK/group" >"$WORK/group.out"
check "a request that is not protobuf at its top level: rejected (3)" grep -q '^status=3 ' "$WORK/group.out"
check "... undecoded" decoded_is 0
"$TOOLS/rs-nng-send" "$LISTEN" --valid big 4 --kernels 400000 --token "$(cat "$WORK/agent1.token")" \
    >"$WORK/ok.out"
check "the same batch with an ingest token: stored (status 1)" grep -q '^status=1 seq=4 ' "$WORK/ok.out"
check "... and decoded: megabytes counted" decoded_over 4000000
check "/metrics has the counter" sh -c "
    curl -sf -H \"Authorization: Bearer \$(cat '$WORK/reader.token')\" '$HTTP/metrics' |
    grep -q '^rankscope_batch_decoded_bytes_total [1-9]'"
finish
