/// @file detail/simd/avx2.hpp
/// @brief The AVX2 backend of the vector layer (with FMA and F16C; AES-NI where the CPU has it,
///        for the dropout mask), compiled in a target("avx2,fma,f16c,aes") region of
///        detail/engine/kernels.hpp whatever the build's flags.
#pragma once

#include <cstdint>

#include <Eigen/Core>

#include "../../isa.hpp"
#include "../random/dropout_layout.hpp"
#include "platform.hpp"

// Included by detail/engine/kernels.hpp, which ends these macros after its last use.
#include "backend_macros.hpp"

#if SEQEMBED_DETAIL_X86_KERNELS
#include <immintrin.h>

namespace seqembed::detail::avx2_isa {

template <typename Scalar>
struct Lanes;

/// Eight floats.
template <>
struct Lanes<float> {
    using Reg = __m256;
    static constexpr int count = 8;
    static Reg load(const float* p) noexcept { return _mm256_loadu_ps(p); }
    /// The first `used` values (fewer than count) and zeros after them; nothing past them is read.
    static Reg load_first(const float* p, int used) noexcept { return _mm256_maskload_ps(p, lanes_below(used)); }
    /// Reads 2 * count floats: even gets values 0, 2, 4, ..., odd values 1, 3, 5, ... (the order
    /// in which widen_split splits bfloat16 values).
    static void load_split(const float* p, Reg& even, Reg& odd) noexcept {
        const __m256 low = _mm256_loadu_ps(p);
        const __m256 high = _mm256_loadu_ps(p + 8);
        // Within each 128 bits: (low 0 2, high 0 2) and (low 1 3, high 1 3); then the 64-bit
        // quarters put in order 0, 2, 1, 3.
        even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(low, high, 0x88)), 0xD8));
        odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(low, high, 0xDD)), 0xD8));
    }
    static Reg widen(const Eigen::bfloat16* p) noexcept {
        const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
    }
    static Reg widen(const Eigen::half* p) noexcept {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
    /// Rounds the value here: see detail::keep_rounded.
    static void keep_rounded(Reg& v) noexcept { __asm__("" : "+v"(v)); }
    /// As keep_rounded, each time the code runs: see detail::keep_rounded_each_time.
    static void keep_rounded_each_time(Reg& v) noexcept { __asm__ volatile("" : "+v"(v)); }
    static Reg set(float x) noexcept { return _mm256_set1_ps(x); }
    static Reg mul(Reg a, Reg b) noexcept { return _mm256_mul_ps(a, b); }
    static Reg add(Reg a, Reg b) noexcept { return _mm256_add_ps(a, b); }
    /// a + b, a's NaN (made quiet) when both are NaN: the operands in this order whatever the
    /// compiler would commute.
    static Reg add_in_order(Reg a, Reg b) noexcept {
        Reg sum;
        __asm__("vaddps %2, %1, %0" : "=x"(sum) : "x"(a), "x"(b));
        return sum;
    }
    static Reg sub(Reg a, Reg b) noexcept { return _mm256_sub_ps(a, b); }
    static Reg div(Reg a, Reg b) noexcept { return _mm256_div_ps(a, b); }
    static Reg sqrt(Reg a) noexcept { return _mm256_sqrt_ps(a); }
    /// std::max(a, b): b where a < b, else a (a when either is NaN).
    static Reg max(Reg a, Reg b) noexcept { return _mm256_max_ps(b, a); }
    /// a b + c, rounded once.
    static Reg mul_add(Reg a, Reg b, Reg c) noexcept { return _mm256_fmadd_ps(a, b, c); }
    /// -a: the sign bit flipped.
    static Reg negate(Reg a) noexcept { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
    /// Lanes 2i and 2i + 1 exchanged.
    static Reg swap_pairs(Reg v) noexcept { return _mm256_permute_ps(v, 0xB1); }
    /// Reads 2 * count bfloat16 values: even gets values 0, 2, 4, ..., odd values 1, 3, 5, ...
    /// (each a 32-bit lane holds a pair: shifts and masks, no shuffle).
    static void widen_split(const Eigen::bfloat16* p, Reg& even, Reg& odd) noexcept {
        split_pairs(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), even, odd);
    }
    /// As widen_split, reading only the first `used` values (fewer than 2 * count) and zeros
    /// after them: masked loads, which touch nothing past the values.
    static void widen_split_first(const Eigen::bfloat16* p, int used, Reg& even, Reg& odd) noexcept {
        const int whole = used / 2;
        __m256i pairs = _mm256_maskload_epi32(reinterpret_cast<const int*>(p), lanes_below(whole));
        if (used % 2 != 0) {
            const auto last = Eigen::numext::bit_cast<std::uint16_t>(p[used - 1]);
            const __m256i at = _mm256_andnot_si256(lanes_below(whole), lanes_below(whole + 1));  // lane `whole`
            pairs = _mm256_or_si256(pairs, _mm256_and_si256(at, _mm256_set1_epi32(last)));
        }
        split_pairs(pairs, even, odd);
    }
    /// Stores what widen_split read: 2 * count bfloat16 values, rounded to nearest even (NaN: a
    /// quiet NaN keeping its sign and the top of its payload), as scalar_isa's nearest_bfloat16.
    static void narrow_split(Eigen::bfloat16* p, Reg even, Reg odd) noexcept {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), rounded_pairs(even, odd));
    }
    /// As narrow_split, writing only the first `used` values (fewer than 2 * count).
    static void narrow_split_first(Eigen::bfloat16* p, int used, Reg even, Reg odd) noexcept {
        const __m256i packed = rounded_pairs(even, odd);
        const int whole = used / 2;
        _mm256_maskstore_epi32(reinterpret_cast<int*>(p), lanes_below(whole), packed);
        if (used % 2 != 0) {
            alignas(32) std::uint32_t lanes[8];
            _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), packed);
            p[used - 1] = Eigen::numext::bit_cast<Eigen::bfloat16>(static_cast<std::uint16_t>(lanes[whole]));
        }
    }
    /// Whether narrow_split_converted may round the rotation's results: not here
    /// (detail/simd/avx512_bf16.hpp).
    static constexpr bool converts_bfloat16 = false;
    /// Whether partners_of and partner_split exist (detail/simd/avx512.hpp): not here.
    static constexpr bool permutes_pairs = false;
    /// Lane k + lane k + half for half = count / 2, ..., 1: the sum of the lanes, in that order.
    static float pairwise_sum(Reg v) noexcept {
        const __m128 four = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
        return _mm_cvtss_f32(_mm_add_ss(two, _mm_shuffle_ps(two, two, 1)));
    }
    static void store(float* p, Reg v) noexcept { _mm256_storeu_ps(p, v); }
    /// Writes the first `used` lanes (fewer than count); nothing past them is written.
    static void store_first(float* p, int used, Reg v) noexcept { _mm256_maskstore_ps(p, lanes_below(used), v); }
    static void stream(float* p, Reg v) noexcept { _mm256_stream_ps(p, v); }
    /// Lanes [shift, shift + count) of a and b end to end, a first (shift in [0, count]): a row's
    /// vectors joined into the vectors of an output that is not aligned as the row is.
    static Reg join(Reg a, Reg b, int shift) noexcept {
        const __m256i index = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(shift));
        const __m256 from_b = _mm256_castsi256_ps(_mm256_cmpgt_epi32(index, _mm256_set1_epi32(7)));
        return _mm256_blendv_ps(_mm256_permutevar8x32_ps(a, index), _mm256_permutevar8x32_ps(b, index), from_b);
    }
    static Reg kept_or_zero(std::uint32_t bits, Reg keep) noexcept {
        const __m256i lane_bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
        const __m256i set = _mm256_and_si256(_mm256_set1_epi32(static_cast<int>(bits)), lane_bits);
        return _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(set, lane_bits)), keep);
    }
    /// All ones in 32-bit lanes 0 .. n - 1, zeros in the others.
    static __m256i lanes_below(int n) noexcept {
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
    /// Even values (each lane's low half, shifted up) and odd ones (its high half) of 32-bit lanes
    /// holding pairs of bfloat16 values.
    static void split_pairs(__m256i pairs, Reg& even, Reg& odd) noexcept {
        even = _mm256_castsi256_ps(_mm256_slli_epi32(pairs, 16));
        odd = _mm256_castsi256_ps(_mm256_and_si256(pairs, _mm256_set1_epi32(static_cast<int>(0xFFFF0000u))));
    }
    /// The pairs split_pairs split, each value rounded to the bfloat16 nearest (ties to even;
    /// NaN: quiet, keeping its sign and the top of its payload).
    static __m256i rounded_pairs(Reg even, Reg odd) noexcept {
        const __m256i e = _mm256_castps_si256(even);
        const __m256i o = _mm256_castps_si256(odd);
        const __m256i one = _mm256_set1_epi32(1);
        const __m256i bias = _mm256_set1_epi32(0x7FFF);
        // Rounded: the value plus 0x7FFF plus bit 16, whose high 16 bits are the bfloat16.
        __m256i low = _mm256_srli_epi32(
            _mm256_add_epi32(_mm256_add_epi32(e, bias), _mm256_and_si256(_mm256_srli_epi32(e, 16), one)), 16);
        __m256i high = _mm256_add_epi32(_mm256_add_epi32(o, bias), _mm256_and_si256(_mm256_srli_epi32(o, 16), one));
        if (_mm256_movemask_ps(_mm256_cmp_ps(even, odd, _CMP_UNORD_Q)) != 0) {  // NaN: its high half, made quiet
            low = _mm256_blendv_epi8(low, _mm256_or_si256(_mm256_srli_epi32(e, 16), _mm256_set1_epi32(0x40)),
                                     _mm256_castps_si256(_mm256_cmp_ps(even, even, _CMP_UNORD_Q)));
            high = _mm256_blendv_epi8(high, _mm256_or_si256(o, _mm256_set1_epi32(0x400000)),
                                      _mm256_castps_si256(_mm256_cmp_ps(odd, odd, _CMP_UNORD_Q)));
        }
        // The odd values' high halves (16-bit words 1, 3, 5, 7 of each 128 bits) over the even
        // values' low ones.
        return _mm256_blend_epi16(low, high, 0xAA);
    }
};

