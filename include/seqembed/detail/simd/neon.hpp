/// @file detail/simd/neon.hpp
/// @brief The NEON backend of the vector layer (AArch64's baseline). NEON has no streaming
///        store intrinsic: stream() is a plain store.
#pragma once

#include <cstdint>

#include <Eigen/Core>

#include "../random/dropout_layout.hpp"
#include "platform.hpp"

// Included by detail/engine/kernels.hpp, which ends these macros after its last use.
#include "backend_macros.hpp"

#if SEQEMBED_DETAIL_NEON_KERNELS
#include <arm_neon.h>
#if defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace seqembed::detail::neon_isa {

template <typename Scalar>
struct Lanes;

/// Four floats.
template <>
struct Lanes<float> {
    using Reg = float32x4_t;
    static constexpr int count = 4;
    static Reg load(const float* p) noexcept { return vld1q_f32(p); }
    /// The first `used` values (fewer than count) and zeros after them; nothing past them is read
    /// (through a local copy: NEON has no masked loads).
    static Reg load_first(const float* p, int used) noexcept {
        float values[4] = {};
        for (int k = 0; k < used; ++k) values[k] = p[k];
        return vld1q_f32(values);
    }
    /// Reads 2 * count floats: even gets values 0, 2, 4, ..., odd values 1, 3, 5, ... (the order
    /// in which widen_split splits bfloat16 values).
    static void load_split(const float* p, Reg& even, Reg& odd) noexcept {
        const float32x4x2_t pairs = vld2q_f32(p);
        even = pairs.val[0];
        odd = pairs.val[1];
    }
    static Reg widen(const Eigen::bfloat16* p) noexcept {
        return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(reinterpret_cast<const std::uint16_t*>(p)), 16));
    }
    static Reg widen(const Eigen::half* p) noexcept {
        return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(reinterpret_cast<const std::uint16_t*>(p))));
    }
    /// Rounds the value here: see detail::keep_rounded.
    static void keep_rounded(Reg& v) noexcept { __asm__("" : "+w"(v)); }
    /// As keep_rounded, each time the code runs: see detail::keep_rounded_each_time.
    static void keep_rounded_each_time(Reg& v) noexcept { __asm__ volatile("" : "+w"(v)); }
    static Reg set(float x) noexcept { return vdupq_n_f32(x); }
    static Reg mul(Reg a, Reg b) noexcept { return vmulq_f32(a, b); }
    static Reg add(Reg a, Reg b) noexcept { return vaddq_f32(a, b); }
    /// a + b, a's NaN (made quiet) when both are NaN: the operands in this order whatever the
    /// compiler would commute.
    static Reg add_in_order(Reg a, Reg b) noexcept {
        Reg sum;
        __asm__("fadd %0.4s, %1.4s, %2.4s" : "=w"(sum) : "w"(a), "w"(b));
        return sum;
    }
    static Reg sub(Reg a, Reg b) noexcept { return vsubq_f32(a, b); }
    static Reg div(Reg a, Reg b) noexcept { return vdivq_f32(a, b); }
    static Reg sqrt(Reg a) noexcept { return vsqrtq_f32(a); }
    /// std::max(a, b): b where a < b, else a (a when either is NaN).
    static Reg max(Reg a, Reg b) noexcept { return vbslq_f32(vcltq_f32(a, b), b, a); }
    /// a b + c, rounded once.
    static Reg mul_add(Reg a, Reg b, Reg c) noexcept { return vfmaq_f32(c, a, b); }
    /// -a: the sign bit flipped.
    static Reg negate(Reg a) noexcept { return vnegq_f32(a); }
    /// Lanes 2i and 2i + 1 exchanged.
    static Reg swap_pairs(Reg v) noexcept { return vrev64q_f32(v); }
    /// Reads 2 * count bfloat16 values: even gets values 0, 2, 4, ..., odd values 1, 3, 5, ...
    /// (each a 32-bit lane holds a pair: shifts and masks, no shuffle).
    static void widen_split(const Eigen::bfloat16* p, Reg& even, Reg& odd) noexcept {
        split_pairs(vld1q_u16(reinterpret_cast<const std::uint16_t*>(p)), even, odd);
    }
    /// As widen_split, reading only the first `used` values (fewer than 2 * count) and zeros
    /// after them (NEON has no masked loads: through a zeroed local copy).
    static void widen_split_first(const Eigen::bfloat16* p, int used, Reg& even, Reg& odd) noexcept {
        std::uint16_t bits[8] = {};
        for (int k = 0; k < used; ++k) bits[k] = Eigen::numext::bit_cast<std::uint16_t>(p[k]);
        split_pairs(vld1q_u16(bits), even, odd);
    }
    /// Stores what widen_split read: 2 * count bfloat16 values, rounded to nearest even (NaN: a
    /// quiet NaN keeping its sign and the top of its payload), as scalar_isa's nearest_bfloat16.
    static void narrow_split(Eigen::bfloat16* p, Reg even, Reg odd) noexcept {
        vst1q_u16(reinterpret_cast<std::uint16_t*>(p), rounded_pairs(even, odd));
    }
    /// As narrow_split, writing only the first `used` values (fewer than 2 * count).
    static void narrow_split_first(Eigen::bfloat16* p, int used, Reg even, Reg odd) noexcept {
        std::uint16_t bits[8];
        vst1q_u16(bits, rounded_pairs(even, odd));
        for (int k = 0; k < used; ++k) p[k] = Eigen::numext::bit_cast<Eigen::bfloat16>(bits[k]);
    }
    /// Whether narrow_split_converted may round the rotation's results: not here
    /// (detail/simd/avx512_bf16.hpp).
    static constexpr bool converts_bfloat16 = false;
    /// Whether partners_of and partner_split exist (detail/simd/avx512.hpp): not here.
    static constexpr bool permutes_pairs = false;
    /// Lane k + lane k + half for half = count / 2, ..., 1: the sum of the lanes, in that order.
    static float pairwise_sum(Reg v) noexcept {
        const float32x2_t two = vadd_f32(vget_low_f32(v), vget_high_f32(v));
        return vget_lane_f32(two, 0) + vget_lane_f32(two, 1);
    }
    static void store(float* p, Reg v) noexcept { vst1q_f32(p, v); }
    /// Writes the first `used` lanes (fewer than count); nothing past them is written.
    static void store_first(float* p, int used, Reg v) noexcept {
        float values[4];
        vst1q_f32(values, v);
        for (int k = 0; k < used; ++k) p[k] = values[k];
    }
    static void stream(float* p, Reg v) noexcept { vst1q_f32(p, v); }
    /// Lanes [shift, shift + count) of a and b end to end, a first (shift in [0, count]): a row's
    /// vectors joined into the vectors of an output that is not aligned as the row is.
    static Reg join(Reg a, Reg b, int shift) noexcept {
        switch (shift) {
            case 0: return a;
            case 1: return vextq_f32(a, b, 1);
            case 2: return vextq_f32(a, b, 2);
            case 3: return vextq_f32(a, b, 3);
            default: return b;
        }
    }
    static Reg kept_or_zero(std::uint32_t bits, Reg keep) noexcept {
        const uint32x4_t lane_bits = {1u, 2u, 4u, 8u};
        const uint32x4_t chosen = vtstq_u32(vdupq_n_u32(bits), lane_bits);
        return vreinterpretq_f32_u32(vandq_u32(chosen, vreinterpretq_u32_f32(keep)));
    }
    /// Even values (each 32-bit lane's low half, shifted up) and odd ones (its high half) of
    /// pairs of bfloat16 values.
    static void split_pairs(uint16x8_t values, Reg& even, Reg& odd) noexcept {
        const uint32x4_t pairs = vreinterpretq_u32_u16(values);
        even = vreinterpretq_f32_u32(vshlq_n_u32(pairs, 16));
        odd = vreinterpretq_f32_u32(vandq_u32(pairs, vdupq_n_u32(0xFFFF0000u)));
    }
    /// The pairs split_pairs split, each value rounded to the bfloat16 nearest (ties to even;
    /// NaN: quiet, keeping its sign and the top of its payload).
    static uint16x8_t rounded_pairs(Reg even, Reg odd) noexcept {
        const uint32x4_t e = vreinterpretq_u32_f32(even);
        const uint32x4_t o = vreinterpretq_u32_f32(odd);
        const uint32x4_t one = vdupq_n_u32(1);
        const uint32x4_t bias = vdupq_n_u32(0x7FFF);
        const uint32x4_t quiet = vdupq_n_u32(0x400000u);
        // Rounded: the value plus 0x7FFF plus bit 16, whose high 16 bits are the bfloat16; NaN:
        // its own high half, made quiet.
        const uint32x4_t low = vbslq_u32(vceqq_f32(even, even), vaddq_u32(vaddq_u32(e, bias), vandq_u32(vshrq_n_u32(e, 16), one)),
                                         vorrq_u32(e, quiet));
        const uint32x4_t high = vbslq_u32(vceqq_f32(odd, odd), vaddq_u32(vaddq_u32(o, bias), vandq_u32(vshrq_n_u32(o, 16), one)),
                                          vorrq_u32(o, quiet));
        // The odd values' high halves, the even values' high halves shifted in below them.
        return vreinterpretq_u16_u32(vsriq_n_u32(high, low, 16));
    }
};

