// The input stage of a transformer one step at a time, printed after each step:
// "The cat sat on the mat." -> tokens -> ids -> embeddings -> positional encodings -> their sum.
#include <seqembed/seqembed.hpp>

#include <cctype>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace {

// A toy vocabulary of the sentence's words, plus the id that every other word maps to.
const std::map<std::string, seqembed::TokenId> vocabulary{
    {"The", 0}, {"cat", 1}, {"sat", 2}, {"on", 3}, {"the", 4}, {"mat", 5}, {"<unk>", 6}};
constexpr seqembed::TokenId unknown_id = 6;

// A tokenizer written by hand: words split on spaces, trailing punctuation dropped.
std::vector<std::string> tokenize(const std::string& sentence) {
    std::vector<std::string> tokens;
    std::string word;
    for (const char c : sentence + " ") {
        if (std::isspace(static_cast<unsigned char>(c))) {
            while (!word.empty() && std::ispunct(static_cast<unsigned char>(word.back())))
                word.pop_back();
            if (!word.empty()) tokens.push_back(word);
            word.clear();
        } else {
            word += c;
        }
    }
    return tokens;
}

seqembed::TokenId id_of(const std::string& token) {
    const auto found = vocabulary.find(token);
    return found == vocabulary.end() ? unknown_id : found->second;
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

    std::printf("==== \"%s\"\n", sentence.c_str());
    const std::vector<std::string> tokens = tokenize(sentence);
    seqembed::IdMatrix ids(1, static_cast<Eigen::Index>(tokens.size()));
    std::printf("Step 1, tokens:");
    for (const auto& token : tokens) std::printf(" \"%s\"", token.c_str());
    std::printf("\nStep 2, ids:   ");
    for (std::size_t t = 0; t < tokens.size(); ++t) {
        ids(0, static_cast<Eigen::Index>(t)) = id_of(tokens[t]);
        std::printf(" %lld", static_cast<long long>(ids(0, static_cast<Eigen::Index>(t))));
    }
    std::printf("   (unknown words map to <unk> = %lld)\n", static_cast<long long>(unknown_id));

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

int main() {
    try {
        walk_through("The cat sat on the mat.");
        walk_through("The dog sat on the mat.");
        return 0;
    } catch (const seqembed::error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
