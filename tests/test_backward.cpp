// InputPipeline::backward: every table's gradient against central finite differences of the
// forward in double (token table, learned positions, token types, LayerNorm, through dropout's
// mask), with padding on either side, repeated ids, a padding_idx, position offsets; the
// dropout call's mask; accumulation; a token-type table tied to the token table; bad input.
#include <seqembed/optim.hpp>
#include <seqembed/seqembed.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "catch.hpp"
#include "isa_support.hpp"
#include "test_support.hpp"
#include "fixtures/backward/backward_cases.hpp"

using seqembed::IdMatrix;
using seqembed::Index;
using seqembed::RowMatrix;

namespace {

RowMatrix<double> random_matrix(Index rows, Index cols, unsigned seed) {
    std::mt19937 generator(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    RowMatrix<double> m(rows, cols);
    for (Index k = 0; k < m.size(); ++k) m.data()[k] = normal(generator);
    return m;
}

using Vector = seqembed::LayerNorm<double>::Vector;
using Pipeline = seqembed::InputPipeline<double, seqembed::LearnedPositionalEmbedding<double>>;

/// The weights of a small BERT-like input stage, which the finite differences perturb.
struct Weights {
    RowMatrix<double> token = random_matrix(11, 8, 1);
    RowMatrix<double> positions = random_matrix(12, 8, 2);
    RowMatrix<double> types = random_matrix(3, 8, 3);
    Vector gamma = Vector(random_matrix(1, 8, 4)).array() + 1.0;
    Vector beta = random_matrix(1, 8, 5);
};

/// What varies between the cases.
struct Setup {
    bool layer_norm = true;
    bool dropping = true;
    bool types = true;
    std::int64_t position_offset = 2;
    seqembed::PaddedRows padded_rows = seqembed::PaddedRows::zero;
    /// How the batch gives the positions: its mask alone, a mask over 2 past tokens and the
    /// current ones (a decoding cache's), or explicit position ids.
    enum class Positions { mask, past_mask, position_ids } positions = Positions::mask;
};

Pipeline make_pipeline(const Weights& w, const Setup& setup) {
    seqembed::TokenEmbeddingOptions token_options;
    token_options.padding_idx = 1;
    seqembed::LearnedPositionsOptions position_options;
    position_options.offset = setup.position_offset;
    seqembed::PipelineOptions options;
    options.dropout = setup.dropping ? 0.3 : 0.0;
    options.dropout_seed = 99;
    options.padded_rows = setup.padded_rows;
    Pipeline pipeline(seqembed::TokenEmbedding<double>::from_weights(w.token, token_options),
                      seqembed::LearnedPositionalEmbedding<double>::from_weights(w.positions, position_options),
                      options);
    if (setup.types) pipeline.set_token_types(seqembed::TokenTypeEmbedding<double>::from_weights(w.types));
    if (setup.layer_norm) pipeline.set_layer_norm(seqembed::LayerNorm<double>::from_weights(w.gamma, w.beta, 1e-5));
    pipeline.set_training(setup.dropping);
    return pipeline;
}

/// Sets the call number of the pipeline's next training forward (a copy of its dropout layer
/// shares the counter).
void next_call(const Pipeline& pipeline, std::uint64_t call) {
    seqembed::Dropout counter = pipeline.dropout();
    counter.set_calls(call);
}

/// sum(forward(batch) .* g) with dropout call `call`.
double loss(const Pipeline& pipeline, const seqembed::Batch& batch, const RowMatrix<double>& g, std::uint64_t call) {
    next_call(pipeline, call);
    return (pipeline.forward(batch).array() * g.array()).sum();
}

/// Checks every entry of `analytic` (a dense gradient of the weights `entry` points into)
/// against central differences of the loss, except row `skipped_row`, which must be zero.
template <typename Perturb>
void check_against_differences(const char* what, const RowMatrix<double>& analytic, Weights& w, Perturb&& entry,
                               const Setup& setup, const seqembed::Batch& batch, const RowMatrix<double>& g,
                               std::uint64_t call, Index skipped_row = -1) {
    constexpr double h = 1e-6;
    for (Index r = 0; r < analytic.rows(); ++r) {
        if (r == skipped_row) {  // nn.Embedding's padding_idx: no gradient, whatever the differences say
            CHECK(analytic.row(r).isZero(0.0));
            continue;
        }
        for (Index c = 0; c < analytic.cols(); ++c) {
            double& value = entry(w, r, c);
            const double kept = value;
            value = kept + h;
            const double up = loss(make_pipeline(w, setup), batch, g, call);
            value = kept - h;
            const double down = loss(make_pipeline(w, setup), batch, g, call);
            value = kept;
            const double numeric = (up - down) / (2 * h);
            INFO(what << " row " << r << " column " << c << ": analytic " << analytic(r, c) << ", numeric " << numeric);
            CHECK(std::abs(analytic(r, c) - numeric) <= 1e-6 * std::max(1.0, std::abs(numeric)));
        }
    }
}

RowMatrix<double> dense_vector(const Vector& v) { return RowMatrix<double>(v); }

void check_setup(const Setup& setup) {
    Weights w;
    // Repeated ids, the padding_idx 1 as a real token, left padding in sequence 0 and right
    // padding in sequence 2.
    IdMatrix ids(3, 5);
    ids << 0, 0, 4, 4, 7, 1, 3, 3, 10, 4, 2, 5, 6, 0, 0;
    IdMatrix mask(3, 5);
    mask << 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0;
    IdMatrix types(3, 5);
    types << 0, 0, 1, 2, 1, 0, 1, 1, 0, 2, 2, 1, 0, 0, 0;
    IdMatrix past_and_current(3, 7);  // the current tokens' columns are `mask`'s
    past_and_current << 0, 0, 0, 0, 1, 1, 1,  //
        1, 1, 1, 1, 1, 1, 1,                   //
        0, 1, 1, 1, 1, 0, 0;
    IdMatrix position_ids(3, 5);  // repeated, out of order, and reaching the last row
    position_ids << 3, 3, 0, 1, 9, 4, 2, 2, 7, 0, 5, 6, 1, 1, 8;
    seqembed::Batch batch(ids, seqembed::Padding::from_mask(mask), {});  // views of the matrices
    if (setup.positions == Setup::Positions::past_mask)
        batch.padding = seqembed::Padding::from_mask(past_and_current);
    else if (setup.positions == Setup::Positions::position_ids)
        batch.position_ids = position_ids;
    if (setup.types) batch.token_types = types;
    const RowMatrix<double> g = random_matrix(ids.size(), 8, 6);
    const Pipeline pipeline = make_pipeline(w, setup);
    next_call(pipeline, 5);
    static_cast<void>(pipeline.forward(batch));
    const std::optional<std::uint64_t> call = setup.dropping ? std::optional<std::uint64_t>(5) : std::nullopt;
    const seqembed::PipelineGradients<double> grads = pipeline.backward(batch, g, call);

    check_against_differences("token table", grads.token.to_dense(), w,
                              [](Weights& x, Index r, Index c) -> double& { return x.token(r, c); }, setup, batch, g, 5,
                              /*skipped_row=*/1);
    check_against_differences("position table", grads.positions.to_dense(), w,
                              [](Weights& x, Index r, Index c) -> double& { return x.positions(r, c); }, setup, batch,
                              g, 5);
    if (setup.types) {
        check_against_differences("token type table", grads.token_types.to_dense(), w,
                                  [](Weights& x, Index r, Index c) -> double& { return x.types(r, c); }, setup, batch,
                                  g, 5);
    } else {
        CHECK(grads.token_types.empty());
    }
    if (setup.layer_norm) {
        check_against_differences("gamma", dense_vector(grads.gamma), w,
                                  [](Weights& x, Index, Index c) -> double& { return x.gamma[c]; }, setup, batch, g, 5);
        check_against_differences("beta", dense_vector(grads.beta), w,
                                  [](Weights& x, Index, Index c) -> double& { return x.beta[c]; }, setup, batch, g, 5);
    } else {
        CHECK(grads.gamma.size() == 0);
    }
    // The padding_idx row receives nothing; zero padded rows pass nothing on.
    for (std::int64_t row : grads.token.rows) CHECK(row != 1);
    if (setup.padded_rows == seqembed::PaddedRows::zero) CHECK(grads.token.rows == std::vector<std::int64_t>{2, 3, 4, 5, 6, 7, 10});
}

}  // namespace

TEST_CASE("InputPipeline::backward equals central differences of the forward", "[backward]") {
    SECTION("token types, LayerNorm and dropout, zero padded rows") { check_setup(Setup{}); }
    SECTION("padded rows computed as the framework computes them") {
        Setup setup;
        setup.padded_rows = seqembed::PaddedRows::computed;
        check_setup(setup);
    }
    SECTION("no LayerNorm, no types, evaluation") {
        Setup setup;
        setup.layer_norm = false;
        setup.types = false;
        setup.dropping = false;
        setup.position_offset = 0;
        check_setup(setup);
    }
    SECTION("dropout without LayerNorm") {
        Setup setup;
        setup.layer_norm = false;
        check_setup(setup);
    }
    SECTION("a mask over past and current tokens, as a decoding cache gives it") {
        Setup setup;
        setup.positions = Setup::Positions::past_mask;
        check_setup(setup);
    }
    SECTION("explicit position ids, padded rows computed") {
        Setup setup;
        setup.positions = Setup::Positions::position_ids;
        setup.padded_rows = seqembed::PaddedRows::computed;
        check_setup(setup);
    }
}

TEST_CASE("InputPipeline::backward passes the gradient through the given call's mask", "[backward]") {
    Weights w;
    Setup setup;
    setup.layer_norm = false;
    const Pipeline pipeline = make_pipeline(w, setup);
    IdMatrix ids(2, 6);
    ids << 3, 4, 5, 3, 2, 1, 0, 9, 8, 3, 3, 6;
    const seqembed::Batch batch(ids);
    static_cast<void>(pipeline.forward(batch));
    static_cast<void>(pipeline.forward(batch));
    const RowMatrix<double> g = random_matrix(ids.size(), 8, 7);
    // Call 1's mask applied by hand, then the backward of evaluation.
    RowMatrix<double> masked = g;
    pipeline.dropout().apply(masked.data(), masked.size(), 1, 0);
    const auto by_call = pipeline.backward(batch, g, 1);
    const auto by_hand = pipeline.backward(batch, masked);
    CHECK(by_call.token.rows == by_hand.token.rows);
    CHECK(by_call.token.values == by_hand.token.values);
    CHECK(by_call.positions.values == by_hand.positions.values);
    // Another call's mask gives another gradient.
    CHECK(pipeline.backward(batch, g, 0).token.values != by_call.token.values);
}

TEST_CASE("InputPipeline::backward_into accumulates batches, and row-sparse gradients merge", "[backward]") {
    Weights w;
    Setup setup;
    setup.dropping = false;
    const Pipeline pipeline = make_pipeline(w, setup);
    IdMatrix first(1, 4);
    first << 2, 3, 3, 9;
    IdMatrix second(1, 4);
    second << 9, 5, 0, 0;
    IdMatrix both(2, 4);
    both << 2, 3, 3, 9, 9, 5, 0, 0;
    IdMatrix types = IdMatrix::Zero(1, 4);
    IdMatrix both_types = IdMatrix::Zero(2, 4);
    seqembed::Batch a(first);
    a.token_types = types;
    seqembed::Batch b(second);
    b.token_types = types;
    seqembed::Batch ab(both);
    ab.token_types = both_types;
    const RowMatrix<double> g = random_matrix(8, 8, 8);
    seqembed::PipelineGradients<double> sum;
    pipeline.backward_into(a, g.topRows(4), std::nullopt, sum);
    pipeline.backward_into(b, g.bottomRows(4), std::nullopt, sum);
    const auto together = pipeline.backward(ab, g);
    CHECK(sum.token.rows == std::vector<std::int64_t>{0, 2, 3, 5, 9});
    CHECK(sum.token.rows == together.token.rows);
    CHECK((sum.token.values - together.token.values).cwiseAbs().maxCoeff() <= 1e-12);
    CHECK((sum.positions.to_dense() - together.positions.to_dense()).cwiseAbs().maxCoeff() <= 1e-12);
    CHECK((sum.gamma - together.gamma).cwiseAbs().maxCoeff() <= 1e-12);
}

TEST_CASE("A token-type table viewing the token table adds its gradient to the token table's", "[backward]") {
    // GPT-2 looks its token types up in its word table, after the positions.
    const RowMatrix<double> token = random_matrix(10, 4, 9);
    const RowMatrix<double> positions = random_matrix(6, 4, 10);
    seqembed::TokenEmbeddingOptions token_options;
    token_options.scale = seqembed::EmbeddingScale::none();
    Pipeline pipeline(seqembed::TokenEmbedding<double>::from_weights(token, token_options),
                      seqembed::LearnedPositionalEmbedding<double>::from_weights(positions));
    const auto* table = seqembed::detail::StageAccess::table_row(pipeline.embedding(), 0);
    seqembed::TokenTypeOptions type_options;
    type_options.order = seqembed::TokenTypeOrder::after_positions;
    type_options.row_zero_by_default = false;
    pipeline.set_token_types(seqembed::TokenTypeEmbedding<double>::view(table, 10, 4), type_options);
    IdMatrix ids(1, 3);
    ids << 4, 5, 6;
    IdMatrix types(1, 3);
    types << 5, 0, 5;
    seqembed::Batch batch(ids);
    batch.token_types = types;
    const RowMatrix<double> g = random_matrix(3, 4, 11);
    const auto grads = pipeline.backward(batch, g);
    CHECK(grads.token_types.empty());
    CHECK(grads.token.rows == std::vector<std::int64_t>{0, 4, 5, 6});
    const RowMatrix<double> dense = grads.token.to_dense();
    CHECK((dense.row(5) - (g.row(1) + g.row(0) + g.row(2))).cwiseAbs().maxCoeff() <= 1e-15);
    CHECK((dense.row(0) - g.row(1)).cwiseAbs().maxCoeff() == 0.0);
}

TEST_CASE("A float token row read twice sums as double, whether its reads share a factor or not", "[backward]") {
    // GPT-2's types are rows of the token table read with a factor of 1, its ids with the
    // scale: row 2 is read by two ids (one factor), row 5 by an id and a type (two factors),
    // row 7 by three ids, row 4 once. Each must be the double sum of the products, rounded once.
    const Index width = 19;
    const RowMatrix<float> token = random_matrix(8, width, 81).cast<float>();
    seqembed::TokenEmbeddingOptions token_options;
    token_options.scale = seqembed::EmbeddingScale::value(1.7);
    seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>> pipeline(
        seqembed::TokenEmbedding<float>::from_weights(token, token_options),
        seqembed::LearnedPositionalEmbedding<float>::from_weights(random_matrix(4, width, 82).cast<float>()));
    seqembed::TokenTypeOptions type_options;
    type_options.order = seqembed::TokenTypeOrder::after_positions;
    type_options.row_zero_by_default = false;
    pipeline.set_token_types(
        seqembed::TokenTypeEmbedding<float>::view(seqembed::detail::StageAccess::table_row(pipeline.embedding(), 0), 8,
                                                  width),
        type_options);
    IdMatrix ids(2, 4);
    ids << 2, 7, 5, 7, 4, 2, 7, 3;
    IdMatrix types(2, 4);
    types << 6, 6, 6, 6, 6, 6, 6, 5;  // row 6 read by seven types; row 5 by the last
    seqembed::Batch batch(ids);
    batch.token_types = types;
    const RowMatrix<float> g = random_matrix(8, width, 83).cast<float>();
    const auto grads = pipeline.backward(batch, g);
    REQUIRE(grads.token.rows == std::vector<std::int64_t>{2, 3, 4, 5, 6, 7});
    for (std::size_t k = 0; k < grads.token.rows.size(); ++k) {
        const std::int64_t row = grads.token.rows[k];
        for (Index j = 0; j < width; ++j) {
            double sum = 0;
            for (Index r = 0; r < 8; ++r) {
                if (ids(r / 4, r % 4) == row) sum += static_cast<double>(1.7f) * static_cast<double>(g(r, j));
                if (types(r / 4, r % 4) == row) sum += static_cast<double>(g(r, j));
            }
            INFO("row " << row << " column " << j);
            CHECK(grads.token.values(static_cast<Index>(k), j) == static_cast<float>(sum));
        }
    }
}

TEST_CASE("InputPipeline::backward rejects bad input and leaves the sums as they were", "[backward][bad-input]") {
    Weights w;
    const Pipeline pipeline = make_pipeline(w, Setup{});
    IdMatrix ids(1, 3);
    ids << 2, 3, 4;
    IdMatrix types = IdMatrix::Zero(1, 3);
    seqembed::Batch batch(ids);
    batch.token_types = types;
    static_cast<void>(pipeline.forward(batch));
    const RowMatrix<double> g = random_matrix(3, 8, 12);
    seqembed::PipelineGradients<double> sum = pipeline.backward(batch, g, 0);
    const seqembed::PipelineGradients<double> before = sum;
    CHECK_THROWS_AS(pipeline.backward_into(batch, random_matrix(3, 7, 1), 0, sum), seqembed::shape_error);
    CHECK_THROWS_WITH(pipeline.backward_into(batch, g, 1, sum), Catch::Matchers::Contains("dropout call 1 was never used"));
    IdMatrix bad = ids;
    bad(0, 1) = 11;
    seqembed::Batch bad_batch(bad);
    bad_batch.token_types = types;
    CHECK_THROWS_AS(pipeline.backward_into(bad_batch, g, 0, sum), seqembed::index_error);
    CHECK(sum.token.rows == before.token.rows);
    CHECK(sum.token.values == before.token.values);
    // Gradients of another table's shape do not add.
    seqembed::RowGradient<double> other;
    other.table_rows = 5;
    other.d_model = 8;
    other.rows = {1};
    other.values = RowMatrix<double>::Ones(1, 8);
    CHECK_THROWS_AS(sum.token.add(other), seqembed::shape_error);
    CHECK(sum.token.rows == before.token.rows);
}

TEST_CASE("A float pipeline with a bfloat16 table gives float gradients close to double's", "[backward]") {
    // The table rounded to bfloat16 is exact in float and double alike.
    const RowMatrix<Eigen::bfloat16> token = random_matrix(20, 16, 13).cast<Eigen::bfloat16>();
    const RowMatrix<double> positions = random_matrix(8, 16, 14);
    IdMatrix ids(2, 8);
    ids << 3, 3, 3, 19, 0, 5, 5, 1, 7, 3, 2, 2, 2, 2, 11, 12;
    const RowMatrix<double> g = random_matrix(16, 16, 15);
    seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>,
                            seqembed::TokenEmbedding<float, Eigen::bfloat16>>
        narrow(seqembed::TokenEmbedding<float, Eigen::bfloat16>::from_weights(token),
               seqembed::LearnedPositionalEmbedding<float>::from_weights(positions.cast<float>()));
    narrow.set_layer_norm(seqembed::LayerNorm<float>(16, 1e-5));
    Pipeline wide(seqembed::TokenEmbedding<double>::from_weights(token.cast<double>()),
                  seqembed::LearnedPositionalEmbedding<double>::from_weights(positions.cast<float>().cast<double>()));
    wide.set_layer_norm(seqembed::LayerNorm<double>(16, 1e-5));
    const seqembed::Batch batch(ids);
    const RowMatrix<float> narrow_g = g.cast<float>();
    const seqembed::PipelineGradients<float> narrow_grads = narrow.backward(batch, narrow_g);
    const seqembed::PipelineGradients<double> wide_grads = wide.backward(batch, narrow_g.cast<double>());
    REQUIRE(narrow_grads.token.rows == wide_grads.token.rows);
    const RowMatrix<double> difference = narrow_grads.token.values.cast<double>() - wide_grads.token.values;
    CHECK(difference.cwiseAbs().maxCoeff() <= 1e-5 * std::max(1.0, wide_grads.token.values.cwiseAbs().maxCoeff()));
    CHECK((narrow_grads.gamma.cast<double>() - wide_grads.gamma).cwiseAbs().maxCoeff() <= 1e-5);
}

TEST_CASE("trainable() copies a shared or viewed table once, and its other holders keep theirs", "[backward][trainable]") {
    const RowMatrix<double> token = random_matrix(10, 4, 16);
    const RowMatrix<double> positions = random_matrix(6, 4, 17);
    const auto embedding = seqembed::TokenEmbedding<double>::from_weights(token);
    const auto learned = seqembed::LearnedPositionalEmbedding<double>::view(positions.data(), 6, 4);
    Pipeline pipeline(embedding, learned);
    pipeline.set_layer_norm(seqembed::LayerNorm<double>(4));
    const Pipeline copy = pipeline;
    IdMatrix ids(1, 3);
    ids << 1, 2, 3;
    const seqembed::Batch batch(ids);
    const RowMatrix<double> before = pipeline.forward(batch);

    seqembed::PipelineTables<double> tables = pipeline.trainable();
    REQUIRE(tables.token);
    REQUIRE(tables.positions);
    CHECK(tables.token->copied);      // shared with `embedding` and `copy`
    CHECK(tables.positions->copied);  // a view of the caller's memory: never written through
    CHECK(!tables.token_types);
    REQUIRE(tables.gamma);
    tables.token->weights.row(2).array() += 1.0;
    tables.positions->weights.row(0).array() -= 1.0;
    (*tables.gamma)(0, 1) = 3.0;
    CHECK(embedding.table() == token);
    CHECK(positions == random_matrix(6, 4, 17));
    CHECK(copy.forward(batch) == before);
    CHECK(copy.layer_norm()->gamma()(1) == 1.0);
    CHECK(pipeline.forward(batch) != before);
    CHECK(pipeline.embedding().table()(2, 0) == token(2, 0) + 1.0);
    CHECK(pipeline.layer_norm()->gamma()(1) == 3.0);
    // Now the pipeline's own: opened again without a copy.
    const seqembed::PipelineTables<double> again = pipeline.trainable();
    CHECK(!again.token->copied);
    CHECK(!again.positions->copied);
    CHECK(again.token->weights.data() == tables.token->weights.data());
}

TEST_CASE("A token-type table viewing the token table stays tied when the table is opened", "[backward][trainable]") {
    const RowMatrix<double> token = random_matrix(10, 4, 18);
    seqembed::TokenEmbeddingOptions token_options;
    token_options.scale = seqembed::EmbeddingScale::none();
    Pipeline pipeline(seqembed::TokenEmbedding<double>::from_weights(token, token_options),
                      seqembed::LearnedPositionalEmbedding<double>::from_weights(random_matrix(6, 4, 19)));
    seqembed::TokenTypeOptions type_options;
    type_options.order = seqembed::TokenTypeOrder::after_positions;
    type_options.row_zero_by_default = false;
    pipeline.set_token_types(
        seqembed::TokenTypeEmbedding<double>::view(seqembed::detail::StageAccess::table_row(pipeline.embedding(), 0), 10, 4),
        type_options);
    const Pipeline copy = pipeline;
    IdMatrix ids(1, 2);
    ids << 0, 1;
    IdMatrix types(1, 2);
    types << 7, 7;
    seqembed::Batch batch(ids);
    batch.token_types = types;
    const RowMatrix<double> before = copy.forward(batch);

    seqembed::PipelineTables<double> tables = pipeline.trainable();
    CHECK(tables.token->copied);
    CHECK(!tables.token_types);  // it trains as part of the token table
    tables.token->weights.row(7).setZero();
    // The type rows read the pipeline's new table; the copy keeps the old one.
    const RowMatrix<double> after = pipeline.forward(batch);
    CHECK((after - before).cwiseAbs().maxCoeff() > 0.1);
    CHECK(copy.forward(batch) == before);
    const RowMatrix<double> without_types = pipeline.forward(seqembed::Batch(ids));
    CHECK(after == without_types);  // type row 7 is now zero
    CHECK(!pipeline.trainable().token->copied);
}

TEST_CASE("Backward and the optimizers train a pipeline's tables: the loss falls", "[backward][trainable]") {
    // Regress the output onto a fixed target with SparseAdam on the token table and Adam on the
    // positions and LayerNorm; dropout on, each step's backward through its forward's call.
    seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>> pipeline(
        seqembed::TokenEmbedding<float>(50, 16), seqembed::LearnedPositionalEmbedding<float>(8, 16), {0.1, 3});
    pipeline.set_layer_norm(seqembed::LayerNorm<float>(16));
    pipeline.set_training(true);
    IdMatrix ids(4, 8);
    for (Index k = 0; k < ids.size(); ++k) ids.data()[k] = (k * 7) % 50;
    const seqembed::Batch batch(ids);
    const RowMatrix<float> target = random_matrix(32, 16, 20).cast<float>();
    seqembed::optim::SparseAdam<float> token_step("token table", 50, 16);
    seqembed::optim::Adam<float> position_step("positions", 8, 16);
    seqembed::optim::Adam<float> gamma_step("gamma", 1, 16);
    seqembed::optim::Adam<float> beta_step("beta", 1, 16);
    const auto loss_of = [&](const RowMatrix<float>& out) { return (out - target).squaredNorm() / 32.0f; };
    float first = 0;
    float last = 0;
    for (int step = 0; step < 200; ++step) {
        const std::uint64_t call = pipeline.dropout().calls();
        const RowMatrix<float> out = pipeline.forward(batch);
        const float loss = loss_of(out);
        if (step == 0) first = loss;
        last = loss;
        const RowMatrix<float> grad = (out - target) * (2.0f / 32.0f);
        const seqembed::PipelineGradients<float> grads = pipeline.backward(batch, grad, call);
        seqembed::PipelineTables<float> tables = pipeline.trainable();
        token_step.step(tables.token->weights, grads.token, 0.05);
        position_step.step(tables.positions->weights, grads.positions, 0.05);
        gamma_step.step(*tables.gamma, RowMatrix<float>(grads.gamma), 0.05);
        beta_step.step(*tables.beta, RowMatrix<float>(grads.beta), 0.05);
    }
    INFO("loss " << first << " -> " << last);
    CHECK(last < first / 4);
}

namespace {

template <typename Scalar>
RowMatrix<Scalar> fixture_matrix(const double* values, Index rows, Index cols) {
    RowMatrix<Scalar> m(rows, cols);
    for (Index k = 0; k < m.size(); ++k) m.data()[k] = static_cast<Scalar>(values[k]);
    return m;
}

/// The largest difference between a gradient and PyTorch's, relative to max(1, |theirs|).
template <typename Scalar>
double worst_difference(const RowMatrix<Scalar>& ours, const RowMatrix<Scalar>& theirs) {
    REQUIRE(ours.rows() == theirs.rows());
    REQUIRE(ours.cols() == theirs.cols());
    double worst = 0;
    for (Index k = 0; k < ours.size(); ++k) {
        const auto want = static_cast<double>(theirs.data()[k]);
        worst = std::max(worst, std::abs(static_cast<double>(ours.data()[k]) - want) / std::max(1.0, std::abs(want)));
    }
    return worst;
}

/// Every gradient within the bounds of a fixture case's autograd gradients.
template <typename Scalar, typename Case>
void check_gradients(const seqembed::PipelineGradients<Scalar>& ours) {
    const double tolerance = std::is_same_v<Scalar, float> ? 4e-6 : 1e-12;
    const auto check = [&](const char* what, const RowMatrix<Scalar>& mine, const double* theirs) {
        const double worst = worst_difference(mine, fixture_matrix<Scalar>(theirs, mine.rows(), mine.cols()));
        INFO(what << ": worst relative difference " << worst);
        CHECK(worst <= tolerance);
    };
    check("token table", ours.token.to_dense(), Case::token_grad);
    check("positions", ours.positions.to_dense(), Case::positions_grad);
    check("token types", ours.token_types.to_dense(), Case::types_grad);
    check("gamma", RowMatrix<Scalar>(ours.gamma), Case::gamma_grad);
    check("beta", RowMatrix<Scalar>(ours.beta), Case::beta_grad);
}

template <typename Scalar, typename Case>
void check_against_autograd() {
    namespace fx = seqembed_backward_fixtures;
    seqembed::TokenEmbeddingOptions token_options;
    token_options.padding_idx = fx::padding_idx;
    token_options.scale = seqembed::EmbeddingScale::value(fx::scale);
    seqembed::LearnedPositionsOptions position_options;
    position_options.offset = fx::position_offset;
    seqembed::InputPipeline<Scalar, seqembed::LearnedPositionalEmbedding<Scalar>> pipeline(
        seqembed::TokenEmbedding<Scalar>::from_weights(fixture_matrix<Scalar>(Case::token, fx::vocab, fx::d_model),
                                                       token_options),
        seqembed::LearnedPositionalEmbedding<Scalar>::from_weights(
            fixture_matrix<Scalar>(Case::positions, fx::max_positions, fx::d_model), position_options));
    pipeline.set_token_types(
        seqembed::TokenTypeEmbedding<Scalar>::from_weights(fixture_matrix<Scalar>(Case::types, fx::type_rows, fx::d_model)));
    const RowMatrix<Scalar> gamma = fixture_matrix<Scalar>(Case::gamma, 1, fx::d_model);
    const RowMatrix<Scalar> beta = fixture_matrix<Scalar>(Case::beta, 1, fx::d_model);
    pipeline.set_layer_norm(seqembed::LayerNorm<Scalar>::from_weights(gamma, beta, 1e-5));
    IdMatrix ids(fx::batch, fx::seq);
    IdMatrix mask(fx::batch, fx::seq);
    IdMatrix types(fx::batch, fx::seq);
    for (Index k = 0; k < ids.size(); ++k) {
        ids.data()[k] = fx::ids[k];
        mask.data()[k] = fx::attention_mask[k];
        types.data()[k] = fx::token_types[k];
    }
    const std::vector<std::int64_t> offsets(std::begin(fx::step_offsets), std::end(fx::step_offsets));
    seqembed::Batch batch(ids, seqembed::Padding::from_mask(mask), seqembed::StepOffsets(offsets));
    batch.token_types = types;
    // The fixture's dropout mask applied to the output's gradient by hand.
    const RowMatrix<Scalar> grad = fixture_matrix<Scalar>(Case::grad_out, ids.size(), fx::d_model).array() *
                                   fixture_matrix<Scalar>(Case::mask, ids.size(), fx::d_model).array();
    const seqembed::PipelineGradients<Scalar> ours = pipeline.backward(batch, grad);
    check_gradients<Scalar, Case>(ours);
}

}  // namespace

TEST_CASE("InputPipeline::backward equals PyTorch's autograd (padding both sides, padding_idx, offsets, types, LayerNorm, a dropout mask)",
          "[backward]") {
    check_against_autograd<float, seqembed_backward_fixtures::Case_float>();
    check_against_autograd<double, seqembed_backward_fixtures::Case_double>();
}

namespace {

template <typename Scalar, typename Case>
void check_roberta_against_autograd() {
    namespace fx = seqembed_backward_fixtures;
    seqembed::TokenEmbeddingOptions token_options;
    token_options.padding_idx = fx::padding_idx;
    token_options.scale = seqembed::EmbeddingScale::none();
    seqembed::PipelineOptions options;
    options.positions = seqembed::PositionNumbering::non_padding_ids;
    options.padding_id = fx::padding_idx;
    options.padded_rows = seqembed::PaddedRows::computed;
    seqembed::InputPipeline<Scalar, seqembed::LearnedPositionalEmbedding<Scalar>> pipeline(
        seqembed::TokenEmbedding<Scalar>::from_weights(fixture_matrix<Scalar>(Case::token, fx::vocab, fx::d_model),
                                                       token_options),
        seqembed::LearnedPositionalEmbedding<Scalar>::from_weights(
            fixture_matrix<Scalar>(Case::positions, fx::max_positions, fx::d_model),
            seqembed::LearnedPositionsOptions::roberta(fx::padding_idx)),
        options);
    pipeline.set_token_types(
        seqembed::TokenTypeEmbedding<Scalar>::from_weights(fixture_matrix<Scalar>(Case::types, fx::type_rows, fx::d_model)));
    pipeline.set_layer_norm(seqembed::LayerNorm<Scalar>::from_weights(fixture_matrix<Scalar>(Case::gamma, 1, fx::d_model),
                                                                      fixture_matrix<Scalar>(Case::beta, 1, fx::d_model),
                                                                      1e-5));
    IdMatrix ids(fx::batch, fx::seq);
    IdMatrix types(fx::batch, fx::seq);
    for (Index k = 0; k < ids.size(); ++k) {
        ids.data()[k] = fx::roberta_ids[k];
        types.data()[k] = fx::roberta_token_types[k];
    }
    const std::vector<std::int64_t> past(std::begin(fx::roberta_past), std::end(fx::roberta_past));
    seqembed::Batch batch(ids, seqembed::Padding::none(), seqembed::StepOffsets(past));
    batch.token_types = types;
    const RowMatrix<Scalar> grad = fixture_matrix<Scalar>(Case::grad_out, ids.size(), fx::d_model).array() *
                                   fixture_matrix<Scalar>(Case::mask, ids.size(), fx::d_model).array();
    const seqembed::PipelineGradients<Scalar> ours = pipeline.backward(batch, grad);
    // Pad ids read row padding_idx of both tables, which receive no gradient.
    CHECK(std::find(ours.token.rows.begin(), ours.token.rows.end(), fx::padding_idx) == ours.token.rows.end());
    CHECK(std::find(ours.positions.rows.begin(), ours.positions.rows.end(), fx::padding_idx) ==
          ours.positions.rows.end());
    check_gradients<Scalar, Case>(ours);
}

}  // namespace

TEST_CASE("RoBERTa's padding_idx rows, which pad ids read, receive no gradient, as Hugging Face's nn.Embedding",
          "[backward]") {
    check_roberta_against_autograd<float, seqembed_backward_fixtures::RobertaCase_float>();
    check_roberta_against_autograd<double, seqembed_backward_fixtures::RobertaCase_double>();
}

namespace {

/// BART's encoder or decoder stage of the tied fixture: the shared table's own copy (as a loader
/// that read it for each stage would hold), the stage's positions by index and its LayerNorm.
template <typename Scalar>
seqembed::InputPipeline<Scalar, seqembed::LearnedPositionalEmbedding<Scalar>> tied_fixture_stage(
    const double* token, const double* positions, const double* gamma, const double* beta) {
    namespace fx = seqembed_backward_fixtures;
    seqembed::TokenEmbeddingOptions token_options;
    token_options.padding_idx = fx::padding_idx;
    token_options.scale = seqembed::EmbeddingScale::value(fx::scale);
    seqembed::LearnedPositionsOptions position_options;
    position_options.offset = fx::position_offset;
    seqembed::PipelineOptions options;
    options.positions = seqembed::PositionNumbering::sequence_index;
    options.padded_rows = seqembed::PaddedRows::computed;
    seqembed::InputPipeline<Scalar, seqembed::LearnedPositionalEmbedding<Scalar>> stage(
        seqembed::TokenEmbedding<Scalar>::from_weights(fixture_matrix<Scalar>(token, fx::vocab, fx::d_model),
                                                       token_options),
        seqembed::LearnedPositionalEmbedding<Scalar>::from_weights(
            fixture_matrix<Scalar>(positions, fx::max_positions, fx::d_model), position_options),
        options);
    stage.set_layer_norm(seqembed::LayerNorm<Scalar>::from_weights(fixture_matrix<Scalar>(gamma, 1, fx::d_model),
                                                                   fixture_matrix<Scalar>(beta, 1, fx::d_model), 1e-5));
    return stage;
}

template <typename Scalar, typename Case>
void check_tied_against_torch() {
    namespace fx = seqembed_backward_fixtures;
    auto encoder = tied_fixture_stage<Scalar>(Case::token, Case::enc_positions, Case::enc_gamma, Case::enc_beta);
    auto decoder = tied_fixture_stage<Scalar>(Case::token, Case::dec_positions, Case::dec_gamma, Case::dec_beta);
    const auto untied_decoder = decoder;
    decoder.tie_token_table(encoder);
    CHECK(encoder.token_table_tied());
    CHECK(decoder.token_table_tied());
    CHECK(!untied_decoder.token_table_tied());

    IdMatrix src(fx::tied_batch, fx::tied_src_seq);
    IdMatrix tgt(fx::tied_batch, fx::tied_tgt_seq);
    for (Index k = 0; k < src.size(); ++k) src.data()[k] = fx::tied_src[k];
    for (Index k = 0; k < tgt.size(); ++k) tgt.data()[k] = fx::tied_tgt[k];
    const seqembed::Batch src_batch(src);
    const seqembed::Batch tgt_batch(tgt, seqembed::Padding::none(), seqembed::StepOffsets(fx::tied_past));
    const RowMatrix<Scalar> grad_enc = fixture_matrix<Scalar>(Case::grad_enc, src.size(), fx::d_model);
    const RowMatrix<Scalar> grad_dec = fixture_matrix<Scalar>(Case::grad_dec, tgt.size(), fx::d_model);
    const RowMatrix<Scalar> decoder_before = untied_decoder.forward(tgt_batch);

    const double tolerance = std::is_same_v<Scalar, float> ? 4e-6 : 1e-12;
    seqembed::optim::SparseAdam<Scalar> adam("shared", fx::vocab, fx::d_model);
    for (int step = 0; step < 2; ++step) {
        seqembed::RowGradient<Scalar> shared = encoder.backward(src_batch, grad_enc).token;
        shared.add(decoder.backward(tgt_batch, grad_dec).token);
        if (step == 0) {
            const double worst =
                worst_difference(shared.to_dense(), fixture_matrix<Scalar>(Case::token_grad, fx::vocab, fx::d_model));
            INFO("the first step's summed gradient: worst relative difference " << worst);
            CHECK(worst <= tolerance);
        }
        adam.step(encoder.trainable().token->weights, shared, fx::tied_lr);
    }
    // One table, stepped through the encoder, read by both.
    CHECK(decoder.embedding().table().data() == encoder.embedding().table().data());
    const RowMatrix<Scalar> after = fixture_matrix<Scalar>(Case::token_after, fx::vocab, fx::d_model);
    const double worst = worst_difference(RowMatrix<Scalar>(encoder.embedding().table()), after);
    INFO("the table after two steps: worst relative difference " << worst);
    CHECK(worst <= tolerance);
    // A copy made before the tie keeps the values it had.
    CHECK(untied_decoder.forward(tgt_batch) == decoder_before);
    CHECK(decoder.forward(tgt_batch) != decoder_before);
}

}  // namespace

TEST_CASE("Encoder and decoder tied to one token table train it as PyTorch trains BART's shared nn.Embedding",
          "[backward][trainable]") {
    check_tied_against_torch<float, seqembed_backward_fixtures::TiedCase_float>();
    check_tied_against_torch<double, seqembed_backward_fixtures::TiedCase_double>();
}

TEST_CASE("tie_token_table: steps through either side are read by both, copies and untie leave the tie",
          "[backward][trainable]") {
    const RowMatrix<double> token = random_matrix(10, 4, 40);
    Pipeline encoder(seqembed::TokenEmbedding<double>::from_weights(token),
                     seqembed::LearnedPositionalEmbedding<double>::from_weights(random_matrix(6, 4, 41)));
    seqembed::InputPipeline<double> decoder(seqembed::TokenEmbedding<double>::view(token.data(), 10, 4),
                                            seqembed::SinusoidalPositionalEncoding<double>(4));
    IdMatrix ids(1, 3);
    ids << 1, 2, 3;
    const seqembed::Batch batch(ids);
    const RowMatrix<double> decoder_before = decoder.forward(batch);

    decoder.tie_token_table(encoder);
    REQUIRE(decoder.token_table_tied());
    // The decoder viewed the caller's memory; it now reads the encoder's own copy.
    CHECK(decoder.embedding().table().data() == encoder.embedding().table().data());
    CHECK(decoder.embedding().table().data() != token.data());
    // A step through the decoder is read by the encoder, and neither copies again.
    seqembed::PipelineTables<double> tables = decoder.trainable();
    CHECK(!tables.token->copied);
    tables.token->weights.row(2).array() += 1.0;
    CHECK(encoder.embedding().table()(2, 0) == token(2, 0) + 1.0);
    CHECK(!encoder.trainable().token->copied);
    CHECK(decoder.forward(batch) != decoder_before);
    CHECK(token == random_matrix(10, 4, 40));  // the caller's memory was never written

    // A copy made after the tie copies the values: the tie's later steps do not reach it.
    const seqembed::InputPipeline<double> snapshot = decoder;
    CHECK(!snapshot.token_table_tied());
    const RowMatrix<double> snapshot_before = snapshot.forward(batch);
    tables.token->weights.row(3).setZero();
    encoder.trainable().token->weights.row(1).array() *= 2.0;
    CHECK(snapshot.forward(batch) == snapshot_before);
    CHECK(decoder.embedding().table()(1, 0) == 2.0 * token(1, 0));
    seqembed::InputPipeline<double> copy = decoder;
    const seqembed::InputPipeline<double>& same = copy;
    copy = same;  // self-assignment keeps the copy as it was
    CHECK(!copy.trainable().token->copied);  // its own already
    CHECK(decoder.token_table_tied());

    // Untied, the decoder keeps the values it had; the encoder's later steps do not reach it.
    decoder.untie_token_table();
    CHECK(!decoder.token_table_tied());
    CHECK(!encoder.token_table_tied());  // its only partner left
    CHECK(decoder.embedding().table().data() != encoder.embedding().table().data());
    const RowMatrix<double> untied_before = decoder.forward(batch);
    encoder.trainable().token->weights.row(2).setZero();
    CHECK(decoder.forward(batch) == untied_before);
    CHECK(!decoder.trainable().token->copied);
}

TEST_CASE("tie_token_table: a third pipeline joins the tie, and one that re-ties leaves its old partner",
          "[backward][trainable]") {
    const RowMatrix<double> token = random_matrix(10, 4, 49);
    const auto make = [&] {
        return seqembed::InputPipeline<double>(seqembed::TokenEmbedding<double>::from_weights(token),
                                               seqembed::SinusoidalPositionalEncoding<double>(4));
    };
    auto a = make();
    auto b = make();
    auto c = make();
    b.tie_token_table(a);
    c.tie_token_table(b);
    CHECK(a.token_table_tied());
    CHECK(b.token_table_tied());
    CHECK(c.token_table_tied());
    c.trainable().token->weights(4, 0) = 7.0;
    CHECK(a.embedding().table()(4, 0) == 7.0);
    CHECK(b.embedding().table()(4, 0) == 7.0);

    // b ties to a fresh table: a and c stay tied to each other, b reads d's.
    auto d = make();
    b.tie_token_table(d);
    CHECK(b.embedding().table().data() == d.embedding().table().data());
    CHECK(b.embedding().table()(4, 0) == token(4, 0));
    a.trainable().token->weights(5, 1) = 8.0;
    CHECK(c.embedding().table()(5, 1) == 8.0);
    CHECK(b.embedding().table()(5, 1) == token(5, 1));

    // A pair whose partner left is untied, and its next opening copies nothing it does not own.
    auto e = make();
    auto f = make();
    f.tie_token_table(e);
    f.untie_token_table();
    CHECK(!e.token_table_tied());
    CHECK(!e.trainable().token->copied);
}

TEST_CASE("tie_token_table refuses tables of other shapes and leaves both pipelines as they were",
          "[backward][trainable][bad-input]") {
    const RowMatrix<double> token = random_matrix(10, 4, 42);
    Pipeline encoder(seqembed::TokenEmbedding<double>::view(token.data(), 10, 4),
                     seqembed::LearnedPositionalEmbedding<double>::from_weights(random_matrix(6, 4, 43)));
    seqembed::InputPipeline<double> wider(seqembed::TokenEmbedding<double>::from_weights(random_matrix(10, 6, 44)),
                                          seqembed::SinusoidalPositionalEncoding<double>(6));
    seqembed::InputPipeline<double> larger(seqembed::TokenEmbedding<double>::from_weights(random_matrix(11, 4, 45)),
                                           seqembed::SinusoidalPositionalEncoding<double>(4));
    CHECK_THROWS_AS(wider.tie_token_table(encoder), seqembed::shape_error);
    CHECK_THROWS_WITH(wider.tie_token_table(encoder),
                      Catch::Matchers::Contains("tie_token_table: a 10 x 4 token table cannot be tied to this 10 x 6 one"));
    CHECK_THROWS_WITH(larger.tie_token_table(encoder),
                      Catch::Matchers::Contains("tie_token_table: a 10 x 4 token table cannot be tied to this 11 x 4 one"));
    CHECK(!encoder.token_table_tied());
    CHECK(!wider.token_table_tied());
    CHECK(encoder.embedding().table().data() == token.data());  // not opened

    seqembed::TokenEmbeddingOptions first_half;
    first_half.shard = seqembed::VocabularyShard::of_rank(10, 2, 0);
    seqembed::TokenEmbeddingOptions second_half;
    second_half.shard = seqembed::VocabularyShard::of_rank(10, 2, 1);
    auto first = seqembed::TokenEmbedding<double>::from_weights(random_matrix(5, 4, 46), first_half);
    auto second = seqembed::TokenEmbedding<double>::from_weights(random_matrix(5, 4, 47), second_half);
    CHECK_THROWS_AS(first.tie_table(second), seqembed::shape_error);
    CHECK_THROWS_WITH(first.tie_table(second), Catch::Matchers::Contains("tables hold different parts of the vocabulary"));
    CHECK(!first.is_tied());
    CHECK(!second.is_tied());

    // Through the pipelines: the shard is checked before either table is opened.
    const RowMatrix<double> half = random_matrix(5, 4, 50);
    seqembed::InputPipeline<double> viewing(seqembed::TokenEmbedding<double>::view(half.data(), 5, 4, second_half),
                                            seqembed::SinusoidalPositionalEncoding<double>(4));
    seqembed::InputPipeline<double> other(first, seqembed::SinusoidalPositionalEncoding<double>(4));
    CHECK_THROWS_WITH(other.tie_token_table(viewing),
                      Catch::Matchers::Contains("tie_token_table: the tables hold different parts of the vocabulary"));
    CHECK(viewing.embedding().table().data() == half.data());  // not opened

    // GPT-2's token types view its token table: refused, both pipelines unchanged.
    seqembed::InputPipeline<double> gpt2(seqembed::TokenEmbedding<double>::view(token.data(), 10, 4),
                                         seqembed::SinusoidalPositionalEncoding<double>(4));
    gpt2.set_token_types(
        seqembed::TokenTypeEmbedding<double>::view(seqembed::detail::StageAccess::table_row(gpt2.embedding(), 0), 10, 4),
        seqembed::TokenTypeOptions{seqembed::TokenTypeOrder::after_positions, false});
    CHECK_THROWS_WITH(gpt2.tie_token_table(encoder), Catch::Matchers::Contains("(GPT-2's) cannot be tied"));
    CHECK_THROWS_WITH(encoder.tie_token_table(gpt2), Catch::Matchers::Contains("(GPT-2's) cannot be tied"));
    CHECK(gpt2.embedding().table().data() == token.data());
    CHECK(encoder.embedding().table().data() == token.data());
}

TEST_CASE("A tied bfloat16 table shares its float master weights: a step through one is rounded into both",
          "[backward][trainable]") {
    using Narrow = seqembed::TokenEmbedding<float, Eigen::bfloat16>;
    const RowMatrix<float> weights = random_matrix(8, 4, 48).cast<float>();
    const RowMatrix<Eigen::bfloat16> narrow = weights.cast<Eigen::bfloat16>();
    Narrow encoder = Narrow::from_weights(narrow);
    Narrow decoder = Narrow::from_weights(narrow);
    decoder.tie_table(encoder);
    REQUIRE(encoder.has_master_weights());
    REQUIRE(decoder.has_master_weights());
    seqembed::TrainableTable<float> master = decoder.trainable_table();
    CHECK(!master.copied);
    CHECK(master.weights.data() == encoder.trainable_table().weights.data());
    master.weights(5, 1) += 0.25f;
    encoder.round_master_rows({5});
    const auto want = static_cast<Eigen::bfloat16>(static_cast<float>(narrow(5, 1)) + 0.25f);
    CHECK(static_cast<float>(decoder.table()(5, 1)) == static_cast<float>(want));
    CHECK(decoder.table().data() == encoder.table().data());

    // A copy takes the master weights and the table as they are; the tie's later steps and
    // roundings do not reach it.
    const Narrow snapshot = decoder;
    master.weights(6, 2) += 0.5f;
    decoder.round_master_rows({6});
    CHECK(snapshot.table()(6, 2) == narrow(6, 2));
    CHECK(snapshot.table()(5, 1) == want);
    CHECK(!snapshot.is_tied());

    // Through the pipelines, as a training loop writes it.
    seqembed::InputPipeline<float, seqembed::NoPositions<float>, Narrow> enc(Narrow::from_weights(narrow),
                                                                             seqembed::NoPositions<float>(4));
    seqembed::InputPipeline<float, seqembed::NoPositions<float>, Narrow> dec(Narrow::from_weights(narrow),
                                                                             seqembed::NoPositions<float>(4));
    dec.tie_token_table(enc);
    enc.trainable().token->weights(1, 3) += 0.25f;
    enc.round_master_rows({1});
    IdMatrix ids(1, 1);
    ids << 1;
    const RowMatrix<float> row = dec.forward(seqembed::Batch(ids));
    // The default scale sqrt(4) = 2 is exact.
    CHECK(row(0, 3) == 2.0f * static_cast<float>(static_cast<Eigen::bfloat16>(static_cast<float>(narrow(1, 3)) + 0.25f)));
}

TEST_CASE("A learned position table's padding_idx: zeroed when seeded, recorded for weights, checked", "[backward]") {
    seqembed::LearnedPositionsOptions options;
    options.padding_idx = -2;  // row 4 of 6
    const seqembed::LearnedPositionalEmbedding<double> seeded(6, 3, options);
    CHECK(seeded.padding_idx() == std::optional<std::int64_t>(4));
    CHECK(seeded.table().row(4).isZero());
    CHECK(!seeded.table().row(3).isZero());
    const RowMatrix<double> weights = RowMatrix<double>::Ones(6, 3);
    const auto loaded = seqembed::LearnedPositionalEmbedding<double>::from_weights(weights, options);
    CHECK(loaded.table().row(4).isOnes());
    CHECK(loaded.backward(0, RowMatrix<double>::Ones(6, 3)).rows == std::vector<std::int64_t>{0, 1, 2, 3, 5});
    options.padding_idx = 6;
    CHECK_THROWS_AS(seqembed::LearnedPositionalEmbedding<double>::from_weights(weights, options), seqembed::index_error);
    options.padding_idx = -7;
    CHECK_THROWS_AS(seqembed::LearnedPositionalEmbedding<double>(6, 3, options), seqembed::index_error);
    CHECK(seqembed::LearnedPositionsOptions::roberta(1).padding_idx == std::optional<std::int64_t>(1));
    CHECK(!seqembed::LearnedPositionsOptions::bart().padding_idx);
}

TEST_CASE("The stages' backward chained by hand equal the pipeline's, bit for bit", "[backward]") {
    Weights w;
    const Pipeline pipeline = make_pipeline(w, Setup{});
    IdMatrix ids(2, 5);
    ids << 2, 3, 3, 9, 1, 0, 5, 5, 5, 10;
    IdMatrix types(2, 5);
    types << 0, 1, 2, 0, 1, 1, 1, 0, 0, 2;
    seqembed::Batch batch(ids);
    batch.token_types = types;
    const std::uint64_t call = pipeline.dropout().calls();
    static_cast<void>(pipeline.forward(batch));
    const RowMatrix<double> g = random_matrix(10, 8, 21);
    const auto fused = pipeline.backward(batch, g, call);

    // The forward chained by hand (the pipeline's sums, bit for bit: test_fused_vs_chained.cpp),
    // then each stage's backward in reverse.
    const auto& positions = pipeline.positions();
    RowMatrix<double> sums = pipeline.embedding().forward(ids) + pipeline.token_types()->forward(types);
    for (Index b = 0; b < 2; ++b) sums.middleRows(b * 5, 5) += positions.forward(0, 5);
    const RowMatrix<double> through_dropout = pipeline.dropout().backward(g, call);
    const seqembed::LayerNormGradients<double> norm = pipeline.layer_norm()->backward(sums, through_dropout);
    const auto token = pipeline.embedding().backward(ids, norm.x);
    const auto type = pipeline.token_types()->backward(types, norm.x);
    seqembed::RowGradient<double> position = positions.backward(0, norm.x.topRows(5));
    position.add(positions.backward(0, norm.x.bottomRows(5)));

    CHECK(token.rows == fused.token.rows);
    CHECK(token.values == fused.token.values);
    CHECK(type.values == fused.token_types.values);
    CHECK(norm.gamma == fused.gamma);
    CHECK(norm.beta == fused.beta);
    CHECK(position.rows == fused.positions.rows);
    // The fused sums each position row over both sequences at once, the chained one per
    // sequence then adds: the same up to rounding.
    CHECK((position.values - fused.positions.values).cwiseAbs().maxCoeff() <= 1e-14);
    CHECK_THROWS_AS(pipeline.dropout().backward(g, call + 1), seqembed::value_error);
    CHECK_THROWS_AS(pipeline.embedding().backward(ids, g.topRows(9)), seqembed::shape_error);
    CHECK_THROWS_AS(positions.backward(8, g), seqembed::index_error);
}

TEST_CASE("clip_grad_norm scales all the gradients together, as torch.nn.utils.clip_grad_norm_", "[backward]") {
    seqembed::PipelineGradients<float> grads;
    grads.token.table_rows = 10;
    grads.token.d_model = 2;
    grads.token.rows = {3, 7};
    grads.token.values = RowMatrix<float>(2, 2);
    grads.token.values << 3, 0, 0, 4;  // norm 5
    grads.gamma = Eigen::Matrix<float, 1, Eigen::Dynamic>::Constant(2, 6.0f);
    grads.beta = Eigen::Matrix<float, 1, Eigen::Dynamic>::Zero(2);
    // total sqrt(25 + 72) = sqrt(97)
    const double total = seqembed::clip_grad_norm(grads, 1.0);
    CHECK(total == Approx(std::sqrt(97.0)).epsilon(1e-12));
    const float factor = static_cast<float>(1.0 / (std::sqrt(97.0) + 1e-6));
    CHECK(grads.token.values(0, 0) == 3 * factor);
    CHECK(grads.gamma[1] == 6 * factor);
    // Below the limit nothing changes.
    const seqembed::PipelineGradients<float> before = grads;
    CHECK(seqembed::clip_grad_norm(grads, 10.0) == Approx(1.0).epsilon(1e-6));
    CHECK(grads.token.values == before.token.values);
    CHECK_THROWS_AS(seqembed::clip_grad_norm(grads, -1.0), seqembed::value_error);
}

TEST_CASE("clip_grad_norm scales by a norm that is not finite, as torch.nn.utils.clip_grad_norm_", "[backward]") {
    // PyTorch (error_if_nonfinite=False) multiplies by clamp(max_norm / (norm + 1e-6), max=1):
    // 0 for an infinite norm, so that finite values become 0 (keeping their sign) and an
    // infinite one NaN; NaN for a NaN norm.
    const auto gradients_with = [](float special) {
        seqembed::PipelineGradients<float> grads;
        grads.token.table_rows = 10;
        grads.token.d_model = 2;
        grads.token.rows = {3, 7};
        grads.token.values = RowMatrix<float>(2, 2);
        grads.token.values << 3, special, -2, 4;
        grads.gamma = Eigen::Matrix<float, 1, Eigen::Dynamic>::Constant(2, 6.0f);
        grads.beta = Eigen::Matrix<float, 1, Eigen::Dynamic>::Zero(2);
        return grads;
    };
    auto infinite = gradients_with(std::numeric_limits<float>::infinity());
    CHECK(std::isinf(seqembed::clip_grad_norm(infinite, 1.0)));
    CHECK(infinite.token.values(0, 0) == 0.0f);
    CHECK_FALSE(std::signbit(infinite.token.values(0, 0)));
    CHECK(std::isnan(infinite.token.values(0, 1)));
    CHECK(infinite.token.values(1, 0) == 0.0f);
    CHECK(std::signbit(infinite.token.values(1, 0)));
    CHECK(infinite.gamma[0] == 0.0f);
    CHECK(infinite.beta[1] == 0.0f);

    auto not_a_number = gradients_with(std::numeric_limits<float>::quiet_NaN());
    CHECK(std::isnan(seqembed::clip_grad_norm(not_a_number, 1.0)));
    CHECK(not_a_number.token.values.array().isNaN().all());
    CHECK(not_a_number.gamma.array().isNaN().all());
    CHECK(not_a_number.beta.array().isNaN().all());
}

TEST_CASE("InputPipeline::backward gives the same bits for any thread count", "[backward]") {
    // Large enough for several workers (one per 256 Ki output elements).
    const Index vocab = 300, width = 64, batch_size = 16, seq = 512;
    seqembed::TokenEmbeddingOptions token_options;
    token_options.padding_idx = 0;
    seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>> one(
        seqembed::TokenEmbedding<float>::from_weights(random_matrix(vocab, width, 22).cast<float>(), token_options),
        seqembed::LearnedPositionalEmbedding<float>::from_weights(random_matrix(seq, width, 23).cast<float>()),
        {0.1, 5, 1});
    one.set_layer_norm(seqembed::LayerNorm<float>(width));
    one.set_training(true);
    seqembed::PipelineOptions three_threads{0.1, 5, 3};
    seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>> three(
        one.embedding(), one.positions(), three_threads);
    three.set_layer_norm(*one.layer_norm());
    three.set_training(true);
    IdMatrix ids(batch_size, seq);
    std::mt19937 generator(24);
    for (Index k = 0; k < ids.size(); ++k) ids.data()[k] = static_cast<std::int64_t>(generator() % 40);  // repeats
    IdMatrix mask = IdMatrix::Ones(batch_size, seq);
    for (Index b = 0; b < batch_size; b += 2) mask.block(b, 0, 1, b * 7).setZero();
    const seqembed::Batch batch(ids, seqembed::Padding::from_mask(mask), {});
    static_cast<void>(one.forward(batch));
    static_cast<void>(three.forward(batch));
    const RowMatrix<float> g = random_matrix(ids.size(), width, 25).cast<float>();
    const auto serial = one.backward(batch, g, 0);
    const auto threaded = three.backward(batch, g, 0);
    CHECK(serial.token.rows == threaded.token.rows);
    CHECK(serial.token.values == threaded.token.values);
    CHECK(serial.positions.values == threaded.positions.values);
    CHECK(serial.gamma == threaded.gamma);
    CHECK(serial.beta == threaded.beta);
}

TEST_CASE("A backward with LayerNorm reuses its scratch across batches of any size, and its copies' calls",
          "[backward]") {
    // The pipeline keeps the scratch matrices of its last backward with LayerNorm: a smaller
    // batch uses their first rows, a larger one new ones, and a copy shares them. Each call must
    // give what a fresh pipeline gives.
    const Weights w;
    const Setup setup;
    const auto batch_of = [](Index batch_size, Index seq, unsigned seed) {
        IdMatrix ids(batch_size, seq);
        std::mt19937 generator(seed);
        for (Index k = 0; k < ids.size(); ++k) ids.data()[k] = static_cast<std::int64_t>(generator() % 11);
        return ids;
    };
    const IdMatrix large = batch_of(3, 10, 61), small = batch_of(2, 7, 62), larger = batch_of(4, 10, 63);
    const Pipeline reused = make_pipeline(w, setup);
    const Pipeline copy = reused;
    for (const IdMatrix* ids : {&large, &small, &larger, &small, &large}) {
        const seqembed::Batch batch(*ids);
        const RowMatrix<double> g = random_matrix(ids->size(), 8, static_cast<unsigned>(ids->size()));
        const Pipeline fresh = make_pipeline(w, setup);
        next_call(fresh, 5);
        next_call(reused, 5);  // and its copy's, which shares the counter
        for (const Pipeline* pipeline : {&reused, &copy}) {
            const auto got = pipeline->backward(batch, g, 4);
            const auto expected = fresh.backward(batch, g, 4);
            CHECK(got.token.rows == expected.token.rows);
            CHECK(got.token.values == expected.token.values);
            CHECK(got.positions.values == expected.positions.values);
            CHECK(got.token_types.values == expected.token_types.values);
            CHECK(got.gamma == expected.gamma);
            CHECK(got.beta == expected.beta);
        }
    }
}

TEST_CASE("A bfloat16 token table trains through float master weights, rounded back after each step",
          "[backward][trainable]") {
    using Narrow = seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>,
                                           seqembed::TokenEmbedding<float, Eigen::bfloat16>>;
    const RowMatrix<Eigen::bfloat16> table = random_matrix(12, 8, 26).cast<Eigen::bfloat16>();
    const auto embedding = seqembed::TokenEmbedding<float, Eigen::bfloat16>::from_weights(table);
    Narrow pipeline(embedding, seqembed::LearnedPositionalEmbedding<float>::from_weights(random_matrix(4, 8, 27).cast<float>()));
    CHECK(!pipeline.embedding().has_master_weights());
    CHECK_THROWS_AS(pipeline.round_master(), seqembed::value_error);
    IdMatrix ids(1, 4);
    ids << 3, 5, 5, 9;
    const seqembed::Batch batch(ids);
    const RowMatrix<float> g = random_matrix(4, 8, 28).cast<float>();
    const auto grads = pipeline.backward(batch, g);
    seqembed::PipelineTables<float> tables = pipeline.trainable();
    CHECK(tables.token->copied);
    CHECK(tables.token->weights == table.cast<float>());  // the master starts exact
    seqembed::optim::LazySgd<float> sgd("token", 12, 8);
    // A step too small for bfloat16: the master moves, the table keeps its values.
    sgd.step(tables.token->weights, grads.token, 1e-6);
    pipeline.round_master_rows(grads.token.rows);
    CHECK(tables.token->weights.row(5) != table.row(5).cast<float>());
    CHECK(pipeline.embedding().table().row(5) == table.row(5));
    // Steps that add up: the table follows the master, rounded to nearest even.
    for (int s = 0; s < 50; ++s) sgd.step(tables.token->weights, grads.token, 1e-2);
    pipeline.round_master_rows(grads.token.rows);
    CHECK(pipeline.embedding().table().row(5) == tables.token->weights.row(5).cast<Eigen::bfloat16>());
    CHECK(pipeline.embedding().table().row(5) != table.row(5));
    CHECK(pipeline.embedding().table().row(0) == table.row(0));  // untouched
    CHECK(embedding.table() == table);  // the embedding the pipeline was built from keeps its values
    CHECK_THROWS_AS(pipeline.round_master_rows({12}), seqembed::index_error);
    CHECK(!pipeline.trainable().token->copied);  // the master is the pipeline's own now
}

TEST_CASE("backward_step stores the rows it stepped into a bfloat16 table, as round_master_rows", "[backward][trainable]") {
    using Narrow = seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>,
                                           seqembed::TokenEmbedding<float, Eigen::bfloat16>>;
    const RowMatrix<Eigen::bfloat16> table = random_matrix(12, 8, 30).cast<Eigen::bfloat16>();
    const auto make = [&] {
        return Narrow(seqembed::TokenEmbedding<float, Eigen::bfloat16>::from_weights(table),
                      seqembed::LearnedPositionalEmbedding<float>::from_weights(random_matrix(4, 8, 31).cast<float>()));
    };
    IdMatrix ids(1, 4);
    ids << 3, 5, 5, 9;
    const seqembed::Batch batch(ids);
    const RowMatrix<float> g = random_matrix(4, 8, 32).cast<float>();
    // Gradients of up to 1: the step fuses. Of up to 4e37: row 5's two reads, times the scale
    // sqrt(8), could sum past half the largest float, so backward_step takes the unfused path
    // (backward, then the step); their sums stay finite.
    for (const double size : {1.0, 4e37}) {
        INFO("gradient size " << size);
        const RowMatrix<float> grad = g * static_cast<float>(size);
        const double lr = 1e-2 / size;
        Narrow fused = make();
        Narrow unfused = make();
        seqembed::optim::LazySgd<float> fused_step("token", 12, 8);
        seqembed::optim::LazySgd<float> unfused_step("token", 12, 8);
        for (int s = 0; s < 3; ++s) {
            (void)fused.backward_step(batch, grad, std::nullopt, fused_step, lr);
            const auto grads = unfused.backward(batch, grad);
            unfused_step.step(unfused.trainable().token->weights, grads.token, lr);
            unfused.round_master_rows(grads.token.rows);
        }
        CHECK(fused.embedding().table() == unfused.embedding().table());
        CHECK(fused.embedding().table() != table);
        CHECK(fused.embedding().table().row(5) == fused.trainable().token->weights.row(5).cast<Eigen::bfloat16>());
        CHECK(fused.embedding().table().row(0) == table.row(0));
    }
}

TEST_CASE("A pipeline with sinusoidal positions or none trains its token table only", "[backward]") {
    const RowMatrix<double> token = random_matrix(10, 8, 29);
    seqembed::InputPipeline<double> sinusoidal(seqembed::TokenEmbedding<double>::from_weights(token),
                                               seqembed::SinusoidalPositionalEncoding<double>(8));
    seqembed::InputPipeline<double, seqembed::NoPositions<double>> none(
        seqembed::TokenEmbedding<double>::from_weights(token), seqembed::NoPositions<double>(8));
    IdMatrix ids(2, 3);
    ids << 1, 2, 2, 4, 4, 4;
    IdMatrix mask(2, 3);
    mask << 1, 1, 0, 0, 1, 1;
    const seqembed::Batch batch(ids, seqembed::Padding::from_mask(mask), {});
    const RowMatrix<double> g = random_matrix(6, 8, 30);
    for (const auto& grads : {sinusoidal.backward(batch, g), none.backward(batch, g)}) {
        CHECK(grads.positions.empty());
        CHECK(grads.token_types.empty());
        CHECK(grads.gamma.size() == 0);
        REQUIRE(grads.token.rows == std::vector<std::int64_t>{1, 2, 4});
        const double scale = std::sqrt(8.0);
        CHECK((grads.token.values.row(2) - scale * (g.row(4) + g.row(5))).cwiseAbs().maxCoeff() <= 1e-12);
        CHECK((grads.token.values.row(1) - scale * g.row(1)).cwiseAbs().maxCoeff() <= 1e-12);
    }
    // An empty batch has empty gradients.
    const IdMatrix nothing(0, 3);
    const auto empty = sinusoidal.backward(seqembed::Batch(nothing), RowMatrix<double>(0, 8));
    CHECK(empty.token.empty());
    CHECK(empty.token.table_rows == 10);
}

namespace {

/// One backward_step on `fused` against backward then the optimizer's step on `unfused` (a copy
/// with its own tables): the token table and the other gradients the same bits.
template <typename Pipeline, typename Optimizer, typename Gradient>
void check_step_as_unfused(Pipeline& fused, Optimizer& fused_optimizer, Pipeline& unfused, Optimizer& unfused_optimizer,
                           const seqembed::Batch& batch, const Gradient& g, std::optional<std::uint64_t> call,
                           double lr) {
    const auto others = fused.backward_step(batch, g, call, fused_optimizer, lr);
    const auto all = unfused.backward(batch, g, call);
    unfused_optimizer.step(unfused.trainable().token->weights, all.token, lr);
    CHECK(others.token.empty());
    CHECK(others.positions.values == all.positions.values);
    CHECK(fused.embedding().table() == unfused.embedding().table());
}

/// backward_step against backward then the optimizer's step, on two copies of one pipeline.
template <typename Optimizer>
void check_fused_step(const Setup& setup, Optimizer fused_optimizer, bool poison) {
    Weights w;
    seqembed::InputPipeline<double, seqembed::LearnedPositionalEmbedding<double>> fused = make_pipeline(w, setup);
    auto unfused = make_pipeline(w, setup);
    Optimizer unfused_optimizer = fused_optimizer;
    IdMatrix ids(3, 5);
    ids << 2, 3, 3, 9, 1, 0, 5, 5, 5, 10, 4, 4, 2, 7, 7;
    IdMatrix types = IdMatrix::Zero(3, 5);
    seqembed::Batch batch(ids);
    if (setup.types) batch.token_types = types;
    for (int step = 0; step < 3; ++step) {
        const std::optional<std::uint64_t> call =
            setup.dropping ? std::optional<std::uint64_t>(fused.dropout().calls()) : std::nullopt;
        static_cast<void>(fused.forward(batch));
        static_cast<void>(unfused.forward(batch));
        RowMatrix<double> g = random_matrix(15, 8, static_cast<unsigned>(40 + step));
        if (poison && step == 2) g(6, 3) = std::numeric_limits<double>::quiet_NaN();
        if (poison && step == 2) {
            const RowMatrix<double> before = fused.embedding().table();
            CHECK_THROWS_WITH(fused.backward_step(batch, g, call, fused_optimizer, 0.05),
                              Catch::Matchers::Contains("the gradient of row 5, column") && Catch::Matchers::Contains("nan"));
            CHECK(fused.embedding().table() == before);
            CHECK(fused_optimizer.steps() == unfused_optimizer.steps());
            return;
        }
        check_step_as_unfused(fused, fused_optimizer, unfused, unfused_optimizer, batch, g, call, 0.05);
    }
    CHECK(fused_optimizer.steps() == 3);
}

}  // namespace

TEST_CASE("backward_step gives backward and the lazy step's bits, and checks before it writes", "[backward][optim]") {
    Setup plain;
    plain.layer_norm = false;
    Setup with_norm;  // LayerNorm, types, dropout
    for (const Setup& setup : {plain, with_norm}) {
        check_fused_step(setup, seqembed::optim::SparseAdam<double>("token", 11, 8), false);
        check_fused_step(setup, seqembed::optim::RowwiseAdagrad<double>("token", 11, 8), false);
        check_fused_step(setup, seqembed::optim::LazySgd<double>("token", 11, 8, {0.9, 0.0, 0.01, false, false}), false);
        check_fused_step(setup, seqembed::optim::SparseAdam<double>("token", 11, 8), true);
        check_fused_step(setup, seqembed::optim::RowwiseAdagrad<double>("token", 11, 8), true);
    }
}

TEST_CASE("backward_step without other learned tables, and with GPT-2's tied token types, gives the unfused bits",
          "[backward][optim]") {
    // Token rows read once, twice and many times; the fused step then gathers each row's reads
    // with no other table summed first (sinusoidal positions), or with a tied type table whose
    // reads add to the token rows (GPT-2).
    const Index vocab = 40, width = 37, batch_size = 4, seq = 70;
    IdMatrix ids(batch_size, seq);
    std::mt19937 generator(61);
    for (Index k = 0; k < ids.size(); ++k) ids.data()[k] = static_cast<std::int64_t>(generator() % vocab);
    IdMatrix types = IdMatrix::Zero(batch_size, seq);
    for (Index k = 0; k < types.size(); k += 3) types.data()[k] = 7;
    const RowMatrix<float> token = random_matrix(vocab, width, 62).cast<float>();
    for (const int threads : {1, 3}) {
        seqembed::PipelineOptions options{0.2, 5, threads};
        seqembed::InputPipeline<float> sinusoidal(seqembed::TokenEmbedding<float>::from_weights(token),
                                                  seqembed::SinusoidalPositionalEncoding<float>(width), options);
        seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>> tied(
            seqembed::TokenEmbedding<float>::from_weights(token),
            seqembed::LearnedPositionalEmbedding<float>::from_weights(random_matrix(seq, width, 63).cast<float>()),
            options);
        seqembed::TokenTypeOptions type_options;
        type_options.order = seqembed::TokenTypeOrder::after_positions;
        type_options.row_zero_by_default = false;
        tied.set_token_types(seqembed::TokenTypeEmbedding<float>::view(
                                 seqembed::detail::StageAccess::table_row(tied.embedding(), 0), vocab, width),
                             type_options);
        seqembed::Batch batch(ids);
        const auto check = [&](auto fused, seqembed::Batch given) {
            fused.set_training(true);
            auto unfused = fused;
            static_cast<void>(unfused.trainable());
            seqembed::optim::SparseAdam<float> fused_optimizer("token", vocab, width);
            seqembed::optim::SparseAdam<float> unfused_optimizer = fused_optimizer;
            RowMatrix<float> out(ids.size(), width);
            for (int step = 0; step < 2; ++step) {
                const std::uint64_t call = fused.forward_into(given, out).value();
                const RowMatrix<float> g =
                    random_matrix(ids.size(), width, static_cast<unsigned>(64 + step)).cast<float>();
                check_step_as_unfused(fused, fused_optimizer, unfused, unfused_optimizer, given, g, call, 0.01);
                CHECK(fused_optimizer.exp_avg_sq() == unfused_optimizer.exp_avg_sq());
            }
        };
        INFO("threads " << threads);
        check(sinusoidal, batch);
        batch.token_types = types;
        check(tied, batch);
    }
}

TEST_CASE("backward_step finds an infinity, or sums past the largest float, before it writes", "[backward][optim]") {
    // With learned positions the other tables' pass finds the bounds of the rows; with
    // sinusoidal positions the rows are scanned. Either way the step that would write an
    // infinite gradient throws and changes nothing, and large finite sums step as unfused.
    const Index vocab = 6, width = 20;
    IdMatrix ids(2, 3);
    ids << 3, 3, 4, 5, 3, 1;
    const RowMatrix<float> token = random_matrix(vocab, width, 71).cast<float>();
    seqembed::TokenEmbeddingOptions token_options;
    token_options.scale = seqembed::EmbeddingScale::none();
    seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>> learned(
        seqembed::TokenEmbedding<float>::from_weights(token, token_options),
        seqembed::LearnedPositionalEmbedding<float>::from_weights(random_matrix(3, width, 72).cast<float>()),
        {0.25, 3});
    seqembed::InputPipeline<float> sinusoidal(seqembed::TokenEmbedding<float>::from_weights(token, token_options),
                                              seqembed::SinusoidalPositionalEncoding<float>(width), {0.25, 3});
    const auto check = [&](auto pipeline) {
        pipeline.set_training(true);
        const seqembed::Batch batch(ids);
        RowMatrix<float> out(ids.size(), width);
        const RowMatrix<float> g = random_matrix(ids.size(), width, 73).cast<float>();
        const float big = 0.5f * std::numeric_limits<float>::max();
        for (const int bad : {0, 1, 2}) {
            auto fused = pipeline;
            auto unfused = pipeline;
            seqembed::optim::SparseAdam<float> fused_optimizer("token", vocab, width);
            seqembed::optim::SparseAdam<float> unfused_optimizer = fused_optimizer;
            const std::uint64_t call = fused.forward_into(batch, out).value();
            static_cast<void>(unfused.forward_into(batch, out));
            RowMatrix<float> poisoned = g;
            // Token 3 is read by rows 0, 1 and 4: every column of rows 0 and 1 (kept or dropped)
            // past half the largest float, or one infinity, or large values whose sums stay finite.
            if (bad == 0) poisoned.topRows(2).setConstant(big);
            if (bad == 1) poisoned(4, 7) = std::numeric_limits<float>::infinity();
            if (bad == 2) poisoned.topRows(2).setConstant(1e30f);
            INFO("case " << bad);
            if (bad < 2) {
                const RowMatrix<float> before = fused.embedding().table();
                CHECK_THROWS_AS(fused.backward_step(batch, poisoned, call, fused_optimizer, 0.01), seqembed::value_error);
                CHECK(fused.embedding().table() == before);
                CHECK(fused_optimizer.steps() == 0);
            } else {
                check_step_as_unfused(fused, fused_optimizer, unfused, unfused_optimizer, batch, poisoned, call, 0.01);
            }
        }
    };
    check(learned);
    check(sinusoidal);
}

TEST_CASE("forward_into returns the dropout call it took, which backward takes", "[backward]") {
    Weights w;
    Setup setup;
    setup.layer_norm = false;
    Pipeline pipeline = make_pipeline(w, setup);
    IdMatrix ids(2, 4);
    ids << 1, 2, 3, 4, 5, 6, 7, 8;
    const seqembed::Batch batch(ids);
    RowMatrix<double> out(8, 8);
    static_cast<void>(pipeline.forward(batch));
    const std::optional<std::uint64_t> call = pipeline.forward_into(batch, out);
    REQUIRE(call);
    CHECK(*call == 1);
    CHECK(pipeline.dropout().calls() == 2);
    const RowMatrix<double> g = random_matrix(8, 8, 31);
    CHECK(pipeline.backward(batch, g, call).token.values == pipeline.backward(batch, g, 1).token.values);
    pipeline.set_training(false);
    CHECK(!pipeline.forward_into(batch, out));
    CHECK(!pipeline.forward_into(ids, seqembed::Padding::none(), out));
}

namespace {

// The backward of a pipeline with learned positions and dropout, computed naively: each table
// row's gradient the sum in WideScalar, in order of output row, of factor x the output's
// gradient through the mask (Dropout::keeps), rounded once.
template <typename Scalar>
RowMatrix<Scalar> naive_table_gradient(const seqembed::Dropout& dropout, std::uint64_t call, const RowMatrix<Scalar>& g,
                                       const std::vector<std::int64_t>& table_row_of_output, Scalar factor,
                                       const std::vector<std::int64_t>& rows) {
    using Wide = seqembed::detail::WideScalar<Scalar>;
    const Scalar keep_scale = dropout.keep_scale<Scalar>();
    RowMatrix<Scalar> out(static_cast<Index>(rows.size()), g.cols());
    for (std::size_t k = 0; k < rows.size(); ++k) {
        for (Index j = 0; j < g.cols(); ++j) {
            Wide sum = 0;
            for (Index r = 0; r < g.rows(); ++r) {
                if (table_row_of_output[static_cast<std::size_t>(r)] != rows[k]) continue;
                const auto element = static_cast<std::uint64_t>(r * g.cols() + j);
                const Scalar masked = g(r, j) * (dropout.keeps(call, element) ? keep_scale : Scalar(0));
                // volatile: the product rounded on its own, as the backward rounds it
                const volatile Wide product = static_cast<Wide>(factor) * static_cast<Wide>(masked);
                sum += product;
            }
            out(static_cast<Index>(k), j) = static_cast<Scalar>(sum);
        }
    }
    return out;
}

template <typename Scalar>
void check_backward_on_every_isa() {
    // A width that is no multiple of 16 (the element loops' blocks) nor of 8 (a mask byte), and
    // ids that repeat, so that rows have one read and several.
    const Index vocab = 13, width = 75, batch_size = 3, seq = 11;
    seqembed::TokenEmbeddingOptions token_options;
    token_options.scale = seqembed::EmbeddingScale::value(2.75);
    seqembed::InputPipeline<Scalar, seqembed::LearnedPositionalEmbedding<Scalar>> pipeline(
        seqembed::TokenEmbedding<Scalar>::from_weights(random_matrix(vocab, width, 41).cast<Scalar>(), token_options),
        seqembed::LearnedPositionalEmbedding<Scalar>::from_weights(random_matrix(seq, width, 42).cast<Scalar>()),
        {0.3, 17});
    pipeline.set_training(true);
    IdMatrix ids(batch_size, seq);
    std::mt19937 generator(43);
    for (Index k = 0; k < ids.size(); ++k) ids.data()[k] = static_cast<std::int64_t>(generator() % vocab);
    ids(0, 0) = 12;  // read once only
    for (Index k = 1; k < ids.size(); ++k)
        if (ids.data()[k] == 12) ids.data()[k] = 11;
    const seqembed::Batch batch(ids);
    RowMatrix<Scalar> out(ids.size(), width);
    const std::uint64_t call = pipeline.forward_into(batch, out).value();
    RowMatrix<Scalar> g = random_matrix(ids.size(), width, 44).cast<Scalar>();
    g(5, 3) = -g(5, 3);
    std::vector<std::int64_t> token_of(static_cast<std::size_t>(ids.size()));
    std::vector<std::int64_t> position_of(static_cast<std::size_t>(ids.size()));
    for (Index r = 0; r < ids.size(); ++r) {
        token_of[static_cast<std::size_t>(r)] = ids(r / seq, r % seq);
        position_of[static_cast<std::size_t>(r)] = r % seq;
    }
    std::vector<seqembed::PipelineGradients<Scalar>> results;
    for_each_isa([&](seqembed::Isa) { results.push_back(pipeline.backward(batch, g, call)); });
    REQUIRE(!results.empty());
    const seqembed::PipelineGradients<Scalar>& first = results.front();
    CHECK(first.token.rows.front() == 0);
    CHECK(first.token.values == naive_table_gradient<Scalar>(pipeline.dropout(), call, g, token_of, Scalar(2.75),
                                                               first.token.rows));
    CHECK(first.positions.values ==
          naive_table_gradient<Scalar>(pipeline.dropout(), call, g, position_of, Scalar(1), first.positions.rows));
    for (const auto& other : results) {
        CHECK(other.token.rows == first.token.rows);
        CHECK(other.token.values == first.token.values);
        CHECK(other.positions.values == first.positions.values);
    }
}

}  // namespace

TEST_CASE("InputPipeline::backward gives a naive sum's bits, on every ISA", "[backward][isa]") {
    check_backward_on_every_isa<float>();
    check_backward_on_every_isa<double>();
}

namespace {

// LayerNorm's backward through a dropout mask on every ISA: the scalar backend's bits, for a
// width past whole blocks of 16 (the row's sums' lanes) and one short of a block, and rows whose
// gradient is large beside small ones (where a fused multiply-add would change the last bits).
template <typename Scalar>
void check_layer_norm_backward_on_every_isa(Index width) {
    const Index vocab = 9, batch_size = 3, seq = 7;
    seqembed::InputPipeline<Scalar, seqembed::LearnedPositionalEmbedding<Scalar>> pipeline(
        seqembed::TokenEmbedding<Scalar>::from_weights(random_matrix(vocab, width, 71).cast<Scalar>()),
        seqembed::LearnedPositionalEmbedding<Scalar>::from_weights(random_matrix(seq, width, 72).cast<Scalar>()),
        {0.25, 19});
    const Vector gamma = Vector(random_matrix(1, width, 73)).array() + 0.5;
    const Vector beta = random_matrix(1, width, 74);
    using ScalarVector = typename seqembed::LayerNorm<Scalar>::Vector;
    pipeline.set_layer_norm(seqembed::LayerNorm<Scalar>::from_weights(ScalarVector(gamma.cast<Scalar>()),
                                                                      ScalarVector(beta.cast<Scalar>()), 1e-5));
    pipeline.set_training(true);
    IdMatrix ids(batch_size, seq);
    std::mt19937 generator(75);
    for (Index k = 0; k < ids.size(); ++k) ids.data()[k] = static_cast<std::int64_t>(generator() % vocab);
    const seqembed::Batch batch(ids);
    RowMatrix<Scalar> out(ids.size(), width);
    const std::uint64_t call = pipeline.forward_into(batch, out).value();
    RowMatrix<Scalar> g = random_matrix(ids.size(), width, 76).cast<Scalar>();
    g.row(4) *= Scalar(1e6);
    std::vector<seqembed::PipelineGradients<Scalar>> results;
    for_each_isa([&](seqembed::Isa) { results.push_back(pipeline.backward(batch, g, call)); });
    REQUIRE(!results.empty());
    for (const auto& other : results) {
        CHECK(other.gamma == results.front().gamma);
        CHECK(other.beta == results.front().beta);
        CHECK(other.token.values == results.front().token.values);
        CHECK(other.positions.values == results.front().positions.values);
    }
}

}  // namespace

TEMPLATE_TEST_CASE("A row's only read streams factor x value at every alignment, on every ISA", "[backward][isa]", float,
                   double) {
    // GradientKernel's streaming stores of a gradient row read once (values before the first
    // aligned vector and after the last one by one): widths of whole vectors of every ISA (16,
    // 48) and an odd one (37), at each alignment of a 64-byte line, with and without a mask. Each value must be factor x (value x its mask's factor) + 0, and nothing outside the
    // rows may be written.
    using seqembed::detail::GradientRows;
    using seqembed::detail::ReadRole;
    using seqembed::detail::ReadSummer;
    const Index rows = 3;
    const TestType factor = TestType(0.7);
    const TestType keep = TestType(1.25);
    std::mt19937_64 generator(81);
    for (const Index width : {16, 37, 48})
        for (const bool masked : {false, true}) {
            CAPTURE(width, masked);
            const RowMatrix<TestType> g = random_matrix(rows, width, 82).cast<TestType>();
            std::vector<std::uint64_t> kept(static_cast<std::size_t>(rows * width / 64 + 2), 0);
            for (std::size_t w = 0; w + 1 < kept.size(); ++w) kept[w] = generator();
            GradientRows<TestType> source = GradientRows<TestType>::of(g);
            if (masked) {
                source.kept = kept.data();
                source.keep_scale = keep;
            }
            RowMatrix<TestType> expected(rows, width);
            for (Index r = 0; r < rows; ++r)
                for (Index j = 0; j < width; ++j) {
                    const auto at = static_cast<std::uint64_t>(r * width + j);
                    const bool bit = ((kept[at / 64] >> (at % 64)) & 1u) != 0;
                    const TestType value = masked ? g(r, j) * (bit ? keep : TestType(0)) : g(r, j);
                    expected(r, j) = factor * value + TestType(0);
                }
            for_each_isa([&](seqembed::Isa) {
                for (std::size_t shift = 0; shift < 64 / sizeof(TestType); ++shift) {
                    CAPTURE(shift);
                    const TestType sentinel = TestType(-333);
                    std::vector<TestType> raw(static_cast<std::size_t>(rows * width) + 2 * 64 / sizeof(TestType),
                                              sentinel);
                    const auto misaligned = reinterpret_cast<std::uintptr_t>(raw.data()) % 64;
                    TestType* out = raw.data() + (misaligned == 0 ? 0 : (64 - misaligned) / sizeof(TestType)) + shift;
                    const ReadSummer<TestType> summer(source, width);
                    for (Index r = 0; r < rows; ++r)
                        summer.apply(ReadRole::only, factor, r, 0, width, nullptr, out + r * width, true);
                    summer.fence();
                    REQUIRE(Eigen::Map<const RowMatrix<TestType>>(out, rows, width) == expected);
                    for (TestType* before = raw.data(); before < out; ++before) REQUIRE(*before == sentinel);
                    for (TestType* after = out + rows * width; after < raw.data() + raw.size(); ++after)
                        REQUIRE(*after == sentinel);
                }
            });
        }
}

TEST_CASE("LayerNorm's backward gives the scalar backend's bits on every ISA", "[backward][isa]") {
    for (const Index width : {Index{75}, Index{15}, Index{64}}) {
        INFO("width " << width);
        check_layer_norm_backward_on_every_isa<float>(width);
        check_layer_norm_backward_on_every_isa<double>(width);
    }
}

namespace {

// backward_step against backward then step, in float, on a batch large enough for three workers
// sharing the columns (and a width that ends in a partial share), over three steps.
template <typename Optimizer>
void check_fused_step_threaded(Optimizer fused_optimizer) {
    const Index vocab = 500, width = 100, batch_size = 16, seq = 512;
    seqembed::PipelineOptions options{0.1, 9, 3};
    seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>> fused(
        seqembed::TokenEmbedding<float>::from_weights(random_matrix(vocab, width, 51).cast<float>()),
        seqembed::LearnedPositionalEmbedding<float>::from_weights(random_matrix(seq, width, 52).cast<float>()), options);
    fused.set_training(true);
    auto unfused = fused;
    static_cast<void>(unfused.trainable());  // its own copies of the tables
    Optimizer unfused_optimizer = fused_optimizer;
    IdMatrix ids(batch_size, seq);
    std::mt19937 generator(53);
    for (Index k = 0; k < ids.size(); ++k) ids.data()[k] = static_cast<std::int64_t>(generator() % vocab);
    const seqembed::Batch batch(ids);
    RowMatrix<float> out(ids.size(), width);
    for (int step = 0; step < 3; ++step) {
        const std::uint64_t call = fused.forward_into(batch, out).value();
        const RowMatrix<float> g = random_matrix(ids.size(), width, static_cast<unsigned>(54 + step)).cast<float>();
        check_step_as_unfused(fused, fused_optimizer, unfused, unfused_optimizer, batch, g, call, 0.01);
    }
    CHECK(fused_optimizer.steps() == 3);
}

}  // namespace

TEST_CASE("backward_step fuses the step into a pass whose workers share the columns, with the unfused bits",
          "[backward][optim]") {
    check_fused_step_threaded(seqembed::optim::SparseAdam<float>("token", 500, 100));
    seqembed::optim::SparseAdamOptions unchecked;
    unchecked.check_finite = false;
    check_fused_step_threaded(seqembed::optim::SparseAdam<float>("token", 500, 100, unchecked));
    check_fused_step_threaded(seqembed::optim::LazySgd<float>("token", 500, 100, {0.9, 0.0, 0.01, true, false}));
    check_fused_step_threaded(seqembed::optim::RowwiseAdagrad<float>("token", 500, 100));
}

TEST_CASE("The backward's plan groups each table row's reads in order of source row, for any table size",
          "[backward]") {
    // A table no larger than twice the reads plus 256 rows takes one counting sort; a larger
    // one a sort a digit at a time, more passes the more rows: 2^12, 2^30 and 2^62 rows.
    std::mt19937_64 random(11);
    for (const std::int64_t table_rows : {std::int64_t{300}, std::int64_t{1} << 12, std::int64_t{1} << 30,
                                          std::int64_t{1} << 62}) {
        std::vector<seqembed::detail::RowRead<float>> reads;
        std::vector<std::int64_t> few;  // rows read several times
        for (int k = 0; k < 40; ++k) few.push_back(static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(table_rows)));
        for (Index source = 0; source < 1000; ++source) {
            const std::int64_t row = source % 3 == 0 ? few[random() % few.size()]
                                                     : static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(table_rows));
            reads.push_back({row, source, 1.0f});
        }
        const seqembed::detail::ReadPlan plan = seqembed::detail::plan_reads(reads, table_rows);
        std::vector<std::size_t> expected(reads.size());
        for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = i;
        std::stable_sort(expected.begin(), expected.end(),
                         [&](std::size_t a, std::size_t b) { return reads[a].table_row < reads[b].table_row; });
        CAPTURE(table_rows);
        REQUIRE(plan.by_row == expected);
        REQUIRE(std::is_sorted(plan.rows.begin(), plan.rows.end()));
        REQUIRE(std::adjacent_find(plan.rows.begin(), plan.rows.end()) == plan.rows.end());
        for (std::size_t k = 0; k < plan.rows.size(); ++k)
            for (std::size_t at = plan.row_start[k]; at < plan.row_start[k + 1]; ++at)
                REQUIRE(reads[plan.by_row[at]].table_row == plan.rows[k]);
    }
}
