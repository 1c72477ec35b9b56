// Dropout: identity in evaluation and at p = 0, the statistics and exact values of training,
// determinism in (seed, call, element), mask(), every ISA's mask kernel, the row kernel's walk
// through the mask, chunking independence, the call counter, copies (which share it), in-place
// forwards and concurrent forwards. (ARS's known-answer vectors are in test_ars.cpp.)
#include <seqembed/detail/engine/kernels.hpp>
#include <seqembed/detail/engine/row_pass.hpp>
#include <seqembed/detail/stage_access.hpp>
#include <seqembed/dropout.hpp>
#include <seqembed/isa.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "bit_equal.hpp"
#include "catch.hpp"
#include "dropout_reference.hpp"
#include "isa_support.hpp"

using seqembed::Dropout;
using seqembed::Index;
using seqembed::MaskMatrix;
using seqembed::RowMatrix;

namespace {

/// rows x cols values with no zero among them (so a zero output always means "dropped"),
/// positive and negative, of several magnitudes.
template <typename Scalar>
RowMatrix<Scalar> nonzero_input(Index rows, Index cols) {
    RowMatrix<Scalar> x(rows, cols);
    for (Index i = 0; i < x.size(); ++i) {
        const double magnitude = 0.25 + 0.125 * static_cast<double>(i % 29);
        x.data()[i] = static_cast<Scalar>(i % 3 == 1 ? -magnitude : magnitude);
    }
    return x;
}

/// True when the two matrices hold the same bytes (NaN and -0.0 included).
/// Values that an identity must pass through unchanged, bit for bit.
template <typename Scalar>
RowMatrix<Scalar> special_input() {
    RowMatrix<Scalar> x(3, 5);
    x << Scalar(1), Scalar(-2.5), Scalar(0), -Scalar(0), std::numeric_limits<Scalar>::denorm_min(),
        std::numeric_limits<Scalar>::quiet_NaN(), std::numeric_limits<Scalar>::infinity(),
        -std::numeric_limits<Scalar>::infinity(), std::numeric_limits<Scalar>::max(),
        std::numeric_limits<Scalar>::lowest(), Scalar(1e-3), Scalar(7), Scalar(-7), Scalar(0.1),
        Scalar(3.25);
    return x;
}


/// x with row r taken from mask element starts[r] on: each element times keep where the
/// documentation keeps its element, else 0 (the reference of the row-kernel tests).
template <typename Scalar>
RowMatrix<Scalar> dropped_as_documented(const RowMatrix<Scalar>& x, const std::vector<std::uint64_t>& starts,
                                        const seqembed::detail::DropoutKey& key, Scalar keep) {
    RowMatrix<Scalar> expected(x.rows(), x.cols());
    for (Index r = 0; r < x.rows(); ++r)
        for (Index j = 0; j < x.cols(); ++j) {
            const std::uint64_t e = starts[static_cast<std::size_t>(r)] + static_cast<std::uint64_t>(j);
            expected(r, j) = documented_keeps(key.seed, key.call, e, key.threshold) ? x(r, j) * keep : Scalar(0);
        }
    return expected;
}

/// The row kernel's dropout of x's rows (row r from mask element starts[r] on) into rows end to
/// end from `out`, in one pass of the ISA in force.
template <typename Scalar>
void dropout_by_row_kernel(const RowMatrix<Scalar>& x, const std::vector<std::uint64_t>& starts,
                           const seqembed::detail::DropoutKey& key, Scalar keep, Scalar* out) {
    seqembed::detail::RowJob<Scalar> job;
    job.width = x.cols();
    job.dropping = true;
    job.key = key;
    job.keep_scale = keep;
    seqembed::detail::RowPass<Scalar, Scalar> pass(job);
    for (Index r = 0; r < x.rows(); ++r)
        pass.add({out + r * x.cols(), x.row(r).data(), starts[static_cast<std::size_t>(r)]}, nullptr);
    pass.finish();
}

}  // namespace

