// ARS, the reference in plain C++, against the known answers published with Random123 and, on
// x86 CPUs with AES-NI, its round against the aesenc and aesenclast instructions; the dropout
// mask's reference word built on it keeps the fraction its threshold says.
#include <seqembed/detail/random/ars.hpp>
#include <seqembed/detail/random/dropout_layout.hpp>

#include <bitset>
#include <cmath>
#include <cstdint>

#include "catch.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SEQEMBED_TEST_AESNI 1
#endif

using seqembed::detail::ArsBlock;
using seqembed::detail::ars;

TEST_CASE("the AES S-box is FIPS-197's", "[ars]") {
    const auto& box = seqembed::detail::aes::sbox;
    CHECK(box[0x00] == 0x63);
    CHECK(box[0x01] == 0x7c);
    CHECK(box[0x53] == 0xed);  // FIPS-197, section 5.1.1's example
    CHECK(box[0xff] == 0x16);
    bool permutation = true;
    bool seen[256] = {};
    for (const std::uint8_t value : box) {
        permutation = permutation && !seen[value];
        seen[value] = true;
    }
    CHECK(permutation);
}

TEST_CASE("ARS-10 matches Random123's known answers", "[ars]") {
    CHECK(ars({0, 0}, {0, 0}, 10) == ArsBlock{0x506401ef8d73ee19ull, 0x0cbe9c0d13c2dbe4ull});
    CHECK(ars({0x85a308d3243f6a88ull, 0x0370734413198a2eull}, {0x299f31d0a4093822ull, 0xec4e6c89082efa98ull}, 10) ==
          ArsBlock{0x8357ad74a516e7d6ull, 0x8763fff35b59b3ecull});
}

TEST_CASE("ARS with fewer rounds is a prefix of the same rounds", "[ars]") {
    // ARS-1 is the counter plus the key, then one aesenclast: checked by hand from the round.
    const ArsBlock counter{0x0123456789abcdefull, 0xfedcba9876543210ull};
    const ArsBlock key{42, 7};
    const ArsBlock one = ars(counter, key, 1);
    const ArsBlock expected = seqembed::detail::aes::round(
        {counter[0] ^ key[0], counter[1] ^ key[1]},
        {key[0] + seqembed::detail::ars_weyl_low, key[1] + seqembed::detail::ars_weyl_high}, true);
    CHECK(one == expected);
    CHECK(ars(counter, key, 5) != ars(counter, key, 4));
}

#if defined(SEQEMBED_TEST_AESNI)
namespace {

__attribute__((target("aes,sse2"))) ArsBlock aesni_round(const ArsBlock& state, const ArsBlock& key, bool last) {
    const __m128i s = _mm_set_epi64x(static_cast<long long>(state[1]), static_cast<long long>(state[0]));
    const __m128i k = _mm_set_epi64x(static_cast<long long>(key[1]), static_cast<long long>(key[0]));
    const __m128i r = last ? _mm_aesenclast_si128(s, k) : _mm_aesenc_si128(s, k);
    alignas(16) std::uint64_t out[2];
    _mm_store_si128(reinterpret_cast<__m128i*>(out), r);
    return {out[0], out[1]};
}

}  // namespace

TEST_CASE("the AES round is the aesenc and aesenclast instructions'", "[ars]") {
    if (!__builtin_cpu_supports("aes")) {
        WARN("this CPU has no AES-NI: the AES round against aesenc not tested");
        return;
    }
    std::uint64_t x = 0x9E3779B97F4A7C15ull;
    const auto next = [&x] {  // splitmix64
        std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    int mismatches = 0;
    for (int trial = 0; trial < 4096; ++trial) {
        const ArsBlock state{next(), next()};
        const ArsBlock key{next(), next()};
        for (const bool last : {false, true})
            if (seqembed::detail::aes::round(state, key, last) != aesni_round(state, key, last)) ++mismatches;
    }
    CHECK(mismatches == 0);
}
#endif

TEST_CASE("the dropout mask's reference word keeps each element with probability 1 - round(p x 65536) / 65536", "[ars]") {
    // 2^20 elements at p = 0.1 (threshold 6554): the kept fraction within five standard
    // deviations (0.0015) of 1 - 6554 / 65536, and the extremes exact.
    const auto kept_word = seqembed::detail::reference_kept_word;
    const std::uint32_t threshold = 6554;
    std::uint64_t kept = 0;
    const std::uint64_t words = (std::uint64_t{1} << 20) / 64;
    for (std::uint64_t w = 0; w < words; ++w)
        kept += std::bitset<64>(kept_word({7, 3, threshold}, w)).count();
    const double fraction = static_cast<double>(kept) / static_cast<double>(words * 64);
    CHECK(std::abs(fraction - (1.0 - threshold / 65536.0)) < 0.0015);
    CHECK(kept_word({7, 3, 0}, 5) == ~std::uint64_t{0});
    CHECK(kept_word({7, 3, 65536}, 5) == 0);
    // Another call or seed gives another mask.
    CHECK(kept_word({7, 4, threshold}, 5) != kept_word({7, 3, threshold}, 5));
    CHECK(kept_word({8, 3, threshold}, 5) != kept_word({7, 3, threshold}, 5));
}
