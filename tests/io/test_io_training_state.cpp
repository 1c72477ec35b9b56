// io::TrainingState: a training run saved after some steps and resumed in fresh objects
// continues bit for bit (tables, every optimizer's state, the dropout call counter); the file's
// layout; restoring checks the kind, dtype and shape before it changes anything.
#include <seqembed/io/io.hpp>
#include <seqembed/optim.hpp>
#include <seqembed/seqembed.hpp>

#include <cstdint>
#include <random>
#include <string>

#include "catch.hpp"

using seqembed::IdMatrix;
using seqembed::Index;
using seqembed::RowMatrix;

namespace {

using Pipeline = seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>>;

/// A small training run: a pipeline and one optimizer of each kind on its tables.
struct Run {
    Pipeline pipeline{seqembed::TokenEmbedding<float>(40, 8, {seqembed::EmbeddingScale::none(), std::nullopt, 1, false, std::nullopt}),
                      seqembed::LearnedPositionalEmbedding<float>(16, 8), {0.2, 9}};
    seqembed::optim::SparseAdam<float> token{"token", 40, 8};
    seqembed::optim::RowwiseAdagrad<float> token_adagrad{"token", 40, 8};
    seqembed::optim::LazySgd<float> token_sgd{"token", 40, 8, {0.9, 0.0, 0.01, false, false}};
    seqembed::optim::AdamW<float> positions{"positions", 16, 8};
    seqembed::optim::Sgd<float> gamma{"gamma", 1, 8, {0.9, 0.1, 0.0, false, false}};
    seqembed::optim::Adam<float> beta{"beta", 1, 8, {0.9, 0.999, 1e-8, 0.0, true, false}};

    Run() {
        pipeline.set_layer_norm(seqembed::LayerNorm<float>(8));
        pipeline.set_training(true);
    }

    /// One step on batch `step` of a fixed sequence of batches.
    void step(int step) {
        IdMatrix ids(2, 6);
        std::mt19937 generator(static_cast<unsigned>(100 + step));
        for (Index k = 0; k < ids.size(); ++k) ids.data()[k] = static_cast<std::int64_t>(generator() % 40);
        const seqembed::Batch batch(ids);
        const std::uint64_t call = pipeline.dropout().calls();
        const RowMatrix<float> out = pipeline.forward(batch);
        const seqembed::PipelineGradients<float> grads = pipeline.backward(batch, out * 0.5f, call);
        seqembed::PipelineTables<float> tables = pipeline.trainable();
        // Three lazy optimizers on the token table in turn, to carry all their states.
        if (step % 3 == 0) token.step(tables.token->weights, grads.token, 0.01);
        if (step % 3 == 1) token_adagrad.step(tables.token->weights, grads.token, 0.05);
        if (step % 3 == 2) token_sgd.step(tables.token->weights, grads.token, 0.05);
        positions.step(tables.positions->weights, grads.positions, 0.01);
        gamma.step(*tables.gamma, RowMatrix<float>(grads.gamma), 0.01);
        beta.step(*tables.beta, RowMatrix<float>(grads.beta), 0.01);
    }

    seqembed::io::TrainingState save() const {
        seqembed::io::TrainingState state;
        state.add_table("token", pipeline.embedding().table());
        state.add_table("positions", pipeline.positions().table());
        state.add_table("gamma", RowMatrix<float>(pipeline.layer_norm()->gamma()));
        state.add_table("beta", RowMatrix<float>(pipeline.layer_norm()->beta()));
        state.add_optimizer("token_adam", token);
        state.add_optimizer("token_adagrad", token_adagrad);
        state.add_optimizer("token_sgd", token_sgd);
        state.add_optimizer("positions_adamw", positions);
        state.add_optimizer("gamma_sgd", gamma);
        state.add_optimizer("beta_adam", beta);
        state.add_counter("dropout_calls", pipeline.dropout().calls());
        return state;
    }