TEMPLATE_TEST_CASE("Dropout in evaluation mode is the identity, bit for bit", "[dropout]", float,
                   double) {
    const RowMatrix<TestType> x = special_input<TestType>();
    for (const double p : {0.0, 0.1, 0.5, 0.9}) {
        CAPTURE(p);
        Dropout dropout(p, 1234);
        REQUIRE_FALSE(dropout.is_training());  // evaluation is the default
        REQUIRE_FALSE(dropout.is_active());
        const RowMatrix<TestType> y = dropout.template forward<TestType>(x);
        REQUIRE(bit_equal(y, x));
        RowMatrix<TestType> out = RowMatrix<TestType>::Constant(3, 5, TestType(42));
        dropout.template forward_into<TestType>(x, out);
        REQUIRE(bit_equal(out, x));
        REQUIRE(dropout.calls() == 0);
    }
}

TEMPLATE_TEST_CASE("Dropout with p = 0 in training is the identity, bit for bit", "[dropout]",
                   float, double) {
    Dropout dropout(0.0, 77);
    dropout.set_training(true);
    REQUIRE(dropout.is_training());
    REQUIRE_FALSE(dropout.is_active());
    const RowMatrix<TestType> x = special_input<TestType>();
    for (int call = 0; call < 3; ++call)
        REQUIRE(bit_equal(dropout.template forward<TestType>(x), x));
    const RowMatrix<TestType> big = nonzero_input<TestType>(64, 33);
    REQUIRE(bit_equal(dropout.template forward<TestType>(big), big));
}

TEMPLATE_TEST_CASE("Dropout keeps 1 - p of the elements, scales them exactly and keeps the mean",
                   "[dropout]", float, double) {
    // 2^20 elements: within 5 sigma of 1 - p for every p.
    const Index rows = 1024;
    const Index cols = 1024;
    const RowMatrix<TestType> x = nonzero_input<TestType>(rows, cols);
    const auto n = static_cast<double>(x.size());
    double x_sum = 0.0;
    double x_square_sum = 0.0;
    for (Index i = 0; i < x.size(); ++i) {
        x_sum += static_cast<double>(x.data()[i]);
        x_square_sum += static_cast<double>(x.data()[i]) * static_cast<double>(x.data()[i]);
    }
    for (const double p : {0.1, 0.5, 0.9}) {
        CAPTURE(p);
        Dropout dropout(p, 20240601);
        dropout.set_training(true);
        REQUIRE(dropout.is_active());
        // As torch: 1 / (1 - p) computed in the tensor's dtype.
        const TestType scale = TestType(1) / static_cast<TestType>(1.0 - p);
        REQUIRE(dropout.template keep_scale<TestType>() == scale);

        RowMatrix<TestType> y(rows, cols);
        dropout.template forward_into<TestType>(x, y);
        Index kept = 0;
        Index wrong = 0;
        double y_sum = 0.0;
        for (Index i = 0; i < y.size(); ++i) {
            const TestType value = y.data()[i];
            if (value == TestType(0)) continue;  // dropped (x has no zeros)
            ++kept;
            if (value != x.data()[i] * scale) ++wrong;
            y_sum += static_cast<double>(value);
        }
        REQUIRE(wrong == 0);

        const double expected = 1.0 - p;
        const double sigma = std::sqrt(p * (1.0 - p) / n);
        const double fraction = static_cast<double>(kept) / n;
        CAPTURE(fraction, expected, sigma);
        REQUIRE(std::abs(fraction - expected) < 5.0 * sigma);

        // E[y] = x; the mean's standard error is sqrt(mean(x^2) * p / (1 - p) / n).
        const double mean_sigma = std::sqrt(x_square_sum / n * p / (1.0 - p) / n);
        CAPTURE(y_sum / n, x_sum / n, mean_sigma);
        REQUIRE(std::abs(y_sum / n - x_sum / n) < 5.0 * mean_sigma);
    }
}

TEMPLATE_TEST_CASE("Dropout's kept values are x * (1 / (1 - p)) with 1 / (1 - p) in Scalar",
                   "[dropout]", float, double) {
    // For these p, float(1.0 / (1.0 - p)) (the division in double, then rounded) differs from
    // 1.0f / float(1.0 - p), which is what torch computes for a float32 tensor.
    const RowMatrix<TestType> x = nonzero_input<TestType>(32, 64);
    for (const double p : {0.15, 0.42, 0.71, 0.97}) {
        CAPTURE(p);
        Dropout dropout(p, 31);
        dropout.set_training(true);
        const TestType scale = TestType(1) / static_cast<TestType>(1.0 - p);
        REQUIRE(dropout.template keep_scale<TestType>() == scale);
        const RowMatrix<TestType> y = dropout.template forward<TestType>(x);
        const MaskMatrix mask = dropout.mask(0, x.rows(), x.cols());
        Index kept = 0;
        for (Index i = 0; i < x.size(); ++i) {
            REQUIRE(y.data()[i] == (mask.data()[i] != 0 ? x.data()[i] * scale : TestType(0)));
            kept += mask.data()[i];
        }
        REQUIRE(kept > 0);
    }
}

