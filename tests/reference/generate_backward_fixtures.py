#!/usr/bin/python3
"""Golden gradients of the input stage from PyTorch's autograd (issue 28).

    /usr/bin/python3 tests/reference/generate_backward_fixtures.py

Writes tests/fixtures/backward/backward_cases.hpp (namespace seqembed_backward_fixtures). Use
Debian's interpreter (torch 1.13). Running it twice gives a byte-identical header; CI never runs
Python.

The stage is BERT's with RoBERTa's position offset, written in torch as the frameworks write it:

    x = F.embedding(ids, token, padding_idx=1) * scale + types[type_ids] + positions[2 + pos]
    y = F.layer_norm(x, (d,), gamma, beta, 1e-5) * mask          # mask: dropout's, given
    y = y * attention_mask[..., None]                            # padded rows are zero

with pos the number of real tokens before the token plus its sequence's step offset (seqembed's
PositionNumbering::real_tokens with StepOffsets). The loss is sum(y * g); the fixture holds
autograd's gradients of the token, position and type tables and of gamma and beta, in float32
and float64. The dropout mask (kept with probability 0.8, scaled by 1 / 0.8) is drawn here and
written out: seqembed's own mask is tested against the call's in tests/test_backward.cpp, and
here the C++ test multiplies g by this mask and runs the backward of evaluation.

A second case is RoBERTa's stage as Hugging Face's RobertaEmbeddings writes it, where both tables
are nn.Embedding(..., padding_idx=PAD) and every row is computed (pad ids included):

    position_ids = (cumsum(ids != PAD) + past) * (ids != PAD) + PAD
    x = F.embedding(ids, token, padding_idx=PAD) + types[type_ids]
        + F.embedding(position_ids, positions, padding_idx=PAD)
    y = F.layer_norm(x, (d,), gamma, beta, 1e-5) * mask

so neither table's row PAD receives a gradient, though pad ids read both.

A third case is an encoder and a decoder holding one token table, as BART's shared nn.Embedding
(sparse gradients) is held by its encoder and decoder, each with its own learned positions (by
index, after the decoder's past tokens) and layernorm_embedding:

    x_enc = F.embedding(src, shared, padding_idx=PAD, sparse=True) * scale + enc_pos[2 + t]
    x_dec = F.embedding(tgt, shared, padding_idx=PAD, sparse=True) * scale + dec_pos[2 + past + t]
    loss = sum(F.layer_norm(x_enc, ...) * g_enc) + sum(F.layer_norm(x_dec, ...) * g_dec)

trained for two steps of torch.optim.SparseAdam (lr 0.01) on the shared table: the fixture holds
the first step's gradient (both stages' reads summed) and the table after the second step, which
reads the table the first step wrote.
"""
import os
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures", "backward", "backward_cases.hpp")

VOCAB, D, MAX_POS, TYPES, OFFSET, PAD = 12, 8, 16, 2, 2, 1
IDS = [[5, 5, 3, 7, 3, 9], [1, 4, 4, 4, 11, 0], [2, 6, 6, 8, 10, 3]]
ATTENTION = [[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 0]]
TYPE_IDS = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1], [1, 0, 1, 0, 1, 0]]
STEP_OFFSETS = [0, 3, 1]
SCALE = 2.0


def positions():
    out = []
    for b, row in enumerate(ATTENTION):
        real, seq = 0, []
        for t, m in enumerate(row):
            seq.append(real + STEP_OFFSETS[b] if m else 0)
            real += m
        out.append(seq)
    return out


def weights(dtype, seed, rows):
    """The tables, LayerNorm's weights, the output's gradient and the dropout mask of `rows` rows."""
    g = torch.Generator().manual_seed(seed)
    normal = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
    token = normal(VOCAB, D)
    pos_table = normal(MAX_POS, D)
    type_table = normal(TYPES, D)
    gamma = (1.0 + 0.5 * normal(D)).to(dtype)
    beta = normal(D)
    grad_out = normal(rows, D)
    mask = (torch.rand(rows, D, generator=g, dtype=torch.float64) < 0.8).to(dtype) / torch.tensor(0.8, dtype=dtype)
    return dict(token=token, positions=pos_table, types=type_table, gamma=gamma, beta=beta, grad_out=grad_out,
                mask=mask)


