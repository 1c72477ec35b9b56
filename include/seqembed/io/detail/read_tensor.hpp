/// @file io/detail/read_tensor.hpp
/// @brief The one path from a tensor's stored bytes to a Tensor<T> (floating-point values) or
///        a Tensor<std::int64_t> (integers, and from it ids and masks), shared by the readers of
///        every format: checks the kind of values, the rank and the conversion, views the bytes
///        when it can, else converts them into owned memory.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../../detail/large_memory.hpp"
#include "../../error.hpp"
#include "../../types.hpp"
#include "../../vocabulary_shard.hpp"
#include "../errors.hpp"
#include "../tensor.hpp"
#include "convert.hpp"

namespace seqembed::io::detail {

using seqembed::detail::fail;

/// Where a tensor's values lie in a file and how they are stored.
struct StoredTensor {
    const std::string* file;           // for messages
    const std::string* name;           // for messages (.npy: "array", not shown)
    Dtype dtype;
    bool big_endian = false;
    bool fortran_order = false;
    std::vector<std::int64_t> shape;   // validated: the product times the size is `bytes`
    const unsigned char* data;         // first byte
    std::uint64_t bytes;
    std::shared_ptr<const void> owner; // keeps data alive
    const std::string* descr = nullptr;  // .npy: the descr as written; null for safetensors
};

inline std::string shape_text(const std::vector<std::int64_t>& shape) {
    std::ostringstream text;
    text << '[';
    for (std::size_t i = 0; i < shape.size(); ++i) text << (i ? ", " : "") << shape[i];
    text << ']';
    return text.str();
}

/// Whether the tensor is a .npy file's array (messages name the file alone, and the functions
/// of NpyFile).
inline bool is_npy(const StoredTensor& stored) noexcept { return stored.descr != nullptr; }

/// The prefix of a message about a tensor: "<file>: tensor '<name>'" (just the file for .npy).
inline std::string where(const StoredTensor& stored) {
    return is_npy(stored) ? *stored.file : *stored.file + ": tensor '" + *stored.name + "'";
}

/// The stored dtype as its format writes it: "I64", or "'<i8'" for .npy.
inline std::string stored_dtype_text(const StoredTensor& stored) {
    return is_npy(stored) ? "'" + *stored.descr + "'" : std::string(dtype_name(stored.dtype));
}

/// The reader class the messages point to.
inline const char* reader_name(const StoredTensor& stored) noexcept {
    return is_npy(stored) ? "NpyFile" : "SafetensorsFile";
}

/// "(i, j, ...)": the position of element `flat` of a row-major array of that shape ("()" for
/// a scalar).
inline std::string position_text(const std::vector<std::int64_t>& shape, std::uint64_t flat) {
    std::vector<std::uint64_t> index(shape.size(), 0);
    for (std::size_t d = shape.size(); d-- > 0;) {
        const auto extent = static_cast<std::uint64_t>(shape[d]);
        index[d] = extent == 0 ? 0 : flat % extent;
        flat = extent == 0 ? 0 : flat / extent;
    }
    std::string text = "(";
    for (std::size_t d = 0; d < index.size(); ++d) text += (d ? ", " : "") + std::to_string(index[d]);
    return text + ")";
}

/// Throws unless the stored rank is `rank`, or any of 0 to 4 when `rank` is -1.
inline void check_rank(const StoredTensor& stored, int rank) {
    const auto stored_rank = static_cast<int>(stored.shape.size());
    if (rank != -1 && stored_rank != rank)
        fail<shape_error>(where(stored), ": has rank ", stored_rank, " (shape ",
                          shape_text(stored.shape), "), ", rank == 1 ? "a vector" : "a matrix",
                          " needs rank ", rank, " (a tensor is never reshaped)");
    if (stored_rank > 4)
        fail<shape_error>(where(stored), ": has rank ", stored_rank, " (shape ",
                          shape_text(stored.shape), "); seqembed reads ranks 0 to 4");
}

/// Calls visit(k, index) for each element of a Fortran-order (column-major) array, k running
/// over the row-major (C) order and index the element's place in the stored bytes. An array with
/// an extent of 0 has no element, however large its other extents.
template <typename Visit>
void visit_fortran_order(const StoredTensor& stored, Visit&& visit) {
    for (const auto extent : stored.shape)
        if (extent == 0) return;
    // Element (i0, .., ik) lies at i0 + s0 * (i1 + s1 * (...)).
    const auto stored_rank = static_cast<int>(stored.shape.size());
    std::int64_t extent[4] = {1, 1, 1, 1};
    std::int64_t stride[4] = {0, 0, 0, 0};
    std::int64_t step = 1;
    for (int d = 0; d < stored_rank; ++d) {
        extent[4 - stored_rank + d] = stored.shape[static_cast<std::size_t>(d)];
        stride[4 - stored_rank + d] = step;
        step *= stored.shape[static_cast<std::size_t>(d)];
    }
    std::size_t k = 0;
    for (std::int64_t a = 0; a < extent[0]; ++a)
        for (std::int64_t b = 0; b < extent[1]; ++b)
            for (std::int64_t c = 0; c < extent[2]; ++c)
                for (std::int64_t d = 0; d < extent[3]; ++d)
                    visit(k++, static_cast<std::size_t>(a * stride[0] + b * stride[1] + c * stride[2] +
                                                        d * stride[3]));
}

/// Owned memory for count values of T (at least one value's worth).
template <typename T>
std::shared_ptr<const void> allocate_copy(const StoredTensor& stored, std::uint64_t count) {
    const std::size_t out_bytes = static_cast<std::size_t>(count) * sizeof(T);
    auto buffer = seqembed::detail::allocate_table_memory(out_bytes == 0 ? sizeof(T) : out_bytes);
    if (!buffer) fail<value_error>(where(stored), ": a copy of ", count, " values does not fit in memory");
    return std::shared_ptr<const void>(std::move(buffer));
}

/// Throws unless a stored tensor of floating-point values of that rank (-1: 0 to 4) can be read
/// as T with these options.
template <typename T>
void check_float_read(const StoredTensor& stored, int rank, const ReadOptions& options) {
    constexpr Dtype to = dtype_of<T>();
    if (is_integer(stored.dtype))
        fail<format_error>(where(stored), ": holds integers (", stored_dtype_text(stored),
                           "), not floating-point values; they are never read as ", dtype_name(to),
                           ": read them as int64 with ", reader_name(stored), "::integers(), ids() or mask()");
    check_rank(stored, rank);
    if (!options.allow_narrowing && !is_exact_conversion(stored.dtype, to))
        fail<value_error>(where(stored), ": reading ", dtype_name(stored.dtype), " as ",
                          dtype_name(to), " rounds values; set ReadOptions::allow_narrowing to "
                          "round them to nearest even");
}

/// Reads a stored tensor of floating-point values as T. `rank` -1 accepts ranks 0 to 4, else
/// exactly that rank.
template <typename T>
Tensor<T> read_tensor(const StoredTensor& stored, int rank, const ReadOptions& options) {
    constexpr Dtype to = dtype_of<T>();
    check_float_read<T>(stored, rank, options);
    const auto stored_rank = static_cast<int>(stored.shape.size());
    std::vector<Index> shape(stored.shape.begin(), stored.shape.end());
    const std::uint64_t count = stored.bytes / dtype_size(stored.dtype);
    const bool swap = stored.big_endian == host_is_little_endian();
    const bool c_order = !stored.fortran_order || stored_rank <= 1;
    if (!options.copy && to == stored.dtype && !swap && c_order &&
        reinterpret_cast<std::uintptr_t>(stored.data) % alignof(T) == 0) {
        // Aligned, host order, same dtype: the file's bytes are the values.
        return Tensor<T>(*stored.file, *stored.name, std::move(shape),
                         reinterpret_cast<const T*>(stored.data), stored.owner, true);
    }
    // count is backed by the file's bytes; the copy is at most 4 times as large (F16 to F64).
    const std::shared_ptr<const void> memory = allocate_copy<T>(stored, count);
    T* out = static_cast<T*>(const_cast<void*>(memory.get()));
    if (c_order) {
        convert_elements<T>(stored.dtype, swap, stored.data, out, static_cast<std::size_t>(count));
    } else {
        visit_fortran_order(stored, [&](std::size_t k, std::size_t index) {
            out[k] = convert_element<T>(stored.dtype, swap, stored.data, index);
        });
    }
    return Tensor<T>(*stored.file, *stored.name, std::move(shape), out, memory, false);
}

/// Reads rows [first, first + count) of a stored rank-2 tensor of floating-point values as T,
/// shape {count, cols}, looking at no other row: in C order the rows' bytes are a stored tensor
/// of their own (viewed or converted as read_tensor does); in Fortran order (a .npy file) they
/// are strided, so they are converted into an owned copy, element by element.
template <typename T>
Tensor<T> read_rows(const StoredTensor& stored, Index first, Index count, const ReadOptions& options) {
    check_float_read<T>(stored, 2, options);
    const std::int64_t rows = stored.shape[0];
    const std::int64_t cols = stored.shape[1];
    if (count <= 0 || first < 0 || first > rows - count) {
        // first + count is only printed as a sum when it cannot overflow.
        const bool summable = count >= 0 ? first <= std::numeric_limits<Index>::max() - count
                                         : first >= std::numeric_limits<Index>::min() - count;
        const std::string end =
            summable ? std::to_string(first + count) : std::to_string(first) + " + " + std::to_string(count);
        fail<index_error>(where(stored), ": rows [", first, ", ", end, ") are not a non-empty range of its ", rows,
                          " rows [0, ", rows, ")");
    }
    const auto row_bytes = static_cast<std::uint64_t>(cols) * dtype_size(stored.dtype);
    if (!stored.fortran_order || rows == 1) {
        StoredTensor part = stored;
        part.shape = {std::int64_t{count}, cols};
        part.data = stored.data + static_cast<std::uint64_t>(first) * row_bytes;
        part.bytes = static_cast<std::uint64_t>(count) * row_bytes;
        return read_tensor<T>(part, 2, options);
    }
    // Column-major: element (i, j) is element i + rows * j of the stored bytes.
    const auto values = static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(cols);
    const std::shared_ptr<const void> memory = allocate_copy<T>(stored, values);
    T* out = static_cast<T*>(const_cast<void*>(memory.get()));
    const bool swap = stored.big_endian == host_is_little_endian();
    std::size_t k = 0;
    for (std::int64_t i = first; i < std::int64_t{first} + count; ++i)
        for (std::int64_t j = 0; j < cols; ++j)
            out[k++] = convert_element<T>(stored.dtype, swap, stored.data, static_cast<std::size_t>(i + rows * j));
    return Tensor<T>(*stored.file, *stored.name, {count, static_cast<Index>(cols)}, out, memory, false);
}

/// Reads a token table: the whole rank-2 tensor without a shard; with one, the tensor must have
/// the shard's vocab_size rows, and only the shard's rows are read (read_rows).
template <typename T>
Tensor<T> read_token_table(const StoredTensor& stored, const std::optional<VocabularyShard>& shard,
                           const ReadOptions& options) {
    if (!shard) return read_tensor<T>(stored, 2, options);
    shard->require_valid("TokenEmbeddingOptions::shard");
    check_rank(stored, 2);
    if (stored.shape[0] != shard->vocab_size)
        fail<shape_error>(where(stored), ": has ", stored.shape[0], " rows (shape ", shape_text(stored.shape),
                          "), but TokenEmbeddingOptions::shard is part of a vocabulary of ", shard->vocab_size,
                          " ids: the table of the whole vocabulary has one row per id");
    return read_rows<T>(stored, shard->first, shard->rows, options);
}

/// Throws for element `index` of the stored bytes (at row-major position `k`), which has no
/// int64: a BOOL byte other than 0 and 1, or a U64 above 2^63 - 1.
[[noreturn]] inline void fail_integer(const StoredTensor& stored, std::size_t index, std::uint64_t k) {
    const std::string at = position_text(stored.shape, k);
    if (stored.dtype == Dtype::boolean)
        fail<format_error>(where(stored), ": the bool at ", at, " is the byte ",
                           static_cast<unsigned>(stored.data[index]), ", not 0 (false) or 1 (true)");
    std::uint64_t value = 0;
    std::memcpy(&value, stored.data + index * 8, 8);
    if (stored.big_endian == host_is_little_endian()) value = byte_swap(value);
    fail<value_error>(where(stored), ": the ", stored_dtype_text(stored), " value ", value, " at ", at,
                      " is above 9223372036854775807, the largest int64, which integers are read as");
}

/// Throws, for a reader of integers (`function`: "integers", "ids" or "mask"), unless the
/// stored dtype holds integers.
inline void require_integers(const StoredTensor& stored, const char* function) {
    if (!is_integer(stored.dtype))
        fail<format_error>(where(stored), ": holds floating-point values (", stored_dtype_text(stored),
                           "), not integers: ", reader_name(stored), "::", function,
                           "() reads I8 .. I64, U8 .. U64 and BOOL; read this one with tensor<T>(), "
                           "matrix<T>() or vector<T>()");
}

/// Reads a stored tensor of integers or booleans (rank 0 to 4) as int64: a view of the file
/// when it is I64 in host order, C order and aligned; else an owned, widened copy.
inline Tensor<std::int64_t> read_integers(const StoredTensor& stored, const ReadOptions& options,
                                          const char* function = "integers") {
    require_integers(stored, function);
    check_rank(stored, -1);
    const auto stored_rank = static_cast<int>(stored.shape.size());
    std::vector<Index> shape(stored.shape.begin(), stored.shape.end());
    const std::uint64_t count = stored.bytes / dtype_size(stored.dtype);
    const bool swap = dtype_size(stored.dtype) > 1 && stored.big_endian == host_is_little_endian();
    const bool c_order = !stored.fortran_order || stored_rank <= 1;
    if (!options.copy && stored.dtype == Dtype::i64 && !swap && c_order &&
        reinterpret_cast<std::uintptr_t>(stored.data) % alignof(std::int64_t) == 0) {
        return Tensor<std::int64_t>(*stored.file, *stored.name, std::move(shape),
                                    reinterpret_cast<const std::int64_t*>(stored.data), stored.owner, true);
    }
    // count is backed by the file's bytes; the copy is at most 8 times as large (U8 to I64).
    const std::shared_ptr<const void> memory = allocate_copy<std::int64_t>(stored, count);
    auto* out = static_cast<std::int64_t*>(const_cast<void*>(memory.get()));
    if (c_order) {
        const std::size_t bad = convert_integers(stored.dtype, swap, stored.data, out, static_cast<std::size_t>(count));
        if (bad != count) fail_integer(stored, bad, bad);
    } else {
        visit_fortran_order(stored, [&](std::size_t k, std::size_t index) {
            if (!convert_integer(stored.dtype, swap, stored.data, index, out[k])) fail_integer(stored, index, k);
        });
    }
    return Tensor<std::int64_t>(*stored.file, *stored.name, std::move(shape), out, memory, false);
}

/// The rows and columns of ids or a mask: rank 2 as it stands (batch x seq), rank 1 as one row.
inline void id_matrix_shape(const StoredTensor& stored, const char* function, Index& rows, Index& cols) {
    const std::size_t rank = stored.shape.size();
    if (rank != 1 && rank != 2)
        fail<shape_error>(where(stored), ": has rank ", rank, " (shape ", shape_text(stored.shape), "); ",
                          reader_name(stored), "::", function,
                          "() reads rank 2 (batch x seq) or rank 1 (one sequence, read as 1 x n); "
                          "read other ranks with integers()");
    rows = rank == 2 ? static_cast<Index>(stored.shape[0]) : 1;
    cols = static_cast<Index>(stored.shape[rank - 1]);
}

/// Reads stored integers of rank 1 or 2 as a batch x seq IdMatrix (an owned copy).
inline IdMatrix read_ids(const StoredTensor& stored) {
    require_integers(stored, "ids");
    Index rows = 0, cols = 0;
    id_matrix_shape(stored, "ids", rows, cols);
    const Tensor<std::int64_t> values = read_integers(stored, {}, "ids");
    return Eigen::Map<const IdMatrix>(values.data(), rows, cols);
}

/// Reads stored integers or booleans of rank 1 or 2, each 0 or 1, as a MaskMatrix.
inline MaskMatrix read_mask(const StoredTensor& stored) {
    require_integers(stored, "mask");
    Index rows = 0, cols = 0;
    id_matrix_shape(stored, "mask", rows, cols);
    const Tensor<std::int64_t> values = read_integers(stored, {}, "mask");
    MaskMatrix mask(rows, cols);
    for (Index k = 0; k < mask.size(); ++k) {
        const std::int64_t v = values.data()[k];
        if (v != 0 && v != 1)
            fail<value_error>(where(stored), ": the mask value ", v, " at ",
                              position_text(stored.shape, static_cast<std::uint64_t>(k)),
                              " is not 0 (padding) or 1 (a token)");
        mask.data()[k] = static_cast<std::uint8_t>(v);
    }
    return mask;
}

}  // namespace seqembed::io::detail
