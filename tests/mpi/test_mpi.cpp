// seqembed::mpi under mpirun (tests/mpi/CMakeLists.txt runs it on 2 and 3 ranks): every rank
// builds its shard of a vocabulary split unevenly and the same pipeline unsharded, and checks
// that the sharded forward, with the all-reduce and with the reduce-scatter, gives the
// unsharded forward's bytes, in evaluation and training (dropout), over several calls; and that
// an error on any rank is thrown on every rank, named. Prints "mpi tests: OK" on rank 0.
#include <seqembed/mpi.hpp>
#include <seqembed/optim.hpp>
#include <seqembed/seqembed.hpp>
#ifdef SEQEMBED_TEST_IO
#include <seqembed/io/io.hpp>
#endif

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace {

int failures = 0;
int rank = 0;
int ranks = 1;

void expect(bool condition, const std::string& what) {
    if (condition) return;
    ++failures;
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
}

template <typename Scalar>
bool same_bytes(const seqembed::RowMatrix<Scalar>& a, const seqembed::RowMatrix<Scalar>& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           std::memcmp(a.data(), b.data(), sizeof(Scalar) * static_cast<std::size_t>(a.size())) == 0;
}

// A batch with padding on both sides, a repeated id, the last id of the vocabulary and ids
// every rank holds some of.
struct Inputs {
    seqembed::IdMatrix ids;
    seqembed::IdMatrix types;
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> mask;
};

Inputs inputs(seqembed::Index vocab_size, seqembed::Index rows, seqembed::Index cols, std::uint64_t salt) {
    Inputs in;
    in.ids.resize(rows, cols);
    in.types.resize(rows, cols);
    in.mask.resize(rows, cols);
    std::uint64_t state = 0x9e3779b97f4a7c15ull ^ salt;
    for (seqembed::Index b = 0; b < rows; ++b)
        for (seqembed::Index t = 0; t < cols; ++t) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            in.ids(b, t) = static_cast<seqembed::TokenId>((state >> 33) % static_cast<std::uint64_t>(vocab_size));
            in.types(b, t) = static_cast<seqembed::TokenId>((state >> 20) % 2);
            in.mask(b, t) = (b % 2 == 0 ? t >= b : t < cols - b) ? 1 : 0;  // left and right padding
        }
    in.ids(0, cols - 1) = vocab_size - 1;
    in.ids(rows - 1, 0) = in.ids(rows - 1, 1);
    return in;
}

// Builds a pipeline over a token table (the whole one, or this rank's shard) and checks the
// sharded forwards against the whole one, `calls` times each.
template <typename Scalar, typename Positional, typename Embedding>
void check_equal_outputs(const std::string& name, const std::function<seqembed::InputPipeline<Scalar, Positional, Embedding>(
                                                      const std::optional<seqembed::VocabularyShard>&)>& make,
                         seqembed::Index vocab_size, const seqembed::Batch& batch, bool training) {
    const seqembed::VocabularyShard shard = seqembed::mpi::shard_of(vocab_size, MPI_COMM_WORLD);
    auto whole = make(std::nullopt);
    auto reduced = make(shard);
    auto scattered = make(shard);
    whole.set_training(training);
    reduced.set_training(training);
    scattered.set_training(training);
    const seqembed::mpi::RowSlice slice = seqembed::mpi::slice_of(batch.ids.size(), ranks, rank);
    for (int call = 0; call < 3; ++call) {
        const seqembed::RowMatrix<Scalar> expected = whole.forward(batch);
        const seqembed::RowMatrix<Scalar> got = seqembed::mpi::forward(reduced, batch, MPI_COMM_WORLD);
        expect(same_bytes(got, expected), name + ": all-reduce, call " + std::to_string(call));
        const seqembed::RowMatrix<Scalar> mine = seqembed::mpi::forward_scattered(scattered, batch, MPI_COMM_WORLD);
        const seqembed::RowMatrix<Scalar> expected_rows = expected.middleRows(slice.first, slice.rows);
        expect(same_bytes(mine, expected_rows), name + ": reduce-scatter, call " + std::to_string(call));
    }
}