/// Two doubles.
template <>
struct Lanes<double> {
    using Reg = float64x2_t;
    static constexpr int count = 2;
    static Reg load(const double* p) noexcept { return vld1q_f64(p); }
    /// count floats, each made a double (exactly).
    static Reg widen(const float* p) noexcept { return vcvt_f64_f32(vld1_f32(p)); }
    /// The lanes of a vector of 2 * count floats, each made a double (exactly): lanes
    /// [0, count) to low, [count, 2 * count) to high.
    static void widen_halves(Lanes<float>::Reg v, Reg& low, Reg& high) noexcept {
        low = vcvt_f64_f32(vget_low_f32(v));
        high = vcvt_high_f64_f32(v);
    }
    /// Stores the lanes as count floats, each rounded to nearest (as static_cast<float>).
    static void store_narrowed(float* p, Reg v) noexcept { vst1_f32(p, vcvt_f32_f64(v)); }
    /// The first `used` values (fewer than count) and zeros after them; nothing past them is read.
    static Reg load_first(const double* p, int used) noexcept {
        double values[2] = {};
        for (int k = 0; k < used; ++k) values[k] = p[k];
        return vld1q_f64(values);
    }
    /// Rounds the value here: see detail::keep_rounded.
    static void keep_rounded(Reg& v) noexcept { __asm__("" : "+w"(v)); }
    /// As keep_rounded, each time the code runs: see detail::keep_rounded_each_time.
    static void keep_rounded_each_time(Reg& v) noexcept { __asm__ volatile("" : "+w"(v)); }
    static Reg set(double x) noexcept { return vdupq_n_f64(x); }
    static Reg mul(Reg a, Reg b) noexcept { return vmulq_f64(a, b); }
    static Reg add(Reg a, Reg b) noexcept { return vaddq_f64(a, b); }
    /// a + b, a's NaN (made quiet) when both are NaN: the operands in this order whatever the
    /// compiler would commute.
    static Reg add_in_order(Reg a, Reg b) noexcept {
        Reg sum;
        __asm__("fadd %0.2d, %1.2d, %2.2d" : "=w"(sum) : "w"(a), "w"(b));
        return sum;
    }
    static void store(double* p, Reg v) noexcept { vst1q_f64(p, v); }
    /// Writes the first `used` lanes (fewer than count); nothing past them is written.
    static void store_first(double* p, int used, Reg v) noexcept {
        double values[2];
        vst1q_f64(values, v);
        for (int k = 0; k < used; ++k) p[k] = values[k];
    }
    static void stream(double* p, Reg v) noexcept { vst1q_f64(p, v); }
    /// Lanes [shift, shift + count) of a and b end to end, a first (shift in [0, count]): a row's
    /// vectors joined into the vectors of an output that is not aligned as the row is.
    static Reg join(Reg a, Reg b, int shift) noexcept {
        switch (shift) {
            case 0: return a;
            case 1: return vextq_f64(a, b, 1);
            default: return b;
        }
    }
    static Reg kept_or_zero(std::uint32_t bits, Reg keep) noexcept {
        const uint64x2_t lane_bits = {1u, 2u};
        const uint64x2_t chosen = vtstq_u64(vdupq_n_u64(bits), lane_bits);
        return vreinterpretq_f64_u64(vandq_u64(chosen, vreinterpretq_u64_f64(keep)));
    }
    static Reg sub(Reg a, Reg b) noexcept { return vsubq_f64(a, b); }
    static Reg div(Reg a, Reg b) noexcept { return vdivq_f64(a, b); }
    static Reg sqrt(Reg a) noexcept { return vsqrtq_f64(a); }
    /// std::max(a, b): b where a < b, else a (a when either is NaN).
    static Reg max(Reg a, Reg b) noexcept { return vbslq_f64(vcltq_f64(a, b), b, a); }
    /// Lanes 2i and 2i + 1 exchanged.
    static Reg swap_pairs(Reg v) noexcept { return vextq_f64(v, v, 1); }
    /// Lane k + lane k + half for half = count / 2, ..., 1: the sum of the lanes, in that order.
    static double pairwise_sum(Reg v) noexcept { return vgetq_lane_f64(v, 0) + vgetq_lane_f64(v, 1); }
    static Reg negate(Reg a) noexcept { return vnegq_f64(a); }
    using Mask = uint64x2_t;
    static Mask equal(Reg a, Reg b) noexcept { return vceqq_f64(a, b); }
    static Mask greater_equal(Reg a, Reg b) noexcept { return vcgeq_f64(a, b); }
    static Mask either(Mask a, Mask b) noexcept { return vorrq_u64(a, b); }
    static Reg select(Mask m, Reg yes, Reg no) noexcept { return vbslq_f64(m, yes, no); }
};

