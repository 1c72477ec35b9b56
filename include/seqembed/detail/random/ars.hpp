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
    return static_cast<std::uint8_t>((static_cast<unsigned>(a) << 1u) ^ ((a & 0x80u) != 0 ? 0x1Bu : 0x00u));
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
/// 2 s, s, s, 3 s; row k's input adds it rotated k bytes up (mix_tables[k]).
constexpr std::array<std::array<std::uint32_t, 256>, 4> make_mix_tables() noexcept {
    std::array<std::array<std::uint32_t, 256>, 4> tables{};
    for (int value = 0; value < 256; ++value) {
        const std::uint8_t s = sbox[static_cast<std::size_t>(value)];
        const std::uint8_t twice = times_x(s);
        const auto thrice = static_cast<std::uint8_t>(twice ^ s);
        const std::uint32_t column = std::uint32_t{twice} | std::uint32_t{s} << 8 | std::uint32_t{s} << 16 |
                                     std::uint32_t{thrice} << 24;
        for (int k = 0; k < 4; ++k)
            tables[static_cast<std::size_t>(k)][static_cast<std::size_t>(value)] =
                k == 0 ? column : (column << (8 * k)) | (column >> (32 - 8 * k));
    }
    return tables;
}

/// SubBytes and MixColumns together, by input row and byte, computed when compiled (4 KiB).
inline constexpr std::array<std::array<std::uint32_t, 256>, 4> mix_tables = make_mix_tables();

/// A block as its four columns (column c is bytes 4 c .. 4 c + 3, row 0 lowest).
struct Columns {
    std::uint32_t c[4];
};

/// The columns of a block.
inline Columns columns_of(const ArsBlock& block) noexcept {
    return {{static_cast<std::uint32_t>(block[0]), static_cast<std::uint32_t>(block[0] >> 32),
             static_cast<std::uint32_t>(block[1]), static_cast<std::uint32_t>(block[1] >> 32)}};
}

/// The block of four columns.
inline ArsBlock block_of(const Columns& x) noexcept {
    return {std::uint64_t{x.c[0]} | std::uint64_t{x.c[1]} << 32, std::uint64_t{x.c[2]} | std::uint64_t{x.c[3]} << 32};
}

/// Byte `row` of column `column` of x (column < 4).
#define SEQEMBED_DETAIL_AES_BYTE(x, column, row) static_cast<std::size_t>(((x).c[column] >> (8 * (row))) & 0xFFu)

/// Output column `c` of MixColumns after SubBytes and ShiftRows: row r from input column
/// (c + r) % 4.
#define SEQEMBED_DETAIL_AES_MIX(x, c)                                                                      \
    (mix_tables[0][SEQEMBED_DETAIL_AES_BYTE(x, (c), 0)] ^ mix_tables[1][SEQEMBED_DETAIL_AES_BYTE(x, ((c) + 1) % 4, 1)] ^ \
     mix_tables[2][SEQEMBED_DETAIL_AES_BYTE(x, ((c) + 2) % 4, 2)] ^ mix_tables[3][SEQEMBED_DETAIL_AES_BYTE(x, ((c) + 3) % 4, 3)])

/// Output column `c` of SubBytes after ShiftRows.
#define SEQEMBED_DETAIL_AES_SUB(x, c)                                                                  \
    (std::uint32_t{sbox[SEQEMBED_DETAIL_AES_BYTE(x, (c), 0)]} |                                        \
     std::uint32_t{sbox[SEQEMBED_DETAIL_AES_BYTE(x, ((c) + 1) % 4, 1)]} << 8 |                         \
     std::uint32_t{sbox[SEQEMBED_DETAIL_AES_BYTE(x, ((c) + 2) % 4, 2)]} << 16 |                        \
     std::uint32_t{sbox[SEQEMBED_DETAIL_AES_BYTE(x, ((c) + 3) % 4, 3)]} << 24)

/// aesenc: ShiftRows, SubBytes, MixColumns, then the key added. Written out column by column,
/// so that the state stays in registers.
inline Columns mix_round(const Columns& x, const Columns& key) noexcept {
    return {{SEQEMBED_DETAIL_AES_MIX(x, 0) ^ key.c[0], SEQEMBED_DETAIL_AES_MIX(x, 1) ^ key.c[1],
             SEQEMBED_DETAIL_AES_MIX(x, 2) ^ key.c[2], SEQEMBED_DETAIL_AES_MIX(x, 3) ^ key.c[3]}};
}

/// aesenclast: ShiftRows, SubBytes, then the key added.
inline Columns last_round(const Columns& x, const Columns& key) noexcept {
    return {{SEQEMBED_DETAIL_AES_SUB(x, 0) ^ key.c[0], SEQEMBED_DETAIL_AES_SUB(x, 1) ^ key.c[1],
             SEQEMBED_DETAIL_AES_SUB(x, 2) ^ key.c[2], SEQEMBED_DETAIL_AES_SUB(x, 3) ^ key.c[3]}};
}

#undef SEQEMBED_DETAIL_AES_SUB
#undef SEQEMBED_DETAIL_AES_MIX
#undef SEQEMBED_DETAIL_AES_BYTE

/// One AES encryption round on `state` (bytes in the order of ArsBlock), as x86's aesenc
/// (aesenclast when `last`: no MixColumns).
inline ArsBlock round(const ArsBlock& state, const ArsBlock& round_key, bool last) noexcept {
    return block_of(last ? last_round(columns_of(state), columns_of(round_key))
                         : mix_round(columns_of(state), columns_of(round_key)));
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

/// ARS-5 of `counter` given its round keys as columns (keys[0] added to the counter, keys[r]
/// after round r): ars(counter, key, 5) with the key's steps done once for many blocks.
inline ArsBlock ars5(const ArsBlock& counter, const aes::Columns (&keys)[ars_mask_rounds + 1]) noexcept {
    static_assert(ars_mask_rounds == 5, "the rounds below are ARS-5's");
    const aes::Columns in = aes::columns_of(counter);
    aes::Columns x{{in.c[0] ^ keys[0].c[0], in.c[1] ^ keys[0].c[1], in.c[2] ^ keys[0].c[2], in.c[3] ^ keys[0].c[3]}};
    x = aes::mix_round(x, keys[1]);
    x = aes::mix_round(x, keys[2]);
    x = aes::mix_round(x, keys[3]);
    x = aes::mix_round(x, keys[4]);
    return aes::block_of(aes::last_round(x, keys[5]));
}

}  // namespace seqembed::detail
