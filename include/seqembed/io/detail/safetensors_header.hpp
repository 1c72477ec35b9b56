/// @file io/detail/safetensors_header.hpp
/// @brief The strict reader of a safetensors header: the 8-byte size, the JSON (read by
///        nlohmann_json's SAX parser into seqembed's own structures, so that no DOM is built,
///        duplicate names are seen, and nesting and entry counts are bounded as they arrive),
///        then every tensor's dtype, shape and byte range checked against each other and
///        against the file.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../error.hpp"
#include "../errors.hpp"
#include "../mapped_file.hpp"
#include "../../detail/text/utf8.hpp"
#include "read_tensor.hpp"

namespace seqembed::io {

/// @brief One tensor of a safetensors file, as its header describes it.
/// @headerfile safetensors.hpp <seqembed/io/safetensors.hpp>
struct TensorInfo {
    /// @brief Its name (a key of the header).
    std::string name;
    /// @brief Its dtype as written ("F32", "BF16", "I64", ...): any dtype of the format; F16,
    ///        BF16, F32, F64 (floats), I8 .. I64, U8 .. U64 and BOOL (integers) can be read (see
    ///        dtype()).
    std::string dtype_name;
    /// @brief Its dimensions, outermost first (empty for a scalar).
    std::vector<std::int64_t> shape;
    /// @brief Its byte range in the data buffer (the header's data_offsets), [begin, end).
    std::uint64_t begin = 0;
    /// @brief End of its byte range in the data buffer.
    std::uint64_t end = 0;
    /// @brief Where its bytes start in the file: 8 + the header size + begin.
    std::uint64_t file_offset = 0;

    /// @brief The dtype, if seqembed reads it.
    /// @return F16, BF16, F32, F64, I8 .. I64, U8 .. U64 or BOOL (is_integer() tells which
    ///         reader to use), or std::nullopt for the format's other dtypes (F8_*, F6_*, F4,
    ///         C64).
    std::optional<Dtype> dtype() const noexcept { return dtype_from_name(dtype_name); }
    /// @brief The size of its data.
    /// @return end - begin bytes.
    std::uint64_t byte_size() const noexcept { return end - begin; }
};

}  // namespace seqembed::io

namespace seqembed::io::detail {

/// The safetensors dtypes (the reference implementation's list) and their sizes in bits.
inline int safetensors_dtype_bits(const std::string& name) noexcept {
    static const std::pair<const char*, int> known[] = {
        {"BOOL", 8}, {"U8", 8}, {"I8", 8}, {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8},
        {"I16", 16}, {"U16", 16}, {"F16", 16}, {"BF16", 16}, {"I32", 32}, {"U32", 32},
        {"F32", 32}, {"F64", 64}, {"I64", 64}, {"U64", 64}, {"C64", 64}, {"F4", 4},
        {"F6_E2M3", 6}, {"F6_E3M2", 6}};
    for (const auto& [known_name, bits] : known)
        if (name == known_name) return bits;
    return 0;
}

inline std::string upper_case(std::string text) {
    for (char& c : text)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    return text;
}

/// A parsed and checked header.
struct SafetensorsHeader {
    std::uint64_t header_bytes = 0;         // N
    std::vector<TensorInfo> tensors;        // in data order
    std::map<std::string, std::string> metadata;
};

/// The SAX handler: follows the only shape a header may have,
/// { "__metadata__": {str: str, ...}, name: {"dtype": str, "shape": [uint, ...],
///   "data_offsets": [uint, uint]}, ... }, and stops at the first value that departs from it.
class HeaderReader : public nlohmann::json_sax<nlohmann::json> {
public:
    explicit HeaderReader(std::uint64_t max_entries) : m_max_entries(max_entries) {}

    std::vector<TensorInfo> tensors;
    std::map<std::string, std::string> metadata;
    std::string problem;  // set when the handler stopped the parse

