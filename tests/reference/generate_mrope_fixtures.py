#!/usr/bin/python3
"""Golden fixtures for Qwen-VL's and GLM-4V's multimodal rotary positions (M-RoPE).

    /usr/bin/python3 tests/reference/generate_mrope_fixtures.py

Writes tests/fixtures/rope/mrope_cases.hpp (namespace seqembed_mrope_fixtures). Use Debian's
interpreter (torch 1.13). Running it twice gives a byte-identical header; CI never runs Python.

What was read (Hugging Face transformers, through the search index):
  src/transformers/models/qwen2_vl/modeling_qwen2_vl.py @ 928b5565 (~4.46):
      Qwen2VLModel.get_rope_index (the vision start token's successor counts the images and
      videos; each block after the text before it, t-major then h then w, merged grid; the text
      after it from the block's max + 1; padded tokens 1 through torch.ones; deltas max + 1 -
      the padded length; without grids cumsum(mask) - 1, masked_fill 1, deltas from the padded
      positions' max), Qwen2VLRotaryEmbedding.forward (inv_freq expanded to three rows, float32
      products, cat(freqs, freqs), cos, sin), apply_multimodal_rotary_pos_emb (mrope_section * 2,
      split, chunk i takes row i % 3), rotate_half.
  src/transformers/models/qwen2_5_vl/modeling_qwen2_5_vl.py @ efa7189c (~4.49): the same, a
      video's temporal ids (arange(t) * second_per_grid_t * tokens_per_second).long() in float32
      (images: second_per_grid_t 0; no second_per_grid_ts: 1.0); @ a59124e2 (~4.57, and 4.52's
      f834d368): second_per_grid_t = torch.as_tensor(second_per_grid_t, dtype=int64) first.
  src/transformers/models/qwen3_vl/modeling_qwen3_vl.py @ 68a7b7e2 (4.57): get_rope_index with
      video_grid_thw repeat_interleave'd by its t and t set to 1 (each frame its own block);
      Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope (row 0's frequencies, slice(offset,
      3 * section, 3) of rows 1 and 2 replaced), then rotate_half.

  src/transformers/models/glm4v/modeling_glm4v.py @ v4.57.1 (8cb5963c): Glm4vModel.get_rope_index
      (the real tokens typed: image_token_id between video_start and video_end a video's, else an
      image's, others text; runs grouped by itertools.groupby; an image run one image grid, a
      video run one frame (t = 1) of the current video, video_grid_thw's t runs a video; each
      group from the previous group's max + 1; padded tokens 1; deltas and the text branch as
      Qwen2-VL's), apply_multimodal_rotary_pos_emb (the sections over the rotary_dim / 2
      frequencies, repeat_interleave'd, rotate_half_llm: interleaved pairs, the dimensions past
      rotary_dim passed through); modeling_glm4v_moe.py @ v4.57.1: the same index, rotate_half
      (halves).

The functions below follow that code step for step, in torch (the ids small so the fixtures
stay small: image 7, video 8, vision start 5, spatial_merge_size 2, tokens_per_second 2; GLM-4V:
image 7, begin and end of image 3 and 4, video start and end 5 and 6).
"""
import itertools

import numpy
import torch

IMAGE, VIDEO, START, END = 7, 8, 5, 6
BOI, EOI = 3, 4  # GLM-4V's begin and end of image; START and END its video start and end
MERGE = 2


