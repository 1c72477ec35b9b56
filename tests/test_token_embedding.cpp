// TokenEmbedding: seeded init, padding_idx, scale, lookup == one_hot(ids) * W (seed 002),
// copies and views.
#include <seqembed/token_embedding.hpp>

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catch.hpp"

using seqembed::IdMatrix;
using seqembed::Index;
using seqembed::RowMatrix;
using seqembed::TokenEmbedding;
using seqembed::TokenEmbeddingOptions;

namespace {
IdMatrix batch_of_ids() {
    IdMatrix ids(2, 5);
    ids << 2, 5, 7, 3, 1,  // seed 000's input sequence
        0, 9, 4, 4, 8;
    return ids;
}
}  // namespace

TEMPLATE_TEST_CASE("Lookup is the table row times sqrt(d_model)", "[embedding]", float, double) {
    const TokenEmbedding<TestType> embedding(10, 16);
    const IdMatrix ids = batch_of_ids();
    const RowMatrix<TestType> out = embedding.forward(ids);
    REQUIRE(out.rows() == 10);
    REQUIRE(out.cols() == 16);
    const auto scale = static_cast<TestType>(std::sqrt(16.0));
    REQUIRE(embedding.scale() == scale);
    for (Index b = 0; b < 2; ++b)
        for (Index t = 0; t < 5; ++t)
            for (Index j = 0; j < 16; ++j)
                REQUIRE(out(b * 5 + t, j) == embedding.table()(ids(b, t), j) * scale);
}

TEMPLATE_TEST_CASE("Lookup equals one_hot(ids) x W (seed 002)", "[embedding]", float, double) {
    TokenEmbeddingOptions options;
    options.scale = seqembed::EmbeddingScale::none();
    const TokenEmbedding<TestType> embedding(10, 6, options);
    const IdMatrix ids = batch_of_ids();
    RowMatrix<TestType> one_hot = RowMatrix<TestType>::Zero(ids.size(), 10);
    for (Index b = 0; b < ids.rows(); ++b)
        for (Index t = 0; t < ids.cols(); ++t) one_hot(b * ids.cols() + t, ids(b, t)) = 1;
    const RowMatrix<TestType> product = one_hot * embedding.table();
    REQUIRE(embedding.forward(ids) == product);
}

TEST_CASE("Scale can be off or any value", "[embedding]") {
    TokenEmbeddingOptions options;
    options.seed = 3;
    options.scale = seqembed::EmbeddingScale::none();
    const TokenEmbedding<double> unscaled(7, 9, options);
    options.scale = seqembed::EmbeddingScale::value(-2.5);
    const TokenEmbedding<double> scaled(7, 9, options);
    IdMatrix ids(1, 3);
    ids << 6, 0, 3;
    REQUIRE(unscaled.table() == scaled.table());
    REQUIRE(scaled.forward(ids) == unscaled.forward(ids) * -2.5);
    REQUIRE(unscaled.scale() == 1.0);
}

TEST_CASE("Seeded initialisation is reproducible, standard normal, and padding_idx is zeroed",
          "[embedding]") {
    TokenEmbeddingOptions options;
    options.seed = 11;
    const TokenEmbedding<float> a(1000, 64, options), b(1000, 64, options);
    REQUIRE(a.table() == b.table());
    options.seed = 12;
    const TokenEmbedding<float> c(1000, 64, options);
    REQUIRE(a.table() != c.table());

    const double mean = a.table().template cast<double>().mean();
    const double variance = (a.table().template cast<double>().array() - mean).square().mean();
    CHECK(std::abs(mean) < 0.02);          // 5 sigma of 64000 draws is 0.0198
    CHECK(std::abs(variance - 1) < 0.03);  // 5 sigma is 0.028

    options.padding_idx = 17;
    const TokenEmbedding<float> padded(1000, 64, options);
    REQUIRE(padded.padding_idx() == 17);
    REQUIRE(padded.table().row(17).isZero(0));
    REQUIRE(!padded.table().row(16).isZero(0));

    options.padding_idx = -1;  // counts from the end, as nn.Embedding
    const TokenEmbedding<float> last(1000, 64, options);
    REQUIRE(last.padding_idx() == 999);
    REQUIRE(last.table().row(999).isZero(0));
}

