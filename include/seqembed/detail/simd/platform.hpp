/// @file detail/simd/platform.hpp
/// @brief Which ISA backends this build compiles, and the few compiler facts the kernels rely on.
///
/// The x86 backends (AVX2, AVX-512) are compiled by GCC and clang on x86-64 whatever the build's
/// flags, each in a region with its own target (detail/engine/kernels.hpp), and run only where
/// the CPU has the ISA. NEON is the baseline of AArch64. The scalar backend is always there.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(_MSC_VER) && \
    !defined(SEQEMBED_NO_X86_KERNELS)
#define SEQEMBED_DETAIL_X86_KERNELS 1
#include <immintrin.h>
#else
#define SEQEMBED_DETAIL_X86_KERNELS 0
#endif

#if defined(__aarch64__) && defined(__ARM_NEON) && !defined(SEQEMBED_NO_NEON_KERNELS)
#define SEQEMBED_DETAIL_NEON_KERNELS 1
#include <arm_neon.h>
#else
#define SEQEMBED_DETAIL_NEON_KERNELS 0
#endif

namespace seqembed::detail {

/// Makes `value` opaque to the optimiser at this point, at no cost: the product before it is
/// rounded on its own, so that no compiler fuses it with the sum after it into a fused
/// multiply-add (GCC contracts by default in its gnu++ modes, clang under -ffp-contract=fast).
/// Every backend rounds the product, then the sum, as PyTorch's separate kernels do.
template <typename T>
inline void keep_rounded(T& value) noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__)) && \
    defined(__SSE2__)
    __asm__("" : "+v"(value));
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
    __asm__("" : "+w"(value));
#else
    (void)value;  // MSVC contracts only under /fp:fast or /fp:contract
#endif
}

/// Requests the cache line at `line` into L1 and L2 ahead of its use (a prefetch: never faults).
inline void request_line(const void* line) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(line, 0, 3);
#else
    (void)line;
#endif
}

}  // namespace seqembed::detail
