/// @file text/tokenizer.hpp
/// @brief Tokenizer: text to ids as a model's own tokenizer.json says, giving Hugging Face
///        tokenizers' ids, type ids and offsets.
///
/// Optional: target seqembed::text (nlohmann_json and utf8proc, Debian nlohmann-json3-dev and
/// libutf8proc-dev); seqembed.hpp never includes it. This version reads the WordPiece family
/// (BERT and its descendants): BertNormalizer, BertPreTokenizer, WordPiece, TemplateProcessing
/// or BertProcessing, the WordPiece decoder, added and special tokens, pairs, truncation and
/// padding. A tokenizer.json component it does not implement is an error naming it.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../detail/exceptions.hpp"
#include "../error.hpp"
#include "../padding.hpp"
#include "../types.hpp"
#include "encoded_batch.hpp"
#include "detail/normalizers.hpp"
#include "detail/unicode.hpp"
#include "detail/wordpiece.hpp"

namespace seqembed::text {

namespace detail {

/// The whole of a file's bytes.
/// @throws file_error if it cannot be opened or read.
inline std::string read_file(const std::string& path) {
    std::ifstream stream(path, std::ios::binary);
    if (!stream) seqembed::detail::fail<file_error>(path, ": cannot open it");
    std::ostringstream text;
    text << stream.rdbuf();
    if (stream.bad()) seqembed::detail::fail<file_error>(path, ": cannot read it");
    return text.str();
}

}  // namespace detail

/// @brief One text, or one pair of texts, encoded: a row of a model's input.
struct Encoding {
    /// @brief The token ids.
    std::vector<TokenId> ids;
    /// @brief The tokens, as the vocabulary spells them.
    std::vector<std::string> tokens;
    /// @brief The token type (segment) of each token: 0 for the first text, 1 for the second.
    std::vector<TokenId> type_ids;
    /// @brief 1 where the post-processor added a special token ([CLS], [SEP]), else 0.
    std::vector<std::uint8_t> special_tokens_mask;
    /// @brief 1 for a token, 0 for padding.
    std::vector<std::uint8_t> attention_mask;
    /// @brief The bytes [begin, end) of its own text each token covers; (0, 0) for added special
    ///        tokens and padding.
    std::vector<std::pair<std::size_t, std::size_t>> offsets;
    /// @brief Which text each token comes from: 0, 1, or -1 for special tokens and padding.
    std::vector<int> sequence_ids;

    /// @brief The number of tokens.
    /// @return ids.size().
    std::size_t size() const noexcept { return ids.size(); }
};

/// @brief What to do with text that is not valid UTF-8.
enum class InvalidUtf8 {
    error,   ///< a value_error naming the byte offset
    replace  ///< each maximal invalid subsequence becomes U+FFFD, as Hugging Face's from bytes
};

/// @brief Options of one encode.
struct EncodeOptions {
    /// @brief Add the post-processor's special tokens ([CLS] and [SEP] for BERT).
    bool add_special_tokens = true;
    /// @brief Invalid UTF-8: an error (default) or replaced.
    InvalidUtf8 invalid_utf8 = InvalidUtf8::error;
};

/// @brief Which text of a pair loses tokens first when an encoding is truncated.
enum class TruncationStrategy {
    longest_first,  ///< the longer text, a token at a time (Hugging Face's default)
    only_first,     ///< the first text only
    only_second     ///< the second text only
};

/// @brief Truncation of every encoding to at most max_length tokens (special tokens included).
struct Truncation {
    /// @brief The most tokens an encoding keeps.
    std::size_t max_length = 512;
    /// @brief Which text loses tokens.
    TruncationStrategy strategy = TruncationStrategy::longest_first;
    /// @brief Where tokens go from: the end (right, default) or the start (left).
    PaddingSide side = PaddingSide::right;
};

/// @brief Padding of the encodings of a batch to one length.
struct PaddingOptions {
    /// @brief Which end the padding goes to.
    PaddingSide side = PaddingSide::right;
    /// @brief A fixed length; none pads to the batch's longest.
    std::optional<std::size_t> length;
    /// @brief The length is rounded up to a multiple of this (0: no rounding).
    std::size_t multiple_of = 0;
    /// @brief The id of padding.
    TokenId pad_id = 0;
    /// @brief The type id of padding.
    TokenId pad_type_id = 0;
    /// @brief The token of padding.
    std::string pad_token = "[PAD]";
};

/// @brief A model's tokenizer, read from its tokenizer.json (or BERT's vocab.txt): text to ids,
///        type ids, masks and byte offsets, and ids back to text, as Hugging Face tokenizers.
/// @code
/// const auto tokenizer = seqembed::text::Tokenizer::from_file("bert-base-uncased/tokenizer.json");
/// const seqembed::text::Encoding encoding = tokenizer.encode("Hello, world!");
/// // encoding.ids == {101, 7592, 1010, 2088, 999, 102}
/// @endcode
class Tokenizer {
public:
    /// @brief The tokenizer a tokenizer.json describes.
    /// @param path the file.
    /// @return the tokenizer.
    /// @throws file_error if it cannot be read; value_error for malformed JSON (naming the file
    ///         and the position) or a component this version does not implement (naming it).
    static Tokenizer from_file(const std::string& path) { return from_json(detail::read_file(path), path); }

