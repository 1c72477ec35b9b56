/// @file io/detail/decoder_families.hpp
/// @brief What the rotary decoders' config classes give where config.json leaves a key out, how
///        each family pairs the rotated dimensions, and which of its attention layers rotate.
///        One entry per family, read from its Hugging Face configuration_*.py and
///        modeling_*.py; the readers of config.json (rotary_config.hpp, models.hpp) consult it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../types.hpp"
#include "../errors.hpp"
#include "clip_text_towers.hpp"
#include "config_json.hpp"
#include "encoder_families.hpp"

namespace seqembed::io::detail {

/// Which rotary stage each attention layer of a family applies.
enum class LayerRule {
    every_layer,     ///< one stage, every layer
    gemma3,          ///< full_attention layers the global stage, sliding ones the local stage
    modernbert,      ///< every global_attn_every_n_layers-th layer (from 0) global, the others local
    olmo3,           ///< full_attention layers the global stage (with rope_scaling), sliding ones the local
    sliding_only,    ///< sliding-window layers rotate, full-attention layers have no positions (Cohere 2;
                     ///< with sliding_window null, no layer rotates)
    exaone4,         ///< as sliding_only when sliding_window is set, else every layer
    no_rope_layers,  ///< no_rope_layers[i] == 1 rotates, 0 does not (SmolLM3, Llama 4)
    attention_only,  ///< full_attention layers rotate, the others (LFM2's convolutions) have none;
                     ///< without layer_types, those full_attn_idxs lists (default: every layer)
    cross_attention, ///< the layers cross_attention_layers lists (Mllama's, which attend to the image)
                     ///< have no positions, the others rotate
    interval_attention,  ///< full_attention layers rotate, the others (Qwen3-Next's linear attention) have
                         ///< none; without layer_types, every full_attention_interval-th layer (default 4)
    listed_attention,    ///< the layers attn_layer_indices lists rotate, the others (Bamba's Mamba 2
                         ///< layers) have none; without the list, no layer
    granite_hybrid,      ///< with position_embedding_type "rope", the attention layers of layer_types
                         ///< ("attention", or transformers 5's "full_attention") rotate; otherwise, or
                         ///< without layer_types (all Mamba 2), no layer (Granite 4.0)
    even_layers,         ///< full_attention layers rotate, the others (MiniMax's lightning attention)
                         ///< have none; without layer_types, the even layers (0, 2, ...)
    zamba2_hybrid,       ///< with use_mem_rope, the hybrid layers of layers_block_type (their shared
                         ///< transformer block) rotate; without it, no layer (Zamba 2)
    no_layer,            ///< no layer has positions (Jamba's and Zamba's attention, Mamba's none)
    attention_blocks,    ///< the attention blocks of block_types, repeated over the layers, rotate; the
                         ///< others (RecurrentGemma's recurrent blocks) have none
};

/// A family's config-class defaults and rotary conventions.
struct DecoderFamily {
    /// The config class's values for keys config.json may leave out (a JSON object).
    const char* defaults;
    /// Whether the rotated dimensions pair as (2i, 2i + 1) (GPT-J's rotate_every_two, or complex
    /// products) rather than (i, i + rotary_dim / 2).
    bool interleaved;
    /// Which layers rotate.
    LayerRule layers;
};

/// The multimodal families whose language model is another family's, its config their
/// text_config: LLaVA's (llava, llava_next, llava_next_video, llava_onevision, vipllava),
/// PaliGemma's (paligemma, PaliGemma 1 and 2), Idefics3's and SmolVLM's, InternVL's and
/// GOT-OCR 2's (their Hugging Face ports), Aya Vision's, Command A Vision's (cohere2_vision),
/// LFM2-VL's (lfm2_vl, or lfm2-vl as transformers 4.57's class names it), Perception LM's and
/// Ovis2's Hugging Face port, Janus's and Fuyu's, and the audio-language Qwen2-Audio and Voxtral.
inline bool is_vision_language_family(const std::string& family) {
    for (const char* name : {"llava", "llava_next", "llava_next_video", "llava_onevision", "vipllava", "paligemma",
                             "idefics3", "smolvlm", "internvl", "got_ocr2", "aya_vision", "qwen2_audio", "voxtral",
                             "lfm2_vl", "lfm2-vl", "cohere2_vision", "perception_lm", "ovis2", "janus", "fuyu"})
        if (family == name) return true;
    return false;
}

/// A VisionEncoderDecoderModel or SpeechEncoderDecoderModel: an image or audio encoder, and a
/// text decoder (AutoModelForCausalLM of config.json's `decoder`) whose tensors are under `decoder.`.
inline bool is_decoder_wrapper(const std::string& family) {
    return family == "vision-encoder-decoder" || family == "speech-encoder-decoder";
}

/// BLIP-2's, InstructBLIP's and InstructBLIP-Video's configs: a Q-Former over an image encoder,
/// and a language model (AutoModelForCausalLM or AutoModelForSeq2SeqLM of config.json's
/// `text_config`, OPT's when it names no model_type) whose tensors are under `language_model.`.
inline bool is_language_wrapper(const std::string& family) {
    return family == "blip-2" || family == "instructblip" || family == "instructblipvideo";
}

/// Where a family's config.json holds its language model's keys: under text_config always
/// (Gemma 3's, Llama 4's, Mistral 3's and Qwen3-VL's multimodal checkpoints), under text_config
/// when it has one (Qwen2-VL and Qwen2.5-VL, whose older configs keep them at the top level;
/// GLM-4V, whose config class builds its text config from the top-level keys without one; the
/// two-tower models, CLIP and its kin, and the families of is_vision_language_family), or at the
/// top level.
enum class TextConfig { top_level, nested, nested_if_present };

/// The TextConfig of `family` (model_type).
inline TextConfig text_config_of(const std::string& family) {
    if (family == "gemma3" || family == "llama4" || family == "mistral3" || family == "qwen3_vl" ||
        family == "qwen3_vl_moe")
        return TextConfig::nested;
    // (Mllama's: MllamaConfig builds MllamaTextConfig() without one.)
    if (family == "mllama") return TextConfig::nested_if_present;
    // (CLIP's and SigLIP's two-tower configs: their text tower's; LLaVA's and PaliGemma's: its
    // language model's. Without text_config, their config classes build it from defaults.)
    if (family == "emu3") return TextConfig::nested_if_present;  // Emu3Config: Emu3TextConfig() without one
    if (family == "qwen2_vl" || family == "qwen2_5_vl" || family == "glm4v" || family == "glm4v_moe" ||
        is_vision_language_family(family) || is_encoder_two_tower(family) || family == "kosmos-2")
        return TextConfig::nested_if_present;
    if (const ClipTextTower* tower = clip_text_tower(family); tower != nullptr && family == tower->model_type)
        return TextConfig::nested_if_present;
    return TextConfig::top_level;
}

/// The entry of `model_type`, or none for a family without one (the encoders, the learned-position
/// decoders).
inline const DecoderFamily* decoder_family(const std::string& model_type) {
    struct Entry {
        const char* model_type;
        DecoderFamily family;
    };
    // Defaults from each configuration_*.py (transformers 4.5x and 5.x agree on them unless
    // said); the pairing and the layer rule from each modeling_*.py's apply_rotary_pos_emb and
    // attention.
    static const Entry entries[] = {
        {"gemma3", {"{}", false, LayerRule::gemma3}},
        {"gemma3_text", {"{}", false, LayerRule::gemma3}},
        {"modernbert", {"{}", false, LayerRule::modernbert}},
        {"gptj", {"{}", true, LayerRule::every_layer}},
        {"codegen", {"{}", true, LayerRule::every_layer}},
        {"cohere", {R"({"rope_theta": 500000.0, "max_position_embeddings": 8192})", true, LayerRule::every_layer}},
        {"cohere2", {R"({"rope_theta": 10000.0, "max_position_embeddings": 8192, "pad_token_id": 0,
                         "sliding_window": 4096})",
                     true, LayerRule::sliding_only}},
        {"gpt_oss",
         {R"({"rope_theta": 150000.0, "head_dim": 64, "max_position_embeddings": 131072,
              "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                               "truncate": false, "original_max_position_embeddings": 4096}})",
          false, LayerRule::every_layer}},
        {"smollm3", {R"({"rope_theta": 2000000.0, "max_position_embeddings": 32768, "pad_token_id": 128004})", false,
                     LayerRule::no_rope_layers}},
        {"llama4_text", {R"({"rope_theta": 500000.0, "head_dim": 128, "max_position_embeddings": 131072})", true,
                         LayerRule::no_rope_layers}},
        {"llama4", {R"({"rope_theta": 500000.0, "head_dim": 128, "max_position_embeddings": 131072})", true,
                    LayerRule::no_rope_layers}},
        {"olmoe", {R"({"rope_theta": 10000.0, "max_position_embeddings": 4096, "pad_token_id": 1})", false,
                   LayerRule::every_layer}},
        {"olmo3", {R"({"rope_theta": 500000.0, "max_position_embeddings": 2048, "pad_token_id": 1})", false,
                   LayerRule::olmo3}},
        {"granitemoe", {R"({"max_position_embeddings": 2048})", false, LayerRule::every_layer}},
        {"granitemoeshared", {R"({"max_position_embeddings": 2048})", false, LayerRule::every_layer}},
        {"nemotron", {R"({"partial_rotary_factor": 0.5, "max_position_embeddings": 4096})", false,
                      LayerRule::every_layer}},
        {"persimmon", {R"({"partial_rotary_factor": 0.5, "rope_theta": 25000.0, "max_position_embeddings": 16384})",
                       false, LayerRule::every_layer}},
        {"helium", {R"({"head_dim": 128, "rope_theta": 100000.0, "max_position_embeddings": 4096, "pad_token_id": 3})",
                    true, LayerRule::every_layer}},
        {"glm", {R"({"partial_rotary_factor": 0.5, "head_dim": 128, "max_position_embeddings": 131072,
                     "pad_token_id": 151329})",
                 true, LayerRule::every_layer}},
        {"glm4", {R"({"partial_rotary_factor": 0.5, "head_dim": 128, "max_position_embeddings": 131072,
                      "pad_token_id": 151329})",
                  true, LayerRule::every_layer}},
        {"glm4_moe", {R"({"partial_rotary_factor": 0.5, "max_position_embeddings": 131072})", false,
                      LayerRule::every_layer}},
        // HunYuanDenseV1Config's and HunYuanMoEV1Config's (head_dim None: config.json's, else
        // hidden_size / num_attention_heads as Tencent's own code takes it; attention_head_dim is
        // not read).
        {"hunyuan_v1_dense", {R"({"rope_theta": 10000.0, "max_position_embeddings": 2048, "pad_token_id": 0})", false,
                              LayerRule::every_layer}},
        {"hunyuan_v1_moe", {R"({"rope_theta": 10000.0, "max_position_embeddings": 2048, "pad_token_id": 0})", false,
                            LayerRule::every_layer}},
        // Glm4vTextConfig's (no partial_rotary_factor: 1 unless config.json gives it, as GLM-4.1V's
        // 0.5) and Glm4vMoeTextConfig's; GLM-4.1V rotates interleaved pairs
        // (apply_multimodal_rotary_pos_emb's repeat_interleave), GLM-4.5V halves.
        {"glm4v", {R"({"rope_theta": 10000.0, "max_position_embeddings": 32768})", true, LayerRule::every_layer}},
        {"glm4v_moe", {R"({"partial_rotary_factor": 0.5, "rope_theta": 10000.0, "max_position_embeddings": 65536})",
                       false, LayerRule::every_layer}},
        {"dbrx", {R"({"max_seq_len": 2048})", false, LayerRule::every_layer}},
        {"ernie4_5", {R"({"head_dim": 128, "rope_theta": 500000.0, "max_position_embeddings": 131072,
                          "pad_token_id": 0})",
                      true, LayerRule::every_layer}},
        {"exaone4", {R"({"max_position_embeddings": 2048, "sliding_window": 4096})", false, LayerRule::exaone4}},
        {"seed_oss", {R"({"head_dim": 128, "max_position_embeddings": 524288, "pad_token_id": 1})", false,
                      LayerRule::every_layer}},
        {"arcee", {R"({"max_position_embeddings": 4096})", false, LayerRule::every_layer}},
        {"apertus",
         {R"({"rope_theta": 12000000.0, "max_position_embeddings": 65536, "pad_token_id": 3,
              "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192,
                               "low_freq_factor": 1.0, "high_freq_factor": 4.0}})",
          false, LayerRule::every_layer}},
        {"ministral", {R"({"max_position_embeddings": 131072})", false, LayerRule::every_layer}},
        {"mistral3", {R"({"max_position_embeddings": 131072})", false, LayerRule::every_layer}},  // MistralConfig's
        {"bitnet", {R"({"rope_theta": 500000.0, "max_position_embeddings": 2048})", false, LayerRule::every_layer}},
        {"deepseek_v2", {R"({"max_position_embeddings": 2048, "qk_rope_head_dim": 64})", true, LayerRule::every_layer}},
        {"deepseek_v3", {R"({"max_position_embeddings": 4096, "qk_rope_head_dim": 64})", true, LayerRule::every_layer}},
        // Kimi K2 (remote code: DeepSeek-V3's modeling_deepseek.py under model_type kimi_k2): its
        // input stage and yarn rule, pairs always interleaved.
        {"kimi_k2", {R"({"max_position_embeddings": 4096, "qk_rope_head_dim": 64})", true, LayerRule::every_layer}},
        {"qwen2_vl", {R"({"rope_theta": 1000000.0, "max_position_embeddings": 32768})", false, LayerRule::every_layer}},
        {"qwen2_5_vl", {R"({"rope_theta": 1000000.0, "max_position_embeddings": 32768})", false,
                        LayerRule::every_layer}},
        // Qwen3VLTextConfig's theta: 5e6 in transformers 4.57 (the value its checkpoints give),
        // 500000 in 5.x.
        {"qwen3_vl", {R"({"rope_theta": 5000000.0, "head_dim": 128, "max_position_embeddings": 128000})", false,
                      LayerRule::every_layer}},
        // Lfm2Config's and Lfm2MoeConfig's (rope_theta read from `theta` too).
        {"lfm2", {R"({"rope_theta": 1000000.0, "max_position_embeddings": 128000, "pad_token_id": 0})", false,
                  LayerRule::attention_only}},
        {"lfm2_moe", {R"({"rope_theta": 1000000.0, "max_position_embeddings": 128000, "pad_token_id": 0})", false,
                      LayerRule::attention_only}},
        // Qwen3VLMoeTextConfig's: the same theta, head_dim hidden_size / num_attention_heads.
        {"qwen3_vl_moe", {R"({"rope_theta": 5000000.0, "max_position_embeddings": 128000})", false,
                          LayerRule::every_layer}},
        // MllamaTextConfig's (Llama 3.2 Vision); its cross-attention layers have no positions.
        {"mllama", {R"({"vocab_size": 128256, "hidden_size": 4096, "num_hidden_layers": 40, "num_attention_heads": 32,
                        "num_key_value_heads": 8, "rope_theta": 500000.0, "max_position_embeddings": 131072,
                        "pad_token_id": 128004, "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38]})",
                    false, LayerRule::cross_attention}},
        // GraniteMoeHybridConfig's (Granite 4.0): position_embedding_type None (no positions)
        // unless config.json says "rope".
        {"granitemoehybrid", {R"({"max_position_embeddings": 2048})", false, LayerRule::granite_hybrid}},
        // FalconH1Config's (transformers 5 takes theta 10000 where config.json gives none; its
        // checkpoints give one): every layer's attention branch rotates.
        {"falcon_h1", {R"({"rope_theta": 100000.0, "max_position_embeddings": 8192, "pad_token_id": 0})", false,
                       LayerRule::every_layer}},
        // BambaConfig's: theta 10000 and half of each head rotated unless config.json says.
        {"bamba", {R"({"rope_theta": 10000.0, "partial_rotary_factor": 0.5, "max_position_embeddings": 262144,
                       "pad_token_id": 0})",
                   false, LayerRule::listed_attention}},
        // Qwen3NextConfig's: a quarter of each 256-wide head rotated, in the full-attention layers.
        {"qwen3_next", {R"({"head_dim": 256, "partial_rotary_factor": 0.25, "rope_theta": 10000.0,
                            "max_position_embeddings": 32768})",
                        false, LayerRule::interval_attention}},
        // Ernie4_5_MoeConfig's (no head_dim: hidden_size / num_attention_heads), interleaved pairs
        // as the dense model's.
        {"ernie4_5_moe", {R"({"rope_theta": 500000.0, "max_position_embeddings": 131072, "pad_token_id": 0})", true,
                          LayerRule::every_layer}},
        // Dots1Config's: its sliding-window layers rotate as its full ones.
        {"dots1", {R"({"rope_theta": 10000.0, "max_position_embeddings": 2048})", false, LayerRule::every_layer}},
        // PhimoeConfig's; its LongRoPE's attention factor is short_mscale or long_mscale
        // (rotary_config.hpp).
        {"phimoe", {R"({"rope_theta": 1000000.0, "max_position_embeddings": 131072})", false,
                    LayerRule::every_layer}},
        // JambaConfig's and ZambaConfig's: no positions anywhere.
        {"jamba", {R"({"max_position_embeddings": 262144, "pad_token_id": 0})", false, LayerRule::no_layer}},
        {"zamba", {R"({"max_position_embeddings": 4096, "pad_token_id": 0})", false, LayerRule::no_layer}},
        // Zamba2Config's: its shared blocks attend over [x, the input rows] (2 x hidden_size), in
        // heads of 2 x hidden_size / num_attention_heads (with_family_defaults).
        {"zamba2", {R"({"hidden_size": 2560, "num_attention_heads": 32, "num_hidden_layers": 54, "rope_theta": 10000.0,
                        "max_position_embeddings": 4096, "pad_token_id": 0})",
                    false, LayerRule::zamba2_hybrid}},
        // MiniMaxConfig's: RoPE over the whole head in its softmax-attention layers, as Hugging
        // Face's port computes it (with_family_defaults).
        {"minimax", {R"({"rope_theta": 1000000.0, "max_position_embeddings": 131072})", false,
                     LayerRule::even_layers}},
        // VaultGemmaConfig's: one theta in every layer, sliding or not.
        {"vaultgemma", {R"({"head_dim": 256, "rope_theta": 10000.0, "max_position_embeddings": 8192,
                            "pad_token_id": 0})",
                        false, LayerRule::every_layer}},
        // ChameleonConfig's (heads of hidden_size / num_attention_heads whatever head_dim says),
        // Emu3TextConfig's, DiffLlamaConfig's, DogeConfig's; every layer.
        {"chameleon", {R"({"rope_theta": 10000.0, "max_position_embeddings": 4096})", false, LayerRule::every_layer}},
        {"emu3", {R"({"vocab_size": 184622, "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
                      "max_position_embeddings": 9216, "rope_theta": 1000000.0, "pad_token_id": 151643,
                      "num_hidden_layers": 32})",
                  false, LayerRule::every_layer}},
        {"diffllama", {R"({"max_position_embeddings": 2048})", false, LayerRule::every_layer}},
        {"doge", {R"({"max_position_embeddings": 2048})", false, LayerRule::every_layer}},
        // JetMoeConfig's: heads of kv_channels (its attribute map's head_dim), 128 by default.
        {"jetmoe", {R"({"kv_channels": 128, "rope_theta": 10000.0, "max_position_embeddings": 4096})", false,
                    LayerRule::every_layer}},
        // RecurrentGemmaConfig's: half of each head (hidden_size / num_attention_heads unless
        // config.json gives head_dim) rotated in its attention blocks; no
        // max_position_embeddings (the table's rows: attention_window_size; positions past them
        // are computed).
        {"recurrent_gemma", {R"({"partial_rotary_factor": 0.5, "rope_theta": 10000.0, "attention_window_size": 2048,
                                 "pad_token_id": 0, "block_types": ["recurrent", "recurrent", "attention"]})",
                             false, LayerRule::attention_blocks}},
        // The families of is_vision_language_family: their own conventions are their language
        // model's (rules_family), whose defaults language_model_defaults gives; these entries say
        // only that they are rotary decoders.
        {"paligemma", {"{}", false, LayerRule::every_layer}},
        {"llava", {"{}", false, LayerRule::every_layer}},
        {"llava_next", {"{}", false, LayerRule::every_layer}},
        {"llava_next_video", {"{}", false, LayerRule::every_layer}},
        {"llava_onevision", {"{}", false, LayerRule::every_layer}},
        {"vipllava", {"{}", false, LayerRule::every_layer}},
        {"idefics3", {"{}", false, LayerRule::every_layer}},
        {"smolvlm", {"{}", false, LayerRule::every_layer}},
        {"internvl", {"{}", false, LayerRule::every_layer}},
        {"got_ocr2", {"{}", false, LayerRule::every_layer}},
        {"aya_vision", {"{}", false, LayerRule::every_layer}},
        {"qwen2_audio", {"{}", false, LayerRule::every_layer}},
        {"voxtral", {"{}", false, LayerRule::every_layer}},
        {"lfm2_vl", {"{}", false, LayerRule::every_layer}},
        {"lfm2-vl", {"{}", false, LayerRule::every_layer}},
        {"cohere2_vision", {"{}", false, LayerRule::every_layer}},
        {"perception_lm", {"{}", false, LayerRule::every_layer}},
        {"ovis2", {"{}", false, LayerRule::every_layer}},
        {"janus", {"{}", false, LayerRule::every_layer}},
        {"fuyu", {"{}", false, LayerRule::every_layer}},
    };
    for (const Entry& entry : entries)
        if (model_type == entry.model_type) return &entry.family;
    return nullptr;
}

