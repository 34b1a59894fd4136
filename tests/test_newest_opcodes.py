"""XLA's newest opcodes in every stage: ragged-dot (RaggedDot, in its three
modes), scan (Scan) and mulhi (MulHi) — text round trip, shape errors naming
the op and the rule, the evaluator against hand-computed values, JIT
(optimised and not) and AOT objects against the evaluator."""
from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac import ops
from test_aot import build_and_run, needs_cc, runtime_obj  # noqa: F401  (runtime_obj is a fixture)

RNG = np.random.default_rng(11)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _check(text: str, args, want, exact: bool = False) -> None:
    """The evaluator, optimised and unoptimised compiled code all give ``want``."""
    for who, got in (("evaluate", xlac.evaluate(text, *args)), ("jit", xlac.jit(text)(*args)),
                     ("jit O0", xlac.jit(text, optimize=False)(*args))):
        got_leaves = got if isinstance(got, tuple) else (got,)
        want_leaves = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got_leaves, want_leaves):
            assert np.asarray(g).shape == np.asarray(w).shape, who
            if exact:
                np.testing.assert_array_equal(g, w, err_msg=who)
            else:
                np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, err_msg=who)


def _round_trips(text: str) -> str:
    printed = xlac.parse_hlo(text).to_text()
    assert printed == xlac.parse_hlo(printed).to_text()
    return printed


# -----------------------------------------------------------------------------------
# ragged-dot
# -----------------------------------------------------------------------------------

def _ragged(lhs: str, rhs: str, gs: str, out: str, dims: str) -> str:
    return (f"HloModule rd\n\nENTRY e {{\n  a = {lhs} parameter(0)\n  b = {rhs} parameter(1)\n"
            f"  g = {gs} parameter(2)\n  ROOT r = {out} ragged-dot(a, b, g), {dims}\n}}\n")


NON_CONTRACTING = _ragged("f32[7,3]", "f32[3,3,2]", "s32[3]", "f32[7,2]",
                          "lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}")
CONTRACTING = _ragged("f32[2,6]", "f32[6,3]", "s64[3]", "f32[3,2,3]",
                      "lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}")
BATCHED = _ragged("f32[2,5,3]", "f32[3,2,3,4]", "s32[2,3]", "f32[2,5,4]",
                  "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={2}, "
                  "lhs_ragged_dims={1}, rhs_group_dims={0}")
RAGGED_BATCH = _ragged("f32[4,2,3]", "f32[4,3,5]", "s32[2]", "f32[4,2,5]",
                       "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, "
                       "lhs_ragged_dims={0}")


@pytest.mark.parametrize("text", [NON_CONTRACTING, CONTRACTING, BATCHED, RAGGED_BATCH])
def test_ragged_dot_text_round_trips(text):
    call = text.splitlines()[-2].split(" ragged-dot")[1]
    assert f"ragged-dot{call}" in _round_trips(text)


def test_ragged_dot_non_contracting_hand_values():
    x, w = _f32(7, 3), _f32(3, 3, 2)
    g = np.int32([2, 0, 4])                        # rows 0-1 use w[0], rows 2-5 w[2], row 6 no group: zeros
    want = np.concatenate([x[0:2] @ w[0], x[2:6] @ w[2], np.zeros((1, 2), np.float32)])
    _check(NON_CONTRACTING, (x, w, g), want)


def test_ragged_dot_groups_past_the_rows_are_cut():
    x, w = _f32(7, 3), _f32(3, 3, 2)
    want = np.concatenate([x[0:5] @ w[0], x[5:7] @ w[1]])
    _check(NON_CONTRACTING, (x, w, np.int32([5, 4, 9])), want)


def test_ragged_dot_contracting_hand_values():
    x, y = _f32(2, 6), _f32(6, 3)
    g = np.int64([1, 4, 1])
    want = np.stack([x[:, 0:1] @ y[0:1], x[:, 1:5] @ y[1:5], x[:, 5:6] @ y[5:6]])
    _check(CONTRACTING, (x, y, g), want)


