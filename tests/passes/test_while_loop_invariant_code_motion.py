"""WhileLoopInvariantCodeMotion (xlac/passes/while_loop_invariant_code_motion.py):
what a while body computes from the state elements it passes through
unchanged is computed once before the loop; the evaluator's values."""
import numpy as np

import xlac
from xlac.passes.pipeline import simplify_pipeline
from xlac.passes.while_loop_invariant_code_motion import WhileLoopInvariantCodeMotion


def _loop(body_extra: str, root_extra: str = "", entry_root: str = "ROOT r = f32[4,8] get-tuple-element(w), index=1",
          trip: int = 3) -> str:
    """A loop over (i, h, x, m): h = h * tanh(x @ m) ... three times."""
    return f"""HloModule m
body {{
  p = (s32[], f32[4,8], f32[4,6], f32[6,8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  h = f32[4,8] get-tuple-element(p), index=1
  x = f32[4,6] get-tuple-element(p), index=2
  m = f32[6,8] get-tuple-element(p), index=3
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
{body_extra}
  ROOT t = (s32[], f32[4,8], f32[4,6], f32[6,8]) tuple(i1, h1, x, m{root_extra})
}}
cond {{
  p = (s32[], f32[4,8], f32[4,6], f32[6,8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant({trip})
  ROOT lt = pred[] compare(i, n), direction=LT
}}
ENTRY e {{
  h0 = f32[4,8] parameter(0)
  x0 = f32[4,6] parameter(1)
  m0 = f32[6,8] parameter(2)
  zero = s32[] constant(0)
  s = (s32[], f32[4,8], f32[4,6], f32[6,8]) tuple(zero, h0, x0, m0)
  w = (s32[], f32[4,8], f32[4,6], f32[6,8]) while(s), condition=cond, body=body
  {entry_root}
}}"""


PRODUCT = """  d = f32[4,8] dot(x, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  th = f32[4,8] tanh(d)
  h1 = f32[4,8] multiply(h, th)"""


def _args(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in ((4, 8), (4, 6), (6, 8))]


def _body(module):
    return next(c for c in module.computations if c.name == "body")


def _check(text, trip=3):
    args = _args()
    got, want = xlac.jit(text)(*args), xlac.evaluate(text, *args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_an_invariant_product_and_its_tanh_leave_the_loop():
    text = _loop(PRODUCT)
    module = xlac.parse_hlo(text)
    assert WhileLoopInvariantCodeMotion().run(module)
    simplify_pipeline(verify=True).run(module)
    body_ops = [i.opcode for i in _body(module).instructions]
    assert "dot" not in body_ops and "tanh" not in body_ops
    entry_ops = [i.opcode for i in module.entry.instructions]
    assert "dot" in entry_ops and "tanh" in entry_ops
    loop = next(i for i in module.entry.instructions if i.opcode == "while")
    assert len(loop.shape.tuple_shapes) == 5            # the tanh carried as a new element
    _check(text)


def test_no_iteration_still_gives_the_initial_state():
    _check(_loop(PRODUCT, trip=0), trip=0)


def test_the_whole_state_read_keeps_its_shape():
    text = _loop(PRODUCT, entry_root="ROOT r = (s32[], f32[4,8], f32[4,6], f32[6,8]) copy(w)")
    module = xlac.parse_hlo(text)
    assert WhileLoopInvariantCodeMotion().run(module)
    assert module.entry.root.shape == xlac.parse_hlo(text).entry.root.shape
    _check(text)


def test_cheap_values_and_varying_ones_stay():
    """A broadcast of an invariant is only hoisted as the operand of a worthy
    value; a product reading the carried h varies."""
    body = """  b = f32[4,8] broadcast(m), dimensions={}
  two = f32[] constant(2)
  bt = f32[4,8] broadcast(two), dimensions={}
  h1 = f32[4,8] multiply(h, bt)"""
    assert not WhileLoopInvariantCodeMotion().run(xlac.parse_hlo(_loop(body)))
    varying = """  hm = f32[4,6] slice(h), slice={[0:4], [0:6]}
  d = f32[4,6] add(hm, x)
  e = f32[4,6] exponential(d)
  pad0 = f32[] constant(0)
  h1 = f32[4,8] pad(e, pad0), padding=0_0x0_2"""
    assert not WhileLoopInvariantCodeMotion().run(xlac.parse_hlo(_loop(varying)))


def test_random_numbers_are_drawn_every_iteration():
    body = """  lo = f32[] constant(0)
  hi = f32[] constant(1)
  u = f32[4,8] rng(lo, hi), distribution=rng_uniform
  h1 = f32[4,8] add(h, u)"""
    assert not WhileLoopInvariantCodeMotion().run(xlac.parse_hlo(_loop(body)))


def test_a_body_two_loops_share_is_left_alone():
    text = _loop(PRODUCT).replace(
        "  ROOT r = f32[4,8] get-tuple-element(w), index=1",
        "  w2 = (s32[], f32[4,8], f32[4,6], f32[6,8]) while(s), condition=cond, body=body\n"
        "  a = f32[4,8] get-tuple-element(w), index=1\n"
        "  b = f32[4,8] get-tuple-element(w2), index=1\n"
        "  ROOT r = f32[4,8] add(a, b)")
    assert not WhileLoopInvariantCodeMotion().run(xlac.parse_hlo(text))
