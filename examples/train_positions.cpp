// Trains a learned position table from random initialisation on a task where only order
// matters: the tokens are random, and a linear read-out written here must tell each token's
// position from the pipeline's output row. The loss is the read-out's cross-entropy over the
// positions; its gradient goes back through dropout into the position and token tables
// (InputPipeline::backward), which Adam and SparseAdam step (seqembed/optim.hpp).
//
//   train_positions --steps 300 --output positions.png
//
// It prints a progress line every 10 steps, stops once the loss has fallen tenfold (or at
// --steps), and writes a PNG of two heatmaps side by side: the cosine similarity of every pair
// of rows of the learned table (left) and of the sinusoidal table of the same size (right),
// -1 blue, 0 white, +1 red.
#include <seqembed/optim.hpp>
#include <seqembed/seqembed.hpp>

#include "command_line.hpp"
#include "png_output.hpp"  // compiles stb_image_write for this program

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr const char* program = "train_positions";

using seqembed::Index;
using seqembed::RowMatrix;
using seqembed_examples::UsageError;

struct Settings {
    std::uint64_t steps = 300;
    std::uint64_t seed = 1;
    std::string output = "positions.png";
};

// The task's size: every sequence has up to `positions` tokens, right-padded to that length.
constexpr Index vocab = 64;
constexpr Index width = 32;
constexpr Index positions = 24;
constexpr Index batch_size = 16;
constexpr int pixels_per_cell = 8;

void print_usage(std::FILE* stream) {
    std::fprintf(stream,
                 "Usage: %s [options]\n"
                 "Trains a learned position table on telling each token's position, and writes a PNG\n"
                 "of its rows' cosine similarities beside the sinusoidal table's.\n"
                 "\n"
                 "  --steps N     at most N training steps (default 300)\n"
                 "  --seed N      the seed of the data and the initialisation (default 1)\n"
                 "  --output FILE the PNG to write (default positions.png)\n"
                 "  --help        this text\n",
                 program);
}

std::optional<Settings> parse_command_line(int argc, char** argv) {
    Settings settings;
    const bool go = seqembed_examples::read_options(
        argc, argv, {"--steps", "--seed", "--output"}, [&](const std::string& flag, const std::string& value) {
            if (flag == "--steps") settings.steps = seqembed_examples::parse_count(flag, value, 1, 100000);
            if (flag == "--seed") settings.seed = seqembed_examples::parse_count(flag, value, 0);
            if (flag == "--output") {
                if (value.empty()) throw UsageError("--output needs a file name");
                settings.output = value;
            }
        });
    if (!go) return std::nullopt;
    return settings;
}

RowMatrix<float> normal_matrix(Index rows, Index cols, float spread, std::mt19937_64& generator) {
    std::normal_distribution<float> normal(0.0f, spread);
    RowMatrix<float> m(rows, cols);
    for (Index k = 0; k < m.size(); ++k) m.data()[k] = normal(generator);
    return m;
}

/// A batch of random tokens, each sequence right-padded after a random length.
struct Batch {
    seqembed::IdMatrix ids{batch_size, positions};
    std::vector<Index> lengths;
};

Batch random_batch(std::mt19937_64& generator) {
    Batch batch;
    std::uniform_int_distribution<Index> token(1, vocab - 1);
    std::uniform_int_distribution<Index> length(positions / 2, positions);
    for (Index b = 0; b < batch_size; ++b) {
        batch.lengths.push_back(length(generator));
        for (Index t = 0; t < positions; ++t) batch.ids(b, t) = t < batch.lengths.back() ? token(generator) : 0;
    }
    return batch;
}

/// The read-out's cross-entropy over the real tokens, and its gradients: of the logits' weights
/// and of the pipeline's output (zero on padded rows).
struct Loss {
    double value = 0;
    RowMatrix<float> grad_out;
    RowMatrix<float> grad_readout;
};

Loss cross_entropy(const RowMatrix<float>& out, const RowMatrix<float>& readout, const Batch& batch) {
    Loss loss;
    loss.grad_out = RowMatrix<float>::Zero(out.rows(), out.cols());
    loss.grad_readout = RowMatrix<float>::Zero(readout.rows(), readout.cols());
    Index real = 0;
    for (Index length : batch.lengths) real += length;
    for (Index b = 0; b < batch_size; ++b) {
        for (Index t = 0; t < batch.lengths[static_cast<std::size_t>(b)]; ++t) {
            const Index row = b * positions + t;
            Eigen::RowVectorXf logits = out.row(row) * readout;
            const float top = logits.maxCoeff();
            Eigen::RowVectorXf p = (logits.array() - top).exp();
            const float total = p.sum();
            p /= total;
            loss.value -= std::log(static_cast<double>(p[t]));
            p[t] -= 1.0f;  // the gradient of the logits, before the mean over tokens
            p /= static_cast<float>(real);
            loss.grad_out.row(row) = p * readout.transpose();
            loss.grad_readout += out.row(row).transpose() * p;
        }
    }
    loss.value /= static_cast<double>(real);
    return loss;
}

