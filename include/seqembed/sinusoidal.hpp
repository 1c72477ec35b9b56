/// @file sinusoidal.hpp
/// @brief SinusoidalPositionalEncoding: the fixed sin/cos position table of "Attention Is All You
///        Need", in the conventions of the frameworks that weights are ported from.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <new>
#include <type_traits>
#include <vector>

#include "detail/checks.hpp"
#include "detail/engine/exact_sincos.hpp"
#include "detail/engine/float32_math.hpp"
#include "detail/engine/kernels.hpp"
#include "detail/stage_access.hpp"
#include "detail/row_table.hpp"
#include "error.hpp"
#include "table_options.hpp"
#include "types.hpp"

namespace seqembed {

/// @brief How PyTorch code writes the frequency term; the two forms are equal in exact
///        arithmetic and round differently in float, so they matter only under
///        TablePrecision::follow_scalar.
///
/// log_space is the `div_term` of PyTorch's Transformer tutorial and of the Annotated
/// Transformer; direct_power is code that divides the position by `torch.pow(10000, 2i / d)`.
enum class DivTermForm {
    direct_power,  ///< pos / pow(base, e).
    log_space      ///< pos * exp(e_numerator * (-ln(base) / e_denominator)).
};

/// @brief How log-space code computes its step ln(base) / e_denominator; the two ways round
///        differently in float, so they matter only under TablePrecision::follow_scalar with
///        DivTermForm::log_space.
enum class LogStep {
    /// In double, rounded once to Scalar: Python's `math.log(base) / d` meeting a tensor
    /// (PyTorch's tutorial, seed 001, fairseq and Hugging Face's copies of it).
    rounded_from_double,
    /// ln(base) rounded to Scalar, then divided in Scalar: a float tensor's log (seed 004's
    /// `torch.log(torch.tensor(10000.0)) / d`), C++'s `std::log(10000.f) / n` (Marian,
    /// CTranslate2), a Python float divided by a float32 tensor (tensor2tensor).
    in_scalar
};

/// @brief Where the sines and cosines go in a row.
enum class SinCosLayout {
    interleaved,  ///< sin at even columns, cos at odd columns: the paper and its PyTorch ports.
    concatenated  ///< [sin | cos]: tensor2tensor, fairseq, Marian, CTranslate2.
};

/// @brief Which set of frequencies: base^(-e_k) for frequency k.
enum class FrequencyFamily {
    paper,         ///< e_k = 2k / d_model (the paper, its PyTorch ports, Hugging Face Marian).
    tensor2tensor  ///< e_k = k / max(d_model/2 - 1, 1) (tensor2tensor, fairseq, Marian, CTranslate2).
};

/// @brief What the extra column of an odd d_model holds.
enum class OddWidth {
    /// One more sine: frequency (d_model-1)/2 (the natural extension of PE(p, 2i) = sin, as
    /// Hugging Face Marian does for its concatenated layout).
    extra_sine,
    /// A zero column at the end (tensor2tensor, fairseq).
    zero_column
};

/// @brief The configuration of a SinusoidalPositionalEncoding. Start from a preset and change
///        what differs.
/// @code
/// auto options = seqembed::SinusoidalOptions::fairseq(/*padding_idx=*/1);
/// options.max_positions = 1024;
/// seqembed::SinusoidalPositionalEncoding<float> positions(512, options);
/// @endcode
struct SinusoidalOptions {
    /// @brief Rows precomputed, one per token position (5000, the max_len common in PyTorch
    ///        code).
    Index max_positions = 5000;
    /// @brief The base of the frequencies (10000).
    double base = 10000.0;
    /// @brief Form of the frequency term (matters under TablePrecision::follow_scalar only).
    DivTermForm form = DivTermForm::log_space;
    /// @brief How the log-space step is rounded (matters under TablePrecision::follow_scalar
    ///        only).
    LogStep log_step = LogStep::rounded_from_double;
    /// @brief Interleaved or concatenated sin/cos.
    SinCosLayout layout = SinCosLayout::interleaved;
    /// @brief Paper or tensor2tensor frequencies.
    FrequencyFamily family = FrequencyFamily::paper;
    /// @brief Position value of the first token: 0 for the paper, 1 for CTranslate2,
    ///        padding_idx + 1 for fairseq. Row t of the table encodes position offset + t.
    std::int64_t offset = 0;
    /// @brief Exact (default) or PyTorch-like Scalar arithmetic.
    TablePrecision precision = TablePrecision::exact;
    /// @brief The last column of an odd d_model.
    OddWidth odd_width = OddWidth::extra_sine;
    /// @brief Past max_positions: throw or compute.
    BeyondTable beyond = BeyondTable::throw_error;
    /// @brief Whether position -1 reads a zero row, as fairseq's table zeroes its row
    ///        padding_idx (the one before the first position): the position a pad id takes under
    ///        PositionNumbering::non_padding_ids (fairseq's make_positions) and a padded token
    ///        under PositionNumbering::real_tokens, read under PaddedRows::computed. Off, that
    ///        position has no row (an index_error).
    bool zero_padding_position = false;

