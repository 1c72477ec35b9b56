// seqembed_compare: seqembed side by side with a memcpy of the same bytes and with libtorch doing
// the same work, interleaved in one process, one thread (issue 3).
//
// For a workload (by default issue 3's headline: batch 32, length 512, d_model 512, vocab 32000,
// float; then a small one that fits in the caches) it times, in every round, each of:
//   (a) seqembed InputPipeline::forward_into, evaluation and training (dropout 0.1);
//   (b) a memcpy of the output bytes from a pre-filled source buffer into the same output;
//   (c) libtorch doing seed 001's work, `emb(ids) * sqrt(d) + pe[:, :L]`, in evaluation and
//       followed by torch::nn::Dropout(0.1) in training (both under NoGradGuard: values only, as
//       seqembed computes them);
// and, apart, (d) the 5000 x 512 float sinusoidal table: seqembed exact (and follow_scalar) vs
// libtorch's float32 formula of seed 001.
// The contenders run in turn inside each round, the order rotated from round to round, so that
// a noisy neighbour or a frequency change hits them alike. No sample starts from what another
// contender left in the caches: the headline's samples start with the caches evicted (cold: the
// tables come from memory, as between two batches of a real model; --warm times it in its
// steady state instead), the small workload's and the table's after an untimed call of their
// own (warm). The program prints each contender's median and minimum over the rounds and the
// ratios of the medians. Before timing, it checks
// that seqembed's evaluation output equals libtorch's within 1e-5 (the same weights and position
// table are copied into torch) and that both drop about 10% in training; it exits 1 if a check
// fails. Missed performance targets do not fail it: they are benchmarks, not timed tests.
//
//   seqembed_compare [--rounds N] [--headline-only] [--no-table] [--sample-ms MS] [--warm]
#include <seqembed/seqembed.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#include "bench_support.hpp"

#if SEQEMBED_HAVE_TORCH
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <torch/torch.h>
#endif

namespace {

using seqembed::Index;
using seqembed::RowMatrix;

constexpr double dropout_p = 0.1;
constexpr double tolerance = 1e-5;

/// Keeps the compiler from dropping a store to memory nobody reads afterwards.
inline void escape(const void* pointer) {
#if defined(__GNUC__) || defined(__clang__)
    __asm__ __volatile__("" : : "g"(pointer) : "memory");
#else
    static const void* volatile sink;
    sink = pointer;
#endif
}

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point start, Clock::time_point end) {
    return std::chrono::duration<double, std::milli>(end - start).count();
}

/// CPU time of the calling thread in ms (NaN where unavailable). With one thread everywhere,
/// libtorch's kernels run on the calling thread too; on a loaded machine this leaves out the
/// time the thread waited for a core, which the wall clock counts.
double thread_cpu_ms() {
#if defined(CLOCK_THREAD_CPUTIME_ID)
    timespec now{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) == 0)
        return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) * 1e-6;
#endif
    return std::numeric_limits<double>::quiet_NaN();
}

double median_of(std::vector<double> values) {
    if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// ---------------------------------------------------------------------------------------------
// Interleaved timing

struct Contender {
    Contender(std::string label_, std::function<void()> run_)
        : label(std::move(label_)), run(std::move(run_)) {}

    std::string label;
    std::function<void()> run;
    int calls_per_sample = 1;
    std::vector<double> wall_ms;  // per call, one per round
    std::vector<double> cpu_ms;   // per call, one per round

    double median() const { return median_of(wall_ms); }
    double min() const { return *std::min_element(wall_ms.begin(), wall_ms.end()); }
    double cpu_median() const { return median_of(cpu_ms); }
};

/// What the caches hold when a sample starts. Without a rule, a contender would start from
/// whatever the one before it left: a gather timed right after another gather of the same ids
/// finds most of its rows in L3, one timed after the memcpy finds none (measured here: the same
/// evaluation 2.5 ms after a gather, 3.0 after the memcpy, 2-core AMD EPYC Zen 5).
enum class CacheState {
    /// Each sample starts after an untimed read of a buffer four times the last-level cache, so
    /// the tables and the memcpy's source come from memory, as in a model whose layers run
    /// between two calls of its input stage.
    cold,
    /// Each sample starts right after an untimed call of the same contender: its own steady
    /// state, never another contender's leftovers.
    warm
};

const char* describe(CacheState state) {
    return state == CacheState::cold ? "caches evicted before every sample (cold)"
                                     : "every sample follows an untimed call of its own (warm)";
}

/// Evicts the caches by reading a buffer four times the last-level cache (at least 128 MiB).
class CacheScrubber {
public:
    CacheScrubber() : m_lines(buffer_bytes() / sizeof(std::uint64_t), 1) {}

    /// Reads a word of every 64-byte line of the buffer.
    void scrub() {
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < m_lines.size(); i += 64 / sizeof(std::uint64_t)) sum += m_lines[i];
        m_sink = sum;
    }

private:
    static std::size_t buffer_bytes() {
        std::size_t last_level = std::size_t{32} << 20;
#if defined(_SC_LEVEL3_CACHE_SIZE)
        const long reported = sysconf(_SC_LEVEL3_CACHE_SIZE);
        if (reported > 0) last_level = static_cast<std::size_t>(reported);
#endif
        return std::max(std::size_t{128} << 20, 4 * last_level);
    }

    std::vector<std::uint64_t> m_lines;
    volatile std::uint64_t m_sink = 0;
};

