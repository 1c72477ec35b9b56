/// @file io/vision_positions.hpp
/// @brief Multimodal positions (Qwen-VL's and GLM-4V's): the three position ids (temporal, height,
///        width) of every token of a prompt with images and videos, as Hugging Face's
///        get_rope_index computes them, for RotaryEmbedding::apply_multimodal.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../batch.hpp"
#include "../error.hpp"
#include "../rotary.hpp"
#include "../types.hpp"

namespace seqembed::io {

/// @brief How a prompt's ids mark its images and videos.
enum class VisionBlocks {
    /// Qwen-VL: each block follows a vision_start_token_id, an image's when the token after it is
    /// image_token_id, a video's when it is video_token_id.
    after_vision_start,
    /// GLM-4V: each run of image_token_id tokens is a block, a video's frame (temporal id 0, the
    /// video's height and width) between video_start_token_id and video_end_token_id, an image
    /// elsewhere; the text between a video's frames (their timestamps) numbered as text.
    image_token_runs,
};

/// @brief What a multimodal model's get_rope_index reads of a config besides the prompt: the ids
///        that mark images and videos, and how the vision encoder merges patches and counts time.
struct VisionTokens {
    /// @brief How the ids mark the blocks.
    VisionBlocks blocks = VisionBlocks::after_vision_start;
    /// @brief The id of an image's tokens (config image_token_id); GLM-4V: of a video frame's too.
    TokenId image_token_id = 151655;
    /// @brief The id of a video's tokens (config video_token_id); not read by image_token_runs.
    TokenId video_token_id = 151656;
    /// @brief after_vision_start: the id before each image or video (config vision_start_token_id).
    TokenId vision_start_token_id = 151652;
    /// @brief image_token_runs: the ids around a video's frames (config video_start_token_id and
    ///        video_end_token_id, GLM-4V's 151341 and 151342).
    TokenId video_start_token_id = 151341;
    /// @brief See video_start_token_id.
    TokenId video_end_token_id = 151342;
    /// @brief Patches merged along height and along width into one token
    ///        (vision_config.spatial_merge_size).
    Index spatial_merge_size = 2;
    /// @brief Qwen2.5-VL's vision_config.tokens_per_second: a video's frame f takes temporal id
    ///        f x second_per_grid_t x tokens_per_second. 0: the frame's index (Qwen2-VL,
    ///        Qwen3-VL).
    double tokens_per_second = 0;
    /// @brief Qwen3-VL: each of a video's frames is a block of its own (the processor writes its
    ///        timestamp as text between them), temporal id 0.
    bool frames_apart = false;
};

/// @brief The vision inputs of a prompt, as Qwen-VL's processor returns them beside input_ids.
struct VisionGrids {
    /// @brief images x 3: each image's (temporal, height, width) patches before merging, in the
    ///        order the images appear in the batch (image_grid_thw).
    IdMatrix image_grid_thw = IdMatrix(0, 3);
    /// @brief videos x 3: the same for each video (video_grid_thw).
    IdMatrix video_grid_thw = IdMatrix(0, 3);
    /// @brief Qwen2.5-VL: seconds per temporal patch of each video (second_per_grid_ts); empty:
    ///        1 for every video.
    std::vector<double> second_per_grid_ts = {};
    /// @brief Qwen2.5-VL: each second_per_grid_t truncated to an integer before the product
    ///        (transformers 4.52 to 5.0: `torch.as_tensor(second_per_grid_t, dtype=int64)`, so 0.5
    ///        seconds a frame gives every frame of the video temporal id 0). False: transformers
    ///        4.49 to 4.51, the product in float32, truncated once.
    bool whole_seconds = true;
};

/// @brief A prompt's multimodal positions and what continues them while decoding.
struct MultimodalPositions {
    /// @brief 3 x (batch * seq): row a the axis (temporal, height, width), column b * seq + t the
    ///        token, as RotaryEmbedding::apply_multimodal takes them. Padded tokens take 1.
    RotaryEmbedding<float>::MultimodalPositions positions;
    /// @brief Per sequence: its largest position + 1 - seq (Hugging Face's rope_deltas), which
    ///        the positions of later tokens add to their index after the past.
    std::vector<std::int64_t> rope_deltas;
};

namespace detail {

/// The images' and videos' grids in the order a batch's blocks take them (over the whole batch,
/// as Hugging Face's), with the frame the cursor is at when each of a video's frames is a block
/// of its own (Qwen3-VL, GLM-4V): never expanded, so a huge frame count costs nothing.
class GridCursor {
public:
    /// One block's grid (temporal, height, width patches before merging) and seconds per frame.
    struct Taken {
        std::array<std::int64_t, 3> grid;
        double second;
    };

