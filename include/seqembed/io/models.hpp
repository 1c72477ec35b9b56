/// @file io/models.hpp
/// @brief The input stage of a Hugging Face model, built from its directory (config.json and
///        model.safetensors, or model.safetensors.index.json and the shards it names) in one
///        call: BERT, ELECTRA, RoBERTa, GPT-2, BART, OPT, Marian, T5
///        and the rotary decoders Llama, Mistral, Qwen2, Gemma, Phi and GPT-NeoX (with their
///        rotary stage, from the config).
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../layer_norm.hpp"
#include "../learned_positions.hpp"
#include "../no_positions.hpp"
#include "../pipeline.hpp"
#include "../rotary.hpp"
#include "../sinusoidal.hpp"
#include "../token_embedding.hpp"
#include "../token_types.hpp"
#include "detail/checkpoint_files.hpp"
#include "detail/config_json.hpp"
#include "detail/path_name.hpp"
#include "errors.hpp"
#include "rotary_config.hpp"
#include "safetensors.hpp"

namespace seqembed::io {

/// @brief What the input stage needs from a Hugging Face config.json, under the family's own key
///        names (hidden_size, d_model or n_embd; max_position_embeddings or n_positions; ...).
struct ModelConfig {
    /// @brief The family: "bert", "electra", "roberta", "gpt2", "bart", "opt", "marian", "t5",
    ///        "llama", "mistral", "qwen2", "gemma", "phi", "gpt_neox".
    std::string model_type;
    /// @brief Rows of the token table.
    Index vocab_size = 0;
    /// @brief Width of the model (hidden_size, d_model or n_embd).
    Index hidden_size = 0;
    /// @brief Rows of the position table the model was trained with (max_position_embeddings or
    ///        n_positions); for the rotary families, max_position_embeddings (the rows of the
    ///        rotary table); 0 for T5.
    Index max_positions = 0;
    /// @brief Rows of the token-type table (BERT, ELECTRA, RoBERTa); 0 without one.
    Index type_vocab_size = 0;
    /// @brief Width of the embedding stage: ELECTRA's embedding_size, OPT's word_embed_proj_dim
    ///        for its token table; hidden_size elsewhere.
    Index embedding_size = 0;
    /// @brief LayerNorm epsilon of the embedding stage (layer_norm_eps; 1e-5 for BART, whose
    ///        nn.LayerNorm takes torch's default); 0 without LayerNorm.
    double layer_norm_eps = 0;
    /// @brief The padding id, when the config has one.
    std::optional<TokenId> pad_token_id;
    /// @brief BART and Marian: token rows are multiplied by sqrt(d_model).
    bool scale_embedding = false;

    /// @brief Reads config.json.
    /// @param file the config.json file.
    /// @return its values.
    /// @throws file_error if it cannot be read; format_error for invalid JSON, a missing or
    ///         ill-typed key (named with the file), or a family seqembed has no preset for.
    static ModelConfig read(const std::filesystem::path& file);
};

/// @brief A dense layer y = x W^T + b, as nn.Linear: ELECTRA's embeddings_project, applied to the
///        stage's output when embedding_size differs from hidden_size.
struct Linear {
    /// @brief out_features x in_features.
    RowMatrix<float> weight;
    /// @brief out_features values, or none.
    Eigen::Matrix<float, 1, Eigen::Dynamic> bias;