    /// @brief The paper's encoding, as PyTorch code computes it: interleaved, exponent 2i/d,
    ///        positions from 0, error past the table.
    /// @return every member at its default: max_positions 5000, base 10000, log_space
    ///         (rounded_from_double: `math.log`, as seed 001), interleaved, FrequencyFamily::paper,
    ///         offset 0, exact, extra_sine, throw_error. Seed 004's float `torch.log` is
    ///         log_step LogStep::in_scalar.
    static SinusoidalOptions paper() { return {}; }
    /// @brief tensor2tensor's get_timing_signal_1d: concatenated, exponent i/(d/2-1), positions
    ///        from 0, computed at any length, zero last column for odd d.
    /// @return paper() with layout concatenated, family tensor2tensor, log_step in_scalar (a
    ///         Python float divided by a float32 tensor), odd_width zero_column and beyond
    ///         compute (rows past max_positions computed on the fly).
    static SinusoidalOptions tensor2tensor() {
        SinusoidalOptions options;
        options.log_step = LogStep::in_scalar;
        options.layout = SinCosLayout::concatenated;
        options.family = FrequencyFamily::tensor2tensor;
        options.odd_width = OddWidth::zero_column;
        options.beyond = BeyondTable::compute;
        return options;
    }
    /// @brief fairseq's SinusoidalPositionalEmbedding: as tensor2tensor, with the first token at
    ///        position padding_idx + 1.
    /// @param padding_idx the dictionary's padding index (1 in fairseq's dictionaries).
    /// @return tensor2tensor() with offset padding_idx + 1, log_step rounded_from_double
    ///         (`math.log(10000) / (half_dim - 1)`) and zero_padding_position (pad ids read
    ///         fairseq's zeroed row padding_idx; number with PositionNumbering::non_padding_ids).
    /// @throws index_error if padding_idx + 1 overflows std::int64_t.
    static SinusoidalOptions fairseq(std::int64_t padding_idx = 1) {
        SinusoidalOptions options = tensor2tensor();
        options.log_step = LogStep::rounded_from_double;
        options.zero_padding_position = true;
        options.offset = detail::checked_add("fairseq first position", padding_idx, 1);
        return options;
    }
    /// @brief Marian (C++): as tensor2tensor (`std::log(10000.f) / (n - 1.f)`), positions from 0
    ///        plus the decoding step.
    /// @return the same options as tensor2tensor(); pass the step as InputPipeline's
    ///         offsets.
    static SinusoidalOptions marian() { return tensor2tensor(); }
    /// @brief Hugging Face MarianSinusoidalPositionalEmbedding: concatenated with the paper's
    ///        exponent 2i/d, the sine half taking the extra column of an odd width, a 512-row
    ///        table (max_position_embeddings). Hugging Face computes it in numpy float64 and
    ///        rounds it to float32 once, which the default exact precision gives (as for
    ///        Pegasus's and DistilBERT's sinusoidal tables); follow_scalar would not.
    /// @return paper() with layout concatenated, form direct_power (np.power) and max_positions 512;
    ///         rows past 512 throw.
    static SinusoidalOptions hf_marian() {
        SinusoidalOptions options;
        options.layout = SinCosLayout::concatenated;
        options.form = DivTermForm::direct_power;
        options.max_positions = 512;
        return options;
    }
    /// @brief CTranslate2's sinusoidal encoder: as tensor2tensor (`std::log(10000.f) /
    ///        float(depth / 2 - 1)`), with the first token at position 1.
    /// @return tensor2tensor() with offset 1.
    static SinusoidalOptions ctranslate2() {
        SinusoidalOptions options = tensor2tensor();
        options.offset = 1;
        return options;
    }
};

/// @brief The sinusoidal position table, precomputed for max_positions positions.
///
/// Row t (t = 0, 1, ...) holds the encoding of position value offset + t. Column
/// layout, frequencies and precision follow SinusoidalOptions. An odd d_model is defined by
/// OddWidth: never out of bounds.
/// @tparam Scalar float or double.
/// @code
/// seqembed::SinusoidalPositionalEncoding<float> pe(512);    // the paper, 5000 rows
/// auto first_ten = pe.rows(0, 10);                         // a 10 x 512 view, no copy
/// @endcode
template <typename Scalar = float>
class SinusoidalPositionalEncoding {
    static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                  "SinusoidalPositionalEncoding<Scalar>: Scalar must be float or double");

public:
    /// @brief The options type.
    using Options = SinusoidalOptions;

