/// @file detail/engine/rows.hpp
/// @brief What the kernels are asked to write (rows; a token's heads to rotate), and the state the
///        row kernel carries from row to row. Plain data, the same for every ISA: the components
///        describe rows, the kernels write them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../../types.hpp"
#include "../random/dropout_layout.hpp"

namespace seqembed::detail {

/// One output row: v[j] = Scalar(embedding[j]) * scale, rounded, then each added row's value
/// in the order the rows were added, j < width; then, when the job normalizes, LayerNorm of v;
/// then the dropout factor. A stage that adds a row (a position, a token type) is one add() at
/// the place that builds the row: the kernel sums however many there are.
template <typename Scalar, typename Storage>
struct RowSources {
    /// Rows a RowSources can add: the pipeline's position and token type.
    static constexpr int max_added = 2;

    /// Where the row goes.
    Scalar* out = nullptr;
    /// The token's table row; null for a padded token, whose row is written as zeros.
    const Storage* embedding = nullptr;
    /// Index of out[0] in the whole output, counted row-major: the dropout mask's element index.
    std::uint64_t first_element = 0;
    /// The rows to add, in order of addition (an added row may be `out` itself: a row computed
    /// in place before the kernel runs).
    const Scalar* added[max_added] = {};
    /// How many of `added` are set.
    int added_count = 0;

    /// Adds `row` after the rows added so far; a null row adds nothing (not even a zero, which
    /// would turn -0 into +0).
    void add(const Scalar* row) noexcept {
        if (row != nullptr) added[added_count++] = row;
    }
};

/// What is the same for every row of one call.
template <typename Scalar>
struct RowJob {
    /// Values per row.
    Index width = 0;
    /// The embedding's scale.
    Scalar scale = Scalar(1);
    /// Write whole vectors with streaming (non-temporal) stores where the backend has them.
    bool streaming = false;
    /// Apply the dropout mask of `key`, multiplying by keep_scale or 0.
    bool dropping = false;
    /// The mask's seed, call and threshold.
    DropoutKey key;
    /// Scalar(1) / Scalar(1 - p).
    Scalar keep_scale = Scalar(1);
    /// LayerNorm over each row before dropout: (v - mean) * rstd * gamma + beta.
    bool normalizing = false;
    /// LayerNorm's weight and bias (width values each), when normalizing.
    const Scalar* gamma = nullptr;
    const Scalar* beta = nullptr;
    /// LayerNorm's epsilon, added to the variance.
    Scalar epsilon = Scalar(0);
};

/// The last two words of a dropout mask that a row kernel drew (MaskWindow), kept for the rows
/// after: a row that starts inside a word reads the word the row before it ended in.
struct MaskCache {
    /// The words' indices (bit i of word w is element 64 w + i), none (all ones) before a draw.
    std::uint64_t index[2] = {~std::uint64_t{0}, ~std::uint64_t{0}};
    /// The words.
    std::uint64_t word[2] = {0, 0};
};

/// What a kernel carries from one row to the next (and from one call to the next over rows of
/// the same pass): the vector-aligned piece of output that a row's last elements share with the
/// next row's first ones, and the mask's window.
template <typename Scalar>
struct RowCarry {
    /// Lanes of the shared vector, 64 bytes of them at most.
    static constexpr std::size_t max_lanes = 64 / sizeof(Scalar);
    alignas(64) Scalar lanes[max_lanes] = {};
    /// The aligned output address of the vector, or null when nothing is carried.
    Scalar* base = nullptr;
    /// Lanes [from, to) hold values not yet written.
    int from = 0;
    int to = 0;
    /// The dropout mask's last words.
    MaskCache mask;
};

/// A token's rows of Q and K, which one table row turns: head h of q at q + h * head_dim, of k
/// at k + h * head_dim (a group of no heads is left alone).
template <typename Activation>
struct TokenHeads {
    Activation* q = nullptr;
    Index q_heads = 0;
    Activation* k = nullptr;
    Index k_heads = 0;
    Index head_dim = 0;
};

}  // namespace seqembed::detail
