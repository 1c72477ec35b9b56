/// @file io/safetensors.hpp
/// @brief Reading and writing safetensors files: SafetensorsFile (memory-mapped, strictly
///        validated, typed access by name, tables that keep the mapping alive) and
///        save_safetensors (deterministic bytes, written beside the target and renamed).
///
/// The format: an 8-byte little-endian header size N, N bytes of UTF-8 JSON mapping each tensor
/// name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets into the data buffer that
/// follows) plus an optional "__metadata__" object of strings, then the data buffer. Needs
/// nlohmann_json (the seqembed::io CMake target); `seqembed.hpp` does not include this header.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../detail/text/utf8.hpp"
#include "../learned_positions.hpp"
#include "../token_embedding.hpp"
#include "detail/atomic_write.hpp"
#include "detail/path_name.hpp"
#include "detail/read_tensor.hpp"
#include "detail/safetensors_header.hpp"
#include "dtype.hpp"
#include "errors.hpp"
#include "mapped_file.hpp"
#include "tensor.hpp"

namespace seqembed::io {

/// @brief A safetensors file, opened read-only: its tensors listed, read by name as typed
///        tensors or as seqembed tables.
///
/// Opening maps the file (no copy) and checks the whole header before anything is read: the
/// header size against the file and the cap, UTF-8 and JSON, every field of every tensor, the
/// dtype, shape and byte range of each against each other, and that the byte ranges tile the
/// data buffer exactly (no gap, no overlap, no extra bytes), as the reference implementation
/// requires. A file that breaks any of these throws format_error naming the file, the tensor and
/// the problem. Copies of a SafetensorsFile share the mapping; tensors and tables read from it
/// hold the mapping too, so they stay valid after the file object is gone.
/// @code
/// auto file = seqembed::io::SafetensorsFile::open("model.safetensors");
/// for (const auto& t : file.tensors()) std::cout << t.name << ' ' << t.dtype_name << '\n';
/// auto embedding = file.token_embedding<float>("model.embed_tokens.weight");   // a view
/// auto compact = file.token_embedding<float, Eigen::bfloat16>("wte", {}, {/*allow_narrowing=*/true});
/// auto batch = seqembed::io::SafetensorsFile::open("batch.safetensors");
/// seqembed::IdMatrix ids = batch.ids("input_ids");           // I64, I32, ... as batch x seq
/// seqembed::MaskMatrix mask = batch.mask("attention_mask");  // BOOL, U8, I64 as 0/1
/// @endcode
/// Floating-point tensors (F16, BF16, F32, F64) are read with tensor<T>(), matrix<T>() and
/// vector<T>(); integer and boolean tensors (I8 .. I64, U8 .. U64, BOOL) with integers(), ids()
/// and mask(), as int64. Neither is ever read as the other: asking for floats from integers, or
/// for ids from floats, throws format_error naming the tensor and the function to use.
class SafetensorsFile {
public:
    /// @brief Opens and checks a file.
    /// @param path the file.
    /// @param options mapping, header size cap and entry cap.
    /// @return the opened file.
    /// @throws file_error if it cannot be opened or read; format_error if it is not a valid
    ///         safetensors file.
    static SafetensorsFile open(const std::filesystem::path& path, const OpenOptions& options = {}) {
        return SafetensorsFile(MappedFile::open(path, options.map), options);
    }

    /// @brief Checks safetensors bytes already in memory (no copy).
    /// @param data the first byte.
    /// @param size how many bytes.
    /// @param name what messages call them.
    /// @param owner keeps data alive for the tensors and tables read from it; null: the caller
    ///        keeps data alive while any of them lives.
    /// @param options header size cap and entry cap.
    /// @return the parsed file.
    /// @throws format_error if the bytes are not a valid safetensors file.
    static SafetensorsFile from_memory(const void* data, std::size_t size,
                                       std::string name = "<memory>",
                                       std::shared_ptr<const void> owner = nullptr,
                                       const OpenOptions& options = {}) {
        return SafetensorsFile(MappedFile::from_memory(data, size, std::move(name), std::move(owner)),
                               options);
    }

