// The file cases of shared/docs/bad-inputs.md (items 11 to 29), as bytes: each with the
// exception it must raise and the words its message must hold. Used by test_io_bad_inputs.cpp
// and by fuzz/write_seed_corpus.cpp (the fuzzers' seed corpus holds every case).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <seqembed/io/io.hpp>

namespace io_cases {

enum class Expect { format, index, value, shape };

struct BadFile {
    int item;                   // the number in bad-inputs.md
    std::string label;          // the case, also the file name in messages
    bool npy;                   // .npy rather than safetensors
    std::string bytes;
    Expect expect;
    std::vector<std::string> words;  // the message holds each
    std::string read;           // non-empty: the file opens, reading this tensor as float throws
    seqembed::io::OpenOptions options{};
};

/// A safetensors file: the header's size, the header, then data_bytes bytes (value 0x3f).
inline std::string st(const std::string& header, std::size_t data_bytes = 0) {
    std::string out;
    for (int i = 0; i < 8; ++i) out += static_cast<char>((static_cast<std::uint64_t>(header.size()) >> (8 * i)) & 0xFF);
    return out + header + std::string(data_bytes, '\x3f');
}

/// The first 8 bytes of a safetensors file claiming a header of n bytes, then `rest`.
inline std::string st_size(std::uint64_t n, const std::string& rest) {
    std::string out;
    for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xFF);
    return out + rest;
}

/// A .npy file of the given version with the dict as header, then data_bytes bytes.
inline std::string npy(int major, const std::string& dict, std::size_t data_bytes = 0, int minor = 0) {
    std::string out("\x93NUMPY", 6);
    out += static_cast<char>(major);
    out += static_cast<char>(minor);
    const auto n = static_cast<std::uint32_t>(dict.size());
    for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out += static_cast<char>((n >> (8 * i)) & 0xFF);
    return out + dict + std::string(data_bytes, '\0');
}

inline std::string tensor(const std::string& name, const std::string& dtype, const std::string& shape,
                          std::uint64_t begin, std::uint64_t end) {
    return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" +
           std::to_string(begin) + "," + std::to_string(end) + "]}";
}

inline std::string dict(const std::string& descr, const std::string& order, const std::string& shape) {
    return "{'descr': " + descr + ", 'fortran_order': " + order + ", 'shape': " + shape + ", }\n";
}

