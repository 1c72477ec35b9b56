/// @file detail/backward.hpp
/// @brief The pieces of the backward passes: table rows' gradients summed from the output rows
///        that read them in a fixed order, and LayerNorm's backward of one row.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "../gradients.hpp"
#include "../types.hpp"

namespace seqembed::detail {

/// The type the backward accumulates sums in: double for float (a frequent token's gradient sums
/// thousands of rows), double for double.
template <typename Scalar>
using WideScalar = std::conditional_t<std::is_same_v<Scalar, float>, double, Scalar>;

/// One read of a table row by an output row: table row `table_row` receives `factor` times
/// gradient row `source`.
template <typename Scalar>
struct RowRead {
    std::int64_t table_row;
    Index source;
    Scalar factor;
};

/// The row-sparse gradient of a table from its reads: per table row, the sum of factor x
/// gradients.row(source) over its reads in order of source row, accumulated in WideScalar and
/// rounded once. The order is fixed by the reads alone, so any split of the work gives the same
/// bits. `reads` is sorted in place.
template <typename Scalar, typename Gradients>
RowGradient<Scalar> sum_reads(std::vector<RowRead<Scalar>>& reads, const Gradients& gradients, Index table_rows,
                              Index width) {
    std::stable_sort(reads.begin(), reads.end(), [](const RowRead<Scalar>& a, const RowRead<Scalar>& b) {
        return a.table_row < b.table_row || (a.table_row == b.table_row && a.source < b.source);
    });
    RowGradient<Scalar> out;
    out.table_rows = table_rows;
    out.d_model = width;
    for (std::size_t k = 0; k < reads.size(); ++k)
        if (k == 0 || reads[k].table_row != reads[k - 1].table_row) out.rows.push_back(reads[k].table_row);
    out.values.resize(static_cast<Index>(out.rows.size()), width);
    std::vector<WideScalar<Scalar>> sum(static_cast<std::size_t>(width));
    std::size_t k = 0;
    for (std::size_t at = 0; at < out.rows.size(); ++at) {
        std::fill(sum.begin(), sum.end(), WideScalar<Scalar>(0));
        for (; k < reads.size() && reads[k].table_row == out.rows[at]; ++k) {
            const Scalar* row = gradients.row(reads[k].source).data();
            const auto factor = static_cast<WideScalar<Scalar>>(reads[k].factor);
            for (Index j = 0; j < width; ++j) sum[static_cast<std::size_t>(j)] += factor * row[j];
        }
        for (Index j = 0; j < width; ++j)
            out.values(static_cast<Index>(at), j) = static_cast<Scalar>(sum[static_cast<std::size_t>(j)]);
    }
    return out;
}

/// LayerNorm's backward of one row, in WideScalar: from the row's input x and the gradient g of
/// its output, writes the gradient of x to dx (which may be g) and adds g * x_hat and g to the
/// sums of gamma's and beta's gradients. The mean and the biased variance are x's, as the forward
/// normalised with.
template <typename Scalar>
void layer_norm_row_backward(const Scalar* x, const Scalar* g, const Scalar* gamma, Scalar epsilon, Index width,
                             Scalar* dx, WideScalar<Scalar>* gamma_sum, WideScalar<Scalar>* beta_sum) {
    using Wide = WideScalar<Scalar>;
    const auto count = static_cast<Wide>(width);
    Wide mean = 0;
    for (Index j = 0; j < width; ++j) mean += x[j];
    mean /= count;
    Wide variance = 0;
    for (Index j = 0; j < width; ++j) variance += (x[j] - mean) * (x[j] - mean);
    variance /= count;
    const Wide rstd = Wide(1) / std::sqrt(variance + static_cast<Wide>(epsilon));
    Wide scaled_mean = 0;  // mean of g * gamma
    Wide projected_mean = 0;  // mean of g * gamma * x_hat
    for (Index j = 0; j < width; ++j) {
        const Wide x_hat = (x[j] - mean) * rstd;
        const Wide scaled = static_cast<Wide>(g[j]) * gamma[j];
        scaled_mean += scaled;
        projected_mean += scaled * x_hat;
        gamma_sum[j] += static_cast<Wide>(g[j]) * x_hat;
        beta_sum[j] += g[j];
    }
    scaled_mean /= count;
    projected_mean /= count;
    for (Index j = 0; j < width; ++j) {
        const Wide x_hat = (x[j] - mean) * rstd;
        const Wide scaled = static_cast<Wide>(g[j]) * gamma[j];
        dx[j] = static_cast<Scalar>(rstd * (scaled - scaled_mean - x_hat * projected_mean));
    }
}

}  // namespace seqembed::detail
