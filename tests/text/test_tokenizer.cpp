// seqembed::text::Tokenizer against Hugging Face tokenizers' own encodings
// (tests/fixtures/text/expected/, from tests/reference/generate_tokenizer_fixtures.js): ids,
// tokens, type ids, masks, byte offsets and decodings of every text, pairs, truncation by each
// strategy and padding on either side.
#include <seqembed/text/tokenizer.hpp>
#include <seqembed/seqembed.hpp>

#include <cstddef>
#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "catch.hpp"

namespace {

using seqembed::text::Encoding;
using seqembed::text::Tokenizer;

std::string fixture(const std::string& name) { return std::string(SEQEMBED_TEXT_FIXTURES) + "/" + name; }

nlohmann::json read_json(const std::string& path) {
    std::ifstream stream(path, std::ios::binary);
    REQUIRE(stream);
    std::ostringstream text;
    text << stream.rdbuf();
    return nlohmann::json::parse(text.str());
}

// The bytes of a case: its text, or its hex bytes (invalid UTF-8).
std::string case_bytes(const nlohmann::json& item) {
    if (item.contains("text")) return item["text"].get<std::string>();
    const std::string hex = item["bytes_hex"].get<std::string>();
    std::string bytes;
    for (std::size_t k = 0; k + 1 < hex.size(); k += 2)
        bytes.push_back(static_cast<char>(std::stoi(hex.substr(k, 2), nullptr, 16)));
    return bytes;
}

std::vector<std::pair<std::size_t, std::size_t>> offsets_of(const nlohmann::json& list) {
    std::vector<std::pair<std::size_t, std::size_t>> offsets;
    for (const nlohmann::json& pair : list) offsets.emplace_back(pair[0].get<std::size_t>(), pair[1].get<std::size_t>());
    return offsets;
}

// The encoding against the expected one; offsets only for valid UTF-8 (the reference's offsets of
// a replaced text count the replacement's three bytes, seqembed's the input's).
void check_encoding(const Encoding& encoding, const nlohmann::json& expected, bool offsets) {
    CHECK(encoding.ids == expected["ids"].get<std::vector<seqembed::TokenId>>());
    CHECK(encoding.tokens == expected["tokens"].get<std::vector<std::string>>());
    CHECK(encoding.type_ids == expected["type_ids"].get<std::vector<seqembed::TokenId>>());
    CHECK(encoding.special_tokens_mask == expected["special_tokens_mask"].get<std::vector<std::uint8_t>>());
    CHECK(encoding.attention_mask == expected["attention_mask"].get<std::vector<std::uint8_t>>());
    if (offsets) CHECK(encoding.offsets == offsets_of(expected["offsets"]));
}

void check_cases(const Tokenizer& tokenizer, const nlohmann::json& expected) {
    for (const nlohmann::json& item : expected["cases"]) {
        const std::string text = case_bytes(item);
        const bool valid = item.contains("text");
        INFO("text " << (valid ? text : item["bytes_hex"].get<std::string>()));
        seqembed::text::EncodeOptions options;
        options.invalid_utf8 = valid ? seqembed::text::InvalidUtf8::error : seqembed::text::InvalidUtf8::replace;
        const Encoding with = tokenizer.encode(text, options);
        check_encoding(with, item["with_special_tokens"], valid);
        options.add_special_tokens = false;
        check_encoding(tokenizer.encode(text, options), item["without_special_tokens"], valid);
        CHECK(tokenizer.decode(with.ids) == item["decoded"].get<std::string>());
        CHECK(tokenizer.decode(with.ids, true) == item["decoded_skipping_special"].get<std::string>());
    }
}

void check_pairs(const Tokenizer& tokenizer, const nlohmann::json& expected) {
    for (const nlohmann::json& item : expected["pairs"]) {
        INFO(item["first"].get<std::string>() << " | " << item["second"].get<std::string>());
        check_encoding(tokenizer.encode(item["first"].get<std::string>(), item["second"].get<std::string>()), item, true);
    }
}

void check_batches(const Tokenizer& tokenizer, const nlohmann::json& expected) {
    for (const nlohmann::json& item : expected["batches"]) {
        Tokenizer configured = tokenizer;
        const std::string strategy = item["strategy"].get<std::string>();
        seqembed::text::Truncation truncation;
        truncation.max_length = item["max_length"].get<std::size_t>();
        truncation.strategy = strategy == "LongestFirst" ? seqembed::text::TruncationStrategy::longest_first
                              : strategy == "OnlyFirst"  ? seqembed::text::TruncationStrategy::only_first
                                                         : seqembed::text::TruncationStrategy::only_second;
        configured.set_truncation(truncation);
        seqembed::text::PaddingOptions padding;
        padding.side = item["padding"].get<std::string>() == "left" ? seqembed::PaddingSide::left
                                                                    : seqembed::PaddingSide::right;
        padding.pad_id = item["pad_id"].get<seqembed::TokenId>();
        if (item["pad_to"].is_number()) padding.length = item["pad_to"].get<std::size_t>();
        configured.set_padding(padding);
        INFO(strategy << ", padding " << item["padding"].get<std::string>());
        if (item.contains("inputs")) {
            const std::vector<Encoding> encodings = configured.encode_each(item["inputs"].get<std::vector<std::string>>());
            REQUIRE(encodings.size() == item["encodings"].size());
            for (std::size_t k = 0; k < encodings.size(); ++k) {
                CHECK(encodings[k].ids == item["encodings"][k]["ids"].get<std::vector<seqembed::TokenId>>());
                CHECK(encodings[k].type_ids == item["encodings"][k]["type_ids"].get<std::vector<seqembed::TokenId>>());
                CHECK(encodings[k].attention_mask ==
                      item["encodings"][k]["attention_mask"].get<std::vector<std::uint8_t>>());
            }
            continue;
        }
        const std::string first = item["first"].get<std::string>();
        const std::string second = item["second"].get<std::string>();
        INFO(first << " | " << second);
        if (item.contains("error")) {
            CHECK_THROWS_AS(configured.encode(first, second), seqembed::value_error);
            continue;
        }
        const Encoding encoding = configured.encode(first, second);
        CHECK(encoding.ids == item["ids"].get<std::vector<seqembed::TokenId>>());
        CHECK(encoding.type_ids == item["type_ids"].get<std::vector<seqembed::TokenId>>());
        CHECK(encoding.attention_mask == item["attention_mask"].get<std::vector<std::uint8_t>>());
    }
}

// Every text, pair and batch of a family's expected file.
void check_family(const Tokenizer& tokenizer, const nlohmann::json& expected) {
    check_cases(tokenizer, expected);
    check_pairs(tokenizer, expected);
    check_batches(tokenizer, expected);
}

// The directory scripts/fetch-tokenizers.sh filled (its node_modules), or "" when it is absent.
std::string downloads() {
#ifdef SEQEMBED_TOKENIZER_DOWNLOADS
    const std::string directory = std::string(SEQEMBED_TOKENIZER_DOWNLOADS) + "/node_modules";
    if (std::filesystem::is_directory(directory)) return directory;
#endif
    return "";
}

// A family whose tokenizer.json scripts/fetch-tokenizers.sh downloads: checked when it is
// there, reported as skipped by name when not.
void check_downloaded_family(const std::string& name) {
    const nlohmann::json expected = read_json(fixture("expected/" + name + ".json"));
    const std::string path = downloads() + "/" + expected["tokenizer"].get<std::string>();
    if (downloads().empty() || !std::filesystem::is_regular_file(path)) {
        WARN("SKIPPED " << name << ": " << expected["tokenizer"].get<std::string>()
                        << " is absent (scripts/fetch-tokenizers.sh fetches it)");
        return;
    }
    check_family(Tokenizer::from_file(path), expected);
}

}  // namespace

