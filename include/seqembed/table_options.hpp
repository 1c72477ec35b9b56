/// @file table_options.hpp
/// @brief The options that the precomputed position tables share (sinusoidal, rotary, ALiBi):
///        how their values are computed and what rows past the table do.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

namespace seqembed {

/// @brief How the table's values are computed.
enum class TablePrecision {
    /// Angles in double-double with a long double frequency, rounded once: a float table is
    /// within 1 ulp of the exact value for every position below 1,000,000.
    exact,
    /// The chosen DivTermForm's arithmetic carried out in Scalar, as PyTorch code does, for
    /// users who need the framework's float32 numbers (which drift from the exact ones: 3.9e-4
    /// at position 5000). In a float table each step is PyTorch's float32 operation up to the
    /// angle, with exp and pow correctly rounded, and the angle's cos and sin are the correctly
    /// rounded float32 values: the same bits on every platform and ISA. PyTorch's own CPU
    /// kernels (glibc's expf, powf, cosf and sinf in the scalar ones, SLEEF in the vector ones)
    /// are not correctly rounded and differ from these in the last bit of some values. (Rotary
    /// tables take the same steps: RotaryEmbedding.) A double table uses the C library's
    /// double pow, exp, cos and sin, as PyTorch's float64 scalar kernels do.
    follow_scalar
};

/// @brief What rows past the precomputed table do.
enum class BeyondTable {
    throw_error,  ///< throw index_error; nothing is clamped or wrapped.
    compute       ///< compute the rows on the fly, in the table's precision.
};

}  // namespace seqembed
