# compile_block.cmake: compiles one ```cpp block of README.md, as the test readme.cpp.<n> asks.
#   cmake -DREADME=<README.md> -DBLOCK=<n, from 1> -DNAME=<the test's name> -DWORK=<scratch dir>
#         -DCOMPILER=<c++ compiler> -DHARNESS_DIR=<tests/readme> -DINCLUDE_DIR=<seqembed's include>
#         -DSYSTEM_INCLUDES=<dirs joined by |> -DIO_INCLUDES=<dirs joined by |, or empty>
#         -DSENTENCEPIECE_INCLUDES=<dir, or empty> -DIMPLICIT_INCLUDES=<the compiler's own, by |>
#         -P compile_block.cmake
#
# The block becomes a translation unit: its #include lines first, after tests/readme/
# readme_names.hpp (the names blocks use without declaring them), and the rest as the body of a
# function that brings those names in. It is compiled with -fsyntax-only (templates are still
# instantiated) under the strict warnings of tests/strict/check.cmake, as errors. A block that
# includes <seqembed/io/...> is compiled with nlohmann_json's include directory; one that
# includes <seqembed/text/sentencepiece.hpp> with SentencePiece's, and is reported as skipped (ctest's
# SKIP_REGULAR_EXPRESSION) when this build found no SentencePiece; one that includes
# <seqembed/text/tokenizer.hpp> with nlohmann_json's and utf8proc's.
cmake_minimum_required(VERSION 3.23)

foreach(required README BLOCK NAME WORK COMPILER HARNESS_DIR INCLUDE_DIR)
  if(NOT DEFINED ${required} OR "${${required}}" STREQUAL "")
    message(FATAL_ERROR "compile_block.cmake: -D${required}=... is required")
  endif()
endforeach()

include("${CMAKE_CURRENT_LIST_DIR}/readme_blocks.cmake")
readme_cpp_blocks("${README}" blocks count)
if(BLOCK GREATER count)
  message(FATAL_ERROR "${NAME}: README.md has ${count} C++ blocks now, not ${BLOCK}: reconfigure the build")
endif()
math(EXPR index "${BLOCK} - 1")
list(GET blocks ${index} encoded)
# Its #include lines go to the top of the file, the rest into the function (the lines split
# while still encoded, so that a ";" in the code does not split a line).
string(REPLACE "\n" ";" lines "${encoded}")
set(includes "")
set(body "")
set(needs_io OFF)
set(needs_sentencepiece OFF)
set(needs_text OFF)
foreach(encoded_line IN LISTS lines)
  readme_decode(line "${encoded_line}")
  if(line MATCHES "^[ \t]*#[ \t]*include")
    string(APPEND includes "${line}\n")
    if(line MATCHES "<seqembed/io/")
      set(needs_io ON)
    endif()
    if(line MATCHES "<seqembed/(text/)?sentencepiece.hpp>")
      set(needs_sentencepiece ON)
    endif()
    if(line MATCHES "<seqembed/text/tokenizer.hpp>")
      set(needs_io ON)  # nlohmann_json
      set(needs_text ON)
    endif()
  else()
    string(APPEND body "    ${line}\n")
  endif()
endforeach()

if(needs_sentencepiece AND "${SENTENCEPIECE_INCLUDES}" STREQUAL "")
  message("${NAME}: SKIPPED: the block includes <seqembed/text/sentencepiece.hpp> and this build found no "
          "SentencePiece (Debian: libsentencepiece-dev)")
  return()
endif()
if(needs_io AND "${IO_INCLUDES}" STREQUAL "")
  message(FATAL_ERROR "${NAME}: the block includes a <seqembed/io/...> header and this build has no "
                      "seqembed::io (nlohmann_json not found); the test should not have been added")
endif()

set(source "${WORK}/readme_block_${BLOCK}.cpp")
file(MAKE_DIRECTORY "${WORK}")
file(WRITE "${source}"
  "// README.md, C++ block ${BLOCK}, as compiled by the test ${NAME}\n"
  "#include \"readme_names.hpp\"\n"
  "${includes}\n"
  "void readme_block_${BLOCK}();\n"
  "void readme_block_${BLOCK}() {\n"
  "    using namespace readme_names;\n"
  "${body}"
  "}\n")

set(strict_warnings -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wold-style-cast
                    -Wdouble-promotion -Wcast-align -Wundef -Werror)
set(include_flags "-I${HARNESS_DIR}" "-I${INCLUDE_DIR}")
string(REPLACE "|" ";" system_dirs "${SYSTEM_INCLUDES}")
if(needs_io)
  string(REPLACE "|" ";" io_dirs "${IO_INCLUDES}")
  list(APPEND system_dirs ${io_dirs})
endif()
if(needs_sentencepiece)
  list(APPEND system_dirs "${SENTENCEPIECE_INCLUDES}")
endif()
if(needs_text)
  list(APPEND system_dirs "${TEXT_INCLUDES}")
endif()
list(REMOVE_DUPLICATES system_dirs)
# The compiler's own directories (nlohmann_json in /usr/include) stay where the compiler has them:
# given again with -isystem they break the C++ library's #include_next.
string(REPLACE "|" ";" implicit_dirs "${IMPLICIT_INCLUDES}")
if(implicit_dirs)
  list(REMOVE_ITEM system_dirs ${implicit_dirs})
endif()
foreach(dir IN LISTS system_dirs)
  if(NOT dir STREQUAL "")
    list(APPEND include_flags "-isystem" "${dir}")
  endif()
endforeach()

execute_process(COMMAND "${COMPILER}" -std=c++17 ${strict_warnings} ${include_flags} -fsyntax-only "${source}"
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${NAME}: README.md's C++ block ${BLOCK} does not compile (${source}):\n${out}${err}")
endif()
message(STATUS "${NAME}: README.md's C++ block ${BLOCK} compiles")
