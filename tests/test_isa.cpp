// The one dispatch point: ISA names, support, forcing by call and by SEQEMBED_ISA, and every
// backend's kernels giving the scalar backend's bits.
#include <seqembed/seqembed.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bit_equal.hpp"
#include "catch.hpp"
#include "isa_support.hpp"
#include "token_heads.hpp"

using seqembed::Index;
using seqembed::Isa;
using seqembed::RowMatrix;

TEST_CASE("ISA names round-trip and unknown names are refused by name", "[isa]") {
    REQUIRE(std::vector<Isa>(seqembed::all_isas.begin(), seqembed::all_isas.end()) ==
            std::vector<Isa>{Isa::scalar, Isa::avx2, Isa::avx512, Isa::avx512_bf16, Isa::neon});
    for (const Isa isa : seqembed::all_isas)
        REQUIRE(seqembed::isa_from_name(seqembed::isa_name(isa)) == isa);
    try {
        (void)seqembed::isa_from_name("avx3");
        FAIL("no error");
    } catch (const seqembed::value_error& e) {
        REQUIRE(std::string(e.what()) == "seqembed: ISA 'avx3' is not one of scalar, avx2, avx512, avx512bf16, neon");
    }
    REQUIRE_THROWS_AS(seqembed::isa_from_name("AVX2"), seqembed::value_error);
}

TEST_CASE("The scalar ISA always runs and the best one is supported", "[isa]") {
    REQUIRE(seqembed::isa_supported(Isa::scalar));
    REQUIRE(seqembed::isa_supported(seqembed::best_isa()));
    REQUIRE(seqembed::isa_supported(seqembed::active_isa()));
#if defined(__x86_64__)
    REQUIRE_FALSE(seqembed::isa_supported(Isa::neon));
#elif defined(__aarch64__)
    REQUIRE(seqembed::isa_supported(Isa::neon));
    REQUIRE_FALSE(seqembed::isa_supported(Isa::avx2));
    REQUIRE_FALSE(seqembed::isa_supported(Isa::avx512));
    REQUIRE_FALSE(seqembed::isa_supported(Isa::avx512_bf16));
#endif
}

TEST_CASE("set_isa forces an ISA and refuses one the host cannot run, keeping the one in force",
          "[isa]") {
    const IsaRestore restore;
    for (const Isa isa : seqembed::all_isas) {
        CAPTURE(seqembed::isa_name(isa));
        if (seqembed::isa_supported(isa)) {
            seqembed::set_isa(isa);
            REQUIRE(seqembed::active_isa() == isa);
        } else {
            seqembed::set_isa(Isa::scalar);
            try {
                seqembed::set_isa(isa);
                FAIL("no error");
            } catch (const seqembed::value_error& e) {
                REQUIRE(std::string(e.what()).find(seqembed::isa_name(isa)) != std::string::npos);
            }
            REQUIRE(seqembed::active_isa() == Isa::scalar);
        }
    }
}

#if defined(__unix__)
TEST_CASE("SEQEMBED_ISA names the default ISA, and a bad or unrunnable one is an error", "[isa]") {
    const char* saved = std::getenv("SEQEMBED_ISA");
    const std::string kept = saved == nullptr ? "" : saved;
    const auto restore = [&] {
        if (saved == nullptr) {
            unsetenv("SEQEMBED_ISA");
        } else {
            setenv("SEQEMBED_ISA", kept.c_str(), 1);
        }
    };
    unsetenv("SEQEMBED_ISA");
    REQUIRE(seqembed::detail::isa_from_environment() == seqembed::best_isa());
    setenv("SEQEMBED_ISA", "", 1);
    REQUIRE(seqembed::detail::isa_from_environment() == seqembed::best_isa());
    setenv("SEQEMBED_ISA", "scalar", 1);
    REQUIRE(seqembed::detail::isa_from_environment() == Isa::scalar);
    setenv("SEQEMBED_ISA", "sse9", 1);
    REQUIRE_THROWS_AS(seqembed::detail::isa_from_environment(), seqembed::value_error);
    for (const Isa isa : seqembed::all_isas) {
        if (seqembed::isa_supported(isa)) continue;
        setenv("SEQEMBED_ISA", seqembed::isa_name(isa), 1);
        try {
            (void)seqembed::detail::isa_from_environment();
            FAIL("no error");
        } catch (const seqembed::value_error& e) {
            REQUIRE(std::string(e.what()) == std::string("seqembed: SEQEMBED_ISA=") + seqembed::isa_name(isa) +
                                                 " names an ISA that this build or CPU cannot run");
        }
    }
    restore();
}
#endif

