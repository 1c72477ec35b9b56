/// @file io/npy.hpp
/// @brief Reading and writing NumPy .npy files: NpyFile (memory-mapped, strictly validated,
///        versions 1.0, 2.0 and 3.0, little- and big-endian, C and Fortran order, floats, and
///        integers and bools read as int64 ids and masks) and save_npy.
///
/// The format: the magic "\x93NUMPY", two version bytes, the header length (2 bytes
/// little-endian in version 1.0, 4 in 2.0 and 3.0), a Python dict literal
/// {'descr': '<f4', 'fortran_order': False, 'shape': (rows, cols), } padded with spaces and
/// ended by a newline so that the data starts at a multiple of 64 bytes, then the data. The
/// dict is read by a strict hand-written parser; nothing here needs Python or a JSON library.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../learned_positions.hpp"
#include "../token_embedding.hpp"
#include "detail/atomic_write.hpp"
#include "detail/npy_header.hpp"
#include "detail/path_name.hpp"
#include "detail/read_tensor.hpp"
#include "dtype.hpp"
#include "errors.hpp"
#include "mapped_file.hpp"
#include "tensor.hpp"

namespace seqembed::io {

/// @brief A .npy file, opened read-only and checked: one array of rank 0 to 4, of floats
///        ('<f2', '<f4', '<f8'), integers ('|i1', '<i2', '<i4', '<i8', '|u1', '<u2', '<u4',
///        '<u8') or bools ('|b1'), little- or big-endian.
///
/// Opening maps the file and checks the preamble, the dict (exactly the keys descr,
/// fortran_order and shape, each well-formed), the dtype, and that the file holds the bytes the
/// shape says. Bytes after the array are ignored, as numpy.load ignores them (repeated np.save
/// calls into one open file leave one array after another: the first is read); a truncated
/// array is refused. Reading gives a view of the file when the array is little-endian, in C
/// order, of the requested type and aligned; otherwise an owned copy, byte-swapped (big-endian
/// '>f4', '>i8'), reordered (fortran_order True: the loaded array equals the stored one, never
/// its transpose) or converted. Floats are read with tensor<T>(), matrix<T>(), vector<T>();
/// integers and bools with integers(), ids() and mask(), as int64, never as floats (and floats
/// never as integers). Messages name the file and the problem.
/// @code
/// auto positions = seqembed::io::NpyFile::open("pe.npy").learned_positions<float>();
/// auto table = seqembed::io::NpyFile::open("emb.npy").matrix<double>();   // F16/F32 widened
/// seqembed::IdMatrix ids = seqembed::io::NpyFile::open("input_ids.npy").ids();  // '<i8', '<i4'
/// seqembed::MaskMatrix mask = seqembed::io::NpyFile::open("attention_mask.npy").mask();
/// @endcode
class NpyFile {
public:
    /// @brief Opens and checks a file.
    /// @param path the file.
    /// @param options mapping and the header length cap.
    /// @return the opened file.
    /// @throws file_error if it cannot be opened or read; format_error if it is not a valid
    ///         .npy file of a supported dtype.
    static NpyFile open(const std::filesystem::path& path, const OpenOptions& options = {}) {
        return NpyFile(MappedFile::open(path, options.map), options);
    }
    /// @brief Checks .npy bytes already in memory (no copy).
    /// @param data the first byte.
    /// @param size how many bytes.
    /// @param name what messages call them.
    /// @param owner keeps data alive for what is read from it; null: the caller does.
    /// @param options the header length cap.
    /// @return the parsed file.
    /// @throws format_error if the bytes are not a valid .npy file.
    static NpyFile from_memory(const void* data, std::size_t size, std::string name = "<memory>",
                               std::shared_ptr<const void> owner = nullptr,
                               const OpenOptions& options = {}) {
        return NpyFile(MappedFile::from_memory(data, size, std::move(name), std::move(owner)), options);
    }

