/// @file token_embedding.hpp
/// @brief TokenEmbedding: the vocab_size x d_model lookup table, scaled by sqrt(d_model) unless
///        its options say otherwise.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "detail/backward.hpp"
#include "detail/checks.hpp"
#include "detail/large_memory.hpp"
#include "detail/normal_init.hpp"
#include "detail/engine/row_pass.hpp"
#include "detail/row_table.hpp"
#include "detail/stage_access.hpp"
#include "error.hpp"
#include "gradients.hpp"
#include "trainable_table.hpp"
#include "types.hpp"
#include "vocabulary_shard.hpp"

namespace seqembed {

/// @brief The factor a looked-up embedding row is multiplied by.
///
/// The Transformer paper (and PyTorch code that follows it) multiplies by sqrt(d_model); BERT
/// and GPT-2 do not scale; CTranslate2 and fairseq let the model choose.
/// @code
/// options.scale = seqembed::EmbeddingScale::none();        // BERT, GPT-2
/// options.scale = seqembed::EmbeddingScale::value(16.0);   // an explicit factor
/// @endcode
class EmbeddingScale {
public:
    /// @brief Multiply by sqrt(d_model), the paper's choice and the default.
    /// @return a scale whose factor_for(d_model) is sqrt(d_model).
    static EmbeddingScale sqrt_d_model() noexcept { return EmbeddingScale(true, 1.0); }
    /// @brief Do not scale (factor 1).
    /// @return a scale whose factor_for(d_model) is 1 for every d_model.
    static EmbeddingScale none() noexcept { return EmbeddingScale(false, 1.0); }
    /// @brief Multiply by a fixed factor.
    /// @param factor any finite value (zero and negative values are accepted).
    /// @return a scale whose factor_for(d_model) is factor, whatever d_model.
    /// @throws value_error if factor is not finite.
    static EmbeddingScale value(double factor) {
        if (!std::isfinite(factor))
            detail::fail<value_error>("embedding scale must be finite, got ", factor);
        return EmbeddingScale(false, factor);
    }
    /// @brief The factor for a table of width d_model, in double.
    /// @param d_model the embedding width (read only by sqrt_d_model()).
    /// @return sqrt(d_model) computed in double for sqrt_d_model(), otherwise the fixed factor
    ///         (1 for none()). TokenEmbedding rounds it once to Scalar.
    double factor_for(Index d_model) const noexcept {
        return m_sqrt_d_model ? std::sqrt(static_cast<double>(d_model)) : m_factor;
    }

private:
    EmbeddingScale(bool sqrt_d_model, double factor) noexcept
        : m_sqrt_d_model(sqrt_d_model), m_factor(factor) {}
    bool m_sqrt_d_model;
    double m_factor;
};

/// @brief How a TokenEmbedding is built and scaled.
struct TokenEmbeddingOptions {
    /// @brief Factor applied by every lookup (default sqrt(d_model)).
    EmbeddingScale scale = EmbeddingScale::sqrt_d_model();
    /// @brief As nn.Embedding's padding_idx: in [-vocab_size, vocab_size), negative counts from
    ///        the end; its row is zeroed by the seeded initialisation only (weights given by the
    ///        caller are kept as they are, as nn.Embedding.from_pretrained does).
    std::optional<TokenId> padding_idx;
    /// @brief Seed of the N(0, 1) initialisation.
    std::uint64_t seed = 0;
    /// @brief With weights from the caller: throw if any value is NaN or infinite.
    bool check_finite = false;
    /// @brief The part of the vocabulary the table holds (a vocabulary-parallel table, one per
    ///        rank); unset, the whole vocabulary. Ids are the whole vocabulary's: an id the shard
    ///        holds reads its row, any other id of the vocabulary a zero row, written as -0.0
    ///        (so that adding the ranks' outputs gives the held row's bits: x + (-0.0) is x for
    ///        every x). padding_idx is an id of the whole vocabulary too. A seeded table holds
    ///        the rows the whole table would hold; weights given hold the shard's rows.
    std::optional<VocabularyShard> shard;
};

/// @brief A vocab_size x d_model embedding table: ids in, scaled rows out.
///
/// One contiguous row per token, as torch.nn.Embedding stores it. Built with a seeded N(0, 1)
/// initialisation, from weights (copied), or as a view of the caller's memory. A lookup returns
/// weights.row(id) * scale, scale being sqrt(d_model) unless the options say otherwise.
/// The table may be stored in a narrower type than the output (Storage = Eigen::bfloat16 or
/// Eigen::half with Scalar = float): half the memory and memory traffic; each value is widened
/// exactly to Scalar before it is scaled, as PyTorch's `emb(ids).float() * scale` does.
/// @tparam Scalar float or double: the type of the output and of the scale.
/// @tparam Storage the type of the table's values: Scalar, or Eigen::bfloat16 or Eigen::half
///         with a float Scalar.
/// @code
/// seqembed::TokenEmbedding<float> embedding(32000, 512);          // seeded N(0,1), x sqrt(512)
/// seqembed::IdMatrix ids(1, 3);
/// ids << 17, 4, 9;
/// seqembed::RowMatrix<float> x = embedding.forward(ids);          // 3 x 512
///
/// // A bfloat16 table (a checkpoint's float weights rounded once), float output:
/// auto compact = seqembed::TokenEmbedding<float, Eigen::bfloat16>::from_weights(
///     float_weights.cast<Eigen::bfloat16>());
/// @endcode
template <typename Scalar = float, typename Storage = Scalar>
class TokenEmbedding {
    static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                  "TokenEmbedding<Scalar, Storage>: Scalar must be float or double");
    static_assert(std::is_same_v<Storage, Scalar> ||
                      (std::is_same_v<Scalar, float> &&
                       (std::is_same_v<Storage, Eigen::bfloat16> || std::is_same_v<Storage, Eigen::half>)),
                  "TokenEmbedding<Scalar, Storage>: Storage must be Scalar, or Eigen::bfloat16 or "
                  "Eigen::half with a float Scalar");

public:
    /// @brief The type of the output and of the scale.
    using ScalarType = Scalar;
    /// @brief The type of the table's values.
    using StorageType = Storage;

