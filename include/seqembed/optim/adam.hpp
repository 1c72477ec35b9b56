/// @file optim/adam.hpp
/// @brief Adam over every row of a table, as torch.optim.Adam (and, with decoupled weight
///        decay, the core AdamW shares).
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "../detail/engine/kernels.hpp"
#include "../detail/large_memory.hpp"
#include "../detail/optimizer_checks.hpp"
#include "../gradients.hpp"
#include "../types.hpp"

namespace seqembed::optim {

/// @brief The hyperparameters of Adam (torch.optim.Adam's, but the learning rate, which each
///        step takes).
struct AdamOptions {
    /// @brief Decay of the first moment, in [0, 1).
    double beta1 = 0.9;
    /// @brief Decay of the second moment, in [0, 1).
    double beta2 = 0.999;
    /// @brief Added to the denominator, >= 0.
    double eps = 1e-8;
    /// @brief L2 penalty added to the gradient (Adam) or decoupled decay of the weights (AdamW),
    ///        >= 0.
    double weight_decay = 0.0;
    /// @brief The AMSGrad variant: the denominator uses the largest second moment so far.
    bool amsgrad = false;
    /// @brief Ascend the objective instead of descending.
    bool maximize = false;
    /// @brief Scan the gradient before writing (see SgdOptions::check_finite).
    bool check_finite = true;
};

/// @brief Adam over every row of a table, step for step as torch.optim.Adam
///        (DecoupledWeightDecay false: the decay is an L2 term added to the gradient) or
///        torch.optim.AdamW (true: the weights are first multiplied by 1 - lr x weight_decay),
///        in their order of operations, the bias corrections and step size in double as Python
///        computes them. For small tables (positions, token types, LayerNorm): each step updates
///        every row, and a row-sparse gradient counts as zero on the rows it does not list. For
///        large tables, SparseAdam updates only the touched rows. Use the names Adam and AdamW.
/// @tparam Scalar float or double.
/// @tparam DecoupledWeightDecay AdamW's decay (true) or Adam's (false).
/// @code
/// seqembed::optim::Adam<float> adam("positions", 512, 768);
/// adam.step(weights, gradient, /*lr=*/1e-3);
/// @endcode
template <typename Scalar, bool DecoupledWeightDecay>
class BasicAdam {
public:
    /// @brief The options a default-constructed optimizer takes: AdamOptions{}, with AdamW's
    ///        weight decay of 0.01 when decoupled (torch.optim.AdamW's default).
    /// @return the default options.
    static AdamOptions default_options() {
        AdamOptions options;
        if (DecoupledWeightDecay) options.weight_decay = 0.01;
        return options;
    }

    /// @brief The optimizer for a rows x cols table.
    /// @param table the table's name, for error messages.
    /// @param rows rows of the table, > 0.
    /// @param cols values per row, > 0.
    /// @param options betas, eps, weight decay, AMSGrad, maximize, check_finite.
    /// @throws value_error for a bad size or option.
    BasicAdam(std::string table, Index rows, Index cols, const AdamOptions& options = default_options())
        : m_table(std::move(table)), m_options(options), m_rows(rows), m_cols(cols) {
        const char* optimizer = DecoupledWeightDecay ? "AdamW" : "Adam";
        seqembed::detail::require_positive("rows", rows);
        seqembed::detail::require_positive("cols", cols);
        seqembed::detail::require_option(optimizer, "beta1", options.beta1, 0.0, std::nextafter(1.0, 0.0));
        seqembed::detail::require_option(optimizer, "beta2", options.beta2, 0.0, std::nextafter(1.0, 0.0));
        seqembed::detail::require_option(optimizer, "eps", options.eps, 0.0, 1e300);
        seqembed::detail::require_option(optimizer, "weight_decay", options.weight_decay, 0.0, 1e300);
    }

    /// @brief One step with a dense gradient.
    /// @param weights the table, rows x cols.
    /// @param gradient rows x cols.
    /// @param lr the learning rate, finite and >= 0.
    /// @throws shape_error for shapes that differ from the state's; value_error for a bad
    ///         learning rate or (check_finite) a NaN or infinite gradient. Nothing changes then.
    void step(Eigen::Ref<RowMatrix<Scalar>> weights, const Eigen::Ref<const RowMatrix<Scalar>>& gradient, double lr) {
        seqembed::detail::require_learning_rate(m_table, lr);
        seqembed::detail::require_weights(m_table, m_rows, m_cols, weights);
        seqembed::detail::require_dense_gradient(m_table, m_rows, m_cols, gradient, m_options.check_finite);
        const Step step = start_step(lr);
        for (Index r = 0; r < m_rows; ++r) update(weights, r, gradient.row(r).data(), step);
    }

    /// @brief One step with a row-sparse gradient, zero on the rows it does not list.
    /// @param weights the table, rows x cols.
    /// @param gradient a gradient of a rows x cols table.
    /// @param lr the learning rate.
    /// @throws as the dense step; index_error for a listed row outside the table.
    void step(Eigen::Ref<RowMatrix<Scalar>> weights, const RowGradient<Scalar>& gradient, double lr) {
        seqembed::detail::require_learning_rate(m_table, lr);
        seqembed::detail::require_weights(m_table, m_rows, m_cols, weights);
        seqembed::detail::require_sparse_gradient(m_table, m_rows, m_cols, gradient, m_options.check_finite);
        const Step step = start_step(lr);
        seqembed::detail::for_each_dense_row(m_rows, gradient,
                                             [&](Index r, const Scalar* g) { update(weights, r, g, step); });
    }

