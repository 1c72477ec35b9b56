/// @file detail/random/kept_bits.hpp
/// @brief A dropout mask as flat bits (bit e of word e / 64 is element e, set where kept), drawn
///        span by span by the ISA in force: what the backward passes read the mask from.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../../types.hpp"
#include "../engine/kernels.hpp"
#include "dropout_layout.hpp"

namespace seqembed::detail {

/// Spans per group: four spans are 960 bits, 15 whole words, so that groups of spans drawn by
/// different workers never write the same word.
inline constexpr std::uint64_t spans_per_word_group = 4;
/// Words per group of spans_per_word_group spans.
inline constexpr std::uint64_t words_per_span_group = spans_per_word_group * span_elements / 64;
static_assert(words_per_span_group * 64 == spans_per_word_group * span_elements);

/// The kept bits of elements [0, count) of the mask of `key`, flat, followed by at least one
/// word of zeros (a reader of a lane's bits may read the word past the last element's). The groups of spans are
/// shared between workers (parallel(count, f) runs f(begin, end) over shares of [0, count)); the
/// bits depend on the key alone.
/// @throws value_error as active_isa(); std::bad_alloc.
template <typename Parallel>
std::vector<std::uint64_t> kept_bits(const DropoutKey& key, std::uint64_t count, const Parallel& parallel) {
    const std::uint64_t spans = (count + span_elements - 1) / span_elements;
    const std::uint64_t groups = (spans + spans_per_word_group - 1) / spans_per_word_group;
    std::vector<std::uint64_t> words(static_cast<std::size_t>(groups * words_per_span_group + 1), 0);
    static_cast<void>(active_isa());  // a bad SEQEMBED_ISA throws here, not in a worker
    parallel(static_cast<Index>(groups), [&](Index begin, Index end) {
        constexpr int drawn_at_once = 16;
        SpanBits drawn[drawn_at_once];
        const std::uint64_t last = std::min(spans, static_cast<std::uint64_t>(end) * spans_per_word_group);
        for (auto span = static_cast<std::uint64_t>(begin) * spans_per_word_group; span < last;) {
            const int n = static_cast<int>(std::min<std::uint64_t>(drawn_at_once, last - span));
            draw_spans(key, span, n, drawn);
            for (int i = 0; i < n; ++i, ++span) {
                const std::uint64_t at = span * span_elements;
                for (int w = 0; w < 4; ++w) {
                    // Word 3 holds bits 192 .. 239 (its top 16 bits are 0).
                    const std::uint64_t bits = drawn[i].words[w];
                    const std::uint64_t used = w < 3 ? 64 : span_elements - 192;
                    const std::uint64_t bit = at + 64 * static_cast<std::uint64_t>(w);
                    const std::uint64_t shift = bit % 64;
                    words[static_cast<std::size_t>(bit / 64)] |= bits << shift;
                    if (shift + used > 64) words[static_cast<std::size_t>(bit / 64 + 1)] |= bits >> (64 - shift);
                }
            }
        }
    });
    return words;
}

}  // namespace seqembed::detail
