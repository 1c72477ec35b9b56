// What only the io tests need beside test_support.hpp: the path of a committed fixture.
#pragma once

#include <string>

#include "test_support.hpp"

namespace io_test {

/// The path of a file under tests/io/fixtures.
inline std::string fixture(const std::string& name) { return std::string(SEQEMBED_IO_FIXTURES) + "/" + name; }

}  // namespace io_test
