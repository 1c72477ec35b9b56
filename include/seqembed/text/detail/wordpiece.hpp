/// @file text/detail/wordpiece.hpp
/// @brief The WordPiece model (BERT's): each word split greedily into the longest pieces of the
///        vocabulary, continuation pieces prefixed ("##"); and its decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../../types.hpp"
#include "unicode.hpp"

namespace seqembed::text::detail {

/// A token of a text: its id, its string, and the bytes [begin, end) of the input it covers.
struct Piece {
    TokenId id;
    std::string token;
    std::size_t begin;
    std::size_t end;
};

/// The vocabulary of a model: token to id and id to token.
struct Vocab {
    std::unordered_map<std::string, TokenId> ids;
    std::vector<std::string> tokens;  // by id; "" where an id has no token

    /// The id of `token`, or -1.
    TokenId find(const std::string& token) const {
        const auto found = ids.find(token);
        return found == ids.end() ? TokenId{-1} : found->second;
    }
};

/// WordPiece's model (tokenizer.json's "model" of type "WordPiece").
struct WordPiece {
    Vocab vocab;
    std::string unk_token = "[UNK]";
    TokenId unk_id = -1;
    std::string prefix = "##";
    std::size_t max_input_chars_per_word = 100;

    /// Appends the pieces of the word text[first, last) to out: the longest vocabulary entry at
    /// each place (after the first, the prefix and the entry), or one unknown token for the
    /// whole word when a place has none or the word is longer than max_input_chars_per_word.
    void split(const std::vector<Char>& text, std::size_t first, std::size_t last, std::vector<Piece>& out) const {
        std::string word;
        std::vector<std::size_t> boundary;  // the byte of word where each character starts, and the end
        for (std::size_t k = first; k < last; ++k) {
            boundary.push_back(word.size());
            append_utf8(word, text[k].code);
        }
        boundary.push_back(word.size());
        const std::size_t count = last - first;
        const std::size_t before = out.size();
        bool unknown = count > max_input_chars_per_word;
        std::string candidate;
        for (std::size_t start = 0; !unknown && start < count;) {
            std::size_t end = count;
            TokenId id = -1;
            for (; end > start; --end) {
                candidate.assign(start > 0 ? prefix : std::string());
                candidate.append(word, boundary[start], boundary[end] - boundary[start]);
                id = vocab.find(candidate);
                if (id >= 0) break;
            }
            if (id < 0) {
                unknown = true;
                break;
            }
            out.push_back({id, candidate, text[first + start].begin, text[first + end - 1].end});
            start = end;
        }
        if (unknown) {
            out.resize(before);
            out.push_back({unk_id, unk_token, text[first].begin, text[last - 1].end});
        }
    }
};

/// Hugging Face's cleanup of decoded text: no space before . ? ! , and the English contractions
/// joined.
inline std::string cleanup_decoded(std::string text) {
    static const std::pair<std::string_view, std::string_view> rules[] = {
        {" .", "."},   {" ?", "?"},     {" !", "!"},           {" ,", ","},     {" ' ", "'"},     {" n't", "n't"},
        {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
    for (const auto& [from, to] : rules) {
        std::string result;
        std::size_t at = 0;
        for (std::size_t found; (found = text.find(from, at)) != std::string::npos; at = found + from.size()) {
            result.append(text, at, found - at);
            result.append(to);
        }
        result.append(text, at, std::string::npos);
        text = std::move(result);
    }
    return text;
}

/// WordPiece's decoder: tokens joined with spaces, a continuation's prefix dropped instead of
/// its space; with `cleanup`, each token cleaned (cleanup_decoded).
inline std::string decode_wordpiece(const std::vector<std::string>& tokens, const std::string& prefix, bool cleanup) {
    std::string text;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        std::string token = tokens[i];
        if (i != 0) {
            if (token.compare(0, prefix.size(), prefix) == 0)
                token.erase(0, prefix.size());
            else
                token.insert(0, " ");
        }
        text += cleanup ? cleanup_decoded(std::move(token)) : token;
    }
    return text;
}

}  // namespace seqembed::text::detail
