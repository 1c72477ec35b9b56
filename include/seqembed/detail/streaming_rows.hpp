/// @file detail/streaming_rows.hpp
/// @brief Output rows written around the cache (non-temporal stores), for large outputs.
///
/// A plain store first reads the cache line it writes (read for ownership), so a 32 MiB output
/// costs 64 MiB of traffic; a streaming store writes the line once. Computing the row in
/// registers and streaming it out measured 1.04x a memcpy of the output on the headline
/// workload, against 1.44x with plain stores (finishing the row in an L1 scratch buffer and
/// streaming that gave nothing: the stores must come straight from the arithmetic). x86 only;
/// elsewhere streaming_available is false and the pipeline uses plain stores.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../types.hpp"
#include "cpu_dispatch.hpp"
#include "fused_rows.hpp"
#include "row_requests.hpp"

#if defined(__SSE2__) || defined(_M_X64)
#include <immintrin.h>
#define SEQEMBED_DETAIL_STREAMING 1
#else
#define SEQEMBED_DETAIL_STREAMING 0
#endif

namespace seqembed::detail {

/// Whether this build can write rows with streaming stores.
inline constexpr bool streaming_available = SEQEMBED_DETAIL_STREAMING != 0;

/// Whether streaming pays off by default: with 32- or 64-byte vectors (AVX, or the AVX-512 row
/// picked at run time) it did, with SSE2's 16-byte stores it was slower than plain stores
/// (measured at -O2 on the headline workload: 6.0 against 5.3 ms), so OutputStores::automatic
/// leaves those builds cached.
inline bool streaming_by_default() noexcept {
#if defined(__AVX__)
    return true;
#else
    return cpu_has_avx512f();
#endif
}

/// Outputs this large go around the cache under OutputStores::automatic: more than a core's L2,
/// so the next layer would not find them there anyway.
inline constexpr std::size_t streaming_threshold_bytes = std::size_t{4} << 20;

/// Whether rows from a table of Storage can be streamed into Scalar outputs here: a bfloat16 or
/// half table is widened by the AVX-512 row only.
template <typename Scalar, typename Storage>
bool can_stream() noexcept {
    return streaming_available && (std::is_same_v<Storage, Scalar> || cpu_has_avx512f());
}

/// Whether an output of `bytes` from a table of Storage is streamed when nobody says (automatic).
template <typename Scalar, typename Storage>
bool streams_by_default(std::size_t bytes) noexcept {
    return can_stream<Scalar, Storage>() && streaming_by_default() && bytes >= streaming_threshold_bytes;
}

/// Element j of a streamed row, with a plain store (the row's unaligned ends). A bfloat16 or half
/// embedding is widened exactly to Scalar first; a null position adds nothing (not even a zero,
/// which would turn -0 into +0), a null factors multiplies by nothing.
template <typename Scalar, typename Storage>
SEQEMBED_DETAIL_NO_FP_CONTRACT void stream_element(Scalar* out, const Storage* embedding, Scalar scale,
                                                   const Scalar* position, const Scalar* factors,
                                                   Index j) noexcept {
    SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY
    Scalar value = static_cast<Scalar>(embedding[j]) * scale;
    if (position != nullptr) value = value + position[j];
    if (factors != nullptr) value = value * factors[j];
    out[j] = value;
}

/// RowStreamer's work between lines when there is none.
struct NoLineWork {
    /// Nothing.
    void after_line() noexcept {}
};

#if SEQEMBED_DETAIL_STREAMING
/// The widest vector of Scalar the build targets below AVX-512 (which has its own row, picked at
/// run time), with the five operations the row needs.
template <typename Scalar>
struct StreamVector;

#if defined(__AVX__)
template <>
struct StreamVector<float> {
    using V = __m256;
    static constexpr int lanes = 8;
    static V load(const float* p) noexcept { return _mm256_loadu_ps(p); }
    static V broadcast(float x) noexcept { return _mm256_set1_ps(x); }
    static V mul(V a, V b) noexcept { return _mm256_mul_ps(a, b); }
    static V add(V a, V b) noexcept { return _mm256_add_ps(a, b); }
    static void stream(float* p, V v) noexcept { _mm256_stream_ps(p, v); }
    static void store(float* p, V v) noexcept { _mm256_storeu_ps(p, v); }
};
template <>
struct StreamVector<double> {
    using V = __m256d;
    static constexpr int lanes = 4;
    static V load(const double* p) noexcept { return _mm256_loadu_pd(p); }
    static V broadcast(double x) noexcept { return _mm256_set1_pd(x); }
    static V mul(V a, V b) noexcept { return _mm256_mul_pd(a, b); }
    static V add(V a, V b) noexcept { return _mm256_add_pd(a, b); }
    static void stream(double* p, V v) noexcept { _mm256_stream_pd(p, v); }
    static void store(double* p, V v) noexcept { _mm256_storeu_pd(p, v); }
};
#else
template <>
struct StreamVector<float> {
    using V = __m128;
    static constexpr int lanes = 4;
    static V load(const float* p) noexcept { return _mm_loadu_ps(p); }
    static V broadcast(float x) noexcept { return _mm_set1_ps(x); }
    static V mul(V a, V b) noexcept { return _mm_mul_ps(a, b); }
    static V add(V a, V b) noexcept { return _mm_add_ps(a, b); }
    static void stream(float* p, V v) noexcept { _mm_stream_ps(p, v); }
    static void store(float* p, V v) noexcept { _mm_storeu_ps(p, v); }
};
template <>
struct StreamVector<double> {
    using V = __m128d;
    static constexpr int lanes = 2;
    static V load(const double* p) noexcept { return _mm_loadu_pd(p); }
    static V broadcast(double x) noexcept { return _mm_set1_pd(x); }
    static V mul(V a, V b) noexcept { return _mm_mul_pd(a, b); }
    static V add(V a, V b) noexcept { return _mm_add_pd(a, b); }
    static void stream(double* p, V v) noexcept { _mm_stream_pd(p, v); }
    static void store(double* p, V v) noexcept { _mm_storeu_pd(p, v); }
};
#endif

/// Requests the lines of bytes [from, end) of a row into Level, from its line at `from` on: those
/// left after a row's writing requested one line per line written.
template <RequestLevel Level>
inline void request_rest(const char* from, const char* end) noexcept {
    for (; from < end; from += 64) request_line<Level>(from);
}

/// A row written with Vector: plain stores up to the first aligned element, then whole vectors,
/// streamed if Streaming, then plain stores; the lines of `ahead` (if not null) are requested
/// into Level one per 64 bytes written.
template <typename Vector, bool Streaming = true, RequestLevel Level = RequestLevel::l1, typename Scalar>
SEQEMBED_DETAIL_NO_FP_CONTRACT void stream_row_with(
    Scalar* out, const Scalar* embedding, Scalar scale, const Scalar* position, const Scalar* factors,
    Index width, const Scalar* ahead) noexcept {
    SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY
    constexpr std::uintptr_t vector_bytes = sizeof(Scalar) * Vector::lanes;
    constexpr Index lanes_per_line = 64 / vector_bytes;
    const char* next_line = reinterpret_cast<const char*>(ahead);
    Index j = 0;
    for (; j < width && reinterpret_cast<std::uintptr_t>(out + j) % vector_bytes != 0; ++j)
        stream_element(out, embedding, scale, position, factors, j);
    const auto scales = Vector::broadcast(scale);
    for (Index vector = 0; j + Vector::lanes <= width; j += Vector::lanes, ++vector) {
        if (next_line != nullptr && vector % lanes_per_line == 0) {
            request_line<Level>(next_line);
            next_line += 64;
        }
        auto value = Vector::mul(Vector::load(embedding + j), scales);
        if (position != nullptr) value = Vector::add(value, Vector::load(position + j));
        if (factors != nullptr) value = Vector::mul(value, Vector::load(factors + j));
        if constexpr (Streaming) {
            Vector::stream(out + j, value);
        } else {
            Vector::store(out + j, value);
        }
    }
    for (; j < width; ++j) stream_element(out, embedding, scale, position, factors, j);
    if (next_line != nullptr) request_rest<Level>(next_line, reinterpret_cast<const char*>(ahead + width));
}

#if SEQEMBED_DETAIL_AVX512_KERNELS
SEQEMBED_DETAIL_AVX512_WARNINGS_OFF
/// The AVX-512 operations RowStreamer needs on Scalar (float or double). Masked loads read
/// nothing outside `used` (no read past a row).
template <typename Scalar>
struct Avx512Lanes;
/// Round to nearest even, exceptions not reported: the default, spelled out for the rounding-mode
/// intrinsics.
inline constexpr int round_nearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
template <>
struct Avx512Lanes<float> {
    using V = __m512;
    using Mask = __mmask16;
    static constexpr Mask all = 0xFFFF;
    SEQEMBED_DETAIL_AVX512_INLINE static V broadcast(float x) noexcept { return _mm512_set1_ps(x); }
    SEQEMBED_DETAIL_AVX512_INLINE static V load(Mask used, const float* p) noexcept { return _mm512_maskz_loadu_ps(used, p); }
    SEQEMBED_DETAIL_AVX512_INLINE static V load(const float* p) noexcept { return _mm512_loadu_ps(p); }
    /// Lane i takes lane i + shift of v (lanes outside `used` zero).
    SEQEMBED_DETAIL_AVX512_INLINE static V move_lanes(Mask used, V v, Index shift) noexcept {
        const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        return _mm512_maskz_permutexvar_ps(used, _mm512_add_epi32(lanes, _mm512_set1_epi32(static_cast<int>(shift))), v);
    }
    SEQEMBED_DETAIL_AVX512_INLINE static V blend(Mask used, V old, V v) noexcept { return _mm512_mask_mov_ps(old, used, v); }
    // Rounding-mode forms: a compiler never fuses them into an FMA, which clang does to a plain
    // multiply and add under -ffp-contract=fast whatever the function's pragma says.
    SEQEMBED_DETAIL_AVX512_INLINE static V mul(V a, V b) noexcept { return _mm512_mul_round_ps(a, b, round_nearest); }
    SEQEMBED_DETAIL_AVX512_INLINE static V add(V a, V b) noexcept { return _mm512_add_round_ps(a, b, round_nearest); }
    SEQEMBED_DETAIL_AVX512_INLINE static void store(Mask used, float* p, V v) noexcept { _mm512_mask_storeu_ps(p, used, v); }
    SEQEMBED_DETAIL_AVX512_INLINE static void stream(float* p, V v) noexcept { _mm512_stream_ps(p, v); }
};
template <>
struct Avx512Lanes<double> {
    using V = __m512d;
    using Mask = __mmask8;
    static constexpr Mask all = 0xFF;
    SEQEMBED_DETAIL_AVX512_INLINE static V broadcast(double x) noexcept { return _mm512_set1_pd(x); }
    SEQEMBED_DETAIL_AVX512_INLINE static V load(Mask used, const double* p) noexcept { return _mm512_maskz_loadu_pd(used, p); }
    SEQEMBED_DETAIL_AVX512_INLINE static V load(const double* p) noexcept { return _mm512_loadu_pd(p); }
    /// Lane i takes lane i + shift of v (lanes outside `used` zero).
    SEQEMBED_DETAIL_AVX512_INLINE static V move_lanes(Mask used, V v, Index shift) noexcept {
        const __m512i lanes = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
        return _mm512_maskz_permutexvar_pd(used, _mm512_add_epi64(lanes, _mm512_set1_epi64(shift)), v);
    }
    SEQEMBED_DETAIL_AVX512_INLINE static V blend(Mask used, V old, V v) noexcept { return _mm512_mask_mov_pd(old, used, v); }
    // Rounding-mode forms: never fused into an FMA (see the float case).
    SEQEMBED_DETAIL_AVX512_INLINE static V mul(V a, V b) noexcept { return _mm512_mul_round_pd(a, b, round_nearest); }
    SEQEMBED_DETAIL_AVX512_INLINE static V add(V a, V b) noexcept { return _mm512_add_round_pd(a, b, round_nearest); }
    SEQEMBED_DETAIL_AVX512_INLINE static void store(Mask used, double* p, V v) noexcept { _mm512_mask_storeu_pd(p, used, v); }
    SEQEMBED_DETAIL_AVX512_INLINE static void stream(double* p, V v) noexcept { _mm512_stream_pd(p, v); }
};

/// A vector of embedding values of Storage at p as Scalar: a plain load, or 16 bfloat16 or half
/// values widened exactly to float (a bfloat16 is the top half of a float; vcvtph2ps is exact).
template <typename Scalar, typename Storage>
SEQEMBED_DETAIL_AVX512_INLINE typename Avx512Lanes<Scalar>::V load_widened(const Storage* p) noexcept {
    if constexpr (std::is_same_v<Storage, Scalar>) {
        return Avx512Lanes<Scalar>::load(p);
    } else {
        static_assert(std::is_same_v<Scalar, float>, "narrow tables have float outputs");
        const __m256i narrow = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
        if constexpr (std::is_same_v<Storage, Eigen::half>) {
            return _mm512_cvtph_ps(narrow);
        } else {
            return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(narrow), 16));
        }
    }
}
SEQEMBED_DETAIL_AVX512_WARNINGS_ON
#endif  // SEQEMBED_DETAIL_AVX512_KERNELS

