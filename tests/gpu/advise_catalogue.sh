#!/bin/bash
# Runs the advisor's catalogue (advise_catalogue.py) on the GPU machine and packs what it wrote:
# $OUT/advise_traces.tar (the gzipped traces), $OUT/catalogue.json, $OUT/catalogue.log.
# Usage there: OUT=... bash tests/gpu/advise_catalogue.sh [JOB ...]
set -u
export NCCL_NVLS_ENABLE=0
: "${OUT:?OUT must name the results folder}"
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >"$OUT/catalogue.log" 2>&1
timeout "${CATALOGUE_TIMEOUT:-480}" python3 "$here/advise_catalogue.py" "$work" "$@" >>"$OUT/catalogue.log" 2>&1
echo "exit $?" >>"$OUT/catalogue.log"
cp "$work/catalogue.json" "$OUT/" 2>/dev/null
(cd "$work" && tar cf "$OUT/advise_traces.tar" advise_*.json.gz 2>/dev/null)
ls -l "$work" >>"$OUT/catalogue.log"
rm -rf "$work"
tail -n 30 "$OUT/catalogue.log"