// A deterministic output gradient with values of both signs and several magnitudes.
template <typename Scalar>
seqembed::RowMatrix<Scalar> output_gradient(seqembed::Index rows, seqembed::Index cols, int step) {
    seqembed::RowMatrix<Scalar> grad(rows, cols);
    for (seqembed::Index k = 0; k < grad.size(); ++k)
        grad.data()[k] = static_cast<Scalar>(std::sin(0.37 * static_cast<double>(k) + step) * static_cast<double>(1 + k % 5));
    return grad;
}

// One pipeline's optimizers, made at the first step for the tables it has: lazy Adam on the
// token table (its float master weights for bfloat16, rounded back after), Adam on the rest.
template <typename Scalar>
struct Steps {
    std::optional<seqembed::optim::SparseAdam<Scalar>> token;
    std::optional<seqembed::optim::Adam<Scalar>> positions, types, gamma, beta;

    template <typename Pipeline>
    void step(Pipeline& pipeline, const seqembed::PipelineGradients<Scalar>& grads) {
        const double lr = 0.01;
        seqembed::PipelineTables<Scalar> tables = pipeline.trainable();
        const seqembed::Index d = pipeline.d_model();
        if (!token) token.emplace("token", tables.token->weights.rows(), d);
        token->step(tables.token->weights, grads.token, lr);
        pipeline.round_master_rows(grads.token.rows);
        if (tables.positions) {
            if (!positions) positions.emplace("positions", tables.positions->weights.rows(), d);
            positions->step(tables.positions->weights, grads.positions, lr);
        }
        if (tables.token_types) {
            if (!types) types.emplace("types", tables.token_types->weights.rows(), d);
            types->step(tables.token_types->weights, grads.token_types, lr);
        }
        if (tables.gamma) {
            if (!gamma) gamma.emplace("gamma", 1, d);
            if (!beta) beta.emplace("beta", 1, d);
            gamma->step(*tables.gamma, seqembed::RowMatrix<Scalar>(grads.gamma), lr);
            beta->step(*tables.beta, seqembed::RowMatrix<Scalar>(grads.beta), lr);
        }
    }
};

template <typename Scalar>
bool same_vector(const Eigen::Matrix<Scalar, 1, Eigen::Dynamic>& a, const Eigen::Matrix<Scalar, 1, Eigen::Dynamic>& b) {
    return same_bytes<Scalar>(seqembed::RowMatrix<Scalar>(a), seqembed::RowMatrix<Scalar>(b));
}

// Whether a shard's gradients are the unsharded ones: its token rows those of its range, by the
// same ids, from its first id, and the replicated tables' whole gradients.
template <typename Scalar>
bool same_gradients(const seqembed::PipelineGradients<Scalar>& got, const seqembed::PipelineGradients<Scalar>& whole,
                    const seqembed::VocabularyShard& shard) {
    std::vector<std::int64_t> rows;
    std::vector<seqembed::Index> at;
    for (std::size_t k = 0; k < whole.token.rows.size(); ++k)
        if (shard.holds(whole.token.rows[k])) {
            rows.push_back(whole.token.rows[k]);
            at.push_back(static_cast<seqembed::Index>(k));
        }
    seqembed::RowMatrix<Scalar> values(static_cast<seqembed::Index>(at.size()), whole.token.d_model);
    for (std::size_t k = 0; k < at.size(); ++k) values.row(static_cast<seqembed::Index>(k)) = whole.token.values.row(at[k]);
    return got.token.table_rows == shard.rows && got.token.first_row == shard.first && got.token.rows == rows &&
           same_bytes(got.token.values, values) &&
           got.positions.rows == whole.positions.rows && same_bytes(got.positions.values, whole.positions.values) &&
           got.token_types.rows == whole.token_types.rows &&
           same_bytes(got.token_types.values, whole.token_types.values) && same_vector(got.gamma, whole.gamma) &&
           same_vector(got.beta, whole.beta);
}

// The bytes of a pipeline's replicated tables: learned positions, token types, LayerNorm.
template <typename Pipeline>
std::vector<unsigned char> replicated_tables(const Pipeline& pipeline) {
    std::vector<unsigned char> bytes;
    const auto add = [&](const auto* values, seqembed::Index count) {
        const auto* first = reinterpret_cast<const unsigned char*>(values);
        bytes.insert(bytes.end(), first, first + count * static_cast<seqembed::Index>(sizeof(*values)));
    };
    if constexpr (std::is_same_v<std::decay_t<decltype(pipeline.positions())>,
                                 seqembed::LearnedPositionalEmbedding<float>>)
        add(pipeline.positions().table().data(), pipeline.positions().table().size());
    if (pipeline.token_types() != nullptr)
        add(pipeline.token_types()->table().data(), pipeline.token_types()->table().size());
    if (pipeline.layer_norm() != nullptr) {
        add(pipeline.layer_norm()->gamma().data(), pipeline.d_model());
        add(pipeline.layer_norm()->beta().data(), pipeline.d_model());
    }
    return bytes;
}

