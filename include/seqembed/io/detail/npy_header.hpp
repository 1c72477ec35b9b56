/// @file io/detail/npy_header.hpp
/// @brief The strict reader of a .npy header: the preamble (magic, version, header length) and
///        the Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)}, parsed by
///        a small hand-written recursive-descent parser that accepts exactly that grammar.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "../../error.hpp"
#include "../dtype.hpp"
#include "../errors.hpp"
#include "../mapped_file.hpp"
#include "read_tensor.hpp"

namespace seqembed::io::detail {

/// A parsed and checked .npy header.
struct NpyHeader {
    int major = 1;
    int minor = 0;
    std::string descr;
    Dtype dtype = Dtype::f32;
    bool big_endian = false;
    bool fortran_order = false;
    std::vector<std::int64_t> shape;
    std::uint64_t data_offset = 0;
    std::uint64_t data_bytes = 0;
    std::uint64_t trailing_bytes = 0;  // after the array (e.g. another np.save), ignored
};

/// The dict parser: one pass over the header text, throwing format_error at the first
/// character outside the grammar
///   dict  := '{' [entry (',' entry)* [',']] '}'     entry := string ':' value
///   value := string | 'True' | 'False' | tuple      tuple := '(' [int (',' int)* [',']] ')'
///   string := '...' | "..." (no escapes)            int := digits ['L']
/// with blanks between tokens, and blanks only after the dict.
class NpyDictParser {
public:
    NpyDictParser(const char* text, std::size_t size, const std::string& file)
        : m_text(text), m_size(size), m_file(file) {}

