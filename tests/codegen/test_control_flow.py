"""JIT against the evaluator (and the spec's examples): while, conditional, call
inside computations, map, dynamic-slice and dynamic-update-slice."""
import numpy as np
import pytest

import xlac
from xlac import ops

from test_jit_ops import check, rand

ADD = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
"""


# ----------------------------------------------------------------------------
# while
# ----------------------------------------------------------------------------

SPEC_WHILE = """HloModule spec_while

cond {
  s = (s32[], f32[10]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(1000)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[10]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  v = f32[10]{0} get-tuple-element(s), index=1
  c = f32[10]{0} constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
  v1 = f32[10]{0} add(v, c)
  ROOT t = (s32[], f32[10]{0}) tuple(i1, v1)
}

ENTRY e {
  zero = s32[] constant(0)
  z = f32[] constant(0)
  v = f32[10]{0} broadcast(z), dimensions={}
  init = (s32[], f32[10]{0}) tuple(zero, v)
  ROOT w = (s32[], f32[10]{0}) while(init), condition=cond, body=body
}
"""


def test_while_spec_example():
    """The spec's While example: 1000 iterations add a constant vector."""
    i, v = check(SPEC_WHILE)
    assert i == 1000
    np.testing.assert_array_equal(v, 1000 * np.arange(1, 11, dtype=np.float32))


def _counter_cond(limit):
    b = xlac.XlaBuilder("cond")
    s = ops.parameter(b, 0, "(s32[], f32[3])")
    return b.build(ops.lt(ops.get_tuple_element(s, 0), limit))


def test_while_built_with_the_builder():
    body = xlac.XlaBuilder("body")
    s = ops.parameter(body, 0, "(s32[], f32[3])")
    i, v = ops.get_tuple_element(s, 0), ops.get_tuple_element(s, 1)
    body_comp = body.build(ops.tuple(body, [i + 1, v * 2.0 + 1.0]))

    b = xlac.XlaBuilder("loop")
    x = ops.parameter(b, 0, "f32[3]")
    w = ops.while_loop(_counter_cond(5), body_comp, ops.tuple(b, [ops.constant(b, 0), x]))
    comp = b.build(ops.get_tuple_element(w, 1))
    x0 = np.array([0, 1, -1], np.float32)
    got = xlac.jit(comp)(x0)
    want = x0
    for _ in range(5):
        want = want * 2 + 1
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, xlac.evaluate(comp, x0))


def test_while_zero_iterations_and_array_state():
    text = """HloModule w0
cond {
  x = f32[4]{0} parameter(0)
  z = f32[] constant(0)
  r = f32[] reduce(x, z), dimensions={0}, to_apply=add
  lim = f32[] constant(100)
  ROOT lt = pred[] compare(r, lim), direction=LT
}
body {
  x = f32[4]{0} parameter(0)
  ROOT y = f32[4]{0} multiply(x, x)
}
""" + ADD + """
ENTRY e {
  p = f32[4]{0} parameter(0)
  ROOT w = f32[4]{0} while(p), condition=cond, body=body
}
"""
    check(text, np.array([1.5, 1.1, 1.2, 1.3], np.float32))   # several iterations, odd and even
    check(text, np.array([1.5, 1.1, 1.2, 1.01], np.float32))
    check(text, np.array([200, 0, 0, 0], np.float32))           # zero iterations: the init


NESTED = """HloModule nested
""" + ADD + """
inner_cond {
  s = (s32[], f32[2,3]{1,0}) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(j, n), direction=LT
}

inner_body {
  s = (s32[], f32[2,3]{1,0}) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j1 = s32[] add(j, one)
  m = f32[2,3]{1,0} get-tuple-element(s), index=1
  h = f32[] constant(0.5)
  hb = f32[2,3]{1,0} broadcast(h), dimensions={}
  m1 = f32[2,3]{1,0} add(m, hb)
  ROOT t = (s32[], f32[2,3]{1,0}) tuple(j1, m1)
}

outer_cond {
  s = (s32[], f32[2,3]{1,0}, f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

outer_body {
  s = (s32[], f32[2,3]{1,0}, f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  m = f32[2,3]{1,0} get-tuple-element(s), index=1
  zero = s32[] constant(0)
  it = (s32[], f32[2,3]{1,0}) tuple(zero, m)
  w = (s32[], f32[2,3]{1,0}) while(it), condition=inner_cond, body=inner_body
  m2 = f32[2,3]{1,0} get-tuple-element(w), index=1
  acc = f32[] get-tuple-element(s), index=2
  z = f32[] constant(0)
  sum = f32[] reduce(m2, z), dimensions={0,1}, to_apply=add
  acc1 = f32[] add(acc, sum)
  ROOT t = (s32[], f32[2,3]{1,0}, f32[]) tuple(i1, m2, acc1)
}

ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  zero = s32[] constant(0)
  z = f32[] constant(0)
  init = (s32[], f32[2,3]{1,0}, f32[]) tuple(zero, p, z)
  ROOT w = (s32[], f32[2,3]{1,0}, f32[]) while(init), condition=outer_cond, body=outer_body
}
"""


