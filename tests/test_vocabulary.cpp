// Vocabulary: seed 004's sentence and vocabulary as its notebook prints them, the special
// tokens' places, the word splitter, padded batches, decoding, vocabulary files and every bad
// input with its exact message.
#include <seqembed/seqembed.hpp>

// The umbrella header needs Eigen alone: SentencePiece only through seqembed/text/sentencepiece.hpp.
#if defined(SENTENCEPIECE_PROCESSOR_H_)
#error "seqembed.hpp includes SentencePiece's header"
#endif

#include <cstdint>
#include <string>
#include <vector>

#include "catch.hpp"
#include "test_support.hpp"

using seqembed::EncodedBatch;
using seqembed::IdMatrix;
using seqembed::Punctuation;
using seqembed::SpecialTokenPlacement;
using seqembed::TokenId;
using seqembed::Vocabulary;
using seqembed::VocabularyOptions;
using test_support::require_message;

namespace {

// Seed 004: tokens = ["The", "cat", "sat", "on", "the", "mat"], token_to_id by enumerate().
const std::vector<std::string> seed_tokens{"The", "cat", "sat", "on", "the", "mat"};
const std::string seed_sentence = "The cat sat on the mat.";

VocabularyOptions without_specials() {
    VocabularyOptions options;
    options.add_missing = SpecialTokenPlacement::none;
    return options;
}

}  // namespace

TEST_CASE("Vocabulary: seed 004's vocabulary gives the ids its notebook prints") {
    // "Token to ID mapping: {'The': 0, 'cat': 1, 'sat': 2, 'on': 3, 'the': 4, 'mat': 5}" and
    // "Token IDs: [0, 1, 2, 3, 4, 5]": case kept, the final period dropped, no special tokens.
    const Vocabulary vocabulary(seed_tokens, without_specials());
    REQUIRE(vocabulary.size() == 6);
    for (std::size_t i = 0; i < seed_tokens.size(); ++i) {
        REQUIRE(vocabulary.id(seed_tokens[i]) == static_cast<TokenId>(i));
        REQUIRE(vocabulary.token(static_cast<TokenId>(i)) == seed_tokens[i]);
    }
    REQUIRE(vocabulary.tokenize(seed_sentence) == seed_tokens);
    REQUIRE(vocabulary.encode(seed_sentence) == std::vector<TokenId>{0, 1, 2, 3, 4, 5});
    REQUIRE_FALSE(vocabulary.pad_id());
    REQUIRE_FALSE(vocabulary.unk_id());
    // "These tokens are typically handled by using a special token (like <UNK>)": without one,
    // a word outside the vocabulary is an error that names it.
    require_message<seqembed::index_error>(
        [&] { (void)vocabulary.encode("The dog sat."); },
        "word 'dog' at byte 4 of the text is not in the vocabulary, which has no unknown token "
        "(VocabularyOptions::unk_token)");
}

TEST_CASE("Vocabulary: missing <pad> and <unk> are added after the list by default") {
    const Vocabulary vocabulary(seed_tokens);
    REQUIRE(vocabulary.size() == 8);
    REQUIRE(vocabulary.pad_id() == TokenId{6});
    REQUIRE(vocabulary.unk_id() == TokenId{7});
    REQUIRE(vocabulary.token(6) == "<pad>");
    REQUIRE(vocabulary.token(7) == "<unk>");
    REQUIRE(vocabulary.encode(seed_sentence) == std::vector<TokenId>{0, 1, 2, 3, 4, 5});
    REQUIRE(vocabulary.encode("The dog sat on the rug!") == std::vector<TokenId>{0, 7, 2, 3, 4, 7});
    // Case is kept: "THE" is not "The".
    REQUIRE(vocabulary.encode("THE cat") == std::vector<TokenId>{7, 1});
}

