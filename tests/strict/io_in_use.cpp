// Every public header of seqembed::io, its readers and writers instantiated for every element
// type, in one program a user could have written, which runs core_in_use.cpp's checks first: the
// strict-flags matrix of tests/strict/CMakeLists.txt compiles it in place of core_in_use.cpp
// where seqembed::io is built (native builds also run it). Compiled as one translation unit, the
// two instantiate the kernels once.
#define SEQEMBED_STRICT_CORE_CHECKS_ONLY
#include "core_in_use.cpp"

#include <seqembed/io/dtype.hpp>
#include <seqembed/io/errors.hpp>
#include <seqembed/io/io.hpp>
#include <seqembed/io/mapped_file.hpp>
#include <seqembed/io/models.hpp>
#include <seqembed/io/npy.hpp>
#include <seqembed/io/rotary_config.hpp>
#include <seqembed/io/safetensors.hpp>
#include <seqembed/io/tensor.hpp>
#include <seqembed/io/training_state.hpp>
#include <seqembed/seqembed.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

namespace {

using seqembed::Index;

int failures = 0;
constexpr Index rows_of_slice = 3;

void expect(bool condition, const char* what) {
    if (!condition) {
        std::fprintf(stderr, "io_in_use: %s\n", what);
        ++failures;
    }
}

template <typename T>
void read_back(const seqembed::io::SafetensorsFile& file, const std::string& name, Index rows, Index cols) {
    seqembed::io::ReadOptions options;
    options.allow_narrowing = true;
    const seqembed::io::Tensor<T> tensor = file.matrix<T>(name, options);
    expect(tensor.shape().size() == 2 && tensor.shape()[0] == rows && tensor.shape()[1] == cols, "tensor shape");
    (void)file.tensor<T>(name, options);
    const seqembed::io::Tensor<T> slice = file.matrix_rows<T>(name, 1, rows_of_slice, options);
    expect(slice.shape().size() == 2 && slice.shape()[0] == rows_of_slice && slice.shape()[1] == cols, "slice shape");
}

}  // namespace

