/// @file detail/simd/avx512.hpp
/// @brief The AVX-512 backend of the vector layer (AVX-512F and BW; VAES and AES-NI where the
///        CPU has them, for the dropout mask), compiled in a target("avx512f,avx512bw,vaes,aes")
///        region of detail/engine/kernels.hpp whatever the build's flags.
#pragma once

#include <cstdint>

#include <Eigen/Core>

#include "../../isa.hpp"
#include "../random/dropout_layout.hpp"
#include "platform.hpp"

// Included by detail/engine/kernels.hpp, which ends these macros after its last use.
#include "backend_macros.hpp"

#if SEQEMBED_DETAIL_AVX512_KERNELS
#include <immintrin.h>

namespace seqembed::detail::avx512_isa {

template <typename Scalar>
struct Lanes;

/// Sixteen floats.
template <>
struct Lanes<float> {
    using Reg = __m512;
    static constexpr int count = 16;
    static Reg load(const float* p) noexcept { return _mm512_loadu_ps(p); }
    /// The first `used` values (fewer than count) and zeros after them; nothing past them is read.
    static Reg load_first(const float* p, int used) noexcept {
        return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << used) - 1u), p);
    }
    /// Reads 2 * count floats: even gets values 0, 2, 4, ..., odd values 1, 3, 5, ... (the order
    /// in which widen_split splits bfloat16 values).
    static void load_split(const float* p, Reg& even, Reg& odd) noexcept {
        const __m512 low = _mm512_loadu_ps(p);
        const __m512 high = _mm512_loadu_ps(p + 16);
        even = _mm512_permutex2var_ps(
            low, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), high);
        odd = _mm512_permutex2var_ps(
            low, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), high);
    }
    static Reg widen(const Eigen::bfloat16* p) noexcept {
        const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
    }
    static Reg widen(const Eigen::half* p) noexcept {
        return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    }
    /// Rounds the value here: see detail::keep_rounded.
    static void keep_rounded(Reg& v) noexcept { __asm__("" : "+v"(v)); }
    /// As keep_rounded, each time the code runs: see detail::keep_rounded_each_time.
    static void keep_rounded_each_time(Reg& v) noexcept { __asm__ volatile("" : "+v"(v)); }
    static Reg set(float x) noexcept { return _mm512_set1_ps(x); }
    static Reg mul(Reg a, Reg b) noexcept { return _mm512_mul_ps(a, b); }
    static Reg add(Reg a, Reg b) noexcept { return _mm512_add_ps(a, b); }
    /// a + b, a's NaN (made quiet) when both are NaN: the operands in this order whatever the
    /// compiler would commute.
    static Reg add_in_order(Reg a, Reg b) noexcept {
        Reg sum;
        __asm__("vaddps %2, %1, %0" : "=v"(sum) : "v"(a), "v"(b));
        return sum;
    }
    static Reg sub(Reg a, Reg b) noexcept { return _mm512_sub_ps(a, b); }
    static Reg div(Reg a, Reg b) noexcept { return _mm512_div_ps(a, b); }
    static Reg sqrt(Reg a) noexcept { return _mm512_sqrt_ps(a); }
    /// std::max(a, b): b where a < b, else a (a when either is NaN).
    static Reg max(Reg a, Reg b) noexcept { return _mm512_max_ps(b, a); }
    /// a b + c, rounded once.
    static Reg mul_add(Reg a, Reg b, Reg c) noexcept { return _mm512_fmadd_ps(a, b, c); }
    /// -a: the sign bit flipped.
    static Reg negate(Reg a) noexcept {
        return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN)));
    }
    /// Lanes 2i and 2i + 1 exchanged.
    static Reg swap_pairs(Reg v) noexcept { return _mm512_permute_ps(v, 0xB1); }
    /// Reads 2 * count bfloat16 values: even gets values 0, 2, 4, ..., odd values 1, 3, 5, ...
    /// (each a 32-bit lane holds a pair: shifts and masks, no shuffle).
    static void widen_split(const Eigen::bfloat16* p, Reg& even, Reg& odd) noexcept {
        split_pairs(_mm512_loadu_si512(p), even, odd);
    }
    /// As widen_split, reading only the first `used` values (fewer than 2 * count) and zeros
    /// after them: masked loads, which touch nothing past the values.
    static void widen_split_first(const Eigen::bfloat16* p, int used, Reg& even, Reg& odd) noexcept {
        const int whole = used / 2;
        __m512i pairs = _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << whole) - 1u), p);
        if (used % 2 != 0) {
            const auto last = Eigen::numext::bit_cast<std::uint16_t>(p[used - 1]);
            pairs = _mm512_mask_set1_epi32(pairs, static_cast<__mmask16>(1u << whole), last);
        }
        split_pairs(pairs, even, odd);
    }
    /// Stores what widen_split read: 2 * count bfloat16 values, rounded to nearest even (NaN: a
    /// quiet NaN keeping its sign and the top of its payload), as scalar_isa's nearest_bfloat16.
    static void narrow_split(Eigen::bfloat16* p, Reg even, Reg odd) noexcept {
        _mm512_storeu_si512(p, rounded_pairs(even, odd));
    }
    /// As narrow_split, writing only the first `used` values (fewer than 2 * count).
    static void narrow_split_first(Eigen::bfloat16* p, int used, Reg even, Reg odd) noexcept {
        const __m512i packed = rounded_pairs(even, odd);
        const int whole = used / 2;
        _mm512_mask_storeu_epi32(p, static_cast<__mmask16>((1u << whole) - 1u), packed);
        if (used % 2 != 0) {
            alignas(64) std::uint32_t lanes[16];
            _mm512_store_si512(lanes, packed);
            p[used - 1] = Eigen::numext::bit_cast<Eigen::bfloat16>(static_cast<std::uint16_t>(lanes[whole]));
        }
    }
    /// Whether narrow_split_converted may round the rotation's results: not with AVX-512F alone
    /// (detail/simd/avx512_bf16.hpp).
    static constexpr bool converts_bfloat16 = false;
    /// Whether partners_of and partner_split exist: lane permutes across two vectors.
    static constexpr bool permutes_pairs = true;
    /// Where partner_split finds each lane's partner (indices into even, then odd).
    struct Partners {
        __m512i even, odd;
    };
    /// For a vector whose first `pairs` values (at most count) are x1 of as many pairs and
    /// whose next `pairs` are their x2, split by widen_split: where each value's partner lies
    /// (value j < pairs: j + pairs; j < 2 pairs: j - pairs; past them, itself).
    static Partners partners_of(int pairs) noexcept {
        const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        const __m512i shift = _mm512_set1_epi32(pairs);
        const auto where = [&](__m512i value) {
            const __mmask16 first = _mm512_cmplt_epi32_mask(value, shift);
            const __mmask16 second =
                _mm512_kandn(first, _mm512_cmplt_epi32_mask(value, _mm512_add_epi32(shift, shift)));
            __m512i partner = _mm512_mask_add_epi32(value, first, value, shift);
            partner = _mm512_mask_sub_epi32(partner, second, value, shift);
            // Value q is lane q / 2 of the even vector (q even) or of the odd one (index 16 up).
            return _mm512_or_si512(_mm512_srli_epi32(partner, 1),
                                   _mm512_slli_epi32(_mm512_and_si512(partner, _mm512_set1_epi32(1)), 4));
        };
        const __m512i even_values = _mm512_add_epi32(lane, lane);
        return {where(even_values), where(_mm512_add_epi32(even_values, _mm512_set1_epi32(1)))};
    }
    /// The partners (partners_of) of the values widen_split split into even and odd.
    static void partner_split(const Partners& at, Reg even, Reg odd, Reg& partner_even, Reg& partner_odd) noexcept {
        partner_even = _mm512_permutex2var_ps(even, at.even, odd);
        partner_odd = _mm512_permutex2var_ps(even, at.odd, odd);
    }
    /// Lane k + lane k + half for half = count / 2, ..., 1: the sum of the lanes, in that order.
    static float pairwise_sum(Reg v) noexcept {
        const __m256 high = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
        const __m256 eight = _mm256_add_ps(_mm512_castps512_ps256(v), high);
        const __m128 four = _mm_add_ps(_mm256_castps256_ps128(eight), _mm256_extractf128_ps(eight, 1));
        const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
        return _mm_cvtss_f32(_mm_add_ss(two, _mm_shuffle_ps(two, two, 1)));
    }
    static void store(float* p, Reg v) noexcept { _mm512_storeu_ps(p, v); }
    /// Writes the first `used` lanes (fewer than count); nothing past them is written.
    static void store_first(float* p, int used, Reg v) noexcept {
        _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << used) - 1u), v);
    }
    static void stream(float* p, Reg v) noexcept { _mm512_stream_ps(p, v); }
    /// Lanes [shift, shift + count) of a and b end to end, a first (shift in [0, count]): a row's
    /// vectors joined into the vectors of an output that is not aligned as the row is.
    static Reg join(Reg a, Reg b, int shift) noexcept {
        const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        return _mm512_permutex2var_ps(a, _mm512_add_epi32(lane, _mm512_set1_epi32(shift)), b);
    }
    static Reg kept_or_zero(std::uint32_t bits, Reg keep) noexcept {
        return _mm512_maskz_mov_ps(static_cast<__mmask16>(bits), keep);
    }
    /// Even values (each lane's low half, shifted up) and odd ones (its high half) of 32-bit lanes
    /// holding pairs of bfloat16 values.
    static void split_pairs(__m512i pairs, Reg& even, Reg& odd) noexcept {
        even = _mm512_castsi512_ps(_mm512_slli_epi32(pairs, 16));
        odd = _mm512_castsi512_ps(_mm512_and_si512(pairs, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
    }
    /// The pairs split_pairs split, each value rounded to the bfloat16 nearest (ties to even;
    /// NaN: quiet, keeping its sign and the top of its payload).
    static __m512i rounded_pairs(Reg even, Reg odd) noexcept {
        const __m512i e = _mm512_castps_si512(even);
        const __m512i o = _mm512_castps_si512(odd);
        const __m512i one = _mm512_set1_epi32(1);
        const __m512i bias = _mm512_set1_epi32(0x7FFF);
        // Rounded: the value plus 0x7FFF plus bit 16, whose high 16 bits are the bfloat16.
        __m512i low = _mm512_srli_epi32(
            _mm512_add_epi32(_mm512_add_epi32(e, bias), _mm512_and_si512(_mm512_srli_epi32(e, 16), one)), 16);
        __m512i high = _mm512_add_epi32(_mm512_add_epi32(o, bias), _mm512_and_si512(_mm512_srli_epi32(o, 16), one));
        if (_mm512_cmp_ps_mask(even, odd, _CMP_UNORD_Q) != 0) {  // NaN: its high half, made quiet
            low = _mm512_mask_or_epi32(low, _mm512_cmp_ps_mask(even, even, _CMP_UNORD_Q), _mm512_srli_epi32(e, 16),
                                       _mm512_set1_epi32(0x40));
            high = _mm512_mask_or_epi32(high, _mm512_cmp_ps_mask(odd, odd, _CMP_UNORD_Q), o,
                                        _mm512_set1_epi32(0x400000));
        }
        // 0xE4: c ? a : b bit by bit, the odd values' high halves over the even values' low ones.
        return _mm512_ternarylogic_epi32(high, low, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u)), 0xE4);
    }
};

