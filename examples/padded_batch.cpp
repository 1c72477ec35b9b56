// A batch of sentences of different lengths through seqembed::InputPipeline, padded on the right
// and then on the left. Positions count real tokens only, so a token gets the same output row
// whichever side its sentence is padded on, and padded tokens give zero rows; the program checks
// both (exit status 1 if either fails), then does the same with BART's learned positions.
#include <seqembed/seqembed.hpp>

#include "command_line.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using seqembed::Index;
using seqembed::TokenId;
using Matrix = seqembed::RowMatrix<float>;

constexpr TokenId pad_id = 0;
constexpr TokenId unknown_id = 1;
constexpr Index d_model = 8;
constexpr Index shown_columns = 4;

// clang-format off
const std::map<std::string, TokenId> vocabulary{
    {"<pad>", pad_id}, {"<unk>", unknown_id}, {"the", 2}, {"cat", 3},  {"sat", 4},
    {"on", 5},         {"mat", 6},            {"a", 7},   {"dog", 8},  {"ran", 9},
    {"home", 10},      {"birds", 11},         {"sing", 12}};
// clang-format on
const Index vocab_size = static_cast<Index>(vocabulary.size());

const std::vector<std::string> sentences{"the cat sat on the mat", "a dog ran home",
                                         "birds sing loudly"};

std::vector<std::string> tokenize(const std::string& sentence) {
    std::istringstream words(sentence);
    std::vector<std::string> tokens;
    for (std::string word; words >> word;) tokens.push_back(word);
    return tokens;
}

TokenId id_of(const std::string& token) {
    const auto found = vocabulary.find(token);
    return found == vocabulary.end() ? unknown_id : found->second;
}

/// The batch as one id matrix padded with pad_id on the given side.
struct Batch {
    std::vector<std::vector<std::string>> tokens;
    std::vector<std::int64_t> lengths;
    Index seq = 0;

    seqembed::IdMatrix ids(seqembed::PaddingSide side) const {
        seqembed::IdMatrix ids =
            seqembed::IdMatrix::Constant(static_cast<Index>(tokens.size()), seq, pad_id);
        for (Index b = 0; b < ids.rows(); ++b) {
            const auto& words = tokens[static_cast<std::size_t>(b)];
            const Index first =
                side == seqembed::PaddingSide::right ? 0 : seq - static_cast<Index>(words.size());
            for (std::size_t k = 0; k < words.size(); ++k)
                ids(b, first + static_cast<Index>(k)) = id_of(words[k]);
        }
        return ids;
    }
    /// Where token k of sentence b sits in a sequence padded on side.
    Index column(seqembed::PaddingSide side, Index b, Index k) const {
        return side == seqembed::PaddingSide::right
                   ? k
                   : seq - static_cast<Index>(lengths[static_cast<std::size_t>(b)]) + k;
    }
};

/// Each token's position as the padding defines it, -1 for padding.
seqembed::IdMatrix positions_of(const seqembed::IdMatrix& ids, const seqembed::Padding& padding) {
    seqembed::IdMatrix positions(ids.rows(), ids.cols());
    padding.for_each_token(ids, 0, ids.rows(),
                           [&](Index b, Index t, std::int64_t position) { positions(b, t) = position; });
    return positions;
}

void print_side_by_side(const seqembed::IdMatrix& right_ids, const seqembed::IdMatrix& right_pos,
                        const seqembed::IdMatrix& left_ids, const seqembed::IdMatrix& left_pos) {
    const auto cells = [](const seqembed::IdMatrix& m, Index b, int width) {
        std::string line;
        char cell[24];
        for (Index t = 0; t < m.cols(); ++t) {
            if (m(b, t) < 0)
                std::snprintf(cell, sizeof cell, "%*s", width, ".");
            else
                std::snprintf(cell, sizeof cell, "%*lld", width, static_cast<long long>(m(b, t)));
            line += cell;
        }
        return line;
    };
    std::printf("\n%-42s%s\n", "Right padded: Padding::by_id(0)",
                "Left padded: Padding::left(lengths)");
    std::printf("  %-20s%-20s  %-20s%s\n", "ids", "positions", "ids", "positions");
    for (Index b = 0; b < right_ids.rows(); ++b)
        std::printf("  %-20s%-20s  %-20s%s\n", cells(right_ids, b, 3).c_str(),
                    cells(right_pos, b, 2).c_str(), cells(left_ids, b, 3).c_str(),
                    cells(left_pos, b, 2).c_str());
}

