# The `docs` target: seqembed's API reference, Doxygen over include/seqembed/ (the detail
# namespace excluded), HTML in <build>/docs/html. Any Doxygen warning (an undocumented public
# name, a parameter without @param, a bad command) fails the target.
#   cmake --workflow --preset docs        (scripts/run.sh docs installs Doxygen first)
find_package(Doxygen)
if(NOT DOXYGEN_FOUND)
  message(FATAL_ERROR "seqembed: SEQEMBED_BUILD_DOCS=ON needs Doxygen: install it with "
                      "`scripts/install-deps.sh docs` (Debian's doxygen) or turn the option off")
endif()

set(SEQEMBED_DOCS_OUTPUT_DIR "${PROJECT_BINARY_DIR}/docs")
configure_file("${PROJECT_SOURCE_DIR}/docs/Doxyfile.in" "${SEQEMBED_DOCS_OUTPUT_DIR}/Doxyfile"
               @ONLY)

# Always out of date: Doxygen takes seconds, and rerunning it shows the warnings every time.
add_custom_target(docs
  COMMAND "${CMAKE_COMMAND}" -E remove_directory "${SEQEMBED_DOCS_OUTPUT_DIR}/html"
  COMMAND Doxygen::doxygen "${SEQEMBED_DOCS_OUTPUT_DIR}/Doxyfile"
  COMMAND "${CMAKE_COMMAND}" -E echo
          "seqembed: API reference in ${SEQEMBED_DOCS_OUTPUT_DIR}/html/index.html"
  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
  COMMENT "Building the API reference with Doxygen ${DOXYGEN_VERSION}"
  VERBATIM)

# The test docs.reference (label docs) builds the target above, so that a test run of a build
# with SEQEMBED_BUILD_DOCS=ON fails on any Doxygen warning like the target does:
#   ctest --test-dir build/docs -L docs
# enable_testing() here as well: the docs preset builds no tests, examples or benchmarks, and
# the top-level CMakeLists.txt enables testing only for those.
enable_testing()
add_test(NAME docs.reference
  COMMAND "${CMAKE_COMMAND}" --build "${CMAKE_BINARY_DIR}" --target docs --config $<CONFIG>)
set_tests_properties(docs.reference PROPERTIES LABELS docs TIMEOUT 600)