def test_ragged_dot_batched_group_sizes_per_batch():
    x, w = _f32(2, 5, 3), _f32(3, 2, 3, 4)
    g = np.int32([[1, 2, 2], [3, 0, 1]])
    want = np.zeros((2, 5, 4), np.float32)
    for b in range(2):
        start = 0
        for j, n in enumerate(g[b]):
            want[b, start:start + n] = x[b, start:start + n] @ w[j, b]
            start += n
    _check(BATCHED, (x, w, g), want)


def test_ragged_dot_ragged_batch_is_a_dot():
    x, y = _f32(4, 2, 3), _f32(4, 3, 5)
    _check(RAGGED_BATCH, (x, y, np.int32([1, 3])), np.einsum("bij,bjk->bik", x, y))


def test_ragged_dot_builder_and_preferred_type():
    b = xlac.XlaBuilder("rd")
    x = ops.parameter(b, 0, xlac.shape("bf16[4,3]"), "x")
    w = ops.parameter(b, 1, xlac.shape("bf16[2,3,5]"), "w")
    g = ops.parameter(b, 2, xlac.shape("s32[2]"), "g")
    r = ops.ragged_dot(x, w, g, preferred_element_type=xlac.F32)
    assert str(r.shape) == "f32[4,5]{1,0}"
    comp = b.build(r)
    assert "lhs_ragged_dims={0}, rhs_group_dims={0}" in comp.as_hlo_text()
    import ml_dtypes
    xs, ws = _f32(4, 3).astype(ml_dtypes.bfloat16), _f32(2, 3, 5).astype(ml_dtypes.bfloat16)
    xf, wf = xs.astype(np.float32), ws.astype(np.float32)
    want = np.concatenate([xf[:1] @ wf[0], xf[1:] @ wf[1]])
    for got in (xlac.evaluate(comp, xs, ws, np.int32([1, 3])), xlac.jit(comp)(xs, ws, np.int32([1, 3]))):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("lhs, rhs, gs, out, dims, message", [
    ("f32[7,3]", "f32[3,3,2]", "s32[4]", "f32[7,2]",
     "lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}",
     "rhs group dimension 0 has size 3, group_sizes has 4 groups"),
    ("f32[7,3]", "f32[3,3,2]", "f32[3]", "f32[7,2]",
     "lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}",
     "group_sizes must be an integer array"),
    ("f32[7,3]", "f32[3,3,2]", "s32[3]", "f32[7,2]",
     "lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}",
     "must name one rhs dimension that is neither batch nor contracting"),
    ("f32[7,3]", "f32[3,3,2]", "s32[3]", "f32[7,2]",
     "lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0,1}, rhs_group_dims={0}",
     "lhs_ragged_dims=\\[0, 1\\] must name one dimension"),
    ("f32[2,6]", "f32[6,3]", "s32[3]", "f32[3,2,3]",
     "lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}, rhs_group_dims={0}",
     "rhs_group_dims=\\[0\\] must be empty when the lhs ragged dimension 1 is a contracting dimension"),
    ("f32[2,5,3]", "f32[3,2,3,4]", "s32[5,3]", "f32[2,5,4]",
     "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={2}, "
     "lhs_ragged_dims={1}, rhs_group_dims={0}",
     "group_sizes must have shape \\[g\\] or \\[2, 3\\]"),
    ("f32[7,3]", "f32[3,4,2]", "s32[3]", "f32[7,2]",
     "lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}",
     "contracting dimension sizes differ"),
])
def test_ragged_dot_shape_errors(lhs, rhs, gs, out, dims, message):
    with pytest.raises(xlac.ShapeError, match=f"ragged-dot: .*{message}"):
        xlac.jit(_ragged(lhs, rhs, gs, out, dims))


