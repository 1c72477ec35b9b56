/// @file isa.hpp
/// @brief Which instruction set seqembed's kernels run with: picked once, forced by a call or by
///        the environment variable SEQEMBED_ISA.
///
/// Every backend gives the same bits as the scalar one, so the choice changes speed only. The
/// default is the widest the CPU runs: avx512bf16 (AVX-512F, BW and BF16), then avx512 (AVX-512F
/// and BW), then avx2 (AVX2, FMA and F16C) on x86-64 with GCC or clang, neon on AArch64, scalar
/// elsewhere.
/// SEQEMBED_ISA=scalar|avx2|avx512|avx512bf16|neon in
/// the environment replaces the default when the process first needs a kernel; set_isa()
/// replaces it at any time. SEQEMBED_NO_X86_KERNELS, SEQEMBED_NO_AVX512_KERNELS (the two AVX-512
/// backends alone) and SEQEMBED_NO_NEON_KERNELS, defined before the first seqembed header, leave
/// backends out of a build; isa_supported() is then false for them.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <string>

#include "error.hpp"

#include "detail/simd/backend_macros.hpp"  // ended at the bottom of this file

namespace seqembed {

/// @brief An instruction set the kernels are compiled for. Each one's name, support check and
///        rank in best_isa() are its row of detail::isa_table, below.
enum class Isa {
    scalar,  ///< plain C++, one element at a time: the reference the others reproduce.
    avx2,    ///< x86-64 AVX2 with FMA and F16C (Haswell, Zen 1 and later): 8 floats a vector.
    avx512,  ///< x86-64 AVX-512F and BW (Skylake-X, Zen 4 and later): 16 floats a vector.
    /// x86-64 AVX-512F with BW and BF16: avx512's kernels, with the rotary rotation's bfloat16
    /// results rounded by the CPU's conversion (vcvtne2ps2bf16) wherever it gives the same bits.
    avx512_bf16,
    neon     ///< AArch64 NEON: 4 floats a vector.
};

namespace detail {

#if SEQEMBED_DETAIL_X86_KERNELS
/// ECX of CPUID leaf `leaf` (subleaf 0), or 0 when the CPU has no such leaf. The features below
/// are asked with the instruction itself: clang's __builtin_cpu_supports does not know "f16c".
inline unsigned cpuid_ecx(unsigned leaf) noexcept {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    __asm__("cpuid" : "+a"(eax), "=b"(ebx), "+c"(ecx), "=d"(edx));
    if (eax < leaf) return 0;
    eax = leaf;
    ecx = 0;
    __asm__("cpuid" : "+a"(eax), "=b"(ebx), "+c"(ecx), "=d"(edx));
    return ecx;
}
/// Whether the CPU has fused multiply-adds (FMA3: CPUID leaf 1, ECX bit 12) and converts half
/// floats (F16C: bit 29).
inline bool cpu_has_fma_f16c() noexcept {
    const unsigned ecx = cpuid_ecx(1);
    return ((ecx >> 12) & 1u) != 0 && ((ecx >> 29) & 1u) != 0;
}
/// Whether the CPU has AES-NI (CPUID leaf 1, ECX bit 25): the dropout mask's 128-bit draw.
inline bool cpu_has_aes() noexcept { return ((cpuid_ecx(1) >> 25) & 1u) != 0; }
/// Whether the CPU has VAES (CPUID leaf 7, ECX bit 9): AES rounds on four blocks of a 512-bit
/// vector, the dropout mask's draw with AVX-512 (Ice Lake, Zen 4 and later).
inline bool cpu_has_vaes() noexcept { return ((cpuid_ecx(7) >> 9) & 1u) != 0; }
// The CPU checks of isa_table's x86 rows (__builtin_cpu_supports also asks whether the OS saves
// the wide registers).
inline bool cpu_runs_avx2() noexcept { return __builtin_cpu_supports("avx2") && cpu_has_fma_f16c(); }
inline bool cpu_runs_avx512() noexcept {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
}
inline bool cpu_runs_avx512_bf16() noexcept {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512bf16");
}
/// An x86 row's check where this build compiles the x86 kernels, none (not compiled) elsewhere.
#define SEQEMBED_DETAIL_IF_X86(check) &check
#else
/// An x86 row's check where this build compiles the x86 kernels, none (not compiled) elsewhere.
#define SEQEMBED_DETAIL_IF_X86(check) nullptr
#endif
#if SEQEMBED_DETAIL_AVX512_KERNELS
/// An AVX-512 row's check where this build compiles the AVX-512 kernels (x86 kernels without
/// SEQEMBED_NO_AVX512_KERNELS), none elsewhere.
#define SEQEMBED_DETAIL_IF_AVX512(check) &check
#else
/// An AVX-512 row's check where this build compiles the AVX-512 kernels (x86 kernels without
/// SEQEMBED_NO_AVX512_KERNELS), none elsewhere.
#define SEQEMBED_DETAIL_IF_AVX512(check) nullptr
#endif

/// A check that always passes: the scalar backend, and NEON (the baseline of AArch64).
inline bool cpu_runs_always() noexcept { return true; }
#if SEQEMBED_DETAIL_NEON_KERNELS
/// The NEON row's check where this build compiles the NEON kernels, none elsewhere.
#define SEQEMBED_DETAIL_IF_NEON(check) &check
#else
/// The NEON row's check where this build compiles the NEON kernels, none elsewhere.
#define SEQEMBED_DETAIL_IF_NEON(check) nullptr
#endif

/// What the library knows about one ISA.
struct IsaTraits {
    /// The ISA.
    Isa isa;
    /// Its lower-case name, as SEQEMBED_ISA spells it.
    const char* name;
    /// Its rank in best_isa()'s choice: the supported ISA with the highest rank wins.
    int preference;
    /// Whether the CPU (and the OS, for the wide registers) runs it; null when this build does
    /// not compile its kernels.
    bool (*cpu_runs)() noexcept;

