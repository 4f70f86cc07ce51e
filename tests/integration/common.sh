# Helpers for tests/integration/NNN-*.sh: start real binaries on 127.0.0.1 with ready files, check
# conditions, and print "<suite>: N passed, N failed". Everything is stopped by saved pid.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
. tests/lib.sh
BIN=$ROOT/${BUILD:-build}/bin
TOOLS=$ROOT/${BUILD:-build}/tests/tools
SUITE=integration/$(basename "$0" .sh)
WORK=$(mktemp -d /tmp/rankscope-it.XXXXXX)
PASSED=0
FAILED=0
trap 'stop_all; rm -rf "$WORK"' EXIT
# Tests write nothing outside $WORK: `go tool pprof` keeps a copy of every profile it fetches
# from a URL in $PPROF_TMPDIR (default ~/pprof).
export PPROF_TMPDIR=$WORK/pprof

check() {
    local what=$1; shift
    if "$@" >"$WORK/check.out" 2>&1; then
        PASSED=$((PASSED + 1))
    else
        FAILED=$((FAILED + 1))
        echo "  FAIL $SUITE: $what" >&2
        sed 's/^/    | /' "$WORK/check.out" | tail -5 >&2
    fi
}

finish() {
    stop_all
    # Daemons stop cleanly on SIGTERM; under make asan their logs carry any sanitizer report.
    check "no sanitizer report and a clean exit in the daemons' logs" no_sanitizer_reports
    if [ "$FAILED" -gt 0 ]; then
        for f in "$WORK"/*.log; do echo "--- $f" >&2; tail -20 "$f" >&2; done
    fi
    echo "$SUITE: $PASSED passed, $FAILED failed"
    [ "$FAILED" = 0 ]
    exit $?
}

no_sanitizer_reports() {
    ! grep -lE 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: ' "$WORK"/*.log
}

# browser_checks OUTPUT RC MIN SHOTS: a check per "PASS what" / "FAIL what: why" line that a
# tests/browser/*.mjs run printed to OUTPUT (failures point to the screenshots in SHOTS), then one
# that the run exited 0 (RC) with at least MIN checks passed.
browser_checks() {
    local verdict what
    while read -r verdict what; do
        case $verdict in
        PASS) check "browser: $what" true ;;
        FAIL) check "browser: ${what%%: *}" sh -c 'echo "$1"; echo "screenshots: $2"; exit 1' _ "$what" "$4" ;;
        esac
    done <"$1"
    check "the browser run ended cleanly with every check reported (exit $2)" bash -c '
        [ "$1" = 0 ] && [ "$(grep -c "^PASS " "$2")" -ge "$3" ] || { tail -5 "$2"; exit 1; }' _ "$2" "$1" "$3"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_server_at URL [options]: server on URL (port 0 allowed), HTTP on a free port.
start_server_at() {
    local url=$1; shift
    rm -f "$WORK/server.ready"
    start server "$BIN/rankscope-server" --data "$WORK/data" --http 127.0.0.1:0 --listen "$url" \
        --ready-file "$WORK/server.ready" "$@"
    wait_file "$WORK/server.ready" || exit 1
    HTTP=http://$(field "$WORK/server.ready" http)
    HTTP_HOST=127.0.0.1
    HTTP_PORT=${HTTP##*:}
    LISTEN=$(field "$WORK/server.ready" listen)
}
start_server() { start_server_at tcp://127.0.0.1:0 "$@"; }

# start_agent_at URL [options]: an agent on $WORK/agent.sock sending to URL.
start_agent_at() {
    local url=$1; shift
    rm -f "$WORK/agent.ready"
    start agent "$BIN/rankscope-agent" --server "$url" --socket "$WORK/agent.sock" \
        --spool "$WORK/spool" --ready-file "$WORK/agent.ready" --reply-timeout-ms 2000 "$@"
    wait_file "$WORK/agent.ready" || exit 1
}
start_agent() { start_agent_at "$LISTEN" "$@"; }

# The server's per-job totals as "kernels collectives memcpys steps".
# With RS_TEST_TOKEN set (tests of a server with a token file), sent as a Bearer token.
server_totals() {
    curl -sf ${RS_TEST_TOKEN:+-H "Authorization: Bearer $RS_TEST_TOKEN"} "$HTTP/v1/jobs/$1/ranks" | python3 -c '
import json, sys
r = json.load(sys.stdin)["ranks"]
print(sum(x["kernels"] for x in r), sum(x["collectives"] for x in r),
      sum(x["memcpys"] for x in r), sum(x["steps"] for x in r))' 2>/dev/null
}

sim_totals() {
    python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["dropped_records"] == 0, "the simulator dropped records"
t = s["sent"]
print(t["kernels"], t["collectives"], t["memcpys"], t["steps"])' "$1"
}

totals_match() {
    local want got
    want=$(sim_totals "$2") || return 1
    got=$(server_totals "$1")
    echo "sim sent: $want; server stored: $got"
    [ "$want" = "$got" ]
}

# wait_for_records JOB SIM_JSON: until the server holds every record (or 30 s).
wait_for_records() {
    local i
    for i in $(seq 300); do
        totals_match "$1" "$2" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 0 # the check that follows reports the difference
}

# logged FILE PATTERN: the pattern (grep's) appears in the log within 10 s.
logged() {
    local i
    for i in $(seq 100); do grep -q "$2" "$1" && return 0; sleep 0.1; done
    echo "not in $1: $2"; return 1
}

# stored_check PATTERN: until `rankscope-server --check` of the running server's store prints a
# line matching PATTERN (up to 10 s): what the server wrote has been committed.
stored_check() {
    local i
    for i in $(seq 50); do
        "$BIN/rankscope-server" --check --data "$WORK/data" 2>/dev/null | grep -q "$1" && return 0
        sleep 0.2
    done
    echo "--check never printed: $1"; return 1
}

# sim_job JOB RANKS STEPS: a simulated job of RANKS x STEPS through the agent as fast as it goes,
# its summary in $WORK/JOB.json; returns when the server holds every record (wait_for_records).
sim_job() {
    "$BIN/rankscope-sim" --job "$1" --ranks "$2" --steps "$3" --speed 0 --agent "$WORK/agent.sock" \
        --log-level warn >"$WORK/$1.json"
    wait_for_records "$1" "$WORK/$1.json"
}

# "batches kernels": committed batches and the kernels of job "crash", from the store itself (its
# server down). For the crash and power-loss tests (rs-load's job).
store_counts() {
    local batches kernels
    batches=$("$BIN/rankscope-server" --check --data "$WORK/data" | sed -n 's/.* \([0-9]*\) batches$/\1/p')
    kernels=$("$TOOLS/rs-store-dump" "$WORK/data" crash 2>/dev/null |
              python3 -c 'import json,sys; print(sum(r["kernels"] for r in json.load(sys.stdin)["ranks"]))' 2>/dev/null || echo 0)
    echo "${batches:-0} ${kernels:-0}"
}

health_is() {
    curl -sf "$HTTP/healthz" | python3 -c "import json,sys; v=json.load(sys.stdin)['counters']['$1']; print(v); assert v == $2"
}

# new_token NAME ROLE: the token in $WORK/NAME.token (0600), its line appended to $WORK/tokens
new_token() {
    "$BIN/rankscope-server" --new-token "$1" --role "$2" >"$WORK/$1.new" || return 1
    grep '^rst_' "$WORK/$1.new" >"$WORK/$1.token"
    chmod 600 "$WORK/$1.token"
    grep "^$1 $2 sha256:" "$WORK/$1.new" >>"$WORK/tokens"
}
