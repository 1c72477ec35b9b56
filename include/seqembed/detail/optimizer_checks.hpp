/// @file detail/optimizer_checks.hpp
/// @brief What every optimizer step checks before it writes: the learning rate, the shapes of
///        the weights, gradient and state, the gradient's rows and, with check_finite, its
///        values. A step that throws has changed nothing.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "checks.hpp"
#include "engine/kernels.hpp"
#include "../error.hpp"
#include "../gradients.hpp"
#include "../types.hpp"

namespace seqembed::detail {

/// A lazy optimizer's step on one span of a listed row: step(k, first, count, g) updates
/// columns [first, first + count) of listed row k with the gradient g; request(k, first, count)
/// requests the lines that will touch.
template <typename Request, typename Step>
struct SpanStep {
    Request request;
    Step step;

    SpanStep(Request request_lines, Step step_span) : request(std::move(request_lines)), step(std::move(step_span)) {}
    template <typename Scalar>
    void operator()(std::size_t k, Index first, Index count, const Scalar* g) const noexcept {
        step(k, first, count, g);
    }
};

/// How many rows ahead a lazy step over whole rows requests the lines of the rows it will update.
inline constexpr std::size_t rows_requested_ahead = 2;

/// A pass for a lazy optimizer's step_spans that hands it whole rows: rows[k]'s gradient is
/// gradient_row(k), cols values; the lines of the row rows_requested_ahead on are requested first.
template <typename GradientRow>
auto whole_rows(std::size_t rows, Index cols, const GradientRow& gradient_row) {
    return [rows, cols, &gradient_row](const auto& step_span) {
        for (std::size_t k = 0; k < rows; ++k) {
            if (k + rows_requested_ahead < rows) step_span.request(k + rows_requested_ahead, 0, cols);
            step_span(k, 0, cols, gradient_row(k));
        }
    };
}

/// Throws unless the learning rate is finite and not negative.
inline void require_learning_rate(const std::string& optimizer, double lr) {
    if (!(lr >= 0.0) || !std::isfinite(lr))
        fail<value_error>(optimizer, ": the learning rate must be finite and >= 0, got ", lr);
}

/// Throws unless an option is finite and in [low, high] (`what` names it).
inline void require_option(const char* optimizer, const char* what, double value, double low, double high) {
    if (!(value >= low && value <= high))
        fail<value_error>(optimizer, ": ", what, " must be in [", low, ", ", high, "], got ", value);
}

/// Throws unless the weights have the shape the optimizer's state was made for.
template <typename Weights>
void require_weights(const std::string& table, Index rows, Index cols, const Weights& weights) {
    if (weights.rows() != rows || weights.cols() != cols)
        fail<shape_error>(table, ": the weights are ", weights.rows(), " x ", weights.cols(),
                          ", the optimizer's state is for ", rows, " x ", cols);
}

/// Throws unless `count` gradient rows of `cols` values hold no NaN or infinity: row k's values
/// at row(k), named in the error as table row name(k) with the column. The ISA's scan finds a
/// row that is not finite; only that row is read again, value by value.
template <typename Row, typename Name>
void require_finite_rows(const std::string& table, Index count, Index cols, const Row& row, const Name& name) {
    using Scalar = std::remove_cv_t<std::remove_pointer_t<decltype(row(Index{0}))>>;
    const auto largest_magnitude = optimizer_kernel<Scalar>().largest_magnitude;
    for (Index k = 0; k < count; ++k) {
        const Scalar* values = row(k);
        if (!std::isnan(largest_magnitude(values, cols))) continue;
        for (Index c = 0; c < cols; ++c)
            if (!std::isfinite(values[c]))
                fail<value_error>(table, ": the gradient of row ", name(k), ", column ", c, " is ", values[c]);
    }
}

/// Throws unless a dense gradient (row-major, its rows contiguous) has the weights' shape and,
/// when `finite`, holds no NaN or infinity (the first named by row and column).
template <typename Gradient>
void require_dense_gradient(const std::string& table, Index rows, Index cols, const Gradient& gradient, bool finite) {
    if (gradient.rows() != rows || gradient.cols() != cols)
        fail<shape_error>(table, ": the gradient is ", gradient.rows(), " x ", gradient.cols(), ", the weights ", rows,
                          " x ", cols);
    if (!finite) return;
    require_finite_rows(
        table, rows, cols, [&](Index r) { return gradient.row(r).data(); }, [](Index r) { return r; });
}

/// Throws unless `listed` ascends without repeats inside a table of `rows` rows whose first row
/// is id `first` (a vocabulary shard's first id, else 0).
inline void require_rows(const std::string& table, Index rows, const std::vector<std::int64_t>& listed,
                         std::int64_t first = 0) {
    for (std::size_t k = 0; k < listed.size(); ++k) {
        const std::int64_t row = listed[k];
        if (row < first || row - first >= rows) {
            if (first == 0)
                fail<index_error>(table, ": the gradient's row ", row, " is outside the table's ", rows, " rows");
            fail<index_error>(table, ": the gradient's row ", row, " is outside the table's ids [", first, ", ",
                              first + rows, ")");
        }
        if (k > 0 && row <= listed[k - 1])
            fail<value_error>(table, ": the gradient's rows must ascend without repeats, but ", row, " follows ",
                              listed[k - 1]);
    }
}

/// Throws unless a row-sparse gradient is for a table of the weights' shape, its rows ascend
/// without repeats inside the table, its values have one row each and, when `finite`, hold no
/// NaN or infinity (the first named by table row and column).
template <typename Scalar>
void require_sparse_gradient(const std::string& table, Index rows, Index cols, const RowGradient<Scalar>& gradient,
                             bool finite) {
    if (gradient.table_rows != rows || gradient.d_model != cols)
        fail<shape_error>(table, ": the gradient is for a ", gradient.table_rows, " x ", gradient.d_model,
                          " table, the weights are ", rows, " x ", cols);
    if (gradient.values.rows() != static_cast<Index>(gradient.rows.size()) || gradient.values.cols() != cols)
        fail<shape_error>(table, ": the gradient lists ", gradient.rows.size(), " rows but holds ",
                          gradient.values.rows(), " x ", gradient.values.cols(), " values");
    require_rows(table, rows, gradient.rows, gradient.first_row);
    if (!finite) return;
    require_finite_rows(
        table, gradient.values.rows(), cols, [&](Index k) { return gradient.values.row(k).data(); },
        [&](Index k) { return gradient.rows[static_cast<std::size_t>(k)]; });
}

/// The table rows a row-sparse gradient lists: its rows for a whole table, else its rows less
/// its first row (RowGradient::local_rows), made in `local`.
template <typename Scalar>
const std::vector<std::int64_t>& listed_table_rows(const RowGradient<Scalar>& gradient,
                                                   std::vector<std::int64_t>& local) {
    if (gradient.first_row == 0) return gradient.rows;
    local = gradient.local_rows();
    return local;
}

/// Calls visit(r, g) for every row r of a rows-row table in order, g the row's gradient in a
/// row-sparse gradient or null where it lists none (a zero gradient).
template <typename Scalar, typename Visit>
void for_each_dense_row(Index rows, const RowGradient<Scalar>& gradient, Visit&& visit) {
    std::size_t listed = 0;
    for (Index r = 0; r < rows; ++r) {
        const bool has = listed < gradient.rows.size() && gradient.rows[listed] - gradient.first_row == r;
        visit(r, has ? gradient.values.row(static_cast<Index>(listed)).data() : static_cast<const Scalar*>(nullptr));
        if (has) ++listed;
    }
}

}  // namespace seqembed::detail
