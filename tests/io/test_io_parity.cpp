// io::load_model and the families' whole outputs against tests/reference/generate_parity_fixtures.py:
// every row (padded ones too, with PaddedRows::computed) of each family's current Hugging Face
// forward, for pad ids inside sequences, left and right padding, masks over past + current
// tokens, explicit position ids, GPT-2's token types and the decoders' stages; bit for bit where
// the stage is gathers, adds and scales, within the LayerNorm bound or to rounding otherwise.
#include <seqembed/io/model.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "catch.hpp"
#include "io_test_support.hpp"
#include "test_support.hpp"
#include "../fixtures/models/parity_cases.hpp"

using seqembed::Index;
using seqembed::RowMatrix;
namespace parity_fixtures = seqembed_parity_fixtures;
using test_support::message_of;

namespace {

seqembed::io::Model load(const parity_fixtures::Family& family, seqembed::PaddedRows rows) {
    seqembed::PipelineOptions options;
    options.padded_rows = rows;
    return seqembed::io::load_model(io_test::model_directory(family), options);
}

/// The worst |y - want| / max(1, |want|) over the rows `compared` picks; rows it does not pick
/// must be zero (counted in `nonzero`).
template <typename Compared>
double worst_error(const RowMatrix<float>& y, const double* want, Compared compared, long& nonzero) {
    double worst = 0;
    nonzero = 0;
    for (Index r = 0; r < y.rows(); ++r) {
        for (Index c = 0; c < y.cols(); ++c) {
            const double value = y(r, c);
            if (!compared(r)) {
                nonzero += value != 0.0 ? 1 : 0;
                continue;
            }
            const double expected = want[r * y.cols() + c];
            worst = std::max(worst, std::fabs(value - expected) / std::max(1.0, std::fabs(expected)));
        }
    }
    return worst;
}

struct Inputs {
    seqembed::IdMatrix ids, mask, types, position_ids;
};

seqembed::Batch batch_of(const parity_fixtures::Case& c, Inputs& inputs) {
    inputs.ids = io_test::ids_of(c.input_ids, c.batch, c.seq);
    inputs.mask = io_test::ids_of(c.attention_mask, c.batch, c.past + c.seq);
    seqembed::Batch batch(inputs.ids);
    batch.padding = seqembed::Padding::from_mask(inputs.mask);
    if (c.token_type_ids != nullptr) {
        inputs.types = io_test::ids_of(c.token_type_ids, c.batch, c.seq);
        batch.token_types = inputs.types;
    }
    if (c.position_ids != nullptr) {
        inputs.position_ids = io_test::ids_of(c.position_ids, c.batch, c.seq);
        batch.position_ids = inputs.position_ids;
    }
    return batch;
}

void check_rows(const parity_fixtures::Family& family, const parity_fixtures::Case& c, const RowMatrix<float>& y, bool all_rows) {
    REQUIRE(y.rows() == c.batch * c.seq);
    REQUIRE(y.cols() == c.width);
    const auto real = [&](Index r) {
        const Index b = r / c.seq;
        const Index t = r % c.seq;
        return all_rows || c.attention_mask[b * (c.past + c.seq) + c.past + t] != 0;
    };
    long nonzero32 = 0;
    long nonzero64 = 0;
    const double against_f32 = worst_error(y, c.expected_f32, real, nonzero32);
    const double against_f64 = worst_error(y, c.expected_f64, real, nonzero64);
    CHECK(nonzero32 == 0);
    if (family.exact) {
        CHECK(against_f32 == 0.0);
    } else {
        CHECK(against_f64 <= 1e-6);
        CHECK(against_f32 <= 2e-6);
    }
}

}  // namespace

TEST_CASE("io::load_model matches every row of each family's Hugging Face forward, for every input it takes",
          "[io][models][parity]") {
    for (long f = 0; f < parity_fixtures::all_families_count; ++f) {
        const parity_fixtures::Family& family = *parity_fixtures::all_families[f];
        const seqembed::io::Model computed = load(family, seqembed::PaddedRows::computed);
        const seqembed::io::Model zero = load(family, seqembed::PaddedRows::zero);
        CHECK(computed.model_type() == family.model_type);
        for (long k = 0; k < family.case_count; ++k) {
            const parity_fixtures::Case& c = family.cases[k];
            INFO(family.name << ", " << c.name);
            Inputs inputs;
            const seqembed::Batch batch = batch_of(c, inputs);
            const bool decoder = std::string(c.side) == "decoder";
            check_rows(family, c, decoder ? computed.forward_decoder(batch) : computed.forward(batch), true);
            check_rows(family, c, decoder ? zero.forward_decoder(batch) : zero.forward(batch), false);
            if (!decoder && c.hf_position_ids != nullptr) {
                const seqembed::io::Model::PositionVector positions = computed.positions(batch);
                std::int64_t shift = 0;
                if (std::string(family.model_type) == "roberta") shift = computed.learned()->pipeline.positions().offset();
                for (Index r = 0; r < positions.size(); ++r) {
                    INFO("token " << r);
                    CHECK(positions[r] + shift == c.hf_position_ids[r]);
                }
            }
        }
    }
}

