// libFuzzer target: the safetensors reader on arbitrary bytes. Every input must either open or
// throw a seqembed::error; every tensor of an opened file must read (converted, narrowing
// allowed; as integers, ids and a mask) or throw a seqembed::error. Anything else (another
// exception, a crash, a sanitizer report, a leak) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include <seqembed/io/safetensors.hpp>

#include "read_all.hpp"

namespace {

template <typename T>
double read_all(const seqembed::io::SafetensorsFile& file, const std::string& name) {
    return seqembed_fuzz::read_all<T>([&](const seqembed::io::ReadOptions& options) { return file.tensor<T>(name, options); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        seqembed::io::OpenOptions options;
        options.max_header_entries = 100000;
        const auto file = seqembed::io::SafetensorsFile::from_memory(data, size, "fuzz.safetensors", nullptr, options);
        volatile double sink = 0;
        for (const auto& tensor : file.tensors()) {
            sink = sink + read_all<float>(file, tensor.name);
            sink = sink + read_all<double>(file, tensor.name);
            sink = sink + read_all<Eigen::bfloat16>(file, tensor.name);
            sink = sink + read_all<Eigen::half>(file, tensor.name);
            sink = sink + seqembed_fuzz::read_all<std::int64_t>(
                              [&](const seqembed::io::ReadOptions& read) { return file.integers(tensor.name, read); });
            sink = sink + seqembed_fuzz::read_matrix([&] { return file.ids(tensor.name); });
            sink = sink + seqembed_fuzz::read_matrix([&] { return file.mask(tensor.name); });
        }
        for (const auto& entry : file.metadata()) sink = sink + static_cast<double>(entry.second.size());
        try {
            (void)file.info("\x01 not a tensor");
        } catch (const seqembed::index_error&) {
        }
    } catch (const seqembed::error&) {
    }
    return 0;
}
