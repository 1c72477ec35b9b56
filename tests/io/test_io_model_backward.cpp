// io::Model::backward against PyTorch's autograd for every family of the generated checkpoints
// (tests/reference/generate_family_backward_fixtures.py: each family's embedding stage in
// float64, the gradient of sum(output * grad_output) for each of its parameters). Within 4e-6
// relative to max(1, |y|), the bound of issue 28, for every table, LayerNorm and projection.
#include <seqembed/io/model.hpp>
#include <seqembed/io/safetensors.hpp>
#include <seqembed/optim.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "catch.hpp"
#include "io_test_support.hpp"

namespace model_backward_test {

using seqembed::Index;
using seqembed::RowMatrix;
using seqembed::io::SafetensorsFile;
using Dense = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr double bound = 4e-6;

/// The generated family checkpoints, tests/fixtures/models.
std::filesystem::path models_directory() {
    return std::filesystem::path(SEQEMBED_SOURCE_DIR) / "tests" / "fixtures" / "models";
}

/// The largest |got - want| / max(1, |want|).
double worst(const Dense& got, const Dense& want) {
    REQUIRE(got.rows() == want.rows());
    REQUIRE(got.cols() == want.cols());
    double out = 0;
    for (Index r = 0; r < got.rows(); ++r)
        for (Index c = 0; c < got.cols(); ++c)
            out = std::max(out, std::fabs(got(r, c) - want(r, c)) / std::max(1.0, std::fabs(want(r, c))));
    return out;
}

Dense read_dense(const SafetensorsFile& file, const std::string& name) {
    const auto tensor = file.tensor<double>(name);
    const Index rows = tensor.shape().size() == 2 ? tensor.shape()[0] : 1;
    const Index cols = tensor.shape().back();
    return Eigen::Map<const Dense>(tensor.data(), rows, cols);
}

/// A fixture's row-sparse gradient as a table_rows-row matrix.
Dense expected_table(const SafetensorsFile& file, const std::string& name, Index table_rows) {
    const Dense values = read_dense(file, name);
    const auto rows = file.integers(name + ".rows");
    Dense dense = Dense::Zero(table_rows, values.cols());
    for (Index k = 0; k < rows.shape()[0]; ++k) {
        REQUIRE(rows.data()[k] < table_rows);
        dense.row(rows.data()[k]) = values.row(k);
    }
    return dense;
}

Dense dense_of(const seqembed::RowGradient<float>& gradient) { return gradient.to_dense().cast<double>(); }

/// A float tensor of the checkpoint whose name ends with `suffix`.
Dense checkpoint_tensor(const std::filesystem::path& directory, const std::string& suffix) {
    const SafetensorsFile model = SafetensorsFile::open(directory / "model.safetensors");
    for (const seqembed::io::TensorInfo& info : model.tensors()) {
        const std::string& name = info.name;
        if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
            return model.matrix<float>(name).matrix().cast<double>();
    }
    FAIL("no tensor ending in " << suffix << " in " << directory);
    return {};
}

}  // namespace model_backward_test