    /// @brief The file's path, as messages show it.
    /// @return the path (or the name given to from_memory).
    const std::string& path() const noexcept { return m_file.name(); }
    /// @brief Whether the file is memory-mapped.
    /// @return false when it was read into memory.
    bool is_mapped() const noexcept { return m_file.is_mapped(); }
    /// @brief The format version's major number.
    /// @return 1, 2 or 3.
    int version() const noexcept { return m_header.major; }
    /// @brief The dtype as written.
    /// @return "<f4", ">f8", ...
    const std::string& descr() const noexcept { return m_header.descr; }
    /// @brief The stored element type.
    /// @return F16, F32, F64, I8 .. I64, U8 .. U64 or BOOL.
    Dtype dtype() const noexcept { return m_header.dtype; }
    /// @brief Whether the values are stored big-endian ('>').
    /// @return true for '>f2', '>f4', '>f8', '>i8', ...; false for one-byte types ('|u1').
    bool big_endian() const noexcept { return m_header.big_endian; }
    /// @brief Whether the values are stored in Fortran (column-major) order.
    /// @return the header's fortran_order.
    bool fortran_order() const noexcept { return m_header.fortran_order; }
    /// @brief The array's dimensions.
    /// @return the shape, outermost first (empty for a scalar).
    const std::vector<std::int64_t>& shape() const noexcept { return m_header.shape; }
    /// @brief Where the data starts in the file.
    /// @return the preamble plus the header length (a multiple of 64 in files NumPy writes).
    std::uint64_t data_offset() const noexcept { return m_header.data_offset; }
    /// @brief How many bytes follow the array (another array np.save'd into the same file, or
    ///        anything else): ignored, as numpy.load ignores them.
    /// @return 0 for a file of one array, as numpy.save writes it.
    std::uint64_t trailing_bytes() const noexcept { return m_header.trailing_bytes; }

    /// @brief Reads the array of floats (rank 0 to 4; a scalar has shape {} and one value) as
    ///        T: a view when it can be, else a copy (see the class).
    /// @tparam T float, double, Eigen::half or Eigen::bfloat16.
    /// @param options narrowing and copy.
    /// @return the tensor, keeping the file's bytes (or its copy) alive.
    /// @throws format_error if the array holds integers or bools (read them with integers(),
    ///         ids() or mask()); shape_error for a rank above 4; value_error for a narrowing
    ///         conversion the options do not allow.
    template <typename T>
    Tensor<T> tensor(const ReadOptions& options = {}) const { return read<T>(-1, options); }
    /// @brief Reads a rank-2 array as T.
    /// @tparam T the element type.
    /// @param options narrowing and copy.
    /// @return the tensor; its matrix() is the view.
    /// @throws shape_error if the rank is not 2; as tensor() else.
    template <typename T>
    Tensor<T> matrix(const ReadOptions& options = {}) const { return read<T>(2, options); }
    /// @brief Reads rows [first, first + count) of a rank-2 array as T, looking at no other row:
    ///        a view of those rows' bytes when they can be viewed (C order, as matrix()), else a
    ///        converted copy of those rows alone (a Fortran-order array's rows are strided: always
    ///        a copy, the loaded rows equal to the stored ones).
    /// @tparam T the element type.
    /// @param first the first row, in [0, rows).
    /// @param count how many rows, > 0, with first + count <= rows.
    /// @param options narrowing and copy.
    /// @return the rows, shape {count, cols}.
    /// @throws index_error for a range that is empty or not inside [0, rows); shape_error if the
    ///         rank is not 2; as tensor() else.
    template <typename T>
    Tensor<T> matrix_rows(Index first, Index count, const ReadOptions& options = {}) const {
        require_element_type<T>();
        return detail::read_rows<T>(stored(), first, count, options);
    }
    /// @brief Reads a rank-1 array as T.
    /// @tparam T the element type.
    /// @param options narrowing and copy.
    /// @return the tensor; its vector() is the view.
    /// @throws shape_error if the rank is not 1; as tensor() else.
    template <typename T>
    Tensor<T> vector(const ReadOptions& options = {}) const { return read<T>(1, options); }

