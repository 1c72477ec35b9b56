// InputPipeline: the sum, padding on either side, positions from masks (fairseq, OPT), step
// offsets, dropout in training, threads, empty batches; the row kernel on every ISA, with any
// stores, threads, output alignment and prefetch distance, giving the same bits.
#include <seqembed/seqembed.hpp>

#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "isa_support.hpp"
#include "golden_support.hpp"

using seqembed::IdMatrix;
using seqembed::Index;
using seqembed::InputPipeline;
using seqembed::LearnedPositionalEmbedding;
using seqembed::MaskMatrix;
using seqembed::Padding;
using seqembed::RowMatrix;
using seqembed::SinusoidalOptions;
using seqembed::SinusoidalPositionalEncoding;
using seqembed::TokenEmbedding;

namespace {

IdMatrix sample_ids() {
    IdMatrix ids(3, 6);
    ids << 5, 6, 7, 1, 1, 1,  //
        1, 1, 8, 9, 10, 11,   //
        12, 13, 14, 15, 16, 17;
    return ids;
}


/// The first element of `storage` on a 64-byte line (storage must have 64 bytes to spare).
template <typename T>
T* on_line(std::vector<T>& storage) {
    const auto misaligned = reinterpret_cast<std::uintptr_t>(storage.data()) % 64;
    return storage.data() + (misaligned == 0 ? 0 : (64 - misaligned) / sizeof(T));
}

/// A paper sinusoidal table of max_positions rows (the default table's first rows, computed
/// once for the many pipelines of a test).
template <typename Scalar>
SinusoidalPositionalEncoding<Scalar> short_table(Index d_model, Index max_positions,
                                                 seqembed::BeyondTable beyond = seqembed::BeyondTable::throw_error) {
    SinusoidalOptions options;
    options.max_positions = max_positions;
    options.beyond = beyond;
    return SinusoidalPositionalEncoding<Scalar>(d_model, options);
}

}  // namespace

TEMPLATE_TEST_CASE("Each row is embedding x scale + position, rounded as PyTorch rounds it",
                   "[pipeline]", float, double) {
    const InputPipeline<TestType> pipeline(TokenEmbedding<TestType>(20, 16),
                                           SinusoidalPositionalEncoding<TestType>(16));
    const IdMatrix ids = sample_ids();
    const RowMatrix<TestType> out = pipeline.forward(ids);
    REQUIRE(out.rows() == 18);
    const TestType scale = pipeline.embedding().scale();
    for (Index b = 0; b < 3; ++b)
        for (Index t = 0; t < 6; ++t)
            for (Index j = 0; j < 16; ++j) {
                const TestType scaled = pipeline.embedding().table()(ids(b, t), j) * scale;
                const TestType expected = scaled + pipeline.positions().table()(t, j);
                REQUIRE(out(b * 6 + t, j) == expected);
            }
}

TEST_CASE("Left and right padding give every real token its true position", "[pipeline]") {
    const InputPipeline<float> pipeline(TokenEmbedding<float>(20, 8),
                                        SinusoidalPositionalEncoding<float>(8));
    const IdMatrix ids = sample_ids();
    MaskMatrix mask(3, 6);
    mask << 1, 1, 1, 0, 0, 0,  //
        0, 0, 1, 1, 1, 1,      //
        1, 1, 1, 1, 1, 1;

    const RowMatrix<float> by_id = pipeline.forward(ids, Padding::by_id(1));
    const RowMatrix<float> by_mask = pipeline.forward(ids, Padding::from_mask(mask));
    REQUIRE(by_id == by_mask);

    // Row 0 is right padded, row 1 left padded: check each against the unpadded sequence.
    IdMatrix first(1, 3), second(1, 4);
    first << 5, 6, 7;
    second << 8, 9, 10, 11;
    const RowMatrix<float> alone_first = pipeline.forward(first);
    const RowMatrix<float> alone_second = pipeline.forward(second);
    REQUIRE(by_id.middleRows(0, 3) == alone_first);
    REQUIRE(by_id.middleRows(3, 3).isZero(0));
    REQUIRE(by_id.middleRows(6, 2).isZero(0));
    REQUIRE(by_id.middleRows(8, 4) == alone_second);
    REQUIRE(by_id.middleRows(12, 6) == pipeline.forward(ids.row(2)));

    // Lengths say the same, with the side given.
    const std::vector<std::int64_t> right_lengths{3, 6, 6};
    const RowMatrix<float> right = pipeline.forward(ids, Padding::right(right_lengths));
    REQUIRE(right.middleRows(0, 6) == by_id.middleRows(0, 6));
    const std::vector<std::int64_t> left_lengths{6, 4, 6};
    const RowMatrix<float> left = pipeline.forward(ids, Padding::left(left_lengths));
    REQUIRE(left.middleRows(6, 6) == by_id.middleRows(6, 6));
}