    void restore(const seqembed::io::TrainingState& state) {
        seqembed::PipelineTables<float> tables = pipeline.trainable();
        state.restore_table("token", tables.token->weights);
        state.restore_table("positions", tables.positions->weights);
        state.restore_table("gamma", *tables.gamma);
        state.restore_table("beta", *tables.beta);
        state.restore_optimizer("token_adam", token);
        state.restore_optimizer("token_adagrad", token_adagrad);
        state.restore_optimizer("token_sgd", token_sgd);
        state.restore_optimizer("positions_adamw", positions);
        state.restore_optimizer("gamma_sgd", gamma);
        state.restore_optimizer("beta_adam", beta);
        seqembed::Dropout counter = pipeline.dropout();
        counter.set_calls(state.counter("dropout_calls"));
    }
};

}  // namespace

TEST_CASE("A run saved by TrainingState and resumed in fresh objects continues bit for bit", "[io][training]") {
    Run straight;
    for (int s = 0; s < 10; ++s) straight.step(s);

    Run first;
    for (int s = 0; s < 5; ++s) first.step(s);
    const std::string bytes = first.save().serialize();
    Run resumed;  // fresh tables, optimizers and dropout counter
    resumed.restore(seqembed::io::TrainingState::from_bytes(bytes));
    for (int s = 5; s < 10; ++s) resumed.step(s);

    CHECK(resumed.pipeline.embedding().table() == straight.pipeline.embedding().table());
    CHECK(resumed.pipeline.positions().table() == straight.pipeline.positions().table());
    CHECK(resumed.pipeline.layer_norm()->gamma() == straight.pipeline.layer_norm()->gamma());
    CHECK(resumed.pipeline.layer_norm()->beta() == straight.pipeline.layer_norm()->beta());
    CHECK(resumed.token.exp_avg() == straight.token.exp_avg());
    CHECK(resumed.token_sgd.momentum_buffer() == straight.token_sgd.momentum_buffer());
    CHECK(resumed.positions.steps() == 10);
    CHECK(resumed.pipeline.dropout().calls() == straight.pipeline.dropout().calls());
    // Without the counter the masks differ: the check above is not vacuous.
    Run no_counter;
    for (int s = 0; s < 5; ++s) no_counter.step(s);
    Run wrong;
    wrong.restore(seqembed::io::TrainingState::from_bytes(bytes));
    seqembed::Dropout counter = wrong.pipeline.dropout();
    counter.set_calls(0);
    for (int s = 5; s < 10; ++s) wrong.step(s);
    CHECK(wrong.pipeline.embedding().table() != straight.pipeline.embedding().table());
}

