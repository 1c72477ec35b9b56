/// @file detail/line_draws.hpp
/// @brief Training rows of floats streamed out with the dropout mask drawn a line at a time in
///        between, in straight-line code.
///
/// Streaming stores keep the memory busy only while nothing holds up the instructions between
/// them. Measured on Zen 4, a mispredicted branch between them cost far more than its own time:
/// writing the headline evaluation in pieces of 240 elements (the mask's spans, so lengths
/// that vary from row to row) took 4.1–4.5 ms against 3.6 for whole rows, while pieces of 128
/// or 256 cost nothing. The draw ahead of MaskFactors, with its countdowns and its switch over
/// steps, added 1.4–1.9 ms to evaluation's time behind streaming stores. Here every line does
/// the same work with no branch that depends on where it is in a span: one run of the next
/// span's factors and one Philox round of the span after it, their positions in registers,
/// their choices made with masks. A synthetic copy of this loop measured 1.03–1.06x a memcpy
/// of the output.
#pragma once

#include <cstdint>

#include "../types.hpp"
#include "cpu_dispatch.hpp"
#include "dropout_draws.hpp"
#include "philox.hpp"
#include "streaming_rows.hpp"

namespace seqembed::detail {

#if SEQEMBED_DETAIL_AVX512_KERNELS && SEQEMBED_DETAIL_STREAMING
/// Whether LineDraws can write float rows of `width` at `out` (AVX-512F, rows of whole 64-byte
/// lines, at least a span's 15 lines so that a span touches two rows at most).
inline bool line_draws_fit(const float* out, Index width) noexcept {
    return cpu_has_avx512f() && width % 16 == 0 && width >= static_cast<Index>(span_elements) &&
           reinterpret_cast<std::uintptr_t>(out) % 64 == 0;
}

/// Writes float rows as out = (embedding * scale + position) * factor with streaming stores,
/// the factors those of MaskFactors (the same mask, bit for bit), drawn between the lines.
///
/// The output is written a span at a time: the 15 lines of span s (elements 240 s to 240 s +
/// 239, 16 per line), which may lie in two rows. Line i of the span is run i; while it is
/// written, run i of span s + 1 is decided from that span's Philox words, and, for i < 10,
/// round i of span s + 2's Philox is computed. The 15 lines are unrolled, so that each does its
/// own fixed work: the only branch left is the rare second tie at the span's end. A row's last
/// lines wait for the next row when their span continues there; finish() writes what is left.
class LineDraws {
public:
    /// Rows of embeddings times embedding_scale, with the mask of call `call` under `seed` for
    /// a 16-bit drop threshold and a keep scale.
    LineDraws(float embedding_scale, std::uint64_t seed, std::uint64_t call, std::uint32_t threshold,
              float keep_scale) noexcept
        : m_embedding_scale(embedding_scale), m_seed(seed), m_call(call), m_limit(DrawThreshold::of(threshold)),
          m_keep_scale(keep_scale) {
        for (int round = 0; round < philox_rounds; ++round) {
            for (int word = 0; word < 2; ++word) m_round_keys[word][round] = philox_round_key(seed, word, round);
        }
    }

    /// Writes row out[0 .. width) = (embedding * scale + position) * factor, where out[0] is
    /// element first_element of the output (a multiple of 16) and line_draws_fit(out, width),
    /// or leaves its last lines for the next row or finish(); requests the lines of ahead[0 ..
    /// width) (if not null) into L2 as it writes. The rows' memory must outlive finish().
    SEQEMBED_DETAIL_TARGET_AVX512 void write_row(float* out, const float* embedding, const float* position,
                                                 Index width, const float* ahead,
                                                 std::uint64_t first_element) noexcept {
        const Row row{out, embedding, position, ahead != nullptr ? ahead : embedding};
        const auto lines = static_cast<int>(width / 16);
        int line = 0;  // the row's first line not yet written or left waiting
        if (first_element != m_next_element) {
            finish_lines();
            line = start_at(row, first_element);
        } else if (m_waiting_lines > 0) {
            write_span<true>(m_waiting, row, m_waiting_lines);  // the span that began in the last row
            line = span_runs - m_waiting_lines;
        }
        while (lines - line >= span_runs) {
            const Row at = row.at(line);
            write_span<false>(at, at, span_runs);
            line += span_runs;
        }
        m_waiting = row.at(line);
        m_waiting_lines = lines - line;
        m_next_element = first_element + static_cast<std::uint64_t>(width);
    }

    /// Writes the lines left waiting (with the factors of their span, drawn before), and orders
    /// the streaming stores before whatever this thread does next.
    SEQEMBED_DETAIL_TARGET_AVX512 void finish() noexcept {
        finish_lines();
        _mm_sfence();
    }

private:
    /// Rounds of Philox4x32-10.
    static constexpr int philox_rounds = 10;