    /// @brief The tokenizer a tokenizer.json's text describes.
    /// @param json the file's text.
    /// @param source the file's name, for messages.
    /// @return the tokenizer.
    /// @throws value_error as from_file.
    static Tokenizer from_json(std::string_view json, const std::string& source = "tokenizer.json") {
        const nlohmann::json root = seqembed::detail::run_renaming_error<value_error, nlohmann::json::exception>(
            [&] { return nlohmann::json::parse(json.begin(), json.end()); }, source, ": ");
        Tokenizer tokenizer;
        tokenizer.m_source = source;
        tokenizer.read(root);
        return tokenizer;
    }

    /// @brief BERT's tokenizer from its vocab.txt (one token per line, the line number its id),
    ///        as Hugging Face's BertTokenizerFast builds it: BertNormalizer, BertPreTokenizer,
    ///        WordPiece with [UNK], [CLS] $A [SEP] ($B:1 [SEP]:1).
    /// @param path vocab.txt.
    /// @param lowercase lowercase and strip accents (uncased models) or not (cased models).
    /// @return the tokenizer.
    /// @throws file_error if it cannot be read; value_error if [UNK], [CLS], [SEP] or [PAD] is
    ///         missing.
    static Tokenizer from_bert_vocab(const std::string& path, bool lowercase = true) {
        std::ifstream stream(path, std::ios::binary);
        if (!stream) seqembed::detail::fail<file_error>(path, ": cannot open it");
        Tokenizer tokenizer;
        tokenizer.m_source = path;
        std::string line;
        while (std::getline(stream, line)) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            tokenizer.add_vocab_entry(line, static_cast<TokenId>(tokenizer.m_model.vocab.tokens.size()));
        }
        tokenizer.m_normalizer = detail::BertNormalizerOptions{true, true, lowercase, lowercase};
        tokenizer.m_model.unk_id = tokenizer.required_id("[UNK]");
        for (const char* special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
            const TokenId id = tokenizer.m_model.vocab.find(special);
            if (id >= 0) tokenizer.add_added_token({id, special, false, false, false, false, true, {}, {}});
        }
        tokenizer.set_bert_template("[CLS]", tokenizer.required_id("[CLS]"), "[SEP]", tokenizer.required_id("[SEP]"));
        tokenizer.normalize_added_tokens();
        return tokenizer;
    }

    /// @brief Encodes one text.
    /// @param text UTF-8.
    /// @param options special tokens, invalid UTF-8.
    /// @return its encoding, truncated and padded as set.
    /// @throws value_error for invalid UTF-8 (unless replaced) or a truncation the text cannot
    ///         take.
    Encoding encode(std::string_view text, const EncodeOptions& options = {}) const {
        Encoding encoding = finish(tokens_of(text, options), std::nullopt, options.add_special_tokens);
        if (m_padding) pad(encoding, encoding.size());
        return encoding;
    }

    /// @brief Encodes a pair of texts (a question and its context, two sentences).
    /// @param first the first text (type 0).
    /// @param second the second text (type 1).
    /// @param options special tokens, invalid UTF-8.
    /// @return their encoding, truncated and padded as set.
    /// @throws value_error as encode.
    Encoding encode(std::string_view first, std::string_view second, const EncodeOptions& options = {}) const {
        Encoding encoding =
            finish(tokens_of(first, options), tokens_of(second, options), options.add_special_tokens);
        if (m_padding) pad(encoding, encoding.size());
        return encoding;
    }

