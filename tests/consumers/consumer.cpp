// The program every consumer project builds: includes the umbrella header the way a user does,
// computes two values and checks them. Exit status 0 only if both are right.
#include <seqembed/seqembed.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>

int main() {
    int failures = 0;

    // Row 1 of the paper's table at d_model 4: column 0 is sin(1 * 10000^0) = sin(1).
    const seqembed::SinusoidalPositionalEncoding<double> positions(4);
    const double sine = positions.table()(1, 0);
    if (!(std::abs(sine - std::sin(1.0)) <= 1e-15)) {
        std::fprintf(stderr, "consumer: sinusoidal table(1, 0) = %.17g, expected sin(1) = %.17g\n",
                     sine, std::sin(1.0));
        ++failures;
    }

    // A lookup returns the row scaled by sqrt(d_model): sqrt(4) = 2, exact in binary.
    seqembed::RowMatrix<double> weights(3, 4);
    weights << 0.5, -1.0, 2.0, 0.25,  //
        1.0, 1.5, -0.5, 3.0,          //
        -2.0, 0.125, 4.0, -0.75;
    const auto embedding = seqembed::TokenEmbedding<double>::from_weights(weights);
    seqembed::IdMatrix ids(1, 2);
    ids << 2, 0;
    const seqembed::RowMatrix<double> rows = embedding.forward(ids);
    const double scale = std::sqrt(4.0);
    for (int t = 0; t < 2; ++t)
        for (int c = 0; c < 4; ++c) {
            const double expected = weights(ids(0, t), c) * scale;
            if (rows(t, c) != expected) {
                std::fprintf(stderr, "consumer: embedding row %d column %d = %.17g, expected %.17g\n",
                             t, c, rows(t, c), expected);
                ++failures;
            }
        }

    static_assert(SEQEMBED_VERSION == SEQEMBED_VERSION_MAJOR * 10000 +
                                          SEQEMBED_VERSION_MINOR * 100 + SEQEMBED_VERSION_PATCH,
                  "SEQEMBED_VERSION disagrees with its parts");
    char version[32];
    std::snprintf(version, sizeof version, "%d.%d.%d", SEQEMBED_VERSION_MAJOR,
                  SEQEMBED_VERSION_MINOR, SEQEMBED_VERSION_PATCH);
#ifdef SEQEMBED_EXPECTED_VERSION
    // The version the package's CMake files announced (find_package's seqembed_VERSION).
    if (std::strcmp(version, SEQEMBED_EXPECTED_VERSION) != 0) {
        std::fprintf(stderr, "consumer: headers say version %s, the package said %s\n", version,
                     SEQEMBED_EXPECTED_VERSION);
        ++failures;
    }
#endif

    if (failures != 0) return 1;
    std::printf("consumer: seqembed %s works (sin(1) = %.17g)\n", version, sine);
    return 0;
}