    /// @brief Applies the layer (Eigen's matrix product: equal to PyTorch's to rounding, not
    ///        bit for bit).
    /// @param x rows x in_features.
    /// @return rows x out_features.
    /// @throws shape_error if x.cols() != in_features.
    RowMatrix<float> forward(const Eigen::Ref<const RowMatrix<float>>& x) const {
        if (x.cols() != weight.cols())
            seqembed::detail::fail<shape_error>("Linear input has ", x.cols(), " columns, expected ", weight.cols());
        RowMatrix<float> y = x * weight.transpose();
        if (bias.size() != 0) y.rowwise() += bias;
        return y;
    }
};

/// @brief A model's input stage: the pipeline (token table, positions, token types, LayerNorm, as
///        the family has them), its configuration, ELECTRA's projection, and the rotary stage
///        of the families whose positions act in attention.
/// @tparam Positional LearnedPositionalEmbedding<float> or NoPositions<float>.
template <typename Positional>
struct ModelInputStage {
    /// @brief The model's config.json.
    ModelConfig config;
    /// @brief The stage, ready: pipeline.forward(input_ids, Padding::from_mask(attention_mask))
    ///        or, with token types, pipeline.forward(input_ids, token_type_ids, padding).
    InputPipeline<float, Positional> pipeline;
    /// @brief ELECTRA's embeddings_project when the checkpoint has it; empty elsewhere.
    std::optional<Linear> projection;
    /// @brief The model's rotary stage, to apply to Q and K in attention (rotary->apply): the
    ///        RotaryOptions read_rotary_config reads from config.json (rope_theta or
    ///        rotary_emb_base, head_dim or hidden_size / num_attention_heads,
    ///        partial_rotary_factor or rotary_pct, rope_scaling), with max_positions =
    ///        max_position_embeddings rows, exact precision. Filled by load_llama, load_mistral,
    ///        load_qwen2, load_gemma, load_phi and load_gpt_neox; empty for the families without
    ///        RoPE (BERT, ELECTRA, RoBERTa, GPT-2, BART, OPT, Marian, T5).
    std::optional<RotaryEmbedding<float>> rotary;
};

/// @brief A learned-position model's stage (BERT, ELECTRA, RoBERTa, GPT-2, BART, OPT, Marian).
using LearnedModelInput = ModelInputStage<LearnedPositionalEmbedding<float>>;
/// @brief A stage without additive positions (T5; the rotary families: positions act inside
///        attention, through `rotary`).
using LookupModelInput = ModelInputStage<NoPositions<float>>;

namespace detail {

/// A checkpoint's tensors (model.safetensors or its shards) and what the family's tensors are
/// called in it.
class Checkpoint {
public:
    Checkpoint(const std::filesystem::path& directory, ModelConfig config)
        : m_config(std::move(config)), m_files(directory) {}

    const ModelConfig& config() const noexcept { return m_config; }

    /// Whether any of the names is in the file.
    bool has(std::initializer_list<std::string> names) const {
        for (const std::string& name : names)
            if (m_files.find(name) != nullptr) return true;
        return false;
    }

    /// The tensor under the first name the file has, as rows x cols floats (any stored float
    /// type, widened exactly); `what` names the expected shape in messages.
    Tensor<float> matrix(std::initializer_list<std::string> names, Index rows, Index cols, const char* what) const {
        for (const std::string& name : names) {
            const SafetensorsFile* file = m_files.find(name);
            if (file == nullptr) continue;
            Tensor<float> tensor = file->matrix<float>(name);
            if (tensor.shape()[0] != rows || tensor.shape()[1] != cols)
                seqembed::detail::fail<format_error>(file->path(), ": tensor '", name, "' is ", tensor.shape()[0],
                                                     " x ", tensor.shape()[1], ", expected ", what, " = ", rows,
                                                     " x ", cols, " (from config.json)");
            return tensor;
        }
        missing(names, std::to_string(rows) + " x " + std::to_string(cols));
    }

    /// The vector under the first name the file has, `size` floats.
    Tensor<float> vector(std::initializer_list<std::string> names, Index size, const char* what) const {
        for (const std::string& name : names) {
            const SafetensorsFile* file = m_files.find(name);
            if (file == nullptr) continue;
            Tensor<float> tensor = file->vector<float>(name);
            if (tensor.shape()[0] != size)
                seqembed::detail::fail<format_error>(file->path(), ": tensor '", name, "' has ", tensor.shape()[0],
                                                     " values, expected ", what, " = ", size, " (from config.json)");
            return tensor;
        }
        missing(names, std::to_string(size) + " values");
    }

