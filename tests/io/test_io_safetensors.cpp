// Reading safetensors files: torch state dicts written from the format's specification by
// tests/reference/generate_io_fixtures.py, read as views or converted copies, and as tables
// that keep the mapping alive.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <seqembed/io/io.hpp>
#include <seqembed/seqembed.hpp>

#include "catch.hpp"
#include "fixtures/expected_values.hpp"
#include "io_test_support.hpp"

namespace {

using seqembed::Index;
using seqembed::RowMatrix;

RowMatrix<double> expected_matrix(const std::vector<long>& shape, const std::vector<double>& values) {
    RowMatrix<double> m(shape[0], shape[1]);
    for (Index i = 0; i < m.size(); ++i) m.data()[i] = values[static_cast<std::size_t>(i)];
    return m;
}

const std::string model = io_test::fixture("torch_model.safetensors");

}  // namespace

TEST_CASE("safetensors: a torch state dict lists its tensors, dtypes, shapes, ranges and metadata") {
    const auto file = seqembed::io::SafetensorsFile::open(model);
    CHECK(file.is_mapped());
    CHECK(file.header_size() % 8 == 0);
    CHECK(file.metadata() == std::map<std::string, std::string>{{"format", "pt"}, {"source", "generate_io_fixtures.py"}});
    std::vector<std::string> names;
    for (const auto& t : file.tensors()) names.push_back(t.name);
    // The reference writer's order: dtype alignment (I64, F64, F32, BF16, F16), then name.
    CHECK(names == std::vector<std::string>{"step", "embed_f64", "conv.weight", "embed.weight", "norm.bias",
                                            "norm.weight", "pos.weight", "embed_bf16", "embed_f16"});
    const auto& embed = file.info("embed.weight");
    CHECK(embed.dtype_name == "F32");
    CHECK(embed.dtype() == seqembed::io::Dtype::f32);
    CHECK(embed.shape == std::vector<std::int64_t>{11, 8});
    CHECK(embed.byte_size() == 11 * 8 * 4);
    CHECK(embed.file_offset == 8 + file.header_size() + embed.begin);
    CHECK(file.info("step").dtype_name == "I64");
    CHECK(file.info("step").dtype() == seqembed::io::Dtype::i64);
    CHECK(file.integers("step").vector()(0) == 1234);
    CHECK(file.contains("norm.bias"));
    CHECK_FALSE(file.contains("norm"));
}

TEST_CASE("safetensors: F32 tensors are views of the mapping with torch's values") {
    const auto file = seqembed::io::SafetensorsFile::open(model);
    const auto embed = file.matrix<float>("embed.weight");
    CHECK(embed.is_view());
    CHECK(embed.data() == reinterpret_cast<const float*>(file.bytes().data() + file.info("embed.weight").file_offset));
    const RowMatrix<double> expected = expected_matrix(io_fixtures::torch_embed_weight_shape, io_fixtures::torch_embed_weight);
    CHECK(embed.matrix().cast<double>() == expected);
    CHECK(embed.matrix().row(0).isZero());  // padding_idx 0

    const auto gamma = file.vector<float>("norm.weight");
    REQUIRE(gamma.rank() == 1);
    for (Index i = 0; i < 8; ++i) CHECK(gamma.vector()(i) == static_cast<float>(io_fixtures::torch_norm_weight[static_cast<std::size_t>(i)]));
    const auto conv = file.tensor<float>("conv.weight");
    CHECK(conv.shape() == std::vector<Index>{2, 3, 4});
    for (std::size_t i = 0; i < 24; ++i) CHECK(conv.data()[i] == static_cast<float>(io_fixtures::torch_conv_weight[i]));
}

TEST_CASE("safetensors: widening reads are exact, narrowing reads round as torch does, when asked") {
    const auto file = seqembed::io::SafetensorsFile::open(model);
    const RowMatrix<double> embed = expected_matrix(io_fixtures::torch_embed_weight_shape, io_fixtures::torch_embed_weight);

    // F32 to F64: exact.
    const auto wide = file.matrix<double>("embed.weight");
    CHECK_FALSE(wide.is_view());
    CHECK(RowMatrix<double>(wide.matrix()) == embed);
    // BF16 and F16 (torch's rounding of the F32 table) to float: exactly the stored bits.
    const auto bf16 = file.matrix<float>("embed_bf16");
    const auto f16 = file.matrix<float>("embed_f16");
    for (std::size_t i = 0; i < 88; ++i) {
        std::uint32_t bits = 0;
        const float value = bf16.data()[i];
        std::memcpy(&bits, &value, 4);
        CHECK(bits == static_cast<std::uint32_t>(io_fixtures::torch_embed_bf16_bits[i]) << 16);
        CHECK(f16.data()[i] == static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(io_fixtures::torch_embed_f16_bits[i])));
    }
    // F32 to BF16 and F16 with allow_narrowing: the bits torch's .to(bfloat16) / .to(float16) gave.
    seqembed::io::ReadOptions narrowing;
    narrowing.allow_narrowing = true;
    const auto to_bf16 = file.matrix<Eigen::bfloat16>("embed.weight", narrowing);
    const auto to_f16 = file.matrix<Eigen::half>("embed.weight", narrowing);
    for (std::size_t i = 0; i < 88; ++i) {
        CHECK(Eigen::numext::bit_cast<std::uint16_t>(to_bf16.data()[i]) == io_fixtures::torch_embed_bf16_bits[i]);
        CHECK(Eigen::numext::bit_cast<std::uint16_t>(to_f16.data()[i]) == io_fixtures::torch_embed_f16_bits[i]);
    }
    // F64 to F32: round to nearest even, as a C++ conversion does.
    const auto narrow = file.matrix<float>("embed_f64", narrowing);
    for (std::size_t i = 0; i < 88; ++i) CHECK(narrow.data()[i] == static_cast<float>(io_fixtures::torch_embed_f64[i]));
    // The stored dtype itself is a view; ReadOptions::copy forces an owned copy.
    CHECK(file.matrix<Eigen::bfloat16>("embed_bf16").is_view());
    seqembed::io::ReadOptions copy;
    copy.copy = true;
    const auto copied = file.matrix<float>("embed.weight", copy);
    CHECK_FALSE(copied.is_view());
    CHECK(copied.matrix().cast<double>() == embed);
}