/// Writes rows, or consecutive pieces of rows, as out = (embedding * scale + position) * factors
/// (position may be null: a lookup; factors may be null: no dropout), each operation rounded in
/// that order as PyTorch rounds it, with streaming stores: 64-byte ones where the CPU has
/// AVX-512F, else the build's widest.
///
/// With AVX-512 a 64-byte line is only ever written whole by a streaming store or, at the ends
/// of what was written, by one masked plain store: the part of a line at the end of a row is
/// carried to the next call, which completes it when it continues the same memory. A plain
/// store to a line that is not in the cache waits for the line to be read, and holds up the
/// streaming stores behind it: with outputs aligned to 16 bytes only (Eigen's in builds without
/// AVX-512 flags), storing each row's ends directly made the headline training 40% slower.
///
/// `ahead`, when not null, is the width values that a later call will read (the embedding row
/// RowRequests::rows_ahead tokens on): its lines are requested as the stores go out, in the
/// RowRequests pattern the RowStreamer was made with: one per line written into L1, or (with
/// AVX-512) sixteen into L2 every sixteen lines written, which is what Zen 4 measured best
/// (3.41–3.55 ms one per line, 3.02–3.14 sixteen at a time; 8 or 32 at a time no better) and
/// Zen 5 worst (see row_requests.hpp).
///
/// A RowStreamer made with streaming = false writes the same values, lines and carried parts
/// with plain stores instead, for training rows that MaskFactors draws for between the lines.
/// That draw branches (a step every few lines) and its factors are loaded from its buffers, and
/// on Zen 4 both held streaming stores up (see line_draws.hpp), while plain stores hid them,
/// even at the price of reading the output lines first: headline training measured 4.6 ms
/// against 6.2 with streaming stores (memcpy 2.9). Float training rows that LineDraws can write
/// (line_draws_shift) take it instead: it has neither.
///
/// Call finish() after the last row.
template <typename Scalar>
class RowStreamer {
public:
    /// Writes with streaming stores, or with plain ones, requesting the lines of `ahead` in
    /// `requests`' pattern.
    explicit RowStreamer(bool streaming = true,
                         RowRequests::Pattern requests = RowRequests::Pattern::line_per_line) noexcept
        : m_streaming(streaming), m_sixteen_lines(requests == RowRequests::Pattern::sixteen_lines) {}

