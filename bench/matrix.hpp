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

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

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

/// BERT's layers after the sum, for the rows that compare LayerNorm's cost (seqembed_compare only):
/// none; token types (2 rows, the first half of each sequence type 0, the rest type 1); token
/// types and LayerNorm (eps 1e-12, seeded weights).
enum class Layers { none, types, types_ln };

inline const char* name_of(Layers layers) {
    switch (layers) {
        case Layers::none: return "";
        case Layers::types: return "+types";
        case Layers::types_ln: return "+types+LN";
    }
    return "?";
}

namespace detail_matrix {

inline seqembed::IdMatrix half_and_half_types(const Shape& shape) {
    seqembed::IdMatrix types(shape.batch, shape.length);
    for (Index b = 0; b < shape.batch; ++b)
        for (Index t = 0; t < shape.length; ++t) types(b, t) = t < shape.length / 2 ? 0 : 1;
    return types;
}

inline seqembed::TokenTypeEmbedding<float> type_table(const Shape& shape) {
    std::vector<float> values(static_cast<std::size_t>(2 * shape.d_model));
    fill_uniform(values.data(), values.size(), 13);
    return seqembed::TokenTypeEmbedding<float>::from_weights(
        Eigen::Map<const seqembed::RowMatrix<float>>(values.data(), 2, shape.d_model));
}

inline seqembed::LayerNorm<float> layer_norm(const Shape& shape) {
    using Vector = seqembed::LayerNorm<float>::Vector;
    Vector gamma(shape.d_model);
    Vector beta(shape.d_model);
    fill_uniform(gamma.data(), static_cast<std::size_t>(shape.d_model), 14);
    fill_uniform(beta.data(), static_cast<std::size_t>(shape.d_model), 15);
    return seqembed::LayerNorm<float>::from_weights(gamma, beta, 1e-12);
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
    seqembed::IdMatrix type_ids;
    seqembed::TokenTypeEmbedding<float> types;
    seqembed::LayerNorm<float> norm;

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
          none(shape_.d_model),
          type_ids(detail_matrix::half_and_half_types(shape_)),
          types(detail_matrix::type_table(shape_)),
          norm(detail_matrix::layer_norm(shape_)) {}
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

/// The pipeline of make_pipeline with BERT's layers added.
template <typename Embedding, typename Positional>
seqembed::InputPipeline<float, Positional, Embedding> make_pipeline(
    const WidthInputs& inputs, Layers layers, const Embedding& embedding,
    const Positional& positions, Mode mode,
    seqembed::OutputStores stores = seqembed::OutputStores::automatic) {
    auto pipeline = make_pipeline(embedding, positions, mode, stores);
    if (layers != Layers::none) pipeline.set_token_types(inputs.types);
    if (layers == Layers::types_ln) pipeline.set_layer_norm(inputs.norm);
    return pipeline;
}

/// The batch a row of these layers embeds: the ids, with BERT's token types when it has them.
inline seqembed::Batch batch_of(const WidthInputs& inputs, Layers layers) {
    seqembed::Batch batch(inputs.ids);
    if (layers != Layers::none) batch.token_types = inputs.type_ids;
    return batch;
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
// The gather floor: the practical floor of the pass (issue 27)

/// The same rows as the pipeline's evaluation, by the plainest fast code: per token, its table
/// row (widened from bfloat16 by a shift) times the scale, plus its position row, written with
/// streaming stores of the widest vector the build's target has, while the lines of the table
/// row `ahead` tokens on are requested (_mm_prefetch), one line per line written from the line
/// that holds the row's first byte, as seqembed's default 8 KiB ahead. No checks, no padding, no
/// dropout, no carried vectors: where the output is not aligned to the vector, narrower
/// streaming stores (16 bytes, which every x86-64 has and Eigen's allocations satisfy) take
/// their place. Without SSE2, plain stores. A benchmark contender, not library code: what a
/// memory-bound gather of these rows costs on this host and build.
// GCC 12's AVX-512 intrinsics start from an undefined vector, which -Wmaybe-uninitialized
// reports in their callers (GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
template <typename Storage_>
class GatherFloor {
public:
    GatherFloor(const Storage_* table, Index d_model, float scale, const float* positions,
                std::size_t prefetch_bytes = std::size_t{8} << 10)
        : m_table(table),
          m_width(d_model),
          m_scale(scale),
          m_positions(positions),
          m_ahead(std::clamp<Index>(
              static_cast<Index>((prefetch_bytes + row_bytes(d_model) - 1) / row_bytes(d_model)), 1,
              64)) {}

    /// out (tokens x d_model, rows end to end) = the gathered rows.
    void operator()(const seqembed::IdMatrix& ids, float* out) const {
        const Index length = ids.cols();
        const Index tokens = ids.size();
        const auto id_of = [&](Index r) { return ids(r / length, r % length); };
        for (Index r = 0; r < tokens; ++r) {
            const Storage_* row = m_table + id_of(r) * m_width;
            const Storage_* ahead = r + m_ahead < tokens ? m_table + id_of(r + m_ahead) * m_width : nullptr;
            const float* position = m_positions == nullptr ? nullptr : m_positions + (r % length) * m_width;
            write_row(row, position, ahead, out + r * m_width);
        }
#if defined(__SSE2__)
        _mm_sfence();
#endif
    }

private:
    static std::size_t row_bytes(Index d_model) {
        return std::max<std::size_t>(1, sizeof(Storage_) * static_cast<std::size_t>(d_model));
    }

    void write_row(const Storage_* row, const float* position, const Storage_* ahead,
                   float* out) const {
        const char* line = reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(ahead) &
                                                         ~std::uintptr_t{63});
        const char* const end = ahead == nullptr ? nullptr : reinterpret_cast<const char*>(ahead + m_width);
        Index j = 0;
#if defined(__AVX512F__)
        if (reinterpret_cast<std::uintptr_t>(out) % 64 == 0) {
            const __m512 scale = _mm512_set1_ps(m_scale);
            for (; j + 16 <= m_width; j += 16) {
                if (j % 16 == 0 && line < end) {
                    _mm_prefetch(line, _MM_HINT_T0);
                    line += 64;
                }
                __m512 value = _mm512_mul_ps(load16(row + j), scale);
                if (position != nullptr) value = _mm512_add_ps(value, _mm512_loadu_ps(position + j));
                _mm512_stream_ps(out + j, value);
            }
        }
#elif defined(__AVX__)
        if (reinterpret_cast<std::uintptr_t>(out) % 32 == 0) {
            const __m256 scale = _mm256_set1_ps(m_scale);
            for (; j + 8 <= m_width; j += 8) {
                if (j % 16 == 0 && line < end) {
                    _mm_prefetch(line, _MM_HINT_T0);
                    line += 64;
                }
                __m256 value = _mm256_mul_ps(load8(row + j), scale);
                if (position != nullptr) value = _mm256_add_ps(value, _mm256_loadu_ps(position + j));
                _mm256_stream_ps(out + j, value);
            }
        }
#endif
#if defined(__SSE2__)
        if (reinterpret_cast<std::uintptr_t>(out) % 16 == 0) {
            const __m128 scale = _mm_set1_ps(m_scale);
            for (; j + 4 <= m_width; j += 4) {
                if (j % 16 == 0 && line < end) {
                    _mm_prefetch(line, _MM_HINT_T0);
                    line += 64;
                }
                __m128 value = _mm_mul_ps(load4(row + j), scale);
                if (position != nullptr) value = _mm_add_ps(value, _mm_loadu_ps(position + j));
                _mm_stream_ps(out + j, value);
            }
        }
        for (; line < end; line += 64) _mm_prefetch(line, _MM_HINT_T0);  // a wider row ahead
#endif
        for (; j < m_width; ++j) {
            float value = static_cast<float>(row[j]) * m_scale;
            if (position != nullptr) value += position[j];
            out[j] = value;
        }
    }

#if defined(__AVX512F__)
    static __m512 load16(const Storage_* p) {
        if constexpr (std::is_same_v<Storage_, float>) {
            return _mm512_loadu_ps(p);
        } else {
            const __m256i narrow = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
            return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(narrow), 16));
        }
    }
#elif defined(__AVX2__)
    static __m256 load8(const Storage_* p) {
        if constexpr (std::is_same_v<Storage_, float>) {
            return _mm256_loadu_ps(p);
        } else {
            const __m128i narrow = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
            return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(narrow), 16));
        }
    }
#elif defined(__AVX__)
    static __m256 load8(const Storage_* p) {
        return _mm256_set_m128(load4(p + 4), load4(p));
    }
#endif
#if defined(__SSE2__)
    static __m128 load4(const Storage_* p) {
        if constexpr (std::is_same_v<Storage_, float>) {
            return _mm_loadu_ps(p);
        } else {
            const __m128i narrow = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
            return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), narrow));
        }
    }
#endif

    const Storage_* m_table;
    Index m_width;
    float m_scale;
    const float* m_positions;
    Index m_ahead;
};
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/// The gather floor over the pipeline's own tables.
template <typename Embedding, typename Positional>
auto make_gather_floor(const Embedding& embedding, const Positional& positions) {
    return GatherFloor<typename Embedding::StorageType>(embedding.table().data(), embedding.d_model(),
                                                        embedding.scale(), position_rows(positions));
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
