# packaging.vcpkg_port / packaging.vcpkg_port_local (cmake -P): runs a port's portfile.cmake the
# way vcpkg would, without vcpkg (which these machines do not have), then checks what it
# installed against vcpkg's expectations for a header-only port.
#   cmake -DPORT_DIR=<ports/seqembed[-local]> -DSOURCE_DIR=<seqembed> -DWORK_DIR=<scratch>
#         -DGENERATOR=<cmake generator> -DCXX_COMPILER=<c++> -DEIGEN3_DIR=<dir of
#         Eigen3Config.cmake> [-DGIT=<git>] [-DPKG_CONFIG=<pkg-config>] -P run_vcpkg_port.cmake
#
# The vcpkg helpers the portfile calls are stand-ins written from vcpkg's documentation of each
# function: the configure and the install are real (cmake with the portfile's OPTIONS and the
# settings vcpkg_cmake_configure always adds), the fix-ups check that they would have nothing to
# do. A helper the portfile calls and this script does not define fails the test ("Unknown CMake
# command"), so a portfile change cannot slip past unexercised. The release port's source is
# what vcpkg would download: the archive of its REF, made from this repository
# (release_archive.cmake) and checked against its SHA512, so the test builds the released commit;
# skipped, saying why, where the clone lacks that commit. After the portfile, the package
# is checked as vcpkg's post-build checks would, then "installed" elsewhere (vcpkg copies
# packages/<port>_<triplet> into installed/<triplet>) and found there with find_package and
# pkg-config.
cmake_minimum_required(VERSION 3.23...3.31)
include("${CMAKE_CURRENT_LIST_DIR}/release_archive.cmake")

foreach(arg IN ITEMS PORT_DIR SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER EIGEN3_DIR)
  if(NOT DEFINED ${arg})
    message(FATAL_ERROR "run_vcpkg_port.cmake: pass -D${arg}=...")
  endif()
endforeach()

file(READ "${PORT_DIR}/vcpkg.json" manifest)
string(JSON PORT GET "${manifest}" name)
string(JSON port_version GET "${manifest}" version)
get_filename_component(port_folder "${PORT_DIR}" NAME)

# A port that downloads its source (vcpkg_from_github) needs its release commit in this clone.
file(READ "${PORT_DIR}/portfile.cmake" portfile_text)
if(portfile_text MATCHES "vcpkg_from_github\\(")
  seqembed_release_ref(release_ref release_sha512 "${PORT_DIR}/portfile.cmake")
  seqembed_git_commit_missing(why "${GIT}" "${SOURCE_DIR}" "${release_ref}")
  if(why)
    message("SEQEMBED_PACKAGING_SKIPPED: ports/${port_folder} builds the archive of "
            "${release_ref}, which cannot be made here: ${why}")
    return()
  endif()
endif()

# What vcpkg defines for a portfile (x64-linux triplet).
set(TARGET_TRIPLET x64-linux)
set(VCPKG_TARGET_ARCHITECTURE x64)
set(VCPKG_CRT_LINKAGE dynamic)
set(VCPKG_LIBRARY_LINKAGE static)
set(VCPKG_CMAKE_SYSTEM_NAME Linux)
set(VCPKG_TARGET_IS_LINUX ON)
set(VERSION "${port_version}")
# The features asked for: core, and io (seqembed::io, on nlohmann-json) when the build running
# this test has nlohmann_json (-DWITH_IO=ON).
set(FEATURES core)
if(WITH_IO)
  list(APPEND FEATURES io)
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
set(CURRENT_BUILDTREES_DIR "${WORK_DIR}/buildtrees/${PORT}")
set(CURRENT_PACKAGES_DIR "${WORK_DIR}/packages/${PORT}_${TARGET_TRIPLET}")
set(CURRENT_INSTALLED_DIR "${WORK_DIR}/installed/${TARGET_TRIPLET}")
file(MAKE_DIRECTORY "${CURRENT_BUILDTREES_DIR}" "${CURRENT_PACKAGES_DIR}" "${CURRENT_INSTALLED_DIR}")
# vcpkg builds ports in a clean environment: the local port must not depend on a variable set
# by whoever runs the tests.
unset(ENV{SEQEMBED_SOURCE_DIR})

