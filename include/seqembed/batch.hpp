/// @file batch.hpp
/// @brief Batch: what one forward reads (ids, token types, padding, step offsets, explicit
///        position ids), and the rule that gives each token its position.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include "detail/checks.hpp"
#include "error.hpp"
#include "padding.hpp"
#include "types.hpp"

namespace seqembed {

/// @brief Which number a token's position is, when no explicit position ids are given.
///
/// Each rule is one a framework's forward computes; `past` below is the number of past tokens an
/// attention mask over past + current tokens covers (Padding::from_mask with more columns than
/// the ids), 0 otherwise; StepOffsets are added on top.
enum class PositionNumbering {
    /// The number of real tokens before it in its sequence, past tokens of the mask included:
    /// left and right padding give the same positions. OPT's `cumsum(attention_mask) - 1`, and
    /// the position ids Hugging Face's generate() derives from the mask. A padded token takes
    /// position -1 (OPT reads table row offset - 1 for it).
    real_tokens,
    /// Its index in the sequence, padding included, after the past tokens: `past + t`. What BERT,
    /// ELECTRA, GPT-2, BART, Marian and the rotary decoders (Llama, ...) compute without
    /// position_ids; with left padding the first real token is not at position 0.
    sequence_index,
    /// RoBERTa's create_position_ids_from_input_ids: the number of ids other than the padding id
    /// (PipelineOptions::padding_id) before it in the current ids, plus `past`; a token whose id
    /// is the padding id takes position -1 (RoBERTa reads table row padding_idx for it), wherever
    /// it stands and whatever the attention mask says.
    non_padding_ids
};

/// @brief How the rows of padded tokens are written.
enum class PaddedRows {
    /// Zero rows: padded tokens are not looked up (their ids may be anything).
    zero,
    /// Computed as the framework's forward computes them: the token's row (its id must be in the
    /// vocabulary), its token type, and the position its numbering gives it (BERT-like families
    /// word[pad] + position[t]; RoBERTa and OPT the row before the table's offset), then
    /// LayerNorm and dropout: whole outputs compare equal to Hugging Face's hidden states.
    computed
};

/// @brief One forward's inputs beside the ids, as a Hugging Face forward's keyword arguments.
///        Every member is a view: keep what it views alive until the forward returns.
/// @code
/// seqembed::Batch batch(input_ids);
/// batch.padding = seqembed::Padding::from_mask(attention_mask);  // batch x seq, or batch x (past + seq)
/// batch.token_types = token_type_ids;                            // optional
/// batch.position_ids = position_ids;                             // optional, batch x seq (or 1 x seq)
/// seqembed::RowMatrix<float> x = pipeline.forward(batch);
/// @endcode
struct Batch {
    /// @brief A batch of these ids, every token real, no token types, offsets or position ids.
    /// @param input_ids batch x seq ids (viewed).
    Batch(const TokenIds& input_ids) noexcept : ids(input_ids) {}  // NOLINT(google-explicit-constructor)
    /// @brief A batch of these ids, with their padding and step offsets (the arguments of the
    ///        overloads that predate Batch).
    /// @param input_ids batch x seq ids (viewed).
    /// @param which_real which tokens are real.
    /// @param step_offsets added to the positions.
    Batch(const TokenIds& input_ids, const Padding& which_real, const StepOffsets& step_offsets) noexcept
        : ids(input_ids), padding(which_real), offsets(step_offsets) {}

