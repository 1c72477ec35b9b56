/// @file detail/text/utf8.hpp
/// @brief Where a byte string stops being well-formed UTF-8 (the Unicode standard's table 3-7:
///        no overlong forms, no surrogates, nothing above U+10FFFF). Vocabulary checks its
///        tokens with it, seqembed::io the safetensors headers it reads and the metadata it writes.
#pragma once

#include <cstddef>
#include <string_view>

namespace seqembed::detail {

/// The offset of the first byte of text that does not start a well-formed UTF-8 sequence, or
/// text.size() when the whole text is well-formed.
inline std::size_t first_invalid_utf8(std::string_view text) noexcept {
    const auto byte = [&text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    std::size_t i = 0;
    while (i < text.size()) {
        const unsigned char lead = byte(i);
        if (lead < 0x80) {
            ++i;
            continue;
        }
        // The length of the sequence and the range of its second byte, which alone rules out
        // overlong forms (E0, F0), surrogates (ED) and code points past U+10FFFF (F4).
        std::size_t length = 0;
        unsigned char second_min = 0x80;
        unsigned char second_max = 0xBF;
        if (lead >= 0xC2 && lead <= 0xDF) {
            length = 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            length = 3;
            if (lead == 0xE0) second_min = 0xA0;
            if (lead == 0xED) second_max = 0x9F;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            length = 4;
            if (lead == 0xF0) second_min = 0x90;
            if (lead == 0xF4) second_max = 0x8F;
        } else {
            return i;  // a continuation byte, C0, C1 or F5..FF
        }
        if (text.size() - i < length || byte(i + 1) < second_min || byte(i + 1) > second_max) return i;
        for (std::size_t k = 2; k < length; ++k)
            if ((byte(i + k) & 0xC0) != 0x80) return i;
        i += length;
    }
    return text.size();
}

}  // namespace seqembed::detail
