/// @file io/detail/checkpoint_files.hpp
/// @brief The safetensors files of a Hugging Face checkpoint directory: model.safetensors, or the
///        shards that model.safetensors.index.json maps each tensor name to (the layout of the
///        larger models, e.g. model-00001-of-00004.safetensors), each shard opened when a tensor
///        in it is first asked for.
#pragma once

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "../errors.hpp"
#include "../safetensors.hpp"
#include "config_json.hpp"
#include "path_name.hpp"

namespace seqembed::io::detail {

/// A checkpoint directory's tensors, by name.
class CheckpointFiles {
public:
    /// Opens directory/model.safetensors, or else reads directory/model.safetensors.index.json.
    /// @throws file_error if the directory has neither or a file cannot be read; format_error if
    ///         the file or the index is malformed (the index: no 'weight_map' object, or a shard
    ///         that is not a file name in the directory).
    explicit CheckpointFiles(const std::filesystem::path& directory) : m_directory(directory) {
        const std::filesystem::path single = directory / "model.safetensors";
        const std::filesystem::path index = directory / "model.safetensors.index.json";
        if (is_there(single)) {
            m_single.emplace(SafetensorsFile::open(single));
            m_source = m_single->path();
        } else if (is_there(index)) {
            m_source = path_name(index);
            read_index(index);
        } else {
            seqembed::detail::fail<file_error>(path_name(directory),
                                               ": has neither model.safetensors nor model.safetensors.index.json");
        }
    }

    /// The file that holds the tensor `name`, or null when the checkpoint has no such tensor.
    /// Opens its shard the first time: not for concurrent use (a loader uses it on one thread).
    /// @throws file_error if its shard is not there or cannot be opened; format_error if the
    ///         shard is malformed or does not hold the tensor the index places in it.
    const SafetensorsFile* find(const std::string& name) const {
        if (m_single) return m_single->contains(name) ? &*m_single : nullptr;
        const auto where = m_weight_map.find(name);
        if (where == m_weight_map.end()) return nullptr;
        const SafetensorsFile& shard = shard_file(where->second, name);
        if (!shard.contains(name))
            seqembed::detail::fail<format_error>(shard.path(), ": has no tensor '", name, "', which ", m_source,
                                                 " places in it");
        return &shard;
    }

    /// Every tensor name of the checkpoint (of model.safetensors, or of the index's weight_map),
    /// sorted.
    std::vector<std::string> names() const {
        std::vector<std::string> result;
        if (m_single) {
            for (const TensorInfo& tensor : m_single->tensors()) result.push_back(tensor.name);
            std::sort(result.begin(), result.end());
        } else {
            for (const auto& entry : m_weight_map) result.push_back(entry.first);
        }
        return result;
    }

    /// model.safetensors, or the index: what messages about a missing tensor name.
    const std::string& source() const noexcept { return m_source; }

private:
    void read_index(const std::filesystem::path& index) {
        const nlohmann::json json = read_json_object(index);
        const auto map = json.find("weight_map");
        if (map == json.end() || !map->is_object())
            seqembed::detail::fail<format_error>(m_source, ": has no object 'weight_map' (tensor name -> shard file)");
        for (const auto& [tensor, file] : map->items()) {
            if (!file.is_string())
                seqembed::detail::fail<format_error>(m_source, ": 'weight_map' maps '", tensor, "' to ", file.dump(),
                                                     ", not a file name");
            const std::string shard = file.get<std::string>();
            const std::filesystem::path shard_path = path_from_utf8(shard);
            if (shard.empty() || shard.find('\0') != std::string::npos || shard == "." || shard == ".." ||
                shard_path.has_parent_path() || shard_path.has_root_path())
                seqembed::detail::fail<format_error>(m_source, ": 'weight_map' maps '", tensor, "' to '", shard,
                                                     "', not the name of a file in the checkpoint's directory");
            m_weight_map.emplace(tensor, shard);
        }
    }

    const SafetensorsFile& shard_file(const std::string& shard, const std::string& tensor) const {
        auto opened = m_shards.find(shard);
        if (opened == m_shards.end()) {
            const std::filesystem::path path = m_directory / path_from_utf8(shard);
            if (!is_there(path))
                seqembed::detail::fail<file_error>(path_name(path), ": is not there; ", m_source, " places '", tensor,
                                                   "' in it");
            opened = m_shards.emplace(shard, SafetensorsFile::open(path)).first;
        }
        return opened->second;
    }

    /// Whether `path` names something (a link: something it points to).
    /// @throws file_error if the system cannot say (a directory without permission), or for a
    ///         link to nothing (an interrupted download leaves those in Hugging Face's cache).
    static bool is_there(const std::filesystem::path& path) {
        std::error_code error;
        const std::filesystem::file_status status = std::filesystem::status(path, error);
        if (error && error != std::errc::no_such_file_or_directory && error != std::errc::not_a_directory)
            seqembed::detail::fail<file_error>(path_name(path), ": cannot look it up: ", error.message());
        if (std::filesystem::exists(status)) return true;
        std::error_code link_error;
        if (std::filesystem::is_symlink(std::filesystem::symlink_status(path, link_error)))
            seqembed::detail::fail<file_error>(path_name(path), ": is a link to a file that is not there");
        return false;
    }

    std::filesystem::path m_directory;
    std::optional<SafetensorsFile> m_single;
    std::string m_source;
    std::map<std::string, std::string> m_weight_map;
    /// The shards opened so far (a view's Tensor keeps its mapping alive on its own).
    mutable std::map<std::string, SafetensorsFile> m_shards;
};

}  // namespace seqembed::io::detail
