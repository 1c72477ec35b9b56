/// @file detail/scratch_shelf.hpp
/// @brief Scratch matrices a const method keeps from one call to the next: fresh memory of tens
///        of megabytes costs its page faults on every call (glibc maps allocations of 32 MiB and
///        more afresh each time), more than the work done in it.
#pragma once

#include <mutex>
#include <utility>
#include <vector>

#include "../types.hpp"

namespace seqembed::detail {

/// One shelf of scratch matrices, shared by the calls of an object and its copies: a call takes
/// what the shelf holds (nothing while another call holds it) and puts its matrices back when it
/// is done, so that concurrent calls never share a matrix.
template <typename Scalar>
class ScratchShelf {
public:
    /// The matrices the last call put back, or none.
    /// @throws std::system_error if the lock cannot be taken.
    std::vector<RowMatrix<Scalar>> take() {
        const std::lock_guard<std::mutex> lock(m_mutex);
        return std::exchange(m_matrices, {});
    }

    /// Puts `matrices` on the shelf unless another call's are there already.
    /// @throws std::system_error if the lock cannot be taken.
    void put_back(std::vector<RowMatrix<Scalar>> matrices) {
        const std::lock_guard<std::mutex> lock(m_mutex);
        if (m_matrices.empty()) m_matrices = std::move(matrices);
    }

private:
    std::mutex m_mutex;
    std::vector<RowMatrix<Scalar>> m_matrices;
};

}  // namespace seqembed::detail
