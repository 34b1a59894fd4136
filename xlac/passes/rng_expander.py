"""The random-number ops as elementwise code: XLA's RngBitGeneratorExpander
and RngExpander, registered in ``op-expander``'s table by ``expanders.py``.

* ``rng-bit-generator`` becomes Threefry or Philox rounds on integer
  arithmetic (u32 adds, xors, rotates; u64 multiplies for Philox's 32x32->64
  products) and a ``tuple`` of the new state and the bits;
* ``rng`` becomes ``rng-get-and-update-state`` (the program's generator state,
  ``delta`` = its number of 32-bit words), a key constant of the instruction
  (``xlac.hlo.rng.rng_key``), Philox bits, and the distribution: XLA's
  mantissa-bits-to-float and modulo-the-range conversions for uniform numbers,
  Box-Muller for normal ones.

The bits are XLA's (``xla/hlo/builder/lib/prng.cc``; ``xlac.hlo.rng`` says
how they are laid out), but the code is written per output element: each
element finds its counter (or Philox block and lane) from its own index, an
expression of ``iota``s, so the whole expansion is elementwise — no
concatenate, reshape or slice — and fuses into one loop over the output that
needs no runtime support (JIT and AOT alike).  A block or a Threefry pair is
then computed once per element that uses it (up to 4 times for Philox); the
rounds are a few hundred integer operations that vectorise.
"""
from __future__ import annotations

import math

import numpy as np

from ..hlo import collectives, rng
from ..hlo.ir import HloInstruction
from ..shape import PRED, U32, U64, PrimitiveType, Shape
from .rewriter import PatternRewriter, PatternSet

__all__ = ["register"]

_M32 = (1 << 32) - 1


class _Ops:
    """Instructions over arrays of ``dims`` (and scalars), made through the rewriter."""

    def __init__(self, rw: PatternRewriter, dims: tuple):
        self.rw, self.dims = rw, tuple(dims)

    def create(self, opcode: str, shape: Shape, operands, attrs=None) -> HloInstruction:
        return self.rw.create(opcode, shape, operands, attrs)

    def scalar(self, pt: PrimitiveType, value) -> HloInstruction:
        return self.create("constant", Shape(pt, ()), [], {"literal": np.array(value, pt.dtype)})

    def full(self, x: HloInstruction) -> HloInstruction:
        """A scalar broadcast to ``dims`` (arrays pass)."""
        if x.shape.dimensions == self.dims:
            return x
        return self.create("broadcast", Shape(x.shape.element_type, self.dims), [x], {"dimensions": ()})

    def const(self, pt: PrimitiveType, value) -> HloInstruction:
        """``value`` everywhere in ``dims``."""
        return self.full(self.scalar(pt, value))

    def op(self, opcode: str, x: HloInstruction, *ys, pt: PrimitiveType | None = None, attrs=None):
        """Elementwise ``opcode``; Python numbers among ``ys`` become constants of x's type."""
        et = x.shape.element_type
        ys = [y if isinstance(y, HloInstruction) else self.like(x, y) for y in ys]
        return self.create(opcode, Shape(pt or et, x.shape.dimensions), [x, *ys], attrs)

    def like(self, x: HloInstruction, value) -> HloInstruction:
        """``value`` as a constant of ``x``'s type and dimensions (a scalar or ``dims``)."""
        c = self.scalar(x.shape.element_type, value)
        return c if x.shape.dimensions == () else self.full(c)

    def convert(self, x: HloInstruction, pt: PrimitiveType) -> HloInstruction:
        if x.shape.element_type == pt:
            return x
        return self.create("convert", Shape(pt, x.shape.dimensions), [x])

    def bitcast(self, x: HloInstruction, pt: PrimitiveType) -> HloInstruction:
        if x.shape.element_type == pt:
            return x
        return self.create("bitcast-convert", Shape(pt, x.shape.dimensions), [x])

    def less(self, x: HloInstruction, y: HloInstruction) -> HloInstruction:
        return self.op("compare", x, y, pt=PRED, attrs={"direction": "LT"})

    def eq(self, x: HloInstruction, value) -> HloInstruction:
        return self.op("compare", x, value, pt=PRED, attrs={"direction": "EQ"})

    def select(self, p: HloInstruction, x: HloInstruction, y: HloInstruction) -> HloInstruction:
        return self.create("select", Shape(x.shape.element_type, x.shape.dimensions), [p, x, y])

    def iota(self, d: int) -> HloInstruction:
        return self.create("iota", Shape(U64, self.dims), [], {"iota_dimension": d})

    def index_sum(self, terms) -> HloInstruction:
        """``sum(value * stride)`` over ``(value, stride)`` terms, as u64 in ``dims``."""
        total = None
        for value, stride in terms:
            term = value if stride == 1 else self.op("multiply", value, stride)
            total = term if total is None else self.op("add", total, term)
        return total if total is not None else self.const(U64, 0)

    # -- 32-bit words of 64-bit values ------------------------------------------
    def low(self, x: HloInstruction) -> HloInstruction:
        return self.convert(x, U32)

    def high(self, x: HloInstruction) -> HloInstruction:
        return self.convert(self.op("shift-right-logical", x, 32), U32)

    def join(self, lo: HloInstruction, hi: HloInstruction) -> HloInstruction:
        return self.op("or", self.convert(lo, U64), self.op("shift-left", self.convert(hi, U64), 32))


