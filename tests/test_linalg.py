"""cholesky and triangular-solve end to end (spec: Cholesky, TriangularSolve):
builders, shape rules and their errors, the evaluator against numpy and
XLA's own test values, compiled code (the unblocked kernels, and the blocked
kernels of f32/f64 matrices bigger than cholesky_blocked.BLOCK /
triangular_solve_blocked.MIN_SIZE) against
the evaluator for every element type, batch shape and flag, NaNs for
matrices that are not positive definite, text round trips, an AOT object."""
import itertools

import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.codegen import linalg_functions
from xlac.codegen.compiler import KERNELS, lower
from xlac.codegen.kernels import cholesky_blocked, triangular_solve_blocked
from xlac.codegen.kernels.cholesky_blocked import BLOCK as CHOLESKY_BLOCK
from xlac.codegen.kernels.triangular_solve_blocked import MIN_SIZE as BLOCK
from xlac.shape import F32, F64

from test_aot import _assert_same_bits, build_and_run, needs_cc
from test_aot import runtime_obj  # noqa: F401 (a fixture)

DTYPES = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}
TRANSPOSES = ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")
#: Relative tolerance of compiled code against the evaluator (computed in f64/c128).
TOL = {"f32": 2e-5, "c64": 2e-5, "f64": 1e-12, "c128": 1e-12}


def shape(dtype: str, dims) -> xlac.Shape:
    return xlac.shape(f"{dtype}[{','.join(str(d) for d in dims)}]")


def cholesky_comp(dtype, dims, lower):
    b = xlac.XlaBuilder("chol")
    return b.build(ops.cholesky(ops.parameter(b, 0, shape(dtype, dims), "a"), lower))


def solve_comp(dtype, a_dims, b_dims, left, lower, unit, transpose):
    b = xlac.XlaBuilder("trsm")
    a = ops.parameter(b, 0, shape(dtype, a_dims), "a")
    x = ops.parameter(b, 1, shape(dtype, b_dims), "b")
    return b.build(ops.triangular_solve(a, x, left, lower, unit, transpose))


def random(rng, dims, dtype):
    x = rng.standard_normal(dims)
    if dtype.startswith("c"):
        x = x + 1j * rng.standard_normal(dims)
    return x


def hermitian_pd(rng, dims, dtype):
    m = random(rng, dims, dtype)
    n = dims[-1]
    return (m @ np.conj(np.swapaxes(m, -1, -2)) / n + np.eye(n)).astype(DTYPES[dtype])


def triangular(rng, dims, dtype, lower, unit):
    """A well-conditioned triangular a; NaN where the solve must not read."""
    n = dims[-1]
    a = random(rng, dims, dtype) / np.sqrt(n) + 2 * np.eye(n)
    rows, cols = np.indices((n, n))
    a = np.where(rows < cols if lower else rows > cols, np.nan, a)
    if unit:
        a = np.where(rows == cols, np.nan, a)
    return a.astype(DTYPES[dtype])


def close(got, want, dtype):
    scale = max(1.0, float(np.nanmax(np.abs(want))) if want.size else 1.0)
    assert got.dtype == want.dtype and got.shape == want.shape
    err = np.abs(got.astype(np.complex128) - want.astype(np.complex128))
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.nanmax(err, initial=0.0) <= TOL[dtype] * scale, np.nanmax(err)


def op_a(a, lower, unit, transpose):
    """op(a) from its triangle, as numpy sees it."""
    n = a.shape[-1]
    rows, cols = np.indices((n, n))
    t = np.where(rows >= cols if lower else rows <= cols, a, 0)
    if unit:
        t = np.where(rows == cols, 1, t)
    if transpose != "NO_TRANSPOSE":
        t = np.swapaxes(t, -1, -2)
    return np.conj(t) if transpose == "ADJOINT" else t


