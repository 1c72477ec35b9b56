/// @file io/model.hpp
/// @brief io::load_model: a Hugging Face model's input stage from its directory, whatever its
///        family (config.json's model_type), as one type whose forward takes what the family's
///        forward takes.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "../batch.hpp"
#include "models.hpp"

namespace seqembed::io {

namespace detail {

/// Whether a pipeline adds a learned (or fixed) position table.
template <typename Pipeline>
inline constexpr bool has_position_table =
    std::is_same_v<std::decay_t<decltype(std::declval<const Pipeline&>().positions())>,
                   LearnedPositionalEmbedding<float>>;

/// Per sequence of the batch, its mask tokens and its attended tokens, for ESM's token dropout.
template <typename Pipeline>
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> mask_token_counts(const TokenDropout& rule,
                                                                                   const Pipeline& pipeline,
                                                                                   const Batch& batch) {
    const auto rows = static_cast<std::size_t>(batch.ids.rows());
    std::vector<std::int64_t> masked(rows, 0);
    std::vector<std::int64_t> attended(rows, 0);
    seqembed::detail::for_each_position(batch, pipeline.numbering(), pipeline.padding_id(), 0, batch.ids.rows(),
                                        [&](Index b, Index t, bool real, std::int64_t) {
                                            const auto at = static_cast<std::size_t>(b);
                                            if (batch.ids(b, t) == rule.mask_token_id) ++masked[at];
                                            if (real) ++attended[at];
                                        });
    return {std::move(masked), std::move(attended)};
}

/// The divisor of ESM's token dropout for sequence b, 1 - float(count) / float(attended), as
/// EsmEmbeddings computes it in float32.
/// @throws value_error when it is zero or not finite (every attended token a mask token).
inline float token_dropout_divisor(const TokenDropout& rule, Index b, std::int64_t count, std::int64_t attended) {
    const float ratio = static_cast<float>(count) / static_cast<float>(attended);
    const float divisor = 1.0f - ratio;
    if (!(divisor != 0.0f) || !std::isfinite(divisor))
        seqembed::detail::fail<value_error>("ESM token dropout: sequence ", b, " has ", count, " mask tokens (id ",
                                            rule.mask_token_id, ") among ", attended,
                                            " attended ones: its scale 1 / (1 - ", ratio, ") is not finite");
    return divisor;
}

/// ESM's token dropout over a forward's output `out` (the pipeline's rows, whose token rows it
/// already multiplied by float(1 - 0.15 * 0.8)): in each sequence holding mask tokens, their rows
/// zero and every other real row divided by float(1 - float(count) / float(attended)), as
/// EsmEmbeddings computes it in float32; a sequence without mask tokens is divided by 1, its rows
/// as they are. Before positions and LayerNorm (ESM-1b), such a sequence's rows are computed
/// again from the tables.
template <typename Pipeline>
void apply_token_dropout(const TokenDropout& rule, const Pipeline& pipeline, const Batch& batch,
                         RowMatrix<float>& out) {
    const Index rows = batch.ids.rows();
    const Index seq = batch.ids.cols();
    const auto counts = mask_token_counts(rule, pipeline, batch);
    const std::vector<std::int64_t>& masked = counts.first;
    const std::vector<std::int64_t>& attended = counts.second;
    constexpr bool absolute = has_position_table<Pipeline>;
    for (Index b = 0; b < rows; ++b) {
        const auto count = masked[static_cast<std::size_t>(b)];
        const auto real_count = attended[static_cast<std::size_t>(b)];
        if (count == 0 || real_count == 0) continue;  // divided by 1, or every row padded (zero)
        const float divisor = token_dropout_divisor(rule, b, count, real_count);
        if (!absolute && pipeline.layer_norm() == nullptr) {
            // The rows are the scaled word rows alone: divide them, and zero the mask's.
            for (Index t = 0; t < seq; ++t) {
                auto row = out.row(b * seq + t);
                if (batch.ids(b, t) == rule.mask_token_id)
                    row.setZero();
                else
                    row /= divisor;  // padded rows are zero and stay so
            }
            continue;
        }
        // Before positions or LayerNorm: the word rows scaled, then the position rows, then
        // LayerNorm, as the module orders them, for the sequence's real tokens.
        const auto table = pipeline.embedding().table();
        const float scale = pipeline.embedding().scale();
        RowMatrix<float> sums = RowMatrix<float>::Zero(seq, out.cols());
        std::vector<bool> real_rows(static_cast<std::size_t>(seq), false);
        seqembed::detail::for_each_position(
            batch, pipeline.numbering(), pipeline.padding_id(), b, b + 1,
            [&](Index, Index t, bool real, std::int64_t position) {
                if (!real) return;  // padded: zero, its id never read
                real_rows[static_cast<std::size_t>(t)] = true;
                const TokenId id = batch.ids(b, t);
                if (id != rule.mask_token_id)
                    sums.row(t) = (table.row(static_cast<Index>(id)).template cast<float>() * scale) / divisor;
                if constexpr (absolute) {
                    // The forward read this row: in the table, whatever Index's width.
                    const auto row = static_cast<Index>(pipeline.positions().offset() + position);
                    sums.row(t) += pipeline.positions().table().row(row).template cast<float>();
                } else {
                    (void)position;
                }
            });
        if (const auto* norm = pipeline.layer_norm()) sums = norm->forward(sums);
        for (Index t = 0; t < seq; ++t) {
            if (real_rows[static_cast<std::size_t>(t)])
                out.row(b * seq + t) = sums.row(t);
            else
                out.row(b * seq + t).setZero();
        }
    }
}

/// A row-sparse gradient from rows summed in double, keyed by table row.
inline RowGradient<float> row_gradient(const std::map<std::int64_t, Eigen::RowVectorXd>& sums, Index table_rows,
                                       Index width) {
    RowGradient<float> out;
    out.table_rows = table_rows;
    out.d_model = width;
    out.values.resize(static_cast<Index>(sums.size()), width);
    Index k = 0;
    for (const auto& [row, sum] : sums) {
        out.rows.push_back(row);
        out.values.row(k++) = sum.cast<float>();
    }
    return out;
}

/// The backward of apply_token_dropout. `grad`, the gradient of Model::forward's rows, becomes
/// the gradient of the rows the pipeline wrote: divided by the divisor, and zero for mask tokens,
/// where the rows were only divided. The rows apply_token_dropout computed again from the
/// tables (before positions or LayerNorm) are zeroed in `grad`, and the gradients of their
/// tables returned: through LayerNorm's backward, then to each token row (its gradient / the
/// divisor x the table's scale, as autograd takes (row x scale) / divisor; none for mask tokens)
/// and to each position row, in double per table row.
template <typename Pipeline>
PipelineGradients<float> token_dropout_backward(const TokenDropout& rule, const Pipeline& pipeline, const Batch& batch,
                                                RowMatrix<float>& grad) {
    const Index rows = batch.ids.rows();
    const Index seq = batch.ids.cols();
    const Index width = grad.cols();
    const auto counts = mask_token_counts(rule, pipeline, batch);
    const std::vector<std::int64_t>& masked = counts.first;
    const std::vector<std::int64_t>& attended = counts.second;
    constexpr bool absolute = has_position_table<Pipeline>;
    const auto* norm = pipeline.layer_norm();
    std::map<std::int64_t, Eigen::RowVectorXd> token_sums;
    std::map<std::int64_t, Eigen::RowVectorXd> position_sums;
    PipelineGradients<float> out;
    for (Index b = 0; b < rows; ++b) {
        const auto count = masked[static_cast<std::size_t>(b)];
        const auto real_count = attended[static_cast<std::size_t>(b)];
        if (count == 0 || real_count == 0) continue;
        const float divisor = token_dropout_divisor(rule, b, count, real_count);
        if (!absolute && norm == nullptr) {
            for (Index t = 0; t < seq; ++t) {
                auto row = grad.row(b * seq + t);
                if (batch.ids(b, t) == rule.mask_token_id)
                    row.setZero();
                else
                    row /= divisor;
            }
            continue;
        }
        // The sequence's real rows as apply_token_dropout made them: x = (token x scale) /
        // divisor + position, then LayerNorm; padded rows zero, so without a gradient.
        const auto table = pipeline.embedding().table();
        const float scale = pipeline.embedding().scale();
        std::vector<Index> real_t;
        std::vector<std::int64_t> position_rows;
        RowMatrix<float> x(seq, width);
        seqembed::detail::for_each_position(
            batch, pipeline.numbering(), pipeline.padding_id(), b, b + 1,
            [&](Index, Index t, bool real, std::int64_t position) {
                if (!real) return;
                auto row = x.row(static_cast<Index>(real_t.size()));
                const TokenId id = batch.ids(b, t);
                if (id != rule.mask_token_id)
                    row = (table.row(static_cast<Index>(id)).template cast<float>() * scale) / divisor;
                else
                    row.setZero();
                if constexpr (absolute) {
                    const std::int64_t at = pipeline.positions().offset() + position;
                    row += pipeline.positions().table().row(static_cast<Index>(at)).template cast<float>();
                    position_rows.push_back(at);
                } else {
                    (void)position;
                }
                real_t.push_back(t);
            });
        const auto n = static_cast<Index>(real_t.size());
        RowMatrix<float> g(n, width);
        for (Index k = 0; k < n; ++k) g.row(k) = grad.row(b * seq + real_t[static_cast<std::size_t>(k)]);
        for (Index t = 0; t < seq; ++t) grad.row(b * seq + t).setZero();
        RowMatrix<float> dx = g;
        if (norm != nullptr) {
            LayerNormGradients<float> ln = norm->backward(x.topRows(n), g);
            dx = std::move(ln.x);
            PipelineGradients<float> part;
            part.gamma = std::move(ln.gamma);
            part.beta = std::move(ln.beta);
            out.add(part);
        }
        const std::optional<TokenId> token_pad = pipeline.embedding().padding_idx();
        for (Index k = 0; k < n; ++k) {
            const TokenId id = batch.ids(b, real_t[static_cast<std::size_t>(k)]);
            if (id != rule.mask_token_id && id != token_pad) {
                const Eigen::RowVectorXd row = ((dx.row(k) / divisor) * scale).template cast<double>();
                auto [at, fresh] = token_sums.try_emplace(id, row);
                if (!fresh) at->second += row;
            }
            if constexpr (absolute) {
                const std::int64_t at_row = position_rows[static_cast<std::size_t>(k)];
                if (at_row == pipeline.positions().padding_idx()) continue;
                const Eigen::RowVectorXd row = dx.row(k).template cast<double>();
                auto [at, fresh] = position_sums.try_emplace(at_row, row);
                if (!fresh) at->second += row;
            }
        }
    }
    if (!token_sums.empty()) out.token = row_gradient(token_sums, pipeline.embedding().vocab_size(), width);
    if constexpr (absolute) {
        if (!position_sums.empty())
            out.positions = row_gradient(position_sums, pipeline.positions().max_positions(), width);
    }
    return out;
}

}  // namespace detail

/// @brief What io::Model::backward gives: the gradients of the stage's tables and of ELECTRA's or
///        ALBERT's projection.
struct ModelGradients {
    /// @brief Of the pipeline's tables (InputPipeline::backward's): the token table (OPT's with
    ///        project_in folded in, the table the stage holds: the checkpoint's table has this
    ///        gradient times project_in's weight), the position table (ERNIE's with its task row
    ///        folded in; none for a fixed sinusoid, ModelInputStage::fixed_positions), the
    ///        token-type table, LayerNorm (no beta for ModernBERT's, which has no bias).
    PipelineGradients<float> stage;
    /// @brief Of the projection's weight (out_features x in_features); empty without one.
    RowMatrix<float> projection_weight;
    /// @brief Of the projection's bias; empty without one.
    Eigen::Matrix<float, 1, Eigen::Dynamic> projection_bias;

