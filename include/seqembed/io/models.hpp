/// @file io/models.hpp
/// @brief The input stage of a Hugging Face model, built from its directory (config.json and
///        model.safetensors, or model.safetensors.index.json and the shards it names) in one
///        call: BERT, ELECTRA, RoBERTa, DistilBERT, ALBERT, MPNet, GPT-2, BART, OPT, Marian, T5,
///        BLOOM, MPT and the rotary decoders (Llama, Mistral, Qwen, Gemma, Phi, GPT-NeoX, ... and
///        the families of detail/decoder_families.hpp), with their rotary stage from the config;
///        io/model.hpp adds DeBERTa, the encoders of detail/encoder_families.hpp and ESM. Each
///        loader sets its family's position rule.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <initializer_list>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../alibi.hpp"
#include "../layer_norm.hpp"
#include "../learned_positions.hpp"
#include "../no_positions.hpp"
#include "../pipeline.hpp"
#include "../rotary.hpp"
#include "../sinusoidal.hpp"
#include "../token_embedding.hpp"
#include "../token_types.hpp"
#include "../vocabulary_shard.hpp"
#include "detail/checkpoint_files.hpp"
#include "detail/config_json.hpp"
#include "detail/decoder_families.hpp"
#include "detail/encoder_families.hpp"
#include "detail/path_name.hpp"
#include "errors.hpp"
#include "rotary_config.hpp"
#include "safetensors.hpp"
#include "vision_positions.hpp"

namespace seqembed::io {

/// @brief What the input stage needs from a Hugging Face config.json, under the family's own key
///        names (hidden_size, d_model or n_embd; max_position_embeddings or n_positions; ...).
struct ModelConfig {
    /// @brief The family: "bert", "electra", "roberta" ("xlm-roberta", "camembert"),
    ///        "distilbert", "albert", "mpnet", "modernbert", "gpt2" ("gpt_neo", "gpt_bigcode"), "bart" ("mbart"),
    ///        "opt", "marian" ("pegasus"), "t5" ("mt5", "umt5"), or a rotary decoder ("llama",
    ///        "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2",
    ///        "gemma3_text", "gemma3", "phi", "phi3", "gpt_neox", "stablelm", "starcoder2", "olmo",
    ///        "olmo2", "granite", "gptj", "codegen", "falcon", "cohere", and those of
    ///        detail/decoder_families.hpp: "gpt_oss", "llama4", "deepseek_v3", "qwen2_vl", ...),
    ///        an ALiBi decoder ("bloom", "mpt"), an encoder or two-tower model of
    ///        detail/encoder_families.hpp ("longformer", "big_bird", "chinese_clip", ...), "esm",
    ///        CLIP's text tower and its copies of detail/clip_text_towers.hpp ("clip",
    ///        "clip_text_model", "siglip", "owlvit", ...), BLIP's ("blip", "blip_text_model"),
    ///        Kosmos-2's ("kosmos-2", "kosmos_2_text_model"), "whisper" or Mamba ("mamba",
    ///        "mamba2", "falcon_mamba"). The multimodal checkpoints' values (Gemma 3, Llama 4,
    ///        Mistral 3, Qwen3-VL, the two-tower models) are their text_config's.
    std::string model_type;
    /// @brief Rows of the token table.
    Index vocab_size = 0;
    /// @brief Width of the model (hidden_size, d_model, n_embd or DistilBERT's dim).
    Index hidden_size = 0;
    /// @brief Rows of the position table the model was trained with (max_position_embeddings or
    ///        n_positions); for the rotary families, max_position_embeddings (the rows of the
    ///        rotary table); 0 for the T5s and the ALiBi families.
    Index max_positions = 0;
    /// @brief Rows of the token-type table (BERT, ELECTRA, RoBERTa, ALBERT, DeBERTa); 0 without one.
    Index type_vocab_size = 0;
    /// @brief Width of the embedding stage: ELECTRA's and ALBERT's embedding_size (128, their
    ///        config classes' default, when absent), OPT's word_embed_proj_dim for its token
    ///        table; hidden_size elsewhere.
    Index embedding_size = 0;
    /// @brief LayerNorm epsilon of the embedding stage (layer_norm_eps, DeBERTa's 1e-7 when
    ///        absent; 1e-5 for BART, whose nn.LayerNorm takes torch's default; 1e-12 for
    ///        DistilBERT, whose module fixes it; ModernBERT's norm_eps, 1e-5 when absent); 0
    ///        without LayerNorm.
    double layer_norm_eps = 0;
    /// @brief The padding id, when the config has one.
    std::optional<TokenId> pad_token_id;
    /// @brief The token table's padding_idx as the family's Hugging Face module sets it on its
    ///        nn.Embedding (the row that receives no gradient): pad_token_id, or where
    ///        config.json has no such key, the family's config class default (BERT, ELECTRA,
    ///        DistilBERT and ALBERT 0, RoBERTa, BART and OPT 1, Gemma 1 to 3 0, OLMo and
    ///        OLMo 2 1, Marian 58100, ModernBERT 50283, Phi-3 32000); none for an explicit null,
    ///        and none for
    ///        GPT-2, GPT-NeoX and T5, whose modules set none. MPNet's is 1 whatever the config
    ///        says, as MPNetEmbeddings fixes it.
    std::optional<TokenId> embedding_padding_idx;
    /// @brief BART, Marian, M2M100 (NLLB) and their kin: token rows are multiplied by
    ///        sqrt(d_model) (scale_embedding: false by default, M2M100's true).
    bool scale_embedding = false;
    /// @brief ModernBERT: whether its embedding LayerNorm has a bias (norm_bias, false by
    ///        default); true elsewhere.
    bool layer_norm_bias = true;
    /// @brief Granite: embedding_multiplier, the Python float its forward multiplies the token
    ///        rows by (torch rounds it to float32 for float32 rows); 1 elsewhere.
    double embedding_multiplier = 1.0;
    /// @brief Marian: rows of the decoder's own token table (decoder_vocab_size) when it has
    ///        one; vocab_size elsewhere.
    Index decoder_vocab_size = 0;
    /// @brief DeBERTa: whether a learned position table is added to the token rows
    ///        (position_biased_input, true by default, false in DeBERTa-v3's configs); true
    ///        elsewhere (families without a table read max_positions 0).
    bool position_biased_input = true;
    /// @brief The attention layers (num_hidden_layers, n_layer, n_layers or num_layers); 0 when
    ///        config.json gives none.
    Index num_hidden_layers = 0;
    /// @brief ESM: token_dropout (false by default, true in every ESM-2 and ESM-1b checkpoint):
    ///        its embeddings zero the mask token's rows and scale the others in every forward.
    bool token_dropout = false;
    /// @brief ESM: mask_token_id, when the config has one.
    std::optional<TokenId> mask_token_id;
    /// @brief What the model's tensor names start with in the checkpoint: "decoder." for the
    ///        text decoder of a vision-encoder-decoder (VisionEncoderDecoderModel: TrOCR, Donut,
    ///        Nougat, ViT-GPT-2) or a speech-encoder-decoder, whose config is config.json's
    ///        `decoder`; "language_model." for the language model of BLIP-2, InstructBLIP and
    ///        InstructBLIP-Video (OPT, Flan-T5, Vicuna's Llama), whose config is `text_config`;
    ///        empty elsewhere.
    std::string tensor_prefix;
    /// @brief Whether the checkpoint holds the decoder of an encoder-decoder family alone: a
    ///        vision- or speech-encoder-decoder's BART-like decoder (Donut's and Nougat's MBart), or a
    ///        BartForCausalLM or MBartForCausalLM (its `architectures`). The stage is then the
    ///        decoder's, and takes past tokens.
    bool decoder_only = false;

    /// @brief Reads config.json.
    /// @param file the config.json file.
    /// @return its values.
    /// @throws file_error if it cannot be read; format_error for invalid JSON, a missing or
    ///         ill-typed key (named with the file), or a family seqembed has no preset for.
    static ModelConfig read(const std::filesystem::path& file);
};

/// @brief What Linear::backward gives: the gradients of the layer's input, weight and bias.
struct LinearGradients {
    /// @brief Of the input: rows x in_features.
    RowMatrix<float> x;
    /// @brief Of the weight: out_features x in_features.
    RowMatrix<float> weight;
    /// @brief Of the bias: out_features values (none for a layer without a bias).
    Eigen::Matrix<float, 1, Eigen::Dynamic> bias;
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

    /// @brief The gradients of forward(x), as nn.Linear's backward: of x, grad_y W; of the
    ///        weight, grad_y^T x; of the bias, the sum of grad_y's rows. The products and sums run
    ///        in double and are rounded once (equal to PyTorch's float32 to rounding).
    /// @param x the forward's input, rows x in_features.
    /// @param grad_y the gradient of its output, rows x out_features.
    /// @return the gradients.
    /// @throws shape_error if x.cols() != in_features, or grad_y is not x.rows() x out_features.
    LinearGradients backward(const Eigen::Ref<const RowMatrix<float>>& x,
                             const Eigen::Ref<const RowMatrix<float>>& grad_y) const {
        if (x.cols() != weight.cols())
            seqembed::detail::fail<shape_error>("Linear input has ", x.cols(), " columns, expected ", weight.cols());
        seqembed::detail::require_shape("gradient of the Linear output", grad_y.rows(), grad_y.cols(), x.rows(),
                                        weight.rows());
        const Eigen::MatrixXd g = grad_y.cast<double>();
        LinearGradients out;
        out.x = (g * weight.cast<double>()).cast<float>();
        out.weight = (g.transpose() * x.cast<double>()).cast<float>();
        if (bias.size() != 0) out.bias = g.colwise().sum().cast<float>();
        return out;
    }
};

/// @brief What an attention layer applies to Q and K: the model's rotary stage, its second
///        (local) one, or nothing (a layer without positions, "NoPE").
enum class LayerPositions {
    rotary,        ///< ModelInputStage::rotary
    local_rotary,  ///< ModelInputStage::local_rotary (sliding-window layers of Gemma 3, ModernBERT, OLMo 3)
    none,          ///< no rotation (Cohere 2's and EXAONE 4's full-attention layers, SmolLM3's and Llama 4's NoPE layers)
};

/// @brief ESM's token dropout, which EsmEmbeddings applies in every forward, training or not: the
///        rows of mask_token_id are zero, and each sequence's other token rows are multiplied by
///        (1 - 0.15 * 0.8) and divided by (1 - its mask tokens / its attended tokens), in float32
///        as torch does, before the positions are added.
struct TokenDropout {
    /// @brief The masked token's id (config mask_token_id).
    TokenId mask_token_id = 0;
};

/// @brief A model's input stage: the pipeline (token table, positions, token types, LayerNorm, as
///        the family has them), its configuration, ELECTRA's projection, the rotary stage of the
///        families whose positions act in attention, and the decoder's stage of the
///        encoder-decoder families.
/// @tparam Positional LearnedPositionalEmbedding<float> or NoPositions<float>.
template <typename Positional>
struct ModelInputStage {
    /// @brief The model's config.json.
    ModelConfig config;
    /// @brief The stage, ready: pipeline.forward(input_ids, Padding::from_mask(attention_mask))
    ///        or, with token types, pipeline.forward(input_ids, token_type_ids, padding).
    InputPipeline<float, Positional> pipeline;
    /// @brief ELECTRA's embeddings_project (when embedding_size differs from hidden_size) or
    ///        ALBERT's embedding_hidden_mapping_in; empty elsewhere.
    std::optional<Linear> projection = std::nullopt;
    /// @brief The model's rotary stage, to apply to Q and K in attention (rotary->apply): the
    ///        RotaryOptions read_rotary_config reads from config.json (rope_theta or
    ///        rotary_emb_base, head_dim or hidden_size / num_attention_heads,
    ///        partial_rotary_factor or rotary_pct, rope_scaling), with max_positions =
    ///        max_position_embeddings rows, exact precision. Filled by the rotary decoders'
    ///        loaders (load_llama, ..., load_rotary_decoder) and load_modernbert; empty for the
    ///        families without
    ///        RoPE (BERT, ELECTRA, RoBERTa, DistilBERT, ALBERT, MPNet, GPT-2, BART, OPT, Marian, T5).
    std::optional<RotaryEmbedding<float>> rotary = std::nullopt;
    /// @brief The decoder's input stage of the encoder-decoder families: BART's (the shared
    ///        token table, the decoder's own position table and layernorm_embedding), Marian's
    ///        (its decoder token table or the shared one, the decoder's sinusoidal table) and
    ///        T5's (the shared table); empty for the other families. Positions by index after the
    ///        past tokens, as the decoders number them.
    std::optional<InputPipeline<float, Positional>> decoder = std::nullopt;
    /// @brief The second rotary stage of Gemma 3 and ModernBERT, for their sliding-window
    ///        (local) attention layers: rope_local_base_freq or local_rope_theta (10000) and no
    ///        scaling rule, where `rotary` is the global layers' (Gemma 3: rope_theta and
    ///        rope_scaling; ModernBERT: global_rope_theta); empty for the other families.
    std::optional<RotaryEmbedding<float>> local_rotary = std::nullopt;
    /// @brief The ALiBi bias of BLOOM, MPT and Falcon with `alibi: true`, to add to the
    ///        attention scores (alibi->forward(ids, padding)): BLOOM's slopes for n_head heads
    ///        (exact precision), MPT's with alibi_bias_max 8 (Hugging Face's MptModel passes no
    ///        other), Falcon's in bfloat16 arithmetic (AlibiFamily::falcon: added to q . k before
    ///        the 1 / sqrt(head_dim) scaling); empty for the other families.
    std::optional<AlibiBias<float>> alibi = std::nullopt;
    /// @brief For the families with RoPE, what each attention layer applies (num_hidden_layers
    ///        entries), by the family's rule: Gemma 3's and OLMo 3's layer_types (full_attention
    ///        layers `rotary`, sliding ones `local_rotary`), ModernBERT's
    ///        global_attn_every_n_layers, Cohere 2's and EXAONE 4's sliding layers (their
    ///        full-attention layers none), SmolLM3's and Llama 4's no_rope_layers; `rotary`
    ///        everywhere for the others. Empty when config.json gives no layer count, and for
    ///        the families without RoPE.
    std::vector<LayerPositions> layer_positions = {};
    /// @brief ESM's token dropout (its config's token_dropout), which io::Model::forward applies;
    ///        empty for the other families.
    std::optional<TokenDropout> token_dropout = std::nullopt;
    /// @brief Qwen-VL's and GLM-4V's vision token ids, merge size and time steps (from
    ///        config.json and its vision_config), which io::Model::multimodal_positions reads;
    ///        empty for the other families.
    std::optional<VisionTokens> vision = std::nullopt;
    /// @brief Whether the position table (and the decoder's) is a fixed sinusoid in the
    ///        family's module, a buffer or a parameter that does not train: Marian's and
    ///        Pegasus's, M2M100's, NLLB-MoE's, FSMT's, XGLM's, Kosmos-2's, Speech2Text's, TrOCR's
    ///        without use_learned_position_embeddings, DistilBERT's with sinusoidal_pos_embds and
    ///        XLM's with sinusoidal_embeddings. io::Model::backward then gives it no gradient, as
    ///        autograd gives none.
    bool fixed_positions = false;
};

/// @brief A learned-position model's stage (BERT, ELECTRA, RoBERTa, DistilBERT, ALBERT, MPNet,
///        GPT-2, BART, OPT, Marian).
using LearnedModelInput = ModelInputStage<LearnedPositionalEmbedding<float>>;
/// @brief A stage without additive positions (T5; the rotary families: positions act inside
///        attention, through `rotary`).
using LookupModelInput = ModelInputStage<NoPositions<float>>;

namespace detail {

/// A checkpoint's tensors (model.safetensors or its shards) and what the family's tensors are
/// called in it.
class Checkpoint {
public:
    /// `split` says which rows of the token tables to read; `loader` names the loader in the
    /// messages about it. A split the vocabulary cannot take fails here, before any tensor is read.
    Checkpoint(const std::filesystem::path& directory, ModelConfig config, const VocabularySplit& split,
               const char* loader)
        : m_config(std::move(config)), m_files(directory), m_split(split), m_loader(loader),
          m_shard(shard_of(m_config.vocab_size)) {}

    const ModelConfig& config() const noexcept { return m_config; }

    /// Whether the token tables are read in part (a split of more than one rank).
    bool is_split() const noexcept { return !m_split.is_whole(); }
    /// The rows of the vocab_size token table this rank holds (all of them without a split).
    const VocabularyShard& shard() const noexcept { return m_shard; }

    /// The rows of a vocabulary of vocab_size ids the split gives this rank, its errors (those
    /// of VocabularyShard::of_rank) prefixed with the loader and the split.
    VocabularyShard shard_of(Index vocab_size) const {
        const auto of = [&] {
            return seqembed::detail::run_renaming_error<value_error, value_error>(
                [&] { return m_split.of(vocab_size); }, m_loader, ": VocabularySplit{", m_split.ranks, ", ",
                m_split.rank, "}: ");
        };
        return seqembed::detail::run_renaming_error<index_error, index_error>(
            of, m_loader, ": VocabularySplit{", m_split.ranks, ", ", m_split.rank, "}: ");
    }

    /// Whether any of the names is in the file.
    bool has(const std::vector<std::string>& names) const {
        for (const std::string& name : names)
            if (m_files.find(stored(name)) != nullptr) return true;
        return false;
    }

    /// The tensor under the first name the file has, as rows x cols floats (any stored float
    /// type, widened exactly); `what` names the expected shape in messages. With `part`, only
    /// its rows are read (the rest of the tensor is never looked at), as part->rows x cols.
    Tensor<float> matrix(const std::vector<std::string>& names, Index rows, Index cols, const char* what,
                         const VocabularyShard* part = nullptr) const {
        for (const std::string& asked : names) {
            const std::string name = stored(asked);
            const SafetensorsFile* file = m_files.find(name);
            if (file == nullptr) continue;
            const std::vector<std::int64_t>& shape = file->info(name).shape;
            if (shape.size() == 2 && (shape[0] != rows || shape[1] != cols))
                seqembed::detail::fail<format_error>(file->path(), ": tensor '", name, "' is ", shape[0], " x ",
                                                     shape[1], ", expected ", what, " = ", rows, " x ", cols,
                                                     " (from config.json)");
            return part ? file->matrix_rows<float>(name, part->first, part->rows) : file->matrix<float>(name);
        }
        missing(names, std::to_string(rows) + " x " + std::to_string(cols));
    }

    /// The rows `shard` of the token table at `names` (shard.vocab_size x width in the file),
    /// read alone when the checkpoint is split; the whole table otherwise.
    Tensor<float> token_rows(const std::vector<std::string>& names, const VocabularyShard& shard, Index width,
                             const char* what) const {
        return matrix(names, shard.vocab_size, width, what, is_split() ? &shard : nullptr);
    }

