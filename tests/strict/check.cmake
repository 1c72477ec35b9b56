# The strict-consumer checks, one per ctest test (registered by tests/strict/CMakeLists.txt):
#   cmake -DMODE=<mode> -DCOMPILER=<compiler;args> -DINCLUDES=<dirs> -DSOURCE_DIR=<tests/strict>
#         -DWORK=<scratch dir> [-DFLAGS=<flags>] [-DRUN=<launcher, ON, OFF or SYNTAX>] [-DIO=ON]
#         [-DCORE_ONLY=ON] [-DSENTENCEPIECE=ON] [-DMPI_INCLUDES=<MPI's include dirs>] -P check.cmake
# MODE is
#   compile    core_in_use.cpp (with IO and without CORE_ONLY, io_in_use.cpp, which holds
#              core_in_use.cpp's checks too) compiled with FLAGS plus a user's strictest
#              warnings as errors; linked and run when RUN is ON or a launcher (such as
#              qemu-i386); compiled only when it is OFF; only checked by the front end
#              (-fsyntax-only, templates instantiated, no code generated) when it is SYNTAX
#   headers    every public header (outside detail/; but the umbrellas, nothing but #include
#              lines) alone in a translation unit, with the same warnings; with -DTOGETHER=ON, every header, detail/ too, twice in one translation
#              unit instead (the warnings of the compiler that does not check self-containment)
#   macros     the macros a translation unit receives from seqembed.hpp (and seqembed/io/io.hpp)
#              beyond those of its own includes: only public SEQEMBED_ ones; and none of
#              <immintrin.h> from the headers that run no kernel
#   refusals   C++14 and -ffast-math stop at seqembed's one #error; -fno-fast-math after
#              -ffast-math, as the message advises, compiles
cmake_minimum_required(VERSION 3.23...3.31)

set(strict_warnings -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wold-style-cast
                    -Wdouble-promotion -Wcast-align -Wundef -Werror)
set(include_flags "")
list(GET INCLUDES 0 seqembed_include)
list(APPEND include_flags "-I${seqembed_include}")
list(SUBLIST INCLUDES 1 -1 system_includes)
foreach(dir IN LISTS system_includes)
  list(APPEND include_flags -isystem "${dir}")
endforeach()
file(MAKE_DIRECTORY "${WORK}")

# run(<what> <command>...): runs it, stops with its output unless it exits 0.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result STREQUAL "0")
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "${what} failed (${result}):\n${command}\n${out}${err}")
  endif()
  set(run_output "${out}${err}" PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "compile")
  set(program core_in_use)
  if(IO AND NOT CORE_ONLY)
    set(program io_in_use)
  endif()
  set(binary "${WORK}/${program}")
  if(RUN STREQUAL "SYNTAX")
    run("${program}: compile (front end)" ${COMPILER} ${FLAGS} ${strict_warnings} ${include_flags} -fsyntax-only
        "${SOURCE_DIR}/${program}.cpp")
    message(STATUS "${program}: checked by the front end")
  elseif(RUN)
    # Static where a launcher runs it, so that the target's shared libraries are not needed.
    set(link_flags -pthread)
    if(NOT RUN STREQUAL "ON")
      list(APPEND link_flags -static)
    endif()
    run("${program}: compile and link" ${COMPILER} ${FLAGS} ${strict_warnings} ${include_flags}
        "${SOURCE_DIR}/${program}.cpp" -o "${binary}" ${link_flags})
    if(RUN STREQUAL "ON")
      run("${program}: run" "${binary}")
    else()
      run("${program}: run" ${RUN} "${binary}")
    endif()
    message(STATUS "${program}: ${run_output}")
  else()
    run("${program}: compile" ${COMPILER} ${FLAGS} ${strict_warnings} ${include_flags} -c
        "${SOURCE_DIR}/${program}.cpp" -o "${binary}.o")
    message(STATUS "${program}: compiled")
  endif()

