// The model presets (io/models.hpp) against checkpoints of 43 Hugging Face families, built and
// run by tests/reference/generate_family_fixtures.py after each family's PyTorch code: every
// family loads from its directory in one call and its output matches, bit for bit where no
// LayerNorm or matrix product is involved, within 1e-6 relative (to max(1, |y|)) otherwise; and
// the rotary families' stage (RotaryEmbedding from config.json) against Hugging Face's inv_freq.
#include <seqembed/io/model.hpp>
#include <seqembed/io/models.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "io_test_support.hpp"
#include "../fixtures/models/family_cases.hpp"

using seqembed::Index;
using seqembed::RowMatrix;
using test_support::message_of;
namespace fixtures = seqembed_family_fixtures;

namespace {

/// What a family's stage writes for a case (and ELECTRA's projection of it).
struct Output {
    RowMatrix<float> rows;
    RowMatrix<float> projected;
};

template <typename Stage>
Output run(const Stage& stage, const fixtures::Case& c);

/// A loader that returns io::Model (DeBERTa's, whose stage type follows its config).
Output run(const seqembed::io::Model& model, const fixtures::Case& c) {
    if (const auto* learned = model.learned()) return run(*learned, c);
    return run(*model.lookup(), c);
}

template <typename Stage>
Output run(const Stage& stage, const fixtures::Case& c) {
    const seqembed::IdMatrix ids = io_test::ids_of(c.input_ids, c.batch, c.seq);
    const seqembed::IdMatrix mask = io_test::ids_of(c.attention_mask, c.batch, c.seq);
    const seqembed::Padding padding = seqembed::Padding::from_mask(mask);
    Output output;
    if (c.token_types_passed) {
        const seqembed::IdMatrix types = io_test::ids_of(c.token_type_ids, c.batch, c.seq);
        output.rows = stage.pipeline.forward(ids, types, padding);
    } else {
        output.rows = stage.pipeline.forward(ids, padding);
    }
    if (stage.projection) output.projected = stage.projection->forward(output.rows);
    return output;
}

Output run_family(const fixtures::Family& family, const fixtures::Case& c, const std::filesystem::path& directory) {
    const std::string type = family.name;
    if (type == "bert") return run(seqembed::io::load_bert(directory), c);
    if (type == "electra") return run(seqembed::io::load_electra(directory), c);
    if (type == "roberta") return run(seqembed::io::load_roberta(directory), c);
    if (type == "gpt2") return run(seqembed::io::load_gpt2(directory), c);
    if (type == "bart" || type == "mbart" || type == "plbart" || type == "mvp" || type == "blenderbot" ||
        type == "bigbird_pegasus" || type == "led")
        return run(seqembed::io::load_bart(directory), c);
    if (type == "biogpt") return run(seqembed::io::load_opt(directory), c);
    if (type == "xglm") return run(seqembed::io::load_xglm(directory), c);
    if (type == "xlm" || type == "flaubert") return run(seqembed::io::load_xlm(directory), c);
    if (type == "fsmt") return run(seqembed::io::load_fsmt(directory), c);
    if (type == "trocr" || type == "trocr_printed") return run(seqembed::io::load_trocr(directory), c);
    if (type == "donut") return run(seqembed::io::load_bart(directory), c);
    if (type == "vit_gpt2") return run(seqembed::io::load_gpt2(directory), c);
    if (type == "opt" || type == "blip2_opt") return run(seqembed::io::load_opt(directory), c);
    if (type == "instructblip_t5") return run(seqembed::io::load_t5(directory), c);
    if (type == "instructblip_vicuna") return run(seqembed::io::load_rotary_decoder(directory), c);
    if (type == "marian" || type == "pegasus") return run(seqembed::io::load_marian(directory), c);
    if (type == "t5" || type == "mt5" || type == "umt5" || type == "longt5" || type == "switch_transformers")
        return run(seqembed::io::load_t5(directory), c);
    if (type == "gpt_neo" || type == "gpt_bigcode" || type == "openai_gpt")
        return run(seqembed::io::load_gpt2(directory), c);
    if (type == "xlnet") return run(seqembed::io::load_xlnet(directory), c);
    if (type == "m2m_100" || type == "nllb_moe") return run(seqembed::io::load_m2m100(directory), c);
    if (type == "bloom") return run(seqembed::io::load_bloom(directory), c);
    if (type == "mpt") return run(seqembed::io::load_mpt(directory), c);
    if (type == "deberta" || type == "deberta_v2") return run(seqembed::io::load_deberta(directory), c);
    if (type == "llama") return run(seqembed::io::load_llama(directory), c);
    if (type == "mistral") return run(seqembed::io::load_mistral(directory), c);
    if (type == "qwen2") return run(seqembed::io::load_qwen2(directory), c);
    if (type == "gemma") return run(seqembed::io::load_gemma(directory), c);
    if (type == "phi") return run(seqembed::io::load_phi(directory), c);
    if (type == "gpt_neox") return run(seqembed::io::load_gpt_neox(directory), c);
    if (type == "distilbert") return run(seqembed::io::load_distilbert(directory), c);
    if (type == "albert") return run(seqembed::io::load_albert(directory), c);
    if (type == "mpnet") return run(seqembed::io::load_mpnet(directory), c);
    if (type == "modernbert") return run(seqembed::io::load_modernbert(directory), c);
    for (const char* encoder : {"longformer", "data2vec_text", "xmod", "xlm_roberta_xl", "big_bird", "megatron_bert",
                                "ernie", "splinter", "squeezebert", "rembert", "bert_generation", "nystromformer",
                                "roberta_prelayernorm", "ibert", "convbert", "funnel",
                                "yoso", "mra", "roformer", "nomic_bert", "chinese_clip", "chinese_clip_text_model",
                                "align", "flava", "altclip", "clap", "bridgetower", "git", "dpr"})
        if (type == encoder) return run(seqembed::io::load_encoder(directory), c);
    if (type == "esm" || type == "esm1b") {
        // io::Model::forward applies ESM's token dropout per sequence.
        const seqembed::io::Model model = seqembed::io::load_esm(directory);
        const seqembed::IdMatrix ids = io_test::ids_of(c.input_ids, c.batch, c.seq);
        const seqembed::IdMatrix mask = io_test::ids_of(c.attention_mask, c.batch, c.seq);
        seqembed::Batch batch(ids);
        batch.padding = seqembed::Padding::from_mask(mask);
        return {model.forward(batch), {}};
    }
    if (type == "clip" || type == "clip_text_model" || type == "siglip" || type == "siglip2_text_model")
        return run(seqembed::io::load_clip_text(directory), c);
    if (type == "owlvit" || type == "owlv2" || type == "xclip" || type == "groupvit" || type == "clipseg")
        return run(seqembed::io::load_clip_text(directory), c);
    if (type == "blip" || type == "blip_captioning") return run(seqembed::io::load_blip_text(directory), c);
    if (type == "kosmos2") return run(seqembed::io::load_kosmos2_text(directory), c);
    if (type == "speech_to_text") return run(seqembed::io::load_speech2text(directory), c);
    if (type == "whisper") return run(seqembed::io::load_whisper(directory), c);
    if (type == "mamba" || type == "mamba2" || type == "falcon_mamba") return run(seqembed::io::load_mamba(directory), c);
    if (type == "qwen3" || type == "qwen3_moe" || type == "mixtral" || type == "gemma2" || type == "starcoder2" ||
        type == "olmo2" || type == "stablelm" || type == "granite" || type == "gemma3_text" || type == "gemma3" ||
        type == "gptj" || type == "codegen" || type == "falcon" || type == "cohere" || type == "granite_vision" ||
        seqembed::io::detail::is_rotary_family(type))
        return run(seqembed::io::load_rotary_decoder(directory), c);
    FAIL("no preset for " << type);
    return {};
}

/// The rotary stage a rotary family's loader builds.
std::optional<seqembed::RotaryEmbedding<float>> rotary_of(const std::string& type, const std::filesystem::path& directory) {
    if (type == "llama") return seqembed::io::load_llama(directory).rotary;
    if (type == "mistral") return seqembed::io::load_mistral(directory).rotary;
    if (type == "qwen2") return seqembed::io::load_qwen2(directory).rotary;
    if (type == "gemma") return seqembed::io::load_gemma(directory).rotary;
    if (type == "phi") return seqembed::io::load_phi(directory).rotary;
    if (type == "gpt_neox") return seqembed::io::load_gpt_neox(directory).rotary;
    if (type == "modernbert") return seqembed::io::load_modernbert(directory).rotary;
    if (type == "nomic_bert") return *seqembed::io::load_model(directory).rotary();
    return seqembed::io::load_rotary_decoder(directory).rotary;
}

/// The largest |y - want| / max(1, |want|) over the real tokens' rows; padded rows must be zero.
double worst_error(const RowMatrix<float>& y, const double* want, const long* mask, long width, bool& padded_zero) {
    double worst = 0;
    padded_zero = true;
    for (Index r = 0; r < y.rows(); ++r) {
        for (Index c = 0; c < width; ++c) {
            const double value = y(r, c);
            if (mask[r] == 0) {
                padded_zero = padded_zero && value == 0.0;
                continue;
            }
            const double expected = want[r * width + c];
            worst = std::max(worst, std::fabs(value - expected) / std::max(1.0, std::fabs(expected)));
        }
    }
    return worst;
}

}  // namespace

TEST_CASE("Every model family loads from its checkpoint and matches its PyTorch embedding stage",
          "[io][models]") {
    for (long f = 0; f < fixtures::all_families_count; ++f) {
        const fixtures::Family& family = *fixtures::all_families[f];
        // Exact where the stage is lookups, products by a float scale and sums: PyTorch's float32
        // kernels round each of them once, as seqembed's do.
        // Not OPT (a matrix product) nor M2M100 (and NLLB-MoE, XGLM, FSMT, TrOCR's sinusoid), whose
        // table torch computes with its own exp, sin and cos (not correctly rounded).
        const std::string name = family.name;
        const bool exact = !family.layer_norm && name != "opt" && name != "m2m_100" && name != "nllb_moe" &&
                           name != "xglm" && name != "fsmt" && name != "trocr_printed" && name != "kosmos2" &&
                           name != "speech_to_text";
        for (long k = 0; k < family.case_count; ++k) {
            const fixtures::Case& c = family.cases[k];
            INFO(family.name << ", " << c.name << " (" << family.position_rule << ")");
            const Output output = run_family(family, c, io_test::model_directory(family));
            REQUIRE(output.rows.rows() == c.batch * c.seq);
            REQUIRE(output.rows.cols() == c.width);
            bool padded_zero = false;
            const double against_f32 = worst_error(output.rows, c.expected_f32, c.attention_mask, c.width, padded_zero);
            const double against_f64 = worst_error(output.rows, c.expected_f64, c.attention_mask, c.width, padded_zero);
            CHECK(padded_zero);
            if (exact) {
                CHECK(against_f32 == 0.0);
            } else {
                CHECK(against_f64 <= 1e-6);
                CHECK(against_f32 <= 2e-6);
            }
            std::printf("%-8s %-14s vs float32 %.2e  vs float64 %.2e\n", family.name, c.name, against_f32, against_f64);
            if (c.projected_f64 != nullptr) {
                REQUIRE(output.projected.cols() == c.projected_width);
                const double projected = worst_error(output.projected, c.projected_f64, c.attention_mask,
                                                     c.projected_width, padded_zero);
                CHECK(projected <= 1e-6);
            }
        }
    }
}

TEST_CASE("Each rotary model family takes its rotary stage from config.json, with Hugging Face's inverse frequencies",
          "[io][models][rotary]") {
    REQUIRE(fixtures::all_rotary_count == 88);
    for (long r = 0; r < fixtures::all_rotary_count; ++r) {
        const fixtures::Rotary& want = fixtures::all_rotary[r];
        INFO(want.family << " (" << want.rule << ")");
        const std::filesystem::path directory =
            std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models" / want.family;
        const std::optional<seqembed::RotaryEmbedding<float>> rope = rotary_of(want.family, directory);
        REQUIRE(rope.has_value());
        CHECK(rope->head_dim() == want.head_dim);
        CHECK(rope->rotary_dim() == want.rotary_dim);
        CHECK(rope->max_positions() == want.max_positions);
        CHECK(rope->attention_scaling() == want.attention_scaling);
        CHECK((rope->options().layout == seqembed::RotaryLayout::interleaved) == want.interleaved);
        const std::vector<float>& inv_freq = rope->inverse_frequencies();
        REQUIRE(static_cast<long>(inv_freq.size()) == want.rotary_dim / 2);
        for (long i = 0; i < want.rotary_dim / 2; ++i) {
            INFO("inv_freq[" << i << "]");
            CHECK(static_cast<double>(inv_freq[static_cast<std::size_t>(i)]) == want.inv_freq[i]);
        }
    }
    // The rules the configs name reach the stage.
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    CHECK(seqembed::io::load_llama(root / "llama").rotary->options().scaling == seqembed::RotaryScaling::llama3);
    CHECK(seqembed::io::load_qwen2(root / "qwen2").rotary->options().scaling == seqembed::RotaryScaling::yarn);
    CHECK(seqembed::io::load_gpt_neox(root / "gpt_neox").rotary->options().base == 20000.0);
    // load_model reads every rotary family through load_rotary_decoder, with the same stage.
    for (long r = 0; r < fixtures::all_rotary_count; ++r) {
        const fixtures::Rotary& want = fixtures::all_rotary[r];
        INFO(want.family);
        const seqembed::io::Model model = seqembed::io::load_model(root / want.family);
        REQUIRE(model.rotary() != nullptr);
        CHECK(model.rotary()->inverse_frequencies() == rotary_of(want.family, root / want.family)->inverse_frequencies());
    }
    CHECK_THROWS_WITH(seqembed::io::load_rotary_decoder(root / "bert"),
                      Catch::Contains("model_type 'bert' is not a rotary decoder"));
    // A family loader refuses another family whose scale or names it would get wrong.
    CHECK_THROWS_WITH(seqembed::io::load_llama(root / "granite"),
                      Catch::Contains("model_type 'granite' has another input stage than load_llama"));
    CHECK_THROWS_WITH(seqembed::io::load_llama(root / "gemma2"), Catch::Contains("model_type 'gemma2'"));
    CHECK_THROWS_WITH(seqembed::io::load_gemma(root / "qwen3"), Catch::Contains("model_type 'qwen3'"));
    CHECK_THROWS_WITH(seqembed::io::load_llama(root / "gpt_neox"), Catch::Contains("model_type 'gpt_neox'"));
    CHECK(seqembed::io::load_gemma(root / "gemma2").rotary.has_value());
    CHECK(seqembed::io::load_llama(root / "mixtral").rotary.has_value());
}

TEST_CASE("A loaded rotary stage computes positions past max_position_embeddings, as Hugging Face's module",
          "[io][models][rotary]") {
    for (long r = 0; r < fixtures::all_rotary_count; ++r) {
        const fixtures::Rotary& want = fixtures::all_rotary[r];
        INFO(want.family);
        const std::filesystem::path directory =
            std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models" / want.family;
        const std::optional<seqembed::RotaryEmbedding<float>> rope = rotary_of(want.family, directory);
        REQUIRE(rope.has_value());
        CHECK(rope->options().beyond == seqembed::BeyondTable::compute);
        // The same stage with a table twice as long holds those rows: the same bits.
        seqembed::RotaryOptions longer = rope->options();
        longer.max_positions = 2 * rope->max_positions();
        const seqembed::RotaryEmbedding<float> reference(longer);
        RowMatrix<float> cos(1, rope->pairs()), sin(1, rope->pairs());
        RowMatrix<float> want_cos(1, rope->pairs()), want_sin(1, rope->pairs());
        const std::int64_t past = rope->max_positions() + 7;
        rope->forward_into(past, cos, sin);
        reference.forward_into(past, want_cos, want_sin);
        CHECK(cos == want_cos);
        CHECK(sin == want_sin);
    }
}

TEST_CASE("A model family without RoPE has no rotary stage", "[io][models][rotary]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    CHECK_FALSE(seqembed::io::load_t5(root / "t5").rotary.has_value());
    CHECK_FALSE(seqembed::io::load_bert(root / "bert").rotary.has_value());
    CHECK_FALSE(seqembed::io::load_gpt2(root / "gpt2").rotary.has_value());
}

namespace {

/// A scratch copy of a family's directory whose config.json or checkpoint a test may break.
struct BrokenCopy {
    test_support::TempDir scratch;
    std::filesystem::path directory = scratch.path();
    explicit BrokenCopy(const char* family) {
        const std::filesystem::path source = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models" / family;
        std::filesystem::copy(source / "config.json", directory / "config.json");
        std::filesystem::copy(source / "model.safetensors", directory / "model.safetensors");
    }
    void write_config(const std::string& text) const { test_support::write_bytes(directory / "config.json", text); }
};

}  // namespace

TEST_CASE("A broken checkpoint or config is an error naming the file, the tensor or key, and what was expected",
          "[io][models][bad_input]") {
    {
        const BrokenCopy copy("bert");
        // A vocabulary larger than the table: the tensor's shape is wrong for the config.
        copy.write_config(R"({"model_type": "bert", "vocab_size": 65, "hidden_size": 16, "max_position_embeddings": 32,
                              "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0})");
        const std::string message = message_of<seqembed::error>([&] { (void)seqembed::io::load_bert(copy.directory); });
        INFO(message);
        CHECK(message.find("bert.embeddings.word_embeddings.weight") != std::string::npos);
        CHECK(message.find("model.safetensors") != std::string::npos);
        CHECK(message.find("expected vocab_size x width = 65 x 16") != std::string::npos);
    }
    {
        const BrokenCopy copy("bert");
        copy.write_config(R"({"model_type": "bert", "vocab_size": 64, "max_position_embeddings": 32, "type_vocab_size": 2})");
        const std::string message = message_of<seqembed::error>([&] { (void)seqembed::io::load_bert(copy.directory); });
        INFO(message);
        CHECK(message.find("config.json") != std::string::npos);
        CHECK(message.find("'hidden_size' or 'd_model' or 'n_embd'") != std::string::npos);
    }
    {
        const BrokenCopy copy("bert");
        copy.write_config(R"({"model_type": "bert", "vocab_size": 64, "hidden_size": 16, "max_position_embeddings": 32,
                              "type_vocab_size": 2, "layer_norm_eps": -1})");
        CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_bert(copy.directory); }).find("'layer_norm_eps' is -1") !=
              std::string::npos);
        copy.write_config(R"({"model_type": "mystery", "vocab_size": 64, "hidden_size": 16})");
        CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_bert(copy.directory); }).find("'mystery' has no preset") !=
              std::string::npos);
        copy.write_config("{ not json");
        CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_bert(copy.directory); }).find("is not a JSON object") !=
              std::string::npos);
    }
    {
        // GPT-2's tensors under BERT's names: the preset names what it looked for.
        const BrokenCopy copy("gpt2");
        copy.write_config(R"({"model_type": "bert", "vocab_size": 70, "hidden_size": 16, "max_position_embeddings": 32,
                              "type_vocab_size": 2})");
        const std::string message = message_of<seqembed::error>([&] { (void)seqembed::io::load_bert(copy.directory); });
        INFO(message);
        CHECK(message.find("has no tensor 'bert.embeddings.") != std::string::npos);
        CHECK(message.find("' or 'embeddings.") != std::string::npos);
    }
    CHECK(message_of<seqembed::error>([] { (void)seqembed::io::load_llama("/nonexistent/seqembed"); }).find("config.json") !=
          std::string::npos);
}