    /// The vector under the first name the file has, `size` floats.
    Tensor<float> vector(const std::vector<std::string>& names, Index size, const char* what) const {
        for (const std::string& asked : names) {
            const std::string name = stored(asked);
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

    /// The token table at `names` (vocab_size x width), viewed in the file: this rank's shard
    /// of it when the checkpoint is split.
    TokenEmbedding<float> token_embedding(const std::vector<std::string>& names, Index width,
                                          EmbeddingScale scale) const {
        TokenEmbeddingOptions options;
        options.scale = scale;
        return token_embedding(names, m_shard, width, options, "vocab_size x width");
    }

    /// The rows `shard` of the token table at `names` (shard.vocab_size x width), viewed in the
    /// file, as a shard embedding when the checkpoint is split, with the family's padding_idx.
    TokenEmbedding<float> token_embedding(const std::vector<std::string>& names, const VocabularyShard& shard,
                                          Index width, TokenEmbeddingOptions options, const char* what) const {
        const Tensor<float> table = token_rows(names, shard, width, what);
        if (is_split()) options.shard = shard;
        options.padding_idx = m_config.embedding_padding_idx;
        return TokenEmbedding<float>::view(table.data(), table.shape()[0], width, options, table.owner());
    }

    /// The learned position table at `names` (rows x width), viewed in the file.
    LearnedPositionalEmbedding<float> positions(const std::vector<std::string>& names, Index rows, Index width,
                                                const LearnedPositionsOptions& options) const {
        const Tensor<float> table = matrix(names, rows, width, "position rows x width");
        return LearnedPositionalEmbedding<float>::view(table.data(), rows, width, options, table.owner());
    }

    /// The LayerNorm whose weight and bias are at `prefix`weight and `prefix`bias for one of the
    /// prefixes, or at `prefix`gamma and `prefix`beta: the names of checkpoints converted from
    /// TensorFlow (google-bert/bert-base-uncased's own file), which Hugging Face renames on load.
    /// Without `bias` (nn.LayerNorm(bias=False): ModernBERT's), the weight alone and a zero bias.
    LayerNorm<float> layer_norm(const std::vector<std::string>& prefixes, Index width, bool bias = true) const {
        std::string found;
        for (const std::string& prefix : prefixes) {
            if (has({prefix + "weight"}) || has({prefix + "gamma"})) {
                found = prefix;
                break;
            }
        }
        if (found.empty()) {
            std::vector<std::string> weights;
            for (const std::string& prefix : prefixes) weights.push_back(prefix + "weight");
            for (const std::string& prefix : prefixes) weights.push_back(prefix + "gamma");
            missing(weights, std::to_string(width) + " values (LayerNorm width)");
        }
        const bool legacy = !has({found + "weight"}) && has({found + "gamma"});
        const Tensor<float> gamma = vector({found + (legacy ? "gamma" : "weight")}, width, "LayerNorm width");
        if (!bias)
            return LayerNorm<float>::from_weights(Eigen::Map<const LayerNorm<float>::Vector>(gamma.data(), width),
                                                  LayerNorm<float>::Vector::Zero(width), m_config.layer_norm_eps);
        const Tensor<float> beta = vector({found + (legacy ? "beta" : "bias")}, width, "LayerNorm width");
        return LayerNorm<float>::from_weights(Eigen::Map<const LayerNorm<float>::Vector>(gamma.data(), width),
                                              Eigen::Map<const LayerNorm<float>::Vector>(beta.data(), width),
                                              m_config.layer_norm_eps);
    }

    /// The token-type table at `names` (type_vocab_size x width), viewed in the file.
    TokenTypeEmbedding<float> token_types(const std::vector<std::string>& names, Index width) const {
        const Tensor<float> table = matrix(names, m_config.type_vocab_size, width, "type_vocab_size x width");
        return TokenTypeEmbedding<float>::view(table.data(), m_config.type_vocab_size, width, table.owner());
    }

private:
    /// A tensor's name in the file: the config's tensor_prefix, then `name`.
    std::string stored(const std::string& name) const { return m_config.tensor_prefix + name; }

    [[noreturn]] void missing(const std::vector<std::string>& asked, const std::string& shape) const {
        std::vector<std::string> names;
        for (const std::string& name : asked) names.push_back(stored(name));
        std::string spelled;
        for (const std::string& name : names) spelled += (spelled.empty() ? "'" : " or '") + name + "'";
        seqembed::detail::fail<format_error>(m_files.source(), ": has no tensor ", spelled, " (expected ", shape,
                                             "); ", what_is_there(names));
    }

    /// The checkpoint's tensor names, or for a large checkpoint the ones nearest the names asked
    /// for (the longest prefix and suffix in common with one of them).
    std::string what_is_there(const std::vector<std::string>& wanted) const {
        std::vector<std::string> names = m_files.names();
        constexpr std::size_t listed = 12;
        std::string intro = "it holds " + std::to_string(names.size()) + " tensors";
        if (names.size() > listed) {
            const auto nearness = [&](const std::string& name) {
                std::size_t best = 0;
                for (const std::string& asked : wanted) {
                    std::size_t prefix = 0;
                    while (prefix < name.size() && prefix < asked.size() && name[prefix] == asked[prefix]) ++prefix;
                    std::size_t suffix = 0;
                    while (suffix < name.size() - prefix && suffix < asked.size() - prefix &&
                           name[name.size() - 1 - suffix] == asked[asked.size() - 1 - suffix])
                        ++suffix;
                    best = std::max(best, prefix + suffix);
                }
                return best;
            };
            std::stable_sort(names.begin(), names.end(),
                             [&](const std::string& a, const std::string& b) { return nearness(a) > nearness(b); });
            names.resize(listed);
            intro += ", the nearest of which are";
        }
        std::string list;
        for (const std::string& name : names) list += (list.empty() ? " '" : ", '") + name + "'";
        return intro + (names.empty() ? "" : ":") + list;
    }

    ModelConfig m_config;
    CheckpointFiles m_files;
    VocabularySplit m_split;
    const char* m_loader;
    VocabularyShard m_shard;
};

/// The options a loader builds its family's pipeline with: `numbering` (and RoBERTa's padding
/// id), refusing a choice of the caller's that contradicts them.
inline PipelineOptions family_options(PipelineOptions options, const std::string& loader, PositionNumbering numbering,
                                      std::optional<TokenId> padding_id = std::nullopt) {
    if (options.positions && *options.positions != numbering)
        seqembed::detail::fail<value_error>(loader, ": PipelineOptions::positions is ",
                                            seqembed::detail::numbering_name(*options.positions),
                                            ", but the family numbers positions by ",
                                            seqembed::detail::numbering_name(numbering),
                                            " (its forward's rule); leave it unset, or pass position ids");
    if (options.padding_id && padding_id && *options.padding_id != *padding_id)
        seqembed::detail::fail<value_error>(loader, ": PipelineOptions::padding_id is ", *options.padding_id,
                                            ", but the family's padding id is ", *padding_id);
    options.positions = numbering;
    if (padding_id) options.padding_id = padding_id;
    return options;
}

inline LearnedModelInput bert_family(const Checkpoint& checkpoint, const std::string& prefix,
                                     const PipelineOptions& options, const LearnedPositionsOptions& positions_options) {
    const ModelConfig& config = checkpoint.config();
    const Index width = config.embedding_size;
    const auto names = [&](const std::string& tail) {
        return std::vector<std::string>{prefix + "embeddings." + tail, "embeddings." + tail};
    };
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        checkpoint.token_embedding(names("word_embeddings.weight"), width, EmbeddingScale::none()),
        checkpoint.positions(names("position_embeddings.weight"), config.max_positions, width, positions_options),
        options);
    pipeline.set_token_types(checkpoint.token_types(names("token_type_embeddings.weight"), width));
    pipeline.set_layer_norm(checkpoint.layer_norm(names("LayerNorm."), width));
    return {config, std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
}

/// DeBERTa's stage on `Positional` (a learned table when position_biased_input, else none):
/// word (+ position by index) (+ token type, after the position), LayerNorm; padded rows zero
/// whatever the options ask, as the module multiplies its output by the attention mask.
template <typename Positional>
ModelInputStage<Positional> deberta_stage(const Checkpoint& checkpoint, Positional positions, PipelineOptions options) {
    const ModelConfig& config = checkpoint.config();
    const auto names = [](const std::string& tail) {
        return std::vector<std::string>{"deberta.embeddings." + tail, "embeddings." + tail};
    };
    options.padded_rows = PaddedRows::zero;
    InputPipeline<float, Positional> pipeline(
        checkpoint.token_embedding(names("word_embeddings.weight"), config.hidden_size, EmbeddingScale::none()),
        std::move(positions), options);
    if (config.type_vocab_size > 0)
        pipeline.set_token_types(checkpoint.token_types(names("token_type_embeddings.weight"), config.hidden_size),
                                 TokenTypeOptions{TokenTypeOrder::after_positions, true});
    pipeline.set_layer_norm(checkpoint.layer_norm(names("LayerNorm."), config.hidden_size));
    return {config, std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
}

/// RoBERTa and the families whose embeddings are RoBERTa's (XLM-RoBERTa, CamemBERT: the same
/// module and tensor names, `roberta.embeddings.*`).
inline bool is_roberta_family(const std::string& family) {
    return family == "roberta" || family == "xlm-roberta" || family == "camembert";
}

/// BART's input stage: BART's, mBART's, PLBart's and MVP's (their scaled word embeddings and
/// learned positional embeddings are BART's; MVP's prompts act in attention).
inline bool is_bart_family(const std::string& family) {
    return family == "bart" || family == "mbart" || family == "plbart" || family == "mvp";
}

/// The encoder-decoders load_bart reads: BART's family and those whose stage differs from it only
/// in its layout (BartLayout): Blenderbot's, BigBird-Pegasus's and LED's.
inline bool is_bart_like(const std::string& family) {
    return is_bart_family(family) || family == "blenderbot" || family == "bigbird_pegasus" || family == "led";
}

/// M2M100's input stage: M2M100's and NLLB's (m2m_100) and NLLB-MoE's (nllb-moe), whose
/// embeddings are M2M100's module for module.
inline bool is_m2m100_family(const std::string& family) { return family == "m2m_100" || family == "nllb-moe"; }


/// Kosmos-2's text model: the two-tower config's (kosmos-2, text_config) and its own.
inline bool is_kosmos2_family(const std::string& family) {
    return family == "kosmos-2" || family == "kosmos_2_text_model";
}

/// XLM's input stage: XLM's and FlauBERT's (the same module and tensor names).
inline bool is_xlm_family(const std::string& family) { return family == "xlm" || family == "flaubert"; }

/// Marian's input stage: Marian's and Pegasus's (a saved sinusoidal parameter, [sin | cos]).
inline bool is_marian_family(const std::string& family) { return family == "marian" || family == "pegasus"; }

/// T5's input stage: T5's, mT5's, UMT5's, LongT5's and Switch Transformers' (the shared table
/// alone).
inline bool is_t5_family(const std::string& family) {
    return family == "t5" || family == "mt5" || family == "umt5" || family == "longt5" ||
           family == "switch_transformers";
}

/// GPT-2's input stage: GPT-2's, GPT-Neo's, GPTBigCode's and the first GPT's (wte + wpe, token
/// types through wte; OpenAI GPT's tokens_embed and positions_embed).
inline bool is_gpt2_family(const std::string& family) {
    return family == "gpt2" || family == "gpt_neo" || family == "gpt_bigcode" || family == "openai-gpt";
}

/// CLIP's text tower and its copies (io/detail/clip_text_towers.hpp): the two-tower models'
/// configs (text_config) and their text models' (clip_text_model, ...).
inline bool is_clip_text_family(const std::string& family) { return clip_text_tower(family) != nullptr; }

/// Whether `family` is a two-tower model's config, whose text tower's keys are under text_config
/// (the CLIP kin's, the BERT- and RoBERTa-like towers', BLIP's, Kosmos-2's), not its text model's.
inline bool is_two_tower(const std::string& family) {
    const ClipTextTower* tower = clip_text_tower(family);
    return (tower != nullptr && family == tower->model_type) || is_encoder_two_tower(family) || family == "kosmos-2";
}

/// Whether a text tower's model takes no past tokens: CLIP's kin, ChineseCLIP's, ALIGN's,
/// FLAVA's, AltCLIP's and CLAP's (their forwards read positions 0 .. seq - 1 or number the ids
/// alone), BridgeTower's two-tower model (its text model alone takes a cache); not BLIP's
/// decoders nor Kosmos-2's.
inline bool is_text_tower_without_cache(const std::string& family) {
    const EncoderEntry* encoder = encoder_entry(family);
    return is_clip_text_family(family) ||
           (encoder != nullptr && encoder->text_model_type != nullptr && family != "bridgetower_text_model" &&
            family != "blip" && family != "blip_text_model");
}

/// Whether the two-tower config of `family` reads a legacy text_config_dict over its text_config
/// (CLIPConfig, XCLIPConfig, GroupViTConfig, CLIPSegConfig, ChineseCLIPConfig, FlavaConfig,
/// AltCLIPConfig).
inline bool reads_text_config_dict(const std::string& family) {
    const ClipTextTower* tower = clip_text_tower(family);
    const EncoderEntry* encoder = encoder_entry(family);
    return (tower != nullptr && family == tower->model_type && tower->reads_text_config_dict) ||
           (encoder != nullptr && family == encoder->model_type && encoder->reads_text_config_dict);
}

/// Mamba, Mamba 2 and Falcon Mamba: a token table, no positions.
inline bool is_mamba_family(const std::string& family) {
    return family == "mamba" || family == "mamba2" || family == "falcon_mamba";
}

/// The config classes' values for keys config.json (or its text_config) may leave out, of the
/// families load_clip_text, load_whisper, load_mamba, load_bart (Blenderbot's, BigBird-Pegasus's,
/// LED's), load_opt (BioGPT's), load_xglm, load_kosmos2_text, load_xlnet and load_gpt2 (OpenAI
/// GPT's) read (a JSON object; "{}" for others).
inline const char* learned_family_defaults(const std::string& family) {
    if (const ClipTextTower* tower = clip_text_tower(family)) return tower->defaults;
    if (family == "whisper")  // WhisperConfig
        return R"({"vocab_size": 51865, "d_model": 384, "max_target_positions": 448, "pad_token_id": 50256})";
    if (family == "mamba" || family == "falcon_mamba") return R"({"vocab_size": 50280})";
    if (family == "mamba2") return R"({"vocab_size": 32768})";
    // BlenderbotConfig, BigBirdPegasusConfig, LEDConfig, BioGptConfig, XGLMConfig.
    if (family == "blenderbot")
        return R"({"vocab_size": 8008, "d_model": 2560, "max_position_embeddings": 128, "pad_token_id": 0})";
    if (family == "bigbird_pegasus")
        return R"({"vocab_size": 96103, "d_model": 1024, "max_position_embeddings": 4096, "pad_token_id": 0,
                   "scale_embedding": true})";
    if (family == "led")
        return R"({"vocab_size": 50265, "d_model": 1024, "max_encoder_position_embeddings": 16384,
                   "max_decoder_position_embeddings": 1024, "pad_token_id": 1})";
    if (family == "biogpt")
        return R"({"vocab_size": 42384, "hidden_size": 1024, "max_position_embeddings": 1024, "pad_token_id": 1,
                   "scale_embedding": true})";
    if (family == "xglm")
        return R"({"vocab_size": 256008, "d_model": 1024, "max_position_embeddings": 2048, "pad_token_id": 1,
                   "scale_embedding": true})";
    if (family == "speech_to_text")  // Speech2TextConfig
        return R"({"vocab_size": 10000, "d_model": 256, "max_target_positions": 1024, "pad_token_id": 1,
                   "scale_embedding": true})";
    // OPTConfig's and LlamaConfig's, which the language models of BLIP-2 and InstructBLIP take
    // where their text_config, saved as a difference from OPTConfig's, leaves them out
    // (word_embed_proj_dim is hidden_size's when absent).
    if (family == "opt")
        return R"({"vocab_size": 50272, "hidden_size": 768, "max_position_embeddings": 2048, "pad_token_id": 1})";
    if (family == "llama") return R"({"max_position_embeddings": 2048})";
    if (family == "xlnet") return R"({"vocab_size": 32000, "d_model": 1024})";  // XLNetConfig
    if (family == "openai-gpt") return R"({"vocab_size": 40478, "n_positions": 512, "n_embd": 768})";
    if (is_kosmos2_family(family))  // Kosmos2TextConfig
        return R"({"vocab_size": 65037, "embed_dim": 2048, "max_position_embeddings": 2048, "pad_token_id": 1,
                   "scale_embedding": true})";
    return "{}";
}

/// The families whose positions are ALiBi's alone: BLOOM and MPT.
inline bool is_alibi_family(const std::string& family) { return family == "bloom" || family == "mpt"; }

/// The attention heads a config names (num_attention_heads, BLOOM's n_head, MPT's n_heads).
inline Index attention_heads(const nlohmann::json& config, const std::string& name) {
    return positive_key(config, name, {"num_attention_heads", "n_head", "n_heads"});
}

/// DeBERTa's input stage: DeBERTa's and DeBERTa-v2's (v3's checkpoints say deberta-v2).
inline bool is_deberta_family(const std::string& family) { return family == "deberta" || family == "deberta-v2"; }

/// The embedding_size -> hidden_size layer whose weight and bias are at one of the prefixes
/// (ELECTRA's embeddings_project, ALBERT's embedding_hidden_mapping_in).
inline Linear linear(const Checkpoint& checkpoint, const std::vector<std::string>& prefixes) {
    const ModelConfig& config = checkpoint.config();
    std::vector<std::string> weights;
    std::vector<std::string> biases;
    for (const std::string& prefix : prefixes) {
        weights.push_back(prefix + "weight");
        biases.push_back(prefix + "bias");
    }
    const Tensor<float> weight =
        checkpoint.matrix(weights, config.hidden_size, config.embedding_size, "hidden_size x embedding_size");
    const Tensor<float> bias = checkpoint.vector(biases, config.hidden_size, "hidden_size");
    Linear layer;
    layer.weight = Eigen::Map<const RowMatrix<float>>(weight.data(), config.hidden_size, config.embedding_size);
    layer.bias = Eigen::Map<const Eigen::Matrix<float, 1, Eigen::Dynamic>>(bias.data(), config.hidden_size);
    return layer;
}

/// The families with BERT's embeddings (word, token type, position, LayerNorm).
inline bool is_bert_family(const std::string& family) {
    return family == "bert" || family == "electra" || family == "albert" || is_roberta_family(family);
}

/// The encoders with BERT's embeddings but no token types (word, position, LayerNorm).
inline bool is_typeless_encoder(const std::string& family) { return family == "distilbert" || family == "mpnet"; }

/// The families that number positions from the ids (RoBERTa's
/// create_position_ids_from_input_ids) and take position ids as rows of their table.
inline bool numbers_from_ids(const std::string& family) {
    const EncoderFamily* encoder = encoder_family(family);
    return is_roberta_family(family) || family == "mpnet" ||
           (encoder != nullptr && encoder->positions == EncoderPositions::from_ids);
}

/// The families whose forward takes position ids as rows of their table: RoBERTa's kin, ESM-1b,
/// Nystromformer's (its buffer holds arange + 2) and Kosmos-2's (its sinusoid's index_select).
inline bool takes_table_rows(const std::string& family) {
    const EncoderFamily* encoder = encoder_family(family);
    // ESM's forward passes position_ids to ESM-1b's table (ESM-2's rotary module ignores them).
    return numbers_from_ids(family) || family == "esm" || is_kosmos2_family(family) ||
           (encoder != nullptr && encoder->positions == EncoderPositions::index_plus_2);
}

/// The decoders whose input stage is a lookup (times the family's scale) and whose positions act
/// in attention as RoPE.
inline bool is_rotary_family(const std::string& family) {
    for (const char* name : {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma",
                             "gemma2", "gemma3", "gemma3_text", "phi", "phi3", "gpt_neox", "stablelm", "starcoder2",
                             "olmo", "olmo2", "granite", "gptj", "codegen", "falcon", "cohere"})
        if (family == name) return true;
    // The families of decoder_families.hpp's table (ModernBERT, an encoder, apart).
    return family != "modernbert" && decoder_family(family) != nullptr;
}

/// Whether a Granite 4.0 config (granitemoehybrid) gives its attention layers rotary positions:
/// position_embedding_type "rope"; absent or null (the config class's None) or "nope", none.
/// @throws format_error naming the key when it is neither.
inline bool uses_rope_positions(const nlohmann::json& language, const std::string& name) {
    const nlohmann::json* type = find_key(language, {"position_embedding_type"});
    if (type == nullptr || type->is_null()) return false;
    if (!type->is_string() || (*type != "rope" && *type != "nope"))
        seqembed::detail::fail<format_error>(name, ": 'position_embedding_type' is ", type->dump(),
                                             ", not \"rope\" or \"nope\"");
    return *type == "rope";
}