TEST_CASE("Dropout honours p to 1/65536: p = 0.9 keeps about 10 %", "[dropout]") {
    // A coarser threshold (for example 8 bits) would keep 25/256 = 9.77 %: 7.5 sigma away over
    // 2^20 elements.
    Dropout dropout(0.9, 5);
    dropout.set_training(true);
    const RowMatrix<float> x = RowMatrix<float>::Ones(1024, 1024);
    const RowMatrix<float> y = dropout.forward<float>(x);
    const auto kept = static_cast<double>((y.array() != 0.0f).count());
    const double fraction = kept / static_cast<double>(y.size());
    REQUIRE(std::abs(fraction - 0.1) < 5.0 * std::sqrt(0.09 / static_cast<double>(y.size())));
}

TEST_CASE("Dropout's mask is the documented function of ARS-5's bits", "[dropout]") {
    // The extremes: 1/65536 (threshold 1), 0.99999 (65535: one draw in 65536 kept) and
    // 0.9999999 (65536: nothing kept).
    const std::vector<double> ps{0.1, 0.3, 0.5, 0.9, 1.0 / 65536, 0.99999, 0.9999999};
    const std::vector<std::pair<std::uint64_t, std::uint64_t>> keys{
        {0, 0}, {42, 7}, {0xDEADBEEFCAFEull, (std::uint64_t{1} << 40) + 3}};
    const Index rows = 61;
    const Index cols = 97;  // rows straddle words
    for (const double p : ps)
        for (const auto& [seed, call] : keys) {
            const Dropout dropout(p, seed);
            const MaskMatrix mask = dropout.mask(call, rows, cols);
            Index kept = 0;
            for (Index e = 0; e < mask.size(); ++e) {
                const bool expected = documented_keeps(seed, call, static_cast<std::uint64_t>(e), dropout.threshold());
                kept += mask.data()[e];
                if ((mask.data()[e] == 1) != expected) {
                    CAPTURE(p, seed, call, e);
                    REQUIRE((mask.data()[e] == 1) == expected);
                }
            }
            if (p > 0.999999) CHECK(kept == 0);
        }
    CHECK(Dropout(0.9999999, 1).threshold() == 65536u);
}

TEMPLATE_TEST_CASE("The row kernel gives each element its own mask bit, however rows move through the mask",
                   "[dropout][isa]", float, double) {
    // The row kernel reads the mask 64 bits at a time from any element, keeping the last two
    // words it drew for the rows after: rows skip words (padded rows, another worker's rows), go
    // back to earlier ones or start in the middle of a word (Dropout::apply at any element). Rows
    // of 1 to 2000 elements, end to end in one pass so that vectors straddle rows, from an output
    // 0 to 3 values off alignment; thresholds 1 to 65536; words from 0 and across block 2^32;
    // every ISA. Each element must be its input times keep_scale where the documentation keeps
    // it, else 0, and nothing past the rows written.
    using seqembed::detail::DropoutKey;
    constexpr Index rows = 12;
    constexpr std::uint64_t jump = 240;  // not a multiple of 64: jumps land at many offsets in a word
    for (const double p : {0.1, 0.3, 0.25, 1.0 / 65536, 0.99999, 0.9999999})
        for (const std::uint64_t first_word : {std::uint64_t{0}, (std::uint64_t{1} << 29) - 3})
            for (const Index width : {1, 17, 240, 250, 2000}) {
                const Dropout dropout(p, 1234);
                const DropoutKey key{dropout.seed(), 5, dropout.threshold()};
                // Where each row starts in the mask.
                std::vector<std::uint64_t> starts;
                const std::uint64_t first = first_word * 64;
                std::uint64_t element = first + 16;
                for (Index r = 0; r < rows; ++r) {
                    starts.push_back(element);
                    const auto step = static_cast<std::uint64_t>(width);
                    switch (r % 4) {
                        case 0: element += step; break;                          // the next row
                        case 1: element += step + 2 * jump + 5; break;  // words skipped
                        case 2:                                                  // back
                            element = element >= first + 3 * jump + 11 ? element - 3 * jump - 11 : first;
                            break;
                        default: element += 100; break;  // into the middle of a word
                    }
                }
                const RowMatrix<TestType> x = nonzero_input<TestType>(rows, width);
                const TestType keep = dropout.template keep_scale<TestType>();
                const RowMatrix<TestType> expected = dropped_as_documented(x, starts, key, keep);
                for_each_isa([&](seqembed::Isa) {
                    for (const Index shift : {0, 1, 3}) {
                        CAPTURE(p, first_word, width, shift);
                        const TestType sentinel = TestType(-999);
                        std::vector<TestType> raw(static_cast<std::size_t>(rows * width + 32), sentinel);
                        const auto misaligned = reinterpret_cast<std::uintptr_t>(raw.data()) % 64;
                        TestType* out = raw.data() + (misaligned == 0 ? 0 : (64 - misaligned) / sizeof(TestType)) + shift;
                        dropout_by_row_kernel(x, starts, key, keep, out);
                        const Eigen::Map<const RowMatrix<TestType>> written(out, rows, width);
                        REQUIRE(written == expected);
                        REQUIRE(out[rows * width] == sentinel);
                        for (TestType* before = raw.data(); before < out; ++before) REQUIRE(*before == sentinel);
                    }
                });
            }
}

