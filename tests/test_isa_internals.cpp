// The ISAs' own parts, reached in their namespaces, which only the header-only mode declares (the
// rest of the suite calls the kernels compiled once): every ISA's dropout mask words drawn every
// way its CPU runs, AVX-512 BF16's bfloat16 conversion, and the scalar backend's rotation, the
// oracle of the others.
#include <seqembed/detail/engine/kernels.hpp>
#include <seqembed/isa.hpp>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <random>
#include <vector>

#include "catch.hpp"
#include "dropout_reference.hpp"
#include "isa_support.hpp"
#include "token_heads.hpp"

using seqembed::Index;
using seqembed::Isa;

// Whether this build compiles the AVX-512 backends (x86-64 kernels without
// SEQEMBED_NO_AVX512_KERNELS), whose parts some tests below reach by name.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(SEQEMBED_NO_X86_KERNELS) && \
    !defined(SEQEMBED_NO_AVX512_KERNELS)
#define SEQEMBED_TEST_AVX512_KERNELS 1
#else
#define SEQEMBED_TEST_AVX512_KERNELS 0
#endif

namespace {

/// Each of `draws`, the ways an ISA's MaskWords draws (runs: whether the CPU runs one; words: its
/// mask_words), against the documentation on this CPU: words from `first` on, for thresholds 0
/// (everything kept), 1, p = 0.1, 0.5, 65535 and 65536 (nothing kept); a way the CPU cannot run
/// is reported by name.
void check_mask_words(const char* isa, bool (*runs)(seqembed::detail::MaskDraw) noexcept,
                      void (*words)(const seqembed::detail::DropoutKey&, std::uint64_t, Index, std::uint64_t*,
                                    seqembed::detail::MaskDraw) noexcept,
                      std::initializer_list<seqembed::detail::MaskDraw> draws) {
    using seqembed::detail::DropoutKey;
    using seqembed::detail::MaskDraw;
    for (const MaskDraw draw : draws) {
        if (!runs(draw)) {
            WARN(isa << "'s " << seqembed::detail::mask_draw_name(draw) << " draw cannot run here: not tested");
            continue;
        }
        for (const std::uint32_t threshold : {0u, 1u, 6554u, 32768u, 65535u, 65536u})
            for (const std::uint64_t first : {std::uint64_t{0}, (std::uint64_t{1} << 29) - 7, (std::uint64_t{1} << 58) - 9}) {
                const DropoutKey key{0x0123456789ABCDEFull + first, 0xFEDCBA9876543210ull - threshold, threshold};
                std::uint64_t drawn[9];
                words(key, first, 9, drawn, draw);
                for (std::uint64_t w = first; w < first + 9; ++w) {
                    std::uint64_t expected = 0;
                    for (std::uint64_t i = 0; i < 64; ++i)
                        if (documented_keeps(key.seed, key.call, 64 * w + i, threshold)) expected |= std::uint64_t{1} << i;
                    if (drawn[w - first] != expected) {
                        CAPTURE(isa, seqembed::detail::mask_draw_name(draw), threshold, w);
                        REQUIRE(drawn[w - first] == expected);
                    }
                }
            }
    }
}

}  // namespace

TEST_CASE("Every ISA's mask words, drawn every way its CPU runs, are the documented ones", "[dropout][isa]") {
    // The software round, AES-NI or Arm's AES a block at a time, and VAES two or four blocks a
    // vector; words from 0, across block 2^32 (word 2^29) and at the top of the element range.
    using seqembed::detail::MaskDraw;
    namespace scalar_isa = seqembed::detail::scalar_isa;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(SEQEMBED_NO_X86_KERNELS)
    namespace avx2_isa = seqembed::detail::avx2_isa;
#endif
#if SEQEMBED_TEST_AVX512_KERNELS
    namespace avx512_isa = seqembed::detail::avx512_isa;
#endif
#if defined(__aarch64__) && defined(__ARM_NEON) && !defined(SEQEMBED_NO_NEON_KERNELS)
    namespace neon_isa = seqembed::detail::neon_isa;
#endif
    check_mask_words("scalar", &scalar_isa::MaskWords::runs, &scalar_isa::mask_words, {MaskDraw::software});
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(SEQEMBED_NO_X86_KERNELS)
    if (seqembed::isa_supported(seqembed::Isa::avx2)) {
        check_mask_words("avx2", &avx2_isa::MaskWords::runs, &avx2_isa::mask_words,
                         {MaskDraw::software, MaskDraw::aes128, MaskDraw::aes256});
    } else {
        WARN("this CPU cannot run avx2: its mask words not tested");
    }
#endif
#if SEQEMBED_TEST_AVX512_KERNELS
    if (seqembed::isa_supported(seqembed::Isa::avx512)) {
        check_mask_words("avx512", &avx512_isa::MaskWords::runs, &avx512_isa::mask_words,
                         {MaskDraw::software, MaskDraw::aes128, MaskDraw::aes512});
    } else {
        WARN("this CPU cannot run avx512: its mask words not tested");
    }
#elif defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(SEQEMBED_NO_X86_KERNELS)
    WARN("this build leaves out avx512's kernels (SEQEMBED_NO_AVX512_KERNELS): its mask words not tested");
#endif
#if defined(__aarch64__) && defined(__ARM_NEON) && !defined(SEQEMBED_NO_NEON_KERNELS)
    check_mask_words("neon", &neon_isa::MaskWords::runs, &neon_isa::mask_words, {MaskDraw::software, MaskDraw::aes128});
#endif
    // And the entry point of the ISA in force, several words at a time.
    const seqembed::detail::DropoutKey key{5, 9, 6554};
    for_each_isa([&](seqembed::Isa) {
        std::vector<std::uint64_t> words(37);
        seqembed::detail::draw_mask(key, 1000, static_cast<Index>(words.size()), words.data());
        for (std::size_t k = 0; k < words.size(); ++k)
            for (std::uint64_t i = 0; i < 64; ++i) {
                const bool kept = ((words[k] >> i) & 1u) != 0;
                REQUIRE(kept == documented_keeps(5, 9, 64 * (1000 + k) + i, 6554));
            }
    });
}

