"""Reduction kernels (column reductions streamed into the output, split
reductions to one value): odd sizes, several tasks, 1 and 2 threads, against
the numpy evaluator."""
import numpy as np
import pytest

import xlac

ADD = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""
MAX = """mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
"""

CASES = [
    ((4096, 512), (0,), "1,0", "add"), ((7, 13), (0,), "1,0", "add"), ((3, 5, 7), (0, 1), "2,1,0", "add"),
    ((9, 6), (1,), "0,1", "add"), ((5, 2, 3), (0,), "2,1,0", "mx"), ((1, 33), (0,), "1,0", "add"),
    ((6, 5, 7), (1,), "2,1,0", "mx"), ((300, 1501), (0,), "1,0", "add"), ((65, 4, 1025), (0,), "2,1,0", "mx"),
    ((300, 1501), (1,), "1,0", "add"), ((1 << 18,), (0,), "0", "add"),
]


@pytest.mark.parametrize("dims,red,layout,reducer", CASES)
def test_reduce_of_a_fused_operand(dims, red, layout, reducer):
    kept = [d for d in range(len(dims)) if d not in red]
    sh = f"f32[{','.join(map(str, dims))}]{{{layout}}}"
    osh = f"f32[{','.join(str(dims[d]) for d in kept)}]"
    init = "0" if reducer == "add" else "-inf"
    text = f"""HloModule m
{ADD}{MAX}
ENTRY e {{
  x = {sh} parameter(0)
  z = f32[] constant({init})
  xx = {sh} multiply(x, x)
  ROOT r = {osh} reduce(xx, z), dimensions={{{','.join(map(str, red))}}}, to_apply={reducer}
}}"""
    x = np.random.default_rng(0).standard_normal(dims).astype(np.float32)
    want = xlac.evaluate(text, x)
    for nt in (1, 2):
        np.testing.assert_allclose(xlac.jit(text, num_threads=nt)(x), want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("ty", ["f32", "f64"])
@pytest.mark.parametrize("op,init", [("maximum", "-inf"), ("minimum", "inf"), ("maximum", "nan"),
                                     ("minimum", "0")])
def test_row_max_min_propagate_nan(ty, op, init):
    """Row max/min reductions combine with maxnum/minnum and keep a NaN flag
    of their own: NaN anywhere in a row (or as the init value) makes that
    row's result NaN, as the spec's maximum/minimum do; infinities, rows of
    one value and rows that are all NaN are exact."""
    text = f"""HloModule m
red {{
  a = {ty}[] parameter(0)
  b = {ty}[] parameter(1)
  ROOT s = {ty}[] {op}(a, b)
}}
ENTRY e {{
  x = {ty}[16,1000]{{1,0}} parameter(0)
  z = {ty}[] constant({init})
  ROOT r = {ty}[16]{{0}} reduce(x, z), dimensions={{1}}, to_apply=red
}}"""
    x = np.random.default_rng(1).standard_normal((16, 1000)).astype(ty.replace("f", "float"))
    x[1, 999] = np.nan
    x[2, 0] = np.nan
    x[3, :] = np.inf
    x[4, :] = -np.inf
    x[5, :] = np.nan
    x[6, 500] = np.inf
    x[7, 17] = -np.inf
    x[8, :] = 2.5
    want = np.asarray(xlac.evaluate(text, x))
    for nt in (1, 2):
        got = xlac.jit(text, num_threads=nt)(x)
        np.testing.assert_array_equal(got, want)
    assert np.isnan(want[1]) and np.isnan(want[2]) and np.isnan(want[5])
    assert np.isnan(want).all() == (init == "nan")
    assert "maxnum" in xlac.jit(text).llvm_ir or "minnum" in xlac.jit(text).llvm_ir



@pytest.mark.parametrize("ty", ["bf16", "f16"])
@pytest.mark.parametrize("op,init", [("maximum", "-inf"), ("minimum", "inf"), ("maximum", "nan")])
@pytest.mark.parametrize("dims,red", [((16, 1000), (1,)), ((1000, 16), (0,)), ((512, 600), (0, 1))])
def test_narrow_float_max_min_reductions_in_f32_keep_the_values(ty, op, init, dims, red):
    """A bf16/f16 max or min is reduced in f32 and converted once
    (``op-expander``): the same values as rounding every step, by the row,
    column and split kernels; NaN anywhere makes the result NaN."""
    kept = [d for d in range(2) if d not in red]
    text = f"""HloModule m
red {{
  a = {ty}[] parameter(0)
  b = {ty}[] parameter(1)
  ROOT s = {ty}[] {op}(a, b)
}}
ENTRY e {{
  x = {ty}[{dims[0]},{dims[1]}]{{1,0}} parameter(0)
  z = {ty}[] constant({init})
  ROOT r = {ty}[{','.join(str(dims[d]) for d in kept)}] reduce(x, z), dimensions={{{','.join(map(str, red))}}}, to_apply=red
}}"""
    dt = xlac.Shape(getattr(xlac, ty.upper()), ()).dtype
    x = np.random.default_rng(2).standard_normal(dims).astype(dt)
    x[1, 3] = np.nan
    x[4, :] = np.inf
    x[5, 7] = -0.0
    x[6, 9] = -np.inf
    # numpy's max/min propagate NaN (the evaluator calls a bf16 reducer per element: 20 s here).
    npop = np.maximum if op == "maximum" else np.minimum
    want = npop(npop.reduce(x.astype(np.float64), axis=red), float(init))
    for nt in (1, 2):
        got = np.asarray(xlac.jit(text, num_threads=nt)(x)).astype(np.float64)
        np.testing.assert_array_equal(got, want)


#: Long float sums, one per kernel that emits reductions: the column kernel,
#: a multi-output fusion on it (a BatchNorm's mean and mean of squares), a
#: multi-output loop fusion (sums of rows), a loop-kernel reduction keeping a
#: middle dimension, and a split reduction to one value.
#: (dims, layout, reduced dimensions, with the sum of squares, kernel).
LONG_SUMS = [((32768, 4), "1,0", (0,), False, "reduce.column"),
             ((32, 32, 32, 4), "3,2,1,0", (0, 1, 2), True, "reduce.column"),
             ((4, 32768), "1,0", (1,), True, "loop"),
             ((4096, 4, 8), "2,1,0", (0, 2), False, "loop"),
             ((4096, 64), "1,0", (0, 1), False, "reduce.split")]


def _long_sum(dims, layout, red, squares: bool) -> str:
    kept = [d for d in range(len(dims)) if d not in red]
    sh = f"f32[{','.join(map(str, dims))}]{{{layout}}}"
    osh = f"f32[{','.join(str(dims[d]) for d in kept)}]"
    r = ",".join(map(str, red))
    body = f"  s = {osh} reduce(x, z), dimensions={{{r}}}, to_apply=add\n"
    if squares:
        body += (f"  xx = {sh} multiply(x, x)\n  q = {osh} reduce(xx, z), dimensions={{{r}}}, to_apply=add\n"
                 f"  ROOT t = ({osh}, {osh}) tuple(s, q)\n")
    else:
        body = body.replace("  s =", "  ROOT s =")
    return f"HloModule m\n{ADD}\nENTRY e {{\n  x = {sh} parameter(0)\n  z = f32[] constant(0)\n{body}}}"


@pytest.mark.parametrize("dims,layout,red,squares,kernel", LONG_SUMS)
def test_long_float_sums_are_summed_as_trees(dims, layout, red, squares, kernel):
    """32,768 copies of 0.1 added one after the other into one f32
    accumulator are off by 2.6e-4 (relative); XLA:CPU sums in trees of blocks
    of 32 and is off by about 1e-7, and so must xlac be, whichever kernel
    emits the reduction (``reduction.TREE_BLOCK``)."""
    from xlac.codegen.compiler import KERNELS, lower
    text = _long_sum(dims, layout, red, squares)
    lowered = lower(xlac.parse_hlo(text)).hlo.entry.instructions
    assert [KERNELS.choose(i).candidate.name for i in lowered if i.opcode == "fusion"] == [kernel]
    x = np.full(dims, 0.1, np.float32)
    n = int(np.prod([dims[d] for d in red]))
    exact = [np.float64(np.float32(0.1)) * n, np.float64(np.float32(0.1) * np.float32(0.1)) * n]
    for nt in (1, 2):
        got = xlac.jit(text, num_threads=nt)(x)
        for value, want in zip(got if squares else [got], exact):
            error = np.abs(np.asarray(value, np.float64) - want).max() / want
            assert error < 1e-6, (nt, error)


#: Trees of every shape of block: rows not a multiple of the column kernel's
#: groups of four, three levels, several reduced dimensions, a reduced
#: dimension kept whole between split ones; f64, multiply, an init value that
#: is not the identity (added once, at the top; the split kernel, 6001x40,
#: starts every task from the init value, so it gets the identity here).
#: (dims, layout, reduced, type, op, init)
TREE_EDGES = [((1001, 3), "1,0", (0,), "f32", "add", "5"), ((33, 2, 7), "2,1,0", (0, 1), "f64", "add", "0"),
              ((2, 1100, 5), "2,1,0", (0, 1), "f32", "multiply", "1"),
              ((40, 3, 37), "2,1,0", (0, 2), "f32", "add", "-2.5"),
              ((70, 45, 6), "2,0,1", (1, 2), "f64", "add", "0"), ((6001, 40), "1,0", (0, 1), "f32", "add", "0"),
              ((1500, 40), "1,0", (0, 1), "f32", "add", "1")]


@pytest.mark.parametrize("dims,layout,red,ty,op,init", TREE_EDGES)
def test_tree_sums_agree_with_the_evaluator(dims, layout, red, ty, op, init):
    kept = [d for d in range(len(dims)) if d not in red]
    text = f"""HloModule m
red {{
  a = {ty}[] parameter(0)
  b = {ty}[] parameter(1)
  ROOT s = {ty}[] {op}(a, b)
}}

ENTRY e {{
  x = {ty}[{','.join(map(str, dims))}]{{{layout}}} parameter(0)
  z = {ty}[] constant({init})
  ROOT r = {ty}[{','.join(str(dims[d]) for d in kept)}] reduce(x, z), dimensions={{{','.join(map(str, red))}}}, to_apply=red
}}"""
    rng = np.random.default_rng(1)
    x = (1 + rng.uniform(-1e-3, 1e-3, dims) if op == "multiply" else rng.standard_normal(dims)).astype({"f32": np.float32, "f64": np.float64}[ty])
    want = xlac.evaluate(text, x)
    for nt in (1, 2):
        np.testing.assert_allclose(xlac.jit(text, num_threads=nt)(x), want, rtol=1e-5, atol=1e-4)


#: Multi-output fusions of column reductions (``reduce.column`` with a tuple
#: root): each reduce's input computed from shared values, one level (few
#: rows) and two or three (long float sums), mixed reducers, an output of
#: another layout, several tasks.  (dims, layout, reduced, reducers, output layout)
MULTI_COLUMNS = [((8, 12, 32), "2,1,0", (0, 1), ("add", "add", "add"), "0"),
                 ((8, 12, 32), "2,1,0", (0, 1), ("add",) * 12, "0"),     # a transformer's layer norms
                 ((7, 5), "1,0", (0,), ("add", "mx"), "0"),
                 ((40, 33, 6), "2,1,0", (0, 1), ("add", "add"), "0"),
                 ((1100, 3, 2), "2,1,0", (0,), ("add", "add"), "0,1"),
                 ((2048, 4096), "1,0", (0,), ("add", "add"), "0"),
                 # kept dimensions on both sides of the reduced ones (a group norm's)
                 ((8, 16, 16, 16), "3,2,1,0", (1, 2), ("add", "add"), "1,0"),
                 ((3, 5, 40, 7), "3,2,1,0", (1, 2), ("add", "add"), "1,0"),
                 ((64, 30, 33), "2,1,0", (1,), ("add", "add"), "1,0")]


@pytest.mark.parametrize("grouped", [False, True], ids=["entry-rules", "rows-grouped"])
@pytest.mark.parametrize("dims,layout,red,reducers,out_layout", MULTI_COLUMNS)
def test_multi_output_column_reductions(dims, layout, red, reducers, out_layout, grouped, monkeypatch):
    # rows-grouped: small inputs too are added COLUMN_REDUCE_ROWS rows at a time
    # (what a loop body's kernel does), not one at a time as the entry's.
    from xlac.codegen.compiler import KERNELS, lower
    from xlac.codegen.kernels import reduce as R
    if grouped:
        monkeypatch.setattr(R, "UNGROUPED_ONCE_ELEMENTS", 0)
    kept = [d for d in range(len(dims)) if d not in red]
    sh = f"f32[{','.join(map(str, dims))}]{{{layout}}}"
    osh = f"f32[{','.join(str(dims[d]) for d in kept)}]{{{out_layout}}}"
    r = ",".join(map(str, red))
    body, value, names = "", "x", []
    for k, op in enumerate(reducers):
        # a chain of values, each reduce's input built on the one before
        body += f"  v{k} = {sh} add({value}, y)\n  w{k} = {sh} multiply(v{k}, x)\n"
        init = "z" if op == "add" else "m"
        body += f"  s{k} = {osh} reduce(w{k}, {init}), dimensions={{{r}}}, to_apply={op}\n"
        value = f"v{k}"
        names.append(f"s{k}")
    text = (f"HloModule m\n{ADD}{MAX}\nENTRY e {{\n  x = {sh} parameter(0)\n  y = {sh} parameter(1)\n"
            f"  z = f32[] constant(0)\n  m = f32[] constant(-inf)\n{body}"
            f"  ROOT t = ({', '.join([osh] * len(reducers))}) tuple({', '.join(names)})\n}}")
    lowered = lower(xlac.parse_hlo(text)).hlo.entry.instructions
    fusions = [i for i in lowered if i.opcode == "fusion"]
    assert {KERNELS.choose(i).candidate.name for i in fusions} == {"reduce.column"}
    if len(set(reducers)) == 1:                 # one kernel for all
        assert len(fusions) == 1 and fusions[0].attrs["calls"].root.opcode == "tuple"
    rng = np.random.default_rng(2)
    x, y = (rng.standard_normal(dims).astype(np.float32) for _ in range(2))
    want = xlac.evaluate(text, x, y)
    for nt in (1, 2):
        got = xlac.jit(text, num_threads=nt)(x, y)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-3 * np.sqrt(np.prod([dims[d] for d in red])))


