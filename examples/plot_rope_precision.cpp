// Writes a PNG log-log plot of how far rotary (RoPE) cos/sin tables are from the exact values,
// by position, for a Llama-3 configuration (theta 500000, head_dim 128, halves layout):
//
//   red:  Hugging Face's float32 formula (float32 inv_freq, float32 angle inv_freq * float(p),
//         float32 cos and sin of it), as seqembed's TablePrecision::follow_scalar float table
//         computes it: the framework's float32 steps, then the correctly rounded cos and sin of
//         the float32 angle (PyTorch's own cos/sin kernels differ from those by 1 ulp in about
//         1% to 6% of values, invisible at this scale);
//   blue: seqembed's exact float table (TablePrecision::exact: cos and sin of the exact angle,
//         correctly rounded to float).
//
//   plot_rope_precision --width 800 --height 500 --points 600 --output rope_precision.png
//
// Each point is, at one position p, the largest |value - exact| over the 64 frequencies and
// over cos and sin. stb_image_write has no font, so the picture has no text: the legend, the axis
// ranges and a few of the numbers are printed to stdout instead. The PNG is encoded in memory,
// written to a temporary file beside the target and renamed over it, so a failure never leaves a
// partial picture behind.
#include <seqembed/rotary.hpp>

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

constexpr const char* program = "plot_rope_precision";

// The axes: positions 10^0 .. 10^6, errors 10^-9 .. 10^-1 (an error of 0, or below 1e-9, is
// drawn on the bottom edge). Every value plotted lies inside: the worst float32 error at
// position 10^6 is a few times 10^-2.
constexpr double first_position = 1.0;
constexpr double last_position = 1'000'000.0;
constexpr int x_decades = 6;
constexpr int y_lowest_decade = -9;
constexpr int y_highest_decade = -1;

// Positions whose numbers are printed: the start, Llama 3's 4096 and the last position of
// Llama 3.1's 131072-token context, and the last position of a 1,000,000-token context.
constexpr std::array<std::int64_t, 4> reported_positions = {1, 4096, 131071, 999999};

// Sizes accepted: below 64 pixels the frame and the margins leave no room for the plot; above
// 8192 the RGB buffer is 200 MB before compression.
constexpr std::uint64_t min_pixels_per_side = 64;
constexpr std::uint64_t max_pixels_per_side = 8192;
constexpr std::uint64_t min_points = 2;
// One point per whole position at most: more cannot be told apart, only slower.
constexpr std::uint64_t max_points = 1'000'000;

struct Settings {
    std::uint64_t width = 800;
    std::uint64_t height = 500;
    std::uint64_t points = 600;
    std::string output = "rope_precision.png";
};

void print_usage(std::FILE* stream) {
    std::fprintf(
        stream,
        "Usage: %s [options]\n"
        "Writes a PNG log-log plot of the error of rotary (RoPE) cos/sin tables against the\n"
        "exact values, by position from 1 to 1,000,000, for Llama 3 (theta 500000, head_dim\n"
        "128, halves): Hugging Face's float32 formula in red, seqembed's exact float table in\n"
        "blue. The plot has no text; the legend, axes and numbers are printed to stdout.\n"
        "\n"
        "  --width N        image width in pixels (default 800; %llu to %llu)\n"
        "  --height N       image height in pixels (default 500; %llu to %llu)\n"
        "  --points N       positions sampled, log-spaced over 1 .. 1,000,000, duplicates\n"
        "                   dropped (default 600; %llu to %llu)\n"
        "  --output FILE    the PNG to write (default rope_precision.png)\n"
        "  --help           this text\n"
        "\n"
        "Options also take the form --name=value. Exit status: 0 written, 1 the tables or the\n"
        "file could not be made, 2 bad command line.\n",
        program, static_cast<unsigned long long>(min_pixels_per_side),
        static_cast<unsigned long long>(max_pixels_per_side),
        static_cast<unsigned long long>(min_pixels_per_side),
        static_cast<unsigned long long>(max_pixels_per_side),
        static_cast<unsigned long long>(min_points), static_cast<unsigned long long>(max_points));
}

/// Reads the command line; returns nothing when --help was asked for.
std::optional<Settings> parse_command_line(int argc, char** argv) {
    using seqembed_examples::parse_count;
    Settings settings;
    const bool go = seqembed_examples::read_options(
        argc, argv, {"--width", "--height", "--points", "--output"},
        [&](const std::string& flag, const std::string& value) {
            if (flag == "--width") {
                settings.width = parse_count(flag, value, min_pixels_per_side, max_pixels_per_side);
            } else if (flag == "--height") {
                settings.height = parse_count(flag, value, min_pixels_per_side, max_pixels_per_side);
            } else if (flag == "--points") {
                settings.points = parse_count(flag, value, min_points, max_points);
            } else {
                if (value.empty()) throw seqembed_examples::UsageError("--output needs a file name");
                settings.output = value;
            }
        });
    if (!go) return std::nullopt;
    return settings;
}