// Three training steps over the shards, with the all-reduce and with the reduce-scatter (the
// token rows kept by the forward, or looked up again), against the unsharded pipeline's steps:
// outputs, gradients and, after the steps, every table, byte for byte.
template <typename Scalar, typename Positional, typename Embedding>
void check_training(const std::string& name, const std::function<seqembed::InputPipeline<Scalar, Positional, Embedding>(
                                                 const std::optional<seqembed::VocabularyShard>&)>& make,
                    seqembed::Index vocab_size, const seqembed::Batch& batch, bool keep_token_rows) {
    using Matrix = seqembed::RowMatrix<Scalar>;
    const seqembed::VocabularyShard shard = seqembed::mpi::shard_of(vocab_size, MPI_COMM_WORLD);
    auto whole = make(std::nullopt);
    auto reduced = make(shard);
    auto scattered = make(shard);
    whole.set_training(true);
    reduced.set_training(true);
    scattered.set_training(true);
    Steps<Scalar> whole_steps, reduced_steps, scattered_steps;
    const seqembed::Index d = whole.d_model();
    const seqembed::mpi::RowSlice slice = seqembed::mpi::slice_of(batch.ids.size(), ranks, rank);
    const std::string how = name + (keep_token_rows ? " (token rows kept)" : " (token rows looked up again)");
    for (int step = 0; step < 3; ++step) {
        const std::string at = how + ", step " + std::to_string(step);
        Matrix expected(batch.ids.size(), d);
        const std::optional<std::uint64_t> call = whole.forward_into(batch, expected);
        Matrix out(batch.ids.size(), d);
        Matrix token_rows;
        const std::optional<std::uint64_t> reduced_call = seqembed::mpi::forward_into(
            reduced, batch, out, MPI_COMM_WORLD, keep_token_rows ? &token_rows : nullptr);
        expect(reduced_call == call && same_bytes(out, expected), at + ": all-reduce forward");
        Matrix partial(batch.ids.size(), d);
        Matrix mine(slice.rows, d);
        Matrix token_slice;
        const std::optional<std::uint64_t> scattered_call = seqembed::mpi::forward_scattered_into(
            scattered, batch, partial, mine, MPI_COMM_WORLD, keep_token_rows ? &token_slice : nullptr);
        expect(scattered_call == call && same_bytes<Scalar>(mine, expected.middleRows(slice.first, slice.rows)),
               at + ": reduce-scatter forward");

        const Matrix grad = output_gradient<Scalar>(batch.ids.size(), d, step);
        const seqembed::PipelineGradients<Scalar> unsharded = whole.backward(batch, grad, call);
        const seqembed::PipelineGradients<Scalar> from_all = seqembed::mpi::backward(
            reduced, batch, grad, reduced_call, MPI_COMM_WORLD, keep_token_rows ? &token_rows : nullptr);
        expect(same_gradients(from_all, unsharded, shard), at + ": all-reduce backward");
        const Matrix grad_slice = grad.middleRows(slice.first, slice.rows);
        const seqembed::PipelineGradients<Scalar> from_slices = seqembed::mpi::backward_scattered(
            scattered, batch, grad_slice, scattered_call, MPI_COMM_WORLD, keep_token_rows ? &token_slice : nullptr);
        expect(same_gradients(from_slices, unsharded, shard), at + ": reduce-scatter backward");

        // Clipped to a norm below theirs at the second step: the same norm and scaled values.
        if (step == 1) {
            seqembed::PipelineGradients<Scalar> clipped = unsharded;
            seqembed::PipelineGradients<Scalar> clipped_all = from_all;
            seqembed::PipelineGradients<Scalar> clipped_slices = from_slices;
            const double norm = seqembed::clip_grad_norm(clipped, 0.5);
            expect(norm > 0.5, at + ": the gradients' norm is above the clipping norm");
            expect(seqembed::mpi::clip_grad_norm(clipped_all, 0.5, shard, MPI_COMM_WORLD) == norm &&
                       seqembed::mpi::clip_grad_norm(clipped_slices, 0.5, shard, MPI_COMM_WORLD) == norm,
                   at + ": mpi::clip_grad_norm's norm");
            expect(same_gradients(clipped_all, clipped, shard) && same_gradients(clipped_slices, clipped, shard),
                   at + ": clipped gradients");
        }

        whole_steps.step(whole, unsharded);
        reduced_steps.step(reduced, from_all);
        scattered_steps.step(scattered, from_slices);
    }
    for (const auto* trained : {&reduced, &scattered}) {
        const std::string which = how + (trained == &reduced ? ", all-reduce" : ", reduce-scatter");
        expect(same_bytes(Matrix(trained->embedding().table().template cast<Scalar>()),
                          Matrix(whole.embedding().table().middleRows(shard.first, shard.rows).template cast<Scalar>())),
               which + ": the token table's rows after three steps");
        expect(replicated_tables(*trained) == replicated_tables(whole), which + ": the replicated tables after three steps");
    }
}

