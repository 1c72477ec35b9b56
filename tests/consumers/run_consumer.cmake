# Configures, builds and runs one consumer project (cmake -P; registered by CMakeLists.txt):
#   cmake -DSETTINGS=<consumer_settings.cmake> -DCONSUMER=<name> -DCONFIG=<config>
#         -P run_consumer.cmake
# CONSUMER is one of the routes listed in CMakeLists.txt. Any failing step ends the script with
# FATAL_ERROR (exit status 1) and its output. After each configure, the compile commands of the
# consumer programs are checked: the strict warnings of strict_flags.cmake are on, and seqembed's
# include directory is passed with the flag the project registered (-I on the source routes,
# so that a warning in seqembed's headers fails the build; -isystem where it is meant to be a
# system directory).
cmake_minimum_required(VERSION 3.23...3.31)

foreach(_arg IN ITEMS SETTINGS CONSUMER)
  if(NOT DEFINED ${_arg})
    message(FATAL_ERROR "run_consumer.cmake: pass -D${_arg}=...")
  endif()
endforeach()
include("${SETTINGS}")
include("${CMAKE_CURRENT_LIST_DIR}/strict_flags.cmake")
if(NOT CONFIG)
  set(CONFIG Release)
endif()

set(work "${WORK_ROOT}/${CONSUMER}")
file(REMOVE_RECURSE "${work}")
file(MAKE_DIRECTORY "${work}")

# check(<step> <result> <output>): stops with the step's output unless its result is 0.
function(check step result output)
  if(NOT result STREQUAL "0")
    message(FATAL_ERROR "consumer.${CONSUMER}: ${step} failed (${result}):\n${output}")
  endif()
  message(STATUS "consumer.${CONSUMER}: ${step}: ok")
endfunction()

# skip(<why>): the route cannot run here; ctest reports the test as skipped.
function(skip why)
  message("SEQEMBED_CONSUMER_SKIPPED: consumer.${CONSUMER}: ${why}")
endfunction()

# include_flags(<out> <command line>): "<flag>|<dir>" for every -I and -isystem of a GCC/Clang
# command line, in either spelling (-I<dir>, -I <dir>).
function(include_flags out command)
  separate_arguments(args UNIX_COMMAND "${command}")
  set(result "")
  set(pending "")
  foreach(arg IN LISTS args)
    if(pending)
      list(APPEND result "${pending}|${arg}")
      set(pending "")
    elseif(arg STREQUAL "-I" OR arg STREQUAL "-isystem")
      set(pending "${arg}")
    elseif(arg MATCHES "^(-I|-isystem)(.+)$")
      list(APPEND result "${CMAKE_MATCH_1}|${CMAKE_MATCH_2}")
    endif()
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# check_command(<what> <command line> <want>): the strict warnings are on, and the directories
# holding seqembed/seqembed.hpp are passed with <want> (-I or -isystem) and no other flag.
function(check_command what command want)
  separate_arguments(args UNIX_COMMAND "${command}")
  foreach(flag IN LISTS SEQEMBED_CONSUMER_STRICT_FLAGS)
    if(NOT flag IN_LIST args)
      message(FATAL_ERROR "consumer.${CONSUMER}: ${what} is compiled without ${flag}:\n"
                          "${command}")
    endif()
  endforeach()
  include_flags(pairs "${command}")
  set(seen "")
  foreach(pair IN LISTS pairs)
    string(FIND "${pair}" "|" bar)
    string(SUBSTRING "${pair}" 0 ${bar} flag)
    math(EXPR bar "${bar} + 1")
    string(SUBSTRING "${pair}" ${bar} -1 dir)
    if(EXISTS "${dir}/seqembed/seqembed.hpp")
      if(NOT flag STREQUAL want)
        message(FATAL_ERROR "consumer.${CONSUMER}: ${what} gets seqembed's include directory "
                            "${dir} with ${flag}, expected ${want}:\n${command}")
      endif()
      list(APPEND seen "${dir}")
    endif()
  endforeach()
  if(NOT seen)
    message(FATAL_ERROR "consumer.${CONSUMER}: ${what}: no -I or -isystem holds "
                        "seqembed/seqembed.hpp:\n${command}")
  endif()
  message(STATUS "consumer.${CONSUMER}: ${what}: strict warnings on, seqembed's headers with "
                 "${want} ${seen}")
