/// @file text/detail/regex.hpp
/// @brief Regular expressions over UTF-8 text through PCRE2 (Unicode properties, JIT when the
///        library has it), for the Split, ByteLevel and Whitespace pre-tokenizers and the Replace
///        normalizer and decoder. Matches are reported as byte ranges.
#pragma once

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif

#include <cctype>
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

/// Alphabetic (letters, letter numbers, Other_Alphabetic: the marks and the circled and squared
/// Latin letters), marks, decimal digits and connector punctuation: Oniguruma's \w inside a
/// class and Rust regex's \w but for the joiners, without PCRE2 10.40's \p{Alphabetic}.
inline constexpr std::string_view word_members =
    "\\p{L}\\p{Nl}\\p{M}\\x{24B6}-\\x{24E9}\\x{1F130}-\\x{1F149}\\x{1F150}-\\x{1F169}\\x{1F170}-\\x{1F189}"
    "\\p{Nd}\\p{Pc}";

/// White_Space: Oniguruma's and Rust regex's \s.
inline constexpr std::string_view space_members = "\\t-\\r\\x{85}\\p{Z}";

/// `pattern` with Oniguruma's classes (which Hugging Face's patterns run on, as measured through
/// tokenizers 0.23) spelled out for PCRE2, whose own differ: \s is White_Space, not PCRE2's list
/// (which has U+180E); \w is word_members, and outside a character class also Latin-1's
/// superscripts and fractions (U+00B2, U+00B3, U+00B9, U+00BC-00BE), where PCRE2's has no marks
/// and every number; \h is a hex digit (PCRE2's is horizontal space). Inside a class \s, \w and
/// \h become their members; \S, \W and \H there, and \b, stay PCRE2's. Escapes (\Q...\E, \cX),
/// comments (?#...) and POSIX classes are copied as they are.
/// @throws value_error for extended mode ((?x)), whose comments and spaces this does not read.
inline std::string oniguruma_classes(const std::string& pattern) {
    static constexpr std::string_view latin1_numbers = "\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}";
    static constexpr std::string_view hex = "0-9a-fA-F";
    std::string out;
    out.reserve(pattern.size() + 64);
    bool in_class = false;
    for (std::size_t k = 0; k < pattern.size(); ++k) {
        const char c = pattern[k];
        if (c == '\\' && k + 1 < pattern.size()) {
            const char next = pattern[++k];
            const bool negated = next == 'S' || next == 'W' || next == 'H';
            const char lower = negated ? static_cast<char>(next + ('a' - 'A')) : next;
            const bool rewritten = lower == 's' || lower == 'w' || lower == 'h';
            if (next == 'Q') {  // quoted to \E
                const std::size_t end = pattern.find("\\E", k + 1);
                const std::size_t stop = end == std::string::npos ? pattern.size() : end + 2;
                out.append(pattern, k - 1, stop - (k - 1));
                k = stop - 1;
            } else if (next == 'c' && k + 1 < pattern.size()) {  // a control character: \c and one more
                out.append(pattern, k - 1, 3);
                ++k;
            } else if (rewritten && !(in_class && negated)) {
                const std::string_view members = lower == 's' ? space_members : lower == 'w' ? word_members : hex;
                if (!in_class) out += negated ? "[^" : "[";
                out.append(members);
                if (!in_class && lower == 'w') out.append(latin1_numbers);
                if (!in_class) out += ']';
            } else {
                out += c;
                out += next;
            }
            continue;
        }
        if (!in_class && c == '(' && pattern.compare(k, 3, "(?#") == 0) {  // a comment, to its ')'
            const std::size_t end = pattern.find(')', k);
            const std::size_t stop = end == std::string::npos ? pattern.size() : end + 1;
            out.append(pattern, k, stop - k);
            k = stop - 1;
            continue;
        }
        if (!in_class && c == '(' && k + 1 < pattern.size() && pattern[k + 1] == '?') {
            std::size_t at = k + 2;  // inline flags: (?imx-imx) or (?imx-imx:...); x after '-' turns it off
            while (at < pattern.size() && std::isalpha(static_cast<unsigned char>(pattern[at]))) {
                if (pattern[at] == 'x')
                    seqembed::detail::fail<value_error>("the regular expression \"", pattern,
                                                        "\" uses extended mode (?x), which is not supported");
                ++at;
            }
        }
        if (!in_class && c == '[') {
            in_class = true;
            out += c;
            if (k + 1 < pattern.size() && pattern[k + 1] == '^') out += pattern[++k];
            if (k + 1 < pattern.size() && pattern[k + 1] == ']') out += pattern[++k];  // a literal ]
            continue;
        }
        if (in_class && c == '[' && k + 1 < pattern.size() && pattern[k + 1] == ':') {  // [:alpha:]
            const std::size_t close = pattern.find(']', k + 2);
            if (close != std::string::npos && pattern[close - 1] == ':') {
                out.append(pattern, k, close + 1 - k);
                k = close;
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
