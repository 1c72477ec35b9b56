/// @file text/vocabulary.hpp
/// @brief Vocabulary: text to token ids and back with a word-level vocabulary (a token list or a
///        one-token-a-line file), with padding and unknown-word tokens.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../detail/text/utf8.hpp"
#include "encoded_batch.hpp"
#include "../error.hpp"
#include "../types.hpp"

namespace seqembed {

/// @brief What the word splitter does with ASCII punctuation (the 32 characters std::ispunct
///        accepts in the "C" locale) at the start and end of a word. Punctuation inside a word (don't, 3.14, e-mail) always
///        stays part of it.
enum class Punctuation {
    strip,  ///< dropped: "mat." is the word "mat", as PyTorch's embedding tutorials tokenize
            ///< "The cat sat on the mat." by hand (the default).
    split,  ///< each punctuation character at an edge is a token of its own: "(mat)." is "(",
            ///< "mat", ")", "." (torchtext's basic_english and BERT's basic tokenizer split so).
    keep    ///< kept: words end at whitespace only, "mat." is the word "mat.".
};

/// @brief Where Vocabulary puts the padding and unknown tokens that its token list lacks.
enum class SpecialTokenPlacement {
    end,    ///< after the listed tokens, padding first: token i of the list keeps id i (the
            ///< default, so that a file's line n is id n - 1 whatever it holds).
    start,  ///< before the listed tokens, padding first: `<pad>` = 0, `<unk>` = 1 when both are
            ///< missing (torchtext's and fairseq's habit), the listed tokens shifted after them.
    none    ///< not added: a special token missing from the list is absent, and pad_id() or
            ///< unk_id() is empty.
};

/// @brief How a Vocabulary finds its special tokens and splits text into words.
struct VocabularyOptions {
    /// @brief The padding token, written into the padded places of encode_batch and skipped by
    ///        decode. Empty: the vocabulary has none.
    std::string pad_token = "<pad>";
    /// @brief The token that every word outside the vocabulary maps to. Empty: the vocabulary
    ///        has none, and encode throws on such a word.
    std::string unk_token = "<unk>";
    /// @brief Where pad_token and unk_token are added when the list lacks them (default: after
    ///        the listed tokens). A special token the list holds keeps its place.
    SpecialTokenPlacement add_missing = SpecialTokenPlacement::end;
    /// @brief Lowercase ASCII letters A-Z of the text before lookup (default off: "The" and
    ///        "the" are different tokens). Other bytes are left as they are, and the vocabulary's
    ///        own tokens are never changed.
    bool lowercase = false;
    /// @brief What happens to punctuation at the edges of words (default: dropped).
    Punctuation punctuation = Punctuation::strip;
};

/// @brief A word-level vocabulary: words to ids by exact lookup, ids back to words.
///
/// Text is split into words at ASCII whitespace; punctuation at the edges of a word is dropped,
/// split off or kept (VocabularyOptions::punctuation), and ASCII letters are lowercased when
/// asked. Each word is then looked up as it is: a word outside the vocabulary gets the unknown
/// token's id. Tokens are UTF-8 byte strings without whitespace; no Unicode normalization or
/// case folding beyond ASCII is done. A Vocabulary is immutable: its const calls may run on many
/// threads at once.
/// @code
/// seqembed::Vocabulary vocabulary({"The", "cat", "sat", "on", "the", "mat"});
/// vocabulary.encode("The cat sat on the mat.");   // {0, 1, 2, 3, 4, 5}
/// vocabulary.encode("The dog sat.");              // {0, 7, 2}: <pad> = 6, <unk> = 7 were added
/// vocabulary.decode({0, 1, 2});                   // "The cat sat"
/// auto batch = vocabulary.encode_batch({"The cat sat on the mat.", "The dog sat."});
/// auto x = pipeline.forward(batch.ids, batch.padding());
/// @endcode
class Vocabulary {
public:
    /// @brief A vocabulary of the given tokens, token i getting id i (shifted by the special
    ///        tokens when they are added at the start).
    /// @param tokens the tokens in id order: each non-empty, well-formed UTF-8, without
    ///        whitespace, and none twice.
    /// @param options the special tokens and the word splitting.
    /// @throws value_error naming the first bad token and its place in the list (tokens[3]),
    ///         or a bad special token (with whitespace, or the same for padding and unknown).
    explicit Vocabulary(std::vector<std::string> tokens, VocabularyOptions options = {})
        : m_options(std::move(options)) {
        build(std::move(tokens), nullptr);
    }

