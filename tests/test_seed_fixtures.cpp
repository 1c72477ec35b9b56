// The seeds' PyTorch outputs (tests/reference/golden_data.hpp), reproduced with seqembed.
#include <seqembed/seqembed.hpp>

#include "catch.hpp"
#include "golden_support.hpp"

using seqembed::EmbeddingScale;
using seqembed::IdMatrix;
using seqembed::InputPipeline;
using seqembed::RowMatrix;
using seqembed::SinusoidalOptions;
using seqembed::SinusoidalPositionalEncoding;
using seqembed::TokenEmbedding;
using seqembed::TokenEmbeddingOptions;

TEST_CASE("Seed 001's InputEmbedding: emb(ids) * sqrt(d), to the bit", "[seed]") {
    const auto embedding =
        TokenEmbedding<float>::from_weights(golden::matrix<float>(seqembed_golden::emb_weights_v10_d4));
    const IdMatrix ids = golden::ids(seqembed_golden::emb_ids_2x5, 2, 5);
    REQUIRE(embedding.forward(ids) == golden::matrix<float>(seqembed_golden::emb_scaled_2x5));
}

TEST_CASE("Seed 002's one_hot(ids) @ W, to the bit", "[seed]") {
    TokenEmbeddingOptions options;
    options.scale = EmbeddingScale::none();
    const auto embedding = TokenEmbedding<float>::from_weights(
        golden::matrix<float>(seqembed_golden::emb_weights_v10_d4), options);
    const IdMatrix ids = golden::ids(seqembed_golden::emb_ids_2x5, 2, 5);
    REQUIRE(embedding.forward(ids) == golden::matrix<float>(seqembed_golden::emb_onehot_2x5));
}

TEST_CASE("Seed 004's walkthrough: embeddings + positional encodings", "[seed]") {
    TokenEmbeddingOptions options;
    options.scale = EmbeddingScale::none();  // seed 004 adds the raw embedding
    const auto embedding = TokenEmbedding<float>::from_weights(
        golden::matrix<float>(seqembed_golden::seed004_emb_weights), options);
    IdMatrix ids(1, 6);
    ids << 0, 1, 2, 3, 4, 5;  // The cat sat on the mat
    REQUIRE(embedding.forward(ids) == golden::matrix<float>(seqembed_golden::seed004_embeddings));

    for (const auto precision : {seqembed::TablePrecision::exact, seqembed::TablePrecision::follow_scalar}) {
        SinusoidalOptions positions = SinusoidalOptions::paper();
        positions.precision = precision;
        const InputPipeline<float> pipeline(embedding, SinusoidalPositionalEncoding<float>(4, positions));
        const RowMatrix<float> sum = pipeline.forward(ids);
        // One float ulp of the positional term at most.
        REQUIRE((sum - golden::matrix<float>(seqembed_golden::seed004_sum)).cwiseAbs().maxCoeff() <= 1.2e-7f);
        REQUIRE((pipeline.positions().rows(0, 6) - golden::matrix<float>(seqembed_golden::seed004_pe))
                    .cwiseAbs()
                    .maxCoeff() <= 6e-8f);
    }
}

TEST_CASE("Seed 001's embedding and positional encoding in evaluation mode", "[seed]") {
    const auto embedding = TokenEmbedding<float>::from_weights(
        golden::matrix<float>(seqembed_golden::seed001_pipeline_weights));
    const IdMatrix ids = golden::ids(seqembed_golden::pipe_ids_2x5, 2, 5);
    const RowMatrix<float> expected = golden::matrix<float>(seqembed_golden::seed001_pipeline_out);

    SinusoidalOptions as_seed = SinusoidalOptions::paper();
    as_seed.precision = seqembed::TablePrecision::follow_scalar;
    as_seed.form = seqembed::DivTermForm::log_space;
    InputPipeline<float> pipeline(embedding, SinusoidalPositionalEncoding<float>(8, as_seed),
                                  {/*dropout=*/0.1, /*dropout_seed=*/0});
    pipeline.set_training(false);
    // At positions 0..4 every float32 operation of the seed is matched: the same numbers.
    REQUIRE((pipeline.forward(ids) - expected).cwiseAbs().maxCoeff() <= 4.8e-7f);  // 1 ulp at |x| ~ 4

    const InputPipeline<float> exact(embedding, SinusoidalPositionalEncoding<float>(8));
    REQUIRE((exact.forward(ids) - expected).cwiseAbs().maxCoeff() <= 4.8e-7f);
}