TEST_CASE("Positions from the padding mask match fairseq's make_positions", "[pipeline]") {
    // A zero embedding leaves the position rows visible in the output.
    const auto zeros = TokenEmbedding<double>::from_weights(RowMatrix<double>::Zero(20, 8));
    const SinusoidalPositionalEncoding<double> fairseq(8, SinusoidalOptions::fairseq(1));
    const InputPipeline<double> pipeline(zeros, fairseq);
    const IdMatrix ids = golden::ids(seqembed_golden::mask_ids_3x6, 3, 6);
    const RowMatrix<double> out = pipeline.forward(ids, Padding::by_id(1));
    for (Index i = 0; i < 18; ++i) {
        const long position = seqembed_golden::fairseq_positions_3x6[i];
        INFO("token " << i << ", fairseq position " << position);
        if (position == 1) {  // fairseq's padding_idx: a padded token
            REQUIRE(out.row(i).isZero(0));
        } else {
            REQUIRE(out.row(i) == fairseq.rows(position - fairseq.options().offset, 1));
        }
    }
}

TEST_CASE("Positions from the attention mask match OPT's, with BART/OPT's offset of 2",
          "[pipeline]") {
    RowMatrix<float> table(10, 4);
    for (Index r = 0; r < 10; ++r) table.row(r).setConstant(static_cast<float>(100 + r));
    const auto positions = LearnedPositionalEmbedding<float>::from_weights(
        table, seqembed::LearnedPositionsOptions::bart());
    const auto zeros = TokenEmbedding<float>::from_weights(RowMatrix<float>::Zero(20, 4));
    const InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(zeros, positions);
    const IdMatrix ids = golden::ids(seqembed_golden::mask_ids_3x6, 3, 6);
    const RowMatrix<float> out = pipeline.forward(ids, Padding::by_id(1));
    for (Index i = 0; i < 18; ++i) {
        const long position = seqembed_golden::opt_positions_3x6[i];
        INFO("token " << i << ", OPT position " << position);
        if (position < 0) {
            REQUIRE(out.row(i).isZero(0));
        } else {
            REQUIRE(out(i, 0) == static_cast<float>(100 + position + seqembed_golden::opt_position_offset));
        }
    }
}

TEMPLATE_TEST_CASE("A step offset shifts every position (incremental decoding)", "[pipeline]",
                   float, double) {
    const InputPipeline<TestType> pipeline(TokenEmbedding<TestType>(20, 8),
                                           SinusoidalPositionalEncoding<TestType>(8));
    IdMatrix whole(1, 7), step(1, 1);
    whole << 3, 1, 4, 1, 5, 9, 2;
    step << 2;
    const RowMatrix<TestType> all = pipeline.forward(whole);
    REQUIRE(pipeline.forward(step, Padding::none(), 6) == all.row(6));
    // Left padded incremental step: the real token count decides, plus the offset.
    IdMatrix padded(1, 3);
    padded << 0, 0, 2;
    const std::vector<std::int64_t> length{1};
    REQUIRE(pipeline.forward(padded, Padding::left(length), 6).row(2) == all.row(6));
}

TEST_CASE("Learned positions serve seed 003's 350 tokens from a 512-row table", "[pipeline]") {
    const LearnedPositionalEmbedding<float> table(512, 16);
    const InputPipeline<float, LearnedPositionalEmbedding<float>> pipeline(
        TokenEmbedding<float>(100, 16), table);
    IdMatrix ids = IdMatrix::Constant(2, 350, 7);
    const RowMatrix<float> out = pipeline.forward(ids);
    const float scale = pipeline.embedding().scale();
    for (const Index t : {0, 1, 349}) {
        const RowMatrix<float> scaled = pipeline.embedding().table().row(7) * scale;
        REQUIRE(out.row(350 + t) == scaled + table.rows(t, 1));
    }
    const IdMatrix too_long = IdMatrix::Constant(1, 513, 7);
    REQUIRE_THROWS_AS(pipeline.forward(too_long), seqembed::index_error);
}

