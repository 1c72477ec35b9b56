// Integer, bool and scalar tensors: token ids and attention masks saved from torch (safetensors)
// and numpy (.npy) by tests/reference/generate_io_fixtures.py, read as int64 (integers(), ids(),
// mask()) with the exact values; scalars (shape [] and ()) read back; integers never read as
// floats nor floats as integers; .npy files with bytes after the array read as numpy.load does;
// and the writers' integer files, byte for byte as numpy.save and the spec's layout.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <seqembed/io/io.hpp>

#include "bad_files.hpp"
#include "catch.hpp"
#include "fixtures/expected_values.hpp"
#include "io_test_support.hpp"
#include "writer_cases.hpp"

namespace {

using seqembed::IdMatrix;
using seqembed::Index;
using seqembed::MaskMatrix;
using seqembed::io::NpyFile;
using seqembed::io::SafetensorsFile;

const std::string batch_file = io_test::fixture("torch_batch.safetensors");

std::vector<Index> shape_of(const std::vector<long>& shape) { return {shape.begin(), shape.end()}; }

void check_integers(const seqembed::io::Tensor<std::int64_t>& tensor, const std::vector<long>& shape,
                    const std::vector<std::int64_t>& values) {
    REQUIRE(tensor.shape() == shape_of(shape));
    REQUIRE(tensor.size() == static_cast<Index>(values.size()));
    for (std::size_t i = 0; i < values.size(); ++i) {
        INFO("element " << i);
        CHECK(tensor.data()[i] == values[i]);
    }
}

/// The batch x seq matrix of a rank-2 shape, or 1 x n of a rank-1 one.
template <typename Matrix>
void check_matrix(const Matrix& matrix, const std::vector<long>& shape, const std::vector<std::int64_t>& values) {
    REQUIRE(matrix.rows() == (shape.size() == 2 ? shape[0] : 1));
    REQUIRE(matrix.cols() == shape.back());
    for (Index i = 0; i < matrix.size(); ++i) {
        INFO("element " << i);
        CHECK(static_cast<std::int64_t>(matrix.data()[i]) == values[static_cast<std::size_t>(i)]);
    }
}

NpyFile npy(const std::string& name) { return NpyFile::open(io_test::fixture(name)); }

/// A one-tensor safetensors file in memory.
std::string one_tensor(const std::string& dtype, const std::string& shape, const std::string& data) {
    return io_cases::st("{" + io_cases::tensor("t", dtype, shape, 0, data.size()) + "}") + data;
}

}  // namespace

TEST_CASE("integers: a torch batch's int64 input_ids, attention_mask and position_ids") {
    const auto file = SafetensorsFile::open(batch_file);
    CHECK(file.info("input_ids").dtype() == seqembed::io::Dtype::i64);
    CHECK(seqembed::io::is_integer(*file.info("mask_bool").dtype()));
    CHECK_FALSE(seqembed::io::is_integer(*file.info("logit_scale").dtype()));

    const IdMatrix ids = file.ids("input_ids");
    check_matrix(ids, io_fixtures::batch_input_ids_shape, io_fixtures::batch_input_ids);
    // Every forward takes them as they are.
    const seqembed::TokenIds view(ids);
    CHECK(view(1, 3) == 2017);
    // The int64 tensor itself is a view of the mapping.
    const auto tensor = file.integers("input_ids");
    CHECK(tensor.is_view());
    CHECK(tensor.data() == reinterpret_cast<const std::int64_t*>(file.bytes().data() + file.info("input_ids").file_offset));
    CHECK(tensor.matrix() == ids);

    const MaskMatrix mask = file.mask("attention_mask");
    check_matrix(mask, io_fixtures::batch_attention_mask_shape, io_fixtures::batch_attention_mask);
    check_matrix(file.ids("position_ids"), io_fixtures::batch_position_ids_shape, io_fixtures::batch_position_ids);
    // I32 token_type_ids, widened.
    check_matrix(file.ids("token_type_ids"), io_fixtures::batch_token_type_ids_shape, io_fixtures::batch_token_type_ids);
    CHECK_FALSE(file.integers("token_type_ids").is_view());
}

