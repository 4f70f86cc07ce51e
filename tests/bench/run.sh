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
echo "== trace import: importer, analyze and python json.load on a 100 MB Kineto trace (1 run)"
tests/bench/import_speed.sh 1 100
echo "== GPU benchmarks: not here (need a GPU; see docs/BENCHMARKS.md)"