TEST_CASE("Tokenizer gives Hugging Face's encodings of BERT-base-uncased", "[text]") {
    const nlohmann::json expected = read_json(fixture("expected/bert-base-uncased.json"));
    const Tokenizer tokenizer = Tokenizer::from_file(fixture("bert-base-uncased/tokenizer.json"));
    CHECK(tokenizer.vocab_size() == 30522);
    SECTION("every text, with and without special tokens, and its decoding; pairs; truncation and padding") {
        check_family(tokenizer, expected);
    }
    SECTION("from vocab.txt, as BertTokenizerFast builds it: the same encodings") {
        check_cases(Tokenizer::from_bert_vocab(fixture("bert-base-uncased/vocab.txt")), expected);
    }
}

TEST_CASE("Tokenizer gives Hugging Face's encodings of GPT-2 (byte-level BPE)", "[text]") {
    const nlohmann::json expected = read_json(fixture("expected/gpt2.json"));
    const Tokenizer tokenizer = Tokenizer::from_file(fixture("gpt2/tokenizer.json"));
    CHECK(tokenizer.vocab_size() == 50257);
    SECTION("from tokenizer.json") { check_family(tokenizer, expected); }
    SECTION("from vocab.json and merges.txt, as GPT2TokenizerFast builds it: the same encodings") {
        check_family(Tokenizer::from_bpe_files(fixture("gpt2/vocab.json"), fixture("gpt2/merges.txt")), expected);
    }
}

TEST_CASE("Tokenizer gives Hugging Face's encodings with RoBERTa's components", "[text]") {
    // GPT-2's vocabulary with roberta-base's pre-tokenizer and RobertaProcessing (offsets trimmed
    // of the spaces), with and without add_prefix_space.
    for (const char* name : {"roberta", "roberta-prefix"}) {
        INFO(name);
        const nlohmann::json expected = read_json(fixture(std::string("expected/") + name + ".json"));
        nlohmann::json json = read_json(fixture(expected["base"].get<std::string>()));
        for (const auto& [key, value] : expected["patch"].items()) json[key] = value;
        check_family(Tokenizer::from_json(json.dump(), name), expected);
    }
}

TEST_CASE("Tokenizer gives Hugging Face's encodings with each component's settings", "[text]") {
    // Each config replaces parts of a base tokenizer.json: every Split behavior, Digits,
    // Whitespace, Punctuation, the Unicode forms and the other normalizers, ByteLevel's prefix
    // space and trimmed offsets, Metaspace's prepend schemes, BERT's variants, the decoders.
    const nlohmann::json components = read_json(fixture("expected/components.json"));
    for (const nlohmann::json& config : components["configs"]) {
        INFO(config["name"].get<std::string>());
        nlohmann::json json = read_json(fixture(config["base"].get<std::string>()));
        for (const auto& [key, value] : config["patch"].items()) json[key] = value;
        check_cases(Tokenizer::from_json(json.dump(), config["name"].get<std::string>()), config);
    }
}

TEST_CASE("Tokenizer gives Hugging Face's encodings of a SentencePiece Unigram model", "[text]") {
    // Trained by the generator on tests/reference/unigram_corpus.txt, written as Hugging Face's
    // converter writes such a model: Metaspace, Unigram, a run of unknown characters one <unk>.
    check_family(Tokenizer::from_file(fixture("unigram/tokenizer.json")), read_json(fixture("expected/unigram.json")));
}

TEST_CASE("Tokenizer gives Hugging Face's encodings of a Unigram model with SentencePiece's NFKC charsmap", "[text]") {
    // Trained with nmt_nfkc, written as transformers' SpmConverter writes T5's and XLM-RoBERTa's:
    // the Precompiled normalizer (a double-array trie over graphemes), then runs of spaces as one.
    check_family(Tokenizer::from_file(fixture("unigram-nfkc/tokenizer.json")),
                 read_json(fixture("expected/unigram-nfkc.json")));
}

TEST_CASE("Tokenizer gives Hugging Face's encodings of a Unigram model with byte fallback", "[text]") {
    check_family(Tokenizer::from_file(fixture("unigram-byte-fallback/tokenizer.json")),
                 read_json(fixture("expected/unigram-byte-fallback.json")));
}

TEST_CASE("Tokenizer gives Hugging Face's encodings of Llama 2 (downloaded)", "[text][downloaded]") {
    check_downloaded_family("llama2");
}

TEST_CASE("Tokenizer gives Hugging Face's encodings of Llama 3 (downloaded)", "[text][downloaded]") {
    check_downloaded_family("llama3");
}

TEST_CASE("Tokenizer gives Hugging Face's encodings of Qwen3 (downloaded)", "[text][downloaded]") {
    check_downloaded_family("qwen3");
}

TEST_CASE("Tokenizer gives Hugging Face's encodings of Mistral NeMo (downloaded)", "[text][downloaded]") {
    check_downloaded_family("mistral-nemo");
}


