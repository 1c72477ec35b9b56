// Each framework preset against values computed from that framework's own formula
// (tests/reference/generate_golden.py transliterates tensor2tensor, fairseq, Marian, Hugging Face
// Marian and CTranslate2).
#include <seqembed/sinusoidal.hpp>

#include <string>

#include "catch.hpp"
#include "golden_support.hpp"

using seqembed::Index;
using seqembed::RowMatrix;
using seqembed::SinusoidalOptions;
using seqembed::SinusoidalPositionalEncoding;

namespace {

struct PresetCase {
    const char* preset;
    SinusoidalOptions options;
    const golden::Table& fixture;
};

/// The preset's rows for the fixture's position values, row t encoding offset + t.
template <typename Scalar>
RowMatrix<Scalar> preset_rows(const PresetCase& c) {
    const SinusoidalPositionalEncoding<Scalar> encoding(c.fixture.cols, c.options);
    const std::int64_t first_row = c.fixture.positions[0] - c.options.offset;
    REQUIRE(first_row >= 0);
    for (long r = 1; r < c.fixture.rows; ++r)
        REQUIRE(c.fixture.positions[r] == c.fixture.positions[0] + r);
    return encoding.forward(first_row, c.fixture.rows);
}

SinusoidalOptions starting_at(SinusoidalOptions options, std::int64_t offset) {
    options.offset = offset;
    return options;
}

SinusoidalOptions in_scalar(SinusoidalOptions options) {
    options.precision = seqembed::TablePrecision::follow_scalar;
    return options;
}

}  // namespace

TEST_CASE("Presets match their framework's float64 formula", "[presets]") {
    using namespace seqembed_golden;
    const PresetCase cases[] = {
        {"tensor2tensor", SinusoidalOptions::tensor2tensor(), t2t_d8_f64},
        {"tensor2tensor, odd width", SinusoidalOptions::tensor2tensor(), t2t_d7_f64},
        {"tensor2tensor, start_index 5", starting_at(SinusoidalOptions::tensor2tensor(), 5),
         t2t_start5_d8_f64},
        {"fairseq", SinusoidalOptions::fairseq(1), fairseq_d8_f64},
        {"fairseq, odd width", SinusoidalOptions::fairseq(1), fairseq_d7_f64},
        {"hf_marian", SinusoidalOptions::hf_marian(), hf_marian_d8_f64},
        {"hf_marian, odd width", SinusoidalOptions::hf_marian(), hf_marian_d7_f64},
        {"marian", SinusoidalOptions::marian(), marian_d8_f64},
        {"ctranslate2", SinusoidalOptions::ctranslate2(), ctranslate2_d8_f64},
    };
    for (const PresetCase& c : cases) {
        INFO(c.preset << " vs " << c.fixture.name);
        const RowMatrix<double> expected = golden::matrix<double>(c.fixture);
        // The frameworks' own float64 arithmetic is a few ulp from exact at these positions.
        REQUIRE((preset_rows<double>(c) - expected).cwiseAbs().maxCoeff() <= 1e-14);
        // A float table is within 1 ulp of exact, so within 6e-8 of the float64 formula.
        REQUIRE((preset_rows<float>(c).cast<double>() - expected).cwiseAbs().maxCoeff() <= 6e-8);
    }
}

TEST_CASE("Presets in follow_scalar precision match their framework's float32 arithmetic",
          "[presets]") {
    using namespace seqembed_golden;
    const PresetCase cases[] = {
        {"tensor2tensor", in_scalar(SinusoidalOptions::tensor2tensor()), t2t_d8_f32},
        {"fairseq", in_scalar(SinusoidalOptions::fairseq(1)), fairseq_d8_f32},
        {"marian", in_scalar(SinusoidalOptions::marian()), marian_d8_f32},
        {"ctranslate2", in_scalar(SinusoidalOptions::ctranslate2()), ctranslate2_d8_f32},
    };
    for (const PresetCase& c : cases) {
        INFO(c.preset << " vs " << c.fixture.name);
        const RowMatrix<float> expected = golden::matrix<float>(c.fixture);
        REQUIRE((preset_rows<float>(c) - expected).cwiseAbs().maxCoeff() <= 1e-6f);
    }
}

