// seqembed's Google Benchmark suite: issue 11's matrix (bench/matrix.hpp) with a memcpy of the
// output per size as the unit, then every component's forward_into and the sinusoidal table
// generation over a sparse grid of sizes, in float and double, one thread.
//
// The matrix: `matrix/D<d_model>/B<batch>xL<length>/V<vocab>/<positions>/<table>/<mode>/<cache>`
// times InputPipeline::forward_into, positions sinusoidal, learned or none, table float or bf16,
// mode eval or train_p0.1, cache warm (iterations back to back) or cold (the caches evicted
// before every iteration, untimed); `memcpy/D<d_model>/B<batch>xL<length>/<cache>` copies the same
// output bytes, the floor of each size. seqembed_compare times the same rows interleaved, with
// ratios; here each benchmark runs on its own.
//
// Each benchmark reports wall-clock time (UseRealTime, as compare.cpp measures), bytes_per_second
// counted over the OUTPUT bytes (the floor a memcpy of them sets) and items_per_second counted in
// tokens (output rows). The benchmark named with "headline" is issue 3's workload: batch 32,
// length 512, d_model 512, vocab 32000, float.
//
//   build/bench/bench/seqembed_bench --benchmark_filter=headline
//   build/bench/bench/seqembed_bench --benchmark_filter='^(matrix|memcpy)/D768/.*cold$'
//   ctest --preset bench          (5 repetitions, medians; see bench/README.md)
//
// Inputs are built once per size and kept while the benchmarks of that size run (one at a time,
// so the suite stays below about 2 GB): the registration order groups the benchmarks that share
// a workload.
#include <seqembed/optim.hpp>
#include <seqembed/seqembed.hpp>
#include <seqembed/version.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "matrix.hpp"

namespace {

using seqembed::Index;
using seqembed::RowMatrix;
using seqembed_bench::fill_uniform;
using seqembed_bench::random_ids;

constexpr double dropout_p = 0.1;

template <typename Scalar>
const char* scalar_name() {
    return std::is_same_v<Scalar, float> ? "float" : "double";
}

/// The one workload alive at a time, keyed by a description of its sizes: building a 256k-row
/// table for every repetition would dominate the run, keeping them all would need gigabytes.
class WorkloadCache {
public:
    template <typename T, typename Make>
    static T& get(const std::string& key, Make&& make) {
        Slot& slot = slot_();  // one slot for every type: the previous workload is freed
        if (slot.key != key) {
            slot.object.reset();  // before the next one is allocated
            slot.key.clear();
            slot.object = std::shared_ptr<T>(make());
            slot.key = key;
        }
        return *static_cast<T*>(slot.object.get());
    }

private:
    struct Slot {
        std::string key;
        std::shared_ptr<void> object;
    };
    static Slot& slot_() {
        static Slot slot;
        return slot;
    }
};

/// An uninitialised array of count values, then filled with uniform draws.
template <typename Scalar>
std::unique_ptr<Scalar[]> uniform_array(std::size_t count, std::uint64_t seed) {
    std::unique_ptr<Scalar[]> values(new Scalar[count]);
    fill_uniform(values.get(), count, seed);
    return values;
}

template <typename Scalar>
void set_rates(benchmark::State& state, Index tokens, Index d_model) {
    const auto iterations = static_cast<std::int64_t>(state.iterations());
    state.SetItemsProcessed(iterations * static_cast<std::int64_t>(tokens));
    state.SetBytesProcessed(iterations * static_cast<std::int64_t>(tokens) *
                            static_cast<std::int64_t>(d_model) *
                            static_cast<std::int64_t>(sizeof(Scalar)));
}

/// Registers fn under name with the suite's common settings.
benchmark::internal::Benchmark* add(const std::string& name,
                                    std::function<void(benchmark::State&)> fn) {
    return benchmark::RegisterBenchmark(name.c_str(),
                                        [fn = std::move(fn)](benchmark::State& state) { fn(state); })
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
}

// ---------------------------------------------------------------------------------------------
// Sizes

struct BatchSize {
    Index batch;
    Index length;
    Index d_model;
    Index vocab;
    bool headline = false;

