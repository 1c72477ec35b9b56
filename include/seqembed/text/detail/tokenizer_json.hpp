/// @file text/detail/tokenizer_json.hpp
/// @brief tokenizer.json's components read into the normalizers, pre-tokenizers, model,
///        post-processor and decoders they name; a component this version does not implement is
///        an error naming it and the file.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../detail/exceptions.hpp"
#include "../../error.hpp"
#include "../../types.hpp"
#include "bpe.hpp"
#include "decoders.hpp"
#include "normalizers.hpp"
#include "pre_tokenizers.hpp"
#include "regex.hpp"
#include "unigram.hpp"
#include "wordpiece.hpp"

namespace seqembed::text::detail {

/// A model of tokenizer.json.
using Model = std::variant<WordPiece, Bpe, Unigram>;

/// The vocabulary of a model.
inline const Vocab& vocab_of(const Model& model) {
    return std::visit([](const auto& m) -> const Vocab& { return m.vocab; }, model);
}

/// A piece of the post-processor's template: a special token, or sequence A (0) or B (1).
struct TemplatePiece {
    bool special;
    int sequence;  // 0 or 1 for a sequence
    std::vector<TokenId> ids;
    std::vector<std::string> tokens;
    TokenId type_id;
};

/// The post-processor: the templates of one text and of a pair, and ByteLevel's trimming of
/// whitespace from offsets.
struct PostProcessor {
    std::vector<TemplatePiece> single{{false, 0, {}, {}, 0}};
    std::vector<TemplatePiece> pair{{false, 0, {}, {}, 0}, {false, 1, {}, {}, 1}};
    bool trim_offsets = false;
    bool add_prefix_space = false;

    /// BERT's templates: [CLS] A [SEP] and [CLS] A [SEP] B [SEP], B and its [SEP] of type 1.
    void set_bert(const std::string& cls, TokenId cls_id, const std::string& sep, TokenId sep_id) {
        const TemplatePiece first{true, -1, {cls_id}, {cls}, 0};
        const TemplatePiece separator{true, -1, {sep_id}, {sep}, 0};
        TemplatePiece separator_b = separator;
        separator_b.type_id = 1;
        single = {first, {false, 0, {}, {}, 0}, separator};
        pair = {first, {false, 0, {}, {}, 0}, separator, {false, 1, {}, {}, 1}, separator_b};
    }

    /// A bos token before each text: bos A, and bos A bos:1 B:1 (transformers 5's GPT2Tokenizer
    /// with add_bos_token).
    void set_bos(const std::string& bos, TokenId bos_id) {
        const TemplatePiece first{true, -1, {bos_id}, {bos}, 0};
        TemplatePiece second = first;
        second.type_id = 1;
        single = {first, {false, 0, {}, {}, 0}};
        pair = {first, {false, 0, {}, {}, 0}, second, {false, 1, {}, {}, 1}};
    }

    /// RoBERTa's templates: <s> A </s> and <s> A </s> </s> B </s>, all of type 0.
    void set_roberta(const std::string& cls, TokenId cls_id, const std::string& sep, TokenId sep_id) {
        const TemplatePiece first{true, -1, {cls_id}, {cls}, 0};
        const TemplatePiece separator{true, -1, {sep_id}, {sep}, 0};
        single = {first, {false, 0, {}, {}, 0}, separator};
        pair = {first, {false, 0, {}, {}, 0}, separator, separator, {false, 1, {}, {}, 0}, separator};
    }
};

/// Reads tokenizer.json's parts, naming `source` in every error.
class JsonReader {
public:
    explicit JsonReader(std::string source) : m_source(std::move(source)) {}

    [[noreturn]] void unsupported(const std::string& what, const std::string& type) const {
        seqembed::detail::fail<value_error>(m_source, ": ", what, " of type \"", type,
                                            "\" is not implemented by this version of seqembed::text");
    }

    [[noreturn]] void malformed(const std::string& what) const { seqembed::detail::fail<value_error>(m_source, ": ", what); }

    /// object[key], or null when it is absent or null.
    static const nlohmann::json* member(const nlohmann::json& object, const char* key) {
        if (!object.is_object()) return nullptr;
        const auto found = object.find(key);
        return found == object.end() || found->is_null() ? nullptr : &*found;
    }

