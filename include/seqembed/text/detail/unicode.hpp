/// @file text/detail/unicode.hpp
/// @brief The Unicode facts the tokenizers need, from utf8proc: UTF-8 decoded into code points
///        that remember their bytes in the input, general categories, lowercase and canonical
///        decomposition.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <utf8proc.h>

#include "../../detail/exceptions.hpp"
#include "../../detail/text/utf8.hpp"
#include "../../error.hpp"

namespace seqembed::text::detail {

/// A code point of a text and the bytes [begin, end) of the input it stands for.
struct Char {
    char32_t code;
    std::size_t begin;
    std::size_t end;
};

/// U+FFFD, which replaces invalid UTF-8.
inline constexpr char32_t replacement_character = 0xFFFD;

/// The code points of `text`. Invalid UTF-8 is an error naming its byte offset, or with
/// `replace`, each maximal ill-formed subsequence becomes one U+FFFD standing for its bytes.
/// @throws value_error for invalid UTF-8 without `replace`.
inline std::vector<Char> decode_utf8(std::string_view text, bool replace) {
    std::vector<Char> chars;
    chars.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        char32_t code = 0;
        const long length = seqembed::detail::utf8_sequence(text, at, code);
        if (length < 0) {
            if (!replace)
                seqembed::detail::fail<value_error>("text is not valid UTF-8 at byte ", at,
                                                    " (EncodeOptions::invalid_utf8 = replace turns it into U+FFFD)");
            chars.push_back({replacement_character, at, at + static_cast<std::size_t>(-length)});
            at += static_cast<std::size_t>(-length);
            continue;
        }
        chars.push_back({code, at, at + static_cast<std::size_t>(length)});
        at += static_cast<std::size_t>(length);
    }
    return chars;
}

/// Appends code point c to out in UTF-8.
inline void append_utf8(std::string& out, char32_t c) {
    utf8proc_uint8_t bytes[4];
    const utf8proc_ssize_t n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), bytes);
    out.append(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(n));
}

/// The general category of c.
inline utf8proc_category_t category(char32_t c) noexcept {
    return utf8proc_category(static_cast<utf8proc_int32_t>(c));
}

/// Rust's char::is_whitespace (the White_Space property): tab to carriage return, U+0085, and
/// the separators (Zs, Zl, Zp).
inline bool is_whitespace(char32_t c) noexcept {
    if ((c >= 0x09 && c <= 0x0D) || c == 0x85) return true;
    const utf8proc_category_t k = category(c);
    return k == UTF8PROC_CATEGORY_ZS || k == UTF8PROC_CATEGORY_ZL || k == UTF8PROC_CATEGORY_ZP;
}

/// A control, format or private-use character (Cc, Cf, Co): the unicode_categories crate's
/// is_other, which Hugging Face's BertNormalizer uses (unassigned code points are not "other"
/// there, and stay).
inline bool is_other(char32_t c) noexcept {
    const utf8proc_category_t k = category(c);
    return k == UTF8PROC_CATEGORY_CC || k == UTF8PROC_CATEGORY_CF || k == UTF8PROC_CATEGORY_CO;
}

/// A word character of the regular expression \w, as Hugging Face's single_word added tokens
/// test their neighbours: alphabetic (letters, letter numbers, the circled and squared letters),
/// marks, decimal digits, connector punctuation and the joiners U+200C, U+200D.
inline bool is_word_character(char32_t c) noexcept {
    const utf8proc_category_t k = category(c);
    return (k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_ND) || k == UTF8PROC_CATEGORY_NL ||
           k == UTF8PROC_CATEGORY_PC || c == 0x200C || c == 0x200D || (c >= 0x24B6 && c <= 0x24E9) ||
           (c >= 0x1F130 && c <= 0x1F149) || (c >= 0x1F150 && c <= 0x1F169) || (c >= 0x1F170 && c <= 0x1F189);
}

/// A punctuation category (Pc, Pd, Ps, Pe, Pi, Pf, Po).
inline bool is_punctuation(char32_t c) noexcept {
    const utf8proc_category_t k = category(c);
    return k >= UTF8PROC_CATEGORY_PC && k <= UTF8PROC_CATEGORY_PO;
}

/// A nonspacing mark (Mn).
inline bool is_nonspacing_mark(char32_t c) noexcept { return category(c) == UTF8PROC_CATEGORY_MN; }

/// A mark of any kind (Mn, Mc, Me): what the StripAccents normalizer removes.
inline bool is_mark(char32_t c) noexcept {
    const utf8proc_category_t k = category(c);
    return k == UTF8PROC_CATEGORY_MN || k == UTF8PROC_CATEGORY_MC || k == UTF8PROC_CATEGORY_ME;
}

/// A numeric character (Nd, Nl, No): Rust's char::is_numeric, which the Digits pre-tokenizer
/// splits at.
inline bool is_numeric(char32_t c) noexcept {
    const utf8proc_category_t k = category(c);
    return k == UTF8PROC_CATEGORY_ND || k == UTF8PROC_CATEGORY_NL || k == UTF8PROC_CATEGORY_NO;
}

/// The canonical combining class of c (0 for starters).
inline int combining_class(char32_t c) noexcept {
    return utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class;
}

/// Appends Rust's char::to_lowercase(c) to out: the simple lowercase mapping, except U+0130
/// (the only character whose unconditional lowercase is two code points: i and U+0307).
inline void append_lowercase(std::vector<char32_t>& out, char32_t c) {
    if (c == 0x130) {
        out.push_back(0x69);
        out.push_back(0x307);
        return;
    }
    out.push_back(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
}

/// Appends the canonical decomposition of c (NFD, one character at a time) to out.
inline void append_decomposition(std::vector<char32_t>& out, char32_t c) {
    utf8proc_int32_t parts[8];
    int boundary = 0;
    const utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), parts, 8,
                                                       UTF8PROC_DECOMPOSE, &boundary);
    if (n <= 0 || n > 8) {
        out.push_back(c);
        return;
    }
    for (utf8proc_ssize_t k = 0; k < n; ++k) out.push_back(static_cast<char32_t>(parts[k]));
}

}  // namespace seqembed::text::detail
