/// @file io/detail/read_tensor.hpp
/// @brief The one path from a tensor's stored bytes to a Tensor<T>, shared by the readers of
///        every format: checks the rank and the conversion, views the bytes when it can, else
///        converts them into owned memory.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "../../detail/large_memory.hpp"
#include "../../error.hpp"
#include "../errors.hpp"
#include "../tensor.hpp"
#include "convert.hpp"

namespace seqembed::io::detail {

using seqembed::detail::fail;

/// Where a tensor's values lie in a file and how they are stored.
struct StoredTensor {
    const std::string* file;           // for messages
    const std::string* name;           // for messages ("array" for .npy)
    Dtype dtype;
    bool big_endian = false;
    bool fortran_order = false;
    std::vector<std::int64_t> shape;   // validated: the product times the size is `bytes`
    const unsigned char* data;         // first byte
    std::uint64_t bytes;
    std::shared_ptr<const void> owner; // keeps data alive
};

inline std::string shape_text(const std::vector<std::int64_t>& shape) {
    std::ostringstream text;
    text << '[';
    for (std::size_t i = 0; i < shape.size(); ++i) text << (i ? ", " : "") << shape[i];
    text << ']';
    return text.str();
}

/// The prefix of a message about a tensor: "<file>: tensor '<name>'" (just the file for .npy).
inline std::string where(const StoredTensor& stored) {
    return *stored.name == "array" ? *stored.file : *stored.file + ": tensor '" + *stored.name + "'";
}

/// Reads a stored tensor as T. `rank` 0 accepts ranks 1 to 4, else exactly that rank.
template <typename T>
Tensor<T> read_tensor(const StoredTensor& stored, int rank, const ReadOptions& options) {
    const auto stored_rank = static_cast<int>(stored.shape.size());
    if (rank != 0 && stored_rank != rank)
        fail<shape_error>(where(stored), ": has rank ", stored_rank, " (shape ",
                          shape_text(stored.shape), "), ", rank == 1 ? "a vector" : "a matrix",
                          " needs rank ", rank, " (a tensor is never reshaped)");
    if (stored_rank < 1 || stored_rank > 4)
        fail<shape_error>(where(stored), ": has rank ", stored_rank, " (shape ",
                          shape_text(stored.shape), "); seqembed reads ranks 1 to 4");
    constexpr Dtype to = dtype_of<T>();
    if (!options.allow_narrowing && !is_exact_conversion(stored.dtype, to))
        fail<value_error>(where(stored), ": reading ", dtype_name(stored.dtype), " as ",
                          dtype_name(to), " rounds values; set ReadOptions::allow_narrowing to "
                          "round them to nearest even");
    std::vector<Index> shape(stored.shape.begin(), stored.shape.end());
    const std::uint64_t count = stored.bytes / dtype_size(stored.dtype);
    const bool swap = stored.big_endian == host_is_little_endian();
    const bool c_order = !stored.fortran_order || stored_rank == 1;
    if (!options.copy && to == stored.dtype && !swap && c_order &&
        reinterpret_cast<std::uintptr_t>(stored.data) % alignof(T) == 0) {
        // Aligned, host order, same dtype: the file's bytes are the values.
        return Tensor<T>(*stored.file, *stored.name, std::move(shape),
                         reinterpret_cast<const T*>(stored.data), stored.owner, true);
    }
    // count is backed by the file's bytes; the copy is at most 4 times as large (F16 to F64).
    const std::size_t out_bytes = static_cast<std::size_t>(count) * sizeof(T);
    auto buffer = seqembed::detail::allocate_table_memory(out_bytes == 0 ? sizeof(T) : out_bytes);
    if (!buffer) fail<value_error>(where(stored), ": a copy of ", count, " values does not fit in memory");
    const std::shared_ptr<const void> memory(std::move(buffer));
    T* out = static_cast<T*>(const_cast<void*>(memory.get()));
    if (c_order) {
        convert_elements<T>(stored.dtype, swap, stored.data, out, static_cast<std::size_t>(count));
    } else {
        // Fortran order: element (i0, .., ik) lies at i0 + s0 * (i1 + s1 * (...)); walk the
        // output in row-major order and gather.
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
                        out[k++] = convert_element<T>(
                            stored.dtype, swap, stored.data,
                            static_cast<std::size_t>(a * stride[0] + b * stride[1] +
                                                     c * stride[2] + d * stride[3]));
    }
    return Tensor<T>(*stored.file, *stored.name, std::move(shape), out, std::move(memory), false);
}

}  // namespace seqembed::io::detail
