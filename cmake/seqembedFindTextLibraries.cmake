# seqembedFindTextLibraries.cmake: finds the libraries seqembed::text needs beyond nlohmann_json,
# which ship no CMake package on Debian: utf8proc (libutf8proc-dev) and PCRE2's 8-bit library
# (libpcre2-dev). Sets the cache variables SEQEMBED_UTF8PROC_INCLUDE_DIR, SEQEMBED_UTF8PROC_LIBRARY,
# SEQEMBED_PCRE2_INCLUDE_DIR and SEQEMBED_PCRE2_LIBRARY (set any by hand to skip its search), and
# SEQEMBED_TEXT_LIBRARIES_FOUND, SEQEMBED_TEXT_INCLUDE_DIRS and SEQEMBED_TEXT_LIBRARIES. Read by
# seqembed's own build and by the installed seqembedConfig.cmake (COMPONENTS text), with
# pkg-config's answers as hints only.
include_guard(GLOBAL)

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_UTF8PROC QUIET libutf8proc)
  pkg_check_modules(PC_PCRE2 QUIET libpcre2-8)
endif()
find_path(SEQEMBED_UTF8PROC_INCLUDE_DIR utf8proc.h HINTS ${PC_UTF8PROC_INCLUDE_DIRS}
          DOC "Directory holding utf8proc.h")
find_library(SEQEMBED_UTF8PROC_LIBRARY NAMES utf8proc HINTS ${PC_UTF8PROC_LIBRARY_DIRS} DOC "utf8proc's library")
find_path(SEQEMBED_PCRE2_INCLUDE_DIR pcre2.h HINTS ${PC_PCRE2_INCLUDE_DIRS} DOC "Directory holding pcre2.h")
find_library(SEQEMBED_PCRE2_LIBRARY NAMES pcre2-8 HINTS ${PC_PCRE2_LIBRARY_DIRS} DOC "PCRE2's 8-bit library")
mark_as_advanced(SEQEMBED_UTF8PROC_INCLUDE_DIR SEQEMBED_UTF8PROC_LIBRARY SEQEMBED_PCRE2_INCLUDE_DIR
                 SEQEMBED_PCRE2_LIBRARY)

if(SEQEMBED_UTF8PROC_INCLUDE_DIR AND SEQEMBED_UTF8PROC_LIBRARY AND SEQEMBED_PCRE2_INCLUDE_DIR
   AND SEQEMBED_PCRE2_LIBRARY)
  set(SEQEMBED_TEXT_LIBRARIES_FOUND TRUE)
else()
  set(SEQEMBED_TEXT_LIBRARIES_FOUND FALSE)
endif()
set(SEQEMBED_TEXT_INCLUDE_DIRS "${SEQEMBED_UTF8PROC_INCLUDE_DIR}" "${SEQEMBED_PCRE2_INCLUDE_DIR}")
list(REMOVE_DUPLICATES SEQEMBED_TEXT_INCLUDE_DIRS)
set(SEQEMBED_TEXT_LIBRARIES "${SEQEMBED_UTF8PROC_LIBRARY}" "${SEQEMBED_PCRE2_LIBRARY}")