def glm4v_rope_index(input_ids, image_grid_thw=None, video_grid_thw=None, attention_mask=None):
    if input_ids is None or (image_grid_thw is None and video_grid_thw is None):
        return get_rope_index("qwen2_vl", input_ids, attention_mask=attention_mask)  # the same text branch
    mrope_position_deltas = []
    total_input_ids = input_ids
    if attention_mask is None:
        attention_mask = torch.ones_like(total_input_ids)
    position_ids = torch.ones(3, input_ids.shape[0], input_ids.shape[1], dtype=input_ids.dtype)
    image_index, video_index = 0, 0
    video_group_index = 0
    for i, input_ids in enumerate(total_input_ids):
        input_ids = input_ids[attention_mask[i] == 1]
        input_tokens = input_ids.tolist()
        input_token_type = []
        video_check_flg = False
        for token in input_tokens:
            if token == START:
                video_check_flg = True
            elif token == END:
                video_check_flg = False
            if token == IMAGE and not video_check_flg:
                input_token_type.append("image")
            elif token == IMAGE and video_check_flg:
                input_token_type.append("video")
            else:
                input_token_type.append("text")
        input_type_group = []
        for key, group in itertools.groupby(enumerate(input_token_type), lambda x: x[1]):
            group = list(group)
            input_type_group.append((key, group[0][0], group[-1][0] + 1))
        llm_pos_ids_list = []
        video_frame_num = 1
        for modality_type, start_idx, end_idx in input_type_group:
            st_idx = llm_pos_ids_list[-1].max() + 1 if len(llm_pos_ids_list) > 0 else 0
            if modality_type == "image":
                t, h, w = image_grid_thw[image_index][0], image_grid_thw[image_index][1], image_grid_thw[image_index][2]
                llm_grid_t, llm_grid_h, llm_grid_w = t.item(), h.item() // MERGE, w.item() // MERGE
                t_index = torch.arange(llm_grid_t).view(-1, 1).expand(-1, llm_grid_h * llm_grid_w).flatten()
                h_index = torch.arange(llm_grid_h).view(1, -1, 1).expand(llm_grid_t, -1, llm_grid_w).flatten()
                w_index = torch.arange(llm_grid_w).view(1, 1, -1).expand(llm_grid_t, llm_grid_h, -1).flatten()
                llm_pos_ids_list.append(torch.stack([t_index, h_index, w_index]) + st_idx)
                image_index += 1
                video_frame_num = 1
            elif modality_type == "video":
                t, h, w = video_frame_num, video_grid_thw[video_index][1], video_grid_thw[video_index][2]
                llm_grid_t, llm_grid_h, llm_grid_w = t, h.item() // MERGE, w.item() // MERGE
                for t_idx in range(llm_grid_t):
                    t_index = torch.tensor(t_idx).view(-1, 1).expand(-1, llm_grid_h * llm_grid_w).flatten()
                    h_index = torch.arange(llm_grid_h).view(1, -1, 1).expand(1, -1, llm_grid_w).flatten()
                    w_index = torch.arange(llm_grid_w).view(1, 1, -1).expand(1, llm_grid_h, -1).flatten()
                    llm_pos_ids_list.append(torch.stack([t_index, h_index, w_index]) + st_idx)
                video_group_index += 1
                if video_group_index >= video_grid_thw[video_index][0]:
                    video_index += 1
                    video_group_index = 0
                video_frame_num += 1
            else:
                text_len = end_idx - start_idx
                llm_pos_ids_list.append(torch.arange(text_len).view(1, -1).expand(3, -1) + st_idx)
                video_frame_num = 1
        llm_positions = torch.cat(llm_pos_ids_list, dim=1).reshape(3, -1)
        position_ids[..., i, attention_mask[i] == 1] = llm_positions
        mrope_position_deltas.append(llm_positions.max() + 1 - len(total_input_ids[i]))
    return position_ids, torch.tensor(mrope_position_deltas).unsqueeze(1)


