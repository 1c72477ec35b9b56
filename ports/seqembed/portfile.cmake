# header-only library
set(VCPKG_BUILD_TYPE release)

# seqembed 0.2.0 is the commit tagged v0.2.0. REF names the commit rather than the tag: a tag
# may not reach every clone or mirror and can be moved, a commit can be neither.
# SHA512 is of the archive GitHub serves for the commit (archive/<REF>.tar.gz, top directory
# seqembed-<REF>/), made with git as tests/packaging/release_archive.cmake says, which
# packaging.release_port recomputes from the repository. While the repository is not public,
# GitHub cannot be asked for that archive: use ports/seqembed-local (README, "Adding seqembed
# to a build"). Should GitHub's archive ever differ, vcpkg stops and prints the hash it got.
vcpkg_from_github(
    OUT_SOURCE_PATH SOURCE_PATH
    REPO seqembed/seqembed
    REF 63fd334fd8685bf0f755e7884ad2c0f794d4be34 # v0.2.0
    SHA512 a33db1e7d857eb829dbff049ae48e6dedfe00883ce2be810ebb6f77ba26e258fe06c2122a755228a003fb0860ad5112c82d18ffa23241eaed16333d619ffe3ba
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