TEST_CASE("A rotary model's bad config is an error naming the file and the key", "[io][models][rotary][bad_input]") {
    const BrokenCopy copy("llama");
    {
        copy.write_config(R"({"model_type": "llama", "vocab_size": 72, "hidden_size": 16,
                              "max_position_embeddings": 512, "rope_theta": 10000.0})");
        const std::string message = message_of<seqembed::error>([&] { (void)seqembed::io::load_llama(copy.directory); });
        INFO(message);
        CHECK(message.find("config.json") != std::string::npos);
        CHECK(message.find("'num_attention_heads' or 'n_head'") != std::string::npos);
    }
    {
        copy.write_config(R"({"model_type": "llama", "vocab_size": 72, "hidden_size": 16, "num_attention_heads": 2,
                              "head_dim": 7, "max_position_embeddings": 512})");
        const std::string message = message_of<seqembed::error>([&] { (void)seqembed::io::load_llama(copy.directory); });
        INFO(message);
        CHECK(message.find("config.json: 'head_dim' is 7, not even") != std::string::npos);
    }
    {
        // 16 / 16 = 1: odd, derived from the two keys.
        copy.write_config(R"({"model_type": "mistral", "vocab_size": 72, "hidden_size": 16, "num_attention_heads": 16,
                              "max_position_embeddings": 512})");
        const std::string message = message_of<seqembed::error>([&] { (void)seqembed::io::load_mistral(copy.directory); });
        INFO(message);
        CHECK(message.find("config.json: head_dim = 'hidden_size' / 'num_attention_heads' = 1 is odd") !=
              std::string::npos);
    }
    {
        copy.write_config(R"({"model_type": "qwen2", "vocab_size": 72, "hidden_size": 16, "num_attention_heads": 2,
                              "max_position_embeddings": 512, "rope_scaling": {"type": "yarn"}})");
        const std::string message = message_of<seqembed::error>([&] { (void)seqembed::io::load_qwen2(copy.directory); });
        INFO(message);
        CHECK(message.find("config.json: has no 'rope_scaling.factor'") != std::string::npos);
    }
    {
        copy.write_config(R"({"model_type": "phi", "vocab_size": 72, "hidden_size": 16, "num_attention_heads": 2})");
        const std::string message = message_of<seqembed::error>([&] { (void)seqembed::io::load_phi(copy.directory); });
        INFO(message);
        CHECK(message.find("config.json: has no key 'max_position_embeddings' or 'n_positions'") != std::string::npos);
    }
    {
        // head_dim 8 x 0.25 = 2 rotated dimensions is fine; 8 x 0.375 = 3 is not.
        copy.write_config(R"({"model_type": "phi", "vocab_size": 72, "hidden_size": 16, "num_attention_heads": 2,
                              "partial_rotary_factor": 0.375, "max_position_embeddings": 64})");
        const std::string message = message_of<seqembed::error>([&] { (void)seqembed::io::load_phi(copy.directory); });
        INFO(message);
        CHECK(message.find("config.json: its rotary options are invalid") != std::string::npos);
    }
    copy.write_config(R"({"model_type": "reformer", "vocab_size": 72, "hidden_size": 16})");
    const std::string unknown = message_of<seqembed::error>([&] { (void)seqembed::io::load_llama(copy.directory); });
    INFO(unknown);
    const std::string intro = "model_type 'reformer' has no preset (";
    const std::size_t open = unknown.find(intro);
    REQUIRE(open != std::string::npos);
    const std::size_t close = unknown.find(')', open);
    REQUIRE(close != std::string::npos);
    // Every family the message lists is one ModelConfig::read knows.
    const std::string listed = unknown.substr(open + intro.size(), close - open - intro.size()) + ", ";
    long families = 0;
    for (std::size_t at = 0, comma; (comma = listed.find(", ", at)) != std::string::npos; at = comma + 2, ++families) {
        const std::string family = listed.substr(at, comma - at);
        INFO(family);
        copy.write_config(R"({"model_type": ")" + family + R"(", "vocab_size": 72, "hidden_size": 16})");
        std::string message;
        try {
            (void)seqembed::io::ModelConfig::read(copy.directory / "config.json");
        } catch (const seqembed::error& e) {
            message = e.what();  // another key missing is fine here
        }
        CHECK(message.find("has no preset") == std::string::npos);
    }
    CHECK(families == 204);
}

namespace {

/// A family's checkpoint saved as Hugging Face saves the larger models: its tensors dealt over two
/// shards (model-00001-of-00002.safetensors, ...) and model.safetensors.index.json mapping each
/// name to its shard.
struct ShardedCopy {
    test_support::TempDir scratch;
    std::filesystem::path directory = scratch.path();
    nlohmann::json index;

    static std::string shard_name(int shard) {
        return "model-0000" + std::to_string(shard + 1) + "-of-00002.safetensors";
    }

    explicit ShardedCopy(const fixtures::Family& family) {
        const std::filesystem::path source = io_test::model_directory(family);
        std::filesystem::copy(source / "config.json", directory / "config.json");
        const auto file = seqembed::io::SafetensorsFile::open(source / "model.safetensors");
        std::vector<seqembed::io::NamedTensor> shards[2];
        nlohmann::json map = nlohmann::json::object();
        int dealt = 0;
        for (const auto& info : file.tensors()) {
            const int shard = dealt++ % 2;
            shards[shard].emplace_back(info.name, file.tensor<float>(info.name));
            map[info.name] = shard_name(shard);
        }
        for (int shard = 0; shard < 2; ++shard)
            seqembed::io::save_safetensors(directory / shard_name(shard), shards[shard]);
        index = {{"metadata", {{"total_size", 0}}}, {"weight_map", map}};
        write_index();
    }
    void write_index() const { test_support::write_bytes(directory / "model.safetensors.index.json", index.dump()); }
};

const fixtures::Family& family_named(const std::string& name) {
    for (long f = 0; f < fixtures::all_families_count; ++f)
        if (name == fixtures::all_families[f]->name) return *fixtures::all_families[f];
    FAIL("no fixture family " << name);
    return *fixtures::all_families[0];
}

}  // namespace

TEST_CASE("A sharded checkpoint (model.safetensors.index.json) loads as its single file does", "[io][models]") {
    // BERT's five tensors over two shards; Llama's one tensor in the first shard, the second
    // shard holding nothing the stage reads.
    for (const char* name : {"bert", "llama", "electra", "gpt_neox"}) {
        const fixtures::Family& family = family_named(name);
        const ShardedCopy sharded(family);
        for (long k = 0; k < family.case_count; ++k) {
            const fixtures::Case& c = family.cases[k];
            INFO(family.name << ", " << c.name);
            const Output single = run_family(family, c, io_test::model_directory(family));
            const Output shards = run_family(family, c, sharded.directory);
            REQUIRE(shards.rows.rows() == single.rows.rows());
            CHECK(shards.rows == single.rows);
            CHECK(shards.projected == single.projected);
        }
    }
}

TEST_CASE("model.safetensors is read when the directory also has an index", "[io][models]") {
    // The index names no shard that exists: reading it would fail.
    const fixtures::Family& bert = family_named("bert");
    const BrokenCopy copy("bert");
    test_support::write_bytes(copy.directory / "model.safetensors.index.json",
                         R"({"weight_map": {"bert.embeddings.word_embeddings.weight": "absent.safetensors"}})");
    const Output single = run_family(bert, bert.cases[0], io_test::model_directory(bert));
    CHECK(run_family(bert, bert.cases[0], copy.directory).rows == single.rows);
}

TEST_CASE("A broken sharded checkpoint is an error naming the index or the shard", "[io][models][bad_input]") {
    const fixtures::Family& bert = family_named("bert");
    const std::string word = "bert.embeddings.word_embeddings.weight";
    const auto load = [](const ShardedCopy& copy) { return message_of<seqembed::error>([&] { (void)seqembed::io::load_bert(copy.directory); }); };
    {
        ShardedCopy copy(bert);
        copy.index.erase("weight_map");
        copy.write_index();
        const std::string message = load(copy);
        INFO(message);
        CHECK(message.find("model.safetensors.index.json: has no object 'weight_map'") != std::string::npos);
    }
    {
        // A shard outside the checkpoint's directory is refused, not opened.
        ShardedCopy copy(bert);
        copy.index["weight_map"][word] = "../model-00001-of-00002.safetensors";
        copy.write_index();
        const std::string message = load(copy);
        INFO(message);
        CHECK(message.find("maps '" + word + "' to '../model-00001-of-00002.safetensors', not the name of a file") !=
              std::string::npos);
        copy.index["weight_map"][word] = 7;
        copy.write_index();
        CHECK(load(copy).find("maps '" + word + "' to 7, not a file name") != std::string::npos);
        for (const std::string shard : {"/tmp/model.safetensors", ".", "..", "sub/model.safetensors", ""}) {
            copy.index["weight_map"][word] = shard;
            copy.write_index();
            INFO(shard);
            CHECK(load(copy).find("to '" + shard + "', not the name of a file in the checkpoint's directory") !=
                  std::string::npos);
        }
        copy.index["weight_map"] = nlohmann::json::array({word});
        copy.write_index();
        CHECK(load(copy).find("has no object 'weight_map'") != std::string::npos);
        test_support::write_bytes(copy.directory / "model.safetensors.index.json", "{\"weight_map\": {");
        CHECK(load(copy).find("model.safetensors.index.json: is not a JSON object") != std::string::npos);
    }
    {
        // The index names a shard that is not there: named with the index and the tensor.
        ShardedCopy copy(bert);
        const std::string shard = copy.index["weight_map"][word].get<std::string>();
        std::filesystem::remove(copy.directory / shard);
        const std::string message = load(copy);
        INFO(message);
        CHECK(message.find(shard + ": is not there; ") != std::string::npos);
        // (whichever of the shard's tensors the loader asks for first)
        CHECK(message.find("model.safetensors.index.json places 'bert.embeddings.") != std::string::npos);
        const auto error_kind = [&] {
            try {
                (void)seqembed::io::load_bert(copy.directory);
            } catch (const seqembed::file_error&) {
                return 1;
            } catch (const seqembed::error&) {
                return 2;
            }
            return 0;
        };
        CHECK(error_kind() == 1);
    }
    {
        // The index places a tensor in the shard that does not hold it.
        ShardedCopy copy(bert);
        const std::string holder = copy.index["weight_map"][word].get<std::string>();
        const std::string other = holder == ShardedCopy::shard_name(0) ? ShardedCopy::shard_name(1) : ShardedCopy::shard_name(0);
        copy.index["weight_map"][word] = other;
        copy.write_index();
        const std::string message = load(copy);
        INFO(message);
        CHECK(message.find(other + ": has no tensor '" + word + "', which ") != std::string::npos);
        CHECK(message.find("model.safetensors.index.json places in it") != std::string::npos);
    }
    {
        // A tensor the index does not list: named with the index, as a single file names itself.
        ShardedCopy copy(bert);
        copy.index["weight_map"].erase(word);
        copy.write_index();
        const std::string message = load(copy);
        INFO(message);
        CHECK(message.find("model.safetensors.index.json: has no tensor '" + word + "' or ") != std::string::npos);
    }
    {
        // Neither model.safetensors nor an index; then a model.safetensors that is a link to
        // nothing, as an interrupted download leaves in Hugging Face's cache: named, not
        // passed over for the index.
        ShardedCopy copy(bert);
        std::filesystem::remove(copy.directory / "model.safetensors.index.json");
        CHECK(load(copy).find("has neither model.safetensors nor model.safetensors.index.json") != std::string::npos);
        copy.write_index();
        std::filesystem::create_symlink(copy.directory / "blobs-not-there", copy.directory / "model.safetensors");
        CHECK(load(copy).find("model.safetensors: is a link to a file that is not there") != std::string::npos);
    }

}

TEST_CASE("Loaders give the token table the padding_idx of the family's nn.Embedding, and RoBERTa's position table",
          "[io][models][backward]") {
    // Hugging Face's modules: nn.Embedding(vocab_size, hidden, padding_idx=config.pad_token_id)
    // but for GPT-2, GPT-Neo, GPT-NeoX, GPT-J, CodeGen, Falcon and the T5s; RoBERTa's position
    // table takes padding_idx too.
    const std::map<std::string, std::optional<seqembed::TokenId>> expected = {
        {"bert", 0},   {"electra", 0},          {"roberta", 1},      {"gpt2", std::nullopt},
        {"bart", 1},   {"opt", 1},              {"marian", 59},      {"t5", std::nullopt},
        {"llama", {}}, {"mistral", {}},         {"qwen2", {}},       {"gemma", 0},
        {"phi", {}},   {"gpt_neox", std::nullopt}, {"distilbert", 0}, {"albert", 0},
        {"mpnet", 1},  {"qwen3", {}},           {"qwen3_moe", {}},   {"mixtral", {}},
        {"gemma2", 0}, {"starcoder2", {}},      {"olmo2", 1},        {"stablelm", {}},
        {"granite", 0},  {"gemma3_text", 0},    {"gemma3", 0},       {"modernbert", 108},
        {"mbart", 1},    {"pegasus", 0},        {"mt5", std::nullopt}, {"umt5", std::nullopt},
        {"gpt_neo", std::nullopt}, {"gptj", std::nullopt}, {"codegen", std::nullopt},
        {"falcon", std::nullopt},  {"cohere", 0}, {"deberta", 0}, {"deberta_v2", 0}, {"m2m_100", 1},
        {"bloom", std::nullopt},   {"mpt", std::nullopt}, {"gpt_bigcode", std::nullopt},
        // The config classes' pad_token_id where the fixtures' configs have none: Cohere 2's and
        // ERNIE 4.5's 0, OLMo 3's, OLMoE's and Seed-OSS's 1, Apertus's and Helium's 3.
        {"gpt_oss", 111}, {"glm4", 112},      {"glm4_moe", {}},  {"dbrx", {}},      {"deepseek_v3", {}},
        {"deepseek_v2", {}}, {"llama4", {}},  {"qwen2_5_vl", {}}, {"qwen3_vl", {}}, {"granitemoe", {}},
        {"cohere2", 0},   {"smollm3", 122},   {"olmo3", 1},      {"persimmon", {}}, {"mistral3", {}},
        {"apertus", 3},   {"helium", 3},      {"ernie4_5", 0},   {"nemotron", {}},  {"exaone4", {}},
        {"seed_oss", 1},  {"bitnet", {}},     {"olmoe", 1},      {"lfm2", 0},       {"lfm2_moe", 0},
        {"glm4v", {}},    {"glm4v_moe", 2},   {"hunyuan_v1_dense", 127}, {"hunyuan_v1_moe", 0}, {"nomic_bert", {}},
        {"kimi_k2", {}},
        {"longformer", 1}, {"data2vec_text", 1}, {"xmod", 1}, {"xlm_roberta_xl", 1}, {"big_bird", 0},
        {"megatron_bert", 0}, {"ernie", 0}, {"splinter", 0}, {"squeezebert", 0}, {"rembert", 0},
        {"bert_generation", 0}, {"nystromformer", 1}, {"yoso", 1}, {"mra", 1}, {"roformer", 0},
        {"esm", 1}, {"esm1b", 1},
        // CLIP's and SigLIP's token tables and Mamba's have none; Whisper's is pad_token_id.
        {"clip", {}}, {"clip_text_model", {}}, {"siglip", {}}, {"siglip2_text_model", {}}, {"whisper", 139},
        {"mamba", {}}, {"mamba2", {}}, {"falcon_mamba", {}},
        // LLaVA's language model's: text_config's pad_token_id (none here; llava's top-level one is not it).
        {"llava", {}}, {"llava_next", {}}, {"llava_onevision", {}}, {"paligemma", 0}, {"vipllava", 0},
        // Idefics3's: text_config's 2, not the top-level 128002.
        {"idefics3", 2}, {"smolvlm", {}}, {"internvl", {}}, {"got_ocr2", {}}, {"qwen2_audio", {}}, {"voxtral", {}},
        // The config classes' pad_token_id: Falcon-H1's, Bamba's, Jamba's, Zamba's, Zamba 2's, ERNIE 4.5
        // MoE's, VaultGemma's and LFM2's and Cohere 2's (under their VLMs) 0; the others' None.
        {"granitemoehybrid", {}}, {"falcon_h1", 0}, {"bamba", 0}, {"jamba", 0}, {"zamba", 0}, {"zamba2", 0},
        {"qwen3_next", {}}, {"ernie4_5_moe", 0}, {"dots1", {}}, {"phimoe", {}}, {"minimax", {}}, {"vaultgemma", 0},
        {"lfm2_vl", 0}, {"cohere2_vision", 0}, {"perception_lm", {}}, {"ovis2", {}},
        // Emu3's text_config's 206 (Emu3TextConfig's 151643 without it); RecurrentGemma's 0.
        {"chameleon", {}}, {"emu3", 206}, {"janus", {}}, {"fuyu", {}}, {"jetmoe", {}}, {"diffllama", {}},
        {"doge", {}}, {"recurrent_gemma", 0},
        // PLBartConfig's, MvpConfig's and NllbMoeConfig's 1.
        {"plbart", 1}, {"mvp", 1}, {"nllb_moe", 1},
        {"blenderbot", 0}, {"bigbird_pegasus", 0}, {"led", 1}, {"biogpt", 1}, {"xglm", 1},
        // FunnelConfig sets none.
        {"roberta_prelayernorm", 1}, {"ibert", 1}, {"convbert", 0}, {"funnel", {}},
        // XLMModel's and FlaubertModel's nn.Embedding take pad_index.
        {"xlm", 2}, {"flaubert", 2}, {"fsmt", 1}, {"trocr", 1}, {"trocr_printed", 1},
        // The vision-encoder-decoders' text decoders: MBart's pad_token_id, GPT-2's none.
        {"donut", 1}, {"vit_gpt2", std::nullopt},
        {"mllama", 174}, {"aya_vision", 0}, {"granite_vision", 0},
        // The two-tower models' text towers: CLIP's kin none; the BERT-like ones pad_token_id (their
        // text config classes' 0, RoBERTa-like 1); BLIP's and Kosmos-2's pad_token_id.
        {"owlvit", {}}, {"owlv2", {}}, {"xclip", {}}, {"groupvit", {}}, {"clipseg", {}}, {"chinese_clip", 0},
        {"chinese_clip_text_model", 2}, {"align", 0}, {"flava", 0}, {"altclip", 1}, {"clap", 1}, {"bridgetower", 1},
        {"blip", 0}, {"blip_captioning", 3}, {"kosmos2", 1},
        // BLIP-2's and InstructBLIP's language models: OPT's, T5's (none) and Llama's pad_token_id.
        {"blip2_opt", 1}, {"instructblip_t5", std::nullopt}, {"instructblip_vicuna", 0},
        {"longt5", std::nullopt}, {"switch_transformers", std::nullopt}, {"git", 0}, {"dpr", 0},
        {"xlnet", std::nullopt}, {"openai_gpt", std::nullopt}, {"speech_to_text", 1}};
    for (long f = 0; f < fixtures::all_families_count; ++f) {
        const fixtures::Family& family = *fixtures::all_families[f];
        INFO(family.name);
        const seqembed::io::Model model = seqembed::io::load_model(io_test::model_directory(family));
        REQUIRE(expected.count(family.name) == 1);
        const std::optional<seqembed::TokenId> want = expected.at(family.name);
        std::optional<seqembed::TokenId> token;
        std::optional<std::int64_t> positions;
        if (const auto* learned = model.learned()) {
            token = learned->pipeline.embedding().padding_idx();
            positions = learned->pipeline.positions().padding_idx();
            if (learned->decoder) CHECK(learned->decoder->embedding().padding_idx() == want);
        } else {
            token = model.lookup()->pipeline.embedding().padding_idx();
        }
        CHECK(token == want);
        // The position tables of RoBERTa's kin have padding_idx too (LongformerEmbeddings, ...).
        const std::string type = family.name;
        const bool from_ids = type == "roberta" || type == "mpnet" || type == "m2m_100" || type == "nllb_moe" ||
                              type == "longformer" || type == "roberta_prelayernorm" || type == "ibert" ||
                              type == "data2vec_text" || type == "xmod" || type == "xlm_roberta_xl" ||
                              type == "esm1b" || type == "fsmt" || type == "trocr_printed" || type == "altclip" ||
                              type == "clap" || type == "bridgetower" || type == "kosmos2" ||
                              type == "speech_to_text";
        CHECK(positions == (from_ids ? std::optional<std::int64_t>(1) : std::nullopt));
    }
}