/// The families whose forward multiplies the token rows by config.json's embedding_multiplier (a
/// Python float, 1.0 by default): Granite, GraniteMoE, GraniteMoE with shared experts, Granite 4.0
/// (granitemoehybrid) and Falcon-H1.
inline bool reads_embedding_multiplier(const std::string& family) {
    return family == "granite" || family == "granitemoe" || family == "granitemoeshared" ||
           family == "granitemoehybrid" || family == "falcon_h1";
}

/// Whether the family's model builds a rotary module from `language` (its config): not Jamba's
/// nor Zamba's (no positions anywhere), nor Granite 4.0's without position_embedding_type "rope",
/// nor Zamba 2's without use_mem_rope.
inline bool has_rotary_module(const nlohmann::json& language, const std::string& family, const std::string& name) {
    if (family == "jamba" || family == "zamba") return false;
    if (family == "granitemoehybrid") return uses_rope_positions(language, name);
    if (family == "zamba2") {
        const nlohmann::json* flag = find_key(language, {"use_mem_rope"});
        if (flag == nullptr || flag->is_null()) return false;
        if (!flag->is_boolean())
            seqembed::detail::fail<format_error>(name, ": 'use_mem_rope' is ", flag->dump(), ", not a boolean");
        return flag->get<bool>();
    }
    return true;
}

/// Qwen2-VL, Qwen2.5-VL and Qwen3-VL.
inline bool is_qwen_vl_family(const std::string& family) {
    return family == "qwen2_vl" || family == "qwen2_5_vl" || family == "qwen3_vl" || family == "qwen3_vl_moe";
}

/// GLM-4.1V (glm4v) and GLM-4.5V (glm4v_moe).
inline bool is_glm4v_family(const std::string& family) { return family == "glm4v" || family == "glm4v_moe"; }

/// The families whose get_rope_index numbers their prompts (Qwen-VL's, GLM-4V's): their language
/// model's positions for text are the mask's count (cumsum(attention_mask) - 1, padded tokens 1,
/// continued after the past by mrope_position_deltas), not the index.
inline bool numbers_by_rope_index(const std::string& family) {
    return is_qwen_vl_family(family) || is_glm4v_family(family);
}

/// Gemma 3's language model: its text checkpoints (gemma3_text) and its multimodal ones
/// (gemma3, the text model's config under text_config).
inline bool is_gemma3(const std::string& family) { return family == "gemma3" || family == "gemma3_text"; }

/// The config class's max_position_embeddings (n_positions) for the families whose configs may
/// leave it out (tiiuae/falcon-7b's has none).
inline std::optional<Index> default_max_positions(const std::string& family) {
    if (family == "falcon" || family == "gpt_neo" || family == "gptj" || family == "codegen") return 2048;
    if (family == "cohere") return 8192;
    if (family == "esm") return 1026;
    if (is_bart_family(family) || family == "pegasus" || is_m2m100_family(family) || family == "marian" ||
        family == "fsmt")
        return 1024;
    if (family == "trocr") return 512;
    return std::nullopt;
}

/// The language model's config in config.json: the file itself, or the multimodal checkpoints'
/// text_config (Gemma 3's with Gemma3TextConfig's defaults where it says nothing, as gemma-3-4b-it's
/// text_config has no vocab_size), with the family's model_type and its config class's
/// defaults where the file leaves keys out (decoder_families.hpp).
inline nlohmann::json language_config(const nlohmann::json& config, const std::string& name) {
    const auto type = config.find("model_type");
    const std::string family = type != config.end() && type->is_string() ? type->get<std::string>() : "";
    if (is_language_wrapper(family)) {
        // Blip2Config and its kin: CONFIG_MAPPING[text_config.get("model_type", "opt")](**text_config).
        const nlohmann::json* text = find_key(config, {"text_config"});
        if (text != nullptr && !text->is_null() && !text->is_object())
            seqembed::detail::fail<format_error>(name, ": 'text_config' is ", text->dump(), ", not an object");
        nlohmann::json language = text != nullptr && text->is_object() ? *text : nlohmann::json::object();
        const nlohmann::json* kind = find_key(language, {"model_type"});
        if (kind == nullptr) language["model_type"] = "opt";
        else if (!kind->is_string())
            seqembed::detail::fail<format_error>(name, ": the 'text_config' of this ", family,
                                                 " has a 'model_type' of ", kind->dump(), ", not a string");
        return language_config(language, name);
    }
    if (is_decoder_wrapper(family)) {
        // VisionEncoderDecoderModel (TrOCR, Donut, Nougat, ViT-GPT-2) and SpeechEncoderDecoderModel:
        // the text decoder's config, `decoder`, whose model_type says the family (ModelConfig::read
        // refuses one without a preset).
        const nlohmann::json* decoder = find_key(config, {"decoder"});
        if (decoder == nullptr || !decoder->is_object())
            seqembed::detail::fail<format_error>(name, ": model_type '", family, "' has no 'decoder' object");
        const nlohmann::json* kind = find_key(*decoder, {"model_type"});
        if (kind == nullptr || !kind->is_string())
            seqembed::detail::fail<format_error>(name, ": the 'decoder' of this ", family,
                                                 " has no string 'model_type'");
        return language_config(*decoder, name);
    }
    if (const std::optional<Index> rows = default_max_positions(family);
        rows && config.find("max_position_embeddings") == config.end() && config.find("n_positions") == config.end()) {
        nlohmann::json filled = config;  // the config class's default, which config.json may leave out
        filled["max_position_embeddings"] = *rows;
        return language_config(filled, name);
    }
    if (family == "xlnet" && config.find("n_token") != config.end() && config.find("vocab_size") == config.end()) {
        nlohmann::json renamed = config;  // XLNetConfig's attribute_map: n_token is vocab_size
        renamed["vocab_size"] = renamed["n_token"];
        renamed.erase("n_token");
        return language_config(renamed, name);
    }
    if ((family == "falcon" || family == "bloom") && config.find("n_embed") != config.end() &&
        !config["n_embed"].is_null()) {
        // FalconConfig and BloomConfig read n_embed (RefinedWeb's, bigscience's) before hidden_size.
        nlohmann::json renamed = config;
        renamed["hidden_size"] = renamed["n_embed"];
        renamed.erase("n_embed");
        return renamed;
    }
    const TextConfig nesting = text_config_of(family);
    const nlohmann::json* text = &config;
    if (nesting != TextConfig::top_level) {
        const nlohmann::json* nested = find_key(config, {"text_config"});
        if (nested != nullptr && !nested->is_object())
            seqembed::detail::fail<format_error>(name, ": 'text_config' is ", nested->dump(), ", not an object");
        if (nested == nullptr && nesting == TextConfig::nested)
            seqembed::detail::fail<format_error>(name, ": model_type '", family, "' has no 'text_config' object");
        if (nested != nullptr) text = nested;
    }
    // A two-tower config without text_config builds its text config from the class's defaults
    // alone: its own top-level keys (FLAVA's and CLAP's hidden_size) are not the text tower's.
    static const nlohmann::json no_keys = nlohmann::json::object();
    if (text == &config && is_two_tower(family)) text = &no_keys;
    nlohmann::json defaults = nlohmann::json::parse(learned_family_defaults(family));
    if (const nlohmann::json* legacy = find_key(config, {"text_config_dict"});
        legacy != nullptr && reads_text_config_dict(family)) {
        // CLIPConfig and its kin: text_config updated with the text config class built from
        // text_config_dict, every key it has (its defaults where the dict says nothing).
        if (!legacy->is_object())
            seqembed::detail::fail<format_error>(name, ": 'text_config_dict' is ", legacy->dump(), ", not an object");
        nlohmann::json built = with_encoder_defaults(defaults, family);
        built.update(*legacy);
        nlohmann::json updated = text == &config ? nlohmann::json::object() : *text;
        updated.update(built);
        nlohmann::json rewritten = config;
        rewritten.erase("text_config_dict");
        rewritten["text_config"] = std::move(updated);
        return language_config(rewritten, name);
    }
    if (is_gemma3(family)) defaults = gemma3_text_defaults();
    std::string language;
    if (is_vision_language_family(family)) {
        language = language_model_type(text == &config ? nullptr : text, family);
        defaults = language_model_defaults(family, language, text != &config);
        if (!defaults.is_object())
            seqembed::detail::fail<format_error>(name, ": the language model of model_type '", family, "' is '",
                                                 language, "', which has no preset under it (",
                                                 language_models_of(family), ")");
    }
    if (text == &config && defaults.empty())
        return with_family_defaults(with_encoder_defaults(config, family), family);
    nlohmann::json merged = defaults;
    merged.update(*text);
    merged["model_type"] = family;
    if (!language.empty()) merged["language_model_type"] = language;  // whose conventions it follows
    return with_family_defaults(with_encoder_defaults(merged, family), family);
}

/// Whether the language model's output head shares its token table: its config's
/// tie_word_embeddings, true unless given false (PretrainedConfig's default), read from the
/// decoder's config in a vision- or speech-encoder-decoder.
inline bool head_shares_tokens(const nlohmann::json& file, const std::string& name) {
    const nlohmann::json language = language_config(file, name);
    const auto tie = language.find("tie_word_embeddings");
    if (tie == language.end() || tie->is_null()) return true;
    if (!tie->is_boolean())
        seqembed::detail::fail<format_error>(name, ": 'tie_word_embeddings' is ", tie->dump(), ", not a boolean");
    return tie->get<bool>();
}

/// How a model with two kinds of attention layers (Gemma 3, ModernBERT) names one kind's rotary
/// base: its key in 4.x configs, the key read when that one is null (ModernBERT's local layers
/// take global_rope_theta), the config class's default, and whether the layers drop the
/// scaling rule (Gemma 3's local layers: rope_type default).
struct LayerRope {
    const char* layer;          // transformers 5's rope_parameters key: full_attention, sliding_attention
    const char* theta_key;
    const char* null_theta_key;  // or nullptr
    double theta;
    bool default_rule;
};

/// One kind of layer's rotary config: rope_theta from `rope`'s keys, then transformers 5's
/// rope_parameters entry for the layer (its own rope_theta wins; a missing entry is the
/// default rule) or 4.x's rope_scaling (dropped where the layer takes the default rule).
inline nlohmann::json layer_rope_config(nlohmann::json config, const LayerRope& rope) {
    const auto number = [&](const char* key) -> const nlohmann::json* {
        const auto found = config.find(key);
        return found != config.end() && !found->is_null() ? &*found : nullptr;
    };
    nlohmann::json theta = rope.theta;
    const nlohmann::json* parameters = find_key(config, {"rope_parameters"});
    if (const nlohmann::json* own = number(rope.theta_key))
        theta = *own;
    else if (rope.null_theta_key != nullptr && config.contains(rope.theta_key) && number(rope.null_theta_key))
        theta = *number(rope.null_theta_key);
    else if (parameters != nullptr && parameters->is_object() && parameters->contains("rope_theta") &&
             !(*parameters)["rope_theta"].is_null())
        theta = (*parameters)["rope_theta"];  // transformers 5's flat rope_parameters hold it
    config["rope_theta"] = theta;
    if (parameters != nullptr && parameters->is_object() &&
        (parameters->contains("full_attention") || parameters->contains("sliding_attention"))) {
        const auto entry = parameters->find(rope.layer);
        nlohmann::json chosen = entry != parameters->end() && entry->is_object()
                                    ? *entry
                                    : nlohmann::json{{"rope_type", "default"}};
        config["rope_parameters"] = std::move(chosen);
        config.erase("rope_scaling");
        return config;
    }
    if (rope.default_rule) {
        config["rope_scaling"] = nullptr;
        config.erase("rope_parameters");
    }
    return config;
}

/// The rotary stage a (language model's) config describes, its errors naming the file (`name`)
/// and the key.
inline RotaryEmbedding<float> rotary_stage(const nlohmann::json& config, const std::string& name) {
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
    // Hugging Face's rotary module computes any position (and dynamic NTK's per-call
    // frequencies only change past the table): rows past it are computed, not refused.
    options.beyond = BeyondTable::compute;
    return seqembed::detail::run_renaming_error<format_error, value_error>(
        [&] { return RotaryEmbedding<float>(options); }, name, ": its rotary options are invalid: ");
}

/// Whether a Falcon config asks for ALiBi (`alibi`, false by default) instead of rotary positions.
inline bool uses_alibi(const nlohmann::json& config, const std::string& name) {
    const nlohmann::json* alibi = find_key(config, {"alibi"});
    if (alibi == nullptr || alibi->is_null()) return false;
    if (!alibi->is_boolean())
        seqembed::detail::fail<format_error>(name, ": 'alibi' is ", alibi->dump(), ", not a boolean");
    return alibi->get<bool>();
}

/// The names of a rotary decoder's token table.
inline std::vector<std::string> decoder_token_names(const std::string& family) {
    if (family == "gpt_neox") return {"gpt_neox.embed_in.weight", "embed_in.weight"};
    if (family == "gptj" || family == "codegen") return {"transformer.wte.weight", "wte.weight"};
    if (family == "falcon") return {"transformer.word_embeddings.weight", "word_embeddings.weight"};
    if (family == "dbrx") return {"transformer.wte.weight", "wte.weight"};
    // Emu3's Hub files hold the text model at text_model.model. (transformers renames it on load).
    if (family == "emu3") return {"text_model.model.embed_tokens.weight", "model.text_model.embed_tokens.weight"};
    // Multimodal checkpoints: transformers 4.50's layout (Gemma 3, Llama 4, Mistral 3's first
    // files), then 4.52's (model.language_model, Qwen3-VL's own).
    if (family == "gemma3" || family == "llama4" || family == "mistral3" || family == "mllama")
        return {"language_model.model.embed_tokens.weight", "model.language_model.embed_tokens.weight"};
    // Qwen2-VL's and Qwen2.5-VL's Hub files keep the text model at `model.` (transformers
    // 4.52 renames it on load); files saved since may hold `model.language_model.`. GLM-4V's
    // hold it there (no conversion mapping).
    if (is_qwen_vl_family(family)) return {"model.embed_tokens.weight", "model.language_model.embed_tokens.weight"};
    if (is_glm4v_family(family)) return {"model.language_model.embed_tokens.weight", "model.embed_tokens.weight"};
    // Idefics3's and SmolVLM's text model, as their ForConditionalGeneration saves it, then their
    // bare Model.
    if (family == "idefics3" || family == "smolvlm")
        return {"model.text_model.embed_tokens.weight", "text_model.embed_tokens.weight"};
    // LLaVA's, PaliGemma's, InternVL's, GOT-OCR 2's, Qwen2-Audio's and Voxtral's Hub files and
    // those transformers saves (it reverts its conversion mapping on save), then a raw state_dict
    // of 4.52 and later (5.x for the audio ones).
    if (is_vision_language_family(family))
        return {"language_model.model.embed_tokens.weight", "model.language_model.embed_tokens.weight"};
    return {"model.embed_tokens.weight", "embed_tokens.weight"};
}

/// What a rotary decoder's forward multiplies its token rows by: Gemma's, Gemma 2's (and so
/// PaliGemma's) and VaultGemma's sqrt(hidden_size), RecurrentGemma's sqrt(hidden_size) in
/// bfloat16, the embedding_multiplier of Granite's family (reads_embedding_multiplier), nothing
/// elsewhere.
inline EmbeddingScale decoder_scale(const ModelConfig& config) {
    if (config.model_type == "gemma" || config.model_type == "gemma2" || is_gemma3(config.model_type) ||
        config.model_type == "paligemma" || config.model_type == "vaultgemma")
        return EmbeddingScale::sqrt_d_model();
    // RecurrentGemma's normalizer: torch.tensor(hidden_size**0.5, dtype=torch.bfloat16), cast to
    // the activations' type (sqrt(2560) = 50.596... is 50.5 there).
    if (config.model_type == "recurrent_gemma")
        return EmbeddingScale::value(static_cast<double>(static_cast<float>(
            Eigen::bfloat16(static_cast<float>(std::sqrt(static_cast<double>(config.hidden_size)))))));
    if (config.embedding_multiplier != 1.0) return EmbeddingScale::value(config.embedding_multiplier);
    return EmbeddingScale::none();
}

/// GPT-2's token types, which its forward (and GPT-Neo's, GPT-J's, CodeGen's) looks up in wte
/// and adds after the positions when they are given: a view of the whole token table at `names`.
template <typename Positional>
void set_wte_token_types(const Checkpoint& checkpoint, InputPipeline<float, Positional>& pipeline,
                         const std::vector<std::string>& names) {
    const ModelConfig& config = checkpoint.config();
    const Tensor<float> table = checkpoint.matrix(names, config.vocab_size, config.hidden_size, "vocab_size x n_embd");
    pipeline.set_token_types(
        TokenTypeEmbedding<float>::view(table.data(), config.vocab_size, config.hidden_size, table.owner()),
        TokenTypeOptions{TokenTypeOrder::after_positions, false});
}

/// Zamba 2's block type of layer `layer` of `layers`: layers_block_type (or transformers 5's
/// layer_types) when the config gives it, else Zamba2Config's 54 (a hybrid layer every sixth,
/// then at 47 and 51).
/// @throws format_error when the list is not one string per layer, or the config gives neither
///         and has not 54 layers.
inline std::string zamba2_block_type(const nlohmann::json& language, const std::string& name, Index layer,
                                     Index layers) {
    const nlohmann::json* types = find_key(language, {"layers_block_type", "layer_types"});
    if (types == nullptr || types->is_null()) {
        if (layers != 54)
            seqembed::detail::fail<format_error>(name, ": has no 'layers_block_type', whose default is for 54 layers, "
                                                 "not ", layers);
        return (layer % 6 == 0 && layer > 0 && layer <= 42) || layer == 47 || layer == 51 ? "hybrid" : "mamba";
    }
    return layer_type(*types, name, "layers_block_type", layer, layers);
}

/// Whether the list of layer indices at `key` holds `layer`.
/// @throws format_error naming the key when it is missing or not a list of integers.
inline bool lists_layer(const nlohmann::json& language, const std::string& name, const char* key, Index layer) {
    const nlohmann::json* listed = find_key(language, {key});
    if (listed == nullptr || !listed->is_array())
        seqembed::detail::fail<format_error>(name, ": '", key, "' is ", listed == nullptr ? "missing" : listed->dump(),
                                             ", not a list of layer indices");
    bool found = false;
    for (const nlohmann::json& index : *listed) {
        if (!index.is_number_integer())
            seqembed::detail::fail<format_error>(name, ": '", key, "' holds ", index.dump(), ", not a layer index");
        found = found || index.get<std::int64_t>() == layer;
    }
    return found;
}