def test_nested_while():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    i, m, acc = check(NESTED, x)
    assert i == 4
    np.testing.assert_allclose(m, x + 6.0)
    np.testing.assert_allclose(acc, sum((x + 1.5 * k).sum() for k in range(1, 5)))


COND_IN_WHILE = """HloModule cond_in_while

cond {
  s = (s32[], s32[5]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(i, n), direction=LT
}

double {
  x = s32[5]{0} parameter(0)
  ROOT y = s32[5]{0} add(x, x)
}

plus_one {
  x = s32[5]{0} parameter(0)
  one = s32[] constant(1)
  ob = s32[5]{0} broadcast(one), dimensions={}
  ROOT y = s32[5]{0} add(x, ob)
}

negate {
  x = s32[5]{0} parameter(0)
  ROOT y = s32[5]{0} negate(x)
}

body {
  s = (s32[], s32[5]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = s32[5]{0} get-tuple-element(s), index=1
  three = s32[] constant(3)
  k = s32[] remainder(i, three)
  c = s32[5]{0} conditional(k, v, v, v), branch_computations={double, plus_one, negate}
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], s32[5]{0}) tuple(i1, c)
}

ENTRY e {
  p = s32[5]{0} parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[5]{0}) tuple(zero, p)
  ROOT w = (s32[], s32[5]{0}) while(init), condition=cond, body=body
}
"""


def test_conditional_inside_while():
    x = np.array([1, -2, 3, 0, 5], np.int32)
    _, v = check(COND_IN_WHILE, x)
    want = x.copy()
    for i in range(7):
        want = [want * 2, want + 1, -want][i % 3]
    np.testing.assert_array_equal(v, want)


def test_while_with_call_in_body_and_pass_through_state():
    """JAX's fori_loop shape: the body calls a computation with a tuple result and
    passes a large leaf through unchanged."""
    text = """HloModule callbody
step {
  a = f32[4,4]{1,0} parameter(0)
  v = f32[4]{0} parameter(1)
  i = s32[] parameter(2)
  d = f32[4]{0} dot(a, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[4]{0}) tuple(i1, d)
}
cond {
  s = (s32[], f32[4]{0}, f32[4,4]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]{0}, f32[4,4]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[4]{0} get-tuple-element(s), index=1
  a = f32[4,4]{1,0} get-tuple-element(s), index=2
  c = (s32[], f32[4]{0}) call(a, v, i), to_apply=step
  i1 = s32[] get-tuple-element(c), index=0
  v1 = f32[4]{0} get-tuple-element(c), index=1
  ROOT t = (s32[], f32[4]{0}, f32[4,4]{1,0}) tuple(i1, v1, a)
}
ENTRY e {
  a = f32[4,4]{1,0} parameter(0)
  v = f32[4]{0} parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[4]{0}, f32[4,4]{1,0}) tuple(zero, v, a)
  w = (s32[], f32[4]{0}, f32[4,4]{1,0}) while(init), condition=cond, body=body
  ROOT r = f32[4]{0} get-tuple-element(w), index=1
}
"""
    rng = np.random.default_rng(0)
    a, v = rand(np.float32, (4, 4), rng, -1, 1), rand(np.float32, (4, 4), rng)[0]
    got = check(text, a, v, rtol=1e-5, atol=1e-5)
    want = v.astype(np.float64)
    for _ in range(5):
        want = a.astype(np.float64) @ want
    np.testing.assert_allclose(got, want, rtol=1e-4)


@pytest.mark.parametrize("state_layout,body_layout", [("{0,1}", "{0,1}"), ("{1,0}", "{0,1}"),
                                                      ("{0,1:P(4,4)}", "{1,0}")])
def test_while_state_layouts(state_layout, body_layout):
    """Leaves laid out differently in the state, the body's result and the while's
    result are converted (and padded buffers keep their padding)."""
    text = f"""HloModule layouts
cond {{
  s = (s32[], f32[3,2]{state_layout}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}}
body {{
  s = (s32[], f32[3,2]{state_layout}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  m = f32[3,2]{state_layout} get-tuple-element(s), index=1
  c = f32[3,2]{{1,0}} constant({{{{1, 2}}, {{3, 4}}, {{5, 6}}}})
  m1 = f32[3,2]{body_layout} multiply(m, c)
  ROOT t = (s32[], f32[3,2]{body_layout}) tuple(i1, m1)
}}
ENTRY e {{
  p = f32[3,2]{{1,0}} parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[3,2]{{1,0}}) tuple(zero, p)
  w = (s32[], f32[3,2]{state_layout}) while(init), condition=cond, body=body
  r = f32[3,2]{state_layout} get-tuple-element(w), index=1
  ROOT c = f32[3,2]{{0,1}} copy(r)
}}
"""
    x = np.arange(6, dtype=np.float32).reshape(3, 2) - 2
    got = check(text, x)
    np.testing.assert_array_equal(got, x * np.array([[1, 2], [3, 4], [5, 6]], np.float32) ** 3)


