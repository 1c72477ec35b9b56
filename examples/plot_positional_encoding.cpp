// Writes a PNG heatmap of a sinusoidal position table, the picture every transformer tutorial
// shows: one row of pixels per position (position 0 at the top), one column per dimension,
// -1 blue, 0 white, +1 red.
//
//   plot_positional_encoding --preset paper --length 128 --d-model 128 --output pe.png
//
// The PNG is encoded in memory by stb_image_write, written to a temporary file beside the target
// and renamed over it, so a failure never leaves a partial picture behind.
#include <seqembed/sinusoidal.hpp>

#include "command_line.hpp"
#include "png_output.hpp"  // compiles stb_image_write for this program

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace {

constexpr const char* program = "plot_positional_encoding";
// Wider or taller images are refused: 8192 x 8192 RGB is already 200 MB before compression.
constexpr std::uint64_t max_pixels_per_side = 8192;

using seqembed_examples::UsageError;

struct Settings {
    std::string preset = "paper";
    std::optional<seqembed::SinCosLayout> layout;  // the preset's unless given
    std::uint64_t length = 128;
    std::uint64_t d_model = 128;
    std::uint64_t scale = 4;
    std::string output = "positional_encoding.png";
};

void print_usage(std::FILE* stream) {
    std::fprintf(
        stream,
        "Usage: %s [options]\n"
        "Writes a PNG heatmap of a sinusoidal position table: one row per position (position 0\n"
        "at the top), one column per dimension; -1 blue, 0 white, +1 red.\n"
        "\n"
        "  --preset NAME    paper (default), tensor2tensor, fairseq, marian, hf_marian or\n"
        "                   ctranslate2 (seqembed::SinusoidalOptions::NAME())\n"
        "  --layout NAME    interleaved or concatenated (default: the preset's)\n"
        "  --length N       positions, i.e. rows of the table (default 128)\n"
        "  --d-model N      dimensions, i.e. columns of the table (default 128)\n"
        "  --scale K        pixels per cell side (default 4); the image is\n"
        "                   (d-model x K) by (length x K) pixels, at most %llu on each side\n"
        "  --output FILE    the PNG to write (default positional_encoding.png)\n"
        "  --help           this text\n"
        "\n"
        "Options also take the form --name=value. Exit status: 0 written, 1 the table or the\n"
        "file could not be made, 2 bad command line.\n",
        program, static_cast<unsigned long long>(max_pixels_per_side));
}

seqembed::SinusoidalOptions preset_options(const std::string& name) {
    if (name == "paper") return seqembed::SinusoidalOptions::paper();
    if (name == "tensor2tensor") return seqembed::SinusoidalOptions::tensor2tensor();
    if (name == "fairseq") return seqembed::SinusoidalOptions::fairseq(/*padding_idx=*/1);
    if (name == "marian") return seqembed::SinusoidalOptions::marian();
    if (name == "hf_marian") return seqembed::SinusoidalOptions::hf_marian();
    if (name == "ctranslate2") return seqembed::SinusoidalOptions::ctranslate2();
    throw UsageError("unknown --preset '" + name +
                     "' (paper, tensor2tensor, fairseq, marian, hf_marian, ctranslate2)");
}

seqembed::SinCosLayout parse_layout(const std::string& name) {
    if (name == "interleaved") return seqembed::SinCosLayout::interleaved;
    if (name == "concatenated") return seqembed::SinCosLayout::concatenated;
    throw UsageError("unknown --layout '" + name + "' (interleaved, concatenated)");
}

const char* layout_name(seqembed::SinCosLayout layout) {
    return layout == seqembed::SinCosLayout::interleaved ? "interleaved" : "concatenated";
}

void require_fits(const char* side, const char* flag, std::uint64_t cells, std::uint64_t scale) {
    if (cells > max_pixels_per_side / scale)
        throw UsageError(std::string(flag) + " " + std::to_string(cells) + " at --scale " +
                         std::to_string(scale) + " makes the image " + side + " than " +
                         std::to_string(max_pixels_per_side) + " pixels; lower it or the scale");
}

/// Reads the command line; returns nothing when --help was asked for.
std::optional<Settings> parse_command_line(int argc, char** argv) {
    using seqembed_examples::parse_count;
    Settings settings;
    const bool go = seqembed_examples::read_options(
        argc, argv, {"--preset", "--layout", "--length", "--d-model", "--scale", "--output"},
        [&](const std::string& flag, const std::string& value) {
            if (flag == "--preset") {
                preset_options(value);  // validates the name now, not after the others
                settings.preset = value;
            } else if (flag == "--layout") {
                settings.layout = parse_layout(value);
            } else if (flag == "--length") {
                settings.length = parse_count(flag, value);
            } else if (flag == "--d-model") {
                settings.d_model = parse_count(flag, value);
            } else if (flag == "--scale") {
                settings.scale = parse_count(flag, value);
            } else {
                if (value.empty()) throw UsageError("--output needs a file name");
                settings.output = value;
            }
        });
    if (!go) return std::nullopt;
    require_fits("taller", "--length", settings.length, settings.scale);
    require_fits("wider", "--d-model", settings.d_model, settings.scale);
    return settings;
}

// ---- Colour map -------------------------------------------------------------------------------
// Moreland's diverging map ("Diverging Color Maps for Scientific Visualization", 2009), computed
// here: the two end colours are interpolated in Msh, the polar form of CIELAB, through a white
// midpoint, so lightness rises evenly from either end to the middle and equal steps of the value
// look like equal steps of colour. The end colours are his cool-warm blue and red; the midpoint
// is lighter than his (M = 97 instead of 88) so that 0 is white rather than light grey.

struct Lab {
    double l, a, b;
};
struct Msh {
    double m, s, h;
};
using Rgb = std::array<std::uint8_t, 3>;

constexpr double pi = 3.14159265358979323846;
// D65 white in XYZ.
constexpr double white_x = 0.95047, white_y = 1.0, white_z = 1.08883;

double srgb_to_linear(double c) {
    return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}
double linear_to_srgb(double c) {
    return c <= 0.0031308 ? 12.92 * c : 1.055 * std::pow(c, 1.0 / 2.4) - 0.055;
}
double lab_f(double t) {
    constexpr double delta = 6.0 / 29.0;
    return t > delta * delta * delta ? std::cbrt(t) : t / (3.0 * delta * delta) + 4.0 / 29.0;
}
double lab_f_inverse(double t) {
    constexpr double delta = 6.0 / 29.0;
    return t > delta ? t * t * t : 3.0 * delta * delta * (t - 4.0 / 29.0);
}

Lab lab_from_srgb(double red, double green, double blue) {
    const double r = srgb_to_linear(red), g = srgb_to_linear(green), b = srgb_to_linear(blue);
    const double x = 0.4124564 * r + 0.3575761 * g + 0.1804375 * b;
    const double y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b;
    const double z = 0.0193339 * r + 0.1191920 * g + 0.9503041 * b;
    const double fx = lab_f(x / white_x), fy = lab_f(y / white_y), fz = lab_f(z / white_z);
    return {116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)};
}