    std::string type_of(const nlohmann::json& component, const std::string& what) const {
        const nlohmann::json* type = member(component, "type");
        if (type == nullptr || !type->is_string()) malformed(what + " has no \"type\"");
        return type->get<std::string>();
    }

    template <typename T>
    T value_or(const nlohmann::json& object, const char* key, T fallback, const std::string& what) const {
        const nlohmann::json* value = member(object, key);
        if (value == nullptr) return fallback;
        if constexpr (std::is_same_v<T, bool>) {
            if (!value->is_boolean()) malformed(what + "'s \"" + key + "\" is not true or false");
        } else if constexpr (std::is_same_v<T, std::string>) {
            if (!value->is_string()) malformed(what + "'s \"" + key + "\" is not a string");
        } else if constexpr (std::is_floating_point_v<T>) {
            if (!value->is_number()) malformed(what + "'s \"" + key + "\" is not a number");
        } else {
            if (!value->is_number_integer() || (std::is_unsigned_v<T> && value->get<long long>() < 0))
                malformed(what + "'s \"" + key + "\" is not " + (std::is_unsigned_v<T> ? "a count" : "an integer"));
        }
        return value->get<T>();
    }

    /// A one-character string member.
    char32_t character(const nlohmann::json& object, const char* key, char32_t fallback, const std::string& what) const {
        const std::string text = value_or<std::string>(object, key, std::string(), what);
        if (text.empty()) return fallback;
        const std::vector<char32_t> chars = code_points(text);
        if (chars.size() != 1) malformed(what + "'s \"" + key + "\" is not one character");
        return chars[0];
    }

    /// A pattern member: {"String": s} or {"Regex": r}.
    Regex pattern(const nlohmann::json& object, const std::string& what) const {
        const nlohmann::json* pattern = member(object, "pattern");
        if (pattern == nullptr) malformed(what + " has no \"pattern\"");
        const auto compile = [&](const std::string& text, bool literal) {
            return seqembed::detail::run_renaming_error<value_error, value_error>(
                [&] { return literal ? Regex::literal(text) : Regex(text); }, m_source, ": ", what, ": ");
        };
        if (const nlohmann::json* text = member(*pattern, "String"); text != nullptr && text->is_string())
            return compile(text->get<std::string>(), true);
        if (const nlohmann::json* text = member(*pattern, "Regex"); text != nullptr && text->is_string())
            return compile(text->get<std::string>(), false);
        malformed(what + "'s \"pattern\" is neither {\"String\": ...} nor {\"Regex\": ...}");
    }

    /// The normalizers of "normalizer" (a Sequence flattened).
    void normalizers(const nlohmann::json& json, std::vector<Normalizer>& out) const {
        const std::string type = type_of(json, "a normalizer");
        const std::string what = "the " + type + " normalizer";
        Normalizer n;
        if (type == "Sequence") {
            const nlohmann::json* list = member(json, "normalizers");
            if (list == nullptr || !list->is_array()) malformed("a Sequence normalizer has no \"normalizers\" list");
            for (const nlohmann::json& item : *list) normalizers(item, out);
            return;
        }
        if (type == "BertNormalizer") {
            n.kind = Normalizer::Kind::bert;
            n.bert.clean_text = value_or<bool>(json, "clean_text", true, what);
            n.bert.handle_chinese_chars = value_or<bool>(json, "handle_chinese_chars", true, what);
            n.bert.lowercase = value_or<bool>(json, "lowercase", true, what);
            n.bert.strip_accents = value_or<bool>(json, "strip_accents", n.bert.lowercase, what);
        } else if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
            n.kind = Normalizer::Kind::unicode;
            n.form = type == "NFC" ? UnicodeForm::nfc : type == "NFD" ? UnicodeForm::nfd
                   : type == "NFKC" ? UnicodeForm::nfkc : UnicodeForm::nfkd;
        } else if (type == "Lowercase") {
            n.kind = Normalizer::Kind::lowercase;
        } else if (type == "StripAccents") {
            n.kind = Normalizer::Kind::strip_accents;
        } else if (type == "Replace") {
            n.kind = Normalizer::Kind::replace;
            n.pattern = pattern(json, what);
            n.content = code_points(value_or<std::string>(json, "content", "", what));
        } else if (type == "Prepend") {
            n.kind = Normalizer::Kind::prepend;
            n.content = code_points(value_or<std::string>(json, "prepend", "", what));
        } else if (type == "Precompiled") {
            n.kind = Normalizer::Kind::precompiled;
            const std::string base64 = value_or<std::string>(json, "precompiled_charsmap", "", what);
            n.charsmap = seqembed::detail::run_renaming_error<value_error, value_error>(
                [&] { return std::make_shared<const PrecompiledCharsmap>(base64_decode(base64)); }, m_source, ": ",
                what, ": ");
        } else if (type == "Strip") {
            n.kind = Normalizer::Kind::strip;
            n.left = value_or<bool>(json, "strip_left", true, what);
            n.right = value_or<bool>(json, "strip_right", true, what);
        } else {
            unsupported("the normalizer", type);
        }
        out.push_back(std::move(n));
    }

