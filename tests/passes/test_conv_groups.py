"""A convolution with feature or batch groups runs as one plain convolution
per group, concatenated (xlac/passes/conv_groups.py): the evaluator's values,
no grouped convolution left, each group on the implicit GEMM."""
import random

import numpy as np
import pytest

import xlac
from xlac.passes import conv_groups


def _module(labels, et, xd, wd, od, window, groups):
    def s(d):
        return f"{et}[{','.join(map(str, d))}]"
    return (f"HloModule c\nENTRY e {{\n  x = {s(xd)} parameter(0)\n  w = {s(wd)} parameter(1)\n"
            f"  ROOT c = {s(od)} convolution(x, w), window={{{window}}}, dim_labels={labels}{groups}\n}}")


def _dims(label, sizes):
    return [sizes[ch] if ch in sizes else sizes["sp"][int(ch)] for ch in label]


def _grouped_convolutions(exe):
    return [i for c in exe.lowered.hlo.computations for i in c.instructions if i.opcode == "convolution"
            and (int(str(i.attrs.get("feature_group_count", 1))) > 1
                 or int(str(i.attrs.get("batch_group_count", 1))) > 1)]


def _random_case(rng):
    nsp = rng.choice([1, 2])
    labels = rng.choice(["b01f_01io->b01f", "bf01_oi01->bf01", "b01f_01oi->b01f", "fb01_io01->bf01"]
                        if nsp == 2 else ["b0f_0io->b0f", "bf0_oi0->bf0"])
    k = [rng.randint(1, 3) for _ in range(nsp)]
    n = [rng.randint(2, 7) for _ in range(nsp)]
    st = [rng.choice([1, 1, 2]) for _ in range(nsp)]
    rd = [rng.choice([1, 1, 2]) for _ in range(nsp)]
    pads = [(rng.randint(0, 2), rng.randint(-1, 2)) for _ in range(nsp)]
    outs = [(ni + lo + hi - (ki - 1) * ri - 1) // si + 1 for ni, (lo, hi), ki, ri, si in zip(n, pads, k, rd, st)]
    if min(outs) <= 0:
        return None
    groups = rng.choice([2, 3, 4])
    per_in, per_out, batch = rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 2)
    if rng.random() < 0.5:       # feature groups
        attr = f", feature_group_count={groups}"
        xb, xf, wi, ob = batch, groups * per_in, per_in, batch
    else:                        # batch groups (a grouped convolution's kernel gradient)
        attr = f", batch_group_count={groups}"
        xb, xf, wi, ob = groups * batch, per_in, per_in, batch
    lhs, rhs, out = labels.replace("->", "_").split("_")
    window = ("size=" + "x".join(map(str, k)) + " stride=" + "x".join(map(str, st))
              + " pad=" + "x".join(f"{lo}_{hi}" for lo, hi in pads) + " rhs_dilate=" + "x".join(map(str, rd)))
    if rng.random() < 0.3:
        window += " rhs_reversal=" + "x".join("1" for _ in range(nsp))
    return (labels, _dims(lhs, {"b": xb, "f": xf, "sp": n}), _dims(rhs, {"i": wi, "o": groups * per_out, "sp": k}),
            _dims(out, {"b": ob, "f": groups * per_out, "sp": outs}), window, attr)


def test_random_grouped_convolutions_are_split(monkeypatch):
    """1 and 2 spatial dimensions, four dim_labels, 2-4 feature or batch
    groups, strides, window dilation and reversal, negative padding."""
    monkeypatch.setattr(conv_groups, "MIN_FLOPS", 0)
    monkeypatch.setattr(conv_groups, "MIN_GROUP_FEATURES", 1)
    rng, nrng = random.Random(0), np.random.default_rng(0)
    cases = [c for c in (_random_case(rng) for _ in range(60)) if c is not None][:18]
    for labels, xd, wd, od, window, attr in cases:
        for et, dt, tol in (("f32", np.float32, 1e-5), ("f64", np.float64, 1e-12)):
            text = _module(labels, et, xd, wd, od, window, attr)
            x, w = nrng.standard_normal(xd).astype(dt), nrng.standard_normal(wd).astype(dt)
            exe = xlac.jit(text)
            np.testing.assert_allclose(exe(x, w), xlac.evaluate(text, x, w), rtol=tol, atol=tol, err_msg=text)
            assert not _grouped_convolutions(exe), text


GROUPED = _module("b01f_01io->b01f", "f32", [8, 16, 16, 64], [3, 3, 16, 64], [8, 16, 16, 64],
                  "size=3x3 pad=1_1x1_1", ", feature_group_count=4")
KERNEL_GRAD = _module("fb01_io01->bf01", "f32", [8, 64, 16, 16], [8, 64, 16, 16], [16, 64, 3, 3],
                      "size=16x16 pad=1_1x1_1", ", batch_group_count=4")


@pytest.mark.parametrize("text", [GROUPED, KERNEL_GRAD], ids=["feature groups", "batch groups"])
def test_each_group_on_the_implicit_gemm(text):
    """A 3x3 convolution in 4 groups of 16 features and jax's kernel gradient
    of it (batch groups): four implicit-GEMM convolutions each."""
    rng = np.random.default_rng(1)
    m = xlac.parse_hlo(text)
    x, w = (rng.standard_normal(p.shape.dimensions).astype(np.float32) for p in m.entry.parameters)
    exe = xlac.jit(text)
    assert not _grouped_convolutions(exe)
    kernels = [d.message for d in exe.lowered.hlo.diagnostics if "convolution.implicit-gemm" in d.message]
    assert len(kernels) == 4, exe.lowered.hlo.diagnostics
    np.testing.assert_allclose(exe(x, w), xlac.evaluate(text, x, w), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("why, text", [
    ("fewer than 8", _module("b01f_01io->b01f", "f32", [8, 32, 32, 16], [3, 3, 1, 16], [8, 32, 32, 16],
                             "size=3x3 pad=1_1x1_1", ", feature_group_count=16")),
    ("more than", _module("b01f_01io->b01f", "f32", [8, 32, 32, 512], [3, 3, 8, 512], [8, 32, 32, 512],
                          "size=3x3 pad=1_1x1_1", ", feature_group_count=64")),
    ("fewer than 1048576", _module("b01f_01io->b01f", "f32", [1, 8, 8, 32], [3, 3, 8, 32], [1, 8, 8, 32],
                                   "size=3x3 pad=1_1x1_1", ", feature_group_count=4")),
    ("not grouped", _module("b01f_01io->b01f", "f32", [1, 8, 8, 32], [3, 3, 32, 32], [1, 8, 8, 32],
                            "size=3x3 pad=1_1x1_1", ""))])
def test_left_as_written(why, text):
    (conv,) = [i for i in xlac.parse_hlo(text).entry.instructions if i.opcode == "convolution"]
    assert why in conv_groups.why_not(conv)
