// What only the io tests need beside test_support.hpp: the path of a committed fixture, and the
// ids and model directory of a generated family fixture.
#pragma once

#include <seqembed/types.hpp>

#include <filesystem>
#include <string>

#include "test_support.hpp"

namespace io_test {

/// The path of a file under tests/io/fixtures.
inline std::string fixture(const std::string& name) { return std::string(SEQEMBED_IO_FIXTURES) + "/" + name; }

/// rows x cols token ids (or mask values) from a generated fixture's flat array.
inline seqembed::IdMatrix ids_of(const long* values, long rows, long cols) {
    seqembed::IdMatrix m(rows, cols);
    for (long k = 0; k < rows * cols; ++k) m.data()[k] = values[k];
    return m;
}

/// The model directory of a generated fixture's family, under the source tree.
template <typename Family>
std::filesystem::path model_directory(const Family& family) {
    return std::filesystem::path(SEQEMBED_SOURCE_DIR) / family.directory;
}

}  // namespace io_test
