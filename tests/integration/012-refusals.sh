#!/usr/bin/env bash
# What a new user runs into first, said clearly: a second server on a store another server writes
# is refused (and so is `rankscope analyze --data` into it; reading it is fine); a server that fails
# to start leaves no directory or store behind (but never removes one that was there); a simulator
# that could deliver nothing exits non-zero and says why.
. "$(dirname "$0")/common.sh"
start_server
SERVER_PID=$(field "$WORK/server.ready" pid)

check "a second server on the same --data exits 1 naming the directory and the first one's pid" sh -c "
    timeout 10 '$BIN/rankscope-server' --data '$WORK/data' --http 127.0.0.1:0 \
        --listen tcp://127.0.0.1:0 >'$WORK/second.out' 2>&1; rc=\$?; cat '$WORK/second.out'; [ \$rc = 1 ] &&
    grep -q \"RS-STORE-LOCKED .*'$WORK/data' is in use by another rankscope-server (pid $SERVER_PID)\" '$WORK/second.out'"
check "the first server still serves" curl -sf "$HTTP/healthz"
check "rankscope analyze --data into the served store is refused" sh -c "
    '$BIN/rankscope' analyze --data '$WORK/data' tests/fixtures/kineto-h200x2/fixture_rank0slow_rank*.json.gz \
        >/dev/null 2>'$WORK/analyze.err'; rc=\$?; cat '$WORK/analyze.err'; [ \$rc != 0 ] &&
    grep -q 'in use by another process, pid $SERVER_PID' '$WORK/analyze.err'"
check "reading the served store is fine (--check takes no lock)" \
    "$BIN/rankscope-server" --check --data "$WORK/data"

# A server whose HTTP port is taken fails after opening its store: the store must go again.
busy=${HTTP##*:}
check "a server that cannot listen exits non-zero and leaves no new --data directory" sh -c "
    '$BIN/rankscope-server' --data '$WORK/new/deeper' --http 127.0.0.1:$busy \
        --listen tcp://127.0.0.1:0 2>&1; rc=\$?; [ \$rc != 0 ] && [ ! -e '$WORK/new' ]"
mkdir "$WORK/mine"
touch "$WORK/mine/keep.txt"
check "... and in a directory that was there, removes only the store files it made" sh -c "
    '$BIN/rankscope-server' --data '$WORK/mine' --http 127.0.0.1:$busy --listen tcp://127.0.0.1:0 \
        2>&1; rc=\$?; ls -A '$WORK/mine'; [ \$rc != 0 ] && [ \"\$(ls -A '$WORK/mine')\" = keep.txt ]"
check "a server refused for an invalid --http creates nothing either" sh -c "
    '$BIN/rankscope-server' --data '$WORK/bad' --http nonsense --listen tcp://127.0.0.1:0 2>&1;
    rc=\$?; [ \$rc != 0 ] && [ ! -e '$WORK/bad' ]"
stop "$PID_server"
check "a failed start (here: its ready file) leaves a store that was there whole" sh -c "
    timeout 10 '$BIN/rankscope-server' --data '$WORK/data' --http 127.0.0.1:0 \
        --listen tcp://127.0.0.1:0 --ready-file '$WORK/no/such/dir/ready' 2>&1; rc=\$?; [ \$rc != 0 ] &&
    [ -s '$WORK/data/data.mdb' ] && '$BIN/rankscope-server' --check --data '$WORK/data'"

check "the simulator with no agent listening exits 3 and says what was dropped and why" sh -c "
    '$BIN/rankscope-sim' --job lonely --ranks 2 --steps 5 --agent '$WORK/nobody.sock' \
        >'$WORK/sim.json' 2>'$WORK/sim.err'; rc=\$?; cat '$WORK/sim.err'; [ \$rc = 3 ] &&
    grep -q 'RS-SIM-DROPPED [0-9]* of [0-9]* records dropped .*no rankscope-agent was listening' '$WORK/sim.err' &&
    python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))[\"dropped_records\"] > 0' '$WORK/sim.json'"
finish