TEST_CASE("integers: uint8 and bool masks read as 0/1, every other width widened exactly") {
    const auto file = SafetensorsFile::open(batch_file);
    check_matrix(file.mask("mask_u8"), io_fixtures::batch_mask_u8_shape, io_fixtures::batch_mask_u8);
    check_matrix(file.mask("mask_bool"), io_fixtures::batch_mask_bool_shape, io_fixtures::batch_mask_bool);
    check_integers(file.integers("mask_bool"), io_fixtures::batch_mask_bool_shape, io_fixtures::batch_mask_bool);
    check_integers(file.integers("wide_i64"), io_fixtures::batch_wide_i64_shape, io_fixtures::batch_wide_i64);
    CHECK(file.integers("wide_i64").data()[0] == std::numeric_limits<std::int64_t>::min());
    check_integers(file.integers("small_i8"), io_fixtures::batch_small_i8_shape, io_fixtures::batch_small_i8);
    check_integers(file.integers("small_i16"), io_fixtures::batch_small_i16_shape, io_fixtures::batch_small_i16);
    // Rank 1 is one sequence: ids() gives 1 x n; integers() keeps the shape.
    const IdMatrix vector_ids = file.ids("ids_vector");
    CHECK(vector_ids.rows() == 1);
    check_matrix(vector_ids, io_fixtures::batch_ids_vector_shape, io_fixtures::batch_ids_vector);
    check_integers(file.integers("ids_vector"), io_fixtures::batch_ids_vector_shape, io_fixtures::batch_ids_vector);
    CHECK(file.integers("ids_vector").vector()(4) == 102);
    // Rank 3 through integers(); ids() and mask() refuse it, naming what they read.
    check_integers(file.integers("ids_rank3"), io_fixtures::batch_ids_rank3_shape, io_fixtures::batch_ids_rank3);
    test_support::require_error<seqembed::shape_error>([&] { (void)file.ids("ids_rank3"); },
                                                  {"torch_batch.safetensors", "tensor 'ids_rank3'", "has rank 3",
                                                   "SafetensorsFile::ids() reads rank 2 (batch x seq) or rank 1",
                                                   "integers()"});

    const auto unsigned_file = SafetensorsFile::open(io_test::fixture("unsigned.safetensors"));
    check_integers(unsigned_file.integers("u16"), io_fixtures::unsigned_u16_shape, io_fixtures::unsigned_u16);
    check_integers(unsigned_file.integers("u32"), io_fixtures::unsigned_u32_shape, io_fixtures::unsigned_u32);
    check_integers(unsigned_file.integers("u64"), io_fixtures::unsigned_u64_shape, io_fixtures::unsigned_u64);
}

TEST_CASE("integers: scalars (rank 0) read with shape {} and one value") {
    const auto file = SafetensorsFile::open(batch_file);
    const auto scale = file.tensor<float>("logit_scale");
    CHECK(scale.shape().empty());
    CHECK(scale.rank() == 0);
    CHECK(scale.size() == 1);
    CHECK(scale.is_view());
    CHECK(scale.scalar() == static_cast<float>(io_fixtures::batch_logit_scale[0]));
    CHECK(file.tensor<double>("logit_scale").scalar() == io_fixtures::batch_logit_scale[0]);
    CHECK(file.tensor<double>("temperature").scalar() == io_fixtures::batch_temperature[0]);
    const auto step = file.integers("step");
    CHECK(step.shape().empty());
    CHECK(step.size() == 1);
    CHECK(step.scalar() == io_fixtures::batch_step[0]);
    CHECK(file.integers("flag").scalar() == 1);
    // A scalar is no vector or matrix, and a vector is no scalar.
    test_support::require_error<seqembed::shape_error>([&] { (void)file.matrix<float>("logit_scale"); },
                                                  {"tensor 'logit_scale'", "has rank 0", "a matrix needs rank 2"});
    test_support::require_error<seqembed::shape_error>([&] { (void)file.integers("ids_vector").scalar(); },
                                                  {"tensor 'ids_vector'", "has rank 1", "a scalar needs rank 0"});
    test_support::require_error<seqembed::shape_error>([&] { (void)file.ids("step"); },
                                                  {"tensor 'step'", "has rank 0", "SafetensorsFile::ids()"});
    // A default Tensor has no values.
    const seqembed::io::Tensor<float> empty;
    CHECK(empty.size() == 0);
    CHECK(empty.data() == nullptr);
    CHECK_THROWS_AS(empty.scalar(), seqembed::shape_error);
}

