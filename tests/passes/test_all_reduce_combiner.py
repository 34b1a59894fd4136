"""AllReduceCombiner: independent all-reduces alike become one variadic all-reduce."""
import numpy as np

import xlac
from xlac.evaluator_replicated import evaluate_replicated
from xlac.passes.all_reduce_combiner import AllReduceCombiner

REDUCERS = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
"""

GRADIENTS = """HloModule grads, replica_count=2
""" + REDUCERS + """
ENTRY e {
  x = f32[2] parameter(0)
  y = f32[3] parameter(1)
  a = f32[2] all-reduce(x), replica_groups={}, to_apply=add
  b = f32[3] all-reduce(y), replica_groups={}, to_apply=add
  n = f32[2] negate(a)
  c = f32[2] all-reduce(n), replica_groups={}, to_apply=add
  m = f32[3] all-reduce(y), replica_groups={}, to_apply=max
  ROOT r = (f32[2], f32[3], f32[2], f32[3]) tuple(a, b, c, m)
}
"""

# a -> b and c -> d, with a, d summed and b, c maximised: {a, d} and {b, c}
# would each be independent, but together a cycle (b after a, d after c).
CROSSED = """HloModule crossed, replica_count=2
""" + REDUCERS + """
ENTRY e {
  x = f32[2] parameter(0)
  y = f32[2] parameter(1)
  a = f32[2] all-reduce(x), replica_groups={}, to_apply=add
  b = f32[2] all-reduce(a), replica_groups={}, to_apply=max
  c = f32[2] all-reduce(y), replica_groups={}, to_apply=max
  d = f32[2] all-reduce(c), replica_groups={}, to_apply=add
  ROOT r = (f32[2], f32[2]) tuple(b, d)
}
"""


def _all_reduces(module) -> list:
    return [i for i in module.entry.instructions if i.opcode == "all-reduce"]


def _args(*shapes):
    rng = np.random.default_rng(0)
    return [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(2)]


def test_independent_all_reduces_alike_travel_together():
    """The two sums of parameters become one all-reduce of both; the sum of
    a value computed from one of them, and the maximum, stay apart; the
    results are the same, on devices and in the evaluator."""
    module = xlac.parse_hlo(GRADIENTS)
    assert AllReduceCombiner().run(module)
    ars = _all_reduces(module)
    assert sorted(len(i.operands) for i in ars) == [1, 1, 2]
    (both,) = [i for i in ars if len(i.operands) == 2]
    assert [o.name for o in both.operands] == ["x", "y"] and both.shape.is_tuple
    args = _args((2,), (3,))
    want = evaluate_replicated(xlac.parse_hlo(GRADIENTS), args)
    got = evaluate_replicated(module, args)
    for w, g in zip(want, got):
        for a, b in zip(w, g):
            np.testing.assert_array_equal(a, b)
    stacked = [np.stack([a[k] for a in args]) for k in range(2)]
    for w, g in zip(xlac.jit(GRADIENTS)(*stacked), [np.stack([d[k] for d in want]) for k in range(4)]):
        np.testing.assert_allclose(w, g, rtol=1e-6)


def test_groups_that_would_wait_for_each_other_are_not_both_made():
    """Combining {a, d} and {b, c} would make each wait for the other: one of
    them is made, and the module stays a valid order of operands before users."""
    module = xlac.parse_hlo(CROSSED)
    assert AllReduceCombiner().run(module)
    combined = [i for i in _all_reduces(module) if len(i.operands) == 2]
    assert len(combined) == 1 and len(_all_reduces(module)) == 3
    position = {inst: k for k, inst in enumerate(module.entry.instructions)}
    assert all(position[o] < position[i] for i in module.entry.instructions for o in i.operands)
    args = _args((2,), (2,))
    for w, g in zip(evaluate_replicated(xlac.parse_hlo(CROSSED), args), evaluate_replicated(module, args)):
        for a, b in zip(w, g):
            np.testing.assert_array_equal(a, b)


def test_one_all_reduce_or_none_is_left_alone():
    text = GRADIENTS.replace("  b = f32[3] all-reduce(y), replica_groups={}, to_apply=add\n", "  b = f32[3] negate(y)\n")
    text = text.replace("  c = f32[2] all-reduce(n), replica_groups={}, to_apply=add\n", "  c = f32[2] negate(n)\n")
    assert not AllReduceCombiner().run(xlac.parse_hlo(text))
