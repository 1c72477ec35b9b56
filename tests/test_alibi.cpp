// AlibiBias: BLOOM's, MPT's and Falcon's slopes and biases against the fixtures of
// tests/reference/generate_rope_fixtures.py (Hugging Face's float32 steps, and the real slopes from
// mpmath), properties, and bad input.
#include <seqembed/alibi.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "catch.hpp"
#include "fixtures/rope/rope_cases.hpp"

using seqembed::AlibiBias;
using seqembed::AlibiFamily;
using seqembed::AlibiOptions;
using seqembed::IdMatrix;
using seqembed::Index;
using seqembed::RowMatrix;
using seqembed::TablePrecision;

namespace {

AlibiOptions options_of(const char* family, double alibi_bias_max, TablePrecision precision) {
    const std::string name = family;
    AlibiOptions options = name == "mpt"      ? AlibiOptions::mpt(alibi_bias_max)
                           : name == "falcon" ? AlibiOptions::falcon()
                                              : AlibiOptions::bloom();
    options.precision = precision;
    return options;
}

/// |a - b| in units of the last place of b (as a double).
double ulps(double a, double b) {
    if (a == b) return 0.0;
    return std::fabs(a - b) / (std::nextafter(std::fabs(b), std::numeric_limits<double>::infinity()) - std::fabs(b));
}

}  // namespace

TEST_CASE("alibi: BLOOM's and MPT's float32 slopes as Hugging Face computes them, bit for bit") {
    for (const auto& c : seqembed_rope_fixtures::alibi_slopes_cases) {
        INFO(c.family << " heads " << c.heads << " alibi_bias_max " << c.alibi_bias_max);
        const AlibiBias<float> follow(c.heads, options_of(c.family, c.alibi_bias_max, TablePrecision::follow_scalar));
        REQUIRE(follow.slopes().size() == c.heads);
        for (Index h = 0; h < c.heads; ++h) {
            INFO("head " << h);
            CHECK(follow.slopes()[h] == static_cast<float>(c.slopes_f32[h]));
        }
    }
}

TEST_CASE("alibi: exact slopes are the real ones rounded once (mpmath), in double and float") {
    double worst = 0.0;
    for (const auto& c : seqembed_rope_fixtures::alibi_slopes_cases) {
        INFO(c.family << " heads " << c.heads);
        const AlibiOptions options = options_of(c.family, c.alibi_bias_max, TablePrecision::exact);
        const AlibiBias<double> exact64(c.heads, options);
        const AlibiBias<float> exact32(c.heads, options);
        for (Index h = 0; h < c.heads; ++h) {
            INFO("head " << h);
            worst = std::max(worst, ulps(exact64.slopes()[h], c.slopes_exact_f64[h]));
            CHECK(exact64.slopes()[h] == c.slopes_exact_f64[h]);
            // The float slope is the real one rounded to float: the double one rounded again can
            // only differ at a tie, which these powers of two never are.
            CHECK(exact32.slopes()[h] == static_cast<float>(c.slopes_exact_f64[h]));
        }
    }
    CHECK(worst == 0.0);
}

TEST_CASE("alibi: BLOOM's bias for a batch padded on either side, MPT's and Falcon's bfloat16 one, bit for bit") {
    for (const auto& c : seqembed_rope_fixtures::alibi_bias_cases) {
        INFO(c.family << " batch " << c.batch << " seq " << c.seq << " heads " << c.heads);
        IdMatrix ids = IdMatrix::Constant(c.batch, c.seq, 7);
        IdMatrix mask(c.batch, c.seq);
        for (Index k = 0; k < mask.size(); ++k) mask.data()[k] = c.attention_mask[k];
        const auto padding = seqembed::Padding::from_mask(mask);
        const AlibiOptions follow = options_of(c.family, c.alibi_bias_max, TablePrecision::follow_scalar);
        const RowMatrix<float> bias32 = AlibiBias<float>(c.heads, follow).forward(ids, padding);
        const RowMatrix<double> bias64 = AlibiBias<double>(c.heads, follow).forward(ids, padding);
        REQUIRE(bias32.rows() == c.batch * c.heads);
        REQUIRE(bias32.cols() == c.seq);
        for (Index k = 0; k < bias32.size(); ++k) {
            INFO("value " << k);
            CHECK(bias32.data()[k] == static_cast<float>(c.bias_f32[k]));
            // Hugging Face's float32 products, widened (BLOOM's build_alibi_tensor(..., float64)).
            CHECK(bias64.data()[k] == c.bias_f32[k]);
        }
        // Exact: the real slope times the position, rounded once; within half an ulp of the
        // double slope's product.
        const RowMatrix<double> exact = AlibiBias<double>(c.heads, options_of(c.family, c.alibi_bias_max,
                                                                              TablePrecision::exact))
                                            .forward(ids, padding);
        for (Index k = 0; k < exact.size(); ++k) {
            INFO("value " << k);
            CHECK(std::fabs(exact.data()[k] - c.bias_f64[k]) <= 1e-6 * std::max(1.0, std::fabs(c.bias_f64[k])));
        }
    }
}

