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

    WriterArrays() {
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

    /// Writes the four .npy files of writer_arrays() into directory.
    void save(const std::filesystem::path& directory) const {
        seqembed::io::save_npy(directory / "writer_f4.npy", f4);
        seqembed::io::save_npy(directory / "writer_f8.npy", f8);
        seqembed::io::save_npy(directory / "writer_f2.npy", f2);
        seqembed::io::save_npy(directory / "writer_vector_f4.npy", vector_f4.data(), {7});
    }
};

}  // namespace io_cases
