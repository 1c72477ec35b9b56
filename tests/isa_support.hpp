// Runs a test body once per ISA this build and CPU run, forced with set_isa, and restores the
// ISA in force afterwards, also when the body fails. ISAs the host cannot run are named.
#pragma once

#include <seqembed/isa.hpp>

#include "catch.hpp"

/// Restores the ISA in force when it was made, when it goes out of scope.
struct IsaRestore {
    seqembed::Isa isa = seqembed::active_isa();
    IsaRestore() = default;
    IsaRestore(const IsaRestore&) = delete;
    IsaRestore& operator=(const IsaRestore&) = delete;
    ~IsaRestore() { seqembed::set_isa(isa); }
};

/// Runs f(isa) once with each ISA this build and CPU run in force, scalar first, then restores
/// the ISA that was in force (also when f fails).
template <typename F>
void for_each_isa(F&& f) {
    const IsaRestore restore;
    for (const seqembed::Isa isa : seqembed::all_isas) {
        if (!seqembed::isa_supported(isa)) {
            WARN("this build or CPU cannot run " << seqembed::isa_name(isa) << ": not tested");
            continue;
        }
        seqembed::set_isa(isa);
        INFO("ISA " << seqembed::isa_name(isa));
        f(isa);
    }
}
