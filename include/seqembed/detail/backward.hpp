/// @file detail/backward.hpp
/// @brief The pieces of the backward passes: table rows' gradients summed from the output rows
///        that read them in a fixed order, in one pass over the output's gradient, and
///        LayerNorm's backward over rows.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "../gradients.hpp"
#include "../types.hpp"
#include "engine/kernels.hpp"
#include "large_memory.hpp"
#include "simd/platform.hpp"
#include "workers.hpp"

namespace seqembed::detail {

/// One read of a table row by an output row: table row `table_row` receives `factor` times
/// gradient row `source`.
template <typename Scalar>
struct RowRead {
    std::int64_t table_row;
    Index source;
    Scalar factor;
};

/// The rows of a table's gradient from the reads of its rows, by the backward's element loops
/// (GradientKernel, of the ISA in force): each read's role carried out on its row's values,
/// through the mask as they are read.
template <typename Scalar>
class ReadSummer {
public:
    /// The summer of `rows` values at a time.
    /// @throws value_error as active_isa(); std::bad_alloc.
    ReadSummer(const GradientRows<Scalar>& rows, Index width)
        : m_kernel(gradient_kernel<Scalar>()), m_rows(rows), m_width(width) {}

    /// Carries out one read of columns [first, first + count) of gradient row `row`, through
    /// the mask, in its role (GradientKernel::apply of gradient-inl.hpp): with `streaming`, out
    /// is a gradient row this pass does not read again, and this thread must call fence() once
    /// it is done.
    void apply(ReadRole role, Scalar factor, Index row, Index first, Index count, WideScalar<Scalar>* sum, Scalar* out,
               bool streaming) const noexcept {
        m_kernel.apply(role, factor, m_rows.span(row, first), m_rows.mask_of(row, m_width, first), count, sum, out,
                       streaming);
    }

    /// LayerNorm's backward of gradient row `row` (GradientKernel::norm_row of gradient-inl.hpp),
    /// through the mask: x the row's input, dx its gradient, gamma_sum and beta_sum the sums it
    /// adds to.
    void norm_row(Index row, const Scalar* x, const Scalar* gamma, Scalar epsilon, Scalar* dx,
                  WideScalar<Scalar>* gamma_sum, WideScalar<Scalar>* beta_sum) const noexcept {
        m_kernel.norm_row(x, m_rows.span(row, 0), m_rows.mask_of(row, m_width, 0), gamma, epsilon, m_width, dx,
                          gamma_sum, beta_sum);
    }

