"""bf16 arithmetic rounds to bf16 after every op (docs/numerics.md, "bf16
arithmetic"), and the code generator's cheaper roundings give the bits of the
general one (round to nearest even, NaN quieted: ml_dtypes' algorithm):

* after ``add``, ``subtract``, ``multiply``, ``divide`` of bf16 values (their
  NaNs are quiet with the low 16 bits zero) the rounding has no NaN case;
  with an operand that may be constant (LLVM may fold ``x * 1`` to ``x``) it
  keeps it, so a signaling NaN still comes out quiet;
* bf16 ``tanh`` rounds inside the approximation, with Veltkamp's split.

Every bf16 value meets every other once (a random pairing): ties, overflow to
inf, subnormal results, infinities and NaNs of every payload, quiet and
signaling.  Compiled for this machine, an AVX2 CPU (haswell) and one without
FMA and AVX (x86-64-v2), against the evaluator (numpy in f32, rounded by
ml_dtypes).
"""
import ctypes
import re

import ml_dtypes
import numpy as np
import pytest
from llvmlite import binding as llvm
from llvmlite import ir

import xlac
from xlac import ops
from xlac.codegen import math_approx, target
from xlac.codegen.jit import parse_and_optimize
from xlac.codegen.target import host_target_machine

BF16 = ml_dtypes.bfloat16
N = 1 << 16
CPUS = ["host", "haswell", "x86-64-v2"]


def _every_bf16():
    return np.arange(N, dtype=np.uint16).view(BF16)


def _pairs():
    x = _every_bf16()
    return x, np.random.default_rng(5).permutation(x)


def _bits(a):
    return np.asarray(a).view(np.uint16)


def _isnan(a):
    return np.isnan(np.asarray(a).astype(np.float32))


def assert_rounded_as_evaluator(got, want, what):
    """The same bits where the result is a number; NaN where the evaluator has
    NaN, quiet (which operand's payload an op keeps is the hardware's choice)."""
    nan = _isnan(want)
    assert (_isnan(got) == nan).all(), what
    bad = np.nonzero((_bits(got) != _bits(want)) & ~nan)[0]
    assert not len(bad), f"{what}: {len(bad)} differ, first at {bad[:5]}: " \
                         f"{_bits(got)[bad[:5]]} vs {_bits(want)[bad[:5]]}"
    assert (_bits(got)[nan] & 0x7FC0 == 0x7FC0).all(), f"{what}: a NaN is not quiet"


def _rounded(f32):
    """f32 -> bf16 as the code generator's integer rounding does it: nearest
    even, a NaN quieted with its top payload bits (ml_dtypes gives every NaN
    the one payload)."""
    bits = np.asarray(f32, np.float32).view(np.uint32)
    up = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return np.where(np.isnan(f32), (bits | 0x400000) >> 16, up).astype(np.uint16).view(BF16)


def _for_cpu(cpu):
    if cpu == "host":
        return target.override()
    return target.override(cpu=cpu)


def _binary(opname, constant=None):
    b = xlac.XlaBuilder(f"bf16_{opname}")
    x = ops.parameter(b, 0, xlac.Shape(xlac.BF16, (N,)), "x")
    if constant is None:
        y = ops.parameter(b, 1, xlac.Shape(xlac.BF16, (N,)), "y")
    else:
        y = ops.broadcast(ops.constant(b, BF16(constant)), (N,))
    return b.build(getattr(ops, opname)(x, y))


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("opname", ["add", "sub", "mul", "div"])
def test_arithmetic_rounds_as_the_evaluator(opname, cpu):
    x, y = _pairs()
    comp = _binary(opname)
    with _for_cpu(cpu) as t:
        try:
            target.check_runnable()
        except RuntimeError as ex:
            pytest.skip(str(ex))
        got = xlac.jit(comp)(x, y)
    want = xlac.evaluate(comp, x, y)
    assert_rounded_as_evaluator(got, want, f"{opname} on {t.cpu}")
    # The pairing really has signaling NaN operands, ties and subnormal results.
    snan = (_bits(x) & 0x7FC0) == 0x7F80
    assert (snan & ((_bits(x) & 0x3F) != 0)).any()
    if opname == "mul":
        with np.errstate(all="ignore"):
            wide = x.astype(np.float32) * y.astype(np.float32)
        assert ((wide.view(np.uint32) & 0x1FFFF) == 0x8000).any()          # ties to even


