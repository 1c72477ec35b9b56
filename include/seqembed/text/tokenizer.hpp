/// @file text/tokenizer.hpp
/// @brief Tokenizer: text to ids as a model's own tokenizer.json says, giving Hugging Face
///        tokenizers' ids, type ids and offsets.
///
/// Optional: target seqembed::text (nlohmann_json, utf8proc and PCRE2; Debian nlohmann-json3-dev,
/// libutf8proc-dev and libpcre2-dev); seqembed.hpp never includes it. It reads the WordPiece
/// (BERT), BPE (GPT-2, RoBERTa, Llama, Qwen, Mistral) and Unigram (SentencePiece) families:
/// docs/tokenizers.md lists every component. A tokenizer.json component it does not implement is
/// an error naming it.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "../detail/exceptions.hpp"
#include "../detail/workers.hpp"
#include "../error.hpp"
#include "../padding.hpp"
#include "../types.hpp"
#include "detail/tokenizer_json.hpp"
#include "detail/unicode.hpp"
#include "encoded_batch.hpp"

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

/// A token to add on top of a model's vocabulary, as Hugging Face tokenizers' AddedToken.
struct NewToken {
    std::string content;
    bool single_word = false;
    bool lstrip = false;
    bool rstrip = false;
    bool normalized = true;
    bool special = false;
};

}  // namespace detail

class Tokenizer;
inline Tokenizer load_tokenizer(const std::string& directory);

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
    /// @brief The threads that share a batch's texts (encode_batch, encode_each): 1 encodes on
    ///        the calling thread, 0 uses one per core. The result is the same for any count.
    std::size_t threads = 1;
};

/// @brief A pair of texts (a question and its context, two sentences).
using TextPair = std::pair<std::string, std::string>;

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

