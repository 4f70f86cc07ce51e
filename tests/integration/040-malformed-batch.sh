#!/usr/bin/env bash
# A malformed batch is refused with REJECTED and a counter; the server keeps serving.
. "$(dirname "$0")/common.sh"
start_server
head -c 3000 /dev/urandom > "$WORK/garbage"
printf '\x08\x07\x11\x01\x00\x00\x00\x00\x00\x00\x00' > "$WORK/wrong-version"
check "garbage is rejected (status 3)" sh -c "'$TOOLS/rs-nng-send' '$LISTEN' --raw '$WORK/garbage' | grep -q '^status=3 '"
check "a wrong schema version is rejected" sh -c "'$TOOLS/rs-nng-send' '$LISTEN' --raw '$WORK/wrong-version' | grep -q 'status=3 .*version'"
check "the rejections are counted" health_is batches_rejected 2
check "a valid batch still commits (status 1)" sh -c "'$TOOLS/rs-nng-send' '$LISTEN' --valid ok 5 | grep -q '^status=1 seq=5'"
check "resending it is acknowledged as a duplicate (status 2)" sh -c "'$TOOLS/rs-nng-send' '$LISTEN' --valid ok 5 | grep -q '^status=2 seq=5'"
check "the job is visible" sh -c "curl -sf '$HTTP/v1/jobs' | grep -q '\"job\":\"ok\"'"
finish