// ---- The numbers ------------------------------------------------------------------------------

/// points log-spaced whole positions from 1 to 1,000,000, ascending, each once (the low end has
/// fewer distinct whole numbers than samples, so there are fewer than points of them).
std::vector<std::int64_t> log_spaced_positions(std::uint64_t points) {
    std::vector<std::int64_t> positions;
    positions.reserve(static_cast<std::size_t>(points));
    const double step = std::log10(last_position / first_position) / static_cast<double>(points - 1);
    for (std::uint64_t k = 0; k < points; ++k) {
        const double p = std::round(first_position * std::pow(10.0, step * static_cast<double>(k)));
        positions.push_back(static_cast<std::int64_t>(std::clamp(p, first_position, last_position)));
    }
    positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
    return positions;
}

/// The three tables, each computing any row on the fly from a one-row table, so that no
/// 1,000,000-row table is ever built.
class Tables {
public:
    Tables()
        : m_exact(options(seqembed::TablePrecision::exact)),
          m_framework(options(seqembed::TablePrecision::follow_scalar)),
          m_seqembed(options(seqembed::TablePrecision::exact)),
          m_exact_cos(1, m_exact.pairs()), m_exact_sin(1, m_exact.pairs()),
          m_cos(1, m_exact.pairs()), m_sin(1, m_exact.pairs()) {}

    /// The configuration plotted: Llama 3 8B's, every row computed past a one-row table.
    static seqembed::RotaryOptions options(seqembed::TablePrecision precision) {
        seqembed::RotaryOptions options = seqembed::RotaryOptions::llama3_8b();
        options.layout = seqembed::RotaryLayout::halves;
        options.precision = precision;
        options.max_positions = 1;
        options.beyond = seqembed::BeyondTable::compute;
        return options;
    }

    struct Errors {
        double framework;  ///< Hugging Face's float32 formula
        double seqembed;   ///< seqembed's exact float table
    };

    /// The largest |value - exact| over the frequencies and over cos and sin, at position p.
    Errors at(std::int64_t position) {
        m_exact.forward_into(position, m_exact_cos, m_exact_sin);
        return {error(m_framework, position), error(m_seqembed, position)};
    }

    seqembed::Index pairs() const { return m_exact.pairs(); }

private:
    double error(const seqembed::RotaryEmbedding<float>& table, std::int64_t position) {
        table.forward_into(position, m_cos, m_sin);
        const double cos_error = (m_cos.cast<double>() - m_exact_cos).cwiseAbs().maxCoeff();
        const double sin_error = (m_sin.cast<double>() - m_exact_sin).cwiseAbs().maxCoeff();
        return std::max(cos_error, sin_error);
    }

    // The reference: seqembed's exact table in double. Its own error is below 5.4e-14 at
    // position 999999 (rotary.hpp states the bound; tests/test_rotary.cpp checks it against
    // mpmath), more than four decades under the plot's 1e-9 floor, so using it as the truth
    // changes no pixel.
    seqembed::RotaryEmbedding<double> m_exact;
    seqembed::RotaryEmbedding<float> m_framework;
    seqembed::RotaryEmbedding<float> m_seqembed;
    seqembed::RowMatrix<double> m_exact_cos, m_exact_sin;
    seqembed::RowMatrix<float> m_cos, m_sin;
};

// ---- The picture ------------------------------------------------------------------------------

using Rgb = std::array<std::uint8_t, 3>;
constexpr Rgb white = {255, 255, 255};
constexpr Rgb black = {0, 0, 0};
constexpr Rgb grid_grey = {220, 220, 220};
// Matplotlib's tab:red and tab:blue: saturated enough to tell apart on white, and still apart
// for the common red-green colour blindness (they differ in lightness and in blue).
constexpr Rgb framework_red = {214, 39, 40};
constexpr Rgb seqembed_blue = {31, 119, 180};

/// An RGB image, 3 bytes a pixel, row by row from the top.
class Image {
public:
    Image(int width, int height)
        : m_width(width), m_height(height),
          m_pixels(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3) {
        fill_rect(0, 0, width, height, white);
    }
    int width() const { return m_width; }
    int height() const { return m_height; }
    const std::vector<std::uint8_t>& pixels() const { return m_pixels; }

    /// Paints the pixels [x0, x1) x [y0, y1), clipped to the image.
    void fill_rect(int x0, int y0, int x1, int y1, const Rgb& colour) {
        for (int y = std::max(y0, 0); y < std::min(y1, m_height); ++y)
            for (int x = std::max(x0, 0); x < std::min(x1, m_width); ++x) set(x, y, colour, 1.0);
    }

