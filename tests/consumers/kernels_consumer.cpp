// The program of consumer.compiled_kernels, built twice from this source: once linking
// seqembed::kernels (SEQEMBED_COMPILED_KERNELS=1 from the target: the kernels are declared, not
// compiled here) and once header-only. Each runs an InputPipeline<float> forward (float table,
// learned positions, LayerNorm, dropout in training) and a RotaryEmbedding<float> apply over
// float and bfloat16 activations with every ISA the CPU runs, checks that every ISA gives the
// scalar ISA's bits, and prints a digest of those bits: the test compares the two programs'
// output, which must be the same.
#include <seqembed/seqembed.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>

#if !defined(SEQEMBED_CONSUMER_EXPECT_LINKED)
#error "define SEQEMBED_CONSUMER_EXPECT_LINKED to 1 (linking seqembed::kernels) or 0 (header-only)"
#elif SEQEMBED_CONSUMER_EXPECT_LINKED
#if !defined(SEQEMBED_COMPILED_KERNELS)
#error "seqembed::kernels did not define SEQEMBED_COMPILED_KERNELS for its users"
#endif
#elif defined(SEQEMBED_COMPILED_KERNELS)
#error "SEQEMBED_COMPILED_KERNELS is defined in the header-only program"
#endif

namespace {

// FNV-1a over the bytes of a matrix.
template <typename T>
std::uint64_t digest(const seqembed::RowMatrix<T>& m) {
    std::uint64_t h = 14695981039346656037ull;
    const auto* bytes = reinterpret_cast<const unsigned char*>(m.data());
    for (std::size_t i = 0; i < static_cast<std::size_t>(m.size()) * sizeof(T); ++i) {
        h ^= bytes[i];
        h *= 1099511628211ull;
    }
    return h;
}

struct Digests {
    std::uint64_t pipeline = 0;
    std::uint64_t rotary_float = 0;
    std::uint64_t rotary_bfloat16 = 0;
};

Digests run() {
    using Pipeline = seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>>;
    seqembed::PipelineOptions options;
    options.dropout = 0.1;
    options.dropout_seed = 42;
    Pipeline pipeline(seqembed::TokenEmbedding<float>(1000, 96), seqembed::LearnedPositionalEmbedding<float>(64, 96),
                      options);
    pipeline.set_layer_norm(seqembed::LayerNorm<float>(96));
    pipeline.set_training(true);
    seqembed::IdMatrix ids(3, 11);
    for (seqembed::Index b = 0; b < ids.rows(); ++b)
        for (seqembed::Index t = 0; t < ids.cols(); ++t) ids(b, t) = (b * 131 + t * 17) % 1000;
    const seqembed::RowMatrix<float> x = pipeline.forward(seqembed::Batch(ids));

    const seqembed::RotaryEmbedding<float> rope(seqembed::RotaryOptions::hugging_face(/*head_dim=*/32));
    seqembed::RowMatrix<float> q = x.leftCols(96);  // 3 heads
    seqembed::RowMatrix<float> k = x.rightCols(32);  // 1 head
    seqembed::RotaryEmbedding<float>::PositionVector positions(x.rows());
    for (seqembed::Index r = 0; r < positions.size(); ++r) positions[r] = 3 * r + 1;
    seqembed::RowMatrix<Eigen::bfloat16> qb = q.cast<Eigen::bfloat16>();
    seqembed::RowMatrix<Eigen::bfloat16> kb = k.cast<Eigen::bfloat16>();
    rope.apply(q, k, 3, 1, positions);
    rope.apply(qb, kb, 3, 1, positions);

    Digests d;
    d.pipeline = digest(x);
    d.rotary_float = digest(q) ^ (digest(k) * 3);
    d.rotary_bfloat16 = digest(qb) ^ (digest(kb) * 3);
    return d;
}

}  // namespace

int main() {
    int failures = 0;
    Digests reference;
    for (const seqembed::Isa isa : seqembed::all_isas) {
        if (!seqembed::isa_supported(isa)) continue;
        seqembed::set_isa(isa);
        const Digests d = run();
        if (isa == seqembed::Isa::scalar) {
            reference = d;
        } else if (std::memcmp(&d, &reference, sizeof d) != 0) {
            std::fprintf(stderr, "kernels_consumer: ISA %s differs from scalar\n", seqembed::isa_name(isa));
            ++failures;
        }
        std::fprintf(stderr, "kernels_consumer: ISA %s run\n", seqembed::isa_name(isa));
    }
    std::printf("pipeline %016llx rotary float %016llx bfloat16 %016llx\n",
                static_cast<unsigned long long>(reference.pipeline),
                static_cast<unsigned long long>(reference.rotary_float),
                static_cast<unsigned long long>(reference.rotary_bfloat16));
    return failures == 0 ? 0 : 1;
}
