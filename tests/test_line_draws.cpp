// LineDraws (detail/line_draws.hpp): float training rows streamed a mask span at a time, on rows
// that start on 64-byte lines or that lie end to end; against MaskFactors' factors directly, and
// in the pipeline against cached stores.
#include <seqembed/seqembed.hpp>

#include <cstdint>
#include <vector>

#include "catch.hpp"

using seqembed::IdMatrix;
using seqembed::Index;
using seqembed::InputPipeline;
using seqembed::Padding;
using seqembed::RowMatrix;
using seqembed::SinusoidalOptions;
using seqembed::SinusoidalPositionalEncoding;
using seqembed::TokenEmbedding;

#if SEQEMBED_DETAIL_AVX512_KERNELS && SEQEMBED_DETAIL_STREAMING
TEST_CASE("LineDraws writes each row as the fused row with MaskFactors' factors",
          "[pipeline][streaming][dropout]") {
    // LineDraws writes float training rows a mask span at a time, across rows, drawing the next
    // spans between the lines. Checked against stream_element with MaskFactors' factors: rows
    // that start at every run of a span, gaps between rows (a restart), widths that are and are
    // not multiples of a span, thresholds with and without ties, and spans from 2^28 - 5 on,
    // whose blocks cross 2^32. Enough spans for some with second ties. Rows that start on lines
    // lie a line apart, so that a span that crosses rows must find its second row's address (a
    // sentinel between the rows would be overwritten otherwise); rows that start inside lines
    // (shifted) lie end to end, and the sentinels of a skipped row, before the first row and
    // after the last must survive the masked stores at the ends of each stretch. A finish()
    // half way, so that the next row starts a stretch in the line where the last one ended;
    // rows written again afterwards, a restart backwards whose end lines hold the neighbours'
    // values. Lines ahead are requested into either level.
    if (!seqembed::detail::cpu_has_avx512f()) {
        WARN("this CPU has no AVX-512F: LineDraws is not used, not tested");
        return;
    }
    using seqembed::detail::RequestLevel;
    using seqembed::detail::span_elements;
    const float scale = 22.627417f;
    const Index rows = 48;
    for (const int shift : {0, 1, 4, 11, 15})
        for (const double p : {0.1, 0.5, 0.99999})
            for (const Index width : {Index{240}, Index{256}, Index{496}, Index{1040}})
                for (const std::uint64_t first_span : {std::uint64_t{0}, (std::uint64_t{1} << 28) - 5})
                    for (std::uint64_t run = 0; run < 15; run += p == 0.1 ? 1 : 7) {
                        const seqembed::Dropout dropout(p, 4321);
                        const std::uint64_t call = 6;
                        const std::uint64_t first_element = first_span * span_elements + 16 * run;
                        RowMatrix<float> embedding = RowMatrix<float>::Random(rows, width);
                        RowMatrix<float> position = RowMatrix<float>::Random(rows, width);
                        const float sentinel = -777.0f;
                        const Index stride = shift == 0 ? width + 16 : width;  // a line between rows, or none
                        // From a line boundary: `shift` floats, the rows, a line.
                        const std::size_t size = static_cast<std::size_t>(shift + rows * stride + 16);
                        std::vector<float> storage(size + 16, sentinel);
                        const auto misaligned = reinterpret_cast<std::uintptr_t>(storage.data()) % 64;
                        float* line = storage.data() + (misaligned == 0 ? 0 : (64 - misaligned) / sizeof(float));
                        float* out = line + shift;
                        std::vector<float> expected(size, sentinel);
                        seqembed::detail::LineDraws draws(scale, dropout.seed(), call, dropout.threshold(),
                                                          dropout.keep_scale<float>(), shift,
                                                          run % 2 == 0 ? RequestLevel::l1 : RequestLevel::l2);
                        std::vector<float> factors(static_cast<std::size_t>(width));
                        const auto write_row = [&](Index r) {
                            const std::uint64_t element = first_element + static_cast<std::uint64_t>(r * width);
                            const float* ahead = r % 3 == 0 ? nullptr : embedding.row((r + 2) % rows).data();
                            REQUIRE(seqembed::detail::line_draws_shift(out + r * stride, width, stride) == shift);
                            draws.write_row(out + r * stride, embedding.row(r).data(), position.row(r).data(),
                                            width, ahead, element);
                        };
                        for (Index r = 0; r < rows; ++r) {
                            if (r % 16 == 7) continue;  // a gap: the next row starts the draw again
                            const std::uint64_t element = first_element + static_cast<std::uint64_t>(r * width);
                            dropout.factors<float>(call).write(factors.data(), width, element);
                            for (Index j = 0; j < width; ++j)
                                seqembed::detail::stream_element(expected.data() + shift + r * stride,
                                                                 embedding.row(r).data(), scale,
                                                                 position.row(r).data(), factors.data(), j);
                            if (r == 30) draws.finish();  // a new stretch from row 30 on
                            write_row(r);
                        }
                        for (Index r = 2; r < 6; ++r) write_row(r);  // back to rows written before
                        draws.finish();
                        CAPTURE(shift, p, width, first_span, run);
                        REQUIRE(std::vector<float>(line, line + size) == expected);
                        REQUIRE(line[size] == sentinel);
                    }
}
#endif