def autograd(inputs, loss_of):
    """The inputs with autograd's gradients of the tables and LayerNorm's weights, from
    loss_of(token, positions, types, gamma, beta)."""
    params = [inputs[k].clone().requires_grad_(True) for k in ("token", "positions", "types", "gamma", "beta")]
    loss_of(*params).backward()
    w, pt, tt, ga, be = params
    grads = dict(token_grad=w.grad, positions_grad=pt.grad, types_grad=tt.grad, gamma_grad=ga.grad, beta_grad=be.grad)
    return inputs, grads


def run(dtype):
    inputs = weights(dtype, 2028, len(IDS) * len(IDS[0]))
    ids = torch.tensor(IDS)
    rows = torch.tensor(positions()) + OFFSET

    def loss(w, pt, tt, ga, be):
        x = F.embedding(ids, w, padding_idx=PAD) * torch.tensor(SCALE, dtype=dtype) + tt[torch.tensor(TYPE_IDS)] + pt[rows]
        y = F.layer_norm(x, (D,), ga, be, 1e-5).reshape(-1, D) * inputs["mask"]
        y = y * torch.tensor(ATTENTION, dtype=dtype).reshape(-1, 1)
        return (y * inputs["grad_out"]).sum()

    return autograd(inputs, loss)


ROBERTA_IDS = [[0, 5, 5, 2, 1, 1], [1, 1, 0, 7, 3, 2], [0, 4, 1, 9, 11, 2]]
ROBERTA_TYPE_IDS = [[0, 0, 0, 0, 0, 0], [0, 0, 0, 1, 1, 1], [1, 0, 1, 0, 1, 0]]
ROBERTA_PAST = [0, 2, 1]


def run_roberta(dtype):
    inputs = weights(dtype, 2029, len(ROBERTA_IDS) * len(ROBERTA_IDS[0]))
    ids = torch.tensor(ROBERTA_IDS)
    real = ids.ne(PAD).long()
    position_ids = (torch.cumsum(real, dim=1) + torch.tensor(ROBERTA_PAST).reshape(-1, 1)) * real + PAD

    def loss(w, pt, tt, ga, be):
        x = (F.embedding(ids, w, padding_idx=PAD) + tt[torch.tensor(ROBERTA_TYPE_IDS)]
             + F.embedding(position_ids, pt, padding_idx=PAD))
        y = F.layer_norm(x, (D,), ga, be, 1e-5).reshape(-1, D) * inputs["mask"]
        return (y * inputs["grad_out"]).sum()

    return autograd(inputs, loss)


TIED_SRC = [[0, 5, 5, 7, 2, 1], [0, 9, 3, 2, 1, 1]]
TIED_TGT = [[2, 0, 5, 6, 6], [2, 0, 11, 3, 1]]
TIED_PAST = 3
TIED_LR = 0.01


def run_tied(dtype):
    g = torch.Generator().manual_seed(2030)
    normal = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
    inputs = dict(token=normal(VOCAB, D), enc_positions=normal(MAX_POS, D), dec_positions=normal(MAX_POS, D),
                  enc_gamma=(1.0 + 0.5 * normal(D)).to(dtype), enc_beta=normal(D),
                  dec_gamma=(1.0 + 0.5 * normal(D)).to(dtype), dec_beta=normal(D),
                  grad_enc=normal(len(TIED_SRC) * len(TIED_SRC[0]), D),
                  grad_dec=normal(len(TIED_TGT) * len(TIED_TGT[0]), D))
    shared = inputs["token"].clone().requires_grad_(True)
    optimizer = torch.optim.SparseAdam([shared], lr=TIED_LR)
    src, tgt = torch.tensor(TIED_SRC), torch.tensor(TIED_TGT)
    enc_rows = torch.arange(src.shape[1]) + OFFSET
    dec_rows = torch.arange(TIED_PAST, TIED_PAST + tgt.shape[1]) + OFFSET
    scale = torch.tensor(SCALE, dtype=dtype)

    def stage(ids, positions, gamma, beta):
        x = F.embedding(ids, shared, padding_idx=PAD, sparse=True) * scale + positions
        return F.layer_norm(x, (D,), gamma, beta, 1e-5).reshape(-1, D)

    first_grad = None
    for _ in range(2):
        optimizer.zero_grad()
        y_enc = stage(src, inputs["enc_positions"][enc_rows], inputs["enc_gamma"], inputs["enc_beta"])
        y_dec = stage(tgt, inputs["dec_positions"][dec_rows], inputs["dec_gamma"], inputs["dec_beta"])
        ((y_enc * inputs["grad_enc"]).sum() + (y_dec * inputs["grad_dec"]).sum()).backward()
        if first_grad is None:
            first_grad = shared.grad.coalesce().to_dense().clone()
        optimizer.step()
    return inputs, dict(token_grad=first_grad, token_after=shared.detach().clone())