set(z_configure_dirs "")

function(z_require_arguments function)
  foreach(name IN LISTS ARGN)
    if(NOT DEFINED arg_${name} OR "${arg_${name}}" STREQUAL "")
      message(FATAL_ERROR "${function}: ${name} is required")
    endif()
  endforeach()
endfunction()

function(z_run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output
                  ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${step} failed (${result}):\n${output}")
  endif()
  set(z_output "${output}" PARENT_SCOPE)
endfunction()

# vcpkg_from_github: downloads https://github.com/<REPO>/archive/<REF>.tar.gz, checks its SHA512
# and extracts it. Offline here: the archive is made from this repository as GitHub makes it
# (release_archive.cmake), so a wrong hash fails as it would in vcpkg.
function(vcpkg_from_github)
  cmake_parse_arguments(PARSE_ARGV 0 arg "USE_TARBALL_API"
    "OUT_SOURCE_PATH;REPO;REF;SHA512;HEAD_REF;GITHUB_HOST;AUTHORIZATION_TOKEN;FILE_DISAMBIGUATOR"
    "PATCHES")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "vcpkg_from_github: unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  z_require_arguments(vcpkg_from_github OUT_SOURCE_PATH REPO REF SHA512 HEAD_REF)
  if(arg_PATCHES)
    message(FATAL_ERROR "vcpkg_from_github: PATCHES are not supported by this test")
  endif()
  string(LENGTH "${arg_REF}" ref_length)
  if(NOT arg_REF MATCHES "^[0-9a-f]+$" OR NOT ref_length EQUAL 40)
    message(FATAL_ERROR "vcpkg_from_github: REF is '${arg_REF}', expected the release's full "
                        "commit hash")
  endif()
  string(LENGTH "${arg_SHA512}" sha512_length)
  if(NOT arg_SHA512 MATCHES "^[0-9a-f]+$" OR NOT sha512_length EQUAL 128)
    message(FATAL_ERROR "vcpkg_from_github: SHA512 is '${arg_SHA512}', not a SHA-512")
  endif()
  set(downloads "${WORK_DIR}/downloads")
  file(MAKE_DIRECTORY "${downloads}")
  set(archive "${downloads}/seqembed-${arg_REF}.tar.gz")
  seqembed_release_archive("${archive}" "${GIT}" "${SOURCE_DIR}" "${arg_REF}")
  file(SHA512 "${archive}" actual)
  if(NOT actual STREQUAL arg_SHA512)
    message(FATAL_ERROR "vcpkg_from_github: ${arg_REPO}@${arg_REF}: the archive's SHA512 is "
                        "${actual}, the portfile expects ${arg_SHA512}")
  endif()
  set(src "${CURRENT_BUILDTREES_DIR}/src")
  file(REMOVE_RECURSE "${src}")
  file(ARCHIVE_EXTRACT INPUT "${archive}" DESTINATION "${src}")
  set(source "${src}/seqembed-${arg_REF}")
  if(NOT EXISTS "${source}/CMakeLists.txt")
    message(FATAL_ERROR "vcpkg_from_github: the archive has no seqembed-${arg_REF}/CMakeLists.txt")
  endif()
  message(STATUS "vcpkg_from_github: ${arg_REPO}@${arg_REF}, SHA512 as expected, in ${source}")
  set(${arg_OUT_SOURCE_PATH} "${source}" PARENT_SCOPE)
endfunction()

# vcpkg_cmake_configure: configures SOURCE_PATH for release (and debug unless VCPKG_BUILD_TYPE
# is release) with the portfile's OPTIONS and the settings vcpkg always passes.
function(vcpkg_cmake_configure)
  cmake_parse_arguments(PARSE_ARGV 0 arg
    "PREFER_NINJA;DISABLE_PARALLEL_CONFIGURE;WINDOWS_USE_MSBUILD;NO_CHARSET_FLAG;Z_CMAKE_GET_VARS_USAGE"
    "SOURCE_PATH;GENERATOR;LOGFILE_BASE"
    "OPTIONS;OPTIONS_DEBUG;OPTIONS_RELEASE;MAYBE_UNUSED_VARIABLES")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "vcpkg_cmake_configure: unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  z_require_arguments(vcpkg_cmake_configure SOURCE_PATH)
  set(common
    -G "${GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DEigen3_DIR=${EIGEN3_DIR}"
    -DCMAKE_EXPORT_NO_PACKAGE_REGISTRY=ON
    -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
    -DCMAKE_FIND_PACKAGE_NO_SYSTEM_PACKAGE_REGISTRY=ON
    -DCMAKE_INSTALL_SYSTEM_RUNTIME_LIBS_SKIP=TRUE
    -DCMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION=ON
    -DCMAKE_INSTALL_LIBDIR:STRING=lib
    -DCMAKE_INSTALL_BINDIR:STRING=bin
    -DBUILD_SHARED_LIBS=OFF)
  set(configs "")
  if(NOT DEFINED VCPKG_BUILD_TYPE OR VCPKG_BUILD_TYPE STREQUAL "release")
    list(APPEND configs rel)
  endif()
  if(NOT DEFINED VCPKG_BUILD_TYPE OR VCPKG_BUILD_TYPE STREQUAL "debug")
    list(APPEND configs dbg)
  endif()
  set(dirs "")
  foreach(config IN LISTS configs)
    set(build "${CURRENT_BUILDTREES_DIR}/${TARGET_TRIPLET}-${config}")
    if(config STREQUAL "rel")
      set(specific ${arg_OPTIONS_RELEASE} -DCMAKE_BUILD_TYPE=Release
                   "-DCMAKE_INSTALL_PREFIX=${CURRENT_PACKAGES_DIR}")
    else()
      set(specific ${arg_OPTIONS_DEBUG} -DCMAKE_BUILD_TYPE=Debug
                   "-DCMAKE_INSTALL_PREFIX=${CURRENT_PACKAGES_DIR}/debug")
    endif()
    z_run("configure (${config})" "${CMAKE_COMMAND}" -S "${arg_SOURCE_PATH}" -B "${build}"
          ${common} ${arg_OPTIONS} ${specific})
    # vcpkg warns about the portfile's options the project ignores; here it is an error.
    if(z_output MATCHES "Manually-specified variables were not used by the project:\n\n((    [^\n]*\n)*)")
      string(STRIP "${CMAKE_MATCH_1}" unused)
      string(REGEX REPLACE "[ \n]+" ";" unused "${unused}")
      foreach(option IN LISTS arg_OPTIONS arg_OPTIONS_RELEASE arg_OPTIONS_DEBUG)
        if(option MATCHES "^-D([^:=]+)" AND CMAKE_MATCH_1 IN_LIST unused
           AND NOT CMAKE_MATCH_1 IN_LIST arg_MAYBE_UNUSED_VARIABLES)
          message(FATAL_ERROR "vcpkg_cmake_configure: seqembed does not use the portfile's "
                              "option ${option}")
        endif()
      endforeach()
    endif()
    list(APPEND dirs "${build}")
  endforeach()
  message(STATUS "vcpkg_cmake_configure: configured with ${arg_OPTIONS}")
  set(z_configure_dirs "${dirs}" PARENT_SCOPE)
endfunction()

# vcpkg_cmake_install: builds the install target of each configured build.
function(vcpkg_cmake_install)
  cmake_parse_arguments(PARSE_ARGV 0 arg "DISABLE_PARALLEL;ADD_BIN_TO_PATH" "" "")
  if(NOT z_configure_dirs)
    message(FATAL_ERROR "vcpkg_cmake_install: vcpkg_cmake_configure was not called")
  endif()
  foreach(build IN LISTS z_configure_dirs)
    z_run("install (${build})" "${CMAKE_COMMAND}" --build "${build}" --target install)
  endforeach()
  message(STATUS "vcpkg_cmake_install: installed to ${CURRENT_PACKAGES_DIR}")
endfunction()

# vcpkg_cmake_config_fixup: moves CONFIG_PATH (default share/<PACKAGE_NAME>) to
# share/<PACKAGE_NAME> and rewrites the prefix computations for that depth. seqembed installs
# there already, so the move must be a no-op.
function(vcpkg_cmake_config_fixup)
  cmake_parse_arguments(PARSE_ARGV 0 arg "DO_NOT_DELETE_PARENT_CONFIG_PATH;NO_PREFIX_CORRECTION"
                        "PACKAGE_NAME;CONFIG_PATH" "")
  if(NOT arg_PACKAGE_NAME)
    set(arg_PACKAGE_NAME "${PORT}")
  endif()
  if(NOT arg_CONFIG_PATH)
    set(arg_CONFIG_PATH "share/${arg_PACKAGE_NAME}")
  endif()
  if(NOT arg_CONFIG_PATH STREQUAL "share/${arg_PACKAGE_NAME}")
    message(FATAL_ERROR "vcpkg_cmake_config_fixup: CONFIG_PATH ${arg_CONFIG_PATH} would be moved "
                        "to share/${arg_PACKAGE_NAME}; seqembed installs it there directly")
  endif()
  if(NOT EXISTS "${CURRENT_PACKAGES_DIR}/${arg_CONFIG_PATH}/${arg_PACKAGE_NAME}Config.cmake")
    message(FATAL_ERROR "vcpkg_cmake_config_fixup: no ${arg_CONFIG_PATH}/"
                        "${arg_PACKAGE_NAME}Config.cmake in ${CURRENT_PACKAGES_DIR}")
  endif()
  message(STATUS "vcpkg_cmake_config_fixup: ${arg_CONFIG_PATH} is in place")
endfunction()

# vcpkg_fixup_pkgconfig: makes the .pc files' paths relative to their prefix. seqembed's already
# are; what vcpkg's post-build checks want of a .pc file is checked below.
function(vcpkg_fixup_pkgconfig)
  file(GLOB_RECURSE pc_files "${CURRENT_PACKAGES_DIR}/*.pc")
  if(NOT pc_files)
    message(FATAL_ERROR "vcpkg_fixup_pkgconfig: no .pc file in ${CURRENT_PACKAGES_DIR}")
  endif()
  message(STATUS "vcpkg_fixup_pkgconfig: ${pc_files}")
endfunction()

# vcpkg_install_copyright: concatenates FILE_LIST into share/<PORT>/copyright.
function(vcpkg_install_copyright)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "COMMENT" "FILE_LIST")
  z_require_arguments(vcpkg_install_copyright FILE_LIST)
  set(text "")
  foreach(file IN LISTS arg_FILE_LIST)
    if(NOT EXISTS "${file}")
      message(FATAL_ERROR "vcpkg_install_copyright: ${file} does not exist")
    endif()
    file(READ "${file}" part)
    string(APPEND text "${part}")
  endforeach()
  file(WRITE "${CURRENT_PACKAGES_DIR}/share/${PORT}/copyright" "${text}")