    /// out[j] for j < width, requesting ahead[0 .. width) (if not null). With AVX-512,
    /// work->after_line() (if work is not null), inlined, follows each line streamed. The
    /// embedding may be a bfloat16 or half row (float outputs), widened exactly; such rows are
    /// streamed with AVX-512 only (elsewhere they are written with plain stores, one by one).
    template <typename Storage, typename Work = NoLineWork>
    void write(Scalar* out, const Storage* embedding, Scalar scale, const Scalar* position,
               const Scalar* factors, Index width, const Storage* ahead = nullptr,
               Work* work = nullptr) noexcept {
#if SEQEMBED_DETAIL_AVX512_KERNELS
        if (cpu_has_avx512f()) {
            if (m_streaming) {
                if (m_sixteen_lines) {
                    write_avx512<true, true>(out, embedding, scale, position, factors, width, ahead, work);
                } else {
                    write_avx512<true, false>(out, embedding, scale, position, factors, width, ahead, work);
                }
            } else {
                if (m_sixteen_lines) {
                    write_avx512<false, true>(out, embedding, scale, position, factors, width, ahead, work);
                } else {
                    write_avx512<false, false>(out, embedding, scale, position, factors, width, ahead, work);
                }
            }
            return;
        }
#endif
        (void)work;
        if constexpr (!std::is_same_v<Storage, Scalar>) {
            (void)ahead;
            for (Index j = 0; j < width; ++j) stream_element(out, embedding, scale, position, factors, j);
        } else {
            // Sixteen lines at a time is an AVX-512 pattern; here its level (L2) is kept.
            if (m_sixteen_lines) {
                write_portable<RequestLevel::l2>(out, embedding, scale, position, factors, width, ahead);
            } else {
                write_portable<RequestLevel::l1>(out, embedding, scale, position, factors, width, ahead);
            }
        }
    }

