/// @file layer_norm.hpp
/// @brief LayerNorm over each row, as torch.nn.LayerNorm(d_model): the normalisation BERT, BART
///        and their kin apply to the sum of embeddings before dropout.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "detail/backward.hpp"
#include "detail/checks.hpp"
#include "detail/engine/row_pass.hpp"
#include "detail/large_memory.hpp"
#include "detail/stage_access.hpp"
#include "error.hpp"
#include "types.hpp"

namespace seqembed {

/// @brief What LayerNorm::backward gives: the gradients of its input and of its weights.
/// @tparam Scalar float or double.
template <typename Scalar>
struct LayerNormGradients {
    /// @brief Of the input, its shape.
    RowMatrix<Scalar> x;
    /// @brief Of the weight, d_model values.
    Eigen::Matrix<Scalar, 1, Eigen::Dynamic> gamma;
    /// @brief Of the bias, d_model values.
    Eigen::Matrix<Scalar, 1, Eigen::Dynamic> beta;
};

/// @brief torch.nn.LayerNorm over rows of d_model values: y = (x - mean) / sqrt(var + epsilon) *
///        gamma + beta, with the mean and the biased variance of the row.
///
/// The mean and variance are accumulated in Scalar, as PyTorch does for float, in two passes
/// (the second over the centred values) from 64 partial sums in a fixed order, so that every ISA
/// gives the same bits. They differ from PyTorch's (whose order of summation depends on its
/// vector width) by a few units in the last place: the outputs agree within 1e-6 relative to
/// max(1, |y|) for float (tests/test_model_stages.cpp measures it). The same arithmetic runs
/// inside InputPipeline when it has a LayerNorm (set_layer_norm), so the fused pipeline equals
/// its stages chained, bit for bit.
/// @tparam Scalar float or double.
/// @code
/// auto norm = seqembed::LayerNorm<float>::from_weights(gamma, beta, /*epsilon=*/1e-12);
/// seqembed::RowMatrix<float> y = norm.forward(x);
/// @endcode
template <typename Scalar = float>
class LayerNorm {
    static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                  "LayerNorm<Scalar>: Scalar must be float or double");

public:
    /// @brief A row vector of d_model values.
    using Vector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;

    /// @brief The identity-initialised LayerNorm of nn.LayerNorm: gamma 1, beta 0.
    /// @param d_model values per row, > 0.
    /// @param epsilon added to the variance: finite, > 0 (PyTorch's default 1e-5).
    /// @throws value_error for d_model <= 0 or a bad epsilon.
    explicit LayerNorm(Index d_model, double epsilon = 1e-5) : LayerNorm(checked_width(d_model), epsilon, Identity{}) {}

    /// @brief A LayerNorm with pre-trained weight (gamma) and bias (beta).
    /// @param gamma the weight, d_model values.
    /// @param beta the bias, d_model values.
    /// @param epsilon added to the variance: finite, > 0 (BERT's config: 1e-12).
    /// @return the LayerNorm, holding copies of gamma and beta.
    /// @throws shape_error if gamma and beta differ in size; value_error for an empty gamma, a
    ///         NaN or infinite weight, or a bad epsilon.
    static LayerNorm from_weights(const Eigen::Ref<const Vector>& gamma, const Eigen::Ref<const Vector>& beta,
                                  double epsilon) {
        return LayerNorm(Vector(gamma), Vector(beta), epsilon);
    }

    /// @brief Values per row.
    /// @return d_model, > 0.
    Index d_model() const noexcept { return m_gamma.size(); }
    /// @brief The weight.
    /// @return gamma, d_model values.
    const Vector& gamma() const noexcept { return m_gamma; }
    /// @brief The bias.
    /// @return beta, d_model values.
    const Vector& beta() const noexcept { return m_beta; }
    /// @brief The weight, writable, for an optimizer step (the LayerNorm owns it: copies of a
    ///        LayerNorm never share their weights).
    /// @return a 1 x d_model view of gamma.
    Eigen::Map<RowMatrix<Scalar>> trainable_gamma() noexcept { return {m_gamma.data(), 1, d_model()}; }
    /// @brief The bias, writable, for an optimizer step.
    /// @return a 1 x d_model view of beta.
    Eigen::Map<RowMatrix<Scalar>> trainable_beta() noexcept { return {m_beta.data(), 1, d_model()}; }
    /// @brief The epsilon added to the variance.
    /// @return epsilon in Scalar, > 0.
    Scalar epsilon() const noexcept { return m_epsilon; }

    /// @brief Normalises each row of x into a new matrix.
    /// @param x rows x d_model.
    /// @return the normalised rows.
    /// @throws shape_error if x.cols() != d_model.
    RowMatrix<Scalar> forward(const Eigen::Ref<const RowMatrix<Scalar>>& x) const {
        require_width(x.cols());
        RowMatrix<Scalar> out = detail::new_output<Scalar>(x.rows(), x.cols());
        forward_into(x, out);
        return out;
    }

