/// @file detail/fused_rows.hpp
/// @brief The hot loop of InputPipeline: one pass per output row.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../dropout.hpp"
#include "../types.hpp"

namespace seqembed::detail {

/// out = embedding * scale.
template <typename Scalar>
void scale_into(Scalar* out, const Scalar* embedding, Scalar scale, Index width) noexcept {
    // Eigen's own packets: vectorised at -O2 too, where GCC's loop vectoriser stays off.
    Eigen::Map<Eigen::Array<Scalar, Eigen::Dynamic, 1>>(out, width) =
        Eigen::Map<const Eigen::Array<Scalar, Eigen::Dynamic, 1>>(embedding, width) * scale;
}

/// out = embedding * scale, then out += position, in two loops over a row that stays in L1:
/// each product is rounded before the sum, as PyTorch's separate `*` and `+` kernels round it,
/// and no compiler can fuse the two into an FMA (GCC does so across statements in C++ by
/// default, -ffp-contract=fast).
template <typename Scalar>
void scale_and_add(Scalar* out, const Scalar* embedding, Scalar scale, const Scalar* position,
                   Index width) noexcept {
    scale_into(out, embedding, scale, width);
    Eigen::Map<Eigen::Array<Scalar, Eigen::Dynamic, 1>>(out, width) +=
        Eigen::Map<const Eigen::Array<Scalar, Eigen::Dynamic, 1>>(position, width);
}

/// Asks the cache for bytes at data ahead of their use (a gathered embedding row is a run of
/// cache lines the hardware prefetcher cannot guess the start of).
inline void prefetch(const void* data, std::size_t bytes) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    const char* line = static_cast<const char*>(data);
    for (std::size_t offset = 0; offset < bytes; offset += 64) __builtin_prefetch(line + offset, 0, 3);
#else
    (void)data;
    (void)bytes;
#endif
}

/// One output row: the token's scaled embedding plus its position row. Positional provides
/// stored_row (nullptr when the row must be computed) and add_row_to.
template <typename Scalar, typename Positional>
void embed_row(Scalar* out, const Scalar* embedding, Scalar scale, const Positional& positions,
               std::int64_t position_row, Index width) {
    if (const Scalar* stored = positions.stored_row(position_row)) {
        scale_and_add(out, embedding, scale, stored, width);
    } else {
        scale_into(out, embedding, scale, width);
        positions.add_row_to(position_row, out);
    }
}

}  // namespace seqembed::detail
