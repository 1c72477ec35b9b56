/// @file detail/line_draws.hpp
/// @brief Training rows of floats streamed out with the dropout mask drawn between the lines,
///        in straight-line code that reads little but the rows.
///
/// Streaming stores keep the memory busy only while nothing holds up the instructions between
/// them. Two things did, measured on Zen 4 (headline workload, evaluation 3.4–3.6 ms):
/// - A mispredicted branch. Writing evaluation rows in pieces of 240 elements (the mask's
///   spans, so lengths that vary from row to row) took 4.1–4.5 ms; pieces of 128 or 256 cost
///   nothing. The draw ahead of MaskFactors, with its countdowns and its switch over steps,
///   added 1.4–1.9 ms.
/// - A load from a fixed address, such as a factor buffer: with the factors loaded from a 960-byte
///   buffer, rows written in one loop took 4.0–4.1 ms, against 3.2–3.3 without them. (A load
///   whose address matches a store in flight modulo 4 KiB waits for it; the streaming stores
///   sweep every page offset.)
/// So each line here computes its factors from the span's Philox words in registers, and does a
/// fixed share of the next span's Philox, with no branch on where it is in a span.
///
/// Rows that do not start on a line (Eigen aligns to 16 bytes in builds without AVX flags) are
/// written the same way when they lie end to end: each line's values are computed where the
/// run's elements lie in the embedding and position rows, then shifted into the output's lines
/// together with the previous run's last values (one permutation a line), so that the line
/// that holds the end of one row and the start of the next is streamed whole too. Only the
/// first and the last line of a stretch of rows, shared with memory that is not theirs, are
/// written with masked plain stores.
#pragma once

#include <cstdint>

#include "../types.hpp"
#include "cpu_dispatch.hpp"
#include "dropout_draws.hpp"
#include "philox.hpp"
#include "row_requests.hpp"
#include "streaming_rows.hpp"

namespace seqembed::detail {

#if SEQEMBED_DETAIL_AVX512_KERNELS && SEQEMBED_DETAIL_STREAMING
/// Where in its 64-byte line `out` lies, in floats (0 to 15).
inline int lane_shift(const float* out) noexcept {
    return static_cast<int>(reinterpret_cast<std::uintptr_t>(out) % 64 / sizeof(float));
}

/// The shift LineDraws writes float rows of `width` with, `stride` floats apart and the first at
/// `first` (lane_shift(first)), or -1 if it cannot: it needs AVX-512F; rows of whole runs (16
/// elements) and at least a span's 15 of them, so that a span touches two rows at most; every
/// row at the same place in its line (a stride of whole runs); and rows that start on a line,
/// or that lie end to end (a stride of the width), whose shared lines are then written whole.
inline int line_draws_shift(const float* first, Index width, Index stride) noexcept {
    if (!cpu_has_avx512f() || width % 16 != 0 || width < static_cast<Index>(span_elements) || stride % 16 != 0)
        return -1;
    const int shift = lane_shift(first);
    return shift == 0 || stride == width ? shift : -1;
}

/// Writes float rows as out = (embedding * embedding_scale + position) * factor with streaming
/// stores, the factors those of MaskFactors (the same mask, bit for bit), drawn between the
/// lines.
///
/// The output is written a mask span at a time: the 15 lines of span s (elements 240 s to
/// 240 s + 239, 16 per line), which may lie in two rows. The span's Philox words are in
/// registers; line i's factors are run i's coarse bytes against the blocks' thresholds, and for
/// i < 10 round i of span s + 1's Philox follows line i. The 15 lines are unrolled, so that each
/// does its own fixed work; a span whose blocks tie twice (about one in 40) is drawn in one go
/// instead. A row's last lines wait for the next row when their span continues there; finish()
/// writes what is left.
///
/// "Line i" of a span below is run i's 16 elements, which are a 64-byte line of the output
/// when the rows start on lines (shift 0). Otherwise they lie `shift` floats into a line, and
/// the line written for run i holds the last `shift` values of run i - 1 and the first
/// 16 - shift of run i.
class LineDraws {
public:
    /// Rows of embeddings times embedding_scale, with the mask of call `call` under `seed` for
    /// a 16-bit drop threshold and a keep scale; rows that start `shift` floats into a 64-byte
    /// line (lane_shift); the lines of the rows ahead are requested into `level`.
    LineDraws(float embedding_scale, std::uint64_t seed, std::uint64_t call, std::uint32_t threshold,
              float keep_scale, int shift = 0, RequestLevel level = RequestLevel::l1) noexcept
        : m_embedding_scale(embedding_scale), m_seed(seed), m_call(call), m_limit(DrawThreshold::of(threshold)),
          m_keep_scale(keep_scale), m_shift(shift), m_level(level) {}

