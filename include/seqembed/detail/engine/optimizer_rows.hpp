/// @file detail/engine/optimizer_rows.hpp
/// @brief What the optimizers' element loops (optimizer-inl.hpp) are given: the constants of
///        one step of SparseAdam, Adam or AdamW, or SGD.
#pragma once

namespace seqembed::detail {

/// The constants of one Adam or SparseAdam step over rows of Scalar values: 1 - beta1,
/// 1 - beta2, eps and the bias-corrected step size (lr sqrt(1 - beta2^t) / (1 - beta1^t)),
/// each rounded to Scalar, and whether the gradient is negated (maximize).
template <typename Scalar>
struct AdamConstants {
    Scalar keep1;
    Scalar keep2;
    Scalar eps;
    Scalar step_size;
    bool maximize;
};

/// The constants of one Adam or AdamW step over every row (torch.optim.Adam's order), each
/// rounded to Scalar: beta1, beta2, 1 - beta1, 1 - beta2, eps, the decay (Adam: the L2 factor
/// added to the gradient; AdamW: 1 - lr weight_decay, the weights' factor), the step size
/// lr / (1 - beta1^t) and sqrt(1 - beta2^t); whether the decay is decoupled (AdamW), whether
/// Adam adds an L2 term, and whether the gradient is negated (maximize).
template <typename Scalar>
struct DenseAdamConstants {
    Scalar beta1;
    Scalar beta2;
    Scalar keep1;
    Scalar keep2;
    Scalar eps;
    Scalar decay;
    Scalar step_size;
    Scalar correction2;
    bool decoupled;
    bool l2;
    bool maximize;
};

/// The constants of one SGD step over rows of Scalar values, each rounded to Scalar: the weight
/// decay, the momentum, 1 - dampening and the negated learning rate; and which terms the step
/// has: the gradient negated (maximize), weight decay, momentum, Nesterov momentum.
template <typename Scalar>
struct SgdConstants {
    Scalar weight_decay;
    Scalar momentum;
    Scalar keep;
    Scalar minus_lr;
    bool maximize;
    bool decays;
    bool has_momentum;
    bool nesterov;
};

}  // namespace seqembed::detail
