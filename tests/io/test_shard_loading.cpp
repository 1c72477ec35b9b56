// A rank's slice of a token table read from a file without the rest: SafetensorsFile and
// NpyFile::matrix_rows, token_embedding with TokenEmbeddingOptions::shard, and the family
// loaders (and io::load_model) with a VocabularySplit, against the whole load of the same small
// checkpoints, bit for bit.
#include <seqembed/io/model.hpp>
#include <seqembed/io/npy.hpp>
#include <seqembed/io/safetensors.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bit_equal.hpp"
#include "catch.hpp"
#include "io_test_support.hpp"

using seqembed::Index;
using seqembed::RowMatrix;
using seqembed::VocabularyShard;
using seqembed::VocabularySplit;
using seqembed::io::NamedTensor;
using test_support::message_of;
using test_support::require_parts;

namespace {

constexpr Index ranks = 3;

/// rows x cols distinct values, exact in float and in bfloat16's 8 significant bits for small
/// tables: base + (r * cols + c) / 16.
RowMatrix<float> values(Index rows, Index cols, float base) {
    RowMatrix<float> m(rows, cols);
    for (Index r = 0; r < rows; ++r)
        for (Index c = 0; c < cols; ++c) m(r, c) = base + static_cast<float>(r * cols + c) / 16.0f;
    return m;
}

/// Writes config.json and model.safetensors into dir.
void write_checkpoint(const test_support::TempDir& dir, const nlohmann::json& config,
                      const std::vector<NamedTensor>& tensors) {
    test_support::write_bytes(dir / "config.json", config.dump());
    seqembed::io::save_safetensors(dir / "model.safetensors", tensors);
}

/// The rows a shard should hold: the whole table's [first, end).
RowMatrix<float> rows_of(const seqembed::TokenEmbedding<float>& whole, const VocabularyShard& shard) {
    return whole.table().middleRows(shard.first, shard.rows);
}

/// Loads a checkpoint whole and as each of 3 ranks (`load(split)`), and checks that each rank's
/// token table (`table_of(stage)`) is its shard of the vocabulary, in shard mode, with the whole
/// table's rows bit for bit; the shards cover the vocabulary end to end.
template <typename Load, typename TableOf>
void require_shards_of_whole(Load&& load, TableOf&& table_of, Index vocab_size) {
    const auto whole = load(VocabularySplit{});
    const seqembed::TokenEmbedding<float>& whole_table = table_of(whole);
    REQUIRE_FALSE(whole_table.is_shard());
    REQUIRE(whole_table.vocab_size() == vocab_size);
    REQUIRE(whole_table.table().rows() == vocab_size);
    Index covered = 0;
    for (Index rank = 0; rank < ranks; ++rank) {
        INFO("rank " << rank << " of " << ranks);
        const auto stage = load(VocabularySplit{ranks, rank});
        const seqembed::TokenEmbedding<float>& part = table_of(stage);
        const VocabularyShard expected = VocabularyShard::of_rank(vocab_size, ranks, rank);
        CHECK(part.shard() == expected);
        CHECK(part.is_shard());
        CHECK(part.vocab_size() == vocab_size);
        CHECK(part.table().rows() == expected.rows);
        CHECK(bit_equal<float>(part.table(), rows_of(whole_table, expected)));
        CHECK(expected.first == covered);
        covered = expected.end();
    }
    CHECK(covered == vocab_size);
}

const auto encoder_table = [](const auto& stage) -> const seqembed::TokenEmbedding<float>& {
    return stage.pipeline.embedding();
};
const auto decoder_table = [](const auto& stage) -> const seqembed::TokenEmbedding<float>& {
    return stage.decoder->embedding();
};

/// A BERT-family checkpoint (`prefix`: "bert." or "roberta."), vocab 11 x width 4.
void write_bert_family(const test_support::TempDir& dir, const std::string& type, const std::string& prefix) {
    const RowMatrix<float> words = values(11, 4, 1.0f), positions = values(12, 4, -3.0f), types = values(2, 4, 0.5f);
    const RowMatrix<float> gamma = values(1, 4, 1.0f), beta = values(1, 4, -0.25f);
    const std::string e = prefix + "embeddings.";
    write_checkpoint(dir,
                     {{"model_type", type}, {"vocab_size", 11}, {"hidden_size", 4}, {"max_position_embeddings", 12},
                      {"type_vocab_size", 2}, {"layer_norm_eps", 1e-12}, {"pad_token_id", 1}},
                     {NamedTensor(e + "word_embeddings.weight", words), NamedTensor(e + "position_embeddings.weight", positions),
                      NamedTensor(e + "token_type_embeddings.weight", types),
                      NamedTensor::view(e + "LayerNorm.weight", gamma.data(), {4}),
                      NamedTensor::view(e + "LayerNorm.bias", beta.data(), {4})});
}

/// An OPT checkpoint, vocab 13, hidden 6, with project_in when embed_dim differs from 6.
void write_opt(const test_support::TempDir& dir, Index embed_dim) {
    const RowMatrix<float> tokens = values(13, embed_dim, 0.75f), positions = values(10, 6, -1.0f);
    RowMatrix<float> project = values(6, embed_dim, -2.0f) / 7.0f;  // rounded values: products round
    nlohmann::json config = {{"model_type", "opt"}, {"vocab_size", 13}, {"hidden_size", 6},
                             {"max_position_embeddings", 8}, {"word_embed_proj_dim", embed_dim}};
    std::vector<NamedTensor> tensors = {NamedTensor("model.decoder.embed_tokens.weight", tokens),
                                        NamedTensor("model.decoder.embed_positions.weight", positions)};
    if (embed_dim != 6) tensors.emplace_back("model.decoder.project_in.weight", project);
    write_checkpoint(dir, config, tensors);
}

/// The sum of the 3 ranks' partial forwards, finished by rank 0's pipeline: what a sharded
/// forward gives.
template <typename Stage>
RowMatrix<float> sharded_forward(const std::vector<Stage>& stages, const seqembed::Batch& batch) {
    const Index width = stages.front().pipeline.d_model();
    RowMatrix<float> sum = RowMatrix<float>::Zero(batch.ids.size(), width);
    for (const Stage& stage : stages) {
        RowMatrix<float> part(batch.ids.size(), width);
        stage.pipeline.partial_forward_into(batch, part);
        sum += part;
    }
    (void)stages.front().pipeline.finish_forward_into(batch, sum);
    return sum;
}

}  // namespace