    /// @brief A vocabulary read from a text file of one token per line, line n being id n - 1
    ///        (shifted by the special tokens when they are added at the start).
    /// @param path the file (UTF-8, as written by Python's `"\n".join(tokens)`; a final newline,
    ///        "\r\n" line ends and a leading byte order mark are accepted).
    /// @param options the special tokens and the word splitting.
    /// @return the vocabulary.
    /// @throws file_error if the file cannot be opened or read (the message names it and the
    ///         system's reason); value_error naming the file and line of the first empty line,
    ///         line that is not UTF-8, token with whitespace or repeated token, or a file without
    ///         tokens: `seqembed: vocab.txt:7: token 'cat' repeats line 2`.
    static Vocabulary from_file(const std::string& path, VocabularyOptions options = {}) {
        return Vocabulary(FromFile{}, path, std::move(options));
    }

    /// @brief The number of tokens, the special ones included.
    /// @return the vocabulary size: the rows an embedding table for it needs.
    Index size() const noexcept { return static_cast<Index>(m_tokens.size()); }
    /// @brief Every token in id order.
    /// @return the tokens, token i having id i.
    const std::vector<std::string>& tokens() const noexcept { return m_tokens; }
    /// @brief The options the vocabulary was built with.
    /// @return the options.
    const VocabularyOptions& options() const noexcept { return m_options; }

    /// @brief The id of a token, if the vocabulary holds it.
    /// @param token the token, compared byte for byte (not lowercased, not split).
    /// @return its id, or nothing.
    std::optional<TokenId> find(std::string_view token) const {
        const TokenId found = lookup(token);
        if (found < 0) return std::nullopt;
        return found;
    }
    /// @brief The id of a token the vocabulary holds.
    /// @param token the token, compared byte for byte.
    /// @return its id.
    /// @throws index_error if the vocabulary does not hold it.
    TokenId id(std::string_view token) const {
        const std::optional<TokenId> found = find(token);
        if (!found) detail::fail<index_error>("token '", token, "' is not in the vocabulary");
        return *found;
    }
    /// @brief The token of an id.
    /// @param id in [0, size()).
    /// @return the token.
    /// @throws index_error for an id outside [0, size()).
    const std::string& token(TokenId id) const {
        if (id < 0 || id >= size())
            detail::fail<index_error>("token id ", id, " is outside the vocabulary [0, ", size(), ")");
        return m_tokens[static_cast<std::size_t>(id)];
    }
    /// @brief The padding token's id.
    /// @return the id, or nothing when the vocabulary has no padding token. It fits
    ///         TokenEmbeddingOptions::padding_idx and Padding::by_id.
    std::optional<TokenId> pad_id() const noexcept { return m_pad_id; }
    /// @brief The unknown token's id.
    /// @return the id that words outside the vocabulary get, or nothing when there is none.
    std::optional<TokenId> unk_id() const noexcept { return m_unk_id; }

