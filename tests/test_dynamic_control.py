"""Dynamic dimensions across called computations: a conditional's branches and a
while loop's condition and body take and return dynamic values (XLA's
DynamicPadder passes the sizes beside the padded values).  Every case runs in
the evaluator (valid elements only) and in compiled code (padded, optimised and
not) against numpy."""
import numpy as np
import pytest

import xlac
from test_dynamic_ops import module
from test_dynamic import check_all

# -----------------------------------------------------------------------------------
# conditional
# -----------------------------------------------------------------------------------

BRANCHES = """plus { t = (s32[<=3,2]) parameter(0)
  x = s32[<=3,2] get-tuple-element(t), index=0
  one = s32[] constant(1)
  ones = s32[<=3,2] broadcast(one), dimensions={}
  a = s32[<=3,2] add(x, ones)
  ROOT r = (s32[<=3,2], s32[<=3,2]) tuple(a, x) }
times { t = (s32[<=3,2]) parameter(0)
  x = s32[<=3,2] get-tuple-element(t), index=0
  a = s32[<=3,2] multiply(x, x)
  ROOT r = (s32[<=3,2], s32[<=3,2]) tuple(a, a) }
"""

CONDITIONAL = module("""x = s32[3,2] parameter(0)
  n = s32[] parameter(1)
  p = pred[] parameter(2)
  d = s32[<=3,2] set-dimension-size(x, n), dimensions={0}
  t = (s32[<=3,2]) tuple(d)
  c = (s32[<=3,2], s32[<=3,2]) conditional(p, t, t), true_computation=plus, false_computation=times
  a = s32[<=3,2] get-tuple-element(c), index=0
  b = s32[<=3,2] get-tuple-element(c), index=1
  zero = s32[] constant(0)
  s = s32[2] reduce(b, zero), dimensions={0}, to_apply=add_s32
  ROOT r = (s32[<=3,2], s32[2]) tuple(a, s)""", BRANCHES)


@pytest.mark.parametrize("n", [0, 1, 2, 3])
@pytest.mark.parametrize("p", [True, False])
def test_conditional_branches_see_their_operands_sizes(n, p):
    x = np.array([[0, 1], [2, 3], [4, 5]], np.int32)
    valid = x[:n]
    a, b = (valid + 1, valid) if p else (valid * valid, valid * valid)
    check_all(CONDITIONAL, [x, np.int32(n), np.bool_(p)], (a, b.sum(0, dtype=np.int32)))


INDEXED = module("""x = f32[6] parameter(0)
  n = s32[] parameter(1)
  i = s32[] parameter(2)
  d = f32[<=6] set-dimension-size(x, n), dimensions={0}
  c = f32[<=6] conditional(i, d, d, x), branch_computations={keep, cut, fixed}
  zero = f32[] constant(0)
  s = f32[] reduce(c, zero), dimensions={0}, to_apply=add_f32
  ROOT r = (f32[<=6], f32[]) tuple(c, s)""", """keep { x = f32[<=6] parameter(0)
  ROOT r = f32[<=6] negate(x) }
cut { x = f32[<=6] parameter(0)
  two = s32[] constant(2)
  ROOT r = f32[<=6] set-dimension-size(x, two), dimensions={0} }
fixed { x = f32[6] parameter(0)
  ROOT r = f32[6] exponential(x) }
""")


@pytest.mark.parametrize("i", [0, 1, 2, 7])
def test_conditional_result_sizes_come_from_the_branch_taken(i):
    """The branches return different sizes (the operand's, a constant, the bound):
    the result's is the one of the branch taken (an index out of range: the last)."""
    x = np.arange(1, 7, dtype=np.float32)
    n = 5
    want = {0: -x[:n], 1: x[:2], 2: np.exp(x), 7: np.exp(x)}[i]
    check_all(INDEXED, [x, np.int32(n), np.int32(i)], (want, np.float32(want.sum())))


def test_conditional_of_static_operands_whose_branch_makes_a_dynamic_result():
    text = module("""x = f32[4] parameter(0)
  n = s32[] parameter(1)
  p = pred[] parameter(2)
  t = (f32[4], s32[]) tuple(x, n)
  c = f32[<=4] conditional(p, t, x), true_computation=shorten, false_computation=same
  zero = f32[] constant(0)
  ROOT s = f32[] reduce(c, zero), dimensions={0}, to_apply=add_f32""", """shorten { t = (f32[4], s32[]) parameter(0)
  x = f32[4] get-tuple-element(t), index=0
  n = s32[] get-tuple-element(t), index=1
  ROOT r = f32[<=4] set-dimension-size(x, n), dimensions={0} }
same { ROOT x = f32[4] parameter(0) }
""")
    x = np.array([1, 10, 100, 1000], np.float32)
    for n, p in ((2, True), (0, True), (3, False)):
        check_all(text, [x, np.int32(n), np.bool_(p)], np.float32(x[:n].sum() if p else x.sum()))


