// RotaryEmbedding::apply_backward, the transpose of apply: the adjoint identity
// <R q, g> = <q, R^T g> in double for each layout, partial rotation, grouped-query heads and a
// per-call rule past the trained length; the rotation undone by its backward; every backend the
// scalar backend's bits for float, double and bfloat16 activations; the batch overloads.
#include <seqembed/seqembed.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "catch.hpp"
#include "isa_support.hpp"

using seqembed::Index;
using seqembed::RowMatrix;

namespace {

template <typename Scalar>
RowMatrix<Scalar> random_activations(Index rows, Index cols, unsigned seed) {
    std::mt19937 generator(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    RowMatrix<Scalar> m(rows, cols);
    for (Index k = 0; k < m.size(); ++k) m.data()[k] = static_cast<Scalar>(normal(generator));
    return m;
}

/// The configurations the backward must transpose: both layouts, a partial rotation, and a
/// per-call rule (dynamic NTK) whose frequencies depend on the call's largest position.
std::vector<seqembed::RotaryOptions> configurations() {
    std::vector<seqembed::RotaryOptions> all;
    seqembed::RotaryOptions halves = seqembed::RotaryOptions::hugging_face(16, 10000.0);
    halves.max_positions = 64;
    all.push_back(halves);
    seqembed::RotaryOptions interleaved = halves;
    interleaved.layout = seqembed::RotaryLayout::interleaved;
    all.push_back(interleaved);
    seqembed::RotaryOptions partial = halves;
    partial.partial_rotary_factor = 0.5;
    all.push_back(partial);
    seqembed::RotaryOptions dynamic = halves;
    dynamic.scaling = seqembed::RotaryScaling::dynamic;
    dynamic.factor = 2.0;
    dynamic.original_max_position_embeddings = 32;
    dynamic.beyond = seqembed::BeyondTable::compute;
    all.push_back(dynamic);
    return all;
}

}  // namespace

TEST_CASE("apply_backward is the transpose of apply: <R q, g> = <q, R^T g>", "[rotary][backward]") {
    const std::vector<std::int64_t> list = {0, 5, 17, 40, 63, 2};
    const seqembed::RotaryEmbedding<double>::PositionVector positions =
        Eigen::Map<const seqembed::RotaryEmbedding<double>::PositionVector>(list.data(), static_cast<Index>(list.size()));
    for (const seqembed::RotaryOptions& options : configurations()) {
        const seqembed::RotaryEmbedding<double> rope(options);
        const Index tokens = positions.size();
        const RowMatrix<double> q = random_activations<double>(tokens, 4 * 16, 1);  // 4 query heads
        const RowMatrix<double> k = random_activations<double>(tokens, 2 * 16, 2);  // 2 key heads
        const RowMatrix<double> gq = random_activations<double>(tokens, 4 * 16, 3);
        const RowMatrix<double> gk = random_activations<double>(tokens, 2 * 16, 4);
        RowMatrix<double> rq = q, rk = k;
        rope.apply(rq, rk, 4, 2, positions);
        RowMatrix<double> tq = gq, tk = gk;
        rope.apply_backward(tq, tk, 4, 2, positions);
        const double forward = (rq.array() * gq.array()).sum() + (rk.array() * gk.array()).sum();
        const double backward = (q.array() * tq.array()).sum() + (k.array() * tk.array()).sum();
        INFO("layout " << static_cast<int>(options.layout) << ", rotary_dim factor " << options.partial_rotary_factor
                       << ", scaling " << static_cast<int>(options.scaling));
        CHECK(std::abs(forward - backward) <= 1e-12 * std::max(1.0, std::abs(forward)));
        // A rotation's transpose is its inverse: the backward of the rotated rows gives them back.
        RowMatrix<double> back_q = rq, back_k = rk;
        rope.apply_backward(back_q, back_k, 4, 2, positions);
        CHECK((back_q - q).cwiseAbs().maxCoeff() <= 1e-14 * 8);
        CHECK((back_k - k).cwiseAbs().maxCoeff() <= 1e-14 * 8);
        // The values outside the rotated part pass through (partial rotation).
        if (options.partial_rotary_factor < 1.0) CHECK(tq.col(15) == gq.col(15));
    }
}

TEST_CASE("apply_backward: every backend gives the scalar backend's bits", "[rotary][backward][isa]") {
    const std::vector<std::int64_t> list = {3, 0, 63, 31, 32, 7, 12};
    const seqembed::RotaryEmbedding<double>::PositionVector positions =
        Eigen::Map<const seqembed::RotaryEmbedding<double>::PositionVector>(list.data(), static_cast<Index>(list.size()));
    for (const seqembed::RotaryOptions& options : configurations()) {
        const seqembed::RotaryEmbedding<float> rope(options);
        const auto run = [&](auto zero) {
            using A = decltype(zero);
            RowMatrix<A> gq = random_activations<A>(positions.size(), 3 * 16, 5);
            RowMatrix<A> gk = random_activations<A>(positions.size(), 1 * 16, 6);
            rope.apply_backward(gq, gk, 3, 1, positions);
            return std::make_pair(gq, gk);
        };
        const IsaRestore restore;
        seqembed::set_isa(seqembed::Isa::scalar);
        const auto f32 = run(0.0f);
        const auto f64 = run(0.0);
        const auto bf16 = run(Eigen::bfloat16(0.0f));
        for_each_isa([&](seqembed::Isa) {
            const auto again32 = run(0.0f);
            const auto again64 = run(0.0);
            const auto again16 = run(Eigen::bfloat16(0.0f));
            CHECK(again32.first == f32.first);
            CHECK(again32.second == f32.second);
            CHECK(again64.first == f64.first);
            CHECK(again16.first == bf16.first);
            CHECK(again16.second == bf16.second);
        });
    }
}

TEST_CASE("apply_backward over a padded batch turns the real tokens' rows back and leaves padded ones", "[rotary][backward]") {
    seqembed::RotaryOptions options = seqembed::RotaryOptions::hugging_face(8, 10000.0);
    options.max_positions = 32;
    const seqembed::RotaryEmbedding<float> rope(options);
    seqembed::IdMatrix ids(2, 4);
    ids << 0, 0, 5, 6, 7, 8, 9, 0;
    seqembed::IdMatrix mask(2, 4);
    mask << 0, 0, 1, 1, 1, 1, 1, 0;
    const seqembed::Padding padding = seqembed::Padding::from_mask(mask);
    const RowMatrix<float> q = random_activations<float>(8, 2 * 8, 7);
    const RowMatrix<float> k = random_activations<float>(8, 8, 8);
    RowMatrix<float> rq = q, rk = k;
    rope.apply(rq, rk, 2, 1, ids, padding, seqembed::StepOffsets(3));
    rope.apply_backward(rq, rk, 2, 1, ids, padding, seqembed::StepOffsets(3));
    CHECK((rq - q).cwiseAbs().maxCoeff() <= 1e-6f);
    CHECK((rk - k).cwiseAbs().maxCoeff() <= 1e-6f);
    CHECK(rq.row(0) == q.row(0));  // padded: never turned
    CHECK(rq.row(7) == q.row(7));
    // The Batch overload agrees with the ids overload.
    RowMatrix<float> bq = q, bk = k;
    seqembed::Batch batch(ids, padding, seqembed::StepOffsets(3));
    RowMatrix<float> iq = q, ik = k;
    rope.apply_backward(bq, bk, 2, 1, batch);
    rope.apply_backward(iq, ik, 2, 1, ids, padding, seqembed::StepOffsets(3));
    CHECK(bq == iq);
    CHECK(bk == ik);
}
