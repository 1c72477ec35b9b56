/// @file text/sentencepiece.hpp
/// @brief SentencePieceTokenizer: text to ids with a trained SentencePiece model (T5, ALBERT,
///        XLNet, Llama, Marian and most multilingual models ship one), as an EncodedBatch.
///
/// Optional: this header needs SentencePiece (Debian: libsentencepiece-dev) and is never
/// included by seqembed.hpp. With CMake, link the target seqembed::sentencepiece, which exists
/// when SentencePiece was found (option SEQEMBED_SENTENCEPIECE: AUTO, ON or OFF).
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#if defined(__has_include)
#if !__has_include(<sentencepiece_processor.h>)
#error "seqembed/text/sentencepiece.hpp needs SentencePiece's <sentencepiece_processor.h> (Debian: libsentencepiece-dev); with CMake, link seqembed::sentencepiece"
// The compiler would go on to report every SentencePiece name below; a missing file stops it here.
#include <seqembed_stops_here_see_the_error_above>
#endif
#endif

#include <sentencepiece_processor.h>

#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "encoded_batch.hpp"
#include "../error.hpp"
#include "../types.hpp"

namespace seqembed {

/// @brief What SentencePieceTokenizer adds around every encoded text.
struct SentencePieceOptions {
    /// @brief Put the model's beginning-of-sentence id (`<s>`) before each text's ids.
    bool add_bos = false;
    /// @brief Put the model's end-of-sentence id (`</s>`) after each text's ids.
    bool add_eos = false;
};

/// @brief A SentencePiece model (unigram or BPE, as trained by spm_train or
///        SentencePieceTrainer) as a tokenizer: text to ids, ids to text, batches padded for
///        InputPipeline::forward.
///
/// The ids are those of sentencepiece::SentencePieceProcessor::Encode on the same model, with
/// bos and eos added when the options ask. Copies share one immutable processor, and the const
/// calls only read it.
/// @code
/// #include <seqembed/text/sentencepiece.hpp>   // CMake: target_link_libraries(app PRIVATE seqembed::sentencepiece)
/// seqembed::SentencePieceTokenizer tokenizer("spm.model");
/// std::vector<seqembed::TokenId> ids = tokenizer.encode("Hello world.");
/// auto batch = tokenizer.encode_batch({"Hello world.", "A longer second sentence."});
/// auto x = pipeline.forward(batch.ids, batch.padding());
/// @endcode
class SentencePieceTokenizer {
public:
    /// @brief Loads a model file (the .model that training writes).
    /// @param model_path the file.
    /// @param options bos and eos around each text.
    /// @throws error naming the file with SentencePiece's own message when it cannot be loaded;
    ///         value_error when the options ask for a bos or eos the model does not have.
    explicit SentencePieceTokenizer(const std::string& model_path, SentencePieceOptions options = {})
        : m_options(options) {
        auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
        const sentencepiece::util::Status status = processor->Load(model_path);
        if (!status.ok())
            detail::fail<error>("cannot load the SentencePiece model '", model_path, "': ", status.ToString());
        m_processor = std::move(processor);
        m_where = "the SentencePiece model '" + model_path + "'";
        check_options();
    }

    /// @brief Loads a model from its bytes (a serialized ModelProto, as a .model file holds or a
    ///        checkpoint embeds).
    /// @param model_bytes the bytes.
    /// @param options bos and eos around each text.
    /// @return the tokenizer.
    /// @throws error with SentencePiece's message when the bytes are not a model; value_error as
    ///         the constructor.
    static SentencePieceTokenizer from_bytes(std::string_view model_bytes, SentencePieceOptions options = {}) {
        auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
        const sentencepiece::util::Status status = processor->LoadFromSerializedProto(model_bytes);
        if (!status.ok())
            detail::fail<error>("cannot load a SentencePiece model from ", model_bytes.size(),
                                " bytes: ", status.ToString());
        return SentencePieceTokenizer(std::move(processor), options);
    }

    /// @brief The number of pieces, the special ones included.
    /// @return the vocabulary size: the rows an embedding table for the model needs.
    Index size() const { return static_cast<Index>(m_processor->GetPieceSize()); }
    /// @brief The options.
    /// @return the options the tokenizer was built with.
    const SentencePieceOptions& options() const noexcept { return m_options; }
    /// @brief The SentencePiece processor, for what this class does not wrap (sampling,
    ///        n-best, scores).
    /// @return the processor, shared by the copies of this tokenizer.
    const sentencepiece::SentencePieceProcessor& processor() const noexcept { return *m_processor; }

    /// @brief The id of a piece, if the model has it.
    /// @param piece the piece, as the model spells it (`\u2581the`, with U+2581 for a space).
    /// @return its id, or nothing (SentencePiece's PieceToId would give unk).
    std::optional<TokenId> find(std::string_view piece) const {
        const int id = m_processor->PieceToId(piece);
        if (id < 0 || m_processor->IdToPiece(id) != piece) return std::nullopt;
        return static_cast<TokenId>(id);
    }
    /// @brief The id of a piece the model has.
    /// @param piece the piece.
    /// @return its id.
    /// @throws index_error if the model has no such piece.
    TokenId id(std::string_view piece) const {
        const std::optional<TokenId> found = find(piece);
        if (!found) detail::fail<index_error>("piece '", piece, "' is not in ", m_where);
        return *found;
    }
    /// @brief The piece of an id.
    /// @param id in [0, size()).
    /// @return the piece (`<unk>`, `\u2581the`, ...).
    /// @throws index_error for an id outside [0, size()).
    const std::string& token(TokenId id) const {
        if (id < 0 || id >= size())
            detail::fail<index_error>("token id ", id, " is outside ", m_where, "'s vocabulary [0, ", size(), ")");
        return m_processor->IdToPiece(static_cast<int>(id));
    }
    /// @brief The padding piece's id (training's --pad_id; SentencePiece's default is none).
    /// @return the id, or nothing.
    std::optional<TokenId> pad_id() const { return special(m_processor->pad_id()); }
    /// @brief The unknown piece's id, which characters outside the model's alphabet get.
    /// @return the id (0 by default in training), or nothing.
    std::optional<TokenId> unk_id() const { return special(m_processor->unk_id()); }
    /// @brief The beginning-of-sentence id.
    /// @return the id (1 by default in training), or nothing.
    std::optional<TokenId> bos_id() const { return special(m_processor->bos_id()); }
    /// @brief The end-of-sentence id.
    /// @return the id (2 by default in training), or nothing.
    std::optional<TokenId> eos_id() const { return special(m_processor->eos_id()); }