    std::string name() const {
        return "B" + std::to_string(batch) + "/L" + std::to_string(length) + "/D" +
               std::to_string(d_model) + "/V" + std::to_string(vocab) +
               (headline ? "/headline" : "");
    }
    Index tokens() const { return batch * length; }
};

// The grid: the headline, one decoding step, a tiny cache-resident vocabulary, one long
// sequence, the widest rows, the largest vocabulary. Largest tables: 256000 x 768 (786 MB in
// float, 1.5 GB in double) and 32000 x 4096 (512 MB in float).
const BatchSize headline{32, 512, 512, 32000, true};
const std::vector<BatchSize> float_batches{
    headline,                    //
    {1, 1, 512, 32000},          // one token: the fixed cost of a call
    {64, 128, 64, 1000},         // narrow rows, a table that fits in L2
    {1, 8192, 1024, 50000},      // one long sequence
    {8, 256, 4096, 32000},       // wide rows
    {16, 512, 768, 256000},      // a large vocabulary (multilingual models)
};
const std::vector<BatchSize> double_batches{
    headline,
    {64, 128, 64, 1000},
    {16, 512, 768, 256000},
};

// ---------------------------------------------------------------------------------------------
// Issue 11's matrix (bench/matrix.hpp), and a memcpy of each size's output as its unit

using seqembed_bench::CacheState;
using seqembed_bench::Mode;
using seqembed_bench::Positions;
using seqembed_bench::Shape;
using seqembed_bench::Storage;

/// Cold iterations start with the caches evicted (untimed: PauseTiming around the scrub).
void evict_if_cold(benchmark::State& state, CacheState cache) {
    if (cache != CacheState::cold) return;
    state.PauseTiming();
    seqembed_bench::CacheScrubber::instance().scrub();
    state.ResumeTiming();
}

struct MemcpyCase {
    std::vector<float> source;
    std::vector<float> out;

    explicit MemcpyCase(const Shape& shape) : source(shape.output_count()), out(source.size()) {
        fill_uniform(source.data(), source.size(), 7);
    }
};

void register_memcpy(const Shape& shape, CacheState cache) {
    const std::string key = "memcpy/" + shape.name();
    const std::string name = key + "/" + seqembed_bench::name_of(cache);
    add(name, [shape, key, cache](benchmark::State& state) {
        MemcpyCase& c = WorkloadCache::get<MemcpyCase>(
            key, [&] { return std::make_unique<MemcpyCase>(shape); });
        for (auto _ : state) {
            evict_if_cold(state, cache);
            std::memcpy(c.out.data(), c.source.data(), c.out.size() * sizeof(float));
            benchmark::DoNotOptimize(c.out.data());
            benchmark::ClobberMemory();
        }
        set_rates<float>(state, shape.tokens(), shape.d_model);
    });
}

/// One d_model's tables and ids (WidthInputs) and the output, kept while its rows run.
struct MatrixCase {
    seqembed_bench::WidthInputs inputs;
    RowMatrix<float> out;

    explicit MatrixCase(const Shape& shape)
        : inputs(shape), out(RowMatrix<float>::Zero(shape.tokens(), shape.d_model)) {}
};

void register_matrix_row(const Shape& shape, Positions positions, Storage storage, Mode mode,
                         CacheState cache) {
    const std::string key = "matrix/" + shape.name();
    const std::string name = key + "/" + seqembed_bench::name_of(positions) + "/" +
                             seqembed_bench::name_of(storage) + "/" +
                             seqembed_bench::name_of(mode) + "/" + seqembed_bench::name_of(cache);
    add(name, [shape, key, positions, storage, mode, cache](benchmark::State& state) {
        MatrixCase& c = WorkloadCache::get<MatrixCase>(
            key, [&] { return std::make_unique<MatrixCase>(shape); });
        seqembed_bench::with_stages(
            c.inputs, positions, storage, [&](const auto& embedding, const auto& positional) {
                const auto pipeline = seqembed_bench::make_pipeline(embedding, positional, mode);
                const seqembed::Padding padding = seqembed::Padding::none();
                for (auto _ : state) {
                    evict_if_cold(state, cache);
                    pipeline.forward_into(c.inputs.ids, padding, c.out);
                    benchmark::DoNotOptimize(c.out.data());
                    benchmark::ClobberMemory();
                }
            });
        set_rates<float>(state, shape.tokens(), shape.d_model);
    });
}

/// Per d_model: the memcpy (warm, cold), then every row of the matrix, in compare's order.
void register_matrix() {
    for (const Shape& shape : seqembed_bench::matrix_shapes()) {
        for (const CacheState cache : seqembed_bench::all_caches) register_memcpy(shape, cache);
        for (const Positions positions : seqembed_bench::all_positions)
            for (const Storage storage : seqembed_bench::all_storages)
                for (const Mode mode : seqembed_bench::all_modes)
                    for (const CacheState cache : seqembed_bench::all_caches)
                        register_matrix_row(shape, positions, storage, mode, cache);
    }
}

// ---------------------------------------------------------------------------------------------
// InputPipeline

template <typename Scalar, typename Positional>
struct PipelineCase {
    std::unique_ptr<Scalar[]> weights;
    seqembed::IdMatrix ids;
    RowMatrix<Scalar> out;
    seqembed::InputPipeline<Scalar, Positional> pipeline;