TEST_CASE("CLIP's and SigLIP's text towers, Whisper's decoder, Mamba, LLaVA, SmolVLM, InternVL, Mllama and the "
          "audio models load with their config classes' defaults",
          "[io][models]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    // CLIPModel's text_config leaves max_position_embeddings out: CLIPTextConfig's 77.
    const seqembed::io::LearnedModelInput clip = seqembed::io::load_clip_text(root / "clip");
    CHECK(clip.config.model_type == "clip");
    CHECK(clip.config.vocab_size == 131);
    CHECK(clip.pipeline.positions().max_positions() == 77);
    CHECK(seqembed::io::load_clip_text(root / "siglip").pipeline.positions().max_positions() == 24);
    // A sequence past the table is refused, as CLIPTextEmbeddings refuses it.
    const seqembed::io::LearnedModelInput text_encoder = seqembed::io::load_clip_text(root / "clip_text_model");
    const seqembed::IdMatrix long_ids = seqembed::IdMatrix::Constant(1, 33, 5);
    const seqembed::IdMatrix full_ids = seqembed::IdMatrix::Constant(1, 32, 5);
    CHECK_THROWS_AS(text_encoder.pipeline.forward(long_ids), seqembed::error);
    CHECK(text_encoder.pipeline.forward(full_ids).rows() == 32);
    // Whisper's decoder after 5 decoded tokens reads rows 5, 6, 7 of embed_positions, unscaled.
    const seqembed::io::LearnedModelInput whisper = seqembed::io::load_whisper(root / "whisper");
    REQUIRE(whisper.decoder.has_value());
    CHECK(whisper.config.max_positions == 32);
    seqembed::IdMatrix ids(1, 3);
    ids << 138, 7, 139;
    const seqembed::Batch step(ids, seqembed::Padding::none(), seqembed::StepOffsets(5));
    const seqembed::RowMatrix<float> out = whisper.decoder->forward(step);
    for (Index t = 0; t < 3; ++t)
        for (Index c = 0; c < 16; ++c)
            CHECK(out(t, c) == whisper.decoder->embedding().table()(ids(0, t), c) +
                                   whisper.decoder->positions().table()(5 + t, c));
    // The config classes' defaults where a config says nothing.
    const auto read = [](const std::string& json) {
        const test_support::TempDir dir;
        std::ofstream(dir / "config.json") << json;
        return seqembed::io::ModelConfig::read(dir / "config.json");
    };
    const seqembed::io::ModelConfig bare_clip = read(R"({"model_type": "clip"})");
    CHECK((bare_clip.vocab_size == 49408 && bare_clip.hidden_size == 512 && bare_clip.max_positions == 77));
    const seqembed::io::ModelConfig siglip2 = read(R"({"model_type": "siglip2", "text_config": {"hidden_size": 32}})");
    CHECK((siglip2.vocab_size == 32000 && siglip2.hidden_size == 32 && siglip2.max_positions == 64));
    const seqembed::io::ModelConfig tiny = read(R"({"model_type": "whisper", "d_model": 384})");
    CHECK((tiny.vocab_size == 51865 && tiny.max_positions == 448 && tiny.embedding_padding_idx == 50256));
    const seqembed::io::ModelConfig mamba = read(R"({"model_type": "mamba", "hidden_size": 768})");
    CHECK((mamba.vocab_size == 50280 && mamba.max_positions == 0 && !mamba.embedding_padding_idx));
    CHECK(read(R"({"model_type": "mamba2", "hidden_size": 64})").vocab_size == 32768);
    // LLaVA's language model: text_config over its config class's defaults (llava-1.5's text_config
    // gives no hidden_size: LlamaConfig's 4096), of LlavaOnevisionConfig's Qwen2 without a model_type.
    const seqembed::io::ModelConfig llava = read(R"({"model_type": "llava", "text_config": {"model_type": "llama",
        "vocab_size": 32064, "max_position_embeddings": 4096}, "pad_token_id": 32001})");
    CHECK((llava.vocab_size == 32064 && llava.hidden_size == 4096 && llava.max_positions == 4096));
    CHECK(!llava.embedding_padding_idx);
    const seqembed::io::ModelConfig onevision = read(R"({"model_type": "llava_onevision", "text_config": {}})");
    CHECK((onevision.vocab_size == 151936 && onevision.max_positions == 32768));
    const seqembed::RotaryOptions llava_rope =
        seqembed::io::read_rotary_config(root / "llava_onevision" / "config.json");
    CHECK((llava_rope.base == 1000000.0 && llava_rope.head_dim == 8 && llava_rope.max_positions == 32768));
    // A language model without a preset under LLaVA is named, not read as Llama's; granite-vision's
    // Granite under LLaVA-NeXT keeps its embedding_multiplier.
    CHECK_THROWS_WITH(read(R"({"model_type": "llava", "text_config": {"model_type": "granite"}})"),
                      Catch::Contains("the language model of model_type 'llava' is 'granite'"));
    CHECK(read(R"({"model_type": "llava_next", "text_config": {"model_type": "granite", "embedding_multiplier": 12.0}})")
              .embedding_multiplier == 12.0);
    const seqembed::io::Model granite_vision = seqembed::io::load_model(root / "granite_vision");
    CHECK(granite_vision.lookup()->pipeline.embedding().scale() == 12.0f);
    // PaliGemma: Gemma's stage (GemmaConfig's defaults; PaliGemmaConfig's own text config without
    // text_config), its forward numbering from 1 for the rotary stage.
    const seqembed::io::ModelConfig paligemma = read(R"({"model_type": "paligemma", "vocab_size": 257216})");
    CHECK((paligemma.vocab_size == 257216 && paligemma.hidden_size == 2048 && paligemma.max_positions == 8192));
    CHECK(paligemma.embedding_padding_idx == std::optional<seqembed::TokenId>(0));
    CHECK(read(R"({"model_type": "paligemma", "text_config": {"model_type": "gemma2"}})").hidden_size == 2304);
    CHECK_THROWS_WITH(read(R"({"model_type": "paligemma", "text_config": {"model_type": "llama"}})"),
                      Catch::Contains("is 'llama', which has no preset under it (gemma, gemma2)"));
    const seqembed::io::Model pali = seqembed::io::load_model(root / "paligemma");
    seqembed::IdMatrix prompt(2, 3);
    prompt << 156, 156, 7, 0, 156, 9;
    seqembed::IdMatrix prompt_mask(2, 3);
    prompt_mask << 1, 1, 1, 0, 1, 1;
    seqembed::Batch padded(prompt);
    padded.padding = seqembed::Padding::from_mask(prompt_mask);
    const auto numbered = pali.positions(padded);
    CHECK(std::vector<std::int64_t>(numbered.begin(), numbered.end()) == std::vector<std::int64_t>{1, 2, 3, 1, 2, 3});
    const seqembed::RowMatrix<float> pali_rows = pali.forward(padded);
    CHECK(pali_rows(0, 0) == pali.lookup()->pipeline.embedding().table()(156, 0) * static_cast<float>(std::sqrt(12.0)));
    // Idefics3 and SmolVLM: LlamaConfig's defaults under text_config, their config classes'
    // pad_token_id 128002 without one; InternVL's Qwen3, GOT-OCR 2's own text config, Voxtral's
    // defaults over LlamaConfig's whatever text_config says.
    const seqembed::io::ModelConfig smolvlm = read(R"({"model_type": "smolvlm", "text_config": {"vocab_size": 49280,
        "hidden_size": 576, "num_attention_heads": 9, "rope_theta": 100000}})");
    CHECK((smolvlm.vocab_size == 49280 && smolvlm.max_positions == 2048 && !smolvlm.embedding_padding_idx));
    const seqembed::io::ModelConfig idefics3 = read(R"({"model_type": "idefics3", "vocab_size": 128259})");
    CHECK((idefics3.hidden_size == 4096 && idefics3.embedding_padding_idx == std::optional<seqembed::TokenId>(128002)));
    const seqembed::io::ModelConfig internvl = read(R"({"model_type": "internvl", "text_config": {"model_type": "qwen3",
        "hidden_size": 1024, "num_attention_heads": 16}})");
    CHECK((internvl.vocab_size == 151936 && internvl.hidden_size == 1024 && internvl.max_positions == 32768));
    CHECK(read(R"({"model_type": "got_ocr2"})").vocab_size == 151860);
    CHECK(read(R"({"model_type": "got_ocr2", "text_config": {}})").vocab_size == 151936);
    const seqembed::io::ModelConfig voxtral = read(R"({"model_type": "voxtral", "text_config": {"vocab_size": 131072}})");
    CHECK((voxtral.hidden_size == 3072 && voxtral.max_positions == 131072));
    const seqembed::RotaryOptions voxtral_rope = seqembed::io::read_rotary_config(root / "voxtral" / "config.json");
    CHECK((voxtral_rope.base == 1e8 && voxtral_rope.head_dim == 8 && voxtral_rope.max_positions == 64));
    const seqembed::RotaryOptions qwen3_rope = seqembed::io::read_rotary_config(root / "internvl" / "config.json");
    CHECK((qwen3_rope.base == 1000000.0 && qwen3_rope.head_dim == 8));
    CHECK_THROWS_WITH(read(R"({"model_type": "qwen2_audio", "text_config": {"model_type": "llama"}})"),
                      Catch::Contains("is 'llama', which has no preset under it (qwen2)"));
    CHECK_THROWS_WITH(read(R"({"model_type": "smolvlm", "text_config": {"model_type": "mistral"}})"),
                      Catch::Contains("is 'mistral', which has no preset under it (llama)"));
    // Idefics3's text model is the table under model.text_model., SmolVLM's bare model's under text_model.
    const seqembed::io::Model smol = seqembed::io::load_model(root / "idefics3");
    CHECK(smol.lookup()->pipeline.embedding().padding_idx() == std::optional<seqembed::TokenId>(2));
    CHECK(smol.lookup()->rotary->options().base == 100000.0);
    CHECK(seqembed::io::load_model(root / "smolvlm").lookup()->pipeline.embedding().table().rows() == 165);
    // Mllama (Llama 3.2 Vision): vocab_size + 8 rows, the image token's (vocab_size) a learned row
    // its forward reads; no positions in the cross-attention layers; MllamaTextConfig's defaults.
    const seqembed::io::Model mllama = seqembed::io::load_model(root / "mllama");
    CHECK(mllama.config().vocab_size == 183);
    seqembed::IdMatrix image_prompt(1, 3);
    image_prompt << 175, 3, 182;
    const seqembed::RowMatrix<float> image_rows = mllama.forward(seqembed::Batch(image_prompt));
    CHECK(image_rows.row(0) == mllama.lookup()->pipeline.embedding().table().row(175));
    const seqembed::io::ModelConfig bare_mllama = read(R"({"model_type": "mllama"})");
    CHECK((bare_mllama.vocab_size == 128264 && bare_mllama.hidden_size == 4096 &&
           bare_mllama.embedding_padding_idx == std::optional<seqembed::TokenId>(128004)));
    // load_model reads each of them with its loader.
    CHECK(seqembed::io::load_model(root / "siglip2_text_model").learned() != nullptr);
    CHECK(seqembed::io::load_model(root / "mamba2").lookup() != nullptr);
    CHECK(seqembed::io::load_model(root / "falcon_mamba").lookup()->rotary == std::nullopt);
}

TEST_CASE("The two-tower models' text towers take their text config classes' defaults, a legacy text_config_dict, "
          "BLIP's two towers their own tables, and BLIP-2's language model its family's stage",
          "[io][models]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    // OWL-ViT's detector: owlvit.text_model, OwlViTTextConfig's 16 positions; past them refused
    // (its module has no check: torch fails on the sum's shapes).
    const seqembed::io::LearnedModelInput owlvit = seqembed::io::load_clip_text(root / "owlvit");
    CHECK(owlvit.pipeline.positions().max_positions() == 16);
    const seqembed::IdMatrix past_table = seqembed::IdMatrix::Constant(1, 17, 5);
    CHECK_THROWS_AS(owlvit.pipeline.forward(past_table), seqembed::error);
    // X-CLIP: text_config_dict through XCLIPTextConfig (77 positions) wins over a stale text_config.
    const seqembed::io::LearnedModelInput xclip = seqembed::io::load_clip_text(root / "xclip");
    CHECK((xclip.config.vocab_size == 145 && xclip.config.hidden_size == 16));
    CHECK(xclip.pipeline.positions().max_positions() == 77);
    // ChineseCLIPTextConfig's and AltCLIPTextConfig's defaults under the fixtures' text_config.
    const seqembed::io::Model chinese = seqembed::io::load_model(root / "chinese_clip");
    CHECK((chinese.config().type_vocab_size == 2 && chinese.config().layer_norm_eps == 1e-12 &&
           chinese.config().max_positions == 512));
    const seqembed::io::Model altclip = seqembed::io::load_model(root / "altclip");
    CHECK((altclip.config().type_vocab_size == 1 && altclip.config().layer_norm_eps == 1e-5 &&
           altclip.config().pad_token_id == 1));
    REQUIRE(altclip.learned() != nullptr);
    CHECK(altclip.learned()->pipeline.positions().offset() == 2);

    // BLIP for question answering: the question's stage reads text_encoder's tables, the answer's
    // (`decoder`) text_decoder.bert's; the captioner has the decoder's alone, as both.
    const seqembed::io::LearnedModelInput vqa = seqembed::io::load_blip_text(root / "blip");
    REQUIRE(vqa.decoder.has_value());
    const seqembed::io::SafetensorsFile file = seqembed::io::SafetensorsFile::open(root / "blip" / "model.safetensors");
    const auto same = [](const seqembed::RowMatrix<float>& table, const seqembed::io::Tensor<float>& stored) {
        if (table.rows() != stored.shape()[0] || table.cols() != stored.shape()[1]) return false;
        return std::equal(table.data(), table.data() + table.size(), stored.data());
    };
    CHECK(same(vqa.pipeline.embedding().table(), file.matrix<float>("text_encoder.embeddings.word_embeddings.weight")));
    CHECK(same(vqa.decoder->embedding().table(),
               file.matrix<float>("text_decoder.bert.embeddings.word_embeddings.weight")));
    CHECK(same(vqa.decoder->positions().table(),
               file.matrix<float>("text_decoder.bert.embeddings.position_embeddings.weight")));
    CHECK(vqa.decoder->embedding().padding_idx() == 0);
    // The decoder numbers positions after the past: three tokens after four are the whole
    // sequence's last three rows.
    seqembed::IdMatrix whole(1, 7);
    whole << 153, 17, 29, 4, 88, 91, 12;
    const seqembed::IdMatrix last = whole.rightCols(3);
    const seqembed::RowMatrix<float> full = vqa.decoder->forward(whole);
    const seqembed::RowMatrix<float> step =
        vqa.decoder->forward(seqembed::Batch(last, seqembed::Padding::none(), seqembed::StepOffsets(4)));
    CHECK(step == full.bottomRows(3));
    const seqembed::io::LearnedModelInput captioner = seqembed::io::load_blip_text(root / "blip_captioning");
    REQUIRE(captioner.decoder.has_value());
    CHECK(captioner.pipeline.embedding().table() == captioner.decoder->embedding().table());
    CHECK(captioner.config.layer_norm_eps == 1e-5);

    // BLIP-2's OPT under language_model. (its Hub config's text_config without
    // max_position_embeddings nor pad_token_id: OPTConfig's 2048 rows and padding_idx 1). Where
    // the image's query tokens come before the ids (transformers 4.54 and before, configs without
    // image_token_index), the mask covers them as past tokens: the text's positions count them,
    // as OPT's cumsum over the joined mask does.
    const seqembed::io::Model blip2 = seqembed::io::load_model(root / "blip2_opt");
    CHECK((blip2.config().model_type == "opt" && blip2.config().tensor_prefix == "language_model."));
    CHECK((blip2.config().max_positions == 2048 && blip2.config().embedding_padding_idx == 1));
    REQUIRE(blip2.learned() != nullptr);
    seqembed::IdMatrix text(1, 3);
    text << 20, 21, 22;
    seqembed::Batch after_queries(text);
    const seqembed::IdMatrix queries_and_text = seqembed::IdMatrix::Ones(1, 7);
    after_queries.padding = seqembed::Padding::from_mask(queries_and_text);
    const seqembed::RowMatrix<float> joined = blip2.forward(after_queries);
    const seqembed::LearnedPositionalEmbedding<float>& opt_positions = blip2.learned()->pipeline.positions();
    for (Index t = 0; t < 3; ++t)
        for (Index c = 0; c < 16; ++c)
            CHECK(joined(t, c) == blip2.learned()->pipeline.embedding().table()(text(0, t), c) +
                                      opt_positions.table()(2 + 4 + t, c));
    CHECK(seqembed::io::load_model(root / "instructblip_vicuna").config().model_type == "llama");
    CHECK(seqembed::io::read_rotary_config(root / "instructblip_vicuna" / "config.json").head_dim == 8);

    // Kosmos-2's explicit position_ids are rows of its sinusoid (index_select), as RoBERTa's:
    // the rows its forward numbers from the ids give the same output.
    const seqembed::io::Model kosmos2 = seqembed::io::load_model(root / "kosmos2");
    seqembed::IdMatrix prompt(1, 4);
    prompt << 1, 40, 41, 42;  // a pad id first: row 1, the others rows 2, 3, 4
    seqembed::Batch numbered(prompt);
    seqembed::IdMatrix rows(1, 4);
    rows << 1, 2, 3, 4;
    seqembed::Batch given = numbered;
    given.position_ids = rows;
    CHECK(kosmos2.forward(given) == kosmos2.forward(numbered));
    // The towers without a cache refuse past tokens; BLIP's decoder takes them.
    seqembed::Batch stepped(prompt, seqembed::Padding::none(), seqembed::StepOffsets(2));
    for (const char* tower : {"owlvit", "xclip", "chinese_clip", "altclip", "clap", "bridgetower", "dpr"}) {
        INFO(tower);
        CHECK_THROWS_AS(seqembed::io::load_model(root / tower).forward(stepped), seqembed::value_error);
    }
    CHECK(seqembed::io::load_model(root / "blip_captioning").forward(stepped).rows() == 4);
    CHECK(kosmos2.forward(stepped).rows() == 4);
    for (const char* family : {"bridgetower", "dpr", "xlnet", "speech_to_text", "mamba"}) {
        INFO(family);
        CHECK(!seqembed::io::load_model(root / family).takes_position_ids());
    }
    // Speech2Text's decoder numbers its ids after the past: a step is the whole prefix's last rows.
    const seqembed::io::LearnedModelInput s2t = seqembed::io::load_speech2text(root / "speech_to_text");
    REQUIRE(s2t.decoder.has_value());
    seqembed::IdMatrix prefix(1, 6);
    prefix << 2, 30, 31, 32, 33, 34;
    const seqembed::IdMatrix tail = prefix.rightCols(2);
    CHECK(s2t.decoder->forward(seqembed::Batch(tail, seqembed::Padding::none(), seqembed::StepOffsets(4))) ==
          s2t.decoder->forward(prefix).bottomRows(2));

    const auto read = [](const std::string& json) {
        const test_support::TempDir dir;
        std::ofstream(dir / "config.json") << json;
        return seqembed::io::ModelConfig::read(dir / "config.json");
    };
    // Blip2Config's OPT (OPTConfig's defaults) where text_config names no model_type.
    const seqembed::io::ModelConfig bare_blip2 = read(R"({"model_type": "blip-2", "text_config": {"vocab_size": 100,
        "hidden_size": 32, "max_position_embeddings": 64}})");
    CHECK((bare_blip2.model_type == "opt" && bare_blip2.vocab_size == 100 && bare_blip2.max_positions == 64));
    const seqembed::io::ModelConfig default_opt = read(R"({"model_type": "blip-2"})");
    CHECK((default_opt.vocab_size == 50272 && default_opt.hidden_size == 768 && default_opt.max_positions == 2048));
    // InstructBLIP's Vicuna without max_position_embeddings (OPTConfig's and LlamaConfig's 2048).
    CHECK(read(R"({"model_type": "instructblip", "text_config": {"model_type": "llama", "vocab_size": 32001,
        "hidden_size": 64, "num_attention_heads": 4}})").max_positions == 2048);
    // XLNetConfig's n_token is its vocab_size.
    CHECK(read(R"({"model_type": "xlnet", "n_token": 32000, "d_model": 64})").vocab_size == 32000);
    CHECK(read(R"({"model_type": "xlnet", "n_token": 500, "d_model": 64})").vocab_size == 500);
    const seqembed::io::ModelConfig owl = read(R"({"model_type": "owlvit"})");
    CHECK((owl.vocab_size == 49408 && owl.hidden_size == 512 && owl.max_positions == 16));
    CHECK(read(R"({"model_type": "groupvit_text_model"})").hidden_size == 256);
    const seqembed::io::ModelConfig alt = read(R"({"model_type": "altclip"})");
    CHECK((alt.vocab_size == 250002 && alt.hidden_size == 1024 && alt.max_positions == 514 &&
           alt.type_vocab_size == 1));
    const seqembed::io::ModelConfig blip = read(R"({"model_type": "blip", "text_config": {}})");
    CHECK((blip.vocab_size == 30524 && blip.hidden_size == 768 && blip.max_positions == 512 &&
           blip.layer_norm_eps == 1e-12 && blip.embedding_padding_idx == 0));
    const seqembed::io::ModelConfig kosmos = read(R"({"model_type": "kosmos-2"})");
    CHECK((kosmos.vocab_size == 65037 && kosmos.hidden_size == 2048 && kosmos.max_positions == 2048 &&
           kosmos.embedding_padding_idx == 1 && kosmos.scale_embedding));
    CHECK(read(R"({"model_type": "kosmos_2_text_model", "embed_dim": 64})").hidden_size == 64);
    // AltCLIPConfig reads text_config_dict too; OWL-ViT's, CLAP's and BLIP's classes do not.
    CHECK(read(R"({"model_type": "altclip", "text_config_dict": {"hidden_size": 48}})").hidden_size == 48);
    for (const char* family : {"owlvit", "clap", "blip"}) {
        INFO(family);
        CHECK(read(std::string(R"({"model_type": ")") + family +
                   R"(", "text_config": {"hidden_size": 40}, "text_config_dict": {"hidden_size": 48}})")
                  .hidden_size == 40);
    }
    // Without text_config the text config class's defaults alone: FLAVA's own hidden_size is not
    // its text tower's.
    CHECK(read(R"({"model_type": "flava", "hidden_size": 32})").hidden_size == 768);
    CHECK(read(R"({"model_type": "kosmos-2", "text_config": {"layers": 3}})").num_hidden_layers == 3);
    // ChineseCLIPConfig: every key of the class built from text_config_dict wins, its defaults too.
    const seqembed::io::ModelConfig legacy = read(R"({"model_type": "chinese_clip", "text_config_dict":
        {"hidden_size": 32}, "text_config": {"hidden_size": 64, "vocab_size": 100}})");
    CHECK((legacy.hidden_size == 32 && legacy.vocab_size == 30522));
    const test_support::TempDir dir;
    std::ofstream(dir / "config.json") << R"({"model_type": "clip", "text_config_dict": [1]})";
    const std::string message =
        message_of<seqembed::error>([&] { (void)seqembed::io::ModelConfig::read(dir / "config.json"); });
    CHECK(message.find("'text_config_dict' is [1], not an object") != std::string::npos);
    std::ofstream(dir / "config.json") << R"({"model_type": "blip-2", "architectures":
        ["Blip2ForImageTextRetrieval"], "qformer_config": {"hidden_size": 4}})";
    CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::ModelConfig::read(dir / "config.json"); })
              .find("Blip2ForImageTextRetrieval has no language model") != std::string::npos);
    std::ofstream(dir / "config.json") << R"({"model_type": "instructblip", "text_config": {"model_type": 7}})";
    CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::ModelConfig::read(dir / "config.json"); })
              .find("has a 'model_type' of 7, not a string") != std::string::npos);
}