    /// Orders this thread's streaming stores before what another thread reads after it.
    void fence() const noexcept { m_kernel.fence(); }

private:
    GradientKernelFunctions<Scalar> m_kernel;
    GradientRows<Scalar> m_rows;
    Index m_width;
};

/// A table's reads grouped by table row: the rows read, ascending, each once, and the reads of
/// each; and for each read, in the order given (by source row), its row's place in `rows`, its
/// role, and its row's place among the rows with a WideScalar sum (several reads, but for
/// pairs_in_place's pairs).
struct ReadPlan {
    std::vector<std::int64_t> rows;
    std::size_t most_reads = 0;           // of any one row
    std::vector<std::size_t> by_row;      // the reads by (table row, source row)
    std::vector<std::size_t> row_start;   // row k's reads: by_row[row_start[k] .. row_start[k + 1])
    std::vector<Index> slot;
    std::vector<ReadRole> role;
    std::vector<Index> sum;               // -1 for a row's only read and pairs_in_place's pairs
    Index sums = 0;                       // rows with a WideScalar sum
};

/// The plan of `reads`, which are in order of source row (as the backward lists them).
template <typename Scalar>
ReadPlan plan_reads(const std::vector<RowRead<Scalar>>& reads, Index table_rows) {
    ReadPlan plan;
    const std::size_t n = reads.size();
    std::vector<std::size_t> order(n);  // the reads by (table row, source row)
    if (table_rows <= static_cast<Index>(2 * n + 256)) {
        // Counting sort by table row: stable, so each row's reads stay in order of source row.
        std::vector<std::size_t> start(static_cast<std::size_t>(table_rows) + 1, 0);
        for (const RowRead<Scalar>& read : reads) ++start[static_cast<std::size_t>(read.table_row) + 1];
        for (std::size_t r = 0; r < static_cast<std::size_t>(table_rows); ++r) start[r + 1] += start[r];
        for (std::size_t i = 0; i < n; ++i) order[start[static_cast<std::size_t>(reads[i].table_row)]++] = i;
    } else {
        // A larger table: least significant digit first, radix_bits a pass (two passes up to 2^22
        // rows), each pass a stable counting sort; std::stable_sort took a tenth of the backward
        // at a vocabulary of 256000.
        constexpr unsigned radix_bits = 11;
        constexpr std::size_t radix = std::size_t{1} << radix_bits;
        std::vector<std::size_t> sorted(n);
        for (std::size_t i = 0; i < n; ++i) order[i] = i;
        const auto largest = static_cast<std::uint64_t>(table_rows - 1);
        for (unsigned shift = 0; shift < 64 && (largest >> shift) != 0; shift += radix_bits) {
            const auto digit = [&](std::size_t i) {
                return static_cast<std::size_t>((static_cast<std::uint64_t>(reads[i].table_row) >> shift) & (radix - 1));
            };
            std::vector<std::size_t> start(radix + 1, 0);
            for (std::size_t k = 0; k < n; ++k) ++start[digit(order[k]) + 1];
            for (std::size_t d = 0; d < radix; ++d) start[d + 1] += start[d];
            for (std::size_t k = 0; k < n; ++k) sorted[start[digit(order[k])]++] = order[k];
            order.swap(sorted);
        }
    }
    plan.slot.resize(n);
    plan.role.resize(n);
    plan.sum.resize(n);
    for (std::size_t k = 0; k < n;) {
        std::size_t end = k + 1;
        while (end < n && reads[order[end]].table_row == reads[order[k]].table_row) ++end;
        const auto slot = static_cast<Index>(plan.rows.size());
        plan.rows.push_back(reads[order[k]].table_row);
        plan.row_start.push_back(k);
        plan.most_reads = std::max(plan.most_reads, end - k);
        const bool pair = pairs_in_place<Scalar> && end - k == 2 &&
                          reads[order[k]].factor == reads[order[k + 1]].factor;
        const Index sum = end - k > 1 && !pair ? plan.sums++ : Index{-1};
        for (std::size_t at = k; at < end; ++at) {
            const std::size_t i = order[at];
            plan.slot[i] = slot;
            plan.sum[i] = sum;
            plan.role[i] = end - k == 1   ? ReadRole::only
                           : pair         ? (at == k ? ReadRole::first_of_two : ReadRole::last_of_two)
                           : at == k      ? ReadRole::first
                           : at + 1 == end ? ReadRole::last
                                           : ReadRole::middle;
        }
        k = end;
    }
    plan.row_start.push_back(n);
    plan.by_row = std::move(order);
    return plan;
}

/// Where a fused optimizer step takes a table's gradient: span by span, as step_gathered_rows
/// completes each listed row's columns [first, first + count), or whole rows only.
template <typename Scalar>
class RowSink {
public:
    /// A sink that takes whole rows only (whole_rows) or spans of columns.
    explicit RowSink(bool whole_rows) noexcept : m_whole_rows(whole_rows) {}
    RowSink(const RowSink&) = delete;
    RowSink& operator=(const RowSink&) = delete;

