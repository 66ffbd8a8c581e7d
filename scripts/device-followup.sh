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
#   layouts   bf16 GEMMs in all three layouts of a linear layer (forward, data gradient,
#             weight gradient) over the grid and the GPT-2 validation shapes, then PyTorch's
#             own backward GEMMs on those shapes (scripts/pytorch-backward-gemms.py), twice
#   tests     ctest -L gpu on the carried build
#   pytorch   the PyTorch eager GPT-2 124M/350M/774M steps (as scripts/device-session.sh)
# Usage: scripts/device-followup.sh OUT_DIR [steps, default kernels,ncu,gemm-ab]
# Everything goes to build/device-followup, packed after every step into
# OUT_DIR/followup.tar.gz (the device tool returns at most 8 files), with this script's
# output in OUT_DIR/summary.txt; a step's failure is printed and the others still run.
set -uo pipefail
out=${1:?output directory}
steps=${2:-kernels,ncu,gemm-ab}
mkdir -p "$out" && out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.." || exit 1
res=build/device-followup
rm -rf "$res" && mkdir -p "$res"
exec > >(tee "$out/summary.txt") 2>&1
pack() { tar czf "$out/followup.tar.gz.tmp" "$res" 2> /dev/null && mv -f "$out/followup.tar.gz.tmp" "$out/followup.tar.gz"; }
trap pack EXIT
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
  timeout -k 5 "$limit" "$@" > "$res/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc in $(($(date +%s) - t0)) s"
  [ $rc -eq 0 ] || { failures=$((failures + 1)); tail -5 "$res/$name.log"; }
  pack
  return $rc
}

if has kernels; then
  step kernels 90 "$bin/trainsim-calibrate" --kernels --out "$res/kernels.json" &&
    grep -E "attention_(forward|backward) .*\"heads\":12,.*\"seq\":1024" "$res/kernels.log" | head -4
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
      --print-units base --log-file "$res/ncu-124m.csv" "$bin/trainsim-train" --layers 12 --hidden 768 --heads 12 \
      --seq 1024 --micro-batch 8 --vocab 50257 --eval-batches 1 --steps 2 --warmup-steps 0 \
      --data kernels/trainer/corpus/kjv-genesis-2samuel.txt --timeline false --out "$res/ncu-train.json"
    echo "ncu: $(grep -c gpu__time_duration "$res/ncu-124m.csv" 2> /dev/null) kernels timed"
  fi
fi

if has gemm-ab; then
  shapes="$res/ab.shapes.json"
  echo '[{"m": 8192, "n": 8192, "k": 8192}, {"m": 16384, "n": 3072, "k": 768}, {"m": 8192, "n": 50304, "k": 768},
         {"m": 4096, "n": 16384, "k": 4096}, {"m": 4096, "n": 4096, "k": 4096}]' > "$shapes"
  for i in 1 2 3; do
    step "ab-harness-$i" 60 "$bin/trainsim-calibrate" --gemm --dtypes bf16 --no-grid --shapes "$shapes" \
      --out "$res/ab-harness-$i.json" && grep -E "^ +bf16 +8192 +8192 +8192" "$res/ab-harness-$i.log"
    step "ab-pytorch-$i" 60 python3 scripts/pytorch-gemm-reference.py --out "$res/ab-pytorch-$i.json" &&
      grep -E "8192 x +8192 x +8192 bf16" "$res/ab-pytorch-$i.log"
  done
  (cd "$res" && tar czf gemm-ab.tar.gz ab.shapes.json ab-* && rm -f ab.shapes.json ab-*)
fi
if has layouts; then
  python3 -c 'import json, sys; print(json.dumps(sum((json.load(open(f)) for f in sys.argv[1:]), [])))' \
    scenarios/validation/gpt2-1xh100.shapes.json scenarios/validation/gpt2-1xh100.backward-shapes.json \
    > "$res/layouts.shapes.json"
  step layouts 150 "$bin/trainsim-calibrate" --gemm --dtypes bf16 --layouts forward,data_gradient,weight_gradient \
    --shapes "$res/layouts.shapes.json" --out "$res/layouts.json" &&
    grep -E "^ +bf16 +8192 +(8192 +8192|1280 +5120|5120 +1280) " "$res/layouts.log" | head -12
  for i in 1 2; do
    step "layouts-pytorch-$i" 60 python3 scripts/pytorch-backward-gemms.py \
      --shapes scenarios/validation/gpt2-1xh100.backward-shapes.json --out "$res/layouts-pytorch-$i.json" &&
      tail -3 "$res/layouts-pytorch-$i.log"
  done
  step layouts-again 60 "$bin/trainsim-calibrate" --gemm --dtypes bf16 --no-grid \
    --shapes scenarios/validation/gpt2-1xh100.backward-shapes.json --out "$res/layouts-again.json"
fi

if has tests; then
  step gpu-tests 150 ctest --test-dir "$bin" -L gpu -j1 --output-on-failure
  grep -E "tests passed|\*\*\*Failed|\*\*\*Timeout|Not Run|Exception" "$res/gpu-tests.log" | head -20
  echo "$(grep -c '\*\*\*Skipped' "$res/gpu-tests.log") GPU tests skipped"
fi

if has pytorch; then
  for spec in "124m 12 768 12" "350m 24 1024 16" "774m 36 1280 20"; do
    read -r name layers hidden heads <<< "$spec"
    step "pytorch-gpt2-$name" 90 python3 scripts/pytorch-gpt-step.py --layers "$layers" --hidden "$hidden" \
      --heads "$heads" --vocab 50304 --batch 8 --seq 1024 --steps 30 --warmup 8 --top-kernels 25 \
      --out "$res/pytorch-gpt2-$name.json" --run-out "$res/pytorch-gpt2-$name.run.json" &&
      tail -1 "$res/pytorch-gpt2-$name.log"
  done
  (cd "$res" && tar czf pytorch-gpt2.tar.gz pytorch-gpt2-* && rm -f pytorch-gpt2-*)
fi
echo "device-followup.sh done: $failures failure(s)"
[ "$failures" -eq 0 ]
