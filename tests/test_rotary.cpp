// RotaryEmbedding: Hugging Face's float32 inv_freq and tables bit for bit (follow mode), the exact
// tables against mpmath (tests/fixtures/rope/rope_cases.hpp, from
// tests/reference/generate_rope_fixtures.py), the rotation of Q and K against torch's
// apply_rotary_pos_emb, positions from padded batches, the properties of a rotation, and bad
// inputs.
#include <seqembed/rotary.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bit_equal.hpp"
#include "catch.hpp"
#include "fixtures/rope/rope_cases.hpp"
#include "isa_support.hpp"
#include "test_support.hpp"

using seqembed::BeyondTable;
using seqembed::Index;
using seqembed::Padding;
using seqembed::RotaryEmbedding;
using seqembed::RotaryLayout;
using seqembed::RotaryOptions;
using seqembed::RotaryScaling;
using seqembed::RowMatrix;
using seqembed::StepOffsets;
using seqembed::TablePrecision;

namespace fx = seqembed_rope_fixtures;
using test_support::huge_allocations_fail_softly;

namespace {

using Positions = Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>;

/// The numbers of the JSON list `"key": [...]` in a fixture's config_json (longrope's factors).
std::vector<double> json_list(const std::string& json, const std::string& key) {
    const std::size_t at = json.find("\"" + key + "\": [");
    REQUIRE(at != std::string::npos);
    std::vector<double> values;
    const char* cursor = json.c_str() + json.find('[', at) + 1;
    while (*cursor != ']') {
        char* end = nullptr;
        values.push_back(std::strtod(cursor, &end));
        REQUIRE(end != cursor);
        cursor = end;
        while (*cursor == ',' || *cursor == ' ') ++cursor;
    }
    return values;
}

/// The options of a fixture case, written from its config_json by hand (the io tests read the
/// same configs through seqembed::io::read_rotary_config and compare).
RotaryOptions options_for(const fx::FrequencyCase& c) {
    const std::string name = c.name;
    RotaryOptions o;
    o.head_dim = c.head_dim;
    o.rotary_dim = c.rotary_dim;
    o.sequence_length = c.sequence_length;
    o.max_positions = 16;
    o.beyond = BeyondTable::compute;
    const auto starts = [&](const char* prefix) { return name.rfind(prefix, 0) == 0; };
    if (starts("default_theta500000")) o.base = 500000;
    if (starts("linear_factor4")) {
        o.scaling = RotaryScaling::linear;
        o.factor = 4;
    } else if (starts("llama3_")) {
        o = RotaryOptions::llama3_1_8b();
        o.sequence_length = c.sequence_length;
    } else if (starts("dynamic_factor2")) {
        o.scaling = RotaryScaling::dynamic;
        o.factor = 2;
        o.original_max_position_embeddings = 4096;
    } else if (name == "yarn_factor4_d16") {
        o.scaling = RotaryScaling::yarn;
        o.factor = 4;
        o.original_max_position_embeddings = 64;
    } else if (name == "yarn_factor4_theta10000_d128") {
        o.scaling = RotaryScaling::yarn;
        o.factor = 4;
        o.original_max_position_embeddings = 4096;
    } else if (name == "yarn_mscale_factor8_d64") {
        o.scaling = RotaryScaling::yarn;
        o.factor = 8;
        o.beta_fast = 24;
        o.beta_slow = 2;
        o.mscale = 1;
        o.mscale_all_dim = 0.5;
        o.original_max_position_embeddings = 2048;
    } else if (name == "yarn_gptoss_truncate_false_d64") {
        o.base = 150000;
        o.scaling = RotaryScaling::yarn;
        o.factor = 32;  // 131072 / 4096
        o.original_max_position_embeddings = 4096;
        o.truncate = false;
    } else if (starts("yarn_qwen")) {  // an explicit factor of 4 (transformers 5), original 32768
        o.base = 1000000;
        o.scaling = RotaryScaling::yarn;
        o.factor = 4;
        o.original_max_position_embeddings = 32768;
    } else if (starts("longrope_explicit_factor16")) {
        o.scaling = RotaryScaling::longrope;
        o.factor = 16;
        o.original_max_position_embeddings = 4096;
        o.short_factor = json_list(c.config_json, "short_factor");
        o.long_factor = json_list(c.config_json, "long_factor");
    } else if (starts("longrope_")) {  // Phi-3-mini-128k's and Phi-4-mini's shapes
        o.scaling = RotaryScaling::longrope;
        o.factor = 32;  // 131072 / 4096
        o.original_max_position_embeddings = 4096;
        o.short_factor = json_list(c.config_json, "short_factor");
        o.long_factor = json_list(c.config_json, "long_factor");
    } else {
        const bool plain = starts("default_");
        INFO("fixture case " << name << " has no options here: add it to options_for");
        REQUIRE(plain);
    }
    o.max_positions = 16;
    o.beyond = BeyondTable::compute;
    o.rotary_dim = c.rotary_dim;
    o.head_dim = c.head_dim;
    return o;
}

RotaryOptions with_precision(RotaryOptions options, TablePrecision precision) {
    options.precision = precision;
    return options;
}

/// Row p of the cos and sin tables (computed past the table when needed).
template <typename Scalar>
void row_at(const RotaryEmbedding<Scalar>& rope, std::int64_t p, RowMatrix<Scalar>& cos, RowMatrix<Scalar>& sin) {
    cos.resize(1, rope.pairs());
    sin.resize(1, rope.pairs());
    rope.forward_into(p, cos, sin);
}

/// Distance in units in the last place between two finite doubles of the same sign or zeros.
std::int64_t ulps(double a, double b) {
    const auto ordered = [](double v) {
        std::int64_t bits = 0;
        std::memcpy(&bits, &v, sizeof bits);
        return bits < 0 ? std::numeric_limits<std::int64_t>::min() - bits : bits;
    };
    const std::int64_t d = ordered(a) - ordered(b);
    return d < 0 ? -d : d;
}

const fx::FrequencyCase& frequency_case(const char* name) {
    for (const fx::FrequencyCase& c : fx::frequency_cases)
        if (std::string(c.name) == name) return c;
    FAIL("no frequency case " << name);
    return fx::frequency_cases[0];
}

template <typename T = float>
RowMatrix<T> matrix_of(const double* values, Index rows, Index cols) {
    RowMatrix<T> out(rows, cols);
    for (Index i = 0; i < rows * cols; ++i) out.data()[i] = static_cast<T>(values[i]);
    return out;
}

/// Whether a fixture case's rule chooses its frequencies per call (dynamic NTK, LongRoPE).
bool per_call_rule(const fx::FrequencyCase& c) {
    const std::string rule = c.rule;
    return rule == "dynamic" || rule == "longrope";
}

/// The options of a case with sequence_length 0: the frequencies chosen per call.
RotaryOptions per_call_options(const fx::FrequencyCase& c, TablePrecision precision) {
    RotaryOptions options = with_precision(options_for(c), precision);
    options.sequence_length = 0;
    return options;
}

/// The row of the case's position r in a table of pairs columns.
const double* fixture_row(const double* table, long r, Index pairs) { return table + r * pairs; }

/// A 2 x 3 batch whose tokens take, through Padding::none() and step offsets, the apply case's
/// positions (two runs of three consecutive positions).
struct ThreeTokenRuns {
    seqembed::IdMatrix ids = seqembed::IdMatrix::Constant(2, 3, 5);
    std::vector<std::int64_t> offsets;
};
ThreeTokenRuns three_token_runs(const fx::ApplyCase& a) {
    REQUIRE(a.tokens == 6);
    for (long t : {1L, 2L, 4L, 5L}) REQUIRE(a.positions[t] == a.positions[t - 1] + 1);
    ThreeTokenRuns runs;
    runs.offsets = {a.positions[0], a.positions[3]};
    return runs;
}

/// Float32 x, long double cos(x) and sin(x), rounded once to float (glibc's long double cosl and
/// sinl reduce any argument exactly and are accurate to far below a float's half ulp).
float reference_cos(float x) { return static_cast<float>(std::cos(static_cast<long double>(x))); }
float reference_sin(float x) { return static_cast<float>(std::sin(static_cast<long double>(x))); }

}  // namespace

TEST_CASE("rotary: Follow mode reproduces Hugging Face's float32 inv_freq bit for bit, every rule", "[rotary][fixture]") {
    for (const fx::FrequencyCase& c : fx::frequency_cases) {
        INFO("case " << c.name);
        const RotaryEmbedding<float> rope(with_precision(options_for(c), TablePrecision::follow_scalar));
        REQUIRE(rope.rotary_dim() == c.rotary_dim);
        REQUIRE(rope.pairs() == c.rotary_dim / 2);
        for (Index i = 0; i < rope.pairs(); ++i) {
            INFO("frequency " << i);
            CHECK(rope.inverse_frequencies()[static_cast<std::size_t>(i)] == static_cast<float>(c.inv_freq_f32[i]));
        }
        CHECK(rope.attention_scaling() == c.attention_scaling);
    }
}