def _row_major(dims: tuple) -> list:
    out, stride = [], 1
    for d in reversed(dims):
        out.append(stride)
        stride *= d
    return out[::-1]


def _word(rw: PatternRewriter, state: HloInstruction, k: int) -> HloInstruction:
    """Element ``k`` of a u64[n] state, as a scalar."""
    one = rw.create("slice", Shape(U64, (1,)), [state], {"slice": ((k, k + 1, 1),)})
    return rw.create("reshape", Shape(U64, ()), [one])


def _state(rw: PatternRewriter, words: list, shape: Shape) -> HloInstruction:
    """The u64[n] state of scalar ``words``."""
    ones = [rw.create("reshape", Shape(U64, (1,)), [w]) for w in words]
    return rw.create("concatenate", shape, ones, {"dimensions": (0,)})


def _with_shape(o: _Ops, value: HloInstruction, shape: Shape) -> HloInstruction:
    """``value`` with ``shape``'s layout (the instruction replaced had it)."""
    return value if value.shape == shape else o.create("copy", shape, [value])


# -- the ciphers ---------------------------------------------------------------------

def _threefry(o: _Ops, x0, x1, key) -> tuple:
    """Threefry-2x32, 20 rounds, of the u32 arrays ``x0, x1`` under the u64 scalar ``key``."""
    k0, k1 = o.low(key), o.high(key)
    ks = [k0, k1, o.op("xor", o.op("xor", k0, k1), rng.THREEFRY_PARITY)]
    x0, x1 = o.op("add", x0, o.full(ks[0])), o.op("add", x1, o.full(ks[1]))
    for i in range(5):
        for r in rng.THREEFRY_ROTATIONS[4 * (i % 2):4 * (i % 2) + 4]:
            x0 = o.op("add", x0, x1)
            rotated = o.op("or", o.op("shift-left", x1, r), o.op("shift-right-logical", x1, 32 - r))
            x1 = o.op("xor", rotated, x0)
        x0 = o.op("add", x0, o.full(ks[(i + 1) % 3]))
        x1 = o.op("add", x1, o.full(o.op("add", ks[(i + 2) % 3], i + 1)))
    return x0, x1


def _philox(o: _Ops, words: list, key) -> list:
    """Philox-4x32, 10 rounds, of four u32 arrays under the u64 scalar ``key``."""
    k0, k1 = o.low(key), o.high(key)
    x = list(words)
    for r in range(rng.PHILOX_ROUNDS):
        keys = [o.full(k if r == 0 else o.op("add", k, (r * w) & _M32))
                for k, w in zip((k0, k1), rng.PHILOX_WEYL)]
        p0 = o.op("multiply", o.convert(x[0], U64), rng.PHILOX_MULTIPLIERS[0])
        p1 = o.op("multiply", o.convert(x[2], U64), rng.PHILOX_MULTIPLIERS[1])
        x = [o.op("xor", o.op("xor", o.high(p1), x[1]), keys[0]), o.low(p1),
             o.op("xor", o.op("xor", o.high(p0), x[3]), keys[1]), o.low(p0)]
    return x


