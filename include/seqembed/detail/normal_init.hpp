/// @file detail/normal_init.hpp
/// @brief Seeded N(0, 1) initialisation that gives the same table on every platform.
#pragma once

#include <cmath>
#include <cstdint>

#include "../types.hpp"
#include "random/philox.hpp"

namespace seqembed::detail {

/// Stream ids that keep the tables of different components apart for one seed. The top bit
/// keeps them apart from Dropout too, whose streams are its call numbers (below 2^63).
enum class InitStream : std::uint64_t {
    token_embedding = (std::uint64_t{1} << 63) | 1,
    learned_positions = (std::uint64_t{1} << 63) | 2,
    token_types = (std::uint64_t{1} << 63) | 3
};

/// A uniform double in (0, 1] from 64 random bits (53 of them used).
inline double unit_interval_open_below(std::uint32_t low, std::uint32_t high) {
    const std::uint64_t bits = (static_cast<std::uint64_t>(high) << 32) | low;
    return (static_cast<double>(bits >> 11) + 1.0) * 0x1.0p-53;
}

/// Fills count elements with N(0, 1) draws: Box-Muller in double over Philox blocks, so element
/// k depends only on (seed, stream, k). std::normal_distribution is not used because its output
/// differs between standard libraries. `first` is the index of data[0] among the stream's
/// elements: a part of a table (a vocabulary shard's rows) gets the whole table's values.
template <typename Scalar>
void fill_standard_normal(Scalar* data, Index count, std::uint64_t seed, InitStream stream, std::uint64_t first = 0) {
    constexpr double two_pi = 6.283185307179586476925286766559;
    const auto end = first + static_cast<std::uint64_t>(count);
    for (std::uint64_t pair = first / 2; 2 * pair < end; ++pair) {
        const PhiloxBlock bits = philox_block(seed, static_cast<std::uint64_t>(stream), pair);
        const double radius = std::sqrt(-2.0 * std::log(unit_interval_open_below(bits[0], bits[1])));
        const double angle = two_pi * unit_interval_open_below(bits[2], bits[3]);
        if (2 * pair >= first) data[2 * pair - first] = static_cast<Scalar>(radius * std::cos(angle));
        if (2 * pair + 1 < end) data[2 * pair + 1 - first] = static_cast<Scalar>(radius * std::sin(angle));
    }
}

}  // namespace seqembed::detail