    /// @brief A table initialised with seeded N(0, 1) draws, as nn.Embedding does (the values
    ///        differ from PyTorch's generator, the distribution is the same).
    /// @param vocab_size number of ids (the whole vocabulary's, with options.shard), > 0.
    /// @param d_model number of columns, > 0.
    /// @param options scale, padding_idx (its row is zeroed), seed, and the shard held (its
    ///        rows are those of the whole table with the same seed).
    /// @throws value_error for a size <= 0, a table too large for memory or Eigen::Index, a
    ///         shard that is not part of a vocabulary of vocab_size ids.
    /// @throws index_error for padding_idx outside [-vocab_size, vocab_size).
    TokenEmbedding(Index vocab_size, Index d_model, const TokenEmbeddingOptions& options = {})
        : m_shard(checked_shard(options.shard, vocab_size)),
          m_table(allocate_table(m_shard.rows, d_model)),
          m_padding_idx(detail::normalized_padding_idx("padding_idx", options.padding_idx, vocab_size)),
          m_scale(scale_for(options.scale, d_model)) {
        detail::fill_standard_normal(m_table.writable().data(), m_table.writable().size(), options.seed,
                                     detail::InitStream::token_embedding,
                                     static_cast<std::uint64_t>(m_shard.first) * static_cast<std::uint64_t>(d_model));
        if (m_padding_idx && m_shard.holds(*m_padding_idx))
            m_table.writable().row(static_cast<Index>(*m_padding_idx - m_shard.first)).setZero();
        make_zero_row();
    }