TEST_CASE("Training applies the dropout mask of the call, evaluation does not", "[pipeline]") {
    InputPipeline<float> pipeline(TokenEmbedding<float>(50, 32), SinusoidalPositionalEncoding<float>(32),
                                  {/*dropout=*/0.3, /*dropout_seed=*/99});
    const IdMatrix ids = IdMatrix::Constant(4, 20, 3) + IdMatrix::Identity(4, 20);
    const RowMatrix<float> evaluation = pipeline.forward(ids);
    REQUIRE(pipeline.dropout().calls() == 0);

    pipeline.set_training(true);
    const RowMatrix<float> first = pipeline.forward(ids);
    const RowMatrix<float> second = pipeline.forward(ids);
    REQUIRE(pipeline.dropout().calls() == 2);
    REQUIRE(first != second);
    const float keep_scale = pipeline.dropout().keep_scale<float>();
    for (const std::uint64_t call : {0u, 1u}) {
        const RowMatrix<float>& out = call == 0 ? first : second;
        const MaskMatrix mask = pipeline.dropout().mask(call, out.rows(), out.cols());
        for (Index i = 0; i < out.size(); ++i)
            REQUIRE(out.data()[i] == (mask.data()[i] ? evaluation.data()[i] * keep_scale : 0.0f));
        const double kept = mask.cast<double>().mean();
        CHECK(std::abs(kept - 0.7) < 0.03);
    }

    // The same seed and call number give the same output in another pipeline object.
    InputPipeline<float> replay(pipeline.embedding(), pipeline.positions(), {0.3, 99});
    replay.set_training(true);
    REQUIRE(replay.forward(ids) == first);

    // A copy shares the tables and the call counter: it never repeats the original's masks.
    const InputPipeline<float> copy = pipeline;
    REQUIRE(copy.embedding().table().data() == pipeline.embedding().table().data());
    REQUIRE(copy.positions().table().data() == pipeline.positions().table().data());
    const RowMatrix<float> third = copy.forward(ids);  // call 2
    REQUIRE(pipeline.dropout().calls() == 3);
    REQUIRE(replay.forward(ids) == second);  // the replay's call 1
    REQUIRE(replay.forward(ids) == third);   // and its call 2
    REQUIRE(pipeline.forward(ids) != third);  // call 3
    REQUIRE(copy.dropout().calls() == 4);
}

TEST_CASE("A const pipeline gives the same answers from several threads", "[pipeline][threads]") {
    const InputPipeline<float> pipeline(TokenEmbedding<float>(1000, 64),
                                        SinusoidalPositionalEncoding<float>(64));
    IdMatrix ids(8, 100);
    for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = (i * 37) % 1000;
    const RowMatrix<float> expected = pipeline.forward(ids);
    std::vector<RowMatrix<float>> results(4, RowMatrix<float>(ids.size(), 64));
    std::vector<std::thread> threads;
    for (auto& result : results)
        threads.emplace_back([&pipeline, &ids, &result] {
            for (int repeat = 0; repeat < 5; ++repeat) pipeline.forward_into(ids, result);
        });
    for (auto& thread : threads) thread.join();
    for (const auto& result : results) REQUIRE(result == expected);
}

TEST_CASE("forward and forward_into agree", "[pipeline]") {
    const InputPipeline<double> pipeline(TokenEmbedding<double>(20, 8),
                                         SinusoidalPositionalEncoding<double>(8));
    const IdMatrix ids = sample_ids();
    RowMatrix<double> out(18, 8);
    pipeline.forward_into(ids, Padding::by_id(1), out);
    REQUIRE(out == pipeline.forward(ids, Padding::by_id(1)));
    pipeline.forward_into(ids, out);
    REQUIRE(out == pipeline.forward(ids));
}

TEST_CASE("Any number of threads gives the same output, dropout included", "[pipeline][threads]") {
    const Index width = 256;
    IdMatrix ids(12, 200);
    for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = (i * 131) % 500;
    ids.row(3).tail(50).setConstant(0);  // some padding
    std::vector<RowMatrix<float>> outputs;
    for (const int threads : {1, 2, 3, 0}) {
        seqembed::PipelineOptions options;
        options.dropout = 0.3;
        options.dropout_seed = 5;
        options.threads = threads;
        InputPipeline<float> pipeline(TokenEmbedding<float>(500, width),
                                      SinusoidalPositionalEncoding<float>(width), options);
        pipeline.set_training(true);
        outputs.push_back(pipeline.forward(ids, Padding::by_id(0)));
        pipeline.set_training(false);
        outputs.push_back(pipeline.forward(ids, Padding::by_id(0)));
    }
    for (std::size_t i = 2; i < outputs.size(); ++i) REQUIRE(outputs[i] == outputs[i % 2]);
    REQUIRE(outputs[0] != outputs[1]);
}

TEST_CASE("forward_into writes into a strided or unaligned view of caller memory", "[pipeline]") {
    IdMatrix ids(3, 40);
    for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = (i * 7) % 50;
    seqembed::PipelineOptions options;
    options.dropout = 0.3;
    InputPipeline<double> pipeline(TokenEmbedding<double>(50, 24),
                                   SinusoidalPositionalEncoding<double>(24), options);
    pipeline.set_training(true);
    RowMatrix<double> storage = RowMatrix<double>::Constant(ids.size() * 24 + 1, 1, -7.0);
    Eigen::Map<RowMatrix<double>> shifted(storage.data() + 1, ids.size(), 24);
    pipeline.forward_into(ids, Padding::none(), shifted);
    REQUIRE(storage(0, 0) == -7.0);  // nothing written before the view
    InputPipeline<double> replay(pipeline.embedding(), pipeline.positions(), options);
    replay.set_training(true);
    REQUIRE(RowMatrix<double>(shifted) == replay.forward(ids));
}