TEST_CASE("Vocabulary: special tokens at the start, in the list, or absent") {
    SECTION("start: <pad> = 0, <unk> = 1, the list shifted") {
        VocabularyOptions options;
        options.add_missing = SpecialTokenPlacement::start;
        const Vocabulary vocabulary(seed_tokens, options);
        REQUIRE(vocabulary.size() == 8);
        REQUIRE(vocabulary.pad_id() == TokenId{0});
        REQUIRE(vocabulary.unk_id() == TokenId{1});
        REQUIRE(vocabulary.encode("The dog sat on the mat.") == std::vector<TokenId>{2, 1, 4, 5, 6, 7});
        REQUIRE(vocabulary.tokens().front() == "<pad>");
    }
    SECTION("a special token the list holds keeps its place; only the other is added") {
        const Vocabulary vocabulary({"<unk>", "a", "b"});
        REQUIRE(vocabulary.size() == 4);
        REQUIRE(vocabulary.unk_id() == TokenId{0});
        REQUIRE(vocabulary.pad_id() == TokenId{3});
        VocabularyOptions options;
        options.add_missing = SpecialTokenPlacement::start;
        const Vocabulary shifted({"a", "<unk>", "b"}, options);
        REQUIRE(shifted.tokens() == std::vector<std::string>{"<pad>", "a", "<unk>", "b"});
        REQUIRE(shifted.unk_id() == TokenId{2});
    }
    SECTION("none: a listed special token is used, a missing one is absent") {
        const Vocabulary vocabulary({"[PAD]", "a", "[UNK]"}, [] {
            VocabularyOptions options = without_specials();
            options.pad_token = "[PAD]";
            options.unk_token = "[UNK]";
            return options;
        }());
        REQUIRE(vocabulary.pad_id() == TokenId{0});
        REQUIRE(vocabulary.unk_id() == TokenId{2});
        REQUIRE(vocabulary.encode("a b") == std::vector<TokenId>{1, 2});
        const Vocabulary no_pad({"a", "<unk>"}, without_specials());
        REQUIRE_FALSE(no_pad.pad_id());
        REQUIRE(no_pad.unk_id() == TokenId{1});
    }
    SECTION("an empty special token means none") {
        VocabularyOptions options;
        options.pad_token.clear();
        const Vocabulary vocabulary({"a"}, options);
        REQUIRE(vocabulary.size() == 2);
        REQUIRE_FALSE(vocabulary.pad_id());
        REQUIRE(vocabulary.unk_id() == TokenId{1});
    }
    SECTION("an empty list: the special tokens alone") {
        const Vocabulary vocabulary(std::vector<std::string>{});
        REQUIRE(vocabulary.tokens() == std::vector<std::string>{"<pad>", "<unk>"});
        REQUIRE(vocabulary.encode("anything") == std::vector<TokenId>{1});
    }
}

TEST_CASE("Vocabulary: words split at whitespace, punctuation stripped, split off or kept") {
    const std::string text = " (The  mat)...\tdon't!\n3.14 \r\n\"quoted\" -- ";
    VocabularyOptions options;
    SECTION("strip (the default): edges dropped, inside kept") {
        const Vocabulary vocabulary({}, options);
        REQUIRE(vocabulary.tokenize(text) ==
                std::vector<std::string>{"The", "mat", "don't", "3.14", "quoted"});
    }
    SECTION("split: every edge punctuation character a token of its own") {
        options.punctuation = Punctuation::split;
        const Vocabulary vocabulary({}, options);
        REQUIRE(vocabulary.tokenize(text) ==
                std::vector<std::string>{"(", "The", "mat", ")", ".", ".", ".", "don't", "!", "3.14",
                                         "\"", "quoted", "\"", "-", "-"});
    }
    SECTION("keep: whitespace alone separates") {
        options.punctuation = Punctuation::keep;
        const Vocabulary vocabulary({}, options);
        REQUIRE(vocabulary.tokenize(text) ==
                std::vector<std::string>{"(The", "mat)...", "don't!", "3.14", "\"quoted\"", "--"});
    }
    SECTION("no words") {
        const Vocabulary vocabulary({}, options);
        REQUIRE(vocabulary.tokenize("").empty());
        REQUIRE(vocabulary.tokenize(" \t\r\n ").empty());
        REQUIRE(vocabulary.tokenize("... !? --").empty());
        REQUIRE(vocabulary.encode("").empty());
    }
}

