#!/usr/bin/env bash
# The agent's socket as an attacker on the node would try it: a squatter already listening on the
# path is detected (the agent does not take over its path, nor start blind); files that are not
# sockets are refused; a directory others may write without the sticky bit is refused; the socket
# is 0666 whatever the umask; --allow-uids turns away other users' collectors and counts what they
# had sent (nothing vanishes uncounted).
. "$(dirname "$0")/common.sh"
AGENT=("$BIN/rankscope-agent" --server tcp://127.0.0.1:1 --log-level warn)

python3 - "$WORK/squat.sock" "$WORK/squat.ready" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1]); s.listen(8)
open(sys.argv[2], "w").write("up\n")
time.sleep(30)
PY
SQUATTER=$!
wait_file "$WORK/squat.ready"
timeout 10 "${AGENT[@]}" --socket "$WORK/squat.sock" 2>"$WORK/squat.err"
rc=$?
kill $SQUATTER 2>/dev/null; wait $SQUATTER 2>/dev/null
check "a path another process listens on is refused (exit 1, said), the squatter's file kept" sh -c "
    [ $rc = 1 ] && grep -q 'another process listens there' '$WORK/squat.err' && [ -S '$WORK/squat.sock' ]"

start agent "$BIN/rankscope-agent" --server tcp://127.0.0.1:1 --socket "$WORK/squat.sock" \
    --ready-file "$WORK/a1.ready" # now stale: taken over
check "a stale socket file (nobody listening) is replaced" wait_file "$WORK/a1.ready" 5
stop "$PID_agent"

touch "$WORK/plain"
timeout 10 "${AGENT[@]}" --socket "$WORK/plain" 2>"$WORK/plain.err"
rc=$?
check "a file that is not a socket is refused" sh -c "
    [ $rc = 1 ] && grep -q 'not a socket' '$WORK/plain.err' && [ -f '$WORK/plain' ]"

mkdir -p "$WORK/open" && chmod 0777 "$WORK/open"
timeout 10 "${AGENT[@]}" --socket "$WORK/open/a.sock" 2>"$WORK/open.err"
rc=$?
check "a directory others may write (no sticky bit) is refused, saying why" sh -c "
    [ $rc = 1 ] && grep -q 'writable by other users (mode 777, no sticky bit)' '$WORK/open.err'"
chmod 1777 "$WORK/open"
start agent sh -c "umask 077; exec '$BIN/rankscope-agent' --server tcp://127.0.0.1:1 \
    --socket '$WORK/open/a.sock' --ready-file '$WORK/a2.ready'"
wait_file "$WORK/a2.ready" 5
check "with the sticky bit it is accepted; the socket is 0666 under umask 077" sh -c "
    [ \$(stat -c %a '$WORK/open/a.sock') = 666 ]"
stop "$PID_agent"

# --allow-uids: another uid than ours is turned away, and what it sent is counted
me=$(id -u)
start_server
start_agent --allow-uids $((me + 12345)) --metrics-file "$WORK/deny.prom" --metrics-s 1
"$BIN/rankscope-sim" --job denied --ranks 2 --steps 20 --speed 0 --agent "$WORK/agent.sock" \
    --log-level error >/dev/null 2>&1
stop "$PID_agent"
check "a collector whose uid is not allowed is refused and counted, its frames too" sh -c "
    grep -Eq '^rankscope_agent_collectors_denied_total [1-9]' '$WORK/deny.prom' &&
    grep -Eq '^rankscope_agent_frames_total 0$' '$WORK/deny.prom' &&
    grep -q 'RS-AGENT-DENIED refused a collector of uid $me' '$WORK/agent.log'"
start_agent --allow-uids "0,$me" --metrics-file "$WORK/allow.prom" --metrics-s 1
"$BIN/rankscope-sim" --job allowed --ranks 2 --steps 20 --speed 0 --agent "$WORK/agent.sock" \
    --log-level warn >"$WORK/sim.json"
wait_for_records allowed "$WORK/sim.json"
check "a listed uid is served: every record stored" totals_match allowed "$WORK/sim.json"
check "--allow-uids that is not a list of uids is refused" sh -c "
    ! timeout 10 '$BIN/rankscope-agent' --server tcp://127.0.0.1:1 --socket '$WORK/x.sock' --allow-uids 'root' 2>'$WORK/uids.err' &&
    grep -q 'is not a list of uids' '$WORK/uids.err'"
finish