    bool null() override { return unexpected("null"); }
    bool boolean(bool) override { return unexpected("a boolean"); }
    bool number_integer(number_integer_t value) override {
        if (m_state == State::shape || m_state == State::offsets)
            return stop(where_value() + " holds the negative number " + std::to_string(value));
        return unexpected("a number");
    }
    bool number_unsigned(number_unsigned_t value) override {
        if (m_state == State::shape) {
            if (!count_entry()) return false;
            if (value > static_cast<number_unsigned_t>(std::numeric_limits<std::int64_t>::max()))
                return stop(where_value() + " holds " + std::to_string(value) +
                            ", above the largest dimension 2^63 - 1");
            tensors.back().shape.push_back(static_cast<std::int64_t>(value));
            return true;
        }
        if (m_state == State::offsets) {
            if (m_offsets_seen == 2)
                return stop(where_value() + " holds more than 2 numbers");
            (m_offsets_seen == 0 ? tensors.back().begin : tensors.back().end) = value;
            ++m_offsets_seen;
            return true;
        }
        return unexpected("a number");
    }
    bool number_float(number_float_t, const string_t& text) override {
        if (m_state == State::shape || m_state == State::offsets)
            return stop(where_value() + " holds " + text + ", which is not a whole number below 2^64");
        return unexpected("a number");
    }
    bool string(string_t& value) override {
        if (m_state == State::metadata) {
            metadata[m_key] = value;
            return true;
        }
        if (m_state == State::tensor && m_key == "dtype") {
            tensors.back().dtype_name = value;
            return true;
        }
        return unexpected("a string");
    }
    bool binary(binary_t&) override { return unexpected("binary data"); }
    bool start_object(std::size_t) override {
        switch (m_state) {
            case State::start: m_state = State::root; return true;
            case State::root:
                m_state = m_key == "__metadata__" ? State::metadata : State::tensor;
                return true;
            default: return unexpected("an object");
        }
    }
    bool key(string_t& key) override {
        if (!count_entry()) return false;
        if (m_state == State::root) {
            if (key == "__metadata__") {
                if (m_seen_metadata) return stop("__metadata__ appears twice");
                m_seen_metadata = true;
            } else {
                if (!m_names.insert(key).second)
                    return stop("tensor '" + key + "' appears twice in the header");
                tensors.emplace_back();
                tensors.back().name = key;
                m_fields.clear();
            }
        } else if (m_state == State::metadata) {
            if (metadata.count(key) != 0)
                return stop("__metadata__ key '" + key + "' appears twice");
        } else if (m_state == State::tensor) {
            if (key != "dtype" && key != "shape" && key != "data_offsets")
                return stop("tensor '" + tensors.back().name + "' has the unknown field '" + key +
                            "' (a tensor has dtype, shape and data_offsets)");
            if (!m_fields.insert(key).second)
                return stop("tensor '" + tensors.back().name + "' has " + key + " twice");
        }
        m_key = key;
        return true;
    }
    bool end_object() override {
        if (m_state == State::metadata) { m_state = State::root; return true; }
        if (m_state == State::tensor) {
            for (const char* field : {"dtype", "shape", "data_offsets"})
                if (m_fields.count(field) == 0)
                    return stop("tensor '" + tensors.back().name + "' has no " + field);
            m_state = State::root;
            return true;
        }
        m_state = State::done;
        return true;
    }
    bool start_array(std::size_t) override {
        if (m_state == State::tensor && m_key == "shape") { m_state = State::shape; return true; }
        if (m_state == State::tensor && m_key == "data_offsets") {
            m_state = State::offsets;
            m_offsets_seen = 0;
            return true;
        }
        return unexpected("an array");
    }
    bool end_array() override {
        if (m_state == State::offsets && m_offsets_seen != 2)
            return stop(where_value() + " holds " + std::to_string(m_offsets_seen) +
                        " numbers, not 2 (begin, end)");
        m_state = State::tensor;
        return true;
    }
    bool parse_error(std::size_t position, const std::string&,
                     const nlohmann::json::exception& error) override {
        // nlohmann's message starts with "[json.exception.parse_error.101] parse error at
        // line 1, column 9: ...": keep the part after the exception's id.
        std::string text = error.what();
        const auto bracket = text.find("] ");
        if (bracket != std::string::npos) text = text.substr(bracket + 2);
        return stop("header is not valid JSON (byte " + std::to_string(position) + "): " + text);
    }

private:
    enum class State { start, root, metadata, tensor, shape, offsets, done };