TEST_CASE("Vocabulary: lowercasing touches ASCII letters of the text only") {
    VocabularyOptions options;
    options.lowercase = true;
    const Vocabulary vocabulary({"the", "cat", "\xC3\x89t\xC3\xA9", "The"}, options);  // "Été"
    REQUIRE(vocabulary.tokenize("The CAT \xC3\x89T\xC3\x89") ==
            std::vector<std::string>{"the", "cat", "\xC3\x89t\xC3\x89"});
    // "ÉTÉ" lowercases to "Ét\xC3\x89" (É is not ASCII), which is not "Été": <unk>. The listed
    // "The" is kept as it is, and no lowercased word can reach it.
    REQUIRE(vocabulary.encode("The CAT \xC3\x89T\xC3\xA9 \xC3\x89T\xC3\x89") == std::vector<TokenId>{0, 1, 2, 5});
    REQUIRE(vocabulary.token(3) == "The");
}

TEST_CASE("Vocabulary: UTF-8 words pass through as they are") {
    const Vocabulary vocabulary({"caf\xC3\xA9", "\xE7\x8C\xAB", "\xF0\x9F\x98\x80"});  // café 猫 😀
    REQUIRE(vocabulary.encode("caf\xC3\xA9, \xE7\x8C\xAB! \xF0\x9F\x98\x80 cafe") ==
            std::vector<TokenId>{0, 1, 2, 4});
    REQUIRE(vocabulary.decode({0, 1, 2}) == "caf\xC3\xA9 \xE7\x8C\xAB \xF0\x9F\x98\x80");
}

TEST_CASE("Vocabulary: decode joins tokens with spaces and leaves padding out") {
    const Vocabulary vocabulary(seed_tokens);
    REQUIRE(vocabulary.decode(vocabulary.encode(seed_sentence)) == "The cat sat on the mat");
    REQUIRE(vocabulary.decode({6, 0, 6, 1, 6}) == "The cat");
    REQUIRE(vocabulary.decode({7, 2}) == "<unk> sat");
    REQUIRE(vocabulary.decode(std::vector<std::int32_t>{5, 4}) == "mat the");
    REQUIRE(vocabulary.decode(std::vector<TokenId>{}).empty());
    // Every token's text encodes back to its id (the tokens have no edge punctuation).
    for (TokenId id = 0; id < 6; ++id)
        REQUIRE(vocabulary.encode(vocabulary.decode({id})) == std::vector<TokenId>{id});
    require_message<seqembed::index_error>([&] { (void)vocabulary.decode({0, 8, 1}); },
                                           "token id 8 at position 1 is outside the vocabulary [0, 8)");
    require_message<seqembed::index_error>([&] { (void)vocabulary.decode(std::vector<int>{-1}); },
                                           "token id -1 at position 0 is outside the vocabulary [0, 8)");
}

TEST_CASE("Vocabulary: id, find and token") {
    const Vocabulary vocabulary(seed_tokens);
    REQUIRE(vocabulary.find("mat") == TokenId{5});
    REQUIRE_FALSE(vocabulary.find("mat."));
    REQUIRE_FALSE(vocabulary.find("Mat"));
    require_message<seqembed::index_error>([&] { (void)vocabulary.id("dog"); },
                                           "token 'dog' is not in the vocabulary");
    require_message<seqembed::index_error>([&] { (void)vocabulary.token(8); },
                                           "token id 8 is outside the vocabulary [0, 8)");
    require_message<seqembed::index_error>([&] { (void)vocabulary.token(-3); },
                                           "token id -3 is outside the vocabulary [0, 8)");
}

