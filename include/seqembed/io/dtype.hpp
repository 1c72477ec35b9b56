/// @file io/dtype.hpp
/// @brief The element types seqembed reads from and writes to files, and their conversions.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>

#include <Eigen/Core>

namespace seqembed::io {

/// @brief An element type that seqembed reads and writes: IEEE half, bfloat16, float, double.
///
/// The names are those of the safetensors format ("F16", "BF16", "F32", "F64"); .npy files
/// spell them '<f2', '<f4', '<f8' (.npy has no bfloat16).
enum class Dtype {
    f16,   ///< IEEE 754 binary16, Eigen::half
    bf16,  ///< bfloat16, Eigen::bfloat16
    f32,   ///< IEEE 754 binary32, float
    f64,   ///< IEEE 754 binary64, double
};

/// @brief The safetensors name of a dtype.
/// @param dtype the dtype.
/// @return "F16", "BF16", "F32" or "F64".
constexpr const char* dtype_name(Dtype dtype) noexcept {
    switch (dtype) {
        case Dtype::f16: return "F16";
        case Dtype::bf16: return "BF16";
        case Dtype::f32: return "F32";
        case Dtype::f64: return "F64";
    }
    return "?";
}

/// @brief The size of one element.
/// @param dtype the dtype.
/// @return 2, 2, 4 or 8 bytes.
constexpr std::size_t dtype_size(Dtype dtype) noexcept {
    switch (dtype) {
        case Dtype::f16:
        case Dtype::bf16: return 2;
        case Dtype::f32: return 4;
        case Dtype::f64: return 8;
    }
    return 0;
}

/// @brief The dtype whose safetensors name is name, if seqembed reads it.
/// @param name a safetensors dtype name, case-sensitive ("F32", not "f32" or "float32").
/// @return the dtype, or std::nullopt for any other name.
constexpr std::optional<Dtype> dtype_from_name(std::string_view name) noexcept {
    if (name == "F16") return Dtype::f16;
    if (name == "BF16") return Dtype::bf16;
    if (name == "F32") return Dtype::f32;
    if (name == "F64") return Dtype::f64;
    return std::nullopt;
}

/// @brief Whether T is an element type of Dtype: float, double, Eigen::half or Eigen::bfloat16.
/// @tparam T the C++ type.
template <typename T>
inline constexpr bool is_element_type_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Eigen::half> ||
    std::is_same_v<T, Eigen::bfloat16>;

/// @brief The dtype of a C++ element type.
/// @tparam T float, double, Eigen::half or Eigen::bfloat16.
/// @return its dtype.
template <typename T>
constexpr Dtype dtype_of() noexcept {
    static_assert(is_element_type_v<T>,
                  "seqembed::io::dtype_of<T>: T must be float, double, Eigen::half or Eigen::bfloat16");
    if constexpr (std::is_same_v<T, float>) return Dtype::f32;
    else if constexpr (std::is_same_v<T, double>) return Dtype::f64;
    else if constexpr (std::is_same_v<T, Eigen::half>) return Dtype::f16;
    else return Dtype::bf16;
}

/// @brief Whether every value of `from` is exactly a value of `to` (the conversion is widening
///        or none): the same dtype, F16 or BF16 to F32 or F64, F32 to F64.
/// @param from the stored dtype.
/// @param to the requested dtype.
/// @return true when reading `from` as `to` never rounds; false for a narrowing conversion
///         (F64 to F32, F32 or F64 to BF16 or F16, F16 to BF16 and back), which a read performs
///         only when ReadOptions::allow_narrowing is set.
constexpr bool is_exact_conversion(Dtype from, Dtype to) noexcept {
    if (from == to) return true;
    switch (to) {
        case Dtype::f64: return true;
        case Dtype::f32: return from == Dtype::f16 || from == Dtype::bf16;
        default: return false;
    }
}

}  // namespace seqembed::io