    /// Requests the lines that take(k, first, count, ...) will read and write.
    virtual void request(std::size_t k, Index first, Index count) const noexcept = 0;
    /// Takes the gradient of columns [first, first + count) of listed row k (count values).
    virtual void take(std::size_t k, Index first, Index count, const Scalar* values) const noexcept = 0;
    /// Whether take() must be given whole rows (so the workers share the rows, not the columns).
    bool whole_rows() const noexcept { return m_whole_rows; }

protected:
    ~RowSink() = default;

private:
    bool m_whole_rows;
};

/// The RowSink of a lazy optimizer's step_span (SpanStep): take() steps the span, request()
/// requests its lines.
template <typename Scalar, typename StepSpan>
class SpanSink final : public RowSink<Scalar> {
public:
    SpanSink(const StepSpan& step, bool whole_rows) : RowSink<Scalar>(whole_rows), m_step(step) {}
    void request(std::size_t k, Index first, Index count) const noexcept override { m_step.request(k, first, count); }
    void take(std::size_t k, Index first, Index count, const Scalar* values) const noexcept override {
        m_step(k, first, count, values);
    }

private:
    const StepSpan& m_step;
};

/// Whether a lazy optimizer's steps take the gradient span by span (its step_spans, marked by
/// `static constexpr bool takes_spans = true`), so that InputPipeline::backward_step fuses its
/// step into the backward's pass.
template <typename Optimizer, typename = void>
struct TakesSpans : std::false_type {};
template <typename Optimizer>
struct TakesSpans<Optimizer, std::void_t<decltype(Optimizer::takes_spans)>>
    : std::bool_constant<Optimizer::takes_spans> {};
template <typename Optimizer>
inline constexpr bool takes_spans = TakesSpans<Optimizer>::value;

/// Whether a lazy optimizer's step_spans takes whole rows only (marked by `static constexpr bool
/// takes_whole_rows = true`), as a row-wise rule that needs a row's every value before it writes.
template <typename Optimizer, typename = void>
struct TakesWholeRows : std::false_type {};
template <typename Optimizer>
struct TakesWholeRows<Optimizer, std::void_t<decltype(Optimizer::takes_whole_rows)>>
    : std::bool_constant<Optimizer::takes_whole_rows> {};
template <typename Optimizer>
inline constexpr bool takes_whole_rows = TakesWholeRows<Optimizer>::value;

/// One table of a summing pass: its reads (in order of source row), their plan, and where the
/// gradient goes: rows.size() x width values at `gradient`.
template <typename Scalar>
struct TableSum {
    const std::vector<RowRead<Scalar>>* reads;
    const ReadPlan* plan;
    Scalar* gradient;
};

/// The largest magnitude of the gradient rows a pass read, and whether any of their values is
/// NaN or infinite: what a fused step must know before it writes (InputPipeline::backward_step).
template <typename Scalar>
struct RowsBound {
    Scalar largest = 0;
    bool finite = true;

