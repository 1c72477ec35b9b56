/// @file detail/compiler_hints.hpp
/// @brief Macros that tell the compiler what it cannot prove, so that the hot loops vectorise.
#pragma once

// Tells the compiler that the arrays of a kernel do not overlap, so that it vectorises the loop
// without runtime checks (GCC's -O2 vectorises only loops that need none; a byte array may alias
// anything unless told otherwise).
#if defined(__GNUC__) || defined(__clang__) || defined(_MSC_VER)
#define SEQEMBED_DETAIL_RESTRICT __restrict
#else
#define SEQEMBED_DETAIL_RESTRICT
#endif

// Keeps GCC from unrolling a loop completely at -O3, which would leave its body to the
// straight-line vectoriser (which fails on our kernels) instead of the loop vectoriser (which
// succeeds).
#if defined(__GNUC__) && !defined(__clang__)
#define SEQEMBED_DETAIL_NO_UNROLL _Pragma("GCC unroll 1")
#else
#define SEQEMBED_DETAIL_NO_UNROLL
#endif

// Unrolls the 15 runs of a dropout span completely, at -O2 too, so that each run's byte shift
// is a constant (a variable vector shift count costs a move into a vector register per run).
#if defined(__GNUC__) && !defined(__clang__)
#define SEQEMBED_DETAIL_UNROLL_RUNS _Pragma("GCC unroll 15")
#elif defined(__clang__)
#define SEQEMBED_DETAIL_UNROLL_RUNS _Pragma("unroll 15")
#else
#define SEQEMBED_DETAIL_UNROLL_RUNS
#endif

// Inlines a kernel into each caller, so that it is compiled for the caller's target (a function
// with an AVX-512 target attribute, or each of a target_clones function's versions): GCC does
// not inline a plain function into one with a target attribute of its own accord.
#if defined(__GNUC__) || defined(__clang__)
#define SEQEMBED_DETAIL_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define SEQEMBED_DETAIL_ALWAYS_INLINE inline
#endif
