"""sort, topk and scatter through the JIT: against the evaluator, numpy and the
spec's examples (stability, NaNs in total order, out-of-bounds scatter windows
skipped, duplicate indices combined, variadic and batched scatters)."""
import time

import numpy as np
import pytest

import xlac
from xlac import ops

from test_jit_ops import check, rand

BF16 = xlac.BF16.dtype

LT_F32 = """lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
"""


def sort_module(ty, dims, layout, dim, comparator="lt", extra_params="", n_ops=1, is_stable=True):
    shape = f"{ty}[{','.join(map(str, dims))}]{layout}"
    params = "\n".join(f"  p{k} = {shape if k == 0 else shape.replace(ty, 's32', 1)} parameter({k})"
                       for k in range(n_ops))
    names = ", ".join(f"p{k}" for k in range(n_ops))
    out = shape if n_ops == 1 else "(" + ", ".join(
        [shape] + [shape.replace(ty, "s32", 1)] * (n_ops - 1)) + ")"
    return f"""HloModule sort
{comparator}
ENTRY e {{
{params}
  ROOT s = {out} sort({names}), dimensions={{{dim}}}, is_stable={'true' if is_stable else 'false'}, to_apply=lt
}}
"""


def lt(ty, n_ops=1, direction="LT", ctype=""):
    params = "\n".join(f"  a{k} = {ty if k == 0 else 's32'}[] parameter({2 * k})\n"
                       f"  b{k} = {ty if k == 0 else 's32'}[] parameter({2 * k + 1})" for k in range(n_ops))
    return f"""lt {{
{params}
  ROOT r = pred[] compare(a0, b0), direction={direction}{ctype}
}}
"""


@pytest.mark.parametrize("layout,dim", [("{1,0}", 1), ("{1,0}", 0), ("{0,1}", 1), ("{0,1:P(9,6)}", 0)])
def test_sort_f32_along_each_dimension(layout, dim):
    rng = np.random.default_rng(0)
    x = rand(np.float32, (7, 5), rng)
    x[1, 2], x[3, 0], x[2, 4] = np.nan, -0.0, np.inf
    got = check(sort_module("f32", (7, 5), layout, dim, lt("f32", ctype=", type=TOTALORDER")), x)
    want = np.sort(x, axis=dim)   # numpy puts NaN last, as the total order does
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("ty,dt,direction", [("s32", np.int32, "GT"), ("u8", np.uint8, "LT"),
                                             ("s64", np.int64, "LT"), ("f16", np.float16, "GT"),
                                             ("bf16", BF16, "LT"), ("f64", np.float64, "GT")])
def test_sort_element_types(ty, dt, direction):
    rng = np.random.default_rng(1)
    x = rand(dt, (3, 40), rng, -50, 50)
    got = check(sort_module(ty, (3, 40), "{1,0}", 1, lt(ty, direction=direction)), x)
    want = np.sort(x.astype(np.float64), axis=1)
    np.testing.assert_array_equal(got.astype(np.float64), want if direction == "LT" else want[:, ::-1])


def test_sort_is_stable_with_many_equal_keys():
    """Keys with few distinct values; the values operand (an iota) shows the order."""
    rng = np.random.default_rng(2)
    n = 1000
    keys = rng.integers(0, 4, size=(2, n)).astype(np.float32)
    vals = np.tile(np.arange(n, dtype=np.int32), (2, 1))
    text = sort_module("f32", (2, n), "{1,0}", 1, lt("f32", n_ops=2), n_ops=2)
    got_k, got_v = check(text, keys, vals)
    order = np.argsort(keys, axis=1, kind="stable")
    np.testing.assert_array_equal(got_v, order)
    np.testing.assert_array_equal(got_k, np.take_along_axis(keys, order, 1))