    /// Writes row out[0 .. width) = (embedding * embedding_scale + position) * factor, where out[0] is
    /// element first_element of the output (a multiple of 16) and lane_shift(out) is the shift
    /// LineDraws was made with (line_draws_shift of the rows), or leaves its last lines for the
    /// next row or finish(); requests the lines of ahead[0 .. width) (if not null) as it writes.
    /// With a shift, the rows given one after the other (first_element continuing the last
    /// row's) must lie end to end. The rows' memory must outlive finish().
    void write_row(float* out, const float* embedding, const float* position, Index width, const float* ahead,
                   std::uint64_t first_element) noexcept {
        if (m_level == RequestLevel::l1) {
            if (m_shift == 0) {
                write_row_as<RequestLevel::l1, false>(out, embedding, position, width, ahead, first_element);
            } else {
                write_row_as<RequestLevel::l1, true>(out, embedding, position, width, ahead, first_element);
            }
        } else {
            if (m_shift == 0) {
                write_row_as<RequestLevel::l2, false>(out, embedding, position, width, ahead, first_element);
            } else {
                write_row_as<RequestLevel::l2, true>(out, embedding, position, width, ahead, first_element);
            }
        }
    }

    /// Writes the lines left waiting (with the factors of their span, drawn before), and orders
    /// the streaming stores before whatever this thread does next.
    void finish() noexcept {
        if (m_shift == 0) {
            finish_lines<false>();
        } else {
            finish_lines<true>();
        }
        _mm_sfence();
    }

private:
    /// Rounds of Philox4x32-10.
    static constexpr int philox_rounds = 10;

    /// write_row, requesting into Level, with rows that start on lines or (Shifted) do not.
    template <RequestLevel Level, bool Shifted>
    SEQEMBED_DETAIL_TARGET_AVX512 void write_row_as(float* out, const float* embedding, const float* position,
                                                    Index width, const float* ahead,
                                                    std::uint64_t first_element) noexcept {
        const Row row{out, embedding, position, ahead != nullptr ? ahead : embedding};
        const auto lines = static_cast<int>(width / 16);
        int line = 0;  // the row's first line not yet written or left waiting
        if (first_element != m_next_element) {
            finish_lines<Shifted>();
            line = start_at<Level, Shifted>(row, first_element);
        } else {
            // This row goes on where the last ended. With a shift, a line holds the end of that row
            // and the start of this one: they must lie end to end (out is where the last ended).
            // Not asserted: this is noexcept, and eigen_assert may be defined to throw.
            if (m_waiting_lines > 0) {  // the span that began in the last row
                write_span<true, Level, Shifted>(m_waiting, row, m_waiting_lines);
                line = span_runs - m_waiting_lines;
            }
        }
        while (lines - line >= span_runs) {
            const Row at = row.at(line);
            write_span<false, Level, Shifted>(at, at, span_runs);
            line += span_runs;
        }
        m_waiting = row.at(line);
        m_waiting_lines = lines - line;
        m_next_element = first_element + static_cast<std::uint64_t>(width);
    }

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
    /// One run's values: (embedding * scale + position) * factor.
    SEQEMBED_DETAIL_AVX512_INLINE SEQEMBED_DETAIL_NO_FP_CONTRACT static __m512 line_value(
        const Row& row, __m512 scales, __m512 factor) noexcept {
        SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY
        using L = Avx512Lanes<float>;
        const auto sum = L::add(L::mul(L::load(row.embedding), scales), L::load(row.position));
        return L::mul(sum, factor);
    }