# ----------------------------------------------------------------------------
# while: the loop state updated in place (BufferAssignment(loop_state=True))
# ----------------------------------------------------------------------------

def _state_loop(state: str, body: str, root: str, n: int = 5) -> str:
    """A loop of ``n`` iterations over the state ``(s32[], <state>)``; the
    body sees ``s`` (the state tuple) and ``i`` (the counter), defines
    ``body`` and returns ``(i + 1, <root>)``."""
    return f"""HloModule state_loop
cond {{
  s = (s32[], {state}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant({n})
  ROOT lt = pred[] compare(i, n), direction=LT
}}
body {{
  s = (s32[], {state}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
{body}
  ROOT t = (s32[], {state}) tuple(i1, {root})
}}
ENTRY e {{
  p = ({state}) parameter(0)
  zero = s32[] constant(0)
  {_unpack(state)}
  ROOT w = (s32[], {state}) while(init), condition=cond, body=body
}}
"""


def _unpack(state: str) -> str:
    leaves = [s.strip() for s in state.split(", ")]
    lines = [f"q{k} = {shape} get-tuple-element(p), index={k}" for k, shape in enumerate(leaves)]
    lines.append(f"init = (s32[], {state}) tuple(zero, {', '.join(f'q{k}' for k in range(len(leaves)))})")
    return "\n  ".join(lines)


def _check_both(text: str, *args):
    """The loop against the evaluator, fused and as written."""
    want = xlac.evaluate(xlac.parse_hlo(text), *args)
    for optimize in (True, False):
        got = xlac.jit(text, optimize=optimize)(*args)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _body_assignment(text: str, optimize: bool = False):
    from xlac.passes.buffer_assignment import BufferAssignment
    hlo = xlac.jit(text, optimize=optimize).lowered.hlo
    body = next(c for c in hlo.computations if c.name == "body")
    return BufferAssignment(body, loop_state=True)


SCAN = _state_loop("f32[4]{0}, f32[5,4]{1,0}, f32[4]{0}", """
  x = f32[4]{0} get-tuple-element(s), index=1
  ys = f32[5,4]{1,0} get-tuple-element(s), index=2
  w = f32[4]{0} get-tuple-element(s), index=3
  xw = f32[4]{0} multiply(x, w)
  c = f32[4]{0} constant({1, 2, 3, 4})
  x1 = f32[4]{0} add(xw, c)
  row = f32[1,4]{1,0} reshape(x1)
  z = s32[] constant(0)
  ys1 = f32[5,4]{1,0} dynamic-update-slice(ys, row, i, z)""", "x1, ys1, w")


def test_scan_state_is_updated_in_place():
    """A scan's stacked output is written slice by slice into the state, and
    a passed-through leaf is not copied; nor is the counter: i1, first in post
    order, is scheduled after the update that reads the old i."""
    a = _body_assignment(SCAN)
    assert a.state_in_place and not a.copies
    assert {"ys1", "i1"} <= {w.name for w, _ in a.in_place}
    x = np.array([1, -1, 0.5, 2], np.float32)
    w = np.array([0.5, 1, -1, 2], np.float32)
    _check_both(SCAN, (x, np.full((5, 4), 7, np.float32), w))


def _second_reader(two: str) -> str:
    """A loop whose root leaf x1 updates x, and whose other leaf reads x through ``two``."""
    return _state_loop("f32[4]{0}, f32[4]{0}", f"""
  x = f32[4]{{0}} get-tuple-element(s), index=1
  y = f32[4]{{0}} get-tuple-element(s), index=2
  c = f32[4]{{0}} constant({{1, 2, 3, 4}})
  x1 = f32[4]{{0}} add(x, c)
  two = f32[4]{{0}} {two}
  y1 = f32[4]{{0}} add(two, y)""", "x1, y1")


def test_state_leaf_read_after_its_new_value_is_computed():
    """x1 comes before the old x's other reader in post order; that reader
    does not need x1, so it is scheduled first and x1 overwrites x in place
    (before, x1 went to a temp and was copied back every iteration)."""
    text = _second_reader("multiply(x, x)")
    a = _body_assignment(text)
    assert a.state_in_place and not a.copies
    order = [i.name for i in a.order]
    assert order.index("two") < order.index("x1") and ("x1", "s") in {(w.name, o.name) for w, o in a.in_place}
    x = np.array([1, -1, 0.5, 2], np.float32)
    _check_both(text, (x, x * 3))


def test_state_leaf_read_by_what_needs_its_new_value_is_copied():
    """The old x's other reader needs x1 too: x1 cannot overwrite x, it goes
    to a temp and is copied at the end."""
    text = _second_reader("multiply(x1, x)")
    a = _body_assignment(text)
    assert a.state_in_place
    assert [number for number, _ in a.copies] == [1]
    x = np.array([1, -1, 0.5, 2], np.float32)
    _check_both(text, (x, x * 3))


