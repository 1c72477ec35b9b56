// Large memory (detail/large_memory.hpp): the outputs forward() returns and the tables seqembed
// owns are advised onto huge pages on Linux.
#include <seqembed/seqembed.hpp>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
// seqembed declares madvise itself and spells MADV_HUGEPAGE as a number, to keep <sys/mman.h> out
// of users' code: the header's declaration and value must agree with it (this include after
// seqembed's would not compile if the declarations differed).
static_assert(seqembed::detail::linux_madv_hugepage == MADV_HUGEPAGE,
              "detail/large_memory.hpp's MADV_HUGEPAGE differs from <sys/mman.h>'s");
#endif

#include "catch.hpp"

using seqembed::IdMatrix;
using seqembed::Index;
using seqembed::RowMatrix;

namespace {

/// Whether the kernel has transparent huge pages at all (so that the advice can take).
bool kernel_has_huge_pages() {
    return std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good();
}

/// The VmFlags of the mapping that holds `address`, from /proc/self/smaps ("" if none).
std::string mapping_flags(const void* address) {
    const auto at = reinterpret_cast<std::uintptr_t>(address);
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool inside = false;
    while (std::getline(smaps, line)) {
        std::uintptr_t start = 0, end = 0;
        char dash = 0;
        std::istringstream head(line);
        if (head >> std::hex >> start >> dash >> end && dash == '-') {
            inside = start <= at && at < end;
        } else if (inside && line.rfind("VmFlags:", 0) == 0) {
            return line;
        }
    }
    return "";
}

/// Whether the mapping that holds `address` carries MADV_HUGEPAGE's advice ("hg").
bool advised_huge(const void* address) {
    const std::string flags = mapping_flags(address);
    return flags.find(" hg") != std::string::npos;
}

/// Whether advice given here shows in /proc/self/smaps: a mapping of our own, advised directly.
/// User-mode QEMU (the aarch64 tests) accepts madvise without passing it on and writes VmFlags
/// from the protection bits alone, so there the advice cannot be observed.
bool advice_is_visible() {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const std::size_t size = std::size_t{8} << 20;
    void* probe = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (probe == MAP_FAILED) return false;
    const bool visible = madvise(probe, size, MADV_HUGEPAGE) == 0 &&
                         advised_huge(static_cast<char*>(probe) + size / 2);
    munmap(probe, size);
    return visible;
#else
    return false;
#endif
}

}  // namespace

TEST_CASE("forward() outputs and owned tables of 4 MiB or more are advised onto huge pages",
          "[large_memory][pipeline]") {
    const int on_the_stack = 0;
    if (!kernel_has_huge_pages() || mapping_flags(&on_the_stack).empty()) {
        WARN("no transparent huge pages or no /proc/self/smaps here: the advice is not checked");
        return;
    }
    if (!advice_is_visible()) {
        WARN("/proc/self/smaps does not show MADV_HUGEPAGE advice here (user-mode QEMU?): the "
             "advice is not checked");
        return;
    }
    // A fresh 32 MiB output faults once per 4 KiB page when first written: 15 of the 17 ms of a
    // headline InputPipeline::forward before the advice.
    const Index width = 512;
    IdMatrix ids(16, 512);  // 16 MiB of float output
    for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = i % 1000;
    seqembed::InputPipeline<float> pipeline(seqembed::TokenEmbedding<float>(4000, width),
                                            seqembed::SinusoidalPositionalEncoding<float>(width),
                                            {/*dropout=*/0.1});
    const RowMatrix<float> out = pipeline.forward(ids);
    CHECK(advised_huge(out.data() + out.size() / 2));
    const RowMatrix<float> looked_up = pipeline.embedding().forward(ids);
    CHECK(advised_huge(looked_up.data() + looked_up.size() / 2));
    seqembed::Dropout dropout(0.1);
    dropout.set_training(true);
    const RowMatrix<float> dropped = dropout.forward<float>(out);
    CHECK(advised_huge(dropped.data() + dropped.size() / 2));
    // The 7.8 MiB token table seqembed owns, which the pipeline's copy of the embedding shares.
    CHECK(advised_huge(pipeline.embedding().table().row(2000).data()));
}
