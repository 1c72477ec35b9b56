# Configures, builds and runs one consumer project (cmake -P; registered by CMakeLists.txt):
#   cmake -DSETTINGS=<consumer_settings.cmake> -DCONSUMER=<name> -DCONFIG=<config>
#         -P run_consumer.cmake
# CONSUMER is add_subdirectory, fetchcontent_source_dir, fetchcontent_git or find_package.
# Any failing step ends the script with FATAL_ERROR (exit status 1) and its output.
cmake_minimum_required(VERSION 3.23)

foreach(_arg IN ITEMS SETTINGS CONSUMER)
  if(NOT DEFINED ${_arg})
    message(FATAL_ERROR "run_consumer.cmake: pass -D${_arg}=...")
  endif()
endforeach()
include("${SETTINGS}")
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

# configure_build_run(<project dir> <-D arguments>...): the consumer's whole life.
function(configure_build_run project)
  set(generator_args -G "${GENERATOR}")
  if(GENERATOR_PLATFORM)
    list(APPEND generator_args -A "${GENERATOR_PLATFORM}")
  endif()
  if(GENERATOR_TOOLSET)
    list(APPEND generator_args -T "${GENERATOR_TOOLSET}")
  endif()
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${CONSUMERS_DIR}/${project}" -B "${work}/build"
            ${generator_args} -C "${INITIAL_CACHE}" ${ARGN}
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  check("configure" "${result}" "${output}")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" --build "${work}/build" --config "${CONFIG}"
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  check("build" "${result}" "${output}")
  execute_process(
    COMMAND "${CTEST}" --test-dir "${work}/build" -C "${CONFIG}" --output-on-failure
            --no-tests=error
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  check("run" "${result}" "${output}")
  message("${output}")
endfunction()

if(CONSUMER STREQUAL "add_subdirectory")
  configure_build_run(add_subdirectory "-DSEQEMBED_SOURCE_DIR=${SOURCE_DIR}")

elseif(CONSUMER STREQUAL "fetchcontent_source_dir")
  configure_build_run(fetchcontent -DSEQEMBED_FETCH=SOURCE_DIR "-DSEQEMBED_SOURCE_DIR=${SOURCE_DIR}")

elseif(CONSUMER STREQUAL "fetchcontent_git")
  # The commit at HEAD, read now rather than when the build was configured: a commit made since
  # is the one tested. Only a source tree that is itself the top of a git checkout counts (a
  # tarball unpacked inside some other repository is not seqembed's repository).
  set(skip "")
  if(NOT GIT)
    set(skip "git was not found")
  else()
    execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" rev-parse --show-toplevel
                    RESULT_VARIABLE result OUTPUT_VARIABLE toplevel ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    file(REAL_PATH "${SOURCE_DIR}" source_real)
    if(result EQUAL 0)
      file(REAL_PATH "${toplevel}" toplevel)
    endif()
    if(NOT result EQUAL 0 OR NOT toplevel STREQUAL source_real)
      set(skip "${SOURCE_DIR} is not a git checkout")
    else()
      execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" rev-parse --verify HEAD
                      RESULT_VARIABLE result OUTPUT_VARIABLE head ERROR_QUIET
                      OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(NOT result EQUAL 0)
        set(skip "the repository at ${SOURCE_DIR} has no commit yet")
      endif()
    endif()
  endif()
  if(skip)
    message("SEQEMBED_CONSUMER_SKIPPED: consumer.fetchcontent_git needs seqembed's git "
            "repository: ${skip}. consumer.fetchcontent_source_dir covers FetchContent from "
            "this tree.")
  else()
    execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" status --porcelain
                    OUTPUT_VARIABLE dirty ERROR_QUIET)
    if(dirty)
      message(STATUS "consumer.${CONSUMER}: the working tree has uncommitted changes; this "
                     "test builds the commit ${head}, consumer.fetchcontent_source_dir the tree")
    endif()
    if(source_real MATCHES "^/")
      set(url "file://${source_real}")
    else()
      set(url "file:///${source_real}")  # C:/... on Windows
    endif()
    message(STATUS "consumer.${CONSUMER}: FetchContent from ${url} at ${head}")
    configure_build_run(fetchcontent -DSEQEMBED_FETCH=GIT "-DSEQEMBED_GIT_REPOSITORY=${url}"
                        "-DSEQEMBED_GIT_TAG=${head}")
  endif()

elseif(CONSUMER STREQUAL "find_package")
  # Stage an install of this build in a directory of its own, then use only that.
  set(prefix "${work}/prefix")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" --install "${BINARY_DIR}" --prefix "${prefix}" --config "${CONFIG}"
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  check("cmake --install to ${prefix}" "${result}" "${output}")

  # Every public and detail header of the source tree is in the install, byte for byte.
  file(GLOB_RECURSE headers RELATIVE "${SOURCE_DIR}/include" "${SOURCE_DIR}/include/*.hpp")
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
  file(GLOB_RECURSE package_files "${prefix}/${INSTALL_CMAKEDIR}/*"
                                  "${prefix}/${INSTALL_PKGCONFIGDIR}/*")
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
    set(ENV{PKG_CONFIG_PATH} "${prefix}/${INSTALL_PKGCONFIGDIR}")
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
    set(pkg_config_args -DSEQEMBED_CONSUMER_PKGCONFIG=ON)
  else()
    message(STATUS "consumer.${CONSUMER}: pkg-config not found, seqembed.pc is not checked")
  endif()

  # The staged prefix replaces any CMAKE_PREFIX_PATH of the parent build (Eigen is found through
  # Eigen3_DIR), so no other seqembed can be picked up.
  configure_build_run(find_package "-DCMAKE_PREFIX_PATH=${prefix}"
                      "-DSEQEMBED_REQUEST_VERSION=${VERSION}" ${pkg_config_args})

else()
  message(FATAL_ERROR "run_consumer.cmake: unknown CONSUMER '${CONSUMER}'")
endif()
