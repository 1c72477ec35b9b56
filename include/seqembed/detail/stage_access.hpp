/// @file detail/stage_access.hpp
/// @brief The one door through which InputPipeline reaches the stages' internals (table rows,
///        position rows, the dropout call counter), which are private to the stages.
#pragma once

#include <cstdint>

#include "../types.hpp"

namespace seqembed::detail {

/// Friend of every stage; forwards to their private row hooks.
struct StageAccess {
    /// The unscaled table row of a valid token id.
    template <typename Embedding>
    static auto table_row(const Embedding& embedding, TokenId id) noexcept {
        return embedding.table_row(id);
    }
    /// Throws unless rows [first, first + count) of the positional stage can be produced.
    template <typename Positional>
    static void require_positions(const Positional& positions, std::int64_t first, Index count) {
        positions.require_positions(first, count);
    }
    /// The position row `row` (a token index plus offsets): a stored row, or the row computed into
    /// `scratch` (d_model values), or null when the stage adds nothing.
    template <typename Positional, typename Scalar>
    static const Scalar* position_row(const Positional& positions, std::int64_t row, Scalar* scratch) {
        return positions.position_row(row, scratch);
    }
    /// Takes the call number of one training forward.
    template <typename Dropout>
    static std::uint64_t take_call(const Dropout& dropout) noexcept {
        return dropout.take_call();
    }
};

}  // namespace seqembed::detail
