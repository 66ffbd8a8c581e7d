#!/usr/bin/env bash
# Fuzzing the file readers for longer than CI does (issue 29, docs/architecture.md
# "Fuzzing"): builds the "fuzz" preset (clang, libFuzzer, ASan + UBSan) and runs each
# target SECONDS from its seed corpus and fuzz/regressions/, one at a time, on one core.
# Prints per target the inputs executed, the corpus it grew and whether it found
# anything (a finding is kept as build/fuzz/findings/TARGET/crash-*: add it to
# fuzz/regressions/TARGET/ with the fix). A benchmark: it always exits 0.
# Usage: scripts/bench-fuzz.sh [SECONDS per target] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(fuzz_scenario fuzz_calibration fuzz_measured_run fuzz_sweep_spec fuzz_nccl_tests)
cmake --preset fuzz > /dev/null
cmake --build --preset fuzz > /dev/null
cpu=$(taskset -pc $$ | sed 's/.*: //; s/[,-].*//')
printf '%-20s %10s %12s %8s  %s\n' target seconds executed corpus result
for t in "${targets[@]}"; do
  # The seed folders and options ctest uses (fuzz/CMakeLists.txt), from its test list.
  args=$(ctest --test-dir build/fuzz -R "^${t}\$" --show-only=json-v1 |
         python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["tests"][0]["command"][1:]))' |
         sed "s/-max_total_time=[0-9]*/-max_total_time=$seconds/")
  mkdir -p "build/fuzz/findings/$t"
  log="build/fuzz/findings/$t/log.txt"
  status=0
  (cd "build/fuzz/findings/$t" && taskset -c "$cpu" ../../fuzz/"$t" $args) > "$log" 2>&1 || status=$?
  executed=$(sed -n 's/^stat::number_of_executed_units: //p' "$log" | tail -1)
  corpus=$(find "build/fuzz/fuzz/corpus/$t" -type f | wc -l)
  if [[ $status -eq 0 ]]; then result="no finding"; else result="FINDING: $(grep -m1 -E 'fuzz finding|ERROR' "$log")"; fi
  printf '%-20s %10s %12s %8s  %s\n' "$t" "$seconds" "${executed:-?}" "$corpus" "$result"
done
