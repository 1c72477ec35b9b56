// Every file case of shared/docs/bad-inputs.md (items 11 to 31): the exception type, and a
// message that names the file, the tensor where there is one, and the problem.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

#include <sys/resource.h>

#include <seqembed/io/io.hpp>

#include "bad_files.hpp"
#include "catch.hpp"
#include "io_test_support.hpp"

namespace {

using io_cases::BadFile;
using io_cases::Expect;

template <typename E>
void check_case(const BadFile& c) {
    INFO("case " << c.label);
    bool threw = false;
    try {
        if (c.npy) {
            const auto file = seqembed::io::NpyFile::from_memory(c.bytes.data(), c.bytes.size(), c.label, nullptr, c.options);
            REQUIRE(!c.read.empty());
            (void)file.tensor<float>();
        } else {
            const auto file = seqembed::io::SafetensorsFile::from_memory(c.bytes.data(), c.bytes.size(), c.label,
                                                                         nullptr, c.options);
            REQUIRE(!c.read.empty());  // opening must have thrown otherwise
            (void)file.tensor<float>(c.read);
        }
    } catch (const E& error) {
        threw = true;
        const std::string message = error.what();
        INFO("message: " << message);
        CHECK(message.rfind("seqembed: " + c.label + ": ", 0) == 0);
        for (const std::string& word : c.words) CHECK(message.find(word) != std::string::npos);
    }
    CHECK(threw);
}

void check_item(int item) {
    int count = 0;
    for (const BadFile& c : io_cases::bad_files()) {
        if (c.item != item) continue;
        ++count;
        switch (c.expect) {
            case Expect::format: check_case<seqembed::format_error>(c); break;
            case Expect::index: check_case<seqembed::index_error>(c); break;
            case Expect::value: check_case<seqembed::value_error>(c); break;
            case Expect::shape: check_case<seqembed::shape_error>(c); break;
        }
    }
    CHECK(count > 0);
}

}  // namespace

TEST_CASE("bad input 11: a safetensors file shorter than 8 bytes, empty included") { check_item(11); }
TEST_CASE("bad input 12: a header size past the file, overflowing 8 + N, or above the cap") { check_item(12); }
TEST_CASE("bad input 13: an empty or blank header, not UTF-8, not JSON, not an object") { check_item(13); }
TEST_CASE("bad input 14: a header padded with NUL bytes") { check_item(14); }
TEST_CASE("bad input 15: unknown, miscased and unsupported dtypes") { check_item(15); }
TEST_CASE("bad input 16: missing fields, bad shapes, bad data_offsets") { check_item(16); }
TEST_CASE("bad input 17: offsets with gaps, overlaps, past the buffer, extra bytes") { check_item(17); }
TEST_CASE("bad input 18: sizes that disagree with shape x dtype, overflowing products") { check_item(18); }
TEST_CASE("bad input 19: duplicate names, metadata that is not strings") { check_item(19); }
TEST_CASE("bad input 20: a requested tensor that is not there lists the names that are") { check_item(20); }
TEST_CASE("bad input 21: deep nesting and millions of entries stop early") { check_item(21); }

TEST_CASE("bad input 22: misaligned data in a valid file loads correctly, copied") {
    // The fixture's header is 5 bytes past a multiple of 8: its F32 and F64 data are misaligned
    // in the (page-aligned) mapping.
    const auto file = seqembed::io::SafetensorsFile::open(io_test::fixture("misaligned.safetensors"));
    REQUIRE(file.header_size() % 8 == 5);
    const auto w = file.matrix<float>("w");
    CHECK_FALSE(w.is_view());
    REQUIRE(w.shape() == std::vector<seqembed::Index>{3, 5});
    for (seqembed::Index i = 0; i < 15; ++i) CHECK(w.data()[i] == static_cast<float>(i) * 0.25f - 1.5f);
    const auto v = file.vector<double>("v");
    CHECK_FALSE(v.is_view());
    CHECK(v.data()[0] == 1.0 / 3.0);
    CHECK(v.data()[2] == 1e300);
    CHECK(std::signbit(v.data()[3]));

    // An aligned file at an odd address: the same values, copied.
    const std::string bytes = test_support::read_bytes(io_test::fixture("writer_reference.safetensors"));
    std::string shifted = " " + bytes;
    const auto odd = seqembed::io::SafetensorsFile::from_memory(shifted.data() + 1, bytes.size(), "odd");
    const auto aligned = seqembed::io::SafetensorsFile::from_memory(bytes.data(), bytes.size(), "aligned");
    const auto a = aligned.matrix<float>("b.weight");
    const auto b = odd.matrix<float>("b.weight");
    CHECK(reinterpret_cast<std::uintptr_t>(odd.bytes().data() + odd.info("b.weight").file_offset) % 4 != 0);
    CHECK_FALSE(b.is_view());
    CHECK(a.matrix() == b.matrix());
    const auto half = odd.vector<Eigen::half>("d.gamma");
    CHECK_FALSE(half.is_view());
    CHECK(half.vector() == aligned.vector<Eigen::half>("d.gamma").vector());
}