    /// @brief Adds the gradients of another backward of the same model (accumulation over
    ///        several batches before a step).
    /// @param other the gradients to add.
    /// @throws shape_error if a table's or the projection's shape differs; this is then unchanged.
    void add(const ModelGradients& other) {
        ModelGradients sum = *this;
        sum.stage.add(other.stage);
        add_matrix(sum.projection_weight, other.projection_weight);
        add_matrix(sum.projection_bias, other.projection_bias);
        *this = std::move(sum);
    }

private:
    template <typename Matrix>
    static void add_matrix(Matrix& into, const Matrix& other) {
        if (other.size() == 0) return;
        if (into.size() == 0) {
            into = other;
            return;
        }
        if (into.rows() != other.rows() || into.cols() != other.cols())
            seqembed::detail::fail<shape_error>("gradient of the projection, ", other.rows(), " x ", other.cols(),
                                                ", added to one of ", into.rows(), " x ", into.cols());
        into += other;
    }
};

/// @brief A model's input stage, loaded by model_type: the family's pipeline (its positions, token
///        types, LayerNorm and padding rules), ELECTRA's or ALBERT's projection, the rotary stage of the
///        rotary families and the decoder's stage of the encoder-decoder ones.
///
/// forward() takes a Batch as the family's Hugging Face forward takes its keyword arguments
/// (input_ids, token_type_ids, attention_mask over the current or past + current tokens,
/// position_ids, a past length as StepOffsets) and gives what the model's first layer reads:
/// - bit for bit the framework's float32 output where the stage is gathers, adds and a scale;
/// - within the LayerNorm bound (docs/precision.md) where it has LayerNorm;
/// - to rounding where a matrix product is involved (ELECTRA's embeddings_project and ALBERT's
///   embedding_hidden_mapping_in, applied here;
///   OPT's project_in, folded into the token table at load).
/// Padded rows are zero unless the options asked for PaddedRows::computed, which gives the
/// framework's rows for them too.
/// @code
/// seqembed::PipelineOptions options;
/// options.padded_rows = seqembed::PaddedRows::computed;   // whole outputs, as Hugging Face's
/// seqembed::io::Model model = seqembed::io::load_model("roberta-base/", options);
/// seqembed::Batch batch(input_ids);
/// batch.padding = seqembed::Padding::from_mask(attention_mask);
/// seqembed::RowMatrix<float> hidden = model.forward(batch);   // (batch * seq) x hidden_size
/// @endcode
class Model {
public:
    /// @brief The stage of a family with a learned (or fixed sinusoidal) position table.
    using LearnedStage = LearnedModelInput;
    /// @brief The stage of a family without additive positions (T5, the rotary families).
    using LookupStage = LookupModelInput;
    /// @brief One position per token, as RotaryEmbedding::apply takes them.
    using PositionVector = Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>;

    /// @brief Wraps a loaded stage.
    /// @param stage a stage from a family loader (load_bert, ..., load_llama).
    explicit Model(LearnedStage stage) : m_stage(std::move(stage)) {}
    /// @brief Wraps a loaded stage.
    /// @param stage a stage from a family loader without additive positions (load_t5, load_llama, ...).
    explicit Model(LookupStage stage) : m_stage(std::move(stage)) {}

