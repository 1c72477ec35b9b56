// seqembed built with -fno-exceptions (tests/strict/CMakeLists.txt): the whole API compiles,
// works on good input, and bad input ends the program with seqembed's message on stderr and
// std::abort() (run_no_exceptions.cmake checks both).
//   no_exceptions good   embeds a batch, exits 0
//   no_exceptions bad    asks for a token id outside the vocabulary: must abort
#include <seqembed/seqembed.hpp>
#if defined(SEQEMBED_TEST_IO)
#include <seqembed/io/io.hpp>
#endif

#include <cstdio>
#include <cstring>

static_assert(!seqembed::detail::errors_throw, "this program must be compiled without exceptions");

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    seqembed::InputPipeline<float> pipeline(seqembed::TokenEmbedding<float>(10, 8),
                                            seqembed::SinusoidalPositionalEncoding<float>(8));
    seqembed::IdMatrix ids(2, 3);
    ids << 1, 2, 3, 4, 5, 0;
    if (std::strcmp(argv[1], "good") == 0) {
        const seqembed::RowMatrix<float> out = pipeline.forward(ids, seqembed::Padding::by_id(0));
        std::printf("embedded %lld rows\n", static_cast<long long>(out.rows()));
        return out.rows() == 6 && out.row(5).isZero() ? 0 : 1;
    }
    ids(1, 1) = 40;
    (void)pipeline.forward(ids);
    std::printf("not reached: the bad id was accepted\n");
    return 0;
}
