#!/usr/bin/env bash
# Every GPU measurement issues 5 and 6 still need, in one call on a lent GPU machine:
# the GPU build (or the one carried from the development machine), the calibration
# profile, the PyTorch references (GEMM table, GPT-2 steps), the GPU tests and the real
# trainer (gradient check, checkpoint/resume, loss on the shipped corpus, GPT-2 sizes).
#
# Usage: scripts/device-session.sh OUT_DIR [budget seconds, default 480] [steps]
#   steps: comma-separated, default all, run in this order:
#     env,build,calibrate,calkill,torchref,gemm,pytorch,graph,llama,tests,check,sizes,loss
#   graph: the GPT-2 steps eager and captured as one CUDA graph (scripts/pytorch-graph-step.py);
#   llama: torchtitan's Llama 3 8B step at 2 and 8 layers, eager and compiled, with the
#          allocator's reserved memory beside the allocated (scripts/pytorch-llama-step.py)
#   gemmcheck: the GPT-2 GEMMs (scenarios/validation/gpt2-v50304.layer-gemms.json, three
#          layouts) timed by the harness, PyTorch and the harness again, alternately, so a
#          profile's rows can be held against PyTorch's on the same card (docs/calibration.md)
#
# Why one script with a budget: a session is lent 15 minutes of device time in all,
# the machine's start included (/work/.library/device/README.md), so the checks must
# run as one call that ends well inside the 10-minute command limit and leaves time to
# re-run what failed. Steps run in the order of what they settle (the profile and the
# PyTorch references for issue 5 first, the trainer for issue 6 after); every step has
# its own time limit, cut to what is left of the budget, and a step that cannot get
# its minimum is skipped and says so. A failing step prints its exit status and the end
# of its log; the others still run.
#
# Results: everything goes to build/device-session/; after every step OUT_DIR holds
# device-session.tar.gz (that folder) and summary.txt (what this script printed), each
# replaced atomically, so a call cut short still brings back what was measured (the
# device tool returns at most 8 files). On the development machine:
#   scripts/device-results.py /work/.device/.../device-session.tar.gz
# installs the profile and the PyTorch reference and prints the issue-5/6 tables.
#
# The build: build/device carried from the development machine (scripts/device-prebuild.sh,
# then `carry: ["build/device"]`) is used when it was built from the same sources and its
# binaries load here (ldd finds every library); otherwise it is built here (-j16).
set -uo pipefail
out=${1:?output directory}
budget=${2:-480}
steps=${3:-env,build,calibrate,calkill,torchref,gemm,pytorch,graph,llama,gemmcheck,tests,check,sizes,loss}
start=$(date +%s)
deadline=$((start + budget))
mkdir -p "$out" && out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.." || exit 1
res=build/device-session
rm -rf "$res" && mkdir -p "$res"
corpus=kernels/trainer/corpus/kjv-genesis-2samuel.txt
# The three GPT-2 shapes of scenarios/validation/gpt2-*-1xh100.json: 8 x 1024 tokens,
# vocabulary 50304 (GPT-2's 50257 padded to a multiple of 128, as nanoGPT and llm.c do).
sizes=("124m 12 768 12" "350m 24 1024 16" "774m 36 1280 20")
vocab=50304
# Built with MPI, the binaries call MPI_Init even when started alone; the machine runs as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1