// The AES round's intrinsics need the cryptography extension: where the build's flags do not
// give it, GCC compiles crypto_kept_word for it alone (it runs only where cpu_has_aes() says);
// clang declares the intrinsics only with the flags, so there the draw is software unless built
// with them.
#if defined(__ARM_FEATURE_AES) || defined(__ARM_FEATURE_CRYPTO)
#define SEQEMBED_DETAIL_NEON_AES 1
#define SEQEMBED_DETAIL_NEON_AES_TARGET
#elif defined(__GNUC__) && !defined(__clang__)
#define SEQEMBED_DETAIL_NEON_AES 1
#define SEQEMBED_DETAIL_NEON_AES_TARGET __attribute__((target("+crypto")))
#else
#define SEQEMBED_DETAIL_NEON_AES 0
#endif

/// Whether the CPU has the AES instructions (and this build compiles their draw).
inline bool cpu_has_aes() noexcept {
#if !SEQEMBED_DETAIL_NEON_AES
    return false;
#elif defined(__ARM_FEATURE_AES) || defined(__ARM_FEATURE_CRYPTO) || defined(__APPLE__)
    return true;
#elif defined(__linux__)
    return (getauxval(AT_HWCAP) & HWCAP_AES) != 0;
#else
    return false;
#endif
}