/// The model_type whose conventions (its entry's defaults, pairing and layer rule) a language
/// config follows: for a vision-language family its language model's, which language_config and
/// language_keys keep in the merged config as "language_model_type" (Aya Vision's Cohere 2
/// rotates interleaved pairs in its sliding-window layers alone); `model_type` itself elsewhere.
inline std::string rules_family(const nlohmann::json& config, const std::string& model_type) {
    if (!is_vision_language_family(model_type) || !config.is_object()) return model_type;
    const auto language = config.find("language_model_type");
    return language != config.end() && language->is_string() ? language->get<std::string>() : model_type;
}

/// Whether the family rotates interleaved pairs. DeepSeek-V3 does unless rope_interleave is false;
/// Hugging Face's DeepSeek-V3 then reorders each rotated vector (the pairs' first values, then
/// their second), which changes no q . k: seqembed keeps the pairs in place, as DeepSeek's own
/// code and Hugging Face's DeepSeek-V2 do.
inline bool rotates_interleaved(const nlohmann::json& config, const std::string& model_type) {
    const DecoderFamily* family = decoder_family(rules_family(config, model_type));
    if (family == nullptr || !family->interleaved) return false;
    if (model_type == "deepseek_v3") {
        const auto found = config.find("rope_interleave");
        if (found != config.end() && found->is_boolean()) return found->get<bool>();
    }
    return true;
}