    explicit GridCursor(const VisionGrids& grids) : m_grids(grids) {}

    /// The next image's grid; `b` the sequence that holds it.
    Taken image(Index b) {
        if (m_image >= m_grids.image_grid_thw.rows())
            seqembed::detail::fail<index_error>("multimodal positions: sequence ", b, " holds image ", m_image,
                                                " but image_grid_thw has ", m_grids.image_grid_thw.rows(), " rows");
        const Index r = m_image++;
        return {{m_grids.image_grid_thw(r, 0), m_grids.image_grid_thw(r, 1), m_grids.image_grid_thw(r, 2)}, 0.0};
    }

    /// The next video's grid, or with `frame_alone` its next frame's (temporal 1).
    Taken video(Index b, bool frame_alone) {
        const IdMatrix& thw = m_grids.video_grid_thw;
        if (m_video >= thw.rows())
            seqembed::detail::fail<index_error>("multimodal positions: sequence ", b, " holds video ",
                                                frame_alone ? "frame " : "", m_video, frame_alone ? "." : "",
                                                frame_alone ? std::to_string(m_frame) : "",
                                                " but video_grid_thw has ", thw.rows(), " rows");
        Taken taken{{thw(m_video, 0), thw(m_video, 1), thw(m_video, 2)},
                    m_grids.second_per_grid_ts.empty() ? 1.0
                                                       : m_grids.second_per_grid_ts[static_cast<std::size_t>(m_video)]};
        if (frame_alone) {
            taken.grid[0] = 1;
            if (++m_frame == thw(m_video, 0)) {
                m_frame = 0;
                ++m_video;
            }
        } else {
            ++m_video;
        }
        return taken;
    }

private:
    const VisionGrids& m_grids;
    Index m_image = 0;
    Index m_video = 0;
    std::int64_t m_frame = 0;
};

/// One sequence's (temporal, height, width) ids as get_rope_index lays them out, token after
/// token: text numbered on from the largest id so far + 1, a block of merged patches frame by
/// frame, row by row, from the id after the text before it.
class RopeIndexRow {
public:
    /// The row of a sequence of `n` real tokens, `b` its index, `merge` the spatial merge size.
    RopeIndexRow(Index b, std::int64_t n, Index merge) : m_b(b), m_n(n), m_merge(merge) {
        m_ids.reserve(static_cast<std::size_t>(n));
    }

    /// The next `count` tokens, text.
    void text(std::int64_t count) {
        for (std::int64_t k = 0; k < count; ++k) m_ids.push_back({m_next + k, m_next + k, m_next + k});
        if (count > 0) m_next += count;
    }

