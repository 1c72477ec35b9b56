/// @file detail/row_table.hpp
/// @brief A rows x cols row-major table that owns its values or views memory kept alive by an
///        owner (a memory-mapped file) or by the caller.
#pragma once

#include <memory>
#include <new>
#include <utility>

#include "../assert.hpp"
#include "../error.hpp"
#include "../types.hpp"
#include "checks.hpp"
#include "large_memory.hpp"

namespace seqembed::detail {

/// The storage behind the three tables. The values are immutable once built, so copies share
/// them: copying a TokenEmbedding (or a pipeline) never copies its table, and two pipelines can
/// share one token table (tied embeddings). The memory is held by a shared owner: memory this
/// table allocated (64-byte aligned, huge pages when large), a file mapping, or nothing for a
/// view of memory the caller keeps alive.
template <typename Value>
class RowTable {
public:
    /// An owned table of rows x cols, uninitialised: fill it through writable() before sharing it.
    RowTable(const char* what, Index rows, Index cols) : m_rows(rows), m_cols(cols) {
        require_nonempty(what, rows, cols);
        std::unique_ptr<void, TableMemoryDeleter> memory =
            allocate_table_memory(sizeof(Value) * static_cast<std::size_t>(rows * cols));
        if (!memory) fail<value_error>(what, " of ", rows, " x ", cols, " does not fit in memory");
        m_data = static_cast<const Value*>(memory.get());
        m_owner = std::shared_ptr<const void>(std::move(memory));
        m_owns_data = true;
    }

    /// An owned copy of weights.
    RowTable(const char* what, const Eigen::Ref<const RowMatrix<Value>>& weights)
        : RowTable(what, weights.rows(), weights.cols()) {
        writable() = weights;
    }

    /// A view of rows x cols values at data. `owner` (a file mapping, say) is kept alive by this
    /// table and its copies; without one the caller keeps the values alive and unchanged.
    RowTable(const char* what, const Value* data, Index rows, Index cols,
             std::shared_ptr<const void> owner = nullptr)
        : m_owner(std::move(owner)), m_data(data), m_rows(rows), m_cols(cols) {
        if (data == nullptr) fail<value_error>(what, " was given a null pointer");
        require_nonempty(what, rows, cols);
    }

    /// A copy shares the values, except a tied table's (tie_to), which it copies: the tie's
    /// later writes do not reach a copy.
    RowTable(const RowTable& other)
        : m_owner(other.m_owner),
          m_data(other.m_data),
          m_rows(other.m_rows),
          m_cols(other.m_cols),
          m_owns_data(other.m_owns_data) {
        if (other.tied()) *this = RowTable("copy of a tied table", other.matrix());
    }
    RowTable& operator=(const RowTable& other) {
        if (this == &other) return *this;
        RowTable copy(other);
        *this = std::move(copy);
        return *this;
    }
    /// The moved-from table is empty (0 x 0, no data), so it rejects every row.
    RowTable(RowTable&& other) noexcept
        : m_owner(std::move(other.m_owner)),
          m_data(std::exchange(other.m_data, nullptr)),
          m_rows(std::exchange(other.m_rows, 0)),
          m_cols(std::exchange(other.m_cols, 0)),
          m_owns_data(std::exchange(other.m_owns_data, false)),
          m_tie(std::move(other.m_tie)) {}
    RowTable& operator=(RowTable&& other) noexcept {
        RowTable taken(std::move(other));
        std::swap(m_owner, taken.m_owner);
        std::swap(m_data, taken.m_data);
        std::swap(m_rows, taken.m_rows);
        std::swap(m_cols, taken.m_cols);
        std::swap(m_owns_data, taken.m_owns_data);
        std::swap(m_tie, taken.m_tie);
        return *this;
    }
    ~RowTable() = default;

    Index rows() const noexcept { return m_rows; }
    Index cols() const noexcept { return m_cols; }
    /// Whether the values were allocated by a table (false for a view, owner or not).
    bool owns_data() const noexcept { return m_owns_data; }
    const Value* row(Index r) const noexcept { return m_data + r * m_cols; }
    const Value* data() const noexcept { return m_data; }

    /// The whole table as a read-only view.
    Eigen::Map<const RowMatrix<Value>> matrix() const noexcept { return {m_data, m_rows, m_cols}; }

    /// Makes the values this object's alone: a copy when they are a view (of the caller's
    /// memory or a file's mapping) or shared with another holder, who keeps the old values.
    /// Returns whether it copied; on an error (no memory for the copy) nothing changes.
    /// A tied table is never copied: its values are the tie's, which only its members hold
    /// (copies of them copy the values).
    bool make_own(const char* what) {
        if (m_owns_data && (tied() || m_owner.use_count() == 1)) return false;
        RowTable copy(what, matrix());
        *this = std::move(copy);
        return true;
    }

    /// Writable access to a table this object allocated, while it is being built (before any
    /// copy shares it) or after make_own; never called on a view.
    Eigen::Map<RowMatrix<Value>> writable() {
        SEQEMBED_ASSERT(m_owns_data && (tied() || m_owner.use_count() == 1));
        return {const_cast<Value*>(m_data), m_rows, m_cols};
    }

    /// Shares `other`'s values and writes through both (two models' one table), joining its tie
    /// (leaving this table's own tie): `other` must own its values (after make_own), and no
    /// member copies them again until it leaves. Copies of a member copy the values.
    void tie_to(RowTable& other) {
        SEQEMBED_ASSERT(other.m_owns_data);
        if (this == &other) return;
        if (!other.m_tie) other.m_tie = std::make_shared<const char>('\0');
        std::shared_ptr<const void> tie = other.m_tie;
        RowTable shared(other.m_owner, other.m_data, other.m_rows, other.m_cols);
        *this = std::move(shared);
        m_tie = std::move(tie);
    }
    /// Leaves the tie with a copy of the values; on an error (no memory) nothing changes.
    void untie(const char* what) {
        if (!tied()) {
            m_tie.reset();
            return;
        }
        RowTable copy(what, matrix());
        *this = std::move(copy);
    }
    /// Whether the table shares its values with another member of a tie (tie_to).
    bool tied() const noexcept { return m_tie != nullptr && m_tie.use_count() > 1; }

private:
    static void require_nonempty(const char* what, Index rows, Index cols) {
        if (rows <= 0 || cols <= 0)
            fail<value_error>(what, " must have at least one row and one column, got ", rows,
                              " x ", cols);
        require_addressable<Value>(what, rows, cols);
    }

    std::shared_ptr<const void> m_owner;  // keeps m_data alive; null for a caller's view
    const Value* m_data = nullptr;
    Index m_rows = 0;
    Index m_cols = 0;
    bool m_owns_data = false;
    // The tie this table belongs to (tie_to): one token its members hold, null when untied.
    std::shared_ptr<const void> m_tie;

    /// Another owned table's values, shared (tie_to).
    RowTable(std::shared_ptr<const void> owner, const Value* data, Index rows, Index cols)
        : m_owner(std::move(owner)), m_data(data), m_rows(rows), m_cols(cols), m_owns_data(true) {}
};

}  // namespace seqembed::detail