endfunction()

# --- The portfile ---------------------------------------------------------------------------
message(STATUS "Running ${PORT_DIR}/portfile.cmake (port ${PORT} ${VERSION})")
include("${PORT_DIR}/portfile.cmake")

# --- What vcpkg's post-build checks and this project expect of the package -------------------
set(errors "")
macro(fail)
  string(CONCAT _text ${ARGN})
  list(APPEND errors "${_text}")
endmacro()
set(pkg "${CURRENT_PACKAGES_DIR}")

# The source the portfile built (the release archive, or the local tree): its version is the
# port's, and what the package must announce.
file(READ "${SOURCE_PATH}/include/seqembed/version.hpp" version_hpp)
seqembed_version_of(EXPECTED_VERSION "${version_hpp}")
if(NOT VERSION STREQUAL EXPECTED_VERSION)
  fail("ports/${port_folder}/vcpkg.json says ${VERSION}, the source it built "
       "(${SOURCE_PATH}) is ${EXPECTED_VERSION}")
endif()

# seqembed.pc: in share/pkgconfig, or in lib/pkgconfig where it names link flags (the threads
# library's -pthread), as vcpkg's post-build checks want.
set(pc_file "")
foreach(dir IN ITEMS share/pkgconfig lib/pkgconfig)
  if(EXISTS "${pkg}/${dir}/seqembed.pc")
    list(APPEND pc_file "${dir}/seqembed.pc")
  endif()