    /// @brief The options.
    /// @return as given at construction.
    const AdamOptions& options() const noexcept { return m_options; }
    /// @brief Steps taken (the bias corrections' t).
    /// @return the number of steps so far.
    std::int64_t steps() const noexcept { return m_steps; }
    /// @brief The first moment (empty before the first step).
    /// @return rows x cols, or 0 x 0.
    const RowMatrix<Scalar>& exp_avg() const noexcept { return m_exp_avg; }
    /// @brief The second moment (empty before the first step).
    /// @return rows x cols, or 0 x 0.
    const RowMatrix<Scalar>& exp_avg_sq() const noexcept { return m_exp_avg_sq; }
    /// @brief AMSGrad's largest second moment (empty without AMSGrad).
    /// @return rows x cols, or 0 x 0.
    const RowMatrix<Scalar>& max_exp_avg_sq() const noexcept { return m_max_exp_avg_sq; }

    /// @brief Restores a saved state.
    /// @param steps steps taken, >= 0.
    /// @param exp_avg the first moment (0 x 0 before the first step).
    /// @param exp_avg_sq the second moment (0 x 0 before the first step).
    /// @param max_exp_avg_sq AMSGrad's maximum (0 x 0 without AMSGrad).
    /// @throws shape_error for moments of another shape; value_error for negative steps.
    void set_state(std::int64_t steps, RowMatrix<Scalar> exp_avg, RowMatrix<Scalar> exp_avg_sq,
                   RowMatrix<Scalar> max_exp_avg_sq = {}) {
        if (steps < 0) seqembed::detail::fail<value_error>(m_table, ": a negative step count ", steps);
        const bool empty = steps == 0 && exp_avg.size() == 0 && exp_avg_sq.size() == 0;
        if (!empty) {
            seqembed::detail::require_weights(m_table, m_rows, m_cols, exp_avg);
            seqembed::detail::require_weights(m_table, m_rows, m_cols, exp_avg_sq);
            if (m_options.amsgrad) seqembed::detail::require_weights(m_table, m_rows, m_cols, max_exp_avg_sq);
        }
        m_steps = steps;
        m_exp_avg = std::move(exp_avg);
        m_exp_avg_sq = std::move(exp_avg_sq);
        m_max_exp_avg_sq = std::move(max_exp_avg_sq);
    }

private:
    /// A step's row kernel and constants.
    struct Step {
        seqembed::detail::OptimizerKernelFunctions<Scalar> kernel;
        seqembed::detail::DenseAdamConstants<Scalar> constants;
    };

    Step start_step(double lr) {
        const seqembed::detail::OptimizerKernelFunctions<Scalar> kernel = seqembed::detail::optimizer_kernel<Scalar>();
        if (m_exp_avg.size() == 0) {  // may throw: before any change
            RowMatrix<Scalar> exp_avg = seqembed::detail::new_zeros<Scalar>(m_rows, m_cols);
            RowMatrix<Scalar> exp_avg_sq = seqembed::detail::new_zeros<Scalar>(m_rows, m_cols);
            RowMatrix<Scalar> max_exp_avg_sq;
            if (m_options.amsgrad) max_exp_avg_sq = seqembed::detail::new_zeros<Scalar>(m_rows, m_cols);
            m_exp_avg = std::move(exp_avg);
            m_exp_avg_sq = std::move(exp_avg_sq);
            m_max_exp_avg_sq = std::move(max_exp_avg_sq);
        }
        ++m_steps;
        const double step = static_cast<double>(m_steps);
        const double bias_correction1 = 1.0 - std::pow(m_options.beta1, step);
        const double bias_correction2 = 1.0 - std::pow(m_options.beta2, step);
        const auto rounded = [](double value) { return static_cast<Scalar>(value); };
        return {kernel,
                {rounded(m_options.beta1), rounded(m_options.beta2), rounded(1.0 - m_options.beta1),
                 rounded(1.0 - m_options.beta2), rounded(m_options.eps),
                 rounded(DecoupledWeightDecay ? 1.0 - lr * m_options.weight_decay : m_options.weight_decay),
                 rounded(lr / bias_correction1), rounded(std::sqrt(bias_correction2)), DecoupledWeightDecay,
                 !DecoupledWeightDecay && m_options.weight_decay != 0.0, m_options.maximize}};
    }

    void update(Eigen::Ref<RowMatrix<Scalar>>& weights, Index r, const Scalar* g, const Step& step) {
        Scalar* v_max = m_options.amsgrad ? m_max_exp_avg_sq.row(r).data() : nullptr;
        step.kernel.dense_adam_row(weights.row(r).data(), m_exp_avg.row(r).data(), m_exp_avg_sq.row(r).data(), v_max,
                                   g, m_cols, step.constants);
    }

    std::string m_table;
    AdamOptions m_options;
    Index m_rows;
    Index m_cols;
    std::int64_t m_steps = 0;
    RowMatrix<Scalar> m_exp_avg;
    RowMatrix<Scalar> m_exp_avg_sq;
    RowMatrix<Scalar> m_max_exp_avg_sq;
};

/// @brief Adam over every row of a table, as torch.optim.Adam (BasicAdam).
/// @tparam Scalar float or double.
template <typename Scalar = float>
using Adam = BasicAdam<Scalar, false>;

}  // namespace seqembed::optim
