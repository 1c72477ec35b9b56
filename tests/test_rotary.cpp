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
#include <vector>

#include "bit_equal.hpp"
#include "catch.hpp"
#include "fixtures/rope/rope_cases.hpp"

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

#if defined(__SANITIZE_ADDRESS__)
#define SEQEMBED_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SEQEMBED_TEST_ASAN 1
#endif
#endif

namespace {

/// Whether a failed allocation can be observed: under AddressSanitizer a huge malloc aborts
/// unless ASAN_OPTIONS has allocator_may_return_null=1 (as the sanitize test preset sets).
bool huge_allocations_fail_softly() {
#ifdef SEQEMBED_TEST_ASAN
    const char* options = std::getenv("ASAN_OPTIONS");
    return options != nullptr && std::strstr(options, "allocator_may_return_null=1") != nullptr;
#else
    return true;
#endif
}

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
    } else if (starts("longrope_phi3")) {
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

RowMatrix<float> matrix_of(const double* values, Index rows, Index cols) {
    RowMatrix<float> out(rows, cols);
    for (Index i = 0; i < rows * cols; ++i) out.data()[i] = static_cast<float>(values[i]);
    return out;
}

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
    // up to 32 where YaRN's ramp bounds come from logarithms (gpt-oss, truncate false: 24.5
    // measured), and 2^12 for LongRoPE, whose factor lists are doubles (the config's decimals
    // rounded to double, 2^-53 relative; 1735 measured). At position 999999 that is below 5.4e-14
    // absolute for every rule but LongRoPE (measured 5.4e-14 worst).
    for (const fx::FrequencyCase& c : fx::frequency_cases) {
        INFO("case " << c.name);
        const std::string name = c.name;
        const double k = name.rfind("longrope", 0) == 0 ? 4096 : name.rfind("yarn_gptoss", 0) == 0 ? 32 : 2;
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
        bool threw = false;
        try {
            RotaryEmbedding<float> rope(options);
        } catch (const seqembed::value_error& e) {
            threw = true;
            const std::string message = e.what();
            INFO("message: " << message);
            CHECK(message.rfind("seqembed: ", 0) == 0);
            CHECK(message.find(words) != std::string::npos);
        }
        CHECK(threw);
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
                o.high_freq_factor = 1;
            }),
            "high_freq_factor 1");
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
        using Error = decltype(error_type);
        bool threw = false;
        try {
            call();
        } catch (const Error& e) {
            threw = true;
            const std::string message = e.what();
            INFO("message: " << message);
            CHECK(message.find(words) != std::string::npos);
        }
        CHECK(threw);
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
