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
#include <type_traits>

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

    /// The coarse byte that ties (256, which no byte equals, when there are no ties).
    std::uint32_t tie_byte() const noexcept { return fine_keep != 0 ? coarse_keep - 1 : 256; }
};

/// The 16 blocks of a span, words[w][i] = word w of block 16 s + i.
using SpanWords = std::uint32_t[4][philox_batch];

/// Byte n (0 .. 15, low byte of word 0 first) of a Philox block.
inline std::uint32_t byte_of(const PhiloxBlock& block, int n) noexcept {
    return (block[static_cast<std::size_t>(n / 4)] >> (8 * (n % 4))) & 0xFFu;
}

/// Decides the second and further ties of the blocks that tie twice or more (rare: about one span
/// in 40), given each block's tie count: they read bytes 0, 1, ... of block 2^63 + 16 s + i in the
/// order of r. The first tie of each block was decided with the coarse bytes.
template <typename Scalar>
void further_ties(const SpanWords& words, const std::uint32_t (&ties)[philox_batch], DrawThreshold limit,
                  Scalar scale, std::uint64_t seed, std::uint64_t call, std::uint64_t span,
                  Scalar* factors) noexcept {
    const std::uint32_t tie = limit.tie_byte();
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

/// factors[j] = keep_scale or 0 for the span_elements elements of span `span` of call `call`,
/// from the span's words (seed and call are needed only for blocks that tie twice). Inlined into
/// each caller, so that it is vectorised for the caller's target.
template <typename Scalar>
SEQEMBED_DETAIL_ALWAYS_INLINE void span_factors(const SpanWords& words, DrawThreshold limit,
                                                Scalar scale, std::uint64_t seed,
                                                std::uint64_t call, std::uint64_t span,
                                                Scalar* SEQEMBED_DETAIL_RESTRICT factors) noexcept {
    const std::uint32_t keep = limit.coarse_keep;
    const std::uint32_t tie = limit.tie_byte();
    // Per block: `bonus` is 1 when the block's first tie is kept (byte 3 of word 3 at least
    // fine_keep), so that a coarse byte is kept when coarse + bonus reaches keep (only a tie is
    // one short; further ties, which the bonus would also keep, are decided again by
    // further_ties). `ties` counts the block's ties. Every operation is lane-wise: the loop
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
            ties[i] += tied;
        }
    }
    std::uint32_t most = 0;
    for (int i = 0; i < philox_batch; ++i) most = std::max(most, ties[i]);
    if (most >= 2) further_ties(words, ties, limit, scale, seed, call, span, factors);
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

#if SEQEMBED_DETAIL_AVX512_KERNELS
SEQEMBED_DETAIL_AVX512_WARNINGS_OFF
/// Run `run`'s coarse bytes from word run % 4 of 16 blocks: byte run / 4 of each lane.
SEQEMBED_DETAIL_AVX512_INLINE __m512i run_coarse_bytes(__m512i word, int run) noexcept {
    const __m512i shifted = _mm512_srli_epi32(word, static_cast<unsigned>(8 * (run / 4)));
    return run / 4 == 3 ? shifted : _mm512_and_si512(shifted, _mm512_set1_epi32(0xFF));
}
SEQEMBED_DETAIL_AVX512_WARNINGS_ON
#endif

/// The dropout factors of one call, keep_scale or 0 for each element, produced span by span.
/// The last partly used span is kept, so that rows which share a span (every row whose width is
/// not a multiple of 240) draw it once.
///
/// With AVX-512, the span after the kept one can be drawn ahead a step at a time: RowStreamer
/// calls after_line() between the lines it streams, so that the draw's arithmetic runs while
/// the stores and the requests for the next rows are in flight. Drawn in one go between two
/// pieces of a row, the same arithmetic left the memory idle: headline training took evaluation's
/// time plus the whole of the draws'.
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
    /// span_elements of them), valid until the next call of a member but after_line.
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