endfunction()

# check_compile_commands(<build dir>): check_command for every program the consumer project
# registered in seqembed_consumer_checks.txt, from the build's compile_commands.json.
function(check_compile_commands build)
  file(STRINGS "${build}/seqembed_consumer_checks.txt" lines)
  if(NOT lines)
    message(FATAL_ERROR "consumer.${CONSUMER}: the consumer project registered no program")
  endif()
  if(NOT CXX_COMPILER_ID MATCHES "GNU|Clang" OR CXX_COMPILER_FRONTEND_VARIANT STREQUAL "MSVC")
    message(STATUS "consumer.${CONSUMER}: ${CXX_COMPILER_ID} takes no GCC-style flags: the "
                   "warnings and include flags are not checked")
    return()
  endif()
  if(NOT EXISTS "${build}/compile_commands.json")
    if(GENERATOR MATCHES "Makefiles|Ninja")
      message(FATAL_ERROR "consumer.${CONSUMER}: ${build}/compile_commands.json is missing")
    endif()
    message(STATUS "consumer.${CONSUMER}: the ${GENERATOR} generator writes no "
                   "compile_commands.json: the include flags are not checked")
    return()
  endif()
  file(READ "${build}/compile_commands.json" json)
  string(JSON count LENGTH "${json}")
  math(EXPR last "${count} - 1")
  foreach(line IN LISTS lines)
    separate_arguments(line UNIX_COMMAND "${line}")
    list(GET line 0 target)
    list(GET line 1 want)
    set(found FALSE)
    foreach(i RANGE ${last})
      string(JSON command ERROR_VARIABLE error GET "${json}" ${i} command)
      if(error)  # the "arguments" form
        string(JSON n LENGTH "${json}" ${i} arguments)
        math(EXPR n "${n} - 1")
        set(command "")
        foreach(j RANGE ${n})
          string(JSON arg GET "${json}" ${i} arguments ${j})
          string(APPEND command " \"${arg}\"")
        endforeach()
      endif()
      if(command MATCHES "CMakeFiles/${target}\\.dir/")
        check_command("${target}" "${command}" "${want}")
        set(found TRUE)
      endif()
    endforeach()
    if(NOT found)
      message(FATAL_ERROR "consumer.${CONSUMER}: no compile command for ${target} in "
                          "${build}/compile_commands.json")
    endif()
  endforeach()
endfunction()