    /// @brief The file's path, as messages show it.
    /// @return the path given to open (or the name given to from_memory).
    const std::string& path() const noexcept { return m_file.name(); }
    /// @brief Whether the file is memory-mapped.
    /// @return false when it was read into memory (OpenOptions::map off, or mapping failed).
    bool is_mapped() const noexcept { return m_file.is_mapped(); }
    /// @brief The file's bytes.
    /// @return the mapping (or buffer) shared by everything read from this file.
    const MappedFile& bytes() const noexcept { return m_file; }
    /// @brief The header size N.
    /// @return the JSON header's length in bytes; the data buffer starts at 8 + N.
    std::uint64_t header_size() const noexcept { return m_header.header_bytes; }

    /// @brief Every tensor, in the order of their bytes in the file.
    /// @return name, dtype, shape and byte range of each.
    const std::vector<TensorInfo>& tensors() const noexcept { return m_header.tensors; }
    /// @brief The `__metadata__` strings.
    /// @return the metadata, sorted by key (empty when the header has none).
    const std::map<std::string, std::string>& metadata() const noexcept { return m_header.metadata; }
    /// @brief Whether the file has a tensor of that name.
    /// @param name the tensor's name.
    /// @return true if the header lists it.
    bool contains(std::string_view name) const { return m_index.count(std::string(name)) != 0; }
    /// @brief One tensor's entry.
    /// @param name the tensor's name.
    /// @return its dtype, shape and byte range.
    /// @throws index_error naming the file, the tensor and the names the file has.
    const TensorInfo& info(std::string_view name) const;

    /// @brief Reads a floating-point tensor of rank 0 to 4 as T (a scalar, shape [], has shape
    ///        {} and one value: Tensor::scalar()).
    ///
    /// A view of the file (no copy) when the stored dtype is T and its bytes are aligned for T;
    /// otherwise an owned copy, converted exactly (or, with allow_narrowing, rounded to nearest
    /// even). Misaligned bytes are copied, never read through a cast pointer.
    /// @tparam T float, double, Eigen::half or Eigen::bfloat16.
    /// @param name the tensor's name.
    /// @param options narrowing and copy.
    /// @return the tensor, keeping the file's bytes (or its copy) alive.
    /// @throws index_error if there is no such tensor; format_error if it holds integers or
    ///         bools (read them with integers(), ids() or mask()) or its dtype is not one
    ///         seqembed reads (F8_*, F4, ...); shape_error if its rank is above 4; value_error
    ///         if the conversion narrows and options do not allow it.
    template <typename T>
    Tensor<T> tensor(std::string_view name, const ReadOptions& options = {}) const {
        return read<T>(name, -1, options);
    }
    /// @brief Reads a rank-2 tensor as T (see tensor()).
    /// @tparam T the element type.
    /// @param name the tensor's name.
    /// @param options narrowing and copy.
    /// @return the tensor; its matrix() is the rows x cols view.
    /// @throws shape_error if the rank is not 2 (a tensor is never reshaped); as tensor() else.
    template <typename T>
    Tensor<T> matrix(std::string_view name, const ReadOptions& options = {}) const {
        return read<T>(name, 2, options);
    }
    /// @brief Reads rows [first, first + count) of a rank-2 tensor as T, looking at no other
    ///        row: a view of those rows' bytes in the file when the stored dtype is T (as
    ///        matrix()), else a copy of those rows alone, converted (a value of another row, a
    ///        NaN or one a narrowing read would round, is never read).
    /// @tparam T float, double, Eigen::half or Eigen::bfloat16.
    /// @param name the tensor's name.
    /// @param first the first row, in [0, rows).
    /// @param count how many rows, > 0, with first + count <= rows.
    /// @param options narrowing and copy.
    /// @return the rows, shape {count, cols}; row k is the tensor's row first + k.
    /// @throws index_error for a range that is empty or not inside [0, rows), naming the file,
    ///         the tensor, the range and its rows; shape_error if the rank is not 2; as tensor()
    ///         else.
    /// @code
    /// // Rank 1 of 4's part of a token table, without reading the other ranks' rows:
    /// auto file = seqembed::io::SafetensorsFile::open("model.safetensors");
    /// const auto shard = seqembed::VocabularyShard::of_rank(32000, 4, 1);
    /// auto rows = file.matrix_rows<float>("model.embed_tokens.weight", shard.first, shard.rows);
    /// @endcode
    template <typename T>
    Tensor<T> matrix_rows(std::string_view name, Index first, Index count, const ReadOptions& options = {}) const {
        require_element_type<T>();
        return detail::read_rows<T>(stored(name), first, count, options);
    }
    /// @brief Reads a rank-1 tensor as T (a LayerNorm weight, a bias; see tensor()).
    /// @tparam T the element type.
    /// @param name the tensor's name.
    /// @param options narrowing and copy.
    /// @return the tensor; its vector() is the view.
    /// @throws shape_error if the rank is not 1; as tensor() else.
    template <typename T>
    Tensor<T> vector(std::string_view name, const ReadOptions& options = {}) const {
        return read<T>(name, 1, options);
    }

