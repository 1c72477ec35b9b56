/// @file detail/engine/kernels.hpp
/// @brief The kernels of kernels-inl.hpp compiled once per ISA, and the one place that picks
///        which copy runs (active_isa()): the entry points row_kernel, draw_mask, rotary_kernel,
///        exact_sin_cos, gradient_kernel and optimizer_kernel.
///
/// Each ISA's copy lives in its own namespace (scalar_isa, avx2_isa, avx512_isa, neon_isa, and
/// avx512_bf16_isa, which has only the rotation and takes AVX-512's other kernels) and
/// the x86 ones in a region compiled for their target, as Google Highway's foreach_target does,
/// so that a build without -m flags still has them; they run only where isa_supported() says.
///
/// Header-only (the default), every translation unit that calls an entry point compiles every
/// ISA's kernels for its types. With SEQEMBED_COMPILED_KERNELS=1 (the seqembed::kernels target
/// puts it on its users), this header only declares the entry points, which the library
/// (src/kernels*.cpp) compiles once for every scalar and storage type; no kernel code is
/// included. The two kinds of entry points live in different namespaces (inline_kernels,
/// linked_kernels; the one in use is inline), so a program may hold translation units of both
/// kinds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <Eigen/Core>

#include "../../isa.hpp"
#include "../../types.hpp"
#include "../random/dropout_layout.hpp"
#include "exact_sincos.hpp"
#include "gradient_rows.hpp"
#include "optimizer_rows.hpp"
#include "rows.hpp"

// SEQEMBED_DETAIL_LINKED_KERNELS: 1 when the entry points come from seqembed::kernels.
// SEQEMBED_DETAIL_BUILDING_KERNELS is defined by src/kernels*.cpp alone, which compile them
// whatever the build defines.
#if defined(SEQEMBED_DETAIL_BUILDING_KERNELS)
#define SEQEMBED_DETAIL_LINKED_KERNELS 0
#elif !defined(SEQEMBED_COMPILED_KERNELS)
#define SEQEMBED_DETAIL_LINKED_KERNELS 0
#elif SEQEMBED_COMPILED_KERNELS
#define SEQEMBED_DETAIL_LINKED_KERNELS 1
#else
#define SEQEMBED_DETAIL_LINKED_KERNELS 0
#endif

