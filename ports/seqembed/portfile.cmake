# header-only library
set(VCPKG_BUILD_TYPE release)

vcpkg_from_github(
    OUT_SOURCE_PATH SOURCE_PATH
    REPO seqembed/seqembed
    REF "v${VERSION}"
    # RELEASE PLACEHOLDER: replace 0 with the SHA512 of the v${VERSION} archive once the tag is
    # pushed. With 0, `vcpkg install seqembed --overlay-ports=ports/seqembed` fails and prints
    # the hash of the archive it downloaded (vcpkg_from_github's documented way to get it).
    SHA512 0
    HEAD_REF main
)

# The io feature builds and installs seqembed::io (safetensors and .npy, on nlohmann-json);
# without it the target is left out even where nlohmann-json happens to be installed.
if("io" IN_LIST FEATURES)
    set(SEQEMBED_IO_OPTION ON)
else()
    set(SEQEMBED_IO_OPTION OFF)
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
