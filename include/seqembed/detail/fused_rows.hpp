/// @file detail/fused_rows.hpp
/// @brief The hot loop of InputPipeline: one pass per output row.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../types.hpp"

// Turns off the fusion of a * b + c into an FMA for one function, so that a product is
// rounded before its sum as PyTorch rounds it. GCC honours it whatever -ffp-contract the user
// builds with; clang honours its pragma except under -ffp-contract=fast (its "fast" mode ignores
// pragmas), where only the AVX-512 streaming row, written with rounding-mode intrinsics, is
// safe. README says so.
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

/// A row of width values of type Value, as an Eigen array.
template <typename Value>
using RowArray = Eigen::Array<Value, Eigen::Dynamic, 1>;

/// out = Scalar(embedding) * scale. Eigen's own packets: vectorised at -O2 too, where GCC's
/// loop vectoriser stays off.
template <typename Scalar, typename Storage>
void scale_into(Scalar* out, const Storage* embedding, Scalar scale, Index width) noexcept {
    Eigen::Map<RowArray<Scalar>>(out, width) =
        Eigen::Map<const RowArray<Storage>>(embedding, width).template cast<Scalar>() * scale;
}

/// out = embedding * scale + position, each product rounded before the sum as PyTorch's
/// separate `*` and `+` kernels round it: FMA contraction is off for this function (GCC
/// contracts by default in C++, -ffp-contract=fast).
template <typename Scalar, typename Storage>
SEQEMBED_DETAIL_NO_FP_CONTRACT void scale_and_add(Scalar* out, const Storage* embedding,
                                                  Scalar scale, const Scalar* position,
                                                  Index width) noexcept {
    SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY
    if constexpr (std::is_same_v<Storage, Eigen::bfloat16>) {
        // A bfloat16 is the top half of a float: widening is a shift, which vectorises, where
        // Eigen's scalar conversion does not.
        for (Index j = 0; j < width; ++j) {
            std::uint16_t half_bits;
            std::memcpy(&half_bits, embedding + j, sizeof half_bits);
            const std::uint32_t bits = static_cast<std::uint32_t>(half_bits) << 16;
            float widened;
            std::memcpy(&widened, &bits, sizeof widened);
            out[j] = widened * scale + position[j];
        }
    } else {
        Eigen::Map<RowArray<Scalar>>(out, width) =
            Eigen::Map<const RowArray<Storage>>(embedding, width).template cast<Scalar>() * scale +
            Eigen::Map<const RowArray<Scalar>>(position, width);
    }
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

/// One output row: the token's scaled embedding plus its position row, `stored` (the caller's
/// positions.stored_row(position_row)) or, when that is null, computed by add_row_to.
template <typename Scalar, typename Storage, typename Positional>
void embed_row(Scalar* out, const Storage* embedding, Scalar scale, const Scalar* stored,
               const Positional& positions, std::int64_t position_row, Index width) {
    if (stored != nullptr) {
        scale_and_add(out, embedding, scale, stored, width);
    } else {
        scale_into(out, embedding, scale, width);
        positions.add_row_to(position_row, out);
    }
}

}  // namespace seqembed::detail
