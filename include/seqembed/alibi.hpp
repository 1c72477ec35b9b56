/// @file alibi.hpp
/// @brief AlibiBias: the attention bias of ALiBi (BLOOM, MPT), a slope per head times the key's
///        position, for batches with padding.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "detail/checks.hpp"
#include "detail/simd/platform.hpp"
#include "error.hpp"
#include "padding.hpp"
#include "table_options.hpp"
#include "types.hpp"

namespace seqembed {

/// @brief Whose ALiBi: the slopes' rule and what a key's position is.
enum class AlibiFamily {
    /// Hugging Face BLOOM (`build_alibi_tensor`): for n heads and p = the largest power of two
    /// <= n, slopes 2^(-8k/p) for k = 1..p, then 2^(-4k/p) for k = 1, 3, 5, ... for the other
    /// n - p heads; a key's position is the number of real tokens before it (padded keys: 0).
    bloom,
    /// Hugging Face MPT (`build_mpt_alibi_tensor`): for P = the smallest power of two >= n,
    /// slopes 2^(-m * alibi_bias_max / P) for m = 1..P, reordered as the odd-indexed ones, then
    /// the even-indexed ones, and cut to n when n < P; a key's position is its index minus
    /// (seq - 1), whatever the padding (MPT masks padded keys in attention, not in the bias).
    mpt,
    /// Hugging Face Falcon with `alibi: true` (its `build_alibi_tensor`): BLOOM's float32 slopes
    /// and positions, in bfloat16: the slope and the position rounded to bfloat16, their product
    /// rounded to bfloat16, whatever the precision option (that arithmetic is the bias). Falcon
    /// adds it to q . k before its 1 / sqrt(head_dim) scaling: to already scaled scores, add the
    /// bias divided by sqrt(head_dim).
    falcon
};

/// @brief The configuration of an AlibiBias.
/// @code
/// seqembed::AlibiBias<float> bloom(112);                                  // BLOOM-176B's heads
/// seqembed::AlibiBias<float> mpt(32, seqembed::AlibiOptions::mpt(8.0));   // MPT-7B
/// @endcode
struct AlibiOptions {
    /// @brief BLOOM's or MPT's slopes and positions.
    AlibiFamily family = AlibiFamily::bloom;
    /// @brief MPT's `alibi_bias_max` (8 in MPT's configs): the last slope is 2^-alibi_bias_max.
    ///        Unused by BLOOM.
    double alibi_bias_max = 8.0;
    /// @brief exact: the real slopes, and slope x position rounded once to Scalar; follow_scalar:
    ///        Hugging Face's float32 steps (slopes from float32 powers, float32 products),
    ///        converted to Scalar, as BLOOM's `build_alibi_tensor(..., dtype)` returns them.
    TablePrecision precision = TablePrecision::exact;

    /// @brief BLOOM's slopes and positions.
    /// @return the defaults: family bloom, exact.
    static AlibiOptions bloom() { return {}; }
    /// @brief MPT's slopes and positions.
    /// @param alibi_bias_max the config's `alibi_bias_max` (8 unless it says otherwise).
    /// @return family mpt with that alibi_bias_max, exact.
    static AlibiOptions mpt(double alibi_bias_max = 8.0) {
        AlibiOptions options;
        options.family = AlibiFamily::mpt;
        options.alibi_bias_max = alibi_bias_max;
        return options;
    }
    /// @brief Falcon's (`alibi: true`): BLOOM's slopes and positions in bfloat16 arithmetic.
    /// @return family falcon.
    static AlibiOptions falcon() {
        AlibiOptions options;
        options.family = AlibiFamily::falcon;
        return options;
    }
};

/// @brief ALiBi's attention bias: for head h and key t of sequence b, slope[h] x position(b, t),
///        added to the attention scores of every query of that head (a key's bias shifts all of a
///        query's scores by one amount per key, so BLOOM's absolute positions and MPT's relative
///        ones give the same softmax).
///
/// The output has a row per (sequence, head), row b * heads + h, and a column per key, as BLOOM's
/// `build_alibi_tensor` reshapes it to (batch * heads, 1, seq). Const: thread-safe.
/// @tparam Scalar float or double.
/// @code
/// seqembed::AlibiBias<float> alibi(16);
/// auto bias = alibi.forward(input_ids, seqembed::Padding::from_mask(attention_mask));  // (b*16) x seq
/// @endcode
template <typename Scalar = float>
class AlibiBias {
    static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                  "seqembed::AlibiBias<Scalar>: Scalar must be float or double");

public:
    /// @brief A column of per-head values.
    using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