TEST_CASE("rotary: The exact frequencies are mpmath's to within one ulp of double", "[rotary][fixture]") {
    // Evaluated in long double (64-bit significand on x86-64): the measured worst case is 1 ulp.
    std::int64_t worst = 0;
    for (const fx::FrequencyCase& c : fx::frequency_cases) {
        INFO("case " << c.name);
        const RotaryEmbedding<double> rope(options_for(c));
        for (Index i = 0; i < rope.pairs(); ++i)
            worst = std::max(worst, ulps(rope.frequencies()[static_cast<std::size_t>(i)], c.frequency_exact[i]));
    }
    CHECK(worst <= 1);
}

TEST_CASE("rotary: Follow tables equal Hugging Face's float32 cos and sin bit for bit, at every fixture position",
          "[rotary][fixture]") {
    for (const fx::FrequencyCase& c : fx::frequency_cases) {
        INFO("case " << c.name);
        RotaryOptions options = with_precision(options_for(c), TablePrecision::follow_scalar);
        options.max_positions = 4097;  // positions up to 4096 from the table, the rest computed
        const RotaryEmbedding<float> rope(options);
        RowMatrix<float> cos, sin;
        for (long r = 0; r < c.position_count; ++r) {
            INFO("position " << c.positions[r]);
            row_at(rope, c.positions[r], cos, sin);
            for (Index i = 0; i < rope.pairs(); ++i) {
                const long at = r * rope.pairs() + i;
                INFO("frequency " << i);
                CHECK(cos(0, i) == static_cast<float>(c.follow_cos_f32[at]));
                CHECK(sin(0, i) == static_cast<float>(c.follow_sin_f32[at]));
            }
        }
    }
}

TEST_CASE("rotary: Exact float tables are the correctly rounded values (mpmath) at every fixture position",
          "[rotary][fixture]") {
    for (const fx::FrequencyCase& c : fx::frequency_cases) {
        INFO("case " << c.name);
        RotaryOptions options = options_for(c);
        options.max_positions = 4097;
        const RotaryEmbedding<float> rope(options);
        RowMatrix<float> cos, sin;
        for (long r = 0; r < c.position_count; ++r) {
            INFO("position " << c.positions[r]);
            row_at(rope, c.positions[r], cos, sin);
            for (Index i = 0; i < rope.pairs(); ++i) {
                const long at = r * rope.pairs() + i;
                INFO("frequency " << i);
                CHECK(cos(0, i) == static_cast<float>(c.exact_cos_f32[at]));
                CHECK(sin(0, i) == static_cast<float>(c.exact_sin_f32[at]));
            }
        }
    }
}

TEST_CASE("rotary: Exact double tables are within the stated bound of mpmath's values", "[rotary][fixture]") {
    // The bound: |ours - exact| <= 4 ulp(value) + k p f s 2^-64. The frequency f is carried in
    // long double (relative error near 2^-64 on x86-64), so the angle p f is off by about
    // p f 2^-64, scaled by the attention factor s; k is 2 for most rules (measured <= 1.99),
    // 4 for llama3, whose smoothed frequencies take more steps (2.93 measured at position 254487),
    // up to 32 where YaRN's ramp bounds come from logarithms (gpt-oss, truncate false: 24.5
    // measured), and 2^12 for LongRoPE, whose factor lists are doubles (the config's decimals
    // rounded to double, 2^-53 relative; 1735 measured). At position 999999 that is below 5.4e-14
    // absolute for every rule but LongRoPE (measured 5.4e-14 worst).
    for (const fx::FrequencyCase& c : fx::frequency_cases) {
        INFO("case " << c.name);
        const std::string name = c.name;
        const double k = name.rfind("longrope", 0) == 0      ? 4096
                         : name.rfind("yarn_gptoss", 0) == 0 ? 32
                         : name.rfind("llama3", 0) == 0      ? 4
                                                             : 2;
        RotaryOptions options = options_for(c);
        options.max_positions = 4097;
        const RotaryEmbedding<double> rope(options);
        RowMatrix<double> cos, sin;
        double worst = 0;
        for (long r = 0; r < c.position_count; ++r) {
            const auto p = static_cast<double>(c.positions[r]);
            row_at(rope, c.positions[r], cos, sin);
            for (Index i = 0; i < rope.pairs(); ++i) {
                const long at = r * rope.pairs() + i;
                const double angle_error = k * p * c.frequency_exact[i] * c.attention_scaling * 0x1p-64;
                for (const auto& [ours, theirs] :
                     {std::pair{cos(0, i), c.exact_cos_f64[at]}, std::pair{sin(0, i), c.exact_sin_f64[at]}}) {
                    const double error = std::fabs(ours - theirs);
                    const double allowed = 4 * std::fabs(theirs) * 0x1p-53 + 0x1p-1074 + angle_error;
                    worst = std::max(worst, error / allowed);
                    if (error > allowed)
                        FAIL_CHECK("position " << c.positions[r] << ", frequency " << i << ": " << ours
                                               << " against " << theirs << ", error " << error << " > " << allowed);
                }
            }
        }
        INFO("worst error / bound: " << worst);
        CHECK(worst <= 1);
    }
}

TEST_CASE("rotary: Follow-mode tables drift from the exact ones with the position, exact ones do not",
          "[rotary][fixture]") {
    // Llama 3 (theta 500000, head_dim 128): HF's float32 formula against mpmath, as the issue
    // quotes it (1.4e-4 at position 4096, 3.7e-3 at 131071, 3.7e-2 at 999999 for cos and sin).
    const fx::FrequencyCase& c = frequency_case("default_theta500000_d128");
    const RotaryEmbedding<float> follow(with_precision(options_for(c), TablePrecision::follow_scalar));
    const RotaryEmbedding<float> exact(options_for(c));
    RowMatrix<float> fc, fs, ec, es;
    for (long r = 0; r < c.position_count; ++r) {
        row_at(follow, c.positions[r], fc, fs);
        row_at(exact, c.positions[r], ec, es);
        double follow_error = 0, exact_error = 0;
        for (Index i = 0; i < follow.pairs(); ++i) {
            const long at = r * follow.pairs() + i;
            follow_error = std::max({follow_error, std::fabs(fc(0, i) - c.exact_cos_f64[at]),
                                     std::fabs(fs(0, i) - c.exact_sin_f64[at])});
            exact_error = std::max({exact_error, std::fabs(ec(0, i) - c.exact_cos_f64[at]),
                                    std::fabs(es(0, i) - c.exact_sin_f64[at])});
        }
        INFO("position " << c.positions[r] << ": follow " << follow_error << ", exact " << exact_error);
        CHECK(exact_error <= 2.98e-8);  // half an ulp of float below 1
        if (c.positions[r] == 131071) CHECK(follow_error > 1e-3);
        if (c.positions[r] == 999999) CHECK(follow_error > 1e-2);
    }
}

TEMPLATE_TEST_CASE("rotary: Tables of every stored type come from one computation, rounded once", "[rotary]",
                   Eigen::bfloat16, Eigen::half) {
    const fx::FrequencyCase& c = frequency_case("yarn_factor4_theta10000_d128");  // attention scaling != 1
    for (const TablePrecision precision : {TablePrecision::follow_scalar, TablePrecision::exact}) {
        RotaryOptions options = with_precision(options_for(c), precision);
        options.max_positions = 3000;
        const RotaryEmbedding<float> as_float(options);
        const RotaryEmbedding<double> as_double(options);
        const RotaryEmbedding<TestType> narrow(options);
        Index double_roundings = 0;
        for (Index p = 0; p < options.max_positions; ++p)
            for (Index i = 0; i < narrow.pairs(); ++i) {
                for (int which = 0; which < 2; ++which) {
                    const TestType ours = which == 0 ? narrow.cos_table()(p, i) : narrow.sin_table()(p, i);
                    const float f = which == 0 ? as_float.cos_table()(p, i) : as_float.sin_table()(p, i);
                    const double d = which == 0 ? as_double.cos_table()(p, i) : as_double.sin_table()(p, i);
                    if (precision == TablePrecision::follow_scalar) {
                        // HF's `.to(bfloat16)` of its float32 table; the double table holds the floats.
                        REQUIRE(d == static_cast<double>(f));
                        REQUIRE(Eigen::numext::bit_cast<std::uint16_t>(ours) ==
                                Eigen::numext::bit_cast<std::uint16_t>(TestType(f)));
                    } else {
                        // Rounded once from the exact value: the double table rounded to odd
                        // float, then to nearest even.
                        const TestType once(seqembed::detail::rotary::round_to_odd_float(d));
                        REQUIRE(Eigen::numext::bit_cast<std::uint16_t>(ours) == Eigen::numext::bit_cast<std::uint16_t>(once));
                        if (Eigen::numext::bit_cast<std::uint16_t>(TestType(f)) != Eigen::numext::bit_cast<std::uint16_t>(once))
                            ++double_roundings;
                    }
                }
            }
        // Rounding the float table again differs where the float sits on a midpoint of the
        // narrow type (about 2^-13 of the values for half, 2^-16 for bfloat16; 17 and 0 of these
        // 384000 measured): the exact table is the better one.
        INFO(double_roundings << " values differ from the float table rounded again");
        CHECK(double_roundings <= 384000 / 2048);
    }
}