    /// @brief Encodes several texts into one batch ready for the pipeline: ids padded to the
    ///        longest on options' side, the lengths, token types and offsets (EncodedBatch::batch()
    ///        gives the forward its Batch). Truncation applies as set; set_padding does not.
    /// @param texts UTF-8 texts.
    /// @param batch the padding side and id (by default the tokenizer's [PAD], <pad> or
    ///        set_padding's id).
    /// @param options special tokens, invalid UTF-8.
    /// @return the batch.
    /// @throws value_error as encode (naming the text), or when no padding id is given and the
    ///         tokenizer has none.
    EncodedBatch encode_batch(const std::vector<std::string>& texts, const BatchOptions& batch = {},
                              const EncodeOptions& options = {}) const {
        const TokenId pad_id = batch.pad_id ? *batch.pad_id : padding_id();
        std::vector<std::vector<TokenId>> ids;
        std::vector<std::vector<TokenId>> types;
        std::vector<std::vector<std::pair<std::size_t, std::size_t>>> offsets;
        for (Encoding& encoding : unpadded(texts, options)) {
            ids.push_back(std::move(encoding.ids));
            types.push_back(std::move(encoding.type_ids));
            offsets.push_back(std::move(encoding.offsets));
        }
        EncodedBatch out = seqembed::detail::pad_sequences(ids, batch.side, pad_id);
        out.token_types = seqembed::detail::pad_sequences(types, batch.side, 0).ids;
        out.offsets = std::move(offsets);
        return out;
    }

    /// @brief Each text's Encoding, padded together as set_padding says (to the longest by
    ///        default), as Hugging Face's encode_batch.
    /// @param texts UTF-8 texts.
    /// @param options special tokens, invalid UTF-8.
    /// @return one encoding per text.
    /// @throws value_error as encode (naming the text).
    std::vector<Encoding> encode_each(const std::vector<std::string>& texts, const EncodeOptions& options = {}) const {
        std::vector<Encoding> encodings = unpadded(texts, options);
        if (m_padding) {
            std::size_t longest = 0;
            for (const Encoding& encoding : encodings) longest = std::max(longest, encoding.size());
            for (Encoding& encoding : encodings) pad(encoding, longest);
        }
        return encodings;
    }

    /// @brief The text of `ids`, as Hugging Face's decode.
    /// @param ids token ids.
    /// @param skip_special_tokens leave the special tokens out.
    /// @return the text.
    /// @throws index_error for an id with no token.
    std::string decode(const std::vector<TokenId>& ids, bool skip_special_tokens = false) const {
        std::vector<std::string> tokens;
        tokens.reserve(ids.size());
        for (std::size_t k = 0; k < ids.size(); ++k) {
            const std::string* token = token_of(ids[k], true);
            if (token == nullptr)
                seqembed::detail::fail<index_error>("token id ", ids[k], " at ", k, " has no token in ", m_source);
            if (skip_special_tokens && is_special(*token)) continue;
            tokens.push_back(*token);
        }
        return detail::decode_wordpiece(tokens, m_decoder_prefix, m_decoder_cleanup);
    }

    /// @brief Truncates every encoding from now on (none: no truncation).
    /// @param truncation the longest encoding and the strategy.
    void set_truncation(std::optional<Truncation> truncation) { m_truncation = std::move(truncation); }
    /// @brief Pads every encoding from now on (none: no padding).
    /// @param padding the side, the length, the pad token.
    void set_padding(std::optional<PaddingOptions> padding) { m_padding = std::move(padding); }

    /// @brief The id of a token (the model's vocabulary or an added token).
    /// @param token the token.
    /// @return its id, or none.
    std::optional<TokenId> token_to_id(const std::string& token) const {
        for (const AddedToken& added : m_added)
            if (added.content == token) return added.id;
        const TokenId id = m_model.vocab.find(token);
        return id >= 0 ? std::optional<TokenId>(id) : std::nullopt;
    }

    /// @brief The token of an id.
    /// @param id a token id.
    /// @return its token, or none.
    std::optional<std::string> id_to_token(TokenId id) const {
        const std::string* token = token_of(id);
        return token == nullptr ? std::nullopt : std::optional<std::string>(*token);
    }