def _with_constant_arm(opname, constant):
    """``x op select(p, constant, y)``: the algebraic simplifier keeps it, and
    LLVM may fold the op into the select's constant arm (``x * 1`` is ``x``)."""
    b = xlac.XlaBuilder(f"bf16_{opname}_select")
    x = ops.parameter(b, 0, xlac.Shape(xlac.BF16, (N,)), "x")
    p = ops.parameter(b, 1, xlac.Shape(xlac.PRED, (N,)), "p")
    y = ops.parameter(b, 2, xlac.Shape(xlac.BF16, (N,)), "y")
    k = ops.broadcast(ops.constant(b, BF16(constant)), (N,))
    return b.build(getattr(ops, opname)(x, ops.select(p, k, y)))


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("opname, constant", [("mul", 1.0), ("add", -0.0), ("div", 1.0), ("mul", -1.0)])
def test_operand_that_may_be_constant_keeps_the_nan_case(opname, constant, cpu):
    """A signaling NaN ``x`` times a value that may be the constant 1 (and
    ``x + -0``, ``x / 1``, ``x * -1``) comes out quiet, as the evaluator has it."""
    x, y = _pairs()
    p = np.random.default_rng(2).random(N) < 0.5
    comp = _with_constant_arm(opname, constant)
    with _for_cpu(cpu):
        try:
            target.check_runnable()
        except RuntimeError as ex:
            pytest.skip(str(ex))
        got = xlac.jit(comp)(x, p, y)
    assert_rounded_as_evaluator(got, xlac.evaluate(comp, x, p, y), f"{opname} by {constant} or y")


@pytest.mark.parametrize("cpu", CPUS)
def test_runtime_one_is_not_a_constant(cpu):
    """A parameter that is 1 at run time: the multiply runs, and quiets."""
    b = xlac.XlaBuilder("bf16_scale")
    x = ops.parameter(b, 0, xlac.Shape(xlac.BF16, (N,)), "x")
    c = ops.parameter(b, 1, xlac.Shape(xlac.BF16, ()), "c")
    comp = b.build(ops.mul(x, ops.broadcast(c, (N,))))
    x = _every_bf16()
    with _for_cpu(cpu):
        try:
            target.check_runnable()
        except RuntimeError as ex:
            pytest.skip(str(ex))
        got = xlac.jit(comp)(x, BF16(1.0))
    assert_rounded_as_evaluator(got, xlac.evaluate(comp, x, BF16(1.0)), "x * c, c = 1")


def _tanh(pt):
    b = xlac.XlaBuilder(f"tanh_{pt.value}")
    return b.build(ops.tanh(ops.parameter(b, 0, xlac.Shape(pt, (N,)), "x")))


@pytest.mark.parametrize("cpu", CPUS)
def test_tanh_rounds_as_the_f32_tanh_and_correctly(cpu, monkeypatch):
    """bf16 tanh (rounded inside the approximation) on every bf16 value: the
    bits of the f32 approximation rounded (NaNs too), the evaluator's (numpy's
    f32 tanh, rounded by ml_dtypes), and the correctly rounded tanh."""
    monkeypatch.delenv(math_approx.EXACT_MATH_ENV, raising=False)
    x = _every_bf16()
    with _for_cpu(cpu):
        try:
            target.check_runnable()
        except RuntimeError as ex:
            pytest.skip(str(ex))
        got = xlac.jit(_tanh(xlac.BF16))(x)
        f32 = xlac.jit(_tanh(xlac.F32))(x.astype(np.float32))
    np.testing.assert_array_equal(_bits(got), _bits(_rounded(f32)))
    assert_rounded_as_evaluator(got, xlac.evaluate(_tanh(xlac.BF16), x), "tanh")
    finite = ~_isnan(x)
    with np.errstate(invalid="ignore"):
        exact = np.tanh(x.astype(np.float64)).astype(np.float32).astype(BF16)
    np.testing.assert_array_equal(_bits(got)[finite], _bits(exact)[finite])