    /// How the runs' values are shifted into the output's lines: `shift` floats, the permutation
    /// that puts the last `shift` values of one run before the first 16 - shift of the next.
    struct LineShift {
        Index shift;
        __m512i lanes;

        SEQEMBED_DETAIL_AVX512_INLINE static LineShift of(int shift) noexcept {
            return {shift, _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(16 - shift))};
        }
        /// The line that starts `shift` floats before run `value`'s first element.
        SEQEMBED_DETAIL_AVX512_INLINE __m512 line(__m512 previous, __m512 value) const noexcept {
            return _mm512_permutex2var_ps(previous, lanes, value);
        }
        /// The lanes of that line that hold run `value`'s elements (the first of a stretch).
        __mmask16 head() const noexcept { return static_cast<__mmask16>(0xFFFFu << shift); }
        /// The lanes of the line after that hold run `value`'s last elements (the last of a
        /// stretch).
        __mmask16 tail() const noexcept { return static_cast<__mmask16>((1u << shift) - 1); }
    };

    /// Streams run `value`, whose first element is at `out`: at out itself, or (Shifted) in the
    /// line that starts at out - shift, after the last values of `previous` (the run before),
    /// which becomes `value`.
    template <bool Shifted>
    SEQEMBED_DETAIL_AVX512_INLINE static void stream_run(float* out, __m512 value, __m512& previous,
                                                         const LineShift& shift) noexcept {
        if constexpr (Shifted) {
            _mm512_stream_ps(out - shift.shift, shift.line(previous, value));
            previous = value;
        } else {
            (void)previous;
            (void)shift;
            _mm512_stream_ps(out, value);
        }
    }