    bool stop(std::string message) {
        problem = std::move(message);
        return false;
    }
    bool count_entry() {
        if (++m_entries > m_max_entries)
            return stop("header holds more than " + std::to_string(m_max_entries) +
                        " entries (tensors, metadata and dimensions; OpenOptions::max_header_entries)");
        return true;
    }
    std::string where_value() const {
        return "tensor '" + tensors.back().name + "': " + m_key;
    }
    bool unexpected(const char* what) {
        switch (m_state) {
            case State::start: return stop(std::string("header is ") + what + ", not a JSON object");
            case State::root:
                return stop("header entry '" + m_key + "' is " + what + ", not an object");
            case State::metadata:
                return stop("__metadata__['" + m_key + "'] is " + what +
                            ", not a string (metadata maps strings to strings)");
            case State::tensor:
                return stop("tensor '" + tensors.back().name + "': " + m_key + " is " + what +
                            (m_key == "dtype" ? ", not a string" : ", not an array"));
            case State::shape:
            case State::offsets:
                return stop(where_value() + " holds " + what + ", not a whole number");
            case State::done: break;
        }
        return stop(std::string("unexpected ") + what + " after the header's object");
    }

    std::uint64_t m_max_entries;
    std::uint64_t m_entries = 0;
    State m_state = State::start;
    std::string m_key;
    bool m_seen_metadata = false;
    std::unordered_set<std::string> m_names;
    std::unordered_set<std::string> m_fields;
    int m_offsets_seen = 0;
};

/// Reads and checks the header of the safetensors file `bytes`, `size` bytes long.
inline SafetensorsHeader read_safetensors_header(const unsigned char* bytes, std::uint64_t size,
                                                 const std::string& file,
                                                 const OpenOptions& options) {
    using seqembed::detail::fail;
    if (size < 8)
        fail<format_error>(file, ": is ", size, " bytes long, shorter than the 8-byte header size "
                           "that starts a safetensors file");
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];
    const std::uint64_t cap = options.max_header_bytes;
    if (n > cap)
        fail<format_error>(file, ": header size ", n, " exceeds the cap of ", cap,
                           " bytes (OpenOptions::max_header_bytes)");
    if (n > size - 8)
        fail<format_error>(file, ": header size ", n, " runs past the end of the file (8 + ", n,
                           " > ", size, " bytes)");
    if (n == 0) fail<format_error>(file, ": header size is 0, an empty header");
    const unsigned char* text = bytes + 8;
    const auto length = static_cast<std::size_t>(n);
    if (const void* nul = std::memchr(text, 0, length))
        fail<format_error>(file, ": header has a NUL byte at offset ",
                           static_cast<const unsigned char*>(nul) - text,
                           " (a header is padded with spaces, not NUL bytes)");
    if (const std::size_t bad = seqembed::detail::first_invalid_utf8(
            std::string_view(reinterpret_cast<const char*>(text), length));
        bad != length)
        fail<format_error>(file, ": header is not valid UTF-8 (byte ", bad, ")");
    std::size_t first = 0;
    while (first < length && (text[first] == ' ' || text[first] == '\t' || text[first] == '\n' ||
                              text[first] == '\r'))
        ++first;
    if (first == length) fail<format_error>(file, ": header is whitespace only, not a JSON object");
    if (text[0] != '{')
        fail<format_error>(file, ": header does not start with '{', so it is not a JSON object");

    HeaderReader reader(options.max_header_entries);
    const bool parsed = nlohmann::json::sax_parse(text, text + length, &reader,
                                                  nlohmann::json::input_format_t::json, true);
    if (!parsed || !reader.problem.empty())
        fail<format_error>(file, ": ", reader.problem.empty() ? "header is not valid JSON" : reader.problem);