def test_one_operand_sort_moves_values_stably():
    """A one-operand sort moves its values themselves: still stable, as the
    permutation sort of several operands is (the evaluator's stable order):
    -0 and +0, equal under a plain LT, keep their order; 1,000 elements take
    several merge passes, and an odd row length a lone last run."""
    rng = np.random.default_rng(4)
    x = rng.integers(-3, 4, size=(3, 1003)).astype(np.float32)
    x[x == 0] = np.where(rng.random((x == 0).sum()) < 0.5, -0.0, 0.0)
    text = sort_module("f32", (3, 1003), "{1,0}", 1, lt("f32"))
    got = np.asarray(xlac.jit(text)(x))
    want = np.asarray(xlac.evaluate(text, x))
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    y = rng.integers(-100, 100, size=(4, 777)).astype(np.int8)
    text = sort_module("s8", (4, 777), "{1,0}", 1, lt("s8", direction="GT"))
    np.testing.assert_array_equal(xlac.jit(text)(y), -np.sort(-y.astype(np.int64), axis=1))


@pytest.mark.parametrize("ty,dt", [("s8", np.int8), ("u8", np.uint8), ("s16", np.int16), ("u16", np.uint16),
                                   ("s32", np.int32), ("u32", np.uint32), ("s64", np.int64), ("u64", np.uint64)])
