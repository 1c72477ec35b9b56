/// @file learned_positions.hpp
/// @brief LearnedPositionalEmbedding: a trained max_positions x d_model position table.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
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

/// @brief How a LearnedPositionalEmbedding is built and indexed.
struct LearnedPositionsOptions {
    /// @brief Table row of the first token: 0 for BERT and GPT-2, 2 for BART and OPT,
    ///        padding_idx + 1 for RoBERTa. Token t reads row offset + t.
    std::int64_t offset = 0;
    /// @brief Seed of the N(0, 1) initialisation.
    std::uint64_t seed = 0;
    /// @brief With weights from the caller: throw if any value is NaN or infinite.
    bool check_finite = false;
    /// @brief As nn.Embedding's padding_idx: the table row that receives no gradient, in
    ///        [-max_positions, max_positions) (negative counts from the end). RoBERTa's position
    ///        table has one: its padding_idx, the row its padded tokens read. A seeded table
    ///        zeroes the row, as nn.Embedding does; pre-trained weights are read as they are.
    std::optional<std::int64_t> padding_idx;

    /// @brief BERT and GPT-2: token t reads row t.
    /// @return default options: offset 0, seed 0, check_finite off.
    static LearnedPositionsOptions bert() { return {}; }
    /// @brief BART and OPT: the table has two extra leading rows, token t reads row t + 2.
    /// @return options with offset 2, seed 0, check_finite off.
    static LearnedPositionsOptions bart() {
        LearnedPositionsOptions options;
        options.offset = 2;
        return options;
    }
    /// @brief RoBERTa: token t reads row padding_idx + 1 + t (a 514-row table serves 512
    ///        tokens); row padding_idx, which its padded tokens read, receives no gradient (its
    ///        nn.Embedding's padding_idx).
    /// @param padding_idx the vocabulary's padding id (1 in RoBERTa).
    /// @return options with offset padding_idx + 1 and padding_idx, seed 0, check_finite off.
    /// @throws index_error if padding_idx + 1 overflows std::int64_t.
    static LearnedPositionsOptions roberta(std::int64_t padding_idx = 1) {
        LearnedPositionsOptions options;
        options.offset = detail::checked_add("RoBERTa position offset", padding_idx, 1);
        options.padding_idx = padding_idx;
        return options;
    }
};

/// @brief A learned position table: max_positions rows of d_model values, token t of a sequence
///        reading row offset + t.
///
/// Pre-trained models ship such a table (BERT's has 512 rows: inputs of up to 512 tokens);
/// load it with from_weights() or view(). Past the table is an index_error: nothing is clamped
/// or wrapped.
/// @tparam Scalar float or double.
/// @code
/// auto positions = seqembed::LearnedPositionalEmbedding<float>::from_weights(
///     checkpoint_table, seqembed::LearnedPositionsOptions::bart());
/// auto rows = positions.rows(0, 350);   // rows 2 .. 351 of the table, a view
/// @endcode
template <typename Scalar = float>
class LearnedPositionalEmbedding {
    static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                  "LearnedPositionalEmbedding<Scalar>: Scalar must be float or double");