TEST_CASE("Vocabulary: a large vocabulary finds every token and nothing else") {
    std::vector<std::string> tokens;
    for (int i = 0; i < 20000; ++i) tokens.push_back("w" + std::to_string(i));
    VocabularyOptions options;
    options.add_missing = SpecialTokenPlacement::start;
    const Vocabulary vocabulary(tokens, options);
    REQUIRE(vocabulary.size() == 20002);
    for (std::size_t i = 0; i < tokens.size(); ++i) REQUIRE(vocabulary.id(tokens[i]) == static_cast<TokenId>(i + 2));
    for (int i = 20000; i < 40000; ++i) REQUIRE_FALSE(vocabulary.find("w" + std::to_string(i)));
    REQUIRE(vocabulary.encode("w0 w19999 w20000") == std::vector<TokenId>{2, 20001, 1});
    require_message<seqembed::value_error>([&] {
        tokens.push_back("w12345");
        Vocabulary{tokens};
    }, "tokens[20000]: token 'w12345' repeats tokens[12345]");
}

TEST_CASE("Vocabulary: encode_batch pads on either side and fits Padding") {
    const Vocabulary vocabulary(seed_tokens);
    const std::vector<std::string> texts{seed_sentence, "The dog sat.", "", "on the mat"};

    const EncodedBatch right = vocabulary.encode_batch(texts);
    IdMatrix expected_right(4, 6);
    expected_right << 0, 1, 2, 3, 4, 5,
                      0, 7, 2, 6, 6, 6,
                      6, 6, 6, 6, 6, 6,
                      3, 4, 5, 6, 6, 6;
    REQUIRE(right.ids == expected_right);
    REQUIRE(right.lengths == std::vector<std::int64_t>{6, 3, 0, 3});
    REQUIRE(right.side == seqembed::PaddingSide::right);
    REQUIRE(right.pad_id == 6);
    REQUIRE(vocabulary.decode(right.ids.row(1)) == "The <unk> sat");

    seqembed::BatchOptions options;
    options.side = seqembed::PaddingSide::left;
    options.pad_id = -1;
    const EncodedBatch left = vocabulary.encode_batch(texts, options);
    IdMatrix expected_left(4, 6);
    expected_left << 0, 1, 2, 3, 4, 5,
                     -1, -1, -1, 0, 7, 2,
                     -1, -1, -1, -1, -1, -1,
                     -1, -1, -1, 3, 4, 5;
    REQUIRE(left.ids == expected_left);
    REQUIRE(left.lengths == right.lengths);
    REQUIRE(left.pad_id == -1);

    // Through a pipeline, both batches give every sentence the rows it gets alone, and the
    // padded places zero rows.
    seqembed::TokenEmbeddingOptions embedding_options;
    embedding_options.seed = 4;
    const seqembed::InputPipeline<double> pipeline(
        seqembed::TokenEmbedding<double>(vocabulary.size(), 8, embedding_options),
        seqembed::SinusoidalPositionalEncoding<double>(8));
    const seqembed::RowMatrix<double> from_right = pipeline.forward(right.ids, right.padding());
    const seqembed::RowMatrix<double> from_left = pipeline.forward(left.ids, left.padding());
    for (Eigen::Index b = 0; b < 4; ++b) {
        const std::vector<TokenId> ids = vocabulary.encode(texts[static_cast<std::size_t>(b)]);
        const Eigen::Index length = static_cast<Eigen::Index>(ids.size());
        for (Eigen::Index t = 0; t < 6; ++t) {
            const Eigen::Index row = b * 6 + t;
            if (t < length) {
                const IdMatrix alone = Eigen::Map<const IdMatrix>(ids.data(), 1, length);
                const seqembed::RowMatrix<double> expected = pipeline.forward(alone);
                REQUIRE(from_right.row(row) == expected.row(t));
                REQUIRE(from_left.row(b * 6 + (6 - length) + t) == expected.row(t));
            } else {
                REQUIRE(from_right.row(row).isZero(0.0));
                REQUIRE(from_left.row(b * 6 + t - length).isZero(0.0));
            }
        }
    }

    const EncodedBatch none = vocabulary.encode_batch({});
    REQUIRE(none.ids.rows() == 0);
    REQUIRE(none.ids.cols() == 0);
    REQUIRE(none.lengths.empty());
}