int main(int argc, char** argv) {
    // A model directory on the command line: every family's loader (instantiated here either way).
    if (argc == 2) {
        const std::string type = seqembed::io::ModelConfig::read(std::filesystem::path(argv[1]) / "config.json").model_type;
        if (type == "bert") (void)seqembed::io::load_bert(argv[1], {}, seqembed::VocabularySplit{2, 1});
        if (type == "electra") (void)seqembed::io::load_electra(argv[1]);
        if (type == "roberta") (void)seqembed::io::load_roberta(argv[1]);
        if (type == "gpt2") (void)seqembed::io::load_gpt2(argv[1]);
        if (type == "bart") (void)seqembed::io::load_bart(argv[1]);
        if (type == "opt") (void)seqembed::io::load_opt(argv[1]);
        if (type == "marian") (void)seqembed::io::load_marian(argv[1]);
        if (type == "t5") (void)seqembed::io::load_t5(argv[1]);
        if (type == "llama") (void)seqembed::io::load_llama(argv[1]);
        if (type == "mistral") (void)seqembed::io::load_mistral(argv[1]);
        if (type == "qwen2") (void)seqembed::io::load_qwen2(argv[1]);
        if (type == "gemma") (void)seqembed::io::load_gemma(argv[1]);
        if (type == "phi") (void)seqembed::io::load_phi(argv[1]);
        if (type == "gpt_neox") (void)seqembed::io::load_gpt_neox(argv[1]);
        std::printf("loaded %s\n", type.c_str());
        return 0;
    }
    const int core_failures = core_in_use::run();
    seqembed::RowMatrix<float> table(6, 4);
    for (Index k = 0; k < table.size(); ++k) table.data()[k] = static_cast<float>(k) / 8.0f;
    const std::string bytes = seqembed::io::serialize_safetensors(
        {{"f32", table}, {"f64", table.cast<double>()}, {"bf16", table.cast<Eigen::bfloat16>()},
         {"f16", table.cast<Eigen::half>()}},
        {{"format", "pt"}});
    const auto file = seqembed::io::SafetensorsFile::from_memory(bytes.data(), bytes.size());
    for (const char* name : {"f32", "f64", "bf16", "f16"}) {
        read_back<float>(file, name, 6, 4);
        read_back<double>(file, name, 6, 4);
        read_back<Eigen::bfloat16>(file, name, 6, 4);
        read_back<Eigen::half>(file, name, 6, 4);
    }
    const auto embedding = file.token_embedding<float>("f32");
    const auto compact = file.token_embedding<float, Eigen::bfloat16>("bf16");
    const auto half = file.token_embedding<float, Eigen::half>("f16");
    const auto wide = file.token_embedding<double>("f64");
    const auto positions = file.learned_positions<float>("f32");
    seqembed::TokenEmbeddingOptions sharded;
    sharded.shard = seqembed::VocabularySplit{4, 1}.of(6);
    const auto shard = file.token_embedding<float, Eigen::bfloat16>("f32", sharded, {true, false});
    seqembed::IdMatrix ids(1, 2);
    ids << 1, 5;
    expect(embedding.forward(ids).rows() == 2 && compact.forward(ids).rows() == 2 && half.forward(ids).rows() == 2 &&
               wide.forward(ids).rows() == 2 && positions.forward(0, 2).rows() == 2 && shard.table().rows() == 2,
           "tables read from memory embed");

    // A rotary stage from a config's keys (Llama 3.1's rule).
    const auto config = nlohmann::json::parse(
        R"({"hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 32, "rope_theta": 500000.0,
            "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                             "high_freq_factor": 4.0, "original_max_position_embeddings": 16}})");
    seqembed::RotaryOptions rope_options = seqembed::io::rotary_options_from_json(config, "inline config");
    rope_options.max_positions = 32;
    const seqembed::RotaryEmbedding<float> rope(rope_options);
    expect(rope.head_dim() == 16 && rope.pairs() == 8, "rotary options from a config");

    // A training state: a table, every optimizer kind, a counter, written and read back.
    {
        seqembed::optim::SparseAdam<float> sparse_adam("token", 6, 4);
        seqembed::optim::RowwiseAdagrad<double> adagrad("token", 6, 4);
        seqembed::optim::LazySgd<float> lazy("token", 6, 4, {0.9, 0.0, 0.0, false, false});
        seqembed::optim::Sgd<double> sgd("positions", 6, 4);
        seqembed::optim::Adam<float> adam("positions", 6, 4);
        seqembed::optim::AdamW<double> adamw("positions", 6, 4);
        seqembed::io::TrainingState state;
        state.add_table("table", table);
        state.add_optimizer("sparse_adam", sparse_adam);
        state.add_optimizer("adagrad", adagrad);
        state.add_optimizer("lazy", lazy);
        state.add_optimizer("sgd", sgd);
        state.add_optimizer("adam", adam);
        state.add_optimizer("adamw", adamw);
        state.add_counter("calls", 3);
        const auto saved = seqembed::io::TrainingState::from_bytes(state.serialize());
        seqembed::RowMatrix<float> restored(6, 4);
        saved.restore_table("table", restored);
        saved.restore_optimizer("sparse_adam", sparse_adam);
        saved.restore_optimizer("adagrad", adagrad);
        saved.restore_optimizer("lazy", lazy);
        saved.restore_optimizer("sgd", sgd);
        saved.restore_optimizer("adam", adam);
        saved.restore_optimizer("adamw", adamw);
        expect(restored == table && saved.counter("calls") == 3, "a training state read back");
    }

    const std::string npy = seqembed::io::serialize_npy(table.data(), {6, 4});
    const auto array = seqembed::io::NpyFile::from_memory(npy.data(), npy.size());
    expect(array.matrix<float>().shape()[1] == 4, "npy matrix");
    expect(array.matrix_rows<double>(5, 1).shape()[0] == 1 && array.token_embedding<float>(sharded).is_shard(),
           "npy rows");
    expect(array.dtype() == seqembed::io::Dtype::f32, "npy dtype");

    const std::filesystem::path directory = std::filesystem::temp_directory_path();
    const std::filesystem::path safetensors = directory / "seqembed_io_in_use.safetensors";
    const std::filesystem::path npy_path = directory / "seqembed_io_in_use.npy";
    seqembed::io::save_safetensors(safetensors, {{"table", table}});
    seqembed::io::save_npy(npy_path, table);
    expect(seqembed::io::SafetensorsFile::open(safetensors).matrix<float>("table").shape()[0] == 6, "saved file");
    expect(seqembed::io::NpyFile::open(npy_path).matrix<double>().shape()[0] == 6, "saved array");
    std::filesystem::remove(safetensors);
    std::filesystem::remove(npy_path);
    try {
        (void)file.matrix<float>("absent");
        expect(false, "a missing tensor is refused");
    } catch (const seqembed::error& error) {
        std::printf("refused as expected: %s\n", error.what());
    }
    return failures == 0 && core_failures == 0 ? 0 : 1;
}