TEST_CASE("Tokenizer names what it cannot read", "[text][bad-input]") {
    SECTION("a component this version does not implement, and the file") {
        nlohmann::json json = read_json(fixture("gpt2/tokenizer.json"));
        json["pre_tokenizer"] = {{"type", "UnicodeScripts"}};
        CHECK_THROWS_WITH(Tokenizer::from_json(json.dump(), "scripts/tokenizer.json"),
                          Catch::Contains("scripts/tokenizer.json") && Catch::Contains("\"UnicodeScripts\"") &&
                              Catch::Contains("not implemented"));
    }
    SECTION("a precompiled charsmap that is not one, named") {
        nlohmann::json json = read_json(fixture("gpt2/tokenizer.json"));
        json["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "AA=="}};
        CHECK_THROWS_WITH(Tokenizer::from_json(json.dump(), "t5/tokenizer.json"),
                          Catch::Contains("t5/tokenizer.json") && Catch::Contains("Precompiled") &&
                              Catch::Contains("too few for its header"));
        json["normalizer"]["precompiled_charsmap"] = "not base64!";
        CHECK_THROWS_WITH(Tokenizer::from_json(json.dump(), "t5/tokenizer.json"), Catch::Contains("not base64"));
        // A trie of one unit whose offset points outside it: an error when text reaches it (here
        // at once, normalizing GPT-2's added token, which is marked normalized).
        json["normalizer"]["precompiled_charsmap"] = "BAAAAP///wA=";
        CHECK_THROWS_WITH(Tokenizer::from_json(json.dump(), "t5/tokenizer.json"), Catch::Contains("points outside itself"));
        json["added_tokens"][0]["normalized"] = false;
        const Tokenizer broken = Tokenizer::from_json(json.dump(), "t5/tokenizer.json");
        CHECK_THROWS_WITH(broken.encode("a"), Catch::Contains("points outside itself"));
    }
    SECTION("malformed JSON, with the file and the position") {
        CHECK_THROWS_WITH(Tokenizer::from_json("{\"model\": {\"type\": \"WordPiece\",", "broken.json"),
                          Catch::StartsWith("seqembed: broken.json: ") && Catch::Contains("column"));
        CHECK_THROWS_AS(Tokenizer::from_json("{\"model\": ", "broken.json"), seqembed::value_error);
    }
    SECTION("a file that cannot be opened") {
        CHECK_THROWS_AS(Tokenizer::from_file(fixture("no-such-tokenizer.json")), seqembed::file_error);
    }
    SECTION("invalid UTF-8, named by its byte offset unless replaced") {
        const Tokenizer tokenizer = Tokenizer::from_file(fixture("bert-base-uncased/tokenizer.json"));
        CHECK_THROWS_WITH(tokenizer.encode(std::string("ab\xff" "c")),
                          Catch::Contains("not valid UTF-8 at byte 2"));
        seqembed::text::EncodeOptions replace;
        replace.invalid_utf8 = seqembed::text::InvalidUtf8::replace;
        const Encoding encoding = tokenizer.encode(std::string("a\xff" "b"), replace);
        REQUIRE(encoding.size() == 3);  // [CLS] ab [SEP]: BERT drops U+FFFD
        CHECK(encoding.offsets[1] == std::pair<std::size_t, std::size_t>(0, 3));
    }
    SECTION("an id with no token") {
        const Tokenizer tokenizer = Tokenizer::from_file(fixture("bert-base-uncased/tokenizer.json"));
        CHECK_THROWS_AS(tokenizer.decode({101, 40000}), seqembed::index_error);
    }
}

TEST_CASE("load_tokenizer finds a model directory's tokenizer as AutoTokenizer does", "[text]") {
    namespace fs = std::filesystem;
    const fs::path work = fs::temp_directory_path() / "seqembed_text_load_tokenizer";
    fs::remove_all(work);
    fs::create_directories(work / "json");
    fs::create_directories(work / "vocab");
    fs::create_directories(work / "cased");
    fs::create_directories(work / "empty");
    fs::copy_file(fixture("bert-base-uncased/tokenizer.json"), work / "json" / "tokenizer.json");
    fs::copy_file(fixture("bert-base-uncased/vocab.txt"), work / "vocab" / "vocab.txt");
    fs::copy_file(fixture("bert-base-uncased/vocab.txt"), work / "cased" / "vocab.txt");
    std::ofstream(work / "cased" / "tokenizer_config.json") << R"({"do_lower_case": false})";

    const std::vector<seqembed::TokenId> hello = {101, 7592, 1010, 2088, 999, 102};
    CHECK(seqembed::text::load_tokenizer((work / "json").string()).encode("Hello, world!").ids == hello);
    CHECK(seqembed::text::load_tokenizer((work / "vocab").string()).encode("Hello, world!").ids == hello);
    // Cased: "Hello" is not in the uncased vocabulary, and the accent stays.
    const Encoding cased = seqembed::text::load_tokenizer((work / "cased").string()).encode("Hello café");
    CHECK(cased.ids.at(1) != 7592);
    CHECK(cased.tokens.at(1) != "hello");
    CHECK_THROWS_WITH(seqembed::text::load_tokenizer((work / "empty").string()),
                      Catch::Contains("holds no tokenizer.json, no vocab.txt"));
    // Vocabulary files of another class than BERT's or GPT-2's are refused, not misread.
    fs::create_directories(work / "mpnet");
    fs::copy_file(fixture("bert-base-uncased/vocab.txt"), work / "mpnet" / "vocab.txt");
    std::ofstream(work / "mpnet" / "tokenizer_config.json") << R"({"tokenizer_class": "MPNetTokenizer"})";
    CHECK_THROWS_WITH(seqembed::text::load_tokenizer((work / "mpnet").string()),
                      Catch::Contains("tokenizer_config.json says its vocab.txt are MPNetTokenizer's"));
    fs::create_directories(work / "roberta");
    fs::copy_file(fixture("gpt2/vocab.json"), work / "roberta" / "vocab.json");
    fs::copy_file(fixture("gpt2/merges.txt"), work / "roberta" / "merges.txt");
    std::ofstream(work / "roberta" / "config.json") << R"({"model_type": "roberta"})";
    CHECK_THROWS_WITH(seqembed::text::load_tokenizer((work / "roberta").string()),
                      Catch::Contains("config.json says its vocab.json and merges.txt are roberta's"));
    std::ofstream(work / "roberta" / "config.json") << R"({"model_type": "roberta", oops)";
    CHECK_THROWS_WITH(seqembed::text::load_tokenizer((work / "roberta").string()),
                      Catch::Contains("config.json: is not a JSON object"));
    std::ofstream(work / "roberta" / "config.json") << R"({"model_type": "gpt2"})";
    const std::vector<seqembed::TokenId> hello_world = {15496, 995};
    CHECK(seqembed::text::load_tokenizer((work / "roberta").string()).encode("Hello world").ids == hello_world);
    // GPT-Neo's and GPT-J's directories: AutoTokenizer's GPT2Tokenizer too.
    for (const char* type : {"gpt_neo", "gptj"}) {
        std::ofstream(work / "roberta" / "config.json") << R"({"model_type": ")" << type << R"("})";
        CHECK(seqembed::text::load_tokenizer((work / "roberta").string()).encode("Hello world").ids == hello_world);
    }
    // OPT's files: GPT2Tokenizer with add_bos_token (transformers' GPT2Converter: "bos $A"), and
    // GPT-2's add_prefix_space.
    std::ofstream(work / "roberta" / "config.json") << R"({"model_type": "opt"})";
    std::ofstream(work / "roberta" / "tokenizer_config.json")
        << R"({"tokenizer_class": "GPT2Tokenizer", "add_bos_token": true,
               "bos_token": {"__type": "AddedToken", "content": "<|endoftext|>"}})";
    const Tokenizer opt = seqembed::text::load_tokenizer((work / "roberta").string());
    CHECK(opt.encode("Hello world").ids == std::vector<seqembed::TokenId>{50256, 15496, 995});
    CHECK(opt.decode(opt.encode("Hello world").ids, true) == "Hello world");
    // A pair as transformers 5's GPT2Tokenizer: bos A bos:1 B:1.
    const Encoding pair = opt.encode("Hello", "world");
    CHECK(pair.ids == std::vector<seqembed::TokenId>{50256, 15496, 50256, 6894});
    CHECK(pair.type_ids == std::vector<seqembed::TokenId>{0, 0, 1, 1});
    std::ofstream(work / "roberta" / "tokenizer_config.json") << R"({"add_prefix_space": true})";
    CHECK(seqembed::text::load_tokenizer((work / "roberta").string()).encode("Hello world").ids ==
          std::vector<seqembed::TokenId>{18435, 995});
    // Without a bos_token, GPT2Tokenizer's default <|endoftext|>; a special_tokens_map.json's
    // tokens are special too.
    std::ofstream(work / "roberta" / "tokenizer_config.json") << R"({"add_bos_token": true})";
    CHECK(seqembed::text::load_tokenizer((work / "roberta").string()).encode("Hello world").ids ==
          std::vector<seqembed::TokenId>{50256, 15496, 995});
    std::ofstream(work / "roberta" / "special_tokens_map.json") << R"({"bos_token": "Hello"})";
    CHECK(seqembed::text::load_tokenizer((work / "roberta").string()).encode("Hello world").ids ==
          std::vector<seqembed::TokenId>{15496, 15496, 995});
    std::ofstream(work / "roberta" / "special_tokens_map.json") << R"({"bos_token": "</nothing>"})";
    CHECK_THROWS_WITH(seqembed::text::load_tokenizer((work / "roberta").string()),
                      Catch::Contains("vocab.json: has no bos token \"</nothing>\""));
    // BERT's strip_accents and tokenize_chinese_chars, as BertTokenizerFast reads them.
    std::ofstream(work / "vocab" / "tokenizer_config.json") << R"({"strip_accents": false})";
    const std::vector<std::string> stripped = seqembed::text::load_tokenizer((work / "json").string()).encode("café").tokens;
    CHECK(stripped.at(1) == "cafe");
    CHECK(seqembed::text::load_tokenizer((work / "vocab").string()).encode("café").tokens != stripped);
    std::ofstream(work / "vocab" / "tokenizer_config.json") << R"({"tokenize_chinese_chars": false})";
    // One word "一二" (its second character a continuation) instead of two.
    CHECK(seqembed::text::load_tokenizer((work / "vocab").string()).encode("一二").tokens.at(2) == "##二");
    CHECK(seqembed::text::load_tokenizer((work / "json").string()).encode("一二").tokens.at(2) == "二");
    CHECK(Tokenizer::from_bert_vocab(fixture("bert-base-uncased/vocab.txt"), {}).encode("Hello").tokens.at(1) ==
          "hello");
    std::ofstream(work / "cased" / "tokenizer_config.json") << R"({"do_lower_case": false, "tokenizer_class": "BertTokenizerFast"})";
    CHECK(seqembed::text::load_tokenizer((work / "cased").string()).encode("Hello").tokens.at(1) != "hello");
    fs::remove_all(work);
}