TEST_CASE("safetensors: tables built from a file keep the mapping alive after the file object is gone") {
    seqembed::TokenEmbedding<float> embedding = [] {
        const auto file = seqembed::io::SafetensorsFile::open(model);
        return file.token_embedding<float>("embed.weight");
    }();
    CHECK(embedding.is_view());
    CHECK(embedding.vocab_size() == 11);
    CHECK(embedding.d_model() == 8);
    // One line, through a temporary file object.
    auto positions = seqembed::io::learned_positions_from_file<float>(model, "pos.weight");
    CHECK(positions.is_view());
    auto bf16 = seqembed::io::token_embedding_from_file<float, Eigen::bfloat16>(model, "embed_bf16");
    CHECK(bf16.is_view());

    // A pipeline (which owns copies of both tables) outlives every file object too.
    seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>> pipeline(std::move(embedding),
                                                                                        std::move(positions));
    seqembed::IdMatrix ids(1, 3);
    ids << 3, 0, 10;
    const RowMatrix<float> out = pipeline.forward(ids);
    const RowMatrix<double> embed = expected_matrix(io_fixtures::torch_embed_weight_shape, io_fixtures::torch_embed_weight);
    const RowMatrix<double> pos = expected_matrix(io_fixtures::torch_pos_weight_shape, io_fixtures::torch_pos_weight);
    const float scale = static_cast<float>(std::sqrt(8.0));
    for (Index t = 0; t < 3; ++t)
        for (Index c = 0; c < 8; ++c) {
            const float e = static_cast<float>(embed(ids(0, t), c)) * scale;
            CHECK(out(t, c) == e + static_cast<float>(pos(t, c)));
        }
    // The bfloat16 table widens each stored value exactly.
    const RowMatrix<float> looked_up = bf16.forward(ids);
    for (Index c = 0; c < 8; ++c) {
        const std::uint16_t bits = io_fixtures::torch_embed_bf16_bits[static_cast<std::size_t>(3 * 8 + c)];
        CHECK(looked_up(0, c) == seqembed::io::detail::bf16_bits_to_float(bits) * scale);
    }
}

TEST_CASE("safetensors: a converted table owns its copy and tensors keep the file alive too") {
    seqembed::io::ReadOptions narrowing;
    narrowing.allow_narrowing = true;
    seqembed::io::Tensor<double> tensor;
    seqembed::TokenEmbedding<float, Eigen::bfloat16> compact = [&] {
        const auto file = seqembed::io::SafetensorsFile::open(model);
        tensor = file.matrix<double>("embed_f64");
        return file.token_embedding<float, Eigen::bfloat16>("embed.weight", {}, narrowing);
    }();
    CHECK(compact.is_view());  // a view of its own converted copy, which it holds
    CHECK(tensor.matrix()(1, 2) == io_fixtures::torch_embed_f64[1 * 8 + 2]);
    seqembed::IdMatrix ids(1, 1);
    ids << 1;
    const RowMatrix<float> row = compact.forward(ids);
    for (Index c = 0; c < 8; ++c)
        CHECK(row(0, c) == seqembed::io::detail::bf16_bits_to_float(io_fixtures::torch_embed_bf16_bits[static_cast<std::size_t>(8 + c)]) *
                               static_cast<float>(std::sqrt(8.0)));
}

TEST_CASE("safetensors: a file read into memory instead of mapped gives the same tensors") {
    seqembed::io::OpenOptions options;
    options.map = false;
    const auto read = seqembed::io::SafetensorsFile::open(model, options);
    const auto mapped = seqembed::io::SafetensorsFile::open(model);
    CHECK_FALSE(read.is_mapped());
    CHECK(read.matrix<float>("embed.weight").matrix() == mapped.matrix<float>("embed.weight").matrix());
    CHECK(read.matrix<float>("embed.weight").is_view());
    CHECK(read.metadata() == mapped.metadata());
}
