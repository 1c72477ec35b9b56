/// @file io/dtype.hpp
/// @brief The element types seqembed reads from and writes to files, and their conversions.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include <Eigen/Core>

namespace seqembed::io {

/// @brief An element type that seqembed reads and writes: IEEE half, bfloat16, float and double
///        (tables, read as Tensor<T>), and the integers and booleans of token ids and masks
///        (read as int64: SafetensorsFile::integers, ids, mask and NpyFile's same).
///
/// The names are those of the safetensors format ("F16", "BF16", "F32", "F64", "I8" .. "U64",
/// "BOOL"); .npy files spell them '<f2', '<f4', '<f8', '|i1', '<i2', '<i4', '<i8', '|u1', '<u2',
/// '<u4', '<u8', '|b1' (.npy has no bfloat16). The floating-point values come first, so their
/// numbers are those of earlier versions.
enum class Dtype {
    f16,      ///< IEEE 754 binary16, Eigen::half
    bf16,     ///< bfloat16, Eigen::bfloat16
    f32,      ///< IEEE 754 binary32, float
    f64,      ///< IEEE 754 binary64, double
    i8,       ///< std::int8_t
    i16,      ///< std::int16_t
    i32,      ///< std::int32_t
    i64,      ///< std::int64_t (torch.long: input_ids, position_ids, attention_mask)
    u8,       ///< std::uint8_t
    u16,      ///< std::uint16_t
    u32,      ///< std::uint32_t
    u64,      ///< std::uint64_t
    boolean,  ///< bool, one byte holding 0 or 1 (torch.bool, numpy's bool_)
};

/// @brief Whether a dtype holds integers (or booleans) rather than floating-point values.
/// @param dtype the dtype.
/// @return true for I8 .. U64 and BOOL, false for F16, BF16, F32 and F64.
constexpr bool is_integer(Dtype dtype) noexcept {
    switch (dtype) {
        case Dtype::f16:
        case Dtype::bf16:
        case Dtype::f32:
        case Dtype::f64: return false;
        case Dtype::i8:
        case Dtype::i16:
        case Dtype::i32:
        case Dtype::i64:
        case Dtype::u8:
        case Dtype::u16:
        case Dtype::u32:
        case Dtype::u64:
        case Dtype::boolean: return true;
    }
    return false;
}

/// @brief The safetensors name of a dtype.
/// @param dtype the dtype.
/// @return "F16", "BF16", "F32", "F64", "I8", "I16", "I32", "I64", "U8", "U16", "U32", "U64"
///         or "BOOL".
constexpr const char* dtype_name(Dtype dtype) noexcept {
    switch (dtype) {
        case Dtype::f16: return "F16";
        case Dtype::bf16: return "BF16";
        case Dtype::f32: return "F32";
        case Dtype::f64: return "F64";
        case Dtype::i8: return "I8";
        case Dtype::i16: return "I16";
        case Dtype::i32: return "I32";
        case Dtype::i64: return "I64";
        case Dtype::u8: return "U8";
        case Dtype::u16: return "U16";
        case Dtype::u32: return "U32";
        case Dtype::u64: return "U64";
        case Dtype::boolean: return "BOOL";
    }
    return "?";
}

/// @brief The size of one element.
/// @param dtype the dtype.
/// @return 1, 2, 4 or 8 bytes.
constexpr std::size_t dtype_size(Dtype dtype) noexcept {
    switch (dtype) {
        case Dtype::i8:
        case Dtype::u8:
        case Dtype::boolean: return 1;
        case Dtype::f16:
        case Dtype::bf16:
        case Dtype::i16:
        case Dtype::u16: return 2;
        case Dtype::f32:
        case Dtype::i32:
        case Dtype::u32: return 4;
        case Dtype::f64:
        case Dtype::i64:
        case Dtype::u64: return 8;
    }
    return 0;
}

/// @brief The dtype whose safetensors name is name, if seqembed reads it.
/// @param name a safetensors dtype name, case-sensitive ("F32", not "f32" or "float32").
/// @return the dtype, or std::nullopt for any other name (the format's F8_*, F6_*, F4, C64).
constexpr std::optional<Dtype> dtype_from_name(std::string_view name) noexcept {
    constexpr Dtype all[] = {Dtype::f16, Dtype::bf16, Dtype::f32, Dtype::f64, Dtype::i8,
                             Dtype::i16, Dtype::i32,  Dtype::i64, Dtype::u8,  Dtype::u16,
                             Dtype::u32, Dtype::u64,  Dtype::boolean};
    for (Dtype dtype : all)
        if (name == dtype_name(dtype)) return dtype;
    return std::nullopt;
}

/// @brief Whether T is a floating-point element type of Dtype: float, double, Eigen::half or
///        Eigen::bfloat16 (the element types of Tensor<T> tables).
/// @tparam T the C++ type.
template <typename T>
inline constexpr bool is_element_type_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Eigen::half> ||
    std::is_same_v<T, Eigen::bfloat16>;

/// @brief Whether T is an integer element type of Dtype: bool, std::int8_t .. std::int64_t or
///        std::uint8_t .. std::uint64_t (what the writers store as BOOL, I8 .. U64).
/// @tparam T the C++ type.
template <typename T>
inline constexpr bool is_integer_element_type_v =
    std::is_same_v<T, bool> || std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::int16_t> ||
    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t> ||
    std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t> ||
    std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t>;

/// @brief The dtype of a C++ element type.
/// @tparam T float, double, Eigen::half, Eigen::bfloat16, bool, or a fixed-width integer
///         (std::int8_t .. std::uint64_t).
/// @return its dtype.
template <typename T>
constexpr Dtype dtype_of() noexcept {
    static_assert(is_element_type_v<T> || is_integer_element_type_v<T>,
                  "seqembed::io::dtype_of<T>: T must be float, double, Eigen::half, Eigen::bfloat16, "
                  "bool or a fixed-width integer (std::int8_t .. std::uint64_t)");
    static_assert(!std::is_same_v<T, bool> || sizeof(bool) == 1,
                  "seqembed::io::dtype_of<bool>: BOOL is one byte, and this platform's bool is not");
    if constexpr (std::is_same_v<T, float>) return Dtype::f32;
    else if constexpr (std::is_same_v<T, double>) return Dtype::f64;
    else if constexpr (std::is_same_v<T, Eigen::half>) return Dtype::f16;
    else if constexpr (std::is_same_v<T, Eigen::bfloat16>) return Dtype::bf16;
    else if constexpr (std::is_same_v<T, bool>) return Dtype::boolean;
    else if constexpr (std::is_same_v<T, std::int8_t>) return Dtype::i8;
    else if constexpr (std::is_same_v<T, std::int16_t>) return Dtype::i16;
    else if constexpr (std::is_same_v<T, std::int32_t>) return Dtype::i32;
    else if constexpr (std::is_same_v<T, std::int64_t>) return Dtype::i64;
    else if constexpr (std::is_same_v<T, std::uint8_t>) return Dtype::u8;
    else if constexpr (std::is_same_v<T, std::uint16_t>) return Dtype::u16;
    else if constexpr (std::is_same_v<T, std::uint32_t>) return Dtype::u32;
    else return Dtype::u64;
}

/// @brief Whether every value of `from` is exactly a value of `to` (the conversion is widening
///        or none): the same dtype, F16 or BF16 to F32 or F64, F32 to F64.
/// @param from the stored dtype.
/// @param to the requested dtype.
/// @return true when reading `from` as `to` never rounds; false for a narrowing conversion
///         (F64 to F32, F32 or F64 to BF16 or F16, F16 to BF16 and back), which a read performs
///         only when ReadOptions::allow_narrowing is set. Integers and floating-point values
///         are never converted into each other: false when either is an integer dtype and they
///         differ.
constexpr bool is_exact_conversion(Dtype from, Dtype to) noexcept {
    if (from == to) return true;
    if (is_integer(from) || is_integer(to)) return false;
    switch (to) {
        case Dtype::f64: return true;
        case Dtype::f32: return from == Dtype::f16 || from == Dtype::bf16;
        default: return false;
    }
}

}  // namespace seqembed::io
