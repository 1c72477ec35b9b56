/// @file detail/simd/avx512_bf16.hpp
/// @brief The AVX-512 BF16 backend of the vector layer: AVX-512's, with the rotation's bfloat16
///        results rounded by the CPU's conversion (vcvtne2ps2bf16) where that gives the same
///        bits; compiled in a target("avx512f,avx512bw,avx512bf16,vaes,aes") region of
///        detail/engine/kernels.hpp whatever the build's flags.
#pragma once

#include <cstddef>
#include <cstdint>

#include <Eigen/Core>

#include "avx512.hpp"
#include "platform.hpp"

// Included by detail/engine/kernels.hpp, which ends these macros after its last use.
#include "backend_macros.hpp"

#if SEQEMBED_DETAIL_AVX512_KERNELS
#include <immintrin.h>

namespace seqembed::detail::avx512_bf16_isa {

/// AVX-512's lanes.
template <typename Scalar>
struct Lanes : avx512_isa::Lanes<Scalar> {};

/// AVX-512's sixteen floats, and bfloat16 results converted by the CPU where its conversion gives
/// narrow_split's bits.
///
/// vcvtne2ps2bf16 rounds to nearest even, as narrow_split does, and keeps a NaN's sign and payload
/// top, as narrow_split does, but reads a subnormal float as zero. The rotation's results,
/// x1 c + x2 (-s) and x2 c + x1 s with the sine's product rounded and the cosine's exact inside
/// the fused multiply-add, are never subnormal when no activation is below 2^-63 in magnitude
/// and no cosine or sine below 2^-33 but zero: an activation is then a multiple of 2^-70 and a
/// factor of 2^-56, so the exact x c is a multiple of 2^-126, and the rounded x s, at least
/// 2^-96, of 2^-119; their sum is zero or at least 2^-126, and so is its rounding. The kernel
/// looks at the factors once per token (ordinary_factors) and at the activations per block,
/// zero included (ordinary_bfloat16: two vptestnmw); other blocks go through narrow_split.
template <>
struct Lanes<float> : avx512_isa::Lanes<float> {
    /// narrow_split_converted may round the rotation's results from ordinary inputs.
    static constexpr bool converts_bfloat16 = true;
    /// Whether every value of the two blocks of 2 * count bfloat16 values at a and b is 2^-63 or
    /// more in magnitude (infinity and NaN too): an exponent field of 64 or more, whose top two
    /// bits are not both clear.
    static bool ordinary_bfloat16(const Eigen::bfloat16* a, const Eigen::bfloat16* b) noexcept {
        const __m512i top = _mm512_set1_epi16(0x6000);
        return _kortestz_mask32_u8(_mm512_testn_epi16_mask(_mm512_loadu_si512(a), top),
                                   _mm512_testn_epi16_mask(_mm512_loadu_si512(b), top)) != 0;
    }
    /// As ordinary_bfloat16, for the first `used` values of each block (fewer than 2 * count),
    /// read under a mask: nothing past them is touched or asked about.
    static bool ordinary_bfloat16_first(const Eigen::bfloat16* a, const Eigen::bfloat16* b, int used) noexcept {
        const __m512i top = _mm512_set1_epi16(0x6000);
        const auto mask = static_cast<__mmask32>((std::uint64_t{1} << used) - 1u);
        return _kortestz_mask32_u8(_mm512_mask_testn_epi16_mask(mask, _mm512_maskz_loadu_epi16(mask, a), top),
                                   _mm512_mask_testn_epi16_mask(mask, _mm512_maskz_loadu_epi16(mask, b), top)) != 0;
    }
    /// As ordinary_bfloat16, for the one block at p (interleaved pairs).
    static bool ordinary_bfloat16(const Eigen::bfloat16* p) noexcept {
        return _mm512_testn_epi16_mask(_mm512_loadu_si512(p), _mm512_set1_epi16(0x6000)) == 0;
    }
    /// As ordinary_bfloat16_first, for the one block at p.
    static bool ordinary_bfloat16_first(const Eigen::bfloat16* p, int used) noexcept {
        const auto mask = static_cast<__mmask32>((std::uint64_t{1} << used) - 1u);
        return _mm512_mask_testn_epi16_mask(mask, _mm512_maskz_loadu_epi16(mask, p), _mm512_set1_epi16(0x6000)) == 0;
    }
    /// Whether every one of the count values of c and of s (count a multiple of 16) is zero
    /// or 2^-33 or more in magnitude.
    static bool ordinary_factors(const float* c, const float* s, std::ptrdiff_t count) noexcept {
        __m512i least = _mm512_set1_epi32(-1);
        for (std::ptrdiff_t i = 0; i < count; i += 16)
            least = _mm512_min_epu32(least_factor(_mm512_loadu_ps(c + i), _mm512_loadu_ps(s + i)), least);
        return ordinary_least(least);
    }
    /// As ordinary_factors, for count vectors of cosines and of sines in registers.
    static bool ordinary_factors(const Reg* c, const Reg* s, std::size_t count) noexcept {
        __m512i least = _mm512_set1_epi32(-1);
        for (std::size_t i = 0; i < count; ++i) least = _mm512_min_epu32(least_factor(c[i], s[i]), least);
        return ordinary_least(least);
    }
    /// Stores what widen_split read as narrow_split does, by the CPU's conversion: for results
    /// that are not subnormal (see above), the same bits.
    static void narrow_split_converted(Eigen::bfloat16* p, Reg even, Reg odd) noexcept {
        _mm512_storeu_si512(p, converted_pairs(even, odd));
    }
    /// As narrow_split_converted, writing only the first `used` values (fewer than 2 * count).
    static void narrow_split_converted_first(Eigen::bfloat16* p, int used, Reg even, Reg odd) noexcept {
        _mm512_mask_storeu_epi16(p, static_cast<__mmask32>((std::uint64_t{1} << used) - 1u), converted_pairs(even, odd));
    }

private:
    /// The values widen_split split, converted to bfloat16 and in their order again.
    static __m512i converted_pairs(Reg even, Reg odd) noexcept {
        // The conversion puts the even values in words 0 to 15 and the odd ones in 16 to 31;
        // vpermw interleaves them again.
        const __m512i order = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7,
                                               22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
        return _mm512_permutexvar_epi16(order, __builtin_bit_cast(__m512i, _mm512_cvtne2ps_pbh(odd, even)));
    }
    /// Per lane, the least of the magnitudes less one of a cosine and a sine, as integers:
    /// zero wraps to the largest.
    static __m512i least_factor(Reg cosines, Reg sines) noexcept {
        const __m512i magnitude = _mm512_set1_epi32(0x7FFFFFFF);
        const __m512i one = _mm512_set1_epi32(1);
        return _mm512_min_epu32(_mm512_sub_epi32(_mm512_and_si512(_mm512_castps_si512(cosines), magnitude), one),
                                _mm512_sub_epi32(_mm512_and_si512(_mm512_castps_si512(sines), magnitude), one));
    }
    /// Whether least (least_factor's) is 2^-33 less one (0x2F000000 - 1) or more in every lane.
    static bool ordinary_least(__m512i least) noexcept {
        return _mm512_cmplt_epu32_mask(least, _mm512_set1_epi32(0x2EFFFFFF)) == 0;
    }
};

using avx512_isa::stream_fence;
using avx512_isa::MaskWords;

}  // namespace seqembed::detail::avx512_bf16_isa
#endif
