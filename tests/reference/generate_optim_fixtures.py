#!/usr/bin/python3
"""Golden trajectories for the optimizers (issue 28).

    /usr/bin/python3 tests/reference/generate_optim_fixtures.py

Writes tests/fixtures/optim/optim_cases.hpp (namespace seqembed_optim_fixtures). Use Debian's
interpreter (torch 1.13). Running it twice gives a byte-identical header; CI never runs Python.

Each case is one table (6 x 5) trained for ten steps in float32 and float64. Every step's
gradient lists a few rows (sorted, unique) with random values, and each step has its own
learning rate (the C++ step takes it as an argument). The weights after every step are recorded.

How the numbers are made:
  * Sgd, Adam, AdamW: torch.optim.SGD / Adam / AdamW on the dense gradient (zero on the rows not
    listed), with the options in the case's name.
  * SparseAdam: torch.optim.SparseAdam on torch.sparse_coo_tensor gradients.
  * LazySgd: torch.optim.SGD on one parameter per table row, stepped only when the row is listed,
    which is the lazy rule (each row's momentum buffer starts at its first update).
  * RowwiseAdagrad: FBGEMM's CPU rule (fbgemm_gpu/codegen/genscript/optimizers.py,
    rowwise_adagrad's split_weight_update_cpu) written out in torch scalars of the case's dtype:
    the row's sum of squares in column order, mean, accumulator, multiplier, correction.
"""
import os
import torch

ROWS, COLS, STEPS = 6, 5, 10
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures", "optim", "optim_cases.hpp")


def problem(dtype):
    g = torch.Generator().manual_seed(28)
    w0 = torch.randn(ROWS, COLS, generator=g, dtype=torch.float64).to(dtype)
    steps = []
    for k in range(STEPS):
        count = 1 + int(torch.randint(0, ROWS - 1, (1,), generator=g))
        rows = sorted(torch.randperm(ROWS, generator=g)[:count].tolist())
        values = torch.randn(len(rows), COLS, generator=g, dtype=torch.float64).to(dtype)
        lr = 0.05 * (1.0 + 0.25 * k)
        steps.append((rows, values, lr))
    return w0, steps


def dense(rows, values, dtype):
    d = torch.zeros(ROWS, COLS, dtype=dtype)
    for i, r in enumerate(rows):
        d[r] = values[i]
    return d


def run_torch(make, w0, steps, dtype):
    p = torch.nn.Parameter(w0.clone())
    opt = make([p])
    out = []
    for rows, values, lr in steps:
        for group in opt.param_groups:
            group["lr"] = lr
        p.grad = dense(rows, values, dtype)
        opt.step()
        out.append(p.detach().clone())
    return out


def run_sparse_adam(w0, steps, dtype, **kw):
    p = torch.nn.Parameter(w0.clone())
    opt = torch.optim.SparseAdam([p], **kw)
    out = []
    for rows, values, lr in steps:
        opt.param_groups[0]["lr"] = lr
        p.grad = torch.sparse_coo_tensor(torch.tensor([rows]), values, (ROWS, COLS))
        opt.step()
        out.append(p.detach().clone())
    return out


def run_lazy_sgd(w0, steps, dtype, **kw):
    params = [torch.nn.Parameter(w0[r].clone()) for r in range(ROWS)]
    opts = [torch.optim.SGD([q], lr=0.1, **kw) for q in params]
    out = []
    for rows, values, lr in steps:
        for i, r in enumerate(rows):
            opts[r].param_groups[0]["lr"] = lr
            params[r].grad = values[i].clone()
            opts[r].step()
        out.append(torch.stack([q.detach().clone() for q in params]))
    return out


def run_rowwise_adagrad(w0, steps, dtype, eps, weight_decay, mode):
    w = w0.clone()
    acc = torch.zeros(ROWS, dtype=dtype)
    out = []
    s = lambda x: torch.tensor(x, dtype=dtype)
    for rows, values, lr in steps:
        for i, r in enumerate(rows):
            g = values[i]
            total = s(0.0)
            for c in range(COLS):
                d = g[c] + s(weight_decay) * w[r, c] if mode == "l2" else g[c]
                total = total + d * d
            a = acc[r] + total / s(COLS)
            acc[r] = a
            multiplier = s(lr) / (torch.sqrt(a) + s(eps))
            correction = s(1.0)
            if mode == "l2":
                correction = s(1.0) - multiplier * s(weight_decay)
            elif mode == "decoupled":
                correction = s(1.0) - s(lr) * s(weight_decay)
            for c in range(COLS):
                w[r, c] = correction * w[r, c] - g[c] * multiplier
        out.append(w.clone())
    return out


