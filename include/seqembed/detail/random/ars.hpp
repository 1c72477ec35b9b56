/// @file detail/random/ars.hpp
/// @brief ARS (AES Random Stream), the counter-based generator of Salmon et al. (SC'11), as in
///        Random123's `ars` and oneMKL's `ars5`: AES rounds on the counter under a key stepped
///        by Weyl constants. The one-block reference in plain C++, whose AES round is the
///        x86 `aesenc` instruction's (and `aesenclast`'s for the last round); the kernels run the
///        same rounds with the CPU's AES instructions.
#pragma once

#include <array>
#include <cstdint>

namespace seqembed::detail {

/// A 128-bit block as two 64-bit halves, the low half first (byte i of the block is byte i % 8
/// of half i / 8, little-endian, as in an x86 vector register).
using ArsBlock = std::array<std::uint64_t, 2>;

/// The Weyl increments added to the key's halves before each round: the fractional parts of
/// the golden ratio and of the square root of 3.
inline constexpr std::uint64_t ars_weyl_low = 0x9E3779B97F4A7C15ull;
inline constexpr std::uint64_t ars_weyl_high = 0xBB67AE8584CAA73Bull;

/// AES arithmetic in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1, and the S-box built from it.
namespace aes {

/// x times `a`.
constexpr std::uint8_t times_x(std::uint8_t a) noexcept {
    return static_cast<std::uint8_t>((a << 1) ^ ((a & 0x80u) != 0 ? 0x1Bu : 0x00u));
}

/// The product of `a` and `b`.
constexpr std::uint8_t times(std::uint8_t a, std::uint8_t b) noexcept {
    std::uint8_t product = 0;
    for (; b != 0; b = static_cast<std::uint8_t>(b >> 1), a = times_x(a))
        if ((b & 1u) != 0) product = static_cast<std::uint8_t>(product ^ a);
    return product;
}

/// The S-box: the multiplicative inverse (0 for 0), then FIPS-197's affine map.
constexpr std::array<std::uint8_t, 256> make_sbox() noexcept {
    std::array<std::uint8_t, 256> box{};
    for (int value = 0; value < 256; ++value) {
        const auto a = static_cast<std::uint8_t>(value);
        std::uint8_t inverse = 0;
        for (int candidate = 1; candidate < 256 && a != 0; ++candidate) {
            if (times(a, static_cast<std::uint8_t>(candidate)) == 1) {
                inverse = static_cast<std::uint8_t>(candidate);
                break;
            }
        }
        const auto rotl = [](std::uint8_t b, int n) {
            return static_cast<std::uint8_t>((b << n) | (b >> (8 - n)));
        };
        box[static_cast<std::size_t>(value)] = static_cast<std::uint8_t>(
            inverse ^ rotl(inverse, 1) ^ rotl(inverse, 2) ^ rotl(inverse, 3) ^ rotl(inverse, 4) ^ 0x63u);
    }
    return box;
}

/// The S-box, computed when compiled.
inline constexpr std::array<std::uint8_t, 256> sbox = make_sbox();

/// The column that S-box output s of row 0 adds to MixColumns' output: bytes (rows 0 to 3)
/// 2 s, s, s, 3 s. Row k's input adds this column rotated k bytes up.
constexpr std::array<std::uint32_t, 256> make_mix_table() noexcept {
    std::array<std::uint32_t, 256> table{};
    for (int value = 0; value < 256; ++value) {
        const std::uint8_t s = sbox[static_cast<std::size_t>(value)];
        const std::uint8_t twice = times_x(s);
        const auto thrice = static_cast<std::uint8_t>(twice ^ s);
        table[static_cast<std::size_t>(value)] = std::uint32_t{twice} | std::uint32_t{s} << 8 |
                                                 std::uint32_t{s} << 16 | std::uint32_t{thrice} << 24;
    }
    return table;
}

/// MixColumns of the S-box, by row 0's input byte, computed when compiled.
inline constexpr std::array<std::uint32_t, 256> mix_table = make_mix_table();

/// x rotated up by n bits (0 < n < 32).
constexpr std::uint32_t rotate_up(std::uint32_t x, int n) noexcept { return (x << n) | (x >> (32 - n)); }

/// One AES encryption round on `state` (bytes in the order of ArsBlock): ShiftRows, SubBytes,
/// MixColumns unless `last`, then the round key added, as x86's aesenc (aesenclast when last).
/// Byte i is row i % 4 of column i / 4; output column c takes row r from input column
/// (c + r) % 4. A table of 256 columns gives SubBytes and MixColumns together.
inline ArsBlock round(const ArsBlock& state, const ArsBlock& round_key, bool last) noexcept {
    const std::uint32_t in[4] = {static_cast<std::uint32_t>(state[0]), static_cast<std::uint32_t>(state[0] >> 32),
                                 static_cast<std::uint32_t>(state[1]), static_cast<std::uint32_t>(state[1] >> 32)};
    std::uint32_t out[4];
    for (int c = 0; c < 4; ++c) {
        const auto byte = [&](int row) {
            return static_cast<std::size_t>((in[(c + row) % 4] >> (8 * row)) & 0xFFu);
        };
        if (last) {
            out[c] = std::uint32_t{sbox[byte(0)]} | std::uint32_t{sbox[byte(1)]} << 8 |
                     std::uint32_t{sbox[byte(2)]} << 16 | std::uint32_t{sbox[byte(3)]} << 24;
        } else {
            out[c] = mix_table[byte(0)] ^ rotate_up(mix_table[byte(1)], 8) ^ rotate_up(mix_table[byte(2)], 16) ^
                     rotate_up(mix_table[byte(3)], 24);
        }
    }
    return {(std::uint64_t{out[0]} | std::uint64_t{out[1]} << 32) ^ round_key[0],
            (std::uint64_t{out[2]} | std::uint64_t{out[3]} << 32) ^ round_key[1]};
}

}  // namespace aes

/// ARS with `rounds` AES rounds (at least 1): the counter plus the key, then `rounds` - 1
/// rounds of aesenc and one of aesenclast, the key's halves each stepped by their Weyl constant
/// before every round (modulo 2^64).
inline ArsBlock ars(const ArsBlock& counter, ArsBlock key, int rounds) noexcept {
    ArsBlock state{counter[0] ^ key[0], counter[1] ^ key[1]};
    for (int round = 1; round <= rounds; ++round) {
        key = {key[0] + ars_weyl_low, key[1] + ars_weyl_high};
        state = aes::round(state, key, round == rounds);
    }
    return state;
}

/// Rounds of the dropout mask's ARS: five, the count Salmon et al. found to pass BigCrush with
/// margin, as oneMKL's `ars5`.
inline constexpr int ars_mask_rounds = 5;

}  // namespace seqembed::detail