    /// @brief The number of ids (the model's vocabulary and the added tokens).
    /// @return one past the largest id.
    std::size_t vocab_size() const noexcept {
        std::size_t size = m_model.vocab.tokens.size();
        for (const AddedToken& added : m_added) size = std::max(size, static_cast<std::size_t>(added.id) + 1);
        return size;
    }

private:
    /// An added token of tokenizer.json ("added_tokens").
    struct AddedToken {
        TokenId id;
        std::string content;
        bool single_word;
        bool lstrip;
        bool rstrip;
        bool normalized;
        bool special;
        std::vector<char32_t> code_points;  // what the text must hold: content, normalized when `normalized`
        std::string decoded;                // what decode() writes: content, normalized when `normalized`
    };

    /// Adds an added token (its code points found by normalized_added_tokens()).
    void add_added_token(AddedToken token) { m_added.push_back(std::move(token)); }

    /// Each added token's code points, and for those marked `normalized` their normalized form,
    /// which the normalized text holds and which decode() gives back (as Hugging Face's 0.23).
    void normalize_added_tokens() {
        for (AddedToken& token : m_added) {
            std::vector<detail::Char> chars = detail::decode_utf8(token.content, true);
            if (token.normalized) chars = detail::bert_normalize(chars, m_normalizer);
            token.code_points.clear();
            token.decoded.clear();
            for (const detail::Char& ch : chars) {
                token.code_points.push_back(ch.code);
                detail::append_utf8(token.decoded, ch.code);
            }
        }
    }

    /// A piece of the post-processor's template: a special token, or sequence A (0) or B (1).
    struct TemplatePiece {
        bool special;
        int sequence;  // 0 or 1 for a sequence
        std::vector<TokenId> ids;
        std::vector<std::string> tokens;
        TokenId type_id;
    };

    std::string m_source;
    detail::BertNormalizerOptions m_normalizer;
    detail::WordPiece m_model;
    std::vector<AddedToken> m_added;
    std::vector<TemplatePiece> m_single;
    std::vector<TemplatePiece> m_pair;
    std::string m_decoder_prefix = "##";
    bool m_decoder_cleanup = true;
    std::optional<Truncation> m_truncation;
    std::optional<PaddingOptions> m_padding;

    [[noreturn]] void unsupported(const std::string& what, const std::string& type) const {
        seqembed::detail::fail<value_error>(m_source, ": ", what, " of type \"", type,
                                            "\" is not implemented by this version of seqembed::text");
    }

