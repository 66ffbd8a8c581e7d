#!/usr/bin/env bash
# Resuming a killed sweep (issue 29, docs/sweep.md "Resuming"): each sweep spec is
# run once to the end, then RUNS times killed with SIGKILL at a random moment of its
# run (uniform over the uninterrupted run's wall time, from a fixed seed) and
# resumed with --resume until it finishes; the resumed points.csv and sweep.json
# must equal the uninterrupted ones byte for byte. Then, with MPI (mpirun on the
# PATH and a trainsim built with it), RUNS 3-rank runs of each spec under
# `mpirun --enable-recovery` with one worker rank (1 or 2, at random) SIGKILLed at
# a random moment after the first point is journaled: each must finish without a
# resume and write the uninterrupted files. Prints one line per run and the counts. A benchmark, not a test: it
# always exits 0 (it says which runs differed).
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

command -v mpirun > /dev/null || { echo "no mpirun: the MPI part is skipped"; exit 0; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
same=0
total=0
for spec in scenarios/sweeps/gpt3-175b-purchase.json scenarios/sweeps/llama3-70b-purchase-failures.json; do
  name=$(basename "$spec" .json)
  start=$(date +%s.%N)
  mpirun --oversubscribe -np 3 "$bin" sweep "$spec" --out "$work/$name.mpi" -q 2> /dev/null
  wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
  echo "$name: 3 ranks, uninterrupted in $wall s"
  for k in $(seq "$runs"); do
    out="$work/$name.mpi.$k"
    at=$(awk -v w="$wall" -v r="$RANDOM" 'BEGIN { printf "%.3f", w * r / 32768 }')
    victim=$((1 + RANDOM % 2))
    start=$(date +%s.%N)
    mpirun --oversubscribe --enable-recovery -np 3 "$bin" sweep "$spec" --out "$out" -q 2> "$out.err" & pid=$!
    # Once the farm runs (its first point journaled): a rank that dies inside
    # MPI_Init leaves the others waiting there (Open MPI 4.1), which no farm can help.
    while [[ ! -s $out/journal.jsonl ]] && kill -0 "$pid" 2> /dev/null; do sleep 0.01; done
    sleep "$at"
    # The victim rank's process: a child of mpirun whose environment names its rank.
    for child in $(pgrep -P "$pid"); do
      if tr '\0' '\n' < "/proc/$child/environ" 2> /dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$victim"; then
        kill -KILL "$child" 2> /dev/null || true
      fi
    done
    rc=0
    wait "$pid" || rc=$?
    took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
    total=$((total + 1))
    if [[ $rc -eq 0 ]] && cmp -s "$out/points.csv" "$work/$name.mpi/points.csv" &&
        cmp -s "$out/sweep.json" "$work/$name.mpi/sweep.json"; then
      same=$((same + 1))
      verdict=identical
    else
      verdict="DIFFERENT (exit $rc)"
    fi
    printf '  run %2d: rank %d killed %6.3f s after the first point (%s), finished in %6.3f s: %s\n' "$k" "$victim" "$at" \
      "$(grep -q "presumed dead" "$out.err" && echo "presumed dead" || echo "done before it died")" "$took" "$verdict"
  done
done
echo "$same of $total 3-rank MPI sweeps with a rank SIGKILLed finished with byte-identical outputs"
