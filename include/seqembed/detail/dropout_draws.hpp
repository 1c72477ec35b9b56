/// @file detail/dropout_draws.hpp
/// @brief Which random bits decide whether dropout keeps an element: the mask's layout over
///        Philox4x32-10, and the kernel that turns a span of elements into factors.
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
/// honoured to 1/65536 as if every element read 16 bits, with 15 elements per block instead of 8,
/// and the ties cost no further Philox work but in that one span in 40.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../types.hpp"
#include "compiler_hints.hpp"
#include "cpu_dispatch.hpp"
#include "philox.hpp"

namespace seqembed::detail {

/// Runs of 16 elements (one byte of one word of the 16 blocks) per span.
inline constexpr int span_runs = 15;
/// Elements per span, one coarse byte each; the 16th run's bytes (byte 3 of word 3) are the
/// fine bytes of the blocks' first ties.
inline constexpr std::uint64_t span_elements = 16 * span_runs;
/// Block index bit of the blocks that hold the fine bytes of a block's second and further ties.
inline constexpr std::uint64_t fine_block_bit = std::uint64_t{1} << 63;

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
};

/// The 16 blocks of a span, words[w][i] = word w of block 16 s + i.
using SpanWords = std::uint32_t[4][philox_batch];

/// Byte n (0 .. 15, low byte of word 0 first) of a Philox block.
inline std::uint32_t byte_of(const PhiloxBlock& block, int n) noexcept {
    return (block[static_cast<std::size_t>(n / 4)] >> (8 * (n % 4))) & 0xFFu;
}

/// factors[j] = keep_scale or 0 for the span_elements elements of span `span` of call `call`,
/// from the span's words (seed and call are needed only for blocks that tie twice). Inlined into
/// each caller, so that it is vectorised for the caller's target.
template <typename Scalar>
SEQEMBED_DETAIL_ALWAYS_INLINE void span_factors(const SpanWords& words, DrawThreshold limit,
                                                Scalar scale, std::uint64_t seed,
                                                std::uint64_t call, std::uint64_t span,
                                                Scalar* SEQEMBED_DETAIL_RESTRICT factors) noexcept {
    const std::uint32_t keep = limit.coarse_keep;
    const std::uint32_t tie = limit.fine_keep != 0 ? keep - 1 : 256;  // 256: no byte ties
    // Per block: `bonus` is 1 while the block has had no tie yet and its first tie would be kept
    // (byte 3 of word 3 at least fine_keep), so that a coarse byte is kept when coarse + bonus
    // reaches keep; `ties` counts the block's ties. Every operation is lane-wise: the loop
    // vectorises.
    std::uint32_t bonus[philox_batch];
    std::uint32_t ties[philox_batch];
    for (int i = 0; i < philox_batch; ++i) {
        bonus[i] = limit.fine_keep != 0 && (words[3][i] >> 24) >= limit.fine_keep ? 1 : 0;
        ties[i] = 0;
    }
    SEQEMBED_DETAIL_UNROLL_RUNS
    for (int r = 0; r < span_runs; ++r) {
        const std::uint32_t* word = words[r % 4];
        const int shift = 8 * (r / 4);
        Scalar* SEQEMBED_DETAIL_RESTRICT run = factors + 16 * r;
        SEQEMBED_DETAIL_NO_UNROLL
        for (int i = 0; i < philox_batch; ++i) {
            const std::uint32_t coarse = (word[i] >> shift) & 0xFFu;
            const std::uint32_t tied = coarse == tie ? 1 : 0;
            run[i] = coarse + bonus[i] >= keep ? scale : Scalar(0);
            bonus[i] &= tied ^ 1u;
            ties[i] += tied;
        }
    }
    std::uint32_t most = 0;
    for (int i = 0; i < philox_batch; ++i) most = std::max(most, ties[i]);
    if (most < 2) return;
    // A block with two ties or more (rare): the first was decided above, the others read bytes
    // 0, 1, ... of block 2^63 + 16 s + i in the order of r.
    for (int i = 0; i < philox_batch; ++i) {
        if (ties[i] < 2) continue;
        const PhiloxBlock further =
            philox_block(seed, call, fine_block_bit | (span * philox_batch + static_cast<std::uint64_t>(i)));
        int met = 0;  // ties of block i met so far
        for (int r = 0; r < span_runs; ++r) {
            if (((words[r % 4][i] >> (8 * (r / 4))) & 0xFFu) != tie) continue;
            if (met > 0) factors[16 * r + i] = byte_of(further, met - 1) >= limit.fine_keep ? scale : Scalar(0);
            ++met;
        }
    }
}