    /// @brief Computes the table.
    /// @param d_model width of a row, > 0 (odd widths follow options.odd_width).
    /// @param options layout, frequencies, origin, precision, max_positions (> 0), base (finite, > 0).
    /// @throws value_error for d_model or max_positions <= 0, a bad base, a table too large, or a
    ///         offset whose positions would not stay below 2^53 in magnitude.
    explicit SinusoidalPositionalEncoding(Index d_model, const SinusoidalOptions& options = {})
        : m_options(checked(d_model, options)),
          m_d_model(d_model),
          m_table("sinusoidal table", m_options.max_positions, d_model) {
        detail::run_or_fail_on_bad_alloc<value_error>([&] { plan_columns(); }, "sinusoidal table of ",
                                                      options.max_positions, " x ", d_model,
                                                      " does not fit in memory");
        auto table = m_table.writable();
        for (Index t = 0; t < options.max_positions; ++t) compute_row(t, table.row(t).data());
    }

    /// @brief Width of a row.
    /// @return the d_model given to the constructor, > 0.
    Index d_model() const noexcept { return m_d_model; }
    /// @brief Rows precomputed.
    /// @return options().max_positions, > 0.
    Index max_positions() const noexcept { return m_table.rows(); }
    /// @brief Position value of the first token (row 0).
    /// @return options().offset.
    std::int64_t offset() const noexcept { return m_options.offset; }
    /// @brief Whether the table views memory it did not compute: never.
    /// @return false (the table is always computed and owned).
    bool is_view() const noexcept { return false; }
    /// @brief The configuration.
    /// @return the options given to the constructor, valid while this encoding lives.
    const SinusoidalOptions& options() const noexcept { return m_options; }
    /// @brief Position value encoded by row token_index (offset + token_index).
    /// @param token_index index of the token in its sequence (plus any step offset).
    /// @return offset + token_index, the position value whose sines and cosines row
    ///         token_index holds.
    /// @throws index_error if the sum overflows std::int64_t.
    std::int64_t position_of(std::int64_t token_index) const {
        return detail::checked_add("position", m_options.offset, token_index);
    }

    /// @brief The whole precomputed table, as a read-only view.
    /// @return a max_positions x d_model row-major view (no copy), valid while this encoding lives.
    Eigen::Map<const RowMatrix<Scalar>> table() const noexcept {
        return m_table.matrix();
    }