    /// Where a row's lines are, from a line on: output, embedding, position, and the line to
    /// request ahead.
    struct Row {
        float* out;
        const float* embedding;
        const float* position;
        const float* ahead;

        /// The same row from its line `line` on.
        Row at(int line) const noexcept {
            const Index j = 16 * static_cast<Index>(line);
            return {out + j, embedding + j, position + j, ahead + j};
        }
    };

    /// A Row's addresses as integers, less 64 bytes per line skipped.
    struct Addresses {
        std::uintptr_t out;
        std::uintptr_t embedding;
        std::uintptr_t position;
        std::uintptr_t ahead;

        static Addresses of(const Row& row, int skipped_lines) noexcept {
            const auto skipped = 64 * static_cast<std::uintptr_t>(skipped_lines);
            return {reinterpret_cast<std::uintptr_t>(row.out) - skipped,
                    reinterpret_cast<std::uintptr_t>(row.embedding) - skipped,
                    reinterpret_cast<std::uintptr_t>(row.position) - skipped,
                    reinterpret_cast<std::uintptr_t>(row.ahead) - skipped};
        }

        /// Each address less other's (modulo 2^N).
        Addresses minus(const Addresses& other) const noexcept {
            return {out - other.out, embedding - other.embedding, position - other.position, ahead - other.ahead};
        }
        /// Each address plus other's (modulo 2^N).
        Addresses plus(const Addresses& other) const noexcept {
            return {out + other.out, embedding + other.embedding, position + other.position, ahead + other.ahead};
        }
        /// Each address and `mask`.
        Addresses masked(std::uintptr_t mask) const noexcept {
            return {out & mask, embedding & mask, position & mask, ahead & mask};
        }

        /// The row from line `line` on.
        Row line(int line) const noexcept {
            const auto offset = 64 * static_cast<std::uintptr_t>(line);
            return {reinterpret_cast<float*>(out + offset), reinterpret_cast<const float*>(embedding + offset),
                    reinterpret_cast<const float*>(position + offset), reinterpret_cast<const float*>(ahead + offset)};
        }
    };

    SEQEMBED_DETAIL_AVX512_WARNINGS_OFF
    /// One line: out = (embedding * scale + position) * factors, streamed.
    SEQEMBED_DETAIL_AVX512_INLINE SEQEMBED_DETAIL_NO_FP_CONTRACT static void write_line(
        const Row& row, Index j, __m512 scales, const float* factors) noexcept {
        SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY
        using L = Avx512Lanes<float>;
        const auto sum = L::add(L::mul(L::load(row.embedding + j), scales), L::load(row.position + j));
        L::stream(row.out + j, L::mul(sum, _mm512_load_ps(factors)));
    }

    /// The 15 lines of the current span: lines 0 .. first_lines - 1 from `first` on, the rest
    /// from `second` on (all from `first` unless Crossing); meanwhile the runs of the next span
    /// and rounds 0 to 9 of the one after.
    template <bool Crossing>
    SEQEMBED_DETAIL_TARGET_AVX512 SEQEMBED_DETAIL_NO_FP_CONTRACT void write_span(
        const Row& first, const Row& second, int first_lines) noexcept {
        SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY
        const __m512 scales = _mm512_set1_ps(m_embedding_scale);
        const float* factors = m_factors[m_current];
        float* next_factors = m_factors[m_current ^ 1];
        // The next span's words, and its blocks' thresholds: coarse_keep less 1 where the
        // block's first tie is kept (byte 3 of word 3 at least fine_keep).
        __m512i words[4];
        for (int w = 0; w < 4; ++w) words[w] = _mm512_load_si512(m_next_words[w]);
        const std::uint32_t fine = m_limit.fine_keep != 0 ? m_limit.fine_keep : 256;  // 256: never
        const __mmask16 first_kept = _mm512_cmpge_epu32_mask(_mm512_srli_epi32(words[3], 24),
                                                             _mm512_set1_epi32(static_cast<int>(fine)));
        const __m512i keep = _mm512_set1_epi32(static_cast<int>(m_limit.coarse_keep));
        const __m512i threshold = _mm512_mask_sub_epi32(keep, first_kept, keep, _mm512_set1_epi32(1));
        const __m512i tie = _mm512_set1_epi32(static_cast<int>(m_limit.tie_byte()));
        const __m512 kept_factor = _mm512_set1_ps(m_keep_scale);
        __mmask16 once = 0;
        __mmask16 twice = 0;
        __m512i c[4];
        philox_counters_avx512(m_call, (m_span + 2) * philox_batch, c);
        // Line i is at byte 64 i from `first`'s addresses, or from `second`'s less 64
        // first_lines bytes: those plus a masked difference (GCC branched on every line when
        // picking one Row or the other, even between integers).
        const Addresses from_first = Addresses::of(first, 0);
        const Addresses to_second = Addresses::of(second, first_lines).minus(from_first);
        SEQEMBED_DETAIL_UNROLL_RUNS
        for (int i = 0; i < span_runs; ++i) {
            const auto in_second = std::uintptr_t{0} - static_cast<std::uintptr_t>(Crossing && i >= first_lines);
            const Row row = from_first.plus(to_second.masked(in_second)).line(i);
            request_line(row.ahead);
            write_line(row, 0, scales, factors + 16 * i);
            // Run i of the next span.
            const __m512i coarse = _mm512_and_si512(_mm512_srli_epi32(words[i % 4], 8 * (i / 4)),
                                                    _mm512_set1_epi32(0xFF));
            _mm512_store_ps(next_factors + 16 * i,
                            _mm512_maskz_mov_ps(_mm512_cmpge_epu32_mask(coarse, threshold), kept_factor));
            const __mmask16 tied = _mm512_cmpeq_epi32_mask(coarse, tie);
            twice = static_cast<__mmask16>(twice | (tied & once));
            once = static_cast<__mmask16>(once | tied);
            // Round i of the span after.
            if (i < philox_rounds)
                philox_round_keyed_avx512(_mm512_set1_epi32(static_cast<int>(m_round_keys[0][i])),
                                          _mm512_set1_epi32(static_cast<int>(m_round_keys[1][i])), c);
        }
        if (twice != 0) decide_further_ties(twice, next_factors);  // about one span in 40
        for (int w = 0; w < 4; ++w) _mm512_store_si512(m_next_words[w], c[w]);
        m_current ^= 1;
        ++m_span;
    }
    SEQEMBED_DETAIL_AVX512_WARNINGS_ON

