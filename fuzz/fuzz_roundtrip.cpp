// libFuzzer target: load, save, load. An input that opens as a safetensors file is written
// again (its tensors of rank 0 to 4 of every dtype seqembed reads: F16, BF16, F32, F64, I8 ..
// U64, BOOL; and its metadata) and must read back with the same names, dtypes, shapes, bytes and
// metadata; writing that again must give the same bytes (the layout is deterministic). Each
// tensor but BF16 also goes through .npy and back: the same bytes, and the same values as the
// safetensors reader gives. Any mismatch aborts: a finding.
#include <algorithm>
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

/// A copy of a tensor's bytes (of any values, bool bytes other than 0 and 1 too: the writers
/// copy bytes and never load them as T).
template <typename T>
seqembed::io::NamedTensor copy_of(const seqembed::io::TensorInfo& info, const std::uint8_t* bytes,
                                  std::vector<std::shared_ptr<void>>& keep) {
    auto values = std::make_shared<std::vector<unsigned char>>(static_cast<std::size_t>(info.byte_size()));
    if (!values->empty()) std::memcpy(values->data(), bytes + info.file_offset, values->size());
    keep.push_back(values);
    return seqembed::io::NamedTensor::view(info.name, reinterpret_cast<const T*>(values->data()), info.shape);
}

seqembed::io::NamedTensor copy_of(const seqembed::io::TensorInfo& info, const std::uint8_t* bytes,
                                  std::vector<std::shared_ptr<void>>& keep) {
    using seqembed::io::Dtype;
    switch (*info.dtype()) {
        case Dtype::f16: return copy_of<Eigen::half>(info, bytes, keep);
        case Dtype::bf16: return copy_of<Eigen::bfloat16>(info, bytes, keep);
        case Dtype::f32: return copy_of<float>(info, bytes, keep);
        case Dtype::f64: return copy_of<double>(info, bytes, keep);
        case Dtype::i8: return copy_of<std::int8_t>(info, bytes, keep);
        case Dtype::i16: return copy_of<std::int16_t>(info, bytes, keep);
        case Dtype::i32: return copy_of<std::int32_t>(info, bytes, keep);
        case Dtype::i64: return copy_of<std::int64_t>(info, bytes, keep);
        case Dtype::u8: return copy_of<std::uint8_t>(info, bytes, keep);
        case Dtype::u16: return copy_of<std::uint16_t>(info, bytes, keep);
        case Dtype::u32: return copy_of<std::uint32_t>(info, bytes, keep);
        case Dtype::u64: return copy_of<std::uint64_t>(info, bytes, keep);
        case Dtype::boolean: break;
    }
    return copy_of<bool>(info, bytes, keep);
}

/// Through .npy and back: the same shape, dtype and bytes; the values read as they read from the
/// safetensors file `again` (integers: both readers throw, or both give the same int64 values).
template <typename T>
void npy_round_trip(const seqembed::io::NamedTensor& tensor, const seqembed::io::SafetensorsFile& again) {
    const auto* values = static_cast<const T*>(tensor.data());
    const std::string bytes = seqembed::io::serialize_npy(values, tensor.shape());
    const auto file = seqembed::io::NpyFile::from_memory(bytes.data(), bytes.size(), "roundtrip.npy");
    if (file.shape() != tensor.shape() || file.dtype() != tensor.dtype()) mismatch("npy shape or dtype");
    if (file.trailing_bytes() != 0 || bytes.size() - file.data_offset() != tensor.byte_size()) mismatch("npy size");
    if (tensor.byte_size() != 0 &&
        std::memcmp(bytes.data() + file.data_offset(), values, static_cast<std::size_t>(tensor.byte_size())) != 0)
        mismatch("npy bytes");
    if constexpr (seqembed::io::is_element_type_v<T>) {
        const auto back = file.tensor<T>();
        if (tensor.byte_size() != 0 && std::memcmp(back.data(), values, static_cast<std::size_t>(tensor.byte_size())) != 0)
            mismatch("npy values");
    } else {
        seqembed::io::Tensor<std::int64_t> from_npy, from_safetensors;
        bool npy_threw = false, safetensors_threw = false;
        try {
            from_npy = file.integers();
        } catch (const seqembed::error&) {
            npy_threw = true;
        }
        try {
            from_safetensors = again.integers(tensor.name());
        } catch (const seqembed::error&) {
            safetensors_threw = true;
        }
        if (npy_threw != safetensors_threw) mismatch("npy and safetensors integers: one reader threw");
        if (!npy_threw && (from_npy.shape() != from_safetensors.shape() ||
                           !std::equal(from_npy.data(), from_npy.data() + from_npy.size(), from_safetensors.data())))
            mismatch("npy and safetensors integers differ");
    }
}

void npy_round_trip(const seqembed::io::NamedTensor& tensor, const seqembed::io::SafetensorsFile& again) {
    using seqembed::io::Dtype;
    switch (tensor.dtype()) {
        case Dtype::f16: return npy_round_trip<Eigen::half>(tensor, again);
        case Dtype::bf16: return;  // .npy has no bfloat16
        case Dtype::f32: return npy_round_trip<float>(tensor, again);
        case Dtype::f64: return npy_round_trip<double>(tensor, again);
        case Dtype::i8: return npy_round_trip<std::int8_t>(tensor, again);
        case Dtype::i16: return npy_round_trip<std::int16_t>(tensor, again);
        case Dtype::i32: return npy_round_trip<std::int32_t>(tensor, again);
        case Dtype::i64: return npy_round_trip<std::int64_t>(tensor, again);
        case Dtype::u8: return npy_round_trip<std::uint8_t>(tensor, again);
        case Dtype::u16: return npy_round_trip<std::uint16_t>(tensor, again);
        case Dtype::u32: return npy_round_trip<std::uint32_t>(tensor, again);
        case Dtype::u64: return npy_round_trip<std::uint64_t>(tensor, again);
        case Dtype::boolean: return npy_round_trip<bool>(tensor, again);
    }
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
            tensors.push_back(copy_of(info, data, keep));
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
        npy_round_trip(tensor, again);
    }
    std::vector<seqembed::io::NamedTensor> reread;
    for (const auto& info : again.tensors())
        for (const auto& tensor : tensors)
            if (tensor.name() == info.name) reread.push_back(tensor);
    if (seqembed::io::serialize_safetensors(reread, again.metadata()) != first) mismatch("bytes of the second write");
    return 0;
}
