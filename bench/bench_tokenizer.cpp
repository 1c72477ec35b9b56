// seqembed_bench_tokenizer: Tokenizer::encode_batch's throughput on a corpus, in MB of text per
// second, one thread and two, for each tokenizer.json given (Google Benchmark):
//   seqembed_bench_tokenizer <corpus.txt> <name>=<tokenizer.json>... [--benchmark_... flags]
// The corpus is one text per line. bench/tokenizers/compare.sh runs it beside Hugging Face's Rust
// library (through its Node bindings) on the same corpus and prints the table in
// docs/tokenizers.md.
#include <seqembed/text/tokenizer.hpp>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench_support.hpp"

namespace {

std::vector<std::string> read_lines(const std::string& path, std::size_t& bytes) {
    std::ifstream stream(path, std::ios::binary);
    if (!stream) {
        std::fprintf(stderr, "seqembed_bench_tokenizer: cannot open %s\n", path.c_str());
        std::exit(2);
    }
    std::vector<std::string> lines;
    bytes = 0;
    for (std::string line; std::getline(stream, line);) {
        bytes += line.size();
        lines.push_back(std::move(line));
    }
    return lines;
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (argc < 3) {
        std::fprintf(stderr, "usage: seqembed_bench_tokenizer <corpus.txt> <name>=<tokenizer.json>... [--benchmark_...]\n");
        return 2;
    }
    std::size_t bytes = 0;
    const auto texts = std::make_shared<const std::vector<std::string>>(read_lines(argv[1], bytes));
    benchmark::AddCustomContext("cpu", seqembed_bench::cpu_model());
    benchmark::AddCustomContext("compiler", seqembed_bench::compiler());
    benchmark::AddCustomContext("flags", SEQEMBED_BENCH_CXX_FLAGS);
    benchmark::AddCustomContext("corpus", std::string(argv[1]) + ": " + std::to_string(texts->size()) + " texts, " +
                                              std::to_string(bytes) + " bytes");
    for (int k = 2; k < argc; ++k) {
        const std::string argument = argv[k];
        const std::size_t equals = argument.find('=');
        if (equals == std::string::npos) {
            std::fprintf(stderr, "seqembed_bench_tokenizer: %s is not <name>=<tokenizer.json>\n", argv[k]);
            return 2;
        }
        const std::string name = argument.substr(0, equals);
        const auto tokenizer =
            std::make_shared<const seqembed::text::Tokenizer>(seqembed::text::Tokenizer::from_file(argument.substr(equals + 1)));
        for (const std::size_t threads : {std::size_t{1}, std::size_t{2}}) {
            benchmark::RegisterBenchmark(("tokenizer/" + name + "/threads:" + std::to_string(threads)).c_str(),
                                         [tokenizer, texts, bytes, threads](benchmark::State& state) {
                                             seqembed::text::EncodeOptions options;
                                             options.threads = threads;
                                             seqembed::BatchOptions batch;
                                             batch.pad_id = 0;
                                             std::size_t tokens = 0;
                                             for (auto _ : state) {
                                                 const seqembed::EncodedBatch encoded =
                                                     tokenizer->encode_batch(*texts, batch, options);
                                                 tokens = 0;
                                                 for (const seqembed::Index length : encoded.lengths)
                                                     tokens += static_cast<std::size_t>(length);
                                                 benchmark::DoNotOptimize(encoded.ids.data());
                                             }
                                             state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                                                                     static_cast<std::int64_t>(bytes));
                                             state.counters["tokens"] = static_cast<double>(tokens);
                                         })
                ->Unit(benchmark::kMillisecond)
                ->UseRealTime();
        }
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