CASES = [
    # name, optimizer, C++ options initializer, runner
    ("sgd_plain", "Sgd", "{}", lambda w, st, dt: run_torch(lambda p: torch.optim.SGD(p, lr=0.1), w, st, dt)),
    ("sgd_momentum_dampening_decay", "Sgd", "{0.9, 0.1, 0.01, false, false}",
     lambda w, st, dt: run_torch(lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01), w, st, dt)),
    ("sgd_nesterov_maximize", "Sgd", "{0.8, 0.0, 0.02, true, true}",
     lambda w, st, dt: run_torch(lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.8, weight_decay=0.02, nesterov=True, maximize=True), w, st, dt)),
    ("adam_default", "Adam", "{}", lambda w, st, dt: run_torch(lambda p: torch.optim.Adam(p, lr=0.1), w, st, dt)),
    ("adam_decay_amsgrad", "Adam", "{0.8, 0.99, 1e-6, 0.05, true, false}",
     lambda w, st, dt: run_torch(lambda p: torch.optim.Adam(p, lr=0.1, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.05, amsgrad=True), w, st, dt)),
    ("adamw_default", "AdamW", "seqembed::optim::adamw_defaults()",
     lambda w, st, dt: run_torch(lambda p: torch.optim.AdamW(p, lr=0.1), w, st, dt)),
    ("adamw_amsgrad_maximize", "AdamW", "{0.9, 0.95, 1e-8, 0.1, true, true}",
     lambda w, st, dt: run_torch(lambda p: torch.optim.AdamW(p, lr=0.1, betas=(0.9, 0.95), weight_decay=0.1, amsgrad=True, maximize=True), w, st, dt)),
    ("sparse_adam_default", "SparseAdam", "{}", lambda w, st, dt: run_sparse_adam(w, st, dt)),
    ("sparse_adam_betas", "SparseAdam", "{0.5, 0.9, 1e-4, false}", lambda w, st, dt: run_sparse_adam(w, st, dt, betas=(0.5, 0.9), eps=1e-4)),
    ("lazy_sgd_momentum_decay", "LazySgd", "{0.9, 0.1, 0.01, false, false}",
     lambda w, st, dt: run_lazy_sgd(w, st, dt, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("lazy_sgd_nesterov", "LazySgd", "{0.9, 0.0, 0.0, true, false}", lambda w, st, dt: run_lazy_sgd(w, st, dt, momentum=0.9, nesterov=True)),
    ("rowwise_adagrad_plain", "RowwiseAdagrad", "{1e-8, 0.0, seqembed::optim::WeightDecayMode::none}",
     lambda w, st, dt: run_rowwise_adagrad(w, st, dt, 1e-8, 0.0, "none")),
    ("rowwise_adagrad_l2", "RowwiseAdagrad", "{1e-6, 0.05, seqembed::optim::WeightDecayMode::l2}",
     lambda w, st, dt: run_rowwise_adagrad(w, st, dt, 1e-6, 0.05, "l2")),
    ("rowwise_adagrad_decoupled", "RowwiseAdagrad", "{1e-8, 0.05, seqembed::optim::WeightDecayMode::decoupled}",
     lambda w, st, dt: run_rowwise_adagrad(w, st, dt, 1e-8, 0.05, "decoupled")),
]


def hexes(t):
    return ", ".join(float(x).hex() for x in t.reshape(-1).tolist())


def main():
    torch.set_num_threads(1)
    lines = [
        "// Generated by tests/reference/generate_optim_fixtures.py. Do not edit by hand.",
        "#pragma once",
        "",
        "#include <cstddef>",
        "",
        "namespace seqembed_optim_fixtures {",
        "",
        "constexpr int rows = %d;" % ROWS,
        "constexpr int cols = %d;" % COLS,
        "constexpr int steps = %d;" % STEPS,
        "",
    ]
    for dtype, tag in ((torch.float32, "float"), (torch.float64, "double")):
        w0, st = problem(dtype)
        lines.append("/// The %s problem: initial weights, each step's listed rows, their gradient rows, lr." % tag)
        lines.append("struct Problem_%s {" % tag)
        lines.append("    static constexpr double initial[] = {%s};" % hexes(w0))
        counts = [len(r) for r, _, _ in st]
        lines.append("    static constexpr int row_counts[] = {%s};" % ", ".join(map(str, counts)))
        lines.append("    static constexpr long grad_rows[] = {%s};" % ", ".join(str(r) for rows_, _, _ in st for r in rows_))
        lines.append("    static constexpr double grad_values[] = {%s};" % ", ".join(hexes(v) for _, v, _ in st))
        lines.append("    static constexpr double lrs[] = {%s};" % ", ".join(float(lr).hex() for _, _, lr in st))
        lines.append("};")
        lines.append("")
        for name, _, _, run in CASES:
            traj = run(w0, st, dtype)
            lines.append("constexpr double %s_%s[] = {%s};" % (name, tag, ", ".join(hexes(t) for t in traj)))
        lines.append("")
    lines.append("}  // namespace seqembed_optim_fixtures")
    lines.append("")
    lines.append("/// Every case: SEQEMBED_OPTIM_CASE(name, optimizer class, options initializer).")
    lines.append("#define SEQEMBED_OPTIM_CASES(X) \\")
    for i, (name, cls, opts, _) in enumerate(CASES):
        end = " \\" if i + 1 < len(CASES) else ""
        lines.append("    X(%s, %s, (%s))%s" % (name, cls, opts, end))
    lines.append("")
    with open(OUT, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