def test_a_row_read_after_its_update_in_post_order_is_read_first():
    """A dynamic-slice of the old state array that post order puts after the
    dynamic-update-slice of the same array (the root's later leaf reads it):
    scheduled first, the update writes only its row into the state."""
    text = _state_loop("f32[64,8]{1,0}, f32[8]{0}", """
  a = f32[64,8]{1,0} get-tuple-element(s), index=1
  acc = f32[8]{0} get-tuple-element(s), index=2
  z = s32[] constant(0)
  row = f32[1,8]{1,0} dynamic-slice(a, i, z), dynamic_slice_sizes={1,8}
  twice = f32[1,8]{1,0} add(row, row)
  a1 = f32[64,8]{1,0} dynamic-update-slice(a, twice, i, z)
  nxt = f32[1,8]{1,0} dynamic-slice(a, i1, z), dynamic_slice_sizes={1,8}
  flat = f32[8]{0} reshape(nxt)
  acc1 = f32[8]{0} add(acc, flat)""", "a1, acc1", n=10)
    for optimize in (False, True):
        a = _body_assignment(text, optimize=optimize)
        assert a.state_in_place and not [n for n, _ in a.copies if n == 1], a.summary()
    _check_both(text, (np.arange(512, dtype=np.float32).reshape(64, 8), np.zeros(8, np.float32)))


def test_state_leaf_read_elsewhere_than_written_is_not_overwritten():
    """A fusion reversing the old leaf reads it at other indices than it
    writes: not in place (unfused, the reverse goes to a temp and the add may
    write the state: the old leaf is dead by then)."""
    text = _state_loop("f32[6]{0}", """
  x = f32[6]{0} get-tuple-element(s), index=1
  r = f32[6]{0} reverse(x), dimensions={0}
  c = f32[6]{0} constant({1, 2, 3, 4, 5, 6})
  x1 = f32[6]{0} add(r, c)""", "x1")
    assert [number for number, _ in _body_assignment(text, optimize=True).copies] == [1]
    assert not _body_assignment(text).copies
    _check_both(text, (np.arange(6, dtype=np.float32) * 1.5,))


def test_multi_output_fusion_updates_several_state_leaves_in_place():
    """Two accumulators of a backward scan computed by one multi-output loop
    fusion (siblings slicing the same gradient, as an LSTM's four gates) each
    write their own state leaf in place: no copy per iteration."""
    text = _state_loop("f32[8,128]{1,0}, f32[8,128]{1,0}, f32[8,256]{1,0}", """
  a = f32[8,128]{1,0} get-tuple-element(s), index=1
  g = f32[8,128]{1,0} get-tuple-element(s), index=2
  x = f32[8,256]{1,0} get-tuple-element(s), index=3
  y = f32[8,256]{1,0} tanh(x)
  lo = f32[8,128]{1,0} slice(y), slice={[0:8], [0:128]}
  a1 = f32[8,128]{1,0} add(a, lo)
  hi = f32[8,128]{1,0} slice(y), slice={[0:8], [128:256]}
  g1 = f32[8,128]{1,0} subtract(g, hi)""", "a1, g1, x")
    a = _body_assignment(text, optimize=True)
    fusions = [w for w, _ in a.in_place if w.opcode == "fusion" and not w.shape.is_array]
    assert a.state_in_place and len(fusions) == 2 and not a.copies
    rng = np.random.default_rng(5)
    _check_both(text, tuple(rng.uniform(-1, 1, s).astype(np.float32) for s in ((8, 128), (8, 128), (8, 256))))


def test_multi_output_fusion_reading_a_state_leaf_elsewhere_is_not_in_place():
    """One output of the fusion reads the old leaf reversed: the leaf another
    output would overwrite is read at other indices, so that output goes
    through a temp."""
    text = _state_loop("f32[16]{0}, f32[16]{0}", """
  a = f32[16]{0} get-tuple-element(s), index=1
  x = f32[16]{0} get-tuple-element(s), index=2
  ar = f32[16]{0} reverse(a), dimensions={0}
  a1 = f32[16]{0} add(a, x)
  x1 = f32[16]{0} multiply(ar, x)""", "a1, x1")
    rng = np.random.default_rng(6)
    a = _body_assignment(text, optimize=True)
    assert 1 in [n for n, _ in a.copies]
    _check_both(text, tuple(rng.uniform(-1, 1, 16).astype(np.float32) for _ in range(2)))


def test_swapped_state_keeps_separate_buffers():
    """A root that moves a state leaf to another position (a swap) keeps the
    body's parameter and result buffers apart."""
    text = _state_loop("f32[3]{0}, f32[3]{0}", """
  a = f32[3]{0} get-tuple-element(s), index=1
  b = f32[3]{0} get-tuple-element(s), index=2
  a1 = f32[3]{0} add(a, b)""", "b, a1")
    assert not _body_assignment(text).state_in_place
    _check_both(text, (np.array([1, 2, 3], np.float32), np.array([0, 1, -1], np.float32)))


