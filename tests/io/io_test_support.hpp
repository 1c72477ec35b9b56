// Helpers shared by the io tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <random>
#include <string>

#include "catch.hpp"

namespace io_test {

inline std::string fixture(const std::string& name) { return std::string(SEQEMBED_IO_FIXTURES) + "/" + name; }

inline std::string read_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// A fresh directory under the system's temporary directory, removed with the object.
class TempDir {
public:
    TempDir() {
        std::random_device seed;
        m_path = std::filesystem::temp_directory_path() /
                 ("seqembed-io-" + std::to_string(seed()) + "-" + std::to_string(seed()));
        std::filesystem::create_directories(m_path);
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(m_path, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return m_path; }
    std::filesystem::path operator/(const std::string& name) const { return m_path / name; }
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

/// Runs f, which must throw exactly E (or a subclass) whose message starts with "seqembed: "
/// and holds each of words.
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

}  // namespace io_test
