// seqembed_compare: seqembed side by side with a memcpy of the same bytes, a plain Eigen loop of
// the same sum and libtorch doing the same work, interleaved in one process, one thread
// (issues 3 and 11). bench/README.md describes what it measures and how to run one row.
//
// The sections, in this order (BERT's input stage and rotary positions, issues 14 and 15, come
// between the training step and the matrix):
//   headline  issue 3's workload (batch 32, length 512, d_model 512, vocab 32000, float), cold:
//             seqembed InputPipeline::forward_into in evaluation and training (dropout 0.1), a
//             memcpy of the output bytes, libtorch's `emb(ids) * sqrt(d) + pe[:, :L]` (and
//             Dropout(0.1) in training), and for information `forward`, two threads, a bfloat16
//             table and a plain Eigen loop; checked first: seqembed's evaluation output equals
//             libtorch's (bit for bit is reported), both drop about 10% in training.
//   table     the 5000 x 512 float sinusoidal table: seqembed exact and follow_scalar against
//             libtorch's float32 formula of seed 001.
//   training  issue 28's whole training step on the headline batch (learned positions, dropout
//             0.1, SparseAdam on the token table, Adam on the positions), warm: seqembed unfused
//             and fused (backward_step), the bytes the SparseAdam step moves, and libtorch's
//             modules with autograd; checked first: the fused step equals the unfused one.
//   matrix    issue 11's matrix (bench/matrix.hpp): d_model 256, 512, 768, 1024, 4096 x
//             sinusoidal / learned / no positions x float / bfloat16 table x evaluation /
//             training (p = 0.1) x warm / cold. Each row interleaves six contenders: seqembed
//             forward_into, a memcpy of the output bytes, a plain Eigen loop of the same sum, and
//             each of seqembed (automatic stores), seqembed (OutputStores::cached) and the memcpy
//             followed by the first consumer (a sum of every output value). It ends with a
//             markdown table of the medians and ratios, ready for docs/performance.md.
// The contenders of a section run in turn inside each round, the order rotated from round to
// round, so that a noisy neighbour or a frequency change hits them alike; no sample starts from
// what another contender left in the caches (cold: the caches are evicted before every sample;
// warm: every sample follows an untimed call of the same contender). Checks run before timing
// and make the program exit 1 when they fail; missed performance targets do not (these are
// benchmarks, not timed tests).
//
//   seqembed_compare [--rounds N] [--headline-rounds N] [--sample-ms MS] [--warm]
//                    [--no-headline] [--no-table] [--no-training] [--training-only]
//                    [--no-matrix] [--matrix-only]
//                    [--d-model LIST] [--positions LIST] [--storage LIST] [--mode LIST]
//                    [--cache LIST]
#include <seqembed/optim.hpp>
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
#include <type_traits>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "matrix.hpp"

#if SEQEMBED_HAVE_TORCH
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <torch/torch.h>
#endif