namespace model_backward_test {

/// How many of each path the comparisons took.
struct Counts {
    int folded_projections = 0;
    int task_rows = 0;
    int projections = 0;
    int layer_norms = 0;
};

/// model.backward(batch, <prefix>.grad_output) against the fixture's gradients under `prefix`.
void compare(const seqembed::io::Model& model, const std::filesystem::path& directory, const SafetensorsFile& file,
             const std::string& prefix, const seqembed::Batch& batch, Counts& counts) {
    const auto key = [&](const char* role) { return prefix + "." + role; };
    const RowMatrix<float> grad = file.matrix<float>(key("grad_output")).matrix();
    const seqembed::io::ModelGradients got = model.backward(batch, grad);
    const seqembed::PipelineGradients<float>& stage = got.stage;

    // OPT's project_in is folded into the token table the stage holds (table x W^T), so the
    // checkpoint's table has the folded gradient times W, and W the folded gradient's rows
    // times the table's.
    const bool folded = file.contains(key("projection_weight")) && model.projection() == nullptr;
    if (folded) {
        ++counts.folded_projections;
        const Dense table = checkpoint_tensor(directory, "embed_tokens.weight");
        const Dense w = checkpoint_tensor(directory, "project_in.weight");
        const Dense folded_gradient = dense_of(stage.token);
        CHECK(worst(folded_gradient * w, expected_table(file, key("token"), table.rows())) <= bound);
        // A row that reads the pad id (and passes a gradient) adds to W's gradient in the
        // framework, but the folded table's padding_idx row takes none: only without such rows is
        // W's gradient the product.
        const auto& pipeline = model.learned()->pipeline;
        const std::optional<seqembed::TokenId> pad = pipeline.embedding().padding_idx();
        bool reads_pad = false;
        for (Index b = 0; b < batch.ids.rows(); ++b)
            for (Index t = 0; t < batch.ids.cols(); ++t)
                reads_pad = reads_pad || (batch.ids(b, t) == pad && grad.row(b * batch.ids.cols() + t).any());
        if (!reads_pad)
            CHECK(worst(folded_gradient.transpose() * table, read_dense(file, key("projection_weight"))) <= bound);
    } else {
        REQUIRE(file.contains(key("token")));
        CHECK(worst(dense_of(stage.token), expected_table(file, key("token"), stage.token.table_rows)) <= bound);
    }
    if (file.contains(key("positions"))) {
        CHECK(worst(dense_of(stage.positions), expected_table(file, key("positions"), stage.positions.table_rows)) <=
              bound);
    } else {
        CHECK(stage.positions.empty());
    }
    if (file.contains(key("task_types"))) {
        // ERNIE's task row 0 is folded into the position table: its gradient is the sum of theirs.
        ++counts.task_rows;
        const Dense summed = dense_of(stage.positions).colwise().sum();
        CHECK(worst(summed, expected_table(file, key("task_types"), 1)) <= bound);
    }
    if (file.contains(key("token_types"))) {
        CHECK(worst(dense_of(stage.token_types),
                    expected_table(file, key("token_types"), stage.token_types.table_rows)) <= bound);
    } else {
        CHECK(stage.token_types.empty());
    }
    if (file.contains(key("gamma"))) {
        ++counts.layer_norms;
        CHECK(worst(stage.gamma.cast<double>(), read_dense(file, key("gamma"))) <= bound);
    } else {
        CHECK(stage.gamma.size() == 0);
    }
    if (file.contains(key("beta"))) {
        CHECK(worst(stage.beta.cast<double>(), read_dense(file, key("beta"))) <= bound);
    } else {
        CHECK(stage.beta.size() == 0);
    }
    if (!folded && file.contains(key("projection_weight"))) {
        ++counts.projections;
        CHECK(worst(got.projection_weight.cast<double>(), read_dense(file, key("projection_weight"))) <= bound);
        CHECK(worst(got.projection_bias.cast<double>(), read_dense(file, key("projection_bias"))) <= bound);
    } else if (!folded) {
        CHECK(got.projection_weight.size() == 0);
    }
}

}  // namespace model_backward_test

TEST_CASE("io::Model::backward gives PyTorch autograd's gradients for every model family", "[io][models][backward]") {
    using namespace model_backward_test;
    const std::filesystem::path root = models_directory();
    std::vector<std::filesystem::path> directories;
    for (const auto& entry : std::filesystem::directory_iterator(root))
        if (std::filesystem::exists(entry.path() / "backward.safetensors")) directories.push_back(entry.path());
    std::sort(directories.begin(), directories.end());
    CHECK(directories.size() == 181);
    seqembed::PipelineOptions computed_rows;
    computed_rows.padded_rows = seqembed::PaddedRows::computed;
    Counts counts, computed_counts;
    for (const std::filesystem::path& directory : directories) {
        const std::string family = directory.filename().string();
        INFO(family);
        const seqembed::io::Model model = seqembed::io::load_model(directory);
        const seqembed::io::Model computed = seqembed::io::load_model(directory, computed_rows);
        const SafetensorsFile file = SafetensorsFile::open(directory / "backward.safetensors");
        for (const std::string case_name : {"right_padding", "left_padding", "no_padding", "low_ids"}) {
            INFO(case_name);
            // The batch views these.
            const seqembed::IdMatrix ids = file.ids(case_name + ".input_ids");
            const seqembed::IdMatrix mask = file.ids(case_name + ".attention_mask");
            const bool typed = file.contains(case_name + ".token_type_ids");
            const seqembed::IdMatrix types = typed ? file.ids(case_name + ".token_type_ids") : seqembed::IdMatrix();
            seqembed::Batch batch(ids);
            batch.padding = seqembed::Padding::from_mask(mask);
            if (typed) batch.token_types = types;
            compare(model, directory, file, case_name, batch, counts);
            // Every row's gradient, padded ones too, through the rows the framework computes.
            const bool padded = (mask.array() == 0).any();
            REQUIRE(file.contains(case_name + ".computed.grad_output") == padded);
            if (padded) compare(computed, directory, file, case_name + ".computed", batch, computed_counts);
        }
    }
    // What the families above hold, so that none of the paths goes untested.
    CHECK(counts.folded_projections == 4);
    CHECK(counts.task_rows == 4);
    CHECK(counts.projections == 20);
    CHECK(counts.layer_norms == 196);
    CHECK(computed_counts.layer_norms == 98);
}

