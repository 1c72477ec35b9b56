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

/// Runs f(0, count) on this thread: the executor of a backward without threads.
struct OneThread {
    template <typename Work>
    void operator()(Index count, const Work& f) const {
        f(Index{0}, count);
    }
};

/// The rows a backward sums: rows of a gradient matrix, times a dropout mask when it has one
/// (mask[r * width + j] 1 where element (r, j) was kept, 0 where dropped), each value first
/// multiplied in Scalar by 1 or 0 and then by keep_scale: Dropout::apply's value x keep_scale
/// or value x 0, bit for bit (a dropped NaN stays NaN, a dropped negative becomes -0).
template <typename Scalar, typename Gradients>
struct GradientRows {
    const Gradients& gradients;
    const std::uint8_t* mask = nullptr;
    Scalar keep_scale = 1;
};

/// A table's reads sorted by table row (then by source row), and where each listed row's reads
/// start.
struct SortedReads {
    std::vector<std::int64_t> rows;      // the table rows read, ascending, each once
    std::vector<std::size_t> first_read;  // of each listed row, then the number of reads
};

/// Sorts `reads` in place by (table row, source row) and lists the table rows they read.
template <typename Scalar>
SortedReads sort_reads(std::vector<RowRead<Scalar>>& reads) {
    std::stable_sort(reads.begin(), reads.end(), [](const RowRead<Scalar>& a, const RowRead<Scalar>& b) {
        return a.table_row < b.table_row || (a.table_row == b.table_row && a.source < b.source);
    });
    SortedReads sorted;
    for (std::size_t k = 0; k < reads.size(); ++k) {
        if (k == 0 || reads[k].table_row != reads[k - 1].table_row) {
            sorted.rows.push_back(reads[k].table_row);
            sorted.first_read.push_back(k);
        }
    }
    sorted.first_read.push_back(reads.size());
    return sorted;
}

/// The gradient of listed row `at` of a table: the sum of factor x rows.row(source) over its
/// reads in order of source row, accumulated in WideScalar (in `sum`, width values) and rounded
/// once into out (width values).
template <typename Scalar, typename Gradients>
void sum_row(const std::vector<RowRead<Scalar>>& reads, const SortedReads& sorted, std::size_t at,
             const GradientRows<Scalar, Gradients>& rows, Index width,
             Eigen::Array<WideScalar<Scalar>, 1, Eigen::Dynamic>& sum, Scalar* out) {
    using Wide = WideScalar<Scalar>;
    using Values = Eigen::Map<const Eigen::Array<Scalar, 1, Eigen::Dynamic>>;
    using Mask = Eigen::Map<const Eigen::Array<std::uint8_t, 1, Eigen::Dynamic>>;
    sum.setZero();
    for (std::size_t k = sorted.first_read[at]; k < sorted.first_read[at + 1]; ++k) {
        const Values values(rows.gradients.row(reads[k].source).data(), width);
        const auto factor = static_cast<Wide>(reads[k].factor);
        if (rows.mask != nullptr) {
            const Mask kept(rows.mask + reads[k].source * width, width);
            sum += factor * ((values * kept.template cast<Scalar>()) * rows.keep_scale).template cast<Wide>();
        } else {
            sum += factor * values.template cast<Wide>();
        }
    }
    Eigen::Map<Eigen::Array<Scalar, 1, Eigen::Dynamic>>(out, width) = sum.template cast<Scalar>();
}

