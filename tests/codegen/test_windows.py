"""reduce-window, select-and-scatter and fft through the JIT: the spec's examples
verbatim, JIT against the evaluator on layouts, dtypes, padding and dilations,
and fft against numpy.fft."""
import numpy as np
import pytest

import xlac
from xlac import ops

from test_jit_ops import check, module, rand

BF16 = xlac.BF16.dtype


def reducer(name, ty, op):
    return (f"{name} {{\n  a = {ty}[] parameter(0)\n  b = {ty}[] parameter(1)\n"
            f"  ROOT r = {ty}[] {op}(a, b)\n}}\n\n")


def rw_module(ty, in_dims, out_dims, window, op="add", init="0", layout="", out_layout=""):
    body = (f"ENTRY e {{\n  x = {ty}[{in_dims}]{layout} parameter(0)\n  c = {ty}[] constant({init})\n"
            f"  ROOT r = {ty}[{out_dims}]{out_layout} reduce-window(x, c), window={{{window}}}, to_apply=red\n}}\n")
    return "HloModule m\n\n" + reducer("red", ty, op) + body


def np_reduce_window(x, sizes, strides, pads, base_dil, win_dil, fn, init):
    """Direct reference: fold ``fn`` from ``init`` over the real elements of each window."""
    out_dims = []
    for n, k, s, (lo, hi), bd, wd in zip(x.shape, sizes, strides, pads, base_dil, win_dil):
        padded = (n - 1) * bd + 1 + lo + hi
        out_dims.append(max((padded - ((k - 1) * wd + 1)) // s + 1, 0))
    out = np.empty(out_dims, x.dtype)
    for o in np.ndindex(*out_dims):
        acc = init
        for k in np.ndindex(*sizes):
            idx = []
            for oo, kk, s, (lo, _), bd, wd, n in zip(o, k, strides, pads, base_dil, win_dil, x.shape):
                p = oo * s - lo + kk * wd
                if p % bd or not 0 <= p // bd < n:
                    break
                idx.append(p // bd)
            else:
                acc = fn(acc, x[tuple(idx)])
        out[o] = acc
    return out


# ----------------------------------------------------------------------------
# reduce-window
# ----------------------------------------------------------------------------

def test_reduce_window_spec_padding_example():
    # Min over windows of 3 with stride 2 of [10000, 1000, 100, 10, 1]:
    # VALID -> [100, 1]; SAME pads one element each side -> [1000, 10, 1].
    x = np.array([10000, 1000, 100, 10, 1], np.float32)
    big = "3.40282347e+38"
    valid = rw_module("f32", "5", "2", "size=3 stride=2", "minimum", big)
    same = rw_module("f32", "5", "3", "size=3 stride=2 pad=1_1", "minimum", big)
    np.testing.assert_array_equal(check(valid, x), [100, 1])
    np.testing.assert_array_equal(check(same, x), [1000, 10, 1])


def test_reduce_window_spec_max_2x3():
    # The spec's 4x6 max pool with window and stride 2x3.
    x = np.array([[7, 2, 5, 3, 10, 2], [3, 8, 9, 3, 4, 2], [1, 5, 7, 5, 6, 1], [0, 6, 2, 7, 2, 8]],
                 np.float32)
    text = rw_module("f32", "4,6", "2,2", "size=2x3 stride=2x3", "maximum", "-inf")
    np.testing.assert_array_equal(check(text, x), [[9, 10], [7, 8]])


@pytest.mark.parametrize("window,sizes,strides,pads,bd,wd", [
    ("size=2x3 stride=1x2 pad=1_0x2_1", (2, 3), (1, 2), [(1, 0), (2, 1)], (1, 1), (1, 1)),
    ("size=2x2 lhs_dilate=2x3 pad=0_1x1_1", (2, 2), (1, 1), [(0, 1), (1, 1)], (2, 3), (1, 1)),
    ("size=3x2 stride=2x1 rhs_dilate=2x3", (3, 2), (2, 1), [(0, 0), (0, 0)], (1, 1), (2, 3)),
    ("size=2x3 stride=2x2 pad=-1_2x1_-2 lhs_dilate=2x1 rhs_dilate=1x2", (2, 3), (2, 2),
     [(-1, 2), (1, -2)], (2, 1), (1, 2)),
])
def test_reduce_window_padding_dilation_skip_padding(window, sizes, strides, pads, bd, wd):
    # init 1 for add: padding and holes are skipped, not read as the init value.
    rng = np.random.default_rng(0)
    x = rand(np.float32, (5, 7), rng)
    want = np_reduce_window(x, sizes, strides, pads, bd, wd, lambda a, b: np.float32(a + b), np.float32(1))
    out = ",".join(str(d) for d in want.shape)
    text = rw_module("f32", "5,7", out, window, "add", "1")
    np.testing.assert_allclose(check(text, x, rtol=1e-5, atol=1e-5), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ty,dtype,op,init", [("s32", np.int32, "add", "0"), ("u8", np.uint8, "maximum", "3"),
                                              ("f16", np.float16, "add", "0"), ("bf16", BF16, "maximum", "-inf"),
                                              ("f64", np.float64, "multiply", "1"), ("pred", np.bool_, "or", "false")])
@pytest.mark.parametrize("layout", ["{2,1,0}", "{0,2,1}"])
def test_reduce_window_types_and_layouts(ty, dtype, op, init, layout):
    rng = np.random.default_rng(1)
    x = rand(dtype, (3, 6, 5), rng, -3, 3)
    text = rw_module(ty, "3,6,5", "3,3,5", "size=1x3x2 stride=1x2x1 pad=0_0x1_1x0_1", op, init,
                     layout, "{1,0,2}")
    tol = 2e-2 if ty in ("f16", "bf16") else 1e-6
    check(text, x, rtol=tol, atol=tol)


@pytest.mark.parametrize("ty", ["bf16", "f16"])
@pytest.mark.parametrize("op,init", [("maximum", "-inf"), ("minimum", "inf"), ("maximum", "0"), ("add", "0"),
                                     ("multiply", "1")])
def test_narrow_float_pools_accumulate_in_f32(ty, op, init):
    """A bf16/f16 max, min, add or multiply window accumulates in f32 and
    rounds once (f16 widened by integer operations): the evaluator's values,
    NaN anywhere in a window gives NaN, signed zeros ordered; padding reads
    nothing."""
    text = f"""HloModule m
red {{
  a = {ty}[] parameter(0)
  b = {ty}[] parameter(1)
  ROOT s = {ty}[] {op}(a, b)
}}
ENTRY e {{
  x = {ty}[2,34,40,3]{{3,2,1,0}} parameter(0)
  z = {ty}[] constant({init})
  ROOT r = {ty}[2,17,20,3]{{3,2,1,0}} reduce-window(x, z), window={{size=1x2x3x1 stride=1x2x2x1 pad=0_0x0_0x1_1x0_0}}, to_apply=red
}}"""
    dt = xlac.Shape(getattr(xlac, ty.upper()), ()).dtype
    x = np.random.default_rng(3).standard_normal((2, 34, 40, 3)).astype(dt)
    x[0, 4, 7, 1] = np.nan
    x[1, 10, :, 0] = -0.0
    x[1, 11, :, 0] = 0.0
    x[0, 20, 3, 2] = np.inf
    x[1, 30, 33, 1] = -np.inf
    got = np.asarray(xlac.jit(text)(x)).astype(np.float64)
    want = np.asarray(xlac.evaluate(text, x)).astype(np.float64)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_reduce_window_cumsum_and_cumprod():
    # JAX's cumsum/cumprod: a window of the whole axis padded low.
    rng = np.random.default_rng(2)
    x = rand(np.int32, (6, 10), rng, -5, 5)
    text = rw_module("s32", "6,10", "6,10", "size=1x10 pad=0_0x9_0")
    np.testing.assert_array_equal(check(text, x), np.cumsum(x, axis=1))
    y = rand(np.float32, (6, 4), rng, 0.5, 1.5)
    text = rw_module("f32", "6,4", "6,4", "size=6x1 pad=5_0x0_0", "multiply", "1")
    np.testing.assert_allclose(check(text, y, rtol=1e-6), np.cumprod(y, axis=0), rtol=1e-5)


def test_reduce_window_variadic_argmax():
    # (value, index) pairs: the max and the first index holding it, per window.
    text = """HloModule m

argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  take_a = pred[] or(gt, tie)
  v = f32[] select(take_a, av, bv)
  i = s32[] select(take_a, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}

ENTRY e {
  x = f32[4,9] parameter(0)
  i = s32[4,9] iota(), iota_dimension=1
  lo = f32[] constant(-inf)
  z = s32[] constant(-1)
  ROOT r = (f32[4,4], s32[4,4]) reduce-window(x, i, lo, z), window={size=1x3 stride=1x2 pad=0_0x0_0}, to_apply=argmax
}
"""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, size=(4, 9)).astype(np.float32)   # ties happen
    v, i = check(text, x)
    for r in range(4):
        for o in range(4):
            w = x[r, 2 * o:2 * o + 3]
            assert v[r, o] == w.max() and i[r, o] == 2 * o + int(np.argmax(w))


def test_reduce_window_scalar_and_builder():
    b = xlac.XlaBuilder("rw")
    x = ops.parameter(b, 0, "f32[8,8]")
    add = xlac.XlaBuilder("add")
    ops.add(ops.parameter(add, 0, "f32[]"), ops.parameter(add, 1, "f32[]"))
    add = add.build()
    same = ops.reduce_window(x, 0.0, add, (3, 3), (1, 1), padding="SAME")
    pooled = ops.reduce_window(x, 0.0, add, (2, 2), (2, 2))
    assert str(same.shape) == "f32[8,8]{1,0}" and str(pooled.shape) == "f32[4,4]{1,0}"
    comp = b.build(ops.tuple(b, [same, pooled]))
    xv = np.arange(64, dtype=np.float32).reshape(8, 8)
    got_same, got_pooled = xlac.jit(comp)(xv)
    np.testing.assert_allclose(got_pooled, xv.reshape(4, 2, 4, 2).sum(axis=(1, 3)))
    np.testing.assert_allclose(got_same, np_reduce_window(xv, (3, 3), (1, 1), [(1, 1)] * 2, (1, 1), (1, 1),
                                                          lambda a, c: a + c, np.float32(0)))
    with pytest.raises(xlac.ShapeError, match="reduce-window: window has 1 dimension"):
        b.add_instruction("reduce-window", [x, ops.constant(b, np.float32(0))],
                          {"window": xlac.hlo.ir.Raw("{size=2}"), "to_apply": b.import_computation(add)})


# ----------------------------------------------------------------------------
# select-and-scatter
# ----------------------------------------------------------------------------

def sas_module(ty, op_dims, src_dims, window, select="GE", scatter="add", init="0", layout=""):
    return ("HloModule m\n\n"
            f"sel {{\n  a = {ty}[] parameter(0)\n  b = {ty}[] parameter(1)\n"
            f"  ROOT r = pred[] compare(a, b), direction={select}\n}}\n\n"
            + reducer("sca", ty, scatter)
            + f"ENTRY e {{\n  x = {ty}[{op_dims}]{layout} parameter(0)\n  s = {ty}[{src_dims}] parameter(1)\n"
              f"  c = {ty}[] constant({init})\n"
              f"  ROOT r = {ty}[{op_dims}]{layout} select-and-scatter(x, s, c), window={{{window}}}, "
              "select=sel, scatter=sca\n}\n")


def test_select_and_scatter_spec_examples():
    # Non-overlapping windows (2x3, stride 2x3): each source value lands on its window's max.
    x = np.array([[7, 2, 5, 3, 10, 2], [3, 8, 9, 3, 4, 2], [1, 5, 7, 5, 6, 1], [0, 6, 2, 7, 2, 8]],
                 np.float32)
    s = np.array([[2, 6], [3, 1]], np.float32)
    got = check(sas_module("f32", "4,6", "2,2", "size=2x3 stride=2x3"), x, s)
    np.testing.assert_array_equal(got, [[0, 0, 0, 0, 6, 0], [0, 0, 2, 0, 0, 0],
                                        [0, 0, 3, 0, 0, 0], [0, 0, 0, 0, 0, 1]])
    # Overlapping windows (2x3, stride 2x2): 9 is selected by both top windows: 2 + 6 = 8.
    x = np.array([[7, 2, 5, 3, 8], [3, 8, 9, 3, 4], [1, 5, 7, 5, 6], [0, 6, 2, 10, 2]], np.float32)
    got = check(sas_module("f32", "4,5", "2,2", "size=2x3 stride=2x2"), x, s)
    np.testing.assert_array_equal(got, [[0, 0, 0, 0, 0], [0, 0, 8, 0, 0], [0, 0, 3, 0, 0], [0, 0, 0, 1, 0]])


def test_select_and_scatter_ties():
    # GE keeps the first of equal elements (row-major in the window); GT moves to the last.
    x = np.ones((2, 4), np.float32)
    s = np.array([[5, 7]], np.float32)
    ge = check(sas_module("f32", "2,4", "1,2", "size=2x2 stride=2x2"), x, s)
    np.testing.assert_array_equal(ge, [[5, 0, 7, 0], [0, 0, 0, 0]])
    gt = check(sas_module("f32", "2,4", "1,2", "size=2x2 stride=2x2", select="GT"), x, s)
    np.testing.assert_array_equal(gt, [[0, 0, 0, 0], [0, 5, 0, 7]])


@pytest.mark.parametrize("ty,dtype", [("f32", np.float32), ("s32", np.int32), ("bf16", BF16)])
@pytest.mark.parametrize("layout", ["{1,0}", "{0,1}"])
def test_select_and_scatter_padding_overlap(ty, dtype, layout):
    # SAME-style padding with overlapping windows; init 1 and multiply as scatter,
    # the windows entirely in padding (top-left corner here) scatter nothing.
    rng = np.random.default_rng(4)
    x = rand(dtype, (5, 6), rng, -4, 4)
    s = rand(dtype, (3, 4), rng, -2, 2)
    text = sas_module(ty, "5,6", "3,4", "size=3x2 stride=2x2 pad=1_1x2_1", init="1", scatter="multiply",
                      layout=layout)
    tol = 2e-2 if ty == "bf16" else 1e-6
    check(text, x, s, rtol=tol, atol=tol)


def test_select_and_scatter_builder_maxpool_grad():
    b = xlac.XlaBuilder("grad")
    x = ops.parameter(b, 0, "f32[1,6,6,2]")
    g = ops.parameter(b, 1, "f32[1,3,3,2]")
    sel = xlac.XlaBuilder("ge")
    ops.ge(ops.parameter(sel, 0, "f32[]"), ops.parameter(sel, 1, "f32[]"))
    add = xlac.XlaBuilder("add")
    ops.add(ops.parameter(add, 0, "f32[]"), ops.parameter(add, 1, "f32[]"))
    r = ops.select_and_scatter(x, sel.build(), (1, 2, 2, 1), (1, 2, 2, 1), "VALID", g, 0.0, add.build())
    comp = b.build(r)
    rng = np.random.default_rng(5)
    xv, gv = rand(np.float32, (1, 6, 6, 2), rng), rand(np.float32, (1, 3, 3, 2), rng)
    got = xlac.jit(comp)(xv, gv)
    # Each 2x2 block sends its gradient to its maximum.
    blocks = xv.reshape(1, 3, 2, 3, 2, 2).transpose(0, 1, 3, 5, 2, 4).reshape(1, 3, 3, 2, 4)
    mask = np.zeros_like(blocks)
    np.put_along_axis(mask, blocks.argmax(-1)[..., None], 1, axis=-1)
    want = (mask * gv[..., None]).reshape(1, 3, 3, 2, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(1, 6, 6, 2)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(xlac.ShapeError, match="select-and-scatter: source must have the dimensions"):
        ops.select_and_scatter(x, sel.build(), (1, 2, 2, 1), (1, 1, 1, 1), "VALID", g, 0.0, add.build())


# ----------------------------------------------------------------------------
# fft
# ----------------------------------------------------------------------------

def fft_module(in_t, out_t, kind, lengths):
    return module(f"  x = {in_t} parameter(0)\n  ROOT f = {out_t} fft(x), fft_type={kind}, "
                  f"fft_length={{{','.join(str(n) for n in lengths)}}}")


def crand(dtype, shape, rng):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("ty,dtype,tol", [("c64", np.complex64, 2e-5), ("c128", np.complex128, 1e-12)])
@pytest.mark.parametrize("dims,lengths", [((3, 8), (8,)), ((2, 7), (7,)), ((5, 6), (5, 6)), ((2, 3, 4, 5), (3, 4, 5)),
                                          ((1,), (1,)), ((2, 64), (64,)), ((2, 8, 12), (8, 12))])
def test_fft_ifft_against_numpy(ty, dtype, tol, dims, lengths):
    rng = np.random.default_rng(6)
    x = crand(dtype, dims, rng)
    shape = f"{ty}[{','.join(str(d) for d in dims)}]"
    axes = tuple(range(len(dims) - len(lengths), len(dims)))
    got = check(fft_module(shape, shape, "FFT", lengths), x, rtol=tol, atol=tol)
    np.testing.assert_allclose(got, np.fft.fftn(x.astype(np.complex128), axes=axes), rtol=tol, atol=tol * 10)
    got = check(fft_module(shape, shape, "IFFT", lengths), x, rtol=tol, atol=tol)
    np.testing.assert_allclose(got, np.fft.ifftn(x.astype(np.complex128), axes=axes), rtol=tol, atol=tol)


@pytest.mark.parametrize("dims,lengths", [((4, 16), (16,)), ((3, 9), (9,)), ((2, 6, 5), (6, 5)), ((2, 3, 4, 6), (3, 4, 6)),
                                          ((2, 1), (1,)), ((3, 32), (32,)), ((2, 4, 10), (4, 10)), ((2, 2), (2,))])
@pytest.mark.parametrize("real,cplx,tol", [("f32", "c64", 2e-5), ("f64", "c128", 1e-12)])
def test_rfft_irfft_against_numpy(dims, lengths, real, cplx, tol):
    rng = np.random.default_rng(7)
    dtype = np.float32 if real == "f32" else np.float64
    x = rng.standard_normal(dims).astype(dtype)
    axes = tuple(range(len(dims) - len(lengths), len(dims)))
    half = list(dims)
    half[-1] = lengths[-1] // 2 + 1
    rshape = f"{real}[{','.join(str(d) for d in dims)}]"
    cshape = f"{cplx}[{','.join(str(d) for d in half)}]"
    spec = check(fft_module(rshape, cshape, "RFFT", lengths), x, rtol=tol, atol=tol)
    np.testing.assert_allclose(spec, np.fft.rfftn(x.astype(np.float64), axes=axes), rtol=tol, atol=tol * 10)
    # IRFFT ignores the imaginary parts of the zero and Nyquist frequencies, as numpy does.
    y = crand(spec.dtype, half, rng)
    back = check(fft_module(cshape, rshape, "IRFFT", lengths), y, rtol=tol, atol=tol)
    np.testing.assert_allclose(back, np.fft.irfftn(y.astype(np.complex128), s=lengths, axes=axes),
                               rtol=tol, atol=tol)
    roundtrip = check(fft_module(cshape, rshape, "IRFFT", lengths), spec, rtol=tol, atol=tol)
    np.testing.assert_allclose(roundtrip, x, rtol=tol * 10, atol=tol * 10)


# Lengths for every path of the kernel: radix 8/4/2 passes, odd radices (3, 5, 7,
# 11, 13), Bluestein (a prime factor above 13: 17, 97, 4 * 31), one line or many
# (blocks of lanes with lines left over, tiles with points left over), several
# transformed dimensions, and enough work to be shared among threads (blocks of
# lines, or one long line's passes).
FFT_CASES = [((1, 17), (17,)), ((19, 7), (7,)), ((19, 64), (64,)), ((6, 60), (60,)), ((3, 1000), (1000,)),
             ((5, 97), (97,)), ((9, 124), (124,)), ((2, 143), (143,)), ((3, 17, 6), (17, 6)),
             ((4, 5, 33), (5, 33)), ((64, 256), (256,)), ((2, 48, 40), (48, 40)), ((1, 4096), (4096,)),
             ((1, 32768), (32768,)), ((1, 10007), (10007,))]


@pytest.mark.parametrize("dims,lengths", FFT_CASES)
@pytest.mark.parametrize("real,cplx,tol", [("f32", "c64", 2e-6), ("f64", "c128", 1e-14)])
def test_fft_lengths_against_numpy(dims, lengths, real, cplx, tol):
    """Every kind, relative to the largest magnitude of the reference (the
    error of an FFT is about eps * log n times the norm, not per element)."""
    rng = np.random.default_rng(11)
    dtype, ctype = (np.float32, np.complex64) if real == "f32" else (np.float64, np.complex128)
    axes = tuple(range(len(dims) - len(lengths), len(dims)))
    half = list(dims)
    half[-1] = lengths[-1] // 2 + 1
    shape = lambda t, d: f"{t}[{','.join(str(v) for v in d)}]"  # noqa: E731

    def close(got, ref):
        err = np.max(np.abs(got - ref)) / np.max(np.abs(ref))
        assert err < tol, (err, tol)
    x = crand(ctype, dims, rng)
    close(xlac.jit(fft_module(shape(cplx, dims), shape(cplx, dims), "FFT", lengths))(x),
          np.fft.fftn(x.astype(np.complex128), axes=axes))
    close(xlac.jit(fft_module(shape(cplx, dims), shape(cplx, dims), "IFFT", lengths))(x),
          np.fft.ifftn(x.astype(np.complex128), axes=axes))
    r = rng.standard_normal(dims).astype(dtype)
    close(xlac.jit(fft_module(shape(real, dims), shape(cplx, half), "RFFT", lengths))(r),
          np.fft.rfftn(r.astype(np.float64), axes=axes))
    y = crand(ctype, half, rng)
    close(xlac.jit(fft_module(shape(cplx, half), shape(real, dims), "IRFFT", lengths))(y),
          np.fft.irfftn(y.astype(np.complex128), s=lengths, axes=axes))


@pytest.mark.parametrize("dims", [(64, 256), (1, 32768)])
def test_fft_threads_give_the_same_bits(dims):
    """Blocks of lines (or a long line's passes) are shared among threads; a
    value is computed the same way whichever thread takes it."""
    rng = np.random.default_rng(12)
    x = crand(np.complex64, dims, rng)
    shape = f"c64[{dims[0]},{dims[1]}]"
    text = fft_module(shape, shape, "FFT", (dims[1],))
    np.testing.assert_array_equal(xlac.jit(text, num_threads=1)(x), xlac.jit(text, num_threads=2)(x))


def test_fft_layouts_and_builder():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    text = fft_module("f32[6,4]{0,1}", "c64[6,3]{0,1}", "RFFT", (4,))
    np.testing.assert_allclose(check(text, x, rtol=1e-5, atol=1e-5), np.fft.rfft(x), rtol=1e-5, atol=1e-5)
    b = xlac.XlaBuilder("fft")
    p = ops.parameter(b, 0, "c64[2,8]")
    f = ops.fft(p, "fft", (8,))
    back = ops.fft(f, "IFFT", (8,))
    assert str(f.shape) == "c64[2,8]{1,0}"
    y = crand(np.complex64, (2, 8), rng)
    np.testing.assert_allclose(xlac.jit(b.build(back))(y), y, rtol=1e-5, atol=1e-5)
    with pytest.raises(xlac.ShapeError, match="fft: RFFT needs an f32 or f64 operand"):
        ops.fft(p, "RFFT", (8,))
    with pytest.raises(xlac.ShapeError, match="fft: IRFFT: the last 1 dimensions"):
        ops.fft(p, "IRFFT", (8,))