def test_tanh_uses_the_split_and_the_libm_path_rounds_as_before(monkeypatch):
    """The bf16 tanh's kernel has no integer rounding after the approximation
    (the split's multiply by 65537 instead); with XLAC_EXACT_MATH it is libm's
    tanh rounded as every other op."""
    monkeypatch.delenv(math_approx.EXACT_MATH_ENV, raising=False)
    from xlac.codegen.compiler import lower
    text = lower(_tanh(xlac.BF16).module).llvm_ir
    assert re.search(r"fmul float %\S+, 0x40f0001000000000", text)         # 65537
    monkeypatch.setenv(math_approx.EXACT_MATH_ENV, "1")
    x = _every_bf16()
    xlac.clear_caches()
    got = xlac.jit(_tanh(xlac.BF16))(x)
    assert_rounded_as_evaluator(got, xlac.evaluate(_tanh(xlac.BF16), x), "libm tanh")
    xlac.clear_caches()


# ----------------------------------------------------------------------------
# Veltkamp's split alone: the integer rounding's bits on [0, 1]
# ----------------------------------------------------------------------------

def _split_function():
    """``void f(i64 n, float *in, float *out)``: ``out[i] = split(in[i])``."""
    f32, i64, ptr = ir.FloatType(), ir.IntType(64), ir.PointerType()
    module = ir.Module("split")
    module.triple = llvm.get_process_triple()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [i64, ptr, ptr]), "f")
    n, src, dst = fn.args
    entry, body, done = (fn.append_basic_block(s) for s in ("entry", "body", "done"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", n, ir.Constant(i64, 0)), body, done)
    b.position_at_end(body)
    i = b.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), entry)
    x = b.load(b.gep(src, [i], source_etype=f32), typ=f32)
    y = math_approx.round_to_bf16_split(math_approx._E(b, f32), x)
    b.store(y, b.gep(dst, [i], source_etype=f32))
    nxt = b.add(i, ir.Constant(i64, 1))
    i.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, n), body, done)
    b.position_at_end(done)
    b.ret_void()
    tm = host_target_machine()
    ref = parse_and_optimize(module, tm)
    engine = llvm.create_mcjit_compiler(ref, tm)
    engine.finalize_object()
    proto = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)
    return engine, proto(engine.get_function_address("f"))


def test_split_rounds_as_ml_dtypes_on_zero_to_one():
    """Every 257th f32 in [2**-126, 1], every tie and its neighbours (each
    bf16 step there), the bf16 subnormals and zero, and NaN."""
    one = 0x3F800000
    ties = (np.arange(0x0080, 0x3F80, dtype=np.uint32) << 16) | 0x8000
    bits = np.concatenate([np.arange(0x00800000, one + 1, 257, dtype=np.uint32), ties, ties - 1, ties + 1,
                           np.arange(0x80, dtype=np.uint32) << 16,
                           np.array([0x3F7FFFFF, 0x3F7F8000, 0x3F7F7FFF, 0x7FC00000, 0x7F810000], np.uint32)])
    x = bits.view(np.float32)
    out = np.empty_like(x)
    engine, fn = _split_function()
    fn(len(x), x.ctypes.data, out.ctypes.data)
    with np.errstate(invalid="ignore"):
        want = x.astype(BF16).astype(np.float32)
    nan = np.isnan(x)
    np.testing.assert_array_equal(out[~nan].view(np.uint32), want[~nan].view(np.uint32))
    assert (out[nan].view(np.uint32) == bits[nan] | 0x400000).all()          # quieted, payload kept
    del engine