void print_row(const char* label, Index row, const std::string& token, std::int64_t position,
               const Matrix& out, const std::string& note = "") {
    char where[32] = "";
    if (position >= 0)
        std::snprintf(where, sizeof where, "pos %lld", static_cast<long long>(position));
    std::printf("  %-6s row %2lld  %-7s %-6s%s [", label, static_cast<long long>(row),
                token.c_str(), where, note.c_str());
    for (Index c = 0; c < shown_columns; ++c)
        std::printf("%s%7.3f", c == 0 ? "" : ",", static_cast<double>(out(row, c)));
    std::printf(", ...]\n");
}

/// Checks the two outputs of one pipeline: every real token's row identical (bit for bit) under
/// both paddings, every padded row zero. Returns the number of failures, printing each.
int check_paddings(const char* what, const Batch& batch, const Matrix& right, const Matrix& left) {
    int failures = 0;
    int real = 0;
    int padded = 0;
    for (Index b = 0; b < static_cast<Index>(batch.lengths.size()); ++b) {
        const auto length = static_cast<Index>(batch.lengths[static_cast<std::size_t>(b)]);
        for (Index k = 0; k < length; ++k, ++real) {
            const Index r = b * batch.seq + batch.column(seqembed::PaddingSide::right, b, k);
            const Index l = b * batch.seq + batch.column(seqembed::PaddingSide::left, b, k);
            if (std::memcmp(right.row(r).data(), left.row(l).data(),
                            sizeof(float) * static_cast<std::size_t>(d_model)) != 0) {
                std::printf(
                    "  FAILED (%s): token %lld of sentence %lld differs between right "
                    "(row %lld) and left (row %lld) padding\n",
                    what, static_cast<long long>(k), static_cast<long long>(b),
                    static_cast<long long>(r), static_cast<long long>(l));
                ++failures;
            }
        }
        for (Index k = length; k < batch.seq; ++k, ++padded) {
            const Index r = b * batch.seq + k;
            const Index l = b * batch.seq + k - length;
            if (!right.row(r).isZero(0) || !left.row(l).isZero(0)) {
                std::printf("  FAILED (%s): a padded row of sentence %lld is not zero\n", what,
                            static_cast<long long>(b));
                ++failures;
            }
        }
    }
    std::printf(
        "  check, %s: the %d real tokens' rows are identical bit for bit under both "
        "paddings,\n  the %d padded rows of each are zero: %s\n",
        what, real, padded, failures == 0 ? "ok" : "FAILED");
    return failures;
}

