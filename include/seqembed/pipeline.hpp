/// @file pipeline.hpp
/// @brief InputPipeline: embeddings x scale + positions, then dropout, over a padded batch.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#include "detail/checks.hpp"
#include "detail/fused_rows.hpp"
#include "detail/large_memory.hpp"
#include "detail/line_draws.hpp"
#include "detail/streaming_rows.hpp"
#include "dropout.hpp"
#include "error.hpp"
#include "padding.hpp"
#include "sinusoidal.hpp"
#include "token_embedding.hpp"
#include "types.hpp"

namespace seqembed {

/// @brief How an InputPipeline writes its output rows.
enum class OutputStores {
    /// Streaming stores for outputs of 4 MiB or more (larger than a core's L2) with 32- or
    /// 64-byte vectors: builds with AVX, or any x86-64 build (GCC, clang) on a CPU with
    /// AVX-512F, picked at run time. Plain stores below that size, and where only SSE2's
    /// 16-byte streaming stores are at hand (they measured slower). In training, large float
    /// outputs whose width is a multiple of 16 and at least 240, and whose rows start on 64-byte
    /// lines or lie end to end (an Eigen matrix, whatever its alignment), are streamed too, with
    /// the dropout mask drawn between the lines in code without branches
    /// (detail/line_draws.hpp), with AVX-512. Other large training outputs are computed a row
    /// at a time in registers but written with plain stores: the mask is drawn between their
    /// lines with branches, which the CPU measured (Zen 4) overlapped with plain stores only.
    automatic,
    /// Plain stores: the output stays in cache for whatever reads it next.
    cached,
    /// Streaming (non-temporal) stores: each output line is written once instead of read and
    /// written, and does not evict the tables from the cache. x86 only (plain elsewhere); a
    /// bfloat16 or half table's rows are widened by the AVX-512 row, so they are streamed only
    /// where the CPU has AVX-512F (plain stores elsewhere).
    streaming
};

/// @brief How an InputPipeline applies dropout after the sum, how it writes, and how many
///        threads it uses.
struct PipelineOptions {
    /// @brief Dropout probability in training, in [0, 1) (seed 001 uses 0.1).
    double dropout = 0.0;
    /// @brief Key of the dropout mask.
    std::uint64_t dropout_seed = 0;
    /// @brief Threads a forward may use, 0 for one per hardware thread. Sequences are shared
    ///        out between them (a batch of one sequence uses one), never more than one per
    ///        256 Ki output elements; the output is the same bit for bit whatever the number.
    ///        With more than one, each forward starts its threads (OpenMP's pool when built
    ///        with OpenMP), which allocates; with one, forward_into does not allocate.
    int threads = 1;
    /// @brief Plain or streaming stores for the output (the values are the same).
    OutputStores output_stores = OutputStores::automatic;
};

/// @brief The input stage of a transformer: for each real token, its embedding times the
///        embedding's scale plus the encoding of its position, then dropout in training.
///
/// ids are a batch x seq matrix; the output is (batch * seq) x d_model, row b * seq + t for
/// token (b, t). Padding says which tokens are real; each real token's position is the number of
/// real tokens before it in its sequence (plus a step offset when decoding), so left and right
/// padding give the same positions; padded rows are zero. forward and forward_into are const
/// and safe to call from several threads at once.
/// @tparam Scalar float or double.
/// @tparam Positional SinusoidalPositionalEncoding<Scalar> or LearnedPositionalEmbedding<Scalar>
///         (any type with d_model, require_positions, stored_row and add_row_to).
/// @tparam Embedding TokenEmbedding<Scalar> (default) or TokenEmbedding<Scalar, Storage> with a
///         bfloat16 or half table.
/// @code
/// seqembed::InputPipeline<float> pipeline(
///     seqembed::TokenEmbedding<float>(32000, 512),
///     seqembed::SinusoidalPositionalEncoding<float>(512), {/*dropout=*/0.1});
/// seqembed::RowMatrix<float> x = pipeline.forward(ids, seqembed::Padding::by_id(0));
/// @endcode
template <typename Scalar = float, typename Positional = SinusoidalPositionalEncoding<Scalar>,
          typename Embedding = TokenEmbedding<Scalar>>
class InputPipeline {
    static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                  "InputPipeline<Scalar, Positional, Embedding>: Scalar must be float or double");
    static_assert(std::is_same_v<std::remove_const_t<std::remove_pointer_t<decltype(
                      std::declval<const Positional&>().stored_row(0))>>,
                                 Scalar>,
                  "InputPipeline<Scalar, Positional, Embedding>: Positional must hold Scalar rows, "
                  "e.g. SinusoidalPositionalEncoding<Scalar>");
    static_assert(std::is_same_v<typename Embedding::ScalarType, Scalar>,
                  "InputPipeline<Scalar, Positional, Embedding>: Embedding must produce Scalar, "
                  "e.g. TokenEmbedding<Scalar> or TokenEmbedding<Scalar, Eigen::bfloat16>");

public:
    /// @brief Joins an embedding and a position table of the same width.
    /// @param embedding the token table (its scale applies).
    /// @param positions the position table.
    /// @param options dropout probability and seed.
    /// @throws shape_error if the widths differ; value_error for a bad dropout p.
    InputPipeline(Embedding embedding, Positional positions,
                  const PipelineOptions& options = {})
        : m_embedding(std::move(embedding)),
          m_positions(std::move(positions)),
          m_dropout(options.dropout, options.dropout_seed),
          m_threads(checked_threads(options.threads)),
          m_output_stores(options.output_stores) {
        if (m_embedding.d_model() != m_positions.d_model())
            detail::fail<shape_error>("token embedding width ", m_embedding.d_model(),
                                      " differs from position width ", m_positions.d_model());
    }

