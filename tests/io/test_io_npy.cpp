// Reading .npy files written by numpy (versions 1.0, 2.0, 3.0, Fortran order, big-endian, half),
// and numpy.save's own bytes reproduced by save_npy.
#include <memory>
#include <string>
#include <vector>

#include <seqembed/io/io.hpp>

#include "bad_files.hpp"
#include "catch.hpp"
#include "fixtures/expected_values.hpp"
#include "io_test_support.hpp"
#include "writer_cases.hpp"

namespace {

using seqembed::Index;

template <typename T>
void check_values(const seqembed::io::Tensor<T>& tensor, const std::vector<long>& shape,
                  const std::vector<double>& values) {
    REQUIRE(tensor.shape() == std::vector<Index>(shape.begin(), shape.end()));
    REQUIRE(tensor.size() == static_cast<Index>(values.size()));
    for (std::size_t i = 0; i < values.size(); ++i) {
        INFO("element " << i);
        CHECK(static_cast<double>(tensor.data()[i]) == values[i]);
    }
}

seqembed::io::NpyFile open(const std::string& name) { return seqembed::io::NpyFile::open(io_test::fixture(name)); }

}  // namespace

TEST_CASE("npy: versions 1.0, 2.0 and 3.0 as numpy writes them") {
    const auto v1 = open("v1_f4.npy");
    CHECK(v1.version() == 1);
    CHECK(v1.descr() == "<f4");
    CHECK(v1.data_offset() % 64 == 0);
    CHECK(v1.matrix<float>().is_view());
    check_values(v1.matrix<float>(), io_fixtures::npy_v1_f4_shape, io_fixtures::npy_v1_f4);
    check_values(v1.matrix<double>(), io_fixtures::npy_v1_f4_shape, io_fixtures::npy_v1_f4);

    const auto v2 = open("v2_f8.npy");
    CHECK(v2.version() == 2);
    CHECK(v2.matrix<double>().is_view());
    check_values(v2.matrix<double>(), io_fixtures::npy_v2_f8_shape, io_fixtures::npy_v2_f8);

    const auto v3 = open("v3_f2.npy");
    CHECK(v3.version() == 3);
    CHECK(v3.dtype() == seqembed::io::Dtype::f16);
    CHECK(v3.matrix<Eigen::half>().is_view());
    check_values(v3.matrix<float>(), io_fixtures::npy_v3_f2_shape, io_fixtures::npy_v3_f2);
}

TEST_CASE("npy: Fortran order is honoured: the matrix equals the stored array, not its transpose") {
    const auto f = open("fortran_f4.npy");
    CHECK(f.fortran_order());
    const auto m = f.matrix<float>();
    CHECK_FALSE(m.is_view());
    check_values(m, io_fixtures::npy_fortran_f4_shape, io_fixtures::npy_fortran_f4);
    // Rank 3 in Fortran order, widened on the way.
    check_values(open("fortran3_f8.npy").tensor<double>(), io_fixtures::npy_fortran3_f8_shape, io_fixtures::npy_fortran3_f8);
}

TEST_CASE("npy: big-endian arrays are byte-swapped") {
    check_values(open("big_f4.npy").matrix<float>(), io_fixtures::npy_big_f4_shape, io_fixtures::npy_big_f4);
    check_values(open("big_f8.npy").matrix<double>(), io_fixtures::npy_big_f8_shape, io_fixtures::npy_big_f8);
    check_values(open("big_f2.npy").vector<float>(), io_fixtures::npy_big_f2_shape, io_fixtures::npy_big_f2);
    CHECK(open("big_f2.npy").big_endian());
}

