/// @file mpi.hpp
/// @brief seqembed::mpi: vocabulary-parallel input stages over MPI. Each rank's pipeline holds
///        a shard of the token table (TokenEmbeddingOptions::shard); the ranks' partial outputs
///        are summed by MPI_Allreduce, or by MPI_Reduce_scatter for sequence parallelism, and
///        the rest of the stage (token types, positions, LayerNorm, dropout) runs after the sum.
///        The result is the unsharded pipeline's, bit for bit. Needs MPI (CMake target
///        seqembed::mpi); the rest of seqembed does not.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "batch.hpp"
#include "detail/exceptions.hpp"
#include "detail/large_memory.hpp"
#include "error.hpp"
#include "pipeline.hpp"
#include "types.hpp"
#include "vocabulary_shard.hpp"

namespace seqembed::mpi {

/// @brief Rows [first, first + rows) of a stage's output: the part one rank keeps after a
///        reduce-scatter.
struct RowSlice {
    /// @brief The first output row of the slice.
    Index first = 0;
    /// @brief How many rows it holds.
    Index rows = 0;
};

/// @brief This process's rank in a communicator.
/// @param comm the communicator.
/// @return its MPI_Comm_rank.
/// @throws error if MPI refuses (with an error handler that returns).
inline int rank_of(MPI_Comm comm);
/// @brief The number of ranks in a communicator.
/// @param comm the communicator.
/// @return its MPI_Comm_size.
/// @throws error if MPI refuses (with an error handler that returns).
inline int size_of(MPI_Comm comm);

namespace detail {

/// Throws seqembed::error naming the MPI call that returned `code` (with an error handler that
/// returns; MPI's default handler aborts first).
inline void require_mpi(int code, const char* call) {
    if (code == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(code, text, &length);
    seqembed::detail::fail<error>(call, " failed: ", std::string(text, static_cast<std::size_t>(length)));
}

/// Raises the kind of error a rank's failure was, with `message`.
[[noreturn]] inline void raise(seqembed::detail::FailureKind kind, const std::string& message) {
    using seqembed::detail::FailureKind;
    switch (kind) {
        case FailureKind::index: seqembed::detail::fail<index_error>(message);
        case FailureKind::shape: seqembed::detail::fail<shape_error>(message);
        case FailureKind::value: seqembed::detail::fail<value_error>(message);
        case FailureKind::file: seqembed::detail::fail<file_error>(message);
        case FailureKind::none:
        case FailureKind::error:
        case FailureKind::out_of_memory:
        case FailureKind::other: break;
    }
    seqembed::detail::fail<error>(message);
}

/// Runs work() on every rank of comm, then agrees on the outcome before anything else: when one
/// or more ranks failed, every rank throws the error of the lowest failing rank, of its kind,
/// its message prefixed with "rank R of N:". No rank is left waiting in a collective, provided
/// work() calls a collective only where it cannot fail before it on one rank alone.
template <typename Work>
void agreed(MPI_Comm comm, Work&& work) {
    const seqembed::detail::Failure failure =
        seqembed::detail::attempt_describing<Work&, index_error, shape_error, value_error, file_error, error>(work);
    const int rank = rank_of(comm);
    const int mine = failure.kind == seqembed::detail::FailureKind::none ? INT_MAX : rank;
    int lowest = INT_MAX;
    require_mpi(MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce (the ranks' error flags)");
    if (lowest == INT_MAX) return;
    std::string message = failure.message;
    const std::string prefix = "seqembed: ";
    if (message.compare(0, prefix.size(), prefix) == 0) message.erase(0, prefix.size());
    int header[2] = {static_cast<int>(failure.kind), static_cast<int>(std::min<std::size_t>(message.size(), 1u << 20))};
    require_mpi(MPI_Bcast(header, 2, MPI_INT, lowest, comm), "MPI_Bcast (a failing rank's error)");
    message.resize(static_cast<std::size_t>(header[1]));
    require_mpi(MPI_Bcast(message.data(), header[1], MPI_CHAR, lowest, comm), "MPI_Bcast (a failing rank's error)");
    raise(static_cast<seqembed::detail::FailureKind>(header[0]),
          "rank " + std::to_string(lowest) + " of " + std::to_string(size_of(comm)) + ": " + message);
}

/// T itself, in a context that template arguments are not deduced from (std::type_identity).
template <typename T>
struct undeduced {
    using type = T;
};

/// The MPI datatype of a pipeline's Scalar.
template <typename Scalar>
MPI_Datatype datatype() noexcept {
    static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                  "seqembed::mpi: Scalar must be float or double");
    return std::is_same_v<Scalar, float> ? MPI_FLOAT : MPI_DOUBLE;
}

/// FNV-1a over the ids, padding mask and token types' values and shapes: equal on every rank
/// for the same batch.
inline std::uint64_t batch_digest(const Batch& batch) noexcept {
    std::uint64_t hash = 14695981039346656037ull;
    const auto mix = [&hash](std::uint64_t value) {
        for (int byte = 0; byte < 8; ++byte, value >>= 8) hash = (hash ^ (value & 0xffu)) * 1099511628211ull;
    };
    const auto mix_ids = [&](const TokenIds& ids) {
        mix(static_cast<std::uint64_t>(ids.rows()));
        mix(static_cast<std::uint64_t>(ids.cols()));
        for (Index b = 0; b < ids.rows(); ++b)
            for (Index t = 0; t < ids.cols(); ++t) mix(static_cast<std::uint64_t>(ids(b, t)));
    };
    mix_ids(batch.ids);
    mix(std::uint64_t{batch.token_types.has_value()});
    if (batch.token_types) mix_ids(*batch.token_types);
    mix(std::uint64_t{batch.position_ids.has_value()});
    if (batch.position_ids) mix_ids(*batch.position_ids);
    return hash;
}

/// What every rank must agree on before a sharded forward or backward: the vocabulary split,
/// the width, the batch, the dropout state and the backward's dropout call (-1 for none).
struct RankView {
    std::int64_t first, rows, vocab_size, d_model, batch_rows, batch_cols, calls, training, scalar_bytes, call;
    std::uint64_t digest;
};

/// Throws (the same error on every rank, which all see the same views) unless the ranks'
/// shards tile the vocabulary and everything else agrees.
template <typename Scalar, typename Positional, typename Embedding>
void require_agreement(MPI_Comm comm, const InputPipeline<Scalar, Positional, Embedding>& pipeline,
                       const Batch& batch, std::optional<std::uint64_t> call = std::nullopt) {
    const VocabularyShard& shard = pipeline.embedding().shard();
    const RankView mine{shard.first,
                        shard.rows,
                        shard.vocab_size,
                        pipeline.d_model(),
                        batch.ids.rows(),
                        batch.ids.cols(),
                        static_cast<std::int64_t>(pipeline.dropout().calls()),
                        pipeline.is_training() ? 1 : 0,
                        static_cast<std::int64_t>(sizeof(Scalar)),
                        call ? static_cast<std::int64_t>(*call) : -1,
                        batch_digest(batch)};
    const int size = size_of(comm);
    std::vector<RankView> views(static_cast<std::size_t>(size));
    require_mpi(MPI_Allgather(&mine, static_cast<int>(sizeof(RankView)), MPI_BYTE, views.data(),
                              static_cast<int>(sizeof(RankView)), MPI_BYTE, comm),
                "MPI_Allgather (the ranks' shards and batches)");
    const RankView& zero = views.front();
    for (int r = 1; r < size; ++r) {
        const RankView& view = views[static_cast<std::size_t>(r)];
        const auto differs = [&](const char* what, std::int64_t theirs, std::int64_t first_rank) {
            if (theirs != first_rank)
                seqembed::detail::fail<value_error>("rank ", r, "'s ", what, " is ", theirs, ", rank 0's ", first_rank);
        };
        differs("vocabulary size", view.vocab_size, zero.vocab_size);
        differs("scalar size in bytes", view.scalar_bytes, zero.scalar_bytes);
        if (view.d_model != zero.d_model)
            seqembed::detail::fail<shape_error>("rank ", r, "'s pipeline is ", view.d_model, " wide, rank 0's ",
                                                zero.d_model);
        if (view.batch_rows != zero.batch_rows || view.batch_cols != zero.batch_cols)
            seqembed::detail::fail<shape_error>("rank ", r, "'s ids are ", view.batch_rows, " x ", view.batch_cols,
                                                ", rank 0's ", zero.batch_rows, " x ", zero.batch_cols);
        if (view.digest != zero.digest)
            seqembed::detail::fail<value_error>("rank ", r, "'s batch (ids, token types or position ids) differs from "
                                                "rank 0's");
        differs("training mode", view.training, zero.training);
        differs("dropout call counter", view.calls, zero.calls);
        differs("backward's dropout call (-1 for none)", view.call, zero.call);
    }
    std::vector<int> order(static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r) order[static_cast<std::size_t>(r)] = r;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return views[static_cast<std::size_t>(a)].first < views[static_cast<std::size_t>(b)].first;
    });
    std::int64_t expected = 0;
    int previous = -1;
    for (const int r : order) {
        const RankView& view = views[static_cast<std::size_t>(r)];
        if (view.first != expected) {
            if (previous < 0)
                seqembed::detail::fail<value_error>("the ranks' shards leave ids [0, ", view.first,
                                                    ") of the vocabulary to no rank (the lowest, rank ", r,
                                                    "'s, starts at ", view.first, ")");
            seqembed::detail::fail<value_error>("rank ", r, "'s shard [", view.first, ", ", view.first + view.rows,
                                                ") ", view.first < expected ? "overlaps" : "leaves a gap after",
                                                " rank ", previous, "'s, which ends at ", expected);
        }
        expected = view.first + view.rows;
        previous = r;
    }
    if (expected != zero.vocab_size)
        seqembed::detail::fail<value_error>("the ranks' shards end at id ", expected, " (rank ", previous,
                                            "'s), the vocabulary has ", zero.vocab_size, " ids");
}

/// Throws unless a matrix's rows lie end to end (an MPI buffer), naming it.
template <typename Matrix>
void require_contiguous(const char* what, const Matrix& matrix) {
    if (matrix.rows() > 1 && matrix.outerStride() != matrix.cols())
        seqembed::detail::fail<shape_error>(what, " must hold its rows end to end for MPI (its rows are ",
                                            matrix.outerStride(), " values apart, ", matrix.cols(), " wide)");
}

/// MPI_Allreduce in place over `count` values, in pieces that fit an int count.
template <typename Scalar>
void sum_in_place(Scalar* values, Index count, MPI_Comm comm) {
    constexpr Index piece = Index{1} << 30;
    for (Index at = 0; at < count; at += piece) {
        const int n = static_cast<int>(std::min(piece, count - at));
        require_mpi(MPI_Allreduce(MPI_IN_PLACE, values + at, n, datatype<Scalar>(), MPI_SUM, comm),
                    "MPI_Allreduce (the shards' outputs)");
    }
}

/// The row counts and first rows of every rank's slice of `rows` output rows, as MPI's int
/// counts and displacements. Throws value_error when a count does not fit an int.
inline void slice_counts(Index rows, int ranks, std::vector<int>& counts, std::vector<int>& firsts);

/// MPI_Allgatherv of every rank's slice of a rows x width matrix (slice_of's rows), `mine` this
/// rank's rows, into `all`, counted in rows (a datatype of one row) so that no count overflows.
template <typename Scalar>
void gather_rows(const Scalar* mine, Scalar* all, Index rows, Index width, MPI_Comm comm) {
    const int ranks = size_of(comm);
    std::vector<int> counts;
    std::vector<int> firsts;
    slice_counts(rows, ranks, counts, firsts);
    MPI_Datatype row = MPI_DATATYPE_NULL;
    require_mpi(MPI_Type_contiguous(static_cast<int>(width), datatype<Scalar>(), &row), "MPI_Type_contiguous (a row)");
    require_mpi(MPI_Type_commit(&row), "MPI_Type_commit (a row)");
    const int code = MPI_Allgatherv(mine, counts[static_cast<std::size_t>(rank_of(comm))], row, all, counts.data(),
                                    firsts.data(), row, comm);
    MPI_Type_free(&row);
    require_mpi(code, "MPI_Allgatherv (the ranks' rows)");
}

}  // namespace detail

inline int rank_of(MPI_Comm comm) {
    int rank = 0;
    detail::require_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    return rank;
}

inline int size_of(MPI_Comm comm) {
    int size = 0;
    detail::require_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    return size;
}

/// @brief This rank's part of a vocabulary split between comm's ranks, in rank order
///        (VocabularyShard::of_rank).
/// @param vocab_size the vocabulary's size, at least the number of ranks.
/// @param comm the communicator.
/// @return the shard to give TokenEmbeddingOptions::shard (or io's loaders).
/// @throws value_error for a vocabulary smaller than the number of ranks.
inline VocabularyShard shard_of(Index vocab_size, MPI_Comm comm) {
    return VocabularyShard::of_rank(vocab_size, size_of(comm), rank_of(comm));
}

/// @brief This rank's part of any vocabulary split between comm's ranks, for a loader that
///        learns the vocabulary's size from the checkpoint (io::load_model(directory, options,
///        mpi::split_of(comm)) reads only this rank's rows of the token table).
/// @param comm the communicator.
/// @return {ranks: its size, rank: this process's rank}.
inline VocabularySplit split_of(MPI_Comm comm) { return VocabularySplit{size_of(comm), rank_of(comm)}; }

/// @brief The output rows rank `rank` of `ranks` keeps after a reduce-scatter: contiguous
///        parts whose sizes differ by one at most, the larger ones first.
/// @param rows the output's rows (batch x seq).
/// @param ranks the number of ranks, > 0.
/// @param rank the rank, in [0, ranks).
/// @return its first row and row count (0 rows when ranks > rows and rank >= rows).
inline RowSlice slice_of(Index rows, Index ranks, Index rank) noexcept {
    const Index base = rows / ranks;
    const Index larger = rows % ranks;
    return {rank * base + std::min(rank, larger), base + (rank < larger ? 1 : 0)};
}

namespace detail {

inline void slice_counts(Index rows, int ranks, std::vector<int>& counts, std::vector<int>& firsts) {
    if (rows > INT_MAX)
        seqembed::detail::fail<value_error>("an output of ", rows, " rows: more than MPI's int counts (", INT_MAX, ")");
    counts.resize(static_cast<std::size_t>(ranks));
    firsts.resize(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
        const RowSlice slice = slice_of(rows, ranks, r);
        counts[static_cast<std::size_t>(r)] = static_cast<int>(slice.rows);
        firsts[static_cast<std::size_t>(r)] = static_cast<int>(slice.first);
    }
}

/// The width of a row datatype: at most INT_MAX values.
inline void require_row_width(Index width) {
    if (width > INT_MAX)
        seqembed::detail::fail<value_error>("rows of ", width, " values: more than MPI's int counts (", INT_MAX, ")");
}

/// The shards' summed token rows of a batch, for the backward of a pipeline with LayerNorm:
/// `saved` itself when the forward kept them whole; else built in `storage` from this rank's
/// slice of them (gathered) or looked up again and all-reduced. For a pipeline without
/// LayerNorm, which does not read them, the empty `storage`.
template <typename Scalar, typename Positional, typename Embedding>
const RowMatrix<Scalar>& token_rows_of(const InputPipeline<Scalar, Positional, Embedding>& pipeline,
                                       const Batch& batch, const RowMatrix<Scalar>* saved, bool saved_is_slice,
                                       MPI_Comm comm, RowMatrix<Scalar>& storage) {
    if (pipeline.layer_norm() == nullptr) return storage;
    const Index count = batch.ids.size();
    const Index width = pipeline.d_model();
    const RowSlice slice = slice_of(count, size_of(comm), rank_of(comm));
    agreed(comm, [&] {
        if (saved != nullptr)
            seqembed::detail::require_shape("saved token rows of the sharded forward", saved->rows(), saved->cols(),
                                            saved_is_slice ? slice.rows : count, width);
        if (saved != nullptr && saved_is_slice) require_row_width(width);
        if (saved == nullptr || saved_is_slice) storage = seqembed::detail::new_output<Scalar>(count, width);
        if (saved == nullptr) pipeline.partial_forward_into(batch, storage);
    });
    if (saved == nullptr) {
        sum_in_place(storage.data(), storage.size(), comm);
        return storage;
    }
    if (!saved_is_slice) return *saved;
    gather_rows(saved->data(), storage.data(), count, width, comm);
    return storage;
}

}  // namespace detail

/// @brief The sharded forward with an all-reduce: every rank's pipeline (its token table one
///        shard of the vocabulary; the other stages the same on every rank) looks up its ids,
///        the partial outputs are summed in place by MPI_Allreduce, then each rank adds token
///        types and positions and applies LayerNorm and dropout. Every rank ends with the whole
///        output, equal bit for bit to the unsharded pipeline's forward.
///
/// Collective: every rank of comm calls it with the same batch. Before any collective on the
/// output the ranks agree on failure: a bad id, shapes, batches, dropout counters or a
/// vocabulary split that differ between ranks, a failed allocation: every rank throws the
/// error of the lowest failing rank, named ("seqembed: rank 1 of 3: token id ..."), and out is
/// untouched.
/// @param pipeline this rank's pipeline.
/// @param batch the ids and what goes with them, the same on every rank.
/// @param out (batch * seq) x d_model.
/// @param comm the ranks sharing the vocabulary.
/// @param token_rows when given, receives the summed token rows before the rest is added (the
///        input of a LayerNorm's backward, which mpi::backward then reads instead of looking the
///        rows up again); resized to out's shape.
/// @return the dropout call the forward took (the same on every rank), or none.
/// @throws as InputPipeline::forward_into, on every rank, and error if an MPI call fails (with
///         an error handler that returns).
template <typename Scalar, typename Positional, typename Embedding>
std::optional<std::uint64_t> forward_into(const InputPipeline<Scalar, Positional, Embedding>& pipeline,
                                          const Batch& batch, Eigen::Ref<RowMatrix<typename detail::undeduced<Scalar>::type>> out, MPI_Comm comm,
                                          RowMatrix<typename detail::undeduced<Scalar>::type>* token_rows = nullptr) {
    detail::agreed(comm, [&] { detail::require_agreement(comm, pipeline, batch); });
    detail::agreed(comm, [&] {
        seqembed::detail::require_shape("output of mpi::forward_into", out.rows(), out.cols(), batch.ids.size(),
                                        pipeline.d_model());
        detail::require_contiguous("output of mpi::forward_into", out);
        pipeline.check_forward(batch);
        if (token_rows != nullptr) *token_rows = seqembed::detail::new_output<Scalar>(out.rows(), out.cols());
    });
    detail::agreed(comm, [&] { pipeline.partial_forward_into(batch, out); });
    detail::sum_in_place(out.data(), out.size(), comm);
    if (token_rows != nullptr) *token_rows = out;
    std::optional<std::uint64_t> call;
    detail::agreed(comm, [&] { call = pipeline.finish_forward_into(batch, out); });
    return call;
}

/// @brief As forward_into, into a new matrix.
/// @param pipeline this rank's pipeline.
/// @param batch the ids and what goes with them, the same on every rank.
/// @param comm the ranks sharing the vocabulary.
/// @return the whole (batch * seq) x d_model output, on every rank.
/// @throws as forward_into.
template <typename Scalar, typename Positional, typename Embedding>
RowMatrix<Scalar> forward(const InputPipeline<Scalar, Positional, Embedding>& pipeline, const Batch& batch,
                          MPI_Comm comm) {
    RowMatrix<Scalar> out;
    detail::agreed(comm, [&] { out = seqembed::detail::new_output<Scalar>(batch.ids.size(), pipeline.d_model()); });
    forward_into(pipeline, batch, out, comm);
    return out;
}

/// @brief The sharded forward with a reduce-scatter (sequence parallelism): the partial
///        outputs are summed by MPI_Reduce_scatter, so each rank receives only its slice of the
///        output rows (slice_of), half an all-reduce's traffic, and finishes those rows alone.
///        Dropout's mask is indexed by the whole output's elements, so the slices together are
///        the unsharded pipeline's output, bit for bit.
///
/// Collective, with the agreement on failure of forward_into.
/// @param pipeline this rank's pipeline.
/// @param batch the ids and what goes with them, the same on every rank.
/// @param partial (batch * seq) x d_model, the rank's partial output (overwritten).
/// @param out slice_of(batch * seq, ranks, rank).rows x d_model: this rank's rows.
/// @param comm the ranks sharing the vocabulary.
/// @param token_rows when given, receives this rank's rows of the summed token rows before the
///        rest is added (for mpi::backward_scattered); resized to out's shape.
/// @return the dropout call the forward took (the same on every rank), or none.
/// @throws as forward_into; value_error for a slice of more than INT_MAX values (MPI's counts).
template <typename Scalar, typename Positional, typename Embedding>
std::optional<std::uint64_t> forward_scattered_into(const InputPipeline<Scalar, Positional, Embedding>& pipeline,
                                                    const Batch& batch, Eigen::Ref<RowMatrix<typename detail::undeduced<Scalar>::type>> partial,
                                                    Eigen::Ref<RowMatrix<typename detail::undeduced<Scalar>::type>> out, MPI_Comm comm,
                                                    RowMatrix<typename detail::undeduced<Scalar>::type>* token_rows = nullptr) {
    const int ranks = size_of(comm);
    const RowSlice slice = slice_of(batch.ids.size(), ranks, rank_of(comm));
    std::vector<int> counts(static_cast<std::size_t>(ranks));
    detail::agreed(comm, [&] { detail::require_agreement(comm, pipeline, batch); });
    detail::agreed(comm, [&] {
        seqembed::detail::require_shape("partial output of mpi::forward_scattered_into", partial.rows(),
                                        partial.cols(), batch.ids.size(), pipeline.d_model());
        seqembed::detail::require_shape("output slice of mpi::forward_scattered_into", out.rows(), out.cols(),
                                        slice.rows, pipeline.d_model());
        detail::require_contiguous("partial output of mpi::forward_scattered_into", partial);
        detail::require_contiguous("output slice of mpi::forward_scattered_into", out);
        for (int r = 0; r < ranks; ++r) {
            const Index values = slice_of(batch.ids.size(), ranks, r).rows * pipeline.d_model();
            if (values > INT_MAX)
                seqembed::detail::fail<value_error>("mpi::forward_scattered_into: rank ", r, "'s slice holds ", values,
                                                    " values, more than MPI's int counts (", INT_MAX, ")");
            counts[static_cast<std::size_t>(r)] = static_cast<int>(values);
        }
        pipeline.check_forward(batch);
        if (token_rows != nullptr) *token_rows = seqembed::detail::new_output<Scalar>(out.rows(), out.cols());
    });
    detail::agreed(comm, [&] { pipeline.partial_forward_into(batch, partial); });
    detail::require_mpi(MPI_Reduce_scatter(partial.data(), out.data(), counts.data(), detail::datatype<Scalar>(),
                                           MPI_SUM, comm),
                        "MPI_Reduce_scatter (the shards' outputs)");
    if (token_rows != nullptr) *token_rows = out;
    std::optional<std::uint64_t> call;
    detail::agreed(comm, [&] { call = pipeline.finish_forward_into(batch, out, slice.first); });
    return call;
}

/// @brief As forward_scattered_into, into new matrices.
/// @param pipeline this rank's pipeline.
/// @param batch the ids and what goes with them, the same on every rank.
/// @param comm the ranks sharing the vocabulary.
/// @return this rank's rows of the output (slice_of(batch * seq, ranks, rank)).
/// @throws as forward_scattered_into.
template <typename Scalar, typename Positional, typename Embedding>
RowMatrix<Scalar> forward_scattered(const InputPipeline<Scalar, Positional, Embedding>& pipeline, const Batch& batch,
                                    MPI_Comm comm) {
    const RowSlice slice = slice_of(batch.ids.size(), size_of(comm), rank_of(comm));
    RowMatrix<Scalar> partial;
    RowMatrix<Scalar> out;
    detail::agreed(comm, [&] {
        partial = seqembed::detail::new_output<Scalar>(batch.ids.size(), pipeline.d_model());
        out = seqembed::detail::new_output<Scalar>(slice.rows, pipeline.d_model());
    });
    forward_scattered_into(pipeline, batch, partial, out, comm);
    return out;
}

/// @brief The backward of mpi::forward_into: each rank sums the gradient of the token-table
///        rows it holds (PipelineGradients::token, by id; its first_row is shard().first) and
///        the whole gradients of the replicated tables (positions, token types, LayerNorm). With
///        the same grad_output on every rank (what the layers after an all-reduce give), those
///        are the same on every rank and equal bit for bit the unsharded pipeline's backward, so
///        they need no all-reduce, and the token gradients together are the unsharded one's
///        rows. No collective touches the gradients: the ranks only agree on failure, and a
///        pipeline with LayerNorm, whose backward reads its input, takes the forward's token
///        rows (forward_into's token_rows) or looks them up again with one all-reduce.
///
/// Each rank then steps its own tables: optimizer.step(pipeline.trainable().token->weights,
/// gradients.token, lr) updates its rows of the vocabulary, and the replicated tables' steps
/// are the same on every rank.
/// @param pipeline this rank's pipeline (the forward's).
/// @param batch the forward's batch, the same on every rank.
/// @param grad_output (batch * seq) x d_model: the gradient of the whole output, the same on
///        every rank.
/// @param call the dropout call the forward returned, or none.
/// @param comm the ranks sharing the vocabulary.
/// @param token_rows the token rows mpi::forward_into kept, or null (then looked up again when
///        the pipeline has a LayerNorm).
/// @return this rank's gradients.
/// @throws as InputPipeline::partial_backward, on every rank, named with the failing rank;
///         value_error for batches, dropout counters or calls that differ between ranks.
template <typename Scalar, typename Positional, typename Embedding>
PipelineGradients<Scalar> backward(const InputPipeline<Scalar, Positional, Embedding>& pipeline, const Batch& batch,
                                   const Eigen::Ref<const RowMatrix<typename detail::undeduced<Scalar>::type>>& grad_output,
                                   std::optional<std::uint64_t> call, MPI_Comm comm,
                                   const RowMatrix<typename detail::undeduced<Scalar>::type>* token_rows = nullptr) {
    detail::agreed(comm, [&] { detail::require_agreement(comm, pipeline, batch, call); });
    RowMatrix<Scalar> storage;
    const RowMatrix<Scalar>& rows = detail::token_rows_of(pipeline, batch, token_rows, false, comm, storage);
    PipelineGradients<Scalar> gradients;
    detail::agreed(comm, [&] { gradients = pipeline.partial_backward(batch, grad_output, call, rows); });
    return gradients;
}

/// @brief The backward of mpi::forward_scattered_into: the ranks' slices of the output
///        gradient are all-gathered first (MPI_Allgatherv), then each rank computes what
///        mpi::backward does from the whole gradient: its token rows' gradient, and the
///        replicated tables' gradients, the same on every rank and bit for bit the unsharded
///        ones. A pipeline with LayerNorm all-gathers the token rows the forward kept too (or
///        looks them up again with one all-reduce).
/// @param pipeline this rank's pipeline (the forward's).
/// @param batch the forward's batch, the same on every rank.
/// @param grad_slice slice_of(batch * seq, ranks, rank).rows x d_model: the gradient of this
///        rank's rows of the output.
/// @param call the dropout call the forward returned, or none.
/// @param comm the ranks sharing the vocabulary.
/// @param token_rows this rank's rows of the token rows forward_scattered_into kept, or null.
/// @return this rank's gradients.
/// @throws as backward; value_error for an output of more than INT_MAX rows.
template <typename Scalar, typename Positional, typename Embedding>
PipelineGradients<Scalar> backward_scattered(const InputPipeline<Scalar, Positional, Embedding>& pipeline,
                                             const Batch& batch,
                                             const Eigen::Ref<const RowMatrix<typename detail::undeduced<Scalar>::type>>& grad_slice,
                                             std::optional<std::uint64_t> call, MPI_Comm comm,
                                             const RowMatrix<typename detail::undeduced<Scalar>::type>* token_rows = nullptr) {
    const Index count = batch.ids.size();
    const Index width = pipeline.d_model();
    const RowSlice slice = slice_of(count, size_of(comm), rank_of(comm));
    RowMatrix<Scalar> grad_output;
    detail::agreed(comm, [&] { detail::require_agreement(comm, pipeline, batch, call); });
    detail::agreed(comm, [&] {
        seqembed::detail::require_shape("gradient slice of mpi::backward_scattered", grad_slice.rows(),
                                        grad_slice.cols(), slice.rows, width);
        detail::require_contiguous("gradient slice of mpi::backward_scattered", grad_slice);
        std::vector<int> counts;
        std::vector<int> firsts;
        detail::slice_counts(count, size_of(comm), counts, firsts);
        detail::require_row_width(width);
        grad_output = seqembed::detail::new_output<Scalar>(count, width);
    });
    detail::gather_rows(grad_slice.data(), grad_output.data(), count, width, comm);
    RowMatrix<Scalar> storage;
    const RowMatrix<Scalar>& rows = detail::token_rows_of(pipeline, batch, token_rows, true, comm, storage);
    PipelineGradients<Scalar> gradients;
    detail::agreed(comm, [&] { gradients = pipeline.partial_backward(batch, grad_output, call, rows); });
    return gradients;
}

/// @brief clip_grad_norm over the gradients of a sharded backward (mpi::backward or
///        backward_scattered): the global 2-norm of every rank's token rows and of the
///        replicated tables (counted once), and every rank's gradients scaled alike. The token
///        rows' squares are added row by row in the order of the vocabulary, so the norm and the
///        scaling are clip_grad_norm's of the unsharded gradients, bit for bit.
///
/// Collective: every rank calls it with its gradients and its shard.
/// @param gradients this rank's gradients, scaled in place.
/// @param max_norm the largest norm allowed, finite and >= 0, the same on every rank.
/// @param shard this rank's shard (pipeline.embedding().shard()): the ranks' rows are added in
///        the order of their shards' first ids.
/// @param comm the ranks sharing the vocabulary.
/// @return the global norm before clipping, the same on every rank.
/// @throws value_error (on every rank) for a bad max_norm on any rank, or a rank with more
///         than INT_MAX gradient rows.
template <typename Scalar>
double clip_grad_norm(PipelineGradients<Scalar>& gradients, double max_norm, const VocabularyShard& shard,
                      MPI_Comm comm) {
    const int ranks = size_of(comm);
    std::vector<double> mine;
    detail::agreed(comm, [&] {
        seqembed::detail::require_max_norm(max_norm);
        const auto rows = static_cast<Index>(gradients.token.values.rows());
        if (rows > INT_MAX)
            seqembed::detail::fail<value_error>("mpi::clip_grad_norm: ", rows, " token gradient rows, more than MPI's "
                                                "int counts (", INT_MAX, ")");
        mine.resize(static_cast<std::size_t>(rows));
        for (Index r = 0; r < rows; ++r)
            mine[static_cast<std::size_t>(r)] = seqembed::detail::squares_by_row(gradients.token.values.row(r));
    });
    // Each rank's shard and row count, then every rank's row sums.
    const std::int64_t header[2] = {shard.first, static_cast<std::int64_t>(mine.size())};
    std::vector<std::int64_t> headers(static_cast<std::size_t>(2 * ranks));
    detail::require_mpi(MPI_Allgather(header, 2, MPI_INT64_T, headers.data(), 2, MPI_INT64_T, comm),
                        "MPI_Allgather (the ranks' gradient rows)");
    std::vector<int> counts(static_cast<std::size_t>(ranks));
    std::vector<int> firsts(static_cast<std::size_t>(ranks));
    std::vector<double> all;
    detail::agreed(comm, [&] {
        std::int64_t total = 0;
        for (int r = 0; r < ranks; ++r) {
            counts[static_cast<std::size_t>(r)] = static_cast<int>(headers[static_cast<std::size_t>(2 * r + 1)]);
            firsts[static_cast<std::size_t>(r)] = static_cast<int>(total);
            total += headers[static_cast<std::size_t>(2 * r + 1)];
            if (total > INT_MAX)
                seqembed::detail::fail<value_error>("mpi::clip_grad_norm: the ranks hold ", total,
                                                    " token gradient rows together, more than MPI's int counts");
        }
        all.resize(static_cast<std::size_t>(total));
    });
    detail::require_mpi(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                                       counts.data(), firsts.data(), MPI_DOUBLE, comm),
                        "MPI_Allgatherv (the token gradient's row sums)");
    std::vector<int> order(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) order[static_cast<std::size_t>(r)] = r;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return headers[static_cast<std::size_t>(2 * a)] < headers[static_cast<std::size_t>(2 * b)];
    });
    double token_squares = 0;
    for (const int r : order)
        for (int k = 0; k < counts[static_cast<std::size_t>(r)]; ++k)
            token_squares += all[static_cast<std::size_t>(firsts[static_cast<std::size_t>(r)] + k)];
    return seqembed::detail::clip_with_token_squares(gradients, token_squares, max_norm);
}

}  // namespace seqembed::mpi