# ---------------------------------------------------------------------------
# evaluator
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("lower", [True, False])
def test_evaluator_cholesky_matches_numpy(dtype, lower):
    rng = np.random.default_rng(1)
    a = hermitian_pd(rng, (2, 3, 6, 6), dtype)
    want = np.linalg.cholesky(a.astype(np.complex128 if dtype.startswith("c") else np.float64))
    if not lower:
        want = np.conj(np.swapaxes(want, -1, -2))
    n = a.shape[-1]
    rows, cols = np.indices((n, n))
    junk = np.where(rows < cols if lower else rows > cols, np.nan, a).astype(a.dtype)   # never read
    got = xlac.evaluate(cholesky_comp(dtype, a.shape, lower), junk)
    close(got, want.astype(a.dtype), dtype)
    assert not np.any(np.where(rows < cols if lower else rows > cols, got, 0)), "other triangle is zeros"


def test_evaluator_cholesky_spec_example():
    # xla_client_test's Cholesky: l = [[4,0,0,0],[6,5,0,0],[2,14,16,0],[3,6,1,4]].
    l_ = np.array([[4, 0, 0, 0], [6, 5, 0, 0], [2, 14, 16, 0], [3, 6, 1, 4]], np.float32)
    np.testing.assert_allclose(xlac.evaluate(cholesky_comp("f32", (4, 4), True), np.tril(l_ @ l_.T)), l_,
                               rtol=1e-6)


@pytest.mark.parametrize("left, lower, unit, transpose",
                         list(itertools.product([True, False], [True, False], [False, True], TRANSPOSES)))
def test_evaluator_triangular_solve_solves(left, lower, unit, transpose):
    rng = np.random.default_rng(2)
    a = triangular(rng, (2, 5, 5), "c128", lower, unit)
    b = random(rng, (2, 5, 3) if left else (2, 3, 5), "c128")
    x = xlac.evaluate(solve_comp("c128", a.shape, b.shape, left, lower, unit, transpose), a, b)
    t = op_a(a, lower, unit, transpose)
    np.testing.assert_allclose(t @ x if left else x @ t, b, atol=1e-12)


# XLA's triangular_solve_test.cc: the unread triangle (and a unit diagonal) is NaN.
NAN = np.nan
A_LOWER = np.array([[2, NAN, NAN, NAN], [3, 6, NAN, NAN], [4, 7, 9, NAN], [5, 8, 10, 11]], np.float32)
A_UPPER = np.array([[2, 3, 4, 5], [NAN, 6, 7, 8], [NAN, NAN, 9, 10], [NAN, NAN, NAN, 11]], np.float32)
A_UPPER_UNIT = np.array([[NAN, 3, 4, 5], [NAN, NAN, 7, 8], [NAN, NAN, NAN, 10], [NAN, NAN, NAN, NAN]],
                        np.float32)
B_LEFT = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]], np.float32)
B_RIGHT = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], np.float32)
XLA_CASES = [
    (A_LOWER, B_RIGHT, False, True, False, "TRANSPOSE",
     [[0.5, 0.08333334, 0.04629629, 0.03367003], [2.5, -0.25, -0.1388889, -0.1010101],
      [4.5, -0.58333331, -0.32407406, -0.23569024]]),
    (A_LOWER, B_RIGHT, False, True, False, "NO_TRANSPOSE",
     [[-0.16414141, -0.06902357, -0.07070707, 0.36363636], [0.64393939, 0.06565657, -0.03030303, 0.72727273],
      [1.4520202, 0.2003367, 0.01010101, 1.09090909]]),
    (A_LOWER, B_LEFT, True, True, False, "NO_TRANSPOSE",
     [[0.5, 1.0, 1.5], [0.41666667, 0.33333333, 0.25], [0.23148148, 0.18518519, 0.13888889],
      [0.16835017, 0.13468013, 0.1010101]]),
    (A_UPPER, B_LEFT, True, False, False, "NO_TRANSPOSE",
     [[-0.89646465, -0.69444444, -0.49242424], [-0.27441077, -0.24074074, -0.20707071],
      [-0.23232323, -0.22222222, -0.21212121], [0.90909091, 1., 1.09090909]]),
    (A_UPPER_UNIT, B_LEFT, True, False, True, "NO_TRANSPOSE",
     [[-1402., -1538., -1674.], [575., 631., 687.], [-93., -102., -111.], [10., 11., 12.]]),
]