/// One untimed call each (page faults, lazy initialisation), then calls until sample_ms have
/// passed, which sets how many calls make a sample; then `rounds` rounds: every contender takes
/// one sample per round, starting from a different contender each round, from the cache state
/// `state`.
void run_interleaved(std::vector<Contender>& contenders, int rounds, double sample_ms,
                     CacheState state) {
    static CacheScrubber scrubber;
    for (Contender& contender : contenders) {
        contender.run();
        int calls = 0;
        const auto start = Clock::now();
        do {
            contender.run();
            ++calls;
        } while (elapsed_ms(start, Clock::now()) < sample_ms && calls < 1000000);
        contender.calls_per_sample = calls;
        contender.wall_ms.clear();
        contender.cpu_ms.clear();
    }
    const std::size_t count = contenders.size();
    for (int round = 0; round < rounds; ++round) {
        for (std::size_t k = 0; k < count; ++k) {
            Contender& contender = contenders[(k + static_cast<std::size_t>(round)) % count];
            if (state == CacheState::cold) {
                scrubber.scrub();
            } else {
                contender.run();
            }
            const double cpu_start = thread_cpu_ms();
            const auto start = Clock::now();
            for (int call = 0; call < contender.calls_per_sample; ++call) contender.run();
            const auto end = Clock::now();
            const double cpu_end = thread_cpu_ms();
            contender.wall_ms.push_back(elapsed_ms(start, end) / contender.calls_per_sample);
            contender.cpu_ms.push_back((cpu_end - cpu_start) / contender.calls_per_sample);
        }
    }
}

/// Prints the contenders' wall-clock medians and minima, the output rate at the median when
/// bytes > 0, and the median thread CPU time.
void print_timings(const std::vector<Contender>& contenders, double bytes) {
    std::printf("  %-58s %10s %9s %8s %11s %6s\n", "contender", "median ms", "min ms", "GB/s",
                "cpu med ms", "calls");
    for (const Contender& contender : contenders) {
        const double median = contender.median();
        std::printf("  %-58s %10.3f %9.3f %8.2f %11.3f %6d\n", contender.label.c_str(), median,
                    contender.min(), bytes / (median * 1e-3) / 1e9, contender.cpu_median(),
                    contender.calls_per_sample);
    }
}

const Contender* find(const std::vector<Contender>& contenders, const std::string& prefix) {
    for (const Contender& contender : contenders)
        if (contender.label.compare(0, prefix.size(), prefix) == 0) return &contender;
    return nullptr;
}

/// Prints numerator / denominator of the wall-clock medians (and of the CPU-time medians), and
/// the verdict against a target when one is given: at_most (ratio <= target) or at_least.
enum class Goal { none, at_most, at_least };
void print_ratio(const char* what, const Contender* numerator, const Contender* denominator,
                 Goal goal = Goal::none, double target = 0.0) {
    if (numerator == nullptr || denominator == nullptr) return;
    const double ratio = numerator->median() / denominator->median();
    const double cpu_ratio = numerator->cpu_median() / denominator->cpu_median();
    std::printf("  %-36s %8.2fx (cpu %6.2fx)", what, ratio, cpu_ratio);
    if (goal != Goal::none) {
        const bool met = goal == Goal::at_most ? ratio <= target : ratio >= target;
        const double miss = goal == Goal::at_most ? ratio / target : target / ratio;
        std::printf("   target %s %.3gx: ", goal == Goal::at_most ? "<=" : ">=", target);
        if (met)
            std::printf("met");
        else
            std::printf("MISSED by a factor %.2f", miss);
    }
    std::printf("\n");
}