// BERT's stage: learned positions, token types, LayerNorm, dropout 0.1, float, no scale; or
// RoBERTa's: positions numbered by non-padding ids from padding_idx + 1, padded rows computed.
void bert_like(bool training, bool roberta) {
    const seqembed::Index vocab = 1009;
    const seqembed::Index d = 48;
    const Inputs in = inputs(vocab, 5, 23, 1);
    seqembed::Batch batch(in.ids);
    batch.token_types = in.types;
    batch.padding = seqembed::Padding::from_mask(in.mask);
    using Pipeline = seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>>;
    const auto make = [&](const std::optional<seqembed::VocabularyShard>& shard) {
        seqembed::TokenEmbeddingOptions options;
        options.scale = seqembed::EmbeddingScale::none();
        options.padding_idx = roberta ? 1 : 0;
        options.seed = 3;
        options.shard = shard;
        seqembed::PipelineOptions pipeline_options;
        pipeline_options.dropout = 0.1;
        pipeline_options.dropout_seed = 11;
        if (roberta) {
            pipeline_options.positions = seqembed::PositionNumbering::non_padding_ids;
            pipeline_options.padding_id = 1;
            pipeline_options.padded_rows = seqembed::PaddedRows::computed;
        }
        Pipeline pipeline(seqembed::TokenEmbedding<float>(vocab, d, options),
                          seqembed::LearnedPositionalEmbedding<float>(
                              64, d, roberta ? seqembed::LearnedPositionsOptions::roberta(1)
                                             : seqembed::LearnedPositionsOptions::bert()),
                          pipeline_options);
        pipeline.set_token_types(seqembed::TokenTypeEmbedding<float>(2, d, 5));
        pipeline.set_layer_norm(seqembed::LayerNorm<float>(d, 1e-12));
        return pipeline;
    };
    const std::string name = std::string(roberta ? "RoBERTa" : "BERT") + "-like";
    check_equal_outputs<float, seqembed::LearnedPositionalEmbedding<float>, seqembed::TokenEmbedding<float>>(
        name + ", " + (training ? "training" : "evaluation"), make, vocab, batch, training);
    if (training)
        check_training<float, seqembed::LearnedPositionalEmbedding<float>, seqembed::TokenEmbedding<float>>(
            name, make, vocab, batch, !roberta);
}

