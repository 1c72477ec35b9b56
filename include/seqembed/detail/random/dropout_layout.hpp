/// @file detail/random/dropout_layout.hpp
/// @brief Which random bits decide whether dropout keeps an element: the mask's layout over
///        ARS-5, and its reference word in plain C++. Each ISA draws the same words with its AES
///        instructions (MaskWords in detail/simd/).
///
/// Element e of call c is kept when its 16-bit draw is at least the threshold round(p * 65536).
/// The draw of element e is 16-bit lane e % 8 (bits 16 (e % 8) .. 16 (e % 8) + 15 of the block,
/// little-endian) of the ARS-5 block at counter (e / 8, c) under the key (seed, 0). So word w of
/// the mask, the kept bits of elements 64 w .. 64 w + 63, is the eight blocks 8 w .. 8 w + 7:
/// bit i is lane i % 8 of block 8 w + i / 8, which AVX-512 compares in two vectors of four blocks
/// and takes as one 64-bit mask, with no shuffle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "ars.hpp"

namespace seqembed::detail {

/// The largest threshold: round(1 * 65536), which drops everything.
inline constexpr std::uint32_t drop_all_threshold = 65536;

/// What a dropout mask is a function of: the seed, the call number and the threshold.
struct DropoutKey {
    std::uint64_t seed = 0;
    std::uint64_t call = 0;
    /// Draws below this are dropped: 0 keeps everything, drop_all_threshold nothing.
    std::uint32_t threshold = 0;
};

/// The ARS key of a mask's seed.
inline ArsBlock mask_ars_key(std::uint64_t seed) noexcept { return {seed, 0}; }

/// How a backend's MaskWords (detail/simd/) draws the mask's words: the same bits every way.
enum class MaskDraw {
    software,  ///< the AES round in plain C++ (reference_kept_word)
    aes128,    ///< the CPU's AES round on one 128-bit block at a time (AES-NI; Arm's AESE, AESMC)
    aes256,    ///< VAES: the round on two blocks of a 256-bit vector (CPUs with AVX2 and VAES)
    aes512     ///< VAES: the round on four blocks of a 512-bit vector
};

/// The name of a way of drawing.
constexpr const char* mask_draw_name(MaskDraw draw) noexcept {
    switch (draw) {
        case MaskDraw::software: return "software";
        case MaskDraw::aes128: return "aes128";
        case MaskDraw::aes256: return "aes256";
        case MaskDraw::aes512: return "aes512";
    }
    return "?";
}

/// The fastest of the draws `runs` accepts: aes512, then aes256, then aes128, then software.
inline MaskDraw fastest_mask_draw(bool (*runs)(MaskDraw) noexcept) noexcept {
    for (const MaskDraw draw : {MaskDraw::aes512, MaskDraw::aes256, MaskDraw::aes128})
        if (runs(draw)) return draw;
    return MaskDraw::software;
}

/// The round keys of a mask's ARS-5 (round r: the seed's key stepped r times) and its threshold
/// as a 16-bit lane value (0 when nothing is kept, which each draw tests first): what every
/// draw starts from.
struct MaskRoundKeys {
    explicit MaskRoundKeys(const DropoutKey& key) noexcept
        : lane_threshold(static_cast<std::uint16_t>(key.threshold < drop_all_threshold ? key.threshold : 0)) {
        ArsBlock round_key = mask_ars_key(key.seed);
        for (ArsBlock& k : round) {
            k = round_key;
            round_key = {round_key[0] + ars_weyl_low, round_key[1] + ars_weyl_high};
        }
    }
    ArsBlock round[ars_mask_rounds + 1];
    std::uint16_t lane_threshold;
};

/// Blocks per word of the mask.
inline constexpr std::uint64_t mask_blocks_per_word = 8;

/// Word `word` of the mask of `key` (bit i: element 64 word + i kept), in plain C++: the
/// reference, and the draw of CPUs without AES instructions.
inline std::uint64_t reference_kept_word(const DropoutKey& key, std::uint64_t word) noexcept {
    if (key.threshold >= drop_all_threshold) return 0;
    const MaskRoundKeys keys(key);
    aes::Columns round_keys[ars_mask_rounds + 1];
    for (int r = 0; r <= ars_mask_rounds; ++r) round_keys[r] = aes::columns_of(keys.round[r]);
    std::uint64_t kept = 0;
    for (std::uint64_t block = 0; block < mask_blocks_per_word; ++block) {
        const ArsBlock bits = ars5({mask_blocks_per_word * word + block, key.call}, round_keys);
        for (std::uint64_t lane = 0; lane < 8; ++lane) {  // no branch: a tenth of the draws are dropped at random
            const auto draw = static_cast<std::uint32_t>((bits[static_cast<std::size_t>(lane / 4)] >> (16 * (lane % 4))) & 0xFFFFu);
            kept |= static_cast<std::uint64_t>(draw >= key.threshold) << (8 * block + lane);
        }
    }
    return kept;
}

}  // namespace seqembed::detail