#if SEQEMBED_DETAIL_AVX512_KERNELS
    SEQEMBED_DETAIL_AVX512_WARNINGS_OFF
    /// Called by RowStreamer after each line it streams, when the CPU has AVX-512F: every
    /// lines_per_step-th call does a step of the draw of the span after the kept one. Changes no
    /// factor at() gave.
    SEQEMBED_DETAIL_AVX512_INLINE void after_line() noexcept {
        if (m_ahead.steps_done >= draw_steps || --m_ahead.countdown > 0) return;
        m_ahead.countdown = lines_per_step;
        draw_step();
    }

    /// The next step of the draw ahead: Philox's 10 rounds on the span's 16 blocks, then runs
    /// 0 to 4, 5 to 9, and 10 to 14 with the blocks that tie twice.
    SEQEMBED_DETAIL_AVX512_INLINE void draw_step() noexcept {
        switch (m_ahead.steps_done++) {
            case 0: {
                __m512i c[4];
                philox_counters_avx512(m_call, m_ahead.span * philox_batch, c);
                for (int round = 0; round < 10; ++round) philox_round_avx512(m_seed, round, c);
                for (int w = 0; w < 4; ++w) _mm512_store_si512(m_ahead.words[w], c[w]);
                break;
            }
            case 1: draw_runs<0>(); break;
            case 2: draw_runs<runs_per_step>(); break;
            default:
                draw_runs<2 * runs_per_step>();
                if (m_ahead.tied_twice != 0) {
                    std::uint32_t ties[philox_batch];  // 2 stands for "two or more"
                    for (int i = 0; i < philox_batch; ++i) ties[i] = (m_ahead.tied_twice >> i) & 1u ? 2 : 0;
                    further_ties(m_ahead.words, ties, m_limit, m_scale, m_seed, m_call, m_ahead.span,
                                 ahead_factors());
                }
                break;
        }
    }
    SEQEMBED_DETAIL_AVX512_WARNINGS_ON

    /// Up to `steps` steps of the draw ahead (all that are left at most), callable from code of
    /// any target (after_line and draw_step inline into AVX-512 code only), when the CPU has
    /// AVX-512F.
    SEQEMBED_DETAIL_TARGET_AVX512 void draw_ahead(int steps) noexcept {
        for (int step = 0; step < steps && m_ahead.steps_done < draw_steps; ++step) draw_step();
    }
#else
    /// Nothing: the span after the kept one is drawn when it is asked for.
    void after_line() noexcept {}
    /// Nothing (see after_line).
    void draw_ahead(int) noexcept {}
#endif

private:
    /// Steps of a draw ahead: Philox, then the runs in three steps.
    static constexpr int draw_steps = 4;
    static constexpr int runs_per_step = span_runs / 3;
    /// Lines streamed per step: a span's 240 elements are 15 lines of floats (30 of doubles),
    /// which gives the draw's 4 steps 5 chances. A step holds a few dozen instructions, which
    /// out-of-order execution runs while the stores wait; a step per line (a round or a run
    /// each, their state passed in memory) was no faster.
    static constexpr int lines_per_step = static_cast<int>(3 * 16 * sizeof(Scalar) / 64);