TEST_CASE("integers: never read as floats, and floats never read as ids") {
    const auto file = SafetensorsFile::open(batch_file);
    test_support::require_error<seqembed::format_error>(
        [&] { (void)file.matrix<float>("input_ids"); },
        {"torch_batch.safetensors: tensor 'input_ids'", "holds integers (I64), not floating-point values",
         "SafetensorsFile::integers(), ids() or mask()"});
    test_support::require_error<seqembed::format_error>([&] { (void)file.tensor<double>("mask_bool"); },
                                                   {"tensor 'mask_bool'", "holds integers (BOOL)"});
    test_support::require_error<seqembed::format_error>([&] { (void)file.token_embedding<float>("input_ids"); },
                                                   {"tensor 'input_ids'", "holds integers (I64)"});
    test_support::require_error<seqembed::format_error>(
        [&] { (void)file.ids("logit_scale"); },
        {"torch_batch.safetensors: tensor 'logit_scale'", "holds floating-point values (F32), not integers",
         "SafetensorsFile::ids() reads", "tensor<T>()"});
    test_support::require_error<seqembed::format_error>([&] { (void)file.mask("temperature"); },
                                                   {"tensor 'temperature'", "(F64)", "SafetensorsFile::mask()"});
    test_support::require_error<seqembed::format_error>([&] { (void)file.integers("temperature"); },
                                                   {"tensor 'temperature'", "SafetensorsFile::integers()"});
    // A mask holds 0 and 1 only.
    test_support::require_error<seqembed::value_error>([&] { (void)file.mask("input_ids"); },
                                                  {"tensor 'input_ids'", "the mask value 101 at (0, 0)",
                                                   "is not 0 (padding) or 1 (a token)"});

    const auto ids = npy("ids_i8.npy");
    test_support::require_error<seqembed::format_error>(
        [&] { (void)ids.matrix<float>(); },
        {"ids_i8.npy: holds integers ('<i8'), not floating-point values", "NpyFile::integers(), ids() or mask()"});
    test_support::require_error<seqembed::format_error>([&] { (void)ids.learned_positions<float>(); },
                                                   {"ids_i8.npy", "holds integers"});
    test_support::require_error<seqembed::format_error>(
        [&] { (void)npy("v1_f4.npy").ids(); },
        {"v1_f4.npy: holds floating-point values ('<f4'), not integers", "NpyFile::ids() reads", "tensor<T>()"});
    test_support::require_error<seqembed::format_error>([&] { (void)npy("scalar_f4.npy").integers(); },
                                                   {"scalar_f4.npy", "NpyFile::integers()"});
}

