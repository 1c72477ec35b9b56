/// @file detail/engine/gradient_rows.hpp
/// @brief What the backward's element loops (gradient-inl.hpp) read and do: rows of an output's
///        gradient, through a dropout mask held as flat bits, and the role of one read of a table
///        row in that row's sum.
#pragma once

#include <cstdint>
#include <type_traits>

#include "../../types.hpp"

namespace seqembed::detail {

/// The type the backward accumulates sums in: double for float (a frequent token's gradient sums
/// thousands of rows), double for double.
template <typename Scalar>
using WideScalar = std::conditional_t<std::is_same_v<Scalar, float>, double, Scalar>;

/// The dropout mask of values [first, first + count) of one row of the output's gradient, as a
/// read sees them: value j times keep_scale where bit first_element + j of the mask's flat kept
/// bits is set, times 0 where it is clear; the values as they are when `kept` is null.
template <typename Scalar>
struct SpanMask {
    const std::uint64_t* kept = nullptr;
    std::uint64_t first_element = 0;
    Scalar keep_scale = 1;
};

/// The rows a backward sums: row r of a gradient matrix (width values at values + r * stride),
/// each value multiplied by its element's dropout factor when `kept` is set: keep_scale where
/// bit r * width + j of the mask's flat kept bits (kept_bits) is set, 0 where it is clear. That
/// is Dropout::apply's value x keep_scale or value x 0, bit for bit (a dropped NaN stays NaN, a
/// dropped negative becomes -0).
template <typename Scalar>
struct GradientRows {
    const Scalar* values = nullptr;
    Index stride = 0;
    const std::uint64_t* kept = nullptr;
    Scalar keep_scale = 1;

    /// Values [first, ...) of row `row`, for rows `width` values wide.
    const Scalar* span(Index row, Index first) const noexcept { return values + row * stride + first; }

    /// The mask of values [first, ...) of row `row`, for rows `width` values wide.
    SpanMask<Scalar> mask_of(Index row, Index width, Index first) const noexcept {
        return {kept, static_cast<std::uint64_t>(row * width + first), keep_scale};
    }

    /// The rows of a row-major matrix, without a mask.
    template <typename Matrix>
    static GradientRows of(const Matrix& matrix) noexcept {
        return {matrix.data(), matrix.outerStride(), nullptr, Scalar(1)};
    }
};

/// What one read does to its table row's gradient, by its place among the row's reads in order
/// of source row: the sum starts at 0, adds factor x value in WideScalar for each read and is
/// rounded once, after the last. A row's only read writes the rounded value at once. A float
/// row read twice with one factor keeps its first read's values in its gradient row instead of
/// a sum (pairs_in_place): the products of two floats are exact in double, so the second read
/// makes the same sum from them.
enum class ReadRole : std::uint8_t {
    only,          // gradient = 0 + factor x value, rounded
    first,         // sum = 0 + factor x value
    middle,        // sum += factor x value
    last,          // gradient = sum + factor x value, rounded
    first_of_two,  // gradient = value
    last_of_two,   // gradient = (0 + factor x gradient) + factor x value, rounded
};

/// Whether a row's two reads with one factor take first_of_two and last_of_two: for float, whose
/// products are exact in WideScalar (double). A double product is rounded, and how it is kept
/// from fusing with the sum is the sums' business (GradientKernel::each_product).
template <typename Scalar>
inline constexpr bool pairs_in_place = !std::is_same_v<WideScalar<Scalar>, Scalar>;

}  // namespace seqembed::detail
