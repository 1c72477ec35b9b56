/// @file io/detail/utf8.hpp
/// @brief UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
#pragma once

#include <cstddef>
#include <cstdint>

namespace seqembed::io::detail {

/// The offset of the first byte that is not part of well-formed UTF-8, or size when all are.
inline std::size_t utf8_error_offset(const unsigned char* text, std::size_t size) noexcept {
    std::size_t i = 0;
    while (i < size) {
        const unsigned char lead = text[i];
        if (lead < 0x80) { ++i; continue; }
        std::size_t length;
        unsigned char low = 0x80, high = 0xBF;  // the allowed range of the second byte
        if (lead >= 0xC2 && lead <= 0xDF) length = 2;
        else if (lead >= 0xE0 && lead <= 0xEF) {
            length = 3;
            if (lead == 0xE0) low = 0xA0;        // overlong
            if (lead == 0xED) high = 0x9F;       // surrogates
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            length = 4;
            if (lead == 0xF0) low = 0x90;        // overlong
            if (lead == 0xF4) high = 0x8F;       // above U+10FFFF
        } else {
            return i;
        }
        if (size - i < length) return i;
        if (text[i + 1] < low || text[i + 1] > high) return i;
        for (std::size_t k = 2; k < length; ++k)
            if (text[i + k] < 0x80 || text[i + k] > 0xBF) return i;
        i += length;
    }
    return size;
}

}  // namespace seqembed::io::detail
