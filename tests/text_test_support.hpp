// What the tokenizer tests share: a scratch directory, files written byte for byte, and the
// message of an expected seqembed error.
#pragma once

#include <seqembed/error.hpp>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <random>
#include <string>
#include <system_error>
#include <type_traits>

#include "catch.hpp"

namespace text_test {

/// A fresh directory under the system's temporary directory, removed with the object. Its name
/// is random: ctest runs test cases of one program, and the ISA suites, side by side.
class TempDir {
public:
    TempDir() {
        std::random_device seed;
        m_path = std::filesystem::temp_directory_path() /
                 ("seqembed-text-" + std::to_string(seed()) + "-" + std::to_string(seed()));
        std::filesystem::create_directories(m_path);
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(m_path, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    /// The path of name inside the directory, as a string.
    std::string operator/(const std::string& name) const { return (m_path / name).string(); }

private:
    std::filesystem::path m_path;
};

/// Writes bytes to path exactly (binary mode: no newline translation).
inline void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    REQUIRE(out.good());
}

/// The message of the Error that f throws; fails the test if f returns normally or throws
/// another seqembed error.
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

/// Requires the exact message, which begins "seqembed: " as every seqembed message does.
template <typename Error, typename F>
void require_message(F&& f, const std::string& expected) {
    const std::string message = message_of<Error>(f);
    REQUIRE(message == "seqembed: " + expected);
}

}  // namespace text_test
