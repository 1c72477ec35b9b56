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
    const double scaled = frequency.hi * 134217729.0;
    const double high = scaled - (scaled - frequency.hi);
    return {high, frequency.hi - high, frequency.lo};
}

/// Positions below this go through sin_cos_of_multiples.
inline constexpr double fast_path_position_limit = 67108864.0;  // 2^26

/// Frequencies handled per call of sin_cos_of_multiples.
inline constexpr int sin_cos_block = 64;

/// sin and cos of position * f for sin_cos_block frequencies at once, for an integer position
/// below 2^26 in magnitude: straight-line double arithmetic that compilers vectorise, with no
/// FMA needed and no call into the C library. position * f is exact as high + middle products
/// plus a tiny low product; pi/2 in four parts of at most 26 bits makes quadrant * part exact;
/// Taylor polynomials to degree 17 (sin) and 18 (cos) leave a truncation below 1e-19 on
/// |r| <= pi/4. The error is about 1e-16 relative to each result: a float rounding of it is
/// within 1 ulp of the exact value.
inline void sin_cos_of_multiples(double position, const double* high, const double* middle,
                                 const double* low, double* sines, double* cosines) noexcept {
    constexpr double half_pi_1 = 0x1.921fb5p+0;
    constexpr double half_pi_2 = 0x1.110b46p-26;
    constexpr double half_pi_3 = 0x1.1a6263p-54;
    constexpr double half_pi_4 = 0x1.8a2e03707344ap-81;
    constexpr double two_over_pi = 0x1.45f306dc9c883p-1;
    constexpr double round_magic = 0x1.8p52;  // (x + m) - m rounds x to an integer, |x| < 2^51
    // sin r = r + r z (s1 + z (s2 + ...)), cos r = 1 - z/2 + z^2 (c2 + z (c3 + ...)), z = r^2.
    constexpr double s1 = -1.0 / 6, s2 = 1.0 / 120, s3 = -1.0 / 5040, s4 = 1.0 / 362880,
                     s5 = -1.0 / 39916800, s6 = 1.0 / 6227020800, s7 = -1.0 / 1307674368000,
                     s8 = 1.0 / 355687428096000;
    constexpr double c2 = 1.0 / 24, c3 = -1.0 / 720, c4 = 1.0 / 40320, c5 = -1.0 / 3628800,
                     c6 = 1.0 / 479001600, c7 = -1.0 / 87178291200, c8 = 1.0 / 20922789888000,
                     c9 = -1.0 / 6402373705728000;
    for (int i = 0; i < sin_cos_block; ++i) {
        const double exact_high = position * high[i];
        const double exact_middle = position * middle[i];
        const double angle = exact_high + exact_middle;
        const double angle_tail = (exact_high - angle) + exact_middle + position * low[i];

        const double quadrant = (angle * two_over_pi + round_magic) - round_magic;
        const double first = angle - quadrant * half_pi_1;  // exact (Sterbenz)
        const double second = quadrant * half_pi_2;         // exact
        const double reduced = first - second;
        const double bent = reduced - first;
        const double reduced_error = (first - (reduced - bent)) - (second + bent);
        const double tail =
            reduced_error + angle_tail - quadrant * half_pi_3 - quadrant * half_pi_4;
        const double r = reduced + tail;
        const double r_tail = tail - (r - reduced);

        const double z = r * r;
        const double sine_poly =
            s1 + z * (s2 + z * (s3 + z * (s4 + z * (s5 + z * (s6 + z * (s7 + z * s8))))));
        const double cosine_poly =
            c2 + z * (c3 + z * (c4 + z * (c5 + z * (c6 + z * (c7 + z * (c8 + z * c9))))));
        const double sin_r0 = r + r * z * sine_poly;
        const double cos_r0 = (1.0 - 0.5 * z) + z * z * cosine_poly;
        const double sin_r = sin_r0 + cos_r0 * r_tail;
        const double cos_r = cos_r0 - sin_r0 * r_tail;

        // quadrant mod 4, as a double in {0, 1, 2, 3}.
        const double quarter = ((quadrant * 0.25 - 0.375) + round_magic) - round_magic;
        const double q = quadrant - 4.0 * quarter;
        const bool odd = q == 1.0 || q == 3.0;
        const double base_sin = odd ? cos_r : sin_r;
        const double base_cos = odd ? sin_r : cos_r;
        sines[i] = q >= 2.0 ? -base_sin : base_sin;
        cosines[i] = (q == 1.0 || q == 2.0) ? -base_cos : base_cos;
    }
}

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
