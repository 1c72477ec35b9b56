// Philox4x32-10 against the known-answer vectors published with Random123 (kat_vectors), the
// vectorised Philox of the dropout kernel on every ISA against it, and the seeded N(0,1)
// initialisation built on it.
#include <seqembed/detail/normal_init.hpp>
#include <seqembed/detail/engine/kernels.hpp>
#include <seqembed/detail/random/philox.hpp>
#include <seqembed/isa.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "catch.hpp"
#include "isa_support.hpp"

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

namespace {


/// The kept bits of spans first .. first + count - 1 (count <= 2) under a threshold split by
/// hand, drawn together by the ISA in force.
std::array<seqembed::detail::SpanBits, 2> draw_pair(std::uint64_t seed, std::uint64_t call, std::uint32_t coarse_keep,
                                                    std::uint32_t fine_keep, std::uint64_t first, int count) {
    seqembed::detail::DropoutKey key;
    key.seed = seed;
    key.call = call;
    key.limit = {coarse_keep, fine_keep};
    std::array<seqembed::detail::SpanBits, 2> bits{};
    seqembed::detail::draw_spans(key, first, count, bits.data());
    return bits;
}

bool bit_of(const seqembed::detail::SpanBits& bits, int k) {
    return ((bits.words[k / 64] >> (k % 64)) & 1u) != 0;
}

}  // namespace

TEST_CASE("The dropout kernel's Philox computes philox_block for every block it draws, on every ISA",
          "[philox][isa]") {
    // The kernel runs Philox on vectors of blocks (16 s + i, i < 16, for one span or two at a
    // time), then keeps element 16 r + i of span s when byte r / 4 of word r % 4 of block
    // 16 s + i is at least the threshold's coarse byte. Swept over the 255 coarse thresholds
    // without ties, the kept bits spell out those 15 bytes of every block; a tie of the block's
    // first element (r = 0) with a fine threshold swept over 255 values spells out the 16th,
    // byte 3 of word 3. So all 128 bits of each block are compared with philox_block. One span
    // and two at once, from span 0, across block 2^32 (blocks 2^32 - 16 .. 2^32 + 15), across
    // 3 * 2^32 and at the end of the range (the last block is 2^64 - 1); counters (the call) and
    // keys with both words set. A span's blocks never carry into the high word inside a vector
    // (16 s is a multiple of 16).
    using seqembed::detail::PhiloxBlock;
    const std::uint64_t firsts[] = {0, (std::uint64_t{1} << 28) - 1, (std::uint64_t{3} << 28) - 1,
                                    (std::uint64_t{1} << 60) - 2};
    for_each_isa([&](seqembed::Isa) {
        for (const std::uint64_t first : firsts)
            for (const int count : {1, 2})
                for (const std::uint64_t stream : {std::uint64_t{0}, (std::uint64_t{1} << 40) + 9})
                    for (const std::uint64_t key : {std::uint64_t{0}, std::uint64_t{0x0123456789ABCDEFull}}) {
                        CAPTURE(first, count, stream, key);
                        // [s][i][n]: byte n % 4 of word n / 4 of block 16 (first + s) + i
                        std::uint32_t bytes[2][16][16] = {};
                        for (std::uint32_t coarse_keep = 1; coarse_keep < 256; ++coarse_keep) {
                            const auto bits = draw_pair(key, stream, coarse_keep, 0, first, count);
                            for (int s = 0; s < count; ++s)
                                for (int r = 0; r < 15; ++r)
                                    for (int i = 0; i < 16; ++i)
                                        bytes[s][i][4 * (r % 4) + r / 4] +=
                                            bit_of(bits[static_cast<std::size_t>(s)], 16 * r + i) ? 1u : 0u;
                        }
                        for (int s = 0; s < count; ++s)
                            for (int i = 0; i < 16; ++i) {
                                // Element i (r = 0) ties with coarse_keep - 1: its fine byte decides.
                                const std::uint32_t tie = bytes[s][i][0];
                                for (std::uint32_t fine_keep = 1; fine_keep < 256; ++fine_keep) {
                                    const auto bits = draw_pair(key, stream, tie + 1, fine_keep, first, count);
                                    bytes[s][i][15] += bit_of(bits[static_cast<std::size_t>(s)], i) ? 1u : 0u;
                                }
                                const std::uint64_t block =
                                    16 * (first + static_cast<std::uint64_t>(s)) + static_cast<std::uint64_t>(i);
                                const PhiloxBlock expected = seqembed::detail::philox_block(key, stream, block);
                                for (int w = 0; w < 4; ++w) {
                                    CAPTURE(block, w);
                                    PhiloxBlock::value_type word = 0;
                                    for (int b = 0; b < 4; ++b)
                                        word |= static_cast<PhiloxBlock::value_type>(bytes[s][i][4 * w + b]) << (8 * b);
                                    REQUIRE(word == expected[static_cast<std::size_t>(w)]);
                                }
                            }
                    }
    });
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
