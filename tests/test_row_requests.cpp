// Requests for the embedding rows of the next tokens (detail/row_requests.hpp): how far ahead,
// and that they stay inside the batch whatever the sequences' length.
#include <seqembed/seqembed.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "catch.hpp"

using seqembed::IdMatrix;
using seqembed::Index;
using seqembed::InputPipeline;
using seqembed::Padding;
using seqembed::RowMatrix;
using seqembed::SinusoidalPositionalEncoding;
using seqembed::TokenEmbedding;
using seqembed::detail::RowRequests;

TEST_CASE("Rows are requested about 8 KiB ahead, a line per line written, but on Zen 4",
          "[row_requests]") {
    for (std::size_t row_bytes = 4; row_bytes <= (std::size_t{64} << 10); row_bytes += row_bytes / 3 + 4) {
        CAPTURE(row_bytes);
        const RowRequests requests = RowRequests::for_rows(row_bytes);
        REQUIRE(requests.rows_ahead >= 1);
        REQUIRE(requests.rows_ahead <= 64);
        if (seqembed::detail::cpu_is_zen4()) {
            REQUIRE(requests.pattern == RowRequests::Pattern::sixteen_lines);
            REQUIRE(requests.rows_ahead == 2);
            REQUIRE(requests.level() == seqembed::detail::RequestLevel::l2);
            continue;
        }
        REQUIRE(requests.pattern == RowRequests::Pattern::line_per_line);
        REQUIRE(requests.level() == seqembed::detail::RequestLevel::l1);
        const auto bytes_ahead = static_cast<std::size_t>(requests.rows_ahead) * row_bytes;
        // The fewest rows that reach 8 KiB, unless 64 rows do not.
        if (requests.rows_ahead < 64) REQUIRE(bytes_ahead >= (std::size_t{8} << 10));
        if (requests.rows_ahead > 1) REQUIRE(bytes_ahead - row_bytes < (std::size_t{8} << 10));
    }
    REQUIRE(RowRequests::for_rows(0).rows_ahead >= 1);
}

TEST_CASE("Requests for rows ahead stay inside the batch, across short sequences and workers",
          "[row_requests][pipeline][streaming]") {
    // 64 floats a row: rows are requested 32 tokens ahead (except on Zen 4), further than a
    // whole sequence of 1 to 5 tokens, so the token ahead lies several sequences on, or past the
    // batch or a worker's share of it (two workers from 2^19 elements on). The ids live in a
    // matrix of exactly the batch's size, so a read past it is one that Eigen's assertions and
    // the sanitizers see; the values must be the cached stores' ones.
    const Index width = 64;
    for (const Index seq : {1, 2, 3, 5})
        for (const int threads : {1, 2}) {
            CAPTURE(seq, threads);
            IdMatrix ids(12000 / seq, seq);
            for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = (i * 13) % 300;
            ids(ids.rows() - 1, seq - 1) = 0;  // a padded last token
            std::vector<RowMatrix<float>> outputs;
            for (const auto stores : {seqembed::OutputStores::cached, seqembed::OutputStores::streaming})
                for (const bool training : {false, true}) {
                    seqembed::PipelineOptions options;
                    options.dropout = 0.1;
                    options.threads = threads;
                    options.output_stores = stores;
                    InputPipeline<float> pipeline(TokenEmbedding<float>(300, width),
                                                  SinusoidalPositionalEncoding<float>(width), options);
                    pipeline.set_training(training);
                    outputs.push_back(pipeline.forward(ids, Padding::by_id(0)));
                }
            REQUIRE(outputs[2] == outputs[0]);  // evaluation
            REQUIRE(outputs[3] == outputs[1]);  // training
        }
}

TEST_CASE("A batch of empty sequences writes nothing, in training with streaming stores",
          "[row_requests][pipeline][streaming]") {
    // No token: the pipeline must not look for a first row to stream from (there is none).
    for (const Index batch : {0, 3}) {
        CAPTURE(batch);
        seqembed::PipelineOptions options;
        options.dropout = 0.1;
        options.output_stores = seqembed::OutputStores::streaming;
        options.threads = 2;
        InputPipeline<float> pipeline(TokenEmbedding<float>(300, 256), SinusoidalPositionalEncoding<float>(256),
                                      options);
        pipeline.set_training(true);
        const IdMatrix ids(batch, 0);
        RowMatrix<float> out(0, 256);
        pipeline.forward_into(ids, Padding::none(), out);
        REQUIRE(out.rows() == 0);
        REQUIRE(pipeline.forward(ids).rows() == 0);
    }
}
