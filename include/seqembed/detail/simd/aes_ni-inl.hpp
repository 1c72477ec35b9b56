// detail/simd/aes_ni-inl.hpp: the dropout mask's words with AES-NI, one 128-bit block at a time.
//
// No include guard, by design: detail/simd/avx2.hpp and detail/simd/avx512.hpp include this file
// inside their namespaces, so that it is compiled for their targets (each has "aes"); it runs
// only where cpu_has_aes() says.

// The loops below unrolled whole, so that the eight blocks stay in registers.
#if defined(__clang__)
#define SEQEMBED_DETAIL_AES_UNROLL _Pragma("unroll")
#else
#define SEQEMBED_DETAIL_AES_UNROLL _Pragma("GCC unroll 8")
#endif

/// ARS-5's round keys and the threshold of a mask as 128-bit vectors.
struct AesNiKeys {
    explicit AesNiKeys(const MaskRoundKeys& keys) noexcept
        : threshold(_mm_set1_epi16(static_cast<short>(keys.lane_threshold))) {
        for (int r = 0; r <= ars_mask_rounds; ++r)
            round[r] = _mm_set_epi64x(static_cast<long long>(keys.round[r][1]), static_cast<long long>(keys.round[r][0]));
    }
    __m128i round[ars_mask_rounds + 1];
    __m128i threshold;
};

/// Word `word` of the mask of call `call` (detail/random/dropout_layout.hpp): eight blocks in
/// flight through the rounds, then each pair's 16 draws compared with the threshold (x >= t
/// where max(x, t) == x) and packed to 16 bits.
__attribute__((always_inline)) inline std::uint64_t aes_ni_kept_word(const AesNiKeys& keys, std::uint64_t call, std::uint64_t word) noexcept {
    __m128i block[mask_blocks_per_word];
    const std::uint64_t first = mask_blocks_per_word * word;
    SEQEMBED_DETAIL_AES_UNROLL
    for (std::uint64_t b = 0; b < mask_blocks_per_word; ++b)
        block[b] = _mm_xor_si128(_mm_set_epi64x(static_cast<long long>(call), static_cast<long long>(first + b)),
                                 keys.round[0]);
    SEQEMBED_DETAIL_AES_UNROLL
    for (int r = 1; r < ars_mask_rounds; ++r) {
        SEQEMBED_DETAIL_AES_UNROLL
        for (__m128i& x : block) x = _mm_aesenc_si128(x, keys.round[r]);
    }
    SEQEMBED_DETAIL_AES_UNROLL
    for (__m128i& x : block) x = _mm_aesenclast_si128(x, keys.round[ars_mask_rounds]);
    std::uint64_t kept = 0;
    SEQEMBED_DETAIL_AES_UNROLL
    for (std::uint64_t pair = 0; pair < mask_blocks_per_word / 2; ++pair) {
        const __m128i low = block[2 * pair];
        const __m128i high = block[2 * pair + 1];
        const __m128i low_kept = _mm_cmpeq_epi16(_mm_max_epu16(low, keys.threshold), low);
        const __m128i high_kept = _mm_cmpeq_epi16(_mm_max_epu16(high, keys.threshold), high);
        const auto bits = static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(low_kept, high_kept)));
        kept |= std::uint64_t{bits} << (16 * pair);
    }
    return kept;
}

#undef SEQEMBED_DETAIL_AES_UNROLL