TEST_CASE("Float training rows of whole lines write the same bits with any stores and threads",
          "[pipeline][threads][streaming]") {
    // Rows of whole runs (16 floats), at least a mask span wide, that start on a 64-byte line or
    // lie end to end, take LineDraws in training with streaming stores (and with automatic ones
    // above 4 MiB): the draw runs across rows, restarts after padded rows and at each worker's
    // first row, and around rows whose positions lie past a table of 300 (computed, so written
    // the other way). Cached stores apply MaskFactors to each row instead. Row strides of the
    // width and beyond; rows end to end that start 4 or 13 floats into a line (their lines
    // straddle rows, workers and padded rows), and rows apart that do (RowStreamer's, the
    // sentinels between them untouched); a threshold without ties and one with, under two
    // seeds.
    IdMatrix ids(5, 520);
    for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = 1 + (i * 37) % 700;
    ids.row(1).head(30).setConstant(0);  // left padding
    ids.row(3).tail(17).setConstant(0);  // right padding
    const float sentinel = -4321.0f;
    struct Mask {
        double p;
        std::uint64_t seed;
    };
    for (const Mask mask : {Mask{0.1, 17}, Mask{0.5, (std::uint64_t{1} << 40) + 3}})
    for (const Index width : {Index{256}, Index{512}}) {
        std::vector<RowMatrix<float>> outputs;
        for (const Index max_len : {Index{5000}, Index{300}})
            for (const Index stride : {width, width + 48})
                for (const Index shift : {0, 4, 13})
                for (const int threads : {1, 2, 3})
                    for (const auto stores : {seqembed::OutputStores::cached, seqembed::OutputStores::streaming,
                                              seqembed::OutputStores::automatic}) {
                        CAPTURE(mask.p, width, max_len, stride, shift, threads, static_cast<int>(stores));
                        SinusoidalOptions positions;
                        positions.max_len = max_len;
                        positions.beyond = seqembed::BeyondTable::compute;
                        seqembed::PipelineOptions options;
                        options.dropout = mask.p;
                        options.dropout_seed = mask.seed;
                        options.threads = threads;
                        options.output_stores = stores;
                        InputPipeline<float> pipeline(TokenEmbedding<float>(701, width),
                                                      SinusoidalPositionalEncoding<float>(width, positions), options);
                        pipeline.set_training(true);
                        const std::size_t used = static_cast<std::size_t>(ids.size() * stride);
                        std::vector<float> storage(used + 32, sentinel);
                        const auto misaligned = reinterpret_cast<std::uintptr_t>(storage.data()) % 64;
                        float* line = storage.data() + (misaligned == 0 ? 0 : (64 - misaligned) / sizeof(float));
                        float* first = line + shift;
                        Eigen::Map<RowMatrix<float>, 0, Eigen::OuterStride<>> view(first, ids.size(), width,
                                                                                    Eigen::OuterStride<>(stride));
                        pipeline.forward_into(ids, Padding::by_id(0), view);
                        outputs.emplace_back(view);
                        std::size_t overwritten = 0;  // outside the rows
                        for (std::size_t k = 0; k < used; ++k)
                            overwritten += static_cast<Index>(k) % stride >= width && !(first[k] == sentinel) ? 1 : 0;
                        for (Index k = 0; k < shift; ++k) overwritten += line[k] == sentinel ? 0 : 1;
                        REQUIRE(overwritten == 0);
                        REQUIRE(first[used] == sentinel);
                    }
        for (std::size_t i = 1; i < outputs.size(); ++i) REQUIRE(outputs[i] == outputs[0]);
    }
}