    /// @brief A view of count precomputed rows starting at row first (no copy).
    /// @code
    /// seqembed::SinusoidalPositionalEncoding<float> pe(512);
    /// auto step = pe.rows(/*first=*/7, /*count=*/1);   // 1 x 512: row 7, the 8th token
    /// @endcode
    /// @param first first row (a step offset during incremental decoding).
    /// @param count number of rows.
    /// @return a count x d_model row-major view of rows first .. first + count - 1, valid while
    ///         this encoding lives. Only precomputed rows can be viewed, whatever
    ///         options.beyond says: use forward for rows past max_positions.
    /// @throws index_error if [first, first + count) is not inside [0, max_positions).
    Eigen::Map<const RowMatrix<Scalar>> rows(std::int64_t first, Index count) const {
        require_in_table(first, count);
        return {m_table.row(static_cast<Index>(first)), count, m_d_model};
    }

    /// @brief count rows starting at row first, computed past the table if options.beyond
    ///        allows it.
    /// @param first first row, >= 0.
    /// @param count number of rows, >= 0.
    /// @return a new count x d_model matrix: rows first .. first + count - 1, those past
    ///         max_positions computed in the table's precision.
    /// @throws index_error for a negative first or count, when first + count overflows, past
    ///         the table when options.beyond is throw_error, and otherwise for a position
    ///         beyond 2^53 in magnitude.
    RowMatrix<Scalar> forward(std::int64_t first, Index count) const {
        require_positions(first, count);
        detail::require_addressable<Scalar>("sinusoidal rows", count, m_d_model);
        RowMatrix<Scalar> out;
        detail::run_or_fail_on_bad_alloc<value_error>([&] { out.resize(count, m_d_model); }, count, " x ",
                                                      m_d_model, " sinusoidal rows do not fit in memory");
        forward_into(first, out);
        return out;
    }

    /// @brief As forward(first, out.rows()), into caller memory without allocating.
    /// @param first first row.
    /// @param out out.rows() x d_model.
    /// @throws shape_error if out.cols() != d_model; index_error as forward.
    void forward_into(std::int64_t first, Eigen::Ref<RowMatrix<Scalar>> out) const {
        if (out.cols() != m_d_model)
            detail::fail<shape_error>("output of SinusoidalPositionalEncoding::forward_into has ",
                                      out.cols(), " columns, expected d_model = ", m_d_model);
        require_positions(first, out.rows());
        for (Index r = 0; r < out.rows(); ++r) {
            Scalar* row = out.row(r).data();
            const Scalar* values = position_row(first + r, row);
            if (values != row) std::copy(values, values + m_d_model, row);
        }
    }

private:
    friend struct detail::StageAccess;

    /// Throws unless rows [first, first + count) can be produced, naming the rows and the
    /// table's length.
    void require_positions(std::int64_t first, Index count) const {
        if (first < 0 || count < 0)
            detail::fail<index_error>("positions [", first, ", ", first, " + ", count,
                                      ") start before the table");
        const std::int64_t end = detail::checked_add("position range", first, count);
        if (m_options.beyond == BeyondTable::throw_error) {
            require_in_table(first, count);
        } else if (count > 0 && end - 1 > max_exact_position - m_options.offset) {
            // |offset| <= 2^53 (checked at construction), so neither side overflows.
            detail::fail<index_error>("row ", end - 1, " encodes position offset (",
                                      m_options.offset, ") + ", end - 1,
                                      ", beyond 2^53, where positions are no longer exact");
        }
    }

    /// As require_positions, with position -1 reading the zero row of zero_padding_position.
    void require_positions_before_offset(std::int64_t first, Index count) const {
        if (m_options.zero_padding_position && first == -1 && count > 0) {
            require_positions(0, count - 1);
            return;
        }
        require_positions(first, count);
    }

