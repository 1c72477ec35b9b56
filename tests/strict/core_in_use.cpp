// Every public header of seqembed::seqembed, and each of its templates instantiated for every type
// it takes, in one program that a user could have written. tests/strict/CMakeLists.txt compiles
// it with a user's strictest warning flags (as errors) under every compiler, target, standard and
// optimisation level it has; the native builds also run it. Where seqembed::io is built,
// io_in_use.cpp includes this file (SEQEMBED_STRICT_CORE_CHECKS_ONLY: no main) and runs its
// checks too, so that one translation unit instantiates the kernels.
#include <seqembed/alibi.hpp>
#include <seqembed/assert.hpp>
#include <seqembed/dropout.hpp>
#include <seqembed/error.hpp>
#include <seqembed/gradients.hpp>
#include <seqembed/isa.hpp>
#include <seqembed/layer_norm.hpp>
#include <seqembed/learned_positions.hpp>
#include <seqembed/no_positions.hpp>
#include <seqembed/optim.hpp>
#include <seqembed/optim/adam.hpp>
#include <seqembed/optim/adamw.hpp>
#include <seqembed/optim/lazy_sgd.hpp>
#include <seqembed/optim/rowwise_adagrad.hpp>
#include <seqembed/optim/sgd.hpp>
#include <seqembed/optim/sparse_adam.hpp>
#include <seqembed/padding.hpp>
#include <seqembed/pipeline.hpp>
#include <seqembed/rotary.hpp>
#include <seqembed/seqembed.hpp>
#include <seqembed/sinusoidal.hpp>
#include <seqembed/token_embedding.hpp>
#include <seqembed/token_types.hpp>
#include <seqembed/trainable_table.hpp>
#include <seqembed/types.hpp>
#include <seqembed/version.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace core_in_use {
namespace {

using seqembed::Index;

int failures = 0;

void expect(bool condition, const char* what) {
    if (!condition) {
        std::fprintf(stderr, "core_in_use: %s\n", what);
        ++failures;
    }
}

template <typename Scalar, typename Positional, typename Embedding>
void run_pipeline(Embedding embedding, Positional positions) {
    const Index d_model = embedding.d_model();
    seqembed::PipelineOptions options;
    options.dropout = 0.25;
    options.dropout_seed = 7;
    options.threads = 2;
    seqembed::InputPipeline<Scalar, Positional, Embedding> pipeline(std::move(embedding), std::move(positions),
                                                                    options);
    seqembed::IdMatrix ids(2, 5);
    ids << 1, 2, 3, 0, 0,
           0, 4, 5, 6, 7;
    const std::vector<std::int32_t> lengths{3, 4};
    const std::vector<std::int64_t> offsets{0, 2};
    Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> mask = ids.array() != 0;
    seqembed::RowMatrix<Scalar> out = pipeline.forward(ids);
    expect(out.rows() == 10 && out.cols() == d_model, "pipeline output shape");
    out = pipeline.forward(ids, seqembed::Padding::right(lengths), seqembed::StepOffsets(offsets));
    expect(out.row(3).isZero(), "a right-padded row is zero");
    pipeline.forward_into(ids, seqembed::Padding::from_mask(mask), out);
    pipeline.forward_into(ids, seqembed::Padding::by_id(0), out);
    pipeline.set_training(true);
    pipeline.forward_into(ids, seqembed::Padding::left(lengths), out);
    const seqembed::IdMatrix32 ids32 = ids.cast<std::int32_t>();
    out = pipeline.forward(ids32, seqembed::Padding::none(), 3);
}

/// BERT's stage: token types and LayerNorm, numbered by index.
template <typename Scalar, typename Embedding>
void run_bert(const Embedding& embedding) {
    const Index d_model = embedding.d_model();
    seqembed::PipelineOptions options;
    options.positions = seqembed::PositionNumbering::sequence_index;
    seqembed::InputPipeline<Scalar, seqembed::LearnedPositionalEmbedding<Scalar>, Embedding> pipeline(
        embedding, seqembed::LearnedPositionalEmbedding<Scalar>(16, d_model), options);
    pipeline.set_token_types(seqembed::TokenTypeEmbedding<Scalar>(2, d_model));
    pipeline.set_layer_norm(seqembed::LayerNorm<Scalar>(d_model, 1e-12));
    seqembed::IdMatrix ids(2, 3);
    ids << 1, 2, 0, 3, 4, 5;
    const seqembed::IdMatrix types = seqembed::IdMatrix::Zero(2, 3);
    const seqembed::RowMatrix<Scalar> out = pipeline.forward(ids, types, seqembed::Padding::by_id(0));
    expect(out.row(2).isZero() && !out.row(0).isZero(), "a BERT-style pipeline zeroes padded rows only");
    const seqembed::RowMatrix<Scalar> normalized = seqembed::LayerNorm<Scalar>(d_model).forward(out);
    expect(normalized.rows() == 6, "LayerNorm keeps the shape");
    expect(seqembed::TokenTypeEmbedding<Scalar>(2, d_model).forward(types).rows() == 6, "token type rows");
}

template <typename Scalar, typename Storage>
void run_embedding() {
    const Index vocab = 12;
    const Index d_model = 8;
    seqembed::RowMatrix<float> weights(vocab, d_model);
    for (Index k = 0; k < weights.size(); ++k) weights.data()[k] = static_cast<float>(k % 17) / 16.0f - 0.5f;
    auto embedding = seqembed::TokenEmbedding<Scalar, Storage>::from_weights(weights.cast<Storage>());
    seqembed::TokenEmbeddingOptions options;
    options.scale = seqembed::EmbeddingScale::none();
    options.padding_idx = 0;
    seqembed::TokenEmbedding<Scalar, Storage> seeded(vocab, d_model, options);
    const auto view = seqembed::TokenEmbedding<Scalar, Storage>::view(embedding.table().data(), vocab, d_model);
    seqembed::IdMatrix ids(1, 3);
    ids << 1, 5, 11;
    const seqembed::RowMatrix<Scalar> rows = embedding.forward(ids);
    seqembed::RowMatrix<Scalar> into(3, d_model);
    view.forward_into(ids, into);
    expect(rows == into, "a view gives its table's rows");
    seeded.forward_into(ids, into);

    // Tables of 64 rows, not the default 5000: the i686 programs run under qemu-i386, whose x87
    // long double arithmetic (the exact tables') is emulated in software.
    seqembed::SinusoidalOptions short_table;
    short_table.max_positions = 64;
    run_pipeline<Scalar>(embedding, seqembed::SinusoidalPositionalEncoding<Scalar>(d_model, short_table));
    run_bert<Scalar>(embedding);
    run_pipeline<Scalar>(embedding, seqembed::LearnedPositionalEmbedding<Scalar>(16, d_model));
    run_pipeline<Scalar>(embedding, seqembed::NoPositions<Scalar>(d_model));
}

template <typename Scalar>
void run_positions() {
    const Index d_model = 6;
    for (const auto& options : {seqembed::SinusoidalOptions::paper(), seqembed::SinusoidalOptions::tensor2tensor(),
                                seqembed::SinusoidalOptions::fairseq(), seqembed::SinusoidalOptions::hf_marian(),
                                seqembed::SinusoidalOptions::ctranslate2()}) {
        seqembed::SinusoidalOptions short_table = options;
        short_table.max_positions = 64;
        const seqembed::SinusoidalPositionalEncoding<Scalar> sinusoidal(d_model, short_table);
        const seqembed::RowMatrix<Scalar> rows = sinusoidal.forward(2, 3);
        seqembed::RowMatrix<Scalar> into(3, d_model);
        sinusoidal.forward_into(2, into);
        expect(rows == into, "sinusoidal forward == forward_into");
        expect(sinusoidal.rows(0, 2).rows() == 2, "sinusoidal rows");
    }
    const auto bart = seqembed::LearnedPositionsOptions::bart();
    const seqembed::LearnedPositionalEmbedding<Scalar> learned(8, d_model, bart);
    const auto view = seqembed::LearnedPositionalEmbedding<Scalar>::view(learned.table().data(), 8, d_model, bart);
    expect(view.forward(0, 2) == learned.forward(0, 2), "learned view");
}

template <typename Scalar>
void run_dropout() {
    seqembed::Dropout dropout(0.5, 3);
    dropout.set_training(true);
    seqembed::RowMatrix<Scalar> x = seqembed::RowMatrix<Scalar>::Ones(4, 9);
    const seqembed::RowMatrix<Scalar> y = dropout.forward(x);
    const seqembed::MaskMatrix kept = dropout.mask(0, 4, 9);
    for (Index k = 0; k < y.size(); ++k)
        expect((y.data()[k] != Scalar(0)) == (kept.data()[k] != 0), "dropout keeps what mask() says");
    dropout.forward_into(x, x);
    dropout.apply(x.data(), x.size(), 5, 0);
}

/// RoPE: a table of Table for every rule and both layouts, Q and K of Activation rotated by
/// positions and by a padded batch.
template <typename Table, typename Activation>
void run_rotary() {
    std::vector<seqembed::RotaryOptions> rules;
    rules.push_back(seqembed::RotaryOptions::hugging_face(16, 10000.0));
    rules.push_back(seqembed::RotaryOptions::gptj_6b());
    seqembed::RotaryOptions linear = seqembed::RotaryOptions::hugging_face(16);
    linear.scaling = seqembed::RotaryScaling::linear;
    linear.factor = 4.0;
    rules.push_back(linear);
    seqembed::RotaryOptions llama3 = seqembed::RotaryOptions::llama3_1_8b();
    llama3.max_positions = 64;
    llama3.precision = seqembed::TablePrecision::follow_scalar;
    rules.push_back(llama3);
    seqembed::RotaryOptions yarn = seqembed::RotaryOptions::hugging_face(16);
    yarn.scaling = seqembed::RotaryScaling::yarn;
    yarn.factor = 4.0;
    yarn.original_max_position_embeddings = 32;
    yarn.beyond = seqembed::BeyondTable::compute;
    rules.push_back(yarn);
    for (seqembed::RotaryOptions options : rules) {
        options.max_positions = std::min<Index>(options.max_positions, 64);
        const seqembed::RotaryEmbedding<Table> rope(options);
        const Index head_dim = rope.head_dim();
        seqembed::RowMatrix<Activation> q = seqembed::RowMatrix<float>::Constant(6, 4 * head_dim, 0.5f).cast<Activation>();
        seqembed::RowMatrix<Activation> k = seqembed::RowMatrix<float>::Constant(6, 2 * head_dim, 0.25f).cast<Activation>();
        typename seqembed::RotaryEmbedding<Table>::PositionVector positions(6);
        positions << 0, 1, 2, 3, 4, 5;
        rope.apply(q, k, 4, 2, positions);
        seqembed::IdMatrix ids(2, 3);
        ids << 1, 2, 0, 0, 3, 4;
        rope.apply(q, k, 4, 2, ids, seqembed::Padding::by_id(0), seqembed::StepOffsets(3));
        rope.apply_backward(q, k, 4, 2, ids, seqembed::Padding::by_id(0), seqembed::StepOffsets(3));
        rope.apply_backward(q, k, 4, 2, positions);
        expect(rope.rows(0, 2).cos.rows() == 2, "rotary rows");
    }
    seqembed::RotaryOptions sections = seqembed::RotaryOptions::hugging_face(16, 1000000.0);
    sections.mrope_section = {2, 3, 3};
    sections.mrope_interleaved = true;
    const seqembed::RotaryEmbedding<Table> mrope(sections);
    seqembed::RowMatrix<Activation> q = seqembed::RowMatrix<float>::Constant(3, 32, 0.5f).cast<Activation>();
    seqembed::RowMatrix<Activation> k = seqembed::RowMatrix<float>::Constant(3, 16, 0.25f).cast<Activation>();
    typename seqembed::RotaryEmbedding<Table>::MultimodalPositions three(3, 3);
    three << 0, 1, 1, 0, 2, 3, 0, 4, 5;
    mrope.apply_multimodal(q, k, 2, 1, three);
    mrope.apply_multimodal_backward(q, k, 2, 1, three);
    seqembed::RowMatrix<Table> cos(3, 8), sin(3, 8);
    mrope.multimodal_rows_into(three, cos, sin);
    expect(mrope.multimodal() && mrope.multimodal_axis(1) == 1, "multimodal rotary");
}

/// Training: the backward of a BERT-like stage, the fused step, every optimizer, clipping, and
/// the stages' and RoPE's backward.
template <typename Scalar, typename Storage>
void run_training() {
    seqembed::PipelineOptions options;
    options.dropout = 0.1;
    options.threads = 2;
    seqembed::InputPipeline<Scalar, seqembed::LearnedPositionalEmbedding<Scalar>, seqembed::TokenEmbedding<Scalar, Storage>>
        pipeline(seqembed::TokenEmbedding<Scalar, Storage>(10, 8), seqembed::LearnedPositionalEmbedding<Scalar>(8, 8),
                 options);
    pipeline.set_token_types(seqembed::TokenTypeEmbedding<Scalar>(2, 8));
    pipeline.set_layer_norm(seqembed::LayerNorm<Scalar>(8));
    pipeline.set_training(true);
    seqembed::IdMatrix ids(2, 3);
    ids << 1, 2, 0, 3, 4, 5;
    seqembed::Batch batch(ids);
    batch.padding = seqembed::Padding::by_id(0);
    const std::uint64_t call = pipeline.dropout().calls();
    const seqembed::RowMatrix<Scalar> out = pipeline.forward(batch);
    seqembed::PipelineGradients<Scalar> grads = pipeline.backward(batch, out, call);
    pipeline.backward_into(batch, out, call, grads);
    const double norm = seqembed::clip_grad_norm(grads, 1.0);
    expect(norm > 0.0 && grads.token.rows.size() == 5, "the backward's token rows");
    seqembed::PipelineTables<Scalar> tables = pipeline.trainable();
    seqembed::optim::SparseAdam<Scalar> sparse_adam("token", 10, 8);
    seqembed::optim::RowwiseAdagrad<Scalar> adagrad("token", 10, 8);
    seqembed::optim::LazySgd<Scalar> lazy_sgd("token", 10, 8);
    seqembed::optim::Sgd<Scalar> sgd("positions", 8, 8);
    seqembed::optim::Adam<Scalar> adam("positions", 8, 8);
    seqembed::optim::AdamW<Scalar> adamw("gamma", 1, 8);
    sparse_adam.step(tables.token->weights, grads.token, 1e-3);
    adagrad.step(tables.token->weights, grads.token, 1e-3);
    lazy_sgd.step(tables.token->weights, grads.token, 1e-3);
    pipeline.round_master_rows(grads.token.rows);
    sgd.step(tables.positions->weights, grads.positions, 1e-3);
    adam.step(tables.positions->weights, grads.positions.to_dense(), 1e-3);
    adamw.step(*tables.gamma, seqembed::RowMatrix<Scalar>(grads.gamma), 1e-3);
    const seqembed::PipelineGradients<Scalar> others = pipeline.backward_step(batch, out, call, sparse_adam, 1e-3);
    expect(others.token.empty() && sparse_adam.steps() == 2, "the fused step");
    pipeline.round_master();
    const seqembed::LayerNormGradients<Scalar> norm_grads = pipeline.layer_norm()->backward(out, out);
    expect(norm_grads.x.rows() == 6, "LayerNorm's backward");
    expect(pipeline.dropout().backward(out, call).rows() == 6, "dropout's backward");
    expect(pipeline.positions().backward(0, out.topRows(3)).rows.size() == 3, "positions' backward");
}

template <typename Scalar>
void run_alibi() {
    seqembed::IdMatrix ids(2, 4);
    ids << 1, 2, 3, 0, 0, 4, 5, 6;
    for (const auto& options : {seqembed::AlibiOptions::bloom(), seqembed::AlibiOptions::mpt(8.0)}) {
        const seqembed::AlibiBias<Scalar> alibi(12, options);
        const seqembed::RowMatrix<Scalar> bias = alibi.forward(ids, seqembed::Padding::by_id(0));
        expect(bias.rows() == 24 && alibi.slopes().size() == 12, "ALiBi bias shape");
    }
}

}  // namespace