    /// The token table at `names` (vocab_size x width), viewed in the file.
    TokenEmbedding<float> token_embedding(std::initializer_list<std::string> names, Index width,
                                          EmbeddingScale scale) const {
        const Tensor<float> table = matrix(names, m_config.vocab_size, width, "vocab_size x width");
        TokenEmbeddingOptions options;
        options.scale = scale;
        return TokenEmbedding<float>::view(table.data(), m_config.vocab_size, width, options, table.owner());
    }

    /// The learned position table at `names` (rows x width), viewed in the file.
    LearnedPositionalEmbedding<float> positions(std::initializer_list<std::string> names, Index rows, Index width,
                                                const LearnedPositionsOptions& options) const {
        const Tensor<float> table = matrix(names, rows, width, "position rows x width");
        return LearnedPositionalEmbedding<float>::view(table.data(), rows, width, options, table.owner());
    }

    /// The LayerNorm whose weight and bias are at weight_names and bias_names.
    LayerNorm<float> layer_norm(std::initializer_list<std::string> weight_names,
                                std::initializer_list<std::string> bias_names, Index width) const {
        const Tensor<float> gamma = vector(weight_names, width, "LayerNorm width");
        const Tensor<float> beta = vector(bias_names, width, "LayerNorm width");
        return LayerNorm<float>::from_weights(Eigen::Map<const LayerNorm<float>::Vector>(gamma.data(), width),
                                              Eigen::Map<const LayerNorm<float>::Vector>(beta.data(), width),
                                              m_config.layer_norm_eps);
    }

    /// The token-type table at `names` (type_vocab_size x width), viewed in the file.
    TokenTypeEmbedding<float> token_types(std::initializer_list<std::string> names, Index width) const {
        const Tensor<float> table = matrix(names, m_config.type_vocab_size, width, "type_vocab_size x width");
        return TokenTypeEmbedding<float>::view(table.data(), m_config.type_vocab_size, width, table.owner());
    }

private:
    [[noreturn]] void missing(std::initializer_list<std::string> names, const std::string& shape) const {
        std::string spelled;
        for (const std::string& name : names) spelled += (spelled.empty() ? "'" : " or '") + name + "'";
        seqembed::detail::fail<format_error>(m_files.source(), ": has no tensor ", spelled, " (expected ", shape, ")");
    }