def test_nested_conditionals_pass_sizes_through_both_levels():
    text = module("""x = s32[5] parameter(0)
  n = s32[] parameter(1)
  p = pred[] parameter(2)
  d = s32[<=5] set-dimension-size(x, n), dimensions={0}
  ROOT c = s32[<=5] conditional(p, d, d), true_computation=outer, false_computation=inner""",
                  """inner { x = s32[<=5] parameter(0)
  ROOT r = s32[<=5] reverse(x), dimensions={0} }
outer { x = s32[<=5] parameter(0)
  t = pred[] constant(false)
  ROOT r = s32[<=5] conditional(t, x, x), true_computation=inner, false_computation=inner }
""")
    x = np.array([1, 2, 3, 4, 5], np.int32)
    for n, p in ((3, True), (4, False), (0, True)):
        check_all(text, [x, np.int32(n), np.bool_(p)], x[:n][::-1])


@pytest.mark.parametrize("stage", ["evaluate", "jit"])
def test_a_size_the_branch_would_lose_is_refused_by_name(stage):
    """A branch whose parameter declares static what its operand has dynamic
    would read the padding: refused in every stage."""
    text = module("""x = s32[3,2] parameter(0)
  n = s32[] parameter(1)
  p = pred[] parameter(2)
  d = s32[<=3,2] set-dimension-size(x, n), dimensions={0}
  ROOT c = s32[3,2] conditional(p, d, d), true_computation=keep, false_computation=keep""",
                  """keep { a = s32[3,2] parameter(0)
  ROOT r = s32[3,2] negate(a) }
""")
    args = [np.ones((3, 2), np.int32), np.int32(2), np.bool_(True)]
    run = {"evaluate": lambda: xlac.evaluate(text, *args), "jit": lambda: xlac.jit(text)}[stage]
    with pytest.raises(xlac.UnsupportedError, match="conditional of a dynamic shape.*its size would be lost"):
        run()


# -----------------------------------------------------------------------------------
# while
# -----------------------------------------------------------------------------------

POP = module("""x = s32[4,2] parameter(0)
  n = s32[] parameter(1)
  d = s32[<=4,2] set-dimension-size(x, n), dimensions={0}
  t = (s32[<=4,2]) tuple(d)
  w = (s32[<=4,2]) while(t), condition=more, body=pop
  s = s32[<=4,2] get-tuple-element(w), index=0
  zero = s32[] constant(0)
  r = s32[2] reduce(s, zero), dimensions={0}, to_apply=add_s32
  ROOT o = (s32[<=4,2], s32[2]) tuple(s, r)""", """pop { t = (s32[<=4,2]) parameter(0)
  x = s32[<=4,2] get-tuple-element(t), index=0
  one = s32[] constant(1)
  n = s32[] get-dimension-size(x), dimensions={0}
  m = s32[] subtract(n, one)
  y = s32[<=4,2] set-dimension-size(x, m), dimensions={0}
  ROOT r = (s32[<=4,2]) tuple(y) }
more { t = (s32[<=4,2]) parameter(0)
  x = s32[<=4,2] get-tuple-element(t), index=0
  n = s32[] get-dimension-size(x), dimensions={0}
  two = s32[] constant(2)
  ROOT c = pred[] compare(n, two), direction=GT }
""")


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
def test_while_carries_the_sizes_its_body_changes(n):
    """XLA's stack pop: the body shrinks the state until the condition, which
    reads the size, stops it at 2."""
    x = np.arange(8, dtype=np.int32).reshape(4, 2)
    left = x[:min(n, 2)]
    check_all(POP, [x, np.int32(n)], (left, left.sum(0, dtype=np.int32)))