    /// @brief The words of a text, as encode looks them up: split, punctuation handled,
    ///        lowercased when the options ask.
    /// @param text any bytes (UTF-8 text passes through unchanged apart from ASCII).
    /// @return the words in order.
    std::vector<std::string> tokenize(std::string_view text) const {
        std::vector<std::string> words;
        for_each_word(text, [&words](const std::string& word, std::size_t) { words.push_back(word); });
        return words;
    }
    /// @brief The ids of a text's words.
    /// @param text the text.
    /// @return one id per word of tokenize(text); a word outside the vocabulary gets unk_id().
    /// @throws index_error for a word outside a vocabulary without an unknown token, naming the
    ///         word and its byte offset in the text.
    std::vector<TokenId> encode(std::string_view text) const {
        std::vector<TokenId> ids;
        for_each_word(text, [this, &ids](const std::string& word, std::size_t offset) {
            const TokenId found = lookup(word);
            if (found >= 0) {
                ids.push_back(found);
            } else if (m_unk_id) {
                ids.push_back(*m_unk_id);
            } else {
                detail::fail<index_error>("word '", word, "' at byte ", offset,
                                          " of the text is not in the vocabulary, which has no "
                                          "unknown token (VocabularyOptions::unk_token)");
            }
        });
        return ids;
    }
    /// @brief Texts encoded into one padded batch.
    /// @param texts the texts, one row each.
    /// @param options the padding side, and the id to pad with if not pad_id().
    /// @return the ids (batch x the longest text's word count), the lengths and the side.
    /// @throws value_error when neither options.pad_id nor pad_id() is set; index_error as
    ///         encode, naming the text.
    EncodedBatch encode_batch(const std::vector<std::string>& texts, const BatchOptions& options = {}) const {
        const std::optional<TokenId> pad = options.pad_id ? options.pad_id : m_pad_id;
        if (!pad)
            detail::fail<value_error>("encode_batch needs a padding id: the vocabulary has no padding "
                                      "token (VocabularyOptions::pad_token) and BatchOptions::pad_id is unset");
        std::vector<std::vector<TokenId>> sequences;
        sequences.reserve(texts.size());
        for (std::size_t b = 0; b < texts.size(); ++b) {
            if (!m_unk_id) require_known_words(texts[b], b);
            sequences.push_back(encode(texts[b]));
        }
        return detail::pad_sequences(sequences, options.side, *pad);
    }

    /// @brief The text of ids: their tokens joined by single spaces, padding tokens left out.
    /// @tparam Ids any range of integers (std::vector, an Eigen row such as batch.ids.row(b),
    ///         a std::span, ...).
    /// @param ids the ids.
    /// @return the text. Punctuation dropped by encode does not come back ("The cat sat on the
    ///         mat." decodes as "The cat sat on the mat").
    /// @throws index_error for an id outside [0, size()), naming it and its position.
    template <typename Ids>
    std::string decode(const Ids& ids) const {
        using Value = std::remove_cv_t<std::remove_reference_t<decltype(*std::begin(ids))>>;
        static_assert(std::is_integral_v<Value>, "seqembed::Vocabulary::decode: ids must be integers");
        std::string text;
        std::size_t position = 0;
        for (const auto value : ids) {
            const auto id = static_cast<TokenId>(value);
            if (id < 0 || id >= size())
                detail::fail<index_error>("token id ", id, " at position ", position,
                                          " is outside the vocabulary [0, ", size(), ")");
            ++position;
            if (m_pad_id && id == *m_pad_id) continue;
            if (!text.empty()) text += ' ';
            text += m_tokens[static_cast<std::size_t>(id)];
        }
        return text;
    }
    /// @brief The text of ids given in braces: vocabulary.decode({0, 1, 2}).
    /// @param ids the ids.
    /// @return the text, as decode of a range.
    /// @throws index_error for an id outside [0, size()).
    std::string decode(std::initializer_list<TokenId> ids) const {
        return decode<std::initializer_list<TokenId>>(ids);
    }

private:
    struct FromFile {};  // a tag: a braced token list never converts to it
    Vocabulary(FromFile, const std::string& path, VocabularyOptions options) : m_options(std::move(options)) {
        build(read_lines(path), &path);
    }

    static bool is_space(char c) noexcept {
        return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
    }
    static bool is_punctuation(char c) noexcept {
        // ASCII's 32 punctuation characters, as std::ispunct in the "C" locale, whatever the
        // program's locale.
        return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
               (c >= '{' && c <= '~');
    }

