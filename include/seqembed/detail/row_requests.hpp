/// @file detail/row_requests.hpp
/// @brief Which embedding rows are requested into the cache ahead of their gather, how far
///        ahead, how many lines at a time and into which level: picked once per CPU.
///
/// A gathered embedding row is a run of lines that starts where no hardware prefetcher can
/// guess, so while a row is written the rows of the next tokens are requested (prefetch
/// instructions, which never fault). The best schedule differs between the two CPUs it was
/// measured on (headline workload, 2 KiB rows from a 62.5 MiB table, caches evicted before
/// every sample, a memcpy of the output as the unit):
/// - AMD Zen 5 (EPYC, family 1Ah): a line per line written, into L1 and L2 (prefetcht0), about
///   8 KiB ahead: evaluation 1.03-1.12x the memcpy, against 1.43-1.50x with Zen 4's schedule;
///   into L2 only (prefetcht2), 1.16-1.19x. Rows of 256 B to 16 KiB measured best from 4 to
///   16 KiB ahead, so the distance is counted in bytes.
/// - AMD Zen 4 (EPYC, family 19h with AVX-512): sixteen lines into L2 every sixteen lines
///   written, two rows ahead: 0.95x the memcpy, against 1.07x with a line per line (stop 8's
///   measurements, evaluation timed after the memcpy).
/// Other CPUs take the Zen 5 schedule, the generic one.
#pragma once

#include <algorithm>
#include <cstddef>

#include "../types.hpp"
#include "cpu_dispatch.hpp"

#if defined(__SSE2__) || defined(_M_X64)
#include <immintrin.h>
#endif
#if SEQEMBED_DETAIL_AVX512_KERNELS
#include <cpuid.h>
#endif

namespace seqembed::detail {

/// The cache level a requested line is brought into.
enum class RequestLevel {
    /// L1 and L2 (prefetcht0).
    l1,
    /// L2 (prefetcht2).
    l2
};

/// Requests the line at `line` into `Level` (a prefetch: never faults, changes no value).
template <RequestLevel Level>
inline void request_line(const void* line) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
    _mm_prefetch(static_cast<const char*>(line), Level == RequestLevel::l1 ? _MM_HINT_T0 : _MM_HINT_T2);
#elif defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(line, 0, Level == RequestLevel::l1 ? 3 : 1);
#else
    (void)line;
#endif
}

/// Whether this is an AMD Zen 4 CPU (family 19h, with AVX-512F; Zen 3 has none), asked once.
inline bool cpu_is_zen4() noexcept {
#if SEQEMBED_DETAIL_AVX512_KERNELS
    static const bool zen4 = [] {
        unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
        if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return false;
        const bool amd = ebx == 0x68747541u && edx == 0x69746E65u && ecx == 0x444D4163u;  // AuthenticAMD
        if (!amd || __get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
        const unsigned family = ((eax >> 8) & 0xFu) + ((eax >> 20) & 0xFFu);
        return family == 0x19u && cpu_has_avx512f();
    }();
    return zen4;
#else
    return false;
#endif
}

/// How the embedding rows of the next tokens are requested while a row is written.
struct RowRequests {
    /// Which lines go out together.
    enum class Pattern {
        /// One line of the row `rows_ahead` tokens on, into L1, per line written.
        line_per_line,
        /// Sixteen lines of that row, into L2, every sixteen lines written (the AVX-512
        /// RowStreamer; LineDraws requests them a line per line, into L2).
        sixteen_lines
    };

    /// Which lines go out together.
    Pattern pattern;
    /// The row requested is that of the token this many tokens on (at least 1).
    Index rows_ahead;

    /// The cache level the lines go into.
    RequestLevel level() const noexcept {
        return pattern == Pattern::line_per_line ? RequestLevel::l1 : RequestLevel::l2;
    }

    /// The schedule measured best on this CPU for rows of `row_bytes` (see the file's top).
    static RowRequests for_rows(std::size_t row_bytes) noexcept {
        if (cpu_is_zen4()) return {Pattern::sixteen_lines, 2};
        constexpr std::size_t bytes_ahead = std::size_t{8} << 10;
        const std::size_t rows = (bytes_ahead + std::max<std::size_t>(row_bytes, 1) - 1) /
                                 std::max<std::size_t>(row_bytes, 1);
        return {Pattern::line_per_line, static_cast<Index>(std::clamp<std::size_t>(rows, 1, 64))};
    }
};

/// The token `distance` tokens after token (b, t) of a batch of sequences of `seq` tokens:
/// moves (b, t) there, and says whether it lies before sequence end_row (no division but at the
/// end of a sequence).
inline bool move_ahead(Index& b, Index& t, Index distance, Index seq, Index end_row) noexcept {
    t += distance;
    if (t >= seq) {
        b += t / seq;
        t %= seq;
    }
    return b < end_row;
}

}  // namespace seqembed::detail
