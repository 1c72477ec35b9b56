// seqembed::mpi under mpirun (tests/mpi/CMakeLists.txt runs it on 2 and 3 ranks): every rank
// builds its shard of a vocabulary split unevenly and the same pipeline unsharded, and checks
// that the sharded forward, with the all-reduce and with the reduce-scatter, gives the
// unsharded forward's bytes, in evaluation and training (dropout), over several calls; and that
// an error on any rank is thrown on every rank, named. Prints "mpi tests: OK" on rank 0.
#include <seqembed/mpi.hpp>
#include <seqembed/seqembed.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
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
    check_equal_outputs<float, seqembed::LearnedPositionalEmbedding<float>, seqembed::TokenEmbedding<float>>(
        std::string(roberta ? "RoBERTa" : "BERT") + "-like, " + (training ? "training" : "evaluation"), make, vocab,
        batch, training);
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
}

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