def hexes(t):
    return ", ".join(float(x).hex() for x in t.reshape(-1).tolist())


def main():
    torch.set_num_threads(1)
    lines = [
        "// Generated by tests/reference/generate_backward_fixtures.py. Do not edit by hand.",
        "#pragma once",
        "",
        "namespace seqembed_backward_fixtures {",
        "",
        "constexpr int vocab = %d, d_model = %d, max_positions = %d, type_rows = %d;" % (VOCAB, D, MAX_POS, TYPES),
        "constexpr long position_offset = %d, padding_idx = %d;" % (OFFSET, PAD),
        "constexpr double scale = %s;" % float(SCALE).hex(),
        "constexpr int batch = %d, seq = %d;" % (len(IDS), len(IDS[0])),
        "constexpr long ids[] = {%s};" % ", ".join(str(v) for row in IDS for v in row),
        "constexpr long attention_mask[] = {%s};" % ", ".join(str(v) for row in ATTENTION for v in row),
        "constexpr long token_types[] = {%s};" % ", ".join(str(v) for row in TYPE_IDS for v in row),
        "constexpr long step_offsets[] = {%s};" % ", ".join(str(v) for v in STEP_OFFSETS),
        "constexpr long roberta_ids[] = {%s};" % ", ".join(str(v) for row in ROBERTA_IDS for v in row),
        "constexpr long roberta_token_types[] = {%s};" % ", ".join(str(v) for row in ROBERTA_TYPE_IDS for v in row),
        "constexpr long roberta_past[] = {%s};" % ", ".join(str(v) for v in ROBERTA_PAST),
        "constexpr int tied_batch = %d, tied_src_seq = %d, tied_tgt_seq = %d;" % (
            len(TIED_SRC), len(TIED_SRC[0]), len(TIED_TGT[0])),
        "constexpr long tied_src[] = {%s};" % ", ".join(str(v) for row in TIED_SRC for v in row),
        "constexpr long tied_tgt[] = {%s};" % ", ".join(str(v) for row in TIED_TGT for v in row),
        "constexpr long tied_past = %d;" % TIED_PAST,
        "constexpr double tied_lr = %s;" % float(TIED_LR).hex(),
        "",
    ]
    autograd_holds = "the weights, the output's gradient and dropout mask, and autograd's gradients"
    for case, runner, about, holds in (
            ("Case", run, "BERT-like, padded rows zero", autograd_holds),
            ("RobertaCase", run_roberta, "RoBERTa's, every row computed", autograd_holds),
            ("TiedCase", run_tied, "BART's shared table",
             "the weights, the outputs' gradients, the first step's gradient and the table after two SparseAdam steps")):
        for dtype, tag in ((torch.float32, "float"), (torch.float64, "double")):
            inputs, grads = runner(dtype)
            lines.append("/// %s, %s: %s." % (about, tag, holds))
            lines.append("struct %s_%s {" % (case, tag))
            for name, t in list(inputs.items()) + list(grads.items()):
                lines.append("    static constexpr double %s[] = {%s};" % (name, hexes(t)))
            lines.append("};")
            lines.append("")
    lines.append("}  // namespace seqembed_backward_fixtures")
    lines.append("")
    with open(OUT, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