@pytest.mark.parametrize("a, b, left, lower, unit, transpose, want", XLA_CASES)
def test_xla_triangular_solve_examples(a, b, left, lower, unit, transpose, want):
    comp = solve_comp("f32", a.shape, b.shape, left, lower, unit, transpose)
    for got in (xlac.evaluate(comp, a, b), xlac.jit(comp)(a, b)):
        np.testing.assert_allclose(got, np.array(want, np.float32), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# compiled code against the evaluator
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("dims", [(1, 1), (5, 5), (3, 17, 17), (2, 2, 9, 9)])
@pytest.mark.parametrize("lower", [True, False])
def test_compiled_cholesky(dtype, dims, lower):
    rng = np.random.default_rng(len(dims) + dims[-1])
    a = hermitian_pd(rng, dims, dtype)
    comp = cholesky_comp(dtype, dims, lower)
    close(xlac.jit(comp)(a), xlac.evaluate(comp, a), dtype)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("left, lower, unit, transpose",
                         list(itertools.product([True, False], [True, False], [False, True], TRANSPOSES)))
def test_compiled_triangular_solve(dtype, left, lower, unit, transpose):
    rng = np.random.default_rng(7)
    batch, m, k = (2, 3), 7, 5
    a = triangular(rng, batch + (m, m), dtype, lower, unit)
    b = random(rng, batch + ((m, k) if left else (k, m)), dtype).astype(DTYPES[dtype])
    comp = solve_comp(dtype, a.shape, b.shape, left, lower, unit, transpose)
    close(xlac.jit(comp)(a, b), xlac.evaluate(comp, a, b), dtype)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("lower", [True, False])
def test_blocked_cholesky(dtype, lower):
    n = 2 * CHOLESKY_BLOCK + 37              # three blocks, the last a partial one
    rng = np.random.default_rng(11)
    a = hermitian_pd(rng, (2, n, n), dtype)
    comp = cholesky_comp(dtype, a.shape, lower)
    assert chosen_kernels(comp) == ["cholesky.blocked"]
    close(xlac.jit(comp)(a), xlac.evaluate(comp, a), dtype)


def chosen_kernels(comp, opcode: str = "cholesky") -> list:
    """The kernel candidates chosen for the ``opcode`` ops after the pipeline."""
    module = lower(comp.module).hlo
    return [KERNELS.choose(i).candidate.name for c in module.computations for i in c.instructions
            if i.opcode == opcode]


def test_blocked_cholesky_row_blocks():
    """Blocks of BLOCK rows, the rest last; a one-row rest joins the block
    before it (its panel update would be a matrix-vector product); a matrix
    of more than MAX_BLOCKS blocks takes blocks of a multiple of BLOCK."""
    k = cholesky_blocked.block_rows(F32)
    assert cholesky_blocked.row_blocks(2 * k + 37, F32) == [(0, k), (k, k), (2 * k, 37)]
    assert cholesky_blocked.row_blocks(2 * k + 1, F32) == [(0, k), (k, k + 1)]
    big = cholesky_blocked.row_blocks(k * cholesky_blocked.MAX_BLOCKS + 5, F32)
    assert len(big) <= cholesky_blocked.MAX_BLOCKS and big[0] == (0, 2 * k)
    assert sum(r for _, r in big) == k * cholesky_blocked.MAX_BLOCKS + 5
    # Blocks are BLOCK_BYTES of a row: 64 f32 rows, 32 f64 ones.
    assert cholesky_blocked.row_blocks(200, F32)[0] == (0, 64)
    assert cholesky_blocked.row_blocks(100, F64) == [(0, 32), (32, 32), (64, 32), (96, 4)]


@pytest.mark.parametrize("lower", [True, False])
def test_blocked_cholesky_edges(monkeypatch, lower):
    """A one-row rest (n = 2 BLOCK + 1; n = BLOCK + 1 is a single block), and
    blocks of twice BLOCK (MAX_BLOCKS lowered to 2): the GEMM's, the solve's
    and the copies' edges, batched, on one thread and on two (small
    matrices too: ONE_THREAD_ROW_BYTES lowered)."""
    rng = np.random.default_rng(31)
    monkeypatch.setattr(cholesky_blocked, "ONE_THREAD_ROW_BYTES", 0)
    for dtype, n, max_blocks in (("f64", 2 * CHOLESKY_BLOCK + 1, 32), ("f32", 2 * CHOLESKY_BLOCK + 45, 2),
                                 ("f32", CHOLESKY_BLOCK + 1, 32)):
        monkeypatch.setattr(cholesky_blocked, "MAX_BLOCKS", max_blocks)
        xlac.clear_caches()
        a = hermitian_pd(rng, (2, n, n), dtype)
        comp = cholesky_comp(dtype, a.shape, lower)
        for threads in (1, 2):       # the loop and the parallel steps
            close(xlac.jit(comp, num_threads=threads)(a), xlac.evaluate(comp, a), dtype)
    xlac.clear_caches()


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_blocked_kernels_thread_counts(monkeypatch, threads):
    """The blocked kernels with each thread count they plan for: cholesky's
    tasks of a step (one per thread; more tasks than this machine's threads
    take their turns, and none waits for a task not started) and the
    solve's column splits; f32 and f64, lower and upper, batched, sizes not
    a multiple of the blocks, a matrix that is not positive definite."""
    from xlac.codegen import task_grid
    rng = np.random.default_rng(41 + threads)
    cases = []
    for dtype, n, lower in (("f32", 4 * CHOLESKY_BLOCK + 5, True), ("f64", 4 * CHOLESKY_BLOCK + 1, False)):
        a = hermitian_pd(rng, (3, n, n), dtype)
        a[1, n - 3, n - 3] = -5
        comp = cholesky_comp(dtype, a.shape, lower)
        cases.append((dtype, a, comp, xlac.jit(comp, num_threads=1)(a)))
    if threads > 2:        # this call's thread count as the kernels read it
        for mod in (cholesky_blocked, triangular_solve_blocked):
            monkeypatch.setattr(mod, "thread_count", lambda b, opts, n=threads: task_grid.i64(n))
    xlac.clear_caches()
    for dtype, a, comp, one_thread in cases:
        assert chosen_kernels(comp) == ["cholesky.blocked"]
        got, want = xlac.jit(comp, num_threads=min(threads, 2))(a), xlac.evaluate(comp, a)
        close(got, want, dtype)
        assert np.all(np.isnan(got[1])) and np.all(np.isfinite(got[[0, 2]]))
        np.testing.assert_array_equal(got, one_thread)       # the same bits for any number of tasks
    for dtype, left, lower, transpose, nr in (("f32", True, True, "NO_TRANSPOSE", 150),
                                              ("f64", False, False, "TRANSPOSE", 77),
                                              ("f64", True, False, "ADJOINT", 300)):
        m = BLOCK + 45
        a = triangular(rng, (2, m, m), dtype, lower, False)
        b = random(rng, (2, m, nr) if left else (2, nr, m), dtype).astype(DTYPES[dtype])
        comp = solve_comp(dtype, a.shape, b.shape, left, lower, False, transpose)
        assert chosen_kernels(comp, "triangular-solve") == ["triangular-solve.blocked"]
        close(xlac.jit(comp, num_threads=min(threads, 2))(a, b), xlac.evaluate(comp, a, b), dtype)
    xlac.clear_caches()


def test_triangular_solve_column_chunks():
    """One chunk per thread, of whole vectors and at least TASK_COLUMNS
    columns; the last one the rest, never a single column."""
    chunks = triangular_solve_blocked.column_chunks
    assert chunks(512, 1) == (512, 1) and chunks(512, 2) == (256, 2) and chunks(512, 8) == (64, 8)
    assert chunks(150, 4) == (48, 4) and chunks(40, 8) == (32, 2) and chunks(20, 2) == (20, 1)
    assert chunks(33, 2) == (33, 1) and chunks(97, 3) == (48, 2)      # a one-column rest joins the chunk before


def test_linalg_library_names_parse():
    """Every routine's library symbol names its unit (an object file that calls
    it gets the unit loaded before it is linked), and nothing else does."""
    from xlac.codegen import gemm_library
    for pt in (xlac.F32, xlac.C128):
        for routine in linalg_functions.ROUTINES:
            if routine in linalg_functions.REAL_ONLY and pt is xlac.C128:
                continue
            v = linalg_functions.LinalgVariant(pt, routine)
            assert gemm_library._parse_name(gemm_library.symbol(v, "call").encode()) == (gemm_library.name_hash(v), v)
    assert gemm_library._parse_name(b"xlac_gemm_0123456789abcdef_f32_linalg_nope_call") is None
    assert gemm_library._parse_name(b"xlac_gemm_0123456789abcdef_c64_linalg_subtract_tile_call") is None


# The kernels' real paths go BLOCK_ROWS (4) rows at a time with a register
# block of two 64-byte vectors of columns, the rest row by row / column by
# column; sizes on both sides of those edges, and of the expansion's BLOCK.
# (test_compiled_* has the small sizes and the complex types.)
@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("lower", [True, False])
def test_kernel_cholesky_sizes(dtype, lower):
    rng = np.random.default_rng(17)
    for n in (38, 129):
        a = hermitian_pd(rng, (2, n, n), dtype)
        comp = cholesky_comp(dtype, a.shape, lower)
        close(xlac.jit(comp)(a), xlac.evaluate(comp, a), dtype)


@pytest.mark.parametrize("dtype", ["f32", "f64", "c64"])
@pytest.mark.parametrize("left, lower, transpose", [(True, True, "NO_TRANSPOSE"), (True, False, "TRANSPOSE"),
                                                    (False, True, "ADJOINT"), (False, False, "NO_TRANSPOSE")])
def test_kernel_triangular_solve_sizes(dtype, left, lower, transpose):
    """Right-hand sides of 1 to 41 columns: no whole vector block, one, and
    one plus a remainder (f32: 32 columns a block, f64 16)."""
    rng = np.random.default_rng(19)
    for m, k in [(5, 1), (9, 33), (66, 41), (129, 17)]:
        unit = m % 2 == 0
        a = triangular(rng, (2, m, m), dtype, lower, unit)
        b = random(rng, (2, m, k) if left else (2, k, m), dtype).astype(DTYPES[dtype])
        comp = solve_comp(dtype, a.shape, b.shape, left, lower, unit, transpose)
        close(xlac.jit(comp)(a, b), xlac.evaluate(comp, a, b), dtype)


def test_blocked_cholesky_300():
    """f32 and f64 of a size that is not a multiple of anything: the kernels'
    edges and the expansion's together, batched."""
    rng = np.random.default_rng(23)
    for dtype in ("f32", "f64"):
        a = hermitian_pd(rng, (2, 300, 300), dtype)
        comp = cholesky_comp(dtype, a.shape, True)
        close(xlac.jit(comp)(a), xlac.evaluate(comp, a), dtype)


@pytest.mark.parametrize("lower", ["true", "false"])
def test_blocked_cholesky_layouts(lower):
    """Both blocked forms (lower by block columns, upper by block rows) with
    column-major operand and result layouts."""
    rng = np.random.default_rng(29)
    for t in ("f32", "f64"):
        text = f"""HloModule m
ENTRY e {{
  a = {t}[3,100,100]{{1,2,0}} parameter(0)
  ROOT c = {t}[3,100,100]{{0,1,2}} cholesky(a), lower={lower}
}}"""
        a = hermitian_pd(rng, (3, 100, 100), t)
        close(xlac.jit(text)(a), xlac.evaluate(text, a), t)


def lower_ops(comp) -> list:
    """The opcodes left after the code-generation pipeline (fusions opened up)."""
    module = lower(comp.module).hlo
    out = []
    for c in module.computations:
        out += [i.opcode for i in c.instructions]
    return out


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("left, lower, transpose",
                         list(itertools.product([True, False], [True, False], TRANSPOSES)))
def test_blocked_triangular_solve(dtype, left, lower, transpose):
    m, k = BLOCK + 70, 33
    rng = np.random.default_rng(13)
    unit = transpose == "TRANSPOSE"
    a = triangular(rng, (m, m), dtype, lower, unit)
    b = random(rng, (m, k) if left else (k, m), dtype).astype(DTYPES[dtype])
    comp = solve_comp(dtype, a.shape, b.shape, left, lower, unit, transpose)
    assert chosen_kernels(comp, "triangular-solve") == ["triangular-solve.blocked"]
    close(xlac.jit(comp)(a, b), xlac.evaluate(comp, a, b), dtype)


def test_blocked_triangular_solve_edges():
    """Batched, a one-row rest joining the block before it (m = BLOCK + 1 for
    the blocked kernel's row blocks), layouts of b and x that are not
    row-major, and one right-hand side (the unblocked kernel)."""
    rng = np.random.default_rng(37)
    k = triangular_solve_blocked.BLOCK
    assert triangular_solve_blocked.row_blocks(2 * k + 1) == [(0, k), (k, k + 1)]
    for m, nr, left, lower, transpose in ((2 * k + 1, 9, True, False, "NO_TRANSPOSE"),
                                          (k + 3, 2, False, True, "TRANSPOSE")):
        a = triangular(rng, (2, m, m), "f64", lower, False)
        b = random(rng, (2, m, nr) if left else (2, nr, m), "f64").astype(np.float64)
        comp = solve_comp("f64", a.shape, b.shape, left, lower, False, transpose)
        assert chosen_kernels(comp, "triangular-solve") == ["triangular-solve.blocked"]
        close(xlac.jit(comp)(a, b), xlac.evaluate(comp, a, b), "f64")
    text = """HloModule m
ENTRY e {
  a = f32[2,150,150]{0,1,2} parameter(0)
  b = f32[2,150,20]{1,2,0} parameter(1)
  ROOT x = f32[2,150,20]{2,0,1} triangular-solve(a, b), left_side=true, lower=true, transpose_a=TRANSPOSE
}"""
    args = [triangular(rng, (2, 150, 150), "f32", True, False), rng.standard_normal((2, 150, 20)).astype(np.float32)]
    close(xlac.jit(text)(*args), xlac.evaluate(text, *args), "f32")
    one = solve_comp("f32", (k + 10, k + 10), (k + 10, 1), True, True, False, "NO_TRANSPOSE")
    assert chosen_kernels(one, "triangular-solve") == ["triangular-solve"]


def test_complex_and_small_problems_are_not_expanded():
    assert lower_ops(cholesky_comp("c64", (BLOCK + 10, BLOCK + 10), True)).count("cholesky") == 1
    assert chosen_kernels(cholesky_comp("c64", (BLOCK + 10, BLOCK + 10), True)) == ["cholesky"]
    assert chosen_kernels(cholesky_comp("f32", (CHOLESKY_BLOCK, CHOLESKY_BLOCK), True)) == ["cholesky"]


@pytest.mark.parametrize("op", ["cholesky", "triangular-solve"])
def test_layouts_and_zero_sizes(op):
    rng = np.random.default_rng(5)
    if op == "cholesky":
        text = """HloModule m
ENTRY e {
  a = f64[3,6,6]{1,2,0} parameter(0)
  ROOT c = f64[3,6,6]{0,1,2} cholesky(a), lower=true
}"""
        args = [hermitian_pd(rng, (3, 6, 6), "f64")]
    else:
        text = """HloModule m
ENTRY e {
  a = f32[2,5,5]{1,2,0} parameter(0)
  b = f32[2,4,5]{1,2,0} parameter(1)
  ROOT x = f32[2,4,5]{2,0,1} triangular-solve(a, b), lower=true, transpose_a=ADJOINT
}"""
        args = [triangular(rng, (2, 5, 5), "f32", True, False), rng.standard_normal((2, 4, 5)).astype(np.float32)]
    got, want = xlac.jit(text)(*args), xlac.evaluate(text, *args)
    close(got, want, "f64" if op == "cholesky" else "f32")
    empty = solve_comp("f32", (0, 0), (0, 10), True, True, False, "TRANSPOSE")
    assert xlac.jit(empty)(np.zeros((0, 0), np.float32), np.zeros((0, 10), np.float32)).shape == (0, 10)
    assert xlac.jit(cholesky_comp("c64", (4, 0, 0), True))(np.zeros((4, 0, 0), np.complex64)).shape == (4, 0, 0)


# ---------------------------------------------------------------------------
# not positive definite: NaNs, per matrix of the batch
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, n", [("f32", 6), ("c128", 6), ("f64", BLOCK + 40), ("f32", 2 * BLOCK + 3)])
@pytest.mark.parametrize("lower", [True, False])
def test_not_positive_definite_gives_nans(dtype, n, lower):
    rng = np.random.default_rng(3)
    a = hermitian_pd(rng, (3, n, n), dtype)
    a[1, n - 2, n - 2] = -5          # matrix 1 fails at its second-last pivot
    a[2, 0, 0] = np.nan              # matrix 2 has a NaN pivot
    comp = cholesky_comp(dtype, a.shape, lower)
    for got in (xlac.jit(comp)(a), xlac.evaluate(comp, a)):
        assert np.all(np.isfinite(got[0]))
        assert np.all(np.isnan(got[1])) and np.all(np.isnan(got[2]))


def test_singular_triangular_solve_gives_infinities_not_errors():
    comp = solve_comp("f64", (2, 2), (2, 1), True, True, False, "NO_TRANSPOSE")
    a = np.array([[0.0, 0.0], [1.0, 1.0]])
    b = np.array([[1.0], [1.0]])
    for got in (xlac.jit(comp)(a, b), xlac.evaluate(comp, a, b)):
        assert np.isinf(got[0, 0]) and not np.isfinite(got[1, 0])


# ---------------------------------------------------------------------------
# shape errors, builder arguments, text
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("make, message", [
    (lambda p: ops.cholesky(p("f32[3,4]")), "cholesky: a must be a batch of square matrices"),
    (lambda p: ops.cholesky(p("f32[4]")), "cholesky: a must have rank >= 2"),
    (lambda p: ops.cholesky(p("s32[4,4]")), "cholesky: a must have element type f32, f64, c64 or c128"),
    (lambda p: ops.cholesky(p("bf16[4,4]")), "got bf16"),
    (lambda p: ops.triangular_solve(p("f32[4,5]"), p("f32[4,3]"), True, True, False, "NO_TRANSPOSE"),
     "triangular-solve: a must be a batch of square matrices"),
    (lambda p: ops.triangular_solve(p("f32[2,4,4]"), p("f32[3,4,3]"), True, True, False, "NO_TRANSPOSE"),
     "a and b must have equal batch dimensions, got [2] and [3]"),
    (lambda p: ops.triangular_solve(p("f32[4,4]"), p("f32[3,3]"), True, True, False, "NO_TRANSPOSE"),
     "b must have 4 rows to match a's 4x4 matrices (left_side=true"),
    (lambda p: ops.triangular_solve(p("f32[4,4]"), p("f32[4,3]"), False, True, False, "NO_TRANSPOSE"),
     "b must have 4 columns to match a's 4x4 matrices (left_side=false"),
    (lambda p: ops.triangular_solve(p("f32[4,4]"), p("f64[4,3]"), True, True, False, "NO_TRANSPOSE"),
     "a and b must have the same element type"),
    (lambda p: ops.triangular_solve(p("f32[4,4]"), p("f32[1,4,3]"), True, True, False, "NO_TRANSPOSE"),
     "a and b must have the same rank"),
    (lambda p: ops.triangular_solve(p("s8[4,4]"), p("s8[4,3]"), True, True, False, "NO_TRANSPOSE"),
     "element type f32, f64, c64 or c128"),
])
def test_shape_errors_name_the_op_shapes_and_rule(make, message):
    b = xlac.XlaBuilder("bad")
    count = iter(range(10))

    def param(s):
        return ops.parameter(b, next(count), xlac.shape(s), "p")
    with pytest.raises(xlac.ShapeError) as info:
        make(param)
    assert message in str(info.value) and "operand shapes:" in str(info.value)


def test_builder_argument_errors():
    b = xlac.XlaBuilder("bad")
    a = ops.parameter(b, 0, xlac.shape("f32[4,4]"), "a")
    x = ops.parameter(b, 1, xlac.shape("f32[4,2]"), "x")
    with pytest.raises(TypeError, match="cholesky: lower must be a bool"):
        ops.cholesky(a, "yes")
    with pytest.raises(TypeError, match="transpose_a must be 'NO_TRANSPOSE', 'TRANSPOSE' or 'ADJOINT'"):
        ops.triangular_solve(a, x, True, True, False, "CONJUGATE")
    with pytest.raises(TypeError, match="triangular_solve: left_side must be a bool"):
        ops.triangular_solve(a, x, 1, True, False, "TRANSPOSE")
    assert "transpose_a=ADJOINT" in b.build(ops.triangular_solve(a, x, True, True, False, "adjoint")).as_hlo_text()


XLA_TEXT = """HloModule TriangularSolve_module, entry_computation_layout={(f32[4,4]{1,0}, f32[3,4]{1,0})->f32[3,4]{1,0}}

ENTRY %SimpleRightLowerNotranspose.4 (a.1: f32[4,4], b.2: f32[3,4]) -> f32[3,4] {
  %a.1 = f32[4,4]{1,0} parameter(0)
  %b.2 = f32[3,4]{1,0} parameter(1)
  ROOT %triangular-solve.3 = f32[3,4]{1,0} triangular-solve(f32[4,4]{1,0} %a.1, f32[3,4]{1,0} %b.2), \
lower=true, transpose_a=NO_TRANSPOSE
}
"""


def test_text_as_xla_prints_it():
    # XLA prints only the true flags; absent ones are false.
    got = xlac.jit(XLA_TEXT)(A_LOWER, B_RIGHT)
    np.testing.assert_allclose(got, np.array(XLA_CASES[1][-1], np.float32), rtol=1e-5)
    chol = "HloModule c\nENTRY e {\n  a = f64[2,2] parameter(0)\n  ROOT l = f64[2,2] cholesky(a), lower=true\n}\n"
    np.testing.assert_allclose(xlac.jit(chol)(np.array([[4.0, 0], [2, 2]])), [[2, 0], [1, 1]])


@pytest.mark.parametrize("comp", [
    cholesky_comp("c64", (2, 3, 3), False),
    solve_comp("f64", (4, 4), (2, 4), False, False, True, "ADJOINT"),
])
def test_text_round_trip(comp):
    text = comp.as_hlo_text()
    again = xlac.parse_hlo(text).to_text()
    assert again == xlac.parse_hlo(again).to_text()
    inst = comp.module.entry.root
    assert inst.opcode in again and all(f"{k}=" in again for k in inst.attrs)


# ---------------------------------------------------------------------------
# ahead of time
# ---------------------------------------------------------------------------

AOT_HLO = """HloModule linalg

ENTRY main {
  a = f64[300,300]{1,0} parameter(0)
  b = f64[300,5]{1,0} parameter(1)
  c = c64[2,4,4]{2,1,0} parameter(2)
  l = f64[300,300]{1,0} cholesky(a), lower=true
  y = f64[300,5]{1,0} triangular-solve(l, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  x = f64[300,5]{1,0} triangular-solve(l, y), left_side=true, lower=true, transpose_a=TRANSPOSE
  u = c64[2,4,4]{2,1,0} cholesky(c), lower=false
  ROOT t = (f64[300,5]{1,0}, c64[2,4,4]{2,1,0}) tuple(x, u)
}
"""


@needs_cc
def test_aot_object_solves_a_positive_definite_system(tmp_path, runtime_obj):
    rng = np.random.default_rng(9)
    args = [hermitian_pd(rng, (300, 300), "f64"), rng.standard_normal((300, 5)),
            hermitian_pd(rng, (2, 4, 4), "c64")]
    module = xlac.parse_hlo(AOT_HLO)
    _, outputs, _ = build_and_run(module, args, tmp_path, runtime_obj, name="linalg", threads=True)
    for k, (got, jit) in enumerate(zip(outputs, xlac.jit(module)(*args))):
        _assert_same_bits(got, np.asarray(jit), f"leaf {k}")
    np.testing.assert_allclose(args[0] @ outputs[0], args[1], atol=1e-9)