# -----------------------------------------------------------------------------------
# scan
# -----------------------------------------------------------------------------------

CUMSUM = """HloModule scan

add_F32 {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  add = f32[] add(lhs, rhs)
  ROOT t = (f32[], f32[]) tuple(add, add)
}

ENTRY Scan {
  input = f32[4]{0} parameter(0)
  init = f32[] constant(10)
  ROOT scan = (f32[4]{0}, f32[]) scan(input, init), dimensions={0}, num_carries=1, is_reverse=REVERSE, is_associative=true, to_apply=add_F32
}
"""

TWO_INPUTS = """HloModule scan2

body {
  a = f32[3] parameter(0)
  b = s32[3] parameter(1)
  c = f32[3] parameter(2)
  bf = f32[3] convert(b)
  m = f32[3] multiply(a, bf)
  n = f32[3] add(c, m)
  two = f32[] constant(2)
  twos = f32[3] broadcast(two), dimensions={}
  o = f32[3] multiply(n, twos)
  ROOT t = (f32[3], f32[3], f32[3]) tuple(n, o, n)
}

ENTRY e {
  x = f32[3,5] parameter(0)
  y = s32[3,5] parameter(1)
  z = f32[3] parameter(2)
  ROOT scan = (f32[3,5], f32[3,5], f32[3]) scan(x, y, z), dimensions={1}, num_carries=1, is_reverse=true, to_apply=body
}
"""


@pytest.mark.parametrize("reverse, outputs", [("false", [11, 13, 16, 20]), ("true", [20, 19, 17, 14])])
def test_scan_hand_values(reverse, outputs):
    text = CUMSUM.replace("REVERSE", reverse)
    assert f"is_reverse={reverse}" in _round_trips(text)
    x = np.float32([1, 2, 3, 4])
    _check(text, (x,), (np.float32(outputs), np.float32(20)), exact=True)


def test_scan_two_inputs_two_outputs_along_a_minor_dimension_in_reverse():
    x, y, z = _f32(3, 5), RNG.integers(-3, 3, (3, 5)).astype(np.int32), _f32(3)
    c, o1, o2 = z.copy(), np.zeros((3, 5), np.float32), np.zeros((3, 5), np.float32)
    for i in reversed(range(5)):
        c = c + x[:, i] * y[:, i]
        o1[:, i], o2[:, i] = c, 2 * c
    _check(TWO_INPUTS, (x, y, z), (o1, o2, c))


def test_scan_without_carries_is_a_map_along_the_dimension():
    text = """HloModule m
neg { a = f32[2] parameter(0)
  ROOT n = f32[2] negate(a) }
ENTRY e {
  x = f32[4,2] parameter(0)
  ROOT s = f32[4,2] scan(x), dimensions={0}, to_apply=neg
}
"""
    x = _f32(4, 2)
    _check(text, (x,), -x, exact=True)


def test_scan_builder():
    cb = xlac.XlaBuilder("step")
    a = ops.parameter(cb, 0, xlac.shape("s32[]"), "a")
    c = ops.parameter(cb, 1, xlac.shape("s32[]"), "c")
    step = cb.build(ops.tuple(cb, [ops.mul(a, c), ops.mul(a, c)]))
    b = xlac.XlaBuilder("cumprod")
    x = ops.parameter(b, 0, xlac.shape("s32[5]"), "x")
    r = ops.scan(x, ops.constant(b, np.int32(1)), step, 0, is_associative=True)
    assert str(r.shape) == "(s32[5]{0}, s32[])"
    comp = b.build(r)
    assert "scan(x, constant.2), dimensions={0}, num_carries=1, is_reverse=false, to_apply=step, " \
           "is_associative=true" in _round_trips(comp.as_hlo_text())
    xs = np.int32([1, 2, 3, 4, 5])
    for got in (xlac.evaluate(comp, xs), xlac.jit(comp)(xs)):
        np.testing.assert_array_equal(got[0], np.cumprod(xs))
        assert got[1] == 120