    /// Writes the carried part of a line, and orders this thread's streaming stores before
    /// whatever it does next.
    void finish() noexcept {
#if SEQEMBED_DETAIL_AVX512_KERNELS
        if (m_filled != 0) flush_avx512();
#endif
        _mm_sfence();
    }

private:
    /// The build's own row (AVX or SSE2), streamed or plain, requesting into Level.
    template <RequestLevel Level>
    void write_portable(Scalar* out, const Scalar* embedding, Scalar scale, const Scalar* position,
                        const Scalar* factors, Index width, const Scalar* ahead) noexcept {
        if (m_streaming) {
            stream_row_with<StreamVector<Scalar>, true, Level>(out, embedding, scale, position, factors, width, ahead);
        } else {
            stream_row_with<StreamVector<Scalar>, false, Level>(out, embedding, scale, position, factors, width, ahead);
        }
    }

#if SEQEMBED_DETAIL_AVX512_KERNELS
    using Lanes = Avx512Lanes<Scalar>;
    using Mask = typename Lanes::Mask;
    static constexpr Index lanes = 64 / sizeof(Scalar);
    SEQEMBED_DETAIL_AVX512_WARNINGS_OFF
    /// SixteenLines: `ahead`'s lines are requested sixteen at a time into L2, every sixteen lines
    /// written; otherwise one per line written, into L1.
    template <bool Streaming, bool SixteenLines, typename Storage, typename Work>
    SEQEMBED_DETAIL_TARGET_AVX512 SEQEMBED_DETAIL_NO_FP_CONTRACT void write_avx512(
        Scalar* out, const Storage* embedding, Scalar scale, const Scalar* position,
        const Scalar* factors, Index width, const Storage* ahead, Work* work) noexcept {
        SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY
        using L = Lanes;
        const auto scales = L::broadcast(scale);
        const auto value = [&](auto e, auto p, auto f) SEQEMBED_DETAIL_AVX512_LAMBDA {
            const auto scaled = L::mul(e, scales);
            const auto sum = position == nullptr ? scaled : L::add(scaled, p);
            return factors == nullptr ? sum : L::mul(sum, f);
        };
        const auto zeros = L::broadcast(Scalar(0));
        const auto first = [](Index count) { return static_cast<Mask>((1u << count) - 1); };
        Index j = 0;
        const auto address = reinterpret_cast<std::uintptr_t>(out);
        const auto offset = static_cast<Index>(address % 64 / sizeof(Scalar));
        if (offset != 0 || width < lanes) {
            // The row starts inside a line (or ends before the next): into the carried line.
            const Index count = std::min(width, lanes - offset);
            auto* line = reinterpret_cast<Scalar*>(address - address % 64);
            if (line != m_line_start && m_filled != 0) flush_avx512();
            const auto used = static_cast<Mask>(first(count) << offset);
            const auto f = factors == nullptr ? zeros : run(factors, width, 0, count, offset);
            const auto p = position == nullptr ? zeros : run(position, width, 0, count, offset);
            const auto v = value(run(embedding, width, 0, count, offset), p, f);
            carry(line, used, v);
            j = count;
        }
        const Index body_end = j + (width - j) / lanes * lanes;  // out + j is on a line boundary
        // Addresses as integers: the last bunch may run past the row's end.
        const auto ahead_end = ahead == nullptr ? 0 : reinterpret_cast<std::uintptr_t>(ahead + width);
        auto next_request = reinterpret_cast<std::uintptr_t>(ahead);
        constexpr RequestLevel level = SixteenLines ? RequestLevel::l2 : RequestLevel::l1;
        constexpr Index lines_per_request = SixteenLines ? 16 : 1;
        for (Index line = 0; j < body_end; j += lanes, ++line) {
            if (ahead != nullptr && line % lines_per_request == 0) {
                for (Index k = 0; k < lines_per_request; ++k, next_request += 64)
                    if (next_request < ahead_end) request_line<level>(reinterpret_cast<const void*>(next_request));
            }
            const auto f = factors == nullptr ? zeros : L::load(factors + j);
            const auto p = position == nullptr ? zeros : L::load(position + j);
            const auto v = value(load_widened<Scalar>(embedding + j), p, f);
            if constexpr (Streaming) {
                L::stream(out + j, v);
            } else {
                L::store(L::all, out + j, v);
            }
            if (work != nullptr) work->after_line();
        }
        for (; next_request < ahead_end; next_request += 64) request_line<level>(reinterpret_cast<const void*>(next_request));
        if (j < width) {  // the row ends inside a line: its first values are carried
            if (m_filled != 0) flush_avx512();
            const Mask used = first(width - j);
            const Index count = width - j;
            const auto f = factors == nullptr ? zeros : run(factors, width, j, count, 0);
            const auto p = position == nullptr ? zeros : run(position, width, j, count, 0);
            carry(out + j, used, value(run(embedding, width, j, count, 0), p, f));
        }
    }

