// Issue 11's benchmark matrix, shared by seqembed_compare (compare.cpp) and the Google Benchmark
// suite (seqembed_bench.cpp), so both programs time the same rows on the same inputs:
//
//   d_model     256, 512, 768, 1024, 4096
//   positions   sinusoidal (SinusoidalPositionalEncoding<float>), learned
//               (LearnedPositionalEmbedding<float>), none (NoPositions<float>)
//   table       float, bfloat16 (TokenEmbedding<float, Eigen::bfloat16>)
//   mode        evaluation, training with dropout 0.1
//   cache       warm, cold (caches evicted before every sample)
//
// Every workload is a batch of uniformly random ids over a 32000-token vocabulary, each sequence
// 512 tokens long (no padding): 32 x 512 = 16384 tokens for d_model 256 to 1024 (16 to 64 MiB of
// float output), 8 x 512 = 4096 tokens for d_model 4096 (64 MiB of output, as d_model 1024; the
// token table is then 500 MiB in float, 250 MiB in bfloat16). Every output is larger than the
// caches of the machines measured so far (32 MiB L3), so the matrix measures the memory-bound
// regime throughout.
#pragma once

#include <seqembed/seqembed.hpp>

#include <Eigen/Core>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bench_support.hpp"

namespace seqembed_bench {

// ---------------------------------------------------------------------------------------------
// The axes

constexpr double matrix_dropout_p = 0.1;
constexpr std::uint64_t matrix_dropout_seed = 3;

enum class Positions { sinusoidal, learned, none };
enum class Storage { float32, bfloat16 };
enum class Mode { eval, train };

inline const char* name_of(Positions positions) {
    switch (positions) {
        case Positions::sinusoidal: return "sinusoidal";
        case Positions::learned: return "learned";
        case Positions::none: return "none";
    }
    return "?";
}
inline const char* name_of(Storage storage) {
    return storage == Storage::float32 ? "float" : "bf16";
}
/// "eval", or "train_p0.1" (the dropout probability is part of the name).
inline const char* name_of(Mode mode) { return mode == Mode::eval ? "eval" : "train_p0.1"; }
inline const char* name_of(CacheState cache) { return cache == CacheState::warm ? "warm" : "cold"; }

const Positions all_positions[] = {Positions::sinusoidal, Positions::learned, Positions::none};
const Storage all_storages[] = {Storage::float32, Storage::bfloat16};
const Mode all_modes[] = {Mode::eval, Mode::train};
const CacheState all_caches[] = {CacheState::warm, CacheState::cold};

/// One d_model of the matrix with its batch (see the top of this file for why d_model 4096 has
/// fewer tokens).
struct Shape {
    Index d_model;
    Index batch;
    Index length;
    Index vocab;

