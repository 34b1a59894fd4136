"""Row-reduction fusions (softmax, log-softmax, layernorm shapes): the hoisted
row reductions, their reuse across passes, and the per-row scratch, checked
against the numpy evaluator for odd sizes, rank 3, several types, 1 and 2
threads, and in XLAC_EXACT_MATH mode."""
import re

import numpy as np
import pytest

import xlac
from xlac import ops
from xlac import program as executable

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    BF16 = None

REDUCERS = """
max_r {
  a = TY[] parameter(0)
  b = TY[] parameter(1)
  ROOT m = TY[] maximum(a, b)
}
add_r {
  a = TY[] parameter(0)
  b = TY[] parameter(1)
  ROOT s = TY[] add(a, b)
}
"""


def _shape(ty, dims):
    layout = ",".join(str(d) for d in reversed(range(len(dims))))
    return f"{ty}[{','.join(map(str, dims))}]{{{layout}}}"


def softmax(ty, dims):
    """softmax over the last dimension, written the way jax emits it."""
    full, row = _shape(ty, dims), _shape(ty, dims[:-1])
    last = len(dims) - 1
    keep = ",".join(map(str, range(last)))
    return f"""HloModule softmax
{REDUCERS.replace("TY", ty)}
ENTRY e {{
  x = {full} parameter(0)
  ninf = {ty}[] constant(-inf)
  mx = {row} reduce(x, ninf), dimensions={{{last}}}, to_apply=max_r
  mxb = {full} broadcast(mx), dimensions={{{keep}}}
  d = {full} subtract(x, mxb)
  e = {full} exponential(d)
  zero = {ty}[] constant(0)
  s = {row} reduce(e, zero), dimensions={{{last}}}, to_apply=add_r
  sb = {full} broadcast(s), dimensions={{{keep}}}
  ROOT r = {full} divide(e, sb)
}}"""


def softmax_sum_first(ty, dims):
    """softmax as ``(1 / sum) * e``: the row sum is generated before the
    output's own exponential (the reuse must not depend on that order)."""
    full = _shape(ty, dims)
    head, _root = softmax(ty, dims).rsplit("  ROOT", 1)
    return head + f"""  one = {ty}[] constant(1)
  oneb = {full} broadcast(one), dimensions={{}}
  sbr = {full} divide(oneb, sb)
  ROOT r = {full} multiply(sbr, e)
}}"""


def softmax_plus_shift(ty, dims):
    """``(1 / sum) * e + (x - max)``: the row max is needed inside the scratch
    fill (emitted in front of the row sum) and by the output pass."""
    full = _shape(ty, dims)
    head, _root = softmax_sum_first(ty, dims).rsplit("  ROOT", 1)
    return head + f"""  q = {full} multiply(sbr, e)
  ROOT r = {full} add(q, d)
}}"""


def log_softmax(ty, dims):
    """``(x - max) - log(sum(exp(x - max)))``: softmax's row passes, another output."""
    full, row = _shape(ty, dims), _shape(ty, dims[:-1])
    keep = ",".join(map(str, range(len(dims) - 1)))
    head = softmax(ty, dims).split("  sb =")[0].replace("HloModule softmax", "HloModule log_softmax")
    return head + f"""  ls = {row} log(s)
  lsb = {full} broadcast(ls), dimensions={{{keep}}}
  ROOT r = {full} subtract(d, lsb)
}}"""


