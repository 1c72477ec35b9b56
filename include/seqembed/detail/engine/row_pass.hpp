/// @file detail/engine/row_pass.hpp
/// @brief One pass of the row kernel over rows a component describes: the rows are gathered in
///        small batches (with the table rows to request ahead of them) and handed to the kernel
///        of the ISA in force. TokenEmbedding, Dropout and InputPipeline all write through it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../../types.hpp"
#include "kernels.hpp"
#include "rows.hpp"

namespace seqembed::detail {

/// Outputs this large are streamed when the caller leaves the choice to seqembed: more than a
/// core's L2, so whatever reads them next would not find them there anyway.
inline constexpr std::size_t streaming_threshold_bytes = std::size_t{4} << 20;

/// Whether an output of `bytes` is written with streaming stores when the caller leaves the
/// choice to seqembed.
inline bool streams_by_default(std::size_t bytes) noexcept { return bytes >= streaming_threshold_bytes; }

/// How far ahead table rows are requested unless the caller says otherwise (the distances
/// measured are in docs/performance.md, "What limits the pipeline").
inline constexpr std::size_t default_prefetch_bytes = std::size_t{8} << 10;

/// How many rows on the table row to request while a row is written: `bytes` ahead (at least one
/// row, at most 64).
inline Index rows_ahead(std::size_t bytes, std::size_t row_bytes) noexcept {
    if (bytes == 0) return 0;
    const std::size_t rows = (bytes + std::max<std::size_t>(row_bytes, 1) - 1) / std::max<std::size_t>(row_bytes, 1);
    return static_cast<Index>(std::clamp<std::size_t>(rows, 1, 64));
}

/// The table row to request while each token's row is written: that of the token a fixed
/// number of tokens on, in row-major order over sequences [first_row, end_row) of the ids.
template <typename Storage, typename TableRow>
class RowsAhead {
public:
    /// `ahead` tokens on (0: none); table_row(id) gives the row of an id in [0, vocab_size).
    RowsAhead(const TokenIds& ids, Index first_row, Index end_row, Index ahead, Index vocab_size,
              TableRow table_row) noexcept
        : m_ids(ids), m_end_row(end_row), m_ahead(ahead), m_vocab_size(vocab_size), m_table_row(table_row),
          m_b(first_row + (ids.cols() > 0 ? ahead / ids.cols() : 0)), m_t(ids.cols() > 0 ? ahead % ids.cols() : 0) {}

    /// The row for the current token (null when there is none to request: no look-ahead, past
    /// the last sequence, or an id outside the table), then on to the next token.
    const Storage* next() noexcept {
        if (m_ahead == 0 || m_b >= m_end_row) return nullptr;
        const TokenId id = m_ids(m_b, m_t);
        if (++m_t == m_ids.cols()) {
            m_t = 0;
            ++m_b;
        }
        return id >= 0 && id < m_vocab_size ? m_table_row(id) : nullptr;
    }

private:
    const TokenIds& m_ids;
    Index m_end_row;
    Index m_ahead;
    Index m_vocab_size;
    TableRow m_table_row;
    Index m_b;
    Index m_t;
};

/// A pass of the row kernel: add() rows in output order, then finish(). One object per thread.
template <typename Scalar, typename Storage>
class RowPass {
public:
    /// Rows handed to the kernel at once: a row added is written by the time this many more are
    /// (what a row's sources point to must live until then).
    static constexpr Index batch = 32;

    /// A pass with the kernel of the ISA in force.
    /// @throws value_error as active_isa().
    explicit RowPass(const RowJob<Scalar>& job) : m_kernel(row_kernel<Scalar, Storage>()), m_job(job) {}
    RowPass(const RowPass&) = delete;
    RowPass& operator=(const RowPass&) = delete;
    ~RowPass() = default;

    /// Adds a row; `ahead` (or null) is the table row whose lines are requested while it is
    /// written.
    void add(const RowSources<Scalar, Storage>& row, const Storage* ahead) noexcept {
        m_rows[m_count] = row;
        m_ahead[m_count] = ahead;
        if (++m_count == batch) write();
    }

    /// Writes the rows not yet written and what the kernel carries. Call once, at the end.
    void finish() noexcept {
        write();
        m_kernel.finish(m_job, m_carry);
    }

private:
    void write() noexcept {
        if (m_count == 0) return;
        m_kernel.write(m_job, m_carry, m_rows, m_count, m_ahead);
        m_count = 0;
    }

    RowKernelFunctions<Scalar, Storage> m_kernel;
    RowJob<Scalar> m_job;
    RowCarry<Scalar> m_carry;
    RowSources<Scalar, Storage> m_rows[batch];
    const Storage* m_ahead[batch];
    Index m_count = 0;
};

}  // namespace seqembed::detail
