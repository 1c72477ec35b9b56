/// @file padding.hpp
/// @brief Padding: which tokens of a batch are real, and so the position of each real token;
///        StepOffsets: what is added to the positions of each sequence when decoding.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cstdint>
#include <iterator>
#include <type_traits>

#include "detail/checks.hpp"
#include "error.hpp"
#include "types.hpp"

namespace seqembed {

/// @brief Which end of a sequence holds the padding.
enum class PaddingSide {
    right,  ///< real tokens first, then padding.
    left    ///< padding first, then real tokens (decoder-only generation).
};

/// @brief Says which tokens of a batch x seq id matrix are real.
///
/// Every real token gets its true position: the number of real tokens before it in its
/// sequence, whatever the padding side, as fairseq and OPT derive positions from the mask.
/// Padded tokens are not looked up and give zero rows. Padding views the caller's lengths or
/// mask (no copy): keep them alive and unchanged until the forward that uses the Padding has
/// returned; temporaries are refused at compile time.
/// @code
/// std::vector<std::int64_t> lengths{3, 5};
/// pipeline.forward(ids, seqembed::Padding::left(lengths));
/// pipeline.forward(ids, seqembed::Padding::by_id(1));              // RoBERTa's <pad>
/// pipeline.forward(ids, seqembed::Padding::from_mask(attention_mask));  // int64, as HF gives it
/// @endcode
class Padding {
public:
    /// @brief Every token is real.
    /// @return a Padding under which token t of every sequence is real with position t; it
    ///         views nothing. It is the default of InputPipeline::forward.
    static Padding none() noexcept { return Padding(Kind::none); }

    /// @brief Sequence b has lengths[b] real tokens at its start.
    /// @tparam Lengths any contiguous range of integers with data() and size() (std::vector,
    ///         std::array, an Eigen vector, std::span, ...).
    /// @param lengths one length per sequence, each in [0, seq] (checked by the forward).
    /// @return a Padding viewing lengths: keep them alive and unresized while it is used.
    template <typename Lengths>
    static Padding right(const Lengths& lengths) noexcept {
        return of_lengths(lengths, PaddingSide::right);
    }
    /// @brief Sequence b has lengths[b] real tokens at its end.
    /// @tparam Lengths any contiguous range of integers with data() and size().
    /// @param lengths one length per sequence, each in [0, seq] (checked by the forward).
    /// @return a Padding viewing lengths. Token t of sequence b is real from t = seq - lengths[b]
    ///         on, with position t - (seq - lengths[b]).
    template <typename Lengths>
    static Padding left(const Lengths& lengths) noexcept {
        return of_lengths(lengths, PaddingSide::left);
    }
    /// @brief Deleted: a Padding would outlive the temporary lengths it views. Name them.
    /// @return nothing: this overload cannot be called.
    template <typename Lengths>
    static Padding right(const Lengths&&) = delete;
    /// @brief Deleted: a Padding would outlive the temporary lengths it views. Name them.
    /// @return nothing: this overload cannot be called.
    template <typename Lengths>
    static Padding left(const Lengths&&) = delete;
    /// @brief count lengths at data, real tokens on the side opposite the padding.
    /// @tparam Length an integer type.
    /// @param data the lengths.
    /// @param count how many (must equal the batch size).
    /// @param side where the padding is.
    /// @return a Padding viewing the count values at data (not copied).
    template <typename Length>
    static Padding lengths_of(const Length* data, Index count, PaddingSide side) noexcept {
        Padding padding(Kind::lengths);
        padding.m_values = detail::IntegerView(data, count);
        padding.m_side = side;
        return padding;
    }
    /// @brief Tokens equal to padding_id are padding, wherever they stand.
    /// @param padding_id the padding token.
    /// @return a Padding that views nothing: a real token's position is the number of tokens
    ///         other than padding_id before it in its sequence.
    static Padding by_id(TokenId padding_id) noexcept {
        Padding padding(Kind::padding_id);
        padding.m_padding_id = padding_id;
        return padding;
    }
    /// @brief An attention mask: nonzero marks a real token.
    /// @tparam Derived an Eigen matrix of any integer type or bool (uint8 MaskMatrix, the int64
    ///         attention_mask a Hugging Face tokenizer returns, ...), any storage order, with
    ///         direct access.
    /// @param mask batch x seq, or batch x (past + seq) when decoding with a cache, as Hugging
    ///        Face callers hold it: the first past columns are the past tokens, the last seq the
    ///        current ones. Viewed, not copied.
    /// @return a Padding viewing mask: keep it alive and unresized while the Padding is used. A
    ///         real token's position is the number of nonzero entries before it in its row, past
    ///         columns included (PositionNumbering says how the pipeline numbers tokens).
    template <typename Derived>
    static Padding from_mask(const Eigen::DenseBase<Derived>& mask) noexcept {
        Padding padding(Kind::mask);
        padding.m_values = detail::IntegerView(mask);
        return padding;
    }
    /// @brief Deleted: a Padding would outlive the temporary mask it views. Name it.
    /// @return nothing: this overload cannot be called.
    template <typename Derived>
    static Padding from_mask(const Eigen::DenseBase<Derived>&&) = delete;

