/// @file optim/lazy_sgd.hpp
/// @brief SGD on the rows a batch touched only, for large tables.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../detail/large_memory.hpp"
#include "../detail/optimizer_checks.hpp"
#include "../detail/simd/platform.hpp"
#include "../gradients.hpp"
#include "../types.hpp"
#include "sgd.hpp"

namespace seqembed::optim {

/// @brief SGD with momentum and weight decay applied to the rows a row-sparse gradient lists
///        only, as FBGEMM's table-batched embeddings update rows lazily: a step costs the rows
///        touched, not the vocabulary. Each listed row is updated as torch.optim.SGD updates a
///        dense parameter, with its own momentum buffer, which the row's first update sets to
///        its gradient; rows not listed keep their weights and buffers (so their momentum and
///        decay wait until they are touched again: the lazy rule, not SGD's on a dense table).
/// @tparam Scalar float or double.
template <typename Scalar = float>
class LazySgd {
public:
    /// @brief Lazy SGD for a rows x cols table.
    /// @param table the table's name, for error messages.
    /// @param rows rows of the table, > 0.
    /// @param cols values per row, > 0.
    /// @param options momentum, dampening, weight decay, Nesterov, maximize, check_finite.
    /// @throws value_error for a bad size or option.
    LazySgd(std::string table, Index rows, Index cols, const SgdOptions& options = {})
        : m_table(std::move(table)), m_options(options), m_rows(rows), m_cols(cols) {
        seqembed::detail::require_positive("rows", rows);
        seqembed::detail::require_positive("cols", cols);
        detail::require_sgd_options("LazySgd", options);
    }

    /// @brief One step on the rows `gradient` lists.
    /// @param weights the table, rows x cols.
    /// @param gradient a row-sparse gradient of a rows x cols table (of a vocabulary shard: its
    ///        ids, from RowGradient::first_row).
    /// @param lr the learning rate, finite and >= 0.
    /// @throws shape_error for shapes that differ from the state's; index_error for a listed row
    ///         outside the table; value_error for a bad learning rate or (check_finite) a NaN or
    ///         infinite gradient. Nothing changes then.
    void step(Eigen::Ref<RowMatrix<Scalar>> weights, const RowGradient<Scalar>& gradient, double lr) {
        seqembed::detail::require_sparse_gradient(m_table, m_rows, m_cols, gradient, m_options.check_finite);
        std::vector<std::int64_t> local;
        step_rows(
            weights, seqembed::detail::listed_table_rows(gradient, local),
            [&](std::size_t k) { return gradient.values.row(static_cast<Index>(k)).data(); }, lr);
    }

    /// @brief One step on rows[k] with the gradient gradient_row(k) (a pointer to cols values,
    ///        read before the next call): the same arithmetic as step(), so the same bits. The
    ///        gradient is not scanned for NaN or infinity: the caller has checked it.
    /// @tparam GradientRow callable as gradient_row(std::size_t k) -> const Scalar*.
    /// @param weights the table, rows x cols.
    /// @param rows the rows of `weights` to update, ascending without repeats (for a shard's
    ///        gradient, RowGradient::local_rows).
    /// @param gradient_row the gradient of row rows[k].
    /// @param lr the learning rate, finite and >= 0.
    /// @throws as step; nothing changes then.
    template <typename GradientRow>
    void step_rows(Eigen::Ref<RowMatrix<Scalar>> weights, const std::vector<std::int64_t>& rows,
                   const GradientRow& gradient_row, double lr) {
        step_spans(weights, rows, lr, seqembed::detail::whole_rows(rows.size(), m_cols, gradient_row));
    }

    /// @brief Steps take the gradient span by span too (step_spans): InputPipeline::backward_step
    ///        fuses them into the backward's pass.
    static constexpr bool takes_spans = true;

