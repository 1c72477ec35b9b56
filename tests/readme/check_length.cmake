# check_length.cmake: README.md stays a front door (issue 26): at most 400 lines, and the
# quickstart, a model loaded from its directory and the performance summary within its first 120.
#   cmake -DREADME=<README.md> -P check_length.cmake
cmake_minimum_required(VERSION 3.23)  # CMP0007: the list keeps empty lines
file(READ "${README}" content)
string(REPLACE ";" "," content "${content}")
string(REPLACE "[" "(" content "${content}")
string(REPLACE "]" ")" content "${content}")
string(REPLACE "\n" ";" lines "${content}")
list(LENGTH lines count)
if(content MATCHES "\n$")
  math(EXPR count "${count} - 1")  # the empty element after the final newline
endif()
if(count GREATER 400)
  message(FATAL_ERROR "README.md has ${count} lines, more than 400: move the detail to a guide in docs/")
endif()

set(quickstart 0)
set(model 0)
set(performance 0)
set(number 0)
foreach(line IN LISTS lines)
  math(EXPR number "${number} + 1")
  if(number GREATER 120)
    break()
  endif()
  if(line MATCHES "^## Quickstart" AND NOT quickstart)
    set(quickstart ${number})
  elseif(line MATCHES "seqembed::io::load_model\\(" AND NOT model)
    set(model ${number})
  elseif(line MATCHES "^## Performance" AND NOT performance)
    set(performance ${number})
  endif()
endforeach()
if(NOT quickstart OR NOT model OR NOT performance)
  message(FATAL_ERROR "README.md: the quickstart (line ${quickstart}), io::load_model (line ${model}) "
                      "and \"## Performance\" (line ${performance}) must all be within the first 120 lines (0: not there)")
endif()
message(STATUS "README.md: ${count} lines; quickstart at line ${quickstart}, load_model at ${model}, "
               "performance at ${performance}")