TEST_CASE("VocabularySplit: the whole vocabulary by default, of() is VocabularyShard::of_rank with its errors",
          "[io][shard]") {
    const VocabularySplit whole;
    CHECK(whole.is_whole());
    CHECK(whole.of(10) == VocabularyShard::whole(10));
    CHECK_FALSE((VocabularySplit{3, 2}).is_whole());
    CHECK((VocabularySplit{3, 0}).of(10) == VocabularyShard{0, 4, 10});
    CHECK((VocabularySplit{3, 1}).of(10) == VocabularyShard{4, 3, 10});
    CHECK((VocabularySplit{3, 2}).of(10) == VocabularyShard{7, 3, 10});
    require_parts(message_of<seqembed::value_error>([] { (void)VocabularySplit{11, 0}.of(10); }),
                  {"a vocabulary of 10 ids cannot be split into 11 parts"});
    require_parts(message_of<seqembed::value_error>([] { (void)VocabularySplit{0, 0}.of(10); }),
                  {"cannot be split into 0 parts"});
    require_parts(message_of<seqembed::index_error>([] { (void)VocabularySplit{3, 3}.of(10); }),
                  {"rank 3 is outside [0, 3)"});
    require_parts(message_of<seqembed::index_error>([] { (void)VocabularySplit{3, -1}.of(10); }),
                  {"rank -1 is outside [0, 3)"});
    CHECK_THROWS_AS((VocabularySplit{}).of(0), seqembed::value_error);
}