    /// @brief The family.
    /// @return config.json's model_type ("bert", "llama", ...).
    const std::string& model_type() const noexcept { return config().model_type; }
    /// @brief The config values the stage was built from.
    /// @return the family's ModelConfig.
    const ModelConfig& config() const noexcept {
        return std::visit([](const auto& stage) -> const ModelConfig& { return stage.config; }, m_stage);
    }
    /// @brief The rotary stage, to apply to Q and K in attention.
    /// @return the stage of the rotary families (Llama, ...), null for the others.
    const RotaryEmbedding<float>* rotary() const noexcept {
        return std::visit([](const auto& stage) { return stage.rotary ? &*stage.rotary : nullptr; }, m_stage);
    }
    /// @brief Gemma 3's and ModernBERT's rotary stage for their sliding-window layers (rotary()
    ///        is their global layers').
    /// @return the stage, or null for the other families.
    const RotaryEmbedding<float>* local_rotary() const noexcept {
        return std::visit([](const auto& stage) { return stage.local_rotary ? &*stage.local_rotary : nullptr; }, m_stage);
    }
    /// @brief The attention layers config.json gives (num_hidden_layers).
    /// @return their number, 0 when the config gives none.
    Index layers() const noexcept { return config().num_hidden_layers; }
    /// @brief The rotary stage attention layer `layer` applies to Q and K, by the family's rule:
    ///        rotary() or local_rotary() (Gemma 3's, ModernBERT's and OLMo 3's sliding-window
    ///        layers), or null for a layer without positions (Cohere 2's and EXAONE 4's
    ///        full-attention layers, SmolLM3's and Llama 4's no_rope_layers) and for the families
    ///        without RoPE. ModelInputStage::layer_positions holds the same for every layer.
    /// @param layer the layer, from 0.
    /// @return the stage, or null.
    /// @throws index_error for a layer outside [0, layers()) of a RoPE family (a negative one
    ///         for every family); value_error when config.json gives no layer count and the
    ///         family's layers differ.
    const RotaryEmbedding<float>* rotary_of_layer(Index layer) const {
        if (layer < 0) seqembed::detail::fail<index_error>("Model::rotary_of_layer: layer ", layer, " is negative");
        return std::visit(
            [&](const auto& stage) -> const RotaryEmbedding<float>* {
                if (!stage.rotary && !stage.local_rotary) return nullptr;
                if (stage.layer_positions.empty()) {
                    const detail::DecoderFamily* family = detail::decoder_family(model_type());
                    if (family != nullptr && family->layers != detail::LayerRule::every_layer)
                        seqembed::detail::fail<value_error>(
                            "Model::rotary_of_layer: config.json gives no num_hidden_layers, and the layers of "
                            "model_type '",
                            model_type(), "' differ in their positions");
                    return rotary();
                }
                if (layer >= static_cast<Index>(stage.layer_positions.size()))
                    seqembed::detail::fail<index_error>("Model::rotary_of_layer: layer ", layer, " is outside [0, ",
                                                        stage.layer_positions.size(),
                                                        ") (num_hidden_layers of model_type '", model_type(), "')");
                switch (stage.layer_positions[static_cast<std::size_t>(layer)]) {
                    case LayerPositions::rotary: return rotary();
                    case LayerPositions::local_rotary: return local_rotary();
                    case LayerPositions::none: return nullptr;
                }
                return nullptr;
            },
            m_stage);
    }
    /// @brief The ALiBi bias of BLOOM, MPT and ALiBi Falcon, to add to the attention scores
    ///        (Falcon's to q . k before its 1 / sqrt(head_dim) scaling: AlibiFamily::falcon).
    /// @return the bias, or null for the other families.
    const AlibiBias<float>* alibi() const noexcept {
        return std::visit([](const auto& stage) { return stage.alibi ? &*stage.alibi : nullptr; }, m_stage);
    }
    /// @brief ELECTRA's embeddings_project or ALBERT's embedding_hidden_mapping_in, which
    ///        forward() applies.
    /// @return the projection, or null.
    const Linear* projection() const noexcept {
        return std::visit([](const auto& stage) { return stage.projection ? &*stage.projection : nullptr; }, m_stage);
    }
    /// @brief Whether the family has a decoder stage (BART, mBART, Marian, Pegasus, M2M100 and the T5s).
    /// @return true when forward_decoder can be called.
    bool has_decoder() const noexcept {
        return std::visit([](const auto& stage) { return stage.decoder.has_value(); }, m_stage);
    }
    /// @brief Whether forward() takes explicit position ids, as the family's forward does (not
    ///        BART and its kin, Marian, Pegasus, M2M100, FSMT, TrOCR, the T5s, DistilBERT, BLOOM,
    ///        MPT, Funnel, Speech2Text, DPR, XLNet, Mamba, BridgeTower's two-tower model, whose
    ///        forward calls its text embeddings with the ids alone).
    /// @return true when Batch::position_ids may be set.
    bool takes_position_ids() const noexcept {
        const std::string& family = model_type();
        return !detail::is_bart_like(family) && !detail::is_marian_family(family) && !detail::is_t5_family(family) &&
               family != "distilbert" && !detail::is_m2m100_family(family) && family != "fsmt" &&
               family != "trocr" && !detail::is_alibi_family(family) &&
               family != "funnel" && family != "bridgetower" && family != "speech_to_text" && family != "dpr" &&
               family != "xlnet" && !detail::is_mamba_family(family);
    }
    /// @brief Whether forward() takes token type ids (BERT, ELECTRA, RoBERTa, ALBERT, DeBERTa
    ///        from their table; GPT-2, GPT-Neo, GPT-J and CodeGen from their token table). A
    ///        DeBERTa without a type table (type_vocab_size 0, as v3) takes them and adds
    ///        nothing, as its module does.
    /// @return true when Batch::token_types may be set.
    bool takes_token_types() const noexcept {
        if (detail::is_deberta_family(model_type())) return true;
        return std::visit([](const auto& stage) { return stage.pipeline.token_types() != nullptr; }, m_stage);
    }

    /// @brief The typed stage, for what Model does not wrap (forward_into, the tables).
    /// @return the stage of a learned-position family, or null.
    const LearnedStage* learned() const noexcept { return std::get_if<LearnedStage>(&m_stage); }
    /// @brief The typed stage of a family without additive positions.
    /// @return the stage, or null.
    const LookupStage* lookup() const noexcept { return std::get_if<LookupStage>(&m_stage); }
    /// @brief Mutable access to the typed stage (training mode, a stage's tables).
    /// @return the stage of a learned-position family, or null.
    LearnedStage* learned() noexcept { return std::get_if<LearnedStage>(&m_stage); }
    /// @brief Mutable access to the typed stage of a family without additive positions.
    /// @return the stage, or null.
    LookupStage* lookup() noexcept { return std::get_if<LookupStage>(&m_stage); }

    /// @brief Training mode (dropout) for the encoder's and the decoder's stage.
    /// @param training the new mode.
    void set_training(bool training) noexcept {
        std::visit(
            [&](auto& stage) {
                stage.pipeline.set_training(training);
                if (stage.decoder) stage.decoder->set_training(training);
            },
            m_stage);
    }

    /// @brief The model's (the encoder's) input stage over one batch, as the family's forward
    ///        computes it: what its first layer reads.
    /// @param batch input_ids and the keyword arguments the family's forward takes. Position ids
    ///        are as Hugging Face takes them: RoBERTa's and MPNet's are table rows (their forward
    ///        adds nothing), the others' positions (BART and OPT add 2).
    /// @return (batch * seq) x hidden_size (ELECTRA, ALBERT: after the projection).
    /// @throws value_error for inputs the family's forward does not take (position ids for BART,
    ///         mBART, Marian, Pegasus, M2M100, the T5s, DistilBERT, BLOOM and MPT; token types
    ///         for families without them; past tokens for the encoders of BART, mBART, Marian,
    ///         Pegasus and M2M100, DistilBERT, ALBERT, MPNet, ModernBERT, DeBERTa, ESM,
    ///         Longformer, SqueezeBERT, Nystromformer, YOSO and MRA); value_error for an ESM
    ///         sequence whose attended tokens are all mask tokens (its token dropout divides by
    ///         zero); as InputPipeline::forward.
    RowMatrix<float> forward(const Batch& batch) const {
        return std::visit(
            [&](const auto& stage) {
                std::optional<IdMatrix> rows;  // RoBERTa's position ids as positions, which `family` views
                const Batch family = family_batch(batch, stage.pipeline, "forward", rows);
                RowMatrix<float> out = stage.pipeline.forward(family);
                if (stage.token_dropout) detail::apply_token_dropout(*stage.token_dropout, stage.pipeline, family, out);
                if (!stage.projection) return out;
                RowMatrix<float> projected = stage.projection->forward(out);
                zero_padded_rows(family, stage.pipeline, projected);  // padded rows stay zero
                return projected;
            },
            m_stage);
    }

    /// @brief The decoder's input stage over one batch (decoder_input_ids), positions after the
    ///        past tokens as the decoder numbers them.
    /// @param batch the decoder's ids, padding (a mask over past + current tokens while decoding)
    ///        and step offsets (the past length).
    /// @return (batch * seq) x d_model.
    /// @throws value_error without a decoder stage (has_decoder()), or as forward.
    RowMatrix<float> forward_decoder(const Batch& batch) const {
        return std::visit(
            [&](const auto& stage) -> RowMatrix<float> {
                if (!stage.decoder)
                    seqembed::detail::fail<value_error>("model_type '", model_type(),
                                                        "' has no decoder stage (the encoder-decoders have one)");
                require_taken(batch, stage.decoder->token_types() != nullptr, "forward_decoder");
                return stage.decoder->forward(batch);
            },
            m_stage);
    }

    /// @brief The dropout call the next training forward of the (encoder's) stage takes, to give
    ///        to backward: read it before forward().
    /// @return the stage's dropout().calls().
    std::uint64_t next_call() const noexcept {
        return std::visit([](const auto& stage) { return stage.pipeline.dropout().calls(); }, m_stage);
    }