TEMPLATE_TEST_CASE("A pipeline over a bfloat16 or half table gives the float pipeline's answer on its values",
                   "[pipeline][storage][streaming][isa]", Eigen::bfloat16, Eigen::half) {
    // The narrow rows are widened exactly, by each ISA's vectors (whole vectors, the ends of rows
    // that start inside a vector, rows narrower than a vector) or one by one. The float pipeline
    // over the same values, with the same stores and dropout, under the scalar ISA, is the
    // reference.
    IdMatrix ids(3, 9);
    for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = (i * 5) % 64;
    ids(1, 0) = 0;  // a padded token
    using Narrow = seqembed::TokenEmbedding<float, TestType>;
    for (const Index width : {5, 13, 32, 37, 256}) {
        const RowMatrix<float> weights = RowMatrix<float>::Random(64, width);
        const RowMatrix<TestType> narrow = weights.cast<TestType>();
        const Narrow narrow_embedding = Narrow::from_weights(narrow);
        const auto wide_embedding = TokenEmbedding<float>::from_weights(narrow.template cast<float>());
        const auto positions = short_table<float>(width, 16);
        for (const auto stores : {seqembed::OutputStores::cached, seqembed::OutputStores::streaming})
            for (const bool training : {false, true}) {
                seqembed::PipelineOptions options;
                options.dropout = 0.3;
                options.dropout_seed = 5;
                options.output_stores = stores;
                RowMatrix<float> expected;
                for_each_isa([&](seqembed::Isa isa) {
                    if (isa == seqembed::Isa::scalar) {  // the first
                        InputPipeline<float> wide(wide_embedding, positions, options);
                        wide.set_training(training);
                        expected = wide.forward(ids, Padding::by_id(0));
                    }
                    for (const Index shift : {0, 3}) {
                        CAPTURE(width, shift, static_cast<int>(stores), training);
                        InputPipeline<float, SinusoidalPositionalEncoding<float>, Narrow> compact(narrow_embedding,
                                                                                                 positions, options);
                        compact.set_training(training);
                        std::vector<float> storage(static_cast<std::size_t>(ids.size() * width + 16), -1.0f);
                        Eigen::Map<RowMatrix<float>> out(storage.data() + shift, ids.size(), width);
                        compact.forward_into(ids, Padding::by_id(0), out);
                        REQUIRE(out == expected);
                        for (Index k = 0; k < shift; ++k) REQUIRE(storage[static_cast<std::size_t>(k)] == -1.0f);
                        REQUIRE(storage.back() == -1.0f);
                    }
                });
            }
    }
}

TEMPLATE_TEST_CASE("Streaming and cached stores write the same bits, dropout included, on every ISA",
                   "[pipeline][streaming][isa]", float, double) {
    IdMatrix ids(3, 40);
    for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = (i * 7) % 50;
    ids(1, 0) = 0;  // a padded token
    // Widths below, at and above a 64-byte line and a mask span (240 elements), not multiples
    // of any vector; outputs that start off alignment, and rows apart (an outer stride): lines
    // shared by rows, by a row and a gap, or by a row and memory outside the output. Every ISA,
    // and every kind of stores, must write the scalar ISA's cached output.
    for (const Index width : {5, 13, 24, 37, 64, 250, 480}) {
        const TokenEmbedding<TestType> embedding(50, width);
        const auto positions = short_table<TestType>(width, 40);
        std::vector<RowMatrix<TestType>> reference;  // [training]: the first outputs written
        for_each_isa([&](seqembed::Isa) {
            for (const Index shift : {0, 1, 3})
                for (const Index gap : {0, 3})
                    for (const auto stores : {seqembed::OutputStores::cached, seqembed::OutputStores::streaming,
                                              seqembed::OutputStores::automatic})
                        for (const bool training : {false, true}) {
                            INFO("width " << width << ", shift " << shift << ", gap " << gap << ", stores "
                                          << static_cast<int>(stores) << ", training " << training);
                            const Index stride = width + gap;
                            const TestType sentinel = TestType(-12345.5);
                            seqembed::PipelineOptions options;
                            options.output_stores = stores;
                            options.dropout = 0.3;  // round(0.3 * 65536) has a low byte: ties occur
                            options.dropout_seed = 11;
                            InputPipeline<TestType> pipeline(embedding, positions, options);
                            pipeline.set_training(training);
                            // Storage from a 64-byte boundary, so that `shift` sets the alignment.
                            const Index used = ids.size() * stride + 64;
                            std::vector<TestType> raw(static_cast<std::size_t>(used + 64), sentinel);
                            TestType* storage = on_line(raw);
                            Eigen::Map<RowMatrix<TestType>, 0, Eigen::OuterStride<>> view(
                                storage + shift, ids.size(), width, Eigen::OuterStride<>(stride));
                            pipeline.forward_into(ids, Padding::by_id(0), view);
                            if (reference.size() < 2) {
                                reference.emplace_back(view);
                            } else {
                                REQUIRE(view == reference[training ? 1 : 0]);
                            }
                            // Nothing written outside the rows: before, between and after them.
                            for (Index k = 0; k < used; ++k) {
                                const Index at = k - shift;
                                const bool inside = at >= 0 && at < ids.size() * stride && at % stride < width;
                                if (!inside && !(storage[k] == sentinel)) {
                                    CAPTURE(k);
                                    REQUIRE(storage[k] == sentinel);
                                }
                            }
                        }
        });
        REQUIRE(reference.size() == 2);
        REQUIRE(reference[0] != reference[1]);
    }
}