endforeach()
list(LENGTH pc_file pc_count)
if(NOT pc_count EQUAL 1)
  fail("expected one seqembed.pc in share/pkgconfig or lib/pkgconfig, found '${pc_file}'")
  set(pc_file share/pkgconfig/seqembed.pc)
endif()

foreach(file IN ITEMS
    include/seqembed/seqembed.hpp
    share/seqembed/seqembedConfig.cmake
    share/seqembed/seqembedConfigVersion.cmake
    share/seqembed/seqembedTargets.cmake
    share/seqembed/copyright
    share/seqembed/usage)
  if(NOT EXISTS "${pkg}/${file}")
    fail("missing ${file}")
  endif()
endforeach()

# Header-only: include/ and share/ only, and lib/ only for lib/pkgconfig/seqembed.pc; no bin/ or
# debug/ (so no binary of any kind).
file(GLOB top RELATIVE "${pkg}" "${pkg}/*")
foreach(entry IN LISTS top)
  if(NOT entry MATCHES "^(include|share|lib)$")
    fail("unexpected top-level entry ${entry}/ (a header-only port installs include/ and share/)")
  endif()
endforeach()
if(IS_DIRECTORY "${pkg}/lib")
  file(GLOB_RECURSE lib_files RELATIVE "${pkg}" "${pkg}/lib/*")
  if(NOT lib_files STREQUAL "lib/pkgconfig/seqembed.pc")
    fail("lib/ holds '${lib_files}'; a header-only port installs at most lib/pkgconfig/seqembed.pc")
  endif()
