"""A convolution of a base-dilated input (a strided convolution's input
gradient) runs as one convolution per output phase (xlac/passes/conv_phases.py):
the evaluator's values, no convolution left with an lhs dilation."""
import random

import numpy as np
import pytest

import xlac
from xlac.passes import conv_phases


def _module(labels, et, xd, wd, od, window):
    def s(d):
        return f"{et}[{','.join(map(str, d))}]"
    return (f"HloModule c\nENTRY e {{\n  x = {s(xd)} parameter(0)\n  w = {s(wd)} parameter(1)\n"
            f"  ROOT c = {s(od)} convolution(x, w), window={{{window}}}, dim_labels={labels}\n}}")


def _dims(label, sizes):
    return [sizes[ch] if ch in sizes else sizes["sp"][int(ch)] for ch in label]


def _dilated_convolutions(exe):
    return [i for c in exe.lowered.hlo.computations for i in c.instructions
            if i.opcode == "convolution" and "lhs_dilate" in str(i.attrs.get("window"))]


def _random_case(rng):
    nsp = rng.choice([1, 2])
    labels = rng.choice(["b01f_01io->b01f", "bf01_oi01->bf01", "b01f_01oi->b01f"] if nsp == 2 else
                        ["b0f_0io->b0f", "bf0_oi0->bf0"])
    k = [rng.randint(1, 4) for _ in range(nsp)]
    d = [rng.choice([1, 2, 3]) for _ in range(nsp)]
    d[0] = max(d[0], 2)
    n = [rng.randint(1, 8) for _ in range(nsp)]
    pads = [(rng.randint(-1, 3), rng.randint(-1, 3)) for _ in range(nsp)]
    outs = [(ni - 1) * di + 1 + lo + hi - ki + 1 for ni, di, (lo, hi), ki in zip(n, d, pads, k)]
    if min(outs) <= 0:
        return None
    b, c, f = rng.randint(1, 2), rng.randint(1, 3), rng.randint(1, 3)
    lhs, rhs, out = labels.replace("->", "_").split("_")
    window = ("size=" + "x".join(map(str, k)) + " pad=" + "x".join(f"{lo}_{hi}" for lo, hi in pads)
              + " lhs_dilate=" + "x".join(map(str, d)))
    return (labels, _dims(lhs, {"b": b, "f": c, "sp": n}), _dims(rhs, {"i": c, "o": f, "sp": k}),
            _dims(out, {"b": b, "f": f, "sp": outs}), window)


def test_random_base_dilated_convolutions_are_split_by_phase(monkeypatch):
    """1 and 2 spatial dimensions, three dim_labels, dilations 2 and 3 (1 on
    the other dimension), kernels of 1-4 taps, negative and uneven padding:
    phases reading only holes drop out, every other one is a convolution."""
    monkeypatch.setattr(conv_phases, "MIN_FLOPS", 0)
    rng, nrng = random.Random(0), np.random.default_rng(0)
    cases = [c for c in (_random_case(rng) for _ in range(60)) if c is not None][:30]
    for labels, xd, wd, od, window in cases:
        for et, dt, tol in (("f32", np.float32, 1e-5), ("f64", np.float64, 1e-12)):
            text = _module(labels, et, xd, wd, od, window)
            x, w = nrng.standard_normal(xd).astype(dt), nrng.standard_normal(wd).astype(dt)
            exe = xlac.jit(text)
            np.testing.assert_allclose(exe(x, w), xlac.evaluate(text, x, w), rtol=tol, atol=tol, err_msg=text)
            assert not _dilated_convolutions(exe), text


STRIDED_GRAD = _module("b01f_01oi->b01f", "f32", [4, 28, 28, 32], [3, 3, 16, 32], [4, 56, 56, 16],
                       "size=3x3 pad=2_1x2_1 lhs_dilate=2x2")


def test_a_strided_convolutions_input_gradient():
    """jax's input gradient of a 3x3 stride-2 SAME convolution: four phases
    (2x2, 2x1, 1x2 and 1x1 taps) of a quarter of the products each."""
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((4, 28, 28, 32), np.float32), rng.standard_normal((3, 3, 16, 32), np.float32)
    exe = xlac.jit(STRIDED_GRAD)
    assert not _dilated_convolutions(exe)
    assert sum(i.opcode == "convolution" or (i.opcode == "fusion" and "convolution" in
               {j.opcode for j in i.attrs["calls"].instructions})
               for i in exe.lowered.hlo.entry.instructions) == 4
    # The phases interleaved by one kernel of reshapes and concatenations, not
    # placed by interior pads (a kernel each, writing the whole output) and added.
    instructions = [i for c in exe.lowered.hlo.computations for i in c.instructions]
    assert not any(i.opcode == "pad" and any(p[2] for p in i.attrs["padding"]) for i in instructions)
    assert [i.opcode for i in instructions if i.opcode in ("add", "concatenate")] == ["concatenate"] * 3
    np.testing.assert_allclose(exe(x, w), xlac.evaluate(STRIDED_GRAD, x, w), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("why, text", [
    ("fewer than", _module("b01f_01oi->b01f", "f32", [1, 4, 4, 2], [3, 3, 2, 2], [1, 8, 8, 2],
                           "size=3x3 pad=2_1x2_1 lhs_dilate=2x2")),
    ("window stride", _module("b01f_01oi->b01f", "f32", [4, 28, 28, 32], [3, 3, 16, 32], [4, 28, 28, 16],
                              "size=3x3 stride=2x2 pad=2_1x2_1 lhs_dilate=2x2"))])
def test_left_as_written(why, text):
    (conv,) = [i for i in xlac.parse_hlo(text).entry.instructions if i.opcode == "convolution"]
    assert why in conv_phases.why_not(conv)


def _entry_kernels(text):
    from xlac.codegen.compiler import lower
    return [i for i in lower(xlac.parse_hlo(text)).hlo.entry.instructions
            if i.opcode not in ("parameter", "tuple", "get-tuple-element", "constant")]


def test_strided_slices_of_one_array_share_a_kernel():
    """Strided slices of one array (a transposed convolution's kernel at
    every other tap, the even and odd elements of a scan) are one
    multi-output kernel reading it once; contiguous ones keep their row
    copies."""
    def module(step):
        n = -(-1023 // step)
        return f"""HloModule s
ENTRY e {{
  x = f32[64,1024] parameter(0)
  a = f32[64,{n}] slice(x), slice={{[0:64], [0:1023:{step}]}}
  b = f32[64,{n}] slice(x), slice={{[0:64], [1:1024:{step}]}}
  ROOT t = (f32[64,{n}], f32[64,{n}]) tuple(a, b)
}}"""
    strided = _entry_kernels(module(2))
    assert [i.opcode for i in strided] == ["fusion"] and strided[0].shape.is_tuple
    assert [i.opcode for i in _entry_kernels(module(1))] == ["slice", "slice"]
    x = np.random.default_rng(0).standard_normal((64, 1024)).astype(np.float32)
    a, b = xlac.jit(module(2))(x)
    np.testing.assert_array_equal(a, x[:, 0:1023:2])
    np.testing.assert_array_equal(b, x[:, 1:1024:2])
