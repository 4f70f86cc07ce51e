#!/bin/bash
# The advisor's live path (issue 27): each catalogue job (advise_catalogue.py --live) runs with
# the collector injected, next to a server and an agent from the bundle; the server's
# GET /v1/jobs/JOB/advice is saved per job in $OUT/live_advice.json, and the top finding printed.
# Usage there: OUT=... BUNDLE=dev-advise/gpu-bundle [PC_SAMPLING=1] [LIVE_STEPS=60] \
#   bash tests/gpu/advise_live.sh [JOB ...]   (PC_SAMPLING: the collector samples stall reasons)
set -u
export NCCL_NVLS_ENABLE=0
: "${OUT:?OUT must name the results folder}"
here=$(cd "$(dirname "$0")" && pwd)
B=$(cd "${BUNDLE:-gpu-bundle}" && pwd)
W=$(mktemp -d /tmp/rankscope-advise.XXXXXX)
CUPTI_DIR=$(dirname "$(find /usr/local/cuda* / -name 'libcupti.so.13*' -print -quit 2>/dev/null)")
LD_LIBRARY_PATH=$B/lib "$B/bin/rankscope-server" --data "$W/data" --http 127.0.0.1:0 \
    --listen tcp://127.0.0.1:0 --ready-file "$W/server.ready" >"$W/server.log" 2>&1 &
spid=$!
for _ in $(seq 100); do [ -s "$W/server.ready" ] && break; sleep 0.1; done
HTTP=http://$(sed -n 's/^http=//p' "$W/server.ready")
LD_LIBRARY_PATH=$B/lib "$B/bin/rankscope-agent" --server "$(sed -n 's/^listen=//p' "$W/server.ready")" \
    --socket "$W/agent.sock" --spool "$W/spool" --ready-file "$W/agent.ready" >"$W/agent.log" 2>&1 &
apid=$!
for _ in $(seq 100); do [ -s "$W/agent.ready" ] && break; sleep 0.1; done
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(clean launch_bound host_sync input_pipeline pageable_copy fp32_gemm unfused_elementwise)
echo "{" >"$OUT/live_advice.json"
first=1
pc=()
[ -n "${PC_SAMPLING:-}" ] && pc=(RANKSCOPE_PC_SAMPLING=1 RANKSCOPE_PC_DRAIN_MS=500
                                   RANKSCOPE_PC_WINDOW_MS=500 RANKSCOPE_PC_PERIOD_MS=1000)
for j in "${jobs[@]}"; do
    env "${pc[@]}" RANKSCOPE_JOB_ID="live_$j" RANKSCOPE_AGENT_SOCKET="$W/agent.sock" \
        LD_LIBRARY_PATH="$CUPTI_DIR:${LD_LIBRARY_PATH:-}" CUDA_INJECTION64_PATH="$B/lib/librankscope.so" \
        RANKSCOPE_KERNELS=always \
        NVTX_INJECTION64_PATH="$B/lib/librankscope.so" timeout 120 \
        python3 "$here/advise_catalogue.py" --live "${LIVE_STEPS:-60}" "$j" >>"$OUT/live.log" 2>&1
    echo "== $j exit $?" >>"$OUT/live.log"
    sleep 3 # the collector's last batch, through the agent
    [ $first = 1 ] || echo "," >>"$OUT/live_advice.json"
    first=0
    printf '"%s": ' "$j" >>"$OUT/live_advice.json"
    LD_LIBRARY_PATH=$B/lib "$B/bin/rankscope" --server "$HTTP" advise "live_$j" --json \
        >>"$OUT/live_advice.json" 2>>"$OUT/live.log" || echo null >>"$OUT/live_advice.json"
    LD_LIBRARY_PATH=$B/lib "$B/bin/rankscope" --server "$HTTP" advise "live_$j" 2>&1 | head -6
done
echo "}" >>"$OUT/live_advice.json"
kill $apid $spid 2>/dev/null
wait $apid $spid 2>/dev/null
cp "$W/server.log" "$W/agent.log" "$OUT/" 2>/dev/null
rm -rf "$W"
