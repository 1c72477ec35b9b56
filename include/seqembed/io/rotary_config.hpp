/// @file io/rotary_config.hpp
/// @brief RotaryOptions from a Hugging Face config.json: rope_theta, rope_scaling (every rule of
///        modeling_rope_utils.py), the rotated share of the head and its width.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../rotary.hpp"
#include "detail/config_json.hpp"
#include "detail/decoder_families.hpp"
#include "detail/path_name.hpp"
#include "errors.hpp"

namespace seqembed::io {

/// @brief The rotary options a model's config.json describes, as Hugging Face's
///        modeling_rope_utils.py reads them.
///
/// - Keys the file leaves out take the family's config-class defaults (detail/decoder_families.hpp:
///   gpt-oss's theta 150000 and yarn rule, GLM's partial_rotary_factor 0.5, Apertus's llama3
///   rule, ...), and the keys a config class renames or forces are read as it reads them
///   (DBRX's attn_config.rope_theta, DeepSeek's qk_rope_head_dim as head_dim, Cohere 2's
///   hidden_size / num_attention_heads whatever head_dim says).
/// - base: `rope_theta` (GPT-NeoX's `rotary_emb_base`), 10000 when absent and the family has no
///   default of its own (Cohere's 500000, its default in transformers 5; 4.x took 10000).
/// - head_dim: `head_dim`, else `hidden_size // num_attention_heads` (`n_embd`, `n_head`).
/// - rotated part: `partial_rotary_factor` or GPT-NeoX's `rotary_pct`; GPT-J's and CodeGen's
///   `rotary_dim` (dimensions, 64 when absent). Layout: interleaved for model_type "gptj" and
///   "codegen" (rotate_every_two; base 10000 and no rule, whatever the config says, as
///   create_sinusoidal_positions), "cohere", "cohere2", "llama4", "llama4_text", "helium",
///   "glm", "glm4", "glm4v" (the first half of each head), "ernie4_5", "ernie4_5_moe", "cohere2_vision",
///   "deepseek_v2", "kimi_k2" and "deepseek_v3"
///   (unless rope_interleave is false; Hugging Face's DeepSeek-V3 reorders each rotated vector
///   as the pairs' first values then their second, which no q . k sees), halves for every other
///   family.
/// - rule: `rope_scaling` (or transformers 5's `rope_parameters`) with `rope_type` or the legacy
///   `type`: "default" ("mrope", Qwen2-VL's, too), "linear", "dynamic", "yarn", "llama3",
///   "longrope" ("su", Phi-3's early name for it, too), with the keys Hugging Face reads for each, as transformers 5 reads them:
///   factor; yarn's attention_factor, beta_fast, beta_slow, mscale, mscale_all_dim and truncate;
///   llama3's low_freq_factor and high_freq_factor; longrope's short_factor, long_factor and
///   attention_factor. For yarn, llama3 and longrope, original_max_position_embeddings is the
///   top-level key when the config has one (Phi-3's place), else the rule's, else
///   max_position_embeddings (for model_type "phi3", whose config class always has the
///   attribute: the top-level key, else its default 4096). Yarn's factor is the rule's
///   (transformers 4.46 to 4.55 replaced it by max_position_embeddings / original when
///   original was given, which made Qwen2.5's model-card YaRN block a factor of 1; PR 40320
///   changed it back); longrope's is the rule's, else that ratio. Dynamic uses
///   max_position_embeddings as the trained length. Hunyuan's (model_type "hunyuan_v1_dense",
///   "hunyuan_v1_moe") dynamic rule with `alpha` is a fixed base instead, theta x
///   alpha^(head_dim / (head_dim - 2)) rounded to float32, as its rotary module computes it.
/// - M-RoPE: `mrope_section` of the rule, in blocks (Qwen2-VL, Qwen2.5-VL, GLM-4V, whose default
///   is [8, 12, 12]) or interleaved (Qwen3-VL, always; [24, 20, 20] by default). The multimodal
///   checkpoints' keys are read from their text_config.
///   Phi-3 and Phi-3.5 (model_type "phi3"): -4k has no rope_scaling (the default rule), -128k
///   has {"type": "longrope", short_factor, long_factor} with the lengths at the top level;
///   Phi-4-mini adds partial_rotary_factor. PhiMoE (model_type "phimoe"): its LongRoPE's
///   attention factor is short_mscale, which must equal long_mscale (Phi-3.5-MoE's do).
/// - Zamba 2 (model_type "zamba2"): head_dim is attention_head_dim (2 x hidden_size /
///   num_attention_heads); with use_long_context and use_mem_rope, the base is rope_theta x
///   8^(d / (d - 2)) as Zamba2Config sets it. MiniMax: the whole head (rotary_dim and
///   partial_rotary_factor are not read, as Hugging Face's port).
/// - max_positions (table rows): `max_position_embeddings` (`n_positions`) when present.
///
/// sequence_length is left at 0: dynamic NTK and LongRoPE choose their frequencies per call,
/// from each call's largest position, as Hugging Face's forward does (RotaryOptions::
/// sequence_length). Precision (exact) and beyond (throw_error) keep their defaults.
/// @param config the parsed config.json.
/// @param source the file's name, for messages.
/// @return the options (validated by RotaryEmbedding's constructor, not here).
/// @throws format_error naming source and the key: a key of the wrong type, a missing key a
///         rule needs, an unknown rope_type, a config that is not an object.
inline RotaryOptions rotary_options_from_json(const nlohmann::json& config, const std::string& source = "config.json");

/// @brief Reads config.json and returns its rotary options (see rotary_options_from_json): one
///        stage from the top-level keys. The models with two (Gemma 3's global and
///        sliding-window layers, whose multimodal config.json nests them in text_config;
///        ModernBERT's global_rope_theta and local_rope_theta) are read by their loaders into
///        `rotary` and `local_rotary` (io/models.hpp).
/// @param file the config.json file.
/// @return the options.
/// @throws file_error if it cannot be read; format_error for invalid JSON or as
///         rotary_options_from_json.
inline RotaryOptions read_rotary_config(const std::filesystem::path& file);

namespace detail {

/// Reads the keys of one JSON object (the config, or its rope_scaling), naming them in messages
/// as they are spelled in the file ("rope_scaling.factor").
class RopeKeys {
public:
    RopeKeys(const nlohmann::json& object, std::string source, std::string prefix)
        : m_object(object), m_source(std::move(source)), m_prefix(std::move(prefix)) {}