@pytest.mark.parametrize("direction", ["LT", "GT"])
def test_one_integer_operand_by_its_order_is_radix_sorted(ty, dt, direction):
    """One integer operand by a plain LT/GT: a radix sort (no comparisons);
    the extremes of the type, runs of one value, rows of 1, 2 and 1,000."""
    from xlac.codegen.kernels import sort as sort_kernel
    info = np.iinfo(dt)
    rng = np.random.default_rng(5)
    for n in (1, 2, 1000):
        text = sort_module(ty, (3, n), "{1,0}", 1, lt(ty, direction=direction))
        assert sort_kernel.radix_direction(xlac.parse_hlo(text).entry.root) == direction
        x = rng.integers(info.min, info.max, (3, n), dtype=dt, endpoint=True)
        x[0, : n // 2] = info.min
        x[1, -1] = info.max
        want = np.sort(x, axis=1)
        np.testing.assert_array_equal(xlac.jit(text)(x), want if direction == "LT" else want[:, ::-1])


def test_sort_spec_example_three_operands():
    text = """HloModule sort3
cmp {
  a0 = s32[] parameter(0)
  b0 = s32[] parameter(1)
  a1 = s32[] parameter(2)
  b1 = s32[] parameter(3)
  a2 = f32[] parameter(4)
  b2 = f32[] parameter(5)
  ROOT r = pred[] compare(a0, b0), direction=LT
}
ENTRY e {
  x = s32[2]{0} parameter(0)
  y = s32[2]{0} parameter(1)
  z = f32[2]{0} parameter(2)
  ROOT s = (s32[2]{0}, s32[2]{0}, f32[2]{0}) sort(x, y, z), dimensions={0}, to_apply=cmp
}
"""
    got = check(text, np.array([3, 1], np.int32), np.array([42, 50], np.int32),
                np.array([-3.0, 1.1], np.float32))
    np.testing.assert_array_equal(got[0], [1, 3])
    np.testing.assert_array_equal(got[1], [50, 42])
    np.testing.assert_array_equal(got[2], np.array([1.1, -3.0], np.float32))


def test_sort_tie_breaking_comparator_and_odd_sizes():
    """A lexicographic comparator (key, then value descending) over sizes around
    the insertion-sort run length and powers of two."""
    cmp = """cmp {
  a0 = s8[] parameter(0)
  b0 = s8[] parameter(1)
  a1 = s32[] parameter(2)
  b1 = s32[] parameter(3)
  lt = pred[] compare(a0, b0), direction=LT
  eq = pred[] compare(a0, b0), direction=EQ
  gt1 = pred[] compare(a1, b1), direction=GT
  tie = pred[] and(eq, gt1)
  ROOT r = pred[] or(lt, tie)
}
"""
    rng = np.random.default_rng(3)
    for n in (1, 2, 15, 16, 17, 33, 64, 100):
        text = f"""HloModule sortlex
{cmp}
ENTRY e {{
  k = s8[{n}]{{0}} parameter(0)
  v = s32[{n}]{{0}} parameter(1)
  ROOT s = (s8[{n}]{{0}}, s32[{n}]{{0}}) sort(k, v), dimensions={{0}}, to_apply=cmp
}}
"""
        k = rng.integers(-3, 3, size=n).astype(np.int8)
        v = rng.integers(0, 1000, size=n).astype(np.int32)
        got_k, got_v = xlac.jit(text)(k, v)
        order = np.lexsort((-v.astype(np.int64), k))
        np.testing.assert_array_equal(got_k, k[order])
        np.testing.assert_array_equal(got_v, v[order])


def test_sort_ten_thousand_elements_is_fast():
    n = 10_000
    rng = np.random.default_rng(4)
    x = rng.standard_normal(n).astype(np.float32)
    x[::97] = x[5]  # some duplicates
    text = sort_module("f32", (n,), "{0}", 0, lt("f32", n_ops=2), n_ops=2)
    exe = xlac.jit(text)
    idx = np.arange(n, dtype=np.int32)
    start = time.perf_counter()
    got_x, got_i = exe(x, idx)
    elapsed = time.perf_counter() - start
    order = np.argsort(x, kind="stable")
    np.testing.assert_array_equal(got_i, order)
    np.testing.assert_array_equal(got_x, x[order])
    assert elapsed < 1.0, f"sorting {n} elements took {elapsed:.3f}s"  # O(n log n): milliseconds


def test_sort_built_with_the_builder():
    b = xlac.XlaBuilder("s")
    x = ops.parameter(b, 0, "f32[4,6]")
    i = ops.iota(b, "s32[4,6]", 1)
    s = ops.sort([x, i], dimension=1, is_stable=True)   # default comparator: ascending by x
    comp = b.build(ops.get_tuple_element(s, 1))
    rng = np.random.default_rng(5)
    xs = rand(np.float32, (4, 6), rng)
    xs[0] = [1, 1, 0, 0, np.nan, -np.inf]
    got = xlac.jit(comp)(xs)
    np.testing.assert_array_equal(got, np.argsort(xs, axis=1, kind="stable"))
    np.testing.assert_array_equal(got, xlac.evaluate(comp, xs))
    single = xlac.XlaBuilder("s1")
    y = ops.parameter(single, 0, "s32[5]")
    np.testing.assert_array_equal(xlac.jit(single.build(ops.sort(y)))(np.array([3, -1, 2, 9, 0], np.int32)),
                                  [-1, 0, 2, 3, 9])
    with pytest.raises(xlac.ShapeError, match="sort.*comparator"):
        ops.sort([x, i], comparator=_bad_comparator())


def _bad_comparator():
    b = xlac.XlaBuilder("bad")
    p = ops.parameter(b, 0, "f32[]")
    ops.parameter(b, 1, "f32[]")
    return b.build(ops.lt(p, p))


# ----------------------------------------------------------------------------
# topk
# ----------------------------------------------------------------------------

def topk_module(ty, dims, k, largest=True, layout=""):
    out = list(dims[:-1]) + [k]
    shape = f"{ty}[{','.join(map(str, dims))}]{layout}"
    o = ",".join(map(str, out))
    return f"""HloModule topk
ENTRY e {{
  x = {shape} parameter(0)
  ROOT t = ({ty}[{o}], s32[{o}]) topk(x), k={k}, largest={'true' if largest else 'false'}
}}
"""


@pytest.mark.parametrize("largest", [True, False])
def test_topk_ties_and_nans(largest):
    x = np.array([[1, 3, 3, np.nan, -0.0, 0.0, 3, -np.inf, np.inf, 1],
                  [5, 4, 3, 2, 1, 0, -1, -2, -3, -4]], np.float32)
    values, idx = check(topk_module("f32", (2, 10), 4, largest), x)
    if largest:   # NaN above +inf; equal values by index
        np.testing.assert_array_equal(idx, [[3, 8, 1, 2], [0, 1, 2, 3]])
    else:          # -0 below +0 in total order
        np.testing.assert_array_equal(idx, [[7, 4, 5, 0], [9, 8, 7, 6]])
    np.testing.assert_array_equal(values, np.take_along_axis(x, idx, 1))


@pytest.mark.parametrize("ty,dt", [("s32", np.int32), ("u16", np.uint16), ("bf16", BF16), ("f64", np.float64)])
def test_topk_types_and_ranks(ty, dt):
    rng = np.random.default_rng(6)
    x = rand(dt, (2, 3, 50), rng, -20, 20)
    values, idx = check(topk_module(ty, (2, 3, 50), 7, layout="{1,2,0}"), x)
    order = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")[..., :7]
    np.testing.assert_array_equal(idx, order)


@pytest.mark.parametrize("dims,k,order", [((64, 2048), 5, "random"), ((64, 2048), 64, "ascending"),
                                          ((3, 200), 100, "random"), ((5, 300), 64, "ties"),
                                          ((1, 70000), 3, "descending")])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_selected_and_sorted(dims, k, order, largest):
    """k <= SELECT_MAX_K: selected into k kept in order (rows shared among
    threads when big), the worst case an ordered row; larger k: sorted.
    Bit for bit the evaluator's, ties by index."""
    from xlac.codegen.kernels.sort import SELECT_MAX_K
    assert (k <= SELECT_MAX_K) == (k != 100)
    rng = np.random.default_rng(k)
    x = rng.standard_normal(dims).astype(np.float32)
    if order == "ties":
        x = rng.integers(0, 5, dims).astype(np.float32)
    elif order != "random":
        x = np.sort(x, axis=-1)[..., ::(1 if order == "ascending" else -1)].copy()
    text = topk_module("f32", dims, k, largest)
    want = xlac.evaluate(text, x)
    for nt in (1, 2):
        got = xlac.jit(text, num_threads=nt)(x)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def test_topk_built_with_the_builder():
    b = xlac.XlaBuilder("tk")
    x = ops.parameter(b, 0, "f32[5]")
    comp = b.build(ops.top_k(x, 2))
    v, i = xlac.jit(comp)(np.array([1, 5, 2, 5, 0], np.float32))
    np.testing.assert_array_equal(v, [5, 5])
    np.testing.assert_array_equal(i, [1, 3])
    with pytest.raises(xlac.ShapeError, match="topk.*k=6"):
        ops.top_k(x, 6)


# ----------------------------------------------------------------------------
# scatter
# ----------------------------------------------------------------------------

ADD_F32 = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
"""

ROWS = """HloModule scatter_rows
""" + ADD_F32 + """
ENTRY e {
  x = f32[5,3]{1,0} parameter(0)
  i = s32[4,1]{1,0} parameter(1)
  u = f32[4,3]{1,0} parameter(2)
  ROOT s = f32[5,3]{1,0} scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
"""


def test_scatter_rows_with_duplicate_and_out_of_bounds_indices():
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    u = np.arange(12, dtype=np.float32).reshape(4, 3) * 10
    idx = np.array([[1], [3], [1], [7]], np.int32)   # 1 twice; 7 is out of bounds: skipped
    got = check(ROWS, x, idx, u)
    want = x.copy()
    want[1] += u[0] + u[2]
    want[3] += u[1]
    np.testing.assert_array_equal(got, want)
    idx = np.array([[-1], [4], [2**31 - 1], [-2**31]], np.int32)
    got = check(ROWS, x, idx, u)
    want = x.copy()
    want[4] += u[1]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", ["maximum", "minimum"])
@pytest.mark.parametrize("ty, dt", [("f32", np.float32), ("f64", np.float64), ("f16", np.float16)])
def test_scatter_by_maximum_and_minimum_of_nans_and_signed_zeros(op, ty, dt):
    """The combiner's maximum/minimum as selects (``scalar_ops.scalar_loop``:
    no branch on the data): NaN wins, +0 is above -0, duplicates combine in
    order; the evaluator's values and bits of zeros."""
    text = f"""HloModule s
comb {{
  a = {ty}[] parameter(0)
  b = {ty}[] parameter(1)
  ROOT r = {ty}[] {op}(a, b)
}}
ENTRY e {{
  x = {ty}[64] parameter(0)
  i = s32[300,1] parameter(1)
  u = {ty}[300] parameter(2)
  ROOT s = {ty}[64] scatter(x, i, u), update_window_dims={{}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=comb
}}"""
    rng = np.random.default_rng(3)
    specials = np.array([np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0, -1.0], dt)
    x = rng.choice(specials, 64).astype(dt)
    u = np.where(rng.random(300) < 0.5, rng.choice(specials, 300), rng.standard_normal(300)).astype(dt)
    i = rng.integers(-2, 66, (300, 1)).astype(np.int32)
    exe = xlac.jit(text)
    got, want = exe(x, i, u), xlac.evaluate(text, x, i, u)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert f"llvm.{op}" not in exe.llvm_ir


def test_scatter_windows_partly_out_of_bounds_are_skipped_whole():
    """Windows of 2x2 at 2-D starts: a window that sticks out is skipped
    entirely (XLA's behaviour), not clamped or cut."""
    text = """HloModule scatter_windows
""" + ADD_F32.replace("f32", "s32") + """
ENTRY e {
  x = s32[4,4]{1,0} parameter(0)
  i = s32[2,3]{0,1} parameter(1)
  u = s32[3,2,2]{2,1,0} parameter(2)
  ROOT s = s32[4,4]{1,0} scatter(x, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={1,0}, index_vector_dim=0, to_apply=add
}
"""
    x = np.zeros((4, 4), np.int32)
    # index vectors are columns (index_vector_dim=0), mapped (col, row).
    idx = np.array([[0, 3, 2], [1, 0, -1]], np.int32)
    u = np.arange(1, 13, dtype=np.int32).reshape(3, 2, 2)
    got = check(text, x, idx, u)
    want = x.copy()
    want[1:3, 0:2] += u[0]   # start (row 1, col 0); the others stick out (col 3) or are negative
    np.testing.assert_array_equal(got, want)


def test_scatter_update_computation_order_and_replacement():
    """A non-commutative combiner gets (current, update); duplicates apply in
    index order, the last one winning for a "replace" combiner."""
    text = """HloModule scatter_replace
sub {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] subtract(a, b)
}
ENTRY e {
  x = f32[4]{0} parameter(0)
  i = s32[5]{0} parameter(1)
  u = f32[5]{0} parameter(2)
  ROOT s = f32[4]{0} scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sub
}
"""
    x = np.array([10, 20, 30, 40], np.float32)
    got = check(text, x, np.array([2, 0, 2, 5, 3], np.int32), np.array([1, 2, 3, 4, 5], np.float32))
    np.testing.assert_array_equal(got, [8, 20, 26, 35])
    replace = text.replace("ROOT r = f32[] subtract(a, b)", "ROOT r = f32[] add(b, b)")
    got = check(replace, x, np.array([2, 0, 2, 5, 3], np.int32), np.array([1, 2, 3, 4, 5], np.float32))
    np.testing.assert_array_equal(got, [4, 20, 6, 10])


def test_variadic_scatter_argmin_style():
    text = """HloModule scatter_variadic
comb {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  lt = pred[] compare(v1, v0), direction=LT
  v = f32[] select(lt, v1, v0)
  i = s32[] select(lt, i1, i0)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[3]{0} parameter(0)
  xi = s32[3]{0} parameter(1)
  idx = u8[6,1]{1,0} parameter(2)
  u = f32[6]{0} parameter(3)
  ui = s32[6]{0} parameter(4)
  ROOT s = (f32[3]{0}, s32[3]{0}) scatter(x, xi, idx, u, ui), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb
}
"""
    x = np.full(3, np.inf, np.float32)
    xi = np.full(3, -1, np.int32)
    idx = np.array([[0], [2], [0], [1], [200], [2]], np.uint8)
    u = np.array([5, 1, 3, 7, -100, 0.5], np.float32)
    ui = np.arange(6, dtype=np.int32)
    v, i = check(text, x, xi, idx, u, ui)
    np.testing.assert_array_equal(v, [3, 7, 0.5])
    np.testing.assert_array_equal(i, [2, 3, 5])


def test_scatter_with_batching_dims():
    """input_batching_dims / scatter_indices_batching_dims: each batch row
    scatters into its own row of the operand."""
    text = """HloModule scatter_batched
""" + ADD_F32 + """
ENTRY e {
  x = f32[2,5]{1,0} parameter(0)
  i = s32[3,2]{1,0} parameter(1)
  u = f32[3,2]{1,0} parameter(2)
  ROOT s = f32[2,5]{1,0} scatter(x, i, u), update_window_dims={}, inserted_window_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={1}, scatter_dims_to_operand_dims={1}, index_vector_dim=2, to_apply=add
}
"""
    x = np.zeros((2, 5), np.float32)
    idx = np.array([[0, 4], [0, 1], [9, 1]], np.int32)   # [k, batch]
    u = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    got = check(text, x, idx, u)
    want = np.zeros((2, 5), np.float32)
    want[0, 0] += 1 + 3
    want[1, 4] += 2
    want[1, 1] += 4 + 6
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("lx,lu", [("{1,0}", "{1,0}"), ("{0,1}", "{0,1}"), ("{0,1:P(8,4)}", "{1,0}")])
def test_scatter_layouts_against_the_evaluator(lx, lu):
    rng = np.random.default_rng(7)
    x = rand(np.float32, (5, 3), rng)
    u = rand(np.float32, (4, 3), rng)
    idx = rng.integers(-2, 7, size=(4, 1)).astype(np.int32)
    text = ROWS.replace("x = f32[5,3]{1,0}", f"x = f32[5,3]{lx}").replace("u = f32[4,3]{1,0}",
                                                                          f"u = f32[4,3]{lu}")
    check(text, x, idx, u)


GATHERED = """HloModule segment_sum
{add}
ENTRY e {{
  table = {t}[7,5]{lt} parameter(0)
  rows = s32[6]{{0}} parameter(1)
  scale = {t}[6]{{0}} parameter(2)
  segments = s32[6,1]{{1,0}} parameter(3)
  r = s32[6,1]{{1,0}} reshape(rows)
  g = {t}[{ud}]{lu} gather(table, r), offset_dims={{{od}}}, collapsed_slice_dims={{0}}, start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1,5}}
  b = {t}[{ud}]{lu} broadcast(scale), dimensions={{{bd}}}
  u = {t}[{ud}]{lu} multiply(g, b)
  z = {t}[] constant(0)
  base = {t}[4,5]{lo} broadcast(z), dimensions={{}}
  ROOT s = {t}[4,5]{lo} scatter(base, segments, u), update_window_dims={{{od}}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=add
}}
"""


@pytest.mark.parametrize("t", ["f32", "f64", "c64", "s32"])
@pytest.mark.parametrize("window_minor", [True, False])
@pytest.mark.parametrize("lt,lu,lo", [("{1,0}", "{1,0}", "{1,0}"), ("{0,1}", "{0,1}", "{0,1}"),
                                      ("{1,0}", "{0,1}", "{0,1:P(8,8)}")])
def test_scatter_of_gathered_products_fused_against_the_evaluator(t, window_minor, lt, lu, lo):
    """A segment sum of scaled rows (jax's ``segment_sum(x[i] * w, j)``, a sparse
    product): the gather and multiply are computed in the scatter's loop, the
    gathered row's number read once per update window; rows and segments out of
    range clamp (the gather) or are skipped (the scatter)."""
    ud, od, bd = ("6,5", "1", "0") if window_minor else ("5,6", "0", "1")
    text = GATHERED.format(add=ADD_F32.replace("f32", t), t=t, lt=lt, lu=lu, lo=lo, ud=ud, od=od, bd=bd)
    dt = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "s32": np.int32}[t]
    rng = np.random.default_rng(3)
    table = rand(dt, (7, 5), rng) if t != "s32" else rng.integers(-9, 9, (7, 5)).astype(dt)
    scale = rand(dt, (6,), rng) if t != "s32" else rng.integers(-9, 9, 6).astype(dt)
    rows = np.array([6, 0, 9, 3, -1, 3], np.int32)
    segments = np.array([[1], [3], [1], [4], [0], [-1]], np.int32)
    module = xlac.parse_hlo(text)
    fused = xlac.jit(module)
    assert any(i.opcode == "fusion" and i.attrs["calls"].root.opcode == "scatter" and
               {j.opcode for j in i.attrs["calls"].instructions} >= {"gather", "multiply"}
               for i in fused.lowered.hlo.entry.instructions)
    check(text, table, rows, scale, segments, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rows_dim", [0, 1])
@pytest.mark.parametrize("order", ["sorted", "random"])
def test_a_large_scatter_split_between_threads_is_the_serial_result(rows_dim, order):
    """Windows of 32 elements, 8192 of them (duplicates, out-of-bounds rows).
    Sorted by row, the tasks own the result's rows along the inserted dimension
    and each applies its windows in the updates' order, so f32 sums round
    exactly as the evaluator's serial loop does (in random order one thread
    runs them); with the rows minor in the layout too."""
    layout = "{1,0}" if rows_dim == 0 else "{0,1}"
    x_dims, u_dims = ((300, 32), (8192, 32)) if rows_dim == 0 else ((32, 300), (32, 8192))
    text = f"""HloModule big_scatter
{ADD_F32}
ENTRY e {{
  x = f32[{x_dims[0]},{x_dims[1]}]{layout} parameter(0)
  i = s32[8192,1]{{1,0}} parameter(1)
  u = f32[{u_dims[0]},{u_dims[1]}]{{1,0}} parameter(2)
  ROOT s = f32[{x_dims[0]},{x_dims[1]}]{layout} scatter(x, i, u), update_window_dims={{{1 - rows_dim}}}, inserted_window_dims={{{rows_dim}}}, scatter_dims_to_operand_dims={{{rows_dim}}}, index_vector_dim=1, to_apply=add
}}
"""
    rng = np.random.default_rng(11)
    x = rng.standard_normal(x_dims).astype(np.float32)
    u = (rng.standard_normal(u_dims) * 1e4).astype(np.float32)
    idx = rng.integers(-5, 310, (8192, 1)).astype(np.int32)
    if order == "sorted":
        idx = np.sort(idx, axis=0)
    got = xlac.jit(text)(x, idx, u)
    np.testing.assert_array_equal(got, xlac.evaluate(text, x, idx, u))


def test_scatter_in_a_while_loop_accumulates():
    """A histogram built one scatter per iteration (in-place friendly shape)."""
    text = """HloModule hist
""" + ADD_F32 + """
cond {
  s = (s32[], f32[4]{0}, s32[6,1]{1,0}) parameter(0)
  k = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(k, n), direction=LT
}
body {
  s = (s32[], f32[4]{0}, s32[6,1]{1,0}) parameter(0)
  k = s32[] get-tuple-element(s), index=0
  h = f32[4]{0} get-tuple-element(s), index=1
  i = s32[6,1]{1,0} get-tuple-element(s), index=2
  one = f32[] constant(1)
  u = f32[6]{0} broadcast(one), dimensions={}
  h1 = f32[4]{0} scatter(h, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  c1 = s32[] constant(1)
  k1 = s32[] add(k, c1)
  ROOT t = (s32[], f32[4]{0}, s32[6,1]{1,0}) tuple(k1, h1, i)
}
ENTRY e {
  i = s32[6,1]{1,0} parameter(0)
  z = f32[] constant(0)
  h = f32[4]{0} broadcast(z), dimensions={}
  zero = s32[] constant(0)
  init = (s32[], f32[4]{0}, s32[6,1]{1,0}) tuple(zero, h, i)
  w = (s32[], f32[4]{0}, s32[6,1]{1,0}) while(init), condition=cond, body=body
  ROOT r = f32[4]{0} get-tuple-element(w), index=1
}
"""
    got = check(text, np.array([[0], [1], [1], [3], [9], [3]], np.int32))
    np.testing.assert_array_equal(got, [3, 6, 0, 6])


def test_scatter_built_with_the_builder():
    add = xlac.XlaBuilder("add")
    add_comp = add.build(ops.add(ops.parameter(add, 0, "f32[]"), ops.parameter(add, 1, "f32[]")))
    b = xlac.XlaBuilder("sc")
    x = ops.parameter(b, 0, "f32[6]")
    i = ops.parameter(b, 1, "s32[3,1]")
    u = ops.parameter(b, 2, "f32[3]")
    comp = b.build(ops.scatter(x, i, u, add_comp, index_vector_dim=1, update_window_dims=(),
                               inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)))
    args = (np.zeros(6, np.float32), np.array([[5], [5], [0]], np.int32), np.array([1, 2, 4], np.float32))
    np.testing.assert_array_equal(xlac.jit(comp)(*args), [4, 0, 0, 0, 0, 3])
    np.testing.assert_array_equal(xlac.evaluate(comp, *args), [4, 0, 0, 0, 0, 3])
    with pytest.raises(xlac.ShapeError, match="scatter.*rank"):
        ops.scatter(x, i, u, add_comp, index_vector_dim=1, update_window_dims=(0,),
                    inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))


