/// @file detail/random/kept_bits.hpp
/// @brief A dropout mask as flat bits (bit e of word e / 64 is element e, set where kept), drawn
///        by the ISA in force: what the backward passes read the mask from.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../../types.hpp"
#include "../engine/kernels.hpp"
#include "dropout_layout.hpp"

namespace seqembed::detail {

/// Words per share of the workers (64 Ki elements).
inline constexpr std::uint64_t kept_words_per_share = 1024;

/// The kept bits of elements [0, count) of the mask of `key`, flat (the mask's own words: bit e
/// of word e / 64 is element e), followed by one word of zeros (a reader of a lane's bits may
/// read the word past the last element's), into `kept`, whose memory is reused. Bits past count
/// in the last word are those of the mask's next elements. The words are shared between workers
/// (parallel(n, f) runs f(begin, end) over shares of [0, n)); the bits depend on the key alone.
/// @throws value_error as active_isa(); std::bad_alloc (then `kept` may hold anything).
template <typename Parallel>
void kept_bits(const DropoutKey& key, std::uint64_t count, const Parallel& parallel, std::vector<std::uint64_t>& kept) {
    const std::uint64_t words = (count + 63) / 64;
    const std::uint64_t shares = (words + kept_words_per_share - 1) / kept_words_per_share;
    static_cast<void>(active_isa());  // a bad SEQEMBED_ISA throws here, not in a worker
    kept.resize(static_cast<std::size_t>(words + 1));  // every word but the last is drawn below
    kept.back() = 0;
    parallel(static_cast<Index>(shares), [&](Index begin, Index end) {
        const std::uint64_t first = static_cast<std::uint64_t>(begin) * kept_words_per_share;
        const std::uint64_t last = std::min(words, static_cast<std::uint64_t>(end) * kept_words_per_share);
        if (first < last) draw_mask(key, first, static_cast<Index>(last - first), kept.data() + first);
    });
}

}  // namespace seqembed::detail
