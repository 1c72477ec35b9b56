// Batch: explicit position ids, masks over past + current tokens, the three numberings, padded
// rows computed as the frameworks compute them, and the token type's place in the sum; each
// against the rows a reader of the tables computes by hand (tables whose rows are distinct
// integers, so every sum is exact and every wrong row shows).
#include <seqembed/seqembed.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "catch.hpp"

using seqembed::Batch;
using seqembed::IdMatrix;
using seqembed::Index;
using seqembed::InputPipeline;
using seqembed::LearnedPositionalEmbedding;
using seqembed::LearnedPositionsOptions;
using seqembed::Padding;
using seqembed::PaddedRows;
using seqembed::PipelineOptions;
using seqembed::PositionNumbering;
using seqembed::RowMatrix;
using seqembed::TokenEmbedding;

namespace {

constexpr Index table_width = 3;

/// Row r of a table: (base + r) in every column, so that a sum names its rows.
RowMatrix<float> rows_of(Index count, float base) {
    RowMatrix<float> table(count, table_width);
    for (Index r = 0; r < count; ++r) table.row(r).setConstant(base + static_cast<float>(r));
    return table;
}

using Pipeline = InputPipeline<float, LearnedPositionalEmbedding<float>>;

Pipeline make(const PipelineOptions& options, std::int64_t offset = 0) {
    LearnedPositionsOptions positions;
    positions.offset = offset;
    seqembed::TokenEmbeddingOptions unscaled;
    unscaled.scale = seqembed::EmbeddingScale::none();
    return Pipeline(TokenEmbedding<float>::from_weights(rows_of(50, 0), unscaled),
                    LearnedPositionalEmbedding<float>::from_weights(rows_of(40, 1000), positions), options);
}

/// What each row of the output must be: token id + the row read (1000 + row), or 0 for padding.
void require_rows(const RowMatrix<float>& out, const IdMatrix& ids, const std::vector<std::int64_t>& rows_read) {
    REQUIRE(out.rows() == ids.size());
    for (Index r = 0; r < out.rows(); ++r) {
        INFO("row " << r << ", table row " << rows_read[static_cast<std::size_t>(r)]);
        const std::int64_t read = rows_read[static_cast<std::size_t>(r)];
        const float expected = read < 0 ? 0.0f : static_cast<float>(ids.data()[r] + 1000 + read);
        for (Index c = 0; c < table_width; ++c) REQUIRE(out(r, c) == expected);
    }
}

}  // namespace

TEST_CASE("A mask over past + current tokens numbers the current ones after the past", "[pipeline][batch]") {
    IdMatrix ids(2, 3);
    ids << 5, 6, 7,  //
        8, 9, 10;
    IdMatrix mask(2, 5);  // 2 past tokens, then 3 current ones
    mask << 1, 1, 1, 1, 1,  //
        0, 1, 1, 0, 1;
    Batch batch(ids);
    batch.padding = Padding::from_mask(mask);
    SECTION("sequence_index: past + t") {
        PipelineOptions options;
        options.positions = PositionNumbering::sequence_index;
        require_rows(make(options).forward(batch), ids, {2, 3, 4, 2, -1, 4});
    }
    SECTION("real_tokens: the mask's count, past included (OPT's cumsum - 1)") {
        require_rows(make({}).forward(batch), ids, {2, 3, 4, 1, -1, 2});
    }
    SECTION("computed padded rows: OPT's row offset - 1 under real_tokens") {
        PipelineOptions options;
        options.padded_rows = PaddedRows::computed;
        require_rows(make(options, 2).forward(batch), ids, {4, 5, 6, 3, 1, 4});
    }
    SECTION("a step offset adds to the past") {
        batch.offsets = 10;
        PipelineOptions options;
        options.positions = PositionNumbering::sequence_index;
        require_rows(make(options).forward(batch), ids, {12, 13, 14, 12, -1, 14});
    }
}

TEST_CASE("non_padding_ids numbers from the ids, whatever the mask (RoBERTa)", "[pipeline][batch]") {
    IdMatrix ids(2, 4);
    ids << 5, 1, 6, 7,  //
        1, 1, 8, 9;
    PipelineOptions options;
    options.positions = PositionNumbering::non_padding_ids;
    options.padding_id = 1;
    options.padded_rows = PaddedRows::computed;
    const Pipeline pipeline = make(options, 2);  // RoBERTa: padding_idx 1, offset 2
    // Pad ids read row padding_idx = 1; the others 2, 3, ... counting non-pad ids.
    require_rows(pipeline.forward(Batch(ids)), ids, {2, 1, 3, 4, 1, 1, 2, 3});
    // A mask marking the pad ids padded leaves their rows zero by default, the positions the same.
    IdMatrix mask(2, 4);
    mask << 1, 0, 1, 1,  //
        0, 0, 1, 1;
    Batch batch(ids);
    batch.padding = Padding::from_mask(mask);
    options.padded_rows = PaddedRows::zero;
    require_rows(make(options, 2).forward(batch), ids, {2, -1, 3, 4, -1, -1, 2, 3});
    options.padding_id.reset();
    CHECK_THROWS_AS(make(options, 2), seqembed::value_error);
}