    /// Row `row` (checked by require_positions, or -1 by require_positions_before_offset): the
    /// precomputed one, or computed into scratch (d_model values), or zeros for -1.
    const Scalar* position_row(std::int64_t row, Scalar* scratch) const {
        if (row < 0) {
            std::fill(scratch, scratch + m_d_model, Scalar(0));
            return scratch;
        }
        if (row < m_table.rows()) return m_table.row(static_cast<Index>(row));
        compute_row(row, scratch);
        return scratch;
    }

    static constexpr std::int64_t max_exact_position = detail::max_exact_position;

    /// What a column holds: which frequency, and sine, cosine or zero.
    struct Column {
        Index frequency = 0;
        enum class Kind : std::uint8_t { sine, cosine, zero } kind = Kind::zero;
    };

    static const SinusoidalOptions& checked(Index d_model, const SinusoidalOptions& options) {
        detail::require_positive("d_model", d_model);
        detail::require_positive("max_positions", options.max_positions);
        detail::require_addressable<Scalar>("sinusoidal table", options.max_positions, d_model);
        if (!(std::isfinite(options.base) && options.base > 0.0))
            detail::fail<value_error>("sinusoidal base must be finite and positive, got ",
                                      options.base);
        // Every row of the table, offset .. offset + max_positions - 1, within 2^53.
        if (options.offset < -max_exact_position ||
            options.offset > max_exact_position - (options.max_positions - 1))
            detail::fail<value_error>("offset ", options.offset, " with max_positions ",
                                      options.max_positions,
                                      " puts positions beyond 2^53, where they are no longer exact");
        return options;
    }

    void require_in_table(std::int64_t first, Index count) const {
        if (first < 0 || count < 0)
            detail::fail<index_error>("positions [", first, ", ", first, " + ", count,
                                      ") start before the table");
        if (first > m_table.rows() || count > m_table.rows() - first)
            detail::fail<index_error>("positions [", first, ", ", first, " + ", count,
                                      ") are past the sinusoidal table of ", m_table.rows(),
                                      " rows (max_positions); raise max_positions or set "
                                      "beyond = BeyondTable::compute");
    }

    /// Decides, once, what each column holds and its frequency in both precisions.
    void plan_columns() {
        const Index half = m_d_model / 2;
        const bool odd = (m_d_model % 2) != 0;
        const bool extra_sine = odd && m_options.odd_width == OddWidth::extra_sine;
        const Index sines = half + (extra_sine ? 1 : 0);
        m_columns.resize(static_cast<std::size_t>(m_d_model));
        for (Index j = 0; j < m_d_model; ++j) {
            Column& column = m_columns[static_cast<std::size_t>(j)];
            if (m_options.layout == SinCosLayout::interleaved) {
                column.frequency = j / 2;
                column.kind = (j % 2 == 0) ? Column::Kind::sine : Column::Kind::cosine;
                if (odd && j == m_d_model - 1 && !extra_sine) column.kind = Column::Kind::zero;
            } else if (j < sines) {
                column = {j, Column::Kind::sine};
            } else if (j < sines + half) {
                column = {j - sines, Column::Kind::cosine};
            }
        }
        const Index frequencies = sines;
        m_sine_column.assign(static_cast<std::size_t>(frequencies), -1);
        m_cosine_column.assign(static_cast<std::size_t>(frequencies), -1);
        for (Index j = 0; j < m_d_model; ++j) {
            const Column& column = m_columns[static_cast<std::size_t>(j)];
            if (column.kind == Column::Kind::sine)
                m_sine_column[static_cast<std::size_t>(column.frequency)] = j;
            if (column.kind == Column::Kind::cosine)
                m_cosine_column[static_cast<std::size_t>(column.frequency)] = j;
            if (column.kind == Column::Kind::zero) m_zero_columns.push_back(j);
        }
        // e_k = numerator_k / denominator.
        const bool paper = m_options.family == FrequencyFamily::paper;
        const double denominator =
            paper ? static_cast<double>(m_d_model) : static_cast<double>(std::max<Index>(half - 1, 1));
        m_exact_frequency.resize(static_cast<std::size_t>(frequencies));
        m_scalar_div_term.resize(static_cast<std::size_t>(frequencies));
        // The fast path reads whole blocks: pad with zero frequencies.
        const std::size_t padded = static_cast<std::size_t>(
            (frequencies + detail::exact_sin_cos_block_size - 1) / detail::exact_sin_cos_block_size * detail::exact_sin_cos_block_size);
        m_frequency_high.assign(padded, 0.0);
        m_frequency_middle.assign(padded, 0.0);
        m_frequency_low.assign(padded, 0.0);
        for (Index k = 0; k < frequencies; ++k) {
            const auto slot = static_cast<std::size_t>(k);
            const double numerator = paper ? 2.0 * static_cast<double>(k) : static_cast<double>(k);
            m_exact_frequency[slot] = detail::inverse_frequency(m_options.base, numerator, denominator);
            const detail::SplitFrequency split = detail::split_frequency(m_exact_frequency[slot]);
            m_frequency_high[slot] = split.high;
            m_frequency_middle[slot] = split.middle;
            m_frequency_low[slot] = split.low;
            m_scalar_div_term[slot] = scalar_frequency_term(numerator, denominator);
        }
    }

