#!/usr/bin/env bash
# Resuming a killed sweep (issue 29, docs/sweep.md "Resuming"): each sweep spec is
# run once to the end, then RUNS times killed with SIGKILL at a random moment of its
# run (uniform over the uninterrupted run's wall time, from a fixed seed) and
# resumed with --resume until it finishes; the resumed points.csv and sweep.json
# must equal the uninterrupted ones byte for byte. Prints one line per run and a
# count. A benchmark, not a test: it always exits 0 (it says which runs differed).
# Usage: scripts/bench-sweep-resume.sh [TRAINSIM] [RUNS per spec] [JOBS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build/test/trainsim}")
runs=${2:-10}
jobs=${3:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
RANDOM=29  # a fixed seed: the same kill moments on every run of the script
same=0
total=0
for spec in scenarios/sweeps/gpt3-175b-purchase.json scenarios/sweeps/llama3-70b-purchase-failures.json; do
  name=$(basename "$spec" .json)
  start=$(date +%s.%N)
  "$bin" sweep "$spec" --out "$work/$name.whole" -q -j "$jobs"
  wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
  echo "$name: uninterrupted in $wall s"
  for k in $(seq "$runs"); do
    out="$work/$name.$k"
    at=$(awk -v w="$wall" -v r="$RANDOM" 'BEGIN { printf "%.3f", w * r / 32768 }')
    "$bin" sweep "$spec" --out "$out" -q -j "$jobs" & pid=$!
    sleep "$at"
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    kept=$( [[ -f $out/journal.jsonl ]] && wc -l < "$out/journal.jsonl" || echo 0)
    "$bin" sweep "$spec" --out "$out" -q -j "$jobs" --resume
    total=$((total + 1))
    if cmp -s "$out/points.csv" "$work/$name.whole/points.csv" && cmp -s "$out/sweep.json" "$work/$name.whole/sweep.json"; then
      same=$((same + 1))
      verdict=identical
    else
      verdict=DIFFERENT
    fi
    printf '  run %2d: killed at %6.3f s with %4d points journaled, resumed: %s\n' "$k" "$at" "$kept" "$verdict"
  done
done
echo "$same of $total killed and resumed sweeps wrote byte-identical outputs ($jobs threads, $(nproc) cores)"
