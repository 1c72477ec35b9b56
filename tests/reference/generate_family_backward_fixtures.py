#!/usr/bin/python3
"""What PyTorch's autograd gives for each model family's embedding stage (issue 28).

    /usr/bin/python3 tests/reference/generate_family_backward_fixtures.py

Run after generate_family_fixtures.py, whose checkpoints it reads back. For every family of that
script and each of its cases, it builds the same modules (the same builders, seeds and draws, so
the same weights and ids; checked against the written model.safetensors), runs the float64 copy
with gradients, and writes into tests/fixtures/models/<family>/backward.safetensors:

  <case>.input_ids, <case>.attention_mask   I64, batch x seq (the case's; a fourth case, low_ids,
                                            reads rows 0 to 6 with every token attended, so that
                                            each family's padding_idx row is read);
  <case>.token_type_ids                     I64, when the case passes token types;
  <case>.grad_output                        F32, (batch * seq) x width: a seeded normal draw,
                                            zero on padded tokens' rows; width is the model
                                            output's (ELECTRA's and ALBERT's after their
                                            projection);
  <case>.computed.*                         for the cases with padding, the same draw on every
                                            row (grad_output) and the gradients below from it:
                                            what a stage that computes the padded rows as the
                                            framework does (PaddedRows::computed) passes back;
  <case>.<role>.rows, <case>.<role>         I64 and F64: the rows of a table with a nonzero
                                            gradient and their gradient, for the roles token,
                                            positions, token_types and task_types (ERNIE's);
  <case>.<role>                             F64: LayerNorm's gamma and beta, the projection's
                                            weight and bias, dense.

The gradient is that of sum(output * grad_output) with respect to each parameter, by autograd in
float64 from the float32 weights (exactly). Every parameter with a gradient is given one role by
the module that holds it (nn.Embedding: task_types or token_types when its name says so,
positions when its name does, token otherwise; a LayerNorm: gamma and beta (ModernBERT's has no
bias); nn.Linear: the projection), and the
script stops on a parameter it cannot place. A table with nn.Embedding's padding_idx has no
gradient in that row, as the module gives none.

Use Debian's interpreter (torch 1.13, numpy). Running it twice gives identical files.
"""

import os
import sys

os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pathlib

import numpy as np
import torch
from torch import nn

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import generate_family_fixtures as families  # noqa: E402  (the builders, weights and cases)
from generate_io_fixtures import read_safetensors, safetensors_bytes  # noqa: E402

ISSUE = 28
# A fourth case, every token attended, that reads the table rows 0 to 6 (where the families'
# pad ids are: nn.Embedding's padding_idx row takes no gradient, whatever the mask says).
LOW_IDS = "low_ids"
LOW_ID_ROWS = [[0, 1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1, 0], [1, 1, 0, 0, 2, 2, 3]]


def roles_of(root):
    """{id(parameter): role} for every parameter of the modules, by the module that holds it."""
    roles = {}
    for name, module in root.named_modules():
        lowered = name.lower()
        if isinstance(module, nn.Embedding):
            if "task_type" in lowered:
                role = "task_types"
            elif "token_type" in lowered or "segment" in lowered:
                role = "token_types"
            elif "position" in lowered or lowered.endswith("wpe"):
                role = "positions"
            else:
                role = "token"
            roles[id(module.weight)] = role
        elif isinstance(module, (nn.LayerNorm, families.NoBiasLayerNorm)):
            roles[id(module.weight)] = "gamma"
            if getattr(module, "bias", None) is not None:
                roles[id(module.bias)] = "beta"
        elif isinstance(module, nn.Linear):
            roles[id(module.weight)] = "projection_weight"
            if module.bias is not None:
                roles[id(module.bias)] = "projection_bias"
    return roles


def gradients_of(family, root64, forward64, ids, mask, types, grad_output):
    """{role: float64 gradient} of sum(output * grad_output), by autograd."""
    root64.zero_grad(set_to_none=True)
    with torch.enable_grad():
        out, projected, _ = forward64(torch.from_numpy(ids), torch.from_numpy(mask),
                                      None if types is None else torch.from_numpy(types))
        output = projected if projected is not None else out
        output = output.reshape(-1, output.shape[-1])
        assert output.shape == grad_output.shape, (family["name"], output.shape, grad_output.shape)
        (output * torch.from_numpy(grad_output.astype(np.float64))).sum().backward()
    roles = roles_of(root64)
    found = {}
    for name, parameter in root64.named_parameters():
        if parameter.grad is None:
            continue
        if id(parameter) not in roles:
            sys.exit(f"{family['name']}: no role for the gradient of parameter {name}")
        role = roles[id(parameter)]
        assert role not in found, (family["name"], role, name)
        found[role] = parameter.grad.detach().numpy().copy()
    return found