TEST_CASE("bad input 23: a .npy file shorter than 10 bytes, a wrong magic, another version") { check_item(23); }
TEST_CASE("bad input 24: a .npy header length the file does not back") { check_item(24); }
TEST_CASE("bad input 25: unparsable .npy dicts, missing or extra keys") { check_item(25); }
TEST_CASE("bad input 26: .npy shapes that are lists, floats, negative, True, or overflow") { check_item(26); }

TEST_CASE("bad input 27: fortran_order not a bool, True honoured, not transposed") {
    check_item(27);
    // numpy.save of np.asfortranarray(a): the loaded matrix is a, not its transpose.
    const auto file = seqembed::io::NpyFile::open(io_test::fixture("fortran_f4.npy"));
    CHECK(file.fortran_order());
    const auto m = file.matrix<float>();
    REQUIRE(m.shape() == std::vector<seqembed::Index>{3, 4});
}

TEST_CASE("bad input 28: descr values seqembed does not read, big-endian byte-swapped") {
    check_item(28);
    const auto file = seqembed::io::NpyFile::open(io_test::fixture("big_f4.npy"));
    CHECK(file.big_endian());
    CHECK_FALSE(file.matrix<float>().is_view());
}

TEST_CASE("bad input 29: truncated .npy data is refused, and bytes after the array are ignored as numpy.load ignores them") {
    check_item(29);
    // What repeated np.save calls into one file leave: the first array is read, the rest ignored.
    const std::string bytes = io_cases::npy(1, io_cases::dict("'<f4'", "False", "(2, 3)"), 30);
    const auto file = seqembed::io::NpyFile::from_memory(bytes.data(), bytes.size(), "extra-data.npy");
    CHECK(file.trailing_bytes() == 6);
    const auto m = file.matrix<float>();
    CHECK(m.shape() == std::vector<seqembed::Index>{2, 3});
    CHECK(m.matrix().isZero());
}

TEST_CASE("bad input 30: a write that fails half-way leaves no partial file under the target name") {
    test_support::TempDir dir;
    seqembed::RowMatrix<float> big = seqembed::RowMatrix<float>::Constant(512, 512, 1.5f);  // 1 MiB
    const auto target = dir / "model.safetensors";
    const auto npy_target = dir / "table.npy";

    SECTION("a directory that does not exist") {
        test_support::require_error<seqembed::file_error>(
            [&] { seqembed::io::save_safetensors(dir / "missing" / "model.safetensors", {{"w", big}}); },
            {"missing/model.safetensors", "cannot create a file beside it", "No such file or directory"});
        test_support::require_error<seqembed::file_error>(
            [&] { seqembed::io::save_npy(dir / "missing" / "t.npy", big); },
            {"missing/t.npy", "cannot create a file beside it"});
        CHECK(dir.files().empty());
    }
    SECTION("a target that is a directory") {
        std::filesystem::create_directory(target);
        test_support::require_error<seqembed::file_error>([&] { seqembed::io::save_safetensors(target, {{"w", big}}); },
                                                     {"model.safetensors", "cannot rename"});
        CHECK(dir.files() == std::vector<std::string>{"model.safetensors"});
        CHECK(std::filesystem::is_directory(target));
    }
    SECTION("a full disk half-way through (a file size limit stands in for it)") {
        // An earlier version of each file must survive the failed writes whole.
        seqembed::io::save_safetensors(target, {{"old", seqembed::RowMatrix<float>::Ones(2, 2)}});
        seqembed::io::save_npy(npy_target, seqembed::RowMatrix<double>::Ones(2, 2));
        const std::string old_st = test_support::read_bytes(target);
        const std::string old_npy = test_support::read_bytes(npy_target);

        rlimit saved{};
        REQUIRE(getrlimit(RLIMIT_FSIZE, &saved) == 0);
        void (*previous)(int) = std::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG
        rlimit limited = saved;
        limited.rlim_cur = 64 * 1024;
        REQUIRE(setrlimit(RLIMIT_FSIZE, &limited) == 0);
        bool st_threw = false, npy_threw = false;
        std::string st_message, npy_message;
        try {
            seqembed::io::save_safetensors(target, {{"w", big}});
        } catch (const seqembed::file_error& e) {
            st_threw = true;
            st_message = e.what();
        }
        try {
            seqembed::io::save_npy(npy_target, big);
        } catch (const seqembed::file_error& e) {
            npy_threw = true;
            npy_message = e.what();
        }
        REQUIRE(setrlimit(RLIMIT_FSIZE, &saved) == 0);
        std::signal(SIGXFSZ, previous);

        CHECK(st_threw);
        CHECK(st_message.find("model.safetensors: cannot write it") != std::string::npos);
        CHECK(npy_threw);
        CHECK(npy_message.find("table.npy: cannot write it") != std::string::npos);
        CHECK(test_support::read_bytes(target) == old_st);
        CHECK(test_support::read_bytes(npy_target) == old_npy);
        std::vector<std::string> files = dir.files();
        std::sort(files.begin(), files.end());
        CHECK(files == std::vector<std::string>{"model.safetensors", "table.npy"});  // no temporaries left
    }
}

