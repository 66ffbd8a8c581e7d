#!/usr/bin/env bash
# The card's SM clock, power and throttle reasons (nvidia-smi every 50 ms) while the
# harness times the GPT-2 backward GEMMs alone, while PyTorch times the same GEMMs alone
# (scripts/pytorch-backward-gemms.py) and while PyTorch runs the 774M eager step; prints
# each phase's clock and power. On a lent GPU with build/device carried:
#   scripts/device-clocks.sh OUT_DIR
# Writes OUT_DIR/clocks.csv, marks.txt (phase boundaries) and each phase's output.
set -u
O=${1:?output directory}
mkdir -p "$O"
cd "$(dirname "$0")/.." || exit 1
q=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active
nvidia-smi --query-gpu=$q --format=csv,noheader > /dev/null 2>&1 || q=timestamp,clocks.sm,power.draw,temperature.gpu
nvidia-smi --query-gpu=$q --format=csv,noheader -lms 50 > $O/clocks.csv &
M=$!
mark() { echo "$1 $(date '+%Y/%m/%d %H:%M:%S.%N')" >> $O/marks.txt; }
sleep 1; mark idle-end
mark harness-start
build/device/trainsim-calibrate --gemm --dtypes bf16 --no-grid --shapes scenarios/validation/gpt2-1xh100.backward-shapes.json --out $O/harness.json > $O/harness.log 2>&1
mark harness-end
sleep 2
mark torch-gemm-start
python3 scripts/pytorch-backward-gemms.py --shapes scenarios/validation/gpt2-1xh100.backward-shapes.json --out $O/torch-gemm.json > $O/torch-gemm.log 2>&1
mark torch-gemm-end
sleep 2
mark step-start
python3 scripts/pytorch-gpt-step.py --layers 36 --hidden 1280 --heads 20 --vocab 50304 --batch 8 --seq 1024 --steps 30 --warmup 8 --top-kernels 12 --out $O/step.json > $O/step.log 2>&1
mark step-end
kill $M
tail -2 $O/step.log
python3 - $O <<'PY'
import sys, csv, datetime, statistics
O=sys.argv[1]
marks=[l.split(" ",1) for l in open(O+"/marks.txt")]
def ts(s): return datetime.datetime.strptime(s.strip()[:26], "%Y/%m/%d %H:%M:%S.%f")
rows=[]
for r in csv.reader(open(O+"/clocks.csv")):
    try: rows.append((ts(r[0]), float(r[1].split()[0]), float(r[2].split()[0]), r[-1].strip()))
    except Exception: pass
m={k:ts(v) for k,v in marks}
for a,b in [("harness-start","harness-end"),("torch-gemm-start","torch-gemm-end"),("step-start","step-end")]:
    sel=[r for r in rows if m[a]<=r[0]<=m[b]]
    if not sel: print(a,"no samples"); continue
    c=[r[1] for r in sel]; p=[r[2] for r in sel]
    print(f"{a[:-6]:10s} n={len(sel)} sm MHz median {statistics.median(c):.0f} p10 {sorted(c)[len(c)//10]:.0f} p90 {sorted(c)[len(c)*9//10]:.0f}; power W median {statistics.median(p):.0f} max {max(p):.0f}; reasons {sorted(set(r[3] for r in sel))[:4]}")
PY