TEST_CASE("TrainingState names what it cannot restore and changes nothing", "[io][training][bad-input]") {
    Run run;
    run.step(0);
    const auto state = seqembed::io::TrainingState::from_bytes(run.save().serialize(), "state.safetensors");
    seqembed::optim::Adam<float> wrong_kind("token", 40, 8);
    CHECK_THROWS_WITH(state.restore_optimizer("token_adam", wrong_kind),
                      Catch::Matchers::Contains("holds the state of SparseAdam<float>, not of Adam<float>"));
    CHECK(wrong_kind.steps() == 0);
    seqembed::optim::SparseAdam<double> wrong_dtype("token", 40, 8);
    CHECK_THROWS_WITH(state.restore_optimizer("token_adam", wrong_dtype), Catch::Matchers::Contains("not of SparseAdam<double>"));
    seqembed::optim::SparseAdam<float> wrong_shape("token", 41, 8);
    CHECK_THROWS_AS(state.restore_optimizer("token_adam", wrong_shape), seqembed::shape_error);
    CHECK(wrong_shape.steps() == 0);
    RowMatrix<float> table = RowMatrix<float>::Zero(40, 7);
    CHECK_THROWS_AS(state.restore_table("token", Eigen::Ref<RowMatrix<float>>(table)), seqembed::format_error);
    CHECK(table.isZero(0.0f));
    CHECK_THROWS_WITH(state.counter("no_such"), Catch::Matchers::Contains("no entry 'no_such'"));
    seqembed::io::TrainingState fresh;
    fresh.add_counter("a", 1);
    CHECK_THROWS_AS(fresh.add_counter("a", 2), seqembed::value_error);
    CHECK_THROWS_AS(fresh.add_counter("b", std::uint64_t{1} << 63), seqembed::value_error);
    // The layout any safetensors reader sees.
    const std::string bytes = run.save().serialize();
    const auto file = seqembed::io::SafetensorsFile::from_memory(bytes.data(), bytes.size(), "copy");
    CHECK(file.info("token").dtype_name == "F32");
    CHECK(file.info("token").shape == std::vector<std::int64_t>{40, 8});
    CHECK(file.info("token_adam/steps").dtype_name == "I64");
    CHECK(file.info("token_adam/steps").shape.empty());
    CHECK(file.integers("token_adam/steps").scalar() == 1);
    CHECK(file.metadata().at("token_adam/optimizer") == "SparseAdam<float>");
    CHECK(file.metadata().at("positions_adamw/optimizer") == "AdamW<float>");
    CHECK(file.integers("dropout_calls").scalar() == 1);
}

TEST_CASE("A bfloat16 token table's run resumes bit for bit from its master weights and round_master()",
          "[io][training]") {
    using Narrow = seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>,
                                           seqembed::TokenEmbedding<float, Eigen::bfloat16>>;
    struct NarrowRun {
        Narrow pipeline{seqembed::TokenEmbedding<float, Eigen::bfloat16>(40, 8), seqembed::LearnedPositionalEmbedding<float>(16, 8),
                        {0.2, 9}};
        seqembed::optim::SparseAdam<float> token{"token", 40, 8};

        NarrowRun() { pipeline.set_training(true); }

        void step(int step) {
            IdMatrix ids(2, 6);
            std::mt19937 generator(static_cast<unsigned>(300 + step));
            for (Index k = 0; k < ids.size(); ++k) ids.data()[k] = static_cast<std::int64_t>(generator() % 40);
            const seqembed::Batch batch(ids);
            const std::uint64_t call = pipeline.dropout().calls();
            const RowMatrix<float> out = pipeline.forward(batch);
            (void)pipeline.backward_step(batch, out * 0.5f, call, token, 0.05);
        }
    };
    NarrowRun straight;
    for (int s = 0; s < 6; ++s) straight.step(s);

    NarrowRun first;
    for (int s = 0; s < 3; ++s) first.step(s);
    seqembed::io::TrainingState state;
    state.add_table("token_master", first.pipeline.trainable().token->weights);
    state.add_optimizer("token_adam", first.token);
    state.add_counter("dropout_calls", first.pipeline.dropout().calls());
    const std::string bytes = state.serialize();

    NarrowRun resumed;
    const seqembed::io::TrainingState saved = seqembed::io::TrainingState::from_bytes(bytes);
    saved.restore_table("token_master", resumed.pipeline.trainable().token->weights);
    resumed.pipeline.round_master();
    saved.restore_optimizer("token_adam", resumed.token);
    seqembed::Dropout counter = resumed.pipeline.dropout();
    counter.set_calls(saved.counter("dropout_calls"));
    CHECK(resumed.pipeline.embedding().table() == first.pipeline.embedding().table());
    for (int s = 3; s < 6; ++s) resumed.step(s);

    CHECK(resumed.pipeline.embedding().table() == straight.pipeline.embedding().table());
    CHECK(resumed.pipeline.trainable().token->weights == straight.pipeline.trainable().token->weights);
    CHECK(resumed.token.exp_avg_sq() == straight.token.exp_avg_sq());
}