    /// @brief The gradients of forward(batch) from the gradient of its output, as autograd gives
    ///        them for the family's module: through ELECTRA's and ALBERT's projection, ESM's token
    ///        dropout and the pipeline (InputPipeline::backward), with the batch converted as
    ///        forward converts it (RoBERTa's and MPNet's position ids, DeBERTa-v3's unused type
    ///        ids).
    /// @param batch the forward's batch.
    /// @param grad_output (batch * seq) x the output's width (hidden_size after a projection).
    /// @param call the forward's dropout call (next_call() before it); none in evaluation mode.
    /// @return the gradients. The projection's input is the pipeline's output, computed again
    ///         (with the call's mask), so run the backward before a step changes the tables.
    /// @throws as forward for the batch; shape_error for grad_output of another shape;
    ///         value_error as InputPipeline::backward for the call.
    ModelGradients backward(const Batch& batch, const Eigen::Ref<const RowMatrix<float>>& grad_output,
                            std::optional<std::uint64_t> call = std::nullopt) const {
        return std::visit(
            [&](const auto& stage) {
                std::optional<IdMatrix> rows;  // RoBERTa's position ids as positions, which `family` views
                const Batch family = family_batch(batch, stage.pipeline, "backward", rows);
                const Index width = stage.projection ? stage.projection->weight.rows() : stage.pipeline.d_model();
                seqembed::detail::require_shape("gradient of Model::forward's output", grad_output.rows(),
                                                grad_output.cols(), family.ids.size(), width);
                stage.pipeline.check_forward(family);
                ModelGradients out;
                RowMatrix<float> grad = grad_output;
                if (stage.projection) {
                    zero_padded_rows(family, stage.pipeline, grad);  // forward zeroed these rows
                    const RowMatrix<float> x = stage_output(stage.pipeline, family, call);
                    LinearGradients linear = stage.projection->backward(x, grad);
                    out.projection_weight = std::move(linear.weight);
                    out.projection_bias = std::move(linear.bias);
                    grad = std::move(linear.x);
                }
                PipelineGradients<float> recomputed;
                if (stage.token_dropout)
                    recomputed = detail::token_dropout_backward(*stage.token_dropout, stage.pipeline, family, grad);
                out.stage = stage.pipeline.backward(family, grad, call);
                out.stage.add(recomputed);
                if (stage.fixed_positions) out.stage.positions = {};
                if (!stage.config.layer_norm_bias) out.stage.beta.resize(0);  // ModernBERT's: no bias
                return out;
            },
            m_stage);
    }

    /// @brief The gradients of forward_decoder(batch): the decoder pipeline's backward.
    /// @param batch the forward's batch.
    /// @param grad_output (batch * seq) x d_model.
    /// @param call the forward's dropout call (the decoder's dropout().calls() before it); none in
    ///        evaluation mode.
    /// @return the gradients of the decoder's tables. Where the checkpoint shares the token
    ///         table with the encoder, add both token gradients to train it as one table.
    /// @throws value_error without a decoder stage; as InputPipeline::backward.
    PipelineGradients<float> backward_decoder(const Batch& batch, const Eigen::Ref<const RowMatrix<float>>& grad_output,
                                              std::optional<std::uint64_t> call = std::nullopt) const {
        return std::visit(
            [&](const auto& stage) -> PipelineGradients<float> {
                if (!stage.decoder)
                    seqembed::detail::fail<value_error>("model_type '", model_type(),
                                                        "' has no decoder stage (the encoder-decoders have one)");
                require_taken(batch, stage.decoder->token_types() != nullptr, "backward_decoder");
                PipelineGradients<float> out = stage.decoder->backward(batch, grad_output, call);
                if (stage.fixed_positions) out.positions = {};
                return out;
            },
            m_stage);
    }

    /// @brief The position of every token as the family's forward computes it, for the rotary
    ///        stage (rotary()->apply(q, k, q_heads, k_heads, positions)) or to inspect a learned
    ///        table's rows: explicit position ids as given, else the family's rule (past + t for
    ///        BERT, GPT-2, GPT-Neo and the rotary decoders, past + t + 1 for PaliGemma, whose
    ///        forward numbers from 1; t for the encoders of BART, mBART,
    ///        Marian and Pegasus, DistilBERT, ALBERT, DeBERTa and ModernBERT; the mask's count for
    ///        OPT, -1 for its padded tokens; Qwen-VL's and GLM-4V's the mask's count, 1 for their
    ///        padded tokens, as get_rope_index; RoBERTa's, MPNet's and M2M100's from the ids, -1
    ///        for a pad id).
    /// @param batch as forward takes it.
    /// @return batch * seq positions, row b * seq + t (a learned table reads row offset +
    ///         position).
    /// @throws as forward's checks of the inputs' shapes, and for past tokens where the family's
    ///         forward takes none (the encoders of BART, mBART, Marian, Pegasus and M2M100,
    ///         DistilBERT, ALBERT, MPNet, ModernBERT, DeBERTa).
    PositionVector positions(const Batch& batch) const {
        return std::visit(
            [&](const auto& stage) {
                const auto& pipeline = stage.pipeline;
                require_no_past(batch, "positions");
                const std::optional<IdMatrix> rows = converted_position_ids(batch, pipeline);
                Batch family = rows ? with_position_ids(batch, *rows) : batch;
                if (ignores_position_ids()) family.position_ids.reset();
                seqembed::detail::require_batch_fits(family);
                PositionVector out(family.ids.size());
                const Index seq = family.ids.cols();
                // Qwen-VL's and GLM-4V's get_rope_index fills padded tokens' positions with 1;
                // PaliGemma's forward numbers from 1 (cache_position + 1).
                const bool padded_at_one = detail::numbers_by_rope_index(model_type()) && !family.position_ids;
                const std::int64_t first = model_type() == "paligemma" && !family.position_ids ? 1 : 0;
                seqembed::detail::for_each_position(
                    family, pipeline.numbering(), pipeline.padding_id(), 0, family.ids.rows(),
                    [&](Index b, Index t, bool real, std::int64_t position) {
                        out[b * seq + t] = padded_at_one && !real ? 1 : first + position;
                    });
                return out;
            },
            m_stage);
    }

    /// @brief Qwen-VL's and GLM-4V's three position ids (temporal, height, width) of every token
    ///        of a prompt with images and videos, for rotary()->apply_multimodal, and the rope
    ///        deltas that continue them while decoding: Hugging Face's get_rope_index
    ///        (transformers 4.49 to 5.0; docs/rotary-and-alibi.md names what later releases
    ///        change). Each sequence's real tokens in order: text by count; the tokens of an image
    ///        or a video by frame, row and column of its merged grid after the text before them;
    ///        the text after them from the block's largest id + 1. Qwen-VL's blocks follow a
    ///        vision start token; Qwen2.5-VL's video frames are frame x second_per_grid_t x
    ///        tokens_per_second apart, second_per_grid_t truncated to an integer first as
    ///        transformers 4.52 to 5.0 do (VisionGrids::whole_seconds; false: 4.49's float32
    ///        product); Qwen3-VL's each frame a block of its own. GLM-4V's blocks are the runs of
    ///        its image token, a video's frames those between its video start and end tokens,
    ///        each a block of its own (VisionBlocks::image_token_runs). Padded tokens take 1.
    ///        Without images and videos: the mask's count, as positions(batch).
    /// @param batch the prompt's ids and padding (no past tokens, step offsets or position ids).
    /// @param grids the processor's image_grid_thw, video_grid_thw and second_per_grid_ts; the
    ///        images and videos are taken in order across the batch.
    /// @return 3 x (batch * seq) positions and batch deltas.
    /// @throws value_error for a family other than Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3-VL-MoE,
    ///         GLM-4.1V and GLM-4.5V, or a batch with past tokens, step offsets or position ids;
    ///         index_error for more images or videos than grids;
    ///         value_error for a sequence whose tokens its text and grids do not cover, or
    ///         without a real token; shape_error for grids that are not n x 3.
    MultimodalPositions multimodal_positions(const Batch& batch, const VisionGrids& grids = {}) const {
        const VisionTokens& vision = vision_of("multimodal_positions");
        seqembed::detail::require_batch_fits(batch);
        bool offsets = false;
        for (Index b = 0; b < batch.ids.rows(); ++b) offsets = offsets || batch.offsets.of(b) != 0;
        if (batch.padding.past_length(batch.ids) != 0 || batch.position_ids || offsets)
            seqembed::detail::fail<value_error>(
                "Model::multimodal_positions(batch, grids) numbers a prompt: its batch takes neither past tokens, "
                "step offsets nor position ids (a decoding step: multimodal_positions(step, rope_deltas))");
        return detail::rope_index(batch, vision, grids);
    }

