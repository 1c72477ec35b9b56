// seqembed::io::read_rotary_config: every fixture config.json (tests/fixtures/rope/rope_cases.hpp)
// read from a file gives Hugging Face's float32 inv_freq, attention scaling and cos/sin bit for
// bit; broken configs are errors naming the file and the key.
#include <seqembed/io/rotary_config.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "catch.hpp"
#include "fixtures/rope/rope_cases.hpp"
#include "io_test_support.hpp"

using seqembed::BeyondTable;
using seqembed::Index;
using seqembed::RotaryEmbedding;
using seqembed::RotaryLayout;
using seqembed::RotaryOptions;
using seqembed::RotaryScaling;
using seqembed::RowMatrix;
using seqembed::TablePrecision;
using seqembed::io::read_rotary_config;

namespace fx = seqembed_rope_fixtures;

TEST_CASE("rotary: Every fixture config.json gives Hugging Face's inv_freq, attention scaling and tables bit for bit",
          "[io][rotary]") {
    test_support::TempDir scratch;
    for (const fx::FrequencyCase& c : fx::frequency_cases) {
        INFO("case " << c.name << ": " << c.config_json);
        const auto file = scratch / (std::string(c.name) + ".json");
        test_support::write_bytes(file, c.config_json);
        RotaryOptions options = read_rotary_config(file);
        CHECK(options.head_dim == c.head_dim);
        CHECK(options.layout == RotaryLayout::halves);
        CHECK(options.max_positions > 0);
        const std::string rule = c.rule;
        CHECK(options.scaling == (rule == "default"    ? RotaryScaling::none
                                  : rule == "linear"   ? RotaryScaling::linear
                                  : rule == "dynamic"  ? RotaryScaling::dynamic
                                  : rule == "yarn"     ? RotaryScaling::yarn
                                  : rule == "llama3"   ? RotaryScaling::llama3
                                                       : RotaryScaling::longrope));
        CHECK(options.sequence_length == 0);  // dynamic and longrope: per call
        options.precision = TablePrecision::follow_scalar;
        options.max_positions = 8;
        options.beyond = BeyondTable::compute;
        if (rule == "dynamic" || rule == "longrope") {
            // As read: the frequencies of each call's length, the fixture's call included.
            const RotaryEmbedding<float> per_call(options);
            CHECK(per_call.per_call());
            const std::vector<float> inv_freq = per_call.inverse_frequencies(c.sequence_length);
            for (Index i = 0; i < per_call.pairs(); ++i)
                CHECK(inv_freq[static_cast<std::size_t>(i)] == static_cast<float>(c.inv_freq_f32[i]));
            RowMatrix<float> cos(1, per_call.pairs()), sin(1, per_call.pairs());
            for (long r = 0; r < c.position_count; ++r) {
                per_call.forward_into(c.positions[r], cos, sin, c.sequence_length);
                for (Index i = 0; i < per_call.pairs(); ++i) {
                    CHECK(cos(0, i) == static_cast<float>(c.follow_cos_f32[r * per_call.pairs() + i]));
                    CHECK(sin(0, i) == static_cast<float>(c.follow_sin_f32[r * per_call.pairs() + i]));
                }
            }
        }
        options.sequence_length = c.sequence_length;  // fixed: the same frequencies for every call
        const RotaryEmbedding<float> rope(options);
        CHECK(rope.rotary_dim() == c.rotary_dim);
        CHECK(rope.attention_scaling() == c.attention_scaling);
        for (Index i = 0; i < rope.pairs(); ++i)
            CHECK(rope.inverse_frequencies()[static_cast<std::size_t>(i)] == static_cast<float>(c.inv_freq_f32[i]));
        RowMatrix<float> cos(1, rope.pairs()), sin(1, rope.pairs());
        for (long r = 0; r < c.position_count; ++r) {
            rope.forward_into(c.positions[r], cos, sin);
            for (Index i = 0; i < rope.pairs(); ++i) {
                CHECK(cos(0, i) == static_cast<float>(c.follow_cos_f32[r * rope.pairs() + i]));
                CHECK(sin(0, i) == static_cast<float>(c.follow_sin_f32[r * rope.pairs() + i]));
            }
        }
        // The exact frequencies from the file are the real ones, as mpmath has them.
        options.precision = TablePrecision::exact;
        const RotaryEmbedding<double> exact(options);
        for (Index i = 0; i < exact.pairs(); ++i)
            CHECK(std::fabs(exact.frequencies()[static_cast<std::size_t>(i)] - c.frequency_exact[i]) <=
                  c.frequency_exact[i] * 0x1p-52);
    }
}

