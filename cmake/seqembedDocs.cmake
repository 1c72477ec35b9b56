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