namespace {

using seqembed::Index;
using seqembed::RowMatrix;
using seqembed_bench::CacheState;

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

/// Where the end-to-end readers leave their sums, so that the compiler keeps them.
volatile float g_read_sink = 0.0f;

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

std::string describe(CacheState state) {
    if (state == CacheState::warm) return "every sample follows an untimed call of its own (warm)";
    const double mib = static_cast<double>(seqembed_bench::CacheScrubber::instance().bytes()) /
                       1048576.0;
    char text[96];
    std::snprintf(text, sizeof text, "caches evicted before every sample by a %.0f MiB read (cold)",
                  mib);
    return text;
}

/// One untimed call each (page faults, lazy initialisation), then, warm, calls until sample_ms
/// have passed, which sets how many calls make a sample (cold, a sample is one call: only the
/// first call after the eviction is cold); then `rounds` rounds: every contender takes one
/// sample per round, starting from a different contender each round, from the cache state
/// `state`.
void run_interleaved(std::vector<Contender>& contenders, int rounds, double sample_ms,
                     CacheState state) {
    seqembed_bench::CacheScrubber& scrubber = seqembed_bench::CacheScrubber::instance();
    for (Contender& contender : contenders) {
        contender.run();
        int calls = 0;
        const auto start = Clock::now();
        if (state == CacheState::cold) {
            calls = 1;
        } else {
            do {
                contender.run();
                ++calls;
            } while (elapsed_ms(start, Clock::now()) < sample_ms && calls < 1000000);
        }
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
// Training (issue 28): the whole step of the headline workload, against libtorch

/// The headline batch trained: token table (sparse gradient, SparseAdam), learned positions
/// (Adam), dropout 0.1; forward in training mode, backward from a fixed output gradient, both
/// steps. seqembed unfused (backward, then each step) and fused (backward_step), the bytes a
/// SparseAdam step moves, and libtorch's modules with autograd doing the same.
void compare_training(int rounds, double sample_ms) {
    const Index batch = 32, length = 512, d_model = 512, vocab = 32000;
    const Index tokens = batch * length;
    const std::size_t count = static_cast<std::size_t>(tokens * d_model);
    const double bytes = static_cast<double>(count * sizeof(float));
    const double lr = 1e-4;
    std::printf("\n== Training step: batch %ld, length %ld, d_model %ld, vocab %ld, float, one thread "
                "(issue 28's headline) ==\n",
                static_cast<long>(batch), static_cast<long>(length), static_cast<long>(d_model),
                static_cast<long>(vocab));
    std::printf("  forward (training, p = %.1f), backward, SparseAdam on the token table, Adam on the learned "
                "positions; uniform random ids\n",
                dropout_p);

    std::vector<float> weights(static_cast<std::size_t>(vocab * d_model));
    seqembed_bench::fill_uniform(weights.data(), weights.size(), 1);
    std::vector<float> position_weights(static_cast<std::size_t>(length * d_model));
    seqembed_bench::fill_uniform(position_weights.data(), position_weights.size(), 4);
    const seqembed::IdMatrix ids = seqembed_bench::random_ids(batch, length, vocab, 2);
    RowMatrix<float> grad_out(tokens, d_model);
    seqembed_bench::fill_uniform(grad_out.data(), count, 5);
    const seqembed::Batch ids_batch(ids);

    using Pipeline = seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>>;
    const auto make_pipeline = [&](double p) {
        Pipeline pipeline(seqembed::TokenEmbedding<float>::from_weights(
                              Eigen::Map<const RowMatrix<float>>(weights.data(), vocab, d_model)),
                          seqembed::LearnedPositionalEmbedding<float>::from_weights(
                              Eigen::Map<const RowMatrix<float>>(position_weights.data(), length, d_model)),
                          {p, /*seed=*/3});
        pipeline.set_training(true);
        return pipeline;
    };
    struct Trainer {
        Pipeline pipeline;
        seqembed::optim::SparseAdam<float> token_step;
        seqembed::optim::Adam<float> position_step;
        RowMatrix<float> out;
    };
    const auto make_trainer = [&](double p) {
        return Trainer{make_pipeline(p), seqembed::optim::SparseAdam<float>("token table", vocab, d_model),
                       seqembed::optim::Adam<float>("positions", length, d_model), RowMatrix<float>(tokens, d_model)};
    };
    const auto unfused_step = [&](Trainer& t) {
        const std::uint64_t call = t.pipeline.forward_into(ids_batch, t.out).value_or(0);
        const seqembed::PipelineGradients<float> grads = t.pipeline.backward(ids_batch, grad_out, call);
        const seqembed::PipelineTables<float> tables = t.pipeline.trainable();
        t.token_step.step(tables.token->weights, grads.token, lr);
        t.position_step.step(tables.positions->weights, grads.positions, lr);
    };
    const auto fused_step = [&](Trainer& t) {
        const std::uint64_t call = t.pipeline.forward_into(ids_batch, t.out).value_or(0);
        const seqembed::PipelineGradients<float> grads = t.pipeline.backward_step(ids_batch, grad_out, call, t.token_step, lr);
        t.position_step.step(t.pipeline.trainable().positions->weights, grads.positions, lr);
    };
    Trainer unfused = make_trainer(dropout_p);
    Trainer fused = make_trainer(dropout_p);
    unfused_step(unfused);  // the state allocated, the tables made the pipelines' own
    fused_step(fused);
    report_check("a fused step equals the unfused step, bit for bit",
                 fused.pipeline.embedding().table() == unfused.pipeline.embedding().table() &&
                     fused.pipeline.positions().table() == unfused.pipeline.positions().table());

    // The floor of the token table's step (seqembed_bench::move_sparse_adam_bytes).
    const seqembed::PipelineGradients<float> first_grads = unfused.pipeline.backward(ids_batch, grad_out, 0);
    const seqembed::RowGradient<float>& token_gradient = first_grads.token;
    RowMatrix<float> moved_weights = Eigen::Map<const RowMatrix<float>>(weights.data(), vocab, d_model);
    RowMatrix<float> moment_one = seqembed::detail::new_zeros<float>(vocab, d_model);
    RowMatrix<float> moment_two = seqembed::detail::new_zeros<float>(vocab, d_model);
    const double state_bytes =
        7.0 * static_cast<double>(token_gradient.rows.size()) * static_cast<double>(d_model) * sizeof(float);
    std::printf("  touched token rows %zu: a SparseAdam step moves %.1f MiB\n", token_gradient.rows.size(),
                state_bytes / 1048576.0);

    std::vector<Contender> contenders;
    contenders.push_back({"(a) seqembed step: forward, backward, SparseAdam, Adam", [&] {
                              unfused_step(unfused);
                              escape(unfused.out.data());
                          }});
    contenders.push_back({"(a) seqembed fused: forward, backward_step, Adam", [&] {
                              fused_step(fused);
                              escape(fused.out.data());
                          }});
    contenders.push_back({"(b) the bytes of the SparseAdam step, moved", [&] {
                              seqembed_bench::move_sparse_adam_bytes(moved_weights, moment_one, moment_two,
                                                                     token_gradient);
                              escape(moved_weights.data());
                          }});

#if SEQEMBED_HAVE_TORCH
    // The PyTorch program in libtorch: nn.Embedding(sparse=True) scaled by sqrt(d) (as
    // the pipeline's default scale), a learned nn.Embedding of positions, dropout, the output's
    // gradient given to backward, SparseAdam and Adam.
    torch::nn::Embedding embedding{torch::nn::EmbeddingOptions(vocab, d_model).sparse(true)};
    torch::nn::Embedding positions{torch::nn::EmbeddingOptions(length, d_model)};
    torch::nn::Dropout dropout{torch::nn::DropoutOptions(dropout_p)};
    {
        torch::NoGradGuard no_grad;
        embedding->weight.copy_(torch::from_blob(weights.data(), {vocab, d_model}, torch::kFloat));
        positions->weight.copy_(torch::from_blob(position_weights.data(), {length, d_model}, torch::kFloat));
    }
    dropout->train();
    // libtorch's C++ API has no SparseAdam: torch.optim.SparseAdam's step (torch/optim/
    // sparse_adam.py, 1.13) in the same tensor operations.
    torch::Tensor exp_avg = torch::zeros_like(embedding->weight);
    torch::Tensor exp_avg_sq = torch::zeros_like(embedding->weight);
    std::int64_t sparse_steps = 0;
    const auto sparse_adam_step = [&] {
        torch::NoGradGuard no_grad;
        const double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
        ++sparse_steps;
        const torch::Tensor grad = embedding->weight.grad().coalesce();
        const torch::Tensor indices = grad._indices();
        const torch::Tensor values = grad._values();
        const auto make_sparse = [&](const torch::Tensor& v) {
            return torch::sparse_coo_tensor(indices, v, grad.sizes());
        };
        const torch::Tensor old_exp_avg = exp_avg.sparse_mask(grad)._values();
        torch::Tensor exp_avg_update = values.sub(old_exp_avg).mul_(1 - beta1);
        exp_avg.add_(make_sparse(exp_avg_update));
        const torch::Tensor old_exp_avg_sq = exp_avg_sq.sparse_mask(grad)._values();
        torch::Tensor exp_avg_sq_update = values.pow(2).sub_(old_exp_avg_sq).mul_(1 - beta2);
        exp_avg_sq.add_(make_sparse(exp_avg_sq_update));
        const torch::Tensor numer = exp_avg_update.add_(old_exp_avg);
        exp_avg_sq_update.add_(old_exp_avg_sq);
        const torch::Tensor denom = exp_avg_sq_update.sqrt_().add_(eps);
        const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(sparse_steps));
        const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(sparse_steps));
        const double step_size = lr * std::sqrt(bias_correction2) / bias_correction1;
        embedding->weight.add_(make_sparse(-step_size * numer.div_(denom)));
    };
    torch::optim::Adam position_optimizer(std::vector<torch::Tensor>{positions->weight},
                                          torch::optim::AdamOptions(lr));
    const torch::Tensor ids_t =
        torch::from_blob(const_cast<std::int64_t*>(ids.data()), {batch, length}, torch::kLong).clone();
    const torch::Tensor position_ids = torch::arange(length, torch::kLong).unsqueeze(0);
    const torch::Tensor grad_t =
        torch::from_blob(grad_out.data(), {batch, length, d_model}, torch::kFloat).clone();
    const double scale = std::sqrt(static_cast<double>(d_model));
    const auto torch_step = [&] {
        embedding->weight.mutable_grad() = torch::Tensor();  // zero_grad(set_to_none=True)
        position_optimizer.zero_grad();
        const torch::Tensor out = dropout->forward(embedding->forward(ids_t) * scale + positions->forward(position_ids));
        out.backward(grad_t);
        sparse_adam_step();
        position_optimizer.step();
    };
    torch_step();
    contenders.push_back({"(c) libtorch step: forward, backward, SparseAdam, Adam", [&] {
                              torch_step();
                              escape(embedding->weight.data_ptr<float>());
                          }});
#endif

    run_interleaved(contenders, rounds, sample_ms, CacheState::warm);
    print_timings(contenders, bytes);
    const Contender* seq_step = find(contenders, "(a) seqembed step");
    const Contender* seq_fused = find(contenders, "(a) seqembed fused");
    const Contender* moved = find(contenders, "(b)");
    print_ratio("fused / unfused step", seq_fused, seq_step);
    print_ratio("step / the SparseAdam bytes moved", seq_step, moved);
#if SEQEMBED_HAVE_TORCH
    const Contender* torch_c = find(contenders, "(c)");
    print_ratio("libtorch / seqembed step", torch_c, seq_step, Goal::at_least, 10.0);
    print_ratio("libtorch / seqembed fused step", torch_c, seq_fused, Goal::at_least, 10.0);
#else
    std::printf("  (built without libtorch: scripts/run.sh compare builds it with)\n");
#endif
}

// ---------------------------------------------------------------------------------------------
// The headline workload (issue 3), against libtorch

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
    train_pipeline.forward_into(ids, seqembed::Padding::none(), seq_train);
    const DropStats seq_drop = drop_stats(seq_train.data(), seq_eval.data(), count);

    std::vector<Contender> contenders;
    contenders.push_back({"(b) memcpy of the output bytes", [&] {
                              std::memcpy(out.data(), source.data(), count * sizeof(float));
                              escape(out.data());
                          }});
    contenders.push_back({"(a) seqembed eval forward_into", [&] {
                              eval_pipeline.forward_into(ids, seqembed::Padding::none(), out);
                              escape(out.data());
                          }});
    contenders.push_back({"(a) seqembed train forward_into (p=0.1)", [&] {
                              train_pipeline.forward_into(ids, seqembed::Padding::none(), out);
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
                              eval_two.forward_into(ids, seqembed::Padding::none(), out);
                              escape(out.data());
                          }});
    contenders.push_back({"(info) seqembed train forward_into, threads = 2", [&] {
                              train_two.forward_into(ids, seqembed::Padding::none(), out);
                              escape(out.data());
                          }});

    // The reference point: the same sum as one plain Eigen expression per row, no
    // checks, no dropout (a compiler that contracted `* scale +` into an FMA would round
    // differently), over the same memory.
    const auto plain_table = eval_pipeline.embedding().table();
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
                              eval_bf16.forward_into(ids, seqembed::Padding::none(), out);
                              escape(out.data());
                          }});

#if SEQEMBED_HAVE_TORCH
    torch::NoGradGuard no_grad;
    torch::nn::Embedding embedding{torch::nn::EmbeddingOptions(w.vocab, w.d_model)};
    embedding->weight.copy_(torch::from_blob(weights.data(), {w.vocab, w.d_model}, torch::kFloat));
    embedding->eval();
    torch::nn::Dropout dropout{torch::nn::DropoutOptions(dropout_p)};
    dropout->train();
    // seed 001's buffer: [1, max_len, d], here seqembed's own table so that both add the same
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
                rounds, describe(w.cache).c_str(), sample_ms);
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
// BERT's input stage (issue 14): word + token type + position, LayerNorm, one fused pass