TEST_CASE("matrix_rows: a float32 tensor's rows are a view of the file's bytes, another dtype's a copy of those rows",
          "[io][shard]") {
    test_support::TempDir dir;
    const RowMatrix<float> table = values(10, 3, 2.0f);
    const RowMatrix<Eigen::bfloat16> narrow = table.cast<Eigen::bfloat16>();
    seqembed::io::save_safetensors(dir / "t.safetensors", {NamedTensor("wte", table), NamedTensor("narrow", narrow)});
    const auto file = seqembed::io::SafetensorsFile::open(dir / "t.safetensors");

    const auto all = file.matrix<float>("wte");
    const auto rows = file.matrix_rows<float>("wte", 4, 3);
    REQUIRE(rows.shape() == std::vector<Index>{3, 3});
    CHECK(rows.is_view());
    CHECK(rows.data() == all.data() + 4 * 3);
    CHECK(bit_equal<float>(rows.matrix(), table.middleRows(4, 3)));
    CHECK(file.matrix_rows<float>("wte", 0, 10).data() == all.data());
    CHECK_FALSE(file.matrix_rows<float>("wte", 4, 3, {false, true}).is_view());  // ReadOptions::copy

    const auto converted = file.matrix_rows<float>("narrow", 7, 3);
    REQUIRE(converted.shape() == std::vector<Index>{3, 3});
    CHECK_FALSE(converted.is_view());
    CHECK(bit_equal<float>(converted.matrix(), file.matrix<float>("narrow").matrix().middleRows(7, 3)));
    // Read as bfloat16 it is a view again.
    CHECK(file.matrix_rows<Eigen::bfloat16>("narrow", 7, 3).is_view());
    // Narrowing rows is refused as matrix() refuses it.
    CHECK_THROWS_AS(file.matrix_rows<Eigen::bfloat16>("wte", 0, 1), seqembed::value_error);
}

TEST_CASE("matrix_rows refuses a range outside the rows, an empty one and a tensor that is not a matrix",
          "[io][shard]") {
    test_support::TempDir dir;
    const RowMatrix<float> table = values(10, 3, 2.0f);
    const float bias[4] = {1, 2, 3, 4};
    seqembed::io::save_safetensors(dir / "t.safetensors",
                                   {NamedTensor("wte", table), NamedTensor::view("bias", bias, {4})});
    const auto file = seqembed::io::SafetensorsFile::open(dir / "t.safetensors");
    const auto rows = [&](Index first, Index count) { (void)file.matrix_rows<float>("wte", first, count); };
    CHECK_THROWS_WITH(rows(8, 3), Catch::Matchers::Contains("t.safetensors: tensor 'wte': rows [8, 11) are not a non-empty "
                                                  "range of its 10 rows [0, 10)"));
    CHECK_THROWS_WITH(rows(-1, 2), Catch::Matchers::Contains("tensor 'wte': rows [-1, 1) are not"));
    CHECK_THROWS_WITH(rows(3, 0), Catch::Matchers::Contains("tensor 'wte': rows [3, 3) are not a non-empty range of its 10 rows"));
    CHECK_THROWS_WITH(rows(3, -2), Catch::Matchers::Contains("tensor 'wte': rows [3, 1) are not"));
    CHECK_THROWS_WITH(rows(1, std::numeric_limits<Index>::max()),
                      Catch::Matchers::Contains("rows [1, 1 + " + std::to_string(std::numeric_limits<Index>::max()) + ")"));
    CHECK_THROWS_AS(rows(8, 3), seqembed::index_error);
    CHECK_THROWS_AS(rows(3, 0), seqembed::index_error);
    CHECK_THROWS_AS(file.matrix_rows<float>("bias", 0, 1), seqembed::shape_error);
    CHECK_THROWS_WITH(file.matrix_rows<float>("bias", 0, 1), Catch::Matchers::Contains("tensor 'bias': has rank 1 (shape [4])"));
    CHECK_THROWS_AS(file.matrix_rows<float>("nothing", 0, 1), seqembed::index_error);
}