def _column_sum_module(loop: bool) -> str:
    """sum over rows of x * y (f32[8,12,32] -> f32[32]) in the entry, and with
    ``loop`` the same in a while body too."""
    sums = """  w = f32[8,12,32]{2,1,0} multiply(x, y)
  s = f32[32]{0} reduce(w, z), dimensions={0,1}, to_apply=add
"""
    if not loop:
        return f"HloModule m\n{ADD}\nENTRY e {{\n  x = f32[8,12,32]{{2,1,0}} parameter(0)\n" \
               f"  y = f32[8,12,32]{{2,1,0}} parameter(1)\n  z = f32[] constant(0)\n{sums}  ROOT r = f32[32]{{0}} copy(s)\n}}"
    state = "(s32[], f32[8,12,32]{2,1,0}, f32[8,12,32]{2,1,0}, f32[32]{0})"
    return f"""HloModule m
{ADD}
body {{
  p = {state} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8,12,32]{{2,1,0}} get-tuple-element(p), index=1
  y = f32[8,12,32]{{2,1,0}} get-tuple-element(p), index=2
  a = f32[32]{{0}} get-tuple-element(p), index=3
  z = f32[] constant(0)
{sums}  n = f32[32]{{0}} add(a, s)
  x2 = f32[8,12,32]{{2,1,0}} add(x, y)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = {state} tuple(j, x2, y, n)
}}

cond {{
  p = {state} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  three = s32[] constant(3)
  ROOT c = pred[] compare(i, three), direction=LT
}}

ENTRY e {{
  x = f32[8,12,32]{{2,1,0}} parameter(0)
  y = f32[8,12,32]{{2,1,0}} parameter(1)
  z = f32[] constant(0)
{sums}  zero = s32[] constant(0)
  t0 = {state} tuple(zero, x, y, s)
  l = {state} while(t0), condition=cond, body=body
  ROOT r = f32[32]{{0}} get-tuple-element(l), index=3
}}"""


