// SentencePieceTokenizer against real models: each test program generates a corpus of a few
// hundred sentences, trains two tiny models on it with SentencePiece's own trainer (a unigram
// model with T5's layout of special pieces, and a BPE model with SentencePiece's default ids, as
// Llama's), then checks the adapter's ids, pieces, padding and errors against
// sentencepiece::SentencePieceProcessor used directly on the same files.
#include <seqembed/text/sentencepiece.hpp>
#include <seqembed/seqembed.hpp>

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "catch.hpp"
#include "test_support.hpp"

using seqembed::BatchOptions;
using seqembed::EncodedBatch;
using seqembed::IdMatrix;
using seqembed::PaddingSide;
using seqembed::SentencePieceOptions;
using seqembed::SentencePieceTokenizer;
using seqembed::TokenId;
using test_support::require_message;

namespace {

constexpr int vocab_size = 72;  // the corpus allows at most 88 pieces
const std::string space = "\xE2\x96\x81";  // U+2581, SentencePiece's mark of a word start

// 384 sentences from 8 subjects x 6 verbs x 8 objects, with 5 endings and some capitals: the
// same corpus on every run, every machine.
std::vector<std::string> corpus() {
    const char* const subjects[] = {"the cat",     "the dog",       "a bird",      "my friend",
                                    "the teacher", "our neighbour", "the old man", "a small child"};
    const char* const verbs[] = {"sat on", "looked at", "walked past", "jumped over", "talked about", "painted"};
    const char* const objects[] = {"the mat",          "the red door", "a green chair", "the garden wall",
                                   "the sleeping cat", "a wooden table", "the river",   "the city lights"};
    const char* const endings[] = {".", " today.", " again!", " in the morning.", " quietly."};
    std::vector<std::string> sentences;
    for (int i = 0; i < 8 * 6 * 8; ++i) {
        std::string sentence = std::string(subjects[i % 8]) + " " + verbs[(i / 8) % 6] + " " +
                               objects[(i / 48) % 8] + endings[i % 5];
        if (i % 3 == 0) sentence[0] = static_cast<char>(sentence[0] - 'a' + 'A');
        sentences.push_back(sentence);
    }
    return sentences;
}

// The corpus and the two models, made once per test program in a directory of its own.
class TinyModels {
public:
    TinyModels() {
        std::ofstream out(m_dir / "corpus.txt", std::ios::binary);
        for (const std::string& sentence : corpus()) out << sentence << '\n';
        out.close();
        // Unigram, T5's layout: <pad> 0, </s> 1, <unk> 2, no <s>; and a user-defined piece.
        train("t5_like", {{"model_type", "unigram"}, {"pad_id", "0"}, {"eos_id", "1"}, {"unk_id", "2"},
                          {"bos_id", "-1"}, {"user_defined_symbols", "<sep>"}});
        // BPE with SentencePiece's default ids, as Llama's: <unk> 0, <s> 1, </s> 2, no <pad>.
        train("llama_like", {{"model_type", "bpe"}});
    }
    std::string t5_like() const { return m_dir.file("t5_like.model"); }
    std::string llama_like() const { return m_dir.file("llama_like.model"); }
    std::string corpus_file() const { return m_dir.file("corpus.txt"); }
    std::string missing() const { return m_dir.file("missing.model"); }

private:
    void train(const std::string& name, std::unordered_map<std::string, std::string> settings) {
        settings["input"] = m_dir.file("corpus.txt");
        settings["model_prefix"] = m_dir.file(name);
        settings["vocab_size"] = std::to_string(vocab_size);
        settings["character_coverage"] = "1.0";  // every character of the corpus has a piece
        settings["num_threads"] = "1";           // the same model on every run
        settings["minloglevel"] = "2";           // errors only: training is chatty
        const sentencepiece::util::Status status = sentencepiece::SentencePieceTrainer::Train(settings);
        INFO("training " << name << ": " << status.ToString());
        REQUIRE(status.ok());
    }

