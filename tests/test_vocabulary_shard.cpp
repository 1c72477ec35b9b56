// Vocabulary shards without MPI: the split rule, a shard's table and lookups (-0.0 for the ids
// another shard holds), and the pipeline's three steps (partial forward, the sum, the rest)
// against the unsharded forward, bit for bit, on the ISA in force (the ISA suite reruns this
// file per ISA): threads, slices of the output, padding on both sides, LayerNorm, dropout,
// bfloat16 tables, negative scales, positions computed past a sinusoidal table.
#include <seqembed/optim.hpp>
#include <seqembed/seqembed.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bit_equal.hpp"
#include "catch.hpp"

using seqembed::Index;
using seqembed::RowMatrix;
using seqembed::TokenEmbedding;
using seqembed::TokenEmbeddingOptions;
using seqembed::VocabularyShard;

namespace {

bool is_negative_zero(double value) { return value == 0.0 && std::signbit(value); }

seqembed::IdMatrix ids_over(Index vocab, Index rows, Index cols) {
    seqembed::IdMatrix ids(rows, cols);
    for (Index k = 0; k < ids.size(); ++k) ids.data()[k] = (k * 7919 + 3) % vocab;
    ids(0, cols - 1) = vocab - 1;
    return ids;
}

// The sum of every shard's partial forward, in rank order, then the rest on `finisher`.
template <typename Scalar, typename Pipeline, typename Make>
RowMatrix<Scalar> sharded_forward(const Make& make, Index vocab, Index ranks, const seqembed::Batch& batch,
                                  const Pipeline& finisher, Index d) {
    RowMatrix<Scalar> sum;
    for (Index r = 0; r < ranks; ++r) {
        const Pipeline rank = make(VocabularyShard::of_rank(vocab, ranks, r));
        RowMatrix<Scalar> part(batch.ids.size(), d);
        rank.partial_forward_into(batch, part);
        if (r == 0)
            sum = part;
        else
            sum += part;
    }
    static_cast<void>(finisher.finish_forward_into(batch, sum));
    return sum;
}

}  // namespace

TEST_CASE("VocabularyShard::of_rank splits into parts that differ by one row at most, larger first", "[shard]") {
    const VocabularyShard a = VocabularyShard::of_rank(10, 3, 0);
    const VocabularyShard b = VocabularyShard::of_rank(10, 3, 1);
    const VocabularyShard c = VocabularyShard::of_rank(10, 3, 2);
    CHECK(a == VocabularyShard{0, 4, 10});
    CHECK(b == VocabularyShard{4, 3, 10});
    CHECK(c == VocabularyShard{7, 3, 10});
    CHECK(VocabularyShard::of_rank(32000, 8, 7) == VocabularyShard{28000, 4000, 32000});
    CHECK(VocabularyShard::whole(5).is_whole());
    CHECK(b.holds(4));
    CHECK_FALSE(b.holds(7));
    CHECK_THROWS_AS(VocabularyShard::of_rank(3, 4, 0), seqembed::value_error);
    CHECK_THROWS_AS(VocabularyShard::of_rank(10, 3, 3), seqembed::index_error);
    CHECK_THROWS_AS(VocabularyShard::of_rank(0, 1, 0), seqembed::value_error);
}

TEMPLATE_TEST_CASE("A seeded shard holds the whole table's rows, and looks up -0.0 for the others", "[shard]", float,
                   double) {
    const Index vocab = 23;
    const Index d = 7;  // odd: a shard may start inside one of the initialisation's pairs
    TokenEmbeddingOptions whole_options;
    whole_options.seed = 9;
    whole_options.padding_idx = 12;
    const TokenEmbedding<TestType> whole(vocab, d, whole_options);
    for (Index r = 0; r < 3; ++r) {
        TokenEmbeddingOptions options = whole_options;
        options.shard = VocabularyShard::of_rank(vocab, 3, r);
        const TokenEmbedding<TestType> shard(vocab, d, options);
        const VocabularyShard& held = shard.shard();
        CHECK(shard.vocab_size() == vocab);
        CHECK(shard.is_shard());
        REQUIRE(shard.table().rows() == held.rows);
        CHECK(bit_equal<TestType>(shard.table(), whole.table().middleRows(held.first, held.rows)));
        seqembed::IdMatrix ids(1, vocab);
        for (Index id = 0; id < vocab; ++id) ids(0, id) = id;
        const RowMatrix<TestType> out = shard.forward(ids);
        const RowMatrix<TestType> expected = whole.forward(ids);
        for (Index id = 0; id < vocab; ++id)
            for (Index j = 0; j < d; ++j) {
                if (held.holds(id))
                    REQUIRE(out(id, j) == expected(id, j));
                else
                    REQUIRE(is_negative_zero(static_cast<double>(out(id, j))));
            }
    }
}

