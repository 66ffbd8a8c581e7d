# The MPI farm loses nothing (docs/sweep.md, "MPI"), each checked against a
# one-process sweep of the same spec, file by file:
#  1. a rank killed (SIGKILL) while it holds a chunk, under `mpirun --enable-recovery`:
#     its chunk is computed again by another rank, the run finishes, and the
#     outputs are the one-process sweep's;
#  2. --stop-after under MPI: exit status 3, partial outputs; --resume under MPI
#     finishes with the one-process sweep's files;
#  3. SIGUSR1 to mpirun (forwarded to every rank) during a longer sweep (LONG_SPEC):
#     rank 0 stops handing out work and writes partial outputs naming the signal;
#     --resume finishes the run.
# Run by ctest with -DTRAINSIM= -DMPIEXEC= -DSPEC= -DLONG_SPEC= -DWORK=.
file(REMOVE_RECURSE ${WORK})
set(mpi ${MPIEXEC} --oversubscribe --allow-run-as-root)

function(expect_same_files other)
  file(GLOB_RECURSE files RELATIVE ${WORK}/single ${WORK}/single/*)
  foreach(f ${files})
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/single/${f} ${WORK}/${other}/${f}
                    RESULT_VARIABLE diff)
    if(NOT diff EQUAL 0)
      message(FATAL_ERROR "${f} differs between the one-process sweep and ${other}")
    endif()
  endforeach()
  list(LENGTH files n)
  message(STATUS "${other}: ${n} files identical to the one-process sweep's")
endfunction()

execute_process(COMMAND ${TRAINSIM} sweep ${SPEC} --out ${WORK}/single --jobs 2 --top 1 -q
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "one-process sweep failed (${rc}): ${err}")
endif()

# 1. Rank 2 of 3 dies when its second chunk arrives.
execute_process(COMMAND ${CMAKE_COMMAND} -E env TRAINSIM_SWEEP_FAULT=kill@2:2
                        ${mpi} --enable-recovery -np 3 ${TRAINSIM} sweep ${SPEC} --out ${WORK}/dead --top 1 -q
                RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 300)
if(NOT err MATCHES "rank 2 did not ask for work")
  message(FATAL_ERROR "the sweep with a dead rank did not name it (exit ${rc}): ${err}")
endif()
if(EXISTS ${WORK}/dead/journal.jsonl)
  message(FATAL_ERROR "the sweep with a dead rank did not finish (exit ${rc}): its journal is left")
endif()
expect_same_files(dead)

# 2. --stop-after under MPI, then --resume under MPI.
execute_process(COMMAND ${mpi} -np 2 ${TRAINSIM} sweep ${SPEC} --out ${WORK}/stopped --stop-after 20 -q
                RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 300)
if(NOT rc EQUAL 3)
  message(FATAL_ERROR "the MPI sweep stopped after 20 points exited ${rc}, not 3: ${err}")
endif()
file(READ ${WORK}/stopped/sweep.json sweep_json)
if(NOT sweep_json MATCHES "\"partial\"")
  message(FATAL_ERROR "the MPI sweep stopped after 20 points wrote no partial sweep.json")
endif()
execute_process(COMMAND ${mpi} -np 2 ${TRAINSIM} sweep ${SPEC} --out ${WORK}/stopped --top 1 -q --resume
                RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 300)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the resumed MPI sweep failed (${rc}): ${err}")
endif()
expect_same_files(stopped)

# 3. SIGUSR1 to mpirun once the journal holds a point.
execute_process(COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/sweep_mpi_signal.sh ${MPIEXEC} ${TRAINSIM} ${LONG_SPEC}
                        ${WORK}/signalled
                RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 300)
file(READ ${WORK}/signalled/sweep.json sweep_json)
if(NOT sweep_json MATCHES "SIGUSR1")
  message(FATAL_ERROR "the MPI sweep given SIGUSR1 wrote no partial sweep.json naming it (exit ${rc}): ${err}")
endif()
execute_process(COMMAND ${mpi} -np 2 ${TRAINSIM} sweep ${LONG_SPEC} --out ${WORK}/signalled -q --resume
                RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 300)
if(NOT rc EQUAL 0 OR EXISTS ${WORK}/signalled/journal.jsonl)
  message(FATAL_ERROR "the MPI sweep resumed after SIGUSR1 did not finish (${rc}): ${err}")
endif()
message(STATUS "signalled: partial outputs naming SIGUSR1, then resumed to the end")
