#!/usr/bin/env bash
# make bench: the benchmarks that run on this (CPU) machine. GPU benchmarks run on a GPU machine:
# tests/gpu/bundle.sh here, then tests/bench/collector_overhead.sh there (docs/BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
echo "== storage bytes per rank-step, raw and rolled up (8 ranks x 2,000 steps of 1 s, 1,020 kernels each)"
tests/bench/storage_bytes.sh 8 2000 20 1000
echo "== raw records through agent -> server (128 ranks x 400 steps, 3 runs)"
tests/bench/storage_ingest.sh 128 400 3
echo "== rank-window summaries with acknowledgements (20,480 ranks; 1 and 5 windows per rank per request; 3 runs of 30 s)"
tests/bench/summary_ingest.sh 20480 30 3 1
tests/bench/summary_ingest.sh 20480 30 3 5
echo "== the same on the 1 Hz schedule of a 20,480-GPU cluster (5 windows per request; 1 run of 120 s; docs/BENCHMARKS.md has 10-minute runs)"
OFFERED=20480 tests/bench/summary_ingest.sh 20480 120 1 5
echo "== reading agent windows back (64 ranks x 1 hour of 1 s windows, 10 scans)"
rm -rf "${TMPDIR:-/tmp}/rs-window-bench.$$"
"${BUILD:-build}/tests/tools/rs-window-bench" "${TMPDIR:-/tmp}/rs-window-bench.$$" 64 3600 10
rm -rf "${TMPDIR:-/tmp}/rs-window-bench.$$"
echo "== trace import: importer, analyze and python json.load on a 100 MB Kineto trace (1 run)"
tests/bench/import_speed.sh 1 100
echo "== GPU benchmarks: not here (need a GPU; see docs/BENCHMARKS.md)"
