#!/usr/bin/env bash
# The storage crash test: a server ingesting continuously is killed with SIGKILL at random points,
# 20 times. After each kill the store passes `rankscope-server --check`, holds every acknowledged
# batch (at most the one batch in flight beyond them), and no batch only in part.
. "$(dirname "$0")/common.sh"
PORT=$(free_port)
PER=100  # kernels per batch
start_server_at "tcp://127.0.0.1:$PORT"
"$TOOLS/rs-load" "tcp://127.0.0.1:$PORT" 1000000 "$PER" "$WORK/acked" 2>"$WORK/load.log" &
LOAD=$!

RANDOM=7 # reproducible kill points
for i in $(seq 20); do
    sleep "0.$((RANDOM % 30 + 5))"
    kill -9 "$PID_server"; wait "$PID_server" 2>/dev/null
    check "kill $i: the store passes --check" "$BIN/rankscope-server" --check --data "$WORK/data"
    acked=$(wc -l <"$WORK/acked")
    read -r batches kernels < <(store_counts)
    check "kill $i: acknowledged $acked <= committed $batches <= $acked + 1, whole batches only" \
        test "$batches" -ge "$acked" -a "$batches" -le $((acked + 1)) -a "$kernels" = $((batches * PER))
    start_server_at "tcp://127.0.0.1:$PORT"
done
sleep 0.3
kill "$LOAD"; wait "$LOAD" 2>/dev/null
stop "$PID_server"
acked=$(wc -l <"$WORK/acked")
read -r batches kernels < <(store_counts)
check "after 20 kills: $acked acknowledged, $batches committed (> 100 expected), $kernels kernels" \
    test "$acked" -gt 100 -a "$batches" -ge "$acked" -a "$batches" -le $((acked + 1)) -a "$kernels" = $((batches * PER))
finish
