// The fused pipeline equals the stages chained by hand, bit for bit: TokenEmbedding::forward_into,
// then the position rows added, padded rows zeroed, then Dropout::forward_into with the
// pipeline's call number. For every positional stage, table type, dropout setting, padding,
// width, output layout, store policy, thread count and ISA.
#include <seqembed/seqembed.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "bit_equal.hpp"
#include "catch.hpp"
#include "isa_support.hpp"

using seqembed::IdMatrix;
using seqembed::Index;
using seqembed::RowMatrix;

namespace {

constexpr std::uint64_t dropout_seed = 77;

/// The stages chained by hand, as a user who does not fuse would write them.
template <typename Scalar, typename Positional, typename Embedding>
RowMatrix<Scalar> chained(const Embedding& embedding, const Positional& positions, const IdMatrix& ids,
                          const seqembed::Padding& padding, const std::vector<std::int64_t>& offsets,
                          double p, std::uint64_t call) {
    RowMatrix<Scalar> x(ids.size(), embedding.d_model());
    embedding.forward_into(ids, x);
    padding.for_each_token(ids, 0, ids.rows(), [&](Index b, Index t, std::int64_t token_index) {
        auto row = x.row(b * ids.cols() + t);
        if (token_index < 0) {
            row.setZero();
        } else if constexpr (!std::is_same_v<Positional, seqembed::NoPositions<Scalar>>) {
            row += positions.forward(offsets[static_cast<std::size_t>(b)] + token_index, 1);
        }
    });
    if (p > 0) {
        seqembed::Dropout dropout(p, dropout_seed);
        dropout.set_training(true);
        dropout.set_calls(call);
        dropout.forward_into(x, x);
    }
    return x;
}

template <typename Storage>
auto table(Index vocab, Index width) {
    using Scalar = std::conditional_t<std::is_same_v<Storage, double>, double, float>;
    RowMatrix<float> values(vocab, width);
    std::mt19937 generator(static_cast<unsigned>(vocab * 31 + width));
    std::normal_distribution<float> normal;
    for (Index k = 0; k < values.size(); ++k) values.data()[k] = normal(generator);
    values(1, 0) = -0.0f;  // -0 * scale stays -0 when nothing is added
    return seqembed::TokenEmbedding<Scalar, Storage>::from_weights(values.cast<Storage>());
}

/// A batch of 3 sequences of 9 tokens, ids in [0, vocab), padding id 0 in some places.
IdMatrix batch(Index vocab) {
    IdMatrix ids(3, 9);
    std::mt19937 generator(5);
    for (Index k = 0; k < ids.size(); ++k) ids.data()[k] = 1 + static_cast<Index>(generator() % static_cast<unsigned>(vocab - 1));
    ids(0, 7) = ids(0, 8) = 0;  // right padded
    ids(2, 0) = ids(2, 1) = ids(2, 2) = 0;  // left padded
    ids(1, 4) = 1;  // the -0 row
    return ids;
}

template <typename Scalar, typename Storage, typename MakePositions>
void check_all(MakePositions make_positions) {
    const Index vocab = 40;
    const IdMatrix ids = batch(vocab);
    const std::vector<std::int64_t> lengths{7, 9, 6};
    const Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> mask =
        (ids.array() != 0).cast<std::int64_t>();
    const std::vector<std::int64_t> no_offsets{0, 0, 0};
    const std::vector<std::int64_t> offsets{3, 0, 11};
    for (const Index width : {Index{1}, Index{7}, Index{16}, Index{100}, Index{256}, Index{259}}) {
        const auto embedding = table<Storage>(vocab, width);
        const auto positions = make_positions(width);
        for (const double p : {0.0, 0.1, 0.9999}) {
            for (const int pad : {0, 1, 2, 3, 4}) {
                const seqembed::Padding padding = pad == 0   ? seqembed::Padding::none()
                                                  : pad == 1 ? seqembed::Padding::right(lengths)
                                                  : pad == 2 ? seqembed::Padding::left(lengths)
                                                  : pad == 3 ? seqembed::Padding::by_id(0)
                                                             : seqembed::Padding::from_mask(mask);
                for (const bool per_sequence : {false, true}) {
                    const std::vector<std::int64_t>& steps = per_sequence ? offsets : no_offsets;
                    for (const auto stores : {seqembed::OutputStores::cached, seqembed::OutputStores::streaming}) {
                        for (const int threads : {1, 2}) {
                            CAPTURE(width, p, pad, per_sequence, static_cast<int>(stores), threads);
                            seqembed::PipelineOptions options;
                            options.dropout = p;
                            options.dropout_seed = dropout_seed;
                            options.output_stores = stores;
                            options.threads = threads;
                            seqembed::InputPipeline<Scalar, decltype(positions), std::decay_t<decltype(embedding)>>
                                pipeline(embedding, positions, options);
                            pipeline.set_training(p > 0);
                            const std::uint64_t call = pipeline.dropout().calls();
                            const RowMatrix<Scalar> expected =
                                chained<Scalar>(embedding, positions, ids, padding, steps, p, call);
                            // Into an owned matrix, and into one that starts a few elements into
                            // an aligned buffer (rows inside vectors and lines).
                            const RowMatrix<Scalar> fused =
                                per_sequence ? pipeline.forward(ids, padding, seqembed::StepOffsets(steps))
                                             : pipeline.forward(ids, padding);
                            REQUIRE(bit_equal(fused, expected));
                            for (const Index shift : {Index{1}, Index{5}}) {
                                CAPTURE(shift);
                                RowMatrix<Scalar> buffer(1, ids.size() * width + 16);
                                buffer.setConstant(Scalar(7));
                                Eigen::Map<RowMatrix<Scalar>> out(buffer.data() + shift, ids.size(), width);
                                pipeline.set_training(p > 0);
                                const std::uint64_t next_call = pipeline.dropout().calls();
                                pipeline.forward_into(ids, padding, out, seqembed::StepOffsets(steps));
                                const RowMatrix<Scalar> again =
                                    chained<Scalar>(embedding, positions, ids, padding, steps, p, next_call);
                                REQUIRE(bit_equal<Scalar>(out, again));
                                REQUIRE(buffer(0, shift - 1) == Scalar(7));  // nothing before
                                REQUIRE(buffer(0, shift + out.size()) == Scalar(7));  // nor after
                            }
                        }
                    }
                }
            }
        }
    }
}

}  // namespace