TEST_CASE("Vocabulary: encode_batch without a padding or unknown token") {
    const Vocabulary bare(seed_tokens, without_specials());
    require_message<seqembed::value_error>(
        [&] { (void)bare.encode_batch({"The cat"}); },
        "encode_batch needs a padding id: the vocabulary has no padding token "
        "(VocabularyOptions::pad_token) and BatchOptions::pad_id is unset");
    seqembed::BatchOptions options;
    options.pad_id = 0;
    const EncodedBatch batch = bare.encode_batch({"The cat", "mat"}, options);
    REQUIRE(batch.ids.row(1) == (IdMatrix(1, 2) << 5, 0).finished());
    require_message<seqembed::index_error>(
        [&] { (void)bare.encode_batch({"The cat", "The mat", "on the rug"}, options); },
        "word 'rug' at byte 7 of text 2 is not in the vocabulary, which has no unknown token "
        "(VocabularyOptions::unk_token)");
}

TEST_CASE("Vocabulary: bad token lists and options name the token and its place") {
    using E = seqembed::value_error;
    const std::string rule = " (tokens are non-empty UTF-8 without whitespace)";
    require_message<E>([] { Vocabulary({"a", "b", "a"}); }, "tokens[2]: token 'a' repeats tokens[0]");
    require_message<E>([] { Vocabulary({"a", ""}); }, "tokens[1]: token is empty" + rule);
    require_message<E>([] { Vocabulary({"New York"}); }, "tokens[0]: token 'New York' holds whitespace" + rule);
    require_message<E>([] { Vocabulary({"a", "b\n"}); }, "tokens[1]: token 'b\n' holds whitespace" + rule);
    require_message<E>([] { Vocabulary({"ok", "caf\xE9"}); },
                       "tokens[1]: token is not valid UTF-8 (at byte 3)" + rule);
    // A listed special token is an ordinary token for these checks.
    require_message<E>([] { Vocabulary({"<unk>", "<unk>"}); }, "tokens[1]: token '<unk>' repeats tokens[0]");

    VocabularyOptions same;
    same.unk_token = "<pad>";
    require_message<E>([&] { Vocabulary({"a"}, same); },
                       "pad_token and unk_token are both '<pad>': padding and unknown words need "
                       "different tokens");
    VocabularyOptions spaced;
    spaced.unk_token = "<u n k>";
    require_message<E>([&] { Vocabulary({"a"}, spaced); },
                       "VocabularyOptions::unk_token '<u n k>' holds whitespace (empty for none, else "
                       "UTF-8 without whitespace)");
}

TEST_CASE("Vocabulary: from_file reads one token a line") {
    const test_support::TempDir dir;
    const Vocabulary expected(seed_tokens);
    const auto read = [&](const std::string& name, const std::string& bytes) {
        test_support::write_bytes(dir / name, bytes);
        return Vocabulary::from_file(dir.file(name));
    };
    // As Python's "\n".join(tokens), with a final newline, with Windows line ends, with a byte
    // order mark: the same vocabulary.
    REQUIRE(read("plain.txt", "The\ncat\nsat\non\nthe\nmat").tokens() == expected.tokens());
    REQUIRE(read("final_newline.txt", "The\ncat\nsat\non\nthe\nmat\n").tokens() == expected.tokens());
    REQUIRE(read("crlf.txt", "The\r\ncat\r\nsat\r\non\r\nthe\r\nmat\r\n").tokens() == expected.tokens());
    REQUIRE(read("bom.txt", "\xEF\xBB\xBFThe\ncat\nsat\non\nthe\nmat\n").tokens() == expected.tokens());

    const Vocabulary with_specials = read("specials.txt", "<pad>\n<unk>\nThe\ncat\n");
    REQUIRE(with_specials.size() == 4);
    REQUIRE(with_specials.pad_id() == TokenId{0});
    REQUIRE(with_specials.unk_id() == TokenId{1});
    REQUIRE(with_specials.encode("The cat sat.") == std::vector<TokenId>{2, 3, 1});

    VocabularyOptions lowercase;
    lowercase.lowercase = true;
    test_support::write_bytes(dir / "options.txt", "the\ncat\n");
    REQUIRE(Vocabulary::from_file(dir.file("options.txt"), lowercase).encode("The CAT") ==
            std::vector<TokenId>{0, 1});
}