    SplitBehavior behavior(const nlohmann::json& json, const std::string& what, SplitBehavior fallback) const {
        const std::string name = value_or<std::string>(json, "behavior", "", what);
        if (name.empty()) return fallback;
        if (name == "Removed") return SplitBehavior::removed;
        if (name == "Isolated") return SplitBehavior::isolated;
        if (name == "MergedWithPrevious") return SplitBehavior::merged_with_previous;
        if (name == "MergedWithNext") return SplitBehavior::merged_with_next;
        if (name == "Contiguous") return SplitBehavior::contiguous;
        malformed(what + "'s behavior \"" + name + "\" is not one of Removed, Isolated, MergedWithPrevious, "
                         "MergedWithNext, Contiguous");
    }

    PrependScheme prepend_scheme(const nlohmann::json& json, const std::string& what) const {
        const nlohmann::json* scheme = member(json, "prepend_scheme");
        if (scheme == nullptr) {  // files before tokenizers 0.14: add_prefix_space
            return value_or<bool>(json, "add_prefix_space", true, what) ? PrependScheme::always : PrependScheme::never;
        }
        const std::string name = value_or<std::string>(json, "prepend_scheme", "always", what);
        if (name == "always") return PrependScheme::always;
        if (name == "first") return PrependScheme::first;
        if (name == "never") return PrependScheme::never;
        malformed(what + "'s prepend_scheme \"" + name + "\" is not always, first or never");
    }

    /// The pre-tokenizers of "pre_tokenizer" (a Sequence flattened).
    void pre_tokenizers(const nlohmann::json& json, std::vector<PreTokenizer>& out) const {
        const std::string type = type_of(json, "a pre-tokenizer");
        const std::string what = "the " + type + " pre-tokenizer";
        PreTokenizer p;
        if (type == "Sequence") {
            const nlohmann::json* list = member(json, "pretokenizers");
            if (list == nullptr || !list->is_array()) malformed("a Sequence pre-tokenizer has no \"pretokenizers\" list");
            for (const nlohmann::json& item : *list) pre_tokenizers(item, out);
            return;
        }
        if (type == "BertPreTokenizer") {
            p.kind = PreTokenizer::Kind::bert;
        } else if (type == "ByteLevel") {
            p.kind = PreTokenizer::Kind::byte_level;
            p.add_prefix_space = value_or<bool>(json, "add_prefix_space", true, what);
            if (value_or<bool>(json, "use_regex", true, what)) p.pattern = Regex(gpt2_pattern());
        } else if (type == "Split") {
            p.kind = PreTokenizer::Kind::split;
            p.pattern = pattern(json, what);
            p.behavior = behavior(json, what, SplitBehavior::isolated);
            p.invert = value_or<bool>(json, "invert", false, what);
        } else if (type == "Digits") {
            p.kind = PreTokenizer::Kind::digits;
            p.individual_digits = value_or<bool>(json, "individual_digits", false, what);
        } else if (type == "Metaspace") {
            p.kind = PreTokenizer::Kind::metaspace;
            p.replacement = character(json, "replacement", 0x2581, what);
            p.prepend_scheme = prepend_scheme(json, what);
            p.split = value_or<bool>(json, "split", true, what);
        } else if (type == "Whitespace") {
            p.kind = PreTokenizer::Kind::whitespace;
            // Hugging Face's \w+|[^\w\s]+ in Rust's regex crate, whose \w is Alphabetic, marks,
            // decimal digits, connector punctuation and the joiners, and \s White_Space.
            const std::string word = std::string(word_members) + "\\x{200C}\\x{200D}";
            p.pattern = Regex("[" + word + "]+|[^" + word + std::string(space_members) + "]+");
        } else if (type == "WhitespaceSplit") {
            p.kind = PreTokenizer::Kind::whitespace_split;
        } else if (type == "Punctuation") {
            p.kind = PreTokenizer::Kind::punctuation;
            p.behavior = behavior(json, what, SplitBehavior::isolated);
        } else {
            unsupported("the pre-tokenizer", type);
        }
        out.push_back(std::move(p));
    }