TEST_CASE("Every ISA's dropout mask words are the scalar draw's", "[isa][dropout]") {
    using seqembed::detail::DropoutKey;
    // Thresholds from everything kept to nothing kept; words from 0, across block 2^32 (word
    // 2^29) and near the top of the element range.
    const std::uint32_t thresholds[] = {0, 1, 256, 6554, 32768, 65535, 65536};
    const std::uint64_t firsts[] = {0, 13, (std::uint64_t{1} << 29) - 3, (std::uint64_t{1} << 58) - 20};
    for (const std::uint32_t threshold : thresholds) {
        for (const std::uint64_t first : firsts) {
            CAPTURE(threshold, first);
            const DropoutKey key{0x0123456789ABCDEFu, 0xFEDCBA98u + first, threshold};
            std::uint64_t expected[17];
            {
                const IsaRestore restore;
                seqembed::set_isa(Isa::scalar);
                seqembed::detail::draw_mask(key, first, 17, expected);
            }
            for_each_isa([&](Isa) {
                std::uint64_t drawn[17];
                seqembed::detail::draw_mask(key, first, 17, drawn);
                REQUIRE(std::memcmp(drawn, expected, sizeof drawn) == 0);
            });
        }
    }
}

TEST_CASE("Every ISA's exact sinusoidal table has the scalar table's bits", "[isa][sinusoidal]") {
    const IsaRestore restore;
    for (const auto& preset : {seqembed::SinusoidalOptions::paper(), seqembed::SinusoidalOptions::tensor2tensor()}) {
        auto options = preset;
        options.max_positions = 700;
        options.offset = 999'300;  // positions up to 10^6, where the reduction matters
        seqembed::set_isa(Isa::scalar);
        const seqembed::SinusoidalPositionalEncoding<float> float_reference(131, options);
        const seqembed::SinusoidalPositionalEncoding<double> double_reference(130, options);
        for_each_isa([&](Isa) {
            const seqembed::SinusoidalPositionalEncoding<float> table(131, options);
            const seqembed::SinusoidalPositionalEncoding<double> doubles(130, options);
            REQUIRE(bit_equal<float>(table.table(), float_reference.table()));
            REQUIRE(bit_equal<double>(doubles.table(), double_reference.table()));
            if (options.beyond == seqembed::BeyondTable::compute)  // rows past the table: the same block
                REQUIRE(bit_equal<float>(table.forward(700, 3), float_reference.forward(700, 3)));
        });
    }
}

