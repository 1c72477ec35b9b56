/// @file pipeline.hpp
/// @brief InputPipeline: embeddings x scale + positions, then dropout, over a padded batch, in
///        one pass per row.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

#include "detail/checks.hpp"
#include "detail/engine/row_pass.hpp"
#include "detail/large_memory.hpp"
#include "detail/stage_access.hpp"
#include "dropout.hpp"
#include "error.hpp"
#include "layer_norm.hpp"
#include "padding.hpp"
#include "sinusoidal.hpp"
#include "token_embedding.hpp"
#include "token_types.hpp"
#include "types.hpp"

namespace seqembed {

/// @brief How an InputPipeline writes its output rows (the values are the same either way).
enum class OutputStores {
    /// Streaming stores for outputs of 4 MiB or more (more than a core's L2, so the next layer
    /// would not find them in the cache anyway), plain stores below.
    automatic,
    /// Plain stores: the output stays in cache for whatever reads it next.
    cached,
    /// Streaming (non-temporal) stores where the ISA has them (avx2, avx512): each output line
    /// is written once instead of read and written, and does not evict the tables from the
    /// cache. Plain stores with the scalar and NEON backends.
    streaming
};

/// @brief Which number a token's position is, when a batch is padded.
enum class PositionNumbering {
    /// The number of real tokens before it in its sequence: left and right padding give the same
    /// positions (OPT counts so from the attention mask, RoBERTa from the non-padding ids, and
    /// Hugging Face's generate() for decoder-only models).
    real_tokens,
    /// Its index in the sequence, padding included: what BERT, ELECTRA, GPT-2, BART and Marian
    /// compute when called with input_ids and an attention mask (with left padding the first
    /// real token is not at position 0).
    sequence_index
};

/// @brief How an InputPipeline applies dropout after the sum, how it writes, and how many
///        threads it uses.
struct PipelineOptions {
    /// @brief Dropout probability in training, in [0, 1) (the original Transformer used 0.1).
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
    /// @brief How far ahead, in bytes of table rows, the rows of the next tokens are requested
    ///        into the cache while a row is written (at least one row, at most 64); 8 KiB by
    ///        default, 0 requests nothing. A gathered row starts where no hardware prefetcher
    ///        can guess.
    std::size_t prefetch_bytes = detail::default_prefetch_bytes;
    /// @brief Which number a padded batch's tokens take in the positional stage.
    PositionNumbering positions = PositionNumbering::real_tokens;
};

/// @brief The input stage of a transformer: for each real token, its embedding times the
///        embedding's scale plus the encoding of its position, then dropout in training.
///
/// ids are a batch x seq matrix; the output is (batch * seq) x d_model, row b * seq + t for
/// token (b, t). Padding says which tokens are real; each real token's position is the number of
/// real tokens before it in its sequence (plus a step offset when decoding), so left and right
/// padding give the same positions, or its index in the sequence (PipelineOptions::positions);
/// padded rows are zero. forward and forward_into are const
/// and safe to call from several threads at once.
///
/// The stages are fused into one pass per row: each output row is computed in registers from
/// its table row and its position row and written once. The result equals, bit for bit, the
/// stages chained by hand: TokenEmbedding::forward_into, then adding the position rows, then
/// Dropout::forward_into with the same call number (padded rows zero), on every ISA.
/// @tparam Scalar float or double.
/// @tparam Positional SinusoidalPositionalEncoding<Scalar>, LearnedPositionalEmbedding<Scalar>
///         or NoPositions<Scalar>.
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
    static_assert(std::is_same_v<decltype(detail::StageAccess::position_row(
                                     std::declval<const Positional&>(), std::int64_t{0},
                                     std::declval<Scalar*>())),
                                 const Scalar*>,
                  "InputPipeline<Scalar, Positional, Embedding>: Positional must give Scalar rows, "
                  "e.g. SinusoidalPositionalEncoding<Scalar>, LearnedPositionalEmbedding<Scalar> or "
                  "NoPositions<Scalar>");
    static_assert(std::is_same_v<typename Embedding::ScalarType, Scalar>,
                  "InputPipeline<Scalar, Positional, Embedding>: Embedding must produce Scalar, "
                  "e.g. TokenEmbedding<Scalar> or TokenEmbedding<Scalar, Eigen::bfloat16>");

public:
    /// @brief Joins an embedding and a position table of the same width.
    /// @param embedding the token table (its scale applies). Copies share the table, so two
    ///        pipelines built from one TokenEmbedding share it (tied embeddings).
    /// @param positions the positional stage.
    /// @param options dropout probability and seed, threads, stores, prefetch distance.
    /// @throws shape_error if the widths differ; value_error for a bad dropout p or thread count.
    InputPipeline(Embedding embedding, Positional positions, const PipelineOptions& options = {})
        : m_embedding(std::move(embedding)),
          m_positions(std::move(positions)),
          m_dropout(options.dropout, options.dropout_seed),
          m_threads(checked_threads(options.threads)),
          m_output_stores(options.output_stores),
          m_prefetch_bytes(options.prefetch_bytes),
          m_numbering(options.positions) {
        if (m_embedding.d_model() != m_positions.d_model())
            detail::fail<shape_error>("token embedding width ", m_embedding.d_model(),
                                      " differs from position width ", m_positions.d_model());
    }