TEST_CASE("Explicit position ids are taken as they stand", "[pipeline][batch]") {
    IdMatrix ids(2, 3);
    ids << 5, 6, 7,  //
        8, 9, 10;
    IdMatrix position_ids(2, 3);
    position_ids << 0, 1, 2,  //
        1, 1, 0;  // what generate() gives a left-padded row: padded tokens 1
    Batch batch(ids);
    batch.position_ids = position_ids;
    require_rows(make({}, 2).forward(batch), ids, {2, 3, 4, 3, 3, 2});
    SECTION("1 x seq position ids serve every sequence") {
        IdMatrix shared(1, 3);
        shared << 7, 8, 9;
        batch.position_ids = shared;
        require_rows(make({}).forward(batch), ids, {7, 8, 9, 7, 8, 9});
    }
    SECTION("down to -offset they read the rows before the offset; past it is an error naming the table") {
        position_ids(0, 0) = -2;
        require_rows(make({}, 2).forward(batch), ids, {0, 3, 4, 3, 3, 2});
        position_ids(0, 0) = -3;
        CHECK_THROWS_AS(make({}, 2).forward(batch), seqembed::index_error);
        position_ids(0, 0) = 38;  // table row 40: past the 40 rows
        CHECK_THROWS_AS(make({}, 2).forward(batch), seqembed::index_error);
    }
    SECTION("with a step offset, or of the wrong shape, they are refused before anything is written") {
        RowMatrix<float> out = RowMatrix<float>::Constant(6, table_width, 7.0f);
        batch.offsets = 1;
        CHECK_THROWS_AS(make({}).forward_into(batch, out), seqembed::value_error);
        batch.offsets = 0;
        IdMatrix wrong(2, 2);
        wrong.setZero();
        batch.position_ids = wrong;
        CHECK_THROWS_AS(make({}).forward_into(batch, out), seqembed::shape_error);
        CHECK((out.array() == 7.0f).all());
    }
}

TEST_CASE("Computed padded rows look their ids up, and are checked as real ones", "[pipeline][batch]") {
    IdMatrix ids(1, 4);
    ids << 3, 4, 0, 0;
    IdMatrix mask(1, 4);
    mask << 1, 1, 0, 0;
    Batch batch(ids);
    batch.padding = Padding::from_mask(mask);
    PipelineOptions options;
    options.positions = PositionNumbering::sequence_index;
    options.padded_rows = PaddedRows::computed;
    require_rows(make(options).forward(batch), ids, {0, 1, 2, 3});  // BERT: word[pad] + position[t]
    ids(0, 3) = 99;  // outside the vocabulary: ignored for a zero row, refused for a computed one
    options.padded_rows = PaddedRows::zero;
    CHECK_NOTHROW(make(options).forward(batch));
    options.padded_rows = PaddedRows::computed;
    CHECK_THROWS_AS(make(options).forward(batch), seqembed::index_error);
}

TEST_CASE("The token type is added before the position, or after it as GPT-2 adds it", "[pipeline][batch]") {
    // 1 + 2^-24 rounds to 1, so (1 + 2^-24) + (-1) = 0 while (1 + (-1)) + 2^-24 = 2^-24.
    const RowMatrix<float> tokens = RowMatrix<float>::Constant(4, table_width, 1.0f);
    const RowMatrix<float> positions = RowMatrix<float>::Constant(4, table_width, -1.0f);
    RowMatrix<float> types = RowMatrix<float>::Constant(2, table_width, 0x1p-24f);
    types.row(0).setConstant(0.5f);
    seqembed::TokenEmbeddingOptions unscaled;
    unscaled.scale = seqembed::EmbeddingScale::none();
    const auto build = [&](seqembed::TokenTypeOptions type_options) {
        Pipeline pipeline(TokenEmbedding<float>::from_weights(tokens, unscaled),
                          LearnedPositionalEmbedding<float>::from_weights(positions), {});
        pipeline.set_token_types(seqembed::TokenTypeEmbedding<float>::from_weights(types), type_options);
        return pipeline;
    };
    IdMatrix ids(1, 2);
    ids << 1, 2;
    IdMatrix type_ids(1, 2);
    type_ids << 1, 1;
    Batch batch(ids);
    batch.token_types = type_ids;
    const seqembed::TokenTypeOptions gpt2{seqembed::TokenTypeOrder::after_positions, false};
    CHECK(build({}).forward(batch)(0, 0) == 0.0f);
    CHECK(build(gpt2).forward(batch)(0, 0) == 0x1p-24f);
    // Without type ids: row 0 by default (BERT's zeros), nothing when row_zero_by_default is off.
    CHECK(build({}).forward(Batch(ids))(0, 0) == 0.5f);
    CHECK(build(gpt2).forward(Batch(ids))(0, 0) == 0.0f);
}