def layernorm(ty, dims):
    full, row = _shape(ty, dims), _shape(ty, dims[:-1])
    last = len(dims) - 1
    keep = ",".join(map(str, range(last)))
    n = dims[-1]
    vec = _shape(ty, dims[-1:])
    return f"""HloModule layernorm
{REDUCERS.replace("TY", ty)}
ENTRY e {{
  x = {full} parameter(0)
  g = {vec} parameter(1)
  bias = {vec} parameter(2)
  zero = {ty}[] constant(0)
  s = {row} reduce(x, zero), dimensions={{{last}}}, to_apply=add_r
  n = {ty}[] constant({n})
  nb = {row} broadcast(n), dimensions={{}}
  mean = {row} divide(s, nb)
  meanb = {full} broadcast(mean), dimensions={{{keep}}}
  c = {full} subtract(x, meanb)
  c2 = {full} multiply(c, c)
  v = {row} reduce(c2, zero), dimensions={{{last}}}, to_apply=add_r
  var = {row} divide(v, nb)
  eps = {ty}[] constant(1e-05)
  epsb = {row} broadcast(eps), dimensions={{}}
  ve = {row} add(var, epsb)
  inv = {row} rsqrt(ve)
  invb = {full} broadcast(inv), dimensions={{{keep}}}
  y = {full} multiply(c, invb)
  gb = {full} broadcast(g), dimensions={{{last}}}
  bb = {full} broadcast(bias), dimensions={{{last}}}
  yg = {full} multiply(y, gb)
  ROOT r = {full} add(yg, bb)
}}"""


BUILDERS = {"softmax": softmax, "softmax_sum_first": softmax_sum_first,
            "softmax_plus_shift": softmax_plus_shift,
            "log_softmax": log_softmax, "layernorm": layernorm}
DTYPES = {"f32": np.float32, "f64": np.float64, "bf16": BF16}
#: bf16 rounds after every add, so a row sum depends on the order of the adds
#: (the evaluator's and the kernel's differ): its tolerance is loose, and
#: absolute errors are scaled by the largest result.
TOL = {"f32": 2e-5, "f64": 1e-12, "bf16": 6e-2}


def _inputs(kind, ty, dims, seed=0):
    rng = np.random.default_rng(seed)
    dt = DTYPES[ty]
    x = (rng.standard_normal(dims) * 3).astype(dt)
    if kind != "layernorm":
        return [x]
    return [x, rng.standard_normal(dims[-1:]).astype(dt), rng.standard_normal(dims[-1:]).astype(dt)]


def _check(kind, ty, dims, threads=(1, 2)):
    text = BUILDERS[kind](ty, dims)
    args = _inputs(kind, ty, dims)
    want = np.asarray(xlac.evaluate(text, *args), np.float64)
    for nt in threads:
        got = np.asarray(xlac.jit(text, num_threads=nt)(*args), np.float64)
        atol = TOL[ty] * (np.abs(want).max() if ty == "bf16" else 1)
        np.testing.assert_allclose(got, want, rtol=TOL[ty], atol=atol, err_msg=f"{kind} {ty} {dims} {nt}t")
    return text


@pytest.mark.parametrize("kind", sorted(BUILDERS))
@pytest.mark.parametrize("dims", [(7, 13), (3, 5, 33), (1, 1), (300, 1000), (2, 1)])
def test_row_fusions_f32(kind, dims):
    _check(kind, "f32", dims)


@pytest.mark.parametrize("kind", sorted(BUILDERS))
@pytest.mark.parametrize("ty", ["f64", "bf16"])
def test_row_fusions_other_types(kind, ty):
    if ty == "bf16" and BF16 is None:
        pytest.skip("no bf16")
    _check(kind, ty, (5, 3, 67))
    _check(kind, ty, (129, 257))


@pytest.mark.parametrize("kind", ["softmax", "log_softmax", "layernorm"])
def test_row_fusions_exact_math(kind, monkeypatch):
    monkeypatch.setenv("XLAC_EXACT_MATH", "1")
    executable._cache.clear()
    try:
        _check(kind, "f32", (37, 515))
    finally:
        executable._cache.clear()


@pytest.mark.parametrize("kind", ["softmax", "softmax_sum_first", "softmax_plus_shift"])
def test_softmax_row_max_is_computed_once(kind):
    """The row maximum feeds the row sum and the output pass; it is hoisted
    once per row and reused (one maximum loop in the kernel)."""
    text = _check(kind, "f32", (64, 256), threads=(1,))
    exe = xlac.jit(text, num_threads=1)
    calls = [line for line in exe.llvm_ir.splitlines() if " call " in line and "llvm.maxnum.f32" in line]
    assert len(calls) == 1, exe.llvm_ir


