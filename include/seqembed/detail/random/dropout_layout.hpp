/// @file detail/random/dropout_layout.hpp
/// @brief Which random bits decide whether dropout keeps an element: the mask's layout over
///        Philox4x32-10. The kernel that draws it is draw_spans in detail/engine/kernels-inl.hpp,
///        the one place that turns these rules into bits.
///
/// Element e of call c is kept when its 16-bit draw is at least the threshold round(p * 65536).
/// The draw is read a byte at a time, so that most elements cost one byte of Philox output:
/// - Spans of 240 elements: span s reads the 16 blocks 16 s + i (i < 16) at counter (block, c)
///   under the seed. Byte b of a word is (word >> 8 b) & 0xFF.
/// - Element 240 s + 16 r + i (r < 15) takes as its coarse byte byte r / 4 of word r % 4 of block
///   16 s + i: 16 consecutive elements read one byte of one word of the 16 blocks, which
///   vectorises. Above the threshold's high byte the element is kept, below it is dropped.
/// - When it is equal (a tie, one element in 256) a fine byte decides, kept when at least the
///   threshold's low byte. The first tie among block i's 15 coarse bytes (in the order of r)
///   takes the byte no element uses, byte 3 of word 3 of the block; its n-th further tie (about
///   one span in 40 has one) takes byte n - 1 (word (n - 1) / 4) of block 2^63 + 16 s + i.
/// The draw coarse * 256 + fine is uniform over 16 bits and independent between elements, so p is
/// honoured to 1/65536 as if every element read 16 bits, with 15 elements per block instead of 8.
#pragma once

#include <cstdint>

#include "philox.hpp"

namespace seqembed::detail {

/// Blocks per span, one per lane of a run.
inline constexpr int span_blocks = 16;
/// Runs of 16 elements (one byte of one word of the 16 blocks) per span.
inline constexpr int span_runs = 15;
/// Elements per span, one coarse byte each.
inline constexpr std::uint64_t span_elements = 16 * span_runs;
/// Block index bit of the blocks that hold the fine bytes of a block's second and further ties.
inline constexpr std::uint64_t fine_block_bit = std::uint64_t{1} << 63;

/// The kept bits of one span: bit k (of word k / 64) is element 240 s + k; bits 240 to 255 are 0.
struct SpanBits {
    std::uint64_t words[4];
};

/// The 16-bit threshold split into its coarse (high) and fine (low) bytes.
struct DrawThreshold {
    /// Elements whose coarse byte is at least this are kept without a fine byte.
    std::uint32_t coarse_keep;
    /// When nonzero, a coarse byte equal to coarse_keep - 1 ties and the fine byte decides, kept
    /// when at least this. When zero there are no ties.
    std::uint32_t fine_keep;

    /// The split of a threshold (0 keeps everything, 65536 nothing).
    static DrawThreshold of(std::uint32_t threshold) noexcept {
        const std::uint32_t high = threshold >> 8;
        const std::uint32_t low = threshold & 0xFFu;
        return {low == 0 ? high : high + 1, low};
    }

    /// The coarse byte that ties (256, which no byte equals, when there are no ties).
    std::uint32_t tie_byte() const noexcept { return fine_keep != 0 ? coarse_keep - 1 : 256; }
};

/// What a dropout mask is a function of: the seed, the call number and the threshold.
struct DropoutKey {
    std::uint64_t seed = 0;
    std::uint64_t call = 0;
    DrawThreshold limit{0, 0};
};

/// Byte n (0 .. 15, low byte of word 0 first) of a Philox block.
inline std::uint32_t byte_of(const PhiloxBlock& block, int n) noexcept {
    return (block[static_cast<std::size_t>(n / 4)] >> (8 * (n % 4))) & 0xFFu;
}

/// Whether bit k (element 240 s + k) of a span's bits is set.
inline bool span_bit(const SpanBits& bits, std::uint64_t k) noexcept {
    return ((bits.words[k / 64] >> (k % 64)) & 1u) != 0;
}

/// Redecides the second and further ties of the blocks in `tied_twice` (bit i: block 16 s + i
/// tied at least twice; rare) in a span's kept bits: they read bytes 0, 1, ... of block
/// 2^63 + 16 s + i in the order of r. The first tie of each block was decided with the coarse
/// bytes.
inline void decide_further_ties(const DropoutKey& key, std::uint64_t span, std::uint32_t tied_twice,
                                SpanBits& kept) noexcept {
    const std::uint32_t tie = key.limit.tie_byte();
    for (int i = 0; i < span_blocks; ++i) {
        if (((tied_twice >> i) & 1u) == 0) continue;
        const std::uint64_t block = span * span_blocks + static_cast<std::uint64_t>(i);
        const PhiloxBlock words = philox_block(key.seed, key.call, block);
        const PhiloxBlock further = philox_block(key.seed, key.call, fine_block_bit | block);
        int met = 0;  // ties of block i met so far
        for (int r = 0; r < span_runs; ++r) {
            if (((words[static_cast<std::size_t>(r % 4)] >> (8 * (r / 4))) & 0xFFu) != tie) continue;
            if (met > 0) {
                const std::uint64_t bit = std::uint64_t{1} << (16 * (r % 4) + i);
                if (byte_of(further, met - 1) >= key.limit.fine_keep) {
                    kept.words[r / 4] |= bit;
                } else {
                    kept.words[r / 4] &= ~bit;
                }
            }
            ++met;
        }
    }
}

}  // namespace seqembed::detail