/// What layer `layer` of `layers` applies, by the family's rule (decoder_families.hpp's LayerRule).
inline LayerPositions layer_position(const nlohmann::json& language, const std::string& family,
                                     const std::string& name, Index layer, Index layers) {
    const DecoderFamily* entry = decoder_family(rules_family(language, family));
    switch (entry != nullptr ? entry->layers : LayerRule::every_layer) {
        case LayerRule::every_layer: return LayerPositions::rotary;
        case LayerRule::gemma3:
            return is_full_attention_layer(language, name, layer, layers, "sliding_window_pattern", 6)
                       ? LayerPositions::rotary
                       : LayerPositions::local_rotary;
        case LayerRule::modernbert: {
            const Index every = positive_key(language, name, {"global_attn_every_n_layers"}, false);
            return layer % (every != 0 ? every : 3) == 0 ? LayerPositions::rotary : LayerPositions::local_rotary;
        }
        case LayerRule::olmo3:
            return is_full_attention_layer(language, name, layer, layers, "sliding_window_pattern", 4)
                       ? LayerPositions::rotary
                       : LayerPositions::local_rotary;
        case LayerRule::exaone4:
            if (find_key(language, {"sliding_window"}) == nullptr) return LayerPositions::rotary;  // null: no NoPE
            [[fallthrough]];
        case LayerRule::sliding_only:
            // Cohere 2 rotates where its layer's sliding_window is set: with a null one, nowhere.
            if (find_key(language, {"sliding_window"}) == nullptr) return LayerPositions::none;
            return is_full_attention_layer(language, name, layer, layers, "sliding_window_pattern", 4)
                       ? LayerPositions::none
                       : LayerPositions::rotary;
        case LayerRule::no_rope_layers: {
            const nlohmann::json* given = find_key(language, {"no_rope_layers"});
            if (given == nullptr || (given->is_array() && given->empty())) {
                // The config classes' default: every no_rope_layer_interval-th layer has none.
                const Index every = positive_key(language, name, {"no_rope_layer_interval"}, false);
                return (layer + 1) % (every != 0 ? every : 4) != 0 ? LayerPositions::rotary : LayerPositions::none;
            }
            if (!given->is_array() || static_cast<Index>(given->size()) < layers)
                seqembed::detail::fail<format_error>(name, ": 'no_rope_layers' is not a list of at least ", layers,
                                                     " values (num_hidden_layers)");
            const nlohmann::json& value = (*given)[static_cast<std::size_t>(layer)];
            if (!value.is_number_integer() || (value.get<std::int64_t>() != 0 && value.get<std::int64_t>() != 1))
                seqembed::detail::fail<format_error>(name, ": 'no_rope_layers'[", layer, "] is ", value.dump(),
                                                     ", not 0 or 1");
            return value.get<std::int64_t>() == 1 ? LayerPositions::rotary : LayerPositions::none;
        }
        case LayerRule::cross_attention:
            return lists_layer(language, name, "cross_attention_layers", layer) ? LayerPositions::none
                                                                                 : LayerPositions::rotary;
        case LayerRule::interval_attention:
            return is_full_attention_layer(language, name, layer, layers, "full_attention_interval", 4)
                       ? LayerPositions::rotary
                       : LayerPositions::none;
        case LayerRule::listed_attention: {
            const nlohmann::json* listed = find_key(language, {"attn_layer_indices"});
            if (listed == nullptr || listed->is_null()) return LayerPositions::none;  // BambaConfig's: all Mamba 2
            return lists_layer(language, name, "attn_layer_indices", layer) ? LayerPositions::rotary
                                                                            : LayerPositions::none;
        }
        case LayerRule::granite_hybrid: {
            if (!uses_rope_positions(language, name)) return LayerPositions::none;
            const nlohmann::json* types = find_key(language, {"layer_types"});
            if (types == nullptr) return LayerPositions::none;  // GraniteMoeHybridConfig's: all Mamba 2
            const std::string type = layer_type(*types, name, "layer_types", layer, layers);
            return type == "attention" || type == "full_attention" ? LayerPositions::rotary : LayerPositions::none;
        }
        case LayerRule::even_layers:
            if (find_key(language, {"layer_types"}) != nullptr)
                return is_full_attention_layer(language, name, layer, layers, "layer_types", 1) ? LayerPositions::rotary
                                                                                                : LayerPositions::none;
            return layer % 2 == 0 ? LayerPositions::rotary : LayerPositions::none;  // MiniMaxConfig's
        case LayerRule::zamba2_hybrid:
            if (!has_rotary_module(language, family, name)) return LayerPositions::none;
            return zamba2_block_type(language, name, layer, layers) == "hybrid" ? LayerPositions::rotary
                                                                                : LayerPositions::none;
        case LayerRule::no_layer: return LayerPositions::none;
        case LayerRule::attention_blocks: {
            const nlohmann::json* blocks = find_key(language, {"block_types"});
            if (blocks == nullptr || !blocks->is_array() || blocks->empty())
                seqembed::detail::fail<format_error>(name, ": 'block_types' is ",
                                                     blocks == nullptr ? "missing" : blocks->dump(),
                                                     ", not a list of block types");
            const auto period = static_cast<Index>(blocks->size());
            return layer_type(*blocks, name, "block_types", layer % period, period) == "attention"
                       ? LayerPositions::rotary
                       : LayerPositions::none;
        }
        case LayerRule::attention_only: {
            if (find_key(language, {"layer_types"}) != nullptr)
                return is_full_attention_layer(language, name, layer, layers, "layer_types", 1) ? LayerPositions::rotary
                                                                                                : LayerPositions::none;
            if (find_key(language, {"full_attn_idxs"}) == nullptr) return LayerPositions::rotary;  // Lfm2Config's
            return lists_layer(language, name, "full_attn_idxs", layer) ? LayerPositions::rotary : LayerPositions::none;
        }
    }
    return LayerPositions::rotary;
}

/// Every layer's LayerPositions (none when the config gives no layer count).
inline std::vector<LayerPositions> layer_positions(const nlohmann::json& language, const std::string& family,
                                                   const std::string& name) {
    const Index layers = layer_count(language, name);
    std::vector<LayerPositions> out;
    out.reserve(static_cast<std::size_t>(layers));
    for (Index layer = 0; layer < layers; ++layer) out.push_back(layer_position(language, family, name, layer, layers));
    return out;
}

/// A multimodal family's VisionTokens from its config.json: the ids at the top (where the model
/// reads them), the merge size and Qwen2.5-VL's tokens_per_second in vision_config, the config
/// classes' defaults where it says nothing (Qwen2.5-VL's tokens_per_second 4; GLM-4.1V's image
/// id 151343, GLM-4.5V's 151363).
inline VisionTokens vision_tokens(const nlohmann::json& config, const std::string& family, const std::string& name) {
    VisionTokens vision;
    const auto id = [&](const char* key, TokenId fallback) -> TokenId {
        const Index value = positive_key(config, name, {key}, false);
        return value > 0 ? static_cast<TokenId>(value) : fallback;
    };
    if (is_glm4v_family(family)) {
        vision.blocks = VisionBlocks::image_token_runs;
        vision.image_token_id = id("image_token_id", family == "glm4v" ? 151343 : 151363);
        vision.video_token_id = id("video_token_id", family == "glm4v" ? 151344 : 151364);
        vision.video_start_token_id = id("video_start_token_id", 151341);
        vision.video_end_token_id = id("video_end_token_id", 151342);
    } else {
        vision.image_token_id = id("image_token_id", 151655);
        vision.video_token_id = id("video_token_id", 151656);
        vision.vision_start_token_id = id("vision_start_token_id", 151652);
    }
    const nlohmann::json* encoder = find_key(config, {"vision_config"});
    if (encoder != nullptr && !encoder->is_object())
        seqembed::detail::fail<format_error>(name, ": 'vision_config' is ", encoder->dump(), ", not an object");
    const nlohmann::json none = nlohmann::json::object();
    const nlohmann::json& vision_config = encoder != nullptr ? *encoder : none;
    const Index merge = positive_key(vision_config, name, {"spatial_merge_size"}, false);
    vision.spatial_merge_size = merge > 0 ? merge : 2;
    if (family == "qwen2_5_vl") {
        const nlohmann::json* rate = find_key(vision_config, {"tokens_per_second"});
        if (rate != nullptr && (!rate->is_number() || !(rate->get<double>() > 0) || !(rate->get<double>() < 1e6)))
            seqembed::detail::fail<format_error>(name, ": 'vision_config.tokens_per_second' is ", rate->dump(),
                                                 ", not a positive number");
        vision.tokens_per_second = rate != nullptr ? rate->get<double>() : 4.0;
    }
    vision.frames_apart = family == "qwen3_vl" || family == "qwen3_vl_moe";
    return vision;
}

/// A rotary family's stage from its config (`model`, read once by the caller): the token table at
/// `names` (times `scale`; the split's rows of it), no additive positions, the rotary stage from
/// config.json, what each layer applies, and the multimodal families' vision tokens.
inline LookupModelInput rotary_family(const std::filesystem::path& directory, ModelConfig model,
                                      const std::vector<std::string>& names, EmbeddingScale scale,
                                      const PipelineOptions& options, const VocabularySplit& split, const char* loader) {
    const Checkpoint checkpoint(directory, std::move(model), split, loader);
    const ModelConfig& config = checkpoint.config();
    // A family loader given another family's checkpoint would drop or add its scale, or miss its
    // table: Granite's embedding_multiplier through load_llama, say.
    if (is_rotary_family(config.model_type) &&
        (decoder_scale(config).factor_for(config.hidden_size) != scale.factor_for(config.hidden_size) ||
         decoder_token_names(config.model_type) != names))
        seqembed::detail::fail<format_error>(path_name(directory / "config.json"), ": model_type '", config.model_type,
                                             "' has another input stage than ", loader,
                                             " builds (its scale or its tensor names); load_rotary_decoder or "
                                             "load_model reads it");
    const PositionNumbering numbering =
        numbers_by_rope_index(config.model_type) ? PositionNumbering::real_tokens : PositionNumbering::sequence_index;
    InputPipeline<float, NoPositions<float>> pipeline(checkpoint.token_embedding(names, config.hidden_size, scale),
                                                      NoPositions<float>(config.hidden_size),
                                                      family_options(options, loader, numbering));
    if ((config.model_type == "gptj" || config.model_type == "codegen") && !checkpoint.is_split())
        set_wte_token_types(checkpoint, pipeline, names);  // their forwards add wte(token_type_ids)
    const std::string name = path_name(directory / "config.json");
    const nlohmann::json language = language_config(read_json_object(directory / "config.json"), name);
    if (config.model_type == "falcon" && uses_alibi(language, name))  // in attention alone
        return {config,       std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                AlibiBias<float>(attention_heads(language, name), AlibiOptions::falcon())};
    LookupModelInput stage{config, std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    if (is_gemma3(config.model_type)) {
        stage.rotary = rotary_stage(
            layer_rope_config(language, {"full_attention", "rope_theta", nullptr, 1000000.0, false}), name);
        stage.local_rotary = rotary_stage(
            layer_rope_config(language, {"sliding_attention", "rope_local_base_freq", nullptr, 10000.0, true}), name);
    } else if (config.model_type == "olmo3") {
        // "RoPE scaling is not applied to sliding window attention layers": one theta, the rule
        // on the full-attention layers alone.
        stage.rotary =
            rotary_stage(layer_rope_config(language, {"full_attention", "rope_theta", nullptr, 500000.0, false}), name);
        stage.local_rotary =
            rotary_stage(layer_rope_config(language, {"sliding_attention", "rope_theta", nullptr, 500000.0, true}), name);
    } else if (const std::string rules = rules_family(language, config.model_type);
               rules == "lfm2" || rules == "lfm2_moe") {  // LFM2-VL's language model too
        // Its attention layers' theta (transformers 5 keys rope_parameters by layer type: the
        // convolutions' entry is null).
        stage.rotary =
            rotary_stage(layer_rope_config(language, {"full_attention", "rope_theta", nullptr, 1000000.0, false}), name);
    } else if (has_rotary_module(language, config.model_type, name)) {
        stage.rotary = rotary_stage(language, name);
    }
    stage.layer_positions = layer_positions(language, config.model_type, name);
    if (numbers_by_rope_index(config.model_type))
        stage.vision = vision_tokens(read_json_object(directory / "config.json"), config.model_type, name);
    return stage;
}

}  // namespace detail