    PipelineCase(const BatchSize& size, Positional positions)
        : weights(uniform_array<Scalar>(static_cast<std::size_t>(size.vocab * size.d_model), 1)),
          ids(random_ids(size.batch, size.length, size.vocab, 2)),
          out(RowMatrix<Scalar>::Zero(size.tokens(), size.d_model)),
          pipeline(seqembed::TokenEmbedding<Scalar>::view(weights.get(), size.vocab, size.d_model),
                   std::move(positions), {dropout_p, /*dropout_seed=*/3}) {}
};

/// Sinusoidal positions: a table of exactly `length` rows (the rows the batch reads), so that
/// setting up the 8192 x 1024 case does not compute 5000-row tables it never reads.
template <typename Scalar>
seqembed::SinusoidalPositionalEncoding<Scalar> sinusoidal_for(const BatchSize& size) {
    seqembed::SinusoidalOptions options;
    options.max_positions = size.length;
    return seqembed::SinusoidalPositionalEncoding<Scalar>(size.d_model, options);
}

template <typename Scalar>
void register_pipeline(const BatchSize& size) {
    using Case = PipelineCase<Scalar, seqembed::SinusoidalPositionalEncoding<Scalar>>;
    const std::string key = std::string("pipeline/") + scalar_name<Scalar>() + "/" + size.name();
    for (const bool training : {false, true}) {
        const std::string name = std::string("pipeline/") + (training ? "train_p0.1" : "eval") +
                                 "/" + scalar_name<Scalar>() + "/" + size.name();
        add(name, [size, key, training](benchmark::State& state) {
            Case& c = WorkloadCache::get<Case>(
                key, [&] { return std::make_unique<Case>(size, sinusoidal_for<Scalar>(size)); });
            c.pipeline.set_training(training);
            for (auto _ : state) {
                c.pipeline.forward_into(c.ids, c.out);
                benchmark::DoNotOptimize(c.out.data());
                benchmark::ClobberMemory();
            }
            set_rates<Scalar>(state, size.tokens(), size.d_model);
        });
    }
}

// ---------------------------------------------------------------------------------------------
// TokenEmbedding

template <typename Scalar>
struct EmbeddingCase {
    std::unique_ptr<Scalar[]> weights;
    seqembed::IdMatrix ids;
    RowMatrix<Scalar> out;
    seqembed::TokenEmbedding<Scalar> embedding;

    explicit EmbeddingCase(const BatchSize& size)
        : weights(uniform_array<Scalar>(static_cast<std::size_t>(size.vocab * size.d_model), 1)),
          ids(random_ids(size.batch, size.length, size.vocab, 2)),
          out(RowMatrix<Scalar>::Zero(size.tokens(), size.d_model)),
          embedding(seqembed::TokenEmbedding<Scalar>::view(weights.get(), size.vocab,
                                                           size.d_model)) {}
};

template <typename Scalar>
void register_embedding(const BatchSize& size) {
    using Case = EmbeddingCase<Scalar>;
    const std::string name =
        std::string("token_embedding/") + scalar_name<Scalar>() + "/" + size.name();
    add(name, [size, name](benchmark::State& state) {
        Case& c = WorkloadCache::get<Case>(name, [&] { return std::make_unique<Case>(size); });
        for (auto _ : state) {
            c.embedding.forward_into(c.ids, c.out);
            benchmark::DoNotOptimize(c.out.data());
            benchmark::ClobberMemory();
        }
        set_rates<Scalar>(state, size.tokens(), size.d_model);
    });
}

// ---------------------------------------------------------------------------------------------
// LearnedPositionalEmbedding

template <typename Scalar>
struct LearnedCase {
    std::unique_ptr<Scalar[]> weights;
    RowMatrix<Scalar> out;
    seqembed::LearnedPositionalEmbedding<Scalar> positions;

    LearnedCase(Index count, Index d_model)
        : weights(uniform_array<Scalar>(static_cast<std::size_t>(count * d_model), 4)),
          out(RowMatrix<Scalar>::Zero(count, d_model)),
          positions(seqembed::LearnedPositionalEmbedding<Scalar>::view(weights.get(), count,
                                                                       d_model)) {}
};

/// forward_into copies rows [0, count) of a count-row table.
template <typename Scalar>
void register_learned(Index count, Index d_model) {
    using Case = LearnedCase<Scalar>;
    const std::string name = std::string("learned_positions/forward_into/") +
                             scalar_name<Scalar>() + "/L" + std::to_string(count) + "/D" +
                             std::to_string(d_model);
    add(name, [count, d_model, name](benchmark::State& state) {
        Case& c = WorkloadCache::get<Case>(name,
                                           [&] { return std::make_unique<Case>(count, d_model); });
        for (auto _ : state) {
            c.positions.forward_into(0, c.out);
            benchmark::DoNotOptimize(c.out.data());
            benchmark::ClobberMemory();
        }
        set_rates<Scalar>(state, count, d_model);
    });
}

/// rows() hands out a view: the cost of the bounds check, whatever the size (no bytes written).
void register_learned_rows_view() {
    using Case = LearnedCase<float>;
    const Index count = 512;
    const Index d_model = 768;
    const std::string name = "learned_positions/rows_view/float/L512/D768";
    add(name, [count, d_model, name](benchmark::State& state) {
        Case& c = WorkloadCache::get<Case>(name,
                                           [&] { return std::make_unique<Case>(count, d_model); });
        for (auto _ : state) {
            auto rows = c.positions.rows(0, count);
            benchmark::DoNotOptimize(rows.data());
        }
        state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * count);
    });
}

