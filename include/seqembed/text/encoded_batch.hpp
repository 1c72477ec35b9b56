/// @file text/encoded_batch.hpp
/// @brief EncodedBatch: texts turned into one padded batch x seq id matrix with the length of
///        each sequence, as the tokenizers (Vocabulary, SentencePieceTokenizer) return them.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

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