    ModelConfig m_config;
    CheckpointFiles m_files;
};

inline PipelineOptions with_numbering(PipelineOptions options, PositionNumbering numbering) {
    options.positions = numbering;
    return options;
}

inline LearnedModelInput bert_family(const Checkpoint& checkpoint, const std::string& prefix,
                                     const PipelineOptions& options, std::int64_t position_offset,
                                     PositionNumbering numbering) {
    const ModelConfig& config = checkpoint.config();
    const Index width = config.embedding_size;
    const auto name = [&](const std::string& tail) { return prefix + "embeddings." + tail; };
    const auto bare = [&](const std::string& tail) { return std::string("embeddings.") + tail; };
    LearnedPositionsOptions positions_options;
    positions_options.offset = position_offset;
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        checkpoint.token_embedding({name("word_embeddings.weight"), bare("word_embeddings.weight")}, width,
                                   EmbeddingScale::none()),
        checkpoint.positions({name("position_embeddings.weight"), bare("position_embeddings.weight")},
                             config.max_positions, width, positions_options),
        with_numbering(options, numbering));
    pipeline.set_token_types(
        checkpoint.token_types({name("token_type_embeddings.weight"), bare("token_type_embeddings.weight")}, width));
    pipeline.set_layer_norm(checkpoint.layer_norm({name("LayerNorm.weight"), bare("LayerNorm.weight")},
                                                  {name("LayerNorm.bias"), bare("LayerNorm.bias")}, width));
    return {config, std::move(pipeline), std::nullopt, std::nullopt};
}

/// The families whose positions act in attention as RoPE.
inline bool is_rotary_family(const std::string& family) {
    return family == "llama" || family == "mistral" || family == "qwen2" || family == "gemma" || family == "phi" ||
           family == "gpt_neox";
}

/// The rotary stage config.json describes, its errors naming the file and the key.
inline RotaryEmbedding<float> rotary_stage(const std::filesystem::path& file) {
    const std::string name = path_name(file);
    const nlohmann::json config = read_json_object(file);
    RotaryOptions options = rotary_options_from_json(config, name);
    // RotaryEmbedding names its options; here the keys they came from are named with the file.
    if (options.head_dim % 2 != 0) {
        if (find_key(config, {"head_dim"}) != nullptr)
            seqembed::detail::fail<format_error>(name, ": 'head_dim' is ", options.head_dim,
                                                 ", not even (RoPE rotates pairs of dimensions)");
        seqembed::detail::fail<format_error>(name, ": head_dim = 'hidden_size' / 'num_attention_heads' = ",
                                             options.head_dim, " is odd (RoPE rotates pairs of dimensions)");
    }
    options.max_positions = positive_key(config, name, {"max_position_embeddings", "n_positions"});
    return seqembed::detail::run_renaming_error<format_error, value_error>(
        [&] { return RotaryEmbedding<float>(options); }, name, ": its rotary options are invalid: ");
}

/// A rotary family's stage: the token table at `names` (times `scale`), no additive positions,
/// and the rotary stage from config.json.
inline LookupModelInput rotary_family(const std::filesystem::path& directory, std::initializer_list<std::string> names,
                                      EmbeddingScale scale, const PipelineOptions& options) {
    const Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"));
    const ModelConfig& config = checkpoint.config();
    InputPipeline<float, NoPositions<float>> pipeline(checkpoint.token_embedding(names, config.hidden_size, scale),
                                                      NoPositions<float>(config.hidden_size), options);
    return {config, std::move(pipeline), std::nullopt, rotary_stage(directory / "config.json")};
}

}  // namespace detail

inline ModelConfig ModelConfig::read(const std::filesystem::path& file) {
    const std::string name = detail::path_name(file);
    const nlohmann::json config = detail::read_json_object(file);
    ModelConfig result;
    const nlohmann::json* type = detail::find_key(config, {"model_type"});
    if (type == nullptr || !type->is_string()) seqembed::detail::fail<format_error>(name, ": has no string 'model_type'");
    result.model_type = type->get<std::string>();
    const std::string& family = result.model_type;
    const bool rotary = detail::is_rotary_family(family);
    const bool known = rotary || family == "bert" || family == "electra" || family == "roberta" ||
                       family == "gpt2" || family == "bart" || family == "opt" || family == "marian" || family == "t5";
    if (!known)
        seqembed::detail::fail<format_error>(name, ": model_type '", family, "' has no preset (bert, electra, roberta, "
                                             "gpt2, bart, opt, marian, t5, llama, mistral, qwen2, gemma, phi, "
                                             "gpt_neox)");
    result.vocab_size = detail::positive_key(config, name, {"vocab_size"});
    result.hidden_size = detail::positive_key(config, name, {"hidden_size", "d_model", "n_embd"});
    const bool positions = family != "t5";  // the rotary families: rows of the rotary table
    result.max_positions = positions ? detail::positive_key(config, name, {"max_position_embeddings", "n_positions"}) : 0;
    if (family == "bert" || family == "electra" || family == "roberta")
        result.type_vocab_size = detail::positive_key(config, name, {"type_vocab_size"});
    result.embedding_size = result.hidden_size;
    if (family == "electra") {
        const Index embedding_size = detail::positive_key(config, name, {"embedding_size"}, false);
        if (embedding_size != 0) result.embedding_size = embedding_size;
    }
    if (family == "opt") {
        const Index projected = detail::positive_key(config, name, {"word_embed_proj_dim"}, false);
        if (projected != 0) result.embedding_size = projected;
    }
    if (family == "bert" || family == "electra" || family == "roberta")
        result.layer_norm_eps = detail::epsilon_key(config, name, {"layer_norm_eps"}, 1e-12);
    if (family == "bart") result.layer_norm_eps = 1e-5;  // nn.LayerNorm(d_model): torch's default
    if (const nlohmann::json* pad = detail::find_key(config, {"pad_token_id"})) {
        if (!pad->is_number_integer())
            seqembed::detail::fail<format_error>(name, ": 'pad_token_id' is ", pad->dump(), ", not an integer");
        result.pad_token_id = pad->get<std::int64_t>();
    }
    if (const nlohmann::json* scale = detail::find_key(config, {"scale_embedding"})) {
        if (!scale->is_boolean())
            seqembed::detail::fail<format_error>(name, ": 'scale_embedding' is ", scale->dump(), ", not a boolean");
        result.scale_embedding = scale->get<bool>();
    }
    return result;
}