    /// @brief Width of an output row.
    /// @return d_model, the same for the embedding and the positions.
    Index d_model() const noexcept { return m_embedding.d_model(); }
    /// @brief The token table.
    /// @return the embedding this pipeline holds (its scale applies to every lookup).
    const Embedding& embedding() const noexcept { return m_embedding; }
    /// @brief The positional stage.
    /// @return the positional encoding this pipeline holds.
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

    /// @brief Adds a token-type (segment) stage: row token_types(b, t) of `types` is added to
    ///        each token's embedding, before its position (BERT's order). Without token types
    ///        given to forward(), every token reads row 0, as Hugging Face's models default to.
    /// @param types a type_vocab_size x d_model table.
    /// @throws shape_error if its width differs from the pipeline's (the pipeline is unchanged).
    void set_token_types(TokenTypeEmbedding<Scalar> types) {
        if (types.d_model() != d_model())
            detail::fail<shape_error>("token type width ", types.d_model(), " differs from the pipeline's ", d_model());
        m_types = std::move(types);
    }
    /// @brief The token-type stage.
    /// @return the table, or null when the pipeline has none.
    const TokenTypeEmbedding<Scalar>* token_types() const noexcept { return m_types ? &*m_types : nullptr; }

    /// @brief Adds a LayerNorm after the sum of embedding, token type and position, before
    ///        dropout (as BERT, RoBERTa, ELECTRA and BART apply it).
    /// @param norm a LayerNorm of the pipeline's width.
    /// @throws shape_error if its width differs from the pipeline's (the pipeline is unchanged).
    void set_layer_norm(LayerNorm<Scalar> norm) {
        if (norm.d_model() != d_model())
            detail::fail<shape_error>("LayerNorm width ", norm.d_model(), " differs from the pipeline's ", d_model());
        m_norm = std::move(norm);
    }
    /// @brief The LayerNorm stage.
    /// @return the LayerNorm, or null when the pipeline has none.
    const LayerNorm<Scalar>* layer_norm() const noexcept { return m_norm ? &*m_norm : nullptr; }

    /// @brief Embeds a batch into a new (batch * seq) x d_model matrix.
    /// @param ids batch x seq token ids (int64 or int32, any layout; viewed).
    /// @param padding which tokens are real (default: all).
    /// @param offsets added to the positions (tokens already decoded): one for all sequences,
    ///        or one per sequence.
    /// @return a (batch * seq) x d_model matrix, row b * seq + t for token (b, t).
    /// @throws as forward_into.
    RowMatrix<Scalar> forward(const TokenIds& ids, const Padding& padding = Padding::none(),
                              const StepOffsets& offsets = {}) const {
        check(ids, padding, offsets, nullptr);
        RowMatrix<Scalar> out = detail::new_output<Scalar>(ids.size(), d_model());
        write(ids, padding, out, offsets, nullptr);
        return out;
    }

    /// @brief Embeds a batch with its token types (segment ids) into a new matrix.
    /// @param ids batch x seq token ids (int64 or int32, any layout; viewed).
    /// @param token_types batch x seq type ids, as a tokenizer's `token_type_ids`.
    /// @param padding which tokens are real (default: all).
    /// @param offsets added to the positions: one for all sequences, or one per sequence.
    /// @return a (batch * seq) x d_model matrix, row b * seq + t for token (b, t).
    /// @throws as forward_into.
    RowMatrix<Scalar> forward(const TokenIds& ids, const TokenIds& token_types, const Padding& padding = Padding::none(),
                              const StepOffsets& offsets = {}) const {
        check(ids, padding, offsets, &token_types);
        RowMatrix<Scalar> out = detail::new_output<Scalar>(ids.size(), d_model());
        write(ids, padding, out, offsets, &token_types);
        return out;
    }

