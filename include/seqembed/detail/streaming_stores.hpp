/// @file detail/streaming_stores.hpp
/// @brief Non-temporal (streaming) copies for outputs too large to stay in cache.
///
/// A plain store first reads the cache line it writes (read for ownership), so writing a large
/// output costs its bytes twice. Streaming stores go around the cache and write once, which is
/// what lets the pipeline run beside a memcpy of its output. x86 only (SSE2 is in every x86-64
/// build); elsewhere they are plain copies.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "../types.hpp"

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define SEQEMBED_DETAIL_HAS_STREAMING_STORES 1
#if defined(__AVX__)
#include <immintrin.h>
#endif
#else
#define SEQEMBED_DETAIL_HAS_STREAMING_STORES 0
#endif

namespace seqembed::detail {

/// Outputs at least this large are written with streaming stores by default: larger than the
/// private caches of a core, so the next layer would not have found them there anyway.
inline constexpr std::size_t streaming_threshold_bytes = std::size_t{4} << 20;

/// dst[0 .. n) = src[0 .. n), the aligned middle with streaming stores. Call
/// streaming_fence() once after the last of a series.
template <typename Scalar>
void stream_copy(Scalar* dst, const Scalar* src, Index n) noexcept {
#if SEQEMBED_DETAIL_HAS_STREAMING_STORES
    constexpr std::uintptr_t alignment = 16;
    Index i = 0;
    while (i < n && (reinterpret_cast<std::uintptr_t>(dst + i) % alignment) != 0) {
        dst[i] = src[i];
        ++i;
    }
    if constexpr (std::is_same_v<Scalar, float>) {
        for (; i + 4 <= n; i += 4) _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
    } else if constexpr (std::is_same_v<Scalar, double>) {
        for (; i + 2 <= n; i += 2) _mm_stream_pd(dst + i, _mm_loadu_pd(src + i));
    }
    for (; i < n; ++i) dst[i] = src[i];
#else
    std::copy(src, src + n, dst);
#endif
}

/// Orders the streaming stores before anything this thread does next.
inline void streaming_fence() noexcept {
#if SEQEMBED_DETAIL_HAS_STREAMING_STORES
    _mm_sfence();
#endif
}

}  // namespace seqembed::detail
