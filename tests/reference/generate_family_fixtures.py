#!/usr/bin/python3
"""Tiny checkpoints of real model families, and what their embedding stage outputs (issue 14).

    /usr/bin/python3 tests/reference/generate_family_fixtures.py

Writes, into tests/fixtures/models/:
  - <family>/config.json        the family's own config keys (only those of the embedding stage,
                                plus model_type, architectures and the token ids);
  - <family>/model.safetensors  the embedding-stage tensors of a random float32 model, under the
                                names the Hugging Face class in "architectures" gives them;
  - family_cases.hpp            per family and case: ids, attention mask, token types, the rows
                                of the position table each token read, and the module's output
                                in float32 and float64 (hex-float literals, exact).

Use Debian's interpreter (torch 1.13, numpy, mpmath). Running it twice gives identical files.

Each family's embedding stage is written again here in plain torch, operation after operation,
from Hugging Face transformers' PyTorch code as the search index stores it (huggingface/
transformers, src/transformers/models/<family>/modeling_<family>.py). The versions read:

  bert     8ec58104181bfb34d824d89bccc009b4f6be6e0e  BertEmbeddings.__init__/forward
           (004ad5f50b627b59bf0d581c31bc0052b6cfd40b, an older one, does the same operations)
  electra  014873b4dfa2482fa4f8e79e6e4fb955461f4373  ElectraEmbeddings, ElectraModel.__init__/forward
  roberta  87b236ba2be8b3e48a7d0c8ca6513302736d2886  RobertaEmbeddings, create_position_ids_from_input_ids
           (000824f17f924a8b520edf04c597c461fc83356a, older, the same)
  gpt2     0010f60284ab4b9d14b7df9c6525b1a2ad44e640  GPT2Model.__init__/forward
  bart     57228229d2ee2729f6ee597b4973aefdb39c2b37  BartLearnedPositionalEmbedding,
           BartScaledWordEmbedding, BartEncoder.__init__/forward
  opt      ab910744d640b0ed37e2056eb94de31fd4a6979c  OPTLearnedPositionalEmbedding, OPTDecoder
  marian   00b676f8f0489b88652a31d70751cc540dd06305  MarianSinusoidalPositionalEmbedding
           (_init_weight, forward), MarianEncoder.__init__/forward
  t5       6b8b757dfcb582379a64f013cdce46c43629f2b0  T5Stack.__init__/forward
  llama    5dd4a63548857797727ae73eeb6a6e886ea02a3e  LlamaModel.__init__/forward
  gemma    0125ac68d92d1866341d531c52af7165af06f3e9  GemmaModel.forward (the normalizer)
  phi      007750f36c2d23bbf9ecc769e49bc6b1a04f7393  PhiModel.forward (a pre-release snapshot whose
           attention reads config.rotary_dim; released PhiAttention rotates
           int(partial_rotary_factor * head_dim), which is what the config here gives)
  gpt_neox 006bd23dd0ce18d54e1cf260b09b15fa943a731d  GPTNeoXModel.forward, GPTNeoXAttention
  mistral, qwen2: MistralModel and Qwen2Model embed as LlamaModel (embed_tokens only)

Rotary families (llama, mistral, qwen2, gemma, phi, gpt_neox) also get a `Rotary` entry (issue
15): the float32 inv_freq and attention_scaling Hugging Face computes at init for the config,
from generate_rope_fixtures.py's rules (emulation stored; torch's own run compared). Llama's
config carries Llama 3.1's llama3 rope_scaling and Qwen2's the yarn one, so that a loader's
rotary path is tested beyond the default rule.

The index keeps one snapshot per file, so the commits differ from file to file; newer versions
of OPT (position_ids computed in OPTDecoder.forward, same formula) and of GPT-2/Llama
(cache_position) give the same numbers for a call without a cache.

Later families (their sources in FAMILY_SOURCES, the defaults of their config classes in
DECODER_DEFAULTS and ENCODER_SPECS, leaving those keys out of most configs so that the defaults
are what the C++ side must supply): the rotary decoders built by build_lookup_decoder, the
encoders of build_encoder (io::load_encoder), ESM (build_esm: its token dropout, with mask tokens
placed in the cases, and its float16-rounded inv_freq buffer).

Sizes: a different vocab_size per family (56 to 149; ESM's 33 is its real one), so a table read
from the wrong family fails; width 16, except ELECTRA (embedding_size 8, hidden_size 16), OPT (word_embed_proj_dim 8,
hidden_size 16) and Marian (d_model 12, so that sqrt(d_model) is not exact; BART's d_model 16
gives the exact scale 4); 32 positions (BART's and OPT's tables have 32 + 2 rows; RoBERTa's
max_position_embeddings is 34 = 32 + pad_token_id + 1, as 514 is in roberta-base).

How the numbers are made:
  - weights: numpy's PCG64 generator (seeded per family), normal draws cast to float32; padding
    rows are random too (an nn.Embedding with padding_idx only zeroes that row when it is
    created; trained checkpoints need not have a zero row, and the lookup reads it anyway);
    LayerNorm weights 1 + 0.25 N(0,1), biases 0.25 N(0,1);
  - the modules run in eval() mode (dropout is the identity), first in float32, then converted
    with .double() (the float32 weights, exactly) and run again in float64;
  - ATen's CPU capability is pinned to AVX2 and torch runs on one thread, so that LayerNorm's and
    Linear's float32 reductions are the same on every run;
  - checks: every output is recomputed in float64 numpy from the written safetensors file and
    the position rule (what the C++ side does), Marian's sinusoidal table is compared with
    mpmath, and float32 embedding scaling is checked to use float32(sqrt(d)).
"""

import os
import sys

# Before torch is imported: the SIMD level of ATen's kernels decides the last bits of LayerNorm.
os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import json
import math
import pathlib

import mpmath
import numpy as np
import torch
from torch import nn

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OUT = ROOT / "tests" / "fixtures" / "models"

sys.path.insert(0, str(HERE))
from generate_io_fixtures import read_safetensors, safetensors_bytes  # noqa: E402  (our own writer)
import generate_rope_fixtures as rope  # noqa: E402  (the RoPE rules, torch and emulated)

BATCH, SEQ = 3, 7
ISSUE = 14


def check_torch_setup():
    if "CPU capability usage: AVX2" not in torch.__config__.show():
        sys.exit("generate_family_fixtures.py: torch does not use its AVX2 kernels "
                 f"(ATEN_CPU_CAPABILITY={os.environ.get('ATEN_CPU_CAPABILITY')!r}); the float32 "
                 "LayerNorm outputs could differ in the last bit from the committed ones.")
    torch.set_num_threads(1)


# ----------------------------------------------------------------------------------------------
# Building blocks, each after the Hugging Face module named in its docstring.

class AbsoluteEmbeddings(nn.Module):
    """BertEmbeddings (and ElectraEmbeddings, the same forward at width embedding_size).

    word + token_type first, then `+=` the position rows, LayerNorm, dropout. Positions are the
    registered buffer arange(max_position_embeddings) sliced [past, past + seq): by index."""

    def __init__(self, vocab_size, width, max_positions, type_vocab_size, eps, pad_token_id, dropout):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, width, padding_idx=pad_token_id)
        self.position_embeddings = nn.Embedding(max_positions, width)
        self.token_type_embeddings = nn.Embedding(type_vocab_size, width)
        self.LayerNorm = nn.LayerNorm(width, eps=eps)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("position_ids", torch.arange(max_positions).expand((1, -1)), persistent=False)
        self.register_buffer("token_type_ids", torch.zeros(self.position_ids.size(), dtype=torch.long),
                             persistent=False)
        self.rows_read = None

    def positions(self, input_ids, past):
        return self.position_ids[:, past:input_ids.shape[1] + past]

    def forward(self, input_ids, token_type_ids=None, past_key_values_length=0):
        batch, seq = input_ids.shape
        position_ids = self.positions(input_ids, past_key_values_length)
        if token_type_ids is None:
            token_type_ids = self.token_type_ids[:, :seq].expand(batch, seq)
        self.rows_read = position_ids.expand(batch, seq)
        inputs_embeds = self.word_embeddings(input_ids)
        token_type_embeddings = self.token_type_embeddings(token_type_ids)
        embeddings = inputs_embeds + token_type_embeddings
        embeddings += self.position_embeddings(position_ids)
        embeddings = self.LayerNorm(embeddings)
        return self.dropout(embeddings)


def positions_from_ids(input_ids, padding_idx, past_key_values_length=0):
    """create_position_ids_from_input_ids: non-pad tokens count up from padding_idx + 1, pads get
    padding_idx (same int32 cumsum, cast to int64 at the end)."""
    mask = input_ids.ne(padding_idx).int()
    counted = (torch.cumsum(mask, dim=1).type_as(mask) + past_key_values_length) * mask
    return counted.long() + padding_idx


class RobertaLikeEmbeddings(AbsoluteEmbeddings):
    """RobertaEmbeddings: BertEmbeddings whose position table has padding_idx = pad_token_id and
    whose position ids come from the input ids."""

    def __init__(self, vocab_size, width, max_positions, type_vocab_size, eps, pad_token_id, dropout):
        super().__init__(vocab_size, width, max_positions, type_vocab_size, eps, pad_token_id, dropout)
        self.padding_idx = pad_token_id
        self.position_embeddings = nn.Embedding(max_positions, width, padding_idx=pad_token_id)

    def positions(self, input_ids, past):
        return positions_from_ids(input_ids, self.padding_idx, past)


class ScaledWordEmbedding(nn.Embedding):
    """BartScaledWordEmbedding: the lookup times a Python float (torch rounds it to the tensor's
    dtype, so float32 runs multiply by float32(sqrt(d)))."""

    def __init__(self, vocab_size, width, padding_idx, embed_scale=1.0):
        super().__init__(vocab_size, width, padding_idx)
        self.embed_scale = embed_scale

    def forward(self, input_ids):
        return super().forward(input_ids) * self.embed_scale


class IndexPositionsOffset2(nn.Embedding):
    """BartLearnedPositionalEmbedding: max_positions + 2 rows, row = index + 2."""

    def __init__(self, max_positions, width):
        self.offset = 2
        super().__init__(max_positions + self.offset, width)
        self.rows_read = None

    def forward(self, input_ids, past_key_values_length=0):
        batch, seq = input_ids.shape[:2]
        positions = torch.arange(past_key_values_length, past_key_values_length + seq,
                                 dtype=torch.long).expand(batch, -1)
        self.rows_read = positions + self.offset
        return super().forward(positions + self.offset)


class MaskPositionsOffset2(nn.Embedding):
    """OPTLearnedPositionalEmbedding: positions counted along the attention mask
    ((cumsum(mask) * mask) - 1, so pads get -1), row = position + 2."""

    def __init__(self, max_positions, width):
        self.offset = 2
        super().__init__(max_positions + self.offset, width)
        self.rows_read = None

    def forward(self, attention_mask, past_key_values_length=0):
        attention_mask = attention_mask.long()
        positions = (torch.cumsum(attention_mask, dim=1).type_as(attention_mask) * attention_mask).long() - 1
        positions = positions[:, past_key_values_length:]
        self.rows_read = positions + self.offset
        return super().forward(positions + self.offset)


class SinusoidalTable(nn.Embedding):
    """MarianSinusoidalPositionalEmbedding: a fixed table, sin in columns [0, ceil(d/2)), cos in
    the rest; angle(pos, j) = pos / 10000^(2*(j//2)/d) in numpy float64, then cast to float32."""

    def __init__(self, num_positions, width):
        super().__init__(num_positions, width)
        self.rows_read = None

    def fill_table(self):
        n_pos, dim = self.weight.shape
        angles = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)]
                           for pos in range(n_pos)])
        table = torch.empty(n_pos, dim, dtype=self.weight.dtype)
        half = dim // 2 if dim % 2 == 0 else dim // 2 + 1
        table[:, 0:half] = torch.FloatTensor(np.sin(angles[:, 0::2]))
        table[:, half:] = torch.FloatTensor(np.cos(angles[:, 1::2]))
        self.weight = nn.Parameter(table, requires_grad=False)

    @torch.no_grad()
    def forward(self, input_shape, past_key_values_length=0):
        batch, seq = input_shape[:2]
        positions = torch.arange(past_key_values_length, past_key_values_length + seq, dtype=torch.long)
        self.rows_read = positions.expand(batch, seq)
        return super().forward(positions)


def node():
    """An empty module, to spell a state-dict prefix (bert., model.encoder., ...)."""
    return nn.Module()


# ----------------------------------------------------------------------------------------------
# The families. Each builder returns (root module, forward function, facts); the root's
# state_dict() spells the Hugging Face names.

def build_bert(cfg):
    root = node()
    root.bert = node()
    root.bert.embeddings = AbsoluteEmbeddings(cfg["vocab_size"], cfg["hidden_size"],
                                              cfg["max_position_embeddings"], cfg["type_vocab_size"],
                                              cfg["layer_norm_eps"], cfg["pad_token_id"],
                                              cfg["hidden_dropout_prob"])

    def forward(input_ids, attention_mask, token_type_ids):
        out = root.bert.embeddings(input_ids, token_type_ids)
        return out, None, root.bert.embeddings.rows_read
    return root, forward


def build_electra(cfg):
    root = node()  # ElectraModel's own state dict: no "electra." prefix
    root.embeddings = AbsoluteEmbeddings(cfg["vocab_size"], cfg["embedding_size"],
                                         cfg["max_position_embeddings"], cfg["type_vocab_size"],
                                         cfg["layer_norm_eps"], cfg["pad_token_id"],
                                         cfg["hidden_dropout_prob"])
    assert cfg["embedding_size"] != cfg["hidden_size"]
    root.embeddings_project = nn.Linear(cfg["embedding_size"], cfg["hidden_size"])

    def forward(input_ids, attention_mask, token_type_ids):
        embedding_output = root.embeddings(input_ids, token_type_ids)
        projected = root.embeddings_project(embedding_output)
        return embedding_output, projected, root.embeddings.rows_read
    return root, forward


def build_roberta(cfg):
    root = node()
    root.roberta = node()
    root.roberta.embeddings = RobertaLikeEmbeddings(cfg["vocab_size"], cfg["hidden_size"],
                                                    cfg["max_position_embeddings"], cfg["type_vocab_size"],
                                                    cfg["layer_norm_eps"], cfg["pad_token_id"],
                                                    cfg["hidden_dropout_prob"])

    def forward(input_ids, attention_mask, token_type_ids):
        out = root.roberta.embeddings(input_ids, token_type_ids)
        return out, None, root.roberta.embeddings.rows_read
    return root, forward


def build_gpt2(cfg):
    root = node()
    root.transformer = node()
    root.transformer.wte = nn.Embedding(cfg["vocab_size"], cfg["n_embd"])
    root.transformer.wpe = nn.Embedding(cfg["n_positions"], cfg["n_embd"])
    root.transformer.drop = nn.Dropout(cfg["embd_pdrop"])

    def forward(input_ids, attention_mask, token_type_ids):
        assert token_type_ids is None  # GPT-2 would look token types up in wte; not used here
        t = root.transformer
        past_length = 0
        seq = input_ids.shape[-1]
        position_ids = torch.arange(past_length, seq + past_length, dtype=torch.long).unsqueeze(0).view(-1, seq)
        inputs_embeds = t.wte(input_ids)
        position_embeds = t.wpe(position_ids)
        hidden_states = inputs_embeds + position_embeds
        hidden_states = t.drop(hidden_states)
        return hidden_states, None, position_ids.expand(input_ids.shape)
    return root, forward


def build_openai_gpt(cfg):
    """OpenAIGPTModel (OpenAIGPTLMHeadModel: transformer.): tokens_embed(input_ids) +
    positions_embed(position_ids[None, :seq]), the non-persistent arange buffer (no cache), +
    tokens_embed(token_type_ids) when given, drop."""
    root = node()
    t = root.transformer = node()
    t.tokens_embed = nn.Embedding(cfg["vocab_size"], cfg["n_embd"])
    t.positions_embed = nn.Embedding(cfg["n_positions"], cfg["n_embd"])
    t.register_buffer("position_ids", torch.arange(cfg["n_positions"]), persistent=False)

    def forward(input_ids, attention_mask, token_type_ids):
        position_ids = t.position_ids[None, : input_ids.shape[-1]]
        hidden_states = t.tokens_embed(input_ids) + t.positions_embed(position_ids) + 0
        return hidden_states, None, position_ids.expand(input_ids.shape)
    return root, forward


def build_xlnet(cfg):
    """XLNetModel (XLNetLMHeadModel: transformer.): word_emb_k = word_embedding(input_ids), dropout;
    the relative positions act in attention."""
    root = node()
    root.transformer = node()
    root.transformer.word_embedding = nn.Embedding(cfg["vocab_size"], cfg["d_model"])

    def forward(input_ids, attention_mask, token_type_ids):
        return root.transformer.word_embedding(input_ids), None, None
    return root, forward


def build_bart(cfg):
    """BartEncoder (mBART's, PLBart's, MVP's): shared lookup x sqrt(d_model) when scale_embedding
    (PLBartConfig's default true, the others' false), + positions at offset 2, layernorm_embedding."""
    root = node()
    root.model = node()
    d = cfg["d_model"]
    embed_scale = math.sqrt(d) if cfg.get("scale_embedding", cfg["model_type"] == "plbart") else 1.0
    root.model.shared = ScaledWordEmbedding(cfg["vocab_size"], d, cfg["pad_token_id"], embed_scale=embed_scale)
    root.model.encoder = node()
    root.model.encoder.embed_tokens = root.model.shared  # tied, as BartModel passes self.shared
    root.model.encoder.embed_positions = IndexPositionsOffset2(cfg["max_position_embeddings"], d)
    root.model.encoder.layernorm_embedding = nn.LayerNorm(d)  # no eps from the config: 1e-5
    dropout = cfg["dropout"]

    def forward(input_ids, attention_mask, token_type_ids):
        enc = root.model.encoder
        inputs_embeds = enc.embed_tokens(input_ids)
        embed_pos = enc.embed_positions(input_ids)
        hidden_states = inputs_embeds + embed_pos
        hidden_states = enc.layernorm_embedding(hidden_states)
        hidden_states = nn.functional.dropout(hidden_states, p=dropout, training=root.training)
        return hidden_states, None, enc.embed_positions.rows_read
    return root, forward


def build_opt(cfg):
    root = node()
    root.model = node()
    root.model.decoder = node()
    dec = root.model.decoder
    dec.embed_tokens = nn.Embedding(cfg["vocab_size"], cfg["word_embed_proj_dim"], cfg["pad_token_id"])
    dec.embed_positions = MaskPositionsOffset2(cfg["max_position_embeddings"], cfg["hidden_size"])
    if cfg["word_embed_proj_dim"] != cfg["hidden_size"]:
        dec.project_in = nn.Linear(cfg["word_embed_proj_dim"], cfg["hidden_size"], bias=False)

    def forward(input_ids, attention_mask, token_type_ids):
        inputs_embeds = dec.embed_tokens(input_ids)
        pos_embeds = dec.embed_positions(attention_mask, 0)
        if hasattr(dec, "project_in"):
            inputs_embeds = dec.project_in(inputs_embeds)  # before the positions are added
        hidden_states = inputs_embeds + pos_embeds
        return hidden_states, None, dec.embed_positions.rows_read
    return root, forward


def build_marian(cfg):
    root = node()
    root.model = node()
    d = cfg["d_model"]
    root.model.shared = nn.Embedding(cfg["vocab_size"], d, cfg["pad_token_id"])
    root.model.encoder = node()
    enc = root.model.encoder
    enc.embed_tokens = root.model.shared  # MarianEncoder keeps the module MarianModel passes
    enc.embed_positions = SinusoidalTable(cfg["max_position_embeddings"], d)
    embed_scale = math.sqrt(d) if cfg["scale_embedding"] else 1.0
    dropout = cfg["dropout"]

    def forward(input_ids, attention_mask, token_type_ids):
        inputs_embeds = enc.embed_tokens(input_ids) * embed_scale
        embed_pos = enc.embed_positions(input_ids.size())
        hidden_states = inputs_embeds + embed_pos
        hidden_states = nn.functional.dropout(hidden_states, p=dropout, training=root.training)
        return hidden_states, None, enc.embed_positions.rows_read
    return root, forward


def build_t5(cfg):
    root = node()
    root.shared = nn.Embedding(cfg["vocab_size"], cfg["d_model"])
    root.encoder = node()
    root.encoder.embed_tokens = root.shared  # T5Stack keeps the shared module
    root.encoder.dropout = nn.Dropout(cfg["dropout_rate"])

    def forward(input_ids, attention_mask, token_type_ids):
        inputs_embeds = root.encoder.embed_tokens(input_ids)
        hidden_states = root.encoder.dropout(inputs_embeds)
        return hidden_states, None, None
    return root, forward


def build_llama(cfg):
    root = node()
    root.model = node()
    root.model.embed_tokens = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"], cfg.get("pad_token_id"))

    def forward(input_ids, attention_mask, token_type_ids):
        return root.model.embed_tokens(input_ids), None, None
    return root, forward


# Mistral (MistralModel) and Qwen2 (Qwen2Model) have Llama's embedding stage: embed_tokens, no
# scale, no dropout; the builder is shared.
build_mistral = build_llama
build_qwen2 = build_llama


def build_gemma(cfg):
    """GemmaModel.forward: hidden_states = inputs_embeds; normalizer =
    torch.tensor(hidden_size**0.5, dtype=hidden_states.dtype); hidden_states * normalizer. The
    nn.Embedding's padding_idx is the config class's pad_token_id (0 by default)."""
    root = node()
    root.model = node()
    pad = language(cfg).get("pad_token_id", 0)
    root.model.embed_tokens = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"], pad)

    def forward(input_ids, attention_mask, token_type_ids):
        inputs_embeds = root.model.embed_tokens(input_ids)
        hidden_states = inputs_embeds
        normalizer = torch.tensor(cfg["hidden_size"]**0.5, dtype=hidden_states.dtype)
        hidden_states = hidden_states * normalizer
        return hidden_states, None, None
    return root, forward


def build_phi(cfg):
    """PhiModel.forward: inputs_embeds = embed_tokens(ids); inputs_embeds = embed_dropout(...)
    (nn.Dropout(embd_pdrop))."""
    root = node()
    root.model = node()
    root.model.embed_tokens = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"], cfg.get("pad_token_id"))
    root.model.embed_dropout = nn.Dropout(cfg["embd_pdrop"])

    def forward(input_ids, attention_mask, token_type_ids):
        inputs_embeds = root.model.embed_tokens(input_ids)
        inputs_embeds = root.model.embed_dropout(inputs_embeds)
        return inputs_embeds, None, None
    return root, forward


def build_gpt_neox(cfg):
    """GPTNeoXModel.forward: inputs_embeds = embed_in(ids); hidden_states = emb_dropout(...)."""
    root = node()
    root.gpt_neox = node()
    root.gpt_neox.embed_in = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"])
    root.gpt_neox.emb_dropout = nn.Dropout(cfg["hidden_dropout"])

    def forward(input_ids, attention_mask, token_type_ids):
        inputs_embeds = root.gpt_neox.embed_in(input_ids)
        hidden_states = root.gpt_neox.emb_dropout(inputs_embeds)
        return hidden_states, None, None
    return root, forward


# Qwen3, Qwen3-MoE, Mixtral, StarCoder2, OLMo 2 and StableLM embed as LlamaModel: embed_tokens
# (nn.Embedding with padding_idx = config.pad_token_id), no scale; StarCoder2's
# embedding_dropout is the identity in eval mode.
build_qwen3 = build_llama
build_qwen3_moe = build_llama
build_mixtral = build_llama
build_starcoder2 = build_llama
build_stablelm = build_llama


def build_olmo2(cfg):
    """Olmo2Model embeds as LlamaModel; its nn.Embedding's padding_idx is Olmo2Config's
    pad_token_id, 1 when the config leaves it out."""
    return build_llama(dict(cfg, pad_token_id=cfg.get("pad_token_id", 1)))


# Gemma2Model: the same normalizer as GemmaModel, torch.tensor(hidden_size**0.5, dtype=...).
build_gemma2 = build_gemma


def build_gpt_neo(cfg):
    """GPTNeoModel.forward: wte(ids) + wpe(position_ids), position_ids = arange(past, past + seq)
    (cache_position in newer releases: the same rows), drop; GPT-2's stage under GPT-Neo's keys."""
    return build_gpt2(dict(cfg, n_embd=cfg["hidden_size"], n_positions=cfg["max_position_embeddings"],
                           embd_pdrop=cfg["embed_dropout"]))


def build_gptj(cfg):
    """GPTJModel.forward (CodeGenModel's is a copy): inputs_embeds = wte(ids), drop; no scale, no
    position table (rotate_every_two on the first rotary_dim dimensions of each head)."""
    root = node()
    root.transformer = node()
    root.transformer.wte = nn.Embedding(cfg["vocab_size"], cfg["n_embd"])
    root.transformer.drop = nn.Dropout(cfg["embd_pdrop"])

    def forward(input_ids, attention_mask, token_type_ids):
        return root.transformer.drop(root.transformer.wte(input_ids)), None, None
    return root, forward


build_codegen = build_gptj


def build_falcon(cfg):
    """FalconModel.forward: inputs_embeds = word_embeddings(ids); no scale, no dropout, no
    position table (rotary in attention, or ALiBi when config.alibi)."""
    root = node()
    root.transformer = node()
    root.transformer.word_embeddings = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"])

    def forward(input_ids, attention_mask, token_type_ids):
        return root.transformer.word_embeddings(input_ids), None, None
    return root, forward


# CohereModel embeds as LlamaModel (embed_tokens, padding_idx = pad_token_id, no scale); its
# rotary stage is interleaved (repeat_interleave of the frequencies).
build_cohere = build_llama


def build_deberta(cfg):
    """DebertaV2Embeddings (DebertaEmbeddings alike) as DebertaV2Model saves them: word embeddings
    (padding_idx pad_token_id), += position_embeddings[arange(seq)] when position_biased_input,
    += token_type_embeddings[token_type_ids or zeros] when type_vocab_size > 0, LayerNorm
    (layer_norm_eps), then embeddings * attention_mask[..., None], dropout. (embed_proj only
    when embedding_size != hidden_size: not here.)"""
    root = node()
    root.deberta = node()
    e = root.deberta.embeddings = node()
    d = cfg["hidden_size"]
    e.word_embeddings = nn.Embedding(cfg["vocab_size"], d, padding_idx=cfg["pad_token_id"])
    positions = cfg.get("position_biased_input", True)
    if positions:
        e.position_embeddings = nn.Embedding(cfg["max_position_embeddings"], d)
    if cfg["type_vocab_size"] > 0:
        e.token_type_embeddings = nn.Embedding(cfg["type_vocab_size"], d)
    e.LayerNorm = nn.LayerNorm(d, cfg["layer_norm_eps"])
    e.dropout = nn.Dropout(cfg["hidden_dropout_prob"])

    def forward(input_ids, attention_mask, token_type_ids):
        seq = input_ids.shape[1]
        position_ids = torch.arange(seq).expand(input_ids.shape)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        embeddings = e.word_embeddings(input_ids)
        if positions:
            embeddings = embeddings + e.position_embeddings(position_ids)
        if cfg["type_vocab_size"] > 0:
            embeddings = embeddings + e.token_type_embeddings(token_type_ids)
        embeddings = e.LayerNorm(embeddings)
        embeddings = embeddings * attention_mask.unsqueeze(2).to(embeddings.dtype)
        return e.dropout(embeddings), None, (position_ids if positions else None)
    return root, forward


class M2M100Positions(nn.Module):
    """M2M100SinusoidalPositionalEmbedding: a non-persistent float32 buffer of num_positions + 2
    rows from fairseq's get_embedding (row padding_idx zeroed), read at
    create_position_ids_from_input_ids's rows; grown when a call needs more rows."""

    def __init__(self, num_positions, width, padding_idx):
        super().__init__()
        self.offset = 2
        self.width = width
        self.padding_idx = padding_idx
        self.register_buffer("weights", self.get_embedding(num_positions + self.offset, width, padding_idx),
                             persistent=False)
        self.rows_read = None

    @staticmethod
    def get_embedding(num_embeddings, embedding_dim, padding_idx):
        half_dim = embedding_dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, dtype=torch.int64).float() * -emb)
        emb = torch.arange(num_embeddings, dtype=torch.int64).float().unsqueeze(1) * emb.unsqueeze(0)
        emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(num_embeddings, -1)
        if embedding_dim % 2 == 1:
            emb = torch.cat([emb, torch.zeros(num_embeddings, 1)], dim=1)
        emb[padding_idx, :] = 0
        return emb.to(torch.get_default_dtype())

    @torch.no_grad()
    def forward(self, input_ids, past_key_values_length=0):
        position_ids = positions_from_ids(input_ids, self.padding_idx, past_key_values_length)
        assert self.padding_idx + 1 + input_ids.shape[1] + past_key_values_length <= self.weights.size(0)
        self.rows_read = position_ids
        return self.weights.index_select(0, position_ids.view(-1)).view(*input_ids.shape, -1)


def build_m2m_100(cfg):
    """M2M100Encoder (NLLB-MoE's): embed_tokens (M2M100ScaledWordEmbedding: shared lookup x
    sqrt(d_model), a Python float; scale_embedding true by default) + embed_positions(input_ids),
    dropout; no LayerNorm."""
    root = node()
    root.model = node()
    d = cfg["d_model"]
    embed_scale = math.sqrt(d) if cfg.get("scale_embedding", True) else 1.0
    root.model.shared = ScaledWordEmbedding(cfg["vocab_size"], d, cfg["pad_token_id"], embed_scale=embed_scale)
    root.model.encoder = node()
    enc = root.model.encoder
    enc.embed_tokens = root.model.shared
    enc.embed_positions = M2M100Positions(cfg["max_position_embeddings"], d, cfg["pad_token_id"])
    dropout = cfg["dropout"]

    def forward(input_ids, attention_mask, token_type_ids):
        hidden_states = enc.embed_tokens(input_ids) + enc.embed_positions(input_ids)
        hidden_states = nn.functional.dropout(hidden_states, p=dropout, training=root.training)
        return hidden_states, None, enc.embed_positions.rows_read
    return root, forward


class IndexPositions(nn.Embedding):
    """BlenderbotLearnedPositionalEmbedding, BigBirdPegasusLearnedPositionalEmbedding,
    LEDLearnedPositionalEmbedding: num_positions rows, row = index (after the past)."""

    def __init__(self, num_positions, width):
        super().__init__(num_positions, width)
        self.rows_read = None

    def forward(self, input_ids, past_key_values_length=0):
        batch, seq = input_ids.shape[:2]
        positions = torch.arange(past_key_values_length, past_key_values_length + seq,
                                 dtype=torch.long).expand(batch, -1)
        self.rows_read = positions
        return super().forward(positions)


def build_bart_offset0(cfg):
    """BlenderbotEncoder and BigBirdPegasusEncoder: shared lookup x sqrt(d_model) when
    scale_embedding (a Python float) + positions from row 0, dropout (no input LayerNorm);
    LEDEncoder: the same without a scale (LED has none), then layernorm_embedding."""
    family = cfg["model_type"]
    led = family == "led"
    root = node()
    top = node()
    setattr(root, "led" if led else "model", top)
    d = cfg["d_model"]
    scale_default = family == "bigbird_pegasus"
    embed_scale = math.sqrt(d) if (not led and cfg.get("scale_embedding", scale_default)) else 1.0
    top.shared = ScaledWordEmbedding(cfg["vocab_size"], d, cfg["pad_token_id"], embed_scale=embed_scale)
    top.encoder = node()
    enc = top.encoder
    enc.embed_tokens = top.shared
    rows = cfg["max_encoder_position_embeddings"] if led else cfg["max_position_embeddings"]
    enc.embed_positions = IndexPositions(rows, d)
    if led:
        enc.layernorm_embedding = nn.LayerNorm(d)
        # The decoder's own table (max_decoder_position_embeddings rows) and LayerNorm, which the
        # loader's decoder stage reads.
        top.decoder = node()
        top.decoder.embed_positions = IndexPositions(cfg["max_decoder_position_embeddings"], d)
        top.decoder.layernorm_embedding = nn.LayerNorm(d)
    dropout = cfg["dropout"]

    def forward(input_ids, attention_mask, token_type_ids):
        hidden_states = enc.embed_tokens(input_ids) + enc.embed_positions(input_ids)
        if led:
            hidden_states = enc.layernorm_embedding(hidden_states)
        hidden_states = nn.functional.dropout(hidden_states, p=dropout, training=root.training)
        return hidden_states, None, enc.embed_positions.rows_read
    return root, forward


def build_biogpt(cfg):
    """BioGptModel: BioGptScaledWordEmbedding (x sqrt(hidden_size), a Python float) + OPT's
    mask-counted positions at offset 2, dropout."""
    root = node()
    root.biogpt = node()
    b = root.biogpt
    d = cfg["hidden_size"]
    embed_scale = math.sqrt(d) if cfg.get("scale_embedding", True) else 1.0
    b.embed_tokens = ScaledWordEmbedding(cfg["vocab_size"], d, cfg["pad_token_id"], embed_scale=embed_scale)
    b.embed_positions = MaskPositionsOffset2(cfg["max_position_embeddings"], d)

    def forward(input_ids, attention_mask, token_type_ids):
        hidden_states = b.embed_tokens(input_ids) + b.embed_positions(attention_mask, 0)
        return hidden_states, None, b.embed_positions.rows_read
    return root, forward


class FsmtPositions(nn.Module):
    """FSMT's SinusoidalPositionalEmbedding: fairseq's get_embedding (M2M100's code) over
    max_position_embeddings + padding_idx + 1 rows, looked up at make_positions(input_ids):
    (cumsum(mask) * mask) + padding_idx, mask = input_ids != padding_idx. Its weight is an
    nn.Embedding's, which files converted from fairseq do not hold: a plain tensor here, so the
    checkpoint has none, as those files."""

    def __init__(self, num_positions, width, padding_idx):
        super().__init__()
        self.padding_idx = padding_idx
        self.weights = M2M100Positions.get_embedding(num_positions, width, padding_idx)
        self.rows_read = None

    def forward(self, input_ids):
        mask = input_ids.ne(self.padding_idx).int()
        positions = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + self.padding_idx
        self.rows_read = positions
        return nn.functional.embedding(positions, self.weights)


def build_fsmt(cfg):
    """FSMTEncoder: embed_tokens (its own table, src_vocab_size rows, padding_idx pad_token_id) x
    embed_scale (math.sqrt(d_model) when scale_embedding, true by default) + embed_positions
    (FsmtPositions), dropout. The decoder's table (tgt_vocab_size rows) is shared with its
    output_projection, which a deduplicating save keeps instead."""
    root = node()
    m = root.model = node()
    d = cfg["d_model"]
    pad = cfg["pad_token_id"]
    embed_scale = math.sqrt(d) if cfg.get("scale_embedding", True) else 1.0
    m.encoder = node()
    m.decoder = node()
    m.encoder.embed_tokens = nn.Embedding(cfg["src_vocab_size"], d, pad)
    m.decoder.embed_tokens = nn.Embedding(cfg["tgt_vocab_size"], d, pad)
    m.decoder.output_projection = nn.Linear(d, cfg["tgt_vocab_size"], bias=False)
    m.decoder.output_projection.weight = m.decoder.embed_tokens.weight
    rows = cfg["max_position_embeddings"] + pad + 1
    m.encoder.embed_positions = FsmtPositions(rows, d, pad)
    m.decoder.embed_positions = FsmtPositions(rows, d, pad)
    dropout = cfg["dropout"]

    def forward(input_ids, attention_mask, token_type_ids):
        inputs_embeds = m.encoder.embed_tokens(input_ids) * embed_scale
        embed_pos = m.encoder.embed_positions(input_ids)
        x = inputs_embeds + embed_pos
        x = nn.functional.dropout(x, p=dropout, training=root.training)
        return x, None, m.encoder.embed_positions.rows_read
    return root, forward


