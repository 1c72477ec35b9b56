# Runs both builds of kernels_consumer.cpp and fails unless they print the same digests.
#   cmake -DLINKED=<program> -DHEADER_ONLY=<program> -P same_bits.cmake
foreach(program IN ITEMS LINKED HEADER_ONLY)
  execute_process(COMMAND "${${program}}" RESULT_VARIABLE result OUTPUT_VARIABLE output_${program}
                  ERROR_VARIABLE error)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${${program}} failed (${result}): ${error}${output_${program}}")
  endif()
endforeach()
if(NOT output_LINKED STREQUAL output_HEADER_ONLY)
  message(FATAL_ERROR "seqembed::kernels and the header-only build differ:\n"
                      "  linked:      ${output_LINKED}  header-only: ${output_HEADER_ONLY}")
endif()
message("same bits: ${output_LINKED}")