    SafetensorsHeader header;
    header.header_bytes = n;
    header.metadata = std::move(reader.metadata);
    header.tensors = std::move(reader.tensors);
    const std::uint64_t buffer = size - 8 - n;
    for (TensorInfo& tensor : header.tensors) {
        const std::string at = file + ": tensor '" + tensor.name + "'";
        const int bits = safetensors_dtype_bits(tensor.dtype_name);
        if (bits == 0) {
            const int hint = safetensors_dtype_bits(upper_case(tensor.dtype_name));
            fail<format_error>(at, ": unknown dtype '", tensor.dtype_name, "'",
                               hint ? " (dtypes are upper case: '" + upper_case(tensor.dtype_name) + "')"
                                    : std::string(" (F16, BF16, F32, F64, I8 .. U64, BOOL, F8_*, ...)"));
        }
        if (tensor.begin > tensor.end)
            fail<format_error>(at, ": data_offsets [", tensor.begin, ", ", tensor.end,
                               "] begin after they end");
        std::uint64_t elements = 1;
        for (std::int64_t d : tensor.shape) {
            const auto dim = static_cast<std::uint64_t>(d);
            if (dim != 0 && elements > std::numeric_limits<std::uint64_t>::max() / dim)
                fail<format_error>(at, ": shape ", shape_text(tensor.shape), " overflows 64 bits");
            elements *= dim;
        }
        if (elements > std::numeric_limits<std::uint64_t>::max() / static_cast<std::uint64_t>(bits))
            fail<format_error>(at, ": shape ", shape_text(tensor.shape), " of ", tensor.dtype_name,
                               " overflows 64 bits of bytes");
        const std::uint64_t total_bits = elements * static_cast<std::uint64_t>(bits);
        if (total_bits % 8 != 0)
            fail<format_error>(at, ": shape ", shape_text(tensor.shape), " of ", tensor.dtype_name,
                               " is not a whole number of bytes");
        if (total_bits / 8 != tensor.end - tensor.begin)
            fail<format_error>(at, ": shape ", shape_text(tensor.shape), " of ", tensor.dtype_name,
                               " needs ", total_bits / 8, " bytes, data_offsets [", tensor.begin,
                               ", ", tensor.end, "] hold ", tensor.end - tensor.begin);
        if (tensor.end > buffer)
            fail<format_error>(at, ": data_offsets [", tensor.begin, ", ", tensor.end,
                               "] run past the data buffer, which holds ", buffer, " bytes");
        tensor.file_offset = 8 + n + tensor.begin;
    }
    // The byte ranges must tile the buffer: sorted by position, each begins where the previous
    // ended (no gap, no overlap), the first at 0, the last at the buffer's end.
    std::stable_sort(header.tensors.begin(), header.tensors.end(),
                     [](const TensorInfo& a, const TensorInfo& b) {
                         return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
                     });
    std::uint64_t expected = 0;
    const TensorInfo* previous = nullptr;
    for (const TensorInfo& tensor : header.tensors) {
        if (tensor.begin > expected)
            fail<format_error>(file, ": tensor '", tensor.name, "': bytes [", expected, ", ",
                               tensor.begin, ") of the data buffer before it belong to no tensor "
                               "(a gap", previous ? "" : ": the first tensor must start at 0", ")");
        if (tensor.begin < expected)
            fail<format_error>(file, ": tensor '", tensor.name, "': data_offsets [", tensor.begin,
                               ", ", tensor.end, "] overlap tensor '", previous->name, "' at [",
                               previous->begin, ", ", previous->end, "]");
        expected = tensor.end;
        previous = &tensor;
    }
    if (expected != buffer)
        fail<format_error>(file, ": ", buffer - expected, " extra bytes after the last tensor (the "
                           "tensors end at byte ", expected, " of a ", buffer, "-byte data buffer)");
    return header;
}

}  // namespace seqembed::io::detail