TEST_CASE("integers: a U64 above 2^63 - 1 is an error naming the tensor and the value, never a wrap") {
    const auto file = SafetensorsFile::open(io_test::fixture("unsigned.safetensors"));
    test_support::require_error<seqembed::value_error>(
        [&] { (void)file.integers("u64_above_int64"); },
        {"unsigned.safetensors: tensor 'u64_above_int64'", "the U64 value 18446744073709551615 at (1, 1)",
         "above 9223372036854775807, the largest int64"});
    test_support::require_error<seqembed::value_error>([&] { (void)file.ids("u64_above_int64"); },
                                                  {"tensor 'u64_above_int64'", "18446744073709551615"});
    test_support::require_error<seqembed::value_error>(
        [&] { (void)npy("u8_above_int64.npy").ids(); },
        {"u8_above_int64.npy", "the '<u8' value 9223372036854775808 at (1, 0)", "the largest int64"});
}

TEST_CASE("integers: .npy ids and masks as numpy.save writes them") {
    const auto ids = npy("ids_i8.npy");
    CHECK(ids.dtype() == seqembed::io::Dtype::i64);
    CHECK(ids.integers().is_view());
    check_matrix(ids.ids(), io_fixtures::npy_ids_i8_shape, io_fixtures::npy_ids_i8);
    check_matrix(npy("ids_i4.npy").ids(), io_fixtures::npy_ids_i4_shape, io_fixtures::npy_ids_i4);
    check_matrix(npy("ids_vector_i8.npy").ids(), io_fixtures::npy_ids_vector_i8_shape, io_fixtures::npy_ids_vector_i8);
    CHECK(npy("mask_u1.npy").descr() == "|u1");
    CHECK(npy("mask_b1.npy").descr() == "|b1");
    check_matrix(npy("mask_u1.npy").mask(), io_fixtures::npy_mask_u1_shape, io_fixtures::npy_mask_u1);
    check_matrix(npy("mask_b1.npy").mask(), io_fixtures::npy_mask_b1_shape, io_fixtures::npy_mask_b1);
    check_matrix(npy("mask_i8.npy").mask(), io_fixtures::npy_mask_i8_shape, io_fixtures::npy_mask_i8);
    check_integers(npy("ints_i1.npy").integers(), io_fixtures::npy_ints_i1_shape, io_fixtures::npy_ints_i1);
    check_integers(npy("ints_i2.npy").integers(), io_fixtures::npy_ints_i2_shape, io_fixtures::npy_ints_i2);
    check_integers(npy("ints_u2.npy").integers(), io_fixtures::npy_ints_u2_shape, io_fixtures::npy_ints_u2);
    check_integers(npy("ints_u4.npy").integers(), io_fixtures::npy_ints_u4_shape, io_fixtures::npy_ints_u4);
    check_integers(npy("ints_u8.npy").integers(), io_fixtures::npy_ints_u8_shape, io_fixtures::npy_ints_u8);
}

TEST_CASE("integers: big-endian and Fortran-order .npy integers") {
    const auto big = npy("big_i8.npy");
    CHECK(big.big_endian());
    CHECK_FALSE(big.integers().is_view());
    check_integers(big.integers(), io_fixtures::npy_big_i8_shape, io_fixtures::npy_big_i8);
    check_matrix(big.ids(), io_fixtures::npy_big_i8_shape, io_fixtures::npy_big_i8);
    check_integers(npy("big_u4.npy").integers(), io_fixtures::npy_big_u4_shape, io_fixtures::npy_big_u4);
    const auto fortran = npy("fortran_i4.npy");
    CHECK(fortran.fortran_order());
    check_integers(fortran.integers(), io_fixtures::npy_fortran_i4_shape, io_fixtures::npy_fortran_i4);
    check_matrix(fortran.ids(), io_fixtures::npy_fortran_i4_shape, io_fixtures::npy_fortran_i4);
    // One-byte dtypes have no byte order: numpy writes '|', and '<' or '>' mean the same.
    std::string bytes = test_support::read_bytes(io_test::fixture("mask_u1.npy"));
    bytes.replace(bytes.find("'|u1'"), 5, "'>u1'");
    const auto swapped = NpyFile::from_memory(bytes.data(), bytes.size(), "mask_big_u1.npy");
    CHECK_FALSE(swapped.big_endian());
    CHECK(swapped.mask() == npy("mask_u1.npy").mask());
}