Rgb rgb_from_lab(const Lab& lab) {
    const double fy = (lab.l + 16.0) / 116.0;
    const double x = white_x * lab_f_inverse(fy + lab.a / 500.0);
    const double y = white_y * lab_f_inverse(fy);
    const double z = white_z * lab_f_inverse(fy - lab.b / 200.0);
    const std::array<double, 3> linear{3.2404542 * x - 1.5371385 * y - 0.4985314 * z,
                                       -0.9692660 * x + 1.8760108 * y + 0.0415560 * z,
                                       0.0556434 * x - 0.2040259 * y + 1.0572252 * z};
    Rgb rgb{};
    for (std::size_t c = 0; c < 3; ++c) {
        const double encoded = linear_to_srgb(std::clamp(linear[c], 0.0, 1.0));
        rgb[c] = static_cast<std::uint8_t>(std::lround(255.0 * encoded));
    }
    return rgb;
}

Msh msh_from_lab(const Lab& lab) {
    const double m = std::sqrt(lab.l * lab.l + lab.a * lab.a + lab.b * lab.b);
    return {m, m > 0.0 ? std::acos(lab.l / m) : 0.0, std::atan2(lab.b, lab.a)};
}
Lab lab_from_msh(const Msh& msh) {
    return {msh.m * std::cos(msh.s), msh.m * std::sin(msh.s) * std::cos(msh.h),
            msh.m * std::sin(msh.s) * std::sin(msh.h)};
}

/// The hue of an unsaturated colour next to a saturated one, turned a little away from the
/// saturated hue so that the blend does not pass through a muddy hue on its way to white.
double adjusted_hue(const Msh& saturated, double unsaturated_m) {
    if (saturated.m >= unsaturated_m) return saturated.h;
    const double spin = saturated.s *
                        std::sqrt(unsaturated_m * unsaturated_m - saturated.m * saturated.m) /
                        (saturated.m * std::sin(saturated.s));
    return saturated.h > -pi / 3.0 ? saturated.h + spin : saturated.h - spin;
}