TEMPLATE_TEST_CASE("Fused equals chained: sinusoidal positions, computed past the table too",
                   "[fused]", float, double) {
    for_each_isa([](seqembed::Isa) {
        check_all<TestType, TestType>([](Index width) {
            auto options = seqembed::SinusoidalOptions::tensor2tensor();
            options.max_positions = 12;  // offsets 11 + 8 go past it: computed rows
            return seqembed::SinusoidalPositionalEncoding<TestType>(width, options);
        });
    });
}

TEMPLATE_TEST_CASE("Fused equals chained: learned positions at an offset", "[fused]", float, double) {
    for_each_isa([](seqembed::Isa) {
        check_all<TestType, TestType>([](Index width) {
            return seqembed::LearnedPositionalEmbedding<TestType>(24, width, seqembed::LearnedPositionsOptions::bart());
        });
    });
}

TEMPLATE_TEST_CASE("Fused equals chained: no positions", "[fused]", float, double) {
    for_each_isa([](seqembed::Isa) {
        check_all<TestType, TestType>([](Index width) { return seqembed::NoPositions<TestType>(width); });
    });
}

TEMPLATE_TEST_CASE("Fused equals chained: bfloat16 and half tables", "[fused]", Eigen::bfloat16, Eigen::half) {
    for_each_isa([](seqembed::Isa) {
        check_all<float, TestType>([](Index width) {
            return seqembed::LearnedPositionalEmbedding<float>(24, width);
        });
        check_all<float, TestType>([](Index width) { return seqembed::NoPositions<float>(width); });
    });
}
