"""The numpy reference evaluator: runs an HLO module on numpy arrays.

``evaluate(x, *args)`` takes an XlaComputation (anything with ``.module``), an
HloModule or HLO text, and the entry parameters as numpy arrays in
parameter-number order. It returns a numpy array, or a (nested) Python tuple of
arrays for a tuple-shaped root. ``evaluate_computation(comp, args)`` runs one
HloComputation on already-checked values; the constant folder and the
``call``/reducer machinery use it.

Design: one table, ``RULES``, keyed by HLO opcode; each rule is a small function
``(inst, operand_values) -> value``. Values are logical (C-order) numpy arrays
(0-d for scalars) or Python tuples for tuple shapes; layouts never matter here
(except to ``bitcast``, which is defined by them). After every rule the value is
checked against ``inst.shape`` (dtype and dimensions): a mismatch is a bug in a
rule and raises ``AssertionError`` naming the opcode.

Numerics follow ``docs/numerics.md`` exactly:

* integer ops wrap; integer divide/remainder/shift/power edge cases as documented;
* f16 and bf16 are computed in f32 and rounded back after every op;
* f32 arithmetic stays in f32 (``+ - * /`` and ``sqrt`` are correctly rounded, so
  the result is the one XLA computes);
* transcendental functions (exp, log, sin, tanh, erf, pow, ...) of f16/bf16/f32
  are computed in f64 and rounded once: the reference is then as close to the
  exact value as numpy can get, and implementations are judged by a tolerance;
* reductions and dots accumulate in the element type (halves in f32); XLA may
  reassociate them, so only float tolerance is promised there.

Dynamic dimensions (``f32[<=10]``): a value is its valid elements only (an
array of shape ``(5,)`` for ``f32[<=10]`` of size 5), which is what a numpy
user expects and an independent reference for the code generator's padded
representation.  Entry arguments of a dynamic parameter may be any size up to
the bound in its dynamic dimensions.  The size rules of ``xlac.hlo.dynamic``
give each instruction's result sizes and the sizes it reads its operands at
(operands are sliced to those); the rule then runs with the instruction's
shape at those sizes.  ``set-dimension-size`` beyond the operand's valid
elements reads the padding, which XLA leaves undefined: zeros here.

Collectives and device ids (all-reduce, all-gather, reduce-scatter, all-to-all,
collective-permute, their -start/-done forms, send/recv, replica-id,
partition-id) ask the :class:`Device` the evaluation runs as (a thread-local;
:func:`running_as`).  ``evaluate`` runs a module as its only device: a
one-device module (no ``replica_count``/``num_partitions`` above 1) behaves as
XLA would (an all-reduce of one replica is the identity, replica-id is 0), a
module of several devices raises :class:`CollectiveError` at its first
collective or device id, naming it and pointing to
``xlac.evaluate_replicated``, which runs every device of a module in lock step
(``xlac/evaluator_replicated.py``).  Which devices take part is
``xlac.hlo.collectives``, as for the code generator.
"""
from __future__ import annotations

import os

import functools
import math
import queue
import string
import threading

import numpy as np

from . import custom_calls, tridiagonal_reference
from .errors import CollectiveError, FeedError, FeedTimeoutError, UnsupportedError
from .hlo import collectives, complex_math, dynamic, feeds, rng, shape_inference
from .hlo import custom_call as hcc
from .hlo.ir import HloComputation, HloInstruction, HloModule, Raw
from .hlo.stablehlo import parse_module_text
from .hlo.source import module_text
from .hlo.verifier import check_call_graph
from .hlo.window import WindowDimension, conv_dimension_numbers_of, window_of
from .shape import BF16, F16, PrimitiveType, Shape, from_buffer, round_to_odd_f32, tiling_as_padding, to_buffer

__all__ = ["evaluate", "evaluate_computation", "supported_opcodes", "convert_array", "RULES", "Device", "CollectiveError",
           "current_device", "running_as", "FeedError", "FeedTimeoutError"]

def _has_dtype(pt) -> bool:
    try:
        pt.dtype
    except TypeError:          # an ml_dtypes too old for the newest types
        return False
    return True


_BF16 = BF16.dtype
_F16 = F16.dtype
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
#: Floats narrower than f32 (f16, bf16, the f8 and f4 types): computed in f32.
_HALVES = tuple(pt.dtype for pt in PrimitiveType if pt.is_narrow_float and _has_dtype(pt))
#: Integers narrower than a byte (s1, s2, s4, u1, u2, u4), and the 8-bit type they compute in.
_SUB_BYTE_INTS = {pt.dtype: np.dtype(np.int8 if pt.is_signed_int else np.uint8)
                  for pt in PrimitiveType if pt.is_sub_byte and pt.is_integral and _has_dtype(pt)}


# ============================================================================
# Public API
# ============================================================================

def evaluate(x: "HloModule | str | os.PathLike | object", *args: "np.ndarray | tuple | None",
             infeed: "list | None" = None, outfeed: "list | None" = None) -> "np.ndarray | tuple":
    """Run ``x`` (XlaComputation, HloModule, HLO text or the path of an HLO text file) on ``args``.

    Arguments are checked against the entry parameters: a wrong count or dtype
    raises ``TypeError``, a wrong shape ``ValueError``, each naming the parameter
    (number and name), what was expected and what was given.  A module whose
    computations call themselves or nest deeper than
    :data:`xlac.hlo.ir.MAX_CALL_DEPTH` raises ``VerifierError`` (the evaluator
    recurses into called computations).  The module runs as its only device:
    collectives and device ids of a module of several devices raise
    :class:`CollectiveError` (``xlac.evaluate_replicated`` runs them all).

    Infeed and outfeed (as an executable's ``exe.infeed`` / ``exe.outfeed``):
    ``infeed`` gives the values the module's infeeds read, in the order they
    run — a list (or any iterable but an array) of arrays / tuples of arrays,
    or a queue with ``get(timeout=...)`` such as ``exe.infeed``; each is
    checked against the reading infeed's shape (``TypeError`` / ``ValueError``
    naming it), and an infeed finding none left raises :class:`FeedError`
    (:class:`FeedTimeoutError` when a queue stays empty).  ``outfeed``
    receives what the outfeeds write, in order: a list (values appended) or a
    queue with ``put`` (such as ``exe.outfeed``).  A module that runs an
    infeed or outfeed without them raises :class:`FeedError` naming it.
    """
    module = _as_module(x)
    check_call_graph(module)
    entry = module.entry
    params = entry.parameters
    if len(args) != len(params):
        want = ", ".join(f"{p.parameter_number}: {p.name} {p.shape}" for p in params)
        raise TypeError(f"{module.name} takes {len(params)} argument(s) ({want}), got {len(args)}")
    values = [_check_argument(p, p.shape, a) for p, a in zip(params, args)]
    replicas, partitions = collectives.device_counts(module)
    with running_as(_OneDevice(replicas, partitions)), _feeding(_Feeds(infeed, outfeed)):
        return _copy_out(evaluate_computation(entry, values))


def evaluate_computation(comp: HloComputation, args: list):
    """Evaluate ``comp`` on ``args`` (arrays, or tuples for tuple parameters)."""
    return _run(comp, list(args))


def supported_opcodes() -> frozenset:
    """Every opcode the evaluator runs (``parameter`` is handled by the driver)."""
    return frozenset(RULES) | {"parameter"}


# ============================================================================
# Driver
# ============================================================================

def _as_module(x) -> HloModule:
    if isinstance(x, HloModule):
        return x
    x = module_text(x)       # the path of an HLO file: read it
    if isinstance(x, str):
        return parse_module_text(x)
    if isinstance(x, HloComputation):
        return HloModule(x.name, [x], entry=x)
    module = getattr(x, "module", None)
    if isinstance(module, HloModule):
        return module
    raise TypeError(f"evaluate() needs an XlaComputation, an HloModule or HLO text, got {type(x).__name__}")


def _check_argument(param: HloInstruction, shape: Shape, arg):
    """The argument as an evaluator value, or a TypeError/ValueError naming the parameter."""
    who = f"parameter {param.parameter_number} ({param.name})"
    if shape.is_tuple:
        if not isinstance(arg, (tuple, list)) or len(arg) != len(shape.tuple_shapes):
            raise TypeError(f"{who}: expected a tuple {shape}, got {_describe(arg)}")
        return tuple(_check_argument(param, s, a) for s, a in zip(shape.tuple_shapes, arg))
    if shape.is_token:
        return arg
    if isinstance(arg, (bool, int, float, complex)):
        # A Python scalar has no element type of its own: take the parameter's,
        # provided the value survives the conversion.
        if shape.dimensions:
            raise ValueError(f"{who}: expected {shape}, got the Python scalar {arg!r}")
        a = np.asarray(arg).astype(shape.dtype)
        if not (a == arg or (a != a and arg != arg)):  # NaN survives as NaN
            raise TypeError(f"{who}: expected {shape}, got Python {type(arg).__name__} {arg!r}")
        return a
    a = np.asarray(arg)
    if a.dtype != shape.dtype:
        raise TypeError(f"{who}: expected {shape} (dtype {shape.dtype}), got {_describe(a)}")
    if not _fits(a.shape, shape):
        want = f"shape {shape.dimensions}" + (", or smaller in its dynamic dimensions" if shape.is_dynamic else "")
        raise ValueError(f"{who}: expected {shape} ({want}), got {_describe(a)}")
    return a


def _fits(dims: tuple, shape: Shape) -> bool:
    """Whether an array of ``dims`` is a value of ``shape``: its dimensions, or
    at most them where ``shape`` is dynamic."""
    if dims == shape.dimensions:
        return True
    return len(dims) == shape.rank and shape.is_dynamic and all(
        n == b or (shape.is_dynamic_dimension(d) and n <= b) for d, (n, b) in enumerate(zip(dims, shape.dimensions)))


def _describe(v) -> str:
    if isinstance(v, np.ndarray):
        return f"{v.dtype} array of shape {v.shape}"
    if isinstance(v, tuple):
        return "tuple(" + ", ".join(_describe(e) for e in v) + ")"
    return type(v).__name__


def _copy_out(v):
    """Results the caller owns: fresh C-ordered arrays, nested tuples kept."""
    if isinstance(v, tuple):
        return tuple(_copy_out(e) for e in v)
    if isinstance(v, np.ndarray):
        return np.array(v, order="C", copy=True)
    return v


def _as_value(v):
    return tuple(_as_value(e) for e in v) if isinstance(v, tuple) else np.asarray(v)


#: Instructions that talk to other devices or to the host: run even when the
#: root does not depend on them (a send whose send-done is unused, an outfeed),
#: in program order.
_DEVICE_OPS = collectives.GROUPED_OPCODES | collectives.PERMUTE_OPCODES | collectives.SEND_RECV_OPCODES | {
    "all-reduce-done", "all-gather-done", "collective-permute-done", "infeed", "outfeed"}


def _schedule(comp: HloComputation) -> list:
    """Instructions the root depends on, operands first (unreachable ones are
    skipped).  A computation that talks to other devices or to the host runs
    all such instructions, and in its program order: every device then meets
    its collectives in the same order, a recv-done comes after the send the
    program put before it, and infeeds, outfeeds and custom calls with a side
    effect (a host callback's print) run as written."""
    order = _reachable(comp, [comp.root])
    device_ops = [i for i in comp.instructions if i.opcode in _DEVICE_OPS or
                  (i.opcode == "custom-call" and i.attrs.get("custom_call_has_side_effect") is True)]
    if not device_ops:
        return order
    needed = {id(i) for i in _reachable(comp, [comp.root] + device_ops)}
    program = [i for i in comp.instructions if id(i) in needed]
    done: set = set()
    for inst in program:                    # program order is used only when it is valid
        if any(id(o) not in done for o in inst.operands):
            return _reachable(comp, [comp.root] + device_ops)
        done.add(id(inst))
    return program


def _reachable(comp: HloComputation, roots: list) -> list:
    """What ``roots`` depend on, operands first."""
    order, seen = [], set()
    stack = [(r, False) for r in reversed(roots)]
    while stack:
        inst, expanded = stack.pop()
        if expanded:
            order.append(inst)
            continue
        if id(inst) in seen:
            continue
        seen.add(id(inst))
        stack.append((inst, True))
        for op in reversed(inst.operands):
            if id(op) not in seen:
                stack.append((op, False))
    return order


def _run(comp: HloComputation, args: list, batch: tuple | None = None):
    """Evaluate ``comp``. With ``batch``, a scalar computation runs on arrays of
    that shape at once (see ``_batchable``): every value is 0-d or ``batch``-shaped."""
    n = comp.num_parameters
    if len(args) != n:
        raise ValueError(f"computation {comp.name} takes {n} argument(s), got {len(args)}")
    values, known, sizes = {}, {}, {}
    with np.errstate(all="ignore"):  # integer wrap-around and IEEE specials are intended
        for inst in _schedule(comp):
            if inst.opcode == "parameter":
                value = _as_value(args[inst.parameter_number])
            else:
                rule = RULES.get(inst.opcode)
                if rule is None:
                    raise UnsupportedError(inst.opcode)
                vals = [values[id(o)] for o in inst.operands]
                if dynamic.involved(inst.opcode, [o.shape for o in inst.operands], inst.shape, inst.attrs) \
                        or any(id(o) in sizes for o in inst.operands):
                    value = _as_value(_dynamic_step(rule, inst, vals, known, sizes))
                else:
                    value = _as_value(rule(inst, vals))
            _check_result(inst, inst.shape, value, batch)
            values[id(inst)] = value
    return values[id(comp.root)]


def _check_result(inst, shape: Shape, value, batch) -> None:
    if shape.is_tuple:
        ok = isinstance(value, tuple) and len(value) == len(shape.tuple_shapes)
        if ok:
            for s, v in zip(shape.tuple_shapes, value):
                _check_result(inst, s, v, batch)
            return
    elif shape.is_token:
        return
    elif isinstance(value, np.ndarray) and value.dtype == shape.dtype:
        if _fits(value.shape, shape) or (batch is not None and value.shape in ((), batch)):
            return
    raise AssertionError(f"evaluator rule for {inst.opcode} ({inst.name}) produced "
                         f"{_describe(value)}, expected {shape}")