public:
    /// @brief The options type.
    using Options = LearnedPositionsOptions;

    /// @brief A table initialised with seeded N(0, 1) draws, as nn.Embedding does.
    /// @param max_positions rows, > 0.
    /// @param d_model columns, > 0.
    /// @param options offset (in [0, max_positions)), seed and padding_idx (its row is zeroed).
    /// @throws value_error for a size <= 0 or a table too large; index_error for an offset
    ///         outside [0, max_positions) or a padding_idx outside [-max_positions,
    ///         max_positions).
    LearnedPositionalEmbedding(Index max_positions, Index d_model,
                               const LearnedPositionsOptions& options = {})
        : m_table(allocate_table(max_positions, d_model)),
          m_offset(checked_offset(options.offset, max_positions)),
          m_padding_idx(padding_idx_of(options, max_positions)) {
        detail::fill_standard_normal(m_table.writable().data(), m_table.writable().size(), options.seed,
                                     detail::InitStream::learned_positions);
        if (m_padding_idx) m_table.writable().row(static_cast<Index>(*m_padding_idx)).setZero();
    }

    /// @brief A table holding a copy of pre-trained weights (max_positions x d_model).
    /// @param weights the table.
    /// @param options offset, check_finite and padding_idx (recorded, the row is not zeroed).
    /// @return a table that owns its copy of weights, so weights may be freed or changed
    ///         afterwards.
    /// @throws value_error for an empty table, one too large for memory or, when checked, a
    ///         non-finite value; index_error for an offset outside [0, weights.rows()) or a
    ///         padding_idx outside [-weights.rows(), weights.rows()).
    static LearnedPositionalEmbedding from_weights(
        const Eigen::Ref<const RowMatrix<Scalar>>& weights,
        const LearnedPositionsOptions& options = {}) {
        // Checked after the copy: weights may be a strided block, the copy is packed.
        detail::RowTable<Scalar> table("learned position weights", weights);
        if (options.check_finite)
            detail::require_finite("learned position weights", table.row(0), table.rows(), table.cols());
        return LearnedPositionalEmbedding(std::move(table), options);
    }

    /// @brief A table viewing max_positions x d_model values at data without copying; the
    ///        caller keeps them alive and unchanged.
    /// @param data first value of row 0.
    /// @param max_positions rows.
    /// @param d_model columns.
    /// @param options offset, check_finite and padding_idx (recorded, the row is not zeroed).
    /// @param owner whatever keeps data alive (a file mapping): held by the table and its
    ///        copies. Null: the caller keeps the values alive.
    /// @return a table reading data in place; without an owner, it and every copy of it are
    ///         valid only while the max_positions x d_model values at data live.
    /// @throws value_error for a null pointer, a size <= 0 or, when checked, a non-finite value;
    ///         index_error for an offset outside [0, max_positions) or a padding_idx outside
    ///         [-max_positions, max_positions).
    static LearnedPositionalEmbedding view(const Scalar* data, Index max_positions, Index d_model,
                                           const LearnedPositionsOptions& options = {},
                                           std::shared_ptr<const void> owner = nullptr) {
        detail::RowTable<Scalar> table("learned position view", data, max_positions, d_model, std::move(owner));
        if (options.check_finite)
            detail::require_finite("learned position view", data, max_positions, d_model);
        return LearnedPositionalEmbedding(std::move(table), options);
    }

    /// @brief Whether the table views memory it did not allocate.
    /// @return true for a table made by view(), false for one that owns its values.
    bool is_view() const noexcept { return !m_table.owns_data(); }
    /// @brief Rows of the table.
    /// @return the number of rows, offset rows included, > 0.
    Index max_positions() const noexcept { return m_table.rows(); }
    /// @brief Width of a row.
    /// @return the number of columns, > 0.
    Index d_model() const noexcept { return m_table.cols(); }
    /// @brief Row read by the first token.
    /// @return the offset of the options, in [0, max_positions).
    std::int64_t offset() const noexcept { return m_offset; }
    /// @brief The table row that receives no gradient (LearnedPositionsOptions::padding_idx).
    /// @return the row, in [0, max_positions), or none.
    std::optional<std::int64_t> padding_idx() const noexcept { return m_padding_idx; }
    /// @brief How many token positions the table serves.
    /// @return max_positions - offset, >= 1: tokens 0 .. capacity - 1 have a row.
    Index capacity() const noexcept { return m_table.rows() - static_cast<Index>(m_offset); }
    /// @brief The whole table, offset rows included, as a read-only view.
    /// @return a max_positions x d_model row-major view (no copy), valid while this table or a
    ///         copy of it lives (for a view() without owner, while the caller's memory does).
    Eigen::Map<const RowMatrix<Scalar>> table() const noexcept { return m_table.matrix(); }

    /// @brief The rows of tokens first .. first + count - 1 (rows offset + first ...), a view.
    /// @param first token index of the first row (a step offset when decoding).
    /// @param count number of tokens.
    /// @return a count x d_model row-major view (no copy) of table rows offset + first ..
    ///         offset + first + count - 1, valid while this table lives.
    /// @throws index_error for a negative first or count, or past the table (first + count >
    ///         capacity).
    Eigen::Map<const RowMatrix<Scalar>> rows(std::int64_t first, Index count) const {
        require_positions(first, count);
        return {m_table.row(static_cast<Index>(m_offset + first)), count, d_model()};
    }

    /// @brief A copy of rows(first, count).
    /// @param first token index of the first row.
    /// @param count number of tokens.
    /// @return a new count x d_model matrix holding the same values as rows(first, count).
    /// @throws index_error as rows.
    RowMatrix<Scalar> forward(std::int64_t first, Index count) const { return rows(first, count); }

    /// @brief The gradient of the table from the gradient of forward(first, count)'s output:
    ///        row k of grad_output is the gradient of table row offset + first + k.
    /// @param first token index of the first row, as given to forward.
    /// @param grad_output count x d_model.
    /// @return the row-sparse gradient of rows offset + first .. offset + first + count - 1,
    ///         but padding_idx()'s.
    /// @throws shape_error if grad_output.cols() != d_model; index_error past the table.
    RowGradient<Scalar> backward(std::int64_t first, const Eigen::Ref<const RowMatrix<Scalar>>& grad_output) const {
        if (grad_output.cols() != d_model())
            detail::fail<shape_error>("gradient of LearnedPositionalEmbedding's output has ", grad_output.cols(),
                                      " columns, expected d_model = ", d_model());
        require_positions(first, grad_output.rows());
        std::vector<detail::RowRead<Scalar>> reads;
        reads.reserve(static_cast<std::size_t>(grad_output.rows()));
        for (Index k = 0; k < grad_output.rows(); ++k)
            if (m_offset + first + k != m_padding_idx) reads.push_back({m_offset + first + k, k, Scalar(1)});
        return detail::sum_reads(reads, detail::GradientRows<Scalar>::of(grad_output), max_positions(), d_model());
    }

    /// @brief Opens the table for an optimizer step (TrainableTable): a view, a file's mapping or
    ///        a table shared with a copy is copied first, and the others keep the old values.
    /// @return the writable max_positions x d_model table and whether it was copied.
    /// @throws value_error if the copy does not fit in memory (the table is then unchanged).
    TrainableTable<Scalar> trainable_table() {
        const bool copied = m_table.make_own("trainable learned position table");
        return {m_table.writable(), copied};
    }

    /// @brief Copies rows(first, out.rows()) into caller memory without allocating.
    /// @param first token index of the first row.
    /// @param out out.rows() x d_model.
    /// @throws shape_error if out.cols() != d_model; index_error past the table.
    void forward_into(std::int64_t first, Eigen::Ref<RowMatrix<Scalar>> out) const {
        if (out.cols() != d_model())
            detail::fail<shape_error>("output of LearnedPositionalEmbedding::forward_into has ",
                                      out.cols(), " columns, expected d_model = ", d_model());
        out = rows(first, out.rows());
    }

