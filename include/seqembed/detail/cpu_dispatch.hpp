/// @file detail/cpu_dispatch.hpp
/// @brief Kernels picked by what the CPU has, so that a build without -march flags still uses
///        AVX2 or AVX-512 where they exist.
///
/// Two mechanisms, both for GCC and clang on x86-64 only (elsewhere the kernels are compiled for
/// the build's own flags):
/// - SEQEMBED_DETAIL_TARGET_CLONES, for portable loops that compilers vectorise: GCC's
///   target_clones (an ifunc resolved once by the dynamic loader, x86-64 Linux). Measured on the
///   headline workload at -O2, the 5000 x 512 exact table goes from 12.2 to 3.5 ms. Empty with
///   clang, elsewhere, in builds that already target AVX-512, and under -fsanitize=thread (the
///   loader runs the instrumented resolver before ThreadSanitizer is set up: the program died
///   before main). Define SEQEMBED_NO_TARGET_CLONES to turn it off.
/// - SEQEMBED_DETAIL_AVX512_KERNELS, for kernels written with AVX-512F intrinsics (Philox, the
///   dropout mask, the streaming row): compiled under a target attribute whatever the flags, and
///   called when cpu_has_avx512f(). Not with clang-cl or clang for the MSVC ABI, whose linker
///   lacks what __builtin_cpu_supports needs. Define SEQEMBED_NO_AVX512_KERNELS to turn them off.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 && defined(__x86_64__) && \
    defined(__linux__) && !defined(__AVX512F__) && !defined(SEQEMBED_NO_TARGET_CLONES) && \
    !defined(__SANITIZE_THREAD__)
#define SEQEMBED_DETAIL_TARGET_CLONES \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SEQEMBED_DETAIL_TARGET_CLONES
#endif

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !defined(_MSC_VER) && \
    !defined(SEQEMBED_NO_AVX512_KERNELS)
#include <immintrin.h>
#define SEQEMBED_DETAIL_AVX512_KERNELS 1
#define SEQEMBED_DETAIL_TARGET_AVX512 __attribute__((target("avx512f")))
// A small AVX-512 helper, inlined into its AVX-512 caller; and the same for a lambda's call
// operator (GCC does not give a lambda its enclosing function's target).
#define SEQEMBED_DETAIL_AVX512_INLINE __attribute__((target("avx512f"), always_inline)) inline
#define SEQEMBED_DETAIL_AVX512_LAMBDA __attribute__((target("avx512f"), always_inline))
#else
#define SEQEMBED_DETAIL_AVX512_KERNELS 0
#define SEQEMBED_DETAIL_TARGET_AVX512
#define SEQEMBED_DETAIL_AVX512_INLINE inline
#define SEQEMBED_DETAIL_AVX512_LAMBDA
#endif

// Around AVX-512 intrinsics: GCC 12's start from an undefined vector, which its -Wuninitialized
// reports in the caller (GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#define SEQEMBED_DETAIL_AVX512_WARNINGS_OFF                         \
    _Pragma("GCC diagnostic push")                                  \
    _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")           \
    _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define SEQEMBED_DETAIL_AVX512_WARNINGS_ON _Pragma("GCC diagnostic pop")
#else
#define SEQEMBED_DETAIL_AVX512_WARNINGS_OFF
#define SEQEMBED_DETAIL_AVX512_WARNINGS_ON
#endif

namespace seqembed::detail {

/// Whether the CPU runs AVX-512F code (asked once; always true in builds that target it).
inline bool cpu_has_avx512f() noexcept {
#if defined(__AVX512F__)
    return true;
#elif SEQEMBED_DETAIL_AVX512_KERNELS
    static const bool supported = __builtin_cpu_supports("avx512f") != 0;
    return supported;
#else
    return false;
#endif
}

}  // namespace seqembed::detail