inline ModelConfig ModelConfig::read(const std::filesystem::path& file) {
    const std::string name = detail::path_name(file);
    const nlohmann::json whole = detail::read_json_object(file);
    const nlohmann::json config = detail::language_config(whole, name);
    ModelConfig result;
    const nlohmann::json* type = detail::find_key(config, {"model_type"});
    if (type == nullptr || !type->is_string()) seqembed::detail::fail<format_error>(name, ": has no string 'model_type'");
    result.model_type = type->get<std::string>();
    const std::string& family = result.model_type;
    const bool rotary = detail::is_rotary_family(family);
    const bool known = rotary || detail::is_bert_family(family) || detail::is_typeless_encoder(family) ||
                       family == "modernbert" || detail::is_gpt2_family(family) || detail::is_bart_like(family) ||
                       family == "opt" || family == "biogpt" || family == "xglm" || detail::is_marian_family(family) ||
                       detail::is_t5_family(family) || detail::is_deberta_family(family) ||
                       detail::is_m2m100_family(family) || detail::is_alibi_family(family) ||
                       detail::encoder_family(family) != nullptr || family == "esm" ||
                       detail::is_clip_text_family(family) || family == "whisper" || detail::is_mamba_family(family) ||
                       detail::is_xlm_family(family) || family == "fsmt" || family == "trocr" ||
                       detail::is_kosmos2_family(family) || family == "xlnet" || family == "speech_to_text";
    if (!known)
        seqembed::detail::fail<format_error>(
            name, ": model_type '", family,
            "' has no preset (bert, electra, roberta, xlm-roberta, camembert, distilbert, albert, mpnet, modernbert, "
            "deberta, deberta-v2, longformer, data2vec-text, xmod, xlm-roberta-xl, big_bird, megatron-bert, "
            "ernie, splinter, squeezebert, rembert, bert-generation, nystromformer, yoso, mra, roformer, nomic_bert, "
            "roberta-prelayernorm, ibert, convbert, funnel, "
            "esm, gpt2, "
            "gpt_neo, gpt_bigcode, bart, mbart, plbart, mvp, blenderbot, bigbird_pegasus, led, opt, biogpt, xglm, "
            "marian, pegasus, m2m_100, nllb-moe, t5, "
            "mt5, umt5, bloom, mpt, llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, "
            "gemma3, gemma3_text, phi, phi3, gpt_neox, stablelm, starcoder2, olmo, olmo2, olmo3, olmoe, granite, "
            "granitemoe, granitemoeshared, gptj, codegen, falcon, cohere, cohere2, gpt_oss, smollm3, llama4, "
            "llama4_text, nemotron, persimmon, helium, glm, glm4, glm4_moe, dbrx, ernie4_5, exaone4, seed_oss, "
            "arcee, apertus, ministral, mistral3, bitnet, deepseek_v2, deepseek_v3, qwen2_vl, qwen2_5_vl, "
            "qwen3_vl, qwen3_vl_moe, glm4v, glm4v_moe, lfm2, lfm2_moe, hunyuan_v1_dense, hunyuan_v1_moe, kimi_k2, "
            "llava, llava_next, llava_next_video, llava_onevision, vipllava, paligemma, idefics3, smolvlm, mllama, "
            "internvl, got_ocr2, aya_vision, qwen2_audio, voxtral, lfm2_vl, cohere2_vision, perception_lm, ovis2, "
            "granitemoehybrid, falcon_h1, bamba, jamba, zamba, zamba2, qwen3_next, ernie4_5_moe, dots1, phimoe, "
            "minimax, vaultgemma, chameleon, emu3, janus, fuyu, jetmoe, diffllama, doge, recurrent_gemma, clip, "
            "clip_text_model, siglip, "
            "siglip_text_model, siglip2, siglip2_text_model, whisper, mamba, mamba2, falcon_mamba, xlm, flaubert, fsmt, "
            "trocr, vision-encoder-decoder, speech-encoder-decoder, owlvit, owlvit_text_model, owlv2, "
            "owlv2_text_model, xclip, xclip_text_model, groupvit, groupvit_text_model, clipseg, clipseg_text_model, "
            "chinese_clip, chinese_clip_text_model, align, align_text_model, flava, flava_text_model, altclip, "
            "altclip_text_model, clap, clap_text_model, bridgetower, bridgetower_text_model, blip, blip_text_model, "
            "kosmos-2, kosmos_2_text_model, blip-2, instructblip, instructblipvideo, longt5, switch_transformers, "
            "git, dpr, xlnet, openai-gpt, speech_to_text)");
    // A vision- or speech-encoder-decoder's text decoder: its tensors under `decoder.`, and a
    // BART-like one is that family's decoder alone, as a BartForCausalLM (MBartForCausalLM, ...) is.
    const nlohmann::json* top = detail::find_key(whole, {"model_type"});
    const bool wrapped = top != nullptr && top->is_string() && detail::is_decoder_wrapper(top->get<std::string>());
    if (wrapped) result.tensor_prefix = "decoder.";
    // BLIP-2's and InstructBLIP's language model: the family's own stage under `language_model.`.
    const bool language_wrapped =
        top != nullptr && top->is_string() && detail::is_language_wrapper(top->get<std::string>());
    if (language_wrapped) result.tensor_prefix = "language_model.";
    bool causal_lm = false;
    std::string retrieval;  // BLIP-2's heads without a language model
    if (const nlohmann::json* architectures = detail::find_key(whole, {"architectures"});
        architectures != nullptr && architectures->is_array())
        for (const nlohmann::json& architecture : *architectures)
            if (architecture.is_string()) {
                const std::string& spelled = architecture.get_ref<const std::string&>();
                const std::string tail = "ForCausalLM";
                causal_lm = causal_lm || (spelled.size() >= tail.size() &&
                                          spelled.compare(spelled.size() - tail.size(), tail.size(), tail) == 0);
                if (spelled == "Blip2ForImageTextRetrieval" || spelled == "Blip2TextModelWithProjection")
                    retrieval = spelled;
            }
    if (language_wrapped && !retrieval.empty())
        seqembed::detail::fail<format_error>(name, ": ", retrieval,
                                             " has no language model: its text goes through the Q-Former's "
                                             "embeddings, which have no preset (Blip2ForConditionalGeneration's "
                                             "language model has)");
    result.decoder_only = detail::is_bart_like(family) && (wrapped || causal_lm);
    if ((wrapped || causal_lm) && (detail::is_marian_family(family) || detail::is_m2m100_family(family) ||
                                   detail::is_t5_family(family) || family == "fsmt"))
        seqembed::detail::fail<format_error>(name, ": the decoder alone of model_type '", family,
                                             "' (a *ForCausalLM, or a vision- or speech-encoder-decoder's) has no "
                                             "preset; BART's kin's has (load_bart)");
    const bool xlm = detail::is_xlm_family(family);
    if (xlm) {
        // XLMConfig's and FlaubertConfig's keys and defaults: 30145 words of 2048, 512 positions.
        // n_words, where given, sets vocab_size (XLMConfig's __init__), and hidden_size emb_dim
        // (its attribute_map, applied after emb_dim).
        const Index words = detail::positive_key(config, name, {"n_words", "vocab_size"}, false);
        const Index width = detail::positive_key(config, name, {"hidden_size", "emb_dim"}, false);
        const Index rows = detail::positive_key(config, name, {"max_position_embeddings"}, false);
        result.vocab_size = words != 0 ? words : 30145;
        result.hidden_size = width != 0 ? width : 2048;
        result.max_positions = rows != 0 ? rows : 512;
    } else if (family == "fsmt") {
        // FSMTConfig's two vocabularies (42024 words each by default): the encoder's and the decoder's.
        const Index source = detail::positive_key(config, name, {"src_vocab_size"}, false);
        const Index target = detail::positive_key(config, name, {"tgt_vocab_size"}, false);
        result.vocab_size = source != 0 ? source : 42024;
        result.decoder_vocab_size = target != 0 ? target : 42024;
    } else {
        result.vocab_size = detail::positive_key(config, name, {"vocab_size"});
    }
    // MllamaTextModel's table has 8 rows past vocab_size: the image token's (image_token_index,
    // vocab_size itself), a learned row its forward reads like any other, and 7 more.
    if (family == "mllama") result.vocab_size += 8;
    if (family == "nomic_bert") {  // NomicBertModel rounds its vocabulary up to pad_vocab_size_multiple
        const Index multiple = detail::positive_key(config, name, {"pad_vocab_size_multiple"});
        if (result.vocab_size % multiple != 0) result.vocab_size += multiple - result.vocab_size % multiple;
    }
    result.num_hidden_layers = detail::is_kosmos2_family(family)  // Kosmos2TextConfig's `layers`
                                   ? detail::positive_key(config, name, {"layers"}, false)
                                   : detail::layer_count(config, name);
    if (!xlm)
        result.hidden_size =
            detail::is_kosmos2_family(family)  // Kosmos2TextConfig's embed_dim (its attribute_map's hidden_size)
                ? detail::positive_key(config, name, {"embed_dim", "hidden_size"})
                : detail::positive_key(config, name, {"hidden_size", "d_model", "n_embd", "dim", "n_embed"});
    // The rotary families: rows of the rotary table; none for T5's relative bias and ALiBi's.
    const detail::EncoderFamily* encoder_entry = detail::encoder_family(family);
    const bool positions = !detail::is_t5_family(family) && !detail::is_alibi_family(family) &&
                           !detail::is_mamba_family(family) && family != "xlnet" &&
                           !(encoder_entry != nullptr && encoder_entry->positions == detail::EncoderPositions::none);
    if (detail::is_deberta_family(family)) {
        // DebertaConfig's and DebertaV2Config's defaults: 512 positions, added unless
        // position_biased_input is false; type_vocab_size 0 (no table); layer_norm_eps 1e-7.
        result.max_positions = detail::positive_key(config, name, {"max_position_embeddings"}, false);
        if (result.max_positions == 0) result.max_positions = 512;
        if (const nlohmann::json* biased = detail::find_key(config, {"position_biased_input"})) {
            if (!biased->is_boolean())
                seqembed::detail::fail<format_error>(name, ": 'position_biased_input' is ", biased->dump(),
                                                     ", not a boolean");
            result.position_biased_input = biased->get<bool>();
        }
        if (const nlohmann::json* types = detail::find_key(config, {"type_vocab_size"})) {
            if (!types->is_number_integer() || types->get<std::int64_t>() < 0)
                seqembed::detail::fail<format_error>(name, ": 'type_vocab_size' is ", types->dump(),
                                                     ", not a non-negative integer");
            result.type_vocab_size = static_cast<Index>(types->get<std::int64_t>());
        }
        result.layer_norm_eps = detail::epsilon_key(config, name, {"layer_norm_eps"}, 1e-7);
    } else {
        // (Nomic's BERT: GPT2Config maps max_position_embeddings onto n_positions, so where
        // config.json has both, as nomic-embed-text-v1.5's since 2026, max_position_embeddings
        // wins.)
        // (Whisper: its decoder's table, max_target_positions.)
        const std::initializer_list<const char*> keys = {"max_position_embeddings", "n_positions"};
        // (LED: its encoder's table, max_encoder_position_embeddings.)
        result.max_positions = !positions           ? 0
                               : family == "whisper" || family == "speech_to_text"
                                   ? detail::positive_key(config, name, {"max_target_positions"})
                               : family == "led" ? detail::positive_key(config, name, {"max_encoder_position_embeddings"})
                               : xlm             ? result.max_positions
                                                     : detail::positive_key(config, name, keys);
    }
    const detail::EncoderFamily* encoder = detail::encoder_family(family);
    if (detail::is_bert_family(family) || (encoder != nullptr && encoder->token_types))
        result.type_vocab_size = detail::positive_key(config, name, {"type_vocab_size"});
    if (detail::is_bert_family(family) ||
        (encoder != nullptr && encoder->positions != detail::EncoderPositions::rotary &&
         encoder->positions != detail::EncoderPositions::none)) {
        // Relative position types (relative_key, relative_key_query) add no absolute positions
        // in the embeddings in the releases that have them: not this stage.
        if (const nlohmann::json* kind = detail::find_key(config, {"position_embedding_type"});
            kind != nullptr && !(kind->is_string() && kind->get<std::string>() == "absolute"))
            seqembed::detail::fail<format_error>(name, ": 'position_embedding_type' is ", kind->dump(),
                                                 "; only \"absolute\" (a learned table added to the embeddings) "
                                                 "has a preset");
    }
    result.embedding_size = result.hidden_size;
    if (detail::is_deberta_family(family)) {  // DeBERTa's embedding_size defaults to hidden_size
        const Index embedding_size = detail::positive_key(config, name, {"embedding_size"}, false);
        if (embedding_size != 0) result.embedding_size = embedding_size;
    }
    if (family == "electra" || family == "albert") {  // ElectraConfig's and AlbertConfig's default: 128
        const Index embedding_size = detail::positive_key(config, name, {"embedding_size"}, false);
        result.embedding_size = embedding_size != 0 ? embedding_size : 128;
    }
    if (family == "opt") {
        const Index projected = detail::positive_key(config, name, {"word_embed_proj_dim"}, false);
        if (projected != 0) result.embedding_size = projected;
    }
    if (detail::is_bert_family(family) || family == "mpnet" || (encoder != nullptr && encoder->layer_norm))
        result.layer_norm_eps = family == "nomic_bert" ? detail::epsilon_key(config, name, {"layer_norm_epsilon"}, 1e-5)
                                                       : detail::epsilon_key(config, name, {"layer_norm_eps"}, 1e-12);
    if (family == "rembert")  // its tables' width; the encoder's embedding_hidden_mapping_in widens it
        result.embedding_size = detail::positive_key(config, name, {"input_embedding_size"});
    if (family == "convbert")  // its tables' width (ConvBertConfig's 768); embeddings_project widens it
        result.embedding_size = detail::positive_key(config, name, {"embedding_size"});
    if (family == "ibert" && detail::find_key(config, {"quant_mode"}) != nullptr &&
        *detail::find_key(config, {"quant_mode"}) != false)
        seqembed::detail::fail<format_error>(name, ": 'quant_mode' is ", detail::find_key(config, {"quant_mode"})->dump(),
                                             ": I-BERT's integer-only embeddings have no preset (quant_mode false "
                                             "has: a lookup, sums and a LayerNorm)");
    if (family == "roformer") {  // RoFormerConfig's embedding_size: hidden_size when absent
        const Index embedding_size = detail::positive_key(config, name, {"embedding_size"}, false);
        if (embedding_size != 0) result.embedding_size = embedding_size;
    }
    if (detail::is_bart_like(family) || family == "trocr")
        result.layer_norm_eps = 1e-5;  // nn.LayerNorm(d_model): torch's default
    if (xlm) result.layer_norm_eps = detail::epsilon_key(config, name, {"layer_norm_eps"}, 1e-12);
    if (family == "bloom") result.layer_norm_eps = detail::epsilon_key(config, name, {"layer_norm_epsilon"}, 1e-5);
    if (family == "distilbert") result.layer_norm_eps = 1e-12;  // fixed in its Embeddings module
    if (family == "esm") {  // EsmConfig's defaults: token_dropout false, layer_norm_eps 1e-12
        result.layer_norm_eps = detail::epsilon_key(config, name, {"layer_norm_eps"}, 1e-12);
        if (const nlohmann::json* dropout = detail::find_key(config, {"token_dropout"})) {
            if (!dropout->is_boolean())
                seqembed::detail::fail<format_error>(name, ": 'token_dropout' is ", dropout->dump(), ", not a boolean");
            result.token_dropout = dropout->get<bool>();
        }
        if (const nlohmann::json* mask = detail::find_key(config, {"mask_token_id"})) {
            if (!mask->is_number_integer() || mask->get<std::int64_t>() < 0 ||
                mask->get<std::int64_t>() >= result.vocab_size)
                seqembed::detail::fail<format_error>(name, ": 'mask_token_id' is ", mask->dump(),
                                                     ", not a token id below vocab_size ", result.vocab_size);
            result.mask_token_id = mask->get<std::int64_t>();
        }
    }
    if (family == "modernbert") {
        result.layer_norm_eps = detail::epsilon_key(config, name, {"norm_eps"}, 1e-5);
        if (const nlohmann::json* bias = detail::find_key(config, {"norm_bias"})) {
            if (!bias->is_boolean())
                seqembed::detail::fail<format_error>(name, ": 'norm_bias' is ", bias->dump(), ", not a boolean");
            result.layer_norm_bias = bias->get<bool>();
        } else {
            result.layer_norm_bias = false;  // ModernBertConfig's default
        }
    }
    if (const nlohmann::json* pad = detail::find_key(config, {"pad_token_id"})) {
        if (!pad->is_number_integer())
            seqembed::detail::fail<format_error>(name, ": 'pad_token_id' is ", pad->dump(), ", not an integer");
        result.pad_token_id = pad->get<std::int64_t>();
    }
    const bool no_padding_idx = detail::is_gpt2_family(family) || family == "gpt_neox" || detail::is_t5_family(family) ||
                                family == "gptj" || family == "codegen" || family == "falcon" ||
                                detail::is_alibi_family(family) || detail::is_clip_text_family(family) ||
                                detail::is_mamba_family(family) || family == "xlnet";
    if (!no_padding_idx) {
        if (config.find("pad_token_id") == config.end()) {
            if (family == "bert" || family == "electra" || family == "distilbert" || family == "albert" ||
                family == "gemma" || family == "gemma2" || family == "pegasus" || family == "cohere" ||
                detail::is_deberta_family(family))
                result.embedding_padding_idx = 0;
            else if (detail::is_roberta_family(family) || detail::is_bart_family(family) || family == "opt" ||
                     family == "olmo" || family == "olmo2" || detail::is_m2m100_family(family) || family == "fsmt" ||
                     family == "trocr")
                result.embedding_padding_idx = 1;
            else if (family == "marian")
                result.embedding_padding_idx = 58100;
            else if (family == "modernbert")
                result.embedding_padding_idx = 50283;
            else if (family == "phi3")
                result.embedding_padding_idx = 32000;
        } else {
            result.embedding_padding_idx = result.pad_token_id;
        }
    }
    if (family == "mpnet") result.embedding_padding_idx = 1;  // MPNetEmbeddings fixes it, whatever the config
    if (xlm) {  // XLMModel's nn.Embedding takes pad_index (2 by default) in transformers 4.57
        const nlohmann::json* pad = detail::find_key(config, {"pad_index"});
        if (pad != nullptr && !pad->is_number_integer())
            seqembed::detail::fail<format_error>(name, ": 'pad_index' is ", pad->dump(), ", not an integer");
        result.embedding_padding_idx = pad != nullptr ? pad->get<std::int64_t>() : 2;
    }
    if (family != "fsmt") result.decoder_vocab_size = result.vocab_size;
    if (family == "marian") {
        const Index decoder_vocab_size = detail::positive_key(config, name, {"decoder_vocab_size"}, false);
        if (decoder_vocab_size != 0) result.decoder_vocab_size = decoder_vocab_size;
    }
    if (const std::optional<TokenId> padding_idx = result.embedding_padding_idx) {
        const Index rows = std::min(result.vocab_size, result.decoder_vocab_size);
        if (*padding_idx < -rows || *padding_idx >= rows)
            seqembed::detail::fail<format_error>(name, ": 'pad_token_id' is ", *padding_idx,
                                                 ", outside the token table's rows [", -rows, ", ", rows,
                                                 ") (nn.Embedding refuses it as padding_idx)");
    }
    if (detail::reads_embedding_multiplier(detail::rules_family(config, family))) {  // granite-vision's too
        if (const nlohmann::json* multiplier = detail::find_key(config, {"embedding_multiplier"})) {
            if (!multiplier->is_number() || !std::isfinite(multiplier->get<double>()))
                seqembed::detail::fail<format_error>(name, ": 'embedding_multiplier' is ", multiplier->dump(),
                                                     ", not a finite number");
            result.embedding_multiplier = multiplier->get<double>();
        }
    }
    // M2M100Config's, NllbMoeConfig's, PLBartConfig's and FSMTConfig's default: true; the others' false.
    result.scale_embedding = detail::is_m2m100_family(family) || family == "plbart" || family == "fsmt";
    if (const nlohmann::json* scale = detail::find_key(config, {"scale_embedding"})) {
        if (!scale->is_boolean())
            seqembed::detail::fail<format_error>(name, ": 'scale_embedding' is ", scale->dump(), ", not a boolean");
        result.scale_embedding = scale->get<bool>();
    }
    if (family == "led") result.scale_embedding = false;  // LEDConfig has no such key: LED never scales
    return result;
}

/// @brief BERT's input stage: word + token type, + position, LayerNorm (layer_norm_eps).
///        Positions by index after the past tokens (PositionNumbering::sequence_index), as
///        BertEmbeddings slices its position_ids buffer. Tensors `bert.embeddings.*` or
///        `embeddings.*`; LayerNorm as `LayerNorm.weight`/`bias` or, in checkpoints converted
///        from TensorFlow, `LayerNorm.gamma`/`beta`. Other tensors (the int64
///        `embeddings.position_ids` buffer of checkpoints saved before transformers 4.31) are not
///        read.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows; positions left unset (or the family's).
/// @param split which rows of the token table to read: split.of(vocab_size)'s alone (the
///        others are never read), as a shard table (pipeline.embedding().is_shard(): the
///        pipeline is in shard mode); the default, the whole table.
/// @return the stage.
/// @throws file_error, format_error (naming the file and the tensor or key; a missing tensor
///         lists what the checkpoint holds) as the readers; value_error for options.positions
///         other than the family's rule; value_error (ranks outside [1, vocab_size]) or
///         index_error (rank outside [0, ranks)) for a split, VocabularyShard::of_rank's
///         message prefixed with the loader's name and the split.
inline LearnedModelInput load_bert(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                   const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_bert");
    return detail::bert_family(checkpoint, "bert.",
                               detail::family_options(options, "load_bert", PositionNumbering::sequence_index), {});
}

/// @brief ELECTRA's input stage (as BERT's, embedding_size wide) and its embeddings_project when
///        embedding_size differs from hidden_size. Tensors `electra.embeddings.*` or
///        `embeddings.*`, `electra.embeddings_project.*` or `embeddings_project.*`.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
///        embeddings_project is unchanged (applied to the stage's output).
/// @return the stage; `projection` maps its output to hidden_size.
/// @throws file_error, format_error as the readers; value_error as load_bert.
inline LearnedModelInput load_electra(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                      const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_electra");
    LearnedModelInput stage = detail::bert_family(
        checkpoint, "electra.", detail::family_options(options, "load_electra", PositionNumbering::sequence_index), {});
    const ModelConfig& config = checkpoint.config();
    if (config.embedding_size != config.hidden_size)  // ElectraModel has the layer only then
        stage.projection = detail::linear(checkpoint, {"electra.embeddings_project.", "embeddings_project."});
    return stage;
}

/// @brief RoBERTa's (and XLM-RoBERTa's, CamemBERT's) input stage: as BERT's, with RoBERTa's own position rule whatever padding
///        the forward is given (create_position_ids_from_input_ids,
///        PositionNumbering::non_padding_ids): ids other than pad_token_id count from row
///        padding_idx + 1 (after the past tokens), a pad id anywhere reads row padding_idx and the
///        tokens after it shift back. The padding given to the forward says which rows are
///        zero (or, with PaddedRows::computed, none are). Tensors `roberta.embeddings.*` or
///        `embeddings.*`. Explicit position ids given to pipeline.forward are positions (row
///        padding_idx + 1 + id); io::Model::forward takes them as Hugging Face does, as rows.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage.
/// @throws file_error, format_error as the readers; value_error as load_bert, or for a
///         padding_id other than pad_token_id.
inline LearnedModelInput load_roberta(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                      const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_roberta");
    const std::int64_t padding_idx = checkpoint.config().pad_token_id.value_or(1);
    return detail::bert_family(
        checkpoint, "roberta.",
        detail::family_options(options, "load_roberta", PositionNumbering::non_padding_ids, padding_idx),
        LearnedPositionsOptions::roberta(padding_idx));
}

/// @brief DistilBERT's input stage: word + position (by index, PositionNumbering::sequence_index,
///        as Embeddings slices its position_ids buffer), LayerNorm (eps 1e-12, fixed in the
///        module); no token types, no scale. Tensors `distilbert.embeddings.*` or `embeddings.*`.
///        A checkpoint made with sinusoidal_pos_embds holds its fixed table as
///        position_embeddings.weight, which is read as stored (Hugging Face freezes it in
///        training; freeze it by not stepping it).
/// @param directory holds config.json (hidden width `dim`) and model.safetensors (or
///        model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage.
/// @throws file_error, format_error as the readers; value_error as load_bert.
inline LearnedModelInput load_distilbert(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                         const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split,
                                        "load_distilbert");
    const ModelConfig& config = checkpoint.config();
    const auto names = [](const std::string& tail) {
        return std::vector<std::string>{"distilbert.embeddings." + tail, "embeddings." + tail};
    };
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        checkpoint.token_embedding(names("word_embeddings.weight"), config.hidden_size, EmbeddingScale::none()),
        checkpoint.positions(names("position_embeddings.weight"), config.max_positions, config.hidden_size, {}),
        detail::family_options(options, "load_distilbert", PositionNumbering::sequence_index));
    pipeline.set_layer_norm(checkpoint.layer_norm(names("LayerNorm."), config.hidden_size));
    LearnedModelInput stage{config, std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    const std::filesystem::path file = directory / "config.json";
    stage.fixed_positions =
        detail::boolean_key(detail::read_json_object(file), detail::path_name(file), "sinusoidal_pos_embds");
    return stage;
}

/// @brief ALBERT's input stage: as BERT's at width embedding_size (word + token type, +
///        position, LayerNorm), and the encoder's embedding_hidden_mapping_in (embedding_size ->
///        hidden_size), which AlbertTransformer applies first. Tensors `albert.embeddings.*` or
///        `embeddings.*`, `albert.encoder.embedding_hidden_mapping_in.*` or
///        `encoder.embedding_hidden_mapping_in.*`.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage; `projection` maps its output to hidden_size.
/// @throws file_error, format_error as the readers; value_error as load_bert.
inline LearnedModelInput load_albert(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                     const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_albert");
    LearnedModelInput stage = detail::bert_family(
        checkpoint, "albert.", detail::family_options(options, "load_albert", PositionNumbering::sequence_index), {});
    stage.projection = detail::linear(checkpoint,
                                      {"albert.encoder.embedding_hidden_mapping_in.", "encoder.embedding_hidden_mapping_in."});
    return stage;
}

/// @brief MPNet's input stage (sentence-transformers' all-mpnet-base-v2 and the like): word +
///        position, LayerNorm (layer_norm_eps); no token types, no scale. Both tables have
///        padding_idx 1, which MPNetEmbeddings fixes whatever pad_token_id says, and positions
///        come from the ids as RoBERTa's (PositionNumbering::non_padding_ids, padding id 1):
///        ids other than 1 count from row 2. Tensors `mpnet.embeddings.*` or `embeddings.*`.
///        Explicit position ids given to pipeline.forward are positions (row 2 + id);
///        io::Model::forward takes them as Hugging Face does, as rows.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage.
/// @throws file_error, format_error as the readers; value_error as load_bert, or for a
///         PipelineOptions::padding_id other than 1.
inline LearnedModelInput load_mpnet(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                    const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_mpnet");
    const ModelConfig& config = checkpoint.config();
    constexpr std::int64_t padding_idx = 1;
    const auto names = [](const std::string& tail) {
        return std::vector<std::string>{"mpnet.embeddings." + tail, "embeddings." + tail};
    };
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        checkpoint.token_embedding(names("word_embeddings.weight"), config.hidden_size, EmbeddingScale::none()),
        checkpoint.positions(names("position_embeddings.weight"), config.max_positions, config.hidden_size,
                             LearnedPositionsOptions::roberta(padding_idx)),
        detail::family_options(options, "load_mpnet", PositionNumbering::non_padding_ids, padding_idx));
    pipeline.set_layer_norm(checkpoint.layer_norm(names("LayerNorm."), config.hidden_size));
    return {config, std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
}