TEST_CASE("rotary: Applying reproduces torch's apply_rotary_pos_emb bit for bit: GQA, partial rotary, both layouts",
          "[rotary][fixture]") {
    for (const fx::ApplyCase& a : fx::apply_cases) {
        INFO("apply case " << a.name);
        RotaryOptions options = with_precision(options_for(frequency_case(a.frequency_case)), TablePrecision::follow_scalar);
        options.layout = std::string(a.layout) == "halves" ? RotaryLayout::halves : RotaryLayout::interleaved;
        options.max_positions = 32;
        REQUIRE(options.head_dim == a.head_dim);
        const RotaryEmbedding<float> rope(options);
        REQUIRE(rope.rotary_dim() == a.rotary_dim);
        RowMatrix<float> q = matrix_of(a.q_in, a.tokens, a.q_heads * a.head_dim);
        RowMatrix<float> k = matrix_of(a.k_in, a.tokens, a.k_heads * a.head_dim);
        Positions positions(a.tokens);
        for (long t = 0; t < a.tokens; ++t) positions[t] = a.positions[t];
        rope.apply(q, k, a.q_heads, a.k_heads, positions);
        CHECK(bit_equal(q, matrix_of(a.q_out, a.tokens, a.q_heads * a.head_dim)));
        CHECK(bit_equal(k, matrix_of(a.k_out, a.tokens, a.k_heads * a.head_dim)));

        // Q alone and K alone give the same rows.
        RowMatrix<float> q_only = matrix_of(a.q_in, a.tokens, a.q_heads * a.head_dim);
        RowMatrix<float> none(0, 0);
        rope.apply(q_only, none, a.q_heads, 0, positions);
        CHECK(bit_equal(q_only, q));
        RowMatrix<float> k_only = matrix_of(a.k_in, a.tokens, a.k_heads * a.head_dim);
        rope.apply(none, k_only, 0, a.k_heads, positions);
        CHECK(bit_equal(k_only, k));
    }
}

TEST_CASE("rotary: A left-padded batch: real tokens rotated at their positions, padded rows left alone", "[rotary][fixture]") {
    // The fixture's rows 0..4 are one sequence [pad, pad, t0, t1, t2] (HF rotates the pads by
    // position 1; seqembed leaves them), rows 5..7 a second sequence of three real tokens.
    const fx::ApplyCase* found = nullptr;
    for (const fx::ApplyCase& a : fx::apply_cases)
        if (std::string(a.name) == "halves_partial_r8_d16_left_padding") found = &a;
    REQUIRE(found != nullptr);
    const fx::ApplyCase& a = *found;
    RotaryOptions options =
        with_precision(options_for(frequency_case(a.frequency_case)), TablePrecision::follow_scalar);
    options.max_positions = 8;
    const RotaryEmbedding<float> rope(options);
    const RowMatrix<float> q_in = matrix_of(a.q_in, a.tokens, a.q_heads * a.head_dim);
    const RowMatrix<float> k_in = matrix_of(a.k_in, a.tokens, a.k_heads * a.head_dim);
    const RowMatrix<float> q_out = matrix_of(a.q_out, a.tokens, a.q_heads * a.head_dim);
    const RowMatrix<float> k_out = matrix_of(a.k_out, a.tokens, a.k_heads * a.head_dim);
    RowMatrix<float> q = q_in, k = k_in;

    seqembed::IdMatrix first_ids(1, 5);
    first_ids << 0, 0, 7, 8, 9;
    seqembed::IdMatrix mask(1, 5);
    mask << 0, 0, 1, 1, 1;
    rope.apply(q.topRows(5), k.topRows(5), a.q_heads, a.k_heads, first_ids, Padding::from_mask(mask));
    seqembed::IdMatrix second_ids(1, 3);
    second_ids << 4, 5, 6;
    rope.apply(q.bottomRows(3), k.bottomRows(3), a.q_heads, a.k_heads, second_ids, Padding::none());

    CHECK(bit_equal<float>(q.topRows(2), q_in.topRows(2)));
    CHECK(bit_equal<float>(k.topRows(2), k_in.topRows(2)));
    CHECK(bit_equal<float>(q.bottomRows(6), q_out.bottomRows(6)));
    CHECK(bit_equal<float>(k.bottomRows(6), k_out.bottomRows(6)));

    // Padding::by_id(0) and Padding::left({3}) number the tokens the same way.
    for (int variant = 0; variant < 2; ++variant) {
        RowMatrix<float> q2 = q_in.topRows(5), k2 = k_in.topRows(5);
        std::vector<std::int64_t> lengths{3};
        if (variant == 0)
            rope.apply(q2, k2, a.q_heads, a.k_heads, first_ids, Padding::by_id(0));
        else
            rope.apply(q2, k2, a.q_heads, a.k_heads, first_ids, Padding::left(lengths));
        CHECK(bit_equal<float>(q2, q.topRows(5)));
        CHECK(bit_equal<float>(k2, k.topRows(5)));
    }
}

TEST_CASE("rotary: Batch positions: padding on either side, per-sequence step offsets, both numberings", "[rotary]") {
    RotaryOptions options = RotaryOptions::hugging_face(8);
    options.max_positions = 64;
    const RotaryEmbedding<double> rope(options);
    seqembed::IdMatrix ids(3, 4);
    ids << 5, 6, 7, 0,  //
        0, 0, 5, 6,     //
        5, 6, 7, 8;
    std::vector<std::int64_t> lengths{3, 2, 4};
    std::vector<std::int64_t> decoded{10, 0, 30};
    using Rope = RotaryEmbedding<double>;
    using seqembed::PositionNumbering;

    Positions right = Rope::positions_of(ids, Padding::right(lengths), StepOffsets(decoded));
    Positions expected(12);
    expected << 10, 11, 12, -1, 0, 1, -1, -1, 30, 31, 32, 33;
    CHECK(right == expected);

    Positions left = Rope::positions_of(ids, Padding::by_id(0), StepOffsets(decoded));
    expected << 10, 11, 12, -1, -1, -1, 0, 1, 30, 31, 32, 33;
    CHECK(left == expected);
    Positions by_index = Rope::positions_of(ids, Padding::by_id(0), 5, PositionNumbering::sequence_index);
    expected << 5, 6, 7, -1, -1, -1, 7, 8, 5, 6, 7, 8;
    CHECK(by_index == expected);

    // The batch overload equals the explicit one on the real rows and leaves the padded ones.
    RowMatrix<double> q = RowMatrix<double>::Random(12, 3 * 8), k = RowMatrix<double>::Random(12, 8);
    RowMatrix<double> q_batch = q, k_batch = k;
    rope.apply(q_batch, k_batch, 3, 1, ids, Padding::by_id(0), StepOffsets(decoded));
    for (Index row = 0; row < 12; ++row) {
        RowMatrix<double> q_row = q.row(row), k_row = k.row(row);
        if (left[row] >= 0) {
            Positions one(1);
            one << left[row];
            rope.apply(q_row, k_row, 3, 1, one);
        }
        CHECK(bit_equal<double>(q_batch.row(row), q_row));
        CHECK(bit_equal<double>(k_batch.row(row), k_row));
    }
}