/// Runs every check; returns the number of failures.
int run() {
    std::printf("seqembed %d.%d.%d, kernels: %s\n", SEQEMBED_VERSION_MAJOR, SEQEMBED_VERSION_MINOR,
                SEQEMBED_VERSION_PATCH, seqembed::isa_name(seqembed::active_isa()));
    for (const seqembed::Isa isa : seqembed::all_isas) {
        if (!seqembed::isa_supported(isa)) continue;
        seqembed::set_isa(isa);
        run_embedding<float, float>();
        run_embedding<float, Eigen::bfloat16>();
        run_embedding<float, Eigen::half>();
        run_embedding<double, double>();
        run_positions<float>();
        run_positions<double>();
        run_dropout<float>();
        run_dropout<double>();
        run_rotary<float, float>();
        run_rotary<double, double>();
        run_rotary<Eigen::bfloat16, Eigen::bfloat16>();
        run_rotary<Eigen::half, float>();
        run_rotary<float, Eigen::bfloat16>();
        run_alibi<float>();
        run_alibi<double>();
        run_training<float, float>();
        run_training<float, Eigen::bfloat16>();
        run_training<double, double>();
    }
    try {
        seqembed::TokenEmbedding<float> embedding(4, 2);
        seqembed::IdMatrix ids(1, 1);
        ids << 9;
        (void)embedding.forward(ids);
        expect(false, "id 9 of a vocabulary of 4 is refused");
    } catch (const seqembed::index_error& error) {
        std::printf("refused as expected: %s\n", error.what());
    }
    return failures;
}

}  // namespace core_in_use

#ifndef SEQEMBED_STRICT_CORE_CHECKS_ONLY
int main() { return core_in_use::run() == 0 ? 0 : 1; }
#endif