# ============================================================================
# Dynamic dimensions
# ============================================================================

#: Ops whose rule takes values of any size as they are (a call, a conditional's
#: branch, a while's condition and body run on them and handle their own
#: dynamic dimensions: the sizes travel with the values).
_DYNAMIC_DIRECT = frozenset({"call", "conditional", "while"})


class _Resized:
    """An instruction seen with its result shape and attributes at the run-time sizes."""

    __slots__ = ("_inst", "shape", "attrs")

    def __init__(self, inst, shape: Shape, attrs: dict):
        self._inst, self.shape, self.attrs = inst, shape, attrs

    def __getattr__(self, name):
        return getattr(self._inst, name)


def _dynamic_step(rule, inst, vals: list, known: dict, carried: dict):
    """Run ``rule`` on operands sliced to the sizes the op reads them at, with
    the result shape at the sizes the size rules give.  ``known`` holds, by
    instruction, its sizes as shape inference knows them (ints where known at
    compile time), which some rules need besides the run-time sizes.
    ``carried``: by instruction, the run-time sizes of a value that has one at a
    dimension it declares static (the value holds the bound there, padded)."""
    shapes = [o.shape for o in inst.operands]
    vals = [_conform(inst, k, v, carried[id(o)]) if id(o) in carried else v
            for k, (o, v) in enumerate(zip(inst.operands, vals))]
    sizes = [_sizes_of(v, s) for v, s in zip(vals, shapes)]
    flags = [known.get(id(o)) or dynamic.flag_sizes(o.shape) for o in inst.operands]
    known[id(inst)] = dynamic.propagate(inst.opcode, inst.attrs, shapes, flags, inst.shape,
                                        dynamic.FLAGS, known=flags)[0]
    if inst.opcode in _DYNAMIC_DIRECT:            # checked by the size rule, run on the values as they are
        return rule(inst, vals)
    resized: dict = {}
    tree, want = dynamic.propagate(inst.opcode, inst.attrs, shapes, sizes, inst.shape, dynamic.INTS,
                                   value=lambda i, k=None: int(vals[i] if k is None else vals[i][k]),
                                   known=flags, resized=resized)
    vals = [_conform(inst, k, v, w) for k, (v, w) in enumerate(zip(vals, want))]
    seen = _Resized(inst, _sized(inst.shape, tree), dict(inst.attrs, **resized))
    if tree != dynamic.normalize(tree, inst.shape):
        carried[id(inst)] = tree
    return _declared(rule(seen, vals), tree, inst.shape)


def _sizes_of(value, shape: Shape):
    if shape.is_tuple:
        return [_sizes_of(v, s) for v, s in zip(value, shape.tuple_shapes)]
    return tuple(value.shape) if shape.is_array else ()


def _declared(value, tree, shape: Shape):
    """``value`` (at the run-time sizes ``tree``) at the sizes ``shape`` declares: a
    dimension declared static where the size rules give a run-time size holds its
    bound, as XLA's verifier lets it be, padded past the run-time size (zeros here,
    whatever the buffer holds in compiled code); the ops that read it read the
    valid elements, as XLA's dynamic dimension inference has them do."""
    if shape.is_tuple:
        return tuple(_declared(v, t, s) for v, t, s in zip(value, tree, shape.tuple_shapes))
    if not (shape.is_array and isinstance(value, np.ndarray)) or value.ndim != shape.rank:
        return value
    want = dynamic.normalize(tree, shape)
    if tuple(value.shape) == tuple(want):
        return value
    return np.pad(value, [(0, max(w - n, 0)) for n, w in zip(value.shape, want)])


def _conform(inst, k: int, value, want):
    """Operand ``k`` sliced to the sizes ``want`` the op reads it at."""
    if isinstance(value, tuple):
        return tuple(_conform(inst, k, v, w) for v, w in zip(value, want))
    if not isinstance(value, np.ndarray) or tuple(value.shape) == tuple(want) or len(want) != value.ndim:
        return value
    if any(w > n != 1 for w, n in zip(want, value.shape)):
        raise ValueError(f"{inst.opcode} {inst.name}: operand {k} has {list(value.shape)} valid elements, "
                         f"fewer than the {list(want)} the op reads (operands of different dynamic sizes)")
    value = value[tuple(slice(0, w) for w in want)]
    # XLA's implicit broadcast: a dynamic dimension of size 1 is repeated.
    return np.broadcast_to(value, want) if value.shape != tuple(want) else value


def _sized(shape: Shape, tree) -> Shape:
    if shape.is_tuple:
        return Shape.tuple([_sized(s, t) for s, t in zip(shape.tuple_shapes, tree)])
    return Shape(shape.element_type, tree) if shape.is_array else shape


# ============================================================================
# Attribute and dtype helpers
# ============================================================================

RULES: dict = {}


def _rule(*opcodes):
    def register(fn):
        for op in opcodes:
            RULES[op] = fn
        return fn
    return register


def _int(v) -> int:
    return int(str(v)) if isinstance(v, Raw) else int(v)


def _ints(v) -> tuple:
    return tuple(_int(e) for e in (v or ()))


def _bool(v) -> bool:
    return str(v).lower() == "true" if isinstance(v, (Raw, str)) else bool(v)


def _is_float(dt) -> bool:
    return dt.type in (np.float16, np.float32, np.float64) or dt in _HALVES


def _is_int(dt) -> bool:
    return (dt.kind in "iu" and dt not in _HALVES) or dt in _SUB_BYTE_INTS


def _bit_width(dt) -> int:
    """Bits of an integer dtype (4 for s4, which numpy stores in a byte)."""
    return PrimitiveType.from_dtype(dt).bit_width if dt in _SUB_BYTE_INTS else 8 * dt.itemsize


def _iinfo(dt):
    if dt in _SUB_BYTE_INTS:
        import ml_dtypes
        return ml_dtypes.iinfo(dt)
    return np.iinfo(dt)


def _wide(x):
    """The array arithmetic is done on: narrow floats widened (exactly) to f32,
    sub-byte integers to 8 bits (results are wrapped back by ``_convert``)."""
    if x.dtype in _HALVES:
        return x.astype(_F32)
    if x.dtype in _SUB_BYTE_INTS:
        return x.astype(_SUB_BYTE_INTS[x.dtype])
    return x


def _precise(x):
    """The array transcendentals are done on: narrow floats and f32 in f64, c64 in c128."""
    if x.dtype in _HALVES or x.dtype == _F32:
        return x.astype(_F64)
    if x.dtype == np.complex64:
        return x.astype(np.complex128)
    return _wide(x)


def _unsigned(dt):
    return np.dtype(f"u{dt.itemsize}")


def _signed(dt):
    return np.dtype(f"i{dt.itemsize}")


def convert_array(x, dtype) -> np.ndarray:
    """``x`` converted to ``dtype`` as HLO's convert does (docs/numerics.md): integers wrap,
    floats to integers truncate toward zero and saturate (NaN to 0), complex to real keeps
    the real part, and narrow floats round once."""
    return _convert(np.asarray(x), np.dtype(dtype))


def _convert(x, to):
    """``convert`` semantics (docs/numerics.md), also used to round every result."""
    x = np.asarray(x)
    to = np.dtype(to)
    if x.dtype == to:
        return x
    x = _wide(x)  # exact; numpy knows every conversion from f32 and the 8-bit integers
    if x.dtype == to:
        return x
    if to == np.bool_:
        return x != 0
    if x.dtype.kind == "c" and to.kind != "c":
        x = x.real  # complex -> real: the real part
    if _is_int(to) and _is_float(x.dtype):
        return _float_to_int(x, to)
    if to in _HALVES and x.dtype != _F32:
        x = _to_f32_round_to_odd(x)
    if to.name == "float8_e8m0fnu":
        return _to_e8m0(x.astype(_F32), to)
    return x.astype(to)  # integers wrap (to s4 too: ml_dtypes keeps the low bits)


def _to_e8m0(x, to):
    """f32 -> f8e8m0fnu as ml_dtypes 0.7 converts: to the nearest power of two
    in its lowest binade too.  ml_dtypes before 0.7 rounded the f32 subnormals
    between 2**-127 and 1.5 * 2**-127 up to 2**-126; xlac's answer does not
    depend on the installed version."""
    r = x.astype(to)
    low = (x > np.float32(2.0 ** -127)) & (x < np.float32(1.5 * 2.0 ** -127))
    return np.where(low, np.zeros((), np.uint8).view(to), r)


def _float_to_int(x, to):
    """Truncate toward zero, saturate at the type's range, NaN -> 0."""
    info = _iinfo(to)
    t = np.trunc(x.astype(_F64))  # exact for every float type
    too_big = t >= float(int(info.max) + 1)  # a power of two, exact in f64
    too_small = t < float(info.min)
    bad = too_big | too_small | np.isnan(t)
    r = np.where(bad, 0, t).astype(to)
    r = np.where(too_big, to.type(info.max), r)
    return np.where(too_small, to.type(info.min), r).astype(to)


_to_f32_round_to_odd = round_to_odd_f32


# ============================================================================
# Elementwise: arithmetic and logic (halves widened to f32)
# ============================================================================

def _int_div_rem(x, y):
    """Integer quotient and remainder, C-style, with XLA's answers where C has none."""
    x, y = np.broadcast_arrays(x, y)
    dt = x.dtype
    zero = y == 0
    overflow = (x == np.iinfo(dt).min) & (y == -1) if dt.kind == "i" else np.zeros_like(zero)
    safe_y = np.where(zero | overflow, 1, y).astype(dt)
    rem = np.fmod(x, safe_y)  # sign of the dividend; MIN % 1 == 0
    quo = (x - rem) // safe_y  # exact division; MIN / 1 == MIN
    quo = np.where(zero, np.array(-1).astype(dt), quo).astype(dt)  # x / 0: all bits set
    rem = np.where(zero, x, rem).astype(dt)  # x % 0 == x
    return quo, rem


def _divide(x, y):
    return _int_div_rem(x, y)[0] if x.dtype.kind in "iu" else np.true_divide(x, y)


def _remainder(x, y):
    return _int_div_rem(x, y)[1] if x.dtype.kind in "iu" else np.fmod(x, y)


def _power(x, y):
    if x.dtype.kind not in "iu":
        return np.power(x, y)
    x, y = np.broadcast_arrays(x, y)
    dt = x.dtype
    negative = y < 0
    e = np.where(negative, 0, y).astype(dt)
    result, base = np.ones_like(x), x.copy()
    while np.any(e != 0):  # square-and-multiply, wrapping like the hardware
        result = np.where((e & 1) != 0, result * base, result).astype(dt)
        base = (base * base).astype(dt)
        e = e >> 1
    if dt.kind == "i" and np.any(negative):
        odd = (y & 1) != 0
        neg = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0)).astype(dt)
        result = np.where(negative, neg, result).astype(dt)
    return result


def _low_bits(x, bits: int):
    """``x``'s low ``bits`` bits as an unsigned value of x's byte size."""
    u = x.astype(_unsigned(x.dtype))
    return u if bits == 8 * x.dtype.itemsize else u & u.dtype.type((1 << bits) - 1)


def _shift_amount(x, y, bits):
    """(amount in x's type, mask of amounts that are >= the bit width as unsigned)."""
    x, y = np.broadcast_arrays(x, y)
    amount = _low_bits(y, bits)  # negative amounts are huge as unsigned
    too_far = amount >= bits
    return x, np.where(too_far, 0, amount).astype(x.dtype), too_far


def _shift_left(x, y, bits):
    x, s, too_far = _shift_amount(x, y, bits)
    return np.where(too_far, 0, np.left_shift(x, s)).astype(x.dtype)


def _shift_right_logical(x, y, bits):
    x, s, too_far = _shift_amount(x, y, bits)
    u = _unsigned(x.dtype)
    r = np.right_shift(_low_bits(x, bits), s.astype(u)).astype(x.dtype)
    return np.where(too_far, 0, r).astype(x.dtype)


def _mulhi(x, y, bits):
    # XLA's kMulhi: the high ``bits`` bits of the exact 2*bits-bit product of the
    # operands (signed types sign-extended from their own top bit), in Python ints.
    def exact(v):
        low = np.asarray(_low_bits(v, bits)).astype(object)
        return np.where(low >= (1 << (bits - 1)), low - (1 << bits), low) if v.dtype.kind == "i" else low
    high = np.asarray(((exact(x) * exact(y)) >> bits) & ((1 << bits) - 1), dtype=object)
    out = high.astype(np.uint64).astype(_unsigned(x.dtype))
    if x.dtype.kind != "i":
        return out
    wide = out.astype(np.int64) if bits < 64 else out.view(np.int64)
    return (np.where(wide >= (1 << (bits - 1)), wide - (1 << bits), wide) if bits < 64 else wide).astype(x.dtype)


def _shift_right_arithmetic(x, y, bits):
    # On the signed reinterpretation, as XLA does for unsigned types too.
    x, s, too_far = _shift_amount(x, y, bits)
    i = _signed(x.dtype)
    sx = x.astype(i)
    if bits < 8 * x.dtype.itemsize:     # s4 held in a byte: sign-extend from its own top bit
        low = _low_bits(x, bits).astype(np.int64)
        sx = np.where(low >= (1 << (bits - 1)), low - (1 << bits), low).astype(i)
    r = np.right_shift(sx, s.astype(i))
    return np.where(too_far, np.where(sx < 0, -1, 0), r).astype(i).astype(x.dtype)


def _logical_not(x):
    return np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)


def _make_complex(re, im):
    re, im = np.broadcast_arrays(re, im)
    out = np.empty(re.shape, np.complex64 if re.dtype == _F32 else np.complex128)
    out.real, out.imag = re, im
    return out


def _sign(x):
    if x.dtype.kind == "c":
        mag = np.abs(x)
        return np.where(mag == 0, x, x / np.where(mag == 0, 1, mag))
    if x.dtype.kind == "f":
        return np.where(x == 0, x, np.sign(x))  # keeps -0.0 and +0.0; NaN stays NaN
    return np.sign(x)