int run() {
    Batch batch;
    for (const auto& sentence : sentences) {
        batch.tokens.push_back(tokenize(sentence));
        batch.lengths.push_back(static_cast<std::int64_t>(batch.tokens.back().size()));
        batch.seq = std::max(batch.seq, static_cast<Index>(batch.tokens.back().size()));
    }
    const seqembed::IdMatrix right_ids = batch.ids(seqembed::PaddingSide::right);
    const seqembed::IdMatrix left_ids = batch.ids(seqembed::PaddingSide::left);
    const seqembed::Padding right_padding = seqembed::Padding::by_id(pad_id);
    const seqembed::Padding left_padding = seqembed::Padding::left(batch.lengths);

    std::printf("%zu sentences, <pad> = %lld, <unk> = %lld, vocabulary %lld, d_model %lld\n",
                sentences.size(), static_cast<long long>(pad_id),
                static_cast<long long>(unknown_id), static_cast<long long>(vocab_size),
                static_cast<long long>(d_model));
    for (Index b = 0; b < right_ids.rows(); ++b) {
        std::string ids;
        for (Index k = 0; k < batch.lengths[static_cast<std::size_t>(b)]; ++k)
            ids += " " + std::to_string(right_ids(b, k));
        std::string unknown;
        for (const auto& token : batch.tokens[static_cast<std::size_t>(b)])
            if (id_of(token) == unknown_id) unknown += "   (\"" + token + "\" is <unk>)";
        std::printf("  %-26s ->%s%s\n",
                    ("\"" + sentences[static_cast<std::size_t>(b)] + "\"").c_str(), ids.c_str(),
                    unknown.c_str());
    }
    print_side_by_side(right_ids, positions_of(right_ids, right_padding), left_ids,
                       positions_of(left_ids, left_padding));

    // Sinusoidal positions (the paper's), embeddings scaled by sqrt(d_model), no dropout.
    seqembed::TokenEmbeddingOptions embedding_options;
    embedding_options.padding_idx = pad_id;
    embedding_options.seed = 7;
    const seqembed::TokenEmbedding<float> embedding(vocab_size, d_model, embedding_options);
    const seqembed::InputPipeline<float> pipeline(
        embedding, seqembed::SinusoidalPositionalEncoding<float>(d_model));
    const Matrix right = pipeline.forward(right_ids, right_padding);
    const Matrix left = pipeline.forward(left_ids, left_padding);

    const Index shown = 2;  // "birds sing loudly", the most padded
    const auto& shown_tokens = batch.tokens[static_cast<std::size_t>(shown)];
    const auto shown_length = static_cast<Index>(shown_tokens.size());
    std::printf(
        "\nOutput rows of \"%s\" (row b * %lld + t of the %lld x %lld output, columns 0-%lld):\n",
        sentences[static_cast<std::size_t>(shown)].c_str(), static_cast<long long>(batch.seq),
        static_cast<long long>(right.rows()), static_cast<long long>(right.cols()),
        static_cast<long long>(shown_columns - 1));
    for (const auto side : {seqembed::PaddingSide::right, seqembed::PaddingSide::left}) {
        const Matrix& out = side == seqembed::PaddingSide::right ? right : left;
        const Index first_real = batch.column(side, shown, 0);
        for (Index t = 0; t < batch.seq; ++t) {
            const bool real = t >= first_real && t < first_real + shown_length;
            const char* label = "";
            if (t == 0) label = side == seqembed::PaddingSide::right ? "right" : "left";
            print_row(label, shown * batch.seq + t,
                      real ? shown_tokens[static_cast<std::size_t>(t - first_real)] : "<pad>",
                      real ? t - first_real : -1, out);
        }
    }
    int failures = check_paddings("sinusoidal", batch, right, left);
    // Padding::right(lengths) says the same as by_id(0) for this batch.
    if (pipeline.forward(right_ids, seqembed::Padding::right(batch.lengths)) != right) {
        std::printf("  FAILED: Padding::right(lengths) and Padding::by_id(0) differ\n");
        ++failures;
    }

    // BART's learned positions: two leading rows, so position p reads table row p + 2.
    const auto bart = seqembed::LearnedPositionsOptions::bart();
    const seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>> learned(
        embedding,
        seqembed::LearnedPositionalEmbedding<float>(batch.seq + bart.offset, d_model, bart));
    const Matrix learned_right = learned.forward(right_ids, right_padding);
    const Matrix learned_left = learned.forward(left_ids, left_padding);
    std::printf(
        "\nLearned positions, LearnedPositionsOptions::bart(): a table of %lld rows, position p "
        "reads\nrow p + %lld; \"%s\" left padded:\n",
        static_cast<long long>(learned.positions().max_positions()),
        static_cast<long long>(bart.offset), sentences[static_cast<std::size_t>(shown)].c_str());
    const Matrix scaled = embedding.forward(left_ids);
    for (Index k = 0; k < shown_length; ++k) {
        const Index row = shown * batch.seq + batch.column(seqembed::PaddingSide::left, shown, k);
        print_row(k == 0 ? "left" : "", row, shown_tokens[static_cast<std::size_t>(k)], k,
                  learned_left, " -> table row " + std::to_string(k + bart.offset));
        // Each row is the scaled embedding plus table row k + 2, rounded after each step.
        const Matrix expected =
            scaled.row(row) + learned.positions().table().row(k + bart.offset);
        if (learned_left.row(row) != expected) {
            std::printf("  FAILED: row %lld is not embedding x scale + table row %lld\n",
                        static_cast<long long>(row), static_cast<long long>(k + bart.offset));
            ++failures;
        }
    }
    failures += check_paddings("learned", batch, learned_right, learned_left);
    return failures == 0 ? seqembed_examples::exit_success : seqembed_examples::exit_failure;
}

}  // namespace

int main() {
    try {
        return run();
    } catch (const seqembed::error& e) {
        std::fprintf(stderr, "padded_batch: %s\n", e.what());
        return seqembed_examples::exit_failure;
    }
}
