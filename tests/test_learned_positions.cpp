// LearnedPositionalEmbedding: seeded N(0, 1) initialisation, copies and views of pre-trained
// tables, the BERT / BART / RoBERTa offsets, seed 003's 512-row table serving 350 tokens, step
// offsets and the edges of the table (in rows() and in the pipeline's check).
#include <seqembed/learned_positions.hpp>
#include <seqembed/pipeline.hpp>
#include <seqembed/token_embedding.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"

using seqembed::IdMatrix;
using seqembed::Index;
using seqembed::InputPipeline;
using seqembed::LearnedPositionalEmbedding;
using seqembed::LearnedPositionsOptions;
using seqembed::Padding;
using seqembed::RowMatrix;
using seqembed::TokenEmbedding;
using seqembed::detail::StageAccess;

namespace {

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

/// A recognisable "pre-trained" table: value (r, c) = r + c / 1000.
template <typename Scalar>
RowMatrix<Scalar> numbered_table(Index rows, Index cols) {
    RowMatrix<Scalar> table(rows, cols);
    for (Index r = 0; r < rows; ++r)
        for (Index c = 0; c < cols; ++c)
            table(r, c) =
                static_cast<Scalar>(static_cast<double>(r) + static_cast<double>(c) / 1000.0);
    return table;
}

/// A pipeline over `positions` whose zero embedding leaves the position rows visible.
template <typename Scalar>
InputPipeline<Scalar, LearnedPositionalEmbedding<Scalar>> zero_embedding_pipeline(
    const LearnedPositionalEmbedding<Scalar>& positions) {
    return {TokenEmbedding<Scalar>::from_weights(RowMatrix<Scalar>::Zero(4, positions.d_model())), positions};
}

/// One sequence of `count` tokens of id 0.
IdMatrix zero_ids(Index count) { return IdMatrix::Zero(1, count); }

/// The message of the index_error f throws (fails the test if it throws nothing).
template <typename F>
std::string index_error_message(F&& f) {
    try {
        f();
    } catch (const seqembed::index_error& e) {
        return e.what();
    }
    FAIL("no seqembed::index_error was thrown");
    return {};
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

/// True if text holds a '-' directly followed by a digit.
bool has_negative_number(const std::string& text) {
    for (std::size_t i = 0; i + 1 < text.size(); ++i)
        if (text[i] == '-' && text[i + 1] >= '0' && text[i + 1] <= '9') return true;
    return false;
}

}  // namespace

TEMPLATE_TEST_CASE("Learned positions: seeded initialisation is deterministic", "[learned]", float,
                   double) {
    LearnedPositionsOptions options;
    options.seed = 17;
    const LearnedPositionalEmbedding<TestType> a(64, 24, options);
    const LearnedPositionalEmbedding<TestType> b(64, 24, options);
    REQUIRE(a.max_positions() == 64);
    REQUIRE(a.d_model() == 24);
    REQUIRE(a.table() == b.table());

    options.seed = 18;
    const LearnedPositionalEmbedding<TestType> other(64, 24, options);
    REQUIRE(a.table() != other.table());
    // Not a shifted or partly equal table either.
    Index equal = 0;
    for (Index i = 0; i < a.table().size(); ++i)
        if (a.table().data()[i] == other.table().data()[i]) ++equal;
    REQUIRE(equal == 0);

    // The offset chooses which rows are read, not the values drawn.
    options.seed = 17;
    options.offset = 2;
    const LearnedPositionalEmbedding<TestType> shifted(64, 24, options);
    REQUIRE(shifted.table() == a.table());
}

TEMPLATE_TEST_CASE("Learned positions: seeded initialisation is N(0, 1)", "[learned]", float,
                   double) {
    LearnedPositionsOptions options;
    options.seed = 2024;
    const LearnedPositionalEmbedding<TestType> positions(2048, 512, options);  // 2^20 draws
    const auto table = positions.table();
    const auto n = static_cast<double>(table.size());
    double sum = 0.0;
    double square_sum = 0.0;
    double within_one = 0.0;
    bool finite = true;
    for (Index i = 0; i < table.size(); ++i) {
        const auto v = static_cast<double>(table.data()[i]);
        finite = finite && std::isfinite(v);
        sum += v;
        square_sum += v * v;
        if (std::abs(v) < 1.0) within_one += 1.0;
    }
    REQUIRE(finite);
    const double mean = sum / n;
    const double variance = square_sum / n - mean * mean;
    CAPTURE(mean, variance, within_one / n);
    REQUIRE(std::abs(mean) < 5.0 / std::sqrt(n));                  // sd of the mean: 1/sqrt(n)
    REQUIRE(std::abs(variance - 1.0) < 5.0 * std::sqrt(2.0 / n));  // sd of s^2: sqrt(2/n)
    const double p1 = 0.6826894921370859;                          // P(|Z| < 1)
    REQUIRE(std::abs(within_one / n - p1) < 5.0 * std::sqrt(p1 * (1.0 - p1) / n));
    // Rows are not all alike: row 0 and row 1 differ.
    REQUIRE(table.row(0) != table.row(1));
}

TEMPLATE_TEST_CASE("Learned positions: from_weights copies the table", "[learned]", float, double) {
    RowMatrix<TestType> source = numbered_table<TestType>(10, 6);
    const RowMatrix<TestType> original = source;
    const auto positions = LearnedPositionalEmbedding<TestType>::from_weights(source);
    REQUIRE(positions.max_positions() == 10);
    REQUIRE(positions.d_model() == 6);
    REQUIRE(positions.table() == original);
    REQUIRE(positions.table().data() != source.data());

    source.setConstant(TestType(-5));
    REQUIRE(positions.table() == original);
    REQUIRE(positions.rows(0, 10) == original);

    // Copies share the immutable table.
    const LearnedPositionalEmbedding<TestType> copy = positions;
    REQUIRE(copy.table() == original);
    REQUIRE(copy.table().data() == positions.table().data());
    REQUIRE_FALSE(copy.is_view());
}

TEMPLATE_TEST_CASE("Learned positions: view does not copy, and copies of a view still view",
                   "[learned]", float, double) {
    RowMatrix<TestType> memory = numbered_table<TestType>(12, 4);
    const auto view = LearnedPositionalEmbedding<TestType>::view(memory.data(), 12, 4,
                                                                 LearnedPositionsOptions::bart());
    REQUIRE(view.table().data() == memory.data());
    REQUIRE(view.rows(0, 3).data() == memory.data() + 2 * 4);
    REQUIRE(view.offset() == 2);

    const LearnedPositionalEmbedding<TestType> copy = view;
    REQUIRE(copy.table().data() == memory.data());
    REQUIRE(copy.offset() == 2);

    LearnedPositionalEmbedding<TestType> assigned(3, 4);
    assigned = view;
    REQUIRE(assigned.table().data() == memory.data());
    REQUIRE(assigned.max_positions() == 12);

    LearnedPositionalEmbedding<TestType> moved = std::move(assigned);
    REQUIRE(moved.table().data() == memory.data());

    // The view sees the caller's later writes (it is not a snapshot).
    memory(2, 1) = TestType(-123);
    REQUIRE(view.rows(0, 1)(0, 1) == TestType(-123));
    REQUIRE(copy.forward(0, 1)(0, 1) == TestType(-123));
}

TEST_CASE("Learned positions: offsets of BERT, BART and RoBERTa, and capacity", "[learned]") {
    REQUIRE(LearnedPositionsOptions::bert().offset == 0);
    REQUIRE(LearnedPositionsOptions::bart().offset == 2);
    REQUIRE(LearnedPositionsOptions::roberta().offset == 2);
    REQUIRE(LearnedPositionsOptions::roberta(1).offset == 2);
    REQUIRE(LearnedPositionsOptions::roberta(0).offset == 1);
    // padding_idx + 1 overflowing is an error, not a wrapped offset.
    REQUIRE_THROWS_AS(LearnedPositionsOptions::roberta(int64_max), seqembed::index_error);

    const RowMatrix<float> table = numbered_table<float>(20, 3);
    const auto bert = LearnedPositionalEmbedding<float>::from_weights(table);
    const auto bart =
        LearnedPositionalEmbedding<float>::from_weights(table, LearnedPositionsOptions::bart());
    const auto roberta =
        LearnedPositionalEmbedding<float>::from_weights(table, LearnedPositionsOptions::roberta(1));
    REQUIRE(bert.offset() == 0);
    REQUIRE(bart.offset() == 2);
    REQUIRE(roberta.offset() == 2);
    REQUIRE(bert.capacity() == 20);
    REQUIRE(bart.capacity() == 18);
    REQUIRE(roberta.capacity() == 18);

    // bart: rows(0, n) are table rows 2 .. n + 1.
    for (const Index n : {Index{1}, Index{5}, Index{18}}) {
        CAPTURE(n);
        REQUIRE(bart.rows(0, n) == table.middleRows(2, n));
        REQUIRE(bert.rows(0, n) == table.topRows(n));
    }
    REQUIRE(bart.rows(0, 1)(0, 0) == 2.0f);    // token 0 reads row 2
    REQUIRE(bart.rows(17, 1)(0, 0) == 19.0f);  // the last token reads the last row
    REQUIRE(bart.rows(0, 2).data() == bart.table().data() + 2 * 3);  // a view, no copy
}

TEMPLATE_TEST_CASE("Learned positions: seed 003's 512-row table serves TOKEN_LIMIT = 350",
                   "[learned][seed003]", float, double) {
    constexpr Index table_rows = 512;   // the pre-trained model's token limit
    constexpr Index token_limit = 350;  // TOKEN_LIMIT in seed 003
    const Index d_model = 16;
    const RowMatrix<TestType> pretrained = numbered_table<TestType>(table_rows, d_model);
    for (const std::int64_t offset : {std::int64_t{0}, std::int64_t{2}}) {
        CAPTURE(offset);
        LearnedPositionsOptions options;
        options.offset = offset;
        const auto positions =
            LearnedPositionalEmbedding<TestType>::from_weights(pretrained, options);
        REQUIRE(positions.capacity() == table_rows - offset);

        const RowMatrix<TestType> rows = positions.forward(0, token_limit);
        REQUIRE(rows.rows() == token_limit);
        REQUIRE(rows == pretrained.middleRows(offset, token_limit));
        // The whole capacity works too.
        REQUIRE(positions.rows(0, table_rows - offset) ==
                pretrained.middleRows(offset, table_rows - offset));

        // 512 - offset + 1 tokens: the last one has no row.
        const Index too_many = table_rows - offset + 1;
        const std::string message = index_error_message([&] { (void)positions.rows(0, too_many); });
        CAPTURE(message);
        REQUIRE(message.rfind("seqembed:", 0) == 0);
        const std::int64_t last_position = too_many - 1;
        REQUIRE(contains(message, "position " + std::to_string(last_position)));
        REQUIRE(contains(message, "table row " + std::to_string(offset + last_position)));
        REQUIRE(contains(message, "offset " + std::to_string(offset)));
        REQUIRE(contains(message, "512 rows"));
        REQUIRE_THROWS_AS(positions.forward(0, too_many), seqembed::index_error);
        RowMatrix<TestType> out(too_many, d_model);
        REQUIRE_THROWS_AS(positions.forward_into(0, out), seqembed::index_error);
    }
}

TEMPLATE_TEST_CASE("Learned positions: forward and forward_into equal rows(), at step offsets",
                   "[learned]", float, double) {
    const RowMatrix<TestType> table = numbered_table<TestType>(40, 5);
    const auto positions =
        LearnedPositionalEmbedding<TestType>::from_weights(table, LearnedPositionsOptions::bart());
    for (const std::int64_t first :
         {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{30}, std::int64_t{37}}) {
        for (const Index count : {Index{0}, Index{1}, Index{3}}) {
            if (first + count > positions.capacity()) continue;
            CAPTURE(first, count);
            const auto view = positions.rows(first, count);
            REQUIRE(view.rows() == count);
            REQUIRE(view.cols() == 5);
            REQUIRE(view == table.middleRows(2 + first, count));
            const RowMatrix<TestType> copy = positions.forward(first, count);
            REQUIRE(copy == view);
            RowMatrix<TestType> out = RowMatrix<TestType>::Constant(count, 5, TestType(-1));
            positions.forward_into(first, out);
            REQUIRE(out == view);
            // What InputPipeline adds at a step offset of `first`: the same rows (a zero
            // embedding leaves them visible), read in place from the table, never copied.
            const IdMatrix ids = IdMatrix::Zero(1, count);
            REQUIRE(zero_embedding_pipeline(positions).forward(ids, Padding::none(), first) == view);
            for (Index r = 0; r < count; ++r) {
                std::vector<TestType> scratch(5, TestType(-1));
                REQUIRE(StageAccess::position_row(positions, first + r, scratch.data()) ==
                        positions.table().row(2 + first + r).data());
                REQUIRE(scratch == std::vector<TestType>(5, TestType(-1)));
            }
        }
    }
    // A step offset of 3 while decoding one token reads table row 2 + 3.
    REQUIRE(positions.forward(3, 1)(0, 0) == TestType(5));
}

TEST_CASE("Learned positions: the edges of the table, in rows() and in the pipeline", "[learned]") {
    const RowMatrix<double> table = numbered_table<double>(16, 2);
    for (const std::int64_t offset : {std::int64_t{0}, std::int64_t{2}}) {
        CAPTURE(offset);
        LearnedPositionsOptions options;
        options.offset = offset;
        const auto positions = LearnedPositionalEmbedding<double>::from_weights(table, options);
        const Index capacity = positions.capacity();
        REQUIRE(capacity == 16 - offset);
        const auto pipeline = zero_embedding_pipeline(positions);

        // Exactly at capacity: fine, in one piece or ending there.
        REQUIRE_NOTHROW(positions.rows(0, capacity));
        REQUIRE_NOTHROW(positions.rows(capacity - 3, 3));
        REQUIRE_NOTHROW(positions.rows(capacity, 0));
        REQUIRE(positions.rows(capacity - 1, 1)(0, 0) == 15.0);
        REQUIRE(positions.rows(capacity, 0).rows() == 0);
        REQUIRE_NOTHROW(pipeline.forward(zero_ids(capacity)));
        REQUIRE(pipeline.forward(zero_ids(3), Padding::none(), capacity - 3)(2, 0) == 15.0);
        // Padded tokens take no position: capacity real tokens in a longer sequence fit.
        const std::vector<std::int64_t> length{capacity};
        REQUIRE_NOTHROW(pipeline.forward(zero_ids(capacity + 2), Padding::left(length)));

        // One past: an index_error.
        REQUIRE_THROWS_AS(positions.rows(0, capacity + 1), seqembed::index_error);
        REQUIRE_THROWS_AS(positions.rows(capacity - 3, 4), seqembed::index_error);
        REQUIRE_THROWS_AS(positions.rows(capacity, 1), seqembed::index_error);
        REQUIRE_THROWS_AS(positions.rows(capacity + 1, 0), seqembed::index_error);
        REQUIRE_THROWS_AS(pipeline.forward(zero_ids(capacity + 1)), seqembed::index_error);
        REQUIRE_THROWS_AS(pipeline.forward(zero_ids(3), Padding::none(), capacity - 2),
                          seqembed::index_error);
        REQUIRE_THROWS_AS(pipeline.forward(zero_ids(1), Padding::none(), capacity),
                          seqembed::index_error);

        // Negative first or count.
        const std::string negative = index_error_message([&] { (void)positions.rows(-1, 1); });
        CAPTURE(negative);
        REQUIRE(negative.rfind("seqembed:", 0) == 0);
        REQUIRE(contains(negative, "-1"));
        REQUIRE(index_error_message([&] { (void)pipeline.forward(zero_ids(1), Padding::none(), -1); }) ==
                negative);
        REQUIRE_THROWS_AS(positions.rows(-1, 0), seqembed::index_error);
        REQUIRE_THROWS_AS(positions.forward(-5, 2), seqembed::index_error);
        REQUIRE_THROWS_AS(positions.rows(0, -1), seqembed::index_error);
        REQUIRE_THROWS_AS(positions.forward(0, -1), seqembed::index_error);
        REQUIRE_THROWS_AS(positions.rows(std::numeric_limits<std::int64_t>::min(), 1),
                          seqembed::index_error);
        REQUIRE_THROWS_AS(pipeline.forward(zero_ids(1), Padding::none(),
                                           std::numeric_limits<std::int64_t>::min()),
                          seqembed::index_error);
    }
}

// The message of a huge first (a step offset near INT64_MAX) must be computed without signed
// overflow: UBSan traps on it, and a wrapped value prints as a large negative position.
TEST_CASE("Learned positions: a first position near INT64_MAX throws without overflowing",
          "[learned][overflow]") {
    const RowMatrix<float> table = numbered_table<float>(512, 2);
    struct Case {
        std::int64_t offset;
        std::int64_t first;
        Index count;
    };
    const std::vector<Case> cases{
        {0, int64_max, 1},     {0, int64_max - 1, 5}, {0, int64_max, int64_max},
        {2, int64_max, 1},     {2, int64_max - 3, 1}, {2, 0, int64_max},
        {2, 1, int64_max - 1}, {0, 511, int64_max},
    };
    for (const Case& c : cases) {
        CAPTURE(c.offset, c.first, c.count);
        LearnedPositionsOptions options;
        options.offset = c.offset;
        const auto positions = LearnedPositionalEmbedding<float>::from_weights(table, options);
        const std::string message = index_error_message([&] { (void)positions.rows(c.first, c.count); });
        CAPTURE(message);
        REQUIRE(message.rfind("seqembed:", 0) == 0);
        REQUIRE(contains(message, "512 rows"));
        // No wrapped (negative) position or row in the message.
        REQUIRE_FALSE(has_negative_number(message));
        REQUIRE_THROWS_AS(positions.forward(c.first, c.count), seqembed::index_error);
        // The pipeline's check, for a step offset near INT64_MAX and a few tokens.
        if (c.count <= 5) {
            const std::string from_pipeline = index_error_message([&] {
                (void)zero_embedding_pipeline(positions).forward(zero_ids(c.count), Padding::none(),
                                                                 c.first);
            });
            CAPTURE(from_pipeline);
            REQUIRE(contains(from_pipeline, "512 rows"));
            REQUIRE_FALSE(has_negative_number(from_pipeline));
        }
    }
}