/// @brief ModernBERT's input stage: tok_embeddings, then LayerNorm (norm_eps; no bias unless
///        norm_bias), no additive positions; and its two rotary stages: `rotary` for the global
///        attention layers (global_rope_theta, 160000), `local_rotary` for the sliding-window
///        ones (local_rope_theta, 10000), or transformers 5's rope_parameters by layer type.
///        Positions by index (PositionNumbering::sequence_index). Tensors
///        `model.embeddings.*` or `embeddings.*`.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout (embedding_dropout's place), threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage; `rotary` and `local_rotary` are set.
/// @throws file_error, format_error as the readers and read_rotary_config; value_error as load_bert.
inline LookupModelInput load_modernbert(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                        const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split,
                                        "load_modernbert");
    const ModelConfig& config = checkpoint.config();
    InputPipeline<float, NoPositions<float>> pipeline(
        checkpoint.token_embedding({"model.embeddings.tok_embeddings.weight", "embeddings.tok_embeddings.weight"},
                                   config.hidden_size, EmbeddingScale::none()),
        NoPositions<float>(config.hidden_size),
        detail::family_options(options, "load_modernbert", PositionNumbering::sequence_index));
    pipeline.set_layer_norm(
        checkpoint.layer_norm({"model.embeddings.norm.", "embeddings.norm."}, config.hidden_size, config.layer_norm_bias));
    const std::string name = detail::path_name(directory / "config.json");
    const nlohmann::json json = detail::read_json_object(directory / "config.json");
    LookupModelInput stage{
        config,
        std::move(pipeline),
        std::nullopt,
        detail::rotary_stage(
            detail::layer_rope_config(json, {"full_attention", "global_rope_theta", nullptr, 160000.0, false}), name),
        std::nullopt,
        detail::rotary_stage(
            detail::layer_rope_config(json, {"sliding_attention", "local_rope_theta", "global_rope_theta", 10000.0, false}),
            name)};
    stage.layer_positions = detail::layer_positions(json, config.model_type, name);
    return stage;
}

/// @brief GPT-2's (and GPT-Neo's, GPTBigCode's, OpenAI GPT's) input stage: wte + wpe
///        (positions by index after the past tokens), then, when token types are given,
///        wte(token_type_ids) added after the positions as GPT2Model does; no scale, no
///        LayerNorm. Tensors `transformer.wte.weight` or `wte.weight`, and wpe likewise (OpenAI
///        GPT's `tokens_embed` and `positions_embed`; it takes no past tokens). GPTBigCode numbers
///        positions by index, as transformers 5 does (4.x counted the mask: pass its position
///        ids, cumsum(mask) - 1 with pads at 1, to reproduce it).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
///        With more than one rank the stage has no token-type stage: GPT-2's token types
///        read wte whole, which a shard holds only in part (shard mode refuses them), so
///        token types are not supported for a split GPT-2; the rest is.
/// @return the stage; its token-type table is a view of wte (TokenTypeOrder::after_positions,
///         nothing added without token type ids).
/// @throws file_error, format_error as the readers; value_error as load_bert.
inline LearnedModelInput load_gpt2(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                   const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_gpt2");
    const ModelConfig& config = checkpoint.config();
    const bool gpt1 = config.model_type == "openai-gpt";
    std::vector<std::string> wte = gpt1
                                       ? std::vector<std::string>{"transformer.tokens_embed.weight", "tokens_embed.weight"}
                                       : std::vector<std::string>{"transformer.wte.weight", "wte.weight"};
    const std::vector<std::string> wpe = gpt1 ? std::vector<std::string>{"transformer.positions_embed.weight",
                                                                         "positions_embed.weight"}
                                              : std::vector<std::string>{"transformer.wpe.weight", "wpe.weight"};
    // GPT2LMHeadModel's lm_head shares wte: a deduplicating save of a model holding it (a
    // vision-encoder-decoder's, whose class lists no tied names) may keep lm_head's name.
    if (detail::head_shares_tokens(detail::read_json_object(directory / "config.json"),
                                   detail::path_name(directory / "config.json")))
        wte.push_back("lm_head.weight");
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        checkpoint.token_embedding(wte, config.hidden_size, EmbeddingScale::none()),
        checkpoint.positions(wpe, config.max_positions, config.hidden_size, {}),
        detail::family_options(options, "load_gpt2", PositionNumbering::sequence_index));
    // A shard holds part of wte, which token types read whole: shard mode refuses them.
    if (!checkpoint.is_split()) detail::set_wte_token_types(checkpoint, pipeline, wte);
    return {config, std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
}

/// @brief XLM's and FlauBERT's input stage (model_type xlm, flaubert): `embeddings` (no scale;
///        padding_idx pad_index, 2 by default) + `position_embeddings` by index after the past
///        tokens whatever the padding (XLMModel's position_ids buffer; the table is the
///        checkpoint's, learned or, with sinusoidal_embeddings, the sinusoid its init wrote), then
///        the token types, then `layer_norm_emb` (layer_norm_eps, 1e-12 by default); padded rows
///        zero whatever options.padded_rows asks, as the module multiplies its output by the
///        mask. The token types are XLMModel's `token_type_ids`, which it looks up in the word
///        table (a view of it: not for a split checkpoint, as GPT-2's), and which its tokenizers
///        return (zeros: word row 0 added to every token); nothing is added without them. Its
///        `langs` (rows of `lang_embeddings`, which the models with n_langs > 1 and use_lang_emb
///        have, added before the token types) are not an input of this stage: its output is the
///        model's without them, as Hugging Face computes it when none are given. Tensors under
///        `transformer.` (the head models') or none. Hugging Face counts the mask from the pad
///        ids when no attention mask is given, which marks the first tokens, not the real ones,
///        of a left-padded sequence: give the batch its mask.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores; padded rows are zero.
/// @param split which rows of the token table to read, as load_bert; with more than one rank
///        the stage has no token-type stage.
/// @return the stage.
/// @throws file_error, format_error as the readers; value_error as load_bert.
inline LearnedModelInput load_xlm(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                  const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_xlm");
    const ModelConfig& config = checkpoint.config();
    const std::string name = detail::path_name(directory / "config.json");
    if (!detail::is_xlm_family(config.model_type))
        seqembed::detail::fail<format_error>(name, ": model_type '", config.model_type,
                                             "' has another input stage than load_xlm builds; load_model reads it");
    const auto names = [](const std::string& tail) {
        return std::vector<std::string>{"transformer." + tail, tail};
    };
    PipelineOptions family = detail::family_options(options, "load_xlm", PositionNumbering::sequence_index);
    family.padded_rows = PaddedRows::zero;  // tensor *= mask
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        checkpoint.token_embedding(names("embeddings.weight"), config.hidden_size, EmbeddingScale::none()),
        checkpoint.positions(names("position_embeddings.weight"), config.max_positions, config.hidden_size, {}),
        family);
    if (!checkpoint.is_split()) detail::set_wte_token_types(checkpoint, pipeline, names("embeddings.weight"));
    pipeline.set_layer_norm(checkpoint.layer_norm(names("layer_norm_emb."), config.hidden_size));
    LearnedModelInput stage{config, std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    const std::filesystem::path file = directory / "config.json";
    stage.fixed_positions =
        detail::boolean_key(detail::read_json_object(file), detail::path_name(file), "sinusoidal_embeddings");
    return stage;
}

/// @brief The text tower's input stage of CLIP and the models with its text embeddings (clip,
///        siglip, siglip2, owlvit, owlv2, xclip, groupvit, clipseg, and each one's text model:
///        clip_text_model, ...): token_embedding + position_embedding of positions 0 .. seq - 1
///        whatever the padding (CLIPTextEmbeddings' position_ids buffer; no past), no scale, no
///        padding_idx, nothing more (CLIP's final_layer_norm follows the encoder). Keys from
///        text_config where the config has one (and a legacy text_config_dict over it, with the
///        text config class's defaults, where the config class reads one), with the text config
///        class's defaults for those it leaves out (OWL-ViT's 16 positions). Tensors
///        `text_model.embeddings.*` (the two-tower models and most text models save them so),
///        `embeddings.*`, or under the detector's or segmenter's base model:
///        `owlvit.text_model.`, `owlv2.text_model.` (OwlViTForObjectDetection,
///        Owlv2ForObjectDetection), `clip.text_model.` (CLIPSegForImageSegmentation); the
///        vision tower's are not read, nor the `position_ids` buffer of files saved before
///        transformers 4.31.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage; a sequence longer than max_position_embeddings (77 for CLIP, 64 for
///         SigLIP) is refused by its forward, as transformers refuses it.
/// @throws file_error, format_error as the readers; value_error as load_bert.
inline LearnedModelInput load_clip_text(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                        const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split,
                                        "load_clip_text");
    const ModelConfig& config = checkpoint.config();
    const detail::ClipTextTower* tower = detail::clip_text_tower(config.model_type);
    if (tower == nullptr)
        seqembed::detail::fail<format_error>(detail::path_name(directory / "config.json"), ": model_type '",
                                             config.model_type, "' is not one of load_clip_text's text towers "
                                             "(load_model reads it)");
    const std::string outer = tower->outer_prefix;
    const auto names = [&](const std::string& tail) {
        std::vector<std::string> out{"text_model.embeddings." + tail, "embeddings." + tail};
        if (!outer.empty()) out.insert(out.begin(), outer + "text_model.embeddings." + tail);
        return out;
    };
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        checkpoint.token_embedding(names("token_embedding.weight"), config.hidden_size, EmbeddingScale::none()),
        checkpoint.positions(names("position_embedding.weight"), config.max_positions, config.hidden_size, {}),
        detail::family_options(options, "load_clip_text", PositionNumbering::sequence_index));
    return {config, std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
}

/// @brief BLIP's text input stage (blip, blip_text_model): BlipTextEmbeddings, word_embeddings
///        (padding_idx pad_token_id) + position_embeddings at past + t whatever the padding,
///        then LayerNorm (layer_norm_eps); no token types and no scale. Keys from text_config
///        where the config has one, over BlipTextConfig's defaults (vocabulary 30524, 768 wide,
///        512 positions, eps 1e-12, pad_token_id 0). BLIP's heads hold one or two text towers,
///        each with its own tables:
///        - `pipeline`: the text encoder's (`text_encoder.`: BlipForQuestionAnswering's question,
///          BlipForImageTextRetrieval's text; `text_model.`: BlipModel's; `embeddings.`:
///          BlipTextModel's), else the text decoder's;
///        - `decoder`: the text decoder's (`text_decoder.bert.`: BlipForConditionalGeneration's
///          caption, BlipForQuestionAnswering's answer; `bert.`: BlipTextLMHeadModel's), when
///          the checkpoint has one. BlipForConditionalGeneration.generate puts bos_token_id
///          (30522) in place of the prompt's first id and drops its last, and passes the mask's
///          cumsum - 1 as position_ids (on a padded prompt not the module's past + t: give
///          them, as io::Model::forward takes them); its forward reads the ids as given.
///        The vision tower's tensors are not read.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout (hidden_dropout_prob, 0 by default, is the caller's to give), threads,
///        stores, padded rows.
/// @param split which rows of the token tables to read, as load_bert.
/// @return the stages.
/// @throws file_error, format_error as the readers, and for a model_type other than these two;
///         value_error as load_bert.
inline LearnedModelInput load_blip_text(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                        const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split,
                                        "load_blip_text");
    const ModelConfig& config = checkpoint.config();
    if (config.model_type != "blip" && config.model_type != "blip_text_model")
        seqembed::detail::fail<format_error>(detail::path_name(directory / "config.json"), ": model_type '",
                                             config.model_type, "' is not BLIP's (load_model reads it)");
    using Stage = InputPipeline<float, LearnedPositionalEmbedding<float>>;
    const auto names = [](const std::vector<std::string>& prefixes, const std::string& tail) {
        std::vector<std::string> out;
        for (const std::string& prefix : prefixes) out.push_back(prefix + "embeddings." + tail);
        return out;
    };
    const auto stage = [&](const std::vector<std::string>& prefixes) {
        Stage pipeline(checkpoint.token_embedding(names(prefixes, "word_embeddings.weight"), config.hidden_size,
                                                  EmbeddingScale::none()),
                       checkpoint.positions(names(prefixes, "position_embeddings.weight"), config.max_positions,
                                            config.hidden_size, LearnedPositionsOptions::bert()),
                       detail::family_options(options, "load_blip_text", PositionNumbering::sequence_index));
        pipeline.set_layer_norm(checkpoint.layer_norm(names(prefixes, "LayerNorm."), config.hidden_size));
        return pipeline;
    };
    const std::vector<std::string> encoders{"text_encoder.", "text_model.", ""};
    const std::vector<std::string> decoders{"text_decoder.bert.", "bert."};
    std::optional<Stage> decoder;
    if (checkpoint.has(names(decoders, "word_embeddings.weight"))) decoder = stage(decoders);
    std::vector<std::string> either = encoders;
    either.insert(either.end(), decoders.begin(), decoders.end());
    Stage pipeline = checkpoint.has(names(encoders, "word_embeddings.weight")) ? stage(encoders)
                     : decoder                                                ? *decoder
                                                                              : stage(either);
    return {config, std::move(pipeline), std::nullopt, std::nullopt, std::move(decoder), std::nullopt};
}

/// @brief Whisper's decoder input stage (whisper): embed_tokens (its padding_idx
///        pad_token_id, 50256 by default) + embed_positions at past + t whatever the padding,
///        rows of max_target_positions (448); no scale (WhisperDecoder defines embed_scale and
///        never applies it) and no LayerNorm. The encoder's input is the log-mel spectrogram
///        through two convolutions, not token ids: not read. Tensors `model.decoder.*`
///        (WhisperForConditionalGeneration, the Hub's files) or `decoder.*` (WhisperModel).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout (Whisper's `dropout`, 0 by default, is the caller's to give), threads,
///        stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage, as `pipeline` and as `decoder` (the same tables).
/// @throws file_error, format_error as the readers; value_error as load_bert.
inline LearnedModelInput load_whisper(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                      const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split,
                                        "load_whisper");
    const ModelConfig& config = checkpoint.config();
    const auto names = [](const std::string& tail) {
        return std::vector<std::string>{"model.decoder." + tail, "decoder." + tail};
    };
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        checkpoint.token_embedding(names("embed_tokens.weight"), config.hidden_size, EmbeddingScale::none()),
        checkpoint.positions(names("embed_positions.weight"), config.max_positions, config.hidden_size, {}),
        detail::family_options(options, "load_whisper", PositionNumbering::sequence_index));
    InputPipeline<float, LearnedPositionalEmbedding<float>> decoder = pipeline;
    return {config, std::move(pipeline), std::nullopt, std::nullopt, std::move(decoder), std::nullopt};
}

namespace detail {

/// rows x weight^T (OPT's project_in), one row at a time through an aligned copy of it: each
/// output row depends on its input row and the weight alone, never on the rows around it or
/// where it lies in memory, so a shard's projected rows are the whole table's, bit for bit.
inline RowMatrix<float> project_rows(const Eigen::Ref<const RowMatrix<float>>& rows,
                                     const Eigen::Ref<const RowMatrix<float>>& weight) {
    RowMatrix<float> out(rows.rows(), weight.rows());
    Eigen::Matrix<float, 1, Eigen::Dynamic> row(rows.cols());
    for (Index r = 0; r < rows.rows(); ++r) {
        row = rows.row(r);
        out.row(r).noalias() = row * weight.transpose();
    }
    return out;
}

/// The token table of BART's and Marian's encoders (the shared one).
inline TokenEmbedding<float> shared_tokens(const Checkpoint& checkpoint, const std::vector<std::string>& names) {
    const ModelConfig& config = checkpoint.config();
    return checkpoint.token_embedding(names, config.hidden_size,
                                      config.scale_embedding ? EmbeddingScale::sqrt_d_model() : EmbeddingScale::none());
}

/// The rows of a position table of `positions` positions after `offset` rows.
/// @throws format_error naming the family (`whose`) when they do not fit an Index.
inline Index table_rows(const char* whose, Index positions, Index offset) {
    if (positions > std::numeric_limits<Index>::max() - offset)
        seqembed::detail::fail<format_error>(whose, " max_position_embeddings ", positions, " + ", offset,
                                             " rows do not fit an index");
    return positions + offset;
}

/// Where a BART-like family's stage differs from BART's: the tensors' prefix, the rows before
/// position 0, whether layernorm_embedding follows the sum, and each side's positions.
struct BartLayout {
    std::string prefix = "model.";   ///< of shared, encoder.* and decoder.* (LED's "led.")
    Index offset = 2;                ///< BART's 2; Blenderbot's, BigBird-Pegasus's and LED's 0
    bool layer_norm = true;          ///< BART's and LED's layernorm_embedding; Blenderbot's and
                                     ///< BigBird-Pegasus's none (BigBird-Pegasus's is its last layer's)
    Index encoder_positions = 0;     ///< max_position_embeddings (LED's max_encoder_position_embeddings)
    Index decoder_positions = 0;     ///< max_position_embeddings (LED's max_decoder_position_embeddings)
};

/// The BartLayout of a family of is_bart_like (Blenderbot, BigBird-Pegasus and LED from their
/// v4.57.6 modules: learned positions from row 0, by index after the past tokens).
inline BartLayout bart_layout(const ModelConfig& config, const nlohmann::json& json, const std::string& name) {
    BartLayout layout;
    layout.encoder_positions = layout.decoder_positions = config.max_positions;
    const std::string& family = config.model_type;
    if (family == "blenderbot" || family == "bigbird_pegasus") {
        layout.offset = 0;
        layout.layer_norm = false;
    }
    if (family == "led") {
        layout.prefix = "led.";
        layout.offset = 0;
        const Index decoder = positive_key(json, name, {"max_decoder_position_embeddings"}, false);
        layout.decoder_positions = decoder != 0 ? decoder : 1024;  // LEDConfig's
    }
    return layout;
}

/// BART's encoder or decoder stage ("encoder" or "decoder") in `layout`: the shared token table
/// times sqrt(d_model) when scale_embedding, its learned positions (BART's at offset 2), its
/// layernorm_embedding (eps 1e-5) where the family has one. With `tied_head`, the token table
/// may be found as `lm_head.weight` too (a decoder alone whose head shares it).
inline InputPipeline<float, LearnedPositionalEmbedding<float>> bart_stage(const Checkpoint& checkpoint,
                                                                           const std::string& side,
                                                                           const BartLayout& layout,
                                                                           const PipelineOptions& options,
                                                                           bool tied_head = false) {
    const ModelConfig& config = checkpoint.config();
    const Index width = config.hidden_size;
    const std::string& p = layout.prefix;
    LearnedPositionsOptions rows;
    rows.offset = layout.offset;
    const Index positions = side == "encoder" ? layout.encoder_positions : layout.decoder_positions;
    std::vector<std::string> tokens = {p + "shared.weight", p + side + ".embed_tokens.weight", "shared.weight",
                                       side + ".embed_tokens.weight"};
    if (tied_head) tokens.push_back("lm_head.weight");  // a *ForCausalLM's, which a deduplicating save may keep
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        shared_tokens(checkpoint, tokens),
        checkpoint.positions({p + side + ".embed_positions.weight", side + ".embed_positions.weight"},
                             table_rows("BART's", positions, layout.offset), width, rows),
        options);
    if (layout.layer_norm)
        pipeline.set_layer_norm(
            checkpoint.layer_norm({p + side + ".layernorm_embedding.", side + ".layernorm_embedding."}, width));
    return pipeline;
}

/// Marian's sinusoidal table for `side`: the checkpoint's when it has one (bit for bit what the
/// model adds; the decoder's table is the encoder's formula, so the encoder's serves when the
/// decoder's was not saved), else computed (SinusoidalOptions::hf_marian(), correctly rounded).
inline LearnedPositionalEmbedding<float> marian_positions(const Checkpoint& checkpoint, const std::string& side) {
    const ModelConfig& config = checkpoint.config();
    const std::vector<std::string> table = {"model." + side + ".embed_positions.weight", side + ".embed_positions.weight",
                                            "model.encoder.embed_positions.weight", "encoder.embed_positions.weight"};
    if (checkpoint.has(table)) return checkpoint.positions(table, config.max_positions, config.hidden_size, {});
    SinusoidalOptions sinusoidal = SinusoidalOptions::hf_marian();
    sinusoidal.max_positions = config.max_positions;
    return LearnedPositionalEmbedding<float>::from_weights(
        SinusoidalPositionalEncoding<float>(config.hidden_size, sinusoidal).table());
}

}  // namespace detail

