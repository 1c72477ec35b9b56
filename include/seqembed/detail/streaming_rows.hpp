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

#include <cstdint>
#include <type_traits>

#include "../types.hpp"
#include "cpu_dispatch.hpp"
#include "fused_rows.hpp"

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

/// Element j of a streamed row, with a plain store (the row's unaligned ends).
template <typename Scalar>
SEQEMBED_DETAIL_NO_FP_CONTRACT void stream_element(Scalar* out, const Scalar* embedding, Scalar scale,
                                                   const Scalar* position, const Scalar* factors,
                                                   Index j) noexcept {
    SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY
    Scalar value = embedding[j] * scale;
    value = value + position[j];
    if (factors != nullptr) value = value * factors[j];
    out[j] = value;
}

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
};
#endif

/// stream_row with Vector: plain stores up to the first aligned element, then whole vectors
/// streamed, then plain stores.
template <typename Vector, typename Scalar>
SEQEMBED_DETAIL_NO_FP_CONTRACT void stream_row_with(
    Scalar* out, const Scalar* embedding, Scalar scale, const Scalar* position, const Scalar* factors,
    Index width) noexcept {
    SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY
    constexpr std::uintptr_t vector_bytes = sizeof(Scalar) * Vector::lanes;
    Index j = 0;
    for (; j < width && reinterpret_cast<std::uintptr_t>(out + j) % vector_bytes != 0; ++j)
        stream_element(out, embedding, scale, position, factors, j);
    const auto scales = Vector::broadcast(scale);
    for (; j + Vector::lanes <= width; j += Vector::lanes) {
        auto value = Vector::add(Vector::mul(Vector::load(embedding + j), scales), Vector::load(position + j));
        if (factors != nullptr) value = Vector::mul(value, Vector::load(factors + j));
        Vector::stream(out + j, value);
    }
    for (; j < width; ++j) stream_element(out, embedding, scale, position, factors, j);
}

#if SEQEMBED_DETAIL_AVX512_KERNELS
SEQEMBED_DETAIL_AVX512_WARNINGS_OFF
/// stream_row_with for 64-byte vectors, compiled whatever the build's flags (written out: a
/// vector type's operations would need the target attribute in every function they pass through).
template <typename Scalar>
SEQEMBED_DETAIL_TARGET_AVX512 SEQEMBED_DETAIL_NO_FP_CONTRACT void stream_row_avx512(
    Scalar* out, const Scalar* embedding, Scalar scale, const Scalar* position, const Scalar* factors,
    Index width) noexcept {
    SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY
    constexpr Index lanes = 64 / sizeof(Scalar);
    Index j = 0;
    for (; j < width && reinterpret_cast<std::uintptr_t>(out + j) % 64 != 0; ++j)
        stream_element(out, embedding, scale, position, factors, j);
    if constexpr (std::is_same_v<Scalar, float>) {
        const __m512 scales = _mm512_set1_ps(scale);
        for (; j + lanes <= width; j += lanes) {
            __m512 value = _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(embedding + j), scales),
                                         _mm512_loadu_ps(position + j));
            if (factors != nullptr) value = _mm512_mul_ps(value, _mm512_loadu_ps(factors + j));
            _mm512_stream_ps(out + j, value);
        }
    } else {
        const __m512d scales = _mm512_set1_pd(scale);
        for (; j + lanes <= width; j += lanes) {
            __m512d value = _mm512_add_pd(_mm512_mul_pd(_mm512_loadu_pd(embedding + j), scales),
                                          _mm512_loadu_pd(position + j));
            if (factors != nullptr) value = _mm512_mul_pd(value, _mm512_loadu_pd(factors + j));
            _mm512_stream_pd(out + j, value);
        }
    }
    for (; j < width; ++j) stream_element(out, embedding, scale, position, factors, j);
}
SEQEMBED_DETAIL_AVX512_WARNINGS_ON
#endif  // SEQEMBED_DETAIL_AVX512_KERNELS

/// out = (embedding * scale + position) * factors (factors may be null: no dropout), each
/// operation rounded in that order as PyTorch rounds it, the aligned middle of the row written
/// with streaming stores: 64-byte ones where the CPU has AVX-512F, else the build's widest.
/// Call streaming_fence() after the last row.
template <typename Scalar>
void stream_row(Scalar* out, const Scalar* embedding, Scalar scale, const Scalar* position,
                const Scalar* factors, Index width) noexcept {
#if SEQEMBED_DETAIL_AVX512_KERNELS
    if (cpu_has_avx512f()) {
        stream_row_avx512(out, embedding, scale, position, factors, width);
        return;
    }
#endif
    stream_row_with<StreamVector<Scalar>>(out, embedding, scale, position, factors, width);
}

/// Orders this thread's streaming stores before whatever it does next.
inline void streaming_fence() noexcept { _mm_sfence(); }
#else
/// Without streaming stores: the same values with plain stores (the pipeline does not call
/// this, streaming_available being false; it stays correct all the same).
template <typename Scalar>
void stream_row(Scalar* out, const Scalar* embedding, Scalar scale, const Scalar* position,
                const Scalar* factors, Index width) noexcept {
    for (Index j = 0; j < width; ++j) stream_element(out, embedding, scale, position, factors, j);
}
inline void streaming_fence() noexcept {}
#endif

}  // namespace seqembed::detail