    void parse(NpyHeader& header) {
        bool seen_descr = false, seen_order = false, seen_shape = false;
        skip_blanks();
        expect('{', "the header does not start with '{' (a Python dict)");
        skip_blanks();
        while (peek() != '}') {
            if (at_end()) fail("the dict is not closed (unbalanced braces)");
            const std::string key = parse_string("a key");
            skip_blanks();
            expect(':', "expected ':' after the key '" + key + "'");
            skip_blanks();
            if (key == "descr") {
                if (seen_descr) fail("the key 'descr' appears twice");
                seen_descr = true;
                if (peek() == '[')
                    fail("descr is a list: structured dtypes are not supported (seqembed reads "
                         "<f2, <f4, <f8, the integers and bool, and their > forms)");
                header.descr = parse_string("descr");
            } else if (key == "fortran_order") {
                if (seen_order) fail("the key 'fortran_order' appears twice");
                seen_order = true;
                header.fortran_order = parse_bool();
            } else if (key == "shape") {
                if (seen_shape) fail("the key 'shape' appears twice");
                seen_shape = true;
                header.shape = parse_shape();
            } else {
                fail("unknown key '" + key + "' (a .npy header has descr, fortran_order and shape)");
            }
            skip_blanks();
            if (peek() == ',') {
                ++m_at;
                skip_blanks();
            } else if (peek() != '}') {
                fail(at_end() ? "the dict is not closed (unbalanced braces)"
                              : "expected ',' or '}' after the value of '" + key + "'");
            }
        }
        ++m_at;
        skip_blanks();
        if (!at_end()) fail("text after the dict, at byte " + std::to_string(m_at));
        if (!seen_descr) fail("the key 'descr' is missing");
        if (!seen_order) fail("the key 'fortran_order' is missing");
        if (!seen_shape) fail("the key 'shape' is missing");
    }

private:
    [[noreturn]] void fail(const std::string& problem) const {
        seqembed::detail::fail<format_error>(m_file, ": header dict: ", problem);
    }
    bool at_end() const noexcept { return m_at >= m_size; }
    char peek() const noexcept { return at_end() ? '\0' : m_text[m_at]; }
    void skip_blanks() noexcept {
        while (!at_end() && (m_text[m_at] == ' ' || m_text[m_at] == '\t' || m_text[m_at] == '\n' ||
                             m_text[m_at] == '\r'))
            ++m_at;
    }
    void expect(char c, const std::string& problem) {
        if (peek() != c || at_end()) fail(problem);
        ++m_at;
    }
    static std::string describe(char c) {
        if (c >= 0x21 && c <= 0x7E) return std::string("'") + c + "'";
        return "byte " + std::to_string(static_cast<unsigned char>(c));
    }
    std::string parse_string(const char* what) {
        const char quote = peek();
        if (at_end() || (quote != '\'' && quote != '"'))
            fail(std::string(what) + " is not a quoted string" +
                 (at_end() ? " (the header ends)" : " (found " + describe(quote) + ")"));
        ++m_at;
        std::string value;
        while (!at_end() && m_text[m_at] != quote) {
            if (m_text[m_at] == '\\') fail(std::string(what) + " has an escape sequence, which is not supported");
            if (m_text[m_at] == '\n') break;
            value += m_text[m_at++];
        }
        if (at_end() || m_text[m_at] != quote) fail(std::string(what) + " is an unterminated string");
        ++m_at;
        return value;
    }
    bool parse_bool() {
        if (m_size - m_at >= 4 && std::memcmp(m_text + m_at, "True", 4) == 0) {
            m_at += 4;
            return true;
        }
        if (m_size - m_at >= 5 && std::memcmp(m_text + m_at, "False", 5) == 0) {
            m_at += 5;
            return false;
        }
        fail("fortran_order is not True or False (found " + (at_end() ? std::string("the end") : describe(peek())) + ")");
    }
    std::vector<std::int64_t> parse_shape() {
        if (peek() == '[') fail("shape is a list, not a tuple");
        if (peek() != '(' || at_end())
            fail("shape is not a tuple (found " + (at_end() ? std::string("the end") : describe(peek())) + ")");
        ++m_at;
        std::vector<std::int64_t> shape;
        bool comma = false;
        skip_blanks();
        while (peek() != ')') {
            if (at_end()) fail("the shape tuple is not closed (unbalanced parentheses)");
            shape.push_back(parse_dimension(shape.size()));
            if (shape.size() > 64) fail("shape has more than 64 dimensions");
            skip_blanks();
            comma = false;
            if (peek() == ',') {
                comma = true;
                ++m_at;
                skip_blanks();
            } else if (peek() != ')') {
                fail(at_end() ? "the shape tuple is not closed (unbalanced parentheses)"
                              : "expected ',' or ')' in shape, found " + describe(peek()));
            }
        }
        ++m_at;
        if (shape.size() == 1 && !comma) fail("shape (n) is a number, not a tuple (write (n,))");
        return shape;
    }
    std::int64_t parse_dimension(std::size_t index) {
        const std::string where = "shape[" + std::to_string(index) + "]";
        const char c = peek();
        if (c == '-') fail(where + " is negative");
        if (c == 'T' || c == 'F') fail(where + " is a bool, not an integer");
        if (c < '0' || c > '9') fail(where + " is not an integer (found " + describe(c) + ")");
        std::uint64_t value = 0;
        while (!at_end() && m_text[m_at] >= '0' && m_text[m_at] <= '9') {
            const auto digit = static_cast<std::uint64_t>(m_text[m_at] - '0');
            if (value > (static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - digit) / 10)
                fail(where + " is above 2^63 - 1");
            value = value * 10 + digit;
            ++m_at;
        }
        if (peek() == '.' || peek() == 'e' || peek() == 'E') fail(where + " is not an integer (a float)");
        if (peek() == 'L') ++m_at;  // Python 2's long suffix, as written by NumPy under Python 2
        return static_cast<std::int64_t>(value);
    }