/// Gemma3TextConfig's values (transformers 4.50+) for the keys Gemma 3's multimodal config.json
/// leaves out of its text_config.
inline nlohmann::json gemma3_text_defaults() {
    return {{"vocab_size", 262208},     {"hidden_size", 2304}, {"num_attention_heads", 8},
            {"num_key_value_heads", 4}, {"head_dim", 256},     {"max_position_embeddings", 131072},
            {"rope_theta", 1000000.0},  {"rope_local_base_freq", 10000.0},
            {"pad_token_id", 0},        {"num_hidden_layers", 26}};
}

/// The language models a vision-language family has a preset for, as the error names them.
inline const char* language_models_of(const std::string& family) {
    if (family == "paligemma") return "gemma, gemma2";
    if (family == "idefics3" || family == "smolvlm" || family == "voxtral") return "llama";
    if (family == "qwen2_audio" || family == "got_ocr2") return "qwen2";
    if (family == "aya_vision" || family == "cohere2_vision") return "cohere2";
    if (family == "lfm2_vl" || family == "lfm2-vl") return "lfm2";
    if (family == "perception_lm" || family == "janus") return "llama";
    if (family == "fuyu") return "persimmon";
    if (family == "ovis2") return "qwen2";
    if (family == "internvl") return "qwen2, qwen3, llama";
    if (family == "llava_next") return "llama, mistral, qwen2, granite";  // granite-vision's
    return "llama, mistral, qwen2";
}