// ---------------------------------------------------------------------------------------------
// Dropout

template <typename Scalar>
struct DropoutCase {
    RowMatrix<Scalar> x;
    RowMatrix<Scalar> out;
    seqembed::Dropout dropout{dropout_p, /*seed=*/5};

    DropoutCase(Index rows, Index cols) : x(rows, cols), out(RowMatrix<Scalar>::Zero(rows, cols)) {
        fill_uniform(x.data(), static_cast<std::size_t>(x.size()), 6);
    }
};

/// Out of place (x is left intact, so every call sees the same input): a copy plus the mask in
/// training, the copy alone in evaluation.
template <typename Scalar>
void register_dropout(Index rows, Index cols, bool training) {
    using Case = DropoutCase<Scalar>;
    const std::string key = std::string("dropout/") + scalar_name<Scalar>() + "/R" +
                            std::to_string(rows) + "/D" + std::to_string(cols);
    const std::string name = std::string("dropout/") + (training ? "train_p0.1" : "eval") + "/" +
                             scalar_name<Scalar>() + "/R" + std::to_string(rows) + "/D" +
                             std::to_string(cols);
    add(name, [rows, cols, key, training](benchmark::State& state) {
        Case& c = WorkloadCache::get<Case>(key, [&] { return std::make_unique<Case>(rows, cols); });
        c.dropout.set_training(training);
        for (auto _ : state) {
            c.dropout.template forward_into<Scalar>(c.x, c.out);
            benchmark::DoNotOptimize(c.out.data());
            benchmark::ClobberMemory();
        }
        set_rates<Scalar>(state, rows, cols);
    });
}

// ---------------------------------------------------------------------------------------------
// The dropout mask's words alone: each way a backend draws them (detail::MaskDraw), the
// headline's 16384 x 512 elements (131072 words) at p = 0.1; items are words

using MaskWordsFunction = void (*)(const seqembed::detail::DropoutKey&, std::uint64_t, Index, std::uint64_t*,
                                   seqembed::detail::MaskDraw) noexcept;

void register_mask_words(const char* isa, bool supported, bool (*runs)(seqembed::detail::MaskDraw) noexcept,
                         MaskWordsFunction words, seqembed::detail::MaskDraw draw) {
    if (!supported || !runs(draw)) return;
    const std::string name = std::string("dropout/mask_words/") + isa + "/" + seqembed::detail::mask_draw_name(draw);
    add(name, [words, draw](benchmark::State& state) {
        const Index count = headline.tokens() * headline.d_model / 64;
        std::vector<std::uint64_t> out(static_cast<std::size_t>(count));
        const seqembed::detail::DropoutKey key{3, 1, 6554};
        for (auto _ : state) {
            words(key, 0, count, out.data(), draw);
            benchmark::DoNotOptimize(out.data());
            benchmark::ClobberMemory();
        }
        state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * count);  // words
    });
}

void register_mask_words() {
    namespace detail = seqembed::detail;
    using detail::MaskDraw;
    register_mask_words("scalar", true, &detail::scalar_isa::MaskWords::runs, &detail::scalar_isa::mask_words,
                        MaskDraw::software);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(SEQEMBED_NO_X86_KERNELS)
    const bool avx2 = seqembed::isa_supported(seqembed::Isa::avx2);
    register_mask_words("avx2", avx2, &detail::avx2_isa::MaskWords::runs, &detail::avx2_isa::mask_words,
                        MaskDraw::aes128);
    register_mask_words("avx2", avx2, &detail::avx2_isa::MaskWords::runs, &detail::avx2_isa::mask_words,
                        MaskDraw::aes256);
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(SEQEMBED_NO_X86_KERNELS) && \
    !defined(SEQEMBED_NO_AVX512_KERNELS)
    const bool avx512 = seqembed::isa_supported(seqembed::Isa::avx512);
    register_mask_words("avx512", avx512, &detail::avx512_isa::MaskWords::runs, &detail::avx512_isa::mask_words,
                        MaskDraw::aes128);
    register_mask_words("avx512", avx512, &detail::avx512_isa::MaskWords::runs, &detail::avx512_isa::mask_words,
                        MaskDraw::aes512);
#endif
#if defined(__aarch64__) && defined(__ARM_NEON) && !defined(SEQEMBED_NO_NEON_KERNELS)
    register_mask_words("neon", true, &detail::neon_isa::MaskWords::runs, &detail::neon_isa::mask_words,
                        MaskDraw::aes128);
#endif
}

