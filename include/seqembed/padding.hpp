/// @file padding.hpp
/// @brief Padding: which tokens of a batch are real, and so the position of each real token.
#pragma once

#include <cstdint>
#include <vector>

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
/// returned (a Padding made from a temporary vector dangles once that statement ends).
/// @code
/// std::vector<std::int64_t> lengths{3, 5};
/// pipeline.forward(ids, seqembed::Padding::left(lengths));
/// pipeline.forward(ids, seqembed::Padding::by_id(1));   // RoBERTa's <pad>
/// @endcode
class Padding {
public:
    /// @brief Every token is real.
    /// @return a Padding under which token t of every sequence is real with position t; it
    ///         views nothing. It is the default of InputPipeline::forward.
    static Padding none() noexcept { return Padding(Kind::none); }

    /// @brief Sequence b has lengths[b] real tokens at its start.
    /// @param lengths one length per sequence, each in [0, seq] (checked by require_fits, not
    ///        here).
    /// @return a Padding viewing lengths.data(): keep lengths alive and unresized for as long as
    ///         the Padding is used.
    static Padding right(const std::vector<std::int64_t>& lengths) noexcept {
        return lengths_of(lengths.data(), static_cast<Index>(lengths.size()), PaddingSide::right);
    }
    /// @brief Sequence b has lengths[b] real tokens at its end.
    /// @param lengths one length per sequence, each in [0, seq] (checked by require_fits, not
    ///        here).
    /// @return a Padding viewing lengths.data(): keep lengths alive and unresized for as long as
    ///         the Padding is used. Token t of sequence b is real from t = seq - lengths[b] on,
    ///         with position t - (seq - lengths[b]).
    static Padding left(const std::vector<std::int64_t>& lengths) noexcept {
        return lengths_of(lengths.data(), static_cast<Index>(lengths.size()), PaddingSide::left);
    }
    /// @brief Deleted: a Padding would outlive the temporary lengths it views. Name them.
    /// @return nothing: this overload cannot be called.
    static Padding right(std::vector<std::int64_t>&&) = delete;
    /// @brief Deleted: a Padding would outlive the temporary lengths it views. Name them.
    /// @return nothing: this overload cannot be called.
    static Padding left(std::vector<std::int64_t>&&) = delete;
    /// @brief count lengths at data, real tokens on the side opposite the padding.
    /// @param data the lengths.
    /// @param count how many (must equal the batch size).
    /// @param side where the padding is.
    /// @return a Padding viewing the count values at data (not copied), as right() or left()
    ///         build for side.
    static Padding lengths_of(const std::int64_t* data, Index count, PaddingSide side) noexcept {
        Padding padding(Kind::lengths);
        padding.m_lengths = data;
        padding.m_rows = count;
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
    /// @brief An attention mask of the ids' shape: nonzero marks a real token.
    /// @param mask batch x seq; viewed, not copied.
    /// @return a Padding viewing mask's data: keep mask alive and unresized for as long as the
    ///         Padding is used. A real token's position is the number of nonzero entries
    ///         before it in its row.
    static Padding from_mask(const MaskMatrix& mask) noexcept {
        Padding padding(Kind::mask);
        padding.m_mask = mask.data();
        padding.m_rows = mask.rows();
        padding.m_cols = mask.cols();
        return padding;
    }
    /// @brief Deleted: a Padding would outlive the temporary mask it views. Name it.
    /// @return nothing: this overload cannot be called.
    static Padding from_mask(MaskMatrix&&) = delete;

    /// @brief Throws unless the lengths or mask fit a batch x seq id matrix.
    /// @param ids the ids the padding describes.
    /// @throws shape_error for a wrong count or shape; value_error for a length outside
    ///         [0, seq].
    void require_fits(const IdsRef& ids) const {
        if (m_kind == Kind::lengths) {
            if (m_rows != ids.rows())
                detail::fail<shape_error>(m_rows, " sequence lengths given for a batch of ",
                                          ids.rows(), " sequences");
            for (Index b = 0; b < m_rows; ++b)
                if (m_lengths[b] < 0 || m_lengths[b] > ids.cols())
                    detail::fail<value_error>("length ", m_lengths[b], " of sequence ", b,
                                              " is outside [0, ", ids.cols(), "]");
        } else if (m_kind == Kind::mask) {
            detail::require_shape("padding mask", m_rows, m_cols, ids.rows(), ids.cols());
        }
    }

    /// @brief Calls visit(b, t, token_index) for every token of ids in row-major order,
    ///        token_index being the number of real tokens before it in its sequence, or -1 for
    ///        padding. require_fits must have passed.
    /// @param ids the ids.
    /// @param visit the callback.
    template <typename Visit>
    void for_each_token(const IdsRef& ids, Visit&& visit) const {
        for_each_token_in_rows(ids, 0, ids.rows(), visit);
    }

    /// @brief As for_each_token, for the sequences first_row .. end_row - 1 only (so that
    ///        several threads can share a batch).
    /// @param ids the ids.
    /// @param first_row first sequence visited.
    /// @param end_row one past the last sequence visited.
    /// @param visit the callback.
    template <typename Visit>
    void for_each_token_in_rows(const IdsRef& ids, Index first_row, Index end_row,
                                Visit&& visit) const {
        const Index seq = ids.cols();
        for (Index b = first_row; b < end_row; ++b) {
            switch (m_kind) {
                case Kind::none:
                    for (Index t = 0; t < seq; ++t) visit(b, t, static_cast<std::int64_t>(t));
                    break;
                case Kind::lengths: {
                    const Index first_real =
                        m_side == PaddingSide::right ? 0 : seq - static_cast<Index>(m_lengths[b]);
                    const Index end_real = first_real + static_cast<Index>(m_lengths[b]);
                    for (Index t = 0; t < seq; ++t)
                        visit(b, t, t >= first_real && t < end_real
                                        ? static_cast<std::int64_t>(t - first_real)
                                        : std::int64_t{-1});
                    break;
                }
                case Kind::padding_id:
                case Kind::mask: {
                    std::int64_t real = 0;
                    for (Index t = 0; t < seq; ++t)
                        visit(b, t, is_real(ids, b, t) ? real++ : std::int64_t{-1});
                    break;
                }
            }
        }
    }

    /// @brief The largest number of real tokens in one sequence of ids.
    /// @param ids the ids (require_fits must have passed).
    /// @return the number of positions a forward of ids reads, in [0, seq]: seq for none() (0
    ///         for an empty batch), otherwise the largest count of real tokens in a sequence.
    Index longest(const IdsRef& ids) const {
        if (m_kind == Kind::none) return ids.rows() > 0 ? ids.cols() : 0;
        std::int64_t longest = 0;
        for_each_token(ids, [&](Index, Index, std::int64_t token_index) {
            if (token_index + 1 > longest) longest = token_index + 1;
        });
        return static_cast<Index>(longest);
    }

private:
    enum class Kind { none, lengths, padding_id, mask };
    explicit Padding(Kind kind) noexcept : m_kind(kind) {}

    bool is_real(const IdsRef& ids, Index b, Index t) const noexcept {
        return m_kind == Kind::padding_id ? ids(b, t) != m_padding_id
                                          : m_mask[b * m_cols + t] != 0;
    }

    Kind m_kind;
    PaddingSide m_side = PaddingSide::right;
    const std::int64_t* m_lengths = nullptr;
    const std::uint8_t* m_mask = nullptr;
    Index m_rows = 0;
    Index m_cols = 0;
    TokenId m_padding_id = 0;
};

}  // namespace seqembed
