#!/usr/bin/env bash
# Builds the GPU targets (kernels, trainsim-calibrate, trainsim-train, the GPU tests) on
# the development machine into build/device, for a lent GPU machine to run without
# spending its minutes on the build: pass `carry: ["build/device"]` to the device tool
# and run scripts/device-session.sh there. Built for sm_90 (H100, H200) without MPI
# (the device image's MPI need not match this machine's); the session script uses the
# carried build only if scripts/source-hash.sh gives the same hash there and every
# shared library it links loads, and otherwise builds anew.
# Usage: scripts/device-prebuild.sh
set -euo pipefail
cd "$(dirname "$0")/.."
b=build/device
cmake -S . -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINSIM_GPU_ONLY=ON -DTRAINSIM_WITH_MPI=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null
cmake --build "$b"
scripts/source-hash.sh "$b" > "$b/BUILT_FROM"
echo "$(pwd) $(hostname) $(date -u +%FT%TZ) $(nvcc --version | tail -1)" > "$b/BUILT_ON"
# The device tool carries at most 64 MiB with the working tree.
du -sh --exclude='*.o' --exclude='*.a' "$b" 2> /dev/null
du -sh "$b"
