// RotaryEmbedding::apply_multimodal (M-RoPE): each frequency turned by the position id of the
// axis its mrope_section gives it. Checked against rows composed from the table by hand, bit
// for bit, on every backend; against the one-position apply when the three ids are equal; the
// backward undoes it; the sections' rules (blocks, Qwen3-VL's interleaving) frequency by
// frequency; bad sections and positions named. Hugging Face's numbers: tests/io/test_io_mrope.cpp.
#include <seqembed/seqembed.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "bit_equal.hpp"
#include "catch.hpp"
#include "isa_support.hpp"

using seqembed::Index;
using seqembed::RotaryEmbedding;
using seqembed::RowMatrix;

namespace {

using Positions = RotaryEmbedding<float>::MultimodalPositions;

template <typename Scalar>
RowMatrix<Scalar> random_rows(Index rows, Index cols, unsigned seed) {
    std::mt19937 generator(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    RowMatrix<Scalar> m(rows, cols);
    for (Index k = 0; k < m.size(); ++k) m.data()[k] = static_cast<Scalar>(normal(generator));
    return m;
}

seqembed::RotaryOptions qwen2_vl_like(bool interleaved) {
    seqembed::RotaryOptions options = seqembed::RotaryOptions::hugging_face(16, 1000000.0);
    options.mrope_section = interleaved ? std::array<Index, 3>{4, 2, 2} : std::array<Index, 3>{2, 3, 3};
    options.mrope_interleaved = interleaved;
    options.max_positions = 64;
    options.beyond = seqembed::BeyondTable::compute;
    return options;
}

Positions some_positions(Index tokens) {
    Positions p(3, tokens);
    for (Index r = 0; r < tokens; ++r) {
        p(0, r) = r;
        p(1, r) = (3 * r + 1) % 11;
        p(2, r) = r == tokens - 1 ? 90 : (5 * r + 2) % 13;  // one past the table: computed
    }
    return p;
}

}  // namespace

TEST_CASE("rotary multimodal: the sections' rules give each frequency its axis", "[rotary][mrope]") {
    // Qwen2-VL's [16, 24, 24] of 64: blocks.
    seqembed::RotaryOptions blocks = seqembed::RotaryOptions::hugging_face(128, 1000000.0);
    blocks.mrope_section = {16, 24, 24};
    const RotaryEmbedding<float> qwen2(blocks);
    CHECK(qwen2.multimodal());
    for (Index i = 0; i < 64; ++i) CHECK(qwen2.multimodal_axis(i) == (i < 16 ? 0 : i < 40 ? 1 : 2));
    // Qwen3-VL's [24, 20, 20] interleaved: T H W T H W ... up to 60, then T.
    seqembed::RotaryOptions interleaved = blocks;
    interleaved.mrope_section = {24, 20, 20};
    interleaved.mrope_interleaved = true;
    const RotaryEmbedding<float> qwen3(interleaved);
    for (Index i = 0; i < 64; ++i) CHECK(qwen3.multimodal_axis(i) == (i >= 60 ? 0 : i % 3));
    Index temporal = 0;
    for (Index i = 0; i < 64; ++i) temporal += qwen3.multimodal_axis(i) == 0 ? 1 : 0;
    CHECK(temporal == 24);
    CHECK_FALSE(RotaryEmbedding<float>(seqembed::RotaryOptions::hugging_face(128)).multimodal());
}

TEST_CASE("rotary multimodal: each frequency turns by its axis's table row, bit for bit on every backend",
          "[rotary][mrope]") {
    for (const bool interleaved : {false, true}) {
        const RotaryEmbedding<float> rope(qwen2_vl_like(interleaved));
        const Index tokens = 9, q_heads = 4, k_heads = 2, d = 16, pairs = 8;
        const Positions positions = some_positions(tokens);
        // The rows by hand: frequency i of row r from the row of positions(axis(i), r).
        RowMatrix<float> cos(tokens, pairs), sin(tokens, pairs);
        for (Index r = 0; r < tokens; ++r)
            for (Index i = 0; i < pairs; ++i) {
                RowMatrix<float> c(1, pairs), s(1, pairs);
                rope.forward_into(positions(rope.multimodal_axis(i), r), c, s, positions.maxCoeff() + 1);
                cos(r, i) = c(0, i);
                sin(r, i) = s(0, i);
            }
        RowMatrix<float> got_cos(tokens, pairs), got_sin(tokens, pairs);
        rope.multimodal_rows_into(positions, got_cos, got_sin);
        CHECK(bit_equal(got_cos, cos));
        CHECK(bit_equal(got_sin, sin));
        // The rotation of halves with those rows, in double from float values (exact products,
        // one rounding of each sum to float, as Hugging Face's q * cos + rotate_half(q) * sin).
        const RowMatrix<float> q0 = random_rows<float>(tokens, q_heads * d, 3);
        const RowMatrix<float> k0 = random_rows<float>(tokens, k_heads * d, 4);
        const auto rotated = [&](const RowMatrix<float>& x, Index heads) {
            RowMatrix<float> y = x;
            for (Index r = 0; r < tokens; ++r)
                for (Index h = 0; h < heads; ++h)
                    for (Index i = 0; i < pairs; ++i) {
                        const float a = x(r, h * d + i), b = x(r, h * d + pairs + i);
                        y(r, h * d + i) = static_cast<float>(double(a) * cos(r, i) - double(b) * sin(r, i));
                        y(r, h * d + pairs + i) = static_cast<float>(double(b) * cos(r, i) + double(a) * sin(r, i));
                    }
            return y;
        };
        for_each_isa([&](seqembed::Isa isa) {
            INFO(seqembed::isa_name(isa) << (interleaved ? " interleaved" : " blocks"));
            RowMatrix<float> q = q0, k = k0;
            rope.apply_multimodal(q, k, q_heads, k_heads, positions);
            CHECK((q - rotated(q0, q_heads)).cwiseAbs().maxCoeff() <= 1e-6f);
            CHECK((k - rotated(k0, k_heads)).cwiseAbs().maxCoeff() <= 1e-6f);
            // The scalar backend's bits, through the one-position kernel with the composed rows.
            RowMatrix<float> q1 = q0, k1 = k0;
            seqembed::set_isa(seqembed::Isa::scalar);
            rope.apply_multimodal(q1, k1, q_heads, k_heads, positions);
            seqembed::set_isa(isa);
            CHECK(bit_equal(q, q1));
            CHECK(bit_equal(k, k1));
            // The backward undoes it (to rounding), for double activations exactly enough.
            RowMatrix<double> qd = q0.cast<double>(), kd = k0.cast<double>();
            RotaryEmbedding<double> rope_d(qwen2_vl_like(interleaved));
            rope_d.apply_multimodal(qd, kd, q_heads, k_heads, positions);
            rope_d.apply_multimodal_backward(qd, kd, q_heads, k_heads, positions);
            CHECK((qd - q0.cast<double>()).cwiseAbs().maxCoeff() <= 1e-14);
            CHECK((kd - k0.cast<double>()).cwiseAbs().maxCoeff() <= 1e-14);
            // bfloat16 activations: the scalar backend's bits.
            RowMatrix<Eigen::bfloat16> qb = q0.cast<Eigen::bfloat16>(), kb = k0.cast<Eigen::bfloat16>();
            RowMatrix<Eigen::bfloat16> qb1 = qb, kb1 = kb;
            rope.apply_multimodal(qb, kb, q_heads, k_heads, positions);
            seqembed::set_isa(seqembed::Isa::scalar);
            rope.apply_multimodal(qb1, kb1, q_heads, k_heads, positions);
            seqembed::set_isa(isa);
            CHECK(bit_equal(qb, qb1));
            CHECK(bit_equal(kb, kb1));
        });
    }
}

TEST_CASE("rotary multimodal: three equal ids rotate as one position", "[rotary][mrope]") {
    for (const bool interleaved : {false, true}) {
        const RotaryEmbedding<float> rope(qwen2_vl_like(interleaved));
        const Index tokens = 7;
        RotaryEmbedding<float>::PositionVector one(tokens);
        Positions three(3, tokens);
        for (Index r = 0; r < tokens; ++r) one(r) = three(0, r) = three(1, r) = three(2, r) = 5 * r;
        RowMatrix<float> q = random_rows<float>(tokens, 32, 5), k = random_rows<float>(tokens, 16, 6);
        RowMatrix<float> q1 = q, k1 = k;
        rope.apply_multimodal(q, k, 2, 1, three);
        rope.apply(q1, k1, 2, 1, one);
        CHECK(bit_equal(q, q1));
        CHECK(bit_equal(k, k1));
    }
}

TEST_CASE("rotary multimodal: bad sections and positions are named, and leave q and k alone", "[rotary][mrope]") {
    seqembed::RotaryOptions options = qwen2_vl_like(false);
    options.mrope_section = {2, 3, 2};
    CHECK_THROWS_WITH(RotaryEmbedding<float>(options),
                      Catch::Contains("mrope_section [2, 3, 2] must be non-negative and sum to rotary_dim / 2 = 8"));
    // Interleaved, only the height's and width's counts are read (clipped to the frequencies).
    options.mrope_section = {16, 8, 8};
    options.mrope_interleaved = true;
    const RotaryEmbedding<float> clipped(options);
    for (Index i = 0; i < 8; ++i) CHECK(clipped.multimodal_axis(i) == i % 3);
    options.mrope_section = {-1, 2, 2};
    CHECK_THROWS_WITH(RotaryEmbedding<float>(options), Catch::Contains("mrope_section [-1, 2, 2] must be non-negative"));
    options.mrope_section = {};
    CHECK_THROWS_WITH(RotaryEmbedding<float>(options), Catch::Contains("mrope_interleaved needs an mrope_section"));
    options.mrope_interleaved = false;
    const RotaryEmbedding<float> plain(options);
    RowMatrix<float> q = random_rows<float>(2, 16, 7), k = random_rows<float>(2, 16, 8);
    const RowMatrix<float> q0 = q;
    Positions positions = Positions::Zero(3, 2);
    CHECK_THROWS_WITH(plain.apply_multimodal(q, k, 1, 1, positions), Catch::Contains("needs options with an mrope_section"));
    const RotaryEmbedding<float> rope(qwen2_vl_like(false));
    positions(2, 1) = -1;
    CHECK_THROWS_WITH(rope.apply_multimodal(q, k, 1, 1, positions),
                      Catch::Contains("rotary position -1 of width id of row 1 is negative"));
    CHECK(bit_equal(q, q0));
    positions(2, 1) = 0;
    CHECK_THROWS_AS(rope.apply_multimodal(q, k, 1, 1, Positions::Zero(3, 3)), seqembed::shape_error);
    RowMatrix<float> cos(2, 7), sin(2, 8);
    CHECK_THROWS_AS(rope.multimodal_rows_into(positions, cos, sin), seqembed::shape_error);
}