    /// The decoders of "decoder" (a Sequence flattened).
    void decoders(const nlohmann::json& json, std::vector<Decoder>& out) const {
        const std::string type = type_of(json, "a decoder");
        const std::string what = "the " + type + " decoder";
        Decoder d;
        if (type == "Sequence") {
            const nlohmann::json* list = member(json, "decoders");
            if (list == nullptr || !list->is_array()) malformed("a Sequence decoder has no \"decoders\" list");
            for (const nlohmann::json& item : *list) decoders(item, out);
            return;
        }
        if (type == "WordPiece") {
            d.kind = Decoder::Kind::wordpiece;
            d.prefix = value_or<std::string>(json, "prefix", "##", what);
            d.cleanup = value_or<bool>(json, "cleanup", true, what);
        } else if (type == "ByteLevel") {
            d.kind = Decoder::Kind::byte_level;
        } else if (type == "Metaspace") {
            d.kind = Decoder::Kind::metaspace;
            d.replacement = character(json, "replacement", 0x2581, what);
            d.prepend_scheme = prepend_scheme(json, what);
        } else if (type == "Replace") {
            d.kind = Decoder::Kind::replace;
            d.pattern = pattern(json, what);
            d.content = value_or<std::string>(json, "content", "", what);
        } else if (type == "ByteFallback") {
            d.kind = Decoder::Kind::byte_fallback;
        } else if (type == "Fuse") {
            d.kind = Decoder::Kind::fuse;
        } else if (type == "Strip") {
            d.kind = Decoder::Kind::strip;
            d.strip_content = character(json, "content", ' ', what);
            d.start = value_or<std::size_t>(json, "start", 0, what);
            d.stop = value_or<std::size_t>(json, "stop", 0, what);
        } else if (type == "BPEDecoder") {
            d.kind = Decoder::Kind::bpe;
            d.suffix = value_or<std::string>(json, "suffix", "</w>", what);
        } else {
            unsupported("the decoder", type);
        }
        out.push_back(std::move(d));
    }

    /// The vocabulary of a WordPiece or BPE model ("vocab": {token: id}).
    void vocab(const nlohmann::json& model, Vocab& out, const std::string& what) const {
        const nlohmann::json* vocab = member(model, "vocab");
        if (vocab == nullptr || !vocab->is_object()) malformed(what + " has no \"vocab\" object");
        out.ids.reserve(vocab->size());
        for (const auto& [token, id] : vocab->items()) {
            if (!id.is_number_integer()) malformed("the vocabulary's id of \"" + token + "\" is not an integer");
            add_entry(out, token, id.get<TokenId>());
        }
    }

    void add_entry(Vocab& vocab, const std::string& token, TokenId id) const {
        if (id < 0) malformed("the vocabulary gives \"" + token + "\" a negative id");
        if (static_cast<std::size_t>(id) >= vocab.tokens.size()) vocab.tokens.resize(static_cast<std::size_t>(id) + 1);
        vocab.tokens[static_cast<std::size_t>(id)] = token;
        vocab.ids[token] = id;  // a token listed twice takes its last id, as Hugging Face's maps do
    }

