// The input stage of a transformer one step at a time, printed after each step:
// "The cat sat on the mat." -> tokens -> ids -> embeddings -> positional encodings -> their sum.
#include <seqembed/seqembed.hpp>

#include "command_line.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace {

// A toy vocabulary of the sentence's words, "The" and "the" apart, plus the token that every
// other word maps to. Vocabulary adds <pad> after them (id 7), which one sentence never needs.
const seqembed::Vocabulary& toy_vocabulary() {
    static const seqembed::Vocabulary vocabulary({"The", "cat", "sat", "on", "the", "mat", "<unk>"});
    return vocabulary;
}

void print_rows(const char* title, const std::vector<std::string>& tokens,
                const Eigen::Ref<const seqembed::RowMatrix<float>>& rows) {
    std::printf("\n%s\n", title);
    for (Eigen::Index r = 0; r < rows.rows(); ++r) {
        std::printf("  %-6s [", tokens[static_cast<std::size_t>(r)].c_str());
        for (Eigen::Index c = 0; c < rows.cols(); ++c)
            std::printf("%s%8.4f", c == 0 ? "" : ", ", static_cast<double>(rows(r, c)));
        std::printf("]\n");
    }
}

void walk_through(const std::string& sentence) {
    constexpr Eigen::Index vocab_size = 10;  // a 10 x 4 table, as nn.Embedding(10, 4)
    constexpr Eigen::Index d_model = 4;

    const seqembed::Vocabulary& vocabulary = toy_vocabulary();
    std::printf("==== \"%s\"\n", sentence.c_str());
    // Words split at spaces, punctuation at their ends dropped, case kept; the ids as a batch of
    // one sentence.
    const std::vector<std::string> tokens = vocabulary.tokenize(sentence);
    const seqembed::EncodedBatch batch = vocabulary.encode_batch({sentence});
    const seqembed::IdMatrix& ids = batch.ids;
    std::printf("Step 1, tokens:");
    for (const auto& token : tokens) std::printf(" \"%s\"", token.c_str());
    std::printf("\nStep 2, ids:   ");
    for (Eigen::Index t = 0; t < ids.cols(); ++t) std::printf(" %lld", static_cast<long long>(ids(0, t)));
    std::printf("   (unknown words map to <unk> = %lld)\n", static_cast<long long>(*vocabulary.unk_id()));

    // The raw embedding is added to the positions: no sqrt(d_model) scale, unlike the paper.
    seqembed::TokenEmbeddingOptions embedding_options;
    embedding_options.scale = seqembed::EmbeddingScale::none();
    embedding_options.seed = 2024;
    seqembed::InputPipeline<float> pipeline(
        seqembed::TokenEmbedding<float>(vocab_size, d_model, embedding_options),
        seqembed::SinusoidalPositionalEncoding<float>(d_model));

    print_rows("Step 3, embeddings (seeded N(0,1), one row per token):", tokens,
               pipeline.embedding().forward(ids));
    print_rows("Step 4, positional encodings (sin at even columns, cos at odd):", tokens,
               pipeline.positions().rows(0, ids.cols()));
    print_rows("Step 5, embeddings + positional encodings:", tokens, pipeline.forward(ids));
    std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
    using namespace seqembed_examples;  // the exit codes
    try {
        if (argc == 1) {
            walk_through("The cat sat on the mat.");
            walk_through("The dog sat on the mat.");
            return exit_success;
        }
        // seed_walkthrough some words ...: the arguments joined by spaces, as one sentence.
        std::string sentence = argv[1];
        for (int a = 2; a < argc; ++a) sentence += std::string(" ") + argv[a];
        const bool help = sentence == "-h" || sentence == "--help";
        if (help || toy_vocabulary().tokenize(sentence).empty()) {
            std::fprintf(help ? stdout : stderr,
                         "usage: %s [sentence]\n"
                         "  Without a sentence, walks \"The cat sat on the mat.\" and \"The dog sat on "
                         "the mat.\" through the input stage;\n"
                         "  with one, that sentence (it needs a word; words outside the toy "
                         "vocabulary map to <unk>).\n",
                         argv[0]);
            return help ? exit_success : exit_usage;
        }
        walk_through(sentence);
        return exit_success;
    } catch (const seqembed::error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return exit_failure;
    }
}