def _philox_at(o: _Ops, lin, width: int, key, low, high):
    """The Philox output of ``width`` (32 or 64) bits at linear position ``lin``
    (u64 array) of a stream whose 128-bit counter starts at scalars ``(low, high)``."""
    per_block = 4 if width == 32 else 2
    block = o.op("shift-right-logical", lin, per_block.bit_length() - 1)
    lane = o.op("and", lin, per_block - 1)
    c_lo = o.op("add", o.full(low), block)
    c_hi = o.select(o.less(c_lo, o.full(low)), o.full(o.op("add", high, 1)), o.full(high))
    w = _philox(o, [o.low(c_lo), o.high(c_lo), o.low(c_hi), o.high(c_hi)], key)
    if width == 64:
        return o.select(o.eq(lane, 0), o.join(w[0], w[1]), o.join(w[2], w[3]))
    return o.select(o.eq(lane, 0), w[0], o.select(o.eq(lane, 1), w[1], o.select(o.eq(lane, 2), w[2], w[3])))


def _linear(o: _Ops) -> HloInstruction:
    """The row-major position of each element of ``dims`` (u64)."""
    return o.index_sum((o.iota(d), s) for d, (n, s) in enumerate(zip(o.dims, _row_major(o.dims))) if n > 1)


# -- rng-bit-generator ------------------------------------------------------------------

def _threefry_bits(o: _Ops, width: int, key, counter) -> tuple:
    """(bits, elements used): Threefry's 32 or 64-bit output (xlac.hlo.rng)."""
    dims = o.dims
    if width == 64:
        ctr = o.op("add", o.full(counter), _linear(o))
        x0, x1 = _threefry(o, o.low(ctr), o.high(ctr), key)
        return o.join(x0, x1), math.prod(dims)
    split, half = rng.split_shape_into_halves(dims)
    if not dims:
        x0, _ = _threefry(o, o.low(counter), o.high(counter), key)
        return x0, 1
    halved = dims[:split] + (half[split],) + dims[split + 1:]
    along = o.iota(split)
    terms = [(o.op("shift-right-logical", along, 1) if d == split else o.iota(d), s)
             for d, s in enumerate(_row_major(halved)) if halved[d] > 1]
    ctr = o.op("add", o.full(counter), o.index_sum(terms))
    x0, x1 = _threefry(o, o.low(ctr), o.high(ctr), key)
    return o.select(o.eq(o.op("and", along, 1), 0), x0, x1), math.prod(half)


