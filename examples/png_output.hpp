// The PNG output the plotting examples share: RGB pixels encoded in memory by stb_image_write,
// then written to a temporary file beside the target and renamed over it, so that a failure
// never leaves a partial picture behind.
//
// It compiles stb_image_write itself: include it from one translation unit of a program (each
// example is one). STB_IMAGE_WRITE_STATIC keeps that copy private, so it cannot clash with another
// linked into the same program, and STBI_WRITE_NO_STDIO leaves the file to write_atomically.
#pragma once

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#define STBI_WRITE_NO_STDIO
#include <stb_image_write.h>  // Debian: /usr/include/stb (libstb-dev); vcpkg: include/

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace seqembed_examples {

/// width x height RGB pixels (3 bytes each, row after row) as a PNG file's bytes.
inline std::vector<std::uint8_t> encode_png(const std::vector<std::uint8_t>& pixels, int width, int height) {
    std::vector<std::uint8_t> png;
    const auto append = [](void* context, void* data, int size) {
        auto* out = static_cast<std::vector<std::uint8_t>*>(context);
        const auto* bytes = static_cast<const std::uint8_t*>(data);
        out->insert(out->end(), bytes, bytes + size);
    };
    stbi_write_png_compression_level = 9;
    if (stbi_write_png_to_func(append, &png, width, height, 3, pixels.data(), width * 3) == 0)
        throw std::runtime_error("stb_image_write could not encode the PNG (out of memory?)");
    return png;
}

/// A file that is removed when it goes out of scope, unless it was renamed.
class TemporaryFile {
public:
    explicit TemporaryFile(std::filesystem::path path) : m_path(std::move(path)) {}
    TemporaryFile(const TemporaryFile&) = delete;
    TemporaryFile& operator=(const TemporaryFile&) = delete;
    ~TemporaryFile() {
        std::error_code ignored;
        if (!m_path.empty()) std::filesystem::remove(m_path, ignored);
    }
    const std::filesystem::path& path() const { return m_path; }
    void rename_to(const std::filesystem::path& target) {
        std::filesystem::rename(m_path, target);  // replaces target atomically on POSIX
        m_path.clear();
    }

private:
    std::filesystem::path m_path;
};

/// Writes bytes to a temporary file beside target, then renames it to target.
inline void write_atomically(const std::filesystem::path& target, const std::vector<std::uint8_t>& bytes) {
    std::random_device random;
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".tmp-%08x", static_cast<unsigned>(random()));
    TemporaryFile temporary(target.string() + suffix);
    {
        std::ofstream file(temporary.path(), std::ios::binary | std::ios::trunc);
        if (!file)
            throw std::runtime_error("cannot create " + temporary.path().string() +
                                     " (does the directory exist and is it writable?)");
        file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        file.close();
        if (!file) throw std::runtime_error("cannot write " + temporary.path().string());
    }
    try {
        temporary.rename_to(target);
    } catch (const std::filesystem::filesystem_error& e) {
        throw std::runtime_error("cannot rename " + temporary.path().string() + " to " + target.string() + ": " +
                                 e.code().message());
    }
}

}  // namespace seqembed_examples