    /// A BPE model's merges: "a b" strings or [a, b] pairs, the first ranking first.
    void merges(const nlohmann::json& list, Bpe& bpe) const {
        if (!list.is_array()) malformed("the BPE model's \"merges\" is not a list");
        std::uint32_t rank = 0;
        for (const nlohmann::json& item : list) {
            std::string left;
            std::string right;
            if (item.is_string()) {
                const std::string text = item.get<std::string>();
                if (text.rfind("#version", 0) == 0) continue;  // merges.txt's header, which Hugging Face skips
                const std::size_t space = text.find(' ');
                if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos)
                    malformed("the BPE merge \"" + text + "\" is not two tokens separated by a space");
                left = text.substr(0, space);
                right = text.substr(space + 1);
            } else if (item.is_array() && item.size() == 2 && item[0].is_string() && item[1].is_string()) {
                left = item[0].get<std::string>();
                right = item[1].get<std::string>();
            } else {
                malformed("a BPE merge is neither \"a b\" nor [\"a\", \"b\"]");
            }
            add_merge(bpe, left, right, rank++);
        }
    }

    void add_merge(Bpe& bpe, const std::string& left, const std::string& right, std::uint32_t rank) const {
        const TokenId a = bpe.vocab.find(left);
        const TokenId b = bpe.vocab.find(right);
        if (a < 0 || b < 0) malformed("the BPE merge of \"" + left + "\" and \"" + right + "\" has a token not in the vocabulary");
        std::string merged = left;
        if (!bpe.prefix.empty() && right.compare(0, bpe.prefix.size(), bpe.prefix) == 0)
            merged.append(right, bpe.prefix.size(), std::string::npos);
        else
            merged += right;
        const TokenId id = bpe.vocab.find(merged);
        if (id < 0) malformed("the BPE merge of \"" + left + "\" and \"" + right + "\" makes \"" + merged + "\", not in the vocabulary");
        bpe.merges.insert(Bpe::key(a, b), {rank, id});
    }

    /// The model of "model".
    Model model(const nlohmann::json& json) const {
        const std::string type = type_of(json, "the model");
        const std::string what = "the " + type + " model";
        if (type == "WordPiece") {
            WordPiece model;
            vocab(json, model.vocab, what);
            model.unk_token = value_or<std::string>(json, "unk_token", "[UNK]", what);
            model.prefix = value_or<std::string>(json, "continuing_subword_prefix", "##", what);
            model.max_input_chars_per_word = value_or<std::size_t>(json, "max_input_chars_per_word", 100, what);
            model.unk_id = model.vocab.find(model.unk_token);
            if (model.unk_id < 0) malformed("the WordPiece model's unk_token \"" + model.unk_token + "\" is not in its vocab");
            return model;
        }
        if (type == "BPE") {
            Bpe model;
            vocab(json, model.vocab, what);
            model.prefix = value_or<std::string>(json, "continuing_subword_prefix", "", what);
            model.suffix = value_or<std::string>(json, "end_of_word_suffix", "", what);
            model.fuse_unk = value_or<bool>(json, "fuse_unk", false, what);
            model.byte_fallback = value_or<bool>(json, "byte_fallback", false, what);
            model.ignore_merges = value_or<bool>(json, "ignore_merges", false, what);
            if (const nlohmann::json* dropout = member(json, "dropout"); dropout != nullptr && dropout->is_number() &&
                                                                      dropout->get<double>() != 0.0)
                malformed("the BPE model has a dropout: seqembed::text encodes deterministically, without one");
            model.unk_token = value_or<std::string>(json, "unk_token", "", what);
            if (!model.unk_token.empty()) {
                model.unk_id = model.vocab.find(model.unk_token);
                if (model.unk_id < 0) malformed("the BPE model's unk_token \"" + model.unk_token + "\" is not in its vocab");
            }
            const nlohmann::json* list = member(json, "merges");
            if (list == nullptr) malformed("the BPE model has no \"merges\"");
            merges(*list, model);
            model.index();
            return model;
        }
        if (type == "Unigram") {
            Unigram model;
            const nlohmann::json* vocab = member(json, "vocab");
            if (vocab == nullptr || !vocab->is_array()) malformed("the Unigram model has no \"vocab\" list");
            std::vector<double> scores;
            for (const nlohmann::json& entry : *vocab) {
                if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number())
                    malformed("a Unigram vocabulary entry is not [piece, score]");
                add_entry(model.vocab, entry[0].get<std::string>(), static_cast<TokenId>(scores.size()));
                scores.push_back(entry[1].get<double>());
            }
            model.byte_fallback = value_or<bool>(json, "byte_fallback", false, what);
            const nlohmann::json* unk = member(json, "unk_id");
            if (unk != nullptr) {
                if (!unk->is_number_integer() || unk->get<long long>() < 0 ||
                    unk->get<unsigned long long>() >= scores.size())
                    malformed("the Unigram model's unk_id is not an id of its vocab");
                model.unk_id = unk->get<TokenId>();
            }
            model.build(std::move(scores));
            return model;
        }
        unsupported("the model", type);
    }

    /// The post-processor of "post_processor".
    void post_processor(const nlohmann::json& json, PostProcessor& out) const {
        const std::string type = type_of(json, "the post-processor");
        const std::string what = "the " + type + " post-processor";
        if (type == "Sequence") {
            const nlohmann::json* list = member(json, "processors");
            if (list == nullptr || !list->is_array()) malformed("a Sequence post-processor has no \"processors\" list");
            for (const nlohmann::json& item : *list) post_processor(item, out);
        } else if (type == "TemplateProcessing") {
            read_template(json, out);
        } else if (type == "BertProcessing" || type == "RobertaProcessing") {
            const auto pair_of = [&](const char* key) {
                const nlohmann::json* entry = member(json, key);
                if (entry == nullptr || !entry->is_array() || entry->size() != 2 || !(*entry)[0].is_string() ||
                    !(*entry)[1].is_number_integer())
                    malformed(what + "'s \"" + key + "\" is not [token, id]");
                return std::make_pair((*entry)[0].get<std::string>(), (*entry)[1].get<TokenId>());
            };
            const auto [sep, sep_id] = pair_of("sep");
            const auto [cls, cls_id] = pair_of("cls");
            if (type == "BertProcessing") {
                out.set_bert(cls, cls_id, sep, sep_id);
            } else {
                out.set_roberta(cls, cls_id, sep, sep_id);
                out.trim_offsets = value_or<bool>(json, "trim_offsets", true, what);
                out.add_prefix_space = value_or<bool>(json, "add_prefix_space", true, what);
            }
        } else if (type == "ByteLevel") {
            out.trim_offsets = value_or<bool>(json, "trim_offsets", true, what);
            out.add_prefix_space = value_or<bool>(json, "add_prefix_space", true, what);
        } else {
            unsupported("the post-processor", type);
        }
    }

