#!/usr/bin/env bash
# The storage power-loss test: a server ingesting continuously is killed with SIGKILL while a
# preloaded shim (tests/tools/powerloss.so) keeps the old bytes of every write to data.mdb that no
# fsync/fdatasync has made durable yet; undoing those writes leaves the file as a power cut at that
# moment would (what the page cache held is gone). 8 cuts in each durability mode: after each, the
# store passes --check and holds whole batches only; with --sync-metadata it holds every
# acknowledged batch, with the default (MDB_NOMETASYNC) at most the last transaction's are lost
# (one batch here: the loader sends one at a time), as docs/storage.md says.
. "$(dirname "$0")/common.sh"
PER=100 # kernels per batch
if nm "$BIN/rankscope-server" 2>/dev/null | grep -q __asan_init; then
    echo "$SUITE: skipped under sanitizers (the shim cannot be preloaded before their runtime)"
    echo "$SUITE: 0 passed, 0 failed"
    exit 0
fi

# Undoes the logged writes, newest first; a record cut short by the kill announced a write that
# had not started.
power_cut() {
    python3 - "$WORK/undo.log" "$WORK/data/data.mdb" <<'PY'
import os, struct, sys
log = open(sys.argv[1], "rb").read() if os.path.exists(sys.argv[1]) else b""
recs, i = [], 0
while i + 24 <= len(log):
    off, length, old = struct.unpack_from("<QQQ", log, i)
    if i + 24 + old > len(log):
        break
    recs.append((off, length, log[i + 24:i + 24 + old]))
    i += 24 + old
with open(sys.argv[2], "r+b") as f:
    for off, length, old in reversed(recs):
        f.seek(off)
        f.write(old)
        if len(old) < length:  # that write had grown the file
            f.truncate(off + len(old))
print(f"undid {len(recs)} unsynced writes")
PY
    rm -f "$WORK/undo.log"
}

serve() { # [--sync-metadata]
    rm -f "$WORK/server.ready"
    start server env LD_PRELOAD="$TOOLS/powerloss.so" RS_POWERLOSS_LOG="$WORK/undo.log" \
        "$BIN/rankscope-server" --data "$WORK/data" --http 127.0.0.1:0 --listen "tcp://127.0.0.1:$PORT" \
        --ready-file "$WORK/server.ready" "$@"
    wait_file "$WORK/server.ready" || exit 1
}

RANDOM=11 # reproducible cut points
for mode in sync-metadata default; do
    rm -rf "$WORK/data" "$WORK/acked" "$WORK/undo.log"
    flag=$([ "$mode" = sync-metadata ] && echo --sync-metadata)
    PORT=$(free_port)
    serve $flag
    "$TOOLS/rs-load" "tcp://127.0.0.1:$PORT" 1000000 "$PER" "$WORK/acked" 2>"$WORK/load.log" &
    LOAD=$!
    lost_before=0
    for i in $(seq 8); do
        sleep "0.$((RANDOM % 30 + 10))"
        kill -9 "$PID_server"; wait "$PID_server" 2>/dev/null
        acked=$(wc -l <"$WORK/acked") # before the cut: all of these were acknowledged
        power_cut >>"$WORK/cuts.log"
        check "$mode, cut $i: the store passes --check" "$BIN/rankscope-server" --check --data "$WORK/data"
        read -r batches kernels < <(store_counts)
        # acknowledged batches an agent has dropped are not resent: losses add up over the cuts
        lost=$((acked > batches ? acked - batches : 0))
        echo "$mode cut $i: acknowledged $acked, committed $batches, lost $((lost - lost_before))" >>"$WORK/cuts.log"
        if [ "$mode" = sync-metadata ]; then
            check "$mode, cut $i: every acknowledged batch survives ($acked acknowledged, $batches committed)" \
                test "$lost" = 0 -a "$kernels" = $((batches * PER))
        else
            check "$mode, cut $i: at most the last transaction is lost ($acked acknowledged, $batches committed)" \
                test $((lost - lost_before)) -le 1 -a "$kernels" = $((batches * PER))
        fi
        lost_before=$lost
        serve $flag
    done
    kill "$LOAD"; wait "$LOAD" 2>/dev/null
    stop "$PID_server"
    read -r batches kernels < <(store_counts)
    echo "$mode: $lost_before acknowledged batches lost in 8 cuts, $batches committed" >>"$WORK/cuts.log"
    check "$mode: the loader went on after the cuts ($batches batches committed)" test "$batches" -gt 50
done
cat "$WORK/cuts.log" | grep -v '^undid' | tail -20 >&2
finish
