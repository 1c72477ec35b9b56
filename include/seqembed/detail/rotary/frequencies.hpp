/// @file detail/rotary/frequencies.hpp
/// @brief The frequency rules of Hugging Face's modeling_rope_utils.py, twice: in float32 as its
///        torch ops compute them (follow), and as real numbers evaluated in long double (exact).
///
/// Follow mode reproduces each torch op on a float32 tensor as one correctly rounded float
/// operation: a Python float meeting a float32 tensor is rounded to float32 first, `x / tensor`
/// is `tensor.reciprocal() * x` (torch's Tensor.__rtruediv__), `base ** tensor` is a float32 pow,
/// and the Python-float parts (dynamic NTK's base, YaRN's correction range, the attention
/// factors) are double arithmetic in Python's order, with every product rounded before the sum
/// it feeds (keep_rounded), as Python and torch round them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "../../types.hpp"
#include "../engine/float32_math.hpp"  // correctly_rounded_pow
#include "../simd/platform.hpp"

namespace seqembed::detail::rotary {

/// Python's float(x) * y with the product rounded on its own (no contraction into what follows).
inline double rounded_product(double x, double y) noexcept {
    double product = x * y;
    keep_rounded(product);
    return product;
}
inline float rounded_product(float x, float y) noexcept {
    float product = x * y;
    keep_rounded(product);
    return product;
}

// ------------------------------------------------------------------------------------------
// Follow mode: float32, op by op.

/// `base ** (torch.arange(0, dim, 2).float() / dim)`: pairs = dim / 2 float32 powers, the
/// exponent k / dim a float32 division and base (a Python number) rounded to float32. The power
/// is correctly rounded (torch's CPU pow, SLEEF's within 1 ulp, can differ from it in its last
/// bit; the fixtures say how often).
inline std::vector<float> follow_powers(double base, Index dim) {
    const auto pairs = static_cast<std::size_t>(dim / 2);
    std::vector<float> powers(pairs);
    const auto base32 = static_cast<float>(base);
    const auto dim32 = static_cast<float>(dim);
    for (std::size_t i = 0; i < pairs; ++i) {
        const float exponent = static_cast<float>(2 * i) / dim32;
        powers[i] = correctly_rounded_pow(base32, exponent);
    }
    return powers;
}

/// `_compute_default_rope_parameters`: 1.0 / base ** (arange / dim) (a reciprocal).
inline std::vector<float> follow_default(double base, Index dim) {
    std::vector<float> inv_freq = follow_powers(base, dim);
    for (float& value : inv_freq) value = 1.0f / value;
    return inv_freq;
}

/// `_compute_linear_scaling_rope_parameters`: the default, then `inv_freq /= factor`.
inline std::vector<float> follow_linear(double base, Index dim, double factor) {
    std::vector<float> inv_freq = follow_default(base, dim);
    const auto factor32 = static_cast<float>(factor);
    for (float& value : inv_freq) value = value / factor32;
    return inv_freq;
}

/// `_compute_dynamic_ntk_parameters` as the forward runs it: at or below
/// max_position_embeddings the init-time inv_freq, which is the default rule's (the Python-float
/// base there is base * 1.0); past it the rule is recomputed with `seq_len = max(position_ids) +
/// 1`, a 0-dim int64 tensor, which turns the new base into float32 arithmetic:
/// f32(factor) * f32(seq_len) / f32(max) - f32(factor - 1), then `** (dim / (dim - 2))` through
/// ATen's scalar loop (std::pow(float, double): a double power rounded to float), then
/// f32(base) * that.
inline std::vector<float> follow_dynamic(double base, Index dim, double factor, Index sequence_length,
                                         Index max_position_embeddings) {
    if (sequence_length <= max_position_embeddings) return follow_default(base, dim);
    const float scaled = rounded_product(static_cast<float>(factor), static_cast<float>(sequence_length)) /
                         static_cast<float>(max_position_embeddings);
    const float grown = scaled - static_cast<float>(factor - 1.0);
    const double exponent = static_cast<double>(dim) / static_cast<double>(dim - 2);
    const auto power = static_cast<float>(std::pow(static_cast<double>(grown), exponent));
    const float new_base = static_cast<float>(base) * power;
    return follow_default(static_cast<double>(new_base), dim);
}

/// YaRN's `find_correction_dim`, in Python floats.
inline double yarn_correction_dim(double rotations, Index dim, double base, Index max_position_embeddings) {
    constexpr double pi = 3.141592653589793;  // math.pi
    const double turns = rounded_product(rounded_product(rotations, 2.0), pi);
    const double numerator = rounded_product(static_cast<double>(dim),
                                             std::log(static_cast<double>(max_position_embeddings) / turns));
    return numerator / rounded_product(2.0, std::log(base));
}

/// YaRN's `find_correction_range`: (low, high) in dimension units, floored and ceiled when
/// truncate, clamped to [0, dim - 1].
struct CorrectionRange {
    double low = 0;
    double high = 0;
};
inline CorrectionRange yarn_correction_range(double beta_fast, double beta_slow, Index dim, double base,
                                             Index max_position_embeddings, bool truncate) {
    double low = yarn_correction_dim(beta_fast, dim, base, max_position_embeddings);
    double high = yarn_correction_dim(beta_slow, dim, base, max_position_embeddings);
    if (truncate) {
        low = std::floor(low);
        high = std::ceil(high);
    }
    return {std::max(low, 0.0), std::min(high, static_cast<double>(dim - 1))};
}

/// `_compute_yarn_parameters`' inv_freq: interpolation (1 / (factor * pos_freqs)) and
/// extrapolation (1 / pos_freqs) blended by 1 - clamp((arange(dim // 2) - low) / (high - low), 0, 1).
inline std::vector<float> follow_yarn(double base, Index dim, double factor, double beta_fast, double beta_slow,
                                      Index original_max_position_embeddings, bool truncate) {
    const std::vector<float> pos_freqs = follow_powers(base, dim);
    CorrectionRange range =
        yarn_correction_range(beta_fast, beta_slow, dim, base, original_max_position_embeddings, truncate);
    if (range.low == range.high) range.high += 0.001;  // linear_ramp_factor's guard
    const auto low32 = static_cast<float>(range.low);
    const auto span32 = static_cast<float>(range.high - range.low);
    const auto factor32 = static_cast<float>(factor);
    std::vector<float> inv_freq(pos_freqs.size());
    for (std::size_t i = 0; i < pos_freqs.size(); ++i) {
        const float ramp = std::clamp((static_cast<float>(i) - low32) / span32, 0.0f, 1.0f);
        const float extrapolation_factor = 1.0f - ramp;
        const float extrapolation = 1.0f / pos_freqs[i];
        const float interpolation = 1.0f / rounded_product(factor32, pos_freqs[i]);
        const float interpolated = rounded_product(interpolation, 1.0f - extrapolation_factor);
        const float extrapolated = rounded_product(extrapolation, extrapolation_factor);
        inv_freq[i] = interpolated + extrapolated;
    }
    return inv_freq;
}

/// `_compute_llama3_parameters`: wavelengths 2 pi / inv_freq above original / low_freq_factor
/// divided by factor, below original / high_freq_factor kept, between them blended.
inline std::vector<float> follow_llama3(double base, Index dim, double factor, double low_freq_factor,
                                        double high_freq_factor, Index original_max_position_embeddings) {
    std::vector<float> inv_freq = follow_default(base, dim);
    const auto old_context = static_cast<double>(original_max_position_embeddings);
    // Python floats, compared with a float32 tensor: rounded to float32.
    const auto low_freq_wavelen = static_cast<float>(old_context / low_freq_factor);
    const auto high_freq_wavelen = static_cast<float>(old_context / high_freq_factor);
    const auto two_pi = static_cast<float>(2 * 3.141592653589793);
    const auto factor32 = static_cast<float>(factor);
    const auto old_context32 = static_cast<float>(old_context);
    const auto low32 = static_cast<float>(low_freq_factor);
    const auto span32 = static_cast<float>(high_freq_factor - low_freq_factor);
    for (float& value : inv_freq) {
        const float wavelen = rounded_product(1.0f / value, two_pi);
        const float llama = wavelen > low_freq_wavelen ? value / factor32 : value;
        const bool medium = !(wavelen < high_freq_wavelen) && !(wavelen > low_freq_wavelen);
        if (medium) {
            const float smooth = (rounded_product(1.0f / wavelen, old_context32) - low32) / span32;
            const float scaled_part = rounded_product(1.0f - smooth, llama) / factor32;
            value = scaled_part + rounded_product(smooth, llama);
        } else {
            value = llama;
        }
    }
    return inv_freq;
}

/// `_compute_longrope_parameters`: 1.0 / (ext_factors * base ** (arange / dim)), ext_factors
/// the short or long list as a float32 tensor.
inline std::vector<float> follow_longrope(double base, Index dim, const std::vector<double>& ext_factors) {
    std::vector<float> inv_freq = follow_powers(base, dim);
    for (std::size_t i = 0; i < inv_freq.size(); ++i)
        inv_freq[i] = 1.0f / rounded_product(static_cast<float>(ext_factors[i]), inv_freq[i]);
    return inv_freq;
}

// ------------------------------------------------------------------------------------------
// Attention scaling, a Python float as Hugging Face computes it.

/// YaRN's get_mscale(scale, mscale) = 0.1 * mscale * log(scale) + 1, or 1 for scale <= 1.
inline double yarn_get_mscale(double scale, double mscale) {
    if (scale <= 1) return 1.0;
    return rounded_product(rounded_product(0.1, mscale), std::log(scale)) + 1.0;
}

/// YaRN's attention factor when the config gives none: get_mscale(factor, mscale) /
/// get_mscale(factor, mscale_all_dim) when both are set (nonzero), else get_mscale(factor).
inline double yarn_attention_factor(double factor, double mscale, double mscale_all_dim) {
    if (mscale != 0 && mscale_all_dim != 0)
        return yarn_get_mscale(factor, mscale) / yarn_get_mscale(factor, mscale_all_dim);
    return yarn_get_mscale(factor, 1.0);
}

/// LongRoPE's attention factor when the config gives none: sqrt(1 + log(factor) /
/// log(original_max_position_embeddings)), or 1 for factor <= 1.
inline double longrope_attention_factor(double factor, Index original_max_position_embeddings) {
    if (factor <= 1.0) return 1.0;
    return std::sqrt(1 + std::log(factor) / std::log(static_cast<double>(original_max_position_embeddings)));
}

/// The attention factors over the reals (exact mode): the same formulas in long double.
inline long double exact_yarn_attention_factor(long double factor, long double mscale, long double mscale_all_dim) {
    const auto get_mscale = [](long double scale, long double m) { return scale <= 1 ? 1.0L : 0.1L * m * std::log(scale) + 1; };
    if (mscale != 0 && mscale_all_dim != 0) return get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim);
    return get_mscale(factor, 1);
}
inline long double exact_longrope_attention_factor(long double factor, Index original_max_position_embeddings) {
    if (factor <= 1) return 1;
    return std::sqrt(1 + std::log(factor) / std::log(static_cast<long double>(original_max_position_embeddings)));
}

