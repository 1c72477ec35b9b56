// forward_into allocates nothing: every global operator new in this program is counted, and
// Eigen's own heap allocations (which call malloc directly) are forbidden during the call with
// Eigen's EIGEN_RUNTIME_NO_MALLOC switch, turned into an exception here. A program of its own,
// since both affect everything linked with it.
#include <stdexcept>

/// Thrown when Eigen allocates while allocation is forbidden.
struct eigen_allocated : std::logic_error {
    using std::logic_error::logic_error;
};
#define EIGEN_RUNTIME_NO_MALLOC
#define eigen_assert(condition) \
    do {                          \
        if (!(condition)) throw eigen_allocated(#condition); \
    } while (false)

#include <seqembed/seqembed.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "catch.hpp"

namespace {
std::atomic<long> allocations{0};
}

// The replacements pair malloc with free; GCC cannot see that operator new is ours.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t size) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
// Every form that free() may release must be ours too (a sanitizer's runtime checks the pairs).
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
    allocations.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
    return operator new(size, tag);
}
void operator delete(void* memory, const std::nothrow_t&) noexcept { std::free(memory); }
void operator delete[](void* memory, const std::nothrow_t&) noexcept { std::free(memory); }
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete[](void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }
void operator delete[](void* memory, std::size_t) noexcept { std::free(memory); }

using seqembed::IdMatrix;
using seqembed::Index;
using seqembed::InputPipeline;
using seqembed::Padding;
using seqembed::RowMatrix;

namespace {

/// Allocations made by call(): operator new calls, plus one if Eigen tried to allocate.
template <typename Call>
long allocations_during(Call&& call) {
    const long before = allocations.load();
    long eigen = 0;
    Eigen::internal::set_is_malloc_allowed(false);
    try {
        call();
    } catch (const eigen_allocated&) {
        eigen = 1;
    }
    Eigen::internal::set_is_malloc_allowed(true);
    return allocations.load() - before + eigen;
}

IdMatrix sample_ids() {
    IdMatrix ids(4, 50);
    for (Index i = 0; i < ids.size(); ++i) ids.data()[i] = 2 + (i * 37) % 90;
    ids.row(1).head(10).setConstant(0);  // left padding with id 0
    return ids;
}

}  // namespace

TEST_CASE("The counter sees allocations", "[allocations]") {
    REQUIRE(allocations_during([] { std::vector<int> v(1000); (void)v; }) >= 1);
    REQUIRE(allocations_during([] { RowMatrix<float> m(30, 30); (void)m; }) >= 1);
}