// ---------------------------------------------------------------------------------------------
// SinusoidalPositionalEncoding: building the table (allocation included, as in PyTorch)

template <typename Scalar>
void register_table(Index max_len, Index d_model, seqembed::TablePrecision precision) {
    const bool exact = precision == seqembed::TablePrecision::exact;
    const bool is_headline = max_len == 5000 && d_model == 512;
    const std::string name = std::string("sinusoidal_table/") +
                             (exact ? "exact" : "follow_scalar") + "/" + scalar_name<Scalar>() +
                             "/L" + std::to_string(max_len) + "/D" + std::to_string(d_model) +
                             (is_headline ? "/headline" : "");
    add(name, [max_len, d_model, precision](benchmark::State& state) {
        seqembed::SinusoidalOptions options;
        options.max_positions = max_len;
        options.precision = precision;
        for (auto _ : state) {
            seqembed::SinusoidalPositionalEncoding<Scalar> table(d_model, options);
            benchmark::DoNotOptimize(table.table().data());
            benchmark::ClobberMemory();
        }
        set_rates<Scalar>(state, max_len, d_model);
    });
}

// ---------------------------------------------------------------------------------------------
// RotaryEmbedding (issue 15): RoPE applied to Q and K in place, with a memcpy of Q and K as the
// floor: Llama-3-8B's attention (32 query heads, 8 key heads, head_dim 128), in both layouts
// (Meta's checkpoints pair neighbours); heads of other lengths: Llama-3.2-1B's (32 + 8 of 64),
// Gemma-7B's (16 + 16 of 256); and heads whose rotated part is not a whole number of vectors:
// Phi-3-mini's (32 + 32 heads of 96), Phi-2's (32 + 32 heads of 80, 32 of them rotated) and
// StableLM-3B's (32 + 32 heads of 80, 20 rotated). And the exact 131072-position table.
// bytes_per_second counts the bytes of Q and K.

/// The attention shape RoPE is applied at.
struct RopeShape {
    const char* name;
    Index q_heads;
    Index k_heads;
    Index head_dim;
    Index rotary_dim;  // 0: all of head_dim
    double base;
    seqembed::RotaryLayout layout = seqembed::RotaryLayout::halves;
};
constexpr RopeShape llama3_8b{"llama3_8b", 32, 8, 128, 0, 500000.0};
constexpr RopeShape llama3_8b_interleaved{"llama3_8b_interleaved", 32, 8, 128, 0, 500000.0,
                                          seqembed::RotaryLayout::interleaved};
constexpr RopeShape llama32_1b{"llama3.2_1b", 32, 8, 64, 0, 500000.0};
constexpr RopeShape gemma_7b{"gemma_7b", 16, 16, 256, 0, 10000.0};
constexpr RopeShape phi3_mini{"phi3_mini", 32, 32, 96, 0, 10000.0};
constexpr RopeShape phi2{"phi2", 32, 32, 80, 32, 10000.0};
constexpr RopeShape stablelm_3b{"stablelm_3b", 32, 32, 80, 20, 10000.0};

template <typename A>
void register_rope(const RopeShape& shape, const char* workload, std::vector<std::int64_t> positions) {
    const auto tokens = static_cast<Index>(positions.size());
    const std::string name = std::string(shape.name) + "/" + workload + "/" + (std::is_same_v<A, float> ? "float" : "bf16");
    const Index q_width = shape.q_heads * shape.head_dim;
    const Index k_width = shape.k_heads * shape.head_dim;
    const auto bytes = static_cast<std::int64_t>(sizeof(A)) * tokens * (q_width + k_width);
    auto activations = [tokens](Index width, unsigned seed) {
        std::vector<float> values(static_cast<std::size_t>(tokens * width));
        seqembed_bench::fill_uniform(values.data(), values.size(), seed);
        auto m = std::make_shared<RowMatrix<A>>(tokens, width);
        for (Index i = 0; i < m->size(); ++i) m->data()[i] = static_cast<A>(values[static_cast<std::size_t>(i)]);
        return m;
    };
    auto q = activations(q_width, 31);
    auto k = activations(k_width, 32);
    seqembed::RotaryOptions options;
    options.head_dim = shape.head_dim;
    options.rotary_dim = shape.rotary_dim;
    options.base = shape.base;
    options.layout = shape.layout;
    options.max_positions = 8192;
    add("rope/apply/" + name, [q, k, positions, bytes, options, shape](benchmark::State& state) {
        const seqembed::RotaryEmbedding<float> rope(options);
        const Eigen::Map<const seqembed::RotaryEmbedding<float>::PositionVector> at(
            positions.data(), static_cast<Index>(positions.size()));
        for (auto _ : state) {
            rope.apply(*q, *k, shape.q_heads, shape.k_heads, at);
            benchmark::DoNotOptimize(q->data());
            benchmark::ClobberMemory();
        }
        state.SetBytesProcessed(state.iterations() * bytes);
    });
    add("rope/memcpy/" + name, [q, k, bytes](benchmark::State& state) {
        RowMatrix<A> q_copy(q->rows(), q->cols());
        RowMatrix<A> k_copy(k->rows(), k->cols());
        for (auto _ : state) {
            std::memcpy(q_copy.data(), q->data(), sizeof(A) * static_cast<std::size_t>(q->size()));
            std::memcpy(k_copy.data(), k->data(), sizeof(A) * static_cast<std::size_t>(k->size()));
            benchmark::DoNotOptimize(q_copy.data());
            benchmark::DoNotOptimize(k_copy.data());
            benchmark::ClobberMemory();
        }
        state.SetBytesProcessed(state.iterations() * bytes);
    });
}

