// libFuzzer target: load, save, load. An input that opens as a safetensors file is written
// again (its F16, BF16, F32 and F64 tensors of rank 0 to 4, and its metadata) and must read back
// with the same names, dtypes, shapes, bytes and metadata; writing that again must give the
// same bytes (the layout is deterministic). Each rank 1 to 4 tensor of F16, F32 or F64 also
// goes through .npy and back. Any mismatch aborts: a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <seqembed/io/io.hpp>

namespace {

[[noreturn]] void mismatch(const char* what) {
    std::fprintf(stderr, "round trip mismatch: %s\n", what);
    std::abort();
}

template <typename T>
seqembed::io::NamedTensor copy_of(const seqembed::io::TensorInfo& info, const std::uint8_t* bytes,
                                  std::vector<std::shared_ptr<void>>& keep) {
    auto values = std::make_shared<std::vector<T>>(static_cast<std::size_t>(info.byte_size() / sizeof(T)));
    if (!values->empty()) std::memcpy(values->data(), bytes + info.file_offset, static_cast<std::size_t>(info.byte_size()));
    keep.push_back(values);
    return seqembed::io::NamedTensor::view(info.name, values->data(), info.shape);
}

template <typename T>
void npy_round_trip(const seqembed::io::NamedTensor& tensor) {
    const auto* values = static_cast<const T*>(tensor.data());
    const std::string bytes = seqembed::io::serialize_npy(values, tensor.shape());
    const auto file = seqembed::io::NpyFile::from_memory(bytes.data(), bytes.size(), "roundtrip.npy");
    if (file.shape() != tensor.shape() || file.dtype() != tensor.dtype()) mismatch("npy shape or dtype");
    if (tensor.shape().empty()) return;
    const auto back = file.tensor<T>();
    if (tensor.byte_size() != 0 && std::memcmp(back.data(), values, static_cast<std::size_t>(tensor.byte_size())) != 0)
        mismatch("npy values");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<seqembed::io::NamedTensor> tensors;
    std::vector<std::shared_ptr<void>> keep;
    std::map<std::string, std::string> metadata;
    try {
        seqembed::io::OpenOptions options;
        options.max_header_entries = 100000;
        const auto file = seqembed::io::SafetensorsFile::from_memory(data, size, "fuzz.safetensors", nullptr, options);
        metadata = file.metadata();
        for (const auto& info : file.tensors()) {
            if (!info.dtype() || info.shape.size() > 4) continue;
            switch (*info.dtype()) {
                case seqembed::io::Dtype::f16: tensors.push_back(copy_of<Eigen::half>(info, data, keep)); break;
                case seqembed::io::Dtype::bf16: tensors.push_back(copy_of<Eigen::bfloat16>(info, data, keep)); break;
                case seqembed::io::Dtype::f32: tensors.push_back(copy_of<float>(info, data, keep)); break;
                case seqembed::io::Dtype::f64: tensors.push_back(copy_of<double>(info, data, keep)); break;
            }
        }
    } catch (const seqembed::error&) {
        return 0;  // not a file: the reader's own target covers it
    }
    std::string first;
    try {
        first = seqembed::io::serialize_safetensors(tensors, metadata);
    } catch (const seqembed::error&) {
        mismatch("a file that was read cannot be written");
    }
    const auto again = seqembed::io::SafetensorsFile::from_memory(first.data(), first.size(), "roundtrip.safetensors");
    if (again.metadata() != metadata) mismatch("metadata");
    if (again.tensors().size() != tensors.size()) mismatch("tensor count");
    for (const auto& tensor : tensors) {
        const auto& info = again.info(tensor.name());
        if (info.dtype() != tensor.dtype() || info.shape != tensor.shape() || info.byte_size() != tensor.byte_size())
            mismatch("dtype, shape or size");
        if (tensor.byte_size() != 0 &&
            std::memcmp(first.data() + info.file_offset, tensor.data(), static_cast<std::size_t>(tensor.byte_size())) != 0)
            mismatch("values");
        if (info.file_offset % seqembed::io::dtype_size(tensor.dtype()) != 0) mismatch("alignment");
        if (tensor.dtype() == seqembed::io::Dtype::f32) npy_round_trip<float>(tensor);
        if (tensor.dtype() == seqembed::io::Dtype::f64) npy_round_trip<double>(tensor);
        if (tensor.dtype() == seqembed::io::Dtype::f16) npy_round_trip<Eigen::half>(tensor);
    }
    std::vector<seqembed::io::NamedTensor> reread;
    for (const auto& info : again.tensors())
        for (const auto& tensor : tensors)
            if (tensor.name() == info.name) reread.push_back(tensor);
    if (seqembed::io::serialize_safetensors(reread, again.metadata()) != first) mismatch("bytes of the second write");
    return 0;
}
