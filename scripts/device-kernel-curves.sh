#!/usr/bin/env bash
# Kernel efficiency curves for issue 23 on a lent GPU, in one call (no build needed):
#   env        the GPU, driver, PyTorch, cuDNN, clocks and power before the runs
#   dense      an 8192^3 bf16 torch.mm (random data, median of 20) against the card's
#              earlier sessions, so the other numbers can be read against its state
#   grouped    grouped expert GEMMs in their three stages (scripts/pytorch-grouped-gemm-stages.py)
#   attention  causal flash attention at 4K-128K tokens (scripts/pytorch-long-attention.py)
#   sdpa       causal attention at 512-4096 tokens, 8192 per batch, as the H100 preset's
#              curve was measured (scripts/pytorch-kernel-reference.py --only sdpa)
#   overlap    compute kernels beside a stand-in for an NCCL kernel's footprint
#              (scripts/pytorch-overlap-contention.py)
#   gemm       the GEMM reference table of PUBLIC_DATA.md section 3, the shapes of the H100
#              preset's matmul curve (scripts/pytorch-gemm-reference.py)
#   llama      torchtitan's Llama 3 8B step (Dec 2024 model code, op SAC, 2 x 8192 tokens) at
#              2, 4 and 8 layers, eager and compiled, flash attention (scripts/pytorch-llama-step.py),
#              with the SM clock and power sampled every 200 ms (llama-clocks.csv)
#   llamacudnn the same, eager, at 2 and 8 layers on cuDNN attention
# Usage: scripts/device-kernel-curves.sh OUT_DIR [steps, default env,dense,grouped,attention]
# Each step writes build/kernel-curves/<step>.log (and .json), has its own time limit,
# and a failing step prints its status and log tail while the others still run. That
# folder is packed into OUT_DIR/kernel-curves.tar.gz after every step (the device tool
# returns at most 8 files).
set -uo pipefail
dest=${1:?output directory}
mkdir -p "$dest" && dest=$(cd "$dest" && pwd)
cd "$(dirname "$0")/.." || exit 1
out=build/kernel-curves
rm -rf "$out" && mkdir -p "$out"
pack() { tar czf "$dest/kernel-curves.tar.gz.tmp" -C build kernel-curves && mv -f "$dest/kernel-curves.tar.gz.tmp" "$dest/kernel-curves.tar.gz"; }
smi=
trap 'pack; [ -n "$smi" ] && kill "$smi" 2> /dev/null' EXIT
export PYTHONUNBUFFERED=1
steps=${2:-env,dense,grouped,attention}
has() { [[ ",$steps," == *",$1,"* ]]; }
failures=0
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$(date +%s)
  timeout -k 5 "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc in $(($(date +%s) - t0)) s (limit $limit s)"
  [ $rc -eq 0 ] || { failures=$((failures + 1)); tail -8 "$out/$name.log"; }
  pack
}
has env && step env 30 bash -c 'nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv;
  python3 -c "import torch; p=torch.cuda.get_device_properties(0); print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), p.name, p.multi_processor_count, \"SMs\")"'
has dense && step dense 60 python3 -c '
import statistics, torch
a, b = (torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) for _ in range(2))
for _ in range(5): a @ b
ts = []
for _ in range(20):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(2_000_000); s.record(); a @ b; e.record(); e.synchronize(); ts.append(s.elapsed_time(e) * 1e-3)
print(f"8192^3 bf16 torch.mm: {2 * 8192**3 / statistics.median(ts) / 1e12:.1f} TFLOP/s (median of 20)")'
has grouped && step grouped 200 python3 scripts/pytorch-grouped-gemm-stages.py --fp8 --out "$out/grouped.json"
has attention && step attention 150 python3 scripts/pytorch-long-attention.py --out "$out/attention.json"
if has sdpa; then
  echo '{"kernels": []}' > "$out/sdpa.json"
  step sdpa 120 python3 scripts/pytorch-kernel-reference.py --profile "$out/sdpa.json" --only sdpa
fi
has overlap && step overlap 240 python3 scripts/pytorch-overlap-contention.py --out "$out/overlap.json"
has gemm && step gemm 90 python3 scripts/pytorch-gemm-reference.py --out "$out/gemm.json"
if has llama; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 200 > "$out/llama-clocks.csv" 2>&1 &
  smi=$!
  step llama 330 python3 scripts/pytorch-llama-step.py --compile --out "$out/llama.json"
  kill "$smi" 2> /dev/null
  smi=
fi
has llamacudnn && step llama-cudnn 120 python3 scripts/pytorch-llama-step.py --attention cudnn --layers 2,8 --out "$out/llama-cudnn.json"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv >> "$out/env.log" 2>&1
for f in dense grouped attention sdpa overlap gemm llama llama-cudnn; do [ -f "$out/$f.log" ] && tail -4 "$out/$f.log"; done
echo "failures: $failures"
exit $((failures > 0))