/// @brief BERT's input stage: word + token type, + position (by index), LayerNorm
///        (layer_norm_eps). Tensors `bert.embeddings.*` or `embeddings.*`.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores (positions are set to the family's rule).
/// @return the stage.
/// @throws file_error, format_error (naming the file and the tensor or key) as the readers.
inline LearnedModelInput load_bert(const std::filesystem::path& directory, const PipelineOptions& options = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"));
    return detail::bert_family(checkpoint, "bert.", options, 0, PositionNumbering::sequence_index);
}

/// @brief ELECTRA's input stage (as BERT's, embedding_size wide) and its embeddings_project when
///        embedding_size differs from hidden_size. Tensors `electra.embeddings.*` or
///        `embeddings.*`, `electra.embeddings_project.*` or `embeddings_project.*`.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores.
/// @return the stage; `projection` maps its output to hidden_size.
/// @throws file_error, format_error as the readers.
inline LearnedModelInput load_electra(const std::filesystem::path& directory, const PipelineOptions& options = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"));
    LearnedModelInput stage =
        detail::bert_family(checkpoint, "electra.", options, 0, PositionNumbering::sequence_index);
    const ModelConfig& config = checkpoint.config();
    if (checkpoint.has({"electra.embeddings_project.weight", "embeddings_project.weight"})) {
        const Tensor<float> weight = checkpoint.matrix({"electra.embeddings_project.weight", "embeddings_project.weight"},
                                                       config.hidden_size, config.embedding_size,
                                                       "hidden_size x embedding_size");
        const Tensor<float> bias =
            checkpoint.vector({"electra.embeddings_project.bias", "embeddings_project.bias"}, config.hidden_size, "hidden_size");
        Linear projection;
        projection.weight = Eigen::Map<const RowMatrix<float>>(weight.data(), config.hidden_size, config.embedding_size);
        projection.bias = Eigen::Map<const Eigen::Matrix<float, 1, Eigen::Dynamic>>(bias.data(), config.hidden_size);
        stage.projection = std::move(projection);
    }
    return stage;
}

/// @brief RoBERTa's input stage: as BERT's, positions counted over real tokens from row
///        padding_idx + 1 (create_position_ids_from_input_ids). Tensors `roberta.embeddings.*` or
///        `embeddings.*`. Give it Padding::from_mask(attention_mask) or Padding::by_id(pad).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores.
/// @return the stage.
/// @throws file_error, format_error as the readers.
inline LearnedModelInput load_roberta(const std::filesystem::path& directory, const PipelineOptions& options = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"));
    const std::int64_t padding_idx = checkpoint.config().pad_token_id.value_or(1);
    return detail::bert_family(checkpoint, "roberta.", options, padding_idx + 1, PositionNumbering::real_tokens);
}

