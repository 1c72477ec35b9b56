#!/usr/bin/python3
"""How often PyTorch's CPU cos and sin differ from the correctly rounded float32 value (issue 25).

    ATEN_CPU_CAPABILITY=default /usr/bin/python3 tests/reference/measure_torch_sincos.py
    ATEN_CPU_CAPABILITY=avx2 /usr/bin/python3 tests/reference/measure_torch_sincos.py

Takes the float32 angles of Llama-style RoPE tables as Hugging Face's forward computes them
(inv_freq @ position_ids in float32), applies torch.cos and torch.sin (the scalar kernels call
the C library's cosf and sinf; the AVX2 ones SLEEF's), and counts the values that differ from
the correctly rounded ones (float64 cos/sin rounded to float32, settled with mpmath where the
float64 value lies near a float32 midpoint), and by how many ulp. seqembed's follow mode takes
the correctly rounded values; docs/precision.md quotes this script's output.
Prints only; writes nothing.
"""
import os, sys
os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np, torch, mpmath
torch.set_num_threads(1)
mpmath.mp.prec = 200

def cr32(angles, fn64, fnmp):
    """float32(f(angle)) correctly rounded: float64 value, checked with mpmath near midpoints."""
    v = fn64(angles.astype(np.float64))
    r = v.astype(np.float32)
    # midpoint test: distance of v to the float32 rounding boundary, relative to ulp32
    lo = np.nextafter(r, np.float32(-np.inf)); hi = np.nextafter(r, np.float32(np.inf))
    mid_lo = (r.astype(np.float64) + lo.astype(np.float64)) / 2
    mid_hi = (r.astype(np.float64) + hi.astype(np.float64)) / 2
    close = np.minimum(np.abs(v - mid_lo), np.abs(v - mid_hi)) <= np.abs(v) * 2.0**-50 + 2.0**-1070
    idx = np.nonzero(close)[0]
    for i in idx:
        exact = fnmp(mpmath.mpf(float(angles[i])))
        cands = [lo[i], r[i], hi[i]]
        r[i] = min(cands, key=lambda c: abs(mpmath.mpf(float(c)) - exact))
    return r, len(idx)

def ulps(a, b):
    ia = a.view(np.int32).astype(np.int64); ib = b.view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia); ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return np.abs(ia - ib)

print(torch.__version__, [l for l in torch.__config__.show().splitlines() if "CPU capability" in l])
for theta, dim, npos in ((500000.0, 128, 8192), (10000.0, 128, 4096), (500000.0, 128, 131072)):
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    pos = torch.arange(npos, dtype=torch.int64)[None, None, :].float()
    freqs = (inv_freq[None, :, None] @ pos).transpose(1, 2)[0]  # npos x dim/2, float32 angles
    a = freqs.numpy().reshape(-1)
    tc = torch.cos(freqs).numpy().reshape(-1); ts = torch.sin(freqs).numpy().reshape(-1)
    c, nc = cr32(a, np.cos, mpmath.cos); s, ns = cr32(a, np.sin, mpmath.sin)
    for name, t, ref in (("cos", tc, c), ("sin", ts, s)):
        d = ulps(t, ref)
        n = a.size
        print(f"theta {theta:g} dim {dim} positions 0..{npos-1}: torch.{name} differs from the correctly rounded "
              f"value in {int((d>0).sum())}/{n} ({100.0*(d>0).sum()/n:.2f}%), max {int(d.max())} ulp "
              f"(1 ulp: {int((d==1).sum())}, 2 ulp: {int((d==2).sum())}, more: {int((d>2).sum())})")
    print(f"   (values settled with mpmath near a midpoint: {nc} cos, {ns} sin)")
