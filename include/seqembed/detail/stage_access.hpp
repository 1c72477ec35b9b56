/// @file detail/stage_access.hpp
/// @brief The one door through which InputPipeline reaches the stages' internals (table rows,
///        position and token type rows, LayerNorm's row job, the dropout call counter), which
///        are private to the stages.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "../types.hpp"

namespace seqembed::detail {

/// Friend of every stage; forwards to their private row hooks.
struct StageAccess {
    template <typename Positional>
    static constexpr auto has_rows_before_offset(int)
        -> decltype(std::declval<const Positional&>().require_positions_before_offset(std::int64_t{0}, Index{0}),
                    bool()) {
        return true;
    }
    template <typename Positional>
    static constexpr bool has_rows_before_offset(...) {
        return false;
    }

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
    /// As require_positions, for positions that may read a learned table's rows before its
    /// offset (explicit position ids, a padded token's -1); stages without such rows check as
    /// require_positions does.
    template <typename Positional>
    static void require_positions_before_offset(const Positional& positions, std::int64_t first, Index count) {
        if constexpr (has_rows_before_offset<Positional>(0))
            positions.require_positions_before_offset(first, count);
        else
            positions.require_positions(first, count);
    }
    /// The position row `row` (a token index plus offsets): a stored row, or the row computed into
    /// `scratch` (d_model values), or null when the stage adds nothing.
    template <typename Positional, typename Scalar>
    static const Scalar* position_row(const Positional& positions, std::int64_t row, Scalar* scratch) {
        return positions.position_row(row, scratch);
    }
    /// The row of a token type id that the stage accepted.
    template <typename TokenTypes>
    static auto type_row(const TokenTypes& types, TokenId type) noexcept {
        return types.row(type);
    }
    /// The row kernel's job that applies a LayerNorm, to which the pipeline adds its other
    /// stages.
    template <typename Norm>
    static auto norm_job(const Norm& norm) noexcept {
        return norm.row_job();
    }
    /// Takes the call number of one training forward.
    template <typename Dropout, typename Parallel>
    static void kept_bits(const Dropout& dropout, std::uint64_t call, std::uint64_t count, const Parallel& parallel,
                          std::vector<std::uint64_t>& kept) {
        dropout.kept_bits(call, count, parallel, kept);
    }
    template <typename Dropout>
    static std::uint64_t take_call(const Dropout& dropout) noexcept {
        return dropout.take_call();
    }
};

}  // namespace seqembed::detail