    /// @brief Reads an array of integers or bools (rank 0 to 4) as int64: a view of the file
    ///        for '<i8' in C order and aligned, else a widened copy (bools read as 0 and 1).
    /// @param options copy (narrowing does not apply: every value is read exactly).
    /// @return the tensor; its matrix() (rank 2) is a Map of an IdMatrix, scalar() a scalar's
    ///         value.
    /// @throws format_error if the array holds floats (read them with tensor<T>()), or a bool
    ///         byte is not 0 or 1; value_error for a '<u8' value above 2^63 - 1 (named with its
    ///         position, never wrapped); shape_error for a rank above 4.
    Tensor<std::int64_t> integers(const ReadOptions& options = {}) const {
        return detail::read_integers(stored(), options);
    }
    /// @brief Reads token ids (input_ids, position_ids, token_type_ids) as a batch x seq matrix:
    ///        rank 2 as it stands; rank 1 as one sequence, 1 x n. An owned copy, widened to int64
    ///        from any integer dtype.
    /// @return the ids, for any forward of seqembed.
    /// @throws format_error if the array holds floats; shape_error unless the rank is 1 or 2
    ///         (other ranks: integers()); value_error for a '<u8' value above 2^63 - 1.
    IdMatrix ids() const { return detail::read_ids(stored()); }
    /// @brief Reads an attention mask (bool, uint8, int64, ...; rank 2, or rank 1 as 1 x n) as
    ///        0/1 bytes: what Padding::from_mask takes.
    /// @return the mask, an owned copy.
    /// @throws format_error if the array holds floats; shape_error unless the rank is 1 or 2;
    ///         value_error for a value other than 0 and 1, named with its position.
    MaskMatrix mask() const { return detail::read_mask(stored()); }

    /// @brief A token embedding over the (rank-2) array, viewing the file or a converted copy,
    ///        which it keeps alive. With options.shard, the array is the whole vocabulary's table
    ///        and only the shard's rows are read (matrix_rows).
    /// @tparam Scalar the output type.
    /// @tparam Storage the table's type.
    /// @param options scale, padding_idx, check_finite, shard.
    /// @param read narrowing and copy.
    /// @return the embedding.
    /// @throws as matrix() (matrix_rows() with a shard), and as TokenEmbedding::view; with a
    ///         shard, shape_error for an array whose rows are not shard->vocab_size.
    template <typename Scalar = float, typename Storage = Scalar>
    TokenEmbedding<Scalar, Storage> token_embedding(const TokenEmbeddingOptions& options = {},
                                                    const ReadOptions& read = {}) const {
        require_element_type<Storage>();
        const Tensor<Storage> table = detail::read_token_table<Storage>(stored(), options.shard, read);
        return TokenEmbedding<Scalar, Storage>::view(table.data(), table.shape()[0], table.shape()[1],
                                                     options, table.owner());
    }
    /// @brief A learned position table over the (rank-2) array, viewing the file or a converted
    ///        copy, which it keeps alive.
    /// @tparam Scalar float or double.
    /// @param options offset, check_finite.
    /// @param read narrowing and copy.
    /// @return the table.
    /// @throws as matrix(), and as LearnedPositionalEmbedding::view.
    template <typename Scalar = float>
    LearnedPositionalEmbedding<Scalar> learned_positions(const LearnedPositionsOptions& options = {},
                                                         const ReadOptions& read = {}) const {
        const Tensor<Scalar> table = matrix<Scalar>(read);
        return LearnedPositionalEmbedding<Scalar>::view(table.data(), table.shape()[0],
                                                        table.shape()[1], options, table.owner());
    }

private:
    NpyFile(MappedFile file, const OpenOptions& options)
        : m_file(std::move(file)),
          m_header(detail::read_npy_header(m_file.data(), m_file.size(), m_file.name(), options)) {}

    detail::StoredTensor stored() const {
        static const std::string array = "array";
        return {&m_file.name(), &array, m_header.dtype, m_header.big_endian, m_header.fortran_order,
                m_header.shape, m_file.data() + m_header.data_offset, m_header.data_bytes,
                m_file.owner(), &m_header.descr};
    }