// The added tokens of a slow tokenizer's files, as transformers 4.57.6 builds its fast tokenizer from
// them: the ids are derived from its source (PreTrainedTokenizerFast.__init__ adds the declared
// tokens sorted by id, then the special tokens not among them, through tokenizers'
// AddedVocabulary::add_tokens: the vocabulary's id, else the next one from the vocabulary's size),
// the vocabulary ids from the fixtures' vocab.txt (line number - 1) and vocab.json.
namespace added_tokens {

namespace fs = std::filesystem;

// A directory of `work` with BERT's vocab.txt (or GPT-2's vocab.json and merges.txt) and the
// files given (name, text).
fs::path directory(const fs::path& work, const std::string& name, bool gpt2,
                   const std::vector<std::pair<std::string, std::string>>& files) {
    const fs::path path = work / name;
    fs::create_directories(path);
    if (gpt2) {
        fs::copy_file(fixture("gpt2/vocab.json"), path / "vocab.json");
        fs::copy_file(fixture("gpt2/merges.txt"), path / "merges.txt");
    } else {
        fs::copy_file(fixture("bert-base-uncased/vocab.txt"), path / "vocab.txt");
    }
    for (const auto& [file, text] : files) std::ofstream(path / file) << text;
    return path;
}

// added_tokens_decoder's entry for a token.
std::string entry(const std::string& id, const std::string& content, bool normalized, bool special,
                  bool lstrip = false, bool rstrip = false, bool single_word = false) {
    const auto b = [](bool value) { return value ? "true" : "false"; };
    return "\"" + id + "\": {\"content\": \"" + content + "\", \"lstrip\": " + b(lstrip) + ", \"normalized\": " +
           b(normalized) + ", \"rstrip\": " + b(rstrip) + ", \"single_word\": " + b(single_word) +
           ", \"special\": " + b(special) + "}";
}

// BERT's own added_tokens_decoder: its special tokens, not normalized.
std::string bert_specials() {
    return entry("0", "[PAD]", false, true) + ", " + entry("100", "[UNK]", false, true) + ", " +
           entry("101", "[CLS]", false, true) + ", " + entry("102", "[SEP]", false, true) + ", " +
           entry("103", "[MASK]", false, true);
}

using Offsets = std::vector<std::pair<std::size_t, std::size_t>>;

}  // namespace added_tokens

