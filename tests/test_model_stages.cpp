// The stages of real models' input: token types (TokenTypeEmbedding) and LayerNorm, alone and
// fused into InputPipeline. LayerNorm against a long double reference; the fused pipeline against
// its stages chained by hand, bit for bit, on every ISA; bad input.
#include <seqembed/seqembed.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bit_equal.hpp"
#include "catch.hpp"
#include "isa_support.hpp"

using seqembed::IdMatrix;
using seqembed::Index;
using seqembed::RowMatrix;

namespace {

template <typename Scalar>
RowMatrix<Scalar> random_matrix(Index rows, Index cols, unsigned seed, double mean = 0.0, double spread = 1.0) {
    std::mt19937 generator(seed);
    std::normal_distribution<double> normal(mean, spread);
    RowMatrix<Scalar> m(rows, cols);
    for (Index k = 0; k < m.size(); ++k) m.data()[k] = static_cast<Scalar>(normal(generator));
    return m;
}

/// LayerNorm of each row in long double, from the Scalar inputs and weights.
template <typename Scalar>
RowMatrix<long double> reference_layer_norm(const RowMatrix<Scalar>& x, const seqembed::LayerNorm<Scalar>& norm) {
    RowMatrix<long double> y(x.rows(), x.cols());
    for (Index r = 0; r < x.rows(); ++r) {
        long double mean = 0;
        for (Index c = 0; c < x.cols(); ++c) mean += x(r, c);
        mean /= static_cast<long double>(x.cols());
        long double variance = 0;
        for (Index c = 0; c < x.cols(); ++c) variance += (x(r, c) - mean) * (x(r, c) - mean);
        variance /= static_cast<long double>(x.cols());
        const long double rstd = 1.0L / std::sqrt(variance + static_cast<long double>(norm.epsilon()));
        for (Index c = 0; c < x.cols(); ++c)
            y(r, c) = (x(r, c) - mean) * rstd * norm.gamma()(c) + norm.beta()(c);
    }
    return y;
}

/// Whether f throws Error with a message containing `part` (any other exception propagates).
template <typename Error, typename F>
bool throws_with(F&& f, const std::string& part) {
    try {
        f();
    } catch (const Error& e) {
        INFO("message: " << e.what());
        return std::string(e.what()).rfind("seqembed:", 0) == 0 && std::string(e.what()).find(part) != std::string::npos;
    }
    return false;
}

/// The largest |y - reference| / max(1, |reference|).
template <typename Scalar>
double worst_relative(const RowMatrix<Scalar>& y, const RowMatrix<long double>& reference) {
    double worst = 0;
    for (Index k = 0; k < y.size(); ++k) {
        const long double want = reference.data()[k];
        const long double error = std::fabs(static_cast<long double>(y.data()[k]) - want);
        worst = std::max(worst, static_cast<double>(error / std::max(1.0L, std::fabs(want))));
    }
    return worst;
}

}  // namespace

TEMPLATE_TEST_CASE("LayerNorm is torch.nn.LayerNorm's formula within its documented bound, on every ISA",
                   "[layer_norm]", float, double) {
    using Scalar = TestType;
    const double bound = std::is_same_v<Scalar, float> ? 1e-6 : 1e-14;
    // 4100: wider than the kernel's 16 KiB scratch row, so summed again from its sources.
    for (const Index width : {Index{1}, Index{2}, Index{7}, Index{16}, Index{17}, Index{33}, Index{64}, Index{65},
                              Index{768}, Index{1000}, Index{4100}}) {
        INFO("width " << width);
        // Rows with a mean far from 0 too: the two-pass variance must not cancel.
        const RowMatrix<Scalar> x = random_matrix<Scalar>(9, width, static_cast<unsigned>(width), 3.0, 2.0);
        const auto norm = seqembed::LayerNorm<Scalar>::from_weights(
            random_matrix<Scalar>(1, width, 11, 1.0, 0.3), random_matrix<Scalar>(1, width, 12, 0.0, 0.5), 1e-12);
        const RowMatrix<long double> reference = reference_layer_norm(x, norm);
        RowMatrix<Scalar> first;
        for_each_isa([&](seqembed::Isa isa) {
            const RowMatrix<Scalar> y = norm.forward(x);
            if (width > 1) CHECK(worst_relative(y, reference) <= bound);
            if (isa == seqembed::Isa::scalar) {
                first = y;
            } else {
                CHECK(bit_equal(y, first));  // every ISA gives the scalar backend's bits
            }
            RowMatrix<Scalar> in_place = x;
            norm.forward_into(in_place, in_place);
            CHECK(bit_equal(in_place, y));
        });
    }
}

