/// @file trainable_table.hpp
/// @brief A stage's table opened for an optimizer step.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <optional>

#include "types.hpp"

namespace seqembed {

/// @brief A table's values opened for writing (an optimizer step), from a stage's
///        trainable_table() or InputPipeline::trainable().
///
/// Tables are immutable and shared between copies of a stage or pipeline, and loaders return
/// views of read-only file mappings. Opening a table makes it the stage's own first: a view, a
/// mapping or a table another holder shares is copied (never written through), and the other
/// holders keep the old values. The map stays valid until the stage is changed, moved or
/// destroyed; no forward may run on the stage while it is written.
/// @tparam Value the table's type (float or double).
template <typename Value>
struct TrainableTable {
    /// @brief The table, rows x d_model, writable (a bfloat16 or half token table's float master
    ///        weights).
    Eigen::Map<RowMatrix<Value>> weights;
    /// @brief Whether opening it copied the values (a view, a mapping or a shared table).
    bool copied;
};

/// @brief An InputPipeline's trainable tables, opened for an optimizer step by
///        InputPipeline::trainable(). A stage the pipeline lacks, or a constant one (sinusoidal
///        positions), is absent; so is a token-type table that views the token table (GPT-2's),
///        which trains as part of it.
/// @tparam Scalar float or double.
template <typename Scalar>
struct PipelineTables {
    /// @brief The token table.
    std::optional<TrainableTable<Scalar>> token;
    /// @brief A learned position table.
    std::optional<TrainableTable<Scalar>> positions;
    /// @brief The token-type table.
    std::optional<TrainableTable<Scalar>> token_types;
    /// @brief LayerNorm's weight, 1 x d_model.
    std::optional<Eigen::Map<RowMatrix<Scalar>>> gamma;
    /// @brief LayerNorm's bias, 1 x d_model.
    std::optional<Eigen::Map<RowMatrix<Scalar>>> beta;
};

}  // namespace seqembed