TEST_CASE("load_tokenizer adds a slow tokenizer's added tokens as transformers builds its fast tokenizer", "[text]") {
    using namespace added_tokens;
    const fs::path work = fs::temp_directory_path() / "seqembed_text_added_tokens";
    fs::remove_all(work);
    using Ids = std::vector<seqembed::TokenId>;
    using Tokens = std::vector<std::string>;

    SECTION("BERT's vocab.txt with added_tokens_decoder: added_tokens.json and special_tokens_map.json ignored") {
        // [NEW1] normalized (lowercased by BertNormalizer, so found in "[NEW1]" and "[new1]", and
        // written and decoded "[new1]"), [NEW2] special and not normalized (found as written);
        // [E2], a special token of tokenizer_config.json that it does not declare, takes the next id.
        const fs::path dir = directory(
            work, "decoder", false,
            {{"tokenizer_config.json", "{\"do_lower_case\": true, \"additional_special_tokens\": [\"[E2]\"], "
                                       "\"added_tokens_decoder\": {" + bert_specials() + ", " +
                                           entry("30522", "[NEW1]", true, false) + ", " +
                                           entry("30523", "[NEW2]", false, true) + "}}"},
             {"added_tokens.json", R"({"[X]": 30525})"},
             {"special_tokens_map.json", R"({"additional_special_tokens": ["[E3]"]})"}});
        const Tokenizer tokenizer = seqembed::text::load_tokenizer(dir.string());
        const std::string text = "Hello [NEW1] and [new1] but [NEW2] not [new2] [E2] [X]";
        const Encoding encoding = tokenizer.encode(text);
        CHECK(encoding.ids == Ids{101, 7592, 30522, 1998, 30522, 2021, 30523, 2025, 1031, 2047, 2475, 1033, 30524,
                                  1031, 1060, 1033, 102});
        CHECK(encoding.tokens == Tokens{"[CLS]", "hello", "[new1]", "and", "[new1]", "but", "[NEW2]", "not", "[",
                                        "new", "##2", "]", "[E2]", "[", "x", "]", "[SEP]"});
        CHECK(encoding.offsets == Offsets{{0, 0}, {0, 5}, {6, 12}, {13, 16}, {17, 23}, {24, 27}, {28, 34}, {35, 38},
                                          {39, 40}, {40, 43}, {43, 44}, {44, 45}, {46, 50}, {51, 52}, {52, 53},
                                          {53, 54}, {0, 0}});
        CHECK(tokenizer.decode(encoding.ids) ==
              "[CLS] hello [new1] and [new1] but [NEW2] not [ new2 ] [E2] [ x ] [SEP]");
        CHECK(tokenizer.decode(encoding.ids, true) == "hello [new1] and [new1] but not [ new2 ] [ x ]");
        CHECK(tokenizer.token_to_id("[NEW1]") == seqembed::TokenId{30522});
        CHECK(tokenizer.id_to_token(30523) == std::string("[NEW2]"));
        CHECK(!tokenizer.token_to_id("[X]"));
        CHECK(!tokenizer.token_to_id("[E3]"));
        CHECK(tokenizer.vocab_size() == 30525);
    }
    SECTION("BERT cased: a normalized added token is found only in its own case") {
        const fs::path dir =
            directory(work, "cased", false,
                      {{"tokenizer_config.json", "{\"do_lower_case\": false, \"added_tokens_decoder\": {" +
                                                     entry("30522", "[NEW1]", true, false) + "}}"}});
        const Encoding encoding = seqembed::text::load_tokenizer(dir.string()).encode("[NEW1] [new1]");
        CHECK(encoding.ids == Ids{101, 30522, 1031, 2047, 2487, 1033, 102});
        CHECK(encoding.tokens == Tokens{"[CLS]", "[NEW1]", "[", "new", "##1", "]", "[SEP]"});
    }
    SECTION("BERT's vocab.txt with the legacy added_tokens.json and special_tokens_map.json") {
        // [E1] is special_tokens_map.json's additional special token, so not normalized; [NEW1]
        // is normalized, not special.
        const fs::path dir =
            directory(work, "legacy", false,
                      {{"added_tokens.json", R"({"[NEW1]": 30522, "[E1]": 30523})"},
                       {"special_tokens_map.json",
                        R"({"mask_token": "[MASK]", "additional_special_tokens": ["[E1]"]})"}});
        const Tokenizer tokenizer = seqembed::text::load_tokenizer(dir.string());
        const Encoding encoding = tokenizer.encode("[NEW1] [E1] [e1]");
        CHECK(encoding.ids == Ids{101, 30522, 30523, 1031, 1041, 2487, 1033, 102});
        CHECK(encoding.tokens == Tokens{"[CLS]", "[new1]", "[E1]", "[", "e", "##1", "]", "[SEP]"});
        CHECK(encoding.offsets ==
              Offsets{{0, 0}, {0, 6}, {7, 11}, {12, 13}, {13, 14}, {14, 15}, {15, 16}, {0, 0}});
        CHECK(tokenizer.decode(encoding.ids, true) == "[new1] [ e1 ]");
        CHECK(tokenizer.decode({30523, 30522}) == "[E1] [new1]");
    }
    SECTION("GPT-2's vocab.json and merges.txt with added_tokens_decoder") {
        const fs::path dir = directory(
            work, "gpt2", true,
            {{"tokenizer_config.json", "{\"tokenizer_class\": \"GPT2Tokenizer\", \"pad_token\": \"<pad>\", "
                                       "\"added_tokens_decoder\": {" + entry("50256", "<|endoftext|>", true, true) +
                                           ", " + entry("50257", "<pad>", false, true) + ", " +
                                           entry("50258", "[NEW1]", true, false) + "}}"}});
        const Tokenizer tokenizer = seqembed::text::load_tokenizer(dir.string());
        const Encoding encoding = tokenizer.encode("Hello<pad> world[NEW1]!<|endoftext|>");
        CHECK(encoding.ids == Ids{15496, 50257, 995, 50258, 0, 50256});
        CHECK(encoding.tokens == Tokens{"Hello", "<pad>", "\xC4\xA0world", "[NEW1]", "!", "<|endoftext|>"});
        CHECK(encoding.offsets == Offsets{{0, 5}, {5, 10}, {10, 16}, {16, 22}, {22, 23}, {23, 36}});
        CHECK(tokenizer.decode(encoding.ids) == "Hello<pad> world[NEW1]!<|endoftext|>");
        CHECK(tokenizer.decode(encoding.ids, true) == "Hello world[NEW1]!");
    }
    SECTION("GPT-2's legacy added_tokens.json: special_tokens_map.json's pad token") {
        const fs::path dir = directory(work, "gpt2_legacy", true,
                                       {{"added_tokens.json", R"({"<pad>": 50257})"},
                                        {"special_tokens_map.json", R"({"pad_token": "<pad>"})"}});
        const Tokenizer tokenizer = seqembed::text::load_tokenizer(dir.string());
        CHECK(tokenizer.encode("a<pad>").ids == Ids{64, 50257});
        CHECK(tokenizer.decode({64, 50257, 50256}, true) == "a");
    }
    SECTION("lstrip and rstrip take the spaces beside a token, single_word skips one inside a word") {
        const fs::path dir = directory(
            work, "strip", false,
            {{"tokenizer_config.json", "{\"added_tokens_decoder\": {" + bert_specials() + ", " +
                                           entry("30522", "<ent>", false, false, true, true) + ", " +
                                           entry("30523", "[sw]", false, false, false, false, true) + "}}"}});
        const Tokenizer tokenizer = seqembed::text::load_tokenizer(dir.string());
        const Encoding encoding = tokenizer.encode("a <ent> b a[sw] [sw] c");
        CHECK(encoding.ids == Ids{101, 1037, 30522, 1038, 1037, 1031, 25430, 1033, 30523, 1039, 102});
        CHECK(encoding.tokens == Tokens{"[CLS]", "a", " <ent> ", "b", "a", "[", "sw", "]", "[sw]", "c", "[SEP]"});
        CHECK(encoding.offsets == Offsets{{0, 0}, {0, 1}, {1, 8}, {8, 9}, {10, 11}, {11, 12}, {12, 14}, {14, 15},
                                          {16, 20}, {21, 22}, {0, 0}});
        // decode writes an added token's content, without the spaces it took.
        CHECK(tokenizer.decode(encoding.ids, true) == "a <ent> b a [ sw ] [sw] c");
    }
    SECTION("an added token the vocabulary has keeps the vocabulary's id, with the declared settings") {
        const fs::path dir =
            directory(work, "in_vocab", false,
                      {{"tokenizer_config.json", "{\"added_tokens_decoder\": {" +
                                                     entry("7592", "hello", false, false, false, false, true) + "}}"}});
        const Encoding encoding = seqembed::text::load_tokenizer(dir.string()).encode("hello helloworld Hello");
        CHECK(encoding.ids == Ids{101, 7592, 7592, 11108, 7592, 102});
        CHECK(encoding.tokens == Tokens{"[CLS]", "hello", "hello", "##world", "hello", "[SEP]"});
        CHECK(encoding.offsets == Offsets{{0, 0}, {0, 5}, {6, 11}, {11, 16}, {17, 22}, {0, 0}});
    }
    SECTION("a declared id transformers would not give is refused, naming the file, the token and both ids") {
        const auto refused = [&](const std::string& name, bool gpt2,
                                 const std::vector<std::pair<std::string, std::string>>& files) {
            return seqembed::text::load_tokenizer(directory(work, name, gpt2, files).string());
        };
        // A gap: [NEW2] comes next after [NEW1], whatever its declared id.
        CHECK_THROWS_WITH(refused("gap", false,
                                  {{"tokenizer_config.json", "{\"added_tokens_decoder\": {" +
                                                                 entry("30522", "[NEW1]", true, false) + ", " +
                                                                 entry("30524", "[NEW2]", true, false) + "}}"}}),
                          Catch::Contains("tokenizer_config.json: \"added_tokens_decoder\" entry \"30524\" "
                                          "declares \"[NEW2]\" as id 30524, but transformers' fast tokenizer gives "
                                          "it id 30523"));
        // An id inside the vocabulary for a token it does not have.
        CHECK_THROWS_WITH(refused("inside", false,
                                  {{"tokenizer_config.json",
                                    "{\"added_tokens_decoder\": {" + entry("5", "[NEW1]", true, false) + "}}"}}),
                          Catch::Contains("declares \"[NEW1]\" as id 5, but transformers' fast tokenizer gives it id "
                                          "30522"));
        // A token the vocabulary has under another id.
        CHECK_THROWS_WITH(refused("elsewhere", false,
                                  {{"tokenizer_config.json",
                                    "{\"added_tokens_decoder\": {" + entry("30522", "hello", true, false) + "}}"}}),
                          Catch::Contains("declares \"hello\" as id 30522, but transformers' fast tokenizer gives it "
                                          "id 7592"));
        CHECK_THROWS_WITH(refused("gpt2_gap", true, {{"added_tokens.json", R"({"<pad>": 50257, "[A]": 50259})"}}),
                          Catch::Contains("added_tokens.json: entry \"[A]\" declares \"[A]\" as id 50259, but "
                                          "transformers' fast tokenizer gives it id 50258"));
    }
    fs::remove_all(work);
}