    // Calls emit(word, byte offset of the word in text) for every word, in order.
    template <typename Emit>
    void for_each_word(std::string_view text, Emit&& emit) const {
        std::string word;
        const auto emit_part = [&](std::size_t first, std::size_t count) {
            word.assign(text.substr(first, count));
            if (m_options.lowercase)
                for (char& c : word)
                    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
            emit(word, first);
        };
        std::size_t i = 0;
        while (i < text.size()) {
            if (is_space(text[i])) {
                ++i;
                continue;
            }
            std::size_t end = i;
            while (end < text.size() && !is_space(text[end])) ++end;
            std::size_t first = i;
            std::size_t last = end;
            if (m_options.punctuation != Punctuation::keep) {
                while (first < last && is_punctuation(text[first])) ++first;
                while (last > first && is_punctuation(text[last - 1])) --last;
            }
            const bool split = m_options.punctuation == Punctuation::split;
            if (split)
                for (std::size_t k = i; k < first; ++k) emit_part(k, 1);
            if (first < last) emit_part(first, last - first);
            if (split)
                for (std::size_t k = last; k < end; ++k) emit_part(k, 1);
            i = end;
        }
    }

    // encode's error, with the text's place in the batch added.
    void require_known_words(std::string_view text, std::size_t b) const {
        for_each_word(text, [this, b](const std::string& word, std::size_t offset) {
            if (lookup(word) < 0)
                detail::fail<index_error>("word '", word, "' at byte ", offset, " of text ", b,
                                          " is not in the vocabulary, which has no unknown token "
                                          "(VocabularyOptions::unk_token)");
        });
    }

    // Where token i came from, for messages: "tokens[3]" or "vocab.txt:4".
    static std::string place(const std::string* file, std::size_t i) {
        if (file) return *file + ":" + std::to_string(i + 1);
        return "tokens[" + std::to_string(i) + "]";
    }

    // The problem with a token, or nothing: empty, not UTF-8, or holding whitespace.
    static std::string problem_of(std::string_view token) {
        if (token.empty()) return "is empty";
        const std::size_t bad = detail::first_invalid_utf8(token);
        if (bad != token.size()) return "is not valid UTF-8 (at byte " + std::to_string(bad) + ")";
        for (const char c : token)
            if (is_space(c)) return "'" + std::string(token) + "' holds whitespace";
        return {};
    }

    void build(std::vector<std::string> tokens, const std::string* file) {
        const char* const rule = file ? " (one token per line, nothing else on it, no blank lines)"
                                      : " (tokens are non-empty UTF-8 without whitespace)";
        if (file && tokens.empty()) detail::fail<value_error>(*file, ": the vocabulary file holds no tokens");
        m_tokens = std::move(tokens);
        make_index(m_tokens.size() + 2);
        for (std::size_t i = 0; i < m_tokens.size(); ++i) {
            const std::string problem = problem_of(m_tokens[i]);
            if (!problem.empty()) {
                if (file && m_tokens[i].empty()) detail::fail<value_error>(place(file, i), ": empty line", rule);
                detail::fail<value_error>(place(file, i), ": token ", problem, rule);
            }
            const TokenId first = insert(static_cast<TokenId>(i));
            if (first != static_cast<TokenId>(i))
                detail::fail<value_error>(place(file, i), ": token '", m_tokens[i], "' repeats ",
                                          file ? "line " + std::to_string(first + 1)
                                               : place(nullptr, static_cast<std::size_t>(first)));
        }
        for (const std::string* special : {&m_options.pad_token, &m_options.unk_token}) {
            if (special->empty()) continue;
            const std::string problem = problem_of(*special);
            if (!problem.empty())
                detail::fail<value_error>(special == &m_options.pad_token ? "VocabularyOptions::pad_token "
                                                                          : "VocabularyOptions::unk_token ",
                                          problem, " (empty for none, else UTF-8 without whitespace)");
        }
        if (!m_options.pad_token.empty() && m_options.pad_token == m_options.unk_token)
            detail::fail<value_error>("pad_token and unk_token are both '", m_options.pad_token,
                                      "': padding and unknown words need different tokens");

        // The special tokens to add, padding first.
        std::vector<std::string> missing;
        if (m_options.add_missing != SpecialTokenPlacement::none)
            for (const std::string* special : {&m_options.pad_token, &m_options.unk_token})
                if (!special->empty() && lookup(*special) < 0) missing.push_back(*special);
        if (m_options.add_missing == SpecialTokenPlacement::start && !missing.empty()) {
            missing.reserve(missing.size() + m_tokens.size());
            for (std::string& token : m_tokens) missing.push_back(std::move(token));
            m_tokens = std::move(missing);
            make_index(m_tokens.size());
            for (std::size_t i = 0; i < m_tokens.size(); ++i) insert(static_cast<TokenId>(i));
        } else {
            for (std::string& special : missing) {
                m_tokens.push_back(std::move(special));
                insert(static_cast<TokenId>(m_tokens.size() - 1));
            }
        }
        if (!m_options.pad_token.empty()) m_pad_id = find(m_options.pad_token);
        if (!m_options.unk_token.empty()) m_unk_id = find(m_options.unk_token);
    }

