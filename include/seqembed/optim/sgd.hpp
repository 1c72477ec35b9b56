/// @file optim/sgd.hpp
/// @brief Stochastic gradient descent over every row of a table, as torch.optim.SGD.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cstdint>
#include <string>
#include <utility>

#include "../detail/engine/kernels.hpp"
#include "../detail/large_memory.hpp"
#include "../detail/optimizer_checks.hpp"
#include "../gradients.hpp"
#include "../types.hpp"

namespace seqembed::optim {

/// @brief The hyperparameters of Sgd and LazySgd (torch.optim.SGD's, but the learning rate, which
///        each step takes).
struct SgdOptions {
    /// @brief Momentum factor, in [0, 1]; 0 for none.
    double momentum = 0.0;
    /// @brief Dampening of the gradient added to the momentum, in [0, 1].
    double dampening = 0.0;
    /// @brief L2 penalty added to the gradient (weight_decay x weight), >= 0.
    double weight_decay = 0.0;
    /// @brief Nesterov momentum (needs momentum > 0 and dampening 0, as PyTorch).
    bool nesterov = false;
    /// @brief Ascend the objective instead of descending.
    bool maximize = false;
    /// @brief Scan the gradient before writing, so that a NaN or infinite value is an error
    ///        (named by table, row and column) and the step changes nothing. Off: NaN propagates
    ///        into the weights, as in PyTorch.
    bool check_finite = true;
};

namespace detail {

/// Throws unless SGD's options are valid (`optimizer` names the class for the message).
inline void require_sgd_options(const char* optimizer, const SgdOptions& options) {
    seqembed::detail::require_option(optimizer, "momentum", options.momentum, 0.0, 1.0);
    seqembed::detail::require_option(optimizer, "dampening", options.dampening, 0.0, 1.0);
    seqembed::detail::require_option(optimizer, "weight_decay", options.weight_decay, 0.0, 1e300);
    if (options.nesterov && (options.momentum <= 0.0 || options.dampening != 0.0))
        seqembed::detail::fail<value_error>(optimizer, ": Nesterov momentum needs momentum > 0 and dampening 0");
}

/// The constants of an SGD step with `options` at learning rate lr, for the optimizers' row
/// kernel (OptimizerKernel::sgd_row, in torch.optim.SGD's _single_tensor_sgd order).
template <typename Scalar>
seqembed::detail::SgdConstants<Scalar> sgd_constants(const SgdOptions& options, double lr) {
    return {static_cast<Scalar>(options.weight_decay),
            static_cast<Scalar>(options.momentum),
            static_cast<Scalar>(1.0 - options.dampening),
            -static_cast<Scalar>(lr),
            options.maximize,
            options.weight_decay != 0.0,
            options.momentum != 0.0,
            options.nesterov};
}

}  // namespace detail

/// @brief SGD with momentum, dampening, Nesterov momentum and weight decay over every row of a
///        table, step for step as torch.optim.SGD: for small tables (positions, token types,
///        LayerNorm). Each step updates every row; a row-sparse gradient counts as zero on the
///        rows it does not list (momentum and weight decay still move them). For large tables,
///        LazySgd updates only the rows a batch touched.
/// @tparam Scalar float or double.
/// @code
/// seqembed::optim::Sgd<float> sgd("positions", 512, 768, {/*momentum=*/0.9});
/// sgd.step(weights, gradient, /*lr=*/0.01);
/// @endcode
template <typename Scalar = float>
class Sgd {
public:
    /// @brief SGD for a rows x cols table.
    /// @param table the table's name, for error messages.
    /// @param rows rows of the table, > 0.
    /// @param cols values per row, > 0.
    /// @param options momentum, dampening, weight decay, Nesterov, maximize, check_finite.
    /// @throws value_error for a bad size or option.
    Sgd(std::string table, Index rows, Index cols, const SgdOptions& options = {})
        : m_table(std::move(table)), m_options(options), m_rows(rows), m_cols(cols) {
        seqembed::detail::require_positive("rows", rows);
        seqembed::detail::require_positive("cols", cols);
        detail::require_sgd_options("Sgd", options);
    }

