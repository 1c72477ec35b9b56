// The "API" bad inputs of docs/bad-inputs.md, items 1 to 10, for every component they apply to:
// the exception type (index_error, shape_error, value_error, all seqembed::error), a message
// that starts with "seqembed:" and names the value and the limit, and objects (and the caller's
// output) left as they were by a call that threw.
#include <seqembed/seqembed.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bit_equal.hpp"
#include "catch.hpp"
#include "test_support.hpp"

using seqembed::Dropout;
using seqembed::IdMatrix;
using seqembed::Index;
using seqembed::InputPipeline;
using seqembed::LearnedPositionalEmbedding;
using seqembed::LearnedPositionsOptions;
using seqembed::MaskMatrix;
using seqembed::Padding;
using seqembed::PaddingSide;
using seqembed::PipelineOptions;
using seqembed::RowMatrix;
using seqembed::SinusoidalOptions;
using seqembed::SinusoidalPositionalEncoding;
using seqembed::TokenEmbedding;
using seqembed::TokenEmbeddingOptions;
using test_support::huge_allocations_fail_softly;
using test_support::message_of;
using test_support::require_parts;

namespace {

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t int64_min = std::numeric_limits<std::int64_t>::min();

template <typename Scalar>
using LearnedPipeline = InputPipeline<Scalar, LearnedPositionalEmbedding<Scalar>>;

/// True if text holds a '-' directly followed by a digit (a negative, perhaps wrapped, number).
bool has_negative_number(const std::string& text) {
    for (std::size_t i = 0; i + 1 < text.size(); ++i)
        if (text[i] == '-' && text[i + 1] >= '0' && text[i + 1] <= '9') return true;
    return false;
}

/// batch x seq ids, id (b, t) = (7 * b + 3 * t) % vocab.
IdMatrix valid_ids(Index batch, Index seq, Index vocab) {
    IdMatrix ids(batch, seq);
    for (Index b = 0; b < batch; ++b)
        for (Index t = 0; t < seq; ++t) ids(b, t) = (7 * b + 3 * t) % vocab;
    return ids;
}

template <typename Scalar>
RowMatrix<Scalar> sentinel(Index rows, Index cols) {
    return RowMatrix<Scalar>::Constant(rows, cols, Scalar(12345));
}

/// `call` given a rows x cols output of sentinels throws a shape_error whose message holds
/// `parts`, and leaves the output as it was.
template <typename Call>
void require_shape_refused(Index rows, Index cols, std::initializer_list<std::string> parts,
                           Call&& call) {
    RowMatrix<float> out = sentinel<float>(rows, cols);
    require_parts(message_of<seqembed::shape_error>([&] { call(out); }), parts);
    REQUIRE(bit_equal(out, sentinel<float>(rows, cols)));
}

template <typename Scalar>
InputPipeline<Scalar> sinusoidal_pipeline(Index vocab, Index d_model, Index max_positions = 64,
                                          double p = 0.0) {
    SinusoidalOptions options;
    options.max_positions = max_positions;
    return InputPipeline<Scalar>(TokenEmbedding<Scalar>(vocab, d_model),
                                 SinusoidalPositionalEncoding<Scalar>(d_model, options),
                                 PipelineOptions{p, 7});
}

template <typename Scalar>
LearnedPipeline<Scalar> learned_pipeline(
    Index vocab, Index d_model, Index max_positions = 64, double p = 0.0,
    LearnedPositionsOptions options = LearnedPositionsOptions::bart()) {
    options.seed = 3;
    return LearnedPipeline<Scalar>(
        TokenEmbedding<Scalar>(vocab, d_model),
        LearnedPositionalEmbedding<Scalar>(max_positions, d_model, options), PipelineOptions{p, 7});
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// 1. Token id >= vocab_size, or negative (no Python-style wrap-around).
// ---------------------------------------------------------------------------------------------
TEST_CASE("bad input 1: token ids outside the vocabulary", "[bad_inputs]") {
    constexpr Index vocab = 32000;
    constexpr Index d_model = 4;
    const TokenEmbedding<float> embedding(vocab, d_model);
    const auto sinusoidal = sinusoidal_pipeline<float>(vocab, d_model);
    const auto learned = learned_pipeline<float>(vocab, d_model);

    struct Bad {
        Index batch;
        Index position;
        std::int64_t id;
    };
    const std::vector<Bad> bad_ids{{3, 17, 40001},  {0, 0, vocab},     {1, 2, -1},
                                   {2, 19, -vocab}, {3, 0, int64_min}, {0, 5, int64_max}};
    for (const Bad& bad : bad_ids) {
        CAPTURE(bad.batch, bad.position, bad.id);
        IdMatrix ids = valid_ids(4, 20, vocab);
        ids(bad.batch, bad.position) = bad.id;
        const std::initializer_list<std::string> parts{"token id " + std::to_string(bad.id),
                                                       "(batch " + std::to_string(bad.batch) +
                                                           ", position " +
                                                           std::to_string(bad.position) + ")",
                                                       "[0, 32000)"};

        SECTION("TokenEmbedding::forward") {
            require_parts(
                message_of<seqembed::index_error>([&] { (void)embedding.forward(ids); }), parts);
        }
        SECTION("TokenEmbedding::forward_into") {
            RowMatrix<float> out = sentinel<float>(80, d_model);
            require_parts(
                message_of<seqembed::index_error>([&] { embedding.forward_into(ids, out); }),
                parts);
            REQUIRE(bit_equal(out, sentinel<float>(80, d_model)));
        }
        SECTION("InputPipeline, sinusoidal positions") {
            require_parts(
                message_of<seqembed::index_error>([&] { (void)sinusoidal.forward(ids); }), parts);
        }
        SECTION("InputPipeline, learned positions") {
            require_parts(message_of<seqembed::index_error>([&] { (void)learned.forward(ids); }),
                            parts);
        }
    }

    SECTION("the edges of the vocabulary are fine") {
        IdMatrix ids(1, 2);
        ids << 0, vocab - 1;
        const RowMatrix<float> out = embedding.forward(ids);
        REQUIRE(out.row(0) == embedding.table().row(0) * embedding.scale());
        REQUIRE(out.row(1) == embedding.table().row(vocab - 1) * embedding.scale());
        REQUIRE_NOTHROW(sinusoidal.forward(ids));
        REQUIRE_NOTHROW(learned.forward(ids));
    }

    SECTION("only real tokens are looked up: a padded slot may hold any id") {
        IdMatrix ids = valid_ids(2, 5, vocab);
        ids(0, 4) = -7;      // padding of sequence 0
        ids(1, 3) = 999999;  // padding of sequence 1
        const std::vector<std::int64_t> lengths{4, 3};
        const RowMatrix<float> a = sinusoidal.forward(ids, Padding::right(lengths));
        REQUIRE(a.row(4).isZero(0));
        REQUIRE(a.row(8).isZero(0));
        REQUIRE_FALSE(a.row(3).isZero(0));
        const RowMatrix<float> b = learned.forward(ids, Padding::right(lengths));
        REQUIRE(b.row(4).isZero(0));
        REQUIRE(b.row(8).isZero(0));
        REQUIRE_FALSE(b.row(3).isZero(0));
        // The same ids in real slots are errors.
        ids(0, 4) = -7;
        const std::vector<std::int64_t> full{5, 3};
        require_parts(message_of<seqembed::index_error>(
                            [&] { (void)sinusoidal.forward(ids, Padding::right(full)); }),
                        {"token id -7", "(batch 0, position 4)", "[0, 32000)"});
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Sequence longer than the position table; offset + length past the table or overflowing.
// ---------------------------------------------------------------------------------------------
TEST_CASE("bad input 2: positions past the table", "[bad_inputs]") {
    constexpr Index d_model = 8;

    SECTION("SinusoidalPositionalEncoding") {
        SinusoidalOptions options;
        options.max_positions = 16;
        const SinusoidalPositionalEncoding<float> pe(d_model, options);
        require_parts(message_of<seqembed::index_error>([&] { (void)pe.rows(0, 17); }),
                        {"17", "16 rows"});
        require_parts(message_of<seqembed::index_error>([&] { (void)pe.rows(10, 7); }),
                        {"10", "7", "16 rows"});
        require_parts(message_of<seqembed::index_error>([&] { (void)pe.forward(0, 17); }),
                        {"17", "16 rows"});
        RowMatrix<float> out = sentinel<float>(17, d_model);
        REQUIRE_THROWS_AS(pe.forward_into(0, out), seqembed::index_error);
        REQUIRE(bit_equal(out, sentinel<float>(17, d_model)));
        REQUIRE_THROWS_AS(pe.rows(17, 0), seqembed::index_error);
        REQUIRE_THROWS_AS(pe.rows(-1, 2), seqembed::index_error);
        REQUIRE_THROWS_AS(pe.forward(-1, 2), seqembed::index_error);
        REQUIRE_THROWS_AS(pe.forward(int64_max, 1), seqembed::index_error);
        REQUIRE_THROWS_AS(pe.forward(int64_max - 1, 5), seqembed::index_error);
        // Up to the end is fine.
        REQUIRE(pe.forward(9, 7) == pe.table().bottomRows(7));
        REQUIRE(pe.rows(16, 0).rows() == 0);

        // Computing past the table: allowed, but not past int64 or 2^53.
        options.beyond = seqembed::BeyondTable::compute;
        const SinusoidalPositionalEncoding<float> computing(d_model, options);
        SinusoidalOptions longer = options;
        longer.max_positions = 40;
        const SinusoidalPositionalEncoding<float> reference(d_model, longer);
        REQUIRE(computing.forward(10, 30) == reference.table().middleRows(10, 30));
        REQUIRE_THROWS_AS(computing.rows(0, 17), seqembed::index_error);  // views: the table only
        require_parts(
            message_of<seqembed::index_error>([&] { (void)computing.forward(int64_max - 1, 5); }),
            {std::to_string(int64_max - 1)});
        REQUIRE_THROWS_AS(computing.forward(int64_max, 1), seqembed::index_error);
        REQUIRE_THROWS_AS(computing.forward(std::int64_t{1} << 60, 1), seqembed::index_error);
        REQUIRE_THROWS_AS(computing.forward(-3, 1), seqembed::index_error);
    }

    SECTION("LearnedPositionalEmbedding") {
        const RowMatrix<float> table = RowMatrix<float>::Ones(16, d_model);
        const auto positions =
            LearnedPositionalEmbedding<float>::from_weights(table, LearnedPositionsOptions::bart());
        REQUIRE(positions.capacity() == 14);
        require_parts(message_of<seqembed::index_error>([&] { (void)positions.rows(0, 15); }),
                        {"position 14", "table row 16", "offset 2", "16 rows"});
        require_parts(message_of<seqembed::index_error>([&] { (void)positions.rows(10, 5); }),
                        {"position 14", "table row 16", "offset 2", "16 rows"});
        REQUIRE_THROWS_AS(positions.forward(0, 15), seqembed::index_error);
        RowMatrix<float> out = sentinel<float>(15, d_model);
        REQUIRE_THROWS_AS(positions.forward_into(0, out), seqembed::index_error);
        REQUIRE(bit_equal(out, sentinel<float>(15, d_model)));
        REQUIRE_THROWS_AS(positions.rows(-1, 1), seqembed::index_error);
        REQUIRE(positions.rows(10, 4).rows() == 4);
    }

    SECTION("InputPipeline with sinusoidal positions") {
        const auto pipeline = sinusoidal_pipeline<float>(50, d_model, /*max_positions=*/16);
        require_parts(message_of<seqembed::index_error>(
                            [&] { (void)pipeline.forward(valid_ids(2, 17, 50)); }),
                        {"17", "16 rows"});
        const IdMatrix ids = valid_ids(2, 7, 50);
        require_parts(message_of<seqembed::index_error>(
                            [&] { (void)pipeline.forward(ids, Padding::none(), 10); }),
                        {"10", "16 rows"});
        REQUIRE_NOTHROW(pipeline.forward(ids, Padding::none(), 9));
        REQUIRE_THROWS_AS(pipeline.forward(ids, Padding::none(), -1), seqembed::index_error);
        // Left padding: positions count real tokens, so 16 real tokens of 20 slots fit.
        const std::vector<std::int64_t> lengths{16, 3};
        REQUIRE_NOTHROW(pipeline.forward(valid_ids(2, 20, 50), Padding::left(lengths)));
        const std::vector<std::int64_t> too_long{17, 3};
        REQUIRE_THROWS_AS(pipeline.forward(valid_ids(2, 20, 50), Padding::left(too_long)),
                          seqembed::index_error);
    }

    SECTION("InputPipeline with learned positions") {
        const auto pipeline = learned_pipeline<float>(50, d_model, /*max_positions=*/16);
        require_parts(message_of<seqembed::index_error>(
                            [&] { (void)pipeline.forward(valid_ids(2, 15, 50)); }),
                        {"position 14", "table row 16", "offset 2", "16 rows"});
        REQUIRE_NOTHROW(pipeline.forward(valid_ids(2, 14, 50)));
        const IdMatrix ids = valid_ids(2, 5, 50);
        require_parts(message_of<seqembed::index_error>(
                            [&] { (void)pipeline.forward(ids, Padding::none(), 10); }),
                        {"position 14", "16 rows"});
        REQUIRE_NOTHROW(pipeline.forward(ids, Padding::none(), 9));
        REQUIRE_THROWS_AS(pipeline.forward(ids, Padding::none(), -1), seqembed::index_error);
    }
}

TEST_CASE("bad input 2: a step offset near INT64_MAX, sinusoidal positions", "[bad_inputs]") {
    const IdMatrix ids = valid_ids(2, 5, 50);
    SECTION("a table that throws past its end") {
        const auto pipeline = sinusoidal_pipeline<float>(50, 4);
        for (const std::int64_t step : {int64_max - 2, int64_max - 4, int64_max}) {
            CAPTURE(step);
            const std::string message = message_of<seqembed::index_error>(
                [&] { (void)pipeline.forward(ids, Padding::none(), step); });
            require_parts(message, {});
            REQUIRE_FALSE(has_negative_number(message));
        }
    }
    SECTION("a table that computes past its end") {
        SinusoidalOptions options = SinusoidalOptions::tensor2tensor();
        options.max_positions = 8;
        const InputPipeline<float> pipeline(TokenEmbedding<float>(50, 4),
                                            SinusoidalPositionalEncoding<float>(4, options));
        REQUIRE_NOTHROW(pipeline.forward(ids, Padding::none(), 1000));
        for (const std::int64_t step : {int64_max - 2, int64_max - 4, int64_max}) {
            CAPTURE(step);
            const std::string message = message_of<seqembed::index_error>(
                [&] { (void)pipeline.forward(ids, Padding::none(), step); });
            require_parts(message, {});
            REQUIRE_FALSE(has_negative_number(message));
        }
    }
}

// The learned table's message computes first + count - 1 and offset + first + count - 1 in
// int64: for a step offset near INT64_MAX that is signed overflow (UBSan traps; otherwise the
// message shows a wrapped, negative position).
TEST_CASE("bad input 2: a step offset near INT64_MAX, learned positions", "[bad_inputs]") {
    const IdMatrix ids = valid_ids(2, 5, 50);
    for (const std::int64_t offset : {std::int64_t{0}, std::int64_t{2}}) {
        LearnedPositionsOptions options;
        options.offset = offset;
        const auto pipeline = learned_pipeline<float>(50, 4, 64, 0.0, options);
        for (const std::int64_t step : {int64_max - 2, int64_max - 4, int64_max}) {
            CAPTURE(offset, step);
            const std::string message = message_of<seqembed::index_error>(
                [&] { (void)pipeline.forward(ids, Padding::none(), step); });
            require_parts(message, {"64 rows"});
            REQUIRE_FALSE(has_negative_number(message));
        }
    }
}

// SinusoidalPositionalEncoding::forward allocates count rows before it checks count, so a
// negative count reaches Eigen's resize (an assertion, or a huge allocation under NDEBUG).
TEST_CASE("bad input 2: a negative count for SinusoidalPositionalEncoding::forward",
          "[bad_inputs]") {
    const SinusoidalPositionalEncoding<float> pe(8);
    REQUIRE_THROWS_AS(pe.rows(0, -1), seqembed::index_error);
    REQUIRE_THROWS_AS(pe.forward(0, -1), seqembed::index_error);
}

// ---------------------------------------------------------------------------------------------
// 3. d_model = 0; vocab_size = 0; max positions = 0; vocab_size x d_model overflowing.
// ---------------------------------------------------------------------------------------------
TEMPLATE_TEST_CASE("bad input 3: zero, negative and overflowing sizes", "[bad_inputs]", float,
                   double) {
    using S = TestType;
    const RowMatrix<S> some = RowMatrix<S>::Ones(4, 4);

    SECTION("TokenEmbedding") {
        require_parts(message_of<seqembed::value_error>([] { TokenEmbedding<S>(0, 8); }),
                        {"vocab_size", "0"});
        require_parts(message_of<seqembed::value_error>([] { TokenEmbedding<S>(8, 0); }),
                        {"d_model", "0"});
        require_parts(message_of<seqembed::value_error>([] { TokenEmbedding<S>(-3, 8); }),
                        {"vocab_size", "-3"});
        require_parts(message_of<seqembed::value_error>([] { TokenEmbedding<S>(8, -1); }),
                        {"d_model", "-1"});
        REQUIRE_THROWS_AS(TokenEmbedding<S>::from_weights(RowMatrix<S>(0, 8)),
                          seqembed::value_error);
        REQUIRE_THROWS_AS(TokenEmbedding<S>::from_weights(RowMatrix<S>(8, 0)),
                          seqembed::value_error);
        require_parts(
            message_of<seqembed::value_error>([] { TokenEmbedding<S>::view(nullptr, 4, 4); }),
            {"null"});
        REQUIRE_THROWS_AS(TokenEmbedding<S>::view(some.data(), 0, 4), seqembed::value_error);
        REQUIRE_THROWS_AS(TokenEmbedding<S>::view(some.data(), 4, 0), seqembed::value_error);
    }
    SECTION("SinusoidalPositionalEncoding") {
        require_parts(
            message_of<seqembed::value_error>([] { SinusoidalPositionalEncoding<S>{0}; }),
            {"d_model", "0"});
        require_parts(
            message_of<seqembed::value_error>([] { SinusoidalPositionalEncoding<S>{-2}; }),
            {"d_model", "-2"});
        SinusoidalOptions options;
        options.max_positions = 0;
        require_parts(
            message_of<seqembed::value_error>([&] { SinusoidalPositionalEncoding<S>(8, options); }),
            {"max_positions", "0"});
    }
    SECTION("LearnedPositionalEmbedding") {
        require_parts(
            message_of<seqembed::value_error>([] { LearnedPositionalEmbedding<S>(0, 8); }),
            {"max_positions", "0"});
        require_parts(
            message_of<seqembed::value_error>([] { LearnedPositionalEmbedding<S>(8, 0); }),
            {"d_model", "0"});
        REQUIRE_THROWS_AS(LearnedPositionalEmbedding<S>::from_weights(RowMatrix<S>(0, 8)),
                          seqembed::value_error);
        REQUIRE_THROWS_AS(LearnedPositionalEmbedding<S>::view(nullptr, 4, 4),
                          seqembed::value_error);
        REQUIRE_THROWS_AS(LearnedPositionalEmbedding<S>::view(some.data(), 0, 4),
                          seqembed::value_error);
    }
    SECTION("sizes whose product overflows Eigen::Index or the byte count") {
        // (2^40)^2 elements overflow Index; 2^30 x 2^31 and 2^31 x 2^31 fit Index but not bytes.
        const Index big = Index{1} << 40;
        for (const auto& shape : {std::pair<Index, Index>{big, big},
                                  std::pair<Index, Index>{Index{1} << 30, Index{1} << 31},
                                  std::pair<Index, Index>{Index{1} << 31, Index{1} << 31},
                                  std::pair<Index, Index>{Index{1} << 62, 2}}) {
            const Index rows = shape.first;
            const Index cols = shape.second;
            CAPTURE(rows, cols);
            const std::initializer_list<std::string> parts{std::to_string(rows),
                                                           std::to_string(cols), "overflows"};
            require_parts(
                message_of<seqembed::value_error>([&] { TokenEmbedding<S>(rows, cols); }), parts);
            require_parts(message_of<seqembed::value_error>(
                                [&] { LearnedPositionalEmbedding<S>(rows, cols); }),
                            parts);
            SinusoidalOptions options;
            options.max_positions = rows;
            require_parts(message_of<seqembed::value_error>(
                                [&] { SinusoidalPositionalEncoding<S>(cols, options); }),
                            parts);
            // Views check the shape too, before anything reads the memory.
            require_parts(message_of<seqembed::value_error>(
                                [&] { TokenEmbedding<S>::view(some.data(), rows, cols); }),
                            parts);
            require_parts(message_of<seqembed::value_error>([&] {
                                LearnedPositionalEmbedding<S>::view(some.data(), rows, cols);
                            }),
                            parts);
        }
    }
}

TEMPLATE_TEST_CASE("bad input 3: a table too large for memory is a seqembed::error",
                   "[bad_inputs][memory]", float, double) {
    if (!huge_allocations_fail_softly()) {
        WARN("skipped under AddressSanitizer: set ASAN_OPTIONS=allocator_may_return_null=1");
        return;
    }
    // 2^56 elements: addressable, but 2^58 or 2^59 bytes, more than any address space.
    const Index rows = Index{1} << 29;
    const Index cols = Index{1} << 27;
    require_parts(
        message_of<seqembed::value_error>([&] { TokenEmbedding<TestType>(rows, cols); }),
        {std::to_string(rows), std::to_string(cols)});
    require_parts(message_of<seqembed::value_error>(
                        [&] { LearnedPositionalEmbedding<TestType>(rows, cols); }),
                    {std::to_string(rows), std::to_string(cols)});
}

// The sinusoidal table is resized (Eigen) and its column plan allocated (std::vector) without
// catching std::bad_alloc, unlike RowTable.
TEMPLATE_TEST_CASE("bad input 3: a sinusoidal table too large for memory is a seqembed::error",
                   "[bad_inputs][memory]", float, double) {
    if (!huge_allocations_fail_softly()) {
        WARN("skipped under AddressSanitizer: set ASAN_OPTIONS=allocator_may_return_null=1");
        return;
    }
    SinusoidalOptions options;
    options.max_positions = Index{1} << 42;  // x 64 columns: 2^48 elements, 2^50 or 2^51 bytes
    CHECK_THROWS_AS(SinusoidalPositionalEncoding<TestType>(64, options), seqembed::error);
#ifndef SEQEMBED_TEST_ASAN  // ASan's operator new aborts on a huge size whatever its options
    options.max_positions = 1;
    CHECK_THROWS_AS(SinusoidalPositionalEncoding<TestType>(Index{1} << 50, options),
                    seqembed::error);
#endif
}

// ---------------------------------------------------------------------------------------------
// 4. Odd d_model for sinusoidal encodings: defined, documented, never out of bounds.
// ---------------------------------------------------------------------------------------------
namespace {

/// The value the options define for row `row` (position offset + row), column j, in
/// long double.
long double sinusoidal_reference(const SinusoidalOptions& options, Index d, std::int64_t row,
                                 Index j) {
    const Index half = d / 2;
    const bool odd = d % 2 != 0;
    const bool extra_sine = odd && options.odd_width == seqembed::OddWidth::extra_sine;
    const Index sines = half + (extra_sine ? 1 : 0);
    const bool paper = options.family == seqembed::FrequencyFamily::paper;
    enum { sine, cosine, zero } kind = zero;
    Index k = 0;
    if (options.layout == seqembed::SinCosLayout::interleaved) {
        k = j / 2;
        kind = j % 2 == 0 ? sine : cosine;
        if (odd && j == d - 1 && !extra_sine) kind = zero;
    } else if (j < sines) {
        k = j;
        kind = sine;
    } else if (j < sines + half) {
        k = j - sines;
        kind = cosine;
    }
    if (kind == zero) return 0.0L;
    const long double denominator = paper ? static_cast<long double>(d)
                                          : static_cast<long double>(std::max<Index>(half - 1, 1));
    const long double exponent =
        (paper ? 2.0L * static_cast<long double>(k) : static_cast<long double>(k)) / denominator;
    const long double angle = static_cast<long double>(options.offset + row) *
                              std::pow(static_cast<long double>(options.base), -exponent);
    return kind == sine ? std::sin(angle) : std::cos(angle);
}

}  // namespace

TEMPLATE_TEST_CASE("bad input 4: an odd d_model gives a defined sinusoidal table", "[bad_inputs]",
                   float, double) {
    using S = TestType;
    const double tolerance = std::is_same_v<S, float> ? 1e-6 : 1e-13;
    struct Config {
        const char* name;
        SinusoidalOptions options;
    };
    SinusoidalOptions paper_zero = SinusoidalOptions::paper();
    paper_zero.odd_width = seqembed::OddWidth::zero_column;
    SinusoidalOptions concatenated_zero = SinusoidalOptions::hf_marian();
    concatenated_zero.odd_width = seqembed::OddWidth::zero_column;
    std::vector<Config> configs{
        {"paper (extra sine)", SinusoidalOptions::paper()},
        {"paper, zero column", paper_zero},
        {"tensor2tensor (zero column)", SinusoidalOptions::tensor2tensor()},
        {"fairseq", SinusoidalOptions::fairseq()},
        {"hf_marian (concatenated, extra sine)", SinusoidalOptions::hf_marian()},
        {"concatenated, zero column", concatenated_zero}};
    for (Config& config : configs) {
        config.options.max_positions = 24;
        config.options.beyond = seqembed::BeyondTable::compute;
    }

    for (const Config& config : configs) {
        for (const Index d : {Index{1}, Index{3}, Index{5}, Index{7}, Index{9}, Index{33}}) {
            CAPTURE(config.name, d);
            const SinusoidalOptions& options = config.options;
            SinusoidalPositionalEncoding<S> pe(d, options);
            REQUIRE(pe.d_model() == d);
            // Rows of the table and rows computed past it.
            const RowMatrix<S> rows = pe.forward(0, 40);
            REQUIRE(rows.cols() == d);
            REQUIRE(rows.allFinite());
            for (Index r = 0; r < rows.rows(); ++r)
                for (Index j = 0; j < d; ++j) {
                    CAPTURE(r, j);
                    const auto expected =
                        static_cast<double>(sinusoidal_reference(options, d, r, j));
                    REQUIRE_THAT(static_cast<double>(rows(r, j)), WithinAbs(expected, tolerance));
                }

            // The last column, as OddWidth says.
            const bool extra_sine = options.odd_width == seqembed::OddWidth::extra_sine;
            const bool interleaved = options.layout == seqembed::SinCosLayout::interleaved;
            const Index last = d - 1;
            if (!extra_sine) {
                REQUIRE(rows.col(last).isZero(0));
            } else if (interleaved) {
                // One more sine, of frequency (d - 1) / 2: base^(-(d - 1) / d).
                for (Index r = 0; r < rows.rows(); ++r) {
                    const double angle = static_cast<double>(options.offset + r) *
                                         std::pow(options.base, -static_cast<double>(d - 1) /
                                                                    static_cast<double>(d));
                    REQUIRE_THAT(static_cast<double>(rows(r, last)),
                                 WithinAbs(std::sin(angle), tolerance * 10));
                }
            } else {
                // Concatenated: the sine half has (d + 1) / 2 columns, the last sine is at
                // column d / 2, and the last column is a cosine.
                for (Index r = 0; r < rows.rows(); ++r) {
                    const double angle = static_cast<double>(options.offset + r) *
                                         std::pow(options.base, -static_cast<double>(d - 1) /
                                                                    static_cast<double>(d));
                    REQUIRE_THAT(static_cast<double>(rows(r, d / 2)),
                                 WithinAbs(std::sin(angle), tolerance * 10));
                }
                if (d > 1) REQUIRE(rows(0, last) == S(1));  // cos(0)
            }
            REQUIRE(rows.col(0).isZero(0) == (d == 1 && !extra_sine));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Dropout p < 0, p >= 1, or NaN.
// ---------------------------------------------------------------------------------------------
TEST_CASE("bad input 5: dropout probability below 0, at or above 1, or NaN", "[bad_inputs]") {
    struct Bad {
        double p;
        const char* printed;
    };
    const std::vector<Bad> bad{{-0.1, "-0.1"},
                               {1.0, "p = 1 "},
                               {1.5, "1.5"},
                               {std::numeric_limits<double>::quiet_NaN(), "nan"},
                               {std::numeric_limits<double>::infinity(), "inf"},
                               {-std::numeric_limits<double>::infinity(), "-inf"},
                               {-1e-300, "-1e-300"}};
    for (const Bad& b : bad) {
        CAPTURE(b.p);
        SECTION(std::string("Dropout, p = ") + b.printed) {
            require_parts(message_of<seqembed::value_error>([&] { Dropout(b.p, 1); }),
                            {b.printed, "[0, 1)"});
        }
        SECTION(std::string("InputPipeline, p = ") + b.printed) {
            require_parts(message_of<seqembed::value_error>(
                                [&] { (void)sinusoidal_pipeline<float>(10, 4, 16, b.p); }),
                            {b.printed, "[0, 1)"});
            require_parts(message_of<seqembed::value_error>(
                                [&] { (void)learned_pipeline<float>(10, 4, 16, b.p); }),
                            {b.printed, "[0, 1)"});
        }
    }
    SECTION("the edges of [0, 1) are accepted") {
        for (const double p : {0.0, -0.0, 0.5, 0.999, std::nextafter(1.0, 0.0)}) {
            CAPTURE(p);
            const Dropout dropout(p, 1);
            REQUIRE(dropout.p() == p);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 6. padding_idx outside [-vocab, vocab).
// ---------------------------------------------------------------------------------------------
TEST_CASE("bad input 6: padding_idx below -vocab or at or above vocab", "[bad_inputs]") {
    constexpr Index vocab = 100;
    constexpr Index d_model = 4;
    const RowMatrix<float> weights = RowMatrix<float>::Ones(vocab, d_model);
    for (const std::int64_t bad : {std::int64_t{vocab}, std::int64_t{-vocab - 1}, int64_max,
                                   int64_min, std::int64_t{1000}}) {
        CAPTURE(bad);
        TokenEmbeddingOptions options;
        options.padding_idx = bad;
        const std::initializer_list<std::string> parts{"padding_idx " + std::to_string(bad),
                                                       "[-100, 100)"};
        require_parts(message_of<seqembed::index_error>(
                            [&] { TokenEmbedding<float>(vocab, d_model, options); }),
                        parts);
        require_parts(message_of<seqembed::index_error>(
                            [&] { TokenEmbedding<float>::from_weights(weights, options); }),
                        parts);
        require_parts(message_of<seqembed::index_error>([&] {
                            TokenEmbedding<float>::view(weights.data(), vocab, d_model, options);
                        }),
                        parts);
    }

    struct Good {
        std::int64_t given;
        std::int64_t row;
    };
    for (const Good good : {Good{-vocab, 0}, Good{vocab - 1, vocab - 1}, Good{-1, vocab - 1},
                            Good{0, 0}, Good{-2, vocab - 2}}) {
        CAPTURE(good.given);
        TokenEmbeddingOptions options;
        options.padding_idx = good.given;
        options.seed = 11;
        const TokenEmbedding<float> embedding(vocab, d_model, options);
        REQUIRE(embedding.padding_idx() == good.row);
        // Seeded init zeroes that row, and that row only.
        for (Index r = 0; r < vocab; ++r) {
            CAPTURE(r);
            REQUIRE(embedding.table().row(r).isZero(0) == (r == good.row));
        }
        // Looking the padding id up gives a zero row.
        IdMatrix ids(1, 1);
        ids(0, 0) = good.row;
        REQUIRE(embedding.forward(ids).isZero(0));
        // Pre-trained weights are kept as given (as nn.Embedding.from_pretrained).
        const auto loaded = TokenEmbedding<float>::from_weights(weights, options);
        REQUIRE(loaded.padding_idx() == good.row);
        REQUIRE(loaded.table() == weights);
    }
}

// ---------------------------------------------------------------------------------------------
// 7. Pre-trained table of the wrong shape, or non-finite values where a check was asked for.
// ---------------------------------------------------------------------------------------------
TEMPLATE_TEST_CASE("bad input 7: pre-trained tables of the wrong shape or with non-finite values",
                   "[bad_inputs]", float, double) {
    using S = TestType;

    SECTION("embedding width != position width in InputPipeline") {
        const auto embedding = TokenEmbedding<S>::from_weights(RowMatrix<S>::Ones(50, 8));
        require_parts(message_of<seqembed::shape_error>([&] {
                            (void)InputPipeline<S>(embedding, SinusoidalPositionalEncoding<S>(6));
                        }),
                        {"8", "6"});
        const auto positions =
            LearnedPositionalEmbedding<S>::from_weights(RowMatrix<S>::Ones(512, 6));
        require_parts(message_of<seqembed::shape_error>(
                            [&] { (void)LearnedPipeline<S>(embedding, positions); }),
                        {"8", "6"});
        const auto narrow_embedding = TokenEmbedding<S>::from_weights(RowMatrix<S>::Ones(50, 6));
        require_parts(message_of<seqembed::shape_error>([&] {
                            (void)InputPipeline<S>(narrow_embedding,
                                                   SinusoidalPositionalEncoding<S>(8));
                        }),
                        {"8", "6"});
        // Matching widths are fine.
        REQUIRE_NOTHROW(LearnedPipeline<S>(narrow_embedding, positions));
    }

    SECTION("a learned table with no row for the first token") {
        const RowMatrix<S> two_rows = RowMatrix<S>::Ones(2, 8);
        require_parts(message_of<seqembed::index_error>([&] {
                            LearnedPositionalEmbedding<S>::from_weights(
                                two_rows, LearnedPositionsOptions::bart());
                        }),
                        {"offset 2", "[0, 2)"});
        LearnedPositionsOptions negative;
        negative.offset = -1;
        REQUIRE_THROWS_AS(LearnedPositionalEmbedding<S>::from_weights(two_rows, negative),
                          seqembed::index_error);
        REQUIRE_THROWS_AS(LearnedPositionalEmbedding<S>(4, 8, LearnedPositionsOptions::roberta(3)),
                          seqembed::index_error);
    }

    SECTION("non-finite values, checked and unchecked") {
        struct Bad {
            Index row;
            Index col;
            S value;
            const char* printed;
        };
        const std::vector<Bad> bad{{2, 3, std::numeric_limits<S>::quiet_NaN(), "nan"},
                                   {0, 0, std::numeric_limits<S>::infinity(), "inf"},
                                   {49, 7, -std::numeric_limits<S>::infinity(), "-inf"}};
        for (const Bad& b : bad) {
            CAPTURE(b.row, b.col, b.printed);
            RowMatrix<S> weights = RowMatrix<S>::Ones(50, 8);
            weights(b.row, b.col) = b.value;
            const std::initializer_list<std::string> parts{
                b.printed, "row " + std::to_string(b.row), "column " + std::to_string(b.col)};

            TokenEmbeddingOptions token_options;
            token_options.check_finite = true;
            LearnedPositionsOptions position_options;
            position_options.check_finite = true;
            require_parts(message_of<seqembed::value_error>(
                                [&] { TokenEmbedding<S>::from_weights(weights, token_options); }),
                            parts);
            require_parts(message_of<seqembed::value_error>([&] {
                                TokenEmbedding<S>::view(weights.data(), 50, 8, token_options);
                            }),
                            parts);
            require_parts(message_of<seqembed::value_error>([&] {
                                LearnedPositionalEmbedding<S>::from_weights(weights,
                                                                            position_options);
                            }),
                            parts);
            require_parts(message_of<seqembed::value_error>([&] {
                                LearnedPositionalEmbedding<S>::view(weights.data(), 50, 8,
                                                                    position_options);
                            }),
                            parts);

            // Without the check the values are taken as they are.
            token_options.check_finite = false;
            position_options.check_finite = false;
            const auto embedding = TokenEmbedding<S>::from_weights(weights, token_options);
            const auto positions =
                LearnedPositionalEmbedding<S>::from_weights(weights, position_options);
            const auto view = TokenEmbedding<S>::view(weights.data(), 50, 8, token_options);
            for (const auto& table : {embedding.table(), positions.table(), view.table()}) {
                REQUIRE_FALSE(std::isfinite(table(b.row, b.col)));
                REQUIRE(std::isnan(table(b.row, b.col)) == std::isnan(b.value));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 8. Output matrix of the wrong shape for a forward that writes into caller memory.
// ---------------------------------------------------------------------------------------------
TEST_CASE("bad input 8: forward_into with an output of the wrong shape", "[bad_inputs]") {
    constexpr Index d_model = 4;
    const IdMatrix ids = valid_ids(2, 3, 10);  // 6 tokens
    struct Shape {
        Index rows;
        Index cols;
    };
    const std::vector<Shape> wrong_token_shapes{{6, 5}, {5, 4}, {7, 4}, {0, 0}, {4, 6}};

    SECTION("TokenEmbedding") {
        const TokenEmbedding<float> embedding(10, d_model);
        for (const Shape s : wrong_token_shapes) {
            CAPTURE(s.rows, s.cols);
            require_shape_refused(s.rows, s.cols,
                                  {std::to_string(s.rows) + " x " + std::to_string(s.cols), "6 x 4"},
                                  [&](RowMatrix<float>& out) { embedding.forward_into(ids, out); });
        }
    }
    SECTION("SinusoidalPositionalEncoding") {
        const SinusoidalPositionalEncoding<float> pe(d_model);
        for (const Index cols : {Index{3}, Index{5}, Index{0}}) {
            CAPTURE(cols);
            require_shape_refused(3, cols, {std::to_string(cols) + " columns", "d_model = 4"},
                                  [&](RowMatrix<float>& out) { pe.forward_into(0, out); });
        }
    }
    SECTION("LearnedPositionalEmbedding") {
        const LearnedPositionalEmbedding<float> positions(16, d_model);
        for (const Index cols : {Index{3}, Index{5}, Index{0}}) {
            CAPTURE(cols);
            require_shape_refused(3, cols, {std::to_string(cols) + " columns", "d_model = 4"},
                                  [&](RowMatrix<float>& out) { positions.forward_into(0, out); });
        }
    }
    SECTION("Dropout") {
        Dropout dropout(0.5, 1);
        dropout.set_training(true);
        const RowMatrix<float> x = RowMatrix<float>::Ones(3, 4);
        for (const Shape s : std::vector<Shape>{{4, 3}, {3, 5}, {2, 4}, {0, 0}, {1, 12}}) {
            CAPTURE(s.rows, s.cols);
            require_shape_refused(s.rows, s.cols,
                                  {std::to_string(s.rows) + " x " + std::to_string(s.cols), "3 x 4"},
                                  [&](RowMatrix<float>& out) { dropout.forward_into<float>(x, out); });
            REQUIRE(dropout.calls() == 0);  // no call number taken
        }
    }
    SECTION("InputPipeline, both positional types, training") {
        auto sinusoidal = sinusoidal_pipeline<float>(10, d_model, 64, 0.5);
        auto learned = learned_pipeline<float>(10, d_model, 64, 0.5);
        sinusoidal.set_training(true);
        learned.set_training(true);
        const auto check = [&](const auto& pipeline) {
            for (const Shape s : wrong_token_shapes) {
                CAPTURE(s.rows, s.cols);
                RowMatrix<float> out = sentinel<float>(s.rows, s.cols);
                require_parts(
                    message_of<seqembed::shape_error>([&] { pipeline.forward_into(ids, out); }),
                    {std::to_string(s.rows) + " x " + std::to_string(s.cols), "6 x 4"});
                REQUIRE(bit_equal(out, sentinel<float>(s.rows, s.cols)));
                const std::vector<std::int64_t> lengths{3, 2};
                REQUIRE_THROWS_AS(pipeline.forward_into(ids, Padding::right(lengths), out),
                                  seqembed::shape_error);
                REQUIRE(bit_equal(out, sentinel<float>(s.rows, s.cols)));
                REQUIRE(pipeline.dropout().calls() == 0);
            }
        };
        check(sinusoidal);
        check(learned);
    }
}

// ---------------------------------------------------------------------------------------------
// 9. Lengths or masks that disagree with the ids' shape; lengths > sequence length or negative.
// ---------------------------------------------------------------------------------------------
TEST_CASE("bad input 9: lengths and masks that do not fit the ids", "[bad_inputs]") {
    const IdMatrix ids = valid_ids(2, 5, 10);
    const auto sinusoidal = sinusoidal_pipeline<float>(10, 4);
    const auto learned = learned_pipeline<float>(10, 4);

    const auto check = [&](const auto& pipeline) {
        for (const PaddingSide side : {PaddingSide::right, PaddingSide::left}) {
            CAPTURE(side == PaddingSide::right ? "right" : "left");
            const auto padding = [side](const std::vector<std::int64_t>& lengths) {
                return Padding::lengths_of(lengths.data(), static_cast<Index>(lengths.size()),
                                           side);
            };
            const std::vector<std::int64_t> three{3, 5, 1};
            require_parts(message_of<seqembed::shape_error>(
                                [&] { (void)pipeline.forward(ids, padding(three)); }),
                            {"3 sequence lengths", "batch of 2"});
            const std::vector<std::int64_t> one{3};
            require_parts(message_of<seqembed::shape_error>(
                                [&] { (void)pipeline.forward(ids, padding(one)); }),
                            {"1 sequence lengths", "batch of 2"});
            const std::vector<std::int64_t> none{};
            REQUIRE_THROWS_AS(pipeline.forward(ids, padding(none)), seqembed::shape_error);

            const std::vector<std::int64_t> too_long{3, 6};
            require_parts(message_of<seqembed::value_error>(
                                [&] { (void)pipeline.forward(ids, padding(too_long)); }),
                            {"length 6", "sequence 1", "[0, 5]"});
            const std::vector<std::int64_t> negative{-1, 2};
            require_parts(message_of<seqembed::value_error>(
                                [&] { (void)pipeline.forward(ids, padding(negative)); }),
                            {"length -1", "sequence 0", "[0, 5]"});
            for (const std::int64_t extreme : {int64_max, int64_min}) {
                const std::vector<std::int64_t> lengths{2, extreme};
                require_parts(message_of<seqembed::value_error>(
                                    [&] { (void)pipeline.forward(ids, padding(lengths)); }),
                                {"length " + std::to_string(extreme), "[0, 5]"});
            }
            // The limits themselves are fine.
            const std::vector<std::int64_t> edges{0, 5};
            const RowMatrix<float> out = pipeline.forward(ids, padding(edges));
            REQUIRE(out.topRows(5).isZero(0));
            REQUIRE(out.bottomRows(5) == pipeline.forward(ids).bottomRows(5));
        }

        for (const auto& shape : {std::pair<Index, Index>{2, 4}, std::pair<Index, Index>{3, 5},
                                  std::pair<Index, Index>{5, 2}, std::pair<Index, Index>{0, 0},
                                  std::pair<Index, Index>{1, 10}}) {
            const Index rows = shape.first;
            const Index cols = shape.second;
            CAPTURE(rows, cols);
            const MaskMatrix mask = MaskMatrix::Ones(rows, cols);
            require_parts(message_of<seqembed::shape_error>(
                                [&] { (void)pipeline.forward(ids, Padding::from_mask(mask)); }),
                            {"mask", std::to_string(rows) + " x " + std::to_string(cols), "2 x 5"});
        }
        const MaskMatrix good = MaskMatrix::Ones(2, 5);
        REQUIRE(pipeline.forward(ids, Padding::from_mask(good)) == pipeline.forward(ids));
    };
    SECTION("InputPipeline with sinusoidal positions") { check(sinusoidal); }
    SECTION("InputPipeline with learned positions") { check(learned); }
    SECTION("Padding::require_fits on its own") {
        const std::vector<std::int64_t> three{3, 5, 1};
        REQUIRE_THROWS_AS(Padding::right(three).require_fits(ids), seqembed::shape_error);
        const std::vector<std::int64_t> too_long{3, 6};
        REQUIRE_THROWS_AS(Padding::left(too_long).require_fits(ids), seqembed::value_error);
        const MaskMatrix mask = MaskMatrix::Ones(2, 4);
        REQUIRE_THROWS_AS(Padding::from_mask(mask).require_fits(ids), seqembed::shape_error);
        REQUIRE_NOTHROW(Padding::none().require_fits(ids));
        REQUIRE_NOTHROW(Padding::by_id(0).require_fits(ids));
    }
}

// ---------------------------------------------------------------------------------------------
// 10. An empty batch or an empty sequence: a valid 0 x d_model result, not an error.
// ---------------------------------------------------------------------------------------------
TEST_CASE("bad input 10: empty batches and empty sequences give 0 x d_model", "[bad_inputs]") {
    constexpr Index d_model = 6;
    const TokenEmbedding<float> embedding(10, d_model);
    auto sinusoidal = sinusoidal_pipeline<float>(10, d_model, 64, 0.5);
    auto learned = learned_pipeline<float>(10, d_model, 64, 0.5);

    for (const auto& shape : {std::pair<Index, Index>{0, 5}, std::pair<Index, Index>{3, 0},
                              std::pair<Index, Index>{0, 0}}) {
        const Index batch = shape.first;
        const Index seq = shape.second;
        CAPTURE(batch, seq);
        const IdMatrix ids(batch, seq);

        const RowMatrix<float> looked_up = embedding.forward(ids);
        REQUIRE(looked_up.rows() == 0);
        REQUIRE(looked_up.cols() == d_model);
        RowMatrix<float> out(0, d_model);
        REQUIRE_NOTHROW(embedding.forward_into(ids, out));

        const std::vector<std::int64_t> zero_lengths(static_cast<std::size_t>(batch), 0);
        const MaskMatrix mask = MaskMatrix::Zero(batch, seq);
        for (const bool training : {false, true}) {
            CAPTURE(training);
            sinusoidal.set_training(training);
            learned.set_training(training);
            for (const Padding& padding :
                 {Padding::none(), Padding::right(zero_lengths), Padding::left(zero_lengths),
                  Padding::from_mask(mask), Padding::by_id(0)}) {
                const RowMatrix<float> a = sinusoidal.forward(ids, padding);
                REQUIRE(a.rows() == 0);
                REQUIRE(a.cols() == d_model);
                const RowMatrix<float> b = learned.forward(ids, padding);
                REQUIRE(b.rows() == 0);
                REQUIRE(b.cols() == d_model);
                REQUIRE_NOTHROW(sinusoidal.forward_into(ids, padding, out));
                REQUIRE_NOTHROW(learned.forward_into(ids, padding, out));
                // Even at a step offset past the tables: no position is read.
                REQUIRE(sinusoidal.forward(ids, padding, 1000).rows() == 0);
                REQUIRE(learned.forward(ids, padding, 1000).rows() == 0);
            }
        }
    }

    SECTION("sequences that are all padding give zero rows") {
        const IdMatrix ids = valid_ids(2, 5, 10);
        const std::vector<std::int64_t> lengths{0, 0};
        for (const Padding& padding : {Padding::right(lengths), Padding::left(lengths)}) {
            REQUIRE(sinusoidal.forward(ids, padding).isZero(0));
            REQUIRE(learned.forward(ids, padding).isZero(0));
            REQUIRE(sinusoidal.forward(ids, padding).rows() == 10);
        }
    }
    SECTION("position tables and dropout over nothing") {
        const SinusoidalPositionalEncoding<float> pe(d_model);
        REQUIRE(pe.forward(0, 0).rows() == 0);
        REQUIRE(pe.forward(0, 0).cols() == d_model);
        const LearnedPositionalEmbedding<float> positions(8, d_model);
        REQUIRE(positions.forward(0, 0).rows() == 0);
        REQUIRE(positions.forward(0, 0).cols() == d_model);
        Dropout dropout(0.5, 1);
        dropout.set_training(true);
        const RowMatrix<float> nothing(0, d_model);
        REQUIRE(dropout.forward<float>(nothing).rows() == 0);
        REQUIRE(dropout.forward<float>(nothing).cols() == d_model);
    }
}

// ---------------------------------------------------------------------------------------------
// An object that threw keeps its state; the caller's output is untouched.
// ---------------------------------------------------------------------------------------------
TEST_CASE("bad inputs: a throwing forward leaves the output and the pipeline as they were",
          "[bad_inputs]") {
    constexpr Index vocab = 20;
    constexpr Index d_model = 4;
    const IdMatrix good = valid_ids(2, 5, vocab);
    IdMatrix bad_id = good;
    bad_id(1, 4) = vocab;
    const IdMatrix too_long = valid_ids(2, 70, vocab);  // tables of 64 rows
    const std::vector<std::int64_t> bad_lengths{3, 6};
    const MaskMatrix bad_mask = MaskMatrix::Ones(2, 4);

    const auto exercise = [&](auto pipeline) {
        // Every failure mode of forward_into; each must leave out and the pipeline unchanged.
        const auto failures = [&](const auto& p, RowMatrix<float>& out) {
            REQUIRE_THROWS_AS(p.forward_into(bad_id, Padding::none(), out), seqembed::index_error);
            REQUIRE(bit_equal(out, sentinel<float>(10, d_model)));
            REQUIRE_THROWS_AS(p.forward_into(good, Padding::none(), out, 100),
                              seqembed::index_error);
            REQUIRE(bit_equal(out, sentinel<float>(10, d_model)));
            REQUIRE_THROWS_AS(p.forward_into(good, Padding::none(), out, -1),
                              seqembed::index_error);
            REQUIRE(bit_equal(out, sentinel<float>(10, d_model)));
            REQUIRE_THROWS_AS(p.forward_into(good, Padding::right(bad_lengths), out),
                              seqembed::value_error);
            REQUIRE(bit_equal(out, sentinel<float>(10, d_model)));
            REQUIRE_THROWS_AS(p.forward_into(good, Padding::from_mask(bad_mask), out),
                              seqembed::shape_error);
            REQUIRE(bit_equal(out, sentinel<float>(10, d_model)));
            RowMatrix<float> big = sentinel<float>(140, d_model);
            REQUIRE_THROWS_AS(p.forward_into(too_long, Padding::none(), big),
                              seqembed::index_error);
            REQUIRE(bit_equal(big, sentinel<float>(140, d_model)));
            REQUIRE_THROWS_AS(p.forward(bad_id), seqembed::index_error);
        };

        SECTION("evaluation: the same result before and after") {
            pipeline.set_training(false);
            const RowMatrix<float> before = pipeline.forward(good);
            RowMatrix<float> out = sentinel<float>(10, d_model);
            failures(pipeline, out);
            REQUIRE(bit_equal(pipeline.forward(good), before));
            pipeline.forward_into(good, out);
            REQUIRE(bit_equal(out, before));
        }
        SECTION("training: no dropout call number is consumed") {
            pipeline.set_training(true);
            // The same run, without the errors: a pipeline like it, with a counter of its own (a
            // copy would share the pipeline's counter).
            auto twin = decltype(pipeline)(pipeline.embedding(), pipeline.positions(),
                                           {pipeline.dropout().p(), pipeline.dropout().seed()});
            twin.set_training(true);
            REQUIRE(bit_equal(pipeline.forward(good), twin.forward(good)));
            REQUIRE(pipeline.dropout().calls() == 1);
            RowMatrix<float> out = sentinel<float>(10, d_model);
            failures(pipeline, out);
            REQUIRE(pipeline.dropout().calls() == 1);
            const RowMatrix<float> next = pipeline.forward(good);
            REQUIRE(pipeline.dropout().calls() == 2);
            REQUIRE(bit_equal(next, twin.forward(good)));
            // And the mask really is call 1's (dropout is active).
            REQUIRE_FALSE(bit_equal(next, pipeline.forward(good)));
        }
    };
    SECTION("sinusoidal positions") {
        exercise(sinusoidal_pipeline<float>(vocab, d_model, 64, 0.5));
    }
    SECTION("learned positions") { exercise(learned_pipeline<float>(vocab, d_model, 64, 0.5)); }

    SECTION("TokenEmbedding::forward_into checks every id before writing") {
        const TokenEmbedding<float> embedding(vocab, d_model);
        RowMatrix<float> out = sentinel<float>(10, d_model);
        REQUIRE_THROWS_AS(embedding.forward_into(bad_id, out), seqembed::index_error);
        REQUIRE(bit_equal(out, sentinel<float>(10, d_model)));
    }
}