TEST_CASE("A shard with a negative scale still gives -0.0 for the ids it does not hold", "[shard]") {
    TokenEmbeddingOptions options;
    options.scale = seqembed::EmbeddingScale::value(-3.0);
    options.shard = VocabularyShard{2, 2, 6};
    const auto shard = TokenEmbedding<float>::from_weights(RowMatrix<float>::Ones(2, 4), options);
    seqembed::IdMatrix ids(1, 3);
    ids << 0, 3, 5;
    const RowMatrix<float> out = shard.forward(ids);
    CHECK(is_negative_zero(out(0, 0)));
    CHECK(out(1, 0) == -3.0f);
    CHECK(is_negative_zero(out(2, 3)));
}

TEST_CASE("A shard's table and ids are checked", "[shard][errors]") {
    TokenEmbeddingOptions options;
    options.shard = VocabularyShard{4, 3, 10};
    CHECK_THROWS_WITH(TokenEmbedding<float>::from_weights(RowMatrix<float>::Zero(4, 2), options),
                      Catch::Matchers::Contains("has 4 rows, its shard [4, 7) 3"));
    CHECK_THROWS_WITH(TokenEmbedding<float>(11, 2, options),
                      Catch::Matchers::Contains("part of a vocabulary of 10 ids, the table's is 11"));
    options.shard = VocabularyShard{8, 3, 10};
    CHECK_THROWS_WITH(TokenEmbedding<float>(10, 2, options),
                      Catch::Matchers::Contains("are not a non-empty part of a vocabulary of 10 ids"));
    options.shard = VocabularyShard{4, 3, 10};
    const TokenEmbedding<float> shard(10, 2, options);
    seqembed::IdMatrix ids(1, 2);
    ids << 9, 10;
    CHECK_THROWS_WITH(shard.forward(ids), Catch::Matchers::Contains("token id 10 at (batch 0, position 1) is outside the "
                                                                    "vocabulary [0, 10)"));
    CHECK_THROWS_AS(shard.backward(ids.leftCols(1), RowMatrix<float>::Zero(1, 2)), seqembed::value_error);
}