    /// Whether this build compiles the ISA's kernels.
    constexpr bool compiled() const noexcept { return cpu_runs != nullptr; }
};

/// The one list of ISAs, in the enum's order: the names, the support checks, best_isa()'s order
/// and the dispatch (detail/engine/kernels.hpp) are derived from it, and the test suite's
/// per-ISA runs read the names from this table (tests/CMakeLists.txt).
inline constexpr IsaTraits isa_table[] = {
    {Isa::scalar, "scalar", 0, &cpu_runs_always},
    {Isa::avx2, "avx2", 2, SEQEMBED_DETAIL_IF_X86(cpu_runs_avx2)},
    {Isa::avx512, "avx512", 3, SEQEMBED_DETAIL_IF_AVX512(cpu_runs_avx512)},
    {Isa::avx512_bf16, "avx512bf16", 4, SEQEMBED_DETAIL_IF_AVX512(cpu_runs_avx512_bf16)},
    {Isa::neon, "neon", 1, SEQEMBED_DETAIL_IF_NEON(cpu_runs_always)},
};
#undef SEQEMBED_DETAIL_IF_X86
#undef SEQEMBED_DETAIL_IF_AVX512
#undef SEQEMBED_DETAIL_IF_NEON

/// Number of ISAs.
inline constexpr std::size_t isa_count = sizeof isa_table / sizeof isa_table[0];

/// Whether isa_table lists every ISA once, in the enum's order.
constexpr bool isa_table_in_enum_order() noexcept {
    for (std::size_t i = 0; i < isa_count; ++i)
        if (static_cast<std::size_t>(isa_table[i].isa) != i) return false;
    return static_cast<std::size_t>(Isa::neon) + 1 == isa_count;
}
static_assert(isa_table_in_enum_order(), "seqembed: isa_table must list every Isa once, in the enum's order");

/// The table's row of an ISA.
constexpr const IsaTraits& isa_traits(Isa isa) noexcept { return isa_table[static_cast<std::size_t>(isa)]; }

/// The table's ISAs in its order.
constexpr std::array<Isa, isa_count> table_isas() noexcept {
    std::array<Isa, isa_count> isas{};
    for (std::size_t i = 0; i < isa_count; ++i) isas[i] = isa_table[i].isa;
    return isas;
}

}  // namespace detail

/// @brief Every ISA the library knows, scalar first, whether or not this build or CPU runs it.
/// @code
/// for (const seqembed::Isa isa : seqembed::all_isas)
///     if (seqembed::isa_supported(isa)) std::puts(seqembed::isa_name(isa));
/// @endcode
inline constexpr std::array<Isa, detail::isa_count> all_isas = detail::table_isas();

/// @brief The lower-case name of an ISA, as SEQEMBED_ISA spells it.
/// @param isa the ISA.
/// @return "scalar", "avx2", "avx512", "avx512bf16" or "neon".
inline const char* isa_name(Isa isa) noexcept { return detail::isa_traits(isa).name; }

/// @brief The ISA a name spells.
/// @param name "scalar", "avx2", "avx512", "avx512bf16" or "neon".
/// @return the ISA.
/// @throws value_error for any other name.
inline Isa isa_from_name(const std::string& name) {
    std::string names;
    for (const detail::IsaTraits& traits : detail::isa_table) {
        if (name == traits.name) return traits.isa;
        names += names.empty() ? "" : ", ";
        names += traits.name;
    }
    detail::fail<value_error>("ISA '", name, "' is not one of ", names);
}

/// @brief Whether this build has kernels for an ISA and this CPU runs them.
/// @param isa the ISA.
/// @return true for scalar always; for the others, when compiled in (x86-64 or AArch64 with GCC
///         or clang) and the CPU (and the OS, for the wide registers) supports the instructions.
inline bool isa_supported(Isa isa) noexcept {
    const detail::IsaTraits& traits = detail::isa_traits(isa);
    return traits.compiled() && traits.cpu_runs();
}

/// @brief The widest ISA this CPU runs.
/// @return avx512bf16, avx512, avx2, neon or scalar: of the ISAs isa_supported() accepts, the
///         first in that order.
inline Isa best_isa() noexcept {
    const detail::IsaTraits* best = &detail::isa_traits(Isa::scalar);
    for (const detail::IsaTraits& traits : detail::isa_table)
        if (traits.preference > best->preference && isa_supported(traits.isa)) best = &traits;
    return best->isa;
}

namespace detail {

/// The ISA in force, -1 until first asked.
inline std::atomic<int>& chosen_isa() noexcept {
    static std::atomic<int> chosen{-1};
    return chosen;
}

/// The ISA SEQEMBED_ISA names, or best_isa() when it is unset or empty.
inline Isa isa_from_environment() {
#if defined(_MSC_VER)
#pragma warning(suppress : 4996)  // getenv: read once, no other thread writes the environment
#endif
    const char* value = std::getenv("SEQEMBED_ISA");
    if (value == nullptr || *value == '\0') return best_isa();
    const Isa isa = isa_from_name(value);
    if (!isa_supported(isa))
        fail<value_error>("SEQEMBED_ISA=", value, " names an ISA that this build or CPU cannot run");
    return isa;
}

}  // namespace detail

/// @brief The ISA the kernels run with.
/// @return what set_isa() chose; before any set_isa(), SEQEMBED_ISA's ISA if the environment
///         names one, else best_isa(). Decided on the first call, then fixed until set_isa().
/// @throws value_error on the first call if SEQEMBED_ISA names no ISA, or one the CPU cannot run.
inline Isa active_isa() {
    std::atomic<int>& chosen = detail::chosen_isa();
    int isa = chosen.load(std::memory_order_relaxed);
    if (isa < 0) {
        int unset = -1;
        const int wanted = static_cast<int>(detail::isa_from_environment());
        isa = chosen.compare_exchange_strong(unset, wanted) ? wanted : unset;
    }
    return static_cast<Isa>(isa);
}

/// @brief Makes the kernels run with `isa` from now on (in every thread).
/// @param isa the ISA.
/// @throws value_error if this build or CPU cannot run it (isa_supported() is false); the ISA in
///         force is then unchanged.
inline void set_isa(Isa isa) {
    if (!isa_supported(isa))
        detail::fail<value_error>("set_isa(", isa_name(isa), "): this build or CPU cannot run it");
    detail::chosen_isa().store(static_cast<int>(isa));
}

}  // namespace seqembed

#include "detail/simd/backend_macros_end.hpp"