    /// @brief One step on rows[k] whose gradient comes in spans of columns, in any order, for a
    ///        backward that completes each row's columns as it goes (InputPipeline::backward_step,
    ///        whose workers share the columns): the same arithmetic as step() on each value, so
    ///        the same bits. The gradient is not scanned for NaN or infinity: the caller has
    ///        checked it.
    /// @tparam Pass callable as pass(step_span), which must call step_span(k, first, count, g)
    ///         once for every column of every listed row (g: count values, the gradient of
    ///         columns [first, first + count) of rows[k]) and may call step_span.request(k,
    ///         first, count) ahead of it; it must not throw.
    /// @param weights the table, rows x cols.
    /// @param rows the rows of `weights` to update, ascending without repeats (for a shard's
    ///        gradient, RowGradient::local_rows).
    /// @param lr the learning rate, finite and >= 0.
    /// @param pass the pass that hands out the gradient.
    /// @throws as step; nothing changes then.
    template <typename Pass>
    void step_spans(Eigen::Ref<RowMatrix<Scalar>> weights, const std::vector<std::int64_t>& rows, double lr,
                    const Pass& pass) {
        seqembed::detail::require_learning_rate(m_table, lr);
        seqembed::detail::require_weights(m_table, m_rows, m_cols, weights);
        seqembed::detail::require_rows(m_table, m_rows, rows);
        const auto sgd_row = seqembed::detail::optimizer_kernel<Scalar>().sgd_row;
        const seqembed::detail::SgdConstants<Scalar> constants = detail::sgd_constants<Scalar>(m_options, lr);
        if (m_options.momentum != 0.0 && m_buffer.size() == 0) {  // may throw: before any change
            RowMatrix<Scalar> buffer = seqembed::detail::new_zeros<Scalar>(m_rows, m_cols);
            std::vector<bool> fresh(static_cast<std::size_t>(m_rows), true);
            m_buffer = std::move(buffer);
            m_fresh = std::move(fresh);
        }
        // Which rows' buffers are fresh, read before any span (the spans of a row may come from
        // different threads).
        std::vector<char> fresh(rows.size(), 0);
        if (m_buffer.size() != 0)
            for (std::size_t k = 0; k < rows.size(); ++k) fresh[k] = m_fresh[static_cast<std::size_t>(rows[k])] ? 1 : 0;
        const seqembed::detail::SpanStep step_span(
            [&](std::size_t k, Index first, Index count) {
                const auto r = static_cast<Index>(rows[k]);
                seqembed::detail::request_span_start(weights.row(r).data() + first, count, true);
                if (m_buffer.size() != 0) seqembed::detail::request_span_start(m_buffer.row(r).data() + first, count, true);
            },
            [&](std::size_t k, Index first, Index count, const Scalar* g) {
                const auto r = static_cast<Index>(rows[k]);
                Scalar* buffer = m_buffer.size() == 0 ? nullptr : m_buffer.row(r).data() + first;
                sgd_row(weights.row(r).data() + first, g, buffer, fresh[k] != 0, count, constants);
            });
        pass(step_span);
        if (m_buffer.size() != 0)
            for (const std::int64_t r : rows) m_fresh[static_cast<std::size_t>(r)] = false;
        ++m_steps;
    }

    /// @brief The options.
    /// @return as given at construction.
    const SgdOptions& options() const noexcept { return m_options; }
    /// @brief Steps taken.
    /// @return the number of steps so far.
    std::int64_t steps() const noexcept { return m_steps; }
    /// @brief The momentum buffers (empty before the first step with momentum).
    /// @return rows x cols, or 0 x 0; a row never updated holds no meaningful value.
    const RowMatrix<Scalar>& momentum_buffer() const noexcept { return m_buffer; }
    /// @brief Whether row r's buffer has been set by an update.
    /// @param r a row of the table.
    /// @return true once row r has been updated with momentum.
    bool has_buffer(Index r) const noexcept {
        return m_buffer.size() != 0 && r >= 0 && r < m_rows && !m_fresh[static_cast<std::size_t>(r)];
    }

    /// @brief Restores a saved state.
    /// @param steps steps taken, >= 0.
    /// @param buffer rows x cols, or 0 x 0 before the first step with momentum.
    /// @param has_buffer per row, whether its buffer was set (rows values with a buffer).
    /// @throws shape_error for a buffer or flags of another size; value_error for negative steps.
    void set_state(std::int64_t steps, RowMatrix<Scalar> buffer, std::vector<bool> has_buffer) {
        if (steps < 0) seqembed::detail::fail<value_error>(m_table, ": a negative step count ", steps);
        if (buffer.size() != 0) {
            seqembed::detail::require_weights(m_table, m_rows, m_cols, buffer);
            if (static_cast<Index>(has_buffer.size()) != m_rows)
                seqembed::detail::fail<shape_error>(m_table, ": ", has_buffer.size(), " buffer flags for ", m_rows, " rows");
            has_buffer.flip();
        } else {
            has_buffer.clear();
        }
        m_steps = steps;
        m_buffer = std::move(buffer);
        m_fresh = std::move(has_buffer);
    }

private:
    std::string m_table;
    SgdOptions m_options;
    Index m_rows;
    Index m_cols;
    std::int64_t m_steps = 0;
    RowMatrix<Scalar> m_buffer;
    std::vector<bool> m_fresh;  // per row: its buffer holds nothing yet
};

}  // namespace seqembed::optim
