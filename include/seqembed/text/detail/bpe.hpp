/// @file text/detail/bpe.hpp
/// @brief The BPE model (GPT-2's, Llama's, Qwen's, Mistral's): a word starts as its characters
///        and the pair of neighbours whose merge ranks first is joined until no pair has a
///        merge; with byte fallback, a character outside the vocabulary becomes its bytes'
///        tokens (<0x41>).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "unicode.hpp"
#include "vocab.hpp"

namespace seqembed::text::detail {

/// BPE's model (tokenizer.json's "model" of type "BPE").
struct Bpe {
    Vocab vocab;
    /// The merge of each pair of ids (left << 32 | right): its rank and the merged token's id.
    std::unordered_map<std::uint64_t, std::pair<std::uint32_t, TokenId>> merges;
    /// The id of each one-character token, for words' first characters.
    std::unordered_map<char32_t, TokenId> characters;
    /// The id of each byte's <0xXX> token, or -1.
    std::array<TokenId, 256> byte_ids{};
    std::string unk_token;  // "" for none: an unknown character is dropped
    TokenId unk_id = -1;
    std::string prefix;  // continuing_subword_prefix
    std::string suffix;  // end_of_word_suffix
    bool fuse_unk = false;
    bool byte_fallback = false;
    bool ignore_merges = false;

    static std::uint64_t key(TokenId left, TokenId right) noexcept {
        return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
    }

    /// The lookups built from vocab: one-character tokens and byte tokens.
    void index() {
        byte_ids.fill(-1);
        characters.clear();
        static const char digits[] = "0123456789ABCDEF";
        for (unsigned b = 0; b < 256; ++b) {
            const std::string name = std::string("<0x") + digits[b >> 4] + digits[b & 15] + ">";
            byte_ids[b] = vocab.find(name);
        }
        for (std::size_t id = 0; id < vocab.tokens.size(); ++id) {
            const std::string& token = vocab.tokens[id];
            if (token.empty() || token.size() > 4) continue;
            const std::vector<Char> chars = decode_utf8(token, true);
            if (chars.size() == 1) characters.emplace(chars[0].code, static_cast<TokenId>(id));
        }
    }

    /// Appends the tokens of `word` to out.
    void tokenize(const std::vector<Char>& word, std::vector<Piece>& out) const {
        if (word.empty()) return;
        std::string whole;
        if (ignore_merges) {
            for (const Char& ch : word) append_utf8(whole, ch.code);
            const TokenId id = vocab.find(whole);
            if (id >= 0) {
                out.push_back({id, whole, word.front().begin, word.back().end});
                return;
            }
        }
        std::vector<Symbol> symbols;
        symbols.reserve(word.size());
        const auto add = [&](TokenId id, std::size_t first, std::size_t last) {
            symbols.push_back({id, first, last, static_cast<long>(symbols.size()) - 1, static_cast<long>(symbols.size()) + 1});
        };
        TokenId unknown = -1;
        std::size_t unknown_first = 0;
        std::size_t unknown_last = 0;
        const auto flush_unknown = [&] {
            if (unknown >= 0) add(unknown, unknown_first, unknown_last);
            unknown = -1;
        };
        std::string piece;
        for (std::size_t k = 0; k < word.size(); ++k) {
            const bool affixed = (k > 0 && !prefix.empty()) || (k + 1 == word.size() && !suffix.empty());
            TokenId id = -1;
            if (!affixed) {
                const auto found = characters.find(word[k].code);
                if (found != characters.end()) id = found->second;
            } else {
                piece.clear();
                if (k > 0) piece = prefix;
                append_utf8(piece, word[k].code);
                if (k + 1 == word.size()) piece += suffix;
                id = vocab.find(piece);
            }
            if (id >= 0) {
                flush_unknown();
                add(id, k, k + 1);
                continue;
            }
            if (byte_fallback) {
                if (!affixed) {
                    piece.clear();
                    append_utf8(piece, word[k].code);
                }
                bool all = true;
                for (const char byte : piece) all = all && byte_ids[static_cast<unsigned char>(byte)] >= 0;
                if (all) {
                    // As Hugging Face: an unknown token still pending comes after these.
                    for (const char byte : piece) add(byte_ids[static_cast<unsigned char>(byte)], k, k + 1);
                    continue;
                }
            }
            if (unk_id < 0) continue;
            if (unknown >= 0 && fuse_unk) {
                unknown_last = k + 1;
                continue;
            }
            flush_unknown();
            unknown = unk_id;
            unknown_first = k;
            unknown_last = k + 1;
        }
        flush_unknown();
        if (!symbols.empty()) symbols.back().next = -1;
        merge_all(symbols);
        for (const Symbol& symbol : symbols) {
            if (symbol.first == symbol.last) continue;
            out.push_back({symbol.id, vocab.tokens[static_cast<std::size_t>(symbol.id)], word[symbol.first].begin,
                           word[symbol.last - 1].end});
        }
    }

private:
    /// A run of the word's characters [first, last) that is one token; removed when first == last.
    struct Symbol {
        TokenId id;
        std::size_t first;
        std::size_t last;
        long prev;
        long next;
    };

    /// A possible merge: of the symbol at `at` and the one after it, into `id`.
    struct Candidate {
        std::uint32_t rank;
        std::size_t at;
        TokenId id;
        bool operator>(const Candidate& other) const noexcept {
            return rank != other.rank ? rank > other.rank : at > other.at;
        }
    };

    /// Joins pairs, the lowest rank first (the leftmost among equals), until none has a merge.
    void merge_all(std::vector<Symbol>& symbols) const {
        std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
        const auto consider = [&](std::size_t at) {
            const long next = symbols[at].next;
            if (next < 0) return;
            const auto found = merges.find(key(symbols[at].id, symbols[static_cast<std::size_t>(next)].id));
            if (found != merges.end()) queue.push({found->second.first, at, found->second.second});
        };
        for (std::size_t at = 0; at + 1 < symbols.size(); ++at) consider(at);
        while (!queue.empty()) {
            const Candidate top = queue.top();
            queue.pop();
            Symbol& left = symbols[top.at];
            if (left.first == left.last || left.next < 0) continue;
            Symbol& right = symbols[static_cast<std::size_t>(left.next)];
            const auto found = merges.find(key(left.id, right.id));
            if (found == merges.end() || found->second.second != top.id) continue;  // a stale candidate
            left.id = top.id;
            left.last = right.last;
            left.next = right.next;
            right.last = right.first;
            if (left.next >= 0) symbols[static_cast<std::size_t>(left.next)].prev = static_cast<long>(top.at);
            if (left.prev >= 0) consider(static_cast<std::size_t>(left.prev));
            consider(top.at);
        }
    }
};

}  // namespace seqembed::text::detail