def _round_afz(x):
    # Not floor(|x| + 0.5): that rounds 0.49999997 up. x - trunc(x) is exact.
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def _popcnt(x, bits):
    return np.bitwise_count(_low_bits(x, bits))  # unsigned: not |x|'s bits


def _clz(x, bits):
    v = _low_bits(x, bits).astype(np.uint64)
    length = np.zeros(v.shape, np.int64)  # bit length, found by binary search
    for step in (32, 16, 8, 4, 2, 1):
        high = v >= (np.uint64(1) << np.uint64(step))
        length += np.where(high, step, 0)
        v = np.where(high, v >> np.uint64(step), v)
    return bits - (length + (v != 0))  # clz(0) is the bit width


def _signed_zero_fix(result, a, b, negative_wins: bool):
    """IEEE 754-2019 maximum/minimum order -0 below +0 (np.maximum does not):
    max(-0, +0) is +0 and min(-0, +0) is -0, in either operand order."""
    if not np.issubdtype(np.asarray(result).dtype, np.floating):
        return result
    both_zero = (a == 0) & (b == 0)
    if not np.any(both_zero):
        return result
    sign = (np.signbit(a) | np.signbit(b)) if negative_wins else (np.signbit(a) & np.signbit(b))
    zero = np.where(sign, -0.0, 0.0).astype(np.asarray(result).dtype)
    return np.where(both_zero, zero, result)


def _maximum(a, b):
    return _signed_zero_fix(np.maximum(a, b), a, b, negative_wins=False)  # NaN-propagating


def _minimum(a, b):
    return _signed_zero_fix(np.minimum(a, b), a, b, negative_wins=True)


_ARITHMETIC = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": _divide,
    "remainder": _remainder,
    "maximum": _maximum,
    "minimum": _minimum,
    "and": np.bitwise_and,  # logical on pred
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "not": _logical_not,
    "complex": _make_complex,
    "negate": np.negative,  # wraps for ints
    "abs": np.abs,  # abs(INT_MIN) == INT_MIN; complex -> magnitude
    "sign": _sign,
    "ceil": np.ceil,
    "floor": np.floor,
    "round-nearest-afz": _round_afz,
    "round-nearest-even": np.rint,
    "sqrt": np.sqrt,  # correctly rounded in any precision
    "is-finite": np.isfinite,
    "real": np.real,
    "imag": np.imag,
}

#: Integer ops whose answer depends on the bit width (4 for s4, stored in a byte).
_WIDTH_AWARE = {
    "mulhi": _mulhi,
    "shift-left": _shift_left,
    "shift-right-logical": _shift_right_logical,
    "shift-right-arithmetic": _shift_right_arithmetic,
    "popcnt": _popcnt,
    "count-leading-zeros": _clz,
}

_TRANSCENDENTAL = {
    "exponential": np.exp,
    "exponential-minus-one": np.expm1,
    "log": np.log,
    "log-plus-one": np.log1p,
    "logistic": lambda x: 1 / (1 + np.exp(-x)),
    "sine": np.sin,
    "cosine": np.cos,
    "tan": np.tan,
    "acos": np.arccos,
    "acosh": np.arccosh,
    "asin": np.arcsin,
    "asinh": np.arcsinh,
    "atan": np.arctan,
    "atanh": np.arctanh,
    "cosh": np.cosh,
    "sinh": np.sinh,
    "tanh": np.tanh,
    "erf": lambda x: np.vectorize(math.erf, otypes=[np.float64])(x),
    "cbrt": np.cbrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "atan2": np.arctan2,
    "power": _power,  # integers stay exact: _precise leaves them alone
}


def _elementwise(fn, widen):
    def rule(inst, vals):
        return _convert(fn(*[widen(v) for v in vals]), inst.shape.dtype)
    rule.__name__ = getattr(fn, "__name__", "elementwise")
    return rule


def _elementwise_with_width(fn):
    def rule(inst, vals):
        bits = _bit_width(vals[0].dtype)
        return _convert(fn(*[_wide(v) for v in vals], bits), inst.shape.dtype)
    rule.__name__ = fn.__name__
    return rule


for _op, _fn in _ARITHMETIC.items():
    RULES[_op] = _elementwise(_fn, _wide)
for _op, _fn in _WIDTH_AWARE.items():
    RULES[_op] = _elementwise_with_width(_fn)
for _op, _fn in _TRANSCENDENTAL.items():
    RULES[_op] = _elementwise(_fn, _precise)


class _NumpyMath:
    """The backend of :mod:`xlac.hlo.complex_math` on numpy arrays of one real dtype
    (f32 for c64: XLA computes c64 in f32, and overflow must happen where it does)."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.mantissa_bits = np.finfo(self.dtype).nmant + 1

    def const(self, v):
        return self.dtype.type(v)

    _UFUNCS = dict(add=np.add, sub=np.subtract, mul=np.multiply, div=np.true_divide, neg=np.negative,
                   fabs=np.abs, sqrt=np.sqrt, copysign=np.copysign,
                   eq=np.equal, lt=np.less, le=np.less_equal, gt=np.greater, ge=np.greater_equal,
                   isnan=np.isnan, and_=np.logical_and, or_=np.logical_or, not_=np.logical_not,
                   select=np.where, max=_maximum, min=_minimum)
    locals().update({name: staticmethod(fn) for name, fn in _UFUNCS.items()})
    #: libm's functions, computed in f64 and rounded (numpy's own f32 sin/cos are
    #: not correctly rounded, libm's sinf/cosf, which XLA and the JIT call, are)
    _LIBM = dict(exp=np.exp, expm1=np.expm1, log=np.log, log1p=np.log1p, sin=np.sin, cos=np.cos,
                 atan2=np.arctan2, pow=np.power)

    def __getattr__(self, name):
        fn = self._LIBM.get(name)
        if fn is None:
            raise AttributeError(name)
        return lambda *xs: fn(*[np.asarray(x, _F64) for x in xs]).astype(self.dtype)

    def ne(self, a, b):  # ordered: false when either is NaN, as LLVM's "one"
        return (a != b) & ~np.isnan(a) & ~np.isnan(b)


def _complex_rule(opcode, formula, fallback):
    """``opcode`` on complex operands through XLA's formula (``complex_math``), on
    other types through ``fallback``."""
    def rule(inst, vals):
        if vals[0].dtype.kind != "c":
            return fallback(inst, vals)
        real = vals[0].real.dtype
        m = _NumpyMath(real)
        args = [(np.asarray(v.real, real), np.asarray(v.imag, real)) for v in np.broadcast_arrays(*vals)]
        with np.errstate(all="ignore"):
            out = formula(m, *args)
        if isinstance(out, tuple):
            out = _make_complex(np.asarray(out[0], real), np.asarray(out[1], real))
        return _convert(np.asarray(out), inst.shape.dtype)
    rule.__name__ = f"complex_{opcode}"
    return rule


for _op, _formula in {**complex_math.UNARY, **complex_math.BINARY}.items():
    RULES[_op] = _complex_rule(_op, _formula, RULES[_op])


# ============================================================================
# Compare, select, clamp, conversions
# ============================================================================

_COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
            "GT": np.greater, "GE": np.greater_equal}


def _contiguous(x) -> np.ndarray:
    """``x`` as a C-contiguous array of its own shape (``np.ascontiguousarray``
    makes a 0-d array 1-d, which bit views of scalars must not become)."""
    x = np.asarray(x)
    return np.ascontiguousarray(x).reshape(x.shape)


def _total_order_key(x):
    """Sign-magnitude float bits as a two's-complement integer that sorts
    -NaN < -Inf < -finite < -0 < +0 < +finite < +Inf < +NaN."""
    i = _signed(x.dtype)
    v = _contiguous(x).view(i)
    magnitude = i.type(np.iinfo(i).max)
    return v ^ ((v >> i.type(8 * i.itemsize - 1)) & magnitude)


@_rule("compare")
def _compare(inst, vals):
    x, y = (_wide(v) for v in vals)
    if str(inst.attrs.get("type", "")) == "TOTALORDER" and x.dtype.kind == "f":
        x, y = _total_order_key(x), _total_order_key(y)
    return _COMPARE[str(inst.attrs["direction"])](x, y)


@_rule("select")
def _select(inst, vals):
    pred, on_true, on_false = vals
    if inst.shape.is_tuple:  # tuples are selected whole by a scalar pred
        return on_true if bool(pred) else on_false
    return np.where(pred, on_true, on_false)


@_rule("clamp")
def _clamp(inst, vals):
    lo, x, hi = (_wide(v) for v in vals)  # clamp(min, operand, max); NaN-propagating
    return _convert(np.minimum(np.maximum(lo, x), hi), inst.shape.dtype)


@_rule("convert")
def _convert_rule(inst, vals):
    return _convert(vals[0], inst.shape.dtype)


@_rule("bitcast-convert")
def _bitcast_convert(inst, vals):
    # The bytes in memory order reinterpreted: a narrower type grows a new
    # minor-most dimension, a wider one consumes it (little-endian, like XLA:CPU).
    x = np.ascontiguousarray(vals[0])
    a, b = inst.operands[0].shape.element_type.bit_width, inst.shape.element_type.bit_width
    if min(a, b) >= 8 or a == b:       # (a 2- or 4-bit element is held in a byte of its own)
        return x.reshape(-1).view(inst.shape.dtype).reshape(inst.shape.dimensions)
    # Sub-byte types of another width: through the little-endian bit string (the
    # first element's lowest bits first, as XLA:CPU packs them).
    units = x.reshape(-1).view(np.dtype(f"u{max(1, a // 8)}")).astype(np.uint64) & np.uint64((1 << a) - 1)
    bits = (units[:, None] >> np.arange(a, dtype=np.uint64)) & np.uint64(1)
    groups = bits.reshape(-1, b) << np.arange(b, dtype=np.uint64)
    values = groups.sum(axis=1, dtype=np.uint64).astype(np.dtype(f"u{max(1, b // 8)}"))
    return values.view(inst.shape.dtype).reshape(inst.shape.dimensions)


# exponent bits, mantissa bits, integer type of the same width
_FLOAT_BITS = {_F16: (5, 10, np.uint16), _BF16: (8, 7, np.uint16),
               _F32: (8, 23, np.uint32), _F64: (11, 52, np.uint64)}


def _reduce_precision(x, exponent_bits: int, mantissa_bits: int):
    """XLA's ReducePrecision on the bit pattern: round the mantissa to nearest even,
    overflow to +-inf, underflow (below the reduced normal range) to +-0, NaN kept."""
    src_e, src_m, ut = _FLOAT_BITS[x.dtype]
    nbits = 8 * x.dtype.itemsize
    u = lambda v: ut(v & ((1 << nbits) - 1))  # noqa: E731  a Python int as the bit type
    bits = _contiguous(x).view(ut)
    if mantissa_bits < src_m:
        shift = src_m - mantissa_bits
        last_bit = (bits >> u(shift)) & u(1)
        bias = last_bit + u((1 << (shift - 1)) - 1)  # ties go to the even neighbour
        bits = (bits + bias) & u(~((1 << shift) - 1))
    if exponent_bits < src_e:
        exp_mask = u(((1 << src_e) - 1) << src_m)
        sign = bits & u(1 << (nbits - 1))
        src_bias = (1 << (src_e - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exponent = bits & exp_mask
        overflow = exponent > u((src_bias + reduced_bias) << src_m)
        underflow = exponent <= u((src_bias - reduced_bias) << src_m)
        bits = np.where(overflow, sign | exp_mask, np.where(underflow, sign, bits))
    result = np.asarray(bits).astype(ut).view(x.dtype)
    return np.where(np.isnan(_wide(x)), x, result)


@_rule("reduce-precision")
def _reduce_precision_rule(inst, vals):
    x = vals[0]
    e, m = _int(inst.attrs["exponent_bits"]), _int(inst.attrs["mantissa_bits"])
    if x.dtype not in _FLOAT_BITS:  # f8/f4: on the exact f32 value (the result is representable)
        return _convert(_reduce_precision(_wide(x), e, m), x.dtype)
    return _reduce_precision(x, e, m)


# ============================================================================
# Leaves and data movement
# ============================================================================

@_rule("constant")
def _constant(inst, vals):
    def build(shape, lit):
        if shape.is_tuple:
            return tuple(build(s, v) for s, v in zip(shape.tuple_shapes, lit))
        return _convert(np.asarray(lit), shape.dtype).reshape(shape.dimensions)
    return build(inst.shape, inst.attrs["literal"])


@_rule("iota")
def _iota(inst, vals):
    dims = inst.shape.dimensions
    d = _int(inst.attrs["iota_dimension"])
    index = np.arange(dims[d]).reshape([-1 if k == d else 1 for k in range(len(dims))])
    return _convert(np.broadcast_to(index, dims), inst.shape.dtype)  # float iota = convert(int iota)


@_rule("broadcast")
def _broadcast(inst, vals):
    x = vals[0]
    dims = _ints(inst.attrs.get("dimensions", ()))  # operand dim i -> result dim dims[i]
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    x = np.transpose(x, order)
    shape = [1] * len(inst.shape.dimensions)
    for i in order:
        shape[dims[i]] = vals[0].shape[i]
    return np.broadcast_to(x.reshape(shape), inst.shape.dimensions)


@_rule("reshape")
def _reshape(inst, vals):
    return np.reshape(vals[0], inst.shape.dimensions)


@_rule("copy")
def _copy(inst, vals):
    def copied(v):      # a tuple is copied element by element
        return tuple(copied(e) for e in v) if isinstance(v, tuple) else v.copy()
    return copied(vals[0])


@_rule("opt-barrier")
@_rule("add-dependency")
def _identity(inst, vals):
    return vals[0]


@_rule("custom-call")
def _custom_call(inst, vals):
    # XLA's own targets stand for HLO ops; jax's LAPACK targets and the user's
    # registered ones: xlac/custom_calls.py.
    target = hcc.target_of(inst)
    if hcc.is_sharding_annotation(inst):
        return vals[0]
    if target == "TopK":
        return _top_k(vals[0], **hcc.topk_of(inst))
    if hcc.is_no_op(inst):
        return ()
    if target == "ApproxTopK":
        return _approx_top_k(inst, vals)
    if target == hcc.TRIDIAGONAL_SOLVE_PERTURBED:
        return tridiagonal_reference.tridiagonal_solve_perturbed(*vals)
    if target == hcc.CSR_SPARSE_DENSE:
        return _csr_sparse_dense(*vals)
    lapack = hcc.xla_lapack_call(inst)
    if lapack is not None:
        inst = HloInstruction("custom-call", inst.shape, list(inst.operands), lapack, inst.name)
    return custom_calls.evaluate(inst, vals)


def _csr_sparse_dense(data, indptr, indices, rhs):
    """jaxlib's ``cpu_csr_sparse_dense_ffi``: row ``i`` sums ``data[k] * rhs[indices[k]]``
    over ``indptr[i] <= k < indptr[i+1]`` in order of ``k``; an entry outside
    ``[indptr[0], indptr[rows])`` or with a column outside ``rhs`` adds nothing
    (``passes/sparse_expander.py`` computes the same in HLO)."""
    rows, cols = indptr.shape[0] - 1, rhs.shape[0]
    matrix = rhs.reshape(cols, rhs.shape[1] if rhs.ndim == 2 else 1)
    out = np.zeros((rows, matrix.shape[1]), rhs.dtype)
    k = np.arange(data.shape[0])
    row = np.searchsorted(indptr[1:], k, side="right")
    keep = (indptr[0] <= k) & (row < rows) & (indices >= 0) & (indices < cols)
    np.add.at(out, row[keep], data[keep, None] * matrix[indices[keep]])
    return out.reshape((rows,) + rhs.shape[1:])


def _approx_top_k(inst, vals):
    """XLA's ``ApproxTopK`` off TPU: the arrays sorted by the comparator, each cut
    to its result's size along the reduction dimension (``hcc.approx_topk_of``)."""
    how = hcc.approx_topk_of(inst)
    d, n = how["dimension"], how["arrays"]
    arrays = [np.asarray(v) for v in vals[:n]]
    shapes = [a.shape for a in inst.operands[:n]]
    sort = HloInstruction("sort", Shape.tuple(shapes), list(inst.operands[:n]),
                          {"dimensions": (d,), "to_apply": inst.called_computations()[0]}, inst.name)
    ordered = _sort(sort, arrays)
    results = list(inst.shape.tuple_shapes) if inst.shape.is_tuple else [inst.shape]
    cut = [np.take(o, np.arange(r.dimensions[d]), axis=d) for o, r in zip(ordered, results)]
    return tuple(cut) if inst.shape.is_tuple else cut[0]