def test_a_small_column_reduction_of_the_entry_adds_its_rows_one_at_a_time(monkeypatch):
    # The entry's kernel runs once per call: its rows are added one at a time
    # (less code for LLVM); a while body's adds COLUMN_REDUCE_ROWS at a time,
    # so the two do not share one kernel.  Both sum the same.
    from xlac.codegen.kernels import reduce as R
    seen = []
    add_rows = R._BlockedColumnSum._add_rows
    monkeypatch.setattr(R._BlockedColumnSum, "_add_rows",
                        lambda self, accs, row, n: seen.append(n) or add_rows(self, accs, row, n))
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal((8, 12, 32)).astype(np.float32) for _ in range(2))
    text = _column_sum_module(loop=True)
    got = xlac.jit(text)(x, y)
    assert sorted(set(seen)) == [1, R.COLUMN_REDUCE_ROWS]
    np.testing.assert_allclose(got, xlac.evaluate(text, x, y), rtol=1e-5, atol=1e-4)
    seen.clear()
    monkeypatch.setattr(R, "UNGROUPED_ONCE_ELEMENTS", 8 * 12 * 32 - 1)   # one element too many
    xlac.clear_caches()
    xlac.jit(_column_sum_module(loop=False))(x, y)
    assert set(seen) == {R.COLUMN_REDUCE_ROWS}


def test_a_column_reductions_kept_loop_is_parallel():
    # Each iteration updates the output at its own index: marked parallel, the
    # loop vectorises without run-time overlap checks between the inputs and
    # the outputs (a dozen reduces fused needed more than LLVM makes).
    from xlac.codegen.compiler import lower
    ir = lower(xlac.parse_hlo(_column_sum_module(loop=False))).llvm_ir
    kernel = next(f for f in ir.split("\ndefine ")[1:] if "fusion" in f.split("(")[0])
    assert "!llvm.access.group" in kernel
    parallel = [line for line in ir.splitlines() if "llvm.loop.parallel_accesses" in line]
    assert parallel
