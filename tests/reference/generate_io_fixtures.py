#!/usr/bin/python3
"""Fixtures for seqembed's file readers and writers (tests/io/), from code nobody here wrote.

    /usr/bin/python3 tests/reference/generate_io_fixtures.py            write tests/io/fixtures/
    /usr/bin/python3 tests/reference/generate_io_fixtures.py --check D  check files seqembed wrote
                                                                        into D (numpy.load, torch)

Writes, into tests/io/fixtures/:
  - .npy files written by numpy itself (numpy.save, numpy.lib.format.write_array for versions
    1.0, 2.0 and 3.0), in Fortran order and big-endian too; integer and bool arrays (input_ids
    as int64 and int32, attention masks as uint8 and bool, every other integer width, '>i8',
    Fortran order), scalars (shape ()), and a file into which np.save wrote two arrays;
  - safetensors files holding real torch state dicts (an nn.Embedding, a LayerNorm, a Conv1d;
    a tokenized batch: int64 input_ids, attention_mask and position_ids, int32 token_type_ids,
    uint8 and bool masks, int8 and int16 tensors, float and int scalars of shape []), written by
    this script from the format's specification (below), not by seqembed and not by the
    safetensors package (Debian does not ship it); U16, U32 and U64 tensors, which torch 1.13
    lacks, from numpy arrays;
  - reference files for seqembed's writers: what numpy.save and a spec-following safetensors
    writer produce for fixed tensors, which seqembed's save_npy / save_safetensors must
    reproduce byte for byte;
  - expected_values.hpp: every fixture's values (hex floats, or the raw bits of bfloat16/half
    as torch rounded them), so that the C++ tests need no Python.

The safetensors format (huggingface/safetensors, README "Format"): 8 bytes little-endian
unsigned header size N; N bytes of UTF-8 JSON, an object mapping each tensor name to
{"dtype", "shape", "data_offsets": [begin, end]} with offsets relative to the byte after the
header, and an optional "__metadata__" object of strings; then the data buffer, little-endian,
C order, the tensors tiling it exactly. The reference writer sorts tensors by dtype alignment
(largest first) then by name, writes compact JSON with "__metadata__" first, and pads the header
with spaces to a multiple of 8 bytes.

--check D reads what tests/io's `io_write_for_numpy` test wrote into D with numpy.load (the
.npy files) and with this script's spec reader plus torch (the safetensors file), and compares
every value with the arrays defined here. Running the generator twice gives identical files.
"""

import json
import os
import struct
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "io", "fixtures")

# The safetensors dtypes this script writes, in the reference implementation's enum order
# (increasing alignment: the writer sorts by it, descending).
DTYPE_ORDER = ["BOOL", "U8", "I8", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "F64", "I64", "U64"]
TORCH_DTYPES = {
    torch.float16: "F16", torch.bfloat16: "BF16", torch.float32: "F32", torch.float64: "F64",
    torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
    torch.uint8: "U8", torch.bool: "BOOL",
}
# The unsigned dtypes torch 1.13 does not have, written from numpy arrays.
NUMPY_DTYPES = {np.dtype(np.uint16): "U16", np.dtype(np.uint32): "U32", np.dtype(np.uint64): "U64"}


def dtype_of(t):
    """The safetensors dtype of a torch tensor or a numpy array."""
    return NUMPY_DTYPES[t.dtype] if isinstance(t, np.ndarray) else TORCH_DTYPES[t.dtype]


def tensor_bytes(t):
    """The little-endian C-order bytes of a torch tensor (bfloat16 through its int16 view) or of a
    numpy array."""
    if isinstance(t, np.ndarray):
        return np.ascontiguousarray(t).astype(t.dtype.newbyteorder("<")).tobytes()
    t = t.detach().contiguous()
    if t.dtype in (torch.bfloat16, torch.float16):
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    return t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()


