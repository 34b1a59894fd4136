"""Differential fuzzer: random computations (graphs.py) evaluated three ways —
the numpy evaluator, ``xlac.jit(optimize=True)`` and ``xlac.jit(optimize=False)``
— must agree (exactly where both compute exactly, within a tolerance where
the polynomial math or a reassociated reduction is involved; see graphs.py).

On a failure hypothesis prints the shrunk graph as HLO text and its inputs
as Python code (the ``note`` lines): a ready-made reproducer.
"""
import numpy as np
from hypothesis import given, note, strategies as st

import xlac
from fuzzconf import describe_inputs, fuzz_settings, jit_or_unsupported, leaves, mismatch, random_array
import graphs

SETTINGS = fuzz_settings(ci=30, long=3000)


def check_graph(data, types) -> None:
    comp, params, tols = graphs.build(data, types=types)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    special = data.draw(st.booleans())
    args = [random_array(rng, et, dims, special) for et, dims in params]
    note(f"HLO:\n{comp.as_hlo_text()}")
    note(f"inputs:\n{describe_inputs(args)}")
    with np.errstate(all="ignore"):
        want = leaves(xlac.evaluate(comp, *args))
    for optimize in (True, False):
        exe = jit_or_unsupported(comp, optimize=optimize)
        if exe is None:
            continue
        got = leaves(exe(*args))
        assert len(got) == len(want) == len(tols)
        for k, (g, w, tol) in enumerate(zip(got, want, tols)):
            why = mismatch(g, w, tol)
            assert why is None, f"jit(optimize={optimize}) differs from the evaluator in result {k}: {why}"


@SETTINGS
@given(st.data())
def test_random_graphs_f32_s32_pred(data):
    check_graph(data, ("f32", "s32", "pred", "u8"))


@SETTINGS
@given(st.data())
def test_random_graphs_f64_bf16_f16(data):
    check_graph(data, ("f64", "bf16", "f16", "s32"))