namespace {

/// Turns the heads by the scalar backend: the ISA in force while it runs is the scalar one.
template <typename Table, typename Activation>
void rotate_by_scalar(const Table* cos, const Table* sin, Index pairs, bool interleaved,
                      seqembed::detail::TokenHeads<Activation> heads) {
    const IsaRestore restore;
    seqembed::set_isa(Isa::scalar);
    seqembed::detail::rotary_kernel<Table, Activation>()(cos, sin, pairs, interleaved, heads);
}

/// Turns `ours` by the kernel of the ISA in force and `scalar` by the scalar backend, each buffer
/// holding q_heads heads of Q then k_heads heads of K, head_dim values a head.
template <typename Table, typename Activation>
void rotate_with_both(const std::vector<Table>& cos, const std::vector<Table>& sin, Index pairs, bool interleaved,
                      Index q_heads, Index k_heads, Index head_dim, std::vector<Activation>& ours,
                      std::vector<Activation>& scalar) {
    const auto heads_of = [&](std::vector<Activation>& x) {
        seqembed::detail::TokenHeads<Activation> token = q_heads_only(x.data(), q_heads, head_dim);
        token.k = x.data() + q_heads * head_dim;
        token.k_heads = k_heads;
        return token;
    };
    seqembed::detail::rotary_kernel<Table, Activation>()(cos.data(), sin.data(), pairs, interleaved, heads_of(ours));
    rotate_by_scalar<Table, Activation>(cos.data(), sin.data(), pairs, interleaved, heads_of(scalar));
}

/// Rotates random heads (NaN and infinity among them) with the ISA in force and with the
/// scalar backend, both layouts, pair counts around every vector width and past the kernel's
/// 256-pair step, in heads 3 or 37 dimensions longer than the rotated ones, or 32 long: a row
/// shorter than a block is read before the head before it is written when its masked stores
/// reach into the next head, in turn otherwise, and a halves row of fewer than 16 pairs in heads
/// of a whole vector (AVX-512) is that one vector, read to the end of the head; true when every
/// bit agrees.
template <typename Table, typename Activation>
bool rotation_matches_scalar(std::mt19937& generator) {
    std::normal_distribution<double> normal(0.0, 1.0);
    bool same = true;
    for (const Index pairs : {1, 2, 3, 4, 7, 8, 13, 16, 31, 32, 33, 40, 48, 64, 72, 100, 128, 150, 256, 258, 272, 300}) {
        std::vector<Index> pasts{3, 37};
        if (2 * pairs < 32) pasts.push_back(32 - 2 * pairs);
        for (int layout = 0; layout < 2 * static_cast<int>(pasts.size()); ++layout) {
            const bool interleaved = layout % 2 != 0;
            const Index past = pasts[static_cast<std::size_t>(layout / 2)];
            const Index head_dim = 2 * pairs + past;
            const Index heads = 3;
            const Index k_heads = 2;
            std::vector<Table> cos(static_cast<std::size_t>(pairs));
            std::vector<Table> sin(static_cast<std::size_t>(pairs));
            for (std::size_t i = 0; i < cos.size(); ++i) {
                cos[i] = static_cast<Table>(normal(generator));
                sin[i] = static_cast<Table>(normal(generator));
            }
            // Q's heads and K's (fewer, as grouped-query attention has) after them in one buffer.
            std::vector<Activation> ours(static_cast<std::size_t>((heads + k_heads) * head_dim));
            for (Activation& value : ours) value = static_cast<Activation>(100.0 * normal(generator));
            ours[1] = static_cast<Activation>(std::numeric_limits<float>::quiet_NaN());
            ours[2] = static_cast<Activation>(-std::numeric_limits<float>::infinity());
            const std::vector<Activation> before = ours;
            std::vector<Activation> scalar = ours;
            rotate_with_both(cos, sin, pairs, interleaved, heads, k_heads, head_dim, ours, scalar);
            same = same && std::memcmp(ours.data(), scalar.data(), sizeof(Activation) * ours.size()) == 0;
            // Every head turned (K's too), and the dimensions past the rotated ones left alone.
            for (Index h = 0; h < heads + k_heads; ++h) {
                const auto at = [&](Index d) { return static_cast<std::size_t>(h * head_dim + d); };
                same = same && std::memcmp(&ours[at(2 * pairs)], &before[at(2 * pairs)],
                                           static_cast<std::size_t>(past) * sizeof(Activation)) == 0;
                same = same && std::memcmp(&ours[at(0)], &before[at(0)], static_cast<std::size_t>(2 * pairs) * sizeof(Activation)) != 0;
            }
        }
    }
    return same;
}

}  // namespace

TEST_CASE("Every ISA's rotary rotation gives the scalar rotation's bits", "[isa][rotary]") {
    for_each_isa([&](Isa) {
        std::mt19937 generator(5);
        CHECK(rotation_matches_scalar<float, float>(generator));
        CHECK(rotation_matches_scalar<double, float>(generator));
        CHECK(rotation_matches_scalar<Eigen::bfloat16, float>(generator));
        CHECK(rotation_matches_scalar<Eigen::half, float>(generator));
        CHECK(rotation_matches_scalar<double, double>(generator));
        CHECK(rotation_matches_scalar<float, double>(generator));
        CHECK(rotation_matches_scalar<float, Eigen::bfloat16>(generator));
        CHECK(rotation_matches_scalar<Eigen::bfloat16, Eigen::bfloat16>(generator));
        CHECK(rotation_matches_scalar<double, Eigen::bfloat16>(generator));
        CHECK(rotation_matches_scalar<Eigen::half, Eigen::bfloat16>(generator));
    });
}