TEST_CASE("ModelConfig's embedding_padding_idx: pad_token_id, the config class's default, or none", "[io][models]") {
    const auto read = [](const std::string& json) {
        const test_support::TempDir dir;
        std::ofstream(dir / "config.json") << json;
        return seqembed::io::ModelConfig::read(dir / "config.json");
    };
    const std::string bert = R"("model_type": "bert", "vocab_size": 30, "hidden_size": 8, "max_position_embeddings": 16,
                                "type_vocab_size": 2)";
    CHECK(read("{" + bert + "}").embedding_padding_idx == std::optional<seqembed::TokenId>(0));  // BertConfig's default
    CHECK(read("{" + bert + R"(, "pad_token_id": 3})").embedding_padding_idx == std::optional<seqembed::TokenId>(3));
    CHECK(!read("{" + bert + R"(, "pad_token_id": null})").embedding_padding_idx);
    CHECK(read("{" + bert + R"(, "pad_token_id": -1})").embedding_padding_idx == std::optional<seqembed::TokenId>(-1));
    CHECK_THROWS_WITH(read("{" + bert + R"(, "pad_token_id": 30})"),
                      Catch::Contains("'pad_token_id' is 30, outside the token table's rows [-30, 30)"));
    const std::string llama = R"("model_type": "llama", "vocab_size": 30, "hidden_size": 8, "max_position_embeddings": 16,
                                 "num_attention_heads": 2)";
    CHECK(!read("{" + llama + "}").embedding_padding_idx);
    CHECK(read("{" + llama + R"(, "pad_token_id": 2})").embedding_padding_idx == std::optional<seqembed::TokenId>(2));
    const std::string phi3 = R"("model_type": "phi3", "vocab_size": 32064, "hidden_size": 8, "max_position_embeddings": 16,
                                "num_attention_heads": 2)";
    CHECK(read("{" + phi3 + "}").embedding_padding_idx == std::optional<seqembed::TokenId>(32000));  // Phi3Config's
    const std::string gpt2 = R"("model_type": "gpt2", "vocab_size": 30, "n_embd": 8, "n_positions": 16)";
    CHECK(!read("{" + gpt2 + R"(, "pad_token_id": 2})").embedding_padding_idx);
    // The config classes' defaults of the families added in 0.3, and MPNet's fixed 1.
    const auto decoder = [](const std::string& type) {
        return R"("model_type": ")" + type + R"(", "vocab_size": 30, "hidden_size": 8, "max_position_embeddings": 16,
                                            "num_attention_heads": 2)";
    };
    CHECK(read("{" + decoder("olmo") + "}").embedding_padding_idx == std::optional<seqembed::TokenId>(1));
    CHECK(read("{" + decoder("olmo2") + "}").embedding_padding_idx == std::optional<seqembed::TokenId>(1));
    CHECK(read("{" + decoder("gemma2") + "}").embedding_padding_idx == std::optional<seqembed::TokenId>(0));
    CHECK(!read("{" + decoder("qwen2_moe") + "}").embedding_padding_idx);
    CHECK(!read("{" + decoder("qwen3") + "}").embedding_padding_idx);
    CHECK(read("{" + decoder("qwen3") + R"(, "pad_token_id": 5})").embedding_padding_idx ==
          std::optional<seqembed::TokenId>(5));
    const std::string mpnet = R"("model_type": "mpnet", "vocab_size": 30, "hidden_size": 8, "max_position_embeddings": 16)";
    CHECK(read("{" + mpnet + R"(, "pad_token_id": 3})").embedding_padding_idx == std::optional<seqembed::TokenId>(1));
    const std::string distilbert = R"("model_type": "distilbert", "vocab_size": 30, "dim": 8, "max_position_embeddings": 16,
                                      "layer_norm_eps": 0.5)";
    CHECK(read("{" + distilbert + "}").embedding_padding_idx == std::optional<seqembed::TokenId>(0));
    CHECK(read("{" + distilbert + "}").hidden_size == 8);
    CHECK(read("{" + distilbert + "}").layer_norm_eps == 1e-12);  // fixed in the module, not the config's
}

TEST_CASE("Gemma 3 has a local rotary stage, and its multimodal config's text_config takes Gemma3TextConfig's defaults",
          "[io][models][rotary]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    for (const char* name : {"gemma3_text", "gemma3"}) {
        INFO(name);
        const seqembed::io::Model model = seqembed::io::load_model(root / name);
        REQUIRE(model.rotary() != nullptr);
        REQUIRE(model.local_rotary() != nullptr);
        // Global: rope_theta 1e6 (given, or Gemma3TextConfig's default) with the linear rule;
        // local: rope_local_base_freq 10000 without a rule, as Gemma3TextModel's rotary_emb_local.
        CHECK(model.rotary()->options().base == 1000000.0);
        CHECK(model.rotary()->options().scaling == seqembed::RotaryScaling::linear);
        CHECK(model.local_rotary()->options().base == 10000.0);
        CHECK(model.local_rotary()->options().scaling == seqembed::RotaryScaling::none);
        seqembed::RotaryOptions local;
        local.head_dim = 16;
        local.base = 10000.0;
        local.max_positions = 64;
        CHECK(model.local_rotary()->inverse_frequencies() == seqembed::RotaryEmbedding<float>(local).inverse_frequencies());
        CHECK(model.local_rotary()->head_dim() == 16);
        CHECK(model.config().embedding_padding_idx == std::optional<seqembed::TokenId>(0));
    }
    CHECK(seqembed::io::load_model(root / "gemma2").local_rotary() == nullptr);
    // ModernBERT: global_rope_theta and local_rope_theta.
    const seqembed::io::Model modernbert = seqembed::io::load_model(root / "modernbert");
    REQUIRE(modernbert.local_rotary() != nullptr);
    CHECK(modernbert.rotary()->options().base == 160000.0);
    CHECK(modernbert.local_rotary()->options().base == 10000.0);
    CHECK(modernbert.local_rotary()->head_dim() == 8);
    CHECK(!modernbert.takes_token_types());
    CHECK(modernbert.config().layer_norm_eps == 1e-5);
    CHECK(!modernbert.config().layer_norm_bias);

    const auto read = [](const std::string& json) {
        const test_support::TempDir dir;
        std::ofstream(dir / "config.json") << json;
        return seqembed::io::ModelConfig::read(dir / "config.json");
    };
    // gemma-3-4b-it's text_config names neither vocab_size nor max_position_embeddings.
    const seqembed::io::ModelConfig multimodal =
        read(R"({"model_type": "gemma3", "text_config": {"hidden_size": 2560, "num_hidden_layers": 34}})");
    CHECK(multimodal.vocab_size == 262208);
    CHECK(multimodal.hidden_size == 2560);
    CHECK(multimodal.max_positions == 131072);
    CHECK(multimodal.model_type == "gemma3");
    CHECK_THROWS_WITH(read(R"({"model_type": "gemma3", "vision_config": {}})"), Catch::Contains("has no 'text_config'"));
    // transformers 5's rope_parameters by layer type.
    const test_support::TempDir dir;
    {
        std::ifstream in(root / "gemma3_text" / "config.json");
        nlohmann::json json = nlohmann::json::parse(in);
        json.erase("rope_theta");
        json.erase("rope_scaling");
        json.erase("rope_local_base_freq");
        json["rope_parameters"] = {{"full_attention", {{"rope_type", "linear"}, {"factor", 2.0}, {"rope_theta", 5e5}}},
                                   {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 20000.0}}}};
        std::ofstream(dir / "config.json") << json.dump();
        std::filesystem::copy_file(root / "gemma3_text" / "model.safetensors", dir / "model.safetensors");
    }
    const seqembed::io::Model v5 = seqembed::io::load_model(dir.path());
    CHECK(v5.rotary()->options().base == 5e5);
    CHECK(v5.rotary()->options().factor == 2.0);
    CHECK(v5.local_rotary()->options().base == 20000.0);
    CHECK(v5.local_rotary()->options().scaling == seqembed::RotaryScaling::none);

    // Each layer's base from its own key when rope_parameters' entries have none (sub-configs are
    // saved as differences from the class's defaults), a missing entry the default rule; and
    // 4.x's keys at values other than the defaults, so that a default cannot pass for them.
    const auto rewrite = [&](const std::string& model, const std::function<void(nlohmann::json&)>& change) {
        std::ifstream in(root / model / "config.json");
        nlohmann::json json = nlohmann::json::parse(in);
        change(json);
        std::ofstream(dir / "config.json") << json.dump();
        std::filesystem::copy_file(root / model / "model.safetensors", dir / "model.safetensors",
                                   std::filesystem::copy_options::overwrite_existing);
        return seqembed::io::load_model(dir.path());
    };
    const seqembed::io::Model diffed = rewrite("gemma3_text", [](nlohmann::json& json) {
        json["rope_theta"] = 3e5;
        json["rope_local_base_freq"] = 12345.0;
        json.erase("rope_scaling");
        json["rope_parameters"] = {{"full_attention", {{"rope_type", "linear"}, {"factor", 8.0}}}};
    });
    CHECK(diffed.rotary()->options().base == 3e5);
    CHECK(diffed.rotary()->options().factor == 8.0);
    CHECK(diffed.local_rotary()->options().base == 12345.0);
    CHECK(diffed.local_rotary()->options().scaling == seqembed::RotaryScaling::none);
    const seqembed::io::Model legacy = rewrite("gemma3_text", [](nlohmann::json& json) {
        json["rope_local_base_freq"] = 12345.0;
    });
    CHECK(legacy.local_rotary()->options().base == 12345.0);
    CHECK(legacy.rotary()->options().scaling == seqembed::RotaryScaling::linear);
    const seqembed::io::Model modern = rewrite("modernbert", [](nlohmann::json& json) {
        json["global_rope_theta"] = 80000.0;
        json["local_rope_theta"] = 20000.0;
    });
    CHECK(modern.rotary()->options().base == 80000.0);
    CHECK(modern.local_rotary()->options().base == 20000.0);
    // ModernBERT's local layers take global_rope_theta when local_rope_theta is null.
    const seqembed::io::Model local_null = rewrite("modernbert", [](nlohmann::json& json) {
        json["global_rope_theta"] = 80000.0;
        json["local_rope_theta"] = nullptr;
    });
    CHECK(local_null.local_rotary()->options().base == 80000.0);
    const seqembed::io::Model modern_v5 = rewrite("modernbert", [](nlohmann::json& json) {
        json["global_rope_theta"] = 80000.0;
        json["local_rope_theta"] = 20000.0;
        json["rope_parameters"] = {{"full_attention", {{"rope_type", "default"}}},
                                   {"sliding_attention", {{"rope_type", "default"}}}};
    });
    CHECK(modern_v5.rotary()->options().base == 80000.0);
    CHECK(modern_v5.local_rotary()->options().base == 20000.0);

    // ModernBertConfig's defaults: pad_token_id 50283, no LayerNorm bias unless norm_bias.
    const std::string modernbert_config = R"("model_type": "modernbert", "vocab_size": 50368, "hidden_size": 8,
                                     "max_position_embeddings": 16, "num_attention_heads": 2)";
    CHECK(read("{" + modernbert_config + "}").embedding_padding_idx == std::optional<seqembed::TokenId>(50283));
    CHECK(!read("{" + modernbert_config + "}").layer_norm_bias);
    CHECK(read("{" + modernbert_config + "}").layer_norm_eps == 1e-5);
    CHECK(read("{" + modernbert_config + R"(, "norm_bias": true, "norm_eps": 1e-6})").layer_norm_bias);
    CHECK_THROWS_WITH(read("{" + modernbert_config + R"(, "norm_bias": "no"})"), Catch::Contains("'norm_bias' is \"no\""));
}

TEST_CASE("Granite's embedding_multiplier scales its token rows and a bad one is refused by name", "[io][models]") {
    const auto read = [](const std::string& json) {
        const test_support::TempDir dir;
        std::ofstream(dir / "config.json") << json;
        return seqembed::io::ModelConfig::read(dir / "config.json");
    };
    const std::string granite = R"("model_type": "granite", "vocab_size": 30, "hidden_size": 8,
                                   "max_position_embeddings": 16, "num_attention_heads": 2)";
    CHECK(read("{" + granite + "}").embedding_multiplier == 1.0);  // GraniteConfig's default
    CHECK(read("{" + granite + R"(, "embedding_multiplier": 12.0})").embedding_multiplier == 12.0);
    CHECK_THROWS_WITH(read("{" + granite + R"(, "embedding_multiplier": "12"})"),
                      Catch::Contains("'embedding_multiplier' is \"12\", not a finite number"));
    // Only Granite's forward multiplies by it.
    CHECK(read(R"({"model_type": "llama", "vocab_size": 30, "hidden_size": 8, "max_position_embeddings": 16,
                   "num_attention_heads": 2, "embedding_multiplier": 12.0})")
              .embedding_multiplier == 1.0);
}

TEST_CASE("DistilBERT takes no position ids and MPNet's are rows of its table, as RoBERTa's", "[io][models]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    const seqembed::io::Model distilbert = seqembed::io::load_model(root / "distilbert");
    CHECK(!distilbert.takes_position_ids());
    CHECK(!distilbert.takes_token_types());
    seqembed::IdMatrix ids(1, 3);
    ids << 5, 6, 7;
    seqembed::Batch batch(ids);
    const seqembed::IdMatrix position_ids = (seqembed::IdMatrix(1, 3) << 4, 3, 2).finished();
    batch.position_ids = position_ids;
    CHECK_THROWS_WITH(distilbert.forward(batch), Catch::Contains("takes no position ids"));

    const seqembed::io::Model mpnet = seqembed::io::load_model(root / "mpnet");
    REQUIRE(mpnet.takes_position_ids());
    const RowMatrix<float> given = mpnet.forward(batch);  // rows 4, 3, 2 of the position table
    seqembed::IdMatrix same(1, 3);
    same << 5, 6, 7;
    const RowMatrix<float> counted = mpnet.forward(seqembed::Batch(same));  // rows 2, 3, 4
    CHECK(given.row(1) == counted.row(1));
    CHECK(given.row(0) != counted.row(0));
    CHECK(mpnet.positions(batch) == (seqembed::io::Model::PositionVector(3) << 2, 1, 0).finished());

    // None of DistilBERT's, ALBERT's and MPNet's forwards takes a cache: past tokens are refused.
    seqembed::Batch past(same);
    past.offsets = seqembed::StepOffsets(4);
    for (const char* name : {"distilbert", "albert", "mpnet", "modernbert"}) {
        INFO(name);
        const seqembed::io::Model model = seqembed::io::load_model(root / name);
        CHECK_THROWS_WITH(model.forward(past), Catch::Contains("takes no past tokens"));
        CHECK_THROWS_WITH(model.positions(past), Catch::Contains("takes no past tokens"));
    }
    const seqembed::IdMatrix wide = (seqembed::IdMatrix(1, 5) << 1, 1, 1, 1, 1).finished();
    seqembed::Batch masked(same);
    masked.padding = seqembed::Padding::from_mask(wide);
    CHECK_THROWS_WITH(mpnet.forward(masked), Catch::Contains("takes no past tokens"));
    CHECK_NOTHROW(seqembed::io::load_model(root / "bert").forward(past));  // BertModel takes a cache
}

