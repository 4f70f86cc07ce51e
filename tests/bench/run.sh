#!/usr/bin/env bash
# make bench: no benchmarks yet; the storage and collector issues add them here.
echo "bench: no benchmarks yet (see docs/BENCHMARKS.md)"