TEST_CASE("NpyFile::matrix_rows: the rows of C-order, Fortran-order and big-endian arrays", "[io][shard]") {
    for (const char* name : {"fortran_f4.npy", "big_f4.npy", "writer_f4.npy", "fortran3_f8.npy"}) {
        INFO(name);
        const auto file = seqembed::io::NpyFile::open(io_test::fixture(name));
        if (file.shape().size() != 2) continue;
        const auto all = file.matrix<double>();
        const Index rows = all.shape()[0];
        for (Index first = 0; first < rows; ++first)
            for (Index count = 1; first + count <= rows; ++count) {
                const auto part = file.matrix_rows<double>(first, count);
                REQUIRE(part.shape() == std::vector<Index>{count, all.shape()[1]});
                CHECK(bit_equal<double>(part.matrix(), all.matrix().middleRows(first, count)));
            }
        CHECK_THROWS_AS(file.matrix_rows<double>(rows, 1), seqembed::index_error);
    }
    const auto fortran = seqembed::io::NpyFile::open(io_test::fixture("fortran_f4.npy"));
    REQUIRE(fortran.fortran_order());
    CHECK_FALSE(fortran.matrix_rows<float>(1, 1).is_view());
}

TEST_CASE("SafetensorsFile::token_embedding with a shard reads the shard's rows alone: viewed, converted, checked",
          "[io][shard]") {
    test_support::TempDir dir;
    RowMatrix<float> table = values(10, 3, 2.0f);
    table(1, 2) = std::numeric_limits<float>::quiet_NaN();  // in rank 0's rows [0, 4) alone
    const RowMatrix<Eigen::bfloat16> narrow = table.cast<Eigen::bfloat16>();
    seqembed::io::save_safetensors(dir / "t.safetensors", {NamedTensor("wte", table), NamedTensor("narrow", narrow)});
    const auto file = seqembed::io::SafetensorsFile::open(dir / "t.safetensors");

    seqembed::TokenEmbeddingOptions checked;
    checked.check_finite = true;
    for (const char* name : {"wte", "narrow"}) {
        INFO(name);
        CHECK_THROWS_AS(file.token_embedding<float>(name, checked), seqembed::value_error);
        const auto whole = file.token_embedding<float>(name);
        for (Index rank = 0; rank < ranks; ++rank) {
            INFO("rank " << rank);
            seqembed::TokenEmbeddingOptions options = checked;
            options.shard = VocabularySplit{ranks, rank}.of(10);
            if (rank == 0) {
                CHECK_THROWS_AS(file.token_embedding<float>(name, options), seqembed::value_error);
                continue;
            }
            const auto part = file.token_embedding<float>(name, options);
            CHECK(part.shard() == *options.shard);
            CHECK(part.vocab_size() == 10);
            CHECK(bit_equal<float>(part.table(), rows_of(whole, *options.shard)));
            // float32: the shard's rows are the file's bytes, where the whole table has them;
            // bfloat16 read as float: a copy of the shard's rows alone.
            const bool view = part.table().data() == whole.table().data() + options.shard->first * 3;
            CHECK(view == (std::string(name) == "wte"));
        }
    }
    // The bfloat16 table kept as bfloat16 is a view too.
    seqembed::TokenEmbeddingOptions options;
    options.shard = VocabularySplit{ranks, 2}.of(10);
    CHECK((file.token_embedding<float, Eigen::bfloat16>("narrow", options).is_view()));

    SECTION("a tensor whose rows are not the shard's vocabulary is refused, naming both") {
        options.shard = VocabularySplit{ranks, 1}.of(12);
        CHECK_THROWS_AS(file.token_embedding<float>("wte", options), seqembed::shape_error);
        CHECK_THROWS_WITH(file.token_embedding<float>("wte", options),
                          Catch::Matchers::Contains("tensor 'wte': has 10 rows (shape [10, 3]), but "
                                          "TokenEmbeddingOptions::shard is part of a vocabulary of 12 ids"));
    }
    SECTION("an invalid shard is refused before anything is read") {
        options.shard = VocabularyShard{8, 5, 10};
        CHECK_THROWS_AS(file.token_embedding<float>("wte", options), seqembed::value_error);
    }
    SECTION("NpyFile::token_embedding reads a shard's rows alike") {
        const auto npy = seqembed::io::NpyFile::open(io_test::fixture("fortran_f4.npy"));
        const auto all = npy.token_embedding<float>();
        options.shard = VocabularySplit{2, 1}.of(all.vocab_size());
        const auto part = npy.token_embedding<float>(options);
        CHECK(bit_equal<float>(part.table(), rows_of(all, *options.shard)));
    }
}

