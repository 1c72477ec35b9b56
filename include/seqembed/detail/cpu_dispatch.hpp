/// @file detail/cpu_dispatch.hpp
/// @brief SEQEMBED_DETAIL_TARGET_CLONES: the compute-bound kernels compiled for several x86
///        levels and picked at load time, so a build without -march flags still uses AVX2 or
///        AVX-512 where the CPU has them.
///
/// GCC's target_clones (an ifunc resolved once by the dynamic loader) on x86-64 Linux: measured
/// on the headline workload at -O2, the 5000 x 512 exact table goes from 12.2 to 3.5 ms and
/// training from 16.1 to 11.3 ms. Elsewhere (clang, other systems, or a build that already
/// targets AVX-512) the macro is empty. Define SEQEMBED_NO_TARGET_CLONES to turn it off.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 && defined(__x86_64__) && \
    defined(__linux__) && !defined(__AVX512F__) && !defined(SEQEMBED_NO_TARGET_CLONES)
#define SEQEMBED_DETAIL_TARGET_CLONES \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SEQEMBED_DETAIL_TARGET_CLONES
#endif