private:
    std::string m_source;

    void read_template(const nlohmann::json& processor, PostProcessor& out) const {
        const nlohmann::json* specials = member(processor, "special_tokens");
        const auto pieces = [&](const char* key) {
            const nlohmann::json* list = member(processor, key);
            if (list == nullptr || !list->is_array()) malformed(std::string("TemplateProcessing has no \"") + key + "\" list");
            std::vector<TemplatePiece> result;
            for (const nlohmann::json& item : *list) {
                if (const nlohmann::json* special = member(item, "SpecialToken")) {
                    const std::string name = value_or<std::string>(*special, "id", "", "a SpecialToken");
                    const nlohmann::json* entry = specials == nullptr ? nullptr : member(*specials, name.c_str());
                    if (entry == nullptr) malformed("TemplateProcessing's special token \"" + name + "\" is not in its special_tokens");
                    TemplatePiece piece{true, -1, {}, {}, value_or<TokenId>(*special, "type_id", 0, "a SpecialToken")};
                    const nlohmann::json* ids = member(*entry, "ids");
                    const nlohmann::json* tokens = member(*entry, "tokens");
                    if (ids == nullptr || tokens == nullptr || !ids->is_array() || !tokens->is_array() ||
                        ids->size() != tokens->size())
                        malformed("TemplateProcessing's special token \"" + name + "\" lacks matching ids and tokens");
                    for (std::size_t k = 0; k < ids->size(); ++k) {
                        if (!(*ids)[k].is_number_integer() || !(*tokens)[k].is_string())
                            malformed("TemplateProcessing's special token \"" + name + "\" has a malformed id or token");
                        piece.ids.push_back((*ids)[k].get<TokenId>());
                        piece.tokens.push_back((*tokens)[k].get<std::string>());
                    }
                    result.push_back(std::move(piece));
                } else if (const nlohmann::json* sequence = member(item, "Sequence")) {
                    const std::string name = value_or<std::string>(*sequence, "id", "A", "a Sequence");
                    if (name != "A" && name != "B") malformed("TemplateProcessing's sequence \"" + name + "\" is not A or B");
                    result.push_back({false, name == "A" ? 0 : 1, {}, {}, value_or<TokenId>(*sequence, "type_id", 0, "a Sequence")});
                } else {
                    malformed(std::string("TemplateProcessing's \"") + key + "\" holds neither a SpecialToken nor a Sequence");
                }
            }
            return result;
        };
        out.single = pieces("single");
        out.pair = pieces("pair");
    }
};

}  // namespace seqembed::text::detail