namespace {

/// Rotates heads of random activations with special values in chosen pairs with the ISA in
/// force and with the scalar backend, for every pair count from 1 to 40 (rows shorter than a
/// block, exactly one, one and a few pairs, on every vector width) and around 64, 128 and 256
/// pairs and past them (the last block overlapping the one before, rows longer than one stretch
/// of factors, and stretches whose rest is shorter than a block), both layouts, whole and partial
/// rotation, 5 query heads and 1 key head; true when every bit agrees. The specials: two NaNs
/// of different signs and payloads in one pair, a NaN and an infinity, two infinities, signed
/// zeros, and subnormal activations.
template <typename Table, typename Activation>
bool edges_match_scalar(std::mt19937& generator) {
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<Index> counts;
    for (Index pairs = 1; pairs <= 40; ++pairs) counts.push_back(pairs);
    for (const Index pairs : {63, 64, 65, 96, 127, 129, 130, 136, 144, 255, 257, 264, 280, 288, 513}) counts.push_back(pairs);
    const auto bits_of = [](std::uint32_t bits) {
        return static_cast<Activation>(Eigen::numext::bit_cast<float>(bits));
    };
    const Activation nan_a = bits_of(0x7FC12000u);
    const Activation nan_b = bits_of(0xFF812000u);
    const Activation infinity = static_cast<Activation>(std::numeric_limits<float>::infinity());
    Activation subnormal = bits_of(0x00050000u);  // in bfloat16 and in float
    if constexpr (std::is_same_v<Activation, double>) subnormal = 3 * std::numeric_limits<double>::denorm_min();
    bool same = true;
    for (const Index pairs : counts) {
        for (int variant = 0; variant < 4; ++variant) {
            const bool interleaved = variant % 2 != 0;
            const Index head_dim = 2 * pairs + (variant >= 2 ? 6 : 0);
            const Index q_heads = 5;
            const Index k_heads = 1;
            std::vector<Table> cos(static_cast<std::size_t>(pairs));
            std::vector<Table> sin(static_cast<std::size_t>(pairs));
            for (std::size_t i = 0; i < cos.size(); ++i) {
                cos[i] = static_cast<Table>(normal(generator));
                sin[i] = static_cast<Table>(normal(generator));
            }
            std::vector<Activation> ours(static_cast<std::size_t>((q_heads + k_heads) * head_dim));
            for (Activation& value : ours) value = static_cast<Activation>(normal(generator));
            // Pair i of head h: values first(h, i) and second(h, i).
            const auto first = [&](Index h, Index i) {
                return static_cast<std::size_t>(h * head_dim + (interleaved ? 2 * i : i));
            };
            const auto second = [&](Index h, Index i) {
                return static_cast<std::size_t>(h * head_dim + (interleaved ? 2 * i + 1 : i + pairs));
            };
            const Activation specials[][2] = {{nan_a, nan_b},       {nan_b, nan_a},         {nan_a, infinity},
                                              {infinity, -infinity}, {Activation(0.0f), -Activation(0.0f)},
                                              {subnormal, -subnormal}};
            for (Index h = 0; h < q_heads + k_heads; ++h) {
                const auto& special = specials[static_cast<std::size_t>(h) % std::size(specials)];
                const Index i = (h * 7 + 3) % pairs;
                ours[first(h, i)] = special[0];
                ours[second(h, i)] = special[1];
                const Index j = (h * 5 + pairs - 1) % pairs;  // a subnormal near the row's end
                if (j != i) ours[first(h, j)] = subnormal;
            }
            std::vector<Activation> scalar = ours;
            rotate_with_both(cos, sin, pairs, interleaved, q_heads, k_heads, head_dim, ours, scalar);
            const bool agree = std::memcmp(ours.data(), scalar.data(), sizeof(Activation) * ours.size()) == 0;
            if (!agree) UNSCOPED_INFO("differs: " << pairs << " pairs, variant " << variant);
            same = same && agree;
        }
    }
    return same;
}

}  // namespace

