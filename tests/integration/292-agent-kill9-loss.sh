#!/usr/bin/env bash
# Nothing a collector sends may vanish uncounted (issue 23 §4): the agent is killed -9 in the
# middle of a simulated job, with frames in its socket and in memory, and restarted. Collectors
# number their frames; the server counts, per rank, the frames and records that never arrived.
# The check is physics, not the accounting's own arithmetic: what the simulator says it sent
# minus what the server stored (each counted its own way) must equal the records_lost the server
# reports — every record is stored, or counted as lost.
. "$(dirname "$0")/common.sh"
start_server
# Flushing once a second, killed half-way between two flushes: half a second of frames is in its
# memory then, whatever the machine's load.
start_agent --flush-ms 1000
"$BIN/rankscope-sim" --job lossy --ranks 16 --steps 240 --speed 2 --agent "$WORK/agent.sock" \
    --log-level error > "$WORK/sim.json" &
SIM=$!
sleep 1.5
kill -9 "$PID_agent"; wait "$PID_agent" 2>/dev/null
sleep 0.3   # collectors find the socket gone: what they send now is dropped, and counted as such
start_agent --metrics-file "$WORK/agent.prom" --metrics-s 1
wait "$SIM"

# ranks JSON -> "kernels collectives memcpys steps stalls frames_lost records_lost frames"
ranks_line() {
    curl -sf "$HTTP/v1/jobs/lossy/ranks" | python3 -c '
import json, sys
r = json.load(sys.stdin)["ranks"]
print(*(sum(x[k] for x in r) for k in ("kernels", "collectives", "memcpys", "steps",
                                        "stall_records", "frames_lost", "records_lost", "frames")))'
}
# The restarted agent drains on SIGTERM: everything it received is acknowledged when it exits.
stop "$PID_agent"
now=$(ranks_line)

sent_equals_stored_plus_lost() {
    python3 - "$WORK/sim.json" "$now" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
s = summary["sent"]
k, c, m, st, stalls, frames_lost, records_lost, frames = map(int, sys.argv[2].split())
assert s["syncs"] == 0 and s.get("stalls", 0) == 0, "the comparison below counts no syncs/stalls"
sent = s["kernels"] + s["collectives"] + s["memcpys"] + s["steps"]
stored = k + c + m + st
print(f"simulator sent {sent} records in {summary['frames_sent']} frames; server stored {stored} "
      f"records in {frames} frames; server counts {records_lost} records in {frames_lost} "
      f"frames lost")
assert sent - stored == records_lost, (sent - stored, records_lost)
assert summary["frames_sent"] - frames == frames_lost, (summary["frames_sent"] - frames, frames_lost)
PY
}
check "records sent = records stored + records the server counts as lost" \
    sent_equals_stored_plus_lost
cat "$WORK/check.out"
check "the kill lost frames (so the accounting above was exercised)" \
    sh -c "echo '$now' | awk '{ exit !(\$6 > 0 && \$7 > 0) }'"
check "/metrics reports the lost frames and records" sh -c "
    curl -sf '$HTTP/metrics' | grep -q '^rankscope_collector_frames_lost [1-9]' &&
    curl -sf '$HTTP/metrics' | grep -q '^rankscope_collector_records_lost [1-9]'"
check "the CLI's ranks table has a LOST column" sh -c "
    '$BIN/rankscope' --server '$HTTP' ranks lossy | grep -q 'LOST'"
check "the agent's metrics file has its frame-gap counter" \
    grep -q '^rankscope_agent_frames_gap_total ' "$WORK/agent.prom"
finish