TEMPLATE_TEST_CASE("Rows end to end take each mask word once, whatever their width", "[dropout][isa]", float,
                   double) {
    // Rows end to end, so that a row starts in the word the row before ended in (kept from it):
    // rows narrower than a vector (no vector written), a vector or two a row, a word exactly and
    // wide rows. Each element must be its input times keep_scale where the documentation keeps
    // it, else 0.
    using seqembed::detail::DropoutKey;
    for (const double p : {0.1, 0.25})
        for (const Index width : {3, 12, 24, 40, 64, 512}) {
            const Index rows = 12000 / width + 1;
            const Dropout dropout(p, 99);
            const DropoutKey key{dropout.seed(), 3, dropout.threshold()};
            const std::uint64_t first = 7 * 240 + 5;
            const RowMatrix<TestType> x = nonzero_input<TestType>(rows, width);
            std::vector<std::uint64_t> starts;
            for (Index r = 0; r < rows; ++r) starts.push_back(first + static_cast<std::uint64_t>(r * width));
            const TestType keep = dropout.template keep_scale<TestType>();
            const RowMatrix<TestType> expected = dropped_as_documented(x, starts, key, keep);
            for_each_isa([&](seqembed::Isa) {
                CAPTURE(p, width);
                RowMatrix<TestType> out(rows, width);
                dropout_by_row_kernel(x, starts, key, keep, out.data());
                REQUIRE(out == expected);
            });
        }
}

TEMPLATE_TEST_CASE("Dropout is deterministic in (seed, call) and differs across both", "[dropout]",
                   float, double) {
    const RowMatrix<TestType> x = nonzero_input<TestType>(16, 40);
    Dropout a(0.5, 42);
    Dropout b(0.5, 42);
    Dropout other_seed(0.5, 43);
    a.set_training(true);
    b.set_training(true);
    other_seed.set_training(true);

    const RowMatrix<TestType> a0 = a.template forward<TestType>(x);
    const RowMatrix<TestType> a1 = a.template forward<TestType>(x);
    const RowMatrix<TestType> b0 = b.template forward<TestType>(x);
    const RowMatrix<TestType> b1 = b.template forward<TestType>(x);
    const RowMatrix<TestType> c0 = other_seed.template forward<TestType>(x);

    REQUIRE(bit_equal(a0, b0));  // same seed, same call
    REQUIRE(bit_equal(a1, b1));
    REQUIRE_FALSE(bit_equal(a0, a1));  // same seed, next call
    REQUIRE_FALSE(bit_equal(a0, c0));  // other seed, same call
    // Not just different values: different masks.
    REQUIRE(a.mask(0, 16, 40) != a.mask(1, 16, 40));
    REQUIRE(a.mask(0, 16, 40) != other_seed.mask(0, 16, 40));
    REQUIRE(a.mask(0, 16, 40) == b.mask(0, 16, 40));
}