@pytest.mark.parametrize("entry, message", [
    ("x = f32[4] parameter(0)\n  y = f32[5] parameter(1)\n  i = f32[] constant(0)\n"
     "  ROOT s = (f32[4], f32[]) scan(x, y, i), dimensions={0}, num_carries=1, to_apply=step",
     "inputs must agree in the scan dimension 0: 4 and 5"),
    ("x = f32[4] parameter(0)\n  i = f32[] constant(0)\n"
     "  ROOT s = (f32[4], f32[]) scan(x, i), dimensions={1}, num_carries=1, to_apply=step",
     "scan dimension 1 is out of range"),
    ("x = f32[4] parameter(0)\n  i = s32[] constant(0)\n"
     "  ROOT s = (f32[4], f32[]) scan(x, i), dimensions={0}, num_carries=1, to_apply=step",
     "to_apply step must take the inputs' slices then the carries"),
    ("x = f32[4] parameter(0)\n  i = f32[] constant(0)\n"
     "  ROOT s = (f32[4], f32[]) scan(x, i), dimensions={0}, num_carries=3, to_apply=step",
     "num_carries=3 must be between 0 and the number of operands"),
])
def test_scan_shape_errors(entry, message):
    text = ("HloModule bad\nstep { a = f32[] parameter(0)\n  c = f32[] parameter(1)\n  n = f32[] add(a, c)\n"
            f"  ROOT t = (f32[], f32[]) tuple(n, n) }}\nENTRY e {{\n  {entry}\n}}\n")
    with pytest.raises(xlac.ShapeError, match=f"scan: {message}"):
        xlac.jit(text)


# -----------------------------------------------------------------------------------
# mulhi
# -----------------------------------------------------------------------------------

INT_TYPES = [("s8", np.int8), ("u8", np.uint8), ("s16", np.int16), ("u16", np.uint16), ("s32", np.int32),
             ("u32", np.uint32), ("s64", np.int64), ("u64", np.uint64)]


def _mulhi_module(t: str, n: int) -> str:
    return f"HloModule mh\n\nENTRY e {{\n  a = {t}[{n}] parameter(0)\n  b = {t}[{n}] parameter(1)\n" \
           f"  ROOT r = {t}[{n}] mulhi(a, b)\n}}\n"


def _mulhi_reference(a, b, dt):
    bits = np.iinfo(dt).bits
    out = []
    for x, y in zip(a.tolist(), b.tolist()):
        h = ((x * y) >> bits) & ((1 << bits) - 1)       # Python ints: exact
        out.append(h - (1 << bits) if np.iinfo(dt).min < 0 and h >= 1 << (bits - 1) else h)
    return np.array(out, dtype=dt)


@pytest.mark.parametrize("t, dt", INT_TYPES)
def test_mulhi_matches_exact_products(t, dt):
    info = np.iinfo(dt)
    a = RNG.integers(info.min, info.max, 64, dtype=dt, endpoint=True)
    b = RNG.integers(info.min, info.max, 64, dtype=dt, endpoint=True)
    a[:3], b[:3] = [info.max, info.max, info.min], [info.max, info.min, info.min]
    _check(_mulhi_module(t, 64), (a, b), _mulhi_reference(a, b, dt), exact=True)


def test_mulhi_hand_values_and_builder():
    b = xlac.XlaBuilder("mh")
    x = ops.parameter(b, 0, xlac.shape("u32[3]"), "x")
    comp = b.build(ops.mulhi(x, np.uint32(1 << 31)))
    assert "mulhi(" in _round_trips(comp.as_hlo_text())
    np.testing.assert_array_equal(xlac.jit(comp)(np.uint32([2, 3, 2**32 - 1])), np.uint32([1, 1, 2**31 - 1]))
    s = xlac.evaluate(_mulhi_module("s32", 2), np.int32([-1, 2**30]), np.int32([1, 8]))
    np.testing.assert_array_equal(s, np.int32([-1, 2]))


