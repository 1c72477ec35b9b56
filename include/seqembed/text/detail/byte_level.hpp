/// @file text/detail/byte_level.hpp
/// @brief GPT-2's byte-level alphabet: each of the 256 bytes as a printable character (the
///        printable bytes as themselves, the others from U+0100 on), and back.
#pragma once

#include <array>
#include <cstdint>

namespace seqembed::text::detail {

/// The character of each byte in GPT-2's alphabet.
inline const std::array<char32_t, 256>& byte_characters() {
    static const std::array<char32_t, 256> table = [] {
        std::array<char32_t, 256> out{};
        char32_t next = 0x100;
        for (unsigned b = 0; b < 256; ++b) {
            const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
            out[b] = printable ? static_cast<char32_t>(b) : next++;
        }
        return out;
    }();
    return table;
}

/// The byte a character of GPT-2's alphabet stands for, or -1 for a character outside it.
inline int byte_of_character(char32_t c) {
    static const std::array<std::int16_t, 0x144> table = [] {
        std::array<std::int16_t, 0x144> out{};
        out.fill(-1);
        for (unsigned b = 0; b < 256; ++b) out[byte_characters()[b]] = static_cast<std::int16_t>(b);
        return out;
    }();
    return c < table.size() ? table[c] : -1;
}

}  // namespace seqembed::text::detail
