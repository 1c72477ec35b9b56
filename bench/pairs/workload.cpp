// One side of bench/pairs (pairs.sh): the training workloads, built against one revision's
// headers. pairs.sh compiles this file twice, the old revision's side with -Dseqembed=seqembed_old
// (every name of the library in another namespace, so that both builds live in one program) and
// SEQEMBED_PAIRS_SIDE=old, the working tree's with SEQEMBED_PAIRS_SIDE=new.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>

#include <seqembed/optim.hpp>
#include <seqembed/seqembed.hpp>

#include "workload.hpp"

namespace {

using Index = seqembed::Index;
template <typename T>
using RowMatrix = seqembed::RowMatrix<T>;
using Pipeline = seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>>;
using Bf16Pipeline = seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>,
                                             seqembed::TokenEmbedding<float, Eigen::bfloat16>>;

bool is_bf16(int workload) { return workload == pairs::forward_bf16 || workload == pairs::evaluation_bf16; }

// A workload's pipeline, batch and output gradient, the same values on both sides.
struct Case {
    explicit Case(int workload_id)
        : workload(workload_id),
          width(workload == pairs::bert_backward || is_bf16(workload) ? 768 : 512),
          vocab(workload == pairs::bert_backward ? 30522 : 32000),
          weights(random(vocab, width, 1)),
          positions(random(512, width, 2)),
          pipeline(seqembed::TokenEmbedding<float>::from_weights(weights),
                   seqembed::LearnedPositionalEmbedding<float>::from_weights(positions), {0.1, 7}),
          ids(32, 512),
          types(seqembed::IdMatrix::Zero(32, 512)),
          out(ids.size(), width),
          grad_out(random(ids.size(), width, 3)),
          token_step("token table", vocab, width) {
        std::mt19937_64 generator(4);
        for (Index k = 0; k < ids.size(); ++k) ids.data()[k] = static_cast<std::int64_t>(generator() % vocab);
        if (workload == pairs::bert_backward) {
            for (Index k = 0; k < types.size(); ++k) types.data()[k] = static_cast<std::int64_t>(generator() % 2);
            pipeline.set_token_types(seqembed::TokenTypeEmbedding<float>::from_weights(random(2, width, 5)));
            pipeline.set_layer_norm(seqembed::LayerNorm<float>(width, 1e-12));
        }
        if (is_bf16(workload)) {
            const RowMatrix<Eigen::bfloat16> rounded = weights.cast<Eigen::bfloat16>();
            bf16.emplace(seqembed::TokenEmbedding<float, Eigen::bfloat16>::from_weights(rounded),
                         seqembed::LearnedPositionalEmbedding<float>::from_weights(positions),
                         seqembed::PipelineOptions{0.1, 7});
            bf16->set_training(workload == pairs::forward_bf16);
        }
        pipeline.set_training(workload != pairs::evaluation);
        call = pipeline.forward_into(batch(), out);
        static_cast<void>(pipeline.trainable());
    }

    seqembed::Batch batch() const {
        seqembed::Batch b(ids);
        if (workload == pairs::bert_backward) b.token_types = types;
        return b;
    }

    // Uniform values in [-1, 1) from a seed.
    static RowMatrix<float> random(Index rows, Index cols, unsigned seed) {
        std::mt19937 generator(seed);
        std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
        RowMatrix<float> m(rows, cols);
        for (Index k = 0; k < m.size(); ++k) m.data()[k] = uniform(generator);
        return m;
    }

    int workload;
    Index width;
    Index vocab;
    RowMatrix<float> weights;
    RowMatrix<float> positions;
    Pipeline pipeline;
    seqembed::IdMatrix ids;
    seqembed::IdMatrix types;
    RowMatrix<float> out;
    RowMatrix<float> grad_out;
    seqembed::optim::SparseAdam<float> token_step;
    std::optional<std::uint64_t> call;
    seqembed::PipelineGradients<float> gradients;
    std::optional<Bf16Pipeline> bf16;
};

// FNV-1a over the bytes of n values.
template <typename T>
void mix(std::uint64_t& hash, const T* values, Index n) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(values);
    for (std::size_t k = 0; k < sizeof(T) * static_cast<std::size_t>(n); ++k) {
        hash ^= bytes[k];
        hash *= 1099511628211ull;
    }
}

}  // namespace

void* SEQEMBED_PAIRS_NAME(make)(int workload) { return new Case(workload); }

void SEQEMBED_PAIRS_NAME(destroy)(void* workload) { delete static_cast<Case*>(workload); }

double SEQEMBED_PAIRS_NAME(run)(void* workload) {
    Case& c = *static_cast<Case*>(workload);
    const seqembed::Batch batch = c.batch();
    const auto start = std::chrono::steady_clock::now();
    switch (c.workload) {
        case pairs::forward:
        case pairs::evaluation:
            c.pipeline.forward_into(batch, c.out);
            break;
        case pairs::forward_bf16:
        case pairs::evaluation_bf16:
            c.bf16->forward_into(batch, c.out);
            break;
        case pairs::backward:
        case pairs::bert_backward:
            c.gradients = c.pipeline.backward(batch, c.grad_out, c.call);
            break;
        case pairs::fused_sparse_adam:
            c.gradients = c.pipeline.backward_step(batch, c.grad_out, c.call, c.token_step, 1e-6);
            break;
        default:
            break;
    }
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::uint64_t SEQEMBED_PAIRS_NAME(hash)(void* workload) {
    const Case& c = *static_cast<const Case*>(workload);
    std::uint64_t hash = 14695981039346656037ull;
    mix(hash, c.out.data(), c.out.size());
    mix(hash, c.gradients.token.values.data(), c.gradients.token.values.size());
    mix(hash, c.gradients.positions.values.data(), c.gradients.positions.values.size());
    mix(hash, c.gradients.token_types.values.data(), c.gradients.token_types.values.size());
    mix(hash, c.gradients.gamma.data(), c.gradients.gamma.size());
    mix(hash, c.gradients.beta.data(), c.gradients.beta.size());
    return hash;
}