TEST_CASE("npy: vectors, and tables that keep the file alive") {
    check_values(open("vector_f4.npy").vector<float>(), io_fixtures::npy_vector_f4_shape, io_fixtures::npy_vector_f4);
    auto positions = open("v1_f4.npy").learned_positions<float>();
    CHECK(positions.is_view());
    CHECK(positions.max_positions() == 5);
    const auto rows = positions.rows(1, 2);
    for (Index c = 0; c < 3; ++c) CHECK(rows(1, c) == static_cast<float>(io_fixtures::npy_v1_f4[static_cast<std::size_t>(2 * 3 + c)]));
    auto embedding = open("big_f8.npy").token_embedding<double>();
    seqembed::IdMatrix ids(1, 1);
    ids << 1;
    const seqembed::RowMatrix<double> row = embedding.forward(ids);
    for (Index c = 0; c < 5; ++c) CHECK(row(0, c) == io_fixtures::npy_big_f8[static_cast<std::size_t>(5 + c)] * std::sqrt(5.0));
}

TEST_CASE("npy: save_npy writes numpy.save's bytes, and reads back what it wrote") {
    test_support::TempDir dir;
    const io_cases::WriterArrays arrays;
    arrays.save(dir.path());
    for (const std::string& name : io_cases::WriterArrays::names()) {
        INFO(name);
        CHECK(test_support::read_bytes(dir / name) == test_support::read_bytes(io_test::fixture(name)));
    }
    CHECK(seqembed::io::NpyFile::open(dir / "writer_f8.npy").matrix<double>().matrix() == arrays.f8);
    CHECK(seqembed::io::NpyFile::open(dir / "writer_f2.npy").matrix<Eigen::half>().matrix() == arrays.f2);
    // A column-major matrix is written as the matrix it is, in row-major order.
    Eigen::MatrixXd column_major(2, 3);
    column_major << 1, 2, 3, 4, 5, 6;
    seqembed::io::save_npy(dir / "cm.npy", column_major);
    const auto back = seqembed::io::NpyFile::open(dir / "cm.npy");
    CHECK_FALSE(back.fortran_order());
    CHECK(back.matrix<double>().matrix() == column_major);
    // In memory, the same bytes.
    CHECK(seqembed::io::serialize_npy(arrays.f4.data(), {3, 4}) == test_support::read_bytes(dir / "writer_f4.npy"));
    // Ranks 0 to 4.
    const float values[24] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};
    seqembed::io::save_npy(dir / "r4.npy", values, {1, 2, 3, 4});
    const auto r4 = seqembed::io::NpyFile::open(dir / "r4.npy").tensor<float>();
    CHECK(r4.shape() == std::vector<Index>{1, 2, 3, 4});
    CHECK(std::equal(values, values + 24, r4.data()));
    seqembed::io::save_npy(dir / "r0.npy", values, {});
    CHECK(seqembed::io::NpyFile::open(dir / "r0.npy").shape().empty());
    const auto r0 = seqembed::io::NpyFile::open(dir / "r0.npy").tensor<float>();
    CHECK(r0.shape().empty());
    CHECK(r0.size() == 1);
    CHECK(r0.scalar() == 1.0f);
    test_support::require_error<seqembed::value_error>([&] { seqembed::io::save_npy(dir / "r5.npy", values, {1, 1, 1, 1, 1}); },
                                                  {"r5.npy", "rank 5"});
    test_support::require_error<seqembed::value_error>([&] { seqembed::io::save_npy(dir / "neg.npy", values, {-1}); },
                                                  {"neg.npy", "negative dimension -1"});
}

TEST_CASE("npy: an empty Fortran-order array reads at once, however large its other extents") {
    // Found by the fuzzer: shape (44, 300000000000, 0, 4) in Fortran order walked 44 x 3e11
    // empty rows of elements before it returned nothing.
    const std::vector<Index> shape{44, 300000000000, 0, 4};
    const auto open_empty = [](const char* descr) {
        const auto bytes = std::make_shared<const std::string>(
            io_cases::npy(1, io_cases::dict(descr, "True", "(44, 300000000000, 0, 4)")));
        return seqembed::io::NpyFile::from_memory(bytes->data(), bytes->size(), "empty-fortran.npy", bytes);
    };
    const auto values = open_empty("'<f8'").tensor<double>();
    CHECK(values.size() == 0);
    CHECK(values.shape() == shape);
    const auto integers = open_empty("'<i8'").integers();
    CHECK(integers.size() == 0);
    CHECK(integers.shape() == shape);
}
