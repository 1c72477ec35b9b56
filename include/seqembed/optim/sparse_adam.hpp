/// @file optim/sparse_adam.hpp
/// @brief Adam on the rows a batch touched only, as torch.optim.SparseAdam.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../detail/large_memory.hpp"
#include "../detail/optimizer_checks.hpp"
#include "../detail/engine/kernels.hpp"
#include "../detail/simd/platform.hpp"
#include "../gradients.hpp"
#include "../types.hpp"

namespace seqembed::optim {

/// @brief The hyperparameters of SparseAdam (torch.optim.SparseAdam's, but the learning rate).
struct SparseAdamOptions {
    /// @brief Decay of the first moment, in [0, 1).
    double beta1 = 0.9;
    /// @brief Decay of the second moment, in [0, 1).
    double beta2 = 0.999;
    /// @brief Added to the denominator, >= 0.
    double eps = 1e-8;
    /// @brief Ascend the objective instead of descending.
    bool maximize = false;
    /// @brief Scan the gradient before writing (see SgdOptions::check_finite).
    bool check_finite = true;
};

/// @brief Adam on the rows a row-sparse gradient lists, step for step as torch.optim.SparseAdam:
///        the listed rows' moments and weights are updated, the others keep theirs, and the
///        bias corrections use the table's step count (every step counts, whichever rows it
///        touches). A step costs the rows touched, not the vocabulary: for large token tables.
/// @tparam Scalar float or double.
/// @code
/// seqembed::optim::SparseAdam<float> adam("token table", 32000, 512);
/// adam.step(table, gradients.token, /*lr=*/1e-3);
/// @endcode
template <typename Scalar = float>
class SparseAdam {
public:
    /// @brief SparseAdam for a rows x cols table.
    /// @param table the table's name, for error messages.
    /// @param rows rows of the table, > 0.
    /// @param cols values per row, > 0.
    /// @param options betas, eps, maximize, check_finite.
    /// @throws value_error for a bad size or option.
    SparseAdam(std::string table, Index rows, Index cols, const SparseAdamOptions& options = {})
        : m_table(std::move(table)), m_options(options), m_rows(rows), m_cols(cols) {
        seqembed::detail::require_positive("rows", rows);
        seqembed::detail::require_positive("cols", cols);
        seqembed::detail::require_option("SparseAdam", "beta1", options.beta1, 0.0, std::nextafter(1.0, 0.0));
        seqembed::detail::require_option("SparseAdam", "beta2", options.beta2, 0.0, std::nextafter(1.0, 0.0));
        seqembed::detail::require_option("SparseAdam", "eps", options.eps, 0.0, 1e300);
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
        const auto adam_row = seqembed::detail::optimizer_kernel<Scalar>().adam_row;
        if (m_exp_avg.size() == 0) {  // may throw: before any change
            RowMatrix<Scalar> exp_avg = seqembed::detail::new_zeros<Scalar>(m_rows, m_cols);
            RowMatrix<Scalar> exp_avg_sq = seqembed::detail::new_zeros<Scalar>(m_rows, m_cols);
            m_exp_avg = std::move(exp_avg);
            m_exp_avg_sq = std::move(exp_avg_sq);
        }
        const std::int64_t step_number = m_steps + 1;
        const double step = static_cast<double>(step_number);
        const double bias_correction1 = 1.0 - std::pow(m_options.beta1, step);
        const double bias_correction2 = 1.0 - std::pow(m_options.beta2, step);
        // torch's order: old += (1 - b) * (new - old), the update values reused for the step.
        const seqembed::detail::AdamConstants<Scalar> constants{
            static_cast<Scalar>(1.0 - m_options.beta1), static_cast<Scalar>(1.0 - m_options.beta2),
            static_cast<Scalar>(m_options.eps),
            static_cast<Scalar>(lr * std::sqrt(bias_correction2) / bias_correction1), m_options.maximize};
        const auto at = [&](RowMatrix<Scalar>& state, std::size_t k, Index first) {
            return state.row(static_cast<Index>(rows[k])).data() + first;
        };
        const seqembed::detail::SpanStep step_span(
            [&](std::size_t k, Index first, Index count) {
                seqembed::detail::request_span_start(weights.row(static_cast<Index>(rows[k])).data() + first, count, true);
                seqembed::detail::request_span_start(at(m_exp_avg, k, first), count, true);
                seqembed::detail::request_span_start(at(m_exp_avg_sq, k, first), count, true);
            },
            [&](std::size_t k, Index first, Index count, const Scalar* g) {
                adam_row(weights.row(static_cast<Index>(rows[k])).data() + first, at(m_exp_avg, k, first),
                         at(m_exp_avg_sq, k, first), g, count, constants);
            });
        pass(step_span);
        m_steps = step_number;
    }

    /// @brief The options.
    /// @return as given at construction.
    const SparseAdamOptions& options() const noexcept { return m_options; }
    /// @brief Steps taken (the bias corrections' t).
    /// @return the number of steps so far.
    std::int64_t steps() const noexcept { return m_steps; }
    /// @brief The first moment (empty before the first step).
    /// @return rows x cols, or 0 x 0.
    const RowMatrix<Scalar>& exp_avg() const noexcept { return m_exp_avg; }
    /// @brief The second moment (empty before the first step).
    /// @return rows x cols, or 0 x 0.
    const RowMatrix<Scalar>& exp_avg_sq() const noexcept { return m_exp_avg_sq; }
    /// @brief Restores a saved state.
    /// @param steps steps taken, >= 0.
    /// @param exp_avg the first moment (0 x 0 before the first step).
    /// @param exp_avg_sq the second moment (0 x 0 before the first step).
    /// @throws shape_error for moments of another shape; value_error for negative steps.
    void set_state(std::int64_t steps, RowMatrix<Scalar> exp_avg, RowMatrix<Scalar> exp_avg_sq) {
        if (steps < 0) seqembed::detail::fail<value_error>(m_table, ": a negative step count ", steps);
        if (exp_avg.size() != 0 || exp_avg_sq.size() != 0) {
            seqembed::detail::require_weights(m_table, m_rows, m_cols, exp_avg);
            seqembed::detail::require_weights(m_table, m_rows, m_cols, exp_avg_sq);
        }
        m_steps = steps;
        m_exp_avg = std::move(exp_avg);
        m_exp_avg_sq = std::move(exp_avg_sq);
    }

private:
    std::string m_table;
    SparseAdamOptions m_options;
    Index m_rows;
    Index m_cols;
    std::int64_t m_steps = 0;
    RowMatrix<Scalar> m_exp_avg;
    RowMatrix<Scalar> m_exp_avg_sq;
};

}  // namespace seqembed::optim
