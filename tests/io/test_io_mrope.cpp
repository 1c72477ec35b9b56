// Qwen-VL's and GLM-4V's multimodal positions: io::Model::multimodal_positions against Hugging
// Face's get_rope_index (tests/reference/generate_mrope_fixtures.py: images, videos, Qwen2.5-VL's
// seconds per frame, Qwen3-VL's frames apart, GLM-4V's runs of image tokens, padding on either
// side, text only), the rotary stage's apply_multimodal against its float32 forward (GLM-4V's
// partial rotation, interleaved and in halves), the decoding step's positions, the configs'
// sections and vision ids, and bad grids named.
#include <seqembed/io/model.hpp>
#include <seqembed/io/rotary_config.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "catch.hpp"
#include "fixtures/rope/mrope_cases.hpp"
#include "io_test_support.hpp"

using seqembed::Index;
using seqembed::IdMatrix;
using seqembed::RowMatrix;
using seqembed_mrope_fixtures::IndexCase;

namespace {

const std::filesystem::path models = std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests/fixtures/models";

/// A copy of a multimodal fixture whose config.json gives the fixtures' small vision ids (Qwen2-VL:
/// Qwen2.5-VL's checkpoint, Qwen3-VL-MoE: Qwen3-VL's, whose tensors they name alike, under their
/// own model_type).
struct SmallVisionIds {
    test_support::TempDir scratch;
    std::filesystem::path directory = scratch.path();
    explicit SmallVisionIds(const std::string& family) {
        const std::string source = family == "qwen2_vl" ? "qwen2_5_vl" : family == "qwen3_vl_moe" ? "qwen3_vl" : family;
        std::filesystem::copy(models / source / "model.safetensors", directory / "model.safetensors");
        std::string config = test_support::read_bytes(models / source / "config.json");
        if (family != source) {
            const std::string type = R"("model_type": ")" + source + R"(",)";
            config.replace(config.find(type), type.size(), R"("model_type": ")" + family + R"(",)");
        }
        const std::string ids =
            family.rfind("glm4v", 0) == 0
                ? R"("image_token_id": 7, "video_token_id": 8, "video_start_token_id": 5, "video_end_token_id": 6, )"
                : R"("image_token_id": 7, "video_token_id": 8, "vision_start_token_id": 5, )";
        config.insert(config.find('{') + 1, ids);
        const std::string vision = R"("vision_config": {)";
        const std::size_t at = config.find(vision);
        REQUIRE(at != std::string::npos);
        config.insert(at + vision.size(), R"("spatial_merge_size": 2, "tokens_per_second": 2, )");
        test_support::write_bytes(directory / "config.json", config);
    }
};

IdMatrix matrix_of(const std::vector<long>& values, Index rows, Index cols) {
    IdMatrix m(rows, cols);
    for (Index k = 0; k < m.size(); ++k) m.data()[k] = values[static_cast<std::size_t>(k)];
    return m;
}

seqembed::io::MultimodalPositions positions_of(const seqembed::io::Model& model, const IndexCase& c) {
    const IdMatrix ids = matrix_of(c.ids, c.batch, c.seq);
    const IdMatrix mask = c.mask.empty() ? IdMatrix::Ones(c.batch, c.seq) : matrix_of(c.mask, c.batch, c.seq);
    seqembed::Batch batch(ids);
    if (!c.mask.empty()) batch.padding = seqembed::Padding::from_mask(mask);
    seqembed::io::VisionGrids grids;
    grids.image_grid_thw = matrix_of(c.image_grid_thw, static_cast<Index>(c.image_grid_thw.size() / 3), 3);
    grids.video_grid_thw = matrix_of(c.video_grid_thw, static_cast<Index>(c.video_grid_thw.size() / 3), 3);
    grids.second_per_grid_ts = c.second_per_grid_ts;
    grids.whole_seconds = c.whole_seconds;
    return model.multimodal_positions(batch, grids);
}

}  // namespace