    /// @brief Width of an output row.
    /// @return d_model, the same for the embedding and the positions.
    Index d_model() const noexcept { return m_embedding.d_model(); }
    /// @brief The token table.
    /// @return the embedding this pipeline owns (its scale applies to every lookup).
    const Embedding& embedding() const noexcept { return m_embedding; }
    /// @brief The position table.
    /// @return the positional encoding this pipeline owns.
    const Positional& positions() const noexcept { return m_positions; }
    /// @brief The dropout layer.
    /// @return the layer whose call counter numbers the training forwards; its mask(call, rows,
    ///         cols) recomputes the mask a forward used.
    const Dropout& dropout() const noexcept { return m_dropout; }
    /// @brief Whether the pipeline is in training mode.
    /// @return true in training mode (dropout applies), false in evaluation mode.
    bool is_training() const noexcept { return m_dropout.is_training(); }
    /// @brief Training mode applies dropout; evaluation mode does not.
    /// @param training the new mode.
    void set_training(bool training) noexcept { m_dropout.set_training(training); }

    /// @brief Embeds a batch into a new (batch * seq) x d_model matrix.
    /// @param ids batch x seq token ids.
    /// @param padding which tokens are real (default: all).
    /// @param step_offset added to every position (tokens already decoded).
    /// @return a (batch * seq) x d_model matrix, row b * seq + t for token (b, t).
    /// @throws as forward_into.
    RowMatrix<Scalar> forward(const IdsRef& ids, const Padding& padding = Padding::none(),
                              std::int64_t step_offset = 0) const {
        RowMatrix<Scalar> out = detail::new_output<Scalar>(ids.size(), d_model());
        forward_into(ids, padding, out, step_offset);
        return out;
    }

    /// @brief As forward with every token real, into caller memory.
    /// @param ids batch x seq token ids.
    /// @param out (batch * seq) x d_model.
    /// @throws as the full overload.
    void forward_into(const IdsRef& ids, Eigen::Ref<RowMatrix<Scalar>> out) const {
        forward_into(ids, Padding::none(), out);
    }