/// The factors of span `span` of call `call`: its Philox blocks, then span_factors.
template <typename Scalar>
SEQEMBED_DETAIL_TARGET_CLONES void draw_span_factors(std::uint64_t seed, std::uint64_t call, DrawThreshold limit,
                                             Scalar scale, std::uint64_t span, Scalar* factors) noexcept {
    alignas(64) SpanWords words;
    philox_blocks_portable(seed, call, span * philox_batch, words);
    span_factors(words, limit, scale, seed, call, span, factors);
}

#if SEQEMBED_DETAIL_AVX512_KERNELS
/// draw_span_factors with AVX-512F, whatever the build's flags: the blocks stay in registers between
/// Philox and span_factors, both inlined here.
template <typename Scalar>
SEQEMBED_DETAIL_TARGET_AVX512 void draw_span_factors_avx512(std::uint64_t seed, std::uint64_t call,
                                                    DrawThreshold limit, Scalar scale,
                                                    std::uint64_t span, Scalar* factors) noexcept {
    alignas(64) SpanWords words;
    philox_blocks_avx512(seed, call, span * philox_batch, words);
    span_factors(words, limit, scale, seed, call, span, factors);
}
#endif

/// The dropout factors of one call, keep_scale or 0 for each element, produced span by span.
/// The last partly used span is kept, so that rows which share a span (every row whose width is
/// not a multiple of 240) draw it once.
template <typename Scalar>
class MaskFactors {
public:
    /// Factors of call `call` under `seed` for a 16-bit drop threshold and a keep scale.
    MaskFactors(std::uint64_t seed, std::uint64_t call, std::uint32_t threshold, Scalar scale) noexcept
        : m_seed(seed), m_call(call), m_limit(DrawThreshold::of(threshold)), m_scale(scale) {}

    /// factors[k] = the factor of element first_element + k, for k < count.
    void write(Scalar* factors, Index count, std::uint64_t first_element) noexcept {
        for_each_piece(count, first_element, [&](std::uint64_t span, Index skip, Index take, Index done) {
            if (take == static_cast<Index>(span_elements)) {
                draw(span, factors + done);
            } else {
                const Scalar* cached = cached_span(span) + skip;
                std::copy(cached, cached + take, factors + done);
            }
        });
    }

    /// The factors of element `element` and of the rest of its span (span_elements - element %
    /// span_elements of them), valid until the next call.
    const Scalar* at(std::uint64_t element) noexcept {
        return cached_span(element / span_elements) + element % span_elements;
    }

    /// values[k] *= the factor of element first_element + k, for k < count (so a dropped NaN
    /// stays NaN, as in PyTorch's multiplication by the scaled mask).
    void apply(Scalar* values, Index count, std::uint64_t first_element) noexcept {
        for_each_piece(count, first_element, [&](std::uint64_t span, Index skip, Index take, Index done) {
            // Eigen's packets: vectorised at -O2 too, where GCC's loop vectoriser leaves loops
            // of unknown length alone.
            Eigen::Map<Eigen::Array<Scalar, Eigen::Dynamic, 1>>(values + done, take) *=
                Eigen::Map<const Eigen::Array<Scalar, Eigen::Dynamic, 1>>(cached_span(span) + skip, take);
        });
    }

private:
    /// Calls piece(span, skip, take, done) for the pieces of elements first_element ..
    /// first_element + count - 1 that lie in one span: elements skip .. skip + take - 1 of span
    /// `span`, which are elements done .. done + take - 1 of the request.
    template <typename Piece>
    static void for_each_piece(Index count, std::uint64_t first_element, Piece&& piece) noexcept {
        Index done = 0;
        while (done < count) {
            const std::uint64_t element = first_element + static_cast<std::uint64_t>(done);
            const auto skip = static_cast<Index>(element % span_elements);
            const Index take = std::min<Index>(static_cast<Index>(span_elements) - skip, count - done);
            piece(element / span_elements, skip, take, done);
            done += take;
        }
    }

    const Scalar* cached_span(std::uint64_t span) noexcept {
        if (span != m_cached) {
            draw(span, m_factors);
            m_cached = span;
        }
        return m_factors;
    }

    void draw(std::uint64_t span, Scalar* factors) const noexcept {
#if SEQEMBED_DETAIL_AVX512_KERNELS
        if (cpu_has_avx512f()) {
            draw_span_factors_avx512(m_seed, m_call, m_limit, m_scale, span, factors);
            return;
        }
#endif
        draw_span_factors(m_seed, m_call, m_limit, m_scale, span, factors);
    }

    std::uint64_t m_seed;
    std::uint64_t m_call;
    DrawThreshold m_limit;
    Scalar m_scale;
    std::uint64_t m_cached = ~std::uint64_t{0};  // no span has this index
    alignas(64) Scalar m_factors[span_elements];
};

}  // namespace seqembed::detail
