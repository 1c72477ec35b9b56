// detail/simd/backend_macros.hpp: which vector backends this build compiles, as the macros
// SEQEMBED_DETAIL_X86_KERNELS, SEQEMBED_DETAIL_AVX512_KERNELS and SEQEMBED_DETAIL_NEON_KERNELS
// (1 or 0).
//
// No #pragma once, by design: a header that tests these macros includes this file after its
// other includes and backend_macros_end.hpp at its end, so that the macros do not outlive the
// headers that need them (a user's translation unit never sees them).
//
// The x86 backends (AVX2, AVX-512) are compiled by GCC and clang on x86-64 whatever the build's
// flags, each in a region with its own target (detail/engine/kernels.hpp), and run only where
// the CPU has the ISA. NEON is the baseline of AArch64. The scalar backend is always there.
// SEQEMBED_NO_X86_KERNELS or SEQEMBED_NO_NEON_KERNELS, defined by the user, leave them out;
// SEQEMBED_NO_AVX512_KERNELS leaves out the AVX-512 backends alone (AVX2 stays).
#ifndef SEQEMBED_DETAIL_X86_KERNELS
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(_MSC_VER) && \
    !defined(SEQEMBED_NO_X86_KERNELS)
#define SEQEMBED_DETAIL_X86_KERNELS 1
#else
#define SEQEMBED_DETAIL_X86_KERNELS 0
#endif
#endif

#ifndef SEQEMBED_DETAIL_AVX512_KERNELS
#if SEQEMBED_DETAIL_X86_KERNELS && !defined(SEQEMBED_NO_AVX512_KERNELS)
#define SEQEMBED_DETAIL_AVX512_KERNELS 1
#else
#define SEQEMBED_DETAIL_AVX512_KERNELS 0
#endif
#endif

#ifndef SEQEMBED_DETAIL_NEON_KERNELS
#if defined(__aarch64__) && defined(__ARM_NEON) && !defined(SEQEMBED_NO_NEON_KERNELS)
#define SEQEMBED_DETAIL_NEON_KERNELS 1
#else
#define SEQEMBED_DETAIL_NEON_KERNELS 0
#endif
#endif
