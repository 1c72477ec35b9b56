# Runs the MPI test program under the launcher with SEQEMBED_ISA=<ISA> on every rank when the
# probe says this build and CPU run that ISA; otherwise prints "SKIPPED" with the reason, which
# ctest reports as a skipped test, naming the ISA.
#   cmake -DISA=avx2 -DPROBE=<seqembed_isa_probe> -DLAUNCHER=<mpiexec;-n;2;...> -DPROGRAM=<tests> -P run_mpi_test.cmake
foreach(_required ISA PROBE LAUNCHER PROGRAM)
  if(NOT DEFINED ${_required})
    message(FATAL_ERROR "run_mpi_test.cmake: ${_required} is not set")
  endif()
endforeach()
execute_process(COMMAND "${PROBE}" "${ISA}" RESULT_VARIABLE _supported OUTPUT_VARIABLE _why ERROR_VARIABLE _why)
if(_supported EQUAL 1)
  message("SKIPPED: ${_why}")
  return()
elseif(NOT _supported EQUAL 0 AND NOT _supported EQUAL 3)  # 3: the default ISA, run here too
  message(FATAL_ERROR "run_mpi_test.cmake: the probe failed for ISA '${ISA}': ${_why}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "SEQEMBED_ISA=${ISA}" ${LAUNCHER} "${PROGRAM}"
                RESULT_VARIABLE _result)
if(NOT _result EQUAL 0)
  message(FATAL_ERROR "the MPI tests failed with SEQEMBED_ISA=${ISA} (exit ${_result})")
endif()