    /// The second and further ties of the next span's blocks in `twice` (its words still in
    /// m_next_words).
    void decide_further_ties(unsigned twice, float* next_factors) noexcept {
        std::uint32_t ties[philox_batch];  // 2 stands for "two or more"
        for (int i = 0; i < philox_batch; ++i) ties[i] = (twice >> i) & 1u ? 2 : 0;
        further_ties(m_next_words, ties, m_limit, m_keep_scale, m_seed, m_call, m_span + 1, next_factors);
    }

    /// Starts at element `element` of a row: the row's lines before the next span (if it starts
    /// inside one) with that span's factors drawn in one go, then the draw of the span after
    /// them and the words of the one after that. Returns the lines written.
    SEQEMBED_DETAIL_TARGET_AVX512 int start_at(const Row& row, std::uint64_t element) noexcept {
        std::uint64_t span = element / span_elements;
        int line = 0;
        if (const auto run = static_cast<int>(element % span_elements / 16); run != 0) {
            draw_span_factors_avx512(m_seed, m_call, m_limit, m_keep_scale, span, m_factors[0]);
            const __m512 scales = _mm512_set1_ps(m_embedding_scale);
            for (; line < span_runs - run; ++line) write_line(row, 16 * line, scales, m_factors[0] + 16 * (run + line));
            ++span;
        }
        m_span = span;
        m_current = 0;
        draw_span_factors_avx512(m_seed, m_call, m_limit, m_keep_scale, span, m_factors[0]);
        philox_blocks_avx512(m_seed, m_call, (span + 1) * philox_batch, m_next_words);
        return line;
    }

    /// Writes the lines left waiting, the first of the current span.
    SEQEMBED_DETAIL_TARGET_AVX512 void finish_lines() noexcept {
        const __m512 scales = _mm512_set1_ps(m_embedding_scale);
        for (int line = 0; line < m_waiting_lines; ++line)
            write_line(m_waiting, 16 * line, scales, m_factors[m_current] + 16 * line);
        m_waiting_lines = 0;
        m_next_element = ~std::uint64_t{0};
    }

    float m_embedding_scale;
    std::uint64_t m_seed;
    std::uint64_t m_call;
    DrawThreshold m_limit;
    float m_keep_scale;
    std::uint64_t m_next_element = ~std::uint64_t{0};  // no row ends here yet
    std::uint64_t m_span = 0;                           // the span written next
    Row m_waiting{};                                    // its first lines, when they wait
    int m_waiting_lines = 0;
    int m_current = 0;                                  // m_factors[m_current] is the span's
    std::uint32_t m_round_keys[2][philox_rounds];       // the Weyl keys of the rounds
    alignas(64) float m_factors[2][span_elements];      // the span's factors and the next's
    alignas(64) SpanWords m_next_words;                 // the next span's Philox words
};
#endif

}  // namespace seqembed::detail