    /// @brief The three (equal) position ids of a decoding step's tokens after a multimodal
    ///        prompt, as Qwen-VL's and GLM-4V's forwards give them: past + t + its sequence's rope
    ///        delta, past the tokens its mask covers before the step (plus the step offsets).
    /// @param step the new tokens, with a mask over past + current tokens (or step offsets).
    /// @param rope_deltas multimodal_positions(prompt, grids).rope_deltas, one per sequence.
    /// @return 3 x (batch * seq) positions.
    /// @throws value_error for another family or a batch with position ids; shape_error for a
    ///         count of deltas other than the batch's.
    RotaryEmbedding<float>::MultimodalPositions multimodal_positions(const Batch& step,
                                                                      const std::vector<std::int64_t>& rope_deltas) const {
        (void)vision_of("multimodal_positions");
        seqembed::detail::require_batch_fits(step);
        if (step.position_ids)
            seqembed::detail::fail<value_error>("Model::multimodal_positions(step, rope_deltas) computes the step's "
                                                "positions: its batch takes no position ids");
        const Index rows = step.ids.rows(), seq = step.ids.cols();
        if (static_cast<Index>(rope_deltas.size()) != rows)
            seqembed::detail::fail<shape_error>("Model::multimodal_positions: ", rope_deltas.size(),
                                                " rope deltas for a batch of ", rows, " sequences");
        const Index past = step.padding.past_length(step.ids);
        RotaryEmbedding<float>::MultimodalPositions out(3, step.ids.size());
        for (Index b = 0; b < rows; ++b)
            for (Index t = 0; t < seq; ++t)
                out.col(b * seq + t).setConstant(static_cast<std::int64_t>(past + t) + step.offsets.of(b) +
                                                 rope_deltas[static_cast<std::size_t>(b)]);
        return out;
    }

private:
    /// The family's VisionTokens, or a value_error naming `call`.
    const VisionTokens& vision_of(const char* call) const {
        const LookupStage* stage = lookup();
        if (stage == nullptr || !stage->vision)
            seqembed::detail::fail<value_error>("Model::", call, ": model_type '", model_type(),
                                                "' has no multimodal positions (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, "
                                                "Qwen3-VL-MoE, GLM-4.1V and GLM-4.5V do)");
        return *stage->vision;
    }

    /// ESM-2's rotary module numbers the tokens 0 .. seq - 1 whatever position_ids its model's
    /// forward is given (they reach only ESM-1b's absolute table).
    bool ignores_position_ids() const noexcept { return model_type() == "esm" && lookup() != nullptr; }

    /// Throws unless the family's forward takes what the batch holds (`type_table`: whether the
    /// stage has a token-type table).
    void require_taken(const Batch& batch, bool type_table, const char* call) const {
        if (batch.position_ids && !takes_position_ids())
            seqembed::detail::fail<value_error>("Model::", call, ": model_type '", model_type(),
                                                "' takes no position ids (its forward numbers tokens itself)");
        if (batch.token_types && !type_table && !detail::is_deberta_family(model_type()))
            seqembed::detail::fail<value_error>("Model::", call, ": model_type '", model_type(),
                                                "' takes no token type ids");
    }

    /// Throws for past tokens (a mask wider than the ids, or step offsets) where the family's
    /// encoder takes none: BART's and Marian's (their decoders do), DistilBERT, ALBERT, MPNet,
    /// ModernBERT, DeBERTa and the text towers of two-tower models (but BLIP's and Kosmos-2's),
    /// whose forwards take no cache.
    void require_no_past(const Batch& batch, const char* call) const {
        if (config().decoder_only) return;  // a decoder alone (Donut's MBart) takes them
        const std::string& type = model_type();
        // Longformer, SqueezeBERT, the Nystromformer kin, Funnel, ConvBERT and I-BERT take no cache either.
        const bool encoder_only = type == "distilbert" || type == "albert" || type == "mpnet" || type == "modernbert" ||
                                  type == "esm" || type == "longformer" || type == "squeezebert" ||
                                  type == "nystromformer" || type == "yoso" || type == "mra" || type == "funnel" ||
                                  type == "convbert" || type == "ibert" || type == "openai-gpt" || type == "dpr" ||
                                  detail::is_deberta_family(type) || detail::is_text_tower_without_cache(type);
        if (!encoder_only && !detail::is_bart_like(type) && !detail::is_marian_family(type) &&
            !detail::is_m2m100_family(type) && type != "fsmt")
            return;
        bool past = batch.padding.past_length(batch.ids) > 0;
        for (Index b = 0; b < batch.ids.rows(); ++b) past = past || batch.offsets.of(b) != 0;
        if (past)
            seqembed::detail::fail<value_error>("Model::", call, ": model_type '", type,
                                                "' takes no past tokens (a mask wider than the ids, or step offsets)",
                                                encoder_only ? "" : " in its encoder; forward_decoder takes them");
    }

    /// The batch as the family's forward takes it, after checking that it takes what the batch
    /// holds: RoBERTa's and MPNet's position ids made positions (into `rows`, which the batch
    /// returned views), DeBERTa-v3's unused type ids and ESM-2's ignored position ids dropped.
    template <typename Pipeline>
    Batch family_batch(const Batch& batch, const Pipeline& pipeline, const char* call,
                       std::optional<IdMatrix>& rows) const {
        require_taken(batch, pipeline.token_types() != nullptr, call);
        require_no_past(batch, call);
        rows = converted_position_ids(batch, pipeline);
        Batch family = rows ? with_position_ids(batch, *rows) : batch;
        if (pipeline.token_types() == nullptr) family.token_types.reset();  // DeBERTa-v3's, unused
        if (ignores_position_ids()) family.position_ids.reset();
        return family;
    }

    /// Zeroes the rows of `rows` that are padded tokens under PaddedRows::zero.
    template <typename Pipeline>
    static void zero_padded_rows(const Batch& batch, const Pipeline& pipeline, RowMatrix<float>& rows) {
        if (pipeline.padded_rows() != PaddedRows::zero) return;
        const Index seq = batch.ids.cols();
        seqembed::detail::for_each_position(batch, pipeline.numbering(), pipeline.padding_id(), 0, batch.ids.rows(),
                                            [&](Index b, Index t, bool real, std::int64_t) {
                                                if (!real) rows.row(b * seq + t).setZero();
                                            });
    }

    /// The pipeline's output of a forward with dropout call `call` (none: in evaluation), for a
    /// projection's backward: an evaluation copy's forward, then the call's mask.
    template <typename Pipeline>
    static RowMatrix<float> stage_output(const Pipeline& pipeline, const Batch& batch,
                                         std::optional<std::uint64_t> call) {
        Pipeline evaluation = pipeline;  // shares the tables and the call counter; its own mode
        evaluation.set_training(false);
        RowMatrix<float> out = evaluation.forward(batch);
        if (call && pipeline.dropout().threshold() != 0)
            pipeline.dropout().apply(out.data(), out.size(), *call, 0);
        return out;
    }

    static Batch with_position_ids(const Batch& batch, const IdMatrix& position_ids) {
        Batch result = batch;
        result.position_ids = position_ids;
        return result;
    }

    /// RoBERTa's and MPNet's position ids are rows of their table (their forward adds nothing to
    /// them); their pipeline's are positions from the table's offset.
    template <typename Pipeline>
    std::optional<IdMatrix> converted_position_ids(const Batch& batch, const Pipeline& pipeline) const {
        if (!batch.position_ids || !detail::takes_table_rows(model_type())) return std::nullopt;
        if constexpr (std::is_same_v<typename std::decay_t<decltype(pipeline.positions())>,
                                     LearnedPositionalEmbedding<float>>) {
            const TokenIds& given = *batch.position_ids;
            IdMatrix rows(given.rows(), given.cols());
            const std::int64_t offset = pipeline.positions().offset();
            for (Index b = 0; b < given.rows(); ++b)
                for (Index t = 0; t < given.cols(); ++t)
                    rows(b, t) = seqembed::detail::checked_add("position id", given(b, t), -offset);
            return rows;
        } else {
            return std::nullopt;
        }
    }

