// A token table split across MPI ranks (vocabulary parallelism, as Megatron-LM's
// VocabParallelEmbedding): each rank holds a contiguous part of the rows, looks up the ids it
// holds, and an all-reduce sums the ranks' outputs before positions and dropout are added. In
// training, each rank's backward sums the gradient of its own rows, and its optimizer steps them.
//
//   mpirun -np 2 build/dev/examples/shard_vocabulary            (add --oversubscribe beyond the cores)
//   mpirun -np 2 build/dev/examples/shard_vocabulary --time     (the headline workload's timings)
//
// Every rank builds its shard of the same seeded table, so each can check its results against
// the unsharded pipeline's bytes. With --time it times, per rank, the lookup of its rows, the
// all-reduce, the rest and the backward, next to the single-process pipeline (medians of 21).
#include <seqembed/mpi.hpp>
#include <seqembed/optim.hpp>
#include <seqembed/seqembed.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace {

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    const bool timing = argc > 1 && std::string(argv[1]) == "--time";
    const int rank = seqembed::mpi::rank_of(MPI_COMM_WORLD);
    const int ranks = seqembed::mpi::size_of(MPI_COMM_WORLD);

    // The headline workload with --time; a small batch otherwise.
    const seqembed::Index vocab = 32000;
    const seqembed::Index d_model = timing ? 512 : 64;
    const seqembed::Index batch_rows = timing ? 32 : 4;
    const seqembed::Index seq = timing ? 512 : 16;
    seqembed::IdMatrix ids(batch_rows, seq);
    for (seqembed::Index k = 0; k < ids.size(); ++k) ids.data()[k] = (k * 7919 + 13) % vocab;
    const seqembed::Batch batch{seqembed::TokenIds(ids)};

    seqembed::PipelineOptions options;
    options.dropout = 0.1;
    const auto pipeline_of = [&](const std::optional<seqembed::VocabularyShard>& shard) {
        seqembed::TokenEmbeddingOptions table;
        table.seed = 42;
        table.shard = shard;  // this rank's rows; unset: the whole table
        seqembed::InputPipeline<float> pipeline(seqembed::TokenEmbedding<float>(vocab, d_model, table),
                                                seqembed::SinusoidalPositionalEncoding<float>(d_model), options);
        pipeline.set_training(true);
        return pipeline;
    };

    const seqembed::VocabularyShard shard = seqembed::mpi::shard_of(vocab, MPI_COMM_WORLD);
    auto sharded = pipeline_of(shard);
    std::printf("rank %d of %d: token ids [%lld, %lld) of %lld\n", rank, ranks, static_cast<long long>(shard.first),
                static_cast<long long>(shard.end()), static_cast<long long>(vocab));
    seqembed::RowMatrix<float> out(ids.size(), d_model);
    const std::optional<std::uint64_t> call = seqembed::mpi::forward_into(sharded, batch, out, MPI_COMM_WORLD);

    auto whole = pipeline_of(std::nullopt);
    seqembed::RowMatrix<float> expected(ids.size(), d_model);
    const std::optional<std::uint64_t> whole_call = whole.forward_into(batch, expected);
    const auto same_bytes = [](const auto& a, const auto& b) {
        return a.rows() == b.rows() && a.cols() == b.cols() &&
               std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<std::size_t>(a.size())) == 0;
    };
    const bool same = same_bytes(out, expected);
    if (rank == 0)
        std::printf("the %lld x %lld output %s the unsharded pipeline's, bit for bit\n",
                    static_cast<long long>(out.rows()), static_cast<long long>(out.cols()), same ? "equals" : "DIFFERS FROM");

    // One training step: the next layers' gradient of the output (a stand-in here) goes back
    // through the forward's dropout call; each rank's token gradient lists its own rows, which
    // its optimizer steps.
    const seqembed::RowMatrix<float> grad = out * 0.01f;
    const seqembed::PipelineGradients<float> grads = seqembed::mpi::backward(sharded, batch, grad, call, MPI_COMM_WORLD);
    seqembed::optim::SparseAdam<float> adam("token table", shard.rows, d_model);
    adam.step(sharded.trainable().token->weights, grads.token, 1e-3);

    seqembed::optim::SparseAdam<float> whole_adam("token table", vocab, d_model);
    whole_adam.step(whole.trainable().token->weights, whole.backward(batch, grad, whole_call).token, 1e-3);
    const int stepped_same = same_bytes(seqembed::RowMatrix<float>(sharded.embedding().table()),
                                        seqembed::RowMatrix<float>(whole.embedding().table().middleRows(shard.first, shard.rows)));
    int all_stepped_same = 0;
    MPI_Allreduce(&stepped_same, &all_stepped_same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0)
        std::printf("after a SparseAdam step, every rank's rows %s the unsharded table's\n",
                    all_stepped_same ? "equal" : "DIFFER FROM");

    if (timing) {
        using clock = std::chrono::steady_clock;
        const auto ms = [](clock::duration t) { return std::chrono::duration<double, std::milli>(t).count(); };
        seqembed::RowMatrix<float> buffer(out.rows(), out.cols());
        std::vector<double> lookup, reduce, rest, total, single, backward, single_backward;
        for (int round = 0; round < 21; ++round) {
            MPI_Barrier(MPI_COMM_WORLD);
            const auto t0 = clock::now();
            sharded.partial_forward_into(batch, buffer);
            const auto t1 = clock::now();
            MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(buffer.size()), MPI_FLOAT, MPI_SUM,
                          MPI_COMM_WORLD);
            const auto t2 = clock::now();
            static_cast<void>(sharded.finish_forward_into(batch, buffer));
            const auto t3 = clock::now();
            lookup.push_back(ms(t1 - t0));
            reduce.push_back(ms(t2 - t1));
            rest.push_back(ms(t3 - t2));
            MPI_Barrier(MPI_COMM_WORLD);
            const auto t4 = clock::now();
            static_cast<void>(seqembed::mpi::forward_into(sharded, batch, buffer, MPI_COMM_WORLD));
            total.push_back(ms(clock::now() - t4));
            MPI_Barrier(MPI_COMM_WORLD);
            const auto t6 = clock::now();
            static_cast<void>(seqembed::mpi::backward(sharded, batch, grad, call, MPI_COMM_WORLD));
            backward.push_back(ms(clock::now() - t6));
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                const auto t5 = clock::now();
                static_cast<void>(whole.forward_into(batch, buffer));
                single.push_back(ms(clock::now() - t5));
                const auto t7 = clock::now();
                static_cast<void>(whole.backward(batch, grad, whole_call));
                single_backward.push_back(ms(clock::now() - t7));
            }
        }
        std::printf("rank %d: lookup of its rows %.2f ms, all-reduce %.2f ms, positions and dropout %.2f ms, "
                    "mpi::forward_into %.2f ms, mpi::backward %.2f ms (medians of 21)\n",
                    rank, median(lookup), median(reduce), median(rest), median(total), median(backward));
        if (rank == 0)
            std::printf("one process, the whole table: forward_into %.2f ms, backward %.2f ms\n", median(single),
                        median(single_backward));
    }
    MPI_Finalize();
    return same && all_stepped_same ? 0 : 1;
}