TEST_CASE("LayerNorm of a constant row is its bias", "[layer_norm]") {
    const auto norm = seqembed::LayerNorm<float>::from_weights(seqembed::LayerNorm<float>::Vector::Constant(5, 2.0f),
                                                               seqembed::LayerNorm<float>::Vector::LinSpaced(5, -1, 1),
                                                               1e-5);
    const RowMatrix<float> constant = RowMatrix<float>::Constant(2, 5, 7.25f);
    const RowMatrix<float> y = norm.forward(constant);
    for (Index c = 0; c < 5; ++c) {
        CHECK(y(0, c) == norm.beta()(c));
        CHECK(y(1, c) == norm.beta()(c));
    }
}

TEST_CASE("LayerNorm rejects bad weights and epsilons with the value named", "[layer_norm][bad_input]") {
    using Vector = seqembed::LayerNorm<float>::Vector;
    CHECK_THROWS_AS(seqembed::LayerNorm<float>(0), seqembed::value_error);
    CHECK(throws_with<seqembed::error>([&] { (void)(seqembed::LayerNorm<float>(4, 0.0)); }, "epsilon 0"));
    CHECK_THROWS_AS(seqembed::LayerNorm<float>(4, -1e-5), seqembed::value_error);
    CHECK_THROWS_AS(seqembed::LayerNorm<float>(4, std::numeric_limits<double>::quiet_NaN()), seqembed::value_error);
    CHECK_THROWS_AS(seqembed::LayerNorm<float>(4, std::numeric_limits<double>::infinity()), seqembed::value_error);
    // 1e-50 is a positive double but 0 as a float.
    CHECK(throws_with<seqembed::error>([&] { (void)(seqembed::LayerNorm<float>(4, 1e-50)); }, "float"));
    CHECK_NOTHROW(seqembed::LayerNorm<double>(4, 1e-50));
    Vector gamma = Vector::Ones(4);
    gamma(2) = std::numeric_limits<float>::quiet_NaN();
    CHECK(throws_with<seqembed::error>([&] { (void)(seqembed::LayerNorm<float>::from_weights(gamma, Vector::Zero(4), 1e-5)); }, "LayerNorm weight"));
    Vector beta = Vector::Zero(4);
    beta(0) = std::numeric_limits<float>::infinity();
    CHECK(throws_with<seqembed::error>([&] { (void)(seqembed::LayerNorm<float>::from_weights(Vector::Ones(4), beta, 1e-5)); }, "LayerNorm bias"));
    CHECK_THROWS_AS(seqembed::LayerNorm<float>::from_weights(Vector::Ones(4), Vector::Zero(3), 1e-5),
                    seqembed::shape_error);
    const seqembed::LayerNorm<float> norm(4);
    const RowMatrix<float> x = RowMatrix<float>::Ones(2, 5);
    CHECK_THROWS_AS(norm.forward(x), seqembed::shape_error);
    RowMatrix<float> out(3, 4);
    CHECK_THROWS_AS(norm.forward_into(RowMatrix<float>::Ones(2, 4), out), seqembed::shape_error);
}