/// The model_type of a vision-language config's language model: text_config's, else the config
/// class's (LlavaConfig's "llama", LlavaOnevisionConfig's, InternVLConfig's, GotOcr2Config's and
/// Qwen2AudioConfig's "qwen2", PaliGemmaConfig's "gemma", AyaVisionConfig's and
/// Cohere2VisionConfig's "cohere2", Lfm2VlConfig's "lfm2"; Ovis2Config's "qwen2" always).
inline std::string language_model_type(const nlohmann::json* text, const std::string& family) {
    if (family == "ovis2") return "qwen2";  // Ovis2Config builds Qwen2Config(**text_config) whatever it says
    if (text != nullptr && text->is_object()) {
        const auto type = text->find("model_type");
        if (type != text->end() && type->is_string()) return type->get<std::string>();
    }
    if (family == "llava_onevision" || family == "internvl" || family == "got_ocr2" || family == "qwen2_audio")
        return "qwen2";
    if (family == "aya_vision" || family == "cohere2_vision") return "cohere2";
    if (family == "lfm2_vl" || family == "lfm2-vl") return "lfm2";
    if (family == "fuyu") return "persimmon";
    return family == "paligemma" ? "gemma" : "llama";
}

/// The config class's values (transformers 4.57 and 5.x) of a vision-language family's language
/// model of model_type `language`, for the keys its text_config leaves out (llava-1.5's gives no
/// hidden_size: LlamaConfig's 4096; paligemma-3b's no head_dim: GemmaConfig's 256), over which
/// the family's config class puts its own: VoxtralConfig's always; Idefics3Config's and
/// SmolVLMConfig's pad_token_id 128002, PaliGemmaConfig's and GotOcr2Config's text configs where
/// there is no text_config. Null for a language model without a preset under `family`.
inline nlohmann::json language_model_defaults(const std::string& family, const std::string& language,
                                              bool has_text_config) {
    const std::string listed = std::string(", ") + language_models_of(family) + ",";
    if (listed.find(", " + language + ",") == std::string::npos) return nullptr;
    if (family == "paligemma" && !has_text_config)
        return {{"vocab_size", 257152}, {"hidden_size", 2048}, {"num_attention_heads", 8},
                {"num_key_value_heads", 1}, {"num_hidden_layers", 18}, {"head_dim", 256},
                {"max_position_embeddings", 8192}, {"rope_theta", 10000.0}, {"pad_token_id", 0}};
    if (family == "got_ocr2" && !has_text_config)
        return {{"vocab_size", 151860}, {"hidden_size", 1024}, {"num_attention_heads", 16},
                {"num_key_value_heads", 16}, {"num_hidden_layers", 24}, {"max_position_embeddings", 32768},
                {"rope_theta", 1000000.0}};
    nlohmann::json defaults;
    if (language == "gemma")
        defaults = {{"vocab_size", 256000}, {"hidden_size", 3072}, {"num_attention_heads", 16},
                    {"num_hidden_layers", 28}, {"head_dim", 256}, {"max_position_embeddings", 8192},
                    {"rope_theta", 10000.0}, {"pad_token_id", 0}};
    if (language == "gemma2")
        defaults = {{"vocab_size", 256000}, {"hidden_size", 2304}, {"num_attention_heads", 8},
                    {"num_hidden_layers", 26}, {"head_dim", 256}, {"max_position_embeddings", 8192},
                    {"rope_theta", 10000.0}, {"pad_token_id", 0}};
    if (language == "llama")
        defaults = {{"vocab_size", 32000}, {"hidden_size", 4096}, {"num_attention_heads", 32},
                    {"num_hidden_layers", 32}, {"max_position_embeddings", 2048}, {"rope_theta", 10000.0}};
    if (language == "mistral")
        defaults = {{"vocab_size", 32000}, {"hidden_size", 4096}, {"num_attention_heads", 32},
                    {"num_hidden_layers", 32}, {"max_position_embeddings", 131072}, {"rope_theta", 10000.0}};
    if (language == "qwen2")
        defaults = {{"vocab_size", 151936}, {"hidden_size", 4096}, {"num_attention_heads", 32},
                    {"num_hidden_layers", 32}, {"max_position_embeddings", 32768}, {"rope_theta", 10000.0}};
    if (language == "qwen3")
        defaults = {{"vocab_size", 151936}, {"hidden_size", 4096}, {"num_attention_heads", 32},
                    {"num_key_value_heads", 32}, {"num_hidden_layers", 32}, {"head_dim", 128},
                    {"max_position_embeddings", 32768}, {"rope_theta", 10000.0}};
    if (language == "granite")  // its embedding_multiplier (1.0 by default) read as Granite's
        defaults = {{"vocab_size", 32000}, {"hidden_size", 4096}, {"num_attention_heads", 32},
                    {"num_hidden_layers", 32}, {"max_position_embeddings", 2048}, {"rope_theta", 10000.0}};
    if (language == "persimmon")  // FuyuConfig's text config (from its top-level keys without text_config)
        defaults = {{"vocab_size", 262144}, {"hidden_size", 4096}, {"num_attention_heads", 64},
                    {"num_hidden_layers", 36}, {"max_position_embeddings", 16384}, {"rope_theta", 25000.0},
                    {"partial_rotary_factor", 0.5}};
    if (language == "lfm2")  // the rest from LFM2's entry (with_family_defaults)
        defaults = {{"vocab_size", 65536}, {"hidden_size", 2560}, {"num_attention_heads", 32},
                    {"num_key_value_heads", 8}, {"num_hidden_layers", 32}};
    if (language == "cohere2")  // the rest from Cohere 2's entry (with_family_defaults)
        defaults = {{"vocab_size", 256000}, {"hidden_size", 8192}, {"num_attention_heads", 64},
                    {"num_hidden_layers", 40}};
    if (family == "voxtral")
        defaults.update({{"vocab_size", 131072}, {"hidden_size", 3072}, {"num_hidden_layers", 30},
                         {"num_key_value_heads", 8}, {"max_position_embeddings", 131072}, {"rope_theta", 100000000.0},
                         {"head_dim", 128}});
    if ((family == "idefics3" || family == "smolvlm") && !has_text_config) defaults["pad_token_id"] = 128002;
    return defaults;
}