#if SEQEMBED_TEST_AVX512_KERNELS
namespace {

/// 32 floats split into even and odd lanes, stored by AVX-512 BF16's conversion and by AVX-512's
/// narrow_split; and, where `first` is given, their first `used` by the conversion into it.
__attribute__((target("avx512f,avx512bw,avx512bf16"))) void store_both_ways(const float* values,
                                                                             Eigen::bfloat16* converted,
                                                                             Eigen::bfloat16* rounded, int used = 0,
                                                                             Eigen::bfloat16* first = nullptr) {
    __m512 even;
    __m512 odd;
    seqembed::detail::avx512_isa::Lanes<float>::load_split(values, even, odd);
    seqembed::detail::avx512_bf16_isa::Lanes<float>::narrow_split_converted(converted, even, odd);
    seqembed::detail::avx512_isa::Lanes<float>::narrow_split(rounded, even, odd);
    if (first != nullptr) seqembed::detail::avx512_bf16_isa::Lanes<float>::narrow_split_converted_first(first, used, even, odd);
}

}  // namespace

TEST_CASE("AVX-512 BF16's conversion gives narrow_split's bits but for subnormals", "[isa][rotary]") {
    if (!seqembed::isa_supported(Isa::avx512_bf16)) {
        WARN("this CPU cannot run avx512bf16: its conversion not tested");
        return;
    }
    using Converting = seqembed::detail::avx512_bf16_isa::Lanes<float>;
    // 32 values a store: ties to even and to odd, just off them, overflow to infinity, NaN with
    // payloads, signed zeros, and (last) the subnormals that the conversion reads as zero.
    std::vector<std::uint32_t> bits = {0x3F808000u, 0x3F818000u, 0x3F808001u, 0x3F817FFFu, 0xC0418000u, 0x7F7F8000u,
                                       0x7F7F7FFFu, 0xFF7FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC10000u, 0xFF810000u,
                                       0x7FFF0000u, 0x00000000u, 0x80000000u, 0x00800000u};
    std::mt19937 generator(11);
    while (bits.size() < 64) bits.push_back(static_cast<std::uint32_t>(generator()) & 0xBFFFFFFFu);  // finite
    std::vector<float> values(bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i) values[i] = Eigen::numext::bit_cast<float>(bits[i]);
    Eigen::bfloat16 converted[32];
    Eigen::bfloat16 rounded[32];
    for (std::size_t at = 0; at < values.size(); at += 32) {
        store_both_ways(values.data() + at, converted, rounded);
        for (std::size_t k = 0; k < 32; ++k) {
            CAPTURE(bits[at + k]);
            CHECK(Eigen::numext::bit_cast<std::uint16_t>(converted[k]) == Eigen::numext::bit_cast<std::uint16_t>(rounded[k]));
            CHECK(Eigen::numext::bit_cast<std::uint16_t>(rounded[k]) ==
                  Eigen::numext::bit_cast<std::uint16_t>(seqembed::detail::scalar_isa::Lanes<float>::nearest_bfloat16(values[at + k])));
        }
    }
    // A subnormal float is read as zero: why the kernel keeps it from the conversion.
    const std::vector<float> subnormals(32, 0x1.8p-130f);
    store_both_ways(subnormals.data(), converted, rounded);
    CHECK(Eigen::numext::bit_cast<std::uint16_t>(converted[0]) == 0);
    CHECK(Eigen::numext::bit_cast<std::uint16_t>(rounded[0]) == 0x000C);
    CHECK(Eigen::numext::bit_cast<std::uint16_t>(seqembed::detail::scalar_isa::Lanes<float>::nearest_bfloat16(0x1.8p-130f)) == 0x000C);
    // The guard: every value 2^-63 or more in magnitude (infinity and NaN too), zero not.
    std::vector<Eigen::bfloat16> block(32, Eigen::bfloat16(0x1p-63f));
    block[5] = Eigen::bfloat16(-std::numeric_limits<float>::infinity());
    block[6] = Eigen::numext::bit_cast<Eigen::bfloat16>(std::uint16_t{0xFFC1});
    CHECK(Converting::ordinary_bfloat16(block.data(), block.data()));
    for (const float small : {0.0f, -0.0f, 0x1.FEp-64f, 0x1p-130f}) {
        std::vector<Eigen::bfloat16> other = block;
        other[31] = Eigen::bfloat16(small);
        CHECK_FALSE(Converting::ordinary_bfloat16(block.data(), other.data()));
        CHECK_FALSE(Converting::ordinary_bfloat16(other.data(), block.data()));
        // A block of the first `used` values asks about those alone.
        CHECK(Converting::ordinary_bfloat16_first(block.data(), other.data(), 31));
        CHECK_FALSE(Converting::ordinary_bfloat16_first(other.data(), block.data(), 32));
        other[0] = Eigen::bfloat16(small);
        CHECK_FALSE(Converting::ordinary_bfloat16_first(block.data(), other.data(), 1));
    }
    // The first `used` values converted, nothing after them written.
    for (const int used : {1, 2, 7, 16, 31}) {
        const Eigen::bfloat16 untouched = Eigen::numext::bit_cast<Eigen::bfloat16>(std::uint16_t{0x5A5A});
        std::vector<Eigen::bfloat16> written(32, untouched);
        store_both_ways(values.data() + 32, converted, rounded, used, written.data());
        for (int k = 0; k < 32; ++k) {
            CAPTURE(used, k);
            CHECK(Eigen::numext::bit_cast<std::uint16_t>(written[static_cast<std::size_t>(k)]) ==
                  Eigen::numext::bit_cast<std::uint16_t>(k < used ? converted[k] : untouched));
        }
    }
}
#elif defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(SEQEMBED_NO_X86_KERNELS)
TEST_CASE("AVX-512 BF16's conversion gives narrow_split's bits but for subnormals", "[isa][rotary]") {
    WARN("this build leaves out avx512bf16's kernels (SEQEMBED_NO_AVX512_KERNELS): its conversion not tested");
}
#endif

