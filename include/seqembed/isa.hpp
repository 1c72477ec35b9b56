/// @file isa.hpp
/// @brief Which instruction set seqembed's kernels run with: picked once, forced by a call or by
///        the environment variable SEQEMBED_ISA.
///
/// Every backend gives the same bits as the scalar one, so the choice changes speed only. The
/// default is the widest the CPU runs: avx512bf16 (AVX-512F, BW and BF16), then avx512 (AVX-512F),
/// then avx2 (AVX2, FMA and F16C) on x86-64 with GCC or clang, neon on AArch64, scalar elsewhere.
/// SEQEMBED_ISA=scalar|avx2|avx512|avx512bf16|neon in
/// the environment replaces the default when the process first needs a kernel; set_isa()
/// replaces it at any time.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <atomic>
#include <cstdlib>
#include <string>

#include "error.hpp"

#include "detail/simd/backend_macros.hpp"  // ended at the bottom of this file

namespace seqembed {

/// @brief An instruction set the kernels are compiled for.
enum class Isa {
    scalar,  ///< plain C++, one element at a time: the reference the others reproduce.
    avx2,    ///< x86-64 AVX2 with FMA and F16C (Haswell, Zen 1 and later): 8 floats a vector.
    avx512,  ///< x86-64 AVX-512F: 16 floats a vector.
    /// x86-64 AVX-512F with BW and BF16: avx512's kernels, with the rotary rotation's bfloat16
    /// results rounded by the CPU's conversion (vcvtne2ps2bf16) wherever it gives the same bits.
    avx512_bf16,
    neon     ///< AArch64 NEON: 4 floats a vector.
};

/// @brief The lower-case name of an ISA, as SEQEMBED_ISA spells it.
/// @param isa the ISA.
/// @return "scalar", "avx2", "avx512", "avx512bf16" or "neon".
inline const char* isa_name(Isa isa) noexcept {
    switch (isa) {
        case Isa::avx2: return "avx2";
        case Isa::avx512: return "avx512";
        case Isa::avx512_bf16: return "avx512bf16";
        case Isa::neon: return "neon";
        case Isa::scalar: break;
    }
    return "scalar";
}

/// @brief The ISA a name spells.
/// @param name "scalar", "avx2", "avx512", "avx512bf16" or "neon".
/// @return the ISA.
/// @throws value_error for any other name.
inline Isa isa_from_name(const std::string& name) {
    for (const Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512, Isa::avx512_bf16, Isa::neon})
        if (name == isa_name(isa)) return isa;
    detail::fail<value_error>("ISA '", name, "' is not one of scalar, avx2, avx512, avx512bf16, neon");
}

namespace detail {

#if SEQEMBED_DETAIL_X86_KERNELS
/// Whether the CPU has fused multiply-adds (FMA3: CPUID leaf 1, ECX bit 12) and converts half
/// floats (F16C: bit 29). Asked with the instruction itself: clang's __builtin_cpu_supports does
/// not know "f16c".
inline bool cpu_has_fma_f16c() noexcept {
    unsigned eax = 1, ebx = 0, ecx = 0, edx = 0;
    __asm__("cpuid" : "+a"(eax), "=b"(ebx), "+c"(ecx), "=d"(edx));
    return ((ecx >> 12) & 1u) != 0 && ((ecx >> 29) & 1u) != 0;
}
#endif

}  // namespace detail

/// @brief Whether this build has kernels for an ISA and this CPU runs them.
/// @param isa the ISA.
/// @return true for scalar always; for the others, when compiled in (x86-64 or AArch64 with GCC
///         or clang) and the CPU (and the OS, for the wide registers) supports the instructions.
inline bool isa_supported(Isa isa) noexcept {
    switch (isa) {
        case Isa::scalar: return true;
#if SEQEMBED_DETAIL_X86_KERNELS
        case Isa::avx2: return __builtin_cpu_supports("avx2") && detail::cpu_has_fma_f16c();
        case Isa::avx512: return __builtin_cpu_supports("avx512f");
        case Isa::avx512_bf16:
            return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512bf16");
#else
        case Isa::avx2:
        case Isa::avx512:
        case Isa::avx512_bf16: return false;
#endif
        case Isa::neon: return SEQEMBED_DETAIL_NEON_KERNELS != 0;
    }
    return false;
}

/// @brief The widest ISA this CPU runs.
/// @return avx512bf16, avx512, avx2, neon or scalar, the first of them isa_supported() accepts.
inline Isa best_isa() noexcept {
    for (const Isa isa : {Isa::avx512_bf16, Isa::avx512, Isa::avx2, Isa::neon})
        if (isa_supported(isa)) return isa;
    return Isa::scalar;
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
