// Helpers shared by the Google Benchmark suite (seqembed_bench.cpp) and the side-by-side
// comparison with libtorch (compare.cpp): deterministic inputs and a description of the machine
// and the build, printed with every set of figures.
#pragma once

#include <seqembed/detail/optimizer_checks.hpp>
#include <seqembed/detail/simd/platform.hpp>
#include <seqembed/gradients.hpp>
#include <seqembed/types.hpp>
#include <seqembed/version.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

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

/// What the caches hold when a sample starts. Without a rule, a contender would start from
/// whatever the one before it left: a gather timed right after another gather of the same ids
/// finds most of its rows in L3, one timed after the memcpy finds none (measured: the same
/// evaluation 2.5 ms after a gather, 3.0 after the memcpy, 2-core AMD EPYC Zen 5).
enum class CacheState {
    /// Each sample starts right after an untimed call of the same contender: its own steady
    /// state, never another contender's leftovers.
    warm,
    /// Each sample starts after an untimed read of a buffer four times the last-level cache, so
    /// the tables and the memcpy's source come from memory, as in a model whose layers run
    /// between two calls of its input stage.
    cold
};

/// The size of the largest cache of CPU 0 in bytes, or 0 when unknown: the kernel's view
/// (/sys/devices/system/cpu/cpu0/cache, what lscpu prints) first, glibc's sysconf else. They
/// can disagree: on the 2-core AMD EPYC KVM guest of issue 11, sysconf reports an L3 of 384 MiB
/// (the host's, it seems), the kernel and lscpu 32 MiB.
inline std::size_t last_level_cache_bytes() {
    std::size_t largest = 0;
    for (int index = 0; index < 8; ++index) {
        std::ifstream file("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) +
                           "/size");
        std::string text;
        if (!(file >> text) || text.empty()) continue;
        std::size_t value = 0;
        std::size_t digits = 0;
        while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
            value = value * 10 + static_cast<std::size_t>(text[digits++] - '0');
        const char unit = digits < text.size() ? text[digits] : ' ';
        if (unit == 'K') value <<= 10;
        if (unit == 'M') value <<= 20;
        if (unit == 'G') value <<= 30;
        largest = std::max(largest, value);
    }
#if defined(_SC_LEVEL3_CACHE_SIZE)
    if (largest == 0) {
        const long reported = sysconf(_SC_LEVEL3_CACHE_SIZE);
        if (reported > 0) largest = static_cast<std::size_t>(reported);
    }
#endif
    return largest;
}

/// Evicts the caches by reading a buffer four times the last-level cache (at least 128 MiB).
class CacheScrubber {
public:
    CacheScrubber() : m_lines(buffer_bytes() / sizeof(std::uint64_t), 1) {}

    /// Reads a word of every 64-byte line of the buffer.
    void scrub() {
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < m_lines.size(); i += 64 / sizeof(std::uint64_t)) sum += m_lines[i];
        m_sink = sum;
    }

    /// Bytes read by a scrub.
    std::size_t bytes() const { return m_lines.size() * sizeof(std::uint64_t); }

    /// The one scrubber of the program (its buffer is allocated on first use).
    static CacheScrubber& instance() {
        static CacheScrubber scrubber;
        return scrubber;
    }

private:
    static std::size_t buffer_bytes() {
        const std::size_t reported = last_level_cache_bytes();
        const std::size_t last_level = reported > 0 ? reported : std::size_t{32} << 20;
        return std::max(std::size_t{128} << 20, 4 * last_level);
    }

    std::vector<std::uint64_t> m_lines;
    volatile std::uint64_t m_sink = 0;
};

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

/// The floor of a SparseAdam step on the rows `gradient` lists: the bytes the step reads (the
/// gradient, the weights and both moments of each listed row) and writes (the weights and the
/// moments), moved with one addition each, vectorised, the rows requested ahead as the step
/// requests them.
inline void move_sparse_adam_bytes(Eigen::Ref<seqembed::RowMatrix<float>> weights,
                                   seqembed::RowMatrix<float>& first_moment, seqembed::RowMatrix<float>& second_moment,
                                   const seqembed::RowGradient<float>& gradient) {
    using Values = Eigen::Map<Eigen::Array<float, 1, Eigen::Dynamic>>;
    using Gradient = Eigen::Map<const Eigen::Array<float, 1, Eigen::Dynamic>>;
    const std::vector<std::int64_t>& rows = gradient.rows;
    const seqembed::Index cols = weights.cols();
    constexpr std::size_t ahead = seqembed::detail::rows_requested_ahead;
    for (std::size_t k = 0; k < rows.size(); ++k) {
        if (k + ahead < rows.size()) {
            const auto next = static_cast<seqembed::Index>(rows[k + ahead]);
            seqembed::detail::request_span_start(weights.row(next).data(), cols, true);
            seqembed::detail::request_span_start(first_moment.row(next).data(), cols, true);
            seqembed::detail::request_span_start(second_moment.row(next).data(), cols, true);
        }
        const auto r = static_cast<seqembed::Index>(rows[k]);
        Values w(weights.row(r).data(), cols);
        Values m(first_moment.row(r).data(), cols);
        Values v(second_moment.row(r).data(), cols);
        v = v + m;
        m = m + w;
        w = w + Gradient(gradient.values.row(static_cast<seqembed::Index>(k)).data(), cols);
    }
}

}  // namespace seqembed_bench