    std::variant<LearnedStage, LookupStage> m_stage;
};

/// @brief DeBERTa's and DeBERTa-v2's (DeBERTa-v3's checkpoints are deberta-v2) input stage:
///        word embeddings, + the learned position table by index when position_biased_input
///        (true by default; DeBERTa-v3's configs say false: its positions act in attention alone),
///        + the token-type table after it when type_vocab_size > 0 (type 0 without type ids),
///        LayerNorm (layer_norm_eps, 1e-7 by default). The module multiplies its output by the
///        attention mask, so padded rows are zero whatever options.padded_rows asks. Tensors
///        `deberta.embeddings.*` or `embeddings.*`. The stage's type follows the config:
///        Model::learned() with a position table, Model::lookup() without.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores.
/// @param split which rows of the token table to read, as load_bert.
/// @return the model's stage.
/// @throws file_error, format_error as the readers, and for an embedding_size other than
///         hidden_size (DeBERTa's embed_proj before its LayerNorm has no preset); value_error as
///         load_bert.
inline Model load_deberta(const std::filesystem::path& directory, const PipelineOptions& options = {},
                          const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_deberta");
    const ModelConfig& config = checkpoint.config();
    if (config.embedding_size != config.hidden_size)
        seqembed::detail::fail<format_error>(detail::path_name(directory / "config.json"), ": 'embedding_size' ",
                                             config.embedding_size, " differs from 'hidden_size' ", config.hidden_size,
                                             ": DeBERTa's embed_proj before its LayerNorm has no preset");
    const PipelineOptions family = detail::family_options(options, "load_deberta", PositionNumbering::sequence_index);
    if (!config.position_biased_input)
        return Model(detail::deberta_stage(checkpoint, NoPositions<float>(config.hidden_size), family));
    return Model(detail::deberta_stage(
        checkpoint,
        checkpoint.positions({"deberta.embeddings.position_embeddings.weight", "embeddings.position_embeddings.weight"},
                             config.max_positions, config.hidden_size, {}),
        family));
}

namespace detail {

/// ERNIE's task_type_embeddings row 0, which its forward adds after the positions to every token
/// when use_task_id and no task type ids are given, folded into the position table: an owned
/// copy whose row r is position row r + task row 0 (float additions in another order: within the
/// LayerNorm bound, not bit for bit).
inline LearnedPositionalEmbedding<float> with_task_row(const Checkpoint& checkpoint,
                                                       const LearnedPositionalEmbedding<float>& positions,
                                                       const std::string& prefix, const nlohmann::json& config,
                                                       const std::string& name) {
    const ModelConfig& model = checkpoint.config();
    const Index tasks = positive_key(config, name, {"task_type_vocab_size"});
    const Tensor<float> task = checkpoint.matrix({prefix + "embeddings.task_type_embeddings.weight",
                                                  "embeddings.task_type_embeddings.weight"},
                                                 tasks, model.embedding_size, "task_type_vocab_size x hidden_size");
    RowMatrix<float> table = positions.table();
    table.rowwise() += Eigen::Map<const Eigen::Matrix<float, 1, Eigen::Dynamic>>(task.data(), model.embedding_size);
    return LearnedPositionalEmbedding<float>::from_weights(table, LearnedPositionsOptions::bert());  // ERNIE's: by index
}

/// The rotary stage of the rotary encoders: RoFormer's interleaved pairs over hidden_size /
/// num_attention_heads, base 10000, its table's rows and none past them; Nomic's BERT's over
/// head_dim x rotary_emb_fraction (of n_embd / n_head) from rotary_emb_base, halves unless
/// rotary_emb_interleaved, any position (its module computes them), dynamic NTK past
/// max_trained_positions when rotary_scaling_factor is set.
inline RotaryOptions encoder_rotary_options(const nlohmann::json& config, const ModelConfig& model,
                                            const std::string& name) {
    const Index head_dim = model.hidden_size / positive_key(config, name, {"num_attention_heads", "n_head"});
    if (model.model_type != "nomic_bert") {
        RotaryOptions rope = RotaryOptions::hugging_face(head_dim, 10000.0);
        rope.layout = RotaryLayout::interleaved;
        rope.max_positions = model.max_positions;
        return rope;
    }
    const auto number = [&](const char* key) {
        const nlohmann::json* value = find_key(config, {key});
        if (value == nullptr || !value->is_number())
            seqembed::detail::fail<format_error>(name, ": '", key, "' is ",
                                                 value == nullptr ? std::string("missing") : value->dump(),
                                                 ", not a number");
        return value->get<double>();
    };
    // rotary_emb_dim = head_dim * rotary_emb_fraction (a float the module takes as the width).
    const double rotated = static_cast<double>(head_dim) * number("rotary_emb_fraction");
    if (!(rotated > 0) || rotated != std::floor(rotated) || rotated > static_cast<double>(head_dim))
        seqembed::detail::fail<format_error>(name, ": 'rotary_emb_fraction' gives ", rotated, " rotated of ", head_dim,
                                             " dimensions: Nomic's BERT without rotary positions (its learned "
                                             "table) has no preset");
    RotaryOptions rope = RotaryOptions::hugging_face(head_dim, number("rotary_emb_base"));
    rope.rotary_dim = static_cast<Index>(rotated);
    rope.layout =
        boolean_key(config, name, "rotary_emb_interleaved") ? RotaryLayout::interleaved : RotaryLayout::halves;
    rope.max_positions = model.max_positions;
    rope.beyond = BeyondTable::compute;
    const nlohmann::json* factor = find_key(config, {"rotary_scaling_factor"});
    if (factor != nullptr && !factor->is_null()) {
        if (!factor->is_number())
            seqembed::detail::fail<format_error>(name, ": 'rotary_scaling_factor' is ", factor->dump(),
                                                 ", not a number or null");
        if (factor->get<double>() != 0) {  // `if getattr(config, "rotary_scaling_factor", None)`
            rope.scaling = RotaryScaling::dynamic;
            rope.factor = factor->get<double>();
            rope.original_max_position_embeddings = positive_key(config, name, {"max_trained_positions"});
        }
    }
    return rope;
}

}  // namespace detail

/// @brief The input stage of the encoders whose embeddings are BERT's or RoBERTa's with a
///        difference, by config.json's model_type (io/detail/encoder_families.hpp):
///        - RoBERTa's positions (from row pad_token_id + 1, counting ids other than
///          pad_token_id): longformer, data2vec-text, xmod (`roberta.`), xlm-roberta-xl
///          (`roberta.`, no LayerNorm in its embeddings);
///        - BERT's (past + t): big_bird (`bert.`; word rows times sqrt(hidden_size) when
///          rescale_embeddings), megatron-bert (`bert.`, no LayerNorm), ernie (task_type_embeddings
///          row 0 added when use_task_id, folded into the position table), splinter,
///          squeezebert (`transformer.`), rembert (input_embedding_size wide, then the encoder's
///          embedding_hidden_mapping_in as `projection`), bert-generation (`bert.`, no token
///          types);
///        - t + 2 in a table of max_position_embeddings + 2 rows: nystromformer, yoso, mra;
///        - roberta-prelayernorm (`roberta_prelayernorm.`), ibert (`ibert.`; quant_mode false):
///          RoBERTa's; convbert (`convbert.`): BERT's, embedding_size wide, then its
///          embeddings_project when embedding_size differs from hidden_size; funnel (`funnel.`):
///          word, then its layer_norm (eps 1e-9), no table (its relative positions and token
///          types act in attention);
///        - roformer: word + token type, LayerNorm, its embeddings_project when embedding_size
///          differs from hidden_size, and `rotary`: interleaved pairs over hidden_size /
///          num_attention_heads, base 10000, max_position_embeddings rows (its sinusoidal table
///          is an nn.Embedding: positions past it are refused);
///        - nomic_bert (Nomic's BERT: nomic-embed-text-v1 and v1.5, nomic-bert-2048, CodeRankEmbed;
///          remote code, NomicBertConfig's GPT-2 keys): word + token type (0 when not given), its
///          emb_ln (LayerNorm, layer_norm_epsilon), tensors under `bert.`, `model.` or none, the
///          vocabulary rounded up to pad_vocab_size_multiple, and `rotary`: halves (unless
///          rotary_emb_interleaved) over n_embd / n_head x rotary_emb_fraction from
///          rotary_emb_base, positions 0 .. seq - 1 of the padded batch, any length; dynamic NTK
///          past max_trained_positions when rotary_scaling_factor is set;
///        - the text towers of two-tower models (keys from text_config over the text config
///          class's defaults, and a legacy text_config_dict over it where the config class reads
///          one; or the text model's config, chinese_clip_text_model and so on): BERT's
///          (positions 0 .. seq - 1) in chinese_clip and align (`text_model.`) and flava
///          (`flava.text_model.` or `text_model.`); RoBERTa's in altclip (XLM-R under
///          `text_model.roberta.` or `roberta.`), clap (`text_model.`) and bridgetower
///          (`bridgetower.text_model.` or `text_model.`);
///        - git (`git.`): GIT's text embeddings, word + position (past + t), LayerNorm;
///        - dpr: BERT's under `bert_model.` in DPR's context and question encoders and reader
///          (`ctx_encoder.`, `question_encoder.`, `span_predictor.encoder.` before it).
///        Word + token type, then the position, then LayerNorm, as BertEmbeddings (Longformer,
///        SqueezeBERT and MRA: word + position, then the token type); tensors under the family's
///        prefix or none. Longformer, SqueezeBERT, Nystromformer, YOSO and MRA take no past tokens. Explicit position ids are rows of the table for the
///        RoBERTa and Nystromformer kinds (io::Model::forward), as their forwards take them.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the model's stage (Model::learned(), or Model::lookup() for RoFormer, Nomic's BERT and
///         Funnel).
/// @throws file_error, format_error as the readers, and for a model_type that is not one of
///         these encoders; value_error as load_bert.
inline Model load_encoder(const std::filesystem::path& directory, const PipelineOptions& options = {},
                          const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_encoder");
    const ModelConfig& config = checkpoint.config();
    const std::string name = detail::path_name(directory / "config.json");
    const detail::EncoderFamily* family = detail::encoder_family(config.model_type);
    if (family == nullptr)
        seqembed::detail::fail<format_error>(name, ": model_type '", config.model_type,
                                             "' is not one of load_encoder's encoders (load_model reads it)");
    if (config.model_type == "blip" || config.model_type == "blip_text_model")
        return Model(load_blip_text(directory, options, split));  // two towers under their own names
    const nlohmann::json json = detail::language_config(detail::read_json_object(directory / "config.json"), name);
    const std::string prefix = family->prefix;
    // Nomic's fine-tunes may be saved under `model.` too.
    const bool nomic = config.model_type == "nomic_bert";
    const auto names = [&](const std::string& tail) {
        std::vector<std::string> out;
        std::istringstream outer(family->outer_prefixes);
        for (std::string before; outer >> before;) out.push_back(before + prefix + "embeddings." + tail);
        out.push_back(prefix + "embeddings." + tail);
        out.push_back("embeddings." + tail);
        if (nomic) out.push_back("model.embeddings." + tail);
        return out;
    };
    const Index width = config.embedding_size;
    const bool rescaled = config.model_type == "big_bird" && detail::boolean_key(json, name, "rescale_embeddings");
    TokenEmbedding<float> token = checkpoint.token_embedding(
        names("word_embeddings.weight"), width, rescaled ? EmbeddingScale::sqrt_d_model() : EmbeddingScale::none());
    const auto finish = [&](auto& pipeline) {
        if (family->token_types)
            pipeline.set_token_types(checkpoint.token_types(names("token_type_embeddings.weight"), width),
                                     TokenTypeOptions{family->types_after_positions ? TokenTypeOrder::after_positions
                                                                                    : TokenTypeOrder::before_positions,
                                                      true});
        if (nomic)  // NomicBertModel's emb_ln, after its embeddings (BERT's name when converted)
            pipeline.set_layer_norm(checkpoint.layer_norm({prefix + "emb_ln.", "emb_ln.", "model.emb_ln.",
                                                           prefix + "embeddings.LayerNorm.", "embeddings.LayerNorm."},
                                                          width));
        else if (family->layer_norm)  // (Funnel's is layer_norm)
            pipeline.set_layer_norm(checkpoint.layer_norm(
                names(config.model_type == "funnel" ? "layer_norm." : "LayerNorm."), width));
    };
    std::optional<Linear> projection;
    if (config.model_type == "rembert")
        projection = detail::linear(checkpoint, {prefix + "encoder.embedding_hidden_mapping_in.",
                                                 "encoder.embedding_hidden_mapping_in."});
    if ((config.model_type == "roformer" || config.model_type == "convbert") &&
        config.embedding_size != config.hidden_size)
        projection = detail::linear(checkpoint, {prefix + "embeddings_project.", "embeddings_project."});

    if (family->positions == detail::EncoderPositions::none) {
        InputPipeline<float, NoPositions<float>> pipeline(
            std::move(token), NoPositions<float>(width),
            detail::family_options(options, "load_encoder", PositionNumbering::sequence_index));
        finish(pipeline);
        return Model(LookupModelInput{config, std::move(pipeline), std::move(projection), std::nullopt});
    }

    if (family->positions == detail::EncoderPositions::rotary) {
        InputPipeline<float, NoPositions<float>> pipeline(
            std::move(token), NoPositions<float>(width),
            detail::family_options(options, "load_encoder", PositionNumbering::sequence_index));
        finish(pipeline);
        const RotaryOptions rope = detail::encoder_rotary_options(json, config, name);
        LookupModelInput stage{config, std::move(pipeline), std::move(projection), std::nullopt};
        stage.rotary = seqembed::detail::run_renaming_error<format_error, value_error>(
            [&] { return RotaryEmbedding<float>(rope); }, name, ": its rotary options are invalid: ");
        stage.layer_positions = detail::layer_positions(json, config.model_type, name);
        return Model(std::move(stage));
    }
    const bool from_ids = family->positions == detail::EncoderPositions::from_ids;
    const bool plus_2 = family->positions == detail::EncoderPositions::index_plus_2;
    const std::int64_t padding_idx = config.pad_token_id.value_or(1);
    LearnedPositionalEmbedding<float> positions = checkpoint.positions(
        names("position_embeddings.weight"), config.max_positions + (plus_2 ? 2 : 0), width,
        from_ids ? LearnedPositionsOptions::roberta(padding_idx) : plus_2 ? LearnedPositionsOptions::bart()
                                                                          : LearnedPositionsOptions::bert());
    if (config.model_type == "ernie" && detail::boolean_key(json, name, "use_task_id"))
        positions = detail::with_task_row(checkpoint, positions, prefix, json, name);
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        std::move(token), std::move(positions),
        from_ids ? detail::family_options(options, "load_encoder", PositionNumbering::non_padding_ids, padding_idx)
                 : detail::family_options(options, "load_encoder", PositionNumbering::sequence_index));
    finish(pipeline);
    return Model(LearnedModelInput{config, std::move(pipeline), std::move(projection), std::nullopt});
}

