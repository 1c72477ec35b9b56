/// @file optim/adamw.hpp
/// @brief AdamW over every row of a table, as torch.optim.AdamW: Adam with the weight decay
///        applied to the weights instead of the gradient.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include "adam.hpp"

namespace seqembed::optim {

/// @brief AdamOptions with AdamW's default weight decay, 0.01 (torch.optim.AdamW's).
/// @return options whose weight_decay is 0.01.
inline AdamOptions adamw_defaults() { return BasicAdam<float, true>::default_options(); }

/// @brief AdamW over every row of a table, as torch.optim.AdamW: each step first multiplies the
///        weights by 1 - lr x weight_decay (default 0.01), then takes Adam's step without an L2
///        term (BasicAdam).
/// @tparam Scalar float or double.
template <typename Scalar = float>
using AdamW = BasicAdam<Scalar, true>;

}  // namespace seqembed::optim
