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

/// A compiled pattern; copies share it (PCRE2's compiled code is read-only when matching).
class Regex {
public:
    Regex() = default;

    /// Compiles `pattern` (PCRE2 syntax with Unicode properties: \p{L}, \s and \w in Unicode).
    /// @throws value_error naming the pattern and PCRE2's message when it does not compile.
    explicit Regex(const std::string& pattern) : m_pattern(pattern) {
        int code = 0;
        PCRE2_SIZE offset = 0;
        pcre2_code* compiled = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
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