TEST_CASE("bad input 31: names that would duplicate a tensor are refused before anything is written") {
    test_support::TempDir dir;
    const seqembed::RowMatrix<float> m = seqembed::RowMatrix<float>::Ones(2, 2);
    const auto target = dir / "model.safetensors";
    test_support::require_error<seqembed::value_error>(
        [&] { seqembed::io::save_safetensors(target, {{"w", m}, {"b", m}, {"w", m.cast<double>()}}); },
        {"model.safetensors", "cannot save two tensors named 'w'"});
    test_support::require_error<seqembed::value_error>(
        [&] { seqembed::io::save_safetensors(target, {{"__metadata__", m}}); },
        {"model.safetensors", "tensor named '__metadata__'", "reserves"});
    test_support::require_error<seqembed::value_error>(
        [&] { seqembed::io::save_safetensors(target, {{std::string("bad\xff", 4), m}}); },
        {"model.safetensors", "tensor name", "not valid UTF-8"});
    test_support::require_error<seqembed::value_error>(
        [&] { seqembed::io::save_safetensors(target, {{"w", m}}, {{"k", std::string("\xc3", 1)}}); },
        {"model.safetensors", "metadata value of 'k'", "not valid UTF-8"});
    CHECK(dir.files().empty());
}

TEST_CASE("bad input: a narrowing read not asked for, a rank that does not match") {
    const auto file = seqembed::io::SafetensorsFile::open(io_test::fixture("torch_model.safetensors"));
    test_support::require_error<seqembed::value_error>([&] { (void)file.matrix<Eigen::bfloat16>("embed.weight"); },
                                                  {"torch_model.safetensors", "tensor 'embed.weight'",
                                                   "reading F32 as BF16 rounds", "allow_narrowing"});
    test_support::require_error<seqembed::value_error>([&] { (void)file.matrix<float>("embed_f64"); },
                                                  {"tensor 'embed_f64'", "reading F64 as F32 rounds"});
    test_support::require_error<seqembed::value_error>([&] { (void)file.matrix<Eigen::half>("embed_bf16"); },
                                                  {"tensor 'embed_bf16'", "reading BF16 as F16 rounds"});
    test_support::require_error<seqembed::shape_error>([&] { (void)file.matrix<float>("conv.weight"); },
                                                  {"torch_model.safetensors", "tensor 'conv.weight'",
                                                   "has rank 3 (shape [2, 3, 4]), a matrix needs rank 2",
                                                   "never reshaped"});
    test_support::require_error<seqembed::shape_error>([&] { (void)file.token_embedding<float>("norm.weight"); },
                                                  {"tensor 'norm.weight'", "has rank 1"});
    test_support::require_error<seqembed::shape_error>([&] { (void)file.vector<float>("embed.weight"); },
                                                  {"tensor 'embed.weight'", "has rank 2", "a vector needs rank 1"});
    // A scalar (shape ()) is read, with one value; it is no matrix.
    const auto scalar = seqembed::io::NpyFile::open(io_test::fixture("scalar_f8.npy"));
    CHECK(scalar.tensor<double>().scalar() == 2.5);
    test_support::require_error<seqembed::shape_error>([&] { (void)scalar.matrix<double>(); },
                                                  {"scalar_f8.npy", "has rank 0", "a matrix needs rank 2"});
    const auto rank5 = seqembed::io::NpyFile::open(io_test::fixture("rank5_f4.npy"));
    test_support::require_error<seqembed::shape_error>([&] { (void)rank5.tensor<float>(); },
                                                  {"rank5_f4.npy", "has rank 5", "ranks 0 to 4"});
    test_support::require_error<seqembed::file_error>(
        [&] { (void)seqembed::io::SafetensorsFile::open(io_test::fixture("no-such-file.safetensors")); },
        {"no-such-file.safetensors", "cannot open it", "No such file or directory"});
    test_support::require_error<seqembed::file_error>([&] { (void)seqembed::io::NpyFile::open(io_test::fixture("")); },
                                                 {"not a regular file"});
}
