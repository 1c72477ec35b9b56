/// @file text/detail/regex.hpp
/// @brief Regular expressions over UTF-8 text through PCRE2 (Unicode properties, JIT when the
///        library has it), for the Split, ByteLevel and Whitespace pre-tokenizers and the Replace
///        normalizer and decoder. Matches are reported as byte ranges.
#pragma once

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <pcre2.h>

#include "../../detail/exceptions.hpp"
#include "../../error.hpp"

namespace seqembed::text::detail {

/// `pattern` with Oniguruma's Unicode classes (which Hugging Face's patterns run on, as measured
/// through tokenizers 0.23) spelled out for PCRE2, whose own differ: \s is U+0009-000D, U+0085
/// and the separators (Z), not PCRE2's list (which has U+180E); \w is Alphabetic, marks, decimal
/// digits and connector punctuation, and outside a character class also Latin-1's superscripts
/// and fractions (U+00B2, U+00B3, U+00B9, U+00BC-00BE), where PCRE2's has no marks and every
/// number. Inside a class \s and \w become their members; \S and \W there, and \b, stay PCRE2's.
/// Escapes, \Q...\E and POSIX classes are copied as they are.
inline std::string oniguruma_classes(const std::string& pattern) {
    static constexpr std::string_view space = "\\t-\\r\\x{85}\\p{Z}";
    static constexpr std::string_view word = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}";
    static constexpr std::string_view latin1_numbers = "\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}";
    std::string out;
    out.reserve(pattern.size() + 32);
    bool in_class = false;
    for (std::size_t k = 0; k < pattern.size(); ++k) {
        const char c = pattern[k];
        if (c == '\\' && k + 1 < pattern.size()) {
            const char next = pattern[++k];
            if (next == 'Q') {  // quoted to \E
                const std::size_t end = pattern.find("\\E", k + 1);
                const std::size_t stop = end == std::string::npos ? pattern.size() : end + 2;
                out.append(pattern, k - 1, stop - (k - 1));
                k = stop - 1;
            } else if ((next == 's' || next == 'w') && in_class) {
                out.append(next == 's' ? space : word);
            } else if ((next == 's' || next == 'S' || next == 'w' || next == 'W') && !in_class) {
                out += next == 'S' || next == 'W' ? "[^" : "[";
                out.append(next == 's' || next == 'S' ? space : word);
                if (next == 'w' || next == 'W') out.append(latin1_numbers);
                out += ']';
            } else {
                out += c;
                out += next;
            }
            continue;
        }
        if (!in_class && c == '[') {
            in_class = true;
            out += c;
            if (k + 1 < pattern.size() && pattern[k + 1] == '^') out += pattern[++k];
            if (k + 1 < pattern.size() && pattern[k + 1] == ']') out += pattern[++k];  // a literal ]
            continue;
        }
        if (in_class && c == '[' && k + 1 < pattern.size() && pattern[k + 1] == ':') {  // [:alpha:]
            const std::size_t end = pattern.find(":]", k + 2);
            if (end != std::string::npos) {
                out.append(pattern, k, end + 2 - k);
                k = end + 1;
                continue;
            }
        }
        if (in_class && c == ']') in_class = false;
        out += c;
    }
    return out;
}

/// A compiled pattern; copies share it (PCRE2's compiled code is read-only when matching).
class Regex {
public:
    Regex() = default;

    /// Compiles `pattern` as Hugging Face's Oniguruma reads it: PCRE2 syntax with Unicode
    /// properties, \s and \w as Oniguruma's (oniguruma_classes).
    /// @throws value_error naming the pattern and PCRE2's message when it does not compile.
    explicit Regex(const std::string& pattern) : m_pattern(pattern) {
        const std::string translated = oniguruma_classes(pattern);
        int code = 0;
        PCRE2_SIZE offset = 0;
        pcre2_code* compiled = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                                             PCRE2_UTF | PCRE2_UCP, &code, &offset, nullptr);
        if (compiled == nullptr) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(code, message, sizeof message);
            seqembed::detail::fail<value_error>("the regular expression \"", pattern, "\" does not compile at ", offset,
                                                ": ", reinterpret_cast<const char*>(message));
        }
        pcre2_jit_compile(compiled, PCRE2_JIT_COMPLETE);  // without JIT, matching interprets
        m_code = std::shared_ptr<pcre2_code>(compiled, pcre2_code_free);
    }

    /// A pattern that matches `literal` itself.
    static Regex literal(const std::string& literal) {
        std::string pattern;
        for (const char c : literal) {
            const auto byte = static_cast<unsigned char>(c);
            const bool plain = byte >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
            if (!plain) pattern += '\\';
            pattern += c;
        }
        return Regex(pattern);
    }

    /// The pattern's text.
    const std::string& pattern() const noexcept { return m_pattern; }

    /// The byte ranges [begin, end) of the matches in `text`, leftmost first, each search
    /// starting where the last match ended (one character further after an empty match), as
    /// Hugging Face's find_matches iterates them (Oniguruma's find_iter): an empty match where
    /// the match before it ended is skipped, and an empty text has no match. `text` must be
    /// valid UTF-8.
    std::vector<std::pair<std::size_t, std::size_t>> find_all(std::string_view text) const {
        std::vector<std::pair<std::size_t, std::size_t>> matches;
        if (text.empty()) return matches;
        const std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> data(
            pcre2_match_data_create_from_pattern(m_code.get(), nullptr), pcre2_match_data_free);
        if (!data) seqembed::detail::fail<value_error>("out of memory matching \"", m_pattern, "\"");
        const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
        for (std::size_t at = 0; at <= text.size();) {
            const int found = pcre2_match(m_code.get(), subject, text.size(), at, PCRE2_NO_UTF_CHECK, data.get(), nullptr);
            if (found == PCRE2_ERROR_NOMATCH) break;
            if (found < 0) {
                PCRE2_UCHAR message[256];
                pcre2_get_error_message(found, message, sizeof message);
                seqembed::detail::fail<value_error>("matching \"", m_pattern, "\" failed: ",
                                                    reinterpret_cast<const char*>(message));
            }
            const PCRE2_SIZE* range = pcre2_get_ovector_pointer(data.get());
            const bool after_last = !matches.empty() && matches.back().second == range[0];
            if (range[1] > range[0] || !after_last) matches.emplace_back(range[0], range[1]);
            if (range[1] > range[0]) {
                at = range[1];
                continue;
            }
            if (range[1] >= text.size()) break;
            at = range[1] + 1;  // past an empty match, to the next character
            while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
        }
        return matches;
    }

    /// Whether a pattern was compiled.
    explicit operator bool() const noexcept { return m_code != nullptr; }

private:
    std::string m_pattern;
    std::shared_ptr<pcre2_code> m_code;
};

}  // namespace seqembed::text::detail