TEMPLATE_TEST_CASE("Dropout's mask() and keeps() say which outputs are zero", "[dropout]", float,
                   double) {
    const Index rows = 13;
    const Index cols = 37;  // not a multiple of 8: rows straddle ARS blocks
    const RowMatrix<TestType> x = nonzero_input<TestType>(rows, cols);
    Dropout dropout(0.3, 99);
    dropout.set_training(true);
    dropout.set_calls(5);
    const std::uint64_t call = dropout.calls();
    const RowMatrix<TestType> y = dropout.template forward<TestType>(x);
    const MaskMatrix mask = dropout.mask(call, rows, cols);
    REQUIRE(mask.rows() == rows);
    REQUIRE(mask.cols() == cols);
    Index kept = 0;
    for (Index r = 0; r < rows; ++r)
        for (Index c = 0; c < cols; ++c) {
            CAPTURE(r, c);
            const std::uint8_t m = mask(r, c);
            REQUIRE((m == 0 || m == 1));
            REQUIRE((y(r, c) != TestType(0)) == (m == 1));
            REQUIRE(dropout.keeps(call, static_cast<std::uint64_t>(r * cols + c)) == (m == 1));
            kept += m;
        }
    // Both kinds occur (p = 0.3 over 481 elements).
    REQUIRE(kept > 0);
    REQUIRE(kept < rows * cols);
}

TEMPLATE_TEST_CASE("Dropout::apply in chunks equals one apply over the whole buffer", "[dropout]",
                   float, double) {
    const Dropout dropout(0.3, 314159);  // a threshold with a low byte: ties occur
    const Index n = 1000;
    const RowMatrix<TestType> x = nonzero_input<TestType>(1, n);
    const std::vector<Index> pattern{1, 7, 8, 13};
    // Element offsets inside an ARS block, past 2^32 blocks, and huge call numbers.
    const std::vector<std::uint64_t> first_elements{0, 3, 8, 1001, (std::uint64_t{1} << 35) + 5};
    const std::vector<std::uint64_t> calls{0, 1, 0xFFFFFFFFu, std::uint64_t{1} << 40};
    for (const std::uint64_t first : first_elements)
        for (const std::uint64_t call : calls)
            for (std::size_t phase = 0; phase < pattern.size(); ++phase) {
                CAPTURE(first, call, phase);
                RowMatrix<TestType> whole = x;
                dropout.apply(whole.data(), n, call, first);

                RowMatrix<TestType> chunked = x;
                Index done = 0;
                for (std::size_t k = phase; done < n; ++k) {
                    const Index size = std::min(pattern[k % pattern.size()], n - done);
                    dropout.apply(chunked.data() + done, size, call,
                                  first + static_cast<std::uint64_t>(done));
                    done += size;
                }
                REQUIRE(bit_equal(whole, chunked));

                // And every element follows keeps().
                for (Index i = 0; i < n; ++i) {
                    const bool kept = dropout.keeps(call, first + static_cast<std::uint64_t>(i));
                    REQUIRE(whole(0, i) == (kept ? x(0, i) * dropout.template keep_scale<TestType>()
                                                 : TestType(0)));
                }
            }
    // The chunks really depend on the element index: a shifted start gives another mask.
    RowMatrix<TestType> at0 = x;
    RowMatrix<TestType> at1 = x;
    dropout.apply(at0.data(), n, 0, 0);
    dropout.apply(at1.data(), n, 0, 1);
    REQUIRE_FALSE(bit_equal(at0, at1));
}

TEMPLATE_TEST_CASE("Dropout's forward uses call calls() and element r * cols + c", "[dropout]",
                   float, double) {
    const RowMatrix<TestType> x = nonzero_input<TestType>(9, 11);
    Dropout dropout(0.25, 8);
    dropout.set_training(true);
    for (std::uint64_t call = 0; call < 3; ++call) {
        RowMatrix<TestType> expected = x;
        dropout.apply(expected.data(), expected.size(), call, 0);
        REQUIRE(bit_equal(dropout.template forward<TestType>(x), expected));
    }
}