    /// @brief Throws unless the lengths or mask fit a batch x seq id matrix.
    /// @param ids the ids the padding describes.
    /// @throws shape_error for a wrong count or shape; value_error for a length outside
    ///         [0, seq].
    void require_fits(const TokenIds& ids) const {
        if (m_kind == Kind::lengths) {
            if (m_values.size() != ids.rows())
                detail::fail<shape_error>(m_values.size(), " sequence lengths given for a batch of ",
                                          ids.rows(), " sequences");
            for (Index b = 0; b < ids.rows(); ++b)
                if (m_values[b] < 0 || m_values[b] > ids.cols())
                    detail::fail<value_error>("length ", m_values[b], " of sequence ", b,
                                              " is outside [0, ", ids.cols(), "]");
        } else if (m_kind == Kind::mask) {
            if (m_values.rows() != ids.rows() || m_values.cols() < ids.cols())
                detail::fail<shape_error>("padding mask is ", m_values.rows(), " x ", m_values.cols(), ", expected ",
                                          ids.rows(), " x ", ids.cols(), " (the ids) or ", ids.rows(),
                                          " x (past + ", ids.cols(), ") (past and current tokens)");
        }
    }

    /// @brief The number of past tokens the padding covers before the ids: an attention mask's
    ///        columns beyond the ids' (batch x (past + seq)), 0 for every other padding.
    /// @param ids the ids the padding describes (require_fits passed).
    /// @return past >= 0.
    Index past_length(const TokenIds& ids) const noexcept {
        return m_kind == Kind::mask ? m_values.cols() - ids.cols() : 0;
    }