    template <typename T>
    static constexpr void require_element_type() {
        static_assert(is_element_type_v<T>,
                      "seqembed::io::NpyFile: T must be float, double, Eigen::half or Eigen::bfloat16; "
                      "read integers and bools with integers(), ids() or mask()");
    }

    template <typename T>
    Tensor<T> read(int rank, const ReadOptions& options) const {
        require_element_type<T>();
        return detail::read_tensor<T>(stored(), rank, options);
    }

    MappedFile m_file;
    detail::NpyHeader m_header;
};

/// @brief Writes values of any shape (rank 0 to 4) as a .npy file, atomically (a temporary
///        file beside path, flushed, then renamed: never a partial file under path).
///
/// The bytes numpy.save (NumPy 1.23 and later) writes for the same array: version 1.0, little-endian,
/// C order, the dict {'descr': ..., 'fortran_order': False, 'shape': (...), } followed by room
/// for the first dimension to grow and by spaces and a newline so that the data starts at a
/// multiple of 64 bytes.
/// @tparam T float ('<f4'), double ('<f8') or Eigen::half ('<f2') (.npy has no bfloat16);
///         std::int8_t ('|i1'), std::int16_t ('<i2'), std::int32_t ('<i4'), std::int64_t ('<i8'),
///         their unsigned forms ('|u1' .. '<u8') or bool ('|b1').
/// @param path the file to write (replaced if it exists).
/// @param data the values in row-major order.
/// @param shape the dimensions.
/// @throws value_error for a negative dimension, a rank above 4 or a null data with values;
///         file_error if the file cannot be written.
template <typename T>
void save_npy(const std::filesystem::path& path, const T* data, const std::vector<std::int64_t>& shape);

/// @brief Writes a matrix as a rank-2 .npy file (rows, cols), atomically; see the overload
///        above. A row-major contiguous matrix is written as it lies; anything else (a
///        column-major matrix, a block, an expression) is first copied into row-major order, so
///        that the file's array equals the matrix.
/// @tparam Derived an Eigen dense type of float, double, Eigen::half, bool or a fixed-width
///         integer (an IdMatrix is written as '<i8', a MaskMatrix as '|u1').
/// @param path the file to write.
/// @param matrix the values.
/// @throws file_error if the file cannot be written.
template <typename Derived>
void save_npy(const std::filesystem::path& path, const Eigen::DenseBase<Derived>& matrix);

/// @brief Everything save_npy writes, as bytes in memory.
/// @tparam T a type of save_npy: float, double, Eigen::half, bool or a fixed-width integer.
/// @param data the values in row-major order.
/// @param shape the dimensions (rank 0 to 4).
/// @return the file's bytes.
/// @throws value_error as save_npy.
template <typename T>
std::string serialize_npy(const T* data, const std::vector<std::int64_t>& shape);

// ---------------------------------------------------------------------------------------------
// Implementation

namespace detail {

/// The descr numpy.save writes for T ('|' for one byte, where byte order does not apply).
template <typename T>
constexpr const char* npy_descr() noexcept {
    if constexpr (std::is_same_v<T, float>) return "<f4";
    else if constexpr (std::is_same_v<T, double>) return "<f8";
    else if constexpr (std::is_same_v<T, Eigen::half>) return "<f2";
    else if constexpr (std::is_same_v<T, bool>) return "|b1";
    else if constexpr (std::is_same_v<T, std::int8_t>) return "|i1";
    else if constexpr (std::is_same_v<T, std::int16_t>) return "<i2";
    else if constexpr (std::is_same_v<T, std::int32_t>) return "<i4";
    else if constexpr (std::is_same_v<T, std::int64_t>) return "<i8";
    else if constexpr (std::is_same_v<T, std::uint8_t>) return "|u1";
    else if constexpr (std::is_same_v<T, std::uint16_t>) return "<u2";
    else if constexpr (std::is_same_v<T, std::uint32_t>) return "<u4";
    else return "<u8";
}

template <typename T>
std::string npy_header(const std::vector<std::int64_t>& shape, std::uint64_t& bytes, const std::string& file,
                       const T* data) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Eigen::half> ||
                      is_integer_element_type_v<T>,
                  "seqembed::io::save_npy<T>: T must be float, double, Eigen::half (.npy has no bfloat16), "
                  "bool or a fixed-width integer (std::int8_t .. std::uint64_t)");
    static_assert(sizeof(T) == dtype_size(dtype_of<T>()), "seqembed::io::save_npy<T>: bool must be one byte");
    if (!host_is_little_endian())
        seqembed::detail::fail<value_error>(file, ": writing on a big-endian machine is not supported");
    if (shape.size() > 4)
        seqembed::detail::fail<value_error>(file, ": cannot save an array of rank ", shape.size(),
                                            "; seqembed writes ranks 0 to 4");
    bytes = sizeof(T);
    std::string dims;
    for (std::int64_t d : shape) {
        if (d < 0) seqembed::detail::fail<value_error>(file, ": cannot save the negative dimension ", d);
        const auto n = static_cast<std::uint64_t>(d);
        if (n != 0 && bytes > (std::uint64_t{1} << 62) / n)
            seqembed::detail::fail<value_error>(file, ": cannot save shape ", shape_text(shape), ": it overflows");
        bytes *= n;
        dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    }
    if (shape.size() == 1) dims += ",";
    if (bytes != 0 && data == nullptr)
        seqembed::detail::fail<value_error>(file, ": cannot save values from a null pointer");
    const char* descr = npy_descr<T>();
    std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
    // As NumPy (1.23 on) writes it: spare room for the first dimension to grow to 21 digits,
    // then spaces and a newline up to the next multiple of 64 (a whole 64 when already there).
    if (!shape.empty()) dict.append(21 - std::to_string(shape[0]).size(), ' ');
    const bool v2 = dict.size() + 1 + 64 + 10 > 65535;
    const std::size_t prelude = v2 ? 12 : 10;
    dict.append(64 - (prelude + dict.size() + 1) % 64, ' ');
    dict += '\n';
    std::string out("\x93NUMPY", 6);
    out += static_cast<char>(v2 ? 2 : 1);
    out += '\0';
    const auto length = static_cast<std::uint32_t>(dict.size());
    for (std::size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>((length >> (8 * i)) & 0xFF);
    return out + dict;
}

}  // namespace detail

