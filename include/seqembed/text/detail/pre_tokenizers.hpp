/// @file text/detail/pre_tokenizers.hpp
/// @brief Pre-tokenizers over aligned text, as Hugging Face tokenizers' pre-tokenizers: each
///        cuts words into smaller words (and ByteLevel and Metaspace rewrite them) before the
///        model sees them. BertPreTokenizer, ByteLevel, Split, Digits, Metaspace, Whitespace,
///        WhitespaceSplit, Punctuation, and Sequence.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "byte_level.hpp"
#include "normalizers.hpp"
#include "regex.hpp"
#include "unicode.hpp"

namespace seqembed::text::detail {

/// Some characters of a text (its words, while pre-tokenizing).
using Text = std::vector<Char>;

/// What a split does with the parts that match (Hugging Face's SplitDelimiterBehavior).
enum class SplitBehavior {
    removed,               ///< drops them
    isolated,              ///< keeps each as a word of its own
    merged_with_previous,  ///< joins each to the word before it
    merged_with_next,      ///< joins each to the word after it
    contiguous             ///< keeps each run of them as one word
};

/// A run of a text's characters [first, last) and whether it matched.
struct Span {
    std::size_t first;
    std::size_t last;
    bool match;
};

/// Appends the words of `text` that `spans` (which cover it in order) give under `behavior` to
/// out; empty words are dropped.
inline void split_spans(const Text& text, const std::vector<Span>& spans, SplitBehavior behavior, std::vector<Text>& out) {
    std::vector<std::pair<std::size_t, std::size_t>> words;
    bool previous_match = false;
    switch (behavior) {
    case SplitBehavior::removed:
        for (const Span& span : spans)
            if (!span.match) words.emplace_back(span.first, span.last);
        break;
    case SplitBehavior::isolated:
        for (const Span& span : spans) words.emplace_back(span.first, span.last);
        break;
    case SplitBehavior::merged_with_previous:
        for (const Span& span : spans) {
            if (span.match && !previous_match && !words.empty())
                words.back().second = span.last;
            else
                words.emplace_back(span.first, span.last);
            previous_match = span.match;
        }
        break;
    case SplitBehavior::merged_with_next:
        for (std::size_t k = spans.size(); k-- > 0;) {
            const Span& span = spans[k];
            if (span.match && !previous_match && !words.empty())
                words.back().first = span.first;
            else
                words.emplace_back(span.first, span.last);
            previous_match = span.match;
        }
        std::reverse(words.begin(), words.end());
        break;
    case SplitBehavior::contiguous:
        for (std::size_t k = 0; k < spans.size(); ++k) {
            const Span& span = spans[k];
            if (k > 0 && span.match == previous_match)
                words.back().second = span.last;
            else
                words.emplace_back(span.first, span.last);
            previous_match = span.match;
        }
        break;
    }
    for (const auto& [first, last] : words)
        if (last > first)
            out.emplace_back(text.begin() + static_cast<std::ptrdiff_t>(first), text.begin() + static_cast<std::ptrdiff_t>(last));
}

/// The spans of `text` that cover it: the ranges `matches` gives (in order) and the gaps
/// between them; with `invert` the gaps are the matches.
inline std::vector<Span> spans_of(const Text& text, const std::vector<std::pair<std::size_t, std::size_t>>& matches,
                                  bool invert) {
    std::vector<Span> spans;
    std::size_t at = 0;
    for (const auto& [first, last] : matches) {
        if (first > at) spans.push_back({at, first, invert});
        spans.push_back({first, last, !invert});
        at = last;
    }
    if (at < text.size()) spans.push_back({at, text.size(), invert});
    return spans;
}

/// The spans of `text` where each character `is_match` says is one matched span.
template <typename Predicate>
std::vector<Span> spans_where(const Text& text, Predicate is_match) {
    std::vector<std::pair<std::size_t, std::size_t>> matches;
    for (std::size_t k = 0; k < text.size(); ++k)
        if (is_match(text[k].code)) matches.emplace_back(k, k + 1);
    return spans_of(text, matches, false);
}

/// ASCII punctuation and the Unicode punctuation categories (BertPreTokenizer's and
/// Punctuation's rule).
inline bool is_bert_punctuation(char32_t c) noexcept {
    const bool ascii = (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
    return ascii || is_punctuation(c);
}

/// GPT-2's pattern, which the ByteLevel pre-tokenizer splits with.
inline const char* gpt2_pattern() {
    return R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
}

/// When Metaspace puts its replacement before a word.
enum class PrependScheme {
    always,  ///< before every word that does not start with it
    first,   ///< only before the start of the text
    never    ///< never
};

/// One pre-tokenizer of tokenizer.json (a Sequence is a list of them).
struct PreTokenizer {
    /// The kinds this version implements.
    enum class Kind { bert, byte_level, split, digits, metaspace, whitespace, whitespace_split, punctuation };
    Kind kind = Kind::bert;
    Regex pattern;                                    // split, byte_level (with use_regex), whitespace
    SplitBehavior behavior = SplitBehavior::isolated;  // split, punctuation
    bool invert = false;                              // split
    bool add_prefix_space = false;                    // byte_level
    bool individual_digits = false;                   // digits
    char32_t replacement = 0x2581;                    // metaspace
    PrependScheme prepend_scheme = PrependScheme::always;  // metaspace
    bool split = true;                                // metaspace

    /// The words `words` become.
    void apply(std::vector<Text>& words) const {
        std::vector<Text> out;
        out.reserve(words.size());
        for (Text& word : words) apply(word, out);
        words = std::move(out);
    }

private:
    void apply(Text& word, std::vector<Text>& out) const {
        switch (kind) {
        case Kind::bert: {
            std::vector<Text> parts;
            split_spans(word, spans_where(word, [](char32_t c) { return is_whitespace(c); }), SplitBehavior::removed, parts);
            for (const Text& part : parts)
                split_spans(part, spans_where(part, [](char32_t c) { return is_bert_punctuation(c); }),
                            SplitBehavior::isolated, out);
            return;
        }
        case Kind::byte_level: return byte_level(word, out);
        case Kind::split: return split_spans(word, spans_of(word, match_characters(word, pattern), invert), behavior, out);
        case Kind::digits:
            return split_spans(word, spans_where(word, [](char32_t c) { return is_numeric(c); }),
                               individual_digits ? SplitBehavior::isolated : SplitBehavior::contiguous, out);
        case Kind::metaspace: return metaspace(word, out);
        case Kind::whitespace:
            return split_spans(word, spans_of(word, match_characters(word, pattern), true), SplitBehavior::removed, out);
        case Kind::whitespace_split:
            return split_spans(word, spans_where(word, [](char32_t c) { return is_whitespace(c); }), SplitBehavior::removed, out);
        case Kind::punctuation:
            return split_spans(word, spans_where(word, [](char32_t c) { return is_bert_punctuation(c); }), behavior, out);
        }
    }

    /// ByteLevel: a space before the word (with add_prefix_space), GPT-2's split (with
    /// use_regex), then each character as the alphabet's characters of its UTF-8 bytes.
    void byte_level(Text& word, std::vector<Text>& out) const {
        if (add_prefix_space && !word.empty() && word.front().code != ' ')
            word.insert(word.begin(), Char{' ', word.front().begin, word.front().end});
        std::vector<Text> parts;
        if (pattern)
            split_spans(word, spans_of(word, match_characters(word, pattern), false), SplitBehavior::isolated, parts);
        else if (!word.empty())
            parts.push_back(std::move(word));
        const auto& alphabet = byte_characters();
        std::string bytes;
        for (const Text& part : parts) {
            Text mapped;
            mapped.reserve(part.size());
            for (const Char& ch : part) {
                bytes.clear();
                append_utf8(bytes, ch.code);
                for (const char byte : bytes) mapped.push_back({alphabet[static_cast<unsigned char>(byte)], ch.begin, ch.end});
            }
            out.push_back(std::move(mapped));
        }
    }

    /// Metaspace: spaces as the replacement, the replacement before the word as prepend_scheme
    /// says, then (with split) a word starting at each replacement.
    void metaspace(Text& word, std::vector<Text>& out) const {
        for (Char& ch : word)
            if (ch.code == ' ') ch.code = replacement;
        const bool at_start = !word.empty() && word.front().begin == 0;
        if (!word.empty() && word.front().code != replacement &&
            (prepend_scheme == PrependScheme::always || (prepend_scheme == PrependScheme::first && at_start)))
            word.insert(word.begin(), Char{replacement, word.front().begin, word.front().end});
        if (!split) {
            if (!word.empty()) out.push_back(std::move(word));
            return;
        }
        const char32_t r = replacement;
        split_spans(word, spans_where(word, [r](char32_t c) { return c == r; }), SplitBehavior::merged_with_next, out);
    }
};

/// `words` through each pre-tokenizer in turn.
inline void pre_tokenize(std::vector<Text>& words, const std::vector<PreTokenizer>& pre_tokenizers) {
    for (const PreTokenizer& pre_tokenizer : pre_tokenizers) pre_tokenizer.apply(words);
}

}  // namespace seqembed::text::detail
