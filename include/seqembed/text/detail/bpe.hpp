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

/// The merges of a BPE model: a pair of ids (left << 32 | right) to its rank and merged id, in
/// an open-addressing table (linear probing, a power-of-two size at most half full), which finds
/// a pair several times faster than std::unordered_map, the lookup BPE spends most time in.
class MergeTable {
public:
    /// A merge: its rank (lower merges first) and the merged token's id.
    struct Merge {
        std::uint32_t rank;
        TokenId id;
    };

    /// Sets the merge of a pair (a later one replaces an earlier, as Hugging Face's map does).
    void insert(std::uint64_t key, Merge merge) {
        if (2 * (m_size + 1) > m_slots.size()) grow();
        Slot& slot = find_slot(key);
        if (slot.key != key) ++m_size;
        slot = {key, merge};
    }

    /// The merge of `key`, or null.
    const Merge* find(std::uint64_t key) const noexcept {
        if (m_slots.empty()) return nullptr;
        for (std::size_t at = index(key);; at = (at + 1) & m_mask) {
            const Slot& slot = m_slots[at];
            if (slot.key == key) return &slot.merge;
            if (slot.key == empty) return nullptr;
        }
    }

    /// The number of merges.
    std::size_t size() const noexcept { return m_size; }

private:
    static constexpr std::uint64_t empty = ~std::uint64_t{0};  // no pair of ids below 2^31 makes it
    struct Slot {
        std::uint64_t key = empty;
        Merge merge{0, 0};
    };
    std::vector<Slot> m_slots;
    std::size_t m_mask = 0;
    std::size_t m_size = 0;
    int m_shift = 64;

    std::size_t index(std::uint64_t key) const noexcept {
        return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> m_shift);
    }

    Slot& find_slot(std::uint64_t key) {
        std::size_t at = index(key);
        while (m_slots[at].key != key && m_slots[at].key != empty) at = (at + 1) & m_mask;
        return m_slots[at];
    }

    void grow() {
        const std::size_t capacity = m_slots.empty() ? 64 : 2 * m_slots.size();
        std::vector<Slot> old = std::move(m_slots);
        m_slots.assign(capacity, Slot{});
        m_mask = capacity - 1;
        m_shift = 64;
        for (std::size_t c = capacity; c > 1; c >>= 1) --m_shift;
        for (const Slot& slot : old)
            if (slot.key != empty) find_slot(slot.key) = slot;
    }
};

/// BPE's model (tokenizer.json's "model" of type "BPE").
struct Bpe {
    Vocab vocab;
    /// The merge of each pair of ids (left << 32 | right): its rank and the merged token's id.
    MergeTable merges;
    /// The id of each one-character token below U+10000 (-1 for none), and of the others.
    std::vector<TokenId> basic_characters;
    std::unordered_map<char32_t, TokenId> other_characters;
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
        basic_characters.assign(0x10000, -1);
        other_characters.clear();
        static const char digits[] = "0123456789ABCDEF";
        for (unsigned b = 0; b < 256; ++b) {
            const std::string name = std::string("<0x") + digits[b >> 4] + digits[b & 15] + ">";
            byte_ids[b] = vocab.find(name);
        }
        for (std::size_t id = 0; id < vocab.tokens.size(); ++id) {
            const std::string& token = vocab.tokens[id];
            if (token.empty() || token.size() > 4) continue;
            const std::vector<Char> chars = decode_utf8(token, true);
            if (chars.size() != 1) continue;
            if (chars[0].code < 0x10000)
                basic_characters[chars[0].code] = static_cast<TokenId>(id);
            else
                other_characters.emplace(chars[0].code, static_cast<TokenId>(id));
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
                const char32_t code = word[k].code;
                if (code < 0x10000) {
                    id = basic_characters[code];
                } else {
                    const auto found = other_characters.find(code);
                    if (found != other_characters.end()) id = found->second;
                }
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
            if (const MergeTable::Merge* merge = merges.find(key(symbols[at].id, symbols[static_cast<std::size_t>(next)].id)))
                queue.push({merge->rank, at, merge->id});
        };
        for (std::size_t at = 0; at + 1 < symbols.size(); ++at) consider(at);
        while (!queue.empty()) {
            const Candidate top = queue.top();
            queue.pop();
            Symbol& left = symbols[top.at];
            if (left.first == left.last || left.next < 0) continue;
            Symbol& right = symbols[static_cast<std::size_t>(left.next)];
            const MergeTable::Merge* merge = merges.find(key(left.id, right.id));
            if (merge == nullptr || merge->id != top.id) continue;  // a stale candidate
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
