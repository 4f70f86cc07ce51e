#!/usr/bin/env bash
# The hang history survives a restart and goes with its job (storage/hangs.c, server/hang_watch.c):
# a job hangs (rank 2 never arrives at an AllReduce, as in 240), the server is stopped while the
# hang is open and started again on the same store and port: the history still has the hang — the
# same one, raised at the same time, not raised a second time — and, once the job goes on, it is
# cleared; another restart keeps it cleared; --check counts it; deleting the job removes it.
. "$(dirname "$0")/common.sh"
PORT=$(free_port)
restart() {
    kill "$PID_server"
    wait "$PID_server" 2>/dev/null
    start_server_at "tcp://127.0.0.1:$PORT" --hang-check-ms 200
}
history() { curl -sf "$HTTP/v1/jobs/hung/hangs" | python3 -c '
import json, sys
print(json.dumps(json.load(sys.stdin)["history"]))'; }
# until_history PYTHON-CONDITION on h (the history list): within 30 s
until_history() {
    local i
    for i in $(seq 300); do
        history >"$WORK/history.json" 2>/dev/null &&
            python3 -c "import json, sys; h = json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" \
                "$WORK/history.json" && return 0
        sleep 0.1
    done
    echo "history: $(cat "$WORK/history.json")"
    return 1
}
start_server_at "tcp://127.0.0.1:$PORT" --hang-check-ms 200
start_agent_at "tcp://127.0.0.1:$PORT"
"$BIN/rankscope-sim" --job hung --ranks 4 --steps 40 --onset-step 20 --hang-rank 2 --hang-s 8 \
    --nccl-plugin --speed 0 --agent "$WORK/agent.sock" --log-level warn >"$WORK/hung.json" &
SIM=$!
check "the hang is raised: one open entry in the history" \
    until_history 'len(h) == 1 and h[0]["cleared_ns"] is None and h[0]["never_arrived"] == [2]'
cp "$WORK/history.json" "$WORK/before.json"
stored_check "hang history: 1 hangs" # the writer commits the raise (one task after the watch's check)
history >"$WORK/stored.json"
check "... stored while the hang is still open (the restart below comes during the hang)" python3 -c '
import json, sys; (h,) = json.load(open(sys.argv[1])); assert h["cleared_ns"] is None, h' "$WORK/stored.json"
restart
check "after a restart while it hangs: the same hang in the history (raised at the same time), not a second one" \
    python3 -c '
import json, subprocess, sys
(a,) = json.load(open(sys.argv[1]))
h = json.loads(subprocess.run(["curl", "-sf", sys.argv[2] + "/v1/jobs/hung/hangs"], capture_output=True, check=True).stdout)["history"]
assert len(h) == 1, h
for k in ("comm", "op", "seq", "since_ns", "raised_ns", "never_arrived", "waiting", "comm_size"):
    assert h[0][k] == a[k], (k, h[0][k], a[k])' "$WORK/before.json" "$HTTP"
wait "$SIM"
check "the job goes on: the hang is cleared, still one entry" \
    until_history 'len(h) == 1 and h[0]["cleared_ns"] is not None and h[0]["cleared_ns"] > h[0]["raised_ns"]'
cp "$WORK/history.json" "$WORK/cleared.json"
sleep 0.5
restart
sleep 1 # a few checks of the watch
check "another restart: the cleared hang is kept as it was" bash -c '
    diff <(python3 -c "import json,sys; print(json.load(open(sys.argv[1])))" "$1") \
         <(curl -sf "$2/v1/jobs/hung/hangs" | python3 -c "import json,sys; print(json.load(sys.stdin)[\"history\"])")' \
    _ "$WORK/cleared.json" "$HTTP"
check "--check: consistent, counting the hang" sh -c "
    '$BIN/rankscope-server' --check --data '$WORK/data' >'$WORK/check1.txt' &&
    grep -q '^check: hang history: 1 hangs$' '$WORK/check1.txt' && grep -q '^check: consistent$' '$WORK/check1.txt'"
"$BIN/rankscope" --server "$HTTP" delete hung >"$WORK/delete.out" 2>&1
restart
check "deleting the job removes its hang history (after a restart too), the store still consistent" sh -c "
    [ \"\$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/hung/hangs')\" = 404 ] &&
    '$BIN/rankscope-server' --check --data '$WORK/data' >'$WORK/check2.txt' &&
    ! grep -q 'hang history' '$WORK/check2.txt' && grep -q '^check: consistent$' '$WORK/check2.txt'"
finish
