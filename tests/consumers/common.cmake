# Shared by the consumer projects: the executable and its test, and the checks that seqembed,
# pulled in as a subproject, keeps its own tests, examples and benchmarks out of the build.

# seqembed_consumer(<name> <target>...): an executable <name> built from consumer.cpp, linked to
# the targets, and registered as the consumer project's test.
function(seqembed_consumer name)
  add_executable(${name} "${CMAKE_CURRENT_LIST_DIR}/../consumer.cpp")
  target_link_libraries(${name} PRIVATE ${ARGN})
  target_compile_features(${name} PRIVATE cxx_std_17)
  add_test(NAME ${name} COMMAND ${name})
endfunction()

# Fails the configure unless seqembed, added as a subproject without any option set by the
# parent, switched its tests, examples and benchmarks off (PROJECT_IS_TOP_LEVEL) and does not
# add install rules to the parent's install.
function(seqembed_consumer_check_subproject_defaults)
  # SEQEMBED_BUILD_TESTS follows BUILD_TESTING (cmake_dependent_option): with BUILD_TESTING unset
  # it is a variable of seqembed's directory only, so it may be undefined here.
  foreach(option IN ITEMS SEQEMBED_BUILD_TESTS SEQEMBED_BUILD_EXAMPLES SEQEMBED_BUILD_BENCHMARKS)
    if(NOT DEFINED ${option} AND NOT option STREQUAL "SEQEMBED_BUILD_TESTS")
      message(FATAL_ERROR "consumer: seqembed defined no option ${option}")
    endif()
    if(${option})
      message(FATAL_ERROR "consumer: ${option} is ${${option}} in a subproject build; it must "
                          "default to OFF when seqembed is not the top-level project")
    endif()
  endforeach()
  # Newer options: absent in an older commit, never ON by default in a subproject.
  foreach(option IN ITEMS SEQEMBED_INSTALL SEQEMBED_BUILD_DOCS)
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
endfunction()
