# seqembed_strict(target): the flags every target of our own builds with. Warnings are errors
# with g++ and clang++; no compiler extensions, so GCC does not fuse a * b + c into an FMA
# behind our back (its gnu++ modes imply -ffp-contract=fast) and results stay bit-comparable
# with PyTorch's.
function(seqembed_strict target)
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
  target_compile_features(${target} PRIVATE cxx_std_17)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                             -Wno-sign-conversion -Werror)
  elseif(MSVC)
    target_compile_options(${target} PRIVATE /W4 /WX /permissive-)
  endif()
endfunction()
