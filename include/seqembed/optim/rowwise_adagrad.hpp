/// @file optim/rowwise_adagrad.hpp
/// @brief Row-wise Adagrad on the rows a batch touched, with one accumulator per row, as
///        FBGEMM's table-batched embeddings apply it.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../detail/engine/kernels.hpp"
#include "../detail/optimizer_checks.hpp"
#include "../detail/simd/platform.hpp"
#include "../gradients.hpp"
#include "../types.hpp"

namespace seqembed::optim {

/// @brief How RowwiseAdagrad applies weight decay (FBGEMM's weight_decay_mode).
enum class WeightDecayMode {
    /// No decay (FBGEMM's mode 0).
    none,
    /// L2: weight_decay x weight added to the gradient in the row's mean square, and the weights
    /// multiplied by 1 - multiplier x weight_decay (mode 1).
    l2,
    /// Decoupled: the weights multiplied by 1 - lr x weight_decay (mode 2).
    decoupled
};

/// @brief The hyperparameters of RowwiseAdagrad (FBGEMM's, but the learning rate).
struct RowwiseAdagradOptions {
    /// @brief Added to the square root of the accumulator, >= 0 (FBGEMM's default 1e-8).
    double eps = 1e-8;
    /// @brief Weight decay, >= 0.
    double weight_decay = 0.0;
    /// @brief How the weight decay applies.
    WeightDecayMode weight_decay_mode = WeightDecayMode::none;
    /// @brief Scan the gradient before writing (see SgdOptions::check_finite).
    bool check_finite = true;
};

/// @brief Row-wise Adagrad on the rows a row-sparse gradient lists, as FBGEMM's CPU kernel
///        (split_weight_update_cpu of rowwise_adagrad): one accumulator per table row. For each
///        listed row, with g its gradient:
///        - the accumulator grows by the mean over the row of g^2 (with L2 decay, of
///          (g + weight_decay x w)^2), summed in Scalar: column c into partial sum c % 16,
///          then the 16 partial sums in order, on every ISA (FBGEMM's CPU kernel also sums in
///          vector lanes);
///        - multiplier = lr / (sqrt(accumulator) + eps);
///        - w = correction x w - multiplier x g, correction being 1, 1 - multiplier x
///          weight_decay (L2) or 1 - lr x weight_decay (decoupled).
///
///        Rows not listed keep their weights and accumulators. The state is one value per row,
///        so it suits the largest tables.
/// @tparam Scalar float or double.
template <typename Scalar = float>
class RowwiseAdagrad {
public:
    /// @brief Row-wise Adagrad for a rows x cols table.
    /// @param table the table's name, for error messages.
    /// @param rows rows of the table, > 0.
    /// @param cols values per row, > 0.
    /// @param options eps, weight decay and its mode, check_finite.
    /// @throws value_error for a bad size or option.
    RowwiseAdagrad(std::string table, Index rows, Index cols, const RowwiseAdagradOptions& options = {})
        : m_table(std::move(table)), m_options(options), m_rows(rows), m_cols(cols) {
        seqembed::detail::require_positive("rows", rows);
        seqembed::detail::require_positive("cols", cols);
        seqembed::detail::require_option("RowwiseAdagrad", "eps", options.eps, 0.0, 1e300);
        seqembed::detail::require_option("RowwiseAdagrad", "weight_decay", options.weight_decay, 0.0, 1e300);
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

    /// @brief Steps take the gradient through step_spans, whole rows only (a row's mean square
    ///        comes before any of its writes): InputPipeline::backward_step fuses them into the
    ///        backward's pass, its workers sharing the rows.
    static constexpr bool takes_spans = true;
    /// @brief Each span step_spans takes is a whole row.
    static constexpr bool takes_whole_rows = true;

    /// @brief One step on rows[k] whose gradient comes row by row, in any order, for a backward
    ///        that completes each row as it goes (InputPipeline::backward_step, whose workers
    ///        share the rows): the same arithmetic as step(), so the same bits. The gradient is
    ///        not scanned for NaN or infinity: the caller has checked it.
    /// @tparam Pass callable as pass(step_span), which must call step_span(k, 0, cols, g) once
    ///         for every listed row (g: the cols values of rows[k]'s gradient), from any thread
    ///         but never twice at once for one k, and may call step_span.request(k, 0, cols)
    ///         ahead of it; it must not throw.
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
        const seqembed::detail::OptimizerKernelFunctions<Scalar> kernel = seqembed::detail::optimizer_kernel<Scalar>();
        if (m_accumulators.size() == 0) m_accumulators = Column::Zero(m_rows);  // may throw: before any change
        const auto rate = static_cast<Scalar>(lr);
        const auto eps = static_cast<Scalar>(m_options.eps);
        const auto decay = static_cast<Scalar>(m_options.weight_decay);
        const bool l2 = m_options.weight_decay_mode == WeightDecayMode::l2;
        const bool decoupled = m_options.weight_decay_mode == WeightDecayMode::decoupled;
        const seqembed::detail::SpanStep step_span(
            [&](std::size_t k, Index, Index) {
                seqembed::detail::request_span_start(weights.row(static_cast<Index>(rows[k])).data(), m_cols, true);
            },
            [&](std::size_t k, Index, Index, const Scalar* g) {
                const auto r = static_cast<Index>(rows[k]);
                Scalar* w = weights.row(r).data();
                const Scalar sum_square = kernel.square_sum(w, g, m_cols, decay, l2);
                const Scalar accumulator = m_accumulators[r] + sum_square / static_cast<Scalar>(m_cols);
                m_accumulators[r] = accumulator;
                const Scalar multiplier = rate / (std::sqrt(accumulator) + eps);
                Scalar correction = 1;
                if (l2) correction = Scalar(1) - multiplier * decay;
                if (decoupled) correction = Scalar(1) - rate * decay;
                kernel.scale_and_subtract(w, g, m_cols, correction, multiplier);
            });
        pass(step_span);
        ++m_steps;
    }

    /// @brief A column of one value per table row.
    using Column = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

    /// @brief The options.
    /// @return as given at construction.
    const RowwiseAdagradOptions& options() const noexcept { return m_options; }
    /// @brief Steps taken.
    /// @return the number of steps so far.
    std::int64_t steps() const noexcept { return m_steps; }
    /// @brief The accumulators, one per row (empty before the first step).
    /// @return rows values, or none.
    const Column& accumulators() const noexcept { return m_accumulators; }
    /// @brief Restores a saved state.
    /// @param steps steps taken, >= 0.
    /// @param accumulators rows values (or none before the first step), each finite and >= 0.
    /// @throws shape_error for another count; value_error for negative steps or a bad value.
    void set_state(std::int64_t steps, Column accumulators) {
        if (steps < 0) seqembed::detail::fail<value_error>(m_table, ": a negative step count ", steps);
        if (accumulators.size() != 0 && accumulators.size() != m_rows)
            seqembed::detail::fail<shape_error>(m_table, ": ", accumulators.size(), " accumulators for ", m_rows,
                                                " rows");
        for (Index r = 0; r < accumulators.size(); ++r)
            if (!(accumulators[r] >= 0) || !std::isfinite(accumulators[r]))
                seqembed::detail::fail<value_error>(m_table, ": accumulator ", r, " is ", accumulators[r]);
        m_steps = steps;
        m_accumulators = std::move(accumulators);
    }

private:
    std::string m_table;
    RowwiseAdagradOptions m_options;
    Index m_rows;
    Index m_cols;
    std::int64_t m_steps = 0;
    Column m_accumulators;
};

}  // namespace seqembed::optim