#if SEQEMBED_DETAIL_AVX512_KERNELS && SEQEMBED_DETAIL_STREAMING
TEST_CASE("LineDraws takes rows of whole runs that start on lines or lie end to end", "[line_draws]") {
    // The pipeline's choice: the shift of the first row, or -1 for rows LineDraws cannot write.
    if (!seqembed::detail::cpu_has_avx512f()) {
        WARN("this CPU has no AVX-512F: LineDraws is not used, not tested");
        return;
    }
    using seqembed::detail::line_draws_shift;
    std::vector<float> storage(4096);
    const auto misaligned = reinterpret_cast<std::uintptr_t>(storage.data()) % 64;
    const float* line = storage.data() + (misaligned == 0 ? 0 : (64 - misaligned) / sizeof(float));
    for (const Index shift : {0, 1, 4, 8, 15}) {
        CAPTURE(shift);
        CHECK(line_draws_shift(line + shift, 256, 256) == shift);  // end to end: an Eigen matrix
        CHECK(line_draws_shift(line + shift, 240, 240) == shift);  // a span wide
        CHECK(line_draws_shift(line + shift, 256, 304) == (shift == 0 ? 0 : -1));  // apart
        CHECK(line_draws_shift(line + shift, 256, 264) == -1);  // rows at other places in their lines
        CHECK(line_draws_shift(line + shift, 224, 224) == -1);  // narrower than a span
        CHECK(line_draws_shift(line + shift, 250, 250) == -1);  // not whole runs
    }
    // An Eigen matrix of floats, whatever the build aligns it to.
    const RowMatrix<float> matrix(8, 512);
    CHECK(line_draws_shift(matrix.data(), 512, 512) == seqembed::detail::lane_shift(matrix.data()));
}

TEST_CASE("Training through LineDraws matches cached stores over paddings, sequences and offsets",
          "[line_draws][pipeline]") {
    // A deterministic sweep of what the larger tests fix: every kind of padding, padded tokens in
    // the middle of sequences, sequences of 1 to 3 tokens (a row ahead several sequences on),
    // step offsets, thresholds with a high byte of 25, 76 and 255, outputs that start 0, 4 or 9
    // floats into a line, forward()'s own output, one to three workers.
    const Index width = 256;
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
        seqembed::MaskMatrix mask = ids.cast<bool>().cast<std::uint8_t>();
        const Padding paddings[] = {Padding::none(), Padding::by_id(0), Padding::right(lengths), Padding::left(lengths),
                                    Padding::from_mask(mask)};
        const Padding& padding = paddings[trial % 5];
        const double p = trial % 3 == 0 ? 0.1 : trial % 3 == 1 ? 0.3 : 0.99999;
        const std::int64_t step_offset = static_cast<std::int64_t>(next(4));
        const Index shift = trial % 3 == 0 ? 0 : trial % 3 == 1 ? 4 : 9;
        const int threads = 1 + trial % 3;
        CAPTURE(trial, seq, batch, trial % 5, p, step_offset, shift, threads);
        std::vector<RowMatrix<float>> outputs;
        for (const auto stores : {seqembed::OutputStores::cached, seqembed::OutputStores::streaming}) {
            seqembed::PipelineOptions options;
            options.dropout = p;
            options.dropout_seed = 1000 + static_cast<std::uint64_t>(trial);
            options.threads = threads;
            options.output_stores = stores;
            const auto make_pipeline = [&] {
                InputPipeline<float> pipeline(TokenEmbedding<float>(300, width),
                                              SinusoidalPositionalEncoding<float>(width), options);
                pipeline.set_training(true);
                return pipeline;
            };
            const float sentinel = -999.0f;
            std::vector<float> storage(static_cast<std::size_t>(ids.size() * width + 32), sentinel);
            const auto misaligned = reinterpret_cast<std::uintptr_t>(storage.data()) % 64;
            float* line = storage.data() + (misaligned == 0 ? 0 : (64 - misaligned) / sizeof(float));
            Eigen::Map<RowMatrix<float>> out(line + shift, ids.size(), width);
            make_pipeline().forward_into(ids, padding, out, step_offset);
            for (Index k = 0; k < shift; ++k) REQUIRE(line[k] == sentinel);
            REQUIRE(line[shift + ids.size() * width] == sentinel);
            outputs.emplace_back(out);
            // The first call of a pipeline like it, into an output of its own.
            outputs.push_back(make_pipeline().forward(ids, padding, step_offset));
        }
        for (std::size_t i = 1; i < outputs.size(); ++i) REQUIRE(outputs[i] == outputs[0]);
    }
}
#endif