    /// @brief Embeds a batch into caller memory without allocating. Everything is checked
    ///        before the first write, so on an error out is untouched.
    /// @param ids batch x seq token ids.
    /// @param padding which tokens are real.
    /// @param out (batch * seq) x d_model.
    /// @param step_offset added to every position.
    /// @throws shape_error for out or padding of the wrong shape; value_error for a bad
    ///         length; index_error for a real token's id outside the vocabulary or a position
    ///         past the table.
    void forward_into(const IdsRef& ids, const Padding& padding, Eigen::Ref<RowMatrix<Scalar>> out,
                      std::int64_t step_offset = 0) const {
        detail::require_shape("output of InputPipeline::forward_into", out.rows(), out.cols(),
                              ids.size(), d_model());
        padding.require_fits(ids);
        // One pass over the ids: every real token's id, and the longest run of positions.
        std::int64_t longest = 0;
        padding.for_each_token(ids, [&](Index b, Index t, std::int64_t token_index) {
            if (token_index < 0) return;
            m_embedding.require_id(ids(b, t), b, t);
            longest = std::max(longest, token_index + 1);
        });
        if (longest > 0) m_positions.require_positions(step_offset, static_cast<Index>(longest));

        const Index workers = worker_count(ids);
        std::vector<std::thread> helpers;
#if !defined(_OPENMP)  // OpenMP brings its own pool
        if (workers > 1) helpers.reserve(static_cast<std::size_t>(workers - 1));  // may throw: before any effect
#endif
        const bool dropping = m_dropout.is_active();
        const std::uint64_t call = dropping ? m_dropout.take_call() : 0;
        // Sequences are split evenly between the workers; each element's dropout draw depends on
        // its index only, so the output is the same for any number of workers.
        const auto rows_of = [&](Index worker) { return ids.rows() * worker / workers; };
        const auto work = [&](Index worker) {
            write_rows(ids, padding, out, step_offset, dropping, call, rows_of(worker),
                       rows_of(worker + 1));
        };
#if defined(_OPENMP)
        if (workers > 1) {
#pragma omp parallel for num_threads(static_cast<int>(workers)) schedule(static)
            for (Index worker = 0; worker < workers; ++worker) work(worker);
            return;
        }
#endif
        for (Index worker = 1; worker < workers; ++worker) {
            try {
                helpers.emplace_back(work, worker);
            } catch (...) {  // std::system_error or std::bad_alloc: no thread to be had
                work(worker);  // this thread does that share too
            }
        }
        work(0);
        for (std::thread& helper : helpers) helper.join();
    }

private:
    /// The type of the token table's values (Scalar, or bfloat16 or half for float).
    using Storage = typename Embedding::StorageType;

    // Below this many output elements a second thread costs more than it saves.
    static constexpr Index elements_per_extra_worker = Index{1} << 18;

    Index worker_count(const IdsRef& ids) const noexcept {
        const Index wanted = m_threads > 0 ? m_threads
                                           : std::max<Index>(1, std::thread::hardware_concurrency());
        const Index useful = std::max<Index>(1, ids.size() * d_model() / elements_per_extra_worker);
        return std::max<Index>(1, std::min({wanted, useful, ids.rows()}));
    }

