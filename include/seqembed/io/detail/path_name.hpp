/// @file io/detail/path_name.hpp
/// @brief A path as the UTF-8 text that error messages and file headers carry, and back.
#pragma once

#include <filesystem>
#include <string>

namespace seqembed::io::detail {

/// The path in UTF-8, as a std::string in C++17 and C++20 alike (C++20's u8string() is a
/// std::u8string).
inline std::string path_name(const std::filesystem::path& path) {
#if defined(__cpp_char8_t)
    const std::u8string text = path.u8string();
    return std::string(text.begin(), text.end());
#else
    return path.u8string();
#endif
}

/// The path that UTF-8 text (a file name read from JSON) names, on every platform.
inline std::filesystem::path path_from_utf8(const std::string& text) {
#if defined(__cpp_char8_t)
    return std::filesystem::path(std::u8string(text.begin(), text.end()));
#else
    return std::filesystem::u8path(text);
#endif
}

}  // namespace seqembed::io::detail