def test_in_place_state_in_another_layout_than_the_result():
    """The while's result lays a leaf out otherwise than the body: that leaf's
    state lives in scratch and is converted at the end."""
    text = _state_loop("f32[2,3]{0,1}", """
  m = f32[2,3]{0,1} get-tuple-element(s), index=1
  m1 = f32[2,3]{0,1} multiply(m, m)""", "m1", n=2)
    text = text.replace("ROOT w = (s32[], f32[2,3]{0,1}) while", "w = (s32[], f32[2,3]{0,1}) while")
    text = text.rstrip().rstrip("}") + """  r = f32[2,3]{0,1} get-tuple-element(w), index=1
  ROOT c = f32[2,3]{1,0} copy(r)
}
"""
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    got = xlac.jit(text)((x,))
    np.testing.assert_allclose(got, x ** 4, rtol=1e-6)


# ----------------------------------------------------------------------------
# conditional
# ----------------------------------------------------------------------------

PRED_COND = """HloModule predcond
on_true {
  t = (f32[3]{0}, s32[]) parameter(0)
  x = f32[3]{0} get-tuple-element(t), index=0
  ROOT y = f32[3]{0} exponential(x)
}
on_false {
  x = f32[2,3]{1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3]{0} reduce(x, z), dimensions={0}, to_apply=add
}
""" + ADD + """
ENTRY e {
  p = pred[] parameter(0)
  a = f32[3]{0} parameter(1)
  k = s32[] parameter(2)
  ta = (f32[3]{0}, s32[]) tuple(a, k)
  b = f32[2,3]{0,1} parameter(3)
  ROOT c = f32[3]{0} conditional(p, ta, b), true_computation=on_true, false_computation=on_false
}
"""


@pytest.mark.parametrize("pred", [True, False])
def test_conditional_pred_form(pred):
    rng = np.random.default_rng(1)
    a, b = rand(np.float32, (3,), rng), rand(np.float32, (2, 3), rng)
    got = check(PRED_COND, np.bool_(pred), a, np.int32(4), b, rtol=2e-6)
    np.testing.assert_allclose(got, np.exp(a) if pred else b.sum(0), rtol=1e-6)


INDEX_COND = """HloModule indexcond
b0 {
  x = s32[4]{0} parameter(0)
  c = f32[] constant(0.5)
  ROOT t = (s32[4]{0}, f32[]) tuple(x, c)
}
b1 {
  x = f32[] parameter(0)
  i = s32[4]{0} iota(), iota_dimension=0
  ROOT t = (s32[4]{0}, f32[]) tuple(i, x)
}
b2 {
  x = s32[4]{0} parameter(0)
  y = s32[4]{0} multiply(x, x)
  c = f32[] constant(-1)
  ROOT t = (s32[4]{0}, f32[]) tuple(y, c)
}
ENTRY e {
  k = s32[] parameter(0)
  x = s32[4]{0} parameter(1)
  f = f32[] parameter(2)
  ROOT c = (s32[4]{0}, f32[]) conditional(k, x, f, x), branch_computations={b0, b1, b2}
}
"""


@pytest.mark.parametrize("k,branch", [(0, 0), (1, 1), (2, 2), (3, 2), (-1, 2), (2**31 - 1, 2)])
def test_conditional_index_form_out_of_range_runs_the_last_branch(k, branch):
    x = np.array([1, 2, -3, 4], np.int32)
    got = check(INDEX_COND, np.int32(k), x, np.float32(7))
    want = [(x, 0.5), (np.arange(4), 7.0), (x * x, -1.0)][branch]
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]


def test_conditional_built_with_the_builder():
    def branch(name, fn):
        b = xlac.XlaBuilder(name)
        return b.build(fn(ops.parameter(b, 0, "f32[4]")))

    b = xlac.XlaBuilder("cond")
    k = ops.parameter(b, 0, "s32[]")
    x = ops.parameter(b, 1, "f32[4]")
    ops.conditional(k, [branch("neg", ops.neg), branch("sq", lambda v: v * v)], [x, x])
    comp = b.build()
    exe = xlac.jit(comp)
    v = np.array([1, -2, 3, 0.5], np.float32)
    np.testing.assert_array_equal(exe(np.int32(0), v), -v)
    np.testing.assert_array_equal(exe(np.int32(1), v), v * v)
    np.testing.assert_array_equal(exe(np.int32(9), v), v * v)

    b = xlac.XlaBuilder("pcond")
    p = ops.parameter(b, 0, "pred[]")
    x = ops.parameter(b, 1, "f32[4]")
    ops.conditional(p, x, branch("neg", ops.neg), x, branch("sq", lambda v: v * v))
    exe = xlac.jit(b.build())
    np.testing.assert_array_equal(exe(np.bool_(True), v), -v)
    np.testing.assert_array_equal(exe(np.bool_(False), v), v * v)