@pytest.mark.parametrize("t", ["f32", "pred"])
def test_mulhi_wants_integers(t):
    with pytest.raises(xlac.ShapeError, match=f"mulhi: needs an integer element type, got {t}"):
        xlac.jit(_mulhi_module(t, 2))


# -----------------------------------------------------------------------------------
# scaled-dot
# -----------------------------------------------------------------------------------

def _scaled(lt: str, st: str, lhs_scale: str = "[4,1]", rhs_scale: str = "[1,3]", out: str = "f32") -> str:
    return (f"HloModule sd\n\nENTRY e {{\n  a = {lt}[4,32] parameter(0)\n  sa = {st}{lhs_scale} parameter(1)\n"
            f"  b = {lt}[32,3] parameter(2)\n  sb = {st}{rhs_scale} parameter(3)\n"
            f"  ROOT r = {out}[4,3] scaled-dot(a, sa, b, sb), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}\n}}\n")


@pytest.mark.parametrize("lt, st", [("f32", "f32"), ("f8e4m3fn", "f8e8m0fnu"), ("bf16", "f32")])
def test_scaled_dot_scales_each_block(lt, st):
    import ml_dtypes
    dt = {"f32": np.float32, "f8e4m3fn": ml_dtypes.float8_e4m3fn, "bf16": ml_dtypes.bfloat16}[lt]
    sdt = {"f32": np.float32, "f8e8m0fnu": ml_dtypes.float8_e8m0fnu}[st]
    a, b = _f32(4, 32).astype(dt), _f32(32, 3).astype(dt)
    sa, sb = np.array([[1], [2], [0.5], [4]]).astype(sdt), np.array([[2, 0.25, 1]]).astype(sdt)
    want = (a.astype(np.float32) * sa.astype(np.float32)) @ (b.astype(np.float32) * sb.astype(np.float32))
    text = _scaled(lt, st)
    assert "scaled-dot(a, sa, b, sb), lhs_contracting_dims={1}, rhs_contracting_dims={0}" in _round_trips(text)
    _check(text, (a, sa, b, sb), want)


def test_scaled_dot_blocks_along_the_contracting_dimension_and_scalar_scales():
    a, b = _f32(4, 32), _f32(32, 3)
    sa = np.abs(_f32(4, 2)) + 0.5                          # blocks of 16 along the contraction
    want = (a * np.repeat(sa, 16, axis=1)) @ b             # a scalar scale leaves rhs as it is (as XLA)
    _check(_scaled("f32", "f32", "[4,2]", "[]"), (a, sa, b, np.float32(3)), want)


def test_scaled_dot_builder():
    b = xlac.XlaBuilder("sd")
    p = [ops.parameter(b, k, xlac.shape(s), f"p{k}") for k, s in
         enumerate(["f8e4m3fn[2,4]", "f8e8m0fnu[2,2]", "f8e4m3fn[4,3]", "f8e8m0fnu[2,3]"])]
    r = ops.scaled_dot(*p, (((1,), (0,)), ((), ())), preferred_element_type=xlac.F32)
    assert str(r.shape) == "f32[2,3]{1,0}"
    assert str(ops.scaled_dot(*p, (((1,), (0,)), ((), ()))).shape) == "bf16[2,3]{1,0}"


@pytest.mark.parametrize("text, message", [
    (_scaled("f32", "f32", "[4,3]"), "lhs_scale f32\\[4,3\\]\\{1,0\\} must be a scalar or have lhs"),
    (_scaled("f32", "f32", "[4]"), "lhs_scale .* must be a scalar or have lhs"),
    (_scaled("s32", "f32"), "lhs s32\\[4,32\\]\\{1,0\\} and lhs_scale .* must be floating point"),
])
def test_scaled_dot_shape_errors(text, message):
    with pytest.raises(xlac.ShapeError, match=f"scaled-dot: {message}"):
        xlac.jit(text)