TEMPLATE_TEST_CASE("rotary: Each rotation keeps the length of every pair", "[rotary][property]", float, double) {
    // |(x1 c - x2 s, x2 c + x1 s)| = |(x1, x2)| sqrt(c^2 + s^2): with the exact table c^2 + s^2 is
    // 1 within 2 ulp, and the four rounded products and two sums add at most 3 ulp of the pair's
    // length: 8 ulp of TestType relative to the length is the stated bound.
    for (const RotaryLayout layout : {RotaryLayout::halves, RotaryLayout::interleaved}) {
        RotaryOptions options = RotaryOptions::hugging_face(64, 500000);
        options.layout = layout;
        options.max_positions = 2000;
        const RotaryEmbedding<TestType> rope(options);
        RowMatrix<TestType> q = RowMatrix<TestType>::Random(300, 2 * 64);
        const RowMatrix<TestType> q0 = q;
        Positions positions(300);
        for (Index t = 0; t < 300; ++t) positions[t] = (t * 977) % 2000;
        RowMatrix<TestType> none(0, 0);
        rope.apply(q, none, 2, 0, positions);
        const double eps = std::numeric_limits<TestType>::epsilon();
        double worst = 0;
        for (Index t = 0; t < 300; ++t)
            for (Index h = 0; h < 2; ++h)
                for (Index i = 0; i < 32; ++i) {
                    const Index a = h * 64 + (layout == RotaryLayout::halves ? i : 2 * i);
                    const Index b = layout == RotaryLayout::halves ? a + 32 : a + 1;
                    const double before = std::hypot(double(q0(t, a)), double(q0(t, b)));
                    const double after = std::hypot(double(q(t, a)), double(q(t, b)));
                    worst = std::max(worst, std::fabs(after - before) / (before * eps));
                }
        INFO("worst pair length change: " << worst << " ulp");
        CHECK(worst <= 8);
    }
}

TEST_CASE("rotary: The score of a query at m and a key at n depends on m - n only", "[rotary][property]") {
    // q(m) . k(n) computed in double with exact double tables: the same for (m, n) and (m + s,
    // n + s) within 1e-12 relative to |q| |k|, up to position 500000 (the angle's error grows
    // with the position as p f 2^-64).
    RotaryOptions options = RotaryOptions::llama3_1_8b();
    options.max_positions = 16;
    options.beyond = BeyondTable::compute;
    const RotaryEmbedding<double> rope(options);
    const RowMatrix<double> q0 = RowMatrix<double>::Random(1, 128), k0 = RowMatrix<double>::Random(1, 128);
    const auto score = [&](std::int64_t m, std::int64_t n) {
        RowMatrix<double> q = q0, k = k0;
        Positions pm(1), pn(1);
        pm << m;
        pn << n;
        RowMatrix<double> none(0, 0);
        rope.apply(q, none, 1, 0, pm);
        rope.apply(none, k, 0, 1, pn);
        return q.row(0).dot(k.row(0));
    };
    const double scale = q0.norm() * k0.norm();
    for (const std::int64_t distance : {0, 1, 7, 100, 4095}) {
        const double reference = score(distance, 0);
        for (const std::int64_t shift : {1, 1000, 65536, 131071, 500000}) {
            INFO("distance " << distance << ", shift " << shift);
            CHECK(std::fabs(score(shift + distance, shift) - reference) <= 1e-12 * scale);
        }
    }
}

TEST_CASE("rotary: Rows past the table equal the table's rows, far positions stay correctly rounded", "[rotary]") {
    for (const TablePrecision precision : {TablePrecision::exact, TablePrecision::follow_scalar}) {
        RotaryOptions small = RotaryOptions::llama3_1_8b();
        small.precision = precision;
        small.max_positions = 100;
        small.beyond = BeyondTable::compute;
        RotaryOptions large = small;
        large.max_positions = 300;
        const RotaryEmbedding<float> a(small), b(large);
        RowMatrix<float> cos(200, a.pairs()), sin(200, a.pairs());
        a.forward_into(100, cos, sin);
        CHECK(bit_equal<float>(cos, b.rows(100, 200).cos));
        CHECK(bit_equal<float>(sin, b.rows(100, 200).sin));
    }
    // Past 2^25 the exact values come from the scalar double-double path: compare with long
    // double (whose own error there is below 1e-11).
    const RotaryEmbedding<float> rope([] {
        RotaryOptions o = RotaryOptions::hugging_face(64);
        o.max_positions = 1;
        o.beyond = BeyondTable::compute;
        return o;
    }());
    RowMatrix<float> cos, sin;
    for (const std::int64_t p : {std::int64_t{1} << 24, (std::int64_t{1} << 25) + 3, (std::int64_t{1} << 26) + 1,
                                 std::int64_t{1} << 30, std::int64_t{1} << 40}) {
        row_at(rope, p, cos, sin);
        for (Index i = 0; i < rope.pairs(); ++i) {
            const long double f = std::pow(10000.0L, -static_cast<long double>(2 * i) / 64);
            const long double angle = static_cast<long double>(p) * f;
            const double tolerance = 0x1p-24 + static_cast<double>(angle) * 0x1p-62;
            INFO("position " << p << ", frequency " << i);
            CHECK(std::fabs(cos(0, i) - static_cast<double>(std::cos(angle))) <= tolerance);
            CHECK(std::fabs(sin(0, i) - static_cast<double>(std::sin(angle))) <= tolerance);
        }
    }
}

TEST_CASE("rotary: bfloat16 activations are rotated in float, the cosine's product fused, and rounded once",
          "[rotary]") {
    RotaryOptions options = RotaryOptions::hugging_face(32);
    options.max_positions = 50;
    const RotaryEmbedding<Eigen::bfloat16> rope(options);
    RowMatrix<float> q = RowMatrix<float>::Random(20, 4 * 32), k = RowMatrix<float>::Random(20, 2 * 32);
    RowMatrix<Eigen::bfloat16> qb = q.cast<Eigen::bfloat16>(), kb = k.cast<Eigen::bfloat16>();
    q = qb.cast<float>();
    k = kb.cast<float>();
    Positions positions(20);
    for (Index t = 0; t < 20; ++t) positions[t] = (t * 7) % 50;
    rope.apply(qb, kb, 4, 2, positions);
    // The reference: the bfloat16 table widened, x1 c + x2 (-s) and x2 c + x1 s in float with the
    // sine's product rounded and the cosine's fused (std::fma), then one rounding.
    const auto rotate = [&](RowMatrix<float>& x, Index heads) {
        for (Index t = 0; t < 20; ++t) {
            for (Index h = 0; h < heads; ++h) {
                for (Index i = 0; i < 16; ++i) {
                    const float c = static_cast<float>(rope.cos_table()(positions[t], i));
                    const float s = static_cast<float>(rope.sin_table()(positions[t], i));
                    float& x1 = x(t, h * 32 + i);
                    float& x2 = x(t, h * 32 + 16 + i);
                    const float x2s = x2 * -s;
                    const float x1s = x1 * s;
                    const float y1 = std::fma(x1, c, x2s);
                    x2 = std::fma(x2, c, x1s);
                    x1 = y1;
                }
            }
        }
    };
    rotate(q, 4);
    rotate(k, 2);
    CHECK(bit_equal<Eigen::bfloat16>(qb, q.cast<Eigen::bfloat16>()));
    CHECK(bit_equal<Eigen::bfloat16>(kb, k.cast<Eigen::bfloat16>()));
}

TEST_CASE("rotary: Partial rotary leaves the dimensions past rotary_dim untouched", "[rotary]") {
    for (const RotaryLayout layout : {RotaryLayout::halves, RotaryLayout::interleaved}) {
        RotaryOptions options = RotaryOptions::gpt_neox(96, 0.25);
        options.layout = layout;
        const RotaryEmbedding<float> rope(options);
        CHECK(rope.rotary_dim() == 24);
        RowMatrix<float> q = RowMatrix<float>::Random(5, 2 * 96);
        const RowMatrix<float> q0 = q;
        Positions positions(5);
        positions << 1, 2, 3, 4, 2047;
        RowMatrix<float> none(0, 0);
        rope.apply(q, none, 2, 0, positions);
        for (Index h = 0; h < 2; ++h) {
            CHECK(bit_equal<float>(q.middleCols(h * 96 + 24, 72), q0.middleCols(h * 96 + 24, 72)));
            CHECK_FALSE(bit_equal<float>(q.middleCols(h * 96, 24), q0.middleCols(h * 96, 24)));
        }
    }
}

TEST_CASE("rotary: Presets describe their models", "[rotary]") {
    CHECK(RotaryEmbedding<float>(RotaryOptions::gptj_6b()).rotary_dim() == 64);
    CHECK(RotaryEmbedding<float>(RotaryOptions::phi2()).rotary_dim() == 32);
    CHECK(RotaryEmbedding<float>(RotaryOptions::gpt_neox(128)).rotary_dim() == 32);
    const RotaryEmbedding<float> llama(RotaryOptions::llama3_8b());
    CHECK(llama.max_positions() == 8192);
    CHECK(llama.cos_table().rows() == 8192);
    CHECK(llama.cos_table().cols() == 64);
    CHECK(llama.cos_table()(0, 5) == 1.0f);
    CHECK(llama.sin_table()(0, 5) == 0.0f);
}