    /// @brief Reads an integer or boolean tensor (I8 .. I64, U8 .. U64, BOOL; rank 0 to 4) as
    ///        int64: a view of the file for I64 in aligned bytes, else a widened copy (BOOL reads
    ///        as 0 and 1).
    /// @param name the tensor's name.
    /// @param options copy (narrowing does not apply: every value is read exactly).
    /// @return the tensor; its matrix() (rank 2) is a Map of an IdMatrix, scalar() a scalar's
    ///         value.
    /// @throws index_error if there is no such tensor; format_error if it holds floating-point
    ///         values (read them with tensor<T>()) or a BOOL byte is not 0 or 1; value_error for a
    ///         U64 value above 2^63 - 1 (named with its position, never wrapped); shape_error for a
    ///         rank above 4.
    Tensor<std::int64_t> integers(std::string_view name, const ReadOptions& options = {}) const {
        return detail::read_integers(stored(name), options);
    }
    /// @brief Reads token ids (input_ids, position_ids, token_type_ids) as a batch x seq matrix:
    ///        rank 2 as it stands; rank 1 as one sequence, 1 x n. An owned copy, widened to int64
    ///        from any integer dtype.
    /// @param name the tensor's name.
    /// @return the ids, for any forward of seqembed.
    /// @throws index_error if there is no such tensor; format_error if it holds floating-point
    ///         values; shape_error unless the rank is 1 or 2 (other ranks: integers());
    ///         value_error for a U64 value above 2^63 - 1.
    /// @code
    /// auto batch = seqembed::io::SafetensorsFile::open("batch.safetensors");
    /// auto x = pipeline.forward(batch.ids("input_ids"),
    ///                           seqembed::Padding::from_mask(batch.mask("attention_mask")));
    /// @endcode
    IdMatrix ids(std::string_view name) const { return detail::read_ids(stored(name)); }
    /// @brief Reads an attention mask (BOOL, U8, I64, ...; rank 2, or rank 1 as 1 x n) as 0/1
    ///        bytes: what Padding::from_mask takes.
    /// @param name the tensor's name.
    /// @return the mask, an owned copy.
    /// @throws index_error if there is no such tensor; format_error if it holds floating-point
    ///         values; shape_error unless the rank is 1 or 2; value_error for a value other than
    ///         0 and 1, named with its position.
    MaskMatrix mask(std::string_view name) const { return detail::read_mask(stored(name)); }