def test_conditional_shape_errors():
    b = xlac.XlaBuilder("bad")
    k = ops.parameter(b, 0, "s32[]")
    x = ops.parameter(b, 1, "f32[4]")
    nb = xlac.XlaBuilder("neg")
    neg = nb.build(ops.neg(ops.parameter(nb, 0, "f32[4]")))
    sb = xlac.XlaBuilder("sum")
    s = sb.build(ops.reduce(ops.parameter(sb, 0, "f32[4]"), 0.0, _add(), [0]))
    with pytest.raises(xlac.ShapeError, match="conditional.*same shape"):
        ops.conditional(k, [neg, s], [x, x])
    with pytest.raises(xlac.ShapeError, match="conditional.*selector"):
        ops.conditional(x, [neg, neg], [x, x])


def _add():
    b = xlac.XlaBuilder("add")
    return b.build(ops.add(ops.parameter(b, 0, "f32[]"), ops.parameter(b, 1, "f32[]")))


def test_while_shape_errors():
    b = xlac.XlaBuilder("bad")
    x = ops.parameter(b, 0, "f32[4]")
    body = xlac.XlaBuilder("body")
    body_comp = body.build(ops.reduce(ops.parameter(body, 0, "f32[4]"), 0.0, _add(), [0]))
    cond = xlac.XlaBuilder("cond")
    cond_comp = cond.build(ops.lt(ops.get_tuple_element(
        ops.parameter(cond, 0, "(s32[], f32[4])"), 0), 3))
    with pytest.raises(xlac.ShapeError, match="while: condition"):
        ops.while_loop(cond_comp, body_comp, x)
    good_cond = xlac.XlaBuilder("c2")
    gc = good_cond.build(ops.lt(ops.reduce(ops.parameter(good_cond, 0, "f32[4]"), 0.0, _add(), [0]),
                                1.0))
    with pytest.raises(xlac.ShapeError, match="while: body"):
        ops.while_loop(gc, body_comp, x)


# ----------------------------------------------------------------------------
# map
# ----------------------------------------------------------------------------

MAP = """HloModule map
f {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] convert(b)
  m = f32[] multiply(a, c)
  z = f32[] constant(0)
  g = pred[] compare(m, z), direction=GT
  ROOT r = f32[] select(g, m, a)
}
ENTRY e {
  x = f32[3,4]{LX} parameter(0)
  y = s32[3,4]{1,0} parameter(1)
  ROOT m = f32[3,4]{LO} map(x, y), dimensions={0,1}, to_apply=f
}
"""


@pytest.mark.parametrize("lx,lo", [("1,0", "1,0"), ("0,1", "1,0"), ("1,0", "0,1:P(4,5)")])
def test_map(lx, lo):
    rng = np.random.default_rng(2)
    x, y = rand(np.float32, (3, 4), rng), rand(np.int32, (3, 4), rng)
    check(MAP.replace("LX", lx).replace("LO", lo), x, y)


def test_map_built_with_the_builder():
    fb = xlac.XlaBuilder("f")
    f = fb.build(ops.max(ops.parameter(fb, 0, "s16[]"), ops.parameter(fb, 1, "s16[]")) * 3)
    b = xlac.XlaBuilder("m")
    x, y = ops.parameter(b, 0, "s16[5]"), ops.parameter(b, 1, "s16[5]")
    comp = b.build(ops.map(b, [x, y], f))
    a1, a2 = np.array([1, -2, 3, 4, -5], np.int16), np.array([0, 0, 9, -9, -1], np.int16)
    np.testing.assert_array_equal(xlac.jit(comp)(a1, a2), np.maximum(a1, a2) * 3)


# ----------------------------------------------------------------------------
# dynamic-slice, dynamic-update-slice
# ----------------------------------------------------------------------------

def test_dynamic_slice_spec_examples():
    a = np.array([0.0, 1.0, 2.0, 3.0, 4.0], np.float32)
    t1 = """HloModule ds1
ENTRY e {
  a = f32[5]{0} parameter(0)
  s = s32[] parameter(1)
  ROOT d = f32[2]{0} dynamic-slice(a, s), dynamic_slice_sizes={2}
}
"""
    np.testing.assert_array_equal(check(t1, a, np.int32(2)), [2.0, 3.0])
    b = np.arange(12, dtype=np.float32).reshape(4, 3)
    t2 = """HloModule ds2
ENTRY e {
  b = f32[4,3]{1,0} parameter(0)
  s0 = s32[] parameter(1)
  s1 = s32[] parameter(2)
  ROOT d = f32[2,2]{1,0} dynamic-slice(b, s0, s1), dynamic_slice_sizes={2,2}
}
"""
    np.testing.assert_array_equal(check(t2, b, np.int32(2), np.int32(1)), [[7.0, 8.0], [10.0, 11.0]])
    # Out-of-bounds starts are clamped so the window stays inside.
    np.testing.assert_array_equal(check(t2, b, np.int32(5), np.int32(-3)), [[6.0, 7.0], [9.0, 10.0]])
    np.testing.assert_array_equal(check(t2, b, np.int32(-2**31), np.int32(2**31 - 1)),
                                  [[1.0, 2.0], [4.0, 5.0]])


