// The public surface around the pipeline: ids of either width and any layout without a copy,
// Hugging Face-style int64 attention masks, lengths from any contiguous range, per-sequence step
// offsets, tied token tables, and copies of Dropout that never repeat each other's masks.
#include <seqembed/seqembed.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "bit_equal.hpp"
#include "catch.hpp"

using seqembed::IdMatrix;
using seqembed::IdMatrix32;
using seqembed::Index;
using seqembed::RowMatrix;

namespace {

seqembed::InputPipeline<float> small_pipeline(double p = 0.0) {
    auto options = seqembed::SinusoidalOptions::paper();
    options.max_positions = 64;
    return {seqembed::TokenEmbedding<float>(50, 24), seqembed::SinusoidalPositionalEncoding<float>(24, options),
            {p, 3}};
}

IdMatrix some_ids() {
    IdMatrix ids(3, 5);
    ids << 4, 9, 13, 0, 0,  //
        7, 7, 2, 31, 49,    //
        0, 0, 11, 12, 3;
    return ids;
}

}  // namespace

TEST_CASE("TokenIds views int32 ids, and column-major or strided ids, without a copy", "[api]") {
    const auto pipeline = small_pipeline();
    const IdMatrix ids = some_ids();
    const RowMatrix<float> expected = pipeline.forward(ids);

    const IdMatrix32 narrow = ids.cast<std::int32_t>();
    REQUIRE(bit_equal(pipeline.forward(narrow), expected));
    const Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic> column_major = narrow;
    REQUIRE(bit_equal(pipeline.forward(column_major), expected));
    const Eigen::MatrixXi wide_block = Eigen::MatrixXi::Zero(6, 9);
    Eigen::MatrixXi holder = wide_block;
    holder.block(1, 2, 3, 5) = narrow;
    REQUIRE(bit_equal(pipeline.forward(holder.block(1, 2, 3, 5)), expected));

    // A view: TokenIds reads the caller's memory.
    const seqembed::TokenIds view(narrow);
    REQUIRE(view.rows() == 3);
    REQUIRE(view.cols() == 5);
    REQUIRE(view(1, 4) == 49);
    REQUIRE(bit_equal(pipeline.embedding().forward(narrow), pipeline.embedding().forward(ids)));

    IdMatrix32 bad = narrow;
    bad(2, 3) = -7;
    try {
        (void)pipeline.forward(bad);
        FAIL("no error");
    } catch (const seqembed::index_error& e) {
        REQUIRE(std::string(e.what()) ==
                "seqembed: token id -7 at (batch 2, position 3) is outside the vocabulary [0, 50)");
    }
}

TEST_CASE("Attention masks of any integer type give the same positions as a byte mask", "[api][padding]") {
    const auto pipeline = small_pipeline();
    const IdMatrix ids = some_ids();
    const seqembed::MaskMatrix bytes = (ids.array() != 0).cast<std::uint8_t>();
    const RowMatrix<float> expected = pipeline.forward(ids, seqembed::Padding::from_mask(bytes));
    REQUIRE(bit_equal(expected, pipeline.forward(ids, seqembed::Padding::by_id(0))));

    const Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> hf = bytes.cast<std::int64_t>();
    REQUIRE(bit_equal(pipeline.forward(ids, seqembed::Padding::from_mask(hf)), expected));
    const Eigen::MatrixXi column_major = bytes.cast<int>();
    REQUIRE(bit_equal(pipeline.forward(ids, seqembed::Padding::from_mask(column_major)), expected));
    const Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic> flags = bytes.cast<bool>();
    REQUIRE(bit_equal(pipeline.forward(ids, seqembed::Padding::from_mask(flags)), expected));

    const Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> short_mask = hf.leftCols(4);
    REQUIRE_THROWS_AS(pipeline.forward(ids, seqembed::Padding::from_mask(short_mask)), seqembed::shape_error);
}

TEST_CASE("Lengths come from any contiguous range of integers", "[api][padding]") {
    const auto pipeline = small_pipeline();
    const IdMatrix ids = some_ids();
    const std::vector<std::int64_t> vector_lengths{3, 5, 3};
    const RowMatrix<float> right = pipeline.forward(ids, seqembed::Padding::right(vector_lengths));
    const RowMatrix<float> left = pipeline.forward(ids, seqembed::Padding::left(vector_lengths));

    const std::array<int, 3> array_lengths{3, 5, 3};
    REQUIRE(bit_equal(pipeline.forward(ids, seqembed::Padding::right(array_lengths)), right));
    const Eigen::Matrix<std::int32_t, 3, 1> eigen_lengths(3, 5, 3);
    REQUIRE(bit_equal(pipeline.forward(ids, seqembed::Padding::left(eigen_lengths)), left));
    const std::vector<std::uint16_t> narrow_lengths{3, 5, 3};
    REQUIRE(bit_equal(pipeline.forward(ids, seqembed::Padding::right(narrow_lengths)), right));

    const std::array<int, 2> too_few{3, 5};
    REQUIRE_THROWS_AS(pipeline.forward(ids, seqembed::Padding::right(too_few)), seqembed::shape_error);
    const std::array<int, 3> too_long{3, 6, 3};
    REQUIRE_THROWS_AS(pipeline.forward(ids, seqembed::Padding::left(too_long)), seqembed::value_error);
}

