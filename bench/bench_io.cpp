// seqembed::io's costs, measured with Google Benchmark (issue 12's "How fast"):
//   open_view_1GiB      SafetensorsFile::open + token_embedding<float, bfloat16> of a 128256 x 4096
//                       BF16 table (1002 MiB): a mapping and a view, no copy.
//   load/*              reading a 16384 x 4096 F32 tensor (256 MiB, resident in the page cache)
//                       into owned memory: memcpy of the same bytes (the floor), a misaligned
//                       F32 file (copied), F32 to BF16 (narrowing), BF16 to F32 (widening).
//                       bytes_per_second counts the file's bytes read.
//   pipeline/*          the headline workload (batch 32, length 512, d_model 512, vocab 32000,
//                       float, uniform ids, evaluation forward_into) over the same table owned
//                       by seqembed (huge pages), viewed from the mapped file (page cache, 4 KiB
//                       pages), copied from the file (ReadOptions::copy: 64-byte aligned rows on
//                       huge pages), viewed from the file read into memory (OpenOptions::map off:
//                       huge pages), viewed in 64-byte aligned memory on 4 KiB pages, and viewed
//                       in malloc'd memory (4 KiB pages, rows 16 bytes into a cache line).
// The files are written once into $SEQEMBED_BENCH_IO_DIR (default: <temp>/seqembed-bench-io,
// 1.6 GB) and reused while their sizes match.
//   build/bench/bench/seqembed_bench_io --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <seqembed/io/io.hpp>
#include <seqembed/seqembed.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace {

namespace fs = std::filesystem;
using seqembed::Index;
using seqembed::RowMatrix;

fs::path data_dir() {
    const char* dir = std::getenv("SEQEMBED_BENCH_IO_DIR");
    fs::path path = dir != nullptr && *dir != '\0' ? fs::path(dir) : fs::temp_directory_path() / "seqembed-bench-io";
    fs::create_directories(path);
    return path;
}

/// Writes `bytes` (a whole file) unless a file of that size is already there.
template <typename Write>
fs::path ensure_file(const std::string& name, std::uintmax_t size, Write&& write) {
    const fs::path path = data_dir() / name;
    std::error_code error;
    if (fs::file_size(path, error) != size || error) write(path);
    return path;
}

/// Reads every page of the file's tensor so that the page cache and the mapping hold them.
std::uint64_t touch(const seqembed::io::SafetensorsFile& file) {
    std::uint64_t sum = 0;
    const unsigned char* bytes = file.bytes().data();
    for (std::uint64_t i = 0; i < file.bytes().size(); i += 4096) sum += bytes[i];
    return sum;
}

// -- open + view of a 1 GiB table --------------------------------------------------------------

constexpr Index big_vocab = 128256, big_width = 4096;

fs::path big_file() {
    const std::uintmax_t data = static_cast<std::uintmax_t>(big_vocab * big_width * 2);
    return ensure_file("bf16_128256x4096.safetensors", data + 8 + 80, [](const fs::path& path) {
        std::vector<Eigen::bfloat16> values(static_cast<std::size_t>(big_vocab * big_width));
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = Eigen::bfloat16(static_cast<float>(i % 1000) / 1000.0f);
        seqembed::io::save_safetensors(path, {seqembed::io::NamedTensor::view("embed", values.data(), {big_vocab, big_width})});
    });
}

void open_view_1GiB(benchmark::State& state) {
    const fs::path path = big_file();
    for (auto _ : state) {
        auto embedding = seqembed::io::SafetensorsFile::open(path).token_embedding<float, Eigen::bfloat16>("embed");
        benchmark::DoNotOptimize(embedding);
        if (!embedding.is_view()) state.SkipWithError("the table was copied");
    }
    state.counters["table_MiB"] = static_cast<double>(big_vocab * big_width * 2) / (1 << 20);
}
BENCHMARK(open_view_1GiB)->Unit(benchmark::kMicrosecond)->UseRealTime();

// -- converting loads against memcpy ------------------------------------------------------------

constexpr Index load_rows = 16384, load_cols = 4096;
constexpr std::int64_t load_bytes = load_rows * load_cols * 4;

struct LoadFiles {
    seqembed::io::SafetensorsFile f32, misaligned, bf16;
};