    /// @brief As forward with token types, into caller memory without allocating; everything is
    ///        checked before the first write.
    /// @param ids batch x seq token ids.
    /// @param token_types batch x seq type ids.
    /// @param padding which tokens are real.
    /// @param out (batch * seq) x d_model.
    /// @param offsets added to the positions.
    /// @throws as the overload without types; also shape_error for token_types of another shape
    ///         than ids, value_error when the pipeline has no token-type stage, index_error for
    ///         a real token's type id outside the table.
    void forward_into(const TokenIds& ids, const TokenIds& token_types, const Padding& padding,
                      Eigen::Ref<RowMatrix<Scalar>> out, const StepOffsets& offsets = {}) const {
        detail::require_shape("output of InputPipeline::forward_into", out.rows(), out.cols(),
                              ids.size(), d_model());
        check(ids, padding, offsets, &token_types);
        write(ids, padding, out, offsets, &token_types);
    }

    /// @brief As forward with every token real, into caller memory.
    /// @param ids batch x seq token ids.
    /// @param out (batch * seq) x d_model.
    /// @throws as the full overload.
    void forward_into(const TokenIds& ids, Eigen::Ref<RowMatrix<Scalar>> out) const {
        forward_into(ids, Padding::none(), out);
    }

    /// @brief Embeds a batch into caller memory without allocating. Everything is checked
    ///        before the first write, so on an error out is untouched.
    /// @param ids batch x seq token ids.
    /// @param padding which tokens are real.
    /// @param out (batch * seq) x d_model.
    /// @param offsets added to the positions: one for all sequences, or one per sequence.
    /// @throws shape_error for out, padding or offsets of the wrong shape; value_error for a bad
    ///         length; index_error for a real token's id outside the vocabulary or a position
    ///         past the table.
    void forward_into(const TokenIds& ids, const Padding& padding, Eigen::Ref<RowMatrix<Scalar>> out,
                      const StepOffsets& offsets = {}) const {
        detail::require_shape("output of InputPipeline::forward_into", out.rows(), out.cols(),
                              ids.size(), d_model());
        check(ids, padding, offsets, nullptr);
        write(ids, padding, out, offsets, nullptr);
    }

private:
    /// The type of the token table's values (Scalar, or bfloat16 or half for float).
    using Storage = typename Embedding::StorageType;

    // Below this many output elements a second thread costs more than it saves.
    static constexpr Index elements_per_extra_worker = Index{1} << 18;

    /// Every check, before anything is written: the padding and offsets fit, every real token's
    /// id is in the vocabulary, every sequence's positions are in the positional stage.
    void check(const TokenIds& ids, const Padding& padding, const StepOffsets& offsets,
               const TokenIds* types) const {
        padding.require_fits(ids);
        offsets.require_fits(ids.rows());
        if (types != nullptr) {
            if (!m_types)
                detail::fail<value_error>("token type ids were given, but the pipeline has no token type "
                                          "table (set_token_types)");
            detail::require_shape("token type ids", types->rows(), types->cols(), ids.rows(), ids.cols());
        }
        const Index vocab_size = m_embedding.vocab_size();
        for (Index b = 0; b < ids.rows(); ++b) {
            std::int64_t real = 0;
            padding.for_each_token(ids, b, b + 1, [&](Index, Index t, std::int64_t token_index) {
                if (token_index < 0) return;
                detail::require_token_id(ids(b, t), vocab_size, b, t);
                if (types != nullptr) m_types->require_type_id((*types)(b, t), b, t);
                real = position_number(t, token_index) + 1;
            });
            if (real > 0) detail::StageAccess::require_positions(m_positions, offsets.of(b), static_cast<Index>(real));
        }
    }

    /// The checked forward: sequences shared between workers, each writing its own rows.
    void write(const TokenIds& ids, const Padding& padding, Eigen::Ref<RowMatrix<Scalar>> out,
               const StepOffsets& offsets, const TokenIds* types) const {
        if (ids.size() == 0) return;
        const Index workers = worker_count(ids);
        std::vector<std::thread> helpers;
#if !defined(_OPENMP)  // OpenMP brings its own pool
        if (workers > 1) helpers.reserve(static_cast<std::size_t>(workers - 1));  // may throw: before any effect
#endif
        detail::RowJob<Scalar> job = m_norm ? m_norm->row_job() : detail::RowJob<Scalar>{};
        job.width = d_model();
        job.scale = m_embedding.scale();
        job.streaming = streams(out.size());
        job.dropping = m_dropout.is_active();
        if (job.dropping) {
            job.key = {m_dropout.seed(), detail::StageAccess::take_call(m_dropout),
                       detail::DrawThreshold::of(m_dropout.threshold())};
            job.keep_scale = m_dropout.template keep_scale<Scalar>();
        }
        // Sequences are split evenly between the workers; each element's dropout draw depends on
        // its index only, so the output is the same for any number of workers.
        const auto rows_of = [&](Index worker) { return ids.rows() * worker / workers; };
        const auto work = [&](Index worker) {
            write_rows(job, ids, types, padding, out, offsets, rows_of(worker), rows_of(worker + 1));
        };
#if defined(_OPENMP)
        if (workers > 1) {
#pragma omp parallel for num_threads(static_cast<int>(workers)) schedule(static)
            for (Index worker = 0; worker < workers; ++worker) work(worker);
            return;
        }
#endif
        for (Index worker = 1; worker < workers; ++worker) {
            // std::system_error or std::bad_alloc: no thread to be had, this thread does it too
            if (!detail::attempt_succeeds([&] { helpers.emplace_back(work, worker); })) work(worker);
        }
        work(0);
        for (std::thread& helper : helpers) helper.join();
    }

