/// @file text/detail/precompiled.hpp
/// @brief SentencePiece's precompiled normalization (tokenizer.json's "Precompiled" normalizer,
///        which T5, XLM-RoBERTa, ALBERT and other converted SentencePiece models carry): a
///        double-array trie (Darts-clone's layout) over UTF-8 byte strings whose values point
///        at their replacements, applied as Hugging Face applies it, grapheme by grapheme.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <utf8proc.h>

#include "../../detail/exceptions.hpp"
#include "../../error.hpp"
#include "unicode.hpp"

namespace seqembed::text::detail {

/// The bytes of base64 text (RFC 4648, with or without padding).
/// @throws value_error naming the first character that is not base64.
inline std::string base64_decode(std::string_view text) {
    const auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    std::string out;
    out.reserve(text.size() / 4 * 3);
    unsigned bits = 0;
    int count = 0;
    for (std::size_t k = 0; k < text.size(); ++k) {
        if (text[k] == '=') break;
        const int v = value(text[k]);
        if (v < 0) seqembed::detail::fail<value_error>("not base64 at character ", k);
        bits = (bits << 6) | static_cast<unsigned>(v);
        count += 6;
        if (count >= 8) {
            count -= 8;
            out.push_back(static_cast<char>((bits >> count) & 0xFFu));
        }
    }
    return out;
}

/// A precompiled charsmap: [u32 little-endian size of the trie in bytes][the trie's u32 units]
/// [the replacements, each ended by NUL].
class PrecompiledCharsmap {
public:
    PrecompiledCharsmap() = default;

    /// Reads a charsmap's bytes.
    /// @throws value_error when the sizes do not fit.
    explicit PrecompiledCharsmap(std::string_view blob) {
        if (blob.size() < 4) seqembed::detail::fail<value_error>("the precompiled charsmap has ", blob.size(), " bytes, too few for its header");
        const std::uint32_t trie_bytes = read_u32(blob, 0);
        if (trie_bytes % 4 != 0 || trie_bytes == 0 || blob.size() - 4 < trie_bytes)
            seqembed::detail::fail<value_error>("the precompiled charsmap's trie of ", trie_bytes,
                                                " bytes does not fit its ", blob.size(), " bytes");
        m_units.resize(trie_bytes / 4);
        for (std::size_t k = 0; k < m_units.size(); ++k) m_units[k] = read_u32(blob, 4 + 4 * k);
        m_replacements.assign(blob.substr(4 + trie_bytes));
    }

    /// The replacement of the shortest prefix of `chunk` the trie holds (Hugging Face takes the
    /// first match of its common-prefix search), or none.
    /// @throws value_error when the trie points outside itself.
    std::optional<std::string_view> transform(std::string_view chunk) const {
        std::size_t node = 0;
        std::uint32_t unit = at(node);
        node ^= offset(unit);
        for (const char byte : chunk) {
            const auto c = static_cast<unsigned char>(byte);
            if (c == 0) break;
            node ^= c;
            unit = at(node);
            if ((unit & ((1u << 31) | 0xFFu)) != c) return std::nullopt;
            node ^= offset(unit);
            if ((unit >> 8) & 1u) {
                const std::size_t begin = at(node) & ((1u << 31) - 1);
                if (begin >= m_replacements.size())
                    seqembed::detail::fail<value_error>("the precompiled charsmap points past its replacements");
                const std::size_t end = m_replacements.find('\0', begin);
                return std::string_view(m_replacements).substr(begin, (end == std::string::npos ? m_replacements.size() : end) - begin);
            }
        }
        return std::nullopt;
    }

private:
    std::vector<std::uint32_t> m_units;
    std::string m_replacements;

    static std::uint32_t read_u32(std::string_view bytes, std::size_t at) {
        std::uint32_t value = 0;
        for (int k = 3; k >= 0; --k) value = (value << 8) | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(k)]);
        return value;
    }
    static std::size_t offset(std::uint32_t unit) noexcept { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }
    std::uint32_t at(std::size_t node) const {
        if (node >= m_units.size()) seqembed::detail::fail<value_error>("the precompiled charsmap's trie points outside itself");
        return m_units[node];
    }
};

/// The Precompiled normalizer over `text`: each extended grapheme cluster shorter than 6 bytes
/// that the charsmap replaces is replaced whole; otherwise each of its characters the charsmap
/// replaces is. A replacement's characters stand for the replaced ones in order (the extra ones
/// for the last), as Hugging Face aligns them.
inline std::vector<Char> precompiled_normalize(const std::vector<Char>& text, const PrecompiledCharsmap& charsmap) {
    std::vector<Char> out;
    out.reserve(text.size());
    const auto put = [&](std::size_t first, std::size_t last, std::string_view replacement) {
        std::size_t k = 0;
        for (const Char& ch : decode_utf8(replacement, true)) {
            const Char& source = text[first + std::min(k, last - first - 1)];
            out.push_back({ch.code, source.begin, source.end});
            ++k;
        }
    };
    std::string bytes;
    utf8proc_int32_t state = 0;
    for (std::size_t first = 0; first < text.size();) {
        std::size_t last = first + 1;
        state = 0;
        while (last < text.size() &&
               !utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(text[last - 1].code),
                                                 static_cast<utf8proc_int32_t>(text[last].code), &state))
            ++last;
        bytes.clear();
        for (std::size_t k = first; k < last; ++k) append_utf8(bytes, text[k].code);
        if (bytes.size() < 6) {
            if (const std::optional<std::string_view> replacement = charsmap.transform(bytes)) {
                put(first, last, *replacement);
                first = last;
                continue;
            }
        }
        for (std::size_t k = first; k < last; ++k) {
            bytes.clear();
            append_utf8(bytes, text[k].code);
            if (const std::optional<std::string_view> replacement = charsmap.transform(bytes))
                put(k, k + 1, *replacement);
            else
                out.push_back(text[k]);
        }
        first = last;
    }
    return out;
}

}  // namespace seqembed::text::detail
