// The tensors and arrays that tests/reference/generate_io_fixtures.py builds in writer_tensors()
// and writer_arrays(), built again here: seqembed's writers must reproduce the generator's
// files (a spec-following safetensors writer, numpy.save) byte for byte.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <seqembed/detail/simd/platform.hpp>
#include <seqembed/io/io.hpp>

namespace io_cases {

struct WriterTensors {
    seqembed::RowMatrix<float> b_weight{2, 3};
    Eigen::Matrix<double, 3, 1> a_bias;
    seqembed::RowMatrix<Eigen::bfloat16> c_table{2, 2};
    std::vector<Eigen::half> d_gamma;
    seqembed::RowMatrix<float> e_empty{0, 4};

    WriterTensors() {
        for (int i = 0; i < 6; ++i) b_weight(i / 3, i % 3) = static_cast<float>(i) * 0.5f - 1.0f;
        a_bias << 1.0 / 3.0, -2.5, 1e300;
        for (int i = 0; i < 4; ++i) c_table(i / 2, i % 2) = Eigen::bfloat16(static_cast<float>(i) / 3.0f);
        for (int i = 0; i < 5; ++i) d_gamma.push_back(Eigen::half(static_cast<float>(i) / 7.0f));
    }

    /// In an order other than the file's: the writer sorts them.
    std::vector<seqembed::io::NamedTensor> named() const {
        return {{"e.empty", e_empty},
                seqembed::io::NamedTensor::view("d.gamma", d_gamma.data(), {5}),
                {"c.table", c_table},
                {"b.weight", b_weight},
                seqembed::io::NamedTensor::view("a.bias", a_bias.data(), {3})};
    }
};

/// writer_integer_tensors() of the generator: ids, masks of three dtypes, and scalars.
struct WriterIntegers {
    seqembed::IdMatrix input_ids{2, 3};
    Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> attention_mask{2, 3};
    seqembed::MaskMatrix mask_u8{2, 3};
    std::vector<std::int32_t> token_type_ids{0, 0, 1};
    std::int64_t step = -7;
    float scale = 0.125f;

    WriterIntegers() {
        input_ids << 101, 2023, 102, 101, 102, 0;
        attention_mask = (input_ids.array() != 0).matrix();
        mask_u8 = attention_mask.cast<std::uint8_t>();
    }

    /// In an order other than the file's: the writer sorts them.
    std::vector<seqembed::io::NamedTensor> named() const {
        return {seqembed::io::NamedTensor::view("scale", &scale, {}),
                {"attention_mask", attention_mask},
                seqembed::io::NamedTensor::view("token_type_ids", token_type_ids.data(), {3}),
                {"input_ids", input_ids},
                seqembed::io::NamedTensor::view("step", &step, {}),
                {"mask_u8", mask_u8}};
    }
};

inline const std::map<std::string, std::string>& writer_metadata() {
    static const std::map<std::string, std::string> metadata{
        {"format", "pt"}, {"note", "written by seqembed, \xc3\xbcnicode \xe2\x9c\x93"}};
    return metadata;
}

struct WriterArrays {
    seqembed::RowMatrix<float> f4{3, 4};
    seqembed::RowMatrix<double> f8{2, 2};
    seqembed::RowMatrix<Eigen::half> f2{2, 5};
    std::vector<float> vector_f4;
    seqembed::IdMatrix ids_i8{2, 3};
    std::vector<std::int32_t> ids_i4{101, -2, 2147483647};
    seqembed::MaskMatrix mask_u1{2, 3};
    Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> mask_b1{2, 3};
    std::int64_t scalar_i8 = -7;
    double scalar_f8 = 0.1;

    WriterArrays() {
        ids_i8 << 101, 2023, 102, 101, 102, 0;
        mask_u1 << 1, 1, 1, 1, 1, 0;
        mask_b1 << true, true, true, true, true, false;
        for (int i = 0; i < 12; ++i) f4(i / 4, i % 4) = static_cast<float>(i) * 0.25f - 1.0f;
        f8 << 1.0 / 3.0, 2.0 / 3.0, -1e-300, 5e300;
        for (int i = 0; i < 10; ++i) f2(i / 5, i % 5) = Eigen::half(static_cast<float>(i) / 9.0f);
        // numpy.linspace(-1, 1, 7, dtype=float32): i * step + start in double, the last exact.
        // The product is rounded before the sum, as NumPy rounds it: GCC would fuse them into an
        // FMA where the target has one (AArch64), and i = 3 would give -5.6e-17 instead of 0.
        const double step = 2.0 / 6.0;
        for (int i = 0; i < 7; ++i) {
            double product = i * step;
            seqembed::detail::keep_rounded(product);
            vector_f4.push_back(static_cast<float>(i == 6 ? 1.0 : product + -1.0));
        }
    }

    /// The names of the files save() writes.
    static std::vector<std::string> names() {
        return {"writer_f4.npy",         "writer_f8.npy",       "writer_f2.npy",
                "writer_vector_f4.npy",  "writer_ids_i8.npy",   "writer_ids_i4.npy",
                "writer_mask_u1.npy",    "writer_mask_b1.npy",  "writer_scalar_i8.npy",
                "writer_scalar_f8.npy"};
    }

    /// Writes the .npy files of writer_arrays() into directory.
    void save(const std::filesystem::path& directory) const {
        seqembed::io::save_npy(directory / "writer_f4.npy", f4);
        seqembed::io::save_npy(directory / "writer_f8.npy", f8);
        seqembed::io::save_npy(directory / "writer_f2.npy", f2);
        seqembed::io::save_npy(directory / "writer_vector_f4.npy", vector_f4.data(), {7});
        seqembed::io::save_npy(directory / "writer_ids_i8.npy", ids_i8);
        seqembed::io::save_npy(directory / "writer_ids_i4.npy", ids_i4.data(), {3});
        seqembed::io::save_npy(directory / "writer_mask_u1.npy", mask_u1);
        seqembed::io::save_npy(directory / "writer_mask_b1.npy", mask_b1);
        seqembed::io::save_npy(directory / "writer_scalar_i8.npy", &scalar_i8, {});
        seqembed::io::save_npy(directory / "writer_scalar_f8.npy", &scalar_f8, {});
    }
};

}  // namespace io_cases
