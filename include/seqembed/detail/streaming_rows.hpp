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

#include "../types.hpp"
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

/// Whether streaming pays off by default: with 32- or 64-byte vectors (AVX, AVX-512) it did,
/// with SSE2's 16-byte stores it was slower than plain stores (measured at -O2 on the headline
/// workload: 6.0 against 5.3 ms), so OutputStores::automatic leaves SSE2 builds cached.
#if defined(__AVX__)
inline constexpr bool streaming_by_default = true;
#else
inline constexpr bool streaming_by_default = false;
#endif

#if SEQEMBED_DETAIL_STREAMING
/// The widest vector of Scalar the build targets, with the five operations the row needs.
template <typename Scalar>
struct StreamVector;

#if defined(__AVX512F__)
template <>
struct StreamVector<float> {
    using V = __m512;
    static constexpr int lanes = 16;
    static V load(const float* p) noexcept { return _mm512_loadu_ps(p); }
    static V broadcast(float x) noexcept { return _mm512_set1_ps(x); }
    static V mul(V a, V b) noexcept { return _mm512_mul_ps(a, b); }
    static V add(V a, V b) noexcept { return _mm512_add_ps(a, b); }
    static void stream(float* p, V v) noexcept { _mm512_stream_ps(p, v); }
};
template <>
struct StreamVector<double> {
    using V = __m512d;
    static constexpr int lanes = 8;
    static V load(const double* p) noexcept { return _mm512_loadu_pd(p); }
    static V broadcast(double x) noexcept { return _mm512_set1_pd(x); }
    static V mul(V a, V b) noexcept { return _mm512_mul_pd(a, b); }
    static V add(V a, V b) noexcept { return _mm512_add_pd(a, b); }
    static void stream(double* p, V v) noexcept { _mm512_stream_pd(p, v); }
};
#elif defined(__AVX__)
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

/// out = (embedding * scale + position) * factors (factors may be null: no dropout), each
/// operation rounded in that order as PyTorch rounds it, the aligned middle of the row written
/// with streaming stores. Call streaming_fence() after the last row.
template <typename Scalar>
SEQEMBED_DETAIL_NO_FP_CONTRACT void stream_row(Scalar* out, const Scalar* embedding, Scalar scale,
                                               const Scalar* position, const Scalar* factors,
                                               Index width) noexcept {
    SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY
    using Vector = StreamVector<Scalar>;
    constexpr std::uintptr_t vector_bytes = sizeof(Scalar) * Vector::lanes;
    const auto one = [&](Index j) {
        Scalar value = embedding[j] * scale;
        value = value + position[j];
        if (factors != nullptr) value = value * factors[j];
        out[j] = value;
    };
    Index j = 0;
    while (j < width && reinterpret_cast<std::uintptr_t>(out + j) % vector_bytes != 0) one(j++);
    const auto scales = Vector::broadcast(scale);
    if (factors != nullptr) {
        for (; j + Vector::lanes <= width; j += Vector::lanes) {
            const auto sum = Vector::add(Vector::mul(Vector::load(embedding + j), scales),
                                         Vector::load(position + j));
            Vector::stream(out + j, Vector::mul(sum, Vector::load(factors + j)));
        }
    } else {
        for (; j + Vector::lanes <= width; j += Vector::lanes)
            Vector::stream(out + j, Vector::add(Vector::mul(Vector::load(embedding + j), scales),
                                                Vector::load(position + j)));
    }
    while (j < width) one(j++);
}

/// Orders this thread's streaming stores before whatever it does next.
inline void streaming_fence() noexcept { _mm_sfence(); }
#else
/// Without streaming stores: the same values with plain stores (the pipeline does not call
/// this, streaming_available being false; it stays correct all the same).
template <typename Scalar>
SEQEMBED_DETAIL_NO_FP_CONTRACT void stream_row(Scalar* out, const Scalar* embedding, Scalar scale,
                                               const Scalar* position, const Scalar* factors,
                                               Index width) noexcept {
    SEQEMBED_DETAIL_NO_FP_CONTRACT_BODY
    for (Index j = 0; j < width; ++j) {
        Scalar value = embedding[j] * scale;
        value = value + position[j];
        if (factors != nullptr) value = value * factors[j];
        out[j] = value;
    }
}
inline void streaming_fence() noexcept {}
#endif

}  // namespace seqembed::detail