/// @brief BART's (and mBART's, PLBart's, MVP's) input stages, and in their layouts Blenderbot's,
///        BigBird-Pegasus's (positions from row 0, no layernorm_embedding: BigBird-Pegasus's
///        module of that name is its last layer's) and LED's (`led.` tensors, positions from
///        row 0, max_encoder_position_embeddings and max_decoder_position_embeddings rows).
///        The encoder's (`pipeline`): tokens x sqrt(d_model) when
///        scale_embedding, + learned positions at offset 2 (by index), layernorm_embedding (eps
///        1e-5). The decoder's (`decoder`): the same shared token table, the decoder's own
///        position table (offset 2, positions after the past tokens) and layernorm_embedding.
///        Tensors `model.shared.weight` or `model.{encoder,decoder}.embed_tokens.weight` (with
///        or without `model.`), `model.{encoder,decoder}.embed_positions.weight`,
///        `model.{encoder,decoder}.layernorm_embedding.*`. A checkpoint without decoder
///        tensors (an encoder alone) gives no decoder stage. A decoder alone
///        (ModelConfig::decoder_only: a BartForCausalLM or MBartForCausalLM, or the MBart
///        decoder of a vision-encoder-decoder as Donut and Nougat, under `decoder.`) gives its
///        decoder's stage as `pipeline`, which takes past tokens.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows (both stages).
/// @param split which rows of the token table to read, as load_bert.
///        Both stages read the same rows of the shared table.
/// @return the stages.
/// @throws file_error, format_error as the readers; value_error as load_bert.
inline LearnedModelInput load_bart(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                   const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_bart");
    const std::string name = detail::path_name(directory / "config.json");
    if (!detail::is_bart_like(checkpoint.config().model_type))
        seqembed::detail::fail<format_error>(name, ": model_type '", checkpoint.config().model_type,
                                             "' has another input stage than load_bart builds; load_model reads it");
    const detail::BartLayout layout = detail::bart_layout(
        checkpoint.config(), detail::language_config(detail::read_json_object(directory / "config.json"), name), name);
    const PipelineOptions family = detail::family_options(options, "load_bart", PositionNumbering::sequence_index);
    if (checkpoint.config().decoder_only) {  // its decoder's stage is the model's, and takes past tokens
        const bool tied = detail::head_shares_tokens(detail::read_json_object(directory / "config.json"), name);
        return {checkpoint.config(), detail::bart_stage(checkpoint, "decoder", layout, family, tied), std::nullopt,
                std::nullopt, std::nullopt, std::nullopt};
    }
    LearnedModelInput stage{checkpoint.config(), detail::bart_stage(checkpoint, "encoder", layout, family), std::nullopt,
                            std::nullopt, std::nullopt, std::nullopt};
    if (checkpoint.has({layout.prefix + "decoder.embed_positions.weight", "decoder.embed_positions.weight"}))
        stage.decoder = detail::bart_stage(checkpoint, "decoder", layout, family);
    return stage;
}

/// @brief OPT's (and BioGPT's) decoder input stage: tokens (BioGPT's `biogpt.embed_tokens.weight`
///        x sqrt(hidden_size) when scale_embedding, true by default; OPT's through project_in when word_embed_proj_dim differs
///        from hidden_size: the projected table is computed once, at load) + learned positions at
///        offset 2, counted over real tokens of the attention mask, past ones included
///        (PositionNumbering::real_tokens: padded tokens read row 1), no scale, no LayerNorm.
///        Tensors `model.decoder.embed_tokens.weight`, `model.decoder.embed_positions.weight`,
///        `model.decoder.project_in.weight` (with or without `model.`).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
///        With project_in, only those rows are projected, each bit for bit as the whole
///        table's projection gives it.
/// @return the stage.
/// @throws file_error, format_error as the readers; value_error as load_bert.
inline LearnedModelInput load_opt(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                  const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_opt");
    const ModelConfig& config = checkpoint.config();
    const Index width = config.hidden_size;
    if (config.model_type == "biogpt") {
        // BioGptModel: BioGptScaledWordEmbedding (x sqrt(hidden_size) when scale_embedding, true
        // by default) + OPT's positions (BioGptLearnedPositionalEmbedding, offset 2, the mask's
        // cumsum in transformers 4.57; 5.x numbers by index, the same without left padding).
        InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
            detail::shared_tokens(checkpoint, {"biogpt.embed_tokens.weight", "embed_tokens.weight"}),
            checkpoint.positions({"biogpt.embed_positions.weight", "embed_positions.weight"},
                                 detail::table_rows("BioGPT's", config.max_positions, 2), width,
                                 LearnedPositionsOptions::bart()),
            detail::family_options(options, "load_opt", PositionNumbering::real_tokens));
        return {config, std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    }
    const std::vector<std::string> tokens = {"model.decoder.embed_tokens.weight", "decoder.embed_tokens.weight"};
    std::optional<TokenEmbedding<float>> embedding;
    TokenEmbeddingOptions unscaled;
    unscaled.scale = EmbeddingScale::none();
    unscaled.padding_idx = config.embedding_padding_idx;
    if (config.embedding_size != width) {
        const VocabularyShard& shard = checkpoint.shard();
        const Tensor<float> table =
            checkpoint.token_rows(tokens, shard, config.embedding_size, "vocab_size x word_embed_proj_dim");
        const Tensor<float> project = checkpoint.matrix({"model.decoder.project_in.weight", "decoder.project_in.weight"},
                                                        width, config.embedding_size, "hidden_size x word_embed_proj_dim");
        if (checkpoint.is_split()) unscaled.shard = shard;
        embedding = TokenEmbedding<float>::from_weights(
            detail::project_rows(Eigen::Map<const RowMatrix<float>>(table.data(), shard.rows, config.embedding_size),
                                 Eigen::Map<const RowMatrix<float>>(project.data(), width, config.embedding_size)),
            unscaled);
    } else {
        embedding = checkpoint.token_embedding(tokens, width, EmbeddingScale::none());
    }
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        std::move(*embedding),
        checkpoint.positions({"model.decoder.embed_positions.weight", "decoder.embed_positions.weight"},
                             config.max_positions + 2, width, LearnedPositionsOptions::bart()),
        detail::family_options(options, "load_opt", PositionNumbering::real_tokens));
    return {config, std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
}

/// @brief Marian's (and Pegasus's) input stages: tokens x sqrt(d_model) when scale_embedding, + the sinusoidal
///        table in Hugging Face Marian's layout (by index after the past tokens). The encoder's
///        (`pipeline`) reads the shared token table; the decoder's (`decoder`) its own
///        `model.decoder.embed_tokens.weight` when the checkpoint has it (decoder_vocab_size
///        rows), else the shared one. A side's `embed_positions.weight` is used when present
///        (bit for bit what the model adds); otherwise the table is computed
///        (SinusoidalOptions::hf_marian(), correctly rounded, which may differ from Hugging
///        Face's numpy table in the last bit).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows (both stages).
/// @param split which rows of the token table to read, as load_bert.
///        The decoder's own table (decoder_vocab_size rows) is read as
///        split.of(decoder_vocab_size)'s rows; without one it shares the encoder's shard.
/// @return the stages.
/// @throws file_error, format_error as the readers; value_error as load_bert.
inline LearnedModelInput load_marian(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                     const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_marian");
    const ModelConfig& config = checkpoint.config();
    const PipelineOptions family = detail::family_options(options, "load_marian", PositionNumbering::sequence_index);
    const std::vector<std::string> shared = {"model.encoder.embed_tokens.weight", "model.shared.weight",
                                             "encoder.embed_tokens.weight", "shared.weight"};
    LearnedModelInput stage{config,
                            InputPipeline<float, LearnedPositionalEmbedding<float>>(
                                detail::shared_tokens(checkpoint, shared),
                                detail::marian_positions(checkpoint, "encoder"), family),
                            std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    const std::vector<std::string> own = {"model.decoder.embed_tokens.weight", "decoder.embed_tokens.weight"};
    std::optional<TokenEmbedding<float>> tokens;
    if (config.model_type == "marian" && checkpoint.has(own)) {  // Pegasus's decoder always shares
        TokenEmbeddingOptions scaled;
        scaled.scale = config.scale_embedding ? EmbeddingScale::sqrt_d_model() : EmbeddingScale::none();
        tokens = checkpoint.token_embedding(own, checkpoint.shard_of(config.decoder_vocab_size), config.hidden_size,
                                            scaled, "decoder_vocab_size x d_model");
    } else {
        tokens = stage.pipeline.embedding();
    }
    stage.decoder.emplace(std::move(*tokens), detail::marian_positions(checkpoint, "decoder"), family);
    stage.fixed_positions = true;
    return stage;
}

namespace detail {

/// fairseq's sinusoid table as Hugging Face's M2M100SinusoidalPositionalEmbedding (and FSMT's
/// SinusoidalPositionalEmbedding) computes it: get_embedding over `rows` rows in float32
/// arithmetic (row r at angle r x frequency), row padding_idx zero, read as RoBERTa's rows are
/// (from padding_idx + 1, pad ids row padding_idx). `whose` names the family in messages.
inline LearnedPositionalEmbedding<float> fairseq_positions(const ModelConfig& config, std::int64_t padding_idx,
                                                           Index rows, const char* whose) {
    SinusoidalOptions sinusoidal = SinusoidalOptions::fairseq(padding_idx);
    sinusoidal.offset = 0;
    sinusoidal.precision = TablePrecision::follow_scalar;
    sinusoidal.max_positions = rows;
    if (padding_idx < 0 || padding_idx >= sinusoidal.max_positions)
        seqembed::detail::fail<format_error>(whose, " padding_idx ", padding_idx,
                                             " is outside its position table's ", sinusoidal.max_positions, " rows");
    RowMatrix<float> table = SinusoidalPositionalEncoding<float>(config.hidden_size, sinusoidal).table();
    table.row(static_cast<Index>(padding_idx)).setZero();
    return LearnedPositionalEmbedding<float>::from_weights(table, LearnedPositionsOptions::roberta(padding_idx));
}

/// M2M100's (NLLB's) position table: fairseq_positions over max_position_embeddings + 2 rows.
inline LearnedPositionalEmbedding<float> m2m100_positions(const ModelConfig& config, std::int64_t padding_idx) {
    if (config.max_positions > std::numeric_limits<Index>::max() - 2)
        seqembed::detail::fail<format_error>("M2M100's max_position_embeddings ", config.max_positions,
                                             " + 2 rows do not fit an index");
    return fairseq_positions(config, padding_idx, config.max_positions + 2, "M2M100's");
}

/// FSMT's position table for `side` (encoder, decoder): max_position_embeddings + padding_idx + 1
/// rows, the checkpoint's when it holds them (an nn.Embedding's weight, which save_pretrained
/// writes; files converted from fairseq have none), else fairseq_positions; read as RoBERTa's.
inline LearnedPositionalEmbedding<float> fsmt_positions(const Checkpoint& checkpoint, const std::string& side,
                                                        std::int64_t padding_idx) {
    const ModelConfig& config = checkpoint.config();
    if (padding_idx < 0 || config.max_positions > std::numeric_limits<Index>::max() - 1 - padding_idx)
        seqembed::detail::fail<format_error>("FSMT's max_position_embeddings ", config.max_positions, " + padding_idx ",
                                             padding_idx, " + 1 rows do not fit an index");
    const Index rows = config.max_positions + static_cast<Index>(padding_idx) + 1;
    const std::vector<std::string> names = {"model." + side + ".embed_positions.weight",
                                            side + ".embed_positions.weight"};
    if (checkpoint.has(names))
        return checkpoint.positions(names, rows, config.hidden_size, LearnedPositionsOptions::roberta(padding_idx));
    return fairseq_positions(config, padding_idx, rows, "FSMT's");
}

}  // namespace detail

/// @brief M2M100's and NLLB's input stages (model_type m2m_100, and NLLB-MoE's nllb-moe, whose
///        embeddings are the same modules): the shared token table x
///        sqrt(d_model) (scale_embedding, true by default), + the sinusoidal table Hugging Face
///        computes (fairseq's: [sin | cos], exponent i/(d/2 - 1), float32 arithmetic, row
///        padding_idx zero; not in the checkpoint), positions from the ids as RoBERTa's
///        (PositionNumbering::non_padding_ids: real tokens count from row pad_token_id + 1 after
///        the past tokens, pad ids read the zero row); no LayerNorm. The decoder's stage
///        (`decoder`) reads the same tables, positions after its past tokens. Tensors
///        `model.shared.weight` or `model.encoder.embed_tokens.weight` (with or without
///        `model.`). The table has max_position_embeddings + 2 rows: positions past it are
///        refused (Hugging Face grows its table). Hugging Face's table is a constant buffer:
///        the stage holds it as a learned table, so freeze it by not stepping it.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows (both stages).
/// @param split which rows of the token table to read, as load_bert.
/// @return the stages.
/// @throws file_error, format_error as the readers; value_error as load_bert, or for a
///         padding_id other than pad_token_id.
inline LearnedModelInput load_m2m100(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                     const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_m2m100");
    const ModelConfig& config = checkpoint.config();
    // M2M100Config's pad_token_id is 1; an explicit null leaves the positions without a padding id.
    if (!config.embedding_padding_idx)
        seqembed::detail::fail<format_error>(detail::path_name(directory / "config.json"),
                                             ": 'pad_token_id' is null, which M2M100's positions need");
    const std::int64_t padding_idx = *config.embedding_padding_idx;
    const PipelineOptions family =
        detail::family_options(options, "load_m2m100", PositionNumbering::non_padding_ids, padding_idx);
    const std::vector<std::string> shared = {"model.shared.weight", "model.encoder.embed_tokens.weight", "shared.weight",
                                             "encoder.embed_tokens.weight"};
    const LearnedPositionalEmbedding<float> positions = detail::m2m100_positions(config, padding_idx);
    LearnedModelInput stage{config,
                            InputPipeline<float, LearnedPositionalEmbedding<float>>(
                                detail::shared_tokens(checkpoint, shared), positions, family),
                            std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    stage.decoder.emplace(stage.pipeline.embedding(), positions, family);
    stage.fixed_positions = true;
    return stage;
}

/// @brief Kosmos-2's text input stage (kosmos-2: its text_config over Kosmos2TextConfig's
///        defaults; kosmos_2_text_model: the text model's config): embed_tokens x
///        sqrt(embed_dim) (scale_embedding, true by default) + M2M100's sinusoidal table
///        (Kosmos2TextSinusoidalPositionalEmbedding: max_position_embeddings + 2 rows, row
///        pad_token_id zero; not in the checkpoint), positions from the ids as RoBERTa's after
///        the past tokens (PositionNumbering::non_padding_ids); no LayerNorm. Tensors
///        `text_model.model.embed_tokens.weight` (Kosmos2ForConditionalGeneration, Kosmos2Model)
///        or `model.embed_tokens.weight` (Kosmos2TextModel, Kosmos2TextForCausalLM). Kosmos-2 puts
///        the image's features in place of the rows of the ids image_embeds_position_mask marks
///        before the scale: such a row is its feature x sqrt(embed_dim) + the row's position.
///        Positions past the table are refused (Hugging Face grows it).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage.
/// @throws file_error, format_error as the readers, and for a pad_token_id of null; value_error
///         as load_bert.
inline LearnedModelInput load_kosmos2_text(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                           const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split,
                                        "load_kosmos2_text");
    const ModelConfig& config = checkpoint.config();
    const std::string name = detail::path_name(directory / "config.json");
    if (!detail::is_kosmos2_family(config.model_type))
        seqembed::detail::fail<format_error>(name, ": model_type '", config.model_type,
                                             "' is not Kosmos-2's (load_model reads it)");
    if (!config.embedding_padding_idx)
        seqembed::detail::fail<format_error>(name, ": 'pad_token_id' is null, which Kosmos-2's positions need");
    const std::int64_t padding_idx = *config.embedding_padding_idx;
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        detail::shared_tokens(checkpoint, {"text_model.model.embed_tokens.weight", "model.embed_tokens.weight"}),
        detail::m2m100_positions(config, padding_idx),
        detail::family_options(options, "load_kosmos2_text", PositionNumbering::non_padding_ids, padding_idx));
    LearnedModelInput stage{config, std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    stage.fixed_positions = true;
    return stage;
}

/// @brief Speech2Text's decoder input stage (speech_to_text: facebook/s2t-*; the encoder reads
///        filter-bank features, not ids): embed_tokens x sqrt(d_model) (scale_embedding, true by
///        default; padding_idx pad_token_id) + M2M100's sinusoidal table
///        (Speech2TextSinusoidalPositionalEmbedding: max_target_positions + 2 rows, row
///        pad_token_id zero; not in the checkpoint), positions from the ids as RoBERTa's after the
///        past tokens; no LayerNorm. Tensors `model.decoder.*` (Speech2TextForConditionalGeneration)
///        or `decoder.*` (Speech2TextModel). Positions past the table are refused.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage, as `pipeline` and as `decoder` (the same tables).
/// @throws file_error, format_error as the readers, and for a pad_token_id of null; value_error
///         as load_bert.
inline LearnedModelInput load_speech2text(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                          const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split,
                                        "load_speech2text");
    const ModelConfig& config = checkpoint.config();
    const std::string name = detail::path_name(directory / "config.json");
    if (config.model_type != "speech_to_text")
        seqembed::detail::fail<format_error>(name, ": model_type '", config.model_type,
                                             "' is not Speech2Text's (load_model reads it)");
    if (!config.embedding_padding_idx)
        seqembed::detail::fail<format_error>(name, ": 'pad_token_id' is null, which Speech2Text's positions need");
    const std::int64_t padding_idx = *config.embedding_padding_idx;
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        detail::shared_tokens(checkpoint, {"model.decoder.embed_tokens.weight", "decoder.embed_tokens.weight"}),
        detail::m2m100_positions(config, padding_idx),
        detail::family_options(options, "load_speech2text", PositionNumbering::non_padding_ids, padding_idx));
    InputPipeline<float, LearnedPositionalEmbedding<float>> decoder = pipeline;
    LearnedModelInput stage{config, std::move(pipeline), std::nullopt, std::nullopt, std::move(decoder), std::nullopt};
    stage.fixed_positions = true;
    return stage;
}