// The Transformer's stage in double: sinusoidal positions computed past a short table (offsets),
// a negative scale (the ids a rank does not hold must still give -0.0), a table with zeros of
// both signs, RoBERTa's numbering, dropout 0.25.
void transformer_double() {
    const seqembed::Index vocab = 997;
    const seqembed::Index d = 33;
    const Inputs in = inputs(vocab, 4, 19, 2);
    seqembed::Batch batch(in.ids);
    batch.padding = seqembed::Padding::from_mask(in.mask);
    batch.offsets = seqembed::StepOffsets(7);
    seqembed::RowMatrix<double> table = seqembed::TokenEmbedding<double>(vocab, d, {}).table();
    for (seqembed::Index r = 0; r < vocab; r += 3) table(r, r % d) = (r % 2 == 0) ? 0.0 : -0.0;
    table.row(in.ids(1, 3)).setConstant(-0.0);
    using Pipeline = seqembed::InputPipeline<double>;
    const auto make = [&](const std::optional<seqembed::VocabularyShard>& shard) {
        seqembed::TokenEmbeddingOptions options;
        options.scale = seqembed::EmbeddingScale::value(-2.5);
        options.shard = shard;
        const seqembed::Index first = shard ? shard->first : 0;
        const seqembed::Index rows = shard ? shard->rows : vocab;
        seqembed::SinusoidalOptions sinusoidal;
        sinusoidal.max_positions = 10;  // rows past it computed into the scratch row
        sinusoidal.beyond = seqembed::BeyondTable::compute;
        seqembed::PipelineOptions pipeline_options;
        pipeline_options.dropout = 0.25;
        pipeline_options.dropout_seed = 5;
        pipeline_options.positions = seqembed::PositionNumbering::non_padding_ids;
        pipeline_options.padding_id = in.ids(2, 0);
        return Pipeline(seqembed::TokenEmbedding<double>::from_weights(table.middleRows(first, rows), options),
                        seqembed::SinusoidalPositionalEncoding<double>(d, sinusoidal), pipeline_options);
    };
    check_equal_outputs<double, seqembed::SinusoidalPositionalEncoding<double>, seqembed::TokenEmbedding<double>>(
        "Transformer-like, double, training", make, vocab, batch, true);
    check_training<double, seqembed::SinusoidalPositionalEncoding<double>, seqembed::TokenEmbedding<double>>(
        "Transformer-like, double", make, vocab, batch, false);
}

// A bfloat16 table, float output, no positions (Llama's input stage), viewed in place.
void bfloat16_view() {
    const seqembed::Index vocab = 512;
    const seqembed::Index d = 40;
    const Inputs in = inputs(vocab, 3, 17, 3);
    const seqembed::Batch batch(in.ids);
    const seqembed::RowMatrix<Eigen::bfloat16> table =
        seqembed::TokenEmbedding<float>(vocab, d, {}).table().cast<Eigen::bfloat16>();
    using Embedding = seqembed::TokenEmbedding<float, Eigen::bfloat16>;
    using Pipeline = seqembed::InputPipeline<float, seqembed::NoPositions<float>, Embedding>;
    const auto make = [&](const std::optional<seqembed::VocabularyShard>& shard) {
        seqembed::TokenEmbeddingOptions options;
        options.shard = shard;
        const seqembed::Index first = shard ? shard->first : 0;
        const seqembed::Index rows = shard ? shard->rows : vocab;
        return Pipeline(Embedding::view(table.row(first).data(), rows, d, options), seqembed::NoPositions<float>(d));
    };
    check_equal_outputs<float, seqembed::NoPositions<float>, Embedding>("bfloat16 view, evaluation", make, vocab,
                                                                       batch, false);
    check_training<float, seqembed::NoPositions<float>, Embedding>("bfloat16 view", make, vocab, batch, true);
}

#ifdef SEQEMBED_TEST_IO
// A checkpoint's stage loaded with this rank's rows of its token table alone (io::load_model's
// VocabularySplit, mpi::split_of), in evaluation and training, against the whole load.
void loaded_checkpoint(const std::string& family) {
    const std::string directory = std::string(SEQEMBED_MODEL_FIXTURES) + "/" + family;
    seqembed::PipelineOptions options;
    options.dropout = 0.1;
    const seqembed::io::Model whole = seqembed::io::load_model(directory, options);
    const seqembed::Index vocab = whole.config().vocab_size;
    using Pipeline = seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>>;
    const auto make = [&](const std::optional<seqembed::VocabularyShard>& shard) -> Pipeline {
        if (!shard) return seqembed::io::load_model(directory, options).learned()->pipeline;
        const seqembed::io::Model part = seqembed::io::load_model(directory, options, seqembed::mpi::split_of(MPI_COMM_WORLD));
        expect(part.learned()->pipeline.embedding().shard() == *shard, family + ": the loaded shard");
        return part.learned()->pipeline;
    };
    const Inputs in = inputs(vocab, 3, 9, 4);
    seqembed::Batch batch(in.ids);
    batch.padding = seqembed::Padding::from_mask(in.mask);
    const seqembed::IdMatrix types = seqembed::IdMatrix::Zero(3, 9);  // RoBERTa has one type
    if (whole.takes_token_types()) batch.token_types = types;
    check_equal_outputs<float, seqembed::LearnedPositionalEmbedding<float>, seqembed::TokenEmbedding<float>>(
        family + " checkpoint, evaluation", make, vocab, batch, false);
    check_training<float, seqembed::LearnedPositionalEmbedding<float>, seqembed::TokenEmbedding<float>>(
        family + " checkpoint", make, vocab, batch, true);
}
#endif