has() { [[ ",$steps," == *",$1,"* ]]; }
left() { echo $((deadline - $(date +%s))); }
say() { echo "$*" | tee -a "$res/summary.txt"; }
pack() {
  cp "$res/summary.txt" "$out/summary.txt.tmp" 2> /dev/null && mv -f "$out/summary.txt.tmp" "$out/summary.txt"
  tar czf "$out/device-session.tar.gz.tmp" "$res" 2> /dev/null &&
    mv -f "$out/device-session.tar.gz.tmp" "$out/device-session.tar.gz"
}
trap pack EXIT
failures=0
skipped=0
# run NAME LIMIT MINIMUM COMMAND...: runs COMMAND with stdout+stderr in $res/NAME.log,
# for at most LIMIT seconds or what is left of the budget (keeping 5 s to pack), and
# not at all when less than MINIMUM is left. Returns the command's status (125: skipped).
run() {
  local name=$1 limit=$2 minimum=$3
  shift 3
  local avail=$(($(left) - 5))
  if [ "$avail" -lt "$minimum" ]; then
    skipped=$((skipped + 1))
    say "SKIPPED: $name (${avail}s of the budget left, needs ${minimum}s)"
    return 125
  fi
  [ "$avail" -lt "$limit" ] && limit=$avail
  local t0
  t0=$(date +%s)
  timeout -s TERM -k 10 "$limit" "$@" > "$res/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc in $(($(date +%s) - t0)) s (limit ${limit} s)" >> "$res/times.txt"
  if [ $rc -ne 0 ]; then
    failures=$((failures + 1))
    say "FAILED: $name exit $rc$([ $rc -eq 124 ] && echo " (time limit ${limit} s)"): $*"
    tail -15 "$res/$name.log" | tee -a "$res/summary.txt"
  fi
  return $rc
}

say "device-session.sh: steps $steps, budget ${budget} s, $(date -u +%FT%TZ), carried build from $(cut -d" " -f2- build/device/BUILT_ON 2> /dev/null || echo nowhere)"

gpu_name=unknown
if has env; then
  run env 30 5 sh -c 'nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv;
    nvcc --version | tail -1; python3 -c "import torch; print(\"torch\", torch.__version__, \"cuda\", torch.version.cuda, \"cudnn\", torch.backends.cudnn.version())";
    nproc; free -g | head -2'
  cat "$res/env.log" >> "$res/summary.txt"
fi
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
# The profile's file name (DESIGN.md's scenarios/calibration/h100-sxm5-80gb.json).
case "$gpu_name" in
  *H100*) profile_name=h100-sxm5-80gb ;;
  *H200*) profile_name=h200-sxm-141gb ;;
  *) profile_name=$(echo "${gpu_name:-gpu}" | tr 'A-Z ' 'a-z-') ;;
esac
echo "$profile_name" > "$res/profile-name.txt"

