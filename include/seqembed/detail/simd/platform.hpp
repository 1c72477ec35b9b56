/// @file detail/simd/platform.hpp
/// @brief The few compiler facts the kernels rely on (which backends are compiled is
///        backend_macros.hpp; the intrinsics are included by the backends that use them).
#pragma once

#include <cstddef>

namespace seqembed::detail {

/// Makes `value` opaque to the optimiser at this point, at no cost: the product before it is
/// rounded on its own, so that no compiler fuses it with the sum after it into a fused
/// multiply-add (GCC contracts by default in its gnu++ modes, clang under -ffp-contract=fast).
/// Every backend rounds the product, then the sum, as PyTorch's separate kernels do.
template <typename T>
inline void keep_rounded(T& value) noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__)) && \
    defined(__SSE2__)
    __asm__("" : "+v"(value));
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
    __asm__("" : "+w"(value));
#else
    (void)value;  // MSVC contracts only under /fp:fast or /fp:contract
#endif
}

/// As keep_rounded, and each time the code runs: a value a loop does not change is still
/// computed inside it, not once before it, so that it takes no register across the loop.
template <typename T>
inline void keep_rounded_each_time(T& value) noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__)) && \
    defined(__SSE2__)
    __asm__ volatile("" : "+v"(value));
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
    __asm__ volatile("" : "+w"(value));
#else
    (void)value;
#endif
}

/// Makes `object` opaque to the optimiser at this point: it is stored as computed before it, so
/// that no product in it is fused with a sum that reads it (keep_rounded for whole arrays).
template <typename T>
inline void keep_in_memory(T& object) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __asm__("" : "+m"(object));
#else
    (void)object;  // MSVC contracts only under /fp:fast or /fp:contract
#endif
}

/// Requests the cache line at `line` into L1 and L2 ahead of its use (a prefetch: never faults).
inline void request_line(const void* line) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(line, 0, 3);
#else
    (void)line;
#endif
}

/// Requests the cache line at `line` for writing ahead of a store to it (a prefetch: never
/// faults).
inline void request_line_for_writing(const void* line) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(line, 1, 3);
#else
    (void)line;
#endif
}

/// How many lines at the start of a span request_span_start requests.
inline constexpr std::size_t lines_requested_per_span = 2;

/// Requests the first lines of the `count` values at `values` (for writing when `writing`), the
/// start of a span a step will reach at random: the core's stream prefetcher brings the rest
/// once these are missed. Requesting every line of 2 KiB rows several rows ahead overflowed the
/// core's queue of outstanding misses; the SparseAdam step was 17% slower (docs/training.md).
template <typename T, typename Count>
inline void request_span_start(const T* values, Count count, bool writing) noexcept {
    const auto* bytes = reinterpret_cast<const unsigned char*>(values);
    const std::size_t size = sizeof(T) * static_cast<std::size_t>(count);
    for (std::size_t line = 0; line < lines_requested_per_span && line * 64 < size; ++line) {
        if (writing)
            request_line_for_writing(bytes + line * 64);
        else
            request_line(bytes + line * 64);
    }
}

}  // namespace seqembed::detail
