/// @file types.hpp
/// @brief Matrix and id types shared by every component.
#pragma once

#include <Eigen/Core>
#include <cstdint>

#if !EIGEN_VERSION_AT_LEAST(3, 4, 0)
#error "seqembed needs Eigen 3.4 or newer"
#endif

namespace seqembed {

/// @brief Eigen's signed size type, used for every row and column count.
using Index = Eigen::Index;

/// @brief A token id, as torch.long.
using TokenId = std::int64_t;

/// @brief A dense row-major matrix: one token per contiguous row, as PyTorch and weight files
///        store them.
/// @tparam Scalar the element type.
template <typename Scalar>
using RowMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// @brief A batch x sequence matrix of token ids, row-major (row b is sequence b).
using IdMatrix = Eigen::Matrix<TokenId, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// @brief A read-only view of token ids accepted by every forward. A row-major int64 matrix
///        binds without a copy; other layouts are copied into a temporary first.
using IdsRef = Eigen::Ref<const IdMatrix>;

/// @brief A row-major matrix of 0/1 bytes, as a kept dropout mask.
using MaskMatrix = Eigen::Matrix<std::uint8_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace seqembed