    /// Mixes colour into pixel (x, y) with weight alpha in [0, 1].
    void set(int x, int y, const Rgb& colour, double alpha) {
        std::uint8_t* const pixel = m_pixels.data() + (static_cast<std::size_t>(y) * static_cast<std::size_t>(m_width) +
                                                       static_cast<std::size_t>(x)) * 3;
        for (std::size_t c = 0; c < 3; ++c) {
            const double mixed = alpha * colour[c] + (1.0 - alpha) * pixel[c];
            pixel[c] = static_cast<std::uint8_t>(std::lround(std::clamp(mixed, 0.0, 255.0)));
        }
    }

private:
    int m_width, m_height;
    std::vector<std::uint8_t> m_pixels;
};

/// Where the axes fall in the image: the frame's left, top, right and bottom pixel columns and
/// rows (the frame lies on them; the plot is inside and on them).
struct PlotArea {
    int left, top, right, bottom;

    static PlotArea inside(int width, int height) {
        // A margin of white around the frame, as a figure has; no labels need room.
        const int margin = std::max(8, std::min(width, height) / 25);
        return {margin, margin, width - 1 - margin, height - 1 - margin};
    }
    /// The column of position p (10^0 at left, 10^6 at right).
    double x_of(double position) const {
        return left + (right - left) * std::log10(position / first_position) / x_decades;
    }
    /// The row of an error (10^-1 at the top, 10^-9 and anything below, 0 included, at the
    /// bottom).
    double y_of(double error) const {
        const double low = std::pow(10.0, y_lowest_decade);
        const double decades = std::log10(std::max(error, low)) - y_lowest_decade;
        const double fraction = std::min(decades / (y_highest_decade - y_lowest_decade), 1.0);
        return bottom - (bottom - top) * fraction;
    }
};

void draw_grid_and_frame(Image& image, const PlotArea& area) {
    for (int decade = 1; decade < x_decades; ++decade) {
        const int x = static_cast<int>(std::lround(area.x_of(std::pow(10.0, decade))));
        image.fill_rect(x, area.top, x + 1, area.bottom + 1, grid_grey);
    }
    for (int decade = y_lowest_decade + 1; decade < y_highest_decade; ++decade) {
        const int y = static_cast<int>(std::lround(area.y_of(std::pow(10.0, decade))));
        image.fill_rect(area.left, y, area.right + 1, y + 1, grid_grey);
    }
    // The frame is the outermost decades: 10^0 and 10^6, 10^-9 and 10^-1.
    image.fill_rect(area.left, area.top, area.right + 1, area.top + 1, black);
    image.fill_rect(area.left, area.bottom, area.right + 1, area.bottom + 1, black);
    image.fill_rect(area.left, area.top, area.left + 1, area.bottom + 1, black);
    image.fill_rect(area.right, area.top, area.right + 1, area.bottom + 1, black);
}

/// Draws the polyline through points (pixel coordinates) as an antialiased stroke of the given
/// half-width, clipped to the inside of the frame. Coverage is gathered first (the largest over
/// the segments) and mixed in once, so that the joints are not darker than the segments.
void draw_line(Image& image, const PlotArea& area, const std::vector<std::array<double, 2>>& points,
               double half_width, const Rgb& colour) {
    const int x_first = area.left + 1, y_first = area.top + 1;
    const int columns = area.right - x_first, rows = area.bottom - y_first;
    if (columns <= 0 || rows <= 0) return;
    std::vector<float> coverage(static_cast<std::size_t>(columns) * static_cast<std::size_t>(rows), 0.0f);
    for (std::size_t i = 0; i + 1 < points.size(); ++i) {
        const auto [ax, ay] = points[i];
        const auto [bx, by] = points[i + 1];
        const double dx = bx - ax, dy = by - ay, length_squared = dx * dx + dy * dy;
        const double reach = half_width + 1.0;
        const int x0 = std::max(x_first, static_cast<int>(std::floor(std::min(ax, bx) - reach)));
        const int x1 = std::min(area.right - 1, static_cast<int>(std::ceil(std::max(ax, bx) + reach)));
        const int y0 = std::max(y_first, static_cast<int>(std::floor(std::min(ay, by) - reach)));
        const int y1 = std::min(area.bottom - 1, static_cast<int>(std::ceil(std::max(ay, by) + reach)));
        for (int y = y0; y <= y1; ++y) {
            for (int x = x0; x <= x1; ++x) {
                // Distance from the pixel's centre to the segment.
                const double t = length_squared > 0.0
                    ? std::clamp(((x - ax) * dx + (y - ay) * dy) / length_squared, 0.0, 1.0)
                    : 0.0;
                const double distance = std::hypot(x - (ax + t * dx), y - (ay + t * dy));
                const auto cover = static_cast<float>(std::clamp(half_width + 0.5 - distance, 0.0, 1.0));
                float& cell = coverage[static_cast<std::size_t>(y - y_first) * static_cast<std::size_t>(columns) +
                                       static_cast<std::size_t>(x - x_first)];
                cell = std::max(cell, cover);
            }
        }
    }
    for (int y = 0; y < rows; ++y)
        for (int x = 0; x < columns; ++x) {
            const float cover = coverage[static_cast<std::size_t>(y) * static_cast<std::size_t>(columns) +
                                         static_cast<std::size_t>(x)];
            if (cover > 0.0f) image.set(x + x_first, y + y_first, colour, cover);
        }
}

