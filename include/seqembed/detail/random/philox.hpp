/// @file detail/random/philox.hpp
/// @brief Philox4x32-10, the counter-based generator of Salmon et al. (SC'11), as in Random123.
///
/// A counter-based generator maps (key, counter) to random bits with no state, so any element's
/// random word can be computed independently: the same values for every thread count and
/// chunking, which is what reproducible dropout and seeded initialisation need. This is the
/// one-block reference; the dropout kernel runs the same rounds on a vector of blocks.
#pragma once

#include <array>
#include <cstdint>

namespace seqembed::detail {

/// Four 32-bit words, the block Philox4x32 maps.
using PhiloxBlock = std::array<std::uint32_t, 4>;

/// Philox4x32's multipliers and the Weyl increments of its key.
inline constexpr std::uint32_t philox_multiplier0 = 0xD2511F53u;
inline constexpr std::uint32_t philox_multiplier1 = 0xCD9E8D57u;
inline constexpr std::uint32_t philox_weyl0 = 0x9E3779B9u;
inline constexpr std::uint32_t philox_weyl1 = 0xBB67AE85u;

/// Philox4x32 with 10 rounds: the 128-bit counter and 64-bit key give 128 random bits.
inline PhiloxBlock philox4x32_10(PhiloxBlock counter, std::uint64_t key) noexcept {
    auto key0 = static_cast<std::uint32_t>(key);
    auto key1 = static_cast<std::uint32_t>(key >> 32);
    for (int round = 0; round < 10; ++round) {
        const std::uint64_t product0 = std::uint64_t{philox_multiplier0} * counter[0];
        const std::uint64_t product1 = std::uint64_t{philox_multiplier1} * counter[2];
        counter = {static_cast<std::uint32_t>(product1 >> 32) ^ counter[1] ^ key0,
                   static_cast<std::uint32_t>(product1),
                   static_cast<std::uint32_t>(product0 >> 32) ^ counter[3] ^ key1,
                   static_cast<std::uint32_t>(product0)};
        key0 += philox_weyl0;
        key1 += philox_weyl1;
    }
    return counter;
}

/// The Philox block for a 64-bit block index within a 64-bit stream (a call number, a table).
inline PhiloxBlock philox_block(std::uint64_t key, std::uint64_t stream, std::uint64_t block) noexcept {
    return philox4x32_10({static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
                          static_cast<std::uint32_t>(stream),
                          static_cast<std::uint32_t>(stream >> 32)},
                         key);
}

}  // namespace seqembed::detail