TEST_CASE("Qwen-VL's and GLM-4V's multimodal positions are get_rope_index's, images, videos and padding",
          "[io][mrope][fixture]") {
    for (const IndexCase& c : seqembed_mrope_fixtures::index_cases()) {
        INFO(c.name);
        const SmallVisionIds copy(c.family);
        const seqembed::io::Model model = seqembed::io::load_model(copy.directory);
        const seqembed::io::MultimodalPositions got = positions_of(model, c);
        REQUIRE(got.positions.cols() == c.batch * c.seq);
        for (Index a = 0; a < 3; ++a)
            for (Index r = 0; r < c.batch * c.seq; ++r) {
                INFO("axis " << a << ", token " << r);
                CHECK(got.positions(a, r) == c.positions[static_cast<std::size_t>(a * c.batch * c.seq + r)]);
            }
        CHECK(got.rope_deltas == std::vector<std::int64_t>(c.rope_deltas.begin(), c.rope_deltas.end()));
    }
}

TEST_CASE("Qwen-VL's and GLM-4V's rotary stages rotate by the multimodal positions as their float32 forwards",
          "[io][mrope][fixture]") {
    for (const seqembed_mrope_fixtures::ApplyCase& c : seqembed_mrope_fixtures::apply_cases()) {
        INFO(c.name);
        const IndexCase* index = nullptr;
        for (const IndexCase& candidate : seqembed_mrope_fixtures::index_cases())
            if (std::string(candidate.name) == c.index_case) index = &candidate;
        REQUIRE(index != nullptr);
        seqembed::RotaryOptions options = seqembed::RotaryOptions::hugging_face(c.head_dim, c.theta);
        options.rotary_dim = c.rotary_dim;
        options.layout = c.interleaved ? seqembed::RotaryLayout::interleaved : seqembed::RotaryLayout::halves;
        options.mrope_section = {c.mrope_section[0], c.mrope_section[1], c.mrope_section[2]};
        options.mrope_interleaved = std::string(c.family) == "qwen3_vl";
        options.precision = seqembed::TablePrecision::follow_scalar;
        options.max_positions = 64;
        const seqembed::RotaryEmbedding<float> rope(options);
        const SmallVisionIds copy(c.family);
        const seqembed::io::Model model = seqembed::io::load_model(copy.directory);
        const auto positions = positions_of(model, *index).positions;
        const Index tokens = positions.cols();
        RowMatrix<float> q = Eigen::Map<const RowMatrix<float>>(c.q.data(), tokens, c.q_heads * c.head_dim);
        RowMatrix<float> k = Eigen::Map<const RowMatrix<float>>(c.k.data(), tokens, c.k_heads * c.head_dim);
        rope.apply_multimodal(q, k, c.q_heads, c.k_heads, positions);
        const Eigen::Map<const RowMatrix<float>> q_want(c.q_out.data(), tokens, c.q_heads * c.head_dim);
        const Eigen::Map<const RowMatrix<float>> k_want(c.k_out.data(), tokens, c.k_heads * c.head_dim);
        // torch's cos and sin are within an ulp of the correctly rounded ones, and its products
        // round one by one: within 2 ulps of values near 1.
        CHECK((q - q_want).cwiseAbs().maxCoeff() <= 4e-7f * std::max(1.0f, q_want.cwiseAbs().maxCoeff()));
        CHECK((k - k_want).cwiseAbs().maxCoeff() <= 4e-7f * std::max(1.0f, k_want.cwiseAbs().maxCoeff()));
    }
}