    /// Adds a row's OptimizerKernel::largest_magnitude (NaN for a row not finite).
    void add(Scalar row_largest) noexcept {
        if (std::isnan(row_largest))
            finite = false;
        else
            largest = std::max(largest, row_largest);
    }
    /// Adds another pass's or worker's bound.
    void add(const RowsBound& other) noexcept {
        finite = finite && other.finite;
        largest = std::max(largest, other.largest);
    }
};

/// Columns per share of a summing pass between workers: whole cache lines of float.
inline constexpr Index columns_per_share = 16;

/// Sums the gradients of several tables, each value in order of source row, in WideScalar, in
/// one pass over the gradient rows in order of source row: every read of a row is carried out
/// (ReadSummer::apply), each applying the mask to the values it reads. The workers share the
/// columns (parallel(count, f) runs f(begin, end) over shares of [0, count)); each value's sum
/// is in the same order whatever the share, so the bits do not depend on the number of workers.
/// A row's only read writes its gradient row with streaming stores: nothing reads it again here.
/// Measured at the headline shape: gathering each row from its reads instead
/// (step_gathered_rows) was slower here (its random reads cost more than keeping the sums), and
/// requesting the lines a read a few reads on would write made the pass slower, not faster.
/// `sums` holds the sums of each table's rows read several times: its matrices are reused where
/// they have the rows and the width, else replaced. With `bound`, the pass also adds to it the
/// bound of every gradient row it reads (before the mask), as each row comes: a fused step's
/// check then costs no pass of its own over the rows.
template <typename Scalar, typename Parallel = OneThread>
void sum_tables(const std::vector<TableSum<Scalar>>& tables, const GradientRows<Scalar>& rows, Index width,
                std::vector<RowMatrix<WideScalar<Scalar>>>& sums, const Parallel& parallel = {},
                RowsBound<Scalar>* bound = nullptr) {
    using Wide = WideScalar<Scalar>;
    if (sums.size() < tables.size()) sums.resize(tables.size());
    for (std::size_t t = 0; t < tables.size(); ++t)
        if (sums[t].rows() < tables[t].plan->sums || sums[t].cols() != width)
            sums[t] = new_output<Wide>(tables[t].plan->sums, width);
    const ReadSummer<Scalar> summer(rows, width);
    const Index shares = (width + columns_per_share - 1) / columns_per_share;
    std::vector<std::size_t> first_next(tables.size() * static_cast<std::size_t>(shares), 0);  // per share
    std::vector<RowsBound<Scalar>> share_bounds(bound != nullptr ? static_cast<std::size_t>(shares) : 0);
    const auto largest_magnitude = bound != nullptr ? optimizer_kernel<Scalar>().largest_magnitude : nullptr;
    parallel(shares, [&](Index begin, Index end) {
        const Index first = begin * columns_per_share;
        const Index count = std::min(width, end * columns_per_share) - first;
        if (count <= 0) return;
        std::size_t* next = first_next.data() + static_cast<std::size_t>(begin) * tables.size();
        for (;;) {
            Index source = -1;
            for (std::size_t t = 0; t < tables.size(); ++t) {
                const std::vector<RowRead<Scalar>>& reads = *tables[t].reads;
                if (next[t] < reads.size() && (source < 0 || reads[next[t]].source < source))
                    source = reads[next[t]].source;
            }
            if (source < 0) break;
            if (largest_magnitude != nullptr)
                share_bounds[static_cast<std::size_t>(begin)].add(largest_magnitude(rows.span(source, first), count));
            for (std::size_t t = 0; t < tables.size(); ++t) {
                const TableSum<Scalar>& table = tables[t];
                const std::vector<RowRead<Scalar>>& reads = *table.reads;
                const ReadPlan& plan = *table.plan;
                const auto sum_of = [&](std::size_t i) {
                    return plan.sum[i] >= 0 ? sums[t].data() + plan.sum[i] * width + first : nullptr;
                };
                for (std::size_t& i = next[t]; i < reads.size() && reads[i].source == source; ++i)
                    summer.apply(plan.role[i], reads[i].factor, source, first, count, sum_of(i),
                                 table.gradient + plan.slot[i] * width + first, true);
            }
        }
        summer.fence();
    });
    for (const RowsBound<Scalar>& share : share_bounds) bound->add(share);
}

/// How many listed rows ahead step_gathered_rows requests the gradient rows a row will read and
/// the lines its sink will touch (4 and 8 measured alike at the headline shape).
inline constexpr std::size_t gathered_rows_ahead = 4;

/// Hands a table's gradient to `sink` row by row in ascending table row (the order of
/// plan.rows), each row's sum gathered from its reads in order of source row, in WideScalar:
/// the sums sum_tables makes, bit for bit, without a sum per row kept across the pass. A lazy
/// optimizer's step then walks its table and state in ascending row, as its unfused step does,
/// instead of at random. The workers share the columns, as in sum_tables, or for a sink that
/// takes whole rows, the listed rows (each value's sum is the same whoever makes it).
template <typename Scalar, typename Parallel = OneThread>
void step_gathered_rows(const std::vector<RowRead<Scalar>>& reads, const ReadPlan& plan,
                        const GradientRows<Scalar>& rows, Index width, const RowSink<Scalar>& sink,
                        const Parallel& parallel = {}) {
    using Wide = WideScalar<Scalar>;
    const std::size_t listed = plan.rows.size();
    const std::vector<std::size_t>& start = plan.row_start;
    const std::vector<std::size_t>& by_row = plan.by_row;
    const ReadSummer<Scalar> summer(rows, width);
    // Listed rows [begin, end), columns [first, first + count) of each.
    const auto gather = [&](std::size_t begin, std::size_t end, Index first, Index count) {
        if (count <= 0) return;
        std::vector<Scalar> span(static_cast<std::size_t>(count));
        std::vector<Wide> sum(static_cast<std::size_t>(count));
        constexpr auto line_values = static_cast<Index>(64 / sizeof(Scalar));
        for (std::size_t k = begin; k < end; ++k) {
            if (k + gathered_rows_ahead < end) {
                const std::size_t ahead = k + gathered_rows_ahead;
                sink.request(ahead, first, count);
                for (std::size_t at = start[ahead]; at < start[ahead + 1]; ++at) {
                    const Scalar* row = rows.values + reads[by_row[at]].source * rows.stride + first;
                    for (Index j = 0; j < count; j += line_values) request_line(row + j);
                }
            }
            for (std::size_t at = start[k]; at < start[k + 1]; ++at) {
                const std::size_t i = by_row[at];
                summer.apply(plan.role[i], reads[i].factor, reads[i].source, first, count, sum.data(), span.data(),
                             false);
            }
            sink.take(k, first, count, span.data());
        }
    };
    if (sink.whole_rows()) {
        parallel(static_cast<Index>(listed), [&](Index begin, Index end) {
            gather(static_cast<std::size_t>(begin), static_cast<std::size_t>(end), 0, width);
        });
    } else {
        const Index shares = (width + columns_per_share - 1) / columns_per_share;
        parallel(shares, [&](Index begin, Index end) {
            const Index first = begin * columns_per_share;
            gather(0, listed, first, std::min(width, end * columns_per_share) - first);
        });
    }
}

/// The row-sparse gradient of a table from its reads (in order of source row), by sum_tables.
template <typename Scalar, typename Parallel = OneThread>
RowGradient<Scalar> sum_reads(const std::vector<RowRead<Scalar>>& reads, const GradientRows<Scalar>& rows,
                              Index table_rows, Index width, const Parallel& parallel = {}) {
    ReadPlan plan = plan_reads(reads, table_rows);
    RowGradient<Scalar> out;
    out.table_rows = table_rows;
    out.d_model = width;
    out.values = new_output<Scalar>(static_cast<Index>(plan.rows.size()), width);
    std::vector<RowMatrix<WideScalar<Scalar>>> sums;
    sum_tables<Scalar>({{&reads, &plan, out.values.data()}}, rows, width, sums, parallel);
    out.rows = std::move(plan.rows);
    return out;
}


}  // namespace seqembed::detail

