# Install rules and the package files that find_package(seqembed) and pkg-config read, and the
# same package for the build tree.
#
# Layout (relative to the install prefix; the same as vcpkg's for a header-only port):
#   include/seqembed/...                     the headers (the FILE_SET HEADERS of the target)
#   share/seqembed/seqembedConfig.cmake      find_package(seqembed CONFIG), finds Eigen3 itself
#   share/seqembed/seqembedConfigVersion.cmake
#   share/seqembed/seqembedTargets.cmake     the imported target seqembed::seqembed
#   share/seqembed/seqembedIoTargets.cmake   seqembed::io, when built (read only for
#                                            find_package(seqembed COMPONENTS io))
#   share/seqembed/seqembedKernelsTargets.cmake  seqembed::kernels, when built
#                                            (SEQEMBED_COMPILED_KERNELS; read only for
#                                            find_package(seqembed COMPONENTS kernels))
#   lib/libseqembed_kernels.a                its library (or .so), with it
#   share/pkgconfig/seqembed.pc              pkg-config (Requires: eigen3; lib/pkgconfig instead
#                                            where the threads library needs link flags, below)
#   share/doc/seqembed/LICENSE
#
# share/ rather than lib/: apart from seqembed::kernels' library, nothing here depends on the
# architecture (the version file is
# ARCH_INDEPENDENT, and the .pc file has no Libs: where the C library has the threads), so a
# 32-bit and a 64-bit consumer share one install, and a header-only package installs no lib/
# directory at all (vcpkg's own header-only ports and Eigen do the same); with seqembed::kernels the
# version file checks the architecture. Every destination is relative, so the prefix can be moved.
#
# The build tree holds the same package (export(EXPORT)): find_package(seqembed CONFIG) with
# seqembed_DIR=<build dir> gives seqembed::seqembed (and seqembed::io) on the source tree's
# include/, without an install.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SEQEMBED_INSTALL_CMAKEDIR "${CMAKE_INSTALL_DATADIR}/seqembed"
    CACHE STRING "Where seqembedConfig.cmake is installed, relative to the prefix")
# What Threads::Threads (FindThreads) adds to a consumer, for the .pc file to say the same:
# -pthread when the compiler takes it (compile and link), the library flags (-lpthread, -pthread)
# to link. Nothing at all where the C library has the threads (glibc 2.34+, macOS, musl, MSVC).
set(_seqembed_pc_cflags "")
set(_seqembed_pc_libs "")
get_target_property(_seqembed_thread_options Threads::Threads INTERFACE_COMPILE_OPTIONS)
get_target_property(_seqembed_thread_libs Threads::Threads INTERFACE_LINK_LIBRARIES)
if(_seqembed_thread_options MATCHES "-pthread")
  string(APPEND _seqembed_pc_cflags " -pthread")
endif()
if(_seqembed_thread_libs)
  foreach(_seqembed_lib IN LISTS _seqembed_thread_libs)
    if(_seqembed_lib MATCHES "^-" OR IS_ABSOLUTE "${_seqembed_lib}")
      string(APPEND _seqembed_pc_libs " ${_seqembed_lib}")
    else()
      string(APPEND _seqembed_pc_libs " -l${_seqembed_lib}")
    endif()
  endforeach()