    /// PyTorch's frequency term in Scalar arithmetic: the denominator pow(base, e) for
    /// direct_power, the multiplier exp(numerator * (-ln(base) / denominator)) for log_space
    /// (float: correctly rounded).
    Scalar scalar_frequency_term(double numerator, double denominator) const {
        if (m_options.form == DivTermForm::direct_power) {
            const Scalar exponent = static_cast<Scalar>(numerator) / static_cast<Scalar>(denominator);
            if constexpr (std::is_same_v<Scalar, float>)
                return detail::correctly_rounded_pow(static_cast<float>(m_options.base), exponent);
            else
                return std::pow(static_cast<Scalar>(m_options.base), exponent);
        }
        // -math.log(base) / d is a Python double, rounded to Scalar when it meets the tensor;
        // or the log is a Scalar, divided in Scalar.
        const Scalar step = m_options.log_step == LogStep::in_scalar
                                ? -(static_cast<Scalar>(std::log(m_options.base)) / static_cast<Scalar>(denominator))
                                : static_cast<Scalar>(-std::log(m_options.base) / denominator);
        const Scalar product = static_cast<Scalar>(numerator) * step;
        if constexpr (std::is_same_v<Scalar, float>)
            return detail::correctly_rounded_exp(product);
        else
            return std::exp(product);
    }

    /// PyTorch's angle in Scalar arithmetic: position / pow(...) or position * exp(...).
    Scalar scalar_angle(std::int64_t position, Index frequency) const {
        const auto scalar_position = static_cast<Scalar>(position);
        const Scalar term = m_scalar_div_term[static_cast<std::size_t>(frequency)];
        return m_options.form == DivTermForm::direct_power ? scalar_position / term : scalar_position * term;
    }

    /// A float follow_scalar row: the float32 angles' correctly rounded sin and cos, a block of
    /// frequencies at a time.
    void compute_follow_float_row(std::int64_t position, Scalar* out) const {
        for (const Index j : m_zero_columns) out[j] = Scalar(0);
        const auto frequencies = static_cast<Index>(m_sine_column.size());
        constexpr Index block = detail::exact_sin_cos_block_size;
        float angles[block];
        alignas(64) double sines[block];
        alignas(64) double cosines[block];
        for (Index first = 0; first < frequencies; first += block) {
            const Index count = std::min<Index>(block, frequencies - first);
            for (Index i = 0; i < count; ++i) angles[i] = static_cast<float>(scalar_angle(position, first + i));
            detail::sin_cos_of_float_angles(angles, static_cast<int>(count), sines, cosines);
            for (Index i = 0; i < count; ++i) {
                const auto k = static_cast<std::size_t>(first + i);
                if (m_sine_column[k] >= 0) out[m_sine_column[k]] = static_cast<Scalar>(sines[i]);
                if (m_cosine_column[k] >= 0) out[m_cosine_column[k]] = static_cast<Scalar>(cosines[i]);
            }
        }
    }