/// @brief ESM's input stage (ESM-2, ESM-1b, ESM-1v): word embeddings, ESM's token dropout
///        (token_dropout: the rows of mask_token_id zero, and each sequence's others times
///        (1 - 0.15 * 0.8) / (1 - its share of mask tokens), in every forward), then with
///        position_embedding_type "absolute" (ESM-1b, EsmConfig's default) the learned table
///        numbered from the ids as RoBERTa's (from row pad_token_id + 1) and, when
///        emb_layer_norm_before, the LayerNorm (`layer_norm`); padded rows zero, as the module
///        multiplies by the attention mask. With "rotary" (ESM-2): no table, and `rotary`: halves
///        over hidden_size / num_attention_heads, positions 0 .. seq - 1 whatever position_ids
///        say, the frequencies read from the checkpoint's inv_freq buffer
///        (`esm.encoder.layer.0.attention.self.rotary_embeddings.inv_freq`: ESM-2's trained
///        values went through float16, so that recomputing them differs), else base 10000.
///        ESM's attention rotates Q after scaling it by head_dim^-0.5. Tensors `esm.embeddings.*`
///        or `embeddings.*`.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options threads, stores; padded rows are zero and dropout 0 whatever it asks, as
///        EsmEmbeddings multiplies by the mask and has no dropout.
/// @param split must be whole: ESM's vocabulary (33 tokens) is not split.
/// @return the model's stage (Model::lookup() for ESM-2, Model::learned() for ESM-1b).
/// @throws file_error, format_error as the readers, for token_dropout without mask_token_id, an
///         unknown position_embedding_type, or an inv_freq buffer of another size;
///         value_error as load_bert and for a split.
inline Model load_esm(const std::filesystem::path& directory, const PipelineOptions& options = {},
                      const VocabularySplit& split = {}) {
    if (!split.is_whole())
        seqembed::detail::fail<value_error>("load_esm: ESM's vocabulary is not split (VocabularySplit{", split.ranks,
                                            ", ", split.rank, "})");
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_esm");
    const ModelConfig& config = checkpoint.config();
    const std::string name = detail::path_name(directory / "config.json");
    const nlohmann::json json = detail::read_json_object(directory / "config.json");
    const nlohmann::json* given = detail::find_key(json, {"position_embedding_type"});
    const std::string kind = given == nullptr ? "absolute" : given->is_string() ? given->get<std::string>() : given->dump();
    if (kind != "absolute" && kind != "rotary")
        seqembed::detail::fail<format_error>(name, ": 'position_embedding_type' is \"", kind,
                                             "\"; ESM's are \"absolute\" and \"rotary\"");
    std::optional<TokenDropout> dropout;
    if (config.token_dropout) {
        if (!config.mask_token_id)
            seqembed::detail::fail<format_error>(name, ": 'token_dropout' is true but there is no 'mask_token_id'");
        dropout = TokenDropout{*config.mask_token_id};
    }
    const auto names = [](const std::string& tail) {
        return std::vector<std::string>{"esm.embeddings." + tail, "embeddings." + tail};
    };
    // 1 - mask_ratio_train as torch multiplies a float32 tensor by it: rounded once to float.
    const EmbeddingScale scale = dropout ? EmbeddingScale::value(1 - 0.15 * 0.8) : EmbeddingScale::none();
    PipelineOptions family = options;
    family.padded_rows = PaddedRows::zero;  // embeddings * attention_mask
    family.dropout = 0.0;                   // EsmEmbeddings has none ("copied incorrectly from BERT")
    const bool before = detail::boolean_key(json, name, "emb_layer_norm_before");
    if (kind == "absolute") {
        const std::int64_t padding_idx = config.pad_token_id.value_or(1);
        InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
            checkpoint.token_embedding(names("word_embeddings.weight"), config.hidden_size, scale),
            checkpoint.positions(names("position_embeddings.weight"), config.max_positions, config.hidden_size,
                                 LearnedPositionsOptions::roberta(padding_idx)),
            detail::family_options(family, "load_esm", PositionNumbering::non_padding_ids, padding_idx));
        if (before) pipeline.set_layer_norm(checkpoint.layer_norm(names("layer_norm."), config.hidden_size));
        LearnedModelInput stage{config, std::move(pipeline), std::nullopt, std::nullopt};
        stage.token_dropout = dropout;
        return Model(std::move(stage));
    }
    InputPipeline<float, NoPositions<float>> pipeline(
        checkpoint.token_embedding(names("word_embeddings.weight"), config.hidden_size, scale),
        NoPositions<float>(config.hidden_size),
        detail::family_options(family, "load_esm", PositionNumbering::sequence_index));
    if (before) pipeline.set_layer_norm(checkpoint.layer_norm(names("layer_norm."), config.hidden_size));
    RotaryOptions rope =
        RotaryOptions::hugging_face(config.hidden_size / detail::positive_key(json, name, {"num_attention_heads"}));
    rope.max_positions = config.max_positions;
    rope.beyond = BeyondTable::compute;  // its module recomputes cos and sin for any length
    const std::vector<std::string> buffer = {"esm.encoder.layer.0.attention.self.rotary_embeddings.inv_freq",
                                             "encoder.layer.0.attention.self.rotary_embeddings.inv_freq"};
    if (checkpoint.has(buffer)) {
        const Tensor<float> inv_freq = checkpoint.vector(buffer, rope.head_dim / 2, "head_dim / 2");
        rope.inverse_frequencies.assign(inv_freq.data(), inv_freq.data() + rope.head_dim / 2);
    }
    LookupModelInput stage{config, std::move(pipeline), std::nullopt, std::nullopt};
    stage.rotary = seqembed::detail::run_renaming_error<format_error, value_error>(
        [&] { return RotaryEmbedding<float>(rope); }, name, ": its rotary options are invalid: ");
    stage.layer_positions = detail::layer_positions(json, config.model_type, name);
    stage.token_dropout = dropout;
    return Model(std::move(stage));
}