/// Eight doubles.
template <>
struct Lanes<double> {
    using Reg = __m512d;
    static constexpr int count = 8;
    static Reg load(const double* p) noexcept { return _mm512_loadu_pd(p); }
    /// count floats, each made a double (exactly).
    static Reg widen(const float* p) noexcept { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
    /// The lanes of a vector of 2 * count floats, each made a double (exactly): lanes
    /// [0, count) to low, [count, 2 * count) to high.
    static void widen_halves(Lanes<float>::Reg v, Reg& low, Reg& high) noexcept {
        low = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
        high = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    }
    /// Stores the lanes as count floats, each rounded to nearest (as static_cast<float>).
    static void store_narrowed(float* p, Reg v) noexcept { _mm256_storeu_ps(p, _mm512_cvtpd_ps(v)); }
    /// The first `used` values (fewer than count) and zeros after them; nothing past them is read.
    static Reg load_first(const double* p, int used) noexcept {
        return _mm512_maskz_loadu_pd(static_cast<__mmask8>((1u << used) - 1u), p);
    }
    /// Rounds the value here: see detail::keep_rounded.
    static void keep_rounded(Reg& v) noexcept { __asm__("" : "+v"(v)); }
    /// As keep_rounded, each time the code runs: see detail::keep_rounded_each_time.
    static void keep_rounded_each_time(Reg& v) noexcept { __asm__ volatile("" : "+v"(v)); }
    static Reg set(double x) noexcept { return _mm512_set1_pd(x); }
    static Reg mul(Reg a, Reg b) noexcept { return _mm512_mul_pd(a, b); }
    static Reg add(Reg a, Reg b) noexcept { return _mm512_add_pd(a, b); }
    /// a + b, a's NaN (made quiet) when both are NaN: the operands in this order whatever the
    /// compiler would commute.
    static Reg add_in_order(Reg a, Reg b) noexcept {
        Reg sum;
        __asm__("vaddpd %2, %1, %0" : "=v"(sum) : "v"(a), "v"(b));
        return sum;
    }
    static void store(double* p, Reg v) noexcept { _mm512_storeu_pd(p, v); }
    /// Writes the first `used` lanes (fewer than count); nothing past them is written.
    static void store_first(double* p, int used, Reg v) noexcept {
        _mm512_mask_storeu_pd(p, static_cast<__mmask8>((1u << used) - 1u), v);
    }
    static void stream(double* p, Reg v) noexcept { _mm512_stream_pd(p, v); }
    /// Lanes [shift, shift + count) of a and b end to end, a first (shift in [0, count]): a row's
    /// vectors joined into the vectors of an output that is not aligned as the row is.
    static Reg join(Reg a, Reg b, int shift) noexcept {
        return _mm512_castps_pd(Lanes<float>::join(_mm512_castpd_ps(a), _mm512_castpd_ps(b), 2 * shift));
    }
    static Reg kept_or_zero(std::uint32_t bits, Reg keep) noexcept {
        return _mm512_maskz_mov_pd(static_cast<__mmask8>(bits), keep);
    }
    static Reg sub(Reg a, Reg b) noexcept { return _mm512_sub_pd(a, b); }
    static Reg div(Reg a, Reg b) noexcept { return _mm512_div_pd(a, b); }
    static Reg sqrt(Reg a) noexcept { return _mm512_sqrt_pd(a); }
    /// std::max(a, b): b where a < b, else a (a when either is NaN).
    static Reg max(Reg a, Reg b) noexcept { return _mm512_max_pd(b, a); }
    /// Lanes 2i and 2i + 1 exchanged.
    static Reg swap_pairs(Reg v) noexcept { return _mm512_permute_pd(v, 0x55); }
    /// Lane k + lane k + half for half = count / 2, ..., 1: the sum of the lanes, in that order.
    static double pairwise_sum(Reg v) noexcept {
        const __m256d four = _mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd(v, 1));
        const __m128d two = _mm_add_pd(_mm256_castpd256_pd128(four), _mm256_extractf128_pd(four, 1));
        return _mm_cvtsd_f64(_mm_add_sd(two, _mm_unpackhi_pd(two, two)));
    }
    static Reg negate(Reg a) noexcept {
        return _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(a), _mm512_set1_epi64(INT64_MIN)));
    }
    using Mask = __mmask8;
    static Mask equal(Reg a, Reg b) noexcept { return _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ); }
    static Mask greater_equal(Reg a, Reg b) noexcept { return _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ); }
    static Mask either(Mask a, Mask b) noexcept { return static_cast<Mask>(a | b); }
    static Reg select(Mask m, Reg yes, Reg no) noexcept { return _mm512_mask_blend_pd(m, no, yes); }
};

