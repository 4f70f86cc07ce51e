#!/usr/bin/env bash
# Packs what tests/gpu/sweep_run.sh needs into DIR (default /work/main/dev-acc, carried to the GPU
# machine, whose 16 CPU cores run the accuracy sweep; no GPU is used): the four binaries, the
# shared libraries a CUDA image lacks, the generator and sweep scripts, the fixture the generator
# takes its kernels from.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-/work/main/dev-acc}
make --no-print-directory -j2 all >/dev/null
rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/lib" "$dir/tests/bench" "$dir/tests/gpu" \
    "$dir/tests/fixtures/kineto-h200x2"
cp build/bin/rankscope build/bin/rankscope-server build/bin/rankscope-agent build/bin/rankscope-sim \
    "$dir/bin/"
for lib in $(ldd "$dir"/bin/* | awk '/=>/ {print $3}' | sort -u |
             grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so'); do
    cp -L "$lib" "$dir/lib/"
done
cp tests/bench/ddp_tracegen.py tests/bench/trace_sweep.py tests/bench/detect_latency.py \
    tests/bench/rsbench.py "$dir/tests/bench/"
cp tests/gpu/sweep_run.sh "$dir/"
cp tests/fixtures/kineto-h200x2/fixture_baseline_rank0.json.gz "$dir/tests/fixtures/kineto-h200x2/"
du -sh "$dir"
