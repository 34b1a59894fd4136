"""OpExpander: ops the code generator does not emit, rewritten into ops it does.

:data:`EXPANSIONS` holds one rewrite per opcode (a pattern, as the algebraic
simplifier's: ``fn(inst, rewriter) -> changed``); the ``op-expander`` pass
applies them to every computation, first in the code-generation pipelines,
so that what they produce is simplified and fused like any other code.  This
is XLA's family of ``OpExpanderPass`` subclasses (``BatchNormExpander``, ...)
as one table.

* ``batch-norm-inference``, ``batch-norm-training``, ``batch-norm-grad``
  (spec: BatchNormInference, BatchNormTraining, BatchNormGrad), as XLA's
  BatchNormExpander: per-feature arrays broadcast along ``feature_index``,
  moments as ``reduce``-adds over the other dimensions, the rest elementwise,
  so fusion makes each a few loops (f16/bf16 computed in f32).  Inference is
  ``x * scale' + shift`` with ``scale' = scale * rsqrt(variance + epsilon)``
  and ``shift = offset - mean * scale'``: one multiply-add per element.
  Training takes the variance as the mean of ``(x - mean)^2`` (the spec's
  formula; XLA's ``E[x^2] - E[x]^2`` loses every digit when the mean is large
  against the deviation), one more pass over the operand.
* ``bitcast-convert`` between element types of different widths (spec:
  BitcastConvertType), as XLA's BitcastDtypesExpander: shifts and
  truncating converts on unsigned integers, little-endian (below);
* ``rng-bit-generator`` and ``rng`` (spec: RngBitGenerator, RngUniform,
  RngNormal), as XLA's RngBitGeneratorExpander and RngExpander: integer
  Threefry/Philox rounds per output element (``rng_expander.py``);
* the asynchronous collective pairs (``all-reduce-start``/``-done``,
  ``all-gather-start``/``-done``, ``collective-permute-start``/``-done``):
  the synchronous collective where the ``-start`` was (XLA's
  ConvertAsyncCollectivesToSync);
* a ``fusion`` (from XLA's optimised text) holding an op xlac's fusion emitter
  does not take (a ``scatter``, a ``sort`` ...): a ``call``, inlined, re-fused;
* XLA's async wrappers ``async-start``/``-update``/``-done`` (and their short
  forms, ``custom-call-start`` ...): a ``call`` of the wrapped computation where
  the async-start was (the call inliner inlines it), as XLA's
  ConvertAsyncCollectivesToSync does for collectives;
* ``stochastic-convert`` (float to signed integer, rounded up when the random
  operand says so), as XLA's StochasticConvertDecomposer;
* ``scaled-dot`` (XLA's ScaledDot), as XLA's ScaledDotRewriter: each
  operand and its scale converted to a common type, the scale broadcast over
  its blocks and multiplied in, then a ``dot``;
* ``reduce`` of a narrow float (bf16, f16, f8) by ``maximum`` or ``minimum``:
  in f32, converted back once (the same values: the result is one of the
  inputs), as XLA's FloatNormalization computes it, so that the reduction
  kernels accumulate in f32 vectors;
* ``dot`` and ``convolution`` of operands of two element types, as XLA's
  OperandUpcaster: both converted to the type XLA computes in, the op computed
  in it, the result converted to the result type;
* ``convolution`` with feature or batch groups: one plain convolution per
  group, concatenated along the output features (``conv_groups``);
* ``dot`` and ``convolution`` of complex operands: four real ones (4M), which
  run on the real GEMM kernels;
* ``dot`` and ``convolution`` of 8-bit integers: f32 ones (exact: every partial
  sum an integer below 2**24, long dot contractions cut into chunks), converted back;
* ``fft`` with a 0 in ``fft_length``: zeros;
* ``ragged-dot`` (XLA's RaggedDot), as XLA's RaggedDotRewriter and jax's
  reference: the ragged operand widened by a leading group dimension whose
  slice ``j`` keeps group ``j``'s rows (zeros elsewhere), then a ``dot``
  that contracts it with the rhs group dimension (ragged non-contracting) or
  keeps it as a batch dimension (ragged contracting; the rhs widened alike);
* ``collective-broadcast`` (XLA's CollectiveBroadcast): an ``all-gather``
  of the operands (given a leading dimension) over the same groups, of which
  every device keeps the first device's slice;
* ``ragged-all-to-all`` (XLA's RaggedAllToAll): every slice gathered into a
  block of the input's leading size, the blocks and each slice's output
  offset and size exchanged by array ``all-to-all``s over the same groups,
  then each received slice selected into the output rows it covers (reads
  and writes stay inside the arrays whatever the offsets);
* ``scan`` (XLA's Scan), as XLA's ScanExpander: a ``while`` whose state is
  the step, the carries, the inputs and the stacked outputs; each step
  dynamic-slices the inputs, calls ``to_apply`` and dynamic-update-slices
  its outputs in (from the end with ``is_reverse``);
* ``domain`` (its operand) and ``copy-start``/``copy-done`` (a ``copy``
  where the start was), XLA's internal plumbing;
* ``send``/``recv`` of one channel with their ``-done`` ops: one
  ``collective-permute`` of the sent data along
  ``_xla_send_recv_source_target_pairs``, returned by the ``recv-done``;
* ``custom-call`` of jax's ``lapack_spotrf_ffi``/``lapack_dpotrf_ffi``
  (order 129 or more, info only compared with 0): the ``cholesky`` it is,
  the other triangle kept, info from the factor's last diagonal element;
* ``custom-call`` of jax's ``lapack_strsm_ffi``/``lapack_dtrsm_ffi`` (no
  alpha operand, order 129 or more, several right-hand sides): the
  ``triangular-solve`` it is, row-major (xlac's blocked substitution);
* ``custom-call``: not expanded, but given the layouts its target reads and
  writes (what XLA's layout assignment does for custom calls): each operand
  is copied into the layout of its ``operand_layout_constraints`` entry
  (row-major when there is none); jax's LAPACK targets read and write
  column-major matrices whatever the instruction says, so their results are
  computed in that layout and copied into the one written.
"""
from __future__ import annotations

from contextvars import ContextVar

import numpy as np

from ..errors import UnsupportedError
from ..hlo import collectives
from ..hlo import custom_call as hcc
from ..hlo.opcodes import Trait, has_trait
from ..hlo.shape_inference import higher_precision_type, ragged_dot_dimensions, scaled_dot_type
from ..hlo.ir import Diagnostic, HloInstruction, HloModule
from ..hlo.window import conv_dimension_numbers_of
from ..shape import BF16, C64, C128, F16, F32, F64, PRED, S8, S32, U2, U4, U8, U16, U32, U64, Layout, Shape
from . import conv_as_dot, conv_groups, conv_phases, rng_expander, sparse_expander, tridiagonal_expander
from .rewriter import PatternRewriter, PatternSet, apply_patterns, slice_along, uniform_value

__all__ = ["OpExpander", "EXPANSIONS", "narrow_float_reducer", "narrow_max_min_reducer"]

EXPANSIONS = PatternSet()
rng_expander.register(EXPANSIONS)
tridiagonal_expander.register(EXPANSIONS)
sparse_expander.register(EXPANSIONS)


class _BatchNorm:
    """Building blocks of the batch-norm expansions: values of the operand's
    shape ("full") and rank-1 values of one element per feature, computed in
    f32 for f16/bf16 operands (as XLA:CPU computes halves) and converted back
    at the end."""

    def __init__(self, inst: HloInstruction, rw: PatternRewriter):
        self.inst, self.rw = inst, rw
        x = inst.operands[0].shape
        self.et = x.element_type
        self.ct = F32 if self.et in (F16, BF16) else self.et
        self.feature = int(inst.attrs["feature_index"])
        self.others = tuple(d for d in range(x.rank) if d != self.feature)
        self.count = int(np.prod([x.dimensions[d] for d in self.others], dtype=np.int64))
        out = inst.shape.tuple_shapes[0] if inst.shape.is_tuple else inst.shape
        self.full_shape = Shape(self.ct, x.dimensions, layout=out.layout)
        self.feature_shape = Shape(self.ct, (x.dimensions[self.feature],))
        self._constants: dict = {}

    def operands(self) -> list[HloInstruction]:
        """The instruction's operands in the compute type."""
        return [self._convert(o, self.ct) for o in self.inst.operands]

    def result(self, values: list[HloInstruction]) -> HloInstruction:
        """The instruction's result from ``values`` in the compute type."""
        shapes = self.inst.shape.tuple_shapes if self.inst.shape.is_tuple else [self.inst.shape]
        outs = [self._convert(v, self.et, s.layout) for v, s in zip(values, shapes)]
        return self.rw.create("tuple", self.inst.shape, outs) if self.inst.shape.is_tuple else outs[0]

    def _convert(self, v: HloInstruction, et, layout=None) -> HloInstruction:
        if v.shape.element_type == et and (layout is None or v.shape.layout == layout):
            return v
        return self.rw.create("convert", Shape(et, v.shape.dimensions, layout=layout), [v])

    def full(self, opcode: str, *operands: HloInstruction) -> HloInstruction:
        return self.rw.create(opcode, self.full_shape, list(operands))

    def per_feature(self, opcode: str, *operands: HloInstruction) -> HloInstruction:
        return self.rw.create(opcode, self.feature_shape, list(operands))

    def constant(self, value: float, per_feature: bool = True) -> HloInstruction:
        """A constant (broadcast to a per-feature array), made once per expansion."""
        key = (value, per_feature)
        if key not in self._constants:
            scalar = self.rw.create("constant", Shape(self.ct, ()), [],
                                    {"literal": np.array(value, dtype=self.ct.dtype)})
            self._constants[key] = self.rw.create("broadcast", self.feature_shape, [scalar],
                                                  {"dimensions": ()}) if per_feature else scalar
        return self._constants[key]

    def epsilon(self) -> HloInstruction:
        return self.constant(float(self.inst.attrs["epsilon"]))

    def broadcast(self, v: HloInstruction) -> HloInstruction:
        """A per-feature value along the feature dimension of the full shape."""
        return self.rw.create("broadcast", self.full_shape, [v], {"dimensions": (self.feature,)})

    def sum(self, v: HloInstruction) -> HloInstruction:
        """The per-feature sums of a full value over the other dimensions."""
        add = self.rw.scalar_computation("add", self.ct)
        return self.rw.create("reduce", self.feature_shape, [v, self.constant(0.0, per_feature=False)],
                              {"dimensions": self.others, "to_apply": add})

    def mean(self, v: HloInstruction) -> HloInstruction:
        return self.per_feature("divide", self.sum(v), self.constant(float(self.count)))