    /// @brief A token embedding over a rank-2 tensor: a view of the mapped file when the stored
    ///        dtype is Storage (no copy), else a converted copy. Either way the embedding (and
    ///        every copy of it, and a pipeline holding it) keeps the mapping alive.
    ///
    /// With options.shard, the tensor is the whole vocabulary's table (shard->vocab_size rows)
    /// and only the shard's rows are read (matrix_rows): viewed, or converted alone, and
    /// checked alone by check_finite.
    /// @tparam Scalar the output type.
    /// @tparam Storage the table's type (Scalar, or Eigen::bfloat16 / Eigen::half).
    /// @param name the tensor's name (vocab_size x d_model).
    /// @param options scale, padding_idx, check_finite, shard.
    /// @param read narrowing and copy.
    /// @return the embedding.
    /// @throws as matrix() (matrix_rows() with a shard), and as TokenEmbedding::view; with a
    ///         shard, shape_error for a tensor whose rows are not shard->vocab_size, naming both,
    ///         and value_error for a shard that is not part of a vocabulary.
    /// @code
    /// seqembed::TokenEmbeddingOptions options;
    /// options.shard = seqembed::VocabularySplit{4, 1}.of(32000);   // rank 1 of 4
    /// auto part = file.token_embedding<float>("model.embed_tokens.weight", options);
    /// @endcode
    template <typename Scalar = float, typename Storage = Scalar>
    TokenEmbedding<Scalar, Storage> token_embedding(std::string_view name,
                                                    const TokenEmbeddingOptions& options = {},
                                                    const ReadOptions& read = {}) const {
        require_element_type<Storage>();
        const Tensor<Storage> table = detail::read_token_table<Storage>(stored(name), options.shard, read);
        return TokenEmbedding<Scalar, Storage>::view(table.data(), table.shape()[0], table.shape()[1],
                                                     options, table.owner());
    }
    /// @brief A learned position table over a rank-2 tensor (max_positions x d_model), viewing
    ///        the mapped file or a converted copy, which it keeps alive.
    /// @tparam Scalar float or double.
    /// @param name the tensor's name.
    /// @param options offset, check_finite.
    /// @param read narrowing and copy.
    /// @return the table.
    /// @throws as matrix(), and as LearnedPositionalEmbedding::view.
    template <typename Scalar = float>
    LearnedPositionalEmbedding<Scalar> learned_positions(std::string_view name,
                                                         const LearnedPositionsOptions& options = {},
                                                         const ReadOptions& read = {}) const {
        const Tensor<Scalar> table = matrix<Scalar>(name, read);
        return LearnedPositionalEmbedding<Scalar>::view(table.data(), table.shape()[0],
                                                        table.shape()[1], options, table.owner());
    }

private:
    SafetensorsFile(MappedFile file, const OpenOptions& options)
        : m_file(std::move(file)),
          m_header(detail::read_safetensors_header(m_file.data(), m_file.size(), m_file.name(), options)) {
        m_index.reserve(m_header.tensors.size());
        for (std::size_t i = 0; i < m_header.tensors.size(); ++i) m_index.emplace(m_header.tensors[i].name, i);
    }

    detail::StoredTensor stored(std::string_view name) const;

    template <typename T>
    static constexpr void require_element_type() {
        static_assert(is_element_type_v<T>,
                      "seqembed::io::SafetensorsFile: T must be float, double, Eigen::half or "
                      "Eigen::bfloat16; read integer and BOOL tensors with integers(), ids() or mask()");
    }

    template <typename T>
    Tensor<T> read(std::string_view name, int rank, const ReadOptions& options) const {
        require_element_type<T>();
        return detail::read_tensor<T>(stored(name), rank, options);
    }