TEST_CASE("The rotary stage takes a Batch's positions as the pipeline numbers them", "[pipeline][batch][rotary]") {
    using Rope = seqembed::RotaryEmbedding<float>;
    IdMatrix ids(2, 3);
    ids << 5, 6, 7,  //
        8, 9, 10;
    IdMatrix mask(2, 5);
    mask << 1, 1, 1, 1, 1,  //
        0, 1, 1, 0, 1;
    Batch batch(ids);
    batch.padding = Padding::from_mask(mask);
    const auto vector_of = [](std::initializer_list<std::int64_t> values) {
        Rope::PositionVector v(static_cast<Index>(values.size()));
        Index k = 0;
        for (std::int64_t value : values) v[k++] = value;
        return v;
    };
    CHECK(Rope::positions_of(batch, PositionNumbering::sequence_index) == vector_of({2, 3, 4, 2, -1, 4}));
    CHECK(Rope::positions_of(batch, PositionNumbering::real_tokens) == vector_of({2, 3, 4, 1, -1, 2}));
    IdMatrix position_ids(2, 3);
    position_ids << 4, 5, 6,  //
        1, 1, 0;
    batch.position_ids = position_ids;
    const Rope::PositionVector given = Rope::positions_of(batch);
    CHECK(given == vector_of({4, 5, 6, 1, -1, 0}));

    seqembed::RotaryOptions options;
    options.head_dim = 8;
    options.max_positions = 16;
    const Rope rope(options);
    RowMatrix<float> q = RowMatrix<float>::Random(6, 16);
    RowMatrix<float> k = RowMatrix<float>::Random(6, 8);
    RowMatrix<float> q_by_positions = q;
    RowMatrix<float> k_by_positions = k;
    rope.apply(q, k, 2, 1, batch);
    Rope::PositionVector real = given;
    real[4] = 0;  // the padded token: rotated here, then put back (the Batch overload leaves it alone)
    const RowMatrix<float> q_padded = q_by_positions.row(4);
    const RowMatrix<float> k_padded = k_by_positions.row(4);
    rope.apply(q_by_positions, k_by_positions, 2, 1, real);
    q_by_positions.row(4) = q_padded;
    k_by_positions.row(4) = k_padded;
    CHECK(q == q_by_positions);
    CHECK(k == k_by_positions);
}

TEST_CASE("A padded token numbered -1 with no row for it is refused by name", "[pipeline][batch]") {
    IdMatrix ids(1, 3);
    ids << 3, 4, 0;
    IdMatrix mask(1, 3);
    mask << 1, 1, 0;
    Batch batch(ids);
    batch.padding = Padding::from_mask(mask);
    PipelineOptions options;
    options.padded_rows = PaddedRows::computed;  // real_tokens numbers the padded token -1
    std::string message;
    try {
        (void)make(options).forward(batch);  // offset 0: no row before the table
    } catch (const seqembed::index_error& e) {
        message = e.what();
    }
    CHECK(message.find("padded token (batch 0, position 2) takes position -1 under real_tokens") !=
          std::string::npos);
    require_rows(make(options, 2).forward(batch), ids, {2, 3, 1});  // OPT's offset 2: row 1
}

TEST_CASE("A per-call rotary rule chooses its frequencies from every token's position, padded ones included",
          "[pipeline][batch][rotary]") {
    using Rope = seqembed::RotaryEmbedding<float>;
    seqembed::RotaryOptions options;
    options.head_dim = 8;
    options.max_positions = 32;
    options.scaling = seqembed::RotaryScaling::longrope;
    options.original_max_position_embeddings = 8;
    options.factor = 4.0;
    options.short_factor = {1.0, 1.0, 1.0, 1.0};
    options.long_factor = {2.0, 4.0, 8.0, 16.0};
    const Rope rope(options);
    // Right padding: the real tokens reach position 5, the padded ones 9, past the original 8:
    // Hugging Face's max(position_ids) + 1 = 10 takes the long factors for every row.
    IdMatrix ids(1, 10);
    ids << 1, 2, 3, 4, 5, 6, 0, 0, 0, 0;
    IdMatrix mask(1, 10);
    mask << 1, 1, 1, 1, 1, 1, 0, 0, 0, 0;
    Batch batch(ids);
    batch.padding = Padding::from_mask(mask);
    const RowMatrix<float> q0 = RowMatrix<float>::Random(10, 8);
    const RowMatrix<float> k0 = RowMatrix<float>::Random(10, 8);
    RowMatrix<float> q = q0;
    RowMatrix<float> k = k0;
    rope.apply(q, k, 1, 1, batch, PositionNumbering::sequence_index);
    Rope::PositionVector all(10);
    for (Index t = 0; t < 10; ++t) all[t] = t;
    RowMatrix<float> q_all = q0;
    RowMatrix<float> k_all = k0;
    rope.apply(q_all, k_all, 1, 1, all);  // every row, a call of length 10
    CHECK(q.topRows(6) == q_all.topRows(6));
    CHECK(k.topRows(6) == k_all.topRows(6));
    CHECK(q.bottomRows(4) == q0.bottomRows(4));  // padded rows left alone
    RowMatrix<float> q_short = q0;
    RowMatrix<float> k_short = k0;
    rope.apply(q_short.topRows(6), k_short.topRows(6), 1, 1, all.head(6));  // a call of length 6
    CHECK(q.topRows(6) != q_short.topRows(6));
}