/// Cosine similarity of every pair of rows.
RowMatrix<float> cosine_similarity(const RowMatrix<float>& table) {
    RowMatrix<float> unit = table;
    for (Index r = 0; r < unit.rows(); ++r) unit.row(r).normalize();
    return unit * unit.transpose();
}

/// White at 0, saturating to blue at -1 and red at +1.
void paint(std::vector<std::uint8_t>& pixels, int image_width, int x0, const RowMatrix<float>& values) {
    for (Index r = 0; r < values.rows(); ++r) {
        for (Index c = 0; c < values.cols(); ++c) {
            const float v = std::clamp(values(r, c), -1.0f, 1.0f);
            const auto fade = static_cast<std::uint8_t>(std::lround(255.0f * (1.0f - std::abs(v))));
            const std::uint8_t rgb[3] = {v < 0 ? fade : std::uint8_t{255}, fade, v > 0 ? fade : std::uint8_t{255}};
            for (int dy = 0; dy < pixels_per_cell; ++dy)
                for (int dx = 0; dx < pixels_per_cell; ++dx) {
                    const auto y = static_cast<int>(r) * pixels_per_cell + dy;
                    const auto x = x0 + static_cast<int>(c) * pixels_per_cell + dx;
                    const auto at = static_cast<std::size_t>(3 * (y * image_width + x));
                    for (std::size_t k = 0; k < 3; ++k) pixels[at + k] = rgb[k];
                }
        }
    }
}

int run(const Settings& settings) {
    std::mt19937_64 generator(settings.seed);
    seqembed::TokenEmbeddingOptions token_options;
    token_options.scale = seqembed::EmbeddingScale::none();
    token_options.padding_idx = 0;
    seqembed::PipelineOptions options;
    options.dropout = 0.1;
    options.dropout_seed = settings.seed;
    // BERT's initialisation, N(0, 0.02): the position rows start nearly alike.
    seqembed::InputPipeline<float, seqembed::LearnedPositionalEmbedding<float>> pipeline(
        seqembed::TokenEmbedding<float>::from_weights(normal_matrix(vocab, width, 0.02f, generator), token_options),
        seqembed::LearnedPositionalEmbedding<float>::from_weights(normal_matrix(positions, width, 0.02f, generator)),
        options);
    pipeline.set_training(true);
    RowMatrix<float> readout = normal_matrix(width, positions, 0.02f, generator);

    seqembed::optim::SparseAdam<float> token_step("token table", vocab, width);
    seqembed::optim::Adam<float> position_step("position table", positions, width);
    seqembed::optim::Adam<float> readout_step("read-out", width, positions);
    constexpr double lr = 0.01;

    double first_loss = 0;
    double loss = 0;
    std::uint64_t step = 0;
    for (; step < settings.steps; ++step) {
        const Batch data = random_batch(generator);
        seqembed::Batch batch(data.ids, seqembed::Padding::right(data.lengths), {});
        const std::uint64_t call = pipeline.dropout().calls();
        const RowMatrix<float> out = pipeline.forward(batch);
        const Loss result = cross_entropy(out, readout, data);
        loss = result.value;
        if (step == 0) first_loss = loss;
        if (step % 10 == 0) std::printf("step %4llu  loss %.4f\n", static_cast<unsigned long long>(step), loss);
        if (loss * 10.0 <= first_loss) break;
        const seqembed::PipelineGradients<float> grads = pipeline.backward(batch, result.grad_out, call);
        seqembed::PipelineTables<float> tables = pipeline.trainable();
        token_step.step(tables.token->weights, grads.token, lr);
        position_step.step(tables.positions->weights, grads.positions, lr);
        readout_step.step(readout, result.grad_readout, lr);
    }
    std::printf("step %4llu  loss %.4f: fell %.1fx from %.4f\n", static_cast<unsigned long long>(step), loss,
                first_loss / loss, first_loss);

    const RowMatrix<float> learned = cosine_similarity(RowMatrix<float>(pipeline.positions().table()));
    const RowMatrix<float> fixed =
        cosine_similarity(seqembed::SinusoidalPositionalEncoding<float>(width).forward(0, positions));
    const int panel = static_cast<int>(positions) * pixels_per_cell;
    const int gap = pixels_per_cell;
    const int image_width = 2 * panel + gap;
    std::vector<std::uint8_t> pixels(static_cast<std::size_t>(3 * image_width * panel), 255);
    paint(pixels, image_width, 0, learned);
    paint(pixels, image_width, panel + gap, fixed);
    seqembed_examples::write_atomically(settings.output, seqembed_examples::encode_png(pixels, image_width, panel));
    std::printf("wrote %s: %d x %d pixels (left: the learned table, right: the sinusoidal one)\n",
                settings.output.c_str(), image_width, panel);
    return loss * 10.0 <= first_loss ? seqembed_examples::exit_success : seqembed_examples::exit_failure;
}

}  // namespace

int main(int argc, char** argv) {
    return seqembed_examples::run_main(
        program, [&] { return parse_command_line(argc, argv); }, run, print_usage);
}
