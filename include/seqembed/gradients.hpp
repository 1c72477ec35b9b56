/// @file gradients.hpp
/// @brief Gradients of the input stage's tables: row-sparse, as nn.Embedding(sparse=True) gives
///        them, and the pipeline's gradients of every table it reads.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "detail/checks.hpp"
#include "error.hpp"
#include "types.hpp"

namespace seqembed {

/// @brief The gradient of a table with respect to the rows a batch read: the sorted, unique
///        row ids and one gradient row each, as a coalesced torch.sparse_coo_tensor from
///        nn.Embedding(sparse=True). Rows not listed have a zero gradient.
///
/// Row ids are global: a vocabulary shard's table (TokenEmbeddingOptions::shard) holds ids
/// [first_row, first_row + table_rows), and its gradient lists those ids, as the unsharded
/// table's gradient would; an optimizer built for the shard's rows steps them in place.
/// @tparam Scalar float or double (a bfloat16 or half table's gradient is float).
template <typename Scalar = float>
struct RowGradient {
    /// @brief Rows of the table the gradient is for (its vocabulary or position count; a
    ///        vocabulary shard's rows).
    Index table_rows = 0;
    /// @brief Values per row.
    Index d_model = 0;
    /// @brief The id of the table's first row: a vocabulary shard's first id
    ///        (VocabularyShard::first), 0 for a whole table.
    std::int64_t first_row = 0;
    /// @brief The ids with a gradient, ascending, each once, in [first_row, first_row +
    ///        table_rows).
    std::vector<std::int64_t> rows;
    /// @brief rows.size() x d_model: values.row(k) is the gradient of id rows[k].
    RowMatrix<Scalar> values;

    /// @brief Whether no row has a gradient.
    /// @return true when rows is empty.
    bool empty() const noexcept { return rows.empty(); }

    /// @brief The gradient as a dense table_rows x d_model matrix (zero where no row is listed):
    ///        row r is the gradient of id first_row + r, the table's row r.
    /// @return a new matrix.
    /// @throws value_error if the dense matrix is not addressable; as require_well_formed.
    RowMatrix<Scalar> to_dense() const {
        detail::require_addressable<Scalar>("dense gradient", table_rows, d_model);
        require_well_formed("RowGradient::to_dense");
        RowMatrix<Scalar> dense = RowMatrix<Scalar>::Zero(table_rows, d_model);
        for (std::size_t k = 0; k < rows.size(); ++k)
            dense.row(static_cast<Index>(rows[k] - first_row)) = values.row(static_cast<Index>(k));
        return dense;
    }

    /// @brief The table rows the gradient lists (rows[k] - first_row), as an optimizer's
    ///        step_rows takes.
    /// @return a new vector, rows.size() long.
    std::vector<std::int64_t> local_rows() const {
        std::vector<std::int64_t> listed(rows);
        for (std::int64_t& row : listed) row -= first_row;
        return listed;
    }

    /// @brief Checks that the gradient is one: values holds one row of d_model values per listed
    ///        id, and the ids ascend without repeats inside the table's, [first_row, first_row +
    ///        table_rows).
    /// @param what the caller, as the error names it.
    /// @throws shape_error for values of another shape; value_error for ids out of order;
    ///         index_error for an id outside the table's.
    void require_well_formed(const char* what) const {
        if (values.rows() != static_cast<Index>(rows.size()) || values.cols() != d_model)
            detail::fail<shape_error>(what, ": ", rows.size(), " ids listed but ", values.rows(), " x ", values.cols(),
                                      " values (d_model ", d_model, ")");
        for (std::size_t k = 0; k < rows.size(); ++k) {
            if (rows[k] < first_row || rows[k] - first_row >= table_rows)
                detail::fail<index_error>(what, ": id ", rows[k], " is outside the table's ids [", first_row, ", ",
                                          first_row + table_rows, ")");
            if (k > 0 && rows[k] <= rows[k - 1])
                detail::fail<value_error>(what, ": the ids must ascend without repeats, but ", rows[k], " follows ",
                                          rows[k - 1]);
        }
    }

