/// @file types.hpp
/// @brief Matrix and id types shared by every component, and the views through which ids,
///        masks, lengths and offsets are read without a copy.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <Eigen/Core>
#include <cstdint>
#include <type_traits>

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

/// @brief A batch x sequence matrix of 32-bit token ids (as ONNX exports and many tokenizers
///        give them); accepted wherever IdMatrix is, without a copy.
using IdMatrix32 = Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// @brief A row-major matrix of 0/1 bytes, as a kept dropout mask.
using MaskMatrix = Eigen::Matrix<std::uint8_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace detail {

/// A read-only view of a matrix of integers of any width and layout, read as int64. What
/// TokenIds, Padding and StepOffsets hold: never a copy.
class IntegerView {
public:
    IntegerView() noexcept = default;

    /// Views the matrix or vector `values` (an Eigen object with direct access: a Matrix, Map,
    /// Ref or block, of any storage order).
    template <typename Derived>
    explicit IntegerView(const Eigen::DenseBase<Derived>& values) noexcept {
        using Value = typename Derived::Scalar;
        static_assert(std::is_integral_v<Value> && sizeof(Value) <= 8,
                      "seqembed: ids, masks, lengths and offsets must be integers (or bool)");
        constexpr bool direct = (Derived::Flags & Eigen::DirectAccessBit) != 0;
        static_assert(direct,
                      "seqembed: pass a matrix with direct access (Matrix, Map, Ref or block); "
                      "evaluate an expression first with .eval()");
        if constexpr (direct && std::is_integral_v<Value>) {  // no cascade after the assertion
            const Derived& matrix = values.derived();
            m_data = matrix.data();
            m_rows = matrix.rows();
            m_cols = matrix.cols();
            m_row_stride = matrix.rowStride();
            m_col_stride = matrix.colStride();
            m_read = &read<Value>;
        }
    }

    /// count values at data, viewed as one row.
    template <typename Value>
    IntegerView(const Value* data, Index count) noexcept
        : m_data(data), m_rows(1), m_cols(count), m_row_stride(count), m_col_stride(1), m_read(&read<Value>) {
        static_assert(std::is_integral_v<Value> && sizeof(Value) <= 8,
                      "seqembed: ids, masks, lengths and offsets must be integers (or bool)");
    }

    Index rows() const noexcept { return m_rows; }
    Index cols() const noexcept { return m_cols; }
    Index size() const noexcept { return m_rows * m_cols; }
    bool empty() const noexcept { return m_read == nullptr; }

    /// Value (r, c), widened to int64 (a uint64 above 2^63 reads as negative).
    std::int64_t operator()(Index r, Index c) const noexcept {
        return m_read(m_data, r * m_row_stride + c * m_col_stride);
    }
    /// Value k of a one-row or one-column view.
    std::int64_t operator[](Index k) const noexcept {
        return m_rows == 1 ? (*this)(0, k) : (*this)(k, 0);
    }

private:
    template <typename Value>
    static std::int64_t read(const void* data, Index offset) noexcept {
        return static_cast<std::int64_t>(static_cast<const Value*>(data)[offset]);
    }

    const void* m_data = nullptr;
    Index m_rows = 0;
    Index m_cols = 0;
    Index m_row_stride = 0;
    Index m_col_stride = 0;
    std::int64_t (*m_read)(const void*, Index) noexcept = nullptr;
};

}  // namespace detail

/// @brief A read-only view of a batch x seq matrix of token ids, accepted by every forward:
///        int64 (IdMatrix) or int32 (IdMatrix32), row- or column-major, a Matrix, Map, Ref or
///        block. Nothing is copied; the ids must outlive the call that reads them.
/// @code
/// seqembed::IdMatrix32 ids(2, 3);            // e.g. from an ONNX tokenizer
/// ids << 5, 6, 7, 8, 9, 0;
/// auto x = pipeline.forward(ids);            // viewed, not converted
/// @endcode
class TokenIds {
public:
    /// @brief Views an Eigen matrix of int32 or int64 ids with direct access.
    /// @tparam Derived the Eigen type (checked at compile time).
    /// @param ids batch x seq ids.
    template <typename Derived>
    TokenIds(const Eigen::DenseBase<Derived>& ids) noexcept  // NOLINT(google-explicit-constructor): as Eigen::Ref
        : m_view(ids) {
        using Value = typename Derived::Scalar;
        static_assert(std::is_same_v<Value, std::int64_t> || std::is_same_v<Value, std::int32_t>,
                      "seqembed::TokenIds: token ids must be std::int64_t or std::int32_t");
    }

    /// @brief Sequences in the batch.
    /// @return the number of rows.
    Index rows() const noexcept { return m_view.rows(); }
    /// @brief Tokens per sequence.
    /// @return the number of columns.
    Index cols() const noexcept { return m_view.cols(); }
    /// @brief Tokens in the batch.
    /// @return rows() * cols().
    Index size() const noexcept { return m_view.size(); }
    /// @brief The id of token t of sequence b.
    /// @param b sequence, in [0, rows()).
    /// @param t token, in [0, cols()).
    /// @return the id, widened to int64.
    TokenId operator()(Index b, Index t) const noexcept { return m_view(b, t); }

private:
    detail::IntegerView m_view;
};

}  // namespace seqembed
