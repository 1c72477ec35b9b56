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