    /// @brief A table holding a copy of weights (vocab_size x d_model).
    /// @param weights the pre-trained table, one row per token (with options.shard, one per
    ///        id the shard holds).
    /// @param options scale, padding_idx (recorded, the row is not zeroed), check_finite, shard.
    /// @return an embedding that owns its copy of weights (is_view() is false), so weights may
    ///         be freed or changed afterwards.
    /// @throws value_error for an empty table, one too large for memory, an invalid shard or,
    ///         with check_finite, a NaN or infinity.
    /// @throws shape_error for weights whose rows are not the shard's.
    /// @throws index_error for padding_idx out of range.
    static TokenEmbedding from_weights(const Eigen::Ref<const RowMatrix<Storage>>& weights,
                                       const TokenEmbeddingOptions& options = {}) {
        // Checked after the copy: weights may be a strided block, the copy is packed.
        detail::RowTable<Storage> table("token embedding weights", weights);
        if (options.check_finite)
            detail::require_finite("token embedding weights", table.row(0), table.rows(), table.cols());
        return TokenEmbedding(std::move(table), options);
    }

    /// @brief A table that views vocab_size x d_model row-major values at data without copying
    ///        them (a memory-mapped checkpoint). The caller keeps them alive and unchanged.
    /// @param data first value of row 0 (with options.shard, of the shard's first id).
    /// @param vocab_size rows (with options.shard, its rows).
    /// @param d_model columns.
    /// @param options scale, padding_idx (recorded, the row is not zeroed), check_finite, shard.
    /// @param owner whatever keeps data alive (a file mapping): held by the embedding and its
    ///        copies, so the values live as long as they do. Null: the caller keeps them alive.
    /// @return an embedding reading data in place (is_view() is true); without an owner, it and
    ///         every copy of it are valid only while the vocab_size x d_model values at data live.
    /// @throws value_error for a null pointer, a size <= 0, an invalid shard or a non-finite
    ///         value when checked.
    /// @throws shape_error for a row count that is not the shard's.
    /// @throws index_error for padding_idx out of range.
    static TokenEmbedding view(const Storage* data, Index vocab_size, Index d_model,
                               const TokenEmbeddingOptions& options = {},
                               std::shared_ptr<const void> owner = nullptr) {
        detail::RowTable<Storage> table("token embedding view", data, vocab_size, d_model, std::move(owner));
        if (options.check_finite)
            detail::require_finite("token embedding view", data, vocab_size, d_model);
        return TokenEmbedding(std::move(table), options);
    }

    /// @brief Copies share the table (and a narrow table's master weights) until one of them
    ///        opens it for training; a tied table (tie_table) is copied, so that the tie's later
    ///        steps do not reach the copy.
    /// @param other the embedding to copy.
    TokenEmbedding(const TokenEmbedding& other)
        : m_shard(other.m_shard),
          m_table(other.m_table),
          m_padding_idx(other.m_padding_idx),
          m_scale(other.m_scale),
          m_master(other.is_tied() && other.m_master ? std::make_shared<RowMatrix<Scalar>>(*other.m_master)
                                                     : other.m_master),
          m_zero_row(other.m_zero_row) {}
    /// @brief As the copy constructor.
    /// @param other the embedding to copy.
    /// @return this embedding.
    TokenEmbedding& operator=(const TokenEmbedding& other) {
        if (this != &other) *this = TokenEmbedding(other);
        return *this;
    }
    /// @brief Takes the table; the moved-from embedding is empty (vocab_size() 0) and rejects
    ///        every id.
    /// @param other the embedding to take from.
    TokenEmbedding(TokenEmbedding&& other) noexcept
        : m_shard(std::exchange(other.m_shard, VocabularyShard{})),
          m_table(std::move(other.m_table)),
          m_padding_idx(other.m_padding_idx),
          m_scale(other.m_scale),
          m_master(std::move(other.m_master)),
          m_zero_row(std::move(other.m_zero_row)) {}
    /// @brief As the move constructor.
    /// @param other the embedding to take from.
    /// @return this embedding.
    TokenEmbedding& operator=(TokenEmbedding&& other) noexcept {
        m_shard = std::exchange(other.m_shard, VocabularyShard{});
        m_table = std::move(other.m_table);
        m_padding_idx = other.m_padding_idx;
        m_scale = other.m_scale;
        m_master = std::move(other.m_master);
        m_zero_row = std::move(other.m_zero_row);
        return *this;
    }
    /// @brief Frees the table when no copy holds it.
    ~TokenEmbedding() = default;