def get_rope_index(family, input_ids, image_grid_thw=None, video_grid_thw=None, second_per_grid_ts=None,
                   attention_mask=None, tokens_per_second=2, whole_seconds=True):
    if family == "qwen3_vl" and video_grid_thw is not None:
        video_grid_thw = torch.repeat_interleave(video_grid_thw, video_grid_thw[:, 0], dim=0)
        video_grid_thw[:, 0] = 1
    mrope_position_deltas = []
    if input_ids is not None and (image_grid_thw is not None or video_grid_thw is not None):
        total_input_ids = input_ids
        if attention_mask is None:
            attention_mask = torch.ones_like(total_input_ids)
        position_ids = torch.ones(3, input_ids.shape[0], input_ids.shape[1], dtype=input_ids.dtype)
        image_index, video_index = 0, 0
        for i, input_ids in enumerate(total_input_ids):
            input_ids = input_ids[attention_mask[i] == 1]
            image_nums, video_nums = 0, 0
            vision_start_indices = torch.argwhere(input_ids == START).squeeze(1)
            vision_tokens = input_ids[vision_start_indices + 1]
            image_nums = (vision_tokens == IMAGE).sum()
            video_nums = (vision_tokens == VIDEO).sum()
            input_tokens = input_ids.tolist()
            llm_pos_ids_list = []
            st = 0
            remain_images, remain_videos = image_nums, video_nums
            for _ in range(image_nums + video_nums):
                if IMAGE in input_tokens and remain_images > 0:
                    ed_image = input_tokens.index(IMAGE, st)
                else:
                    ed_image = len(input_tokens) + 1
                if VIDEO in input_tokens and remain_videos > 0:
                    ed_video = input_tokens.index(VIDEO, st)
                else:
                    ed_video = len(input_tokens) + 1
                if ed_image < ed_video:
                    t, h, w = image_grid_thw[image_index][0], image_grid_thw[image_index][1], image_grid_thw[image_index][2]
                    second_per_grid_t = 0
                    image_index += 1
                    remain_images -= 1
                    ed = ed_image
                else:
                    t, h, w = video_grid_thw[video_index][0], video_grid_thw[video_index][1], video_grid_thw[video_index][2]
                    if second_per_grid_ts is not None:
                        second_per_grid_t = second_per_grid_ts[video_index]
                    else:
                        second_per_grid_t = 1.0
                    video_index += 1
                    remain_videos -= 1
                    ed = ed_video
                llm_grid_t, llm_grid_h, llm_grid_w = t.item(), h.item() // MERGE, w.item() // MERGE
                text_len = ed - st
                st_idx = llm_pos_ids_list[-1].max() + 1 if len(llm_pos_ids_list) > 0 else 0
                llm_pos_ids_list.append(torch.arange(text_len).view(1, -1).expand(3, -1) + st_idx)
                if family == "qwen2_5_vl":
                    range_tensor = torch.arange(llm_grid_t).view(-1, 1)
                    expanded_range = range_tensor.expand(-1, llm_grid_h * llm_grid_w)
                    if whole_seconds:  # 4.52 to 4.57 and 5.0
                        second_per_grid_t = torch.as_tensor(second_per_grid_t, dtype=range_tensor.dtype)
                    time_tensor = expanded_range * second_per_grid_t * tokens_per_second
                    t_index = time_tensor.long().flatten()
                else:
                    t_index = torch.arange(llm_grid_t).view(-1, 1).expand(-1, llm_grid_h * llm_grid_w).flatten()
                h_index = torch.arange(llm_grid_h).view(1, -1, 1).expand(llm_grid_t, -1, llm_grid_w).flatten()
                w_index = torch.arange(llm_grid_w).view(1, 1, -1).expand(llm_grid_t, llm_grid_h, -1).flatten()
                llm_pos_ids_list.append(torch.stack([t_index, h_index, w_index]) + text_len + st_idx)
                st = ed + llm_grid_t * llm_grid_h * llm_grid_w
            if st < len(input_tokens):
                st_idx = llm_pos_ids_list[-1].max() + 1 if len(llm_pos_ids_list) > 0 else 0
                text_len = len(input_tokens) - st
                llm_pos_ids_list.append(torch.arange(text_len).view(1, -1).expand(3, -1) + st_idx)
            llm_positions = torch.cat(llm_pos_ids_list, dim=1).reshape(3, -1)
            position_ids[..., i, attention_mask[i] == 1] = llm_positions
            mrope_position_deltas.append(llm_positions.max() + 1 - len(total_input_ids[i]))
        mrope_position_deltas = torch.tensor(mrope_position_deltas).unsqueeze(1)
        return position_ids, mrope_position_deltas
    if attention_mask is not None:
        position_ids = attention_mask.long().cumsum(-1) - 1
        position_ids.masked_fill_(attention_mask == 0, 1)
        position_ids = position_ids.unsqueeze(0).expand(3, -1, -1)
        max_position_ids = position_ids.max(0, keepdim=False)[0].max(-1, keepdim=True)[0]
        mrope_position_deltas = max_position_ids + 1 - attention_mask.shape[-1]
    else:
        position_ids = torch.arange(input_ids.shape[1]).view(1, 1, -1).expand(3, input_ids.shape[0], -1)
        mrope_position_deltas = torch.zeros([input_ids.shape[0], 1], dtype=input_ids.dtype)
    return position_ids, mrope_position_deltas