TEST_CASE("io::Model::backward takes a training forward's call, and checks what it is given",
          "[io][models][backward]") {
    using namespace model_backward_test;
    const std::filesystem::path root = models_directory();
    seqembed::PipelineOptions options;
    options.dropout = 0.25;
    options.dropout_seed = 7;
    seqembed::io::Model electra = seqembed::io::load_model(root / "electra", options);
    REQUIRE(electra.projection() != nullptr);
    const SafetensorsFile file = SafetensorsFile::open(root / "electra" / "backward.safetensors");
    const seqembed::IdMatrix ids = file.ids("right_padding.input_ids");
    const seqembed::IdMatrix mask = file.ids("right_padding.attention_mask");
    seqembed::Batch batch(ids);
    batch.padding = seqembed::Padding::from_mask(mask);
    const RowMatrix<float> grad = file.matrix<float>("right_padding.grad_output").matrix();

    SECTION("the projection's input is the training forward's output, its mask included") {
        electra.set_training(true);
        auto& pipeline = electra.learned()->pipeline;
        static_cast<void>(pipeline.forward(batch));  // call 0
        const std::uint64_t call = electra.next_call();
        CHECK(call == 1);
        RowMatrix<float> x(ids.size(), pipeline.d_model());
        REQUIRE(pipeline.forward_into(batch, x) == call);
        Index dropped = 0;
        for (Index k = 0; k < x.size(); ++k) dropped += x.data()[k] == 0.0f ? 1 : 0;
        CHECK(dropped > x.size() / 8);  // the mask took values
        const seqembed::io::ModelGradients got = electra.backward(batch, grad, call);
        const seqembed::io::LinearGradients want = electra.projection()->backward(x, grad);
        CHECK((got.projection_weight.array() == want.weight.array()).all());
        CHECK((got.projection_bias.array() == want.bias.array()).all());
        const seqembed::PipelineGradients<float> stage = pipeline.backward(batch, want.x, call);
        CHECK((got.stage.token.values.array() == stage.token.values.array()).all());
        CHECK((got.stage.gamma.array() == stage.gamma.array()).all());
        // Another call's mask gives other gradients.
        const seqembed::io::ModelGradients other = electra.backward(batch, grad, 0);
        CHECK((other.projection_weight.array() != got.projection_weight.array()).any());
    }
    SECTION("accumulation adds two backwards as one of both batches") {
        seqembed::io::ModelGradients sum = electra.backward(batch, grad);
        sum.add(electra.backward(batch, grad));
        const seqembed::io::ModelGradients once = electra.backward(batch, grad);
        CHECK(sum.projection_weight == 2.0f * once.projection_weight);  // x + x is 2x exactly
        CHECK(sum.projection_bias == 2.0f * once.projection_bias);
        CHECK(sum.stage.gamma == 2.0f * once.stage.gamma);
        seqembed::io::ModelGradients other;
        other.projection_weight = RowMatrix<float>::Zero(3, 3);
        const RowMatrix<float> before = sum.projection_weight;
        CHECK_THROWS_AS(sum.add(other), seqembed::shape_error);
        CHECK(sum.projection_weight == before);
    }
    SECTION("a dense optimizer steps the projection") {
        seqembed::io::Linear& projection = *electra.learned()->projection;
        const RowMatrix<float> weight = projection.weight;
        const Eigen::Matrix<float, 1, Eigen::Dynamic> bias = projection.bias;
        const seqembed::io::ModelGradients got = electra.backward(batch, grad);
        seqembed::optim::Adam<float> weight_step("projection weight", weight.rows(), weight.cols());
        seqembed::optim::Adam<float> bias_step("projection bias", 1, bias.cols());
        weight_step.step(projection.weight, got.projection_weight, 1e-2);
        bias_step.step(projection.bias, got.projection_bias, 1e-2);
        // Adam's first step moves each value by lr against its gradient's sign.
        for (Index k = 0; k < weight.size(); ++k)
            if (got.projection_weight.data()[k] != 0.0f)
                CHECK((projection.weight.data()[k] < weight.data()[k]) == (got.projection_weight.data()[k] > 0.0f));
        CHECK((projection.bias.array() != bias.array()).all());
    }
    SECTION("bad input") {
        CHECK_THROWS_AS(electra.backward(batch, RowMatrix<float>::Zero(ids.size(), 8)), seqembed::shape_error);
        CHECK_THROWS_AS(electra.backward(batch, grad, 5), seqembed::value_error);  // a call never used
        const seqembed::io::Model bert = seqembed::io::load_model(root / "bert");
        CHECK_THROWS_AS(bert.backward_decoder(batch, grad), seqembed::value_error);  // no decoder stage
    }
}