    [[noreturn]] void malformed(const std::string& what) const {
        seqembed::detail::fail<value_error>(m_source, ": ", what);
    }

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
        } else {
            if (!value->is_number_integer()) malformed(what + "'s \"" + key + "\" is not an integer");
        }
        return value->get<T>();
    }

    void add_vocab_entry(const std::string& token, TokenId id) {
        auto& vocab = m_model.vocab;
        if (id < 0) malformed("the vocabulary gives \"" + token + "\" a negative id");
        if (static_cast<std::size_t>(id) >= vocab.tokens.size()) vocab.tokens.resize(static_cast<std::size_t>(id) + 1);
        vocab.tokens[static_cast<std::size_t>(id)] = token;
        vocab.ids.emplace(token, id);
    }

    TokenId required_id(const std::string& token) const {
        const std::optional<TokenId> id = token_to_id(token);
        if (!id) malformed("the vocabulary has no \"" + token + "\"");
        return *id;
    }

    void set_bert_template(const std::string& cls, TokenId cls_id, const std::string& sep, TokenId sep_id) {
        const TemplatePiece first{true, -1, {cls_id}, {cls}, 0};
        const TemplatePiece separator{true, -1, {sep_id}, {sep}, 0};
        TemplatePiece separator_b = separator;
        separator_b.type_id = 1;
        m_single = {first, {false, 0, {}, {}, 0}, separator};
        m_pair = {first, {false, 0, {}, {}, 0}, separator, {false, 1, {}, {}, 1}, separator_b};
    }

    void read(const nlohmann::json& root) {
        if (!root.is_object()) malformed("is not a JSON object");
        const nlohmann::json* model = member(root, "model");
        if (model == nullptr) malformed("has no \"model\"");
        const std::string model_type = type_of(*model, "the model");
        if (model_type != "WordPiece") unsupported("the model", model_type);
        const nlohmann::json* vocab = member(*model, "vocab");
        if (vocab == nullptr || !vocab->is_object()) malformed("the WordPiece model has no \"vocab\" object");
        for (const auto& [token, id] : vocab->items()) {
            if (!id.is_number_integer()) malformed("the vocabulary's id of \"" + token + "\" is not an integer");
            add_vocab_entry(token, id.get<TokenId>());
        }
        m_model.unk_token = value_or<std::string>(*model, "unk_token", "[UNK]", "the model");
        m_model.prefix = value_or<std::string>(*model, "continuing_subword_prefix", "##", "the model");
        m_model.max_input_chars_per_word =
            value_or<std::size_t>(*model, "max_input_chars_per_word", 100, "the model");
        m_model.unk_id = m_model.vocab.find(m_model.unk_token);
        if (m_model.unk_id < 0) malformed("the WordPiece model's unk_token \"" + m_model.unk_token + "\" is not in its vocab");

        if (const nlohmann::json* added = member(root, "added_tokens")) {
            if (!added->is_array()) malformed("\"added_tokens\" is not an array");
            for (const nlohmann::json& token : *added) {
                const std::string what = "an added token";
                const nlohmann::json* id = member(token, "id");
                const nlohmann::json* content = member(token, "content");
                if (id == nullptr || !id->is_number_integer() || content == nullptr || !content->is_string())
                    malformed(what + " lacks an integer \"id\" or a string \"content\"");
                add_added_token({id->get<TokenId>(), content->get<std::string>(),
                                 value_or<bool>(token, "single_word", false, what),
                                 value_or<bool>(token, "lstrip", false, what), value_or<bool>(token, "rstrip", false, what),
                                 value_or<bool>(token, "normalized", false, what),
                                 value_or<bool>(token, "special", false, what), {}, {}});
            }
        }

        m_normalizer = {false, false, false, false};
        if (const nlohmann::json* normalizer = member(root, "normalizer")) {
            const std::string type = type_of(*normalizer, "the normalizer");
            if (type != "BertNormalizer") unsupported("the normalizer", type);
            const std::string what = "the BertNormalizer";
            m_normalizer.clean_text = value_or<bool>(*normalizer, "clean_text", true, what);
            m_normalizer.handle_chinese_chars = value_or<bool>(*normalizer, "handle_chinese_chars", true, what);
            m_normalizer.lowercase = value_or<bool>(*normalizer, "lowercase", true, what);
            m_normalizer.strip_accents = value_or<bool>(*normalizer, "strip_accents", m_normalizer.lowercase, what);
        }
        const nlohmann::json* pre_tokenizer = member(root, "pre_tokenizer");
        if (pre_tokenizer == nullptr) malformed("has no \"pre_tokenizer\" (this version splits words as BERT)");
        const std::string pre_type = type_of(*pre_tokenizer, "the pre-tokenizer");
        if (pre_type != "BertPreTokenizer") unsupported("the pre-tokenizer", pre_type);

        if (const nlohmann::json* processor = member(root, "post_processor")) {
            const std::string type = type_of(*processor, "the post-processor");
            if (type == "TemplateProcessing")
                read_template(*processor);
            else if (type == "BertProcessing")
                read_bert_processing(*processor);
            else
                unsupported("the post-processor", type);
        } else {
            m_single = {{false, 0, {}, {}, 0}};
            m_pair = {{false, 0, {}, {}, 0}, {false, 1, {}, {}, 1}};
        }
        if (const nlohmann::json* decoder = member(root, "decoder")) {
            const std::string type = type_of(*decoder, "the decoder");
            if (type != "WordPiece") unsupported("the decoder", type);
            m_decoder_prefix = value_or<std::string>(*decoder, "prefix", "##", "the WordPiece decoder");
            m_decoder_cleanup = value_or<bool>(*decoder, "cleanup", true, "the WordPiece decoder");
        }
        if (member(root, "truncation") != nullptr || member(root, "padding") != nullptr)
            malformed("sets \"truncation\" or \"padding\": set them with set_truncation and set_padding");
        normalize_added_tokens();
    }

    void read_bert_processing(const nlohmann::json& processor) {
        const auto pair_of = [&](const char* key) {
            const nlohmann::json* entry = member(processor, key);
            if (entry == nullptr || !entry->is_array() || entry->size() != 2 || !(*entry)[0].is_string() ||
                !(*entry)[1].is_number_integer())
                malformed(std::string("BertProcessing's \"") + key + "\" is not [token, id]");
            return std::make_pair((*entry)[0].get<std::string>(), (*entry)[1].get<TokenId>());
        };
        const auto [sep, sep_id] = pair_of("sep");
        const auto [cls, cls_id] = pair_of("cls");
        set_bert_template(cls, cls_id, sep, sep_id);
    }

    void read_template(const nlohmann::json& processor) {
        const nlohmann::json* specials = member(processor, "special_tokens");
        const auto pieces = [&](const char* key) {
            const nlohmann::json* list = member(processor, key);
            if (list == nullptr || !list->is_array()) malformed(std::string("TemplateProcessing has no \"") + key + "\" list");
            std::vector<TemplatePiece> out;
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
                        piece.ids.push_back((*ids)[k].get<TokenId>());
                        piece.tokens.push_back((*tokens)[k].get<std::string>());
                    }
                    out.push_back(std::move(piece));
                } else if (const nlohmann::json* sequence = member(item, "Sequence")) {
                    const std::string name = value_or<std::string>(*sequence, "id", "A", "a Sequence");
                    if (name != "A" && name != "B") malformed("TemplateProcessing's sequence \"" + name + "\" is not A or B");
                    out.push_back({false, name == "A" ? 0 : 1, {}, {}, value_or<TokenId>(*sequence, "type_id", 0, "a Sequence")});
                } else {
                    malformed(std::string("TemplateProcessing's \"") + key + "\" holds neither a SpecialToken nor a Sequence");
                }
            }
            return out;
        };
        m_single = pieces("single");
        m_pair = pieces("pair");
    }

    /// The token of id: an added token's content (or, for decoding, what decode() writes for
    /// it), else the vocabulary's; null for none.
    const std::string* token_of(TokenId id, bool for_decoding = false) const {
        for (const AddedToken& added : m_added)
            if (added.id == id) return for_decoding ? &added.decoded : &added.content;
        if (id < 0 || static_cast<std::size_t>(id) >= m_model.vocab.tokens.size()) return nullptr;
        const std::string& token = m_model.vocab.tokens[static_cast<std::size_t>(id)];
        return token.empty() ? nullptr : &token;
    }

    bool is_special(const std::string& token) const {
        for (const AddedToken& added : m_added)
            if (added.special && added.content == token) return true;
        return false;
    }

    /// The added token that matches chars[at...] (the longest), or null. Added tokens with
    /// `normalized` match the normalized text, the others the input.
    const AddedToken* added_at(const std::vector<detail::Char>& chars, std::size_t at, bool normalized,
                               std::size_t& length) const {
        const AddedToken* best = nullptr;
        length = 0;
        for (const AddedToken& added : m_added) {
            if (added.normalized != normalized) continue;
            const std::vector<char32_t>& content = added.code_points;
            if (content.empty() || content.size() <= length || at + content.size() > chars.size()) continue;
            bool same = true;
            for (std::size_t k = 0; k < content.size() && same; ++k) same = chars[at + k].code == content[k];
            if (!same) continue;
            best = &added;
            length = content.size();
        }
        return best;
    }

    /// The tokens of chars (normalized when `normalized`), added tokens first, the rest through
    /// the pre-tokenizer and the model. Added tokens are found as Hugging Face finds them: the
    /// leftmost longest match, then the next after it; a single_word token with a word character
    /// (\w) beside it is no match, and the search goes on after it; lstrip and rstrip take the
    /// whitespace beside the token into it.
    void split_added(const std::vector<detail::Char>& chars, bool normalized, std::vector<detail::Piece>& out) const {
        std::size_t start = 0;
        const auto rest = [&](std::size_t end) {
            if (end <= start) return;
            const std::vector<detail::Char> part(chars.begin() + static_cast<std::ptrdiff_t>(start),
                                                 chars.begin() + static_cast<std::ptrdiff_t>(end));
            if (!normalized) {
                split_added(detail::bert_normalize(part, m_normalizer), true, out);
                return;
            }
            for (const auto& [first, last] : detail::bert_pre_tokenize(part)) m_model.split(part, first, last, out);
        };
        for (std::size_t at = 0; at < chars.size();) {
            std::size_t length = 0;
            const AddedToken* added = added_at(chars, at, normalized, length);
            if (added == nullptr) {
                ++at;
                continue;
            }
            std::size_t begin = at;
            std::size_t end = at + length;
            if (added->single_word && ((begin > 0 && detail::is_word_character(chars[begin - 1].code)) ||
                                       (end < chars.size() && detail::is_word_character(chars[end].code)))) {
                at = end;
                continue;
            }
            if (added->lstrip)
                while (begin > start && detail::is_whitespace(chars[begin - 1].code)) --begin;
            if (added->rstrip)
                while (end < chars.size() && detail::is_whitespace(chars[end].code)) ++end;
            rest(begin);
            std::string token;
            for (std::size_t k = begin; k < end; ++k) detail::append_utf8(token, chars[k].code);
            out.push_back({added->id, std::move(token), chars[begin].begin, chars[end - 1].end});
            start = end;
            at = end;
        }
        rest(chars.size());
    }

    std::vector<detail::Piece> tokens_of(std::string_view text, const EncodeOptions& options) const {
        const std::vector<detail::Char> chars = detail::decode_utf8(text, options.invalid_utf8 == InvalidUtf8::replace);
        std::vector<detail::Piece> pieces;
        split_added(chars, false, pieces);
        return pieces;
    }

    /// Each text's encoding, truncated as set, not padded.
    std::vector<Encoding> unpadded(const std::vector<std::string>& texts, const EncodeOptions& options) const {
        std::vector<Encoding> encodings;
        encodings.reserve(texts.size());
        for (std::size_t k = 0; k < texts.size(); ++k)
            encodings.push_back(seqembed::detail::run_renaming_error<value_error, value_error>(
                [&] { return finish(tokens_of(texts[k], options), std::nullopt, options.add_special_tokens); },
                "text ", k, " of the batch: "));
        return encodings;
    }

    /// The id padding takes: set_padding's, else the token [PAD] or <pad>.
    TokenId padding_id() const {
        if (m_padding) return m_padding->pad_id;
        for (const char* token : {"[PAD]", "<pad>"})
            if (const std::optional<TokenId> id = token_to_id(token)) return *id;
        seqembed::detail::fail<value_error>(m_source, ": has no [PAD] or <pad> token: give BatchOptions::pad_id");
    }

    std::size_t added_count(bool pair) const {
        std::size_t count = 0;
        for (const TemplatePiece& piece : pair ? m_pair : m_single) count += piece.ids.size();
        return count;
    }

    static void truncate_to(std::vector<detail::Piece>& pieces, std::size_t length, PaddingSide side) {
        if (pieces.size() <= length) return;
        if (side == PaddingSide::right)
            pieces.resize(length);
        else
            pieces.erase(pieces.begin(), pieces.end() - static_cast<std::ptrdiff_t>(length));
    }

    void truncate(std::vector<detail::Piece>& first, std::optional<std::vector<detail::Piece>>& second,
                  bool add_special_tokens) const {
        if (!m_truncation) return;
        const std::size_t added = add_special_tokens ? added_count(second.has_value()) : 0;
        // Hugging Face subtracts the special tokens in unsigned arithmetic: a max_length below
        // their count wraps around, and only its early cut (each text to max_length tokens)
        // applies; one equal to their count empties every text.
        if (m_truncation->max_length < added) {
            truncate_to(first, m_truncation->max_length, m_truncation->side);
            if (second) truncate_to(*second, m_truncation->max_length, m_truncation->side);
            return;
        }
        const std::size_t max_length = m_truncation->max_length - added;
        if (max_length == 0) {
            first.clear();
            if (second) second->clear();
            return;
        }
        const std::size_t total = first.size() + (second ? second->size() : 0);
        if (total <= max_length) return;
        const std::size_t to_remove = total - max_length;
        const PaddingSide side = m_truncation->side;
        if (m_truncation->strategy == TruncationStrategy::longest_first) {
            if (!second) {
                truncate_to(first, max_length, side);
                return;
            }
            std::size_t n1 = first.size();
            std::size_t n2 = second->size();
            const bool swap = n1 > n2;
            if (swap) std::swap(n1, n2);
            if (n1 > max_length)
                n2 = n1;
            else
                n2 = std::max(n1, max_length - n1);
            if (n1 + n2 > max_length) {
                n1 = max_length / 2;
                n2 = n1 + max_length % 2;
            }
            if (swap) std::swap(n1, n2);
            truncate_to(first, n1, side);
            truncate_to(*second, n2, side);
            return;
        }
        std::vector<detail::Piece>* target = &first;
        if (m_truncation->strategy == TruncationStrategy::only_second) {
            if (!second) seqembed::detail::fail<value_error>("truncation only_second needs a pair of texts");
            target = &*second;
        }
        if (target->size() <= to_remove)
            seqembed::detail::fail<value_error>("truncation to ", m_truncation->max_length, " tokens: the ",
                                                target == &first ? "first" : "second", " text has ", target->size(),
                                                " tokens, too few to remove ", to_remove);
        truncate_to(*target, target->size() - to_remove, side);
    }

    Encoding finish(std::vector<detail::Piece> first, std::optional<std::vector<detail::Piece>> second,
                    bool add_special_tokens) const {
        truncate(first, second, add_special_tokens);
        Encoding encoding;
        const auto push = [&](TokenId id, const std::string& token, TokenId type, bool special,
                              std::pair<std::size_t, std::size_t> offsets, int sequence) {
            encoding.ids.push_back(id);
            encoding.tokens.push_back(token);
            encoding.type_ids.push_back(type);
            encoding.special_tokens_mask.push_back(special ? 1 : 0);
            encoding.attention_mask.push_back(1);
            encoding.offsets.push_back(offsets);
            encoding.sequence_ids.push_back(sequence);
        };
        for (const TemplatePiece& piece : second ? m_pair : m_single) {
            if (piece.special) {
                if (!add_special_tokens) continue;
                for (std::size_t k = 0; k < piece.ids.size(); ++k)
                    push(piece.ids[k], piece.tokens[k], piece.type_id, true, {0, 0}, -1);
                continue;
            }
            const std::vector<detail::Piece>& sequence = piece.sequence == 0 ? first : *second;
            for (const detail::Piece& token : sequence)
                push(token.id, token.token, piece.type_id, false, {token.begin, token.end}, piece.sequence);
        }
        return encoding;
    }

    void pad(Encoding& encoding, std::size_t longest) const {
        std::size_t length = m_padding->length.value_or(longest);
        if (m_padding->multiple_of > 0 && length % m_padding->multiple_of != 0)
            length += m_padding->multiple_of - length % m_padding->multiple_of;
        if (encoding.size() >= length) return;
        const std::size_t count = length - encoding.size();
        const bool left = m_padding->side == PaddingSide::left;
        const auto fill = [&](auto& values, auto value) {
            using Value = typename std::decay_t<decltype(values)>::value_type;
            values.insert(left ? values.begin() : values.end(), count, static_cast<Value>(value));
        };
        fill(encoding.ids, m_padding->pad_id);
        fill(encoding.tokens, m_padding->pad_token);
        fill(encoding.type_ids, m_padding->pad_type_id);
        fill(encoding.special_tokens_mask, 1);
        fill(encoding.attention_mask, 0);
        fill(encoding.offsets, std::pair<std::size_t, std::size_t>(0, 0));
        fill(encoding.sequence_ids, -1);
    }
};

