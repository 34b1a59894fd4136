"""An elementwise loop kernel whose arrays all share the result's dimensions
and layout (or are scalars) walks its elements as one flat loop, split in two
(outermost dimension, the rest) when it runs as tasks; anything else keeps
the loop nest (``kernels/loop.py``, ``flat_loop_shape``).  Checked against
the evaluator bit for bit."""
import re

import numpy as np
import pytest

import xlac
from xlac.codegen.compiler import lower
from xlac.codegen.kernels.loop import flat_loop_shape


def _module(body: str) -> str:
    return f"HloModule m\n\nENTRY e {{\n{body}\n}}\n"


def _loop_kernel(text: str):
    (fusion,) = [i for i in lower(xlac.parse_hlo(text)).hlo.entry.instructions if i.opcode == "fusion"]
    return fusion


def _loops(text: str) -> set:
    """The names of the loop variables of the module's unoptimised IR."""
    return set(re.findall(r'%"(d\d+)" = phi', xlac.jit(text).llvm_ir))


def _same_as_evaluator(text: str, *args) -> None:
    np.testing.assert_array_equal(xlac.jit(text)(*args), xlac.evaluate(text, *args))


# (dims, minor_to_major): row-major, column-major and a permuted layout, with size-1 dimensions.
SHAPES = [((6, 1, 5, 7), (3, 2, 1, 0)), ((6, 5, 7), (0, 1, 2)), ((4, 3, 1, 9), (1, 3, 0, 2))]


@pytest.mark.parametrize("dims,m2m", SHAPES)
def test_an_elementwise_fusion_is_one_flat_loop(dims, m2m):
    shape = f"f32[{','.join(map(str, dims))}]{{{','.join(map(str, m2m))}}}"
    text = _module(f"""  x = {shape} parameter(0)
  y = {shape} parameter(1)
  s = f32[] parameter(2)
  c = f32[] constant(0.5)
  bs = {shape} broadcast(s), dimensions={{}}
  bc = {shape} broadcast(c), dimensions={{}}
  m = {shape} multiply(x, bs)
  a = {shape} add(m, y)
  t = {shape} tanh(a)
  ROOT r = {shape} subtract(t, bc)""")
    fusion = _loop_kernel(text)
    flat = flat_loop_shape(fusion, fusion.shape, split=False)
    assert flat is not None and flat.dimensions == (int(np.prod(dims)),)
    assert _loops(text) == {"d0"}
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(dims).astype(np.float32) for _ in range(2))
    got = xlac.jit(text)(x, y, np.float32(1.5))
    # tanh is an approximation (docs/numerics.md): within its tolerance.
    np.testing.assert_allclose(got, xlac.evaluate(text, x, y, np.float32(1.5)), rtol=2e-6, atol=2e-7)


def test_a_multi_output_elementwise_fusion_is_one_flat_loop():
    text = _module("""  x = s32[8,9,10]{2,1,0} parameter(0)
  y = s32[8,9,10]{2,1,0} parameter(1)
  a = s32[8,9,10]{2,1,0} add(x, y)
  m = s32[8,9,10]{2,1,0} multiply(x, y)
  ROOT t = (s32[8,9,10]{2,1,0}, s32[8,9,10]{2,1,0}) tuple(a, m)""")
    assert _loops(text) == {"d0"}
    rng = np.random.default_rng(1)
    x, y = (rng.integers(-100, 100, (8, 9, 10), dtype=np.int32) for _ in range(2))
    got, want = xlac.jit(text)(x, y), xlac.evaluate(text, x, y)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_tasks_split_the_flat_loop_along_the_outermost_dimension():
    """Big enough to run as tasks: the outermost dimension is the tasks' and the
    rest one loop."""
    shape = "f32[64,32,128]{2,1,0}"
    text = _module(f"""  x = {shape} parameter(0)
  y = {shape} parameter(1)
  ROOT a = {shape} add(x, y)""")
    fusion_shape = xlac.Shape(xlac.F32, (64, 32, 128))
    hlo = lower(xlac.parse_hlo(text)).hlo.entry.root
    flat = flat_loop_shape(hlo, fusion_shape, split=True)
    assert flat is not None and flat.dimensions == (64, 32 * 128)
    ir_text = xlac.jit(text).llvm_ir
    assert ".task" in ir_text and _loops(text) == {"d0", "d1"}      # tasks over d0, one loop over the rest
    rng = np.random.default_rng(2)
    x, y = (rng.standard_normal((64, 32, 128)).astype(np.float32) for _ in range(2))
    for threads in (1, 2):
        np.testing.assert_array_equal(xlac.jit(text, num_threads=threads)(x, y), x + y)