    /// @brief Number of token ids (0 .. vocab_size-1): the whole vocabulary's, for a shard too.
    /// @return the vocabulary size, > 0.
    Index vocab_size() const noexcept { return m_shard.vocab_size; }
    /// @brief The part of the vocabulary whose rows the table holds.
    /// @return options.shard, or the whole vocabulary ({0, vocab_size, vocab_size}).
    const VocabularyShard& shard() const noexcept { return m_shard; }
    /// @brief Whether the table holds only part of the vocabulary.
    /// @return true for a shard that is not the whole vocabulary.
    bool is_shard() const noexcept { return !m_shard.is_whole(); }
    /// @brief Width of a row.
    /// @return the number of columns of the table and of every looked-up row, > 0.
    Index d_model() const noexcept { return m_table.cols(); }
    /// @brief The factor every lookup multiplies by.
    /// @return options.scale.factor_for(d_model()), computed in double and rounded to Scalar.
    Scalar scale() const noexcept { return m_scale; }
    /// @brief The padding row, counted from 0, if one was given.
    /// @return the padding_idx of the options, a negative one turned into vocab_size +
    ///         padding_idx (so in [0, vocab_size)), or std::nullopt if none was given.
    std::optional<TokenId> padding_idx() const noexcept { return m_padding_idx; }
    /// @brief Whether the table views the caller's memory.
    /// @return true for an embedding made by view(), false for one that owns its values.
    bool is_view() const noexcept { return !m_table.owns_data(); }
    /// @brief The unscaled table, as a read-only view (for a tied output projection, say).
    /// @return a vocab_size x d_model row-major view (for a shard, shard().rows x d_model: row
    ///         k is id shard().first + k), no copy, valid while this embedding or a copy of it
    ///         lives (for a view() without owner, while the caller's memory does).
    Eigen::Map<const RowMatrix<Storage>> table() const noexcept { return m_table.matrix(); }
    /// @brief Opens the table for an optimizer step (TrainableTable): a view, a file's mapping or
    ///        a table shared with a copy of this embedding is copied first, and the others keep
    ///        the old values. A bfloat16 or half table trains through float master weights, as
    ///        mixed-precision training does: the first call makes them from the table (exactly),
    ///        the map is theirs, and round_master_rows() or round_master() stores the rows a step
    ///        changed back into the table, rounded to nearest even.
    /// @return the writable table (a narrow table's float master weights) and whether its values
    ///         were copied.
    /// @throws value_error if the copy does not fit in memory (the embedding is then unchanged).
    TrainableTable<Scalar> trainable_table() {
        if constexpr (std::is_same_v<Storage, Scalar>) {
            const bool copied = m_table.make_own("trainable token table");
            return {m_table.writable(), copied};
        } else {
            bool copied = false;
            if (!m_master || (m_master.use_count() > 1 && !is_tied())) {  // made, or copied from a shared one
                auto master = std::make_shared<RowMatrix<Scalar>>(
                    m_master ? RowMatrix<Scalar>(*m_master) : RowMatrix<Scalar>(m_table.matrix().template cast<Scalar>()));
                m_table.make_own("trainable token table");
                m_master = std::move(master);
                copied = true;
            }
            return {Eigen::Map<RowMatrix<Scalar>>(m_master->data(), m_table.rows(), d_model()), copied};
        }
    }

