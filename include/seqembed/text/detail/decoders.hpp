/// @file text/detail/decoders.hpp
/// @brief Decoders, as Hugging Face tokenizers' decoders: tokens back to text. WordPiece,
///        ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, BPEDecoder, and Sequence.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../detail/text/utf8.hpp"
#include "byte_level.hpp"
#include "normalizers.hpp"
#include "pre_tokenizers.hpp"
#include "regex.hpp"
#include "unicode.hpp"

namespace seqembed::text::detail {

/// Hugging Face's cleanup of decoded text: no space before . ? ! , and the English contractions
/// joined.
inline std::string cleanup_decoded(std::string text) {
    static const std::pair<std::string_view, std::string_view> rules[] = {
        {" .", "."},   {" ?", "?"},     {" !", "!"},           {" ,", ","},     {" ' ", "'"},     {" n't", "n't"},
        {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
    for (const auto& [from, to] : rules) {
        std::string result;
        std::size_t at = 0;
        for (std::size_t found; (found = text.find(from, at)) != std::string::npos; at = found + from.size()) {
            result.append(text, at, found - at);
            result.append(to);
        }
        result.append(text, at, std::string::npos);
        text = std::move(result);
    }
    return text;
}

/// `bytes` as UTF-8, each maximal ill-formed subsequence replaced by U+FFFD (Rust's
/// String::from_utf8_lossy).
inline std::string utf8_lossy(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    for (std::size_t at = 0; at < bytes.size();) {
        char32_t code = 0;
        const long length = seqembed::detail::utf8_sequence(bytes, at, code);
        if (length < 0) {
            out += "\xEF\xBF\xBD";
            at += static_cast<std::size_t>(-length);
            continue;
        }
        out.append(bytes.substr(at, static_cast<std::size_t>(length)));
        at += static_cast<std::size_t>(length);
    }
    return out;
}

/// One decoder of tokenizer.json (a Sequence is a list of them); each turns the tokens into
/// other tokens, which decode() joins.
struct Decoder {
    /// The kinds this version implements.
    enum class Kind { wordpiece, byte_level, metaspace, replace, byte_fallback, fuse, strip, bpe };
    Kind kind = Kind::wordpiece;
    std::string prefix = "##";  // wordpiece
    bool cleanup = true;        // wordpiece
    char32_t replacement = 0x2581;                          // metaspace
    PrependScheme prepend_scheme = PrependScheme::always;  // metaspace
    Regex pattern;        // replace
    std::string content;  // replace
    char32_t strip_content = ' ';  // strip
    std::size_t start = 0;         // strip
    std::size_t stop = 0;          // strip
    std::string suffix = "</w>";   // bpe

    /// The tokens `tokens` become.
    void apply(std::vector<std::string>& tokens) const {
        switch (kind) {
        case Kind::wordpiece:
            for (std::size_t i = 0; i < tokens.size(); ++i) {
                std::string& token = tokens[i];
                if (i != 0) {
                    if (token.compare(0, prefix.size(), prefix) == 0)
                        token.erase(0, prefix.size());
                    else
                        token.insert(0, " ");
                }
                if (cleanup) token = cleanup_decoded(std::move(token));
            }
            return;
        case Kind::byte_level: {
            std::string bytes;
            for (const std::string& token : tokens) {
                const std::size_t mark = bytes.size();
                bool mapped = true;
                for (const Char& ch : decode_utf8(token, true)) {
                    const int byte = byte_of_character(ch.code);
                    if (byte < 0) {
                        mapped = false;
                        break;
                    }
                    bytes.push_back(static_cast<char>(byte));
                }
                if (!mapped) {
                    bytes.resize(mark);
                    bytes += token;
                }
            }
            tokens.assign(1, utf8_lossy(bytes));
            return;
        }
        case Kind::metaspace:
            for (std::size_t i = 0; i < tokens.size(); ++i) {
                std::string text;
                for (const Char& ch : decode_utf8(tokens[i], true)) {
                    if (ch.code != replacement)
                        append_utf8(text, ch.code);
                    else if (i != 0 || prepend_scheme == PrependScheme::never)
                        text += ' ';
                }
                tokens[i] = std::move(text);
            }
            return;
        case Kind::replace:
            for (std::string& token : tokens) {
                std::string text;
                std::size_t at = 0;
                for (const auto& [begin, end] : pattern.find_all(token)) {
                    text.append(token, at, begin - at);
                    text += content;
                    at = end;
                }
                text.append(token, at, std::string::npos);
                token = std::move(text);
            }
            return;
        case Kind::byte_fallback: return byte_fallback(tokens);
        case Kind::fuse: {
            std::string text;
            for (const std::string& token : tokens) text += token;
            tokens.assign(1, std::move(text));
            return;
        }
        case Kind::strip:
            for (std::string& token : tokens) {
                const std::vector<Char> chars = decode_utf8(token, true);
                std::size_t first = 0;
                while (first < start && first < chars.size() && chars[first].code == strip_content) ++first;
                std::size_t last = chars.size();
                for (std::size_t k = 0; k < stop && last > first && chars[last - 1].code == strip_content; ++k) --last;
                std::string text;
                for (std::size_t k = first; k < last; ++k) append_utf8(text, chars[k].code);
                token = std::move(text);
            }
            return;
        case Kind::bpe:
            for (std::size_t i = 0; i < tokens.size(); ++i) {
                const std::string with = i + 1 == tokens.size() ? "" : " ";
                std::string text;
                std::size_t at = 0;
                for (std::size_t found; !suffix.empty() && (found = tokens[i].find(suffix, at)) != std::string::npos;
                     at = found + suffix.size()) {
                    text.append(tokens[i], at, found - at);
                    text += with;
                }
                text.append(tokens[i], at, std::string::npos);
                tokens[i] = std::move(text);
            }
            return;
        }
    }

private:
    /// ByteFallback: each run of <0xXX> tokens as the text of its bytes, or one U+FFFD per byte
    /// when they are not valid UTF-8.
    static void byte_fallback(std::vector<std::string>& tokens) {
        std::vector<std::string> out;
        std::string bytes;
        std::size_t count = 0;
        const auto flush = [&] {
            if (count == 0) return;
            if (seqembed::detail::first_invalid_utf8(bytes) == bytes.size()) {
                out.push_back(bytes);
            } else {
                for (std::size_t k = 0; k < count; ++k) out.emplace_back("\xEF\xBF\xBD");
            }
            bytes.clear();
            count = 0;
        };
        const auto hex = [](char c) {
            if (c >= '0' && c <= '9') return c - '0';
            if (c >= 'A' && c <= 'F') return c - 'A' + 10;
            if (c >= 'a' && c <= 'f') return c - 'a' + 10;
            return -1;
        };
        for (std::string& token : tokens) {
            if (token.size() == 6 && token.compare(0, 3, "<0x") == 0 && token[5] == '>' && hex(token[3]) >= 0 &&
                hex(token[4]) >= 0) {
                bytes.push_back(static_cast<char>(hex(token[3]) * 16 + hex(token[4])));
                ++count;
                continue;
            }
            flush();
            out.push_back(std::move(token));
        }
        flush();
        tokens = std::move(out);
    }
};

/// The text of `tokens` through `decoders` (joined), or, with none, the tokens joined by spaces.
inline std::string decode_tokens(std::vector<std::string> tokens, const std::vector<Decoder>& decoders) {
    std::string text;
    if (decoders.empty()) {
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            if (i > 0) text += ' ';
            text += tokens[i];
        }
        return text;
    }
    for (const Decoder& decoder : decoders) decoder.apply(tokens);
    for (const std::string& token : tokens) text += token;
    return text;
}

}  // namespace seqembed::text::detail
