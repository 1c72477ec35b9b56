# packaging.release_port (cmake -P): ports/seqembed, the release port, names a release that
# exists in this repository and the archive GitHub will serve for it:
#   - REF is a full commit hash (tags may not reach a clone; a commit is what vcpkg's and
#     FetchContent's users pin), an ancestor of HEAD
#   - that commit's include/seqembed/version.hpp says the port's version (vcpkg.json)
#   - every -D option the portfile configures with is an option of that commit's CMakeLists.txt
#   - SHA512 is the SHA-512 of that commit's archive (release_archive.cmake says how it is made)
#   - the tag v<version>, where this clone has it, points at the commit
# Skipped, saying why, where the clone cannot tell: no git, not a git checkout, or the commit
# missing (a shallow clone: `git fetch --unshallow`).
#   cmake -DSOURCE_DIR=<seqembed> -DWORK_DIR=<scratch> [-DGIT=<git>] -P check_release_port.cmake
cmake_minimum_required(VERSION 3.23...3.31)
include("${CMAKE_CURRENT_LIST_DIR}/release_archive.cmake")

foreach(arg IN ITEMS SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${arg})
    message(FATAL_ERROR "check_release_port.cmake: pass -D${arg}=...")
  endif()
endforeach()

set(port "${SOURCE_DIR}/ports/seqembed")
seqembed_release_ref(ref sha512 "${port}/portfile.cmake")
file(READ "${port}/vcpkg.json" manifest)
string(JSON version GET "${manifest}" version)

# What the portfile says, checked without the repository.
string(LENGTH "${ref}" ref_length)
string(LENGTH "${sha512}" sha512_length)
if(NOT ref MATCHES "^[0-9a-f]+$" OR NOT ref_length EQUAL 40)
  message(FATAL_ERROR "ports/seqembed/portfile.cmake: REF is '${ref}', expected the release's "
                      "full commit hash (40 hex digits)")
endif()
if(NOT sha512 MATCHES "^[0-9a-f]+$" OR NOT sha512_length EQUAL 128)
  message(FATAL_ERROR "ports/seqembed/portfile.cmake: SHA512 is '${sha512}', expected the "
                      "SHA-512 of the release archive (128 hex digits)")
endif()
message(STATUS "release port: seqembed ${version} at ${ref}")

# skip(<why>): the clone cannot tell; ctest reports the test as skipped.
macro(skip why)
  message("SEQEMBED_PACKAGING_SKIPPED: packaging.release_port: ${why}")
  return()
endmacro()

seqembed_git_commit_missing(why "${GIT}" "${SOURCE_DIR}" "${ref}")
if(why)
  skip("${why}")
endif()

set(errors "")
macro(fail)
  string(CONCAT _text ${ARGN})
  list(APPEND errors "${_text}")
endmacro()

execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" merge-base --is-ancestor "${ref}" HEAD
                RESULT_VARIABLE result ERROR_VARIABLE error)
if(NOT result EQUAL 0)
  fail("the release commit ${ref} is not an ancestor of HEAD ${error}")
endif()

execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" show "${ref}:include/seqembed/version.hpp"
                RESULT_VARIABLE result OUTPUT_VARIABLE version_hpp ERROR_VARIABLE error)
seqembed_version_of(release_version "${version_hpp}")
if(NOT result EQUAL 0 OR NOT release_version STREQUAL version)
  fail("version.hpp at ${ref} says '${release_version}', ports/seqembed/vcpkg.json says "
       "${version} ${error}")
endif()

execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" show "${ref}:CMakeLists.txt"
                RESULT_VARIABLE result OUTPUT_VARIABLE cmakelists ERROR_VARIABLE error)
file(READ "${port}/portfile.cmake" portfile)
string(REGEX MATCH "vcpkg_cmake_configure\\(([^)]*)\\)" _ "${portfile}")
string(REGEX MATCHALL "-D[A-Za-z0-9_]+=" options "${CMAKE_MATCH_1}")
if(NOT options)
  fail("ports/seqembed/portfile.cmake configures with no -D option")
endif()
foreach(option IN LISTS options)
  string(REGEX REPLACE "^-D(.*)=$" "\\1" name "${option}")
  if(NOT cmakelists MATCHES "option\\(${name}[ \t\n]"
     AND NOT cmakelists MATCHES "set\\(${name}[ \t\n][^)]*CACHE"
     AND NOT cmakelists MATCHES "cmake_dependent_option\\(${name}[ \t\n]")
    fail("the portfile sets ${name}, which CMakeLists.txt at ${ref} does not define")
  endif()
endforeach()

file(MAKE_DIRECTORY "${WORK_DIR}")
set(archive "${WORK_DIR}/seqembed-${ref}.tar.gz")
seqembed_release_archive("${archive}" "${GIT}" "${SOURCE_DIR}" "${ref}")
file(SHA512 "${archive}" actual)
if(NOT actual STREQUAL sha512)
  fail("the archive of ${ref} (${archive}) has SHA512 ${actual}, the portfile says ${sha512}")
endif()

execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" rev-parse --verify -q "v${version}^{commit}"
                RESULT_VARIABLE result OUTPUT_VARIABLE tagged ERROR_QUIET
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(result EQUAL 0)
  if(NOT tagged STREQUAL ref)
    fail("the tag v${version} points at ${tagged}, the port at ${ref}")
  else()
    message(STATUS "release port: the tag v${version} points at ${ref}")
  endif()
else()
  message(STATUS "release port: this clone has no tag v${version} (tags may not be fetched; "
                 "the port names the commit)")
endif()

if(errors)
  list(JOIN errors "\n  " errors)
  message(FATAL_ERROR "ports/seqembed does not name a release of this repository:\n  ${errors}")
endif()
message(STATUS "release port: ${ref} is an ancestor of HEAD, says version ${version}, has "
               "every option the portfile sets, and its archive's SHA512 is the portfile's")