TEST_CASE("A past mask gives the positions a step offset gives, and RoBERTa numbers pad ids inside a sequence",
          "[io][models][parity]") {
    const parity_fixtures::Family& roberta = parity_fixtures::roberta_family;
    const seqembed::io::Model model = load(roberta, seqembed::PaddedRows::zero);
    // pad_inside: every token attended; a pad id reads row padding_idx and the ids after it shift back.
    const parity_fixtures::Case& c = roberta.cases[0];
    REQUIRE(std::string(c.name) == "pad_inside");
    Inputs inputs;
    const seqembed::Batch batch = batch_of(c, inputs);
    const RowMatrix<float> y = model.forward(batch);
    const RowMatrix<float> by_id =
        model.learned()->pipeline.forward(inputs.ids, seqembed::Padding::none());  // the family's rule whatever padding
    CHECK(y == by_id);

    // BERT: a mask over 3 past + 2 current tokens numbers them 3, 4 as a step offset of 3 does.
    const seqembed::io::Model bert = load(parity_fixtures::bert_family, seqembed::PaddedRows::zero);
    seqembed::IdMatrix ids(1, 2);
    ids << 5, 6;
    seqembed::IdMatrix mask(1, 5);
    mask << 0, 1, 1, 1, 1;
    seqembed::Batch with_past(ids);
    with_past.padding = seqembed::Padding::from_mask(mask);
    seqembed::Batch with_offset(ids);
    with_offset.offsets = 3;
    CHECK(bert.forward(with_past) == bert.forward(with_offset));
    CHECK(bert.positions(with_past) == bert.positions(with_offset));
}

TEST_CASE("Loaders refuse options and inputs that contradict their family's rules", "[io][models][parity]") {
    seqembed::PipelineOptions options;
    options.positions = seqembed::PositionNumbering::real_tokens;
    const std::string bert = message_of<seqembed::value_error>(
        [&] { (void)seqembed::io::load_model(io_test::model_directory(parity_fixtures::bert_family), options); });
    CHECK(bert.find("load_bert") != std::string::npos);
    CHECK(bert.find("sequence_index") != std::string::npos);
    options.positions = seqembed::PositionNumbering::real_tokens;
    CHECK_NOTHROW(seqembed::io::load_model(io_test::model_directory(parity_fixtures::opt_family), options));

    const seqembed::io::Model bart = load(parity_fixtures::bart_family, seqembed::PaddedRows::zero);
    seqembed::IdMatrix ids(1, 2);
    ids << 5, 6;
    seqembed::Batch batch(ids);
    batch.position_ids = ids;
    const std::string message = message_of<seqembed::value_error>([&] { (void)bart.forward(batch); });
    CHECK(message.find("takes no position ids") != std::string::npos);
    CHECK(bart.has_decoder());
    CHECK_FALSE(load(parity_fixtures::gpt2_family, seqembed::PaddedRows::zero).has_decoder());
}

TEST_CASE("A missing tensor's message lists what the checkpoint holds", "[io][models][parity]") {
    // A BERT checkpoint asked for GPT-2's tensors.
    const std::string message = message_of<seqembed::format_error>(
        [&] { (void)seqembed::io::load_gpt2(io_test::model_directory(parity_fixtures::bert_family)); });
    CHECK(message.find("has no tensor 'transformer.w") != std::string::npos);
    CHECK(message.find("it holds 5 tensors") != std::string::npos);
    CHECK(message.find("'bert.embeddings.LayerNorm.weight'") != std::string::npos);
}

TEST_CASE("XLM-RoBERTa and CamemBERT load as RoBERTa, and relative position types and encoder pasts are refused",
          "[io][models][parity]") {
    const std::filesystem::path roberta = io_test::model_directory(parity_fixtures::roberta_family);
    const std::string config = test_support::read_bytes(roberta / "config.json");
    const parity_fixtures::Case& c = parity_fixtures::roberta_family.cases[0];
    Inputs inputs;
    const seqembed::Batch batch = batch_of(c, inputs);
    const RowMatrix<float> expected = load(parity_fixtures::roberta_family, seqembed::PaddedRows::zero).forward(batch);
    for (const std::string type : {"xlm-roberta", "camembert"}) {
        test_support::TempDir copy;
        std::filesystem::copy_file(roberta / "model.safetensors", copy / "model.safetensors");
        std::string renamed = config;
        renamed.replace(renamed.find("\"roberta\""), 9, "\"" + type + "\"");
        test_support::write_bytes(copy / "config.json", renamed);
        const seqembed::io::Model model = seqembed::io::load_model(copy.path());
        CHECK(model.model_type() == type);
        CHECK(model.forward(batch) == expected);

        std::string relative = renamed;
        relative.replace(relative.find("\"absolute\""), 10, "\"relative_key\"");
        test_support::write_bytes(copy / "config.json", relative);
        const std::string message =
            message_of<seqembed::format_error>([&] { (void)seqembed::io::load_model(copy.path()); });
        CHECK(message.find("'position_embedding_type' is \"relative_key\"") != std::string::npos);
    }

    const seqembed::io::Model bart = load(parity_fixtures::bart_family, seqembed::PaddedRows::zero);
    seqembed::IdMatrix ids(1, 2);
    ids << 5, 6;
    seqembed::IdMatrix mask(1, 3);
    mask << 1, 1, 1;
    seqembed::Batch past(ids);
    past.padding = seqembed::Padding::from_mask(mask);
    const std::string encoder = message_of<seqembed::value_error>([&] { (void)bart.forward(past); });
    CHECK(encoder.find("takes no past tokens (a mask wider than the ids, or step offsets) in its encoder") !=
          std::string::npos);
    CHECK_NOTHROW(bart.forward_decoder(past));
}