/// The colour a fraction t in [0, 1] of the way from the blue end to the red end.
Rgb diverging(double t) {
    Msh cool = msh_from_lab(lab_from_srgb(0.230, 0.299, 0.754));
    Msh warm = msh_from_lab(lab_from_srgb(0.706, 0.016, 0.150));
    // Both ends are saturated and of distant hues: go through white (s = 0) in the middle.
    const double white_m = std::max({cool.m, warm.m, 97.0});
    if (t < 0.5) {
        warm = {white_m, 0.0, 0.0};
        t *= 2.0;
    } else {
        cool = {white_m, 0.0, 0.0};
        t = 2.0 * t - 1.0;
    }
    if (cool.s < 0.05 && warm.s > 0.05) cool.h = adjusted_hue(warm, cool.m);
    if (warm.s < 0.05 && cool.s > 0.05) warm.h = adjusted_hue(cool, warm.m);
    return rgb_from_lab(
        lab_from_msh({(1.0 - t) * cool.m + t * warm.m, (1.0 - t) * cool.s + t * warm.s,
                      (1.0 - t) * cool.h + t * warm.h}));
}

/// The map sampled finely enough that neighbouring entries differ by at most one 8-bit step.
class ColourMap {
public:
    ColourMap() {
        for (std::size_t i = 0; i < m_colours.size(); ++i)
            m_colours[i] =
                diverging(static_cast<double>(i) / static_cast<double>(m_colours.size() - 1));
    }
    /// The colour of a value in [-1, 1] (values outside are clamped; NaN is white).
    const Rgb& operator()(double value) const {
        if (std::isnan(value)) value = 0.0;
        const double t = (std::clamp(value, -1.0, 1.0) + 1.0) / 2.0;
        return m_colours[static_cast<std::size_t>(
            std::lround(t * static_cast<double>(m_colours.size() - 1)))];
    }

private:
    std::array<Rgb, 2049> m_colours{};  // odd, so that 0 has an entry of its own
};

// ---- Image ------------------------------------------------------------------------------------

/// Paints rows 0 .. length - 1 of the encoding, each value as a scale x scale square; 3 bytes
/// (RGB) per pixel, row by row. Rows are fetched one at a time, so no copy of the table is made.
std::vector<std::uint8_t> paint(const seqembed::SinusoidalPositionalEncoding<float>& encoding,
                                seqembed::Index length, std::size_t scale) {
    // A table that does not compute rows past its end must hold all of them: if it is shorter,
    // the library's error for the whole range, before anything is painted (rows() only views).
    if (encoding.options().beyond == seqembed::BeyondTable::throw_error) (void)encoding.rows(0, length);
    const auto rows = static_cast<std::size_t>(length);
    const auto cols = static_cast<std::size_t>(encoding.d_model());
    std::vector<float> values(cols);
    Eigen::Map<seqembed::RowMatrix<float>> row(values.data(), 1, encoding.d_model());
    const ColourMap colour;
    const std::size_t stride = cols * scale * 3;
    std::vector<std::uint8_t> pixels(rows * scale * stride);
    for (std::size_t r = 0; r < rows; ++r) {
        encoding.forward_into(static_cast<std::int64_t>(r), row);  // a table row, or one computed
        std::uint8_t* const first_line = pixels.data() + r * scale * stride;
        for (std::size_t c = 0; c < cols; ++c) {
            const Rgb& rgb = colour(static_cast<double>(values[c]));
            for (std::size_t k = 0; k < scale; ++k)
                std::copy(rgb.begin(), rgb.end(), first_line + (c * scale + k) * 3);
        }
        for (std::size_t k = 1; k < scale; ++k)
            std::copy(first_line, first_line + stride, first_line + k * stride);
    }
    return pixels;
}

int run(const Settings& settings) {
    seqembed::SinusoidalOptions options = preset_options(settings.preset);
    if (settings.layout) options.layout = *settings.layout;
    const auto length = static_cast<seqembed::Index>(settings.length);
    const auto d_model = static_cast<seqembed::Index>(settings.d_model);
    // Precompute no more rows than we draw; a preset whose table is shorter than --length
    // (hf_marian's 512 rows, the paper's 5000) keeps its limit, and paint reports it.
    options.max_positions = std::min(options.max_positions, length);
    const seqembed::SinusoidalPositionalEncoding<float> encoding(d_model, options);

    const int width = static_cast<int>(settings.d_model * settings.scale);
    const int height = static_cast<int>(settings.length * settings.scale);
    seqembed_examples::write_atomically(settings.output,
                     seqembed_examples::encode_png(paint(encoding, length, static_cast<std::size_t>(settings.scale)),
                                width, height));

    std::printf(
        "%s: wrote %s, %d x %d pixels: preset %s, %s layout, positions %lld to %lld "
        "(top to bottom) x dimensions 0 to %lld (left to right)\n",
        program, settings.output.c_str(), width, height, settings.preset.c_str(),
        layout_name(options.layout), static_cast<long long>(encoding.position_of(0)),
        static_cast<long long>(encoding.position_of(length - 1)),
        static_cast<long long>(d_model - 1));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return seqembed_examples::run_main(
        program, [&] { return parse_command_line(argc, argv); }, run, print_usage);
}
