/// @file detail/rotary/storage.hpp
/// @brief Computed table values to the table's stored type, each rounded once to nearest even.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <Eigen/Core>

namespace seqembed::detail::rotary {

/// Whether a rotary table may store Value.
template <typename Value>
inline constexpr bool is_table_type = std::is_same_v<Value, float> || std::is_same_v<Value, double> ||
                                      std::is_same_v<Value, Eigen::bfloat16> || std::is_same_v<Value, Eigen::half>;

/// value (double or long double) rounded to float with round to odd (truncated, the last bit set when anything was lost):
/// a value with at most 22 significand bits less than float (bfloat16, half) rounded from it is
/// the value rounded once from the double (Boldo and Melquiond's round-to-odd argument). |value|
/// is small here (a cosine times an attention factor), so neither end of float's range matters.
template <typename Real>
inline float round_to_odd_float(Real value) noexcept {
    float rounded = static_cast<float>(value);
    if (static_cast<Real>(rounded) == value) return rounded;
    if (std::fabs(static_cast<Real>(rounded)) > std::fabs(value)) rounded = std::nextafter(rounded, 0.0f);
    std::uint32_t bits = 0;
    std::memcpy(&bits, &rounded, sizeof bits);
    bits |= 1u;
    std::memcpy(&rounded, &bits, sizeof bits);
    return rounded;
}

/// An exact value (computed in double or long double) as Value, rounded once to nearest even.
template <typename Value, typename Real>
inline Value from_exact(Real value) noexcept {
    if constexpr (std::is_same_v<Value, double> || std::is_same_v<Value, float>)
        return static_cast<Value>(value);
    else
        return Value(round_to_odd_float(value));
}

/// A follow-mode value (Hugging Face's float32) as Value: widened exactly to double, or rounded
/// to nearest even to bfloat16 and half as torch's `.to(dtype)` does.
template <typename Value>
inline Value from_follow(float value) noexcept {
    if constexpr (std::is_same_v<Value, double> || std::is_same_v<Value, float>)
        return static_cast<Value>(value);
    else
        return Value(value);
}

}  // namespace seqembed::detail::rotary
