/// @file text/detail/wordpiece.hpp
/// @brief The WordPiece model (BERT's): each word split greedily into the longest pieces of the
///        vocabulary, continuation pieces prefixed ("##").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "unicode.hpp"
#include "vocab.hpp"

namespace seqembed::text::detail {

/// WordPiece's model (tokenizer.json's "model" of type "WordPiece").
struct WordPiece {
    Vocab vocab;
    std::string unk_token = "[UNK]";
    TokenId unk_id = -1;
    std::string prefix = "##";
    std::size_t max_input_chars_per_word = 100;

    /// Appends the pieces of `word` to out: the longest vocabulary entry at
    /// each place (after the first, the prefix and the entry), or one unknown token for the
    /// whole word when a place has none or the word is longer than max_input_chars_per_word.
    void tokenize(const std::vector<Char>& text, std::vector<Piece>& out) const {
        if (text.empty()) return;
        const std::size_t first = 0;
        const std::size_t last = text.size();
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

}  // namespace seqembed::text::detail
