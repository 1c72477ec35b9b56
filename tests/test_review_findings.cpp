// Defects a review found, each pinned by a test: strided outputs for Dropout, moved-from tables,
// positions near 2^53 and INT64_MAX, sizes that cannot be allocated, Paddings of temporaries,
// and random streams kept apart.
#include <seqembed/seqembed.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "catch.hpp"

using seqembed::IdMatrix;
using seqembed::Index;
using seqembed::RowMatrix;

TEST_CASE("Dropout::forward_into into a block of a wider matrix masks the block only",
          "[dropout][review]") {
    seqembed::Dropout dropout(0.5, 3);
    dropout.set_training(true);
    RowMatrix<float> big = RowMatrix<float>::Ones(3, 8);
    const RowMatrix<float> x = RowMatrix<float>::Ones(3, 4);
    dropout.forward_into(x, big.leftCols(4));
    const seqembed::MaskMatrix kept = dropout.mask(0, 3, 4);
    for (Index r = 0; r < 3; ++r) {
        for (Index c = 0; c < 4; ++c) REQUIRE(big(r, c) == (kept(r, c) ? 2.0f : 0.0f));
        for (Index c = 4; c < 8; ++c) REQUIRE(big(r, c) == 1.0f);  // outside the block
    }
}

TEST_CASE("A moved-from table is empty and rejects every id", "[embedding][review]") {
    seqembed::TokenEmbedding<float> embedding(100, 16);
    const seqembed::TokenEmbedding<float> taken(std::move(embedding));
    REQUIRE(taken.vocab_size() == 100);
    REQUIRE(embedding.vocab_size() == 0);  // NOLINT(bugprone-use-after-move): the point
    IdMatrix ids(1, 1);
    ids << 5;
    REQUIRE_THROWS_AS(embedding.forward(ids), seqembed::index_error);
    REQUIRE(taken.forward(ids).rows() == 1);
}

TEST_CASE("Positions are checked in integers near 2^53 and INT64_MAX", "[sinusoidal][review]") {
    const seqembed::SinusoidalPositionalEncoding<double> ct2(8, seqembed::SinusoidalOptions::ctranslate2());
    constexpr std::int64_t limit = std::int64_t{1} << 53;
    // Row r encodes position r + 1: row 2^53 - 1 is the last exact one.
    REQUIRE_NOTHROW(ct2.forward(limit - 1, 1));
    REQUIRE_THROWS_AS(ct2.forward(limit, 1), seqembed::index_error);
    REQUIRE_THROWS_AS(ct2.forward(std::numeric_limits<std::int64_t>::max() - 1, 1),
                      seqembed::index_error);
    REQUIRE_THROWS_AS(ct2.position_of(std::numeric_limits<std::int64_t>::max()),
                      seqembed::index_error);
    const seqembed::InputPipeline<double> pipeline(seqembed::TokenEmbedding<double>(10, 8), ct2);
    IdMatrix ids(1, 2);
    ids << 1, 2;
    REQUIRE_THROWS_AS(pipeline.forward(ids, seqembed::Padding::none(),
                                       std::numeric_limits<std::int64_t>::max() - 1),
                      seqembed::index_error);
}

TEST_CASE("Sizes that cannot be had are seqembed errors", "[review]") {
    const seqembed::Dropout dropout(0.5);
    REQUIRE_THROWS_AS(dropout.mask(0, -1, 4), seqembed::value_error);
    REQUIRE_THROWS_AS(dropout.mask(0, 4, -1), seqembed::value_error);
    seqembed::SinusoidalOptions options;
    options.beyond = seqembed::BeyondTable::compute;
    const seqembed::SinusoidalPositionalEncoding<float> encoding(64, options);
    REQUIRE_THROWS_AS(encoding.forward(0, Index{1} << 60), seqembed::error);
}

namespace {
template <typename Lengths>
auto right_accepts(int) -> decltype(seqembed::Padding::right(std::declval<Lengths>()), true) {
    return true;
}
template <typename>
bool right_accepts(long) {
    return false;
}
template <typename Mask>
auto mask_accepts(int) -> decltype(seqembed::Padding::from_mask(std::declval<Mask>()), true) {
    return true;
}
template <typename>
bool mask_accepts(long) {
    return false;
}
}  // namespace

TEST_CASE("A Padding cannot be built over a temporary it would outlive", "[padding][review]") {
    REQUIRE(right_accepts<std::vector<std::int64_t>&>(0));
    REQUIRE(right_accepts<const std::vector<std::int64_t>&>(0));
    REQUIRE_FALSE(right_accepts<std::vector<std::int64_t>>(0));
    REQUIRE(mask_accepts<const seqembed::MaskMatrix&>(0));
    REQUIRE_FALSE(mask_accepts<seqembed::MaskMatrix>(0));
}

TEST_CASE("Seeded initialisations draw from Philox streams with the top bit set", "[review]") {
    // Dropout draws from ARS; the initialisations' Philox streams have the top bit set.
    using seqembed::detail::InitStream;
    for (const auto stream : {InitStream::token_embedding, InitStream::learned_positions})
        REQUIRE(static_cast<std::uint64_t>(stream) >> 63 == 1);
}