/// Zamba2Config's attention keys: head_dim is attention_head_dim (its attribute map's), which the
/// class sets to 2 x hidden_size / num_attention_heads after reading config.json, whatever the
/// file says; with use_long_context, max_position_embeddings 16384 (its theta rescale is
/// rotary_options_from_json's, applied once).
inline void zamba2_attention_keys(nlohmann::json& config) {
    const auto flag = [&](const char* key) {
        const auto found = config.find(key);
        return found != config.end() && found->is_boolean() && found->get<bool>();
    };
    const auto number = [&](const char* key) {
        const auto found = config.find(key);
        return found != config.end() && found->is_number() ? found->get<double>() : 0.0;
    };
    const auto hidden = static_cast<std::int64_t>(number("hidden_size"));
    const auto heads = static_cast<std::int64_t>(number("num_attention_heads"));
    if (heads > 0) config["head_dim"] = 2 * hidden / heads;
    if (flag("use_long_context")) config["max_position_embeddings"] = 16384;
}

/// `config` with the family's config-class defaults where config.json leaves a key out (absent:
/// an explicit null keeps its meaning, as pad_token_id null means no padding_idx), and the keys
/// renamed or forced as the config class does: DBRX's d_model, n_heads, n_layers, max_seq_len and
/// attn_config.rope_theta; DeepSeek's head_dim = qk_rope_head_dim; Cohere 2's head_dim =
/// hidden_size / num_attention_heads whatever head_dim says; LFM2's theta as rope_theta. A rule
/// given in rope_parameters (transformers 5) is not overridden by a default rope_scaling. A
/// vision-language family's config takes its language model's (rules_family) first.
inline nlohmann::json with_family_defaults(nlohmann::json config, const std::string& model_type) {
    if (const std::string rules = rules_family(config, model_type); rules != model_type)
        config = with_family_defaults(std::move(config), rules);  // a vision-language family's language model's
    const DecoderFamily* family = decoder_family(model_type);
    if (family == nullptr || !config.is_object()) return config;
    const nlohmann::json defaults = nlohmann::json::parse(family->defaults);
    for (auto item = defaults.begin(); item != defaults.end(); ++item) {
        // transformers 5's rope_parameters hold the rule and the theta: a default rule or theta
        // would shadow them.
        const nlohmann::json* parameters = find_key(config, {"rope_parameters"});
        if (item.key() == "rope_scaling" && parameters != nullptr) continue;
        if (item.key() == "rope_theta" && parameters != nullptr && parameters->is_object() &&
            (parameters->contains("rope_theta") || parameters->contains("full_attention")))
            continue;
        if (!config.contains(item.key())) config[item.key()] = item.value();
    }
    if (model_type == "dbrx") {
        const auto rename = [&](const char* from, const char* to) {
            if (!config.contains(to) && config.contains(from)) config[to] = config[from];
        };
        rename("n_heads", "num_attention_heads");
        rename("n_layers", "num_hidden_layers");
        rename("max_seq_len", "max_position_embeddings");
        const auto attention = config.find("attn_config");
        if (!config.contains("rope_theta")) {
            const bool nested = attention != config.end() && attention->is_object() && attention->contains("rope_theta");
            config["rope_theta"] = nested ? (*attention)["rope_theta"] : nlohmann::json(10000.0);
        }
    }
    if ((model_type == "lfm2" || model_type == "lfm2_moe") && config.contains("theta") && !config["theta"].is_null())
        config["rope_theta"] = config["theta"];  // Lfm2Config reads `theta` before `rope_theta`
    if (model_type == "deepseek_v2" || model_type == "deepseek_v3" || model_type == "kimi_k2")
        config["head_dim"] = config["qk_rope_head_dim"];
    if (model_type == "cohere2") config.erase("head_dim");
    if (model_type == "minimax") {
        // Hugging Face's MiniMax rotates each whole head whatever the config says (transformers 4.5x
        // fails on a partial_rotary_factor, 5.x ignores it); MiniMax's own code rotates rotary_dim.
        config.erase("partial_rotary_factor");
        config.erase("rotary_dim");
    }
    if (model_type == "zamba2") zamba2_attention_keys(config);
    if (model_type == "jetmoe" && !config.contains("head_dim")) config["head_dim"] = config["kv_channels"];
    if (model_type == "recurrent_gemma" && !config.contains("max_position_embeddings"))
        config["max_position_embeddings"] = config["attention_window_size"];
    if (model_type == "chameleon") config.erase("head_dim");  // ChameleonAttention: hidden_size // heads
    return config;
}