def _reduce_loops(ir_text):
    import re
    return sorted(set(re.findall(r"^(r\d+\.body[.\d]*):", ir_text, re.M)))


def test_layernorm_mean_is_computed_once():
    """Fusion duplicates the cheap ``x - mean`` into the variance and the
    output; the row mean behind both is still one loop per row (mean and
    variance: two reduction loops)."""
    text = _check("layernorm", "f32", (64, 256), threads=(1,))
    assert len(_reduce_loops(xlac.jit(text, num_threads=1).llvm_ir)) == 2


def test_hoisted_reuse_does_not_leak_across_rows_or_branches():
    """Two row reductions of different operands, and a concatenate (branches)
    reading the same row value: every value is still right."""
    text = "HloModule m\n" + REDUCERS.replace("TY", "f32") + """
ENTRY e {
  x = f32[9,31]{1,0} parameter(0)
  y = f32[9,31]{1,0} parameter(1)
  z = f32[] constant(0)
  sx = f32[9]{0} reduce(x, z), dimensions={1}, to_apply=add_r
  sy = f32[9]{0} reduce(y, z), dimensions={1}, to_apply=add_r
  bx = f32[9,31]{1,0} broadcast(sx), dimensions={0}
  by = f32[9,31]{1,0} broadcast(sy), dimensions={0}
  p = f32[9,31]{1,0} multiply(x, by)
  q = f32[9,31]{1,0} subtract(p, bx)
  qs = f32[9]{0} reduce(q, z), dimensions={1}, to_apply=add_r
  qb = f32[9,31]{1,0} broadcast(qs), dimensions={0}
  c = f32[9,62]{1,0} concatenate(qb, by), dimensions={1}
  c2 = f32[9,62]{1,0} concatenate(p, q), dimensions={1}
  ROOT r = f32[9,62]{1,0} add(c, c2)
}"""
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal((9, 31)).astype(np.float32) for _ in range(2))
    want = xlac.evaluate(text, x, y)
    for nt in (1, 2):
        np.testing.assert_allclose(xlac.jit(text, num_threads=nt)(x, y), want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("kind", ["softmax", "softmax_sum_first", "softmax_plus_shift"])
def test_row_sum_is_folded_into_the_scratch_fill(kind):
    """The row sum of the exp row is accumulated while the scratch row is
    written, whichever of the two the kernel asks for first: the only
    reduction loop left is the row maximum's."""
    text = _check(kind, "f32", (33, 129), threads=(1, 2))
    ir = xlac.jit(text, num_threads=1).llvm_ir
    assert len(_reduce_loops(ir)) == 1, _reduce_loops(ir)
    assert len(re.findall(r"^row\d+\.body:", ir, re.M)) == 1


@pytest.mark.parametrize("ty", ["f32", "f64"])
def test_several_reductions_folded_into_one_fill(ty):
    """A sum with a non-zero initial value, a maximum (NaN-flagged) and a
    product of one scratch row, all folded into its fill; rows holding NaN and
    infinities give what the evaluator gives."""
    text = "HloModule m\n" + REDUCERS.replace("TY", ty) + f"""
mul_r {{
  a = {ty}[] parameter(0)
  b = {ty}[] parameter(1)
  ROOT p = {ty}[] multiply(a, b)
}}
ENTRY e {{
  x = {ty}[6,40]{{1,0}} parameter(0)
  e = {ty}[6,40]{{1,0}} exponential(x)
  one = {ty}[] constant(1)
  ninf = {ty}[] constant(-inf)
  s = {ty}[6]{{0}} reduce(e, one), dimensions={{1}}, to_apply=add_r
  m = {ty}[6]{{0}} reduce(e, ninf), dimensions={{1}}, to_apply=max_r
  p = {ty}[6]{{0}} reduce(e, one), dimensions={{1}}, to_apply=mul_r
  sb = {ty}[6,40]{{1,0}} broadcast(s), dimensions={{0}}
  mb = {ty}[6,40]{{1,0}} broadcast(m), dimensions={{0}}
  pb = {ty}[6,40]{{1,0}} broadcast(p), dimensions={{0}}
  q = {ty}[6,40]{{1,0}} divide(e, sb)
  w = {ty}[6,40]{{1,0}} add(q, mb)
  ROOT r = {ty}[6,40]{{1,0}} subtract(w, pb)
}}"""
    x = np.random.default_rng(4).uniform(-0.1, 0.1, (6, 40)).astype(DTYPES[ty])
    x[1, 7] = np.nan
    x[2, 3] = np.inf
    x[3, :] = -np.inf
    want = xlac.evaluate(text, x)
    for nt in (1, 2):
        exe = xlac.jit(text, num_threads=nt)
        assert _reduce_loops(exe.llvm_ir) == []
        np.testing.assert_allclose(exe(x), want, rtol=TOL[ty] * 10, atol=TOL[ty] * 10)


def _exp_count(ir_text):
    # One exponential's polynomial (f32) has this coefficient once.
    return ir_text.count("0x3f2a032d60000000")


@pytest.mark.parametrize("kind", ["softmax", "softmax_sum_first", "softmax_plus_shift"])
def test_softmax_exponential_is_computed_once_per_element(kind):
    """exp(x - max) feeds the row sum and the output: one row of it is kept
    in a scratch row, so the kernel holds one exponential, not two."""
    text = _check(kind, "f32", (33, 129), threads=(1, 2))
    exe = xlac.jit(text, num_threads=1)
    assert _exp_count(exe.llvm_ir) == 1
    assert "%\"row\" = alloca float, i32 129" in exe.llvm_ir


@pytest.mark.parametrize("ty", ["bf16", "f16"])
def test_a_16_bit_exponential_summed_in_f32_is_computed_once(ty):
    """jax's softmax of bf16/f16: exp in the 16-bit type, converted to f32 for
    the row sum, divided by the sum in the 16-bit type.  The exp row is kept
    in a scratch row through the convert (one exponential in the kernel),
    and the bits are the evaluator's."""
    text = f"""HloModule m
max_r {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}}
add_r {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}
ENTRY e {{
  x = {ty}[37,300]{{1,0}} parameter(0)
  xf = f32[37,300]{{1,0}} convert(x)
  ninf = f32[] constant(-inf)
  mf = f32[37]{{0}} reduce(xf, ninf), dimensions={{1}}, to_apply=max_r
  m = {ty}[37]{{0}} convert(mf)
  mb = {ty}[37,300]{{1,0}} broadcast(m), dimensions={{0}}
  d = {ty}[37,300]{{1,0}} subtract(x, mb)
  e = {ty}[37,300]{{1,0}} exponential(d)
  ef = f32[37,300]{{1,0}} convert(e)
  zero = f32[] constant(0)
  sf = f32[37]{{0}} reduce(ef, zero), dimensions={{1}}, to_apply=add_r
  s = {ty}[37]{{0}} convert(sf)
  sb = {ty}[37,300]{{1,0}} broadcast(s), dimensions={{0}}
  ROOT r = {ty}[37,300]{{1,0}} divide(e, sb)
}}"""
    dtype = BF16 if ty == "bf16" else np.float16
    x = (np.random.default_rng(7).standard_normal((37, 300)) * 3).astype(dtype)
    want = np.asarray(xlac.evaluate(text, x))
    for nt in (1, 2):
        exe = xlac.jit(text, num_threads=nt)
        np.testing.assert_array_equal(np.asarray(exe(x)).view(np.uint16), want.view(np.uint16))
    assert _exp_count(exe.llvm_ir) == 1 and "\"row\" = alloca" in exe.llvm_ir


def test_row_scratch_too_big_row_recomputes(monkeypatch):
    from xlac.codegen import hoisting
    monkeypatch.setattr(hoisting, "ROW_SCRATCH_BYTES", 64)
    executable._cache.clear()
    try:
        text = _check("softmax", "f32", (5, 129), threads=(1,))
        assert _exp_count(xlac.jit(text, num_threads=1).llvm_ir) == 2
    finally:
        executable._cache.clear()


def test_row_scratch_over_two_minor_dimensions_and_other_readers():
    """A row that spans the two minor dimensions, and a second reader of the
    value through a transpose (not inside loops over the row: computed again)."""
    text = "HloModule m\n" + REDUCERS.replace("TY", "f32") + """
ENTRY e {
  x = f32[6,5,7]{2,1,0} parameter(0)
  e = f32[6,5,7]{2,1,0} exponential(x)
  z = f32[] constant(0)
  s = f32[6]{0} reduce(e, z), dimensions={1,2}, to_apply=add_r
  sb = f32[6,5,7]{2,1,0} broadcast(s), dimensions={0}
  q = f32[6,5,7]{2,1,0} divide(e, sb)
  t = f32[6,7,5]{2,1,0} transpose(e), dimensions={0,2,1}
  tt = f32[6,5,7]{2,1,0} transpose(t), dimensions={0,2,1}
  ROOT r = f32[6,5,7]{2,1,0} add(q, tt)
}"""
    x = np.random.default_rng(5).standard_normal((6, 5, 7)).astype(np.float32)
    want = xlac.evaluate(text, x)
    for nt in (1, 2):
        np.testing.assert_allclose(xlac.jit(text, num_threads=nt)(x), want, rtol=2e-6, atol=1e-6)


def test_row_reduction_loops_are_not_unrolled_but_interleaved(pinned_target):
    """Row reductions carry loop hints: no full unrolling (less code to
    compile), four vector accumulators (not one latency-bound chain).
    (For pinned CPUs: the lanes of a vector register are the target's.)"""
    pinned_target.require_runnable()
    text = _check("softmax", "f32", (64, 1024), threads=(1,))
    exe = xlac.jit(text, num_threads=1)
    assert "llvm.loop.unroll.disable" in exe.llvm_ir
    assert "llvm.loop.interleave.count" in exe.llvm_ir
    opt = exe.optimized_llvm_ir
    # The row maximum: one vectorised loop with four accumulators (four
    # registers' worth of lanes, as four vectors or one four times as wide),
    # not 64 unrolled maxima.
    calls = [int(n) for n in re.findall(r"call .*@llvm\.maxnum\.v(\d+)f32", opt)]
    assert 1 <= len(calls) <= 8 and sum(calls) >= 4 * (pinned_target.vector_bits // 32), calls


def _side_by_side(hints: set, n: int, lanes: int) -> bool:
    """Whether a loop's hints run ``n`` vector iterations side by side: as an
    interleave count, or as one vector ``n`` registers (of ``lanes`` f32) wide."""
    return f"llvm.loop.interleave.count={n}" in hints or f"llvm.loop.vectorize.width={n * lanes}" in hints


def _loop_hints(ir_text: str) -> dict:
    """{loop body block: the hint strings of its loop ID} of unoptimised IR."""
    nodes = dict(re.findall(r"^(!\d+) = (?:distinct )?!\{(.*)\}$", ir_text, re.M))

    def strings(node, seen=()):
        out = set()
        for ref in re.findall(r"!\d+", nodes.get(node, "")):
            if ref != node and ref not in seen:
                out |= strings(ref, seen + (node,))
        out |= set(re.findall(r'!"([^"]+)"(?:, i32 (\d+))?', nodes.get(node, "")) or [])
        return out
    hints = {}
    for body, node in re.findall(r'label %"([\w.]+)", label %"[\w.]+", !llvm\.loop (!\d+)', ir_text):
        hints[body] = {f"{s}={n}" if n else s for s, n in strings(node)}
    return hints


def test_long_math_loops_run_independent_vector_iterations(pinned_target):
    """A loop evaluating exp/tanh-like math runs four vector iterations side
    by side (its code is a long dependent chain per vector): the output loop
    of an elementwise tanh, and softmax's row-scratch fill, but not softmax's
    output loop (a divide of the scratch) nor a plain add's."""
    from xlac.codegen.hoisting import ROW_SCRATCH_INTERLEAVE
    from xlac.codegen.kernels.loop import MATH_INTERLEAVE
    pinned_target.require_runnable()
    lanes = pinned_target.vector_bits // 32
    b = xlac.XlaBuilder("tanh_loop")
    x = ops.parameter(b, 0, xlac.Shape(xlac.F32, (64, 256)), "x")
    # An elementwise kernel is one flat loop over the 64 x 256 elements.
    hints = _loop_hints(xlac.jit(b.build(ops.add(ops.tanh(x), x))).llvm_ir)
    assert _side_by_side(hints["d0.body"], MATH_INTERLEAVE, lanes), hints
    b = xlac.XlaBuilder("add_loop")
    x = ops.parameter(b, 0, xlac.Shape(xlac.F32, (64, 256)), "x")
    hints = _loop_hints(xlac.jit(b.build(ops.add(x, x))).llvm_ir)
    assert not any("interleave" in h or "width" in h for h in hints["d0.body"])
    hints = _loop_hints(xlac.jit(_check("softmax", "f32", (64, 1024), threads=(1,))).llvm_ir)
    assert _side_by_side(hints["row1.body"], ROW_SCRATCH_INTERLEAVE, lanes), hints
    assert not any("interleave" in h or "width" in h for h in hints["d1.body"])


def test_a_row_scratch_in_a_kernel_of_a_scalar_result():
    """A value two reductions read (``exp(x + sel)``), in a fusion whose result is
    a scalar: the scratch row's fill sits at the top of the kernel, in no loop
    (jax's Dirichlet log-density: lgamma terms of a sum)."""
    text = """HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = f32[] add(a, b) }
ENTRY e {
  p = f32[4]{0} parameter(0)
  z = f32[] constant(0)
  s = f32[] reduce(p, z), dimensions={0}, to_apply=add
  half = f32[] constant(0.5)
  c = pred[] compare(s, half), direction=LT
  ns = f32[] negate(s)
  one = f32[] constant(1)
  sm = f32[] subtract(s, one)
  sel = f32[] select(c, ns, sm)
  b = f32[4]{0} broadcast(sel), dimensions={}
  x = f32[4]{0} add(p, b)
  e = f32[4]{0} exponential(x)
  r1 = f32[] reduce(e, z), dimensions={0}, to_apply=add
  m = f32[4]{0} multiply(e, p)
  r2 = f32[] reduce(m, z), dimensions={0}, to_apply=add
  ROOT d = f32[] divide(r2, r1)
}"""
    x = np.array([0.3, 1.2, 2.0, 0.7], np.float32)
    np.testing.assert_allclose(xlac.jit(text)(x), xlac.evaluate(text, x), rtol=1e-6)


def test_loops_around_calls_that_stay_scalar_are_not_vectorised(pinned_target):
    """f64 ``sin`` and ``cos`` and ``pow`` are intrinsics with no vector
    instruction (one C library call per lane) and ``tan`` a C library call:
    their loops get the vectoriser off and no width or interleaving, and
    compute what the evaluator does; ``sqrt`` (an instruction) and f32 ``sin``
    and ``cos`` (inline approximations) keep their vector hints."""
    pinned_target.require_runnable()
    rng = np.random.default_rng(0)
    values = rng.uniform(0.5, 4, (64, 256))
    for name, make, ty in (("sin", lambda x: ops.sin(x), xlac.F64), ("cos", lambda x: ops.add(ops.cos(x), x), xlac.F64),
                           ("pow", lambda x: ops.pow(x, ops.mul(x, x)), xlac.F32),
                           ("tan", lambda x: ops.tan(x), xlac.F32)):
        b = xlac.XlaBuilder(f"{name}_loop")
        x = ops.parameter(b, 0, xlac.Shape(ty, (64, 256)), "x")
        computation = b.build(make(x))
        exe = xlac.jit(computation, num_threads=1)
        hints = _loop_hints(exe.llvm_ir)
        # One flat loop over the elements (an elementwise kernel).
        assert "llvm.loop.vectorize.enable" in hints["d0.body"], (name, hints)     # (false: the only value emitted)
        assert not any("interleave" in h or "width" in h for h in hints["d0.body"]), (name, hints)
        v = values.astype(ty.dtype)
        np.testing.assert_allclose(exe(v), xlac.evaluate(computation, v), rtol=2e-6, err_msg=name)
    for name, make in (("sqrt", lambda x: ops.add(ops.sqrt(x), x)), ("sin32", ops.sin), ("cos32", ops.cos)):
        b = xlac.XlaBuilder(f"{name}_loop")
        x = ops.parameter(b, 0, xlac.Shape(xlac.F32, (64, 256)), "x")
        hints = _loop_hints(xlac.jit(b.build(make(x))).llvm_ir)
        assert "llvm.loop.vectorize.enable" not in hints["d0.body"], (name, hints)


def test_short_rows_keep_the_interleave_count_and_results(pinned_target):
    """The wide-vector form needs a trip count of at least four registers of
    lanes: a 13-element row reduction asks for no width (it would never
    reach it) and for as many vectors side by side as its 13 elements fill
    (more, and LLVM folds the tail into the vector loop, lane by lane), a
    1024-element one asks for the width, and both compute what the evaluator
    does in f32 and f64."""
    from xlac.codegen.loops import REDUCTION_INTERLEAVE
    pinned_target.require_runnable()
    text = _check("softmax", "f32", (7, 13), threads=(1,))
    hints = _loop_hints(xlac.jit(text, num_threads=1).llvm_ir)
    assert all("llvm.loop.vectorize.width" not in " ".join(h) for h in hints.values()), hints
    fitting = max(1, min(REDUCTION_INTERLEAVE, 13 // (pinned_target.vector_bits // 32)))
    assert f"llvm.loop.interleave.count={fitting}" in hints["r1.body"], hints
    text = _check("softmax", "f64", (5, 1024), threads=(1, 2))
    hints = _loop_hints(xlac.jit(text, num_threads=1).llvm_ir)
    lanes = pinned_target.vector_bits // 64
    if 4 * lanes <= 1024 and lanes > 1:
        assert f"llvm.loop.vectorize.width={4 * lanes}" in hints["r1.body"], hints


def _hints_by_function(ir_text: str) -> dict:
    """{function name: ``_loop_hints`` of its loops} of unoptimised IR."""
    metadata = "\n".join(re.findall(r"^!\d+ = .*$", ir_text, re.M))
    return {name: _loop_hints(body + "\n" + metadata)
            for name, body in re.findall(r'^define [^@]*@"([^"]+)"(.*?)^\}$', ir_text, re.M | re.S)}


_TINY_LOOP = """HloModule m
ENTRY e {
  a = f32[8,3] parameter(0)
  b = f32[3] parameter(1)
  bb = f32[8,3] broadcast(b), dimensions={1}
  s = f32[8,3] add(a, bb)
  ROOT t = f32[8,3] exponential(s)
}"""

_TINY_LOOP_IN_A_WHILE = """HloModule m
body {
  p = (s32[], f32[8,3], f32[3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[8,3] get-tuple-element(p), index=1
  b = f32[3] get-tuple-element(p), index=2
  bb = f32[8,3] broadcast(b), dimensions={1}
  s = f32[8,3] add(a, bb)
  t = f32[8,3] exponential(s)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT r = (s32[], f32[8,3], f32[3]) tuple(j, t, b)
}
cond {
  p = (s32[], f32[8,3], f32[3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
ENTRY e {
  a = f32[8,3] parameter(0)
  b = f32[3] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[8,3], f32[3]) tuple(zero, a, b)
  w = (s32[], f32[8,3], f32[3]) while(init), condition=cond, body=body
  ROOT r = f32[8,3] get-tuple-element(w), index=1
}"""


def test_a_tiny_loop_nest_of_the_entry_stays_scalar(avx2_target):
    """An 8 x 3 loop kernel of the entry (``loops.TINY_NEST_ELEMENTS``) runs
    once per call: its loops are neither vectorised nor unrolled (its 3-wide
    rows are not unrolled for the loop around them to vectorise).  The same
    kernel in a while body, which may run many times, keeps its vector
    hints.  Both compute what the evaluator does."""
    rng = np.random.default_rng(2)
    args = [rng.standard_normal((8, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)]
    exe = xlac.jit(_TINY_LOOP)
    (hints,) = [h for h in _hints_by_function(exe.llvm_ir).values() if "d0.body" in h]
    assert set(hints) == {"d0.body", "d1.body"}, hints
    for loop in hints.values():
        assert "llvm.loop.vectorize.enable" in loop and "llvm.loop.unroll.disable" in loop, hints
        assert not any("interleave" in h or "width" in h or h == "llvm.loop.unroll.full" for h in loop), hints
    np.testing.assert_allclose(exe(*args), xlac.evaluate(_TINY_LOOP, *args), rtol=2e-6)
    exe = xlac.jit(_TINY_LOOP_IN_A_WHILE)
    (hints,) = [h for h in _hints_by_function(exe.llvm_ir).values() if "d0.body" in h]
    assert "llvm.loop.unroll.full" in hints["d1.body"], hints
    assert not any("llvm.loop.vectorize.enable" in loop for loop in hints.values()), hints
    np.testing.assert_allclose(exe(*args), xlac.evaluate(_TINY_LOOP_IN_A_WHILE, *args), rtol=1e-5)


def test_math_loops_ask_for_the_vectors_their_trip_count_fills(avx2_target):
    """An exp over f32[24,3] in a while body: the 3-wide rows are unrolled
    and the loop of 24 around them vectorised, so it asks for as many 8-lane
    vectors side by side as 24 iterations fill (3), not ``MATH_INTERLEAVE``
    (asked for more, LLVM folds the tail into the vector loop, each lane
    behind a branch).  The same kernel in the entry, run once per call
    (``loops.SMALL_ONCE_ELEMENTS``), asks for no interleaving at all.  Both
    compute what the evaluator does."""
    rng = np.random.default_rng(3)
    args = [rng.standard_normal((24, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)]
    for text, interleave in ((_TINY_LOOP_IN_A_WHILE.replace("f32[8,3]", "f32[24,3]"), 3),
                             (_TINY_LOOP.replace("f32[8,3]", "f32[24,3]"), None)):
        exe = xlac.jit(text)
        (hints,) = [h for h in _hints_by_function(exe.llvm_ir).values() if "d0.body" in h]
        asked = [h for h in hints["d0.body"] if "interleave" in h or "width" in h]
        assert asked == ([f"llvm.loop.interleave.count={interleave}"] if interleave else []), hints
        assert "llvm.loop.unroll.full" in hints["d1.body"], hints
        np.testing.assert_allclose(exe(*args), xlac.evaluate(text, *args), rtol=1e-5)


def test_a_row_reduction_reading_a_transpose_is_not_forced_wide(pinned_target):
    """A row reduction whose operand is read across rows (a transpose fused
    into it: the loop scales its induction variable) keeps no forced width
    or interleave count, the cost model picking the factor (forced, each
    strided read was a 32-lane gather); the same reduction of the operand
    as it lies keeps the width.  Both compute what the evaluator does."""
    pinned_target.require_runnable()

    def module(transposed: bool) -> str:
        read = "t = f32[256,512] transpose(a), dimensions={1,0}" if transposed else \
            "t = f32[256,512] negate(a)"
        dims = "512,256" if transposed else "256,512"
        return f"""HloModule m
add {{
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}}
ENTRY e {{
  a = f32[{dims}] parameter(0)
  {read}
  z = f32[] constant(0)
  ROOT r = f32[256] reduce(t, z), dimensions={{1}}, to_apply=add
}}"""
    rng = np.random.default_rng(3)
    for transposed in (True, False):
        text = module(transposed)
        exe = xlac.jit(text, num_threads=1)
        hints = _loop_hints(exe.llvm_ir)
        widths = [h for hs in hints.values() for h in hs if "vectorize.width" in h or "interleave.count" in h]
        if transposed:
            assert not widths, hints
        elif pinned_target.vector_bits >= 128:
            assert widths, hints
        x = rng.standard_normal((512, 256) if transposed else (256, 512)).astype(np.float32)
        np.testing.assert_allclose(exe(x), xlac.evaluate(text, x), rtol=2e-5, atol=1e-4)