    MappedFile m_file;
    detail::SafetensorsHeader m_header;
    std::unordered_map<std::string, std::size_t> m_index;
};

/// @brief A token embedding from a tensor of a safetensors file, in one line; the embedding
///        keeps the file mapped for as long as it (or a copy, or a pipeline) lives.
/// @tparam Scalar the output type.
/// @tparam Storage the table's type.
/// @param path the file.
/// @param tensor the tensor's name.
/// @param options scale, padding_idx, check_finite.
/// @param read narrowing and copy.
/// @return the embedding.
/// @throws as SafetensorsFile::open and SafetensorsFile::token_embedding.
/// @code
/// auto embedding = seqembed::io::token_embedding_from_file<float>("model.safetensors", "wte.weight");
/// @endcode
template <typename Scalar = float, typename Storage = Scalar>
TokenEmbedding<Scalar, Storage> token_embedding_from_file(const std::filesystem::path& path,
                                                          std::string_view tensor,
                                                          const TokenEmbeddingOptions& options = {},
                                                          const ReadOptions& read = {}) {
    return SafetensorsFile::open(path).token_embedding<Scalar, Storage>(tensor, options, read);
}

/// @brief A learned position table from a tensor of a safetensors file, in one line (it keeps
///        the file mapped).
/// @tparam Scalar float or double.
/// @param path the file.
/// @param tensor the tensor's name.
/// @param options offset, check_finite.
/// @param read narrowing and copy.
/// @return the table.
/// @throws as SafetensorsFile::open and SafetensorsFile::learned_positions.
template <typename Scalar = float>
LearnedPositionalEmbedding<Scalar> learned_positions_from_file(
    const std::filesystem::path& path, std::string_view tensor,
    const LearnedPositionsOptions& options = {}, const ReadOptions& read = {}) {
    return SafetensorsFile::open(path).learned_positions<Scalar>(tensor, options, read);
}

/// @brief A tensor to write: a name, a dtype, a shape and the values, viewed or held.
///
/// Built from an Eigen matrix (rank 2; viewed when it is row-major and contiguous, else copied
/// into row-major order), from a Tensor read from a file (held), or from a pointer and a shape
/// of rank 0 to 4 (viewed). A viewed value must stay alive and unchanged until it is written.
/// The dtype is the element type's: float F32, double F64, Eigen::bfloat16 BF16, Eigen::half
/// F16, std::int64_t I64 (an IdMatrix), std::int32_t I32, std::int16_t I16, std::int8_t I8,
/// std::uint8_t U8 (a MaskMatrix) .. std::uint64_t U64, bool BOOL (cast first, e.g.
/// `m.cast<Eigen::bfloat16>()`, to store another).
class NamedTensor {
public:
    /// @brief A rank-2 tensor of an Eigen matrix or expression.
    /// @tparam Derived an Eigen dense type of float, double, Eigen::half, Eigen::bfloat16, bool
    ///         or a fixed-width integer.
    /// @param name the tensor's name.
    /// @param values its values; a row-major contiguous matrix is viewed, anything else copied.
    template <typename Derived>
    NamedTensor(std::string name, const Eigen::DenseBase<Derived>& values)
        : m_name(std::move(name)), m_dtype(dtype_of<typename Derived::Scalar>()),
          m_shape{static_cast<std::int64_t>(values.rows()), static_cast<std::int64_t>(values.cols())} {
        using T = typename Derived::Scalar;
        if constexpr (bool(Derived::Flags & Eigen::DirectAccessBit) && bool(Derived::IsRowMajor)) {
            if (values.derived().innerStride() == 1 &&
                (values.rows() <= 1 || values.derived().outerStride() == values.cols())) {
                m_data = values.derived().data();
                return;
            }
        }
        auto copy = std::make_shared<RowMatrix<T>>(values);
        m_data = copy->data();
        m_keep = std::move(copy);
    }
    /// @brief A tensor read from a file, written with its own shape and dtype (held, not copied).
    /// @tparam T its element type.
    /// @param name the name to write it under.
    /// @param tensor the tensor.
    template <typename T>
    NamedTensor(std::string name, const Tensor<T>& tensor)
        : m_name(std::move(name)), m_dtype(dtype_of<T>()),
          m_shape(tensor.shape().begin(), tensor.shape().end()), m_data(tensor.data()),
          m_keep(tensor.owner()) {}
    /// @brief A tensor of any shape over values the caller keeps alive until it is written.
    /// @tparam T float, double, Eigen::half, Eigen::bfloat16, bool or a fixed-width integer.
    /// @param name the tensor's name.
    /// @param data its values in row-major order.
    /// @param shape its dimensions (rank 0 to 4, each >= 0).
    /// @return the tensor.
    /// @throws value_error for a negative dimension, a rank above 4, or a null data with values.
    template <typename T>
    static NamedTensor view(std::string name, const T* data, std::vector<std::int64_t> shape) {
        NamedTensor tensor(std::move(name), dtype_of<T>(), std::move(shape), data);
        tensor.check_shape();
        return tensor;
    }