int run(const Settings& settings) {
    Tables tables;
    const std::vector<std::int64_t> positions = log_spaced_positions(settings.points);

    const int width = static_cast<int>(settings.width);
    const int height = static_cast<int>(settings.height);
    Image image(width, height);
    const PlotArea area = PlotArea::inside(width, height);
    draw_grid_and_frame(image, area);

    std::vector<std::array<double, 2>> framework, exact;
    framework.reserve(positions.size());
    exact.reserve(positions.size());
    Tables::Errors worst{0.0, 0.0};
    std::int64_t worst_framework_at = 0, worst_seqembed_at = 0;
    for (const std::int64_t position : positions) {
        const Tables::Errors errors = tables.at(position);
        const double x = area.x_of(static_cast<double>(position));
        framework.push_back({x, area.y_of(errors.framework)});
        exact.push_back({x, area.y_of(errors.seqembed)});
        if (errors.framework > worst.framework) {
            worst.framework = errors.framework;
            worst_framework_at = position;
        }
        if (errors.seqembed > worst.seqembed) {
            worst.seqembed = errors.seqembed;
            worst_seqembed_at = position;
        }
    }
    // A stroke about 1/200 of the smaller side (2.5 pixels at 800 x 500), never thinner than
    // 1.5 pixels. Blue last: where the two lines meet (small positions) the exact one shows.
    const double half_width = std::max(0.75, std::min(width, height) / 400.0);
    draw_line(image, area, framework, half_width, framework_red);
    draw_line(image, area, exact, half_width, seqembed_blue);

    seqembed_examples::write_atomically(settings.output,
                                        seqembed_examples::encode_png(image.pixels(), image.width(), image.height()));

    std::printf("%s: wrote %s, %d x %d pixels, %zu positions\n", program, settings.output.c_str(),
                width, height, positions.size());
    std::printf(
        "Configuration: Llama 3 (theta 500000, head_dim 128, halves layout), %lld frequencies.\n"
        "Each point: the largest |value - exact| over the frequencies and over cos and sin at one\n"
        "position; exact = seqembed's exact double table (its own error is below 1e-13).\n",
        static_cast<long long>(tables.pairs()));
    std::printf(
        "Axes: x = position, log scale, 1 (left edge) to 1,000,000 (right edge), a grid line at\n"
        "each power of ten; y = absolute error, log scale, 1e-9 (bottom edge, where an error of 0\n"
        "is drawn) to 1e-1 (top edge), a grid line at each power of ten.\n"
        "Legend: red = Hugging Face's float32 formula (float32 inv_freq, float32 angle\n"
        "inv_freq * float(p), float32 cos and sin); blue = seqembed's exact float table.\n");
    std::printf("\n%-10s %-22s %-22s\n", "position", "float32 formula (red)", "seqembed (blue)");
    for (const std::int64_t position : reported_positions) {
        const Tables::Errors errors = tables.at(position);
        std::printf("%-10lld %-22.2e %-22.2e\n", static_cast<long long>(position),
                    errors.framework, errors.seqembed);
    }
    std::printf("Largest over the %zu positions plotted: red %.2e (position %lld), blue %.2e "
                "(position %lld).\n",
                positions.size(), worst.framework, static_cast<long long>(worst_framework_at),
                worst.seqembed, static_cast<long long>(worst_seqembed_at));
    // The sentences for the README, with the bound measured here rather than assumed.
    std::printf(
        "\nDescription: The error of rotary cos/sin tables against the exact values for Llama 3\n"
        "(theta 500000, head_dim 128), the largest over the 64 frequencies at each position, on\n"
        "log-log axes: position from 1 to 1,000,000 across, absolute error from 1e-9 to 1e-1 up,\n"
        "a grid line at each power of ten. Red is Hugging Face's float32 formula, whose error\n"
        "grows with the position to %.1e; blue is seqembed's exact float table, which stays\n"
        "within half a float ulp (at most %.1e) at every position.\n",
        worst.framework, worst.seqembed);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return seqembed_examples::run_main(
        program, [&] { return parse_command_line(argc, argv); }, run, print_usage);
}