TEMPLATE_TEST_CASE("Every ISA's row kernel writes the scalar formula's bits, at every alignment",
                   "[pipeline][streaming][isa]", float, double) {
    // The row kernel alone: rows narrower than a vector (3), of an odd width (77) and of whole
    // vectors of every ISA (16, 48: written joined when off alignment), one row and rows end to
    // end (vectors shared by two rows), each of the 16 alignments of a 64-byte
    // line, with and without a position row and dropout, plain and streaming stores, with and
    // without a table row to request ahead (which changes no value). Each element must be
    // Scalar(table) * scale, rounded, + position, rounded, x the mask's factor, and nothing
    // outside the rows may be written.
    const seqembed::Dropout dropout(0.3, 21);
    const TestType scale = TestType(22.627417);
    const TestType keep = dropout.keep_scale<TestType>();
    for (const Index width : {3, 16, 48, 77})
        for (const Index rows : {1, 5}) {
            const RowMatrix<TestType> embedding = RowMatrix<TestType>::Random(rows, width);
            const RowMatrix<TestType> position = RowMatrix<TestType>::Random(rows, width);
            const MaskMatrix kept = dropout.mask(4, rows, width);
            for (const bool has_position : {false, true})
                for (const bool dropping : {false, true}) {
                    RowMatrix<TestType> expected(rows, width);
                    for (Index r = 0; r < rows; ++r)
                        for (Index j = 0; j < width; ++j) {
                            TestType value = embedding(r, j) * scale;
                            if (has_position) value = value + position(r, j);
                            if (dropping) value = value * (kept(r, j) != 0 ? keep : TestType(0));
                            expected(r, j) = value;
                        }
                    seqembed::detail::RowJob<TestType> job;
                    job.width = width;
                    job.scale = scale;
                    job.dropping = dropping;
                    job.key = {dropout.seed(), 4, dropout.threshold()};
                    job.keep_scale = keep;
                    for_each_isa([&](seqembed::Isa) {
                        for (Index shift = 0; shift < 16; ++shift)
                            for (const bool streaming : {false, true})
                                for (const bool ahead : {false, true}) {
                                    CAPTURE(width, rows, has_position, dropping, shift, streaming, ahead);
                                    const TestType sentinel = TestType(-777);
                                    std::vector<TestType> raw(static_cast<std::size_t>(rows * width + 64), sentinel);
                                    TestType* out = on_line(raw) + shift;
                                    job.streaming = streaming;
                                    seqembed::detail::RowPass<TestType, TestType> pass(job);
                                    for (Index r = 0; r < rows; ++r) {
                                        seqembed::detail::RowSources<TestType, TestType> sources{
                                            out + r * width, embedding.row(r).data(), static_cast<std::uint64_t>(r * width)};
                                        if (has_position) sources.add(position.row(r).data());
                                        pass.add(sources, ahead ? embedding.row((r + 1) % rows).data() : nullptr);
                                    }
                                    pass.finish();
                                    REQUIRE(Eigen::Map<const RowMatrix<TestType>>(out, rows, width) == expected);
                                    for (TestType* before = raw.data(); before < out; ++before)
                                        REQUIRE(*before == sentinel);
                                    for (TestType* after = out + rows * width; after < raw.data() + raw.size(); ++after)
                                        REQUIRE(*after == sentinel);
                                }
                    });
                }
        }
}