namespace seqembed::detail {

/// Rows per block of LayerNorm's backward: gamma's and beta's gradients are summed per block of
/// this many rows, then the blocks in order, whatever the number of workers.
inline constexpr Index norm_rows_per_block = 64;

/// LayerNorm's backward of rows rows[0 .. count) (x's row r at x + r * x_stride, dx's at
/// dx + r * dx_stride, g's row r of `g`, through its mask): each row by GradientKernel::norm_row,
/// gamma's and beta's gradients summed per block of norm_rows_per_block listed rows, then the
/// blocks in order, in WideScalar, and written to gamma_out and beta_out. Blocks are shared
/// between the executor's workers; the bits do not depend on how. The blocks' sums are kept in
/// `partial`, whose memory is reused.
/// @throws value_error as active_isa(); std::bad_alloc.
template <typename Scalar, typename Parallel = OneThread>
void layer_norm_backward(const Index* rows, Index count, const Scalar* x, Index x_stride, const GradientRows<Scalar>& g,
                         Scalar* dx, Index dx_stride, const Scalar* gamma, Scalar epsilon, Index width,
                         Scalar* gamma_out, Scalar* beta_out, std::vector<WideScalar<Scalar>>& partial,
                         const Parallel& parallel = {}) {
    using Wide = WideScalar<Scalar>;
    const Index blocks = (count + norm_rows_per_block - 1) / norm_rows_per_block;
    partial.assign(static_cast<std::size_t>(2 * blocks * width), Wide(0));
    const ReadSummer<Scalar> summer(g, width);
    parallel(blocks, [&](Index begin, Index end) {
        for (Index block = begin; block < end; ++block) {
            Wide* gamma_sum = partial.data() + 2 * block * width;
            Wide* beta_sum = gamma_sum + width;
            const Index last = std::min(count, (block + 1) * norm_rows_per_block);
            for (Index k = block * norm_rows_per_block; k < last; ++k) {
                const Index r = rows[k];
                summer.norm_row(r, x + r * x_stride, gamma, epsilon, dx + r * dx_stride, gamma_sum, beta_sum);
            }
        }
    });
    // Each value's blocks in order, the blocks' rows read one after the other.
    std::vector<Wide> totals(static_cast<std::size_t>(2 * width), Wide(0));
    for (Index block = 0; block < blocks; ++block)
        for (Index j = 0; j < 2 * width; ++j)
            totals[static_cast<std::size_t>(j)] += partial[static_cast<std::size_t>(2 * block * width + j)];
    for (Index j = 0; j < width; ++j) {
        gamma_out[j] = static_cast<Scalar>(totals[static_cast<std::size_t>(j)]);
        beta_out[j] = static_cast<Scalar>(totals[static_cast<std::size_t>(width + j)]);
    }
}

}  // namespace seqembed::detail
