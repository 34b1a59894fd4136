"""The implicit-GEMM convolution kernel (``kernels/conv_gemm.py``).

Every case is checked against a float64 numpy reference (padding, cropping,
strides and kernel dilation applied to canonical N,C,spatial / O,I,spatial
arrays), with a tolerance relative to ``sum |x| |w|``, and some against the
evaluator.  The cases cover every form of the kernel: A read in place
through the indirection table (features unit-stride), the input copied to a
feature-minor buffer first (strided features, or an input computed inside the
fusion), K blocks of whole window
positions and of feature chunks (Ci > KC), direct tile stores and a
task C block written out through the layout, kOutput epilogues, and the fallback to the elemental loop.
"""
import re

import numpy as np
import pytest

import xlac
from xlac.codegen.kernels import conv_gemm

DTYPES = {"f32": np.float32, "f64": np.float64}
TOL = {"f32": 3e-6, "f64": 1e-13}


def ref_conv(x, w, strides, pads, rhs_dil, reverse=(), lhs_dil=None):
    """x: [N, C, *S], w: [O, I, *K] -> [N, O, *out] in float64, and the same
    with |x| and |w| (the scale of the rounding error)."""
    n = x.ndim - 2
    x, w = x.astype(np.float64), w.astype(np.float64)
    for d in reverse:
        w = np.flip(w, axis=2 + d)
    for d in range(n):
        if lhs_dil and lhs_dil[d] > 1:
            shape = list(x.shape)
            shape[2 + d] = (x.shape[2 + d] - 1) * lhs_dil[d] + 1
            y = np.zeros(shape)
            sl = [slice(None)] * x.ndim
            sl[2 + d] = slice(None, None, lhs_dil[d])
            y[tuple(sl)] = x
            x = y
        lo, hi = pads[d]
        sl = [slice(None)] * x.ndim
        sl[2 + d] = slice(max(-lo, 0), x.shape[2 + d] - max(-hi, 0))
        x = x[tuple(sl)]
        widths = [(0, 0)] * x.ndim
        widths[2 + d] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths)
    ks = w.shape[2:]
    eff = [(k - 1) * r + 1 for k, r in zip(ks, rhs_dil)]
    out_sp = [max((s - e) // st + 1, 0) for s, e, st in zip(x.shape[2:], eff, strides)]
    out = np.zeros([x.shape[0], w.shape[0]] + out_sp)
    scale = np.zeros_like(out)
    for pos in np.ndindex(*ks):
        win = tuple(slice(p * r, p * r + (o - 1) * st + 1, st)
                    for p, r, o, st in zip(pos, rhs_dil, out_sp, strides))
        patch = x[(slice(None), slice(None)) + win]
        wk = w[(slice(None), slice(None)) + pos]
        out += np.einsum("nc...,oc->no...", patch, wk)
        scale += np.einsum("nc...,oc->no...", np.abs(patch), np.abs(wk))
    return out, scale


def _perm(labels: str, first: str, second: str):
    """Canonical (first, second, spatial...) dimension of each labelled dimension."""
    return [0 if ch == first else 1 if ch == second else 2 + int(ch) for ch in labels]


def window_text(size, strides, pads, rhs_dil, reverse=(), lhs_dil=None):
    parts = ["size=" + "x".join(map(str, size))]
    if any(s != 1 for s in strides):
        parts.append("stride=" + "x".join(map(str, strides)))
    if any(p != (0, 0) for p in pads):
        parts.append("pad=" + "x".join(f"{lo}_{hi}" for lo, hi in pads))
    if lhs_dil and any(r != 1 for r in lhs_dil):
        parts.append("lhs_dilate=" + "x".join(map(str, lhs_dil)))
    if any(r != 1 for r in rhs_dil):
        parts.append("rhs_dilate=" + "x".join(map(str, rhs_dil)))
    if reverse:
        parts.append("rhs_reversal=" + "x".join("1" if d in reverse else "0" for d in range(len(size))))
    return " ".join(parts)


def shape_text(dt, dims, layout=None):
    lay = "" if layout is None else "{" + layout + "}"
    return f"{dt}[{','.join(map(str, dims))}]{lay}"


def same_pads(in_sizes, ksizes, strides, rhs_dil):
    pads = []
    for s, k, st, r in zip(in_sizes, ksizes, strides, rhs_dil):
        eff = (k - 1) * r + 1
        out = -(-s // st)
        total = max((out - 1) * st + eff - s, 0)
        pads.append((total // 2, total - total // 2))
    return pads


def run_conv(x_shape, w_shape, labels="bf01_oi01->bf01", strides=None, pads=None, rhs_dil=None,
             reverse=(), dt="f32", layouts=(None, None, None), epilogue=None, num_threads=None,
             seed=0, check_evaluator=False, expect=None, lhs_dil=None):
    """A convolution of canonical shapes ``x_shape`` [N, C, *S] and ``w_shape``
    [O, I, *K], laid out as ``labels`` says; returns the executable and the result.

    ``epilogue``: "bias_relu" or "convert" (a kOutput fusion).  ``expect``: a
    dict of plan attributes the kernel must have chosen."""
    n = len(x_shape) - 2
    strides = strides or (1,) * n
    pads = pads or [(0, 0)] * n
    rhs_dil = rhs_dil or (1,) * n
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, x_shape).astype(DTYPES[dt])
    w = rng.uniform(-1, 1, w_shape).astype(DTYPES[dt])
    ref, scale = ref_conv(x, w, strides, pads, rhs_dil, reverse, lhs_dil)
    lhs_l, rest = labels.split("_")
    rhs_l, out_l = rest.split("->")
    xp, wp, op = _perm(lhs_l, "b", "f"), _perm(rhs_l, "o", "i"), _perm(out_l, "b", "f")
    xl, wl = x.transpose(xp), w.transpose(wp)
    ref_l, scale_l = ref.transpose(op), scale.transpose(op)
    window = window_text(w_shape[2:], strides, pads, rhs_dil, reverse, lhs_dil)
    lines = [f"  x = {shape_text(dt, xl.shape, layouts[0])} parameter(0)",
             f"  w = {shape_text(dt, wl.shape, layouts[1])} parameter(1)"]
    conv = (f"convolution(x, w), window={{{window}}}, dim_labels={labels}")
    out_s = shape_text(dt, ref_l.shape, layouts[2])
    args = [xl, wl]
    if epilogue is None:
        lines.append(f"  ROOT c = {out_s} {conv}")
    else:
        f = out_l.index("f")
        co = ref_l.shape[f]
        bias = rng.uniform(-1, 1, co).astype(DTYPES[dt])
        args.append(bias)
        lines += [f"  c = {out_s} {conv}",
                  f"  bias = {dt}[{co}] parameter(2)",
                  f"  bb = {out_s} broadcast(bias), dimensions={{{f}}}",
                  f"  s = {out_s} add(c, bb)",
                  f"  zero = {dt}[] constant(0)",
                  f"  z = {out_s} broadcast(zero), dimensions={{}}"]
        shape_b = [1] * ref_l.ndim
        shape_b[f] = co
        ref_l = ref_l + bias.astype(np.float64).reshape(shape_b)
        scale_l = scale_l + np.abs(bias.astype(np.float64)).reshape(shape_b)
        if epilogue == "bias_relu":
            lines.append(f"  ROOT r = {out_s} maximum(s, z)")
            ref_l = np.maximum(ref_l, 0)
        elif epilogue == "convert":
            lines.append(f"  ROOT r = {out_s.replace(dt, 'f64', 1)} convert(s)")
        else:
            raise ValueError(epilogue)
    text = "HloModule m\n\nENTRY e {\n" + "\n".join(lines) + "\n}\n"
    module = xlac.parse_hlo(text)
    exe = xlac.jit(module, num_threads=num_threads) if num_threads else xlac.jit(module)
    got = exe(*args)
    assert got.shape == ref_l.shape
    err = np.abs(got.astype(np.float64) - ref_l)
    bound = TOL[dt] * (scale_l + 1)
    assert np.all(err <= bound), f"max error {err.max()} (bound {bound.max()})"
    if check_evaluator:
        want = xlac.evaluate(module, *args)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    plan = conv_plan(exe)
    assert plan is not None, "the convolution was not compiled as a GEMM"
    if expect is not None:
        for key, value in expect.items():
            assert getattr(plan, key) == value, (key, getattr(plan, key), value)
    return exe, got, args


def conv_plan(exe):
    """The plan of the (only) convolution kernel of an executable, or None."""
    for inst in exe.optimized_hlo.entry.instructions:
        if inst.opcode == "convolution" or (inst.opcode == "fusion" and conv_gemm.holds_convolution(inst)):
            return conv_gemm.plan_conv(inst)
    raise AssertionError("no convolution")


# ---------------------------------------------------------------------------
# Layouts through dim_labels and through layouts
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("labels", ["b01f_01io->b01f", "bf01_oi01->bf01", "b01f_o01i->bf01",
                                    "f01b_i01o->01bf", "01bf_01oi->b01f"])
def test_dim_labels(labels):
    run_conv((2, 12, 7, 9), (20, 12, 3, 3), labels, pads=[(1, 1), (1, 1)], check_evaluator=True)


@pytest.mark.parametrize("layouts", [("0,3,2,1", "0,1,2,3", "3,2,1,0"),   # NCHW input in memory
                                     ("3,2,1,0", "3,2,1,0", "0,3,2,1"),   # output features major
                                     ("3,0,2,1", "2,3,1,0", "1,2,3,0"),
                                     ("3,2,1,0:P(3,7,5,20)", "3,2,1,0:P(3,2,17,24)",  # padded
                                      "3,2,1,0:P(3,6,6,26)"),
                                     ("0,3,2,1:P(3,6,5,18)", None, "0,3,2,1:P(3,6,5,25)")])
def test_layouts(layouts):
    run_conv((3, 16, 6, 5), (24, 16, 3, 2), "b01f_01io->b01f", pads=[(1, 1), (0, 1)], layouts=layouts)


def test_modes():
    """Each form of the kernel is picked where it should be."""
    # NHWC: the input is read in place through the table; direct tile stores.
    run_conv((2, 16, 8, 8), (32, 16, 3, 3), "b01f_01io->b01f", pads=[(1, 1)] * 2,
             expect={"copy_input": False, "direct": True})
    # NCHW: a feature-minor copy of the input; output features strided: C block.
    run_conv((2, 16, 8, 8), (32, 16, 3, 3), "bf01_oi01->bf01", pads=[(1, 1)] * 2,
             expect={"copy_input": True, "direct": False})
    run_conv((2, 3, 8, 8), (32, 3, 3, 3), "bf01_oi01->bf01", pads=[(1, 1)] * 2,
             expect={"copy_input": True, "direct": False})
    # One feature: its stride does not matter.
    run_conv((2, 1, 8, 8), (32, 1, 3, 3), "bf01_oi01->b01f", pads=[(1, 1)] * 2,
             expect={"copy_input": False, "direct": True})


# ---------------------------------------------------------------------------
# Windows: strides, padding, dilation, reversal, 1-D and 3-D
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("strides,pads,rhs_dil", [
    ((1, 1), "same", (1, 1)),
    ((2, 2), "same", (1, 1)),
    ((2, 1), "valid", (1, 1)),
    ((1, 2), [(2, 0), (1, 3)], (1, 1)),          # explicit, asymmetric
    ((2, 2), [(-1, 2), (2, -1)], (1, 1)),        # negative padding crops
    ((1, 1), [(-2, -1), (0, 0)], (1, 1)),        # cropping only
    ((1, 1), "same", (2, 3)),                    # kernel dilation
    ((2, 2), [(1, 0), (3, 2)], (2, 2)),
])
@pytest.mark.parametrize("labels", ["b01f_01io->b01f", "bf01_oi01->bf01"])
def test_windows(strides, pads, rhs_dil, labels):
    x_shape, w_shape = (2, 10, 11, 9), (12, 10, 3, 3)
    if pads == "same":
        pads = same_pads(x_shape[2:], w_shape[2:], strides, rhs_dil)
    elif pads == "valid":
        pads = [(0, 0), (0, 0)]
    run_conv(x_shape, w_shape, labels, strides, pads, rhs_dil)


def test_filter_gradient_form():
    """The form of a kernel gradient: the window spans the whole input (many
    window positions, many K blocks), batch and feature roles swapped."""
    exe, _, _ = run_conv((4, 32, 10, 10), (16, 32, 10, 10), "f01b_i01o->01bf", pads=[(1, 1), (1, 1)],
                         check_evaluator=True)
    plan = conv_plan(exe)
    assert plan.nseg == 100 and plan.nkb > 10


@pytest.mark.parametrize("labels", ["b01f_01io->b01f", "bf01_oi01->bf01"])
def test_lhs_dilation(labels):
    """Base dilation (transposed convolutions, input gradients of strided ones):
    the holes are zero rows of the table."""
    # The input gradient of a 3x3 stride-2 SAME convolution of a 9x9 input.
    run_conv((2, 12, 5, 5), (10, 12, 3, 3), labels, pads=[(1, 1), (1, 1)], lhs_dil=(2, 2),
             reverse=(0, 1), check_evaluator=True)
    run_conv((1, 9, 4, 6), (7, 9, 2, 3), labels, (2, 1), [(1, 2), (-1, 0)], (1, 2), lhs_dil=(3, 2))


def test_reversal():
    run_conv((2, 9, 7, 6), (10, 9, 3, 2), "b01f_01io->b01f", (1, 2), [(1, 1), (0, 1)], (2, 1),
             reverse=(0,), check_evaluator=True)


def test_1d():
    # The corpus case: rhs dilation, NCW.
    run_conv((2, 4, 20), (6, 4, 3), "bf0_oi0->bf0", rhs_dil=(2,), check_evaluator=True)
    run_conv((3, 40, 50), (33, 40, 5), "b0f_0io->b0f", (2,), [(2, 2)], expect={"copy_input": False})
    run_conv((1, 1, 100), (7, 1, 9), "b0f_0io->b0f", pads=[(4, 4)])       # Ci = 1


def test_0d():
    """No spatial dimensions (jax's ``conv_general_dilated`` with an empty
    window: a matrix product): its table builder, specialised on no dimension,
    is named and loaded from the library like any other."""
    text = """HloModule conv0d
ENTRY e {
  a = f32[5,3]{1,0} parameter(0)
  b = f32[4,3]{1,0} parameter(1)
  ROOT c = f32[5,4]{1,0} convolution(a, b), dim_labels=bf_oi->bf
}"""
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, (5, 3)).astype(np.float32), rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    np.testing.assert_allclose(xlac.jit(text)(a, b), a @ b.T, rtol=1e-6, atol=1e-6)


def test_3d():
    run_conv((1, 8, 5, 4, 6), (9, 8, 2, 2, 3), "b012f_012io->b012f", (2, 2, 2),
             [(0, 1), (0, 0), (1, 0)], check_evaluator=True)
    run_conv((2, 12, 6, 5, 4), (10, 12, 3, 3, 3), "bf012_oi012->bf012", pads=[(1, 1)] * 3,
             rhs_dil=(1, 2, 1))


# ---------------------------------------------------------------------------
# Odd sizes and K blocking
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("x_shape,w_shape,pads", [
    ((1, 64, 7, 7), (64, 64, 1, 1), None),             # 1x1 kernel, batch 1
    ((2, 300, 5, 5), (40, 300, 1, 1), None),           # Ci > KC: feature chunks; N edge
    ((2, 600, 4, 3), (17, 600, 3, 1), [(1, 1), (0, 0)]),  # chunks of several positions
    ((1, 1, 9, 9), (8, 1, 3, 3), [(1, 1), (1, 1)]),    # Ci = 1
    ((2, 24, 9, 9), (1, 24, 3, 3), [(1, 1), (1, 1)]),  # Co = 1
    ((1, 64, 5, 13), (70, 64, 1, 5), [(0, 0), (2, 2)]),  # 5 positions: K blocks 3 + 2
    ((3, 13, 5, 7), (31, 13, 2, 3), None),             # nothing a multiple of a tile
    ((1, 8, 1, 1), (5, 8, 1, 1), None),                # M = 1
    ((1, 20, 3, 3), (9, 20, 3, 3), [(0, 0), (0, 0)]),  # M = 1, K = 180
])
@pytest.mark.parametrize("labels", ["b01f_01io->b01f", "bf01_oi01->bf01"])
def test_odd_sizes(x_shape, w_shape, pads, labels):
    run_conv(x_shape, w_shape, labels, pads=pads)


@pytest.mark.parametrize("labels", ["b01f_01io->b01f", "bf01_oi01->bf01"])
def test_f64(labels):
    run_conv((2, 20, 7, 8), (19, 20, 3, 3), labels, (2, 1), [(1, 1), (1, 1)], dt="f64")
    run_conv((1, 250, 4, 4), (9, 250, 1, 1), labels, dt="f64")     # f64 KC = 192: chunks
    run_conv((1, 3, 6, 6), (9, 3, 3, 3), labels, pads=[(1, 1)] * 2, dt="f64")


# ---------------------------------------------------------------------------
# Output fusions
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("labels", ["b01f_01io->b01f", "bf01_oi01->bf01"])
@pytest.mark.parametrize("dt", ["f32", "f64"])
def test_bias_relu(labels, dt):
    exe, _, _ = run_conv((2, 16, 9, 9), (24, 16, 3, 3), labels, (2, 2), [(1, 1), (1, 1)], dt=dt,
                         epilogue="bias_relu", check_evaluator=True)
    assert "kind=kOutput" in exe.optimized_hlo.to_text()
    assert conv_plan(exe) is not None
    from xlac.codegen.compiler import KERNELS
    names = [c.name for c in KERNELS.candidates("fusion:kOutput")]
    # The convolution kernels first (the 8-bit AMX one, then the implicit GEMM), then the dot's.
    assert names[:2] == ["convolution.amx", conv_gemm.IMPLICIT_GEMM.name]
    assert "dot.gemm" in names and names[-1] == "loop"
    assert KERNELS.candidates("convolution")[1] is conv_gemm.IMPLICIT_GEMM


def test_convert_epilogue():
    """The root converts (f32 -> f64): the result cannot accumulate; the task's
    C block does, across the K blocks."""
    exe, _, _ = run_conv((2, 64, 6, 6), (24, 64, 3, 3), "b01f_01io->b01f", pads=[(1, 1)] * 2,
                         epilogue="convert", check_evaluator=True)
    plan = conv_plan(exe)
    assert plan is not None and plan.nkb > 1 and not plan.acc_in_output and not plan.direct


def _fused_operands_text(x_labels_transposed: bool) -> str:
    x_line = ("  xt = f32[2,16,9,9] parameter(0)\n"
              "  x = f32[2,9,9,16] transpose(xt), dimensions={0,2,3,1}\n") if x_labels_transposed else \
        "  x = f32[2,9,9,16] parameter(0)\n"
    return ("HloModule m\n\nENTRY e {\n" + x_line +
            "  wt = f32[24,16,3,3] parameter(1)\n"
            "  bias = f32[24] parameter(2)\n"
            "  w = f32[3,3,16,24] transpose(wt), dimensions={2,3,1,0}\n"
            "  wn = f32[3,3,16,24] negate(w)\n"
            "  c = f32[2,9,9,24] convolution(x, wn), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n"
            "  bb = f32[2,9,9,24] broadcast(bias), dimensions={3}\n"
            "  s = f32[2,9,9,24] add(c, bb)\n"
            "  z = f32[] constant(0)\n"
            "  zb = f32[2,9,9,24] broadcast(z), dimensions={}\n"
            "  ROOT r = f32[2,9,9,24] maximum(s, zb)\n}\n")


@pytest.mark.parametrize("transposed_input", [False, True])
def test_fused_operand_producers(transposed_input):
    """Kernel and input computed inside the output fusion (the kernel is read
    through its generator while packing B; the input is copied first)."""
    module = xlac.parse_hlo(_fused_operands_text(transposed_input))
    exe = xlac.jit(module)
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (2, 16, 9, 9) if transposed_input else (2, 9, 9, 16)).astype(np.float32)
    args = [x, rng.uniform(-1, 1, (24, 16, 3, 3)).astype(np.float32),
            rng.uniform(-1, 1, 24).astype(np.float32)]
    np.testing.assert_allclose(exe(*args), xlac.evaluate(module, *args), rtol=1e-4, atol=1e-4)
    plan = conv_plan(exe)
    assert plan is not None
    fused = [i for i in exe.optimized_hlo.entry.instructions if i.opcode == "fusion"]
    if transposed_input and any(i.opcode == "transpose" and i.operands[0].opcode == "parameter"
                                and i.shape.dimensions == (2, 9, 9, 16)
                                for f in fused for i in f.attrs["calls"].instructions):
        assert plan.copy_input


def test_dot_output_fusions_still_use_the_dot_kernel():
    text = """HloModule m

ENTRY e {
  a = f32[64,48] parameter(0)
  b = f32[48,40] parameter(1)
  d = f32[64,40] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  zb = f32[64,40] broadcast(z), dimensions={}
  ROOT r = f32[64,40] maximum(d, zb)
}
"""
    module = xlac.parse_hlo(text)
    exe = xlac.jit(module)
    rng = np.random.default_rng(4)
    args = [rng.uniform(-1, 1, (64, 48)).astype(np.float32), rng.uniform(-1, 1, (48, 40)).astype(np.float32)]
    np.testing.assert_allclose(exe(*args), xlac.evaluate(module, *args), rtol=1e-5, atol=1e-5)
    fusion = [i for i in exe.optimized_hlo.entry.instructions if i.opcode == "fusion"][0]
    assert not conv_gemm.holds_convolution(fusion) and conv_gemm.plan_conv(fusion) is None
    from xlac.codegen.kernels import dot as dot_kernel
    assert dot_kernel.plan_dot(fusion) is not None


# ---------------------------------------------------------------------------
# Fallbacks and threads
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("extra,window,w_shape,out_shape", [
    (", feature_group_count=2", "size=3x3 pad=1_1x1_1", "f32[3,3,4,6]", "f32[2,5,5,6]"),
    (", feature_group_count=8", "size=3x3 pad=1_1x1_1", "f32[3,3,1,16]", "f32[2,5,5,16]"),
])
def test_declined_cases_use_the_elemental_loop(extra, window, w_shape, out_shape):
    text = f"""HloModule m

ENTRY e {{
  x = f32[2,5,5,8] parameter(0)
  w = {w_shape} parameter(1)
  ROOT c = {out_shape} convolution(x, w), window={{{window}}}, dim_labels=b01f_01io->b01f{extra}
}}
"""
    module = xlac.parse_hlo(text)
    exe = xlac.jit(module)
    assert conv_plan(exe) is None
    rng = np.random.default_rng(5)
    wdims = [int(v) for v in w_shape[4:-1].split(",")]
    args = [rng.uniform(-1, 1, (2, 5, 5, 8)).astype(np.float32), rng.uniform(-1, 1, wdims).astype(np.float32)]
    np.testing.assert_allclose(exe(*args), xlac.evaluate(module, *args), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("labels,epilogue", [("b01f_01io->b01f", "bias_relu"), ("bf01_oi01->bf01", None),
                                             ("b01f_01io->b01f", None)])
def test_threads_match_serial(labels, epilogue):
    """Several tasks (and copy / B-packing phases): 2 threads give the serial result bit for bit."""
    kw = dict(labels=labels, pads=[(1, 1), (1, 1)], epilogue=epilogue, seed=7)
    exe2, got2, _ = run_conv((4, 32, 16, 16), (48, 32, 3, 3), num_threads=2, **kw)
    assert conv_plan(exe2).n_tasks > 1
    _, got1, _ = run_conv((4, 32, 16, 16), (48, 32, 3, 3), num_threads=1, **kw)
    np.testing.assert_array_equal(got1, got2)


# ---------------------------------------------------------------------------
# The micro-kernel from the GEMM library
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ["f32", "f64"])
@pytest.mark.parametrize("x_shape,w_shape,labels,kw", [
    # direct stores with M and N edges, a bias + relu epilogue
    ((2, 5, 9, 7), (19, 5, 3, 3), "b01f_01io->b01f", dict(pads=[(1, 1), (1, 1)], epilogue="bias_relu")),
    # NCHW: the task's C block, Ci > KC (feature chunks, c0 > 0)
    ((1, 300, 5, 5), (40, 300, 3, 3), "bf01_oi01->bf01", {}),
    # a narrow N (one vector or less) and strides
    ((3, 4, 11, 11), (6, 4, 2, 2), "b01f_01io->b01f", dict(strides=(2, 2))),
])
def test_library_code_gives_the_module_bits(dt, x_shape, w_shape, labels, kw, monkeypatch):
    """The library's shape-generic micro-kernel, table builder and B packing
    compute every tile as the module's own code (sizes as constants) does,
    bit for bit, and the module only declares them."""
    exe, got, _ = run_conv(x_shape, w_shape, labels=labels, dt=dt, **kw)
    ir_text = exe.llvm_ir
    assert "xlac.conv.uk." not in ir_text
    # An OIHW kernel's rows (window positions, then input features) are not
    # one stride apart: the module packs it.
    for fn in ("uk",) + (("pack",) if labels != "bf01_oi01->bf01" else ()):
        assert re.search(rf"xlac_gemm_\w+_conv\w+_{fn}\b", ir_text), fn
    assert re.search(r"xlac_gemm_\w+_table\d+_c[01]+(_e)?_table\b", ir_text)
    monkeypatch.setattr(conv_gemm, "LIBRARY_MICRO_KERNEL", False)
    monkeypatch.setattr(conv_gemm, "LIBRARY_TABLE_AND_PACK", False)
    xlac.clear_caches()         # the in-memory cache would hand back the library build
    own, got_own, _ = run_conv(x_shape, w_shape, labels=labels, dt=dt, **kw)
    assert "xlac.conv.uk." in own.llvm_ir and "xlac_gemm_" not in own.llvm_ir
    np.testing.assert_array_equal(got, got_own)


@pytest.mark.parametrize("x_shape,w_shape,labels,kw", [
    # 1-D and 3-D windows (padded to the library's three), rhs dilation, negative padding
    ((2, 3, 30), (5, 3, 4), "bf0_oi0->bf0", dict(pads=[(2, -1)], rhs_dil=(2,))),
    ((1, 2, 5, 6, 7), (4, 2, 2, 3, 2), "b012f_012io->b012f", dict(pads=[(1, 0), (0, 1), (1, 1)])),
    # batch not outermost in the result's pixels, the kernel transposed (B's K index unit-stride)
    ((3, 4, 6, 5), (7, 4, 3, 3), "b01f_o01i->01bf", dict(pads=[(1, 1), (1, 1)], strides=(2, 1))),
    # a reversed window: B through a generator, packed by the module
    ((2, 3, 7, 7), (5, 3, 3, 3), "b01f_01io->b01f", dict(reverse=(0, 1))),
])
def test_library_table_geometry(x_shape, w_shape, labels, kw, monkeypatch):
    """Geometries the library's table builder reads from its array (dimensions
    padded in front, pixels counted up across the batch) give the module's bits."""
    _, got, _ = run_conv(x_shape, w_shape, labels=labels, **kw)
    monkeypatch.setattr(conv_gemm, "LIBRARY_TABLE_AND_PACK", False)
    xlac.clear_caches()
    _, got_own, _ = run_conv(x_shape, w_shape, labels=labels, **kw)
    np.testing.assert_array_equal(got, got_own)


def test_conv_library_symbols_parse_and_carry_the_code_hash():
    from xlac.codegen import gemm_library
    for v, tag in ((gemm_library.ConvVariant(xlac.F32, 8, 32, 16), "f32_conv8x32v16_bn"),
                   (gemm_library.ConvVariant(xlac.F32, 8, 16, 16, "g", xlac.BF16), "f32_conv8x16v16_bg_wbf16"),
                   (gemm_library.TableVariant(xlac.F64, 8, "10", True), "f64_table8_c10_e"),
                   (gemm_library.TableVariant(xlac.F32, 4, "0", False), "f32_table4_c0")):
        h, text = gemm_library.variant_ir(v)
        for fn in v.functions:
            name = gemm_library.symbol(v, fn)
            assert name == f"xlac_gemm_{h}_{tag}_{fn}" and name in text
            assert gemm_library._parse_name(name.encode()) == (h, v)
    with pytest.raises(RuntimeError, match="another library version"):
        gemm_library.ensure_symbols(b"\0" + name.replace(h, "0" * 16).encode() + b"\0")


def test_tile_epilogue_loops_are_parallel(monkeypatch):
    """A finished tile's epilogue (read, bias, relu, write back at one index)
    is marked parallel, so LLVM vectorises it without overlap checks; the
    bits are those of the unmarked loops."""
    from xlac.codegen import gemm_kernel
    kw = dict(labels="b01f_01io->b01f", pads=[(1, 1), (1, 1)], epilogue="bias_relu")
    exe, got, _ = run_conv((2, 8, 9, 9), (16, 8, 3, 3), **kw)
    assert "llvm.loop.parallel_accesses" in exe.llvm_ir
    monkeypatch.setattr(gemm_kernel, "PARALLEL_EPILOGUE", False)
    xlac.clear_caches()
    plain, got_plain, _ = run_conv((2, 8, 9, 9), (16, 8, 3, 3), **kw)
    assert "llvm.loop.parallel_accesses" not in plain.llvm_ir
    np.testing.assert_array_equal(got, got_plain)


def test_a_tiles_epilogue_reads_arrays_of_cs_layout_at_the_elements_offset(monkeypatch):
    """A convolution's epilogue (bias, residual, relu) reads the residual, of
    the output's shape and layout, at the element's offset in the tile
    rather than through the row's (batch, height, width) components: less
    index arithmetic for LLVM, the same bits."""
    from xlac.codegen import gemm_kernel
    text = """HloModule c
ENTRY e {
  x = f32[2,8,8,16]{3,2,1,0} parameter(0)
  w = f32[3,3,16,32]{3,2,1,0} parameter(1)
  res = f32[2,8,8,32]{3,2,1,0} parameter(2)
  bias = f32[32]{0} parameter(3)
  conv = f32[2,8,8,32]{3,2,1,0} convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[2,8,8,32]{3,2,1,0} broadcast(bias), dimensions={3}
  s = f32[2,8,8,32]{3,2,1,0} add(conv, bb)
  t = f32[2,8,8,32]{3,2,1,0} add(s, res)
  z = f32[] constant(0)
  zb = f32[2,8,8,32]{3,2,1,0} broadcast(z), dimensions={}
  ROOT r = f32[2,8,8,32]{3,2,1,0} maximum(t, zb)
}"""
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((2, 8, 8, 16), (3, 3, 16, 32), (2, 8, 8, 32), (32,))]
    got, multiplies = {}, {}
    for linear in (False, True):
        monkeypatch.setattr(gemm_kernel, "LINEAR_EPILOGUE", linear)
        xlac.clear_caches()
        exe = xlac.jit(text)
        got[linear] = np.asarray(exe(*args))
        multiplies[linear] = exe.llvm_ir.count("mul nsw nuw")
    assert multiplies[True] < multiplies[False], multiplies
    assert got[True].tobytes() == got[False].tobytes()
    np.testing.assert_allclose(got[True], xlac.evaluate(text, *args), rtol=1e-4, atol=1e-4)
