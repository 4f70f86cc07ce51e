# Shared helpers for scripts that start rankscope binaries on 127.0.0.1 (tests, demo).
# Processes are started with saved pids and stopped by pid only.

BIN=${BUILD:-build}/bin
PIDS=() NAMES=()

# start NAME CMD...: runs CMD in the background, logs to $WORK/NAME.log, remembers the pid.
start() {
    local name=$1; shift
    "$@" >"$WORK/$name.log" 2>&1 &
    PIDS+=($!)
    NAMES+=("$name")
    eval "PID_$name=$!"
}

# wait_file FILE [SECONDS]: waits for a ready file.
wait_file() {
    local f=$1 t=${2:-10} i=0
    while [ ! -s "$f" ]; do
        sleep 0.05; i=$((i + 1))
        if [ $i -ge $((t * 20)) ]; then echo "timed out waiting for $f" >&2; return 1; fi
    done
    return 0
}

# field FILE KEY: a key=value line of a ready file.
field() { sed -n "s/^$2=//p" "$1"; }

# stop_all: every process started, each gone before the next is told — first those not named as
# servers (agents drain before the server they send to, whichever started first), newest first,
# then the servers. Stopped together, an agent's last request could be handed to a connection the
# server was closing: NNG 1.5.2 then drops the message without freeing it (tcptran_pipe_send
# returns on an aio already closed, no callback), a leak of one request that LeakSanitizer
# reported in 252 under `make asan` (3 of 20 runs). docs/dependencies.md "NNG 1.5.2".
stop_all() {
    local i pass
    for pass in others servers; do
        for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
            case ${NAMES[$i]:-}:$pass in
            *server*:others | *srv*:others) continue ;;
            *server*:servers | *srv*:servers) ;;
            *:servers) continue ;;
            esac
            kill "${PIDS[$i]}" 2>/dev/null
            wait "${PIDS[$i]}" 2>/dev/null
        done
    done
    PIDS=() NAMES=()
}

# stop PID: SIGTERM and wait.
stop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