TEST_CASE("TokenTypeEmbedding: rows by type id, bad ids named", "[token_types]") {
    const RowMatrix<float> weights = random_matrix<float>(2, 6, 3);
    const auto types = seqembed::TokenTypeEmbedding<float>::from_weights(weights);
    IdMatrix ids(1, 3);
    ids << 1, 0, 1;
    const RowMatrix<float> rows = types.forward(ids);
    CHECK(rows.row(0) == weights.row(1));
    CHECK(rows.row(1) == weights.row(0));
    ids(0, 2) = 2;
    CHECK(throws_with<seqembed::error>([&] { (void)(types.forward(ids)); }, "token type id 2 at (batch 0, position 2) is outside the token types [0, 2)"));
    RowMatrix<float> bad = weights;
    bad(1, 4) = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_AS(seqembed::TokenTypeEmbedding<float>::from_weights(bad), seqembed::value_error);
    CHECK_THROWS_AS(seqembed::TokenTypeEmbedding<float>(0, 4), seqembed::value_error);
}

namespace {

/// BERT's stage chained by hand, as PyTorch runs it: word * scale + type, + position, LayerNorm,
/// padded rows zero, then dropout.
template <typename Scalar, typename Storage>
RowMatrix<Scalar> chained_bert(const seqembed::TokenEmbedding<Scalar, Storage>& embedding,
                               const seqembed::TokenTypeEmbedding<Scalar>& types,
                               const seqembed::LearnedPositionalEmbedding<Scalar>& positions,
                               const seqembed::LayerNorm<Scalar>& norm, const IdMatrix& ids, const IdMatrix& type_ids,
                               const seqembed::Padding& padding, double p, std::uint64_t call) {
    RowMatrix<Scalar> x(ids.size(), embedding.d_model());
    embedding.forward_into(ids, x);
    padding.for_each_token(ids, 0, ids.rows(), [&](Index b, Index t, std::int64_t token_index) {
        if (token_index < 0) return;
        auto row = x.row(b * ids.cols() + t);
        row += types.table().row(type_ids(b, t));
        row += positions.forward(token_index, 1);
    });
    norm.forward_into(x, x);
    padding.for_each_token(ids, 0, ids.rows(), [&](Index b, Index t, std::int64_t token_index) {
        if (token_index < 0) x.row(b * ids.cols() + t).setZero();
    });
    if (p > 0) {
        seqembed::Dropout dropout(p, 5);
        dropout.set_training(true);
        dropout.set_calls(call);
        dropout.forward_into(x, x);
    }
    return x;
}

template <typename Scalar, typename Storage>
void check_fused_bert() {
    const Index vocab = 30;
    seqembed::TokenEmbeddingOptions unscaled;  // BERT does not scale
    unscaled.scale = seqembed::EmbeddingScale::none();
    for (const Index width : {Index{8}, Index{13}, Index{64}, Index{200}}) {
        INFO("width " << width);
        auto embedding = seqembed::TokenEmbedding<Scalar, Storage>::from_weights(
            random_matrix<float>(vocab, width, 21).template cast<Storage>(), unscaled);
        const auto types = seqembed::TokenTypeEmbedding<Scalar>::from_weights(random_matrix<Scalar>(2, width, 22));
        const auto positions = seqembed::LearnedPositionalEmbedding<Scalar>::from_weights(random_matrix<Scalar>(16, width, 23));
        const auto norm = seqembed::LayerNorm<Scalar>::from_weights(random_matrix<Scalar>(1, width, 24, 1.0, 0.2),
                                                                    random_matrix<Scalar>(1, width, 25, 0.0, 0.2), 1e-12);
        IdMatrix ids(3, 7);
        ids << 3, 4, 5, 6, 7, 0, 0,
               0, 0, 8, 9, 10, 11, 12,
               13, 14, 15, 16, 17, 18, 19;
        IdMatrix type_ids(3, 7);
        type_ids << 0, 0, 0, 1, 1, 0, 0,
                    0, 0, 0, 0, 1, 1, 1,
                    1, 1, 1, 1, 0, 0, 0;
        const Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> mask =
            (ids.array() != 0).template cast<std::int64_t>();
        for (const double p : {0.0, 0.1}) {
            seqembed::PipelineOptions options;
            options.dropout = p;
            options.dropout_seed = 5;
            seqembed::InputPipeline<Scalar, seqembed::LearnedPositionalEmbedding<Scalar>,
                                    seqembed::TokenEmbedding<Scalar, Storage>>
                pipeline(embedding, positions, options);
            pipeline.set_token_types(types);
            pipeline.set_layer_norm(norm);
            pipeline.set_training(p > 0);
            for (const seqembed::Padding& padding : {seqembed::Padding::from_mask(mask), seqembed::Padding::by_id(0)}) {
                for_each_isa([&](seqembed::Isa) {
                    const std::uint64_t call = pipeline.dropout().calls();
                    const RowMatrix<Scalar> fused = pipeline.forward(ids, type_ids, padding);
                    CHECK(bit_equal(fused, chained_bert(embedding, types, positions, norm, ids, type_ids, padding, p, call)));
                });
            }
            // Without type ids every token reads type row 0.
            const IdMatrix zeros = IdMatrix::Zero(3, 7);
            pipeline.set_training(false);
            CHECK(bit_equal(pipeline.forward(ids), pipeline.forward(ids, zeros)));
        }
    }
}

}  // namespace

