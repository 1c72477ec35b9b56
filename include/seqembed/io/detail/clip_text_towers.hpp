/// @file io/detail/clip_text_towers.hpp
/// @brief The two-tower models whose text tower is CLIP's (CLIPTextEmbeddings or a copy of it:
///        token_embedding + position_embedding of positions 0 .. seq - 1, nothing more): one entry
///        per model, from its Hugging Face modeling and configuration files. io::load_clip_text
///        builds them.
#pragma once

#include <string>

namespace seqembed::io::detail {

/// One two-tower model with CLIP's text tower.
struct ClipTextTower {
    /// The two-tower config's model_type (its text tower's keys under text_config).
    const char* model_type;
    /// The text model's own model_type (its keys at the top level).
    const char* text_model_type;
    /// Where the model's own heads save the two-tower model ("owlvit." for
    /// OwlViTForObjectDetection), or "": tried before `text_model.` and no prefix.
    const char* outer_prefix;
    /// Whether the config class reads a legacy text_config_dict over text_config.
    bool reads_text_config_dict;
    /// The text config class's values for keys config.json may leave out (a JSON object).
    const char* defaults;
};

/// The tower of `model_type` (a two-tower model's or its text model's), or none.
inline const ClipTextTower* clip_text_tower(const std::string& model_type) {
    // CLIPTextConfig's, SiglipTextConfig's, OwlViTTextConfig's, XCLIPTextConfig's,
    // GroupViTTextConfig's and CLIPSegTextConfig's defaults (transformers 4.57.6 and 5.x agree).
    static constexpr const char* clip = R"({"vocab_size": 49408, "hidden_size": 512, "max_position_embeddings": 77})";
    static constexpr const char* siglip =
        R"({"vocab_size": 32000, "hidden_size": 768, "max_position_embeddings": 64})";
    static constexpr const char* owl = R"({"vocab_size": 49408, "hidden_size": 512, "max_position_embeddings": 16})";
    static const ClipTextTower towers[] = {
        {"clip", "clip_text_model", "", true, clip},
        {"siglip", "siglip_text_model", "", false, siglip},
        {"siglip2", "siglip2_text_model", "", false, siglip},
        {"owlvit", "owlvit_text_model", "owlvit.", false, owl},
        {"owlv2", "owlv2_text_model", "owlv2.", false, owl},
        {"xclip", "xclip_text_model", "", true, clip},
        {"groupvit", "groupvit_text_model", "", true,
         R"({"vocab_size": 49408, "hidden_size": 256, "max_position_embeddings": 77})"},
        {"clipseg", "clipseg_text_model", "clip.", true, clip},
    };
    for (const ClipTextTower& tower : towers)
        if (model_type == tower.model_type || model_type == tower.text_model_type) return &tower;
    return nullptr;
}

}  // namespace seqembed::io::detail
