// Philox4x32-10 against the known-answer vectors published with Random123 (kat_vectors), and the
// seeded N(0,1) initialisation built on it.
#include <seqembed/detail/normal_init.hpp>
#include <seqembed/detail/random/philox.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "catch.hpp"

using seqembed::detail::PhiloxBlock;
using seqembed::detail::philox4x32_10;

TEST_CASE("Philox4x32-10 matches Random123's known answers", "[philox]") {
    CHECK(philox4x32_10({0, 0, 0, 0}, 0) ==
          PhiloxBlock{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
    CHECK(philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                        0xffffffffffffffffull) ==
          PhiloxBlock{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
    CHECK(philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                        (0x299f31d0ull << 32) | 0xa4093822ull) ==
          PhiloxBlock{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
}

TEST_CASE("Seeded N(0,1) initialisation is reproducible and standard normal", "[init]") {
    constexpr seqembed::Index count = 200001;  // odd: the last pair is half used
    std::vector<double> a(count), b(count), c(count);
    using seqembed::detail::InitStream;
    seqembed::detail::fill_standard_normal(a.data(), count, 7, InitStream::token_embedding);
    seqembed::detail::fill_standard_normal(b.data(), count, 7, InitStream::token_embedding);
    seqembed::detail::fill_standard_normal(c.data(), count, 8, InitStream::token_embedding);
    REQUIRE(a == b);
    REQUIRE(a != c);

    double sum = 0, sum_sq = 0, sum_4 = 0;
    seqembed::Index beyond_three = 0;
    for (const double x : a) {
        sum += x;
        sum_sq += x * x;
        sum_4 += x * x * x * x;
        if (std::abs(x) > 3) ++beyond_three;
    }
    const double n = static_cast<double>(count);
    const double mean = sum / n;
    const double variance = sum_sq / n - mean * mean;
    // 5-sigma bounds: sd(mean) = 1/sqrt(n), sd(variance) ~ sqrt(2/n), kurtosis 3 +- ~sqrt(96/n).
    CHECK(std::abs(mean) < 5 / std::sqrt(n));
    CHECK(std::abs(variance - 1) < 5 * std::sqrt(2 / n));
    CHECK(std::abs(sum_4 / n - 3) < 5 * std::sqrt(96 / n));
    // P(|x| > 3) = 0.0026998
    CHECK(std::abs(static_cast<double>(beyond_three) / n - 0.0026998) < 5 * std::sqrt(0.0027 / n));
}

TEST_CASE("Initialisation streams differ for one seed", "[init]") {
    std::vector<float> tokens(64), positions(64);
    using seqembed::detail::InitStream;
    seqembed::detail::fill_standard_normal(tokens.data(), 64, 1, InitStream::token_embedding);
    seqembed::detail::fill_standard_normal(positions.data(), 64, 1, InitStream::learned_positions);
    REQUIRE(tokens != positions);
}
