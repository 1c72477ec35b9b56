// save_safetensors: the bytes a spec-following writer (tests/reference/generate_io_fixtures.py)
// produces, deterministic whatever the input order, and round trips of every dtype and rank.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <seqembed/io/io.hpp>

#include "catch.hpp"
#include "io_test_support.hpp"
#include "writer_cases.hpp"

using seqembed::Index;
using seqembed::RowMatrix;

TEST_CASE("writers: save_safetensors writes the reference layout byte for byte") {
    test_support::TempDir dir;
    const io_cases::WriterTensors tensors;
    seqembed::io::save_safetensors(dir / "writer.safetensors", tensors.named(), io_cases::writer_metadata());
    const std::string written = test_support::read_bytes(dir / "writer.safetensors");
    CHECK(written == test_support::read_bytes(io_test::fixture("writer_reference.safetensors")));
    CHECK(seqembed::io::serialize_safetensors(tensors.named(), io_cases::writer_metadata()) == written);
    CHECK(dir.files() == std::vector<std::string>{"writer.safetensors"});

    // Any input order gives the same bytes.
    std::vector<seqembed::io::NamedTensor> shuffled = tensors.named();
    std::mt19937 random(7);
    for (int round = 0; round < 5; ++round) {
        std::shuffle(shuffled.begin(), shuffled.end(), random);
        CHECK(seqembed::io::serialize_safetensors(shuffled, io_cases::writer_metadata()) == written);
    }

    // Each tensor starts at a multiple of its element size, from an 8-byte aligned buffer.
    const auto file = seqembed::io::SafetensorsFile::from_memory(written.data(), written.size(), "written");
    CHECK(file.header_size() % 8 == 0);
    for (const auto& t : file.tensors()) CHECK(t.file_offset % seqembed::io::dtype_size(*t.dtype()) == 0);
    CHECK(file.metadata() == io_cases::writer_metadata());
    CHECK(file.matrix<float>("b.weight").matrix() == tensors.b_weight);
    CHECK(file.vector<double>("a.bias").vector() == tensors.a_bias);
    CHECK(file.matrix<Eigen::bfloat16>("c.table").matrix() == tensors.c_table);
    CHECK(file.matrix<float>("e.empty").shape() == std::vector<Index>{0, 4});
}

TEMPLATE_TEST_CASE("writers: load, save, load gives the same tensors and the same bytes", "", float, double,
                   Eigen::half, Eigen::bfloat16) {
    test_support::TempDir dir;
    std::mt19937 random(11);
    std::normal_distribution<float> normal;
    RowMatrix<TestType> table(37, 19);
    for (Index i = 0; i < table.size(); ++i) table.data()[i] = TestType(normal(random));
    std::vector<TestType> stack(2 * 3 * 4 * 5);
    for (auto& v : stack) v = TestType(normal(random));
    Eigen::Matrix<TestType, Eigen::Dynamic, Eigen::Dynamic> column_major = table.transpose();

    seqembed::io::save_safetensors(dir / "a.safetensors",
                                   {{"table", table},
                                    {"column_major", column_major},
                                    {"block", table.block(1, 2, 5, 7)},
                                    seqembed::io::NamedTensor::view("stack", stack.data(), {2, 3, 4, 5}),
                                    seqembed::io::NamedTensor::view("scalar", stack.data(), {})},
                                   {{"k", "v"}});
    const auto first = seqembed::io::SafetensorsFile::open(dir / "a.safetensors");
    CHECK(first.matrix<TestType>("table").is_view());
    CHECK(first.matrix<TestType>("table").matrix() == table);
    CHECK(first.matrix<TestType>("column_major").matrix() == column_major);
    CHECK(first.matrix<TestType>("block").matrix() == table.block(1, 2, 5, 7));
    const auto stack_back = first.tensor<TestType>("stack");
    CHECK(stack_back.shape() == std::vector<Index>{2, 3, 4, 5});
    CHECK(std::equal(stack.begin(), stack.end(), stack_back.data()));
    CHECK(first.info("scalar").shape.empty());
    const auto scalar = first.tensor<TestType>("scalar");
    CHECK(scalar.shape().empty());
    CHECK(scalar.size() == 1);
    CHECK(scalar.scalar() == stack[0]);

    // Save what was loaded (views of the first file, the scalar too), load again: the same bytes.
    std::vector<seqembed::io::NamedTensor> again;
    for (const char* name : {"table", "column_major", "block", "stack", "scalar"})
        again.emplace_back(name, first.tensor<TestType>(name));
    seqembed::io::save_safetensors(dir / "b.safetensors", again, first.metadata());
    CHECK(test_support::read_bytes(dir / "a.safetensors") == test_support::read_bytes(dir / "b.safetensors"));
    // Overwriting a file replaces it whole.
    seqembed::io::save_safetensors(dir / "a.safetensors", {{"only", table}});
    CHECK(seqembed::io::SafetensorsFile::open(dir / "a.safetensors").tensors().size() == 1);
}

TEST_CASE("writers: overwriting a file that is mapped leaves the mapping's tables intact") {
    test_support::TempDir dir;
    const RowMatrix<float> before = RowMatrix<float>::Constant(4, 3, 2.0f);
    seqembed::io::save_safetensors(dir / "m.safetensors", {{"w", before}});
    const auto embedding = seqembed::io::token_embedding_from_file<float>(dir / "m.safetensors", "w");
    // The writer renames a new file over the old one: the old mapping keeps the old bytes.
    seqembed::io::save_safetensors(dir / "m.safetensors", {{"w", RowMatrix<float>::Constant(4, 3, 5.0f)}});
    seqembed::IdMatrix ids(1, 1);
    ids << 2;
    CHECK(embedding.forward(ids)(0, 0) == 2.0f * std::sqrt(3.0f));
    CHECK(seqembed::io::SafetensorsFile::open(dir / "m.safetensors").matrix<float>("w").matrix()(0, 0) == 5.0f);
}
