// InputPipeline: the sum, padding on either side, positions from masks (fairseq, OPT), step
// offsets, dropout in training, threads, empty batches.
#include <seqembed/seqembed.hpp>

#include <cstdint>
#include <thread>
#include <vector>

#include "catch.hpp"
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

/// Row t of a position table as the pipeline adds it, for any positional type.
template <typename Scalar, typename Positional>
RowMatrix<Scalar> position_row(const Positional& positions, std::int64_t row) {
    RowMatrix<Scalar> out(1, positions.d_model());
    positions.row_into(row, out.data());
    return out;
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
        REQUIRE(out.row(350 + t) == scaled + position_row<float>(table, t));
    }
    REQUIRE_THROWS_AS(pipeline.forward(IdMatrix::Constant(1, 513, 7)), seqembed::index_error);
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
                   "[pipeline][storage][streaming]", Eigen::bfloat16, Eigen::half) {
    // The narrow rows are widened exactly: by the AVX-512 streaming row (whole vectors, the ends
    // of rows that start inside a line, rows narrower than a vector) or one by one. The float
    // pipeline over the same values, with the same stores and dropout, is the reference.
    IdMatrix ids(3, 9);
    for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = (i * 5) % 64;
    ids(1, 0) = 0;  // a padded token
    using Narrow = seqembed::TokenEmbedding<float, TestType>;
    for (const Index width : {5, 13, 32, 37, 256})
        for (const Index shift : {0, 3})
            for (const auto stores : {seqembed::OutputStores::cached, seqembed::OutputStores::streaming})
                for (const bool training : {false, true}) {
                    CAPTURE(width, shift, static_cast<int>(stores), training);
                    const RowMatrix<float> weights = RowMatrix<float>::Random(64, width);
                    const RowMatrix<TestType> narrow = weights.cast<TestType>();
                    seqembed::PipelineOptions options;
                    options.dropout = 0.3;
                    options.dropout_seed = 5;
                    options.output_stores = stores;
                    InputPipeline<float, SinusoidalPositionalEncoding<float>, Narrow> compact(
                        Narrow::from_weights(narrow), SinusoidalPositionalEncoding<float>(width), options);
                    InputPipeline<float> wide(TokenEmbedding<float>::from_weights(narrow.template cast<float>()),
                                              SinusoidalPositionalEncoding<float>(width), options);
                    compact.set_training(training);
                    wide.set_training(training);
                    std::vector<float> storage(static_cast<std::size_t>(ids.size() * width + 16), -1.0f);
                    Eigen::Map<RowMatrix<float>> out(storage.data() + shift, ids.size(), width);
                    compact.forward_into(ids, Padding::by_id(0), out);
                    REQUIRE(out == wide.forward(ids, Padding::by_id(0)));
                    for (Index k = 0; k < shift; ++k) REQUIRE(storage[static_cast<std::size_t>(k)] == -1.0f);
                    REQUIRE(storage.back() == -1.0f);
                }
}