endif()
file(GLOB share_entries RELATIVE "${pkg}/share" "${pkg}/share/*")
foreach(entry IN LISTS share_entries)
  if(NOT entry MATCHES "^(seqembed|pkgconfig)$")
    fail("unexpected share/${entry} (share/seqembed and share/pkgconfig only)")
  endif()
endforeach()

# Every header of the source built, identical (seqembed/io/ only with the io feature).
file(GLOB_RECURSE headers RELATIVE "${SOURCE_PATH}/include" "${SOURCE_PATH}/include/*.hpp")
if(NOT "io" IN_LIST FEATURES)
  list(FILTER headers EXCLUDE REGEX "^seqembed/io/")
endif()
foreach(header IN LISTS headers)
  if(NOT EXISTS "${pkg}/include/${header}")
    fail("header not installed: include/${header}")
  else()
    file(SHA256 "${SOURCE_PATH}/include/${header}" want)
    file(SHA256 "${pkg}/include/${header}" got)
    if(NOT want STREQUAL got)
      fail("include/${header} differs from the source built")
    endif()
  endif()
endforeach()
file(GLOB_RECURSE installed_headers RELATIVE "${pkg}/include" "${pkg}/include/*")
foreach(header IN LISTS installed_headers)
  if(NOT header IN_LIST headers)
    fail("include/${header} is installed but is no header of include/")
  endif()
endforeach()

# No empty directory; CMake files only in share/seqembed; no absolute path of the build.
file(GLOB_RECURSE everything LIST_DIRECTORIES true "${pkg}/*")
foreach(path IN LISTS everything)
  file(RELATIVE_PATH rel "${pkg}" "${path}")
  if(IS_DIRECTORY "${path}")
    file(GLOB children "${path}/*")
    if(NOT children)
      fail("empty directory ${rel}")
    endif()
    continue()
  endif()
  if(rel MATCHES "\\.cmake$" AND NOT rel MATCHES "^share/seqembed/[^/]+\\.cmake$")
    fail("misplaced CMake file ${rel}")
  endif()
  if(rel MATCHES "^share/")
    file(READ "${path}" text)
    foreach(dir IN ITEMS "${WORK_DIR}" "${SOURCE_DIR}")
      string(FIND "${text}" "${dir}" at)
      if(NOT at EQUAL -1)
        fail("${rel} contains the absolute path ${dir}")
      endif()
    endforeach()
  endif()
endforeach()

file(READ "${SOURCE_PATH}/LICENSE" license)
file(READ "${pkg}/share/seqembed/copyright" copyright)
if(NOT copyright STREQUAL license)
  fail("share/seqembed/copyright is not LICENSE")
endif()
file(READ "${PORT_DIR}/usage" usage)
file(READ "${pkg}/share/seqembed/usage" installed_usage)
if(NOT installed_usage STREQUAL usage)
  fail("share/seqembed/usage is not the port's usage file")
