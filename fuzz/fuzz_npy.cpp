// libFuzzer target: the .npy reader on arbitrary bytes. Every input must either open or throw a
// seqembed::error, and an opened array must read as every element type (narrowing allowed), as
// integers, ids and a mask, or throw a seqembed::error. Anything else is a finding.
#include <cstddef>
#include <cstdint>

#include <seqembed/io/npy.hpp>

#include "read_all.hpp"

namespace {

template <typename T>
double read_all(const seqembed::io::NpyFile& file) {
    return seqembed_fuzz::read_all<T>([&](const seqembed::io::ReadOptions& options) { return file.tensor<T>(options); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const auto file = seqembed::io::NpyFile::from_memory(data, size, "fuzz.npy");
        volatile double sink = 0;
        sink = sink + read_all<float>(file);
        sink = sink + read_all<double>(file);
        sink = sink + read_all<Eigen::bfloat16>(file);
        sink = sink + read_all<Eigen::half>(file);
        sink = sink + seqembed_fuzz::read_all<std::int64_t>(
                          [&](const seqembed::io::ReadOptions& options) { return file.integers(options); });
        sink = sink + seqembed_fuzz::read_matrix([&] { return file.ids(); });
        sink = sink + seqembed_fuzz::read_matrix([&] { return file.mask(); });
    } catch (const seqembed::error&) {
    }
    return 0;
}