@EXPANSIONS.register("batch-norm-inference")
def batch_norm_inference(inst: HloInstruction, rw: PatternRewriter) -> bool:
    bn = _BatchNorm(inst, rw)
    x, scale, offset, mean, variance = bn.operands()
    true_scale = bn.per_feature("multiply", scale,
                                bn.per_feature("rsqrt", bn.per_feature("add", variance, bn.epsilon())))
    shift = bn.per_feature("subtract", offset, bn.per_feature("multiply", mean, true_scale))
    y = bn.full("add", bn.full("multiply", x, bn.broadcast(true_scale)), bn.broadcast(shift))
    return rw.replace(inst, bn.result([y]))


@EXPANSIONS.register("batch-norm-training")
def batch_norm_training(inst: HloInstruction, rw: PatternRewriter) -> bool:
    bn = _BatchNorm(inst, rw)
    x, scale, offset = bn.operands()
    mean = bn.mean(x)
    centered = bn.full("subtract", x, bn.broadcast(mean))
    variance = bn.mean(bn.full("multiply", centered, centered))
    true_scale = bn.per_feature("multiply", scale,
                                bn.per_feature("rsqrt", bn.per_feature("add", variance, bn.epsilon())))
    y = bn.full("add", bn.full("multiply", centered, bn.broadcast(true_scale)), bn.broadcast(offset))
    return rw.replace(inst, bn.result([y, mean, variance]))


@EXPANSIONS.register("batch-norm-grad")
def batch_norm_grad(inst: HloInstruction, rw: PatternRewriter) -> bool:
    bn = _BatchNorm(inst, rw)
    x, scale, mean, variance, grad_output = bn.operands()
    variance_eps = bn.per_feature("add", variance, bn.epsilon())
    inv_stddev = bn.per_feature("rsqrt", variance_eps)
    centered = bn.full("subtract", x, bn.broadcast(mean))
    grad_offset = bn.sum(grad_output)
    sum_grad_centered = bn.sum(bn.full("multiply", grad_output, centered))
    grad_scale = bn.per_feature("multiply", sum_grad_centered, inv_stddev)
    # grad_operand = scale * inv_stddev * (grad_output - d - c * centered), with
    # d = grad_offset / N and c = sum_grad_centered / (N * (variance + epsilon)).
    count = bn.constant(float(bn.count))
    d = bn.per_feature("divide", grad_offset, count)
    c = bn.per_feature("divide", sum_grad_centered, bn.per_feature("multiply", variance_eps, count))
    k = bn.per_feature("multiply", scale, inv_stddev)
    inner = bn.full("subtract", bn.full("subtract", grad_output, bn.broadcast(d)),
                    bn.full("multiply", centered, bn.broadcast(c)))
    grad_operand = bn.full("multiply", bn.broadcast(k), inner)
    return rw.replace(inst, bn.result([grad_operand, grad_scale, grad_offset]))


# -- bitcast-convert between element types of different widths ------------------------
# (XLA's BitcastDtypesExpander.)  Each element is the unsigned integer of its
# width; a narrower type takes its pieces from the lowest bits up along a new
# minor-most dimension (little-endian: the order of the bytes in memory, as
# on x86), a wider one ORs the pieces of that dimension back together.  All
# elementwise ops, broadcasts, slices and reshapes: they fuse into one loop.
# A complex element is its real part followed by its imaginary part.

_UNSIGNED = {2: U2, 4: U4, 8: U8, 16: U16, 32: U32, 64: U64}
_COMPLEX_PART = {C64: F32, C128: F64}