TEST_CASE("Qwen-VL's configs give the rotary stage its sections, and the model its vision ids", "[io][mrope]") {
    const seqembed::io::Model qwen25 = seqembed::io::load_model(models / "qwen2_5_vl");
    CHECK(qwen25.rotary()->options().mrope_section == std::array<Index, 3>{1, 1, 2});
    CHECK_FALSE(qwen25.rotary()->options().mrope_interleaved);
    const seqembed::io::Model qwen3 = seqembed::io::load_model(models / "qwen3_vl");
    CHECK(qwen3.rotary()->options().mrope_section == std::array<Index, 3>{2, 1, 1});
    CHECK(qwen3.rotary()->options().mrope_interleaved);
    // The config classes' defaults: ids 151655, 151656, 151652; merge 2; Qwen3-VL [24, 20, 20].
    const seqembed::io::VisionTokens& vision = *qwen25.lookup()->vision;
    CHECK(vision.image_token_id == 151655);
    CHECK(vision.video_token_id == 151656);
    CHECK(vision.vision_start_token_id == 151652);
    CHECK(vision.spatial_merge_size == 2);
    CHECK(vision.tokens_per_second == 4.0);
    CHECK(qwen3.lookup()->vision->frames_apart);
    // Qwen3-VL-MoE's input stage is Qwen3-VL's.
    const SmallVisionIds moe_copy("qwen3_vl_moe");
    const seqembed::io::Model moe = seqembed::io::load_model(moe_copy.directory);
    CHECK(moe.model_type() == "qwen3_vl_moe");
    CHECK(moe.rotary()->options().mrope_section == std::array<Index, 3>{2, 1, 1});
    CHECK(moe.rotary()->options().mrope_interleaved);
    CHECK(moe.lookup()->vision->frames_apart);
    CHECK(moe.lookup()->vision->image_token_id == 7);
    const IdMatrix some = (IdMatrix(1, 3) << 3, 7, 119).finished();
    CHECK(moe.forward(seqembed::Batch(some)) == qwen3.forward(seqembed::Batch(some)));
    const seqembed::RotaryOptions read = seqembed::io::rotary_options_from_json(
        nlohmann::json::parse(R"({"model_type": "qwen3_vl", "text_config": {"hidden_size": 4096,
                                  "num_attention_heads": 32, "head_dim": 128}})"));
    CHECK(read.mrope_section == std::array<Index, 3>{24, 20, 20});
    CHECK(read.mrope_interleaved);
    // The config reader takes Qwen-VL's text_config; Qwen3-VL's sections need not sum to the
    // head (transformers' own test config: head_dim 8, [16, 8, 8]).
    const seqembed::RotaryOptions nested = seqembed::io::rotary_options_from_json(nlohmann::json::parse(
        R"({"model_type": "qwen3_vl_moe", "text_config": {"hidden_size": 32, "num_attention_heads": 4,
            "rope_theta": 10000, "rope_scaling": {"rope_type": "default", "mrope_section": [16, 8, 8]}}})"));
    CHECK(nested.head_dim == 8);
    CHECK(nested.base == 10000.0);
    CHECK(nested.mrope_section == std::array<Index, 3>{16, 8, 8});
    CHECK(seqembed::RotaryEmbedding<float>(nested).multimodal_axis(3) == 0);
    // Qwen2.5-VL's module splits in blocks whatever a flag says.
    CHECK_FALSE(seqembed::io::rotary_options_from_json(nlohmann::json::parse(
                    R"({"model_type": "qwen2_5_vl", "hidden_size": 1536, "num_attention_heads": 12,
                        "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24], "mrope_interleaved": true}})"))
                    .mrope_interleaved);
    // A section that does not fit the head is named with its key.
    CHECK_THROWS_WITH(seqembed::io::rotary_options_from_json(nlohmann::json::parse(
                          R"({"model_type": "qwen2_vl", "hidden_size": 1536, "num_attention_heads": 12,
                              "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 16]}})")),
                      Catch::Contains("'rope_scaling.mrope_section' [16, 24, 16] does not sum to head_dim / 2 = 64"));
    CHECK_THROWS_WITH(seqembed::io::rotary_options_from_json(nlohmann::json::parse(
                          R"({"model_type": "qwen2_vl", "hidden_size": 1536, "num_attention_heads": 12,
                              "rope_scaling": {"type": "mrope", "mrope_section": [16, 24]}})")),
                      Catch::Contains("'rope_scaling.mrope_section' is [16,24], not a list of three integers"));
    // Other families have none.
    const IdMatrix two = IdMatrix::Zero(1, 2);
    CHECK_THROWS_WITH(seqembed::io::load_model(models / "llama").multimodal_positions(seqembed::Batch(two)),
                      Catch::Contains("model_type 'llama' has no multimodal positions"));
}

