/// @file detail/simd/neon.hpp
/// @brief The NEON backend of the vector layer (AArch64's baseline). NEON has no streaming
///        store intrinsic: stream() is a plain store.
#pragma once

#include <cstdint>

#include <Eigen/Core>

#include "platform.hpp"

// Included by detail/engine/kernels.hpp, which ends these macros after its last use.
#include "backend_macros.hpp"

#if SEQEMBED_DETAIL_NEON_KERNELS
#include <arm_neon.h>

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

/// Four 32-bit unsigned integers.
struct U32 {
    using Reg = uint32x4_t;
    static constexpr int count = 4;
    static Reg set(std::uint32_t x) noexcept { return vdupq_n_u32(x); }
    static Reg load(const std::uint32_t* p) noexcept { return vld1q_u32(p); }
    static void store(std::uint32_t* p, Reg v) noexcept { vst1q_u32(p, v); }
    static Reg iota(std::uint32_t first) noexcept {
        const uint32x4_t steps = {0u, 1u, 2u, 3u};
        return vaddq_u32(vdupq_n_u32(first), steps);
    }
    static Reg add(Reg a, Reg b) noexcept { return vaddq_u32(a, b); }
    static Reg sub(Reg a, Reg b) noexcept { return vsubq_u32(a, b); }
    static Reg bit_xor(Reg a, Reg b) noexcept { return veorq_u32(a, b); }
    static Reg bit_and(Reg a, Reg b) noexcept { return vandq_u32(a, b); }
    static Reg mul_low(Reg a, Reg b) noexcept { return vmulq_u32(a, b); }
    static Reg mul_high(Reg a, Reg b) noexcept {
        const uint64x2_t low = vmull_u32(vget_low_u32(a), vget_low_u32(b));
        const uint64x2_t high = vmull_high_u32(a, b);
        return vuzp2q_u32(vreinterpretq_u32_u64(low), vreinterpretq_u32_u64(high));
    }
    static Reg shift_right(Reg a, int n) noexcept { return vshlq_u32(a, vdupq_n_s32(-n)); }
    /// counts + 1 in the lanes where a == b (a true comparison is all ones).
    static Reg count_equal(Reg counts, Reg a, Reg b) noexcept { return vsubq_u32(counts, vceqq_u32(a, b)); }
    static std::uint32_t greater_equal_bits(Reg a, Reg b) noexcept { return lane_bits(vcgeq_u32(a, b)); }
    static Reg select(std::uint32_t bits, Reg yes, Reg no) noexcept {
        const uint32x4_t lanes = {1u, 2u, 4u, 8u};
        return vbslq_u32(vtstq_u32(vdupq_n_u32(bits), lanes), yes, no);
    }

private:
    static std::uint32_t lane_bits(Reg all_or_none) noexcept {
        const uint32x4_t lanes = {1u, 2u, 4u, 8u};
        return vaddvq_u32(vandq_u32(all_or_none, lanes));
    }
};

/// Nothing to wait for: plain stores.
inline void stream_fence() noexcept {}

}  // namespace seqembed::detail::neon_isa
#endif