    /// The merged tokens of `grid` (patches before merging), frame f at temporal id
    /// temporal(f); `image` names its kind in errors. Returns how many tokens it laid out.
    template <typename Temporal>
    std::int64_t block(const std::array<std::int64_t, 3>& grid, bool image, const Temporal& temporal) {
        const std::int64_t gt = grid[0], gh = grid[1] / m_merge, gw = grid[2] / m_merge;
        if (gh == 0 || gw == 0)
            seqembed::detail::fail<value_error>("multimodal positions: ", image ? "an image's" : "a video's", " grid (",
                                                grid[0], ", ", grid[1], ", ", grid[2],
                                                ") is narrower than spatial_merge_size ", m_merge);
        // A block past the sequence's end fails the caller's count; bounded first, so that its
        // token count cannot overflow.
        if (gt > m_n || gh > m_n || gw > m_n || gt * gh > m_n || gt * gh * gw > m_n)
            seqembed::detail::fail<value_error>("multimodal positions: sequence ", m_b, " has ", m_n,
                                                " real tokens, fewer than its ", image ? "image's" : "video's",
                                                " grid (", grid[0], ", ", grid[1], ", ", grid[2], ") covers");
        const std::int64_t base = m_next;
        std::int64_t largest = base - 1;
        for (std::int64_t f = 0; f < gt; ++f) {
            const std::int64_t t = temporal(f);
            for (std::int64_t h = 0; h < gh; ++h)
                for (std::int64_t w = 0; w < gw; ++w) {
                    m_ids.push_back({base + t, base + h, base + w});
                    largest = std::max({largest, base + t, base + h, base + w});
                }
        }
        m_next = largest + 1;
        return gt * gh * gw;
    }

