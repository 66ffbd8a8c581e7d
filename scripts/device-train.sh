#!/usr/bin/env bash
# trainsim-train on a lent GPU (docs/validation.md "Running trainsim-train"): build the GPU
# parts, check the trainer's gradients against the fp64 reference and checkpoint/resume,
# train on the shipped corpus until the loss falls, and time three GPT-2 sizes against
# PyTorch eager on the same shapes. `trainsim validate` runs on each measured run when
# $TRAINSIM names a trainsim binary; otherwise the commands are written to
# validate-commands.sh, to run where the simulator is built.
# Usage: scripts/device-train.sh OUT_DIR [phases, comma-separated: build,check,loss,sizes]
#
# Results: every log and JSON goes to build/device-train/ (kept between calls while the
# machine stays warm). After each phase OUT_DIR holds two files: device-train.tar.gz (all
# of build/device-train; `tar xzf` it in the repository root, then run
# `sh build/device-train/validate-commands.sh` there) and summary.txt (what this script
# printed). The device tool brings back at most 8 files from OUT_DIR, so nothing else is
# written there.
#
# Nothing here has run yet, so its time is unknown. To stay inside the 10-minute limit of
# one device call, run "build,check" first and "loss,sizes" in a second call (build/device
# is kept between calls while the machine stays warm). Every run has its own time limit, so
# a hang costs that run, not the call. A failed run prints its exit status and the end of
# its log; a failing gradient check is re-run under compute-sanitizer and a failing trainer
# run with CUDA_LAUNCH_BLOCKING=1, so the log names the kernel.
set -uo pipefail
out=${1:?output directory}
phases=${2:-build,check,loss,sizes}
mkdir -p "$out" && out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.." || exit 1
res=build/device-train
mkdir -p "$res"
has() { [[ ",$phases," == *",$1,"* ]]; }
bin=build/device/trainsim-train
corpus=kernels/trainer/corpus/kjv-genesis-2samuel.txt
profile=scenarios/calibration/h200-sxm-141gb.json
# Built with MPI, trainsim-train calls MPI_Init even when started alone; the device runs as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

say() { echo "$*" | tee -a "$res/summary.txt"; }
pack() {  # OUT_DIR's two files, replaced atomically
  cp "$res/summary.txt" "$out/summary.txt" 2>/dev/null
  tar czf "$out/device-train.tar.gz.tmp" "$res" && mv -f "$out/device-train.tar.gz.tmp" "$out/device-train.tar.gz"
}
trap pack EXIT
failures=0
# run NAME SECONDS COMMAND...: runs with a time limit, stdout+stderr to $res/NAME.log; on
# failure says so with the end of the log. Returns the command's status.
run() {
  local name=$1 limit=$2
  shift 2
  timeout -s TERM -k 10 "$limit" "$@" > "$res/$name.log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ]; then
    failures=$((failures + 1))
    say "FAILED: $name exit $rc$([ $rc -eq 124 ] && echo " (time limit ${limit}s)"): $*"
    tail -15 "$res/$name.log" | tee -a "$res/summary.txt"
  fi
  return $rc
}
# A failed trainer run again with synchronous launches: the error then names the kernel.
rerun_blocking() {
  local name=$1
  shift
  say "re-running $name with CUDA_LAUNCH_BLOCKING=1"
  CUDA_LAUNCH_BLOCKING=1 run "$name-blocking" 300 "$@"
}

say "device-train.sh $phases, $(date -u +%FT%TZ)"
if has build; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv \
    2>&1 | tee "$res/device.txt" | tee -a "$res/summary.txt"
  if ! cmake -S . -B build/device -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINSIM_GPU_ONLY=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DTRAINSIM_GTEST_SOURCE=/usr/src/googletest > "$res/configure.log" 2>&1; then
    say "FAILED: configure"; tail -30 "$res/configure.log" | tee -a "$res/summary.txt"; exit 1
  fi
  grep -E "trainsim: (CUDA|MPI) part" "$res/configure.log" | tee -a "$res/summary.txt"
  if ! cmake --build build/device -j16 --target trainsim-train trainsim_gpu_trainer_gradient_gpu_test \
      > "$res/build.log" 2>&1; then
    say "FAILED: build"; grep -E "error|FAILED" "$res/build.log" | head -20 | tee -a "$res/summary.txt"; exit 1
  fi
  say "build OK"
  pack
fi
test -x "$bin" || { say "no $bin: run the build phase"; exit 1; }