TEMPLATE_TEST_CASE("The sum of the shards' partial forwards, finished, is the unsharded forward", "[shard][pipeline]",
                   float, double) {
    const Index vocab = 211;
    const Index d = 37;
    const seqembed::IdMatrix ids = ids_over(vocab, 6, 29);
    seqembed::Batch batch(ids);
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> mask(6, 29);
    for (Index b = 0; b < 6; ++b)
        for (Index t = 0; t < 29; ++t) mask(b, t) = (b % 2 == 0 ? t >= b : t < 29 - 2 * b) ? 1 : 0;
    batch.padding = seqembed::Padding::from_mask(mask);
    batch.offsets = seqembed::StepOffsets(5);
    const int threads = GENERATE(1, 3);
    const bool norm = GENERATE(false, true);
    const double scale = GENERATE(1.0, -2.0);
    using Pipeline = seqembed::InputPipeline<TestType>;
    const auto make = [&](std::optional<VocabularyShard> shard) {
        TokenEmbeddingOptions options;
        options.seed = 4;
        options.scale = seqembed::EmbeddingScale::value(scale);
        options.shard = shard;
        seqembed::SinusoidalOptions sinusoidal;
        sinusoidal.max_positions = 16;  // the rest computed, into a row of the finishing pass
        sinusoidal.beyond = seqembed::BeyondTable::compute;
        seqembed::PipelineOptions pipeline_options;
        pipeline_options.dropout = 0.2;
        pipeline_options.threads = threads;
        Pipeline pipeline(TokenEmbedding<TestType>(vocab, d, options),
                          seqembed::SinusoidalPositionalEncoding<TestType>(d, sinusoidal), pipeline_options);
        pipeline.set_token_types(seqembed::TokenTypeEmbedding<TestType>(1, d, 2));
        if (norm) pipeline.set_layer_norm(seqembed::LayerNorm<TestType>(d));
        pipeline.set_training(true);
        return pipeline;
    };
    const Pipeline whole = make(std::nullopt);
    const RowMatrix<TestType> expected = whole.forward(batch);
    for (const Index ranks : {1, 2, 5}) {
        INFO("ranks " << ranks << ", threads " << threads << ", LayerNorm " << norm << ", scale " << scale);
        const Pipeline finisher = make(VocabularyShard::of_rank(vocab, ranks, 0));
        CHECK(bit_equal<TestType>(sharded_forward<TestType>(make, vocab, ranks, batch, finisher, d), expected));

        // The same sum finished in slices, each by its own rank's pipeline (the same call).
        RowMatrix<TestType> sum = RowMatrix<TestType>::Zero(ids.size(), d);
        for (Index r = 0; r < ranks; ++r) {
            RowMatrix<TestType> part(ids.size(), d);
            make(VocabularyShard::of_rank(vocab, ranks, r)).partial_forward_into(batch, part);
            sum += part;
        }
        RowMatrix<TestType> sliced(ids.size(), d);
        const std::vector<Index> bounds = {0, 40, 41, 100, ids.size()};
        for (std::size_t k = 0; k + 1 < bounds.size(); ++k) {
            const Index first = bounds[k];
            const Index end = bounds[k + 1];
            RowMatrix<TestType> slice = sum.middleRows(first, end - first);
            const Pipeline rank = make(VocabularyShard::of_rank(vocab, ranks, 0));
            const std::optional<std::uint64_t> call = rank.finish_forward_into(batch, slice, first);
            CHECK(call == std::optional<std::uint64_t>(0));
            sliced.middleRows(first, end - first) = slice;
        }
        CHECK(bit_equal<TestType>(sliced, expected));
    }
}

namespace {

// A deterministic output gradient with values of both signs and several magnitudes.
template <typename Scalar>
RowMatrix<Scalar> gradient_of_output(Index rows, Index cols, int step) {
    RowMatrix<Scalar> grad(rows, cols);
    for (Index k = 0; k < grad.size(); ++k)
        grad.data()[k] = static_cast<Scalar>(std::sin(0.37 * static_cast<double>(k) + step) * static_cast<double>(1 + k % 5));
    return grad;
}

// The optimizers of one pipeline's tables: lazy Adam on the token table, Adam on the rest.
template <typename Scalar>
struct PipelineSteps {
    seqembed::optim::SparseAdam<Scalar> token;
    seqembed::optim::Adam<Scalar> positions;
    seqembed::optim::Adam<Scalar> types;
    seqembed::optim::Adam<Scalar> gamma;
    seqembed::optim::Adam<Scalar> beta;

    PipelineSteps(Index token_rows, Index position_rows, Index d)
        : token("token", token_rows, d), positions("positions", position_rows, d), types("types", 2, d),
          gamma("gamma", 1, d), beta("beta", 1, d) {}

    template <typename Pipeline>
    void step(Pipeline& pipeline, const seqembed::PipelineGradients<Scalar>& grads) {
        const double lr = 0.05;
        seqembed::PipelineTables<Scalar> tables = pipeline.trainable();
        token.step(tables.token->weights, grads.token, lr);
        positions.step(tables.positions->weights, grads.positions, lr);
        types.step(tables.token_types->weights, grads.token_types, lr);
        if (tables.gamma) {
            gamma.step(*tables.gamma, RowMatrix<Scalar>(grads.gamma), lr);
            beta.step(*tables.beta, RowMatrix<Scalar>(grads.beta), lr);
        }
    }
};

}  // namespace