TEST_CASE("ELECTRA's embedding_size defaults to ElectraConfig's 128", "[io][models]") {
    const test_support::TempDir dir;
    std::ofstream(dir / "config.json") << R"({"model_type": "electra", "vocab_size": 30, "hidden_size": 256,
        "max_position_embeddings": 16, "type_vocab_size": 2})";
    CHECK(seqembed::io::ModelConfig::read(dir / "config.json").embedding_size == 128);
}

TEST_CASE("A RoBERTa checkpoint trains neither table's padding_idx row, with padded rows computed", "[io][models][backward]") {
    seqembed::PipelineOptions options;
    options.padded_rows = seqembed::PaddedRows::computed;
    const seqembed::io::LearnedModelInput stage =
        seqembed::io::load_roberta(std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models/roberta", options);
    seqembed::IdMatrix ids(2, 5);
    ids << 0, 7, 9, 1, 1,  //
        1, 0, 4, 1, 2;
    const seqembed::Batch batch(ids);
    const Index width = stage.pipeline.d_model();
    const seqembed::PipelineGradients<float> grads =
        stage.pipeline.backward(batch, seqembed::RowMatrix<float>::Ones(ids.size(), width));
    CHECK(grads.token.rows == std::vector<std::int64_t>{0, 2, 4, 7, 9});
    // Real tokens read rows 2, 3, 4 (after the pad inside the second sequence: 2, 3, 4 again).
    CHECK(grads.positions.rows == std::vector<std::int64_t>{2, 3, 4});
}

TEST_CASE("BART's and T5's encoder and decoder, tied, train one copy of the checkpoint's shared table",
          "[io][models][backward]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    const auto check = [](auto stage, auto fresh) {
        REQUIRE(stage.decoder);
        // Loaded, the two stages read one table, a view of the checkpoint's mapping.
        REQUIRE(stage.decoder->embedding().table().data() == stage.pipeline.embedding().table().data());
        seqembed::IdMatrix ids(1, 3);
        ids << 4, 5, 6;
        const seqembed::Batch batch(ids);
        const RowMatrix<float> before = stage.decoder->forward(batch);

        stage.decoder->tie_token_table(stage.pipeline);
        CHECK(stage.decoder->embedding().table().data() == stage.pipeline.embedding().table().data());
        seqembed::PipelineTables<float> tables = stage.pipeline.trainable();
        CHECK(!tables.token->copied);  // copied once, by the tie
        const seqembed::PipelineGradients<float> grads =
            stage.decoder->backward(batch, RowMatrix<float>::Ones(ids.size(), stage.decoder->d_model()));
        REQUIRE(grads.token.rows == std::vector<std::int64_t>{4, 5, 6});
        for (std::size_t k = 0; k < grads.token.rows.size(); ++k)
            tables.token->weights.row(grads.token.rows[k]) -= 0.5f * grads.token.values.row(static_cast<Index>(k));
        // The decoder reads the step taken through the encoder; the checkpoint is unchanged.
        CHECK(stage.decoder->forward(batch) != before);
        CHECK(stage.decoder->embedding().table().row(5) == stage.pipeline.embedding().table().row(5));
        CHECK(fresh().decoder->forward(batch) == before);
    };
    check(seqembed::io::load_bart(root / "parity/bart"), [&] { return seqembed::io::load_bart(root / "parity/bart"); });
    check(seqembed::io::load_t5(root / "t5"), [&] { return seqembed::io::load_t5(root / "t5"); });
}

TEST_CASE("GPT-J, CodeGen and Cohere rotate interleaved pairs, Falcon takes FalconConfig's defaults, ALiBi Falcon has no rotary stage",
          "[io][models][rotary]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    for (const char* family : {"gptj", "codegen", "cohere"}) {
        INFO(family);
        const seqembed::io::Model model = seqembed::io::load_model(root / family);
        REQUIRE(model.rotary() != nullptr);
        CHECK(model.rotary()->options().layout == seqembed::RotaryLayout::interleaved);
    }
    const seqembed::io::Model falcon = seqembed::io::load_model(root / "falcon");
    REQUIRE(falcon.rotary() != nullptr);
    CHECK(falcon.rotary()->options().layout == seqembed::RotaryLayout::halves);
    CHECK(falcon.rotary()->max_positions() == 2048);  // no max_position_embeddings in its config.json
    CHECK(falcon.rotary()->options().base == 10000.0);
    CHECK(seqembed::io::load_model(root / "cohere").rotary()->options().base == 40000.0);
    CHECK(seqembed::io::load_model(root / "gptj").rotary()->rotary_dim() == 4);
    // GPT-J and CodeGen add wte(token_type_ids) after the token rows, as GPT-2.
    for (const char* family : {"gptj", "codegen"}) {
        INFO(family);
        const seqembed::io::Model model = seqembed::io::load_model(root / family);
        CHECK(model.takes_token_types());
        seqembed::IdMatrix ids(1, 2);
        ids << 3, 4;
        seqembed::IdMatrix types(1, 2);
        types << 7, 0;
        seqembed::Batch typed(ids);
        typed.token_types = types;
        const RowMatrix<float> with = model.forward(typed);
        const auto wte = model.lookup()->pipeline.embedding().table();
        CHECK(with.row(0) == RowMatrix<float>(wte.row(3) + wte.row(7)).row(0));
        CHECK(with.row(1) == RowMatrix<float>(wte.row(4) + wte.row(0)).row(0));
    }

    const BrokenCopy copy("falcon");
    // falcon-rw-1b: ALiBi in attention, no rotary stage; the RefinedWeb key n_embed still read.
    copy.write_config(R"({"model_type": "falcon", "vocab_size": 81, "n_embed": 16, "num_attention_heads": 2,
                          "alibi": true})");
    const seqembed::io::Model alibi = seqembed::io::load_model(copy.directory);
    CHECK(alibi.rotary() == nullptr);
    REQUIRE(alibi.alibi() != nullptr);  // BLOOM's slopes in bfloat16 (Falcon's build_alibi_tensor)
    CHECK(alibi.alibi()->options().family == seqembed::AlibiFamily::falcon);
    CHECK(alibi.alibi()->heads() == 2);
    CHECK(falcon.alibi() == nullptr);
    CHECK(alibi.config().hidden_size == 16);
    copy.write_config(R"({"model_type": "falcon", "vocab_size": 81, "hidden_size": 16, "num_attention_heads": 2,
                          "alibi": "yes"})");
    CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(copy.directory); })
              .find("'alibi' is \"yes\", not a boolean") != std::string::npos);
    // Cohere without rope_theta: CohereConfig's default in transformers 5.
    const BrokenCopy cohere("cohere");
    cohere.write_config(R"({"model_type": "cohere", "vocab_size": 83, "hidden_size": 16, "num_attention_heads": 2,
                            "max_position_embeddings": 64})");
    CHECK(seqembed::io::load_model(cohere.directory).rotary()->options().base == 500000.0);
}

TEST_CASE("DeBERTa's stage follows position_biased_input, and its padded rows are zero even when computed rows are asked",
          "[io][models]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    seqembed::PipelineOptions computed;
    computed.padded_rows = seqembed::PaddedRows::computed;
    const seqembed::io::Model v3 = seqembed::io::load_model(root / "deberta_v2", computed);
    REQUIRE(v3.lookup() != nullptr);  // position_biased_input false: no table
    CHECK(v3.lookup()->pipeline.token_types() == nullptr);
    CHECK(v3.lookup()->pipeline.padded_rows() == seqembed::PaddedRows::zero);
    {
        // DebertaV2Tokenizer gives token_type_ids; without a type table the module adds nothing.
        CHECK(v3.takes_token_types());
        seqembed::IdMatrix ids(1, 2);
        ids << 5, 6;
        seqembed::IdMatrix types(1, 2);
        types << 0, 1;
        seqembed::Batch typed(ids);
        typed.token_types = types;
        CHECK(v3.forward(typed) == v3.forward(seqembed::Batch(ids)));
    }
    const seqembed::io::Model v1 = seqembed::io::load_model(root / "deberta", computed);
    REQUIRE(v1.learned() != nullptr);
    CHECK(v1.learned()->pipeline.token_types() != nullptr);
    CHECK(v1.config().layer_norm_eps == 1e-7);
    seqembed::IdMatrix ids(1, 3);
    ids << 5, 6, 0;
    seqembed::IdMatrix mask(1, 3);
    mask << 1, 1, 0;
    const RowMatrix<float> rows = v1.forward(seqembed::Batch(ids, seqembed::Padding::from_mask(mask), 0));
    CHECK(rows.row(2).isZero(0.0));
    CHECK(!rows.row(1).isZero(0.0));
    seqembed::IdMatrix wider(1, 5);
    wider << 1, 1, 5, 6, 0;
    CHECK_THROWS_WITH(v1.forward(seqembed::Batch(ids, seqembed::Padding::from_mask(wider), 0)),
                      Catch::Contains("model_type 'deberta' takes no past tokens"));

    const BrokenCopy copy("deberta_v2");
    copy.write_config(R"({"model_type": "deberta-v2", "vocab_size": 84, "hidden_size": 16, "embedding_size": 8,
                          "position_biased_input": false, "type_vocab_size": 0})");
    CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(copy.directory); })
              .find("'embedding_size' 8 differs from 'hidden_size' 16") != std::string::npos);
    copy.write_config(R"({"model_type": "deberta-v2", "vocab_size": 84, "hidden_size": 16,
                          "position_biased_input": 0})");
    CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(copy.directory); })
              .find("'position_biased_input' is 0, not a boolean") != std::string::npos);
    // DebertaV2Config's defaults: positions added (512 rows), none here in the checkpoint.
    copy.write_config(R"({"model_type": "deberta-v2", "vocab_size": 84, "hidden_size": 16})");
    CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(copy.directory); })
              .find("position_embeddings") != std::string::npos);
}

TEST_CASE("NLLB's (M2M100's) pad ids read a zero position row, in the encoder and after the decoder's past",
          "[io][models]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    seqembed::PipelineOptions computed;
    computed.padded_rows = seqembed::PaddedRows::computed;
    const seqembed::io::Model model = seqembed::io::load_model(root / "m2m_100", computed);
    REQUIRE(model.has_decoder());
    CHECK(model.config().scale_embedding);  // M2M100Config's default; the fixture says so too
    const seqembed::io::LearnedModelInput& stage = *model.learned();
    const float scale = stage.pipeline.embedding().scale();
    CHECK(scale == static_cast<float>(std::sqrt(12.0)));
    // Row 1 (pad_token_id) of the position table is zero; real tokens count from row 2.
    CHECK(stage.pipeline.positions().table().row(1).isZero(0.0));
    seqembed::IdMatrix ids(1, 4);
    ids << 5, 1, 7, 1;  // pad ids inside and at the end, every row computed
    const RowMatrix<float> rows = model.forward(seqembed::Batch(ids));
    const auto word = [&](Index id) { return RowMatrix<float>(stage.pipeline.embedding().table().row(id) * scale); };
    const auto position = [&](Index row) { return RowMatrix<float>(stage.pipeline.positions().table().row(row)); };
    CHECK(rows.row(1) == word(1).row(0));
    CHECK(rows.row(3) == word(1).row(0));
    CHECK(rows.row(0) == (word(5) + position(2)).row(0));
    CHECK(rows.row(2) == (word(7) + position(3)).row(0));
    // The decoder after 3 past tokens: its first real token reads row 1 + 3 + 1.
    seqembed::IdMatrix next(1, 1);
    next << 9;
    const RowMatrix<float> step = model.forward_decoder(seqembed::Batch(next, seqembed::Padding::none(), 3));
    CHECK(step.row(0) == (word(9) + position(5)).row(0));
    // The encoder takes no past; the table's last row serves position 31.
    CHECK_THROWS_WITH(model.forward(seqembed::Batch(ids, seqembed::Padding::none(), 2)),
                      Catch::Contains("takes no past tokens"));
    seqembed::IdMatrix longest(1, 33);
    longest.setConstant(5);
    CHECK_THROWS_AS(model.forward(seqembed::Batch(longest)), seqembed::index_error);

    const BrokenCopy copy("m2m_100");
    copy.write_config(R"({"model_type": "m2m_100", "vocab_size": 86, "d_model": 12, "max_position_embeddings": 32,
                          "pad_token_id": null})");
    CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(copy.directory); })
              .find("'pad_token_id' is null, which M2M100's positions need") != std::string::npos);
}

TEST_CASE("BLOOM and MPT carry their ALiBi bias: BLOOM's and MPT's slopes for the config's heads", "[io][models]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    const seqembed::io::Model bloom = seqembed::io::load_model(root / "bloom");
    REQUIRE(bloom.alibi() != nullptr);
    CHECK(bloom.rotary() == nullptr);
    CHECK(bloom.alibi()->heads() == 3);  // n_head
    CHECK(bloom.alibi()->options().family == seqembed::AlibiFamily::bloom);
    CHECK(bloom.alibi()->slopes() == seqembed::AlibiBias<float>(3, seqembed::AlibiOptions::bloom()).slopes());
    CHECK(bloom.config().layer_norm_eps == 1e-5);
    CHECK_FALSE(bloom.takes_position_ids());
    const seqembed::io::Model mpt = seqembed::io::load_model(root / "mpt");
    REQUIRE(mpt.alibi() != nullptr);
    CHECK(mpt.alibi()->heads() == 3);  // n_heads
    CHECK(mpt.alibi()->options().family == seqembed::AlibiFamily::mpt);
    CHECK(mpt.alibi()->options().alibi_bias_max == 8.0);
    CHECK(mpt.alibi()->slopes() == seqembed::AlibiBias<float>(3, seqembed::AlibiOptions::mpt(8.0)).slopes());
    CHECK(seqembed::io::load_model(root / "llama").alibi() == nullptr);
    {
        // BloomConfig reads bigscience's n_embed before hidden_size.
        const BrokenCopy copy("bloom");
        copy.write_config(R"({"model_type": "bloom", "vocab_size": 87, "hidden_size": 8, "n_embed": 16,
                              "n_head": 3})");
        CHECK(seqembed::io::load_model(copy.directory).config().hidden_size == 16);
    }
    // MPT's bias ignores the padding; BLOOM's numbers the keys by the real tokens before them.
    seqembed::IdMatrix ids(1, 3);
    ids << 0, 5, 6;
    seqembed::IdMatrix mask(1, 3);
    mask << 0, 1, 1;
    const RowMatrix<float> bias = bloom.alibi()->forward(ids, seqembed::Padding::from_mask(mask));
    CHECK(bias(0, 1) == 0.0f);
    CHECK(bias(0, 2) == bloom.alibi()->slopes()(0));
}

TEST_CASE("Checkpoints saved under each family's other names (base classes without the prefix, one alias of a shared table) load the same",
          "[io][models]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    // The fixture's names mapped to another layout's (empty: left out).
    using Rename = std::function<std::string(const std::string&)>;
    const auto strip = [](const std::string& prefix) -> Rename {
        return [prefix](const std::string& name) {
            return name.compare(0, prefix.size(), prefix) == 0 ? name.substr(prefix.size()) : name;
        };
    };
    const auto moved = [](const std::string& from, const std::string& to) -> Rename {
        return [from, to](const std::string& name) {
            return name.compare(0, from.size(), from) == 0 ? to + name.substr(from.size()) : name;
        };
    };
    const std::vector<std::pair<const char*, Rename>> layouts = {
        {"dbrx", strip("transformer.")},  // DbrxModel
        {"longformer", strip("longformer.")},  // LongformerModel
        {"xlm_roberta_xl", strip("roberta.")},
        {"rembert", strip("rembert.")},  // RemBertModel: embeddings. and encoder.embedding_hidden_mapping_in.
        {"roformer", strip("roformer.")},
        // Nomic's BERT: nomic-bert-2048's NomicBertForPreTraining, fine-tunes saved under model.
        {"nomic_bert", [](const std::string& name) { return "bert." + name; }},
        {"nomic_bert", [](const std::string& name) { return "model." + name; }},
        {"nystromformer", strip("nystromformer.")},
        {"ernie", strip("ernie.")},
        // Multimodal checkpoints before and after transformers 4.52's layout.
        {"qwen2_5_vl", moved("model.", "model.language_model.")},
        {"qwen3_vl", moved("model.language_model.", "model.")},
        {"mistral3", moved("language_model.model.", "model.language_model.")},
        {"llama4", moved("language_model.model.", "model.language_model.")},
        {"gpt_oss", strip("model.")},  // GptOssModel
        {"deberta_v2", strip("deberta.")},  // DebertaV2Model
        {"deberta", strip("deberta.")},
        {"gpt_neo", strip("transformer.")},  // GPTNeoModel
        {"gpt_bigcode", strip("transformer.")},
        {"gptj", strip("transformer.")},
        {"codegen", strip("transformer.")},
        {"falcon", strip("transformer.")},  // FalconModel
        {"cohere", strip("model.")},        // CohereModel
        {"mpt", strip("transformer.")},
        {"bloom", [](const std::string& name) { return "transformer." + name; }},  // BloomForCausalLM
        {"mbart", strip("model.")},         // MBartModel
        {"pegasus", strip("model.")},
        {"m2m_100", strip("model.")},
        {"mt5", [](const std::string& name) { return name == "encoder.embed_tokens.weight" ? "" : name; }},
        {"umt5", [](const std::string& name) { return name == "shared.weight" ? "" : name; }},
    };
    seqembed::IdMatrix ids(2, 3);
    ids << 3, 4, 5,  //
        6, 7, 8;
    for (const auto& [family, rename] : layouts) {
        INFO(family);
        const auto source = root / family;
        const seqembed::io::SafetensorsFile file = seqembed::io::SafetensorsFile::open(source / "model.safetensors");
        std::vector<seqembed::io::NamedTensor> renamed;
        for (const auto& info : file.tensors()) {
            const std::string name = rename(info.name);
            if (!name.empty()) renamed.emplace_back(name, file.tensor<float>(info.name));
        }
        REQUIRE(!renamed.empty());
        test_support::TempDir dir;
        std::filesystem::copy(source / "config.json", dir / "config.json");
        seqembed::io::save_safetensors(dir / "model.safetensors", renamed);
        const seqembed::io::Model original = seqembed::io::load_model(source);
        const seqembed::io::Model other = seqembed::io::load_model(dir.path());
        CHECK(other.forward(seqembed::Batch(ids)) == original.forward(seqembed::Batch(ids)));
        if (original.has_decoder())
            CHECK(other.forward_decoder(seqembed::Batch(ids)) == original.forward_decoder(seqembed::Batch(ids)));
    }
}

namespace {

/// What each layer of a loaded model applies: 'R' its rotary stage, 'L' its local one, '-' none.
std::string layer_letters(const seqembed::io::Model& model) {
    std::string letters;
    for (Index layer = 0; layer < model.layers(); ++layer) {
        const seqembed::RotaryEmbedding<float>* rope = model.rotary_of_layer(layer);
        letters += rope == nullptr ? '-' : rope == model.rotary() ? 'R' : rope == model.local_rotary() ? 'L' : '?';
    }
    return letters;
}

}  // namespace

