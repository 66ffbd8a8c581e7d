#!/usr/bin/env bash
# The calibration run behind scenarios/calibration/*.json, as run on a lent GPU
# machine (docs/calibration.md): build the GPU parts, run the GPU tests, calibrate.
# Usage: scripts/device-calibrate.sh OUT_DIR [seconds for calibration]
set -uo pipefail
out=${1:?output directory}
budget=${2:-420}
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv \
  | tee "$out/device.txt"
cmake -S . -B build/device -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINSIM_GPU_ONLY=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DTRAINSIM_GTEST_SOURCE=/usr/src/googletest > "$out/configure.log" 2>&1 \
  || { tail -30 "$out/configure.log"; exit 1; }
# Keep going past a broken target: what did build still runs.
cmake --build build/device -j16 -- -k 0 > "$out/build.log" 2>&1 || grep -E "error|FAILED" "$out/build.log" | head -20
test -x build/device/trainsim-calibrate || exit 1
ctest --test-dir build/device -L gpu -j1 --output-on-failure > "$out/gpu-tests.log" 2>&1
grep -E "tests passed|Failed|FAILED|Skipped|\*\*\*" "$out/gpu-tests.log" | head -40
# SIGTERM at the budget: the harness keeps what it measured ("complete": false).
timeout -s TERM "$budget" build/device/trainsim-calibrate --out "$out/profile.json" \
  --shapes scenarios/validation/gpt2-1xh200.shapes.json > "$out/calibrate.log" 2>&1
echo "calibrate exit $?"
grep -E "^# |launch overhead|wrote|interrupted" "$out/calibrate.log" | head -40
# The PyTorch GEMM reference on the same card (../shared/validation/PUBLIC_DATA.md shapes).
python3 scripts/pytorch-gemm-reference.py --out "$out/pytorch-gemm.json"
# The MPI path (one GPU per process), on the one GPU here: mpirun with one rank.
grep -q "MPI part ON" "$out/configure.log" && mpirun --allow-run-as-root -np 1 build/device/trainsim-calibrate --nccl \
  -e 64M --out "$out/mpi-profile.json" > "$out/mpi.log" 2>&1; head -4 "$out/mpi.log"; grep "MPI part" "$out/configure.log"