/// @brief GPT-2's input stage: wte + wpe (by index), no scale, no LayerNorm. Tensors
///        `transformer.wte.weight` or `wte.weight`, and wpe likewise.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores.
/// @return the stage.
/// @throws file_error, format_error as the readers.
inline LearnedModelInput load_gpt2(const std::filesystem::path& directory, const PipelineOptions& options = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"));
    const ModelConfig& config = checkpoint.config();
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        checkpoint.token_embedding({"transformer.wte.weight", "wte.weight"}, config.hidden_size, EmbeddingScale::none()),
        checkpoint.positions({"transformer.wpe.weight", "wpe.weight"}, config.max_positions, config.hidden_size, {}),
        detail::with_numbering(options, PositionNumbering::sequence_index));
    return {config, std::move(pipeline), std::nullopt, std::nullopt};
}

/// @brief BART's encoder input stage: tokens x sqrt(d_model) when scale_embedding, + learned
///        positions at offset 2 (by index), layernorm_embedding (eps 1e-5). Tensors
///        `model.shared.weight` or `model.encoder.embed_tokens.weight` (with or without `model.`),
///        `model.encoder.embed_positions.weight`, `model.encoder.layernorm_embedding.*`.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores.
/// @return the stage.
/// @throws file_error, format_error as the readers.
inline LearnedModelInput load_bart(const std::filesystem::path& directory, const PipelineOptions& options = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"));
    const ModelConfig& config = checkpoint.config();
    const Index width = config.hidden_size;
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        checkpoint.token_embedding({"model.shared.weight", "model.encoder.embed_tokens.weight", "shared.weight",
                                    "encoder.embed_tokens.weight"},
                                   width, config.scale_embedding ? EmbeddingScale::sqrt_d_model() : EmbeddingScale::none()),
        checkpoint.positions({"model.encoder.embed_positions.weight", "encoder.embed_positions.weight"},
                             config.max_positions + 2, width, LearnedPositionsOptions::bart()),
        detail::with_numbering(options, PositionNumbering::sequence_index));
    pipeline.set_layer_norm(checkpoint.layer_norm(
        {"model.encoder.layernorm_embedding.weight", "encoder.layernorm_embedding.weight"},
        {"model.encoder.layernorm_embedding.bias", "encoder.layernorm_embedding.bias"}, width));
    return {config, std::move(pipeline), std::nullopt, std::nullopt};
}

/// @brief OPT's decoder input stage: tokens (through project_in when word_embed_proj_dim differs
///        from hidden_size: the projected table is computed once, at load) + learned positions at
///        offset 2, counted over real tokens (from the attention mask), no scale, no LayerNorm.
///        Tensors `model.decoder.embed_tokens.weight`, `model.decoder.embed_positions.weight`,
///        `model.decoder.project_in.weight` (with or without `model.`).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores.
/// @return the stage.
/// @throws file_error, format_error as the readers.
inline LearnedModelInput load_opt(const std::filesystem::path& directory, const PipelineOptions& options = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"));
    const ModelConfig& config = checkpoint.config();
    const Index width = config.hidden_size;
    const std::initializer_list<std::string> tokens = {"model.decoder.embed_tokens.weight", "decoder.embed_tokens.weight"};
    std::optional<TokenEmbedding<float>> embedding;
    TokenEmbeddingOptions unscaled;
    unscaled.scale = EmbeddingScale::none();
    if (config.embedding_size != width) {
        const Tensor<float> table = checkpoint.matrix(tokens, config.vocab_size, config.embedding_size,
                                                      "vocab_size x word_embed_proj_dim");
        const Tensor<float> project = checkpoint.matrix({"model.decoder.project_in.weight", "decoder.project_in.weight"},
                                                        width, config.embedding_size, "hidden_size x word_embed_proj_dim");
        const RowMatrix<float> projected =
            Eigen::Map<const RowMatrix<float>>(table.data(), config.vocab_size, config.embedding_size) *
            Eigen::Map<const RowMatrix<float>>(project.data(), width, config.embedding_size).transpose();
        embedding = TokenEmbedding<float>::from_weights(projected, unscaled);
    } else {
        embedding = checkpoint.token_embedding(tokens, width, EmbeddingScale::none());
    }
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        std::move(*embedding),
        checkpoint.positions({"model.decoder.embed_positions.weight", "decoder.embed_positions.weight"},
                             config.max_positions + 2, width, LearnedPositionsOptions::bart()),
        detail::with_numbering(options, PositionNumbering::real_tokens));
    return {config, std::move(pipeline), std::nullopt, std::nullopt};
}