# configure_build_run(<project dir> <-D arguments>...): the consumer's whole life.
function(configure_build_run project)
  set(generator_args -G "${GENERATOR}")
  if(GENERATOR_PLATFORM)
    list(APPEND generator_args -A "${GENERATOR_PLATFORM}")
  endif()
  if(GENERATOR_TOOLSET)
    list(APPEND generator_args -T "${GENERATOR_TOOLSET}")
  endif()
  set(build "${work}/build")
  file(REMOVE_RECURSE "${build}")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${CONSUMERS_DIR}/${project}" -B "${build}"
            ${generator_args} -C "${INITIAL_CACHE}" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON ${ARGN}
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  check("configure" "${result}" "${output}")
  string(REGEX MATCHALL "-- consumer: [^\n]*" notes "${output}")
  foreach(note IN LISTS notes)
    string(REPLACE "-- consumer: " "" note "${note}")
    message(STATUS "consumer.${CONSUMER}: ${project}: ${note}")
  endforeach()
  check_compile_commands("${build}")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" --build "${build}" --config "${CONFIG}"
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  check("build" "${result}" "${output}")
  execute_process(
    COMMAND "${CTEST}" --test-dir "${build}" -C "${CONFIG}" --output-on-failure
            --no-tests=error
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  check("run" "${result}" "${output}")
  message("${output}")
endfunction()

# git_head(<out>): the commit at HEAD of the source tree, read now rather than when the build was
# configured (a commit made since is the one tested); empty, with skip(), unless the source tree
# is itself the top of a git checkout (a tarball unpacked inside some other repository is not
# seqembed's repository).
function(git_head out)
  set(${out} "" PARENT_SCOPE)
  if(NOT GIT)
    skip("git was not found")
    return()
  endif()
  execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" rev-parse --show-toplevel
                  RESULT_VARIABLE result OUTPUT_VARIABLE toplevel ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  file(REAL_PATH "${SOURCE_DIR}" source_real)
  if(result EQUAL 0)
    file(REAL_PATH "${toplevel}" toplevel)
  endif()
  if(NOT result EQUAL 0 OR NOT toplevel STREQUAL source_real)
    skip("${SOURCE_DIR} is not a git checkout; consumer.fetchcontent_source_dir covers "
         "FetchContent from this tree")
    return()
  endif()
  execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" rev-parse --verify HEAD
                  RESULT_VARIABLE result OUTPUT_VARIABLE head ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT result EQUAL 0)
    skip("the repository at ${SOURCE_DIR} has no commit yet")
    return()
  endif()
  execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" status --porcelain
                  OUTPUT_VARIABLE dirty ERROR_QUIET)
  if(dirty)
    message(STATUS "consumer.${CONSUMER}: the working tree has uncommitted changes; this "
                   "test builds the commit ${head}, consumer.fetchcontent_source_dir the tree")
  endif()
  set(${out} "${head}" PARENT_SCOPE)
endfunction()

# file_url(<out> <path>)
function(file_url out path)
  file(REAL_PATH "${path}" real)
  if(real MATCHES "^/")
    set(${out} "file://${real}" PARENT_SCOPE)
  else()
    set(${out} "file:///${real}" PARENT_SCOPE)  # C:/... on Windows
  endif()
endfunction()

