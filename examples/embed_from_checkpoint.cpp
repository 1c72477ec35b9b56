// Embeds token ids with a table read from a safetensors checkpoint: the table is a view of the
// memory-mapped file (no copy), the positions are the paper's sinusoids, and the rows printed
// are InputPipeline's output.
//   embed_from_checkpoint --write-demo FILE        writes a small checkpoint to try it on
//   embed_from_checkpoint FILE TENSOR ID [ID...]   prints the pipeline's row for each id
// A BF16 or F16 table is read as it is stored (float output); F64 is read as double.
#include <seqembed/io/safetensors.hpp>
#include <seqembed/seqembed.hpp>

#include "command_line.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace {

using seqembed::Index;

int usage(const char* program) {
    std::fprintf(stderr,
                 "usage: %s --write-demo FILE\n"
                 "       %s FILE TENSOR ID [ID...]\n",
                 program, program);
    return seqembed_examples::exit_usage;
}

/// A 16 x 8 float table (row i holds i + column / 8) and its bfloat16 copy.
void write_demo(const std::string& path) {
    seqembed::RowMatrix<float> table(16, 8);
    for (Index r = 0; r < table.rows(); ++r)
        for (Index c = 0; c < table.cols(); ++c) table(r, c) = static_cast<float>(r) + static_cast<float>(c) / 8.0f;
    seqembed::io::save_safetensors(path,
                                   {{"embed.weight", table}, {"embed.weight.bf16", table.cast<Eigen::bfloat16>()}},
                                   {{"format", "pt"}, {"written_by", "embed_from_checkpoint --write-demo"}});
    std::printf("wrote %s: embed.weight (F32, 16 x 8) and embed.weight.bf16 (BF16, 16 x 8)\n", path.c_str());
}

template <typename Scalar, typename Storage>
void embed(const seqembed::io::SafetensorsFile& file, const std::string& tensor, const seqembed::IdMatrix& ids) {
    // The embedding views the mapped file and holds the mapping: `file` could go now.
    auto embedding = file.token_embedding<Scalar, Storage>(tensor);
    const Index d_model = embedding.d_model();
    std::printf("%s: %s is %lld x %lld %s, %s, scaled by sqrt(%lld)\n", file.path().c_str(), tensor.c_str(),
                static_cast<long long>(embedding.vocab_size()), static_cast<long long>(d_model),
                file.info(tensor).dtype_name.c_str(), embedding.is_view() ? "viewed in place" : "copied",
                static_cast<long long>(d_model));
    seqembed::InputPipeline<Scalar, seqembed::SinusoidalPositionalEncoding<Scalar>,
                            seqembed::TokenEmbedding<Scalar, Storage>>
        pipeline(std::move(embedding), seqembed::SinusoidalPositionalEncoding<Scalar>(d_model));
    const seqembed::RowMatrix<Scalar> rows = pipeline.forward(ids);
    for (Index t = 0; t < rows.rows(); ++t) {
        std::printf("position %lld, id %lld:", static_cast<long long>(t), static_cast<long long>(ids(0, t)));
        for (Index c = 0; c < rows.cols(); ++c) std::printf(" %9.5f", static_cast<double>(rows(t, c)));
        std::printf("\n");
    }
}

}  // namespace

int main(int argc, char** argv) {
    try {
        if (argc == 3 && std::string(argv[1]) == "--write-demo") {
            write_demo(argv[2]);
            return seqembed_examples::exit_success;
        }
        if (argc < 4) return usage(argv[0]);
        const auto file = seqembed::io::SafetensorsFile::open(argv[1]);
        const std::string tensor = argv[2];
        seqembed::IdMatrix ids(1, argc - 3);
        for (int i = 3; i < argc; ++i) {
            char* end = nullptr;
            ids(0, i - 3) = std::strtoll(argv[i], &end, 10);
            if (end == argv[i] || *end != '\0') {
                std::fprintf(stderr, "embed_from_checkpoint: '%s' is not a token id\n", argv[i]);
                return seqembed_examples::exit_usage;
            }
        }
        const auto dtype = file.info(tensor).dtype();
        if (dtype == seqembed::io::Dtype::bf16) embed<float, Eigen::bfloat16>(file, tensor, ids);
        else if (dtype == seqembed::io::Dtype::f16) embed<float, Eigen::half>(file, tensor, ids);
        else if (dtype == seqembed::io::Dtype::f64) embed<double, double>(file, tensor, ids);
        else embed<float, float>(file, tensor, ids);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "embed_from_checkpoint: %s\n", e.what());
        return seqembed_examples::exit_failure;
    }
    return seqembed_examples::exit_success;
}