TEST_CASE("GLM-4V's configs give its rotary stage and vision ids, its checkpoints their table", "[io][mrope]") {
    // GLM-4.1V: rope_scaling's mrope_section over its partial rotation, interleaved pairs.
    const seqembed::io::Model glm = seqembed::io::load_model(models / "glm4v");
    const seqembed::RotaryOptions& options = glm.rotary()->options();
    CHECK(options.mrope_section == std::array<Index, 3>{2, 1, 1});
    CHECK_FALSE(options.mrope_interleaved);
    CHECK(options.layout == seqembed::RotaryLayout::interleaved);
    CHECK(options.head_dim == 16);
    CHECK(options.partial_rotary_factor == 0.5);
    // The config classes' ids where config.json says nothing.
    const seqembed::io::VisionTokens& vision = *glm.lookup()->vision;
    CHECK(vision.blocks == seqembed::io::VisionBlocks::image_token_runs);
    CHECK(vision.image_token_id == 151343);
    CHECK(vision.video_start_token_id == 151341);
    CHECK(vision.video_end_token_id == 151342);
    CHECK(vision.spatial_merge_size == 2);
    // GLM-4.5V: halves, rope_parameters' sections, its own image id.
    const seqembed::io::Model moe = seqembed::io::load_model(models / "glm4v_moe");
    CHECK(moe.rotary()->options().layout == seqembed::RotaryLayout::halves);
    CHECK(moe.rotary()->options().mrope_section == std::array<Index, 3>{1, 2, 1});
    CHECK(moe.lookup()->vision->image_token_id == 151363);
    // GLM-4.5V's published text_config (head_dim 128 over 96 heads of 4096, no sections: [8, 12,
    // 12] as transformers 5).
    const seqembed::RotaryOptions read = seqembed::io::rotary_options_from_json(nlohmann::json::parse(
        R"({"model_type": "glm4v_moe", "image_token_id": 151363, "text_config": {"hidden_size": 4096,
            "num_attention_heads": 96, "head_dim": 128, "partial_rotary_factor": 0.5, "rope_theta": 10000.0}})"));
    CHECK(read.head_dim == 128);
    CHECK(read.mrope_section == std::array<Index, 3>{8, 12, 12});
    CHECK(seqembed::RotaryEmbedding<float>(read).multimodal_axis(7) == 0);
    CHECK(seqembed::RotaryEmbedding<float>(read).multimodal_axis(8) == 1);
    CHECK(seqembed::RotaryEmbedding<float>(read).multimodal_axis(20) == 2);
    // A config without text_config: Glm4vConfig builds its text config from the top-level keys.
    const seqembed::RotaryOptions flat = seqembed::io::rotary_options_from_json(nlohmann::json::parse(
        R"({"model_type": "glm4v", "hidden_size": 4096, "num_attention_heads": 32, "partial_rotary_factor": 0.5})"));
    CHECK(flat.head_dim == 128);
    CHECK(flat.partial_rotary_factor == 0.5);
    CHECK(flat.mrope_section == std::array<Index, 3>{8, 12, 12});
    CHECK(flat.layout == seqembed::RotaryLayout::interleaved);
    // Text positions: the mask's count, padded tokens 1, as get_rope_index's text branch.
    IdMatrix ids(1, 4);
    ids << 0, 0, 11, 12;
    const IdMatrix mask = (IdMatrix(1, 4) << 0, 0, 1, 1).finished();
    seqembed::Batch padded(ids);
    padded.padding = seqembed::Padding::from_mask(mask);
    CHECK(glm.positions(padded) == (seqembed::io::Model::PositionVector(4) << 1, 1, 0, 1).finished());
}