TEMPLATE_TEST_CASE("The shards' partial backwards are the unsharded backward, and their steps the unsharded steps",
                   "[shard][backward]", float, double) {
    const Index vocab = 211;
    const Index d = 37;
    const Index positions = 40;
    const seqembed::TokenId padding_idx = 17;
    seqembed::IdMatrix ids = ids_over(vocab, 6, 29);
    ids(1, 3) = padding_idx;
    ids(4, 20) = padding_idx;
    seqembed::Batch batch(ids);
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> mask(6, 29);
    for (Index b = 0; b < 6; ++b)
        for (Index t = 0; t < 29; ++t) mask(b, t) = (b % 2 == 0 ? t >= b : t < 29 - 2 * b) ? 1 : 0;
    batch.padding = seqembed::Padding::from_mask(mask);
    seqembed::IdMatrix types(6, 29);
    for (Index k = 0; k < types.size(); ++k) types.data()[k] = (k / 7) % 2;
    batch.token_types = types;
    const bool norm = GENERATE(false, true);
    const auto padded = GENERATE(seqembed::PaddedRows::zero, seqembed::PaddedRows::computed);
    using Pipeline = seqembed::InputPipeline<TestType, seqembed::LearnedPositionalEmbedding<TestType>>;
    const auto make = [&](std::optional<VocabularyShard> shard) {
        TokenEmbeddingOptions options;
        options.seed = 4;
        options.padding_idx = padding_idx;
        options.shard = shard;
        seqembed::PipelineOptions pipeline_options;
        pipeline_options.dropout = 0.2;
        pipeline_options.threads = 2;
        pipeline_options.padded_rows = padded;
        pipeline_options.positions = seqembed::PositionNumbering::sequence_index;
        Pipeline pipeline(TokenEmbedding<TestType>(vocab, d, options),
                          seqembed::LearnedPositionalEmbedding<TestType>(positions, d), pipeline_options);
        pipeline.set_token_types(seqembed::TokenTypeEmbedding<TestType>(2, d, 2));
        if (norm) pipeline.set_layer_norm(seqembed::LayerNorm<TestType>(d));
        pipeline.set_training(true);
        return pipeline;
    };
    for (const Index ranks : {1, 2, 5}) {
        INFO("ranks " << ranks << ", LayerNorm " << norm << ", padded rows computed "
                      << (padded == seqembed::PaddedRows::computed));
        Pipeline whole = make(std::nullopt);
        PipelineSteps<TestType> whole_steps(vocab, positions, d);
        std::vector<Pipeline> shards;
        std::vector<PipelineSteps<TestType>> shard_steps;
        for (Index r = 0; r < ranks; ++r) {
            shards.push_back(make(VocabularyShard::of_rank(vocab, ranks, r)));
            shard_steps.emplace_back(shards.back().embedding().table().rows(), positions, d);
        }
        for (int step = 0; step < 3; ++step) {
            INFO("step " << step);
            const std::optional<std::uint64_t> call = whole.dropout().calls();
            const RowMatrix<TestType> expected = whole.forward(batch);
            RowMatrix<TestType> token_rows = RowMatrix<TestType>::Zero(ids.size(), d);
            for (const Pipeline& shard : shards) {
                RowMatrix<TestType> part(ids.size(), d);
                shard.partial_forward_into(batch, part);
                token_rows += part;
            }
            for (const Pipeline& shard : shards) {
                RowMatrix<TestType> out = token_rows;
                CHECK(shard.finish_forward_into(batch, out) == call);
                CHECK(bit_equal<TestType>(out, expected));
            }
            const RowMatrix<TestType> grad = gradient_of_output<TestType>(ids.size(), d, step);
            const seqembed::PipelineGradients<TestType> unsharded = whole.backward(batch, grad, call);
            std::size_t listed = 0;
            for (Index r = 0; r < ranks; ++r) {
                const VocabularyShard& part = shards[static_cast<std::size_t>(r)].embedding().shard();
                const seqembed::PipelineGradients<TestType> grads =
                    shards[static_cast<std::size_t>(r)].partial_backward(batch, grad, call, token_rows);
                CHECK(grads.token.table_rows == part.rows);
                CHECK(grads.token.first_row == part.first);
                // The shard's rows are the unsharded gradient's rows in its range, by the same ids.
                std::vector<std::int64_t> held;
                std::vector<std::int64_t> local;
                RowMatrix<TestType> values(0, d);
                for (std::size_t k = 0; k < unsharded.token.rows.size(); ++k) {
                    if (!part.holds(unsharded.token.rows[k])) continue;
                    held.push_back(unsharded.token.rows[k]);
                    local.push_back(unsharded.token.rows[k] - part.first);
                    values.conservativeResize(values.rows() + 1, d);
                    values.bottomRows(1) = unsharded.token.values.row(static_cast<Index>(k));
                }
                CHECK(grads.token.rows == held);
                CHECK(grads.token.local_rows() == local);
                CHECK(bit_equal<TestType>(grads.token.values, values));
                CHECK(bit_equal<TestType>(grads.token.to_dense(),
                                          RowMatrix<TestType>(unsharded.token.to_dense().middleRows(part.first, part.rows))));
                listed += grads.token.rows.size();
                CHECK(grads.positions.rows == unsharded.positions.rows);
                CHECK(bit_equal<TestType>(grads.positions.values, unsharded.positions.values));
                CHECK(grads.token_types.rows == unsharded.token_types.rows);
                CHECK(bit_equal<TestType>(grads.token_types.values, unsharded.token_types.values));
                CHECK(bit_equal<TestType>(RowMatrix<TestType>(grads.gamma), RowMatrix<TestType>(unsharded.gamma)));
                CHECK(bit_equal<TestType>(RowMatrix<TestType>(grads.beta), RowMatrix<TestType>(unsharded.beta)));
                shard_steps[static_cast<std::size_t>(r)].step(shards[static_cast<std::size_t>(r)], grads);
            }
            CHECK(listed == unsharded.token.rows.size());
            CHECK(std::find(unsharded.token.rows.begin(), unsharded.token.rows.end(), padding_idx) ==
                  unsharded.token.rows.end());
            whole_steps.step(whole, unsharded);
        }
        // After three steps every shard holds the unsharded table's rows, and the same small tables.
        for (const Pipeline& shard : shards) {
            const VocabularyShard& part = shard.embedding().shard();
            CHECK(bit_equal<TestType>(RowMatrix<TestType>(shard.embedding().table()),
                                      RowMatrix<TestType>(whole.embedding().table().middleRows(part.first, part.rows))));
            CHECK(bit_equal<TestType>(RowMatrix<TestType>(shard.positions().table()),
                                      RowMatrix<TestType>(whole.positions().table())));
            CHECK(bit_equal<TestType>(RowMatrix<TestType>(shard.token_types()->table()),
                                      RowMatrix<TestType>(whole.token_types()->table())));
            if (norm)
                CHECK(bit_equal<TestType>(RowMatrix<TestType>(shard.layer_norm()->gamma()),
                                          RowMatrix<TestType>(whole.layer_norm()->gamma())));
        }
    }
}