if has check; then
  grad=build/device/tests/gpu/trainsim_gpu_trainer_gradient_gpu_test
  if run gradient-check 180 "$grad"; then
    if grep -q "SKIPPED" "$res/gradient-check.log"; then failures=$((failures + 1)); say "gradient check SKIPPED (no usable GPU?)"
    else say "gradient check OK"; fi
  else
    san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2> /dev/null)
    [ -n "$san" ] && run gradient-check-memcheck 300 "$san" --tool memcheck --print-limit 20 "$grad"
  fi
  grep -E "loss:|relative L2|OK|FAILED|Skipped" "$res/gradient-check.log" | head -40 | tee -a "$res/summary.txt"
  pack
  # Checkpoint and resume: the resumed run's losses against the uninterrupted run's. The
  # attention backward sums dQ with fp32 atomics, so two identical runs need not agree to
  # the last bit: a second uninterrupted run measures that run-to-run spread, and the
  # resumed run must agree with the first within it (a lost optimizer state or data
  # position moves the loss far more).
  common=(--layers 2 --hidden 128 --heads 2 --seq 256 --micro-batch 8 --steps 6 --warmup-steps 1
          --eval-batches 2 --data "$corpus" --timeline false)
  rm -f "$res/resume.ckpt"
  if run resume-full 120 "$bin" "${common[@]}" --out "$res/resume-full.json" &&
     run resume-again 120 "$bin" "${common[@]}" --out "$res/resume-again.json" &&
     run resume-part 120 "$bin" "${common[@]}" --stop-at 3 --checkpoint "$res/resume.ckpt" --out "$res/resume-part.json" &&
     run resume-rest 120 "$bin" "${common[@]}" --resume --checkpoint "$res/resume.ckpt" --out "$res/resume-rest.json"; then
    python3 - "$res" <<'PY' 2>&1 | tee -a "$res/summary.txt"
import json, sys
d = sys.argv[1]
def losses(name):
    return {s["step"]: s["loss"] for s in json.load(open(f"{d}/{name}.json"))["steps"]}
full, again, rest = losses("resume-full"), losses("resume-again"), losses("resume-rest")
ok = True
for s in sorted(rest):
    spread = abs(full[s] - again[s])
    diff = abs(full[s] - rest[s])
    good = diff <= 4 * spread + 1e-6 * abs(full[s])
    ok &= good
    print(f"step {s}: uninterrupted {full[s]!r}  again {again[s]!r}  resumed {rest[s]!r}  "
          f"|resumed - uninterrupted| {diff:.3g} vs run-to-run {spread:.3g}  {'OK' if good else 'DIFFERENT'}")
print("checkpoint/resume", "OK" if ok else "FAILED")
sys.exit(0 if ok else 1)
PY
    [ "${PIPESTATUS[0]}" -eq 0 ] || failures=$((failures + 1))
  else
    rerun_blocking resume-full "$bin" "${common[@]}" --out "$res/resume-full-blocking.json"
  fi
  rm -f "$res/resume.ckpt"
  pack
fi

if has loss; then
  # Loss on the shipped corpus: from about ln 256 = 5.55 down, held-out loss every 100 steps.
  loss_args=(--layers 6 --hidden 512 --heads 8 --seq 512 --micro-batch 16 --lr 1e-3 --lr-warmup 40 --data "$corpus")
  if run kjv-loss 300 "$bin" "${loss_args[@]}" --steps 400 --warmup-steps 10 --eval-interval 100 \
      --out "$res/kjv-loss.json"; then
    grep -E "^step (0|99|199|299|399) |held-out|parameters" "$res/kjv-loss.log" | tee -a "$res/summary.txt"
  else
    rerun_blocking kjv-loss "$bin" "${loss_args[@]}" --steps 12 --warmup-steps 2 --out "$res/kjv-loss-blocking.json"
  fi
  pack
fi

if has sizes; then
  : > "$res/validate-commands.sh"
  for spec in "124m 12 768 12" "350m 24 1024 16" "774m 36 1280 20"; do
    read -r name layers hidden heads <<< "$spec"
    # The scenarios/validation/gpt2-*-1xh200.json shapes: B = 8, T = 1024, vocabulary 50257
    # padded to 50304 (bytes are the tokens; the wider LM head only matches the shapes).
    size_args=(--layers "$layers" --hidden "$hidden" --heads "$heads" --seq 1024 --micro-batch 8 --vocab 50257
               --eval-batches 1 --data "$corpus")
    if run "gpt2-$name" 180 "$bin" "${size_args[@]}" --steps 30 --warmup-steps 8 --out "$res/gpt2-$name.json"; then
      grep -E "parameters|^step 29 |held-out" "$res/gpt2-$name.log" | tee -a "$res/summary.txt"
      python3 -c "import json; r = json.load(open('$res/gpt2-$name.json')); print('  median step', r['step_time_s'], 'peak', r['peak_memory_bytes'], 'classes', r['kernel_class_s'])" 2>&1 | tee -a "$res/summary.txt"
      cmd="trainsim validate --measured $res/gpt2-$name.json --calibration $profile --out $res/validate-$name"
      echo "$cmd" >> "$res/validate-commands.sh"
      if [ -n "${TRAINSIM:-}" ]; then
        # shellcheck disable=SC2086  # the command line is split into its arguments on purpose
        run "validate-$name" 120 "$TRAINSIM" ${cmd#trainsim } && head -20 "$res/validate-$name.log" | tee -a "$res/summary.txt"
      fi
    else
      rerun_blocking "gpt2-$name" "$bin" "${size_args[@]}" --steps 3 --warmup-steps 1 --out "$res/gpt2-$name-blocking.json"
    fi
    run "pytorch-gpt2-$name" 240 python3 scripts/pytorch-gpt-step.py --layers "$layers" --hidden "$hidden" \
      --heads "$heads" --vocab 50304 --batch 8 --seq 1024 --steps 30 --warmup 8 --out "$res/pytorch-gpt2-$name.json" &&
      tail -2 "$res/pytorch-gpt2-$name.log" | tee -a "$res/summary.txt"
    pack
  done
fi
say "device-train.sh $phases done, $failures failure(s), $(date -u +%FT%TZ)"
[ "$failures" -eq 0 ]