/// Four doubles.
template <>
struct Lanes<double> {
    using Reg = __m256d;
    static constexpr int count = 4;
    static Reg load(const double* p) noexcept { return _mm256_loadu_pd(p); }
    /// count floats, each made a double (exactly).
    static Reg widen(const float* p) noexcept { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
    /// The lanes of a vector of 2 * count floats, each made a double (exactly): lanes
    /// [0, count) to low, [count, 2 * count) to high.
    static void widen_halves(Lanes<float>::Reg v, Reg& low, Reg& high) noexcept {
        low = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
        high = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
    }
    /// Stores the lanes as count floats, each rounded to nearest (as static_cast<float>).
    static void store_narrowed(float* p, Reg v) noexcept { _mm_storeu_ps(p, _mm256_cvtpd_ps(v)); }
    /// The first `used` values (fewer than count) and zeros after them; nothing past them is read.
    static Reg load_first(const double* p, int used) noexcept { return _mm256_maskload_pd(p, lanes_below(used)); }
    /// Rounds the value here: see detail::keep_rounded.
    static void keep_rounded(Reg& v) noexcept { __asm__("" : "+v"(v)); }
    /// As keep_rounded, each time the code runs: see detail::keep_rounded_each_time.
    static void keep_rounded_each_time(Reg& v) noexcept { __asm__ volatile("" : "+v"(v)); }
    static Reg set(double x) noexcept { return _mm256_set1_pd(x); }
    static Reg mul(Reg a, Reg b) noexcept { return _mm256_mul_pd(a, b); }
    static Reg add(Reg a, Reg b) noexcept { return _mm256_add_pd(a, b); }
    /// a + b, a's NaN (made quiet) when both are NaN: the operands in this order whatever the
    /// compiler would commute.
    static Reg add_in_order(Reg a, Reg b) noexcept {
        Reg sum;
        __asm__("vaddpd %2, %1, %0" : "=x"(sum) : "x"(a), "x"(b));
        return sum;
    }
    static void store(double* p, Reg v) noexcept { _mm256_storeu_pd(p, v); }
    /// Writes the first `used` lanes (fewer than count); nothing past them is written.
    static void store_first(double* p, int used, Reg v) noexcept { _mm256_maskstore_pd(p, lanes_below(used), v); }
    /// All ones in 64-bit lanes 0 .. n - 1, zeros in the others.
    static __m256i lanes_below(int n) noexcept {
        return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
    }
    static void stream(double* p, Reg v) noexcept { _mm256_stream_pd(p, v); }
    /// Lanes [shift, shift + count) of a and b end to end, a first (shift in [0, count]): a row's
    /// vectors joined into the vectors of an output that is not aligned as the row is.
    static Reg join(Reg a, Reg b, int shift) noexcept {
        return _mm256_castps_pd(Lanes<float>::join(_mm256_castpd_ps(a), _mm256_castpd_ps(b), 2 * shift));
    }
    static Reg kept_or_zero(std::uint32_t bits, Reg keep) noexcept {
        const __m256i lane_bits = _mm256_setr_epi64x(1, 2, 4, 8);
        const __m256i set = _mm256_and_si256(_mm256_set1_epi64x(static_cast<long long>(bits)), lane_bits);
        return _mm256_and_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(set, lane_bits)), keep);
    }
    static Reg sub(Reg a, Reg b) noexcept { return _mm256_sub_pd(a, b); }
    static Reg div(Reg a, Reg b) noexcept { return _mm256_div_pd(a, b); }
    static Reg sqrt(Reg a) noexcept { return _mm256_sqrt_pd(a); }
    /// std::max(a, b): b where a < b, else a (a when either is NaN).
    static Reg max(Reg a, Reg b) noexcept { return _mm256_max_pd(b, a); }
    /// Lanes 2i and 2i + 1 exchanged.
    static Reg swap_pairs(Reg v) noexcept { return _mm256_permute_pd(v, 0x5); }
    /// Lane k + lane k + half for half = count / 2, ..., 1: the sum of the lanes, in that order.
    static double pairwise_sum(Reg v) noexcept {
        const __m128d two = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
        return _mm_cvtsd_f64(_mm_add_sd(two, _mm_unpackhi_pd(two, two)));
    }
    static Reg negate(Reg a) noexcept { return _mm256_xor_pd(a, _mm256_set1_pd(-0.0)); }
    using Mask = __m256d;
    static Mask equal(Reg a, Reg b) noexcept { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
    static Mask greater_equal(Reg a, Reg b) noexcept { return _mm256_cmp_pd(a, b, _CMP_GE_OQ); }
    static Mask either(Mask a, Mask b) noexcept { return _mm256_or_pd(a, b); }
    static Reg select(Mask m, Reg yes, Reg no) noexcept { return _mm256_blendv_pd(no, yes, m); }
};