/// BERT-base: vocabulary 30522, d_model 768, 512 positions, 2 token types, LayerNorm (eps 1e-12),
/// float, one thread, warm. Against a memcpy of the output and libtorch running the same five
/// operations (three embedding lookups, two adds, layer_norm) as BertEmbeddings does in eval.
void compare_bert(Index batch, Index length, int rounds, double sample_ms) {
    constexpr Index vocab = 30522;
    constexpr Index width = 768;
    constexpr Index max_positions = 512;
    const Index tokens = batch * length;
    const std::size_t count = static_cast<std::size_t>(tokens * width);
    const double bytes = static_cast<double>(count * sizeof(float));
    std::printf("\n== BERT-base input stage: batch %ld x %ld, vocab %ld, d_model %ld, %ld positions, 2 token types, "
                "LayerNorm, float, one thread, warm ==\n",
                static_cast<long>(batch), static_cast<long>(length), static_cast<long>(vocab),
                static_cast<long>(width), static_cast<long>(max_positions));
    std::vector<float> words(static_cast<std::size_t>(vocab * width));
    seqembed_bench::fill_uniform(words.data(), words.size(), 11);
    std::vector<float> positions(static_cast<std::size_t>(max_positions * width));
    seqembed_bench::fill_uniform(positions.data(), positions.size(), 12);
    std::vector<float> types(static_cast<std::size_t>(2 * width));
    seqembed_bench::fill_uniform(types.data(), types.size(), 13);
    std::vector<float> gamma(static_cast<std::size_t>(width));
    std::vector<float> beta(static_cast<std::size_t>(width));
    seqembed_bench::fill_uniform(gamma.data(), gamma.size(), 14);
    seqembed_bench::fill_uniform(beta.data(), beta.size(), 15);
    const seqembed::IdMatrix ids = seqembed_bench::random_ids(batch, length, vocab, 16);
    seqembed::IdMatrix type_ids(batch, length);
    for (Index b = 0; b < batch; ++b)
        for (Index t = 0; t < length; ++t) type_ids(b, t) = t < length / 2 ? 0 : 1;

    seqembed::TokenEmbeddingOptions unscaled;
    unscaled.scale = seqembed::EmbeddingScale::none();
    seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>> pipeline(
        seqembed::TokenEmbedding<float>::view(words.data(), vocab, width, unscaled),
        seqembed::LearnedPositionalEmbedding<float>::view(positions.data(), max_positions, width));
    pipeline.set_token_types(seqembed::TokenTypeEmbedding<float>::view(types.data(), 2, width));
    using Vector = seqembed::LayerNorm<float>::Vector;
    pipeline.set_layer_norm(seqembed::LayerNorm<float>::from_weights(Eigen::Map<const Vector>(gamma.data(), width),
                                                                     Eigen::Map<const Vector>(beta.data(), width), 1e-12));
    // The same stage over tables it owns (from_weights copies them once: 64-byte aligned, on huge
    // pages where the system has them), as a pipeline built from weights in memory or from a
    // file opened with OpenOptions::map = false holds them; the views above keep the vectors'
    // 4 KiB pages, where gathered rows miss the TLB.
    seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>> owning(
        seqembed::TokenEmbedding<float>::from_weights(Eigen::Map<const RowMatrix<float>>(words.data(), vocab, width),
                                                      unscaled),
        seqembed::LearnedPositionalEmbedding<float>::from_weights(
            Eigen::Map<const RowMatrix<float>>(positions.data(), max_positions, width)));
    owning.set_token_types(
        seqembed::TokenTypeEmbedding<float>::from_weights(Eigen::Map<const RowMatrix<float>>(types.data(), 2, width)));
    owning.set_layer_norm(*pipeline.layer_norm());
    RowMatrix<float> out = RowMatrix<float>::Zero(tokens, width);
    std::vector<float> source(count);
    seqembed_bench::fill_uniform(source.data(), source.size(), 17);
    const RowMatrix<float> ours = pipeline.forward(ids, type_ids);
    if (owning.forward(ids, type_ids) != ours) std::printf("  MISMATCH: owned tables give other values than views\n");

    std::vector<Contender> contenders;
    contenders.push_back({"(b) memcpy of the output bytes", [&] {
                              std::memcpy(out.data(), source.data(), count * sizeof(float));
                              escape(out.data());
                          }});
    contenders.push_back({"(a) seqembed fused forward_into, tables viewed", [&] {
                              pipeline.forward_into(ids, type_ids, seqembed::Padding::none(), out);
                              escape(out.data());
                          }});
    contenders.push_back({"(a2) seqembed fused forward_into, tables owned", [&] {
                              owning.forward_into(ids, type_ids, seqembed::Padding::none(), out);
                              escape(out.data());
                          }});
#if SEQEMBED_HAVE_TORCH
    torch::NoGradGuard no_grad;
    const torch::Tensor words_t = torch::from_blob(words.data(), {vocab, width}, torch::kFloat);
    const torch::Tensor positions_t = torch::from_blob(positions.data(), {max_positions, width}, torch::kFloat);
    const torch::Tensor types_t = torch::from_blob(types.data(), {2, width}, torch::kFloat);
    const torch::Tensor gamma_t = torch::from_blob(gamma.data(), {width}, torch::kFloat);
    const torch::Tensor beta_t = torch::from_blob(beta.data(), {width}, torch::kFloat);
    const torch::Tensor ids_t =
        torch::from_blob(const_cast<std::int64_t*>(ids.data()), {batch, length}, torch::kLong).clone();
    const torch::Tensor type_ids_t =
        torch::from_blob(const_cast<std::int64_t*>(type_ids.data()), {batch, length}, torch::kLong).clone();
    const torch::Tensor position_ids_t = torch::arange(length, torch::kLong).unsqueeze(0);
    auto torch_stage = [&] {  // BertEmbeddings.forward in eval mode
        torch::Tensor embeddings = torch::embedding(words_t, ids_t) + torch::embedding(types_t, type_ids_t);
        embeddings += torch::embedding(positions_t, position_ids_t);
        return torch::layer_norm(embeddings, {width}, gamma_t, beta_t, 1e-12);
    };
    const torch::Tensor theirs = torch_stage().contiguous();
    double worst = 0;
    for (std::size_t k = 0; k < count; ++k) {
        const double want = theirs.data_ptr<float>()[k];
        worst = std::max(worst, std::fabs(static_cast<double>(ours.data()[k]) - want) / std::max(1.0, std::fabs(want)));
    }
    char line[160];
    std::snprintf(line, sizeof line, "seqembed vs libtorch: max |diff| / max(1, |y|) %.3g <= 1e-6", worst);
    report_check(line, worst <= 1e-6);
    torch::Tensor sink;
    contenders.push_back({"(c) libtorch: 3 x embedding, 2 adds, layer_norm", [&] {
                              sink = torch_stage();
                              escape(sink.data_ptr());
                          }});
#else
    std::printf("  libtorch: absent, contender (c) skipped\n");
#endif
    run_interleaved(contenders, rounds, sample_ms, CacheState::warm);
    print_timings(contenders, bytes);
    const Contender* memcpy_c = find(contenders, "(b)");
    const Contender* ours_c = find(contenders, "(a)");
    const Contender* owning_c = find(contenders, "(a2)");
    const Contender* torch_c = find(contenders, "(c)");
    print_ratio("seqembed / memcpy (views)", ours_c, memcpy_c, Goal::at_most, 1.5);
    print_ratio("seqembed / memcpy (owned)", owning_c, memcpy_c, Goal::at_most, 1.5);
    print_ratio("libtorch / seqembed (views)", torch_c, ours_c, Goal::at_least, 4.0);
}

// ---------------------------------------------------------------------------------------------
// The sinusoidal table

// Seed 001's table: max_length 5000, d_model 512.
constexpr Index table_rows = 5000;
constexpr Index table_width = 512;

void compare_table(int rounds, double sample_ms) {
    const Index max_len = table_rows;
    const Index d_model = table_width;
    const auto count = static_cast<std::size_t>(max_len * d_model);
    std::printf("\n== Sinusoidal table %ld x %ld float (seed 001's buffer), one thread ==\n",
                static_cast<long>(max_len), static_cast<long>(d_model));

    seqembed::SinusoidalOptions exact_options;
    exact_options.max_positions = max_len;
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
                rounds, describe(CacheState::warm).c_str());
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

// ---------------------------------------------------------------------------------------------
// Issue 11's matrix (bench/matrix.hpp)

using seqembed_bench::Layers;
using seqembed_bench::Mode;
using seqembed_bench::Positions;
using seqembed_bench::Shape;
using seqembed_bench::Storage;

/// Which rows to run: every value of an axis when its list is empty.
struct MatrixFilter {
    std::vector<Index> d_models;
    std::vector<Positions> positions;
    std::vector<Storage> storages;
    std::vector<Mode> modes;
    std::vector<CacheState> caches;
    std::vector<Layers> layers;

    template <typename T>
    static bool admits(const std::vector<T>& chosen, T value) {
        return chosen.empty() || std::find(chosen.begin(), chosen.end(), value) != chosen.end();
    }
    bool any() const {
        return !d_models.empty() || !positions.empty() || !storages.empty() || !modes.empty() ||
               !caches.empty() || !layers.empty();
    }
};