template <typename T>
std::string serialize_npy(const T* data, const std::vector<std::int64_t>& shape) {
    std::uint64_t bytes = 0;
    std::string out = detail::npy_header<T>(shape, bytes, "<memory>", data);
    if (bytes != 0) out.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(bytes));
    return out;
}

template <typename Derived>
void save_npy(const std::filesystem::path& path, const Eigen::DenseBase<Derived>& matrix) {
    using T = typename Derived::Scalar;
    if constexpr (bool(Derived::Flags & Eigen::DirectAccessBit) && bool(Derived::IsRowMajor)) {
        if (matrix.derived().innerStride() == 1 &&
            (matrix.rows() <= 1 || matrix.derived().outerStride() == matrix.cols())) {
            save_npy<T>(path, matrix.derived().data(),
                        {static_cast<std::int64_t>(matrix.rows()), static_cast<std::int64_t>(matrix.cols())});
            return;
        }
    }
    const RowMatrix<T> rows = matrix;
    save_npy<T>(path, rows.data(), {static_cast<std::int64_t>(rows.rows()), static_cast<std::int64_t>(rows.cols())});
}

template <typename T>
void save_npy(const std::filesystem::path& path, const T* data, const std::vector<std::int64_t>& shape) {
    std::uint64_t bytes = 0;
    const std::string header = detail::npy_header<T>(shape, bytes, detail::path_name(path), data);
    detail::write_file_atomically(path, [&](detail::FileSink& sink) {
        sink.write(header.data(), header.size());
        if (bytes != 0) sink.write(data, static_cast<std::size_t>(bytes));
    });
}

}  // namespace seqembed::io