#if SEQEMBED_DETAIL_AVX512_KERNELS
    SEQEMBED_DETAIL_AVX512_WARNINGS_OFF
    /// Runs First .. First + runs_per_step - 1 of the span drawn ahead, as span_factors makes
    /// them (lane i for block i): a coarse byte is kept when at least its block's threshold,
    /// coarse_keep less 1 when the block's first tie is kept. Run 0 sets the thresholds; the tie
    /// masks say which blocks have tied once, and twice.
    template <int First>
    SEQEMBED_DETAIL_AVX512_INLINE void draw_runs() noexcept {
        Ahead& a = m_ahead;
        __m512i threshold;
        if (First == 0) {
            // Kept first ties: byte 3 of word 3 at least fine_keep.
            const __mmask16 first_kept =
                m_limit.fine_keep == 0
                    ? __mmask16{0}
                    : _mm512_cmpge_epu32_mask(_mm512_srli_epi32(_mm512_load_si512(a.words[3]), 24),
                                              _mm512_set1_epi32(static_cast<int>(m_limit.fine_keep)));
            threshold = _mm512_mask_sub_epi32(_mm512_set1_epi32(static_cast<int>(m_limit.coarse_keep)), first_kept,
                                              _mm512_set1_epi32(static_cast<int>(m_limit.coarse_keep)),
                                              _mm512_set1_epi32(1));
            _mm512_store_si512(a.threshold, threshold);
            a.tied_once = 0;
            a.tied_twice = 0;
        } else {
            threshold = _mm512_load_si512(a.threshold);
        }
        const __m512i tie = _mm512_set1_epi32(static_cast<int>(m_limit.tie_byte()));
        __mmask16 once = a.tied_once;
        __mmask16 twice = a.tied_twice;
        SEQEMBED_DETAIL_UNROLL_RUNS
        for (int r = First; r < First + runs_per_step; ++r) {
            const __m512i coarse = run_coarse_bytes(_mm512_load_si512(a.words[r % 4]), r);
            const __mmask16 tied = _mm512_cmpeq_epi32_mask(coarse, tie);
            store_run(ahead_factors() + 16 * r, _mm512_cmpge_epu32_mask(coarse, threshold));
            twice = static_cast<__mmask16>(twice | (tied & once));
            once = static_cast<__mmask16>(once | tied);
        }
        a.tied_once = once;
        a.tied_twice = twice;
    }
    SEQEMBED_DETAIL_AVX512_WARNINGS_ON
#endif

    /// The state of the draw of the span after the kept one, drawn a step at a time into the
    /// other buffer.
    struct Ahead {
        alignas(64) SpanWords words;
        alignas(64) std::uint32_t threshold[philox_batch];  // per block
        std::uint16_t tied_once = 0;   // blocks that have tied
        std::uint16_t tied_twice = 0;  // blocks that have tied twice or more
        std::uint64_t span = ~std::uint64_t{0};  // none until a span is kept
        int steps_done = draw_steps;             // nothing to draw until then
        int countdown = lines_per_step;          // lines until the next step
    };

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

    Scalar* kept_factors() noexcept { return m_buffers[m_kept_buffer]; }
    Scalar* ahead_factors() noexcept { return m_buffers[m_kept_buffer ^ 1]; }

    const Scalar* cached_span(std::uint64_t span) noexcept {
        if (span == m_cached) return kept_factors();
        if (span == m_ahead.span && m_ahead.steps_done > 0) {  // its draw ahead has begun
            draw_ahead(draw_steps - m_ahead.steps_done);
            m_kept_buffer ^= 1;
        } else {
            draw(span, kept_factors());
        }
        m_cached = span;
        m_ahead.span = span + 1;
        m_ahead.steps_done = 0;
        m_ahead.countdown = lines_per_step;
        return kept_factors();
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

#if SEQEMBED_DETAIL_AVX512_KERNELS
    SEQEMBED_DETAIL_AVX512_WARNINGS_OFF
    /// factors[i] = m_scale where lane i of kept is set, else 0, for 16 factors.
    SEQEMBED_DETAIL_AVX512_INLINE void store_run(Scalar* factors, __mmask16 kept) const noexcept {
        if constexpr (std::is_same_v<Scalar, float>) {
            _mm512_store_ps(factors, _mm512_maskz_mov_ps(kept, _mm512_set1_ps(m_scale)));
        } else {
            static_assert(std::is_same_v<Scalar, double>, "float or double factors");
            const __m512d scales = _mm512_set1_pd(m_scale);
            _mm512_store_pd(factors, _mm512_maskz_mov_pd(static_cast<__mmask8>(kept), scales));
            _mm512_store_pd(factors + 8, _mm512_maskz_mov_pd(static_cast<__mmask8>(kept >> 8), scales));
        }
    }
    SEQEMBED_DETAIL_AVX512_WARNINGS_ON
#endif

    std::uint64_t m_seed;
    std::uint64_t m_call;
    DrawThreshold m_limit;
    Scalar m_scale;
    std::uint64_t m_cached = ~std::uint64_t{0};  // no span has this index
    alignas(64) Scalar m_buffers[2][span_elements];  // the kept span's factors, and the next's
    int m_kept_buffer = 0;
    Ahead m_ahead;
};

}  // namespace seqembed::detail
