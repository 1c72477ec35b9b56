/// @file io/detail/encoder_families.hpp
/// @brief The encoders whose embeddings are BERT's or RoBERTa's with a difference (a prefix, no
///        LayerNorm, no token types, a scale, a position rule, a projection after them), and the
///        two-tower models whose text tower is such an encoder: one entry per family, from its
///        Hugging Face *Embeddings module and config class. io::load_encoder builds them.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace seqembed::io::detail {

/// How an encoder numbers the rows of its learned position table.
enum class EncoderPositions {
    index,         ///< past + t, from row 0 (BERT's position_ids buffer)
    from_ids,      ///< RoBERTa's create_position_ids_from_input_ids: from row pad + 1, pads at row pad
    index_plus_2,  ///< t + 2 (Nystromformer's buffer arange(max_position_embeddings) + 2: max + 2 rows)
    rotary,        ///< no table: rotary positions in attention (RoFormer, Nomic's BERT)
    none,          ///< no table and no rotary stage (Funnel's relative positions act in attention)
};

/// One encoder family's embedding stage.
struct EncoderFamily {
    /// The base model's prefix in checkpoints ("longformer."); tensors without it load too.
    const char* prefix;
    EncoderPositions positions;
    /// A token-type table added before the positions.
    bool token_types;
    /// A LayerNorm at the end of the embeddings (XLM-RoBERTa-XL and Megatron-BERT moved theirs
    /// into the layers).
    bool layer_norm;
    /// The token-type row added after the position (word + position + token type: Longformer,
    /// SqueezeBERT, MRA, ConvBERT) rather than before it.
    bool types_after_positions;
    /// The config class's values for keys config.json may leave out (a JSON object).
    const char* defaults;
    /// The prefixes some of the family's checkpoints put before `prefix`, separated by spaces
    /// ("flava." for FlavaForPreTraining's `flava.text_model.`; DPR's three encoders'), or "".
    const char* outer_prefixes = "";
};

/// The text config classes' defaults of ChineseCLIP, ALIGN and FLAVA (BERT-base's).
inline constexpr const char* bert_tower_defaults =
    R"({"vocab_size": 30522, "hidden_size": 768, "pad_token_id": 0, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
        "max_position_embeddings": 512})";

/// One family: its model_type and, for a two-tower model, its text model's (whose config.json
/// holds the text tower's keys at the top level, where the two-tower config nests them under
/// text_config).
struct EncoderEntry {
    const char* model_type;
    EncoderFamily family;
    const char* text_model_type = nullptr;
    /// Whether the two-tower config class reads a legacy text_config_dict over text_config.
    bool reads_text_config_dict = false;
};