    /// @brief The name.
    /// @return the name it is written under.
    const std::string& name() const noexcept { return m_name; }
    /// @brief The dtype.
    /// @return the dtype of its element type.
    Dtype dtype() const noexcept { return m_dtype; }
    /// @brief The dimensions.
    /// @return the shape written to the header.
    const std::vector<std::int64_t>& shape() const noexcept { return m_shape; }
    /// @brief The values.
    /// @return the first value's bytes.
    const void* data() const noexcept { return m_data; }
    /// @brief The size of the values.
    /// @return product of the shape x the dtype's size, in bytes.
    std::uint64_t byte_size() const noexcept {
        std::uint64_t n = dtype_size(m_dtype);
        for (std::int64_t d : m_shape) n *= static_cast<std::uint64_t>(d);
        return n;
    }

private:
    NamedTensor(std::string name, Dtype dtype, std::vector<std::int64_t> shape, const void* data)
        : m_name(std::move(name)), m_dtype(dtype), m_shape(std::move(shape)), m_data(data) {}

    void check_shape() const {
        if (m_shape.size() > 4)
            seqembed::detail::fail<value_error>("tensor '", m_name, "' to save has rank ", m_shape.size(),
                                                "; seqembed writes ranks 0 to 4");
        std::uint64_t n = 1;
        for (std::int64_t d : m_shape) {
            if (d < 0)
                seqembed::detail::fail<value_error>("tensor '", m_name, "' to save has the negative dimension ", d);
            const auto dim = static_cast<std::uint64_t>(d);
            if (dim != 0 && n > (std::uint64_t{1} << 62) / dim)
                seqembed::detail::fail<value_error>("tensor '", m_name, "' to save: shape ",
                                                    detail::shape_text(m_shape), " overflows");
            n *= dim;
        }
        if (n != 0 && m_data == nullptr)
            seqembed::detail::fail<value_error>("tensor '", m_name, "' to save has no data (null pointer)");
    }