/// The config's number of layers (num_hidden_layers, n_layer, n_layers, num_layers), or 0 when it
/// says none.
inline Index layer_count(const nlohmann::json& config, const std::string& name) {
    return positive_key(config, name, {"num_hidden_layers", "n_layer", "n_layers", "num_layers"}, false);
}

/// Layer `layer`'s entry of `types`, the config's list at `key` (layer_types, layers_block_type).
/// @throws format_error naming the key when it is not one string per layer (`layers` of them).
inline std::string layer_type(const nlohmann::json& types, const std::string& name, const char* key, Index layer,
                              Index layers) {
    if (!types.is_array() || static_cast<Index>(types.size()) != layers)
        seqembed::detail::fail<format_error>(name, ": '", key, "' is not a list of ", layers,
                                             " layer types (num_hidden_layers)");
    const nlohmann::json& type = types[static_cast<std::size_t>(layer)];
    if (!type.is_string())
        seqembed::detail::fail<format_error>(name, ": '", key, "'[", layer, "] is ", type.dump(), ", not a string");
    return type.get<std::string>();
}

/// Whether layer i is a full-attention layer: layer_types[i] when the config lists them, else the
/// family's period rule (`period_key`, default `period`): every period-th layer (i + 1 a multiple).
inline bool is_full_attention_layer(const nlohmann::json& config, const std::string& name, Index layer,
                                    Index layers, const char* period_key, Index period) {
    if (const nlohmann::json* types = find_key(config, {"layer_types"}))
        return layer_type(*types, name, "layer_types", layer, layers) == "full_attention";
    if (const nlohmann::json* pattern = find_key(config, {period_key}); pattern != nullptr && pattern->is_string()) {
        // EXAONE 4's "LLLG": one letter per layer, repeated; G is global (full) attention.
        const std::string letters = pattern->get<std::string>();
        if (letters.empty() || letters.find_first_not_of("LG") != std::string::npos)
            seqembed::detail::fail<format_error>(name, ": '", period_key, "' is \"", letters,
                                                 "\", not a pattern of L and G");
        return letters[static_cast<std::size_t>(layer) % letters.size()] == 'G';
    }
    const Index every = positive_key(config, name, {period_key}, false);
    return (layer + 1) % (every != 0 ? every : period) == 0;
}

}  // namespace seqembed::io::detail
