"""Dots of 8-bit integers as f32 dots on the packed GEMM (``expanders.int8_products``):
exact (every partial sum an integer below 2**24; longer contractions in chunks), equal
to the evaluator's integer arithmetic bit for bit, wrapping as XLA's integer dot.

This is the route of targets without AVX512_VNNI and AMX-INT8 (pinned here);
with them, the matrix products run the VNNI or AMX kernels (``test_dot_native.py``,
``test_dot_amx.py``)."""
import numpy as np
import pytest

import xlac
from xlac.codegen import target
from xlac.codegen.compiler import lower


@pytest.fixture(autouse=True)
def without_vnni():
    with target.override(features="-avx512vnni,-amx-int8"):
        yield

DTYPES = {"s8": np.int8, "u8": np.uint8}


def _module(lt, rt, ot, m, k, n):
    return f"""HloModule m
ENTRY e {{
  a = {lt}[{m},{k}] parameter(0)
  b = {rt}[{k},{n}] parameter(1)
  ROOT d = {ot}[{m},{n}] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}"""


def _values(rng, t, shape, extreme=False):
    info = np.iinfo(DTYPES[t])
    if extreme:
        return np.full(shape, info.min if t == "s8" else info.max, DTYPES[t])
    return rng.integers(info.min, int(info.max) + 1, shape).astype(DTYPES[t])


@pytest.mark.parametrize("lt,rt,ot,k", [("s8", "s8", "s32", 1024), ("s8", "s8", "s32", 2500),
                                        ("u8", "u8", "s32", 600), ("u8", "u8", "u32", 259),
                                        ("s8", "s8", "s8", 300), ("s8", "s8", "s64", 64),
                                        ("s8", "u8", "s32", 1500)])
@pytest.mark.parametrize("extreme", [False, True])
def test_exact_as_the_evaluator(lt, rt, ot, k, extreme):
    text = _module(lt, rt, ot, 24, k, 20)
    rng = np.random.default_rng(k)
    a, b = _values(rng, lt, (24, k), extreme), _values(rng, rt, (k, 20), extreme)
    got, want = xlac.jit(text)(a, b), xlac.evaluate(text, a, b)
    assert got.dtype == want.dtype and np.array_equal(got, want)


@pytest.mark.parametrize("lt,rt", [("s8", "s8"), ("u8", "s8")])
def test_runs_on_the_gemm(lt, rt):
    # (s8 x u8 too: not converted to an s32 dot first, which the elemental loop ran)
    text = _module(lt, rt, "s32", 64, 3000, 64)
    # s8 x s8 3000 = 1024 + 1024 + 952: three f32 dots, each on a GEMM kernel, none an
    # elemental loop (u8 x s8: 513 products per chunk, six).
    module = lower(xlac.parse_hlo(text)).hlo
    assert sum(i.opcode == "dot" for i in module.instructions()) == (3 if lt == "s8" else 6)
    notes = [str(d) for d in module.diagnostics if d.source == "kernel-choice"]
    assert notes and all("gemm" in n.split("(")[0] for n in notes), notes
    exe = xlac.jit(text)
    assert "xlac_gemm_" in exe.optimized_llvm_ir or "xlac.gemm.uk" in exe.optimized_llvm_ir


@pytest.mark.parametrize("t,o", [("s8", "s32"), ("u8", "s32"), ("s8", "s8")])
def test_convolution_exact_as_the_evaluator(t, o):
    text = f"""HloModule m
ENTRY e {{
  x = {t}[2,7,7,16] parameter(0)
  k = {t}[3,3,16,8] parameter(1)
  ROOT c = {o}[2,7,7,8] convolution(x, k), window={{size=3x3 pad=1_1x1_1}}, dim_labels=b01f_01io->b01f
}}"""
    rng = np.random.default_rng(3)
    x, k = _values(rng, t, (2, 7, 7, 16), extreme=(o == "s32")), _values(rng, t, (3, 3, 16, 8))
    got, want = xlac.jit(text)(x, k), xlac.evaluate(text, x, k)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert not any(i.opcode == "convolution" and i.shape.element_type != xlac.F32
                   for i in lower(xlac.parse_hlo(text)).hlo.instructions())