TEST_CASE("rotary: Family conventions: GPT-J's rotary_dim and interleaved pairs, GPT-NeoX's rotary_pct, legacy keys",
          "[io][rotary]") {
    const auto parse = [](const char* text) {
        return seqembed::io::rotary_options_from_json(nlohmann::json::parse(text), "config.json");
    };
    const RotaryOptions gptj =
        parse(R"({"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": 64, "n_positions": 2048})");
    CHECK(gptj.layout == RotaryLayout::interleaved);
    CHECK(gptj.head_dim == 256);
    CHECK(gptj.rotary_dim == 64);
    CHECK(gptj.max_positions == 2048);
    CHECK(gptj.base == 10000.0);
    // GPTJConfig's rotary_dim default 64; create_sinusoidal_positions ignores rope_theta and any rule.
    const RotaryOptions bare = parse(R"({"model_type": "codegen", "n_embd": 1024, "n_head": 16, "n_positions": 2048,
                                         "rope_theta": 500.0, "rope_scaling": {"rope_type": "linear", "factor": 2.0}})");
    CHECK(bare.rotary_dim == 64);
    CHECK(bare.base == 10000.0);
    CHECK(bare.scaling == seqembed::RotaryScaling::none);
    const RotaryOptions neox = parse(R"({"model_type": "gpt_neox", "hidden_size": 6144, "num_attention_heads": 64,
                                         "rotary_pct": 0.25, "rotary_emb_base": 10000, "max_position_embeddings": 2048})");
    CHECK(neox.layout == RotaryLayout::halves);
    CHECK(RotaryEmbedding<float>(neox).rotary_dim() == 24);
    const RotaryOptions su = parse(R"({"hidden_size": 64, "num_attention_heads": 2, "max_position_embeddings": 8192,
        "original_max_position_embeddings": 4096,
        "rope_scaling": {"type": "su", "short_factor": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],
                         "long_factor": [2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2]}})");
    CHECK(su.scaling == RotaryScaling::longrope);
    CHECK(su.factor == 2.0);
    CHECK(su.original_max_position_embeddings == 4096);
    const RotaryOptions v5 = parse(R"({"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072,
        "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
                            "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})");
    CHECK(v5.scaling == RotaryScaling::llama3);
    CHECK(v5.base == 500000.0);
    const RotaryOptions plain = parse(R"({"hidden_size": 4096, "num_attention_heads": 32, "rope_scaling": null})");
    CHECK(plain.scaling == RotaryScaling::none);
    CHECK(plain.base == 10000.0);
    const RotaryOptions yarn = parse(R"({"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096,
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "beta_fast": null, "beta_slow": 0}})");
    CHECK(yarn.beta_fast == 32.0);  // `get("beta_fast") or 32`
    CHECK(yarn.beta_slow == 1.0);
    CHECK(yarn.original_max_position_embeddings == 4096);
    // standardize_rope_params: the top-level original length before the rule's, and phi3's
    // config class always has one (4096 by default); an explicit factor before the ratio.
    const RotaryOptions both = parse(R"({"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 65536,
        "original_max_position_embeddings": 2048,
        "rope_scaling": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 8192}})");
    CHECK(both.original_max_position_embeddings == 2048);
    CHECK(both.factor == 8.0);
    const RotaryOptions phi3 = parse(R"({"model_type": "phi3", "hidden_size": 64, "num_attention_heads": 2,
        "max_position_embeddings": 65536,
        "rope_scaling": {"type": "longrope", "original_max_position_embeddings": 8192,
                         "short_factor": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],
                         "long_factor": [2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2]}})");
    CHECK(phi3.original_max_position_embeddings == 4096);
    CHECK(phi3.factor == 16.0);  // 65536 / 4096
    const RotaryOptions llama3 = parse(R"({"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 8192,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}})");
    CHECK(llama3.original_max_position_embeddings == 8192);
}

