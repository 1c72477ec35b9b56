# seqembed_release_archive(<out file> <git> <repository> <commit>): writes the archive that
# https://github.com/seqembed/seqembed/archive/<commit>.tar.gz serves, byte for byte as far as
# git can make it: `git archive --format=tar.gz --prefix=seqembed-<commit>/ <commit>`, with
# every setting that changes the bytes pinned:
#   - gzip -cn compresses (tar.tar.gz.command). git 2.38 replaced that default with its own
#     zlib-based gzip, whose output differs; GitHub reverted to the old bytes after the
#     checksums of its archives changed in January 2023, and keeps them stable since. The
#     SHA-512 in ports/seqembed/portfile.cmake is of this form.
#   - no end-of-line conversion (core.autocrlf, core.eol: Git for Windows converts to CRLF)
#   - tar.umask 0002, git's default
# The archive of a commit (not a tree) carries the commit id in a pax header, as GitHub's does.
function(seqembed_release_archive out git repository commit)
  execute_process(
    COMMAND "${git}" -C "${repository}" -c core.autocrlf=false -c core.eol=lf -c tar.umask=0002
            "-c" "tar.tar.gz.command=gzip -cn"
            archive --format=tar.gz "--prefix=seqembed-${commit}/" -o "${out}" "${commit}"
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "git archive of ${commit} failed (${result}):\n${output}")
  endif()
endfunction()

# seqembed_release_ref(<out ref> <out sha512> <portfile>): the REF and SHA512 of the portfile's
# vcpkg_from_github call.
function(seqembed_release_ref out_ref out_sha512 portfile)
  file(READ "${portfile}" text)
  if(NOT text MATCHES "vcpkg_from_github\\(([^)]*)\\)")
    message(FATAL_ERROR "${portfile}: no vcpkg_from_github(...)")
  endif()
  set(call "${CMAKE_MATCH_1}")
  # Comments out, so that a hash quoted in one is not taken for the argument.
  string(REGEX REPLACE "#[^\n]*" "" call "${call}")
  set(ref "")
  set(sha512 "")
  if(call MATCHES "[ \t\n]REF[ \t]+\"?([^\" \t\n]+)")
    set(ref "${CMAKE_MATCH_1}")
  endif()
  if(call MATCHES "[ \t\n]SHA512[ \t]+\"?([^\" \t\n]+)")
    set(sha512 "${CMAKE_MATCH_1}")
  endif()
  set(${out_ref} "${ref}" PARENT_SCOPE)
  set(${out_sha512} "${sha512}" PARENT_SCOPE)
endfunction()

# seqembed_version_of(<out> <version.hpp text>): "major.minor.patch" from version.hpp's defines.
function(seqembed_version_of out text)
  set(parts "")
  foreach(part IN ITEMS MAJOR MINOR PATCH)
    if(NOT text MATCHES "#define SEQEMBED_VERSION_${part} ([0-9]+)")
      set(${out} "" PARENT_SCOPE)
      return()
    endif()
    list(APPEND parts "${CMAKE_MATCH_1}")
  endforeach()
  list(JOIN parts "." version)
  set(${out} "${version}" PARENT_SCOPE)
endfunction()

# seqembed_git_commit_missing(<out why> <git> <repository> <commit>): empty when <repository> is
# the top of a git checkout that has <commit>; otherwise why not, for a skip message.
function(seqembed_git_commit_missing out git repository commit)
  set(${out} "" PARENT_SCOPE)
  if(NOT git)
    set(${out} "git was not found" PARENT_SCOPE)
    return()
  endif()
  execute_process(COMMAND "${git}" -C "${repository}" rev-parse --show-toplevel
                  RESULT_VARIABLE result OUTPUT_VARIABLE toplevel ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  file(REAL_PATH "${repository}" repository_real)
  if(result EQUAL 0)
    file(REAL_PATH "${toplevel}" toplevel)
  endif()
  if(NOT result EQUAL 0 OR NOT toplevel STREQUAL repository_real)
    set(${out} "${repository} is not a git checkout" PARENT_SCOPE)
    return()
  endif()
  execute_process(COMMAND "${git}" -C "${repository}" cat-file -e "${commit}^{commit}"
                  RESULT_VARIABLE result ERROR_QUIET)
  if(NOT result EQUAL 0)
    execute_process(COMMAND "${git}" -C "${repository}" rev-parse --is-shallow-repository
                    OUTPUT_VARIABLE shallow ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(shallow STREQUAL "true")
      set(${out} "this shallow clone lacks the release commit ${commit} (git fetch --unshallow)"
          PARENT_SCOPE)
    else()
      set(${out} "this clone lacks the release commit ${commit}" PARENT_SCOPE)
    endif()
  endif()
endfunction()