    test_support::TempDir m_dir;
};

const TinyModels& models() {
    static const TinyModels trained;
    return trained;
}

// SentencePiece itself on a model file, to compare with.
struct Direct {
    explicit Direct(const std::string& path) { REQUIRE(processor.Load(path).ok()); }
    std::vector<TokenId> ids(const std::string& text) const {
        std::vector<int> ids;
        REQUIRE(processor.Encode(text, &ids).ok());
        return {ids.begin(), ids.end()};
    }
    sentencepiece::SentencePieceProcessor processor;
};

// Texts beyond the corpus: unseen words, characters the model never saw, odd spacing, nothing.
const std::vector<std::string> other_texts{
    "the zebra painted a purple fence",
    "THE CAT SAT ON THE MAT",
    "  two   spaces\tand a tab  ",
    "caf\xC3\xA9 \xE7\x8C\xAB \xF0\x9F\x98\x80",  // café 猫 😀: none in the corpus
    "<sep> between <sep>",
    "",
};

}  // namespace

TEST_CASE("sentencepiece: the ids and pieces are SentencePieceProcessor's") {
    for (const std::string& path : {models().t5_like(), models().llama_like()}) {
        INFO(path);
        const SentencePieceTokenizer tokenizer(path);
        const Direct direct(path);
        REQUIRE(tokenizer.size() == vocab_size);
        std::vector<std::string> texts = corpus();
        texts.insert(texts.end(), other_texts.begin(), other_texts.end());
        for (const std::string& text : texts) {
            INFO(text);
            REQUIRE(tokenizer.encode(text) == direct.ids(text));
            std::vector<std::string> pieces;
            REQUIRE(direct.processor.Encode(text, &pieces).ok());
            REQUIRE(tokenizer.tokenize(text) == pieces);
            std::string decoded;
            std::vector<int> ids;
            REQUIRE(direct.processor.Encode(text, &ids).ok());
            REQUIRE(direct.processor.Decode(ids, &decoded).ok());
            REQUIRE(tokenizer.decode(tokenizer.encode(text)) == decoded);
        }
    }
}

TEST_CASE("sentencepiece: corpus sentences decode to themselves") {
    const SentencePieceTokenizer tokenizer(models().t5_like());
    for (const std::string& sentence : corpus()) {
        INFO(sentence);
        const std::vector<TokenId> ids = tokenizer.encode(sentence);
        REQUIRE(!ids.empty());
        REQUIRE(ids.size() < sentence.size());  // pieces longer than a character were learnt
        REQUIRE(tokenizer.decode(ids) == sentence);
    }
}

TEST_CASE("sentencepiece: special and known pieces") {
    SECTION("T5's layout") {
        const SentencePieceTokenizer tokenizer(models().t5_like());
        REQUIRE(tokenizer.pad_id() == TokenId{0});
        REQUIRE(tokenizer.eos_id() == TokenId{1});
        REQUIRE(tokenizer.unk_id() == TokenId{2});
        REQUIRE_FALSE(tokenizer.bos_id());
        REQUIRE(tokenizer.token(0) == "<pad>");
        REQUIRE(tokenizer.token(1) == "</s>");
        REQUIRE(tokenizer.token(2) == "<unk>");
        // User-defined pieces follow the reserved ones and always stay whole.
        REQUIRE(tokenizer.id("<sep>") == 3);
        REQUIRE(tokenizer.token(3) == "<sep>");
        const std::vector<TokenId> ids = tokenizer.encode("the cat<sep>the dog");
        REQUIRE(std::count(ids.begin(), ids.end(), TokenId{3}) == 1);
    }
    SECTION("SentencePiece's default ids") {
        const SentencePieceTokenizer tokenizer(models().llama_like());
        REQUIRE(tokenizer.unk_id() == TokenId{0});
        REQUIRE(tokenizer.bos_id() == TokenId{1});
        REQUIRE(tokenizer.eos_id() == TokenId{2});
        REQUIRE_FALSE(tokenizer.pad_id());
        REQUIRE(tokenizer.token(0) == "<unk>");
        REQUIRE(tokenizer.token(1) == "<s>");
        REQUIRE(tokenizer.token(2) == "</s>");
    }
    SECTION("every piece, both ways, as the processor has it") {
        for (const std::string& path : {models().t5_like(), models().llama_like()}) {
            INFO(path);
            const SentencePieceTokenizer tokenizer(path);
            const Direct direct(path);
            for (TokenId id = 0; id < tokenizer.size(); ++id) {
                const std::string& piece = direct.processor.IdToPiece(static_cast<int>(id));
                REQUIRE(tokenizer.token(id) == piece);
                REQUIRE(tokenizer.find(piece) == id);
                REQUIRE(tokenizer.id(piece) == id);
            }
            REQUIRE_FALSE(tokenizer.find("zebra"));
            REQUIRE_FALSE(tokenizer.find(""));
            REQUIRE(tokenizer.find("<unk>") == tokenizer.unk_id());
        }
    }
    SECTION("BPE merges the words the corpus repeats most into pieces of their own") {
        const SentencePieceTokenizer tokenizer(models().llama_like());
        const std::vector<TokenId> the_cat = tokenizer.encode("the cat");
        REQUIRE(the_cat == std::vector<TokenId>{tokenizer.id(space + "the"), tokenizer.id(space + "cat")});
        REQUIRE(tokenizer.tokenize("the cat") == std::vector<std::string>{space + "the", space + "cat"});
        REQUIRE(tokenizer.decode(the_cat) == "the cat");
    }
}