    std::string m_name;
    Dtype m_dtype;
    std::vector<std::int64_t> m_shape;
    const void* m_data = nullptr;
    std::shared_ptr<const void> m_keep;
};

/// @brief Writes tensors and metadata as a safetensors file, atomically.
///
/// The layout is deterministic, the reference writer's: the header's JSON is compact, with
/// "__metadata__" first (sorted by key) and then the tensors in the order of their bytes, which
/// is the reference's dtype order, descending (U64, I64, F64, F32, U32, I32, BF16, F16, U16, I16,
/// I8, U8, BOOL: element size never grows), then by name (byte order); each entry
/// is {"dtype", "shape", "data_offsets"}; the header is padded with spaces to a multiple of 8
/// bytes. So the data buffer starts 8-byte aligned and every tensor starts at a multiple of its
/// element size, with no padding between tensors (the format forbids gaps). The same input
/// gives the same bytes.
///
/// The bytes go to a temporary file beside path, which is flushed to disk and renamed to path:
/// a failure at any point (a bad path, a full disk) leaves no partial file under path, and a
/// file already there stays as it was.
/// @param path the file to write (replaced if it exists).
/// @param tensors the tensors; names must be distinct, valid UTF-8, and not "__metadata__".
/// @param metadata the `__metadata__` strings (valid UTF-8); none when empty.
/// @throws value_error for a duplicate, reserved or invalid name or metadata string, before
///         anything is written; file_error if the file cannot be written.
inline void save_safetensors(const std::filesystem::path& path, const std::vector<NamedTensor>& tensors,
                             const std::map<std::string, std::string>& metadata = {});

/// @brief Everything save_safetensors writes, as bytes in memory.
/// @param tensors the tensors (as save_safetensors).
/// @param metadata the `__metadata__` strings.
/// @return the file's bytes.
/// @throws value_error as save_safetensors.
inline std::string serialize_safetensors(const std::vector<NamedTensor>& tensors,
                                         const std::map<std::string, std::string>& metadata = {});

// ---------------------------------------------------------------------------------------------
// Implementation

inline const TensorInfo& SafetensorsFile::info(std::string_view name) const {
    const auto found = m_index.find(std::string(name));
    if (found != m_index.end()) return m_header.tensors[found->second];
    std::string names;
    std::size_t listed = 0;
    for (const TensorInfo& t : m_header.tensors) {
        if (listed == 20) {
            names += ", ... (" + std::to_string(m_header.tensors.size()) + " in all)";
            break;
        }
        names += (listed++ ? ", '" : "'") + t.name + "'";
    }
    seqembed::detail::fail<index_error>(path(), ": has no tensor '", name, "'; it has ",
                                        m_header.tensors.empty() ? "none" : names);
}

inline detail::StoredTensor SafetensorsFile::stored(std::string_view name) const {
    const TensorInfo& entry = info(name);
    const std::optional<Dtype> dtype = entry.dtype();
    if (!dtype)
        seqembed::detail::fail<format_error>(path(), ": tensor '", entry.name, "': unsupported dtype ",
                                             entry.dtype_name, " (seqembed reads F16, BF16, F32 and F64 "
                                             "as floats, I8 .. I64, U8 .. U64 and BOOL as integers)");
    return {&m_file.name(), &entry.name, *dtype, false, false, entry.shape,
            m_file.data() + entry.file_offset, entry.byte_size(), m_file.owner()};
}

namespace detail {

inline std::string json_string(const std::string& text, const std::string& file, const std::string& what) {
    if (seqembed::detail::first_invalid_utf8(text) != text.size())
        seqembed::detail::fail<value_error>(file, ": cannot save ", what, ": not valid UTF-8");
    return nlohmann::json(text).dump();
}

/// The writing order: the reference implementation's Dtype enum, descending (so element sizes
/// never grow and every tensor starts aligned), then name.
inline int dtype_order(Dtype dtype) noexcept {
    switch (dtype) {
        case Dtype::u64: return 0;
        case Dtype::i64: return 1;
        case Dtype::f64: return 2;
        case Dtype::f32: return 3;
        case Dtype::u32: return 4;
        case Dtype::i32: return 5;
        case Dtype::bf16: return 6;
        case Dtype::f16: return 7;
        case Dtype::u16: return 8;
        case Dtype::i16: return 9;
        case Dtype::i8: return 10;
        case Dtype::u8: return 11;
        case Dtype::boolean: return 12;
    }
    return 13;
}

/// A checked header and the tensors in writing order.
struct SafetensorsLayout {
    std::vector<const NamedTensor*> order;
    std::string header;  // JSON padded to a multiple of 8 bytes
};

/// Checks the names and metadata and lays the tensors out (throws before anything is written).
inline SafetensorsLayout safetensors_layout(const std::vector<NamedTensor>& tensors,
                                            const std::map<std::string, std::string>& metadata,
                                            const std::string& file) {
    if (!host_is_little_endian())
        seqembed::detail::fail<value_error>(file, ": writing on a big-endian machine is not supported");
    SafetensorsLayout layout;
    auto& order = layout.order;
    order.reserve(tensors.size());
    for (const NamedTensor& t : tensors) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](const NamedTensor* a, const NamedTensor* b) {
        const int da = dtype_order(a->dtype()), db = dtype_order(b->dtype());
        return da != db ? da < db : a->name() < b->name();
    });
    std::vector<const std::string*> names;
    names.reserve(order.size());
    for (const NamedTensor* t : order) {
        if (t->name() == "__metadata__")
            seqembed::detail::fail<value_error>(file, ": cannot save a tensor named '__metadata__' (the "
                                                "format reserves it)");
        names.push_back(&t->name());
    }
    std::sort(names.begin(), names.end(), [](const std::string* a, const std::string* b) { return *a < *b; });
    for (std::size_t i = 1; i < names.size(); ++i)
        if (*names[i] == *names[i - 1])
            seqembed::detail::fail<value_error>(file, ": cannot save two tensors named '", *names[i],
                                                "' (a name would duplicate an existing tensor)");
    std::string& header = layout.header;
    header = "{";
    if (!metadata.empty()) {
        header += "\"__metadata__\":{";
        bool first = true;
        for (const auto& [key, value] : metadata) {
            header += first ? "" : ",";
            header += json_string(key, file, "a metadata key") + ":" +
                      json_string(value, file, "the metadata value of '" + key + "'");
            first = false;
        }
        header += "}";
    }
    std::uint64_t offset = 0;
    for (const NamedTensor* t : order) {
        if (header.size() > 1) header += ",";
        header += json_string(t->name(), file, "a tensor name");
        header += ":{\"dtype\":\"";
        header += dtype_name(t->dtype());
        header += "\",\"shape\":[";
        for (std::size_t k = 0; k < t->shape().size(); ++k)
            header += (k ? "," : "") + std::to_string(t->shape()[k]);
        header += "],\"data_offsets\":[" + std::to_string(offset) + ",";
        offset += t->byte_size();
        header += std::to_string(offset) + "]}";
    }
    header += "}";
    header.append((8 - header.size() % 8) % 8, ' ');
    return layout;
}