/// How many (d_model, positions, table, mode) combinations were checked before timing.
int g_matrix_checks = 0;

/// The medians of one row, in ms.
struct RowResult {
    Shape shape;
    Positions positions;
    Storage storage;
    Layers layers;
    Mode mode;
    CacheState cache;
    double memcpy_ms;
    double seqembed_ms;
    double plain_ms;  // NaN for rows the plain loop does not compute (token types, LayerNorm)
    double gather_ms;
    double eval_ms;      // training rows: the same pipeline in evaluation, timed in the row
    double unnormed_ms;  // LayerNorm rows: the same pipeline without LayerNorm, timed in the row
    double memcpy_read_ms;
    double seqembed_read_ms;
    double cached_read_ms;
};

/// Issue 11's goals: evaluation within 1.3x and training within 1.6x of the memcpy, and never
/// slower than the plain Eigen loop.
double memcpy_goal(Mode mode) { return mode == Mode::eval ? 1.3 : 1.6; }

std::string goal_verdict(const RowResult& row) {
    const bool memcpy_met = row.seqembed_ms <= memcpy_goal(row.mode) * row.memcpy_ms;
    const bool plain_met = !(row.seqembed_ms > row.plain_ms);
    if (memcpy_met && plain_met) return "met";
    std::string missed = "**missed**: ";
    if (!memcpy_met) {
        char text[32];
        std::snprintf(text, sizeof text, "> %.1fx memcpy", memcpy_goal(row.mode));
        missed += text;
    }
    if (!plain_met) missed += memcpy_met ? "> plain" : ", > plain";
    return missed;
}