    // The token index: an open-addressing hash table of ids + 1 (0: an empty slot), probed
    // linearly, at most half full. Written out rather than a std::unordered_map, which would
    // copy every token into its nodes, need a std::string to look a word up, and make every
    // translation unit that includes seqembed.hpp instantiate it.
    void make_index(std::size_t tokens) {
        std::size_t slots = 8;
        while (slots < 2 * tokens) slots *= 2;
        m_slots.assign(slots, 0);
    }
    std::size_t first_slot(std::string_view token) const noexcept {
        return std::hash<std::string_view>{}(token) & (m_slots.size() - 1);
    }
    // The id of token, or -1.
    TokenId lookup(std::string_view token) const noexcept {
        for (std::size_t slot = first_slot(token);; slot = (slot + 1) & (m_slots.size() - 1)) {
            const TokenId entry = m_slots[slot];
            if (entry == 0) return -1;
            if (m_tokens[static_cast<std::size_t>(entry - 1)] == token) return entry - 1;
        }
    }
    // Indexes token id; returns id, or the id of an earlier equal token (then nothing changes).
    TokenId insert(TokenId id) noexcept {
        const std::string& token = m_tokens[static_cast<std::size_t>(id)];
        for (std::size_t slot = first_slot(token);; slot = (slot + 1) & (m_slots.size() - 1)) {
            TokenId& entry = m_slots[slot];
            if (entry == 0) {
                entry = id + 1;
                return id;
            }
            if (m_tokens[static_cast<std::size_t>(entry - 1)] == token) return entry - 1;
        }
    }

    // The lines of a file, without their "\n" or "\r\n" and without a leading byte order mark.
    static std::vector<std::string> read_lines(const std::string& path) {
        struct File {
            std::FILE* handle;
            ~File() {
                if (handle) std::fclose(handle);
            }
        };
        const File file{std::fopen(path.c_str(), "rb")};
        if (!file.handle) {
            const int code = errno;
            detail::fail<file_error>("cannot open the vocabulary file '", path, "': ", std::strerror(code));
        }
        std::string text;
        char buffer[1 << 14];
        std::size_t got = 0;
        while ((got = std::fread(buffer, 1, sizeof buffer, file.handle)) > 0) text.append(buffer, got);
        if (std::ferror(file.handle)) {
            const int code = errno;
            detail::fail<file_error>("cannot read the vocabulary file '", path, "': ", std::strerror(code));
        }
        std::string_view rest(text);
        if (rest.substr(0, 3) == "\xEF\xBB\xBF") rest.remove_prefix(3);
        std::vector<std::string> lines;
        while (!rest.empty()) {
            const std::size_t end = rest.find('\n');
            std::string_view line = rest.substr(0, end);
            rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            lines.emplace_back(line);
        }
        return lines;
    }

    VocabularyOptions m_options;
    std::vector<std::string> m_tokens;
    std::vector<TokenId> m_slots;  // the index of m_tokens (make_index)
    std::optional<TokenId> m_pad_id;
    std::optional<TokenId> m_unk_id;
};

}  // namespace seqembed