inline std::vector<BadFile> bad_files() {
    using E = Expect;
    std::vector<BadFile> cases;
    auto add = [&](int item, std::string label, bool is_npy, std::string bytes, E expect,
                   std::vector<std::string> words, std::string read = "") {
        cases.push_back({item, std::move(label), is_npy, std::move(bytes), expect, std::move(words), std::move(read)});
    };
    const std::string ok = tensor("a", "F32", "[2,2]", 0, 16);

    // 11. Shorter than 8 bytes.
    add(11, "empty.safetensors", false, "", E::format, {"0 bytes long", "shorter than the 8-byte header size"});
    add(11, "three-bytes.safetensors", false, "\x01\x02\x03", E::format, {"3 bytes long", "shorter than"});
    add(11, "seven-bytes.safetensors", false, std::string(7, '\0'), E::format, {"7 bytes long"});
    // 12. N larger than the file, 8 + N overflowing, N above the cap.
    add(12, "n-past-end.safetensors", false, st_size(100, "{}        "), E::format,
        {"header size 100", "runs past the end of the file"});
    add(12, "n-overflows.safetensors", false, st_size(~std::uint64_t{0}, "{}"), E::format,
        {"header size 18446744073709551615", "exceeds the cap of 100000000"});
    add(12, "n-above-cap.safetensors", false, st_size(100'000'001, "{}"), E::format,
        {"header size 100000001", "exceeds the cap"});
    {
        BadFile uncapped{12, "n-overflows-uncapped.safetensors", false, st_size(~std::uint64_t{0} - 3, "{}"),
                         E::format, {"runs past the end of the file"}, ""};
        uncapped.options.max_header_bytes = ~std::uint64_t{0};
        cases.push_back(uncapped);
    }
    // 13. N = 0, whitespace only, not UTF-8, not JSON, not an object.
    add(13, "n-zero.safetensors", false, st_size(0, ""), E::format, {"header size is 0"});
    add(13, "whitespace.safetensors", false, st("        "), E::format, {"whitespace only"});
    add(13, "not-utf8.safetensors", false, st("{\"a\xff\":1}     "), E::format, {"not valid UTF-8", "byte 3"});
    add(13, "overlong-utf8.safetensors", false, st("{\"\xc0\xaf\":1}     "), E::format, {"not valid UTF-8"});
    add(13, "not-json.safetensors", false, st("{\"a\": }"), E::format, {"not valid JSON"});
    add(13, "trailing-garbage.safetensors", false, st("{}  x"), E::format, {"not valid JSON"});
    add(13, "array.safetensors", false, st("[1, 2, 3]"), E::format, {"not a JSON object"});
    add(13, "string.safetensors", false, st("\"text\"  "), E::format, {"not a JSON object"});
    // 14. NUL padding.
    add(14, "nul-padded.safetensors", false, st(std::string("{}") + std::string(6, '\0')), E::format,
        {"NUL byte at offset 2", "padded with spaces"});
    // 15. Unknown, miscased and unsupported dtypes.
    add(15, "dtype-f32.safetensors", false, st("{" + tensor("w", "f32", "[2]", 0, 8) + "}", 8), E::format,
        {"tensor 'w'", "unknown dtype 'f32'", "upper case: 'F32'"});
    add(15, "dtype-float32.safetensors", false, st("{" + tensor("w", "float32", "[2]", 0, 8) + "}", 8),
        E::format, {"tensor 'w'", "unknown dtype 'float32'"});
    add(15, "dtype-f8.safetensors", false, st("{" + tensor("w", "F8_E4M3", "[4]", 0, 4) + "}", 4), E::format,
        {"tensor 'w'", "unsupported dtype F8_E4M3"}, "w");
    add(15, "dtype-f4.safetensors", false, st("{" + tensor("w", "F4", "[4]", 0, 2) + "}", 2), E::format,
        {"tensor 'w'", "unsupported dtype F4"}, "w");
    // Integers are read with integers(), ids() and mask(), never as a float table.
    add(15, "dtype-i64.safetensors", false, st("{" + tensor("ids", "I64", "[2]", 0, 16) + "}", 16), E::format,
        {"tensor 'ids'", "holds integers (I64), not floating-point values", "SafetensorsFile::integers()"}, "ids");
    // 16. Missing fields; bad shapes; bad data_offsets.
    add(16, "no-dtype.safetensors", false, st("{\"w\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8), E::format,
        {"tensor 'w'", "has no dtype"});
    add(16, "no-shape.safetensors", false, st("{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}", 8), E::format,
        {"tensor 'w'", "has no shape"});
    add(16, "no-offsets.safetensors", false, st("{\"w\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8), E::format,
        {"tensor 'w'", "has no data_offsets"});
    add(16, "shape-negative.safetensors", false, st("{" + tensor("w", "F32", "[-2]", 0, 8) + "}", 8), E::format,
        {"tensor 'w'", "shape holds the negative number -2"});
    add(16, "shape-fraction.safetensors", false, st("{" + tensor("w", "F32", "[2.5]", 0, 8) + "}", 8), E::format,
        {"tensor 'w'", "shape holds 2.5", "not a whole number"});
    add(16, "shape-string.safetensors", false, st("{" + tensor("w", "F32", "[\"2\"]", 0, 8) + "}", 8), E::format,
        {"tensor 'w'", "shape holds a string"});
    add(16, "shape-huge.safetensors", false, st("{" + tensor("w", "F32", "[18446744073709551615]", 0, 8) + "}", 8),
        E::format, {"tensor 'w'", "18446744073709551615", "above the largest dimension"});
    add(16, "shape-huger.safetensors", false, st("{" + tensor("w", "F32", "[99999999999999999999999]", 0, 8) + "}", 8),
        E::format, {"tensor 'w'", "not a whole number below 2^64"});
    add(16, "shape-not-array.safetensors", false, st("{" + tensor("w", "F32", "2", 0, 8) + "}", 8), E::format,
        {"tensor 'w'", "shape is a number, not an array"});
    add(16, "offsets-one.safetensors", false, st("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8),
        E::format, {"tensor 'w'", "data_offsets holds 1 numbers, not 2"});
    add(16, "offsets-three.safetensors", false,
        st("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8,8]}}", 8), E::format,
        {"tensor 'w'", "data_offsets holds more than 2"});
    add(16, "offsets-reversed.safetensors", false, st("{" + tensor("w", "F32", "[0]", 8, 0) + "}", 8), E::format,
        {"tensor 'w'", "data_offsets [8, 0] begin after they end"});
    add(16, "unknown-field.safetensors", false,
        st("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"offsets\":[0,8]}}", 8), E::format,
        {"tensor 'w'", "unknown field 'offsets'"});
    // 17. Gaps, a start after 0, overlaps, past the buffer, extra bytes.
    add(17, "gap.safetensors", false,
        st("{" + tensor("a", "F32", "[4]", 0, 16) + "," + tensor("b", "F32", "[4]", 20, 36) + "}", 36), E::format,
        {"tensor 'b'", "bytes [16, 20)", "a gap"});
    add(17, "not-at-zero.safetensors", false, st("{" + tensor("a", "F32", "[4]", 4, 20) + "}", 20), E::format,
        {"tensor 'a'", "bytes [0, 4)", "must start at 0"});
    {
        std::string header = "{";
        for (int i = 0; i < 10; ++i) header += (i ? "," : "") + tensor("t" + std::to_string(i), "F32", "[4]", 0, 16);
        add(17, "ten-overlapping.safetensors", false, st(header + "}", 16), E::format, {"overlap tensor 't", "[0, 16]"});
    }
    add(17, "past-buffer.safetensors", false, st("{" + tensor("a", "F32", "[4]", 0, 16) + "}", 8), E::format,
        {"tensor 'a'", "run past the data buffer, which holds 8 bytes"});
    add(17, "extra-bytes.safetensors", false, st("{" + ok + "}", 20), E::format,
        {"4 extra bytes after the last tensor"});
    // 18. Sizes that disagree, shapes whose products overflow.
    add(18, "size-mismatch.safetensors", false, st("{" + tensor("w", "F32", "[2,3]", 0, 20) + "}", 20), E::format,
        {"tensor 'w'", "shape [2, 3] of F32 needs 24 bytes", "hold 20"});
    add(18, "shape-overflow.safetensors", false,
        st("{" + tensor("w", "F32", "[2,18446744073709551614]", 0, 16) + "}", 16), E::format,
        {"tensor 'w'", "18446744073709551614", "above the largest dimension"});
    add(18, "product-overflow.safetensors", false,
        st("{" + tensor("w", "F32", "[4294967296,4294967296]", 0, 16) + "}", 16), E::format,
        {"tensor 'w'", "shape [4294967296, 4294967296]", "overflows 64 bits"});
    add(18, "bytes-overflow.safetensors", false,
        st("{" + tensor("w", "F64", "[3037000500,3037000500]", 0, 16) + "}", 16), E::format,
        {"tensor 'w'", "overflows 64 bits of bytes"});
    // 19. Duplicate names; metadata that is not strings.
    add(19, "duplicate.safetensors", false, st("{" + ok + "," + tensor("a", "F32", "[2,2]", 16, 32) + "}", 32),
        E::format, {"tensor 'a' appears twice"});
    add(19, "metadata-number.safetensors", false, st("{\"__metadata__\":{\"epoch\":3}," + ok + "}", 16), E::format,
        {"__metadata__['epoch'] is a number, not a string"});
    add(19, "metadata-object.safetensors", false, st("{\"__metadata__\":{\"cfg\":{\"a\":\"b\"}}," + ok + "}", 16),
        E::format, {"__metadata__['cfg'] is an object, not a string"});
    add(19, "metadata-null.safetensors", false, st("{\"__metadata__\":{\"cfg\":null}," + ok + "}", 16), E::format,
        {"__metadata__['cfg'] is null"});
    add(19, "metadata-twice.safetensors", false,
        st("{\"__metadata__\":{},\"__metadata__\":{}," + ok + "}", 16), E::format, {"__metadata__ appears twice"});
    add(19, "metadata-not-object.safetensors", false, st("{\"__metadata__\":\"pt\"," + ok + "}", 16), E::format,
        {"header entry '__metadata__' is a string, not an object"});
    // 20. A tensor that is not there.
    add(20, "missing-tensor.safetensors", false,
        st("{" + ok + "," + tensor("b", "F32", "[1]", 16, 20) + "}", 20), E::index,
        {"has no tensor 'missing'", "it has 'a', 'b'"}, "missing");
    // 21. Deep nesting, millions of entries.
    add(21, "deep-shape.safetensors", false,
        st("{\"w\":{\"dtype\":\"F32\",\"shape\":" + std::string(200000, '[') + std::string(200000, ']') + "}}"),
        E::format, {"tensor 'w'", "shape holds an array"});
    add(21, "deep-metadata.safetensors", false,
        st("{\"__metadata__\":{\"k\":" + std::string(200000, '[') + std::string(200000, ']') + "}}"), E::format,
        {"__metadata__['k'] is an array"});
    add(21, "deep-dtype.safetensors", false, st("{\"a\":{\"dtype\":" + std::string(200000, '[')), E::format,
        {"tensor 'a'", "dtype is an array, not a string"});
    add(21, "deep-entry.safetensors", false, st("{\"a\":" + std::string(200000, '[')), E::format,
        {"header entry 'a' is an array, not an object"});
    {
        std::string header = "{\"__metadata__\":{";
        for (int i = 0; i < 1'100'000; ++i) header += (i ? ",\"" : "\"") + std::to_string(i) + "\":\"\"";
        add(21, "million-entries.safetensors", false, st(header + "}}"), E::format,
            {"more than 1000000 entries"});
    }
    {
        std::string shape = "[";
        for (int i = 0; i < 1'100'000; ++i) shape += i ? ",1" : "1";
        add(21, "million-dimensions.safetensors", false, st("{" + tensor("w", "F32", shape + "]", 0, 4) + "}", 4),
            E::format, {"more than 1000000 entries"});
    }

    // .npy
    const std::string f4_2x3 = dict("'<f4'", "False", "(2, 3)");
    // 23. Short, wrong magic, wrong version.
    add(23, "empty.npy", true, "", E::format, {"0 bytes long", "shorter than the 10-byte .npy preamble"});
    add(23, "nine-bytes.npy", true, std::string("\x93NUMPY\x01\x00\x00", 9), E::format, {"9 bytes long"});
    add(23, "magic.npy", true, "\x93NUMPX" + npy(1, f4_2x3, 24).substr(6), E::format, {"magic"});
    add(23, "version-4.npy", true, npy(4, f4_2x3, 24), E::format, {"version 4.0", "1.0, 2.0 and 3.0"});
    add(23, "version-1-1.npy", true, npy(1, f4_2x3, 24, 1), E::format, {"version 1.1"});
    add(23, "version-0.npy", true, npy(0, f4_2x3, 24), E::format, {"version 0.0"});
    add(23, "v2-short.npy", true, std::string("\x93NUMPY\x02\x00\x10\x00", 10), E::format,
        {"10 bytes long", "12-byte preamble"});
    // 24. A header length the file does not back.
    add(24, "length-huge.npy", true, std::string("\x93NUMPY\x02\x00\xf0\xff\xff\xff", 12) + "{}", E::format,
        {"header length 4294967280", "exceeds the cap"});
    {
        BadFile uncapped{24, "length-uncapped.npy", true,
                         std::string("\x93NUMPY\x02\x00\xf0\xff\xff\xff", 12) + "{}", E::format,
                         {"header length 4294967280", "runs past the end of the file"}, ""};
        uncapped.options.max_header_bytes = ~std::uint64_t{0};
        cases.push_back(uncapped);
    }
    add(24, "length-past-end.npy", true, std::string("\x93NUMPY\x01\x00\xe8\x03", 10) + "{}", E::format,
        {"header length 1000", "runs past the end"});
    add(24, "length-zero.npy", true, std::string("\x93NUMPY\x01\x00\x00\x00", 10), E::format,
        {"header length is 0"});
    // 25. Unparsable dicts, missing or extra keys.
    add(25, "unbalanced-paren.npy", true, npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3"),
        E::format, {"not closed (unbalanced parentheses)"});
    add(25, "unbalanced-brace.npy", true, npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), "),
        E::format, {"not closed (unbalanced braces)"});
    add(25, "wrong-bracket.npy", true, npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3]}"),
        E::format, {"expected ',' or ')' in shape, found ']'"});
    add(25, "unterminated.npy", true, npy(1, "{'descr': '<f4"), E::format, {"descr is an unterminated string"});
    add(25, "missing-shape.npy", true, npy(1, "{'descr': '<f4', 'fortran_order': False, }"), E::format,
        {"the key 'shape' is missing"});
    add(25, "missing-descr.npy", true, npy(1, "{'fortran_order': False, 'shape': (2,), }", 8), E::format,
        {"the key 'descr' is missing"});
    add(25, "extra-key.npy", true,
        npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1, }", 8), E::format,
        {"unknown key 'extra'"});
    add(25, "duplicate-key.npy", true,
        npy(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8), E::format,
        {"'descr' appears twice"});
    add(25, "text-after.npy", true, npy(1, f4_2x3.substr(0, f4_2x3.size() - 1) + " x\n", 24), E::format,
        {"text after the dict"});
    add(25, "not-dict.npy", true, npy(1, "('descr', '<f4')\n", 24), E::format, {"does not start with '{'"});
    // 26. Shapes that are lists, floats, negative, bools, or overflow.
    add(26, "shape-list.npy", true, npy(1, dict("'<f4'", "False", "[2, 3]"), 24), E::format, {"shape is a list"});
    add(26, "shape-float.npy", true, npy(1, dict("'<f4'", "False", "(2.0, 3)"), 24), E::format,
        {"shape[0] is not an integer (a float)"});
    add(26, "shape-negative.npy", true, npy(1, dict("'<f4'", "False", "(2, -3)"), 24), E::format,
        {"shape[1] is negative"});
    add(26, "shape-true.npy", true, npy(1, dict("'<f4'", "False", "(True, 3)"), 24), E::format,
        {"shape[0] is a bool"});
    add(26, "shape-int.npy", true, npy(1, dict("'<f4'", "False", "(6)"), 24), E::format,
        {"shape (n) is a number, not a tuple"});
    add(26, "shape-overflow.npy", true, npy(1, dict("'<f4'", "False", "(4294967296, 4294967296, 4)"), 24),
        E::format, {"shape [4294967296, 4294967296, 4] of <f4 overflows"});
    add(26, "shape-huge.npy", true, npy(1, dict("'<f4'", "False", "(99999999999999999999,)"), 24), E::format,
        {"shape[0] is above 2^63 - 1"});
    // 27. fortran_order that is not a bool.
    add(27, "order-string.npy", true, npy(1, dict("'<f4'", "'yes'", "(2, 3)"), 24), E::format,
        {"fortran_order is not True or False"});
    add(27, "order-int.npy", true, npy(1, dict("'<f4'", "1", "(2, 3)"), 24), E::format,
        {"fortran_order is not True or False"});
    // 28. descr values seqembed does not read.
    for (const char* d : {"|O", "<U10", "<c8", "<M8", "<f3", "<ixy", "f4"})
        add(28, std::string("descr-") + (d[0] == '<' ? d + 1 : d[0] == '|' ? "pipe-O" : d) + ".npy", true,
            npy(1, dict(std::string("'") + d + "'", "False", "(2, 3)"), 24), E::format,
            {std::string("descr '") + d + "'", "seqembed reads <f2, <f4, <f8"});
    // Integers are read with integers(), ids() and mask(), never as a float table.
    add(28, "descr-i4.npy", true, npy(1, dict("'<i4'", "False", "(2, 3)"), 24), E::format,
        {"holds integers ('<i4'), not floating-point values", "NpyFile::integers(), ids() or mask()"}, "array");
    add(28, "descr-empty.npy", true, npy(1, dict("''", "False", "(2, 3)"), 24), E::format, {"descr '' is empty"});
    add(28, "descr-pipe-f4.npy", true, npy(1, dict("'|f4'", "False", "(2, 3)"), 24), E::format,
        {"descr '|f4'", "byte order does not apply"});
    add(28, "descr-native.npy", true, npy(1, dict("'=f4'", "False", "(2, 3)"), 24), E::format,
        {"descr '=f4'", "native byte order"});
    add(28, "descr-structured.npy", true, npy(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8),
        E::format, {"structured dtypes are not supported"});
    // 29. Truncated data (bytes after the array are no error: numpy.load ignores them).
    add(29, "truncated.npy", true, npy(1, f4_2x3, 10), E::format,
        {"data is truncated", "needs 24 bytes, the file holds 10"});
    return cases;
}

}  // namespace io_cases
