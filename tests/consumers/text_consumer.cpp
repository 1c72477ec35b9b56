// A consumer of seqembed::text: compiles against Tokenizer, links utf8proc and PCRE2 through the target,
// builds a small WordPiece tokenizer from its tokenizer.json text and encodes a sentence that
// needs lowercasing, accent stripping and a continuation piece. Exit status 0 when the ids are
// those Hugging Face's tokenizer gives for this vocabulary.
#include <seqembed/text/tokenizer.hpp>

#include <cstdio>
#include <vector>

int main() {
    const char* json = R"({"version": "1.0", "added_tokens": [
        {"id": 0, "content": "[CLS]", "special": true}, {"id": 1, "content": "[SEP]", "special": true}],
      "normalizer": {"type": "BertNormalizer", "lowercase": true},
      "pre_tokenizer": {"type": "BertPreTokenizer"},
      "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 1], "cls": ["[CLS]", 0]},
      "decoder": {"type": "WordPiece"},
      "model": {"type": "WordPiece", "unk_token": "[UNK]",
                "vocab": {"[CLS]": 0, "[SEP]": 1, "[UNK]": 2, "cafe": 3, "token": 4, "##s": 5, "!": 6}}})";
    const auto tokenizer = seqembed::text::Tokenizer::from_json(json, "consumer");
    const std::vector<seqembed::TokenId> ids = tokenizer.encode("CAFÉ Tokens!").ids;
    const bool ok = ids == std::vector<seqembed::TokenId>{0, 3, 4, 5, 6, 1} && tokenizer.decode(ids, true) == "cafe tokens!";
    std::printf("seqembed::text consumer: %s\n", ok ? "OK" : "unexpected ids");
    return ok ? 0 : 1;
}