    Index tokens() const { return batch * length; }
    std::size_t output_count() const { return static_cast<std::size_t>(tokens() * d_model); }
    double output_bytes() const { return static_cast<double>(output_count() * sizeof(float)); }
    /// "D512/B32xL512/V32000".
    std::string name() const {
        return "D" + std::to_string(d_model) + "/B" + std::to_string(batch) + "xL" +
               std::to_string(length) + "/V" + std::to_string(vocab);
    }
};

inline const std::vector<Shape>& matrix_shapes() {
    static const std::vector<Shape> shapes{
        {256, 32, 512, 32000},   // 16 MiB output, 31 MiB float table
        {512, 32, 512, 32000},   // issue 3's headline: 32 MiB output, 62.5 MiB table
        {768, 32, 512, 32000},   // BERT-base's width: 48 MiB output
        {1024, 32, 512, 32000},  // 64 MiB output, 125 MiB table
        {4096, 8, 512, 32000},   // Llama-7B's width: 64 MiB output, 500 MiB table
    };
    return shapes;
}

// ---------------------------------------------------------------------------------------------
// One d_model's inputs: the ids, both token tables, the three positional stages

using Bf16 = Eigen::bfloat16;
using FloatEmbedding = seqembed::TokenEmbedding<float>;
using Bf16Embedding = seqembed::TokenEmbedding<float, Bf16>;
using Sinusoidal = seqembed::SinusoidalPositionalEncoding<float>;
using Learned = seqembed::LearnedPositionalEmbedding<float>;
using NoPositions = seqembed::NoPositions<float>;

namespace detail_matrix {

inline std::vector<float> uniform_table(const Shape& shape) {
    std::vector<float> values(static_cast<std::size_t>(shape.vocab * shape.d_model));
    fill_uniform(values.data(), values.size(), 1);
    return values;
}

inline FloatEmbedding float_embedding(const std::vector<float>& values, const Shape& shape) {
    return FloatEmbedding::from_weights(
        Eigen::Map<const seqembed::RowMatrix<float>>(values.data(), shape.vocab, shape.d_model));
}

/// The bfloat16 table holds the float table's values rounded to bfloat16 (Eigen's conversion).
inline Bf16Embedding bf16_embedding(const std::vector<float>& values, const Shape& shape) {
    const seqembed::RowMatrix<Bf16> narrow =
        Eigen::Map<const seqembed::RowMatrix<float>>(values.data(), shape.vocab, shape.d_model)
            .cast<Bf16>();
    return Bf16Embedding::from_weights(narrow);
}

/// Exactly `length` rows: the rows a batch reads (default options otherwise: the paper's table,
/// exact precision, row t holds position t).
inline Sinusoidal sinusoidal(const Shape& shape) {
    seqembed::SinusoidalOptions options;
    options.max_positions = shape.length;
    return Sinusoidal(shape.d_model, options);
}

}  // namespace detail_matrix

/// The inputs of every row of one d_model, built once: tables seqembed owns (from_weights, or
/// built by seqembed), as a model loaded from a checkpoint has them.
struct WidthInputs {
    Shape shape;
    seqembed::IdMatrix ids;
    FloatEmbedding float_table;
    Bf16Embedding bf16_table;
    Sinusoidal sinusoidal;
    Learned learned;
    NoPositions none;

    explicit WidthInputs(const Shape& shape_)
        : WidthInputs(shape_, detail_matrix::uniform_table(shape_)) {}

private:
    WidthInputs(const Shape& shape_, const std::vector<float>& values)
        : shape(shape_),
          ids(random_ids(shape_.batch, shape_.length, shape_.vocab, 2)),
          float_table(detail_matrix::float_embedding(values, shape_)),
          bf16_table(detail_matrix::bf16_embedding(values, shape_)),
          sinusoidal(detail_matrix::sinusoidal(shape_)),
          learned(shape_.length, shape_.d_model),  // seeded N(0, 1), offset 0 (BERT's)
          none(shape_.d_model) {}
};

/// Calls fn(embedding, positions) with the static types of the row's table and positional
/// stage, so that fn (a generic lambda) can build an InputPipeline of exactly those types.
template <typename Fn>
void with_stages(const WidthInputs& inputs, Positions positions, Storage storage, Fn&& fn) {
    auto with_positions = [&](const auto& embedding) {
        switch (positions) {
            case Positions::sinusoidal: fn(embedding, inputs.sinusoidal); return;
            case Positions::learned: fn(embedding, inputs.learned); return;
            case Positions::none: fn(embedding, inputs.none); return;
        }
    };
    if (storage == Storage::float32)
        with_positions(inputs.float_table);
    else
        with_positions(inputs.bf16_table);
}

/// A pipeline over the row's stages (copies of them), dropout 0.1 with the matrix's seed, in
/// training when mode is train, writing with the given stores.
template <typename Embedding, typename Positional>
seqembed::InputPipeline<float, Positional, Embedding> make_pipeline(
    const Embedding& embedding, const Positional& positions, Mode mode,
    seqembed::OutputStores stores = seqembed::OutputStores::automatic) {
    seqembed::PipelineOptions options{matrix_dropout_p, matrix_dropout_seed};
    options.output_stores = stores;
    seqembed::InputPipeline<float, Positional, Embedding> pipeline(embedding, positions, options);
    pipeline.set_training(mode == Mode::train);
    return pipeline;
}

// ---------------------------------------------------------------------------------------------
// The plain Eigen loop: the reference point

/// Row t of the positional stage's stored table, as the pipeline reads it for token t of a
/// sequence (default options: no offset, first position 0); nullptr for no positions.
inline const float* position_rows(const Sinusoidal& positions) {
    return positions.table().data();
}
inline const float* position_rows(const Learned& positions) {
    return positions.table().data();
}
inline const float* position_rows(const NoPositions&) { return nullptr; }

/// The same sum as the pipeline, one Eigen expression per token over the same table (the
/// pipeline's own memory) and ids, with no checks and no padding:
///   out.row(r) = (table.row(id).cast<float>() * scale [+ positions.row(t)])
///                [.cwiseProduct(mask.row(r))]
/// In training the mask is precomputed: a float matrix of the output's shape holding 0 or
/// 1 / (1 - p), the form of PyTorch's unfused CPU dropout (`input * bernoulli(1 - p) / (1 - p)`),
/// so the loop reads that many more bytes instead of drawing random numbers. Whether `* scale +`
/// becomes an FMA is the compiler's business (not in the bench targets' ISO C++ mode, but a
/// gnu++ or -ffp-contract=fast build may), so the loop is checked against the pipeline within
/// an ulp, not bit for bit.
template <typename Storage_>
class PlainLoop {
public:
    PlainLoop(const Storage_* table, Index vocab, Index d_model, float scale,
              const float* positions, Index length)
        : m_table(table, vocab, d_model),
          m_scale(scale),
          m_positions(positions),
          m_length(length) {}