    /// The 15 lines of span m_span: lines 0 .. first_lines - 1 from `first` on, the rest from
    /// `second` on (all from `first` unless Crossing). Each line's factors come from the span's
    /// Philox words in registers, and rounds 0 to 9 of the next span's Philox run between the
    /// lines. A span whose blocks tie twice (about one in 40) is drawn in one go instead. The
    /// lines of the rows ahead go into Level.
    template <bool Crossing, RequestLevel Level, bool Shifted>
    SEQEMBED_DETAIL_TARGET_AVX512 SEQEMBED_DETAIL_NO_FP_CONTRACT void write_span(
        const Row& first, const Row& second, int first_lines) noexcept {
        SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY
        // The span's words, and its blocks' thresholds: coarse_keep less 1 where the block's
        // first tie is kept (byte 3 of word 3 at least fine_keep).
        __m512i words[4];
        for (int w = 0; w < 4; ++w) words[w] = _mm512_load_si512(m_words[w]);
        const std::uint32_t fine = m_limit.fine_keep != 0 ? m_limit.fine_keep : 256;  // 256: never
        const __mmask16 first_kept = _mm512_cmpge_epu32_mask(_mm512_srli_epi32(words[3], 24),
                                                             _mm512_set1_epi32(static_cast<int>(fine)));
        const __m512i keep = _mm512_set1_epi32(static_cast<int>(m_limit.coarse_keep));
        const __m512i threshold = _mm512_mask_sub_epi32(keep, first_kept, keep, _mm512_set1_epi32(1));
        // Ties per block: a second one takes another block's byte.
        const __m512i tie = _mm512_set1_epi32(static_cast<int>(m_limit.tie_byte()));
        __m512i ties = _mm512_setzero_si512();
        SEQEMBED_DETAIL_UNROLL_RUNS
        for (int i = 0; i < span_runs; ++i)
            ties = _mm512_mask_add_epi32(ties, _mm512_cmpeq_epi32_mask(run_coarse_bytes(words[i % 4], i), tie), ties,
                                         _mm512_set1_epi32(1));
        if (_mm512_cmpgt_epu32_mask(ties, _mm512_set1_epi32(1)) != 0) {
            write_span_drawn_whole<Level, Shifted>(first, second, first_lines);
            return;
        }
        const __m512 scales = _mm512_set1_ps(m_embedding_scale);
        const __m512 kept_factor = _mm512_set1_ps(m_keep_scale);
        // Members read once into locals: GCC reloaded the seed for every round, and a load
        // whose address matches a streaming store in flight modulo 4 KiB waits for it.
        const std::uint64_t seed = m_seed;
        const LineShift shift = LineShift::of(m_shift);
        __m512 previous = Shifted ? _mm512_load_ps(m_previous) : _mm512_setzero_ps();
        __m512i c[4];
        philox_counters_avx512(m_call, (m_span + 1) * philox_batch, c);
        // Line i is at byte 64 i from `first`'s addresses, or from `second`'s less 64
        // first_lines bytes: those plus a masked difference (GCC branched on every line when
        // picking one Row or the other, even between integers).
        const Addresses from_first = Addresses::of(first, 0);
        const Addresses to_second = Addresses::of(second, first_lines).minus(from_first);
        SEQEMBED_DETAIL_UNROLL_RUNS
        for (int i = 0; i < span_runs; ++i) {
            const auto in_second = std::uintptr_t{0} - static_cast<std::uintptr_t>(Crossing && i >= first_lines);
            const Row row = from_first.plus(to_second.masked(in_second)).line(i);
            request_line<Level>(row.ahead);
            const __mmask16 kept = _mm512_cmpge_epu32_mask(run_coarse_bytes(words[i % 4], i), threshold);
            stream_run<Shifted>(row.out, line_value(row, scales, _mm512_maskz_mov_ps(kept, kept_factor)), previous,
                                shift);
            if (i < philox_rounds)  // keys as immediates: no load from the stack (see the file's top)
                philox_round_keyed_avx512(_mm512_set1_epi32(static_cast<int>(philox_round_key(seed, 0, i))),
                                          _mm512_set1_epi32(static_cast<int>(philox_round_key(seed, 1, i))), c);
        }
        for (int w = 0; w < 4; ++w) _mm512_store_si512(m_words[w], c[w]);
        if constexpr (Shifted) _mm512_store_ps(m_previous, previous);
        ++m_span;
    }


    /// write_span with the span's factors drawn in one go into m_factors (for second ties).
    template <RequestLevel Level, bool Shifted>
    SEQEMBED_DETAIL_TARGET_AVX512 void write_span_drawn_whole(const Row& first, const Row& second,
                                                              int first_lines) noexcept {
        span_factors(m_words, m_limit, m_keep_scale, m_seed, m_call, m_span, m_factors);
        const __m512 scales = _mm512_set1_ps(m_embedding_scale);
        const LineShift shift = LineShift::of(m_shift);
        __m512 previous = Shifted ? _mm512_load_ps(m_previous) : _mm512_setzero_ps();
        for (int i = 0; i < span_runs; ++i) {
            const Row row = i < first_lines ? first.at(i) : second.at(i - first_lines);
            request_line<Level>(row.ahead);
            stream_run<Shifted>(row.out, line_value(row, scales, _mm512_load_ps(m_factors + 16 * i)), previous, shift);
        }
        if constexpr (Shifted) _mm512_store_ps(m_previous, previous);
        ++m_span;
        philox_blocks_avx512(m_seed, m_call, m_span * philox_batch, m_words);
    }

