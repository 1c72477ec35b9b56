// Catch2 2.x's main, compiled for the target: Debian's Catch2WithMain is a prebuilt host
// library, so a cross build (the test-aarch64 preset) links this instead (tests/CMakeLists.txt).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