namespace seqembed::detail {

/// The row kernel of one ISA for rows of Scalar from a table of Storage.
template <typename Scalar, typename Storage>
struct RowKernelFunctions {
    void (*write)(const RowJob<Scalar>&, RowCarry<Scalar>&, const RowSources<Scalar, Storage>*, Index,
                  const Storage* const*) noexcept;
    void (*finish)(const RowJob<Scalar>&, RowCarry<Scalar>&) noexcept;
};

/// A RotaryKernel's rotate(): turns a token's heads in place by its table row (cos, sin, pairs,
/// interleaved, the heads).
template <typename Table, typename Activation>
using RotateFunction = void (*)(const Table*, const Table*, Index, bool, const TokenHeads<Activation>&) noexcept;

/// The backward's element loops of one ISA over Scalar values (gradient-inl.hpp's
/// GradientKernel): one read's role, LayerNorm's backward of one row, and the fence that orders
/// the streaming stores of the roles before another thread reads them.
template <typename Scalar>
struct GradientKernelFunctions {
    void (*apply)(ReadRole, Scalar, const Scalar*, const SpanMask<Scalar>&, Index, WideScalar<Scalar>*, Scalar*,
                  bool) noexcept;
    /// LayerNorm's backward of one row (GradientKernel::norm_row).
    void (*norm_row)(const Scalar*, const Scalar*, const SpanMask<Scalar>&, const Scalar*, Scalar, Index, Scalar*,
                     WideScalar<Scalar>*, WideScalar<Scalar>*) noexcept;
    void (*fence)() noexcept;
};

/// The optimizers' row steps of one ISA over Scalar values (optimizer-inl.hpp's
/// OptimizerKernel): SparseAdam's (weights, first and second moments, gradient, count,
/// constants); Adam's and AdamW's over every row (the same, AMSGrad's maximum or null after the
/// moments, and the gradient may be null); SGD's (weights, gradient or null, momentum buffer or null, whether the buffer is fresh,
/// count, constants); and row-wise Adagrad's two passes, the sum of squares (weights, gradient,
/// count, decay, whether L2) and the update (weights, gradient, count, correction, multiplier);
/// and the scan of a gradient row (values, count) that check_finite makes before a step: its
/// largest magnitude, NaN when a value is NaN or infinite.
template <typename Scalar>
struct OptimizerKernelFunctions {
    void (*adam_row)(Scalar*, Scalar*, Scalar*, const Scalar*, Index, const AdamConstants<Scalar>&) noexcept;
    void (*dense_adam_row)(Scalar*, Scalar*, Scalar*, Scalar*, const Scalar*, Index,
                           const DenseAdamConstants<Scalar>&) noexcept;
    void (*sgd_row)(Scalar*, const Scalar*, Scalar*, bool, Index, const SgdConstants<Scalar>&) noexcept;
    Scalar (*square_sum)(const Scalar*, const Scalar*, Index, Scalar, bool) noexcept;
    void (*scale_and_subtract)(Scalar*, const Scalar*, Index, Scalar, Scalar) noexcept;
    Scalar (*largest_magnitude)(const Scalar*, Index) noexcept;
};

/// The (Scalar, Storage) pairs of the row kernel that seqembed::kernels compiles: every pair
/// TokenEmbedding and the stages built on the row kernel accept.
template <typename Scalar, typename Storage>
inline constexpr bool is_row_kernel_type =
    std::is_same_v<Storage, Scalar> ? (std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>)
                                    : (std::is_same_v<Scalar, float> && (std::is_same_v<Storage, Eigen::bfloat16> ||
                                                                         std::is_same_v<Storage, Eigen::half>));

/// The (Table, Activation) pairs of the rotation that seqembed::kernels compiles: every table
/// type of RotaryEmbedding with every activation type of its apply().
template <typename Table, typename Activation>
inline constexpr bool is_rotary_kernel_type =
    (std::is_same_v<Table, float> || std::is_same_v<Table, double> || std::is_same_v<Table, Eigen::bfloat16> ||
     std::is_same_v<Table, Eigen::half>) &&
    (std::is_same_v<Activation, float> || std::is_same_v<Activation, double> ||
     std::is_same_v<Activation, Eigen::bfloat16>);

}  // namespace seqembed::detail

// seqembed::kernels' entry points, declared in every mode (src/kernels.cpp defines them); the
// namespace is inline, so that detail::row_kernel and the others name them, only under
// SEQEMBED_COMPILED_KERNELS=1.
#if SEQEMBED_DETAIL_LINKED_KERNELS
#define SEQEMBED_DETAIL_LINKED_INLINE inline
#else
#define SEQEMBED_DETAIL_LINKED_INLINE
#endif
namespace seqembed::detail {
SEQEMBED_DETAIL_LINKED_INLINE namespace linked_kernels {

/// The row kernel of the ISA in force, from seqembed::kernels (defined for is_row_kernel_type
/// pairs only).
/// @throws value_error as active_isa().
template <typename Scalar, typename Storage>
RowKernelFunctions<Scalar, Storage> compiled_row_kernel();

/// The rotation of the ISA in force, from seqembed::kernels (defined for is_rotary_kernel_type
/// pairs only).
/// @throws value_error as active_isa().
template <typename Table, typename Activation>
RotateFunction<Table, Activation> compiled_rotary_kernel();

/// Words first .. first + count - 1 of a dropout mask (bit i of word w: element 64 w + i kept),
/// drawn by the ISA in force.
/// @throws value_error as active_isa().
void draw_mask(const DropoutKey& key, std::uint64_t first, Index count, std::uint64_t* out);

/// The backward's element loops of the ISA in force, from seqembed::kernels (defined for float
/// and double).
/// @throws value_error as active_isa().
template <typename Scalar>
GradientKernelFunctions<Scalar> compiled_gradient_kernel();

/// The optimizers' row steps of the ISA in force, from seqembed::kernels (defined for float and
/// double).
/// @throws value_error as active_isa().
template <typename Scalar>
OptimizerKernelFunctions<Scalar> compiled_optimizer_kernel();

/// exact_sin_cos_block of the ISA in force.
/// @throws value_error as active_isa().
void exact_sin_cos(double position, const double* high, const double* middle, const double* low, double* sines,
                   double* cosines);

#if SEQEMBED_DETAIL_LINKED_KERNELS
/// The row kernel of the ISA in force.
/// @throws value_error as active_isa().
template <typename Scalar, typename Storage>
RowKernelFunctions<Scalar, Storage> row_kernel() {
    static_assert(is_row_kernel_type<Scalar, Storage>,
                  "seqembed::kernels compiles the row kernel for float and double rows of their own "
                  "type, and float rows of bfloat16 or half tables only");
    return compiled_row_kernel<Scalar, Storage>();
}

/// The backward's element loops of the ISA in force.
/// @throws value_error as active_isa().
template <typename Scalar>
GradientKernelFunctions<Scalar> gradient_kernel() {
    static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                  "seqembed::kernels compiles the backward's loops for float and double");
    return compiled_gradient_kernel<Scalar>();
}

/// The optimizers' row steps of the ISA in force.
/// @throws value_error as active_isa().
template <typename Scalar>
OptimizerKernelFunctions<Scalar> optimizer_kernel() {
    static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                  "seqembed::kernels compiles the optimizers' loops for float and double");
    return compiled_optimizer_kernel<Scalar>();
}