TEST_CASE("GLM-4V's multimodal positions name runs that do not fit their grids", "[io][mrope][bad_input]") {
    const SmallVisionIds copy("glm4v");
    const seqembed::io::Model model = seqembed::io::load_model(copy.directory);
    IdMatrix ids(1, 9);
    ids << 11, 3, 7, 7, 4, 5, 3, 7, 6;  // an image of 2 tokens, a video frame of 1
    seqembed::io::VisionGrids grids;
    grids.image_grid_thw = (IdMatrix(1, 3) << 1, 2, 4).finished();
    CHECK_THROWS_WITH(model.multimodal_positions(seqembed::Batch(ids), grids),
                      Catch::Contains("sequence 0 holds video frame 0.0 but video_grid_thw has 0 rows"));
    grids.video_grid_thw = (IdMatrix(1, 3) << 1, 2, 2).finished();
    CHECK(model.multimodal_positions(seqembed::Batch(ids), grids).positions.row(2) ==
          (Eigen::Matrix<std::int64_t, 1, 9>() << 0, 1, 2, 3, 4, 5, 6, 7, 8).finished());
    grids.video_grid_thw << 1, 2, 4;  // 2 tokens a frame, the run has 1
    CHECK_THROWS_WITH(model.multimodal_positions(seqembed::Batch(ids), grids),
                      Catch::Contains("sequence 0 has a run of 1 video frame tokens from its real token 7 but its "
                                      "grid (1, 2, 4) covers 2"));
    grids.video_grid_thw << 1, 2, 2;
    grids.image_grid_thw << 1, 4, 4;
    CHECK_THROWS_WITH(model.multimodal_positions(seqembed::Batch(ids), grids),
                      Catch::Contains("has a run of 2 image tokens from its real token 2 but its grid (1, 4, 4) "
                                      "covers 4"));
}

TEST_CASE("Qwen-VL's decoding steps continue the prompt's positions by its rope deltas", "[io][mrope]") {
    const IndexCase& c = seqembed_mrope_fixtures::index_cases().front();  // images and videos, left padding
    const SmallVisionIds copy(c.family);
    const seqembed::io::Model model = seqembed::io::load_model(copy.directory);
    const seqembed::io::MultimodalPositions prompt = positions_of(model, c);
    // One new token per sequence, the mask over past + current: Hugging Face's
    // cache_position[0] + rope_deltas, the same on all three axes.
    IdMatrix next(c.batch, 1);
    next.setConstant(20);
    IdMatrix wide(c.batch, c.seq + 1);
    wide << matrix_of(c.mask, c.batch, c.seq), IdMatrix::Ones(c.batch, 1);
    seqembed::Batch step(next);
    step.padding = seqembed::Padding::from_mask(wide);
    const auto after = model.multimodal_positions(step, prompt.rope_deltas);
    for (Index b = 0; b < c.batch; ++b) {
        std::int64_t largest = 0;
        for (Index t = 0; t < c.seq; ++t) largest = std::max(largest, prompt.positions.col(b * c.seq + t).maxCoeff());
        for (Index a = 0; a < 3; ++a) CHECK(after(a, b) == largest + 1);  // the prompt's next position
    }
    CHECK_THROWS_AS(model.multimodal_positions(step, std::vector<std::int64_t>{0}), seqembed::shape_error);
    CHECK_THROWS_WITH(model.multimodal_positions(step), Catch::Contains("numbers a prompt"));
    IdMatrix given(c.batch, 1);
    given.setConstant(3);
    seqembed::Batch with_ids(next);
    with_ids.position_ids = given;
    CHECK_THROWS_WITH(model.multimodal_positions(with_ids, prompt.rope_deltas), Catch::Contains("takes no position ids"));
    seqembed::Batch offset(next);
    offset.offsets = seqembed::StepOffsets(4);
    CHECK_THROWS_WITH(model.multimodal_positions(offset), Catch::Contains("numbers a prompt"));
    // Without a mask, the step offsets say the cache's length.
    IdMatrix one_next(1, 1);
    one_next << 20;
    seqembed::Batch counted(one_next);
    counted.offsets = seqembed::StepOffsets(9);
    CHECK(model.multimodal_positions(counted, std::vector<std::int64_t>{-3})(1, 0) == 6);
}

