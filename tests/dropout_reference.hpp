// Dropout's documented mask, one element at a time, for the tests that check the kernels' mask
// words against it.
#pragma once

#include <seqembed/detail/random/ars.hpp>

#include <cstdint>

/// What the documentation says, one element at a time and nothing shared with the library but
/// ARS (whose known answers test_ars.cpp checks): element e of call `call` is kept when 16-bit
/// lane e % 8 of the ARS-5 block at counter (e / 8, call) under the key (seed, 0) is at least
/// the threshold.
inline bool documented_keeps(std::uint64_t seed, std::uint64_t call, std::uint64_t element, std::uint32_t threshold) {
    const seqembed::detail::ArsBlock block = seqembed::detail::ars({element / 8, call}, {seed, 0}, 5);
    const std::uint64_t lane = element % 8;
    const auto draw = static_cast<std::uint32_t>((block[lane / 4] >> (16 * (lane % 4))) & 0xFFFFu);
    return draw >= threshold;
}