    /// @brief The pieces of a text, as encode gives their ids (without bos and eos).
    /// @param text UTF-8 text.
    /// @return the pieces.
    /// @throws error with SentencePiece's message if it cannot encode the text.
    std::vector<std::string> tokenize(std::string_view text) const {
        std::vector<std::string> pieces;
        check(m_processor->Encode(text, &pieces), "split a text into pieces");
        return pieces;
    }
    /// @brief The ids of a text.
    /// @param text UTF-8 text.
    /// @return SentencePiece's ids for it, with bos and eos when the options ask.
    /// @throws error with SentencePiece's message if it cannot encode the text.
    std::vector<TokenId> encode(std::string_view text) const {
        std::vector<int> pieces;
        check(m_processor->Encode(text, &pieces), "encode a text");
        std::vector<TokenId> ids;
        ids.reserve(pieces.size() + 2);
        if (m_options.add_bos) ids.push_back(*bos_id());
        ids.insert(ids.end(), pieces.begin(), pieces.end());
        if (m_options.add_eos) ids.push_back(*eos_id());
        return ids;
    }
    /// @brief Texts encoded into one padded batch.
    /// @param texts the texts, one row each.
    /// @param options the padding side, and the id to pad with if not pad_id().
    /// @return the ids (batch x the longest text's id count), the lengths and the side.
    /// @throws value_error when neither options.pad_id nor pad_id() is set.
    EncodedBatch encode_batch(const std::vector<std::string>& texts, const BatchOptions& options = {}) const {
        const std::optional<TokenId> pad = options.pad_id ? options.pad_id : pad_id();
        if (!pad)
            detail::fail<value_error>("encode_batch needs a padding id: ", m_where,
                                      " has no padding piece (trained without --pad_id) and "
                                      "BatchOptions::pad_id is unset");
        std::vector<std::vector<TokenId>> sequences;
        sequences.reserve(texts.size());
        for (const std::string& text : texts) sequences.push_back(encode(text));
        return detail::pad_sequences(sequences, options.side, *pad);
    }

    /// @brief The text of ids, as SentencePiece decodes them: pieces joined, U+2581 turned back
    ///        into spaces; control pieces (padding, bos, eos) give nothing.
    /// @tparam Ids any range of integers (std::vector, an Eigen row such as batch.ids.row(b),
    ///         a std::span, ...).
    /// @param ids the ids.
    /// @return the text.
    /// @throws index_error for an id outside [0, size()), naming it and its position.
    template <typename Ids>
    std::string decode(const Ids& ids) const {
        using Value = std::remove_cv_t<std::remove_reference_t<decltype(*std::begin(ids))>>;
        static_assert(std::is_integral_v<Value>, "seqembed::SentencePieceTokenizer::decode: ids must be integers");
        std::vector<int> pieces;
        const Index vocabulary_size = size();
        for (const auto value : ids) {
            const auto id = static_cast<TokenId>(value);
            if (id < 0 || id >= vocabulary_size)
                detail::fail<index_error>("token id ", id, " at position ", pieces.size(), " is outside ",
                                          m_where, "'s vocabulary [0, ", vocabulary_size, ")");
            pieces.push_back(static_cast<int>(id));
        }
        std::string text;
        check(m_processor->Decode(pieces, &text), "decode ids");
        return text;
    }
    /// @brief The text of ids given in braces: tokenizer.decode({25, 7, 40}).
    /// @param ids the ids.
    /// @return the text, as decode of a range.
    /// @throws index_error for an id outside [0, size()).
    std::string decode(std::initializer_list<TokenId> ids) const {
        return decode<std::initializer_list<TokenId>>(ids);
    }

private:
    SentencePieceTokenizer(std::unique_ptr<sentencepiece::SentencePieceProcessor> processor,
                           SentencePieceOptions options)
        : m_processor(std::move(processor)), m_options(options), m_where("the SentencePiece model") {
        check_options();
    }

    static std::optional<TokenId> special(int id) noexcept {
        if (id < 0) return std::nullopt;
        return static_cast<TokenId>(id);
    }

    void check_options() const {
        if (m_options.add_bos && !bos_id())
            detail::fail<value_error>("SentencePieceOptions::add_bos is set, but ", m_where,
                                      " has no bos piece (trained with --bos_id=-1)");
        if (m_options.add_eos && !eos_id())
            detail::fail<value_error>("SentencePieceOptions::add_eos is set, but ", m_where,
                                      " has no eos piece (trained with --eos_id=-1)");
    }

    void check(const sentencepiece::util::Status& status, const char* what) const {
        if (!status.ok())
            detail::fail<error>("SentencePiece could not ", what, " with ", m_where, ": ", status.ToString());
    }

    std::shared_ptr<const sentencepiece::SentencePieceProcessor> m_processor;
    SentencePieceOptions m_options;
    std::string m_where;  // "the SentencePiece model 'spm.model'", for messages
};

}  // namespace seqembed