    /// @brief Adds another gradient of the same table (accumulation over several backward
    ///        calls): rows in both are summed as this + other, the others are merged in order.
    /// @param other a gradient of a table of the same shape and first row (or an empty default
    ///        gradient).
    /// @throws shape_error if the tables' shapes or first rows differ; as require_well_formed for
    ///         either gradient. This gradient is then unchanged.
    void add(const RowGradient& other) {
        other.require_well_formed("RowGradient::add (the gradient added)");
        require_well_formed("RowGradient::add");
        if (other.table_rows == 0 && other.rows.empty()) return;
        if (table_rows == 0 && rows.empty()) {
            *this = other;
            return;
        }
        if (other.table_rows != table_rows || other.d_model != d_model || other.first_row != first_row)
            detail::fail<shape_error>("gradient of a ", other.table_rows, " x ", other.d_model, " table from id ",
                                      other.first_row, " added to the gradient of a ", table_rows, " x ", d_model,
                                      " table from id ", first_row);
        std::vector<std::int64_t> merged;
        merged.reserve(rows.size() + other.rows.size());
        std::set_union(rows.begin(), rows.end(), other.rows.begin(), other.rows.end(), std::back_inserter(merged));
        RowMatrix<Scalar> sum(static_cast<Index>(merged.size()), d_model);
        std::size_t mine = 0;
        std::size_t theirs = 0;
        for (std::size_t k = 0; k < merged.size(); ++k) {
            const bool in_mine = mine < rows.size() && rows[mine] == merged[k];
            const bool in_theirs = theirs < other.rows.size() && other.rows[theirs] == merged[k];
            const auto at = static_cast<Index>(k);
            if (in_mine && in_theirs) {
                sum.row(at) = values.row(static_cast<Index>(mine++)) + other.values.row(static_cast<Index>(theirs++));
            } else if (in_mine) {
                sum.row(at) = values.row(static_cast<Index>(mine++));
            } else {
                sum.row(at) = other.values.row(static_cast<Index>(theirs++));
            }
        }
        rows = std::move(merged);
        values = std::move(sum);
    }
};

/// @brief What InputPipeline::backward gives: the gradient of every trainable table the
///        forward read. A stage the pipeline lacks, or whose table is constant (sinusoidal
///        positions), has an empty gradient.
/// @tparam Scalar float or double.
template <typename Scalar = float>
struct PipelineGradients {
    /// @brief Of the token table: scale x the gradient of each row read, summed per id; the
    ///        table's padding_idx (TokenEmbeddingOptions, as nn.Embedding's) and zero padded rows
    ///        receive none. A token-type table that is a view of the token table (GPT-2)
    ///        adds its gradient here.
    RowGradient<Scalar> token;
    /// @brief Of a learned position table, by table row (the position plus the table's offset).
    RowGradient<Scalar> positions;
    /// @brief Of the token-type table, by type id.
    RowGradient<Scalar> token_types;
    /// @brief Of LayerNorm's weight, d_model values (empty without a LayerNorm).
    Eigen::Matrix<Scalar, 1, Eigen::Dynamic> gamma;
    /// @brief Of LayerNorm's bias, d_model values (empty without a LayerNorm).
    Eigen::Matrix<Scalar, 1, Eigen::Dynamic> beta;