def safetensors_bytes(tensors, metadata=None, header_pad=None):
    """A safetensors file from {name: torch tensor}, as the specification lays it out.

    header_pad: None pads the header to a multiple of 8 (the reference writer); an int k pads
    it so that its length is k modulo 8 (a valid file whose data is misaligned)."""
    names = sorted(tensors, key=lambda n: (-DTYPE_ORDER.index(dtype_of(tensors[n])), n))
    header = {}
    if metadata:
        header["__metadata__"] = dict(sorted(metadata.items()))
    offset = 0
    blobs = []
    for name in names:
        data = tensor_bytes(tensors[name])
        header[name] = {"dtype": dtype_of(tensors[name]),
                        "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    if header_pad is None:
        text += b" " * ((8 - len(text) % 8) % 8)
    else:
        text += b" " * ((header_pad - len(text)) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def read_safetensors(path):
    """{name: torch tensor} and the metadata of a safetensors file, checked as the spec says."""
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    buffer = raw[8 + n:]
    by_name = {v: k for k, v in TORCH_DTYPES.items()}
    spans = sorted((info["data_offsets"], name) for name, info in header.items())
    end = 0
    for (begin, stop), name in spans:
        assert begin == end, f"{path}: gap or overlap at {name}"
        end = stop
    assert end == len(buffer), f"{path}: {len(buffer) - end} extra bytes"
    out = {}
    for name, info in header.items():
        begin, stop = info["data_offsets"]
        dtype = by_name[info["dtype"]]
        chunk = bytearray(buffer[begin:stop])
        if dtype in (torch.bfloat16, torch.float16):
            t = torch.frombuffer(chunk, dtype=torch.int16).view(dtype) if chunk else torch.empty(0, dtype=dtype)
        else:
            t = torch.frombuffer(chunk, dtype=dtype) if chunk else torch.empty(0, dtype=dtype)
        out[name] = t.reshape(info["shape"])
    return out, metadata


# ----------------------------------------------------------------------------------------------
# The tensors seqembed's writers must reproduce (tests/io/test_io_writers.cpp builds the same).

def writer_tensors():
    return {
        "b.weight": torch.arange(6, dtype=torch.float32).reshape(2, 3) * 0.5 - 1.0,
        "a.bias": torch.tensor([1.0 / 3.0, -2.5, 1e300], dtype=torch.float64),
        "c.table": (torch.arange(4, dtype=torch.float32).reshape(2, 2) / 3.0).to(torch.bfloat16),
        "d.gamma": (torch.arange(5, dtype=torch.float32) / 7.0).to(torch.float16),
        "e.empty": torch.zeros(0, 4, dtype=torch.float32),
    }


WRITER_METADATA = {"format": "pt", "note": "written by seqembed, \u00fcnicode \u2713"}


def writer_integer_tensors():
    """Integer, bool and scalar tensors (tests/io/writer_cases.hpp's WriterIntegers)."""
    ids = torch.tensor([[101, 2023, 102], [101, 102, 0]], dtype=torch.int64)
    return {
        "input_ids": ids,
        "attention_mask": ids != 0,
        "mask_u8": (ids != 0).to(torch.uint8),
        "token_type_ids": torch.tensor([0, 0, 1], dtype=torch.int32),
        "step": torch.tensor(-7, dtype=torch.int64),
        "scale": torch.tensor(0.125, dtype=torch.float32),
    }


def writer_arrays():
    return {
        "writer_f4.npy": (np.arange(12, dtype=np.float32).reshape(3, 4) * np.float32(0.25) - np.float32(1)),
        "writer_f8.npy": np.array([[1.0 / 3.0, 2.0 / 3.0], [-1e-300, 5e300]], dtype=np.float64),
        "writer_f2.npy": (np.arange(10, dtype=np.float32) / 9).astype(np.float16).reshape(2, 5),
        "writer_vector_f4.npy": np.linspace(-1, 1, 7, dtype=np.float32),
        "writer_ids_i8.npy": np.array([[101, 2023, 102], [101, 102, 0]], dtype=np.int64),
        "writer_ids_i4.npy": np.array([101, -2, 2147483647], dtype=np.int32),
        "writer_mask_u1.npy": np.array([[1, 1, 1], [1, 1, 0]], dtype=np.uint8),
        "writer_mask_b1.npy": np.array([[True, True, True], [True, True, False]]),
        "writer_scalar_i8.npy": np.array(-7, dtype=np.int64),
        "writer_scalar_f8.npy": np.array(0.1, dtype=np.float64),
    }


# ----------------------------------------------------------------------------------------------

def hex_double(x):
    return float(x).hex().replace("0x", "0x") if np.isfinite(x) else (
        "std::numeric_limits<double>::infinity()" if x > 0 else "-std::numeric_limits<double>::infinity()")


def cpp_doubles(name, array):
    flat = np.asarray(array, dtype=np.float64).reshape(-1)
    body = ", ".join(hex_double(v) for v in flat)
    shape = ", ".join(str(d) for d in np.shape(array))
    return f"inline const std::vector<long> {name}_shape{{{shape}}};\ninline const std::vector<double> {name}{{{body}}};\n"


def cpp_int(v):
    v = int(v)
    return "(-9223372036854775807 - 1)" if v == -(2 ** 63) else str(v)


def cpp_ints(name, array):
    """An integer (or bool) array's values as int64, and its shape."""
    flat = np.asarray(array).reshape(-1)
    body = ", ".join(cpp_int(v) for v in flat)
    shape = ", ".join(str(d) for d in np.shape(array))
    return (f"inline const std::vector<long> {name}_shape{{{shape}}};\n"
            f"inline const std::vector<std::int64_t> {name}{{{body}}};\n")


def cpp_bits(name, array_u16):
    flat = np.asarray(array_u16).reshape(-1)
    body = ", ".join(f"0x{int(v) & 0xFFFF:04x}" for v in flat)
    return f"inline const std::vector<std::uint16_t> {name}{{{body}}};\n"


def generate():
    os.makedirs(OUT, exist_ok=True)
    expected = []

    # A real torch state dict: an embedding, learned positions, a LayerNorm, a Conv1d (rank 3).
    torch.manual_seed(20240612)
    embed = torch.nn.Embedding(11, 8, padding_idx=0)
    positions = torch.nn.Embedding(6, 8)
    norm = torch.nn.LayerNorm(8)
    with torch.no_grad():
        norm.weight.copy_(torch.linspace(0.5, 1.5, 8))
        norm.bias.copy_(torch.linspace(-0.1, 0.1, 8))
    conv = torch.nn.Conv1d(3, 2, kernel_size=4, bias=False)
    state = {
        "embed.weight": embed.weight.detach(),
        "pos.weight": positions.weight.detach(),
        "norm.weight": norm.weight.detach(),
        "norm.bias": norm.bias.detach(),
        "conv.weight": conv.weight.detach(),
        "embed_bf16": embed.weight.detach().to(torch.bfloat16),
        "embed_f16": embed.weight.detach().to(torch.float16),
        "embed_f64": embed.weight.detach().to(torch.float64) / 3.0,
        "step": torch.tensor([1234], dtype=torch.int64),
    }
    with open(os.path.join(OUT, "torch_model.safetensors"), "wb") as f:
        f.write(safetensors_bytes(state, {"format": "pt", "source": "generate_io_fixtures.py"}))
    for name in ["embed.weight", "pos.weight", "norm.weight", "norm.bias", "conv.weight", "embed_f64"]:
        expected.append(cpp_doubles("torch_" + name.replace(".", "_"), state[name].numpy()))
    expected.append(cpp_bits("torch_embed_bf16_bits", state["embed_bf16"].view(torch.int16).numpy()))
    expected.append(cpp_bits("torch_embed_f16_bits", state["embed_f16"].view(torch.int16).numpy()))

    # A valid file whose data is misaligned: the header's length is 5 modulo 8.
    misaligned = {
        "w": (torch.arange(15, dtype=torch.float32) * 0.25 - 1.5).reshape(3, 5),
        "v": torch.tensor([1.0 / 3.0, -2.5, 1e300, -0.0], dtype=torch.float64),
    }
    with open(os.path.join(OUT, "misaligned.safetensors"), "wb") as f:
        f.write(safetensors_bytes(misaligned, header_pad=5))
    expected.append(cpp_doubles("misaligned_w", misaligned["w"].numpy()))
    expected.append(cpp_doubles("misaligned_v", misaligned["v"].numpy()))

    # .npy files written by numpy.
    rng = np.random.default_rng(12)
    arrays = {
        "v1_f4": (rng.standard_normal((5, 3)).astype(np.float32), (1, 0), False),
        "v2_f8": (rng.standard_normal((4, 6)), (2, 0), False),
        "v3_f2": (rng.standard_normal((3, 5)).astype(np.float16), (3, 0), False),
        "fortran_f4": (rng.standard_normal((3, 4)).astype(np.float32), (1, 0), True),
        "fortran3_f8": (rng.standard_normal((2, 3, 4)), (1, 0), True),
        "big_f4": (rng.standard_normal((4, 3)).astype(">f4"), (1, 0), False),
        "big_f8": (rng.standard_normal((2, 5)).astype(">f8"), (1, 0), False),
        "big_f2": (rng.standard_normal(6).astype(">f2"), (1, 0), False),
        "vector_f4": (rng.standard_normal(7).astype(np.float32), (1, 0), False),
        "scalar_f8": (np.array(2.5), (1, 0), False),
        "rank5_f4": (np.ones((1, 2, 1, 2, 1), dtype=np.float32), (1, 0), False),
    }
    for name, (array, version, fortran) in arrays.items():
        stored = np.asfortranarray(array) if fortran else array
        with open(os.path.join(OUT, name + ".npy"), "wb") as f:
            np.lib.format.write_array(f, stored, version=version)
        check = np.load(os.path.join(OUT, name + ".npy"))
        assert check.dtype == array.dtype and np.array_equal(check, array)
        assert check.flags["F_CONTIGUOUS"] == fortran or array.ndim < 2
        expected.append(cpp_doubles("npy_" + name, array.astype(np.float64)))

    # A tokenized batch as a torch state dict: ids and masks of every integer dtype torch has,
    # and scalars (shape []).
    input_ids = torch.tensor([[101, 7592, 1010, 2088, 102, 0, 0], [101, 2129, 2024, 2017, 1029, 102, 0]],
                             dtype=torch.int64)
    attention_mask = (input_ids != 0).to(torch.int64)
    batch = {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "position_ids": torch.arange(7, dtype=torch.int64).unsqueeze(0),
        "token_type_ids": torch.tensor([[0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 1, 1, 1, 0]], dtype=torch.int32),
        "mask_u8": attention_mask.to(torch.uint8),
        "mask_bool": attention_mask.to(torch.bool),
        "ids_vector": input_ids[0].clone(),
        "ids_rank3": torch.arange(8, dtype=torch.int64).reshape(2, 2, 2) * 1000003,
        "wide_i64": torch.tensor([[-(2 ** 63), -1, 0, 2 ** 32, 2 ** 63 - 1]], dtype=torch.int64),
        "small_i8": torch.tensor([-128, -1, 0, 127], dtype=torch.int8),
        "small_i16": torch.tensor([[-32768, 32767], [-2, 300]], dtype=torch.int16),
        "logit_scale": torch.tensor(2.6592, dtype=torch.float32),
        "temperature": torch.tensor(0.7, dtype=torch.float64),
        "step": torch.tensor(1234, dtype=torch.int64),
        "flag": torch.tensor(True),
    }
    with open(os.path.join(OUT, "torch_batch.safetensors"), "wb") as f:
        f.write(safetensors_bytes(batch, {"format": "pt"}))
    for name, t in batch.items():
        if t.dtype in (torch.float32, torch.float64):
            expected.append(cpp_doubles("batch_" + name, t.numpy()))
        else:
            expected.append(cpp_ints("batch_" + name, t.numpy()))
    # The unsigned widths torch lacks; the last U64 is above int64's range.
    unsigned = {
        "u16": np.array([0, 1, 65535], dtype=np.uint16),
        "u32": np.array([[0, 4294967295]], dtype=np.uint32),
        "u64": np.array([0, 2 ** 63 - 1], dtype=np.uint64),
        "u64_above_int64": np.array([[5, 6], [7, 2 ** 64 - 1]], dtype=np.uint64),
    }
    with open(os.path.join(OUT, "unsigned.safetensors"), "wb") as f:
        f.write(safetensors_bytes(unsigned))
    for name in ["u16", "u32", "u64"]:
        expected.append(cpp_ints("unsigned_" + name, unsigned[name]))

    # Integer, bool and scalar .npy files written by numpy.save.
    int_arrays = {
        "ids_i8": (input_ids.numpy(), False),
        "ids_i4": (np.array([[101, 2023, 102], [101, 102, 0]], dtype=np.int32), False),
        "ids_vector_i8": (input_ids[1].numpy().copy(), False),
        "mask_u1": (attention_mask.numpy().astype(np.uint8), False),
        "mask_b1": (attention_mask.numpy().astype(bool), False),
        "mask_i8": (attention_mask.numpy(), False),
        "ints_i1": (np.array([-128, -1, 0, 127], dtype=np.int8), False),
        "ints_i2": (np.array([[-32768, 32767], [-2, 300]], dtype=np.int16), False),
        "ints_u2": (np.array([0, 1, 65535], dtype=np.uint16), False),
        "ints_u4": (np.array([0, 4294967295], dtype=np.uint32), False),
        "ints_u8": (np.array([0, 2 ** 63 - 1], dtype=np.uint64), False),
        "big_i8": (np.array([[1, -2, 2 ** 40 + 3], [-(2 ** 63), 0, 2 ** 63 - 1]], dtype=">i8"), False),
        "big_u4": (np.array([1, 2 ** 31, 4294967295], dtype=">u4"), False),
        "fortran_i4": (np.arange(12, dtype=np.int32).reshape(3, 4) * 7 - 20, True),
        "scalar_i8": (np.array(42, dtype=np.int64), False),
        "scalar_b1": (np.array(True), False),
        "scalar_f4": (np.array(0.1, dtype=np.float32), False),
    }
    for name, (array, fortran) in int_arrays.items():
        path = os.path.join(OUT, name + ".npy")
        np.save(path, np.asfortranarray(array) if fortran else array)
        check = np.load(path)
        assert check.dtype == array.dtype and np.array_equal(check, array)
        if array.dtype.kind == "f":
            expected.append(cpp_doubles("npy_" + name, array.astype(np.float64)))
        else:
            expected.append(cpp_ints("npy_" + name, array))
    with open(os.path.join(OUT, "u8_above_int64.npy"), "wb") as f:
        np.save(f, np.array([[1, 2], [2 ** 63, 3]], dtype=np.uint64))
    # Two arrays np.save'd into one file: numpy.load reads the first and ignores the rest.
    first, second = input_ids.numpy()[:, :5].copy(), np.linspace(0, 1, 6, dtype=np.float32)
    with open(os.path.join(OUT, "two_arrays.npy"), "wb") as f:
        np.save(f, first)
        np.save(f, second)
    assert np.array_equal(np.load(os.path.join(OUT, "two_arrays.npy")), first)
    with open(os.path.join(OUT, "two_arrays.npy"), "rb") as f:
        assert np.array_equal(np.load(f), first) and np.array_equal(np.load(f), second)
    with open(os.path.join(OUT, "two_arrays.npy"), "rb") as f:
        np.lib.format.read_magic(f)
        np.lib.format.read_array_header_1_0(f)
        trailing = os.path.getsize(os.path.join(OUT, "two_arrays.npy")) - f.tell() - first.nbytes
    expected.append(cpp_ints("npy_two_arrays", first))
    expected.append(f"inline constexpr std::uint64_t npy_two_arrays_trailing_bytes = {trailing};\n")

    # What seqembed's writers must reproduce byte for byte.
    with open(os.path.join(OUT, "writer_reference.safetensors"), "wb") as f:
        f.write(safetensors_bytes(writer_tensors(), WRITER_METADATA))
    with open(os.path.join(OUT, "writer_integers.safetensors"), "wb") as f:
        f.write(safetensors_bytes(writer_integer_tensors()))
    for name, array in writer_arrays().items():
        np.save(os.path.join(OUT, name), array)

    with open(os.path.join(OUT, "expected_values.hpp"), "w") as f:
        f.write("// Generated by tests/reference/generate_io_fixtures.py. Do not edit.\n")
        f.write("#pragma once\n\n#include <cstdint>\n#include <limits>\n#include <vector>\n\n")
        f.write("namespace io_fixtures {\n\n")
        f.write("\n".join(expected))
        f.write("\n}  // namespace io_fixtures\n")
    print(f"wrote {len(os.listdir(OUT))} files into {OUT}")


def check(directory):
    failures = []
    for name, array in writer_arrays().items():
        path = os.path.join(directory, name)
        loaded = np.load(path)
        if loaded.dtype != array.dtype or loaded.shape != array.shape or not np.array_equal(loaded, array):
            failures.append(f"{path}: numpy.load gives {loaded!r}, expected {array!r}")
        if open(path, "rb").read() != open(os.path.join(OUT, name), "rb").read():
            failures.append(f"{path}: differs from numpy.save's bytes")
    path = os.path.join(directory, "writer.safetensors")
    tensors, metadata = read_safetensors(path)
    for name, tensor in writer_tensors().items():
        got = tensors.get(name)
        if got is None or got.dtype != tensor.dtype or got.shape != tensor.shape or not torch.equal(got, tensor):
            failures.append(f"{path}: tensor {name} is {got!r}, expected {tensor!r}")
    if metadata != WRITER_METADATA:
        failures.append(f"{path}: metadata {metadata!r}, expected {WRITER_METADATA!r}")
    path = os.path.join(directory, "writer_integers.safetensors")
    tensors, metadata = read_safetensors(path)
    for name, tensor in writer_integer_tensors().items():
        got = tensors.get(name)
        if got is None or got.dtype != tensor.dtype or got.shape != tensor.shape or not torch.equal(got, tensor):
            failures.append(f"{path}: tensor {name} is {got!r}, expected {tensor!r}")
    if open(path, "rb").read() != open(os.path.join(OUT, "writer_integers.safetensors"), "rb").read():
        failures.append(f"{path}: differs from the spec writer's bytes")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"numpy.load and torch read every file in {directory} as expected")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check(sys.argv[2])
    elif len(sys.argv) == 1:
        generate()
    else:
        print(__doc__)
        sys.exit(2)