    /// @brief Ties this embedding's table to `other`'s for training, as two modules holding one
    ///        nn.Embedding (BART's, T5's and Marian's encoder and decoder): `other`'s table is
    ///        opened (trainable_table(), so copied first if it is a view, a mapping or shared)
    ///        and this embedding reads it from then on, leaving any tie it was in. A step
    ///        through either one's trainable_table() is seen by both, and neither copies it
    ///        again (a narrow table's master weights and round_master_rows() included). Tying a
    ///        third embedding to either joins the same tie. Each keeps its own scale and
    ///        padding_idx. A copy of a tied embedding copies the values: later steps do not
    ///        reach it. The tables' gradients are added (RowGradient::add) before one step.
    /// @param other an embedding of the same vocabulary, width and shard.
    /// @throws shape_error if the vocabularies, shards or widths differ (require_tieable);
    ///         value_error if `other`'s copy does not fit in memory. Either way, neither
    ///         embedding has changed.
    void tie_table(TokenEmbedding& other) {
        if (&other == this) return;
        require_tieable(other, "tie_table");
        other.trainable_table();
        m_table.tie_to(other.m_table);
        m_master = other.m_master;
    }
    /// @brief Throws unless `other`'s table can be tied to this one (tie_table): the same
    ///        vocabulary, width and shard.
    /// @param other the embedding to tie to.
    /// @param caller the function named in the message.
    /// @throws shape_error naming both tables' shapes or shards.
    void require_tieable(const TokenEmbedding& other, const char* caller) const {
        if (other.vocab_size() != vocab_size() || other.d_model() != d_model())
            detail::fail<shape_error>(caller, ": a ", other.vocab_size(), " x ", other.d_model(),
                                      " token table cannot be tied to this ", vocab_size(), " x ", d_model(), " one");
        if (other.m_shard.first != m_shard.first || other.m_shard.rows != m_shard.rows)
            detail::fail<shape_error>(caller, ": the tables hold different parts of the vocabulary (ids [",
                                      other.m_shard.first, ", ", other.m_shard.end(), ") and [", m_shard.first, ", ",
                                      m_shard.end(), ")");
    }
    /// @brief Leaves the tie (tie_table) with a copy of the tied values (and master weights):
    ///        the other members' later steps no longer reach it. Nothing for an untied table.
    /// @throws value_error if the copy does not fit in memory (the embedding is then unchanged).
    void untie_table() {
        if (!is_tied()) return;
        std::shared_ptr<RowMatrix<Scalar>> master = m_master ? std::make_shared<RowMatrix<Scalar>>(*m_master) : nullptr;
        m_table.untie("untied token table");
        m_master = std::move(master);
    }
    /// @brief Whether the table is tied to another embedding's (tie_table).
    /// @return true while another member of its tie holds it.
    bool is_tied() const noexcept { return m_table.tied(); }

    /// @brief Stores rows of the master weights back into a bfloat16 or half table, each value
    ///        rounded to nearest even, after an optimizer step on trainable_table(): the rows a
    ///        lazy step updated (its gradient's rows). Nothing to do for a float or double table.
    /// @param rows token ids the table holds (RowGradient::rows): each in [0, vocab_size()), or
    ///        a shard's, in [shard().first, shard().end()).
    /// @throws value_error before the first trainable_table() of a narrow table; index_error for
    ///         an id the table does not hold (nothing is stored then).
    void round_master_rows(const std::vector<std::int64_t>& rows) {
        if constexpr (!std::is_same_v<Storage, Scalar>) {
            require_master();
            for (const std::int64_t row : rows)
                if (!m_shard.holds(row))
                    detail::fail<index_error>("round_master_rows: row ", row, " is outside the table's ids [",
                                              m_shard.first, ", ", m_shard.end(), ")");
            m_table.make_own("trainable token table");
            auto table = m_table.writable();
            for (const std::int64_t row : rows) {
                const auto at = static_cast<Index>(row - m_shard.first);
                table.row(at) = m_master->row(at).template cast<Storage>();
            }
        } else {
            static_cast<void>(rows);
        }
    }

    /// @brief Stores every row of the master weights back into a bfloat16 or half table (after a
    ///        dense optimizer's step). Nothing to do for a float or double table.
    /// @throws value_error before the first trainable_table() of a narrow table.
    void round_master() {
        if constexpr (!std::is_same_v<Storage, Scalar>) {
            require_master();
            m_table.make_own("trainable token table");
            m_table.writable() = m_master->template cast<Storage>();
        }
    }

    /// @brief Whether the embedding trains through float master weights (a bfloat16 or half
    ///        table after its first trainable_table()).
    /// @return true when it has master weights.
    bool has_master_weights() const noexcept { return m_master != nullptr; }