    /// @brief Adds the gradients of another backward of the same pipeline.
    /// @param other the gradients to add.
    /// @throws shape_error if a table's shape differs; this is then unchanged.
    void add(const PipelineGradients& other) {
        PipelineGradients sum = *this;
        sum.token.add(other.token);
        sum.positions.add(other.positions);
        sum.token_types.add(other.token_types);
        add_vector(sum.gamma, other.gamma, "LayerNorm gamma");
        add_vector(sum.beta, other.beta, "LayerNorm beta");
        *this = std::move(sum);
    }

private:
    static void add_vector(Eigen::Matrix<Scalar, 1, Eigen::Dynamic>& into,
                           const Eigen::Matrix<Scalar, 1, Eigen::Dynamic>& other, const char* what) {
        if (other.size() == 0) return;
        if (into.size() == 0) {
            into = other;
            return;
        }
        if (into.size() != other.size())
            detail::fail<shape_error>("gradient of ", what, " of ", other.size(), " values added to one of ",
                                      into.size());
        into += other;
    }
};

namespace detail {

/// The sum of a matrix's squared values in double: each row's squares summed in order, then the
/// rows' sums in order. Row by row, so that a table split by rows between processes sums to the
/// same bits when the parts' row sums are added in the same order (seqembed::mpi).
template <typename Matrix>
double squares_by_row(const Matrix& values) {
    double total = 0;
    for (Index r = 0; r < values.rows(); ++r) {
        double row = 0;
        for (Index c = 0; c < values.cols(); ++c) {
            const auto value = static_cast<double>(values(r, c));
            row += value * value;
        }
        total += row;
    }
    return total;
}

/// clip_grad_norm's norm and scaling, given the sum of the token gradient's squares. A norm that
/// is not finite scales too, as PyTorch's: by 0 when infinite (an infinite value becomes NaN), by
/// NaN when NaN.
template <typename Scalar>
double clip_with_token_squares(PipelineGradients<Scalar>& gradients, double token_squares, double max_norm) {
    const double total =
        std::sqrt(token_squares + squares_by_row(gradients.positions.values) +
                  squares_by_row(gradients.token_types.values) + squares_by_row(gradients.gamma) +
                  squares_by_row(gradients.beta));
    const double coefficient = max_norm / (total + 1e-6);
    if (!(coefficient >= 1.0)) {  // torch.clamp(coefficient, max=1.0), which keeps a NaN
        const auto factor = static_cast<Scalar>(coefficient);
        gradients.token.values *= factor;
        gradients.positions.values *= factor;
        gradients.token_types.values *= factor;
        gradients.gamma *= factor;
        gradients.beta *= factor;
    }
    return total;
}

/// Throws unless max_norm is finite and >= 0.
inline void require_max_norm(double max_norm) {
    if (!(max_norm >= 0.0) || !std::isfinite(max_norm))
        detail::fail<value_error>("clip_grad_norm: max_norm must be finite and >= 0, got ", max_norm);
}

}  // namespace detail

/// @brief Scales every gradient of `gradients` so that their global 2-norm is at most
///        max_norm, as torch.nn.utils.clip_grad_norm_ over all the parameters: the norm of all
///        their values together (a row-sparse gradient's listed values), and when it exceeds
///        max_norm every value multiplied by max_norm / (norm + 1e-6). The squares are summed in
///        double, row by row (each row's in order, then the rows'), in the order token,
///        positions, token types, gamma, beta; seqembed::mpi::clip_grad_norm gives the same
///        bits for a token table split between ranks.
/// @tparam Scalar float or double.
/// @param gradients the gradients to clip, in place.
/// @param max_norm the largest norm allowed, finite and >= 0.
/// @return the global norm before clipping: infinite or NaN when a value is, and then, as with
///         PyTorch's default error_if_nonfinite=False, every value is multiplied by max_norm /
///         (norm + 1e-6) all the same: by 0 for an infinite norm (finite values become 0, an
///         infinite one NaN), by NaN for a NaN norm. An optimizer step with check_finite then
///         names the first NaN and writes nothing.
/// @throws value_error for a negative, NaN or infinite max_norm.
template <typename Scalar>
double clip_grad_norm(PipelineGradients<Scalar>& gradients, double max_norm) {
    detail::require_max_norm(max_norm);
    return detail::clip_with_token_squares(gradients, detail::squares_by_row(gradients.token.values), max_norm);
}

}  // namespace seqembed