TEST_CASE("The rotation's scalar backend: products rounded before the sum, bfloat16 fused and rounded once",
          "[isa][rotary]") {
    // Pair (3, 5) by cos 0.5, sin 0.25 (exact): 1.5 - 1.25 = 0.25 and 2.5 + 0.75 = 3.25, in both
    // layouts. bfloat16 (1 + 2^-7, 0) by cos 1 + 2^-8 + 2^-9: the float product
    // 1 + 2^-7 + 2^-8 + 2^-9 + 2^-15 + 2^-16 lies past the midpoint 1 + 2^-7 + 2^-8, so it rounds up to
    // 1 + 2^-6; and sin 0 keeps the partner at 0.
    const float cos[1] = {0.5f};
    const float sin[1] = {0.25f};
    float halves[2] = {3.0f, 5.0f};
    seqembed::detail::scalar_isa::Backend::rotate<float, float>(cos, sin, 1, false, q_heads_only(halves, 1, 2));
    CHECK(halves[0] == 0.25f);
    CHECK(halves[1] == 3.25f);
    float pair[2] = {3.0f, 5.0f};
    seqembed::detail::scalar_isa::Backend::rotate<float, float>(cos, sin, 1, true, q_heads_only(pair, 1, 2));
    CHECK(pair[0] == 0.25f);
    CHECK(pair[1] == 3.25f);
    const float cosine[1] = {1.0f + 0x1p-8f + 0x1p-9f};
    const float zero[1] = {0.0f};
    Eigen::bfloat16 x[2] = {Eigen::bfloat16(1.0f + 0x1p-7f), Eigen::bfloat16(0.0f)};
    seqembed::detail::scalar_isa::Backend::rotate<float, Eigen::bfloat16>(cosine, zero, 1, false,
                                                                        q_heads_only(x, 1, 2));
    CHECK(static_cast<float>(x[0]) == 1.0f + 0x1p-6f);
    CHECK(static_cast<float>(x[1]) == 0.0f);
    // bfloat16: x1 c + x2 (-s) with the cosine's product fused into the sum. For this pair the
    // products rounded apart give 0x1.f8p-11; fused, 0x1.fap-11, the nearer to the exact
    // 0.000963237136602 (1.9e-6 against 1.9e-6 + 6e-8).
    const float c2[1] = {0x1.33ee1p-1f};
    const float s2[1] = {0x1.317d2p-1f};
    Eigen::bfloat16 y[2] = {Eigen::bfloat16(0x1.2ep+0f), Eigen::bfloat16(0x1.3p+0f)};
    seqembed::detail::scalar_isa::Backend::rotate<float, Eigen::bfloat16>(c2, s2, 1, false, q_heads_only(y, 1, 2));
    CHECK(static_cast<float>(y[0]) == 0x1.fap-11f);
    const float x1s = 0x1.2ep+0f * s2[0];
    CHECK(Eigen::numext::bit_cast<std::uint16_t>(y[1]) ==
          Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(std::fma(0x1.3p+0f, c2[0], x1s))));
}
