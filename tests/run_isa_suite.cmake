# Runs a test program with SEQEMBED_ISA=<ISA> when the probe says this build and CPU run that
# ISA and it is not the default that the suite's own entries run; otherwise prints "SKIPPED"
# with the reason, which ctest reports as a skipped test (SKIP_REGULAR_EXPRESSION), naming the
# ISA.
#   cmake -DISA=avx2 -DPROBE=<seqembed_isa_probe> -DPROGRAM=<tests> [-DEMULATOR=<qemu;args>] -P run_isa_suite.cmake
foreach(_required ISA PROBE PROGRAM)
  if(NOT DEFINED ${_required})
    message(FATAL_ERROR "run_isa_suite.cmake: ${_required} is not set")
  endif()
endforeach()
execute_process(COMMAND ${EMULATOR} "${PROBE}" "${ISA}" RESULT_VARIABLE _supported
                OUTPUT_VARIABLE _why ERROR_VARIABLE _why)
if(_supported EQUAL 1 OR _supported EQUAL 3)
  message("SKIPPED: ${_why}")
  return()
elseif(NOT _supported EQUAL 0)
  message(FATAL_ERROR "run_isa_suite.cmake: the probe failed for ISA '${ISA}': ${_why}")
endif()
message("${_why}")
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "SEQEMBED_ISA=${ISA}" ${EMULATOR} "${PROGRAM}" ${ARGS}
                RESULT_VARIABLE _result)
if(NOT _result EQUAL 0)
  message(FATAL_ERROR "the suite failed with SEQEMBED_ISA=${ISA} (exit ${_result})")
endif()