    /// @brief The slopes of `heads` heads under `options`.
    /// @param heads the model's attention heads, in [1, 2^20].
    /// @param options family, MPT's alibi_bias_max, precision.
    /// @throws value_error for heads outside [1, 2^20] or (MPT) an alibi_bias_max that is not
    ///         finite and positive.
    explicit AlibiBias(Index heads, AlibiOptions options = {}) : m_heads(heads), m_options(options) {
        if (heads < 1 || heads > max_heads)
            detail::fail<value_error>("ALiBi heads ", heads, " is outside [1, ", max_heads, "]");
        if (options.family == AlibiFamily::mpt &&
            !(std::isfinite(options.alibi_bias_max) && options.alibi_bias_max > 0.0 &&
              options.alibi_bias_max <= 1024.0))
            detail::fail<value_error>("MPT alibi_bias_max ", options.alibi_bias_max, " is outside (0, 1024]");
        m_exact.resize(static_cast<std::size_t>(heads));
        m_follow.resize(static_cast<std::size_t>(heads));
        if (options.family != AlibiFamily::mpt) {
            bloom_slopes();
        } else {
            mpt_slopes();
        }
        m_slopes.resize(heads);
        for (Index h = 0; h < heads; ++h) {
            const auto k = static_cast<std::size_t>(h);
            m_slopes[h] = falcon()  ? static_cast<Scalar>(bfloat16_of(m_follow[k]))
                          : exact() ? static_cast<Scalar>(m_exact[k])
                                    : static_cast<Scalar>(m_follow[k]);
        }
    }

    /// @brief The heads given to the constructor.
    /// @return heads, >= 1.
    Index heads() const noexcept { return m_heads; }
    /// @brief The options given to the constructor.
    /// @return the options.
    const AlibiOptions& options() const noexcept { return m_options; }
    /// @brief The slope of each head, in Scalar (exact: the real slope rounded once; follow:
    ///        Hugging Face's float32 slope; Falcon's: that slope rounded to bfloat16).
    /// @return heads values.
    const Vector& slopes() const noexcept { return m_slopes; }

    /// @brief The bias for a batch.
    /// @param ids the batch x seq token ids (their shape, and the padding ids of Padding::by_id).
    /// @param padding which tokens are real (BLOOM numbers keys by the real tokens before them;
    ///        MPT ignores it).
    /// @return a (batch * heads) x seq matrix: row b * heads + h holds head h's bias for the keys
    ///         of sequence b.
    /// @throws shape_error, value_error as Padding::require_fits.
    RowMatrix<Scalar> forward(const TokenIds& ids, const Padding& padding = Padding::none()) const {
        padding.require_fits(ids);
        RowMatrix<Scalar> out(ids.rows() * m_heads, ids.cols());
        write(ids, padding, out);
        return out;
    }

    /// @brief forward() into caller memory, allocating nothing.
    /// @param ids the batch x seq token ids.
    /// @param padding which tokens are real.
    /// @param out a (batch * heads) x seq matrix; left unchanged when this throws.
    /// @throws shape_error for a wrong out shape; shape_error, value_error as
    ///         Padding::require_fits.
    void forward_into(const TokenIds& ids, const Padding& padding, Eigen::Ref<RowMatrix<Scalar>> out) const {
        padding.require_fits(ids);
        detail::require_shape("ALiBi output", out.rows(), out.cols(), ids.rows() * m_heads, ids.cols());
        write(ids, padding, out);
    }

private:
    static constexpr Index max_heads = Index{1} << 20;

    bool exact() const noexcept { return m_options.precision == TablePrecision::exact; }
    bool falcon() const noexcept { return m_options.family == AlibiFamily::falcon; }
    /// x rounded to bfloat16 (to nearest even), as a float.
    static float bfloat16_of(float x) noexcept { return static_cast<float>(Eigen::bfloat16(x)); }

    /// 2^exponent, the exponent exact (a small rational with a power-of-two denominator).
    static long double power_of_two(long double exponent) noexcept { return std::exp2(exponent); }