@_rule("after-all")
def _after_all(inst, vals):
    return np.zeros(0, np.uint8)  # a token carries no data


@_rule("bitcast")
def _bitcast(inst, vals):
    # A bitcast reinterprets the buffer: it depends on both layouts (and may read
    # the bits as another element type of the same width).
    for s in (inst.operands[0].shape, inst.shape):
        if s.layout.tiles and tiling_as_padding(s) is None:
            raise UnsupportedError(f"bitcast of tiled layout {s}", "its tiles reorder elements")
    buffer = to_buffer(vals[0], inst.operands[0].shape)
    if buffer.dtype != inst.shape.dtype:
        buffer = buffer.view(inst.shape.dtype)
    return from_buffer(buffer, inst.shape)


@_rule("transpose")
def _transpose(inst, vals):
    return np.transpose(vals[0], _ints(inst.attrs["dimensions"]))


@_rule("reverse")
def _reverse(inst, vals):
    return np.flip(vals[0], axis=_ints(inst.attrs.get("dimensions", ())))


@_rule("slice")
def _slice(inst, vals):
    return vals[0][tuple(slice(_int(s), _int(l), _int(st)) for s, l, st in inst.attrs["slice"])]


@_rule("concatenate")
def _concatenate(inst, vals):
    return np.concatenate(vals, axis=_ints(inst.attrs["dimensions"])[0])


@_rule("pad")
def _pad(inst, vals):
    # Interior padding first, then edges (negative edges crop): operand element i
    # of a dimension lands at low + i * (interior + 1) when that is in range.
    x, pad_value = vals
    config = [tuple(_int(v) for v in c) for c in inst.attrs["padding"]]
    out_dims = [lo + hi + n + max(n - 1, 0) * interior
                for (lo, hi, interior), n in zip(config, x.shape)]
    out = np.full([max(d, 0) for d in out_dims], pad_value, dtype=x.dtype)
    if x.ndim == 0:
        return x.copy()
    src, dst = [], []
    for (lo, hi, interior), n, size in zip(config, x.shape, out.shape):
        pos = lo + np.arange(n) * (interior + 1)
        keep = (pos >= 0) & (pos < size)
        src.append(np.flatnonzero(keep))
        dst.append(pos[keep])
    out[np.ix_(*dst)] = x[np.ix_(*src)]
    return out


def _start_indices(indices: list) -> list:
    """Start indices given as N scalar operands, or (old form) one rank-1 array."""
    if len(indices) == 1 and indices[0].ndim == 1:
        return [int(i) for i in indices[0]]
    return [int(i) for i in indices]


def _clamped_window(starts, sizes, dims) -> tuple:
    # Clamped so the window is in bounds, as the spec says.
    return tuple(slice(s, s + n) for s, n in
                 ((min(max(s, 0), d - n), n) for s, n, d in zip(starts, sizes, dims)))


@_rule("dynamic-slice")
def _dynamic_slice(inst, vals):
    x = vals[0]
    sizes = inst.shape.dimensions
    if any(n < k for n, k in zip(x.shape, sizes)):     # a dynamic operand smaller than the slice:
        x = np.pad(x, [(0, max(k - n, 0)) for n, k in zip(x.shape, sizes)])   # its padding, zeros here
    return x[_clamped_window(_start_indices(vals[1:]), sizes, x.shape)]


@_rule("dynamic-update-slice")
def _dynamic_update_slice(inst, vals):
    x, update = vals[0], vals[1]
    out = x.copy()
    out[_clamped_window(_start_indices(vals[2:]), update.shape, x.shape)] = update
    return out


@_rule("get-dimension-size")
def _get_dimension_size(inst, vals):
    # A dimension its operand declares static is its bound, whatever size it carries
    # (XLA's algebraic simplifier folds the op to the bound before the padder runs).
    d = _ints(inst.attrs["dimensions"])[0]
    x = inst.operands[0].shape
    return np.int32(vals[0].shape[d] if x.is_dynamic_dimension(d) else x.dimensions[d])


@_rule("set-dimension-size")
def _set_dimension_size(inst, vals):
    # The result shape holds the new size (clamped to [0, bound]); past the
    # operand's valid elements is the padding: zeros here.
    x = vals[0]
    out = np.zeros(inst.shape.dimensions, x.dtype)
    common = tuple(slice(0, min(a, b)) for a, b in zip(x.shape, inst.shape.dimensions))
    out[common] = x[common]
    return out


@_rule("dynamic-reshape")
def _dynamic_reshape(inst, vals):
    # XLA's DynamicReshape: the operand's valid elements, row-major, reshaped to
    # the run-time sizes (inst.shape holds them: xlac.hlo.dynamic); sizes whose
    # product is not the operand's element count are an error.
    x = vals[0]
    dims = inst.shape.dimensions
    if math.prod(dims) != x.size:
        raise ValueError(f"dynamic-reshape {inst.name}: sizes {list(dims)} ({math.prod(dims)} elements) do not "
                         f"hold the operand's {x.size} elements (shape {x.shape})")
    return x.reshape(dims)


@_rule("real-dynamic-slice")
def _real_dynamic_slice(inst, vals):
    # StableHLO's real_dynamic_slice: operand[start + i * stride] for i below
    # ceil((limit - start) / stride) in each dimension.  Starts, limits and
    # strides outside its constraints (0 <= start <= limit <= size, stride >= 1)
    # are an error here; compiled code reads within the operand whatever they are.
    x = vals[0]
    start, limit, stride = (np.asarray(v).astype(np.int64) for v in vals[1:4])
    for d in range(x.ndim):
        if not (0 <= start[d] <= limit[d] <= x.shape[d] and stride[d] >= 1):
            raise ValueError(f"real-dynamic-slice {inst.name}: dimension {d} of the operand (size {x.shape[d]}) "
                             f"sliced from start_indices {start[d]} to limit_indices {limit[d]} by strides "
                             f"{stride[d]}: wants 0 <= start <= limit <= size and stride >= 1")
    out = x[tuple(slice(int(a), int(b), int(c)) for a, b, c in zip(start, limit, stride))]
    want = inst.shape.dimensions
    for d, (n, w) in enumerate(zip(out.shape, want)):
        if n < w or (n > w and not inst.shape.is_dynamic_dimension(d)):
            raise ValueError(f"real-dynamic-slice {inst.name}: dimension {d} of the result {inst.shape} is "
                             f"declared static but the slice has {n} elements there")
    return out[tuple(slice(0, n) for n in want)]


@_rule("tuple")
def _tuple(inst, vals):
    return tuple(vals)


@_rule("get-tuple-element")
def _get_tuple_element(inst, vals):
    return vals[0][_int(inst.attrs["index"])]


# ============================================================================
# Reduce and dot
# ============================================================================

_FAST_REDUCERS = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum,
                  "minimum": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or}


def _fast_reducer(comp: HloComputation):
    """The numpy ufunc when the reducer is one add/multiply/max/min/and/or of its two parameters."""
    return _FAST_REDUCERS.get(comp.binary_root_opcode())


def _leaf_dtypes(shape: Shape) -> list:
    return [s.dtype for s in shape.tuple_shapes] if shape.is_tuple else [shape.dtype]


def _as_list(v, n: int) -> list:
    return list(v) if n > 1 else [v]


def _reduce_signed_zeros(r, x, init, axes, is_max: bool):
    """Zero results of a max (min) reduction are +0 (-0) when any reduced
    element, or the init value, is; as for the elementwise maximum/minimum."""
    zero = r == 0
    if not np.any(zero):
        return r
    wanted_sign = not is_max                       # max prefers +0, min prefers -0
    has = np.any((x == 0) & (np.signbit(x) == wanted_sign), axis=axes)
    has |= bool(init == 0 and np.signbit(init) == wanted_sign)
    sign = np.where(has, wanted_sign, not wanted_sign)
    fixed = np.where(sign, -0.0, 0.0).astype(r.dtype)
    return np.where(zero, fixed, r)


@_rule("reduce")
def _reduce(inst, vals):
    n = len(vals) // 2
    inputs, inits = vals[:n], vals[n:]
    axes = sorted(set(_ints(inst.attrs.get("dimensions", ()))))
    comp = inst.attrs["to_apply"]
    # A half-precision add or multiply rounds after every step (as XLA:CPU's,
    # whose bf16/f16 adds are f32 adds converted back): only wider types take
    # numpy's reduction, which would round once at the end. max and min are
    # exact in any type.
    ufunc = _fast_reducer(comp) if n == 1 else None
    if inputs[0].dtype in _HALVES and ufunc not in (np.maximum, np.minimum):
        ufunc = None
    if ufunc is not None:
        x, init = _wide(inputs[0]), _wide(inits[0])
        r = ufunc.reduce(x, axis=tuple(axes), dtype=x.dtype, initial=init[()])
        if ufunc in (np.maximum, np.minimum) and np.issubdtype(x.dtype, np.floating):
            r = _reduce_signed_zeros(r, x, init, tuple(axes), ufunc is np.maximum)
        return _convert(r, inst.shape.dtype)

    # General path: move the reduced dimensions last and flatten them, so each
    # output element reduces one row, folding the reducer in order from the init.
    x = inputs[0]
    keep = [d for d in range(x.ndim) if d not in axes]
    out_shape = tuple(x.shape[d] for d in keep)
    count = math.prod(x.shape[d] for d in axes)
    rows = [np.transpose(v, keep + axes).reshape(out_shape + (count,)) for v in inputs]
    dtypes = _leaf_dtypes(inst.shape)
    if _batchable(comp):
        acc = list(inits)  # every output element at once
        for k in range(count):
            acc = _as_list(_run(comp, acc + [r[..., k] for r in rows], batch=out_shape), n)
        results = [np.broadcast_to(a, out_shape).astype(dt) for a, dt in zip(acc, dtypes)]
    else:
        results = [np.empty(out_shape, dt) for dt in dtypes]
        for idx in np.ndindex(*out_shape):
            acc = list(inits)
            for k in range(count):
                acc = _as_list(_run(comp, acc + [r[idx + (k,)] for r in rows]), n)
            for res, a in zip(results, acc):
                res[idx] = a
    return tuple(results) if n > 1 else results[0]


def _compute_type(inst, lhs, rhs):
    """The type XLA computes a dot or convolution of operands of two types in: their
    higher precision type, or the result type where that is higher (XLA's
    OperandUpcaster); ``op-expander`` rewrites such an op the same way."""
    pts = [PrimitiveType.from_dtype(v.dtype) for v in (lhs, rhs)] + [inst.shape.element_type]
    return functools.reduce(shape_inference.higher_precision_type, pts)


def _mixed_types(rule):
    """``rule`` for operands of one type; operands of two are converted to the
    compute type, the op computed in it and the result converted."""
    @functools.wraps(rule)
    def wrapped(inst, vals):
        lhs, rhs = vals
        if lhs.dtype == rhs.dtype:
            return rule(inst, vals)
        pt = _compute_type(inst, lhs, rhs)
        inner = HloInstruction(inst.opcode, Shape(pt, inst.shape.dimensions), [], dict(inst.attrs), inst.name)
        return _convert(rule(inner, [_convert(lhs, pt.dtype), _convert(rhs, pt.dtype)]), inst.shape.dtype)
    return wrapped


