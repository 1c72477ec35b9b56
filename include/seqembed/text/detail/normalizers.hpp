/// @file text/detail/normalizers.hpp
/// @brief Normalizers and pre-tokenizers over aligned text (each code point keeps the bytes of
///        the input it came from), as Hugging Face tokenizers' BertNormalizer and
///        BertPreTokenizer do.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "unicode.hpp"

namespace seqembed::text::detail {

/// BertNormalizer's options (tokenizer.json's "normalizer" of type "BertNormalizer").
struct BertNormalizerOptions {
    bool clean_text = true;
    bool handle_chinese_chars = true;
    bool strip_accents = true;  // tokenizer.json's null means: as lowercase
    bool lowercase = true;
};

/// The CJK ideographs BertNormalizer surrounds with spaces (the CJK Unified Ideographs blocks and
/// their extensions A to E, and the compatibility ideographs).
inline bool is_chinese_char(char32_t c) noexcept {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/// BertNormalizer over `text`: without NUL, U+FFFD and other control characters, whitespace as
/// spaces (clean_text); CJK ideographs between spaces; canonically decomposed without nonspacing
/// marks (strip_accents); lowercased. Each character made from another keeps its input bytes.
inline std::vector<Char> bert_normalize(const std::vector<Char>& text, const BertNormalizerOptions& options) {
    std::vector<Char> out;
    out.reserve(text.size() + text.size() / 4);
    std::vector<char32_t> parts;
    std::vector<char32_t> lowered;
    for (const Char& ch : text) {
        char32_t c = ch.code;
        if (options.clean_text) {
            const bool tab_or_newline = c == '\t' || c == '\n' || c == '\r';
            if (c == 0 || c == replacement_character || (!tab_or_newline && is_other(c))) continue;
            if (is_whitespace(c)) c = ' ';
        }
        const bool spaced = options.handle_chinese_chars && is_chinese_char(c);
        if (spaced) out.push_back({' ', ch.begin, ch.end});
        parts.clear();
        if (options.strip_accents)
            append_decomposition(parts, c);
        else
            parts.push_back(c);
        for (const char32_t part : parts) {
            if (options.strip_accents && is_nonspacing_mark(part)) continue;
            if (!options.lowercase) {
                out.push_back({part, ch.begin, ch.end});
                continue;
            }
            lowered.clear();
            append_lowercase(lowered, part);
            for (const char32_t low : lowered) out.push_back({low, ch.begin, ch.end});
        }
        if (spaced) out.push_back({' ', ch.begin, ch.end});
    }
    return out;
}

/// BertPreTokenizer: the words of `text` as [first, last) ranges of its characters, split at
/// whitespace (dropped) and around each punctuation character (its own word): ASCII
/// punctuation and the Unicode punctuation categories.
inline std::vector<std::pair<std::size_t, std::size_t>> bert_pre_tokenize(const std::vector<Char>& text) {
    std::vector<std::pair<std::size_t, std::size_t>> words;
    std::size_t start = 0;
    const auto close = [&](std::size_t end) {
        if (end > start) words.emplace_back(start, end);
    };
    for (std::size_t k = 0; k < text.size(); ++k) {
        const char32_t c = text[k].code;
        const bool ascii_punctuation = (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
                                       (c >= 123 && c <= 126);
        if (is_whitespace(c)) {
            close(k);
            start = k + 1;
        } else if (ascii_punctuation || is_punctuation(c)) {
            close(k);
            words.emplace_back(k, k + 1);
            start = k + 1;
        }
    }
    close(text.size());
    return words;
}

}  // namespace seqembed::text::detail
