// seqembed_isa_probe <isa>: exits 0 when this build and CPU run the ISA's kernels, 1 when they
// do not (printing why), 2 for a name that is no ISA, 3 when the ISA is the one the suite's own
// ctest entries already run (SEQEMBED_ISA unset or empty, and the ISA is best_isa()). Used by
// run_isa_suite.cmake.
#include <seqembed/isa.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: seqembed_isa_probe <isa>\n");
        return 2;
    }
    try {
        const seqembed::Isa isa = seqembed::isa_from_name(argv[1]);
        if (seqembed::isa_supported(isa)) {
            const char* forced = std::getenv("SEQEMBED_ISA");
            if ((forced == nullptr || *forced == '\0') && isa == seqembed::best_isa()) {
                std::printf("seqembed ISA %s: the default here, which the suite's own entries run\n", argv[1]);
                return 3;
            }
            std::printf("seqembed ISA %s: supported\n", argv[1]);
            return 0;
        }
        std::printf("seqembed ISA %s: not supported by this build or CPU (best here: %s)\n", argv[1],
                    seqembed::isa_name(seqembed::best_isa()));
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
}