@_rule("dot")
@_mixed_types
def _dot(inst, vals):
    lhs, rhs = vals
    a = inst.attrs
    lb, rb = _ints(a.get("lhs_batch_dims")), _ints(a.get("rhs_batch_dims"))
    lc, rc = _ints(a.get("lhs_contracting_dims")), _ints(a.get("rhs_contracting_dims"))
    letters = iter(string.ascii_letters)
    ls, rs = [None] * lhs.ndim, [None] * rhs.ndim
    for l, r in list(zip(lb, rb)) + list(zip(lc, rc)):
        ls[l] = rs[r] = next(letters)
    ls = [c or next(letters) for c in ls]
    rs = [c or next(letters) for c in rs]
    out = ([ls[d] for d in lb] + [ls[d] for d in range(lhs.ndim) if d not in lb + lc]
           + [rs[d] for d in range(rhs.ndim) if d not in rb + rc])
    # Accumulate in the result type (s8 x s8 -> s32 wraps in s32), halves in f32.
    out_dt = inst.shape.dtype
    acc_dt = _F32 if out_dt in _HALVES else out_dt
    r = np.einsum(f"{''.join(ls)},{''.join(rs)}->{''.join(out)}",
                  _convert(lhs, acc_dt), _convert(rhs, acc_dt), optimize=True)
    return _convert(r, out_dt)


