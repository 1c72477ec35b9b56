#!/usr/bin/python3
"""Golden fixtures for rotary position embeddings (RoPE) and ALiBi (issue 15).

    /usr/bin/python3 tests/reference/generate_rope_fixtures.py

Writes tests/fixtures/rope/rope_cases.hpp (namespace seqembed_rope_fixtures; the format is the
one fixed in the issue's shared spec and repeated in the header's struct comments). Use Debian's
interpreter (torch 1.13, numpy, mpmath). Running it twice gives a byte-identical header. The C++
tests only include the header; CI never runs Python.

What was read (Hugging Face transformers, through the search index; one stored version per file):

  src/transformers/modeling_rope_utils.py
      huggingface/transformers @ ef46806472a64b0013ed413781e3afed82bfa047:
          _compute_default_rope_parameters, _compute_linear_scaling_rope_parameters,
          _compute_dynamic_ntk_parameters, _compute_longrope_parameters, _compute_llama3_parameters
          (head_dim = getattr(config, "head_dim", hidden_size // num_attention_heads)).
      juliendenize/transformers @ 081262fbafe9d4fa054ba41663495b4a0061c9ce (a fork of main) and
      zucchini-nlp/transformers @ 26892c16b782513fdf938920653228ef63a19d7d (newest, v5 layout):
          _compute_yarn_parameters with get_mscale(scale, mscale), mscale / mscale_all_dim,
          original_max_position_embeddings, find_correction_dim, find_correction_range(truncate),
          linear_ramp_factor. The official snapshot above predates mscale and truncate; for the
          configurations below all three versions give the same numbers except yarn_mscale_*
          (the old code ignores mscale/mscale_all_dim) and yarn_gptoss_* (it ignores truncate).
  src/transformers/models/llama/modeling_llama.py
      huggingface/transformers @ 5dd4a63548857797727ae73eeb6a6e886ea02a3e:
          LlamaRotaryEmbedding.__init__/_dynamic_frequency_update/forward, rotate_half,
          apply_rotary_pos_emb. The dynamic update passes seq_len = torch.max(position_ids) + 1,
          a 0-dim int64 TENSOR, to the rope function (newer dynamic_rope_update /
          longrope_frequency_update do the same; longrope's long table is built with
          seq_len = original_max_position_embeddings + 1).
  dynamic_rope_update (transformers 5's modeling_rope_utils.py, read through the search index,
  issue 25): longrope_frequency_update takes the long inv_freq when max(position_ids) + 1 passes
  original_max_position_embeddings, the init-time (short) one otherwise, on every forward;
  dynamic_frequency_update recomputes inv_freq with seq_len = max(position_ids) + 1 when it
  passes the cached length and restores the init-time one only for a call shorter than the
  original length (state between calls, which seqembed does not keep: each call by its own
  length). The *_call<N> cases below are such calls: N = 4096 (the original length),
  4097 and 100000.
  src/transformers/models/phi3/modeling_phi3.py
      huggingface/transformers @ 43c2b4816a6507cb08a18b402c6b053453651daf: Phi3RotaryEmbedding
          (rope_type from rope_scaling's rope_type or type, the rope_init_fn of modeling_rope_utils),
          rotate_half / apply_rotary_pos_emb as Llama's.
  src/transformers/models/gptj/modeling_gptj.py
      huggingface/transformers @ 00b676f8f0489b88652a31d70751cc540dd06305:
          rotate_every_two, apply_rotary_pos_emb (repeat_interleave of sin/cos), the
          rotary_dim split (q_rot / q_pass, cat).
  src/transformers/models/gpt_neox/modeling_gpt_neox.py
      huggingface/transformers @ 006bd23dd0ce18d54e1cf260b09b15fa943a731d:
          rotary_ndims = int(head_size * rotary_pct), query_rot / query_pass, cat.
  src/transformers/models/bloom/modeling_bloom.py
      huggingface/transformers @ 0078a6cd96d5ab7c3c429b9fdc3fbc703d894dcc: build_alibi_tensor.
  src/transformers/models/falcon/modeling_falcon.py
      huggingface/transformers @ 44272086: build_alibi_tensor (BLOOM's slopes, bfloat16 product).
  src/transformers/models/mpt/modeling_mpt.py
      build_mpt_alibi_tensor as in the released file (index id 112799198; the official snapshot
      0206c7b0f3a56f3876a66bda1baa00741950221e is a pre-release with gen_slopes, the same
      arithmetic on a float32 arange).

How the numbers are made:

  * "torch": each rule transliterated line by line in plain torch float32, as HF runs it
    (Python floats mixed into float32 tensors are rounded to float32 by torch; `scalar / tensor`
    is torch's Tensor.__rdiv__ = reciprocal(tensor) * scalar, two roundings).
  * "emulation": the same operations one by one, + - * / as numpy float32 (or Python float)
    IEEE operations, pow/exp/log/cos/sin correctly rounded with mpmath. The stored inv_freq_f32,
    follow_*, slopes_f32 and bias values are the emulation's, so they do not depend on the
    machine's libm or SLEEF. The script prints where torch's own run differs (SLEEF's float32
    pow/cos/sin are within 1 ulp, not correctly rounded).
  * "exact": the rule's formula in real arithmetic with mpmath at 60 digits, rounded once
    (to float32 by choosing between the two float32 neighbours in mpmath: no double rounding).
    attention_scaling in exact mode is the real value of the rule's formula (or the config's
    decimal); the stored `attention_scaling` double is HF's Python float.
  * apply cases: q/k from numpy PCG64 (fixed seed), rotated by HF's apply_rotary_pos_emb
    (halves) and GPT-J's rotate_every_two formula (interleaved) in torch float32 on the stored
    follow tables duplicated to full width as HF does; checked bit for bit against the
    op-by-op formula of the spec.

ATen's CPU capability is pinned to AVX2 and torch runs on one thread.
"""

import os
import sys

# Before torch is imported: the SIMD level decides the last bits of torch's pow/cos/sin.
os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import json
import math
import pathlib
import types

import mpmath
import numpy as np
import torch

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OUT = ROOT / "tests" / "fixtures" / "rope" / "rope_cases.hpp"
ISSUE = 15

mpmath.mp.dps = 60


def check_torch_setup():
    if "CPU capability usage: AVX2" not in torch.__config__.show():
        sys.exit("generate_rope_fixtures.py: torch does not use its AVX2 kernels "
                 f"(ATEN_CPU_CAPABILITY={os.environ.get('ATEN_CPU_CAPABILITY')!r}); the torch-vs-"
                 "emulation report would not match the committed one.")
    torch.set_num_threads(1)


# ----------------------------------------------------------------------------------------------
# Rounding and correctly rounded functions.

def _nearest(x, candidates, mantissa_is_even):
    best, best_err = None, None
    for c in candidates:
        err = abs(mpmath.mpf(c) - x)
        if best is None or err < best_err or (err == best_err and mantissa_is_even(c)):
            best, best_err = c, err
    return best


def round_f64(x):
    """x (an mpf) rounded once to the nearest float64."""
    f = float(x)
    cands = (math.nextafter(f, -math.inf), f, math.nextafter(f, math.inf))
    return _nearest(x, cands, lambda c: np.float64(c).view(np.int64) % 2 == 0)


def round_f32(x):
    """x (an mpf) rounded once to the nearest float32, as an exact Python float."""
    f = np.float32(float(x))
    cands = (float(np.nextafter(f, np.float32(-np.inf))), float(f),
             float(np.nextafter(f, np.float32(np.inf))))
    return _nearest(x, cands, lambda c: np.float32(c).view(np.int32) % 2 == 0)


f32 = np.float32
mpf = mpmath.mpf


def cr_pow32(b, e):
    return f32(round_f32(mpmath.power(mpf(float(b)), mpf(float(e)))))


def cr_cos32(a):
    return f32(round_f32(mpmath.cos(mpf(float(a)))))


def cr_sin32(a):
    return f32(round_f32(mpmath.sin(mpf(float(a)))))


def cr_log64(a):
    return round_f64(mpmath.log(mpf(a)))


def cr_pow64(b, e):
    return round_f64(mpmath.power(mpf(b), mpf(e)))


def rdiv32(scalar, x):
    """torch's `scalar / tensor` (Tensor.__rdiv__): reciprocal(x) * float32(scalar)."""
    return f32(f32(1.0) / x) * f32(scalar)


def ulps32(a, b):
    """Distance in float32 ulps between two float32 values of the same sign (or zero)."""
    ia = int(np.float32(a).view(np.int32))
    ib = int(np.float32(b).view(np.int32))
    if ia < 0:
        ia = -(ia & 0x7FFFFFFF)
    if ib < 0:
        ib = -(ib & 0x7FFFFFFF)
    return abs(ia - ib)


