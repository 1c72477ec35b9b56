// seqembed::kernels (see kernels.cpp): the rotary rotation, for every table type with every
// activation type, in a translation unit of its own so that the library builds in parallel.
#define SEQEMBED_DETAIL_BUILDING_KERNELS 1
#include <seqembed/detail/engine/kernels.hpp>

namespace seqembed::detail::linked_kernels {

template <typename Table, typename Activation>
RotateFunction<Table, Activation> compiled_rotary_kernel() {
    static_assert(is_rotary_kernel_type<Table, Activation>);
    return inline_kernels::rotary_kernel<Table, Activation>();
}

// is_rotary_kernel_type's pairs.
#define SEQEMBED_KERNELS_ROTATION(Table)                                                              \
    template RotateFunction<Table, float> compiled_rotary_kernel<Table, float>();                     \
    template RotateFunction<Table, double> compiled_rotary_kernel<Table, double>();                   \
    template RotateFunction<Table, Eigen::bfloat16> compiled_rotary_kernel<Table, Eigen::bfloat16>();
SEQEMBED_KERNELS_ROTATION(float)
SEQEMBED_KERNELS_ROTATION(double)
SEQEMBED_KERNELS_ROTATION(Eigen::bfloat16)
SEQEMBED_KERNELS_ROTATION(Eigen::half)
#undef SEQEMBED_KERNELS_ROTATION

}  // namespace seqembed::detail::linked_kernels