TEST_CASE("rotary: Hunyuan's NTK-alpha is a fixed base over the whole head, theta x alpha^(d / (d - 2)) in float32",
          "[io][rotary]") {
    const auto parse = [](const char* text) {
        return seqembed::io::rotary_options_from_json(nlohmann::json::parse(text), "config.json");
    };
    // Hunyuan-7B-Instruct's: 10000 x 1000^(128 / 126) = 11158839.92... in double, 11158840 in
    // float32 as torch's pow takes it; the rule then the default one (its factor 1 and yarn-like
    // keys unread).
    const RotaryOptions seven = parse(R"({"model_type": "hunyuan_v1_dense", "hidden_size": 4096,
        "num_attention_heads": 32, "head_dim": 128, "max_position_embeddings": 32768, "rope_theta": 10000.0,
        "rope_scaling": {"type": "dynamic", "alpha": 1000.0, "factor": 1.0, "beta_fast": 32, "beta_slow": 1,
                         "mscale": 1.0, "mscale_all_dim": 1.0}})");
    CHECK(seven.scaling == RotaryScaling::none);
    CHECK(seven.base == 11158840.0);
    CHECK(seven.head_dim == 128);
    const std::vector<float> inv = RotaryEmbedding<float>(seven).inverse_frequencies();
    REQUIRE(inv.size() == 64);
    // The lowest frequency is plain theta's divided by alpha (to float32 rounding).
    CHECK(std::abs(static_cast<double>(inv[63]) / std::pow(10000.0, -126.0 / 128.0) * 1000.0 - 1.0) < 2e-7);
    // Without head_dim (Hunyuan-A13B's config): hidden_size / num_attention_heads, as Tencent's
    // code takes it, not attention_head_dim; no factor needed.
    const RotaryOptions a13b = parse(R"({"model_type": "hunyuan_v1_moe", "hidden_size": 4096,
        "num_attention_heads": 32, "attention_head_dim": 64, "rope_scaling": {"type": "dynamic", "alpha": 1000.0}})");
    CHECK(a13b.head_dim == 128);
    CHECK(a13b.base == 11158840.0);
    // Without alpha it is the dynamic rule; another family's alpha is not read.
    const RotaryOptions dynamic = parse(R"({"model_type": "hunyuan_v1_dense", "hidden_size": 256,
        "num_attention_heads": 2, "head_dim": 128, "rope_scaling": {"type": "dynamic", "factor": 2.0}})");
    CHECK(dynamic.scaling == RotaryScaling::dynamic);
    CHECK(dynamic.base == 10000.0);
    const RotaryOptions other = parse(R"({"model_type": "llama", "hidden_size": 256, "num_attention_heads": 2,
        "max_position_embeddings": 64, "rope_scaling": {"type": "dynamic", "factor": 2.0, "alpha": 1000.0}})");
    CHECK(other.scaling == RotaryScaling::dynamic);
    CHECK_THROWS_WITH(parse(R"({"model_type": "hunyuan_v1_dense", "hidden_size": 256, "num_attention_heads": 2,
                               "head_dim": 128, "rope_scaling": {"type": "dynamic", "alpha": -2.0}})"),
                      Catch::Contains("'rope_scaling.alpha' is -2, must be positive"));
    CHECK_THROWS_WITH(parse(R"({"model_type": "hunyuan_v1_dense", "hidden_size": 256, "num_attention_heads": 2,
                               "head_dim": 128, "rope_theta": 1e300,
                               "rope_scaling": {"type": "dynamic", "alpha": 9.0}})"),
                      Catch::Contains("puts the base past float32's range"));
}