    const char* m_text;
    std::size_t m_size;
    std::size_t m_at = 0;
    const std::string& m_file;
};

/// Reads and checks the .npy file `bytes`, `size` bytes long.
inline NpyHeader read_npy_header(const unsigned char* bytes, std::uint64_t size, const std::string& file,
                                 const OpenOptions& options) {
    using seqembed::detail::fail;
    if (size < 10)
        fail<format_error>(file, ": is ", size, " bytes long, shorter than the 10-byte .npy preamble");
    if (std::memcmp(bytes, "\x93NUMPY", 6) != 0)
        fail<format_error>(file, ": does not start with the .npy magic \\x93NUMPY");
    NpyHeader header;
    header.major = bytes[6];
    header.minor = bytes[7];
    if (header.minor != 0 || header.major < 1 || header.major > 3)
        fail<format_error>(file, ": .npy version ", header.major, ".", header.minor,
                           " (seqembed reads 1.0, 2.0 and 3.0)");
    std::uint64_t prelude = 10, length = bytes[8] | (static_cast<std::uint64_t>(bytes[9]) << 8);
    if (header.major >= 2) {
        if (size < 12)
            fail<format_error>(file, ": is ", size, " bytes long, shorter than the 12-byte preamble of .npy version ",
                               header.major, ".0");
        prelude = 12;
        length |= (static_cast<std::uint64_t>(bytes[10]) << 16) | (static_cast<std::uint64_t>(bytes[11]) << 24);
    }
    if (length > options.max_header_bytes)
        fail<format_error>(file, ": header length ", length, " exceeds the cap of ",
                           options.max_header_bytes, " bytes (OpenOptions::max_header_bytes)");
    if (length > size - prelude)
        fail<format_error>(file, ": header length ", length, " runs past the end of the file (",
                           prelude, " + ", length, " > ", size, " bytes)");
    if (length == 0) fail<format_error>(file, ": header length is 0, an empty header");
    const auto* text = reinterpret_cast<const char*>(bytes + prelude);
    NpyDictParser(text, static_cast<std::size_t>(length), file).parse(header);

    const std::string& d = header.descr;
    const auto unsupported = [&](const std::string& why) {
        fail<format_error>(file, ": descr '", d, "' ", why,
                           " (seqembed reads <f2, <f4, <f8, the integers |i1, <i2, <i4, <i8, |u1, <u2, "
                           "<u4, <u8, the bool |b1, and the big-endian > forms)");
    };
    if (d.empty()) unsupported("is empty");
    if (d.size() != 3) unsupported("is not supported");
    const auto kind = [&]() -> std::optional<Dtype> {
        switch (d[1]) {
            case 'f': return d[2] == '2' ? Dtype::f16 : d[2] == '4' ? Dtype::f32 : d[2] == '8' ? Dtype::f64 : std::optional<Dtype>();
            case 'i': return d[2] == '1' ? Dtype::i8 : d[2] == '2' ? Dtype::i16 : d[2] == '4' ? Dtype::i32 : d[2] == '8' ? Dtype::i64 : std::optional<Dtype>();
            case 'u': return d[2] == '1' ? Dtype::u8 : d[2] == '2' ? Dtype::u16 : d[2] == '4' ? Dtype::u32 : d[2] == '8' ? Dtype::u64 : std::optional<Dtype>();
            case 'b': return d[2] == '1' ? Dtype::boolean : std::optional<Dtype>();
            default: return std::nullopt;
        }
    }();
    if (!kind) unsupported("is not supported");
    // Byte order matters only for multi-byte values: numpy writes '|' for one byte ('|u1', '|b1').
    const bool one_byte = dtype_size(*kind) == 1;
    if (!one_byte && d[0] == '|')
        unsupported("says byte order does not apply ('|'), which is wrong for a multi-byte type");
    if (!one_byte && d[0] == '=') unsupported("has native byte order ('='), which a file cannot tell");
    if (d[0] != '<' && d[0] != '>' && d[0] != '|' && d[0] != '=') unsupported("has no byte order");
    header.big_endian = !one_byte && d[0] == '>';
    header.dtype = *kind;

    std::uint64_t bytes_needed = dtype_size(header.dtype);
    for (std::int64_t dim : header.shape) {
        const auto n = static_cast<std::uint64_t>(dim);
        if (n != 0 && bytes_needed > std::numeric_limits<std::uint64_t>::max() / n)
            fail<format_error>(file, ": shape ", shape_text(header.shape), " of ", d, " overflows 64 bits of bytes");
        bytes_needed *= n;
    }
    header.data_offset = prelude + length;
    const std::uint64_t available = size - header.data_offset;
    if (available < bytes_needed)
        fail<format_error>(file, ": data is truncated: shape ", shape_text(header.shape), " of ", d,
                           " needs ", bytes_needed, " bytes, the file holds ", available);
    // Bytes after the array are ignored, as numpy.load ignores them: repeated np.save calls into
    // one open file leave one array after another, and numpy.load reads the first.
    header.trailing_bytes = available - bytes_needed;
    header.data_bytes = bytes_needed;
    return header;
}

}  // namespace seqembed::io::detail
