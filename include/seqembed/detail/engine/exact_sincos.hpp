/// @file detail/exact_sincos.hpp
/// @brief sin and cos of position x frequency, accurate to the last bit of a float.
///
/// The angle is carried as an unevaluated sum of two doubles (about 106 bits), reduced by pi/2
/// with a three-part constant, and only the reduced angle (|r| <= pi/4) goes through std::sin
/// and std::cos, with a first-order correction for its low part. The frequency comes from long
/// double (64-bit mantissa on x86), so for positions below 1e6 the result is within about 1e-13
/// of the exact value before the final rounding: a float result is the correctly rounded value
/// or its neighbour.
#pragma once

#include <cmath>
#include <cstdint>

#include "../simd/platform.hpp"


namespace seqembed::detail {

/// A value carried as hi + lo, |lo| <= ulp(hi) / 2.
struct DoubleDouble {
    double hi = 0.0;
    double lo = 0.0;
};

/// base^(-exponent_numerator / exponent_denominator) in long double, split into two doubles.
inline DoubleDouble inverse_frequency(double base, double exponent_numerator,
                                      double exponent_denominator) {
    const long double exponent = static_cast<long double>(exponent_numerator) /
                                 static_cast<long double>(exponent_denominator);
    const long double value = std::exp(-exponent * std::log(static_cast<long double>(base)));
    const double hi = static_cast<double>(value);
    return {hi, static_cast<double>(value - static_cast<long double>(hi))};
}

/// A frequency split for the fast path: high has at most 26 significant bits, so that
/// position * high is exact for positions below 2^26; high + middle is the double nearest the
/// frequency and low the rest of its long double value.
struct SplitFrequency {
    double high = 0.0;
    double middle = 0.0;
    double low = 0.0;
};

/// Splits a frequency carried as hi + lo (see inverse_frequency).
inline SplitFrequency split_frequency(DoubleDouble frequency) {
    // Veltkamp's split: 2^27 + 1 leaves the top 26 bits in high, the other 27 in middle.
    // The product is rounded on its own: fused into the subtraction (GCC contracts wherever FMA
    // exists, as on AArch64), high would keep more than 26 bits and position * high be inexact.
    double scaled = frequency.hi * 134217729.0;
    keep_rounded(scaled);
    const double high = scaled - (scaled - frequency.hi);
    return {high, frequency.hi - high, frequency.lo};
}

/// Positions below this go through exact_sin_cos_block.
inline constexpr double fast_path_position_limit = 67108864.0;  // 2^26

/// Frequencies handled per call of exact_sin_cos_block (detail/engine/kernels-inl.hpp), which
/// computes sin and cos of position * f for an integer position below 2^26 in magnitude:
/// straight-line double arithmetic with every product rounded before the sum it feeds, no call
/// into the C library. position * f is exact as high + middle products plus a tiny low product;
/// pi/2 in four parts of at most 26 bits makes quadrant * part exact; Taylor polynomials to
/// degree 17 (sin) and 18 (cos) leave a truncation below 1e-19 on |r| <= pi/4. The error is about
/// 1e-16 relative to each result: a float rounding of it is within 1 ulp of the exact value.
inline constexpr int exact_sin_cos_block_size = 64;

/// The largest magnitude of a position the tables compute: 2^53, past which not every integer is
/// a double.
inline constexpr std::int64_t max_exact_position = std::int64_t{1} << 53;

/// sin (or cos) of position * frequency; position must be an integer below 2^53 in magnitude.
inline double exact_sin_or_cos(double position, DoubleDouble frequency, bool cosine) {
    // pi/2 as three doubles, and 2/pi.
    constexpr double half_pi_1 = 0x1.921fb54442d18p+0;
    constexpr double half_pi_2 = 0x1.1a62633145c07p-54;
    constexpr double half_pi_3 = -0x1.f1976b7ed8fbcp-110;
    constexpr double two_over_pi = 0x1.45f306dc9c883p-1;

    // angle = position * frequency, exactly up to the frequency's own error.
    const double product = position * frequency.hi;
    const double product_error = std::fma(position, frequency.hi, -product) + position * frequency.lo;
    const double angle_hi = product + product_error;
    const double angle_lo = product_error - (angle_hi - product);

    // r = angle - quadrant * pi/2; the first step is exact because both terms are multiples of
    // 2^-52 and their difference is below 1.
    const double quadrant = std::nearbyint(angle_hi * two_over_pi);
    const double first = std::fma(-quadrant, half_pi_1, angle_hi);
    const double second = quadrant * half_pi_2;
    const double second_error = std::fma(quadrant, half_pi_2, -second);
    const double reduced = first - second;
    const double reduced_error = ((first - reduced) - second) - second_error -
                                 quadrant * half_pi_3 + angle_lo;
    const double r = reduced + reduced_error;
    const double r_lo = reduced_error - (r - reduced);

    const double sin_r = std::sin(r) + std::cos(r) * r_lo;
    const double cos_r = std::cos(r) - std::sin(r) * r_lo;
    // sin(r + q pi/2) and cos(r + q pi/2) by quadrant; cos(x) = sin(x + pi/2).
    const auto q = static_cast<std::int64_t>(quadrant) + (cosine ? 1 : 0);
    switch (q & 3) {
        case 0: return sin_r;
        case 1: return cos_r;
        case 2: return -sin_r;
        default: return -cos_r;
    }
}

}  // namespace seqembed::detail