private:
    friend struct detail::StageAccess;

    /// Throws unless positions [first, first + count) have rows, naming the row and the table's
    /// size.
    void require_positions(std::int64_t first, Index count) const {
        if (first < 0 || count < 0)
            detail::fail<index_error>("positions [", first, ", ", first, " + ", count, ") start before the table");
        require_rows_from(first, count);
    }
    /// As require_positions, with positions down to -offset reading the rows before the offset:
    /// a framework's padded tokens (RoBERTa's row padding_idx, OPT's row 1) and its explicit
    /// position ids.
    void require_positions_before_offset(std::int64_t first, Index count) const {
        if (count < 0 || first < -m_offset)
            detail::fail<index_error>("position ", first, " is before the learned position table (offset ", m_offset,
                                      ": positions from ", -m_offset, " read rows from 0)");
        require_rows_from(first, count);
    }
    /// The check past the table's end, for positions that start at a row.
    void require_rows_from(std::int64_t first, Index count) const {
        if (first > capacity() || count > capacity() - first) {
            // Name the first position without a row; its table row cannot overflow below.
            const std::int64_t missing = std::max<std::int64_t>(first, capacity());
            const bool row_fits = missing <= std::numeric_limits<std::int64_t>::max() - m_offset;
            detail::fail<index_error>(
                "position ", missing, " (table row ",
                row_fits ? std::to_string(missing + m_offset) : std::string("past 2^63"),
                " with offset ", m_offset, ") is past the learned position table of ",
                max_positions(), " rows, which serves positions [0, ", capacity(), ")");
        }
    }
    /// The row of token index `row`, which require_positions accepted (never computed).
    const Scalar* position_row(std::int64_t row, Scalar*) const noexcept {
        return m_table.row(static_cast<Index>(m_offset + row));
    }

    LearnedPositionalEmbedding(detail::RowTable<Scalar> table, const LearnedPositionsOptions& options)
        : m_table(std::move(table)),
          m_offset(checked_offset(options.offset, m_table.rows())),
          m_padding_idx(padding_idx_of(options, m_table.rows())) {}

    static detail::RowTable<Scalar> allocate_table(Index max_positions, Index d_model) {
        detail::require_positive("max_positions", max_positions);
        detail::require_positive("d_model", d_model);
        return detail::RowTable<Scalar>("learned position table", max_positions, d_model);
    }

    static std::int64_t checked_offset(std::int64_t offset, Index max_positions) {
        if (offset < 0 || offset >= max_positions)
            detail::fail<index_error>("learned position offset ", offset, " is outside [0, ",
                                      max_positions, ")");
        return offset;
    }

    static std::optional<std::int64_t> padding_idx_of(const LearnedPositionsOptions& options, Index max_positions) {
        return detail::normalized_padding_idx("learned position padding_idx", options.padding_idx, max_positions);
    }

    detail::RowTable<Scalar> m_table;
    std::int64_t m_offset;
    std::optional<std::int64_t> m_padding_idx;
};

}  // namespace seqembed