// ------------------------------------------------------------------------------------------
// Exact mode: the same formulas over the reals, evaluated in long double.

/// base^(-2i / dim) for i < dim / 2, through powl (within about an ulp of long double;
/// exp(-e ln base) would multiply the error of ln base by e ln base, up to 13 for theta 500000).
inline std::vector<long double> exact_default(long double base, Index dim) {
    const auto pairs = static_cast<std::size_t>(dim / 2);
    std::vector<long double> frequency(pairs);
    for (std::size_t i = 0; i < pairs; ++i) {
        const long double exponent = static_cast<long double>(2 * i) / static_cast<long double>(dim);
        frequency[i] = std::pow(base, -exponent);
    }
    return frequency;
}

inline std::vector<long double> exact_linear(long double base, Index dim, long double factor) {
    std::vector<long double> frequency = exact_default(base, dim);
    for (long double& value : frequency) value /= factor;
    return frequency;
}

inline std::vector<long double> exact_dynamic(long double base, Index dim, long double factor, Index sequence_length,
                                              Index max_position_embeddings) {
    const Index seq_len = std::max(sequence_length, max_position_embeddings);
    const long double grown = factor * static_cast<long double>(seq_len) / static_cast<long double>(max_position_embeddings) -
                              (factor - 1);
    const long double exponent = static_cast<long double>(dim) / static_cast<long double>(dim - 2);
    return exact_default(base * std::pow(grown, exponent), dim);
}