template <typename Sink>
void write_safetensors(Sink& sink, const SafetensorsLayout& layout) {
    unsigned char size[8];
    const auto n = static_cast<std::uint64_t>(layout.header.size());
    for (int i = 0; i < 8; ++i) size[i] = static_cast<unsigned char>(n >> (8 * i));
    sink.write(size, 8);
    sink.write(layout.header.data(), layout.header.size());
    for (const NamedTensor* t : layout.order)
        if (t->byte_size() != 0) sink.write(t->data(), static_cast<std::size_t>(t->byte_size()));
}

}  // namespace detail

inline std::string serialize_safetensors(const std::vector<NamedTensor>& tensors,
                                         const std::map<std::string, std::string>& metadata) {
    const detail::SafetensorsLayout layout = detail::safetensors_layout(tensors, metadata, "<memory>");
    detail::StringSink sink;
    detail::write_safetensors(sink, layout);
    return std::move(sink.bytes);
}

inline void save_safetensors(const std::filesystem::path& path, const std::vector<NamedTensor>& tensors,
                             const std::map<std::string, std::string>& metadata) {
    // Every check runs before the file is created: a refused input leaves nothing behind.
    const detail::SafetensorsLayout layout = detail::safetensors_layout(tensors, metadata, detail::path_name(path));
    detail::write_file_atomically(path, [&](detail::FileSink& sink) { detail::write_safetensors(sink, layout); });
}

}  // namespace seqembed::io