#include "aes_ni-inl.hpp"

/// The dropout mask's words (detail/random/dropout_layout.hpp): with VAES, two blocks a vector,
/// where the CPU has it (Zen 3, Alder Lake and later cores without AVX-512); else with AES-NI, a
/// block at a time; else in plain C++.
class MaskWords {
public:
    /// Whether this backend draws `draw` on this CPU.
    static bool runs(MaskDraw draw) noexcept {
        switch (draw) {
            case MaskDraw::software: return true;
            case MaskDraw::aes128: return cpu_has_aes();
            case MaskDraw::aes256: return cpu_has_vaes();
            case MaskDraw::aes512: return false;
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
        : m_key(key), m_narrow(MaskRoundKeys(key)),
          m_wide(draw == MaskDraw::aes256 && key.threshold < drop_all_threshold),
          m_narrow_hardware(draw == MaskDraw::aes128 && key.threshold < drop_all_threshold) {
        for (int r = 0; r <= ars_mask_rounds; ++r) m_round[r] = _mm256_broadcastsi128_si256(m_narrow.round[r]);
        m_threshold = _mm256_broadcastsi128_si256(m_narrow.threshold);
        // Blocks (0, 2), (1, 3), (4, 6) and (5, 7) of a word: the 128-bit lanes of two vectors'
        // compares, packed, then hold blocks 0, 1, 2, 3 (and 4 .. 7) in order.
        const auto call = static_cast<long long>(key.call);
        m_counters[0] = _mm256_set_epi64x(call, 2, call, 0);
        m_counters[1] = _mm256_set_epi64x(call, 3, call, 1);
        m_counters[2] = _mm256_set_epi64x(call, 6, call, 4);
        m_counters[3] = _mm256_set_epi64x(call, 7, call, 5);
    }
    /// Word `index`: bit i set where element 64 index + i is kept. Both hardware draws are
    /// inlined into the row kernel's loop (a call per word cost as much as the draw); the
    /// software draw is a call.
    __attribute__((always_inline)) std::uint64_t word(std::uint64_t index) const noexcept {
        if (!m_wide) {
            if (m_narrow_hardware) return aes_ni_kept_word(m_narrow, m_key.call, index);
            return software_word(index);
        }
        const auto first = static_cast<long long>(mask_blocks_per_word * index);
        const __m256i firsts = _mm256_set_epi64x(0, first, 0, first);
        __m256i block[4];
        SEQEMBED_DETAIL_UNROLL_ALL
        for (int v = 0; v < 4; ++v) block[v] = _mm256_xor_si256(_mm256_add_epi64(m_counters[v], firsts), m_round[0]);
        SEQEMBED_DETAIL_UNROLL_ALL
        for (int r = 1; r < ars_mask_rounds; ++r) {
            SEQEMBED_DETAIL_UNROLL_ALL
            for (__m256i& x : block) x = _mm256_aesenc_epi128(x, m_round[r]);
        }
        SEQEMBED_DETAIL_UNROLL_ALL
        for (__m256i& x : block) x = _mm256_aesenclast_epi128(x, m_round[ars_mask_rounds]);
        // x >= t where max(x, t) == x, each lane's 0 or -1 packed to a byte and its top bit taken.
        __m256i kept[4];
        SEQEMBED_DETAIL_UNROLL_ALL
        for (int v = 0; v < 4; ++v) kept[v] = _mm256_cmpeq_epi16(_mm256_max_epu16(block[v], m_threshold), block[v]);
        const auto low = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_packs_epi16(kept[0], kept[1])));
        const auto high = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_packs_epi16(kept[2], kept[3])));
        return std::uint64_t{low} | std::uint64_t{high} << 32;
    }

private:
    /// Word `index` drawn in plain C++ (which also keeps nothing at the drop-all threshold).
    __attribute__((noinline)) std::uint64_t software_word(std::uint64_t index) const noexcept {
        return reference_kept_word(m_key, index);
    }

    DropoutKey m_key;
    AesNiKeys m_narrow;
    __m256i m_round[ars_mask_rounds + 1];
    __m256i m_threshold;
    __m256i m_counters[4];  // counters (b, call) of the word's blocks, as the constructor pairs them
    bool m_wide;              // VAES, and something kept
    bool m_narrow_hardware;   // AES-NI, and something kept
};

/// Orders the streaming stores before whatever follows (another thread reading the output).
inline void stream_fence() noexcept { _mm_sfence(); }

}  // namespace seqembed::detail::avx2_isa
#endif