TEST_CASE("Vocabulary: bad vocabulary files name the file and the line") {
    const test_support::TempDir dir;
    using E = seqembed::value_error;
    const std::string rule = " (one token per line, nothing else on it, no blank lines)";
    const auto check = [&](const std::string& name, const std::string& bytes, const std::string& expected) {
        const std::string path = dir.file(name);
        test_support::write_bytes(path, bytes);
        require_message<E>([&] { (void)Vocabulary::from_file(path); }, path + expected);
    };
    check("empty.txt", "", ": the vocabulary file holds no tokens");
    check("bom_only.txt", "\xEF\xBB\xBF", ": the vocabulary file holds no tokens");
    check("blank.txt", "\n", ":1: empty line" + rule);
    check("blank_inside.txt", "The\ncat\n\nsat\n", ":3: empty line" + rule);
    check("blank_at_end.txt", "The\ncat\n\n", ":3: empty line" + rule);
    check("blank_crlf.txt", "The\r\n\r\ncat\r\n", ":2: empty line" + rule);
    check("repeat.txt", "The\ncat\nsat\ncat\n", ":4: token 'cat' repeats line 2");
    check("counts.txt", "The\t120\ncat\t7\n", ":1: token 'The\t120' holds whitespace" + rule);
    check("space.txt", "The\ncat \n", ":2: token 'cat ' holds whitespace" + rule);
    check("latin1.txt", "The\ncaf\xE9\n", ":2: token is not valid UTF-8 (at byte 3)" + rule);
    check("lone_cr.txt", "The\rcat\n", ":1: token 'The\rcat' holds whitespace" + rule);

    const std::string missing = dir.file("missing.txt");
    require_message<seqembed::file_error>([&] { (void)Vocabulary::from_file(missing); },
                                          "cannot open the vocabulary file '" + missing +
                                              "': No such file or directory");
    const std::string directory = dir.file("a_directory");
    std::filesystem::create_directory(directory);
    const std::string message = test_support::message_of<seqembed::file_error>([&] { (void)Vocabulary::from_file(directory); });
    REQUIRE(message.rfind("seqembed: cannot read the vocabulary file '" + directory + "': ", 0) == 0);
}

TEST_CASE("Vocabulary: the UTF-8 check rejects what the standard rules out") {
    using seqembed::detail::first_invalid_utf8;
    REQUIRE(first_invalid_utf8("") == 0);
    REQUIRE(first_invalid_utf8("plain") == 5);
    REQUIRE(first_invalid_utf8("\xE2\x82\xAC") == 3);           // U+20AC
    REQUIRE(first_invalid_utf8("\xF0\x9F\x98\x80") == 4);       // U+1F600
    REQUIRE(first_invalid_utf8("\xF4\x8F\xBF\xBF") == 4);       // U+10FFFF, the last
    REQUIRE(first_invalid_utf8("\xED\x9F\xBF") == 3);           // U+D7FF, before the surrogates
    REQUIRE(first_invalid_utf8("a\xC0\xAF") == 1);              // overlong '/'
    REQUIRE(first_invalid_utf8("ab\xE0\x9F\xBF") == 2);         // overlong three bytes
    REQUIRE(first_invalid_utf8("\xF0\x8F\xBF\xBF") == 0);       // overlong four bytes
    REQUIRE(first_invalid_utf8("\xED\xA0\x80") == 0);           // U+D800, a surrogate
    REQUIRE(first_invalid_utf8("\xF4\x90\x80\x80") == 0);       // U+110000
    REQUIRE(first_invalid_utf8("\xF5\x80\x80\x80") == 0);
    REQUIRE(first_invalid_utf8("x\x80") == 1);                  // a lone continuation byte
    REQUIRE(first_invalid_utf8("\xE2\x82") == 0);               // cut short
    REQUIRE(first_invalid_utf8("\xE2\x28\xA1") == 0);           // a bad continuation byte
    REQUIRE(first_invalid_utf8(std::string_view("a\0b", 3)) == 3);
}
