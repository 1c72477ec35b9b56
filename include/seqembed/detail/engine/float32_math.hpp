/// @file detail/engine/float32_math.hpp
/// @brief The float32 functions of the follow modes, correctly rounded and the same on every
///        platform and ISA: pow and exp (through long double), and sin and cos of float32 angles
///        of any size (through exact_sin_cos_block, no C library call).
///
/// The follow modes take a framework's float32 steps up to the angle and then these functions.
/// PyTorch's own CPU kernels are not correctly rounded: glibc's scalar cosf and sinf, and SLEEF's
/// vector ones, each differ from the correctly rounded value in some of the values by an ulp
/// (docs/precision.md has the shares).
#pragma once

#include <cmath>
#include <cstdint>

#include "exact_sincos.hpp"
#include "kernels.hpp"
#include "../simd/platform.hpp"

namespace seqembed::detail {

/// float32 base^exponent, correctly rounded. The power is evaluated in long double (64-bit
/// significand on x86-64, IEEE quad on AArch64 Linux), whose powl is within an ulp of that
/// format, and rounded once to float: the result is wrong only if the exact power lies within
/// 2^-63 (relative) of a midpoint between two floats. For the exponents here (k / dim in
/// [0, 1)) an exact midpoint would need base to be a perfect power of a 25-bit odd number, which
/// no float base below 2^64 is; being that close by chance has a probability near 2^-39 per
/// value. (Where long double is double, as with MSVC, the margin is 2^-29.)
inline float correctly_rounded_pow(float base, float exponent) noexcept {
    return static_cast<float>(std::pow(static_cast<long double>(base), static_cast<long double>(exponent)));
}

/// float32 e^x, correctly rounded under the same argument as correctly_rounded_pow (e^x of a
/// nonzero float is never a midpoint: it is transcendental).
inline float correctly_rounded_exp(float x) noexcept {
    return static_cast<float>(std::exp(static_cast<long double>(x)));
}

/// An angle reduced by a whole number of quarter turns: angle = quadrant pi/2 + hi + lo, with
/// |hi + lo| <= pi/4 (up to rounding) and quadrant taken mod 4.
struct QuarterTurns {
    double hi = 0.0;
    double lo = 0.0;
    int quadrant = 0;
};

/// Reduces |angle| (a finite float, |angle| >= 1) by quarter turns with about 100 bits of the
/// remainder exact (Payne and Hanek's method): the float is m 2^e with m below 2^24; 2/pi is
/// taken in 24-bit pieces c_i 2^(-24(i+1)), so that each m c_i is exact in double; the pieces
/// whose product is a multiple of 4 drop out (a whole number of turns), the rest are summed as a
/// double-double y = |angle| 2/pi mod 4, and the remainder (y - round(y)) pi/2.
inline QuarterTurns reduce_quarter_turns(float angle) noexcept {
    // 2/pi = 0.A2F9836E4E44... in hexadecimal, 24 bits a piece (mpmath).
    static constexpr double pieces[20] = {
        0xA2F983, 0x6E4E44, 0x1529FC, 0x2757D1, 0xF534DD, 0xC0DB62, 0x95993C, 0x439041, 0xFE5163, 0xABDEBB,
        0xC561B7, 0x246E3A, 0x424DD2, 0xE00649, 0x2EEA09, 0xD1921C, 0xFE1DEB, 0x1CB129, 0xA73EE8, 0x8235F5};
    constexpr double half_pi_hi = 0x1.921fb54442d18p+0;
    constexpr double half_pi_lo = 0x1.1a62633145c07p-54;
    int exponent = 0;
    const double fraction = std::frexp(std::fabs(static_cast<double>(angle)), &exponent);  // in [0.5, 1)
    const double m = std::ldexp(fraction, 24);  // an integer below 2^24
    const int e = exponent - 24;                // |angle| = m 2^e
    // Term i is m c_i 2^(e - 24(i + 1)); those with e - 24(i + 1) >= 2 are multiples of 4.
    int first = 0;
    while (e - 24 * (first + 1) >= 2) ++first;
    double hi = 0.0;
    double lo = 0.0;
    for (int i = first; i < first + 8 && i < 20; ++i) {
        double term = std::ldexp(m * pieces[i], e - 24 * (i + 1));  // exact: a 48-bit integer scaled
        term -= 4.0 * std::floor(term * 0.25);                       // mod 4, exact
        const double sum = hi + term;                                // two_sum(hi, term)
        const double bent = sum - hi;
        lo += (hi - (sum - bent)) + (term - bent);
        hi = sum;
    }
    const double turns = std::nearbyint(hi);
    const double rest = hi - turns;  // exact: hi's ulp is at most 2^-50 here, turns an integer
    const double f_hi = rest + lo;
    const double f_lo = lo - (f_hi - rest);
    double r_hi = f_hi * half_pi_hi;
    keep_rounded(r_hi);
    double cross = f_hi * half_pi_lo;
    keep_rounded(cross);
    double tail = f_lo * half_pi_hi;
    keep_rounded(tail);
    const double r_error = std::fma(f_hi, half_pi_hi, -r_hi) + cross + tail;
    QuarterTurns out;
    out.hi = r_hi + r_error;
    out.lo = r_error - (out.hi - r_hi);
    out.quadrant = static_cast<int>(static_cast<std::int64_t>(turns) & 3);
    return out;
}

/// Angles below this in magnitude go to exact_sin_cos_block as they are (the float is its own
/// 24-bit "high" part, position 1); larger ones are reduced by reduce_quarter_turns first.
inline constexpr float kernel_float_angle_limit = 0x1p25f;

/// sin and cos of count (<= exact_sin_cos_block_size) float32 angles, each within about 1e-16
/// relative of the exact value, so that rounding them to float gives the correctly rounded
/// float32 sin and cos (wrong only within about 2^-52 of a midpoint between two floats, which no
/// test has met). No C library function is called: the same bits on every platform, and on every
/// ISA (exact_sin_cos_block gives every ISA the scalar bits). Angles must be finite.
inline void sin_cos_of_float_angles(const float* angles, int count, double* sines, double* cosines) {
    constexpr int block = exact_sin_cos_block_size;
    alignas(64) double high[block];
    alignas(64) double middle[block];
    alignas(64) double low[block];
    alignas(64) double s[block];
    alignas(64) double c[block];
    int quadrant[block];
    bool negative[block];
    bool reduced_any = false;
    for (int i = 0; i < block; ++i) {
        quadrant[i] = 0;
        negative[i] = false;
        middle[i] = 0.0;
        low[i] = 0.0;
        if (i >= count) {
            high[i] = 0.0;
            continue;
        }
        const float a = angles[i];
        if (std::fabs(a) < kernel_float_angle_limit) {
            high[i] = static_cast<double>(a);
            continue;
        }
        reduced_any = true;
        const QuarterTurns r = reduce_quarter_turns(a);
        const SplitFrequency split = split_frequency({r.hi, r.lo});
        high[i] = split.high;
        middle[i] = split.middle;
        low[i] = split.low;
        quadrant[i] = r.quadrant;
        negative[i] = a < 0;
    }
    exact_sin_cos(1.0, high, middle, low, s, c);
    if (!reduced_any) {
        for (int i = 0; i < count; ++i) {
            sines[i] = s[i];
            cosines[i] = c[i];
        }
        return;
    }
    for (int i = 0; i < count; ++i) {
        // sin and cos of r + q pi/2, then of -angle where the angle was negative.
        double sine = s[i];
        double cosine = c[i];
        switch (quadrant[i]) {
            case 1: sine = c[i]; cosine = -s[i]; break;
            case 2: sine = -s[i]; cosine = -c[i]; break;
            case 3: sine = -c[i]; cosine = s[i]; break;
            default: break;
        }
        sines[i] = negative[i] ? -sine : sine;
        cosines[i] = cosine;
    }
}

}  // namespace seqembed::detail
