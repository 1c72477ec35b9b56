/// @file text/detail/normalizers.hpp
/// @brief Normalizers over aligned text (each code point keeps the bytes of the input it came
///        from), as Hugging Face tokenizers' normalizers: BertNormalizer, the Unicode forms (NFC,
///        NFD, NFKC, NFKD), Lowercase, StripAccents, Replace, Prepend, Strip, Precompiled
///        (SentencePiece's), and Sequence.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "precompiled.hpp"
#include "regex.hpp"
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

/// A Unicode normalization form.
enum class UnicodeForm { nfc, nfd, nfkc, nfkd };

/// Whether c can join the character before it in a composition (or reordering): a combining
/// mark, a Hangul vowel or trailing consonant, or a starter that is the second of a canonical
/// composition (utf8proc marks those with bit 15 of comb_index).
inline bool joins_previous(char32_t c) noexcept {
    const utf8proc_property_t* property = utf8proc_get_property(static_cast<utf8proc_int32_t>(c));
    if (property->combining_class != 0) return true;
    if ((c >= 0x1161 && c <= 0x1175) || (c >= 0x11A8 && c <= 0x11C2)) return true;
    return property->comb_index != 0xFFFF && (property->comb_index & 0x8000u) != 0;
}

/// `text` in the Unicode normalization form `form`, through utf8proc. The text is cut before
/// each character that cannot join the one before it, and each piece is normalized on its own
/// (which gives the form of the whole); each character keeps the bytes of the input character
/// it comes from.
inline std::vector<Char> unicode_normalize(const std::vector<Char>& text, UnicodeForm form) {
    const bool compose = form == UnicodeForm::nfc || form == UnicodeForm::nfkc;
    const bool compatibility = form == UnicodeForm::nfkc || form == UnicodeForm::nfkd;
    const auto options = static_cast<utf8proc_option_t>(
        UTF8PROC_STABLE | (compose ? UTF8PROC_COMPOSE : UTF8PROC_DECOMPOSE) | (compatibility ? UTF8PROC_COMPAT : 0));
    // Below U+0300 every character is already in NFC; below U+00A0 in every form.
    const char32_t unchanged_below = form == UnicodeForm::nfc ? 0x300 : 0xA0;
    std::vector<Char> out;
    out.reserve(text.size());
    std::vector<utf8proc_int32_t> buffer;
    std::vector<bool> used;
    for (std::size_t first = 0; first < text.size();) {
        std::size_t last = first + 1;
        while (last < text.size() && text[last].code >= 0x300 && joins_previous(text[last].code)) ++last;
        bool plain = true;
        for (std::size_t k = first; k < last && plain; ++k) plain = text[k].code < unchanged_below;
        if (plain) {
            out.insert(out.end(), text.begin() + static_cast<std::ptrdiff_t>(first),
                       text.begin() + static_cast<std::ptrdiff_t>(last));
            first = last;
            continue;
        }
        std::string piece;
        for (std::size_t k = first; k < last; ++k) append_utf8(piece, text[k].code);
        const auto bytes = reinterpret_cast<const utf8proc_uint8_t*>(piece.data());
        const auto size = static_cast<utf8proc_ssize_t>(piece.size());
        buffer.resize(4 * (last - first) + 16);
        utf8proc_ssize_t length =
            utf8proc_decompose(bytes, size, buffer.data(), static_cast<utf8proc_ssize_t>(buffer.size()), options);
        if (length > static_cast<utf8proc_ssize_t>(buffer.size())) {
            buffer.resize(static_cast<std::size_t>(length));
            length = utf8proc_decompose(bytes, size, buffer.data(), length, options);
        }
        if (length < 0) seqembed::detail::fail<value_error>("cannot normalize the text at byte ", text[first].begin);
        length = utf8proc_normalize_utf32(buffer.data(), length, options);
        if (length < 0) seqembed::detail::fail<value_error>("cannot normalize the text at byte ", text[first].begin);
        bool same = static_cast<std::size_t>(length) == last - first;
        for (std::size_t k = 0; same && k < last - first; ++k)
            same = static_cast<char32_t>(buffer[k]) == text[first + k].code;
        if (same) {
            out.insert(out.end(), text.begin() + static_cast<std::ptrdiff_t>(first),
                       text.begin() + static_cast<std::ptrdiff_t>(last));
        } else {
            // Each output character stands for the first unused input character with its code,
            // else (a composed or decomposed character) for the first unused one, else for the
            // last one used: a composition keeps its starter's bytes, a decomposition repeats the
            // composed character's, as Hugging Face aligns them.
            used.assign(last - first, false);
            std::size_t latest = first;
            for (utf8proc_ssize_t k = 0; k < length; ++k) {
                const auto code = static_cast<char32_t>(buffer[static_cast<std::size_t>(k)]);
                std::size_t source = last;
                for (std::size_t i = first; i < last && source == last; ++i)
                    if (!used[i - first] && text[i].code == code) source = i;
                for (std::size_t i = first; i < last && source == last; ++i)
                    if (!used[i - first]) source = i;
                if (source == last) {
                    source = latest;
                } else {
                    used[source - first] = true;
                    latest = source;
                }
                out.push_back({code, text[source].begin, text[source].end});
            }
        }
        first = last;
    }
    return out;
}

/// Lowercase: each character as Rust's char::to_lowercase.
inline std::vector<Char> lowercase(const std::vector<Char>& text) {
    std::vector<Char> out;
    out.reserve(text.size());
    std::vector<char32_t> lowered;
    for (const Char& ch : text) {
        lowered.clear();
        append_lowercase(lowered, ch.code);
        for (const char32_t low : lowered) out.push_back({low, ch.begin, ch.end});
    }
    return out;
}