TEST_CASE("Family loaders read a rank's rows of BERT's and RoBERTa's word table and the rest loads whole",
          "[io][shard][models]") {
    for (const auto& [type, prefix] : std::vector<std::pair<std::string, std::string>>{{"bert", "bert."}, {"roberta", "roberta."}}) {
        INFO(type);
        test_support::TempDir dir;
        write_bert_family(dir, type, prefix);
        if (type == "bert")
            require_shards_of_whole([&](const VocabularySplit& s) { return seqembed::io::load_bert(dir.path(), {}, s); },
                                    encoder_table, 11);
        else
            require_shards_of_whole([&](const VocabularySplit& s) { return seqembed::io::load_roberta(dir.path(), {}, s); },
                                    encoder_table, 11);
        // Through load_model too, and the 3 ranks' forward summed is the whole forward, bit for bit.
        const seqembed::io::Model whole = seqembed::io::load_model(dir.path());
        std::vector<seqembed::io::LearnedModelInput> stages;
        for (Index rank = 0; rank < ranks; ++rank)
            stages.push_back(*seqembed::io::load_model(dir.path(), {}, VocabularySplit{ranks, rank}).learned());
        CHECK(bit_equal<float>(stages[1].pipeline.positions().table(), whole.learned()->pipeline.positions().table()));
        seqembed::IdMatrix ids(2, 4);
        ids << 0, 5, 10, 4, 7, 3, 1, 9;
        seqembed::IdMatrix types(2, 4);
        types << 0, 1, 1, 0, 1, 0, 0, 1;
        seqembed::Batch batch(ids);
        batch.token_types = types;
        CHECK(bit_equal<float>(sharded_forward(stages, batch), whole.forward(batch)));
    }
}

TEST_CASE("load_gpt2 with a split reads its rows of wte and has no token-type stage", "[io][shard][models]") {
    test_support::TempDir dir;
    const RowMatrix<float> wte = values(14, 4, 1.0f), wpe = values(6, 4, -1.0f);
    write_checkpoint(dir, {{"model_type", "gpt2"}, {"vocab_size", 14}, {"n_embd", 4}, {"n_positions", 6}},
                     {NamedTensor("wte.weight", wte), NamedTensor("wpe.weight", wpe)});
    require_shards_of_whole([&](const VocabularySplit& s) { return seqembed::io::load_gpt2(dir.path(), {}, s); },
                            encoder_table, 14);
    CHECK(seqembed::io::load_gpt2(dir.path()).pipeline.token_types() != nullptr);
    const auto part = seqembed::io::load_gpt2(dir.path(), {}, VocabularySplit{ranks, 1});
    CHECK(part.pipeline.token_types() == nullptr);
    CHECK_FALSE(seqembed::io::load_model(dir.path(), {}, VocabularySplit{ranks, 1}).takes_token_types());
    // Without token types the sharded forward is the whole one.
    std::vector<seqembed::io::LearnedModelInput> stages;
    for (Index rank = 0; rank < ranks; ++rank) stages.push_back(seqembed::io::load_gpt2(dir.path(), {}, VocabularySplit{ranks, rank}));
    seqembed::IdMatrix ids(1, 5);
    ids << 13, 0, 4, 5, 9;
    CHECK(bit_equal<float>(sharded_forward(stages, seqembed::Batch(ids)), seqembed::io::load_gpt2(dir.path()).pipeline.forward(ids)));
}