TEMPLATE_TEST_CASE("Rows of whole vectors off alignment give the scalar ISA's bits, with LayerNorm and padding",
                   "[pipeline][streaming][isa]", float, double) {
    // Rows whose width is a multiple of every ISA's vector, end to end at each alignment of a
    // 64-byte line: each output vector is joined from two of the row's (and the first from the
    // row before). Token types, learned positions, LayerNorm, dropout and padded rows between
    // real ones; the scalar ISA's output on a line is the reference, and nothing outside the
    // rows may be written.
    IdMatrix ids(3, 7);
    for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = 1 + (i * 5) % 30;
    ids(1, 0) = 0;
    ids(1, 1) = 0;
    ids(2, 6) = 0;
    IdMatrix types(3, 7);
    for (Index i = 0; i < types.size(); ++i) types.data()[i] = i % 2;
    seqembed::Batch batch(ids);
    batch.padding = Padding::by_id(0);
    batch.token_types = types;
    for (const Index width : {16, 64, 512})
        for (const bool normalized : {false, true})
            for (const bool training : {false, true}) {
                const RowMatrix<TestType> tokens = RowMatrix<TestType>::Random(31, width);
                const RowMatrix<TestType> positions = RowMatrix<TestType>::Random(7, width);
                const RowMatrix<TestType> type_rows = RowMatrix<TestType>::Random(2, width);
                const Eigen::Matrix<TestType, 1, Eigen::Dynamic> gamma =
                    Eigen::Matrix<TestType, 1, Eigen::Dynamic>::Random(width);
                const Eigen::Matrix<TestType, 1, Eigen::Dynamic> beta =
                    Eigen::Matrix<TestType, 1, Eigen::Dynamic>::Random(width);
                // A new pipeline per output, so that each draws the mask of call 0.
                const auto make = [&](seqembed::OutputStores stores) {
                    seqembed::PipelineOptions options;
                    options.dropout = 0.3;
                    options.dropout_seed = 17;
                    options.output_stores = stores;
                    InputPipeline<TestType, LearnedPositionalEmbedding<TestType>> pipeline(
                        TokenEmbedding<TestType>::from_weights(tokens),
                        LearnedPositionalEmbedding<TestType>::from_weights(positions), options);
                    pipeline.set_token_types(seqembed::TokenTypeEmbedding<TestType>::from_weights(type_rows));
                    if (normalized)
                        pipeline.set_layer_norm(seqembed::LayerNorm<TestType>::from_weights(gamma, beta, 1e-5));
                    pipeline.set_training(training);
                    return pipeline;
                };
                RowMatrix<TestType> expected;
                for_each_isa([&](seqembed::Isa isa) {
                    for (Index shift = 0; shift < Index(64 / sizeof(TestType)); ++shift)
                        for (const auto stores : {seqembed::OutputStores::cached, seqembed::OutputStores::streaming}) {
                            CAPTURE(width, normalized, training, shift, static_cast<int>(stores));
                            const auto pipeline = make(stores);
                            const TestType sentinel = TestType(-555);
                            std::vector<TestType> raw(static_cast<std::size_t>(ids.size() * width + 64), sentinel);
                            TestType* out = on_line(raw) + shift;
                            Eigen::Map<RowMatrix<TestType>> view(out, ids.size(), width);
                            pipeline.forward_into(batch, view);
                            if (isa == seqembed::Isa::scalar && shift == 0 &&
                                stores == seqembed::OutputStores::cached)
                                expected = view;
                            REQUIRE(view == expected);
                            for (TestType* before = raw.data(); before < out; ++before) REQUIRE(*before == sentinel);
                            for (TestType* after = out + ids.size() * width; after < raw.data() + raw.size(); ++after)
                                REQUIRE(*after == sentinel);
                        }
                });
            }
}

TEST_CASE("Workers that share cache lines write the same bits as one thread, with any stores and ISA",
          "[pipeline][threads][streaming][isa]") {
    // Enough elements for three workers (2^18 each), a width that is no multiple of a vector and
    // an output off alignment: workers' first and last rows share 64-byte lines. The output is
    // over 4 MiB, where automatic stores stream.
    const Index width = 133;
    IdMatrix ids(6, 1400);
    REQUIRE(static_cast<std::size_t>(ids.size() * width) * sizeof(float) > (std::size_t{4} << 20));
    for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = (i * 131) % 500;
    ids.row(2).tail(40).setConstant(0);  // padding
    const float sentinel = -4321.0f;
    const TokenEmbedding<float> embedding(500, width);
    const auto positions = short_table<float>(width, 1400);
    std::vector<RowMatrix<float>> outputs;
    for_each_isa([&](seqembed::Isa) {
        for (const int threads : {1, 3})
            for (const auto stores : {seqembed::OutputStores::cached, seqembed::OutputStores::streaming,
                                      seqembed::OutputStores::automatic}) {
                seqembed::PipelineOptions options;
                options.dropout = 0.3;
                options.dropout_seed = 9;
                options.threads = threads;
                options.output_stores = stores;
                InputPipeline<float> pipeline(embedding, positions, options);
                pipeline.set_training(true);
                std::vector<float> storage(static_cast<std::size_t>(ids.size() * width + 2), sentinel);
                Eigen::Map<RowMatrix<float>> view(storage.data() + 1, ids.size(), width);
                pipeline.forward_into(ids, Padding::by_id(0), view);
                REQUIRE(storage.front() == sentinel);
                REQUIRE(storage.back() == sentinel);
                outputs.emplace_back(view);
            }
    });
    for (std::size_t i = 1; i < outputs.size(); ++i) REQUIRE(outputs[i] == outputs[0]);
}

