# header-only library; overlay variant of ports/seqembed that builds a local source tree instead
# of a release archive, to try a change with vcpkg before it is tagged:
#   vcpkg remove seqembed          (classic mode: an installed seqembed is not rebuilt otherwise)
#   vcpkg install seqembed --overlay-ports=<seqembed>/ports/seqembed-local --binarysource=clear
# Point --overlay-ports at this folder itself, not at ports/: both folders hold a port named
# seqembed. vcpkg hashes the port folder, not the source tree, so a binary cache would hand back
# an older build: hence --binarysource=clear.
# The source tree is the one this port sits in (../..), or the directory named by the
# environment variable SEQEMBED_SOURCE_DIR. On Windows vcpkg builds ports in a clean
# environment: list the variable in VCPKG_KEEP_ENV_VARS there.
set(VCPKG_BUILD_TYPE release)

if(DEFINED ENV{SEQEMBED_SOURCE_DIR} AND NOT "$ENV{SEQEMBED_SOURCE_DIR}" STREQUAL "")
    file(REAL_PATH "$ENV{SEQEMBED_SOURCE_DIR}" SOURCE_PATH)
else()
    file(REAL_PATH "${CMAKE_CURRENT_LIST_DIR}/../.." SOURCE_PATH)
endif()
if(NOT EXISTS "${SOURCE_PATH}/include/seqembed/seqembed.hpp")
    message(FATAL_ERROR "seqembed-local: ${SOURCE_PATH} is not a seqembed source tree "
                        "(set SEQEMBED_SOURCE_DIR to one)")
endif()
message(STATUS "seqembed-local: building the source tree ${SOURCE_PATH}")

# The io feature builds and installs seqembed::io (safetensors and .npy, on nlohmann-json);
# without it the target is left out even where nlohmann-json happens to be installed.
if("io" IN_LIST FEATURES)
    set(SEQEMBED_IO_OPTION ON)
else()
    set(SEQEMBED_IO_OPTION OFF)
endif()
# The text feature builds and installs seqembed::text (Tokenizer, on nlohmann-json, utf8proc and
# pcre2), as io does seqembed::io.
if("text" IN_LIST FEATURES)
    set(SEQEMBED_TEXT_OPTION ON)
else()
    set(SEQEMBED_TEXT_OPTION OFF)
endif()

vcpkg_cmake_configure(
    SOURCE_PATH "${SOURCE_PATH}"
    OPTIONS
        -DSEQEMBED_BUILD_TESTS=OFF
        -DSEQEMBED_BUILD_EXAMPLES=OFF
        -DSEQEMBED_BUILD_BENCHMARKS=OFF
        -DSEQEMBED_BUILD_DOCS=OFF
        -DSEQEMBED_INSTALL=ON
        -DSEQEMBED_IO=${SEQEMBED_IO_OPTION}
        -DSEQEMBED_TEXT=${SEQEMBED_TEXT_OPTION}
)

vcpkg_cmake_install()

# seqembed installs its CMake package to share/seqembed and seqembed.pc to share/pkgconfig, where
# vcpkg wants them, with paths relative to the prefix: the fix-ups have nothing to move.
vcpkg_cmake_config_fixup(CONFIG_PATH share/seqembed)
vcpkg_fixup_pkgconfig()

# Release-only (VCPKG_BUILD_TYPE) and header-only: no debug tree; the LICENSE that seqembed
# installs for distributions (share/doc/seqembed) becomes share/seqembed/copyright below.
file(REMOVE_RECURSE
    "${CURRENT_PACKAGES_DIR}/debug"
    "${CURRENT_PACKAGES_DIR}/share/doc"
)

file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