TEST_CASE("integers: .npy scalars (shape ()) read with shape {} and one value") {
    const auto i8 = npy("scalar_i8.npy").integers();
    CHECK(i8.shape().empty());
    CHECK(i8.size() == 1);
    CHECK(i8.scalar() == io_fixtures::npy_scalar_i8[0]);
    CHECK(npy("scalar_b1.npy").integers().scalar() == 1);
    const auto f4 = npy("scalar_f4.npy").tensor<float>();
    CHECK(f4.shape().empty());
    CHECK(f4.size() == 1);
    CHECK(f4.scalar() == static_cast<float>(io_fixtures::npy_scalar_f4[0]));
    CHECK(npy("scalar_f4.npy").tensor<double>().scalar() == io_fixtures::npy_scalar_f4[0]);
    CHECK(npy("scalar_f8.npy").tensor<double>().scalar() == io_fixtures::npy_scalar_f8[0]);
}

TEST_CASE("integers: two arrays np.save'd into one file read as numpy.load does: the first") {
    const auto file = npy("two_arrays.npy");
    CHECK(file.trailing_bytes() == io_fixtures::npy_two_arrays_trailing_bytes);
    check_matrix(file.ids(), io_fixtures::npy_two_arrays_shape, io_fixtures::npy_two_arrays);
    CHECK(npy("ids_i8.npy").trailing_bytes() == 0);
}

TEST_CASE("integers: misaligned I64 bytes are copied, never read through a cast pointer") {
    const std::string bytes = test_support::read_bytes(batch_file);
    const std::string shifted = " " + bytes;
    const auto odd = SafetensorsFile::from_memory(shifted.data() + 1, bytes.size(), "odd");
    const auto ids = odd.integers("input_ids");
    CHECK_FALSE(ids.is_view());
    check_integers(ids, io_fixtures::batch_input_ids_shape, io_fixtures::batch_input_ids);
    CHECK(odd.ids("input_ids") == SafetensorsFile::open(batch_file).ids("input_ids"));
    CHECK(odd.integers("step").scalar() == 1234);
}

TEST_CASE("integers: a bool byte other than 0 and 1, a mask value other than 0 and 1") {
    const std::string bool_bytes = one_tensor("BOOL", "[2]", std::string("\x01\x02", 2));
    const auto bools = SafetensorsFile::from_memory(bool_bytes.data(), bool_bytes.size(), "bools.safetensors");
    test_support::require_error<seqembed::format_error>([&] { (void)bools.integers("t"); },
                                                   {"bools.safetensors: tensor 't'",
                                                    "the bool at (1) is the byte 2, not 0 (false) or 1 (true)"});
    test_support::require_error<seqembed::format_error>([&] { (void)bools.mask("t"); }, {"tensor 't'", "the byte 2"});

    std::string two(16, '\0');
    two[0] = 1;
    two[8] = 2;
    const std::string mask_bytes = one_tensor("I64", "[1,2]", two);
    const auto mask = SafetensorsFile::from_memory(mask_bytes.data(), mask_bytes.size(), "mask.safetensors");
    CHECK(mask.ids("t")(0, 1) == 2);
    test_support::require_error<seqembed::value_error>([&] { (void)mask.mask("t"); },
                                                  {"mask.safetensors: tensor 't'", "the mask value 2 at (0, 1)"});

    const std::string npy_bool = io_cases::npy(1, io_cases::dict("'|b1'", "False", "(2,)")) + std::string("\x00\x03", 2);
    const auto npy_file = NpyFile::from_memory(npy_bool.data(), npy_bool.size(), "mask.npy");
    test_support::require_error<seqembed::format_error>([&] { (void)npy_file.mask(); },
                                                   {"mask.npy: the bool at (1) is the byte 3"});
    // A big-endian U64 above int64's range is named with its value, byte-swapped.
    std::string big(8, '\0');
    big[0] = '\x80';
    const std::string npy_big = io_cases::npy(1, io_cases::dict("'>u8'", "False", "(1,)")) + big;
    const auto big_file = NpyFile::from_memory(npy_big.data(), npy_big.size(), "big.npy");
    test_support::require_error<seqembed::value_error>([&] { (void)big_file.integers(); },
                                                  {"big.npy: the '>u8' value 9223372036854775808 at (0)"});
}