TEST_CASE("Training writes the same bits with any ISA, stores, threads, alignment and row gap",
          "[pipeline][threads][streaming][isa]") {
    // 12 sequences of 500 tokens: up to three workers, left and right padding, positions past a
    // table of 300 rows (each computed into its output row, which the kernel then reads as the
    // position) or all inside one of 5000. A width of whole lines (256) and an odd one (133);
    // rows end to end or a line apart (16 floats between rows, whose sentinels must survive);
    // outputs 0 to 15 floats past a line. Every combination of ISA, stores and thread count, the
    // alignment and the gap cycling through their values; thresholds without ties (0.5) and
    // with, under seeds of one and two words. The reference is the first output: the scalar
    // ISA's, with cached stores, one thread, on a line, rows end to end.
    IdMatrix ids(12, 500);
    for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = 1 + (i * 37) % 700;
    ids.row(1).head(30).setConstant(0);  // left padding
    ids.row(3).tail(17).setConstant(0);  // right padding
    const float sentinel = -4321.0f;
    struct Config {
        Index width;
        double p;
        std::uint64_t seed;
        Index max_positions;
    };
    for (const Config config : {Config{256, 0.1, 17, 300}, Config{256, 0.5, (std::uint64_t{1} << 40) + 3, 5000},
                                Config{133, 0.3, 9, 300}, Config{133, 0.1, 5, 5000}}) {
        const TokenEmbedding<float> embedding(701, config.width);
        const auto positions = short_table<float>(config.width, config.max_positions, seqembed::BeyondTable::compute);
        std::vector<RowMatrix<float>> outputs;
        int variant = 0;
        for_each_isa([&](seqembed::Isa) {
            for (const auto stores : {seqembed::OutputStores::cached, seqembed::OutputStores::streaming,
                                      seqembed::OutputStores::automatic})
                for (const int threads : {1, 2, 3}) {
                    const Index shift = (variant * 5) % 16;
                    const Index gap = (variant / 3) % 2 == 0 ? 0 : 16;
                    ++variant;
                    CAPTURE(config.width, config.p, config.max_positions, static_cast<int>(stores), threads, shift,
                            gap);
                    seqembed::PipelineOptions options;
                    options.dropout = config.p;
                    options.dropout_seed = config.seed;
                    options.threads = threads;
                    options.output_stores = stores;
                    InputPipeline<float> pipeline(embedding, positions, options);
                    pipeline.set_training(true);
                    const Index stride = config.width + gap;
                    const std::size_t used = static_cast<std::size_t>(ids.size() * stride);
                    std::vector<float> storage(used + 64, sentinel);
                    float* line = on_line(storage);
                    float* first = line + shift;
                    Eigen::Map<RowMatrix<float>, 0, Eigen::OuterStride<>> view(first, ids.size(), config.width,
                                                                                Eigen::OuterStride<>(stride));
                    pipeline.forward_into(ids, Padding::by_id(0), view);
                    outputs.emplace_back(view);
                    std::size_t overwritten = 0;  // outside the rows
                    for (std::size_t k = 0; k < used; ++k)
                        overwritten += static_cast<Index>(k) % stride >= config.width && !(first[k] == sentinel) ? 1 : 0;
                    for (Index k = 0; k < shift; ++k) overwritten += line[k] == sentinel ? 0 : 1;
                    REQUIRE(overwritten == 0);
                    REQUIRE(first[used] == sentinel);
                    REQUIRE(outputs.back() == outputs.front());
                }
        });
    }
}

TEST_CASE("Training over paddings, short sequences and step offsets is the same with any ISA and stores",
          "[pipeline][streaming][isa]") {
    // A deterministic sweep: every kind of padding, padded tokens in the middle of sequences,
    // sequences of 1 to 3 tokens (the row requested ahead lies several sequences on), step
    // offsets, thresholds with a high byte of 25, 76 and 255 (coarse_keep 256), outputs 0 to 15
    // floats past a line, forward()'s own output, one to three workers. Per trial, the scalar
    // ISA's cached output is the reference.
    const Index width = 256;
    const TokenEmbedding<float> embedding(300, width);
    const auto positions = short_table<float>(width, 80);
    std::uint64_t state = 12345;
    const auto next = [&](std::uint64_t bound) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return (state >> 33) % bound;
    };
    for (int trial = 0; trial < 48; ++trial) {
        const Index seq = trial % 4 == 0 ? 1 + static_cast<Index>(next(3)) : 20 + static_cast<Index>(next(40));
        const Index batch = trial % 4 == 0 ? 40 + static_cast<Index>(next(30)) : 2 + static_cast<Index>(next(5));
        IdMatrix ids(batch, seq);
        for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = 1 + static_cast<std::int64_t>(next(299));
        for (Index i = 0; i < ids.size() / 7; ++i) ids.data()[next(static_cast<std::uint64_t>(ids.size()))] = 0;
        std::vector<std::int64_t> lengths(static_cast<std::size_t>(batch));
        for (auto& length : lengths) length = static_cast<std::int64_t>(next(static_cast<std::uint64_t>(seq) + 1));
        const MaskMatrix mask = ids.cast<bool>().cast<std::uint8_t>();
        const Padding paddings[] = {Padding::none(), Padding::by_id(0), Padding::right(lengths), Padding::left(lengths),
                                    Padding::from_mask(mask)};
        const Padding& padding = paddings[trial % 5];
        const double p = trial % 3 == 0 ? 0.1 : trial % 3 == 1 ? 0.3 : 0.99999;
        const auto step_offset = static_cast<std::int64_t>(next(4));
        const Index shift = (trial * 5) % 16;
        const int threads = 1 + trial % 3;
        CAPTURE(trial, seq, batch, trial % 5, p, step_offset, shift, threads);
        std::vector<RowMatrix<float>> outputs;
        for_each_isa([&](seqembed::Isa) {
            for (const auto stores : {seqembed::OutputStores::cached, seqembed::OutputStores::streaming,
                                      seqembed::OutputStores::automatic}) {
                CAPTURE(static_cast<int>(stores));
                seqembed::PipelineOptions options;
                options.dropout = p;
                options.dropout_seed = 1000 + static_cast<std::uint64_t>(trial);
                options.threads = threads;
                options.output_stores = stores;
                const auto make_pipeline = [&] {
                    InputPipeline<float> pipeline(embedding, positions, options);
                    pipeline.set_training(true);
                    return pipeline;
                };
                const float sentinel = -999.0f;
                std::vector<float> storage(static_cast<std::size_t>(ids.size() * width + 32), sentinel);
                float* line = on_line(storage);
                Eigen::Map<RowMatrix<float>> out(line + shift, ids.size(), width);
                make_pipeline().forward_into(ids, padding, out, step_offset);
                for (Index k = 0; k < shift; ++k) REQUIRE(line[k] == sentinel);
                REQUIRE(line[shift + ids.size() * width] == sentinel);
                outputs.emplace_back(out);
                // The first call of a pipeline like it, into an output of its own.
                outputs.push_back(make_pipeline().forward(ids, padding, step_offset));
                for (const RowMatrix<float>& output : outputs) REQUIRE(output == outputs.front());
            }
        });
    }
}