# Libraries the carried binaries name but the loader does not find where this machine's
# image keeps them (CUDA under /usr/local/cuda*/lib64, NCCL or cuBLAS from pip wheels):
# their folders go on LD_LIBRARY_PATH, so a carried build loads without a rebuild (a
# rebuild here needs nlohmann-json and CLI11, which GPU images may lack).
find_missing_libraries() {
  local b lib dir
  for b in build/device/trainsim-calibrate build/device/trainsim-train; do
    [ -x "$b" ] || continue
    for lib in $(ldd "$b" 2> /dev/null | awk '/not found/ {print $1}'); do
      dir=$(find /usr/local /usr/lib /opt -name "$lib" 2> /dev/null | head -1 | xargs -r dirname)
      [ -n "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    done
  done
  [ -n "${LD_LIBRARY_PATH:-}" ] && say "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  return 0
}
find_missing_libraries

# A carried build is used only if it was built from these sources (scripts/source-hash.sh)
# and every library it needs loads. Its CMake files name the development machine's
# checkout; where that path does not exist here, a link to this checkout stands in.
carried_ok() {
  local b src
  [ -s build/device/BUILT_FROM ] || return 1
  [ "$(cat build/device/BUILT_FROM)" = "$(scripts/source-hash.sh build/device 2> /dev/null)" ] || return 1
  for b in trainsim-calibrate trainsim-train; do
    [ -x "build/device/$b" ] || return 1
    ldd "build/device/$b" | grep "not found" > /dev/null && return 1
  done
  src=$(cut -d' ' -f1 build/device/BUILT_ON)
  if [ "$src" != "$(pwd)" ] && [ ! -e "$src" ]; then
    mkdir -p "$(dirname "$src")" && ln -s "$(pwd)" "$src" || return 1
  fi
  return 0
}
# The carried build in build/device, else one built here in build/device-native (a
# carried CMake cache names another source folder, so it is not rebuilt in place).
if carried_ok; then bindir=build/device; else bindir=build/device-native; fi
if has build; then
  if [ "$bindir" = build/device ]; then
    say "build: carried build/device ($(cat "$bindir/BUILT_ON")), same sources, libraries load"
  else
    say "build: in $bindir (no carried build, other sources, or a library missing)"
    if run configure 60 20 cmake -S . -B "$bindir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINSIM_GPU_ONLY=ON \
        -DCMAKE_CUDA_ARCHITECTURES=90 -DTRAINSIM_GTEST_SOURCE=/usr/src/googletest; then
      grep -E "trainsim: (CUDA|MPI) part" "$res/configure.log" | tee -a "$res/summary.txt"
      # Keep going past a broken target: what did build still runs.
      run build 300 60 cmake --build "$bindir" -j16 -- -k 0 ||
        grep -E "error|FAILED" "$res/build.log" | head -20 | tee -a "$res/summary.txt"
    fi
  fi
  pack
fi

if has calibrate; then
  # SIGTERM at the limit: the harness keeps what it measured ("complete": false).
  # --shapes adds the validation scenarios' exact GEMM shapes to the grid.
  run calibrate 150 60 "$bindir/trainsim-calibrate" --out "$res/profile.json" \
    --shapes scenarios/validation/gpt2-1xh100.shapes.json
  grep -E "^# |launch overhead|wrote|interrupted" "$res/calibrate.log" 2> /dev/null | head -20 | tee -a "$res/summary.txt"
  pack
fi

if has calkill && [ ! -f "$res/profile.json" ]; then
  skipped=$((skipped + 1))
  say "SKIPPED: calkill (no profile.json to compare with: the calibrate step did not write one)"
elif has calkill; then
  # Issue 29 item 2: the calibrate step's command again, killed (SIGKILL: nothing
  # written on the way out) halfway through the time the whole run took, then the
  # same command with --resume; the two profiles must hold the same measurements.
  whole_s=$(awk '/^calibrate: exit 0 in/ {print $5}' "$res/times.txt")
  kill_at=$(( ${whole_s:-60} / 2 > 5 ? ${whole_s:-60} / 2 : 5 ))
  cal=("$bindir/trainsim-calibrate" --out "$res/profile-killed.json" --shapes scenarios/validation/gpt2-1xh100.shapes.json)
  if [ $(($(left) - 5)) -gt $((kill_at + 90)) ]; then
    timeout -s KILL "$kill_at" "${cal[@]}" > "$res/calkill-part.log" 2>&1
    say "calkill: killed after ${kill_at} s of the whole run's ${whole_s:-?} s (exit $?), journal" \
      "$(wc -l < "$res/profile-killed.json.journal" 2> /dev/null || echo 0) lines"
    if run calkill-resume 150 60 "${cal[@]}" --resume; then
      python3 scripts/device-calibrate-resume-check.py "$res/profile.json" "$res/profile-killed.json" \
        "$res/calkill-resume.log" 2>&1 | tee -a "$res/summary.txt"
      [ "${PIPESTATUS[0]}" -eq 0 ] || failures=$((failures + 1))
    fi
  else
    skipped=$((skipped + 1))
    say "SKIPPED: calkill ($(($(left) - 5)) s of the budget left, needs $((kill_at + 90)) s)"
  fi
  pack
fi

if has torchref && [ ! -f "$res/profile.json" ]; then
  skipped=$((skipped + 1))
  say "SKIPPED: torchref (no profile.json: the calibrate step did not write one)"
elif has torchref; then
  # The kernels PyTorch itself runs in the eager step (its attention, layer norm, casts,
  # adds, ...), for the PyTorch eager predictions: sdpa_* and torch_* rows.
  run torchref 150 45 python3 scripts/pytorch-kernel-reference.py --profile "$res/profile.json" &&
    grep -E "s 1024 d  64|^added|^host dispatch" "$res/torchref.log" | tee -a "$res/summary.txt"
  pack
fi

if has gemm; then
  # ../shared/validation/PUBLIC_DATA.md's GEMM table, re-measured with PyTorch on this card.
  run pytorch-gemm 90 30 python3 scripts/pytorch-gemm-reference.py --out "$res/pytorch-gemm.json" &&
    tail -8 "$res/pytorch-gemm.log" | tee -a "$res/summary.txt"
  pack
fi

if has pytorch; then
  for spec in "${sizes[@]}"; do
    read -r name layers hidden heads <<< "$spec"
    run "pytorch-gpt2-$name" 120 40 python3 scripts/pytorch-gpt-step.py --layers "$layers" --hidden "$hidden" \
      --heads "$heads" --vocab "$vocab" --batch 8 --seq 1024 --steps 30 --warmup 8 \
      --top-kernels 25 --out "$res/pytorch-gpt2-$name.json" --run-out "$res/pytorch-gpt2-$name.run.json" \
      --profile-trace "$res/pytorch-gpt2-$name.trace.json" &&
      tail -1 "$res/pytorch-gpt2-$name.log" | tee -a "$res/summary.txt"
    pack
  done
fi

if has graph; then
  for spec in "${sizes[@]}"; do
    read -r name layers hidden heads <<< "$spec"
    run "graph-gpt2-$name" 90 30 python3 scripts/pytorch-graph-step.py --layers "$layers" --hidden "$hidden" \
      --heads "$heads" --vocab "$vocab" --batch 8 --seq 1024 --steps 30 --warmup 8 \
      --out "$res/graph-gpt2-$name.json" &&
      tail -1 "$res/graph-gpt2-$name.log" | tee -a "$res/summary.txt"
    pack
  done
fi

if has llama; then
  # Rows are saved one by one: a run cut at its limit keeps the eager rows.
  run llama 200 60 python3 scripts/pytorch-llama-step.py --layers 2,8 --compile --out "$res/llama.json"
  grep -E "^layers|^compile" "$res/llama.log" 2> /dev/null | tee -a "$res/summary.txt"
  pack
fi

if has gemmcheck; then
  shapes=scenarios/validation/gpt2-v50304.layer-gemms.json
  cal=("$bindir/trainsim-calibrate" --gemm --dtypes bf16 --no-grid --shapes "$shapes")
  run gemmcheck-harness-1 90 20 "${cal[@]}" --out "$res/gemmcheck-harness-1.json" &&
    run gemmcheck-torch 90 20 python3 scripts/pytorch-backward-gemms.py --shapes "$shapes" --warm \
      --out "$res/gemmcheck-torch.json" &&
    run gemmcheck-harness-2 90 20 "${cal[@]}" --out "$res/gemmcheck-harness-2.json" &&
    python3 - "$res" <<'PY' | tee -a "$res/summary.txt"
import json, statistics, sys
res = sys.argv[1]
def rows(name):
    return {(r["m"], r["n"], r["k"], r.get("layout", "forward")): r["seconds"]
            for r in json.load(open(f"{res}/{name}.json"))["gemm"]}
h1, h2 = rows("gemmcheck-harness-1"), rows("gemmcheck-harness-2")
torch = json.load(open(f"{res}/gemmcheck-torch.json"))["rows"]
for layout in ("forward", "data_gradient", "weight_gradient"):
    r = [(h1[k] + h2[k]) / 2 / t["seconds"] for t in torch
         if (k := (t["m"], t["n"], t["k"], t["layout"])) in h1 and k in h2 and t["layout"] == layout]
    if r:
        print(f"gemmcheck {layout}: harness / PyTorch median {statistics.median(r):.3f} over {len(r)} shapes "
              f"(min {min(r):.3f}, max {max(r):.3f})")
PY
  pack
fi

if has tests; then
  run gpu-tests 150 40 ctest --test-dir "$bindir" -L gpu -j1 --output-on-failure
  grep -E "tests passed|\*\*\*Failed|\*\*\*Timeout|Not Run|Exception" "$res/gpu-tests.log" 2> /dev/null | head -30 |
    tee -a "$res/summary.txt"
  echo "$(grep -c '\*\*\*Skipped' "$res/gpu-tests.log" 2> /dev/null) GPU tests skipped" | tee -a "$res/summary.txt"
  pack
fi

train=$bindir/trainsim-train
if has check; then
  grad=$bindir/tests/gpu/trainsim_gpu_trainer_gradient_gpu_test
  if run gradient-check 90 20 "$grad"; then
    if grep -q "SKIPPED" "$res/gradient-check.log"; then
      failures=$((failures + 1))
      say "gradient check SKIPPED (no usable GPU?)"
    else
      say "gradient check OK"
    fi
  elif [ $? -ne 125 ]; then
    san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2> /dev/null)
    [ -n "$san" ] && run gradient-check-memcheck 120 30 "$san" --tool memcheck --print-limit 20 "$grad"
  fi
  grep -E "loss:|relative L2|OK|FAILED|Skipped" "$res/gradient-check.log" 2> /dev/null | head -30 |
    tee -a "$res/summary.txt"
  # Checkpoint and resume against the run-to-run spread: the attention backward sums dQ
  # with fp32 atomics, so two identical runs need not agree to the last bit; a lost
  # optimizer state or data position moves the loss far more.
  common=(--layers 2 --hidden 128 --heads 2 --seq 256 --micro-batch 8 --steps 6 --warmup-steps 1
          --eval-batches 2 --data "$corpus" --timeline false)
  rm -f "$res/resume.ckpt"
  if run resume-full 60 15 "$train" "${common[@]}" --out "$res/resume-full.json" &&
     run resume-again 60 15 "$train" "${common[@]}" --out "$res/resume-again.json" &&
     run resume-part 60 15 "$train" "${common[@]}" --stop-at 3 --checkpoint "$res/resume.ckpt" \
       --out "$res/resume-part.json" &&
     run resume-rest 60 15 "$train" "${common[@]}" --resume --checkpoint "$res/resume.ckpt" \
       --out "$res/resume-rest.json"; then
    python3 scripts/device-resume-check.py "$res" 2>&1 | tee -a "$res/summary.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || failures=$((failures + 1))
  fi
  rm -f "$res/resume.ckpt"
  pack
