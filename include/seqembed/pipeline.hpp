/// @file pipeline.hpp
/// @brief InputPipeline: embeddings x scale + positions, then dropout, over a padded batch, in
///        one pass per row.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "batch.hpp"
#include "detail/backward.hpp"
#include "detail/checks.hpp"
#include "detail/optimizer_checks.hpp"
#include "detail/scratch_shelf.hpp"
#include "detail/engine/row_pass.hpp"
#include "detail/large_memory.hpp"
#include "detail/stage_access.hpp"
#include "detail/workers.hpp"
#include "dropout.hpp"
#include "error.hpp"
#include "gradients.hpp"
#include "isa.hpp"
#include "layer_norm.hpp"
#include "learned_positions.hpp"
#include "padding.hpp"
#include "sinusoidal.hpp"
#include "token_embedding.hpp"
#include "token_types.hpp"
#include "trainable_table.hpp"
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

/// @brief Where a pipeline adds the token-type row.
enum class TokenTypeOrder {
    /// (token + type) + position: BERT, ELECTRA, RoBERTa.
    before_positions,
    /// (token + position) + type: GPT-2, which looks token types up in its token table and adds
    /// them after the positions.
    after_positions
};

/// @brief How an InputPipeline adds its token-type stage.
struct TokenTypeOptions {
    /// @brief Where the type row is added (the sums are rounded in that order).
    TokenTypeOrder order = TokenTypeOrder::before_positions;
    /// @brief Without token type ids: every token reads type row 0 (true: BERT's default of
    ///        zeros), or no type row is added (false: GPT-2, which adds wte(token_type_ids) only
    ///        when they are given).
    bool row_zero_by_default = true;
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
    /// @brief Which number a batch's tokens take in the positional stage. Unset: real_tokens for
    ///        a pipeline built by hand; a family loader (io::load_bert, ...) sets its family's
    ///        rule and refuses another.
    std::optional<PositionNumbering> positions = std::nullopt;
    /// @brief The padding token id that PositionNumbering::non_padding_ids skips (RoBERTa's
    ///        padding_idx); required by that numbering, unused by the others.
    std::optional<TokenId> padding_id = std::nullopt;
    /// @brief Zero rows for padded tokens (the default), or rows computed as the framework
    ///        computes them (PaddedRows::computed).
    PaddedRows padded_rows = PaddedRows::zero;
};

