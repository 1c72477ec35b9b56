/// @file detail/fused_rows.hpp
/// @brief The hot loop of InputPipeline: one pass per output row.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../dropout.hpp"
#include "../types.hpp"

// Turns off the fusion of a * b + c into an FMA for one function, so that a product is
// rounded before its sum as PyTorch rounds it, whatever -ffp-contract the user builds with.
#if defined(__clang__)
#define SEQEMBED_DETAIL_NO_FP_CONTRACT
#define SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY _Pragma("clang fp contract(off)")
#elif defined(__GNUC__)
#define SEQEMBED_DETAIL_NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#define SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY
#else  // MSVC contracts only under /fp:fast or /fp:contract
#define SEQEMBED_DETAIL_NO_FP_CONTRACT
#define SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY
#endif

namespace seqembed::detail {

/// out = embedding * scale.
template <typename Scalar>
void scale_into(Scalar* out, const Scalar* embedding, Scalar scale, Index width) noexcept {
    // Eigen's own packets: vectorised at -O2 too, where GCC's loop vectoriser stays off.
    Eigen::Map<Eigen::Array<Scalar, Eigen::Dynamic, 1>>(out, width) =
        Eigen::Map<const Eigen::Array<Scalar, Eigen::Dynamic, 1>>(embedding, width) * scale;
}

/// out = embedding * scale + position, each product rounded before the sum as PyTorch's
/// separate `*` and `+` kernels round it: FMA contraction is off for this function (GCC
/// contracts by default in C++, -ffp-contract=fast).
template <typename Scalar>
SEQEMBED_DETAIL_NO_FP_CONTRACT void scale_and_add(Scalar* out, const Scalar* embedding,
                                                  Scalar scale, const Scalar* position,
                                                  Index width) noexcept {
    SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY
    using Row = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
    Eigen::Map<Row>(out, width) =
        Eigen::Map<const Row>(embedding, width) * scale + Eigen::Map<const Row>(position, width);
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