TEST_CASE("Dropout's calls() advances by one per training forward, not in evaluation",
          "[dropout]") {
    const RowMatrix<float> x = nonzero_input<float>(4, 6);
    Dropout dropout(0.5, 3);
    REQUIRE(dropout.calls() == 0);
    (void)dropout.forward<float>(x);  // evaluation
    REQUIRE(dropout.calls() == 0);
    dropout.set_training(true);
    (void)dropout.forward<float>(x);
    REQUIRE(dropout.calls() == 1);
    RowMatrix<float> out(4, 6);
    dropout.forward_into<float>(x, out);
    REQUIRE(dropout.calls() == 2);
    // What InputPipeline takes for each training forward.
    REQUIRE(seqembed::detail::StageAccess::take_call(dropout) == 2);
    REQUIRE(dropout.calls() == 3);
    dropout.set_training(false);
    dropout.forward_into<float>(x, out);
    REQUIRE(dropout.calls() == 3);
    REQUIRE(bit_equal(out, x));
}

TEMPLATE_TEST_CASE("Dropout's set_calls resumes a run", "[dropout]", float, double) {
    const RowMatrix<TestType> x = nonzero_input<TestType>(8, 24);
    Dropout run(0.4, 2718);
    run.set_training(true);
    std::vector<RowMatrix<TestType>> outputs;
    for (int i = 0; i < 4; ++i) outputs.push_back(run.template forward<TestType>(x));
    REQUIRE(run.calls() == 4);

    Dropout resumed(0.4, 2718);
    resumed.set_training(true);
    resumed.set_calls(2);
    REQUIRE(resumed.calls() == 2);
    REQUIRE(bit_equal(resumed.template forward<TestType>(x), outputs[2]));
    REQUIRE(bit_equal(resumed.template forward<TestType>(x), outputs[3]));
    REQUIRE(resumed.calls() == 4);

    // Far ahead: call numbers above 2^32 use the counter's high word.
    resumed.set_calls((std::uint64_t{1} << 33) + 2);
    const RowMatrix<TestType> far = resumed.template forward<TestType>(x);
    REQUIRE_FALSE(bit_equal(far, outputs[2]));
    RowMatrix<TestType> expected = x;
    resumed.apply(expected.data(), expected.size(), (std::uint64_t{1} << 33) + 2, 0);
    REQUIRE(bit_equal(far, expected));
}

TEST_CASE("Dropout copies keep p, seed and mode, and share the call counter", "[dropout]") {
    const RowMatrix<double> x = nonzero_input<double>(6, 10);
    Dropout original(0.3, 555);
    original.set_training(true);
    (void)original.forward<double>(x);
    (void)original.forward<double>(x);

    Dropout copy(original);
    REQUIRE(copy.p() == 0.3);
    REQUIRE(copy.seed() == 555);
    REQUIRE(copy.is_training());
    REQUIRE(copy.calls() == 2);

    Dropout assigned(0.9, 1);
    REQUIRE_FALSE(assigned.is_training());
    assigned = original;
    REQUIRE(assigned.p() == 0.3);
    REQUIRE(assigned.seed() == 555);
    REQUIRE(assigned.is_training());
    REQUIRE(assigned.calls() == 2);

    // One counter for all three: each training forward, by any of them, takes the next call, so
    // a copy never repeats another's mask.
    const RowMatrix<double> next = original.forward<double>(x);  // call 2
    REQUIRE(copy.calls() == 3);
    REQUIRE(assigned.calls() == 3);
    const RowMatrix<double> from_copy = copy.forward<double>(x);          // call 3
    const RowMatrix<double> from_assigned = assigned.forward<double>(x);  // call 4
    REQUIRE(original.calls() == 5);
    REQUIRE(copy.calls() == 5);
    REQUIRE(assigned.calls() == 5);
    const auto of_call = [&](std::uint64_t call) {
        RowMatrix<double> expected = x;
        original.apply(expected.data(), expected.size(), call, 0);
        return expected;
    };
    REQUIRE(bit_equal(next, of_call(2)));
    REQUIRE(bit_equal(from_copy, of_call(3)));
    REQUIRE(bit_equal(from_assigned, of_call(4)));
    REQUIRE_FALSE(bit_equal(from_copy, next));
    REQUIRE_FALSE(bit_equal(from_assigned, from_copy));

    // set_calls through any of them moves all of them (a resumed run).
    copy.set_calls(2);
    REQUIRE(original.calls() == 2);
    REQUIRE(bit_equal(original.forward<double>(x), next));
    REQUIRE(assigned.calls() == 3);

    // The mode is each copy's own; a forward in evaluation takes no call.
    copy.set_training(false);
    REQUIRE(original.is_training());
    REQUIRE(bit_equal(copy.forward<double>(x), x));
    REQUIRE(original.calls() == 3);

    // A copy made in evaluation mode stays there.
    Dropout evaluating(0.5, 2);
    const Dropout evaluating_copy(evaluating);
    REQUIRE_FALSE(evaluating_copy.is_training());
    REQUIRE(bit_equal(evaluating_copy.forward<double>(x), x));
}

