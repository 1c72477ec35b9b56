/// @file token_types.hpp
/// @brief TokenTypeEmbedding: the segment (token type) table that BERT-style models add to each
///        token's embedding.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "detail/backward.hpp"
#include "detail/checks.hpp"
#include "detail/normal_init.hpp"
#include "detail/row_table.hpp"
#include "detail/stage_access.hpp"
#include "error.hpp"
#include "gradients.hpp"
#include "trainable_table.hpp"
#include "types.hpp"

namespace seqembed {

/// @brief A type_vocab_size x d_model table of token-type (segment) rows: BERT, ELECTRA and
///        RoBERTa add row token_type_ids[b, t] to token (b, t)'s embedding, before its position.
///
/// Load a checkpoint's table (`embeddings.token_type_embeddings.weight`) with from_weights() or
/// view() and give it to InputPipeline::set_token_types(); the pipeline then takes a batch x seq
/// matrix of type ids beside the token ids (all zeros when none is given, as Hugging Face does).
/// @tparam Scalar float or double.
/// @code
/// auto types = seqembed::TokenTypeEmbedding<float>::from_weights(checkpoint_types);  // 2 x 768
/// pipeline.set_token_types(types);
/// auto x = pipeline.forward(input_ids, token_type_ids, seqembed::Padding::from_mask(attention_mask));
/// @endcode
template <typename Scalar = float>
class TokenTypeEmbedding {
    static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                  "TokenTypeEmbedding<Scalar>: Scalar must be float or double");

public:
    /// @brief A table initialised with seeded N(0, 1) draws, as nn.Embedding does.
    /// @param type_vocab_size rows (token types), > 0.
    /// @param d_model columns, > 0.
    /// @param seed seed of the draws.
    /// @throws value_error for a size <= 0 or a table too large.
    TokenTypeEmbedding(Index type_vocab_size, Index d_model, std::uint64_t seed = 0)
        : m_table(allocate_table(type_vocab_size, d_model)) {
        detail::fill_standard_normal(m_table.writable().data(), m_table.writable().size(), seed,
                                     detail::InitStream::token_types);
    }

    /// @brief A table holding a copy of pre-trained weights (type_vocab_size x d_model).
    /// @param weights the table.
    /// @return a table that owns its copy of weights.
    /// @throws value_error for an empty table, one too large for memory, or a NaN or infinite
    ///         value.
    static TokenTypeEmbedding from_weights(const Eigen::Ref<const RowMatrix<Scalar>>& weights) {
        detail::RowTable<Scalar> table("token type weights", weights);
        detail::require_finite("token type weights", table.row(0), table.rows(), table.cols());
        return TokenTypeEmbedding(std::move(table));
    }

    /// @brief A table viewing type_vocab_size x d_model values at data without copying; the
    ///        caller (or owner) keeps them alive and unchanged.
    /// @param data first value of row 0.
    /// @param type_vocab_size rows.
    /// @param d_model columns.
    /// @param owner whatever keeps data alive (a file mapping), held by the table and its copies;
    ///        null when the caller does.
    /// @return a table reading data in place.
    /// @throws value_error for a null pointer, a size <= 0, or a NaN or infinite value.
    static TokenTypeEmbedding view(const Scalar* data, Index type_vocab_size, Index d_model,
                                   std::shared_ptr<const void> owner = nullptr) {
        detail::RowTable<Scalar> table("token type view", data, type_vocab_size, d_model, std::move(owner));
        detail::require_finite("token type view", data, type_vocab_size, d_model);
        return TokenTypeEmbedding(std::move(table));
    }

    /// @brief Whether the table views memory it did not allocate.
    /// @return true for a table made by view().
    bool is_view() const noexcept { return !m_table.owns_data(); }
    /// @brief Number of token types.
    /// @return the rows of the table, > 0.
    Index type_vocab_size() const noexcept { return m_table.rows(); }
    /// @brief Width of a row.
    /// @return the columns of the table, > 0.
    Index d_model() const noexcept { return m_table.cols(); }
    /// @brief The whole table, read-only.
    /// @return a type_vocab_size x d_model row-major view, valid while this table or a copy lives.
    Eigen::Map<const RowMatrix<Scalar>> table() const noexcept { return m_table.matrix(); }