TEST_CASE("load_tokenizer names a malformed added-token file and its entry", "[text][bad-input]") {
    using namespace added_tokens;
    const fs::path work = fs::temp_directory_path() / "seqembed_text_added_tokens_bad";
    fs::remove_all(work);
    int count = 0;
    const auto fails = [&](const std::string& file, const std::string& text, const std::string& message) {
        const fs::path dir = directory(work, std::to_string(count++), false, {{file, text}});
        INFO(file << ": " << text);
        CHECK_THROWS_AS(seqembed::text::load_tokenizer(dir.string()), seqembed::value_error);
        CHECK_THROWS_WITH(seqembed::text::load_tokenizer(dir.string()), Catch::Contains(file + ": " + message));
    };
    fails("tokenizer_config.json", R"({"added_tokens_decoder": ["[NEW1]"]})",
          R"("added_tokens_decoder" is ["[NEW1]"], not an object)");
    fails("tokenizer_config.json", R"({"added_tokens_decoder": {"one": {"content": "[NEW1]"}}})",
          R"("added_tokens_decoder" entry "one": its id is not an integer)");
    fails("tokenizer_config.json", R"({"added_tokens_decoder": {"30522.0": {"content": "[NEW1]"}}})",
          R"("added_tokens_decoder" entry "30522.0": its id is not an integer)");
    fails("tokenizer_config.json", R"({"added_tokens_decoder": {"-1": {"content": "[NEW1]"}}})",
          R"("added_tokens_decoder" entry "-1": its id is negative)");
    fails("tokenizer_config.json", R"({"added_tokens_decoder": {"30522": "[NEW1]"}})",
          R"("added_tokens_decoder" entry "30522" is not an object)");
    fails("tokenizer_config.json", R"({"added_tokens_decoder": {"30522": {"content": 7}}})",
          R"("added_tokens_decoder" entry "30522" has no string "content")");
    fails("tokenizer_config.json", R"({"added_tokens_decoder": {"30522": {"content": "[NEW1]", "lstrip": "yes"}}})",
          R"("added_tokens_decoder" entry "30522"'s "lstrip" is "yes", not true or false)");
    fails("added_tokens.json", R"(["[NEW1]"])", "is not a JSON object");
    fails("added_tokens.json", R"({"[NEW1]": "30522"})", R"(entry "[NEW1]": its id "30522" is not an integer)");
    fails("added_tokens.json", R"({"[NEW1]": 30522.5})", R"(entry "[NEW1]": its id 30522.5 is not an integer)");
    fails("added_tokens.json", R"({"[NEW1]": -3})", R"(entry "[NEW1]": its id -3 is negative)");
    fails("special_tokens_map.json", R"({"additional_special_tokens": "[E1]"})",
          R"("additional_special_tokens" is "[E1]", not a list)");
    fails("special_tokens_map.json", R"({"pad_token": 0})", R"("pad_token" is 0, not a token)");
    fs::remove_all(work);
}

TEST_CASE("decode cleans up spaces as transformers does when tokenizer_config.json asks, but for BPE models",
          "[text]") {
    CHECK(seqembed::text::clean_up_tokenization("i ' m , you ' re . don ' t ? it ' s ! ' quoted ' we ' ve  . do n't") ==
          "i'm, you're. don't? it's!'quoted'we've . don't");
    namespace fs = std::filesystem;
    const fs::path work = fs::temp_directory_path() / "seqembed_text_clean_up";
    fs::remove_all(work);
    for (const char* name : {"bert", "bert_plain", "gpt2", "gpt2_even"}) fs::create_directories(work / name);
    for (const char* name : {"bert", "bert_plain"})
        fs::copy_file(fixture("bert-base-uncased/tokenizer.json"), work / name / "tokenizer.json");
    for (const char* name : {"gpt2", "gpt2_even"})
        fs::copy_file(fixture("gpt2/tokenizer.json"), work / name / "tokenizer.json");
    std::ofstream(work / "bert" / "tokenizer_config.json") << R"({"clean_up_tokenization_spaces": true})";
    std::ofstream(work / "gpt2" / "tokenizer_config.json") << R"({"clean_up_tokenization_spaces": true})";
    std::ofstream(work / "gpt2_even" / "tokenizer_config.json")
        << R"({"clean_up_tokenization_spaces": true,
               "clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output": true})";
    const Tokenizer bert = seqembed::text::load_tokenizer((work / "bert").string());
    const Tokenizer plain = seqembed::text::load_tokenizer((work / "bert_plain").string());
    CHECK(bert.clean_up_tokenization_spaces());
    CHECK(!plain.clean_up_tokenization_spaces());
    const std::vector<seqembed::TokenId> ids = bert.encode("I'm here, don't go.").ids;
    CHECK(plain.decode(ids, true) == "i ' m here, don ' t go.");  // tokenizers' decode
    CHECK(bert.decode(ids, true) == "i'm here, don't go.");       // transformers' decode
    CHECK(!seqembed::text::load_tokenizer((work / "gpt2").string()).clean_up_tokenization_spaces());
    CHECK(seqembed::text::load_tokenizer((work / "gpt2_even").string()).clean_up_tokenization_spaces());
    fs::remove_all(work);
}

TEST_CASE("A tokenizer.json's truncation and padding apply as tokenizers applies them, and load_tokenizer turns them off",
          "[text]") {
    // As sentence-transformers' files set them. Expected: npm tokenizers 0.23.2 on the same file.
    nlohmann::json json = read_json(fixture("bert-base-uncased/tokenizer.json"));
    json["truncation"] = {{"direction", "Right"}, {"max_length", 5}, {"strategy", "LongestFirst"}, {"stride", 0}};
    json["padding"] = {{"strategy", {{"Fixed", 8}}}, {"direction", "Left"}, {"pad_to_multiple_of", nullptr},
                       {"pad_id", 0},   {"pad_type_id", 1},          {"pad_token", "[PAD]"}};
    const Tokenizer tokenizer = Tokenizer::from_json(json.dump(), "minilm/tokenizer.json");
    const Encoding encoding = tokenizer.encode("one two three four five six");
    CHECK(encoding.ids == std::vector<seqembed::TokenId>{0, 0, 0, 101, 2028, 2048, 2093, 102});
    CHECK(encoding.type_ids == std::vector<seqembed::TokenId>{1, 1, 1, 0, 0, 0, 0, 0});
    CHECK(encoding.attention_mask == std::vector<std::uint8_t>{0, 0, 0, 1, 1, 1, 1, 1});
    REQUIRE(tokenizer.truncation().has_value());
    CHECK(tokenizer.truncation()->max_length == 5);
    REQUIRE(tokenizer.padding().has_value());
    CHECK(tokenizer.padding()->side == seqembed::PaddingSide::left);
    CHECK(tokenizer.padding()->length == std::optional<std::size_t>(8));

    namespace fs = std::filesystem;
    const fs::path work = fs::temp_directory_path() / "seqembed_text_truncation";
    fs::remove_all(work);
    fs::create_directories(work);
    std::ofstream(work / "tokenizer.json") << json.dump();
    const Tokenizer loaded = seqembed::text::load_tokenizer(work.string());
    CHECK(!loaded.truncation());
    CHECK(!loaded.padding());
    CHECK(loaded.encode("one two three four five six").size() == 8);  // [CLS], six words, [SEP]
    fs::remove_all(work);

    json["truncation"]["strategy"] = "Shortest";
    CHECK_THROWS_WITH(Tokenizer::from_json(json.dump(), "minilm/tokenizer.json"),
                      Catch::Contains("minilm/tokenizer.json") && Catch::Contains("\"Shortest\""));
    json["truncation"]["strategy"] = "OnlyFirst";
    json["padding"]["strategy"] = "Longest";
    CHECK_THROWS_WITH(Tokenizer::from_json(json.dump(), "minilm/tokenizer.json"), Catch::Contains("\"Longest\""));
}