// Runs f on every rank and checks that every rank threw ErrorType with a message holding each
// of `parts`.
template <typename ErrorType>
void expect_error_everywhere(const std::string& name, const std::function<void()>& f,
                             const std::vector<std::string>& parts) {
    std::string message;
    bool right_type = false;
    try {
        f();
    } catch (const ErrorType& caught) {
        right_type = true;
        message = caught.what();
    } catch (const std::exception& caught) {
        message = caught.what();
    }
    expect(right_type, name + ": expected the error's type, got \"" + message + "\"");
    for (const std::string& part : parts)
        expect(message.find(part) != std::string::npos, name + ": \"" + message + "\" lacks \"" + part + "\"");
}

void errors() {
    const seqembed::Index vocab = 101;
    const seqembed::Index d = 16;
    const std::string of = " of " + std::to_string(ranks) + ": ";
    const auto make = [&](seqembed::VocabularyShard shard) {
        seqembed::TokenEmbeddingOptions options;
        options.shard = shard;
        return seqembed::InputPipeline<float>(seqembed::TokenEmbedding<float>(vocab, d, options),
                                              seqembed::SinusoidalPositionalEncoding<float>(d));
    };
    const seqembed::VocabularyShard shard = seqembed::mpi::shard_of(vocab, MPI_COMM_WORLD);
    const auto pipeline = make(shard);

    // An id outside the vocabulary, the same on every rank: rank 0 names it.
    seqembed::IdMatrix bad_ids = seqembed::IdMatrix::Constant(2, 5, 7);
    bad_ids(1, 3) = vocab;
    const seqembed::Batch bad{seqembed::TokenIds(bad_ids)};
    expect_error_everywhere<seqembed::index_error>(
        "bad id", [&] { seqembed::mpi::forward(pipeline, bad, MPI_COMM_WORLD); },
        {"rank 0" + of, "token id 101 at (batch 1, position 3)"});

    // Ids that differ on the last rank.
    seqembed::IdMatrix differing = seqembed::IdMatrix::Constant(2, 5, 7);
    if (rank == ranks - 1) differing(0, 0) = 8;
    const seqembed::Batch ids{seqembed::TokenIds(differing)};
    expect_error_everywhere<seqembed::value_error>(
        "batches that differ", [&] { seqembed::mpi::forward(pipeline, ids, MPI_COMM_WORLD); },
        {"rank " + std::to_string(ranks - 1) + "'s batch"});

    // An output of the wrong shape on rank 1 only: every rank throws rank 1's shape_error, and
    // the others' outputs are untouched.
    const seqembed::IdMatrix same_ids = seqembed::IdMatrix::Constant(2, 5, 7);
    const seqembed::Batch same{seqembed::TokenIds(same_ids)};
    seqembed::RowMatrix<float> out = seqembed::RowMatrix<float>::Constant(rank == 1 ? 9 : 10, d, 42.0f);
    expect_error_everywhere<seqembed::shape_error>(
        "output shape on rank 1", [&] { seqembed::mpi::forward_into(pipeline, same, out, MPI_COMM_WORLD); },
        {"rank 1" + of, "output of mpi::forward_into"});
    expect((out.array() == 42.0f).all(), "output shape on rank 1: an output was written");

    // An output whose rows are not end to end (a block of a wider matrix).
    seqembed::RowMatrix<float> wide = seqembed::RowMatrix<float>::Zero(10, d + 3);
    expect_error_everywhere<seqembed::shape_error>(
        "output rows apart", [&] { seqembed::mpi::forward_into(pipeline, same, wide.leftCols(d), MPI_COMM_WORLD); },
        {"rank 0" + of, "must hold its rows end to end"});

    // Shards that overlap, or leave a gap.
    seqembed::VocabularyShard overlapping = shard;
    if (rank == 1) overlapping = {shard.first - 1, shard.rows + 1, vocab};
    expect_error_everywhere<seqembed::value_error>(
        "overlapping shards", [&] { seqembed::mpi::forward(make(overlapping), same, MPI_COMM_WORLD); },
        {"rank 1's shard", "overlaps rank 0's"});
    seqembed::VocabularyShard short_last = shard;
    if (rank == ranks - 1) short_last = {shard.first, shard.rows - 1, vocab};
    expect_error_everywhere<seqembed::value_error>(
        "shards short of the vocabulary", [&] { seqembed::mpi::forward(make(short_last), same, MPI_COMM_WORLD); },
        {"end at id 100", "the vocabulary has 101 ids"});

    // A pipeline whose dropout took a call more on one rank (rank 0 finished a forward alone).
    seqembed::TokenEmbeddingOptions token_options;
    token_options.shard = shard;
    seqembed::PipelineOptions dropping;
    dropping.dropout = 0.5;
    seqembed::InputPipeline<float> training(seqembed::TokenEmbedding<float>(vocab, d, token_options),
                                            seqembed::SinusoidalPositionalEncoding<float>(d), dropping);
    training.set_training(true);
    if (rank == 0) {
        seqembed::RowMatrix<float> alone = seqembed::RowMatrix<float>::Zero(same_ids.size(), d);
        static_cast<void>(training.finish_forward_into(same, alone));
    }
    expect_error_everywhere<seqembed::value_error>(
        "dropout counters that differ", [&] { seqembed::mpi::forward(training, same, MPI_COMM_WORLD); },
        {"dropout call counter is 0, rank 0's 1"});

    // A backward whose dropout call differs on the last rank, and a gradient slice of the wrong
    // shape on rank 1.
    const seqembed::RowMatrix<float> grad = seqembed::RowMatrix<float>::Ones(same_ids.size(), d);
    const std::optional<std::uint64_t> call = rank == ranks - 1 ? std::optional<std::uint64_t>(0) : std::nullopt;
    expect_error_everywhere<seqembed::value_error>(
        "backward calls that differ", [&] { seqembed::mpi::backward(pipeline, same, grad, call, MPI_COMM_WORLD); },
        {"rank " + std::to_string(ranks - 1) + "'s backward's dropout call"});
    const seqembed::mpi::RowSlice slice = seqembed::mpi::slice_of(same_ids.size(), ranks, rank);
    const seqembed::RowMatrix<float> grad_slice = seqembed::RowMatrix<float>::Ones(slice.rows + (rank == 1), d);
    expect_error_everywhere<seqembed::shape_error>(
        "gradient slice on rank 1",
        [&] { seqembed::mpi::backward_scattered(pipeline, same, grad_slice, std::nullopt, MPI_COMM_WORLD); },
        {"rank 1" + of, "gradient slice of mpi::backward_scattered"});

    // A clipping norm that is negative on rank 0 alone.
    seqembed::PipelineGradients<float> none;
    expect_error_everywhere<seqembed::value_error>(
        "negative max_norm on rank 0",
        [&] { seqembed::mpi::clip_grad_norm(none, rank == 0 ? -1.0 : 1.0, shard, MPI_COMM_WORLD); },
        {"rank 0" + of, "max_norm must be finite and >= 0, got -1"});

    // The unsharded forward refuses a shard.
    if (shard.rows < vocab) {
        try {
            static_cast<void>(pipeline.forward(same));
            expect(false, "forward of a shard: no error");
        } catch (const seqembed::value_error& caught) {
            expect(std::string(caught.what()).find("partial_forward_into") != std::string::npos,
                   std::string("forward of a shard: ") + caught.what());
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    try {
        bert_like(false, false);
        bert_like(true, false);
        bert_like(true, true);
        transformer_double();
        bfloat16_view();
#ifdef SEQEMBED_TEST_IO
        loaded_checkpoint("bert");
        loaded_checkpoint("roberta");
#endif
        errors();
    } catch (const std::exception& caught) {
        expect(false, std::string("unexpected exception: ") + caught.what());
    }
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            std::printf("mpi tests: OK on %d ranks (%s)\n", ranks, seqembed::isa_name(seqembed::active_isa()));
        else
            std::printf("mpi tests: %d failures on %d ranks\n", total, ranks);
    }
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