TEST_CASE("load_opt with a split: without project_in a view of its rows, with it only its rows projected, "
          "bit for bit the whole table's",
          "[io][shard][models]") {
    for (const Index embed_dim : {Index{6}, Index{5}}) {
        INFO("word_embed_proj_dim " << embed_dim);
        test_support::TempDir dir;
        write_opt(dir, embed_dim);
        require_shards_of_whole([&](const VocabularySplit& s) { return seqembed::io::load_opt(dir.path(), {}, s); },
                                encoder_table, 13);
        const auto part = seqembed::io::load_opt(dir.path(), {}, VocabularySplit{ranks, 2});
        CHECK(part.pipeline.embedding().is_view() == (embed_dim == 6));
        CHECK(part.pipeline.embedding().table().cols() == 6);
    }
}

TEST_CASE("load_marian with a split: the encoder's rows of vocab_size, the decoder's own table split by "
          "decoder_vocab_size", "[io][shard][models]") {
    test_support::TempDir dir;
    const RowMatrix<float> shared = values(16, 4, 1.0f), decoder = values(20, 4, -5.0f);
    write_checkpoint(dir,
                     {{"model_type", "marian"}, {"vocab_size", 16}, {"decoder_vocab_size", 20}, {"d_model", 4},
                      {"max_position_embeddings", 8}, {"scale_embedding", true}, {"pad_token_id", 15}},
                     {NamedTensor("model.shared.weight", shared), NamedTensor("model.decoder.embed_tokens.weight", decoder)});
    const auto load = [&](const VocabularySplit& s) { return seqembed::io::load_marian(dir.path(), {}, s); };
    require_shards_of_whole(load, encoder_table, 16);
    require_shards_of_whole(load, decoder_table, 20);
    const auto part = load(VocabularySplit{ranks, 1});
    CHECK(part.pipeline.embedding().shard() == VocabularyShard{6, 5, 16});
    CHECK(part.decoder->embedding().shard() == VocabularyShard{7, 7, 20});
}

TEST_CASE("load_t5 and load_llama with a split (the decoder's stage of T5 shares the encoder's shard)",
          "[io][shard][models]") {
    SECTION("t5") {
        test_support::TempDir dir;
        const RowMatrix<float> shared = values(17, 4, 1.0f);
        write_checkpoint(dir, {{"model_type", "t5"}, {"vocab_size", 17}, {"d_model", 4}},
                         {NamedTensor("shared.weight", shared)});
        const auto load = [&](const VocabularySplit& s) { return seqembed::io::load_t5(dir.path(), {}, s); };
        require_shards_of_whole(load, encoder_table, 17);
        require_shards_of_whole(load, decoder_table, 17);
        const auto part = load(VocabularySplit{ranks, 2});
        CHECK(part.decoder->embedding().table().data() == part.pipeline.embedding().table().data());
    }
    SECTION("llama") {
        test_support::TempDir dir;
        const RowMatrix<float> table = values(19, 8, 1.0f);
        write_checkpoint(dir,
                         {{"model_type", "llama"}, {"vocab_size", 19}, {"hidden_size", 8}, {"max_position_embeddings", 16},
                          {"num_attention_heads", 2}, {"rope_theta", 10000.0}},
                         {NamedTensor("model.embed_tokens.weight", table)});
        require_shards_of_whole([&](const VocabularySplit& s) { return seqembed::io::load_llama(dir.path(), {}, s); },
                                encoder_table, 19);
        const auto part = seqembed::io::load_model(dir.path(), {}, VocabularySplit{ranks, 0});
        REQUIRE(part.rotary() != nullptr);
        CHECK(part.lookup()->pipeline.embedding().is_shard());
        CHECK(part.lookup()->pipeline.embedding().is_view());
    }
}