TEST_CASE("Presets in follow_scalar precision compute the log-space step as their framework does", "[presets]") {
    // At these widths a float32 step (log(10000) rounded, then divided: Marian's and
    // CTranslate2's C++, seed 004's torch.log) differs from the double one rounded once; the
    // frameworks' formulas with correctly rounded functions give the fixtures bit for bit.
    using namespace seqembed_golden;
    SinusoidalOptions seed004 = SinusoidalOptions::paper();
    seed004.log_step = seqembed::LogStep::in_scalar;
    const PresetCase cases[] = {
        {"marian", in_scalar(SinusoidalOptions::marian()), marian_d448_f32},
        {"ctranslate2", in_scalar(SinusoidalOptions::ctranslate2()), ctranslate2_d448_f32},
        {"paper, seed 004's step", in_scalar(seed004), seed004_d576_f32},
    };
    for (const PresetCase& c : cases) {
        INFO(c.preset << " vs " << c.fixture.name);
        const RowMatrix<float> expected = golden::matrix<float>(c.fixture);
        CHECK((preset_rows<float>(c) - expected).cwiseAbs().maxCoeff() == 0.0f);
        // The other rounding of the step misses them: the fixtures tell the two apart.
        PresetCase other = c;
        other.options.log_step = seqembed::LogStep::rounded_from_double;
        CHECK((preset_rows<float>(other) - expected).cwiseAbs().maxCoeff() > 0.0f);
    }
    CHECK(SinusoidalOptions::tensor2tensor().log_step == seqembed::LogStep::in_scalar);
    CHECK(SinusoidalOptions::fairseq().log_step == seqembed::LogStep::rounded_from_double);
    CHECK(SinusoidalOptions::paper().log_step == seqembed::LogStep::rounded_from_double);
}

TEST_CASE("Presets say what each framework does", "[presets]") {
    using seqembed::BeyondTable;
    using seqembed::FrequencyFamily;
    using seqembed::OddWidth;
    using seqembed::SinCosLayout;
    const SinusoidalOptions paper = SinusoidalOptions::paper();
    CHECK(paper.layout == SinCosLayout::interleaved);
    CHECK(paper.family == FrequencyFamily::paper);
    CHECK(paper.offset == 0);
    CHECK(paper.max_positions == 5000);
    CHECK(paper.beyond == BeyondTable::throw_error);

    CHECK(SinusoidalOptions::fairseq(1).offset == 2);
    CHECK(SinusoidalOptions::fairseq(0).offset == 1);
    CHECK(SinusoidalOptions::ctranslate2().offset == 1);
    CHECK(SinusoidalOptions::tensor2tensor().odd_width == OddWidth::zero_column);
    CHECK(SinusoidalOptions::hf_marian().odd_width == OddWidth::extra_sine);
    CHECK(SinusoidalOptions::hf_marian().family == FrequencyFamily::paper);
    CHECK(SinusoidalOptions::marian().family == FrequencyFamily::tensor2tensor);
    for (const auto& options : {SinusoidalOptions::tensor2tensor(), SinusoidalOptions::fairseq(),
                                SinusoidalOptions::marian(), SinusoidalOptions::ctranslate2()}) {
        CHECK(options.layout == SinCosLayout::concatenated);
        CHECK(options.beyond == BeyondTable::compute);
    }
}

TEST_CASE("The tensor2tensor family guards tiny widths as tensor2tensor does", "[presets]") {
    // num_timescales - 1 = 0 for d = 2 and 3: tensor2tensor divides by max(., 1) instead.
    const SinusoidalPositionalEncoding<double> two(2, SinusoidalOptions::tensor2tensor());
    REQUIRE(two.table().allFinite());
    REQUIRE_THAT(two.table()(3, 0), WithinAbs(std::sin(3.0), 1e-15));
    REQUIRE_THAT(two.table()(3, 1), WithinAbs(std::cos(3.0), 1e-15));
}