/// @brief The tokenizer of a model's directory, as Hugging Face's AutoTokenizer finds it:
///        tokenizer.json, or else BERT's vocab.txt (lowercased unless tokenizer_config.json says
///        "do_lower_case": false).
/// @param directory the model's directory (the one io::load_model reads).
/// @return the tokenizer.
/// @throws file_error when the directory holds neither file; as Tokenizer::from_file and
///         Tokenizer::from_bert_vocab otherwise.
inline Tokenizer load_tokenizer(const std::string& directory) {
    const std::filesystem::path root(directory);
    const std::filesystem::path json = root / "tokenizer.json";
    const std::filesystem::path vocab = root / "vocab.txt";
    std::error_code ignored;
    if (std::filesystem::is_regular_file(json, ignored)) return Tokenizer::from_file(json.string());
    if (std::filesystem::is_regular_file(vocab, ignored)) {
        bool lowercase = true;
        const std::filesystem::path config = root / "tokenizer_config.json";
        if (std::filesystem::is_regular_file(config, ignored)) {
            const nlohmann::json settings = nlohmann::json::parse(detail::read_file(config.string()), nullptr, false);
            if (settings.is_discarded() || !settings.is_object())
                seqembed::detail::fail<value_error>(config.string(), ": is not a JSON object");
            const auto found = settings.find("do_lower_case");
            if (found != settings.end() && found->is_boolean()) lowercase = found->get<bool>();
        }
        return Tokenizer::from_bert_vocab(vocab.string(), lowercase);
    }
    seqembed::detail::fail<file_error>(directory, ": holds no tokenizer.json and no vocab.txt");
}

}  // namespace seqembed::text