@pytest.mark.parametrize("ity,idt,starts", [
    ("s8", np.int8, (-100, 120)), ("u8", np.uint8, (255, 1)), ("s64", np.int64, (-2**62, 2)),
    ("u64", np.uint64, (2**64 - 1, 2**63)), ("u16", np.uint16, (1, 2))])
@pytest.mark.parametrize("layout", ["{1,0}", "{0,1}", "{0,1:P(6,7)}"])
def test_dynamic_slice_index_types_and_layouts(ity, idt, starts, layout):
    rng = np.random.default_rng(3)
    x = rand(np.float32, (5, 6), rng)
    text = f"""HloModule dsi
ENTRY e {{
  x = f32[5,6]{layout} parameter(0)
  i = {ity}[] parameter(1)
  j = {ity}[] parameter(2)
  ROOT d = f32[3,4]{{0,1}} dynamic-slice(x, i, j), dynamic_slice_sizes={{3,4}}
}}
"""
    check(text, x, idt(starts[0]), idt(starts[1]))


def test_dynamic_slice_vector_form_and_fused_indices():
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    text = """HloModule dsv
ENTRY e {
  x = s32[2,3,4]{2,1,0} parameter(0)
  s = s32[3]{0} parameter(1)
  d = s32[1,2,2]{2,1,0} dynamic-slice(x, s), dynamic_slice_sizes={1,2,2}
  i = s32[] parameter(2)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  e = s32[2,1,4]{2,1,0} dynamic-slice(x, one, j, i), dynamic_slice_sizes={2,1,4}
  n = s32[2,1,4]{2,1,0} negate(e)
  ROOT t = (s32[1,2,2]{2,1,0}, s32[2,1,4]{2,1,0}) tuple(d, n)
}
"""
    for s, i in [((1, 1, 1), 0), ((-1, 7, 2), 1), ((0, 0, 3), 5)]:
        check(text, x, np.array(s, np.int32), np.int32(i))


def test_dynamic_update_slice_spec_examples():
    a = np.array([0.0, 1.0, 2.0, 3.0, 4.0], np.float32)
    t1 = """HloModule dus1
ENTRY e {
  a = f32[5]{0} parameter(0)
  u = f32[2]{0} parameter(1)
  s = s32[] parameter(2)
  ROOT d = f32[5]{0} dynamic-update-slice(a, u, s)
}
"""
    u = np.array([5.0, 6.0], np.float32)
    np.testing.assert_array_equal(check(t1, a, u, np.int32(2)), [0.0, 1.0, 5.0, 6.0, 4.0])
    np.testing.assert_array_equal(check(t1, a, u, np.int32(9)), [0.0, 1.0, 2.0, 5.0, 6.0])
    np.testing.assert_array_equal(check(t1, a, u, np.int32(-9)), [5.0, 6.0, 2.0, 3.0, 4.0])
    b = np.arange(12, dtype=np.float32).reshape(4, 3)
    u2 = np.array([[12, 13], [14, 15], [16, 17]], np.float32)
    t2 = """HloModule dus2
ENTRY e {
  b = f32[4,3]{1,0} parameter(0)
  u = f32[3,2]{1,0} parameter(1)
  s0 = s32[] parameter(2)
  s1 = s32[] parameter(3)
  ROOT d = f32[4,3]{1,0} dynamic-update-slice(b, u, s0, s1)
}
"""
    np.testing.assert_array_equal(check(t2, b, u2, np.int32(1), np.int32(1)),
                                  [[0, 1, 2], [3, 12, 13], [6, 14, 15], [9, 16, 17]])
    check(t2, b, u2, np.int32(2**31 - 1), np.int32(-2**31))


@pytest.mark.parametrize("lo,lu,lr", [("{1,0}", "{1,0}", "{1,0}"), ("{0,1}", "{1,0}", "{1,0}"),
                                      ("{1,0}", "{0,1}", "{0,1:P(5,9)V(one)}")])
@pytest.mark.parametrize("ty,dt", [("f64", np.float64), ("u8", np.uint8), ("pred", np.bool_),
                                   ("bf16", xlac.BF16.dtype)])
def test_dynamic_update_slice_layouts_and_types(lo, lu, lr, ty, dt):
    rng = np.random.default_rng(4)
    x, u = rand(dt, (4, 7), rng), rand(dt, (2, 3), rng)
    text = f"""HloModule dusl
ENTRY e {{
  x = {ty}[4,7]{lo} parameter(0)
  u = {ty}[2,3]{lu} parameter(1)
  i = s16[] parameter(2)
  j = s16[] parameter(3)
  ROOT d = {ty}[4,7]{lr} dynamic-update-slice(x, u, i, j)
}}
"""
    for i, j in [(1, 2), (3, 6), (-1, -1)]:
        check(text, x, u, np.int16(i), np.int16(j))