#include "aes_ni-inl.hpp"

/// The dropout mask's words (detail/random/dropout_layout.hpp): with VAES, four blocks a vector,
/// where the CPU has it; else with AES-NI, a block at a time; else in plain C++.
class MaskWords {
public:
    /// Whether this backend draws `draw` on this CPU.
    static bool runs(MaskDraw draw) noexcept {
        switch (draw) {
            case MaskDraw::software: return true;
            case MaskDraw::aes128: return cpu_has_aes();
            case MaskDraw::aes256: return false;  // aes512 where VAES is
            case MaskDraw::aes512: return cpu_has_vaes();
        }
        return false;
    }
    /// The draw used unless one is asked for: the fastest this CPU runs.
    static MaskDraw fastest() noexcept {
        static const MaskDraw draw = fastest_mask_draw(&runs);
        return draw;
    }
    /// Draws the mask of `key` with `draw` (one runs() accepts).
    explicit MaskWords(const DropoutKey& key, MaskDraw draw = fastest()) noexcept
        : m_key(key), m_narrow(MaskRoundKeys(key)), m_draw(draw),
          m_wide(draw == MaskDraw::aes512 && key.threshold < drop_all_threshold) {
        for (int r = 0; r <= ars_mask_rounds; ++r) m_round[r] = _mm512_broadcast_i32x4(m_narrow.round[r]);
        m_threshold = _mm512_broadcast_i32x4(m_narrow.threshold);
        const auto call = static_cast<long long>(key.call);
        m_counters[0] = _mm512_set_epi64(call, 3, call, 2, call, 1, call, 0);
        m_counters[1] = _mm512_set_epi64(call, 7, call, 6, call, 5, call, 4);
    }
    /// Word `index`: bit i set where element 64 index + i is kept. Inlined for the row kernel's
    /// loop, which then holds the round keys in registers; the other draws are calls.
    __attribute__((always_inline)) std::uint64_t word(std::uint64_t index) const noexcept {
        if (!m_wide) return narrow_word(index);
        // Blocks 8 index .. 8 index + 3 in one vector, the next four in another: counter
        // (block, call), the block in each 128-bit lane's low half.
        const __m512i first = _mm512_maskz_set1_epi64(0x55, static_cast<long long>(mask_blocks_per_word * index));
        __m512i low = _mm512_add_epi64(m_counters[0], first);
        __m512i high = _mm512_add_epi64(m_counters[1], first);
        static_assert(ars_mask_rounds == 5, "the rounds below are ARS-5's");
        low = _mm512_xor_si512(low, m_round[0]);
        high = _mm512_xor_si512(high, m_round[0]);
        low = _mm512_aesenc_epi128(low, m_round[1]);
        high = _mm512_aesenc_epi128(high, m_round[1]);
        low = _mm512_aesenc_epi128(low, m_round[2]);
        high = _mm512_aesenc_epi128(high, m_round[2]);
        low = _mm512_aesenc_epi128(low, m_round[3]);
        high = _mm512_aesenc_epi128(high, m_round[3]);
        low = _mm512_aesenc_epi128(low, m_round[4]);
        high = _mm512_aesenc_epi128(high, m_round[4]);
        low = _mm512_aesenclast_epi128(low, m_round[5]);
        high = _mm512_aesenclast_epi128(high, m_round[5]);
        return static_cast<std::uint64_t>(_mm512_cmpge_epu16_mask(low, m_threshold)) |
               static_cast<std::uint64_t>(_mm512_cmpge_epu16_mask(high, m_threshold)) << 32;
    }

private:
    /// Word `index` drawn without VAES: with AES-NI when asked and something is kept, else in
    /// plain C++ (which also keeps nothing at the drop-all threshold).
    __attribute__((noinline)) std::uint64_t narrow_word(std::uint64_t index) const noexcept {
        if (m_draw == MaskDraw::aes128 && m_key.threshold < drop_all_threshold)
            return aes_ni_kept_word(m_narrow, m_key.call, index);
        return reference_kept_word(m_key, index);
    }

    DropoutKey m_key;
    AesNiKeys m_narrow;
    __m512i m_round[ars_mask_rounds + 1];
    __m512i m_threshold;
    __m512i m_counters[2];  // counters (b, call) of blocks b = 0 .. 3 and 4 .. 7
    MaskDraw m_draw;
    bool m_wide;  // VAES, and something kept
};

/// Orders the streaming stores before whatever follows (another thread reading the output).
inline void stream_fence() noexcept { _mm_sfence(); }

}  // namespace seqembed::detail::avx512_isa
#endif
