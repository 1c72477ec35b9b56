// What the test programs share: a scratch directory, files read and written byte for byte, and
// the checks on the message of an expected seqembed error. Domain helpers stay beside their
// tests (io_test::fixture in io/io_test_support.hpp, golden_support.hpp, isa_support.hpp).
#pragma once

#include <seqembed/error.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <random>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include "catch.hpp"

// SEQEMBED_TEST_ASAN: defined when the program is built with AddressSanitizer (GCC says so with
// __SANITIZE_ADDRESS__, clang through __has_feature).
#if defined(__SANITIZE_ADDRESS__)
#define SEQEMBED_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SEQEMBED_TEST_ASAN 1
#endif
#endif

namespace test_support {

/// Whether a failed allocation can be observed: under AddressSanitizer a huge malloc aborts
/// unless ASAN_OPTIONS has allocator_may_return_null=1 (as the sanitize test preset sets).
inline bool huge_allocations_fail_softly() {
#ifdef SEQEMBED_TEST_ASAN
    const char* options = std::getenv("ASAN_OPTIONS");
    return options != nullptr && std::strstr(options, "allocator_may_return_null=1") != nullptr;
#else
    return true;
#endif
}

/// A fresh directory under the system's temporary directory, removed with the object. Its name
/// is random: ctest runs test cases of one program, and the ISA suites, side by side.
class TempDir {
public:
    TempDir() {
        std::random_device seed;
        m_path = std::filesystem::temp_directory_path() /
                 ("seqembed-test-" + std::to_string(seed()) + "-" + std::to_string(seed()));
        std::filesystem::create_directories(m_path);
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(m_path, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    /// The directory.
    const std::filesystem::path& path() const { return m_path; }
    /// The path of name inside the directory.
    std::filesystem::path operator/(const std::string& name) const { return m_path / name; }
    /// The path of name inside the directory, as the std::string the text readers take.
    std::string file(const std::string& name) const { return (m_path / name).string(); }
    /// The names of the files in the directory.
    std::vector<std::string> files() const {
        std::vector<std::string> names;
        for (const auto& entry : std::filesystem::directory_iterator(m_path))
            names.push_back(entry.path().filename().string());
        return names;
    }

private:
    std::filesystem::path m_path;
};

/// The bytes of a file, exactly (binary mode: no newline translation).
inline std::string read_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Writes bytes to path exactly (binary mode: no newline translation); fails the test if the
/// file cannot be written.
inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    REQUIRE(out.good());
}

/// The message of the Error (or a subclass) that f throws; fails the test if f returns normally.
/// Any other exception propagates, and Catch reports its type and message.
template <typename Error, typename F>
std::string message_of(F&& f) {
    static_assert(std::is_base_of_v<seqembed::error, Error>, "seqembed exceptions only");
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    FAIL("the expected seqembed exception was not thrown");
    return {};
}

/// Requires the Error that f throws to carry exactly "seqembed: " + expected.
template <typename Error, typename F>
void require_message(F&& f, const std::string& expected) {
    const std::string message = message_of<Error>(f);
    REQUIRE(message == "seqembed: " + expected);
}

/// Requires a message to start with "seqembed:" and to contain every part; stops the test case
/// at the first that is missing.
inline void require_parts(const std::string& message, std::initializer_list<std::string> parts) {
    INFO("message: " << message);
    REQUIRE(message.rfind("seqembed:", 0) == 0);
    for (const std::string& part : parts) {
        INFO("expected part: " << part);
        REQUIRE(message.find(part) != std::string::npos);
    }
}

/// Checks that f throws E (or a subclass) whose message starts with "seqembed: " and holds each
/// of words; a miss is reported and the test case goes on, so that one run lists every miss.
template <typename E, typename F>
void require_error(F&& f, std::initializer_list<std::string> words) {
    bool threw = false;
    try {
        f();
    } catch (const E& error) {
        threw = true;
        const std::string message = error.what();
        INFO("message: " << message);
        CHECK(message.rfind("seqembed: ", 0) == 0);
        for (const std::string& word : words) CHECK(message.find(word) != std::string::npos);
    }
    CHECK(threw);
}

}  // namespace test_support