    /// row[first .. first + count) in lanes at .. at + count - 1, the other lanes zero, for
    /// count <= lanes - at: one whole-vector load inside the row and a permutation (a masked
    /// load, or vexpandps, that misses the cache measured slower), or a masked load when the
    /// row is narrower than a vector (for a bfloat16 or half row, its values one by one).
    template <typename Storage>
    SEQEMBED_DETAIL_TARGET_AVX512 static typename Lanes::V run(const Storage* row, Index width, Index first,
                                                               Index count, Index at) noexcept {
        const auto used = static_cast<Mask>(((1u << count) - 1) << at);
        if (width < lanes) {
            if constexpr (std::is_same_v<Storage, Scalar>) {
                return Lanes::move_lanes(used, Lanes::load(static_cast<Mask>((1u << count) - 1), row + first), -at);
            } else {
                alignas(64) Scalar widened[lanes] = {};
                for (Index k = 0; k < count; ++k) widened[at + k] = static_cast<Scalar>(row[first + k]);
                return Lanes::load(widened);
            }
        }
        const Index window = std::min(first, width - lanes);  // [window, window + lanes) in the row
        return Lanes::move_lanes(used, load_widened<Scalar>(row + window), first - window - at);
    }

    /// Puts v's lanes `used` into the carried line at `line`, streaming the line once whole.
    SEQEMBED_DETAIL_TARGET_AVX512 void carry(Scalar* line, Mask used, typename Lanes::V v) noexcept {
        const auto merged = Lanes::blend(used, Lanes::load(Lanes::all, m_line), v);
        m_filled = static_cast<Mask>(m_filled | used);
        if (m_filled == Lanes::all) {
            if (m_streaming) {
                Lanes::stream(line, merged);
            } else {
                Lanes::store(Lanes::all, line, merged);
            }
            m_filled = 0;
            m_line_start = nullptr;
            return;
        }
        Lanes::store(Lanes::all, m_line, merged);
        m_line_start = line;
    }