TEST_CASE("A bfloat16 shard's partial forwards sum to the unsharded forward", "[shard][pipeline]") {
    const Index vocab = 97;
    const Index d = 24;
    const RowMatrix<Eigen::bfloat16> table = TokenEmbedding<float>(vocab, d).table().cast<Eigen::bfloat16>();
    using Embedding = TokenEmbedding<float, Eigen::bfloat16>;
    using Pipeline = seqembed::InputPipeline<float, seqembed::NoPositions<float>, Embedding>;
    const auto make = [&](std::optional<VocabularyShard> shard) {
        TokenEmbeddingOptions options;
        options.shard = shard;
        const Index first = shard ? shard->first : 0;
        const Index rows = shard ? shard->rows : vocab;
        return Pipeline(Embedding::view(table.row(first).data(), rows, d, options), seqembed::NoPositions<float>(d));
    };
    const seqembed::IdMatrix ids = ids_over(vocab, 3, 11);
    const seqembed::Batch batch(ids);
    const Pipeline finisher = make(VocabularyShard::of_rank(vocab, 3, 0));
    CHECK(bit_equal<float>(sharded_forward<float>(make, vocab, 3, batch, finisher, d), make(std::nullopt).forward(batch)));
}

TEST_CASE("A pipeline over a shard refuses the unsharded calls, shard mode refuses GPT-2's tied types, and "
          "partial_backward checks its token rows",
          "[shard][errors]") {
    const Index vocab = 50;
    const Index d = 8;
    TokenEmbeddingOptions options;
    options.shard = VocabularyShard::of_rank(vocab, 2, 1);
    seqembed::InputPipeline<float> pipeline(TokenEmbedding<float>(vocab, d, options),
                                            seqembed::SinusoidalPositionalEncoding<float>(d));
    const seqembed::IdMatrix ids = ids_over(vocab, 2, 4);
    const seqembed::Batch batch(ids);
    CHECK_THROWS_WITH(pipeline.forward(batch), Catch::Matchers::Contains("use partial_forward_into"));
    CHECK_THROWS_AS(pipeline.backward(batch, RowMatrix<float>::Zero(8, d)), seqembed::value_error);
    RowMatrix<float> out(8, d);
    CHECK_THROWS_AS(pipeline.finish_forward_into(batch, out, 1), seqembed::shape_error);
    CHECK_THROWS_AS(pipeline.finish_forward_into(batch, out.leftCols(4), 0), seqembed::shape_error);

    // GPT-2: the type table views the token table.
    const TokenEmbedding<float> whole(vocab, d);
    seqembed::InputPipeline<float> gpt2(whole, seqembed::SinusoidalPositionalEncoding<float>(d));
    gpt2.set_token_types(seqembed::TokenTypeEmbedding<float>::view(whole.table().data(), vocab, d),
                         {seqembed::TokenTypeOrder::after_positions, false});
    CHECK_THROWS_WITH(gpt2.partial_forward_into(batch, out), Catch::Matchers::Contains("reads the token table"));

    // partial_backward reads the summed token rows only for LayerNorm's backward, and checks them.
    const RowMatrix<float> grad = RowMatrix<float>::Ones(8, d);
    const RowMatrix<float> none(0, 0);
    CHECK_NOTHROW(pipeline.partial_backward(batch, grad, std::nullopt, none));
    pipeline.set_layer_norm(seqembed::LayerNorm<float>(d));
    CHECK_THROWS_WITH(pipeline.partial_backward(batch, grad, std::nullopt, none),
                      Catch::Matchers::Contains("token rows of InputPipeline::partial_backward"));
    CHECK_THROWS_AS(pipeline.partial_backward(batch, RowMatrix<float>::Ones(7, d), std::nullopt, grad),
                    seqembed::shape_error);
    CHECK_THROWS_AS(pipeline.partial_backward(batch, grad, std::uint64_t{0}, grad), seqembed::value_error);
}