/// @brief Marian's encoder input stage: tokens x sqrt(d_model) when scale_embedding, + the
///        sinusoidal table in Hugging Face Marian's layout (by index). The checkpoint's
///        `model.encoder.embed_positions.weight` is used when present (bit for bit what the model
///        adds); otherwise the table is computed (SinusoidalOptions::hf_marian(), correctly
///        rounded, which may differ from Hugging Face's numpy table in the last bit).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores.
/// @return the stage.
/// @throws file_error, format_error as the readers.
inline LearnedModelInput load_marian(const std::filesystem::path& directory, const PipelineOptions& options = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"));
    const ModelConfig& config = checkpoint.config();
    const Index width = config.hidden_size;
    const std::initializer_list<std::string> table = {"model.encoder.embed_positions.weight",
                                                      "encoder.embed_positions.weight"};
    std::optional<LearnedPositionalEmbedding<float>> positions;
    if (checkpoint.has(table)) {
        positions = checkpoint.positions(table, config.max_positions, width, {});
    } else {
        SinusoidalOptions sinusoidal = SinusoidalOptions::hf_marian();
        sinusoidal.max_positions = config.max_positions;
        positions = LearnedPositionalEmbedding<float>::from_weights(
            SinusoidalPositionalEncoding<float>(width, sinusoidal).table());
    }
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        checkpoint.token_embedding({"model.encoder.embed_tokens.weight", "model.shared.weight", "encoder.embed_tokens.weight",
                                    "shared.weight"},
                                   width, config.scale_embedding ? EmbeddingScale::sqrt_d_model() : EmbeddingScale::none()),
        std::move(*positions), detail::with_numbering(options, PositionNumbering::sequence_index));
    return {config, std::move(pipeline), std::nullopt, std::nullopt};
}

/// @brief T5's input stage: the shared token table, no scale, no positions (T5's relative bias
///        acts in attention). Tensors `shared.weight` or `encoder.embed_tokens.weight`.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores.
/// @return the stage.
/// @throws file_error, format_error as the readers.
inline LookupModelInput load_t5(const std::filesystem::path& directory, const PipelineOptions& options = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"));
    const ModelConfig& config = checkpoint.config();
    InputPipeline<float, NoPositions<float>> pipeline(
        checkpoint.token_embedding({"shared.weight", "encoder.embed_tokens.weight"}, config.hidden_size,
                                   EmbeddingScale::none()),
        NoPositions<float>(config.hidden_size), options);
    return {config, std::move(pipeline), std::nullopt, std::nullopt};
}

/// @brief Llama's input stage: the token table, no scale, no additive positions, and the rotary
///        stage from config.json (rope_theta, head_dim or hidden_size / num_attention_heads,
///        rope_scaling: Llama 3.1's llama3 rule and the others). Tensors
///        `model.embed_tokens.weight` or `embed_tokens.weight`.
/// @code
/// auto llama = seqembed::io::load_llama("Llama-3.1-8B/");
/// seqembed::RowMatrix<float> x = llama.pipeline.forward(input_ids, seqembed::Padding::from_mask(mask));
/// // in each attention layer, after the Q and K projections:
/// llama.rotary->apply(q, k, num_attention_heads, num_key_value_heads, positions);
/// @endcode
/// The rotary table has max_position_embeddings rows, computed at load (131072 x 128 floats,
/// 64 MiB, for Llama 3.1).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores.
/// @return the stage; `rotary` is set.
/// @throws file_error, format_error (naming the file and the tensor or key) as the readers and
///         read_rotary_config, and for a head_dim or rotary_dim the rotation cannot use (odd).
inline LookupModelInput load_llama(const std::filesystem::path& directory, const PipelineOptions& options = {}) {
    return detail::rotary_family(directory, {"model.embed_tokens.weight", "embed_tokens.weight"}, EmbeddingScale::none(),
                                 options);
}