TEST_CASE("from_weights copies, and padding_idx does not zero given weights", "[embedding]") {
    RowMatrix<float> weights = RowMatrix<float>::Random(5, 4);
    TokenEmbeddingOptions options;
    options.padding_idx = 2;
    const auto embedding = TokenEmbedding<float>::from_weights(weights, options);
    const RowMatrix<float> copy = weights;
    weights.setZero();
    REQUIRE(embedding.table() == copy);
    REQUIRE(!embedding.is_view());
    REQUIRE(embedding.padding_idx() == 2);
    REQUIRE(!embedding.table().row(2).isZero(0));
}

TEST_CASE("A view reads the caller's memory without copying, and so do its copies",
          "[embedding]") {
    std::vector<double> storage(6 * 3);
    for (std::size_t i = 0; i < storage.size(); ++i) storage[i] = static_cast<double>(i);
    const auto view = TokenEmbedding<double>::view(storage.data(), 6, 3);
    REQUIRE(view.is_view());
    REQUIRE(view.table().data() == storage.data());
    const TokenEmbedding<double> copy = view;  // NOLINT(performance-unnecessary-copy-initialization)
    REQUIRE(copy.table().data() == storage.data());
    storage[3 * 4 + 1] = 100.0;  // the caller's update shows through
    IdMatrix ids(1, 1);
    ids << 4;
    REQUIRE(copy.forward(ids)(0, 1) == 100.0 * std::sqrt(3.0));
}

TEST_CASE("Copies share the immutable table, which lives as long as any copy", "[embedding]") {
    std::optional<TokenEmbedding<float>> original;
    original.emplace(8, 4);
    const RowMatrix<float> values = original->table();
    const TokenEmbedding<float> copy = *original;
    REQUIRE(copy.table().data() == original->table().data());  // tied, not copied
    TokenEmbedding<float> moved = std::move(*original);
    REQUIRE(moved.table() == values);
    TokenEmbedding<float> assigned(2, 2);
    assigned = moved;
    REQUIRE(assigned.table().data() == moved.table().data());
    original.reset();
    moved = TokenEmbedding<float>(3, 3);
    REQUIRE(copy.table() == values);  // the last holders keep it alive
    REQUIRE(assigned.table() == values);
    REQUIRE_FALSE(copy.is_view());
}

TEST_CASE("A view with an owner keeps the owner alive", "[embedding]") {
    auto memory = std::make_shared<std::vector<float>>(6, 1.5f);
    const std::weak_ptr<std::vector<float>> watch = memory;
    std::optional<TokenEmbedding<float>> viewing;
    viewing.emplace(TokenEmbedding<float>::view(memory->data(), 3, 2, {}, memory));
    memory.reset();
    REQUIRE_FALSE(watch.expired());
    REQUIRE(viewing->is_view());
    REQUIRE(viewing->table()(2, 1) == 1.5f);
    viewing.reset();
    REQUIRE(watch.expired());
}

TEST_CASE("forward_into writes caller memory", "[embedding]") {
    const TokenEmbedding<float> embedding(10, 8);
    const IdMatrix ids = batch_of_ids();
    RowMatrix<float> out(10, 8);
    embedding.forward_into(ids, out);
    REQUIRE(out == embedding.forward(ids));
}

TEST_CASE("check_finite looks at the block it is given, not the memory around it", "[embedding]") {
    RowMatrix<double> big = RowMatrix<double>::Ones(4, 5);
    big(1, 4) = std::numeric_limits<double>::quiet_NaN();  // outside the 4 x 3 block
    TokenEmbeddingOptions options;
    options.check_finite = true;
    REQUIRE_NOTHROW(TokenEmbedding<double>::from_weights(big.leftCols(3), options));
    big(2, 1) = std::numeric_limits<double>::infinity();
    try {
        (void)TokenEmbedding<double>::from_weights(big.leftCols(3), options);
        FAIL("no exception");
    } catch (const seqembed::value_error& e) {
        REQUIRE(std::string(e.what()).find("(row 2, column 1)") != std::string::npos);
    }
}

