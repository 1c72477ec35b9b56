/// @file detail/simd/scalar.hpp
/// @brief The scalar backend of the vector layer: one lane, plain C++. It defines the results
///        every other backend must reproduce bit for bit.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include <Eigen/Core>

#include "../random/dropout_layout.hpp"
#include "platform.hpp"

namespace seqembed::detail::scalar_isa {

/// Lanes of Scalar: one.
template <typename Scalar>
struct Lanes {
    using Reg = Scalar;
    static constexpr int count = 1;
    static Reg load(const Scalar* p) noexcept { return *p; }
    /// A float as a Scalar (exact for double).
    static Reg widen(const float* p) noexcept { return static_cast<Scalar>(*p); }
    /// Stores the value as a float, rounded to nearest (static_cast<float>).
    static void store_narrowed(float* p, Reg v) noexcept { *p = static_cast<float>(v); }
    /// The first `used` values (fewer than count) and zeros after them; nothing past them is read.
    static Reg load_first(const Scalar* p, int used) noexcept { return used > 0 ? *p : Scalar(0); }
    /// Reads 2 * count values: even gets values 0, 2, 4, ..., odd values 1, 3, 5, ... (the order in
    /// which widen_split splits bfloat16 values).
    static void load_split(const Scalar* p, Reg& even, Reg& odd) noexcept {
        even = p[0];
        odd = p[1];
    }
    static Reg widen(const Eigen::bfloat16* p) noexcept {
        std::uint16_t half_bits;
        std::memcpy(&half_bits, p, sizeof half_bits);
        const std::uint32_t bits = static_cast<std::uint32_t>(half_bits) << 16;
        float value;
        std::memcpy(&value, &bits, sizeof value);
        return value;
    }
    static Reg widen(const Eigen::half* p) noexcept { return static_cast<float>(*p); }
    /// Rounds the value here: see detail::keep_rounded.
    static void keep_rounded(Reg& v) noexcept { detail::keep_rounded(v); }
    /// As keep_rounded, each time the code runs: see detail::keep_rounded_each_time.
    static void keep_rounded_each_time(Reg& v) noexcept { detail::keep_rounded_each_time(v); }
    static Reg set(Scalar x) noexcept { return x; }
    static Reg mul(Reg a, Reg b) noexcept { return a * b; }
    static Reg add(Reg a, Reg b) noexcept { return a + b; }
    /// a + b, a's NaN (made quiet) when both are NaN: the operands in this order whatever the
    /// compiler would commute.
    static Reg add_in_order(Reg a, Reg b) noexcept { return std::isnan(a) ? a + a : a + b; }
    /// a b + c, rounded once.
    static Reg mul_add(Reg a, Reg b, Reg c) noexcept { return std::fma(a, b, c); }
    static void store(Scalar* p, Reg v) noexcept { *p = v; }
    /// Writes the first `used` lanes (fewer than count); nothing past them is written.
    static void store_first(Scalar* p, int used, Reg v) noexcept {
        if (used > 0) *p = v;
    }
    static void stream(Scalar* p, Reg v) noexcept { *p = v; }
    /// Lanes [shift, shift + count) of a and b end to end, a first (shift in [0, count]): a row's
    /// vectors joined into the vectors of an output that is not aligned as the row is.
    static Reg join(Reg a, Reg b, int shift) noexcept { return shift == 0 ? a : b; }
    /// keep where bit 0 of `bits` is set, else 0.
    static Reg kept_or_zero(std::uint32_t bits, Reg keep) noexcept { return (bits & 1u) != 0 ? keep : Scalar(0); }
    static Reg sub(Reg a, Reg b) noexcept { return a - b; }
    static Reg div(Reg a, Reg b) noexcept { return a / b; }
    static Reg sqrt(Reg a) noexcept { return std::sqrt(a); }
    /// std::max(a, b): b where a < b, else a (a when either is NaN).
    static Reg max(Reg a, Reg b) noexcept { return a < b ? b : a; }
    /// Reads 2 * count bfloat16 values: even gets values 0, 2, 4, ..., odd values 1, 3, 5, ...
    static void widen_split(const Eigen::bfloat16* p, Reg& even, Reg& odd) noexcept {
        even = widen(p);
        odd = widen(p + 1);
    }
    /// As widen_split, reading only the first `used` values (fewer than 2 * count: one) and a
    /// zero after them.
    static void widen_split_first(const Eigen::bfloat16* p, int used, Reg& even, Reg& odd) noexcept {
        even = used > 0 ? widen(p) : Reg(0);
        odd = Reg(0);
    }
    /// Stores what widen_split read: 2 * count bfloat16 values, rounded to nearest even (NaN: a
    /// quiet NaN keeping its sign and the top of its payload, as IEEE 754 converts).
    static void narrow_split(Eigen::bfloat16* p, Reg even, Reg odd) noexcept {
        p[0] = nearest_bfloat16(static_cast<float>(even));
        p[1] = nearest_bfloat16(static_cast<float>(odd));
    }
    /// As narrow_split, writing only the first `used` values (fewer than 2 * count: one).
    static void narrow_split_first(Eigen::bfloat16* p, int used, Reg even, Reg) noexcept {
        if (used > 0) p[0] = nearest_bfloat16(static_cast<float>(even));
    }
    /// Whether narrow_split_converted may round the rotation's results from these inputs: never
    /// here, where nothing converts bfloat16 but narrow_split (detail/simd/avx512_bf16.hpp).
    static constexpr bool converts_bfloat16 = false;
    /// Whether partners_of and partner_split exist (detail/simd/avx512.hpp): not here.
    static constexpr bool permutes_pairs = false;
    /// value rounded to the nearest bfloat16, ties to even; NaN: the quiet NaN of its sign and the
    /// top 7 bits of its payload. Eigen::bfloat16(float) rounds the same but makes every NaN
    /// 0x7FC0 of its sign; the payload is kept here because the CPUs' conversions (AVX-512 BF16's
    /// vcvtne2ps2bf16, Arm's BFCVT) keep it, and every backend gives these bits.
    static Eigen::bfloat16 nearest_bfloat16(float value) noexcept {
        const auto bits = Eigen::numext::bit_cast<std::uint32_t>(value);
        const std::uint32_t rounded =
            std::isnan(value) ? (bits >> 16) | 0x40u : (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
        return Eigen::numext::bit_cast<Eigen::bfloat16>(static_cast<std::uint16_t>(rounded));
    }
    /// Lane k + lane k + half for half = count / 2, ..., 1: the sum of the lanes, in that order.
    static Scalar pairwise_sum(Reg v) noexcept { return v; }
    static Reg negate(Reg a) noexcept { return -a; }
    using Mask = bool;
    static Mask equal(Reg a, Reg b) noexcept { return a == b; }
    static Mask greater_equal(Reg a, Reg b) noexcept { return a >= b; }
    static Mask either(Mask a, Mask b) noexcept { return a || b; }
    static Reg select(Mask m, Reg yes, Reg no) noexcept { return m ? yes : no; }
};

/// The dropout mask's words (detail/random/dropout_layout.hpp), drawn in plain C++.
class MaskWords {
public:
    /// Whether this backend draws `draw` on this CPU: software only.
    static bool runs(MaskDraw draw) noexcept { return draw == MaskDraw::software; }
    /// The draw used unless one is asked for.
    static MaskDraw fastest() noexcept { return MaskDraw::software; }
    /// Draws the mask of `key`.
    explicit MaskWords(const DropoutKey& key, MaskDraw = fastest()) noexcept : m_key(key) {}
    /// Word `index`: bit i set where element 64 index + i is kept.
    std::uint64_t word(std::uint64_t index) const noexcept { return reference_kept_word(m_key, index); }

private:
    DropoutKey m_key;
};

/// Nothing to wait for: plain stores.
inline void stream_fence() noexcept {}

}  // namespace seqembed::detail::scalar_isa