# ----------------------------------------------------------------------------------------------
# Configurations (config.json keys that HF reads).

def config_obj(cfg):
    """The dict as a PretrainedConfig-like object: only the keys present become attributes."""
    return types.SimpleNamespace(**{k: v for k, v in cfg.items()})


def hf_dim(config):
    partial_rotary_factor = config.partial_rotary_factor if hasattr(config, "partial_rotary_factor") else 1.0
    head_dim = getattr(config, "head_dim", config.hidden_size // config.num_attention_heads)
    return int(head_dim * partial_rotary_factor), head_dim


def standard_original(cfg):
    """standardize_rope_params (transformers 5) for llama3, yarn and longrope: the top-level
    original_max_position_embeddings (Phi-3's place) wins, then the rule's, then
    max_position_embeddings."""
    if "original_max_position_embeddings" in cfg:
        return cfg["original_max_position_embeddings"]
    rs = cfg.get("rope_scaling") or {}
    return rs.get("original_max_position_embeddings", cfg["max_position_embeddings"])


def standard_factor(cfg):
    """_compute_yarn_parameters / _compute_longrope_parameters (transformers 5, after PR 40320):
    the explicit factor (which yarn's validation requires), else max_position_embeddings /
    original."""
    factor = (cfg.get("rope_scaling") or {}).get("factor")
    if factor is None:
        factor = cfg["max_position_embeddings"] / standard_original(cfg)
    return factor


# ----------------------------------------------------------------------------------------------
# The rules in plain torch, line by line after modeling_rope_utils.py.

def torch_default(config, seq_len=None):
    base = config.rope_theta
    dim, _ = hf_dim(config)
    attention_factor = 1.0
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    return inv_freq, attention_factor


def torch_linear(config, seq_len=None):
    factor = config.rope_scaling["factor"]
    inv_freq, attention_factor = torch_default(config, seq_len)
    inv_freq /= factor
    return inv_freq, attention_factor


def torch_dynamic(config, seq_len=None):
    base = config.rope_theta
    dim, _ = hf_dim(config)
    max_position_embeddings = config.max_position_embeddings
    factor = config.rope_scaling["factor"]
    attention_factor = 1.0
    seq_len = seq_len if seq_len is not None and seq_len > max_position_embeddings else max_position_embeddings
    base = base * ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    return inv_freq, attention_factor


def torch_yarn(config, seq_len=None):
    base = config.rope_theta
    dim, _ = hf_dim(config)
    attention_factor = config.rope_scaling.get("attention_factor")
    mscale = config.rope_scaling.get("mscale")
    mscale_all_dim = config.rope_scaling.get("mscale_all_dim")
    original_max_position_embeddings = standard_original(vars(config))
    factor = standard_factor(vars(config))

    def get_mscale(scale, mscale=1):
        if scale <= 1:
            return 1.0
        return 0.1 * mscale * math.log(scale) + 1.0

    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))
        else:
            attention_factor = get_mscale(factor)
    beta_fast = config.rope_scaling.get("beta_fast") or 32
    beta_slow = config.rope_scaling.get("beta_slow") or 1

    def find_correction_dim(num_rotations, dim, base, max_position_embeddings):
        return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    def find_correction_range(low_rot, high_rot, dim, base, max_position_embeddings, truncate):
        low = find_correction_dim(low_rot, dim, base, max_position_embeddings)
        high = find_correction_dim(high_rot, dim, base, max_position_embeddings)
        if truncate:
            low = math.floor(low)
            high = math.ceil(high)
        return max(low, 0), min(high, dim - 1)

    def linear_ramp_factor(min, max, dim):  # noqa: A002 (HF's names)
        if min == max:
            max += 0.001
        linear_func = (torch.arange(dim, dtype=torch.float32) - min) / (max - min)
        ramp_func = torch.clamp(linear_func, 0, 1)
        return ramp_func

    pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)
    truncate = config.rope_scaling.get("truncate", True)
    low, high = find_correction_range(beta_fast, beta_slow, dim, base, original_max_position_embeddings, truncate)
    inv_freq_extrapolation_factor = 1 - linear_ramp_factor(low, high, dim // 2).float()
    inv_freq = (
        inv_freq_interpolation * (1 - inv_freq_extrapolation_factor)
        + inv_freq_extrapolation * inv_freq_extrapolation_factor
    )
    return inv_freq, attention_factor


def torch_longrope(config, seq_len=None):
    base = config.rope_theta
    dim, _ = hf_dim(config)
    long_factor = config.rope_scaling["long_factor"]
    short_factor = config.rope_scaling["short_factor"]
    attention_factor = config.rope_scaling.get("attention_factor")
    original_max_position_embeddings = standard_original(vars(config))
    factor = standard_factor(vars(config))
    if attention_factor is None:
        if factor <= 1.0:
            attention_factor = 1.0
        else:
            attention_factor = math.sqrt(1 + math.log(factor) / math.log(original_max_position_embeddings))
    if seq_len and seq_len > original_max_position_embeddings:
        ext_factors = torch.tensor(long_factor, dtype=torch.float32)
    else:
        ext_factors = torch.tensor(short_factor, dtype=torch.float32)
    inv_freq_shape = torch.arange(0, dim, 2, dtype=torch.int64).float() / dim
    inv_freq = 1.0 / (ext_factors * base**inv_freq_shape)
    return inv_freq, attention_factor


def torch_llama3(config, seq_len=None):
    inv_freq, attention_factor = torch_default(config, seq_len)
    factor = config.rope_scaling["factor"]
    low_freq_factor = config.rope_scaling["low_freq_factor"]
    high_freq_factor = config.rope_scaling["high_freq_factor"]
    old_context_len = standard_original(vars(config))
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    inv_freq_llama = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
    return inv_freq_llama, attention_factor


TORCH_RULES = {"default": torch_default, "linear": torch_linear, "dynamic": torch_dynamic,
               "yarn": torch_yarn, "longrope": torch_longrope, "llama3": torch_llama3}


def torch_rotary_forward(inv_freq, attention_scaling, positions):
    """LlamaRotaryEmbedding.forward (5dd4a635) for one sequence of position ids."""
    position_ids = torch.tensor([positions], dtype=torch.int64)
    inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
    position_ids_expanded = position_ids[:, None, :].float()
    freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = emb.cos()
    sin = emb.sin()
    cos = cos * attention_scaling
    sin = sin * attention_scaling
    return freqs[0], cos[0], sin[0]


def torch_forward_seq_len(positions):
    """What _dynamic_frequency_update passes as seq_len: torch.max(position_ids) + 1 (a tensor)."""
    return torch.max(torch.tensor([positions], dtype=torch.int64)) + 1


# ----------------------------------------------------------------------------------------------
# The same rules, operation by operation (numpy float32 / Python float arithmetic, mpmath for
# pow/log/cos/sin, each correctly rounded). `pow32` is replaceable for diagnosis.

def emu_exponents(dim):
    """torch.arange(0, dim, 2).float() / dim."""
    return [f32(f32(2 * i) / f32(dim)) for i in range(dim // 2)]


def emu_default(cfg, seq_len, pow32=cr_pow32):
    config = config_obj(cfg)
    dim, _ = hf_dim(config)
    base = f32(config.rope_theta)
    inv = [rdiv32(1.0, pow32(base, e)) for e in emu_exponents(dim)]
    return np.array(inv, dtype=np.float32), 1.0


def emu_linear(cfg, seq_len, pow32=cr_pow32):
    inv, att = emu_default(cfg, seq_len, pow32)
    factor = f32(cfg["rope_scaling"]["factor"])
    return np.array([f32(x / factor) for x in inv], dtype=np.float32), att


def cr_pow_f32_f64(b, e):
    """float32 base, double exponent, the real power rounded once to float32."""
    return f32(round_f32(mpmath.power(mpf(float(b)), mpf(e))))


def torch_pow_scalar(b, e):
    return f32(torch.pow(torch.tensor(float(b), dtype=torch.float32), e).item())


def emu_dynamic(cfg, seq_len, pow32=cr_pow32, pow_scalar=cr_pow_f32_f64):
    """seq_len > max_position_embeddings: HF's forward passes a 0-dim int64 tensor, so every
    step of the new base is a float32 tensor operation; otherwise the Python-float path at init
    (base * 1.0 ** x == base)."""
    config = config_obj(cfg)
    dim, _ = hf_dim(config)
    mpe = config.max_position_embeddings
    factor = config.rope_scaling["factor"]
    if seq_len is not None and seq_len > mpe:
        t = f32(factor) * f32(seq_len)
        t = t / f32(mpe)
        t = t - f32(factor - 1)
        # pow(0-dim float32 tensor, Python float): ATen's scalar loop calls std::pow(float,
        # double), a double pow rounded to float32 (its vector loop would use a float exponent)
        t = pow_scalar(t, dim / (dim - 2))
        base = f32(config.rope_theta) * t
    else:
        base = config.rope_theta * ((factor * mpe / mpe) - (factor - 1)) ** (dim / (dim - 2))
        assert base == config.rope_theta
        base = f32(base)
    inv = [rdiv32(1.0, pow32(base, e)) for e in emu_exponents(dim)]
    return np.array(inv, dtype=np.float32), 1.0


def emu_dynamic_python_base(cfg, seq_len, pow32=cr_pow32):
    """The alternative the forward does NOT take: seq_len as a Python int (double arithmetic)."""
    config = config_obj(cfg)
    dim, _ = hf_dim(config)
    mpe = config.max_position_embeddings
    factor = config.rope_scaling["factor"]
    s = seq_len if seq_len > mpe else mpe
    base = config.rope_theta * cr_pow64((factor * s / mpe) - (factor - 1), dim / (dim - 2))
    inv = [rdiv32(1.0, pow32(f32(base), e)) for e in emu_exponents(dim)]
    return np.array(inv, dtype=np.float32)


def yarn_parameters(cfg, log64):
    """The Python-float part of _compute_yarn_parameters; log64 is math.log or cr_log64."""
    rs = cfg["rope_scaling"]
    dim, _ = hf_dim(config_obj(cfg))
    base = cfg["rope_theta"]
    attention_factor = rs.get("attention_factor")
    mscale, mscale_all_dim = rs.get("mscale"), rs.get("mscale_all_dim")
    ompe = standard_original(cfg)
    factor = standard_factor(cfg)

    def get_mscale(scale, ms=1):
        if scale <= 1:
            return 1.0
        return 0.1 * ms * log64(scale) + 1.0

    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))
        else:
            attention_factor = get_mscale(factor)
    beta_fast = rs.get("beta_fast") or 32
    beta_slow = rs.get("beta_slow") or 1

    def corr_dim(num_rotations):
        return (dim * log64(ompe / (num_rotations * 2 * math.pi))) / (2 * log64(base))

    low, high = corr_dim(beta_fast), corr_dim(beta_slow)
    if rs.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    return dict(dim=dim, factor=factor, attention_factor=attention_factor, low=low, high=high,
                ompe=ompe, beta_fast=beta_fast, beta_slow=beta_slow)


def emu_yarn(cfg, seq_len, pow32=cr_pow32):
    y = yarn_parameters(cfg, cr_log64)
    dim, lo, hi = y["dim"], y["low"], y["high"]
    if lo == hi:
        hi += 0.001
    base = f32(cfg["rope_theta"])
    factor = f32(y["factor"])
    out = []
    for i, e in enumerate(emu_exponents(dim)):
        pos = pow32(base, e)
        extrap = rdiv32(1.0, pos)
        interp = rdiv32(1.0, factor * pos)
        ramp = (f32(i) - f32(lo)) / f32(hi - lo)
        ramp = min(max(ramp, f32(0)), f32(1))
        ef = f32(1) - ramp
        out.append(interp * (f32(1) - ef) + extrap * ef)
    return np.array(out, dtype=np.float32), y["attention_factor"]


def longrope_parameters(cfg, log64, sqrt64=math.sqrt):
    rs = cfg["rope_scaling"]
    attention_factor = rs.get("attention_factor")
    ompe = standard_original(cfg)
    factor = standard_factor(cfg)
    if attention_factor is None:
        attention_factor = 1.0 if factor <= 1.0 else sqrt64(1 + log64(factor) / log64(ompe))
    return factor, attention_factor, ompe


def emu_longrope(cfg, seq_len, pow32=cr_pow32):
    rs = cfg["rope_scaling"]
    dim, _ = hf_dim(config_obj(cfg))
    _, att, ompe = longrope_parameters(cfg, cr_log64)
    ext = rs["long_factor"] if (seq_len and seq_len > ompe) else rs["short_factor"]
    base = f32(cfg["rope_theta"])
    out = [rdiv32(1.0, f32(x) * pow32(base, e)) for x, e in zip(ext, emu_exponents(dim))]
    return np.array(out, dtype=np.float32), att


def emu_llama3(cfg, seq_len, pow32=cr_pow32):
    inv, att = emu_default(cfg, seq_len, pow32)
    rs = cfg["rope_scaling"]
    factor, lo_f, hi_f = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old = standard_original(cfg)
    low_wl, high_wl = f32(old / lo_f), f32(old / hi_f)
    out = []
    for x in inv:
        wl = rdiv32(2 * math.pi, x)
        il = x / f32(factor) if wl > low_wl else x
        smooth = (rdiv32(old, wl) - f32(lo_f)) / f32(hi_f - lo_f)
        smoothed = ((f32(1) - smooth) * il) / f32(factor) + smooth * il
        medium = (not (wl < high_wl)) and (not (wl > low_wl))
        out.append(smoothed if medium else il)
    return np.array(out, dtype=np.float32), att


EMU_RULES = {"default": emu_default, "linear": emu_linear, "dynamic": emu_dynamic,
             "yarn": emu_yarn, "longrope": emu_longrope, "llama3": emu_llama3}


# ----------------------------------------------------------------------------------------------
# Exact (real-valued) frequencies and attention factors, mpmath at 60 digits.

def exact_rule(cfg, rule, seq_len):
    config = config_obj(cfg)
    dim, _ = hf_dim(config)
    theta = mpf(cfg["rope_theta"])
    half = dim // 2

    def powers(b):
        return [mpmath.power(b, -mpf(2 * i) / dim) for i in range(half)]

    rs = cfg.get("rope_scaling") or {}
    if rule == "default":
        return powers(theta), mpf(1)
    if rule == "linear":
        return [f / mpf(rs["factor"]) for f in powers(theta)], mpf(1)
    if rule == "dynamic":
        mpe, factor = cfg["max_position_embeddings"], mpf(rs["factor"])
        if seq_len > mpe:
            b = theta * mpmath.power(factor * seq_len / mpe - (factor - 1), mpf(dim) / (dim - 2))
        else:
            b = theta
        return powers(b), mpf(1)
    if rule == "yarn":
        y = yarn_parameters(cfg, lambda v: mpmath.log(mpf(v)))
        factor = mpf(y["factor"])
        if "attention_factor" in rs and rs["attention_factor"] is not None:
            att = mpf(str(rs["attention_factor"]))
        else:
            def gm(scale, ms=1):
                return mpf(1) if scale <= 1 else mpf("0.1") * mpf(ms) * mpmath.log(scale) + 1
            ms, msa = rs.get("mscale"), rs.get("mscale_all_dim")
            att = gm(factor, ms) / gm(factor, msa) if (ms and msa) else gm(factor)
        # the correction range from the real formula (truncate: floor/ceil of it)
        ompe = y["ompe"]

        def corr_dim(nr):
            return (dim * mpmath.log(mpf(ompe) / (nr * 2 * mpmath.pi))) / (2 * mpmath.log(theta))
        lo, hi = corr_dim(y["beta_fast"]), corr_dim(y["beta_slow"])
        if rs.get("truncate", True):
            lo, hi = mpmath.floor(lo), mpmath.ceil(hi)
        lo, hi = max(lo, 0), min(hi, dim - 1)
        if lo == hi:
            hi += mpf("0.001")
        out = []
        for i, f in enumerate(powers(theta)):
            ramp = min(max((i - lo) / (hi - lo), mpf(0)), mpf(1))
            ef = 1 - ramp
            out.append(f / factor * (1 - ef) + f * ef)
        return out, att
    if rule == "longrope":
        _, _, ompe = longrope_parameters(cfg, math.log)
        factor = mpf(rs["factor"]) if rs.get("factor") is not None \
            else mpf(cfg["max_position_embeddings"]) / ompe
        if rs.get("attention_factor") is not None:
            att = mpf(str(rs["attention_factor"]))
        else:
            att = mpf(1) if factor <= 1 else mpmath.sqrt(1 + mpmath.log(factor) / mpmath.log(ompe))
        ext = rs["long_factor"] if seq_len > ompe else rs["short_factor"]
        return [f / mpf(repr(x)) for x, f in zip(ext, powers(theta))], att
    if rule == "llama3":
        factor, lo_f, hi_f = mpf(rs["factor"]), mpf(rs["low_freq_factor"]), mpf(rs["high_freq_factor"])
        old = mpf(standard_original(cfg))
        low_wl, high_wl = old / lo_f, old / hi_f
        out = []
        for f in powers(theta):
            wl = 2 * mpmath.pi / f
            if wl < high_wl:
                out.append(f)
            elif wl > low_wl:
                out.append(f / factor)
            else:
                s = (old / wl - lo_f) / (hi_f - lo_f)
                out.append((1 - s) * f / factor + s * f)
        return out, mpf(1)
    raise ValueError(rule)


# ----------------------------------------------------------------------------------------------
# Cases.

P_EXACT = [0, 1, 2, 4095, 4096, 65535, 131071, 999999]


def random_positions(tag, count, upper):
    rng = np.random.default_rng([ISSUE, tag])
    return sorted(int(v) for v in rng.integers(3, upper, size=count))


def merge(*lists):
    return sorted(set(p for lst in lists for p in lst))


def llama_cfg(theta, head_dim, heads=32, mpe=131072, scaling=None, model_type="llama",
              explicit_head_dim=False, **extra):
    cfg = {"model_type": model_type, "rope_theta": theta, "hidden_size": head_dim * heads,
           "num_attention_heads": heads, "max_position_embeddings": mpe, "rope_scaling": scaling}
    if explicit_head_dim:
        cfg["head_dim"] = head_dim
        cfg["hidden_size"] = 3072 if model_type == "gemma" else cfg["hidden_size"]
    cfg.update(extra)
    return cfg


def phi3_factor_lists(half):
    """Phi-3 style short/long factor lists (synthetic values of the same shape as the released
    configs: short close to 1, long growing to ~60; some written as float32-looking decimals)."""
    short, long_ = [], []
    for i in range(half):
        t = i / (half - 1)
        s = 1.0 + round(0.25 * t ** 3, 2)
        short.append(float(np.float32(s)) if i % 5 == 3 else s)
        lf = round(math.exp(math.log(60.0) * t ** 1.5), 3 if i % 2 else 2)
        long_.append(float(np.float32(lf)) if i % 4 == 1 else lf)
    short[0] = 1.0
    long_[0] = 1.0
    return short, long_


def frequency_case_specs():
    specs = []

    def add(name, rule, cfg, positions):
        specs.append(dict(name=name, rule=rule, cfg=cfg, positions=positions))

    # default
    add("default_theta10000_d64", "default", llama_cfg(10000.0, 64),
        merge(P_EXACT, random_positions(1, 4, 1_000_000)))
    add("default_theta10000_d128", "default", llama_cfg(10000.0, 128, mpe=4096),
        merge(P_EXACT, random_positions(2, 4, 1_000_000)))
    add("default_theta10000_d256", "default", llama_cfg(10000.0, 256, heads=16, explicit_head_dim=True, mpe=8192,
                                                         model_type="gemma"),
        merge(P_EXACT, random_positions(3, 2, 1_000_000)))
    add("default_theta500000_d128", "default", llama_cfg(500000.0, 128, mpe=8192),
        merge(P_EXACT, random_positions(4, 4, 1_000_000)))
    neox = {"model_type": "gpt_neox", "rope_theta": 10000, "rotary_emb_base": 10000, "hidden_size": 768,
            "num_attention_heads": 12, "partial_rotary_factor": 0.25, "rotary_pct": 0.25,
            "max_position_embeddings": 2048, "rope_scaling": None}
    add("default_neox_partial0.25_d64", "default", neox, merge(P_EXACT, random_positions(5, 4, 1_000_000)))
    phi = {"model_type": "phi", "rope_theta": 10000.0, "hidden_size": 2048, "num_attention_heads": 32,
           "partial_rotary_factor": 0.5, "max_position_embeddings": 2048, "rope_scaling": None}
    add("default_phi_partial0.5_d64", "default", phi, merge(P_EXACT, random_positions(6, 4, 1_000_000)))
    # small tables for the apply cases (head_dim 16)
    small_positions = list(range(25))
    add("default_theta10000_d16", "default", llama_cfg(10000.0, 16, heads=4, mpe=64), small_positions)
    add("default_partial0.5_d16", "default",
        {"model_type": "phi", "rope_theta": 10000.0, "hidden_size": 64, "num_attention_heads": 4,
         "partial_rotary_factor": 0.5, "max_position_embeddings": 64, "rope_scaling": None}, small_positions)
    add("yarn_factor4_d16", "yarn",
        llama_cfg(10000.0, 16, heads=4, mpe=64, scaling={"rope_type": "yarn", "factor": 4.0}), small_positions)
    # linear
    add("linear_factor4_theta10000_d128", "linear",
        llama_cfg(10000.0, 128, mpe=16384, scaling={"rope_type": "linear", "factor": 4.0}),
        merge(P_EXACT, random_positions(7, 4, 1_000_000)))
    # llama3 (Llama-3.1 8B)
    add("llama3_theta500000_d128", "llama3",
        llama_cfg(500000.0, 128, mpe=131072, scaling={
            "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192}, num_key_value_heads=8),
        merge(P_EXACT, random_positions(8, 4, 1_000_000)))
    # dynamic NTK (factor 2, max_position_embeddings 4096): one sequence below, one above
    dyn = llama_cfg(10000.0, 128, mpe=4096, scaling={"rope_type": "dynamic", "factor": 2.0})
    add("dynamic_factor2_d128_seq4096", "dynamic", dyn, [0, 1, 2, 100, 1000, 2047, 4000, 4095])
    # 8000: here the float32 base (the forward's tensor seq_len) is 1 ulp from the double one
    add("dynamic_factor2_d128_seq8000", "dynamic", dyn,
        merge([0, 1, 2, 4095, 4096, 7999], random_positions(9, 3, 7999)))
    # yarn
    add("yarn_factor4_theta10000_d128", "yarn",
        llama_cfg(10000.0, 128, mpe=4096, scaling={"rope_type": "yarn", "factor": 4.0}),
        merge(P_EXACT, random_positions(10, 4, 1_000_000)))
    add("yarn_mscale_factor8_d64", "yarn",
        llama_cfg(10000.0, 64, mpe=2048, scaling={
            "rope_type": "yarn", "factor": 8.0, "beta_fast": 24.0, "beta_slow": 2.0,
            "mscale": 1.0, "mscale_all_dim": 0.5}),
        merge(P_EXACT, random_positions(11, 4, 1_000_000)))
    add("yarn_gptoss_truncate_false_d64", "yarn",
        {"model_type": "gpt_oss", "rope_theta": 150000, "hidden_size": 2880, "num_attention_heads": 64,
         "head_dim": 64, "max_position_embeddings": 131072, "rope_scaling": {
             "rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
             "original_max_position_embeddings": 4096, "truncate": False}},
        merge(P_EXACT, random_positions(12, 4, 1_000_000)))
    # transformers 5 (after PR 40320): an explicit factor wins over max / original. Qwen2.5's
    # model-card YaRN block (factor 4 over 32768 = max_position_embeddings) and Qwen3's (max 40960).
    add("yarn_qwen25_factor4_original32768_d128", "yarn",
        llama_cfg(1000000.0, 128, mpe=32768, scaling={
            "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}, model_type="qwen2"),
        merge(P_EXACT, random_positions(14, 4, 1_000_000)))
    add("yarn_qwen3_factor4_mpe40960_d128", "yarn",
        llama_cfg(1000000.0, 128, mpe=40960, scaling={
            "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}, model_type="qwen2"),
        merge(P_EXACT, random_positions(15, 4, 1_000_000)))
    # llama3 without original_max_position_embeddings: max_position_embeddings (standardize_rope_params)
    add("llama3_no_original_d128", "llama3",
        llama_cfg(500000.0, 128, mpe=8192, scaling={
            "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}),
        merge(P_EXACT, random_positions(16, 4, 1_000_000)))
    # longrope (Phi-3 mini 128k shape: head_dim 96, original 4096, max 131072)
    short, long_ = phi3_factor_lists(48)
    phi3 = {"model_type": "phi3", "rope_theta": 10000.0, "hidden_size": 3072, "num_attention_heads": 32,
            "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
            "rope_scaling": {"type": "longrope", "short_factor": short, "long_factor": long_}}
    add("longrope_phi3_short_d96_seq4096", "longrope", phi3, [0, 1, 2, 100, 1000, 2048, 4000, 4095])
    add("longrope_phi3_long_d96_seq131072", "longrope", phi3,
        merge([0, 1, 2, 4095, 4096, 65535, 131071], random_positions(13, 3, 131071)))
    # Per-call frequencies (issue 25): calls whose largest position + 1 is the original length,
    # one past it, and far beyond, for dynamic NTK and LongRoPE (Phi-3-mini-128k's shape, and
    # Phi-4-mini's, model_type phi3 with partial_rotary_factor 0.75). Each holds two runs of
    # three consecutive positions (the apply cases' two sequences) and a few more.
    def call_positions(length, tag):
        last = length - 1
        return merge([0, 1, 2, last - 2, last - 1, last], random_positions(tag, 2, last - 2))
    for length, tag in ((4096, 20), (4097, 21), (100000, 22)):
        add(f"dynamic_factor2_d128_call{length}", "dynamic", dyn, call_positions(length, tag))
        add(f"longrope_phi3_d96_call{length}", "longrope", phi3, call_positions(length, tag + 10))
    short64, long64 = phi3_factor_lists(48)
    phi4 = {"model_type": "phi3", "rope_theta": 10000.0, "hidden_size": 3072, "num_attention_heads": 24,
            "partial_rotary_factor": 0.75, "max_position_embeddings": 131072,
            "original_max_position_embeddings": 4096,
            "rope_scaling": {"type": "longrope", "short_factor": short64, "long_factor": long64}}
    for length, tag in ((4096, 40), (4097, 41)):
        add(f"longrope_phi4mini_partial0.75_d128_call{length}", "longrope", phi4, call_positions(length, tag))
    # An explicit factor beside the top-level original length: the attention factor is the factor's.
    phi3_factor = dict(phi3, rope_scaling=dict(phi3["rope_scaling"], factor=16.0))
    add("longrope_explicit_factor16_d96_call4097", "longrope", phi3_factor, call_positions(4097, 50))
    return specs


# ----------------------------------------------------------------------------------------------
# Building a frequency case.

class Stats:
    def __init__(self):
        self.lines = []

    def add(self, text):
        self.lines.append(text)
        print(text)


def build_frequency_case(spec, stats):
    cfg, rule, positions = spec["cfg"], spec["rule"], spec["positions"]
    seq_len = max(positions) + 1
    config = config_obj(cfg)
    dim, head_dim = hf_dim(config)
    half = dim // 2

    # emulation (stored)
    inv, att = EMU_RULES[rule](cfg, seq_len)
    att = float(att)
    # torch, as HF's forward would call it
    torch_seq = torch_forward_seq_len(positions) if rule in ("dynamic", "longrope") else None
    if rule == "dynamic" and not seq_len > cfg["max_position_embeddings"]:
        torch_seq = None  # below the cached length the forward keeps the init inv_freq (seq_len=None)
    if rule == "longrope":
        # longrope_frequency_update: long table built with original_max_position_embeddings + 1
        ompe = cfg["original_max_position_embeddings"]
        torch_seq = ompe + 1 if seq_len > ompe else None
    t_inv, t_att = TORCH_RULES[rule](config_obj(cfg), torch_seq)
    assert t_inv.dtype == torch.float32 and t_inv.shape == (half,)
    # Python-float parts must agree exactly; log differences would show here
    assert float(t_att) == att or abs(float(t_att) - att) <= 2 * math.ulp(att), (spec["name"], t_att, att)
    att_note = "" if float(t_att) == att else f" (math.log-based attention {float(t_att)!r} != {att!r})"
    t_inv_np = t_inv.numpy()
    inv_diff = [(i, ulps32(a, b)) for i, (a, b) in enumerate(zip(inv, t_inv_np)) if a != b]

    # Diagnosis: the emulation with torch's own float32 pow (SLEEF) must give torch's inv_freq.
    def torch_pow32(b, e):
        r = torch.pow(torch.full((32,), float(b), dtype=torch.float32), torch.full((32,), float(e)))
        return f32(r[0].item())

    if rule == "dynamic":
        inv_tp, _ = emu_dynamic(cfg, seq_len, pow32=torch_pow32, pow_scalar=torch_pow_scalar)
    else:
        inv_tp, _ = EMU_RULES[rule](cfg, seq_len, pow32=torch_pow32)
    same_with_torch_pow = np.array_equal(inv_tp, t_inv_np)

    # follow tables (emulation): angle = f32(inv * f32(p)), cos/sin correctly rounded, * f32(att)
    att32 = f32(att)
    n = len(positions)
    follow_cos = np.zeros((n, half), dtype=np.float32)
    follow_sin = np.zeros((n, half), dtype=np.float32)
    angles = np.zeros((n, half), dtype=np.float32)
    for r, p in enumerate(positions):
        for i in range(half):
            a = inv[i] * f32(p)
            angles[r, i] = a
            c, s = cr_cos32(a), cr_sin32(a)
            if att != 1.0:
                c, s = c * att32, s * att32
            follow_cos[r, i], follow_sin[r, i] = c, s
    # torch's forward on the emulation's inv_freq: the same angles; cos/sin from SLEEF
    freqs_t, cos_t, sin_t = torch_rotary_forward(torch.from_numpy(inv.copy()), att, positions)
    assert np.array_equal(freqs_t.numpy(), angles), spec["name"] + ": matmul angle != float32 product"
    ct, st = cos_t.numpy(), sin_t.numpy()
    table_diffs = []
    for mine, theirs in ((follow_cos, ct), (follow_sin, st)):
        for r in range(n):
            for i in range(half):
                for col in (i, i + half):
                    if mine[r, i] != theirs[r, col]:
                        table_diffs.append(ulps32(mine[r, i], theirs[r, col]))
    halves_differ = int(np.sum(ct[:, :half] != ct[:, half:]) + np.sum(st[:, :half] != st[:, half:]))

    # exact values
    freq_exact, att_exact = exact_rule(cfg, rule, seq_len)
    exact = {k: np.zeros((n, half)) for k in ("c32", "s32", "c64", "s64")}
    for r, p in enumerate(positions):
        for i in range(half):
            ang = p * freq_exact[i]
            c, s = att_exact * mpmath.cos(ang), att_exact * mpmath.sin(ang)
            exact["c32"][r, i], exact["s32"][r, i] = round_f32(c), round_f32(s)
            exact["c64"][r, i], exact["s64"][r, i] = round_f64(c), round_f64(s)

    err_follow = np.maximum(np.abs(follow_cos.astype(np.float64) - exact["c64"]),
                            np.abs(follow_sin.astype(np.float64) - exact["s64"])).max(axis=1)
    err_cr32 = np.maximum(np.abs(exact["c32"] - exact["c64"]), np.abs(exact["s32"] - exact["s64"])).max()
    total = 2 * n * dim
    stats.add(f"{spec['name']:34s} rule {rule:8s} dim {dim:3d} seq_len {seq_len:7d} att {att!r}{att_note}")
    stats.add(f"    inv_freq: torch differs from the emulation in {len(inv_diff)}/{half} "
              f"(max {max([d for _, d in inv_diff], default=0)} ulp); emulation with torch's pow "
              f"{'reproduces' if same_with_torch_pow else 'does NOT reproduce'} torch")
    if rule == "dynamic" and seq_len > cfg["max_position_embeddings"]:
        alt = emu_dynamic_python_base(cfg, seq_len)
        t_alt, _ = torch_dynamic(config_obj(cfg), seq_len)  # a Python int seq_len
        stats.add(f"    dynamic base from a Python int seq_len (double arithmetic) instead of the forward's "
                  f"tensor: inv_freq differs in {int(np.sum(alt != inv))}/{half} (torch: "
                  f"{int(np.sum(t_alt.numpy() != t_inv_np))}/{half})")
    stats.add(f"    cos/sin from the stored inv_freq: torch differs in {len(table_diffs)}/{total} "
              f"(max {max(table_diffs, default=0)} ulp); the two halves of torch's emb differ in "
              f"{halves_differ}")
    worst = ", ".join(f"{p}:{e:.1e}" for p, e in zip(positions, err_follow) if p in (1, 4095, 4096, 65535, 131071,
                                                                                    999999, max(positions)))
    stats.add(f"    max |follow - exact| by position: {worst}; max |exact_f32 - exact| {err_cr32:.2e}")

    return dict(spec=spec, dim=dim, head_dim=head_dim, seq_len=seq_len, att=att, inv=inv,
                freq_exact=[round_f64(f) for f in freq_exact], positions=positions,
                follow_cos=follow_cos, follow_sin=follow_sin, exact=exact,
                err_follow=err_follow, inv_diff=inv_diff, table_diffs=table_diffs)


# ----------------------------------------------------------------------------------------------
# Apply cases.

def hf_rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def hf_apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (hf_rotate_half(q) * sin)
    k_embed = (k * cos) + (hf_rotate_half(k) * sin)
    return q_embed, k_embed


def gptj_rotate_every_two(x):
    x1 = x[:, :, :, ::2]
    x2 = x[:, :, :, 1::2]
    x = torch.stack((-x2, x1), dim=-1)
    return x.flatten(-2)


def gptj_apply_rotary_pos_emb(tensor, sin, cos):
    sin = torch.repeat_interleave(sin[:, :, None, :], 2, 3)
    cos = torch.repeat_interleave(cos[:, :, None, :], 2, 3)
    return (tensor * cos) + (gptj_rotate_every_two(tensor) * sin)


def spec_formula(x, cos_rows, sin_rows, heads, head_dim, rotary_dim, layout):
    """The shared spec's op-by-op formula, numpy float32, x: tokens x (heads*head_dim)."""
    out = x.copy()
    h = rotary_dim // 2
    for t in range(x.shape[0]):
        for hd in range(heads):
            o = hd * head_dim
            for i in range(h):
                c, s = cos_rows[t, i], sin_rows[t, i]
                if layout == "halves":
                    a, b = o + i, o + i + h
                else:
                    a, b = o + 2 * i, o + 2 * i + 1
                x1, x2 = x[t, a], x[t, b]
                out[t, a] = f32(x1 * c) - f32(x2 * s)
                out[t, b] = f32(x2 * c) + f32(x1 * s)
    return out


def apply_case_specs():
    return [
        dict(name="halves_gqa_d16_offsets", layout="halves", freq="default_theta10000_d16",
             positions=[0, 1, 2, 3, 17, 18, 19], q_heads=4, k_heads=2),
        dict(name="interleaved_gqa_d16_offsets", layout="interleaved", freq="default_theta10000_d16",
             positions=[0, 1, 2, 3, 17, 18, 19], q_heads=4, k_heads=2),
        # left padding as HF numbers it: position_ids = cumsum(mask) - 1, pads filled with 1
        dict(name="halves_partial_r8_d16_left_padding", layout="halves", freq="default_partial0.5_d16",
             positions=[1, 1, 0, 1, 2, 0, 1, 2], q_heads=4, k_heads=2),
        dict(name="interleaved_partial_r8_d16_left_padding", layout="interleaved",
             freq="default_partial0.5_d16", positions=[1, 0, 1, 2, 3, 0], q_heads=4, k_heads=4),
        dict(name="halves_yarn_d16_decode", layout="halves", freq="yarn_factor4_d16",
             positions=[20, 21, 22, 23, 24], q_heads=4, k_heads=1),
    ] + [
        # Per-call frequencies: one call of two sequences of three tokens (the batch tests give
        # them as a 2 x 3 batch with step offsets), its largest position + 1 the call's length.
        dict(name=f"halves_{freq}", layout="halves", freq=freq,
             positions=[length - 3, length - 2, length - 1, 0, 1, 2], q_heads=2, k_heads=1)
        for freq, length in [(f"dynamic_factor2_d128_call{n}", n) for n in (4096, 4097, 100000)]
        + [(f"longrope_phi3_d96_call{n}", n) for n in (4096, 4097, 100000)]
        + [(f"longrope_phi4mini_partial0.75_d128_call{n}", n) for n in (4096, 4097)]
    ]


def build_apply_case(spec, fcase, stats):
    positions = spec["positions"]
    tokens = len(positions)
    head_dim, rotary_dim = fcase["head_dim"], fcase["dim"]
    half = rotary_dim // 2
    rows = [fcase["positions"].index(p) for p in positions]
    cos_half = fcase["follow_cos"][rows]  # tokens x half
    sin_half = fcase["follow_sin"][rows]
    rng = np.random.default_rng([ISSUE, 100, sum(map(ord, spec["name"]))])
    q_in = rng.standard_normal((tokens, spec["q_heads"] * head_dim)).astype(np.float32)
    k_in = rng.standard_normal((tokens, spec["k_heads"] * head_dim)).astype(np.float32)

    def run_torch(x, heads):
        # [1, tokens, heads, head_dim]
        xt = torch.from_numpy(x.copy()).view(1, tokens, heads, head_dim)
        if spec["layout"] == "halves":
            xh = xt.transpose(1, 2)  # [1, heads, tokens, head_dim]
            x_rot, x_pass = xh[..., :rotary_dim], xh[..., rotary_dim:]
            c = torch.from_numpy(cos_half.copy())[None]
            s = torch.from_numpy(sin_half.copy())[None]
            cos = torch.cat((c, c), dim=-1)  # HF's emb = cat(freqs, freqs)
            sin = torch.cat((s, s), dim=-1)
            r, _ = hf_apply_rotary_pos_emb(x_rot, x_rot, cos, sin)
            out = torch.cat((r, x_pass), dim=-1).transpose(1, 2)
        else:
            x_rot, x_pass = xt[..., :rotary_dim], xt[..., rotary_dim:]
            sin = torch.from_numpy(sin_half.copy())[None]
            cos = torch.from_numpy(cos_half.copy())[None]
            r = gptj_apply_rotary_pos_emb(x_rot, sin, cos)
            out = torch.cat([r, x_pass], dim=-1)
        return out.reshape(tokens, heads * head_dim).contiguous().numpy()

    q_out = run_torch(q_in, spec["q_heads"])
    k_out = run_torch(k_in, spec["k_heads"])
    q_ref = spec_formula(q_in, cos_half, sin_half, spec["q_heads"], head_dim, rotary_dim, spec["layout"])
    k_ref = spec_formula(k_in, cos_half, sin_half, spec["k_heads"], head_dim, rotary_dim, spec["layout"])
    same = np.array_equal(q_out, q_ref) and np.array_equal(k_out, k_ref)
    # A fused multiply-add in either product would change some bits: measure how many.
    fma_diff = 0
    for x, heads, out in ((q_in, spec["q_heads"], q_out), (k_in, spec["k_heads"], k_out)):
        for t in range(tokens):
            for hd in range(heads):
                o = hd * head_dim
                for i in range(half):
                    a, b = (o + i, o + i + half) if spec["layout"] == "halves" else (o + 2 * i, o + 2 * i + 1)
                    x1, x2 = x[t, a], x[t, b]
                    c, s = cos_half[t, i], sin_half[t, i]
                    fused = f32(float(x1) * float(c) - float(f32(x2 * s)))
                    fma_diff += fused != out[t, a]
    stats.add(f"apply {spec['name']:40s} torch == spec formula bit for bit: {same}; "
              f"one-FMA variant would differ in {fma_diff} of {tokens * (spec['q_heads'] + spec['k_heads']) * half}")
    assert same, spec["name"]
    assert np.array_equal(q_out[:, rotary_dim:head_dim], q_in[:, rotary_dim:head_dim])
    return dict(spec=spec, tokens=tokens, head_dim=head_dim, rotary_dim=rotary_dim,
                q_in=q_in, k_in=k_in, q_out=q_out, k_out=k_out)


# ----------------------------------------------------------------------------------------------
# ALiBi.

def torch_bloom_alibi(attention_mask, num_heads, dtype):
    """build_alibi_tensor (modeling_bloom.py @ 0078a6cd)."""
    batch_size, seq_length = attention_mask.shape
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))), dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
    alibi = slopes[..., None] * arange_tensor
    return alibi.reshape(batch_size * num_heads, 1, seq_length).to(dtype), slopes


def torch_falcon_alibi(attention_mask, num_heads, dtype):
    """Falcon's build_alibi_tensor (modeling_falcon.py @ 44272086): BLOOM's, with
    `slopes[..., None].bfloat16() * arange_tensor`."""
    batch_size, seq_length = attention_mask.shape
    _, slopes = torch_bloom_alibi(attention_mask, num_heads, torch.float32)
    arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
    alibi = slopes[..., None].bfloat16() * arange_tensor
    return alibi.reshape(batch_size * num_heads, 1, seq_length).to(dtype)


def torch_mpt_alibi(num_heads, sequence_length, alibi_bias_max=8, float_dtype=torch.float32):
    """build_mpt_alibi_tensor; float_dtype=float64 runs the same steps in double."""
    alibi = torch.arange(1 - sequence_length, 1, dtype=torch.int32).view(1, 1, 1, sequence_length)
    num_heads_power_of_2 = 2 ** math.ceil(math.log2(num_heads))
    base = torch.arange(1, num_heads_power_of_2 + 1, dtype=torch.int64).to(float_dtype)
    base = base * (alibi_bias_max / num_heads_power_of_2)
    slopes = 1.0 / torch.pow(2, base)
    slopes = slopes.view(1, num_heads_power_of_2, 1, 1)
    if num_heads_power_of_2 != num_heads:
        slopes = torch.concat([slopes[:, 1::2, ...], slopes[:, ::2, ...]], dim=1)[:, :num_heads, ...]
    alibi = alibi * slopes
    return alibi.squeeze(0), slopes.reshape(-1)


def emu_bloom_slopes(num_heads):
    """Python-double bases (2 ** x with x = -(2 ** -(log2(n) - 3)), correctly rounded), rounded
    to float32 by torch.tensor, then float32 pow to integer powers (correctly rounded)."""
    cp2 = 2 ** math.floor(math.log2(num_heads))
    slopes, exact = [], []

    def py_base(n):
        x = -(2 ** -(math.log2(n) - 3))
        return cr_pow64(2, x), mpmath.power(2, -mpf(8) / n)

    b, bx = py_base(cp2)
    assert b == 2 ** (-(2 ** -(math.log2(cp2) - 3)))
    for k in range(1, cp2 + 1):
        slopes.append(cr_pow32(f32(b), f32(k)))
        exact.append(mpmath.power(bx, k))
    if cp2 != num_heads:
        eb, ebx = py_base(2 * cp2)
        assert eb == 2 ** (-(2 ** -(math.log2(2 * cp2) - 3)))
        rem = min(cp2, num_heads - cp2)
        for k in range(1, 1 + 2 * rem, 2):
            slopes.append(cr_pow32(f32(eb), f32(k)))
            exact.append(mpmath.power(ebx, k))
    return np.array(slopes, dtype=np.float32), exact


def emu_mpt_slopes(num_heads, bias_max):
    n2 = 2 ** math.ceil(math.log2(num_heads))
    step32, step64 = f32(bias_max / n2), bias_max / n2
    s32 = [f32(1.0) / cr_pow32(f32(2), f32(m) * step32) for m in range(1, n2 + 1)]
    s64 = [1.0 / cr_pow64(2, float(m) * step64) for m in range(1, n2 + 1)]
    ex = [mpmath.power(2, -mpf(m) * bias_max / n2) for m in range(1, n2 + 1)]
    if n2 != num_heads:
        def order(v):
            return (v[1::2] + v[::2])[:num_heads]
        s32, s64, ex = order(s32), order(s64), order(ex)
    return np.array(s32, dtype=np.float32), np.array(s64), ex


BLOOM_HEADS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16, 24, 32, 40, 64, 80, 96, 112]
MPT_HEADS = [(8, 8), (12, 8), (16, 8), (24, 8), (32, 8), (64, 8), (12, 16)]


def build_alibi(stats):
    slope_cases = []
    worst = 0
    diffs = 0
    count = 0
    for h in BLOOM_HEADS:
        s32, ex = emu_bloom_slopes(h)
        _, ts = torch_bloom_alibi(torch.ones(1, 2, dtype=torch.int64), h, torch.float32)
        ts = ts.numpy()
        d = [ulps32(a, b) for a, b in zip(s32, ts) if a != b]
        diffs += len(d)
        count += h
        worst = max([worst] + d)
        slope_cases.append(dict(family="bloom", heads=h, bias_max=0.0, s32=s32,
                                ex=np.array([round_f64(v) for v in ex])))
    stats.add(f"alibi bloom slopes: torch differs from the emulation in {diffs}/{count} (max {worst} ulp)")
    diffs = count = worst = 0
    for h, bm in MPT_HEADS:
        s32, _, ex = emu_mpt_slopes(h, bm)
        # torch's slopes as the bias at relative position -1
        tb, _ = torch_mpt_alibi(h, 2, bm)
        ts = -tb.numpy()[:, 0, 0]
        d = [ulps32(a, b) for a, b in zip(s32, ts) if a != b]
        diffs += len(d)
        count += h
        worst = max([worst] + d)
        slope_cases.append(dict(family="mpt", heads=h, bias_max=float(bm), s32=s32,
                                ex=np.array([round_f64(v) for v in ex])))
    stats.add(f"alibi mpt slopes: torch differs from the emulation in {diffs}/{count} (max {worst} ulp)")

    bias_cases = []
    # bloom: batch 3, seq 6, 12 heads (8 + 4 interleaved extra slopes), right / left / no padding
    mask = np.array([[1, 1, 1, 1, 0, 0], [0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]], dtype=np.int64)
    heads = 12
    s32, _ = emu_bloom_slopes(heads)
    pos = (np.cumsum(mask, axis=-1) - 1) * mask
    emu32 = np.zeros((3, heads, 6), dtype=np.float32)
    for b in range(3):
        for hh in range(heads):
            for t in range(6):
                emu32[b, hh, t] = s32[hh] * f32(pos[b, t])
    t32, _ = torch_bloom_alibi(torch.from_numpy(mask), heads, torch.float32)
    t64, _ = torch_bloom_alibi(torch.from_numpy(mask), heads, torch.float64)
    t32 = t32.numpy().reshape(3, heads, 6)
    t64 = t64.numpy().reshape(3, heads, 6)
    assert t64.dtype == np.float64
    bias64 = emu32.astype(np.float64)  # HF: the float32 product, then .to(float64)
    dd = np.sum(t32 != emu32)
    as_double = np.sum(bias64 != (s32.astype(np.float64)[None, :, None] * pos[:, None, :]))
    stats.add(f"alibi bloom bias (3x12x6): torch float32 differs from the emulation in {dd}; "
              f"dtype=float64 returns float32 products widened: {np.array_equal(t64, t32.astype(np.float64))}; "
              f"{as_double} of 216 differ from slope_f32 * position computed in double")
    bias_cases.append(dict(family="bloom", batch=3, seq=6, heads=heads, bias_max=0.0, mask=mask,
                           b32=emu32, b64=bias64))
    # mpt: 6 heads (8 slopes, reordered and cut), seq 5
    heads, seq = 6, 5
    s32, s64, _ = emu_mpt_slopes(heads, 8)
    rel = np.arange(1 - seq, 1)
    emu32 = np.array([[f32(r) * s32[hh] for r in rel] for hh in range(heads)], dtype=np.float32)
    emu64 = np.array([[float(r) * s64[hh] for r in rel] for hh in range(heads)])
    t32, _ = torch_mpt_alibi(heads, seq, 8)
    t64, _ = torch_mpt_alibi(heads, seq, 8, torch.float64)
    t32, t64 = t32.numpy().reshape(heads, seq), t64.numpy().reshape(heads, seq)
    stats.add(f"alibi mpt bias (6x5): torch float32 differs from the emulation in {np.sum(t32 != emu32)}, "
              f"float64 in {np.sum(t64 != emu64)} (max {np.abs(t64 - emu64).max():.1e})")
    bias_cases.append(dict(family="mpt", batch=1, seq=seq, heads=heads, bias_max=8.0,
                           mask=np.ones((1, seq), dtype=np.int64), b32=emu32, b64=emu64))
    # falcon: 3 heads (2 + 1 extra), 300 keys, one row left-padded: positions past 256 round to
    # bfloat16 too.
    heads, seq = 3, 300
    mask = np.ones((2, seq), dtype=np.int64)
    mask[1, :5] = 0
    t32 = torch_falcon_alibi(torch.from_numpy(mask), heads, torch.float32).numpy().reshape(2, heads, seq)
    t64 = torch_falcon_alibi(torch.from_numpy(mask), heads, torch.float64).numpy().reshape(2, heads, seq)
    assert np.array_equal(t64, t32.astype(np.float64))
    stats.add(f"alibi falcon bias (2x3x300): {np.sum(t32 != np.float32(0))} nonzero bfloat16 products")
    bias_cases.append(dict(family="falcon", batch=2, seq=seq, heads=heads, bias_max=0.0, mask=mask,
                           b32=t32, b64=t64))
    return slope_cases, bias_cases


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
    return json.dumps(text)


def ident(name):
    return name.replace(".", "p").replace("-", "_")


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

    def longs(self, name, values, per_line=12):
        return self.array("long", name, values, per_line, lambda v: str(int(v)))

    def doubles(self, name, values, per_line=4):
        return self.array("double", name, values, per_line, hexfloat)


PREAMBLE = """\
// Generated by tests/reference/generate_rope_fixtures.py -- do not edit by hand.
#pragma once
// {versions}
// Rotary position embeddings (RoPE) and ALiBi after Hugging Face transformers (issue 15): every
// frequency rule of modeling_rope_utils.py, the apply step of both pair layouts, BLOOM's and MPT's
// ALiBi. See tests/reference/README.md ("Rotary positions and ALiBi fixtures").
// follow_* / inv_freq_f32 / slopes_f32 / bias: HF's float32 operations one by one, with pow, log,
// cos and sin correctly rounded (torch's SLEEF kernels are within 1 ulp of these); exact_*: the
// rule's real formula (mpmath, 60 digits) rounded once.
namespace seqembed_rope_fixtures {{

struct FrequencyCase {{
    const char* name;                // unique, e.g. "llama3_theta500000_d128"
    const char* rule;                // "default" | "linear" | "dynamic" | "yarn" | "llama3" | "longrope"
    const char* config_json;         // config.json keys HF reads for this rule
    long head_dim;                   // the head's width
    long rotary_dim;                 // the rotated dims: int(head_dim * partial_rotary_factor)
    long sequence_length;            // the seq_len the forward saw: max(position) + 1
    double attention_scaling;        // HF's attention_scaling (a Python float)
    const double* inv_freq_f32;      // rotary_dim/2: inv_freq as HF computes it, float32
    const double* frequency_exact;   // rotary_dim/2: the rule's real frequency, rounded once to double
    long position_count;
    const long* positions;
    const double* follow_cos_f32;    // position_count x rotary_dim/2: f32(cos(f32(inv_freq * f32(p)))) * f32(attention_scaling)
    const double* follow_sin_f32;
    const double* exact_cos_f32;     // attention_scaling * cos(p * frequency), real, rounded once to float32
    const double* exact_sin_f32;
    const double* exact_cos_f64;     // the same rounded once to float64
    const double* exact_sin_f64;
}};

struct ApplyCase {{
    const char* name;
    const char* layout;              // "halves" (HF rotate_half, GPT-NeoX) | "interleaved" (GPT-J, Meta Llama)
    const char* frequency_case;      // the FrequencyCase whose follow_* tables (float32) were used
    long tokens;                     // rows of q and k (batch*seq flattened)
    long q_heads;
    long k_heads;
    long head_dim;
    long rotary_dim;                 // < head_dim: partial rotary, the rest unchanged
    const long* positions;           // tokens values, the position each row was rotated by
    const double* q_in;              // tokens x (q_heads*head_dim), float32 values
    const double* k_in;              // tokens x (k_heads*head_dim)
    const double* q_out;             // the reference's output, float32
    const double* k_out;
}};

struct AlibiSlopesCase {{
    const char* family;              // "bloom" | "mpt"
    long heads;
    double alibi_bias_max;           // MPT's (8 by default); 0 for bloom
    const double* slopes_f32;        // heads values as the framework computes them in float32
    const double* slopes_exact_f64;  // the real values (mpmath) rounded to float64
}};

struct AlibiBiasCase {{
    const char* family;              // "bloom" | "mpt" | "falcon"
    long batch, seq, heads;
    double alibi_bias_max;
    const long* attention_mask;      // batch x seq (1 token, 0 pad); mpt: batch 1, all ones (MPT's bias takes no mask)
    const double* bias_f32;          // bloom, falcon: build_alibi_tensor(mask, heads, float32) as batch x heads x seq;
                                     // mpt: build_mpt_alibi_tensor -> heads x seq
    const double* bias_f64;          // bloom: build_alibi_tensor(mask, heads, float64): HF multiplies in float32
                                     // and converts, so these equal bias_f32; mpt: the same steps in float64
}};

"""


def generate():
    check_torch_setup()
    stats = Stats()
    header = Header()
    fcases = {}
    entries = []
    for spec in frequency_case_specs():
        fc = build_frequency_case(spec, stats)
        fcases[spec["name"]] = fc
        c = ident(spec["name"])
        half = fc["dim"] // 2
        e = dict(
            inv=header.doubles(c + "_inv_freq_f32", fc["inv"]),
            fx=header.doubles(c + "_frequency_exact", fc["freq_exact"]),
            pos=header.longs(c + "_positions", fc["positions"]),
            fcos=header.doubles(c + "_follow_cos_f32", fc["follow_cos"]),
            fsin=header.doubles(c + "_follow_sin_f32", fc["follow_sin"]),
            ec32=header.doubles(c + "_exact_cos_f32", fc["exact"]["c32"]),
            es32=header.doubles(c + "_exact_sin_f32", fc["exact"]["s32"]),
            ec64=header.doubles(c + "_exact_cos_f64", fc["exact"]["c64"]),
            es64=header.doubles(c + "_exact_sin_f64", fc["exact"]["s64"]),
        )
        header.lines.append("")
        cfg_text = json.dumps(spec["cfg"], sort_keys=True)
        entries.append(
            f"    {{{cpp_string(spec['name'])}, {cpp_string(spec['rule'])},\n"
            f"     {cpp_string(cfg_text)},\n"
            f"     {fc['head_dim']}, {fc['dim']}, {fc['seq_len']}, {hexfloat(fc['att'])}, {e['inv']}, {e['fx']},\n"
            f"     {len(fc['positions'])}, {e['pos']}, {e['fcos']}, {e['fsin']},\n"
            f"     {e['ec32']}, {e['es32']}, {e['ec64']}, {e['es64']}}},")
        assert half == len(fc["inv"])

    apply_entries = []
    for spec in apply_case_specs():
        ac = build_apply_case(spec, fcases[spec["freq"]], stats)
        c = "apply_" + ident(spec["name"])
        hd = ac["head_dim"]
        names = dict(
            pos=header.longs(c + "_positions", spec["positions"]),
            q_in=header.doubles(c + "_q_in", ac["q_in"], hd // 2),
            k_in=header.doubles(c + "_k_in", ac["k_in"], hd // 2),
            q_out=header.doubles(c + "_q_out", ac["q_out"], hd // 2),
            k_out=header.doubles(c + "_k_out", ac["k_out"], hd // 2),
        )
        header.lines.append("")
        apply_entries.append(
            f"    {{{cpp_string(spec['name'])}, {cpp_string(spec['layout'])}, {cpp_string(spec['freq'])},\n"
            f"     {ac['tokens']}, {spec['q_heads']}, {spec['k_heads']}, {hd}, {ac['rotary_dim']},\n"
            f"     {names['pos']}, {names['q_in']}, {names['k_in']}, {names['q_out']}, {names['k_out']}}},")

    slope_cases, bias_cases = build_alibi(stats)
    slope_entries = []
    for sc in slope_cases:
        c = f"alibi_{sc['family']}_h{sc['heads']}" + (f"_max{int(sc['bias_max'])}" if sc["family"] == "mpt" else "")
        n32 = header.doubles(c + "_slopes_f32", sc["s32"])
        nex = header.doubles(c + "_slopes_exact_f64", sc["ex"])
        slope_entries.append(f"    {{{cpp_string(sc['family'])}, {sc['heads']}, {hexfloat(sc['bias_max'])}, "
                             f"{n32}, {nex}}},")
    header.lines.append("")
    bias_entries = []
    for bc in bias_cases:
        c = f"alibi_bias_{bc['family']}_b{bc['batch']}_s{bc['seq']}_h{bc['heads']}"
        nm = header.longs(c + "_attention_mask", bc["mask"], bc["seq"])
        n32 = header.doubles(c + "_bias_f32", bc["b32"], bc["seq"])
        n64 = header.doubles(c + "_bias_f64", bc["b64"], bc["seq"])
        bias_entries.append(f"    {{{cpp_string(bc['family'])}, {bc['batch']}, {bc['seq']}, {bc['heads']}, "
                            f"{hexfloat(bc['bias_max'])}, {nm}, {n32}, {n64}}},")
    header.lines.append("")

    versions = (f"torch {torch.__version__} (ATen CPU capability AVX2, 1 thread), numpy {np.__version__}, "
                f"mpmath {mpmath.__version__}.")
    text = [PREAMBLE.format(versions=versions)]
    text.extend(header.lines)
    text.append("inline constexpr FrequencyCase frequency_cases[] = {")
    text.extend(entries)
    text.append("};")
    text.append("inline constexpr ApplyCase apply_cases[] = {")
    text.extend(apply_entries)
    text.append("};")
    text.append("inline constexpr AlibiSlopesCase alibi_slopes_cases[] = {")
    text.extend(slope_entries)
    text.append("};")
    text.append("inline constexpr AlibiBiasCase alibi_bias_cases[] = {")
    text.extend(bias_entries)
    text.append("};")
    text.append("")
    text.append("}  // namespace seqembed_rope_fixtures")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(text) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size} bytes): {len(entries)} frequency cases, "
          f"{len(apply_entries)} apply cases, {len(slope_entries)} slope cases, {len(bias_entries)} bias cases")


if __name__ == "__main__":
    if len(sys.argv) != 1:
        print(__doc__)
        sys.exit(2)
    generate()