TEST_CASE("sentencepiece: characters outside the model's alphabet are <unk>") {
    const SentencePieceTokenizer tokenizer(models().t5_like());
    const Direct direct(models().t5_like());
    const std::string text = "the cat \xE7\x8C\xAB sat";  // 猫: not in the corpus
    const std::vector<TokenId> ids = tokenizer.encode(text);
    REQUIRE(ids == direct.ids(text));
    REQUIRE(std::count(ids.begin(), ids.end(), *tokenizer.unk_id()) == 1);
    // SentencePiece decodes <unk> as " \u2047 " (a double question mark, spaced).
    REQUIRE(tokenizer.decode(ids) == "the cat  \xE2\x81\x87  sat");
}

TEST_CASE("sentencepiece: bos and eos around each text") {
    const Direct direct(models().llama_like());
    SentencePieceOptions options;
    options.add_bos = true;
    options.add_eos = true;
    const SentencePieceTokenizer tokenizer(models().llama_like(), options);
    std::vector<TokenId> expected{1};
    const std::vector<TokenId> words = direct.ids("the cat sat on the mat.");
    expected.insert(expected.end(), words.begin(), words.end());
    expected.push_back(2);
    REQUIRE(tokenizer.encode("the cat sat on the mat.") == expected);
    REQUIRE(tokenizer.encode("") == std::vector<TokenId>{1, 2});
    // Control pieces decode to nothing.
    REQUIRE(tokenizer.decode(expected) == "the cat sat on the mat.");

    SentencePieceOptions eos_only;
    eos_only.add_eos = true;
    const SentencePieceTokenizer t5(models().t5_like(), eos_only);
    REQUIRE(t5.encode("the cat").back() == 1);
    SentencePieceOptions bos;
    bos.add_bos = true;
    require_message<seqembed::value_error>(
        [&] { SentencePieceTokenizer(models().t5_like(), bos); },
        "SentencePieceOptions::add_bos is set, but the SentencePiece model '" + models().t5_like() +
            "' has no bos piece (trained with --bos_id=-1)");
}

TEST_CASE("sentencepiece: encode_batch pads on either side and fits Padding") {
    const SentencePieceTokenizer tokenizer(models().t5_like());
    const std::vector<std::string> texts{"The cat sat on the mat.", "a bird", "",
                                         "our neighbour painted the city lights quietly."};
    std::vector<std::vector<TokenId>> alone;
    std::size_t longest = 0;
    for (const std::string& text : texts) {
        alone.push_back(tokenizer.encode(text));
        longest = std::max(longest, alone.back().size());
    }
    const auto seq = static_cast<Eigen::Index>(longest);

    for (const PaddingSide side : {PaddingSide::right, PaddingSide::left}) {
        BatchOptions options;
        options.side = side;
        const EncodedBatch batch = tokenizer.encode_batch(texts, options);
        REQUIRE(batch.ids.rows() == 4);
        REQUIRE(batch.ids.cols() == seq);
        REQUIRE(batch.pad_id == 0);
        REQUIRE(batch.side == side);
        for (Eigen::Index b = 0; b < 4; ++b) {
            const std::vector<TokenId>& ids = alone[static_cast<std::size_t>(b)];
            const auto length = static_cast<Eigen::Index>(ids.size());
            REQUIRE(batch.lengths[static_cast<std::size_t>(b)] == length);
            const Eigen::Index first = side == PaddingSide::right ? 0 : seq - length;
            for (Eigen::Index t = 0; t < seq; ++t) {
                const bool real = t >= first && t < first + length;
                REQUIRE(batch.ids(b, t) == (real ? ids[static_cast<std::size_t>(t - first)] : 0));
            }
            // <pad> is a control piece: a padded row decodes as its text.
            REQUIRE(tokenizer.decode(batch.ids.row(b)) == tokenizer.decode(ids));
        }

        // Through a pipeline, each text's rows are those it gets alone; padding gives zero rows.
        const seqembed::InputPipeline<float> pipeline(seqembed::TokenEmbedding<float>(tokenizer.size(), 16),
                                                      seqembed::SinusoidalPositionalEncoding<float>(16));
        const seqembed::RowMatrix<float> x = pipeline.forward(batch.ids, batch.padding());
        for (Eigen::Index b = 0; b < 4; ++b) {
            const std::vector<TokenId>& ids = alone[static_cast<std::size_t>(b)];
            const auto length = static_cast<Eigen::Index>(ids.size());
            const Eigen::Index first = side == PaddingSide::right ? 0 : seq - length;
            if (length > 0) {
                const seqembed::RowMatrix<float> expected =
                    pipeline.forward(Eigen::Map<const IdMatrix>(ids.data(), 1, length));
                REQUIRE(x.middleRows(b * seq + first, length) == expected);
            }
            for (Eigen::Index t = 0; t < seq; ++t)
                if (t < first || t >= first + length) REQUIRE(x.row(b * seq + t).isZero(0.0f));
        }
    }
}