    /// @brief Looks up a batch: row b * seq + t of the result is table().row(ids(b, t)) * scale.
    /// @param ids batch x seq token ids (int64 or int32, any layout; viewed).
    /// @return a new (batch * seq) x d_model matrix.
    /// @throws index_error for an id outside [0, vocab_size).
    RowMatrix<Scalar> forward(const TokenIds& ids) const {
        require_ids(ids);
        RowMatrix<Scalar> out = detail::new_output<Scalar>(ids.size(), d_model());
        write(ids, out);
        return out;
    }

    /// @brief As forward, into caller memory, without allocating. Every id is checked before
    ///        anything is written. Each element is Scalar(table value) * scale, as
    ///        InputPipeline computes it before adding positions; outputs of 4 MiB or more are
    ///        written with streaming stores where the ISA has them.
    /// @param ids batch x seq token ids.
    /// @param out a (batch * seq) x d_model matrix.
    /// @throws shape_error if out has another shape; index_error for an id out of range.
    void forward_into(const TokenIds& ids, Eigen::Ref<RowMatrix<Scalar>> out) const {
        detail::require_shape("output of TokenEmbedding::forward_into", out.rows(), out.cols(),
                              ids.size(), d_model());
        require_ids(ids);
        write(ids, out);
    }

    /// @brief The gradient of the table from the gradient of forward(ids)'s output: scale x the
    ///        rows of each id summed (in order of output row, in double for float), as
    ///        nn.Embedding(sparse=True) gives it; the padding_idx row receives none.
    /// @param ids batch x seq token ids, as given to forward.
    /// @param grad_output (batch * seq) x d_model.
    /// @return the row-sparse gradient (float for a bfloat16 or half table).
    /// @throws shape_error if grad_output's shape differs; index_error for an id out of range.
    RowGradient<Scalar> backward(const TokenIds& ids, const Eigen::Ref<const RowMatrix<Scalar>>& grad_output) const {
        detail::require_shape("gradient of TokenEmbedding's output", grad_output.rows(), grad_output.cols(), ids.size(),
                              d_model());
        require_whole("TokenEmbedding::backward");
        require_ids(ids);
        std::vector<detail::RowRead<Scalar>> reads;
        reads.reserve(static_cast<std::size_t>(ids.size()));
        const TokenId skipped = m_padding_idx.value_or(-1);
        for (Index b = 0; b < ids.rows(); ++b)
            for (Index t = 0; t < ids.cols(); ++t)
                if (ids(b, t) != skipped) reads.push_back({ids(b, t), b * ids.cols() + t, m_scale});
        return detail::sum_reads(reads, detail::GradientRows<Scalar>::of(grad_output), vocab_size(), d_model());
    }

private:
    friend struct detail::StageAccess;

    /// Unscaled row of an id of the vocabulary: its row when the shard holds it, otherwise the
    /// zero row whose product with the scale is -0.0.
    const Storage* table_row(TokenId id) const noexcept {
        const auto local = static_cast<std::uint64_t>(id - m_shard.first);
        return local < static_cast<std::uint64_t>(m_shard.rows) ? m_table.row(static_cast<Index>(local))
                                                                : m_zero_row->data();
    }

    /// A row of zeros whose sign makes Scalar(zero) * scale -0.0 (+0.0 for a negative scale),
    /// which the ids a shard does not hold read.
    void make_zero_row() {
        if (!is_shard()) return;
        const Storage zero = std::signbit(m_scale) ? Storage(0.0f) : Storage(-0.0f);
        m_zero_row = std::make_shared<const std::vector<Storage>>(static_cast<std::size_t>(d_model()), zero);
    }

    static VocabularyShard checked_shard(const std::optional<VocabularyShard>& shard, Index vocab_size) {
        if (!shard) {
            detail::require_positive("vocab_size", vocab_size);
            return VocabularyShard::whole(vocab_size);
        }
        shard->require_valid("TokenEmbeddingOptions::shard");
        if (shard->vocab_size != vocab_size)
            detail::fail<value_error>("TokenEmbeddingOptions::shard is part of a vocabulary of ", shard->vocab_size,
                                      " ids, the table's is ", vocab_size);
        return *shard;
    }

