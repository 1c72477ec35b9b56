/// @file detail/scratch_shelf.hpp
/// @brief Scratch memory a const method keeps from one call to the next: fresh memory costs its
///        page faults on every call (glibc maps allocations of 32 MiB and more afresh each time,
///        and returns freed heap memory to the system), more than the work done in it.
#pragma once

#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "../types.hpp"
#include "engine/gradient_rows.hpp"

namespace seqembed::detail {

/// One shelf of scratch memory (a Scratch, default-constructible and movable), shared by the
/// calls of an object and its copies: a call takes what the shelf holds (a new Scratch while
/// another call holds it) and puts it back when it is done, so that concurrent calls never share
/// memory.
template <typename Scratch>
class ScratchShelf {
public:
    /// What the last call put back, or a new Scratch.
    /// @throws std::system_error if the lock cannot be taken.
    Scratch take() {
        const std::lock_guard<std::mutex> lock(m_mutex);
        m_full = false;
        return std::exchange(m_scratch, Scratch{});
    }

    /// Puts `scratch` on the shelf unless another call's is there already.
    /// @throws std::system_error if the lock cannot be taken.
    void put_back(Scratch scratch) {
        const std::lock_guard<std::mutex> lock(m_mutex);
        if (m_full) return;
        m_scratch = std::move(scratch);
        m_full = true;
    }

private:
    std::mutex m_mutex;
    Scratch m_scratch;
    bool m_full = false;
};

/// What InputPipeline's backward keeps for its next call: each part reused when large enough.
template <typename Scalar>
struct BackwardScratch {
    /// The dropout mask's kept bits.
    std::vector<std::uint64_t> kept;
    /// With LayerNorm: the gradient through it, and its input recomputed.
    std::vector<RowMatrix<Scalar>> norm;
    /// LayerNorm's partial sums of gamma's and beta's gradients.
    std::vector<WideScalar<Scalar>> norm_partials;
    /// The sums of the table rows read several times, one matrix per table.
    std::vector<RowMatrix<WideScalar<Scalar>>> sums;
};

}  // namespace seqembed::detail