TEST_CASE("Every ISA gives the scalar rotation's bits at the row's edges and for special values", "[isa][rotary]") {
    for_each_isa([&](Isa) {
        std::mt19937 generator(17);
        CHECK(edges_match_scalar<float, float>(generator));
        CHECK(edges_match_scalar<double, float>(generator));
        CHECK(edges_match_scalar<Eigen::bfloat16, float>(generator));
        CHECK(edges_match_scalar<double, double>(generator));
        CHECK(edges_match_scalar<float, double>(generator));
        CHECK(edges_match_scalar<float, Eigen::bfloat16>(generator));
        CHECK(edges_match_scalar<Eigen::bfloat16, Eigen::bfloat16>(generator));
        CHECK(edges_match_scalar<Eigen::half, Eigen::bfloat16>(generator));
    });
}

TEST_CASE("Every ISA rounds the rotation's bfloat16 results to nearest even", "[isa][rotary]") {
    // Pair i is (x_i, 0) by cos c_i, sin 0, so that it becomes (bfloat16(x_i c_i), 0) with x_i c_i
    // exact in float: ties to even and to odd, values just off a tie, subnormals, values that
    // round up to infinity, and NaN with payloads. 300 pairs cover whole blocks of
    // every vector width and the tails past them, in both layouts.
    std::vector<float> products;
    for (const float tie : {1.0f + 0x1p-8f, 1.0f + 0x1p-7f + 0x1p-8f, -(3.0f + 0x1p-6f + 0x1p-7f)}) {
        products.push_back(tie);
        products.push_back(std::nextafter(tie, 0.0f));
        products.push_back(std::nextafter(tie, 2.0f * tie));
    }
    // bfloat16's subnormals are multiples of 2^-133: ties to even and to odd among them.
    for (const float tie : {2.5f * 0x1p-133f, 3.5f * 0x1p-133f, -5.5f * 0x1p-133f}) {
        products.push_back(tie);
        products.push_back(std::nextafter(tie, 0.0f));
        products.push_back(std::nextafter(tie, 2.0f * tie));
    }
    products.push_back(0x1p-149f);
    products.push_back(-0x1p-133f * 1.5f);
    products.push_back(0x1.FF0000p127f);  // the largest bfloat16 plus half its ulp: a tie up to infinity
    products.push_back(-std::numeric_limits<float>::max());
    products.push_back(-0.0f);
    const std::uint16_t nan_bits[] = {0x7F81, 0xFF81, 0x7FC1, 0xFFFF};
    const Index pairs = 300;
    for (const bool interleaved : {false, true}) {
        for_each_isa([&](Isa isa) {
            std::vector<float> cos(static_cast<std::size_t>(pairs));
            const std::vector<float> sin(static_cast<std::size_t>(pairs), 0.0f);
            std::vector<Eigen::bfloat16> x(static_cast<std::size_t>(2 * pairs), Eigen::bfloat16(0.0f));
            std::vector<Eigen::bfloat16> expected(x.size());
            for (Index i = 0; i < pairs; ++i) {
                const std::size_t k = static_cast<std::size_t>(i);
                const std::size_t x1 = static_cast<std::size_t>(interleaved ? 2 * i : i);
                const std::size_t x2 = static_cast<std::size_t>(interleaved ? 2 * i + 1 : i + pairs);
                if (i % 37 == 36) {  // a NaN among the values
                    x[x1] = Eigen::numext::bit_cast<Eigen::bfloat16>(nan_bits[k % 4]);
                    cos[k] = 1.0f;
                    continue;
                }
                const float product = products[k % products.size()];
                // x_i a power of two (exact in bfloat16), c_i = product / x_i exact in float.
                const float scale = (k % 3 == 0) ? 1.0f : (k % 3 == 1) ? 0x1p-20f : 0x1p10f;
                const bool fits = std::isinf(product) || std::fabs(product / scale) <= std::numeric_limits<float>::max();
                const float x_value = fits && std::fabs(product / scale) >= std::numeric_limits<float>::min() ? scale : 1.0f;
                x[x1] = Eigen::bfloat16(x_value);
                cos[k] = product / x_value;
                expected[x1] = Eigen::bfloat16(x_value * cos[k]);
                expected[x2] = Eigen::bfloat16(0.0f);
            }
            std::vector<Eigen::bfloat16> scalar = x;
            const auto one_head = [&](std::vector<Eigen::bfloat16>& values) {
                return q_heads_only(values.data(), 1, 2 * pairs);
            };
            seqembed::detail::rotary_kernel<float, Eigen::bfloat16>()(cos.data(), sin.data(), pairs, interleaved,
                                                                      one_head(x));
            rotate_by_scalar<float, Eigen::bfloat16>(cos.data(), sin.data(), pairs, interleaved, one_head(scalar));
            INFO("ISA " << seqembed::isa_name(isa) << (interleaved ? ", interleaved" : ", halves"));
            CHECK(std::memcmp(x.data(), scalar.data(), sizeof(Eigen::bfloat16) * x.size()) == 0);
            int wrong = 0;
            for (Index i = 0; i < pairs; ++i) {
                const std::size_t x1 = static_cast<std::size_t>(interleaved ? 2 * i : i);
                const std::size_t x2 = static_cast<std::size_t>(interleaved ? 2 * i + 1 : i + pairs);
                const std::uint16_t bits1 = Eigen::numext::bit_cast<std::uint16_t>(x[x1]);
                const std::uint16_t bits2 = Eigen::numext::bit_cast<std::uint16_t>(x[x2]);
                if (i % 37 == 36) {
                    // NaN times anything is NaN in both values, x1's made quiet, with its sign and
                    // payload: x1 c - 0 s and 0 c + x1 s.
                    const auto quiet = static_cast<std::uint16_t>(nan_bits[static_cast<std::size_t>(i) % 4] | 0x40);
                    wrong += bits1 != quiet || (bits2 & 0x7FFF) != (quiet & 0x7FFF);
                } else {
                    wrong += bits1 != Eigen::numext::bit_cast<std::uint16_t>(expected[x1]) || bits2 != 0;
                }
            }
            CHECK(wrong == 0);
        });
    }
    // The cases hold what they claim: a tie to even stays, a tie to odd goes up, just past a tie
    // goes up, a subnormal tie rounds as a normal one does, and the last tie overflows.
    CHECK(static_cast<float>(Eigen::bfloat16(1.0f + 0x1p-8f)) == 1.0f);
    CHECK(static_cast<float>(Eigen::bfloat16(1.0f + 0x1p-7f + 0x1p-8f)) == 1.0f + 0x1p-6f);
    CHECK(static_cast<float>(Eigen::bfloat16(std::nextafter(1.0f + 0x1p-8f, 2.0f))) == 1.0f + 0x1p-7f);
    CHECK(static_cast<float>(Eigen::bfloat16(2.5f * 0x1p-133f)) == 2.0f * 0x1p-133f);
    CHECK(static_cast<float>(Eigen::bfloat16(-5.5f * 0x1p-133f)) == -6.0f * 0x1p-133f);
    CHECK(std::isinf(static_cast<float>(Eigen::bfloat16(0x1.FF0000p127f))));
}