    bool has(const char* key) const { return find(key) != nullptr; }

    /// A finite number, or none when the key is absent or null.
    std::optional<double> number(const char* key) const {
        const nlohmann::json* value = find(key);
        if (value == nullptr) return std::nullopt;
        if (!value->is_number() || !std::isfinite(value->get<double>())) fail(key, *value, "a finite number");
        return value->get<double>();
    }
    double required_number(const char* key, const char* rule) const {
        const std::optional<double> value = number(key);
        if (!value) missing(key, rule);
        return *value;
    }
    /// Throws unless the value read from key is in its domain (a RotaryOptions rule, checked
    /// here too so that the message names the file and the key).
    void require(bool in_domain, const char* key, double value, const char* domain) const {
        if (!in_domain)
            seqembed::detail::fail<format_error>(m_source, ": '", m_prefix, key, "' is ", value, ", ", domain);
    }
    /// A positive integer, or none.
    std::optional<Index> count(const char* key) const {
        const nlohmann::json* value = find(key);
        if (value == nullptr) return std::nullopt;
        if (!value->is_number_integer() || value->get<std::int64_t>() <= 0) fail(key, *value, "a positive integer");
        return static_cast<Index>(value->get<std::int64_t>());
    }
    std::optional<bool> boolean(const char* key) const {
        const nlohmann::json* value = find(key);
        if (value == nullptr) return std::nullopt;
        if (!value->is_boolean()) fail(key, *value, "true or false");
        return value->get<bool>();
    }
    std::optional<std::string> text(const char* key) const {
        const nlohmann::json* value = find(key);
        if (value == nullptr) return std::nullopt;
        if (!value->is_string()) fail(key, *value, "a string");
        return value->get<std::string>();
    }
    /// A list of finite numbers (longrope's factors).
    std::vector<double> numbers(const char* key, const char* rule) const {
        const nlohmann::json* value = find(key);
        if (value == nullptr) missing(key, rule);
        if (!value->is_array()) fail(key, *value, "a list of numbers");
        std::vector<double> out;
        out.reserve(value->size());
        for (const nlohmann::json& item : *value) {
            if (!item.is_number() || !std::isfinite(item.get<double>()) || !(item.get<double>() > 0))
                seqembed::detail::fail<format_error>(m_source, ": '", m_prefix, key, "' holds ", item.dump(),
                                                     ", not a finite positive number");
            out.push_back(item.get<double>());
        }
        return out;
    }