@EXPANSIONS.register("bitcast-convert")
def bitcast_convert_widths(inst: HloInstruction, rw: PatternRewriter) -> bool:
    src, dst = inst.operands[0].shape.element_type, inst.shape.element_type
    if src.bit_width == dst.bit_width:
        return False                      # an elementwise bitcast: the code generator's
    if not {t.bit_width // (2 if t.is_complex else 1) for t in (src, dst)} <= _UNSIGNED.keys():
        return False                      # 1-bit types: refused by the code generator, by name
    expand = _bitcast_complex if src.is_complex else _bitcast_real
    return rw.replace(inst, expand(rw, inst.operands[0], inst.shape))


def _as(rw: PatternRewriter, x: HloInstruction, shape: Shape) -> HloInstruction:
    """``x`` (same bits per element, same dimensions) as ``shape``."""
    if x.shape == shape:
        return x
    opcode = "copy" if x.shape.element_type == shape.element_type else "bitcast-convert"
    return rw.create(opcode, shape, [x])


def _slice_minor(rw: PatternRewriter, x: HloInstruction, start: int, stop: int,
                 dims: tuple) -> HloInstruction:
    """``x[..., start:stop]`` reshaped to ``dims``."""
    spec = tuple((0, d, 1) for d in x.shape.dimensions[:-1]) + ((start, stop, 1),)
    et = x.shape.element_type
    piece = rw.create("slice", Shape(et, x.shape.dimensions[:-1] + (stop - start,)), [x], {"slice": spec})
    return rw.create("reshape", Shape(et, dims), [piece])


def _bitcast_real(rw: PatternRewriter, x: HloInstruction, out: Shape) -> HloInstruction:
    a, b = x.shape.element_type.bit_width, out.element_type.bit_width
    u = x if x.shape.element_type == _UNSIGNED[a] else \
        rw.create("bitcast-convert", Shape(_UNSIGNED[a], x.shape.dimensions), [x])
    if a > b:                              # each element splits into a // b pieces
        wide = Shape(_UNSIGNED[a], x.shape.dimensions + (a // b,))
        rank = x.shape.rank
        bits = rw.create("constant", Shape(wide.element_type, ()), [],
                         {"literal": np.array(b, dtype=wide.element_type.dtype)})
        shifts = rw.create("multiply", wide, [rw.create("iota", wide, [], {"iota_dimension": rank}),
                                              rw.create("broadcast", wide, [bits], {"dimensions": ()})])
        spread = rw.create("broadcast", wide, [u], {"dimensions": tuple(range(rank))})
        shifted = rw.create("shift-right-logical", wide, [spread, shifts])
        pieces = rw.create("convert", _unsigned_like(out, b, wide.dimensions), [shifted])
    else:                                  # the minor-most b // a pieces join
        dims = x.shape.dimensions[:-1]
        wide = rw.create("convert", Shape(_UNSIGNED[b], x.shape.dimensions), [u])
        pieces = None
        for k in range(b // a):
            piece = _slice_minor(rw, wide, k, k + 1, dims)
            if k:
                shape = piece.shape
                bits = rw.create("constant", Shape(shape.element_type, ()), [],
                                 {"literal": np.array(k * a, dtype=shape.element_type.dtype)})
                piece = rw.create("shift-left", shape, [piece, rw.create("broadcast", shape, [bits],
                                                                        {"dimensions": ()})])
                piece = rw.create("or", _unsigned_like(out, b, dims), [pieces, piece])
            pieces = piece
    return _as(rw, pieces, out)


def _unsigned_like(out: Shape, bits: int, dims: tuple) -> Shape:
    """The unsigned type of ``bits`` over ``dims``, in ``out``'s layout when it is
    ``out``'s type (the last op then writes the result as it is laid out)."""
    et = _UNSIGNED[bits]
    return Shape(et, dims, layout=out.layout) if out.element_type == et else Shape(et, dims)


def _bitcast_complex(rw: PatternRewriter, x: HloInstruction, out: Shape) -> HloInstruction:
    """Through the real and imaginary parts, each bitcast as a real type; the
    pieces of an element alternate real, imaginary in the narrower type."""
    src_part, dst_part = _COMPLEX_PART[x.shape.element_type], _COMPLEX_PART[out.element_type]
    re, im = (rw.create(op, Shape(src_part, x.shape.dimensions), [x]) for op in ("real", "imag"))
    if x.shape.element_type.bit_width > out.element_type.bit_width:
        dims, r = x.shape.dimensions, out.dimensions[-1]
        parts = [_bitcast_real(rw, v, Shape(dst_part, dims + (r,))) for v in (re, im)]
        joined = rw.create("concatenate", Shape(dst_part, dims + (2 * r,)), parts, {"dimensions": (len(dims),)})
        pairs = rw.create("reshape", Shape(dst_part, dims + (r, 2)), [joined])
        halves = [_slice_minor(rw, pairs, k, k + 1, dims + (r,)) for k in range(2)]
    else:
        dims, r = out.dimensions, x.shape.dimensions[-1]
        columns = [rw.create("reshape", Shape(src_part, dims + (r, 1)), [v]) for v in (re, im)]
        pairs = rw.create("concatenate", Shape(src_part, dims + (r, 2)), columns, {"dimensions": (len(dims) + 1,)})
        flat = rw.create("reshape", Shape(src_part, dims + (2 * r,)), [pairs])
        halves = [_bitcast_real(rw, _slice_minor(rw, flat, k * r, (k + 1) * r, dims + (r,)), Shape(dst_part, dims))
                  for k in range(2)]
    return rw.create("complex", out, halves)


# -- asynchronous collectives: the pair becomes the synchronous op ---------------------
# (XLA's ConvertAsyncCollectivesToSync): the exchange happens where the -start
# was; the -start's tuple keeps its shape, so the -done reads its element.

def _sync_value(inst: HloInstruction, rw: PatternRewriter, opcode: str, shape: Shape) -> HloInstruction:
    attrs = {k: v for k, v in inst.attrs.items()}
    return rw.create(opcode, shape, list(inst.operands), attrs)


@EXPANSIONS.register("all-reduce-start")
def all_reduce_start(inst: HloInstruction, rw: PatternRewriter) -> bool:
    return rw.supersede(inst, _sync_value(inst, rw, "all-reduce", inst.shape))


@EXPANSIONS.register("all-gather-start", "collective-permute-start")
def async_start(inst: HloInstruction, rw: PatternRewriter) -> bool:
    shapes = inst.shape.tuple_shapes
    opcode = inst.opcode[:-len("-start")]
    value = _sync_value(inst, rw, opcode, shapes[1])
    ops = list(inst.operands)
    first = ops[0] if len(ops) == 1 else rw.create("tuple", shapes[0], ops)
    # collective-permute-start's context elements (u32[] in XLA): zeros.
    context = [rw.create("constant", s, [], {"literal": np.zeros(s.dimensions, s.element_type.dtype)})
               for s in shapes[2:]]
    return rw.supersede(inst, rw.create("tuple", inst.shape, [first, value] + context))


@EXPANSIONS.register("all-reduce-done")
def all_reduce_done(inst: HloInstruction, rw: PatternRewriter) -> bool:
    return rw.supersede(inst, inst.operands[0])


@EXPANSIONS.register("all-gather-done", "collective-permute-done")
def async_done(inst: HloInstruction, rw: PatternRewriter) -> bool:
    return rw.supersede(inst, rw.create("get-tuple-element", inst.shape, [inst.operands[0]], {"index": 1}))


# -- stochastic-convert, as XLA's StochasticConvertDecomposer ------------------------

@EXPANSIONS.register("stochastic-convert")
def stochastic_convert(inst: HloInstruction, rw: PatternRewriter) -> bool:
    """|x| truncated, plus one when the random value is below the fraction
    scaled to the random type's range, the sign put back, saturated at the
    integer type's range (f16 fractions scaled in f32: 2^16 is not an f16)."""
    x, random = inst.operands
    dims = x.shape.dimensions
    ft, rt, to = x.shape.element_type, random.shape.element_type, inst.shape.element_type
    info = np.iinfo(to.dtype)

    def full(value, et):
        with np.errstate(over="ignore"):      # the integer range as f16 is +-inf, as in XLA
            literal = np.array(value).astype(et.dtype)
        scalar = rw.create("constant", Shape(et, ()), [], {"literal": literal})
        return rw.create("broadcast", Shape(et, dims), [scalar], {"dimensions": ()})

    def op(opcode, et, *operands, **attrs):
        return rw.create(opcode, Shape(et, dims), list(operands), attrs or None)
    negative = op("compare", PRED, op("sign", ft, x), full(0, ft), direction="LT")
    magnitude = op("abs", ft, x)
    whole = op("floor", ft, magnitude)
    fraction = op("subtract", ft, magnitude, whole)
    st = F32 if ft is F16 else ft
    if st is not ft:
        fraction = op("convert", st, fraction)
    fixed = op("multiply", st, fraction, full(2.0 ** rt.bit_width, st))
    up = op("compare", PRED, random, op("convert", rt, fixed), direction="LT")
    t = op("convert", to, whole)
    t = op("select", to, up, op("add", to, t, full(1, to)), t)
    out = op("select", to, negative, op("negate", to, t), t)
    out = op("select", to, op("compare", PRED, x, full(info.min, ft), direction="LE"), full(info.min, to), out)
    out = op("select", to, op("compare", PRED, x, full(info.max, ft), direction="GE"), full(info.max, to), out)
    return rw.supersede(inst, out)


# -- scaled-dot, as XLA's ScaledDotRewriter --------------------------------------------

@EXPANSIONS.register("scaled-dot")
def scaled_dot(inst: HloInstruction, rw: PatternRewriter) -> bool:
    sides = []
    for x, scale in (inst.operands[0:2], inst.operands[2:4]):
        if scale.shape.rank == 0:               # as XLA: a scalar scale leaves the operand as it is
            sides.append(x)
            continue
        pt = scaled_dot_type(x.shape.element_type, scale.shape.element_type)
        x, scale = (v if v.shape.element_type == pt else
                    rw.create("convert", Shape(pt, v.shape.dimensions), [v]) for v in (x, scale))
        # [k0, k1] -> [k0, n0/k0, k1, n1/k1] -> reshape to x's dimensions: block repeats.
        blocks, where = [], []
        for n, k in zip(x.shape.dimensions, scale.shape.dimensions):
            where.append(len(blocks))
            blocks += [k] if n == k else [k, n // k]
        spread = rw.create("broadcast", Shape(pt, blocks), [scale], {"dimensions": tuple(where)})
        full = rw.create("reshape", Shape(pt, x.shape.dimensions), [spread])
        sides.append(rw.create("multiply", Shape(pt, x.shape.dimensions), [x, full]))
    if sides[0].shape.element_type != sides[1].shape.element_type:
        sides = [v if v.shape.element_type == F32 else rw.create("convert", Shape(F32, v.shape.dimensions), [v])
                 for v in sides]
    attrs = {k: v for k, v in inst.attrs.items() if k.endswith("_dims") or k in ("precision_config",
                                                                                  "operand_precision")}
    return rw.supersede(inst, rw.create("dot", inst.shape, sides, attrs))


# -- max and min reductions of narrow floats, in f32 -----------------------------------

def narrow_float_reducer(comp, opcodes: tuple) -> str | None:
    """The opcode when ``comp`` is ``ROOT op(p0, p1)`` on a narrow float (bf16,
    f16, f8) with ``op`` one of ``opcodes``, else None."""
    op = comp.binary_root_opcode()
    root = comp.root
    if op in opcodes and root.shape.is_array and root.shape.element_type.is_narrow_float:
        return op
    return None


def narrow_max_min_reducer(comp) -> str | None:
    """``maximum`` or ``minimum`` when ``comp`` is ``ROOT op(p0, p1)`` on a
    narrow float (bf16, f16, f8), else None: a reduction by it may compute in
    f32 and round once, every partial result being one of its operands (XLA's
    FloatNormalization computes each bf16 step in f32 and rounds it; the
    rounding changes nothing).  (``reduce-window`` widens add and multiply
    too: ``codegen/kernels/windows.narrow_window_reducer``.)"""
    return narrow_float_reducer(comp, ("maximum", "minimum"))


@EXPANSIONS.register("reduce")
def narrow_max_min_reductions(inst: HloInstruction, rw: PatternRewriter) -> bool:
    """A max or min ``reduce`` of a narrow float (bf16, f16, f8): its operand
    and init converted to f32 (exactly), reduced there, the result converted
    back (exactly: it is one of the inputs; a NaN comes out quiet).  The
    reduction kernels then accumulate in f32 vectors: rounding the
    accumulator at every step kept LLVM from vectorising (a bf16 row max 9x
    XLA:CPU's time)."""
    if len(inst.operands) != 2 or not inst.shape.is_array:
        return False
    op = narrow_max_min_reducer(inst.attrs["to_apply"])
    if op is None:
        return False
    x, init = (rw.create("convert", Shape(F32, v.shape.dimensions), [v]) for v in inst.operands)
    attrs = dict(inst.attrs, to_apply=rw.scalar_computation(op, F32))
    out = rw.create("reduce", Shape(F32, inst.shape.dimensions), [x, init], attrs)
    return rw.supersede(inst, rw.create("convert", inst.shape, [out]))


# -- dot and convolution of two element types, as XLA's OperandUpcaster ---------------

@EXPANSIONS.register("dot", "convolution")
def mixed_operand_types(inst: HloInstruction, rw: PatternRewriter) -> bool:
    """Operands of two element types converted to the type XLA computes in (their
    higher precision type, or the result type where that is higher), the op
    computed in it and its result converted: the code generator then sees one type.
    (s8 x u8 to an integer is left to :func:`int8_products`: exact on the GEMM.)"""
    lhs, rhs = inst.operands[:2]
    if lhs.shape.element_type == rhs.shape.element_type or _int8_operands(inst):
        return False
    pt = higher_precision_type(higher_precision_type(lhs.shape.element_type, rhs.shape.element_type),
                               inst.shape.element_type)
    ops = [v if v.shape.element_type == pt else rw.create("convert", Shape(pt, v.shape.dimensions), [v])
           for v in (lhs, rhs)]
    out = rw.create(inst.opcode, Shape(pt, inst.shape.dimensions), ops, dict(inst.attrs))
    if pt != inst.shape.element_type:
        out = rw.create("convert", Shape(inst.shape.element_type, inst.shape.dimensions), [out])
    return rw.supersede(inst, out)


# -- complex products as real ones -------------------------------------------------------

@EXPANSIONS.register("dot", "convolution")
def complex_products(inst: HloInstruction, rw: PatternRewriter) -> bool:
    """A dot or convolution of complex operands as four real ones with the same
    dimension numbers ("4M": (a + bi)(c + di) = (ac - bd) + (ad + bc)i): the real
    products run on the packed GEMM and the implicit-GEMM convolution, the complex
    one would be an elemental loop.  (3M saves a product but loses accuracy where
    the parts differ in magnitude; XLA's CPU back end calls Eigen's complex GEMM,
    which also does four real multiplies per term.)"""
    pt = inst.shape.element_type
    if not pt.is_complex or any(o.shape.element_type != pt for o in inst.operands[:2]):
        return False
    real_pt = F32 if pt == C64 else F64
    parts = []
    for x in inst.operands[:2]:
        shape = Shape(real_pt, x.shape.dimensions)
        parts.append((rw.create("real", shape, [x]), rw.create("imag", shape, [x])))
    (a, b), (c, d) = parts
    shape = Shape(real_pt, inst.shape.dimensions)

    def product(x, y):
        return rw.create(inst.opcode, shape, [x, y], dict(inst.attrs))
    re = rw.create("subtract", shape, [product(a, c), product(b, d)])
    im = rw.create("add", shape, [product(a, d), product(b, c)])
    return rw.supersede(inst, rw.create("complex", Shape(pt, inst.shape.dimensions), [re, im]))


# -- 8-bit integer products in f32, exactly ----------------------------------------------

#: The largest integer up to which every integer is an f32 (its 24-bit significand).
_F32_EXACT = 2 ** 24


def _int8_chunk(a: Shape, b: Shape) -> int:
    """How many products of 8-bit integers of ``a``'s and ``b``'s types an f32 sum
    holds exactly: every partial sum stays within 2**24 (s8 x s8: 1,024)."""
    def magnitude(pt):
        return 128 if pt.is_signed_int else 255
    return _F32_EXACT // (magnitude(a.element_type) * magnitude(b.element_type))


#: Whether the target multiplies 8-bit integers natively (AMX-INT8 or
#: AVX512_VNNI: the code generator's ``dot.library-gemm.amx-int8`` and
#: ``dot.library-gemm.vnni``): set by :class:`OpExpander`
#: from its pipeline's option, read by :func:`int8_products`.
NATIVE_INT8_DOTS: ContextVar[bool] = ContextVar("native_int8_dots", default=False)
#: The code generator's direct convolution kernel (AMX tiles loaded from the
#: input, no im2col: 8-bit integers, bf16), as ``why_not(inst) -> str | None``,
#: or None when the target has none: a convolution it takes stays a
#: convolution (set by :class:`OpExpander`, read by :func:`int8_products`
#: and :func:`bf16_convolution`).
DIRECT_CONVOLUTION: ContextVar = ContextVar("direct_convolution", default=None)


@EXPANSIONS.register("dot", "convolution")
def int8_products(inst: HloInstruction, rw: PatternRewriter) -> bool:
    """A dot or convolution of 8-bit integers (s8, u8; any integer result) as f32 ones
    on the packed GEMM / implicit-GEMM convolution: every product and partial sum is
    an integer below 2**24, so the f32 sums are exact, converted to s32 and then to
    the result type (wrapping as XLA's integer dot does).  A dot contracting more
    than an f32 holds exactly (s8 x s8: 1,024 products) is cut into chunks along its
    one contracting dimension, their s32 sums added; such a convolution (a window
    times input features past that) is left to the elemental loop.

    With :data:`NATIVE_INT8_DOTS` a matrix product (M and N > 1) stays an
    8-bit dot to s32 (converted to the result type after), for the code
    generator's AMX or VNNI kernel; a convolution the direct AMX-INT8 kernel
    takes (:data:`DIRECT_CONVOLUTION`) stays one, to s32 (converted after)."""
    if not _int8_operands(inst):
        return False
    lhs, rhs = inst.operands[:2]
    out = inst.shape.element_type
    if inst.opcode == "convolution" and _direct_convolution(inst):
        if out == S32:
            return False
        # Another integer result: the s32 convolution (wrapped, as XLA's) converted.
        conv = rw.create("convolution", Shape(S32, inst.shape.dimensions), [lhs, rhs], dict(inst.attrs))
        return rw.supersede(inst, rw.create("convert", inst.shape, [conv]))
    if inst.opcode == "convolution" and NATIVE_INT8_DOTS.get() and _convolution_as_dot(inst, "8-bit integer"):
        return rw.supersede(inst, conv_as_dot.conv_as_dot(inst, rw, S32))
    if inst.opcode == "dot" and NATIVE_INT8_DOTS.get() and _is_matrix_product(inst):
        if out == S32:
            return False
        dot = rw.create("dot", Shape(S32, inst.shape.dimensions), [lhs, rhs], dict(inst.attrs))
        return rw.supersede(inst, rw.create("convert", inst.shape, [dot]))
    chunk = _int8_chunk(lhs.shape, rhs.shape)
    if inst.opcode == "convolution":
        dn = conv_dimension_numbers_of(inst.attrs)
        per_output = int(np.prod(rhs.shape.dimensions, dtype=np.int64)) // \
            max(1, rhs.shape.dimensions[dn.kernel_output_feature_dimension])
        if per_output > chunk:
            return False
        wide = [rw.create("convert", Shape(F32, x.shape.dimensions), [x]) for x in (lhs, rhs)]
        conv = rw.create("convolution", Shape(F32, inst.shape.dimensions), wide, dict(inst.attrs))
        total = rw.create("convert", Shape(S32, inst.shape.dimensions), [conv])
        return rw.supersede(inst, total if out == S32 else rw.create("convert", inst.shape, [total]))
    lc, rc = (tuple(int(d) for d in inst.attrs.get(k, ())) for k in ("lhs_contracting_dims",
                                                                      "rhs_contracting_dims"))
    k = int(np.prod([lhs.shape.dimensions[d] for d in lc], dtype=np.int64))
    if k > chunk and len(lc) != 1:
        return False                        # several long contracting dimensions: left to the loop
    wide = [rw.create("convert", Shape(F32, x.shape.dimensions), [x]) for x in (lhs, rhs)]
    total = None
    for start in range(0, max(k, 1), chunk):
        stop = min(start + chunk, k)
        sides = wide if k <= chunk else [slice_along(rw, x, d, start, stop)
                                        for x, d in zip(wide, (lc[0], rc[0]))]
        part = rw.create("dot", Shape(F32, inst.shape.dimensions), sides, dict(inst.attrs))
        part = rw.create("convert", Shape(S32, inst.shape.dimensions), [part])
        total = part if total is None else rw.create("add", part.shape, [total, part])
    if out != S32:
        total = rw.create("convert", inst.shape, [total])
    return rw.supersede(inst, total)


#: Whether the target has a native bf16 dot kernel (AMX-BF16 or the
#: ``vdpbf16ps`` one where it is the faster): set by :class:`OpExpander`, read
#: by :func:`bf16_convolution`.
NATIVE_BF16_DOTS: ContextVar[bool] = ContextVar("native_bf16_dots", default=False)
#: The op-expander's notes on convolutions (instruction name -> sentence),
#: appended to the module's diagnostics (``xlac dump`` prints them).
CONV_NOTES: ContextVar[dict | None] = ContextVar("conv_notes", default=None)


def _direct_convolution(inst: HloInstruction) -> bool:
    """Whether the code generator's direct kernel (:data:`DIRECT_CONVOLUTION`)
    takes convolution ``inst`` (an 8-bit one as one to s32); notes the decision."""
    why_not = DIRECT_CONVOLUTION.get()
    if why_not is None:
        return False
    # Asked of the convolution to s32 (another integer result is converted from it).
    integer = inst.shape.element_type.is_signed_int or inst.shape.element_type.is_unsigned_int
    probe = inst if inst.shape.element_type == S32 or not integer else HloInstruction(
        "convolution", Shape(S32, inst.shape.dimensions), inst.operands, inst.attrs, inst.name)
    why = why_not(probe)
    notes = CONV_NOTES.get()
    if notes is not None and why is None:
        notes[inst.name] = f"convolution {inst.name}: direct on AMX tiles (no im2col)"
    return why is None


def _convolution_as_dot(inst: HloInstruction, what: str) -> bool:
    """Whether convolution ``inst`` (of ``what`` operands, with a native dot kernel
    on the target) becomes im2col + dot (``conv_as_dot``); notes the decision."""
    why = conv_as_dot.why_not(inst)
    notes = CONV_NOTES.get()
    if notes is not None:
        notes[inst.name] = (f"convolution {inst.name}: im2col + dot on the native {what} GEMM kernel"
                            if why is None else
                            f"convolution {inst.name}: not im2col + dot on the native {what} GEMM kernel ({why})")
    return why is None


@EXPANSIONS.register("convolution")
def grouped_convolution(inst: HloInstruction, rw: PatternRewriter) -> bool:
    """A convolution with feature or batch groups as one plain convolution per
    group, concatenated (``conv_groups``): each runs on the GEMM kernels;
    notes the decision."""
    why = conv_groups.why_not(inst)
    notes = CONV_NOTES.get()
    if notes is not None and why != "not grouped":
        notes[inst.name] = (f"convolution {inst.name}: one convolution per group, concatenated" if why is None else
                            f"convolution {inst.name}: grouped, one loop (not split by group: {why})")
    return why is None and rw.supersede(inst, conv_groups.conv_groups(inst, rw))


@EXPANSIONS.register("convolution")
def base_dilated_convolution(inst: HloInstruction, rw: PatternRewriter) -> bool:
    """A convolution of a base-dilated input (a strided convolution's input
    gradient) as one convolution per output phase (``conv_phases``): the
    holes of the dilated input are never multiplied."""
    if conv_phases.why_not(inst) is not None:
        return False
    return rw.supersede(inst, conv_phases.conv_phases(inst, rw))


@EXPANSIONS.register("convolution")
def bf16_convolution(inst: HloInstruction, rw: PatternRewriter) -> bool:
    """A bf16 x bf16 convolution (to bf16 or f32) as im2col + a dot, where the
    target has a native bf16 dot kernel (:data:`NATIVE_BF16_DOTS`): the
    implicit-GEMM convolution would compute it widened to f32."""
    lhs, rhs = inst.operands[:2]
    if not NATIVE_BF16_DOTS.get() or lhs.shape.element_type != BF16 or rhs.shape.element_type != BF16 \
            or inst.shape.element_type not in (BF16, F32):
        return False
    if _direct_convolution(inst) or not _convolution_as_dot(inst, "bf16"):
        return False
    return rw.supersede(inst, conv_as_dot.conv_as_dot(inst, rw, inst.shape.element_type))


def _int8_operands(inst: HloInstruction) -> bool:
    """Whether ``inst`` multiplies 8-bit integers (s8, u8) into an integer result."""
    out = inst.shape.element_type
    return {o.shape.element_type for o in inst.operands[:2]} <= {S8, U8} and \
        (out.is_signed_int or out.is_unsigned_int)


def _is_matrix_product(dot: HloInstruction) -> bool:
    """Whether both operands of ``dot`` have free (non-batch, non-contracting) elements past one."""
    for k, side in enumerate(("lhs", "rhs")):
        shape = dot.operands[k].shape
        skip = set(dot.attrs.get(f"{side}_batch_dims", ())) | set(dot.attrs.get(f"{side}_contracting_dims", ()))
        if int(np.prod([n for d, n in enumerate(shape.dimensions) if d not in skip], dtype=np.int64)) <= 1:
            return False
    return True


# -- fft of length zero ----------------------------------------------------------------

@EXPANSIONS.register("fft")
def zero_length_fft(inst: HloInstruction, rw: PatternRewriter) -> bool:
    """An ``fft`` with a 0 in ``fft_length`` transforms nothing: its result is zeros
    (XLA's evaluator; the operand need not match the length then)."""
    lengths = [int(str(n)) for n in inst.attrs.get("fft_length", ())]
    if 0 not in lengths or inst.shape.element_count() == 0:
        return False
    return rw.supersede(inst, _zeros(rw, inst.shape))


# -- ragged-dot, as XLA's RaggedDotRewriter ------------------------------------------

@EXPANSIONS.register("ragged-dot")
def ragged_dot(inst: HloInstruction, rw: PatternRewriter) -> bool:
    lhs, rhs, gs = inst.operands
    a = inst.attrs
    dims = {k: tuple(int(str(v)) for v in a.get(k, ())) for k in
            ("lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims", "rhs_contracting_dims")}
    mode, ragged, group, prefix = ragged_dot_dimensions(lhs.shape, rhs.shape, a)
    up = lambda ds: tuple(d + 1 for d in ds)        # noqa: E731 - dimensions after a leading group one
    lb, lc, rb, rc = (dims[k] for k in ("lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims",
                                        "rhs_contracting_dims"))
    if mode == "non-contracting":
        lhs = _ragged_to_dense(rw, lhs, gs, ragged, prefix)
        dot = {"lhs_batch_dims": up(lb), "lhs_contracting_dims": (0,) + up(lc),
               "rhs_batch_dims": rb, "rhs_contracting_dims": (group,) + rc}
    elif mode == "contracting":
        rhs_ragged = rc[lc.index(ragged)]
        rhs_prefix = [rb[lb.index(d)] if d in lb else rc[lc.index(d)] for d in prefix]
        lhs = _ragged_to_dense(rw, lhs, gs, ragged, prefix)
        rhs = _ragged_to_dense(rw, rhs, gs, rhs_ragged, rhs_prefix)
        dot = {"lhs_batch_dims": (0,) + up(lb), "lhs_contracting_dims": up(lc),
               "rhs_batch_dims": (0,) + up(rb), "rhs_contracting_dims": up(rc)}
    else:
        dot = dims
    attrs = {k: v for k, v in dot.items() if v}
    for k in ("precision_config", "operand_precision", "algorithm"):
        if k in a:
            attrs[k] = a[k]
    return rw.supersede(inst, rw.create("dot", inst.shape, [lhs, rhs], attrs))


def _ragged_to_dense(rw: PatternRewriter, x: HloInstruction, gs: HloInstruction, ragged: int,
                     prefix) -> HloInstruction:
    """``[g] + x.shape``: slice ``j`` is ``x`` where position ``r`` of dimension
    ``ragged`` is in group ``j`` (``end[j-1] <= r < end[j]``, the running sums
    of group_sizes over dimensions ``prefix`` of ``x``), zeros elsewhere."""
    it = gs.shape.element_type
    g = gs.shape.dimensions[-1]
    lead = tuple(x.shape.dimensions[d] for d in prefix)
    sizes_shape = Shape(it, lead + (g,))
    if gs.shape.rank == 1:
        gs = rw.create("broadcast", sizes_shape, [gs], {"dimensions": (len(lead),)})
    p = len(lead)
    square = Shape(it, lead + (g, g))                 # [..., h, j]: size h counts towards end j when h <= j
    spread = rw.create("broadcast", square, [gs], {"dimensions": tuple(range(p + 1))})
    before = rw.create("compare", Shape(PRED, square.dimensions),
                       [rw.create("iota", square, [], {"iota_dimension": p}),
                        rw.create("iota", square, [], {"iota_dimension": p + 1})], {"direction": "LE"})
    zero = rw.create("constant", Shape(it, ()), [], {"literal": np.zeros((), it.dtype)})
    kept = rw.create("select", square, [before, spread, rw.create("broadcast", square, [zero], {"dimensions": ()})])
    ends = rw.create("reduce", sizes_shape, [kept, zero],
                     {"dimensions": (p,), "to_apply": rw.scalar_computation("add", it)})
    starts = rw.create("subtract", sizes_shape, [ends, gs])
    wide = (g,) + tuple(x.shape.dimensions)
    index_shape, pred_shape = Shape(it, wide), Shape(PRED, wide)
    where = tuple(1 + d for d in prefix) + (0,)
    lo = rw.create("broadcast", index_shape, [starts], {"dimensions": where})
    hi = rw.create("broadcast", index_shape, [ends], {"dimensions": where})
    row = rw.create("iota", index_shape, [], {"iota_dimension": 1 + ragged})
    inside = rw.create("and", pred_shape, [rw.create("compare", pred_shape, [lo, row], {"direction": "LE"}),
                                           rw.create("compare", pred_shape, [row, hi], {"direction": "LT"})])
    et = x.shape.element_type
    value_shape = Shape(et, wide)
    spread_x = rw.create("broadcast", value_shape, [x], {"dimensions": tuple(range(1, len(wide)))})
    xzero = rw.create("constant", Shape(et, ()), [], {"literal": np.zeros((), et.dtype)})
    return rw.create("select", value_shape, [inside, spread_x,
                                             rw.create("broadcast", value_shape, [xzero], {"dimensions": ()})])


# -- collective-broadcast -------------------------------------------------------------

@EXPANSIONS.register("collective-broadcast")
def collective_broadcast(inst: HloInstruction, rw: PatternRewriter) -> bool:
    if str(inst.attrs.get("has_dynamic_root", False)).lower() == "true":
        raise UnsupportedError("collective-broadcast with has_dynamic_root=true",
                               f"instruction {inst.name}: only the group's first device as the root")
    # The all-gather names the same groups by global device id (its own group
    # modes differ from collective-broadcast's for a channel id without
    # use_global_device_ids), so it meets exactly the same devices.
    module = rw.comp.parent
    replicas, partitions = (module.replica_count, module.num_partitions) if module is not None else (1, 1)
    groups = collectives.device_groups(inst, replicas, partitions)
    n = len(groups[0])
    leaves = list(inst.operands)
    stacked = [rw.create("reshape", Shape(x.shape.element_type, (1,) + x.shape.dimensions), [x]) for x in leaves]
    gathered_shapes = [Shape(x.shape.element_type, (n,) + x.shape.dimensions) for x in leaves]
    channel = inst.attrs.get("channel_id")
    if channel is None:                 # a fresh one: use_global_device_ids needs a channel id
        used = [int(str(i.attrs["channel_id"])) for c in (module.computations if module else [rw.comp])
                for i in c.instructions if i.attrs.get("channel_id") is not None]
        channel = max(used, default=0) + 1
    attrs = {"channel_id": channel,
             "replica_groups": collectives.ReplicaGroups.of([list(g) for g in groups]),
             "use_global_device_ids": True, "dimensions": (0,)}
    gather_shape = gathered_shapes[0] if len(leaves) == 1 else Shape.tuple(gathered_shapes)
    gathered = rw.create("all-gather", gather_shape, stacked, attrs)
    out = []
    for k, (x, g) in enumerate(zip(leaves, gathered_shapes)):
        part = gathered if len(leaves) == 1 else rw.create("get-tuple-element", g, [gathered], {"index": k})
        first = rw.create("slice", Shape(x.shape.element_type, (1,) + x.shape.dimensions), [part],
                          {"slice": ((0, 1, 1),) + tuple((0, m, 1) for m in x.shape.dimensions)})
        out.append(rw.create("reshape", Shape(x.shape.element_type, x.shape.dimensions), [first]))
    return rw.supersede(inst, out[0] if len(out) == 1 else rw.create("tuple", inst.shape, out))


# -- ragged-all-to-all -------------------------------------------------------------------

@EXPANSIONS.register("ragged-all-to-all")
def ragged_all_to_all(inst: HloInstruction, rw: PatternRewriter) -> bool:
    x, out, in_off, send, out_off, _ = inst.operands
    count = in_off.shape.dimensions[0]
    rows, rest = x.shape.dimensions[0], x.shape.dimensions[1:]
    et = x.shape.element_type
    exchange = {k: v for k, v in inst.attrs.items() if k in ("replica_groups", "channel_id", "constrain_layout")}
    exchange["dimensions"] = (0,)

    def s32(v):
        return v if v.shape.element_type == S32 else rw.create("convert", Shape(S32, v.shape.dimensions), [v])

    def scalar_at(v, i, j):                       # element (i, j) of an s32 matrix, as s32[]
        one = rw.create("slice", Shape(S32, (1, 1)), [v], {"slice": ((i, i + 1, 1), (j, j + 1, 1))})
        return rw.create("reshape", Shape(S32, ()), [one])

    # Slice i as a block of `rows` rows: input row in_off[i] + t (clamped by the gather).
    grid = Shape(S32, (count, rows))
    starts = rw.create("add", grid, [rw.create("broadcast", grid, [s32(in_off)], {"dimensions": (0,)}),
                                     rw.create("iota", grid, [], {"iota_dimension": 1})])
    blocks_shape = Shape(et, (count, rows) + rest)
    blocks = rw.create("gather", blocks_shape, [x, starts], {
        "offset_dims": tuple(range(2, 2 + len(rest))), "collapsed_slice_dims": (0,), "start_index_map": (0,),
        "index_vector_dim": 2, "slice_sizes": (1,) + rest})
    received = rw.create("all-to-all", blocks_shape, [blocks], dict(exchange))
    column = Shape(S32, (count, 1))
    meta = rw.create("concatenate", Shape(S32, (count, 2)),
                     [rw.create("reshape", column, [s32(out_off)]), rw.create("reshape", column, [s32(send)])],
                     {"dimensions": (1,)})
    meta = rw.create("all-to-all", meta.shape, [meta], dict(exchange))
    # Slot i (sender-major) writes its rows at its offset, later slots over earlier ones.
    length = out.shape.dimensions[0]
    line, flags = Shape(S32, (length,)), Shape(PRED, (length,))
    row = rw.create("iota", line, [], {"iota_dimension": 0})
    zero = rw.create("broadcast", line, [rw.create("constant", Shape(S32, ()), [], {"literal": np.int32(0)})],
                     {"dimensions": ()})
    result = out
    for i in range(count):
        at = rw.create("broadcast", line, [scalar_at(meta, i, 0)], {"dimensions": ()})
        size = rw.create("broadcast", line, [scalar_at(meta, i, 1)], {"dimensions": ()})
        local = rw.create("subtract", line, [row, at])
        inside = rw.create("and", flags, [rw.create("compare", flags, [local, zero], {"direction": "GE"}),
                                          rw.create("compare", flags, [local, size], {"direction": "LT"})])
        slot = rw.create("broadcast", line, [rw.create("constant", Shape(S32, ()), [], {"literal": np.int32(i)})],
                         {"dimensions": ()})
        index = rw.create("concatenate", Shape(S32, (length, 2)),
                          [rw.create("reshape", Shape(S32, (length, 1)), [v]) for v in (slot, local)],
                          {"dimensions": (1,)})
        values = rw.create("gather", Shape(et, out.shape.dimensions), [received, index], {
            "offset_dims": tuple(range(1, 1 + len(rest))), "collapsed_slice_dims": (0, 1),
            "start_index_map": (0, 1), "index_vector_dim": 1, "slice_sizes": (1, 1) + rest})
        mask = rw.create("broadcast", Shape(PRED, out.shape.dimensions), [inside], {"dimensions": (0,)})
        result = rw.create("select", Shape(et, out.shape.dimensions), [mask, values, result])
    return rw.supersede(inst, result)


# -- scan, as XLA's ScanExpander ------------------------------------------------------

class _NewComputation:
    """The instructions of a computation an expansion builds (a while's
    condition or body), operands first."""

    def __init__(self, rw: PatternRewriter):
        self.rw, self.instructions = rw, []

    def add(self, opcode: str, shape: Shape, operands=(), attrs=None) -> HloInstruction:
        inst = self.rw.instruction(opcode, shape, operands, attrs)
        self.instructions.append(inst)
        return inst

    def constant(self, value, et=S32) -> HloInstruction:
        return self.add("constant", Shape(et, ()), [], {"literal": np.array(value, dtype=et.dtype)})

    def parts(self, shape: Shape) -> list:
        """Parameter 0 of tuple ``shape``, element by element."""
        param = self.add("parameter", shape, [], {"parameter_number": 0})
        return [self.add("get-tuple-element", s, [param], {"index": k}) for k, s in enumerate(shape.tuple_shapes)]

    def build(self, name: str, root: HloInstruction):
        return self.rw.computation(name, self.instructions, root)


@EXPANSIONS.register("scan")
def scan(inst: HloInstruction, rw: PatternRewriter) -> bool:
    body_comp = inst.attrs["to_apply"]
    (d,) = (int(str(v)) for v in inst.attrs["dimensions"])
    carries = int(str(inst.attrs.get("num_carries", 0)))
    reverse = str(inst.attrs.get("is_reverse", False)).lower() == "true"
    ops = list(inst.operands)
    inputs, inits = ops[:len(ops) - carries], ops[len(ops) - carries:]
    results = list(inst.shape.tuple_shapes) if inst.shape.is_tuple else [inst.shape]
    outputs = results[:len(results) - carries]
    length = inputs[0].shape.dimensions[d]
    scalar = Shape(S32, ())
    # The loop state: (step, carries..., inputs..., outputs...), as XLA's.
    state = Shape.tuple([scalar] + [i.shape for i in inits] + [i.shape for i in inputs] + outputs)
    first_input, first_output = 1 + carries, 1 + carries + len(inputs)

    cond = _NewComputation(rw)
    step = cond.parts(state)[0]
    condition = cond.build(f"{inst.name}_condition",
                           cond.add("compare", Shape(PRED, ()), [step, cond.constant(length)], {"direction": "LT"}))

    b = _NewComputation(rw)
    parts = b.parts(state)
    step = parts[0]
    at = b.add("subtract", scalar, [b.constant(length - 1), step]) if reverse else step
    zero = b.constant(0)

    def starts(rank: int) -> list:
        return [at if k == d else zero for k in range(rank)]
    args = []
    for x in parts[first_input:first_output]:
        dims = x.shape.dimensions
        sizes = tuple(1 if k == d else n for k, n in enumerate(dims))
        one = b.add("dynamic-slice", Shape(x.shape.element_type, sizes), [x] + starts(len(dims)),
                    {"dynamic_slice_sizes": sizes})
        args.append(b.add("reshape", Shape(x.shape.element_type, dims[:d] + dims[d + 1:]), [one]))
    called = b.add("call", body_comp.root.shape, args + parts[1:first_input], {"to_apply": body_comp})
    root = body_comp.root.shape
    got = ([b.add("get-tuple-element", t, [called], {"index": k}) for k, t in enumerate(root.tuple_shapes)]
           if root.is_tuple else [called])
    stacked = []
    for acc, value in zip(parts[first_output:], got[:len(got) - carries]):
        dims = acc.shape.dimensions
        piece = b.add("reshape", Shape(value.shape.element_type, dims[:d] + (1,) + dims[d + 1:]), [value])
        stacked.append(b.add("dynamic-update-slice", acc.shape, [acc, piece] + starts(len(dims))))
    following = b.add("add", scalar, [step, b.constant(1)])
    body = b.build(f"{inst.name}_body", b.add("tuple", state, [following] + got[len(got) - carries:]
                                               + parts[first_input:first_output] + stacked))

    def constant(value, et):
        return rw.create("constant", Shape(et, ()), [], {"literal": np.array(value, dtype=et.dtype)})
    blanks = [rw.create("broadcast", o, [constant(0, o.element_type)], {"dimensions": ()}) for o in outputs]
    init = rw.create("tuple", state, [constant(0, S32)] + inits + inputs + blanks)
    loop = rw.create("while", state, [init], {"condition": condition, "body": body})
    final = [rw.create("get-tuple-element", state.tuple_shapes[k], [loop], {"index": k})
             for k in list(range(first_output, len(state.tuple_shapes))) + list(range(1, first_input))]
    return rw.supersede(inst, rw.create("tuple", inst.shape, final) if inst.shape.is_tuple else final[0])


# -- XLA-internal plumbing: a sharding domain is its operand; an asynchronous copy
# (copy-start/-done, XLA's memory-space assignment) is a copy where it starts.

@EXPANSIONS.register("domain")
def domain(inst: HloInstruction, rw: PatternRewriter) -> bool:
    return rw.supersede(inst, inst.operands[0])


@EXPANSIONS.register("copy-start")
def copy_start(inst: HloInstruction, rw: PatternRewriter) -> bool:
    dest, source, context = inst.shape.tuple_shapes
    (x,) = inst.operands
    copied = rw.create("copy", dest, [x])
    zero = rw.create("constant", context, [], {"literal": np.zeros((), np.uint32)})
    return rw.supersede(inst, rw.create("tuple", inst.shape, [copied, x, zero]))


@EXPANSIONS.register("copy-done")
def copy_done(inst: HloInstruction, rw: PatternRewriter) -> bool:
    return rw.supersede(inst, rw.create("get-tuple-element", inst.shape, [inst.operands[0]], {"index": 0}))


# -- fusions read from text that xlac's fusion emitter does not take: unfused --------
# XLA's optimised dumps wrap ops such as scatter or sort in fusions of their own
# ("wrapped_scatter"); such a fusion becomes a call of its computation, which the
# call inliner inlines, and xlac's fusion pass decides afresh.

#: Opcodes a fusion's computation may hold for xlac's fusion emitter.
_EMITTED_IN_FUSIONS = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "reduce", "dot",
                                 "convolution", "copy", "bitcast"})


def _emitted_in_fusion(comp) -> bool:
    return all(i.opcode in _EMITTED_IN_FUSIONS or has_trait(i.opcode, Trait.ELEMENTWISE)
               or has_trait(i.opcode, Trait.DATA_MOVEMENT) for i in comp.instructions)


@EXPANSIONS.register("fusion")
def unfuse(inst: HloInstruction, rw: PatternRewriter) -> bool:
    comp = inst.attrs.get("calls")
    if comp is None or _emitted_in_fusion(comp):
        return False
    return rw.supersede(inst, rw.create("call", inst.shape, list(inst.operands), {"to_apply": comp}))


# -- XLA's async wrappers: the wrapped computation runs where the async-start is ------
# async-start is ((operands), result, context...): a call of its computation (which
# the call inliner then inlines), the operands, zero context; async-update passes
# it on; async-done takes the result out.

@EXPANSIONS.register("async-start")
def async_wrapper_start(inst: HloInstruction, rw: PatternRewriter) -> bool:
    shapes = inst.shape.tuple_shapes
    value = rw.create("call", shapes[1], list(inst.operands), {"to_apply": inst.attrs["calls"]})
    operands = rw.create("tuple", shapes[0], list(inst.operands))
    context = [_zero_value(rw, s) for s in shapes[2:]]
    return rw.supersede(inst, rw.create("tuple", inst.shape, [operands, value] + context))


def _zero_value(rw: PatternRewriter, shape: Shape) -> HloInstruction:
    if shape.is_tuple:
        return rw.create("tuple", shape, [_zero_value(rw, s) for s in shape.tuple_shapes])
    if shape.is_token:
        return rw.create("after-all", shape, [])
    return _zeros(rw, shape)


@EXPANSIONS.register("async-update")
def async_wrapper_update(inst: HloInstruction, rw: PatternRewriter) -> bool:
    return rw.supersede(inst, inst.operands[0])


@EXPANSIONS.register("async-done")
def async_wrapper_done(inst: HloInstruction, rw: PatternRewriter) -> bool:
    return rw.supersede(inst, rw.create("get-tuple-element", inst.shape, [inst.operands[0]], {"index": 1}))


# -- send/recv: the pair becomes a collective-permute where the recv completes ---------
# Every device runs the same program, so the send and the recv of one channel
# are in the same computation: the data the send sends is what the recv
# receives, along the pairs of _xla_send_recv_source_target_pairs.

def _same_channel(send: HloInstruction, opcode: str, operand: HloInstruction | None = None):
    channel = send.attrs.get("channel_id")
    for i in send.parent.instructions:
        if i.opcode == opcode and i.attrs.get("channel_id") == channel and (
                operand is None or (i.operands and i.operands[0] is operand)):
            return i
    return None


def _zeros(rw: PatternRewriter, shape: Shape) -> HloInstruction:
    zero = rw.create("constant", Shape(shape.element_type, ()), [],
                     {"literal": np.zeros((), shape.element_type.dtype)})
    return zero if not shape.dimensions else rw.create("broadcast", shape, [zero], {"dimensions": ()})


@EXPANSIONS.register("send")
def send_recv(send: HloInstruction, rw: PatternRewriter) -> bool:
    """A send and the recv of its channel (and their -done ops) become one
    collective-permute of the sent data, which the recv-done returns."""
    recv = _same_channel(send, "recv")
    if recv is None or send.attrs.get("is_host_transfer") or recv.attrs.get("is_host_transfer"):
        return False                      # refused later by name: nothing to pair it with
    recv_done, send_done = _same_channel(send, "recv-done", recv), _same_channel(send, "send-done", send)
    text = collectives.frontend_attributes(recv).get(collectives.SEND_RECV_PAIRS_ATTRIBUTE)
    if recv_done is None or send_done is None or text is None:
        return False
    module = send.parent.parent
    attrs = {"source_target_pairs": collectives.parse_pairs(text)}
    if module is None or module.replica_count == 1:
        attrs["channel_id"] = send.attrs.get("channel_id")    # the pairs are partition ids
    data = send.operands[0]
    shapes = recv_done.shape.tuple_shapes
    permute = rw.create("collective-permute", shapes[0], [data], attrs)
    token = rw.create("after-all", shapes[1], [])
    u32 = send.shape.tuple_shapes[1]
    return (rw.supersede(recv_done, rw.create("tuple", recv_done.shape, [permute, token]))
            and rw.supersede(send_done, token)
            and rw.supersede(recv, rw.create("tuple", recv.shape, [_zeros(rw, recv.shape.tuple_shapes[0]),
                                                                  _zeros(rw, u32), token]))
            and rw.supersede(send, rw.create("tuple", send.shape, [data, _zeros(rw, u32), token])))


class OpExpander:
    """Pass: apply :data:`EXPANSIONS` to every computation."""

    name = "op-expander"

    def __init__(self, native_int8_dots: bool = False, native_bf16_dots: bool = False,
                 direct_convolution=None):
        #: Keep 8-bit integer matrix products for a native kernel (:data:`NATIVE_INT8_DOTS`).
        self.native_int8_dots = native_int8_dots
        #: The direct convolution kernel's ``why_not`` (:data:`DIRECT_CONVOLUTION`).
        self.direct_convolution = direct_convolution
        #: bf16 convolutions as dots for a native kernel (:data:`NATIVE_BF16_DOTS`).
        self.native_bf16_dots = native_bf16_dots

    def run(self, module: HloModule) -> bool:
        notes: dict = {}
        tokens = (NATIVE_INT8_DOTS.set(self.native_int8_dots), NATIVE_BF16_DOTS.set(self.native_bf16_dots),
                  CONV_NOTES.set(notes), DIRECT_CONVOLUTION.set(self.direct_convolution))
        try:
            return apply_patterns(module, EXPANSIONS)
        finally:
            for var, token in zip((NATIVE_INT8_DOTS, NATIVE_BF16_DOTS, CONV_NOTES, DIRECT_CONVOLUTION),
                                  tokens):
                var.reset(token)
            module.diagnostics.extend(Diagnostic(self.name, name, text) for name, text in notes.items())


# -- custom-call: the layouts the target reads and writes ------------------------------

def _column_major(shape: Shape) -> Shape:
    """Matrices in column-major order, batch dimensions major (LAPACK's layout)."""
    r = shape.rank
    return shape.with_layout(Layout((r - 2, r - 1) + tuple(range(r - 3, -1, -1))))


def _lapack_layout(shape: Shape, matrix_rank: int) -> Shape:
    # As jax declares them: arrays of the operand's rank are matrices, the rest row-major.
    return _column_major(shape) if shape.rank == matrix_rank and shape.rank >= 2 else shape.with_layout(None)


def custom_call_layouts(inst: HloInstruction) -> tuple[list, Shape]:
    """(operand shapes, result shape) with the layouts ``inst``'s target uses."""
    if hcc.is_builtin(hcc.target_of(inst)):
        k = hcc.matrix_operand(inst)
        rank = inst.operands[k].shape.rank if len(inst.operands) > k else 0
        operands = [_lapack_layout(o.shape, rank) for o in inst.operands]
        s = inst.shape
        result = Shape.tuple([_lapack_layout(e, rank) for e in s.tuple_shapes]) if s.is_tuple \
            else _lapack_layout(s, rank)
        return operands, result
    constraints = hcc.operand_layouts(inst) or [None] * len(inst.operands)
    operands = [o.shape if not o.shape.is_array else (c if c is not None else o.shape.with_layout(None))
                for o, c in zip(inst.operands, constraints)]
    return operands, inst.shape


def _relaid(rw: PatternRewriter, value: HloInstruction, shape: Shape) -> HloInstruction:
    """``value`` in ``shape``'s layout (a copy when it differs)."""
    if value.shape == shape:
        return value
    if shape.is_tuple:
        parts = [_relaid(rw, rw.create("get-tuple-element", e, [value], {"index": k}), want)
                 for k, (e, want) in enumerate(zip(value.shape.tuple_shapes, shape.tuple_shapes))]
        return rw.create("tuple", shape, parts)
    return rw.create("copy", shape, [value])


@EXPANSIONS.register("custom-call")
def xla_target(inst: HloInstruction, rw: PatternRewriter) -> bool:
    """XLA's own targets (see ``hlo.custom_call``): ``TopK`` as ``topk``, ``ApproxTopK`` as XLA's
    fallback (sort and slice), ``Sharding`` as its operand,
    ``Qr`` and ``ProductOfElementaryHouseholderReflectors`` as jax's LAPACK calls, ``dce_sink``
    and ``control_dep`` as the empty tuple they return."""
    target = hcc.target_of(inst)
    if hcc.is_no_op(inst):
        return rw.supersede(inst, rw.create("tuple", inst.shape, []))
    if hcc.is_sharding_annotation(inst) and inst.operands[0].shape == inst.shape:
        return rw.supersede(inst, inst.operands[0])
    if target == "TopK":
        return rw.supersede(inst, rw.create("topk", inst.shape, list(inst.operands), hcc.topk_of(inst)))
    if target == "ApproxTopK":
        return rw.supersede(inst, _approx_topk(inst, rw))
    lapack = hcc.xla_lapack_call(inst)
    if lapack is not None:
        return rw.supersede(inst, rw.create("custom-call", inst.shape, list(inst.operands), lapack))
    return False


def _approx_topk(inst: HloInstruction, rw: PatternRewriter) -> HloInstruction:
    """XLA's ``ApproxTopKFallback`` (``hlo.custom_call.approx_topk_of``): sort, then slice."""
    how = hcc.approx_topk_of(inst)
    d, n = how["dimension"], how["arrays"]
    arrays = list(inst.operands[:n])
    results = list(inst.shape.tuple_shapes) if inst.shape.is_tuple else [inst.shape]
    shapes = [a.shape for a in arrays]
    sort_shape = Shape.tuple(shapes) if n > 1 else shapes[0]
    sort = rw.create("sort", sort_shape, arrays, {"dimensions": (d,), "is_stable": False,
                                                  "to_apply": inst.called_computations()[0]})
    cut = []
    for k, (s, r) in enumerate(zip(shapes, results)):
        sorted_k = rw.create("get-tuple-element", s, [sort], {"index": k}) if n > 1 else sort
        bounds = tuple((0, r.dimensions[j] if j == d else size, 1) for j, size in enumerate(s.dimensions))
        cut.append(rw.create("slice", r, [sorted_k], {"slice": bounds}))
    return rw.create("tuple", inst.shape, cut) if inst.shape.is_tuple else cut[0]


def _is_real_lapack(inst: HloInstruction, routine: str, operands: int) -> bool:
    """Whether ``inst`` is jax's ``lapack_?<routine>_ffi`` of f32 or f64 with
    ``operands`` operands (the calls xlac's own kernels may take over)."""
    target = hcc.target_of(inst)
    if not hcc.is_builtin(target) or len(inst.operands) != operands:
        return False
    t = hcc.lapack_target(target)
    return t.routine == routine and t.dtype in (F32, F64)


#: trsm's ``trans_x`` as triangular-solve's ``transpose_a``.
_TRSM_TRANSPOSE = {"N": "NO_TRANSPOSE", "T": "TRANSPOSE", "C": "ADJOINT"}
#: The smallest order of a trsm that becomes a triangular-solve: that of the
#: blocked kernel (``codegen/kernels/triangular_solve_blocked.py``'s MIN_SIZE,
#: exclusive); smaller ones keep LAPACK's routine and its results.
TRSM_MIN_ORDER = 129


@EXPANSIONS.register("custom-call")
def lapack_trsm(inst: HloInstruction, rw: PatternRewriter) -> bool:
    """jax's real ``lapack_?trsm_ffi`` without alpha (two operands: alpha is
    1) of order TRSM_MIN_ORDER or more with several right-hand sides, as the
    ``triangular-solve`` it is (op(a) x = b, or x op(a) = b, the other
    triangle of a ignored, as BLAS's): xlac's blocked substitution runs its
    bulk through the GEMM library (``jnp.linalg.inv``'s two 512 x 512 solves:
    ~2x LAPACK's ``strsm``).  One right-hand side stays LAPACK's (a
    matrix-vector substitution, which the blocked kernel leaves to the
    unblocked one).  The solve reads its operands in any layout (a ``copy``
    that only relays one is skipped) and writes row-major, where its work
    array is; a copy gives the layout the call wrote."""
    if not _is_real_lapack(inst, "trsm", 2):
        return False
    o = hcc.lapack_attributes(inst)
    order = inst.operands[0].shape.dimensions[-1]
    m, n = inst.operands[1].shape.dimensions[-2:]
    if order < TRSM_MIN_ORDER or (n if o["side"] == "L" else m) < 2:
        return False
    attrs = {"left_side": o["side"] == "L", "lower": o["uplo"] == "L", "unit_diagonal": o["diag"] == "U",
             "transpose_a": _TRSM_TRANSPOSE[o["trans"]]}
    operands = [x.operands[0] if x.opcode == "copy" and x.operands[0].shape.dimensions == x.shape.dimensions
                else x for x in inst.operands]
    solve = rw.create("triangular-solve", Shape(inst.shape.element_type, inst.shape.dimensions), operands, attrs)
    return rw.supersede(inst, _relaid(rw, solve, inst.shape))


#: The smallest order of a potrf that becomes a cholesky: past the blocked
#: kernel's block (``codegen/kernels/cholesky_blocked.py``), as for trsm;
#: smaller ones keep LAPACK's routine and its results.
POTRF_MIN_ORDER = 129


def _info_only_tested_for_zero(call: HloInstruction) -> bool:
    """Whether every use of ``call``'s info (result 1) is ``info == 0`` or
    ``info != 0`` (how jax reads it), and result 0 is read only through its
    get-tuple-element: then an info that is 0 exactly when LAPACK's is tells
    the same."""
    def is_root(x) -> bool:
        return x.parent is not None and x.parent.root is x
    if is_root(call):
        return False
    for user in call.users:
        if user.opcode != "get-tuple-element":
            return False
        if user.attrs.get("index") != 1:
            continue
        if is_root(user):
            return False
        for test in user.users:
            if test.opcode != "compare" or test.attrs.get("direction") not in ("EQ", "NE"):
                return False
            other = test.operands[1] if test.operands[0] is user else test.operands[0]
            zero = uniform_value(other)
            if zero is None or zero != 0:
                return False
    return True


@EXPANSIONS.register("custom-call")
def lapack_potrf(inst: HloInstruction, rw: PatternRewriter) -> bool:
    """jax's real ``lapack_?potrf_ffi`` of order POTRF_MIN_ORDER or more whose
    info is only compared with 0 (``jnp.linalg.cholesky``: NaN where it is
    not 0) as the ``cholesky`` it is: xlac's blocked factorisation runs its
    bulk through the GEMM library (512 x 512: ~3x LAPACK's ``spotrf``).
    Result 0 keeps the other triangle of the operand, as LAPACK does; info is
    0 when the last diagonal element of the factor is positive, else 1 (a
    failed pivot, one of exactly 0 or below, or NaN, makes every later one
    NaN or, being the last, 0 or NaN; LAPACK gives the failed minor's order,
    and its partly factored result, which jax replaces by NaN, may differ
    from the factor returned here)."""
    if not _is_real_lapack(inst, "potrf", 1):
        return False
    a = inst.operands[0]
    dims, et = a.shape.dimensions, a.shape.element_type
    n = dims[-1]
    if n < POTRF_MIN_ORDER or not _info_only_tested_for_zero(inst):
        return False
    lower = hcc.lapack_attributes(inst)["uplo"] == "L"
    if a.opcode == "copy" and a.operands[0].shape.dimensions == dims:
        a = a.operands[0]                  # the cholesky reads any layout
    shape, pred = Shape(et, dims), Shape(PRED, dims)
    factor = rw.create("cholesky", shape, [a], {"lower": lower})
    index = Shape(S32, dims)
    row = rw.create("iota", index, [], {"iota_dimension": len(dims) - 2})
    col = rw.create("iota", index, [], {"iota_dimension": len(dims) - 1})
    mine = rw.create("compare", pred, [row, col], {"direction": "GE" if lower else "LE"})
    out = rw.create("select", shape, [mine, factor, a])
    batch = dims[:-2]
    spec = tuple((0, d, 1) for d in batch) + ((n - 1, n, 1), (n - 1, n, 1))
    last = rw.create("slice", Shape(et, batch + (1, 1)), [factor], {"slice": spec})
    last = rw.create("reshape", Shape(et, batch), [last])
    zero = rw.create("broadcast", Shape(et, batch), [rw.create("constant", Shape(et, ()), [],
                                                               {"literal": np.array(0, dtype=et.dtype)})],
                     {"dimensions": ()})
    positive = rw.create("compare", Shape(PRED, batch), [last, zero], {"direction": "GT"})
    failed = rw.create("not", Shape(PRED, batch), [positive])
    info = rw.create("convert", Shape(S32, batch), [failed])
    result = rw.create("tuple", Shape.tuple([shape, Shape(S32, batch)]), [out, info])
    return rw.supersede(inst, _relaid(rw, result, inst.shape))


@EXPANSIONS.register("custom-call")
def custom_call_layout(inst: HloInstruction, rw: PatternRewriter) -> bool:
    operands, result = custom_call_layouts(inst)
    if all(o.shape == want for o, want in zip(inst.operands, operands)) and inst.shape == result:
        return False
    ops = [_relaid(rw, o, want) for o, want in zip(inst.operands, operands)]
    call = rw.create("custom-call", result, ops, dict(inst.attrs))
    return rw.supersede(inst, _relaid(rw, call, inst.shape))