LoadFiles& load_files() {
    static LoadFiles* files = [] {
        RowMatrix<float> table(load_rows, load_cols);
        std::mt19937 random(5);
        std::normal_distribution<float> normal;
        bool made = false;
        const auto make = [&] {
            if (!made) for (Index i = 0; i < table.size(); ++i) table.data()[i] = normal(random);
            made = true;
        };
        const fs::path f32 = ensure_file("f32_16384x4096.safetensors", load_bytes + 8 + 80, [&](const fs::path& p) {
            make();
            seqembed::io::save_safetensors(p, {{"table", table}});
        });
        const fs::path bf16 = ensure_file("bf16_16384x4096.safetensors", load_bytes / 2 + 8 + 80, [&](const fs::path& p) {
            make();
            seqembed::io::save_safetensors(p, {{"table", table.cast<Eigen::bfloat16>()}});
        });
        // The same bytes behind a header one byte longer: every float starts at an odd address.
        const fs::path misaligned = data_dir() / "f32_misaligned_16384x4096.safetensors";
        {
            std::string header = "{\"table\":{\"dtype\":\"F32\",\"shape\":[16384,4096],\"data_offsets\":[0," +
                                 std::to_string(load_bytes) + "]}}";
            while ((8 + header.size()) % 8 != 1) header += ' ';
            std::error_code error;
            if (fs::file_size(misaligned, error) != static_cast<std::uintmax_t>(8 + header.size() + load_bytes) || error) {
                const auto source = seqembed::io::SafetensorsFile::open(f32);
                const auto& info = source.info("table");
                std::string bytes(8, '\0');
                for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
                bytes += header;
                bytes.append(reinterpret_cast<const char*>(source.bytes().data() + info.file_offset),
                             static_cast<std::size_t>(info.byte_size()));
                std::FILE* out = std::fopen(misaligned.c_str(), "wb");
                std::fwrite(bytes.data(), 1, bytes.size(), out);
                std::fclose(out);
            }
        }
        auto* loaded = new LoadFiles{seqembed::io::SafetensorsFile::open(f32),
                                     seqembed::io::SafetensorsFile::open(misaligned),
                                     seqembed::io::SafetensorsFile::open(bf16)};
        benchmark::DoNotOptimize(touch(loaded->f32) + touch(loaded->misaligned) + touch(loaded->bf16));
        return loaded;
    }();
    return *files;
}

/// The floor: the tensor's bytes copied from the (resident) mapping into fresh owned memory,
/// as a load must (a fresh allocation each time, whose pages fault when written).
void load_memcpy(benchmark::State& state) {
    const auto& file = load_files().f32;
    const unsigned char* source = file.bytes().data() + file.info("table").file_offset;
    for (auto _ : state) {
        auto memory = seqembed::detail::allocate_table_memory(static_cast<std::size_t>(load_bytes));
        std::memcpy(memory.get(), source, static_cast<std::size_t>(load_bytes));
        benchmark::DoNotOptimize(memory.get());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * load_bytes);
}
BENCHMARK(load_memcpy)->Name("load/memcpy_256MiB")->Unit(benchmark::kMillisecond)->UseRealTime();

