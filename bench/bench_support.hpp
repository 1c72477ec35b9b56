// Helpers shared by the Google Benchmark suite (seqembed_bench.cpp) and the side-by-side
// comparison with libtorch (compare.cpp): deterministic inputs and a description of the machine
// and the build, printed with every set of figures.
#pragma once

#include <seqembed/types.hpp>
#include <seqembed/version.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

// The flags the benchmark programs were compiled with: bench/CMakeLists.txt bakes in
// CMAKE_CXX_FLAGS and CMAKE_CXX_FLAGS_<BUILD_TYPE>, and the build type.
#ifndef SEQEMBED_BENCH_CXX_FLAGS
#define SEQEMBED_BENCH_CXX_FLAGS "(unknown)"
#endif
#ifndef SEQEMBED_BENCH_BUILD_TYPE
#define SEQEMBED_BENCH_BUILD_TYPE "(unknown)"
#endif

namespace seqembed_bench {

using seqembed::Index;

/// splitmix64: a cheap, well-mixed sequence, so that filling a 1 GB table takes a fraction of a
/// second (the seeded N(0, 1) initialisation would dominate the setup of the large cases).
inline std::uint64_t splitmix64(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/// Fills count values with uniform draws in [-2, 2): normal-sized numbers (no denormals, no
/// infinities), which is all the timing depends on.
template <typename Scalar>
void fill_uniform(Scalar* data, std::size_t count, std::uint64_t seed) {
    std::uint64_t state = seed;
    for (std::size_t i = 0; i < count; ++i) {
        const auto bits = splitmix64(state) >> 11;  // 53 bits
        data[i] = static_cast<Scalar>(static_cast<double>(bits) * 0x1.0p-51 - 2.0);
    }
}

/// batch x length ids drawn uniformly from [0, vocab): a random gather, as real text gives
/// (Zipf-distributed ids would hit the cache more often and flatter the kernels).
inline seqembed::IdMatrix random_ids(Index batch, Index length, Index vocab, std::uint64_t seed) {
    seqembed::IdMatrix ids(batch, length);
    std::uint64_t state = seed;
    for (Index i = 0; i < ids.size(); ++i)
        ids.data()[i] = static_cast<seqembed::TokenId>(splitmix64(state) %
                                                        static_cast<std::uint64_t>(vocab));
    return ids;
}

/// Trims spaces and tabs at both ends.
inline std::string trimmed(const std::string& text) {
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string::npos) return {};
    const auto last = text.find_last_not_of(" \t\r\n");
    return text.substr(first, last - first + 1);
}

/// The value of the first "key: value" line of a command's output, or "" (lscpu's fields).
inline std::string command_field(const char* command, const std::string& key) {
    std::string value;
#if defined(__unix__) || defined(__APPLE__)
    if (FILE* pipe = ::popen(command, "r")) {
        char line[512];
        while (std::fgets(line, sizeof line, pipe)) {
            const std::string text(line);
            const auto colon = text.find(':');
            if (colon != std::string::npos && trimmed(text.substr(0, colon)) == key) {
                value = trimmed(text.substr(colon + 1));
                break;
            }
        }
        ::pclose(pipe);
    }
#else
    (void)command;
    (void)key;
#endif
    return value;
}

/// The CPU's model name as lscpu prints it (from /proc/cpuinfo when lscpu is missing).
inline std::string cpu_model() {
    std::string model = command_field("lscpu 2>/dev/null", "Model name");
    if (model.empty()) {
        std::ifstream cpuinfo("/proc/cpuinfo");
        std::string line;
        while (std::getline(cpuinfo, line)) {
            const auto colon = line.find(':');
            if (colon != std::string::npos && trimmed(line.substr(0, colon)) == "model name") {
                model = trimmed(line.substr(colon + 1));
                break;
            }
        }
    }
    return model.empty() ? "(unknown)" : model;
}

/// A one-line summary of the caches lscpu reports, e.g. "L2 2 MiB (2 instances), L3 32 MiB".
inline std::string cache_summary() {
    std::string summary;
    for (const char* level : {"L1d cache", "L2 cache", "L3 cache"}) {
        const std::string size = command_field("lscpu 2>/dev/null", level);
        if (size.empty()) continue;
        if (!summary.empty()) summary += ", ";
        summary += std::string(level, 2) + " " + size;
    }
    return summary.empty() ? "(unknown)" : summary;
}

/// Logical CPUs (lscpu's "CPU(s)").
inline unsigned logical_cpus() { return std::max(1u, std::thread::hardware_concurrency()); }

/// seqembed's version, "major.minor.patch".
inline std::string seqembed_version() {
    return std::to_string(SEQEMBED_VERSION_MAJOR) + "." + std::to_string(SEQEMBED_VERSION_MINOR) +
           "." + std::to_string(SEQEMBED_VERSION_PATCH);
}

/// Eigen's version and the vector instruction sets its kernels use.
inline std::string eigen_summary() {
    return std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
           std::to_string(EIGEN_MINOR_VERSION) + " (" + Eigen::SimdInstructionSetsInUse() + ")";
}

/// The compiler's name and version.
inline std::string compiler() {
#if defined(__clang__)
    return std::string("clang++ ") + __clang_version__;
#elif defined(__GNUC__)
    return std::string("g++ ") + __VERSION__;
#elif defined(_MSC_VER)
    return "MSVC " + std::to_string(_MSC_VER);
#else
    return "(unknown compiler)";
#endif
}

/// The vector instruction sets the compiler was allowed to use (what -march gave).
inline std::string vector_isa() {
    std::string isa;
    auto add = [&isa](const char* name) { isa += isa.empty() ? name : std::string(" ") + name; };
#if defined(__AVX512F__)
    add("AVX-512F");
#endif
#if defined(__AVX512BW__)
    add("AVX-512BW");
#endif
#if defined(__AVX2__)
    add("AVX2");
#endif
#if defined(__FMA__)
    add("FMA");
#endif
#if defined(__AVX__)
    add("AVX");
#endif
#if defined(__SSE4_2__)
    add("SSE4.2");
#endif
#if defined(__SSE2__)
    add("SSE2");
#endif
#if defined(__ARM_NEON)
    add("NEON");
#endif
    return isa.empty() ? "(scalar)" : isa;
}

}  // namespace seqembed_bench