TEST_CASE("A shard's gradient lists global ids: the lazy optimizers step them on the shard's rows, and ids outside "
          "the shard are refused",
          "[shard][backward][errors]") {
    const Index vocab = 40;
    const Index d = 6;
    const VocabularyShard part = VocabularyShard::of_rank(vocab, 2, 1);  // ids [20, 40)
    REQUIRE(part.first == 20);
    TokenEmbeddingOptions options;
    options.shard = part;
    options.seed = 3;
    using Embedding = TokenEmbedding<float, Eigen::bfloat16>;
    seqembed::InputPipeline<float, seqembed::NoPositions<float>, Embedding> pipeline(Embedding(vocab, d, options),
                                                                                     seqembed::NoPositions<float>(d));
    seqembed::IdMatrix ids(1, 5);
    ids << 3, 25, 39, 25, 20;  // 3 is another shard's
    const seqembed::Batch batch(ids);
    RowMatrix<float> grad(5, d);
    for (Index k = 0; k < grad.size(); ++k) grad.data()[k] = 0.25f * static_cast<float>(k % 7) - 0.5f;
    const seqembed::PipelineGradients<float> grads =
        pipeline.partial_backward(batch, grad, std::nullopt, RowMatrix<float>(0, 0));
    CHECK(grads.token.rows == std::vector<std::int64_t>{20, 25, 39});
    CHECK(grads.token.first_row == 20);
    CHECK(grads.token.table_rows == 20);
    CHECK(grads.token.local_rows() == std::vector<std::int64_t>{0, 5, 19});

    // step(gradient) is step_rows on the shard's own rows, for each lazy optimizer.
    const auto same_step = [&](auto by_gradient, auto by_rows) {
        seqembed::PipelineTables<float> tables = pipeline.trainable();
        RowMatrix<float> weights = tables.token->weights;
        RowMatrix<float> expected = weights;
        by_gradient.step(weights, grads.token, 0.1);
        by_rows.step_rows(expected, grads.token.local_rows(),
                          [&](std::size_t k) { return grads.token.values.row(static_cast<Index>(k)).data(); }, 0.1);
        CHECK(bit_equal<float>(weights, expected));
        CHECK(!bit_equal<float>(weights, RowMatrix<float>(tables.token->weights)));
    };
    same_step(seqembed::optim::SparseAdam<float>("token", 20, d), seqembed::optim::SparseAdam<float>("token", 20, d));
    same_step(seqembed::optim::LazySgd<float>("token", 20, d, {0.9}), seqembed::optim::LazySgd<float>("token", 20, d, {0.9}));
    same_step(seqembed::optim::RowwiseAdagrad<float>("token", 20, d),
              seqembed::optim::RowwiseAdagrad<float>("token", 20, d));
    seqembed::optim::Adam<float> dense("token", 20, d);
    RowMatrix<float> weights = pipeline.trainable().token->weights;
    RowMatrix<float> expected = weights;
    dense.step(weights, grads.token, 0.1);
    seqembed::optim::Adam<float>("token", 20, d).step(expected, grads.token.to_dense(), 0.1);
    CHECK(bit_equal<float>(weights, expected));

    // The stepped master rows go back into the bfloat16 table by id.
    seqembed::PipelineTables<float> tables = pipeline.trainable();
    seqembed::optim::SparseAdam<float> token("token", 20, d);
    token.step(tables.token->weights, grads.token, 0.1);
    pipeline.round_master_rows(grads.token.rows);
    CHECK(pipeline.embedding().table().row(5).cast<float>().isApprox(tables.token->weights.row(5), 1e-2f));
    CHECK_THROWS_WITH(pipeline.round_master_rows({19}), Catch::Matchers::Contains("row 19 is outside the table's ids "
                                                                                  "[20, 40)"));

    // An id outside the shard, and a gradient of another slice, are refused by name.
    seqembed::RowGradient<float> outside = grads.token;
    outside.rows.front() = 19;
    CHECK_THROWS_WITH(token.step(tables.token->weights, outside, 0.1),
                      Catch::Matchers::Contains("token: the gradient's row 19 is outside the table's ids [20, 40)"));
    CHECK_THROWS_WITH(outside.to_dense(), Catch::Matchers::Contains("id 19 is outside the table's ids [20, 40)"));
    outside.values.conservativeResize(2, d);
    CHECK_THROWS_AS(outside.to_dense(), seqembed::shape_error);
    seqembed::RowGradient<float> other = grads.token;
    other.rows = other.local_rows();
    other.first_row = 0;
    seqembed::RowGradient<float> sum = grads.token;
    CHECK_THROWS_WITH(sum.add(other), Catch::Matchers::Contains("table from id 0 added to the gradient of a 20 x 6 "
                                                                "table from id 20"));
    CHECK(sum.rows == grads.token.rows);
    seqembed::RowGradient<float> unsorted = grads.token;
    std::swap(unsorted.rows[0], unsorted.rows[1]);
    CHECK_THROWS_WITH(sum.add(unsorted), Catch::Matchers::Contains("RowGradient::add (the gradient added): the ids "
                                                                   "must ascend without repeats, but 20 follows 25"));
    sum.add(grads.token);
    CHECK(bit_equal<float>(sum.values, RowMatrix<float>(grads.token.values * 2.0f)));
}