TEST_CASE("Each attention layer takes the rotary stage its family's rule gives it, or none", "[io][models][rotary]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    // Cohere 2: Cohere2Attention rotates only where sliding_window is set, the layers where
    // (i + 1) % sliding_window_pattern != 0.
    CHECK(layer_letters(seqembed::io::load_model(root / "cohere2")) == "RRR-");
    // SmolLM3 and Llama 4: use_rope = no_rope_layers[i].
    CHECK(layer_letters(seqembed::io::load_model(root / "smollm3")) == "R-RR");
    CHECK(layer_letters(seqembed::io::load_model(root / "llama4")) == "RRR-");
    // LFM2: RoPE in its full_attention layers (layer_types), or those full_attn_idxs lists; its
    // convolutions have none.
    CHECK(layer_letters(seqembed::io::load_model(root / "lfm2")) == "-R-R");
    CHECK(layer_letters(seqembed::io::load_model(root / "lfm2_moe")) == "--R");
    // Aya Vision: its Cohere 2 language model's rule and pairs (Cohere2Config's head_dim).
    const seqembed::io::Model aya = seqembed::io::load_model(root / "aya_vision");
    CHECK(layer_letters(aya) == "RRR-");
    CHECK((aya.rotary()->options().layout == seqembed::RotaryLayout::interleaved && aya.rotary()->options().head_dim == 8));
    const seqembed::RotaryOptions aya_rope = seqembed::io::read_rotary_config(root / "aya_vision" / "config.json");
    CHECK((aya_rope.layout == seqembed::RotaryLayout::interleaved && aya_rope.base == 50000.0 && aya_rope.head_dim == 8));
    // Mllama: none in the layers cross_attention_layers lists (they attend to the image).
    CHECK(layer_letters(seqembed::io::load_model(root / "mllama")) == "R-R-R");
    CHECK(seqembed::io::load_model(root / "lfm2").rotary()->options().base == 250000.0);  // `theta`
    // EXAONE 4 with sliding_window: RoPE on its sliding layers alone (layer_types).
    CHECK(layer_letters(seqembed::io::load_model(root / "exaone4")) == "RRR-");
    // OLMo 3: three sliding layers (the local stage: no rope_scaling), then a full one.
    const seqembed::io::Model olmo3 = seqembed::io::load_model(root / "olmo3");
    CHECK(layer_letters(olmo3) == "LLLR");
    CHECK(olmo3.rotary()->options().scaling == seqembed::RotaryScaling::yarn);
    CHECK(olmo3.local_rotary()->options().scaling == seqembed::RotaryScaling::none);
    CHECK(olmo3.local_rotary()->options().base == olmo3.rotary()->options().base);
    // Gemma 3 (Gemma3TextConfig's 26 layers, sliding_window_pattern 6) and gpt-oss (every layer).
    const std::string gemma3 = layer_letters(seqembed::io::load_model(root / "gemma3"));
    CHECK(gemma3 == "LLLLLRLLLLLRLLLLLRLLLLLRLL");
    CHECK(layer_letters(seqembed::io::load_model(root / "gpt_oss")) == "RRRR");
    // The families without RoPE have no stage on any layer; a layer past the count is refused.
    CHECK(seqembed::io::load_model(root / "bert").rotary_of_layer(0) == nullptr);
    const seqembed::io::Model cohere2 = seqembed::io::load_model(root / "cohere2");
    CHECK_THROWS_WITH(cohere2.rotary_of_layer(4), Catch::Contains("layer 4 is outside [0, 4)"));
    CHECK_THROWS_WITH(cohere2.rotary_of_layer(-1), Catch::Contains("layer -1 is negative"));
    // Without num_hidden_layers a family whose layers differ cannot say; one whose layers agree can.
    BrokenCopy copy("cohere2");
    nlohmann::json config = nlohmann::json::parse(std::ifstream(copy.directory / "config.json"));
    config.erase("num_hidden_layers");
    copy.write_config(config.dump());
    CHECK_THROWS_WITH(seqembed::io::load_model(copy.directory).rotary_of_layer(0),
                      Catch::Contains("gives no num_hidden_layers"));
    BrokenCopy bitnet("bitnet");
    const seqembed::io::Model uniform = seqembed::io::load_model(bitnet.directory);
    CHECK(uniform.layers() == 0);
    CHECK(uniform.rotary_of_layer(7) == uniform.rotary());
    // A bad no_rope_layers is named.
    BrokenCopy smol("smollm3");
    nlohmann::json smol_config = nlohmann::json::parse(std::ifstream(smol.directory / "config.json"));
    smol_config["no_rope_layers"] = {1, 2, 1, 1};
    smol.write_config(smol_config.dump());
    CHECK_THROWS_WITH(seqembed::io::load_model(smol.directory), Catch::Contains("'no_rope_layers'[1] is 2, not 0 or 1"));
    smol_config["no_rope_layers"] = {1, 1};
    smol.write_config(smol_config.dump());
    CHECK_THROWS_WITH(seqembed::io::load_model(smol.directory),
                      Catch::Contains("'no_rope_layers' is not a list of at least 4 values"));
    BrokenCopy vision("mllama");
    nlohmann::json vision_config = nlohmann::json::parse(std::ifstream(vision.directory / "config.json"));
    vision_config["text_config"]["cross_attention_layers"] = 3;
    vision.write_config(vision_config.dump());
    CHECK_THROWS_WITH(seqembed::io::load_model(vision.directory),
                      Catch::Contains("'cross_attention_layers' is 3, not a list of layer indices"));
    // Cohere 2 with a null sliding_window: no layer has a window, so none rotates.
    BrokenCopy windowless("cohere2");
    nlohmann::json cohere_config = nlohmann::json::parse(std::ifstream(windowless.directory / "config.json"));
    cohere_config["sliding_window"] = nullptr;
    windowless.write_config(cohere_config.dump());
    CHECK(layer_letters(seqembed::io::load_model(windowless.directory)) == "----");
    // OLMo 3 with transformers 5's flat rope_parameters: its theta reaches both stages.
    BrokenCopy olmo("olmo3");
    nlohmann::json olmo_config = nlohmann::json::parse(std::ifstream(olmo.directory / "config.json"));
    olmo_config.erase("rope_scaling");
    olmo_config["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 12345.0}};
    olmo.write_config(olmo_config.dump());
    const seqembed::io::Model flat = seqembed::io::load_model(olmo.directory);
    CHECK(flat.rotary()->options().base == 12345.0);
    CHECK(flat.local_rotary()->options().base == 12345.0);
    // Without the list, SmolLM3Config's default: every fourth layer (no_rope_layer_interval) has none.
    smol_config.erase("no_rope_layers");
    smol_config["num_hidden_layers"] = 8;
    smol.write_config(smol_config.dump());
    CHECK(layer_letters(seqembed::io::load_model(smol.directory)) == "RRR-RRR-");
}

TEST_CASE("The hybrid and linear-attention families rotate in their attention layers alone, as their configs say",
          "[io][models][rotary]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    // Granite 4.0 with position_embedding_type "rope": its attention layers (layer_types); its
    // Mamba 2 layers have none.
    CHECK(layer_letters(seqembed::io::load_model(root / "granitemoehybrid")) == "-R-R");
    // Bamba: the layers attn_layer_indices lists, half of each head (BambaConfig's factor).
    const seqembed::io::Model bamba = seqembed::io::load_model(root / "bamba");
    CHECK(layer_letters(bamba) == "-R-R");
    CHECK(bamba.rotary()->rotary_dim() == 4);
    // Qwen3-Next: every full_attention_interval-th layer (4 by default), a quarter of each head.
    const seqembed::io::Model next = seqembed::io::load_model(root / "qwen3_next");
    CHECK(layer_letters(next) == "---R---R");
    CHECK(next.rotary()->rotary_dim() == 4);
    // MiniMax: the even layers by default, each whole head whatever rotary_dim says.
    const seqembed::io::Model minimax = seqembed::io::load_model(root / "minimax");
    CHECK(layer_letters(minimax) == "R-R-");
    CHECK(minimax.rotary()->rotary_dim() == 8);
    // Zamba 2: the hybrid layers' shared blocks, over heads of 2 x hidden / heads, with
    // use_long_context's 16384 positions and theta x 8^(d / (d - 2)).
    const seqembed::io::Model zamba2 = seqembed::io::load_model(root / "zamba2");
    CHECK(layer_letters(zamba2) == "-R-R");
    CHECK(zamba2.rotary()->head_dim() == 16);
    CHECK(zamba2.rotary()->max_positions() == 16384);
    CHECK(zamba2.rotary()->options().base == 10000.0 * std::pow(8.0, 16.0 / 14.0));
    // LFM2-VL's and Command A Vision's language models' rules; VaultGemma's every layer.
    CHECK(layer_letters(seqembed::io::load_model(root / "lfm2_vl")) == "-R-");
    const seqembed::io::Model command = seqembed::io::load_model(root / "cohere2_vision");
    CHECK(layer_letters(command) == "RRR-");
    CHECK(command.rotary()->options().layout == seqembed::RotaryLayout::interleaved);
    CHECK(layer_letters(seqembed::io::load_model(root / "vaultgemma")) == "RR");
    CHECK(seqembed::io::load_model(root / "ernie4_5_moe").rotary()->options().layout ==
          seqembed::RotaryLayout::interleaved);
    // Jamba and Zamba have no positions anywhere: no rotary stage.
    for (const char* family : {"jamba", "zamba"}) {
        INFO(family);
        const seqembed::io::Model model = seqembed::io::load_model(root / family);
        CHECK(model.rotary() == nullptr);
        CHECK(layer_letters(model) == std::string(static_cast<std::size_t>(model.layers()), '-'));
        CHECK(model.layers() > 0);
    }
    // Granite 4.0 without position_embedding_type "rope" (GraniteMoeHybridConfig's None, or
    // "nope" as the H models say): no rotary module at all.
    BrokenCopy granite("granitemoehybrid");
    nlohmann::json granite_config = nlohmann::json::parse(std::ifstream(granite.directory / "config.json"));
    for (const nlohmann::json& type : {nlohmann::json("nope"), nlohmann::json(nullptr)}) {
        granite_config["position_embedding_type"] = type;
        granite.write_config(granite_config.dump());
        const seqembed::io::Model nope = seqembed::io::load_model(granite.directory);
        CHECK(nope.rotary() == nullptr);
        CHECK(layer_letters(nope) == "----");
    }
    granite_config["position_embedding_type"] = "alibi";
    granite.write_config(granite_config.dump());
    CHECK_THROWS_WITH(seqembed::io::load_model(granite.directory),
                      Catch::Contains("'position_embedding_type' is \"alibi\", not \"rope\" or \"nope\""));
    // Granite 4.0's layer_types in transformers 5's names; without layer_types, all Mamba 2.
    granite_config["position_embedding_type"] = "rope";
    granite_config["layer_types"] = {"linear_attention", "full_attention", "full_attention", "linear_attention"};
    granite.write_config(granite_config.dump());
    CHECK(layer_letters(seqembed::io::load_model(granite.directory)) == "-RR-");
    granite_config.erase("layer_types");
    granite.write_config(granite_config.dump());
    CHECK(layer_letters(seqembed::io::load_model(granite.directory)) == "----");
    // Zamba 2 without use_mem_rope: no rotary module; Bamba without attn_layer_indices: no
    // attention layer.
    BrokenCopy memoryless("zamba2");
    nlohmann::json zamba_config = nlohmann::json::parse(std::ifstream(memoryless.directory / "config.json"));
    zamba_config["use_mem_rope"] = false;
    memoryless.write_config(zamba_config.dump());
    CHECK(seqembed::io::load_model(memoryless.directory).rotary() == nullptr);
    zamba_config["use_mem_rope"] = "yes";
    memoryless.write_config(zamba_config.dump());
    CHECK_THROWS_WITH(seqembed::io::load_model(memoryless.directory),
                      Catch::Contains("'use_mem_rope' is \"yes\", not a boolean"));
    zamba_config["use_mem_rope"] = true;
    zamba_config["layers_block_type"] = {"mamba", "hybrid"};
    memoryless.write_config(zamba_config.dump());
    CHECK_THROWS_WITH(seqembed::io::load_model(memoryless.directory),
                      Catch::Contains("'layers_block_type' is not a list of 4 layer types"));
    BrokenCopy attentionless("bamba");
    nlohmann::json bamba_config = nlohmann::json::parse(std::ifstream(attentionless.directory / "config.json"));
    bamba_config.erase("attn_layer_indices");
    attentionless.write_config(bamba_config.dump());
    CHECK(layer_letters(seqembed::io::load_model(attentionless.directory)) == "----");
    // Qwen3-Next's layer_types, when given, win over the interval.
    BrokenCopy typed("qwen3_next");
    nlohmann::json next_config = nlohmann::json::parse(std::ifstream(typed.directory / "config.json"));
    next_config["num_hidden_layers"] = 4;
    next_config["layer_types"] = {"full_attention", "linear_attention", "linear_attention", "full_attention"};
    typed.write_config(next_config.dump());
    CHECK(layer_letters(seqembed::io::load_model(typed.directory)) == "R--R");
    // RecurrentGemma: the attention blocks of block_types, repeated; half of each head; the table's
    // rows attention_window_size. Its scale is sqrt(hidden_size) in bfloat16 (24: 4.90625).
    const seqembed::io::Model recurrent = seqembed::io::load_model(root / "recurrent_gemma");
    CHECK(layer_letters(recurrent) == "--R-");
    CHECK((recurrent.rotary()->rotary_dim() == 6 && recurrent.rotary()->max_positions() == 32));
    CHECK(recurrent.lookup()->pipeline.embedding().scale() == 4.90625f);
    // JetMoE's heads are kv_channels wide; Emu3's 128 unless its text_config says; Fuyu's
    // Persimmon from the top-level keys (half of each head, theta 25000).
    CHECK(seqembed::io::load_model(root / "jetmoe").rotary()->head_dim() == 4);
    CHECK(seqembed::io::load_model(root / "emu3").rotary()->head_dim() == 8);
    // The config classes that set head_dim after reading config.json override the file's
    // (Chameleon's attention, Zamba2Config); RecurrentGemmaConfig's is the file's when given.
    const auto with_head_dim = [&](const char* family, const char* key, Index head_dim) {
        BrokenCopy copy(family);
        nlohmann::json config = nlohmann::json::parse(std::ifstream(copy.directory / "config.json"));
        config[key] = head_dim;
        copy.write_config(config.dump());
        return seqembed::io::load_model(copy.directory).rotary()->head_dim();
    };
    CHECK(with_head_dim("chameleon", "head_dim", 4) == 8);
    CHECK(with_head_dim("zamba2", "attention_head_dim", 4) == 16);
    CHECK(with_head_dim("recurrent_gemma", "head_dim", 8) == 8);
    const seqembed::io::Model fuyu = seqembed::io::load_model(root / "fuyu");
    CHECK((fuyu.rotary()->rotary_dim() == 4 && fuyu.rotary()->options().base == 25000.0));
    BrokenCopy blockless("recurrent_gemma");
    nlohmann::json recurrent_config = nlohmann::json::parse(std::ifstream(blockless.directory / "config.json"));
    recurrent_config["block_types"] = nlohmann::json::array();
    blockless.write_config(recurrent_config.dump());
    CHECK_THROWS_WITH(seqembed::io::load_model(blockless.directory),
                      Catch::Contains("'block_types' is [], not a list of block types"));
    // PhiMoE: its LongRoPE's attention factor is the mscale; unequal ones are refused by name.
    const seqembed::io::Model phimoe = seqembed::io::load_model(root / "phimoe");
    CHECK(phimoe.rotary()->attention_scaling() == 1.243163121016122);
    BrokenCopy uneven("phimoe");
    nlohmann::json phimoe_config = nlohmann::json::parse(std::ifstream(uneven.directory / "config.json"));
    phimoe_config["rope_scaling"]["long_mscale"] = 1.5;
    uneven.write_config(phimoe_config.dump());
    CHECK_THROWS_WITH(seqembed::io::load_model(uneven.directory),
                      Catch::Contains("'rope_scaling.short_mscale' (1.24316) and 'long_mscale' (1.5) differ"));
    phimoe_config["rope_scaling"].erase("long_mscale");
    uneven.write_config(phimoe_config.dump());
    CHECK_THROWS_WITH(seqembed::io::load_model(uneven.directory), Catch::Contains("long_mscale"));
}

TEST_CASE("Blenderbot, BigBird-Pegasus and LED are BART's stage in their layouts, BioGPT OPT's with a scale, Funnel a "
          "lookup and LayerNorm",
          "[io][models]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    // LED: led. tensors, positions from row 0, each side's own number of rows.
    const seqembed::io::LearnedModelInput led = seqembed::io::load_bart(root / "led");
    CHECK(led.pipeline.positions().max_positions() == 40);
    REQUIRE(led.decoder.has_value());
    CHECK(led.decoder->positions().max_positions() == 24);
    CHECK(led.pipeline.positions().offset() == 0);
    CHECK((led.pipeline.layer_norm() != nullptr && led.decoder->layer_norm() != nullptr));
    CHECK(led.pipeline.embedding().scale() == 1.0f);
    BrokenCopy scaled("led");  // LEDConfig has no scale_embedding: a config that says so is not read
    nlohmann::json led_config = nlohmann::json::parse(std::ifstream(scaled.directory / "config.json"));
    led_config["scale_embedding"] = true;
    scaled.write_config(led_config.dump());
    CHECK(seqembed::io::load_bart(scaled.directory).pipeline.embedding().scale() == 1.0f);
    // Blenderbot and BigBird-Pegasus: no LayerNorm in the stage; BigBirdPegasusConfig's scale.
    for (const char* family : {"blenderbot", "bigbird_pegasus"}) {
        INFO(family);
        const seqembed::io::LearnedModelInput stage = seqembed::io::load_bart(root / family);
        CHECK(stage.pipeline.layer_norm() == nullptr);
        CHECK(stage.pipeline.positions().offset() == 0);
        CHECK(stage.pipeline.embedding().scale() == static_cast<float>(std::sqrt(12.0)));
    }
    // BioGPT: OPT's rows from the mask, times sqrt(hidden_size) by BioGptConfig's default.
    const seqembed::io::LearnedModelInput biogpt = seqembed::io::load_opt(root / "biogpt");
    CHECK(biogpt.pipeline.embedding().scale() == static_cast<float>(std::sqrt(12.0)));
    CHECK(biogpt.pipeline.numbering() == seqembed::PositionNumbering::real_tokens);
    // XGLM: by index from row 2 of a table Hugging Face computes; its forward takes position_ids.
    const seqembed::io::Model xglm = seqembed::io::load_model(root / "xglm");
    CHECK(xglm.takes_position_ids());
    CHECK(xglm.learned()->pipeline.positions().max_positions() == 34);
    // Funnel: no position table, no rotary stage, no position ids; ConvBERT's embeddings_project.
    const seqembed::io::Model funnel = seqembed::io::load_model(root / "funnel");
    CHECK((funnel.lookup() != nullptr && funnel.rotary() == nullptr && !funnel.takes_position_ids()));
    CHECK(seqembed::io::load_model(root / "convbert").projection() != nullptr);
    // I-BERT's integer-only mode is refused by name.
    BrokenCopy quantized("ibert");
    nlohmann::json ibert_config = nlohmann::json::parse(std::ifstream(quantized.directory / "config.json"));
    ibert_config["quant_mode"] = true;
    quantized.write_config(ibert_config.dump());
    CHECK_THROWS_WITH(seqembed::io::load_model(quantized.directory),
                      Catch::Contains("'quant_mode' is true: I-BERT's integer-only embeddings have no preset"));
    // A family loader refuses another family's checkpoint.
    CHECK_THROWS_WITH(seqembed::io::load_bart(root / "llama"),
                      Catch::Contains("model_type 'llama' has another input stage than load_bart builds"));
}

TEST_CASE("A config that leaves keys out takes its config class's defaults, and the keys each class renames",
          "[io][models][rotary]") {
    const auto options = [](const char* text) {
        return seqembed::io::rotary_options_from_json(nlohmann::json::parse(text), "config.json");
    };
    using seqembed::RotaryLayout;
    using seqembed::RotaryScaling;
    {
        // GptOssConfig: theta 150000, head_dim 64, 131072 positions, yarn factor 32 without truncation.
        const seqembed::RotaryOptions o =
            options(R"({"model_type": "gpt_oss", "hidden_size": 2880, "num_attention_heads": 64})");
        CHECK(o.base == 150000.0);
        CHECK(o.head_dim == 64);
        CHECK(o.max_positions == 131072);
        CHECK(o.scaling == RotaryScaling::yarn);
        CHECK(o.factor == 32.0);
        CHECK(o.original_max_position_embeddings == 4096);
        CHECK_FALSE(o.truncate);
        // A rule in rope_parameters (transformers 5) is the file's, not the default's.
        const seqembed::RotaryOptions given = options(R"({"model_type": "gpt_oss", "hidden_size": 2880,
            "num_attention_heads": 64, "rope_parameters": {"rope_type": "default", "rope_theta": 1000.0}})");
        CHECK(given.scaling == RotaryScaling::none);
        CHECK(given.base == 1000.0);
    }
    {
        // Llama 4: interleaved (complex products), head_dim 128, theta 500000.
        const seqembed::RotaryOptions o =
            options(R"({"model_type": "llama4_text", "hidden_size": 5120, "num_attention_heads": 40})");
        CHECK(o.layout == RotaryLayout::interleaved);
        CHECK(o.head_dim == 128);
        CHECK(o.base == 500000.0);
    }
    {
        // Llama 4 Scout: the llama3 rule with equal low and high factors (no band between them):
        // wavelengths above original / 1 divided by factor, the others kept.
        seqembed::RotaryOptions scout = options(R"({"model_type": "llama4_text", "hidden_size": 5120,
            "num_attention_heads": 40, "head_dim": 128, "rope_theta": 500000.0,
            "rope_scaling": {"factor": 16.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
                             "original_max_position_embeddings": 8192, "rope_type": "llama3"}})");
        scout.max_positions = 16;
        const seqembed::RotaryEmbedding<float> rope(scout);
        seqembed::RotaryOptions plain = seqembed::RotaryOptions::hugging_face(128, 500000.0);
        plain.max_positions = 16;
        const std::vector<float> base = seqembed::RotaryEmbedding<float>(plain).inverse_frequencies();
        const auto two_pi = static_cast<float>(2 * 3.141592653589793);
        long divided = 0;
        for (std::size_t i = 0; i < base.size(); ++i) {
            const float wavelen = (1.0f / base[i]) * two_pi;
            const bool low = wavelen > 8192.0f;
            divided += low ? 1 : 0;
            CHECK(rope.inverse_frequencies()[i] == (low ? base[i] / 16.0f : base[i]));
        }
        CHECK(divided > 10);
        CHECK(divided < 64);
    }
    {
        // GLM and GLM-4: interleaved pairs on half of each head; GLM-4-MoE: halves on half.
        const seqembed::RotaryOptions glm =
            options(R"({"model_type": "glm", "hidden_size": 4096, "num_attention_heads": 32})");
        CHECK(glm.layout == RotaryLayout::interleaved);
        CHECK(glm.partial_rotary_factor == 0.5);
        CHECK(glm.head_dim == 128);
        const seqembed::RotaryOptions moe = options(
            R"({"model_type": "glm4_moe", "hidden_size": 5120, "num_attention_heads": 96, "head_dim": 128})");
        CHECK(moe.layout == RotaryLayout::halves);
        CHECK(moe.partial_rotary_factor == 0.5);
    }
    {
        // DeepSeek: qk_rope_head_dim rotates (head_dim is forced to it); V3 interleaved unless
        // rope_interleave is false.
        const seqembed::RotaryOptions v3 = options(R"({"model_type": "deepseek_v3", "hidden_size": 7168,
            "num_attention_heads": 128, "head_dim": 192, "qk_rope_head_dim": 64})");
        CHECK(v3.head_dim == 64);
        CHECK(v3.layout == RotaryLayout::interleaved);
        CHECK(v3.max_positions == 4096);
        const seqembed::RotaryOptions halves = options(R"({"model_type": "deepseek_v3", "hidden_size": 7168,
            "num_attention_heads": 128, "rope_interleave": false})");
        CHECK(halves.layout == RotaryLayout::halves);
        CHECK(halves.head_dim == 64);
    }
    {
        // DBRX: attn_config.rope_theta, d_model / n_heads, max_seq_len.
        const seqembed::RotaryOptions o = options(R"({"model_type": "dbrx", "d_model": 6144, "n_heads": 48,
            "max_seq_len": 32768, "attn_config": {"rope_theta": 500000.0, "kv_n_heads": 8}})");
        CHECK(o.base == 500000.0);
        CHECK(o.head_dim == 128);
        CHECK(o.max_positions == 32768);
    }
    {
        // Cohere 2: hidden_size / num_attention_heads whatever head_dim says; interleaved.
        const seqembed::RotaryOptions o = options(
            R"({"model_type": "cohere2", "hidden_size": 4096, "num_attention_heads": 32, "head_dim": 64})");
        CHECK(o.head_dim == 128);
        CHECK(o.layout == RotaryLayout::interleaved);
        CHECK(o.base == 10000.0);
    }
    {
        // Apertus: theta 12e6 and the llama3 rule; Persimmon: theta 25000, half of each head;
        // Helium: interleaved, theta 100000; Qwen2-VL's "mrope" is the default rule.
        const seqembed::RotaryOptions apertus =
            options(R"({"model_type": "apertus", "hidden_size": 4096, "num_attention_heads": 32})");
        CHECK(apertus.base == 12000000.0);
        CHECK(apertus.scaling == RotaryScaling::llama3);
        CHECK(apertus.original_max_position_embeddings == 8192);
        const seqembed::RotaryOptions persimmon =
            options(R"({"model_type": "persimmon", "hidden_size": 4096, "num_attention_heads": 64})");
        CHECK(persimmon.base == 25000.0);
        CHECK(persimmon.partial_rotary_factor == 0.5);
        CHECK(persimmon.layout == RotaryLayout::halves);
        const seqembed::RotaryOptions helium =
            options(R"({"model_type": "helium", "hidden_size": 2560, "num_attention_heads": 20})");
        CHECK(helium.layout == RotaryLayout::interleaved);
        CHECK(helium.base == 100000.0);
        const seqembed::RotaryOptions vl = options(R"({"model_type": "qwen2_vl", "hidden_size": 1536,
            "num_attention_heads": 12, "rope_theta": 1000000.0,
            "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}})");
        CHECK(vl.scaling == RotaryScaling::none);
    }
    {
        // ModelConfig takes the defaults too: SmolLM3's padding_idx 128004, Helium's 3; an
        // explicit null keeps none.
        const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
        CHECK(seqembed::io::ModelConfig::read(root / "helium/config.json").embedding_padding_idx == 3);
        CHECK(seqembed::io::ModelConfig::read(root / "seed_oss/config.json").embedding_padding_idx == 1);
        BrokenCopy copy("helium");
        copy.write_config(R"({"model_type": "smollm3", "vocab_size": 128256, "hidden_size": 16,
                              "num_attention_heads": 2})");
        CHECK(seqembed::io::ModelConfig::read(copy.directory / "config.json").embedding_padding_idx == 128004);
        copy.write_config(R"({"model_type": "smollm3", "vocab_size": 128256, "hidden_size": 16,
                              "num_attention_heads": 2, "pad_token_id": null})");
        CHECK_FALSE(seqembed::io::ModelConfig::read(copy.directory / "config.json").embedding_padding_idx.has_value());
    }
}

