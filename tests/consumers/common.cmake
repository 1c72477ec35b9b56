# Shared by the consumer projects: the programs and their tests, the warnings they build with,
# and the checks that seqembed, pulled in as a subproject, keeps its own tests, examples,
# benchmarks and package files out of the build.
include("${CMAKE_CURRENT_LIST_DIR}/strict_flags.cmake")

# What run_consumer.cmake checks in this build's compile_commands.json: one line per program,
# "<target> <flag>", where <flag> (-I or -isystem) is how seqembed's include directory must be
# passed when its source is compiled.
set(SEQEMBED_CONSUMER_CHECKS "${CMAKE_BINARY_DIR}/seqembed_consumer_checks.txt")
file(WRITE "${SEQEMBED_CONSUMER_CHECKS}" "")

# seqembed_consumer(<name> <source> INCLUDE_AS <-I|-isystem> LINK <target>...): an executable
# <name> built from <source> (consumer.cpp or io_consumer.cpp, next to this file) with
# SEQEMBED_CONSUMER_STRICT_FLAGS, linked to the targets and registered as this project's test.
function(seqembed_consumer name source)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "INCLUDE_AS" "LINK")
  if(NOT arg_INCLUDE_AS MATCHES "^-(I|isystem)$" OR NOT arg_LINK OR arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "seqembed_consumer(${name} ${source} INCLUDE_AS -I|-isystem LINK ...)")
  endif()
  add_executable(${name} "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${source}")
  target_link_libraries(${name} PRIVATE ${arg_LINK})
  target_compile_features(${name} PRIVATE cxx_std_17)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${name} PRIVATE ${SEQEMBED_CONSUMER_STRICT_FLAGS})
  endif()
  add_test(NAME ${name} COMMAND ${name})
  # io_consumer.cpp writes a file in temp_directory_path(): one directory per program, so the
  # consumer tests that ctest runs in parallel do not share it.
  set(tmp "${CMAKE_CURRENT_BINARY_DIR}/${name}-tmp")
  file(MAKE_DIRECTORY "${tmp}")
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "TMPDIR=${tmp};TMP=${tmp};TEMP=${tmp}")
  file(APPEND "${SEQEMBED_CONSUMER_CHECKS}" "${name} ${arg_INCLUDE_AS}\n")
endfunction()

# seqembed_consumers(<prefix> <-I|-isystem>): <prefix> from consumer.cpp on seqembed::seqembed,
# and <prefix>_io from io_consumer.cpp on seqembed::io where seqembed built that target (unless
# the driver passes -DSEQEMBED_CONSUMER_IO=OFF).
function(seqembed_consumers prefix include_as)
  seqembed_consumer(${prefix} consumer.cpp INCLUDE_AS ${include_as} LINK seqembed::seqembed)
  if(TARGET seqembed::io AND NOT (DEFINED SEQEMBED_CONSUMER_IO AND NOT SEQEMBED_CONSUMER_IO))
    seqembed_consumer(${prefix}_io io_consumer.cpp INCLUDE_AS ${include_as} LINK seqembed::io)
  endif()
endfunction()

# seqembed_consumer_unhide(<target>): an imported seqembed's include directory as -I for
# <target>, so that its warnings reach the build. NO_SYSTEM_FROM_IMPORTED does it for every
# imported target; Eigen's and nlohmann_json's directories are then marked system again by hand,
# since their warnings are not seqembed's to answer for.
function(seqembed_consumer_unhide target)
  set_target_properties(${target} PROPERTIES NO_SYSTEM_FROM_IMPORTED ON)
  foreach(dependency IN ITEMS Eigen3::Eigen nlohmann_json::nlohmann_json)
    if(NOT TARGET ${dependency})
      continue()
    endif()
    get_target_property(dirs ${dependency} INTERFACE_INCLUDE_DIRECTORIES)
    foreach(dir IN LISTS dirs)
      if(EXISTS "${dir}/seqembed/seqembed.hpp")
        message(FATAL_ERROR "consumer: ${dependency} shares the include directory ${dir} with "
                            "seqembed, whose headers cannot be unhidden apart from it")
      endif()
      target_include_directories(${target} SYSTEM PRIVATE "${dir}")
    endforeach()
  endforeach()
endfunction()

# Fails the configure unless seqembed, added as a subproject without any option set by the
# parent, switched its tests, examples and benchmarks off (PROJECT_IS_TOP_LEVEL, BUILD_TESTING),
# does not add install rules to the parent's install, and left no package files in its build
# directory.
function(seqembed_consumer_check_subproject_defaults)
  # SEQEMBED_BUILD_TESTS follows BUILD_TESTING (cmake_dependent_option): with BUILD_TESTING unset
  # it is a variable of seqembed's directory only, so it may be undefined here.
  foreach(option IN ITEMS SEQEMBED_BUILD_EXAMPLES SEQEMBED_BUILD_BENCHMARKS)
    if(NOT DEFINED ${option})
      message(FATAL_ERROR "consumer: seqembed defined no option ${option}")
    endif()
  endforeach()
  foreach(option IN ITEMS SEQEMBED_BUILD_TESTS SEQEMBED_BUILD_EXAMPLES SEQEMBED_BUILD_BENCHMARKS
                          SEQEMBED_INSTALL SEQEMBED_BUILD_DOCS)
    if(${option})
      message(FATAL_ERROR "consumer: ${option} is ${${option}} in a subproject build; it must "
                          "default to OFF when seqembed is not the top-level project")
    endif()
  endforeach()
  foreach(target IN ITEMS seqembed_tests seed_walkthrough docs)
    if(TARGET ${target})
      message(FATAL_ERROR "consumer: the subproject build defines seqembed's target ${target}")
    endif()
  endforeach()
  if(NOT TARGET seqembed::seqembed)
    message(FATAL_ERROR "consumer: no target seqembed::seqembed after adding seqembed")
  endif()
  if(seqembed_BINARY_DIR AND EXISTS "${seqembed_BINARY_DIR}/seqembedConfig.cmake")
    message(FATAL_ERROR "consumer: ${seqembed_BINARY_DIR}/seqembedConfig.cmake exists, but a "
                        "subproject without install rules has no package to offer")
  endif()
endfunction()