TEST_CASE("A BERT-style pipeline (types, positions, LayerNorm, dropout) equals its stages chained, bit for bit",
          "[pipeline][layer_norm][token_types]") {
    check_fused_bert<float, float>();
    check_fused_bert<float, Eigen::bfloat16>();
    check_fused_bert<double, double>();
}

TEST_CASE("The pipeline's new stages reject bad input before writing, and keep their state", "[pipeline][bad_input]") {
    seqembed::InputPipeline<float> pipeline(seqembed::TokenEmbedding<float>(10, 4),
                                            seqembed::SinusoidalPositionalEncoding<float>(4));
    IdMatrix ids(2, 3);
    ids << 1, 2, 3, 4, 5, 6;
    IdMatrix type_ids = IdMatrix::Zero(2, 3);
    CHECK(throws_with<seqembed::error>([&] { (void)(pipeline.forward(ids, type_ids)); }, "no token type table"));
    CHECK_THROWS_AS(pipeline.set_token_types(seqembed::TokenTypeEmbedding<float>(2, 5)), seqembed::shape_error);
    CHECK(pipeline.token_types() == nullptr);
    CHECK_THROWS_AS(pipeline.set_layer_norm(seqembed::LayerNorm<float>(5)), seqembed::shape_error);
    CHECK(pipeline.layer_norm() == nullptr);
    pipeline.set_token_types(seqembed::TokenTypeEmbedding<float>(2, 4));
    pipeline.set_layer_norm(seqembed::LayerNorm<float>(4, 1e-12));
    REQUIRE(pipeline.token_types() != nullptr);
    REQUIRE(pipeline.layer_norm() != nullptr);
    type_ids(1, 2) = 2;
    RowMatrix<float> out = RowMatrix<float>::Constant(6, 4, 42.0f);
    CHECK(throws_with<seqembed::error>([&] { (void)(pipeline.forward_into(ids, type_ids, seqembed::Padding::none(), out)); }, "token type id 2 at (batch 1, position 2)"));
    CHECK((out.array() == 42.0f).all());
    // A padded token's type is not read: it is not checked either.
    const std::vector<std::int64_t> lengths{3, 2};
    CHECK_NOTHROW(pipeline.forward_into(ids, type_ids, seqembed::Padding::right(lengths), out));
    CHECK(out.row(5).isZero());
    const IdMatrix wrong_shape = IdMatrix::Zero(2, 2);
    CHECK_THROWS_AS(pipeline.forward(ids, wrong_shape), seqembed::shape_error);
}