class TrocrSinusoidalPositions(nn.Module):
    """TrOCRSinusoidalPositionalEmbedding: fairseq's get_embedding (M2M100's code) over
    max_position_embeddings + padding_idx + 1 rows (a plain tensor, never saved), looked up at
    create_position_ids_from_input_ids: ((cumsum(mask) + past) * mask) + padding_idx."""

    def __init__(self, num_positions, width, padding_idx):
        super().__init__()
        self.padding_idx = padding_idx
        self.weights = M2M100Positions.get_embedding(num_positions, width, padding_idx)
        self.rows_read = None

    def forward(self, input_ids, past_key_values_length=0):
        bsz, seq_len = input_ids.size()
        mask = input_ids.ne(self.padding_idx).int()
        incremental = (torch.cumsum(mask, dim=1).type_as(mask) + past_key_values_length) * mask
        position_ids = incremental.long() + self.padding_idx
        assert self.padding_idx + 1 + seq_len <= self.weights.size(0)
        self.rows_read = position_ids
        return self.weights.index_select(0, position_ids.view(-1)).view(bsz, seq_len, -1).detach()


def build_trocr(cfg):
    """TrOCRDecoder as TrOCRForCausalLM (`model.decoder.`) or a VisionEncoderDecoderModel
    (`decoder.model.decoder.`, beside its image encoder's tensors) saves it: embed_tokens
    (TrOCRScaledWordEmbedding: x sqrt(d_model) when scale_embedding, false by default) +
    embed_positions (learned when use_learned_position_embeddings, else the sinusoid),
    layernorm_embedding when layernorm_embedding, dropout."""
    dec = language(cfg)
    root = node()
    if cfg["model_type"] == "vision-encoder-decoder":
        root.encoder = node()
        root.encoder.patch_projection = nn.Linear(4, 4)
        root.decoder = node()
        top = root.decoder
    else:
        top = root
    top.model = node()
    m = top.model.decoder = node()
    d = dec["d_model"]
    pad = dec["pad_token_id"]
    embed_scale = math.sqrt(d) if dec.get("scale_embedding", False) else 1.0
    m.embed_tokens = ScaledWordEmbedding(dec["vocab_size"], d, pad, embed_scale=embed_scale)
    learned = dec.get("use_learned_position_embeddings", True)
    if learned:
        # TrOCRLearnedPositionalEmbedding: BART's (num_embeddings + 2 rows, arange(past, past + seq) + 2).
        m.embed_positions = IndexPositionsOffset2(dec["max_position_embeddings"], d)
    else:
        m.embed_positions = TrocrSinusoidalPositions(dec["max_position_embeddings"] + pad + 1, d, pad)
    if dec.get("layernorm_embedding", True):
        m.layernorm_embedding = nn.LayerNorm(d)
    dropout = dec["dropout"]

    def forward(input_ids, attention_mask, token_type_ids):
        past_key_values_length = 0
        inputs_embeds = m.embed_tokens(input_ids)
        if learned:
            embed_pos = m.embed_positions(input_ids, past_key_values_length=past_key_values_length)
        else:
            embed_pos = m.embed_positions(input_ids, past_key_values_length=past_key_values_length)
        hidden_states = inputs_embeds + embed_pos
        if hasattr(m, "layernorm_embedding"):
            hidden_states = m.layernorm_embedding(hidden_states)
        hidden_states = nn.functional.dropout(hidden_states, p=dropout, training=root.training)
        return hidden_states, None, m.embed_positions.rows_read
    return root, forward


def build_vision_decoder(cfg):
    """VisionEncoderDecoderModel's text decoder (AutoModelForCausalLM of config.json's `decoder`,
    its keys under `decoder.`, beside the image encoder's under `encoder.`): MBartForCausalLM
    (Donut's, Nougat's: MBartDecoder's embed_tokens x embed_scale, a Python float, + embed_positions
    at cache_position + 2, layernorm_embedding, dropout) or GPT2LMHeadModel (ViT-GPT-2's: wte + wpe
    at cache_position, drop)."""
    dec = language(cfg)
    root = node()
    root.encoder = node()
    root.encoder.patch_projection = nn.Linear(4, 4)
    root.decoder = node()
    if dec["model_type"] == "mbart":
        root.decoder.model = node()
        md = root.decoder.model.decoder = node()
        d = dec["d_model"]
        embed_scale = math.sqrt(d) if dec.get("scale_embedding", False) else 1.0
        md.embed_tokens = ScaledWordEmbedding(dec["vocab_size"], d, dec["pad_token_id"], embed_scale=embed_scale)
        md.embed_positions = IndexPositionsOffset2(dec["max_position_embeddings"], d)
        md.layernorm_embedding = nn.LayerNorm(d)
        dropout = dec["dropout"]

        def forward(input_ids, attention_mask, token_type_ids):
            inputs_embeds = md.embed_tokens(input_ids)
            positions = md.embed_positions(input_ids, 0)
            hidden_states = md.layernorm_embedding(inputs_embeds + positions)
            hidden_states = nn.functional.dropout(hidden_states, p=dropout, training=root.training)
            return hidden_states, None, md.embed_positions.rows_read
        return root, forward
    t = root.decoder.transformer = node()
    t.wte = nn.Embedding(dec["vocab_size"], dec["n_embd"])
    t.wpe = nn.Embedding(dec["n_positions"], dec["n_embd"])

    def forward(input_ids, attention_mask, token_type_ids):
        seq = input_ids.shape[-1]
        position_ids = torch.arange(0, seq, dtype=torch.long).unsqueeze(0)
        hidden_states = t.wte(input_ids) + t.wpe(position_ids)
        return hidden_states, None, position_ids.expand(input_ids.shape)
    return root, forward


# BLIP-2's and InstructBLIP's language models, by text_config's model_type.
WRAPPED_LANGUAGE = {"opt": build_opt, "t5": build_t5, "llama": build_llama}


def build_language_model(cfg):
    """Blip2ForConditionalGeneration and InstructBlipForConditionalGeneration: the language model
    (AutoModelForCausalLM or AutoModelForSeq2SeqLM of text_config) under language_model, beside
    the Q-Former's query tokens; its own embedding stage reads the ids."""
    text = language(cfg)
    inner, forward = WRAPPED_LANGUAGE[text["model_type"]](text)
    root = node()
    root.language_model = inner
    root.language_projection = nn.Linear(4, text.get("hidden_size", text.get("d_model")))
    return root, forward


def build_xglm(cfg):
    """XGLMModel: embed_tokens (XGLMScaledWordEmbedding, x sqrt(d_model)) + the M2M100 sinusoid
    table (XGLMSinusoidalPositionalEmbedding) at rows arange(past, past + seq) + 2, dropout."""
    root = node()
    root.model = node()
    d = cfg["d_model"]
    embed_scale = math.sqrt(d) if cfg.get("scale_embedding", True) else 1.0
    root.model.embed_tokens = ScaledWordEmbedding(cfg["vocab_size"], d, cfg["pad_token_id"], embed_scale=embed_scale)
    weights = M2M100Positions.get_embedding(cfg["max_position_embeddings"] + 2, d, cfg["pad_token_id"])
    state = {"rows": None}

    def forward(input_ids, attention_mask, token_type_ids):
        batch, seq = input_ids.shape
        rows = torch.arange(0, seq, dtype=torch.long).expand(batch, -1) + 2
        state["rows"] = rows
        positions = weights.index_select(0, rows.reshape(-1)).view(batch, seq, -1).to(root.model.embed_tokens.weight.dtype)
        return root.model.embed_tokens(input_ids) + positions, None, rows
    return root, forward


def build_xlm(cfg):
    """XLMModel (FlaubertModel's embeddings are the same lines) as its head models save it
    (`transformer.`): embeddings(input_ids) (nn.Embedding, padding_idx pad_index) +
    position_embeddings(position_ids[:, :slen]) expanded, + lang_embeddings(langs) when the model
    has the table (n_langs > 1 and use_lang_emb) and langs are given, + embeddings(token_type_ids)
    when they are given, layer_norm_emb, dropout, then tensor *= mask (get_masks: the attention
    mask itself when given). The fixtures' token types are token_type_ids; no langs are given
    (the language table is in the checkpoint, unread)."""
    root = node()
    t = root.transformer = node()
    d = cfg["emb_dim"]
    t.position_embeddings = nn.Embedding(cfg["max_position_embeddings"], d)
    lang_table = cfg.get("n_langs", 1) > 1 and cfg.get("use_lang_emb", True)
    if lang_table:
        t.lang_embeddings = nn.Embedding(cfg["n_langs"], d)
    t.embeddings = nn.Embedding(cfg["vocab_size"], d, padding_idx=cfg.get("pad_index", 2))
    t.layer_norm_emb = nn.LayerNorm(d, eps=cfg.get("layer_norm_eps", 1e-12))
    dropout = cfg["dropout"]

    def forward(input_ids, attention_mask, token_type_ids):
        slen = input_ids.shape[1]
        langs = None
        types = token_type_ids
        mask = attention_mask
        position_ids = torch.arange(cfg["max_position_embeddings"]).expand((1, -1))[:, :slen]
        inputs_embeds = t.embeddings(input_ids)
        tensor = inputs_embeds + t.position_embeddings(position_ids).expand_as(inputs_embeds)
        if langs is not None:
            tensor = tensor + t.lang_embeddings(langs)
        if types is not None:
            tensor = tensor + t.embeddings(types)
        tensor = t.layer_norm_emb(tensor)
        tensor = nn.functional.dropout(tensor, p=dropout, training=root.training)
        tensor *= mask.unsqueeze(-1).to(tensor.dtype)
        return tensor, None, position_ids.expand(input_ids.shape)
    return root, forward


def build_bloom(cfg):
    """BloomModel as bigscience's checkpoints hold it (no "transformer." prefix):
    word_embeddings (no padding_idx) then word_embeddings_layernorm (layer_norm_epsilon); ALiBi
    in attention."""
    root = node()
    root.word_embeddings = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"])
    root.word_embeddings_layernorm = nn.LayerNorm(cfg["hidden_size"], eps=cfg["layer_norm_epsilon"])

    def forward(input_ids, attention_mask, token_type_ids):
        return root.word_embeddings_layernorm(root.word_embeddings(input_ids)), None, None
    return root, forward


def build_mpt(cfg):
    """MptModel: transformer.wte (no padding_idx), no scale, no LayerNorm before the blocks;
    ALiBi in attention."""
    root = node()
    root.transformer = node()
    root.transformer.wte = nn.Embedding(cfg["vocab_size"], cfg["d_model"])
    root.transformer.emb_drop = nn.Dropout(cfg["emb_pdrop"])

    def forward(input_ids, attention_mask, token_type_ids):
        return root.transformer.emb_drop(root.transformer.wte(input_ids)), None, None
    return root, forward


