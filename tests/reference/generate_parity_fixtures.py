#!/usr/bin/python3
"""Whole outputs of the families' current Hugging Face forwards, for every input they take (issue 25).

    /usr/bin/python3 tests/reference/generate_parity_fixtures.py

generate_family_fixtures.py checks the real rows of padded batches called with input_ids and an
attention mask. This script checks what else a family's forward takes, and every row it outputs:

  - pad ids inside a sequence under an all-ones mask (RoBERTa numbers positions from the ids);
  - padded rows, as the framework computes them (BERT-like: word[pad] + position[t]; RoBERTa:
    position row padding_idx; OPT: row 1);
  - an attention mask over past + current tokens with left padding (decoding with a cache),
    with the positions each forward derives from it (past + t, OPT's cumsum, RoBERTa's ids);
  - explicit position_ids (what generate() computes: cumsum(mask) - 1, padded tokens 1) for the
    families whose forward takes them;
  - GPT-2's token types (wte(token_type_ids), added after the positions);
  - the decoders' stages of BART (own position table and layernorm_embedding), Marian and T5;
  - checkpoints the families' loaders must also read: BERT converted from TensorFlow
    (LayerNorm.gamma/beta, the int64 embeddings.position_ids buffer of transformers < 4.31),
    BART with its decoder, and Phi-3 (LongRoPE config).

Writes tests/fixtures/models/parity/<name>/ (new checkpoints) and
tests/fixtures/models/parity_cases.hpp. The other families' checkpoints are the committed ones
of generate_family_fixtures.py (run that first).

Each forward is written again in plain torch from the current transformers release's modeling
code (src/transformers/models/<family>/modeling_<family>.py, read with the search tool):
  bert/electra  BertEmbeddings.forward: position_ids = buffer[:, past : past + seq] unless given;
                token_type_ids zeros unless given; (word + type) += position; LayerNorm.
                ElectraModel applies embeddings_project after the embeddings.
  roberta       RobertaEmbeddings.forward: position_ids =
                create_position_ids_from_input_ids(input_ids, padding_idx, past) unless given
                (given ones index the table as they are).
  gpt2          GPT2Model.forward: position_ids = cache_position (arange(past, past + seq))
                unless given; (wte + wpe) then + wte(token_type_ids) when given.
  bart          BartEncoder: arange(0, seq) + 2; BartDecoder: arange(past, past + seq) + 2 (the
                cache position); embed_tokens * embed_scale + positions, layernorm_embedding.
  opt           OPTDecoder.forward: attention_mask (ones over past + seq when None);
                position_ids = (cumsum(mask) * mask - 1)[:, past:] unless given; table[+2];
                project_in(embed_tokens(ids)) + positions.
  marian        MarianEncoder/Decoder: embed_tokens * embed_scale + sinusoidal rows
                arange(past, past + seq).
  t5            T5Stack: embed_tokens(ids) (encoder and decoder share it).
  llama, mistral, qwen2, phi, phi3, gpt_neox: embed_tokens(ids); gemma: * normalizer.
                position_ids = cache_position (arange(past, past + seq)) unless given.

Use Debian's interpreter (torch 1.13, numpy). Running it twice gives identical files.
"""

import os
import sys

os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import json
import math
import pathlib

import numpy as np
import torch

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MODELS = ROOT / "tests" / "fixtures" / "models"
OUT = MODELS / "parity"

sys.path.insert(0, str(HERE))
from generate_io_fixtures import read_safetensors, safetensors_bytes  # noqa: E402
from generate_family_fixtures import hexfloat, cpp_string  # noqa: E402

BATCH, SEQ, PAST = 3, 6, 4
ISSUE = 25


def f32(t):
    return t.to(torch.float32)