    /// Three non-negative integers (M-RoPE's mrope_section), or none.
    std::optional<std::array<Index, 3>> triple(const char* key) const {
        const nlohmann::json* value = find(key);
        if (value == nullptr) return std::nullopt;
        if (!value->is_array() || value->size() != 3) fail(key, *value, "a list of three integers");
        std::array<Index, 3> out{};
        for (std::size_t a = 0; a < 3; ++a) {
            const nlohmann::json& item = (*value)[a];
            if (!item.is_number_integer() || item.get<std::int64_t>() < 0 || item.get<std::int64_t>() > (1 << 20))
                fail(key, *value, "a list of three non-negative integers");
            out[a] = static_cast<Index>(item.get<std::int64_t>());
        }
        return out;
    }

    [[noreturn]] void missing(const char* key, const char* rule) const {
        seqembed::detail::fail<format_error>(m_source, ": has no '", m_prefix, key, "', which the ", rule,
                                             " rope_type needs");
    }

private:
    const nlohmann::json* find(const char* key) const { return find_key(m_object, {key}); }

    [[noreturn]] void fail(const char* key, const nlohmann::json& value, const char* expected) const {
        std::string shown = value.dump();
        if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
        seqembed::detail::fail<format_error>(m_source, ": '", m_prefix, key, "' is ", shown, ", not ", expected);
    }

