/// @file io/detail/convert.hpp
/// @brief Element conversions between the stored bytes of a file and typed values: widening
///        exactly, narrowing with round to nearest even, byte swapping; integers and booleans
///        widened to int64, checked. Bytes are always read with memcpy, so misaligned data is
///        never dereferenced through a cast pointer.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include <Eigen/Core>

#include "../dtype.hpp"

namespace seqembed::io::detail {

/// Whether this machine stores numbers little-endian (every file format here is little-endian
/// unless it says otherwise).
inline bool host_is_little_endian() noexcept {
    const std::uint16_t probe = 1;
    unsigned char first = 0;
    std::memcpy(&first, &probe, 1);
    return first == 1;
}

inline std::uint16_t byte_swap(std::uint16_t v) noexcept {
    return static_cast<std::uint16_t>((v >> 8) | (v << 8));
}
inline std::uint32_t byte_swap(std::uint32_t v) noexcept {
    return ((v & 0x000000FFu) << 24) | ((v & 0x0000FF00u) << 8) | ((v & 0x00FF0000u) >> 8) |
           ((v & 0xFF000000u) >> 24);
}
inline std::uint64_t byte_swap(std::uint64_t v) noexcept {
    return (static_cast<std::uint64_t>(byte_swap(static_cast<std::uint32_t>(v))) << 32) |
           byte_swap(static_cast<std::uint32_t>(v >> 32));
}

template <typename To, typename From>
To bits_cast(const From& from) noexcept {
    static_assert(sizeof(To) == sizeof(From));
    To to;
    std::memcpy(&to, &from, sizeof to);
    return to;
}

/// The raw bits of each dtype.
template <Dtype D> struct DtypeTraits;
template <> struct DtypeTraits<Dtype::f16> { using Bits = std::uint16_t; using Type = Eigen::half; };
template <> struct DtypeTraits<Dtype::bf16> { using Bits = std::uint16_t; using Type = Eigen::bfloat16; };
template <> struct DtypeTraits<Dtype::f32> { using Bits = std::uint32_t; using Type = float; };
template <> struct DtypeTraits<Dtype::f64> { using Bits = std::uint64_t; using Type = double; };

/// bfloat16 bits to float: exact (bfloat16 is float's upper half).
inline float bf16_bits_to_float(std::uint16_t bits) noexcept {
    return bits_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

/// float to bfloat16 bits, round to nearest even; NaN stays NaN (quiet, sign kept), as
/// Eigen::bfloat16(float) does. Branch-free so that loops over it vectorise.
inline std::uint16_t float_to_bf16_bits(float value) noexcept {
    const std::uint32_t u = bits_cast<std::uint32_t>(value);
    const std::uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    const std::uint32_t nan = ((u >> 16) & 0x8000u) | 0x7FC0u;
    const bool is_nan = (u & 0x7FFFFFFFu) > 0x7F800000u;
    return static_cast<std::uint16_t>(is_nan ? nan : rounded);
}

/// half bits to float: exact.
inline float f16_bits_to_float(std::uint16_t bits) noexcept {
    return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
}

/// float to half bits, round to nearest even (Eigen's conversion); overflow gives infinity.
inline std::uint16_t float_to_f16_bits(float value) noexcept {
    return Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(value));
}

/// double to float, round to nearest even, without the undefined behaviour C++ gives a value
/// outside float's range: those become +-infinity or +-FLT_MAX as IEEE 754 rounds them.
inline float double_to_float(double value) noexcept {
    constexpr double max = static_cast<double>(std::numeric_limits<float>::max());
    // Halfway between FLT_MAX and 2^128: values from there on round to infinity.
    constexpr double overflow = max + 0x1p103;
    if (std::isnan(value)) return static_cast<float>(value);
    if (value > max || value < -max) {
        const float big = std::fabs(value) >= overflow ? std::numeric_limits<float>::infinity()
                                                       : std::numeric_limits<float>::max();
        return value < 0 ? -big : big;
    }
    return static_cast<float>(value);
}

/// double to float rounded to odd (truncate, then set the last bit if anything was lost): an
/// intermediate that a second rounding to a type with at most 22 significand bits (bfloat16,
/// half) rounds exactly as a single rounding of the double would.
inline float double_to_float_round_to_odd(double value) noexcept {
    if (std::isnan(value)) return static_cast<float>(value);
    float f = double_to_float(value);
    if (std::isinf(f) && !std::isinf(value)) f = std::copysign(std::numeric_limits<float>::max(), f);
    if (static_cast<double>(f) == value) return f;
    if (std::fabs(static_cast<double>(f)) > std::fabs(value))
        f = std::nextafter(f, 0.0f);
    return bits_cast<float>(bits_cast<std::uint32_t>(f) | 1u);
}

/// One stored element (its bits already in host order) as To.
template <Dtype From, typename To>
To convert_bits(typename DtypeTraits<From>::Bits bits) noexcept {
    if constexpr (From == Dtype::f64) {
        const double v = bits_cast<double>(bits);
        if constexpr (std::is_same_v<To, double>) return v;
        else if constexpr (std::is_same_v<To, float>) return double_to_float(v);
        else if constexpr (std::is_same_v<To, Eigen::bfloat16>)
            return Eigen::numext::bit_cast<Eigen::bfloat16>(float_to_bf16_bits(double_to_float_round_to_odd(v)));
        else return Eigen::numext::bit_cast<Eigen::half>(float_to_f16_bits(double_to_float_round_to_odd(v)));
    } else {
        float v;
        if constexpr (From == Dtype::f32) v = bits_cast<float>(bits);
        else if constexpr (From == Dtype::bf16) v = bf16_bits_to_float(bits);
        else v = f16_bits_to_float(bits);
        if constexpr (std::is_same_v<To, double>) return static_cast<double>(v);
        else if constexpr (std::is_same_v<To, float>) return v;
        else if constexpr (std::is_same_v<To, Eigen::bfloat16>) {
            if constexpr (From == Dtype::bf16) return Eigen::numext::bit_cast<Eigen::bfloat16>(bits);
            else return Eigen::numext::bit_cast<Eigen::bfloat16>(float_to_bf16_bits(v));
        } else {
            if constexpr (From == Dtype::f16) return Eigen::numext::bit_cast<Eigen::half>(bits);
            else return Eigen::numext::bit_cast<Eigen::half>(float_to_f16_bits(v));
        }
    }
}

/// Reads element `index` of a stored array: memcpy of its bytes, swapped when the file's byte
/// order is not the host's.
template <Dtype From>
typename DtypeTraits<From>::Bits load_bits(const unsigned char* bytes, std::size_t index,
                                           bool swap) noexcept {
    using Bits = typename DtypeTraits<From>::Bits;
    Bits bits;
    std::memcpy(&bits, bytes + index * sizeof(Bits), sizeof(Bits));
    return swap ? byte_swap(bits) : bits;
}

template <Dtype From, typename To, bool Swap>
void convert_run(const unsigned char* bytes, To* out, std::size_t count) noexcept {
    for (std::size_t i = 0; i < count; ++i)
        out[i] = convert_bits<From, To>(load_bits<From>(bytes, i, Swap));
}

template <Dtype From, typename To>
void convert_run(const unsigned char* bytes, To* out, std::size_t count, bool swap) noexcept {
    if (swap) convert_run<From, To, true>(bytes, out, count);
    else convert_run<From, To, false>(bytes, out, count);
}

/// Converts `count` consecutive stored elements of dtype `from` into out. A copy of the same
/// dtype in host order is a memcpy.
template <typename To>
void convert_elements(Dtype from, bool swap, const unsigned char* bytes, To* out,
                      std::size_t count) noexcept {
    if (!swap && from == dtype_of<To>()) {
        if (count != 0) std::memcpy(out, bytes, count * sizeof(To));
        return;
    }
    switch (from) {
        case Dtype::f16: convert_run<Dtype::f16>(bytes, out, count, swap); break;
        case Dtype::bf16: convert_run<Dtype::bf16>(bytes, out, count, swap); break;
        case Dtype::f32: convert_run<Dtype::f32>(bytes, out, count, swap); break;
        case Dtype::f64: convert_run<Dtype::f64>(bytes, out, count, swap); break;
        default: break;  // integer dtypes never come here: read_tensor refuses them first
    }
}

/// Converts one stored element (element `index` of the stored array).
template <typename To>
To convert_element(Dtype from, bool swap, const unsigned char* bytes, std::size_t index) noexcept {
    switch (from) {
        case Dtype::f16: return convert_bits<Dtype::f16, To>(load_bits<Dtype::f16>(bytes, index, swap));
        case Dtype::bf16: return convert_bits<Dtype::bf16, To>(load_bits<Dtype::bf16>(bytes, index, swap));
        case Dtype::f32: return convert_bits<Dtype::f32, To>(load_bits<Dtype::f32>(bytes, index, swap));
        default: break;  // F64 (integer dtypes never come here: read_tensor refuses them)
    }
    return convert_bits<Dtype::f64, To>(load_bits<Dtype::f64>(bytes, index, swap));
}

// ---------------------------------------------------------------------------------------------
// Integers and booleans, widened to int64.

/// The stored C++ type of each integer dtype.
template <Dtype D> struct IntegerTraits;
template <> struct IntegerTraits<Dtype::i8> { using Type = std::int8_t; };
template <> struct IntegerTraits<Dtype::i16> { using Type = std::int16_t; };
template <> struct IntegerTraits<Dtype::i32> { using Type = std::int32_t; };
template <> struct IntegerTraits<Dtype::i64> { using Type = std::int64_t; };
template <> struct IntegerTraits<Dtype::u8> { using Type = std::uint8_t; };
template <> struct IntegerTraits<Dtype::u16> { using Type = std::uint16_t; };
template <> struct IntegerTraits<Dtype::u32> { using Type = std::uint32_t; };
template <> struct IntegerTraits<Dtype::u64> { using Type = std::uint64_t; };
template <> struct IntegerTraits<Dtype::boolean> { using Type = std::uint8_t; };  // its byte

/// Element `index` of a stored integer array as int64 in out. False (out unspecified) when the
/// value has no int64: a U64 above 2^63 - 1, or a BOOL byte other than 0 and 1.
template <Dtype From>
bool load_integer(const unsigned char* bytes, std::size_t index, bool swap, std::int64_t& out) noexcept {
    using Type = typename IntegerTraits<From>::Type;
    using Bits = std::make_unsigned_t<Type>;
    Bits bits;
    std::memcpy(&bits, bytes + index * sizeof(Bits), sizeof(Bits));
    if constexpr (sizeof(Bits) > 1) {
        if (swap) bits = byte_swap(bits);
    }
    if constexpr (From == Dtype::boolean) {
        out = static_cast<std::int64_t>(bits);
        return bits <= 1;
    } else if constexpr (From == Dtype::u64) {
        out = static_cast<std::int64_t>(bits & 0x7FFFFFFFFFFFFFFFu);
        return bits <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    } else {
        out = static_cast<std::int64_t>(bits_cast<Type>(bits));
        return true;
    }
}

template <Dtype From>
std::size_t integer_run(const unsigned char* bytes, std::int64_t* out, std::size_t count, bool swap) noexcept {
    for (std::size_t i = 0; i < count; ++i)
        if (!load_integer<From>(bytes, i, swap, out[i])) return i;
    return count;
}

/// Widens `count` consecutive stored elements of the integer dtype `from` into out.
/// @return count, or the index of the first element that has no int64 (see load_integer).
inline std::size_t convert_integers(Dtype from, bool swap, const unsigned char* bytes, std::int64_t* out,
                                    std::size_t count) noexcept {
    switch (from) {
        case Dtype::i8: return integer_run<Dtype::i8>(bytes, out, count, swap);
        case Dtype::i16: return integer_run<Dtype::i16>(bytes, out, count, swap);
        case Dtype::i32: return integer_run<Dtype::i32>(bytes, out, count, swap);
        case Dtype::i64: return integer_run<Dtype::i64>(bytes, out, count, swap);
        case Dtype::u8: return integer_run<Dtype::u8>(bytes, out, count, swap);
        case Dtype::u16: return integer_run<Dtype::u16>(bytes, out, count, swap);
        case Dtype::u32: return integer_run<Dtype::u32>(bytes, out, count, swap);
        case Dtype::u64: return integer_run<Dtype::u64>(bytes, out, count, swap);
        case Dtype::boolean: return integer_run<Dtype::boolean>(bytes, out, count, swap);
        default: return 0;  // floating-point dtypes never come here: read_integers refuses them
    }
}

/// Widens element `index` of a stored integer array into out.
/// @return false when it has no int64 (see load_integer).
inline bool convert_integer(Dtype from, bool swap, const unsigned char* bytes, std::size_t index,
                            std::int64_t& out) noexcept {
    switch (from) {
        case Dtype::i8: return load_integer<Dtype::i8>(bytes, index, swap, out);
        case Dtype::i16: return load_integer<Dtype::i16>(bytes, index, swap, out);
        case Dtype::i32: return load_integer<Dtype::i32>(bytes, index, swap, out);
        case Dtype::i64: return load_integer<Dtype::i64>(bytes, index, swap, out);
        case Dtype::u8: return load_integer<Dtype::u8>(bytes, index, swap, out);
        case Dtype::u16: return load_integer<Dtype::u16>(bytes, index, swap, out);
        case Dtype::u32: return load_integer<Dtype::u32>(bytes, index, swap, out);
        case Dtype::u64: return load_integer<Dtype::u64>(bytes, index, swap, out);
        case Dtype::boolean: return load_integer<Dtype::boolean>(bytes, index, swap, out);
        default: return false;  // floating-point dtypes never come here
    }
}

}  // namespace seqembed::io::detail