def layer_norm(x, w, b, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def roberta_positions(ids, padding_idx, past):
    """create_position_ids_from_input_ids: int32 cumsum, cast to int64 at the end."""
    mask = ids.ne(padding_idx).int()
    counted = (torch.cumsum(mask, dim=1).type_as(mask) + past) * mask
    return counted.long() + padding_idx


def arange_positions(batch, seq, past):
    return torch.arange(past, past + seq, dtype=torch.long).unsqueeze(0).expand(batch, seq)


# ----------------------------------------------------------------------------------------------
# The forwards: (tensors, config, ids, mask, types, position_ids, past, side) -> (output, hf_position_ids)
# mask is over past + seq columns; hf_position_ids are the position ids the forward used (before
# any offset its embedding adds), or None where the family has none.

def forward_bert(w, cfg, ids, mask, types, position_ids, past, side, prefix):
    batch, seq = ids.shape
    if position_ids is None:
        position_ids = arange_positions(batch, seq, past)
    if types is None:
        types = torch.zeros_like(ids)
    p = prefix
    x = w[p + "word_embeddings.weight"][ids] + w[p + "token_type_embeddings.weight"][types]
    x = x + w[p + "position_embeddings.weight"][position_ids]
    ln_w = w.get(p + "LayerNorm.weight", w.get(p + "LayerNorm.gamma"))
    ln_b = w.get(p + "LayerNorm.bias", w.get(p + "LayerNorm.beta"))
    x = layer_norm(x, ln_w, ln_b, cfg["layer_norm_eps"])
    if "embeddings_project.weight" in w:
        x = x @ w["embeddings_project.weight"].T + w["embeddings_project.bias"]
    return x, position_ids


def forward_roberta(w, cfg, ids, mask, types, position_ids, past, side):
    if position_ids is None:
        position_ids = roberta_positions(ids, cfg["pad_token_id"], past)
    p = "roberta.embeddings."
    if types is None:
        types = torch.zeros_like(ids)
    x = w[p + "word_embeddings.weight"][ids] + w[p + "token_type_embeddings.weight"][types]
    x = x + w[p + "position_embeddings.weight"][position_ids]
    x = layer_norm(x, w[p + "LayerNorm.weight"], w[p + "LayerNorm.bias"], cfg["layer_norm_eps"])
    return x, position_ids


def forward_gpt2(w, cfg, ids, mask, types, position_ids, past, side):
    batch, seq = ids.shape
    if position_ids is None:
        position_ids = arange_positions(batch, seq, past)
    h = w["transformer.wte.weight"][ids] + w["transformer.wpe.weight"][position_ids]
    if types is not None:
        h = h + w["transformer.wte.weight"][types]
    return h, position_ids


def forward_bart(w, cfg, ids, mask, types, position_ids, past, side):
    batch, seq = ids.shape
    start = past if side == "decoder" else 0
    positions = arange_positions(batch, seq, start)
    scale = math.sqrt(cfg["d_model"]) if cfg["scale_embedding"] else 1.0
    x = w["model.shared.weight"][ids] * scale + w[f"model.{side}.embed_positions.weight"][positions + 2]
    x = layer_norm(x, w[f"model.{side}.layernorm_embedding.weight"], w[f"model.{side}.layernorm_embedding.bias"], 1e-5)
    return x, positions


def forward_opt(w, cfg, ids, mask, types, position_ids, past, side):
    if position_ids is None:
        position_ids = torch.cumsum(mask, dim=1)
        position_ids = (position_ids * mask - 1).long()
        position_ids = position_ids[:, past:]
    tokens = w["model.decoder.embed_tokens.weight"][ids]
    tokens = tokens @ w["model.decoder.project_in.weight"].T
    return tokens + w["model.decoder.embed_positions.weight"][position_ids + 2], position_ids


def forward_marian(w, cfg, ids, mask, types, position_ids, past, side):
    batch, seq = ids.shape
    start = past if side == "decoder" else 0
    positions = arange_positions(batch, seq, start)
    scale = math.sqrt(cfg["d_model"]) if cfg["scale_embedding"] else 1.0
    table = w["model.encoder.embed_positions.weight"]  # the decoder's sinusoidal table is the same
    return w["model.encoder.embed_tokens.weight"][ids] * scale + table[positions], positions


def forward_t5(w, cfg, ids, mask, types, position_ids, past, side):
    return w["shared.weight"][ids], None


def forward_lookup(name):
    def forward(w, cfg, ids, mask, types, position_ids, past, side):
        batch, seq = ids.shape
        if position_ids is None:
            position_ids = arange_positions(batch, seq, past)
        table = w["gpt_neox.embed_in.weight" if name == "gpt_neox" else "model.embed_tokens.weight"]
        x = table[ids]
        if name == "gemma":
            x = x * torch.tensor(cfg["hidden_size"] ** 0.5, dtype=x.dtype)
        return x, position_ids
    return forward


FORWARDS = {
    "bert": lambda *a: forward_bert(*a, prefix="bert.embeddings."),
    "bert_legacy": lambda *a: forward_bert(*a, prefix="bert.embeddings."),
    "electra": lambda *a: forward_bert(*a, prefix="embeddings."),
    "roberta": forward_roberta,
    "gpt2": forward_gpt2,
    "bart": forward_bart,
    "opt": forward_opt,
    "marian": forward_marian,
    "t5": forward_t5,
}
for _name in ("llama", "mistral", "qwen2", "gemma", "phi", "phi3", "gpt_neox"):
    FORWARDS[_name] = forward_lookup(_name)

TAKES_POSITION_IDS = {"bert", "bert_legacy", "electra", "roberta", "gpt2", "opt", "llama", "mistral", "qwen2",
                      "gemma", "phi", "phi3", "gpt_neox"}
TAKES_TYPES = {"bert", "bert_legacy", "electra", "roberta", "gpt2"}
DECODERS = {"bart", "marian", "t5"}
LAYER_NORM = {"bert", "bert_legacy", "electra", "roberta", "bart"}
MATRIX_PRODUCT = {"electra", "opt"}


# ----------------------------------------------------------------------------------------------
# New checkpoints

def write_checkpoint(name, state, cfg):
    directory = OUT / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "model.safetensors").write_bytes(safetensors_bytes(state, {"format": "pt"}))
    (directory / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    return directory


def make_new_checkpoints(rng):
    """bert_legacy, bart (with its decoder) and phi3; returns {name: (directory, config)}."""
    made = {}
    # BERT as converted from TensorFlow: LayerNorm.gamma/beta, and the int64 position_ids buffer.
    bert, _ = read_safetensors(MODELS / "bert" / "model.safetensors")
    cfg = json.loads((MODELS / "bert" / "config.json").read_text())
    legacy = {}
    for key, value in bert.items():
        key = key.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
        legacy[key] = value
    legacy["bert.embeddings.position_ids"] = torch.arange(cfg["max_position_embeddings"]).unsqueeze(0)
    made["bert_legacy"] = (write_checkpoint("bert_legacy", legacy, cfg), cfg)

    # BART with its decoder's position table and layernorm_embedding.
    bart, _ = read_safetensors(MODELS / "bart" / "model.safetensors")
    cfg = json.loads((MODELS / "bart" / "config.json").read_text())
    full = dict(bart)
    d = cfg["d_model"]
    full["model.decoder.embed_positions.weight"] = torch.from_numpy(
        rng.standard_normal((cfg["max_position_embeddings"] + 2, d)).astype(np.float32))
    full["model.decoder.layernorm_embedding.weight"] = torch.from_numpy(
        (1.0 + 0.25 * rng.standard_normal(d)).astype(np.float32))
    full["model.decoder.layernorm_embedding.bias"] = torch.from_numpy((0.25 * rng.standard_normal(d)).astype(np.float32))
    made["bart"] = (write_checkpoint("bart", full, cfg), cfg)

    # Phi-3 (mini-128k's config shape): LongRoPE with short and long factors.
    head_dim = 8
    cfg = {"architectures": ["Phi3ForCausalLM"], "model_type": "phi3", "vocab_size": 84, "hidden_size": 16,
           "num_attention_heads": 2, "num_key_value_heads": 2, "max_position_embeddings": 256,
           "original_max_position_embeddings": 32, "rope_theta": 10000.0,
           "rope_scaling": {"type": "longrope",
                            "short_factor": [1.0, 1.25, 1.5, 2.0][: head_dim // 2],
                            "long_factor": [1.5, 3.0, 6.0, 12.0][: head_dim // 2]},
           "rms_norm_eps": 1e-5, "embd_pdrop": 0.0, "pad_token_id": 83, "bos_token_id": 1, "eos_token_id": 2,
           "sliding_window": 2047, "tie_word_embeddings": False, "torch_dtype": "float32"}
    state = {"model.embed_tokens.weight": torch.from_numpy(rng.standard_normal((84, 16)).astype(np.float32))}
    made["phi3"] = (write_checkpoint("phi3", state, cfg), cfg)
    return made


# ----------------------------------------------------------------------------------------------
# Cases

def pad_of(cfg):
    return cfg.get("pad_token_id", 0)


def random_ids(rng, vocab_size, pad, shape):
    choices = np.array([i for i in range(vocab_size) if i != pad], dtype=np.int64)
    return rng.choice(choices, size=shape)


def make_cases(name, cfg, rng):
    """[(case name, ids, mask over past + seq, past, token types or None, position ids or None, side)]."""
    vocab = cfg["vocab_size"]
    pad = pad_of(cfg)
    cases = []
    # Pad ids inside the sequences, every token attended.
    ids = random_ids(rng, vocab, pad, (BATCH, SEQ))
    ids[0, 2] = pad
    ids[1, 0] = pad
    ids[1, 4] = pad
    ids[2, SEQ - 1] = pad
    cases.append(("pad_inside", ids, np.ones((BATCH, SEQ), dtype=np.int64), 0, None, None, "encoder"))
    # Left padding: every row, padded ones included.
    lengths = [SEQ, 4, 2]
    ids = random_ids(rng, vocab, pad, (BATCH, SEQ))
    mask = np.zeros((BATCH, SEQ), dtype=np.int64)
    for b, n in enumerate(lengths):
        ids[b, : SEQ - n] = pad
        mask[b, SEQ - n:] = 1
    cases.append(("left_padding", ids, mask, 0, None, None, "encoder"))
    # Right padding.
    ids = random_ids(rng, vocab, pad, (BATCH, SEQ))
    mask = np.zeros((BATCH, SEQ), dtype=np.int64)
    for b, n in enumerate(lengths):
        ids[b, n:] = pad
        mask[b, :n] = 1
    cases.append(("right_padding", ids, mask, 0, None, None, "encoder"))
    # Decoding with a cache: a mask over PAST + 2 tokens, the past left-padded.
    if name not in ("bart", "marian", "t5"):
        new = 2
        ids = random_ids(rng, vocab, pad, (BATCH, new))
        mask = np.ones((BATCH, PAST + new), dtype=np.int64)
        mask[1, :2] = 0
        mask[2, :3] = 0
        mask[2, PAST + 1] = 0
        ids[2, 1] = pad
        cases.append(("past_mask", ids, mask, PAST, None, None, "encoder"))
    # Explicit position ids, as generate() computes them from a left-padded mask.
    if name in TAKES_POSITION_IDS:
        ids = random_ids(rng, vocab, pad, (BATCH, SEQ))
        mask = np.zeros((BATCH, SEQ), dtype=np.int64)
        for b, n in enumerate(lengths):
            ids[b, : SEQ - n] = pad
            mask[b, SEQ - n:] = 1
        position_ids = np.cumsum(mask, axis=1) - 1
        position_ids[mask == 0] = 1
        if name == "roberta":  # its forward indexes the table with them as they are
            position_ids = position_ids + pad + 1
            position_ids[mask == 0] = pad
        cases.append(("position_ids", ids, mask, 0, None, position_ids.astype(np.int64), "encoder"))
    # Token types.
    if name in TAKES_TYPES:
        ids = random_ids(rng, vocab, pad, (BATCH, SEQ))
        type_rows = cfg.get("type_vocab_size", vocab)
        types = rng.integers(0, type_rows, size=(BATCH, SEQ)).astype(np.int64)
        cases.append(("token_types", ids, np.ones((BATCH, SEQ), dtype=np.int64), 0, types, None, "encoder"))
    # The decoder's stage, decoding after PAST tokens.
    if name in DECODERS:
        ids = random_ids(rng, vocab, pad, (BATCH, 2))
        mask = np.ones((BATCH, PAST + 2), dtype=np.int64)
        mask[1, :1] = 0
        cases.append(("decoder_past", ids, mask, PAST, None, None, "decoder"))
        ids = random_ids(rng, vocab, pad, (BATCH, SEQ))
        mask = np.ones((BATCH, SEQ), dtype=np.int64)
        mask[2, 4:] = 0
        ids[2, 4:] = pad
        cases.append(("decoder", ids, mask, 0, None, None, "decoder"))
    return cases


CASE_STRUCT = """\
struct Case {{
    const char* name;
    const char* side;               // "encoder" (the model's forward) or "decoder" (forward_decoder)
    long batch;
    long seq;
    long past;                      // past tokens: the mask has past + seq columns
    const long* input_ids;          // batch * seq
    const long* attention_mask;     // batch * (past + seq): 1 attended, 0 padding
    const long* token_type_ids;     // batch * seq, or nullptr (not passed)
    const long* position_ids;       // batch * seq as passed to the forward, or nullptr (not passed)
    const long* hf_position_ids;    // batch * seq position ids the forward used (before any offset its
                                    // embedding adds; RoBERTa's are table rows), or nullptr (none)
    long width;
    const double* expected_f32;     // batch * seq * width: every row, padded ones included (float32 run)
    const double* expected_f64;     // the same forward in float64 from the same weights
}};

struct Family {{
    const char* name;               // the fixture's name (model_type, or bert_legacy)
    const char* model_type;
    const char* directory;          // relative to the repository root
    bool exact;                     // gathers, adds and scales only: bit for bit in float32
    bool layer_norm;
    const Case* cases;
    long case_count;
}};
"""


def generate():
    torch.set_num_threads(1)
    rng = np.random.default_rng([ISSUE, 1])
    made = make_new_checkpoints(rng)
    names = ["bert", "bert_legacy", "electra", "roberta", "gpt2", "bart", "opt", "marian", "t5", "llama", "mistral",
             "qwen2", "gemma", "phi", "phi3", "gpt_neox"]
    lines = ["// Generated by tests/reference/generate_parity_fixtures.py -- do not edit by hand.",
             "#pragma once",
             f"// torch {torch.__version__} (ATen CPU capability AVX2, 1 thread), numpy {np.__version__}.",
             "// Every row of the families' current Hugging Face forwards, for every input they take (see the",
             "// script's docstring). Checkpoints: tests/fixtures/models/<family> and tests/fixtures/models/parity/.",
             "namespace seqembed_parity_fixtures {", "", CASE_STRUCT.format()]
    families = []
    for name in names:
        if name in made:
            directory, cfg = made[name]
        else:
            directory = MODELS / name
            cfg = json.loads((directory / "config.json").read_text())
        tensors, _ = read_safetensors(directory / "model.safetensors")
        w32 = {k: v for k, v in tensors.items() if v.is_floating_point()}
        w64 = {k: v.double() for k, v in w32.items()}
        forward = FORWARDS[name]
        entries = []
        for case, ids, mask, past, types, position_ids, side in make_cases(name, cfg, rng):
            ids_t = torch.from_numpy(ids)
            mask_t = torch.from_numpy(mask)
            types_t = None if types is None else torch.from_numpy(types)
            pos_t = None if position_ids is None else torch.from_numpy(position_ids)
            with torch.no_grad():
                out32, used = forward(w32, cfg, ids_t, mask_t, types_t, pos_t, past, side)
                out64, used64 = forward(w64, cfg, ids_t, mask_t, types_t, pos_t, past, side)
            assert out32.dtype == torch.float32 and out64.dtype == torch.float64, (name, case)
            assert (used is None) == (used64 is None)
            width = out32.shape[-1]
            c = f"{name}_{case}"
            arr = lambda n, v, per: lines_array(lines, "long", f"{c}_{n}", v, per, lambda x: str(int(x)))
            entry = dict(name=case, side=side, batch=ids.shape[0], seq=ids.shape[1], past=past,
                         ids=arr("input_ids", ids, ids.shape[1]), mask=arr("attention_mask", mask, mask.shape[1]),
                         types=arr("token_type_ids", types, ids.shape[1]) if types is not None else "nullptr",
                         pos=arr("position_ids", position_ids, ids.shape[1]) if position_ids is not None else "nullptr",
                         used=arr("hf_position_ids", used.numpy(), ids.shape[1]) if used is not None else "nullptr",
                         width=width,
                         f32=lines_array(lines, "double", f"{c}_expected_f32", out32.numpy(), width // 2, hexfloat),
                         f64=lines_array(lines, "double", f"{c}_expected_f64", out64.numpy(), width // 4, hexfloat))
            entries.append(entry)
            print(f"{name:12s} {case:14s} {side:8s} max |f64 - f32| = "
                  f"{(out64 - out32.double()).abs().max().item():.1e}")
        lines.append(f"inline constexpr Case {name}_cases[] = {{")
        for e in entries:
            lines.append(f"    {{{cpp_string(e['name'])}, {cpp_string(e['side'])}, {e['batch']}, {e['seq']}, {e['past']}, "
                         f"{e['ids']}, {e['mask']}, {e['types']}, {e['pos']}, {e['used']}, {e['width']}, "
                         f"{e['f32']}, {e['f64']}}},")
        lines.append("};")
        relative = directory.relative_to(ROOT).as_posix()
        exact = name not in LAYER_NORM and name not in MATRIX_PRODUCT
        lines.append(f"inline constexpr Family {name}_family{{{cpp_string(name)}, {cpp_string(cfg['model_type'])}, "
                     f"{cpp_string(relative)}, {'true' if exact else 'false'}, "
                     f"{'true' if name in LAYER_NORM else 'false'}, {name}_cases, {len(entries)}}};")
        lines.append("")
        families.append(name)
    lines.append("inline constexpr const Family* all_families[] = {")
    lines.append("    " + ", ".join(f"&{n}_family" for n in families) + ",")
    lines.append("};")
    lines.append(f"inline constexpr long all_families_count = {len(families)};")
    lines.append("")
    lines.append("}  // namespace seqembed_parity_fixtures")
    (MODELS / "parity_cases.hpp").write_text("\n".join(lines) + "\n")
    print(f"wrote {len(families)} families into {MODELS / 'parity_cases.hpp'}")


def lines_array(lines, ctype, name, values, per_line, fmt):
    values = list(np.asarray(values).reshape(-1))
    lines.append(f"inline constexpr {ctype} {name}[] = {{")
    for i in range(0, len(values), max(per_line, 1)):
        lines.append("    " + ", ".join(fmt(v) for v in values[i:i + max(per_line, 1)]) + ",")
    lines.append("};")
    return name


if __name__ == "__main__":
    if len(sys.argv) != 1:
        print(__doc__)
        sys.exit(2)
    generate()