def test_dynamic_update_slice_of_a_constant_and_a_scalar_update():
    text = """HloModule dusc
ENTRY e {
  z = f32[] constant(0)
  x = f32[3,3]{1,0} broadcast(z), dimensions={}
  v = f32[] parameter(0)
  u = f32[1,1]{1,0} reshape(v)
  i = s32[] parameter(1)
  ROOT d = f32[3,3]{1,0} dynamic-update-slice(x, u, i, i)
}
"""
    got = check(text, np.float32(5), np.int32(1))
    np.testing.assert_array_equal(got, np.diag([0, 5, 0]).astype(np.float32))


def test_dynamic_slice_ops_built_with_the_builder():
    b = xlac.XlaBuilder("dyn")
    x = ops.parameter(b, 0, "f32[6,4]")
    i = ops.parameter(b, 1, "s64[]")
    d = ops.dynamic_slice(x, [i, 1], [2, 3])
    u = ops.dynamic_update_slice(x, d * 10.0, [0, i])
    comp = b.build(ops.tuple(b, [d, u]))
    xs = np.arange(24, dtype=np.float32).reshape(6, 4)
    got = xlac.jit(comp)(xs, np.int64(3))
    want = xlac.evaluate(comp, xs, np.int64(3))
    np.testing.assert_array_equal(got[0], xs[3:5, 1:4])
    np.testing.assert_array_equal(got[1], want[1])
    with pytest.raises(xlac.ShapeError, match="dynamic-slice"):
        ops.dynamic_slice(x, [i, 1], [7, 1])
    with pytest.raises(xlac.ShapeError, match="dynamic-slice.*one scalar start index"):
        ops.dynamic_slice(x, [i], [1, 1])
    with pytest.raises(xlac.ShapeError, match="dynamic-update-slice.*exceeds"):
        ops.dynamic_update_slice(x, ops.parameter(b, 2, "f32[7,1]"), [i, i])


def test_branch_and_callee_layouts_differ_from_their_operands():
    """Operands passed to a branch (or a called computation) in another layout
    than its parameter, and results returned in another layout than wanted,
    are converted on the way."""
    text = """HloModule conv_layouts
br0 {
  x = f32[2,3]{0,1} parameter(0)
  ROOT y = f32[2,3]{0,1} add(x, x)
}
br1 {
  x = f32[2,3]{0,1} parameter(0)
  ROOT y = f32[2,3]{0,1} negate(x)
}
step {
  x = f32[2,3]{0,1} parameter(0)
  k = s32[] parameter(1)
  ROOT c = f32[2,3]{1,0} conditional(k, x, x), branch_computations={br0, br1}
}
cond {
  s = (s32[], f32[2,3]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[2,3]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  m = f32[2,3]{1,0} get-tuple-element(s), index=1
  c = f32[2,3]{1,0} call(m, i), to_apply=step
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[2,3]{1,0}) tuple(i1, c)
}
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[2,3]{1,0}) tuple(zero, p)
  w = (s32[], f32[2,3]{1,0}) while(init), condition=cond, body=body
  ROOT r = f32[2,3]{1,0} get-tuple-element(w), index=1
}
"""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(check(text, x), -(-(2 * x)))


def test_tokens_in_loop_state_order_nothing_and_cost_nothing():
    # Tokens (what jax threads through loops with ordered effects) have no bytes:
    # a token leaf of a while, call or conditional is passed as a null pointer.
    text = """HloModule tok
cond {
  s = (s32[], token[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], token[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  t = token[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT r = (s32[], token[]) tuple(i1, t)
}
ENTRY e {
  zero = s32[] parameter(0)
  t = token[] parameter(1)
  init = (s32[], token[]) tuple(zero, t)
  w = (s32[], token[]) while(init), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=0
}
"""
    assert xlac.jit(text)(np.int32(0), None) == 3
    # A fresh token in the body, and a token in the result.
    fresh = text.replace("t = token[] get-tuple-element(s), index=1", "t = token[] after-all()")
    both = fresh.replace("ROOT r = s32[] get-tuple-element(w), index=0",
                         "r = s32[] get-tuple-element(w), index=0\n  rt = token[] get-tuple-element(w), index=1\n"
                         "  ROOT both = (s32[], token[]) tuple(r, rt)")
    for optimize in (True, False):
        assert xlac.jit(fresh, optimize=optimize)(np.int32(1), None) == 3
        assert xlac.jit(both, optimize=optimize)(np.int32(-2), None) == (3, None)


def test_dynamic_slice_of_a_scalar_and_unit_dimensions():
    text = """HloModule dss
ENTRY e {
  x = f32[] parameter(0)
  d = f32[] dynamic-slice(x), dynamic_slice_sizes={}
  y = f32[1,5,1]{2,1,0} parameter(1)
  i = s32[] parameter(2)
  e = f32[1,2,1]{2,1,0} dynamic-slice(y, i, i, i), dynamic_slice_sizes={1,2,1}
  ROOT t = (f32[], f32[1,2,1]{2,1,0}) tuple(d, e)
}
"""
    y = np.arange(5, dtype=np.float32).reshape(1, 5, 1)
    for i in (-1, 0, 2, 4, 100):
        check(text, np.float32(3), y, np.int32(i))