inline long double exact_correction_dim(long double rotations, Index dim, long double base,
                                        Index max_position_embeddings) {
    const long double pi = 3.14159265358979323846264338327950288L;
    return static_cast<long double>(dim) * std::log(static_cast<long double>(max_position_embeddings) / (rotations * 2 * pi)) /
           (2 * std::log(base));
}

inline std::vector<long double> exact_yarn(long double base, Index dim, long double factor, long double beta_fast,
                                           long double beta_slow, Index original_max_position_embeddings, bool truncate) {
    long double low = exact_correction_dim(beta_fast, dim, base, original_max_position_embeddings);
    long double high = exact_correction_dim(beta_slow, dim, base, original_max_position_embeddings);
    if (truncate) {
        low = std::floor(low);
        high = std::ceil(high);
    }
    low = std::max(low, 0.0L);
    high = std::min(high, static_cast<long double>(dim - 1));
    if (low == high) high += 0.001L;
    std::vector<long double> frequency = exact_default(base, dim);
    for (std::size_t i = 0; i < frequency.size(); ++i) {
        const long double ramp = std::clamp((static_cast<long double>(i) - low) / (high - low), 0.0L, 1.0L);
        const long double extrapolation_factor = 1 - ramp;
        frequency[i] *= (1 - extrapolation_factor) / factor + extrapolation_factor;
    }
    return frequency;
}

inline std::vector<long double> exact_llama3(long double base, Index dim, long double factor, long double low_freq_factor,
                                             long double high_freq_factor, Index original_max_position_embeddings) {
    const long double pi = 3.14159265358979323846264338327950288L;
    const auto old_context = static_cast<long double>(original_max_position_embeddings);
    const long double low_freq_wavelen = old_context / low_freq_factor;
    const long double high_freq_wavelen = old_context / high_freq_factor;
    std::vector<long double> frequency = exact_default(base, dim);
    for (long double& value : frequency) {
        const long double wavelen = 2 * pi / value;
        if (wavelen > low_freq_wavelen) {
            value /= factor;
        } else if (!(wavelen < high_freq_wavelen)) {
            const long double smooth = (old_context / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
            value = (1 - smooth) * value / factor + smooth * value;
        }
    }
    return frequency;
}

inline std::vector<long double> exact_longrope(long double base, Index dim, const std::vector<double>& ext_factors) {
    std::vector<long double> frequency = exact_default(base, dim);
    for (std::size_t i = 0; i < frequency.size(); ++i) frequency[i] /= static_cast<long double>(ext_factors[i]);
    return frequency;
}

}  // namespace seqembed::detail::rotary