    /// The rows of sequences first_row .. end_row - 1: gather, scale, add the position, drop,
    /// write. Everything was checked before.
    void write_rows(const IdsRef& ids, const Padding& padding, Eigen::Ref<RowMatrix<Scalar>>& out,
                    std::int64_t step_offset, bool dropping, std::uint64_t call, Index first_row,
                    Index end_row) const {
        const Index width = d_model();
        const Index seq = ids.cols();
        const Index end_token = end_row * seq;
        const Scalar scale = m_embedding.scale();
        // Embedding rows are requested ahead of their use. Rows given to RowStreamer or
        // LineDraws request the row requests.rows_ahead tokens on as their lines go out, in the
        // pattern measured best on this CPU (see row_requests.hpp). Other rows request the first
        // 512 bytes of the row four tokens on: enough to start the hardware prefetcher on the
        // rest.
        const auto requests = detail::RowRequests::for_rows(sizeof(Storage) *
                                                            static_cast<std::size_t>(width));
        const std::size_t prefetch_bytes = std::min<std::size_t>(
            sizeof(Storage) * static_cast<std::size_t>(width), 512);
        // The embedding row of the token `distance` tokens after (b, t) in these sequences, or
        // null (past them, or an id outside the vocabulary: a padded token's).
        const auto row_ahead = [&](Index b, Index t, Index distance) -> const void* {
            if (!detail::move_ahead(b, t, distance, seq, end_row)) return nullptr;
            const TokenId ahead = ids(b, t);
            return ahead >= 0 && ahead < m_embedding.vocab_size() ? m_embedding.row_data(ahead) : nullptr;
        };
        // Rows given to RowStreamer are computed in registers and written once, with streaming
        // stores; in training they multiply by the dropout factors (keep_scale or 0) of the mask
        // span in `draws`, which draws the next span between their lines, and (unless streaming
        // stores were asked for) they are written with plain stores, which that draw does not
        // hold up (see RowStreamer).
        //
        // Float training rows of whole runs (16 elements) that start on lines or lie end to end,
        // with AVX-512, take LineDraws instead: the mask drawn between the lines in
        // straight-line code that reads nothing but the rows and the span's words, which
        // streaming stores do overlap (see line_draws.hpp).
        const bool streamed = uses_row_streamer(out.size());
        detail::MaskFactors<Scalar> draws = m_dropout.factors<Scalar>(call);
        detail::RowStreamer<Scalar> streamer(!dropping || m_output_stores == OutputStores::streaming,
                                             requests.pattern);
#if SEQEMBED_DETAIL_AVX512_KERNELS && SEQEMBED_DETAIL_STREAMING
        std::optional<detail::LineDraws> line_draws;
        if constexpr (std::is_same_v<Storage, float>) {
            if (dropping && streamed && first_row * seq < end_token) {
                const int shift = detail::line_draws_shift(out.row(first_row * seq).data(), width, out.outerStride());
                if (shift >= 0)
                    line_draws.emplace(scale, m_dropout.seed(), call, m_dropout.threshold(),
                                       m_dropout.template keep_scale<float>(), shift, requests.level());
            }
        }
#endif
        padding.for_each_token_in_rows(ids, first_row, end_row, [&](Index b, Index t,
                                                                     std::int64_t token_index) {
            const Index row = b * seq + t;
            Scalar* out_row = out.row(row).data();
            if (token_index < 0) {
                std::fill(out_row, out_row + width, Scalar(0));
                return;
            }
            const auto first_element = static_cast<std::uint64_t>(row * width);
            const Scalar* stored = m_positions.stored_row(step_offset + token_index);
            if (streamed && stored != nullptr) {
                const Storage* embedding = m_embedding.row_data(ids(b, t));
                const auto* ahead = static_cast<const Storage*>(row_ahead(b, t, requests.rows_ahead));
                if (!dropping) {
                    streamer.write(out_row, embedding, scale, stored, nullptr, width, ahead);
                    return;
                }
#if SEQEMBED_DETAIL_AVX512_KERNELS && SEQEMBED_DETAIL_STREAMING
                if constexpr (std::is_same_v<Storage, float>) {
                    if (line_draws) {
                        line_draws->write_row(out_row, embedding, stored, width, ahead, first_element);
                        return;
                    }
                }
#endif
                // A piece per mask span, drawing the next span between its lines.
                constexpr auto span = detail::span_elements;
                for (Index j = 0; j < width;) {
                    const auto element = first_element + static_cast<std::uint64_t>(j);
                    const Index n = std::min(width - j, static_cast<Index>(span - element % span));
                    streamer.write(out_row + j, embedding + j, scale, stored + j, draws.at(element), n,
                                   ahead == nullptr ? nullptr : ahead + j, &draws);
                    j += n;
                }
                return;
            }
            if (const void* ahead = row_ahead(b, t, 4)) detail::prefetch(ahead, prefetch_bytes);
            detail::embed_row(out_row, m_embedding.row_data(ids(b, t)), scale, stored, m_positions,
                              step_offset + token_index, width);
            if (dropping) draws.apply(out_row, width, first_element);
        });
#if SEQEMBED_DETAIL_AVX512_KERNELS && SEQEMBED_DETAIL_STREAMING
        if (line_draws) line_draws->finish();
#endif
        if (streamed) streamer.finish();
    }

    /// Whether rows of an output of `elements` go to RowStreamer (streaming stores, or plain
    /// ones in training under OutputStores::automatic).
    bool uses_row_streamer(Index elements) const noexcept {
        switch (m_output_stores) {
            case OutputStores::cached: return false;
            case OutputStores::streaming: return detail::can_stream<Scalar, Storage>();
            case OutputStores::automatic: break;
        }
        return detail::streams_by_default<Scalar, Storage>(static_cast<std::size_t>(elements) * sizeof(Scalar));
    }

    static Index checked_threads(int threads) {
        if (threads < 0) detail::fail<value_error>("threads must be 0 (all) or more, got ", threads);
        return threads;
    }


    Embedding m_embedding;
    Positional m_positions;
    Dropout m_dropout;
    Index m_threads;
    OutputStores m_output_stores;
};

}  // namespace seqembed
