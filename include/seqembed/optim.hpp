/// @file optim.hpp
/// @brief The optimizers: dense steps over every row for small tables (Sgd, Adam, AdamW, as
///        torch.optim) and lazy steps over the touched rows for large ones (LazySgd,
///        RowwiseAdagrad as FBGEMM, SparseAdam as torch.optim). Needs Eigen only.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include "optim/adam.hpp"
#include "optim/adamw.hpp"
#include "optim/lazy_sgd.hpp"
#include "optim/rowwise_adagrad.hpp"
#include "optim/sgd.hpp"
#include "optim/sparse_adam.hpp"