# Gemma3TextConfig's defaults (transformers 4.50+), which Gemma 3's multimodal config.json leaves
# out of text_config.
GEMMA3_TEXT_DEFAULTS = {"vocab_size": 262208, "hidden_size": 2304, "num_attention_heads": 8,
                        "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 131072,
                        "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0, "pad_token_id": 0}


# The config classes' values for keys a config.json may leave out, of the decoders whose
# language model is Llama's lookup (configuration_<family>.py; transformers 4.5x and 5.x agree).
DECODER_DEFAULTS = {
    "cohere2": {"rope_theta": 10000.0, "max_position_embeddings": 8192, "pad_token_id": 0},
    "gpt_oss": {"rope_theta": 150000.0, "head_dim": 64, "max_position_embeddings": 131072,
                "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                                 "truncate": False, "original_max_position_embeddings": 4096}},
    "smollm3": {"rope_theta": 2000000.0, "max_position_embeddings": 32768, "pad_token_id": 128004},
    "llama4": {"rope_theta": 500000.0, "head_dim": 128, "max_position_embeddings": 131072},
    # MllamaTextConfig's (configuration_mllama.py @ v4.57.6).
    "mllama": {"rope_theta": 500000.0, "max_position_embeddings": 131072, "pad_token_id": 128004,
               "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38]},
    "olmoe": {"rope_theta": 10000.0, "max_position_embeddings": 4096, "pad_token_id": 1},
    "olmo3": {"rope_theta": 500000.0, "max_position_embeddings": 2048, "pad_token_id": 1},
    "granitemoe": {"max_position_embeddings": 2048},
    "nemotron": {"partial_rotary_factor": 0.5, "max_position_embeddings": 4096},
    "persimmon": {"partial_rotary_factor": 0.5, "rope_theta": 25000.0, "max_position_embeddings": 16384},
    "helium": {"head_dim": 128, "rope_theta": 100000.0, "max_position_embeddings": 4096, "pad_token_id": 3},
    "glm4": {"partial_rotary_factor": 0.5, "head_dim": 128, "max_position_embeddings": 131072,
             "pad_token_id": 151329},
    "glm4_moe": {"partial_rotary_factor": 0.5, "max_position_embeddings": 131072},
    "ernie4_5": {"head_dim": 128, "rope_theta": 500000.0, "max_position_embeddings": 131072, "pad_token_id": 0},
    "exaone4": {"max_position_embeddings": 2048, "sliding_window": 4096},
    "seed_oss": {"head_dim": 128, "max_position_embeddings": 524288, "pad_token_id": 1},
    "apertus": {"rope_theta": 12000000.0, "max_position_embeddings": 65536, "pad_token_id": 3,
                "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192,
                                 "low_freq_factor": 1.0, "high_freq_factor": 4.0}},
    "bitnet": {"rope_theta": 500000.0, "max_position_embeddings": 2048},
    "deepseek_v2": {"max_position_embeddings": 2048, "qk_rope_head_dim": 64},
    "deepseek_v3": {"max_position_embeddings": 4096, "qk_rope_head_dim": 64},
    "kimi_k2": {"max_position_embeddings": 4096, "qk_rope_head_dim": 64},
    "qwen2_5_vl": {"rope_theta": 1000000.0, "max_position_embeddings": 32768},
    "qwen3_vl": {"rope_theta": 5000000.0, "head_dim": 128, "max_position_embeddings": 128000},
    "lfm2": {"rope_theta": 1000000.0, "max_position_embeddings": 128000, "pad_token_id": 0},
    "lfm2_moe": {"rope_theta": 1000000.0, "max_position_embeddings": 128000, "pad_token_id": 0},
    "glm4v": {"rope_theta": 10000.0, "max_position_embeddings": 32768},
    "hunyuan_v1_dense": {"rope_theta": 10000.0, "max_position_embeddings": 2048, "pad_token_id": 0},
    "hunyuan_v1_moe": {"rope_theta": 10000.0, "max_position_embeddings": 2048, "pad_token_id": 0},
    "glm4v_moe": {"partial_rotary_factor": 0.5, "rope_theta": 10000.0, "max_position_embeddings": 65536},
    "mistral3": {},
    # v4.57.6 753d6110: GraniteMoeHybridConfig, FalconH1Config, BambaConfig (its forced theta and
    # partial_rotary_factor, which config.json's keys override), JambaConfig, ZambaConfig,
    # Zamba2Config, Qwen3NextConfig, Ernie4_5_MoeConfig, Dots1Config, PhimoeConfig, MiniMaxConfig,
    # VaultGemmaConfig.
    "granitemoehybrid": {"max_position_embeddings": 2048},
    "falcon_h1": {"rope_theta": 100000.0, "max_position_embeddings": 8192, "pad_token_id": 0},
    "bamba": {"rope_theta": 10000.0, "partial_rotary_factor": 0.5, "max_position_embeddings": 262144,
              "pad_token_id": 0},
    "jamba": {"max_position_embeddings": 262144, "pad_token_id": 0},
    "zamba": {"max_position_embeddings": 4096, "pad_token_id": 0},
    "zamba2": {"rope_theta": 10000.0, "max_position_embeddings": 4096, "pad_token_id": 0},
    "qwen3_next": {"head_dim": 256, "partial_rotary_factor": 0.25, "rope_theta": 10000.0,
                   "max_position_embeddings": 32768},
    "ernie4_5_moe": {"rope_theta": 500000.0, "max_position_embeddings": 131072, "pad_token_id": 0},
    "dots1": {"rope_theta": 10000.0, "max_position_embeddings": 2048},
    "phimoe": {"rope_theta": 1000000.0, "max_position_embeddings": 131072},
    "minimax": {"rope_theta": 1000000.0, "max_position_embeddings": 131072},
    "vaultgemma": {"head_dim": 256, "rope_theta": 10000.0, "max_position_embeddings": 8192, "pad_token_id": 0},
    # ChameleonConfig, Emu3TextConfig, DiffLlamaConfig, DogeConfig, JetMoeConfig,
    # RecurrentGemmaConfig (v4.57.6 753d6110).
    "chameleon": {"rope_theta": 10000.0, "max_position_embeddings": 4096},
    "emu3": {"vocab_size": 184622, "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
             "max_position_embeddings": 9216, "rope_theta": 1000000.0, "pad_token_id": 151643},
    "diffllama": {"max_position_embeddings": 2048},
    "doge": {"max_position_embeddings": 2048},
    "jetmoe": {"kv_channels": 128, "rope_theta": 10000.0, "max_position_embeddings": 4096},
    "recurrent_gemma": {"partial_rotary_factor": 0.5, "rope_theta": 10000.0, "attention_window_size": 2048,
                        "pad_token_id": 0, "block_types": ["recurrent", "recurrent", "attention"]},
}
# Multimodal checkpoints whose language model's keys are under text_config.
NESTED_TEXT_CONFIG = ("llama4", "mistral3", "qwen3_vl", "glm4v", "glm4v_moe", "mllama", "emu3")


def language(cfg):
    """The language model's config: cfg, or Gemma 3's text_config with Gemma3TextConfig's
    defaults (as Gemma3Config builds Gemma3TextConfig(**text_config)); the multimodal decoders'
    text_config; each with its config class's defaults and renamed keys (DBRX's attn_config,
    DeepSeek's head_dim = qk_rope_head_dim, Cohere 2's head_dim = hidden_size // heads)."""
    family = cfg["model_type"]
    if family == "vision-encoder-decoder":  # TrOCR's checkpoints: the text decoder's config
        return language(cfg["decoder"])
    if family in LLAVA_TEXT_MODEL:
        text = cfg.get("text_config", {})
        if family == "fuyu" and "text_config" not in cfg:
            # FuyuConfig builds its Persimmon config from its top-level keys.
            text = {k: v for k, v in cfg.items() if k != "model_type"}
        merged = dict(LLAVA_TEXT_DEFAULTS[text.get("model_type", LLAVA_TEXT_MODEL[family])])
        merged.update(FAMILY_TEXT_DEFAULTS.get(family, {}))
        merged.update(text)
        if text.get("model_type", LLAVA_TEXT_MODEL[family]) == "cohere2":
            merged.pop("head_dim", None)  # Cohere2Config sets hidden_size // num_attention_heads
        if text.get("model_type") == "lfm2" and text.get("theta") is not None:
            merged["rope_theta"] = text["theta"]
        merged["model_type"] = family
        return merged
    if family in ("blip-2", "instructblip", "instructblipvideo"):
        # Blip2Config: CONFIG_MAPPING[text_config.get("model_type", "opt")](**text_config).
        text = dict(cfg.get("text_config", {}))
        text.setdefault("model_type", "opt")
        if text["model_type"] == "opt":  # OPTConfig's defaults, which the Hub's text_config leaves out
            text = dict({"vocab_size": 50272, "hidden_size": 768, "max_position_embeddings": 2048,
                         "pad_token_id": 1}, **text)
            text.setdefault("word_embed_proj_dim", text["hidden_size"])
        return language(text)
    if family in LEARNED_DEFAULTS:
        merged = dict(LEARNED_DEFAULTS[family])
        merged.update(cfg.get("text_config", cfg))
        if "text_config_dict" in cfg:  # XCLIPConfig and its kin: the text config class built from it wins
            merged.update(LEARNED_DEFAULTS[family])
            merged.update(cfg["text_config_dict"])
        merged["model_type"] = family
        return merged
    if family in ("gemma3", "gemma3_text"):
        merged = dict(GEMMA3_TEXT_DEFAULTS)
        merged.update(cfg.get("text_config", cfg))
        merged["model_type"] = family
        return merged
    merged = dict(cfg["text_config"] if family in NESTED_TEXT_CONFIG else cfg)
    merged["model_type"] = family
    for key, value in DECODER_DEFAULTS.get(family, {}).items():
        if key not in merged and not (key == "rope_scaling" and "rope_parameters" in merged):
            merged[key] = value
    if family == "dbrx":
        merged.update(hidden_size=cfg["d_model"], num_attention_heads=cfg["n_heads"],
                      max_position_embeddings=cfg.get("max_seq_len", 2048),
                      rope_theta=cfg["attn_config"].get("rope_theta", 10000.0))
    if family in ("lfm2", "lfm2_moe") and cfg.get("theta") is not None:
        merged["rope_theta"] = cfg["theta"]  # Lfm2Config: kwargs.get("theta", kwargs.get("rope_theta", 1e6))
    if family in ("deepseek_v2", "deepseek_v3", "kimi_k2"):
        merged["head_dim"] = merged["qk_rope_head_dim"]
    if family == "cohere2":
        merged.pop("head_dim", None)
    if family == "minimax":
        # MiniMaxAttention's apply_rotary_pos_emb rotates the whole head (4.57 fails on a
        # partial_rotary_factor; 5.x's default rule ignores it).
        merged.pop("partial_rotary_factor", None)
        merged.pop("rotary_dim", None)
    if family == "jetmoe":
        merged.setdefault("head_dim", merged["kv_channels"])  # JetMoeConfig's attribute map
        merged["num_attention_heads"] = merged["num_key_value_heads"] * merged.get("num_experts_per_tok", 2)
    if family == "recurrent_gemma":
        # RecurrentGemmaConfig.head_dim = hidden_size // num_attention_heads, unless config.json's
        # (PretrainedConfig sets the file's keys after); its rotary table's rows here:
        # attention_window_size.
        merged.setdefault("head_dim", merged["hidden_size"] // merged["num_attention_heads"])
        merged.setdefault("max_position_embeddings", merged["attention_window_size"])
    if family == "chameleon":
        merged.pop("head_dim", None)  # ChameleonAttention: hidden_size // num_attention_heads
    if family == "zamba2":
        # Zamba2Config: attention_head_dim = 2 * hidden_size // num_attention_heads (set after
        # config.json's keys), head_dim its attribute map's; with use_long_context
        # max_position_embeddings 16384 and, with use_mem_rope, rope_theta * 8 ** (d / (d - 2)).
        d = 2 * merged["hidden_size"] // merged["num_attention_heads"]
        merged["head_dim"] = d
        if merged.get("use_long_context"):
            merged["max_position_embeddings"] = 16384
            if merged.get("use_mem_rope"):
                merged["rope_theta"] = merged["rope_theta"] * 8 ** (d / (d - 2))
    return merged


HUNYUAN = ("hunyuan_v1_dense", "hunyuan_v1_moe")

# The config classes' defaults of the families of build_clip_text, build_whisper and
# build_mamba (CLIPTextConfig, SiglipTextConfig, Siglip2TextConfig, WhisperConfig, MambaConfig,
# Mamba2Config, FalconMambaConfig at v4.57.6 753d6110): CLIPConfig and SiglipConfig build their
# text config from text_config with these where it says nothing.
_CLIP_TEXT = {"vocab_size": 49408, "hidden_size": 512, "max_position_embeddings": 77, "pad_token_id": 1}
_SIGLIP_TEXT = {"vocab_size": 32000, "hidden_size": 768, "max_position_embeddings": 64, "pad_token_id": 1}
_OWL_TEXT = {"vocab_size": 49408, "hidden_size": 512, "max_position_embeddings": 16, "pad_token_id": 0}
# The two-tower models' text config classes (ChineseCLIPTextConfig, AlignTextConfig,
# FlavaTextConfig; AltCLIPTextConfig, ClapTextConfig, BridgeTowerTextConfig; BlipTextConfig;
# Kosmos2TextConfig at v4.57.6 753d6110), which their configs build from text_config.
_BERT_TOWER = {"vocab_size": 30522, "hidden_size": 768, "pad_token_id": 0, "type_vocab_size": 2,
               "layer_norm_eps": 1e-12, "max_position_embeddings": 512}
_ROBERTA_TOWER = {"vocab_size": 50265, "hidden_size": 768, "pad_token_id": 1, "type_vocab_size": 1,
                  "max_position_embeddings": 514}
LEARNED_DEFAULTS = {
    "owlvit": _OWL_TEXT, "owlv2": _OWL_TEXT, "xclip": _CLIP_TEXT, "clipseg": _CLIP_TEXT,
    "groupvit": dict(_CLIP_TEXT, hidden_size=256),
    "chinese_clip": _BERT_TOWER, "chinese_clip_text_model": _BERT_TOWER, "align": _BERT_TOWER, "flava": _BERT_TOWER,
    "altclip": dict(_ROBERTA_TOWER, vocab_size=250002, hidden_size=1024, layer_norm_eps=1e-5),
    "clap": dict(_ROBERTA_TOWER, layer_norm_eps=1e-12), "bridgetower": dict(_ROBERTA_TOWER, layer_norm_eps=1e-5),
    "blip": {"vocab_size": 30524, "hidden_size": 768, "pad_token_id": 0, "layer_norm_eps": 1e-12,
             "max_position_embeddings": 512},
    "kosmos-2": {"vocab_size": 65037, "embed_dim": 2048, "max_position_embeddings": 2048, "pad_token_id": 1,
                 "scale_embedding": True},
    "clip": _CLIP_TEXT, "clip_text_model": _CLIP_TEXT,
    "siglip": _SIGLIP_TEXT, "siglip_text_model": _SIGLIP_TEXT, "siglip2": _SIGLIP_TEXT, "siglip2_text_model": _SIGLIP_TEXT,
    "whisper": {"vocab_size": 51865, "d_model": 384, "max_target_positions": 448, "pad_token_id": 50256},
    "mamba": {"vocab_size": 50280}, "falcon_mamba": {"vocab_size": 50280}, "mamba2": {"vocab_size": 32768},
}


# LLaVA's configs build their language model's config from text_config, of text_config's
# model_type or the class's default (configuration_llava*.py @ v4.57.6), with that config
# class's defaults (LlamaConfig, MistralConfig, Qwen2Config).
LLAVA_TEXT_MODEL = {"llava": "llama", "llava_next": "llama", "llava_next_video": "llama", "llava_onevision": "qwen2",
                    "paligemma": "gemma", "vipllava": "llama", "idefics3": "llama", "smolvlm": "llama",
                    "internvl": "qwen2", "got_ocr2": "qwen2", "qwen2_audio": "qwen2", "voxtral": "llama",
                    "aya_vision": "cohere2", "lfm2_vl": "lfm2", "cohere2_vision": "cohere2",
                    "perception_lm": "llama", "ovis2": "qwen2", "janus": "llama", "fuyu": "persimmon"}
# What a family's config class puts over its language model's defaults whatever text_config says
# (VoxtralConfig._default_text_config_kwargs, configuration_voxtral.py @ v4.57.6).
FAMILY_TEXT_DEFAULTS = {
    "voxtral": {"vocab_size": 131072, "hidden_size": 3072, "num_hidden_layers": 30, "num_key_value_heads": 8,
                "max_position_embeddings": 131072, "rope_theta": 100000000.0, "head_dim": 128},
}
_LLAVA_TEXT = {"hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 32, "rope_theta": 10000.0}
LLAVA_TEXT_DEFAULTS = {
    "llama": dict(_LLAVA_TEXT, vocab_size=32000, max_position_embeddings=2048),
    "mistral": dict(_LLAVA_TEXT, vocab_size=32000, max_position_embeddings=131072),
    "qwen2": dict(_LLAVA_TEXT, vocab_size=151936, max_position_embeddings=32768),
    # GraniteConfig's (granite-vision's language model; embedding_multiplier 1.0).
    "granite": dict(_LLAVA_TEXT, vocab_size=32000, max_position_embeddings=2048),
    # PersimmonConfig's, as FuyuConfig's text config.
    "persimmon": {"vocab_size": 262144, "hidden_size": 4096, "num_attention_heads": 64, "num_hidden_layers": 36,
                  "max_position_embeddings": 16384, "rope_theta": 25000.0, "partial_rotary_factor": 0.5},
    # Lfm2Config's (LFM2-VL's language model; `theta` read before rope_theta).
    "lfm2": {"vocab_size": 65536, "hidden_size": 2560, "num_attention_heads": 32, "num_key_value_heads": 8,
             "num_hidden_layers": 32, "rope_theta": 1000000.0, "max_position_embeddings": 128000,
             "pad_token_id": 0},
    # Cohere2Config's (Aya Vision's language model; head_dim hidden_size // heads whatever it says).
    "cohere2": {"vocab_size": 256000, "hidden_size": 8192, "num_attention_heads": 64, "num_hidden_layers": 40,
                "rope_theta": 10000.0, "max_position_embeddings": 8192, "pad_token_id": 0, "sliding_window": 4096},
    # Qwen3Config's (InternVL 3.5's language model).
    "qwen3": dict(_LLAVA_TEXT, vocab_size=151936, max_position_embeddings=32768, num_key_value_heads=32,
                  head_dim=128),
    # PaliGemma's (configuration_paligemma.py: text_config's default model_type gemma; GemmaConfig,
    # Gemma2Config).
    "gemma": {"vocab_size": 256000, "hidden_size": 3072, "num_attention_heads": 16, "num_hidden_layers": 28,
              "head_dim": 256, "max_position_embeddings": 8192, "rope_theta": 10000.0, "pad_token_id": 0},
    "gemma2": {"vocab_size": 256000, "hidden_size": 2304, "num_attention_heads": 8, "num_hidden_layers": 26,
               "head_dim": 256, "max_position_embeddings": 8192, "rope_theta": 10000.0, "pad_token_id": 0},
}


def build_paligemma(cfg):
    """PaliGemmaForConditionalGeneration as saved (language_model.model.embed_tokens): GemmaModel's
    stage, embed_tokens (padding_idx pad_token_id) times normalizer = torch.tensor(hidden_size**0.5,
    dtype=hidden_states.dtype); positions cache_position + 1 (1-indexed), for the rotary stage."""
    text = language(cfg)
    root = node()
    root.language_model = node()
    root.language_model.model = node()
    table = root.language_model.model.embed_tokens = nn.Embedding(text["vocab_size"], text["hidden_size"],
                                                                  text.get("pad_token_id"))

    def forward(input_ids, attention_mask, token_type_ids):
        hidden_states = table(input_ids)
        normalizer = torch.tensor(text["hidden_size"] ** 0.5, dtype=hidden_states.dtype)
        return hidden_states * normalizer, None, None
    return root, forward


# The heads that save a CLIP-like two-tower model under a base model of their own.
CLIP_OUTER = {"OwlViTForObjectDetection": "owlvit", "Owlv2ForObjectDetection": "owlv2",
              "CLIPSegForImageSegmentation": "clip"}


def build_clip_text(cfg):
    """CLIPTextEmbeddings (SiglipTextEmbeddings and Siglip2TextEmbeddings are copies of it) under
    text_model.embeddings, as CLIPModel, CLIPTextModel and SigLIP's models save it: token +
    position_embedding(position_ids[:, :seq]), the non-persistent arange buffer; no scale."""
    text = language(cfg)
    root = node()
    holder = root
    if CLIP_OUTER.get(cfg["architectures"][0]):
        setattr(root, CLIP_OUTER[cfg["architectures"][0]], node())
        holder = getattr(root, CLIP_OUTER[cfg["architectures"][0]])
    holder.text_model = node()
    e = holder.text_model.embeddings = node()
    e.token_embedding = nn.Embedding(text["vocab_size"], text["hidden_size"])
    e.position_embedding = nn.Embedding(text["max_position_embeddings"], text["hidden_size"])
    e.register_buffer("position_ids", torch.arange(text["max_position_embeddings"]).expand((1, -1)),
                      persistent=False)

    def forward(input_ids, attention_mask, token_type_ids):
        seq_length = input_ids.shape[-1]
        if seq_length > e.position_embedding.weight.shape[0]:
            raise ValueError("Sequence length must be less than max_position_embeddings")
        position_ids = e.position_ids[:, :seq_length]
        embeddings = e.token_embedding(input_ids) + e.position_embedding(position_ids)
        return embeddings, None, position_ids.expand(input_ids.shape)
    return root, forward


class BlipTextEmbeddings(nn.Module):
    """BlipTextEmbeddings (modeling_blip_text.py): word_embeddings (padding_idx pad_token_id) +=
    position_embeddings(position_ids[:, past:past + seq]), the non-persistent arange buffer, then
    LayerNorm and dropout; no token types."""

    def __init__(self, text):
        super().__init__()
        self.word_embeddings = nn.Embedding(text["vocab_size"], text["hidden_size"], padding_idx=text["pad_token_id"])
        self.position_embeddings = nn.Embedding(text["max_position_embeddings"], text["hidden_size"])
        self.LayerNorm = nn.LayerNorm(text["hidden_size"], eps=text["layer_norm_eps"])
        self.register_buffer("position_ids", torch.arange(text["max_position_embeddings"]).expand((1, -1)),
                             persistent=False)

    def forward(self, input_ids, past_key_values_length=0):
        seq_length = input_ids.shape[1]
        position_ids = self.position_ids[:, past_key_values_length:seq_length + past_key_values_length]
        embeddings = self.word_embeddings(input_ids)
        embeddings += self.position_embeddings(position_ids)
        return self.LayerNorm(embeddings), position_ids


def build_blip(cfg):
    """BLIP's heads: BlipForQuestionAnswering holds text_encoder (BlipTextModel) and text_decoder
    (BlipTextLMHeadModel, its BlipTextModel under bert), each with its own BlipTextEmbeddings;
    BlipForConditionalGeneration the decoder alone. The stage is the encoder's where there is one."""
    text = language(cfg)
    root = node()
    first = None
    if cfg["architectures"][0] != "BlipForConditionalGeneration":
        root.text_encoder = node()
        first = root.text_encoder.embeddings = BlipTextEmbeddings(text)
    root.text_decoder = node()
    root.text_decoder.bert = node()
    root.text_decoder.bert.embeddings = BlipTextEmbeddings(text)
    first = first or root.text_decoder.bert.embeddings

    def forward(input_ids, attention_mask, token_type_ids):
        out, position_ids = first(input_ids)
        return out, None, position_ids.expand(input_ids.shape)
    return root, forward


def build_speech2text(cfg):
    """Speech2TextDecoder (Speech2TextForConditionalGeneration: model.decoder): embed_tokens
    (padding_idx pad_token_id) times embed_scale, sqrt(d_model), a Python float; + embed_positions
    (Speech2TextSinusoidalPositionalEmbedding: M2M100's table and numbering from the ids)."""
    root = node()
    root.model = node()
    dec = root.model.decoder = node()
    d = cfg["d_model"]
    embed_scale = math.sqrt(d) if cfg.get("scale_embedding", True) else 1.0
    dec.embed_tokens = nn.Embedding(cfg["vocab_size"], d, cfg["pad_token_id"])
    dec.embed_positions = M2M100Positions(cfg["max_target_positions"], d, cfg["pad_token_id"])

    def forward(input_ids, attention_mask, token_type_ids):
        inputs_embeds = dec.embed_tokens(input_ids) * embed_scale
        positions = dec.embed_positions(input_ids)
        return inputs_embeds + positions, None, dec.embed_positions.rows_read
    return root, forward


def build_kosmos2(cfg):
    """Kosmos2TextTransformer.forward_embedding (Kosmos2ForConditionalGeneration: text_model.model):
    embed_tokens (padding_idx pad_token_id) times embed_scale, sqrt(embed_dim), a Python float;
    + Kosmos2TextSinusoidalPositionalEmbedding (M2M100's table and numbering from the ids)."""
    text = language(cfg)
    root = node()
    root.text_model = node()
    root.text_model.model = node()
    m = root.text_model.model
    d = text["embed_dim"]
    embed_scale = math.sqrt(d) if text["scale_embedding"] else 1.0
    m.embed_tokens = nn.Embedding(text["vocab_size"], d, padding_idx=text["pad_token_id"])
    m.embed_positions = M2M100Positions(text["max_position_embeddings"], d, text["pad_token_id"])

    def forward(input_ids, attention_mask, token_type_ids):
        inputs_embeds = m.embed_tokens(input_ids) * embed_scale
        positions = m.embed_positions(input_ids)
        return inputs_embeds + positions, None, m.embed_positions.rows_read
    return root, forward


def build_whisper(cfg):
    """WhisperDecoder's input stage (WhisperForConditionalGeneration: model.decoder.): embed_tokens
    with padding_idx pad_token_id, never multiplied by its embed_scale; WhisperPositionalEmbedding
    read at position_ids = arange(past, past + seq) repeated over the batch (cache_position)."""
    root = node()
    root.model = node()
    d = root.model.decoder = node()
    d.embed_tokens = nn.Embedding(cfg["vocab_size"], cfg["d_model"], cfg["pad_token_id"])
    d.embed_positions = nn.Embedding(cfg["max_target_positions"], cfg["d_model"])

    def forward(input_ids, attention_mask, token_type_ids):
        past_key_values_length = 0
        cache_position = torch.arange(past_key_values_length, past_key_values_length + input_ids.shape[1])
        position_ids = cache_position.unsqueeze(0).repeat(input_ids.shape[0], 1)
        inputs_embeds = d.embed_tokens(input_ids)
        positions = d.embed_positions.weight[position_ids]
        return inputs_embeds + positions, None, position_ids
    return root, forward


MAMBA_TABLES = {"mamba": "backbone.embeddings", "mamba2": "backbone.embedding", "falcon_mamba": "embeddings"}


def build_mamba(cfg):
    """MambaModel.embeddings (Mamba2's, FalconMamba's the same): the table alone. Mamba's fixture
    holds it as MambaForCausalLM saves it; Mamba 2's under the older name `embedding` that its
    load hook renames; Falcon Mamba's as its base model saves it (no `backbone.`)."""
    root = node()
    path = MAMBA_TABLES[cfg["model_type"]].split(".")
    parent = root
    for part in path[:-1]:
        setattr(parent, part, node())
        parent = getattr(parent, part)
    table = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"])
    setattr(parent, path[-1], table)

    def forward(input_ids, attention_mask, token_type_ids):
        return table(input_ids), None, None
    return root, forward


def hunyuan_alpha_view(view):
    """HunYuanDenseV1RotaryEmbedding (modeling_hunyuan_v1_dense.py @ v4.56.0, the same in 4.57 and
    5.1+): with rope_scaling type "dynamic" and an alpha, inv_freq = 1 / (base ** (arange(0, d,
    2).float() / d)) at init, base = rope_theta * alpha ** (d / (d - 2)) in Python floats, d =
    head_dim, attention_scaling 1: the default rule over that base, which torch's pow takes as
    float32 (asserted against the module's own expression)."""
    rs = view.get("rope_scaling") or {}
    if rs.get("rope_type", rs.get("type")) != "dynamic" or not rs.get("alpha"):
        return view
    # config.head_dim in transformers (which fails without it); Tencent's own code, which runs
    # Hunyuan-A13B's config without one, hidden_size // num_attention_heads.
    d = view.get("head_dim") or view["hidden_size"] // view["num_attention_heads"]
    base = view["rope_theta"] * rs["alpha"] ** (d / (d - 2))
    own = 1.0 / (base ** (torch.arange(0, d, 2).float() / d))
    view = dict(view, rope_theta=float(np.float32(base)), rope_scaling=None)
    default = 1.0 / (view["rope_theta"] ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    assert torch.equal(own, default), "torch's pow takes the base as float32"
    return view


class Gemma3TextScaledWordEmbedding(nn.Embedding):
    """Gemma3TextScaledWordEmbedding: the lookup times the buffer torch.tensor(embed_scale) (a
    float32 tensor of the Python double hidden_size**0.5), cast to the weight's dtype."""

    def __init__(self, vocab_size, width, padding_idx, embed_scale):
        super().__init__(vocab_size, width, padding_idx)
        self.register_buffer("embed_scale", torch.tensor(embed_scale), persistent=False)

    def forward(self, input_ids):
        return super().forward(input_ids) * self.embed_scale.to(self.weight.dtype)


def build_gemma3(cfg):
    """Gemma3TextModel (gemma3_text: model.embed_tokens) or Gemma3ForConditionalGeneration's
    language model (gemma3: language_model.model.embed_tokens, transformers 4.50's names)."""
    text = language(cfg)
    root = node()
    if cfg["model_type"] == "gemma3":
        root.language_model = node()
        root.language_model.model = node()
        model = root.language_model.model
    else:
        root.model = node()
        model = root.model
    model.embed_tokens = Gemma3TextScaledWordEmbedding(text["vocab_size"], text["hidden_size"],
                                                       text.get("pad_token_id"), text["hidden_size"] ** 0.5)

    def forward(input_ids, attention_mask, token_type_ids):
        return model.embed_tokens(input_ids), None, None
    return root, forward


# The encoders io::load_encoder reads: each family's *Embeddings.forward (modeling_<family>.py),
# as (prefix, positions, token types, LayerNorm, order of the sums). Positions: "index"
# (arange(past, past + seq)), "ids" (create_position_ids_from_input_ids), "plus2" (the buffer
# arange(max_position_embeddings) + 2 of max + 2 rows), "rotary" (none added). Order: "wtp" word
# + token type, then += position (BertEmbeddings); "wpt" word + position + token type
# (LongformerEmbeddings, SqueezeBertEmbeddings, MraEmbeddings); "wp" no token types
# (BertGenerationEmbeddings); "wt" no positions (RoFormerEmbeddings).
ENCODER_SPECS = {
    "longformer": ("longformer", "ids", True, "wpt"),
    "data2vec-text": ("data2vec_text", "ids", True, "wtp"),
    "xmod": ("roberta", "ids", True, "wtp"),
    "xlm-roberta-xl": ("roberta", "ids", False, "wtp"),
    "big_bird": ("bert", "index", True, "wtp"),
    "megatron-bert": ("bert", "index", False, "wtp"),
    "ernie": ("ernie", "index", True, "wtp"),
    "splinter": ("splinter", "index", True, "wtp"),
    "squeezebert": ("transformer", "index", True, "wpt"),
    "rembert": ("rembert", "index", True, "wtp"),
    "bert-generation": ("bert", "index", True, "wp"),
    "nystromformer": ("nystromformer", "plus2", True, "wtp"),
    "yoso": ("yoso", "plus2", True, "wtp"),
    "mra": ("mra", "plus2", True, "wpt"),
    "roformer": ("roformer", "rotary", True, "wt"),
    "roberta-prelayernorm": ("roberta_prelayernorm", "ids", True, "wtp"),
    "ibert": ("ibert", "ids", True, "wtp"),
    "convbert": ("convbert", "index", True, "wpt"),
    "funnel": ("funnel", "none", True, "w"),
    "git": ("git", "index", True, "wp"),
    "dpr": ("ctx_encoder.bert_model", "index", True, "wtp"),
    # The two-tower models' text towers, under the base model their fixtures' heads save.
    "chinese_clip": ("text_model", "index", True, "wtp"),
    "chinese_clip_text_model": ("", "index", True, "wtp"),
    "align": ("text_model", "index", True, "wtp"),
    "flava": ("flava.text_model", "index", True, "wtp"),
    "altclip": ("text_model.roberta", "ids", True, "wtp"),
    "clap": ("text_model", "ids", True, "wtp"),
    "bridgetower": ("bridgetower.text_model", "ids", True, "wtp"),
}


def encoder_width(cfg):
    if cfg["model_type"] == "rembert":
        return cfg["input_embedding_size"]
    return cfg.get("embedding_size", cfg.get("hidden_size", cfg.get("d_model")))  # Funnel's d_model


class EncoderEmbeddings(nn.Module):
    """The *Embeddings of ENCODER_SPECS' families; the task_type_embeddings of ERNIE (use_task_id:
    row 0 of it added after the positions when no task type ids are given); BigBird's rescale
    (inputs_embeds * hidden_size ** 0.5, a Python float)."""

    def __init__(self, cfg):
        super().__init__()
        _, self.rule, layer_norm, self.order = ENCODER_SPECS[cfg["model_type"]]
        width = encoder_width(cfg)
        self.pad = cfg.get("pad_token_id")  # FunnelConfig's None
        self.word_embeddings = nn.Embedding(cfg["vocab_size"], width, padding_idx=self.pad)
        self.family = cfg["model_type"]
        if self.rule not in ("rotary", "none"):
            rows = cfg["max_position_embeddings"] + (2 if self.rule == "plus2" else 0)
            self.position_embeddings = nn.Embedding(rows, width, padding_idx=self.pad if self.rule == "ids" else None)
        if "t" in self.order:
            self.token_type_embeddings = nn.Embedding(cfg["type_vocab_size"], width)
        self.task = cfg.get("use_task_id", False)
        if self.task:
            self.task_type_embeddings = nn.Embedding(cfg["task_type_vocab_size"], width)
        if layer_norm and self.family == "funnel":
            self.layer_norm = nn.LayerNorm(width, eps=cfg["layer_norm_eps"])  # FunnelEmbeddings' name
        elif layer_norm:
            self.LayerNorm = nn.LayerNorm(width, eps=cfg["layer_norm_eps"])
        self.eps = cfg.get("layer_norm_eps")
        self.scale = cfg["hidden_size"] ** 0.5 if cfg.get("rescale_embeddings") else None
        self.rows_read = None

    def forward(self, input_ids, token_type_ids=None):
        batch, seq = input_ids.shape
        index = torch.arange(seq).expand(batch, seq)
        if self.rule == "ids":
            rows = positions_from_ids(input_ids, self.pad)
        elif self.rule == "plus2":
            rows = index + 2
        else:
            rows = index
        self.rows_read = None if self.rule in ("rotary", "none") else rows
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        x = self.word_embeddings(input_ids)
        if self.scale is not None:
            x = x * self.scale
        if self.order == "wtp":
            x = x + self.token_type_embeddings(token_type_ids)
            x += self.position_embeddings(rows)
        elif self.order == "wpt":
            x = x + self.position_embeddings(rows) + self.token_type_embeddings(token_type_ids)
        elif self.order == "wp":
            x = x + self.position_embeddings(rows)
        elif self.order == "wt":
            x = x + self.token_type_embeddings(token_type_ids)
        if self.task:
            x += self.task_type_embeddings(torch.zeros_like(input_ids))
        if hasattr(self, "layer_norm"):
            x = self.layer_norm(x)
        elif self.family == "ibert":
            # IntLayerNorm with quant_mode false (quant_modules.py @ v4.57.6): written out, not
            # nn.LayerNorm's kernel.
            mean = x.mean(axis=2, keepdim=True)
            y = x - mean
            var = torch.mean(y ** 2, axis=2, keepdim=True)
            x = y / torch.sqrt(self.eps + var)
            x = x * self.LayerNorm.weight + self.LayerNorm.bias
        elif hasattr(self, "LayerNorm"):
            x = self.LayerNorm(x)
        return x


def build_encoder(cfg):
    """The encoder's base model under its prefix; RemBERT's embedding_hidden_mapping_in (in its
    encoder) and RoFormer's embeddings_project (on the model) as the projection; RoFormer's
    encoder.embed_positions (its fixed [sin | cos] table per head, as Marian's) written too."""
    if cfg["model_type"] in LEARNED_DEFAULTS:  # a two-tower model's text tower
        cfg = language(cfg)
    prefix = ENCODER_SPECS[cfg["model_type"]][0]
    root = node()
    base = root
    for part in prefix.split(".") if prefix else []:
        setattr(base, part, node())
        base = getattr(base, part)
    base.embeddings = EncoderEmbeddings(cfg)
    project = None
    if cfg["model_type"] == "rembert":
        base.encoder = node()
        base.encoder.embedding_hidden_mapping_in = nn.Linear(cfg["input_embedding_size"], cfg["hidden_size"])
        project = base.encoder.embedding_hidden_mapping_in
    if cfg["model_type"] == "convbert" and encoder_width(cfg) != cfg["hidden_size"]:
        base.embeddings_project = nn.Linear(encoder_width(cfg), cfg["hidden_size"])
        project = base.embeddings_project
    if cfg["model_type"] == "roformer":
        base.encoder = node()
        base.encoder.embed_positions = SinusoidalTable(cfg["max_position_embeddings"],
                                                       cfg["hidden_size"] // cfg["num_attention_heads"])
        if encoder_width(cfg) != cfg["hidden_size"]:
            base.embeddings_project = nn.Linear(encoder_width(cfg), cfg["hidden_size"])
            project = base.embeddings_project

    def forward(input_ids, attention_mask, token_type_ids):
        out = base.embeddings(input_ids, token_type_ids)
        return out, None if project is None else project(out), base.embeddings.rows_read
    return root, forward


# ESM (modeling_esm.py @ 0220b9db: EsmEmbeddings.forward, EsmModel.forward; convert_esm.py).
class EsmEmbeddings(nn.Module):
    """word_embeddings; token_dropout (in every forward: the mask token's rows zero, then
    embeddings * (1 - 0.15 * 0.8) / (1 - mask_ratio_observed)[:, None, None], the ratio
    (ids == mask_token_id).sum(-1).float() / attention_mask.sum(-1)); + position_embeddings
    (RoBERTa's numbering) when "absolute"; layer_norm when emb_layer_norm_before; times the
    attention mask."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.word_embeddings = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"], padding_idx=cfg["pad_token_id"])
        if cfg["emb_layer_norm_before"]:
            self.layer_norm = nn.LayerNorm(cfg["hidden_size"], eps=cfg["layer_norm_eps"])
        if cfg["position_embedding_type"] == "absolute":
            self.position_embeddings = nn.Embedding(cfg["max_position_embeddings"], cfg["hidden_size"],
                                                    padding_idx=cfg["pad_token_id"])
        self.rows_read = None

    def forward(self, input_ids, attention_mask):
        cfg = self.cfg
        position_ids = positions_from_ids(input_ids, cfg["pad_token_id"])
        embeddings = self.word_embeddings(input_ids)
        if cfg["token_dropout"]:
            embeddings = embeddings.masked_fill((input_ids == cfg["mask_token_id"]).unsqueeze(-1), 0.0)
            mask_ratio_train = 0.15 * 0.8
            src_lengths = attention_mask.sum(-1)
            mask_ratio_observed = (input_ids == cfg["mask_token_id"]).sum(-1).float() / src_lengths
            embeddings = (embeddings * (1 - mask_ratio_train) / (1 - mask_ratio_observed)[:, None, None]).to(
                embeddings.dtype)
        self.rows_read = None
        if cfg["position_embedding_type"] == "absolute":
            embeddings = embeddings + self.position_embeddings(position_ids)
            self.rows_read = position_ids
        if hasattr(self, "layer_norm"):
            embeddings = self.layer_norm(embeddings)
        return (embeddings * attention_mask.unsqueeze(-1)).to(embeddings.dtype)


class EsmInvFreq(nn.Module):
    """EsmSelfAttention's rotary_embeddings: the persistent inv_freq buffer, here the values ESM-2's
    checkpoints hold (1 / 10000^(2i/d) rounded through float16, as the converter's comment says)."""

    def __init__(self, head_dim):
        super().__init__()
        exact = 1.0 / (10000 ** (np.arange(0, head_dim, 2) / head_dim))
        self.register_buffer("inv_freq", torch.from_numpy(exact.astype(np.float16).astype(np.float32)))


# Nomic's BERT (remote code modeling_hf_nomic_bert.py, nomic-ai/contrastors @ 613ddfd, the Hub's copy
# the same in these lines: NomicBertEmbeddings.forward, NomicBertModel.__init__ and forward).
class NomicBertEmbeddings(nn.Module):
    """word_embeddings (padding_idx pad_token_id); + token_type_embeddings (zeros when not given);
    no position table when rotary_emb_fraction > 0."""

    def __init__(self, cfg):
        super().__init__()
        self.word_embeddings = nn.Embedding(cfg["vocab_size"], cfg["n_embd"], padding_idx=cfg.get("pad_token_id"))
        self.token_type_embeddings = nn.Embedding(cfg["type_vocab_size"], cfg["n_embd"])
        assert cfg["rotary_emb_fraction"] > 0

    def forward(self, input_ids, token_type_ids=None):
        embeddings = self.word_embeddings(input_ids)
        if token_type_ids is None:
            token_type_ids = torch.zeros(input_ids.shape[1], dtype=torch.long)
        return embeddings + self.token_type_embeddings(token_type_ids)


def build_nomic_bert(cfg):
    """NomicBertModel as nomic-embed-text-v1.5 saves it (no prefix): embeddings, then emb_ln =
    nn.LayerNorm(n_embd, eps=layer_norm_epsilon); vocab_size rounded up to
    pad_vocab_size_multiple first."""
    cfg = dict(cfg)
    multiple = cfg.get("pad_vocab_size_multiple", 1)
    if cfg["vocab_size"] % multiple:
        cfg["vocab_size"] += multiple - cfg["vocab_size"] % multiple
    root = node()
    root.embeddings = NomicBertEmbeddings(cfg)
    root.emb_ln = nn.LayerNorm(cfg["n_embd"], eps=cfg["layer_norm_epsilon"])

    def forward(input_ids, attention_mask, token_type_ids):
        return root.emb_ln(root.embeddings(input_ids, token_type_ids)), None, None
    return root, forward


def build_esm(cfg):
    root = node()
    root.esm = node()
    root.esm.embeddings = EsmEmbeddings(cfg)
    if cfg["position_embedding_type"] == "rotary":
        root.esm.encoder = node()
        root.esm.encoder.layer = nn.ModuleList([node()])
        root.esm.encoder.layer[0].attention = node()
        root.esm.encoder.layer[0].attention.self = node()
        root.esm.encoder.layer[0].attention.self.rotary_embeddings = EsmInvFreq(
            cfg["hidden_size"] // cfg["num_attention_heads"])

    def forward(input_ids, attention_mask, token_type_ids):
        out = root.esm.embeddings(input_ids, attention_mask)
        return out, None, root.esm.embeddings.rows_read
    return root, forward


# Where the lookup decoders of DECODER_DEFAULTS (and the others built by build_lookup_decoder)
# keep their token table; model.embed_tokens elsewhere.
DECODER_TABLES = {"dbrx": "transformer.wte", "llama4": "language_model.model.embed_tokens",
                  "mistral3": "language_model.model.embed_tokens",
                  "qwen3_vl": "model.language_model.embed_tokens",
                  "glm4v": "model.language_model.embed_tokens", "glm4v_moe": "model.language_model.embed_tokens",
                  "llava": "language_model.model.embed_tokens", "llava_next": "language_model.model.embed_tokens",
                  "llava_onevision": "model.language_model.embed_tokens",
                  "vipllava": "language_model.model.embed_tokens", "idefics3": "model.text_model.embed_tokens",
                  "smolvlm": "text_model.embed_tokens", "internvl": "language_model.model.embed_tokens",
                  "got_ocr2": "model.language_model.embed_tokens", "qwen2_audio": "language_model.model.embed_tokens",
                  "voxtral": "language_model.model.embed_tokens", "mllama": "language_model.model.embed_tokens",
                  "aya_vision": "language_model.model.embed_tokens",
                  "lfm2_vl": "model.language_model.embed_tokens", "cohere2_vision": "model.language_model.embed_tokens",
                  "perception_lm": "model.language_model.embed_tokens", "ovis2": "model.language_model.embed_tokens",
                  "emu3": "text_model.model.embed_tokens", "janus": "model.language_model.embed_tokens",
                  "fuyu": "language_model.model.embed_tokens"}


def build_lookup_decoder(cfg):
    """The decoders whose stage is LlamaModel's: inputs_embeds = embed_tokens(input_ids) (DBRX's
    wte; the multimodal checkpoints' language model), times GraniteMoE's embedding_multiplier (a
    Python float); nn.Embedding(vocab_size, hidden_size, padding_idx = pad_token_id)."""
    text = language(cfg)
    root = node()
    path = DECODER_TABLES.get(cfg["model_type"], "model.embed_tokens").split(".")
    parent = root
    for part in path[:-1]:
        setattr(parent, part, node())
        parent = getattr(parent, part)
    # MllamaTextModel: nn.Embedding(vocab_size + 8, ...), the image token's row among the 8.
    rows = text["vocab_size"] + (8 if cfg["model_type"] == "mllama" else 0)
    table = nn.Embedding(rows, text["hidden_size"], text.get("pad_token_id"))
    setattr(parent, path[-1], table)
    multiplier = text.get("embedding_multiplier")

    def forward(input_ids, attention_mask, token_type_ids):
        x = table(input_ids)
        return (x if multiplier is None else x * multiplier), None, None
    return root, forward


def build_recurrent_gemma(cfg):
    """RecurrentGemmaModel.forward: hidden_states = inputs_embeds * normalizer.type(dtype), the
    buffer torch.tensor(hidden_size**0.5, dtype=torch.bfloat16)."""
    root = node()
    root.model = node()
    root.model.embed_tokens = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"], cfg.get("pad_token_id", 0))
    normalizer = torch.tensor(cfg["hidden_size"] ** 0.5, dtype=torch.bfloat16)

    def forward(input_ids, attention_mask, token_type_ids):
        x = root.model.embed_tokens(input_ids)
        return x * normalizer.type(x.dtype), None, None
    return root, forward


class NoBiasLayerNorm(nn.Module):
    """nn.LayerNorm(width, eps, bias=False) (torch 2.1 and later): a weight and no bias, here
    through torch.nn.functional.layer_norm with bias None for Debian's torch 1.13."""

    def __init__(self, width, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))
        self.eps = eps

    def forward(self, x):
        return nn.functional.layer_norm(x, (x.shape[-1],), self.weight, None, self.eps)


def build_modernbert(cfg):
    """ModernBertEmbeddings: tok_embeddings (padding_idx = pad_token_id), norm =
    nn.LayerNorm(hidden_size, eps=norm_eps, bias=norm_bias), drop; ModernBertModel's prefix
    "model." as ModernBertForMaskedLM saves it."""
    assert cfg["norm_bias"] is False
    root = node()
    root.model = node()
    root.model.embeddings = node()
    emb = root.model.embeddings
    emb.tok_embeddings = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"], padding_idx=cfg["pad_token_id"])
    emb.norm = NoBiasLayerNorm(cfg["hidden_size"], cfg["norm_eps"])
    emb.drop = nn.Dropout(cfg["embedding_dropout"])

    def forward(input_ids, attention_mask, token_type_ids):
        return emb.drop(emb.norm(emb.tok_embeddings(input_ids))), None, None
    return root, forward


def build_granite(cfg):
    """GraniteModel.forward: inputs_embeds = embed_tokens(ids) * self.embedding_multiplier (a
    Python float)."""
    root = node()
    root.model = node()
    root.model.embed_tokens = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"], cfg.get("pad_token_id"))

    def forward(input_ids, attention_mask, token_type_ids):
        return root.model.embed_tokens(input_ids) * cfg["embedding_multiplier"], None, None
    return root, forward


class DistilBertEmbeddings(nn.Module):
    """DistilBERT's Embeddings: word + position (the position_ids buffer sliced [:seq]),
    LayerNorm(dim, eps=1e-12), dropout; no token types."""

    def __init__(self, cfg):
        super().__init__()
        self.word_embeddings = nn.Embedding(cfg["vocab_size"], cfg["dim"], padding_idx=cfg["pad_token_id"])
        self.position_embeddings = nn.Embedding(cfg["max_position_embeddings"], cfg["dim"])
        self.LayerNorm = nn.LayerNorm(cfg["dim"], eps=1e-12)
        self.dropout = nn.Dropout(cfg["dropout"])
        self.register_buffer("position_ids", torch.arange(cfg["max_position_embeddings"]).expand((1, -1)),
                             persistent=False)
        self.rows_read = None

    def forward(self, input_ids):
        seq = input_ids.size(1)
        position_ids = self.position_ids[:, :seq]
        self.rows_read = position_ids.expand(input_ids.shape)
        input_embeds = self.word_embeddings(input_ids)
        position_embeddings = self.position_embeddings(position_ids)
        embeddings = input_embeds + position_embeddings
        embeddings = self.LayerNorm(embeddings)
        return self.dropout(embeddings)


def build_distilbert(cfg):
    root = node()
    root.distilbert = node()
    root.distilbert.embeddings = DistilBertEmbeddings(cfg)

    def forward(input_ids, attention_mask, token_type_ids):
        out = root.distilbert.embeddings(input_ids)
        return out, None, root.distilbert.embeddings.rows_read
    return root, forward


def build_albert(cfg):
    """AlbertEmbeddings (BertEmbeddings' forward at width embedding_size), then the first step of
    AlbertTransformer.forward: embedding_hidden_mapping_in (Linear embedding_size -> hidden_size)."""
    root = node()
    root.albert = node()
    root.albert.embeddings = AbsoluteEmbeddings(cfg["vocab_size"], cfg["embedding_size"],
                                                cfg["max_position_embeddings"], cfg["type_vocab_size"],
                                                cfg["layer_norm_eps"], cfg["pad_token_id"],
                                                cfg["hidden_dropout_prob"])
    root.albert.encoder = node()
    root.albert.encoder.embedding_hidden_mapping_in = nn.Linear(cfg["embedding_size"], cfg["hidden_size"])

    def forward(input_ids, attention_mask, token_type_ids):
        embedding_output = root.albert.embeddings(input_ids, token_type_ids)
        projected = root.albert.encoder.embedding_hidden_mapping_in(embedding_output)
        return embedding_output, projected, root.albert.embeddings.rows_read
    return root, forward


class MPNetEmbeddings(nn.Module):
    """MPNetEmbeddings: padding_idx fixed to 1 for both tables; position ids from the ids
    (create_position_ids_from_input_ids, no past length); word + position, LayerNorm
    (layer_norm_eps), dropout; no token types."""

    def __init__(self, cfg):
        super().__init__()
        self.padding_idx = 1
        self.word_embeddings = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"], padding_idx=self.padding_idx)
        self.position_embeddings = nn.Embedding(cfg["max_position_embeddings"], cfg["hidden_size"],
                                                padding_idx=self.padding_idx)
        self.LayerNorm = nn.LayerNorm(cfg["hidden_size"], eps=cfg["layer_norm_eps"])
        self.dropout = nn.Dropout(cfg["hidden_dropout_prob"])
        self.rows_read = None

    def forward(self, input_ids):
        position_ids = positions_from_ids(input_ids, self.padding_idx)
        self.rows_read = position_ids
        inputs_embeds = self.word_embeddings(input_ids)
        position_embeddings = self.position_embeddings(position_ids)
        embeddings = inputs_embeds + position_embeddings
        embeddings = self.LayerNorm(embeddings)
        return self.dropout(embeddings)


def build_mpnet(cfg):
    root = node()
    root.mpnet = node()
    root.mpnet.embeddings = MPNetEmbeddings(cfg)

    def forward(input_ids, attention_mask, token_type_ids):
        out = root.mpnet.embeddings(input_ids)
        return out, None, root.mpnet.embeddings.rows_read
    return root, forward


# ----------------------------------------------------------------------------------------------
# Configurations (the families' real keys) and what the C++ side needs to know.

FAMILIES = [
    dict(
        name="bert", seed=1, build=build_bert,
        config={"architectures": ["BertForMaskedLM"], "model_type": "bert", "vocab_size": 64,
                "hidden_size": 16, "max_position_embeddings": 32, "type_vocab_size": 2,
                "layer_norm_eps": 1e-12, "pad_token_id": 0, "hidden_dropout_prob": 0.1,
                "position_embedding_type": "absolute", "torch_dtype": "float32"},
        token_types="passed",  # in case no_padding
        position_rule="index: position_ids = arange(0, seq) for every row (BertEmbeddings' "
                      "position_ids buffer), whatever the mask or padding",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note="word + token_type first, then += position; LayerNorm(eps=layer_norm_eps); "
             "token_type_ids default to zeros",
    ),
    dict(
        name="electra", seed=2, build=build_electra,
        config={"architectures": ["ElectraModel"], "model_type": "electra", "vocab_size": 58,
                "embedding_size": 8, "hidden_size": 16, "max_position_embeddings": 32,
                "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0,
                "hidden_dropout_prob": 0.1, "position_embedding_type": "absolute",
                "torch_dtype": "float32"},
        token_types="passed",  # in case no_padding
        position_rule="index: position_ids = arange(0, seq), as BERT",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note="BertEmbeddings at width embedding_size (LayerNorm over embedding_size), then "
             "ElectraModel applies embeddings_project (Linear embedding_size -> hidden_size, with "
             "bias) after the embeddings' dropout; names without the 'electra.' prefix",
    ),
    dict(
        name="roberta", seed=3, build=build_roberta,
        config={"architectures": ["RobertaForMaskedLM"], "model_type": "roberta", "vocab_size": 66,
                "hidden_size": 16, "max_position_embeddings": 34, "type_vocab_size": 1,
                "layer_norm_eps": 1e-5, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2,
                "hidden_dropout_prob": 0.1, "position_embedding_type": "absolute",
                "torch_dtype": "float32"},
        token_types="default",  # never passed: type_vocab_size 1, zeros
        position_rule="ids: m = (id != pad_token_id); position = cumsum(m) * m + pad_token_id "
                      "(create_position_ids_from_input_ids); tokens count from pad_token_id + 1, "
                      "pads read row pad_token_id; the attention mask is not used",
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=0,
        note="as BERT with RoBERTa's positions; max_position_embeddings = 32 + pad_token_id + 1 "
             "(like 514 = 512 + 2)",
    ),
    dict(
        name="gpt2", seed=4, build=build_gpt2,
        config={"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": 70,
                "n_embd": 16, "n_positions": 32, "layer_norm_epsilon": 1e-5, "embd_pdrop": 0.1,
                "bos_token_id": 69, "eos_token_id": 69, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: position_ids = arange(0, seq) for every row (GPT2Model.forward "
                      "without position_ids), whatever the mask or padding",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="wte(ids) + wpe(positions), dropout; no scale, no LayerNorm before the blocks "
             "(layer_norm_epsilon is for ln_1/ln_2/ln_f); no pad_token_id in the config, the "
             "cases pad with 0; GPT2Model would add wte(token_type_ids) if token types were "
             "passed (not done here)",
    ),
    dict(
        name="bart", seed=5, build=build_bart,
        config={"architectures": ["BartForConditionalGeneration"], "model_type": "bart",
                "vocab_size": 62, "d_model": 16, "max_position_embeddings": 32,
                "scale_embedding": True, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2,
                "decoder_start_token_id": 2, "dropout": 0.1, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index + 2: row = arange(0, seq) + 2 for every row "
                      "(BartLearnedPositionalEmbedding, offset 2), whatever the mask or padding",
        layer_norm_eps=1e-5, embed_scale=4.0, position_offset=2,
        note="encoder side: embed_tokens(ids) * sqrt(d_model) (scale_embedding), + positions, "
             "layernorm_embedding = nn.LayerNorm(d_model) with torch's default eps 1e-5 (BART "
             "has no eps key), dropout; the token table is written once, as model.shared.weight "
             "(model.encoder.embed_tokens is tied to it)",
    ),
    dict(
        name="opt", seed=6, build=build_opt,
        config={"architectures": ["OPTForCausalLM"], "model_type": "opt", "vocab_size": 68,
                "hidden_size": 16, "word_embed_proj_dim": 8, "max_position_embeddings": 32,
                "pad_token_id": 1, "bos_token_id": 2, "eos_token_id": 2,
                "do_layer_norm_before": False, "dropout": 0.1, "torch_dtype": "float32"},
        token_types=None,
        position_rule="mask: position = cumsum(mask) * mask - 1, row = position + 2 "
                      "(OPTLearnedPositionalEmbedding, offset 2); tokens read rows 2, 3, ... "
                      "counted over unmasked tokens, pads read row 1",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=2,
        note="embed_tokens at width word_embed_proj_dim, project_in (Linear, no bias) applied "
             "to the token embeddings before the positions are added; no scale, no LayerNorm "
             "and no dropout in the embedding stage",
    ),
    dict(
        name="marian", seed=7, build=build_marian,
        config={"architectures": ["MarianMTModel"], "model_type": "marian", "vocab_size": 60,
                "d_model": 12, "max_position_embeddings": 32, "scale_embedding": True,
                "static_position_embeddings": True, "share_encoder_decoder_embeddings": True,
                "pad_token_id": 59, "decoder_start_token_id": 59, "eos_token_id": 0,
                "dropout": 0.1, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: row = arange(0, seq) of the sinusoidal table for every row "
                      "(MarianSinusoidalPositionalEmbedding), whatever the mask or padding",
        layer_norm_eps=0.0, embed_scale=math.sqrt(12), position_offset=0,
        note="embed_tokens(ids) * sqrt(d_model) + sinusoidal table ([sin | cos], angle "
             "pos / 10000^(2*(j//2)/d)), dropout; no LayerNorm; d_model 12 so that sqrt(d) is "
             "not exact (float32 runs multiply by float32(sqrt(12))); pad_token_id = vocab_size "
             "- 1 as in real Marian configs; the token table is written as "
             "model.encoder.embed_tokens.weight only",
    ),
    dict(
        name="t5", seed=8, build=build_t5,
        config={"architectures": ["T5ForConditionalGeneration"], "model_type": "t5",
                "vocab_size": 56, "d_model": 16, "pad_token_id": 0, "eos_token_id": 1,
                "decoder_start_token_id": 0, "layer_norm_epsilon": 1e-6, "dropout_rate": 0.1,
                "tie_word_embeddings": True, "is_encoder_decoder": True, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: T5 has no position table (relative attention bias in the blocks)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="lookup, dropout; no scale (T5 scales by d_model^-0.5 only before its tied LM head); "
             "shared.weight and encoder.embed_tokens.weight both written, equal",
    ),
    dict(
        name="llama", seed=9, build=build_llama,
        # Llama 3.1's rope_scaling rule, scaled down: head_dim 8 (16 / 2 heads), theta 10000,
        # original context 128, so that the four frequencies (wavelengths 6.3, 63, 628, 6283)
        # fall in all three of llama3's bands (kept below 32, smoothed, divided by factor above 128).
        config={"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 72,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 512, "rope_theta": 10000.0,
                "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                 "high_freq_factor": 4.0, "original_max_position_embeddings": 128},
                "rms_norm_eps": 1e-6, "bos_token_id": 1, "eos_token_id": 2,
                "tie_word_embeddings": False, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: Llama has no position table (rotary embeddings in attention)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="lookup only: no scale, no dropout; no pad_token_id in the config (padding_idx "
             "None), the cases pad with 0",
        rotary="llama3",
    ),
    dict(
        name="mistral", seed=10, build=build_mistral,
        # head_dim given and different from hidden_size / num_attention_heads (4), as in
        # Mistral-Nemo (5120 / 32 = 160, head_dim 128): the rotary stage must take head_dim.
        config={"architectures": ["MistralForCausalLM"], "model_type": "mistral", "vocab_size": 74,
                "hidden_size": 16, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                "max_position_embeddings": 64, "rope_theta": 1000000.0, "sliding_window": None,
                "rms_norm_eps": 1e-5, "bos_token_id": 1, "eos_token_id": 2,
                "tie_word_embeddings": False, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no position table (rotary embeddings in attention)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="MistralModel: embed_tokens lookup only, as Llama; head_dim 8 from the config "
             "(not hidden_size / num_attention_heads = 4); no pad_token_id, the cases pad with 0",
        rotary="default",
    ),
    dict(
        name="qwen2", seed=11, build=build_qwen2,
        # YaRN as the Qwen2.5 model cards add it ("type": "yarn", factor,
        # original_max_position_embeddings): factor becomes max_position_embeddings / original.
        config={"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "vocab_size": 76,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 256, "rope_theta": 1000000.0,
                "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64},
                "use_sliding_window": False, "rms_norm_eps": 1e-6, "bos_token_id": 75,
                "eos_token_id": 75, "tie_word_embeddings": True, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no position table (rotary embeddings in attention)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Qwen2Model: embed_tokens lookup only, as Llama; rope_scaling yarn (legacy 'type' "
             "key); no pad_token_id, the cases pad with 0",
        rotary="yarn",
    ),
    dict(
        name="gemma", seed=12, build=build_gemma,
        # hidden_size 24: sqrt(24) is not exact; head_dim 16 given (24 / 2 = 12), as gemma-7b's
        # 256 differs from 3072 / 16.
        config={"architectures": ["GemmaForCausalLM"], "model_type": "gemma", "vocab_size": 78,
                "hidden_size": 24, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16,
                "max_position_embeddings": 64, "rope_theta": 10000.0, "rms_norm_eps": 1e-6,
                "pad_token_id": 0, "bos_token_id": 2, "eos_token_id": 1,
                "hidden_activation": "gelu_pytorch_tanh", "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no position table (rotary embeddings in attention)",
        layer_norm_eps=0.0, embed_scale=24**0.5, position_offset=0,
        note="GemmaModel: embed_tokens(ids) * torch.tensor(hidden_size**0.5, dtype=float32): the "
             "Python double sqrt(24) rounded to float32, one float32 multiply; head_dim 16 from "
             "the config (not 24 / 2)",
        rotary="default",
    ),
    dict(
        name="phi", seed=13, build=build_phi,
        # partial_rotary_factor 0.4 as phi-2 (head_dim 80 -> 32): here 10 -> int(4.0) = 4.
        config={"architectures": ["PhiForCausalLM"], "model_type": "phi", "vocab_size": 80,
                "hidden_size": 20, "num_attention_heads": 2, "max_position_embeddings": 64,
                "rope_theta": 10000.0, "partial_rotary_factor": 0.4, "embd_pdrop": 0.0,
                "resid_pdrop": 0.1, "layer_norm_eps": 1e-5, "bos_token_id": 1, "eos_token_id": 2,
                "tie_word_embeddings": False, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no position table (partial rotary embeddings in attention)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="PhiModel: embed_tokens, embed_dropout; no scale; layer_norm_eps is the blocks' "
             "(input_layernorm, final_layernorm), not the embedding stage's; rotary on the first "
             "int(partial_rotary_factor * head_dim) = 4 of 10 dimensions",
        rotary="default",
    ),
    dict(
        name="gpt_neox", seed=14, build=build_gpt_neox,
        # rotary_pct 0.25 as the Pythia models; rotary_emb_base instead of rope_theta.
        config={"architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox", "vocab_size": 82,
                "hidden_size": 32, "num_attention_heads": 2, "max_position_embeddings": 64,
                "rotary_pct": 0.25, "rotary_emb_base": 20000, "hidden_dropout": 0.0,
                "layer_norm_eps": 1e-5, "use_parallel_residual": True, "bos_token_id": 0,
                "eos_token_id": 0, "tie_word_embeddings": False, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no position table (partial rotary embeddings in attention)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="GPTNeoXModel: embed_in, emb_dropout; no scale, no LayerNorm before the blocks; "
             "rotary on the first int(head_size * rotary_pct) = 4 of 16 dimensions, base "
             "rotary_emb_base; no pad_token_id, the cases pad with 0",
        rotary="default",
    ),
    dict(
        name="distilbert", seed=15, build=build_distilbert,
        config={"architectures": ["DistilBertForMaskedLM"], "model_type": "distilbert", "vocab_size": 84,
                "dim": 16, "hidden_dim": 64, "n_heads": 2, "n_layers": 1, "max_position_embeddings": 32,
                "sinusoidal_pos_embds": False, "dropout": 0.1, "pad_token_id": 0, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: position_ids = arange(0, seq) for every row (Embeddings' position_ids "
                      "buffer), whatever the mask or padding",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note="word + position, LayerNorm(dim, eps=1e-12: fixed in the module, the config has no "
             "key), dropout; no token types; the width is the config's 'dim'",
    ),
    dict(
        name="albert", seed=16, build=build_albert,
        config={"architectures": ["AlbertForMaskedLM"], "model_type": "albert", "vocab_size": 86,
                "embedding_size": 8, "hidden_size": 16, "num_attention_heads": 2,
                "max_position_embeddings": 32, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                "pad_token_id": 0, "bos_token_id": 2, "eos_token_id": 3, "hidden_dropout_prob": 0.0,
                "position_embedding_type": "absolute", "torch_dtype": "float32"},
        token_types="passed",  # in case no_padding
        position_rule="index: position_ids = arange(0, seq), as BERT",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note="BertEmbeddings at width embedding_size, then AlbertTransformer applies "
             "embedding_hidden_mapping_in (Linear embedding_size -> hidden_size, with bias) first",
    ),
    dict(
        name="mpnet", seed=17, build=build_mpnet,
        config={"architectures": ["MPNetForMaskedLM"], "model_type": "mpnet", "vocab_size": 88,
                "hidden_size": 16, "num_attention_heads": 2, "max_position_embeddings": 34,
                "layer_norm_eps": 1e-5, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2,
                "hidden_dropout_prob": 0.1, "relative_attention_num_buckets": 32,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="ids: m = (id != 1); position = cumsum(m) * m + 1 "
                      "(create_position_ids_from_input_ids with MPNetEmbeddings' fixed padding_idx 1); "
                      "tokens count from row 2, pads read row 1; no past length",
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=0,
        note="word + position, LayerNorm(layer_norm_eps: 1e-5 in all-mpnet-base-v2), dropout; no "
             "token types; both tables have padding_idx 1 whatever pad_token_id says",
    ),
    dict(
        name="qwen3", seed=18, build=build_qwen3,
        # head_dim 16 given, against hidden_size / num_attention_heads = 8 (Qwen3-0.6B: 128
        # against 1024 / 16 = 64).
        config={"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "vocab_size": 90,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16,
                "max_position_embeddings": 128, "rope_theta": 1000000.0, "rope_scaling": None,
                "rms_norm_eps": 1e-6, "bos_token_id": 89, "eos_token_id": 89,
                "tie_word_embeddings": True, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no position table (rotary embeddings in attention)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Qwen3Model: embed_tokens lookup only, as Llama; head_dim 16 from the config (not "
             "16 / 2); rope_scaling null; no pad_token_id, the cases pad with 0",
        rotary="default",
    ),
    dict(
        name="qwen3_moe", seed=19, build=build_qwen3_moe,
        config={"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "vocab_size": 92,
                "hidden_size": 16, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                "max_position_embeddings": 64, "rope_theta": 1000000.0, "num_experts": 4,
                "num_experts_per_tok": 2, "rms_norm_eps": 1e-6, "bos_token_id": 91, "eos_token_id": 91,
                "tie_word_embeddings": False, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no position table (rotary embeddings in attention)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Qwen3MoeModel: embed_tokens lookup only; head_dim 8 from config.json (as "
             "Qwen3-30B-A3B's 128 against 2048 / 32); no pad_token_id, the cases pad with 0",
        rotary="default",
    ),
    dict(
        name="mixtral", seed=20, build=build_mixtral,
        config={"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "vocab_size": 94,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "rope_theta": 1000000.0, "num_local_experts": 4,
                "num_experts_per_tok": 2, "sliding_window": None, "rms_norm_eps": 1e-5,
                "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": False, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no position table (rotary embeddings in attention)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="MixtralModel: embed_tokens lookup only; head_dim hidden_size / num_attention_heads; "
             "no pad_token_id, the cases pad with 0",
        rotary="default",
    ),
    dict(
        name="gemma2", seed=21, build=build_gemma2,
        # No pad_token_id key: Gemma2Config's default 0 is the padding_idx.
        config={"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "vocab_size": 96,
                "hidden_size": 24, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16,
                "max_position_embeddings": 64, "rope_theta": 10000.0, "rms_norm_eps": 1e-6,
                "query_pre_attn_scalar": 16, "sliding_window": 32, "final_logit_softcapping": 30.0,
                "attn_logit_softcapping": 50.0, "bos_token_id": 2, "eos_token_id": 1,
                "hidden_activation": "gelu_pytorch_tanh", "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no position table (rotary embeddings in attention)",
        layer_norm_eps=0.0, embed_scale=24**0.5, position_offset=0,
        note="Gemma2Model: embed_tokens(ids) * torch.tensor(hidden_size**0.5, dtype=float32), as "
             "Gemma; no pad_token_id key (Gemma2Config's default 0), the cases pad with 0",
        rotary="default",
    ),
    dict(
        name="starcoder2", seed=22, build=build_starcoder2,
        config={"architectures": ["Starcoder2ForCausalLM"], "model_type": "starcoder2", "vocab_size": 98,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "rope_theta": 999999.4420358813, "sliding_window": 32,
                "norm_epsilon": 1e-5, "embedding_dropout": 0.1, "use_bias": True, "bos_token_id": 0,
                "eos_token_id": 0, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no position table (rotary embeddings in attention)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Starcoder2Model: embed_tokens, embedding_dropout (identity in eval); rope_theta "
             "999999.4420358813 as starcoder2-3b's; no pad_token_id, the cases pad with 0",
        rotary="default",
    ),
    dict(
        name="olmo2", seed=23, build=build_olmo2,
        # No pad_token_id key: Olmo2Config's default 1 is the padding_idx.
        config={"architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2", "vocab_size": 100,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 2,
                "max_position_embeddings": 64, "rope_theta": 500000.0, "rms_norm_eps": 1e-6,
                "bos_token_id": None, "eos_token_id": 99, "tie_word_embeddings": False,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no position table (rotary embeddings in attention)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Olmo2Model: embed_tokens lookup only; no pad_token_id key (Olmo2Config's default 1), "
             "the cases pad with 0",
        rotary="default",
    ),
    dict(
        name="stablelm", seed=24, build=build_stablelm,
        # partial_rotary_factor 0.25 as stablelm-2-1_6b (head_dim 64 -> 16): here 8 -> 2.
        config={"architectures": ["StableLmForCausalLM"], "model_type": "stablelm", "vocab_size": 102,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 2,
                "max_position_embeddings": 64, "rope_theta": 10000, "partial_rotary_factor": 0.25,
                "layer_norm_eps": 1e-5, "use_qkv_bias": True, "bos_token_id": 0, "eos_token_id": 0,
                "tie_word_embeddings": False, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no position table (partial rotary embeddings in attention)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="StableLmModel: embed_tokens lookup only; rotary on the first "
             "int(partial_rotary_factor * head_dim) = 2 of 8 dimensions; layer_norm_eps is the "
             "blocks'; no pad_token_id, the cases pad with 0",
        rotary="default",
    ),
    dict(
        name="gemma3_text", seed=26, build=build_gemma3,
        # Gemma 3 1B's shape, scaled down: a linear rule on the global layers (the 4B-27B models'
        # factor 8), rope_local_base_freq for the sliding-window layers.
        config={"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "vocab_size": 106,
                "hidden_size": 24, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16,
                "max_position_embeddings": 64, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
                "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "sliding_window": 32,
                "query_pre_attn_scalar": 16, "rms_norm_eps": 1e-6, "pad_token_id": 0, "bos_token_id": 2,
                "eos_token_id": 1, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no position table (rotary embeddings in attention, global and local)",
        layer_norm_eps=0.0, embed_scale=24**0.5, position_offset=0,
        note="Gemma3TextModel: Gemma3TextScaledWordEmbedding, embed_tokens(ids) * "
             "torch.tensor(hidden_size**0.5) (float32); rotary_emb from rope_theta and rope_scaling, "
             "rotary_emb_local from rope_local_base_freq without a rule",
        rotary="linear",
    ),
    dict(
        name="gemma3", seed=27, build=build_gemma3,
        # A multimodal checkpoint's config: text_config holds only what differs from
        # Gemma3TextConfig's defaults (no rope_theta, rope_local_base_freq or pad_token_id), as
        # gemma-3-4b-it's does; vocab_size is given only to keep the table small (the default's
        # 262208 rows are tested on a config alone).
        config={"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
                "text_config": {"model_type": "gemma3_text", "vocab_size": 108, "hidden_size": 24,
                                "num_attention_heads": 2,
                                "num_key_value_heads": 1, "head_dim": 16, "max_position_embeddings": 64,
                                "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "sliding_window": 32},
                "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 8},
                "mm_tokens_per_image": 4, "boi_token_index": 255999, "eoi_token_index": 256000,
                "image_token_index": 262144, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no position table (rotary embeddings in attention, global and local)",
        layer_norm_eps=0.0, embed_scale=24**0.5, position_offset=0,
        note="Gemma3ForConditionalGeneration's language model (language_model.model.embed_tokens, "
             "transformers 4.50's names): as gemma3_text, its config text_config with "
             "Gemma3TextConfig's defaults (vocab_size 262208, rope_theta 1e6, pad_token_id 0)",
        rotary="linear",
    ),
    dict(
        name="modernbert", seed=28, build=build_modernbert,
        config={"architectures": ["ModernBertForMaskedLM"], "model_type": "modernbert", "vocab_size": 110,
                "hidden_size": 16, "num_attention_heads": 2, "max_position_embeddings": 64,
                "norm_eps": 1e-5, "norm_bias": False, "global_rope_theta": 160000.0,
                "local_rope_theta": 10000.0, "global_attn_every_n_layers": 3, "local_attention": 8,
                "embedding_dropout": 0.0, "pad_token_id": 108, "bos_token_id": 107, "eos_token_id": 109,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no position table (rotary embeddings in attention, global and local)",
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=0,
        note="ModernBertEmbeddings: tok_embeddings, LayerNorm(norm_eps, bias=norm_bias: none here), "
             "dropout; rotary: global_rope_theta for the global layers, local_rope_theta for the "
             "sliding-window ones",
        rotary="default",
    ),
    dict(
        name="granite", seed=25, build=build_granite,
        # embedding_multiplier 0.15, not a float32: the rows are multiplied by float32(0.15).
        # The released Granite 3 models have 12.0.
        config={"architectures": ["GraniteForCausalLM"], "model_type": "granite", "vocab_size": 104,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "rope_theta": 10000.0, "embedding_multiplier": 0.15,
                "attention_multiplier": 0.125, "residual_multiplier": 0.22, "logits_scaling": 8.0,
                "rms_norm_eps": 1e-5, "pad_token_id": 0, "bos_token_id": 0, "eos_token_id": 0,
                "tie_word_embeddings": True, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no position table (rotary embeddings in attention)",
        layer_norm_eps=0.0, embed_scale=0.15, position_offset=0,
        note="GraniteModel: embed_tokens(ids) * embedding_multiplier (a Python float: float32 runs "
             "multiply by float32(0.15)); the other multipliers are the blocks'",
        rotary="default",
    ),
    dict(
        name="mbart", seed=29, build=build_bart,
        config={"architectures": ["MBartForConditionalGeneration"], "model_type": "mbart",
                "vocab_size": 73, "d_model": 12, "max_position_embeddings": 32,
                "scale_embedding": True, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2,
                "decoder_start_token_id": 2, "dropout": 0.1, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index + 2: row = arange(0, seq) + 2 (MBartLearnedPositionalEmbedding, offset 2)",
        layer_norm_eps=1e-5, embed_scale=math.sqrt(12), position_offset=2,
        note="MBartScaledWordEmbedding and MBartLearnedPositionalEmbedding are BART's; "
             "layernorm_embedding nn.LayerNorm(d_model), eps 1e-5; d_model 12 so that sqrt(d) is "
             "not exact; the table written as model.shared.weight only",
    ),
    dict(
        name="pegasus", seed=30, build=build_marian,
        config={"architectures": ["PegasusForConditionalGeneration"], "model_type": "pegasus",
                "vocab_size": 74, "d_model": 12, "max_position_embeddings": 32,
                "scale_embedding": True, "pad_token_id": 0, "eos_token_id": 1,
                "decoder_start_token_id": 0, "dropout": 0.1, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: row = arange(0, seq) of the sinusoidal table "
                      "(PegasusSinusoidalPositionalEmbedding, Marian's)",
        layer_norm_eps=0.0, embed_scale=math.sqrt(12), position_offset=0,
        note="embed_tokens(ids) * sqrt(d_model) + the saved sinusoidal parameter ([sin | cos], "
             "numpy float64 angles), dropout; no LayerNorm; pad_token_id 0 as PegasusConfig",
    ),
    dict(
        name="mt5", seed=31, build=build_t5,
        config={"architectures": ["MT5ForConditionalGeneration"], "model_type": "mt5",
                "vocab_size": 75, "d_model": 16, "pad_token_id": 0, "eos_token_id": 1,
                "decoder_start_token_id": 0, "layer_norm_epsilon": 1e-6, "dropout_rate": 0.1,
                "tie_word_embeddings": False, "is_encoder_decoder": True, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: relative attention bias in the blocks, as T5",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="MT5Stack is T5's: shared lookup, dropout; tie_word_embeddings false (the LM head's "
             "own), the encoder and decoder still share `shared`",
    ),
    dict(
        name="umt5", seed=32, build=build_t5,
        config={"architectures": ["UMT5ForConditionalGeneration"], "model_type": "umt5",
                "vocab_size": 76, "d_model": 16, "pad_token_id": 0, "eos_token_id": 1,
                "decoder_start_token_id": 0, "layer_norm_epsilon": 1e-6, "dropout_rate": 0.1,
                "tie_word_embeddings": False, "is_encoder_decoder": True, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: a relative attention bias in every block",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="UMT5Stack: shared lookup, dropout, as T5",
    ),
    dict(
        name="gpt_neo", seed=33, build=build_gpt_neo,
        config={"architectures": ["GPTNeoForCausalLM"], "model_type": "gpt_neo", "vocab_size": 77,
                "hidden_size": 16, "max_position_embeddings": 32, "num_heads": 2,
                "layer_norm_epsilon": 1e-5, "embed_dropout": 0.0, "bos_token_id": 76,
                "eos_token_id": 76, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: position_ids = arange(0, seq), whatever the mask, as GPT-2",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="transformer.wte(ids) + transformer.wpe(positions), drop; GPT-2's stage under "
             "hidden_size and max_position_embeddings",
    ),
    dict(
        name="gptj", seed=34, build=build_gptj,
        # rotary_dim 4 of head_dim 8, as GPT-J-6B rotates 64 of 256.
        config={"architectures": ["GPTJForCausalLM"], "model_type": "gptj", "vocab_size": 78,
                "n_embd": 16, "n_head": 2, "n_positions": 64, "rotary_dim": 4, "embd_pdrop": 0.0,
                "layer_norm_epsilon": 1e-5, "bos_token_id": 77, "eos_token_id": 77,
                "tie_word_embeddings": False, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotate_every_two on the first rotary_dim dimensions (base 10000, fixed)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="GPTJModel: transformer.wte, drop; its embed_positions is a plain attribute, never saved",
        rotary="default",
    ),
    dict(
        name="codegen", seed=35, build=build_codegen,
        config={"architectures": ["CodeGenForCausalLM"], "model_type": "codegen", "vocab_size": 79,
                "n_embd": 24, "n_head": 2, "n_positions": 64, "rotary_dim": 8, "embd_pdrop": 0.0,
                "layer_norm_epsilon": 1e-5, "bos_token_id": 1, "eos_token_id": 2,
                "tie_word_embeddings": False, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: GPT-J's rotary (copied), rotary_dim 8 of head_dim 12",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="CodeGenModel: transformer.wte, drop, as GPT-J",
        rotary="default",
    ),
    dict(
        name="falcon", seed=36, build=build_falcon,
        # No max_position_embeddings or rope_theta, as tiiuae/falcon-7b's config.json: FalconConfig's
        # defaults (2048, 10000).
        config={"architectures": ["FalconForCausalLM"], "model_type": "falcon", "vocab_size": 81,
                "hidden_size": 16, "num_attention_heads": 2, "alibi": False, "multi_query": True,
                "new_decoder_architecture": False, "parallel_attn": True, "bias": False,
                "layer_norm_epsilon": 1e-5, "bos_token_id": 11, "eos_token_id": 11,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary in attention (rotate_half), FalconConfig's defaults",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="FalconModel: transformer.word_embeddings, no scale, no dropout",
        rotary="default",
    ),
    dict(
        name="cohere", seed=37, build=build_cohere,
        config={"architectures": ["CohereForCausalLM"], "model_type": "cohere", "vocab_size": 83,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "rope_theta": 40000.0, "logit_scale": 0.0625,
                "use_qk_norm": False, "layer_norm_eps": 1e-5, "pad_token_id": 0, "bos_token_id": 5,
                "eos_token_id": 6, "tie_word_embeddings": True, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: interleaved rotary in attention (repeat_interleave)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="CohereModel: embed_tokens (padding_idx pad_token_id), no scale; logit_scale is the "
             "head's",
        rotary="default",
    ),
    dict(
        name="deberta_v2", seed=38, build=build_deberta,
        # DeBERTa-v3's embedding stage: no absolute positions, no token types.
        config={"architectures": ["DebertaV2ForMaskedLM"], "model_type": "deberta-v2", "vocab_size": 84,
                "hidden_size": 16, "max_position_embeddings": 32, "type_vocab_size": 0,
                "position_biased_input": False, "relative_attention": True, "position_buckets": 16,
                "norm_rel_ebd": "layer_norm", "layer_norm_eps": 1e-7, "pad_token_id": 0,
                "hidden_dropout_prob": 0.1, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: relative positions in attention (position_biased_input false, as DeBERTa-v3)",
        layer_norm_eps=1e-7, embed_scale=1.0, position_offset=0,
        note="word embeddings, LayerNorm(eps 1e-7), times the attention mask (padded rows zero "
             "in Hugging Face too), dropout",
    ),
    dict(
        name="deberta", seed=39, build=build_deberta,
        # position_biased_input and token types on, to test both additions and their order.
        config={"architectures": ["DebertaForMaskedLM"], "model_type": "deberta", "vocab_size": 85,
                "hidden_size": 16, "max_position_embeddings": 32, "type_vocab_size": 2,
                "position_biased_input": True, "relative_attention": False, "layer_norm_eps": 1e-7,
                "pad_token_id": 0, "hidden_dropout_prob": 0.1, "torch_dtype": "float32"},
        token_types="passed",
        position_rule="index: position_ids = arange(0, seq), whatever the mask",
        layer_norm_eps=1e-7, embed_scale=1.0, position_offset=0,
        note="word + position, then + token type, LayerNorm(eps 1e-7), times the attention mask; "
             "DebertaLayerNorm's (x - mean) / sqrt(var + eps) in float32 is nn.LayerNorm's arithmetic "
             "up to rounding, which the LayerNorm bound covers",
    ),
    dict(
        name="m2m_100", seed=40, build=build_m2m_100,
        config={"architectures": ["M2M100ForConditionalGeneration"], "model_type": "m2m_100",
                "vocab_size": 86, "d_model": 12, "max_position_embeddings": 32, "scale_embedding": True,
                "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "decoder_start_token_id": 2,
                "dropout": 0.1, "torch_dtype": "float32"},
        token_types=None,
        position_rule="ids: m = (id != pad_token_id); row = cumsum(m) * m + pad_token_id "
                      "(create_position_ids_from_input_ids) of fairseq's sinusoidal table, row "
                      "pad_token_id zero; the attention mask is not used",
        layer_norm_eps=0.0, embed_scale=math.sqrt(12), position_offset=0,
        note="NLLB's and M2M100's encoder: shared lookup x sqrt(d_model) + the float32 table "
             "(not in the checkpoint: torch's exp, sin and cos round it, so the output matches "
             "to the table's last bits), dropout; no LayerNorm",
    ),
    dict(
        name="bloom", seed=41, build=build_bloom,
        config={"architectures": ["BloomForCausalLM"], "model_type": "bloom", "vocab_size": 87,
                "hidden_size": 16, "n_head": 3, "n_layer": 2, "layer_norm_epsilon": 1e-5,
                "pad_token_id": 3, "bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: ALiBi in attention (3 heads, not a power of two)",
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=0,
        note="word_embeddings, word_embeddings_layernorm; names without the transformer. prefix, "
             "as bigscience's checkpoints; pad_token_id 3 is not the module's padding_idx (none)",
    ),
    dict(
        name="mpt", seed=42, build=build_mpt,
        config={"architectures": ["MptForCausalLM"], "model_type": "mpt", "vocab_size": 88,
                "d_model": 16, "n_heads": 3, "n_layers": 2, "max_seq_len": 64, "emb_pdrop": 0.0,
                "attn_config": {"alibi": True, "alibi_bias_max": 8}, "layer_norm_epsilon": 1e-5,
                "no_bias": True, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: ALiBi in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="transformer.wte, emb_drop; no scale",
    ),
    dict(
        name="gpt_bigcode", seed=43, build=build_gpt2,
        config={"architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode", "vocab_size": 89,
                "n_embd": 16, "n_positions": 32, "n_head": 2, "multi_query": True, "embd_pdrop": 0.0,
                "layer_norm_epsilon": 1e-5, "bos_token_id": 0, "eos_token_id": 0, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: position_ids = arange(past, past + seq) (GPTBigCodeModel.forward in "
                      "transformers 5; 4.x numbered by the mask's cumsum, as generate() still does "
                      "through position_ids)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="transformer.wte(ids) + transformer.wpe(positions), drop: GPT-2's stage",
    ),
    dict(
        name="gpt_oss", seed=44, build=build_lookup_decoder,
        config={"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "vocab_size": 112,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "num_hidden_layers": 4, "pad_token_id": 111,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="GptOssModel: embed_tokens; no rope_theta, head_dim or rope_scaling in the config: GptOssConfig's 150000, 64 and yarn (factor 32, original 4096, truncate false)",
        rotary="yarn",
    ),
    dict(
        name="glm4", seed=45, build=build_lookup_decoder,
        config={"architectures": ["Glm4ForCausalLM"], "model_type": "glm4", "vocab_size": 113,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
                "max_position_embeddings": 64, "rope_theta": 10000.0, "pad_token_id": 112,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Glm4Model: embed_tokens; interleaved pairs on the first half of each head (partial_rotary_factor 0.5, Glm4Config's default)",
        rotary="default",
    ),
    dict(
        name="glm4_moe", seed=46, build=build_lookup_decoder,
        config={"architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe", "vocab_size": 114,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "rope_theta": 10000.0, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Glm4MoeModel: embed_tokens; GPT-NeoX's halves on the first half of each head (partial_rotary_factor 0.5 by default)",
        rotary="default",
    ),
    dict(
        name="dbrx", seed=47, build=build_lookup_decoder,
        config={"architectures": ["DbrxForCausalLM"], "model_type": "dbrx", "vocab_size": 115,
                "d_model": 16, "n_heads": 2, "n_layers": 2, "max_seq_len": 64,
                "attn_config": {"kv_n_heads": 1, "rope_theta": 500000.0, "clip_qkv": 8.0},
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note='DbrxModel: transformer.wte; d_model, n_heads, max_seq_len and attn_config.rope_theta',
        rotary="default",
    ),
    dict(
        name="deepseek_v3", seed=48, build=build_lookup_decoder,
        config={"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "vocab_size": 116,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 2, "qk_rope_head_dim": 8,
                "qk_nope_head_dim": 16, "v_head_dim": 16, "kv_lora_rank": 8, "q_lora_rank": 8,
                "max_position_embeddings": 64, "rope_theta": 10000.0,
                "rope_scaling": {"type": "yarn", "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
                                 "beta_fast": 32, "beta_slow": 1, "original_max_position_embeddings": 4096},
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="DeepseekV3Model: embed_tokens; RoPE on qk_rope_head_dim of each head, interleaved pairs; DeepSeek-V3's yarn block (mscale = mscale_all_dim: attention factor 1)",
        rotary="yarn",
    ),
    dict(
        name="kimi_k2", seed=97, build=build_lookup_decoder,
        # Kimi-K2-Instruct-0905's rope block (beta_fast = beta_slow = 1, factor 64), scaled down.
        config={"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2", "vocab_size": 118,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 2, "qk_rope_head_dim": 8,
                "qk_nope_head_dim": 16, "v_head_dim": 16, "kv_lora_rank": 8, "q_lora_rank": 8,
                "max_position_embeddings": 64, "rope_theta": 50000.0,
                "rope_scaling": {"type": "yarn", "factor": 64.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                                 "beta_fast": 1.0, "beta_slow": 1.0, "original_max_position_embeddings": 4096},
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Kimi K2 (DeepSeek-V3's remote modeling_deepseek.py): embed_tokens; RoPE on qk_rope_head_dim, interleaved pairs; yarn with beta_fast = beta_slow = 1",
        rotary="yarn",
    ),
    dict(
        name="deepseek_v2", seed=49, build=build_lookup_decoder,
        config={"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "vocab_size": 117,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 2, "qk_rope_head_dim": 8,
                "qk_nope_head_dim": 16, "v_head_dim": 16, "kv_lora_rank": 8,
                "max_position_embeddings": 64, "rope_theta": 10000.0,
                "rope_scaling": {"type": "yarn", "factor": 40, "mscale": 0.707, "mscale_all_dim": 0.707,
                                 "beta_fast": 32, "beta_slow": 1, "original_max_position_embeddings": 4096},
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note='DeepseekV2Model: embed_tokens; complex products on pairs (2i, 2i + 1) of qk_rope_head_dim',
        rotary="yarn",
    ),
    dict(
        name="llama4", seed=50, build=build_lookup_decoder,
        config={"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
                "text_config": {"model_type": "llama4_text", "vocab_size": 118, "hidden_size": 16,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
                                "max_position_embeddings": 64, "num_hidden_layers": 4,
                                "no_rope_layers": [1, 1, 1, 0],
                                "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                 "high_freq_factor": 4.0, "original_max_position_embeddings": 16}},
                "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 8},
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Llama4ForConditionalGeneration's language model (language_model.model.embed_tokens); text_config with Llama4TextConfig's rope_theta 500000; complex products on interleaved pairs",
        rotary="llama3",
    ),
    dict(
        name="mllama", seed=117, build=build_lookup_decoder,
        # meta-llama/Llama-3.2-11B-Vision's text_config, scaled down: llama3's rule, cross-attention
        # layers listed, pad_token_id 128004 there (given here inside the small vocabulary).
        config={"architectures": ["MllamaForConditionalGeneration"], "model_type": "mllama",
                "text_config": {"model_type": "mllama_text_model", "vocab_size": 175, "hidden_size": 16,
                                "num_attention_heads": 2, "num_key_value_heads": 1,
                                "max_position_embeddings": 64, "num_hidden_layers": 5,
                                "cross_attention_layers": [1, 3], "pad_token_id": 174,
                                "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                 "high_freq_factor": 4.0, "original_max_position_embeddings": 16}},
                "vision_config": {"model_type": "mllama_vision_model", "hidden_size": 8},
                "image_token_index": 175, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention (not in the cross-attention layers)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="MllamaForConditionalGeneration as saved (language_model.model.embed_tokens, vocab_size + 8 rows); "
             "MllamaTextConfig's rope_theta 500000",
        rotary="llama3",
    ),
    dict(
        name="qwen2_5_vl", seed=51, build=build_lookup_decoder,
        config={"architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
                "vocab_size": 119, "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "rope_theta": 1000000.0,
                "rope_scaling": {"type": "mrope", "mrope_section": [1, 1, 2]},
                "vision_config": {"hidden_size": 8}, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Qwen2_5_VLForConditionalGeneration's Hub layout (model.embed_tokens, the text keys at the top level); rope type mrope read as default",
        rotary="default",
    ),
    dict(
        name="qwen3_vl", seed=52, build=build_lookup_decoder,
        config={"architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl",
                "text_config": {"model_type": "qwen3_vl_text", "vocab_size": 120, "hidden_size": 16,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
                                "max_position_embeddings": 64,
                                "rope_scaling": {"rope_type": "default", "mrope_section": [2, 1, 1],
                                                 "mrope_interleaved": True}},
                "vision_config": {"hidden_size": 8}, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Qwen3VLForConditionalGeneration (model.language_model.embed_tokens); text_config with Qwen3VLTextConfig's rope_theta 5e6",
        rotary="default",
    ),
    dict(
        name="granitemoe", seed=53, build=build_lookup_decoder,
        config={"architectures": ["GraniteMoeForCausalLM"], "model_type": "granitemoe", "vocab_size": 121,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "embedding_multiplier": 0.3, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=0.3, position_offset=0,
        note='GraniteMoeModel: embed_tokens(ids) * embedding_multiplier (a Python float)',
        rotary="default",
    ),
    dict(
        name="cohere2", seed=54, build=build_lookup_decoder,
        config={"architectures": ["Cohere2ForCausalLM"], "model_type": "cohere2", "vocab_size": 122,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4,
                "max_position_embeddings": 64, "num_hidden_layers": 4, "sliding_window": 32,
                "sliding_window_pattern": 4, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note='Cohere2Model: embed_tokens (no normalizer); head_dim = hidden_size // heads whatever head_dim says; interleaved pairs; RoPE on the sliding-window layers alone',
        rotary="default",
    ),
    dict(
        name="smollm3", seed=55, build=build_lookup_decoder,
        config={"architectures": ["SmolLM3ForCausalLM"], "model_type": "smollm3", "vocab_size": 123,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "num_hidden_layers": 4, "no_rope_layers": [1, 0, 1, 1],
                "pad_token_id": 122, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note='SmolLM3Model: embed_tokens; rope_theta 2e6 by default; layers with no_rope_layers[i] == 0 take no RoPE',
        rotary="default",
    ),
    dict(
        name="lfm2", seed=90, build=build_lookup_decoder,
        config={"architectures": ["Lfm2ForCausalLM"], "model_type": "lfm2", "vocab_size": 125,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "num_hidden_layers": 4, "theta": 250000.0,
                "layer_types": ["conv", "full_attention", "conv", "full_attention"], "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note='Lfm2Model: embed_tokens (padding_idx 0 by default); theta read before rope_theta; RoPE in the full_attention layers alone',
        rotary="default",
    ),
    dict(
        name="lfm2_moe", seed=91, build=build_lookup_decoder,
        config={"architectures": ["Lfm2MoeForCausalLM"], "model_type": "lfm2_moe", "vocab_size": 126,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "num_hidden_layers": 3, "full_attn_idxs": [2],
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note='Lfm2MoeModel: embed_tokens (padding_idx 0 by default); theta 1e6 by default; RoPE in the layers full_attn_idxs lists',
        rotary="default",
    ),
    dict(
        name="glm4v", seed=92, build=build_lookup_decoder,
        config={"architectures": ["Glm4vForConditionalGeneration"], "model_type": "glm4v",
                "text_config": {"model_type": "glm4v_text", "vocab_size": 127, "hidden_size": 32,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "partial_rotary_factor": 0.5,
                                "max_position_embeddings": 64,
                                "rope_scaling": {"type": "default", "mrope_section": [2, 1, 1]}},
                "vision_config": {"hidden_size": 8}, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Glm4vForConditionalGeneration (model.language_model.embed_tokens, unscaled); text_config with GLM-4.1V's partial_rotary_factor 0.5 and rope_scaling.mrope_section, interleaved pairs",
        rotary="default",
    ),
    dict(
        name="glm4v_moe", seed=93, build=build_lookup_decoder,
        config={"architectures": ["Glm4vMoeForConditionalGeneration"], "model_type": "glm4v_moe",
                "text_config": {"model_type": "glm4v_moe_text", "vocab_size": 128, "hidden_size": 24,
                                "num_attention_heads": 3, "num_key_value_heads": 1, "head_dim": 16,
                                "max_position_embeddings": 64, "pad_token_id": 2,
                                "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                                                    "mrope_section": [1, 2, 1]}},
                "vision_config": {"hidden_size": 8}, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Glm4vMoeForConditionalGeneration (model.language_model.embed_tokens, unscaled); head_dim 16 from text_config (not hidden_size / heads), Glm4vMoeTextConfig's partial_rotary_factor 0.5, transformers 5's rope_parameters, halves",
        rotary="default",
    ),
    dict(
        name="hunyuan_v1_dense", seed=94, build=build_lookup_decoder,
        config={"architectures": ["HunYuanDenseV1ForCausalLM"], "model_type": "hunyuan_v1_dense", "vocab_size": 129,
                "hidden_size": 32, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16,
                "attention_head_dim": 16, "max_position_embeddings": 64, "pad_token_id": 127, "rope_theta": 10000.0,
                "rope_scaling": {"type": "dynamic", "alpha": 1000.0, "factor": 1.0, "beta_fast": 32, "beta_slow": 1,
                                 "mscale": 1.0, "mscale_all_dim": 1.0},
                "tie_word_embeddings": True, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="HunYuanDenseV1ForCausalLM (model.embed_tokens, unscaled); Hunyuan-7B-Instruct's rope_scaling: NTK-alpha, base theta * alpha ** (d / (d - 2)) at init",
        rotary="default",
    ),
    dict(
        name="hunyuan_v1_moe", seed=95, build=build_lookup_decoder,
        config={"architectures": ["HunYuanMoEV1ForCausalLM"], "model_type": "hunyuan_v1_moe", "vocab_size": 130,
                "hidden_size": 24, "num_attention_heads": 2, "num_key_value_heads": 1, "attention_head_dim": 8,
                "max_position_embeddings": 64, "rope_theta": 500000.0,
                "rope_scaling": {"type": "dynamic", "alpha": 50.0},
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="HunYuanMoEV1ForCausalLM (model.embed_tokens, unscaled); no head_dim (Hunyuan-A13B's config): hidden_size // num_attention_heads as Tencent's code, its attention_head_dim unread; HunYuanMoEV1Config's pad_token_id 0, NTK-alpha without a factor",
        rotary="default",
    ),
    dict(
        name="olmo3", seed=56, build=build_lookup_decoder,
        config={"architectures": ["Olmo3ForCausalLM"], "model_type": "olmo3", "vocab_size": 124,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "num_hidden_layers": 4, "sliding_window": 16,
                "rope_scaling": {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 32},
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note='Olmo3Model: embed_tokens; rope_theta 500000 by default; rope_scaling on the full-attention layers alone',
        rotary="yarn",
    ),
    dict(
        name="persimmon", seed=57, build=build_lookup_decoder,
        config={"architectures": ["PersimmonForCausalLM"], "model_type": "persimmon", "vocab_size": 125,
                "hidden_size": 16, "num_attention_heads": 2, "max_position_embeddings": 64,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note='PersimmonModel: embed_tokens; halves on the first int(0.5 * head_dim) dimensions, theta 25000 by default',
        rotary="default",
    ),
    dict(
        name="mistral3", seed=58, build=build_lookup_decoder,
        config={"architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3",
                "text_config": {"model_type": "mistral", "vocab_size": 126, "hidden_size": 16,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
                                "max_position_embeddings": 64, "rope_theta": 1000000000.0},
                "vision_config": {"model_type": "pixtral", "hidden_size": 8}, "image_token_index": 10,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Mistral3ForConditionalGeneration's first files (language_model.model.embed_tokens); MistralModel's stage from text_config",
        rotary="default",
    ),
    dict(
        name="apertus", seed=59, build=build_lookup_decoder,
        config={"architectures": ["ApertusForCausalLM"], "model_type": "apertus", "vocab_size": 127,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="ApertusModel: embed_tokens; ApertusConfig's theta 12e6 and llama3 rule (factor 8, original 8192) when the config has none",
        rotary="llama3",
    ),
    dict(
        name="helium", seed=60, build=build_lookup_decoder,
        config={"architectures": ["HeliumForCausalLM"], "model_type": "helium", "vocab_size": 128,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
                "max_position_embeddings": 64, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note='HeliumModel: embed_tokens (padding_idx 3 by default); interleaved pairs, theta 100000 by default',
        rotary="default",
    ),
    dict(
        name="ernie4_5", seed=61, build=build_lookup_decoder,
        config={"architectures": ["Ernie4_5ForCausalLM"], "model_type": "ernie4_5", "vocab_size": 129,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
                "max_position_embeddings": 64, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note='Ernie4_5Model: embed_tokens (padding_idx 0 by default); interleaved pairs, theta 500000 by default',
        rotary="default",
    ),
    dict(
        name="nemotron", seed=62, build=build_lookup_decoder,
        config={"architectures": ["NemotronForCausalLM"], "model_type": "nemotron", "vocab_size": 130,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note='NemotronModel: embed_tokens; halves on the first half of each head (partial_rotary_factor 0.5 by default)',
        rotary="default",
    ),
    dict(
        name="exaone4", seed=63, build=build_lookup_decoder,
        config={"architectures": ["Exaone4ForCausalLM"], "model_type": "exaone4", "vocab_size": 131,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "num_hidden_layers": 4, "sliding_window": 16,
                "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"],
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note='Exaone4Model: embed_tokens; RoPE on the sliding-window layers alone when sliding_window is set',
        rotary="default",
    ),
    dict(
        name="seed_oss", seed=64, build=build_lookup_decoder,
        config={"architectures": ["SeedOssForCausalLM"], "model_type": "seed_oss", "vocab_size": 132,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note='SeedOssModel: embed_tokens (padding_idx 1 by default); head_dim 128 by default, not hidden_size // heads',
        rotary="default",
    ),
    dict(
        name="bitnet", seed=65, build=build_lookup_decoder,
        config={"architectures": ["BitNetForCausalLM"], "model_type": "bitnet", "vocab_size": 133,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note='BitNetModel: embed_tokens; theta 500000 by default',
        rotary="default",
    ),
    dict(
        name="olmoe", seed=66, build=build_lookup_decoder,
        config={"architectures": ["OlmoeForCausalLM"], "model_type": "olmoe", "vocab_size": 134,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 2,
                "max_position_embeddings": 64, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note='OlmoeModel: embed_tokens (padding_idx 1 by default)',
        rotary="default",
    ),
    dict(
        name="longformer", seed=67, build=build_encoder,
        config={"architectures": ["LongformerForMaskedLM"], "model_type": "longformer", "vocab_size": 135,
                "hidden_size": 16, "max_position_embeddings": 34, "type_vocab_size": 1, "layer_norm_eps": 1e-5,
                "pad_token_id": 1, "attention_window": [4], "torch_dtype": "float32"},
        token_types="default",
        position_rule="the family's: " + "LongformerEmbeddings: word + position + token type (that order), LayerNorm; RoBERTa's positions",
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=0,
        note="LongformerEmbeddings: word + position + token type (that order), LayerNorm; RoBERTa's positions",
    ),
    dict(
        name="data2vec_text", seed=68, build=build_encoder,
        config={"architectures": ["Data2VecTextForMaskedLM"], "model_type": "data2vec-text", "vocab_size": 136,
                "hidden_size": 16, "max_position_embeddings": 34, "type_vocab_size": 1, "layer_norm_eps": 1e-5,
                "pad_token_id": 1, "position_embedding_type": "absolute", "torch_dtype": "float32"},
        token_types="default",
        position_rule="the family's: " + "Data2VecTextForTextEmbeddings (RoBERTa's): data2vec_text.embeddings",
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=0,
        note="Data2VecTextForTextEmbeddings (RoBERTa's): data2vec_text.embeddings",
    ),
    dict(
        name="xmod", seed=69, build=build_encoder,
        config={"architectures": ["XmodForMaskedLM"], "model_type": "xmod", "vocab_size": 137,
                "hidden_size": 16, "max_position_embeddings": 34, "type_vocab_size": 1, "layer_norm_eps": 1e-5,
                "pad_token_id": 1, "languages": ["en_XX"], "torch_dtype": "float32"},
        token_types="default",
        position_rule="the family's: " + "XmodEmbeddings (RoBERTa's, roberta. prefix)",
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=0,
        note="XmodEmbeddings (RoBERTa's, roberta. prefix)",
    ),
    dict(
        name="xlm_roberta_xl", seed=70, build=build_encoder,
        config={"architectures": ["XLMRobertaXLForMaskedLM"], "model_type": "xlm-roberta-xl", "vocab_size": 138,
                "hidden_size": 16, "max_position_embeddings": 34, "type_vocab_size": 1,
                "pad_token_id": 1, "position_embedding_type": "absolute", "torch_dtype": "float32"},
        token_types="default",
        position_rule="the family's: " + "XLMRobertaXLEmbeddings: RoBERTa's positions, no LayerNorm (its layers normalize first)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="XLMRobertaXLEmbeddings: RoBERTa's positions, no LayerNorm (its layers normalize first)",
    ),
    dict(
        name="big_bird", seed=71, build=build_encoder,
        config={"architectures": ["BigBirdForMaskedLM"], "model_type": "big_bird", "vocab_size": 139,
                "hidden_size": 16, "max_position_embeddings": 32, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                "pad_token_id": 0, "rescale_embeddings": True, "attention_type": "block_sparse",
                "torch_dtype": "float32"},
        token_types="passed",
        position_rule="the family's: " + 'BigBirdEmbeddings: word * sqrt(hidden_size) (rescale_embeddings) + token type, += position, LayerNorm',
        layer_norm_eps=1e-12, embed_scale=4.0, position_offset=0,
        note='BigBirdEmbeddings: word * sqrt(hidden_size) (rescale_embeddings) + token type, += position, LayerNorm',
    ),
    dict(
        name="megatron_bert", seed=72, build=build_encoder,
        config={"architectures": ["MegatronBertForMaskedLM"], "model_type": "megatron-bert", "vocab_size": 140,
                "hidden_size": 16, "max_position_embeddings": 32, "type_vocab_size": 2,
                "pad_token_id": 0, "position_embedding_type": "absolute", "torch_dtype": "float32"},
        token_types="passed",
        position_rule="the family's: " + 'MegatronBertEmbeddings: word + token type, += position; no LayerNorm (moved into the layers)',
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note='MegatronBertEmbeddings: word + token type, += position; no LayerNorm (moved into the layers)',
    ),
    dict(
        name="ernie", seed=73, build=build_encoder,
        config={"architectures": ["ErnieForMaskedLM"], "model_type": "ernie", "vocab_size": 141,
                "hidden_size": 16, "max_position_embeddings": 32, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                "pad_token_id": 0, "use_task_id": True, "task_type_vocab_size": 3,
                "position_embedding_type": "absolute", "torch_dtype": "float32"},
        token_types="passed",
        position_rule="the family's: " + 'ErnieEmbeddings: word + token type, += position, += task_type_embeddings(0) (use_task_id), LayerNorm',
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note='ErnieEmbeddings: word + token type, += position, += task_type_embeddings(0) (use_task_id), LayerNorm',
    ),
    dict(
        name="splinter", seed=74, build=build_encoder,
        config={"architectures": ["SplinterForQuestionAnswering"], "model_type": "splinter", "vocab_size": 142,
                "hidden_size": 16, "max_position_embeddings": 32, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                "pad_token_id": 0, "torch_dtype": "float32"},
        token_types="passed",
        position_rule="the family's: " + "SplinterEmbeddings (BERT's)",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note="SplinterEmbeddings (BERT's)",
    ),
    dict(
        name="squeezebert", seed=75, build=build_encoder,
        config={"architectures": ["SqueezeBertForMaskedLM"], "model_type": "squeezebert", "vocab_size": 143,
                "hidden_size": 16, "embedding_size": 16, "max_position_embeddings": 32, "type_vocab_size": 2,
                "layer_norm_eps": 1e-12, "pad_token_id": 0, "torch_dtype": "float32"},
        token_types="passed",
        position_rule="the family's: " + 'SqueezeBertEmbeddings: word + position + token type, LayerNorm; transformer. prefix',
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note='SqueezeBertEmbeddings: word + position + token type, LayerNorm; transformer. prefix',
    ),
    dict(
        name="rembert", seed=76, build=build_encoder,
        config={"architectures": ["RemBertForMaskedLM"], "model_type": "rembert", "vocab_size": 144,
                "hidden_size": 16, "input_embedding_size": 8, "max_position_embeddings": 32, "type_vocab_size": 2,
                "layer_norm_eps": 1e-12, "pad_token_id": 0, "torch_dtype": "float32"},
        token_types="passed",
        position_rule="the family's: " + "RemBertEmbeddings at input_embedding_size, then the encoder's embedding_hidden_mapping_in",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note="RemBertEmbeddings at input_embedding_size, then the encoder's embedding_hidden_mapping_in",
    ),
    dict(
        name="bert_generation", seed=77, build=build_encoder,
        config={"architectures": ["BertGenerationEncoder"], "model_type": "bert-generation", "vocab_size": 145,
                "hidden_size": 16, "max_position_embeddings": 32, "layer_norm_eps": 1e-12,
                "pad_token_id": 0, "torch_dtype": "float32"},
        token_types=None,
        position_rule="the family's: " + 'BertGenerationEmbeddings: word + position, LayerNorm; no token types',
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note='BertGenerationEmbeddings: word + position, LayerNorm; no token types',
    ),
    dict(
        name="nystromformer", seed=78, build=build_encoder,
        config={"architectures": ["NystromformerForMaskedLM"], "model_type": "nystromformer", "vocab_size": 146,
                "hidden_size": 16, "max_position_embeddings": 32, "type_vocab_size": 2, "layer_norm_eps": 1e-5,
                "pad_token_id": 1, "torch_dtype": "float32"},
        token_types="passed",
        position_rule="the family's: " + 'NystromformerEmbeddings: rows arange(seq) + 2 of max_position_embeddings + 2',
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=2,
        note='NystromformerEmbeddings: rows arange(seq) + 2 of max_position_embeddings + 2',
    ),
    dict(
        name="yoso", seed=79, build=build_encoder,
        config={"architectures": ["YosoForMaskedLM"], "model_type": "yoso", "vocab_size": 147,
                "hidden_size": 16, "max_position_embeddings": 32, "type_vocab_size": 1, "layer_norm_eps": 1e-12,
                "pad_token_id": 1, "torch_dtype": "float32"},
        token_types="default",
        position_rule="the family's: " + "YosoEmbeddings (Nystromformer's): rows arange(seq) + 2",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=2,
        note="YosoEmbeddings (Nystromformer's): rows arange(seq) + 2",
    ),
    dict(
        name="mra", seed=80, build=build_encoder,
        config={"architectures": ["MraForMaskedLM"], "model_type": "mra", "vocab_size": 148,
                "hidden_size": 16, "max_position_embeddings": 32, "type_vocab_size": 1, "layer_norm_eps": 1e-5,
                "pad_token_id": 1, "torch_dtype": "float32"},
        token_types="default",
        position_rule="the family's: " + 'MraEmbeddings: word + position + token type, rows arange(seq) + 2',
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=2,
        note='MraEmbeddings: word + position + token type, rows arange(seq) + 2',
    ),
    dict(
        name="roformer", seed=81, build=build_encoder,
        config={"architectures": ["RoFormerForMaskedLM"], "model_type": "roformer", "vocab_size": 149,
                "hidden_size": 16, "embedding_size": 8, "num_attention_heads": 2, "max_position_embeddings": 32,
                "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0, "torch_dtype": "float32"},
        token_types="passed",
        position_rule="the family's: " + 'RoFormerEmbeddings: word + token type, LayerNorm at embedding_size; embeddings_project; rotary in attention',
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note='RoFormerEmbeddings: word + token type, LayerNorm at embedding_size; embeddings_project; rotary in attention',
    ),
    dict(
        name="nomic_bert", seed=96, build=build_nomic_bert,
        # nomic-embed-text-v1.5's keys, scaled down (its vocabulary 30522 padded to 64: 30528).
        config={"architectures": ["NomicBertModel"], "model_type": "nomic_bert", "vocab_size": 120,
                "pad_vocab_size_multiple": 64, "n_embd": 16, "n_head": 2, "n_layer": 2, "n_positions": 64,
                "max_trained_positions": 32, "type_vocab_size": 2, "layer_norm_epsilon": 1e-12,
                "rotary_emb_fraction": 1.0, "rotary_emb_base": 1000, "rotary_emb_interleaved": False,
                "rotary_emb_scale_base": None, "rotary_scaling_factor": None, "prenorm": False,
                "activation_function": "swiglu", "torch_dtype": "float32"},
        token_types="passed",
        position_rule="none added: rotary in attention, positions 0 .. seq - 1 of the padded batch",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note="NomicBertModel: word + token type, emb_ln; vocabulary padded to 64 rows (128); rotary base 1000, halves",
        rotary="default",
    ),
    dict(
        name="llava", seed=106, build=build_lookup_decoder,
        # llava-hf/llava-1.5-7b-hf's text_config: a diff against LlamaConfig (no hidden_size in
        # the real one, 4096; given here to keep the fixture small; no rope_theta: 10000).
        config={"architectures": ["LlavaForConditionalGeneration"], "model_type": "llava",
                "text_config": {"model_type": "llama", "vocab_size": 151, "hidden_size": 16,
                                "num_attention_heads": 2, "max_position_embeddings": 64},
                "vision_config": {"model_type": "clip_vision_model", "hidden_size": 8},
                "image_token_index": 150, "pad_token_id": 149, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="LlavaForConditionalGeneration as saved (language_model.model.embed_tokens); LlamaModel's stage "
             "from text_config over LlamaConfig's defaults",
        rotary="default",
    ),
    dict(
        name="llava_next", seed=107, build=build_lookup_decoder,
        # llava-v1.6-mistral-7b-hf's: a Mistral language model.
        config={"architectures": ["LlavaNextForConditionalGeneration"], "model_type": "llava_next",
                "text_config": {"model_type": "mistral", "vocab_size": 153, "hidden_size": 16,
                                "num_attention_heads": 2, "num_key_value_heads": 1,
                                "max_position_embeddings": 64, "rope_theta": 1000000.0},
                "image_token_index": 152, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="LlavaNextForConditionalGeneration; MistralModel's stage from text_config",
        rotary="default",
    ),
    dict(
        name="llava_onevision", seed=108, build=build_lookup_decoder,
        # text_config without model_type: LlavaOnevisionConfig's Qwen2 (max_position_embeddings
        # 32768 by Qwen2Config's default); its table as a raw state_dict of 4.52+ names it.
        config={"architectures": ["LlavaOnevisionForConditionalGeneration"], "model_type": "llava_onevision",
                "text_config": {"vocab_size": 155, "hidden_size": 16, "num_attention_heads": 2,
                                "rope_theta": 1000000.0},
                "image_token_index": 154, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="LlavaOnevisionForConditionalGeneration (model.language_model.embed_tokens); Qwen2Model's stage "
             "from text_config over Qwen2Config's defaults",
        rotary="default",
    ),
    dict(
        name="granite_vision", seed=119, build=build_lookup_decoder,
        # ibm-granite/granite-vision-3.2-2b's: LLaVA-NeXT over a Granite language model, whose
        # forward multiplies the token rows by embedding_multiplier (12.0 there).
        config={"architectures": ["LlavaNextForConditionalGeneration"], "model_type": "llava_next",
                "text_config": {"model_type": "granite", "vocab_size": 181, "hidden_size": 16,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 64,
                                "rope_theta": 300000.0, "embedding_multiplier": 12.0, "pad_token_id": 0},
                "image_token_index": 180, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=12.0, position_offset=0,
        note="LlavaNextForConditionalGeneration over GraniteModel: embed_tokens times embedding_multiplier",
        rotary="default",
    ),
    dict(
        name="vipllava", seed=110, build=build_lookup_decoder,
        # llava-hf/vip-llava-7b-hf's: a Llama language model (text_config a diff against LlamaConfig).
        config={"architectures": ["VipLlavaForConditionalGeneration"], "model_type": "vipllava",
                "text_config": {"model_type": "llama", "vocab_size": 159, "hidden_size": 16,
                                "num_attention_heads": 2, "max_position_embeddings": 64, "pad_token_id": 0},
                "image_token_index": 158, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="VipLlavaForConditionalGeneration as saved (language_model.model.embed_tokens); LlamaModel's stage",
        rotary="default",
    ),
    dict(
        name="idefics3", seed=111, build=build_lookup_decoder,
        # HuggingFaceTB/SmolVLM-256M-Instruct's shape of text_config, scaled down: a Llama with
        # head_dim, rope_theta 100000 and pad_token_id 2.
        config={"architectures": ["Idefics3ForConditionalGeneration"], "model_type": "idefics3",
                "text_config": {"model_type": "llama", "vocab_size": 163, "hidden_size": 16,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
                                "max_position_embeddings": 64, "rope_theta": 100000.0, "pad_token_id": 2},
                "image_token_id": 162, "scale_factor": 4, "pad_token_id": 128002, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Idefics3ForConditionalGeneration (model.text_model.embed_tokens); LlamaModel's stage from "
             "text_config (its pad_token_id, not the top-level one)",
        rotary="default",
    ),
    dict(
        name="smolvlm", seed=112, build=build_lookup_decoder,
        # SmolVLM 2's model_type; text_config without model_type (SmolVLMConfig's llama); the
        # bare SmolVLMModel's names (text_model.embed_tokens).
        config={"architectures": ["SmolVLMModel"], "model_type": "smolvlm",
                "text_config": {"vocab_size": 165, "hidden_size": 16, "num_attention_heads": 2,
                                "max_position_embeddings": 64, "rope_theta": 100000.0},
                "image_token_id": 164, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="SmolVLMModel (text_model.embed_tokens); LlamaModel's stage from text_config over LlamaConfig's "
             "defaults",
        rotary="default",
    ),
    dict(
        name="internvl", seed=113, build=build_lookup_decoder,
        # OpenGVLab/InternVL3_5-1B-HF's shape: a Qwen3 language model.
        config={"architectures": ["InternVLForConditionalGeneration"], "model_type": "internvl",
                "text_config": {"model_type": "qwen3", "vocab_size": 167, "hidden_size": 16,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
                                "max_position_embeddings": 64, "rope_theta": 1000000.0},
                "image_token_id": 166, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="InternVLForConditionalGeneration as saved (language_model.model.embed_tokens); Qwen3Model's stage",
        rotary="default",
    ),
    dict(
        name="got_ocr2", seed=114, build=build_lookup_decoder,
        # text_config without model_type or max_position_embeddings: GotOcr2Config's Qwen2, with
        # Qwen2Config's 32768; a raw state_dict of 4.52+ (model.language_model).
        config={"architectures": ["GotOcr2ForConditionalGeneration"], "model_type": "got_ocr2",
                "text_config": {"vocab_size": 169, "hidden_size": 16, "num_attention_heads": 2,
                                "rope_theta": 1000000.0},
                "image_token_index": 168, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="GotOcr2ForConditionalGeneration (model.language_model.embed_tokens); Qwen2Model's stage",
        rotary="default",
    ),
    dict(
        name="aya_vision", seed=118, build=build_lookup_decoder,
        # CohereLabs/aya-vision-8b's shape: a Cohere 2 language model (interleaved pairs, RoPE in
        # its sliding-window layers alone); a head_dim Cohere2Config overrides; pad_token_id 0.
        config={"architectures": ["AyaVisionForConditionalGeneration"], "model_type": "aya_vision",
                "text_config": {"model_type": "cohere2", "vocab_size": 179, "hidden_size": 16,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 99,
                                "max_position_embeddings": 64, "num_hidden_layers": 4, "rope_theta": 50000.0},
                "image_token_index": 178, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention (its sliding-window layers)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="AyaVisionForConditionalGeneration as saved (language_model.model.embed_tokens); Cohere2Model's stage "
             "over Cohere2Config's defaults",
        rotary="default",
    ),
    dict(
        name="qwen2_audio", seed=115, build=build_lookup_decoder,
        # Qwen/Qwen2-Audio-7B's text_config, scaled down (no hidden_size there: Qwen2Config's 4096).
        config={"architectures": ["Qwen2AudioForConditionalGeneration"], "model_type": "qwen2_audio",
                "text_config": {"model_type": "qwen2", "vocab_size": 171, "hidden_size": 16,
                                "num_attention_heads": 2, "max_position_embeddings": 64, "rms_norm_eps": 1e-05},
                "audio_config": {"model_type": "qwen2_audio_encoder", "d_model": 8},
                "audio_token_index": 170, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Qwen2AudioForConditionalGeneration as saved (language_model.model.embed_tokens); Qwen2Model's "
             "stage",
        rotary="default",
    ),
    dict(
        name="voxtral", seed=116, build=build_lookup_decoder,
        # mistralai/Voxtral-Mini-3B-2507's text_config leaves rope_theta out: VoxtralConfig's 1e8,
        # not LlamaConfig's 10000.
        config={"architectures": ["VoxtralForConditionalGeneration"], "model_type": "voxtral",
                "text_config": {"model_type": "llama", "vocab_size": 173, "hidden_size": 16,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
                                "max_position_embeddings": 64},
                "audio_token_id": 172, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="VoxtralForConditionalGeneration as saved (language_model.model.embed_tokens); LlamaModel's stage "
             "from text_config over VoxtralConfig's defaults",
        rotary="default",
    ),
    dict(
        name="paligemma", seed=109, build=build_paligemma,
        # google/paligemma-3b-pt-224's text_config, scaled down: no head_dim (GemmaConfig's 256
        # there; 8 given here), no rope_theta nor max_position_embeddings (10000, 8192); hidden
        # 12, so that the normalizer sqrt(12) is rounded.
        config={"architectures": ["PaliGemmaForConditionalGeneration"], "model_type": "paligemma",
                "text_config": {"model_type": "gemma", "vocab_size": 157, "hidden_size": 12,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
                                "num_hidden_layers": 2},
                "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 8},
                "image_token_index": 156, "projection_dim": 12, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention, positions from 1 (cache_position + 1)",
        layer_norm_eps=0.0, embed_scale=math.sqrt(12), position_offset=0,
        note="PaliGemma: GemmaModel's stage from text_config over GemmaConfig's defaults, times "
             "float32(sqrt(hidden_size))",
        rotary="default",
    ),
    dict(
        name="clip", seed=98, build=build_clip_text,
        # openai/clip-vit-base-patch32's layout: CLIPModel, the text tower's keys under text_config
        # (max_position_embeddings left out: CLIPTextConfig's 77).
        config={"architectures": ["CLIPModel"], "model_type": "clip", "projection_dim": 16,
                "text_config": {"vocab_size": 131, "hidden_size": 16, "num_attention_heads": 2,
                                "num_hidden_layers": 2, "pad_token_id": 1, "bos_token_id": 129,
                                "eos_token_id": 130},
                "vision_config": {"hidden_size": 24, "patch_size": 32}, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: position_ids[:, :seq] of the arange buffer, whatever the mask or padding",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="CLIPTextEmbeddings: token_embedding + position_embedding; no scale, no LayerNorm, "
             "no padding_idx; 77 rows by CLIPTextConfig's default",
    ),
    dict(
        name="clip_text_model", seed=99, build=build_clip_text,
        # A Stable Diffusion text_encoder/ folder: CLIPTextModel, its keys at the top level.
        config={"architectures": ["CLIPTextModel"], "model_type": "clip_text_model", "vocab_size": 133,
                "hidden_size": 16, "max_position_embeddings": 32, "num_attention_heads": 2,
                "num_hidden_layers": 2, "pad_token_id": 1, "bos_token_id": 131, "eos_token_id": 132,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="index, as clip",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="CLIPTextModel: text_model.embeddings, as CLIPModel's",
    ),
    dict(
        name="siglip", seed=100, build=build_clip_text,
        config={"architectures": ["SiglipModel"], "model_type": "siglip",
                "text_config": {"vocab_size": 137, "hidden_size": 16, "max_position_embeddings": 24,
                                "num_attention_heads": 2, "num_hidden_layers": 2, "pad_token_id": 1},
                "vision_config": {"hidden_size": 24, "patch_size": 16}, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index, as clip",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="SiglipTextEmbeddings (CLIP's module): token + position, nothing more",
    ),
    dict(
        name="siglip2_text_model", seed=101, build=build_clip_text,
        config={"architectures": ["Siglip2TextModel"], "model_type": "siglip2_text_model", "vocab_size": 139,
                "hidden_size": 16, "max_position_embeddings": 16, "num_attention_heads": 2,
                "num_hidden_layers": 2, "pad_token_id": 0, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index, as clip",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Siglip2TextEmbeddings (CLIP's module) at the top level of its config",
    ),
    dict(
        name="whisper", seed=102, build=build_whisper,
        # openai/whisper-tiny's keys, scaled down (its pad_token_id 50257, the last but one row here).
        config={"architectures": ["WhisperForConditionalGeneration"], "model_type": "whisper", "vocab_size": 141,
                "d_model": 16, "max_target_positions": 32, "max_source_positions": 30, "decoder_layers": 2,
                "encoder_layers": 2, "decoder_attention_heads": 2, "scale_embedding": False,
                "pad_token_id": 139, "bos_token_id": 138, "eos_token_id": 139,
                "decoder_start_token_id": 140, "num_mel_bins": 8, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: arange(past, past + seq) (cache_position), whatever the mask or padding",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="WhisperDecoder: embed_tokens (padding_idx pad_token_id; embed_scale never applied) + "
             "embed_positions; no LayerNorm",
    ),
    dict(
        name="mamba", seed=103, build=build_mamba,
        config={"architectures": ["MambaForCausalLM"], "model_type": "mamba", "vocab_size": 143,
                "hidden_size": 16, "state_size": 4, "num_hidden_layers": 2, "pad_token_id": 0,
                "bos_token_id": 0, "eos_token_id": 0, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="MambaModel.embeddings: the table alone (backbone.embeddings.weight)",
    ),
    dict(
        name="mamba2", seed=104, build=build_mamba,
        config={"architectures": ["Mamba2ForCausalLM"], "model_type": "mamba2", "vocab_size": 145,
                "hidden_size": 16, "num_heads": 2, "head_dim": 8, "num_hidden_layers": 2, "pad_token_id": 1,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Mamba2Model.embeddings under its older name backbone.embedding.weight (its load hook renames it)",
    ),
    dict(
        name="falcon_mamba", seed=105, build=build_mamba,
        config={"architectures": ["FalconMambaModel"], "model_type": "falcon_mamba", "vocab_size": 147,
                "hidden_size": 16, "state_size": 4, "num_hidden_layers": 2, "pad_token_id": 0,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="FalconMambaModel saved alone: embeddings.weight",
    ),
    dict(
        name="esm", seed=82, build=build_esm,
        # ESM-2's config as convert_esm.py writes it (esm2_t6_8M_UR50D's keys), scaled down.
        config={"architectures": ["EsmForMaskedLM"], "model_type": "esm", "vocab_size": 33, "hidden_size": 16,
                "num_attention_heads": 2, "num_hidden_layers": 2, "max_position_embeddings": 40,
                "position_embedding_type": "rotary", "emb_layer_norm_before": False, "token_dropout": True,
                "mask_token_id": 32, "pad_token_id": 1, "layer_norm_eps": 1e-5, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none added: rotary in attention, positions 0 .. seq - 1",
        layer_norm_eps=0.0, embed_scale=0.88, position_offset=0,
        note="EsmEmbeddings: token dropout in every forward (mask rows zero, x (1 - 0.12) / (1 - mask share)), "
             "times the attention mask; the inv_freq buffer rounded through float16",
        mask_tokens=[2, 1, 0],
    ),
    dict(
        name="esm1b", seed=83, build=build_esm,
        # ESM-1b's: absolute positions from the ids, emb_layer_norm_before.
        config={"architectures": ["EsmForMaskedLM"], "model_type": "esm", "vocab_size": 33, "hidden_size": 16,
                "num_attention_heads": 2, "num_hidden_layers": 2, "max_position_embeddings": 40,
                "position_embedding_type": "absolute", "emb_layer_norm_before": True, "token_dropout": True,
                "mask_token_id": 32, "pad_token_id": 1, "layer_norm_eps": 1e-5, "torch_dtype": "float32"},
        token_types=None,
        position_rule="ids: RoBERTa's create_position_ids_from_input_ids (from row pad_token_id + 1)",
        layer_norm_eps=1e-5, embed_scale=0.88, position_offset=0,
        note="EsmEmbeddings: token dropout, + position, layer_norm, times the attention mask",
        mask_tokens=[1, 2, 1],
    ),
    dict(
        name="granitemoehybrid", seed=120, build=build_lookup_decoder,
        # ibm-granite/granite-4.0-micro's kind: attention layers with RoPE ("rope"), multiplier 12.
        config={"architectures": ["GraniteMoeHybridForCausalLM"], "model_type": "granitemoehybrid",
                "vocab_size": 190, "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "num_hidden_layers": 4,
                "layer_types": ["mamba", "attention", "mamba", "attention"], "position_embedding_type": "rope",
                "embedding_multiplier": 12.0, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in its attention layers (position_embedding_type rope)",
        layer_norm_eps=0.0, embed_scale=12.0, position_offset=0,
        note="GraniteMoeHybridModel: embed_tokens(ids) * embedding_multiplier; RoPE only with "
             "position_embedding_type 'rope', only in the attention layers",
        rotary="default",
    ),
    dict(
        name="falcon_h1", seed=121, build=build_lookup_decoder,
        # tiiuae/Falcon-H1-0.5B's kind: theta 1e11, head_dim 4 where hidden / heads is 8,
        # embedding_multiplier sqrt(32) (rounded to float32 by torch).
        config={"architectures": ["FalconH1ForCausalLM"], "model_type": "falcon_h1", "vocab_size": 191,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4,
                "max_position_embeddings": 64, "num_hidden_layers": 2, "rope_theta": 100000000000.0,
                "embedding_multiplier": 5.656854249492381, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=5.656854249492381, position_offset=0,
        note="FalconH1Model: embed_tokens(ids) * embedding_multiplier (a Python float); every layer's attention "
             "branch rotates",
        rotary="default",
    ),
    dict(
        name="bamba", seed=122, build=build_lookup_decoder,
        config={"architectures": ["BambaForCausalLM"], "model_type": "bamba", "vocab_size": 192,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "num_hidden_layers": 4, "attn_layer_indices": [1, 3],
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in its attention layers",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="BambaModel: embed_tokens; BambaConfig's theta 10000 and partial_rotary_factor 0.5; RoPE in the "
             "layers attn_layer_indices lists",
        rotary="default",
    ),
    dict(
        name="jamba", seed=123, build=build_lookup_decoder,
        config={"architectures": ["JambaForCausalLM"], "model_type": "jamba", "vocab_size": 193,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1, "num_hidden_layers": 8,
                "attn_layer_period": 8, "attn_layer_offset": 4, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no positions (its attention layers have no RoPE)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="JambaModel: embed_tokens (padding_idx 0 by default); no positional encoding anywhere",
    ),
    dict(
        name="zamba", seed=124, build=build_lookup_decoder,
        config={"architectures": ["ZambaForCausalLM"], "model_type": "zamba", "vocab_size": 194,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 2, "num_hidden_layers": 6,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: no positions",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="ZambaModel: embed_tokens (padding_idx 0 by default); no positional encoding anywhere",
    ),
    dict(
        name="zamba2", seed=125, build=build_lookup_decoder,
        # Zyphra/Zamba2-7B's keys: use_mem_rope; use_long_context too here, whose theta rescale
        # and 16384 positions Zamba2Config applies.
        config={"architectures": ["Zamba2ForCausalLM"], "model_type": "zamba2", "vocab_size": 195,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 2, "num_hidden_layers": 4,
                "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid"], "use_mem_rope": True,
                "use_long_context": True, "max_position_embeddings": 64, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in the shared blocks of its hybrid layers",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Zamba2Model: embed_tokens; RoPE (use_mem_rope) over heads of 2 * hidden / heads in the hybrid "
             "layers; use_long_context: 16384 positions, theta * 8 ** (d / (d - 2))",
        rotary="default",
    ),
    dict(
        name="qwen3_next", seed=126, build=build_lookup_decoder,
        # Qwen/Qwen3-Next-80B-A3B's kind: a quarter of each head rotated, theta 1e7, a full-attention
        # layer every 4th (full_attention_interval's default).
        config={"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "vocab_size": 196,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16,
                "max_position_embeddings": 64, "num_hidden_layers": 8, "rope_theta": 10000000.0,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in its full-attention layers",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Qwen3NextModel: embed_tokens; partial_rotary_factor 0.25 by default; RoPE in the full_attention "
             "layers alone (every full_attention_interval-th)",
        rotary="default",
    ),
    dict(
        name="ernie4_5_moe", seed=127, build=build_lookup_decoder,
        config={"architectures": ["Ernie4_5_MoeForCausalLM"], "model_type": "ernie4_5_moe", "vocab_size": 197,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Ernie4_5_MoeModel: embed_tokens (padding_idx 0 by default); interleaved pairs; theta 500000; "
             "head_dim hidden / heads",
        rotary="default",
    ),
    dict(
        name="dots1", seed=128, build=build_lookup_decoder,
        config={"architectures": ["Dots1ForCausalLM"], "model_type": "dots1", "vocab_size": 198,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 2,
                "max_position_embeddings": 64, "rope_theta": 10000000.0, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Dots1Model: embed_tokens; RoPE in every layer, sliding or not",
        rotary="default",
    ),
    dict(
        name="phimoe", seed=129, build=build_lookup_decoder,
        # microsoft/Phi-3.5-MoE-instruct's kind: LongRoPE with equal short and long mscale.
        config={"architectures": ["PhimoeForCausalLM"], "model_type": "phimoe", "vocab_size": 199,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 256, "original_max_position_embeddings": 64, "rope_theta": 10000.0,
                "rope_scaling": {"type": "longrope", "short_factor": [1.0, 1.25, 1.5, 2.0],
                                 "long_factor": [1.5, 2.5, 4.0, 8.0], "short_mscale": 1.243163121016122,
                                 "long_mscale": 1.243163121016122, "original_max_position_embeddings": 64},
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="PhimoeModel: embed_tokens; LongRoPE whose cos and sin are multiplied by short_mscale or "
             "long_mscale",
        rotary="longrope",
    ),
    dict(
        name="minimax", seed=130, build=build_lookup_decoder,
        # rotary_dim (MiniMax's own key) is not read by Hugging Face's port: the whole head rotates.
        config={"architectures": ["MiniMaxForCausalLM"], "model_type": "minimax", "vocab_size": 200,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
                "rotary_dim": 4, "max_position_embeddings": 64, "num_hidden_layers": 4,
                "rope_theta": 10000000.0, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in its softmax-attention layers",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="MiniMaxModel: embed_tokens; RoPE over the whole head in the full_attention layers (even ones by "
             "default), none in the lightning-attention layers",
        rotary="default",
    ),
    dict(
        name="vaultgemma", seed=131, build=build_gemma,
        config={"architectures": ["VaultGemmaForCausalLM"], "model_type": "vaultgemma", "vocab_size": 201,
                "hidden_size": 24, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16,
                "max_position_embeddings": 64, "num_hidden_layers": 2, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=24**0.5, position_offset=0,
        note="VaultGemmaModel: embed_tokens(ids) * torch.tensor(hidden_size**0.5, dtype=float32); one theta in "
             "every layer",
        rotary="default",
    ),
    dict(
        name="lfm2_vl", seed=132, build=build_lookup_decoder,
        config={"architectures": ["Lfm2VlForConditionalGeneration"], "model_type": "lfm2_vl",
                "text_config": {"model_type": "lfm2", "vocab_size": 202, "hidden_size": 16,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 64,
                                "num_hidden_layers": 3, "full_attn_idxs": [1]},
                "image_token_id": 201, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in its full_attention layers",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Lfm2VlForConditionalGeneration (model.language_model.embed_tokens); Lfm2Model's stage",
        rotary="default",
    ),
    dict(
        name="cohere2_vision", seed=133, build=build_lookup_decoder,
        config={"architectures": ["Cohere2VisionForConditionalGeneration"], "model_type": "cohere2_vision",
                "text_config": {"model_type": "cohere2", "vocab_size": 203, "hidden_size": 16,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 64,
                                "num_hidden_layers": 4, "rope_theta": 50000.0},
                "image_token_id": 202, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention (its sliding-window layers)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Cohere2VisionForConditionalGeneration (model.language_model.embed_tokens); Cohere2Model's stage",
        rotary="default",
    ),
    dict(
        name="perception_lm", seed=134, build=build_lookup_decoder,
        config={"architectures": ["PerceptionLMForConditionalGeneration"], "model_type": "perception_lm",
                "text_config": {"model_type": "llama", "vocab_size": 204, "hidden_size": 16,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 64,
                                "rope_theta": 500000.0},
                "image_token_id": 202, "video_token_id": 203, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="PerceptionLMForConditionalGeneration (model.language_model.embed_tokens); LlamaModel's stage",
        rotary="default",
    ),
    dict(
        name="ovis2", seed=135, build=build_lookup_decoder,
        config={"architectures": ["Ovis2ForConditionalGeneration"], "model_type": "ovis2", "vocab_size": 151643,
                "hidden_size": 16,
                "text_config": {"model_type": "qwen2", "vocab_size": 205, "hidden_size": 16,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 64,
                                "rope_theta": 1000000.0},
                "image_token_id": 204, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Ovis2ForConditionalGeneration (model.language_model.embed_tokens); Qwen2Model's stage from "
             "Qwen2Config(**text_config)",
        rotary="default",
    ),
    dict(
        name="chameleon", seed=136, build=build_lookup_decoder,
        config={"architectures": ["ChameleonForConditionalGeneration"], "model_type": "chameleon",
                "vocab_size": 206, "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 2,
                "max_position_embeddings": 64, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="ChameleonModel: embed_tokens; the image tokens' rows too",
        rotary="default",
    ),
    dict(
        name="emu3", seed=137, build=build_lookup_decoder,
        # BAAI/Emu3-Chat-hf's layout: text_config (Emu3TextConfig), the text model at text_model.model.
        config={"architectures": ["Emu3ForConditionalGeneration"], "model_type": "emu3",
                "text_config": {"model_type": "emu3_text_model", "vocab_size": 207, "hidden_size": 16,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 64,
                                "pad_token_id": 206},
                "vq_config": {"embed_dim": 4}, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Emu3 as saved (text_model.model.embed_tokens); head_dim hidden_size / num_attention_heads where "
             "the config gives none (as here)",
        rotary="default",
    ),
    dict(
        name="janus", seed=138, build=build_lookup_decoder,
        config={"architectures": ["JanusForConditionalGeneration"], "model_type": "janus",
                "text_config": {"model_type": "llama", "vocab_size": 208, "hidden_size": 16,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 64},
                "image_token_id": 207, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="JanusForConditionalGeneration (model.language_model.embed_tokens); LlamaModel's stage",
        rotary="default",
    ),
    dict(
        name="fuyu", seed=139, build=build_lookup_decoder,
        # adept/fuyu-8b's layout: no text_config (FuyuConfig builds Persimmon's from the top level).
        config={"architectures": ["FuyuForCausalLM"], "model_type": "fuyu", "vocab_size": 209, "hidden_size": 16,
                "num_attention_heads": 2, "max_position_embeddings": 64, "num_hidden_layers": 2,
                "image_token_id": 208, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="FuyuForCausalLM as saved (language_model.model.embed_tokens); Persimmon's stage: half of each "
             "head, theta 25000",
        rotary="default",
    ),
    dict(
        name="jetmoe", seed=140, build=build_lookup_decoder,
        config={"architectures": ["JetMoeForCausalLM"], "model_type": "jetmoe", "vocab_size": 210,
                "hidden_size": 16, "num_key_value_heads": 2, "num_experts_per_tok": 2, "kv_channels": 4,
                "max_position_embeddings": 64, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="JetMoeModel: embed_tokens; RoPE over kv_channels (its head_dim)",
        rotary="default",
    ),
    dict(
        name="diffllama", seed=141, build=build_lookup_decoder,
        config={"architectures": ["DiffLlamaForCausalLM"], "model_type": "diffllama", "vocab_size": 211,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="DiffLlamaModel: embed_tokens, as Llama",
        rotary="default",
    ),
    dict(
        name="doge", seed=142, build=build_lookup_decoder,
        config={"architectures": ["DogeForCausalLM"], "model_type": "doge", "vocab_size": 212,
                "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
                "max_position_embeddings": 64, "rope_theta": 50000.0, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="DogeModel: embed_tokens, as Llama",
        rotary="default",
    ),
    dict(
        name="recurrent_gemma", seed=143, build=build_recurrent_gemma,
        # google/recurrentgemma-2b's keys (no max_position_embeddings), scaled down: hidden 24, so
        # that sqrt(24) = 4.899 is 4.90625 in bfloat16.
        config={"architectures": ["RecurrentGemmaForCausalLM"], "model_type": "recurrent_gemma", "vocab_size": 213,
                "hidden_size": 24, "num_attention_heads": 2, "num_hidden_layers": 4, "attention_window_size": 32,
                "block_types": ["recurrent", "recurrent", "attention"], "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary embeddings in its attention blocks",
        layer_norm_eps=0.0, embed_scale=float(torch.tensor(24 ** 0.5, dtype=torch.bfloat16).float()),
        position_offset=0,
        note="RecurrentGemmaModel: embed_tokens(ids) * torch.tensor(hidden_size**0.5, dtype=bfloat16); RoPE on "
             "half of each head in the attention blocks",
        rotary="default",
    ),
    dict(
        name="plbart", seed=144, build=build_bart,
        # uclanlp/plbart-base's keys, scaled down; PLBartConfig's scale_embedding true by default.
        config={"architectures": ["PLBartForConditionalGeneration"], "model_type": "plbart",
                "vocab_size": 214, "d_model": 12, "max_position_embeddings": 32, "pad_token_id": 1,
                "bos_token_id": 0, "eos_token_id": 2, "dropout": 0.1, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index + 2, as bart",
        layer_norm_eps=1e-5, embed_scale=math.sqrt(12), position_offset=2,
        note="PLBartScaledWordEmbedding and PLBartLearnedPositionalEmbedding are BART's (modular_plbart); "
             "scale_embedding true by PLBartConfig's default",
    ),
    dict(
        name="mvp", seed=145, build=build_bart,
        config={"architectures": ["MvpForConditionalGeneration"], "model_type": "mvp",
                "vocab_size": 215, "d_model": 12, "max_position_embeddings": 32, "pad_token_id": 1,
                "bos_token_id": 0, "eos_token_id": 2, "dropout": 0.1, "use_prompt": False,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="index + 2, as bart",
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=2,
        note="MvpEncoder: BART's stage (scale_embedding false by default); its prompts act in attention",
    ),
    dict(
        name="nllb_moe", seed=146, build=build_m2m_100,
        config={"architectures": ["NllbMoeForConditionalGeneration"], "model_type": "nllb-moe",
                "vocab_size": 216, "d_model": 12, "max_position_embeddings": 32,
                "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "dropout": 0.1, "torch_dtype": "float32"},
        token_types=None,
        position_rule="ids, as m2m_100",
        layer_norm_eps=0.0, embed_scale=math.sqrt(12), position_offset=0,
        note="NllbMoeScaledWordEmbedding and NllbMoeSinusoidalPositionalEmbedding are M2M100's "
             "(scale_embedding true by NllbMoeConfig's default)",
    ),
    dict(
        name="blenderbot", seed=147, build=build_bart_offset0,
        # facebook/blenderbot-400M-distill's keys (scale_embedding true there), scaled down.
        config={"architectures": ["BlenderbotForConditionalGeneration"], "model_type": "blenderbot",
                "vocab_size": 217, "d_model": 12, "max_position_embeddings": 32, "scale_embedding": True,
                "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "dropout": 0.1, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: row = arange(0, seq) (BlenderbotLearnedPositionalEmbedding, no offset)",
        layer_norm_eps=0.0, embed_scale=math.sqrt(12), position_offset=0,
        note="BlenderbotEncoder: shared lookup x sqrt(d_model) + positions from row 0, dropout; no input LayerNorm",
    ),
    dict(
        name="bigbird_pegasus", seed=148, build=build_bart_offset0,
        config={"architectures": ["BigBirdPegasusForConditionalGeneration"], "model_type": "bigbird_pegasus",
                "vocab_size": 218, "d_model": 12, "max_position_embeddings": 32, "pad_token_id": 0,
                "bos_token_id": 2, "eos_token_id": 1, "dropout": 0.1, "attention_type": "original_full",
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: row = arange(0, seq), no offset",
        layer_norm_eps=0.0, embed_scale=math.sqrt(12), position_offset=0,
        note="BigBirdPegasusEncoder: shared lookup x sqrt(d_model) (scale_embedding true by default) + learned "
             "positions from row 0; its layernorm_embedding is the last layer's",
    ),
    dict(
        name="led", seed=149, build=build_bart_offset0,
        config={"architectures": ["LEDForConditionalGeneration"], "model_type": "led", "vocab_size": 219,
                "d_model": 12, "max_encoder_position_embeddings": 40, "max_decoder_position_embeddings": 24,
                "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "dropout": 0.1, "attention_window": [4],
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: row = arange(0, seq), no offset (max_encoder_position_embeddings rows)",
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=0,
        note="LEDEncoder: led.shared lookup (no scale) + positions from row 0, layernorm_embedding (eps 1e-5)",
    ),
    dict(
        name="biogpt", seed=150, build=build_biogpt,
        config={"architectures": ["BioGptForCausalLM"], "model_type": "biogpt", "vocab_size": 220,
                "hidden_size": 12, "max_position_embeddings": 32, "pad_token_id": 1, "bos_token_id": 0,
                "eos_token_id": 2, "torch_dtype": "float32"},
        token_types=None,
        position_rule="mask: row = (cumsum(mask) * mask - 1) + 2, as opt",
        layer_norm_eps=0.0, embed_scale=math.sqrt(12), position_offset=2,
        note="BioGptModel: biogpt.embed_tokens x sqrt(hidden_size) (scale_embedding true by default) + OPT's "
             "positions",
    ),
    dict(
        name="xglm", seed=151, build=build_xglm,
        config={"architectures": ["XGLMForCausalLM"], "model_type": "xglm", "vocab_size": 221, "d_model": 12,
                "max_position_embeddings": 32, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="index + 2 of M2M100's sinusoid table (not in the checkpoint), whatever the padding",
        layer_norm_eps=0.0, embed_scale=math.sqrt(12), position_offset=2,
        note="XGLMModel: embed_tokens x sqrt(d_model) + XGLMSinusoidalPositionalEmbedding (M2M100's float32 "
             "table, row pad_token_id zero) at arange + 2",
    ),
    dict(
        name="roberta_prelayernorm", seed=152, build=build_encoder,
        config={"architectures": ["RobertaPreLayerNormForMaskedLM"], "model_type": "roberta-prelayernorm",
                "vocab_size": 222, "hidden_size": 16, "num_attention_heads": 2, "max_position_embeddings": 34,
                "type_vocab_size": 1, "layer_norm_eps": 1e-05, "pad_token_id": 1, "torch_dtype": "float32"},
        token_types=None,
        position_rule="ids: RoBERTa's create_position_ids_from_input_ids",
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=0,
        note="RobertaPreLayerNormEmbeddings: RoBERTa's (word + token type + position, LayerNorm)",
    ),
    dict(
        name="ibert", seed=153, build=build_encoder,
        config={"architectures": ["IBertForMaskedLM"], "model_type": "ibert", "vocab_size": 223,
                "hidden_size": 16, "num_attention_heads": 2, "max_position_embeddings": 34, "type_vocab_size": 1,
                "layer_norm_eps": 1e-05, "pad_token_id": 1, "quant_mode": False, "torch_dtype": "float32"},
        token_types=None,
        position_rule="ids: RoBERTa's create_position_ids_from_input_ids",
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=0,
        note="IBertEmbeddings with quant_mode false: word + token type + position (QuantAct sums), "
             "IntLayerNorm written out (mean, biased variance, / sqrt(eps + var))",
    ),
    dict(
        name="convbert", seed=154, build=build_encoder,
        config={"architectures": ["ConvBertForMaskedLM"], "model_type": "convbert", "vocab_size": 224,
                "hidden_size": 16, "embedding_size": 8, "num_attention_heads": 2, "max_position_embeddings": 32,
                "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0, "torch_dtype": "float32"},
        token_types="passed",
        position_rule="index: position_ids[:, :seq]",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note="ConvBertEmbeddings: word + position + token type at embedding_size, LayerNorm; ConvBertModel's "
             "embeddings_project",
    ),
    dict(
        name="funnel", seed=155, build=build_encoder,
        config={"architectures": ["FunnelForMaskedLM"], "model_type": "funnel", "vocab_size": 225,
                "d_model": 16, "n_head": 2, "d_head": 8, "block_sizes": [1, 1], "layer_norm_eps": 1e-9,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: relative positions in attention",
        layer_norm_eps=1e-9, embed_scale=1.0, position_offset=0,
        note="FunnelEmbeddings: word, then layer_norm (eps 1e-9); no position or token-type table",
    ),
    dict(
        name="fsmt", seed=158, build=build_fsmt,
        config={"architectures": ["FSMTForConditionalGeneration"], "model_type": "fsmt", "langs": ["en", "de"],
                "src_vocab_size": 228, "tgt_vocab_size": 229, "d_model": 12, "max_position_embeddings": 32,
                "pad_token_id": 1, "scale_embedding": True, "tie_word_embeddings": False, "dropout": 0.1,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="ids: row = cumsum(ids != pad) * (ids != pad) + pad of fairseq's table (not in the checkpoint)",
        layer_norm_eps=0.0, embed_scale=math.sqrt(12), position_offset=2,
        note="FSMTEncoder: embed_tokens x sqrt(d_model) + SinusoidalPositionalEmbedding (fairseq's float32 table, "
             "max_position_embeddings + pad + 1 rows, row pad zero) at make_positions",
    ),
    dict(
        name="trocr", seed=159, build=build_trocr,
        config={"architectures": ["TrOCRForCausalLM"], "model_type": "trocr", "vocab_size": 230, "d_model": 12,
                "decoder_layers": 2, "decoder_attention_heads": 2, "max_position_embeddings": 32,
                "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "scale_embedding": False,
                "use_learned_position_embeddings": True, "layernorm_embedding": True, "dropout": 0.1,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: row = arange(past, past + seq) + 2, whatever the padding",
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=2,
        note="TrOCRDecoder (trocr-base-handwritten's layout): embed_tokens + learned positions at offset 2, "
             "layernorm_embedding",
    ),
    dict(
        name="trocr_printed", seed=160, build=build_trocr,
        config={"architectures": ["VisionEncoderDecoderModel"], "model_type": "vision-encoder-decoder",
                "encoder": {"model_type": "vit", "hidden_size": 4},
                "decoder": {"model_type": "trocr", "vocab_size": 231, "d_model": 12, "decoder_layers": 2,
                            "decoder_attention_heads": 2, "max_position_embeddings": 32, "pad_token_id": 1,
                            "scale_embedding": True, "use_learned_position_embeddings": False,
                            "layernorm_embedding": False, "dropout": 0.1},
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="ids: row = (cumsum(ids != pad) + past) * (ids != pad) + pad of fairseq's table",
        layer_norm_eps=0.0, embed_scale=math.sqrt(12), position_offset=2,
        note="VisionEncoderDecoderModel with trocr-large-printed's decoder: embed_tokens x sqrt(d_model) + the "
             "sinusoid (not in the checkpoint), no layernorm_embedding",
    ),
    dict(
        name="donut", seed=161, build=build_vision_decoder,
        config={"architectures": ["VisionEncoderDecoderModel"], "model_type": "vision-encoder-decoder",
                "encoder": {"model_type": "donut-swin", "embed_dim": 4},
                "decoder": {"architectures": None, "model_type": "mbart", "is_decoder": True,
                            "is_encoder_decoder": False, "add_cross_attention": True, "vocab_size": 232,
                            "d_model": 12, "decoder_layers": 2, "max_position_embeddings": 32, "pad_token_id": 1,
                            "scale_embedding": True, "add_final_layer_norm": True, "dropout": 0.1},
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: row = arange(past, past + seq) + 2, whatever the padding",
        layer_norm_eps=1e-5, embed_scale=math.sqrt(12), position_offset=2,
        note="VisionEncoderDecoderModel with Donut's MBartForCausalLM decoder (decoder.model.decoder.*): "
             "embed_tokens x sqrt(d_model) + positions at offset 2, layernorm_embedding",
    ),
    dict(
        name="vit_gpt2", seed=162, build=build_vision_decoder,
        config={"architectures": ["VisionEncoderDecoderModel"], "model_type": "vision-encoder-decoder",
                "encoder": {"model_type": "vit", "hidden_size": 4},
                "decoder": {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "add_cross_attention": True,
                            "vocab_size": 233, "n_embd": 12, "n_layer": 2, "n_head": 2, "n_positions": 32},
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: position_ids = cache_position, whatever the padding",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="VisionEncoderDecoderModel with GPT2LMHeadModel (decoder.transformer.*): wte + wpe",
    ),
    dict(
        name="xlm", seed=156, build=build_xlm,
        config={"architectures": ["XLMWithLMHeadModel"], "model_type": "xlm", "vocab_size": 226, "emb_dim": 16,
                "n_layers": 2, "n_heads": 2, "max_position_embeddings": 32, "n_langs": 2, "use_lang_emb": True,
                "pad_index": 2, "pad_token_id": 2, "layer_norm_eps": 1e-12, "dropout": 0.1,
                "torch_dtype": "float32"},
        token_types="passed",
        position_rule="index: position_ids[:, :slen], whatever the padding",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note="XLMModel: embeddings + position_embeddings + embeddings(token_type_ids) (the word table; no langs, "
             "whose lang_embeddings the checkpoint holds), layer_norm_emb, then * mask",
    ),
    dict(
        name="flaubert", seed=157, build=build_xlm,
        config={"architectures": ["FlaubertWithLMHeadModel"], "model_type": "flaubert", "vocab_size": 227,
                "emb_dim": 16, "n_layers": 2, "n_heads": 2, "max_position_embeddings": 32, "n_langs": 1,
                "pad_index": 2, "pad_token_id": 2, "layer_norm_eps": 1e-12, "pre_norm": True, "dropout": 0.1,
                "torch_dtype": "float32"},
        token_types="passed",
        position_rule="index: position_ids[:, :slen], whatever the padding",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note="FlaubertModel: embeddings + position_embeddings + embeddings(token_type_ids) (the word table), "
             "layer_norm_emb, then * mask",
    ),
    # The two-tower models' text towers (transformers v4.57.6), under the names their heads save.
    dict(
        name="owlvit", seed=163, build=build_clip_text,
        # google/owlvit-base-patch32's layout: OwlViTForObjectDetection, the tower under owlvit.text_model
        # (max_position_embeddings left out: OwlViTTextConfig's 16).
        config={"architectures": ["OwlViTForObjectDetection"], "model_type": "owlvit", "projection_dim": 16,
                "text_config": {"model_type": "owlvit_text_model", "vocab_size": 143, "hidden_size": 16,
                                "num_attention_heads": 2, "num_hidden_layers": 2, "pad_token_id": 1,
                                "bos_token_id": 141, "eos_token_id": 142},
                "vision_config": {"hidden_size": 24, "patch_size": 32}, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index, as clip (OwlViTTextEmbeddings: no length check, 16 rows)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="OwlViTTextEmbeddings (CLIP's): token + position under owlvit.text_model.embeddings",
    ),
    dict(
        name="owlv2", seed=164, build=build_clip_text,
        config={"architectures": ["Owlv2Model"], "model_type": "owlv2",
                "text_config": {"vocab_size": 144, "hidden_size": 16, "max_position_embeddings": 12,
                                "num_attention_heads": 2, "num_hidden_layers": 2, "pad_token_id": 0},
                "vision_config": {"hidden_size": 24}, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index, as clip",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Owlv2TextEmbeddings (CLIP's) under text_model.embeddings (Owlv2Model)",
    ),
    dict(
        name="xclip", seed=165, build=build_clip_text,
        # microsoft/xclip-base-patch32's config holds text_config_dict beside a text_config: XCLIPConfig
        # builds XCLIPTextConfig from the dict and lets every key of it win (here a stale text_config).
        config={"architectures": ["XCLIPModel"], "model_type": "xclip", "projection_dim": 16,
                "text_config": {"vocab_size": 50, "hidden_size": 8, "max_position_embeddings": 9,
                                "pad_token_id": 1},
                "text_config_dict": {"vocab_size": 145, "hidden_size": 16, "num_attention_heads": 2,
                                     "num_hidden_layers": 2},
                "vision_config": {"hidden_size": 24}, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index, as clip",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="XCLIPTextEmbeddings (CLIP's); the text config from text_config_dict over XCLIPTextConfig's "
             "defaults (77 positions), which wins over text_config",
    ),
    dict(
        name="groupvit", seed=166, build=build_clip_text,
        config={"architectures": ["GroupViTModel"], "model_type": "groupvit", "projection_dim": 16,
                "text_config": {"vocab_size": 146, "hidden_size": 16, "num_attention_heads": 2,
                                "num_hidden_layers": 2, "pad_token_id": 1},
                "vision_config": {"hidden_size": 24}, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index, as clip",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="GroupViTTextEmbeddings (CLIP's) under text_model.embeddings",
    ),
    dict(
        name="clipseg", seed=167, build=build_clip_text,
        config={"architectures": ["CLIPSegForImageSegmentation"], "model_type": "clipseg", "projection_dim": 16,
                "text_config": {"vocab_size": 147, "hidden_size": 16, "num_attention_heads": 2,
                                "num_hidden_layers": 2, "pad_token_id": 1},
                "vision_config": {"hidden_size": 24}, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index, as clip",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="CLIPSegTextEmbeddings (CLIP's) under clip.text_model.embeddings (CIDAS/clipseg-rd64-refined)",
    ),
    dict(
        name="chinese_clip", seed=168, build=build_encoder,
        # OFA-Sys/chinese-clip-vit-base-patch16's layout: ChineseCLIPModel, text_model (no pooler),
        # type_vocab_size, layer_norm_eps and max_position_embeddings from ChineseCLIPTextConfig.
        config={"architectures": ["ChineseCLIPModel"], "model_type": "chinese_clip", "projection_dim": 16,
                "text_config": {"vocab_size": 148, "hidden_size": 16, "num_attention_heads": 2,
                                "num_hidden_layers": 2},
                "vision_config": {"hidden_size": 24}, "torch_dtype": "float32"},
        token_types="passed",
        position_rule="index: position_ids = arange(0, seq), as BERT",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note="ChineseCLIPTextEmbeddings (BERT's): word + token type, += position, LayerNorm",
    ),
    dict(
        name="chinese_clip_text_model", seed=169, build=build_encoder,
        config={"architectures": ["ChineseCLIPTextModel"], "model_type": "chinese_clip_text_model",
                "vocab_size": 149, "hidden_size": 16, "max_position_embeddings": 24, "type_vocab_size": 3,
                "layer_norm_eps": 1e-5, "pad_token_id": 2, "num_attention_heads": 2, "num_hidden_layers": 2,
                "torch_dtype": "float32"},
        token_types="passed",
        position_rule="index, as BERT",
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=0,
        note="ChineseCLIPTextModel alone: embeddings.* at the top level",
    ),
    dict(
        name="align", seed=170, build=build_encoder,
        config={"architectures": ["AlignModel"], "model_type": "align", "projection_dim": 16,
                "text_config": {"vocab_size": 150, "hidden_size": 16, "max_position_embeddings": 40,
                                "num_attention_heads": 2, "num_hidden_layers": 2, "layer_norm_eps": 1e-6},
                "vision_config": {"hidden_dim": 24}, "torch_dtype": "float32"},
        token_types="passed",
        position_rule="index, as BERT",
        layer_norm_eps=1e-6, embed_scale=1.0, position_offset=0,
        note="AlignTextEmbeddings (BERT's) under text_model.embeddings",
    ),
    dict(
        name="flava", seed=171, build=build_encoder,
        config={"architectures": ["FlavaForPreTraining"], "model_type": "flava",
                "text_config": {"vocab_size": 151, "hidden_size": 16, "max_position_embeddings": 40,
                                "num_attention_heads": 2, "num_hidden_layers": 2},
                "image_config": {"hidden_size": 24}, "multimodal_config": {"hidden_size": 24},
                "torch_dtype": "float32"},
        token_types="passed",
        position_rule="index, as BERT",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note="FlavaTextEmbeddings (BERT's) under flava.text_model.embeddings (FlavaForPreTraining)",
    ),
    dict(
        name="altclip", seed=172, build=build_encoder,
        # BAAI/AltCLIP's layout: AltCLIPModel, XLM-R under text_model.roberta.
        config={"architectures": ["AltCLIPModel"], "model_type": "altclip", "projection_dim": 16,
                "text_config": {"model_type": "altclip_text_model", "vocab_size": 152, "hidden_size": 16,
                                "max_position_embeddings": 34, "num_attention_heads": 2, "num_hidden_layers": 2,
                                "project_dim": 16},
                "vision_config": {"hidden_size": 24}, "torch_dtype": "float32"},
        token_types="default",
        position_rule="ids: m = (id != pad_token_id); position = cumsum(m) * m + pad_token_id, as RoBERTa",
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=0,
        note="AltRobertaEmbeddings (RoBERTa's) under text_model.roberta.embeddings; pad_token_id 1, "
             "type_vocab_size 1 and eps 1e-5 from AltCLIPTextConfig",
    ),
    dict(
        name="clap", seed=173, build=build_encoder,
        config={"architectures": ["ClapModel"], "model_type": "clap", "projection_dim": 16,
                "text_config": {"vocab_size": 153, "hidden_size": 16, "max_position_embeddings": 34,
                                "num_attention_heads": 2, "num_hidden_layers": 2},
                "audio_config": {"hidden_size": 24}, "torch_dtype": "float32"},
        token_types="default",
        position_rule="ids, as RoBERTa",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note="ClapTextEmbeddings (RoBERTa's) under text_model.embeddings",
    ),
    dict(
        name="bridgetower", seed=174, build=build_encoder,
        config={"architectures": ["BridgeTowerForMaskedLM"], "model_type": "bridgetower",
                "text_config": {"vocab_size": 154, "hidden_size": 16, "max_position_embeddings": 34,
                                "num_attention_heads": 2, "num_hidden_layers": 2},
                "vision_config": {"hidden_size": 24}, "torch_dtype": "float32"},
        token_types="default",
        position_rule="ids, as RoBERTa",
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=0,
        note="BridgeTowerTextEmbeddings (RoBERTa's) under bridgetower.text_model.embeddings",
    ),
    dict(
        name="blip", seed=175, build=build_blip,
        # Salesforce/blip-vqa-base's layout: BlipForQuestionAnswering, the question through
        # text_encoder, the answer through text_decoder.bert (tables of their own).
        config={"architectures": ["BlipForQuestionAnswering"], "model_type": "blip", "projection_dim": 16,
                "text_config": {"vocab_size": 155, "hidden_size": 16, "max_position_embeddings": 32,
                                "num_attention_heads": 2, "num_hidden_layers": 2, "bos_token_id": 153,
                                "sep_token_id": 102},
                "vision_config": {"hidden_size": 24}, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: position_ids[:, past:past + seq] of the arange buffer, whatever the padding",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note="BlipTextEmbeddings: word += position, LayerNorm; no token types",
    ),
    dict(
        name="blip_captioning", seed=176, build=build_blip,
        config={"architectures": ["BlipForConditionalGeneration"], "model_type": "blip", "projection_dim": 16,
                "text_config": {"vocab_size": 156, "hidden_size": 16, "max_position_embeddings": 32,
                                "num_attention_heads": 2, "num_hidden_layers": 2, "layer_norm_eps": 1e-5,
                                "pad_token_id": 3},
                "vision_config": {"hidden_size": 24}, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index, as blip",
        layer_norm_eps=1e-5, embed_scale=1.0, position_offset=0,
        note="BlipForConditionalGeneration: the text decoder's BlipTextEmbeddings alone (text_decoder.bert)",
    ),
    dict(
        name="kosmos2", seed=177, build=build_kosmos2,
        # microsoft/kosmos-2-patch14-224's layout: Kosmos2ForConditionalGeneration, text_model.model;
        # pad_token_id (1) and scale_embedding (true) from Kosmos2TextConfig.
        config={"architectures": ["Kosmos2ForConditionalGeneration"], "model_type": "kosmos-2",
                "text_config": {"model_type": "kosmos_2_text_model", "vocab_size": 157, "embed_dim": 16,
                                "max_position_embeddings": 32, "layers": 2, "attention_heads": 2,
                                "ffn_dim": 32},
                "vision_config": {"hidden_size": 24}, "latent_query_num": 4, "torch_dtype": "float32"},
        token_types=None,
        position_rule="ids: m = (id != pad_token_id); row = cumsum(m) * m + pad_token_id of M2M100's "
                      "sinusoidal table, row pad_token_id zero",
        layer_norm_eps=0.0, embed_scale=4.0, position_offset=0,
        note="Kosmos2TextTransformer.forward_embedding: embed_tokens x sqrt(embed_dim) + the float32 table",
    ),
    # BLIP-2's and InstructBLIP's language models under language_model.
    dict(
        name="blip2_opt", seed=178, build=build_language_model,
        # Salesforce/blip2-opt-2.7b's layout: text_config saved as a difference from OPTConfig's
        # defaults (no max_position_embeddings nor pad_token_id: 2048 rows, padding_idx 1),
        # word_embed_proj_dim = hidden_size (no project_in), image_token_index set.
        config={"architectures": ["Blip2ForConditionalGeneration"], "model_type": "blip-2", "num_query_tokens": 4,
                "image_token_index": 157,
                "text_config": {"model_type": "opt", "vocab_size": 158, "hidden_size": 16,
                                "word_embed_proj_dim": 16, "bos_token_id": 2, "eos_token_id": 2,
                                "num_attention_heads": 2, "num_hidden_layers": 2},
                "qformer_config": {"hidden_size": 4}, "vision_config": {"hidden_size": 4},
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="mask: as opt (the image's query tokens, in input_ids or before them, counted)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=2,
        note="OPTForCausalLM's stage under language_model.model.decoder: embed_tokens + embed_positions",
    ),
    dict(
        name="instructblip_t5", seed=179, build=build_language_model,
        config={"architectures": ["InstructBlipForConditionalGeneration"], "model_type": "instructblip",
                "text_config": {"model_type": "t5", "vocab_size": 159, "d_model": 16, "pad_token_id": 0,
                                "eos_token_id": 1, "dropout_rate": 0.1, "tie_word_embeddings": False},
                "qformer_config": {"hidden_size": 4}, "vision_config": {"hidden_size": 4},
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none, as t5",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Flan-T5 (T5ForConditionalGeneration) under language_model: the shared table",
    ),
    dict(
        name="instructblip_vicuna", seed=180, build=build_language_model,
        config={"architectures": ["InstructBlipForConditionalGeneration"], "model_type": "instructblip",
                "text_config": {"model_type": "llama", "vocab_size": 160, "hidden_size": 16,
                                "num_attention_heads": 2, "num_hidden_layers": 2, "max_position_embeddings": 64,
                                "rope_theta": 10000.0, "pad_token_id": 0},
                "qformer_config": {"hidden_size": 4}, "vision_config": {"hidden_size": 4},
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: rotary in attention, as llama",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="Vicuna (LlamaForCausalLM) under language_model.model: embed_tokens",
    ),
    dict(
        name="longt5", seed=181, build=build_t5,
        config={"architectures": ["LongT5ForConditionalGeneration"], "model_type": "longt5", "vocab_size": 161,
                "d_model": 16, "pad_token_id": 0, "eos_token_id": 1, "decoder_start_token_id": 0,
                "encoder_attention_type": "transient-global", "dropout_rate": 0.1, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: as t5 (local and transient-global attention carry the positions)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="LongT5Stack: the shared table's lookup, dropout",
    ),
    dict(
        name="switch_transformers", seed=182, build=build_t5,
        config={"architectures": ["SwitchTransformersForConditionalGeneration"], "model_type": "switch_transformers",
                "vocab_size": 162, "d_model": 16, "pad_token_id": 0, "eos_token_id": 1,
                "decoder_start_token_id": 0, "num_experts": 4, "dropout_rate": 0.1, "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: as t5",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="SwitchTransformersStack: the shared table's lookup, dropout",
    ),
    dict(
        name="git", seed=183, build=build_encoder,
        # microsoft/git-base's layout: GitForCausalLM, GitModel under git.
        config={"architectures": ["GitForCausalLM"], "model_type": "git", "vocab_size": 163, "hidden_size": 16,
                "max_position_embeddings": 40, "layer_norm_eps": 1e-12, "pad_token_id": 0, "bos_token_id": 101,
                "eos_token_id": 102, "num_attention_heads": 2, "num_hidden_layers": 2,
                "vision_config": {"hidden_size": 8}, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: position_ids[:, past:past + seq] of the arange buffer",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note="GitEmbeddings: word += position, LayerNorm; the image's tokens join after it",
    ),
    dict(
        name="dpr", seed=184, build=build_encoder,
        # facebook/dpr-ctx_encoder-single-nq-base's layout: DPRContextEncoder, BertModel under
        # ctx_encoder.bert_model.
        config={"architectures": ["DPRContextEncoder"], "model_type": "dpr", "vocab_size": 164, "hidden_size": 16,
                "max_position_embeddings": 40, "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0,
                "projection_dim": 0, "num_attention_heads": 2, "num_hidden_layers": 2, "torch_dtype": "float32"},
        token_types="passed",
        position_rule="index, as BERT",
        layer_norm_eps=1e-12, embed_scale=1.0, position_offset=0,
        note="BertEmbeddings under ctx_encoder.bert_model.embeddings",
    ),
    dict(
        name="xlnet", seed=185, build=build_xlnet,
        config={"architectures": ["XLNetLMHeadModel"], "model_type": "xlnet", "vocab_size": 165, "d_model": 16,
                "n_layer": 2, "n_head": 2, "d_inner": 32, "pad_token_id": 5, "mem_len": None,
                "torch_dtype": "float32"},
        token_types=None,
        position_rule="none: relative positions (a sinusoid of distances) in attention",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="XLNetModel: word_embedding alone (no padding_idx); segment ids act in attention",
    ),
    dict(
        name="openai_gpt", seed=186, build=build_openai_gpt,
        config={"architectures": ["OpenAIGPTLMHeadModel"], "model_type": "openai-gpt", "vocab_size": 166,
                "n_embd": 16, "n_positions": 32, "n_layer": 2, "n_head": 2, "torch_dtype": "float32"},
        token_types=None,
        position_rule="index: position_ids[None, :seq] of the arange buffer (no cache)",
        layer_norm_eps=0.0, embed_scale=1.0, position_offset=0,
        note="OpenAIGPTModel: tokens_embed + positions_embed (+ tokens_embed(token_type_ids))",
    ),
    dict(
        name="speech_to_text", seed=187, build=build_speech2text,
        # facebook/s2t-small-librispeech-asr's layout: Speech2TextForConditionalGeneration's decoder.
        config={"architectures": ["Speech2TextForConditionalGeneration"], "model_type": "speech_to_text",
                "vocab_size": 167, "d_model": 12, "max_target_positions": 32, "max_source_positions": 64,
                "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "decoder_start_token_id": 2,
                "scale_embedding": True, "torch_dtype": "float32"},
        token_types=None,
        position_rule="ids: m = (id != pad_token_id); row = cumsum(m) * m + pad_token_id of M2M100's "
                      "sinusoidal table (max_target_positions + 2 rows)",
        layer_norm_eps=0.0, embed_scale=math.sqrt(12), position_offset=0,
        note="Speech2TextDecoder: embed_tokens x sqrt(d_model) + the float32 table; the encoder reads features",
    ),
]

# Tied duplicates left out of the checkpoint (one name per table, as a deduplicating save does).
LEFT_OUT = {"bart": ["model.encoder.embed_tokens.weight"], "marian": ["model.shared.weight"],
            "m2m_100": ["model.encoder.embed_tokens.weight"], "nllb_moe": ["model.encoder.embed_tokens.weight"],
            "plbart": ["model.encoder.embed_tokens.weight"], "mvp": ["model.encoder.embed_tokens.weight"],
            "blenderbot": ["model.encoder.embed_tokens.weight"], "bigbird_pegasus": ["model.encoder.embed_tokens.weight"],
            "led": ["led.encoder.embed_tokens.weight"], "fsmt": ["model.decoder.embed_tokens.weight"],
            "mbart": ["model.encoder.embed_tokens.weight"], "pegasus": ["model.encoder.embed_tokens.weight"]}


def fill_weights(root, rng):
    """Replace every parameter with seeded random float32 values (Marian's table excepted).

    named_modules() lists a tied module once, under the name it was registered with first."""
    with torch.no_grad():
        for name, module in sorted(root.named_modules(), key=lambda item: item[0]):
            if isinstance(module, SinusoidalTable):
                module.fill_table()
            elif isinstance(module, nn.LayerNorm):
                shape = tuple(module.weight.shape)
                module.weight.copy_(torch.from_numpy((1.0 + 0.25 * rng.standard_normal(shape)).astype(np.float32)))
                module.bias.copy_(torch.from_numpy((0.25 * rng.standard_normal(shape)).astype(np.float32)))
            elif isinstance(module, nn.Linear):
                shape = tuple(module.weight.shape)
                scale = 1.0 / math.sqrt(shape[1])
                module.weight.copy_(torch.from_numpy((scale * rng.standard_normal(shape)).astype(np.float32)))
                if module.bias is not None:
                    bias = 0.25 * rng.standard_normal(tuple(module.bias.shape))
                    module.bias.copy_(torch.from_numpy(bias.astype(np.float32)))
            elif isinstance(module, nn.Embedding):
                shape = tuple(module.weight.shape)
                module.weight.copy_(torch.from_numpy(rng.standard_normal(shape).astype(np.float32)))


# ----------------------------------------------------------------------------------------------
# The cases: batch 3 x seq 7.

CASE_NAMES = ["right_padding", "left_padding", "no_padding"]
LENGTHS = {"right_padding": [7, 5, 3], "left_padding": [7, 4, 2], "no_padding": [7, 7, 7]}
TOKEN_TYPES = [[0, 0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1, 1], [0, 1, 0, 1, 0, 1, 0]]


def make_case(case, vocab_size, pad_id, rng):
    choices = np.array([i for i in range(vocab_size) if i != pad_id], dtype=np.int64)
    ids = np.full((BATCH, SEQ), pad_id, dtype=np.int64)
    mask = np.zeros((BATCH, SEQ), dtype=np.int64)
    for row, length in enumerate(LENGTHS[case]):
        tokens = rng.choice(choices, size=length)
        if case == "left_padding":
            ids[row, SEQ - length:] = tokens
            mask[row, SEQ - length:] = 1
        else:
            ids[row, :length] = tokens
            mask[row, :length] = 1
    return ids, mask


# ----------------------------------------------------------------------------------------------
# An independent check: float64 numpy from the written file and the documented rule.

def numpy_reference(family, tensors, ids, mask, types):
    """What a reader of the checkpoint computes, in float64: returns (output, projected, rows)."""
    f = {k: v.numpy().astype(np.float64) for k, v in tensors.items()}
    name = family["name"]
    cfg = family["config"]
    pad = cfg.get("pad_token_id", 0)
    index = np.broadcast_to(np.arange(SEQ), ids.shape)

    def layer_norm(x, w, b, eps):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + eps) * w + b

    if name in ("distilbert", "mpnet"):
        p = name + ".embeddings."
        if name == "mpnet":
            m = (ids != 1).astype(np.int64)
            rows = np.cumsum(m, axis=1) * m + 1
        else:
            rows = index
        x = f[p + "word_embeddings.weight"][ids] + f[p + "position_embeddings.weight"][rows]
        x = layer_norm(x, f[p + "LayerNorm.weight"], f[p + "LayerNorm.bias"], family["layer_norm_eps"])
        return x, None, rows
    if name in ("bert", "electra", "roberta", "albert"):
        p = {"bert": "bert.embeddings.", "electra": "embeddings.", "roberta": "roberta.embeddings.",
             "albert": "albert.embeddings."}[name]
        if name == "roberta":
            m = (ids != pad).astype(np.int64)
            rows = np.cumsum(m, axis=1) * m + pad
        else:
            rows = index
        tt = types if types is not None else np.zeros_like(ids)
        x = f[p + "word_embeddings.weight"][ids] + f[p + "token_type_embeddings.weight"][tt]
        x = x + f[p + "position_embeddings.weight"][rows]
        x = layer_norm(x, f[p + "LayerNorm.weight"], f[p + "LayerNorm.bias"], cfg["layer_norm_eps"])
        projected = None
        if name == "electra":
            projected = x @ f["embeddings_project.weight"].T + f["embeddings_project.bias"]
        if name == "albert":
            q = "albert.encoder.embedding_hidden_mapping_in."
            projected = x @ f[q + "weight"].T + f[q + "bias"]
        return x, projected, rows
    if name in ("deberta", "deberta_v2"):
        p = "deberta.embeddings."
        x = f[p + "word_embeddings.weight"][ids]
        rows = None
        if cfg.get("position_biased_input", True):
            rows = index
            x = x + f[p + "position_embeddings.weight"][rows]
        if cfg["type_vocab_size"] > 0:
            x = x + f[p + "token_type_embeddings.weight"][types if types is not None else np.zeros_like(ids)]
        x = layer_norm(x, f[p + "LayerNorm.weight"], f[p + "LayerNorm.bias"], cfg["layer_norm_eps"])
        return x * mask[..., None], None, rows
    if name in ("m2m_100", "nllb_moe"):
        table = M2M100Positions.get_embedding(cfg["max_position_embeddings"] + 2, cfg["d_model"], pad)
        m = (ids != pad).astype(np.int64)
        rows = np.cumsum(m, axis=1) * m + pad
        x = f["model.shared.weight"][ids] * math.sqrt(cfg["d_model"])
        return x + table.numpy().astype(np.float64)[rows], None, rows
    if name == "donut":
        dec = language(cfg)
        p = "decoder.model.decoder."
        rows = index + 2
        x = f[p + "embed_tokens.weight"][ids] * math.sqrt(dec["d_model"]) + f[p + "embed_positions.weight"][rows]
        x = layer_norm(x, f[p + "layernorm_embedding.weight"], f[p + "layernorm_embedding.bias"], 1e-5)
        return x, None, rows
    if name == "vit_gpt2":
        return f["decoder.transformer.wte.weight"][ids] + f["decoder.transformer.wpe.weight"][index], None, index
    if name in ("trocr", "trocr_printed"):
        dec = language(cfg)
        p = "model.decoder." if name == "trocr" else "decoder.model.decoder."
        d = dec["d_model"]
        scale = math.sqrt(d) if dec.get("scale_embedding", False) else 1.0
        x = f[p + "embed_tokens.weight"][ids] * scale
        if dec.get("use_learned_position_embeddings", True):
            rows = index + 2
            x = x + f[p + "embed_positions.weight"][rows]
        else:
            dpad = dec["pad_token_id"]
            table = M2M100Positions.get_embedding(dec["max_position_embeddings"] + dpad + 1, d, dpad)
            m = (ids != dpad).astype(np.int64)
            rows = np.cumsum(m, axis=1) * m + dpad
            x = x + table.numpy().astype(np.float64)[rows]
        if dec.get("layernorm_embedding", True):
            x = layer_norm(x, f[p + "layernorm_embedding.weight"], f[p + "layernorm_embedding.bias"], 1e-5)
        return x, None, rows
    if name == "fsmt":
        table = M2M100Positions.get_embedding(cfg["max_position_embeddings"] + pad + 1, cfg["d_model"], pad)
        m = (ids != pad).astype(np.int64)
        rows = np.cumsum(m, axis=1) * m + pad
        x = f["model.encoder.embed_tokens.weight"][ids] * math.sqrt(cfg["d_model"])
        return x + table.numpy().astype(np.float64)[rows], None, rows
    if name in ("xlm", "flaubert"):
        p = "transformer."
        x = f[p + "embeddings.weight"][ids] + f[p + "position_embeddings.weight"][index]
        if types is not None:
            x = x + f[p + "embeddings.weight"][types]
        x = layer_norm(x, f[p + "layer_norm_emb.weight"], f[p + "layer_norm_emb.bias"], cfg["layer_norm_eps"])
        return x * mask[..., None], None, index
    if name == "bloom":
        x = f["word_embeddings.weight"][ids]
        return layer_norm(x, f["word_embeddings_layernorm.weight"], f["word_embeddings_layernorm.bias"],
                          cfg["layer_norm_epsilon"]), None, None
    if name == "mpt":
        return f["transformer.wte.weight"][ids], None, None
    if name in ("gpt2", "gpt_neo", "gpt_bigcode"):
        return f["transformer.wte.weight"][ids] + f["transformer.wpe.weight"][index], None, index
    if name == "openai_gpt":
        return f["transformer.tokens_embed.weight"][ids] + f["transformer.positions_embed.weight"][index], None, index
    if name == "xlnet":
        return f["transformer.word_embedding.weight"][ids], None, None
    if name in ("gptj", "codegen"):
        return f["transformer.wte.weight"][ids], None, None
    if name == "falcon":
        return f["transformer.word_embeddings.weight"][ids], None, None
    if name in ("bart", "mbart", "plbart", "mvp"):
        rows = index + 2
        scale = math.sqrt(cfg["d_model"]) if cfg.get("scale_embedding", name == "plbart") else 1.0
        x = f["model.shared.weight"][ids] * scale + f["model.encoder.embed_positions.weight"][rows]
        x = layer_norm(x, f["model.encoder.layernorm_embedding.weight"],
                       f["model.encoder.layernorm_embedding.bias"], 1e-5)
        return x, None, rows
    if name in ("blenderbot", "bigbird_pegasus"):
        x = f["model.shared.weight"][ids] * math.sqrt(cfg["d_model"]) + f["model.encoder.embed_positions.weight"][index]
        return x, None, index
    if name == "led":
        x = f["led.shared.weight"][ids] + f["led.encoder.embed_positions.weight"][index]
        x = layer_norm(x, f["led.encoder.layernorm_embedding.weight"], f["led.encoder.layernorm_embedding.bias"], 1e-5)
        return x, None, index
    if name == "biogpt":
        rows = np.cumsum(mask, axis=1) * mask - 1 + 2
        x = f["biogpt.embed_tokens.weight"][ids] * math.sqrt(cfg["hidden_size"])
        return x + f["biogpt.embed_positions.weight"][rows], None, rows
    if name == "xglm":
        table = M2M100Positions.get_embedding(cfg["max_position_embeddings"] + 2, cfg["d_model"], pad)
        rows = index + 2
        x = f["model.embed_tokens.weight"][ids] * math.sqrt(cfg["d_model"])
        return x + table.numpy().astype(np.float64)[rows], None, rows
    if family["build"] is build_language_model:
        # The wrapped language model's own stage, from its tensors under language_model.
        text = language(cfg)
        inner = dict(family, name=text["model_type"], config=text, build=WRAPPED_LANGUAGE[text["model_type"]])
        stripped = {k[len("language_model."):]: v for k, v in tensors.items() if k.startswith("language_model.")}
        return numpy_reference(inner, stripped, ids, mask, types)
    if name == "opt":
        rows = np.cumsum(mask, axis=1) * mask - 1 + 2
        x = f["model.decoder.embed_tokens.weight"][ids]
        if "model.decoder.project_in.weight" in f:
            x = x @ f["model.decoder.project_in.weight"].T
        return x + f["model.decoder.embed_positions.weight"][rows], None, rows
    if name in ("marian", "pegasus"):
        table = "model.encoder.embed_tokens.weight" if name == "marian" else "model.shared.weight"
        x = f[table][ids] * math.sqrt(cfg["d_model"])
        return x + f["model.encoder.embed_positions.weight"][index], None, index
    if name in ("t5", "mt5", "umt5", "longt5", "switch_transformers"):
        assert np.array_equal(f["shared.weight"], f["encoder.embed_tokens.weight"])
        return f["encoder.embed_tokens.weight"][ids], None, None
    if name in ("llama", "mistral", "qwen2", "phi", "qwen3", "qwen3_moe", "mixtral", "starcoder2", "olmo2",
                "stablelm", "cohere"):
        return f["model.embed_tokens.weight"][ids], None, None
    if name == "granite":
        return f["model.embed_tokens.weight"][ids] * cfg["embedding_multiplier"], None, None
    if name in ("esm", "esm1b"):
        x = f["esm.embeddings.word_embeddings.weight"][ids]
        masked = ids == cfg["mask_token_id"]
        x[masked] = 0.0
        # .float(): the observed ratio and 1 - it are float32 even in a float64 model.
        ratio = masked.sum(-1).astype(np.float32) / mask.sum(-1).astype(np.float32)
        x = x * (1 - 0.15 * 0.8) / (np.float32(1) - ratio).astype(np.float64)[:, None, None]
        rows = None
        if cfg["position_embedding_type"] == "absolute":
            m = (ids != pad).astype(np.int64)
            rows = np.cumsum(m, axis=1) * m + pad
            x = x + f["esm.embeddings.position_embeddings.weight"][rows]
        if cfg["emb_layer_norm_before"]:
            x = layer_norm(x, f["esm.embeddings.layer_norm.weight"], f["esm.embeddings.layer_norm.bias"],
                           cfg["layer_norm_eps"])
        return x * mask[..., None], None, rows
    if name == "paligemma":
        return f["language_model.model.embed_tokens.weight"][ids] * math.sqrt(language(cfg)["hidden_size"]), None, None
    if family["build"] is build_clip_text:
        outer = CLIP_OUTER.get(cfg["architectures"][0])
        p = (outer + "." if outer else "") + "text_model.embeddings."
        return f[p + "token_embedding.weight"][ids] + f[p + "position_embedding.weight"][index], None, index
    if family["build"] is build_blip:
        text = language(cfg)
        p = "text_encoder.embeddings." if "text_encoder.embeddings.word_embeddings.weight" in f else \
            "text_decoder.bert.embeddings."
        x = f[p + "word_embeddings.weight"][ids] + f[p + "position_embeddings.weight"][index]
        return layer_norm(x, f[p + "LayerNorm.weight"], f[p + "LayerNorm.bias"], text["layer_norm_eps"]), None, index
    if family["build"] is build_speech2text:
        table = M2M100Positions.get_embedding(cfg["max_target_positions"] + 2, cfg["d_model"], pad)
        m = (ids != pad).astype(np.int64)
        rows = np.cumsum(m, axis=1) * m + pad
        x = f["model.decoder.embed_tokens.weight"][ids] * math.sqrt(cfg["d_model"])
        return x + table.numpy().astype(np.float64)[rows], None, rows
    if family["build"] is build_kosmos2:
        text = language(cfg)
        kpad = text["pad_token_id"]
        table = M2M100Positions.get_embedding(text["max_position_embeddings"] + 2, text["embed_dim"], kpad)
        m = (ids != kpad).astype(np.int64)
        rows = np.cumsum(m, axis=1) * m + kpad
        x = f["text_model.model.embed_tokens.weight"][ids] * math.sqrt(text["embed_dim"])
        return x + table.numpy().astype(np.float64)[rows], None, rows
    if name == "whisper":
        p = "model.decoder."
        return f[p + "embed_tokens.weight"][ids] + f[p + "embed_positions.weight"][index], None, index
    if family["build"] is build_mamba:
        return f[MAMBA_TABLES[name] + ".weight"][ids], None, None
    if name == "nomic_bert":
        tt = types if types is not None else np.zeros_like(ids)
        x = f["embeddings.word_embeddings.weight"][ids] + f["embeddings.token_type_embeddings.weight"][tt]
        return layer_norm(x, f["emb_ln.weight"], f["emb_ln.bias"], cfg["layer_norm_epsilon"]), None, None
    if family["build"] is build_encoder:
        if cfg["model_type"] in LEARNED_DEFAULTS:
            cfg = language(cfg)
            pad = cfg["pad_token_id"]
        prefix, rule, layer_norm_here, order = ENCODER_SPECS[cfg["model_type"]]
        p = (prefix + "." if prefix else "") + "embeddings."
        if rule == "ids":
            m = (ids != pad).astype(np.int64)
            rows = np.cumsum(m, axis=1) * m + pad
        elif rule == "plus2":
            rows = index + 2
        else:
            rows = index
        tt = types if types is not None else np.zeros_like(ids)
        x = f[p + "word_embeddings.weight"][ids]
        if cfg.get("rescale_embeddings"):
            x = x * math.sqrt(cfg["hidden_size"])
        if "t" in order:
            x = x + f[p + "token_type_embeddings.weight"][tt]
        if "p" in order:
            x = x + f[p + "position_embeddings.weight"][rows]
        if cfg.get("use_task_id"):
            x = x + f[p + "task_type_embeddings.weight"][0]
        if layer_norm_here:
            ln = "layer_norm." if cfg["model_type"] == "funnel" else "LayerNorm."
            x = layer_norm(x, f[p + ln + "weight"], f[p + ln + "bias"], cfg["layer_norm_eps"])
        projected = None
        if cfg["model_type"] == "convbert" and encoder_width(cfg) != cfg["hidden_size"]:
            q = prefix + ".embeddings_project."
            projected = x @ f[q + "weight"].T + f[q + "bias"]
        if cfg["model_type"] == "rembert":
            q = prefix + ".encoder.embedding_hidden_mapping_in."
            projected = x @ f[q + "weight"].T + f[q + "bias"]
        if cfg["model_type"] == "roformer" and encoder_width(cfg) != cfg["hidden_size"]:
            q = prefix + ".embeddings_project."
            projected = x @ f[q + "weight"].T + f[q + "bias"]
        return x, projected, (None if rule in ("rotary", "none") else rows)
    if family["build"] is build_lookup_decoder:
        table = DECODER_TABLES.get(cfg["model_type"], "model.embed_tokens") + ".weight"
        return f[table][ids] * language(cfg).get("embedding_multiplier", 1.0), None, None
    if name == "modernbert":
        x = f["model.embeddings.tok_embeddings.weight"][ids]
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + cfg["norm_eps"]) * f["model.embeddings.norm.weight"], None, None
    if name in ("gemma3_text", "gemma3"):
        # The scale is a float32 buffer, so the float64 run multiplies by float32(sqrt(d)) too.
        table = "model.embed_tokens.weight" if name == "gemma3_text" else "language_model.model.embed_tokens.weight"
        return f[table][ids] * float(np.float32(math.sqrt(language(cfg)["hidden_size"]))), None, None
    if name in ("gemma", "gemma2", "vaultgemma"):
        return f["model.embed_tokens.weight"][ids] * math.sqrt(cfg["hidden_size"]), None, None
    if name == "recurrent_gemma":
        normalizer = float(torch.tensor(math.sqrt(cfg["hidden_size"]), dtype=torch.bfloat16).float())
        return f["model.embed_tokens.weight"][ids] * normalizer, None, None
    if name == "gpt_neox":
        return f["gpt_neox.embed_in.weight"][ids], None, None
    raise AssertionError(name)


def check_marian_table(table):
    """The float32 table against the angle formula evaluated with mpmath and rounded once."""
    mpmath.mp.dps = 50
    n_pos, dim = table.shape
    half = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    mismatches = 0
    for pos in range(n_pos):
        for col in range(dim):
            j = 2 * col if col < half else 2 * (col - half) + 1
            angle = mpmath.mpf(pos) / mpmath.power(10000, mpmath.mpf(2 * (j // 2)) / dim)
            exact = mpmath.sin(angle) if col < half else mpmath.cos(angle)
            if float(np.float32(float(exact))) != float(table[pos, col]):
                mismatches += 1
    return mismatches


# ----------------------------------------------------------------------------------------------
# The rotary stage each rotary family's config describes.

def rope_view(cfg):
    """The config as modeling_rope_utils.py reads it. GPT-NeoX's GPTNeoXConfig maps rotary_pct to
    partial_rotary_factor and rotary_emb_base to rope_theta (older GPTNeoXAttention: rotary_ndims
    = int(head_size * rotary_pct), base=rotary_emb_base: the same numbers)."""
    view = dict(language(cfg))
    if cfg["model_type"] == "modernbert":  # the global layers' stage
        view["rope_theta"] = cfg["global_rope_theta"]
    if cfg["model_type"] == "gpt_neox":
        view["partial_rotary_factor"] = cfg["rotary_pct"]
        view["rope_theta"] = cfg["rotary_emb_base"]
    if cfg["model_type"] in ("gptj", "codegen"):
        # create_sinusoidal_positions(n_positions, rotary_dim): base 10000, rotary_dim of each head.
        view.update(hidden_size=cfg["n_embd"], num_attention_heads=cfg["n_head"],
                    max_position_embeddings=cfg["n_positions"],
                    partial_rotary_factor=cfg["rotary_dim"] / (cfg["n_embd"] // cfg["n_head"]))
    if cfg["model_type"] == "nomic_bert":
        # NomicBertRotaryEmbedding(dim = n_embd // n_head * rotary_emb_fraction, base =
        # rotary_emb_base): the default rule's inv_freq over that width.
        view.update(hidden_size=cfg["n_embd"], num_attention_heads=cfg["n_head"],
                    max_position_embeddings=cfg["n_positions"], partial_rotary_factor=cfg["rotary_emb_fraction"],
                    rope_theta=float(cfg["rotary_emb_base"]))
    if cfg["model_type"] == "falcon":
        view.setdefault("max_position_embeddings", 2048)  # FalconConfig's default
    view.setdefault("rope_theta", 10000.0)
    if cfg["model_type"] in HUNYUAN:
        view = hunyuan_alpha_view(view)
    return view


def rotary_stage(family):
    """inv_freq (float32) and attention_scaling as Hugging Face computes them at init, with the
    rotated and head widths. The stored inv_freq is generate_rope_fixtures.py's emulation
    (correctly rounded pow); torch's own run (SLEEF pow) is compared and reported."""
    cfg = rope_view(family["config"])
    rule = family["rotary"]
    with mpmath.workdps(60):
        inv, att = rope.EMU_RULES[rule](cfg, None)
    t_inv, t_att = rope.TORCH_RULES[rule](rope.config_obj(cfg), None)
    dim, head_dim = rope.hf_dim(rope.config_obj(cfg))
    assert len(inv) == dim // 2 and t_inv.dtype == torch.float32
    assert float(t_att) == float(att), (family["name"], t_att, att)
    if cfg["model_type"] == "phimoe" and rule == "longrope":
        # PhimoeRotaryEmbedding.forward: mscale = long_mscale past original_max_position_embeddings,
        # else short_mscale, in place of the rule's attention factor.
        scaling = cfg["rope_scaling"]
        assert scaling["short_mscale"] == scaling["long_mscale"]
        att = scaling["short_mscale"]
    differ = [rope.ulps32(a, b) for a, b in zip(inv, t_inv.numpy()) if a != b]
    print(f"{family['name']:8s} rotary {rule:8s} head_dim {head_dim} rotary_dim {dim} "
          f"attention_scaling {float(att)!r}; torch's inv_freq differs in {len(differ)}/{dim // 2} "
          f"(max {max(differ, default=0)} ulp)")
    return dict(rule=rule, head_dim=head_dim, rotary_dim=dim, attention_scaling=float(att),
                inv_freq=[float(x) for x in inv], max_positions=cfg["max_position_embeddings"],
                interleaved=family["name"] in INTERLEAVED)


ROTARY_STRUCT = """\
// The rotary stage of the families with one (a separate list, so that the families above keep
// their layout): Hugging Face's inv_freq at init (float32, the emulation of
// generate_rope_fixtures.py with correctly rounded pow) and attention_scaling (a Python float).
struct Rotary {
    const char* family;            // model_type, as Family::name
    const char* rule;              // rope_type: "default", "llama3", "yarn", ...
    long head_dim;                 // head_dim, or hidden_size // num_attention_heads
    long rotary_dim;               // int(head_dim * partial_rotary_factor (GPT-NeoX: rotary_pct))
    long max_positions;            // max_position_embeddings
    double attention_scaling;      // the factor on cos and sin (1.0 unless yarn or longrope)
    const double* inv_freq;        // rotary_dim / 2 float32 values
    bool interleaved;              // pairs (2i, 2i + 1) rather than (i, i + rotary_dim / 2)
};
"""

# The families whose attention rotates interleaved pairs (rotate_every_two, repeat_interleave'd
# frequencies, or complex products); the others rotate halves.
INTERLEAVED = ("gptj", "codegen", "cohere", "cohere2", "llama4", "helium", "glm4", "ernie4_5", "deepseek_v2",
               "deepseek_v3", "glm4v", "kimi_k2", "aya_vision", "ernie4_5_moe", "cohere2_vision")


# ----------------------------------------------------------------------------------------------
# C++ output.

def hexfloat(value):
    text = float(value).hex()
    mantissa, exponent = text.split("p")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0")
        if mantissa.endswith("."):
            mantissa += "0"
    literal = mantissa + "p" + exponent
    assert float.fromhex(literal) == float(value)
    assert math.copysign(1.0, float.fromhex(literal)) == math.copysign(1.0, float(value))
    return literal


def cpp_string(text):
    return json.dumps(text)  # ASCII only; JSON escapes are valid C++ escapes here


class Header:
    def __init__(self):
        self.lines = []

    def array(self, ctype, name, values, per_line, fmt):
        values = list(np.asarray(values).reshape(-1))
        self.lines.append(f"inline constexpr {ctype} {name}[] = {{")
        for i in range(0, len(values), per_line):
            self.lines.append("    " + ", ".join(fmt(v) for v in values[i:i + per_line]) + ",")
        self.lines.append("};")
        return name

    def longs(self, name, values):
        return self.array("long", name, values, SEQ, lambda v: str(int(v)))

    def doubles(self, name, values, per_line):
        return self.array("double", name, values, per_line, hexfloat)


PREAMBLE = """\
// Generated by tests/reference/generate_family_fixtures.py -- do not edit by hand.
#pragma once
// {versions}
// Tiny random checkpoints of Hugging Face model families (tests/fixtures/models/<family>/) and the
// output of each family's embedding stage, computed by a line-by-line re-implementation of the
// family's PyTorch code in eval mode. See tests/reference/README.md ("Model family fixtures").
namespace seqembed_family_fixtures {{

struct Case {{
    const char* name;              // "right_padding", "left_padding" or "no_padding" (BERT, ELECTRA: with token types)
    long batch;
    long seq;
    const long* input_ids;         // batch*seq, row-major
    const long* attention_mask;    // batch*seq: 1 token, 0 padding
    const long* token_type_ids;    // batch*seq token types the embedding used, or nullptr (no token-type table)
    bool token_types_passed;       // true: passed to the model; false: the model's default (zeros) was used
    const long* position_rows;     // batch*seq row of the position table each token read, or nullptr (no table)
    long width;                    // width of the embedding stage's output
    const double* expected_f32;    // batch*seq*width: the float32 model's output (float32 values, exact)
    const double* expected_f64;    // the same modules in float64, from the same float32 weights
    long projected_width;          // ELECTRA: hidden_size after embeddings_project; 0 elsewhere
    const double* projected_f32;   // ELECTRA: embeddings_project(output), float32 run; nullptr elsewhere
    const double* projected_f64;   // ELECTRA: the same in float64; nullptr elsewhere
}};

struct Family {{
    const char* name;              // model_type
    const char* directory;         // config.json and model.safetensors, relative to the repository root
    const char* architecture;      // the Hugging Face class whose state-dict names the checkpoint uses
    const char* source;            // the Hugging Face file, commit and functions followed
    const char* position_rule;     // how the model numbers positions when called with input_ids and attention_mask
    const char* note;              // order of operations and quirks
    long pad_token_id;             // the id the cases pad with
    bool pad_token_id_in_config;   // false: the config has none (GPT-2, Llama) and the cases pad with 0
    long position_offset;          // added to the position number before the table lookup (BART, OPT: 2)
    bool layer_norm;               // a LayerNorm in the embedding stage
    double layer_norm_eps;         // its eps as the module uses it; 0 without LayerNorm
    double embed_scale;            // the Python float the token rows are multiplied by (1.0: none); float32
                                   // runs multiply by (float)embed_scale
    const char* const* tensor_names;  // every tensor in model.safetensors
    long tensor_count;
    const Case* cases;
    long case_count;
}};
"""


def generate():
    check_torch_setup()
    OUT.mkdir(parents=True, exist_ok=True)
    header = Header()
    family_names = []
    rotary_entries = []
    for family in FAMILIES:
        name = family["name"]
        cfg = family["config"]
        rng = np.random.default_rng([ISSUE, family["seed"]])
        root, forward = family["build"](cfg)
        fill_weights(root, rng)
        root.eval()

        # The checkpoint: the root's own state dict, tied aliases written once.
        state = {k: v.detach().clone().contiguous() for k, v in root.state_dict().items()
                 if k not in LEFT_OUT.get(name, [])}
        assert all(v.dtype == torch.float32 for v in state.values()), name
        family_dir = OUT / name
        family_dir.mkdir(exist_ok=True)
        (family_dir / "model.safetensors").write_bytes(safetensors_bytes(state, {"format": "pt"}))
        (family_dir / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
        written, _ = read_safetensors(family_dir / "model.safetensors")
        assert sorted(written) == sorted(state) and all(torch.equal(written[k], state[k]) for k in state)
        if name == "marian":
            table = state["model.encoder.embed_positions.weight"].numpy()
            bad = check_marian_table(table)
            assert bad == 0, f"marian: {bad} table entries differ from the correctly rounded values"
        if name == "roformer":  # its [sin | cos] table per head, which the C++ rotary stage computes
            bad = check_marian_table(state["roformer.encoder.embed_positions.weight"].numpy())
            assert bad == 0, f"roformer: {bad} table entries differ from the correctly rounded values"

        # The same modules in float64, holding the float32 weights exactly.
        root64, forward64 = family["build"](cfg)
        root64.load_state_dict(root.state_dict())
        root64.double().eval()

        text = language(cfg)
        pad = text.get("pad_token_id", 0)
        prefix = name
        has_types = family["token_types"] is not None
        case_entries = []
        for case in CASE_NAMES:
            ids, mask = make_case(case, text["vocab_size"] if "vocab_size" in text else text["src_vocab_size"], pad,
                                  rng)
            if "mask_tokens" in family:  # ESM: mask tokens among the real ones, for its token dropout
                for row, count in enumerate(family["mask_tokens"]):
                    real = np.flatnonzero(mask[row])
                    ids[row, real[1:1 + count]] = cfg["mask_token_id"]
            types = None
            if case == "no_padding" and family["token_types"] == "passed":
                types = np.array(TOKEN_TYPES, dtype=np.int64)
            ids_t, mask_t = torch.from_numpy(ids), torch.from_numpy(mask)
            types_t = None if types is None else torch.from_numpy(types)
            with torch.no_grad():
                out32, proj32, rows = forward(ids_t, mask_t, types_t)
                out64, proj64, rows64 = forward64(ids_t, mask_t, types_t)
            assert out32.dtype == torch.float32 and out64.dtype == torch.float64
            rows = None if rows is None else rows.numpy().copy()
            assert (rows is None) == (rows64 is None)
            assert rows is None or np.array_equal(rows, rows64.numpy())

            # The same numbers from the written file and the documented rule, in numpy.
            ref, ref_proj, ref_rows = numpy_reference(family, written, ids, mask, types)
            assert (ref_rows is None) == (rows is None) and (rows is None or np.array_equal(ref_rows, rows)), name
            err64 = np.abs(ref - out64.numpy()).max()
            err32 = np.abs(ref - out32.numpy().astype(np.float64)).max()
            assert err64 < 1e-12 and err32 < 1e-5, (name, case, err64, err32)
            if proj32 is not None:
                assert np.abs(ref_proj - proj64.numpy()).max() < 1e-12
                assert np.abs(ref_proj - proj32.numpy().astype(np.float64)).max() < 1e-5
            if name == "granite":
                # A float32 tensor times a Python float: torch multiplies by the float rounded to
                # float32, one float32 multiply.
                w = written["model.embed_tokens.weight"].numpy()
                factor = np.float32(cfg["embedding_multiplier"])
                assert float(factor) != cfg["embedding_multiplier"]
                assert np.array_equal(w[ids] * factor, out32.numpy()), name
            if name in ("gemma3", "gemma3_text"):
                # The float32 buffer torch.tensor(sqrt(d)), one float32 multiply: Gemma's numbers.
                w = state[[k for k in state if k.endswith("embed_tokens.weight")][0]].numpy()
                assert np.array_equal(w[ids] * np.float32(math.sqrt(24)), out32.numpy()), name
            if name in ("gemma", "gemma2", "vaultgemma"):
                # torch.tensor(hidden_size**0.5, dtype=float32): the Python double (equal to the
                # correctly rounded sqrt) rounded to float32, then one float32 multiply.
                assert cfg["hidden_size"]**0.5 == math.sqrt(cfg["hidden_size"])
                w = written["model.embed_tokens.weight"].numpy()
                assert np.array_equal(w[ids] * np.float32(math.sqrt(cfg["hidden_size"])), out32.numpy()), name
            if family["embed_scale"] != 1.0 and not family["layer_norm_eps"] and name == "marian":
                # float32 scaling: the table row times float32(sqrt(d)), one float32 multiply.
                w = written["model.encoder.embed_tokens.weight"].numpy()
                scaled = w[ids] * np.float32(family["embed_scale"])
                pos = written["model.encoder.embed_positions.weight"].numpy()[rows]
                assert np.array_equal(scaled + pos, out32.numpy()), name
            exact = np.array_equal(out32.numpy(), out64.numpy().astype(np.float32))
            print(f"{name:8s} {case:13s} max |numpy64 - torch64| = {err64:.1e}, "
                  f"|numpy64 - torch32| = {err32:.1e}{' (torch32 = float32(torch64))' if exact else ''}, "
                  f"max |output| = {np.abs(out64.numpy()).max():.2f}")

            c = f"{prefix}_{case}"
            width = out32.shape[-1]
            entry = {
                "name": case, "width": width,
                "ids": header.longs(c + "_input_ids", ids),
                "mask": header.longs(c + "_attention_mask", mask),
                "types": "nullptr", "passed": "false", "rows": "nullptr",
                "f32": header.doubles(c + "_expected_f32", out32.numpy(), width // 2),
                "f64": header.doubles(c + "_expected_f64", out64.numpy(), width // 4),
                "pwidth": 0, "p32": "nullptr", "p64": "nullptr",
            }
            if has_types:
                effective = types if types is not None else np.zeros_like(ids)
                entry["types"] = header.longs(c + "_token_type_ids", effective)
                entry["passed"] = "true" if types is not None else "false"
            if rows is not None:
                entry["rows"] = header.longs(c + "_position_rows", rows)
            if proj32 is not None:
                entry["pwidth"] = proj32.shape[-1]
                entry["p32"] = header.doubles(c + "_projected_f32", proj32.numpy(), proj32.shape[-1] // 2)
                entry["p64"] = header.doubles(c + "_projected_f64", proj64.numpy(), proj64.shape[-1] // 4)
            case_entries.append(entry)
            header.lines.append("")

        names = sorted(state)
        header.lines.append(f"inline constexpr const char* {prefix}_tensor_names[] = {{")
        for tensor_name in names:
            header.lines.append(f"    {cpp_string(tensor_name)},")
        header.lines.append("};")
        header.lines.append(f"inline constexpr Case {prefix}_cases[] = {{")
        for e in case_entries:
            header.lines.append(
                f"    {{{cpp_string(e['name'])}, {BATCH}, {SEQ}, {e['ids']}, {e['mask']}, {e['types']}, "
                f"{e['passed']}, {e['rows']}, {e['width']}, {e['f32']}, {e['f64']}, {e['pwidth']}, "
                f"{e['p32']}, {e['p64']}}},")
        header.lines.append("};")
        source = FAMILY_SOURCES[name]
        header.lines.append(f"inline constexpr Family {prefix}_family{{")
        fields = [
            cpp_string(name), cpp_string(f"tests/fixtures/models/{name}"),
            cpp_string(cfg["architectures"][0]), cpp_string(source),
            cpp_string(family["position_rule"]), cpp_string(family["note"]),
            str(pad), "true" if "pad_token_id" in text else "false", str(family["position_offset"]),
            "true" if family["layer_norm_eps"] else "false", hexfloat(family["layer_norm_eps"]),
            hexfloat(family["embed_scale"]), f"{prefix}_tensor_names", str(len(names)),
            f"{prefix}_cases", str(len(case_entries)),
        ]
        for i, field in enumerate(fields):
            header.lines.append(f"    {field}" + ("," if i + 1 < len(fields) else ""))
        header.lines.append("};")
        header.lines.append("")
        family_names.append(prefix)
        if family.get("rotary"):
            rotary_entries.append((name, rotary_stage(family)))

    versions = (f"torch {torch.__version__} (ATen CPU capability AVX2, 1 thread), numpy {np.__version__}, "
                f"mpmath {mpmath.__version__}.")
    text = [PREAMBLE.format(versions=versions)]
    text.extend(header.lines)
    text.append("// Every family above.")
    text.append("inline constexpr const Family* all_families[] = {")
    text.append("    " + ", ".join(f"&{n}_family" for n in family_names) + ",")
    text.append("};")
    text.append(f"inline constexpr long all_families_count = {len(family_names)};")
    text.append("")
    text.append(ROTARY_STRUCT)
    for name, r in rotary_entries:
        text.append(f"inline constexpr double {name}_inv_freq[] = {{")
        text.append("    " + ", ".join(hexfloat(v) for v in r["inv_freq"]) + ",")
        text.append("};")
    text.append("inline constexpr Rotary all_rotary[] = {")
    for name, r in rotary_entries:
        text.append(f"    {{{cpp_string(name)}, {cpp_string(r['rule'])}, {r['head_dim']}, {r['rotary_dim']}, "
                    f"{r['max_positions']}, {hexfloat(r['attention_scaling'])}, {name}_inv_freq, "
                    f"{'true' if r['interleaved'] else 'false'}}},")
    text.append("};")
    text.append(f"inline constexpr long all_rotary_count = {len(rotary_entries)};")
    text.append("")
    text.append("}  // namespace seqembed_family_fixtures")
    (OUT / "family_cases.hpp").write_text("\n".join(text) + "\n")
    total = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"wrote {len(family_names)} families into {OUT} ({total} bytes)")


FAMILY_SOURCES = {
    "bert": "modeling_bert.py @ 8ec58104181bfb34d824d89bccc009b4f6be6e0e: BertEmbeddings",
    "electra": "modeling_electra.py @ 014873b4dfa2482fa4f8e79e6e4fb955461f4373: ElectraEmbeddings, "
               "ElectraModel.forward (embeddings_project)",
    "roberta": "modeling_roberta.py @ 87b236ba2be8b3e48a7d0c8ca6513302736d2886: RobertaEmbeddings, "
               "create_position_ids_from_input_ids",
    "gpt2": "modeling_gpt2.py @ 0010f60284ab4b9d14b7df9c6525b1a2ad44e640: GPT2Model.forward",
    "bart": "modeling_bart.py @ 57228229d2ee2729f6ee597b4973aefdb39c2b37: BartScaledWordEmbedding, "
            "BartLearnedPositionalEmbedding, BartEncoder.forward",
    "opt": "modeling_opt.py @ ab910744d640b0ed37e2056eb94de31fd4a6979c: OPTLearnedPositionalEmbedding, "
           "OPTDecoder.forward",
    "marian": "modeling_marian.py @ 00b676f8f0489b88652a31d70751cc540dd06305: "
              "MarianSinusoidalPositionalEmbedding._init_weight/forward, MarianEncoder.forward",
    "t5": "modeling_t5.py @ 6b8b757dfcb582379a64f013cdce46c43629f2b0: T5Stack.forward",
    "llama": "modeling_llama.py @ 5dd4a63548857797727ae73eeb6a6e886ea02a3e: LlamaModel.forward",
    "mistral": "modeling_mistral.py: MistralModel.forward (embed_tokens, as LlamaModel)",
    "qwen2": "modeling_qwen2.py: Qwen2Model.forward (embed_tokens, as LlamaModel)",
    "gemma": "modeling_gemma.py @ 0125ac68d92d1866341d531c52af7165af06f3e9: GemmaModel.forward "
             "(normalizer = torch.tensor(hidden_size**0.5, dtype=hidden_states.dtype))",
    "phi": "modeling_phi.py @ 007750f36c2d23bbf9ecc769e49bc6b1a04f7393: PhiModel.forward (embed_tokens, "
           "embed_dropout); rotary dim int(partial_rotary_factor * head_dim) as released",
    "gpt_neox": "modeling_gpt_neox.py @ 006bd23dd0ce18d54e1cf260b09b15fa943a731d: GPTNeoXModel.forward "
                "(embed_in, emb_dropout), GPTNeoXAttention (rotary_ndims = int(head_size * rotary_pct), "
                "base rotary_emb_base)",
    "distilbert": "modeling_distilbert.py @ 00b326f: Embeddings.__init__/forward (LayerNorm eps 1e-12 fixed)",
    "albert": "modeling_albert.py @ 00661e3: AlbertEmbeddings, AlbertTransformer.forward "
              "(embedding_hidden_mapping_in)",
    "mpnet": "modeling_mpnet.py: MPNetEmbeddings (padding_idx = 1), create_position_ids_from_input_ids",
    "qwen3": "modeling_qwen3.py @ 000c33f: Qwen3Model.forward (embed_tokens, as LlamaModel)",
    "qwen3_moe": "modeling_qwen3_moe.py: Qwen3MoeModel.forward (embed_tokens, as LlamaModel)",
    "mixtral": "modeling_mixtral.py: MixtralModel.forward (embed_tokens, as LlamaModel)",
    "gemma2": "modeling_gemma2.py @ 9a80143: Gemma2Model.forward (normalizer, as GemmaModel)",
    "starcoder2": "modeling_starcoder2.py: Starcoder2Model.forward (embed_tokens, embedding_dropout)",
    "olmo2": "modeling_olmo2.py: Olmo2Model.forward (embed_tokens, as LlamaModel)",
    "stablelm": "modeling_stablelm.py @ 00dcc6d: StableLmModel.forward (embed_tokens), StableLmAttention "
                "(rotary_ndims = int(head_dim * partial_rotary_factor))",
    "granite": "modular_granite.py @ 023633d: GraniteModel.forward (inputs_embeds * embedding_multiplier)",
    "modernbert": "modeling_modernbert.py: ModernBertEmbeddings (tok_embeddings, norm, drop), "
                  "ModernBertRotaryEmbedding (global_rope_theta, local_rope_theta)",
    "gemma3_text": "modeling_gemma3.py: Gemma3TextScaledWordEmbedding, Gemma3TextModel.__init__ (rotary_emb, "
                   "rotary_emb_local from rope_local_base_freq)",
    "gemma3": "modeling_gemma3.py: Gemma3ForConditionalGeneration (language_model), configuration_gemma3.py: "
              "Gemma3TextConfig's defaults",
    "mbart": "modeling_mbart.py @ 00b676f8: MBartScaledWordEmbedding, MBartLearnedPositionalEmbedding, "
             "MBartEncoder.forward",
    "pegasus": "modeling_pegasus.py @ 00b676f8: PegasusSinusoidalPositionalEmbedding._init_weight/forward, "
               "PegasusEncoder.forward",
    "mt5": "configuration_mt5.py @ 053f59ef; MT5Stack as T5Stack",
    "umt5": "modeling_umt5.py @ 00063ff6: UMT5Stack.forward",
    "gpt_neo": "modeling_gpt_neo.py @ 002fb3e7: GPTNeoModel.forward",
    "gptj": "modeling_gptj.py @ 00b676f8: GPTJModel.forward, create_sinusoidal_positions",
    "codegen": "modeling_codegen.py @ 00491cee: CodeGenModel.forward (GPT-J's rotary, copied)",
    "falcon": "modeling_falcon.py @ 00dcc6dd, configuration_falcon.py @ 05585536: FalconModel.forward",
    "cohere": "modeling_cohere.py @ 015bfeb8: CohereModel.forward, CohereRotaryEmbedding",
    "deberta_v2": "modeling_deberta_v2.py @ 0038a3ca: DebertaV2Embeddings.forward",
    "deberta": "modeling_deberta.py @ 0038a3ca: DebertaEmbeddings.forward",
    "m2m_100": "modeling_m2m_100.py @ 00b676f8: M2M100ScaledWordEmbedding, "
               "M2M100SinusoidalPositionalEmbedding, M2M100Encoder.forward",
    "bloom": "modeling_bloom.py @ 0078a6cd: BloomModel.forward (word_embeddings_layernorm)",
    "mpt": "modeling_mpt.py: MptModel.forward, build_mpt_alibi_tensor",
    "gpt_bigcode": "modeling_gpt_bigcode.py (transformers 5 snapshot): GPTBigCodeModel.forward",
    "gpt_oss": "modeling_gpt_oss.py @ 6edf5b31, configuration_gpt_oss.py @ 02b8f42b: GptOssModel.forward, _apply_rotary_emb",
    "glm4": "modular_glm4.py @ 08c53278 (Glm4Attention as GlmAttention), configuration_glm4.py @ 008e5743",
    "glm4_moe": "modular_glm4_moe.py @ 0e97420c: GPT-NeoX's apply_rotary_pos_emb on the rotary slice",
    "dbrx": "modular_dbrx.py @ 05a84051, configuration_dbrx.py @ 032b32ab: DbrxModel.wte, attn_config.rope_theta",
    "deepseek_v3": "modular_deepseek_v3.py, configuration_deepseek_v3.py: head_dim = qk_rope_head_dim, rope_interleave",
    "deepseek_v2": "modular_deepseek_v2.py @ 000c33fd: apply_rotary_emb (view_as_complex)",
    "kimi_k2": "moonshotai/Kimi-K2-Instruct modeling_deepseek.py (DeepSeek-V3's: DeepseekV3YarnRotaryEmbedding, apply_rotary_pos_emb's interleave): the yarn rule as Hugging Face's",
    "llama4": "modeling_llama4.py @ 000c33fd, configuration_llama4.py @ 008e5743: Llama4ForConditionalGeneration, apply_rotary_emb",
    "qwen2_5_vl": "modeling_qwen2_vl.py @ 00b676f8: _checkpoint_conversion_mapping, apply_multimodal_rotary_pos_emb",
    "qwen3_vl": "modeling_qwen3_vl.py: Qwen3VLTextRotaryEmbedding (apply_interleaved_mrope), Qwen3VLTextConfig",
    "granitemoe": "modular_granitemoe.py @ 023633dd: GraniteMoeModel.forward (embedding_multiplier)",
    "cohere2": "modular_cohere2.py, configuration_cohere2.py @ 008e5743: Cohere2Attention (RoPE if sliding_window)",
    "smollm3": "modular_smollm3.py, configuration_smollm3.py @ 008e5743: SmolLM3Attention.use_rope",
    "lfm2": "modular_lfm2.py (Lfm2Model(LlamaModel): embed_tokens, position_ids from cache_position), configuration_lfm2.py @ 05cd1ec1 (theta, layer_types from full_attn_idxs)",
    "lfm2_moe": "modeling_lfm2_moe.py and configuration_lfm2_moe.py: LFM2's input stage and layer rule",
    "glm4v": "modeling_glm4v.py @ v4.57.1 8cb5963c (Glm4vTextModel.embed_tokens, Glm4vTextRotaryEmbedding, apply_multimodal_rotary_pos_emb's repeat_interleave), configuration_glm4v.py",
    "glm4v_moe": "modeling_glm4v_moe.py @ v4.57.1 8cb5963c (rotate_half), configuration_glm4v_moe.py (partial_rotary_factor 0.5)",
    "paligemma": "modeling_paligemma.py, configuration_paligemma.py @ v4.57.6 753d6110 (position_ids = cache_position + 1; text_config's default gemma), modeling_gemma.py (normalizer)",
    "llava": "modeling_llava.py, configuration_llava.py @ v4.57.6 753d6110 (_checkpoint_conversion_mapping, text_config's default llama)",
    "llava_next": "modeling_llava_next.py, configuration_llava_next.py @ v4.57.6 753d6110",
    "llava_onevision": "modeling_llava_onevision.py, configuration_llava_onevision.py @ v4.57.6 753d6110 (text_config's default qwen2)",
    "vipllava": "modeling_vipllava.py, configuration_vipllava.py @ v4.57.6 753d6110 (_checkpoint_conversion_mapping, text_config's default llama)",
    "idefics3": "modeling_idefics3.py, configuration_idefics3.py @ v4.57.6 753d6110 (model.text_model; text_config's default llama)",
    "smolvlm": "modeling_smolvlm.py, configuration_smolvlm.py @ v4.57.6 753d6110 (text_model; text_config's default llama)",
    "internvl": "modeling_internvl.py, configuration_internvl.py @ v4.57.6 753d6110 (text_config's default qwen2)",
    "got_ocr2": "modeling_got_ocr2.py, configuration_got_ocr2.py @ v4.57.6 753d6110 (text_config's default qwen2)",
    "qwen2_audio": "modeling_qwen2_audio.py, configuration_qwen2_audio.py @ v4.57.6 753d6110 (language_model: AutoModelForCausalLM; text_config's default qwen2)",
    "mllama": "modeling_mllama.py, configuration_mllama.py @ v4.57.6 753d6110 (embed_tokens of vocab_size + 8 rows; cross_attention_layers without rotary)",
    "aya_vision": "modeling_aya_vision.py, configuration_aya_vision.py @ v4.57.6 753d6110 (text_config's default cohere2; Cohere2Config's head_dim)",
    "granite_vision": "modeling_llava_next.py @ v4.57.6 753d6110 over modeling_granite.py (embedding_multiplier)",
    "granitemoehybrid": "modeling_granitemoehybrid.py, configuration_granitemoehybrid.py @ v4.57.6 753d6110 "
                        "(embedding_multiplier; rotary_emb only for position_embedding_type rope; layer_types)",
    "falcon_h1": "modeling_falcon_h1.py, configuration_falcon_h1.py @ v4.57.6 753d6110 (embedding_multiplier, "
                 "head_dim)",
    "bamba": "modeling_bamba.py, configuration_bamba.py @ v4.57.6 753d6110 (partial_rotary_factor 0.5, "
             "attn_layer_indices)",
    "jamba": "modeling_jamba.py, configuration_jamba.py @ v4.57.6 753d6110 (no rotary code)",
    "zamba": "modeling_zamba.py, configuration_zamba.py @ v4.57.6 753d6110 (no rotary code)",
    "zamba2": "modeling_zamba2.py, configuration_zamba2.py @ v4.57.6 753d6110 (use_mem_rope, attention_head_dim, "
              "use_long_context)",
    "qwen3_next": "modeling_qwen3_next.py, configuration_qwen3_next.py @ v4.57.6 753d6110 (partial_rotary_factor, "
                  "layer_types from full_attention_interval)",
    "ernie4_5_moe": "modeling_ernie4_5_moe.py @ v4.57.6 753d6110: apply_rotary_pos_emb (interleaved, float32)",
    "dots1": "modeling_dots1.py, configuration_dots1.py @ v4.57.6 753d6110",
    "phimoe": "modeling_phimoe.py @ v4.57.6 753d6110: PhimoeRotaryEmbedding (short_mscale / long_mscale)",
    "minimax": "modeling_minimax.py, configuration_minimax.py @ v4.57.6 753d6110 (whole-head RoPE in "
               "MiniMaxAttention; layer_types)",
    "vaultgemma": "modeling_vaultgemma.py @ v4.57.6 753d6110: VaultGemmaModel.forward (normalizer)",
    "lfm2_vl": "modeling_lfm2_vl.py, configuration_lfm2_vl.py @ v4.57.6 753d6110",
    "cohere2_vision": "modeling_cohere2_vision.py, configuration_cohere2_vision.py @ v4.57.6 753d6110",
    "perception_lm": "modeling_perception_lm.py, configuration_perception_lm.py @ v4.57.6 753d6110",
    "ovis2": "modeling_ovis2.py, configuration_ovis2.py @ v4.57.6 753d6110 (text_config always Qwen2Config)",
    "roberta_prelayernorm": "modeling_roberta_prelayernorm.py @ v4.57.6 753d6110: RobertaPreLayerNormEmbeddings",
    "ibert": "modeling_ibert.py, quant_modules.py @ v4.57.6 753d6110: IBertEmbeddings (quant_mode false)",
    "convbert": "modeling_convbert.py @ v4.57.6 753d6110: ConvBertEmbeddings, ConvBertModel.embeddings_project",
    "funnel": "modeling_funnel.py @ v4.57.6 753d6110: FunnelEmbeddings",
    "xlm": "modeling_xlm.py @ v4.57.6 753d6110: XLMModel.forward's embeddings",
    "fsmt": "modeling_fsmt.py @ v4.57.6 753d6110: FSMTEncoder, SinusoidalPositionalEmbedding, make_positions",
    "trocr": "modeling_trocr.py @ v4.57.6 753d6110: TrOCRDecoder, TrOCRScaledWordEmbedding, TrOCRLearnedPositionalEmbedding",
    "donut": "modeling_vision_encoder_decoder.py, modeling_mbart.py @ v4.57.6 753d6110: MBartForCausalLM's MBartDecoder",
    "vit_gpt2": "modeling_vision_encoder_decoder.py, modeling_gpt2.py @ v4.57.6 753d6110: GPT2LMHeadModel's GPT2Model",
    "trocr_printed": "modeling_trocr.py @ v4.57.6 753d6110: TrOCRDecoder, TrOCRSinusoidalPositionalEmbedding; "
                     "VisionEncoderDecoderModel's decoder",
    "flaubert": "modeling_flaubert.py @ v4.57.6 753d6110: FlaubertModel.forward's embeddings",
    "plbart": "modeling_plbart.py, configuration_plbart.py @ v4.57.6 753d6110 (BART's modules)",
    "blenderbot": "modeling_blenderbot.py @ v4.57.6 753d6110: BlenderbotLearnedPositionalEmbedding, BlenderbotEncoder",
    "bigbird_pegasus": "modeling_bigbird_pegasus.py @ v4.57.6 753d6110: BigBirdPegasusLearnedPositionalEmbedding, "
                       "BigBirdPegasusEncoder",
    "led": "modeling_led.py @ v4.57.6 753d6110: LEDLearnedPositionalEmbedding, LEDEncoder (no scale)",
    "biogpt": "modeling_biogpt.py @ v4.57.6 753d6110: BioGptScaledWordEmbedding, BioGptLearnedPositionalEmbedding",
    "xglm": "modeling_xglm.py @ v4.57.6 753d6110: XGLMScaledWordEmbedding, XGLMSinusoidalPositionalEmbedding",
    "mvp": "modeling_mvp.py, configuration_mvp.py @ v4.57.6 753d6110 (BART's stage)",
    "nllb_moe": "modeling_nllb_moe.py, configuration_nllb_moe.py @ v4.57.6 753d6110 (M2M100's modules)",
    "chameleon": "modeling_chameleon.py, configuration_chameleon.py @ v4.57.6 753d6110",
    "emu3": "modeling_emu3.py, configuration_emu3.py @ v4.57.6 753d6110 (Emu3TextConfig; text_model.model)",
    "janus": "modeling_janus.py, configuration_janus.py @ v4.57.6 753d6110",
    "fuyu": "modeling_fuyu.py, configuration_fuyu.py @ v4.57.6 753d6110 (Persimmon from the top-level keys)",
    "jetmoe": "modeling_jetmoe.py, configuration_jetmoe.py @ v4.57.6 753d6110 (head_dim: kv_channels)",
    "diffllama": "modeling_diffllama.py, configuration_diffllama.py @ v4.57.6 753d6110",
    "doge": "modeling_doge.py, configuration_doge.py @ v4.57.6 753d6110",
    "recurrent_gemma": "modeling_recurrent_gemma.py, configuration_recurrent_gemma.py @ v4.57.6 753d6110 "
                       "(bfloat16 normalizer, partial_rotary_factor 0.5, block_types)",
    "voxtral": "modeling_voxtral.py, configuration_voxtral.py @ v4.57.6 753d6110 (_default_text_config_kwargs over text_config's llama)",
    "clip": "modeling_clip.py @ v4.57.6 753d6110: CLIPTextEmbeddings, CLIPModel.text_model; configuration_clip.py (CLIPTextConfig's defaults)",
    "clip_text_model": "modeling_clip.py @ v4.57.6 753d6110: CLIPTextModel.text_model",
    "siglip": "modeling_siglip.py @ v4.57.6 753d6110: SiglipTextEmbeddings, SiglipModel.text_model; configuration_siglip.py",
    "siglip2_text_model": "modeling_siglip2.py @ v4.57.6 753d6110: Siglip2TextEmbeddings, Siglip2TextModel.text_model",
    "whisper": "modeling_whisper.py @ v4.57.6 753d6110: WhisperDecoder.forward (cache_position, embed_scale unused), WhisperPositionalEmbedding",
    "mamba": "modeling_mamba.py @ v4.57.6 753d6110: MambaModel.embeddings, its load hook (embedding. -> embeddings.)",
    "mamba2": "modeling_mamba2.py @ v4.57.6 753d6110: Mamba2Model.embeddings, its load hook",
    "falcon_mamba": "modeling_falcon_mamba.py @ v4.57.6 753d6110: FalconMambaModel.embeddings",
    "nomic_bert": "nomic-ai/contrastors @ 613ddfd src/contrastors/models/huggingface/modeling_hf_nomic_bert.py (NomicBertEmbeddings, NomicBertModel: emb_ln, pad_vocab_size_multiple; NomicBertRotaryEmbedding), configuration_hf_nomic_bert.py",
    "hunyuan_v1_dense": "modeling_hunyuan_v1_dense.py @ v4.56.0 e7d351ce (HunYuanDenseV1RotaryEmbedding's NTK-alpha, embed_tokens), configuration_hunyuan_v1_dense.py",
    "hunyuan_v1_moe": "modeling_hunyuan_v1_moe.py @ v4.56.0 e7d351ce (the same rotary module), configuration_hunyuan_v1_moe.py",
    "olmo3": "modular_olmo3.py @ 02e8340b, configuration_olmo3.py @ 008e5743: rotary_embs by layer type",
    "persimmon": "modeling_persimmon.py @ 93a5d5f4: PersimmonAttention (partial rotary)",
    "mistral3": "modeling_mistral3.py @ 00dcc6dd, configuration_mistral3.py @ 0db25542: _checkpoint_conversion_mapping",
    "apertus": "modular_apertus.py @ 008e5743: ApertusConfig's default rope_parameters (llama3)",
    "helium": "modular_helium.py @ 0911f54a: apply_rotary_pos_emb (interleaved)",
    "ernie4_5": "modular_ernie4_5.py @ 016bc8ef: apply_rotary_pos_emb (interleaved, float32)",
    "nemotron": "modeling_nemotron.py @ 694aaa7f: apply_rotary_pos_emb (rotary slice)",
    "exaone4": "modular_exaone4.py @ 008e5743: Exaone4Attention (RoPE if sliding_window is None or is_sliding)",
    "seed_oss": "modular_seed_oss.py @ 052b1dcd, configuration_seed_oss.py @ 008e5743",
    "bitnet": "configuration_bitnet.py @ 008f5c8c: BitNetConfig's defaults",
    "olmoe": "modular_olmoe.py @ 052b1dcd, configuration_olmoe.py @ 008e5743",
    "longformer": "modeling_longformer.py @ 010a915c: LongformerEmbeddings.forward",
    "data2vec_text": "modeling_data2vec_text.py @ 014873b4: Data2VecTextForTextEmbeddings",
    "xmod": "modeling_xmod.py @ 014873b4: XmodEmbeddings",
    "xlm_roberta_xl": "modeling_xlm_roberta_xl.py @ 014873b4: XLMRobertaXLEmbeddings (no LayerNorm)",
    "big_bird": "modeling_big_bird.py @ 00967fa0: BigBirdEmbeddings (rescale_embeddings)",
    "megatron_bert": "modeling_megatron_bert.py @ 014873b4: MegatronBertEmbeddings (no LayerNorm)",
    "ernie": "modeling_ernie.py @ 008f5c8c: ErnieEmbeddings (task_type_embeddings when use_task_id)",
    "splinter": "modeling_splinter.py @ 014873b4: SplinterEmbeddings",
    "squeezebert": "modeling_squeezebert.py @ 01ae98ae: SqueezeBertEmbeddings",
    "rembert": "modeling_rembert.py @ 02fb0d2b: RemBertEmbeddings, RemBertEncoder (embedding_hidden_mapping_in)",
    "bert_generation": "modeling_bert_generation.py @ 000824f1: BertGenerationEmbeddings",
    "nystromformer": "modeling_nystromformer.py @ 0085ddcd: NystromformerEmbeddings (position_ids + 2)",
    "yoso": "modeling_yoso.py @ 004edfe2: YosoEmbeddings",
    "mra": "modeling_mra.py @ 001aea8f: MraEmbeddings",
    "roformer": "modeling_roformer.py @ 0166003b: RoFormerEmbeddings, RoFormerSinusoidalPositionalEmbedding, "
                "apply_rotary_position_embeddings",
    "esm": "modeling_esm.py @ 0220b9db: EsmEmbeddings.forward (token_dropout), RotaryEmbedding (inv_freq buffer)",
    "esm1b": "modeling_esm.py @ 0220b9db: EsmEmbeddings.forward (absolute positions, emb_layer_norm_before)",
    "owlvit": "modeling_owlvit.py @ v4.57.6 753d6110: OwlViTTextEmbeddings, OwlViTForObjectDetection.owlvit; "
              "configuration_owlvit.py (OwlViTTextConfig's defaults)",
    "owlv2": "modeling_owlv2.py @ v4.57.6 753d6110: Owlv2TextEmbeddings, Owlv2Model.text_model",
    "xclip": "modeling_x_clip.py @ v4.57.6 753d6110: XCLIPTextEmbeddings; configuration_x_clip.py "
             "(XCLIPConfig's text_config_dict)",
    "groupvit": "modeling_groupvit.py @ v4.57.6 753d6110: GroupViTTextEmbeddings, GroupViTModel.text_model",
    "clipseg": "modeling_clipseg.py @ v4.57.6 753d6110: CLIPSegTextEmbeddings, CLIPSegForImageSegmentation.clip",
    "chinese_clip": "modeling_chinese_clip.py @ v4.57.6 753d6110: ChineseCLIPTextEmbeddings, "
                    "ChineseCLIPModel.text_model; configuration_chinese_clip.py",
    "chinese_clip_text_model": "modeling_chinese_clip.py @ v4.57.6 753d6110: ChineseCLIPTextModel",
    "align": "modeling_align.py @ v4.57.6 753d6110: AlignTextEmbeddings, AlignModel.text_model",
    "flava": "modeling_flava.py @ v4.57.6 753d6110: FlavaTextEmbeddings, FlavaForPreTraining.flava",
    "altclip": "modeling_altclip.py @ v4.57.6 753d6110: AltRobertaEmbeddings, AltCLIPTextModel.roberta; "
               "configuration_altclip.py (AltCLIPTextConfig's defaults)",
    "clap": "modeling_clap.py @ v4.57.6 753d6110: ClapTextEmbeddings, ClapModel.text_model",
    "bridgetower": "modeling_bridgetower.py @ v4.57.6 753d6110: BridgeTowerTextEmbeddings, "
                   "BridgeTowerForMaskedLM.bridgetower",
    "blip": "modeling_blip_text.py @ v4.57.6 753d6110: BlipTextEmbeddings; modeling_blip.py: "
            "BlipForQuestionAnswering (text_encoder, text_decoder); configuration_blip.py (BlipTextConfig)",
    "blip_captioning": "modeling_blip.py @ v4.57.6 753d6110: BlipForConditionalGeneration.text_decoder",
    "longt5": "modeling_longt5.py @ v4.57.6 753d6110: LongT5Stack.forward (embed_tokens, the shared table)",
    "switch_transformers": "modeling_switch_transformers.py @ v4.57.6 753d6110: SwitchTransformersStack.forward",
    "git": "modeling_git.py @ v4.57.6 753d6110: GitEmbeddings, GitForCausalLM.git; configuration_git.py",
    "speech_to_text": "modeling_speech_to_text.py @ v4.57.6 753d6110: Speech2TextDecoder.forward, "
                      "Speech2TextSinusoidalPositionalEmbedding",
    "dpr": "modeling_dpr.py @ v4.57.6 753d6110: DPREncoder.bert_model, DPRContextEncoder.ctx_encoder",
    "xlnet": "modeling_xlnet.py @ v4.57.6 753d6110: XLNetModel.forward (word_emb_k)",
    "openai_gpt": "modeling_openai.py @ v4.57.6 753d6110: OpenAIGPTModel.forward",
    "blip2_opt": "modeling_blip_2.py @ v4.57.6 753d6110: Blip2ForConditionalGeneration.language_model; "
                 "configuration_blip_2.py (text_config's model_type, opt by default)",
    "instructblip_t5": "modeling_instructblip.py @ v4.57.6 753d6110: InstructBlipForConditionalGeneration",
    "instructblip_vicuna": "modeling_instructblip.py @ v4.57.6 753d6110: InstructBlipForConditionalGeneration",
    "kosmos2": "modeling_kosmos2.py @ v4.57.6 753d6110: Kosmos2TextTransformer.forward_embedding, "
               "Kosmos2TextSinusoidalPositionalEmbedding; configuration_kosmos2.py (Kosmos2TextConfig)",
}


if __name__ == "__main__":
    if len(sys.argv) != 1:
        print(__doc__)
        sys.exit(2)
    generate()