void register_rope_table() {
    add("rope_table/exact/float/L131072/D128", [](benchmark::State& state) {
        auto options = seqembed::RotaryOptions::llama3_8b();
        options.max_positions = 131072;
        for (auto _ : state) {
            const seqembed::RotaryEmbedding<float> table(options);
            benchmark::DoNotOptimize(table.cos_table().data());
            benchmark::ClobberMemory();
        }
        state.SetBytesProcessed(state.iterations() * 131072 * 128 * static_cast<std::int64_t>(sizeof(float)));
    });
}

// ---------------------------------------------------------------------------------------------
// Training (issue 28): the headline workload's training forward, its backward (row-sparse
// gradients), a SparseAdam step on the token table, the whole step (forward, backward,
// SparseAdam on the token table, Adam on the positions), the backward fused with the
// SparseAdam step (backward_step; also with LazySgd, momentum 0.9, and RowwiseAdagrad), and the
// bytes a SparseAdam step moves; again with the same
// ids spread over a vocabulary of 256000. The optimizers' state is allocated by
// the untimed first call.

// The headline's ids (drawn from its 32000) times `stride`: the same rows touched, as many and
// as often, spread over a vocabulary `stride` times larger.
seqembed::IdMatrix spread_ids(seqembed::IdMatrix ids, Index stride) {
    ids *= stride;
    return ids;
}

struct TrainingCase {
    using Pipeline = seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>>;
    std::unique_ptr<float[]> weights;
    std::unique_ptr<float[]> position_weights;
    seqembed::IdMatrix ids;
    RowMatrix<float> out;
    RowMatrix<float> grad_out;
    Pipeline pipeline;
    seqembed::optim::SparseAdam<float> token_step;
    seqembed::optim::LazySgd<float> token_sgd;
    seqembed::optim::RowwiseAdagrad<float> token_adagrad;
    seqembed::optim::Adam<float> position_step;
    seqembed::PipelineGradients<float> grads;

    explicit TrainingCase(const BatchSize& size)
        : weights(uniform_array<float>(static_cast<std::size_t>(size.vocab * size.d_model), 1)),
          position_weights(uniform_array<float>(static_cast<std::size_t>(size.length * size.d_model), 4)),
          ids(spread_ids(random_ids(size.batch, size.length, headline.vocab, 2), size.vocab / headline.vocab)),
          out(RowMatrix<float>::Zero(size.tokens(), size.d_model)),
          grad_out(RowMatrix<float>::Zero(size.tokens(), size.d_model)),
          pipeline(seqembed::TokenEmbedding<float>::from_weights(
                       Eigen::Map<const RowMatrix<float>>(weights.get(), size.vocab, size.d_model)),
                   seqembed::LearnedPositionalEmbedding<float>::from_weights(
                       Eigen::Map<const RowMatrix<float>>(position_weights.get(), size.length, size.d_model)),
                   {0.1, 7}),
          token_step("token table", size.vocab, size.d_model),
          token_sgd("token table", size.vocab, size.d_model, {0.9}),
          token_adagrad("token table", size.vocab, size.d_model),
          position_step("positions", size.length, size.d_model) {
        pipeline.set_training(true);
        fill_uniform(grad_out.data(), static_cast<std::size_t>(grad_out.size()), 5);
        step();  // the optimizers' state, the tables made the pipeline's own
        token_gradient = grads.token;
        moment_one = seqembed::detail::new_zeros<float>(size.vocab, size.d_model);  // as SparseAdam allocates its state
        moment_two = seqembed::detail::new_zeros<float>(size.vocab, size.d_model);
    }

