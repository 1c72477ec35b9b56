// The element conversions: widening exact for every value, narrowing rounded once to nearest
// even (checked against an exact choice between the two neighbours), byte swapping.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include <seqembed/io/io.hpp>

#include "catch.hpp"

namespace {

using namespace seqembed::io::detail;

float float_of(std::uint32_t bits) { return bits_cast<float>(bits); }

/// The value of bfloat16 or half bits, as a double (exact).
double bf16_value(std::uint16_t bits) { return static_cast<double>(bf16_bits_to_float(bits)); }
double f16_value(std::uint16_t bits) { return static_cast<double>(f16_bits_to_float(bits)); }

/// Round x to the nearest of a 16-bit format's finite values or infinity, ties to even, by
/// search over all positive values: the reference for the narrowing conversions.
template <typename Value>
std::uint16_t reference_round(double x, Value value, std::uint16_t max_finite, std::uint16_t infinity) {
    const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    const double a = std::fabs(x);
    std::uint16_t lo = 0;
    // Largest finite value <= a (values are monotonic in their bits).
    std::uint16_t low = 0, high = max_finite;
    if (a >= value(max_finite)) lo = max_finite;
    else {
        while (low < high) {
            const auto mid = static_cast<std::uint16_t>((low + high + 1) / 2);
            if (value(mid) <= a) low = mid; else high = static_cast<std::uint16_t>(mid - 1);
        }
        lo = low;
    }
    if (value(lo) == a) return static_cast<std::uint16_t>(sign | lo);
    // The next value up: the next finite one, or "max + one ulp" standing for infinity.
    const double up = lo == max_finite ? value(max_finite) + (value(max_finite) - value(static_cast<std::uint16_t>(max_finite - 1)))
                                       : value(static_cast<std::uint16_t>(lo + 1));
    const std::uint16_t up_bits = lo == max_finite ? infinity : static_cast<std::uint16_t>(lo + 1);
    const double below = a - value(lo), above = up - a;
    std::uint16_t pick;
    if (below < above) pick = lo;
    else if (above < below) pick = up_bits;
    else pick = (lo & 1) ? up_bits : lo;
    return static_cast<std::uint16_t>(sign | pick);
}

}  // namespace

TEST_CASE("convert: every bfloat16 and half widens exactly to float and double") {
    for (std::uint32_t b = 0; b < 0x10000; ++b) {
        const auto bits = static_cast<std::uint16_t>(b);
        const float from_bf16 = convert_bits<seqembed::io::Dtype::bf16, float>(bits);
        const float from_f16 = convert_bits<seqembed::io::Dtype::f16, float>(bits);
        const float eigen_f16 = static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
        if (std::isnan(from_bf16)) {
            CHECK(std::isnan(convert_bits<seqembed::io::Dtype::bf16, double>(bits)));
        } else {
            CHECK(from_bf16 == float_of(b << 16));
            CHECK(convert_bits<seqembed::io::Dtype::bf16, double>(bits) == static_cast<double>(from_bf16));
        }
        if (!std::isnan(eigen_f16)) {
            CHECK(from_f16 == eigen_f16);
            CHECK(convert_bits<seqembed::io::Dtype::f16, double>(bits) == static_cast<double>(eigen_f16));
        }
        // The same dtype passes the bits through.
        CHECK(Eigen::numext::bit_cast<std::uint16_t>(convert_bits<seqembed::io::Dtype::bf16, Eigen::bfloat16>(bits)) == bits);
        CHECK(Eigen::numext::bit_cast<std::uint16_t>(convert_bits<seqembed::io::Dtype::f16, Eigen::half>(bits)) == bits);
    }
}