TEST_CASE("Qwen-VL's language model numbers text by the mask's count, and the multimodal checkpoints' names load",
          "[io][models]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    const seqembed::io::Model model = seqembed::io::load_model(root / "qwen2_5_vl");
    // get_rope_index for text: cumsum(attention_mask) - 1 over the real tokens.
    seqembed::IdMatrix ids(2, 4);
    ids << 5, 6, 7, 8, 0, 0, 9, 10;
    seqembed::IdMatrix mask(2, 4);
    mask << 1, 1, 1, 1, 0, 0, 1, 1;
    seqembed::Batch batch(ids);
    batch.padding = seqembed::Padding::from_mask(mask);
    const seqembed::io::Model::PositionVector positions = model.positions(batch);
    CHECK(positions(0) == 0);
    CHECK(positions(3) == 3);
    CHECK(positions(4) == 1);  // get_rope_index's masked_fill(attention_mask == 0, 1)
    CHECK(positions(5) == 1);
    CHECK(positions(6) == 0);
    CHECK(positions(7) == 1);
    // So a padded batch rotates whole, as Hugging Face's forward rotates it.
    seqembed::RowMatrix<float> q = seqembed::RowMatrix<float>::Ones(8, model.rotary()->head_dim());
    seqembed::RowMatrix<float> k = q;
    model.rotary()->apply(q, k, 1, 1, positions);
    CHECK(q.row(4) == q.row(7));
    // While decoding: one token after those, its mask over past + current.
    seqembed::IdMatrix next(2, 1);
    next << 11, 12;
    seqembed::IdMatrix wide(2, 5);
    wide << 1, 1, 1, 1, 1, 0, 0, 1, 1, 1;
    seqembed::Batch step(next);
    step.padding = seqembed::Padding::from_mask(wide);
    const seqembed::io::Model::PositionVector after = model.positions(step);
    CHECK(after(0) == 4);
    CHECK(after(1) == 2);
    // The multimodal configs' text_config.
    CHECK(seqembed::io::load_model(root / "qwen3_vl").config().vocab_size == 120);
    CHECK(seqembed::io::load_model(root / "mistral3").config().vocab_size == 126);
    CHECK_THROWS_WITH(
        [&] {
            BrokenCopy broken("qwen3_vl");
            broken.write_config(R"({"model_type": "qwen3_vl", "vocab_size": 120, "hidden_size": 16})");
            (void)seqembed::io::load_model(broken.directory);
        }(),
        Catch::Contains("model_type 'qwen3_vl' has no 'text_config' object"));
}

TEST_CASE("The encoders' differences: RoFormer's rotary table, position ids as table rows, ERNIE's task row, BigBird's scale",
          "[io][models]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    {
        // RoFormer: interleaved pairs over hidden_size / num_attention_heads, base 10000; the
        // [sin | cos] table its encoder computes (written into the fixture) to the last bit.
        const seqembed::io::Model roformer = seqembed::io::load_model(root / "roformer");
        const seqembed::RotaryEmbedding<float>* rope = roformer.rotary();
        REQUIRE(rope != nullptr);
        CHECK(rope->options().layout == seqembed::RotaryLayout::interleaved);
        CHECK(rope->head_dim() == 8);
        REQUIRE(roformer.projection() != nullptr);
        const seqembed::io::SafetensorsFile file =
            seqembed::io::SafetensorsFile::open(root / "roformer" / "model.safetensors");
        const seqembed::io::Tensor<float> table = file.matrix<float>("roformer.encoder.embed_positions.weight");
        RowMatrix<float> cos(1, rope->pairs()), sin(1, rope->pairs());
        for (std::int64_t position = 0; position < rope->max_positions(); ++position) {
            INFO("position " << position);
            rope->forward_into(position, cos, sin);
            for (Index i = 0; i < rope->pairs(); ++i) {
                CHECK(sin(0, i) == table.data()[position * 8 + i]);
                CHECK(cos(0, i) == table.data()[position * 8 + 4 + i]);
            }
        }
        CHECK_THROWS_AS(rope->forward_into(rope->max_positions(), cos, sin), seqembed::index_error);
        CHECK(roformer.rotary_of_layer(0) == rope);
    }
    {
        // Nomic's BERT: halves over n_embd / n_head from rotary_emb_base, any position; its
        // vocabulary rounded up to pad_vocab_size_multiple (120 -> 128 rows).
        const seqembed::io::Model nomic = seqembed::io::load_model(root / "nomic_bert");
        const seqembed::RotaryEmbedding<float>* rope = nomic.rotary();
        REQUIRE(rope != nullptr);
        CHECK(rope->options().layout == seqembed::RotaryLayout::halves);
        CHECK(rope->head_dim() == 8);
        CHECK(rope->options().base == 1000.0);
        CHECK(rope->options().scaling == seqembed::RotaryScaling::none);
        CHECK(nomic.config().vocab_size == 128);
        CHECK(nomic.config().layer_norm_eps == 1e-12);
        RowMatrix<float> cos(1, rope->pairs()), sin(1, rope->pairs());
        CHECK_NOTHROW(rope->forward_into(100000, cos, sin));
        // nomic-embed-text-v1.5's config since transformers 5 keys were added beside its own:
        // rotary_emb_* rule, max_position_embeddings overrides n_positions (GPT2Config's
        // attribute map); rotary_scaling_factor (as from_pretrained passes it) is dynamic NTK
        // past max_trained_positions.
        const BrokenCopy copy("nomic_bert");
        copy.write_config(R"({"model_type": "nomic_bert", "vocab_size": 128, "n_embd": 16, "n_head": 2,
            "n_positions": 8192, "max_position_embeddings": 2048, "max_trained_positions": 32,
            "rope_parameters": {"rope_theta": 1000.0, "rope_type": "default"}, "rotary_emb_fraction": 0.5,
            "rotary_emb_base": 1000, "rotary_scaling_factor": 2, "layer_norm_epsilon": 1e-12,
            "type_vocab_size": 2})");
        const seqembed::io::Model scaled = seqembed::io::load_model(copy.directory);
        const seqembed::RotaryOptions& options = scaled.rotary()->options();
        CHECK(scaled.config().max_positions == 2048);
        CHECK(scaled.rotary()->rotary_dim() == 4);
        CHECK(options.scaling == seqembed::RotaryScaling::dynamic);
        CHECK(options.factor == 2.0);
        CHECK(options.original_max_position_embeddings == 32);
        copy.write_config(R"({"model_type": "nomic_bert", "vocab_size": 128, "n_embd": 16, "n_head": 2,
            "rotary_emb_fraction": 0.0, "layer_norm_epsilon": 1e-12})");
        CHECK_THROWS_WITH(seqembed::io::load_model(copy.directory),
                          Catch::Contains("'rotary_emb_fraction' gives 0 rotated of 8 dimensions"));
    }
    seqembed::IdMatrix ids(2, 4);
    ids << 5, 6, 7, 8,  //
        9, 10, 1, 1;
    seqembed::IdMatrix mask(2, 4);
    mask << 1, 1, 1, 1, 1, 1, 0, 0;
    for (const char* family : {"longformer", "nystromformer"}) {
        // Their forwards take position ids as rows of the table: RoBERTa's kin counts from
        // row 2 (pad 1), Nystromformer's buffer is arange + 2. Given the rows their rule
        // computes, the output is the same.
        INFO(family);
        seqembed::PipelineOptions computed;
        computed.padded_rows = seqembed::PaddedRows::computed;
        const seqembed::io::Model model = seqembed::io::load_model(root / family, computed);
        seqembed::Batch batch(ids);
        batch.padding = seqembed::Padding::from_mask(mask);
        const RowMatrix<float> by_rule = model.forward(batch);
        seqembed::IdMatrix rows(2, 4);
        if (std::string(family) == "longformer")
            rows << 2, 3, 4, 5, 2, 3, 1, 1;  // pad id 1 reads row 1
        else
            rows << 2, 3, 4, 5, 2, 3, 4, 5;
        batch.position_ids = rows;
        CHECK(model.forward(batch) == by_rule);
    }
    {
        // ERNIE without use_task_id reads no task table; BigBird without rescale_embeddings no scale.
        BrokenCopy ernie("ernie");
        nlohmann::json config = nlohmann::json::parse(std::ifstream(ernie.directory / "config.json"));
        config["use_task_id"] = false;
        ernie.write_config(config.dump());
        const seqembed::io::Model with_task = seqembed::io::load_model(root / "ernie");
        const seqembed::io::Model without = seqembed::io::load_model(ernie.directory);
        CHECK(with_task.learned()->pipeline.positions().table() != without.learned()->pipeline.positions().table());
        BrokenCopy bird("big_bird");
        config = nlohmann::json::parse(std::ifstream(bird.directory / "config.json"));
        config.erase("rescale_embeddings");
        bird.write_config(config.dump());
        CHECK(seqembed::io::load_model(bird.directory).learned()->pipeline.embedding().scale() == 1.0f);
        CHECK(seqembed::io::load_model(root / "big_bird").learned()->pipeline.embedding().scale() == 4.0f);
    }
    CHECK_THROWS_WITH(seqembed::io::load_encoder(root / "bert"),
                      Catch::Contains("model_type 'bert' is not one of load_encoder's encoders"));
}

TEST_CASE("ESM-2's rotary stage takes its checkpoint's float16-rounded inv_freq, and its token dropout is named when it cannot apply",
          "[io][models][rotary]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    const seqembed::io::Model esm = seqembed::io::load_model(root / "esm");
    REQUIRE(esm.rotary() != nullptr);
    const seqembed::io::SafetensorsFile file = seqembed::io::SafetensorsFile::open(root / "esm" / "model.safetensors");
    const seqembed::io::Tensor<float> buffer =
        file.vector<float>("esm.encoder.layer.0.attention.self.rotary_embeddings.inv_freq");
    const std::vector<float>& inv_freq = esm.rotary()->inverse_frequencies();
    REQUIRE(static_cast<Index>(inv_freq.size()) == buffer.shape()[0]);
    for (std::size_t i = 0; i < inv_freq.size(); ++i) CHECK(inv_freq[i] == buffer.data()[i]);
    // The rounding through float16 shows: recomputed, the second frequency differs.
    const seqembed::RotaryEmbedding<float> recomputed(seqembed::RotaryOptions::hugging_face(8));
    CHECK(recomputed.inverse_frequencies()[1] != inv_freq[1]);
    CHECK(esm.rotary()->options().layout == seqembed::RotaryLayout::halves);
    CHECK(layer_letters(esm) == "RR");
    // Without the buffer, base 10000.
    BrokenCopy bare("esm");
    {
        const seqembed::io::SafetensorsFile source =
            seqembed::io::SafetensorsFile::open(root / "esm" / "model.safetensors");
        seqembed::io::save_safetensors(
            bare.directory / "model.safetensors",
            {{"esm.embeddings.word_embeddings.weight", source.tensor<float>("esm.embeddings.word_embeddings.weight")}});
    }
    CHECK(seqembed::io::load_model(bare.directory).rotary()->inverse_frequencies() == recomputed.inverse_frequencies());

    seqembed::IdMatrix ids(2, 3);
    ids << 0, 32, 2,  //
        32, 32, 1;
    seqembed::IdMatrix mask(2, 3);
    mask << 1, 1, 1, 1, 1, 0;
    seqembed::Batch batch(ids);
    batch.padding = seqembed::Padding::from_mask(mask);
    // Every attended token of the second sequence is the mask token: 1 - 2 / 2 = 0.
    CHECK_THROWS_WITH(esm.forward(batch), Catch::Contains("sequence 1 has 2 mask tokens (id 32) among 2 attended ones"));
    // ESM-2's forward ignores position ids (its rotary module numbers 0 .. seq - 1).
    seqembed::IdMatrix fine(1, 3);
    fine << 0, 32, 2;
    seqembed::Batch one(fine);
    const RowMatrix<float> plain = esm.forward(one);
    seqembed::IdMatrix positions(1, 3);
    positions << 5, 6, 7;
    one.position_ids = positions;
    CHECK(esm.forward(one) == plain);
    CHECK(esm.positions(one)(2) == 2);
    // The mask token's row is zero, the others scaled by float(0.88) / float(1 - 1/3).
    const auto table = esm.lookup()->pipeline.embedding().table();
    const float divisor = 1.0f - 1.0f / 3.0f;
    CHECK(plain.row(1).isZero());
    for (Index c = 0; c < plain.cols(); ++c) CHECK(plain(2, c) == (table(2, c) * 0.88f) / divisor);
    // token_dropout off: the rows as stored.
    BrokenCopy off("esm");
    nlohmann::json config = nlohmann::json::parse(std::ifstream(off.directory / "config.json"));
    config["token_dropout"] = false;
    off.write_config(config.dump());
    const seqembed::io::Model plain_esm = seqembed::io::load_model(off.directory);
    CHECK(plain_esm.forward(one).row(1) == plain_esm.lookup()->pipeline.embedding().table().row(32));
    config["token_dropout"] = true;
    config.erase("mask_token_id");
    off.write_config(config.dump());
    CHECK_THROWS_WITH(seqembed::io::load_model(off.directory), Catch::Contains("there is no 'mask_token_id'"));
    CHECK_THROWS_WITH(seqembed::io::load_esm(root / "esm", {}, seqembed::VocabularySplit{2, 0}),
                      Catch::Contains("ESM's vocabulary is not split"));
    // A sequence all padding, a mask id among its pads: zero rows, as the module's mask makes them.
    seqembed::IdMatrix padded(2, 3);
    padded << 0, 5, 2,  //
        32, 1, 1;
    seqembed::IdMatrix padded_mask(2, 3);
    padded_mask << 1, 1, 1, 0, 0, 0;
    seqembed::Batch empty_row(padded);
    empty_row.padding = seqembed::Padding::from_mask(padded_mask);
    for (const char* family : {"esm", "esm1b"}) {
        INFO(family);
        const RowMatrix<float> rows = seqembed::io::load_model(root / family).forward(empty_row);
        CHECK(rows.bottomRows(3).isZero());
    }
    // ESM-1b's forward reads position ids as rows of its table (from row pad + 1 = 2 by its rule),
    // through the token dropout's recomputed rows too; ESM has no embedding dropout.
    seqembed::PipelineOptions dropout;
    dropout.dropout = 0.5;
    seqembed::io::Model esm1b = seqembed::io::load_model(root / "esm1b", dropout);
    esm1b.set_training(true);
    seqembed::IdMatrix masked_ids(1, 4);
    masked_ids << 0, 32, 5, 2;
    seqembed::Batch by_rule(masked_ids);
    const RowMatrix<float> ruled = esm1b.forward(by_rule);
    seqembed::IdMatrix rows_given(1, 4);
    rows_given << 2, 3, 4, 5;
    seqembed::Batch by_rows(masked_ids);
    by_rows.position_ids = rows_given;
    CHECK(esm1b.forward(by_rows) == ruled);
    rows_given << 5, 4, 3, 2;
    CHECK(esm1b.forward(by_rows) != ruled);
}