    // The floor of a SparseAdam step on the token table (move_sparse_adam_bytes).
    void move_sparse_adam_bytes() {
        seqembed_bench::move_sparse_adam_bytes(pipeline.trainable().token->weights, moment_one, moment_two,
                                               token_gradient);
    }

    seqembed::RowGradient<float> token_gradient;  // of the first step's batch
    RowMatrix<float> moment_one = RowMatrix<float>::Zero(1, 1);
    RowMatrix<float> moment_two = RowMatrix<float>::Zero(1, 1);

    void step() {
        const seqembed::Batch batch(ids);
        const std::uint64_t call = pipeline.dropout().calls();
        pipeline.forward_into(batch, out);
        grads = pipeline.backward(batch, grad_out, call);
        seqembed::PipelineTables<float> tables = pipeline.trainable();
        token_step.step(tables.token->weights, grads.token, 1e-4);
        position_step.step(tables.positions->weights, grads.positions, 1e-4);
    }
};

void register_training(const BatchSize& size) {
    const std::string name = "training/" + size.name();
    const auto run = [size, name](benchmark::State& state, int what) {
        TrainingCase& c =
            WorkloadCache::get<TrainingCase>(name, [&] { return std::make_unique<TrainingCase>(size); });
        const seqembed::Batch batch(c.ids);
        for (auto _ : state) {
            if (what == 0) c.pipeline.forward_into(batch, c.out);
            if (what == 1) c.grads = c.pipeline.backward(batch, c.grad_out, c.pipeline.dropout().calls() - 1);
            if (what == 2) c.token_step.step(c.pipeline.trainable().token->weights, c.token_gradient, 1e-4);
            if (what == 3) c.step();
            if (what == 4)
                c.grads = c.pipeline.backward_step(batch, c.grad_out, c.pipeline.dropout().calls() - 1, c.token_step, 1e-4);
            if (what == 5) c.move_sparse_adam_bytes();
            if (what == 6)
                c.grads = c.pipeline.backward_step(batch, c.grad_out, c.pipeline.dropout().calls() - 1, c.token_sgd, 1e-4);
            if (what == 7)
                c.grads =
                    c.pipeline.backward_step(batch, c.grad_out, c.pipeline.dropout().calls() - 1, c.token_adagrad, 1e-4);
            benchmark::DoNotOptimize(c.out.data());
            benchmark::ClobberMemory();
        }
        set_rates<float>(state, size.tokens(), size.d_model);
    };
    add("training/forward/" + size.name(), [run](benchmark::State& state) { run(state, 0); });
    add("training/backward/" + size.name(), [run](benchmark::State& state) { run(state, 1); });
    add("training/sparse_adam/" + size.name(), [run](benchmark::State& state) { run(state, 2); });
    add("training/step/" + size.name(), [run](benchmark::State& state) { run(state, 3); });
    add("training/backward_step/" + size.name(), [run](benchmark::State& state) { run(state, 4); });
    add("training/sparse_adam_bytes/" + size.name(), [run](benchmark::State& state) { run(state, 5); });
    add("training/backward_step_lazy_sgd/" + size.name(), [run](benchmark::State& state) { run(state, 6); });
    add("training/backward_step_rowwise_adagrad/" + size.name(), [run](benchmark::State& state) { run(state, 7); });
}

// BERT-base's input stage in training (token types, LayerNorm, dropout 0.1): its forward and
// its backward, whose LayerNorm recomputes its input and passes the gradient through.
struct BertTrainingCase {
    using Pipeline = seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>>;
    static constexpr Index batch = 32, length = 512, d_model = 768, vocab = 30522;
    std::unique_ptr<float[]> weights = uniform_array<float>(static_cast<std::size_t>(vocab * d_model), 1);
    std::unique_ptr<float[]> position_weights = uniform_array<float>(static_cast<std::size_t>(length * d_model), 4);
    seqembed::IdMatrix ids = random_ids(batch, length, vocab, 2);
    seqembed::IdMatrix types = random_ids(batch, length, 2, 3);
    RowMatrix<float> out = RowMatrix<float>::Zero(batch * length, d_model);
    RowMatrix<float> grad_out = RowMatrix<float>::Zero(batch * length, d_model);
    Pipeline pipeline{seqembed::TokenEmbedding<float>::from_weights(
                          Eigen::Map<const RowMatrix<float>>(weights.get(), vocab, d_model)),
                      seqembed::LearnedPositionalEmbedding<float>::from_weights(
                          Eigen::Map<const RowMatrix<float>>(position_weights.get(), length, d_model)),
                      {0.1, 7}};
    seqembed::PipelineGradients<float> grads;

