/// @file detail/row_table.hpp
/// @brief A rows x cols row-major table that either owns its values or views the caller's.
#pragma once

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

#include "../assert.hpp"
#include "../error.hpp"
#include "../types.hpp"
#include "checks.hpp"
#include "large_memory.hpp"

namespace seqembed::detail {

/// The storage behind TokenEmbedding and LearnedPositionalEmbedding: values it owns (in
/// large_memory.hpp, huge pages for large tables), or a view of memory the caller keeps alive (a
/// memory-mapped checkpoint). Copies of an owning table copy the values; copies of a view share
/// the caller's memory.
template <typename Scalar>
class RowTable {
public:
    /// An owned table of rows x cols, uninitialised.
    RowTable(const char* what, Index rows, Index cols) : m_rows(rows), m_cols(cols) {
        require_nonempty(what, rows, cols);
        try {
            m_owned = allocate_table_memory(sizeof(Scalar) * static_cast<std::size_t>(rows * cols));
        } catch (const std::bad_alloc&) {
            fail<value_error>(what, " of ", rows, " x ", cols, " does not fit in memory");
        }
        m_data = static_cast<const Scalar*>(m_owned.get());
    }

    /// An owned copy of weights.
    RowTable(const char* what, const Eigen::Ref<const RowMatrix<Scalar>>& weights)
        : RowTable(what, weights.rows(), weights.cols()) {
        owned() = weights;
    }

    /// A view of rows x cols values at data, which the caller keeps alive and unchanged.
    RowTable(const char* what, const Scalar* data, Index rows, Index cols)
        : m_data(data), m_rows(rows), m_cols(cols) {
        if (data == nullptr) fail<value_error>(what, " was given a null pointer");
        require_nonempty(what, rows, cols);
    }

    RowTable(const RowTable& other) : m_data(other.m_data), m_rows(other.m_rows), m_cols(other.m_cols) {
        if (other.owns_data()) {
            m_owned = allocate_table_memory(bytes());
            std::memcpy(m_owned.get(), other.m_owned.get(), bytes());
            m_data = static_cast<const Scalar*>(m_owned.get());
        }
    }
    /// The moved-from table is empty (0 x 0, no data), so it rejects every row.
    RowTable(RowTable&& other) noexcept
        : m_owned(std::move(other.m_owned)),
          m_data(std::exchange(other.m_data, nullptr)),
          m_rows(std::exchange(other.m_rows, 0)),
          m_cols(std::exchange(other.m_cols, 0)) {}
    RowTable& operator=(RowTable other) noexcept {
        std::swap(m_owned, other.m_owned);
        std::swap(m_data, other.m_data);
        std::swap(m_rows, other.m_rows);
        std::swap(m_cols, other.m_cols);
        return *this;
    }
    ~RowTable() = default;

    Index rows() const noexcept { return m_rows; }
    Index cols() const noexcept { return m_cols; }
    bool owns_data() const noexcept { return m_owned != nullptr; }
    const Scalar* row(Index r) const noexcept { return m_data + r * m_cols; }

    /// The whole table as a read-only view.
    Eigen::Map<const RowMatrix<Scalar>> matrix() const noexcept {
        return {m_data, m_rows, m_cols};
    }

    /// Writable access to an owned table (initialisation); never called on a view.
    Eigen::Map<RowMatrix<Scalar>> owned() {
        SEQEMBED_ASSERT(owns_data());
        return {static_cast<Scalar*>(m_owned.get()), m_rows, m_cols};
    }

private:
    static void require_nonempty(const char* what, Index rows, Index cols) {
        if (rows <= 0 || cols <= 0)
            fail<value_error>(what, " must have at least one row and one column, got ", rows,
                              " x ", cols);
        require_addressable<Scalar>(what, rows, cols);
    }

    std::size_t bytes() const noexcept {
        return sizeof(Scalar) * static_cast<std::size_t>(m_rows * m_cols);
    }

    std::unique_ptr<void, TableMemoryDeleter> m_owned;  // null for a view
    const Scalar* m_data = nullptr;
    Index m_rows = 0;
    Index m_cols = 0;
};

}  // namespace seqembed::detail