TEST_CASE("XLM and FlauBERT: token types through the word table, padded rows zero, pad_index and the config's "
          "older keys",
          "[io][models]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    // XLM with two languages: its token types are token_type_ids, rows of the word table, as
    // XLMModel looks them up; its lang_embeddings (the langs) are not read.
    const seqembed::io::Model xlm = seqembed::io::load_model(root / "xlm");
    REQUIRE(xlm.learned() != nullptr);
    REQUIRE(xlm.learned()->pipeline.token_types() != nullptr);
    CHECK(xlm.learned()->pipeline.token_types()->type_vocab_size() == 226);
    CHECK(xlm.learned()->pipeline.token_types()->table() == xlm.learned()->pipeline.embedding().table());
    CHECK(xlm.takes_position_ids());
    CHECK(xlm.config().layer_norm_eps == 1e-12);
    const seqembed::io::Model flaubert = seqembed::io::load_model(root / "flaubert");
    REQUIRE(flaubert.learned()->pipeline.token_types() != nullptr);
    CHECK(flaubert.learned()->pipeline.token_types()->type_vocab_size() == 227);

    // Padded rows are zero whatever the options ask: XLMModel multiplies by the mask.
    seqembed::PipelineOptions computed;
    computed.padded_rows = seqembed::PaddedRows::computed;
    const seqembed::io::LearnedModelInput whole = seqembed::io::load_xlm(root / "xlm", computed);
    CHECK(whole.pipeline.padded_rows() == seqembed::PaddedRows::zero);

    {
        // XLMConfig's older keys, which win where both are given (n_words sets vocab_size,
        // hidden_size sets emb_dim), and its default pad_index 2.
        const BrokenCopy copy("xlm");
        copy.write_config(R"({"model_type": "xlm", "n_words": 226, "vocab_size": 5, "emb_dim": 7, "hidden_size": 16,
                              "max_position_embeddings": 32})");
        const seqembed::io::Model model = seqembed::io::load_model(copy.directory);
        CHECK(model.config().vocab_size == 226);
        CHECK(model.config().hidden_size == 16);
        CHECK(model.learned()->pipeline.embedding().padding_idx() == 2);
        copy.write_config(R"({"model_type": "xlm", "vocab_size": 226, "emb_dim": 16, "max_position_embeddings": 32,
                              "pad_index": 2.5})");
        CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(copy.directory); })
                  .find("'pad_index' is 2.5, not an integer") != std::string::npos);
        // No max_position_embeddings: XLMConfig's 512 rows, which the file's 32 do not have.
        copy.write_config(R"({"model_type": "xlm", "vocab_size": 226, "emb_dim": 16, "n_langs": 2})");
        CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(copy.directory); })
                  .find("transformer.position_embeddings.weight") != std::string::npos);
    }
    CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_xlm(root / "bert"); })
              .find("has another input stage than load_xlm builds") != std::string::npos);
}

TEST_CASE("FSMT: two token tables, the decoder's under its output projection's name, fairseq's positions after the "
          "past",
          "[io][models]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    const seqembed::io::Model model = seqembed::io::load_model(root / "fsmt");
    REQUIRE(model.has_decoder());
    CHECK_FALSE(model.takes_position_ids());
    const seqembed::io::LearnedModelInput& stage = *model.learned();
    CHECK(model.config().vocab_size == 228);
    CHECK(model.config().decoder_vocab_size == 229);
    CHECK(stage.pipeline.embedding().vocab_size() == 228);
    REQUIRE(stage.decoder);
    CHECK(stage.decoder->embedding().vocab_size() == 229);
    // max_position_embeddings + pad_token_id + 1 rows, row 1 zero.
    CHECK(stage.pipeline.positions().max_positions() == 34);
    CHECK(stage.pipeline.positions().table().row(1).isZero(0));
    CHECK(stage.decoder->positions().table() == stage.pipeline.positions().table());

    // The decoder's rows: its own table (the file's output_projection) x sqrt(12) + the row of
    // each real token counted after the past, from pad_token_id + 1.
    const seqembed::io::SafetensorsFile file = seqembed::io::SafetensorsFile::open(root / "fsmt" / "model.safetensors");
    const seqembed::io::Tensor<float> table = file.matrix<float>("model.decoder.output_projection.weight");
    const auto word = [&](Index id) {
        return RowMatrix<float>(Eigen::Map<const RowMatrix<float>>(table.data(), 229, 12).row(id) *
                                static_cast<float>(std::sqrt(12.0)));
    };
    const auto position = [&](Index row) { return RowMatrix<float>(stage.pipeline.positions().table().row(row)); };
    seqembed::IdMatrix next(1, 1);
    next << 228;  // past the encoder's vocabulary
    const RowMatrix<float> step = model.forward_decoder(seqembed::Batch(next, seqembed::Padding::none(), 3));
    CHECK(step.row(0) == (word(228) + position(1 + 3 + 1)).row(0));
    CHECK_THROWS_WITH(model.forward(seqembed::Batch(next)), Catch::Contains("228"));
    CHECK_THROWS_WITH(model.forward(seqembed::Batch(next, seqembed::Padding::none(), 2)),
                      Catch::Contains("takes no past tokens"));

    {
        // tie_word_embeddings: the decoder reads the encoder's table.
        const BrokenCopy copy("fsmt");
        copy.write_config(R"({"model_type": "fsmt", "src_vocab_size": 228, "tgt_vocab_size": 228, "d_model": 12,
                              "max_position_embeddings": 32, "pad_token_id": 1, "tie_word_embeddings": true})");
        const seqembed::io::Model tied = seqembed::io::load_model(copy.directory);
        CHECK(tied.learned()->decoder->embedding().table() == tied.learned()->pipeline.embedding().table());
        // FSMTConfig's defaults: 42024 words on each side, which the file's tables do not have.
        copy.write_config(R"({"model_type": "fsmt", "d_model": 12, "max_position_embeddings": 32})");
        CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(copy.directory); })
                  .find("src_vocab_size x d_model = 42024 x 12") != std::string::npos);
        copy.write_config(R"({"model_type": "fsmt", "src_vocab_size": 228, "tgt_vocab_size": 229, "d_model": 12,
                              "max_position_embeddings": 32, "pad_token_id": null})");
        CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(copy.directory); })
                  .find("'pad_token_id' is null, which FSMT's positions need") != std::string::npos);
    }
    {
        // A file save_pretrained wrote holds the tables' weights: those are read, whatever they hold.
        std::vector<seqembed::io::NamedTensor> tensors;
        for (const auto& info : file.tensors()) tensors.emplace_back(info.name, file.tensor<float>(info.name));
        const RowMatrix<float> saved = RowMatrix<float>::Constant(34, 12, 0.5f);
        tensors.emplace_back("model.encoder.embed_positions.weight", saved);
        test_support::TempDir dir;
        std::filesystem::copy(root / "fsmt" / "config.json", dir / "config.json");
        seqembed::io::save_safetensors(dir / "model.safetensors", tensors);
        const seqembed::io::Model read = seqembed::io::load_model(dir.path());
        CHECK(read.learned()->pipeline.positions().table() == saved);
        CHECK(read.learned()->decoder->positions().table() == stage.decoder->positions().table());
    }
    CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_fsmt(root / "bert"); })
              .find("has another input stage than load_fsmt builds") != std::string::npos);
}

TEST_CASE("TrOCR: standalone or as a vision-encoder-decoder's decoder, learned or sinusoidal positions after the "
          "past, its config's flags",
          "[io][models]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    const seqembed::io::Model handwritten = seqembed::io::load_model(root / "trocr");
    CHECK(handwritten.config().model_type == "trocr");
    CHECK_FALSE(handwritten.has_decoder());
    CHECK_FALSE(handwritten.takes_position_ids());  // TrOCRDecoder.forward takes none
    const seqembed::io::LearnedModelInput& learned = *handwritten.learned();
    CHECK(learned.pipeline.positions().max_positions() == 34);
    CHECK(learned.pipeline.layer_norm() != nullptr);
    CHECK(learned.pipeline.embedding().scale() == 1.0f);

    // The vision-encoder-decoder's decoder: model_type trocr, its config read from `decoder`.
    const seqembed::io::Model printed = seqembed::io::load_model(root / "trocr_printed");
    CHECK(printed.config().model_type == "trocr");
    CHECK(printed.config().vocab_size == 231);
    const seqembed::io::LearnedModelInput& sinusoid = *printed.learned();
    CHECK(sinusoid.pipeline.layer_norm() == nullptr);
    CHECK(sinusoid.pipeline.embedding().scale() == static_cast<float>(std::sqrt(12.0)));
    CHECK(sinusoid.pipeline.positions().max_positions() == 34);
    // After 3 past tokens, a real token reads row 1 + 3 + 1 of the sinusoid.
    seqembed::IdMatrix next(1, 1);
    next << 9;
    const RowMatrix<float> step = printed.forward(seqembed::Batch(next, seqembed::Padding::none(), 3));
    const RowMatrix<float> word = sinusoid.pipeline.embedding().table().row(9) * static_cast<float>(std::sqrt(12.0));
    CHECK(step.row(0) == word + sinusoid.pipeline.positions().table().row(5));

    {
        const BrokenCopy copy("trocr_printed");
        copy.write_config(R"({"model_type": "vision-encoder-decoder", "decoder": {"model_type": "reformer"}})");
        CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(copy.directory); })
                  .find("model_type 'reformer' has no preset") != std::string::npos);
        copy.write_config(R"({"model_type": "vision-encoder-decoder", "decoder": {"vocab_size": 3}})");
        CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(copy.directory); })
                  .find("the 'decoder' of this vision-encoder-decoder has no string 'model_type'") !=
              std::string::npos);
        copy.write_config(R"({"model_type": "vision-encoder-decoder"})");
        CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(copy.directory); })
                  .find("has no 'decoder' object") != std::string::npos);
        // TrOCRConfig's defaults: learned positions and layernorm_embedding, which this file has not.
        copy.write_config(R"({"model_type": "vision-encoder-decoder", "decoder": {"model_type": "trocr",
                              "vocab_size": 231, "d_model": 12, "max_position_embeddings": 32}})");
        CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(copy.directory); })
                  .find("decoder.model.decoder.embed_positions.weight") != std::string::npos);
    }
    CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_trocr(root / "bert"); })
              .find("has another input stage than load_trocr builds") != std::string::npos);
}

TEST_CASE("A vision-encoder-decoder's text decoder loads under decoder.: Donut's MBart as the decoder alone, "
          "taking past tokens, as a standalone MBartForCausalLM, and ViT-GPT-2's GPT-2",
          "[io][models]") {
    const auto root = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";
    const seqembed::io::Model donut = seqembed::io::load_model(root / "donut");
    CHECK(donut.config().model_type == "mbart");
    CHECK(donut.config().tensor_prefix == "decoder.");
    CHECK(donut.config().decoder_only);
    CHECK_FALSE(donut.has_decoder());
    const seqembed::io::LearnedModelInput& stage = *donut.learned();
    CHECK(stage.pipeline.embedding().vocab_size() == 232);
    CHECK(stage.pipeline.positions().max_positions() == 34);
    // The decoder alone takes past tokens: after 3, a token reads row 3 + 2.
    seqembed::IdMatrix ids(1, 2);
    ids << 9, 10;
    const RowMatrix<float> full = donut.forward(seqembed::Batch(ids));
    seqembed::IdMatrix last(1, 1);
    last << 10;
    CHECK(donut.forward(seqembed::Batch(last, seqembed::Padding::none(), 1)).row(0) == full.row(1));

    // MBartForCausalLM saved alone: the same tensors under model.decoder., its architectures say so.
    const seqembed::io::SafetensorsFile file = seqembed::io::SafetensorsFile::open(root / "donut" / "model.safetensors");
    std::vector<seqembed::io::NamedTensor> decoder;
    const std::string prefix = "decoder.";
    for (const auto& info : file.tensors())
        if (info.name.compare(0, prefix.size(), prefix) == 0)
            decoder.emplace_back(info.name.substr(prefix.size()), file.tensor<float>(info.name));
    REQUIRE(decoder.size() == 4);
    test_support::TempDir dir;
    test_support::write_bytes(dir / "config.json", R"({"architectures": ["MBartForCausalLM"], "model_type": "mbart",
        "vocab_size": 232, "d_model": 12, "max_position_embeddings": 32, "pad_token_id": 1, "scale_embedding": true})");
    seqembed::io::save_safetensors(dir / "model.safetensors", decoder);
    const seqembed::io::Model alone = seqembed::io::load_model(dir.path());
    CHECK(alone.config().decoder_only);
    CHECK(alone.config().tensor_prefix.empty());
    CHECK(alone.forward(seqembed::Batch(ids)) == full);
    CHECK(alone.forward(seqembed::Batch(last, seqembed::Padding::none(), 1)).row(0) == full.row(1));
    // Without the architectures an MBart checkpoint is the encoder-decoder, whose tensors this is
    // not (the encoder's table or positions named first, by the compiler's order of arguments).
    test_support::write_bytes(dir / "config.json", R"({"model_type": "mbart", "vocab_size": 232, "d_model": 12,
        "max_position_embeddings": 32, "pad_token_id": 1})");
    CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(dir.path()); })
              .find("has no tensor 'model.") != std::string::npos);
    CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(dir.path()); })
              .find("'model.encoder.") != std::string::npos);

    {
        // A SpeechEncoderDecoderModel holds its text decoder as a VisionEncoderDecoderModel does.
        const BrokenCopy copy("donut");
        std::ifstream in(root / "donut" / "config.json");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const std::string from = "\"model_type\": \"vision-encoder-decoder\"";
        REQUIRE(text.find(from) != std::string::npos);
        text.replace(text.find(from), from.size(), "\"model_type\": \"speech-encoder-decoder\"");
        copy.write_config(text);
        const seqembed::io::Model speech = seqembed::io::load_model(copy.directory);
        CHECK(speech.config().decoder_only);
        CHECK(speech.forward(seqembed::Batch(ids)) == full);
    }

    // A tied head's name, which a deduplicating save of the wrapper may keep for the token table.
    for (const char* family : {"donut", "vit_gpt2"}) {
        INFO(family);
        const seqembed::io::SafetensorsFile source =
            seqembed::io::SafetensorsFile::open(root / family / "model.safetensors");
        std::vector<seqembed::io::NamedTensor> renamed;
        for (const auto& info : source.tensors()) {
            const bool table = info.name == "decoder.model.decoder.embed_tokens.weight" ||
                               info.name == "decoder.transformer.wte.weight";
            renamed.emplace_back(table ? "decoder.lm_head.weight" : info.name, source.tensor<float>(info.name));
        }
        test_support::TempDir copy;
        std::filesystem::copy(root / family / "config.json", copy / "config.json");
        seqembed::io::save_safetensors(copy / "model.safetensors", renamed);
        CHECK(seqembed::io::load_model(copy.path()).forward(seqembed::Batch(ids)) ==
              seqembed::io::load_model(root / family).forward(seqembed::Batch(ids)));
    }
    {
        // Nougat's head does not share the table (tie_word_embeddings false): lm_head is not it.
        const seqembed::io::SafetensorsFile source = seqembed::io::SafetensorsFile::open(root / "donut" / "model.safetensors");
        std::vector<seqembed::io::NamedTensor> renamed;
        for (const auto& info : source.tensors())
            renamed.emplace_back(info.name == "decoder.model.decoder.embed_tokens.weight" ? "decoder.lm_head.weight"
                                                                                            : info.name,
                                 source.tensor<float>(info.name));
        test_support::TempDir copy;
        test_support::write_bytes(copy / "config.json", R"({"model_type": "vision-encoder-decoder", "decoder": {
            "model_type": "mbart", "vocab_size": 232, "d_model": 12, "max_position_embeddings": 32,
            "scale_embedding": true, "tie_word_embeddings": false}})");
        seqembed::io::save_safetensors(copy / "model.safetensors", renamed);
        CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(copy.path()); })
                  .find("'decoder.model.decoder.embed_tokens.weight'") != std::string::npos);
    }
    {
        // The decoder alone of a family without a decoder-only preset is refused by name.
        const BrokenCopy copy("donut");
        copy.write_config(R"({"architectures": ["MarianForCausalLM"], "model_type": "marian", "vocab_size": 232,
                              "d_model": 12, "max_position_embeddings": 32})");
        CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(copy.directory); })
                  .find("the decoder alone of model_type 'marian'") != std::string::npos);
    }

    const seqembed::io::Model captioner = seqembed::io::load_model(root / "vit_gpt2");
    CHECK(captioner.config().model_type == "gpt2");
    CHECK_FALSE(captioner.config().decoder_only);  // GPT-2 is a decoder itself
    CHECK(captioner.learned()->pipeline.positions().max_positions() == 32);
    // A missing tensor is named with the prefix, as the file would hold it.
    const BrokenCopy copy("vit_gpt2");
    copy.write_config(R"({"model_type": "vision-encoder-decoder", "decoder": {"model_type": "bert", "vocab_size": 233,
                          "hidden_size": 12, "max_position_embeddings": 32, "type_vocab_size": 2}})");
    CHECK(message_of<seqembed::error>([&] { (void)seqembed::io::load_model(copy.directory); })
              .find("has no tensor 'decoder.bert.embeddings.") != std::string::npos);
}
