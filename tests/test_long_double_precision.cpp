// The exact sinusoidal tables' precision where long double is IEEE binary128 (aarch64 Linux, the
// test-aarch64 preset under qemu): the frequencies come from long double (detail/exact_sincos.hpp),
// so the bound depends on its width. test_sinusoidal.cpp holds the bounds every platform meets;
// these are the tighter ones measured with a 113-bit long double. On other platforms these tests
// say so and check nothing.
//
// Measured with the current kernels, against a binary128 reference (libquadmath on x86-64, and
// the same values under qemu) at 10,006 positions (0..4999, 5000 random below 1,000,000 and the
// fixtures'), d_model 512, paper and tensor2tensor families:
//   long double   float table                              double table
//   113 bits      every value correctly rounded            within 2 ulp (1.73e-16)
//   64 bits       1 value in 5.1 million 1 ulp off         4.9e-14 at position ~1e6 (1e-19 x p)
//   53 bits       up to 262 ulp near zero crossings        1.1e-10 at position ~1e6
// (53 bits simulated by compiling exact_sincos.hpp with double in place of long double.)
#include <seqembed/sinusoidal.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "catch.hpp"
#include "golden_support.hpp"

using seqembed::Index;
using seqembed::RowMatrix;
using seqembed::SinusoidalOptions;
using seqembed::SinusoidalPositionalEncoding;

namespace {

constexpr bool binary128_long_double = std::numeric_limits<long double>::digits >= 113;

/// Our rows at the given positions, computed past a short table as in test_sinusoidal.cpp.
template <typename Scalar>
RowMatrix<Scalar> rows_at(SinusoidalOptions options, Index d_model, const std::vector<long>& positions) {
    options.beyond = seqembed::BeyondTable::compute;
    options.max_positions = 16;
    const SinusoidalPositionalEncoding<Scalar> encoding(d_model, options);
    RowMatrix<Scalar> out(static_cast<Index>(positions.size()), d_model);
    for (std::size_t r = 0; r < positions.size(); ++r)
        out.row(static_cast<Index>(r)) = encoding.forward(positions[r] - options.offset, 1);
    return out;
}

std::vector<long> fixture_positions(const golden::Table& fixture) {
    return {fixture.positions, fixture.positions + fixture.rows};
}

struct Family {
    SinusoidalOptions options;
    bool paper;  // interleaved, exponent 2k/d; else concatenated, exponent k/(d/2 - 1)
    const golden::Table& f32;
    const golden::Table& f64;
};

}  // namespace

TEST_CASE("With a binary128 long double the exact tables match mpmath to the last bit",
          "[sinusoidal][exact][long_double]") {
    INFO("long double has " << std::numeric_limits<long double>::digits << " significant bits");
    if (!binary128_long_double) {
        WARN("long double is not binary128 here: test_sinusoidal.cpp's bounds apply");
        return;
    }
    for (const Family& family :
         {Family{SinusoidalOptions::paper(), true, seqembed_golden::exact_paper_d512_f32,
                 seqembed_golden::exact_paper_d512_f64},
          Family{SinusoidalOptions::tensor2tensor(), false, seqembed_golden::exact_t2t_d512_f32,
                 seqembed_golden::exact_t2t_d512_f64}}) {
        INFO(family.f32.name);
        // Every float value is the correctly rounded one, up to position 999,999.
        const RowMatrix<float> ours = rows_at<float>(family.options, 512, fixture_positions(family.f32));
        REQUIRE(golden::max_ulp_distance(ours, golden::matrix<float>(family.f32)) == 0);
        // Doubles are within 2 ulp, whatever the position (no 1e-19 x position term).
        const RowMatrix<double> ours64 = rows_at<double>(family.options, 512, fixture_positions(family.f64));
        const RowMatrix<double> exact64 = golden::matrix<double>(family.f64);
        REQUIRE(golden::max_ulp_distance(ours64, exact64) <= 2);
        REQUIRE((ours64 - exact64).cwiseAbs().maxCoeff() <= 2.3e-16);
    }
}

TEST_CASE("With a binary128 long double a float table is correctly rounded below position 1,000,000",
          "[sinusoidal][exact][long_double]") {
    // The reference is computed here in binary128: the angle p x base^-e to 113 bits (an error
    // below 1e-28 at position 1e6) and its sinl / cosl, rounded once to float and to double.
    // Positions 0..63 and 192 spread below 1,000,000 by a fixed generator, and 999,999.
    INFO("long double has " << std::numeric_limits<long double>::digits << " significant bits");
    if (!binary128_long_double) {
        WARN("long double is not binary128 here: no reference precise enough to sweep with");
        return;
    }
    std::vector<long> positions;
    for (long p = 0; p < 64; ++p) positions.push_back(p);
    std::uint64_t state = 11;
    for (int i = 0; i < 192; ++i) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        positions.push_back(64 + static_cast<long>((state >> 33) % (1000000 - 64)));
    }
    positions.push_back(999999);

    const Index d_model = 512;
    const Index half = d_model / 2;
    for (const bool paper : {true, false}) {
        const SinusoidalOptions options = paper ? SinusoidalOptions::paper() : SinusoidalOptions::tensor2tensor();
        INFO((paper ? "paper" : "tensor2tensor"));
        std::vector<long double> frequency(static_cast<std::size_t>(half));
        for (Index k = 0; k < half; ++k) {
            const long double exponent = paper ? static_cast<long double>(2 * k) / static_cast<long double>(d_model)
                                               : static_cast<long double>(k) / static_cast<long double>(half - 1);
            frequency[static_cast<std::size_t>(k)] = std::exp(-exponent * std::log(10000.0L));
        }
        RowMatrix<float> truth32(static_cast<Index>(positions.size()), d_model);
        RowMatrix<double> truth64(static_cast<Index>(positions.size()), d_model);
        for (std::size_t r = 0; r < positions.size(); ++r)
            for (Index k = 0; k < half; ++k) {
                const long double angle = static_cast<long double>(positions[r]) * frequency[static_cast<std::size_t>(k)];
                const long double sine = std::sin(angle);
                const long double cosine = std::cos(angle);
                const Index sine_column = paper ? 2 * k : k;
                const Index cosine_column = paper ? 2 * k + 1 : half + k;
                const auto row = static_cast<Index>(r);
                truth32(row, sine_column) = static_cast<float>(sine);
                truth32(row, cosine_column) = static_cast<float>(cosine);
                truth64(row, sine_column) = static_cast<double>(sine);
                truth64(row, cosine_column) = static_cast<double>(cosine);
            }
        const RowMatrix<float> ours32 = rows_at<float>(options, d_model, positions);
        REQUIRE(golden::max_ulp_distance(ours32, truth32) == 0);
        const RowMatrix<double> ours64 = rows_at<double>(options, d_model, positions);
        REQUIRE(golden::max_ulp_distance(ours64, truth64) <= 2);
        REQUIRE((ours64 - truth64).cwiseAbs().maxCoeff() <= 2.3e-16);
    }
}
