#!/usr/bin/env bash
# Bytes the store spends on GPU telemetry: an 8-rank simulated job runs for DURATION_S seconds
# (60) beside an agent that samples 8 stand-in GPUs (tests/tools/fake_nvml.c, one per rank) at
# the defaults (a reading a second, sent every 5 s); then `rankscope-server --check` counts the
# readings stored and the bytes their series entries take, and this prints bytes per GPU-hour.
# Then a server that keeps 1 s raw rolls them up (the job is idle) into windows of the default
# 60 s, and the same count gives the bytes of a rolled-up GPU-hour: 60 windows a GPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
D=${DURATION_S:-60}
W=$(mktemp -d /tmp/rankscope-gpubytes.XXXXXX)
SP= AP=
trap 'kill $AP $SP 2>/dev/null; wait 2>/dev/null; rm -rf "$W"' EXIT
for r in $(seq 0 7); do printf 'gpu GPU-5a110001-0000-4000-8000-%012x\n' "$r"; done >"$W/script"
"$B/bin/rankscope-server" --data "$W/data" --http 127.0.0.1:0 --listen tcp://127.0.0.1:0 \
    --ready-file "$W/s.ready" 2>"$W/server.log" & SP=$!
while [ ! -s "$W/s.ready" ]; do sleep 0.05; done
FAKE_NVML_SCRIPT=$W/script "$B/bin/rankscope-agent" --server "$(sed -n 's/^listen=//p' "$W/s.ready")" \
    --socket "$W/a.sock" --ready-file "$W/a.ready" \
    --nvml-library "$PWD/$B/tests/tools/libfake_nvml.so" 2>"$W/agent.log" & AP=$!
while [ ! -s "$W/a.ready" ]; do sleep 0.05; done
"$B/bin/rankscope-sim" --job bytes --ranks 8 --steps $((D * 50)) --step-ms 20 --speed 1 \
    --agent "$W/a.sock" --log-level warn >/dev/null
sleep 6 # the last telemetry batch
kill $AP; wait $AP || true
kill $SP; wait $SP || true
"$B/bin/rankscope-server" --check --data "$W/data" | tee "$W/check.txt" | grep 'GPU telemetry'
awk '/GPU telemetry/ { for (i = 1; i <= NF; i++) if ($i == "readings") n = $(i - 1);
                       for (i = 1; i <= NF; i++) if ($i == "bytes" && $(i + 1) == "of") b = $(i - 1) }
     END { printf "%d readings, %d bytes: %.0f bytes per GPU-hour at 1 reading/s\n", n, b, b / n * 3600 }' \
    "$W/check.txt"
"$B/bin/rankscope-server" --data "$W/data" --http 127.0.0.1:0 --listen tcp://127.0.0.1:0 \
    --ready-file "$W/s2.ready" --raw-retention-s 1 --maintenance-s 1 2>"$W/server2.log" & SP=$!
while ! grep -q RS-ROLLUP-GPU "$W/server2.log"; do sleep 0.1; done
sleep 2 # a second pass: nothing left raw
kill $SP; wait $SP || true
SP=
"$B/bin/rankscope-server" --check --data "$W/data" | tee "$W/check2.txt" | grep 'GPU telemetry'
awk '/GPU telemetry rollups/ { w = $5; n = $8; for (i = 1; i <= NF; i++) if ($i == "bytes") b = $(i - 1) }
     END { printf "rolled up: %d windows of %d readings, %d bytes: %.0f bytes a window, %.0f bytes per GPU-hour (60 windows)\n", w, n, b, b / w, b / w * 60 }' \
    "$W/check2.txt"