endif()
string(STRIP "${_seqembed_pc_libs}" _seqembed_pc_libs)
if(_seqembed_pc_libs)
  set(_seqembed_pc_libs_line "Libs: ${_seqembed_pc_libs}")
  # A .pc file that names link flags is no longer architecture-independent: it goes to
  # lib/pkgconfig, as pkg-config's conventions and vcpkg's post-build checks want.
  set(_seqembed_pc_default_dir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
else()
  set(_seqembed_pc_libs_line "")
  set(_seqembed_pc_default_dir "${CMAKE_INSTALL_DATADIR}/pkgconfig")
endif()
set(SEQEMBED_INSTALL_PKGCONFIGDIR "${_seqembed_pc_default_dir}"
    CACHE STRING "Where seqembed.pc is installed, relative to the prefix")
mark_as_advanced(SEQEMBED_INSTALL_CMAKEDIR SEQEMBED_INSTALL_PKGCONFIGDIR)

# INCLUDES DESTINATION as well as the file set: consumers on CMake older than 3.23 ignore the
# exported FILE_SET and would get no include directory at all.
install(TARGETS seqembed
  EXPORT seqembedTargets
  FILE_SET HEADERS DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

install(EXPORT seqembedTargets
  NAMESPACE seqembed::
  DESTINATION "${SEQEMBED_INSTALL_CMAKEDIR}")

# seqembed::io in its own export set, so that a consumer who does not ask for the component
# needs no nlohmann_json.
if(TARGET seqembed_io)
  install(TARGETS seqembed_io
    EXPORT seqembedIoTargets
    FILE_SET HEADERS DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
    INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
  install(EXPORT seqembedIoTargets
    NAMESPACE seqembed::
    DESTINATION "${SEQEMBED_INSTALL_CMAKEDIR}")
endif()

# seqembed::kernels in its own export set too: find_package(seqembed COMPONENTS kernels).
if(TARGET seqembed_kernels)
  install(TARGETS seqembed_kernels
    EXPORT seqembedKernelsTargets
    ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
  install(EXPORT seqembedKernelsTargets
    NAMESPACE seqembed::
    DESTINATION "${SEQEMBED_INSTALL_CMAKEDIR}")
endif()

# The same targets for the build tree: seqembedTargets.cmake (and seqembedIoTargets.cmake) beside
# seqembedConfig.cmake and its version file, which are written to the build directory below. A
# parent that exports its own targets linking seqembed::seqembed from its build tree needs
# these too (CMake wants every target it links in some export).
export(EXPORT seqembedTargets
  NAMESPACE seqembed::
  FILE "${PROJECT_BINARY_DIR}/seqembedTargets.cmake")
if(TARGET seqembed_io)
  export(EXPORT seqembedIoTargets
    NAMESPACE seqembed::
    FILE "${PROJECT_BINARY_DIR}/seqembedIoTargets.cmake")
else()
  file(REMOVE "${PROJECT_BINARY_DIR}/seqembedIoTargets.cmake")  # from a configure with io
endif()
if(TARGET seqembed_kernels)
  export(EXPORT seqembedKernelsTargets
    NAMESPACE seqembed::
    FILE "${PROJECT_BINARY_DIR}/seqembedKernelsTargets.cmake")
else()
  file(REMOVE "${PROJECT_BINARY_DIR}/seqembedKernelsTargets.cmake")
endif()

# seqembedConfig.cmake finds everything relative to its own directory, so one file serves both
# the install and the build tree.
configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/seqembedConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/seqembedConfig.cmake"
  INSTALL_DESTINATION "${SEQEMBED_INSTALL_CMAKEDIR}")

# SameMajorVersion: find_package(seqembed 0.1) accepts any 0.x >= 0.1. ARCH_INDEPENDENT: no
# check of CMAKE_SIZEOF_VOID_P, since a header-only package fits every architecture; a package
# with seqembed::kernels' library fits its own only.
if(TARGET seqembed_kernels)
  set(_seqembed_arch_independent "")
else()
  set(_seqembed_arch_independent ARCH_INDEPENDENT)
endif()
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/seqembedConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMajorVersion
  ${_seqembed_arch_independent})
unset(_seqembed_arch_independent)

# The config's SentencePiece and text-library searches, beside it in the build tree and in the install.
configure_file("${PROJECT_SOURCE_DIR}/cmake/seqembedFindSentencePiece.cmake"
               "${PROJECT_BINARY_DIR}/seqembedFindSentencePiece.cmake" COPYONLY)
configure_file("${PROJECT_SOURCE_DIR}/cmake/seqembedFindTextLibraries.cmake"
               "${PROJECT_BINARY_DIR}/seqembedFindTextLibraries.cmake" COPYONLY)

install(FILES
  "${PROJECT_BINARY_DIR}/seqembedConfig.cmake"
  "${PROJECT_BINARY_DIR}/seqembedConfigVersion.cmake"
  "${PROJECT_BINARY_DIR}/seqembedFindSentencePiece.cmake"
  "${PROJECT_BINARY_DIR}/seqembedFindTextLibraries.cmake"
  DESTINATION "${SEQEMBED_INSTALL_CMAKEDIR}")

# The .pc file finds its prefix from its own location (${pcfiledir}), so it stays right when the
# prefix is moved (vcpkg moves packages/<port> into installed/<triplet>).
if(IS_ABSOLUTE "${SEQEMBED_INSTALL_PKGCONFIGDIR}")
  message(FATAL_ERROR "seqembed: SEQEMBED_INSTALL_PKGCONFIGDIR must be relative to the prefix, "
                      "not '${SEQEMBED_INSTALL_PKGCONFIGDIR}'")
endif()
set(_seqembed_pc_prefix "\${pcfiledir}")
string(REGEX REPLACE "[^/]+" ".." _seqembed_pc_up "${SEQEMBED_INSTALL_PKGCONFIGDIR}")
string(REGEX REPLACE "/+$" "" _seqembed_pc_up "${_seqembed_pc_up}")
string(APPEND _seqembed_pc_prefix "/${_seqembed_pc_up}")
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(_seqembed_pc_includedir "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(_seqembed_pc_includedir "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# In a subdirectory of the build tree: its relative prefix is right only once installed, so it is
# kept away from anyone pointing PKG_CONFIG_PATH at the build directory.
configure_file("${PROJECT_SOURCE_DIR}/cmake/seqembed.pc.in"
               "${PROJECT_BINARY_DIR}/pkgconfig-install/seqembed.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/pkgconfig-install/seqembed.pc"
        DESTINATION "${SEQEMBED_INSTALL_PKGCONFIGDIR}")

install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" DESTINATION "${CMAKE_INSTALL_DOCDIR}")

unset(_seqembed_pc_prefix)
unset(_seqembed_pc_up)
unset(_seqembed_pc_includedir)
unset(_seqembed_pc_cflags)
unset(_seqembed_pc_libs)
unset(_seqembed_pc_libs_line)
unset(_seqembed_pc_default_dir)
unset(_seqembed_thread_options)
unset(_seqembed_thread_libs)
unset(_seqembed_lib)
