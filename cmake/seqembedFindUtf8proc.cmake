# seqembedFindUtf8proc.cmake: finds utf8proc's header and library (Debian: libutf8proc-dev), which
# ship no CMake package there, into the cache variables SEQEMBED_UTF8PROC_INCLUDE_DIR (the
# directory holding utf8proc.h) and SEQEMBED_UTF8PROC_LIBRARY. Set either by hand to skip its
# search. Read by seqembed's own build and by the installed seqembedConfig.cmake (COMPONENTS
# text), as seqembedFindSentencePiece.cmake is, with pkg-config's answer as a hint only.
include_guard(GLOBAL)

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_UTF8PROC QUIET libutf8proc)
endif()
find_path(SEQEMBED_UTF8PROC_INCLUDE_DIR utf8proc.h HINTS ${PC_UTF8PROC_INCLUDE_DIRS}
          DOC "Directory holding utf8proc.h")
find_library(SEQEMBED_UTF8PROC_LIBRARY NAMES utf8proc HINTS ${PC_UTF8PROC_LIBRARY_DIRS} DOC "utf8proc's library")
mark_as_advanced(SEQEMBED_UTF8PROC_INCLUDE_DIR SEQEMBED_UTF8PROC_LIBRARY)