/// The code points of UTF-8 text that is known to be valid.
inline std::vector<char32_t> code_points(const std::string& text) {
    std::vector<char32_t> out;
    for (const Char& ch : decode_utf8(text, true)) out.push_back(ch.code);
    return out;
}

/// `text` as UTF-8, and where each character starts in it (and, last, its size).
inline std::string utf8_of(const std::vector<Char>& text, std::vector<std::size_t>* starts = nullptr) {
    std::string out;
    out.reserve(text.size());
    if (starts != nullptr) starts->clear();
    for (const Char& ch : text) {
        if (starts != nullptr) starts->push_back(out.size());
        append_utf8(out, ch.code);
    }
    if (starts != nullptr) starts->push_back(out.size());
    return out;
}

/// The ranges [first, last) of text's characters that `pattern` matches.
inline std::vector<std::pair<std::size_t, std::size_t>> match_characters(const std::vector<Char>& text,
                                                                          const Regex& pattern) {
    std::vector<std::size_t> starts;
    const std::string bytes = utf8_of(text, &starts);
    std::vector<std::pair<std::size_t, std::size_t>> out;
    std::size_t k = 0;
    const auto index = [&](std::size_t byte) {
        while (k < starts.size() && starts[k] < byte) ++k;
        return k;
    };
    for (const auto& [begin, end] : pattern.find_all(bytes)) {
        const std::size_t first = index(begin);
        out.emplace_back(first, index(end));
    }
    return out;
}

/// The Replace normalizer: each match of `pattern` replaced by `content`, whose characters
/// stand, as Hugging Face aligns them, for the last matched character's bytes (an empty match's:
/// the character before it, or none at the start).
inline std::vector<Char> replace(const std::vector<Char>& text, const Regex& pattern, const std::vector<char32_t>& content) {
    std::vector<Char> out;
    out.reserve(text.size());
    std::size_t at = 0;
    for (const auto& [first, last] : match_characters(text, pattern)) {
        out.insert(out.end(), text.begin() + static_cast<std::ptrdiff_t>(at), text.begin() + static_cast<std::ptrdiff_t>(first));
        std::size_t begin = 0;
        std::size_t end = 0;
        if (last > 0) {
            begin = text[last - 1].begin;
            end = text[last - 1].end;
        }
        for (const char32_t c : content) out.push_back({c, begin, end});
        at = last;
    }
    out.insert(out.end(), text.begin() + static_cast<std::ptrdiff_t>(at), text.end());
    return out;
}

/// The Prepend normalizer: `content` before a text that is not empty, standing for its first
/// character's bytes.
inline std::vector<Char> prepend(const std::vector<Char>& text, const std::vector<char32_t>& content) {
    if (text.empty()) return text;
    std::vector<Char> out;
    out.reserve(text.size() + content.size());
    for (const char32_t c : content) out.push_back({c, text.front().begin, text.front().end});
    out.insert(out.end(), text.begin(), text.end());
    return out;
}

/// The Strip normalizer: whitespace removed from the left, the right or both.
inline std::vector<Char> strip(const std::vector<Char>& text, bool left, bool right) {
    std::size_t first = 0;
    std::size_t last = text.size();
    if (left)
        while (first < last && is_whitespace(text[first].code)) ++first;
    if (right)
        while (last > first && is_whitespace(text[last - 1].code)) --last;
    return std::vector<Char>(text.begin() + static_cast<std::ptrdiff_t>(first), text.begin() + static_cast<std::ptrdiff_t>(last));
}

/// The StripAccents normalizer: without marks (Mn, Mc, Me).
inline std::vector<Char> strip_accents(const std::vector<Char>& text) {
    std::vector<Char> out;
    out.reserve(text.size());
    for (const Char& ch : text)
        if (!is_mark(ch.code)) out.push_back(ch);
    return out;
}

/// One normalizer of tokenizer.json (a Sequence is a list of them).
struct Normalizer {
    /// The kinds this version implements.
    enum class Kind { bert, unicode, lowercase, strip_accents, replace, prepend, strip, precompiled };
    Kind kind = Kind::bert;
    BertNormalizerOptions bert;
    UnicodeForm form = UnicodeForm::nfc;
    Regex pattern;                  // replace
    std::vector<char32_t> content;  // replace, prepend
    bool left = true;               // strip
    bool right = true;              // strip
    std::shared_ptr<const PrecompiledCharsmap> charsmap;  // precompiled

    /// `text` normalized.
    std::vector<Char> apply(const std::vector<Char>& text) const {
        switch (kind) {
        case Kind::bert: return bert_normalize(text, bert);
        case Kind::unicode: return unicode_normalize(text, form);
        case Kind::lowercase: return lowercase(text);
        case Kind::strip_accents: return strip_accents(text);
        case Kind::replace: return replace(text, pattern, content);
        case Kind::prepend: return prepend(text, content);
        case Kind::strip: return strip(text, left, right);
        case Kind::precompiled: return precompiled_normalize(text, *charsmap);
        }
        return text;
    }
};

/// `text` through each normalizer in turn.
inline std::vector<Char> normalize(std::vector<Char> text, const std::vector<Normalizer>& normalizers) {
    for (const Normalizer& normalizer : normalizers) text = normalizer.apply(text);
    return text;
}

}  // namespace seqembed::text::detail
