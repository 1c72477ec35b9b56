/// @file io/tensor.hpp
/// @brief Tensor<T>: a typed tensor read from a file (floating-point values, or integers as
///        int64), a view of the file's bytes or an owned, converted copy; ReadOptions: how it is
///        read.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../types.hpp"
#include "dtype.hpp"

namespace seqembed::io {

/// @brief How a tensor is read from a file.
struct ReadOptions {
    /// @brief Allow conversions that round: F64 to F32; F32 or F64 to BF16 or F16; F16 to BF16 and
    ///        back. Each value is rounded once to the nearest representable value, ties to even
    ///        (a double goes to bfloat16 or half through float rounded to odd, so it is rounded
    ///        once); values beyond the range become infinities, NaN stays NaN. Off (the default):
    ///        such a read throws value_error; widening conversions (F16, BF16 to F32, F64; F32 to
    ///        F64) are exact and always allowed.
    bool allow_narrowing = false;
    /// @brief Always return an owned copy, even when the stored bytes could be viewed.
    bool copy = false;
};

/// @brief A tensor read from a file: a rank 0 to 4 array of T in row-major (C) order.
///
/// Either a view of the file's bytes (no copy: the stored dtype is T, little-endian in C order
/// and aligned for T) or an owned copy converted from the stored dtype. Either way it holds
/// what keeps its values alive (the file mapping or the copy), shared with its copies and with
/// every table built from it, so it stays valid after the file object is gone.
///
/// A rank-0 tensor (a scalar: safetensors shape [], .npy shape ()) has shape {} and one value,
/// read with scalar(). A default-constructed Tensor has no values at all: rank 0, size 0 and a
/// null data().
/// @tparam T float, double, Eigen::half or Eigen::bfloat16 for floating-point tensors;
///         std::int64_t (TokenId) for integer and boolean tensors, which the readers' integers()
///         widen to int64.
/// @code
/// auto file = seqembed::io::SafetensorsFile::open("model.safetensors");
/// auto gamma = file.vector<float>("ln.weight");            // rank 1
/// auto table = file.matrix<float>("wte.weight");           // rank 2
/// Eigen::Map<const seqembed::RowMatrix<float>> m = table.matrix();
/// float scale = file.tensor<float>("logit_scale").scalar(); // rank 0
/// auto ids = file.integers("input_ids");                    // Tensor<std::int64_t>
/// @endcode
template <typename T>
class Tensor {
    static_assert(is_element_type_v<T> || std::is_same_v<T, std::int64_t>,
                  "seqembed::io::Tensor<T>: T must be float, double, Eigen::half, Eigen::bfloat16 "
                  "or std::int64_t (integer tensors are read as int64)");

public:
    /// @brief A tensor with no values (rank 0, size 0, null data()).
    Tensor() = default;

    /// @brief A tensor over values kept alive by owner (used by the readers).
    /// @param file the file's name, for messages.
    /// @param name the tensor's name, for messages.
    /// @param shape its dimensions, rank 0 to 4.
    /// @param data its first value.
    /// @param owner what keeps data alive.
    /// @param view whether data lies in the file's bytes.
    Tensor(std::string file, std::string name, std::vector<Index> shape, const T* data,
           std::shared_ptr<const void> owner, bool view)
        : m_file(std::move(file)), m_name(std::move(name)), m_shape(std::move(shape)),
          m_data(data), m_owner(std::move(owner)), m_view(view) {}

    /// @brief The file the tensor was read from.
    /// @return its path, as messages show it.
    const std::string& file() const noexcept { return m_file; }
    /// @brief The tensor's name in its file ("array" for a .npy file).
    /// @return the name.
    const std::string& name() const noexcept { return m_name; }
    /// @brief The dimensions, outermost first.
    /// @return rank() sizes.
    const std::vector<Index>& shape() const noexcept { return m_shape; }
    /// @brief The number of dimensions.
    /// @return 0 to 4 for a tensor read from a file (0 for a scalar); 0 for a default Tensor.
    Index rank() const noexcept { return static_cast<Index>(m_shape.size()); }
    /// @brief The number of values.
    /// @return the product of the dimensions: 1 for a scalar (rank 0) read from a file, 0 for a
    ///         default-constructed Tensor.
    Index size() const noexcept {
        if (m_data == nullptr) return 0;
        Index n = 1;
        for (Index d : m_shape) n *= d;
        return n;
    }
    /// @brief The first value; the values follow in row-major order.
    /// @return a pointer valid while this tensor, a copy of it or owner() lives.
    const T* data() const noexcept { return m_data; }
    /// @brief Whether the values are the file's bytes (no copy was made).
    /// @return true for a view of the mapped (or read) file, false for an owned copy.
    bool is_view() const noexcept { return m_view; }
    /// @brief What keeps the values alive: pass it to TokenEmbedding::view and friends.
    /// @return the shared owner of the file's bytes or of the copy.
    const std::shared_ptr<const void>& owner() const noexcept { return m_owner; }

    /// @brief The value of a scalar (a rank-0 tensor).
    /// @return the one value.
    /// @throws shape_error unless the rank is 0 and the tensor was read from a file.
    T scalar() const {
        if (rank() != 0 || m_data == nullptr)
            seqembed::detail::fail<shape_error>(m_file.empty() ? std::string("<empty tensor>") : m_file,
                                                ": tensor '", m_name, "' has rank ", rank(), " (", size(),
                                                " values), a scalar needs rank 0");
        return m_data[0];
    }
    /// @brief The tensor as a matrix.
    /// @return a shape()[0] x shape()[1] row-major view of the values (no copy).
    /// @throws shape_error unless the rank is 2.
    Eigen::Map<const RowMatrix<T>> matrix() const {
        if (rank() != 2)
            seqembed::detail::fail<shape_error>(m_file, ": tensor '", m_name, "' has rank ", rank(),
                                      ", a matrix needs rank 2");
        return {m_data, m_shape[0], m_shape[1]};
    }
    /// @brief The tensor as a vector.
    /// @return a shape()[0]-long view of the values (no copy).
    /// @throws shape_error unless the rank is 1.
    Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>> vector() const {
        if (rank() != 1)
            seqembed::detail::fail<shape_error>(m_file, ": tensor '", m_name, "' has rank ", rank(),
                                      ", a vector needs rank 1");
        return Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(m_data, m_shape[0]);
    }

private:
    std::string m_file;
    std::string m_name;
    std::vector<Index> m_shape;
    const T* m_data = nullptr;
    std::shared_ptr<const void> m_owner;
    bool m_view = false;
};

}  // namespace seqembed::io
