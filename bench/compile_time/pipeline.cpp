// bench/compile_time.sh: what a user's translation unit that runs the input stage compiles: an
// InputPipeline<float> forward (float table, learned positions, LayerNorm, dropout in training)
// and a RotaryEmbedding<float> apply.
#include <seqembed/seqembed.hpp>

#include <cstdio>

int main() {
    seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>> pipeline(
        seqembed::TokenEmbedding<float>(1000, 64), seqembed::LearnedPositionalEmbedding<float>(128, 64),
        {/*dropout=*/0.1, /*dropout_seed=*/42});
    pipeline.set_layer_norm(seqembed::LayerNorm<float>(64));
    pipeline.set_training(true);
    seqembed::IdMatrix ids(2, 8);
    ids.setConstant(3);
    const seqembed::RowMatrix<float> x = pipeline.forward(seqembed::Batch(ids));

    const seqembed::RotaryEmbedding<float> rope(seqembed::RotaryOptions::hugging_face(/*head_dim=*/16));
    seqembed::RowMatrix<float> q = x.leftCols(64);
    seqembed::RowMatrix<float> k = x.leftCols(32);
    seqembed::RotaryEmbedding<float>::PositionVector positions(16);
    for (int i = 0; i < 16; ++i) positions[i] = i;
    rope.apply(q, k, 4, 2, positions);
    std::printf("%g\n", static_cast<double>(q.sum() + k.sum()));
    return 0;
}
