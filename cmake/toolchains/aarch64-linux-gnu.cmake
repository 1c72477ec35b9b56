# Cross-compiling for 64-bit ARM Linux from an x86-64 Debian host, running under user-mode QEMU.
#   Debian packages: g++-aarch64-linux-gnu (compiler, aarch64 libstdc++ and glibc under
#   /usr/aarch64-linux-gnu) and qemu-user (qemu-aarch64); scripts/install-deps.sh installs them.
# Used by the test-aarch64 preset. Every test program is run through the emulator below
# (CMake's CROSSCOMPILING_EMULATOR: add_test and catch_discover_tests prepend it), so nothing
# depends on binfmt_misc being registered on the machine.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(_seqembed_triple aarch64-linux-gnu)
if(NOT CMAKE_CXX_COMPILER)
  set(CMAKE_CXX_COMPILER ${_seqembed_triple}-g++)
endif()

# qemu-aarch64 -L: where the target's dynamic loader and shared libraries live.
set(_seqembed_sysroot /usr/${_seqembed_triple})
find_program(SEQEMBED_QEMU_AARCH64 qemu-aarch64)
if(NOT SEQEMBED_QEMU_AARCH64)
  set(SEQEMBED_QEMU_AARCH64 qemu-aarch64)
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR "${SEQEMBED_QEMU_AARCH64};-L;${_seqembed_sysroot}")

# Libraries and headers from the target's tree only; programs from the host. Packages from
# both: Eigen and Catch2 2.x are header-only, so the host's config packages (/usr/lib/cmake,
# /usr/share/eigen3/cmake) describe them for the target too. (Catch2 2.x's prebuilt
# Catch2WithMain is a host library: tests/CMakeLists.txt compiles its own main when crossing.)
set(CMAKE_FIND_ROOT_PATH ${_seqembed_sysroot})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