TEST_CASE("A bfloat16 checkpoint read by a loader with a split converts its rows alone, equal to the whole load's",
          "[io][shard][models]") {
    test_support::TempDir dir;
    const RowMatrix<Eigen::bfloat16> table = values(19, 8, 1.0f).cast<Eigen::bfloat16>();
    write_checkpoint(dir,
                     {{"model_type", "llama"}, {"vocab_size", 19}, {"hidden_size", 8}, {"max_position_embeddings", 16},
                      {"num_attention_heads", 2}},
                     {NamedTensor("model.embed_tokens.weight", table)});
    require_shards_of_whole([&](const VocabularySplit& s) { return seqembed::io::load_llama(dir.path(), {}, s); },
                            encoder_table, 19);
    const auto part = seqembed::io::load_llama(dir.path(), {}, VocabularySplit{ranks, 1});
    CHECK(part.pipeline.embedding().table().rows() == 6);
}

/// A BART checkpoint of vocab 13 x d_model 4, its shared table stored as Stored.
template <typename Stored>
void write_bart(const test_support::TempDir& dir) {
    const RowMatrix<Stored> shared = values(13, 4, 1.0f).cast<Stored>();
    const RowMatrix<float> encoder = values(8, 4, -2.0f), decoder = values(8, 4, 3.0f), ones = values(1, 4, 1.0f);
    std::vector<NamedTensor> tensors = {NamedTensor("model.shared.weight", shared),
                                        NamedTensor("model.encoder.embed_positions.weight", encoder),
                                        NamedTensor("model.decoder.embed_positions.weight", decoder)};
    for (const std::string side : {"encoder", "decoder"}) {
        tensors.push_back(NamedTensor::view("model." + side + ".layernorm_embedding.weight", ones.data(), {4}));
        tensors.push_back(NamedTensor::view("model." + side + ".layernorm_embedding.bias", ones.data(), {4}));
    }
    write_checkpoint(dir,
                     {{"model_type", "bart"}, {"vocab_size", 13}, {"d_model", 4}, {"max_position_embeddings", 6},
                      {"scale_embedding", true}},
                     tensors);
}

TEST_CASE("load_bart with a split: both stages read the same rows of the shared table, viewed in the file when "
          "float32, converted alone when bfloat16", "[io][shard][models]") {
    for (const bool narrow : {false, true}) {
        INFO((narrow ? "bfloat16" : "float32"));
        test_support::TempDir dir;
        if (narrow)
            write_bart<Eigen::bfloat16>(dir);
        else
            write_bart<float>(dir);
        const auto load = [&](const VocabularySplit& s) { return seqembed::io::load_bart(dir.path(), {}, s); };
        require_shards_of_whole(load, encoder_table, 13);
        require_shards_of_whole(load, decoder_table, 13);
        for (Index rank = 0; rank < ranks; ++rank) {
            const auto part = load(VocabularySplit{ranks, rank});
            // Both stages read the tensor from the one mapping: the same bytes when they are viewed,
            // two copies of the shard's rows when they are converted.
            const bool same = part.decoder->embedding().table().data() == part.pipeline.embedding().table().data();
            CHECK(same == !narrow);
            CHECK(part.pipeline.embedding().table().rows() == VocabularyShard::of_rank(13, ranks, rank).rows);
        }
    }
}

TEST_CASE("A split the vocabulary cannot take is refused by the loader, named", "[io][shard][models]") {
    test_support::TempDir dir;
    write_bert_family(dir, "bert", "bert.");
    require_parts(message_of<seqembed::value_error>(
                      [&] { (void)seqembed::io::load_bert(dir.path(), {}, VocabularySplit{12, 0}); }),
                  {"load_bert: VocabularySplit{12, 0}: a vocabulary of 11 ids cannot be split into 12 parts"});
    require_parts(message_of<seqembed::index_error>(
                      [&] { (void)seqembed::io::load_model(dir.path(), {}, VocabularySplit{3, 3}); }),
                  {"load_bert: VocabularySplit{3, 3}: rank 3 is outside [0, 3)"});
}
