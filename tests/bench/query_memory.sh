#!/usr/bin/env bash
# Where the query side's memory goes (issue 23, the soak): a store of RANKS ranks summarized for
# SECONDS (tests/tools/rs-summary-load, as soak.sh), then each of the soak's views asked once,
# alone, on the idle server (--answer-cache-mb 0: every request scans): the answer's bytes, its
# time, and the server's anonymous memory (RssAnon, sampled every 10 ms) before, at its peak
# during the query and after. SERVER_ARGS adds server options.
# usage: tests/bench/query_memory.sh [RANKS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
TOOLS=${BUILD:-build}/tests/tools
RANKS=${1:-10000} SECONDS_=${2:-30}
WORK=$(mktemp -d /tmp/rankscope-qmem.XXXXXX)
trap 'set +e; stop_all; rm -rf "$WORK"' EXIT
start server "$BIN/rankscope-server" --data "$WORK/data" --http 127.0.0.1:0 \
    --listen tcp://127.0.0.1:0 --ready-file "$WORK/server.ready" --ingest-contexts 250 \
    --answer-cache-mb 0 --evaluate-ms 0 ${SERVER_ARGS:-}
wait_file "$WORK/server.ready"
HTTP=http://$(field "$WORK/server.ready" http)
"$TOOLS/rs-summary-load" "$(field "$WORK/server.ready" listen)" "$RANKS" "$SECONDS_" 250 8 5 \
    "$RANKS" >"$WORK/load.json" 2>/dev/null
echo "# query memory: $RANKS ranks summarized for $SECONDS_ s ($(nproc) cores, commit $(git rev-parse --short HEAD))"
echo "# path bytes seconds anon_before_mib anon_peak_mib anon_after_mib"
anon() { awk '/^RssAnon/ {print int($2/1024)}' "/proc/$PID_server/status"; }
for p in /v1/jobs /v1/jobs/summary-bench/ranks /v1/jobs/summary-bench/stragglers \
    '/v1/jobs/summary-bench/steps?last=30' '/v1/jobs/summary-bench/top?limit=10' \
    /v1/jobs/summary-bench/skew '/v1/jobs/summary-bench/heatmap?last=30'; do
    before=$(anon)
    : >"$WORK/peak"
    (while :; do anon >>"$WORK/peak"; sleep 0.01; done) &
    SAMPLER=$!
    out=$(curl -s -o "$WORK/body" -w '%{http_code} %{size_download} %{time_total}' "$HTTP$p")
    kill "$SAMPLER"; wait "$SAMPLER" 2>/dev/null || true
    sleep 0.5
    echo "$p $out $before $(sort -n "$WORK/peak" | tail -1) $(anon)"
done
# The loop while a large answer goes out gzip-compressed: /healthz (answered on the loop) asked
# every 20 ms during 3 requests for the steps with Accept-Encoding: gzip; its slowest answer.
python3 - "$HTTP" <<'PY'
import http.client, sys, threading, time
from urllib.parse import urlparse
u = urlparse(sys.argv[1]); done = threading.Event(); worst = [0.0]; big = []
def health():
    while not done.is_set():
        t0 = time.monotonic(); c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        c.request("GET", "/healthz"); c.getresponse().read(); c.close()
        worst[0] = max(worst[0], time.monotonic() - t0); time.sleep(0.02)
t = threading.Thread(target=health); t.start()
for _ in range(3):
    t0 = time.monotonic(); c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    c.request("GET", "/v1/jobs/summary-bench/steps?last=30", headers={"Accept-Encoding": "gzip"})
    r = c.getresponse(); b = r.read(); c.close()
    big.append("%d %s %d bytes %.2f s" % (r.status, r.getheader("Content-Encoding"), len(b), time.monotonic() - t0))
done.set(); t.join()
print("# steps with Accept-Encoding: gzip, 3 times: %s; /healthz meanwhile, slowest %.3f s" % ("; ".join(big), worst[0]))
PY
