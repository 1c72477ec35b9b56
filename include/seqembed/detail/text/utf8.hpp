/// @file detail/text/utf8.hpp
/// @brief UTF-8 decoded one sequence at a time, and where a byte string stops being well-formed
///        (the Unicode standard's table 3-7: no overlong forms, no surrogates, nothing above
///        U+10FFFF). Vocabulary checks its tokens with it, seqembed::io the safetensors headers it
///        reads and the metadata it writes, and seqembed::text decodes its texts.
#pragma once

#include <cstddef>
#include <string_view>

namespace seqembed::detail {

/// The length of the well-formed UTF-8 sequence at text[at], its code point in `code`; or, for
/// an ill-formed one, minus the length of its maximal ill-formed prefix (at least one byte: the
/// Unicode standard's "maximal subpart", which one U+FFFD replaces, as Rust's from_utf8_lossy
/// and WHATWG's decoder do).
inline long utf8_sequence(std::string_view text, std::size_t at, char32_t& code) noexcept {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(at);
    if (lead < 0x80) {
        code = lead;
        return 1;
    }
    // The length of the sequence and the range of its second byte, which alone rules out
    // overlong forms (E0, F0), surrogates (ED) and code points past U+10FFFF (F4).
    std::size_t length = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
        code = lead & 0x1Fu;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        code = lead & 0x0Fu;
        if (lead == 0xE0) low = 0xA0;
        if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        code = lead & 0x07u;
        if (lead == 0xF0) low = 0x90;
        if (lead == 0xF4) high = 0x8F;
    } else {
        return -1;  // a continuation byte, C0, C1 or F5..FF
    }
    for (std::size_t k = 1; k < length; ++k) {
        if (at + k >= text.size()) return -static_cast<long>(k);
        const unsigned char next = byte(at + k);
        if (next < (k == 1 ? low : 0x80) || next > (k == 1 ? high : 0xBF)) return -static_cast<long>(k);
        code = (code << 6) | (next & 0x3Fu);
    }
    return static_cast<long>(length);
}

/// The offset of the first byte of text that does not start a well-formed UTF-8 sequence, or
/// text.size() when the whole text is well-formed.
inline std::size_t first_invalid_utf8(std::string_view text) noexcept {
    char32_t code = 0;
    for (std::size_t at = 0; at < text.size();) {
        const long length = utf8_sequence(text, at, code);
        if (length < 0) return at;
        at += static_cast<std::size_t>(length);
    }
    return text.size();
}

}  // namespace seqembed::detail
