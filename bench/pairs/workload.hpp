// bench/pairs: the workloads and the functions each side (workload.cpp) defines.
#pragma once

#include <cstdint>

namespace pairs {

/// The workloads, at the headline shape (32 x 512 tokens, d_model 512, vocabulary 32000, learned
/// positions, dropout 0.1, one thread) but BERT's (d_model 768, vocabulary 30522, token types,
/// LayerNorm) and the bfloat16 ones (d_model 768, a bfloat16 token table). `forward` and
/// `forward_bf16` are training forwards, `evaluation` and `evaluation_bf16` the same pipelines
/// in evaluation mode.
enum Workload : int {
    forward,
    backward,
    fused_sparse_adam,
    bert_backward,
    evaluation,
    forward_bf16,
    evaluation_bf16,
    workload_count
};

/// The workloads' names, as main.cpp takes and prints them.
inline const char* const workload_names[] = {"forward",    "backward",     "fused_sparse_adam", "bert_backward",
                                             "evaluation", "forward_bf16", "evaluation_bf16"};

}  // namespace pairs

#if !defined(SEQEMBED_PAIRS_SIDE)
#define SEQEMBED_PAIRS_DECLARE(side)                   \
    void* make_##side(int workload);                   \
    void destroy_##side(void* workload);               \
    double run_##side(void* workload);                 \
    std::uint64_t hash_##side(void* workload);
SEQEMBED_PAIRS_DECLARE(old)
SEQEMBED_PAIRS_DECLARE(new)
#undef SEQEMBED_PAIRS_DECLARE
#else
#define SEQEMBED_PAIRS_JOIN(name, side) name##_##side
#define SEQEMBED_PAIRS_EXPAND(name, side) SEQEMBED_PAIRS_JOIN(name, side)
/// name_old or name_new, by the side being compiled.
#define SEQEMBED_PAIRS_NAME(name) SEQEMBED_PAIRS_EXPAND(name, SEQEMBED_PAIRS_SIDE)
#endif