/// RotaryKernel<Table, Activation>::rotate of the ISA in force.
/// @throws value_error as active_isa().
template <typename Table, typename Activation>
RotateFunction<Table, Activation> rotary_kernel() {
    static_assert(is_rotary_kernel_type<Table, Activation>,
                  "seqembed::kernels compiles the rotation for float, double, bfloat16 and half tables "
                  "over float, double and bfloat16 activations only");
    return compiled_rotary_kernel<Table, Activation>();
}
#endif

}  // namespace linked_kernels
}  // namespace seqembed::detail
#undef SEQEMBED_DETAIL_LINKED_INLINE

#if !SEQEMBED_DETAIL_LINKED_KERNELS  // the kernels themselves: header-only, or src/kernels*.cpp

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "../simd/platform.hpp"

#include "../simd/backend_macros.hpp"  // ended at the bottom of this file

// Unrolls the loop after it completely: kernels-inl.hpp's and rotary-inl.hpp's fixed counts.
#if defined(__clang__)
#define SEQEMBED_DETAIL_UNROLL_ALL _Pragma("unroll")
#elif defined(__GNUC__)
#define SEQEMBED_DETAIL_UNROLL_ALL _Pragma("GCC unroll 16")
#else
#define SEQEMBED_DETAIL_UNROLL_ALL
#endif

// A pointer through which nothing else the function sees is reached (gradient-inl.hpp's loops
// then vectorise under GCC's -O2 cost model, which adds no run-time overlap checks).
#if defined(__GNUC__) || defined(__clang__) || defined(_MSC_VER)
#define SEQEMBED_DETAIL_RESTRICT __restrict
#else
#define SEQEMBED_DETAIL_RESTRICT
#endif

// Inlined whatever the compiler's estimate: the helpers whose values must stay in registers
// across a loop's iterations (a rotary block's vectors, the dropout draw's words).
#if defined(__GNUC__) || defined(__clang__)
#define SEQEMBED_DETAIL_BLOCK __attribute__((always_inline)) inline
#define SEQEMBED_DETAIL_INLINED_LAMBDA __attribute__((always_inline))
#define SEQEMBED_DETAIL_NOINLINE __attribute__((noinline))
#else
#define SEQEMBED_DETAIL_BLOCK inline
#define SEQEMBED_DETAIL_INLINED_LAMBDA
#define SEQEMBED_DETAIL_NOINLINE
#endif

// The intrinsics are declared outside the target regions below, so that none of them takes a
// region's target.
#if SEQEMBED_DETAIL_X86_KERNELS
#include <immintrin.h>
#endif
#if SEQEMBED_DETAIL_NEON_KERNELS
#include <arm_neon.h>
#endif

// A region whose functions are compiled for the given x86 targets whatever the build's flags
// (clang: an attribute on each function; GCC: the region's options). GCC 12's AVX-512
// intrinsics start from an undefined vector, which -Wmaybe-uninitialized reports in their
// callers (GCC bug 105593).
#define SEQEMBED_DETAIL_PRAGMA(text) _Pragma(#text)
#if defined(__clang__)
#define SEQEMBED_DETAIL_TARGET_BEGIN(targets) \
    SEQEMBED_DETAIL_PRAGMA(clang attribute push(__attribute__((target(targets))), apply_to = function))