    /// out (tokens x d_model) = the sum; mask is null in evaluation, else tokens x d_model
    /// factors.
    void operator()(const seqembed::IdMatrix& ids, seqembed::RowMatrix<float>& out,
                    const float* mask) const {
        if (m_positions != nullptr) {
            if (mask != nullptr)
                run<true, true>(ids, out, mask);
            else
                run<true, false>(ids, out, mask);
        } else {
            if (mask != nullptr)
                run<false, true>(ids, out, mask);
            else
                run<false, false>(ids, out, mask);
        }
    }

private:
    template <bool with_positions, bool with_mask>
    void run(const seqembed::IdMatrix& ids, seqembed::RowMatrix<float>& out,
             const float* mask_data) const {
        const Index width = m_table.cols();
        const Eigen::Map<const seqembed::RowMatrix<float>> positions(
            m_positions, with_positions ? m_length : 0, width);
        const Eigen::Map<const seqembed::RowMatrix<float>> mask(
            mask_data, with_mask ? out.rows() : 0, width);
        for (Index b = 0; b < ids.rows(); ++b) {
            for (Index t = 0; t < ids.cols(); ++t) {
                const Index r = b * ids.cols() + t;
                const auto row = m_table.row(ids(b, t)).template cast<float>() * m_scale;
                if constexpr (with_positions && with_mask)
                    out.row(r) = (row + positions.row(t)).cwiseProduct(mask.row(r));
                else if constexpr (with_positions)
                    out.row(r) = row + positions.row(t);
                else if constexpr (with_mask)
                    out.row(r) = row.cwiseProduct(mask.row(r));
                else
                    out.row(r) = row;
            }
        }
    }

    Eigen::Map<const seqembed::RowMatrix<Storage_>> m_table;
    float m_scale;
    const float* m_positions;
    Index m_length;
};

/// The plain loop over the pipeline's own tables.
template <typename Embedding, typename Positional>
auto make_plain_loop(const Embedding& embedding, const Positional& positions, Index length) {
    const auto table = embedding.table();
    return PlainLoop<typename Embedding::StorageType>(table.data(), table.rows(), table.cols(),
                                                      embedding.scale(), position_rows(positions),
                                                      length);
}

// ---------------------------------------------------------------------------------------------
// The first consumer of the output

/// The reader timed after the producer for the end-to-end figures: the sum of every output value,
/// in order from row 0, vectorised by Eigen. Why a sum and not, say, a 512 x 512 matmul of the
/// first rows: the first layer of a model (LayerNorm, then the QKV projection) reads every row
/// of its input once, from the first; a sum does that with next to no arithmetic, so the time
/// it adds is the time to bring the output back to the core, which is exactly what streaming
/// versus cached stores trade (streamed rows come from memory; cached rows may still be in L2
/// or L3, for the price of a read for ownership while writing). A matmul would add several ms of
/// arithmetic at every width and hide that difference; reading only the first rows would read
/// the rows a cached write evicted first.
inline float read_output(const float* data, std::size_t count) {
    return Eigen::Map<const Eigen::VectorXf>(data, static_cast<Index>(count)).sum();
}

}  // namespace seqembed_bench