TEST_CASE("rotary: Bad rotary options are rejected, naming the option and its value", "[rotary][bad-input]") {
    const auto rejects = [](RotaryOptions options, const std::string& words) {
        INFO("expected an error naming: " << words);
        test_support::require_error<seqembed::value_error>([&] { RotaryEmbedding<float> rope(options); }, {words});
    };
    const RotaryOptions good = RotaryOptions::hugging_face(64);
    auto with = [&](auto change) {
        RotaryOptions o = good;
        change(o);
        return o;
    };
    rejects(with([](RotaryOptions& o) { o.head_dim = 63; }), "head_dim 63");
    rejects(with([](RotaryOptions& o) { o.head_dim = 0; }), "head_dim 0");
    rejects(with([](RotaryOptions& o) { o.rotary_dim = 31; }), "rotary_dim 31");
    rejects(with([](RotaryOptions& o) { o.rotary_dim = 66; }), "rotary_dim 66");
    rejects(with([](RotaryOptions& o) { o.rotary_dim = -2; }), "rotary_dim -2");
    rejects(with([](RotaryOptions& o) { o.partial_rotary_factor = 0.01; }), "rotary_dim 0");
    rejects(with([](RotaryOptions& o) { o.partial_rotary_factor = 1.5; }), "partial_rotary_factor 1.5");
    rejects(with([](RotaryOptions& o) { o.partial_rotary_factor = std::nan(""); }), "partial_rotary_factor");
    rejects(with([](RotaryOptions& o) {
                o.partial_rotary_factor = 0.25;
                o.rotary_dim = 32;
            }),
            "disagrees");
    rejects(with([](RotaryOptions& o) { o.base = 1.0; }), "base (rope_theta) 1");
    rejects(with([](RotaryOptions& o) { o.base = -5; }), "base (rope_theta) -5");
    rejects(with([](RotaryOptions& o) { o.base = std::numeric_limits<double>::infinity(); }), "base is inf");
    rejects(with([](RotaryOptions& o) { o.factor = 2; }), "without a scaling rule");
    rejects(with([](RotaryOptions& o) {
                o.scaling = RotaryScaling::linear;
                o.factor = 0.5;
            }),
            "factor 0.5");
    rejects(with([](RotaryOptions& o) {
                o.scaling = RotaryScaling::linear;
                o.factor = std::nan("");
            }),
            "factor is nan");
    rejects(with([](RotaryOptions& o) {
                o.scaling = RotaryScaling::llama3;
                o.factor = 8;
            }),
            "original_max_position_embeddings 0");
    rejects(with([](RotaryOptions& o) {
                o = RotaryOptions::llama3_1_8b();
                o.high_freq_factor = 0.5;
            }),
            "high_freq_factor 0.5 must be at least low_freq_factor 1");
    rejects(with([](RotaryOptions& o) {
                o.scaling = RotaryScaling::yarn;
                o.factor = 4;
                o.original_max_position_embeddings = 4096;
                o.beta_fast = 0;
            }),
            "beta_fast is 0");
    rejects(with([](RotaryOptions& o) { o.attention_factor = 1.2; }), "attention_factor applies");
    rejects(with([](RotaryOptions& o) { o.mscale = 1; }), "mscale");
    rejects(with([](RotaryOptions& o) {
                o.scaling = RotaryScaling::yarn;
                o.factor = 4;
                o.original_max_position_embeddings = 4096;
                o.attention_factor = -1;
            }),
            "attention_factor is -1");
    const auto longrope = [&](std::size_t short_size, std::size_t long_size) {
        return with([&](RotaryOptions& o) {
            o.scaling = RotaryScaling::longrope;
            o.original_max_position_embeddings = 4096;
            o.short_factor.assign(short_size, 1.0);
            o.long_factor.assign(long_size, 2.0);
        });
    };
    rejects(longrope(31, 32), "short_factor has 31 values, expected rotary_dim/2 = 32");
    rejects(longrope(32, 33), "long_factor has 33 values");
    rejects(with([&](RotaryOptions& o) {
                o = longrope(32, 32);
                o.long_factor[3] = std::numeric_limits<double>::infinity();
            }),
            "long_factor[3] is inf");
    rejects(with([&](RotaryOptions& o) { o.short_factor.assign(32, 1.0); }), "longrope rule only");
    rejects(with([](RotaryOptions& o) {
                o.head_dim = 2;
                o.scaling = RotaryScaling::dynamic;
                o.factor = 2;
                o.original_max_position_embeddings = 100;
            }),
            "rotary_dim > 2");
    rejects(with([](RotaryOptions& o) { o.max_positions = 0; }), "max_positions must be positive, got 0");
    rejects(with([](RotaryOptions& o) { o.max_positions = std::numeric_limits<Index>::max() / 8; }),
            "overflows Eigen::Index");
    if (huge_allocations_fail_softly())
        rejects(with([](RotaryOptions& o) { o.max_positions = Index{1} << 44; }), "does not fit in memory");
    rejects(with([](RotaryOptions& o) { o.sequence_length = -1; }), "sequence_length -1");
}

TEST_CASE("rotary: Bad arguments to apply are rejected before anything is written", "[rotary][bad-input]") {
    RotaryOptions options = RotaryOptions::hugging_face(16);
    options.max_positions = 10;
    const RotaryEmbedding<float> rope(options);
    RowMatrix<float> q = RowMatrix<float>::Random(3, 4 * 16), k = RowMatrix<float>::Random(3, 2 * 16);
    const RowMatrix<float> q0 = q, k0 = k;
    Positions positions(3);
    positions << 0, 1, 2;
    const auto rejects = [&](auto error_type, auto call, const std::string& words) {
        test_support::require_error<decltype(error_type)>(call, {words});
        CHECK(bit_equal(q, q0));
        CHECK(bit_equal(k, k0));
    };
    rejects(seqembed::shape_error{""}, [&] { rope.apply(q, k, 4, 4, positions); },
            "k is 3 x 32, expected 3 x (k_heads 4 x head_dim 16)");
    rejects(seqembed::shape_error{""}, [&] { rope.apply(q, k, 3, 2, positions); }, "q is 3 x 64");
    rejects(seqembed::value_error{""}, [&] { rope.apply(q, k, 0, 2, positions); }, "q_heads is 0");
    rejects(seqembed::shape_error{""}, [&] { rope.apply(q.topRows(2), k, 4, 2, positions); },
            "q is 2 x 64 and k is 3 x 32");
    Positions four(4);
    four << 0, 1, 2, 3;
    rejects(seqembed::shape_error{""}, [&] { rope.apply(q, k, 4, 2, four); }, "q is 3 x 64, but the positions give 4");
    Positions negative(3);
    negative << 0, -1, 2;
    rejects(seqembed::index_error{""}, [&] { rope.apply(q, k, 4, 2, negative); }, "position -1 of row 1 is negative");
    Positions past(3);
    past << 0, 1, 10;
    rejects(seqembed::index_error{""}, [&] { rope.apply(q, k, 4, 2, past); },
            "position 10 of row 2 is past the table of 10 rows");
    seqembed::IdMatrix ids(1, 3);
    ids << 1, 2, 3;
    std::vector<std::int64_t> offsets{8};
    rejects(seqembed::index_error{""}, [&] { rope.apply(q, k, 4, 2, ids, Padding::none(), StepOffsets(offsets)); },
            "position 10 of token (batch 0, position 2) is past the table");
    rejects(seqembed::index_error{""}, [&] { rope.apply(q, k, 4, 2, ids, Padding::none(), StepOffsets(-1)); },
            "position -1 of token (batch 0, position 0) is negative");
    std::vector<std::int64_t> two_offsets{0, 0};
    rejects(seqembed::shape_error{""}, [&] { rope.apply(q, k, 4, 2, ids, Padding::none(), StepOffsets(two_offsets)); },
            "2 step offsets given for a batch of 1");
    seqembed::IdMatrix wide(1, 4);
    wide << 1, 2, 3, 4;
    rejects(seqembed::shape_error{""}, [&] { rope.apply(q, k, 4, 2, wide, Padding::none()); },
            "the batch x seq ids give 4 tokens");
    std::vector<std::int64_t> too_long{4};
    rejects(seqembed::value_error{""}, [&] { rope.apply(q, k, 4, 2, ids, Padding::right(too_long)); }, "length 4");
    RowMatrix<float> cos(2, 8), sin(2, 8);
    rejects(seqembed::index_error{""}, [&] { rope.forward_into(9, cos, sin); }, "position 10 of the last row");
    RowMatrix<float> narrow(2, 7);
    rejects(seqembed::shape_error{""}, [&] { rope.forward_into(0, cos, narrow); }, "sin of RotaryEmbedding::forward_into");
    rejects(seqembed::index_error{""}, [&] { (void)rope.rows(5, 6); }, "rotary rows [5, 5 + 6)");

    // Empty Q, K or batch: nothing to do, no error.
    RowMatrix<float> empty(0, 64), none(0, 0);
    Positions no_positions(0);
    rope.apply(empty, none, 4, 0, no_positions);
    rope.apply(q, none, 4, 0, positions);
    CHECK_FALSE(bit_equal(q, q0));
}