TEST_CASE("Qwen-VL's multimodal positions name grids that do not fit the ids", "[io][mrope][bad_input]") {
    const SmallVisionIds copy("qwen2_vl");
    const seqembed::io::Model model = seqembed::io::load_model(copy.directory);
    IdMatrix ids(1, 7);
    ids << 11, 5, 7, 7, 7, 6, 12;  // an image of 3 tokens
    const seqembed::Batch batch(ids);
    seqembed::io::VisionGrids grids;
    CHECK_NOTHROW(model.multimodal_positions(batch, grids));  // no grids: the text rule
    grids.video_grid_thw = IdMatrix(1, 3);
    grids.video_grid_thw << 1, 2, 2;
    CHECK_THROWS_WITH(model.multimodal_positions(batch, grids),
                      Catch::Contains("holds image 0 but image_grid_thw has 0 rows"));
    grids.image_grid_thw = IdMatrix(1, 3);
    grids.image_grid_thw << 1, 2, 4;  // 2 tokens of the 3: the third numbered as text, as Hugging Face's
    CHECK(model.multimodal_positions(batch, grids).positions.row(0) ==
          (Eigen::Matrix<std::int64_t, 1, 7>() << 0, 1, 2, 2, 4, 5, 6).finished());
    grids.image_grid_thw << 1, 2, 12;  // 6 tokens past the sequence's end
    CHECK_THROWS_WITH(model.multimodal_positions(batch, grids),
                      Catch::Contains("sequence 0 has 7 real tokens but its text and grids give 8"));
    grids.image_grid_thw << 1, 2, 6;
    CHECK_NOTHROW(model.multimodal_positions(batch, grids));
    grids.image_grid_thw << 1, 1, 6;
    CHECK_THROWS_WITH(model.multimodal_positions(batch, grids),
                      Catch::Contains("grid (1, 1, 6) is narrower than spatial_merge_size 2"));
    grids.image_grid_thw << 1, 0, 6;
    CHECK_THROWS_WITH(model.multimodal_positions(batch, grids),
                      Catch::Contains("VisionGrids::image_grid_thw(0, 1) is 0, not a positive patch count"));
    grids.image_grid_thw << 1, 2, 6;
    grids.second_per_grid_ts = {1.0, 2.0};
    CHECK_THROWS_WITH(model.multimodal_positions(batch, grids),
                      Catch::Contains("second_per_grid_ts has 2 values for 1 videos"));
    // An image announced whose tokens the image before it took (Hugging Face's .index fails).
    IdMatrix taken(1, 4);
    taken << 5, 7, 5, 7;
    grids.second_per_grid_ts.clear();
    grids.image_grid_thw.resize(2, 3);
    grids.image_grid_thw << 1, 2, 6, 1, 2, 2;
    CHECK_THROWS_WITH(model.multimodal_positions(seqembed::Batch(taken), grids),
                      Catch::Contains("sequence 0 announces 1 more images and 0 more videos after vision start "
                                      "tokens than it holds the tokens of past its token 4"));
    // Qwen3-VL: a video of very many frames is walked frame by frame, never expanded.
    const SmallVisionIds qwen3_copy("qwen3_vl");
    const seqembed::io::Model qwen3 = seqembed::io::load_model(qwen3_copy.directory);
    IdMatrix frames(1, 8);
    frames << 11, 5, 8, 6, 12, 5, 8, 6;
    seqembed::io::VisionGrids many;
    many.video_grid_thw = IdMatrix(8, 3);
    many.video_grid_thw.setConstant(1 << 24);
    many.video_grid_thw.col(1).setConstant(2);
    many.video_grid_thw.col(2).setConstant(2);
    const auto walked = qwen3.multimodal_positions(seqembed::Batch(frames), many);
    CHECK(walked.positions.row(0) == (Eigen::Matrix<std::int64_t, 1, 8>() << 0, 1, 2, 3, 4, 5, 6, 7).finished());
}