def _generate_bits(inst: HloInstruction, rw: PatternRewriter) -> tuple:
    """(new state, bits) of an rng-bit-generator, as instructions."""
    alg = rng.algorithm(str(inst.attrs["algorithm"]))
    state = inst.operands[0]
    state_shape, bits_shape = inst.shape.tuple_shapes
    o = _Ops(rw, bits_shape.dimensions)
    width = 64 if bits_shape.element_type.bit_width == 64 else 32
    key = _word(rw, state, 0)
    n_words = state_shape.dimensions[0]
    if alg.implementation == "rng_three_fry":
        counter = _word(rw, state, 1)
        bits, used = _threefry_bits(o, width, key, counter)
        words = [key, o.op("add", counter, used)]
    else:
        low = _word(rw, state, 1)
        high = _word(rw, state, 2) if n_words == 3 else key
        bits = _philox_at(o, _linear(o), width, key, low, high)
        blocks = -(-math.prod(o.dims) * (width // 32) // 4)
        new_low = o.op("add", low, blocks)
        words = [key, new_low]
        if n_words == 3:
            words.append(o.select(o.less(new_low, low), o.op("add", high, 1), high))
    bits = o.convert(bits, bits_shape.element_type)
    new_state = _state(rw, words, Shape(U64, state_shape.dimensions, layout=state_shape.layout))
    return new_state, _with_shape(o, bits, bits_shape)


def rng_bit_generator(inst: HloInstruction, rw: PatternRewriter) -> bool:
    new_state, bits = _generate_bits(inst, rw)
    return rw.replace(inst, rw.create("tuple", inst.shape, [new_state, bits]))


# -- rng --------------------------------------------------------------------------------

def _key(inst: HloInstruction, o: _Ops) -> HloInstruction:
    """The instruction's Philox key; on a module of several devices the replica
    id and the partition id (times 2**32) are xor-ed in (``rng.device_key``)."""
    key = o.scalar(U64, rng.rng_key(inst.name))
    module = inst.parent.parent if inst.parent is not None else None
    replicas, partitions = collectives.device_counts(module) if module is not None else (1, 1)
    if replicas > 1:
        key = o.op("xor", key, o.convert(o.create("replica-id", Shape(U32, ()), []), U64))
    if partitions > 1:
        part = o.convert(o.create("partition-id", Shape(U32, ()), []), U64)
        key = o.op("xor", key, o.op("shift-left", part, 32))
    return key


def _unit_floats(o: _Ops, bits, pt: PrimitiveType):
    """The high mantissa's worth of ``bits`` as a ``pt`` number in [0, 1)."""
    width, mantissa = bits.shape.element_type.bit_width, np.finfo(pt.dtype).nmant
    values = o.convert(o.op("shift-right-logical", bits, width - mantissa), pt)
    return o.op("multiply", values, 2.0 ** -mantissa)


def _uniform_floats(o: _Ops, bits, a, b, pt: PrimitiveType):
    return o.op("add", o.op("multiply", _unit_floats(o, bits, pt), o.full(o.op("subtract", b, a))), o.full(a))


def _uniform_ints(o: _Ops, bits, a, b, pt: PrimitiveType):
    unsigned = bits.shape.element_type
    span = o.op("subtract", o.bitcast(b, unsigned), o.bitcast(a, unsigned))
    dist = o.op("remainder", bits, o.full(span))
    half = o.op("shift-right-logical", dist, 1)
    total = o.op("add", o.full(a), o.bitcast(half, pt))
    return o.op("add", total, o.bitcast(o.op("subtract", dist, half), pt))


def _normals(o: _Ops, pt: PrimitiveType, key, low, high):
    """Standard normal numbers: Box-Muller of uniform pairs that lie side by
    side along the split dimension (XLA's NormalFloatingPointDistribution)."""
    dims, width = o.dims, pt.bit_width
    split, half, pair, pair_dim = rng.split_pair(dims)
    strides = _row_major(pair)
    odd = None
    if dims:
        along = o.iota(split)
        odd = o.op("and", along, 1)
        terms = [(o.iota(d), strides[d if d < split else d + 1]) for d in range(len(dims))
                 if d != split and dims[d] > 1]
        terms.append((o.op("shift-right-logical", along, 1), strides[split]))
        first = o.index_sum(terms)
    else:
        first = o.const(U64, 0)
    second = o.op("add", first, strides[pair_dim])
    x0, x1 = (_unit_floats(o, _philox_at(o, lin, width, key, low, high), pt) for lin in (first, second))
    u1 = o.op("maximum", x0, float(np.float32(1e-7)))
    v1 = o.op("multiply", x1, 2.0 * math.pi)
    u2 = o.op("sqrt", o.op("multiply", o.op("log", u1), -2.0))
    z0, z1 = o.op("multiply", o.op("sine", v1), u2), o.op("multiply", o.op("cosine", v1), u2)
    return z0 if odd is None else o.select(o.eq(odd, 0), z0, z1)


def rng_op(inst: HloInstruction, rw: PatternRewriter) -> bool:
    pt, dims = inst.shape.element_type, inst.shape.dimensions
    distribution = str(inst.attrs["distribution"])
    gen = rng.generation_type(pt)
    o = _Ops(rw, dims)
    a, b = (o.convert(x, gen) for x in inst.operands)
    state = o.create("rng-get-and-update-state", Shape(U64, (2,)), [], {"delta": rng.state_delta(pt, dims)})
    key, low, high = _key(inst, o), _word(rw, state, 0), _word(rw, state, 1)
    if distribution == "rng_normal":
        values = o.op("add", o.full(a), o.op("multiply", o.full(b), _normals(o, gen, key, low, high)))
    else:
        bits = _philox_at(o, _linear(o), 64 if gen.bit_width == 64 else 32, key, low, high)
        values = (_uniform_floats if gen.is_float else _uniform_ints)(o, bits, a, b, gen)
    values = o.convert(values, pt)
    if distribution == "rng_uniform" and pt.is_float:
        # Rounding can reach b; the spec's interval is [a, b): such a value becomes a.
        a_pt, b_pt = inst.operands
        values = o.select(o.less(values, o.full(b_pt)), values, o.full(a_pt))
    return rw.supersede(inst, _with_shape(o, values, inst.shape))


def register(patterns: PatternSet) -> None:
    """Add the expansions of ``rng-bit-generator`` and ``rng`` to ``patterns``."""
    patterns.register("rng-bit-generator")(rng_bit_generator)
    patterns.register("rng")(rng_op)
