#!/usr/bin/env bash
# Follow-up measurements after a first scripts/device-session.sh, in one call on a lent
# GPU (carry build/device):
#   kernels   trainsim-calibrate --kernels (our kernels' table again, e.g. after a change to
#             how a kernel is measured)
#   ncu       every kernel of trainsim-train's GPT-2 124M step timed alone by Nsight Compute
#             (gpu__time_duration, clocks and caches left as the step leaves them), so each
#             op of the step's timeline can be split into its kernels
#   gemm-ab   the harness and PyTorch on the same GEMM shapes, alternating three times, so
#             their difference can be told from the card's run-to-run spread
# Usage: scripts/device-followup.sh OUT_DIR [steps, default kernels,ncu,gemm-ab]
# Everything goes to OUT_DIR (the device tool returns at most 8 files); a step's failure
# is printed and the others still run.
set -uo pipefail
out=${1:?output directory}
steps=${2:-kernels,ncu,gemm-ab}
mkdir -p "$out" && out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.." || exit 1
bin=build/device
export PYTHONUNBUFFERED=1
# The carried build's CMake files name the development checkout; link it if absent.
src=$(cut -d' ' -f1 "$bin/BUILT_ON" 2> /dev/null)
if [ -n "$src" ] && [ "$src" != "$(pwd)" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$(pwd)" "$src"; fi
has() { [[ ",$steps," == *",$1,"* ]]; }
failures=0
step() {
  local name=$1 limit=$2
  shift 2
  local t0
  t0=$(date +%s)
  timeout -k 5 "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc in $(($(date +%s) - t0)) s"
  [ $rc -eq 0 ] || { failures=$((failures + 1)); tail -5 "$out/$name.log"; }
  return $rc
}

if has kernels; then
  step kernels 90 "$bin/trainsim-calibrate" --kernels --out "$out/kernels.json" &&
    grep -E "attention_(forward|backward) .*\"heads\":12,.*\"seq\":1024" "$out/kernels.log" | head -4
fi

if has ncu; then
  ncu=$(command -v ncu || find /usr/local/cuda/bin /opt/nvidia -name ncu -type f 2> /dev/null | head -1)
  if [ -z "$ncu" ]; then
    echo "ncu: not found"
    failures=$((failures + 1))
  else
    # Two steps of the validation shape; every kernel launch from the start, so the second
    # step is whole in the log (scripts/ncu-step.py splits it by the optimizer's kernel).
    step ncu 150 "$ncu" --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
      --print-units base --log-file "$out/ncu-124m.csv" "$bin/trainsim-train" --layers 12 --hidden 768 --heads 12 \
      --seq 1024 --micro-batch 8 --vocab 50257 --eval-batches 1 --steps 2 --warmup-steps 0 \
      --data kernels/trainer/corpus/kjv-genesis-2samuel.txt --timeline false --out "$out/ncu-train.json"
    echo "ncu: $(grep -c gpu__time_duration "$out/ncu-124m.csv" 2> /dev/null) kernels timed"
  fi
fi

if has gemm-ab; then
  shapes="$out/ab.shapes.json"
  echo '[{"m": 8192, "n": 8192, "k": 8192}, {"m": 16384, "n": 3072, "k": 768}, {"m": 8192, "n": 50304, "k": 768},
         {"m": 4096, "n": 16384, "k": 4096}, {"m": 4096, "n": 4096, "k": 4096}]' > "$shapes"
  for i in 1 2 3; do
    step "ab-harness-$i" 60 "$bin/trainsim-calibrate" --gemm --dtypes bf16 --no-grid --shapes "$shapes" \
      --out "$out/ab-harness-$i.json" && grep -E "^ +bf16 +8192 +8192 +8192" "$out/ab-harness-$i.log"
    step "ab-pytorch-$i" 60 python3 scripts/pytorch-gemm-reference.py --out "$out/ab-pytorch-$i.json" &&
      grep -E "8192 x +8192 x +8192 bf16" "$out/ab-pytorch-$i.log"
  done
  (cd "$out" && tar czf gemm-ab.tar.gz ab.shapes.json ab-* && rm -f ab.shapes.json ab-*)
fi
echo "device-followup.sh done: $failures failure(s)"
[ "$failures" -eq 0 ]