/// @brief Mistral's input stage: as Llama's (`model.embed_tokens.weight`, no scale), the rotary
///        stage from config.json (its head_dim key when given, as Mistral-Nemo's 128 differs
///        from hidden_size / num_attention_heads).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores.
/// @return the stage; `rotary` is set.
/// @throws file_error, format_error as load_llama.
inline LookupModelInput load_mistral(const std::filesystem::path& directory, const PipelineOptions& options = {}) {
    return detail::rotary_family(directory, {"model.embed_tokens.weight", "embed_tokens.weight"}, EmbeddingScale::none(),
                                 options);
}

/// @brief Qwen2's (and Qwen2.5's) input stage: as Llama's (`model.embed_tokens.weight`, no
///        scale), the rotary stage from config.json (rope_scaling yarn with `type` or
///        `rope_type`, as the model cards add it for long contexts).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores.
/// @return the stage; `rotary` is set.
/// @throws file_error, format_error as load_llama.
inline LookupModelInput load_qwen2(const std::filesystem::path& directory, const PipelineOptions& options = {}) {
    return detail::rotary_family(directory, {"model.embed_tokens.weight", "embed_tokens.weight"}, EmbeddingScale::none(),
                                 options);
}

/// @brief Gemma's input stage: `model.embed_tokens.weight` times sqrt(hidden_size), and the rotary
///        stage from config.json (head_dim key: 256 for gemma-7b, not 3072 / 16).
///
/// Hugging Face multiplies by torch.tensor(hidden_size**0.5, dtype=hidden_states.dtype): the
/// Python double sqrt(hidden_size), rounded once to float32, then one float32 multiply per value.
/// EmbeddingScale::sqrt_d_model() computes sqrt in double (std::sqrt, correctly rounded, as
/// Python's `**0.5` is for these integers) and TokenEmbedding<float> rounds it once to float: the
/// same factor, so the rows are equal bit for bit.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores.
/// @return the stage; `rotary` is set.
/// @throws file_error, format_error as load_llama.
inline LookupModelInput load_gemma(const std::filesystem::path& directory, const PipelineOptions& options = {}) {
    return detail::rotary_family(directory, {"model.embed_tokens.weight", "embed_tokens.weight"},
                                 EmbeddingScale::sqrt_d_model(), options);
}

/// @brief Phi's (phi-1, phi-1.5, phi-2) input stage: `model.embed_tokens.weight`, no scale, and
///        the rotary stage from config.json: the first int(partial_rotary_factor * head_dim)
///        dimensions of a head rotate (phi-2: 32 of 80), the rest pass unchanged.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout (embd_pdrop's place), threads, stores.
/// @return the stage; `rotary` is set.
/// @throws file_error, format_error as load_llama.
inline LookupModelInput load_phi(const std::filesystem::path& directory, const PipelineOptions& options = {}) {
    return detail::rotary_family(directory, {"model.embed_tokens.weight", "embed_tokens.weight"}, EmbeddingScale::none(),
                                 options);
}

/// @brief GPT-NeoX's (and Pythia's) input stage: `gpt_neox.embed_in.weight`, no scale, and the
///        rotary stage from config.json: base rotary_emb_base, the first int(head_size *
///        rotary_pct) dimensions of a head (Pythia: 0.25).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores.
/// @return the stage; `rotary` is set.
/// @throws file_error, format_error as load_llama.
inline LookupModelInput load_gpt_neox(const std::filesystem::path& directory, const PipelineOptions& options = {}) {
    return detail::rotary_family(directory, {"gpt_neox.embed_in.weight", "embed_in.weight"}, EmbeddingScale::none(),
                                 options);
}

}  // namespace seqembed::io