TEST_CASE("Regular expressions read the space and word classes as Hugging Face's engines do", "[text]") {
    // Split patterns run on Oniguruma there, the Whitespace pre-tokenizer on Rust's regex crate:
    // their \s leaves out U+180E, their \w takes marks and connector punctuation, and Oniguruma's
    // \w outside a class takes Latin-1's superscripts. Expected: npm tokenizers 0.23.2, BERT's
    // vocabulary without normalizer or post-processor (its character offsets made byte offsets).
    struct Expected {
        const char* setup;
        const char* text;
        std::vector<std::string> tokens;
        std::vector<std::pair<std::size_t, std::size_t>> offsets;
    };
    const std::vector<Expected> cases = {
        {"whitespace", "cafe\u0301 x", {"[UNK]", "x"}, {{0, 6}, {7, 8}}},
        {"whitespace", "x\u00b2 y", {"x", "\u00b2", "y"}, {{0, 1}, {1, 3}, {4, 5}}},
        {"whitespace", "\u200dab", {"[UNK]"}, {{0, 5}}},
        {"whitespace", "x\u0301y z", {"[UNK]", "z"}, {{0, 4}, {5, 6}}},
        {"whitespace", "a\u180eb c", {"a", "[UNK]", "b", "c"}, {{0, 1}, {1, 4}, {4, 5}, {6, 7}}},
        {"whitespace", "a\u203fb a\uff3fb", {"a", "##\u203f", "##b", "[UNK]"}, {{0, 1}, {1, 4}, {4, 5}, {6, 11}}},
        {"split_w", "cafe\u0301 x", {"[UNK]", "[UNK]", "x"}, {{0, 6}, {6, 7}, {7, 8}}},
        {"split_w", "x\u00b2 y", {"x", "##\u00b2", "[UNK]", "y"}, {{0, 1}, {1, 3}, {3, 4}, {4, 5}}},
        {"split_w", "\u200dab", {"[UNK]", "ab"}, {{0, 3}, {3, 5}}},
        {"split_w", "x\u0301y z", {"[UNK]", "[UNK]", "z"}, {{0, 4}, {4, 5}, {5, 6}}},
        {"split_w", "a\u180eb c", {"a", "[UNK]", "b", "[UNK]", "c"}, {{0, 1}, {1, 4}, {4, 5}, {5, 6}, {6, 7}}},
        {"split_w", "a\u203fb a\uff3fb", {"a", "##\u203f", "##b", "[UNK]", "[UNK]"}, {{0, 1}, {1, 4}, {4, 5}, {5, 6}, {6, 11}}},
        {"split_s", "cafe\u0301 x", {"[UNK]", "x"}, {{0, 6}, {7, 8}}},
        {"split_s", "x\u00b2 y", {"x", "##\u00b2", "y"}, {{0, 1}, {1, 3}, {4, 5}}},
        {"split_s", "\u200dab", {"[UNK]"}, {{0, 5}}},
        {"split_s", "x\u0301y z", {"[UNK]", "z"}, {{0, 4}, {5, 6}}},
        {"split_s", "a\u180eb c", {"[UNK]", "c"}, {{0, 5}, {6, 7}}},
        {"split_s", "a\u203fb a\uff3fb", {"a", "##\u203f", "##b", "[UNK]"}, {{0, 1}, {1, 4}, {4, 5}, {6, 11}}},
        {"split_cls", "cafe\u0301 x", {"[UNK]"}, {{0, 8}}},
        {"split_cls", "x\u00b2 y", {"x", "\u00b2", "[UNK]"}, {{0, 1}, {1, 3}, {3, 5}}},
        {"split_cls", "\u200dab", {"[UNK]", "ab"}, {{0, 3}, {3, 5}}},
        {"split_cls", "x\u0301y z", {"[UNK]"}, {{0, 6}}},
        {"split_cls", "a\u180eb c", {"a", "[UNK]", "[UNK]"}, {{0, 1}, {1, 4}, {4, 7}}},
        {"split_cls", "a\u203fb a\uff3fb", {"[UNK]"}, {{0, 11}}},
    };
    const std::map<std::string, nlohmann::json> setups = {
        {"whitespace", {{"type", "Whitespace"}}},
        {"split_w", {{"type", "Split"}, {"pattern", {{"Regex", "\\w+"}}}, {"behavior", "Isolated"}, {"invert", false}}},
        {"split_s", {{"type", "Split"}, {"pattern", {{"Regex", "\\s+"}}}, {"behavior", "Removed"}, {"invert", false}}},
        {"split_cls",
         {{"type", "Split"}, {"pattern", {{"Regex", "[^\\s\\w]+"}}}, {"behavior", "Isolated"}, {"invert", false}}}};
    nlohmann::json json = read_json(fixture("bert-base-uncased/tokenizer.json"));
    json["normalizer"] = nullptr;
    json["post_processor"] = nullptr;
    for (const auto& [name, pre_tokenizer] : setups) {
        json["pre_tokenizer"] = pre_tokenizer;
        const Tokenizer tokenizer = Tokenizer::from_json(json.dump(), name);
        for (const Expected& expected : cases) {
            if (name != expected.setup) continue;
            INFO(name << ": " << expected.text);
            const Encoding encoding = tokenizer.encode(expected.text);
            CHECK(encoding.tokens == expected.tokens);
            CHECK(encoding.offsets == expected.offsets);
        }
    }
}

TEST_CASE("Tokenizer follows Hugging Face at the edges of its models and regular expressions", "[text]") {
    SECTION("an empty match of a regular expression where a match ended is skipped, as Oniguruma's find_iter") {
        // Replace b* by c in "abx": matches at [0,0), [1,2) and [3,3); the empty one at 2 is
        // skipped, so the text is "cacxc", not "caccxc".
        const std::string json = R"({"normalizer": {"type": "Replace", "pattern": {"Regex": "b*"}, "content": "c"},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": 100, "vocab": {"[UNK]": 0, "cacxc": 1, "caccxc": 2}}})";
        CHECK(Tokenizer::from_json(json, "replace.json").encode("abx").ids == std::vector<seqembed::TokenId>{1});
        const std::string decoder = R"({"decoder": {"type": "Replace", "pattern": {"Regex": "a*"}, "content": "-"},
            "model": {"type": "BPE", "vocab": {"a": 0, "y": 1, "▁a": 2, "a▁b": 3}, "merges": []}})";
        CHECK(Tokenizer::from_json(decoder, "decoder.json").decode({1, 2, 3}) == "-y--\u2581--\u2581-b-");
    }
    SECTION("a token listed twice takes its last id") {
        const std::string json = R"({"pre_tokenizer": {"type": "WhitespaceSplit"},
            "model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0], ["b", -1.0], ["ab", -2.0],
                                                                 ["a", -0.5]]}})";
        CHECK(Tokenizer::from_json(json, "unigram.json").encode("a ab").ids == std::vector<seqembed::TokenId>{4, 4, 2});
        namespace fs = std::filesystem;
        const fs::path vocab = fs::temp_directory_path() / "seqembed_text_duplicate_vocab.txt";
        std::ofstream(vocab) << "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\nhello\n##s\n";
        CHECK(Tokenizer::from_bert_vocab(vocab.string()).encode("hello worlds").ids ==
              std::vector<seqembed::TokenId>{2, 7, 6, 8, 3});
        fs::remove(vocab);
    }
    SECTION("merges.txt's '#version' header in a merges list is skipped") {
        const std::string json = R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2},
                                              "merges": ["#version: 0.2", "a b"]}})";
        CHECK(Tokenizer::from_json(json, "version.json").encode("ab").ids == std::vector<seqembed::TokenId>{2});
    }
    SECTION("a Unigram model without unk_id refuses unknown text even with byte fallback") {
        const std::string json = R"({"model": {"type": "Unigram", "unk_id": null, "byte_fallback": true,
            "vocab": [["<unk>", 0.0], ["a", -1.0], ["<0x78>", -1.0]]}})";
        CHECK_THROWS_WITH(Tokenizer::from_json(json, "unigram.json").encode("ax"), Catch::Contains("no unk_id"));
        // Even where the best path in the end needs no unknown piece: the lattice refuses at once.
        const std::string covered = R"({"model": {"type": "Unigram", "unk_id": null,
            "vocab": [["ab", -1.0], ["b", -1.0]]}})";
        CHECK_THROWS_WITH(Tokenizer::from_json(covered, "unigram.json").encode("ab"), Catch::Contains("no unk_id"));
    }
}