def rotary_cos_sin(position_ids, head_dim, theta, family, mrope_section):
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    inv_freq_expanded = inv_freq[None, None, :, None].float().expand(3, position_ids.shape[1], -1, 1)
    position_ids_expanded = position_ids[:, :, None, :].float()
    freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(2, 3)
    if family == "qwen3_vl":
        freqs_t = freqs[0]
        for dim, offset in enumerate((1, 2), start=1):
            length = mrope_section[dim] * 3
            idx = slice(offset, length, 3)
            freqs_t[..., idx] = freqs[dim, ..., idx]
        emb = torch.cat((freqs_t, freqs_t), dim=-1)
        return emb.cos()[None], emb.sin()[None]  # one row, as the sections are picked already
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def rotate_half_llm(x):
    x1 = x[..., 0::2]
    x2 = x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply(q, k, cos, sin, family, mrope_section):
    # q: (batch, heads, seq, head_dim); cos: (3, batch, seq, rotary_dim) or (1, ...)
    if family.startswith("glm4v"):
        section = mrope_section * 2
        c = torch.cat([m[i % 3] for i, m in enumerate(cos.split(section, dim=-1))], dim=-1).unsqueeze(1)
        s = torch.cat([m[i % 3] for i, m in enumerate(sin.split(section, dim=-1))], dim=-1).unsqueeze(1)
        rotate = rotate_half
        if family == "glm4v":
            c = c[..., : c.shape[-1] // 2].repeat_interleave(2, dim=-1)
            s = s[..., : s.shape[-1] // 2].repeat_interleave(2, dim=-1)
            rotate = rotate_half_llm
        rotary_dim = c.shape[-1]
        out = []
        for x in (q, k):
            x_rot, x_pass = x[..., :rotary_dim], x[..., rotary_dim:]
            out.append(torch.cat([(x_rot * c) + (rotate(x_rot) * s), x_pass], dim=-1))
        return out[0], out[1]
    if family == "qwen3_vl":
        c, s = cos[0].unsqueeze(1), sin[0].unsqueeze(1)
    else:
        section = mrope_section * 2
        c = torch.cat([m[i % 3] for i, m in enumerate(cos.split(section, dim=-1))], dim=-1).unsqueeze(1)
        s = torch.cat([m[i % 3] for i, m in enumerate(sin.split(section, dim=-1))], dim=-1).unsqueeze(1)
    return (q * c) + (rotate_half(q) * s), (k * c) + (rotate_half(k) * s)


def prompt(parts):
    """A sequence from text ids and (kind, tokens) blocks, each block inside vision start/end."""
    ids = []
    for part in parts:
        if isinstance(part, tuple):
            kind, count = part
            ids += [START] + [IMAGE if kind == "image" else VIDEO] * count + [END]
        else:
            ids += part
    return ids


CASES = []


def case(name, family, rows, pad_left, images=None, videos=None, seconds=None, with_mask=True, whole_seconds=True):
    length = max(len(r) for r in rows)
    ids, mask = [], []
    for r in rows:
        pad = [0] * (length - len(r))
        ids.append(pad + r if pad_left else r + pad)
        mask.append([0] * len(pad) + [1] * len(r) if pad_left else [1] * len(r) + [0] * len(pad))
    input_ids = torch.tensor(ids, dtype=torch.int64)
    attention_mask = torch.tensor(mask, dtype=torch.int64) if with_mask else None
    image_grid = torch.tensor(images, dtype=torch.int64) if images else None
    video_grid = torch.tensor(videos, dtype=torch.int64) if videos else None
    second = torch.tensor(seconds, dtype=torch.float32) if seconds is not None else None
    if family.startswith("glm4v"):
        positions, deltas = glm4v_rope_index(input_ids, image_grid, video_grid, attention_mask)
    else:
        positions, deltas = get_rope_index(family, input_ids, image_grid, video_grid, second, attention_mask,
                                           whole_seconds=whole_seconds)
    CASES.append(dict(name=name, family=family, ids=input_ids, mask=attention_mask, images=images or [],
                      videos=videos or [], seconds=seconds or [], whole_seconds=whole_seconds,
                      positions=positions, deltas=deltas.flatten()))


def build_cases():
    # Qwen2-VL: an image of 2 x 4 x 6 patches (1 x 2 x 3 merged, 6 tokens) between text, and a
    # video of 3 x 4 x 4 (3 x 2 x 2, 12 tokens) in the second sequence; left padding.
    case("qwen2_vl_image_video_left", "qwen2_vl",
         [prompt([[11, 12], ("image", 6), [13, 14, 15]]),
          prompt([[16], ("video", 12), [17]])], True,
         images=[[1, 4, 6]], videos=[[3, 4, 4]])
    # Two images in one sequence, right padding, a short second sequence of text only.
    case("qwen2_vl_two_images_right", "qwen2_vl",
         [prompt([[11], ("image", 4), [12], ("image", 2), [13, 14]]),
          prompt([[15, 16, 17]])], False,
         images=[[1, 4, 4], [1, 2, 4]])
    # Text only, with and without a mask (Hugging Face's text branch).
    case("qwen2_vl_text_left", "qwen2_vl", [[11, 12, 13, 14], [15, 16]], True)
    case("qwen2_vl_text_single", "qwen2_vl", [[11, 12, 13], [15]], True)
    case("qwen2_vl_text_no_mask", "qwen2_vl", [[11, 12, 13]], False, with_mask=False)
    # Qwen2.5-VL: a video of 4 x 4 x 4 patches at 0.5 and 2 seconds per temporal patch
    # (tokens_per_second 2: frames 1 and 4 ids apart), an image first.
    case("qwen2_5_vl_video_half_second", "qwen2_5_vl",  # 4.52+: every frame temporal 0
         [prompt([[11], ("image", 2), [12], ("video", 16), [13, 14]])], False,
         images=[[1, 2, 4]], videos=[[4, 4, 4]], seconds=[0.5])
    case("qwen2_5_vl_video_half_second_4_49", "qwen2_5_vl",
         [prompt([[11], ("image", 2), [12], ("video", 16), [13, 14]])], False,
         images=[[1, 2, 4]], videos=[[4, 4, 4]], seconds=[0.5], whole_seconds=False)
    case("qwen2_5_vl_videos_two_rates", "qwen2_5_vl",
         [prompt([[11], ("video", 8), [12]]), prompt([("video", 4), [13]])], True,
         videos=[[2, 4, 4], [1, 4, 4]], seconds=[2.0, 0.75])
    case("qwen2_5_vl_videos_two_rates_4_49", "qwen2_5_vl",
         [prompt([[11], ("video", 8), [12]]), prompt([("video", 4), [13]])], True,
         videos=[[2, 4, 4], [1, 4, 4]], seconds=[2.0, 0.75], whole_seconds=False)
    case("qwen2_5_vl_no_seconds", "qwen2_5_vl", [prompt([[11], ("video", 8), [12]])], False, videos=[[2, 4, 4]])
    # Qwen3-VL: a video of 3 frames, each its own block after its timestamp text.
    case("qwen3_vl_video_frames", "qwen3_vl",
         [prompt([[11], [21], ("video", 4), [22], ("video", 4), [23], ("video", 4), [12, 13]]),
          prompt([[14], ("image", 6), [15]])], True,
         images=[[1, 4, 6]], videos=[[3, 4, 4]])
    # GLM-4.1V: an image (1 x 2 x 3 merged), then a video of 2 frames (2 x 2 each), each frame
    # between begin and end of image with its timestamp after it, inside video start and end;
    # left padding, the second sequence an image of 2 x 2 alone.
    case("glm4v_image_video_left", "glm4v",
         [[11, BOI] + [IMAGE] * 6 + [EOI, 12, START, BOI] + [IMAGE] * 4 + [EOI, 21, BOI] + [IMAGE] * 4 +
          [EOI, 22, END, 13],
          [14, BOI] + [IMAGE] * 4 + [EOI, 15]], True,
         images=[[1, 4, 6], [1, 4, 4]], videos=[[2, 4, 4]])
    # GLM-4.5V: two videos in a row (1 frame of 2 x 4, then 3 frames of 2 x 2, the timestamps
    # text), right padding, a second sequence of text only; an image wider than tall first.
    case("glm4v_moe_videos_right", "glm4v_moe",
         [[11, BOI, IMAGE, IMAGE, EOI, START, BOI] + [IMAGE] * 2 + [EOI, 21, END, START, BOI, IMAGE, EOI, 22, BOI,
                                                                      IMAGE, EOI, 23, BOI, IMAGE, EOI, 24, END, 12],
          [13, 14, 15]], False,
         images=[[1, 2, 4]], videos=[[1, 2, 4], [3, 2, 2]])
    case("glm4v_text_left", "glm4v", [[11, 12, 13, 14], [15, 16]], True)


APPLY = [  # (name, family, positions case, head_dim, rotary_dim, mrope_section, q_heads, k_heads, theta)
    ("qwen2_vl_apply", "qwen2_vl", "qwen2_vl_image_video_left", 16, 16, [2, 3, 3], 2, 1, 1000000.0),
    ("qwen2_5_vl_apply", "qwen2_5_vl", "qwen2_5_vl_video_half_second", 16, 16, [2, 3, 3], 3, 1, 1000000.0),
    ("qwen3_vl_apply", "qwen3_vl", "qwen3_vl_video_frames", 16, 16, [4, 2, 2], 2, 2, 5000000.0),
    ("glm4v_apply", "glm4v", "glm4v_image_video_left", 16, 8, [2, 1, 1], 2, 1, 10000.0),
    ("glm4v_moe_apply", "glm4v_moe", "glm4v_moe_videos_right", 16, 8, [1, 2, 1], 3, 1, 10000.0),
]


def c_list(values, kind):
    return "{" + ", ".join(kind(v) for v in values) + "}"


def f32(v):
    return repr(float(v))


def main():
    build_cases()
    out = []
    out.append("// Generated by tests/reference/generate_mrope_fixtures.py -- do not edit by hand.")
    out.append("#pragma once")
    out.append("// torch %s. Qwen-VL's and GLM-4V's get_rope_index and M-RoPE as transformers 4.x computes them"
               % torch.__version__.split("+")[0])
    out.append("// (the generator's docstring names the files read). Ids: image 7, video 8, vision start 5,")
    out.append("// spatial_merge_size 2, tokens_per_second 2 (Qwen2.5-VL); GLM-4V: image 7, begin and end of")
    out.append("// image 3 and 4, video start and end 5 and 6.")
    out.append("#include <vector>")
    out.append("namespace seqembed_mrope_fixtures {")
    out.append("")
    out.append("struct IndexCase {")
    out.append("    const char* name;")
    out.append("    const char* family;                 // qwen2_vl | qwen2_5_vl | qwen3_vl | glm4v | glm4v_moe")
    out.append("    long batch, seq;")
    out.append("    std::vector<long> ids;              // batch x seq")
    out.append("    std::vector<long> mask;             // batch x seq, empty: no attention_mask")
    out.append("    std::vector<long> image_grid_thw;   // images x 3")
    out.append("    std::vector<long> video_grid_thw;   // videos x 3")
    out.append("    std::vector<double> second_per_grid_ts;")
    out.append("    bool whole_seconds;                 // Qwen2.5-VL: transformers 4.52+ (true) or 4.49 (false)")
    out.append("    std::vector<long> positions;        // 3 x batch x seq")
    out.append("    std::vector<long> rope_deltas;      // batch")
    out.append("};")
    out.append("")
    out.append("inline const std::vector<IndexCase>& index_cases() {")
    out.append("    static const std::vector<IndexCase> cases = {")
    for c in CASES:
        b, l = c["ids"].shape
        mask = c["mask"].flatten().tolist() if c["mask"] is not None else []
        out.append("        {\"%s\", \"%s\", %d, %d," % (c["name"], c["family"], b, l))
        out.append("         %s," % c_list(c["ids"].flatten().tolist(), str))
        out.append("         %s," % c_list(mask, str))
        out.append("         %s," % c_list([v for r in c["images"] for v in r], str))
        out.append("         %s," % c_list([v for r in c["videos"] for v in r], str))
        out.append("         %s, %s," % (c_list(c["seconds"], f32), "true" if c["whole_seconds"] else "false"))
        out.append("         %s," % c_list(c["positions"].flatten().tolist(), str))
        out.append("         %s}," % c_list(c["deltas"].tolist(), str))
    out.append("    };")
    out.append("    return cases;")
    out.append("}")
    out.append("")
    out.append("struct ApplyCase {")
    out.append("    const char* name;")
    out.append("    const char* family;")
    out.append("    const char* index_case;             // whose positions rotate")
    out.append("    long head_dim, rotary_dim, q_heads, k_heads;")
    out.append("    bool interleaved;                   // pairs (2i, 2i + 1) (GLM-4.1V) rather than halves")
    out.append("    long mrope_section[3];")
    out.append("    double theta;")
    out.append("    std::vector<float> q, k;            // tokens x (heads * head_dim), before")
    out.append("    std::vector<float> q_out, k_out;    // after, as Hugging Face's float32 forward")
    out.append("};")
    out.append("")
    out.append("inline const std::vector<ApplyCase>& apply_cases() {")
    out.append("    static const std::vector<ApplyCase> cases = {")
    generator = torch.Generator().manual_seed(2026)
    for name, family, index_name, d, rotary_dim, section, qh, kh, theta in APPLY:
        c = next(x for x in CASES if x["name"] == index_name)
        b, l = c["ids"].shape
        q = torch.randn(b, qh, l, d, generator=generator, dtype=torch.float32)
        k = torch.randn(b, kh, l, d, generator=generator, dtype=torch.float32)
        cos, sin = rotary_cos_sin(c["positions"], rotary_dim, theta, family, section)
        q_out, k_out = apply(q, k, cos, sin, family, section)
        rows = lambda x: x.permute(0, 2, 1, 3).reshape(b * l, -1).flatten().tolist()
        out.append("        {\"%s\", \"%s\", \"%s\", %d, %d, %d, %d, %s, {%d, %d, %d}, %r," %
                   (name, family, index_name, d, rotary_dim, qh, kh, "true" if family == "glm4v" else "false",
                    section[0], section[1], section[2], theta))
        for tensor, end in ((q, ","), (k, ","), (q_out, ","), (k_out, "},")):
            out.append("         %s%s" % (c_list(rows(tensor), lambda v: str(numpy.float32(v)) + "f"), end))
    out.append("    };")
    out.append("    return cases;")
    out.append("}")
    out.append("")
    out.append("}  // namespace seqembed_mrope_fixtures")
    with open("tests/fixtures/rope/mrope_cases.hpp", "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    torch.set_num_threads(1)
    main()