TEST_CASE("io::Model::backward refuses an ESM sequence of mask tokens alone, as forward does",
          "[io][models][backward]") {
    using namespace model_backward_test;
    const std::filesystem::path root = models_directory();
    for (const char* family : {"esm", "esm1b"}) {
        INFO(family);
        const seqembed::io::Model model = seqembed::io::load_model(root / family);
        const auto mask_id = static_cast<seqembed::TokenId>(model.config().mask_token_id.value());
        const seqembed::IdMatrix ids = seqembed::IdMatrix::Constant(2, 4, mask_id);
        const seqembed::Batch batch(ids);
        const RowMatrix<float> grad = RowMatrix<float>::Ones(ids.size(), model.learned() != nullptr
                                                                             ? model.learned()->pipeline.d_model()
                                                                             : model.lookup()->pipeline.d_model());
        CHECK_THROWS_AS(model.forward(batch), seqembed::value_error);
        const std::string message =
            test_support::message_of<seqembed::value_error>([&] { static_cast<void>(model.backward(batch, grad)); });
        CHECK(message.find("sequence 0 has 4 mask tokens") != std::string::npos);
    }
}

TEST_CASE("io::Model::backward_decoder is the decoder stage's backward, its fixed sinusoid left out",
          "[io][models][backward]") {
    using namespace model_backward_test;
    const std::filesystem::path root = models_directory();
    for (const char* family : {"m2m_100", "fsmt"}) {
        INFO(family);
        const seqembed::io::Model model = seqembed::io::load_model(root / family);
        REQUIRE(model.has_decoder());
        const seqembed::IdMatrix ids = seqembed::IdMatrix::Constant(2, 5, 3);
        const seqembed::Batch batch(ids);
        const auto& decoder = *model.learned()->decoder;
        RowMatrix<float> grad(ids.size(), decoder.d_model());
        for (Index k = 0; k < grad.size(); ++k) grad.data()[k] = static_cast<float>(k % 7) - 3.0f;
        const seqembed::PipelineGradients<float> got = model.backward_decoder(batch, grad);
        const seqembed::PipelineGradients<float> want = decoder.backward(batch, grad);
        CHECK((got.token.values.array() == want.token.values.array()).all());
        CHECK(got.positions.empty());  // a constant table in the framework's module
        CHECK_FALSE(want.positions.empty());
    }
}

TEST_CASE("io::Model::backward converts explicit position ids as forward does", "[io][models][backward]") {
    using namespace model_backward_test;
    const std::filesystem::path root = models_directory();
    for (const char* family : {"roberta", "bert", "gpt2"}) {
        INFO(family);
        const seqembed::io::Model model = seqembed::io::load_model(root / family);
        const SafetensorsFile file = SafetensorsFile::open(root / family / "backward.safetensors");
        const seqembed::IdMatrix ids = file.ids("left_padding.input_ids");
        const seqembed::IdMatrix mask = file.ids("left_padding.attention_mask");
        seqembed::Batch batch(ids);
        batch.padding = seqembed::Padding::from_mask(mask);
        const RowMatrix<float> grad = file.matrix<float>("left_padding.grad_output").matrix();
        // The ids the family's forward would compute, given as Hugging Face takes them (RoBERTa's
        // are table rows).
        const seqembed::io::Model::PositionVector positions = model.positions(batch);
        const std::int64_t shift =
            std::string(family) == "roberta" ? model.learned()->pipeline.positions().offset() : 0;
        seqembed::IdMatrix given(ids.rows(), ids.cols());
        for (Index k = 0; k < given.size(); ++k) given.data()[k] = positions[k] + shift;
        seqembed::Batch explicit_ids = batch;
        explicit_ids.position_ids = given;
        const seqembed::io::ModelGradients by_rule = model.backward(batch, grad);
        const seqembed::io::ModelGradients by_ids = model.backward(explicit_ids, grad);
        CHECK(by_ids.stage.positions.rows == by_rule.stage.positions.rows);
        CHECK((by_ids.stage.positions.values.array() == by_rule.stage.positions.values.array()).all());
        CHECK((by_ids.stage.token.values.array() == by_rule.stage.token.values.array()).all());
        // Other ids read other rows.
        const seqembed::IdMatrix one_row = seqembed::IdMatrix::Constant(ids.rows(), ids.cols(), shift + 1);
        explicit_ids.position_ids = one_row;
        CHECK(model.backward(explicit_ids, grad).stage.positions.rows.size() == 1);
    }
}
