# `trainsim sweep` as 2 MPI ranks writes the same files as one process, byte for
# byte (docs/sweep.md, "MPI"), and so does a 2-rank sweep resumed from the journal
# of a one-process sweep stopped after 50 points (docs/sweep.md, "Resuming").
# Run by ctest with -DTRAINSIM= -DMPIEXEC= -DSPEC= -DWORK=.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${TRAINSIM} sweep ${SPEC} --out ${WORK}/single --jobs 2 --top 1 -q
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "single-process sweep failed (${rc}): ${err}")
endif()
execute_process(COMMAND ${MPIEXEC} --oversubscribe --allow-run-as-root -np 2 ${TRAINSIM} sweep ${SPEC}
                        --out ${WORK}/mpi --top 1 -q
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "MPI sweep failed (${rc}): ${err}")
endif()
execute_process(COMMAND ${TRAINSIM} sweep ${SPEC} --out ${WORK}/resumed --jobs 1 --stop-after 50 -q
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 3)
  message(FATAL_ERROR "the sweep stopped after 50 points exited ${rc}, not 3: ${err}")
endif()
execute_process(COMMAND ${MPIEXEC} --oversubscribe --allow-run-as-root -np 2 ${TRAINSIM} sweep ${SPEC}
                        --out ${WORK}/resumed --top 1 -q --resume
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the resumed MPI sweep failed (${rc}): ${err}")
endif()
if(EXISTS ${WORK}/resumed/journal.jsonl)
  message(FATAL_ERROR "the resumed MPI sweep left its journal behind")
endif()
file(GLOB_RECURSE files RELATIVE ${WORK}/single ${WORK}/single/*)
list(LENGTH files n)
if(n LESS 3)
  message(FATAL_ERROR "the single-process sweep wrote ${n} files: ${files}")
endif()
foreach(f ${files})
  foreach(other mpi resumed)
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/single/${f} ${WORK}/${other}/${f}
                    RESULT_VARIABLE diff)
    if(NOT diff EQUAL 0)
      message(FATAL_ERROR "${f} differs between the single-process sweep and the 2-rank MPI one (${other})")
    endif()
  endforeach()
endforeach()
message(STATUS "${n} files identical: ${files}")
