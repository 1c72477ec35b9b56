/// @file vocabulary_shard.hpp
/// @brief VocabularyShard: which rows of a global vocabulary a token table holds, for
///        vocabulary-parallel tables (Megatron-LM's VocabParallelEmbedding split);
///        VocabularySplit: which rank's part to hold, before the vocabulary's size is known.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include "detail/checks.hpp"
#include "error.hpp"
#include "types.hpp"

namespace seqembed {

/// @brief Rows [first, first + rows) of a vocabulary of vocab_size ids: the part of the token
///        table one rank holds when the table's rows are split across ranks.
///
/// A TokenEmbedding built with a shard (TokenEmbeddingOptions::shard) looks up the ids it holds
/// and gives a zero row for every other id of the vocabulary; an id outside the vocabulary is
/// still an error. The whole table is the shard {0, vocab_size, vocab_size}.
/// @code
/// // Rank 1 of 3 over a 32001-id vocabulary: ids [10667, 21334).
/// const auto shard = seqembed::VocabularyShard::of_rank(32001, 3, 1);
/// @endcode
struct VocabularyShard {
    /// @brief The first id the shard holds.
    Index first = 0;
    /// @brief How many ids it holds, from first.
    Index rows = 0;
    /// @brief The size of the whole vocabulary.
    Index vocab_size = 0;

    /// @brief The whole vocabulary as one shard.
    /// @param vocab_size the vocabulary's size, > 0.
    /// @return {0, vocab_size, vocab_size}.
    /// @throws value_error for a size <= 0.
    static VocabularyShard whole(Index vocab_size) {
        detail::require_positive("vocab_size", vocab_size);
        return {0, vocab_size, vocab_size};
    }

    /// @brief Rank `rank`'s part of a vocabulary split into `ranks` contiguous parts whose sizes
    ///        differ by one at most, the larger ones first (numpy.array_split's rule; an even
    ///        split, as Megatron-LM requires, when ranks divides vocab_size).
    /// @param vocab_size the vocabulary's size, > 0.
    /// @param ranks the number of parts, in [1, vocab_size].
    /// @param rank the part, in [0, ranks).
    /// @return the part's first id, its size and vocab_size.
    /// @throws value_error for a size <= 0, or ranks outside [1, vocab_size]; index_error for a
    ///         rank outside [0, ranks).
    static VocabularyShard of_rank(Index vocab_size, Index ranks, Index rank) {
        detail::require_positive("vocab_size", vocab_size);
        if (ranks < 1 || ranks > vocab_size)
            detail::fail<value_error>("a vocabulary of ", vocab_size, " ids cannot be split into ", ranks,
                                      " parts of at least one id");
        if (rank < 0 || rank >= ranks)
            detail::fail<index_error>("rank ", rank, " is outside [0, ", ranks, ")");
        const Index base = vocab_size / ranks;
        const Index larger = vocab_size % ranks;
        return {rank * base + (rank < larger ? rank : larger), base + (rank < larger ? 1 : 0), vocab_size};
    }

    /// @brief One past the last id the shard holds.
    /// @return first + rows.
    Index end() const noexcept { return first + rows; }
    /// @brief Whether the shard holds an id.
    /// @param id a token id.
    /// @return true for an id in [first, first + rows).
    bool holds(TokenId id) const noexcept { return id >= first && id < first + rows; }
    /// @brief Whether the shard is the whole vocabulary.
    /// @return true when it holds every id.
    bool is_whole() const noexcept { return first == 0 && rows == vocab_size; }

    /// @brief Throws unless the shard is a non-empty part of a non-empty vocabulary.
    /// @param what the argument's name, for the message.
    /// @throws value_error naming what is wrong.
    void require_valid(const char* what) const {
        if (vocab_size <= 0 || rows <= 0 || first < 0 || first > vocab_size - rows)
            detail::fail<value_error>(what, ": rows [", first, ", ", first, " + ", rows,
                                      ") are not a non-empty part of a vocabulary of ", vocab_size, " ids");
    }
};

/// @brief How a token table's rows are split across ranks, before the vocabulary's size is
///        known: which of `ranks` contiguous parts this rank holds (VocabularyShard::of_rank's
///        rule). The default is the whole vocabulary, one rank.
/// @code
/// // Rank 1 of 3 loads ids [10667, 21334) of a 32001-id table from its checkpoint:
/// auto llama = seqembed::io::load_llama("Llama-3.1-8B/", {}, seqembed::VocabularySplit{3, 1});
/// @endcode
struct VocabularySplit {
    /// @brief The number of parts, in [1, vocab_size].
    Index ranks = 1;
    /// @brief The part this rank holds, in [0, ranks).
    Index rank = 0;

    /// @brief The part of a vocabulary of vocab_size ids this rank holds.
    /// @param vocab_size the vocabulary's size, > 0.
    /// @return VocabularyShard::of_rank(vocab_size, ranks, rank).
    /// @throws as VocabularyShard::of_rank: value_error for a size <= 0 or ranks outside
    ///         [1, vocab_size]; index_error for a rank outside [0, ranks).
    VocabularyShard of(Index vocab_size) const { return VocabularyShard::of_rank(vocab_size, ranks, rank); }
    /// @brief Whether the split is one part, the whole vocabulary.
    /// @return true when ranks is 1.
    bool is_whole() const noexcept { return ranks == 1; }
};

/// @brief Whether two shards are the same part of the same vocabulary.
/// @param a a shard.
/// @param b another.
/// @return true when first, rows and vocab_size are equal.
inline bool operator==(const VocabularyShard& a, const VocabularyShard& b) noexcept {
    return a.first == b.first && a.rows == b.rows && a.vocab_size == b.vocab_size;
}
/// @brief Whether two shards differ.
/// @param a a shard.
/// @param b another.
/// @return !(a == b).
inline bool operator!=(const VocabularyShard& a, const VocabularyShard& b) noexcept { return !(a == b); }

}  // namespace seqembed