/// Largest |a - b| over count values, relative to bound: the check passes at <= 1.
double max_scaled_diff(const float* a, const float* b, std::size_t count, double bound) {
    double worst = 0.0;
    for (std::size_t i = 0; i < count; ++i)
        worst = std::max(worst, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    return worst / bound;
}

/// The rows of one (d_model, positions, table, layers) over the modes and caches the filter
/// admits.
template <typename Embedding, typename Positional>
void run_stage_rows(const seqembed_bench::WidthInputs& inputs, const Embedding& embedding,
                    const Positional& positional, Positions positions, Storage storage,
                    Layers layers, const MatrixFilter& filter, int rounds, double sample_ms,
                    RowMatrix<float>& out, const std::vector<float>& source,
                    std::vector<RowResult>& results) {
    const Shape& shape = inputs.shape;
    const seqembed::Batch batch = seqembed_bench::batch_of(inputs, layers);
    const std::size_t count = shape.output_count();
    const auto plain = seqembed_bench::make_plain_loop(embedding, positional, shape.length);
    const auto gather = seqembed_bench::make_gather_floor(embedding, positional);
    const bool with_plain = layers == Layers::none;  // the plain loop adds no types, no LayerNorm

    // What the plain loop and the pipeline may differ by: the rounding of `x * scale` that a
    // contracted FMA skips, at most an ulp of the largest term.
    const double bound = std::ldexp(2.0 * static_cast<double>(embedding.scale()) + 8.0, -22);

    for (const Mode mode : seqembed_bench::all_modes) {
        if (!MatrixFilter::admits(filter.modes, mode)) continue;
        auto pipeline = seqembed_bench::make_pipeline(inputs, layers, embedding, positional, mode);
        auto cached = seqembed_bench::make_pipeline(inputs, layers, embedding, positional, mode,
                                                    seqembed::OutputStores::cached);
        const std::string row_name = shape.name() + " " + seqembed_bench::name_of(positions) +
                                     seqembed_bench::name_of(layers) + " " +
                                     seqembed_bench::name_of(storage) + " " +
                                     seqembed_bench::name_of(mode);

        // Checks, before timing, on outputs apart from `out`.
        const auto eval_pipeline =
            seqembed_bench::make_pipeline(inputs, layers, embedding, positional, Mode::eval);
        const auto unnormed = seqembed_bench::make_pipeline(
            inputs, layers == Layers::types_ln ? Layers::types : layers, embedding, positional, mode);
        RowMatrix<float> seq_eval(shape.tokens(), shape.d_model);
        eval_pipeline.forward_into(batch, seq_eval);
        RowMatrix<float> plain_out(shape.tokens(), shape.d_model);
        bool passed = true;
        if (with_plain) {
            plain(inputs.ids, plain_out, nullptr);
            passed = max_scaled_diff(seq_eval.data(), plain_out.data(), count, bound) <= 1.0;
            gather(inputs.ids, plain_out.data());
            passed = passed && max_scaled_diff(seq_eval.data(), plain_out.data(), count, bound) <= 1.0;
        }
        std::vector<float> mask;  // training: the plain loop's precomputed factors
        if (mode == Mode::train) {
            // The first training call of both pipelines: the same mask, the same values.
            RowMatrix<float> seq_train(shape.tokens(), shape.d_model);
            pipeline.forward_into(batch, seq_train);
            cached.forward_into(batch, plain_out);
            passed = passed && std::memcmp(seq_train.data(), plain_out.data(),
                                           count * sizeof(float)) == 0;
            // The factors of that mask, read off the outputs: 0 where a value was dropped.
            const float keep = 1.0f / static_cast<float>(1.0 - dropout_p);
            mask.resize(count);
            std::size_t dropped = 0;
            for (std::size_t i = 0; i < count; ++i) {
                const bool drop = seq_train.data()[i] == 0.0f && seq_eval.data()[i] != 0.0f;
                mask[i] = drop ? 0.0f : keep;
                dropped += drop ? 1 : 0;
            }
            const double fraction = static_cast<double>(dropped) / static_cast<double>(count);
            passed = passed && std::abs(fraction - dropout_p) < 0.01;
            if (with_plain) {
                plain(inputs.ids, plain_out, mask.data());
                passed = passed && max_scaled_diff(seq_train.data(), plain_out.data(), count,
                                                   bound / (1.0 - dropout_p)) <= 1.0;
            }
        } else {
            cached.forward_into(batch, plain_out);
            passed = passed && std::memcmp(seq_eval.data(), plain_out.data(),
                                           count * sizeof(float)) == 0;
        }
        char check_line[200];
        std::snprintf(check_line, sizeof check_line,
                      "%s: plain loop and gather floor = seqembed (within an ulp), cached = "
                      "automatic stores%s",
                      row_name.c_str(), mode == Mode::train ? ", ~10% dropped" : "");
        ++g_matrix_checks;
        if (!passed) report_check(check_line, passed);
        const float* mask_data = mask.empty() ? nullptr : mask.data();
        const std::size_t bytes = count * sizeof(float);

        for (const CacheState cache : seqembed_bench::all_caches) {
            if (!MatrixFilter::admits(filter.caches, cache)) continue;
            std::vector<Contender> contenders;
            contenders.push_back({"memcpy", [&] {
                                      std::memcpy(out.data(), source.data(), bytes);
                                      escape(out.data());
                                  }});
            contenders.push_back({"seqembed", [&] {
                                      pipeline.forward_into(batch, out);
                                      escape(out.data());
                                  }});
            contenders.push_back({"gather", [&] {
                                      gather(inputs.ids, out.data());
                                      escape(out.data());
                                  }});
            if (mode == Mode::train) {  // train / eval within the row's rounds
                contenders.push_back({"eval", [&] {
                                          eval_pipeline.forward_into(batch, out);
                                          escape(out.data());
                                      }});
            }
            if (layers == Layers::types_ln) {  // LN / no LN within the row's rounds
                contenders.push_back({"no LN", [&] {
                                          unnormed.forward_into(batch, out);
                                          escape(out.data());
                                      }});
            }
            if (with_plain) {
                contenders.push_back({"plain", [&] {
                                          plain(inputs.ids, out, mask_data);
                                          escape(out.data());
                                      }});
            }
            contenders.push_back({"memcpy+read", [&] {
                                      std::memcpy(out.data(), source.data(), bytes);
                                      escape(out.data());
                                      g_read_sink = seqembed_bench::read_output(out.data(), count);
                                  }});
            contenders.push_back({"seqembed+read", [&] {
                                      pipeline.forward_into(batch, out);
                                      escape(out.data());
                                      g_read_sink = seqembed_bench::read_output(out.data(), count);
                                  }});
            contenders.push_back({"cached+read", [&] {
                                      cached.forward_into(batch, out);
                                      escape(out.data());
                                      g_read_sink = seqembed_bench::read_output(out.data(), count);
                                  }});
            run_interleaved(contenders, rounds, sample_ms, cache);
            const auto median = [&](const char* label) {
                for (const Contender& contender : contenders)
                    if (contender.label == label) return contender.median();
                return std::numeric_limits<double>::quiet_NaN();
            };
            const RowResult row{shape,
                                positions,
                                storage,
                                layers,
                                mode,
                                cache,
                                median("memcpy"),
                                median("seqembed"),
                                median("plain"),
                                median("gather"),
                                median("eval"),
                                median("no LN"),
                                median("memcpy+read"),
                                median("seqembed+read"),
                                median("cached+read")};
            results.push_back(row);
            std::printf("  %-22s %-20s %-5s %-10s %-4s  memcpy %7.3f  gather %7.3f  seqembed %7.3f "
                        "(%5.2fx gather, %5.2fx memcpy, %5.2fx plain)  plain %7.3f  | +read: "
                        "memcpy %7.3f  seqembed %7.3f  cached %7.3f  %s\n",
                        shape.name().c_str(),
                        (std::string(seqembed_bench::name_of(positions)) +
                         seqembed_bench::name_of(layers)).c_str(),
                        seqembed_bench::name_of(storage), seqembed_bench::name_of(mode),
                        seqembed_bench::name_of(cache), row.memcpy_ms, row.gather_ms,
                        row.seqembed_ms, row.seqembed_ms / row.gather_ms,
                        row.seqembed_ms / row.memcpy_ms, row.seqembed_ms / row.plain_ms,
                        row.plain_ms, row.memcpy_read_ms, row.seqembed_read_ms,
                        row.cached_read_ms, goal_verdict(row).c_str());
            std::fflush(stdout);
        }
    }
}

std::string utc_date() {
    const std::time_t now = std::time(nullptr);
    char text[32] = "(unknown date)";
    if (const std::tm* utc = std::gmtime(&now)) std::strftime(text, sizeof text, "%Y-%m-%d", utc);
    return text;
}

/// The row of `results` that differs from `row` in mode and layers only, or null.
const RowResult* row_like(const std::vector<RowResult>& results, const RowResult& row, Mode mode,
                          Layers layers) {
    for (const RowResult& other : results)
        if (other.shape.d_model == row.shape.d_model && other.positions == row.positions &&
            other.storage == row.storage && other.cache == row.cache && other.mode == mode &&
            other.layers == layers)
            return &other;
    return nullptr;
}

/// Issue 27's goals: evaluation within 1.10x of the gather floor, training within 1.15x of
/// evaluation, LayerNorm within 1.25x of the same pass without it.
constexpr double floor_goal = 1.10;
constexpr double train_goal = 1.15;
constexpr double norm_goal = 1.25;

/// Issue 27's table: per row of the matrix, evaluation against the gather floor (in the evaluation
/// row), training against evaluation (both timed in the training row) and, for the LayerNorm
/// rows, the pass against the same pass without LayerNorm (both timed in the row).
void print_floor_table(const std::vector<RowResult>& results) {
    std::printf("\n#### Against the gather floor (issue 27)\n\n");
    std::printf("Medians in ms; each ratio is of two contenders interleaved in the same row: eval / "
                "gather in the evaluation row, train / eval in the training row (which times the "
                "evaluation pipeline too), LN / no LN in the LayerNorm rows (which time the pass "
                "without LayerNorm too). Goals: eval / gather <= %.2f (rows without token types "
                "and LayerNorm, which the floor does not compute), train / eval <= %.2f, LN / no LN "
                "<= %.2f.\n\n",
                floor_goal, train_goal, norm_goal);
    std::printf("| d_model | positions | table | cache | gather | eval | eval / gather | train | "
                "eval (train row) | train / eval | LN / no LN, eval | LN / no LN, train | goals |\n");
    std::printf("|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    int rows = 0;
    int met = 0;
    const double none = std::numeric_limits<double>::quiet_NaN();
    const auto text = [](double value, const char* unit) {  // "-" where there is none
        char buffer[32] = "-";
        if (!std::isnan(value)) std::snprintf(buffer, sizeof buffer, "%.2f%s", value, unit);
        return std::string(buffer);
    };
    for (const RowResult& eval : results) {
        if (eval.mode != Mode::eval) continue;
        const RowResult* train = row_like(results, eval, Mode::train, eval.layers);
        const bool normed = eval.layers == Layers::types_ln;
        const double to_floor = eval.seqembed_ms / eval.gather_ms;
        const double to_eval = train != nullptr ? train->seqembed_ms / train->eval_ms : none;
        const double norm_eval = normed ? eval.seqembed_ms / eval.unnormed_ms : none;
        const double norm_train = normed && train != nullptr ? train->seqembed_ms / train->unnormed_ms : none;
        std::string verdict;
        const auto judge = [&](double ratio, double goal, const char* what) {
            if (std::isnan(ratio) || ratio <= goal) return;
            verdict += verdict.empty() ? "**missed**: " : ", ";
            verdict += what;
        };
        if (eval.layers == Layers::none) judge(to_floor, floor_goal, "eval / gather");
        judge(to_eval, train_goal, "train / eval");
        judge(norm_eval, norm_goal, "LN eval");
        judge(norm_train, norm_goal, "LN train");
        if (verdict.empty()) {
            verdict = "met";
            ++met;
        }
        ++rows;
        std::printf("| %ld | %s%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                    static_cast<long>(eval.shape.d_model), seqembed_bench::name_of(eval.positions),
                    seqembed_bench::name_of(eval.layers), seqembed_bench::name_of(eval.storage),
                    seqembed_bench::name_of(eval.cache), text(eval.gather_ms, "").c_str(),
                    text(eval.seqembed_ms, "").c_str(), text(to_floor, "x").c_str(),
                    text(train != nullptr ? train->seqembed_ms : none, "").c_str(),
                    text(train != nullptr ? train->eval_ms : none, "").c_str(),
                    text(to_eval, "x").c_str(), text(norm_eval, "x").c_str(),
                    text(norm_train, "x").c_str(), verdict.c_str());
    }
    std::printf("\n%d of %d rows meet issue 27's goals.\n", met, rows);
}

void print_matrix_table(const std::vector<RowResult>& results, int rounds) {
    std::printf("\n### Benchmark matrix (issue 11), %s\n\n", utc_date().c_str());
    std::printf("- Machine: %s, %u logical CPUs; %s\n", seqembed_bench::cpu_model().c_str(),
                seqembed_bench::logical_cpus(), seqembed_bench::cache_summary().c_str());
    std::printf("- Compiler: %s; flags `%s` (build type %s); vector ISA at compile time: %s\n",
                seqembed_bench::compiler().c_str(), SEQEMBED_BENCH_CXX_FLAGS,
                SEQEMBED_BENCH_BUILD_TYPE, seqembed_bench::vector_isa().c_str());
    std::printf("- seqembed %s, Eigen %s; one thread\n",
                seqembed_bench::seqembed_version().c_str(),
                seqembed_bench::eigen_summary().c_str());
    std::printf("- Medians of %d interleaved rounds, in ms per call. Vocabulary 32000, uniform "
                "random ids, sequences of 512 tokens; dropout p = 0.1 in training. cold: the "
                "caches are evicted before every sample (an untimed read of %.0f MiB); warm: "
                "every sample follows an untimed call of its own.\n",
                rounds,
                static_cast<double>(seqembed_bench::CacheScrubber::instance().bytes()) /
                    1048576.0);
    std::printf("- memcpy: of the output bytes from a pre-filled buffer. gather: the gather floor, "
                "each token's table row times the scale plus its position row, streamed, the row "
                "8 KiB ahead requested (bench/matrix.hpp, GatherFloor). plain: "
                "`out.row(r) = table.row(id).cast<float>() * scale + pos.row(t)` per token "
                "(times a precomputed float mask of 0 or 1/0.9 in training). +read: followed by "
                "the first consumer, a sum of every output value; seqembed with its automatic "
                "stores, cached with `OutputStores::cached`.\n");
    std::printf("- goal: seqembed within 1.3x (evaluation) or 1.6x (training) of the memcpy, "
                "and no slower than plain.\n\n");
    std::printf("| d_model | tokens | positions | table | mode | cache | memcpy | gather | "
                "seqembed | plain | seqembed / gather | seqembed / memcpy | seqembed / plain | "
                "memcpy+read | seqembed+read | cached+read | +read: seqembed / memcpy | +read: "
                "cached / seqembed | goal |\n");
    std::printf("|---:|---:|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
                "---:|---:|---|\n");
    for (const RowResult& row : results) {
        std::printf("| %ld | %ld | %s%s | %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %.2fx | %.2fx | "
                    "%.2fx | %.2f | %.2f | %.2f | %.2fx | %.2fx | %s |\n",
                    static_cast<long>(row.shape.d_model), static_cast<long>(row.shape.tokens()),
                    seqembed_bench::name_of(row.positions), seqembed_bench::name_of(row.layers),
                    seqembed_bench::name_of(row.storage),
                    row.mode == Mode::eval ? "eval" : "train", seqembed_bench::name_of(row.cache),
                    row.memcpy_ms, row.gather_ms, row.seqembed_ms, row.plain_ms,
                    row.seqembed_ms / row.gather_ms, row.seqembed_ms / row.memcpy_ms,
                    row.seqembed_ms / row.plain_ms, row.memcpy_read_ms, row.seqembed_read_ms,
                    row.cached_read_ms, row.seqembed_read_ms / row.memcpy_read_ms,
                    row.cached_read_ms / row.seqembed_read_ms, goal_verdict(row).c_str());
    }
    std::size_t missed = 0;
    for (const RowResult& row : results) missed += goal_verdict(row) == "met" ? 0 : 1;
    std::printf("\n%zu of %zu rows meet the goal.\n", results.size() - missed, results.size());
    print_floor_table(results);
}

void run_matrix(const MatrixFilter& filter, int rounds, double sample_ms) {
    const auto start = Clock::now();
    std::printf("\n== Issue 11's matrix: %d interleaved rounds per row, one thread ==\n", rounds);
    std::printf("  per row, median ms: memcpy, seqembed forward_into (ratios to memcpy and to "
                "the plain loop), the plain Eigen loop; then each followed by a sum of the "
                "output (+read); cached = OutputStores::cached\n");
    std::vector<RowResult> results;
    for (const Shape& shape : seqembed_bench::matrix_shapes()) {
        if (!MatrixFilter::admits(filter.d_models, shape.d_model)) continue;
        const auto setup = Clock::now();
        const seqembed_bench::WidthInputs inputs(shape);
        RowMatrix<float> out = RowMatrix<float>::Zero(shape.tokens(), shape.d_model);
        std::vector<float> source(shape.output_count());
        seqembed_bench::fill_uniform(source.data(), source.size(), 7);
        std::printf("  -- %s: output %.1f MiB, token table %.1f MiB float / %.1f MiB bfloat16 "
                    "(set up in %.1f s)\n",
                    shape.name().c_str(), shape.output_bytes() / 1048576.0,
                    static_cast<double>(shape.vocab * shape.d_model) * 4.0 / 1048576.0,
                    static_cast<double>(shape.vocab * shape.d_model) * 2.0 / 1048576.0,
                    elapsed_ms(setup, Clock::now()) / 1e3);
        for (const Positions positions : seqembed_bench::all_positions) {
            if (!MatrixFilter::admits(filter.positions, positions)) continue;
            for (const Storage storage : seqembed_bench::all_storages) {
                if (!MatrixFilter::admits(filter.storages, storage)) continue;
                for (const Layers layers : {Layers::none, Layers::types, Layers::types_ln}) {
                    if (!MatrixFilter::admits(filter.layers, layers)) continue;
                    // BERT's layers at BERT-base's width and positions only.
                    if (layers != Layers::none &&
                        (shape.d_model != 768 || positions != Positions::learned))
                        continue;
                    seqembed_bench::with_stages(
                        inputs, positions, storage,
                        [&](const auto& embedding, const auto& positional) {
                            run_stage_rows(inputs, embedding, positional, positions, storage,
                                           layers, filter, rounds, sample_ms, out, source,
                                           results);
                        });
                }
            }
        }
    }
    std::printf("  checks before timing: %d combinations, %s\n", g_matrix_checks,
                g_checks_passed ? "all passed" : "SOME FAILED (above)");
    print_matrix_table(results, rounds);
    std::printf("\n  the matrix took %.1f s\n", elapsed_ms(start, Clock::now()) / 1e3);
}

// ---------------------------------------------------------------------------------------------
// Rotary positions (issue 15): RoPE applied to Q and K at real models' shapes, and the table

/// A model's attention shape for RoPE: its table's options and its head counts.
struct RopeShape {
    const char* model;
    seqembed::RotaryOptions options;
    Index q_heads;
    Index k_heads;
};

/// Llama-3-8B: 32 query heads, 8 key heads, head_dim 128, theta 500000.
RopeShape llama3_8b_shape() { return {"Llama-3-8B", seqembed::RotaryOptions::llama3_8b(), 32, 8}; }

/// The shapes of the RoPE rows beside Llama-3-8B's, by head size and head counts: 64 (14 / 2),
/// 80 with 32 rotated, 96, 256 (8 / 1), and interleaved 64 of 256.
std::vector<RopeShape> other_rope_shapes() {
    auto qwen2 = seqembed::RotaryOptions::hugging_face(64, 1000000.0);
    qwen2.max_positions = 8192;
    auto phi2 = seqembed::RotaryOptions::phi2();
    phi2.max_positions = 8192;
    auto phi3 = seqembed::RotaryOptions::hugging_face(96, 10000.0);
    phi3.max_positions = 8192;
    auto gemma = seqembed::RotaryOptions::hugging_face(256, 10000.0);
    gemma.max_positions = 8192;
    auto gptj = seqembed::RotaryOptions::gptj_6b();
    gptj.max_positions = 8192;
    return {{"Qwen2-0.5B", qwen2, 14, 2},
            {"Phi-2", phi2, 32, 32},
            {"Phi-3-mini", phi3, 32, 32},
            {"Gemma-2B", gemma, 8, 1},
            {"GPT-J-6B", gptj, 16, 16}};
}

#if SEQEMBED_HAVE_TORCH
template <typename A>
torch::ScalarType torch_type() {
    return std::is_same_v<A, float> ? torch::kFloat : torch::kBFloat16;
}

/// Hugging Face's rotate_half: cat(-x2, x1) over the last dimension.
torch::Tensor rotate_half(const torch::Tensor& x) {
    const std::int64_t half = x.size(-1) / 2;
    return torch::cat({-x.slice(-1, half), x.slice(-1, 0, half)}, -1);
}
#endif

/// Rotating Q and K in place for `tokens` tokens at `positions`, at a model's shape, against a
/// memcpy of Q and K and, for whole heads in halves, libtorch's `q * cos + rotate_half(q) * sin`
/// on the same table.
template <typename A>
void compare_rope(const RopeShape& shape, const char* what, const std::vector<std::int64_t>& positions, int rounds,
                  double sample_ms) {
    const Index rope_q_heads = shape.q_heads;
    const Index rope_k_heads = shape.k_heads;
    const Index rope_head_dim = shape.options.head_dim;
    const auto tokens = static_cast<Index>(positions.size());
    const Index q_width = rope_q_heads * rope_head_dim;
    const Index k_width = rope_k_heads * rope_head_dim;
    const char* type_name = std::is_same_v<A, float> ? "float" : "bfloat16";
    const seqembed::RotaryEmbedding<float> rope(shape.options);
    const bool halves = shape.options.layout == seqembed::RotaryLayout::halves;
    std::printf("\n== RoPE on Q and K, %s (%ld / %ld heads, head_dim %ld, %ld rotated, %s, theta %g): %s, %s "
                "activations, float table, one thread, warm ==\n",
                shape.model, static_cast<long>(rope_q_heads), static_cast<long>(rope_k_heads),
                static_cast<long>(rope_head_dim), static_cast<long>(rope.rotary_dim()),
                halves ? "halves" : "interleaved", shape.options.base, what, type_name);
    const Eigen::Map<const seqembed::RotaryEmbedding<float>::PositionVector> position_vector(positions.data(),
                                                                                            tokens);
    auto random_activations = [](Index rows, Index cols, unsigned seed) {
        std::vector<float> values(static_cast<std::size_t>(rows * cols));
        seqembed_bench::fill_uniform(values.data(), values.size(), seed);
        RowMatrix<A> m(rows, cols);
        for (Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<A>(values[static_cast<std::size_t>(i)]);
        return m;
    };
    const RowMatrix<A> q_start = random_activations(tokens, q_width, 21);
    const RowMatrix<A> k_start = random_activations(tokens, k_width, 22);
    RowMatrix<A> q = q_start;
    RowMatrix<A> k = k_start;
    RowMatrix<A> q_copy = q_start;
    RowMatrix<A> k_copy = k_start;
    const double bytes = static_cast<double>((q.size() + k.size()) * static_cast<Index>(sizeof(A)));

    std::vector<Contender> contenders;
    contenders.push_back({"(b) memcpy of Q and K", [&] {
                              std::memcpy(q_copy.data(), q_start.data(), sizeof(A) * static_cast<std::size_t>(q.size()));
                              std::memcpy(k_copy.data(), k_start.data(), sizeof(A) * static_cast<std::size_t>(k.size()));
                              escape(q_copy.data());
                              escape(k_copy.data());
                          }});
    contenders.push_back({"(a) seqembed RotaryEmbedding::apply, in place", [&] {
                              rope.apply(q, k, rope_q_heads, rope_k_heads, position_vector);
                              escape(q.data());
                              escape(k.data());
                          }});
#if SEQEMBED_HAVE_TORCH
    if (halves && rope.rotary_dim() == rope_head_dim) {
        // The same table for both: cos and sin duplicated to head_dim, as Hugging Face's emb.
        const auto rope_rows = rope.max_positions();
        const torch::Tensor cos_table =
            torch::from_blob(const_cast<float*>(rope.cos_table().data()), {rope_rows, rope.pairs()},
                             {rope.rotary_dim(), 1}, torch::kFloat);
        const torch::Tensor sin_table =
            torch::from_blob(const_cast<float*>(rope.sin_table().data()), {rope_rows, rope.pairs()},
                             {rope.rotary_dim(), 1}, torch::kFloat);
        const torch::Tensor cos_cached = torch::cat({cos_table, cos_table}, -1).to(torch_type<A>());
        const torch::Tensor sin_cached = torch::cat({sin_table, sin_table}, -1).to(torch_type<A>());
        const torch::Tensor position_ids =
            torch::from_blob(const_cast<std::int64_t*>(positions.data()), {tokens}, torch::kLong).clone();
        const torch::Tensor q_torch = torch::from_blob(const_cast<A*>(q_start.data()),
                                                       {tokens, rope_q_heads, rope_head_dim}, torch_type<A>()).clone();
        const torch::Tensor k_torch = torch::from_blob(const_cast<A*>(k_start.data()),
                                                       {tokens, rope_k_heads, rope_head_dim}, torch_type<A>()).clone();
        auto torch_rope = [&] {  // apply_rotary_pos_emb, with cos and sin gathered for position_ids
            const torch::Tensor cos = cos_cached.index_select(0, position_ids).unsqueeze(1);
            const torch::Tensor sin = sin_cached.index_select(0, position_ids).unsqueeze(1);
            return std::make_pair(q_torch * cos + rotate_half(q_torch) * sin, k_torch * cos + rotate_half(k_torch) * sin);
        };
        {
            RowMatrix<A> q_ours = q_start;
            RowMatrix<A> k_ours = k_start;
            rope.apply(q_ours, k_ours, rope_q_heads, rope_k_heads, position_vector);
            const auto [q_theirs, k_theirs] = torch_rope();
            const torch::Tensor q_float = q_theirs.to(torch::kFloat).contiguous();
            const torch::Tensor k_float = k_theirs.to(torch::kFloat).contiguous();
            double worst = 0.0;
            std::size_t different = 0;
            auto compare = [&](const RowMatrix<A>& ours, const float* theirs) {
                for (Index i = 0; i < ours.size(); ++i) {
                    const auto mine = static_cast<double>(static_cast<float>(ours.data()[i]));
                    const auto other = static_cast<double>(theirs[i]);
                    different += mine != other ? 1 : 0;
                    worst = std::max(worst, std::abs(mine - other) / std::max(1.0, std::abs(other)));
                }
            };
            compare(q_ours, q_float.data_ptr<float>());
            compare(k_ours, k_float.data_ptr<float>());
            char line[160];
            if (std::is_same_v<A, float>) {
                std::snprintf(line, sizeof line, "seqembed == libtorch bit for bit (%zu of %ld values differ)", different,
                              static_cast<long>(q.size() + k.size()));
                report_check(line, different == 0);
            } else {
                // libtorch rounds the table, each product and the sum to bfloat16; seqembed rounds once.
                std::snprintf(line, sizeof line, "seqembed vs libtorch bfloat16: max |diff| / max(1, |y|) %.3g <= 2^-6",
                              worst);
                report_check(line, worst <= 1.0 / 64);
            }
        }
        std::pair<torch::Tensor, torch::Tensor> sink;
        contenders.push_back({"(c) libtorch: q * cos + rotate_half(q) * sin, k the same", [&] {
                                  sink = torch_rope();
                                  escape(sink.first.data_ptr());
                                  escape(sink.second.data_ptr());
                              }});
        run_interleaved(contenders, rounds, sample_ms, CacheState::warm);
    } else {
        std::printf("  libtorch: rotate_half covers whole heads in halves only, contender (c) skipped\n");
        run_interleaved(contenders, rounds, sample_ms, CacheState::warm);
    }
#else
    std::printf("  libtorch: absent, contender (c) skipped\n");
    run_interleaved(contenders, rounds, sample_ms, CacheState::warm);
#endif
    print_timings(contenders, bytes);
    const Contender* memcpy_c = find(contenders, "(b)");
    const Contender* ours_c = find(contenders, "(a)");
    const Contender* torch_c = find(contenders, "(c)");
    print_ratio("seqembed / memcpy", ours_c, memcpy_c, Goal::at_most, 1.3);
    print_ratio("libtorch / seqembed", torch_c, ours_c, Goal::at_least, 5.0);
}

/// head_dim of the table timed below (Llama 3).
constexpr Index table_head_dim = 128;

/// Building the exact Llama 3 table for 131072 positions (131072 x 128 values) against
/// libtorch's float32 formula (cos and sin of outer(positions, inv_freq), duplicated as
/// Hugging Face's emb), and the accuracy of both.
void compare_rope_table(int rounds, double sample_ms) {
    constexpr Index positions = 131072;
    std::printf("\n== RoPE table, Llama 3 (theta 500000, head_dim 128), %ld positions, float, one thread ==\n",
                static_cast<long>(positions));
    auto exact_options = seqembed::RotaryOptions::llama3_8b();
    exact_options.max_positions = positions;
    auto follow_options = exact_options;
    follow_options.precision = seqembed::TablePrecision::follow_scalar;
    std::vector<Contender> contenders;
    contenders.push_back({"(d) seqembed exact", [&] {
                              const seqembed::RotaryEmbedding<float> table(exact_options);
                              escape(table.cos_table().data());
                          }});
    contenders.push_back({"(info) seqembed follow_scalar (Hugging Face's float32)", [&] {
                              const seqembed::RotaryEmbedding<float> table(follow_options);
                              escape(table.cos_table().data());
                          }});
    const seqembed::RotaryEmbedding<double> reference(exact_options);
    const seqembed::RotaryEmbedding<float> exact(exact_options);
    const seqembed::RotaryEmbedding<float> follow(follow_options);
    auto max_error = [&](auto cos_at, auto sin_at) {
        double worst = 0.0;
        for (Index p = 0; p < positions; ++p)
            for (Index i = 0; i < reference.pairs(); ++i) {
                worst = std::max(worst, std::abs(cos_at(p, i) - reference.cos_table()(p, i)));
                worst = std::max(worst, std::abs(sin_at(p, i) - reference.sin_table()(p, i)));
            }
        return worst;
    };
    std::printf("  accuracy, max |error| against the exact double table:\n");
    std::printf("    seqembed exact          %.3g\n",
                max_error([&](Index p, Index i) { return static_cast<double>(exact.cos_table()(p, i)); },
                          [&](Index p, Index i) { return static_cast<double>(exact.sin_table()(p, i)); }));
    std::printf("    seqembed follow_scalar  %.3g\n",
                max_error([&](Index p, Index i) { return static_cast<double>(follow.cos_table()(p, i)); },
                          [&](Index p, Index i) { return static_cast<double>(follow.sin_table()(p, i)); }));
#if SEQEMBED_HAVE_TORCH
    auto torch_table = [] {  // LlamaRotaryEmbedding: inv_freq, outer product, cat, cos, sin
        const torch::Tensor inv_freq =
            1.0 / torch::pow(500000.0, torch::arange(0, table_head_dim, 2, torch::kLong).to(torch::kFloat) /
                                           static_cast<double>(table_head_dim));
        const torch::Tensor t = torch::arange(positions, torch::kLong).to(torch::kFloat);
        const torch::Tensor freqs = torch::outer(t, inv_freq);
        const torch::Tensor emb = torch::cat({freqs, freqs}, -1);
        return std::make_pair(emb.cos(), emb.sin());
    };
    std::pair<torch::Tensor, torch::Tensor> sink;
    contenders.push_back({"(d) libtorch float32 formula", [&] {
                              sink = torch_table();
                              escape(sink.first.data_ptr());
                          }});
    const auto tables = torch_table();
    const torch::Tensor torch_cos = tables.first.contiguous();
    const torch::Tensor torch_sin = tables.second.contiguous();
    const float* cos_values = torch_cos.data_ptr<float>();
    const float* sin_values = torch_sin.data_ptr<float>();
    std::printf("    libtorch float32        %.3g\n",
                max_error([&](Index p, Index i) { return static_cast<double>(cos_values[p * table_head_dim + i]); },
                          [&](Index p, Index i) { return static_cast<double>(sin_values[p * table_head_dim + i]); }));
#endif
    run_interleaved(contenders, rounds, sample_ms, CacheState::warm);
    print_timings(contenders, static_cast<double>(positions * table_head_dim * static_cast<Index>(sizeof(float))));
    print_ratio("libtorch / seqembed exact", find(contenders, "(d) libtorch"), find(contenders, "(d) seqembed exact"));
}

// ---------------------------------------------------------------------------------------------

void usage() {
    std::printf(
        "usage: seqembed_compare [options]\n"
        "  --rounds N           interleaved rounds of each matrix row (default 21)\n"
        "  --headline-rounds N  rounds of the headline and of the table (default 31)\n"
        "  --sample-ms MS       warm: repeat a short call until a sample lasts MS ms (default 1)\n"
        "  --warm               time the headline warm instead of cold\n"
        "  --no-headline        skip the headline workload (libtorch comparison)\n"
        "  --no-table           skip the sinusoidal table comparison\n"
        "  --no-matrix          skip issue 11's matrix\n"
        "  --no-bert            skip the BERT-base input stage (issue 14)\n"
        "  --bert-only          the BERT-base input stage alone\n"
        "  --no-rope            skip rotary positions (issue 15)\n"
        "  --rope-only          rotary positions alone: RoPE on Q and K, and the table\n"
        "  --no-training        skip the training step (issue 28)\n"
        "  --training-only      the training step alone\n"
        "  --matrix-only        the matrix alone (--no-headline --no-table)\n"
        "  matrix filters, each a comma-separated list (default: all); any filter implies\n"
        "  --matrix-only:\n"
        "  --d-model LIST       256,512,768,1024,4096\n"
        "  --positions LIST     sinusoidal,learned,none\n"
        "  --storage LIST       float,bf16\n"
        "  --mode LIST          eval,train\n"
        "  --cache LIST         warm,cold\n"
        "  --layers LIST        none,types,types+ln (BERT's token types and LayerNorm after the\n"
        "                       sum; rows at d_model 768 with learned positions only)\n"
        "  e.g. one row: --d-model 768 --positions learned --storage bf16 --mode train "
        "--cache cold\n");
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    std::size_t begin = 0;
    while (begin <= text.size()) {
        const std::size_t end = std::min(text.find(',', begin), text.size());
        if (end > begin) items.push_back(text.substr(begin, end - begin));
        begin = end + 1;
    }
    return items;
}

/// Parses a filter list into values with parse(item, value) -> bool; false on an unknown item.
template <typename T, typename Parse>
bool parse_list(const char* option, const std::string& text, std::vector<T>& values,
                Parse parse) {
    for (const std::string& item : split_list(text)) {
        T value{};
        if (!parse(item, value)) {
            std::fprintf(stderr, "seqembed_compare: %s: unknown value '%s'\n", option,
                         item.c_str());
            return false;
        }
        values.push_back(value);
    }
    return true;
}

bool parse_d_model(const std::string& item, Index& value) {
    for (const Shape& shape : seqembed_bench::matrix_shapes())
        if (item == std::to_string(shape.d_model)) {
            value = shape.d_model;
            return true;
        }
    return false;
}

bool parse_positions(const std::string& item, Positions& value) {
    for (const Positions positions : seqembed_bench::all_positions)
        if (item == seqembed_bench::name_of(positions)) {
            value = positions;
            return true;
        }
    return false;
}

bool parse_storage(const std::string& item, Storage& value) {
    if (item == "float" || item == "float32") {
        value = Storage::float32;
        return true;
    }
    if (item == "bf16" || item == "bfloat16") {
        value = Storage::bfloat16;
        return true;
    }
    return false;
}

bool parse_mode(const std::string& item, Mode& value) {
    if (item == "eval") {
        value = Mode::eval;
        return true;
    }
    if (item == "train" || item == "train_p0.1") {
        value = Mode::train;
        return true;
    }
    return false;
}

bool parse_layers(const std::string& item, Layers& value) {
    if (item == "none") {
        value = Layers::none;
        return true;
    }
    if (item == "types") {
        value = Layers::types;
        return true;
    }
    if (item == "types+ln" || item == "types_ln") {
        value = Layers::types_ln;
        return true;
    }
    return false;
}

bool parse_cache(const std::string& item, CacheState& value) {
    if (item == "warm" || item == "cold") {
        value = item == "warm" ? CacheState::warm : CacheState::cold;
        return true;
    }
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = 21;
    int headline_rounds = 31;
    bool headline = true;
    bool table = true;
    bool matrix = true;
    bool bert = true;
    bool rope = true;
    bool training = true;
    double sample_ms = 1.0;
    CacheState headline_cache = CacheState::cold;
    MatrixFilter filter;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool has_value = i + 1 < argc;
        bool ok = true;
        if (arg == "--rounds" && has_value) {
            rounds = std::max(1, std::atoi(argv[++i]));
        } else if (arg == "--headline-rounds" && has_value) {
            headline_rounds = std::max(1, std::atoi(argv[++i]));
        } else if (arg == "--sample-ms" && has_value) {
            sample_ms = std::max(0.0, std::atof(argv[++i]));
        } else if (arg == "--warm") {
            headline_cache = CacheState::warm;
        } else if (arg == "--no-headline") {
            headline = false;
        } else if (arg == "--no-table") {
            table = false;
        } else if (arg == "--no-matrix") {
            matrix = false;
        } else if (arg == "--no-bert") {
            bert = false;
        } else if (arg == "--bert-only") {
            headline = table = matrix = rope = false;
        } else if (arg == "--no-rope") {
            rope = false;
        } else if (arg == "--rope-only") {
            headline = table = matrix = bert = training = false;
        } else if (arg == "--no-training") {
            training = false;
        } else if (arg == "--training-only") {
            headline = table = matrix = bert = rope = false;
        } else if (arg == "--matrix-only") {
            headline = false;
            table = false;
        } else if (arg == "--d-model" && has_value) {
            ok = parse_list("--d-model", argv[++i], filter.d_models, parse_d_model);
        } else if (arg == "--positions" && has_value) {
            ok = parse_list("--positions", argv[++i], filter.positions, parse_positions);
        } else if (arg == "--storage" && has_value) {
            ok = parse_list("--storage", argv[++i], filter.storages, parse_storage);
        } else if (arg == "--mode" && has_value) {
            ok = parse_list("--mode", argv[++i], filter.modes, parse_mode);
        } else if (arg == "--cache" && has_value) {
            ok = parse_list("--cache", argv[++i], filter.caches, parse_cache);
        } else if (arg == "--layers" && has_value) {
            ok = parse_list("--layers", argv[++i], filter.layers, parse_layers);
        } else {
            usage();
            return arg == "--help" || arg == "-h" ? 0 : 2;
        }
        if (!ok) {
            usage();
            return 2;
        }
    }
    if (filter.any()) {
        headline = false;
        table = false;
        bert = false;
        rope = false;
        training = false;
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

    const auto start = Clock::now();
    print_machine();
    if (headline)
        compare_pipeline({32, 512, 512, 32000, true, headline_cache}, headline_rounds, sample_ms);
    if (table) compare_table(headline_rounds, sample_ms);
    if (training) compare_training(std::max(5, headline_rounds / 3), sample_ms);
    if (bert) {
        compare_bert(32, 128, headline_rounds, sample_ms);
        compare_bert(8, 512, headline_rounds, sample_ms);
    }
    if (rope) {
        std::vector<std::int64_t> prefill(4096);
        for (std::size_t t = 0; t < prefill.size(); ++t) prefill[t] = static_cast<std::int64_t>(t);
        std::vector<std::int64_t> decode(64);  // 64 sequences, one new token each, at scattered positions
        for (std::size_t b = 0; b < decode.size(); ++b) decode[b] = static_cast<std::int64_t>((b * 2654435761u) % 8192);
        const RopeShape llama = llama3_8b_shape();
        compare_rope<float>(llama, "prefill 1 x 4096 tokens", prefill, headline_rounds, sample_ms);
        compare_rope<Eigen::bfloat16>(llama, "prefill 1 x 4096 tokens", prefill, headline_rounds, sample_ms);
        compare_rope<float>(llama, "decode 64 x 1 tokens", decode, headline_rounds, sample_ms);
        compare_rope<Eigen::bfloat16>(llama, "decode 64 x 1 tokens", decode, headline_rounds, sample_ms);
        for (const RopeShape& shape : other_rope_shapes()) {
            compare_rope<float>(shape, "prefill 1 x 4096 tokens", prefill, headline_rounds, sample_ms);
            compare_rope<Eigen::bfloat16>(shape, "prefill 1 x 4096 tokens", prefill, headline_rounds, sample_ms);
        }
        compare_rope_table(std::max(5, headline_rounds / 4), sample_ms);
    }
    if (matrix) run_matrix(filter, rounds, sample_ms);

    std::printf("\n%s (%.1f s in all)\n",
                g_checks_passed ? "all checks passed" : "SOME CHECKS FAILED",
                elapsed_ms(start, Clock::now()) / 1e3);
    return g_checks_passed ? 0 : 1;
}