TEST_CASE("alibi: positions by family and padding side, padded BLOOM keys zero") {
    IdMatrix ids(2, 5);
    ids << 1, 1, 5, 6, 7,  //
        5, 6, 7, 1, 1;
    const auto padding = seqembed::Padding::by_id(1);
    const AlibiBias<double> bloom(3);
    const RowMatrix<double> b = bloom.forward(ids, padding);
    const double expected_left[5] = {0, 0, 0, 1, 2};
    const double expected_right[5] = {0, 1, 2, 0, 0};
    for (Index h = 0; h < 3; ++h)
        for (Index t = 0; t < 5; ++t) {
            CHECK(b(h, t) == bloom.slopes()[h] * expected_left[t]);
            CHECK(b(3 + h, t) == bloom.slopes()[h] * expected_right[t]);
        }
    const AlibiBias<double> mpt(3, AlibiOptions::mpt());
    const RowMatrix<double> m = mpt.forward(ids, padding);
    for (Index row = 0; row < 6; ++row)
        for (Index t = 0; t < 5; ++t) CHECK(m(row, t) == mpt.slopes()[row % 3] * static_cast<double>(t - 4));
    // 8 heads: BLOOM's slopes are 2^-1 .. 2^-8, MPT's (alibi_bias_max 8) the same.
    for (Index h = 0; h < 8; ++h) {
        CHECK(AlibiBias<double>(8).slopes()[h] == std::ldexp(1.0, static_cast<int>(-1 - h)));
        CHECK(AlibiBias<double>(8, AlibiOptions::mpt()).slopes()[h] == std::ldexp(1.0, static_cast<int>(-1 - h)));
    }
}

TEST_CASE("alibi: bad input is refused, and the output is left as it was") {
    CHECK_THROWS_AS(AlibiBias<float>(0), seqembed::value_error);
    CHECK_THROWS_AS(AlibiBias<float>(-3), seqembed::value_error);
    CHECK_THROWS_AS(AlibiBias<float>(Index{1} << 21), seqembed::value_error);
    CHECK_THROWS_AS(AlibiBias<float>(8, AlibiOptions::mpt(0.0)), seqembed::value_error);
    CHECK_THROWS_AS(AlibiBias<float>(8, AlibiOptions::mpt(std::numeric_limits<double>::quiet_NaN())),
                    seqembed::value_error);
    try {
        AlibiBias<float> none(0);
        FAIL("no error for 0 heads");
    } catch (const seqembed::value_error& e) {
        CHECK(std::string(e.what()) == "seqembed: ALiBi heads 0 is outside [1, 1048576]");
    }

    const AlibiBias<float> alibi(4);
    const IdMatrix ids = IdMatrix::Zero(2, 3);
    RowMatrix<float> out = RowMatrix<float>::Constant(8, 4, 5.0f);
    CHECK_THROWS_AS(alibi.forward_into(ids, seqembed::Padding::none(), out), seqembed::shape_error);
    CHECK((out.array() == 5.0f).all());
    const std::vector<std::int64_t> lengths{3};  // one length for two sequences
    RowMatrix<float> right = RowMatrix<float>::Constant(8, 3, 5.0f);
    CHECK_THROWS_AS(alibi.forward_into(ids, seqembed::Padding::right(lengths), right), seqembed::shape_error);
    CHECK((right.array() == 5.0f).all());
    const std::vector<std::int64_t> too_long{3, 4};
    CHECK_THROWS_AS(alibi.forward(ids, seqembed::Padding::right(too_long)), seqembed::value_error);
}