elseif(MODE STREQUAL "headers")
  file(GLOB_RECURSE headers RELATIVE "${seqembed_include}" "${seqembed_include}/seqembed/*.hpp")
  set(failed "")
  set(together_text "")
  set(together_flags "")
  set(together_count 0)
  set(umbrellas "")
  foreach(header IN LISTS headers)
    # The -inl.hpp files (kernels, rotary, gradient, optimizer) are fragments that kernels.hpp
    # includes once per ISA inside a namespace, and the AVX2, AVX-512 and AVX-512 BF16 backends
    # compile only inside kernels.hpp's target regions; the io
    # headers need nlohmann_json, given only with IO; text/sentencepiece.hpp (and the forwarding
    # header at its old path) needs SentencePiece, given only with SENTENCEPIECE; the Tokenizer's
    # headers need nlohmann_json, utf8proc and PCRE2, given only with TEXT.
    if(header MATCHES "(-inl|simd/avx2|simd/avx512|simd/avx512_bf16)\\.hpp$" OR (header MATCHES "^seqembed/io/" AND NOT IO)
       OR (header MATCHES "^seqembed/(text/)?sentencepiece\\.hpp$" AND NOT SENTENCEPIECE)
       OR (header MATCHES "^seqembed/text/(tokenizer\\.hpp|detail/)" AND NOT TEXT)
       OR (header STREQUAL "seqembed/mpi.hpp" AND NOT MPI_INCLUDES))
      continue()
    endif()
    set(extra_flags "")
    if(header STREQUAL "seqembed/mpi.hpp")  # MPI's C API only, as seqembed::mpi asks for
      list(APPEND extra_flags -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX)
      foreach(dir IN LISTS MPI_INCLUDES)
        list(APPEND extra_flags -isystem "${dir}")
      endforeach()
    endif()
    if(NOT TOGETHER AND header MATCHES "/detail/")
      continue()
    endif()
    # An umbrella (seqembed.hpp, optim.hpp, io/io.hpp: nothing but #include lines) compiles alone
    # when the headers it includes compile alone and together, which the TOGETHER check (every
    # header in one unit) asks; alone, io/io.hpp took 12 s, the longest of these.
    if(NOT TOGETHER)
      file(STRINGS "${seqembed_include}/${header}" code REGEX "^[ \t]*[^ \t/]")
      list(FILTER code EXCLUDE REGEX "^[ \t]*#[ \t]*(include|pragma once)")
      if(NOT code)
        list(APPEND umbrellas "${header}")
        continue()
      endif()
    endif()
    if(TOGETHER)
      list(APPEND together_flags ${extra_flags})
      string(APPEND together_text "#include <${header}>\n#include <${header}>\n")
      math(EXPR together_count "${together_count} + 1")
      continue()
    endif()
    file(WRITE "${WORK}/header.cpp" "#include <${header}>\n#include <${header}>\n")
    execute_process(COMMAND ${COMPILER} ${FLAGS} ${strict_warnings} ${include_flags} ${extra_flags} -fsyntax-only
                            "${WORK}/header.cpp"
                    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT result STREQUAL "0")
      list(APPEND failed "${header}")
      message("${header}:\n${out}${err}")
    endif()
  endforeach()
  if(TOGETHER)
    file(WRITE "${WORK}/headers.cpp" "${together_text}")
    run("every header in one translation unit" ${COMPILER} ${FLAGS} ${strict_warnings} ${include_flags}
        ${together_flags} -fsyntax-only "${WORK}/headers.cpp")
    message(STATUS "${together_count} headers compile together, each twice included")
    return()
  endif()
  if(failed)
    list(JOIN failed "\n  " failed)
    message(FATAL_ERROR "headers that do not compile on their own, twice included, with strict warnings:\n  ${failed}")
  endif()
  list(FILTER headers EXCLUDE REGEX "/detail/")
  list(REMOVE_ITEM headers ${umbrellas})
  list(LENGTH headers count)
  list(LENGTH umbrellas umbrella_count)
  message(STATUS "${count} public headers compile on their own (but ${umbrella_count} umbrellas, "
                 "checked together with every header: ${umbrellas})")

