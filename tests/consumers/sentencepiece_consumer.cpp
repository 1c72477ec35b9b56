// A consumer of seqembed::sentencepiece: compiles against SentencePieceTokenizer, links
// SentencePiece's library through the target, and asks SentencePiece to read bytes that are no
// model. Exit status 0 when that fails with seqembed's error carrying SentencePiece's message.
#include <seqembed/text/sentencepiece.hpp>

#include <cstdio>
#include <string>

int main() {
    try {
        (void)seqembed::SentencePieceTokenizer::from_bytes("not a model");
    } catch (const seqembed::error& e) {
        const std::string message = e.what();
        const bool ok = message.find("cannot load a SentencePiece model from 11 bytes") != std::string::npos;
        std::printf("seqembed::sentencepiece consumer: %s (%s)\n", ok ? "OK" : "unexpected message", e.what());
        return ok ? 0 : 1;
    }
    std::printf("seqembed::sentencepiece consumer: bytes that are no model were accepted\n");
    return 1;
}