TEST_CASE("Rotations whose results are subnormal give the scalar bits on every ISA", "[isa][rotary]") {
    // Heads of `pairs` pairs: the last 8 values of each half of the second and third heads tiny
    // activations whose results are subnormal, the rest ordinary (the values and factors the
    // conversion takes); then a row with a tiny sine, whose products with ordinary activations
    // are subnormal too, for which the conversion is refused in every head. Halves on AVX-512:
    // 64 pairs take whole blocks; 40 a last block overlapping the first, which takes the
    // conversion while the last refuses it; 24 one masked block; 16 both halves in one vector;
    // 160 (more blocks than stay in registers) from memory; 10, in heads of 48, one vector
    // holding both halves, written under a mask. Interleaved, blocks of 16 pairs: 64 four in
    // registers, 40 and 24 a last one overlapping, 16 one, 160 from memory, 10 one under masks.
    std::mt19937 generator(13);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (const Index pairs : {Index(64), Index(40), Index(24), Index(16), Index(160), Index(10)}) {
        for (int variant = 0; variant < 4; ++variant) {
            const bool tiny_factor = variant % 2 != 0;
            const bool interleaved = variant >= 2;
            std::vector<float> cos(static_cast<std::size_t>(pairs));
            std::vector<float> sin(static_cast<std::size_t>(pairs));
            for (std::size_t i = 0; i < cos.size(); ++i) {
                cos[i] = normal(generator);
                sin[i] = normal(generator);
            }
            // Pair 5 of a row with a tiny sine: cos = sin = f, 2^-37 (under 2^-33, over the 2^-39
            // that products rounded apart allowed), and x1 = x2 = a, so that x1' = a f - round(a f)
            // is the product's rounding error, about 2^-128: a subnormal only a fused multiply-add
            // gives.
            const float f = 0x1p-37f * (1.0f + 0x1p-22f + 0x1p-23f);
            const float a = 0x1p-62f * (1.0f + 0x1p-7f);
            if (tiny_factor) {  // pair 3 of the first head: ordinary activations, subnormal results
                cos[3] = 0.0f;
                sin[3] = 0x1p-70f;
                cos[5] = f;
                sin[5] = f;
            }
            const auto rotated = static_cast<std::size_t>(2 * pairs);
            const std::size_t head_values = std::max(rotated, std::size_t{48});
            std::vector<Eigen::bfloat16> start(3 * head_values);
            for (std::size_t i = 0; i < start.size(); ++i) {
                const std::size_t d = i % head_values;
                const bool tiny = d < rotated && d % static_cast<std::size_t>(pairs) >= static_cast<std::size_t>(pairs - 8) &&
                                  i / head_values != 0;
                start[i] = Eigen::bfloat16(normal(generator) * (tiny ? 0x1p-128f : 1.0f));
            }
            if (tiny_factor) {  // pair 3: (x[3], x[3 + pairs]) halves, (x[6], x[7]) interleaved
                start[interleaved ? 6 : 3] = Eigen::bfloat16(0x1p-60f);
                start[interleaved ? 7 : 3 + static_cast<std::size_t>(pairs)] = Eigen::bfloat16(-0x1.8p-61f);
                start[interleaved ? 10 : 5] = Eigen::bfloat16(a);
                start[interleaved ? 11 : 5 + static_cast<std::size_t>(pairs)] = Eigen::bfloat16(a);
                const auto error = static_cast<double>(a) * f - static_cast<double>(a * f);
                CHECK(std::fabs(error) < 0x1p-126);  // the case is what it claims: subnormal, not zero
                CHECK(error != 0.0);
            }
            for_each_isa([&](Isa isa) {
                std::vector<Eigen::bfloat16> ours = start;
                std::vector<Eigen::bfloat16> scalar = start;
                seqembed::detail::rotary_kernel<float, Eigen::bfloat16>()(cos.data(), sin.data(), pairs, interleaved,
                                                                          q_heads_only(ours.data(), 3, static_cast<Index>(head_values)));
                rotate_by_scalar<float, Eigen::bfloat16>(
                    cos.data(), sin.data(), pairs, interleaved, q_heads_only(scalar.data(), 3, static_cast<Index>(head_values)));
                INFO("ISA " << seqembed::isa_name(isa) << ", " << pairs << " pairs"
                            << (interleaved ? ", interleaved" : ", halves") << (tiny_factor ? ", a tiny sine" : ""));
                CHECK(std::memcmp(ours.data(), scalar.data(), sizeof(Eigen::bfloat16) * ours.size()) == 0);
                int subnormal = 0;
                for (const Eigen::bfloat16 value : scalar)
                    subnormal += (Eigen::numext::bit_cast<std::uint16_t>(value) & 0x7F80) == 0 &&
                                 (Eigen::numext::bit_cast<std::uint16_t>(value) & 0x7F) != 0;
                CHECK(subnormal > 20);
            });
        }
    }
}