/// @brief transformers' clean_up_tokenization, which its tokenizers' decode applies after the
///        tokenizer's own decoders when clean_up_tokenization_spaces is set: " .", " ?", " !",
///        " ,", " ' ", " n't", " 'm", " 's", " 've" and " 're" lose their space, each rule over
///        the whole text in turn, occurrences left to right, as Python's str.replace.
/// @param text decoded text.
/// @return the text cleaned up.
inline std::string clean_up_tokenization(std::string text) {
    static constexpr std::pair<std::string_view, std::string_view> rules[] = {
        {" .", "."},   {" ?", "?"},     {" !", "!"},     {" ,", ","},     {" ' ", "'"},
        {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
    for (const auto& [from, to] : rules) {
        std::string out;
        out.reserve(text.size());
        std::size_t at = 0;
        for (std::size_t found = text.find(from); found != std::string::npos; found = text.find(from, at)) {
            out.append(text, at, found - at);
            out.append(to);
            at = found + from.size();
        }
        out.append(text, at, std::string::npos);
        text = std::move(out);
    }
    return text;
}

/// @brief BertTokenizerFast's settings for a tokenizer built from vocab.txt (tokenizer_config.json's
///        do_lower_case, strip_accents, tokenize_chinese_chars).
struct BertVocabOptions {
    /// @brief BertTokenizerFast's defaults: lowercase, accents stripped, CJK spaced.
    BertVocabOptions() = default;
    /// @brief The defaults but for lowercasing (and so stripping accents).
    /// @param lowercase_text lowercase (uncased models) or not (cased models).
    BertVocabOptions(bool lowercase_text) noexcept : lowercase(lowercase_text) {}  // NOLINT(google-explicit-constructor)

    /// @brief Lowercase (uncased models) or not (cased models).
    bool lowercase = true;
    /// @brief Strip accents; none: as lowercase.
    std::optional<bool> strip_accents;
    /// @brief Put spaces around CJK ideographs.
    bool tokenize_chinese_chars = true;
};

/// @brief GPT2TokenizerFast's settings for a tokenizer built from vocab.json and merges.txt
///        (tokenizer_config.json's add_prefix_space, add_bos_token and bos_token).
struct BpeFilesOptions {
    /// @brief A space before the first word, as ByteLevel's add_prefix_space.
    bool add_prefix_space = false;
    /// @brief A token put before every text (OPT's "</s>", its add_bos_token and bos_token):
    ///        "bos $A" and "bos $A bos:1 $B:1", as transformers 5's GPT2Tokenizer builds them
    ///        (transformers 4's GPT2Converter put no bos before $B); none: none.
    std::optional<std::string> bos_token;
    /// @brief Tokens matched whole in the text and skipped by decode(skip_special_tokens), when
    ///        the vocabulary has them (and the bos token): GPT-2's <|endoftext|> by default.
    std::vector<std::string> special_tokens{"<|endoftext|>"};
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
    /// @brief The tokenizer a tokenizer.json describes, with the truncation and padding it sets
    ///        in force, as tokenizers' Tokenizer.from_file (load_tokenizer turns them off, as
    ///        transformers does; a truncation stride is read but makes no overflowing encodings).
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
    /// @param options lowercase (a bool converts: uncased or cased), strip_accents,
    ///        tokenize_chinese_chars.
    /// @return the tokenizer.
    /// @throws file_error if it cannot be read; value_error if [UNK], [CLS] or [SEP] is missing.
    static Tokenizer from_bert_vocab(const std::string& path, const BertVocabOptions& options = {}) {
        std::ifstream stream(path, std::ios::binary);
        if (!stream) seqembed::detail::fail<file_error>(path, ": cannot open it");
        Tokenizer tokenizer;
        tokenizer.m_source = path;
        const detail::JsonReader reader(path);
        detail::WordPiece model;
        std::string line;
        while (std::getline(stream, line)) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            reader.add_entry(model.vocab, line, static_cast<TokenId>(model.vocab.tokens.size()));
        }
        model.unk_id = model.vocab.find("[UNK]");
        if (model.unk_id < 0) reader.malformed("the vocabulary has no \"[UNK]\"");
        detail::Normalizer normalizer;
        normalizer.bert = detail::BertNormalizerOptions{true, options.tokenize_chinese_chars,
                                                        options.strip_accents.value_or(options.lowercase),
                                                        options.lowercase};
        tokenizer.m_normalizers = {normalizer};
        tokenizer.m_pre_tokenizers = {detail::PreTokenizer{}};
        tokenizer.m_decoders = {detail::Decoder{}};
        std::vector<AddedToken> added;
        for (const char* special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
            const TokenId id = model.vocab.find(special);
            if (id >= 0) added.push_back({id, special, false, false, false, false, true, {}, {}});
        }
        const TokenId cls = model.vocab.find("[CLS]");
        const TokenId sep = model.vocab.find("[SEP]");
        if (cls < 0 || sep < 0) reader.malformed("the vocabulary has no \"[CLS]\" or no \"[SEP]\"");
        tokenizer.m_post.set_bert("[CLS]", cls, "[SEP]", sep);
        tokenizer.m_model = std::move(model);
        tokenizer.set_added_tokens(std::move(added));
        return tokenizer;
    }

    /// @brief GPT-2's tokenizer from its vocab.json ({token: id}) and merges.txt (a version line,
    ///        then one merge "a b" per line), as Hugging Face's GPT2TokenizerFast builds it: the
    ///        ByteLevel pre-tokenizer, BPE, the ByteLevel decoder, the special tokens of the
    ///        options (<|endoftext|> by default).
    /// @param vocab_path vocab.json.
    /// @param merges_path merges.txt.
    /// @param options add_prefix_space, a bos token, special tokens (GPT-2's defaults: none).
    /// @return the tokenizer.
    /// @throws file_error if a file cannot be read; value_error if one is malformed (naming it),
    ///         or for a bos token the vocabulary does not have.
    static Tokenizer from_bpe_files(const std::string& vocab_path, const std::string& merges_path,
                                    const BpeFilesOptions& options = {}) {
        Tokenizer tokenizer;
        tokenizer.m_source = vocab_path;
        detail::Bpe model;
        {
            const std::string text = detail::read_file(vocab_path);
            const nlohmann::json root = seqembed::detail::run_renaming_error<value_error, nlohmann::json::exception>(
                [&] { return nlohmann::json::parse(text); }, vocab_path, ": ");
            detail::JsonReader(vocab_path).vocab(nlohmann::json{{"vocab", root}}, model.vocab, "vocab.json");
        }
        const detail::JsonReader reader(merges_path);
        std::istringstream merges(detail::read_file(merges_path));
        std::string line;
        std::uint32_t rank = 0;
        for (std::size_t number = 1; std::getline(merges, line); ++number) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (line.empty() || (number == 1 && line.rfind("#version", 0) == 0)) continue;
            const std::size_t space = line.find(' ');
            if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
                reader.malformed("line " + std::to_string(number) + " is not two tokens separated by a space");
            reader.add_merge(model, line.substr(0, space), line.substr(space + 1), rank++);
        }
        model.index();
        detail::PreTokenizer pre;
        pre.kind = detail::PreTokenizer::Kind::byte_level;
        pre.pattern = detail::Regex(detail::gpt2_pattern());
        pre.add_prefix_space = options.add_prefix_space;
        tokenizer.m_pre_tokenizers = {pre};
        detail::Decoder decoder;
        decoder.kind = detail::Decoder::Kind::byte_level;
        tokenizer.m_decoders = {decoder};
        std::vector<AddedToken> added;
        std::vector<std::string> specials = options.special_tokens;
        if (options.bos_token) {
            const TokenId bos = model.vocab.find(*options.bos_token);
            if (bos < 0)
                detail::JsonReader(vocab_path).malformed("has no bos token \"" + *options.bos_token + "\"");
            tokenizer.m_post.set_bos(*options.bos_token, bos);
            specials.push_back(*options.bos_token);
        }
        for (const std::string& special : specials) {
            const TokenId id = model.vocab.find(special);
            const bool listed = std::any_of(added.begin(), added.end(), [&](const AddedToken& a) { return a.id == id; });
            if (id >= 0 && !listed) added.push_back({id, special, false, false, false, true, true, {}, {}});
        }
        tokenizer.m_model = std::move(model);
        tokenizer.set_added_tokens(std::move(added));
        return tokenizer;
    }

    /// @brief Encodes one text.
    /// @param text UTF-8.
    /// @param options special tokens, invalid UTF-8.
    /// @return its encoding, truncated and padded as set.
    /// @throws value_error for invalid UTF-8 (unless replaced) or a truncation the text cannot
    ///         take.
    Encoding encode(std::string_view text, const EncodeOptions& options = {}) const {
        Encoding encoding = finish(tokens_of(text, options), std::nullopt, options.add_special_tokens, text, {});
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
            finish(tokens_of(first, options), tokens_of(second, options), options.add_special_tokens, first, second);
        if (m_padding) pad(encoding, encoding.size());
        return encoding;
    }

    /// @brief Encodes several texts into one batch ready for the pipeline: ids padded to the
    ///        longest on options' side, the lengths, token types and offsets (EncodedBatch::batch()
    ///        gives the forward its Batch). Truncation applies as set; set_padding does not.
    /// @param texts UTF-8 texts.
    /// @param batch the padding side and id (by default the tokenizer's [PAD], <pad> or
    ///        set_padding's id).
    /// @param options special tokens, invalid UTF-8, threads.
    /// @return the batch.
    /// @throws value_error as encode (naming the text), or when no padding id is given and the
    ///         tokenizer has none.
    EncodedBatch encode_batch(const std::vector<std::string>& texts, const BatchOptions& batch = {},
                              const EncodeOptions& options = {}) const {
        return batch_of(unpadded(texts, options), batch);
    }

    /// @brief Encodes several pairs of texts into one batch ready for the pipeline, as
    ///        encode_batch does texts: each row the pair's encoding (token types 0, then 1).
    /// @param pairs pairs of UTF-8 texts.
    /// @param batch the padding side and id.
    /// @param options special tokens, invalid UTF-8, threads.
    /// @return the batch.
    /// @throws value_error as encode (naming the pair).
    EncodedBatch encode_pairs(const std::vector<TextPair>& pairs, const BatchOptions& batch = {},
                              const EncodeOptions& options = {}) const {
        return batch_of(unpadded(pairs, options), batch);
    }

    /// @brief Each text's Encoding, padded together as set_padding says (to the longest by
    ///        default), as Hugging Face's encode_batch.
    /// @param texts UTF-8 texts.
    /// @param options special tokens, invalid UTF-8, threads.
    /// @return one encoding per text.
    /// @throws value_error as encode (naming the text).
    std::vector<Encoding> encode_each(const std::vector<std::string>& texts, const EncodeOptions& options = {}) const {
        return padded_together(unpadded(texts, options));
    }

    /// @brief Each pair's Encoding, padded together as set_padding says, as Hugging Face's
    ///        encode_batch of pairs.
    /// @param pairs pairs of UTF-8 texts.
    /// @param options special tokens, invalid UTF-8, threads.
    /// @return one encoding per pair.
    /// @throws value_error as encode (naming the pair).
    std::vector<Encoding> encode_each_pair(const std::vector<TextPair>& pairs, const EncodeOptions& options = {}) const {
        return padded_together(unpadded(pairs, options));
    }

    /// @brief The text of `ids`, as Hugging Face's decode: the tokenizer's decoders, then, when
    ///        clean_up_tokenization_spaces() is set, clean_up_tokenization as transformers'
    ///        tokenizer.decode applies it.
    /// @param ids token ids.
    /// @param skip_special_tokens leave the special tokens out.
    /// @return the text.
    /// @throws index_error for an id with no token.
    std::string decode(const std::vector<TokenId>& ids, bool skip_special_tokens = false) const {
        std::string text = decode_tokens(ids, skip_special_tokens);
        return m_clean_up_tokenization_spaces ? clean_up_tokenization(std::move(text)) : text;
    }

    /// @brief Whether decode() cleans up spaces as transformers' decode does with
    ///        clean_up_tokenization_spaces (off unless set here or by load_tokenizer).
    /// @return the setting.
    bool clean_up_tokenization_spaces() const noexcept { return m_clean_up_tokenization_spaces; }
    /// @brief Sets whether decode() cleans up spaces (clean_up_tokenization).
    /// @param clean_up the new setting.
    void set_clean_up_tokenization_spaces(bool clean_up) noexcept { m_clean_up_tokenization_spaces = clean_up; }

    /// @brief Whether the model is BPE, whose decoded text transformers does not clean up.
    /// @return true for a BPE model (GPT-2, RoBERTa, Llama, Qwen, ...).
    bool is_bpe() const noexcept { return std::holds_alternative<detail::Bpe>(m_model); }

    /// @brief Truncates every encoding from now on (none: no truncation).
    /// @param truncation the longest encoding and the strategy.
    void set_truncation(std::optional<Truncation> truncation) { m_truncation = std::move(truncation); }
    /// @brief Pads every encoding from now on (none: no padding).
    /// @param padding the side, the length, the pad token.
    void set_padding(std::optional<PaddingOptions> padding) { m_padding = std::move(padding); }

    /// @brief The truncation in force (from tokenizer.json or set_truncation).
    /// @return it, or none.
    const std::optional<Truncation>& truncation() const noexcept { return m_truncation; }
    /// @brief The padding in force (from tokenizer.json or set_padding).
    /// @return it, or none.
    const std::optional<PaddingOptions>& padding() const noexcept { return m_padding; }

    /// @brief The id of a token (the model's vocabulary or an added token).
    /// @param token the token.
    /// @return its id, or none.
    std::optional<TokenId> token_to_id(const std::string& token) const {
        const auto found = m_added_by_content.find(token);
        if (found != m_added_by_content.end()) return m_added[found->second].id;
        const TokenId id = detail::vocab_of(m_model).find(token);
        return id >= 0 ? std::optional<TokenId>(id) : std::nullopt;
    }

    /// @brief The token of an id.
    /// @param id a token id.
    /// @return its token, or none.
    std::optional<std::string> id_to_token(TokenId id) const {
        if (const AddedToken* added = added_of(id)) return added->content;
        const std::string* token = model_token(id);
        return token == nullptr ? std::nullopt : std::optional<std::string>(*token);
    }

    /// @brief The number of ids (the model's vocabulary and the added tokens).
    /// @return one past the largest id.
    std::size_t vocab_size() const noexcept {
        std::size_t size = detail::vocab_of(m_model).tokens.size();
        for (const AddedToken& added : m_added) size = std::max(size, static_cast<std::size_t>(added.id) + 1);
        return size;
    }

private:
    /// The tokens of `ids` through the tokenizer's decoders.
    std::string decode_tokens(const std::vector<TokenId>& ids, bool skip_special_tokens) const {
        std::vector<std::string> tokens;
        tokens.reserve(ids.size());
        for (std::size_t k = 0; k < ids.size(); ++k) {
            const AddedToken* added = added_of(ids[k]);
            if (added != nullptr) {
                // As Hugging Face 0.23: a normalized token is looked up by its decoded form.
                if (!(skip_special_tokens && is_special(added->decoded))) tokens.push_back(added->decoded);
                continue;
            }
            const std::string* token = model_token(ids[k]);
            if (token == nullptr)
                seqembed::detail::fail<index_error>("token id ", ids[k], " at ", k, " has no token in ", m_source);
            if (skip_special_tokens && is_special(*token)) continue;
            tokens.push_back(*token);
        }
        return detail::decode_tokens(std::move(tokens), m_decoders);
    }


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

    // load_tokenizer adds a directory's tokens as transformers' fast tokenizer adds them.
    friend Tokenizer load_tokenizer(const std::string& directory);

    std::string m_source;
    std::vector<detail::Normalizer> m_normalizers;
    std::vector<detail::PreTokenizer> m_pre_tokenizers;
    detail::Model m_model;
    detail::PostProcessor m_post;
    std::vector<detail::Decoder> m_decoders;
    std::vector<AddedToken> m_added;
    std::unordered_map<TokenId, std::size_t> m_added_by_id;
    std::unordered_map<std::string, std::size_t> m_added_by_content;
    // The added tokens by their first code point, the longest first; [0] those matched in the
    // input, [1] those (marked `normalized`) matched in the normalized text.
    std::unordered_map<char32_t, std::vector<std::size_t>> m_added_by_first[2];
    std::optional<Truncation> m_truncation;
    std::optional<PaddingOptions> m_padding;
    bool m_clean_up_tokenization_spaces = false;

    /// Sets the added tokens: each one's code points, and for those marked `normalized` their
    /// normalized form, which the normalized text holds and which decode() gives back (as
    /// Hugging Face's 0.23); and the indexes that find them.
    void set_added_tokens(std::vector<AddedToken> added) {
        m_added = std::move(added);
        m_added_by_id.clear();
        m_added_by_content.clear();
        m_added_by_first[0].clear();
        m_added_by_first[1].clear();
        for (std::size_t k = 0; k < m_added.size(); ++k) {
            AddedToken& token = m_added[k];
            std::vector<detail::Char> chars = detail::decode_utf8(token.content, true);
            if (token.normalized) chars = detail::normalize(chars, m_normalizers);
            token.code_points.clear();
            token.decoded.clear();
            for (const detail::Char& ch : chars) {
                token.code_points.push_back(ch.code);
                detail::append_utf8(token.decoded, ch.code);
            }
            m_added_by_id[token.id] = k;  // a later entry with the same id wins, as in Hugging Face
            m_added_by_content.emplace(token.content, k);
            if (!token.code_points.empty())
                m_added_by_first[token.normalized ? 1 : 0][token.code_points.front()].push_back(k);
        }
        for (auto& by_first : m_added_by_first)
            for (auto& [first, list] : by_first)
                std::stable_sort(list.begin(), list.end(), [&](std::size_t x, std::size_t y) {
                    return m_added[x].code_points.size() > m_added[y].code_points.size();
                });
    }

    /// Adds tokens as tokenizers' AddedVocabulary::add_tokens (0.22 and 0.23) gives them ids,
    /// in order: a content already added keeps its id, one the vocabulary has takes the
    /// vocabulary's, any other the next free id, which starts at the vocabulary's size (its
    /// count of tokens; one past the largest added id if that is not below it). An empty content
    /// is skipped; a token re-added with other settings replaces them, its specialness kept.
    void add_tokens(const std::vector<detail::NewToken>& tokens) {
        const auto vocab_size = static_cast<TokenId>(detail::vocab_of(m_model).ids.size());
        TokenId next = vocab_size;
        for (const AddedToken& added : m_added)
            if (added.id >= vocab_size || vocab_size == 0) next = std::max(next, added.id + 1);
        std::vector<AddedToken> all = m_added;
        std::unordered_map<std::string, TokenId> by_content;
        std::unordered_map<TokenId, std::size_t> by_id;
        for (std::size_t k = 0; k < all.size(); ++k) {
            by_content[all[k].content] = all[k].id;
            by_id[all[k].id] = k;
        }
        for (const detail::NewToken& token : tokens) {
            if (token.content.empty()) continue;
            TokenId id = -1;
            if (const auto found = by_content.find(token.content); found != by_content.end())
                id = found->second;
            else if ((id = detail::vocab_of(m_model).find(token.content)) < 0)
                id = next++;
            AddedToken added{id, token.content, token.single_word, token.lstrip, token.rstrip,
                             token.normalized, token.special, {}, {}};
            by_content[token.content] = id;
            if (const auto found = by_id.find(id); found != by_id.end()) {
                // tokenizers keeps the special contents in a set that a plain re-adding leaves.
                const AddedToken& before = all[found->second];
                added.special = added.special || (before.special && before.content == token.content);
                all[found->second] = std::move(added);
            } else {
                by_id[id] = all.size();
                all.push_back(std::move(added));
            }
        }
        set_added_tokens(std::move(all));
    }

    void read(const nlohmann::json& root) {
        const detail::JsonReader reader(m_source);
        if (!root.is_object()) reader.malformed("is not a JSON object");
        const nlohmann::json* model = detail::JsonReader::member(root, "model");
        if (model == nullptr) reader.malformed("has no \"model\"");
        m_model = reader.model(*model);
        if (const nlohmann::json* normalizer = detail::JsonReader::member(root, "normalizer"))
            reader.normalizers(*normalizer, m_normalizers);
        if (const nlohmann::json* pre_tokenizer = detail::JsonReader::member(root, "pre_tokenizer"))
            reader.pre_tokenizers(*pre_tokenizer, m_pre_tokenizers);
        if (const nlohmann::json* processor = detail::JsonReader::member(root, "post_processor"))
            reader.post_processor(*processor, m_post);
        if (const nlohmann::json* decoder = detail::JsonReader::member(root, "decoder"))
            reader.decoders(*decoder, m_decoders);
        std::vector<AddedToken> added;
        if (const nlohmann::json* list = detail::JsonReader::member(root, "added_tokens")) {
            if (!list->is_array()) reader.malformed("\"added_tokens\" is not an array");
            for (const nlohmann::json& token : *list) {
                const std::string what = "an added token";
                const nlohmann::json* id = detail::JsonReader::member(token, "id");
                const nlohmann::json* content = detail::JsonReader::member(token, "content");
                if (id == nullptr || !id->is_number_integer() || id->get<long long>() < 0 || content == nullptr ||
                    !content->is_string())
                    reader.malformed(what + " lacks an id (a count) or a string \"content\"");
                added.push_back({id->get<TokenId>(), content->get<std::string>(),
                                 reader.value_or<bool>(token, "single_word", false, what),
                                 reader.value_or<bool>(token, "lstrip", false, what),
                                 reader.value_or<bool>(token, "rstrip", false, what),
                                 reader.value_or<bool>(token, "normalized", false, what),
                                 reader.value_or<bool>(token, "special", false, what), {}, {}});
            }
        }
        if (const nlohmann::json* truncation = detail::JsonReader::member(root, "truncation"))
            m_truncation = read_truncation(reader, *truncation);
        if (const nlohmann::json* padding = detail::JsonReader::member(root, "padding"))
            m_padding = read_padding(reader, *padding);
        set_added_tokens(std::move(added));
    }

    /// tokenizer.json's "direction" member: "Right" (the default) or "Left".
    static PaddingSide read_direction(const detail::JsonReader& reader, const nlohmann::json& object,
                                      const std::string& what) {
        const std::string direction = reader.value_or<std::string>(object, "direction", "Right", what);
        if (direction != "Right" && direction != "Left")
            reader.malformed(what + "'s \"direction\" is \"" + direction + "\", not \"Right\" or \"Left\"");
        return direction == "Left" ? PaddingSide::left : PaddingSide::right;
    }

    /// tokenizer.json's truncation: max_length, strategy, direction (and a stride, which only
    /// shapes the overflowing encodings this tokenizer does not make).
    static Truncation read_truncation(const detail::JsonReader& reader, const nlohmann::json& json) {
        const std::string what = "\"truncation\"";
        if (!json.is_object()) reader.malformed(what + " is not an object");
        Truncation truncation;
        if (detail::JsonReader::member(json, "max_length") == nullptr) reader.malformed(what + " has no \"max_length\"");
        truncation.max_length = reader.value_or<std::size_t>(json, "max_length", 0, what);
        const std::string strategy = reader.value_or<std::string>(json, "strategy", "LongestFirst", what);
        if (strategy == "LongestFirst")
            truncation.strategy = TruncationStrategy::longest_first;
        else if (strategy == "OnlyFirst")
            truncation.strategy = TruncationStrategy::only_first;
        else if (strategy == "OnlySecond")
            truncation.strategy = TruncationStrategy::only_second;
        else
            reader.malformed(what + "'s \"strategy\" \"" + strategy + "\" is not LongestFirst, OnlyFirst or OnlySecond");
        truncation.side = read_direction(reader, json, what);
        (void)reader.value_or<std::size_t>(json, "stride", 0, what);  // checked, not used
        return truncation;
    }

    /// tokenizer.json's padding: strategy ("BatchLongest" or {"Fixed": n}), direction,
    /// pad_to_multiple_of, pad_id, pad_type_id, pad_token.
    static PaddingOptions read_padding(const detail::JsonReader& reader, const nlohmann::json& json) {
        const std::string what = "\"padding\"";
        if (!json.is_object()) reader.malformed(what + " is not an object");
        PaddingOptions padding;
        const nlohmann::json* strategy = detail::JsonReader::member(json, "strategy");
        if (strategy != nullptr && strategy->is_object() && detail::JsonReader::member(*strategy, "Fixed") != nullptr)
            padding.length = reader.value_or<std::size_t>(*strategy, "Fixed", 0, what + "'s \"strategy\"");
        else if (strategy != nullptr && !(strategy->is_string() && strategy->get<std::string>() == "BatchLongest"))
            reader.malformed(what + "'s \"strategy\" is " + strategy->dump() + ", not \"BatchLongest\" or {\"Fixed\": n}");
        padding.side = read_direction(reader, json, what);
        padding.multiple_of = reader.value_or<std::size_t>(json, "pad_to_multiple_of", 0, what);
        padding.pad_id = reader.value_or<TokenId>(json, "pad_id", 0, what);
        padding.pad_type_id = reader.value_or<TokenId>(json, "pad_type_id", 0, what);
        padding.pad_token = reader.value_or<std::string>(json, "pad_token", "[PAD]", what);
        return padding;
    }

    /// The added token of id, or null.
    const AddedToken* added_of(TokenId id) const {
        const auto found = m_added_by_id.find(id);
        return found == m_added_by_id.end() ? nullptr : &m_added[found->second];
    }

    /// The model's token of id, or null.
    const std::string* model_token(TokenId id) const {
        const detail::Vocab& vocab = detail::vocab_of(m_model);
        if (id < 0 || static_cast<std::size_t>(id) >= vocab.tokens.size()) return nullptr;
        const std::string& token = vocab.tokens[static_cast<std::size_t>(id)];
        return token.empty() ? nullptr : &token;
    }

    bool is_special(const std::string& token) const {
        const auto found = m_added_by_content.find(token);
        return found != m_added_by_content.end() && m_added[found->second].special;
    }

    /// The added token that matches chars[at...] (the longest), or null. Added tokens with
    /// `normalized` match the normalized text, the others the input.
    const AddedToken* added_at(const std::vector<detail::Char>& chars, std::size_t at, bool normalized,
                               std::size_t& length) const {
        length = 0;
        const auto& by_first = m_added_by_first[normalized ? 1 : 0];
        if (by_first.empty()) return nullptr;
        const auto found = by_first.find(chars[at].code);
        if (found == by_first.end()) return nullptr;
        for (const std::size_t index : found->second) {
            const std::vector<char32_t>& content = m_added[index].code_points;
            if (at + content.size() > chars.size()) continue;
            bool same = true;
            for (std::size_t k = 1; k < content.size() && same; ++k) same = chars[at + k].code == content[k];
            if (!same) continue;
            length = content.size();
            return &m_added[index];
        }
        return nullptr;
    }

    /// The model's tokens of a normalized text that holds no added token.
    void tokenize(std::vector<detail::Char> text, std::vector<detail::Piece>& out) const {
        std::vector<detail::Text> words;
        words.push_back(std::move(text));
        detail::pre_tokenize(words, m_pre_tokenizers);
        std::visit(
            [&](const auto& model) {
                for (const detail::Text& word : words) model.tokenize(word, out);
            },
            m_model);
    }

    /// The tokens of chars (normalized when `normalized`), added tokens first, the rest through
    /// the normalizers, the pre-tokenizers and the model. Added tokens are found as Hugging Face
    /// finds them: the leftmost longest match, then the next after it; a single_word token with
    /// a word character (\w) beside it is no match, and the search goes on after it; lstrip and
    /// rstrip take the whitespace beside the token into it.
    void split_added(const std::vector<detail::Char>& chars, bool normalized, std::vector<detail::Piece>& out) const {
        std::size_t start = 0;
        const auto rest = [&](std::size_t end) {
            if (end <= start) return;
            std::vector<detail::Char> part(chars.begin() + static_cast<std::ptrdiff_t>(start),
                                           chars.begin() + static_cast<std::ptrdiff_t>(end));
            if (!normalized)
                split_added(detail::normalize(std::move(part), m_normalizers), true, out);
            else
                tokenize(std::move(part), out);
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

    /// ByteLevel's trimming: the offsets of a token that starts or ends with spaces (Ġ) leave
    /// them out, one character of `text` per space, except the one space add_prefix_space put
    /// before the first token. Hugging Face counts in characters (its offsets are characters
    /// when trimmed), so a prefix space, which stands for the first character, trims it whole.
    void trim_offsets(std::vector<detail::Piece>& pieces, std::string_view text) const {
        // Where each character of the text starts (an invalid sequence counts as one), and its end.
        std::vector<std::size_t> starts;
        for (std::size_t at = 0; at < text.size();) {
            starts.push_back(at);
            char32_t code = 0;
            const long length = seqembed::detail::utf8_sequence(text, at, code);
            at += static_cast<std::size_t>(length < 0 ? -length : length);
        }
        starts.push_back(text.size());
        const auto character = [&](std::size_t byte) {  // the character at or after byte
            return static_cast<std::size_t>(std::lower_bound(starts.begin(), starts.end(), byte) - starts.begin());
        };
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            detail::Piece& piece = pieces[i];
            const std::vector<detail::Char> chars = detail::decode_utf8(piece.token, true);
            const auto is_space = [](char32_t c) { return c == 0x120 || detail::is_whitespace(c); };
            std::size_t leading = 0;
            while (leading < chars.size() && is_space(chars[leading].code)) ++leading;
            std::size_t trailing = 0;
            while (trailing < chars.size() && is_space(chars[chars.size() - 1 - trailing].code)) ++trailing;
            if (leading > 0) {
                if ((i == 0 || piece.begin == 0) && m_post.add_prefix_space && leading == 1) leading = 0;
                const std::size_t begin = std::min(character(piece.begin) + leading, starts.size() - 1);
                piece.begin = std::min(starts[begin], piece.end);
            }
            const std::size_t end = character(piece.end);
            if (trailing > 0 && end >= trailing) piece.end = std::max(starts[end - trailing], piece.begin);
        }
    }

    /// The encoding of a text or a pair, truncated as set, not padded.
    Encoding unpadded_one(const std::string& text, const EncodeOptions& options) const {
        return finish(tokens_of(text, options), std::nullopt, options.add_special_tokens, text, {});
    }
    Encoding unpadded_one(const TextPair& pair, const EncodeOptions& options) const {
        return finish(tokens_of(pair.first, options), tokens_of(pair.second, options), options.add_special_tokens,
                      pair.first, pair.second);
    }

    /// Each input's encoding, truncated as set, not padded; options.threads share the inputs a
    /// few at a time, and the first input that fails (by index) is the error, as on one thread.
    template <typename Input>
    std::vector<Encoding> unpadded(const std::vector<Input>& inputs, const EncodeOptions& options) const {
        const char* what = std::is_same_v<Input, TextPair> ? "pair " : "text ";
        const auto one = [&](std::size_t k) {
            return seqembed::detail::run_renaming_error<value_error, value_error>(
                [&] { return unpadded_one(inputs[k], options); }, what, k, " of the batch: ");
        };
        std::vector<Encoding> encodings(inputs.size());
        std::size_t threads = options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
        threads = std::min(threads, inputs.size());
        if (threads <= 1) {
            for (std::size_t k = 0; k < inputs.size(); ++k) encodings[k] = one(k);
            return encodings;
        }
        constexpr std::size_t chunk = 8;
        std::atomic<std::size_t> next{0};
        std::vector<std::exception_ptr> failure(threads);
        std::vector<std::size_t> failed_at(threads, inputs.size());
        std::vector<std::thread> helpers = seqembed::detail::reserved_helpers(static_cast<Index>(threads));
        seqembed::detail::run_workers(static_cast<Index>(threads), helpers, [&](Index worker) {
            const auto w = static_cast<std::size_t>(worker);
            for (std::size_t first; (first = next.fetch_add(chunk)) < inputs.size();) {
                for (std::size_t k = first; k < std::min(first + chunk, inputs.size()); ++k) {
                    std::exception_ptr error = seqembed::detail::attempt_capturing([&] { encodings[k] = one(k); });
                    if (error && k < failed_at[w]) {
                        failed_at[w] = k;
                        failure[w] = std::move(error);
                    }
                }
            }
        });
        const auto first_failure = std::min_element(failed_at.begin(), failed_at.end());
        if (*first_failure < inputs.size())
            std::rethrow_exception(failure[static_cast<std::size_t>(first_failure - failed_at.begin())]);
        return encodings;
    }

    /// Encodings padded together as set_padding says.
    std::vector<Encoding> padded_together(std::vector<Encoding> encodings) const {
        if (m_padding) {
            std::size_t longest = 0;
            for (const Encoding& encoding : encodings) longest = std::max(longest, encoding.size());
            for (Encoding& encoding : encodings) pad(encoding, longest);
        }
        return encodings;
    }

    /// Encodings as one batch for the pipeline.
    EncodedBatch batch_of(std::vector<Encoding> encodings, const BatchOptions& batch) const {
        const TokenId pad_id = batch.pad_id ? *batch.pad_id : padding_id();
        std::vector<std::vector<TokenId>> ids;
        std::vector<std::vector<TokenId>> types;
        std::vector<std::vector<std::pair<std::size_t, std::size_t>>> offsets;
        ids.reserve(encodings.size());
        types.reserve(encodings.size());
        offsets.reserve(encodings.size());
        for (Encoding& encoding : encodings) {
            ids.push_back(std::move(encoding.ids));
            types.push_back(std::move(encoding.type_ids));
            offsets.push_back(std::move(encoding.offsets));
        }
        EncodedBatch out = seqembed::detail::pad_sequences(ids, batch.side, pad_id);
        out.token_types = seqembed::detail::pad_sequences(types, batch.side, 0).ids;
        out.offsets = std::move(offsets);
        return out;
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
        for (const detail::TemplatePiece& piece : pair ? m_post.pair : m_post.single) count += piece.ids.size();
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
                    bool add_special_tokens, std::string_view first_text, std::string_view second_text) const {
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
        if (m_post.trim_offsets) {
            trim_offsets(first, first_text);
            if (second) trim_offsets(*second, second_text);
        }
        for (const detail::TemplatePiece& piece : second ? m_post.pair : m_post.single) {
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

namespace detail {

/// A boolean of tokenizer_config.json's settings, or `otherwise` when absent or not a boolean.
inline bool setting(const nlohmann::json& settings, const char* key, bool otherwise) {
    const auto found = settings.find(key);
    return found != settings.end() && found->is_boolean() ? found->get<bool>() : otherwise;
}

/// A JSON object file of a model's directory, or an empty object when it is absent.
/// @throws value_error naming the file when it is not a JSON object.
inline nlohmann::json object_file(const std::filesystem::path& path) {
    std::error_code ignored;
    if (!std::filesystem::is_regular_file(path, ignored)) return nlohmann::json::object();
    nlohmann::json object = nlohmann::json::parse(read_file(path.string()), nullptr, false);
    if (object.is_discarded() || !object.is_object())
        seqembed::detail::fail<value_error>(path.string(), ": is not a JSON object");
    return object;
}

/// A token as a model directory's files give it to transformers: a special token's string
/// (`plain`), or an AddedToken object, whose unset `normalized` means "not special" (tokenizers'
/// default).
struct FileToken {
    std::string content;
    bool single_word = false;
    bool lstrip = false;
    bool rstrip = false;
    std::optional<bool> normalized;
    bool special = false;
    bool plain = false;
    // Whether transformers counts it special for a legacy added_tokens.json: a string, or an
    // object of special_tokens_map.json (one of tokenizer_config.json is still a dict then).
    bool counted = true;

    /// The same AddedToken, as tokenizers' Python AddedToken compares them (a string never is).
    bool same_as(const FileToken& other) const {
        return !plain && !other.plain && content == other.content && single_word == other.single_word &&
               lstrip == other.lstrip && rstrip == other.rstrip && special == other.special &&
               normalized.value_or(!special) == other.normalized.value_or(!other.special);
    }
};

/// An AddedToken object of `file`, named `what` in messages: its string "content" and the
/// settings it sets (true or false; others keys, as "__type", ignored as tokenizers does).
/// @throws value_error naming the file and `what` when it is not one.
inline FileToken token_object(const nlohmann::json& object, const std::string& file, const std::string& what) {
    if (!object.is_object()) seqembed::detail::fail<value_error>(file, ": ", what, " is not an object");
    const auto content = object.find("content");
    if (content == object.end() || !content->is_string())
        seqembed::detail::fail<value_error>(file, ": ", what, " has no string \"content\"");
    FileToken token;
    token.content = content->get<std::string>();
    if (token.content.empty()) seqembed::detail::fail<value_error>(file, ": ", what, " has an empty \"content\"");
    const auto flag = [&](const char* key) -> std::optional<bool> {
        const auto found = object.find(key);
        if (found == object.end()) return std::nullopt;
        if (!found->is_boolean())
            seqembed::detail::fail<value_error>(file, ": ", what, "'s \"", key, "\" is ", found->dump(),
                                                ", not true or false");
        return found->get<bool>();
    };
    token.single_word = flag("single_word").value_or(false);
    token.lstrip = flag("lstrip").value_or(false);
    token.rstrip = flag("rstrip").value_or(false);
    token.normalized = flag("normalized");
    token.special = flag("special").value_or(false);
    return token;
}

/// A special token's value in `file` under `key`: none for null, a string, or an AddedToken
/// object (special when special_tokens_map.json gives it, as transformers marks those).
/// @throws value_error naming the file and the key for anything else.
inline std::optional<FileToken> special_value(const nlohmann::json& value, const std::string& file,
                                              const std::string& key, bool from_map) {
    if (value.is_null()) return std::nullopt;
    if (value.is_string()) {
        FileToken token;
        token.content = value.get<std::string>();
        token.plain = true;
        return token;
    }
    if (!value.is_object())
        seqembed::detail::fail<value_error>(file, ": \"", key, "\" is ", value.dump(),
                                            ", not a token (a string or an AddedToken object)");
    FileToken token = token_object(value, file, "\"" + key + "\"");
    token.special = token.special || from_map;
    token.counted = from_map;
    return token;
}

/// A special_tokens_map.json's or tokenizer_config.json's "additional_special_tokens": a list of
/// tokens (none: null).
inline std::optional<std::vector<FileToken>> special_list(const nlohmann::json& value, const std::string& file,
                                                          bool from_map) {
    if (value.is_null()) return std::nullopt;
    if (!value.is_array())
        seqembed::detail::fail<value_error>(file, ": \"additional_special_tokens\" is ", value.dump(), ", not a list");
    std::vector<FileToken> tokens;
    for (const nlohmann::json& item : value) {
        std::optional<FileToken> token = special_value(item, file, "additional_special_tokens", from_map);
        if (!token) seqembed::detail::fail<value_error>(file, ": \"additional_special_tokens\" holds a null");
        tokens.push_back(std::move(*token));
    }
    return tokens;
}

/// The id of an "added_tokens_decoder" key, as Python's int() reads it (an optional sign, then
/// digits), or none.
inline std::optional<TokenId> integer_key(const std::string& key) {
    std::size_t at = key.size() > 1 && (key[0] == '-' || key[0] == '+') ? 1 : 0;
    if (at == key.size() || key.size() - at > 18) return std::nullopt;
    TokenId value = 0;
    for (; at < key.size(); ++at) {
        if (key[at] < '0' || key[at] > '9') return std::nullopt;
        value = value * 10 + (key[at] - '0');
    }
    return key[0] == '-' ? -value : value;
}

/// The tokens transformers 4.57's fast tokenizer adds on top of the vocabulary it converts
/// from vocab.txt or vocab.json and merges.txt, and those the directory declares with their ids.
struct DirectoryTokens {
    /// What a directory declares: a token, its id, the file and the entry.
    struct Declared {
        std::string content;
        TokenId id;
        std::string file;
        std::string entry;
    };
    std::vector<NewToken> to_add;     ///< in the order they are added
    std::vector<Declared> declared;   ///< every declaration, to check against the ids given
    std::optional<std::string> bos;   ///< bos_token's content
};

/// The added tokens of a directory without tokenizer.json, as transformers 4.57 builds its fast
/// tokenizer (`gpt2`: GPT2TokenizerFast, else BertTokenizerFast):
/// PreTrainedTokenizerBase._from_pretrained reads tokenizer_config.json's added_tokens_decoder
/// or, without it, special_tokens_map.json over tokenizer_config.json and the legacy
/// added_tokens.json ({content: id}, each normalized unless special); PreTrainedTokenizerFast's
/// constructor adds them sorted by id, then the special tokens not among them, each special when
/// marked or named special.
/// @throws value_error naming the file and the entry of a malformed one.
inline DirectoryTokens directory_tokens(const std::filesystem::path& root, const nlohmann::json& settings, bool gpt2) {
    const std::string config_file = (root / "tokenizer_config.json").string();
    const bool modern = settings.contains("added_tokens_decoder");
    // The special tokens by attribute (SPECIAL_TOKENS_ATTRIBUTES' order): the class's
    // defaults, tokenizer_config.json's over them, special_tokens_map.json's over those (legacy).
    const char* const keys[] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                "pad_token", "cls_token", "mask_token"};
    constexpr std::size_t count = sizeof(keys) / sizeof(keys[0]);
    std::optional<FileToken> named[count];
    bool set[count] = {};
    const auto plain = [](const char* content) {
        FileToken token;
        token.content = content;
        token.plain = true;
        return std::optional<FileToken>(token);
    };
    if (gpt2) {
        named[0] = named[1] = named[2] = plain("<|endoftext|>");
    } else {
        const char* defaults[] = {"[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"};
        for (std::size_t k = 2; k < count; ++k) named[k] = plain(defaults[k - 2]);
    }
    for (std::size_t k = 0; k < count; ++k)
        if (const auto found = settings.find(keys[k]); found != settings.end()) {
            named[k] = special_value(*found, config_file, keys[k], false);
            set[k] = true;
        }
    std::vector<FileToken> additional;
    if (const auto found = settings.find("additional_special_tokens"); found != settings.end())
        additional = special_list(*found, config_file, false).value_or(std::vector<FileToken>{});
    DirectoryTokens result;
    std::map<TokenId, FileToken> declared;  // by id: a later entry with the same id wins, as in a dict
    if (modern) {
        const nlohmann::json& decoder = settings["added_tokens_decoder"];
        if (!decoder.is_object())
            seqembed::detail::fail<value_error>(config_file, ": \"added_tokens_decoder\" is ", decoder.dump(),
                                                ", not an object {\"id\": {\"content\": ...}}");
        for (const auto& [key, value] : decoder.items()) {
            const std::string entry = "\"added_tokens_decoder\" entry \"" + key + "\"";
            const std::optional<TokenId> id = integer_key(key);
            if (!id) seqembed::detail::fail<value_error>(config_file, ": ", entry, ": its id is not an integer");
            if (*id < 0) seqembed::detail::fail<value_error>(config_file, ": ", entry, ": its id is negative");
            FileToken token = token_object(value, config_file, entry);
            result.declared.push_back({token.content, *id, config_file, entry});
            declared[*id] = std::move(token);
        }
    } else {
        const std::filesystem::path map_path = root / "special_tokens_map.json";
        const std::string map_file = map_path.string();
        const nlohmann::json map = object_file(map_path);
        for (std::size_t k = 0; k < count; ++k)
            if (const auto found = map.find(keys[k]); found != map.end()) {
                named[k] = special_value(*found, map_file, keys[k], true);
                set[k] = true;
            }
        if (const auto found = map.find("additional_special_tokens"); found != map.end()) {
            // transformers extends tokenizer_config.json's list with the tokens it lacks (a null
            // replaces it).
            const std::optional<std::vector<FileToken>> listed = special_list(*found, map_file, true);
            if (!listed) additional.clear();
            for (const FileToken& token : listed.value_or(std::vector<FileToken>{})) {
                const bool there = std::any_of(additional.begin(), additional.end(), [&](const FileToken& other) {
                    return token.plain ? other.plain && other.content == token.content : token.same_as(other);
                });
                if (!there) additional.push_back(token);
            }
        }
        const std::filesystem::path added_path = root / "added_tokens.json";
        const std::string added_file = added_path.string();
        const nlohmann::json added = object_file(added_path);
        // Special, for added_tokens.json, are the strings (and special_tokens_map.json's objects)
        // that tokenizer_config.json and special_tokens_map.json name.
        std::vector<std::string> special;
        for (std::size_t k = 0; k < count; ++k)
            if (set[k] && named[k] && named[k]->counted) special.push_back(named[k]->content);
        for (const FileToken& token : additional)
            if (token.counted) special.push_back(token.content);
        for (const auto& [content, id] : added.items()) {
            const std::string entry = "entry \"" + content + "\"";
            if (!id.is_number_integer())
                seqembed::detail::fail<value_error>(added_file, ": ", entry, ": its id ", id.dump(),
                                                    " is not an integer");
            if (id.get<TokenId>() < 0)
                seqembed::detail::fail<value_error>(added_file, ": ", entry, ": its id ", id.dump(), " is negative");
            if (content.empty()) seqembed::detail::fail<value_error>(added_file, ": ", entry, " is an empty token");
            FileToken token;
            token.content = content;
            token.special = std::find(special.begin(), special.end(), content) != special.end();
            token.normalized = !token.special;
            result.declared.push_back({content, id.get<TokenId>(), added_file, entry});
            declared[id.get<TokenId>()] = std::move(token);
        }
    }
    if (const auto found = settings.find("extra_special_tokens"); found != settings.end() && found->is_object())
        for (const auto& [key, value] : found->items())
            if (std::optional<FileToken> token = special_value(value, config_file, "extra_special_tokens", false))
                additional.push_back(std::move(*token));
    // GPT2Tokenizer makes its string bos, eos, unk and pad tokens AddedTokens (lstrip and rstrip
    // off), which then match the declared ones only when equal in every setting.
    if (gpt2)
        for (const std::size_t k : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{4}})
            if (named[k]) named[k]->plain = false;
    result.bos = named[0] ? std::optional<std::string>(named[0]->content) : std::nullopt;
    // all_special_tokens_extended: each content once, the first kept.
    std::vector<std::pair<FileToken, bool>> specials;  // and whether it is an attribute's (bos ... mask)
    const auto listed = [&](const std::string& content) {
        return std::any_of(specials.begin(), specials.end(), [&](const auto& s) { return s.first.content == content; });
    };
    for (std::size_t k = 0; k < count; ++k)
        if (named[k] && !named[k]->content.empty() && !listed(named[k]->content))
            specials.emplace_back(*named[k], true);
    for (const FileToken& token : additional)
        if (!token.content.empty() && !listed(token.content)) specials.emplace_back(token, false);
    std::vector<FileToken> to_add;
    for (const auto& [id, token] : declared) to_add.push_back(token);
    const std::size_t declared_count = to_add.size();
    for (const auto& special : specials) {
        const FileToken& token = special.first;  // named: C++17 lambdas cannot capture a structured binding
        const bool attribute = special.second;
        const auto first = to_add.begin();
        const auto last = first + static_cast<std::ptrdiff_t>(declared_count);
        const bool same_content =
            std::any_of(first, last, [&](const FileToken& t) { return t.content == token.content; });
        // With added_tokens_decoder, _from_pretrained swaps an attribute's token for the declared
        // one of its content; a string is compared by content, an AddedToken in every setting.
        const bool there = (modern && attribute) || token.plain
                               ? same_content
                               : std::any_of(first, last, [&](const FileToken& t) { return token.same_as(t); });
        if (!there) to_add.push_back(token);
    }
    for (const FileToken& token : to_add) {
        NewToken added;
        added.content = token.content;
        added.single_word = token.single_word;
        added.lstrip = token.lstrip;
        added.rstrip = token.rstrip;
        added.special = token.special || listed(token.content);
        added.normalized = token.normalized.value_or(!added.special);
        result.to_add.push_back(std::move(added));
    }
    return result;
}

}  // namespace detail

/// @brief The tokenizer of a model's directory, as Hugging Face's AutoTokenizer finds it:
///        tokenizer.json, or else BERT's vocab.txt, or else GPT-2's vocab.json and merges.txt,
///        with the settings of tokenizer_config.json that transformers' converters read
///        (do_lower_case, strip_accents and tokenize_chinese_chars for BERT; add_prefix_space,
///        add_bos_token and bos_token, as OPT's, for GPT-2). Without tokenizer.json, the
///        tokenizer class (tokenizer_config.json's tokenizer_class, else config.json's
///        tokenizer_class or model_type) must be one whose files these are (BERT, DistilBERT,
///        ELECTRA; GPT-2, or OPT's GPT2Tokenizer): RoBERTa's or MPNet's vocabulary files, say,
///        need their own special tokens and rules, and are refused rather than read as
///        another's. The added tokens are transformers 4.57's: tokenizer_config.json's
///        added_tokens_decoder ({"id": {"content", "single_word", "lstrip", "rstrip",
///        "normalized", "special"}}) or, without it, the legacy added_tokens.json ({"content":
///        id}, normalized unless special), then the special tokens (bos_token ... mask_token,
///        additional_special_tokens; special_tokens_map.json's over tokenizer_config.json's when
///        there is no added_tokens_decoder) not among them; each takes the vocabulary's id, else
///        the next one after the vocabulary, in the order of the declared ids. Its decode()
///        cleans up spaces when tokenizer_config.json says "clean_up_tokenization_spaces": true,
///        but for a BPE model, which transformers leaves alone unless
///        "clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output" is true too.
/// @param directory the model's directory (the one io::load_model reads).
/// @return the tokenizer.
/// @throws file_error when the directory holds none of the files; value_error for a
///         tokenizer_config.json, config.json, special_tokens_map.json or added_tokens.json that
///         is not a JSON object, a malformed entry (naming the file and the entry), a declared id
///         transformers would not give its token (naming the file, the token and both ids:
///         transformers' slow and fast tokenizers would disagree), or vocabulary files of another
///         class (naming it and the file that says so); as Tokenizer::from_file, from_bert_vocab
///         and from_bpe_files otherwise.
inline Tokenizer load_tokenizer(const std::string& directory) {
    const std::filesystem::path root(directory);
    const std::filesystem::path json = root / "tokenizer.json";
    const std::filesystem::path vocab = root / "vocab.txt";
    const std::filesystem::path bpe_vocab = root / "vocab.json";
    const std::filesystem::path merges = root / "merges.txt";
    std::error_code ignored;
    const std::filesystem::path config_path = root / "tokenizer_config.json";
    const nlohmann::json settings = detail::object_file(config_path);
    // The class AutoTokenizer would build from vocabulary files, and the file that names it.
    const auto require = [&](std::initializer_list<const char*> kinds, const char* files) {
        std::string kind;
        std::filesystem::path source;
        const nlohmann::json model = detail::object_file(root / "config.json");
        for (const auto& [object, key, path] : {std::tuple{&settings, "tokenizer_class", config_path},
                                                std::tuple{&model, "tokenizer_class", root / "config.json"},
                                                std::tuple{&model, "model_type", root / "config.json"}}) {
            const auto found = object->find(key);
            if (found == object->end() || !found->is_string()) continue;
            kind = found->get<std::string>();
            if (kind.size() > 4 && kind.compare(kind.size() - 4, 4, "Fast") == 0) kind.resize(kind.size() - 4);
            source = path;
            break;
        }
        if (kind.empty()) return;
        for (const char* accepted : kinds)
            if (kind == accepted) return;
        seqembed::detail::fail<value_error>(directory, ": has no tokenizer.json, and ", source.string(), " says its ",
                                            files, " are ", kind, "'s, whose special tokens and rules seqembed reads "
                                            "from tokenizer.json only (save the tokenizer with transformers' fast "
                                            "tokenizer to write one)");
    };
    // The added tokens of vocabulary files, as PreTrainedTokenizerFast's constructor adds them to
    // the converted tokenizer (which has none), checked against the ids the files declare.
    const auto add_tokens = [&](Tokenizer& tokenizer, const detail::DirectoryTokens& added) {
        tokenizer.set_added_tokens({});
        tokenizer.add_tokens(added.to_add);
        for (const detail::DirectoryTokens::Declared& declared : added.declared) {
            const std::optional<TokenId> given = tokenizer.token_to_id(declared.content);
            if (given == declared.id) continue;
            std::ostringstream gives;
            if (given)
                gives << "id " << *given;
            else
                gives << "no id";
            seqembed::detail::fail<value_error>(
                declared.file, ": ", declared.entry, " declares \"", declared.content, "\" as id ", declared.id,
                ", but transformers' fast tokenizer gives it ", gives.str(), " (an added token takes the vocabulary's "
                "id, else the next one after the vocabulary, in the order of the declared ids), so transformers' "
                "tokenizers disagree on it");
        }
    };
    Tokenizer tokenizer = [&] {
        if (std::filesystem::is_regular_file(json, ignored)) return Tokenizer::from_file(json.string());
        if (std::filesystem::is_regular_file(vocab, ignored)) {
            require({"BertTokenizer", "DistilBertTokenizer", "ElectraTokenizer", "bert", "distilbert", "electra"},
                    "vocab.txt");
            const detail::DirectoryTokens added = detail::directory_tokens(root, settings, false);
            BertVocabOptions options;
            options.lowercase = detail::setting(settings, "do_lower_case", true);
            if (const auto found = settings.find("strip_accents"); found != settings.end() && found->is_boolean())
                options.strip_accents = found->get<bool>();
            options.tokenize_chinese_chars = detail::setting(settings, "tokenize_chinese_chars", true);
            Tokenizer bert = Tokenizer::from_bert_vocab(vocab.string(), options);
            add_tokens(bert, added);
            return bert;
        }
        if (std::filesystem::is_regular_file(bpe_vocab, ignored) && std::filesystem::is_regular_file(merges, ignored)) {
            require({"GPT2Tokenizer", "gpt2", "gpt_neo", "gptj", "gpt_bigcode", "opt"}, "vocab.json and merges.txt");
            const detail::DirectoryTokens added = detail::directory_tokens(root, settings, true);
            BpeFilesOptions options;
            options.add_prefix_space = detail::setting(settings, "add_prefix_space", false);
            options.special_tokens.clear();
            if (detail::setting(settings, "add_bos_token", false)) {
                if (!added.bos)
                    seqembed::detail::fail<value_error>(config_path.string(),
                                                        ": \"add_bos_token\" is true, but bos_token is null");
                options.bos_token = added.bos;
            }
            Tokenizer gpt2 = Tokenizer::from_bpe_files(bpe_vocab.string(), merges.string(), options);
            add_tokens(gpt2, added);
            return gpt2;
        }
        seqembed::detail::fail<file_error>(directory,
                                           ": holds no tokenizer.json, no vocab.txt and no vocab.json with merges.txt");
    }();
    const bool even_bpe =
        detail::setting(settings, "clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output", false);
    tokenizer.set_clean_up_tokenization_spaces(detail::setting(settings, "clean_up_tokenization_spaces", false) &&
                                               (!tokenizer.is_bpe() || even_bpe));
    // transformers' tokenizer(text) without truncation= or padding= turns off what tokenizer.json
    // sets (set_truncation_and_padding); sentence-transformers' files set both.
    tokenizer.set_truncation(std::nullopt);
    tokenizer.set_padding(std::nullopt);
    return tokenizer;
}

}  // namespace seqembed::text
