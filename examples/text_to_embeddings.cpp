// Text to the first layer's input with a model's own directory: its tokenizer
// (text::load_tokenizer: tokenizer.json, or BERT's vocab.txt) and its input stage
// (io::load_model), in three lines.
//   text_to_embeddings DIRECTORY [TEXT...]   prints each text's tokens and ids, and the first
//                                            values of each token's row of the model's input
#include <seqembed/io/model.hpp>
#include <seqembed/seqembed.hpp>
#include <seqembed/text/tokenizer.hpp>

#include "command_line.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s DIRECTORY [TEXT...]\n", argv[0]);
        return seqembed_examples::exit_usage;
    }
    std::vector<std::string> texts(argv + 2, argv + argc);
    if (texts.empty()) texts = {"Hello, world!", "A second, longer text."};
    try {
        // The three lines.
        const seqembed::text::Tokenizer tokenizer = seqembed::text::load_tokenizer(argv[1]);
        const seqembed::io::Model model = seqembed::io::load_model(argv[1]);
        const seqembed::EncodedBatch encoded = tokenizer.encode_batch(texts);
        const seqembed::RowMatrix<float> x = model.forward(encoded.batch());

        const seqembed::Index seq = encoded.ids.cols();
        std::printf("%zu texts, %ld tokens each after padding, %ld values per token\n", texts.size(),
                    static_cast<long>(seq), static_cast<long>(x.cols()));
        for (std::size_t b = 0; b < texts.size(); ++b) {
            std::printf("\"%s\"\n  ids:", texts[b].c_str());
            for (seqembed::Index t = 0; t < encoded.lengths[b]; ++t)
                std::printf(" %lld", static_cast<long long>(encoded.ids(static_cast<seqembed::Index>(b), t)));
            std::printf("\n");
            for (seqembed::Index t = 0; t < encoded.lengths[b]; ++t) {
                const seqembed::Index id = encoded.ids(static_cast<seqembed::Index>(b), t);
                const auto row = x.row(static_cast<seqembed::Index>(b) * seq + t);
                std::printf("  %-12s", tokenizer.id_to_token(id).value_or("?").c_str());
                for (seqembed::Index c = 0; c < std::min<seqembed::Index>(4, x.cols()); ++c)
                    std::printf(" %9.5f", static_cast<double>(row(c)));
                std::printf("\n");
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "text_to_embeddings: %s\n", e.what());
        return 1;
    }
    return 0;
}