TEST_CASE("sentencepiece: a model without <pad> pads with the id it is given") {
    const SentencePieceTokenizer tokenizer(models().llama_like());
    require_message<seqembed::value_error>(
        [&] { (void)tokenizer.encode_batch({"the cat", "a bird"}); },
        "encode_batch needs a padding id: the SentencePiece model '" + models().llama_like() +
            "' has no padding piece (trained without --pad_id) and BatchOptions::pad_id is unset");
    BatchOptions options;
    options.pad_id = *tokenizer.eos_id();
    options.side = PaddingSide::left;
    const EncodedBatch batch = tokenizer.encode_batch({"the cat", "the"}, options);
    IdMatrix expected(2, 2);
    expected << tokenizer.id(space + "the"), tokenizer.id(space + "cat"),
                2, tokenizer.id(space + "the");
    REQUIRE(batch.ids == expected);
    REQUIRE(batch.lengths == std::vector<std::int64_t>{2, 1});
}

TEST_CASE("sentencepiece: from_bytes, copies, and bad models and ids") {
    const std::string path = models().t5_like();
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    const SentencePieceTokenizer loaded(path);
    const SentencePieceTokenizer from_bytes = SentencePieceTokenizer::from_bytes(bytes.str());
    const SentencePieceTokenizer copy = loaded;  // shares the processor
    for (const std::string& text : corpus()) {
        REQUIRE(from_bytes.encode(text) == loaded.encode(text));
        REQUIRE(copy.encode(text) == loaded.encode(text));
    }
    REQUIRE(&copy.processor() == &loaded.processor());

    // SentencePiece's own message follows the file's name.
    const std::string missing = test_support::message_of<seqembed::error>(
        [&] { SentencePieceTokenizer(models().missing()); });
    INFO(missing);
    REQUIRE(missing.rfind("seqembed: cannot load the SentencePiece model '" + models().missing() + "': ", 0) == 0);
    REQUIRE(missing.find("No such file or directory") != std::string::npos);
    const std::string not_a_model = test_support::message_of<seqembed::error>(
        [&] { SentencePieceTokenizer(models().corpus_file()); });
    INFO(not_a_model);
    REQUIRE(not_a_model.rfind("seqembed: cannot load the SentencePiece model '" + models().corpus_file() + "': ", 0) == 0);
    const std::string bad_bytes = test_support::message_of<seqembed::error>(
        [&] { (void)SentencePieceTokenizer::from_bytes("not a model"); });
    REQUIRE(bad_bytes.rfind("seqembed: cannot load a SentencePiece model from 11 bytes: ", 0) == 0);

    const std::string where = "the SentencePiece model '" + path + "'";
    const std::string range = "'s vocabulary [0, 72)";
    require_message<seqembed::index_error>([&] { (void)loaded.decode({5, 72, 6}); },
                                           "token id 72 at position 1 is outside " + where + range);
    require_message<seqembed::index_error>([&] { (void)loaded.decode(std::vector<int>{-1}); },
                                           "token id -1 at position 0 is outside " + where + range);
    require_message<seqembed::index_error>([&] { (void)loaded.token(72); },
                                           "token id 72 is outside " + where + range);
    require_message<seqembed::index_error>([&] { (void)loaded.id("zebra"); },
                                           "piece 'zebra' is not in " + where);
}
