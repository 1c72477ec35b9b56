/// @file text/encoded_batch.hpp
/// @brief EncodedBatch: texts turned into one padded batch x seq id matrix with the length of
///        each sequence, as the tokenizers (Vocabulary, SentencePieceTokenizer) return them.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "../batch.hpp"
#include "../error.hpp"
#include "../padding.hpp"
#include "../types.hpp"

namespace seqembed {

/// @brief How a tokenizer's encode_batch pads its sequences.
struct BatchOptions {
    /// @brief Which end of each shorter sequence is filled (default right).
    PaddingSide side = PaddingSide::right;
    /// @brief The id written into padded places. Empty: the tokenizer's own padding token, and
    ///        an error if it has none.
    std::optional<TokenId> pad_id;
};

/// @brief A batch of encoded texts: row b of ids holds text b's ids, lengths[b] of them, on the
///        side opposite the padding; every other place holds the padding id.
///
/// padding() describes it to a forward, so that padded places give zero rows and every real
/// token gets its true position, whichever side is padded.
/// @code
/// auto batch = vocabulary.encode_batch({"The cat sat on the mat.", "The dog sat."});
/// auto x = pipeline.forward(batch.ids, batch.padding());
/// @endcode
struct EncodedBatch {
    /// @brief batch x seq ids, seq being the longest text's length.
    IdMatrix ids;
    /// @brief The number of real tokens of each text.
    std::vector<std::int64_t> lengths;
    /// @brief Which end of each row holds the padding.
    PaddingSide side = PaddingSide::right;
    /// @brief The id the padded places hold.
    TokenId pad_id = 0;
    /// @brief batch x seq token types (segment ids; 0 in padded places) from a tokenizer that
    ///        gives them (text::Tokenizer); 0 x 0 otherwise.
    IdMatrix token_types;
    /// @brief Per text, the bytes [begin, end) of the text each real token covers, in the order
    ///        of its ids, from a tokenizer that gives them (text::Tokenizer); empty otherwise.
    std::vector<std::vector<std::pair<std::size_t, std::size_t>>> offsets;

    /// @brief The Batch a forward reads: these ids, their padding, and the token types when one
    ///        is not 0. All-zero types are left out: a pipeline with a token-type table reads row
    ///        0 without them, and one without such a table refuses any.
    /// @return a Batch that views ids, lengths and token_types: keep this batch alive and
    ///         unchanged while it is used.
    Batch batch() const& noexcept {
        Batch view(ids, padding(), StepOffsets());
        if (token_types.size() != 0 && (token_types.array() != 0).any()) view.token_types = TokenIds(token_types);
        return view;
    }
    /// @brief Deleted: the Batch would view a temporary batch. Name the batch.
    /// @return nothing: this overload cannot be called.
    Batch batch() const&& = delete;

    /// @brief The Padding of these ids.
    /// @return Padding::right(lengths) or Padding::left(lengths): it views lengths, so keep the
    ///         batch alive and its lengths unchanged while the Padding is used.
    Padding padding() const& noexcept {
        return side == PaddingSide::right ? Padding::right(lengths) : Padding::left(lengths);
    }
    /// @brief Deleted: the Padding would view the lengths of a temporary batch. Name the batch.
    /// @return nothing: this overload cannot be called.
    Padding padding() const&& = delete;
};

namespace detail {

/// The sequences as one batch, padded with pad_id on the given side.
inline EncodedBatch pad_sequences(const std::vector<std::vector<TokenId>>& sequences,
                                  PaddingSide side, TokenId pad_id) {
    std::size_t longest = 0;
    for (const auto& sequence : sequences) longest = std::max(longest, sequence.size());
    EncodedBatch batch;
    batch.side = side;
    batch.pad_id = pad_id;
    batch.ids.setConstant(static_cast<Index>(sequences.size()), static_cast<Index>(longest), pad_id);
    batch.lengths.reserve(sequences.size());
    for (std::size_t b = 0; b < sequences.size(); ++b) {
        const auto& sequence = sequences[b];
        const std::size_t first = side == PaddingSide::right ? 0 : longest - sequence.size();
        std::copy(sequence.begin(), sequence.end(),
                  batch.ids.row(static_cast<Index>(b)).data() + first);
        batch.lengths.push_back(static_cast<std::int64_t>(sequence.size()));
    }
    return batch;
}

}  // namespace detail
}  // namespace seqembed