    /// The rows of sequences first_row .. end_row - 1, through one pass of the row kernel. A
    /// position row past a sinusoidal table is computed into its output row first, which the
    /// kernel then reads as the position to add.
    void write_rows(const detail::RowJob<Scalar>& job, const TokenIds& ids, const TokenIds* types, const Padding& padding,
                    Eigen::Ref<RowMatrix<Scalar>>& out, const StepOffsets& offsets, Index first_row,
                    Index end_row) const {
        if (first_row >= end_row) return;
        const Index width = d_model();
        const Index seq = ids.cols();
        const Index vocab_size = m_embedding.vocab_size();
        const Index ahead = detail::rows_ahead(m_prefetch_bytes, sizeof(Storage) * static_cast<std::size_t>(width));
        // The token `ahead` tokens after the current one, in this worker's sequences.
        Index ahead_b = first_row + ahead / seq;
        Index ahead_t = ahead % seq;
        detail::RowPass<Scalar, Storage> pass(job);
        padding.for_each_token(ids, first_row, end_row, [&](Index b, Index t, std::int64_t token_index) {
            const Index row = b * seq + t;
            Scalar* out_row = out.row(row).data();
            const Storage* next = nullptr;
            if (ahead > 0) {
                if (ahead_b < end_row) {
                    const TokenId id = ids(ahead_b, ahead_t);
                    if (id >= 0 && id < vocab_size) next = detail::StageAccess::table_row(m_embedding, id);
                }
                if (++ahead_t == seq) {
                    ahead_t = 0;
                    ++ahead_b;
                }
            }
            const auto first_element = static_cast<std::uint64_t>(row) * static_cast<std::uint64_t>(width);
            if (token_index < 0) {
                pass.add({out_row, nullptr, nullptr, first_element}, next);
                return;
            }
            const Scalar* position =
                detail::StageAccess::position_row(m_positions, offsets.of(b) + position_number(t, token_index), out_row);
            const Scalar* type = m_types ? m_types->row(types != nullptr ? (*types)(b, t) : 0) : nullptr;
            pass.add({out_row, detail::StageAccess::table_row(m_embedding, ids(b, t)), position, first_element, type},
                     next);
        });
        pass.finish();
    }

    /// The position of token t, the token_index-th real one of its sequence.
    std::int64_t position_number(Index t, std::int64_t token_index) const noexcept {
        return m_numbering == PositionNumbering::sequence_index ? static_cast<std::int64_t>(t) : token_index;
    }

    Index worker_count(const TokenIds& ids) const noexcept {
        const Index wanted = m_threads > 0 ? m_threads
                                           : std::max<Index>(1, static_cast<Index>(std::thread::hardware_concurrency()));
        const Index useful = std::max<Index>(1, ids.size() * d_model() / elements_per_extra_worker);
        return std::max<Index>(1, std::min({wanted, useful, ids.rows()}));
    }

    /// Whether an output of `elements` is written with streaming stores.
    bool streams(Index elements) const noexcept {
        switch (m_output_stores) {
            case OutputStores::cached: return false;
            case OutputStores::streaming: return true;
            case OutputStores::automatic: break;
        }
        return sizeof(Scalar) * static_cast<std::size_t>(elements) >= detail::streaming_threshold_bytes;
    }

    static Index checked_threads(int threads) {
        if (threads < 0) detail::fail<value_error>("threads must be 0 (all) or more, got ", threads);
        return threads;
    }

    Embedding m_embedding;
    Positional m_positions;
    std::optional<TokenTypeEmbedding<Scalar>> m_types;
    std::optional<LayerNorm<Scalar>> m_norm;
    Dropout m_dropout;
    Index m_threads;
    OutputStores m_output_stores;
    std::size_t m_prefetch_bytes;
    PositionNumbering m_numbering;
};

}  // namespace seqembed
