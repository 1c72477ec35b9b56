# seqembedFindSentencePiece.cmake: finds SentencePiece's header and library, which ship no CMake
# package, into the cache variables SEQEMBED_SENTENCEPIECE_INCLUDE_DIR (the directory holding
# sentencepiece_processor.h) and SEQEMBED_SENTENCEPIECE_LIBRARY. Set either by hand to skip its
# search. Read by seqembed's own build and by the installed seqembedConfig.cmake (COMPONENTS
# sentencepiece), so that a package user finds SentencePiece as the build that made it did.
#
# pkg-config's answer (Debian's libsentencepiece-dev ships sentencepiece.pc) serves only as a hint
# to find_path and find_library, which keep a cross build inside its sysroot: the host's .pc file
# would hand an aarch64 build the x86-64 library.
include_guard(GLOBAL)

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_SENTENCEPIECE QUIET sentencepiece)
endif()
find_path(SEQEMBED_SENTENCEPIECE_INCLUDE_DIR sentencepiece_processor.h
          HINTS ${PC_SENTENCEPIECE_INCLUDE_DIRS} DOC "Directory holding sentencepiece_processor.h")
find_library(SEQEMBED_SENTENCEPIECE_LIBRARY sentencepiece
             HINTS ${PC_SENTENCEPIECE_LIBRARY_DIRS} DOC "SentencePiece's library")
mark_as_advanced(SEQEMBED_SENTENCEPIECE_INCLUDE_DIR SEQEMBED_SENTENCEPIECE_LIBRARY)