TEST_CASE("integers: the writers store ids, masks and scalars as numpy.save and the spec's layout do") {
    test_support::TempDir dir;
    const io_cases::WriterIntegers tensors;
    seqembed::io::save_safetensors(dir / "writer_integers.safetensors", tensors.named());
    CHECK(test_support::read_bytes(dir / "writer_integers.safetensors") ==
          test_support::read_bytes(io_test::fixture("writer_integers.safetensors")));
    const auto file = SafetensorsFile::open(dir / "writer_integers.safetensors");
    std::vector<std::string> dtypes;
    for (const auto& t : file.tensors()) {
        dtypes.push_back(t.dtype_name);
        CHECK(t.file_offset % seqembed::io::dtype_size(*t.dtype()) == 0);
    }
    CHECK(dtypes == std::vector<std::string>{"I64", "I64", "F32", "I32", "U8", "BOOL"});
    CHECK(file.ids("input_ids") == tensors.input_ids);
    CHECK(file.mask("attention_mask") == tensors.mask_u8);
    CHECK(file.mask("mask_u8") == tensors.mask_u8);
    CHECK(file.ids("token_type_ids") == (IdMatrix(1, 3) << 0, 0, 1).finished());
    CHECK(file.integers("step").scalar() == -7);
    CHECK(file.tensor<float>("scale").scalar() == 0.125f);
    // Load, save, load: the same bytes, integers held as the int64 views they were read as.
    seqembed::io::save_safetensors(dir / "again.safetensors",
                                   {{"input_ids", file.integers("input_ids")},
                                    {"attention_mask", file.mask("attention_mask").cast<bool>()},
                                    {"mask_u8", file.mask("mask_u8")},
                                    {"token_type_ids", file.ids("token_type_ids").cast<std::int32_t>().row(0)},
                                    {"step", file.integers("step")},
                                    {"scale", file.tensor<float>("scale")}});
    const auto again = SafetensorsFile::open(dir / "again.safetensors");
    CHECK(again.info("token_type_ids").shape == std::vector<std::int64_t>{1, 3});  // an Eigen row: rank 2
    CHECK(again.ids("input_ids") == tensors.input_ids);
    CHECK(again.mask("attention_mask") == tensors.mask_u8);
    CHECK(again.integers("step").scalar() == -7);

    const io_cases::WriterArrays arrays;
    arrays.save(dir.path());
    for (const std::string& name : io_cases::WriterArrays::names()) {
        INFO(name);
        CHECK(test_support::read_bytes(dir / name) == test_support::read_bytes(io_test::fixture(name)));
    }
    CHECK(NpyFile::open(dir / "writer_ids_i8.npy").ids() == arrays.ids_i8);
    CHECK(NpyFile::open(dir / "writer_ids_i4.npy").ids() == (IdMatrix(1, 3) << 101, -2, 2147483647).finished());
    CHECK(NpyFile::open(dir / "writer_mask_u1.npy").mask() == arrays.mask_u1);
    CHECK(NpyFile::open(dir / "writer_mask_b1.npy").mask() == arrays.mask_u1);
    CHECK(NpyFile::open(dir / "writer_scalar_i8.npy").integers().scalar() == -7);
    CHECK(NpyFile::open(dir / "writer_scalar_f8.npy").tensor<double>().scalar() == 0.1);
}
