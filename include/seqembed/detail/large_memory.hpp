/// @file detail/large_memory.hpp
/// @brief Large memory, the tables seqembed owns, the outputs its forward() functions return,
///        the backward's gradients and the optimizers' state: on Linux backed by huge pages.
///
/// - A token table is read at random rows, so with 4 KiB pages nearly every lookup of a table
///   larger than the TLB's reach costs a page walk: tables of two huge pages (4 MiB) or more
///   are 2 MiB aligned and advised onto transparent huge pages.
/// - A fresh output is memory the kernel has not mapped yet: the first write to each 4 KiB page
///   faults, which can cost more than the forward's own work. The outputs forward() returns are
///   advised onto huge pages before anything is written; forward_into into memory written
///   before has no faults to take.
///
/// docs/performance.md ("What limits the pipeline") has the measurements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

#include "../types.hpp"

// madvise: glibc's declaration is repeated here, where it is known, so that users' code does not
// receive <sys/mman.h> and its macros; elsewhere on Linux the header itself.
#if defined(__linux__) && defined(__GLIBC__) && \
    (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__))
extern "C" int madvise(void* address, std::size_t length, int advice) noexcept;
namespace seqembed::detail {
/// MADV_HUGEPAGE of Linux on x86 and AArch64 (tests/test_large_memory.cpp checks it against
/// <sys/mman.h>).
inline constexpr int linux_madv_hugepage = 14;
}  // namespace seqembed::detail
#define SEQEMBED_DETAIL_HUGE_PAGES 1
#elif defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__linux__) && !defined(SEQEMBED_DETAIL_HUGE_PAGES) && defined(MADV_HUGEPAGE)
namespace seqembed::detail {
inline constexpr int linux_madv_hugepage = MADV_HUGEPAGE;
}  // namespace seqembed::detail
#define SEQEMBED_DETAIL_HUGE_PAGES 1
#endif
#if defined(_MSC_VER)
#include <malloc.h>
#endif

namespace seqembed::detail {

/// Frees memory from allocate_table_memory.
struct TableMemoryDeleter {
    void operator()(void* memory) const noexcept {
#if defined(_MSC_VER)
        _aligned_free(memory);
#else
        std::free(memory);
#endif
    }
};

/// The size of a huge page (x86-64 and most AArch64 Linux kernels).
inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

/// Asks Linux to back the whole huge pages inside [data, data + bytes) with huge pages, for
/// ranges of two huge pages or more (which hold at least one whole one). A hint: its failure,
/// or another system, changes nothing.
inline void advise_huge_pages(void* data, std::size_t bytes) noexcept {
#if defined(SEQEMBED_DETAIL_HUGE_PAGES)
    const auto start = reinterpret_cast<std::uintptr_t>(data);
    if (bytes < 2 * huge_page_bytes || start > UINTPTR_MAX - bytes) return;
    const std::uintptr_t first = (start + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
    const std::uintptr_t end = (start + bytes) / huge_page_bytes * huge_page_bytes;
    if (end > first) (void)::madvise(reinterpret_cast<void*>(first), end - first, linux_madv_hugepage);
#else
    (void)data;
    (void)bytes;
#endif
}

/// bytes of uninitialised memory, 64-byte aligned (2 MiB for tables of two huge pages or more,
/// which are advised onto huge pages); empty when the memory cannot be had.
inline std::unique_ptr<void, TableMemoryDeleter> allocate_table_memory(std::size_t bytes) noexcept {
    const std::size_t alignment = bytes >= 2 * huge_page_bytes ? huge_page_bytes : 64;
    if (bytes > static_cast<std::size_t>(-1) - alignment) return nullptr;
    const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
#if defined(_MSC_VER)
    void* memory = _aligned_malloc(rounded, alignment);
#else
    void* memory = std::aligned_alloc(alignment, rounded);
#endif
    if (memory != nullptr) advise_huge_pages(memory, rounded);
    return std::unique_ptr<void, TableMemoryDeleter>(memory);
}

/// A new rows x cols matrix for a forward() to return, its pages advised onto huge pages
/// before anything touches them.
/// @throws std::bad_alloc when the memory cannot be had.
template <typename Scalar>
RowMatrix<Scalar> new_output(Index rows, Index cols) {
    RowMatrix<Scalar> out(rows, cols);
    advise_huge_pages(out.data(), sizeof(Scalar) * static_cast<std::size_t>(out.size()));
    return out;
}

/// As new_output, every value zero: an optimizer's state, stepped at random rows afterwards.
/// @throws std::bad_alloc when the memory cannot be had.
template <typename Scalar>
RowMatrix<Scalar> new_zeros(Index rows, Index cols) {
    RowMatrix<Scalar> out = new_output<Scalar>(rows, cols);
    out.setZero();
    return out;
}

}  // namespace seqembed::detail

#undef SEQEMBED_DETAIL_HUGE_PAGES