    /// Writes the carried lanes with a masked plain store.
    SEQEMBED_DETAIL_TARGET_AVX512 void flush_avx512() noexcept {
        Lanes::store(m_filled, m_line_start, Lanes::load(Lanes::all, m_line));
        m_filled = 0;
        m_line_start = nullptr;
    }
    SEQEMBED_DETAIL_AVX512_WARNINGS_ON

    alignas(64) Scalar m_line[lanes] = {};  // the carried line's values, lanes m_filled
    Scalar* m_line_start = nullptr;         // where the carried line goes
    Mask m_filled = 0;
#endif
    bool m_streaming;
    bool m_sixteen_lines;
};
#else
/// Without streaming stores: the same values with plain stores (the pipeline does not use
/// this, streaming_available being false; it stays correct all the same).
template <typename Scalar>
class RowStreamer {
public:
    /// Plain stores whatever is asked.
    explicit RowStreamer(bool = true, RowRequests::Pattern = RowRequests::Pattern::line_per_line) noexcept {}
    /// out[j] for j < width (ahead and work are for the x86 rows).
    template <typename Storage, typename Work = NoLineWork>
    void write(Scalar* out, const Storage* embedding, Scalar scale, const Scalar* position,
               const Scalar* factors, Index width, const Storage* = nullptr, Work* = nullptr) noexcept {
        for (Index j = 0; j < width; ++j) stream_element(out, embedding, scale, position, factors, j);
    }
    /// Nothing to finish.
    void finish() noexcept {}
};
#endif

}  // namespace seqembed::detail
