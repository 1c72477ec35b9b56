/// @file io/vision_positions.hpp
/// @brief Qwen-VL's multimodal positions: the three position ids (temporal, height, width) of
///        every token of a prompt with images and videos, as Hugging Face's get_rope_index
///        computes them, for RotaryEmbedding::apply_multimodal.
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

/// @brief What Qwen-VL's get_rope_index reads of a config besides the prompt: the ids that mark
///        images and videos, and how the vision encoder merges patches and counts time.
struct VisionTokens {
    /// @brief The id of an image's tokens (config image_token_id).
    TokenId image_token_id = 151655;
    /// @brief The id of a video's tokens (config video_token_id).
    TokenId video_token_id = 151656;
    /// @brief The id before each image or video (config vision_start_token_id).
    TokenId vision_start_token_id = 151652;
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

    // The images and videos over the whole batch, in order, as Hugging Face's; Qwen3-VL's videos
    // a block per frame (the frame the cursor is at).
    Index next_image = 0, next_video = 0;
    std::int64_t next_frame = 0;
    for (Index b = 0; b < rows; ++b) {
        std::vector<Index> columns;  // the real tokens' columns, in order
        for (Index t = 0; t < seq; ++t)
            if (real[static_cast<std::size_t>(b * seq + t)]) columns.push_back(t);
        const auto n = static_cast<std::int64_t>(columns.size());
        if (n == 0)
            seqembed::detail::fail<value_error>("multimodal positions: sequence ", b,
                                                " has no real token (Hugging Face's get_rope_index fails there too)");
        const auto token = [&](std::int64_t k) { return ids(b, columns[static_cast<std::size_t>(k)]); };
        // The blocks the ids announce: the token after each vision start.
        std::int64_t images = 0, videos_here = 0;
        for (std::int64_t k = 0; k + 1 < n; ++k)
            if (token(k) == vision.vision_start_token_id) {
                images += token(k + 1) == vision.image_token_id ? 1 : 0;
                videos_here += token(k + 1) == vision.video_token_id ? 1 : 0;
            }
        std::vector<std::array<std::int64_t, 3>> ids3;  // per real token
        ids3.reserve(static_cast<std::size_t>(n));
        std::int64_t next = 0;  // the largest id so far + 1
        std::int64_t st = 0;
        const auto add_text = [&](std::int64_t count) {
            for (std::int64_t k = 0; k < count; ++k) ids3.push_back({next + k, next + k, next + k});
            if (count > 0) next += count;
        };
        const auto find = [&](TokenId id, std::int64_t remaining) {
            if (remaining <= 0) return n + 1;
            for (std::int64_t k = st; k < n; ++k)
                if (token(k) == id) return k;
            return n + 1;
        };
        const std::int64_t blocks = images + videos_here;
        for (std::int64_t block = 0; block < blocks; ++block) {
            const std::int64_t at_image = find(vision.image_token_id, images);
            const std::int64_t at_video = find(vision.video_token_id, videos_here);
            const bool image = at_image < at_video;
            if (at_image > n && at_video > n)
                seqembed::detail::fail<value_error>("multimodal positions: sequence ", b, " announces ", images,
                                                    " more images and ", videos_here,
                                                    " more videos after vision start tokens than it holds the tokens "
                                                    "of past its token ", st);
            std::array<std::int64_t, 3> grid{};
            double second = 0;
            if (image) {
                if (next_image >= grids.image_grid_thw.rows())
                    seqembed::detail::fail<index_error>("multimodal positions: sequence ", b, " holds image ",
                                                        next_image, " but image_grid_thw has ",
                                                        grids.image_grid_thw.rows(), " rows");
                const Index r = next_image++;
                grid = {grids.image_grid_thw(r, 0), grids.image_grid_thw(r, 1), grids.image_grid_thw(r, 2)};
                --images;
            } else {
                if (next_video >= grids.video_grid_thw.rows())
                    seqembed::detail::fail<index_error>("multimodal positions: sequence ", b, " holds video ",
                                                        vision.frames_apart ? "frame " : "", next_video,
                                                        vision.frames_apart ? "." : "",
                                                        vision.frames_apart ? std::to_string(next_frame) : "",
                                                        " but video_grid_thw has ", grids.video_grid_thw.rows(),
                                                        " rows");
                grid = {grids.video_grid_thw(next_video, 0), grids.video_grid_thw(next_video, 1),
                        grids.video_grid_thw(next_video, 2)};
                second = grids.second_per_grid_ts.empty() ? 1.0
                                                           : grids.second_per_grid_ts[static_cast<std::size_t>(next_video)];
                if (vision.frames_apart) {  // Qwen3-VL: this frame alone
                    grid[0] = 1;
                    if (++next_frame == grids.video_grid_thw(next_video, 0)) {
                        next_frame = 0;
                        ++next_video;
                    }
                } else {
                    ++next_video;
                }
                --videos_here;
            }
            const std::int64_t ed = image ? at_image : at_video;
            const std::int64_t gt = grid[0], gh = grid[1] / vision.spatial_merge_size,
                               gw = grid[2] / vision.spatial_merge_size;
            if (gh == 0 || gw == 0)
                seqembed::detail::fail<value_error>("multimodal positions: ", image ? "an image's" : "a video's",
                                                    " grid (", grid[0], ", ", grid[1], ", ", grid[2],
                                                    ") is narrower than spatial_merge_size ", vision.spatial_merge_size);
            // A block past the sequence's end fails the count below; bounded first, so that its
            // token count cannot overflow.
            if (gt > n || gh > n || gw > n || gt * gh > n || gt * gh * gw > n)
                seqembed::detail::fail<value_error>("multimodal positions: sequence ", b, " has ", n,
                                                    " real tokens, fewer than its ", image ? "image's" : "video's",
                                                    " grid (", grid[0], ", ", grid[1], ", ", grid[2], ") covers");
            add_text(ed - st);
            const std::int64_t base = next;
            std::int64_t largest = base - 1;
            for (std::int64_t f = 0; f < gt; ++f) {
                std::int64_t temporal = f;
                if (!image && vision.tokens_per_second > 0) {  // Qwen2.5-VL, in float32 as torch
                    const float seconds_each = grids.whole_seconds ? std::trunc(static_cast<float>(second))
                                                                    : static_cast<float>(second);
                    const float time = static_cast<float>(static_cast<float>(f) * seconds_each) *
                                       static_cast<float>(vision.tokens_per_second);
                    if (!(time < 0x1p40f))
                        seqembed::detail::fail<value_error>("multimodal positions: frame ", f, " of a video at ",
                                                            second, " seconds per frame is past any position");
                    temporal = static_cast<std::int64_t>(time);
                } else if (image && vision.tokens_per_second > 0) {
                    temporal = 0;  // an image's second_per_grid_t is 0
                }
                for (std::int64_t h = 0; h < gh; ++h)
                    for (std::int64_t w = 0; w < gw; ++w) {
                        ids3.push_back({base + temporal, base + h, base + w});
                        largest = std::max({largest, base + temporal, base + h, base + w});
                    }
            }
            next = largest + 1;
            st = ed + gt * gh * gw;
        }
        if (st < n) add_text(n - st);
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