    /// Starts at element `element` of a row: the row's lines before the next span (if it starts
    /// inside one, or always when Shifted) with that span's factors drawn in one go, then that
    /// next span's words. When Shifted, the first line, which holds memory before the row (not
    /// this stretch's), is written with a masked plain store. Returns the lines written; the lines
    /// ahead of them are requested into Level.
    template <RequestLevel Level, bool Shifted>
    SEQEMBED_DETAIL_TARGET_AVX512 int start_at(const Row& row, std::uint64_t element) noexcept {
        std::uint64_t span = element / span_elements;
        int line = 0;
        if (const auto run = static_cast<int>(element % span_elements / 16); run != 0 || Shifted) {
            draw_span_factors_avx512(m_seed, m_call, m_limit, m_keep_scale, span, m_factors);
            const __m512 scales = _mm512_set1_ps(m_embedding_scale);
            const LineShift shift = LineShift::of(m_shift);
            __m512 previous = _mm512_setzero_ps();
            for (; line < span_runs - run; ++line) {
                request_line<Level>(row.at(line).ahead);
                const __m512 value = line_value(row.at(line), scales, _mm512_load_ps(m_factors + 16 * (run + line)));
                if (Shifted && line == 0) {
                    _mm512_mask_storeu_ps(row.out - shift.shift, shift.head(), shift.line(previous, value));
                    previous = value;
                } else {
                    stream_run<Shifted>(row.at(line).out, value, previous, shift);
                }
            }
            if constexpr (Shifted) _mm512_store_ps(m_previous, previous);
            ++span;
        }
        m_span = span;
        philox_blocks_avx512(m_seed, m_call, m_span * philox_batch, m_words);
        return line;
    }

    /// Writes the lines left waiting, the first of span m_span, and when Shifted the stretch's
    /// last line, which holds memory after it, with a masked plain store.
    template <bool Shifted>
    SEQEMBED_DETAIL_TARGET_AVX512 void finish_lines() noexcept {
        const bool stretch = m_next_element != ~std::uint64_t{0};  // rows written since the start
        const LineShift shift = LineShift::of(m_shift);
        __m512 previous = Shifted && stretch ? _mm512_load_ps(m_previous) : _mm512_setzero_ps();
        if (m_waiting_lines > 0) {
            span_factors(m_words, m_limit, m_keep_scale, m_seed, m_call, m_span, m_factors);
            const __m512 scales = _mm512_set1_ps(m_embedding_scale);
            for (int line = 0; line < m_waiting_lines; ++line)
                stream_run<Shifted>(m_waiting.at(line).out,
                                    line_value(m_waiting.at(line), scales, _mm512_load_ps(m_factors + 16 * line)),
                                    previous, shift);
        }
        if (Shifted && stretch)
            _mm512_mask_storeu_ps(m_waiting.at(m_waiting_lines).out - shift.shift, shift.tail(),
                                  shift.line(previous, _mm512_setzero_ps()));
        m_waiting_lines = 0;
        m_next_element = ~std::uint64_t{0};
    }
    SEQEMBED_DETAIL_AVX512_WARNINGS_ON

    float m_embedding_scale;
    std::uint64_t m_seed;
    std::uint64_t m_call;
    DrawThreshold m_limit;
    float m_keep_scale;
    int m_shift;  // floats into its line where each row starts
    RequestLevel m_level;
    std::uint64_t m_next_element = ~std::uint64_t{0};  // no row ends here yet
    std::uint64_t m_span = 0;                           // the span written next
    Row m_waiting{};                                    // its first lines, when they wait
    int m_waiting_lines = 0;
    alignas(64) SpanWords m_words;                      // span m_span's Philox words
    alignas(64) float m_factors[span_elements];         // a span's factors, when drawn in one go
    alignas(64) float m_previous[16] = {};              // the last run's values, when Shifted
};
#endif

}  // namespace seqembed::detail
