# cmake -DPROGRAM=path/to/plot_positional_encoding -DWORK_DIR=dir -P check_bad_args.cmake
# Runs the program with bad command lines. Each must exit with the expected status (2 for a bad
# command line, 1 when the library or the file system refuses; a crash is a failure), say why on
# stderr, and leave no file in WORK_DIR, not even a temporary one. --help must exit 0.
foreach(_var PROGRAM WORK_DIR)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "check_bad_args.cmake: pass -D${_var}=...")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(_output "${WORK_DIR}/out.png")

# expected status | expected text on stderr | arguments, after --output WORK_DIR/out.png (a
# later --output wins, as every repeated option does). No square brackets: they change how CMake
# splits lists.
set(_cases
  "2|unknown option '--bogus'|--bogus"
  "2|unexpected argument 'stray'|stray"
  "2|--length needs a value|--length"
  "2|--length expects a positive whole number, got 'abc'|--length abc"
  "2|--length expects a positive whole number, got '12x'|--length 12x"
  "2|--length expects a positive whole number, got '-5'|--length -5"
  "2|--d-model expects a positive whole number, got '1.5'|--d-model 1.5"
  "2|--length must be at least 1, got 0|--length 0"
  "2|--d-model must be at least 1, got 0|--d-model=0"
  "2|--scale must be at least 1, got 0|--scale 0"
  "2|is far too large|--length 99999999999999999999999"
  "2|taller than 8192 pixels|--length 2049"
  "2|wider than 8192 pixels|--d-model 4000 --scale 3"
  "2|wider than 8192 pixels|--d-model 18446744073709551615 --scale 1"
  "2|unknown --preset 'bert'|--preset bert"
  "2|unknown --layout 'diagonal'|--layout diagonal"
  "2|--help takes no value|--help=yes"
  "1|past the sinusoidal table of 512 rows|--preset hf_marian --length 600 --scale 1"
  "1|cannot create|--length 4 --output ${WORK_DIR}/no-such-dir/out.png"
  )

set(_failures "")
foreach(_case IN LISTS _cases)
  string(REPLACE "|" ";" _fields "${_case}")
  list(GET _fields 0 _expected_status)
  list(GET _fields 1 _expected_text)
  list(GET _fields 2 _arguments)
  separate_arguments(_arguments UNIX_COMMAND "${_arguments}")
  execute_process(COMMAND "${PROGRAM}" --output "${_output}" ${_arguments}
                  RESULT_VARIABLE _status OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  string(FIND "${_err}" "${_expected_text}" _found)
  file(GLOB _left_over "${WORK_DIR}/*")
  if(NOT _status STREQUAL _expected_status)
    list(APPEND _failures
         "'${_case}': exit status '${_status}', expected ${_expected_status}, stderr: ${_err}")
  elseif(_found EQUAL -1)
    list(APPEND _failures "'${_case}': stderr lacks '${_expected_text}': ${_err}")
  elseif(_left_over)
    list(APPEND _failures "'${_case}': left files behind: ${_left_over}")
    file(REMOVE ${_left_over})
  else()
    string(STRIP "${_err}" _err)
    string(REPLACE "\n" " / " _err "${_err}")
    list(JOIN _arguments " " _arguments)
    message(STATUS "status ${_status} for ${_arguments}: ${_err}")
  endif()
endforeach()

execute_process(COMMAND "${PROGRAM}" --help RESULT_VARIABLE _status OUTPUT_VARIABLE _out)
string(FIND "${_out}" "Usage:" _found)
if(NOT _status STREQUAL "0" OR _found EQUAL -1)
  list(APPEND _failures "--help: exit status '${_status}', stdout: ${_out}")
endif()

if(_failures)
  string(REPLACE ";" "\n" _failures "${_failures}")
  message(FATAL_ERROR "bad command lines not handled as expected:\n${_failures}")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