/// @brief Loads a Hugging Face model's input stage by its config.json's model_type: bert,
///        electra, roberta (and xlm-roberta, camembert), distilbert, albert, mpnet, modernbert,
///        deberta and deberta-v2 (load_deberta), gpt2, gpt_neo and gpt_bigcode, bart, mbart,
///        plbart, mvp, blenderbot, bigbird_pegasus and led (load_bart), opt and biogpt
///        (load_opt), xglm (load_xglm), xlm and flaubert (load_xlm), fsmt (load_fsmt), trocr and the
///        vision-encoder-decoders whose decoder is TrOCR's (load_trocr), marian and pegasus,
///        m2m_100 (NLLB) and nllb-moe, t5, mt5, umt5, longt5 and switch_transformers (load_t5),
///        the rotary decoders
///        load_rotary_decoder reads (llama, mistral, mixtral, qwen2, qwen2_moe,
///        qwen3, qwen3_moe, gemma, gemma2, gemma3_text, gemma3, phi, phi3, gpt_neox, stablelm,
///        starcoder2, olmo, olmo2, granite, gptj, codegen, falcon, cohere, and those of
///        detail/decoder_families.hpp), the ALiBi decoders bloom and mpt, the encoders of
///        load_encoder (with the BERT- and RoBERTa-like text towers of chinese_clip, align,
///        flava, altclip, clap and bridgetower) and esm (load_esm), the text towers of CLIP and
///        its kin (load_clip_text: clip, siglip, siglip2, owlvit, owlv2, xclip, groupvit, clipseg),
///        BLIP's (load_blip_text), Kosmos-2's (load_kosmos2_text), xlnet (load_xlnet),
///        openai-gpt (load_gpt2), speech_to_text's decoder (load_speech2text), whisper's decoder
///        (load_whisper), mamba, mamba2 and falcon_mamba (load_mamba): the
///        family loaders of io/models.hpp and this file.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and
///        its shards).
/// @param options dropout, threads, stores, padded rows; positions left unset (the family's rule).
/// @param split which rows of the token tables to read (the family loader's split: this rank's
///        part alone, as a shard table, whose forward is the pipeline's partial_forward_into,
///        summed over the ranks, then finish_forward_into; the default, the whole tables).
/// @return the model's stage.
/// @throws file_error, format_error as the loaders (a model_type without a loader is a
///         format_error naming the file and the families there are); value_error for options
///         that contradict the family's rule.
inline Model load_model(const std::filesystem::path& directory, const PipelineOptions& options = {},
                        const VocabularySplit& split = {}) {
    const std::string family = ModelConfig::read(directory / "config.json").model_type;
    if (family == "bert") return Model(load_bert(directory, options, split));
    if (family == "electra") return Model(load_electra(directory, options, split));
    if (detail::is_roberta_family(family)) return Model(load_roberta(directory, options, split));
    if (detail::is_gpt2_family(family)) return Model(load_gpt2(directory, options, split));
    if (detail::is_bart_like(family)) return Model(load_bart(directory, options, split));
    if (family == "opt" || family == "biogpt") return Model(load_opt(directory, options, split));
    if (family == "xglm") return Model(load_xglm(directory, options, split));
    if (detail::is_xlm_family(family)) return Model(load_xlm(directory, options, split));
    if (detail::is_marian_family(family)) return Model(load_marian(directory, options, split));
    if (detail::is_t5_family(family)) return Model(load_t5(directory, options, split));
    if (detail::is_m2m100_family(family)) return Model(load_m2m100(directory, options, split));
    if (family == "fsmt") return Model(load_fsmt(directory, options, split));
    if (detail::is_kosmos2_family(family)) return Model(load_kosmos2_text(directory, options, split));
    if (family == "trocr") return Model(load_trocr(directory, options, split));
    if (family == "bloom") return Model(load_bloom(directory, options, split));
    if (family == "mpt") return Model(load_mpt(directory, options, split));
    if (family == "distilbert") return Model(load_distilbert(directory, options, split));
    if (family == "albert") return Model(load_albert(directory, options, split));
    if (family == "mpnet") return Model(load_mpnet(directory, options, split));
    if (family == "modernbert") return Model(load_modernbert(directory, options, split));
    if (detail::is_deberta_family(family)) return load_deberta(directory, options, split);
    if (family == "blip" || family == "blip_text_model") return Model(load_blip_text(directory, options, split));
    if (detail::encoder_family(family) != nullptr) return load_encoder(directory, options, split);
    if (family == "esm") return load_esm(directory, options, split);
    if (detail::is_clip_text_family(family)) return Model(load_clip_text(directory, options, split));
    if (family == "whisper") return Model(load_whisper(directory, options, split));
    if (detail::is_mamba_family(family)) return Model(load_mamba(directory, options, split));
    if (family == "xlnet") return Model(load_xlnet(directory, options, split));
    if (family == "speech_to_text") return Model(load_speech2text(directory, options, split));
    return Model(load_rotary_decoder(directory, options, split));  // ModelConfig::read refused every other type
}

}  // namespace seqembed::io