    /// Writes the row of table row `row` to out.
    void compute_row(std::int64_t row, Scalar* out) const {
        const std::int64_t position = m_options.offset + row;
        if (m_options.precision == TablePrecision::exact &&
            std::abs(static_cast<double>(position)) < detail::fast_path_position_limit) {
            compute_exact_row(static_cast<double>(position), out);
            return;
        }
        if constexpr (std::is_same_v<Scalar, float>) {
            if (m_options.precision == TablePrecision::follow_scalar) {
                compute_follow_float_row(position, out);
                return;
            }
        }
        for (Index j = 0; j < m_d_model; ++j) {
            const Column& column = m_columns[static_cast<std::size_t>(j)];
            const Scalar v = column.kind == Column::Kind::zero
                                 ? Scalar(0)
                                 : value(position, column.frequency, column.kind == Column::Kind::cosine);
            out[j] = v;
        }
    }

    /// The exact row through the vectorised kernel, a block of frequencies at a time.
    void compute_exact_row(double position, Scalar* out) const {
        for (const Index j : m_zero_columns) out[j] = Scalar(0);
        const auto frequencies = static_cast<Index>(m_sine_column.size());
        alignas(64) double sines[detail::exact_sin_cos_block_size];
        alignas(64) double cosines[detail::exact_sin_cos_block_size];
        for (Index first = 0; first < frequencies; first += detail::exact_sin_cos_block_size) {
            const auto offset = static_cast<std::size_t>(first);
            detail::exact_sin_cos(position, m_frequency_high.data() + offset,
                                         m_frequency_middle.data() + offset,
                                         m_frequency_low.data() + offset, sines, cosines);
            const Index count = std::min<Index>(detail::exact_sin_cos_block_size, frequencies - first);
            for (Index i = 0; i < count; ++i) {
                const auto k = static_cast<std::size_t>(first + i);
                if (m_sine_column[k] >= 0)
                    out[m_sine_column[k]] = static_cast<Scalar>(sines[i]);
                if (m_cosine_column[k] >= 0)
                    out[m_cosine_column[k]] = static_cast<Scalar>(cosines[i]);
            }
        }
    }

    Scalar value(std::int64_t position, Index frequency, bool cosine) const {
        const auto k = static_cast<std::size_t>(frequency);
        if (m_options.precision == TablePrecision::exact)
            return static_cast<Scalar>(detail::exact_sin_or_cos(static_cast<double>(position),
                                                                m_exact_frequency[k], cosine));
        // A double follow_scalar value (float rows take compute_follow_float_row).
        const Scalar angle = scalar_angle(position, frequency);
        return cosine ? std::cos(angle) : std::sin(angle);
    }

    SinusoidalOptions m_options;
    Index m_d_model;
    std::vector<Column> m_columns;
    std::vector<Index> m_sine_column;    // per frequency: its sine column, or -1
    std::vector<Index> m_cosine_column;  // per frequency: its cosine column, or -1
    std::vector<Index> m_zero_columns;
    std::vector<detail::DoubleDouble> m_exact_frequency;
    std::vector<double> m_frequency_high;  // detail::SplitFrequency, as arrays for the kernel
    std::vector<double> m_frequency_middle;
    std::vector<double> m_frequency_low;
    std::vector<Scalar> m_scalar_div_term;  // follow_scalar: pow(base, e) or exp(-e ln base)
    // Owned table memory: 64-byte aligned rows whatever Eigen's alignment (the pipeline's
    // streaming rows read it in 64-byte vectors), huge pages when large.
    detail::RowTable<Scalar> m_table;
};

}  // namespace seqembed