TEMPLATE_TEST_CASE("Streaming and cached stores write the same bits, dropout included",
                   "[pipeline][streaming]", float, double) {
    IdMatrix ids(3, 40);
    for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = (i * 7) % 50;
    ids(1, 0) = 0;  // a padded token
    // Widths below, at and above a 64-byte line and a mask span (240 elements), not multiples
    // of any vector; outputs that start off alignment, and rows apart (an outer stride): lines
    // shared by rows, by a row and a gap, or by a row and memory outside the output.
    for (const Index width : {5, 13, 24, 37, 64, 250, 480})
        for (const Index shift : {0, 1, 3})
            for (const Index gap : {0, 3}) {
                INFO("width " << width << ", shift " << shift << ", gap " << gap);
                const Index stride = width + gap;
                const TestType sentinel = TestType(-12345.5);
                std::vector<RowMatrix<TestType>> outputs;
                for (const auto stores : {seqembed::OutputStores::cached, seqembed::OutputStores::streaming})
                    for (const bool training : {false, true}) {
                        seqembed::PipelineOptions options;
                        options.output_stores = stores;
                        options.dropout = 0.3;  // round(0.3 * 65536) has a low byte: ties occur
                        options.dropout_seed = 11;
                        InputPipeline<TestType> pipeline(TokenEmbedding<TestType>(50, width),
                                                         SinusoidalPositionalEncoding<TestType>(width),
                                                         options);
                        pipeline.set_training(training);
                        // Storage from a 64-byte boundary, so that `shift` sets the alignment.
                        const Index used = ids.size() * stride + 64;
                        std::vector<TestType> raw(static_cast<std::size_t>(used + 64), sentinel);
                        const auto misaligned = reinterpret_cast<std::uintptr_t>(raw.data()) % 64;
                        TestType* storage = raw.data() + (misaligned == 0 ? 0 : (64 - misaligned) / sizeof(TestType));
                        Eigen::Map<RowMatrix<TestType>, 0, Eigen::OuterStride<>> view(
                            storage + shift, ids.size(), width, Eigen::OuterStride<>(stride));
                        pipeline.forward_into(ids, Padding::by_id(0), view);
                        outputs.emplace_back(view);
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
                REQUIRE(outputs[0] == outputs[2]);  // evaluation
                REQUIRE(outputs[1] == outputs[3]);  // training
                REQUIRE(outputs[0] != outputs[1]);
            }
}

#if SEQEMBED_DETAIL_STREAMING
TEMPLATE_TEST_CASE("The build's own streaming row writes what the AVX-512 one does",
                   "[pipeline][streaming]", float, double) {
    // The pipeline picks the AVX-512 row where the CPU has it; the build's own (AVX or SSE2)
    // serves the others, so it is checked here directly, at every alignment.
    const Index width = 77;
    RowMatrix<TestType> embedding = RowMatrix<TestType>::Random(1, width);
    RowMatrix<TestType> position = RowMatrix<TestType>::Random(1, width);
    RowMatrix<TestType> factors(1, width);
    for (Index j = 0; j < width; ++j) factors(0, j) = j % 3 == 0 ? TestType(0) : TestType(1.25);
    const TestType scale = TestType(22.627417);
    for (const bool dropping : {false, true})
        for (Index shift = 0; shift < 16; ++shift) {
            CAPTURE(dropping, shift);
            const TestType* f = dropping ? factors.data() : nullptr;
            // Requests for a next row change no value, with or without one.
            const TestType* ahead = shift % 2 == 0 ? position.data() : nullptr;
            std::vector<TestType> expected(static_cast<std::size_t>(width + 16)), own = expected;
            for (Index j = 0; j < width; ++j)
                seqembed::detail::stream_element(expected.data() + shift, embedding.data(), scale,
                                                 position.data(), f, j);
            seqembed::detail::stream_row_with<seqembed::detail::StreamVector<TestType>>(
                own.data() + shift, embedding.data(), scale, position.data(), f, width, ahead);
            REQUIRE(own == expected);
            // The row the CPU gets, with streaming stores and with the plain ones of training, and
            // either pattern of requests (Zen 4's sixteen lines at a time, the others' one).
            using Pattern = seqembed::detail::RowRequests::Pattern;
            for (const bool streaming_stores : {true, false})
                for (const Pattern pattern : {Pattern::line_per_line, Pattern::sixteen_lines}) {
                    CAPTURE(streaming_stores, pattern == Pattern::sixteen_lines);
                    std::vector<TestType> picked = expected;
                    std::fill(picked.begin(), picked.end(), TestType(0));
                    seqembed::detail::RowStreamer<TestType> streamer(streaming_stores, pattern);
                    streamer.write(picked.data() + shift, embedding.data(), scale, position.data(), f,
                                   width, ahead);
                    streamer.finish();
                    REQUIRE(picked == expected);
                }
        }
}
#endif

TEST_CASE("Workers that share cache lines write the same bits as one thread, with any stores",
          "[pipeline][threads][streaming]") {
    // Enough elements for three workers (2^18 each), a width that is no multiple of a vector and
    // an output off alignment: workers' first and last rows share 64-byte lines. The output is
    // over 4 MiB, where automatic stores write training rows through the fused row with plain
    // stores.
    const Index width = 133;
    IdMatrix ids(6, 1400);
    REQUIRE(static_cast<std::size_t>(ids.size() * width) * sizeof(float) > (std::size_t{4} << 20));
    for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = (i * 131) % 500;
    ids.row(2).tail(40).setConstant(0);  // padding
    const float sentinel = -4321.0f;
    std::vector<RowMatrix<float>> outputs;
    for (const int threads : {1, 3})
        for (const auto stores : {seqembed::OutputStores::cached, seqembed::OutputStores::streaming,
                                  seqembed::OutputStores::automatic}) {
            seqembed::PipelineOptions options;
            options.dropout = 0.3;
            options.dropout_seed = 9;
            options.threads = threads;
            options.output_stores = stores;
            InputPipeline<float> pipeline(TokenEmbedding<float>(500, width),
                                          SinusoidalPositionalEncoding<float>(width), options);
            pipeline.set_training(true);
            std::vector<float> storage(static_cast<std::size_t>(ids.size() * width + 2), sentinel);
            Eigen::Map<RowMatrix<float>> view(storage.data() + 1, ids.size(), width);
            pipeline.forward_into(ids, Padding::by_id(0), view);
            REQUIRE(storage.front() == sentinel);
            REQUIRE(storage.back() == sentinel);
            outputs.emplace_back(view);
        }
    for (std::size_t i = 1; i < outputs.size(); ++i) REQUIRE(outputs[i] == outputs[0]);
}