/// A 128-bit block from its halves, the low half first.
inline uint8x16_t block_of(std::uint64_t low, std::uint64_t high) noexcept {
    return vreinterpretq_u8_u64(vcombine_u64(vcreate_u64(low), vcreate_u64(high)));
}

#if SEQEMBED_DETAIL_NEON_AES
/// Word `word` of the mask of call `call` (detail/random/dropout_layout.hpp) with AESE and AESMC.
/// x86's round is MixColumns(SubBytes(ShiftRows(x))) + k, Arm's AESE(x, k) SubBytes(ShiftRows(
/// x + k)): so ARS-5 is x = AESMC(AESE(x, k_r)) for r = 0 .. 3 from the counter, then
/// AESE(x, k_4) + k_5.
SEQEMBED_DETAIL_NEON_AES_TARGET inline std::uint64_t crypto_kept_word(const uint8x16_t (&round)[ars_mask_rounds + 1],
                                                                      uint16x8_t threshold, std::uint64_t call,
                                                                      std::uint64_t word) noexcept {
    const uint8x8_t lane_bits = {1, 2, 4, 8, 16, 32, 64, 128};
    std::uint64_t kept = 0;
    for (std::uint64_t b = 0; b < mask_blocks_per_word; ++b) {
        uint8x16_t x = block_of(mask_blocks_per_word * word + b, call);
        for (int r = 0; r + 1 < ars_mask_rounds; ++r) x = vaesmcq_u8(vaeseq_u8(x, round[r]));
        x = veorq_u8(vaeseq_u8(x, round[ars_mask_rounds - 1]), round[ars_mask_rounds]);
        const uint16x8_t at_least = vcgeq_u16(vreinterpretq_u16_u8(x), threshold);
        const std::uint64_t bits = vaddv_u8(vand_u8(vmovn_u16(at_least), lane_bits));
        kept |= bits << (8 * b);
    }
    return kept;
}
#endif

