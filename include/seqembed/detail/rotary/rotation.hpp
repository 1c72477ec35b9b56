/// @file detail/rotary/rotation.hpp
/// @brief The one loop that rotates a token's heads by its table row: scalar C++, each product
///        rounded before the sum it feeds, as PyTorch's separate mul and add kernels round them.
#pragma once

#include <type_traits>

#include <Eigen/Core>

#include "../../types.hpp"
#include "../simd/platform.hpp"

namespace seqembed::detail::rotary {

/// The arithmetic type of a rotation over activations of type Activation: double for double,
/// float for float and bfloat16 (widened, computed in float, rounded once at the end).
template <typename Activation>
using ComputeType = std::conditional_t<std::is_same_v<Activation, double>, double, float>;

/// A stored value (float, double, bfloat16, half) in the compute type: exact for every widening,
/// round to nearest even for double to float (as torch's `cos.to(x.dtype)`).
template <typename Compute, typename Value>
inline Compute to_compute(Value value) noexcept {
    if constexpr (std::is_same_v<Value, Eigen::bfloat16> || std::is_same_v<Value, Eigen::half>)
        return static_cast<Compute>(static_cast<float>(value));
    else
        return static_cast<Compute>(value);
}

/// Rotates the first 2 * pairs dimensions of each of head_count heads of one token, in place.
///
/// heads points at the token's head_count * head_dim values (head h at heads + h * head_dim);
/// cos and sin at the pairs values of the token's table row. Pair i is (x[i], x[i + pairs])
/// (halves: Hugging Face rotate_half, GPT-NeoX) or (x[2i], x[2i + 1]) (interleaved: GPT-J,
/// Meta's Llama); it becomes
///   x1' = (x1 * c) - (x2 * s),   x2' = (x2 * c) + (x1 * s)
/// with every product rounded to the compute type before the sum and the sum rounded once to
/// Activation. Dimensions 2 * pairs .. head_dim - 1 are not touched.
/// @tparam Table the table's stored type (float, double, Eigen::bfloat16, Eigen::half).
/// @tparam Activation float, double or Eigen::bfloat16.
template <typename Table, typename Activation>
void rotate_rows(const Table* cos, const Table* sin, Index pairs, bool interleaved, Activation* heads,
                 Index head_count, Index head_dim) noexcept {
    using Compute = ComputeType<Activation>;
    const Index stride = interleaved ? 2 : 1;
    const Index partner = interleaved ? 1 : pairs;
    for (Index h = 0; h < head_count; ++h) {
        Activation* head = heads + h * head_dim;
        for (Index i = 0; i < pairs; ++i) {
            Activation* first = head + i * stride;
            Activation* second = first + partner;
            const Compute c = to_compute<Compute>(cos[i]);
            const Compute s = to_compute<Compute>(sin[i]);
            const Compute x1 = to_compute<Compute>(*first);
            const Compute x2 = to_compute<Compute>(*second);
            Compute x1c = x1 * c;
            Compute x2s = x2 * s;
            Compute x2c = x2 * c;
            Compute x1s = x1 * s;
            keep_rounded(x1c);
            keep_rounded(x2s);
            keep_rounded(x2c);
            keep_rounded(x1s);
            *first = static_cast<Activation>(x1c - x2s);
            *second = static_cast<Activation>(x2c + x1s);
        }
    }
}

}  // namespace seqembed::detail::rotary