TEST_CASE("rotary: Positions past the table are computed when beyond = compute, up to 2^53", "[rotary][bad-input]") {
    RotaryOptions options = RotaryOptions::hugging_face(8);
    options.max_positions = 4;
    options.beyond = BeyondTable::compute;
    const RotaryEmbedding<double> rope(options);
    RowMatrix<double> q = RowMatrix<double>::Ones(2, 8), none(0, 0);
    Positions positions(2);
    positions << 3, 1000;
    rope.apply(q, none, 1, 0, positions);
    positions << 0, (std::int64_t{1} << 53) + 1;
    REQUIRE_THROWS_AS(rope.apply(q, none, 1, 0, positions), seqembed::index_error);
    RowMatrix<double> cos(1, 4), sin(1, 4);
    REQUIRE_THROWS_AS(rope.forward_into(std::numeric_limits<std::int64_t>::max(), cos, sin), seqembed::index_error);
}

// ---- Frequencies chosen per call (dynamic NTK, LongRoPE) -------------------------------------

TEST_CASE("rotary: Per call, dynamic NTK and LongRoPE take the frequencies of the call's own length, as "
          "Hugging Face's forward does",
          "[rotary][fixture][per-call]") {
    // The fixtures' sequence_length is the forward's seq_len = max(position_ids) + 1: calls of the
    // original length (4096), one past it, far beyond, and the older whole-table cases.
    int cases = 0;
    for (const fx::FrequencyCase& c : fx::frequency_cases) {
        if (!per_call_rule(c)) continue;
        ++cases;
        INFO("case " << c.name << ", call length " << c.sequence_length);
        RotaryOptions follow_options = per_call_options(c, TablePrecision::follow_scalar);
        follow_options.max_positions = 4097;
        const RotaryEmbedding<float> follow(follow_options);
        RotaryOptions exact_options = per_call_options(c, TablePrecision::exact);
        exact_options.max_positions = 4097;
        const RotaryEmbedding<float> exact(exact_options);
        const RotaryEmbedding<double> exact_double(exact_options);
        RotaryOptions fixed = exact_options;
        fixed.sequence_length = c.sequence_length;  // the old, fixed choice: validated against mpmath above
        const RotaryEmbedding<double> fixed_double(fixed);
        REQUIRE(follow.per_call());
        REQUIRE_FALSE(fixed_double.per_call());
        CHECK(follow.attention_scaling() == c.attention_scaling);
        const std::vector<float> inv_freq = follow.inverse_frequencies(c.sequence_length);
        for (Index i = 0; i < follow.pairs(); ++i)
            CHECK(inv_freq[static_cast<std::size_t>(i)] == static_cast<float>(c.inv_freq_f32[i]));
        CHECK(exact_double.frequencies(c.sequence_length) == fixed_double.frequencies());

        const Index pairs = follow.pairs();
        RowMatrix<float> cos(1, pairs), sin(1, pairs), exact_cos(1, pairs), exact_sin(1, pairs);
        RowMatrix<double> cos64(1, pairs), sin64(1, pairs), fixed_cos64(1, pairs), fixed_sin64(1, pairs);
        for (long r = 0; r < c.position_count; ++r) {
            const std::int64_t p = c.positions[r];
            INFO("position " << p);
            follow.forward_into(p, cos, sin, c.sequence_length);
            CHECK(bit_equal<float>(cos, matrix_of(fixture_row(c.follow_cos_f32, r, pairs), 1, pairs)));
            CHECK(bit_equal<float>(sin, matrix_of(fixture_row(c.follow_sin_f32, r, pairs), 1, pairs)));
            exact.forward_into(p, exact_cos, exact_sin, c.sequence_length);
            CHECK(bit_equal<float>(exact_cos, matrix_of(fixture_row(c.exact_cos_f32, r, pairs), 1, pairs)));
            CHECK(bit_equal<float>(exact_sin, matrix_of(fixture_row(c.exact_sin_f32, r, pairs), 1, pairs)));
            // Double rows: the fixed-length object's, whose bound the test above checks.
            exact_double.forward_into(p, cos64, sin64, c.sequence_length);
            fixed_double.forward_into(p, fixed_cos64, fixed_sin64, c.sequence_length);
            CHECK(bit_equal<double>(cos64, fixed_cos64));
            CHECK(bit_equal<double>(sin64, fixed_sin64));
        }
    }
    CHECK(cases >= 12);
}

TEST_CASE("rotary: Per-call apply, positions and batch overloads, equals Hugging Face's float32 forward bit for bit "
          "(follow) and the exact rows within their bound (exact)",
          "[rotary][fixture][per-call]") {
    int cases = 0;
    for (const fx::ApplyCase& a : fx::apply_cases) {
        const fx::FrequencyCase& c = frequency_case(a.frequency_case);
        if (!per_call_rule(c)) continue;
        ++cases;
        INFO("apply case " << a.name << ", call length " << c.sequence_length);
        const Index q_cols = a.q_heads * a.head_dim;
        const Index k_cols = a.k_heads * a.head_dim;
        const RowMatrix<float> q_in = matrix_of(a.q_in, a.tokens, q_cols), k_in = matrix_of(a.k_in, a.tokens, k_cols);
        const RowMatrix<float> q_out = matrix_of(a.q_out, a.tokens, q_cols);
        const RowMatrix<float> k_out = matrix_of(a.k_out, a.tokens, k_cols);
        Positions positions(a.tokens);
        for (long t = 0; t < a.tokens; ++t) positions[t] = a.positions[t];
        REQUIRE(RotaryEmbedding<float>::call_length(positions) == c.sequence_length);

        RotaryOptions options = per_call_options(c, TablePrecision::follow_scalar);
        options.max_positions = 4097;
        options.beyond = BeyondTable::compute;
        const RotaryEmbedding<float> rope(options);

        // The positions overload.
        RowMatrix<float> q = q_in, k = k_in;
        rope.apply(q, k, a.q_heads, a.k_heads, positions);
        CHECK(bit_equal(q, q_out));
        CHECK(bit_equal(k, k_out));

        // The batch overload: two sequences of three tokens at their step offsets.
        const ThreeTokenRuns runs = three_token_runs(a);
        q = q_in;
        k = k_in;
        rope.apply(q, k, a.q_heads, a.k_heads, runs.ids, Padding::none(), StepOffsets(runs.offsets));
        CHECK(bit_equal(q, q_out));
        CHECK(bit_equal(k, k_out));

        // The same with a left-padded column: padded rows are left alone and do not count.
        seqembed::IdMatrix padded_ids = seqembed::IdMatrix::Constant(2, 4, 5);
        padded_ids.col(0).setZero();
        RowMatrix<float> q_padded(8, q_cols), k_padded(8, k_cols);
        for (Index b = 0; b < 2; ++b) {
            q_padded.row(4 * b).setConstant(7.0f);
            k_padded.row(4 * b).setConstant(-3.0f);
            q_padded.middleRows(4 * b + 1, 3) = q_in.middleRows(3 * b, 3);
            k_padded.middleRows(4 * b + 1, 3) = k_in.middleRows(3 * b, 3);
        }
        rope.apply(q_padded, k_padded, a.q_heads, a.k_heads, padded_ids, Padding::by_id(0), StepOffsets(runs.offsets));
        for (Index b = 0; b < 2; ++b) {
            CHECK((q_padded.row(4 * b).array() == 7.0f).all());
            CHECK((k_padded.row(4 * b).array() == -3.0f).all());
            CHECK(bit_equal<float>(q_padded.middleRows(4 * b + 1, 3), q_out.middleRows(3 * b, 3)));
            CHECK(bit_equal<float>(k_padded.middleRows(4 * b + 1, 3), k_out.middleRows(3 * b, 3)));
        }

        // Exact mode, double activations: the rotation by mpmath's rows, within the rows' bound
        // (4 ulp + k p f s 2^-64, as the table test above) carried through the rotation.
        RotaryOptions exact_options = per_call_options(c, TablePrecision::exact);
        exact_options.max_positions = 4097;
        exact_options.beyond = BeyondTable::compute;
        const RotaryEmbedding<double> exact(exact_options);
        RowMatrix<double> qd = q_in.cast<double>(), none(0, 0);
        exact.apply(qd, none, a.q_heads, 0, positions);
        const Index pairs = exact.pairs();
        const bool longrope = std::string(c.rule) == "longrope";
        double worst = 0;
        for (long t = 0; t < a.tokens; ++t) {
            long r = 0;
            while (c.positions[r] != a.positions[t]) ++r;
            for (Index h = 0; h < a.q_heads; ++h)
                for (Index i = 0; i < pairs; ++i) {
                    const Index i1 = h * a.head_dim + i, i2 = i1 + pairs;
                    const double x1 = q_in(t, i1), x2 = q_in(t, i2);
                    const double co = c.exact_cos_f64[r * pairs + i], si = c.exact_sin_f64[r * pairs + i];
                    const double table_error = 4 * 0x1p-53 + (longrope ? 4096 : 2) * static_cast<double>(a.positions[t]) *
                                                                 c.frequency_exact[i] * c.attention_scaling * 0x1p-64;
                    const double allowed = (std::fabs(x1) + std::fabs(x2)) * (table_error + 4 * 0x1p-53);
                    worst = std::max({worst, std::fabs(qd(t, i1) - (x1 * co - x2 * si)) / allowed,
                                      std::fabs(qd(t, i2) - (x2 * co + x1 * si)) / allowed});
                }
        }
        INFO("worst error / bound: " << worst);
        CHECK(worst <= 1);
    }
    CHECK(cases == 8);
}

