# cmake -DPROGRAM=<no_exceptions> -P run_no_exceptions.cmake: without exceptions, good input
# works and bad input aborts with seqembed's message.
execute_process(COMMAND "${PROGRAM}" good RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT result STREQUAL "0")
  message(FATAL_ERROR "no_exceptions good: exit ${result}\n${out}${err}")
endif()
execute_process(COMMAND "${PROGRAM}" bad RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(message "seqembed: token id 40 at (batch 1, position 1) is outside the vocabulary [0, 10)")
string(FIND "${err}" "${message}" at)
if(result STREQUAL "0" OR result MATCHES "^[0-9]+$" OR at EQUAL -1)
  message(FATAL_ERROR "no_exceptions bad: expected an abort with '${message}' on stderr, got "
                      "'${result}'\nstdout: ${out}\nstderr: ${err}")
endif()
message(STATUS "no_exceptions bad: ${result}: ${err}")