/// @brief The input stage of a transformer: for each real token, its embedding times the
///        embedding's scale plus the encoding of its position, then dropout in training.
///
/// ids are a batch x seq matrix; the output is (batch * seq) x d_model, row b * seq + t for
/// token (b, t). A Batch holds the ids with what a framework's forward takes beside them (token
/// types, an attention mask over the current or past + current tokens, step offsets, explicit
/// position ids). Each token's position is given by PipelineOptions::positions (the number of
/// real tokens before it, so that left and right padding give the same positions; its index
/// after the past tokens; or RoBERTa's count of non-padding ids), or by the position ids; padded
/// rows are zero, or computed as the framework computes them (PipelineOptions::padded_rows).
/// forward and forward_into are const and safe to call from several threads at once.
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
          m_numbering(options.positions.value_or(PositionNumbering::real_tokens)),
          m_padding_id(options.padding_id.value_or(0)),
          m_padded_rows(options.padded_rows) {
        if (m_embedding.d_model() != m_positions.d_model())
            detail::fail<shape_error>("token embedding width ", m_embedding.d_model(),
                                      " differs from position width ", m_positions.d_model());
        if (m_numbering == PositionNumbering::non_padding_ids && !options.padding_id)
            detail::fail<value_error>("PositionNumbering::non_padding_ids needs PipelineOptions::padding_id");
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
    /// @brief How tokens are numbered when no position ids are given.
    /// @return the numbering of the options (real_tokens when they left it unset).
    PositionNumbering numbering() const noexcept { return m_numbering; }
    /// @brief The padding id non_padding_ids numbering skips.
    /// @return PipelineOptions::padding_id, 0 when unset.
    TokenId padding_id() const noexcept { return m_padding_id; }
    /// @brief How padded tokens' rows are written.
    /// @return PaddedRows::zero or PaddedRows::computed.
    PaddedRows padded_rows() const noexcept { return m_padded_rows; }
    /// @brief Training mode applies dropout; evaluation mode does not.
    /// @param training the new mode.
    void set_training(bool training) noexcept { m_dropout.set_training(training); }

    /// @brief Adds a token-type (segment) stage: row token_types(b, t) of `types` is added to
    ///        each token's embedding, before its position (BERT's order) or after it (GPT-2's).
    ///        Without token types given to forward(), every token reads row 0, as Hugging Face's
    ///        BERT-like models default to, or none (options.row_zero_by_default).
    /// @param types a type_vocab_size x d_model table (GPT-2: a view of its token table).
    /// @param options where the type row is added, and what without type ids.
    /// @throws shape_error if its width differs from the pipeline's (the pipeline is unchanged).
    void set_token_types(TokenTypeEmbedding<Scalar> types, const TokenTypeOptions& options = {}) {
        if (types.d_model() != d_model())
            detail::fail<shape_error>("token type width ", types.d_model(), " differs from the pipeline's ", d_model());
        m_types = std::move(types);
        m_type_options = options;
    }
    /// @brief How the token-type row is added.
    /// @return the options given to set_token_types (the defaults without a table).
    const TokenTypeOptions& token_type_options() const noexcept { return m_type_options; }
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

    /// @brief Embeds a batch, as a forward with these keyword arguments, into a new matrix.
    /// @param batch the ids and what goes with them: token types, padding (an attention mask of
    ///        the ids' shape or over past + current tokens), step offsets, explicit position ids.
    /// @return a (batch * seq) x d_model matrix, row b * seq + t for token (b, t).
    /// @throws as forward_into.
    RowMatrix<Scalar> forward(const Batch& batch) const {
        require_whole_vocabulary("InputPipeline::forward");
        check(batch);
        RowMatrix<Scalar> out = detail::new_output<Scalar>(batch.ids.size(), d_model());
        write(batch, out);
        return out;
    }

    /// @brief As forward(batch), into caller memory without allocating. Everything is checked
    ///        before the first write, so on an error out is untouched.
    /// @param batch the ids and what goes with them.
    /// @param out (batch * seq) x d_model.
    /// @return the dropout call this forward took, to give to backward; none in evaluation
    ///         mode (or with p = 0, or for an empty batch), when backward takes none.
    /// @throws shape_error for out, padding, offsets, token types or position ids of the wrong
    ///         shape; value_error for a bad length, token types given to a pipeline without a
    ///         token-type table, or position ids given with step offsets; index_error for an id
    ///         of a token to be written outside the vocabulary, a type id outside the table, or a
    ///         position the positional stage has no row for.
    std::optional<std::uint64_t> forward_into(const Batch& batch, Eigen::Ref<RowMatrix<Scalar>> out) const {
        detail::require_shape("output of InputPipeline::forward_into", out.rows(), out.cols(), batch.ids.size(),
                              d_model());
        require_whole_vocabulary("InputPipeline::forward_into");
        check(batch);
        return write(batch, out);
    }

    /// @brief Checks a batch as forward_into does before it writes, writing nothing.
    /// @param batch the ids and what goes with them.
    /// @throws as forward_into for the batch (not for the output, nor for a shard).
    void check_forward(const Batch& batch) const { check(batch); }

    /// @brief A vocabulary shard's part of the forward (its token table holds part of the
    ///        vocabulary, TokenEmbeddingOptions::shard): each token's row of the shard's table
    ///        times the scale, -0.0 for an id another shard holds, +0.0 for a padded row (with
    ///        PaddedRows::zero). Summed over the shards of the vocabulary (an all-reduce), these
    ///        are the token rows of the whole table; finish_forward_into then adds the rest.
    ///        Everything is checked first, for the whole vocabulary, so every rank throws
    ///        alike. seqembed/mpi.hpp runs the three steps over MPI.
    /// @param batch the ids and what goes with them (the same on every rank).
    /// @param out (batch * seq) x d_model.
    /// @throws as forward_into; value_error for a pipeline whose token-type table reads the
    ///         token table (GPT-2's), which shard mode does not support.
    void partial_forward_into(const Batch& batch, Eigen::Ref<RowMatrix<Scalar>> out) const {
        detail::require_shape("output of InputPipeline::partial_forward_into", out.rows(), out.cols(),
                              batch.ids.size(), d_model());
        require_shardable();
        check(batch);
        if (batch.ids.size() == 0) return;
        static_cast<void>(active_isa());  // a bad SEQEMBED_ISA throws here, not in a helper thread
        std::vector<std::thread> helpers = detail::reserved_helpers(worker_count(batch.ids));
        detail::RowJob<Scalar> job;
        job.width = d_model();
        job.scale = m_embedding.scale();
        job.streaming = streams(out.size());
        run<RowPart::tokens>(job, batch, out, helpers);
    }

    /// @brief The rest of a sharded forward, after the shards' partial_forward_into outputs
    ///        were summed: adds each row's token type and position, applies LayerNorm and, in
    ///        training, dropout (this pipeline's next call: every rank takes the same), in place.
    ///        The result is forward()'s of the whole table, bit for bit. `out` may hold a slice
    ///        of the output's rows (a reduce-scatter's), from row first_row on; dropout's mask is
    ///        indexed by the whole output's elements, so the slices make the whole mask.
    /// @param batch the forward's batch.
    /// @param out rows [first_row, first_row + out.rows()) of the summed output, d_model wide.
    /// @param first_row the output row out's first row is.
    /// @return the dropout call this forward took, to give to backward; none in evaluation
    ///         mode (or with p = 0, or for an empty batch).
    /// @throws as partial_forward_into; shape_error for rows outside the output or another
    ///         width.
    std::optional<std::uint64_t> finish_forward_into(const Batch& batch, Eigen::Ref<RowMatrix<Scalar>> out,
                                                     Index first_row = 0) const {
        if (out.cols() != d_model() || first_row < 0 || out.rows() > batch.ids.size() ||
            first_row > batch.ids.size() - out.rows())
            detail::fail<shape_error>("output of InputPipeline::finish_forward_into: rows [", first_row, ", ",
                                      first_row, " + ", out.rows(), ") x ", out.cols(), " are not rows of the ",
                                      batch.ids.size(), " x ", d_model(), " output");
        require_shardable();
        check(batch);
        if (batch.ids.size() == 0) return std::nullopt;
        static_cast<void>(active_isa());
        const Index seq = batch.ids.cols();
        const Index first_sequence = first_row / seq;
        const Index end_sequence = out.rows() == 0 ? first_sequence : (first_row + out.rows() + seq - 1) / seq;
        const Index workers = std::max<Index>(
            1, std::min({worker_count(batch.ids), end_sequence - first_sequence,
                         std::max<Index>(1, out.size() / elements_per_extra_worker)}));
        std::vector<std::thread> helpers = detail::reserved_helpers(workers);
        const detail::RowJob<Scalar> job = forward_job(Scalar(1), out.size());  // x * 1 is x: the sums pass unchanged
        const Index sequences = end_sequence - first_sequence;
        detail::run_workers(workers, helpers, [&](Index worker) {
            write_rows<RowPart::rest>(job, batch, out, first_sequence + detail::share_start(sequences, worker, workers),
                                      first_sequence + detail::share_start(sequences, worker + 1, workers), first_row);
        });
        return job.dropping ? std::optional<std::uint64_t>(job.key.call) : std::nullopt;
    }

    /// @brief Embeds a batch into a new (batch * seq) x d_model matrix.
    /// @param ids batch x seq token ids (int64 or int32, any layout; viewed).
    /// @param padding which tokens are real (default: all).
    /// @param offsets added to the positions (tokens already decoded): one for all sequences,
    ///        or one per sequence.
    /// @return a (batch * seq) x d_model matrix, row b * seq + t for token (b, t).
    /// @throws as forward_into.
    RowMatrix<Scalar> forward(const TokenIds& ids, const Padding& padding = Padding::none(),
                              const StepOffsets& offsets = {}) const {
        return forward(batch_of(ids, nullptr, padding, offsets));
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
        return forward(batch_of(ids, &token_types, padding, offsets));
    }

    /// @brief As forward with token types, into caller memory without allocating; everything is
    ///        checked before the first write.
    /// @param ids batch x seq token ids.
    /// @param token_types batch x seq type ids.
    /// @param padding which tokens are real.
    /// @param out (batch * seq) x d_model.
    /// @param offsets added to the positions.
    /// @return the dropout call this forward took, to give to backward; none in evaluation
    ///         mode (or with p = 0, or for an empty batch), when backward takes none.
    /// @throws as forward_into(batch, out).
    std::optional<std::uint64_t> forward_into(const TokenIds& ids, const TokenIds& token_types, const Padding& padding,
                                              Eigen::Ref<RowMatrix<Scalar>> out, const StepOffsets& offsets = {}) const {
        return forward_into(batch_of(ids, &token_types, padding, offsets), out);
    }

    /// @brief As forward with every token real, into caller memory.
    /// @param ids batch x seq token ids.
    /// @param out (batch * seq) x d_model.
    /// @return the dropout call this forward took, to give to backward; none in evaluation
    ///         mode (or with p = 0, or for an empty batch), when backward takes none.
    /// @throws as forward_into(batch, out).
    std::optional<std::uint64_t> forward_into(const TokenIds& ids, Eigen::Ref<RowMatrix<Scalar>> out) const {
        return forward_into(Batch(ids), out);
    }

    /// @brief Embeds a batch into caller memory without allocating. Everything is checked
    ///        before the first write, so on an error out is untouched.
    /// @param ids batch x seq token ids.
    /// @param padding which tokens are real.
    /// @param out (batch * seq) x d_model.
    /// @param offsets added to the positions: one for all sequences, or one per sequence.
    /// @return the dropout call this forward took, to give to backward; none in evaluation
    ///         mode (or with p = 0, or for an empty batch), when backward takes none.
    /// @throws as forward_into(batch, out).
    std::optional<std::uint64_t> forward_into(const TokenIds& ids, const Padding& padding,
                                              Eigen::Ref<RowMatrix<Scalar>> out, const StepOffsets& offsets = {}) const {
        return forward_into(batch_of(ids, nullptr, padding, offsets), out);
    }

    /// @brief The gradients of the tables a forward read, from the gradient of its output: the
    ///        backward of the sum (token row x scale, token type, position), LayerNorm and
    ///        dropout, as PyTorch's autograd gives them for the same stages.
    ///
    /// The batch is the forward's, with the same padding, offsets, token types and position ids.
    /// Padded tokens' rows receive no gradient when they are zero (PaddedRows::zero); computed
    /// rows (PaddedRows::computed) pass theirs on as the framework's do. The token table's row
    /// TokenEmbeddingOptions::padding_idx and a learned position table's row
    /// LearnedPositionsOptions::padding_idx, when set, receive none (nn.Embedding's). Each
    /// table row's gradient sums the rows that read it in order of output row, in double for a
    /// float pipeline, so the result does not depend on the thread count.
    /// @param batch the forward's batch.
    /// @param grad_output (batch * seq) x d_model: the gradient of the forward's output.
    /// @param call the dropout call of a training forward (dropout().calls() before that
    ///        forward), whose mask the gradient passes through; none for a forward in evaluation
    ///        mode.
    /// @return the gradients (PipelineGradients: row-sparse tables, LayerNorm's vectors).
    /// @throws as forward_into for the batch; shape_error for grad_output of the wrong shape;
    ///         value_error for a call number this pipeline's dropout has not used yet. With
    ///         LayerNorm, whose backward recomputes its input from the tables as they are now,
    ///         run the backward before a step changes them: nothing can tell a table written
    ///         since the forward.
    PipelineGradients<Scalar> backward(const Batch& batch, const Eigen::Ref<const RowMatrix<Scalar>>& grad_output,
                                       std::optional<std::uint64_t> call = std::nullopt) const {
        check_backward(batch, grad_output, call);
        return gradients_of(batch, grad_output, call);
    }

    /// @brief A vocabulary shard's part of the backward of a sharded forward
    ///        (partial_forward_into, the sum over the shards, finish_forward_into): the token
    ///        table's gradient for the ids this shard holds, by id (RowGradient::first_row is
    ///        embedding().shard().first), and the whole gradients of the other tables
    ///        (positions, token types, LayerNorm), which are the same on every shard for the same
    ///        grad_output. Together the shards' token gradients are backward()'s of the whole
    ///        table, row for row and bit for bit; the others are backward()'s. An optimizer
    ///        built for the shard's rows steps them through trainable().token, whose rows are the
    ///        shard's.
    ///        seqembed/mpi.hpp runs it over MPI.
    /// @param batch the forward's batch.
    /// @param grad_output (batch * seq) x d_model: the gradient of the whole output.
    /// @param call the dropout call of a training forward, or none.
    /// @param token_rows the sum of the shards' partial_forward_into outputs for the batch,
    ///        (batch * seq) x d_model: the input LayerNorm's backward needs is these rows plus
    ///        types and positions. Read only when the pipeline has a LayerNorm; without one it
    ///        may be empty (0 x 0).
    /// @return the gradients; `token` is of a table of embedding().table().rows() rows, from id
    ///         embedding().shard().first.
    /// @throws as backward (for a shard too); shape_error for token_rows of the wrong shape;
    ///         value_error for a token-type table that reads the token table (GPT-2's).
    PipelineGradients<Scalar> partial_backward(const Batch& batch, const Eigen::Ref<const RowMatrix<Scalar>>& grad_output,
                                               std::optional<std::uint64_t> call,
                                               const Eigen::Ref<const RowMatrix<Scalar>>& token_rows) const {
        require_shardable();
        check_gradient(batch, grad_output, call);
        if (m_norm || token_rows.size() != 0)
            detail::require_shape("token rows of InputPipeline::partial_backward", token_rows.rows(), token_rows.cols(),
                                  batch.ids.size(), d_model());
        PipelineGradients<Scalar> gradients = gradients_of(batch, grad_output, call, &token_rows);
        RowGradient<Scalar>& token = gradients.token;
        token.first_row = m_embedding.shard().first;
        for (std::int64_t& row : token.rows) row += token.first_row;
        return gradients;
    }

    /// @brief As backward, adding the gradients into `gradients` (accumulation over several
    ///        batches before an optimizer step). Everything is checked first: on an error
    ///        `gradients` is unchanged.
    /// @param batch the forward's batch.
    /// @param grad_output (batch * seq) x d_model.
    /// @param call the dropout call of a training forward, or none.
    /// @param gradients the sums so far (default-constructed for none).
    /// @throws as backward; shape_error if `gradients` holds another pipeline's shapes.
    void backward_into(const Batch& batch, const Eigen::Ref<const RowMatrix<Scalar>>& grad_output,
                       std::optional<std::uint64_t> call, PipelineGradients<Scalar>& gradients) const {
        check_backward(batch, grad_output, call);
        gradients.add(gradients_of(batch, grad_output, call));
    }

    /// @brief The backward fused with a lazy optimizer's step on the token table, as FBGEMM's
    ///        table-batched embeddings train: each touched row's gradient is summed and stepped
    ///        at once, so the token table's gradient is never stored. The table and the
    ///        optimizer end as backward() then optimizer.step(trainable().token->weights,
    ///        gradients.token, lr) leave them, bit for bit. A bfloat16 or half table steps its
    ///        master weights, and the rows it stepped are stored back into the table, rounded
    ///        (round_master_rows), as mixed-precision training does after each step.
    /// @tparam LazyOptimizer optim::LazySgd, optim::RowwiseAdagrad or optim::SparseAdam.
    /// @param batch the forward's batch.
    /// @param grad_output (batch * seq) x d_model.
    /// @param call the dropout call of a training forward, or none.
    /// @param token_optimizer the token table's optimizer.
    /// @param lr the learning rate of the step.
    /// @return the gradients of the other tables (the token table's is empty: it went into the
    ///         step).
    /// @throws as backward and as the optimizer's step. With the optimizer's check_finite (its
    ///         default), a NaN or infinite gradient is found before any row is written, and an
    ///         error leaves the table and the optimizer as they were.
    template <typename LazyOptimizer>
    PipelineGradients<Scalar> backward_step(const Batch& batch, const Eigen::Ref<const RowMatrix<Scalar>>& grad_output,
                                            std::optional<std::uint64_t> call, LazyOptimizer& token_optimizer,
                                            double lr) {
        check_backward(batch, grad_output, call);
        detail::require_learning_rate("token table", lr);
        TrainableTable<Scalar> table = trainable().token.value();
        // A narrow table made its own before the step, so that storing the stepped rows cannot fail.
        m_embedding.round_master_rows({});
        const bool finite = token_optimizer.options().check_finite;
        bool fused = false;
        PipelineGradients<Scalar> gradients = gradients_of(
            batch, grad_output, call, nullptr,
            [&](const detail::ReadPlan& plan, const std::vector<detail::RowRead<Scalar>>& reads,
                const detail::GradientRows<Scalar>& rows, const auto& run, const auto& bound_others) {
                // A NaN or infinity, or a sum that could round past the largest Scalar, or an
                // optimizer without step_spans: the unfused step below, whose scan names a bad
                // value before anything is written. The rows' bound comes from the other tables'
                // pass when it reads them all, else from a pass of its own.
                static_cast<void>(bound_others);
                if constexpr (detail::takes_spans<LazyOptimizer>) {
                    bool fuse = !finite;
                    if (finite) {
                        const std::optional<detail::RowsBound<Scalar>> others = bound_others();
                        fuse = fusable(others ? *others : bound_of(reads, rows), reads, plan, rows);
                    }
                    if (fuse) {
                        token_optimizer.step_spans(table.weights, plan.rows, lr, [&](const auto& step_span) {
                            const detail::SpanSink<Scalar, std::decay_t<decltype(step_span)>> sink(
                                step_span, detail::takes_whole_rows<LazyOptimizer>);
                            run(&sink);
                        });
                        m_embedding.round_master_rows(plan.rows);
                        fused = true;
                        return;
                    }
                }
                run(nullptr);
            });
        if (!fused) {
            token_optimizer.step(table.weights, gradients.token, lr);
            m_embedding.round_master_rows(gradients.token.rows);
        }
        gradients.token = empty_gradient(m_embedding.vocab_size());
        return gradients;
    }

    /// @brief Opens the pipeline's trainable tables for an optimizer step (PipelineTables): each
    ///        table a view, a file's mapping or shared with another pipeline or stage is copied
    ///        first (TrainableTable::copied says which), and the other holders keep the old
    ///        values. A token-type table viewing the token table (GPT-2's) is moved onto the
    ///        token table's copy, so the two stay tied. No forward may run meanwhile. The maps
    ///        stay valid until the pipeline is changed, copied (a copy shares the values written
    ///        through them: open the copy's tables to give it its own), moved or destroyed. A
    ///        bfloat16 or half token table opens as its float master weights
    ///        (TokenEmbedding::trainable_table); round_master_rows() stores a step's rows back.
    /// @return the writable tables.
    /// @throws value_error if a copy does not fit in memory (the values are then unchanged).
    PipelineTables<Scalar> trainable() {
        PipelineTables<Scalar> tables;
        const bool types_view_token = m_types && tied_type_row(0);
        tables.token = change_token_table([](Embedding& embedding) { return embedding.trainable_table(); });
        if constexpr (has_learned_positions) tables.positions = m_positions.trainable_table();
        if (m_types && !types_view_token) tables.token_types = m_types->trainable_table();
        if (m_norm) {
            tables.gamma = m_norm->trainable_gamma();
            tables.beta = m_norm->trainable_beta();
        }
        return tables;
    }

    /// @brief Ties this pipeline's token table to `other`'s for training, as an encoder and a
    ///        decoder holding one nn.Embedding (BART's, T5's and Marian's shared table, which
    ///        load_bart, load_t5 and load_marian give both stages as one shared, read-only
    ///        table): TokenEmbedding::tie_table. `other`'s table is opened (copied first if it
    ///        is a view, a mapping or shared); a step through either pipeline's
    ///        trainable().token is then read by both, and neither copies it again. Add the two
    ///        backwards' token gradients (RowGradient::add) and step once. backward_step steps
    ///        one pipeline's batch only. A copy of a tied pipeline copies the table, so that
    ///        later steps do not reach it.
    /// @tparam OtherPositional the other pipeline's positional stage.
    /// @param other a pipeline of the same Scalar and table type, whose table has the same
    ///        vocabulary, width and shard.
    /// @throws shape_error if the tables' shapes or shards differ; value_error for a token-type
    ///         table viewing either token table (GPT-2's), or if `other`'s copy does not fit in
    ///         memory. Either way, neither pipeline has changed.
    template <typename OtherPositional>
    void tie_token_table(InputPipeline<Scalar, OtherPositional, Embedding>& other) {
        if (static_cast<const void*>(&other) == static_cast<const void*>(this)) return;
        m_embedding.require_tieable(other.m_embedding, "tie_token_table");
        if ((m_types && tied_type_row(0)) || (other.m_types && other.tied_type_row(0)))
            detail::fail<value_error>("tie_token_table: a token-type table that views its pipeline's token table "
                                      "(GPT-2's) cannot be tied to another pipeline's");
        other.change_token_table([](Embedding& embedding) { return embedding.trainable_table(); });
        change_token_table([&other](Embedding& embedding) { embedding.tie_table(other.m_embedding); });
    }
    /// @brief Leaves the tie (tie_token_table) with a copy of the tied values
    ///        (TokenEmbedding::untie_table): the other pipeline's later steps no longer reach it.
    /// @throws value_error if the copy does not fit in memory (the pipeline is then unchanged).
    void untie_token_table() {
        change_token_table([](Embedding& embedding) { embedding.untie_table(); });
    }
    /// @brief Whether the token table is tied to another pipeline's (tie_token_table).
    /// @return TokenEmbedding::is_tied.
    bool token_table_tied() const noexcept { return m_embedding.is_tied(); }

    /// @brief After an optimizer step on a bfloat16 or half token table's master weights, stores
    ///        the rows it updated back into the table, rounded (TokenEmbedding::round_master_rows);
    ///        nothing for a float or double table, so a training loop may call it either way.
    /// @param rows the ids the step updated (a lazy step: its gradient's rows).
    /// @throws as TokenEmbedding::round_master_rows.
    void round_master_rows(const std::vector<std::int64_t>& rows) { m_embedding.round_master_rows(rows); }
    /// @brief As round_master_rows, every row (after a dense step).
    /// @throws as TokenEmbedding::round_master.
    void round_master() { m_embedding.round_master(); }

private:
    /// The type of the token table's values (Scalar, or bfloat16 or half for float).
    using Storage = typename Embedding::StorageType;

    // Below this many output elements a second thread costs more than it saves.
    static constexpr Index elements_per_extra_worker = Index{1} << 18;

    static Batch batch_of(const TokenIds& ids, const TokenIds* types, const Padding& padding,
                          const StepOffsets& offsets) {
        Batch batch(ids, padding, offsets);
        if (types != nullptr) batch.token_types = *types;
        return batch;
    }

    /// Throws for a token table that holds part of the vocabulary: `what` needs the whole.
    void require_whole_vocabulary(const char* what) const {
        if (m_embedding.is_shard())
            detail::fail<value_error>(what, ": the token table holds ids [", m_embedding.shard().first, ", ",
                                      m_embedding.shard().end(), ") of ", m_embedding.vocab_size(),
                                      " (a vocabulary shard): use partial_forward_into, sum the shards' outputs, "
                                      "then finish_forward_into (seqembed/mpi.hpp does it over MPI)");
    }

    /// Throws for a token-type table that views the token table (GPT-2's): its rows would be
    /// a shard's too, added after the positions.
    void require_shardable() const {
        if (m_types && tied_type_row(0))
            detail::fail<value_error>("shard mode: the token-type table reads the token table (GPT-2's), whose rows "
                                      "a shard holds only in part; shard mode does not support it");
    }

    /// Runs `change` on the token table (opening or tying it, which may move its values), keeping
    /// a token-type table that views it (GPT-2's) on the table's rows. Returns what `change` does.
    template <typename Change>
    auto change_token_table(Change change) {
        const std::optional<std::int64_t> tied = m_types ? tied_type_row(0) : std::nullopt;
        // A tied type table views the token table without holding it (the pipeline's embedding
        // does), so that it does not count as another holder of the table.
        const auto view_types = [&](const Scalar* row) {
            m_types = TokenTypeEmbedding<Scalar>::view(row, m_types->type_vocab_size(), d_model());
        };
        const auto view_table = [&] {
            if constexpr (std::is_same_v<Storage, Scalar>)  // tied_type_row finds none otherwise
                if (tied) view_types(m_embedding.table().row(static_cast<Index>(*tied)).data());
        };
        if (tied) view_types(detail::StageAccess::type_row(*m_types, 0));
        if constexpr (std::is_void_v<decltype(change(m_embedding))>) {
            change(m_embedding);
            view_table();
        } else {
            auto result = change(m_embedding);
            view_table();
            return result;
        }
    }

    /// Every check, before anything is written: the inputs fit, every id and type id of a token
    /// to be written is in its table, every sequence's positions are in the positional stage.
    void check(const Batch& batch) const {
        detail::require_batch_fits(batch);
        if (batch.token_types && !m_types)
            detail::fail<value_error>("token type ids were given, but the pipeline has no token type "
                                      "table (set_token_types)");
        const Index vocab_size = m_embedding.vocab_size();
        const bool padded_too = m_padded_rows == PaddedRows::computed;
        // Per sequence, the range of numbered positions and that of positions that may read a
        // learned table's rows before its offset (position ids, a padded token's -1).
        struct Range {
            std::int64_t lowest = std::numeric_limits<std::int64_t>::max();
            std::int64_t highest = std::numeric_limits<std::int64_t>::min();
            void add(std::int64_t position) noexcept {
                lowest = std::min(lowest, position);
                highest = std::max(highest, position);
            }
        };
        Range numbered;
        Range before_offset;
        Index row = -1;
        const auto require_ranges = [&] {
            const auto require = [&](const Range& range, auto&& require_positions) {
                if (range.highest < range.lowest) return;
                const auto span = static_cast<std::uint64_t>(range.highest) - static_cast<std::uint64_t>(range.lowest);
                if (span < static_cast<std::uint64_t>(std::numeric_limits<Index>::max())) {
                    require_positions(range.lowest, static_cast<Index>(span) + 1);
                } else {
                    require_positions(range.lowest, 1);
                    require_positions(range.highest, 1);
                }
            };
            require(numbered, [&](std::int64_t first, Index count) {
                detail::StageAccess::require_positions(m_positions, first, count);
            });
            require(before_offset, [&](std::int64_t first, Index count) {
                detail::run_renaming_error<index_error, index_error>(
                    [&] { detail::StageAccess::require_positions_before_offset(m_positions, first, count); },
                    "position ids of sequence ", row, ": ");
            });
        };
        detail::for_each_position(batch, m_numbering, m_padding_id, 0, batch.ids.rows(),
                                  [&](Index b, Index t, bool real, std::int64_t position, bool may_precede) {
                                      if (b != row) {
                                          require_ranges();
                                          row = b;
                                          numbered = before_offset = Range{};
                                      }
                                      if (!real && !padded_too) return;
                                      detail::require_token_id(batch.ids(b, t), vocab_size, b, t);
                                      if (batch.token_types) m_types->require_type_id((*batch.token_types)(b, t), b, t);
                                      if (may_precede && !batch.position_ids) {
                                          require_numbered_minus_one(real, b, t);
                                          return;
                                      }
                                      (may_precede ? before_offset : numbered).add(position);
                                  });
        require_ranges();
    }

    /// Throws unless the positional stage has a row for the position -1 the numbering gives a
    /// padded token (or, under non_padding_ids, a padding id), naming the token.
    void require_numbered_minus_one(bool real, Index b, Index t) const {
        detail::run_renaming_error<index_error, index_error>(
            [&] { detail::StageAccess::require_positions_before_offset(m_positions, -1, 1); },
            real ? "token" : "padded token", " (batch ", b, ", position ", t, ") takes position -1 under ",
            detail::numbering_name(m_numbering), real ? "" : " (PaddedRows::computed)",
            ", for which the positional stage has no row: ");
    }

    /// The checks of a backward: the batch as a forward's, grad_output's shape, the call number.
    void check_backward(const Batch& batch, const Eigen::Ref<const RowMatrix<Scalar>>& grad_output,
                        std::optional<std::uint64_t> call) const {
        require_whole_vocabulary("InputPipeline's backward");
        check_gradient(batch, grad_output, call);
    }

    /// The checks of a backward's inputs other than the vocabulary's.
    void check_gradient(const Batch& batch, const Eigen::Ref<const RowMatrix<Scalar>>& grad_output,
                        std::optional<std::uint64_t> call) const {
        detail::require_shape("gradient of InputPipeline's output", grad_output.rows(), grad_output.cols(),
                              batch.ids.size(), d_model());
        check(batch);
        // GCC 12 reports the payload of a disengaged call, passed down through std::visit, as
        // maybe uninitialized (a false positive: it is read only when engaged).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
        if (call && *call >= m_dropout.calls())
            detail::fail<value_error>("dropout call ", *call, " was never used: this pipeline's forwards have used calls "
                                      "below ", m_dropout.calls());
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    }

    /// The backward of a checked batch: the gradient through dropout and LayerNorm for each row
    /// that has one, then each table's rows summed from the rows that read them, in one pass.
    /// `token_step`, when given, is called as token_step(plan, reads, rows, run, bound_others)
    /// with the token table's plan, its reads and the rows the pass reads, and must call
    /// run(sink) once: the other tables' pass, then the token table's rows in ascending order,
    /// each gathered from its reads and handed span by span to the RowSink `sink`
    /// (step_gathered_rows); or, when sink is null, the token table's gradient summed into the
    /// gradients (with the other tables, in one pass, unless already summed). It may call
    /// bound_others() once before: the other tables' pass, at once, returning the RowsBound of
    /// every row the token table reads when that pass reads them all (a learned position
    /// table's does), else nothing and no pass. With
    /// `token_rows` (a shard's backward), the token reads are the shard's, by row of its table,
    /// and LayerNorm's input is built on those rows.
    template <typename TokenStep = std::nullptr_t>
    PipelineGradients<Scalar> gradients_of(const Batch& batch, const Eigen::Ref<const RowMatrix<Scalar>>& grad_output,
                                           std::optional<std::uint64_t> call,
                                           const Eigen::Ref<const RowMatrix<Scalar>>* token_rows = nullptr,
                                           const TokenStep& token_step = nullptr) const {
        const TokenIds& ids = batch.ids;
        const Index width = d_model();
        const Index seq = ids.cols();
        const bool padded_too = m_padded_rows == PaddedRows::computed;
        const Index workers = worker_count(ids);
        static_cast<void>(active_isa());  // a bad SEQEMBED_ISA throws here, not in a helper thread
        std::vector<std::thread> helpers = detail::reserved_helpers(workers);
        // Shares [0, count) between the workers; f(begin, end) must not throw.
        const auto parallel = [&](Index count, const auto& f) {
            const Index used = std::max<Index>(1, std::min(workers, count));
            detail::run_workers(used, helpers, [&](Index worker) {
                f(detail::share_start(count, worker, used), detail::share_start(count, worker + 1, used));
            });
        };
        PipelineGradients<Scalar> gradients;
        gradients.token = empty_gradient(m_embedding.table().rows());
        if constexpr (has_learned_positions)
            gradients.positions = empty_gradient(m_positions.max_positions());
        if (m_types && !tied_type_row(0)) gradients.token_types = empty_gradient(m_types->type_vocab_size());

        // Which table rows each output row read, and (for LayerNorm's backward) the output rows
        // that pass a gradient on.
        std::vector<detail::RowRead<Scalar>> token_reads;
        std::vector<detail::RowRead<Scalar>> position_reads;
        std::vector<detail::RowRead<Scalar>> type_reads;
        std::vector<Index> written;
        token_reads.reserve(static_cast<std::size_t>(ids.size()));
        if constexpr (has_learned_positions) position_reads.reserve(static_cast<std::size_t>(ids.size()));
        if (m_norm) written.reserve(static_cast<std::size_t>(ids.size()));
        const TokenId no_gradient_id = m_embedding.padding_idx().value_or(-1);
        [[maybe_unused]] std::int64_t no_gradient_position = -1;
        if constexpr (has_learned_positions) no_gradient_position = m_positions.padding_idx().value_or(-1);
        bool position_skipped = false;  // a row read no position row's gradient
        const VocabularyShard& shard = m_embedding.shard();
        detail::for_each_position(batch, m_numbering, m_padding_id, 0, ids.rows(),
                                  [&](Index b, Index t, bool real, std::int64_t position) {
            if (!real && !padded_too) return;
            const Index row = b * seq + t;
            if (m_norm) written.push_back(row);
            const TokenId id = ids(b, t);
            if (id != no_gradient_id && shard.holds(id))
                token_reads.push_back({id - shard.first, row, m_embedding.scale()});
            if (m_types) {
                std::optional<TokenId> type;
                if (batch.token_types)
                    type = (*batch.token_types)(b, t);
                else if (m_type_options.row_zero_by_default)
                    type = 0;
                if (type) {
                    if (const std::optional<std::int64_t> tied = tied_type_row(*type))
                        token_reads.push_back({*tied, row, Scalar(1)});
                    else
                        type_reads.push_back({*type, row, Scalar(1)});
                }
            }
            if constexpr (has_learned_positions) {
                const std::int64_t position_row = m_positions.offset() + position;
                if (position_row != no_gradient_position)
                    position_reads.push_back({position_row, row, Scalar(1)});
                else
                    position_skipped = true;
            }
        });

        // The memory of the last backward, reused: fresh memory faults on every page (a new
        // scratch in a pipeline moved from, or while another call holds it).
        detail::BackwardScratch<Scalar> scratch;
        if (m_scratch) scratch = m_scratch->take();

        // The rows the sums read: grad_output through the mask (applied as each row is read), or
        // with LayerNorm, its backward of grad_output through the mask.
        if (call)
            detail::StageAccess::kept_bits(m_dropout, *call, static_cast<std::uint64_t>(ids.size() * width), parallel,
                                           scratch.kept);
        detail::GradientRows<Scalar> rows = detail::GradientRows<Scalar>::of(grad_output);
        if (call) {
            rows.kept = scratch.kept.data();
            rows.keep_scale = m_dropout.template keep_scale<Scalar>();
        }
        // With LayerNorm, the gradient through it and its input, in the scratch's matrices when
        // they are large enough.
        if (m_norm) {
            scratch.norm.resize(2);
            for (RowMatrix<Scalar>& matrix : scratch.norm)
                if (matrix.rows() < ids.size() || matrix.cols() != width)
                    matrix = detail::new_output<Scalar>(ids.size(), width);
            // The rows not written are never read.
            auto through = scratch.norm[0].topRows(ids.size());
            auto sums = scratch.norm[1].topRows(ids.size());
            detail::RowJob<Scalar> job{};
            job.width = width;
            if (token_rows != nullptr) {  // the shards' summed token rows, read with a scale of 1
                sums = *token_rows;
                job.scale = Scalar(1);
                run<RowPart::rest>(job, batch, sums, helpers);
            } else {
                job.scale = m_embedding.scale();
                run(job, batch, sums, helpers);
            }
            gradients.gamma.resize(width);
            gradients.beta.resize(width);
            detail::layer_norm_backward(written.data(), static_cast<Index>(written.size()), sums.data(), width, rows,
                                        through.data(), width, m_norm->gamma().data(), m_norm->epsilon(), width,
                                        gradients.gamma.data(), gradients.beta.data(), scratch.norm_partials, parallel);
            rows = detail::GradientRows<Scalar>::of(through);
        }

        // Every table's rows summed in one pass over those rows.
        std::vector<detail::TableSum<Scalar>> tables;
        detail::ReadPlan plans[3];
        RowGradient<Scalar>* planned[3] = {};
        const auto plan = [&](const std::vector<detail::RowRead<Scalar>>& reads, RowGradient<Scalar>& gradient) {
            const std::size_t at = tables.size();
            plans[at] = detail::plan_reads(reads, gradient.table_rows);
            planned[at] = &gradient;
            tables.push_back({&reads, &plans[at], nullptr});
        };
        plan(token_reads, gradients.token);
        if constexpr (has_learned_positions) plan(position_reads, gradients.positions);
        if (m_types && !type_reads.empty()) plan(type_reads, gradients.token_types);
        const auto allocate = [&](std::size_t at) {
            planned[at]->values = detail::new_output<Scalar>(static_cast<Index>(plans[at].rows.size()), width);
            tables[at].gradient = planned[at]->values.data();
        };
        bool others_summed = false;
        const auto sum_others = [&](detail::RowsBound<Scalar>* bound) {
            for (std::size_t at = 1; at < tables.size(); ++at) allocate(at);
            const std::vector<detail::TableSum<Scalar>> others(tables.begin() + 1, tables.end());
            if (!others.empty()) detail::sum_tables(others, rows, width, scratch.sums, parallel, bound);
            others_summed = true;
        };
        // The other tables' pass first, when it reads every row the token table reads (a learned
        // position table's reads do, unless a row read its padding_idx): the bound of those rows,
        // which a fused step checks before it writes, found as the pass reads them. None
        // otherwise, and no pass.
        const auto bound_others = [&]() -> std::optional<detail::RowsBound<Scalar>> {
            if (position_skipped) return std::nullopt;
            if constexpr (has_learned_positions) {
                detail::RowsBound<Scalar> bound;
                sum_others(&bound);
                return bound;
            } else {
                return std::nullopt;
            }
        };
        const auto run = [&](const detail::RowSink<Scalar>* token_sink) {
            if (token_sink != nullptr) {
                // The other tables in one pass in order of output row, then the token table's
                // rows in ascending order, each stepped as its sum is gathered.
                if (!others_summed) sum_others(nullptr);
                detail::step_gathered_rows(*tables.front().reads, *tables.front().plan, rows, width, *token_sink,
                                           parallel);
            } else if (others_summed) {
                allocate(0);
                detail::sum_tables({tables.front()}, rows, width, scratch.sums, parallel);
            } else {
                for (std::size_t at = 0; at < tables.size(); ++at) allocate(at);
                detail::sum_tables(tables, rows, width, scratch.sums, parallel);
            }
            for (std::size_t at = token_sink != nullptr ? 1 : 0; at < tables.size(); ++at)
                planned[at]->rows = std::move(plans[at].rows);
        };
        if constexpr (std::is_same_v<TokenStep, std::nullptr_t>)
            run(nullptr);
        else
            token_step(plans[0], token_reads, rows, run, bound_others);
        if (m_scratch) m_scratch->put_back(std::move(scratch));
        return gradients;
    }

    /// The bound of the rows the token table's reads read, in a pass of its own.
    detail::RowsBound<Scalar> bound_of(const std::vector<detail::RowRead<Scalar>>& reads,
                                       const detail::GradientRows<Scalar>& rows) const {
        const auto largest_magnitude = detail::optimizer_kernel<Scalar>().largest_magnitude;
        detail::RowsBound<Scalar> bound;
        Index last_source = -1;
        for (const detail::RowRead<Scalar>& read : reads) {
            if (read.source == last_source) continue;  // a tied type row's read of the same row
            last_source = read.source;
            bound.add(largest_magnitude(rows.values + read.source * rows.stride, d_model()));
            if (!bound.finite) break;
        }
        return bound;
    }

    /// Whether every token row's sum is finite for sure: the rows they read (within `bound`, of
    /// those rows or more) hold no NaN or infinity, and the largest sum the reads could make
    /// stays below half the largest Scalar.
    bool fusable(const detail::RowsBound<Scalar>& bound, const std::vector<detail::RowRead<Scalar>>& reads,
                 const detail::ReadPlan& plan, const detail::GradientRows<Scalar>& rows) const {
        if (!bound.finite) return false;
        double largest_factor = 0;
        for (const detail::RowRead<Scalar>& read : reads)
            largest_factor = std::max(largest_factor, std::abs(static_cast<double>(read.factor)));
        const double largest_sum = static_cast<double>(bound.largest) * static_cast<double>(rows.keep_scale) *
                                   largest_factor * static_cast<double>(plan.most_reads);
        return largest_sum < 0.5 * static_cast<double>(std::numeric_limits<Scalar>::max());
    }

    /// Whether the positional stage is a learned table, whose rows have gradients.
    static constexpr bool has_learned_positions = std::is_same_v<Positional, LearnedPositionalEmbedding<Scalar>>;

    /// An empty gradient of a table of `rows` rows of this pipeline's width.
    RowGradient<Scalar> empty_gradient(Index rows) const {
        RowGradient<Scalar> gradient;
        gradient.table_rows = rows;
        gradient.d_model = d_model();
        gradient.values.resize(0, d_model());
        return gradient;
    }

    /// The token table row that type row `type` is, when the token-type table is a view of the
    /// token table (GPT-2 looks token types up in its word table): its gradient then adds to
    /// the token table's.
    std::optional<std::int64_t> tied_type_row(TokenId type) const {
        if constexpr (std::is_same_v<Storage, Scalar>) {
            const Scalar* first = m_embedding.table().data();
            const Scalar* row = detail::StageAccess::type_row(*m_types, type);
            const auto base = reinterpret_cast<std::uintptr_t>(first);
            const auto at = reinterpret_cast<std::uintptr_t>(row);
            const auto row_bytes = sizeof(Scalar) * static_cast<std::uintptr_t>(d_model());
            const auto table_bytes = row_bytes * static_cast<std::uintptr_t>(m_embedding.table().rows());
            if (at >= base && at - base < table_bytes && (at - base) % row_bytes == 0)
                return static_cast<std::int64_t>((at - base) / row_bytes);
        } else {
            static_cast<void>(type);
        }
        return std::nullopt;
    }

    /// The checked forward: sequences shared between workers, each writing its own rows; the
    /// dropout call it took, if any.
    std::optional<std::uint64_t> write(const Batch& batch, Eigen::Ref<RowMatrix<Scalar>> out) const {
        if (batch.ids.size() == 0) return std::nullopt;
        static_cast<void>(active_isa());  // a bad SEQEMBED_ISA throws here, not in a helper thread
        std::vector<std::thread> helpers = detail::reserved_helpers(worker_count(batch.ids));  // may throw: first
        const detail::RowJob<Scalar> job = forward_job(m_embedding.scale(), out.size());
        run(job, batch, out, helpers);
        return job.dropping ? std::optional<std::uint64_t>(job.key.call) : std::nullopt;
    }

    /// The row kernel's job of a forward writing `elements` output values, the token rows read
    /// times `scale`: LayerNorm when the pipeline has one, and in training dropout's next call
    /// (taken here, so after everything that may throw).
    detail::RowJob<Scalar> forward_job(Scalar scale, Index elements) const {
        detail::RowJob<Scalar> job = m_norm ? detail::StageAccess::norm_job(*m_norm) : detail::RowJob<Scalar>{};
        job.width = d_model();
        job.scale = scale;
        job.streaming = streams(elements);
        job.dropping = m_dropout.is_active();
        if (job.dropping) {
            job.key = {m_dropout.seed(), detail::StageAccess::take_call(m_dropout),
                       m_dropout.threshold()};
            job.keep_scale = m_dropout.template keep_scale<Scalar>();
        }
        return job;
    }

    /// Which part of a row write_rows writes: all of it; a shard's token rows alone; or the rest
    /// (types, positions, LayerNorm, dropout) on token rows summed in place.
    enum class RowPart { whole, tokens, rest };

    /// The rows of a job, sequences shared between workers, each writing its own rows; `helpers`
    /// has room for the helper threads (detail::reserved_helpers).
    template <RowPart Part = RowPart::whole>
    void run(const detail::RowJob<Scalar>& job, const Batch& batch, Eigen::Ref<RowMatrix<Scalar>> out,
             std::vector<std::thread>& helpers) const {
        const TokenIds& ids = batch.ids;
        const Index workers = worker_count(ids);
        // Sequences are split evenly between the workers; each element's dropout draw depends on
        // its index only, so the output is the same for any number of workers.
        detail::run_workers(workers, helpers, [&](Index worker) {
            write_rows<Part>(job, batch, out, detail::share_start(ids.rows(), worker, workers),
                             detail::share_start(ids.rows(), worker + 1, workers));
        });
    }

    /// The rows of sequences first_row .. end_row - 1, through one pass of the row kernel. A
    /// position row past a sinusoidal table is computed into its output row first, which the
    /// kernel then reads as the position to add (into a scratch row for RowPart::rest, whose
    /// output rows hold the token rows). For RowPart::rest, `out` holds the output's rows from
    /// `first_output_row` on, and the others are skipped.
    template <RowPart Part = RowPart::whole>
    void write_rows(const detail::RowJob<Scalar>& job, const Batch& batch, Eigen::Ref<RowMatrix<Scalar>>& out,
                    Index first_row, Index end_row, Index first_output_row = 0) const {
        if (first_row >= end_row) return;
        using Read = std::conditional_t<Part == RowPart::rest, Scalar, Storage>;
        const TokenIds& ids = batch.ids;
        const bool padded_too = m_padded_rows == PaddedRows::computed;
        const Index width = d_model();
        const Index seq = ids.cols();
        const Index end_output_row = first_output_row + out.rows();
        const auto table_row = [this](TokenId id) { return detail::StageAccess::table_row(m_embedding, id); };
        detail::RowsAhead<Storage, decltype(table_row)> rows_ahead(
            ids, first_row, end_row,
            Part == RowPart::rest ? 0 : detail::rows_ahead(m_prefetch_bytes, sizeof(Storage) * static_cast<std::size_t>(width)),
            m_embedding.vocab_size(), table_row);
        // RowPart::rest: a position row computed for each row the pass holds until it writes.
        using Pass = detail::RowPass<Scalar, Read>;
        std::vector<Scalar> scratch;
        if constexpr (Part == RowPart::rest) scratch.resize(static_cast<std::size_t>(Pass::batch * width));
        Index added = 0;
        Pass pass(job);
        detail::for_each_position(batch, m_numbering, m_padding_id, first_row, end_row, [&](Index b, Index t, bool real,
                                                                                             std::int64_t position) {
            const Index row = b * seq + t;
            if constexpr (Part == RowPart::rest)
                if (row < first_output_row || row >= end_output_row) return;
            Scalar* out_row = out.row(row - first_output_row).data();
            const Read* next = nullptr;  // the table row to request (none for the summed rows)
            if constexpr (Part == RowPart::rest)
                static_cast<void>(rows_ahead.next());
            else
                next = rows_ahead.next();
            const auto first_element = static_cast<std::uint64_t>(row) * static_cast<std::uint64_t>(width);
            if (!real && !padded_too) {
                pass.add({out_row, nullptr, first_element}, next);
                ++added;
                return;
            }
            if constexpr (Part == RowPart::tokens) {
                pass.add({out_row, detail::StageAccess::table_row(m_embedding, ids(b, t)), first_element}, next);
                return;
            }
            Scalar* position_scratch = out_row;
            if constexpr (Part == RowPart::rest) position_scratch = scratch.data() + (added % Pass::batch) * width;
            const Scalar* position_row = detail::StageAccess::position_row(m_positions, position, position_scratch);
            const Scalar* type_row = nullptr;
            if (batch.token_types)
                type_row = detail::StageAccess::type_row(*m_types, (*batch.token_types)(b, t));
            else if (m_types && m_type_options.row_zero_by_default)
                type_row = detail::StageAccess::type_row(*m_types, 0);
            const Read* token_row;
            if constexpr (Part == RowPart::rest)
                token_row = out_row;
            else
                token_row = detail::StageAccess::table_row(m_embedding, ids(b, t));
            detail::RowSources<Scalar, Read> sources{out_row, token_row, first_element};
            if (m_type_options.order == TokenTypeOrder::before_positions) {
                sources.add(type_row);
                sources.add(position_row);
            } else {
                sources.add(position_row);
                sources.add(type_row);
            }
            pass.add(sources, next);
            ++added;
        });
        pass.finish();
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
        return detail::streams_by_default(sizeof(Scalar) * static_cast<std::size_t>(elements));
    }

    static Index checked_threads(int threads) {
        if (threads < 0) detail::fail<value_error>("threads must be 0 (all) or more, got ", threads);
        return threads;
    }

    template <typename, typename, typename>
    friend class InputPipeline;

    Embedding m_embedding;
    Positional m_positions;
    std::optional<TokenTypeEmbedding<Scalar>> m_types;
    std::optional<LayerNorm<Scalar>> m_norm;
    Dropout m_dropout;
    Index m_threads;
    OutputStores m_output_stores;
    std::size_t m_prefetch_bytes;
    PositionNumbering m_numbering;
    TokenId m_padding_id;
    PaddedRows m_padded_rows;
    TokenTypeOptions m_type_options;
    /// The backward's scratch memory, kept for the next backward.
    std::shared_ptr<detail::ScratchShelf<detail::BackwardScratch<Scalar>>> m_scratch =
        std::make_shared<detail::ScratchShelf<detail::BackwardScratch<Scalar>>>();
};

}  // namespace seqembed