/// memcpy into memory written before (no page faults): what a copy costs at best.
void load_memcpy_reused(benchmark::State& state) {
    const auto& file = load_files().f32;
    const unsigned char* source = file.bytes().data() + file.info("table").file_offset;
    std::vector<unsigned char> target(static_cast<std::size_t>(load_bytes), 1);
    for (auto _ : state) {
        std::memcpy(target.data(), source, target.size());
        benchmark::DoNotOptimize(target.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * load_bytes);
}
BENCHMARK(load_memcpy_reused)->Name("load/memcpy_256MiB_reused_target")->Unit(benchmark::kMillisecond)->UseRealTime();

template <typename T>
void load(benchmark::State& state, seqembed::io::SafetensorsFile LoadFiles::*which, std::int64_t bytes) {
    seqembed::io::ReadOptions options;
    options.allow_narrowing = true;
    const auto& file = load_files().*which;
    for (auto _ : state) {
        const auto tensor = file.matrix<T>("table", options);
        if (tensor.is_view()) state.SkipWithError("expected a copy");
        benchmark::DoNotOptimize(tensor.data());
    }
    state.SetBytesProcessed(state.iterations() * bytes);
}
void load_misaligned_f32(benchmark::State& state) { load<float>(state, &LoadFiles::misaligned, load_bytes); }
void load_f32_to_bf16(benchmark::State& state) { load<Eigen::bfloat16>(state, &LoadFiles::f32, load_bytes); }
void load_bf16_to_f32(benchmark::State& state) { load<float>(state, &LoadFiles::bf16, load_bytes / 2); }
void load_f32_to_f64(benchmark::State& state) { load<double>(state, &LoadFiles::f32, load_bytes); }
BENCHMARK(load_misaligned_f32)->Name("load/misaligned_f32_copy")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(load_f32_to_bf16)->Name("load/f32_to_bf16")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(load_bf16_to_f32)->Name("load/bf16_to_f32")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(load_f32_to_f64)->Name("load/f32_to_f64")->Unit(benchmark::kMillisecond)->UseRealTime();

// -- the pipeline over a mapped table and an owned one -------------------------------------------

constexpr Index batch = 32, length = 512, d_model = 512, vocab = 32000;

struct Headline {
    RowMatrix<float> table{vocab, d_model};
    std::vector<float> malloced;
    std::shared_ptr<float> aligned_small_pages;
    seqembed::IdMatrix ids{batch, length};
    RowMatrix<float> out{batch * length, d_model};
    std::shared_ptr<seqembed::io::SafetensorsFile> file;
    std::shared_ptr<seqembed::io::SafetensorsFile> read;

    Headline() {
        std::mt19937 random(1);
        std::normal_distribution<float> normal;
        for (Index i = 0; i < table.size(); ++i) table.data()[i] = normal(random);
        std::uniform_int_distribution<seqembed::TokenId> id(0, vocab - 1);
        for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = id(random);
        malloced.assign(table.data(), table.data() + table.size());
        // 64-byte aligned rows on 4 KiB pages: the owned table's alignment without its huge pages.
        const std::size_t bytes = static_cast<std::size_t>(table.size()) * sizeof(float);
        aligned_small_pages.reset(static_cast<float*>(std::aligned_alloc(4096, bytes)), [](float* p) { std::free(p); });
#if defined(__linux__) && defined(MADV_NOHUGEPAGE)
        madvise(aligned_small_pages.get(), bytes, MADV_NOHUGEPAGE);
#endif
        std::memcpy(aligned_small_pages.get(), table.data(), bytes);
        const fs::path path = data_dir() / "headline_f32_32000x512.safetensors";
        seqembed::io::save_safetensors(path, {{"embed", table}});
        file = std::make_shared<seqembed::io::SafetensorsFile>(seqembed::io::SafetensorsFile::open(path));
        seqembed::io::OpenOptions options;
        options.map = false;
        read = std::make_shared<seqembed::io::SafetensorsFile>(seqembed::io::SafetensorsFile::open(path, options));
        benchmark::DoNotOptimize(touch(*file) + touch(*read));
        out.setZero();
    }
};

Headline& headline() {
    static Headline* h = new Headline();
    return *h;
}

void run_pipeline(benchmark::State& state, seqembed::TokenEmbedding<float> embedding) {
    Headline& h = headline();
    const seqembed::InputPipeline<float> pipeline(std::move(embedding), seqembed::SinusoidalPositionalEncoding<float>(d_model));
    pipeline.forward_into(h.ids, seqembed::Padding::none(), h.out);
    for (auto _ : state) {
        pipeline.forward_into(h.ids, seqembed::Padding::none(), h.out);
        benchmark::DoNotOptimize(h.out.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * h.out.size() * static_cast<std::int64_t>(sizeof(float)));
}

void pipeline_owned(benchmark::State& state) {
    run_pipeline(state, seqembed::TokenEmbedding<float>::from_weights(headline().table));
}
void pipeline_mapped(benchmark::State& state) {
    auto embedding = headline().file->token_embedding<float>("embed");
    if (!embedding.is_view()) state.SkipWithError("expected a view of the mapping");
    run_pipeline(state, std::move(embedding));
}
void pipeline_copied(benchmark::State& state) {
    seqembed::io::ReadOptions copy;
    copy.copy = true;
    run_pipeline(state, headline().file->token_embedding<float>("embed", {}, copy));
}
void pipeline_read(benchmark::State& state) {
    auto embedding = headline().read->token_embedding<float>("embed");
    if (headline().read->is_mapped()) state.SkipWithError("expected a file read into memory");
    run_pipeline(state, std::move(embedding));
}
void pipeline_malloced(benchmark::State& state) {
    run_pipeline(state, seqembed::TokenEmbedding<float>::view(headline().malloced.data(), vocab, d_model));
}
BENCHMARK(pipeline_owned)->Name("pipeline/headline_owned_table")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(pipeline_mapped)->Name("pipeline/headline_mapped_file")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(pipeline_copied)->Name("pipeline/headline_file_copied")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(pipeline_read)->Name("pipeline/headline_read_file")->Unit(benchmark::kMillisecond)->UseRealTime();
void pipeline_aligned_small_pages(benchmark::State& state) {
    run_pipeline(state, seqembed::TokenEmbedding<float>::view(headline().aligned_small_pages.get(), vocab, d_model));
}
BENCHMARK(pipeline_aligned_small_pages)->Name("pipeline/headline_aligned_4KiB_pages_view")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(pipeline_malloced)->Name("pipeline/headline_malloc_view")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
