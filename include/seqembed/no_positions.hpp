/// @file no_positions.hpp
/// @brief NoPositions: the positional stage of models that add no positions to the embeddings.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cstdint>
#include <type_traits>

#include "detail/checks.hpp"
#include "detail/stage_access.hpp"
#include "types.hpp"

namespace seqembed {

/// @brief A positional stage that adds nothing: T5, Llama and every model whose positions act
///        inside attention (RoPE, ALiBi) use the token lookup alone.
///
/// An InputPipeline over NoPositions writes embedding x scale (then dropout in training) and
/// reads no position table; -0 stays -0, as PyTorch's lookup alone gives it.
/// @tparam Scalar float or double.
/// @code
/// seqembed::InputPipeline<float, seqembed::NoPositions<float>> llama_input(
///     seqembed::TokenEmbedding<float>(128256, 4096, {seqembed::EmbeddingScale::none()}),
///     seqembed::NoPositions<float>(4096));
/// @endcode
template <typename Scalar = float>
class NoPositions {
    static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                  "NoPositions<Scalar>: Scalar must be float or double");

public:
    /// @brief The stage for rows of d_model values.
    /// @param d_model width of a row, > 0.
    /// @throws value_error for d_model <= 0.
    explicit NoPositions(Index d_model) : m_d_model(d_model) { detail::require_positive("d_model", d_model); }

    /// @brief Width of a row.
    /// @return the d_model given to the constructor.
    Index d_model() const noexcept { return m_d_model; }

private:
    friend struct detail::StageAccess;

    /// Every position is accepted.
    void require_positions(std::int64_t, Index) const noexcept {}
    /// No row: the pipeline adds nothing.
    const Scalar* position_row(std::int64_t, Scalar*) const noexcept { return nullptr; }

    Index m_d_model;
};

}  // namespace seqembed