    /// @brief batch x seq token ids.
    TokenIds ids;
    /// @brief batch x seq token type (segment) ids, or none: every token reads type row 0.
    std::optional<TokenIds> token_types;
    /// @brief Which tokens are real. An attention mask may cover past tokens too (batch x
    ///        (past + seq), as Hugging Face callers hold it while decoding with a cache): its last
    ///        seq columns mark the current tokens, and the numbering counts the past ones.
    Padding padding = Padding::none();
    /// @brief Added to every position the numbering gives (tokens already decoded, when the
    ///        padding does not cover them). Not combined with position_ids.
    StepOffsets offsets;
    /// @brief Explicit positions, batch x seq or 1 x seq (the same for every sequence), as a
    ///        forward's position_ids: token (b, t) takes position_ids(b, t) whatever the
    ///        numbering and padding. A learned table reads row offset + position_ids(b, t).
    std::optional<TokenIds> position_ids;
};

namespace detail {

/// The numbering's name, as messages spell it.
inline const char* numbering_name(PositionNumbering numbering) noexcept {
    switch (numbering) {
        case PositionNumbering::real_tokens: return "real_tokens";
        case PositionNumbering::sequence_index: return "sequence_index";
        case PositionNumbering::non_padding_ids: return "non_padding_ids";
    }
    return "?";
}

/// Throws unless the padding, offsets, token types and position ids fit the ids.
inline void require_batch_fits(const Batch& batch) {
    batch.padding.require_fits(batch.ids);
    batch.offsets.require_fits(batch.ids.rows());
    if (batch.token_types)
        require_shape("token type ids", batch.token_types->rows(), batch.token_types->cols(), batch.ids.rows(),
                      batch.ids.cols());
    if (batch.position_ids) {
        const TokenIds& given = *batch.position_ids;
        if (given.cols() != batch.ids.cols() || (given.rows() != batch.ids.rows() && given.rows() != 1))
            fail<shape_error>("position ids are ", given.rows(), " x ", given.cols(), ", expected ", batch.ids.rows(),
                              " x ", batch.ids.cols(), " (or 1 x ", batch.ids.cols(), ") as the ids");
        for (Index b = 0; b < batch.ids.rows(); ++b)
            if (batch.offsets.of(b) != 0)
                fail<value_error>("both explicit position ids and a step offset (", batch.offsets.of(b),
                                  " for sequence ", b, ") were given; position ids are positions as they stand");
    }
}

/// Calls visit(b, t, real, position) for every token of sequences first_row .. end_row - 1 in
/// row-major order: whether the padding marks it real, and the position the rule gives it (for
/// padded tokens too: what a framework computes for them). A visit taking a fifth bool is also
/// told whether the position may read a learned table's rows before its offset: an explicit
/// position id, or the rule's -1 for a padded token or a padding id (what OPT and RoBERTa read
/// there); a numbered position made negative by a step offset may not. A sum past the int64
/// range saturates (no table has such a row). require_batch_fits must have passed.
template <typename Visit>
void for_each_position(const Batch& batch, PositionNumbering numbering, TokenId padding_id, Index first_row,
                       Index end_row, Visit&& visit) {
    constexpr bool told_before_offset = std::is_invocable_v<Visit&, Index, Index, bool, std::int64_t, bool>;
    const Index past = batch.padding.past_length(batch.ids);
    const TokenIds* given = batch.position_ids ? &*batch.position_ids : nullptr;
    // Per sequence: its offset, and the ids other than the padding id counted so far.
    Index row = -1;
    std::int64_t offset = 0;
    std::int64_t non_padding = 0;
    batch.padding.for_each_token(batch.ids, first_row, end_row, [&](Index b, Index t, std::int64_t token_index) {
        if (b != row) {
            row = b;
            offset = batch.offsets.of(b);
            non_padding = 0;
        }
        std::int64_t position = -1;
        bool before_offset = true;
        if (given != nullptr) {
            position = (*given)(given->rows() == 1 ? 0 : b, t);
        } else {
            if (numbering == PositionNumbering::real_tokens) {
                position = token_index;
            } else if (numbering == PositionNumbering::sequence_index) {
                position = static_cast<std::int64_t>(past + t);
            } else if (batch.ids(b, t) != padding_id) {
                position = static_cast<std::int64_t>(past) + non_padding++;
            }
            if (position >= 0) {
                before_offset = false;
                // position >= 0: only a positive offset can overflow, and it saturates
                position = offset > 0 && position > std::numeric_limits<std::int64_t>::max() - offset
                               ? std::numeric_limits<std::int64_t>::max()
                               : position + offset;
            }
        }
        if constexpr (told_before_offset)
            visit(b, t, token_index >= 0, position, before_offset);
        else
            visit(b, t, token_index >= 0, position);
    });
}

}  // namespace detail
}  // namespace seqembed
