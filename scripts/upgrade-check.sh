#!/usr/bin/env bash
# Upgrade check (docs/storage.md "Format"): builds commit OLD (default 5085ead, the last server
# that wrote format 1) in a temporary worktree, lets its server and agent store an 8-rank simulated
# job, then opens that store with this tree's binaries: --check must refuse the unconverted store,
# the server must convert it at start (RS-STORE-MIGRATE), --check must then pass, and the job's
# skew, stragglers, steps and ranks answers must be the old server's. Needs `make` done here.
# FORMAT=2, 3 or 6 checks a store of that format instead (OLD: a commit that wrote it, e.g.
# 707d7c9 for format 2 — kernel windows naming kernels by hash — or 7d540ec for format 3 — agent
# windows in kwin): its agent summarizes (--summarize), this tree's --check accepts the store and
# leaves it to the old server, this tree's server marks it with the current format as it starts,
# the answers (also `top`, read from the windows) must be the old server's, and the old server must
# then refuse the store.
# (format 6: a8715b8, before the captures table)
# usage: [FORMAT=2|3|6] scripts/upgrade-check.sh [OLD]
set -euo pipefail
cd "$(dirname "$0")/.."
. tests/lib.sh
OLD=${1:-5085ead}
FORMAT=${FORMAT:-1}
QUERIES="skew stragglers steps ranks"
AGENT_ARGS=()
if [ "$FORMAT" != 1 ]; then QUERIES="$QUERIES top"; AGENT_ARGS=(--summarize); fi
WORK=$(mktemp -d /tmp/rankscope-upgrade.XXXXXX)
trap 'stop_all; git worktree remove --force "$WORK/src" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
git worktree add -q "$WORK/src" "$OLD"
echo "== building $OLD"
make -C "$WORK/src" BUILD="$WORK/old" all >/dev/null
serve() { # BIN_DIR
    start server "$1/rankscope-server" --data "$WORK/data" --http 127.0.0.1:0 \
        --listen tcp://127.0.0.1:0 --ready-file "$WORK/server.ready"
    wait_file "$WORK/server.ready"
    H=http://$(field "$WORK/server.ready" http)
}
answers() { # PREFIX
    for q in $QUERIES; do curl -sf "$H/v1/jobs/up/$q" >"$WORK/$1.$q"; done
}
echo "== the old server stores a job"
serve "$WORK/old/bin"
start agent "$WORK/old/bin/rankscope-agent" --server "$(field "$WORK/server.ready" listen)" \
    --socket "$WORK/agent.sock" --spool "$WORK/spool" --ready-file "$WORK/agent.ready" \
    ${AGENT_ARGS[@]+"${AGENT_ARGS[@]}"}
wait_file "$WORK/agent.ready"
"$WORK/old/bin/rankscope-sim" --job up --ranks 8 --steps 200 --step-ms 200 --speed 0 --seed 3 \
    --slow-rank 5 --slowdown 0.2 --onset-step 0 --agent "$WORK/agent.sock" --log-level warn >/dev/null
sleep 4 # the agent's last hand-off and the evaluator's summaries
answers old
stop_all
echo "== this tree's binaries"
if [ "$FORMAT" = 1 ]; then
    if "$BIN/rankscope-server" --check --data "$WORK/data"; then
        echo "FAIL: --check accepted an unconverted store"; exit 1
    fi
else
    "$BIN/rankscope-server" --check --data "$WORK/data" | tail -1 # reads it, leaves its format
    "$WORK/old/bin/rankscope-server" --check --data "$WORK/data" | tail -1 # still the old one's
fi
serve "$BIN"
answers new
if [ "$FORMAT" = 1 ]; then grep RS-STORE-MIGRATE "$WORK/server.log"; fi
stop_all
"$BIN/rankscope-server" --check --data "$WORK/data" | tail -1
if [ "$FORMAT" != 1 ]; then
    if "$WORK/old/bin/rankscope-server" --check --data "$WORK/data" >"$WORK/old-check.out" 2>&1; then
        echo "FAIL: the old server's --check accepted a store of the current format"; exit 1
    fi
    echo "the old server refuses the store now: $(tail -1 "$WORK/old-check.out")"
fi
python3 - "$WORK" "$QUERIES" <<'PY'
import json, sys
w = sys.argv[1]
volatile = {"generated_ns", "detected_ns", "events_ns", "cleared", "streaming", "took_ms"}
def strip(d):
    if isinstance(d, dict):
        return {k: strip(v) for k, v in d.items() if k not in volatile}
    return [strip(x) for x in d] if isinstance(d, list) else d
bad = [q for q in sys.argv[2].split()
       if strip(json.load(open(f"{w}/old.{q}"))) != strip(json.load(open(f"{w}/new.{q}")))]
print("answers the same as the old server's" if not bad else f"FAIL: answers differ: {bad}")
sys.exit(1 if bad else 0)
PY
