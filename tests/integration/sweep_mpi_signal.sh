#!/bin/sh
# Starts a 2-rank MPI sweep, sends SIGUSR1 to mpirun once the journal holds a
# point, and exits with mpirun's status (sweep_mpi_survives.cmake, part 3).
# Usage: sweep_mpi_signal.sh MPIEXEC TRAINSIM SPEC OUT_DIR
mpiexec=$1 trainsim=$2 spec=$3 out=$4
"$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$trainsim" sweep "$spec" --out "$out" -q &
pid=$!
i=0
while [ ! -s "$out/journal.jsonl" ] && [ "$i" -lt 600 ]; do
  sleep 0.05
  i=$((i + 1))
done
kill -USR1 "$pid"
wait "$pid"