TEST_CASE("rotary: The same positions take the short rows in a short call and the long rows in a long one",
          "[rotary][fixture][per-call]") {
    // Positions 0, 1, 2: alone, a call of length 3 (short factors); with 4096 beside them, a call
    // of length 4097 (long factors), as Hugging Face's forward numbers them.
    for (const char* name : {"longrope_phi3_d96_call4097", "dynamic_factor2_d128_call4097"}) {
        const fx::FrequencyCase& long_case = frequency_case(name);
        const fx::FrequencyCase& short_case =
            frequency_case(std::string(name).replace(std::string(name).size() - 4, 4, "4096").c_str());
        INFO(name);
        RotaryOptions options = per_call_options(long_case, TablePrecision::follow_scalar);
        options.max_positions = 4097;
        const RotaryEmbedding<float> rope(options);
        const Index pairs = rope.pairs();
        RowMatrix<float> q = RowMatrix<float>::Random(4, pairs * 2), none(0, 0);
        const RowMatrix<float> q0 = q;
        Positions long_call(4), short_call(3);
        long_call << 0, 1, 2, 4096;
        short_call << 0, 1, 2;
        RowMatrix<float> q_long = q0, q_short = q0.topRows(3);
        rope.apply(q_long, none, 1, 0, long_call);
        rope.apply(q_short, none, 1, 0, short_call);
        // Row 1 (position 1) of each against the fixtures' rows of position 1.
        for (const auto& [out, c] : {std::pair<const RowMatrix<float>*, const fx::FrequencyCase*>{&q_long, &long_case},
                                     {&q_short, &short_case}}) {
            REQUIRE(c->positions[1] == 1);
            for (Index i = 0; i < pairs; ++i) {
                const float co = static_cast<float>(c->follow_cos_f32[pairs + i]);
                const float si = static_cast<float>(c->follow_sin_f32[pairs + i]);
                const float x1 = q0(1, i), x2 = q0(1, pairs + i);
                float a = x1 * co, b = x2 * si;
                CHECK((*out)(1, i) == a - b);
                a = x2 * co;
                b = x1 * si;
                CHECK((*out)(1, pairs + i) == a + b);
            }
        }
        CHECK_FALSE(bit_equal<float>(q_long.topRows(3), q_short));
    }
}

TEST_CASE("rotary: Calls are stateless: each by its own length, whatever came before, from any thread",
          "[rotary][per-call]") {
    // Hugging Face's dynamic module keeps its grown frequencies for shorter calls that follow a
    // longer one; seqembed answers each call as a fresh module would.
    RotaryOptions options = RotaryOptions::hugging_face(64);
    options.scaling = RotaryScaling::dynamic;
    options.factor = 4;
    options.original_max_position_embeddings = 256;
    options.max_positions = 4096;
    options.precision = TablePrecision::follow_scalar;
    const RotaryEmbedding<float> rope(options);
    const RowMatrix<float> q0 = RowMatrix<float>::Random(3, 2 * 64);
    const auto call = [&](std::int64_t last) {
        Positions positions(3);
        positions << 0, last / 2, last;
        RowMatrix<float> q = q0, none(0, 0);
        rope.apply(q, none, 2, 0, positions);
        return q;
    };
    const std::vector<std::int64_t> lasts{4000, 300, 255, 1000, 256, 4095};
    std::vector<RowMatrix<float>> fresh;
    for (const std::int64_t last : lasts) {
        const RotaryEmbedding<float> own(options);
        Positions positions(3);
        positions << 0, last / 2, last;
        RowMatrix<float> q = q0, none(0, 0);
        own.apply(q, none, 2, 0, positions);
        fresh.push_back(q);
    }
    for (std::size_t i = 0; i < lasts.size(); ++i) {
        INFO("call ending at " << lasts[i]);
        CHECK(bit_equal(call(lasts[i]), fresh[i]));
    }
    // Within the original length the stored default table; past it rows of the call's own length.
    CHECK(bit_equal(fresh[2], call(255)));
    CHECK_FALSE(bit_equal<float>(call(256).topRows(2), call(255).topRows(2)));
    std::vector<std::thread> threads;
    std::vector<int> wrong(4, 0);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int round = 0; round < 20; ++round) {
                const std::size_t i = static_cast<std::size_t>(t + round) % lasts.size();
                if (!(call(lasts[i]).array() == fresh[i].array()).all()) ++wrong[static_cast<std::size_t>(t)];
            }
        });
    for (std::thread& thread : threads) thread.join();
    CHECK(wrong == std::vector<int>(4, 0));
}

TEST_CASE("rotary: A fixed sequence_length chooses the frequencies for every call (the behaviour before per-call)",
          "[rotary][fixture][per-call]") {
    const fx::FrequencyCase& c = frequency_case("longrope_phi3_long_d96_seq131072");
    RotaryOptions options = with_precision(options_for(c), TablePrecision::follow_scalar);
    options.sequence_length = 131072;
    options.max_positions = 64;
    const RotaryEmbedding<float> fixed(options);
    CHECK_FALSE(fixed.per_call());
    CHECK(fixed.cos_table().rows() == 64);
    // Position 1 in a call of length 2: the long rows all the same.
    RowMatrix<float> cos(1, fixed.pairs()), sin(1, fixed.pairs());
    fixed.forward_into(1, cos, sin);
    REQUIRE(c.positions[1] == 1);
    CHECK(bit_equal<float>(cos, matrix_of(fixture_row(c.follow_cos_f32, 1, fixed.pairs()), 1, fixed.pairs())));
    CHECK(fixed.inverse_frequencies(2) == fixed.inverse_frequencies());
}

TEST_CASE("rotary: Table views in per-call mode: the stored short table, the long one by call length, rows of "
          "any call through forward_into",
          "[rotary][per-call]") {
    const fx::FrequencyCase& longrope = frequency_case("longrope_phi3_d96_call4097");
    RotaryOptions options = per_call_options(longrope, TablePrecision::follow_scalar);
    options.max_positions = 8192;
    const RotaryEmbedding<float> rope(options);
    CHECK(rope.per_call());
    CHECK(rope.max_positions() == 8192);
    CHECK(rope.cos_table().rows() == 4096);  // no call within the original length reaches further
    const auto short_rows = rope.rows(10, 3, 4096);
    CHECK(short_rows.cos.data() == rope.rows(10, 3).cos.data());
    const auto long_rows = rope.rows(4000, 200, 4097);
    RowMatrix<float> cos(200, rope.pairs()), sin(200, rope.pairs());
    rope.forward_into(4000, cos, sin);  // a call of positions 4000 .. 4199: long
    CHECK(bit_equal<float>(cos, long_rows.cos));
    CHECK(bit_equal<float>(sin, long_rows.sin));
    RowMatrix<float> one_cos(1, rope.pairs()), one_sin(1, rope.pairs());
    rope.forward_into(10, one_cos, one_sin, 4097);
    CHECK(bit_equal<float>(one_cos, rope.rows(10, 1, 5000).cos));
    rope.forward_into(10, one_cos, one_sin);  // a call of length 11: short
    CHECK(bit_equal<float>(one_cos, rope.rows(10, 1).cos));
    CHECK_THROWS_AS(rope.rows(4000, 200), seqembed::index_error);
    CHECK_THROWS_AS(rope.forward_into(10, one_cos, one_sin, 10), seqembed::value_error);
    CHECK_THROWS_AS(rope.inverse_frequencies(-1), seqembed::value_error);

    const fx::FrequencyCase& dynamic = frequency_case("dynamic_factor2_d128_call4097");
    RotaryOptions dynamic_options = per_call_options(dynamic, TablePrecision::exact);
    dynamic_options.max_positions = 100;
    dynamic_options.beyond = BeyondTable::compute;
    const RotaryEmbedding<double> ntk(dynamic_options);
    CHECK(ntk.cos_table().rows() == 100);
    CHECK(ntk.rows(0, 5, 4096).cos.rows() == 5);
    try {
        (void)ntk.rows(0, 5, 4097);
        FAIL("rows of a dynamic call past the original length are not stored");
    } catch (const seqembed::index_error& e) {
        CHECK(std::string(e.what()).find("use forward_into with the call length") != std::string::npos);
    }
    RowMatrix<double> c64(1, ntk.pairs()), s64(1, ntk.pairs());
    ntk.forward_into(4096, c64, s64);
    REQUIRE(dynamic.positions[dynamic.position_count - 1] == 4096);
    for (Index i = 0; i < ntk.pairs(); ++i)
        CHECK(static_cast<float>(c64(0, i)) ==
              static_cast<float>(dynamic.exact_cos_f32[(dynamic.position_count - 1) * ntk.pairs() + i]));
}