def test_values_of_one_element_from_a_small_operand_keep_the_flat_loop():
    """jax's Threefry rotates by counts sliced out of a ``u32[4]``: those
    values are the same for every element (a slice of one element,
    reshaped to a scalar, broadcast), so the fusion is still one flat loop
    (as a nest, its 3-wide rows were unrolled and the loop around them
    vectorised through stride-3 shuffles).  Bit for bit the evaluator's."""
    shape = "u32[8,16,16,3]{3,2,1,0}"
    text = _module(f"""  x = {shape} parameter(0)
  y = {shape} parameter(1)
  r = u32[4]{{0}} parameter(2)
  s = u32[1]{{0}} slice(r), slice={{[2:3]}}
  k = u32[] reshape(s)
  c = u32[] constant(32)
  n = u32[] subtract(c, k)
  bk = {shape} broadcast(k), dimensions={{}}
  bn = {shape} broadcast(n), dimensions={{}}
  a = {shape} add(x, y)
  l = {shape} shift-left(y, bk)
  h = {shape} shift-right-logical(y, bn)
  o = {shape} or(l, h)
  ROOT t = {shape} xor(a, o)""")
    fusion = _loop_kernel(text)
    flat = flat_loop_shape(fusion, fusion.shape, split=False)
    assert flat is not None and flat.dimensions == (8 * 16 * 16 * 3,)
    assert _loops(text) == {"d0"}
    rng = np.random.default_rng(4)
    x, y = (rng.integers(0, 2**32, (8, 16, 16, 3), dtype=np.uint32) for _ in range(2))
    r = np.array([13, 15, 26, 6], np.uint32)
    _same_as_evaluator(text, x, y, r)


@pytest.mark.parametrize("body,why", [
    # A row broadcast reads the same element along a dimension.
    ("""  x = f32[6,7]{1,0} parameter(0)
  v = f32[7]{0} parameter(1)
  bv = f32[6,7]{1,0} broadcast(v), dimensions={1}
  ROOT a = f32[6,7]{1,0} add(x, bv)""", "broadcast"),
    # An operand in another layout is read at another offset.
    ("""  x = f32[6,7]{1,0} parameter(0)
  y = f32[6,7]{0,1} parameter(1)
  ROOT a = f32[6,7]{1,0} add(x, y)""", "layout"),
    # iota reads the index's components.
    ("""  x = s32[6,7]{1,0} parameter(0)
  i = s32[6,7]{1,0} iota(), iota_dimension=1
  ROOT a = s32[6,7]{1,0} add(x, i)""", "iota"),
    # One element of an operand the loop maps, broadcast: read at another offset.
    ("""  x = f32[6,7]{1,0} parameter(0)
  s = f32[1,1]{1,0} slice(x), slice={[2:3], [4:5]}
  r = f32[] reshape(s)
  b = f32[6,7]{1,0} broadcast(r), dimensions={}
  ROOT a = f32[6,7]{1,0} add(x, b)""", "one element of a mapped operand"),
])
def test_what_reads_other_offsets_keeps_the_nest(body, why):
    text = _module(body)
    fusion = [i for i in lower(xlac.parse_hlo(text)).hlo.entry.instructions if i.opcode in ("fusion", "add")][-1]
    assert flat_loop_shape(fusion, fusion.shape, split=False) is None, why
    rng = np.random.default_rng(3)
    params = xlac.parse_hlo(text).entry.parameters
    args = [rng.integers(-9, 9, p.shape.dimensions).astype(np.float32 if p.shape.element_type == xlac.F32
                                                          else np.int32) for p in params]
    _same_as_evaluator(text, *args)