TEST_CASE("encode_batch gives the pipeline its ids, padding and token types", "[text]") {
    const Tokenizer tokenizer = Tokenizer::from_file(fixture("bert-base-uncased/tokenizer.json"));
    const std::vector<std::string> texts = {"Hello, world!", "A longer second sentence, with more words.", ""};
    for (const seqembed::PaddingSide side : {seqembed::PaddingSide::right, seqembed::PaddingSide::left}) {
        seqembed::BatchOptions options;
        options.side = side;
        const seqembed::EncodedBatch encoded = tokenizer.encode_batch(texts, options);
        REQUIRE(encoded.ids.rows() == 3);
        CHECK(encoded.pad_id == 0);  // [PAD]
        CHECK(encoded.token_types.rows() == 3);
        CHECK(encoded.token_types.cols() == encoded.ids.cols());
        for (std::size_t b = 0; b < texts.size(); ++b) {
            const Encoding one = tokenizer.encode(texts[b]);
            const auto length = static_cast<seqembed::Index>(one.size());
            const seqembed::Index first = side == seqembed::PaddingSide::right ? 0 : encoded.ids.cols() - length;
            CHECK(encoded.lengths[b] == length);
            CHECK(encoded.offsets[b] == one.offsets);
            for (seqembed::Index t = 0; t < encoded.ids.cols(); ++t) {
                const bool real = t >= first && t < first + length;
                CHECK(encoded.ids(static_cast<seqembed::Index>(b), t) ==
                      (real ? one.ids[static_cast<std::size_t>(t - first)] : 0));
                CHECK(encoded.token_types(static_cast<seqembed::Index>(b), t) == 0);
            }
        }
        // The forward reads it: padded places give zero rows, real ones the table's rows.
        seqembed::RowMatrix<float> table(30522, 4);
        for (seqembed::Index k = 0; k < table.size(); ++k) table.data()[k] = static_cast<float>(k % 97) - 48.0f;
        seqembed::TokenEmbeddingOptions unscaled;
        unscaled.scale = seqembed::EmbeddingScale::none();
        seqembed::InputPipeline<float, seqembed::NoPositions<float>> pipeline(
            seqembed::TokenEmbedding<float>::from_weights(table, unscaled), seqembed::NoPositions<float>(4));
        const seqembed::RowMatrix<float> x = pipeline.forward(encoded.batch());
        const seqembed::Index seq = encoded.ids.cols();
        for (seqembed::Index b = 0; b < 3; ++b)
            for (seqembed::Index t = 0; t < seq; ++t) {
                const bool real = side == seqembed::PaddingSide::right ? t < encoded.lengths[static_cast<std::size_t>(b)]
                                                                       : t >= seq - encoded.lengths[static_cast<std::size_t>(b)];
                const seqembed::RowMatrix<float> expected =
                    real ? seqembed::RowMatrix<float>(table.row(encoded.ids(b, t))) : seqembed::RowMatrix<float>::Zero(1, 4);
                CHECK(x.row(b * seq + t) == expected);
            }
    }
    seqembed::BatchOptions pad_with;
    pad_with.pad_id = 7;
    CHECK(tokenizer.encode_batch({"a", "a b c"}, pad_with).ids(0, 3) == 7);
}

TEST_CASE("Tokenizer follows Hugging Face's added-token and truncation rules at their edges", "[text]") {
    // BERT's tokenizer.json with the added tokens of the fixture: normalized ones (matched and
    // decoded in their normalized form), a single_word one, lstrip and rstrip.
    const nlohmann::json expected = read_json(fixture("expected/bert-edge.json"));
    nlohmann::json json = read_json(fixture(expected["base"].get<std::string>()));
    json["added_tokens"] = expected["added_tokens"];
    Tokenizer tokenizer = Tokenizer::from_json(json.dump(), "bert-edge");
    check_cases(tokenizer, expected);
    for (const nlohmann::json& item : expected["truncation"]) {
        seqembed::text::Truncation truncation;
        truncation.max_length = item["max_length"].get<std::size_t>();
        truncation.strategy = item["strategy"].get<std::string>() == "OnlyFirst"
                                  ? seqembed::text::TruncationStrategy::only_first
                                  : seqembed::text::TruncationStrategy::longest_first;
        tokenizer.set_truncation(truncation);
        INFO("max_length " << truncation.max_length << ", " << item["strategy"].get<std::string>());
        CHECK(tokenizer.encode(item["text"].get<std::string>()).ids ==
              item["ids"].get<std::vector<seqembed::TokenId>>());
    }
}

TEST_CASE("encode_batch and encode_each give the same encodings on any number of threads", "[text]") {
    const nlohmann::json expected = read_json(fixture("expected/gpt2.json"));
    Tokenizer tokenizer = Tokenizer::from_file(fixture("gpt2/tokenizer.json"));
    std::vector<std::string> texts;
    for (int round = 0; round < 5; ++round)
        for (const nlohmann::json& item : expected["cases"])
            if (item.contains("text")) texts.push_back(item["text"].get<std::string>());
    std::vector<seqembed::text::TextPair> pairs;
    for (std::size_t k = 0; k + 1 < texts.size(); k += 2) pairs.emplace_back(texts[k], texts[k + 1]);
    seqembed::BatchOptions batch;
    batch.pad_id = 50256;
    seqembed::text::EncodeOptions serial;
    const seqembed::EncodedBatch one = tokenizer.encode_batch(texts, batch, serial);
    const seqembed::EncodedBatch one_pairs = tokenizer.encode_pairs(pairs, batch, serial);
    for (std::size_t k = 0; k < texts.size(); ++k) CHECK(one.offsets[k] == tokenizer.encode(texts[k]).offsets);
    for (std::size_t k = 0; k < pairs.size(); ++k) {
        const Encoding pair = tokenizer.encode(pairs[k].first, pairs[k].second);
        CHECK(one_pairs.lengths[k] == static_cast<seqembed::Index>(pair.size()));
        for (std::size_t t = 0; t < pair.size(); ++t) {
            CHECK(one_pairs.ids(static_cast<seqembed::Index>(k), static_cast<seqembed::Index>(t)) == pair.ids[t]);
            CHECK(one_pairs.token_types(static_cast<seqembed::Index>(k), static_cast<seqembed::Index>(t)) ==
                  pair.type_ids[t]);
        }
    }
    for (const std::size_t threads : {std::size_t{2}, std::size_t{3}, std::size_t{0}}) {
        INFO("threads " << threads);
        seqembed::text::EncodeOptions parallel;
        parallel.threads = threads;
        const seqembed::EncodedBatch many = tokenizer.encode_batch(texts, batch, parallel);
        CHECK(many.ids == one.ids);
        CHECK(many.lengths == one.lengths);
        CHECK(many.offsets == one.offsets);
        CHECK(tokenizer.encode_pairs(pairs, batch, parallel).token_types == one_pairs.token_types);
        const std::vector<Encoding> each = tokenizer.encode_each(texts, parallel);
        REQUIRE(each.size() == texts.size());
        for (std::size_t k = 0; k < texts.size(); k += 7) CHECK(each[k].ids == tokenizer.encode(texts[k]).ids);
        const std::vector<Encoding> each_pair = tokenizer.encode_each_pair(pairs, parallel);
        REQUIRE(each_pair.size() == pairs.size());
        for (std::size_t k = 0; k < pairs.size(); k += 5)
            CHECK(each_pair[k].type_ids == tokenizer.encode(pairs[k].first, pairs[k].second).type_ids);
        // The error is the first failing text's, as on one thread.
        std::vector<std::string> broken = texts;
        broken[41] = "bad \xff";
        broken[97] = "worse \xfe";
        CHECK_THROWS_WITH(tokenizer.encode_batch(broken, batch, parallel), Catch::Contains("text 41 of the batch"));
    }
}