    /// The float nearest x, computed from a long double within an ulp of its own (a double
    /// rounding only for x within 2^-40 ulp of a tie).
    static float to_float(long double x) noexcept { return static_cast<float>(x); }

    void bloom_slopes() {
        Index power = 1;
        while (power * 2 <= m_heads) power *= 2;
        // Hugging Face: base = 2 ** (-(2 ** -(log2(power) - 3))) in Python doubles, rounded to a
        // float32 tensor; slopes = torch.pow(base, k) in float32.
        const auto add = [&](Index first, Index slope_power, Index exponent_step, Index count) {
            const long double step = -8.0L / static_cast<long double>(slope_power);
            const float base = static_cast<float>(static_cast<double>(power_of_two(step)));
            for (Index i = 0; i < count; ++i) {
                const Index k = 1 + exponent_step * i;
                const auto slot = static_cast<std::size_t>(first + i);
                m_exact[slot] = power_of_two(step * static_cast<long double>(k));
                m_follow[slot] = to_float(std::pow(static_cast<long double>(base), static_cast<long double>(k)));
            }
        };
        add(0, power, 1, power);
        if (power != m_heads) add(power, 2 * power, 2, std::min(power, m_heads - power));
    }

    void mpt_slopes() {
        Index power = 1;
        while (power < m_heads) power *= 2;
        // Hugging Face: base = arange(1, P + 1).float() * (alibi_bias_max / P) in float32 (the
        // Python quotient rounded to float32); slopes = 1.0 / torch.pow(2, base).
        const auto step = static_cast<float>(m_options.alibi_bias_max / static_cast<double>(power));
        std::vector<long double> exact(static_cast<std::size_t>(power));
        std::vector<float> follow(static_cast<std::size_t>(power));
        for (Index m = 1; m <= power; ++m) {
            const auto slot = static_cast<std::size_t>(m - 1);
            exact[slot] = power_of_two(-static_cast<long double>(m) * static_cast<long double>(m_options.alibi_bias_max) /
                                       static_cast<long double>(power));
            float exponent = static_cast<float>(m) * step;
            detail::keep_rounded(exponent);
            const float divisor = to_float(power_of_two(static_cast<long double>(exponent)));
            follow[slot] = 1.0f / divisor;
        }
        // When the heads are not a power of two: the odd-indexed slopes first, then the
        // even-indexed ones, cut to the heads.
        const bool reorder = power != m_heads;
        for (Index h = 0; h < m_heads; ++h) {
            const Index odd = power / 2;  // how many odd-indexed slopes come first
            const Index m = !reorder ? h : h < odd ? 2 * h + 1 : 2 * (h - odd);
            m_exact[static_cast<std::size_t>(h)] = exact[static_cast<std::size_t>(m)];
            m_follow[static_cast<std::size_t>(h)] = follow[static_cast<std::size_t>(m)];
        }
    }

    template <typename Out>
    void write(const TokenIds& ids, const Padding& padding, Out& out) const {
        const Index seq = ids.cols();
        const bool bloom = m_options.family != AlibiFamily::mpt;  // Falcon numbers keys as BLOOM
        padding.for_each_token(ids, 0, ids.rows(), [&](Index b, Index t, std::int64_t real_before) {
            const std::int64_t position =
                bloom ? (real_before < 0 ? 0 : real_before) : static_cast<std::int64_t>(t - (seq - 1));
            for (Index h = 0; h < m_heads; ++h) out(b * m_heads + h, t) = bias(h, position);
        });
    }

    Scalar bias(Index head, std::int64_t position) const noexcept {
        const auto slot = static_cast<std::size_t>(head);
        if (falcon())  // slopes.bfloat16() * positions: both rounded to bfloat16, then the product
            return static_cast<Scalar>(
                bfloat16_of(bfloat16_of(m_follow[slot]) * bfloat16_of(static_cast<float>(position))));
        if (exact()) return static_cast<Scalar>(m_exact[slot] * static_cast<long double>(position));
        // Hugging Face: the int64 positions times the float32 slopes, in float32.
        float product = m_follow[slot] * static_cast<float>(position);
        detail::keep_rounded(product);
        return static_cast<Scalar>(product);
    }

    Index m_heads;
    AlibiOptions m_options;
    std::vector<long double> m_exact;  // the real slopes, within an ulp of long double
    std::vector<float> m_follow;       // Hugging Face's float32 slopes
    Vector m_slopes;
};

}  // namespace seqembed