TEMPLATE_TEST_CASE("A bfloat16 or half table widens each value exactly before scaling",
                   "[embedding][storage]", Eigen::bfloat16, Eigen::half) {
    const RowMatrix<float> weights = RowMatrix<float>::Random(12, 40) * 3.0f;
    const RowMatrix<TestType> narrow = weights.cast<TestType>();
    const auto embedding = TokenEmbedding<float, TestType>::from_weights(narrow);
    REQUIRE(sizeof(*embedding.table().data()) == 2);  // half the memory of float
    IdMatrix ids(2, 3);
    ids << 0, 11, 5, 5, 3, 7;
    const RowMatrix<float> out = embedding.forward(ids);
    const float scale = std::sqrt(40.0f);
    for (Index i = 0; i < ids.size(); ++i)
        for (Index j = 0; j < 40; ++j) {
            const float widened = static_cast<float>(narrow(ids.data()[i], j));
            REQUIRE(out(i, j) == widened * scale);
            // and the rounding to 16 bits was a rounding, not a truncation gone wrong
            REQUIRE(std::abs(widened - weights(ids.data()[i], j)) <=
                    std::abs(weights(ids.data()[i], j)) * (std::is_same_v<TestType, Eigen::half> ? 1e-3f : 4e-3f));
        }
    // Seeded init works for narrow storage too, and the padding row is zero.
    TokenEmbeddingOptions options;
    options.padding_idx = 3;
    const TokenEmbedding<float, TestType> seeded(100, 16, options);
    REQUIRE(seeded.table().row(3).template cast<float>().isZero(0));
    REQUIRE(seeded.table().template cast<float>().allFinite());
}

TEMPLATE_TEST_CASE("Large lookups, streamed, give the scaled rows bit for bit, signed zeros included",
                   "[embedding][streaming]", float, double) {
    // Outputs of 4 MiB or more go through the streaming row, with no position to add: a product
    // must not pick up a + 0 (which would turn -0 into +0). Rows that start inside a line and
    // rows apart; the sentinels around the rows untouched.
    const Index width = 136;  // not a whole number of lines
    RowMatrix<TestType> weights = RowMatrix<TestType>::Random(40, width);
    weights(3, 0) = TestType(-0.0);
    weights(3, width - 1) = TestType(-0.0);
    const TokenEmbedding<TestType> embedding = TokenEmbedding<TestType>::from_weights(weights);
    IdMatrix ids(4, 2000);
    for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = (i * 7) % 40;
    REQUIRE(static_cast<std::size_t>(ids.size() * width) * sizeof(TestType) >= (std::size_t{4} << 20));
    const TestType sentinel = TestType(-31.5);
    for (const Index shift : {0, 1, 3})
        for (const Index stride : {width, width + 5}) {
            CAPTURE(shift, stride);
            std::vector<TestType> storage(static_cast<std::size_t>(shift + ids.size() * stride + 8), sentinel);
            Eigen::Map<RowMatrix<TestType>, 0, Eigen::OuterStride<>> out(storage.data() + shift, ids.size(), width,
                                                                          Eigen::OuterStride<>(stride));
            embedding.forward_into(ids, out);
            for (Index r = 0; r < ids.size(); ++r) {
                const auto id = static_cast<Index>(ids.data()[r]);
                for (Index j = 0; j < width; ++j) {
                    const TestType expected = weights(id, j) * embedding.scale();
                    if (!(out(r, j) == expected && std::signbit(out(r, j)) == std::signbit(expected))) {
                        CAPTURE(r, j);
                        REQUIRE(out(r, j) == expected);
                        REQUIRE(std::signbit(out(r, j)) == std::signbit(expected));
                    }
                }
                Index overwritten = 0;  // between this row and the next
                for (Index j = width; j < stride && r + 1 < ids.size(); ++j)
                    overwritten += storage[static_cast<std::size_t>(shift + r * stride + j)] == sentinel ? 0 : 1;
                REQUIRE(overwritten == 0);
            }
            for (Index k = 0; k < shift; ++k) REQUIRE(storage[static_cast<std::size_t>(k)] == sentinel);
            REQUIRE(storage.back() == sentinel);
        }
}