TEST_CASE("rotary: Phi-3 and Phi-3.5 configs (model_type phi3): -4k the default rule, -128k LongRoPE per call with "
          "the lengths from the top level, Phi-4-mini's partial rotary",
          "[io][rotary]") {
    const auto parse = [](const std::string& text) {
        return seqembed::io::rotary_options_from_json(nlohmann::json::parse(text), "config.json");
    };
    const auto factors = [](double value, int count) {
        std::string list = "[";
        for (int i = 0; i < count; ++i) list += (i ? ", " : "") + std::to_string(value + 0.01 * i);
        return list + "]";
    };
    // microsoft/Phi-3-mini-4k-instruct's keys.
    const RotaryOptions mini_4k = parse(R"({"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32,
        "num_key_value_heads": 32, "max_position_embeddings": 4096, "original_max_position_embeddings": 4096,
        "rope_theta": 10000.0, "rope_scaling": null, "sliding_window": 2047})");
    CHECK(mini_4k.scaling == RotaryScaling::none);
    CHECK(mini_4k.head_dim == 96);
    CHECK(mini_4k.max_positions == 4096);
    CHECK_FALSE(RotaryEmbedding<float>(mini_4k).per_call());
    // Phi-3-mini-128k-instruct and Phi-3.5-mini-instruct: the same keys, 48 factors each.
    for (const char* type : {"longrope", "su"}) {
        INFO("rope_scaling.type " << type);
        const RotaryOptions mini_128k = parse(
            std::string(R"({"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32,
            "max_position_embeddings": 131072, "original_max_position_embeddings": 4096, "rope_theta": 10000.0,
            "rope_scaling": {"type": ")") +
            type + R"(", "short_factor": )" + factors(1.0, 48) + R"(, "long_factor": )" + factors(1.5, 48) + "}}");
        CHECK(mini_128k.scaling == RotaryScaling::longrope);
        CHECK(mini_128k.original_max_position_embeddings == 4096);
        CHECK(mini_128k.factor == 32.0);
        CHECK(mini_128k.sequence_length == 0);
        CHECK(mini_128k.short_factor.size() == 48);
        RotaryOptions small = mini_128k;
        small.max_positions = 16;
        small.beyond = BeyondTable::compute;
        const RotaryEmbedding<float> rope(small);
        CHECK(rope.per_call());
        CHECK(rope.rotary_dim() == 96);
        // Hugging Face's attention factor from 131072 / 4096, short and long calls alike.
        CHECK(rope.attention_scaling() == std::sqrt(1 + std::log(32.0) / std::log(4096.0)));
        CHECK(rope.inverse_frequencies(4096) == rope.inverse_frequencies());
        CHECK(rope.inverse_frequencies(4097) != rope.inverse_frequencies());
    }
    // microsoft/Phi-4-mini-instruct: 24 heads of 128, three quarters rotated.
    const RotaryOptions phi4 = parse(R"({"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 24,
        "num_key_value_heads": 8, "partial_rotary_factor": 0.75, "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096, "rope_theta": 10000.0,
        "rope_scaling": {"type": "longrope", "short_factor": )" +
                                     factors(1.0, 48) + R"(, "long_factor": )" + factors(1.5, 48) + "}}");
    CHECK(phi4.head_dim == 128);
    CHECK(phi4.partial_rotary_factor == 0.75);
    RotaryOptions small = phi4;
    small.max_positions = 16;
    CHECK(RotaryEmbedding<float>(small).rotary_dim() == 96);
}