fi

if has sizes; then
  for spec in "${sizes[@]}"; do
    read -r name layers hidden heads <<< "$spec"
    # --vocab 50257 pads the LM head to 50304 (--vocab-multiple 128): the PyTorch run's shape.
    size_args=(--layers "$layers" --hidden "$hidden" --heads "$heads" --seq 1024 --micro-batch 8 --vocab 50257
               --eval-batches 1 --data "$corpus")
    if ! run "train-gpt2-$name" 120 40 "$train" "${size_args[@]}" --steps 30 --warmup-steps 8 \
        --out "$res/train-gpt2-$name.json"; then
      [ "$(left)" -gt 60 ] && CUDA_LAUNCH_BLOCKING=1 run "train-gpt2-$name-blocking" 60 30 "$train" \
        "${size_args[@]}" --steps 3 --warmup-steps 1 --out "$res/train-gpt2-$name-blocking.json"
    else
      grep -E "parameters|^step 29 |held-out|peak" "$res/train-gpt2-$name.log" | tee -a "$res/summary.txt"
    fi
    pack
  done
fi

if has loss; then
  # Loss on the shipped corpus: from about ln 256 = 5.55 down, held-out loss every 100 steps.
  loss_args=(--layers 6 --hidden 512 --heads 8 --seq 512 --micro-batch 16 --lr 1e-3 --lr-warmup 40 --data "$corpus")
  run kjv-loss 150 40 "$train" "${loss_args[@]}" --steps 400 --warmup-steps 10 --eval-interval 100 \
    --out "$res/kjv-loss.json" &&
    grep -E "^step (0|99|199|299|399) |held-out|parameters" "$res/kjv-loss.log" | tee -a "$res/summary.txt"
  pack
fi

say "device-session.sh done: $failures failure(s), $skipped skipped, $(($(date +%s) - start)) s of ${budget} s, $(date -u +%FT%TZ)"
[ "$failures" -eq 0 ]