endif()

file(READ "${pkg}/share/seqembed/seqembedConfigVersion.cmake" version_file)
if(NOT version_file MATCHES "set\\(PACKAGE_VERSION \"${EXPECTED_VERSION}\"\\)")
  fail("seqembedConfigVersion.cmake does not announce version ${EXPECTED_VERSION}")
endif()
file(READ "${pkg}/share/seqembed/seqembedConfig.cmake" config_file)
if(NOT config_file MATCHES "find_dependency\\(Eigen3 CONFIG\\)")
  fail("seqembedConfig.cmake does not find_dependency(Eigen3 CONFIG) without a version")
endif()

# A .pc file in share/pkgconfig must not name libraries or link flags (vcpkg keeps share/pkgconfig
# for architecture-independent modules); one in lib/pkgconfig is there because it does.
file(STRINGS "${pkg}/${pc_file}" pc_lines)
set(pc_libs FALSE)
foreach(line IN LISTS pc_lines)
  if(line MATCHES "^Libs(\\.private)?:[ \t]*[^ \t]")
    set(pc_libs TRUE)
    if(pc_file MATCHES "^share/")
      fail("${pc_file} names link flags: ${line}")
    endif()
    if(line MATCHES "-lseqembed")
      fail("${pc_file} names a seqembed library: ${line}")
    endif()
  endif()
endforeach()
if(pc_file MATCHES "^lib/" AND NOT pc_libs)
  fail("${pc_file} has no Libs: it belongs in share/pkgconfig")
endif()
if(NOT pc_lines MATCHES "Requires: eigen3")
  fail("${pc_file} does not require eigen3")
endif()

if(errors)
  list(JOIN errors "\n  " errors)
  message(FATAL_ERROR "ports/${port_folder}: the package is not what vcpkg expects:\n  ${errors}")
endif()

file(GLOB_RECURSE listing RELATIVE "${pkg}" "${pkg}/*")
list(SORT listing)
list(JOIN listing "\n  " listing)
message(STATUS "ports/${port_folder}: packages/${PORT}_${TARGET_TRIPLET}:\n  ${listing}")

# --- Installed elsewhere, the package is found and usable ------------------------------------
file(COPY "${pkg}/" DESTINATION "${CURRENT_INSTALLED_DIR}")
file(REMOVE_RECURSE "${pkg}")  # nothing may still point into packages/
z_run("find_package probe" "${CMAKE_COMMAND}" -S "${CMAKE_CURRENT_LIST_DIR}/probe"
      -B "${WORK_DIR}/probe" -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${CURRENT_INSTALLED_DIR}"
      "-DEigen3_DIR=${EIGEN3_DIR}" "-DEXPECTED_VERSION=${EXPECTED_VERSION}")
string(REGEX MATCHALL "probe: [^\n]*" probe_lines "${z_output}")
list(JOIN probe_lines "\n  " probe_lines)
message(STATUS "ports/${port_folder}: find_package from installed/${TARGET_TRIPLET}:\n  ${probe_lines}")

if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH}
      "${CURRENT_INSTALLED_DIR}/share/pkgconfig:${CURRENT_INSTALLED_DIR}/lib/pkgconfig")
  z_run("pkg-config --cflags seqembed" "${PKG_CONFIG}" --cflags seqembed)
  string(STRIP "${z_output}" cflags)
  separate_arguments(flags UNIX_COMMAND "${cflags}")
  set(found FALSE)
  foreach(flag IN LISTS flags)
    if(flag MATCHES "^-I(.+)$")
      file(REAL_PATH "${CMAKE_MATCH_1}" dir)
      file(REAL_PATH "${CURRENT_INSTALLED_DIR}/include" want)
      if(dir STREQUAL want AND EXISTS "${dir}/seqembed/seqembed.hpp")
        set(found TRUE)
      endif()
    endif()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "pkg-config --cflags seqembed gives '${cflags}', no -I of "
                        "${CURRENT_INSTALLED_DIR}/include")
  endif()
  message(STATUS "ports/${port_folder}: pkg-config --cflags seqembed: ${cflags}")
endif()
message(STATUS "ports/${port_folder}: the port installs what vcpkg expects")