    const nlohmann::json& m_object;
    std::string m_source;
    std::string m_prefix;
};

inline RotaryScaling rope_rule(const std::string& type, const std::string& source, const std::string& key) {
    // Qwen2-VL's and Qwen2.5-VL's "mrope" is the default rule (their config classes rename it);
    // its mrope_section splits the frequencies among three position ids, equal for text.
    if (type == "default" || type == "mrope") return RotaryScaling::none;
    if (type == "linear") return RotaryScaling::linear;
    if (type == "dynamic") return RotaryScaling::dynamic;
    if (type == "yarn") return RotaryScaling::yarn;
    if (type == "llama3") return RotaryScaling::llama3;
    if (type == "longrope" || type == "su") return RotaryScaling::longrope;
    seqembed::detail::fail<format_error>(source, ": '", key, "' is '", type,
                                         "', not a rule seqembed computes (default, linear, dynamic, yarn, llama3, "
                                         "longrope)");
}

/// The language model's keys of a config: its text_config where the multimodal checkpoints keep
/// them (text_config_of: Gemma 3's, Llama 4's, Mistral 3's and Qwen3-VL's always, Qwen2-VL's
/// when saved by transformers 4.53 and later, GLM-4V's, LLaVA's and PaliGemma's when it has one),
/// under the config's model_type; Gemma 3's over Gemma3TextConfig's defaults and LLaVA's and
/// PaliGemma's over their language model's config class's, which their configs leave out. Other
/// configs as they are.
inline nlohmann::json language_keys(const nlohmann::json& given, const std::string& model_type) {
    const auto text = given.find("text_config");
    const bool nested = text != given.end() && text->is_object() && text_config_of(model_type) != TextConfig::top_level;
    const bool gemma3 = model_type == "gemma3" || model_type == "gemma3_text";
    const bool vision_language = is_vision_language_family(model_type);
    if (!nested && !gemma3 && !vision_language) return given;
    nlohmann::json merged = gemma3 ? gemma3_text_defaults() : nlohmann::json::object();
    std::string language;
    if (vision_language) {
        const auto kept = given.find("language_model_type");  // a config language_config has merged
        language = kept != given.end() && kept->is_string() ? kept->get<std::string>()
                                                            : language_model_type(nested ? &*text : nullptr, model_type);
        const nlohmann::json defaults = language_model_defaults(model_type, language, nested);
        if (defaults.is_object()) merged = defaults;
    }
    merged.update(nested ? *text : given);
    merged.erase("text_config");
    merged["model_type"] = model_type;
    if (!language.empty()) merged["language_model_type"] = language;  // whose conventions it follows
    return merged;
}

}  // namespace detail

inline RotaryOptions rotary_options_from_json(const nlohmann::json& whole, const std::string& source) {
    if (!whole.is_object()) seqembed::detail::fail<format_error>(source, ": is not a JSON object");
    const std::string model_type = detail::RopeKeys(whole, source, "").text("model_type").value_or("");
    // A wrapper's language model: a vision- or speech-encoder-decoder's `decoder`, BLIP-2's and
    // InstructBLIP's `text_config` (OPT's without a model_type).
    if (detail::is_decoder_wrapper(model_type) || detail::is_language_wrapper(model_type)) {
        const char* key = detail::is_decoder_wrapper(model_type) ? "decoder" : "text_config";
        const auto inner = whole.find(key);
        nlohmann::json language =
            inner != whole.end() && inner->is_object() ? *inner : nlohmann::json(nlohmann::json::object());
        if (!language.contains("model_type") && detail::is_language_wrapper(model_type))
            language["model_type"] = "opt";
        return rotary_options_from_json(language, source);
    }
    // Gemma 3's rotary stage read here is its global layers' (rope_theta and the rule).
    const nlohmann::json given = detail::language_keys(whole, model_type);
    // The config class's defaults where the file leaves keys out (gpt-oss's yarn rule, GLM's
    // partial_rotary_factor 0.5, ...), and the keys it renames or forces.
    const nlohmann::json config = detail::with_family_defaults(given, model_type);
    const detail::RopeKeys top(config, source, "");
    RotaryOptions options;

    const bool rotate_every_two = model_type == "gptj" || model_type == "codegen";
    if (rotate_every_two) {
        // create_sinusoidal_positions takes base 10000 and no rule, whatever the config says.
        nlohmann::json fixed = config;
        bool erased = false;
        for (const char* key : {"rope_theta", "rotary_emb_base", "rope_scaling", "rope_parameters"})
            erased = fixed.erase(key) > 0 || erased;
        if (erased) return rotary_options_from_json(fixed, source);
    }
    // Cohere, Cohere 2, Llama 4, Helium, GLM, GLM-4, ERNIE 4.5 and DeepSeek rotate interleaved
    // pairs too (frequencies repeat_interleave'd, or complex products).
    options.layout = rotate_every_two || detail::rotates_interleaved(config, model_type) ? RotaryLayout::interleaved
                                                                                          : RotaryLayout::halves;

    // transformers 5 moves rope_theta and the rule into rope_parameters; 4.x has rope_scaling.
    const nlohmann::json* parameters = detail::find_key(config, {"rope_parameters"});
    const char* scaling_key = parameters != nullptr ? "rope_parameters" : "rope_scaling";
    const nlohmann::json* scaling = parameters != nullptr ? parameters : detail::find_key(config, {"rope_scaling"});
    if (scaling != nullptr && !scaling->is_object())
        seqembed::detail::fail<format_error>(source, ": '", scaling_key, "' is ", scaling->dump(),
                                             ", not an object or null");
    const nlohmann::json empty = nlohmann::json::object();
    const detail::RopeKeys rule(scaling != nullptr ? *scaling : empty, source, std::string(scaling_key) + ".");

    // Where each value came from, to name it in messages.
    const detail::RopeKeys* theta_in = &rule;
    const char* theta_key = "rope_theta";
    std::optional<double> theta = rule.number("rope_theta");
    if (!theta) {
        theta_in = &top;
        theta = top.number("rope_theta");
    }
    if (!theta) {
        theta_key = "rotary_emb_base";
        theta = top.number("rotary_emb_base");
    }
    // The family's default filled in above (CohereConfig's default_theta is 500000 in transformers
    // 5, 10000 in 4.x); the others' 10000.
    options.base = theta.value_or(10000.0);
    theta_in->require(options.base > 1, theta_key, options.base, "must be greater than 1");

    if (const std::optional<Index> head_dim = top.count("head_dim")) {
        options.head_dim = *head_dim;
    } else {
        const Index hidden = detail::positive_key(config, source, {"hidden_size", "n_embd", "d_model"});
        const Index heads = detail::positive_key(config, source, {"num_attention_heads", "n_head"});
        options.head_dim = hidden / heads;  // Python's hidden_size // num_attention_heads
    }
    // Zamba2Config with use_long_context and use_mem_rope: rope_theta x 8^(d / (d - 2)), d its
    // attention_head_dim, in Python's double arithmetic.
    if (model_type == "zamba2" && top.boolean("use_long_context").value_or(false) &&
        top.boolean("use_mem_rope").value_or(false) && options.head_dim > 2) {
        const auto d = static_cast<double>(options.head_dim);
        options.base *= std::pow(8.0, d / (d - 2));
    }

    if (rotate_every_two) {
        // GPTJConfig's and CodeGenConfig's default: 64.
        options.rotary_dim = top.count("rotary_dim").value_or(64);
    } else {
        const detail::RopeKeys* factor_in = &rule;
        const char* factor_key = "partial_rotary_factor";
        std::optional<double> factor = rule.number("partial_rotary_factor");
        if (!factor) {
            factor_in = &top;
            factor = top.number("partial_rotary_factor");
        }
        if (!factor) {
            factor_key = "rotary_pct";
            factor = top.number("rotary_pct");
        }
        options.partial_rotary_factor = factor.value_or(1.0);
        factor_in->require(options.partial_rotary_factor > 0 && options.partial_rotary_factor <= 1, factor_key,
                           options.partial_rotary_factor, "must be in (0, 1]");
    }

    const std::optional<Index> max_positions = top.count("max_position_embeddings") ? top.count("max_position_embeddings")
                                                                                    : top.count("n_positions");
    if (max_positions) options.max_positions = *max_positions;
    const auto need_max_positions = [&](const char* rule_name) {
        if (!max_positions)
            seqembed::detail::fail<format_error>(source, ": has no 'max_position_embeddings', which the ", rule_name,
                                                 " rope_type needs");
        return *max_positions;
    };
    // standardize_rope_params (transformers 5) for llama3, yarn and longrope: the top-level key
    // (Phi-3's place) first, then the rule's, then max_position_embeddings. Phi3Config always
    // has the attribute (4096 by default), so for phi3 the rule's is never read.
    const auto original_length = [&](const char* rule_name) -> Index {
        if (const std::optional<Index> at_top = top.count("original_max_position_embeddings")) return *at_top;
        if (model_type == "phi3") return 4096;
        if (const std::optional<Index> in_rule = rule.count("original_max_position_embeddings")) return *in_rule;
        return need_max_positions(rule_name);
    };
    // longrope's factor: the rule's, else max_position_embeddings / original.
    const auto factor_or_ratio = [&](const char* rule_name, Index original) -> double {
        if (const std::optional<double> factor = rule.number("factor")) return *factor;
        return static_cast<double>(need_max_positions(rule_name)) / static_cast<double>(original);
    };

    std::string type = "default";
    std::string type_key = std::string(scaling_key) + ".rope_type";
    if (const std::optional<std::string> named = rule.text("rope_type")) {
        type = *named;
    } else if (const std::optional<std::string> legacy = rule.text("type")) {
        type = *legacy;
        type_key = std::string(scaling_key) + ".type";
    } else if (scaling != nullptr) {
        // (transformers 5's rope_parameters per layer type, {"full_attention": {...}, ...}, land
        // here too: pass the one wanted to rotary_options_from_json inside a config.)
        seqembed::detail::fail<format_error>(source, ": '", scaling_key, "' has neither 'rope_type' nor 'type'");
    }
    options.scaling = detail::rope_rule(type, source, type_key);
    const char* name = type.c_str();

    // Hunyuan's NTK-alpha (HunYuanDenseV1RotaryEmbedding): a dynamic rule with `alpha` is no
    // dynamic rule but the base theta x alpha^(d / (d - 2)) over the whole head (d = head_dim),
    // computed once in double and rounded to float32 as torch's pow takes it. transformers
    // recomputes plain dynamic NTK frequencies (without alpha) for calls past
    // max_position_embeddings; Tencent's own code and seqembed keep these at every length.
    if ((model_type == "hunyuan_v1_dense" || model_type == "hunyuan_v1_moe") &&
        options.scaling == RotaryScaling::dynamic && rule.number("alpha").value_or(0.0) != 0) {
        const double alpha = *rule.number("alpha");
        rule.require(alpha > 0, "alpha", alpha, "must be positive");
        rule.require(options.head_dim > 2, "alpha", alpha, "needs a head_dim above 2");
        const auto d = static_cast<double>(options.head_dim);
        const double base = options.base * std::pow(alpha, d / (d - 2));
        rule.require(base < 1e38, "alpha", alpha, "puts the base past float32's range");
        options.base = static_cast<double>(static_cast<float>(base));
        options.scaling = RotaryScaling::none;
        options.partial_rotary_factor = 1.0;
    }

    switch (options.scaling) {
        case RotaryScaling::none: break;
        case RotaryScaling::linear: options.factor = rule.required_number("factor", name); break;
        case RotaryScaling::dynamic:
            options.factor = rule.required_number("factor", name);
            options.original_max_position_embeddings = need_max_positions(name);
            break;
        case RotaryScaling::llama3:
            options.factor = rule.required_number("factor", name);
            options.low_freq_factor = rule.required_number("low_freq_factor", name);
            options.high_freq_factor = rule.required_number("high_freq_factor", name);
            options.original_max_position_embeddings = original_length(name);
            break;
        case RotaryScaling::yarn: {
            options.original_max_position_embeddings = original_length(name);
            options.factor = rule.required_number("factor", name);  // required by transformers 5 too
            options.attention_factor = rule.number("attention_factor");
            // `rope_scaling.get("beta_fast") or 32`: absent, null and 0 all fall back.
            const double beta_fast = rule.number("beta_fast").value_or(0.0);
            const double beta_slow = rule.number("beta_slow").value_or(0.0);
            options.beta_fast = beta_fast != 0 ? beta_fast : 32.0;
            options.beta_slow = beta_slow != 0 ? beta_slow : 1.0;
            options.mscale = rule.number("mscale").value_or(0.0);
            options.mscale_all_dim = rule.number("mscale_all_dim").value_or(0.0);
            options.truncate = rule.boolean("truncate").value_or(true);
            break;
        }
        case RotaryScaling::longrope: {
            options.short_factor = rule.numbers("short_factor", name);
            options.long_factor = rule.numbers("long_factor", name);
            options.attention_factor = rule.number("attention_factor");
            options.original_max_position_embeddings = original_length(name);
            options.factor = factor_or_ratio(name, options.original_max_position_embeddings);
            if (model_type == "phimoe") {
                // PhimoeRotaryEmbedding multiplies cos and sin by short_mscale, or long_mscale past
                // original_max_position_embeddings, in place of the rule's attention factor: one
                // factor at every length when they are equal (Phi-3.5-MoE's are).
                const double short_mscale = rule.required_number("short_mscale", name);
                const double long_mscale = rule.required_number("long_mscale", name);
                if (short_mscale != long_mscale)
                    seqembed::detail::fail<format_error>(
                        source, ": '", scaling_key, ".short_mscale' (", short_mscale, ") and 'long_mscale' (",
                        long_mscale, ") differ: the attention factor would change with the call's length, which "
                        "the rotary stage does not model");
                options.attention_factor = short_mscale;
            }
            break;
        }
    }

    // M-RoPE: Qwen2-VL's, Qwen2.5-VL's and GLM-4V's mrope_section in blocks (GLM-4V's [8, 12, 12]
    // unless the config says, as transformers 5); Qwen3-VL's always interleaved (its rotary
    // module reads no flag), [24, 20, 20] unless the config says.
    const bool qwen3_vl = model_type == "qwen3_vl" || model_type == "qwen3_vl_moe";
    const bool glm4v = model_type == "glm4v" || model_type == "glm4v_moe";
    const bool in_blocks = model_type == "qwen2_vl" || model_type == "qwen2_5_vl" || glm4v;
    if (const std::optional<std::array<Index, 3>> section = rule.triple("mrope_section"))
        options.mrope_section = *section;
    else if (qwen3_vl)
        options.mrope_section = {24, 20, 20};
    else if (glm4v)
        options.mrope_section = {8, 12, 12};
    // Qwen2-VL's, Qwen2.5-VL's and GLM-4V's modules split in blocks whatever the config says.
    options.mrope_interleaved = qwen3_vl || (!in_blocks && rule.boolean("mrope_interleaved").value_or(false));
    if (!options.mrope_interleaved &&
        options.mrope_section[0] + options.mrope_section[1] + options.mrope_section[2] != 0) {
        const Index pairs = static_cast<Index>(std::trunc(static_cast<double>(options.head_dim) *
                                                          options.partial_rotary_factor)) / 2;
        if (options.mrope_section[0] + options.mrope_section[1] + options.mrope_section[2] != pairs)
            seqembed::detail::fail<format_error>(source, ": '", scaling_key, ".mrope_section' [",
                                                 options.mrope_section[0], ", ", options.mrope_section[1], ", ",
                                                 options.mrope_section[2], "] does not sum to head_dim / 2 = ", pairs);
    }

    // The domains RotaryEmbedding enforces, named here by file and key.
    if (options.scaling != RotaryScaling::none)
        rule.require(options.factor >= 1, "factor", options.factor,
                     "must be at least 1 (for longrope without factor: "
                     "max_position_embeddings / original_max_position_embeddings)");
    if (options.scaling == RotaryScaling::llama3) {
        rule.require(options.low_freq_factor > 0, "low_freq_factor", options.low_freq_factor, "must be positive");
        rule.require(options.high_freq_factor >= options.low_freq_factor, "high_freq_factor", options.high_freq_factor,
                     "must be at least low_freq_factor");
    }
    if (options.scaling == RotaryScaling::yarn) {
        rule.require(options.beta_fast > 0, "beta_fast", options.beta_fast, "must be positive");
        rule.require(options.beta_slow > 0, "beta_slow", options.beta_slow, "must be positive");
    }
    if (options.attention_factor)
        rule.require(*options.attention_factor > 0, "attention_factor", *options.attention_factor, "must be positive");
    return options;
}

inline RotaryOptions read_rotary_config(const std::filesystem::path& file) {
    return rotary_options_from_json(detail::read_json_object(file), detail::path_name(file));
}

}  // namespace seqembed::io