TEST_CASE("Per-sequence step offsets shift each sequence's positions on their own", "[api][offsets]") {
    const auto pipeline = small_pipeline();
    const IdMatrix ids = some_ids();
    const std::vector<std::int64_t> offsets{2, 0, 40};
    const RowMatrix<float> out = pipeline.forward(ids, seqembed::Padding::none(), seqembed::StepOffsets(offsets));
    for (Index b = 0; b < 3; ++b) {
        const RowMatrix<float> one = pipeline.forward(ids.row(b), seqembed::Padding::none(),
                                                      offsets[static_cast<std::size_t>(b)]);
        REQUIRE(bit_equal<float>(out.middleRows(b * 5, 5), one));
    }
    // The same offset for all is a plain integer.
    const std::vector<std::int64_t> sevens{7, 7, 7};
    REQUIRE(bit_equal(pipeline.forward(ids, seqembed::Padding::none(), 7),
                      pipeline.forward(ids, seqembed::Padding::none(), seqembed::StepOffsets(sevens))));
    // Offsets are viewed: temporaries, which would dangle, are refused at compile time.
    static_assert(!std::is_constructible_v<seqembed::StepOffsets, std::vector<std::int64_t>&&>);
    static_assert(std::is_constructible_v<seqembed::StepOffsets, const std::vector<std::int64_t>&>);

    const std::vector<std::int64_t> two{1, 2};
    REQUIRE_THROWS_AS(pipeline.forward(ids, seqembed::Padding::none(), seqembed::StepOffsets(two)),
                      seqembed::shape_error);
    const std::vector<std::int64_t> past{0, 60, 0};  // 60 + 5 > 64 rows
    RowMatrix<float> untouched = RowMatrix<float>::Constant(15, 24, 3.0f);
    REQUIRE_THROWS_AS(pipeline.forward_into(ids, seqembed::Padding::none(), untouched, seqembed::StepOffsets(past)),
                      seqembed::index_error);
    REQUIRE((untouched.array() == 3.0f).all());
}

TEST_CASE("Pipelines share a token table without copying it (tied embeddings)", "[api][embedding]") {
    const seqembed::TokenEmbedding<float> shared(1000, 32);
    const seqembed::InputPipeline<float> encoder(shared, seqembed::SinusoidalPositionalEncoding<float>(32));
    const seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>> decoder(
        shared, seqembed::LearnedPositionalEmbedding<float>(16, 32));
    REQUIRE(encoder.embedding().table().data() == shared.table().data());
    REQUIRE(decoder.embedding().table().data() == shared.table().data());
    const seqembed::InputPipeline<float> copy = encoder;
    REQUIRE(copy.embedding().table().data() == shared.table().data());
    REQUIRE(copy.positions().table().data() == encoder.positions().table().data());
}

TEST_CASE("Copies of a Dropout share its call counter and never repeat each other's masks", "[api][dropout]") {
    seqembed::Dropout dropout(0.5, 11);
    dropout.set_training(true);
    const seqembed::Dropout copy = dropout;
    const RowMatrix<float> ones = RowMatrix<float>::Ones(4, 60);
    const RowMatrix<float> first = dropout.forward(ones);
    const RowMatrix<float> second = copy.forward(ones);
    REQUIRE_FALSE(bit_equal(first, second));
    REQUIRE(dropout.calls() == 2);
    REQUIRE(copy.calls() == 2);
    REQUIRE(bit_equal<float>(first, (ones.array() * dropout.mask(0, 4, 60).cast<float>().array() * 2.0f).matrix()));
    REQUIRE(bit_equal<float>(second, (ones.array() * dropout.mask(1, 4, 60).cast<float>().array() * 2.0f).matrix()));

    auto pipeline = small_pipeline(0.5);
    pipeline.set_training(true);
    const auto twin = pipeline;
    const IdMatrix ids = some_ids();
    REQUIRE_FALSE(bit_equal(pipeline.forward(ids), twin.forward(ids)));
}