    /// @brief Calls visit(b, t, token_index) for every token of sequences first_row ..
    ///        end_row - 1 in row-major order, token_index being the number of real tokens before
    ///        it in its sequence (a mask's past tokens included), or -1 for padding. require_fits
    ///        must have passed.
    /// @param ids the ids.
    /// @param first_row first sequence visited.
    /// @param end_row one past the last sequence visited.
    /// @param visit the callback.
    template <typename Visit>
    void for_each_token(const TokenIds& ids, Index first_row, Index end_row, Visit&& visit) const {
        const Index seq = ids.cols();
        for (Index b = first_row; b < end_row; ++b) {
            switch (m_kind) {
                case Kind::none:
                    for (Index t = 0; t < seq; ++t) visit(b, t, static_cast<std::int64_t>(t));
                    break;
                case Kind::lengths: {
                    const Index length = static_cast<Index>(m_values[b]);
                    const Index first_real = m_side == PaddingSide::right ? 0 : seq - length;
                    const Index end_real = first_real + length;
                    for (Index t = 0; t < seq; ++t)
                        visit(b, t, t >= first_real && t < end_real ? static_cast<std::int64_t>(t - first_real)
                                                                    : std::int64_t{-1});
                    break;
                }
                case Kind::padding_id: {
                    std::int64_t real = 0;
                    for (Index t = 0; t < seq; ++t)
                        visit(b, t, ids(b, t) != m_padding_id ? real++ : std::int64_t{-1});
                    break;
                }
                case Kind::mask: {
                    const Index past = m_values.cols() - seq;
                    std::int64_t real = 0;
                    for (Index t = 0; t < past; ++t) real += m_values(b, t) != 0 ? 1 : 0;
                    for (Index t = 0; t < seq; ++t)
                        visit(b, t, m_values(b, past + t) != 0 ? real++ : std::int64_t{-1});
                    break;
                }
            }
        }
    }

private:
    enum class Kind { none, lengths, padding_id, mask };
    explicit Padding(Kind kind) noexcept : m_kind(kind) {}

    template <typename Lengths>
    static Padding of_lengths(const Lengths& lengths, PaddingSide side) noexcept {
        return lengths_of(std::data(lengths), static_cast<Index>(std::size(lengths)), side);
    }

    Kind m_kind;
    PaddingSide m_side = PaddingSide::right;
    detail::IntegerView m_values;  // the lengths (one row) or the mask
    TokenId m_padding_id = 0;
};

/// @brief What is added to the positions of each sequence: one offset for all (the tokens already
///        decoded), or one per sequence (batched decoding of prompts of different lengths, as
///        CTranslate2's PositionEncoder takes them). Views the caller's offsets.
/// @code
/// std::vector<std::int64_t> decoded{7, 12, 3};             // tokens already decoded, per sequence
/// pipeline.forward(next_ids, seqembed::Padding::none(), seqembed::StepOffsets(decoded));
/// pipeline.forward(next_ids, seqembed::Padding::none(), 5);  // the same offset for all
/// @endcode
class StepOffsets {
public:
    /// @brief The same offset for every sequence (0: none).
    /// @param offset added to every position.
    StepOffsets(std::int64_t offset = 0) noexcept : m_same(offset) {}  // NOLINT(google-explicit-constructor)
    /// @brief One offset per sequence.
    /// @tparam Offsets any contiguous range of integers with data() and size().
    /// @param offsets offsets[b] is added to the positions of sequence b; viewed, not copied.
    template <typename Offsets, typename = decltype(std::data(std::declval<const Offsets&>()))>
    explicit StepOffsets(const Offsets& offsets) noexcept
        : m_each(std::data(offsets), static_cast<Index>(std::size(offsets))) {}
    /// @brief Deleted: the offsets would not outlive the statement. Name them.
    /// @tparam Offsets the range type.
    template <typename Offsets, typename = decltype(std::data(std::declval<const Offsets&>()))>
    explicit StepOffsets(const Offsets&&) = delete;

    /// @brief Whether each sequence has its own offset.
    /// @return true when built from a range.
    bool per_sequence() const noexcept { return !m_each.empty(); }
    /// @brief The offset of sequence b.
    /// @param b the sequence (in range when per_sequence()).
    /// @return offsets[b], or the common offset.
    std::int64_t of(Index b) const noexcept { return m_each.empty() ? m_same : m_each[b]; }
    /// @brief Throws unless there is one offset per sequence of a batch (or one for all).
    /// @param batch the number of sequences.
    /// @throws shape_error for a per-sequence count other than batch.
    void require_fits(Index batch) const {
        if (per_sequence() && m_each.size() != batch)
            detail::fail<shape_error>(m_each.size(), " step offsets given for a batch of ", batch, " sequences");
    }

private:
    std::int64_t m_same = 0;
    detail::IntegerView m_each;
};

}  // namespace seqembed
