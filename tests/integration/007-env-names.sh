#!/usr/bin/env bash
# One environment variable, one meaning across all binaries: each binary reads only names with its
# own prefix (RANKSCOPE_SERVER_, RANKSCOPE_AGENT_, RANKSCOPE_SIM_, RANKSCOPE_CLI_), the collector
# inside training processes owns the bare RANKSCOPE_ names, and the one name two programs share,
# RANKSCOPE_AGENT_SOCKET, means the same to both (the agent's socket). A variable exported for the
# CLI must not change what the agent does.
. "$(dirname "$0")/common.sh"

for b in rankscope-server rankscope-agent rankscope-sim rankscope; do
    "$BIN/$b" --help | grep -o 'env RANKSCOPE_[A-Z0-9_]*' | cut -c5- | sort -u > "$WORK/$b.env"
done
# The collector's settings, as its code reads them (string literals naming a whole variable).
grep -ho '"RANKSCOPE_[A-Z0-9_]*[A-Z0-9]"' node-agent/collector/*.c | tr -d '"' | sort -u \
    > "$WORK/collector.env"

check "every binary documents its variables in --help" \
    sh -c "for f in '$WORK'/*.env; do test -s \$f || { echo empty: \$f; exit 1; }; done"
check "each binary's variables carry its own prefix" sh -c "
    ! grep -v '^RANKSCOPE_SERVER_' '$WORK/rankscope-server.env' &&
    ! grep -v '^RANKSCOPE_AGENT_' '$WORK/rankscope-agent.env' &&
    ! grep -v '^RANKSCOPE_SIM_' '$WORK/rankscope-sim.env' &&
    ! grep -v '^RANKSCOPE_CLI_' '$WORK/rankscope.env'"
check "no variable is read by two programs, but the agent's socket (the same path to both)" \
    sh -c "test \"\$(cat '$WORK'/*.env | sort | uniq -d)\" = RANKSCOPE_AGENT_SOCKET"
check "the collector reads no other binary's prefix" \
    sh -c "! grep -E '^RANKSCOPE_(SERVER|SIM|CLI)_' '$WORK/collector.env' &&
           test \"\$(grep '^RANKSCOPE_AGENT_' '$WORK/collector.env')\" = RANKSCOPE_AGENT_SOCKET"

start_server
# What used to break the agent: RANKSCOPE_SERVER exported for the CLI (an HTTP URL) was read by
# the agent as its NNG URL. Both CLI variables are set here, and the agent must not care.
export RANKSCOPE_CLI_SERVER=$HTTP RANKSCOPE_SERVER=http://127.0.0.1:1
start_agent
sleep 0.3
check "the agent runs and dials its server with the CLI's variables exported" \
    sh -c "kill -0 $PID_agent && ! grep -q RS-AGENT-DIAL '$WORK/agent.log'"
check "the CLI reads its server from RANKSCOPE_CLI_SERVER" "$BIN/rankscope" jobs
check "a bad RANKSCOPE_CLI_SERVER is named in the error" sh -c "
    RANKSCOPE_CLI_SERVER=http://127.0.0.1:1 '$BIN/rankscope' jobs 2>&1 | grep -q '127.0.0.1:1'"
check "a bad RANKSCOPE_AGENT_FLUSH_MS is refused, naming the variable" sh -c "
    RANKSCOPE_AGENT_FLUSH_MS=fast '$BIN/rankscope-agent' --socket '$WORK/x.sock' 2>&1 |
    grep -q 'RANKSCOPE_AGENT_FLUSH_MS'"
unset RANKSCOPE_CLI_SERVER RANKSCOPE_SERVER
finish