@_rule("scaled-dot")
def _scaled_dot(inst, vals):
    """XLA's ScaledDotRewriter step for step: each operand and its scale
    converted to their common type, the scale repeated over its blocks and
    multiplied in, then a dot in the result type."""
    sides = []
    for x, scale in ((vals[0], vals[1]), (vals[2], vals[3])):
        if scale.ndim == 0:
            sides.append(x)
            continue
        pt = shape_inference.scaled_dot_type(PrimitiveType.from_dtype(x.dtype), PrimitiveType.from_dtype(scale.dtype))
        x, scale = _convert(x, pt.dtype), _convert(scale, pt.dtype)
        for d, (n, k) in enumerate(zip(x.shape, scale.shape)):
            scale = np.repeat(scale, n // k, axis=d)
        wide = _F32 if pt.dtype in _HALVES else pt.dtype       # halves multiply in f32, rounded once
        sides.append(_convert(_convert(x, wide) * _convert(scale, wide), pt.dtype))
    return _dot(inst, sides)


@_rule("ragged-dot")
def _ragged_dot(inst, vals):
    """XLA's RaggedDot as one einsum with a one-hot group mask ``[prefix...,
    ragged, g]``: position ``r`` of the ragged dimension is in group ``j``
    when ``end[j-1] <= r < end[j]`` (running sums of group_sizes; positions
    past the total are in no group).  Non-contracting: the mask's group
    contracts with the rhs group dimension; contracting: it leads the
    result; batch: a plain dot."""
    lhs, rhs, gs = vals
    a = inst.attrs
    lb, rb = _ints(a.get("lhs_batch_dims")), _ints(a.get("rhs_batch_dims"))
    lc, rc = _ints(a.get("lhs_contracting_dims")), _ints(a.get("rhs_contracting_dims"))
    lhs_shape, rhs_shape = inst.operands[0].shape, inst.operands[1].shape
    mode, ragged, group, prefix = shape_inference.ragged_dot_dimensions(lhs_shape, rhs_shape, a)
    letters = iter(string.ascii_letters)
    ls, rs = [None] * lhs.ndim, [None] * rhs.ndim
    for l, r in list(zip(lb, rb)) + list(zip(lc, rc)):
        ls[l] = rs[r] = next(letters)
    ls = [c or next(letters) for c in ls]
    rs = [c or next(letters) for c in rs]
    g = next(letters)
    if mode == "non-contracting":
        rs[group] = g
    out = ([ls[d] for d in lb] + [ls[d] for d in range(lhs.ndim) if d not in lb + lc]
           + [rs[d] for d in range(rhs.ndim) if d not in rb + rc and d != group])
    out_dt = inst.shape.dtype
    acc_dt = _F32 if out_dt in _HALVES else out_dt
    operands, specs = [_convert(lhs, acc_dt), _convert(rhs, acc_dt)], [ls, rs]
    if mode != "batch":
        sizes = gs.astype(np.int64)
        if sizes.ndim == 1:
            sizes = np.broadcast_to(sizes, tuple(lhs.shape[d] for d in prefix) + sizes.shape)
        ends = np.cumsum(sizes, axis=-1)
        starts = ends - sizes
        r = np.arange(lhs.shape[ragged]).reshape((-1, 1))
        mask = (starts[..., None, :] <= r) & (r < ends[..., None, :])
        operands.append(mask.astype(acc_dt))
        specs.append([ls[d] for d in prefix] + [ls[ragged], g])
        if mode == "contracting":
            out = [g] + out
    spec = ",".join("".join(s) for s in specs)
    result = np.einsum(f"{spec}->{''.join(out)}", *operands, optimize=True)
    return _convert(result, out_dt)


# ============================================================================
# Control flow and computations applied to elements
# ============================================================================

# Scalar computations made only of these can run on whole arrays at once.
_BATCHABLE = set(_ARITHMETIC) | set(_TRANSCENDENTAL) | {
    "parameter", "constant", "compare", "select", "clamp", "convert", "reduce-precision",
    "tuple", "get-tuple-element"}


def _batchable(comp: HloComputation) -> bool:
    def scalar(shape):
        return all(s.is_array and not s.dimensions for s in shape.leaves())
    return all(i.opcode in _BATCHABLE and scalar(i.shape)
               and not (i.opcode == "select" and i.shape.is_tuple) for i in comp.instructions)


@_rule("call")
def _call(inst, vals):
    return _run(inst.attrs["to_apply"], vals)


def _zeros_of(shape: Shape):
    if shape.is_tuple:
        return tuple(_zeros_of(s) for s in shape.tuple_shapes)
    if shape.is_token:
        return np.zeros(0, np.uint8)
    return np.zeros(shape.dimensions, shape.dtype)


@_rule("async-start")
def _async_wrapper_start(inst, vals):
    # Synchronous: the wrapped computation runs here; the context elements are zeros.
    result = _run(inst.attrs["calls"], vals)
    return (tuple(vals), result) + tuple(_zeros_of(s) for s in inst.shape.tuple_shapes[2:])


@_rule("async-update")
def _async_wrapper_update(inst, vals):
    return vals[0]


@_rule("async-done")
def _async_wrapper_done(inst, vals):
    return vals[0][1]


@_rule("fusion")
def _fusion(inst, vals):
    # A fusion computes exactly its fused computation (fusion changes only how).
    return _run(inst.attrs["calls"], vals)


@_rule("while")
def _while(inst, vals):
    cond, body = inst.attrs["condition"], inst.attrs["body"]
    state = vals[0]
    device = getattr(_TLS, "device", None)
    while bool(_run(cond, [state])):
        if device is not None:
            device.poll()       # another device failed: stop instead of looping on
        state = _run(body, [state])
    return state


@_rule("scan")
def _scan(inst, vals):
    """XLA's Scan, step by step: to_apply on each input's slice of the scan
    dimension and the carries; outputs stacked, the carries passed on."""
    body = inst.attrs["to_apply"]
    (d,) = _ints(inst.attrs["dimensions"])
    carries = _int(inst.attrs.get("num_carries", 0))
    inputs, state = vals[:len(vals) - carries], list(vals[len(vals) - carries:])
    length = inputs[0].shape[d]
    multiple = body.root.shape.is_tuple
    outputs = []
    steps = range(length - 1, -1, -1) if _bool(inst.attrs.get("is_reverse", False)) else range(length)
    for i in steps:
        got = _run(body, [np.take(x, i, axis=d) for x in inputs] + state)
        got = list(got) if multiple else [got]
        outputs.append((i, got[:len(got) - carries]))
        state = got[len(got) - carries:]
    outputs.sort(key=lambda t: t[0])
    shapes = inst.shape.tuple_shapes if inst.shape.is_tuple else [inst.shape]
    stacked = [np.stack([o[1][k] for o in outputs], axis=d) if outputs
               else np.zeros(shapes[k].dimensions, shapes[k].dtype) for k in range(len(shapes) - carries)]
    out = stacked + state
    return tuple(out) if inst.shape.is_tuple else out[0]


@_rule("conditional")
def _conditional(inst, vals):
    selector = vals[0]
    a = inst.attrs
    branches = a.get("branch_computations") or (a["true_computation"], a["false_computation"])
    if selector.dtype == np.bool_:
        b = 0 if bool(selector) else 1  # branch 0 is the true computation
    else:
        b = int(selector)
        if not 0 <= b < len(branches):
            b = len(branches) - 1  # out of range: the last branch
    return _run(branches[b], [vals[1 + b]])


@_rule("map")
def _map(inst, vals):
    comp = inst.attrs["to_apply"]
    dims = inst.shape.dimensions
    if _batchable(comp):
        return np.broadcast_to(_run(comp, list(vals), batch=dims), dims).copy()
    out = np.empty(dims, inst.shape.dtype)
    for idx in np.ndindex(*dims):
        out[idx] = _run(comp, [v[idx] for v in vals])
    return out


@_rule("sort")
def _sort(inst, vals):
    comp = inst.attrs["to_apply"]
    dims = _ints(inst.attrs.get("dimensions"))
    dim = dims[0] if dims else vals[0].ndim - 1
    rows = [np.moveaxis(v, dim, -1) for v in vals]
    n = rows[0].shape[-1]
    outs = [np.empty_like(r) for r in rows]
    batched = _batchable(comp) and n * n <= 1 << 22
    for idx in np.ndindex(*rows[0].shape[:-1]):
        keys = [r[idx] for r in rows]
        if batched:  # less[i, j] = comparator(element i, element j), all pairs at once
            args = []
            for k in keys:
                args += [np.broadcast_to(k[:, None], (n, n)), np.broadcast_to(k[None, :], (n, n))]
            less = np.broadcast_to(_run(comp, args, batch=(n, n)), (n, n))
            before = lambda i, j: bool(less[i, j])  # noqa: E731
        else:
            def before(i, j, keys=keys):
                return bool(_run(comp, [e for k in keys for e in (k[i], k[j])]))
        # Python's sort is stable, which also satisfies is_stable=false.
        order = sorted(range(n), key=functools.cmp_to_key(
            lambda i, j: -1 if before(i, j) else (1 if before(j, i) else 0)))
        for out, k in zip(outs, keys):
            out[idx] = k[order]
    results = [np.moveaxis(o, -1, dim) for o in outs]
    return tuple(results) if inst.shape.is_tuple else results[0]


# ============================================================================
# Gather, convolution, reduce-window, select-and-scatter, fft
# (window and dim_labels text: xlac/hlo/window.py)
# ============================================================================

def _index_values(a, hi):
    """Start indices as int64, clamped to [0, hi] (unsigned values never go negative)."""
    if a.dtype.kind == "u":
        return np.minimum(a.astype(np.uint64), np.uint64(max(hi, 0))).astype(np.int64)
    return np.clip(a.astype(np.int64), 0, hi)


@_rule("gather")
def _gather(inst, vals):
    operand, idx = vals
    a = inst.attrs
    offset_dims = _ints(a.get("offset_dims"))
    collapsed = _ints(a.get("collapsed_slice_dims"))
    start_index_map = _ints(a.get("start_index_map"))
    operand_batching = _ints(a.get("operand_batching_dims"))
    indices_batching = _ints(a.get("start_indices_batching_dims"))
    slice_sizes = _ints(a.get("slice_sizes"))
    ivd = _int(a["index_vector_dim"])
    out_dims = inst.shape.dimensions
    if 0 in out_dims or 0 in slice_sizes:
        # Empty slices (a collapsed or batching dimension of slice size 0, which
        # XLA's shape inference allows) hold no element to read: zeros, as
        # XLA's GatherExpander leaves its accumulator.
        return np.zeros(out_dims, inst.shape.dtype)
    if ivd == idx.ndim:
        idx = idx[..., None]
    batch_in = [d for d in range(idx.ndim) if d != ivd]       # start_indices batch dims, in order
    vectors = np.moveaxis(idx, ivd, -1)                        # batch dims..., index vector
    out_index = np.indices(out_dims, dtype=np.int64)
    batch_out = [d for d in range(len(out_dims)) if d not in offset_dims]
    G = tuple(out_index[d] for d in batch_out)                 # one array per batch dim
    starts = vectors[G]                                        # out dims..., index vector
    operand_index = [np.zeros(out_dims, np.int64) for _ in range(operand.ndim)]
    for k, d in enumerate(start_index_map):                    # S_in, clamped (the spec)
        operand_index[d] = operand_index[d] + _index_values(starts[..., k], operand.shape[d] - slice_sizes[d])
    remapped = [d for d in range(operand.ndim) if d not in collapsed and d not in operand_batching]
    for k, d in enumerate(remapped):                           # O_in
        operand_index[d] = operand_index[d] + out_index[offset_dims[k]]
    for od, sd in zip(operand_batching, indices_batching):     # explicit batch dims
        operand_index[od] = operand_index[od] + G[batch_in.index(sd)]
    return operand[tuple(operand_index)]


def _window_base(x, window, fill):
    """``x`` dilated and padded as ``window`` says, with a mask of the real elements:
    ``(base, mask)``; holes and padding hold ``fill`` and are False in the mask."""
    sizes, places = [], []
    for wd, n in zip(window, x.shape):
        dilated = (n - 1) * wd.base_dilation + 1 if n else 0
        size = max(dilated + wd.padding_low + wd.padding_high, 0)
        pos = wd.padding_low + np.arange(n) * wd.base_dilation
        keep = (pos >= 0) & (pos < size)
        sizes.append(size)
        places.append((np.flatnonzero(keep), pos[keep]))
    base = np.full(sizes, fill, dtype=x.dtype)
    mask = np.zeros(sizes, dtype=bool)
    if x.ndim == 0:
        return x.copy(), np.ones((), bool)
    src = np.ix_(*[p[0] for p in places])
    dst = np.ix_(*[p[1] for p in places])
    base[dst] = x[src]
    mask[dst] = True
    return base, mask


def _window_positions(window, out_dims):
    """For each position ``k`` of the window (row-major), the slices of the dilated,
    padded base that line up with every output element."""
    for k in np.ndindex(*[wd.size for wd in window]):
        yield k, tuple(slice(kk * wd.window_dilation,
                             kk * wd.window_dilation + (o - 1) * wd.stride + 1, wd.stride)
                       for kk, wd, o in zip(k, window, out_dims))


def _reduce_identity(ufunc, dt):
    """The value a padded element may hold so that it changes no fast reduction."""
    if ufunc in (np.maximum, np.minimum):
        big = ufunc is np.minimum
        if dt.kind == "f":
            return dt.type(np.inf if big else -np.inf)
        if dt == np.bool_:
            return np.bool_(big)
        info = np.iinfo(dt)
        return dt.type(info.max if big else info.min)
    if ufunc is np.bitwise_and:
        return np.invert(np.zeros((), dt))[()]  # all bits set (True for pred)
    return np.ones((), dt)[()] if ufunc is np.multiply else np.zeros((), dt)[()]


@_rule("reduce-window")
def _reduce_window(inst, vals):
    n = len(vals) // 2
    inputs, inits = vals[:n], vals[n:]
    window = window_of(inst.attrs)
    comp = inst.attrs["to_apply"]
    dtypes = _leaf_dtypes(inst.shape)
    out_dims = (inst.shape.tuple_shapes[0] if n > 1 else inst.shape).dimensions
    ufunc = _fast_reducer(comp) if n == 1 else None
    if 0 in out_dims or inputs[0].ndim == 0:
        if 0 in out_dims:
            results = [np.zeros(out_dims, dt) for dt in dtypes]
        else:  # a scalar: one window holding the one element
            results = [_as_list(_run(comp, list(inits) + list(inputs)), n)[k] for k in range(n)]
            results = [np.asarray(r).astype(dt) for r, dt in zip(results, dtypes)]
        return tuple(results) if n > 1 else results[0]
    if ufunc is not None and (ufunc not in (np.bitwise_and, np.bitwise_or) or inputs[0].dtype.kind in "biu"):
        x, init = _wide(inputs[0]), _wide(inits[0])
        base, _ = _window_base(x, window, _reduce_identity(ufunc, x.dtype))
        acc = np.full(out_dims, init[()], dtype=x.dtype)
        # max/min order -0 below +0, which np.maximum/np.minimum do not.
        step = {np.maximum: _maximum, np.minimum: _minimum}.get(ufunc, ufunc)
        # Half-precision windows accumulate in f32 and round once (the scan
        # kernel does the same for jax's cumsum: XLA's results are far nearer
        # that than an add rounded to bf16 at every step).
        for _k, sl in _window_positions(window, out_dims):
            acc = step(acc, base[sl]).astype(x.dtype)
        return _convert(acc, inst.shape.dtype)
    # General path: fold the reducer over window positions, skipping padding and holes.
    bases = [_window_base(x, window, np.zeros((), x.dtype)) for x in inputs]
    mask_base = bases[0][1]
    acc = [np.full(out_dims, i[()], dtype=dt) for i, dt in zip(inits, dtypes)]
    batched = _batchable(comp)
    for _k, sl in _window_positions(window, out_dims):
        mask = mask_base[sl]
        xs = [b[0][sl] for b in bases]
        if batched:
            new = _as_list(_run(comp, acc + xs, batch=out_dims), n)
            acc = [np.where(mask, np.broadcast_to(v, out_dims), a).astype(dt)
                   for v, a, dt in zip(new, acc, dtypes)]
        else:
            for idx in zip(*np.nonzero(mask)):
                new = _as_list(_run(comp, [a[idx] for a in acc] + [x[idx] for x in xs]), n)
                for a, v in zip(acc, new):
                    a[idx] = v
    return tuple(acc) if n > 1 else acc[0]


@_rule("select-and-scatter")
def _select_and_scatter(inst, vals):
    operand, source, init = vals
    window = window_of(inst.attrs)
    select, scatter = inst.attrs["select"], inst.attrs["scatter"]
    dt = inst.shape.dtype
    out = np.full(operand.shape, init[()], dtype=dt)
    src_dims = source.shape
    if operand.ndim == 0:
        return np.asarray(_run(scatter, [out, source])).astype(dt)
    if 0 in src_dims or 0 in operand.shape:
        return out
    # Per window (one per source element): the selected operand index, first
    # valid element first, replaced whenever select(selected, candidate) is false.
    base, mask_base = _window_base(operand, window, np.zeros((), dt))
    coords = np.indices(base.shape, dtype=np.int64)  # base position -> operand index below
    have = np.zeros(src_dims, bool)
    sel_val = np.zeros(src_dims, dt)
    sel_pos = [np.zeros(src_dims, np.int64) for _ in range(operand.ndim)]
    batched = _batchable(select)
    for _k, sl in _window_positions(window, src_dims):
        valid, cand = mask_base[sl], base[sl]
        if batched:
            keep = np.broadcast_to(_run(select, [sel_val, cand], batch=src_dims), src_dims)
        else:
            keep = np.ones(src_dims, bool)
            for idx in zip(*np.nonzero(valid & have)):
                keep[idx] = bool(_run(select, [sel_val[idx], cand[idx]]))
        take = valid & (~have | ~keep)
        sel_val = np.where(take, cand, sel_val)
        for d, wd in enumerate(window):
            pos = (coords[d][sl] - wd.padding_low) // wd.base_dilation
            sel_pos[d] = np.where(take, pos, sel_pos[d])
        have |= valid
    ufunc = _fast_reducer(scatter)
    order = [idx for idx in np.ndindex(*src_dims) if have[idx]]  # row-major, as the JIT
    for idx in order:
        p = tuple(int(s[idx]) for s in sel_pos)
        if ufunc is not None:
            out[p] = _convert(ufunc(_wide(out[p]), _wide(source[idx])), dt)
        else:
            out[p] = np.asarray(_run(scatter, [out[p], source[idx]])).astype(dt)
    return out


@_rule("convolution")
@_mixed_types
def _convolution(inst, vals):
    """A direct convolution: for each kernel spatial position, the (dilated, padded)
    input slice that lines up with every output element, contracted with that
    kernel tap over the input features (per feature or batch group)."""
    lhs, rhs = vals
    dn = conv_dimension_numbers_of(inst.attrs)
    window = window_of(inst.attrs)
    fgc = _int(inst.attrs.get("feature_group_count", 1))
    bgc = _int(inst.attrs.get("batch_group_count", 1))
    out_dt = inst.shape.dtype
    acc_dt = _F32 if out_dt in _HALVES else out_dt
    x = np.transpose(_convert(lhs, acc_dt), (dn.input_batch_dimension, dn.input_feature_dimension)
                     + tuple(dn.input_spatial_dimensions))                      # N, C, spatial
    w = np.transpose(_convert(rhs, acc_dt), (dn.kernel_output_feature_dimension,
                     dn.kernel_input_feature_dimension) + tuple(dn.kernel_spatial_dimensions))  # O, I, spatial
    for k, wd in enumerate(window):
        if wd.window_reversal:
            w = np.flip(w, axis=2 + k)
    N, C = x.shape[:2]
    O, I = w.shape[:2]
    out_sp = tuple(inst.shape.dimensions[d] for d in dn.output_spatial_dimensions)
    out = np.zeros((N // bgc, O) + out_sp, acc_dt)
    if out.size and I:
        # Base dilation and padding act on the spatial dimensions only.
        full_window = [WindowDimension(1), WindowDimension(1)] + list(window)
        base, _ = _window_base(x, full_window, np.zeros((), acc_dt))
        for k, sl in _window_positions(full_window, (N, C) + out_sp):
            patch = base[sl]                                    # N, C, out spatial
            tap = w[(slice(None), slice(None)) + k[2:]]          # O, I
            if bgc > 1:   # output feature group g reads lhs batch group g
                p = patch.reshape((bgc, N // bgc, C) + out_sp)
                t = tap.reshape(bgc, O // bgc, I)
                r = np.einsum("bnc...,boc->nbo...", p, t).reshape((N // bgc, O) + out_sp)
            else:         # output feature group g reads input feature group g
                p = patch.reshape((N, fgc, C // fgc) + out_sp)
                t = tap.reshape(fgc, O // fgc, I)
                r = np.einsum("ngc...,goc->ngo...", p, t).reshape((N, O) + out_sp)
            out = (out + r).astype(acc_dt)
    src = [0] * out.ndim
    src[dn.output_batch_dimension] = 0
    src[dn.output_feature_dimension] = 1
    for k, d in enumerate(dn.output_spatial_dimensions):
        src[d] = 2 + k
    return _convert(np.transpose(out, src), out_dt)


@_rule("fft")
def _fft(inst, vals):
    x = vals[0]
    kind = str(inst.attrs["fft_type"])
    lengths = _ints(inst.attrs["fft_length"])
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    dt = inst.shape.dtype
    if 0 in inst.shape.dimensions or 0 in x.shape or 0 in lengths:   # a zero-length transform is 0
        return np.zeros(inst.shape.dimensions, dt)
    if kind == "FFT":
        r = np.fft.fftn(x.astype(np.complex128), axes=axes)
    elif kind == "IFFT":
        r = np.fft.ifftn(x.astype(np.complex128), axes=axes)
    elif kind == "RFFT":
        r = np.fft.rfftn(x.astype(_F64), s=lengths, axes=axes)
    else:
        r = np.fft.irfftn(x.astype(np.complex128), s=lengths, axes=axes)
    return r.astype(dt)


# ============================================================================
# Scatter and TopK
# ============================================================================

@_rule("scatter")
def _scatter(inst, vals):
    # Window by window, in row-major order of the scatter indices (the order the
    # code generator applies them too, so duplicate indices combine alike).  A
    # window that does not fit in the operand is skipped, as XLA does.
    n = (len(vals) - 1) // 2
    operands, idx, updates = vals[:n], vals[n], vals[n + 1:]
    a = inst.attrs
    uwd = _ints(a.get("update_window_dims"))
    iwd = _ints(a.get("inserted_window_dims"))
    sd2od = _ints(a.get("scatter_dims_to_operand_dims"))
    ibd = _ints(a.get("input_batching_dims"))
    sibd = _ints(a.get("scatter_indices_batching_dims"))
    ivd = _int(a["index_vector_dim"])
    comp = a["to_apply"]
    outs = [np.array(o, copy=True) for o in operands]
    op_dims = operands[0].shape
    rank = len(op_dims)
    upd_dims = updates[0].shape
    scatter_dims = [d for d in range(len(upd_dims)) if d not in uwd]
    window_operand_dims = [d for d in range(rank) if d not in iwd and d not in ibd]
    wsize = [1] * rank
    for k, d in enumerate(window_operand_dims):
        wsize[d] = upd_dims[uwd[k]]
    window_shape = tuple(wsize)
    if 0 in upd_dims or 0 in op_dims:
        return tuple(outs) if n > 1 else outs[0]
    if ivd == idx.ndim:
        idx = idx[..., None]
    vectors = np.moveaxis(idx, ivd, -1)
    batchable = _batchable(comp)
    dtypes = [o.dtype for o in outs]
    for g in np.ndindex(*[upd_dims[d] for d in scatter_dims]):
        vector = vectors[g]
        start = [0] * rank
        for k, d in enumerate(sd2od):
            start[d] = int(vector[k])
        for od, sd in zip(ibd, sibd):
            start[od] = g[sd if sd < ivd else sd - 1]
        if any(s < 0 or s > size - w for s, size, w in zip(start, op_dims, wsize)):
            continue
        region = tuple(slice(s, s + w) for s, w in zip(start, wsize))
        u_index = [slice(None)] * len(upd_dims)
        for pos, d in enumerate(scatter_dims):
            u_index[d] = g[pos]
        windows = [u[tuple(u_index)].reshape(window_shape) for u in updates]
        current = [o[region] for o in outs]
        if batchable:
            res = _as_list(_run(comp, current + windows, batch=window_shape), n)
            for o, r, dt in zip(outs, res, dtypes):
                o[region] = np.broadcast_to(r, window_shape).astype(dt)
        else:
            for w in np.ndindex(*window_shape):
                res = _as_list(_run(comp, [c[w] for c in current] + [u[w] for u in windows]), n)
                for c, r in zip(current, res):
                    c[w] = r
    return tuple(outs) if n > 1 else outs[0]


@_rule("topk")
def _topk(inst, vals):
    return _top_k(vals[0], _int(inst.attrs["k"]), _bool(inst.attrs.get("largest", True)))


def _top_k(x, k: int, largest: bool):
    # XLA sorts with a total-order comparison (NaN above +inf, +0 above -0),
    # stably: equal values keep their index order.
    if _is_float(x.dtype):
        key = _total_order_key(x)
    elif x.dtype == np.bool_:
        key = x.astype(np.int8)
    else:
        key = x
    if largest:
        key = ~key  # reverses the order of signed and unsigned integers alike
    order = np.argsort(key, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, axis=-1), order.astype(np.int32)


# ============================================================================
# Linear algebra (spec: Cholesky, TriangularSolve), in f64 / c128
# ============================================================================

@_rule("cholesky")
def _cholesky(inst, vals):
    # Lower: L L^H = a from a's lower triangle (the Cholesky-Banachiewicz
    # columns); upper: U = chol_lower(a^H)^H, from a's upper triangle.  The
    # other triangle is zeros.  A pivot's imaginary part is ignored (as
    # LAPACK's potrf); a pivot whose square root is NaN (negative or NaN: a is
    # not positive definite) makes that matrix of the batch all NaN, as XLA's
    # CholeskyExpander does.
    a = _precise(vals[0])
    lower = _bool(inst.attrs.get("lower", False))
    if not lower:
        a = np.conj(np.swapaxes(a, -1, -2))
    n = a.shape[-1]
    out = np.zeros_like(a)
    failed = np.zeros(a.shape[:-2], dtype=bool)
    for j in range(n):
        s = a[..., j:, j] - np.einsum("...ik,...k->...i", out[..., j:, :j], np.conj(out[..., j, :j]))
        root = np.sqrt(s[..., 0].real)
        failed |= np.isnan(root)
        out[..., j, j] = root
        out[..., j + 1:, j] = s[..., 1:] / root[..., None]
    out[failed] = np.nan
    if not lower:
        out = np.conj(np.swapaxes(out, -1, -2))
    return _convert(out, inst.shape.dtype)


def _substitute(t, b, lower: bool):
    """x with t x = b for triangular t (lower or upper, read on and below or
    above the diagonal): forward or back substitution, row by row."""
    m = t.shape[-1]
    x = np.zeros(b.shape, dtype=np.result_type(t, b))
    for i in (range(m) if lower else range(m - 1, -1, -1)):
        done = slice(0, i) if lower else slice(i + 1, m)
        rest = np.einsum("...k,...kn->...n", t[..., i, done], x[..., done, :])
        x[..., i, :] = (b[..., i, :] - rest) / t[..., i, i][..., None]
    return x


@_rule("triangular-solve")
def _triangular_solve(inst, vals):
    # op(a) x = b (left_side) or x op(a) = b, op(a) = a, a^T or a^H (transpose_a),
    # reading only a's lower or upper triangle (and not its diagonal with
    # unit_diagonal).  Singular a: the infinities and NaNs of the divisions.
    a, b = _precise(vals[0]), _precise(vals[1])
    lower = _bool(inst.attrs.get("lower", False))
    m = a.shape[-1]
    rows, cols = np.indices((m, m))
    keep = rows >= cols if lower else rows <= cols
    t = np.where(keep, a, np.zeros((), a.dtype))
    if _bool(inst.attrs.get("unit_diagonal", False)):
        t = np.where(rows == cols, np.ones((), a.dtype), t)
    transpose = str(inst.attrs.get("transpose_a", "NO_TRANSPOSE"))
    if transpose != "NO_TRANSPOSE":
        t, lower = np.swapaxes(t, -1, -2), not lower
        if transpose == "ADJOINT":
            t = np.conj(t)
    if _bool(inst.attrs.get("left_side", False)):
        x = _substitute(t, b, lower)
    else:  # x t = b  <=>  t^T x^T = b^T
        x = np.swapaxes(_substitute(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2), not lower), -1, -2)
    return _convert(x, inst.shape.dtype)


# ============================================================================
# Batch norm
# ============================================================================

def _per_feature(inst, x):
    """(reshape a per-feature array to broadcast along feature_index, the other
    axes, the number of elements per feature)."""
    feature = _int(inst.attrs["feature_index"])
    along = [1] * x.ndim
    along[feature] = -1
    axes = tuple(d for d in range(x.ndim) if d != feature)
    count = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    return (lambda v: v.reshape(along)), axes, count


def _epsilon(inst, x):
    return x.dtype.type(float(inst.attrs["epsilon"]))


@_rule("batch-norm-inference")
def _batch_norm_inference(inst, vals):
    # The spec's formula as written: (x - mean) / sqrt(variance + epsilon) *
    # scale + offset, each per-feature array along feature_index (halves in f32).
    x, scale, offset, mean, variance = (_wide(v) for v in vals)
    per_feature, _axes, _count = _per_feature(inst, x)
    normalized = (x - per_feature(mean)) / np.sqrt(per_feature(variance) + _epsilon(inst, x))
    return _convert(normalized * per_feature(scale) + per_feature(offset), inst.shape.dtype)


@_rule("batch-norm-training")
def _batch_norm_training(inst, vals):
    # The spec's formulas: the batch mean and (biased) variance of each feature
    # over the other dimensions, then y = scale * (x - mean) / sqrt(var + epsilon)
    # + offset.  An empty batch gives NaN moments, as 0/0.
    x, scale, offset = (_wide(v) for v in vals)
    per_feature, axes, count = _per_feature(inst, x)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = x.sum(axis=axes) / x.dtype.type(count)
        centered = x - per_feature(mean)
        var = (centered * centered).sum(axis=axes) / x.dtype.type(count)
        y = per_feature(scale) * centered / np.sqrt(per_feature(var) + _epsilon(inst, x)) + per_feature(offset)
    et = inst.shape.tuple_shapes[0].dtype
    return _convert(y, et), _convert(mean, et), _convert(var, et)


@_rule("batch-norm-grad")
def _batch_norm_grad(inst, vals):
    # The spec's formulas, with c_l and d_l the means over each feature's
    # elements: grad_operand = scale / sqrt(var + epsilon) * (grad_output - d
    # - c * (x - mean)), grad_scale = sum(grad_output * (x - mean) /
    # sqrt(var + epsilon)), grad_offset = sum(grad_output).
    x, scale, mean, var, dy = (_wide(v) for v in vals)
    per_feature, axes, count = _per_feature(inst, x)
    with np.errstate(invalid="ignore", divide="ignore"):
        var_eps = per_feature(var) + _epsilon(inst, x)
        centered = x - per_feature(mean)
        c = (dy * centered / var_eps).sum(axis=axes) / x.dtype.type(count)
        d = dy.sum(axis=axes) / x.dtype.type(count)
        grad_operand = per_feature(scale) / np.sqrt(var_eps) * (dy - per_feature(d) - per_feature(c) * centered)
        grad_scale = (dy * centered / np.sqrt(var_eps)).sum(axis=axes)
        grad_offset = dy.sum(axis=axes)
    et = inst.shape.tuple_shapes[0].dtype
    return _convert(grad_operand, et), _convert(grad_scale, et), _convert(grad_offset, et)


# ============================================================================
# Random numbers (spec: RngBitGenerator, RngUniform, RngNormal; the algorithms:
# xlac.hlo.rng)
# ============================================================================

@_rule("rng-bit-generator")
def _rng_bit_generator(inst, vals):
    bits = inst.shape.tuple_shapes[1]
    return rng.rng_bit_generator(str(inst.attrs["algorithm"]), vals[0], bits.dimensions,
                                 bits.element_type.bit_width)


def _take_rng_state(inst, delta: int) -> np.ndarray:
    """The generator state of ``inst`` (u64[2]: low, high) in this run, which
    then advances by ``delta``.  Each rng-get-and-update-state and each rng has
    a state of its own, from ``rng.RNG_STATE_INITIAL`` at the start of a run,
    as each has in a compiled program when it is loaded."""
    states = current_device().rng_states
    value = states.get(id(inst), rng.RNG_STATE_INITIAL)
    states[id(inst)] = (value + delta) % (1 << 128)
    return np.array([value & 0xFFFFFFFFFFFFFFFF, value >> 64], np.uint64)


@_rule("rng-get-and-update-state")
def _rng_get_and_update_state(inst, vals):
    return _take_rng_state(inst, _int(inst.attrs["delta"]))


def _rng_key(inst) -> int:
    key = rng.rng_key(inst.name)
    dev = current_device()
    if dev.num_devices > 1:
        dev = _device_for(inst)
        key = rng.device_key(key, dev.replica_id, dev.partition_id, dev.num_replicas, dev.num_partitions)
    return key


@_rule("rng")
def _rng(inst, vals):
    pt, dims = inst.shape.element_type, inst.shape.dimensions
    state = _take_rng_state(inst, rng.state_delta(pt, dims))
    return rng.rng_values(str(inst.attrs["distribution"]), _rng_key(inst), state, vals[0], vals[1], pt, dims)


# ============================================================================
# Devices and collectives (spec: AllReduce, AllGather, ReduceScatter,
# AllToAll, CollectivePermute, ReplicaId, Send, Recv)
# ============================================================================

class Device:
    """The device an evaluation runs as: its place among ``num_replicas x
    num_partitions`` and how it exchanges values with the others.

    ``exchange(inst, group, value)`` hands ``value`` to the devices of ``group``
    (global device ids, this one among them) and returns every member's value
    in group order, once all have arrived; ``post``/``fetch`` move a send's
    data to a recv-done; ``poll`` raises when the run was abandoned.
    Subclasses implement them (``xlac.evaluator_replicated``)."""

    def __init__(self, device_id: int, num_replicas: int, num_partitions: int):
        self.device_id, self.num_replicas, self.num_partitions = device_id, num_replicas, num_partitions
        self.counters: dict = {}    # what is counted (sends, recvs, meetings of a group) -> count so far
        self.recvs: dict = {}       # recv context number -> (channel, source, target, sequence) or None
        self.rng_states: dict = {}  # id of an rng / rng-get-and-update-state -> its 128-bit state

    @property
    def num_devices(self) -> int:
        return self.num_replicas * self.num_partitions

    @property
    def replica_id(self) -> int:
        return self.device_id // self.num_partitions

    @property
    def partition_id(self) -> int:
        return self.device_id % self.num_partitions

    def __str__(self) -> str:
        return f"device {self.device_id} (replica {self.replica_id}, partition {self.partition_id})"

    def check(self, inst) -> None:
        """Raise unless this device can run ``inst`` (the one-device evaluator cannot
        run a collective of a module of several devices)."""

    def group_error(self, inst, error: Exception) -> Exception:
        return CollectiveError(f"{error} (on {self})")

    def exchange(self, inst, group: tuple, value) -> list:
        raise NotImplementedError

    def post(self, inst, key: tuple, value) -> None:
        raise NotImplementedError

    def fetch(self, inst, key: tuple):
        raise NotImplementedError

    def poll(self) -> None:
        pass

    def next_in_sequence(self, key: tuple) -> int:
        k = self.counters.get(key, 0)
        self.counters[key] = k + 1
        return k


_HINT = ("xlac.evaluate runs a module as one device; use xlac.evaluate_replicated(module, "
         "per_device_args, num_replicas=..., num_partitions=...) to run every device")


class _OneDevice(Device):
    """``evaluate``: the module's only device (or a module of several devices,
    whose collectives and device ids are refused)."""

    def __init__(self, num_replicas: int = 1, num_partitions: int = 1):
        super().__init__(0, num_replicas, num_partitions)
        self.mail: dict = {}

    def __str__(self) -> str:
        return "the only device"

    def check(self, inst) -> None:
        if self.num_devices > 1:
            raise CollectiveError(
                f"{inst.opcode} {inst.name}: the module runs on {self.num_replicas} replica(s) x "
                f"{self.num_partitions} partition(s) = {self.num_devices} devices and {inst.opcode} "
                f"depends on which device runs it; {_HINT}")

    def group_error(self, inst, error: Exception) -> Exception:
        return CollectiveError(f"{error}; {_HINT}")

    def exchange(self, inst, group: tuple, value) -> list:
        if tuple(group) != (0,):                        # cannot happen: groups are checked
            raise CollectiveError(f"{inst.opcode} {inst.name}: needs devices {list(group)}; {_HINT}")
        return [value]

    def post(self, inst, key: tuple, value) -> None:
        self.mail[key] = value

    def fetch(self, inst, key: tuple):
        mail = self.mail
        if key not in mail:
            channel, source, target, k = key
            raise CollectiveError(f"{inst.opcode} {inst.name}: waits for send number {k} from device "
                                  f"{source} to device {target} on channel {channel}, which the program "
                                  "did not run before it")
        return mail.pop(key)


_TLS = threading.local()


def current_device() -> Device:
    """The device the calling thread evaluates as (by default the only device
    of a one-device module)."""
    dev = getattr(_TLS, "device", None)
    if dev is None:
        dev = getattr(_TLS, "default", None)
        if dev is None:
            dev = _TLS.default = _OneDevice()
    return dev


class running_as:
    """``with running_as(device): ...`` evaluates as ``device`` on this thread."""

    def __init__(self, device: Device):
        self.device = device

    def __enter__(self):
        self.saved = getattr(_TLS, "device", None)
        _TLS.device = self.device
        return self.device

    def __exit__(self, *exc):
        _TLS.device = self.saved
        return False


def _device_for(inst) -> Device:
    dev = current_device()
    dev.check(inst)
    return dev


def _group(inst) -> tuple:
    """(device, the devices of its group for ``inst``, its position in it)."""
    dev = _device_for(inst)
    try:
        group = collectives.device_group(inst, dev.device_id, dev.num_replicas, dev.num_partitions)
    except collectives.DeviceGroupError as e:
        raise dev.group_error(inst, e) from None
    return dev, group, group.index(dev.device_id)


def _one_or_tuple(values: list):
    return values[0] if len(values) == 1 else tuple(values)


def _combine(comp: HloComputation, a: np.ndarray, b: np.ndarray, dtype) -> np.ndarray:
    """The reducer ``comp`` applied element by element to ``a`` and ``b``."""
    if _batchable(comp):
        r = _run(comp, [a, b], batch=a.shape)
        return np.broadcast_to(r, a.shape).astype(dtype)
    out = np.empty(a.shape, dtype)
    for idx in np.ndindex(*a.shape):
        out[idx] = _run(comp, [a[idx], b[idx]])
    return out


def _reduce_across(inst, group: tuple, values: list) -> list:
    """Every operand reduced over the group with ``to_apply``, folded in group
    order (``values`` are the members' in group order): ``((v[g0] op v[g1]) op
    v[g2]) ...``, as the compiled code and both transports apply a reducer, so a
    non-commutative one gives the same result; every member of a group has the
    same order, so every device computes bit for bit the same result."""
    comp = inst.attrs["to_apply"]
    out = []
    for j in range(len(values[0])):
        acc = np.array(values[0][j], copy=True)
        for member in values[1:]:
            acc = _combine(comp, acc, member[j], acc.dtype)
        out.append(acc)
    return out


def _leaves_of(shape: Shape) -> list:
    return list(shape.tuple_shapes) if shape.is_tuple else [shape]


def _check_shards(inst, dev, group: tuple, d: int, pairs) -> None:
    """Each (operand, result) pair has the group size as its shard count along ``d``."""
    n = len(group)
    for x, r in pairs:
        big, small = (r.dimensions[d], x.shape[d]) if inst.opcode.startswith("all-gather") \
            else (x.shape[d], r.dimensions[d])
        if big != small * n:
            raise CollectiveError(
                f"{inst.opcode} {inst.name}: the result {r} has {big // small if small else '?'} shard(s) "
                f"along dimension {d}, but the group {{{','.join(map(str, group))}}} of {dev} has {n} "
                "device(s)")


@_rule("all-reduce", "all-reduce-start")
def _all_reduce(inst, vals):
    # all-reduce-start has the all-reduce's shape; all-reduce-done forwards it.
    dev, group, _ = _group(inst)
    values = dev.exchange(inst, group, tuple(vals))
    return _one_or_tuple(_reduce_across(inst, group, values))


@_rule("all-gather", "all-gather-start")
def _all_gather(inst, vals):
    start = inst.opcode == "all-gather-start"
    d = _ints(inst.attrs.get("dimensions"))[0]
    dev, group, _ = _group(inst)
    results = _leaves_of(inst.shape.tuple_shapes[1] if start else inst.shape) if len(vals) > 1 else \
        [inst.shape.tuple_shapes[1] if start else inst.shape]
    _check_shards(inst, dev, group, d, zip(vals, results))
    values = dev.exchange(inst, group, tuple(vals))
    gathered = _one_or_tuple([np.concatenate([v[j] for v in values], axis=d) for j in range(len(vals))])
    return (_one_or_tuple(list(vals)), gathered) if start else gathered


@_rule("collective-broadcast")
def _collective_broadcast(inst, vals):
    # Every device of the group takes the first device's operands.
    if _bool(inst.attrs.get("has_dynamic_root", False)):
        raise UnsupportedError("collective-broadcast with has_dynamic_root=true",
                               f"instruction {inst.name}: only the group's first device as the root")
    dev, group, _ = _group(inst)
    values = dev.exchange(inst, group, tuple(vals))
    return _one_or_tuple([np.array(v, copy=True) for v in values[0]])


@_rule("ragged-all-to-all")
def _ragged_all_to_all(inst, vals):
    """jax's ``ragged_all_to_all``: slice ``i`` of the N offsets goes to the
    group's device ``i // (N / size)``; receiver slot ``s * k + m`` (sender
    ``s``, its ``m``-th slice for us) writes ``send_sizes`` rows at the offset
    the sender's ``output_offsets`` gives, in slot order.  Sizes that disagree
    with ``recv_sizes`` and slices outside the arrays are errors."""
    x, out, in_off, send, out_off, recv = vals
    dev, group, me = _group(inst)
    n, total = len(group), len(in_off)
    if total % n:
        raise CollectiveError(f"{inst.opcode} {inst.name}: {total} offsets are not a multiple of the group "
                              f"{{{','.join(map(str, group))}}} of {dev} ({n} devices)")
    k = total // n
    result = np.array(out, copy=True)
    for s, (xs, ioff, ssz, ooff) in enumerate(dev.exchange(inst, group, (x, in_off, send, out_off))):
        for m in range(k):
            j, slot = me * k + m, s * k + m
            start, size, at = int(ioff[j]), int(ssz[j]), int(ooff[j])
            if size != int(recv[slot]):
                raise ValueError(f"{inst.opcode} {inst.name}: recv_sizes[{slot}] is {int(recv[slot])} on {dev}, but "
                                 f"device {group[s]} sends {size} rows")
            if size < 0 or start < 0 or start + size > xs.shape[0] or at < 0 or at + size > result.shape[0]:
                raise ValueError(f"{inst.opcode} {inst.name}: device {group[s]} sends input rows [{start}, "
                                 f"{start + size}) of {xs.shape[0]} to output rows [{at}, {at + size}) of "
                                 f"{result.shape[0]} on {dev}")
            result[at:at + size] = xs[start:start + size]
    return result


@_rule("reduce-scatter")
def _reduce_scatter(inst, vals):
    d = _ints(inst.attrs.get("dimensions"))[0]
    dev, group, me = _group(inst)
    results = _leaves_of(inst.shape) if len(vals) > 1 else [inst.shape]
    _check_shards(inst, dev, group, d, zip(vals, results))
    values = dev.exchange(inst, group, tuple(vals))
    out = []
    for x, r in zip(_reduce_across(inst, group, values), results):
        block = r.dimensions[d]
        out.append(np.take(x, range(me * block, (me + 1) * block), axis=d))
    return _one_or_tuple(out)


@_rule("all-to-all")
def _all_to_all(inst, vals):
    dev, group, me = _group(inst)
    n = len(group)
    if "dimensions" in inst.attrs:                      # array form: split and concat along d
        d = _ints(inst.attrs["dimensions"])[0]
        x = vals[0]
        if x.shape[d] % n:
            raise CollectiveError(f"{inst.opcode} {inst.name}: split dimension {d} of size {x.shape[d]} is "
                                  f"not divisible by the {n} devices of the group of {dev}")
        values = dev.exchange(inst, group, tuple(np.split(x, n, axis=d)))
        return np.concatenate([np.array(values[j][me], copy=True) for j in range(n)], axis=d)
    if len(vals) != n:
        raise CollectiveError(f"{inst.opcode} {inst.name}: the tuple form has {len(vals)} operand(s) but the "
                              f"group {{{','.join(map(str, group))}}} of {dev} has {n} device(s)")
    values = dev.exchange(inst, group, tuple(vals))
    return tuple(np.array(values[j][me], copy=True) for j in range(n))


def _permute(inst, vals) -> list:
    """What this device receives: the source's operands, or zeros without a source."""
    dev = _device_for(inst)
    try:
        pairs = collectives.device_pairs(inst, dev.num_replicas, dev.num_partitions)
        scope = collectives.permute_scope(inst, dev.device_id, dev.num_replicas, dev.num_partitions)
    except collectives.DeviceGroupError as e:
        raise dev.group_error(inst, e) from None
    values = dev.exchange(inst, scope, tuple(vals))
    sources = [s for s, t in pairs if t == dev.device_id]
    if not sources:
        return [np.zeros_like(v) for v in vals]
    return [np.array(v, copy=True) for v in values[scope.index(sources[0])]]


@_rule("collective-permute")
def _collective_permute(inst, vals):
    return _one_or_tuple(_permute(inst, vals))


@_rule("collective-permute-start")
def _collective_permute_start(inst, vals):
    received = _one_or_tuple(_permute(inst, vals))
    context = [np.zeros(s.dimensions, s.dtype) if s.is_array else np.zeros(0, np.uint8)
               for s in inst.shape.tuple_shapes[2:]]
    return (_one_or_tuple(list(vals)), received, *context)


@_rule("all-reduce-done")
def _all_reduce_done(inst, vals):
    return vals[0]


@_rule("all-gather-done", "collective-permute-done")
def _async_done(inst, vals):
    return vals[0][1]


@_rule("replica-id")
def _replica_id(inst, vals):
    return np.array(_device_for(inst).replica_id, np.uint32)


@_rule("partition-id")
def _partition_id(inst, vals):
    return np.array(_device_for(inst).partition_id, np.uint32)


_TOKEN = np.zeros(0, np.uint8)


def _transfer_pairs(inst) -> tuple:
    """(device, channel, (source, target) device pairs) of a send or recv."""
    dev = _device_for(inst)
    if _bool(inst.attrs.get("is_host_transfer", False)):
        raise UnsupportedError(inst.opcode, f"{inst.name}: host transfers (is_host_transfer=true)")
    try:
        pairs = collectives.send_recv_pairs(inst, dev.num_replicas, dev.num_partitions)
    except collectives.DeviceGroupError as e:
        raise dev.group_error(inst, e) from None
    if pairs is None:
        raise UnsupportedError(inst.opcode, f"{inst.name}: without the frontend attribute "
                               f"{collectives.SEND_RECV_PAIRS_ATTRIBUTE} that says which devices it connects")
    return dev, inst.attrs.get("channel_id"), pairs


@_rule("send")
def _send(inst, vals):
    dev, channel, pairs = _transfer_pairs(inst)
    data = vals[0]
    for source, target in pairs:
        if source == dev.device_id:
            k = dev.next_in_sequence(("send", channel, source, target))
            dev.post(inst, (channel, source, target, k), data)
    return (data, np.array(0, np.uint32), _TOKEN)


@_rule("send-done")
def _send_done(inst, vals):
    return _TOKEN       # sends are buffered: nothing to wait for


@_rule("recv")
def _recv(inst, vals):
    dev, channel, pairs = _transfer_pairs(inst)
    sources = [s for s, t in pairs if t == dev.device_id]
    key = None
    if sources:
        k = dev.next_in_sequence(("recv", channel, sources[0], dev.device_id))
        key = (channel, sources[0], dev.device_id, k)
    handle = dev.next_in_sequence(("recv context",)) & 0xFFFFFFFF
    dev.recvs[handle] = key
    data_shape = inst.shape.tuple_shapes[0]
    return (_zeros(data_shape), np.array(handle, np.uint32), _TOKEN)


def _zeros(shape: Shape):
    if shape.is_tuple:
        return tuple(_zeros(s) for s in shape.tuple_shapes)
    if shape.is_token:
        return _TOKEN
    return np.zeros(shape.dimensions, shape.dtype)


@_rule("recv-done")
def _recv_done(inst, vals):
    dev = current_device()
    handle = int(vals[0][1])
    if handle not in dev.recvs:
        raise CollectiveError(f"{inst.opcode} {inst.name}: its operand is not the value of a recv this "
                              f"device ran ({dev})")
    key = dev.recvs.pop(handle)
    if key is None:         # no pair targets this device: nothing arrives
        return (_zeros(inst.shape.tuple_shapes[0]), _TOKEN)
    return (_copy_out(dev.fetch(inst, key)), _TOKEN)


# ============================================================================
# Infeed and outfeed (xlac.hlo.feeds)
# ============================================================================

#: Seconds an infeed waits on a queue without a ``timeout`` attribute of its own.
DEFAULT_FEED_TIMEOUT = 60.0


class _Feeds:
    """Where the infeeds of one ``evaluate`` read and its outfeeds write."""

    def __init__(self, infeed=None, outfeed=None):
        if isinstance(infeed, (np.ndarray, np.generic, str, bytes)):
            raise TypeError(f"evaluate: infeed= takes a list of values (arrays or tuples of arrays) or a "
                            f"queue, got {feeds.describe(infeed)}")
        self.queue = infeed if infeed is not None and callable(getattr(infeed, "get", None)) else None
        self.values = iter(infeed) if infeed is not None and self.queue is None else None
        self.read_count = 0
        if outfeed is not None and not (isinstance(outfeed, list) or callable(getattr(outfeed, "put", None))):
            raise TypeError(f"evaluate: outfeed= takes a list (values are appended) or a queue with put(), "
                            f"got {type(outfeed).__name__}")
        self.outfeed = outfeed

    def read(self, inst, shape: Shape):
        what = feeds.label("infeed", inst.name, shape)
        if shape.is_tuple and not shape.tuple_shapes:
            return ()                    # spec: an empty tuple reads nothing
        if self.queue is not None:
            timeout = getattr(self.queue, "timeout", DEFAULT_FEED_TIMEOUT)
            try:
                value = self.queue.get(timeout=timeout)
            except (queue.Empty, TimeoutError) as e:
                raise FeedTimeoutError(f"{what}: no value came within {timeout} s") from e
        elif self.values is not None:
            try:
                value = next(self.values)
            except StopIteration:
                raise FeedError(f"{what}: the infeed= values are used up ({self.read_count} read)") from None
        else:
            raise FeedError(f"{what}: evaluate() was given no infeed= values to read")
        self.read_count += 1
        return feeds.check_value(value, shape, what)

    def write(self, inst, value) -> None:
        if isinstance(value, tuple) and not value:
            return                       # an empty tuple writes nothing
        if self.outfeed is None:
            raise FeedError(f"{feeds.label('outfeed', inst.name, feeds.data_shape(inst))}: evaluate() was "
                            "given no outfeed= list to write to")
        if isinstance(self.outfeed, list):
            self.outfeed.append(value)
        else:
            self.outfeed.put(value)


class _feeding:
    """``with _feeding(feeds): ...`` evaluates with ``feeds`` on this thread."""

    def __init__(self, f: _Feeds):
        self.feeds = f

    def __enter__(self):
        self.saved = getattr(_TLS, "feeds", None)
        _TLS.feeds = self.feeds

    def __exit__(self, *exc):
        _TLS.feeds = self.saved
        return False


def _current_feeds() -> _Feeds:
    f = getattr(_TLS, "feeds", None)
    return f if f is not None else _Feeds()


@_rule("infeed")
def _infeed(inst, vals):
    data = _current_feeds().read(inst, feeds.data_shape(inst))
    return (data, _TOKEN)


@_rule("outfeed")
def _outfeed(inst, vals):
    _current_feeds().write(inst, _copy_out(vals[0]))
    return _TOKEN


# -- XLA-internal plumbing: sharding domains and asynchronous copies ------------------

@_rule("domain")
def _domain(inst, vals):
    return vals[0]


@_rule("copy-start")
def _copy_start(inst, vals):
    return (np.array(vals[0], copy=True), vals[0], np.uint32(0))


@_rule("copy-done")
def _copy_done(inst, vals):
    return vals[0][0]


@_rule("stochastic-convert")
def _stochastic_convert(inst, vals):
    """XLA's StochasticConvertDecomposer, step for step: |x| truncated, plus one
    when the random value is below the fraction scaled to the random type's
    range; the sign put back; values at or past the integer range saturate."""
    x, random = np.asarray(vals[0]), np.asarray(vals[1])
    to = np.dtype(inst.shape.dtype)
    info = np.iinfo(to)
    with np.errstate(all="ignore"):
        negative = np.sign(x) < 0
        whole = np.floor(np.abs(x))
        fraction = np.abs(x) - whole
        if x.dtype == np.float16:           # 2^16 is not an f16
            fraction = fraction.astype(np.float32)
        fixed = fraction * fraction.dtype.type(2.0 ** (8 * random.dtype.itemsize))
        up = random < _convert(fixed, random.dtype)
        t = _convert(whole, to)
        t = np.where(up, np.add(t, np.ones((), to), dtype=to), t)
        out = np.where(negative, np.negative(t, dtype=to), t).astype(to)
        out = np.where(x <= x.dtype.type(info.min), to.type(info.min), out)
        out = np.where(x >= x.dtype.type(info.max), to.type(info.max), out)
    return out.astype(to)