TEST_CASE("Rows requested ahead stay inside the batch, across short sequences, workers and distances",
          "[pipeline][streaming][isa]") {
    // 64 floats a row: by default rows are requested 32 tokens ahead, further than a whole
    // sequence of 1 to 5 tokens, so the token ahead lies several sequences on, or past the batch
    // or a worker's share of it (two workers from 2^19 elements on); also nothing ahead
    // (prefetch_bytes 0) and the most, 64 rows. The ids live in a matrix of exactly the batch's
    // size, so a read past it is one that Eigen's assertions and the sanitizers see; every
    // output must be the scalar ISA's cached one.
    const Index width = 64;
    const TokenEmbedding<float> embedding(300, width);
    const auto positions = short_table<float>(width, 5);
    for (const Index seq : {1, 2, 3, 5})
        for (const int threads : {1, 2}) {
            IdMatrix ids(12000 / seq, seq);
            for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = (i * 13) % 300;
            ids(ids.rows() - 1, seq - 1) = 0;  // a padded last token
            std::vector<RowMatrix<float>> reference;  // [training]
            for_each_isa([&](seqembed::Isa) {
                for (const auto stores : {seqembed::OutputStores::cached, seqembed::OutputStores::streaming})
                    for (const std::size_t prefetch_bytes : {seqembed::PipelineOptions{}.prefetch_bytes, std::size_t{0},
                                                              std::size_t{1} << 20})
                        for (const bool training : {false, true}) {
                            CAPTURE(seq, threads, static_cast<int>(stores), prefetch_bytes, training);
                            seqembed::PipelineOptions options;
                            options.dropout = 0.1;
                            options.threads = threads;
                            options.output_stores = stores;
                            options.prefetch_bytes = prefetch_bytes;
                            InputPipeline<float> pipeline(embedding, positions, options);
                            pipeline.set_training(training);
                            const RowMatrix<float> out = pipeline.forward(ids, Padding::by_id(0));
                            if (reference.size() < 2) {
                                reference.push_back(out);
                            } else {
                                REQUIRE(out == reference[training ? 1 : 0]);
                            }
                        }
            });
        }
}

TEST_CASE("A batch of empty sequences writes nothing, in training with streaming stores",
          "[pipeline][streaming][isa]") {
    // No token: there is no first row to write or to request ahead.
    const TokenEmbedding<float> embedding(300, 256);
    const auto positions = short_table<float>(256, 4);
    for_each_isa([&](seqembed::Isa) {
        for (const Index batch : {0, 3}) {
            CAPTURE(batch);
            seqembed::PipelineOptions options;
            options.dropout = 0.1;
            options.output_stores = seqembed::OutputStores::streaming;
            options.threads = 2;
            InputPipeline<float> pipeline(embedding, positions, options);
            pipeline.set_training(true);
            const IdMatrix ids(batch, 0);
            RowMatrix<float> out(0, 256);
            pipeline.forward_into(ids, Padding::none(), out);
            REQUIRE(out.rows() == 0);
            REQUIRE(pipeline.forward(ids).rows() == 0);
        }
    });
}