/// The dropout mask's words (detail/random/dropout_layout.hpp): with the AES instructions where
/// the CPU has them, else in plain C++.
class MaskWords {
public:
    /// Whether this backend draws `draw` on this CPU.
    static bool runs(MaskDraw draw) noexcept {
        return draw == MaskDraw::software || (draw == MaskDraw::aes128 && cpu_has_aes());
    }
    /// The draw used unless one is asked for: the fastest this CPU runs.
    static MaskDraw fastest() noexcept {
        static const MaskDraw draw = fastest_mask_draw(&runs);
        return draw;
    }
    /// Draws the mask of `key` with `draw` (one runs() accepts).
    explicit MaskWords(const DropoutKey& key, MaskDraw draw = fastest()) noexcept
        : m_key(key), m_hardware(draw == MaskDraw::aes128 && key.threshold < drop_all_threshold) {
        const MaskRoundKeys keys(key);
        for (int r = 0; r <= ars_mask_rounds; ++r) m_round[r] = block_of(keys.round[r][0], keys.round[r][1]);
        m_threshold = vdupq_n_u16(keys.lane_threshold);
    }
    /// Word `index`: bit i set where element 64 index + i is kept.
    std::uint64_t word(std::uint64_t index) const noexcept {
        if (m_hardware) return hardware_word(index);
        return reference_kept_word(m_key, index);
    }

private:
    /// Word `index` with the AES instructions (runs() accepted them, so this build has them).
    std::uint64_t hardware_word(std::uint64_t index) const noexcept {
#if SEQEMBED_DETAIL_NEON_AES
        return crypto_kept_word(m_round, m_threshold, m_key.call, index);
#else
        return reference_kept_word(m_key, index);
#endif
    }

    DropoutKey m_key;
    uint8x16_t m_round[ars_mask_rounds + 1];
    uint16x8_t m_threshold;
    bool m_hardware;  // the AES instructions, and something kept
};

/// Nothing to wait for: plain stores.
inline void stream_fence() noexcept {}

}  // namespace seqembed::detail::neon_isa
#undef SEQEMBED_DETAIL_NEON_AES
#undef SEQEMBED_DETAIL_NEON_AES_TARGET
#endif