TEST_CASE("InputPipeline::forward_into does not allocate", "[allocations]") {
    const IdMatrix ids = sample_ids();
    const std::vector<std::int64_t> lengths{50, 40, 50, 25};
    seqembed::MaskMatrix mask = seqembed::MaskMatrix::Ones(4, 50);
    mask.row(1).head(10).setZero();

    seqembed::SinusoidalOptions short_table;  // rows past 30 are computed on the fly
    short_table.max_positions = 30;
    short_table.beyond = seqembed::BeyondTable::compute;
    for (const bool training : {false, true})
        for (const auto& positions :
             {seqembed::SinusoidalPositionalEncoding<float>(64),
              seqembed::SinusoidalPositionalEncoding<float>(64, short_table)}) {
            InputPipeline<float> pipeline(seqembed::TokenEmbedding<float>(100, 64), positions,
                                          {/*dropout=*/0.2, /*dropout_seed=*/1});
            pipeline.set_training(training);
            RowMatrix<float> out(ids.size(), 64);
            const Padding by_id = Padding::by_id(0);
            const Padding right = Padding::right(lengths);
            const Padding from_mask = Padding::from_mask(mask);
            CHECK(allocations_during([&] { pipeline.forward_into(ids, out); }) == 0);
            CHECK(allocations_during([&] { pipeline.forward_into(ids, by_id, out, 3); }) == 0);
            CHECK(allocations_during([&] { pipeline.forward_into(ids, right, out); }) == 0);
            CHECK(allocations_during([&] { pipeline.forward_into(ids, from_mask, out); }) == 0);
        }

    // Streaming stores, in evaluation and in training, on rows that start on a line and on rows
    // that start 4 floats into one.
    seqembed::PipelineOptions streamed{/*dropout=*/0.1, /*dropout_seed=*/2};
    streamed.output_stores = seqembed::OutputStores::streaming;
    InputPipeline<float> wide(seqembed::TokenEmbedding<float>(100, 256), seqembed::SinusoidalPositionalEncoding<float>(256),
                              streamed);
    std::vector<float> storage(static_cast<std::size_t>(ids.size() * 256 + 32));
    const auto misaligned = reinterpret_cast<std::uintptr_t>(storage.data()) % 64;
    float* line = storage.data() + (misaligned == 0 ? 0 : (64 - misaligned) / sizeof(float));
    for (const bool training : {false, true})
        for (const Index shift : {0, 4}) {
            wide.set_training(training);
            Eigen::Map<RowMatrix<float>> wide_out(line + shift, ids.size(), 256);
            CHECK(allocations_during([&] { wide.forward_into(ids, wide_out); }) == 0);
        }

    using Learned = seqembed::LearnedPositionalEmbedding<double>;
    const InputPipeline<double, Learned> learned(seqembed::TokenEmbedding<double>(100, 16),
                                                 Learned(64, 16, seqembed::LearnedPositionsOptions::bart()));
    RowMatrix<double> out(ids.size(), 16);
    CHECK(allocations_during([&] { learned.forward_into(ids, Padding::by_id(0), out); }) == 0);

    using Narrow = seqembed::TokenEmbedding<float, Eigen::bfloat16>;
    const InputPipeline<float, seqembed::SinusoidalPositionalEncoding<float>, Narrow> narrow(
        Narrow(100, 32), seqembed::SinusoidalPositionalEncoding<float>(32));
    RowMatrix<float> narrow_out(ids.size(), 32);
    CHECK(allocations_during([&] { narrow.forward_into(ids, narrow_out); }) == 0);

    // BERT's stage: token types and LayerNorm, in evaluation and in training.
    InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>> bert(
        seqembed::TokenEmbedding<float>(100, 48), seqembed::LearnedPositionalEmbedding<float>(64, 48),
        {/*dropout=*/0.1, /*dropout_seed=*/3});
    bert.set_token_types(seqembed::TokenTypeEmbedding<float>(2, 48));
    bert.set_layer_norm(seqembed::LayerNorm<float>(48, 1e-12));
    const IdMatrix types = IdMatrix::Zero(ids.rows(), ids.cols());
    RowMatrix<float> bert_out(ids.size(), 48);
    for (const bool training : {false, true}) {
        bert.set_training(training);
        CHECK(allocations_during([&] { bert.forward_into(ids, types, Padding::by_id(0), bert_out); }) == 0);
        CHECK(allocations_during([&] { bert.forward_into(ids, bert_out); }) == 0);
    }
}

TEST_CASE("The components' forward_into do not allocate", "[allocations]") {
    const IdMatrix ids = sample_ids();
    const seqembed::TokenEmbedding<float> embedding(100, 24);
    RowMatrix<float> rows(ids.size(), 24);
    CHECK(allocations_during([&] { embedding.forward_into(ids, rows); }) == 0);

    const seqembed::SinusoidalPositionalEncoding<double> table(24, seqembed::SinusoidalOptions::fairseq());
    RowMatrix<double> positions(40, 24);
    CHECK(allocations_during([&] { table.forward_into(10000, positions); }) == 0);  // computed

    const seqembed::LearnedPositionalEmbedding<float> learned(64, 24);
    RowMatrix<float> learned_rows(40, 24);
    CHECK(allocations_during([&] { learned.forward_into(5, learned_rows); }) == 0);

    seqembed::Dropout dropout(0.3, 9);
    dropout.set_training(true);
    CHECK(allocations_during([&] { dropout.forward_into(rows, rows); }) == 0);
}