    BertTrainingCase() {
        pipeline.set_token_types(
            seqembed::TokenTypeEmbedding<float>::from_weights(RowMatrix<float>::Constant(2, d_model, 0.01f)));
        pipeline.set_layer_norm(seqembed::LayerNorm<float>(d_model, 1e-12));
        pipeline.set_training(true);
        fill_uniform(grad_out.data(), static_cast<std::size_t>(grad_out.size()), 5);
        seqembed::Batch batch_of_ids(ids);
        batch_of_ids.token_types = types;
        pipeline.forward_into(batch_of_ids, out);
        grads = pipeline.backward(batch_of_ids, grad_out, pipeline.dropout().calls() - 1);
    }
};

void register_bert_training() {
    const auto run = [](benchmark::State& state, bool backward) {
        BertTrainingCase& c = WorkloadCache::get<BertTrainingCase>(
            "training/bert", [] { return std::make_unique<BertTrainingCase>(); });
        seqembed::Batch batch(c.ids);
        batch.token_types = c.types;
        for (auto _ : state) {
            if (backward)
                c.grads = c.pipeline.backward(batch, c.grad_out, c.pipeline.dropout().calls() - 1);
            else
                c.pipeline.forward_into(batch, c.out);
            benchmark::DoNotOptimize(c.out.data());
            benchmark::ClobberMemory();
        }
        set_rates<float>(state, BertTrainingCase::batch * BertTrainingCase::length, BertTrainingCase::d_model);
    };
    add("training/bert_forward/B32/L512/D768/V30522", [run](benchmark::State& state) { run(state, false); });
    add("training/bert_backward/B32/L512/D768/V30522", [run](benchmark::State& state) { run(state, true); });
}

void register_all() {
    register_matrix();
    for (const BatchSize& size : float_batches) {
        register_pipeline<float>(size);
        register_embedding<float>(size);
    }
    for (const BatchSize& size : double_batches) {
        register_pipeline<double>(size);
        register_embedding<double>(size);
    }

    for (const auto& [count, d_model] : std::vector<std::pair<Index, Index>>{
             {512, 768}, {1, 4096}, {8192, 1024}, {128, 64}})
        register_learned<float>(count, d_model);
    register_learned<double>(512, 768);
    register_learned_rows_view();

    for (const bool training : {false, true}) {
        register_dropout<float>(headline.tokens(), headline.d_model, training);
    }
    register_dropout<float>(1, 512, true);
    register_dropout<float>(512, 4096, true);
    register_dropout<double>(headline.tokens(), headline.d_model, true);
    register_mask_words();

    for (const auto precision :
         {seqembed::TablePrecision::exact, seqembed::TablePrecision::follow_scalar}) {
        for (const auto& [max_len, d_model] : std::vector<std::pair<Index, Index>>{
                 {5000, 512}, {8192, 64}, {256, 4096}}) {
            register_table<float>(max_len, d_model, precision);
            register_table<double>(max_len, d_model, precision);
        }
    }

    std::vector<std::int64_t> prefill(4096);
    for (std::size_t t = 0; t < prefill.size(); ++t) prefill[t] = static_cast<std::int64_t>(t);
    std::vector<std::int64_t> decode(64);  // 64 sequences, one new token each, scattered positions
    for (std::size_t b = 0; b < decode.size(); ++b) decode[b] = static_cast<std::int64_t>((b * 2654435761u) % 8192);
    register_rope<float>(llama3_8b, "prefill_1x4096", prefill);
    register_rope<Eigen::bfloat16>(llama3_8b, "prefill_1x4096", prefill);
    register_rope<float>(llama3_8b, "decode_64x1", decode);
    register_rope<Eigen::bfloat16>(llama3_8b, "decode_64x1", decode);
    for (const RopeShape& shape : {llama3_8b_interleaved, llama32_1b, gemma_7b, phi3_mini, phi2, stablelm_3b}) {
        register_rope<float>(shape, "decode_64x1", decode);
        register_rope<Eigen::bfloat16>(shape, "decode_64x1", decode);
    }
    register_rope_table();
    register_training(headline);
    // The same ids spread over 256000 rows: a lazy step's cost follows the rows it touches.
    register_training({headline.batch, headline.length, headline.d_model, 256000});
    register_bert_training();
}

}  // namespace

int main(int argc, char** argv) {
    register_all();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::AddCustomContext("cpu_model", seqembed_bench::cpu_model());
    benchmark::AddCustomContext("compiler", seqembed_bench::compiler());
    benchmark::AddCustomContext("build_type", SEQEMBED_BENCH_BUILD_TYPE);
    benchmark::AddCustomContext("cxx_flags", SEQEMBED_BENCH_CXX_FLAGS);
    benchmark::AddCustomContext("vector_isa", seqembed_bench::vector_isa());
    benchmark::AddCustomContext("seqembed", seqembed_bench::seqembed_version());
    benchmark::AddCustomContext("eigen", seqembed_bench::eigen_summary());
    benchmark::AddCustomContext("threads", "1 (seqembed is single-threaded)");
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
