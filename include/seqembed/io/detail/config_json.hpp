/// @file io/detail/config_json.hpp
/// @brief A model's config.json: read as a JSON object, and its keys looked up under their
///        alternative names, errors naming the file and the key.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../../types.hpp"
#include "../errors.hpp"
#include "path_name.hpp"

namespace seqembed::io::detail {

/// The JSON object in file.
/// @throws file_error if it cannot be read; format_error if it is not a JSON object.
inline nlohmann::json read_json_object(const std::filesystem::path& file) {
    const std::string name = path_name(file);
    std::ifstream stream(file, std::ios::binary);
    if (!stream) seqembed::detail::fail<file_error>(name, ": cannot open it");
    std::ostringstream text;
    text << stream.rdbuf();
    nlohmann::json config = nlohmann::json::parse(text.str(), nullptr, false);
    if (config.is_discarded() || !config.is_object()) seqembed::detail::fail<format_error>(name, ": is not a JSON object");
    return config;
}

/// config.json's value at `key`, or none.
inline const nlohmann::json* find_key(const nlohmann::json& config, std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
        const auto found = config.find(key);
        if (found != config.end() && !found->is_null()) return &*found;
    }
    return nullptr;
}

/// The joined spelling of a key's alternatives, for messages.
inline std::string key_names(std::initializer_list<const char*> keys) {
    std::string names;
    for (const char* key : keys) names += (names.empty() ? "'" : " or '") + std::string(key) + "'";
    return names;
}

inline Index positive_key(const nlohmann::json& config, const std::string& file,
                          std::initializer_list<const char*> keys, bool required = true) {
    const nlohmann::json* value = find_key(config, keys);
    if (value == nullptr) {
        if (!required) return 0;
        seqembed::detail::fail<format_error>(file, ": has no key ", key_names(keys));
    }
    if (!value->is_number_integer() || value->get<std::int64_t>() <= 0)
        seqembed::detail::fail<format_error>(file, ": ", key_names(keys), " is ", value->dump(),
                                             ", not a positive integer");
    return static_cast<Index>(value->get<std::int64_t>());
}

/// A boolean key, false when absent or null.
inline bool boolean_key(const nlohmann::json& config, const std::string& file, const char* key) {
    const nlohmann::json* value = find_key(config, {key});
    if (value == nullptr) return false;
    if (!value->is_boolean())
        seqembed::detail::fail<format_error>(file, ": '", key, "' is ", value->dump(), ", not true or false");
    return value->get<bool>();
}

inline double epsilon_key(const nlohmann::json& config, const std::string& file,
                          std::initializer_list<const char*> keys, double fallback) {
    const nlohmann::json* value = find_key(config, keys);
    if (value == nullptr) return fallback;
    if (!value->is_number() || !(value->get<double>() > 0) || !std::isfinite(value->get<double>()))
        seqembed::detail::fail<format_error>(file, ": ", key_names(keys), " is ", value->dump(),
                                             ", not a finite positive number");
    return value->get<double>();
}

}  // namespace seqembed::io::detail
