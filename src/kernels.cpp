// seqembed::kernels: every ISA's kernels compiled once, for every type the components accept.
// Translation units that link the target (SEQEMBED_COMPILED_KERNELS=1) see only the
// declarations of detail/engine/kernels.hpp's linked_kernels namespace and call the functions
// defined here and in kernels_rotary.cpp, which hand out the header's own (inline_kernels) entry
// points. This file: the dropout mask, the exact sin/cos, the row kernel, the backward's loops and
// the optimizers' row steps.
#define SEQEMBED_DETAIL_BUILDING_KERNELS 1
#include <seqembed/detail/engine/kernels.hpp>

namespace seqembed::detail::linked_kernels {

void draw_mask(const DropoutKey& key, std::uint64_t first, Index count, std::uint64_t* out) {
    inline_kernels::draw_mask(key, first, count, out);
}

void exact_sin_cos(double position, const double* high, const double* middle, const double* low, double* sines,
                   double* cosines) {
    inline_kernels::exact_sin_cos(position, high, middle, low, sines, cosines);
}

template <typename Scalar, typename Storage>
RowKernelFunctions<Scalar, Storage> compiled_row_kernel() {
    static_assert(is_row_kernel_type<Scalar, Storage>);
    return inline_kernels::row_kernel<Scalar, Storage>();
}

// is_row_kernel_type's pairs.
template RowKernelFunctions<float, float> compiled_row_kernel<float, float>();
template RowKernelFunctions<double, double> compiled_row_kernel<double, double>();
template RowKernelFunctions<float, Eigen::bfloat16> compiled_row_kernel<float, Eigen::bfloat16>();
template RowKernelFunctions<float, Eigen::half> compiled_row_kernel<float, Eigen::half>();

template <typename Scalar>
GradientKernelFunctions<Scalar> compiled_gradient_kernel() {
    return inline_kernels::gradient_kernel<Scalar>();
}

template GradientKernelFunctions<float> compiled_gradient_kernel<float>();
template GradientKernelFunctions<double> compiled_gradient_kernel<double>();

template <typename Scalar>
OptimizerKernelFunctions<Scalar> compiled_optimizer_kernel() {
    return inline_kernels::optimizer_kernel<Scalar>();
}

template OptimizerKernelFunctions<float> compiled_optimizer_kernel<float>();
template OptimizerKernelFunctions<double> compiled_optimizer_kernel<double>();

}  // namespace seqembed::detail::linked_kernels