    /// @brief Normalises each row of x into caller memory (which may be x itself), without
    ///        allocating.
    /// @param x rows x d_model.
    /// @param out the output, x's shape.
    /// @throws shape_error if x.cols() != d_model or out's shape differs from x's.
    void forward_into(const Eigen::Ref<const RowMatrix<Scalar>>& x, Eigen::Ref<RowMatrix<Scalar>> out) const {
        require_width(x.cols());
        detail::require_shape("output of LayerNorm::forward_into", out.rows(), out.cols(), x.rows(), x.cols());
        if (out.size() == 0) return;
        // x * 1 is x: the row kernel with a scale of 1 and no position normalises each row.
        detail::RowJob<Scalar> job = row_job();
        job.width = out.cols();
        job.streaming = detail::streams_by_default(sizeof(Scalar) * static_cast<std::size_t>(out.size()));
        detail::RowPass<Scalar, Scalar> pass(job);
        for (Index r = 0; r < out.rows(); ++r)
            pass.add({out.row(r).data(), x.row(r).data(), static_cast<std::uint64_t>(r * out.cols())}, nullptr);
        pass.finish();
    }

    /// @brief The gradients of forward(x)'s input and weights from the gradient of its output,
    ///        as torch.nn.LayerNorm's backward: with x_hat the normalised row and g = grad_y x
    ///        gamma, grad_x = (g - mean(g) - x_hat mean(g x_hat)) / sqrt(var + epsilon); gamma's
    ///        gradient sums grad_y x x_hat over the rows, beta's grad_y. Each row's moments and
    ///        sums run in double for float, by the vector kernels of the ISA in force (every ISA
    ///        the scalar backend's bits); a row's sums in 16 lanes added pairwise, gamma's and
    ///        beta's per block of 64 rows, then the blocks in order, as InputPipeline::backward
    ///        sums them.
    /// @param x rows x d_model, the forward's input.
    /// @param grad_y rows x d_model, the gradient of its output.
    /// @return the gradients of x, gamma and beta.
    /// @throws shape_error if x.cols() != d_model or grad_y's shape differs from x's;
    ///         value_error as active_isa().
    LayerNormGradients<Scalar> backward(const Eigen::Ref<const RowMatrix<Scalar>>& x,
                                        const Eigen::Ref<const RowMatrix<Scalar>>& grad_y) const {
        require_width(x.cols());
        detail::require_shape("gradient of LayerNorm's output", grad_y.rows(), grad_y.cols(), x.rows(), x.cols());
        LayerNormGradients<Scalar> out{RowMatrix<Scalar>(x.rows(), x.cols()), {}, {}};
        out.gamma.resize(d_model());
        out.beta.resize(d_model());
        std::vector<Index> rows(static_cast<std::size_t>(x.rows()));
        for (Index r = 0; r < x.rows(); ++r) rows[static_cast<std::size_t>(r)] = r;
        std::vector<detail::WideScalar<Scalar>> partial;
        detail::layer_norm_backward(rows.data(), x.rows(), x.data(), x.outerStride(),
                                    detail::GradientRows<Scalar>::of(grad_y), out.x.data(), d_model(), m_gamma.data(),
                                    m_epsilon, d_model(), out.gamma.data(), out.beta.data(), partial);
        return out;
    }

private:
    friend struct detail::StageAccess;

    /// The row kernel's job that applies this LayerNorm (the pipeline adds its other stages to
    /// it): normalizing, gamma, beta and epsilon set; valid while this object lives.
    detail::RowJob<Scalar> row_job() const noexcept {
        detail::RowJob<Scalar> job;
        job.width = d_model();
        job.normalizing = true;
        job.gamma = m_gamma.data();
        job.beta = m_beta.data();
        job.epsilon = m_epsilon;
        return job;
    }

    struct Identity {};

    LayerNorm(Index d_model, double epsilon, Identity) : LayerNorm(Vector::Ones(d_model), Vector::Zero(d_model), epsilon) {}

    LayerNorm(Vector gamma, Vector beta, double epsilon)
        : m_gamma(std::move(gamma)), m_beta(std::move(beta)), m_epsilon(checked_epsilon(epsilon)) {
        checked_width(m_gamma.size());
        if (m_beta.size() != m_gamma.size())
            detail::fail<shape_error>("LayerNorm bias has ", m_beta.size(), " values, its weight ", m_gamma.size());
        detail::require_finite("LayerNorm weight", m_gamma.data(), 1, m_gamma.size());
        detail::require_finite("LayerNorm bias", m_beta.data(), 1, m_beta.size());
    }

    static Index checked_width(Index d_model) {
        detail::require_positive("LayerNorm d_model", d_model);
        return d_model;
    }

    static Scalar checked_epsilon(double epsilon) {
        if (!(epsilon > 0) || !std::isfinite(epsilon) || !(static_cast<Scalar>(epsilon) > 0))
            detail::fail<value_error>("LayerNorm epsilon ", epsilon, " is not a finite positive ",
                                      std::is_same_v<Scalar, float> ? "float" : "double");
        return static_cast<Scalar>(epsilon);
    }

    void require_width(Index cols) const {
        if (cols != d_model())
            detail::fail<shape_error>("LayerNorm input has ", cols, " columns, expected d_model = ", d_model());
    }

    Vector m_gamma;
    Vector m_beta;
    Scalar m_epsilon;
};

}  // namespace seqembed