/// The row-sparse gradient of a table from its reads: each listed row by sum_row. The order is
/// fixed by the reads alone, so any split of the rows between the executor's workers
/// (parallel(count, f) runs f(begin, end) over shares of [0, count)) gives the same bits.
/// `reads` is sorted in place.
template <typename Scalar, typename Gradients, typename Parallel = OneThread>
RowGradient<Scalar> sum_reads(std::vector<RowRead<Scalar>>& reads, const GradientRows<Scalar, Gradients>& rows,
                              Index table_rows, Index width, const Parallel& parallel = {}) {
    SortedReads sorted = sort_reads(reads);
    RowGradient<Scalar> out;
    out.table_rows = table_rows;
    out.d_model = width;
    out.values.resize(static_cast<Index>(sorted.rows.size()), width);
    parallel(static_cast<Index>(sorted.rows.size()), [&](Index begin, Index end) {
        Eigen::Array<WideScalar<Scalar>, 1, Eigen::Dynamic> sum(width);
        for (Index at = begin; at < end; ++at)
            sum_row(reads, sorted, static_cast<std::size_t>(at), rows, width, sum, out.values.row(at).data());
    });
    out.rows = std::move(sorted.rows);
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
    const auto wide = [](Scalar value) { return static_cast<Wide>(value); };
    const auto count = static_cast<Wide>(width);
    Wide mean = 0;
    for (Index j = 0; j < width; ++j) mean += wide(x[j]);
    mean /= count;
    Wide variance = 0;
    for (Index j = 0; j < width; ++j) variance += (wide(x[j]) - mean) * (wide(x[j]) - mean);
    variance /= count;
    const Wide rstd = Wide(1) / std::sqrt(variance + wide(epsilon));
    Wide scaled_mean = 0;  // mean of g * gamma
    Wide projected_mean = 0;  // mean of g * gamma * x_hat
    for (Index j = 0; j < width; ++j) {
        const Wide x_hat = (wide(x[j]) - mean) * rstd;
        const Wide scaled = wide(g[j]) * wide(gamma[j]);
        scaled_mean += scaled;
        projected_mean += scaled * x_hat;
        gamma_sum[j] += wide(g[j]) * x_hat;
        beta_sum[j] += wide(g[j]);
    }
    scaled_mean /= count;
    projected_mean /= count;
    for (Index j = 0; j < width; ++j) {
        const Wide x_hat = (wide(x[j]) - mean) * rstd;
        const Wide scaled = wide(g[j]) * wide(gamma[j]);
        dx[j] = static_cast<Scalar>(rstd * (scaled - scaled_mean - x_hat * projected_mean));
    }
}

}  // namespace seqembed::detail

namespace seqembed::detail {

/// Rows per block of LayerNorm's backward: gamma's and beta's gradients are summed per block of
/// this many rows, then the blocks in order, whatever the number of workers.
inline constexpr Index norm_rows_per_block = 64;

/// LayerNorm's backward of rows rows[0 .. count) (x's row r at x + r * x_stride, g's and dx's at
/// g + r * g_stride and dx + r * g_stride; dx may be g): each row by layer_norm_row_backward,
/// gamma's and beta's gradients summed per block of norm_rows_per_block listed rows, then the
/// blocks in order, in WideScalar, and written to gamma_out and beta_out. Blocks are shared
/// between the executor's workers; the bits do not depend on how.
template <typename Scalar, typename Parallel = OneThread>
void layer_norm_backward(const Index* rows, Index count, const Scalar* x, Index x_stride, const Scalar* g, Scalar* dx,
                         Index g_stride, const Scalar* gamma, Scalar epsilon, Index width, Scalar* gamma_out,
                         Scalar* beta_out, const Parallel& parallel = {}) {
    using Wide = WideScalar<Scalar>;
    const Index blocks = (count + norm_rows_per_block - 1) / norm_rows_per_block;
    std::vector<Wide> partial(static_cast<std::size_t>(2 * blocks * width), Wide(0));
    parallel(blocks, [&](Index begin, Index end) {
        for (Index block = begin; block < end; ++block) {
            Wide* gamma_sum = partial.data() + 2 * block * width;
            Wide* beta_sum = gamma_sum + width;
            const Index last = std::min(count, (block + 1) * norm_rows_per_block);
            for (Index k = block * norm_rows_per_block; k < last; ++k) {
                const Index r = rows[k];
                layer_norm_row_backward(x + r * x_stride, g + r * g_stride, gamma, epsilon, width, dx + r * g_stride,
                                        gamma_sum, beta_sum);
            }
        }
    });
    for (Index j = 0; j < width; ++j) {
        Wide gamma_total = 0;
        Wide beta_total = 0;
        for (Index block = 0; block < blocks; ++block) {
            gamma_total += partial[static_cast<std::size_t>(2 * block * width + j)];
            beta_total += partial[static_cast<std::size_t>((2 * block + 1) * width + j)];
        }
        gamma_out[j] = static_cast<Scalar>(gamma_total);
        beta_out[j] = static_cast<Scalar>(beta_total);
    }
}

}  // namespace seqembed::detail