#define SEQEMBED_DETAIL_TARGET_END _Pragma("clang attribute pop")
#else
#define SEQEMBED_DETAIL_TARGET_BEGIN(targets)                              \
    _Pragma("GCC push_options") SEQEMBED_DETAIL_PRAGMA(GCC target(targets)) \
        _Pragma("GCC diagnostic push")                                      \
            _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")          \
                _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define SEQEMBED_DETAIL_TARGET_END _Pragma("GCC diagnostic pop") _Pragma("GCC pop_options")
#endif

// The scalar backend: the build's own target.
#include "../simd/scalar.hpp"
namespace seqembed::detail::scalar_isa {
#include "kernels-inl.hpp"
}  // namespace seqembed::detail::scalar_isa

#if SEQEMBED_DETAIL_X86_KERNELS
SEQEMBED_DETAIL_TARGET_BEGIN("avx2,fma,f16c,aes,vaes")
#include "../simd/avx2.hpp"
namespace seqembed::detail::avx2_isa {
#include "kernels-inl.hpp"
}  // namespace seqembed::detail::avx2_isa
SEQEMBED_DETAIL_TARGET_END
#endif  // SEQEMBED_DETAIL_X86_KERNELS

#if SEQEMBED_DETAIL_AVX512_KERNELS
SEQEMBED_DETAIL_TARGET_BEGIN("avx512f,avx512bw,vaes,aes")
#include "../simd/avx512.hpp"
namespace seqembed::detail::avx512_isa {
#include "kernels-inl.hpp"
}  // namespace seqembed::detail::avx512_isa
SEQEMBED_DETAIL_TARGET_END

// AVX-512 BF16: AVX-512's kernels, but for the rotation, which rounds bfloat16 results with the
// CPU's conversion where it gives the same bits (detail/simd/avx512_bf16.hpp).
SEQEMBED_DETAIL_TARGET_BEGIN("avx512f,avx512bw,avx512bf16,vaes,aes")
#include "../simd/avx512_bf16.hpp"
namespace seqembed::detail::avx512_bf16_isa {
#include "rotary-inl.hpp"
/// AVX-512's kernels, with this ISA's rotation of bfloat16 activations.
struct Backend : avx512_isa::Backend {
    template <typename Table, typename Activation>
    static void rotate(const Table* cos, const Table* sin, Index pairs, bool interleaved,
                       const TokenHeads<Activation>& token) noexcept {
        if constexpr (std::is_same_v<Activation, Eigen::bfloat16>) {
            RotaryKernel<Table, Activation>::rotate(cos, sin, pairs, interleaved, token);
        } else {
            avx512_isa::Backend::rotate<Table, Activation>(cos, sin, pairs, interleaved, token);
        }
    }
};
}  // namespace seqembed::detail::avx512_bf16_isa
SEQEMBED_DETAIL_TARGET_END
#endif  // SEQEMBED_DETAIL_AVX512_KERNELS

#if SEQEMBED_DETAIL_NEON_KERNELS
#include "../simd/neon.hpp"
namespace seqembed::detail::neon_isa {
#include "kernels-inl.hpp"
}  // namespace seqembed::detail::neon_isa
#endif