elseif(MODE STREQUAL "macros")
  # macros_of(<var> <text>): the names of the macros defined after preprocessing text.
  function(macros_of var text)
    file(WRITE "${WORK}/macros.cpp" "${text}")
    run("preprocess" ${COMPILER} ${FLAGS} ${include_flags} -E -dM "${WORK}/macros.cpp")
    string(REGEX MATCHALL "#define ([A-Za-z_0-9]+)" defines "${run_output}")
    list(TRANSFORM defines REPLACE "#define " "")
    set(${var} "${defines}" PARENT_SCOPE)
  endfunction()
  # What seqembed's headers include themselves, for the baseline.
  set(standard "")
  foreach(name IN ITEMS algorithm array atomic cmath cstddef cstdint cstdio cstdlib cstring iterator limits
                        memory new optional sstream stdexcept string thread type_traits utility vector)
    string(APPEND standard "#include <${name}>\n")
  endforeach()
  set(umbrella "#include <seqembed/seqembed.hpp>\n")
  set(baseline "#include <Eigen/Core>\n${standard}")
  if(IO)
    string(APPEND umbrella "#include <seqembed/io/io.hpp>\n")
    # seqembed::io reads files through the system's interfaces, and nlohmann_json.
    foreach(name IN ITEMS filesystem fstream string_view unordered_map fcntl.h sys/mman.h sys/stat.h unistd.h
                          nlohmann/json.hpp)
      string(APPEND baseline "#include <${name}>\n")
    endforeach()
  endif()
  macros_of(with_kernels_baseline "${baseline}#if defined(__x86_64__)\n#include <immintrin.h>\n#endif\n#if defined(__aarch64__)\n#include <arm_neon.h>\n#endif\n")
  macros_of(with_umbrella "${umbrella}")
  set(leaked "")
  foreach(name IN LISTS with_umbrella)
    # Names from _ or __ are the implementation's (the standard library's inner headers).
    if(NOT name IN_LIST with_kernels_baseline AND NOT name MATCHES "^(_|SEQEMBED_(VERSION|ASSERT))")
      list(APPEND leaked "${name}")
    endif()
  endforeach()
  if(leaked)
    message(FATAL_ERROR "seqembed's headers leave these macros in a user's translation unit: ${leaked}")
  endif()
  # The headers that run no kernel bring no intrinsics.
  macros_of(without_kernels "#include <seqembed/types.hpp>\n#include <seqembed/isa.hpp>\n#include <seqembed/padding.hpp>\n#include <seqembed/error.hpp>\n#include <seqembed/version.hpp>\n#include <seqembed/assert.hpp>\n")
  foreach(guard IN ITEMS _IMMINTRIN_H_INCLUDED __IMMINTRIN_H _AVX512FINTRIN_H_INCLUDED __AVX512FINTRIN_H
                         __ARM_NEON_H)
    if(guard IN_LIST without_kernels)
      message(FATAL_ERROR "types.hpp, isa.hpp, padding.hpp, error.hpp, version.hpp or assert.hpp "
                          "includes intrinsics (${guard} is defined)")
    endif()
  endforeach()
  # With SEQEMBED_COMPILED_KERNELS=1 (seqembed::kernels' users) the kernels are only declared:
  # no intrinsics, no macro left, and a program that runs every component compiles cleanly.
  macros_of(with_umbrella_linked "#define SEQEMBED_COMPILED_KERNELS 1\n${umbrella}")
  foreach(guard IN ITEMS _IMMINTRIN_H_INCLUDED __IMMINTRIN_H __ARM_NEON_H)
    if(guard IN_LIST with_umbrella_linked)
      message(FATAL_ERROR "seqembed.hpp includes intrinsics under SEQEMBED_COMPILED_KERNELS=1 "
                          "(${guard} is defined)")
    endif()
  endforeach()
  foreach(name IN LISTS with_umbrella_linked)
    if(NOT name IN_LIST with_kernels_baseline AND NOT name MATCHES "^(_|SEQEMBED_(VERSION|ASSERT|COMPILED_KERNELS$))")
      message(FATAL_ERROR "seqembed's headers leave the macro ${name} under SEQEMBED_COMPILED_KERNELS=1")
    endif()
  endforeach()
  run("core_in_use.cpp with SEQEMBED_COMPILED_KERNELS=1" ${COMPILER} ${FLAGS} ${strict_warnings} ${include_flags}
      -DSEQEMBED_COMPILED_KERNELS=1 -fsyntax-only "${SOURCE_DIR}/core_in_use.cpp")
  list(LENGTH with_umbrella count)
  message(STATUS "no seqembed macro beyond SEQEMBED_VERSION* and SEQEMBED_ASSERT among ${count}")

elseif(MODE STREQUAL "refusals")
  file(WRITE "${WORK}/refusal.cpp" "#include <seqembed/seqembed.hpp>\nint main() { return 0; }\n")
  foreach(case IN ITEMS "-std=c++14|seqembed needs C\\+\\+17" "-std=c++17;-ffast-math|-ffast-math"
                        "-std=c++17;-ffinite-math-only|-ffinite-math-only")
    string(REPLACE "|" ";" case "${case}")
    list(GET case -1 expected)
    list(REMOVE_AT case -1)
    execute_process(COMMAND ${COMPILER} ${case} ${include_flags} -fsyntax-only "${WORK}/refusal.cpp"
                    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
    string(REGEX MATCHALL "error:" errors "${out}${err}")
    list(LENGTH errors error_count)
    if(result STREQUAL "0" OR NOT "${out}${err}" MATCHES "${expected}" OR error_count GREATER 2)
      message(FATAL_ERROR "${case}: expected seqembed's one #error (${expected}), got (${result}, "
                          "${error_count} errors):\n${out}${err}")
    endif()
    message(STATUS "${case}: refused with ${error_count} error lines")
  endforeach()
  run("-ffast-math -fno-fast-math" ${COMPILER} -std=c++17 -ffast-math -fno-fast-math ${include_flags}
      -fsyntax-only "${WORK}/refusal.cpp")

else()
  message(FATAL_ERROR "check.cmake: unknown MODE '${MODE}'")
endif()