TEST_CASE("rotary: A broken rotary config is an error naming the file and the key", "[io][rotary]") {
    test_support::TempDir scratch;
    const auto fails = [&](const std::string& text, std::initializer_list<std::string> words) {
        INFO("config: " << text);
        const auto file = scratch / "config.json";
        test_support::write_bytes(file, text);
        test_support::require_error<seqembed::format_error>([&] { (void)read_rotary_config(file); }, words);
    };
    const std::string shape = R"("hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096)";
    fails("not json", {"config.json", "is not a JSON object"});
    fails("[1, 2]", {"is not a JSON object"});
    fails("{" + shape + R"(, "rope_theta": "big"})", {"config.json", "'rope_theta' is \"big\", not a finite number"});
    fails("{" + shape + R"(, "rope_theta": 1.0})", {"'rope_theta' is 1, must be greater than 1"});
    fails("{" + shape + R"(, "rope_theta": -3})", {"'rope_theta' is -3"});
    fails(R"({"num_attention_heads": 32})", {"has no key 'hidden_size' or 'n_embd' or 'd_model'"});
    fails(R"({"hidden_size": 4096, "num_attention_heads": 0})", {"'num_attention_heads'", "not a positive integer"});
    fails(R"({"head_dim": -64, "hidden_size": 4096, "num_attention_heads": 32})", {"'head_dim' is -64"});
    fails("{" + shape + R"(, "partial_rotary_factor": 1.5})", {"'partial_rotary_factor' is 1.5, must be in (0, 1]"});
    fails("{" + shape + R"(, "rotary_pct": 0})", {"'rotary_pct' is 0"});
    fails(R"({"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": 0})", {"'rotary_dim'"});
    fails("{" + shape + R"(, "rope_scaling": 5})", {"'rope_scaling' is 5, not an object or null"});
    fails("{" + shape + R"(, "rope_scaling": {"factor": 2.0}})", {"'rope_scaling' has neither 'rope_type' nor 'type'"});
    fails("{" + shape + R"(, "rope_scaling": {"rope_type": "ntk_alpha"}})",
          {"'rope_scaling.rope_type' is 'ntk_alpha'", "default, linear, dynamic, yarn, llama3, longrope"});
    fails("{" + shape + R"(, "rope_scaling": {"type": 3}})", {"'rope_scaling.type' is 3, not a string"});
    fails("{" + shape + R"(, "rope_scaling": {"rope_type": "linear"}})",
          {"has no 'rope_scaling.factor', which the linear rope_type needs"});
    fails("{" + shape + R"(, "rope_scaling": {"rope_type": "linear", "factor": 0.5}})",
          {"'rope_scaling.factor' is 0.5, must be at least 1"});
    fails("{" + shape + R"(, "rope_scaling": {"rope_type": "linear", "factor": "2"}})",
          {"'rope_scaling.factor' is \"2\", not a finite number"});
    fails("{" + shape + R"(, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "high_freq_factor": 4.0,
                             "original_max_position_embeddings": 8192}})",
          {"has no 'rope_scaling.low_freq_factor', which the llama3 rope_type needs"});
    fails("{" + shape + R"(, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 4.0,
                             "high_freq_factor": 1.0, "original_max_position_embeddings": 8192}})",
          {"'rope_scaling.high_freq_factor' is 1, must be at least low_freq_factor"});
    fails("{" + shape + R"(, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                             "high_freq_factor": 4.0, "original_max_position_embeddings": 8192.5}})",
          {"'rope_scaling.original_max_position_embeddings' is 8192.5, not a positive integer"});
    fails("{" + shape + R"(, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "truncate": "no"}})",
          {"'rope_scaling.truncate' is \"no\", not true or false"});
    fails("{" + shape + R"(, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "attention_factor": -1}})",
          {"'rope_scaling.attention_factor' is -1, must be positive"});
    fails("{" + shape + R"(, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "beta_fast": -2}})",
          {"'rope_scaling.beta_fast' is -2, must be positive"});
    fails(R"({"hidden_size": 4096, "num_attention_heads": 32, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}})",
          {"has no 'max_position_embeddings', which the dynamic rope_type needs"});
    fails("{" + shape + R"(, "rope_scaling": {"rope_type": "longrope", "factor": 2.0, "long_factor": [1, 2]}})",
          {"has no 'rope_scaling.short_factor'"});
    fails("{" + shape + R"(, "rope_scaling": {"rope_type": "longrope", "factor": 2.0, "short_factor": {"a": 1},
                             "long_factor": [1]}})",
          {"'rope_scaling.short_factor' is {\"a\":1}, not a list of numbers"});
    fails("{" + shape + R"(, "rope_scaling": {"rope_type": "longrope", "factor": 2.0, "short_factor": [1, "x"],
                             "long_factor": [1]}})",
          {"'rope_scaling.short_factor' holds \"x\", not a finite positive number"});
    fails("{" + shape + R"(, "rope_scaling": {"rope_type": "longrope", "factor": 2.0, "short_factor": [1, 0],
                             "long_factor": [1]}})",
          {"'rope_scaling.short_factor' holds 0"});
    test_support::require_error<seqembed::file_error>([&] { (void)read_rotary_config(scratch / "missing.json"); },
                                                 {"missing.json", "cannot open"});

    // Values the reader accepts but the component rejects (a list of the wrong length) are the
    // component's value_error.
    const auto file = scratch / "config.json";
    test_support::write_bytes(file, "{" + shape + R"(, "rope_scaling": {"rope_type": "longrope", "factor": 2.0,
                                  "short_factor": [1, 1], "long_factor": [1, 1]}})");
    const RotaryOptions options = read_rotary_config(file);
    test_support::require_error<seqembed::value_error>([&] { RotaryEmbedding<float> rope(options); },
                                                  {"short_factor has 2 values, expected rotary_dim/2 = 64"});
}
