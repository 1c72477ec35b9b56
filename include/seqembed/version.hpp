/// @file version.hpp
/// @brief The library's version, the single source that CMake reads too.
#pragma once

/// @brief Major version: changes break the API.
#define SEQEMBED_VERSION_MAJOR 0
/// @brief Minor version: additions that keep the API.
#define SEQEMBED_VERSION_MINOR 2
/// @brief Patch version: fixes only.
#define SEQEMBED_VERSION_PATCH 0
/// @brief The version as one comparable number, major * 10000 + minor * 100 + patch.
#define SEQEMBED_VERSION \
    (SEQEMBED_VERSION_MAJOR * 10000 + SEQEMBED_VERSION_MINOR * 100 + SEQEMBED_VERSION_PATCH)