TEST_CASE("convert: float and double to bfloat16 and half round once to nearest even") {
    std::mt19937_64 random(3);
    const auto bf16 = [](std::uint16_t b) { return bf16_value(b); };
    const auto f16 = [](std::uint16_t b) { return f16_value(b); };
    for (int i = 0; i < 200000; ++i) {
        const std::uint64_t r = random();
        // A significand of 52, 22, 9 or 12 random bits (the short ones make exact halfway points
        // of bfloat16 and half common), an exponent from 2^-30 to 2^19 (half's subnormals and
        // overflow included), either sign.
        static const int kept[4] = {52, 22, 9, 12};
        const std::uint64_t fraction = (r >> 12) >> (52 - kept[i % 4]) << (52 - kept[i % 4]);
        double x = std::ldexp(1.0 + static_cast<double>(fraction) * 0x1p-52, static_cast<int>(r % 50) - 30);
        if ((r >> 6) & 1) x = -x;
        const std::uint16_t want_bf16 = reference_round(x, bf16, 0x7F7F, 0x7F80);
        const std::uint16_t want_f16 = reference_round(x, f16, 0x7BFF, 0x7C00);
        INFO("x = " << x);
        CHECK(Eigen::numext::bit_cast<std::uint16_t>(convert_bits<seqembed::io::Dtype::f64, Eigen::bfloat16>(bits_cast<std::uint64_t>(x))) == want_bf16);
        CHECK(Eigen::numext::bit_cast<std::uint16_t>(convert_bits<seqembed::io::Dtype::f64, Eigen::half>(bits_cast<std::uint64_t>(x))) == want_f16);
        const float xf = static_cast<float>(x);
        if (static_cast<double>(xf) == x) {
            CHECK(float_to_bf16_bits(xf) == want_bf16);
            CHECK(float_to_bf16_bits(xf) == Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(xf)));
            CHECK(float_to_f16_bits(xf) == want_f16);
            CHECK(convert_bits<seqembed::io::Dtype::f64, float>(bits_cast<std::uint64_t>(x)) == xf);
        }
    }
    // A double just above a bfloat16 halfway point that rounds to the halfway float: rounding
    // through float to nearest would tie to even (down); once, it goes up.
    const double just_above = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
    CHECK(static_cast<float>(just_above) == 1.0f + std::ldexp(1.0f, -8));
    CHECK(Eigen::numext::bit_cast<std::uint16_t>(convert_bits<seqembed::io::Dtype::f64, Eigen::bfloat16>(bits_cast<std::uint64_t>(just_above))) == 0x3F81);
    CHECK(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);
}

TEST_CASE("convert: double to float rounds to nearest even and overflows to infinity without UB") {
    const double max = std::numeric_limits<float>::max();
    CHECK(double_to_float(max) == std::numeric_limits<float>::max());
    CHECK(double_to_float(max + std::ldexp(1.0, 103) - std::ldexp(1.0, 76)) == std::numeric_limits<float>::max());
    CHECK(std::isinf(double_to_float(max + std::ldexp(1.0, 103))));
    CHECK(double_to_float(-1e300) == -std::numeric_limits<float>::infinity());
    CHECK(std::isnan(double_to_float(std::nan(""))));
    CHECK(double_to_float(1.0 / 3.0) == 1.0f / 3.0f);
    CHECK(double_to_float(1e-50) == 0.0f);
    CHECK(Eigen::numext::bit_cast<std::uint16_t>(convert_bits<seqembed::io::Dtype::f64, Eigen::bfloat16>(bits_cast<std::uint64_t>(1e300))) == 0x7F80);
    CHECK(Eigen::numext::bit_cast<std::uint16_t>(convert_bits<seqembed::io::Dtype::f64, Eigen::half>(bits_cast<std::uint64_t>(-70000.0))) == 0xFC00);
    CHECK(std::isnan(static_cast<float>(convert_bits<seqembed::io::Dtype::f64, Eigen::bfloat16>(bits_cast<std::uint64_t>(std::nan(""))))));
    CHECK(float_to_bf16_bits(-std::numeric_limits<float>::quiet_NaN()) == 0xFFC0);
}

TEST_CASE("convert: byte swapping of every width") {
    CHECK(byte_swap(std::uint16_t{0x1234}) == 0x3412);
    CHECK(byte_swap(std::uint32_t{0x12345678}) == 0x78563412u);
    CHECK(byte_swap(std::uint64_t{0x0102030405060708}) == 0x0807060504030201ull);
    const unsigned char big_one[4] = {0x3F, 0x80, 0x00, 0x00};  // 1.0f big-endian
    float out = 0;
    convert_elements<float>(seqembed::io::Dtype::f32, host_is_little_endian(), big_one, &out, 1);
    CHECK(out == 1.0f);
}