// ---------------------------------------------------------------------------------------------
// Checks

struct DropStats {
    double dropped_fraction = 0.0;
    double max_kept_error = 0.0;  // |train - eval / (1 - p)| over kept values
};

/// Compares a training output with the evaluation output of the same input.
DropStats drop_stats(const float* train, const float* eval, std::size_t count) {
    DropStats stats;
    std::size_t dropped = 0;
    const float scale = 1.0f / static_cast<float>(1.0 - dropout_p);
    for (std::size_t i = 0; i < count; ++i) {
        if (train[i] == 0.0f && eval[i] != 0.0f) {
            ++dropped;
        } else {
            stats.max_kept_error = std::max(
                stats.max_kept_error,
                std::abs(static_cast<double>(train[i]) - static_cast<double>(eval[i] * scale)));
        }
    }
    stats.dropped_fraction = static_cast<double>(dropped) / static_cast<double>(count);
    return stats;
}

[[maybe_unused]] std::size_t count_different(const float* a, const float* b, std::size_t count) {
    std::size_t different = 0;
    for (std::size_t i = 0; i < count; ++i) different += a[i] != b[i] ? 1 : 0;
    return different;
}

[[maybe_unused]] double max_abs_diff(const float* a, const float* b, std::size_t count) {
    double worst = 0.0;
    for (std::size_t i = 0; i < count; ++i)
        worst = std::max(worst, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    return worst;
}

/// Largest error of a float table against a double reference, in units of the float spacing
/// at the reference value.
double max_ulp_error(const float* table, const double* reference, std::size_t count) {
    double worst = 0.0;
    for (std::size_t i = 0; i < count; ++i) {
        const float rounded = static_cast<float>(reference[i]);
        const float next = std::nextafter(std::abs(rounded), std::numeric_limits<float>::infinity());
        const double ulp = static_cast<double>(next) - static_cast<double>(std::abs(rounded));
        worst = std::max(worst, std::abs(static_cast<double>(table[i]) - reference[i]) / ulp);
    }
    return worst;
}

bool g_checks_passed = true;

void report_check(const char* what, bool passed) {
    std::printf("  check %-66s %s\n", what, passed ? "OK" : "FAILED");
    if (!passed) g_checks_passed = false;
}

// ---------------------------------------------------------------------------------------------
// The pipeline workload

struct Workload {
    Index batch;
    Index length;
    Index d_model;
    Index vocab;
    bool headline;
    CacheState cache;
};

void compare_pipeline(const Workload& w, int rounds, double sample_ms) {
    const Index tokens = w.batch * w.length;
    const std::size_t count = static_cast<std::size_t>(tokens * w.d_model);
    const double bytes = static_cast<double>(count * sizeof(float));
    std::printf("\n== InputPipeline: batch %ld, length %ld, d_model %ld, vocab %ld, float, one "
                "thread%s ==\n",
                static_cast<long>(w.batch), static_cast<long>(w.length),
                static_cast<long>(w.d_model), static_cast<long>(w.vocab),
                w.headline ? " (issue 3's headline)" : "");
    std::printf("  output %ld x %ld floats = %.1f MiB; token table %.1f MiB; sinusoidal table "
                "5000 rows (exact); uniform random ids\n",
                static_cast<long>(tokens), static_cast<long>(w.d_model), bytes / 1048576.0,
                static_cast<double>(w.vocab * w.d_model) * sizeof(float) / 1048576.0);

    std::vector<float> weights(static_cast<std::size_t>(w.vocab * w.d_model));
    seqembed_bench::fill_uniform(weights.data(), weights.size(), 1);
    const seqembed::IdMatrix ids = seqembed_bench::random_ids(w.batch, w.length, w.vocab, 2);

    seqembed::InputPipeline<float> eval_pipeline(
        seqembed::TokenEmbedding<float>::from_weights(
            Eigen::Map<const RowMatrix<float>>(weights.data(), w.vocab, w.d_model)),
        seqembed::SinusoidalPositionalEncoding<float>(w.d_model), {dropout_p, /*seed=*/3});
    seqembed::InputPipeline<float> train_pipeline = eval_pipeline;
    train_pipeline.set_training(true);

    RowMatrix<float> out = RowMatrix<float>::Zero(tokens, w.d_model);
    std::vector<float> source(count);
    seqembed_bench::fill_uniform(source.data(), source.size(), 7);

    // Checks first (their outputs are kept apart from `out`).
    const RowMatrix<float> seq_eval = eval_pipeline.forward(ids);
    RowMatrix<float> seq_train(tokens, w.d_model);
    train_pipeline.forward_into(ids, seq_train);
    const DropStats seq_drop = drop_stats(seq_train.data(), seq_eval.data(), count);

    std::vector<Contender> contenders;
    contenders.push_back({"(b) memcpy of the output bytes", [&] {
                              std::memcpy(out.data(), source.data(), count * sizeof(float));
                              escape(out.data());
                          }});
    contenders.push_back({"(a) seqembed eval forward_into", [&] {
                              eval_pipeline.forward_into(ids, out);
                              escape(out.data());
                          }});
    contenders.push_back({"(a) seqembed train forward_into (p=0.1)", [&] {
                              train_pipeline.forward_into(ids, out);
                              escape(out.data());
                          }});
    RowMatrix<float> allocated;
    contenders.push_back({"(info) seqembed eval forward (allocates its output)", [&] {
                              allocated = eval_pipeline.forward(ids);
                              escape(allocated.data());
                          }});

    // Two threads (PipelineOptions::threads): the same output bit for bit, more memory
    // requests in flight.
    seqembed::PipelineOptions two_threads{dropout_p, /*seed=*/3};
    two_threads.threads = 2;
    seqembed::InputPipeline<float> eval_two(eval_pipeline.embedding(), eval_pipeline.positions(),
                                            two_threads);
    seqembed::InputPipeline<float> train_two = eval_two;
    train_two.set_training(true);
    contenders.push_back({"(info) seqembed eval forward_into, threads = 2", [&] {
                              eval_two.forward_into(ids, out);
                              escape(out.data());
                          }});
    contenders.push_back({"(info) seqembed train forward_into, threads = 2", [&] {
                              train_two.forward_into(ids, out);
                              escape(out.data());
                          }});

    // The reference point: the same sum as one plain Eigen expression per row, no
    // checks, no dropout (FMA contraction allowed, so not bit-identical to libtorch).
    const auto plain_table = eval_pipeline.embedding().table();  // the same memory
    const auto plain_positions = eval_pipeline.positions().table();
    const float plain_scale = eval_pipeline.embedding().scale();
    contenders.push_back({"(info) a plain Eigen loop of the same sum", [&] {
                              for (Index b = 0; b < w.batch; ++b)
                                  for (Index t = 0; t < w.length; ++t)
                                      out.row(b * w.length + t) =
                                          plain_table.row(ids(b, t)) * plain_scale +
                                          plain_positions.row(t);
                              escape(out.data());
                          }});

    // A bfloat16 token table: half the bytes gathered.
    using Bf16Embedding = seqembed::TokenEmbedding<float, Eigen::bfloat16>;
    const seqembed::RowMatrix<Eigen::bfloat16> narrow_weights =
        Eigen::Map<const RowMatrix<float>>(weights.data(), w.vocab, w.d_model)
            .cast<Eigen::bfloat16>();
    const seqembed::InputPipeline<float, seqembed::SinusoidalPositionalEncoding<float>,
                                  Bf16Embedding>
        eval_bf16(Bf16Embedding::from_weights(narrow_weights), eval_pipeline.positions());
    contenders.push_back({"(info) seqembed eval forward_into, bfloat16 table", [&] {
                              eval_bf16.forward_into(ids, out);
                              escape(out.data());
                          }});

#if SEQEMBED_HAVE_TORCH
    torch::NoGradGuard no_grad;
    torch::nn::Embedding embedding{torch::nn::EmbeddingOptions(w.vocab, w.d_model)};
    embedding->weight.copy_(torch::from_blob(weights.data(), {w.vocab, w.d_model}, torch::kFloat));
    embedding->eval();
    torch::nn::Dropout dropout{torch::nn::DropoutOptions(dropout_p)};
    dropout->train();
    // seed 001's buffer: [1, max_positions, d], here seqembed's own table so that both add the same
    // position values; its float32 formula is timed in the table section.
    const auto table = eval_pipeline.positions().table();
    const torch::Tensor pe =
        torch::from_blob(const_cast<float*>(table.data()), {1, table.rows(), table.cols()},
                         torch::kFloat)
            .clone();
    const torch::Tensor ids_t =
        torch::from_blob(const_cast<std::int64_t*>(ids.data()), {w.batch, w.length}, torch::kLong)
            .clone();
    const double scale = std::sqrt(static_cast<double>(w.d_model));  // math.sqrt(d)
    auto torch_eval = [&] {
        return embedding->forward(ids_t) * scale + pe.slice(1, 0, w.length);
    };
    auto torch_train = [&] { return dropout->forward(torch_eval()); };

    const torch::Tensor torch_eval_out = torch_eval().contiguous();
    const torch::Tensor torch_train_out = torch_train().contiguous();
    const double eval_diff = max_abs_diff(seq_eval.data(), torch_eval_out.data_ptr<float>(), count);
    const std::size_t eval_different =
        count_different(seq_eval.data(), torch_eval_out.data_ptr<float>(), count);
    const DropStats torch_drop =
        drop_stats(torch_train_out.data_ptr<float>(), torch_eval_out.data_ptr<float>(), count);

    torch::Tensor sink;  // as `y = model(x)` in a loop: the previous output is freed in the call
    contenders.push_back({"(c) libtorch eval: emb(ids) * sqrt(d) + pe[:, :L]", [&] {
                              sink = torch_eval();
                              escape(sink.data_ptr());
                          }});
    contenders.push_back({"(c) libtorch train: Dropout(0.1)(emb(ids) * sqrt(d) + pe)", [&] {
                              sink = torch_train();
                              escape(sink.data_ptr());
                          }});
#endif

    std::printf("  checks (before timing):\n");
#if SEQEMBED_HAVE_TORCH
    char line[160];
    std::snprintf(line, sizeof line,
                  "eval output, seqembed vs libtorch (same weights, same pe): max |diff| %.3g <= %g",
                  eval_diff, tolerance);
    report_check(line, eval_diff <= tolerance);
    if (eval_different == 0)
        std::printf("        bitwise identical\n");
    else
        std::printf("        %zu of %zu values differ bitwise (x * scale + pe contracted into an "
                    "FMA rounds once instead of twice)\n",
                    eval_different, count);
    std::snprintf(line, sizeof line, "train: libtorch drops %.3f%% (p = %g), kept = eval / 0.9 within %.2g",
                  100.0 * torch_drop.dropped_fraction, dropout_p, torch_drop.max_kept_error);
    report_check(line, std::abs(torch_drop.dropped_fraction - dropout_p) < 0.01 &&
                           torch_drop.max_kept_error <= tolerance);
#else
    std::printf("  libtorch: absent (configure with -DSEQEMBED_WITH_TORCH=ON and Debian's "
                "libtorch-dev, e.g. the `compare` preset), contenders (c) skipped\n");
#endif
    {
        char text[160];
        std::snprintf(text, sizeof text,
                      "train: seqembed drops %.3f%% (p = %g), kept = eval / 0.9 within %.2g",
                      100.0 * seq_drop.dropped_fraction, dropout_p, seq_drop.max_kept_error);
        report_check(text, std::abs(seq_drop.dropped_fraction - dropout_p) < 0.01 &&
                               seq_drop.max_kept_error <= tolerance);
    }

    run_interleaved(contenders, rounds, sample_ms, w.cache);
    std::printf("  %d interleaved rounds (order rotated every round), %s, a sample lasts >= %.1f "
                "ms (calls per sample in the last column)\n",
                rounds, describe(w.cache), sample_ms);
    print_timings(contenders, bytes);

    const Contender* memcpy_c = find(contenders, "(b)");
    const Contender* seq_eval_c = find(contenders, "(a) seqembed eval");
    const Contender* seq_train_c = find(contenders, "(a) seqembed train");
    const Contender* torch_eval_c = find(contenders, "(c) libtorch eval");
    const Contender* torch_train_c = find(contenders, "(c) libtorch train");
    std::printf("  ratios of the medians%s:\n",
                w.headline ? " (issue 3's targets apply at the bench preset's flags)" : "");
    print_ratio("eval:  seqembed / memcpy", seq_eval_c, memcpy_c,
                w.headline ? Goal::at_most : Goal::none, 1.3);
    print_ratio("eval:  libtorch / seqembed", torch_eval_c, seq_eval_c,
                w.headline ? Goal::at_least : Goal::none, 15.0);
    print_ratio("train: seqembed / memcpy", seq_train_c, memcpy_c,
                w.headline ? Goal::at_most : Goal::none, 2.0);
    print_ratio("train: libtorch / seqembed", torch_train_c, seq_train_c,
                w.headline ? Goal::at_least : Goal::none, 40.0);
    print_ratio("eval:  libtorch / memcpy", torch_eval_c, memcpy_c);
    print_ratio("train: libtorch / memcpy", torch_train_c, memcpy_c);
}

// ---------------------------------------------------------------------------------------------
// The sinusoidal table

// Seed 001's table: max_length 5000, d_model 512.
constexpr Index table_rows = 5000;
constexpr Index table_width = 512;

void compare_table(int rounds, double sample_ms) {
    const Index max_positions = table_rows;
    const Index d_model = table_width;
    const auto count = static_cast<std::size_t>(max_positions * d_model);
    std::printf("\n== Sinusoidal table %ld x %ld float (seed 001's buffer), one thread ==\n",
                static_cast<long>(max_positions), static_cast<long>(d_model));

    seqembed::SinusoidalOptions exact_options;
    exact_options.max_positions = max_positions;
    seqembed::SinusoidalOptions scalar_options = exact_options;
    scalar_options.precision = seqembed::TablePrecision::follow_scalar;

    std::vector<Contender> contenders;
    contenders.push_back({"(d) seqembed exact (TablePrecision::exact)", [&] {
                              seqembed::SinusoidalPositionalEncoding<float> t(d_model,
                                                                             exact_options);
                              escape(t.table().data());
                          }});
    contenders.push_back({"(info) seqembed follow_scalar (PyTorch's float32 arithmetic)", [&] {
                              seqembed::SinusoidalPositionalEncoding<float> t(d_model,
                                                                             scalar_options);
                              escape(t.table().data());
                          }});

    // Accuracy against the double table (itself within an ulp of double, so exact for floats).
    const seqembed::SinusoidalPositionalEncoding<double> reference(d_model, exact_options);
    const seqembed::SinusoidalPositionalEncoding<float> seq_exact(d_model, exact_options);
    const seqembed::SinusoidalPositionalEncoding<float> seq_scalar(d_model, scalar_options);
    const double* exact = reference.table().data();

#if SEQEMBED_HAVE_TORCH
    // Seed 001, as PyTorch runs it.
    auto torch_table = [] {
        const std::int64_t rows = table_rows;
        const std::int64_t width = table_width;
        torch::Tensor pe = torch::zeros({rows, width});
        const torch::Tensor position = torch::arange(0, rows, torch::kFloat).unsqueeze(1);
        const torch::Tensor div_term =
            torch::exp(torch::arange(0, width, 2).to(torch::kFloat) *
                       (-std::log(10000.0) / static_cast<double>(width)));
        pe.slice(1, 0, width, 2).copy_(torch::sin(position * div_term));
        pe.slice(1, 1, width, 2).copy_(torch::cos(position * div_term));
        return pe.unsqueeze(0);
    };
    torch::Tensor sink;
    contenders.push_back({"(d) libtorch seed 001 float32 formula", [&] {
                              sink = torch_table();
                              escape(sink.data_ptr());
                          }});
    const torch::Tensor torch_pe = torch_table().contiguous();
#endif

    auto max_error = [&](const float* table) {
        double worst = 0.0;
        for (std::size_t i = 0; i < count; ++i)
            worst = std::max(worst, std::abs(static_cast<double>(table[i]) - exact[i]));
        return worst;
    };
    const double exact_ulps = max_ulp_error(seq_exact.table().data(), exact, count);
    std::printf("  accuracy, max |error| against the exact values:\n");
    std::printf("    seqembed exact          %.3g (%.3g ulp of float at the exact value)\n",
                max_error(seq_exact.table().data()), exact_ulps);
    std::printf("    seqembed follow_scalar  %.3g\n", max_error(seq_scalar.table().data()));
#if SEQEMBED_HAVE_TORCH
    std::printf("    libtorch float32        %.3g (max |libtorch - seqembed follow_scalar| %.3g)\n",
                max_error(torch_pe.data_ptr<float>()),
                max_abs_diff(torch_pe.data_ptr<float>(), seq_scalar.table().data(), count));
#endif
    report_check("seqembed exact float table within 1 ulp of the exact values", exact_ulps <= 1.0);

    run_interleaved(contenders, rounds, sample_ms, CacheState::warm);
    std::printf("  %d interleaved rounds (order rotated every round), %s; allocation included\n",
                rounds, describe(CacheState::warm));
    print_timings(contenders, static_cast<double>(count * sizeof(float)));
    std::printf("  ratios of the medians:\n");
    print_ratio("libtorch / seqembed exact", find(contenders, "(d) libtorch"),
                find(contenders, "(d) seqembed exact"), Goal::at_least, 1.0);
    print_ratio("libtorch / seqembed follow_scalar", find(contenders, "(d) libtorch"),
                find(contenders, "(info) seqembed follow_scalar"));
}

// ---------------------------------------------------------------------------------------------

void print_machine() {
    std::printf("== Machine and build ==\n");
    std::printf("  cpu:       %s, %u logical CPUs; %s\n", seqembed_bench::cpu_model().c_str(),
                seqembed_bench::logical_cpus(), seqembed_bench::cache_summary().c_str());
    std::printf("  compiler:  %s\n", seqembed_bench::compiler().c_str());
    std::printf("  flags:     %s (build type %s)\n", SEQEMBED_BENCH_CXX_FLAGS,
                SEQEMBED_BENCH_BUILD_TYPE);
    std::printf("  vector:    %s (compile time)\n", seqembed_bench::vector_isa().c_str());
    std::printf("  seqembed:  %s, Eigen %s\n", seqembed_bench::seqembed_version().c_str(),
                seqembed_bench::eigen_summary().c_str());
#if SEQEMBED_HAVE_TORCH
    std::string capability = "(unknown)";
    const std::string config = at::show_config();
    const std::string key = "CPU capability usage:";
    const auto where = config.find(key);
    if (where != std::string::npos) {
        const auto end = config.find('\n', where);
        capability =
            seqembed_bench::trimmed(config.substr(where + key.size(), end - where - key.size()));
    }
    std::printf("  libtorch:  %s, kernels %s, %d intra-op thread(s), %d inter-op thread(s)\n",
                TORCH_VERSION, capability.c_str(), at::get_num_threads(),
                at::get_num_interop_threads());
#else
    std::printf("  libtorch:  absent\n");
#endif
}

void usage() {
    std::printf("usage: seqembed_compare [--rounds N] [--headline-only] [--no-table] "
                "[--sample-ms MS] [--warm]\n"
                "  --rounds N        interleaved rounds, the median is over them (default 31)\n"
                "  --headline-only   skip the small workload\n"
                "  --no-table        skip the sinusoidal table comparison\n"
                "  --sample-ms MS    repeat a short call until a sample lasts MS ms (default 1)\n"
                "  --warm            time the headline warm (after an untimed call of the same\n"
                "                    contender) instead of cold (caches evicted before each sample)\n");
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = 31;
    bool small = true;
    bool table = true;
    double sample_ms = 1.0;
    CacheState headline_cache = CacheState::cold;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--rounds" && i + 1 < argc) {
            rounds = std::max(1, std::atoi(argv[++i]));
        } else if (arg == "--sample-ms" && i + 1 < argc) {
            sample_ms = std::max(0.0, std::atof(argv[++i]));
        } else if (arg == "--headline-only") {
            small = false;
        } else if (arg == "--no-table") {
            table = false;
        } else if (arg == "--warm") {
            headline_cache = CacheState::warm;
        } else {
            usage();
            return arg == "--help" || arg == "-h" ? 0 : 2;
        }
    }

#if SEQEMBED_HAVE_TORCH
    // One thread for libtorch too, before its thread pools start.
    at::set_num_threads(1);
    try {
        at::set_num_interop_threads(1);
    } catch (const std::exception& error) {
        std::printf("note: at::set_num_interop_threads(1) refused: %s\n", error.what());
    }
#endif

    print_machine();
    compare_pipeline({32, 512, 512, 32000, true, headline_cache}, rounds, sample_ms);
    // Small enough for the caches: timed in its steady state.
    if (small) compare_pipeline({8, 128, 256, 8000, false, CacheState::warm}, rounds, sample_ms);
    if (table) compare_table(rounds, sample_ms);

    std::printf("\n%s\n", g_checks_passed ? "all checks passed" : "SOME CHECKS FAILED");
    return g_checks_passed ? 0 : 1;
}
