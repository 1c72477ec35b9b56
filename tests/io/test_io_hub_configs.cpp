// Published config.json files (tests/io/fixtures/hub_configs) read as their models' modules read
// them: the rotary stage's head, theta, rule and M-RoPE sections, the model's sizes, and Qwen-VL's
// vision ids, where each file puts them (top level, text_config, rope_scaling or transformers 5's
// rope_parameters).
#include <seqembed/io/models.hpp>
#include <seqembed/io/rotary_config.hpp>

#include <array>
#include <filesystem>
#include <string>

#include "catch.hpp"
#include "io_test_support.hpp"

using seqembed::Index;
using seqembed::RotaryScaling;

namespace {

std::filesystem::path hub_config(const std::string& name) {
    return std::filesystem::path(SEQEMBED_IO_FIXTURES) / "hub_configs" / (name + ".json");
}

}  // namespace

TEST_CASE("Published Qwen-VL configs give the rotary stage its sections and the model its vision ids",
          "[io][mrope][hub]") {
    struct Want {
        const char* file;
        const char* model_type;
        Index vocab, hidden;
        double theta;
        Index max_positions;
        std::array<Index, 3> section;
        bool interleaved;
        double tokens_per_second;
    };
    for (const Want& want : {Want{"Qwen__Qwen2.5-VL-3B-Instruct", "qwen2_5_vl", 151936, 2048, 1e6, 128000, {16, 24, 24}, false, 2},
                             Want{"Qwen__Qwen2.5-VL-7B-Instruct", "qwen2_5_vl", 152064, 3584, 1e6, 128000, {16, 24, 24}, false, 2},
                             Want{"Qwen__Qwen3-VL-4B-Instruct", "qwen3_vl", 151936, 2560, 5e6, 262144, {24, 20, 20}, true, 0}}) {
        INFO(want.file);
        const std::filesystem::path file = hub_config(want.file);
        const seqembed::io::ModelConfig config = seqembed::io::ModelConfig::read(file);
        CHECK(config.model_type == want.model_type);
        CHECK(config.vocab_size == want.vocab);
        CHECK(config.hidden_size == want.hidden);
        const seqembed::RotaryOptions rope = seqembed::io::read_rotary_config(file);
        CHECK(rope.head_dim == 128);
        CHECK(rope.base == want.theta);
        CHECK(rope.scaling == RotaryScaling::none);
        CHECK(rope.max_positions == want.max_positions);
        CHECK(rope.mrope_section == want.section);
        CHECK(rope.mrope_interleaved == want.interleaved);
        const seqembed::io::VisionTokens vision =
            seqembed::io::detail::vision_tokens(seqembed::io::detail::read_json_object(file), want.model_type, "config.json");
        CHECK(vision.image_token_id == 151655);
        CHECK(vision.video_token_id == 151656);
        CHECK(vision.vision_start_token_id == 151652);
        CHECK(vision.spatial_merge_size == 2);
        CHECK(vision.tokens_per_second == want.tokens_per_second);
        CHECK(vision.frames_apart == want.interleaved);
    }
}

TEST_CASE("Published decoder configs give the rotary stage its rule", "[io][rotary][hub]") {
    {
        const seqembed::RotaryOptions rope = seqembed::io::read_rotary_config(hub_config("openai__gpt-oss-20b"));
        CHECK(rope.head_dim == 64);
        CHECK(rope.base == 150000.0);
        CHECK(rope.scaling == RotaryScaling::yarn);
        CHECK(rope.factor == 32.0);
        CHECK(rope.original_max_position_embeddings == 4096);
        CHECK_FALSE(rope.truncate);
    }
    {
        const seqembed::RotaryOptions rope = seqembed::io::read_rotary_config(hub_config("deepseek-ai__DeepSeek-V3"));
        CHECK(rope.head_dim == 64);  // qk_rope_head_dim
        CHECK(rope.layout == seqembed::RotaryLayout::interleaved);
        CHECK(rope.scaling == RotaryScaling::yarn);
        CHECK(rope.factor == 40.0);
        CHECK(rope.mscale == 1.0);
        CHECK(rope.mscale_all_dim == 1.0);
    }
    {
        const seqembed::RotaryOptions rope = seqembed::io::read_rotary_config(hub_config("zai-org__GLM-4.5"));
        CHECK(rope.head_dim == 128);
        CHECK(rope.partial_rotary_factor == 0.5);
        CHECK(seqembed::RotaryEmbedding<float>(rope).rotary_dim() == 64);
        CHECK(rope.base == 1000000.0);
    }
    {
        const seqembed::RotaryOptions rope = seqembed::io::read_rotary_config(hub_config("allenai__Olmo-3.1-32B-Instruct"));
        CHECK(rope.scaling == RotaryScaling::yarn);
        CHECK(rope.factor == 8.0);
        CHECK(rope.attention_factor.has_value());
        CHECK(rope.base == 500000.0);
    }
    {
        // Gemma 3's text_config over Gemma3TextConfig's defaults: the global layers' stage.
        const seqembed::RotaryOptions rope = seqembed::io::read_rotary_config(hub_config("google__gemma-3-4b-it"));
        CHECK(rope.head_dim == 256);
        CHECK(rope.base == 1000000.0);
        CHECK(rope.scaling == RotaryScaling::linear);
        CHECK(rope.factor == 8.0);
        CHECK(rope.max_positions == 131072);
        const seqembed::io::ModelConfig config = seqembed::io::ModelConfig::read(hub_config("google__gemma-3-4b-it"));
        CHECK(config.hidden_size == 2560);
        CHECK(config.vocab_size == 262208);
    }
    {
        // Mistral 3's text_config, transformers 5's rope_parameters.
        const std::filesystem::path file = hub_config("mistralai__Devstral-Small-2-24B-Instruct-2512");
        const seqembed::RotaryOptions rope = seqembed::io::read_rotary_config(file);
        CHECK(rope.head_dim == 128);
        CHECK(rope.base == 100000000.0);
        CHECK(rope.scaling == RotaryScaling::yarn);
        CHECK(rope.factor == 48.0);
        CHECK(seqembed::io::ModelConfig::read(file).hidden_size == 5120);
    }
}