namespace seqembed::detail {

/// The Backend of an ISA whose kernels this build compiles (specialised for each above).
template <Isa isa>
struct IsaBackend;
template <>
struct IsaBackend<Isa::scalar> {
    using type = scalar_isa::Backend;
};
#if SEQEMBED_DETAIL_X86_KERNELS
template <>
struct IsaBackend<Isa::avx2> {
    using type = avx2_isa::Backend;
};
#endif
#if SEQEMBED_DETAIL_AVX512_KERNELS
template <>
struct IsaBackend<Isa::avx512> {
    using type = avx512_isa::Backend;
};
template <>
struct IsaBackend<Isa::avx512_bf16> {
    using type = avx512_bf16_isa::Backend;
};
#endif
#if SEQEMBED_DETAIL_NEON_KERNELS
template <>
struct IsaBackend<Isa::neon> {
    using type = neon_isa::Backend;
};
#endif

/// visit(the Backend of isa), trying isa_table's compiled ISAs from row `row` on; scalar's when
/// none is isa.
template <std::size_t row, typename Visit>
decltype(auto) visit_backend(Isa isa, Visit& visit) {
    if constexpr (row == isa_count) {
        return visit(scalar_isa::Backend{});
    } else {
        constexpr IsaTraits traits = isa_table[row];
        if constexpr (traits.compiled() && traits.isa != Isa::scalar) {
            if (isa == traits.isa) return visit(typename IsaBackend<traits.isa>::type{});
        }
        return visit_backend<row + 1>(isa, visit);
    }
}

/// The one dispatch point: calls visit with the Backend of the ISA in force (active_isa()).
/// @throws value_error as active_isa().
template <typename Visit>
decltype(auto) with_active_isa(Visit&& visit) {
    return visit_backend<0>(active_isa(), visit);
}

// The entry points, inline: in a header-only build every translation unit compiles the ones it
// calls; src/kernels*.cpp compile them for seqembed::kernels' linked_kernels functions.
inline namespace inline_kernels {

/// The row kernel of the ISA in force.
/// @throws value_error as active_isa().
template <typename Scalar, typename Storage>
RowKernelFunctions<Scalar, Storage> row_kernel() {
    return with_active_isa([](auto backend) {
        using Backend = decltype(backend);
        return RowKernelFunctions<Scalar, Storage>{&Backend::template write_rows<Scalar, Storage>,
                                                   &Backend::template finish_rows<Scalar, Storage>};
    });
}

/// Words first .. first + count - 1 of a dropout mask (bit i of word w: element 64 w + i kept),
/// drawn by the ISA in force.
/// @throws value_error as active_isa().
inline void draw_mask(const DropoutKey& key, std::uint64_t first, Index count, std::uint64_t* out) {
    with_active_isa([&](auto backend) { decltype(backend)::draw_mask(key, first, count, out); });
}

/// RotaryKernel<Table, Activation>::rotate of the ISA in force (rotary-inl.hpp).
/// @throws value_error as active_isa().
template <typename Table, typename Activation>
RotateFunction<Table, Activation> rotary_kernel() {
    return with_active_isa([](auto backend) -> RotateFunction<Table, Activation> {
        return &decltype(backend)::template rotate<Table, Activation>;
    });
}

/// The backward's element loops of the ISA in force (gradient-inl.hpp).
/// @throws value_error as active_isa().
template <typename Scalar>
GradientKernelFunctions<Scalar> gradient_kernel() {
    return with_active_isa([](auto backend) {
        using Backend = decltype(backend);
        return GradientKernelFunctions<Scalar>{&Backend::template apply_read<Scalar>,
                                               &Backend::template norm_row<Scalar>, &Backend::fence};
    });
}

/// The optimizers' row steps of the ISA in force (optimizer-inl.hpp).
/// @throws value_error as active_isa().
template <typename Scalar>
OptimizerKernelFunctions<Scalar> optimizer_kernel() {
    return with_active_isa([](auto backend) {
        using Backend = decltype(backend);
        return OptimizerKernelFunctions<Scalar>{
            &Backend::template adam_row<Scalar>, &Backend::template dense_adam_row<Scalar>,
            &Backend::template sgd_row<Scalar>,
            &Backend::template square_sum<Scalar>, &Backend::template scale_and_subtract<Scalar>,
            &Backend::template largest_magnitude<Scalar>};
    });
}

/// exact_sin_cos_block of the ISA in force.
/// @throws value_error as active_isa().
inline void exact_sin_cos(double position, const double* high, const double* middle, const double* low,
                          double* sines, double* cosines) {
    with_active_isa([&](auto backend) { decltype(backend)::sin_cos(position, high, middle, low, sines, cosines); });
}

}  // namespace inline_kernels

}  // namespace seqembed::detail

#undef SEQEMBED_DETAIL_UNROLL_ALL
#undef SEQEMBED_DETAIL_RESTRICT
#undef SEQEMBED_DETAIL_BLOCK
#undef SEQEMBED_DETAIL_INLINED_LAMBDA
#undef SEQEMBED_DETAIL_NOINLINE
#undef SEQEMBED_DETAIL_TARGET_BEGIN
#undef SEQEMBED_DETAIL_TARGET_END
#undef SEQEMBED_DETAIL_PRAGMA
#include "../simd/backend_macros_end.hpp"

#endif  // !SEQEMBED_DETAIL_LINKED_KERNELS
#undef SEQEMBED_DETAIL_LINKED_KERNELS