    /// @brief One step with a dense gradient: weights -= lr x (the momentum-filtered gradient).
    /// @param weights the table, rows x cols.
    /// @param gradient rows x cols.
    /// @param lr the learning rate, finite and >= 0.
    /// @throws shape_error for shapes that differ from the state's; value_error for a bad
    ///         learning rate or (check_finite) a NaN or infinite gradient. Nothing changes then.
    void step(Eigen::Ref<RowMatrix<Scalar>> weights, const Eigen::Ref<const RowMatrix<Scalar>>& gradient, double lr) {
        check(weights, lr);
        seqembed::detail::require_dense_gradient(m_table, m_rows, m_cols, gradient, m_options.check_finite);
        const Step step = start_step(lr);
        for (Index r = 0; r < m_rows; ++r) update(weights, r, gradient.row(r).data(), step);
        m_fresh = false;
    }

    /// @brief One step with a row-sparse gradient, zero on the rows it does not list.
    /// @param weights the table, rows x cols.
    /// @param gradient a gradient of a rows x cols table.
    /// @param lr the learning rate.
    /// @throws as the dense step; index_error for a listed row outside the table.
    void step(Eigen::Ref<RowMatrix<Scalar>> weights, const RowGradient<Scalar>& gradient, double lr) {
        check(weights, lr);
        seqembed::detail::require_sparse_gradient(m_table, m_rows, m_cols, gradient, m_options.check_finite);
        const Step step = start_step(lr);
        seqembed::detail::for_each_dense_row(m_rows, gradient,
                                             [&](Index r, const Scalar* g) { update(weights, r, g, step); });
        m_fresh = false;
    }

    /// @brief The options.
    /// @return as given at construction.
    const SgdOptions& options() const noexcept { return m_options; }
    /// @brief Steps taken.
    /// @return the number of steps so far.
    std::int64_t steps() const noexcept { return m_steps; }
    /// @brief The momentum buffer (empty before the first step with momentum).
    /// @return rows x cols, or 0 x 0.
    const RowMatrix<Scalar>& momentum_buffer() const noexcept { return m_buffer; }
    /// @brief Restores a saved state (the step count and momentum buffer).
    /// @param steps steps taken, >= 0.
    /// @param buffer rows x cols, or 0 x 0 before the first step with momentum.
    /// @throws shape_error for a buffer of another shape; value_error for negative steps.
    void set_state(std::int64_t steps, RowMatrix<Scalar> buffer) {
        if (steps < 0) seqembed::detail::fail<value_error>(m_table, ": a negative step count ", steps);
        if (buffer.size() != 0) seqembed::detail::require_weights(m_table, m_rows, m_cols, buffer);
        m_steps = steps;
        m_buffer = std::move(buffer);
        m_fresh = m_buffer.size() == 0;
    }

private:
    void check(const Eigen::Ref<RowMatrix<Scalar>>& weights, double lr) const {
        seqembed::detail::require_learning_rate(m_table, lr);
        seqembed::detail::require_weights(m_table, m_rows, m_cols, weights);
    }
    /// A step's row kernel and constants.
    struct Step {
        seqembed::detail::OptimizerKernelFunctions<Scalar> kernel;
        seqembed::detail::SgdConstants<Scalar> constants;
    };
    Step start_step(double lr) {
        const Step step{seqembed::detail::optimizer_kernel<Scalar>(), detail::sgd_constants<Scalar>(m_options, lr)};
        if (m_options.momentum != 0.0 && m_buffer.size() == 0)  // may throw: before any change
            m_buffer = seqembed::detail::new_zeros<Scalar>(m_rows, m_cols);
        ++m_steps;
        return step;
    }
    void update(Eigen::Ref<RowMatrix<Scalar>>& weights, Index r, const Scalar* g, const Step& step) {
        Scalar* buffer = m_buffer.size() == 0 ? nullptr : m_buffer.row(r).data();
        step.kernel.sgd_row(weights.row(r).data(), g, buffer, m_fresh, m_cols, step.constants);
    }

    std::string m_table;
    SgdOptions m_options;
    Index m_rows;
    Index m_cols;
    std::int64_t m_steps = 0;
    RowMatrix<Scalar> m_buffer;
    bool m_fresh = true;  // the buffer holds nothing yet
};

}  // namespace seqembed::optim