    /// The ids laid out, one (temporal, height, width) per token.
    const std::vector<std::array<std::int64_t, 3>>& ids() const noexcept { return m_ids; }

private:
    Index m_b;
    std::int64_t m_n;
    Index m_merge;
    std::vector<std::array<std::int64_t, 3>> m_ids;
    std::int64_t m_next = 0;  // the largest id so far + 1
};

/// Qwen-VL's blocks of one sequence (`token(k)` its k-th of `n` real tokens): the images and
/// videos its vision start tokens announce, each found from where the one before ended, the text
/// between them.
template <typename Token>
void vision_start_blocks(Index b, std::int64_t n, const Token& token, const VisionTokens& vision,
                         const VisionGrids& grids, GridCursor& cursor, RopeIndexRow& row) {
    std::int64_t images = 0, videos = 0;
    for (std::int64_t k = 0; k + 1 < n; ++k)
        if (token(k) == vision.vision_start_token_id) {
            images += token(k + 1) == vision.image_token_id ? 1 : 0;
            videos += token(k + 1) == vision.video_token_id ? 1 : 0;
        }
    std::int64_t st = 0;
    const auto find = [&](TokenId id, std::int64_t remaining) {
        if (remaining <= 0) return n + 1;
        for (std::int64_t k = st; k < n; ++k)
            if (token(k) == id) return k;
        return n + 1;
    };
    const std::int64_t blocks = images + videos;
    for (std::int64_t block = 0; block < blocks; ++block) {
        const std::int64_t at_image = find(vision.image_token_id, images);
        const std::int64_t at_video = find(vision.video_token_id, videos);
        if (at_image > n && at_video > n)
            seqembed::detail::fail<value_error>("multimodal positions: sequence ", b, " announces ", images,
                                                " more images and ", videos,
                                                " more videos after vision start tokens than it holds the tokens "
                                                "of past its token ", st);
        const bool image = at_image < at_video;
        const GridCursor::Taken taken = image ? cursor.image(b) : cursor.video(b, vision.frames_apart);
        (image ? images : videos) -= 1;
        const std::int64_t ed = image ? at_image : at_video;
        row.text(ed - st);
        const auto temporal = [&](std::int64_t f) -> std::int64_t {
            if (vision.tokens_per_second <= 0) return f;
            if (image) return 0;  // an image's second_per_grid_t is 0
            // Qwen2.5-VL, in float32 as torch.
            const float seconds_each = grids.whole_seconds ? std::trunc(static_cast<float>(taken.second))
                                                           : static_cast<float>(taken.second);
            const float time = static_cast<float>(static_cast<float>(f) * seconds_each) *
                               static_cast<float>(vision.tokens_per_second);
            if (!(time < 0x1p40f))
                seqembed::detail::fail<value_error>("multimodal positions: frame ", f, " of a video at ",
                                                    taken.second, " seconds per frame is past any position");
            return static_cast<std::int64_t>(time);
        };
        st = ed + row.block(taken.grid, image, temporal);
    }
    if (st < n) row.text(n - st);
}

/// GLM-4V's blocks of one sequence: its tokens typed (image_token_id inside video_start ..
/// video_end a video frame's, elsewhere an image's, any other text), each run of one type a
/// group; an image group one image's grid, a frame group one frame of the current video, each
/// group exactly its grid's tokens. Hugging Face checks only each sequence's total, so runs that
/// miss their grids but cancel out get positions from it that belong to no image; here they are
/// refused, naming the run.
template <typename Token>
void image_run_blocks(Index b, std::int64_t n, const Token& token, const VisionTokens& vision, GridCursor& cursor,
                      RopeIndexRow& row) {
    enum class Kind { text, image, frame };
    bool in_video = false;
    std::vector<Kind> kinds(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k) {
        const TokenId id = token(k);
        if (id == vision.video_start_token_id) in_video = true;
        else if (id == vision.video_end_token_id) in_video = false;
        kinds[static_cast<std::size_t>(k)] =
            id != vision.image_token_id ? Kind::text : in_video ? Kind::frame : Kind::image;
    }
    for (std::int64_t start = 0; start < n;) {
        const Kind kind = kinds[static_cast<std::size_t>(start)];
        std::int64_t end = start + 1;
        while (end < n && kinds[static_cast<std::size_t>(end)] == kind) ++end;
        if (kind == Kind::text) {
            row.text(end - start);
        } else {
            const bool image = kind == Kind::image;
            const GridCursor::Taken taken = image ? cursor.image(b) : cursor.video(b, true);
            const std::int64_t laid = row.block(taken.grid, image, [](std::int64_t f) { return f; });
            if (laid != end - start)
                seqembed::detail::fail<value_error>(
                    "multimodal positions: sequence ", b, " has a run of ", end - start, " ",
                    image ? "image" : "video frame", " tokens from its real token ", start, " but its grid (",
                    taken.grid[0], ", ", taken.grid[1], ", ", taken.grid[2], ") covers ", laid,
                    " (each image, and each frame of a video, is t x (h / merge) x (w / merge) tokens)");
        }
        start = end;
    }
}

/// Hugging Face's get_rope_index (transformers 4.x) for a batch without past tokens: each
/// sequence's real tokens numbered in order, an image's or a video's tokens by (temporal,
/// height, width) after the text before them, the text after them from the block's largest id
/// + 1; padded tokens 1. Without images and videos, the text rule: cumsum(mask) - 1, and the
/// deltas from every token's position (padded ones' 1 included), as Hugging Face's text branch.
inline MultimodalPositions rope_index(const Batch& batch, const VisionTokens& vision, const VisionGrids& grids) {
    const TokenIds& ids = batch.ids;
    const Index rows = ids.rows(), seq = ids.cols();
    MultimodalPositions out;
    out.positions = RotaryEmbedding<float>::MultimodalPositions::Constant(3, ids.size(), 1);
    out.rope_deltas.assign(static_cast<std::size_t>(rows), 0);
    const auto require_grid = [&](const IdMatrix& grid, const char* name) {
        if (grid.cols() != 3)
            seqembed::detail::fail<shape_error>("VisionGrids::", name, " is ", grid.rows(), " x ", grid.cols(),
                                                ", expected one row of (temporal, height, width) per item");
        for (Index r = 0; r < grid.rows(); ++r)
            for (Index c = 0; c < 3; ++c)
                if (grid(r, c) <= 0 || grid(r, c) > (std::int64_t{1} << 24))
                    seqembed::detail::fail<value_error>("VisionGrids::", name, "(", r, ", ", c, ") is ", grid(r, c),
                                                        ", not a positive patch count");
    };
    require_grid(grids.image_grid_thw, "image_grid_thw");
    require_grid(grids.video_grid_thw, "video_grid_thw");
    if (!grids.second_per_grid_ts.empty() &&
        static_cast<Index>(grids.second_per_grid_ts.size()) != grids.video_grid_thw.rows())
        seqembed::detail::fail<shape_error>("VisionGrids::second_per_grid_ts has ", grids.second_per_grid_ts.size(),
                                            " values for ", grids.video_grid_thw.rows(), " videos");
    for (std::size_t v = 0; v < grids.second_per_grid_ts.size(); ++v)
        if (!(grids.second_per_grid_ts[v] >= 0) || !(grids.second_per_grid_ts[v] < 1e6))
            seqembed::detail::fail<value_error>("VisionGrids::second_per_grid_ts[", v, "] is ",
                                                grids.second_per_grid_ts[v], ", not a duration in seconds");
    if (vision.spatial_merge_size <= 0)
        seqembed::detail::fail<value_error>("spatial_merge_size ", vision.spatial_merge_size, " is not positive");
    std::vector<bool> real(static_cast<std::size_t>(ids.size()), true);
    batch.padding.for_each_token(ids, 0, rows, [&](Index b, Index t, std::int64_t token_index) {
        real[static_cast<std::size_t>(b * seq + t)] = token_index >= 0;
    });

    if (grids.image_grid_thw.rows() == 0 && grids.video_grid_thw.rows() == 0) {
        for (Index b = 0; b < rows; ++b) {
            std::int64_t count = 0, largest = std::numeric_limits<std::int64_t>::min();
            for (Index t = 0; t < seq; ++t) {
                const Index at = b * seq + t;
                if (real[static_cast<std::size_t>(at)]) out.positions.col(at).setConstant(count++);
                largest = std::max(largest, out.positions(0, at));
            }
            out.rope_deltas[static_cast<std::size_t>(b)] = seq == 0 ? 0 : largest + 1 - seq;
        }
        return out;
    }

    GridCursor cursor(grids);
    for (Index b = 0; b < rows; ++b) {
        std::vector<Index> columns;  // the real tokens' columns, in order
        for (Index t = 0; t < seq; ++t)
            if (real[static_cast<std::size_t>(b * seq + t)]) columns.push_back(t);
        const auto n = static_cast<std::int64_t>(columns.size());
        if (n == 0)
            seqembed::detail::fail<value_error>("multimodal positions: sequence ", b,
                                                " has no real token (Hugging Face's get_rope_index fails there too)");
        const auto token = [&](std::int64_t k) { return ids(b, columns[static_cast<std::size_t>(k)]); };
        RopeIndexRow row(b, n, vision.spatial_merge_size);
        if (vision.blocks == VisionBlocks::image_token_runs)
            image_run_blocks(b, n, token, vision, cursor, row);
        else
            vision_start_blocks(b, n, token, vision, grids, cursor, row);
        const std::vector<std::array<std::int64_t, 3>>& ids3 = row.ids();
        if (static_cast<std::int64_t>(ids3.size()) != n)
            seqembed::detail::fail<value_error>("multimodal positions: sequence ", b, " has ", n,
                                                " real tokens but its text and grids give ", ids3.size(),
                                                " (each image or video covers t x (h / merge) x (w / merge) tokens)");
        std::int64_t largest = std::numeric_limits<std::int64_t>::min();
        for (std::int64_t k = 0; k < n; ++k) {
            const Index at = b * seq + columns[static_cast<std::size_t>(k)];
            for (Index a = 0; a < 3; ++a) {
                out.positions(a, at) = ids3[static_cast<std::size_t>(k)][static_cast<std::size_t>(a)];
                largest = std::max(largest, out.positions(a, at));
            }
        }
        out.rope_deltas[static_cast<std::size_t>(b)] = largest + 1 - seq;
    }
    return out;
}

}  // namespace detail
}  // namespace seqembed::io
