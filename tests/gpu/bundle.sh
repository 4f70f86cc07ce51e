#!/usr/bin/env bash
# Builds here and packs what tests/gpu/ needs into gpu-bundle/ (git-ignored): the binaries, the
# collector, the test tools, and the shared libraries they need that a CUDA image lacks (the GPU
# machines have no package registry). Carry gpu-bundle with the device run. BUILD=DIR builds there
# (make's BUILD; default build), e.g. while make test runs in build/.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
make --no-print-directory BUILD="$BUILD" all test-build >/dev/null
rm -rf gpu-bundle && mkdir -p gpu-bundle/bin gpu-bundle/lib
cp "$BUILD"/bin/rankscope-server "$BUILD"/bin/rankscope-agent "$BUILD"/bin/rankscope-sim \
   "$BUILD"/bin/rankscope "$BUILD"/tests/tools/rs-store-dump "$BUILD"/tests/tools/rs-nvml-read \
   "$BUILD"/tests/tools/rs-plugin-bench gpu-bundle/bin/
cp "$BUILD"/lib/librankscope.so gpu-bundle/lib/
mkdir -p gpu-bundle/lib/bench && cp "$BUILD"/lib/bench/libcupti_floor.so gpu-bundle/lib/bench/
for lib in $(ldd gpu-bundle/bin/* | awk '/=>/ {print $3}' | sort -u |
             grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so'); do
    cp -L "$lib" gpu-bundle/lib/
done
du -sh gpu-bundle