    /// The shard of a table given with `rows` rows.
    static VocabularyShard shard_of_rows(const std::optional<VocabularyShard>& shard, Index rows) {
        if (!shard) return VocabularyShard{0, rows, rows};
        shard->require_valid("TokenEmbeddingOptions::shard");
        if (shard->rows != rows)
            detail::fail<shape_error>("the token table given has ", rows, " rows, its shard [", shard->first, ", ",
                                      shard->end(), ") ", shard->rows);
        return *shard;
    }

    void require_ids(const TokenIds& ids) const {
        for (Index b = 0; b < ids.rows(); ++b)
            for (Index t = 0; t < ids.cols(); ++t) detail::require_token_id(ids(b, t), vocab_size(), b, t);
    }

    /// The checked lookup, through the row kernel (no position, no dropout).
    void write(const TokenIds& ids, Eigen::Ref<RowMatrix<Scalar>> out) const {
        const Index count = ids.size();
        if (count == 0) return;
        detail::RowJob<Scalar> job;
        job.width = d_model();
        job.scale = m_scale;
        job.streaming = detail::streams_by_default(sizeof(Scalar) * static_cast<std::size_t>(out.size()));
        detail::RowPass<Scalar, Storage> pass(job);
        const Index seq = ids.cols();
        const auto row_of = [this](TokenId id) { return table_row(id); };
        detail::RowsAhead<Storage, decltype(row_of)> rows_ahead(
            ids, 0, ids.rows(),
            detail::rows_ahead(detail::default_prefetch_bytes, sizeof(Storage) * static_cast<std::size_t>(d_model())),
            vocab_size(), row_of);
        for (Index k = 0; k < count; ++k) {
            const Storage* ahead = rows_ahead.next();
            pass.add({out.row(k).data(), table_row(ids(k / seq, k % seq)),
                      static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(d_model())},
                     ahead);
        }
        pass.finish();
    }

    TokenEmbedding(detail::RowTable<Storage> table, const TokenEmbeddingOptions& options)
        : m_shard(shard_of_rows(options.shard, table.rows())),
          m_table(std::move(table)),
          m_padding_idx(detail::normalized_padding_idx("padding_idx", options.padding_idx, m_shard.vocab_size)),
          m_scale(scale_for(options.scale, m_table.cols())) {
        make_zero_row();
    }

    static detail::RowTable<Storage> allocate_table(Index vocab_size, Index d_model) {
        detail::require_positive("vocab_size", vocab_size);
        detail::require_positive("d_model", d_model);
        return detail::RowTable<Storage>("token embedding table", vocab_size, d_model);
    }

    static Scalar scale_for(const EmbeddingScale& scale, Index d_model) {
        // As PyTorch's `x * math.sqrt(d)`: the factor is computed in double, then rounded.
        return static_cast<Scalar>(scale.factor_for(d_model));
    }

    /// Throws for a shard: what `what` computes is for a table of the whole vocabulary.
    void require_whole(const char* what) const {
        if (is_shard())
            detail::fail<value_error>(what, " is not available for a vocabulary shard (ids [", m_shard.first, ", ",
                                      m_shard.end(), ") of ", m_shard.vocab_size, ")");
    }

    void require_master() const {
        if (!m_master)
            detail::fail<value_error>("a bfloat16 or half token table has no master weights to round before "
                                      "trainable_table() made them");
    }

    VocabularyShard m_shard;
    detail::RowTable<Storage> m_table;
    std::optional<TokenId> m_padding_idx;
    Scalar m_scale;
    // A narrow table's float master weights while it trains (null before); shared by copies
    // until one of them opens its table again.
    std::shared_ptr<RowMatrix<Scalar>> m_master;
    // A shard's zero row (null for the whole vocabulary), shared by copies.
    std::shared_ptr<const std::vector<Storage>> m_zero_row;
};

}  // namespace seqembed