/// @brief FSMT's input stages (model_type fsmt: facebook/wmt19-*): the encoder's
///        (`pipeline`) reads its own token table (`model.encoder.embed_tokens.weight`,
///        src_vocab_size rows), the decoder's (`decoder`) its own (`model.decoder.embed_tokens.weight`,
///        or `model.decoder.output_projection.weight`, which shares it and which a deduplicating
///        save keeps instead; tgt_vocab_size rows), or the encoder's when tie_word_embeddings;
///        each x sqrt(d_model) (scale_embedding, true by default), + fairseq's sinusoid table
///        (max_position_embeddings + pad_token_id + 1 rows: the checkpoint's
///        `model.{encoder,decoder}.embed_positions.weight` when it holds them, else computed as
///        M2M100's), positions from the ids as M2M100's (PositionNumbering::non_padding_ids:
///        real tokens count from row pad_token_id + 1 after the past tokens, pad ids read the
///        zero row); no LayerNorm. Positions past the table are refused (Hugging Face grows it).
///        The decoder numbers its tokens after the past as FSMTDecoder numbers a whole prefix;
///        transformers 4.57's generate() hands it the last token alone, which restarts the
///        numbering: not followed.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows (both stages).
/// @param split which rows of the token tables to read, as load_bert: the decoder's own table
///        as split.of(tgt_vocab_size)'s rows.
/// @return the stages.
/// @throws file_error, format_error as the readers; value_error as load_bert, or for a
///         padding_id other than pad_token_id.
inline LearnedModelInput load_fsmt(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                   const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_fsmt");
    const ModelConfig& config = checkpoint.config();
    const std::string name = detail::path_name(directory / "config.json");
    if (config.model_type != "fsmt")
        seqembed::detail::fail<format_error>(name, ": model_type '", config.model_type,
                                             "' has another input stage than load_fsmt builds; load_model reads it");
    if (!config.embedding_padding_idx)
        seqembed::detail::fail<format_error>(name, ": 'pad_token_id' is null, which FSMT's positions need");
    const std::int64_t padding_idx = *config.embedding_padding_idx;
    const PipelineOptions family =
        detail::family_options(options, "load_fsmt", PositionNumbering::non_padding_ids, padding_idx);
    TokenEmbeddingOptions scaled;
    scaled.scale = config.scale_embedding ? EmbeddingScale::sqrt_d_model() : EmbeddingScale::none();
    LearnedModelInput stage{config,
                            InputPipeline<float, LearnedPositionalEmbedding<float>>(
                                checkpoint.token_embedding({"model.encoder.embed_tokens.weight",
                                                            "encoder.embed_tokens.weight"},
                                                           checkpoint.shard(), config.hidden_size, scaled,
                                                           "src_vocab_size x d_model"),
                                detail::fsmt_positions(checkpoint, "encoder", padding_idx), family),
                            std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    const nlohmann::json json = detail::language_config(detail::read_json_object(directory / "config.json"), name);
    std::optional<TokenEmbedding<float>> tokens;
    if (detail::boolean_key(json, name, "tie_word_embeddings")) {  // FSMTConfig's default: false
        tokens = stage.pipeline.embedding();
    } else {
        tokens = checkpoint.token_embedding({"model.decoder.embed_tokens.weight",
                                             "model.decoder.output_projection.weight", "decoder.embed_tokens.weight",
                                             "decoder.output_projection.weight"},
                                            checkpoint.shard_of(config.decoder_vocab_size), config.hidden_size, scaled,
                                            "tgt_vocab_size x d_model");
    }
    stage.decoder.emplace(std::move(*tokens), detail::fsmt_positions(checkpoint, "decoder", padding_idx), family);
    stage.fixed_positions = true;
    return stage;
}

/// @brief TrOCR's decoder input stage (model_type trocr, and the `decoder` of a
///        vision-encoder-decoder whose decoder is TrOCR's: microsoft/trocr-*): `embed_tokens` x
///        sqrt(d_model) when scale_embedding (false by default), + positions, then
///        `layernorm_embedding` (eps 1e-5) when layernorm_embedding (true by default). Positions
///        with use_learned_position_embeddings (true by default): `embed_positions` (max_position_embeddings
///        + 2 rows) from row 2 by index after the past, whatever the padding; without it:
///        fairseq's sinusoid table (max_position_embeddings + pad_token_id + 1 rows, computed
///        as M2M100's, not in the checkpoint) numbered from the ids as M2M100's, after the past.
///        Tensors under `decoder.model.decoder.` (VisionEncoderDecoderModel), `model.decoder.`
///        (TrOCRForCausalLM) or none; the image encoder's are not read.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage.
/// @throws file_error, format_error as the readers; value_error as load_bert, or for a
///         padding_id other than pad_token_id (sinusoidal positions).
inline LearnedModelInput load_trocr(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                    const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_trocr");
    const ModelConfig& config = checkpoint.config();
    const std::string name = detail::path_name(directory / "config.json");
    if (config.model_type != "trocr")
        seqembed::detail::fail<format_error>(name, ": model_type '", config.model_type,
                                             "' has another input stage than load_trocr builds; load_model reads it");
    const nlohmann::json json = detail::language_config(detail::read_json_object(directory / "config.json"), name);
    const auto names = [](const std::string& tail) {
        return std::vector<std::string>{"model.decoder." + tail, tail};
    };
    const auto flag = [&](const char* key) {  // TrOCRConfig's defaults: true
        return json.find(key) == json.end() || detail::boolean_key(json, name, key);
    };
    TokenEmbedding<float> tokens = checkpoint.token_embedding(
        names("embed_tokens.weight"), config.hidden_size,
        config.scale_embedding ? EmbeddingScale::sqrt_d_model() : EmbeddingScale::none());
    std::optional<InputPipeline<float, LearnedPositionalEmbedding<float>>> pipeline;
    if (flag("use_learned_position_embeddings")) {
        const Index rows = detail::table_rows("TrOCR's", config.max_positions, 2);
        pipeline.emplace(std::move(tokens),
                         checkpoint.positions(names("embed_positions.weight"), rows, config.hidden_size,
                                              LearnedPositionsOptions::bart()),
                         detail::family_options(options, "load_trocr", PositionNumbering::sequence_index));
    } else {
        if (!config.embedding_padding_idx)
            seqembed::detail::fail<format_error>(name,
                                                 ": 'pad_token_id' is null, which TrOCR's sinusoidal positions need");
        const std::int64_t padding_idx = *config.embedding_padding_idx;
        if (padding_idx < 0)
            seqembed::detail::fail<format_error>(name, ": 'pad_token_id' is ", padding_idx,
                                                 ", not a row of TrOCR's sinusoid table");
        if (config.max_positions > std::numeric_limits<Index>::max() - 1 - padding_idx)
            seqembed::detail::fail<format_error>(name, ": max_position_embeddings ", config.max_positions,
                                                 " + pad_token_id + 1 rows do not fit an index");
        const Index rows = config.max_positions + static_cast<Index>(padding_idx) + 1;
        pipeline.emplace(
            std::move(tokens), detail::fairseq_positions(config, padding_idx, rows, "TrOCR's"),
            detail::family_options(options, "load_trocr", PositionNumbering::non_padding_ids, padding_idx));
    }
    if (flag("layernorm_embedding"))
        pipeline->set_layer_norm(checkpoint.layer_norm(names("layernorm_embedding."), config.hidden_size));
    LearnedModelInput stage{config, std::move(*pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    stage.fixed_positions = !flag("use_learned_position_embeddings");
    return stage;
}

/// @brief XGLM's decoder input stage: `model.embed_tokens.weight` (or `embed_tokens.weight`) x
///        sqrt(d_model) (scale_embedding, true by default), + M2M100's sinusoidal table
///        (XGLMSinusoidalPositionalEmbedding: max_position_embeddings + 2 rows, float32, row
///        pad_token_id zero; not in the checkpoint) numbered by index from row 2, after the past
///        tokens, whatever the padding; no LayerNorm.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage.
/// @throws file_error, format_error as the readers; value_error as load_bert.
inline LearnedModelInput load_xglm(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                   const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_xglm");
    const ModelConfig& config = checkpoint.config();
    const std::int64_t padding_idx = config.embedding_padding_idx.value_or(1);
    const LearnedPositionalEmbedding<float> table = detail::m2m100_positions(config, padding_idx);
    const RowMatrix<float> rows = table.table();
    InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        detail::shared_tokens(checkpoint, {"model.embed_tokens.weight", "embed_tokens.weight"}),
        LearnedPositionalEmbedding<float>::from_weights(rows, LearnedPositionsOptions::bart()),
        detail::family_options(options, "load_xglm", PositionNumbering::sequence_index));
    LearnedModelInput stage{config, std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    stage.fixed_positions = true;
    return stage;
}

/// @brief T5's (and mT5's, UMT5's, LongT5's, Switch Transformers') input stages: the shared
///        token table, no scale, no positions (T5's relative bias acts in attention); the
///        decoder's stage reads the same table. Tensors `shared.weight` or
///        `encoder.embed_tokens.weight`.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
///        The decoder's stage shares the encoder's shard table.
/// @return the stages.
/// @throws file_error, format_error as the readers; value_error as load_bert.
inline LookupModelInput load_t5(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_t5");
    const ModelConfig& config = checkpoint.config();
    InputPipeline<float, NoPositions<float>> pipeline(
        checkpoint.token_embedding({"shared.weight", "encoder.embed_tokens.weight"}, config.hidden_size,
                                   EmbeddingScale::none()),
        NoPositions<float>(config.hidden_size),
        detail::family_options(options, "load_t5", PositionNumbering::sequence_index));
    InputPipeline<float, NoPositions<float>> decoder = pipeline;
    return {config, std::move(pipeline), std::nullopt, std::nullopt, std::move(decoder), std::nullopt};
}

/// @brief The input stage of Mamba, Mamba 2 and Falcon Mamba (mamba, mamba2, falcon_mamba):
///        the token table alone, no scale, no positions, no padding_idx (the state-space layers
///        need none). Tensors `backbone.embeddings.weight` (the ForCausalLM classes) or
///        `embeddings.weight` (the base models), or the older `embedding.weight` name under
///        either, which Mamba's and Mamba 2's load hooks rename.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage.
/// @throws file_error, format_error as the readers; value_error as load_bert.
inline LookupModelInput load_mamba(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                   const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_mamba");
    const ModelConfig& config = checkpoint.config();
    InputPipeline<float, NoPositions<float>> pipeline(
        checkpoint.token_embedding({"backbone.embeddings.weight", "embeddings.weight", "backbone.embedding.weight",
                                    "embedding.weight"},
                                   config.hidden_size, EmbeddingScale::none()),
        NoPositions<float>(config.hidden_size),
        detail::family_options(options, "load_mamba", PositionNumbering::sequence_index));
    return {config, std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
}

/// @brief XLNet's input stage (xlnet): word_embedding alone (no scale, no padding_idx); its
///        relative positions (a sinusoid of the distances, with its memory's) and its segment
///        ids act in attention, not here. Tensors `transformer.word_embedding.weight` (the head
///        models') or `word_embedding.weight`.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage.
/// @throws file_error, format_error as the readers; value_error as load_bert.
inline LookupModelInput load_xlnet(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                   const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_xlnet");
    const ModelConfig& config = checkpoint.config();
    InputPipeline<float, NoPositions<float>> pipeline(
        checkpoint.token_embedding({"transformer.word_embedding.weight", "word_embedding.weight"}, config.hidden_size,
                                   EmbeddingScale::none()),
        NoPositions<float>(config.hidden_size),
        detail::family_options(options, "load_xlnet", PositionNumbering::sequence_index));
    return {config, std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
}

/// @brief BLOOM's input stage: word_embeddings, then word_embeddings_layernorm
///        (layer_norm_epsilon, 1e-5 by default); no scale, no positions added: `alibi` holds
///        its ALiBi bias (n_head heads), which attention adds. Tensors
///        `transformer.word_embeddings.weight` and `transformer.word_embeddings_layernorm.*`, or
///        without `transformer.` (bigscience's checkpoints).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage; `alibi` is set.
/// @throws file_error, format_error as the readers; value_error as load_bert.
inline LookupModelInput load_bloom(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                   const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_bloom");
    const ModelConfig& config = checkpoint.config();
    InputPipeline<float, NoPositions<float>> pipeline(
        checkpoint.token_embedding({"transformer.word_embeddings.weight", "word_embeddings.weight"}, config.hidden_size,
                                   EmbeddingScale::none()),
        NoPositions<float>(config.hidden_size),
        detail::family_options(options, "load_bloom", PositionNumbering::sequence_index));
    pipeline.set_layer_norm(checkpoint.layer_norm(
        {"transformer.word_embeddings_layernorm.", "word_embeddings_layernorm."}, config.hidden_size));
    const std::string name = detail::path_name(directory / "config.json");
    const Index heads =
        detail::attention_heads(detail::language_config(detail::read_json_object(directory / "config.json"), name), name);
    return {config,       std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt,
            AlibiBias<float>(heads, AlibiOptions::bloom())};
}

/// @brief MPT's input stage: wte alone (no scale, no positions added); `alibi` holds its ALiBi
///        bias for n_heads heads with alibi_bias_max 8, as Hugging Face's MptModel builds it
///        (whatever attn_config says). Tensors `transformer.wte.weight` or `wte.weight`.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage; `alibi` is set.
/// @throws file_error, format_error as the readers; value_error as load_bert.
inline LookupModelInput load_mpt(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                 const VocabularySplit& split = {}) {
    const detail::Checkpoint checkpoint(directory, ModelConfig::read(directory / "config.json"), split, "load_mpt");
    const ModelConfig& config = checkpoint.config();
    InputPipeline<float, NoPositions<float>> pipeline(
        checkpoint.token_embedding({"transformer.wte.weight", "wte.weight"}, config.hidden_size, EmbeddingScale::none()),
        NoPositions<float>(config.hidden_size),
        detail::family_options(options, "load_mpt", PositionNumbering::sequence_index));
    const std::string name = detail::path_name(directory / "config.json");
    const Index heads =
        detail::attention_heads(detail::language_config(detail::read_json_object(directory / "config.json"), name), name);
    return {config,       std::move(pipeline), std::nullopt, std::nullopt, std::nullopt, std::nullopt,
            AlibiBias<float>(heads, AlibiOptions::mpt(8.0))};
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
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage; `rotary` is set.
/// @throws file_error, format_error (naming the file and the tensor or key) as the readers and
///         read_rotary_config, and for a head_dim or rotary_dim the rotation cannot use (odd);
///         value_error as load_bert.
inline LookupModelInput load_llama(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                   const VocabularySplit& split = {}) {
    return detail::rotary_family(directory, ModelConfig::read(directory / "config.json"),
                                 {"model.embed_tokens.weight", "embed_tokens.weight"}, EmbeddingScale::none(), options, split,
                                 "load_llama");
}

/// @brief Mistral's input stage: as Llama's (`model.embed_tokens.weight`, no scale), the rotary
///        stage from config.json (its head_dim key when given, as Mistral-Nemo's 128 differs
///        from hidden_size / num_attention_heads).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage; `rotary` is set.
/// @throws file_error, format_error, value_error as load_llama.
inline LookupModelInput load_mistral(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                     const VocabularySplit& split = {}) {
    return detail::rotary_family(directory, ModelConfig::read(directory / "config.json"),
                                 {"model.embed_tokens.weight", "embed_tokens.weight"}, EmbeddingScale::none(), options, split,
                                 "load_mistral");
}

/// @brief Qwen2's (and Qwen2.5's) input stage: as Llama's (`model.embed_tokens.weight`, no
///        scale), the rotary stage from config.json (rope_scaling yarn with `type` or
///        `rope_type`, as the model cards add it for long contexts).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage; `rotary` is set.
/// @throws file_error, format_error, value_error as load_llama.
inline LookupModelInput load_qwen2(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                   const VocabularySplit& split = {}) {
    return detail::rotary_family(directory, ModelConfig::read(directory / "config.json"),
                                 {"model.embed_tokens.weight", "embed_tokens.weight"}, EmbeddingScale::none(), options, split,
                                 "load_qwen2");
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
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage; `rotary` is set.
/// @throws file_error, format_error, value_error as load_llama.
inline LookupModelInput load_gemma(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                   const VocabularySplit& split = {}) {
    return detail::rotary_family(directory, ModelConfig::read(directory / "config.json"),
                                 {"model.embed_tokens.weight", "embed_tokens.weight"}, EmbeddingScale::sqrt_d_model(), options, split,
                                 "load_gemma");
}

/// @brief Phi's (phi-1, phi-1.5, phi-2) input stage: `model.embed_tokens.weight`, no scale, and
///        the rotary stage from config.json: the first int(partial_rotary_factor * head_dim)
///        dimensions of a head rotate (phi-2: 32 of 80), the rest pass unchanged.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout (embd_pdrop's place), threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage; `rotary` is set.
/// @throws file_error, format_error, value_error as load_llama.
inline LookupModelInput load_phi(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                 const VocabularySplit& split = {}) {
    return detail::rotary_family(directory, ModelConfig::read(directory / "config.json"),
                                 {"model.embed_tokens.weight", "embed_tokens.weight"}, EmbeddingScale::none(), options, split,
                                 "load_phi");
}

/// @brief Phi-3's (and Phi-3.5's, Phi-4-mini's) input stage: `model.embed_tokens.weight`, no
///        scale, and the rotary stage from config.json: LongRoPE (rope_scaling with short_factor
///        and long_factor, original_max_position_embeddings at the top level) for the 128k
///        models, whose frequencies each apply call chooses from its largest position.
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage; `rotary` is set.
/// @throws file_error, format_error, value_error as load_llama.
inline LookupModelInput load_phi3(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                  const VocabularySplit& split = {}) {
    return detail::rotary_family(directory, ModelConfig::read(directory / "config.json"),
                                 {"model.embed_tokens.weight", "embed_tokens.weight"}, EmbeddingScale::none(), options, split,
                                 "load_phi3");
}

/// @brief GPT-NeoX's (and Pythia's) input stage: `gpt_neox.embed_in.weight`, no scale, and the
///        rotary stage from config.json: base rotary_emb_base, the first int(head_size *
///        rotary_pct) dimensions of a head (Pythia: 0.25).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert.
/// @return the stage; `rotary` is set.
/// @throws file_error, format_error, value_error as load_llama.
inline LookupModelInput load_gpt_neox(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                      const VocabularySplit& split = {}) {
    return detail::rotary_family(directory, ModelConfig::read(directory / "config.json"),
                                 {"gpt_neox.embed_in.weight", "embed_in.weight"}, EmbeddingScale::none(), options, split,
                                 "load_gpt_neox");
}

/// @brief Any rotary decoder's input stage, by config.json's model_type: the token table
///        (`model.embed_tokens.weight` or `embed_tokens.weight`; GPT-NeoX's
///        `gpt_neox.embed_in.weight`; GPT-J's and CodeGen's `transformer.wte.weight`, which
///        their token types read too; Falcon's `transformer.word_embeddings.weight`; each with
///        or without its prefix) times the family's scale (Gemma 1 to 3:
///        sqrt(hidden_size) as load_gemma; Granite: embedding_multiplier, rounded once to float
///        as torch multiplies a float32 tensor by a Python float; none elsewhere), and the rotary
///        stage from config.json, as load_llama. The families: llama, mistral, mixtral, qwen2,
///        qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, gemma3_text and gemma3 (Gemma 3's
///        multimodal checkpoints: the language model's table, `language_model.model.` or
///        `model.language_model.`, and text_config, with Gemma3TextConfig's defaults; and
///        `local_rotary`, its sliding-window layers' stage), phi, phi3, gpt_neox, stablelm,
///        starcoder2, olmo, olmo2, granite, gptj, codegen, falcon (with `alibi: true`, `alibi`
///        instead of `rotary`), cohere, and those of detail/decoder_families.hpp (gpt_oss,
///        llama4, deepseek_v3, qwen2_vl, glm4, cohere2, olmo3 with `local_rotary`, DBRX's
///        `transformer.wte`, LLaVA's four with their language model's rule, Granite 4.0's and
///        Falcon-H1's embedding_multiplier, VaultGemma's sqrt(hidden_size), the hybrid families
///        whose attention layers alone rotate, ...); each has Llama's input stage but for the
///        scale and the names (their embedding dropout is PipelineOptions' dropout).
///        `layer_positions` says which stage each layer applies; `rotary` is empty for the
///        families without a rotary module (Jamba, Zamba, Granite 4.0 without
///        position_embedding_type "rope", Zamba 2 without use_mem_rope).
/// @param directory holds config.json and model.safetensors (or model.safetensors.index.json and its shards).
/// @param options dropout, threads, stores, padded rows.
/// @param split which rows of the token table to read, as load_bert (GPT-J's and CodeGen's
///        token types, which read wte whole, are not set for a split).
/// @return the stage; `rotary` is set (ALiBi Falcon: `alibi`; none for the families above
///         without a rotary module), and for Gemma 3 `local_rotary`.
/// @throws file_error, format_error as load_llama, and for a model_type that is not a rotary
///         decoder; value_error as load_bert.
inline LookupModelInput load_rotary_decoder(const std::filesystem::path& directory, const PipelineOptions& options = {},
                                            const VocabularySplit& split = {}) {
    ModelConfig config = ModelConfig::read(directory / "config.json");
    if (!detail::is_rotary_family(config.model_type))
        seqembed::detail::fail<format_error>(detail::path_name(directory / "config.json"), ": model_type '",
                                             config.model_type, "' is not a rotary decoder (load_model reads it)");
    std::vector<std::string> names = detail::decoder_token_names(config.model_type);
    const EmbeddingScale scale = detail::decoder_scale(config);
    return detail::rotary_family(directory, std::move(config), names, scale, options, split, "load_rotary_decoder");
}

}  // namespace seqembed::io