ACCUMULATE = module("""x = f32[6] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=6] set-dimension-size(x, n), dimensions={0}
  zero = f32[] constant(0)
  i = s32[] constant(0)
  t = (s32[], f32[<=6], f32[]) tuple(i, d, zero)
  w = (s32[], f32[<=6], f32[]) while(t), condition=three, body=step
  y = f32[<=6] get-tuple-element(w), index=1
  s = f32[] get-tuple-element(w), index=2
  ROOT o = (f32[<=6], f32[]) tuple(y, s)""", """step { t = (s32[], f32[<=6], f32[]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  x = f32[<=6] get-tuple-element(t), index=1
  s = f32[] get-tuple-element(t), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  two = f32[] constant(2)
  twos = f32[<=6] broadcast(two), dimensions={}
  y = f32[<=6] multiply(x, twos)
  zero = f32[] constant(0)
  r = f32[] reduce(y, zero), dimensions={0}, to_apply=add_f32
  u = f32[] add(s, r)
  ROOT o = (s32[], f32[<=6], f32[]) tuple(j, y, u) }
three { t = (s32[], f32[<=6], f32[]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  k = s32[] constant(3)
  ROOT c = pred[] compare(i, k), direction=LT }
""")


@pytest.mark.parametrize("n", [0, 2, 6])
def test_while_body_reduces_only_the_valid_elements_of_its_state(n):
    x = np.arange(1, 7, dtype=np.float32)
    v, total = x[:n], np.float32(0)
    for _ in range(3):
        v = v * 2
        total += v.sum()
    check_all(ACCUMULATE, [x, np.int32(n)], (v, total))


def test_while_whose_initial_state_is_static_and_body_state_dynamic():
    """The body's parameter declares the state dynamic; the initial value is
    static (its size the bound): sizes travel all the same."""
    text = POP.replace("d = s32[<=4,2] set-dimension-size(x, n), dimensions={0}\n  t = (s32[<=4,2]) tuple(d)",
                       "t = (s32[4,2]) tuple(x)")
    x = np.arange(8, dtype=np.int32).reshape(4, 2)
    check_all(text, [x, np.int32(0)], (x[:2], x[:2].sum(0, dtype=np.int32)))


@pytest.mark.parametrize("stage", ["evaluate", "jit"])
def test_a_size_the_loop_would_lose_is_refused_by_name(stage):
    """A body whose parameter declares static what the initial state has dynamic."""
    text = module("""x = f32[8] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8] set-dimension-size(x, n), dimensions={0}
  ROOT w = f32[8] while(d), condition=cond, body=body""").replace("ENTRY", """cond { p = f32[8] parameter(0)
  ROOT f = pred[] constant(false) }
body { p = f32[8] parameter(0)
  ROOT q = f32[8] negate(p) }
ENTRY""")
    args = [np.ones(8, np.float32), np.int32(3)]
    run = {"evaluate": lambda: xlac.evaluate(text, *args), "jit": lambda: xlac.jit(text)}[stage]
    with pytest.raises(xlac.UnsupportedError, match="while of a dynamic shape.*its size would be lost"):
        run()


WHILE_OF_CONDITIONALS = module("""x = f32[6] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=6] set-dimension-size(x, n), dimensions={0}
  i = s32[] constant(0)
  t = (s32[], f32[<=6]) tuple(i, d)
  w = (s32[], f32[<=6]) while(t), condition=three, body=step
  ROOT y = f32[<=6] get-tuple-element(w), index=1""", """neg { x = f32[<=6] parameter(0)
  ROOT r = f32[<=6] negate(x) }
drop { x = f32[<=6] parameter(0)
  k = s32[] get-dimension-size(x), dimensions={0}
  one = s32[] constant(1)
  m = s32[] subtract(k, one)
  ROOT r = f32[<=6] set-dimension-size(x, m), dimensions={0} }
step { t = (s32[], f32[<=6]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  x = f32[<=6] get-tuple-element(t), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  two = s32[] constant(2)
  r = s32[] remainder(i, two)
  y = f32[<=6] conditional(r, x, x), branch_computations={drop, neg}
  z = f32[<=6] conditional(r, y, y), branch_computations={neg, neg}
  ROOT o = (s32[], f32[<=6]) tuple(j, z) }
three { t = (s32[], f32[<=6]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  k = s32[] constant(3)
  ROOT c = pred[] compare(i, k), direction=LT }
""")


@pytest.mark.parametrize("n", [6, 4, 2])
def test_while_body_whose_conditionals_change_the_sizes(n):
    """Conditionals in a loop body, one computation the branch of several (each
    call site gets its own padded copy)."""
    x = np.arange(1, 7, dtype=np.float32)
    v = x[:n]
    for i in range(3):
        v = -v[:max(len(v) - 1, 0)] if i % 2 == 0 else v
    check_all(WHILE_OF_CONDITIONALS, [x, np.int32(n)], v)