# ----------------------------------------------------------------------------
# property tests: random shapes, layouts, indices (JIT vs evaluator)
# ----------------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

PROPS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def _shape_and_layout(draw, max_rank=3):
    rank = draw(st.integers(1, max_rank))
    dims = draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))
    perm = draw(st.permutations(range(rank)))
    return dims, perm


def _s(ty, dims, perm):
    return f"{ty}[{','.join(map(str, dims))}]{{{','.join(map(str, perm))}}}"


@PROPS
@given(_shape_and_layout(), st.data())
def test_property_dynamic_slice_and_update(shape, data):
    dims, perm = shape
    sizes = [data.draw(st.integers(0, d)) for d in dims]
    starts = [data.draw(st.integers(-6, 8)) for _ in dims]
    rank = len(dims)
    idx = "\n".join(f"  i{k} = s32[] parameter({k + 1})" for k in range(rank))
    names = ", ".join(f"i{k}" for k in range(rank))
    text = f"""HloModule prop
ENTRY e {{
  x = {_s('f32', dims, perm)} parameter(0)
{idx}
  d = {_s('f32', sizes, list(range(rank - 1, -1, -1)))} dynamic-slice(x, {names}), dynamic_slice_sizes={{{','.join(map(str, sizes))}}}
  n = {_s('f32', sizes, perm)} negate(d)
  u = {_s('f32', dims, list(range(rank - 1, -1, -1)))} dynamic-update-slice(x, n, {names})
  ROOT t = ({_s('f32', sizes, perm)}, {_s('f32', dims, list(range(rank - 1, -1, -1)))}) tuple(n, u)
}}
"""
    rng = np.random.default_rng(len(dims))
    check(text, rand(np.float32, dims, rng), *[np.int32(s) for s in starts])