// ---- Follow rows: the correctly rounded cos and sin of the float32 angle ----------------------

TEST_CASE("rotary: sin_cos_of_float_angles is the correctly rounded float32 sin and cos of any float angle, on "
          "every ISA",
          "[rotary][property][isa]") {
    if (std::numeric_limits<long double>::digits < 64) {
        WARN("long double has " << std::numeric_limits<long double>::digits << " bits here: no reference, not tested");
        return;
    }
    std::vector<float> angles;
    std::uint64_t state = 0x9E3779B97F4A7C15u;
    const auto next = [&] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    for (int i = 0; i < 20000; ++i) {
        // Every finite float magnitude: random bit patterns below infinity, either sign.
        auto bits = static_cast<std::uint32_t>(next() % 0x7F800000u);
        if (i % 2 == 1) bits |= 0x80000000u;
        float a = 0;
        std::memcpy(&a, &bits, sizeof a);
        angles.push_back(a);
    }
    for (int i = 0; i < 20000; ++i) {
        // Angles of RoPE positions: up to 2^24 and past the kernel's 2^25.
        angles.push_back(static_cast<float>(next() % (std::uint64_t{1} << 24)) * 0.731f);
        angles.push_back(static_cast<float>(next() % (std::uint64_t{1} << 53)));
    }
    for (const float a : {0.0f, -0.0f, 0x1p25f, -0x1p25f, std::nextafter(0x1p25f, 0.0f), 0x1p24f, 1.0f, 3.14159265f,
                          1.5707964f, 0x1p127f, std::numeric_limits<float>::max(), 16367173.0f * 0x1p72f})
        angles.push_back(a);
    for_each_isa([&](seqembed::Isa) {
        Index wrong = 0;
        const int block = seqembed::detail::exact_sin_cos_block_size;
        std::vector<double> sines(static_cast<std::size_t>(block)), cosines(static_cast<std::size_t>(block));
        for (std::size_t first = 0; first < angles.size(); first += static_cast<std::size_t>(block)) {
            const int count = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(block), angles.size() - first));
            seqembed::detail::sin_cos_of_float_angles(angles.data() + first, count, sines.data(), cosines.data());
            for (int i = 0; i < count; ++i) {
                const float a = angles[first + static_cast<std::size_t>(i)];
                const bool right = static_cast<float>(sines[static_cast<std::size_t>(i)]) == reference_sin(a) &&
                                   static_cast<float>(cosines[static_cast<std::size_t>(i)]) == reference_cos(a);
                if (!right && wrong++ < 5)
                    FAIL_CHECK("angle " << a << ": sin " << static_cast<float>(sines[static_cast<std::size_t>(i)])
                                        << " vs " << reference_sin(a) << ", cos "
                                        << static_cast<float>(cosines[static_cast<std::size_t>(i)]) << " vs "
                                        << reference_cos(a));
            }
        }
        CHECK(wrong == 0);
    });
}

TEST_CASE("rotary: Follow rows are the framework's float32 angles' correctly rounded cos and sin, below and past "
          "2^25, on every ISA",
          "[rotary][property][isa]") {
    if (std::numeric_limits<long double>::digits < 64) {
        WARN("long double has " << std::numeric_limits<long double>::digits << " bits here: no reference, not tested");
        return;
    }
    RotaryOptions llama = RotaryOptions::llama3_8b();
    RotaryOptions yarn = RotaryOptions::hugging_face(64);  // an attention factor != 1
    yarn.scaling = RotaryScaling::yarn;
    yarn.factor = 4;
    yarn.original_max_position_embeddings = 4096;
    std::uint64_t state = 12345;
    const auto next = [&] {
        state = state * 6364136223846793005u + 1442695040888963407u;
        return state >> 11;
    };
    for (RotaryOptions options : {llama, yarn}) {
        options.precision = TablePrecision::follow_scalar;
        options.max_positions = 1;
        options.beyond = BeyondTable::compute;
        const RotaryEmbedding<float> rope(options);
        const auto scale = static_cast<float>(rope.attention_scaling());
        std::vector<std::int64_t> positions{1, 4095, 131071, (std::int64_t{1} << 25) + 1, std::int64_t{1} << 40,
                                            (std::int64_t{1} << 53) - 1};
        for (int i = 0; i < 200; ++i) positions.push_back(static_cast<std::int64_t>(next() % (std::uint64_t{1} << 24)));
        for (int i = 0; i < 200; ++i) positions.push_back(static_cast<std::int64_t>(next() % (std::uint64_t{1} << 53)));
        for_each_isa([&](seqembed::Isa) {
            Index wrong = 0;
            RowMatrix<float> cos, sin;
            for (const std::int64_t p : positions) {
                row_at(rope, p, cos, sin);
                for (Index i = 0; i < rope.pairs(); ++i) {
                    const float angle = rope.inverse_frequencies()[static_cast<std::size_t>(i)] * static_cast<float>(p);
                    float c = reference_cos(angle), s = reference_sin(angle);
                    if (scale != 1.0f) {
                        c = c * scale;
                        s = s * scale;
                    }
                    if ((cos(0, i) != c || sin(0, i) != s) && wrong++ < 5)
                        FAIL_CHECK("position " << p << ", frequency " << i << ", angle " << angle);
                }
            }
            CHECK(wrong == 0);
        });
    }
}

TEST_CASE("rotary: Given inverse frequencies are taken as they are, in both precisions", "[rotary]") {
    seqembed::RotaryOptions options = seqembed::RotaryOptions::hugging_face(8);
    options.max_positions = 64;
    // ESM-2's buffer: 1 / 10000^(2i/8) rounded through float16.
    options.inverse_frequencies = {1.0f, 0.099975586f, 0.0099945068f, 0.00099992752f};
    for (const seqembed::TablePrecision precision :
         {seqembed::TablePrecision::exact, seqembed::TablePrecision::follow_scalar}) {
        options.precision = precision;
        const seqembed::RotaryEmbedding<double> rope(options);
        CHECK(rope.inverse_frequencies() == options.inverse_frequencies);
        seqembed::RowMatrix<double> cos(1, 4), sin(1, 4);
        for (const std::int64_t position : {0, 1, 7, 63}) {
            rope.forward_into(position, cos, sin);
            for (Eigen::Index i = 0; i < 4; ++i) {
                const double f = options.inverse_frequencies[static_cast<std::size_t>(i)];
                // exact: the angle position x f exactly (a float times a small integer fits a
                // double); follow: rounded to float first, as torch's float32 product.
                const double angle = precision == seqembed::TablePrecision::exact
                                         ? static_cast<double>(position) * f
                                         : static_cast<double>(static_cast<float>(position) * static_cast<float>(f));
                // exact: correctly rounded to double; follow: to float32, whatever the table stores.
                const double bound = precision == seqembed::TablePrecision::exact ? 1e-15 : 6e-8;
                CHECK(std::abs(cos(0, i) - std::cos(angle)) <= bound);
                CHECK(std::abs(sin(0, i) - std::sin(angle)) <= bound);
            }
        }
    }
    options.precision = seqembed::TablePrecision::exact;
    options.inverse_frequencies.pop_back();
    CHECK_THROWS_WITH(seqembed::RotaryEmbedding<float>(options),
                      Catch::Contains("inverse_frequencies has 3 values, expected rotary_dim / 2 = 4"));
    options.inverse_frequencies = {1.0f, 0.5f, -0.25f, 0.125f};
    CHECK_THROWS_WITH(seqembed::RotaryEmbedding<float>(options),
                      Catch::Contains("inverse_frequencies[2] is -0.25, not a finite positive float"));
    options.inverse_frequencies = {1.0f, 0.5f, 0.25f, 0.125f};
    options.scaling = seqembed::RotaryScaling::linear;
    options.factor = 2.0;
    CHECK_THROWS_WITH(seqembed::RotaryEmbedding<float>(options), Catch::Contains("they take no linear rule"));
}