    /// @brief The row of each type id, as a new (batch * seq) x d_model matrix.
    /// @param type_ids batch x seq type ids (int32 or int64, any layout; viewed).
    /// @return row b * seq + t holds the table row of type_ids(b, t).
    /// @throws index_error for a type id outside [0, type_vocab_size).
    RowMatrix<Scalar> forward(const TokenIds& type_ids) const {
        require_type_ids(type_ids);
        RowMatrix<Scalar> out(type_ids.size(), d_model());
        for (Index b = 0; b < type_ids.rows(); ++b)
            for (Index t = 0; t < type_ids.cols(); ++t)
                out.row(b * type_ids.cols() + t) = m_table.matrix().row(static_cast<Index>(type_ids(b, t)));
        return out;
    }

    /// @brief The gradient of the table from the gradient of forward(type_ids)'s output: the
    ///        rows of each type id summed, in order of output row.
    /// @param type_ids batch x seq type ids, as given to forward.
    /// @param grad_output (batch * seq) x d_model.
    /// @return the row-sparse gradient.
    /// @throws shape_error if grad_output's shape differs; index_error for a type id outside the
    ///         table.
    RowGradient<Scalar> backward(const TokenIds& type_ids, const Eigen::Ref<const RowMatrix<Scalar>>& grad_output) const {
        detail::require_shape("gradient of TokenTypeEmbedding's output", grad_output.rows(), grad_output.cols(),
                              type_ids.size(), d_model());
        require_type_ids(type_ids);
        std::vector<detail::RowRead<Scalar>> reads;
        reads.reserve(static_cast<std::size_t>(type_ids.size()));
        for (Index b = 0; b < type_ids.rows(); ++b)
            for (Index t = 0; t < type_ids.cols(); ++t)
                reads.push_back({type_ids(b, t), b * type_ids.cols() + t, Scalar(1)});
        return detail::sum_reads(reads, detail::GradientRows<Scalar>::of(grad_output), type_vocab_size(), d_model());
    }

    /// @brief Opens the table for an optimizer step (TrainableTable): a view or a table shared
    ///        with a copy is copied first, and the others keep the old values.
    /// @return the writable type_vocab_size x d_model table and whether it was copied.
    /// @throws value_error if the copy does not fit in memory (the table is then unchanged).
    TrainableTable<Scalar> trainable_table() {
        const bool copied = m_table.make_own("trainable token type table");
        return {m_table.writable(), copied};
    }

    /// @brief Throws unless every type id is a row of the table.
    /// @param type_ids batch x seq type ids.
    /// @throws index_error naming the first type id outside [0, type_vocab_size) and where it is.
    void require_type_ids(const TokenIds& type_ids) const {
        for (Index b = 0; b < type_ids.rows(); ++b)
            for (Index t = 0; t < type_ids.cols(); ++t) require_type_id(type_ids(b, t), b, t);
    }

    /// @brief Throws unless `type` is a row of the table.
    /// @param type a type id.
    /// @param batch its sequence, for the message.
    /// @param position its position, for the message.
    /// @throws index_error for a type id outside [0, type_vocab_size).
    void require_type_id(TokenId type, Index batch, Index position) const {
        if (type < 0 || type >= type_vocab_size())
            detail::fail<index_error>("token type id ", type, " at (batch ", batch, ", position ", position,
                                      ") is outside the token types [0, ", type_vocab_size(), ")");
    }

private:
    friend struct detail::StageAccess;

    /// The d_model values of a type id that require_type_id accepted.
    const Scalar* row(TokenId type) const noexcept { return m_table.row(static_cast<Index>(type)); }

    explicit TokenTypeEmbedding(detail::RowTable<Scalar> table) : m_table(std::move(table)) {}

    static detail::RowTable<Scalar> allocate_table(Index type_vocab_size, Index d_model) {
        detail::require_positive("type_vocab_size", type_vocab_size);
        detail::require_positive("d_model", d_model);
        return detail::RowTable<Scalar>("token type table", type_vocab_size, d_model);
    }

    detail::RowTable<Scalar> m_table;
};

}  // namespace seqembed