def generate():
    families.check_torch_setup()
    written_families = 0
    for family in families.FAMILIES:
        name = family["name"]
        cfg = family["config"]
        # The draws of generate_family_fixtures.generate(), in its order.
        rng = np.random.default_rng([families.ISSUE, family["seed"]])
        root, _ = family["build"](cfg)
        families.fill_weights(root, rng)
        root.eval()
        family_dir = families.OUT / name
        written, _ = read_safetensors(family_dir / "model.safetensors")
        state = root.state_dict()
        for key, value in written.items():
            assert torch.equal(value, state[key]), (name, key, "model.safetensors is not this script's")

        root64, forward64 = family["build"](cfg)
        root64.load_state_dict(root.state_dict())
        root64.double().eval()

        text = families.language(cfg)
        pad = text.get("pad_token_id", 0)
        tensors = {}
        vocab = text["vocab_size"] if "vocab_size" in text else text["src_vocab_size"]
        for index, case in enumerate(families.CASE_NAMES + [LOW_IDS]):
            if case == LOW_IDS:
                ids = np.array(LOW_ID_ROWS, dtype=np.int64)
                mask = np.ones_like(ids)
            else:
                ids, mask = families.make_case(case, vocab, pad, rng)
            if "mask_tokens" in family and case != LOW_IDS:
                for row, count in enumerate(family["mask_tokens"]):
                    real = np.flatnonzero(mask[row])
                    ids[row, real[1:1 + count]] = cfg["mask_token_id"]
            types = None
            if case == "no_padding" and family["token_types"] == "passed":
                types = np.array(families.TOKEN_TYPES, dtype=np.int64)

            with torch.no_grad():
                out, projected, _ = forward64(torch.from_numpy(ids), torch.from_numpy(mask),
                                              None if types is None else torch.from_numpy(types))
            width = (projected if projected is not None else out).shape[-1]
            draw = np.random.default_rng([ISSUE, family["seed"], index])
            whole = draw.standard_normal((ids.size, width)).astype(np.float32)
            tensors[f"{case}.input_ids"] = torch.from_numpy(ids)
            tensors[f"{case}.attention_mask"] = torch.from_numpy(mask)
            if types is not None:
                tensors[f"{case}.token_type_ids"] = torch.from_numpy(types)
            # Padded rows pass nothing back; with padding, again with a gradient on every row,
            # for a stage that computes the padded rows as the framework does.
            variants = [(case, np.where(mask.reshape(-1, 1) == 0, np.float32(0), whole))]
            if not mask.all():
                variants.append((f"{case}.computed", whole))
            for prefix, grad_output in variants:
                gradients = gradients_of(family, root64, forward64, ids, mask, types, grad_output)
                tensors[f"{prefix}.grad_output"] = torch.from_numpy(np.ascontiguousarray(grad_output))
                for role, grad in sorted(gradients.items()):
                    if role in ("token", "positions", "token_types", "task_types"):
                        rows = np.flatnonzero(np.any(grad != 0, axis=1)).astype(np.int64)
                        tensors[f"{prefix}.{role}.rows"] = torch.from_numpy(rows)
                        tensors[f"{prefix}.{role}"] = torch.from_numpy(np.ascontiguousarray(grad[rows]))
                    else:
                        tensors[f"{prefix}.{role}"] = torch.from_numpy(np.ascontiguousarray(grad))
                print(f"{name:24s} {prefix:22s} " + ", ".join(f"{r} {g.shape}" for r, g in sorted(gradients.items())))
        (family_dir / "backward.safetensors").write_bytes(safetensors_bytes(tensors, {"format": "pt"}))
        written_families += 1
    print(f"wrote backward.safetensors for {written_families} families")


if __name__ == "__main__":
    if len(sys.argv) != 1:
        print(__doc__)
        sys.exit(2)
    generate()
