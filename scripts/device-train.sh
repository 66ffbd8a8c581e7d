#!/usr/bin/env bash
# trainsim-train on a lent GPU (docs/validation.md "Running trainsim-train"): build the GPU
# parts, check the trainer's gradients against the fp64 reference and checkpoint/resume,
# train on the shipped corpus until the loss falls, and time three GPT-2 sizes against
# PyTorch eager on the same shapes. `trainsim validate` runs on each measured run when
# $TRAINSIM names a trainsim binary; otherwise the commands are written to
# OUT/validate-commands.sh to run where the simulator is built.
# Usage: scripts/device-train.sh OUT_DIR [phases, comma-separated: build,check,loss,sizes]
# Nothing here has run yet, so its time is unknown. To stay inside the 10-minute limit of
# one device call, run "build,check" first and "loss,sizes" in a second call (build/device
# is kept between calls while the machine stays warm).
set -uo pipefail
out=${1:?output directory}
phases=${2:-build,check,loss,sizes}
cd "$(dirname "$0")/.."
mkdir -p "$out"
has() { [[ ",$phases," == *",$1,"* ]]; }
bin=build/device/trainsim-train
corpus=kernels/trainer/corpus/kjv-genesis-2samuel.txt
profile=scenarios/calibration/h200-sxm-141gb.json

if has build; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv \
    | tee "$out/device.txt"
  cmake -S . -B build/device -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINSIM_GPU_ONLY=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DTRAINSIM_GTEST_SOURCE=/usr/src/googletest > "$out/configure.log" 2>&1 \
    || { tail -30 "$out/configure.log"; exit 1; }
  cmake --build build/device -j16 --target trainsim-train trainsim_gpu_trainer_gradient_gpu_test \
    > "$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -20; exit 1; }
fi
test -x "$bin" || { echo "no $bin: run the build phase"; exit 1; }

if has check; then
  build/device/tests/gpu/trainsim_gpu_trainer_gradient_gpu_test > "$out/gradient-check.log" 2>&1
  echo "gradient check exit $?"; grep -E "loss:|relative L2|OK|FAILED|Skipped" "$out/gradient-check.log" | head -40
  # Checkpoint and resume: the resumed run's first loss must equal the uninterrupted run's.
  common=(--layers 2 --hidden 128 --heads 2 --seq 256 --micro-batch 8 --steps 6 --warmup-steps 1
          --eval-batches 2 --data "$corpus" --timeline false)
  "$bin" "${common[@]}" --out "$out/resume-full.json" > "$out/resume-full.log" 2>&1
  "$bin" "${common[@]}" --stop-at 3 --checkpoint "$out/resume.ckpt" --out "$out/resume-part.json" \
    > "$out/resume-part.log" 2>&1
  "$bin" "${common[@]}" --resume --checkpoint "$out/resume.ckpt" --out "$out/resume-rest.json" \
    > "$out/resume-rest.log" 2>&1
  python3 - "$out" <<'PY'
import json, sys
d = sys.argv[1]
full = {s["step"]: s["loss"] for s in json.load(open(f"{d}/resume-full.json"))["steps"]}
rest = {s["step"]: s["loss"] for s in json.load(open(f"{d}/resume-rest.json"))["steps"]}
for s in sorted(rest):
    print(f"step {s}: uninterrupted {full[s]!r}  resumed {rest[s]!r}  {'identical' if full[s] == rest[s] else 'DIFFERENT'}")
PY
  rm -f "$out/resume.ckpt"
fi

if has loss; then
  # Loss on the shipped corpus: from about ln 256 = 5.55 down, held-out loss every 100 steps.
  "$bin" --layers 6 --hidden 512 --heads 8 --seq 512 --micro-batch 16 --steps 400 --warmup-steps 10 \
    --lr 1e-3 --lr-warmup 40 --eval-interval 100 --data "$corpus" --out "$out/kjv-loss.json" \
    > "$out/kjv-loss.log" 2>&1
  echo "loss run exit $?"; grep -E "^step (0|99|199|299|399) |held-out|parameters" "$out/kjv-loss.log"
fi

if has sizes; then
  : > "$out/validate-commands.sh"
  for spec in "124m 12 768 12" "350m 24 1024 16" "774m 36 1280 20"; do
    read -r name layers hidden heads <<< "$spec"
    # The scenarios/validation/gpt2-*-1xh200.json shapes: B = 8, T = 1024, vocabulary 50257
    # padded to 50304 (bytes are the tokens; the wider LM head only matches the shapes).
    "$bin" --layers "$layers" --hidden "$hidden" --heads "$heads" --seq 1024 --micro-batch 8 --vocab 50257 \
      --steps 30 --warmup-steps 8 --eval-batches 1 --data "$corpus" --out "$out/gpt2-$name.json" \
      > "$out/gpt2-$name.log" 2>&1
    echo "gpt2-$name exit $?"; grep -E "parameters|^step 29 |held-out" "$out/gpt2-$name.log"
    python3 -c "import json; r = json.load(open('$out/gpt2-$name.json')); print('  median step', r['step_time_s'], 'peak', r['peak_memory_bytes'], 'classes', r['kernel_class_s'])" 2>&1
    python3 scripts/pytorch-gpt-step.py --layers "$layers" --hidden "$hidden" --heads "$heads" --vocab 50304 \
      --batch 8 --seq 1024 --steps 30 --warmup 8 --out "$out/pytorch-gpt2-$name.json" 2>&1 | tail -2
    cmd="trainsim validate --measured $out/gpt2-$name.json --calibration $profile --out $out/validate-$name"
    echo "$cmd" >> "$out/validate-commands.sh"
    if [ -n "${TRAINSIM:-}" ]; then "$TRAINSIM" ${cmd#trainsim } > "$out/validate-$name.log" 2>&1; head -20 "$out/validate-$name.log"; fi
  done
fi