TEMPLATE_TEST_CASE("Dropout::forward_into works in place", "[dropout]", float, double) {
    const RowMatrix<TestType> x = nonzero_input<TestType>(12, 21);
    Dropout reference(0.5, 11);
    reference.set_training(true);
    const RowMatrix<TestType> expected = reference.template forward<TestType>(x);

    Dropout dropout(0.5, 11);
    dropout.set_training(true);
    RowMatrix<TestType> y = x;
    dropout.template forward_into<TestType>(y, y);  // out aliases x
    REQUIRE(bit_equal(y, expected));
    REQUIRE(dropout.calls() == 1);

    // In evaluation, in place leaves the values as they were.
    dropout.set_training(false);
    RowMatrix<TestType> z = x;
    dropout.template forward_into<TestType>(z, z);
    REQUIRE(bit_equal(z, x));
}

TEST_CASE("Concurrent forwards on one const Dropout take distinct call numbers", "[dropout]") {
    constexpr int threads = 4;
    constexpr int per_thread = 25;
    constexpr int total = threads * per_thread;
    const RowMatrix<float> x = nonzero_input<float>(1, 64);
    Dropout layer(0.5, 4242);
    layer.set_training(true);
    const Dropout& dropout = layer;

    std::vector<std::vector<RowMatrix<float>>> outputs(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
        workers.emplace_back([&dropout, &x, &outputs, t] {
            for (int i = 0; i < per_thread; ++i)
                outputs[static_cast<std::size_t>(t)].push_back(dropout.forward<float>(x));
        });
    for (std::thread& worker : workers) worker.join();
    REQUIRE(dropout.calls() == static_cast<std::uint64_t>(total));

    // Each output is the result of one call in [0, total), and no call was used twice.
    std::vector<RowMatrix<float>> by_call;
    for (std::uint64_t call = 0; call < total; ++call) {
        RowMatrix<float> expected = x;
        dropout.apply(expected.data(), expected.size(), call, 0);
        by_call.push_back(expected);
    }
    std::set<std::uint64_t> used;
    for (const auto& thread_outputs : outputs) {
        REQUIRE(thread_outputs.size() == static_cast<std::size_t>(per_thread));
        for (const RowMatrix<float>& y : thread_outputs) {
            int matches = 0;
            for (std::uint64_t call = 0; call < total; ++call)
                if (bit_equal(y, by_call[call])) {
                    ++matches;
                    used.insert(call);
                }
            REQUIRE(matches == 1);
        }
    }
    REQUIRE(used.size() == static_cast<std::size_t>(total));
    REQUIRE(*used.begin() == 0);
    REQUIRE(*used.rbegin() == static_cast<std::uint64_t>(total - 1));
}

TEST_CASE("Dropout multiplies by its scaled mask as PyTorch does: dropped NaN stays NaN, dropped "
          "negatives become -0",
          "[dropout]") {
    seqembed::Dropout dropout(0.5, 3);
    dropout.set_training(true);
    seqembed::RowMatrix<float> x(1, 256);
    for (seqembed::Index j = 0; j < 256; ++j)
        x(0, j) = j % 3 == 0 ? std::numeric_limits<float>::quiet_NaN() : -1.5f;
    const seqembed::RowMatrix<float> y = dropout.forward(x);
    const seqembed::MaskMatrix kept = dropout.mask(0, 1, 256);
    const float scale = dropout.keep_scale<float>();
    seqembed::Index dropped_negatives = 0;
    for (seqembed::Index j = 0; j < 256; ++j) {
        if (j % 3 == 0) {
            REQUIRE(std::isnan(y(0, j)));
        } else if (kept(0, j)) {
            REQUIRE(y(0, j) == -1.5f * scale);
        } else {
            REQUIRE(y(0, j) == 0.0f);
            REQUIRE(std::signbit(y(0, j)));
            ++dropped_negatives;
        }
    }
    REQUIRE(dropped_negatives > 0);
}
