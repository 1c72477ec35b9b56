/// @file text/detail/unigram.hpp
/// @brief The Unigram model (SentencePiece's, as Hugging Face runs it): the split of a word
///        into vocabulary pieces with the highest total score (Viterbi), unknown characters
///        scoring the lowest score less 10 and joined into one unknown token.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "../../detail/exceptions.hpp"
#include "../../error.hpp"
#include "unicode.hpp"
#include "vocab.hpp"

namespace seqembed::text::detail {

/// Unigram's model (tokenizer.json's "model" of type "Unigram").
struct Unigram {
    Vocab vocab;
    std::vector<double> scores;  // by id
    TokenId unk_id = -1;
    bool byte_fallback = false;
    double unk_score = 0;

    /// The scores, and the trie of the pieces.
    void build(std::vector<double> piece_scores) {
        scores = std::move(piece_scores);
        double lowest = 0;
        for (std::size_t id = 0; id < scores.size(); ++id) lowest = id == 0 ? scores[id] : std::min(lowest, scores[id]);
        unk_score = lowest - 10.0;
        m_nodes.assign(1, TrieNode{});
        for (std::size_t id = 0; id < vocab.tokens.size(); ++id) {
            const std::string& piece = vocab.tokens[id];
            if (piece.empty()) continue;
            std::size_t node = 0;
            for (const char c : piece) node = child(node, static_cast<unsigned char>(c), true);
            m_nodes[node].id = static_cast<TokenId>(id);
        }
        static const char digits[] = "0123456789ABCDEF";
        for (unsigned b = 0; b < 256; ++b)
            m_byte_ids[b] = vocab.find(std::string("<0x") + digits[b >> 4] + digits[b & 15] + ">");
    }

    /// Appends the tokens of `word` to out.
    /// @throws value_error when a character is unknown and the model has no unk_id.
    void tokenize(const std::vector<Char>& word, std::vector<Piece>& out) const {
        if (word.empty()) return;
        std::string text;
        std::vector<std::size_t> char_at;  // the character each byte of text belongs to
        for (std::size_t k = 0; k < word.size(); ++k) {
            const std::size_t before = text.size();
            append_utf8(text, word[k].code);
            char_at.insert(char_at.end(), text.size() - before, k);
        }
        struct Best {
            TokenId id = -1;
            double score = 0;
            std::size_t start = 0;
            bool reached = false;
        };
        std::vector<Best> best(text.size() + 1);
        best[0].reached = true;
        for (std::size_t start = 0; start < text.size();) {
            const std::size_t length = char_length(text, start);
            const double here = best[start].score;
            bool single = false;
            std::size_t node = 0;
            for (std::size_t end = start; end < text.size();) {
                node = child(node, static_cast<unsigned char>(text[end]), false);
                if (node == 0) break;
                ++end;
                const TokenId id = m_nodes[node].id;
                if (id < 0) continue;
                const double candidate = here + scores[static_cast<std::size_t>(id)];
                Best& target = best[end];
                if (!target.reached || candidate > target.score) target = {id, candidate, start, true};
                if (end - start == length) single = true;
            }
            if (!single) {
                const double candidate = here + unk_score;
                Best& target = best[start + length];
                if (!target.reached || candidate > target.score) {
                    if (unk_id < 0)  // as Hugging Face's lattice, whichever path wins in the end
                        seqembed::detail::fail<value_error>("the Unigram model has no unk_id for the unknown text \"",
                                                            text.substr(start, length), "\"");
                    target = {unk_id, candidate, start, true};
                }
            }
            start += length;
        }
        // Back from the end; neighbouring unknown pieces join.
        std::vector<std::pair<std::size_t, std::size_t>> spans;  // byte ranges, last first
        std::size_t unknown_start = 0;
        std::size_t unknown_end = 0;
        for (std::size_t end = text.size(); end > 0;) {
            const Best& node = best[end];
            if (unk_id >= 0 && node.id == unk_id) {
                if (unknown_end == 0) unknown_end = end;
                unknown_start = node.start;
            } else {
                if (unknown_end != 0) spans.emplace_back(unknown_start, unknown_end);
                unknown_end = 0;
                spans.emplace_back(node.start, end);
            }
            end = node.start;
        }
        if (unknown_end != 0) spans.emplace_back(unknown_start, unknown_end);
        std::reverse(spans.begin(), spans.end());
        for (const auto& [begin, end] : spans) {
            std::string piece = text.substr(begin, end - begin);
            const std::size_t from = word[char_at[begin]].begin;
            const std::size_t to = word[char_at[end - 1]].end;
            TokenId id = vocab.find(piece);
            if (id < 0 && unk_id < 0)  // before byte fallback, as Hugging Face's lattice refuses it
                seqembed::detail::fail<value_error>("the Unigram model has no unk_id for the unknown text \"", piece, "\"");
            if (id < 0 && byte_fallback) {
                bool all = true;
                for (const char c : piece) all = all && m_byte_ids[static_cast<unsigned char>(c)] >= 0;
                if (all) {
                    for (const char c : piece) {
                        const TokenId byte = m_byte_ids[static_cast<unsigned char>(c)];
                        out.push_back({byte, vocab.tokens[static_cast<std::size_t>(byte)], from, to});
                    }
                    continue;
                }
            }
            if (id < 0) id = unk_id;
            out.push_back({id, std::move(piece), from, to});
        }
    }

private:
    struct TrieNode {
        TokenId id = -1;
        std::vector<std::pair<unsigned char, std::size_t>> children;  // sorted by byte
    };
    std::vector<TrieNode> m_nodes{TrieNode{}};
    std::array<TokenId, 256> m_byte_ids{};

    /// The child of node by byte (made when `make`), or 0 for none.
    std::size_t child(std::size_t node, unsigned char byte, bool make) {
        auto& children = m_nodes[node].children;
        const auto at = std::lower_bound(children.begin(), children.end(), std::make_pair(byte, std::size_t{0}));
        if (at != children.end() && at->first == byte) return at->second;
        if (!make) return 0;
        const std::size_t index = m_nodes.size();
        children.insert(at, {byte, index});
        m_nodes.emplace_back();
        return index;
    }

    std::size_t child(std::size_t node, unsigned char byte, bool) const {
        const auto& children = m_nodes[node].children;
        const auto at = std::lower_bound(children.begin(), children.end(), std::make_pair(byte, std::size_t{0}));
        return at != children.end() && at->first == byte ? at->second : 0;
    }

    /// The length of the UTF-8 sequence starting at text[at] (valid UTF-8).
    static std::size_t char_length(const std::string& text, std::size_t at) {
        const auto lead = static_cast<unsigned char>(text[at]);
        return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    }
};

}  // namespace seqembed::text::detail