# -----------------------------------------------------------------------------------
# AOT
# -----------------------------------------------------------------------------------

@needs_cc
@pytest.mark.parametrize("case", ["ragged-dot", "scan", "mulhi", "scaled-dot"])
def test_aot_objects_match_the_evaluator(case, tmp_path, runtime_obj):  # noqa: F811
    text, args = {
        "ragged-dot": (BATCHED, [_f32(2, 5, 3), _f32(3, 2, 3, 4), np.int32([[1, 2, 2], [3, 0, 1]])]),
        "scan": (TWO_INPUTS, [_f32(3, 5), RNG.integers(-3, 3, (3, 5)).astype(np.int32), _f32(3)]),
        "mulhi": (_mulhi_module("s64", 5), [np.int64([-7, 2**62, 3, -2**63, 5]), np.int64([3, 4, -1, -2**63, 7])]),
        "scaled-dot": (_scaled("f32", "f32", "[4,2]"), [_f32(4, 32), np.abs(_f32(4, 2)), _f32(32, 3), _f32(1, 3)]),
    }[case]
    want = xlac.evaluate(text, *args)
    want = list(want) if isinstance(want, tuple) else [want]
    _, outputs, _ = build_and_run(text, args, tmp_path, runtime_obj)
    for got, w in zip(outputs, want):
        np.testing.assert_allclose(got, w, rtol=2e-5, atol=2e-5)


def test_scaled_dot_global_scales_are_refused_by_name():
    from xlac.hlo.shape_inference import infer_shape
    with pytest.raises(xlac.ShapeError, match=r"scaled-dot: takes lhs, lhs_scale, rhs, rhs_scale \(4 operands\), "
                                              r"got 6 \(NVFP4 global scales are not supported yet\)"):
        infer_shape("scaled-dot", [xlac.shape("f32[2,2]")] * 6, {})


# -----------------------------------------------------------------------------------
# parsed and printed, refused by name in every stage
# -----------------------------------------------------------------------------------

REFUSED = {
    "shuffle": ("HloModule s\n\nENTRY e {\n  x = f32[8]{0} parameter(0)\n"
                "  ROOT s = f32[8]{0} shuffle(x), dimensions={0}, rotate={shifts={3}}\n}\n", "shuffle"),
    "collective-reduce": ("HloModule cr\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                          "  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  x = f32[8]{0} parameter(0)\n"
                          "  ROOT r = f32[8]{0} collective-reduce(x), replica_groups={}, has_dynamic_root=false, "
                          "to_apply=add\n}\n", "collective-reduce"),
    "dynamic-root": ("HloModule cb\n\nENTRY e {\n  x = f32[8]{0} parameter(0)\n  root = s32[] parameter(1)\n"
                     "  ROOT b = (f32[8]{0}, s32[]) collective-broadcast(x, root), replica_groups={}, "
                     "has_dynamic_root=true\n}\n", "collective-broadcast with has_dynamic_root=true"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
@pytest.mark.parametrize("stage", ["text", "evaluate", "jit", "compile_aot"])
def test_newest_unsupported_forms_are_refused_by_name(case, stage, tmp_path):
    text, what = REFUSED[case]
    if stage == "text":
        assert text.splitlines()[-2] in _round_trips(text)
        return
    args = [np.ones(8, np.float32)] + ([np.int32(0)] if case == "dynamic-root" else [])
    run = {"evaluate": lambda: xlac.evaluate(text, *args), "jit": lambda: xlac.jit(text)(*args),
           "compile_aot": lambda: xlac.compile_aot(text, tmp_path / "x.o")}[stage]
    with pytest.raises(xlac.UnsupportedError, match=f"not supported yet: {what}"):
        run()