# pkg_config_build(<pkg-config dir>): consumer.cpp compiled and linked with nothing but the flags
# of `pkg-config --cflags --libs seqembed`, the strict warnings and -std=c++17 (which the .pc
# file does not set: C++17 is the compiler's default from GCC 11 and Clang 16), then run. The
# -I of every directory other than seqembed's becomes -isystem: Eigen's warnings are not
# seqembed's to answer for.
function(pkg_config_build pcdir)
  if(NOT CXX_COMPILER_ID MATCHES "GNU|Clang" OR CXX_COMPILER_FRONTEND_VARIANT STREQUAL "MSVC")
    message(STATUS "consumer.${CONSUMER}: ${CXX_COMPILER_ID} takes no pkg-config flags: the "
                   "build from pkg-config alone is skipped")
    return()
  endif()
  set(ENV{PKG_CONFIG_PATH} "${pcdir}")
  foreach(part IN ITEMS cflags libs)
    execute_process(COMMAND "${PKG_CONFIG}" --${part} seqembed
                    RESULT_VARIABLE result OUTPUT_VARIABLE flags ERROR_VARIABLE error
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    check("pkg-config --${part} seqembed" "${result}" "${flags}${error}")
    separate_arguments(pc_${part} UNIX_COMMAND "${flags}")
  endforeach()
  set(compile_flags "")
  foreach(flag IN LISTS pc_cflags)
    set(dir "")
    if(flag MATCHES "^-I(.+)$")
      set(dir "${CMAKE_MATCH_1}")
    endif()
    if(dir AND NOT EXISTS "${dir}/seqembed/seqembed.hpp")
      list(APPEND compile_flags -isystem "${dir}")
    else()
      list(APPEND compile_flags "${flag}")
    endif()
  endforeach()
  separate_arguments(cxx_flags UNIX_COMMAND "${CXX_FLAGS}")
  separate_arguments(linker_flags UNIX_COMMAND "${EXE_LINKER_FLAGS}")
  set(program "${work}/consumer_pkg_config_only")
  set(command "${CXX_COMPILER}" ${cxx_flags} -std=c++17 ${SEQEMBED_CONSUMER_STRICT_FLAGS}
              ${compile_flags} "${CONSUMERS_DIR}/consumer.cpp" -o "${program}" ${linker_flags}
              ${pc_libs})
  list(JOIN command " " command_line)
  check_command("the build from pkg-config alone" "${command_line}" -I)
  execute_process(COMMAND ${command} RESULT_VARIABLE result OUTPUT_VARIABLE output
                  ERROR_VARIABLE output)
  check("build from pkg-config alone: ${command_line}" "${result}" "${output}")
  execute_process(COMMAND ${CROSSCOMPILING_EMULATOR} "${program}"
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  check("run of the program built from pkg-config alone" "${result}" "${output}")
endfunction()

# find_package_route(<prefix> <pkg-config dir> <-D arguments>...): checks a staged install and
# uses it through find_package (and pkg-config, when there is one).
function(find_package_route prefix pcdir)
  # Every public and detail header of the source tree is in the install, byte for byte.
  file(GLOB_RECURSE headers RELATIVE "${SOURCE_DIR}/include" "${SOURCE_DIR}/include/*.hpp")
  if(NOT HAVE_IO OR "-DSEQEMBED_EXPECT_IO=OFF" IN_LIST ARGN)
    list(FILTER headers EXCLUDE REGEX "^seqembed/io/")
  endif()
  set(missing "")
  foreach(header IN LISTS headers)
    set(installed "${prefix}/${INSTALL_INCLUDEDIR}/${header}")
    if(NOT EXISTS "${installed}")
      list(APPEND missing "${header}")
    else()
      file(SHA256 "${SOURCE_DIR}/include/${header}" want)
      file(SHA256 "${installed}" got)
      if(NOT want STREQUAL got)
        list(APPEND missing "${header} (differs)")
      endif()
    endif()
  endforeach()
  if(missing)
    list(JOIN missing "\n  " missing)
    message(FATAL_ERROR "consumer.${CONSUMER}: headers missing from the install:\n  ${missing}")
  endif()
  list(LENGTH headers count)
  message(STATUS "consumer.${CONSUMER}: all ${count} headers installed")

  # The installed package files name no directory of the build or the source tree.
  file(GLOB_RECURSE package_files "${prefix}/${INSTALL_CMAKEDIR}/*" "${pcdir}/*")
  foreach(file IN LISTS package_files)
    file(READ "${file}" text)
    foreach(dir IN ITEMS "${SOURCE_DIR}" "${BINARY_DIR}")
      string(FIND "${text}" "${dir}" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "consumer.${CONSUMER}: ${file} refers to ${dir}")
      endif()
    endforeach()
  endforeach()

  # pkg-config, when there is one, against the staged prefix alone.
  set(pkg_config_args "")
  if(PKG_CONFIG)
    if(NOT EXISTS "${pcdir}/seqembed.pc")
      message(FATAL_ERROR "consumer.${CONSUMER}: no ${pcdir}/seqembed.pc")
    endif()
    set(ENV{PKG_CONFIG_PATH} "${pcdir}")
    execute_process(COMMAND "${PKG_CONFIG}" --cflags seqembed
                    RESULT_VARIABLE result OUTPUT_VARIABLE cflags ERROR_VARIABLE error
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    check("pkg-config --cflags seqembed" "${result}" "${cflags}${error}")
    message(STATUS "consumer.${CONSUMER}: pkg-config --cflags seqembed: ${cflags}")
    separate_arguments(flags UNIX_COMMAND "${cflags}")
    set(found_header FALSE)
    file(REAL_PATH "${prefix}" prefix_real)
    foreach(flag IN LISTS flags)
      if(flag MATCHES "^-I(.+)$")
        file(REAL_PATH "${CMAKE_MATCH_1}" dir)
        if(EXISTS "${dir}/seqembed/seqembed.hpp")
          string(FIND "${dir}" "${prefix_real}/" at)
          if(NOT at EQUAL 0)
            message(FATAL_ERROR "consumer.${CONSUMER}: pkg-config's -I${dir} is not inside the "
                                "staged prefix ${prefix_real}")
          endif()
          set(found_header TRUE)
        endif()
      endif()
    endforeach()
    if(NOT found_header)
      message(FATAL_ERROR "consumer.${CONSUMER}: no -I of `pkg-config --cflags seqembed` "
                          "(${cflags}) holds seqembed/seqembed.hpp")
    endif()
    execute_process(COMMAND "${PKG_CONFIG}" --modversion seqembed
                    RESULT_VARIABLE result OUTPUT_VARIABLE modversion ERROR_VARIABLE error
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    check("pkg-config --modversion seqembed" "${result}" "${modversion}${error}")
    if(NOT modversion STREQUAL VERSION)
      message(FATAL_ERROR "consumer.${CONSUMER}: pkg-config says version ${modversion}, "
                          "the project is ${VERSION}")
    endif()
    pkg_config_build("${pcdir}")
    set(pkg_config_args -DSEQEMBED_CONSUMER_PKGCONFIG=ON)
  else()
    message(STATUS "consumer.${CONSUMER}: pkg-config not found, seqembed.pc is not checked")
  endif()

  # The staged prefix replaces any CMAKE_PREFIX_PATH of the parent build (Eigen is found through
  # Eigen3_DIR), so no other seqembed can be picked up.
  configure_build_run(find_package "-DCMAKE_PREFIX_PATH=${prefix}"
                      "-DSEQEMBED_EXPECTED_DIR=${prefix}/${INSTALL_CMAKEDIR}"
                      "-DSEQEMBED_REQUEST_VERSION=${VERSION}" ${pkg_config_args} ${ARGN})
endfunction()

if(CONSUMER STREQUAL "add_subdirectory")
  configure_build_run(add_subdirectory "-DSEQEMBED_SOURCE_DIR=${SOURCE_DIR}")

elseif(CONSUMER STREQUAL "system_headers")
  # SEQEMBED_SYSTEM_HEADERS (CMake 3.23+): the parent asks for seqembed's include directory as a
  # system one. Then CMake's own SYSTEM (3.25+), which docs/building.md shows too.
  configure_build_run(add_subdirectory "-DSEQEMBED_SOURCE_DIR=${SOURCE_DIR}"
                      -DSEQEMBED_SYSTEM_HEADERS=ON -DSEQEMBED_CONSUMER_INCLUDE_AS=-isystem)
  if(CMAKE_VERSION VERSION_LESS 3.25)
    message(STATUS "consumer.${CONSUMER}: CMake ${CMAKE_VERSION} has no SYSTEM keyword for "
                   "add_subdirectory and FetchContent_Declare (3.25): those are not checked")
  else()
    # consumer.cpp alone: the keyword covers every target of the subproject alike.
    configure_build_run(add_subdirectory "-DSEQEMBED_SOURCE_DIR=${SOURCE_DIR}"
                        -DSEQEMBED_ADD_SYSTEM=ON -DSEQEMBED_CONSUMER_INCLUDE_AS=-isystem
                        -DSEQEMBED_CONSUMER_IO=OFF)
    configure_build_run(fetchcontent -DSEQEMBED_FETCH=SOURCE_DIR
                        "-DSEQEMBED_SOURCE_DIR=${SOURCE_DIR}" -DSEQEMBED_FETCH_SYSTEM=ON
                        -DSEQEMBED_CONSUMER_IO=OFF)
  endif()

elseif(CONSUMER STREQUAL "fetchcontent_source_dir")
  configure_build_run(fetchcontent -DSEQEMBED_FETCH=SOURCE_DIR "-DSEQEMBED_SOURCE_DIR=${SOURCE_DIR}")

elseif(CONSUMER STREQUAL "fetchcontent_git")
  git_head(head)
  if(head)
    file_url(url "${SOURCE_DIR}")
    message(STATUS "consumer.${CONSUMER}: FetchContent from ${url} at ${head}")
    # consumer.cpp alone: how FetchContent gets the source does not change seqembed::io, which
    # consumer.fetchcontent_source_dir builds.
    configure_build_run(fetchcontent -DSEQEMBED_FETCH=GIT "-DSEQEMBED_GIT_REPOSITORY=${url}"
                        "-DSEQEMBED_GIT_TAG=${head}" -DSEQEMBED_CONSUMER_IO=OFF)
  endif()

elseif(CONSUMER STREQUAL "fetchcontent_tarball")
  # The archive of HEAD as GitHub serves one (/archive/<commit>.tar.gz: git archive with the
  # prefix seqembed-<commit>/), fetched with URL and URL_HASH as a user pins a release.
  git_head(head)
  if(head)
    set(archive "${work}/seqembed-${head}.tar.gz")
    execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" archive --format=tar.gz
                            "--prefix=seqembed-${head}/" -o "${archive}" "${head}"
                    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
    check("git archive ${head}" "${result}" "${output}")
    file(SHA256 "${archive}" sha256)
    file_url(url "${archive}")
    message(STATUS "consumer.${CONSUMER}: FetchContent from ${url} (SHA256 ${sha256})")
    configure_build_run(fetchcontent -DSEQEMBED_FETCH=URL "-DSEQEMBED_URL=${url}"
                        "-DSEQEMBED_URL_HASH=SHA256=${sha256}" -DSEQEMBED_CONSUMER_IO=OFF)
  endif()

elseif(CONSUMER STREQUAL "find_package")
  # Stage an install of this build in a directory of its own, then use only that.
  set(prefix "${work}/prefix")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" --install "${BINARY_DIR}" --prefix "${prefix}" --config "${CONFIG}"
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  check("cmake --install to ${prefix}" "${result}" "${output}")
  find_package_route("${prefix}" "${prefix}/${INSTALL_PKGCONFIGDIR}"
                     "-DSEQEMBED_EXPECT_IO=${HAVE_IO}"
                     "-DSEQEMBED_EXPECT_SENTENCEPIECE=${HAVE_SENTENCEPIECE}" "-DSEQEMBED_EXPECT_TEXT=${HAVE_TEXT}")

elseif(CONSUMER STREQUAL "build_tree")
  # The package this build exported into its own directory, without an install.
  # Its headers are the source tree's, which consumer.find_package builds under -I (installed
  # byte for byte): the programs are built once, as the package gives them (-isystem).
  configure_build_run(find_package "-Dseqembed_DIR=${BINARY_DIR}" -DSEQEMBED_CONSUMER_WARNINGS=OFF
                      "-DSEQEMBED_EXPECTED_DIR=${BINARY_DIR}"
                      "-DSEQEMBED_REQUEST_VERSION=${VERSION}" "-DSEQEMBED_EXPECT_IO=${HAVE_IO}"
                      "-DSEQEMBED_EXPECT_SENTENCEPIECE=${HAVE_SENTENCEPIECE}" "-DSEQEMBED_EXPECT_TEXT=${HAVE_TEXT}")

elseif(CONSUMER STREQUAL "pkg_config_pthread")
  # Where the C library lacks the threads (glibc before 2.34), FindThreads gives -pthread
  # (THREADS_PREFER_PTHREAD_FLAG) and seqembed.pc must carry it in Cflags and Libs, which makes
  # it architecture-dependent: lib/pkgconfig. Simulated by telling FindThreads that libc has no
  # pthread_create, in seqembed's build and in the consumer's.
  set(threads_args -DCMAKE_HAVE_LIBC_PTHREAD=OFF -DTHREADS_PREFER_PTHREAD_FLAG=ON)
  set(build "${work}/seqembed-build")
  set(prefix "${work}/prefix")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${build}" -G "${GENERATOR}"
            -C "${INITIAL_CACHE}" -DSEQEMBED_BUILD_TESTS=OFF -DSEQEMBED_BUILD_EXAMPLES=OFF
            -DSEQEMBED_BUILD_BENCHMARKS=OFF -DSEQEMBED_IO=OFF -DSEQEMBED_INSTALL=ON
            ${threads_args}
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  check("configure seqembed with FindThreads on -pthread" "${result}" "${output}")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" --install "${build}" --prefix "${prefix}" --config "${CONFIG}"
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  check("cmake --install to ${prefix}" "${result}" "${output}")
  set(pcdir "${prefix}/lib/pkgconfig")
  file(GLOB misplaced "${prefix}/share/pkgconfig/*.pc")
  if(misplaced OR NOT EXISTS "${pcdir}/seqembed.pc")
    message(FATAL_ERROR "consumer.${CONSUMER}: with link flags seqembed.pc belongs in "
                        "lib/pkgconfig, not share/pkgconfig (found: ${misplaced})")
  endif()
  file(STRINGS "${pcdir}/seqembed.pc" cflags REGEX "^Cflags:")
  file(STRINGS "${pcdir}/seqembed.pc" libs REGEX "^Libs:")
  if(NOT cflags MATCHES " -pthread" OR NOT libs MATCHES " -pthread")
    message(FATAL_ERROR "consumer.${CONSUMER}: seqembed.pc lacks -pthread: '${cflags}' '${libs}'")
  endif()
  message(STATUS "consumer.${CONSUMER}: lib/pkgconfig/seqembed.pc: ${cflags}; ${libs}")
  # The -I builds are consumer.find_package's, on the same headers.
  find_package_route("${prefix}" "${pcdir}" -DSEQEMBED_EXPECT_IO=OFF -DSEQEMBED_CONSUMER_WARNINGS=OFF
                     ${threads_args})

elseif(CONSUMER STREQUAL "compiled_kernels")
  # seqembed built with SEQEMBED_COMPILED_KERNELS=ON (its library, nothing else), then found in
  # its build tree and used through an install of it.
  set(build "${work}/seqembed-build")
  set(prefix "${work}/prefix")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${build}" -G "${GENERATOR}"
            -C "${INITIAL_CACHE}" -DSEQEMBED_COMPILED_KERNELS=ON -DSEQEMBED_BUILD_TESTS=OFF
            -DSEQEMBED_BUILD_EXAMPLES=OFF -DSEQEMBED_BUILD_BENCHMARKS=OFF -DSEQEMBED_IO=OFF
            -DSEQEMBED_SENTENCEPIECE=OFF -DSEQEMBED_TEXT=OFF -DSEQEMBED_INSTALL=ON
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  check("configure seqembed with SEQEMBED_COMPILED_KERNELS=ON" "${result}" "${output}")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" --build "${build}" --config "${CONFIG}"
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  check("build seqembed::kernels" "${result}" "${output}")
  # The build tree's package is configured against only (building the programs twice would add
  # CI time and test nothing more than the install's run below).
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${CONSUMERS_DIR}/compiled_kernels" -B "${work}/build-tree-package"
            -G "${GENERATOR}" -C "${INITIAL_CACHE}" "-Dseqembed_DIR=${build}"
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  check("configure against the build tree's package" "${result}" "${output}")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" --install "${build}" --prefix "${prefix}" --config "${CONFIG}"
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  check("cmake --install to ${prefix}" "${result}" "${output}")
  configure_build_run(compiled_kernels "-DCMAKE_PREFIX_PATH=${prefix}")

else()
  message(FATAL_ERROR "run_consumer.cmake: unknown CONSUMER '${CONSUMER}'")
endif()
