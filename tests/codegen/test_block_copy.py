"""slice and concatenate between buffers as row memcpys (kernels/block_copy.py):
the same bits as the evaluator for every layout, and the loop kernel where
the rows are short, the buffers padded or pred, or the layouts differ."""
from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac.codegen.compiler import lower


def _module(body: str) -> str:
    return f"HloModule m\n\nENTRY e {{\n{body}\n}}\n"


def _kernels(text: str) -> dict:
    """{instruction: kernel name} from the kernel-choice diagnostics (only
    kernels chosen after another declined say so)."""
    out = {}
    for d in lower(xlac.parse_hlo(text)).hlo.diagnostics:
        if d.source == "kernel-choice":
            name, rest = str(d).split("kernel ", 1)[1].split(": ", 1)
            out[name] = rest.split(" ")[0]
    return out


def _same_as_evaluator(text: str, *args) -> None:
    got, want = xlac.jit(text)(*args), xlac.evaluate(text, *args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


SLICES = _module("""  a = f64[40,64,24]{2,1,0} parameter(0)
  rows = f64[10,64,24]{2,1,0} slice(a), slice={[5:15], [0:64], [0:24]}
  box = f64[40,20,16]{2,1,0} slice(a), slice={[0:40], [30:50], [4:20]}
  one = f64[64,24]{1,0} parameter(1)
  whole = f64[64,24]{1,0} slice(one), slice={[0:64], [0:24]}
  ROOT t = (f64[10,64,24]{2,1,0}, f64[40,20,16]{2,1,0}, f64[64,24]{1,0}) tuple(rows, box, whole)""")


def test_slices_are_row_copies():
    rng = np.random.default_rng(0)
    _same_as_evaluator(SLICES, rng.standard_normal((40, 64, 24)), rng.standard_normal((64, 24)))
    hlo = lower(xlac.parse_hlo(SLICES)).hlo
    notes = " ".join(str(d) for d in hlo.diagnostics if d.source == "kernel-choice")
    assert "slice.rows" not in notes        # chosen first: no diagnostic
    assert "loop" not in notes


@pytest.mark.parametrize("layout", ["{0,1,2}", "{1,0,2}", "{2,0,1}"])
def test_slice_and_concatenate_in_any_shared_layout(layout):
    text = _module(f"""  a = f32[12,40,48]{layout} parameter(0)
  b = f32[12,40,8]{layout} parameter(1)
  s = f32[12,40,32]{layout} slice(a), slice={{[0:12], [0:40], [3:35]}}
  c = f32[12,40,56]{layout} concatenate(a, b), dimensions={{2}}
  d = f32[24,40,48]{layout} concatenate(a, a), dimensions={{0}}
  ROOT t = (f32[12,40,32]{layout}, f32[12,40,56]{layout}, f32[24,40,48]{layout}) tuple(s, c, d)""")
    rng = np.random.default_rng(1)
    _same_as_evaluator(text, rng.standard_normal((12, 40, 48)).astype(np.float32),
                       rng.standard_normal((12, 40, 8)).astype(np.float32))


def test_concatenate_with_empty_operands():
    text = _module("""  a = f32[0,64]{1,0} parameter(0)
  b = f32[3,64]{1,0} parameter(1)
  ROOT c = f32[6,64]{1,0} concatenate(a, b, a, b), dimensions={0}""")
    b = np.arange(192, dtype=np.float32).reshape(3, 64)
    _same_as_evaluator(text, np.zeros((0, 64), np.float32), b)


@pytest.mark.parametrize("body, reason", [
    ("""  a = f32[64,64]{1,0} parameter(0)
  ROOT s = f32[64,4]{1,0} slice(a), slice={[0:64], [0:4]}""", "rows shorter than 64 bytes"),
    ("""  a = f32[64,64]{1,0} parameter(0)
  ROOT s = f32[32,64]{1,0} slice(a), slice={[0:64:2], [0:64]}""", "a strided slice"),
    ("""  a = f32[64,64]{0,1} parameter(0)
  ROOT s = f32[32,64]{1,0} slice(a), slice={[0:32], [0:64]}""", "laid out differently"),
    ("""  a = pred[64,64]{1,0} parameter(0)
  ROOT s = pred[32,64]{1,0} slice(a), slice={[0:32], [0:64]}""", "pred"),
    ("""  a = f32[64,64]{1,0} parameter(0)
  b = f32[64,64]{0,1} parameter(1)
  ROOT c = f32[128,64]{1,0} concatenate(a, b), dimensions={0}""", "laid out unlike the result"),
])
def test_declines_to_the_loop_kernel(body, reason):
    text = _module(body)
    kernels = _kernels(text)
    assert list(kernels.values()) == ["loop"]
    notes = " ".join(str(d) for d in lower(xlac.parse_hlo(text)).hlo.diagnostics)
    assert reason in notes
    rng = np.random.default_rng(2)
    args = [rng.standard_normal(p.shape.dimensions) > 0 if p.shape.element_type.value == "pred"
            else rng.standard_normal(p.shape.dimensions).astype(np.float32)
            for p in xlac.parse_hlo(text).entry.parameters]
    _same_as_evaluator(text, *args)


UPDATES = _module("""  a = f32[40,64]{1,0} parameter(0)
  u = f32[8,32]{1,0} parameter(1)
  i = s32[] constant(3)
  far = s32[] constant(100)
  neg = s32[] constant(-7)
  from_param = f32[40,64]{1,0} dynamic-update-slice(a, u, i, neg)
  z = f32[] constant(0)
  zeros = f32[40,64]{1,0} broadcast(z), dimensions={}
  d1 = f32[40,64]{1,0} dynamic-update-slice(zeros, u, far, i)
  d2 = f32[40,64]{1,0} dynamic-update-slice(d1, u, i, far)
  ROOT t = (f32[40,64]{1,0}, f32[40,64]{1,0}) tuple(from_param, d2)""")


def test_dynamic_update_slice_with_constant_starts_clamps_and_copies_rows():
    rng = np.random.default_rng(3)
    a, u = rng.standard_normal((40, 64)).astype(np.float32), rng.standard_normal((8, 32)).astype(np.float32)
    _same_as_evaluator(UPDATES, a, u)
    got = xlac.jit(UPDATES)(a, u)
    np.testing.assert_array_equal(got[1][32:40, 3:35], u)       # row start 100 clamped to 40 - 8
    np.testing.assert_array_equal(got[0][3:11, 0:32], u)        # column start -7 clamped to 0
    assert _kernels(UPDATES) == {}                                # the row copies, chosen first


def test_dynamic_update_slice_with_computed_starts_keeps_its_kernel():
    text = _module("""  a = f32[40,64]{1,0} parameter(0)
  u = f32[8,32]{1,0} parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[40,64]{1,0} dynamic-update-slice(a, u, i, i)""")
    assert list(_kernels(text).values()) == ["dynamic-update-slice"]
    rng = np.random.default_rng(4)
    _same_as_evaluator(text, rng.standard_normal((40, 64)).astype(np.float32),
                       rng.standard_normal((8, 32)).astype(np.float32), np.int32(5))


BIG = _module("""  a = f32[600,700]{1,0} parameter(0)
  b = f32[600,300]{1,0} parameter(1)
  c = f32[400,700]{1,0} parameter(2)
  cols = f32[600,1000]{1,0} concatenate(a, b), dimensions={1}
  rows = f32[1000,700]{1,0} concatenate(a, c), dimensions={0}
  s = f32[590,650]{1,0} slice(a), slice={[7:597], [40:690]}
  i = s32[] constant(123)
  j = s32[] constant(45)
  u = f32[600,700]{1,0} dynamic-update-slice(a, c, i, j)
  ROOT t = (f32[600,1000]{1,0}, f32[1000,700]{1,0}, f32[590,650]{1,0}, f32[600,700]{1,0}) tuple(cols, rows, s, u)""")


@pytest.mark.parametrize("threads", [1, 2])
def test_big_copies_are_split_among_tasks(threads):
    """Copies of more than 512 KiB run as tasks: chunks of the outermost row
    loop, or of the one row of a concatenation along the major dimension."""
    rng = np.random.default_rng(2)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((600, 700), (600, 300), (400, 700))]
    got, want = xlac.jit(BIG, num_threads=threads)(*args), xlac.evaluate(BIG, *args)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    ir = lower(xlac.parse_hlo(BIG)).llvm_ir
    for name in ("cols", "rows", "s", "u"):
        start = ir.index(f'define internal void @"xlac_entry.{name}.task"')
        assert "llvm.memcpy" in ir[start:ir.index("\n}", start)]
