/// @file detail/fused_rows.hpp
/// @brief The hot loop of InputPipeline: one pass per output row.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../dropout.hpp"
#include "../types.hpp"

namespace seqembed::detail {

/// out = embedding * scale + position, element by element, each product rounded before the sum
/// as PyTorch's separate `*` and `+` kernels round it (kept as two statements so that a
/// compiler in its default mode does not fuse them into one FMA).
template <typename Scalar>
void scale_and_add(Scalar* out, const Scalar* embedding, Scalar scale, const Scalar* position,
                   Index width) noexcept {
    for (Index j = 0; j < width; ++j) {
        const Scalar scaled = embedding[j] * scale;
        out[j] = scaled + position[j];
    }
}

/// out += embedding * scale, for a position row already written to out.
template <typename Scalar>
void add_scaled(Scalar* out, const Scalar* embedding, Scalar scale, Index width) noexcept {
    for (Index j = 0; j < width; ++j) {
        const Scalar scaled = embedding[j] * scale;
        out[j] = scaled + out[j];
    }
}

/// One output row: the token's scaled embedding plus its position row, then dropout.
/// Positional provides stored_row (nullptr when it must compute) and row_into.
template <typename Scalar, typename Positional>
void embed_row(Scalar* out, const Scalar* embedding, Scalar scale, const Positional& positions,
               std::int64_t position_row, Index width) {
    if (const Scalar* stored = positions.stored_row(position_row)) {
        scale_and_add(out, embedding, scale, stored, width);
    } else {
        positions.row_into(position_row, out);
        add_scaled(out, embedding, scale, width);
    }
}

}  // namespace seqembed::detail
