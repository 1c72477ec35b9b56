/// @file detail/row_table.hpp
/// @brief A rows x cols row-major table that either owns its values or views the caller's.
#pragma once

#include <new>
#include <utility>

#include "../error.hpp"
#include "../types.hpp"
#include "checks.hpp"

namespace seqembed::detail {

/// The storage behind TokenEmbedding and LearnedPositionalEmbedding: an owned RowMatrix, or a
/// non-owning view of memory the caller keeps alive (a memory-mapped checkpoint). Copies of an
/// owning table copy the values; copies of a view share the caller's memory.
template <typename Scalar>
class RowTable {
public:
    /// An owned table of rows x cols, uninitialised.
    RowTable(const char* what, Index rows, Index cols) {
        require_nonempty(what, rows, cols);
        try {
            m_owned.resize(rows, cols);
        } catch (const std::bad_alloc&) {
            fail<value_error>(what, " of ", rows, " x ", cols, " does not fit in memory");
        }
        point_at_owned();
    }

    /// An owned copy of weights.
    RowTable(const char* what, const Eigen::Ref<const RowMatrix<Scalar>>& weights)
        : RowTable(what, weights.rows(), weights.cols()) {
        m_owned = weights;
    }

    /// A view of rows x cols values at data, which the caller keeps alive and unchanged.
    RowTable(const char* what, const Scalar* data, Index rows, Index cols)
        : m_is_view(true), m_data(data), m_rows(rows), m_cols(cols) {
        if (data == nullptr) fail<value_error>(what, " was given a null pointer");
        require_nonempty(what, rows, cols);
    }

    RowTable(const RowTable& other) : m_owned(other.m_owned), m_is_view(other.m_is_view) {
        adopt_shape_of(other);
    }
    RowTable(RowTable&& other) noexcept
        : m_owned(std::move(other.m_owned)), m_is_view(other.m_is_view) {
        adopt_shape_of(other);
    }
    RowTable& operator=(RowTable other) noexcept {
        m_owned.swap(other.m_owned);
        m_is_view = other.m_is_view;
        adopt_shape_of(other);
        return *this;
    }
    ~RowTable() = default;

    Index rows() const noexcept { return m_rows; }
    Index cols() const noexcept { return m_cols; }
    bool owns_data() const noexcept { return !m_is_view; }
    const Scalar* row(Index r) const noexcept { return m_data + r * m_cols; }

    /// The whole table as a read-only view.
    Eigen::Map<const RowMatrix<Scalar>> matrix() const noexcept {
        return {m_data, m_rows, m_cols};
    }

    /// Writable access to an owned table (initialisation); never called on a view.
    RowMatrix<Scalar>& owned() noexcept { return m_owned; }

private:
    static void require_nonempty(const char* what, Index rows, Index cols) {
        if (rows <= 0 || cols <= 0)
            fail<value_error>(what, " must have at least one row and one column, got ", rows,
                              " x ", cols);
        require_addressable<Scalar>(what, rows, cols);
    }

    void point_at_owned() noexcept {
        m_data = m_owned.data();
        m_rows = m_owned.rows();
        m_cols = m_owned.cols();
    }
    /// After m_owned and m_is_view are set: point at our own values, or at the viewed memory.
    void adopt_shape_of(const RowTable& other) noexcept {
        if (!m_is_view) {
            point_at_owned();
        } else {
            m_data = other.m_data;
            m_rows = other.m_rows;
            m_cols = other.m_cols;
        }
    }

    RowMatrix<Scalar> m_owned;
    bool m_is_view = false;
    const Scalar* m_data = nullptr;
    Index m_rows = 0;
    Index m_cols = 0;
};

}  // namespace seqembed::detail