/// The entry whose model_type or text model's model_type is `model_type`, or none.
inline const EncoderEntry* encoder_entry(const std::string& model_type) {
    using Entry = EncoderEntry;
    // From each modeling_<family>.py's *Embeddings and configuration_<family>.py.
    static const Entry entries[] = {
        {"longformer", {"longformer.", EncoderPositions::from_ids, true, true, true,
                        R"({"pad_token_id": 1, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                            "max_position_embeddings": 512})"}},
        {"data2vec-text", {"data2vec_text.", EncoderPositions::from_ids, true, true, false,
                           R"({"pad_token_id": 1, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                               "max_position_embeddings": 512})"}},
        {"xmod", {"roberta.", EncoderPositions::from_ids, true, true, false,
                  R"({"pad_token_id": 1, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                      "max_position_embeddings": 512})"}},
        {"xlm-roberta-xl", {"roberta.", EncoderPositions::from_ids, true, false, false,
                            R"({"pad_token_id": 1, "type_vocab_size": 1, "max_position_embeddings": 514})"}},
        {"big_bird", {"bert.", EncoderPositions::index, true, true, false,
                      R"({"pad_token_id": 0, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                          "max_position_embeddings": 4096, "rescale_embeddings": false})"}},
        {"megatron-bert", {"bert.", EncoderPositions::index, true, false, false,
                           R"({"pad_token_id": 0, "type_vocab_size": 2, "max_position_embeddings": 512})"}},
        {"ernie", {"ernie.", EncoderPositions::index, true, true, false,
                   R"({"pad_token_id": 0, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                       "max_position_embeddings": 512, "use_task_id": false, "task_type_vocab_size": 3})"}},
        {"splinter", {"splinter.", EncoderPositions::index, true, true, false,
                      R"({"pad_token_id": 0, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                          "max_position_embeddings": 512})"}},
        {"squeezebert", {"transformer.", EncoderPositions::index, true, true, true,
                         R"({"pad_token_id": 0, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                             "max_position_embeddings": 512})"}},
        {"rembert", {"rembert.", EncoderPositions::index, true, true, false,
                     R"({"pad_token_id": 0, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                         "max_position_embeddings": 512, "input_embedding_size": 256})"}},
        {"bert-generation", {"bert.", EncoderPositions::index, false, true, false,
                             R"({"pad_token_id": 0, "layer_norm_eps": 1e-12, "max_position_embeddings": 512})"}},
        {"nystromformer", {"nystromformer.", EncoderPositions::index_plus_2, true, true, false,
                           R"({"pad_token_id": 1, "type_vocab_size": 2, "layer_norm_eps": 1e-5,
                               "max_position_embeddings": 510})"}},
        {"yoso", {"yoso.", EncoderPositions::index_plus_2, true, true, false,
                  R"({"pad_token_id": 1, "type_vocab_size": 1, "layer_norm_eps": 1e-12,
                      "max_position_embeddings": 4096})"}},
        {"mra", {"mra.", EncoderPositions::index_plus_2, true, true, true,
                 R"({"pad_token_id": 1, "type_vocab_size": 1, "layer_norm_eps": 1e-5,
                     "max_position_embeddings": 512})"}},
        {"roberta-prelayernorm", {"roberta_prelayernorm.", EncoderPositions::from_ids, true, true, false,
                                  R"({"pad_token_id": 1, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                                      "max_position_embeddings": 512})"}},
        // I-BERT with quant_mode false (its QuantEmbedding, QuantAct and IntLayerNorm are then a
        // lookup, a sum and a LayerNorm); quant_mode true is refused.
        {"ibert", {"ibert.", EncoderPositions::from_ids, true, true, false,
                   R"({"vocab_size": 30522, "pad_token_id": 1, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                       "max_position_embeddings": 512, "quant_mode": false})"}},
        // ConvBERT: word + position + token type, embedding_size wide (768 by default), then its
        // embeddings_project.
        {"convbert", {"convbert.", EncoderPositions::index, true, true, true,
                      R"({"pad_token_id": 1, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                          "max_position_embeddings": 512, "embedding_size": 768})"}},
        // Funnel: word, then its layer_norm (eps 1e-9); relative positions and token types act in
        // attention.
        {"funnel", {"funnel.", EncoderPositions::none, false, true, false,
                    R"({"vocab_size": 30522, "d_model": 768, "layer_norm_eps": 1e-9})"}},
        {"roformer", {"roformer.", EncoderPositions::rotary, true, true, false,
                      R"({"pad_token_id": 0, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                          "max_position_embeddings": 1536})"}},
        // Nomic's BERT (remote code modeling_hf_nomic_bert.py; NomicBertConfig over GPT2Config):
        // word + token type, emb_ln, rotary in attention.
        {"nomic_bert", {"bert.", EncoderPositions::rotary, true, true, false,
                        R"({"vocab_size": 50257, "n_positions": 1024, "type_vocab_size": 2,
                            "layer_norm_epsilon": 1e-5, "rotary_emb_fraction": 0.0, "rotary_emb_base": 10000,
                            "rotary_emb_interleaved": false, "max_trained_positions": 2048,
                            "pad_vocab_size_multiple": 1})"}},
        // The text towers of two-tower models, keys from text_config (over the text config
        // class's defaults) in the two-tower config.json, at the top level in the text model's.
        // BERT's embeddings: ChineseCLIP's, ALIGN's and FLAVA's (word + token type + position,
        // LayerNorm, positions 0 .. seq - 1).
        {"chinese_clip", {"text_model.", EncoderPositions::index, true, true, false, bert_tower_defaults},
         "chinese_clip_text_model", true},
        {"align", {"text_model.", EncoderPositions::index, true, true, false, bert_tower_defaults},
         "align_text_model"},
        {"flava", {"text_model.", EncoderPositions::index, true, true, false, bert_tower_defaults, "flava."},
         "flava_text_model", true},
        // RoBERTa's: AltCLIP's XLM-R (AltRobertaEmbeddings under text_model.roberta), CLAP's and
        // BridgeTower's.
        {"altclip", {"roberta.", EncoderPositions::from_ids, true, true, false,
                     R"({"vocab_size": 250002, "hidden_size": 1024, "pad_token_id": 1, "type_vocab_size": 1,
                         "layer_norm_eps": 1e-5, "max_position_embeddings": 514})",
                     "text_model."},
         "altclip_text_model", true},
        {"clap", {"text_model.", EncoderPositions::from_ids, true, true, false,
                  R"({"vocab_size": 50265, "hidden_size": 768, "pad_token_id": 1, "type_vocab_size": 1,
                      "layer_norm_eps": 1e-12, "max_position_embeddings": 514})"},
         "clap_text_model"},
        {"bridgetower", {"text_model.", EncoderPositions::from_ids, true, true, false,
                         R"({"vocab_size": 50265, "hidden_size": 768, "pad_token_id": 1, "type_vocab_size": 1,
                             "layer_norm_eps": 1e-5, "max_position_embeddings": 514})",
                         "bridgetower."},
         "bridgetower_text_model"},
        // DPR's encoders: BertModel under bert_model, in DPRContextEncoder, DPRQuestionEncoder and
        // DPRReader.
        {"dpr", {"bert_model.", EncoderPositions::index, true, true, false,
                 R"({"vocab_size": 30522, "hidden_size": 768, "pad_token_id": 0, "type_vocab_size": 2,
                     "layer_norm_eps": 1e-12, "max_position_embeddings": 512})",
                 "ctx_encoder. question_encoder. span_predictor.encoder."}},
        // GIT's text embeddings (GitForCausalLM: git.): word + position (past + t; the image's
        // tokens, put before the text's after the embeddings, not counted), LayerNorm.
        {"git", {"git.", EncoderPositions::index, false, true, false,
                 R"({"vocab_size": 30522, "hidden_size": 768, "pad_token_id": 0, "layer_norm_eps": 1e-12,
                     "max_position_embeddings": 1024})"}},
        // BLIP's text towers: word + position, LayerNorm (io::load_blip_text reads its two).
        {"blip", {"text_encoder.", EncoderPositions::index, false, true, false,
                  R"({"vocab_size": 30524, "hidden_size": 768, "pad_token_id": 0, "layer_norm_eps": 1e-12,
                      "max_position_embeddings": 512})"},
         "blip_text_model"},
    };
    for (const Entry& entry : entries)
        if (model_type == entry.model_type ||
            (entry.text_model_type != nullptr && model_type == entry.text_model_type))
            return &entry;
    return nullptr;
}

/// The family of `model_type`, or none.
inline const EncoderFamily* encoder_family(const std::string& model_type) {
    const EncoderEntry* entry = encoder_entry(model_type);
    return entry != nullptr ? &entry->family : nullptr;
}

/// Whether `model_type` is a two-tower model's (its text tower's keys under text_config), not
/// its text model's.
inline bool is_encoder_two_tower(const std::string& model_type) {
    const EncoderEntry* entry = encoder_entry(model_type);
    return entry != nullptr && entry->text_model_type != nullptr && model_type == entry->model_type;
}

/// `config` with the encoder's config-class defaults where config.json leaves a key out (absent:
/// an explicit null keeps its meaning).
inline nlohmann::json with_encoder_defaults(nlohmann::json config, const std::string& model_type) {
    const EncoderFamily* family = encoder_family(model_type);
    if (family == nullptr || !config.is_object()) return config;
    const nlohmann::json defaults = nlohmann::json::parse(family->defaults);
    for (auto item = defaults.begin(); item != defaults.end(); ++item)
        if (!config.contains(item.key())) config[item.key()] = item.value();
    return config;
}

}  // namespace seqembed::io::detail