@PROPS
@given(st.integers(1, 6), st.integers(1, 4), st.integers(0, 7), st.sampled_from(["{1,0}", "{0,1}"]),
       st.sampled_from(["add", "maximum", "multiply"]))
def test_property_scatter_rows(rows, cols, n, layout, combiner):
    text = f"""HloModule prop_scatter
comb {{
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[] {combiner}(a, b)
}}
ENTRY e {{
  x = s32[{rows},{cols}]{layout} parameter(0)
  i = s32[{n},1]{{1,0}} parameter(1)
  u = s32[{n},{cols}]{layout} parameter(2)
  ROOT s = s32[{rows},{cols}]{layout} scatter(x, i, u), update_window_dims={{1}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=comb
}}
"""
    rng = np.random.default_rng(rows * 10 + n)
    check(text, rand(np.int32, (rows, cols), rng), rng.integers(-2, rows + 2, size=(n, 1)).astype(np.int32),
          rand(np.int32, (n, cols), rng))


@pytest.mark.parametrize("sizes", ["2,1", "1,2", "2,2"])
def test_dynamic_slice_of_a_broadcast_is_not_hoisted_above_its_start(sizes):
    # Found by the differential fuzzer: the start was added to the loop index
    # inside the loop, yet the broadcast hoisted its operand read in front of
    # that loop ("Instruction does not dominate all uses!").
    text = f"""HloModule m
ENTRY e {{
  p1 = f32[2] parameter(0)
  b = f32[2,2] broadcast(p1), dimensions={{1}}
  p2 = s32[] parameter(1)
  ROOT ds = f32[{sizes}] dynamic-slice(b, p2, p2), dynamic_slice_sizes={{{sizes}}}
}}"""
    x = np.array([1, 2], np.float32)
    for start in (0, 1, 5, -3):
        want = xlac.evaluate(text, x, np.int32(start))
        for optimize in (True, False):
            np.testing.assert_array_equal(xlac.jit(text, optimize=optimize)(x, np.int32(start)), want)
