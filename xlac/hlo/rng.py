"""Random numbers: XLA's bit-generator algorithms, as facts every stage shares.

``rng-bit-generator`` (spec: RngBitGenerator) takes a state and returns
``(new state, bits)``; its ``algorithm`` names one of :data:`ALGORITHMS`:

* ``rng_three_fry`` — Threefry-2x32, 20 rounds (Salmon et al., SC 2011), on a
  ``u64[2]`` state ``(key, counter)``;
* ``rng_philox`` — Philox-4x32, 10 rounds, on a ``u64[2]`` state ``(key,
  counter)`` or a ``u64[3]`` one ``(key, counter low, counter high)``;
* ``rng_default`` — what XLA:CPU uses for it: Philox
  (``RngBitGeneratorExpander(RNG_PHILOX)`` in ``cpu_compiler.cc``).

The bits are XLA's, bit for bit (``xla/hlo/builder/lib/prng.cc``; checked
against XLA:CPU by ``tests/rng``):

* Threefry, 32-bit output: the output shape is split in two halves along its
  first even dimension (or, when none is even, its largest; a scalar is a
  shape ``[1]``) — ``split_shape_into_halves``; element ``j`` of the half
  (row-major) encrypts the counter ``state[1] + j`` (mod 2**64) with the key
  ``state[0]``, the counter and key each split into (low, high) 32-bit words;
  output word 0 goes to the even positions of the split dimension, word 1 to
  the odd ones.  The new state is ``(key, counter + elements of the half)``.
* Threefry, 64-bit output: element ``j`` (row-major) is the counter
  ``state[1] + j`` encrypted, ``word0 | word1 << 32``; the counter advances by
  the number of elements.
* Philox: the counter is a 128-bit number — ``(low, high) = (state[1],
  state[0])`` for a ``u64[2]`` state, ``(state[1], state[2])`` for ``u64[3]``
  — the key is ``state[0]``.  Block ``j`` encrypts ``counter + j`` into four
  32-bit words; a 32-bit output takes them in order, block after block; a
  64-bit output takes ``w0 | w1 << 32`` then ``w2 | w3 << 32``.  The new
  state is ``(key, counter + blocks)``, of which a ``u64[2]`` state keeps only
  the low word.
* Outputs narrower than 32 bits (u8, u16) are the 32-bit output truncated.

The output element type is unsigned: ``u8``, ``u16``, ``u32`` or ``u64``
(``XlaBuilder::RngBitGenerator`` turns a requested type of another kind into
the unsigned type of its width, :func:`bits_type`).

``rng`` (spec: RngUniform, RngNormal) is XLA's ``RngExpander``: Philox bits
from a generator state of the program (``rng-get-and-update-state``, below)
and a key of the instruction (:func:`rng_key`), turned into the distribution
(``xlac.passes.rng_expander``; the evaluator computes the same numbers).

``rng-get-and-update-state`` (``u64[2] rng-get-and-update-state(),
delta=N``) returns a 128-bit state ``(low, high)`` and adds ``delta`` to it:
each such instruction of a compiled program has a state of its own, starting
at :data:`RNG_STATE_INITIAL` (XLA:CPU's value) when the program is loaded.

This module also holds a numpy implementation of the algorithms, the
evaluator's reference (written block by block, as ``prng.cc`` is; the code
generator's expansion computes each output element on its own).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..shape import F32, PrimitiveType, S32, U8, U16, U32, U64

__all__ = ["Algorithm", "ALGORITHMS", "DEFAULT_ALGORITHM", "algorithm", "bits_type", "BIT_TYPES",
           "DISTRIBUTIONS", "RNG_STATE_INITIAL", "RNG_SEED", "rng_key", "split_shape_into_halves",
           "THREEFRY_ROTATIONS", "THREEFRY_PARITY", "PHILOX_MULTIPLIERS", "PHILOX_WEYL", "PHILOX_ROUNDS",
           "rng_bit_generator", "threefry2x32", "philox4x32", "philox_blocks", "generation_type",
           "state_delta", "device_key", "rng_values", "split_pair"]


@dataclass(frozen=True)
class Algorithm:
    """One ``algorithm=`` of ``rng-bit-generator``."""

    name: str
    state_sizes: tuple          # the u64[n] states it takes
    implementation: str         # the algorithm that runs ("rng_three_fry" or "rng_philox")


ALGORITHMS = {a.name: a for a in (
    Algorithm("rng_three_fry", (2,), "rng_three_fry"),
    Algorithm("rng_philox", (2, 3), "rng_philox"),
    # XLA:CPU: RngBitGeneratorExpander(RandomAlgorithm::RNG_PHILOX).
    Algorithm("rng_default", (2, 3), "rng_philox"),
)}

DEFAULT_ALGORITHM = "rng_default"

#: rng-bit-generator output element types, by bit width.
BIT_TYPES = {8: U8, 16: U16, 32: U32, 64: U64}

#: ``rng``'s ``distribution=`` values.
DISTRIBUTIONS = ("rng_uniform", "rng_normal")

#: XLA:CPU's initial generator state (``RngGetAndUpdateStateThunk``): not 0,
#: which makes the first numbers fail a chi-square test.
RNG_STATE_INITIAL = 0x7012395

#: The seed ``rng`` keys are derived from (:func:`rng_key`).
RNG_SEED = 0x5EED_0F_7A1C

THREEFRY_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
THREEFRY_PARITY = 0x1BD11BDA
PHILOX_MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
PHILOX_WEYL = (0x9E3779B9, 0xBB67AE85)
PHILOX_ROUNDS = 10

_M64 = (1 << 64) - 1
_U32, _U64 = np.dtype(np.uint32), np.dtype(np.uint64)


def algorithm(name) -> Algorithm:
    """The :class:`Algorithm` called ``name`` (``rng_philox``, ``RNG_PHILOX``, ``philox``, an
    enum with such a ``name``); ``ValueError`` listing the algorithms otherwise."""
    text = str(getattr(name, "name", name)).lower()
    text = text if text.startswith("rng_") else f"rng_{text}"
    if text not in ALGORITHMS:
        raise ValueError(f"unknown random algorithm {name!r}; the algorithms are {', '.join(ALGORITHMS)}")
    return ALGORITHMS[text]


def bits_type(pt: PrimitiveType) -> PrimitiveType | None:
    """The unsigned type of ``pt``'s width that rng-bit-generator makes for a
    request of ``pt`` (None for pred, complex and widths it has no type for)."""
    if not pt.is_array or pt.is_complex or pt.is_pred:
        return None
    return BIT_TYPES.get(pt.bit_width)


def rng_key(name: str) -> int:
    """The Philox key of the ``rng`` instruction called ``name``: :data:`RNG_SEED`
    xor the 64-bit FNV-1a hash of the name, so the numbers of an instruction do
    not change when others are added or removed (XLA hashes the instruction's
    id into its seed the same way).  On a module of several devices the code
    also xors the replica id and the partition id times 2**32 in, as XLA does."""
    h = 0xCBF29CE484222325
    for byte in name.encode():
        h = ((h ^ byte) * 0x100000001B3) & _M64
    return h ^ RNG_SEED


def split_pair(dims: tuple) -> tuple[int, tuple, tuple, int]:
    """``(split, half, pair, pair_dim)``: XLA's ``SplitShapePair`` of ``dims``
    (:func:`split_shape_into_halves`) plus the shape of the two halves side by
    side (``pair``: the half with 2 at ``pair_dim``)."""
    split, half = split_shape_into_halves(dims)
    if not dims:
        return split, half, (2,), 0
    return split, half, half[:split + 1] + (2,) + half[split + 2:], split + 1


def split_shape_into_halves(dims: tuple) -> tuple[int, tuple]:
    """``(split, half)``: the dimension Threefry's 32-bit output and the normal
    distribution split in two (the first even one, else the largest) and the
    half shape, which has ``ceil(d / 2)`` there and an extra 1 after it
    (XLA's ``SplitShapeIntoHalves``).  A scalar splits as ``[2]``: ``(0, (1,))``."""
    if not dims:
        return 0, (1,)
    even = [i for i, d in enumerate(dims) if d % 2 == 0]
    split = even[0] if even else max(range(len(dims)), key=lambda i: (dims[i], -i))
    half = dims[:split] + ((dims[split] + 1) // 2, 1) + dims[split + 1:]
    return split, half


# -- the numpy reference -------------------------------------------------------------

def _words(x: np.ndarray) -> tuple:
    """A u64 array as its (low, high) u32 words."""
    x = x.astype(_U64)
    return (x & np.uint64(0xFFFFFFFF)).astype(_U32), (x >> np.uint64(32)).astype(_U32)


def _join(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return lo.astype(_U64) | (hi.astype(_U64) << np.uint64(32))


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def threefry2x32(x0: np.ndarray, x1: np.ndarray, k0: int, k1: int) -> tuple:
    """Threefry-2x32 (20 rounds) of the u32 words ``x0, x1`` under the key ``(k0, k1)``."""
    ks = [np.uint32(k0), np.uint32(k1), np.uint32(k0 ^ k1 ^ THREEFRY_PARITY)]
    with np.errstate(over="ignore"):
        x0, x1 = x0 + ks[0], x1 + ks[1]
        for i in range(5):
            for r in THREEFRY_ROTATIONS[4 * (i % 2):4 * (i % 2) + 4]:
                x0 = x0 + x1
                x1 = _rotl(x1, r) ^ x0
            x0 = x0 + ks[(i + 1) % 3]
            x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x0, x1


def philox4x32(words: list, k0: int, k1: int) -> list:
    """Philox-4x32 (10 rounds) of four u32 word arrays under the key ``(k0, k1)``."""
    x = [w.astype(_U32) for w in words]
    k0, k1 = np.uint32(k0), np.uint32(k1)
    with np.errstate(over="ignore"):
        for _ in range(PHILOX_ROUNDS):
            p0 = x[0].astype(_U64) * np.uint64(PHILOX_MULTIPLIERS[0])
            p1 = x[2].astype(_U64) * np.uint64(PHILOX_MULTIPLIERS[1])
            (lo0, hi0), (lo1, hi1) = _words(p0), _words(p1)
            x = [hi1 ^ x[1] ^ k0, lo1, hi0 ^ x[3] ^ k1, lo0]
            k0, k1 = k0 + np.uint32(PHILOX_WEYL[0]), k1 + np.uint32(PHILOX_WEYL[1])
    return x


def philox_blocks(key: int, low: int, high: int, n: int) -> list:
    """The four u32 word arrays of ``n`` Philox blocks: the 128-bit counter
    ``(low, high) + j`` for ``j`` in ``range(n)``, encrypted with ``key``."""
    j = np.arange(n, dtype=_U64)
    with np.errstate(over="ignore"):
        lo = np.uint64(low) + j
    hi = np.where(lo < np.uint64(low), np.uint64((high + 1) & _M64), np.uint64(high))
    return philox4x32([*_words(lo), *_words(hi)], *_words(np.uint64(key)))


def _threefry32(state: list, dims: tuple) -> tuple:
    key, counter = state
    split, half = split_shape_into_halves(dims)
    n = math.prod(half)
    with np.errstate(over="ignore"):
        ctr = np.uint64(counter) + np.arange(n, dtype=_U64)
    x0, x1 = threefry2x32(*_words(ctr), *(int(w) for w in _words(np.uint64(key))))
    new_state = [key, (counter + n) & _M64]
    if not dims:
        return x0.reshape(()), new_state
    both = np.concatenate([x0.reshape(half), x1.reshape(half)], axis=split + 1)
    full = both.reshape(dims[:split] + (2 * half[split],) + dims[split + 1:])
    return full[(slice(None),) * split + (slice(0, dims[split]),)], new_state


def _threefry64(state: list, dims: tuple) -> tuple:
    key, counter = state
    n = math.prod(dims)
    with np.errstate(over="ignore"):
        ctr = np.uint64(counter) + np.arange(n, dtype=_U64)
    x0, x1 = threefry2x32(*_words(ctr), *(int(w) for w in _words(np.uint64(key))))
    return _join(x0, x1).reshape(dims), [key, (counter + n) & _M64]


def _philox(state: list, dims: tuple, width: int) -> tuple:
    key = state[0]
    low, high = (state[1], state[0]) if len(state) == 2 else (state[1], state[2])
    n = math.prod(dims)
    words_per_element = width // 32
    blocks = -(-n * words_per_element // 4)
    w = philox_blocks(key, low, high, blocks)
    if width == 64:
        flat = np.stack([_join(w[0], w[1]), _join(w[2], w[3])], axis=1).reshape(-1)
    else:
        flat = np.stack(w, axis=1).reshape(-1)
    counter = ((high << 64) | low) + blocks
    new_state = [key, counter & _M64] + ([(counter >> 64) & _M64] if len(state) == 3 else [])
    return flat[:n].reshape(dims), new_state


def rng_bit_generator(name: str, state: np.ndarray, dims: tuple, width: int) -> tuple:
    """``(new state, bits)`` of rng-bit-generator ``name`` on the u64 ``state``:
    ``bits`` of shape ``dims`` and ``width`` bits (8, 16, 32 or 64), unsigned."""
    alg = algorithm(name)
    words = [int(v) for v in np.asarray(state, _U64).reshape(-1)]
    wide = 64 if width == 64 else 32
    if alg.implementation == "rng_three_fry":
        bits, new = (_threefry64 if wide == 64 else _threefry32)(words, tuple(dims))
    else:
        bits, new = _philox(words, tuple(dims), wide)
    bits = np.array(bits, dtype=BIT_TYPES[width].dtype, order="C")
    return np.array(new, _U64), bits


# -- rng: distributions over Philox bits (XLA's RngExpander) ---------------------------

def generation_type(pt: PrimitiveType) -> PrimitiveType:
    """The type ``rng`` of ``pt`` numbers computes in: f16 and bf16 in f32 (as
    XLA's RngExpander), pred and the narrow integers in 32 bits."""
    if pt.is_float:
        return F32 if pt.bit_width < 32 else pt
    if pt.bit_width >= 32:
        return pt
    return U32 if pt.is_unsigned_int else S32


def state_delta(pt: PrimitiveType, dims: tuple) -> int:
    """What one ``rng`` of ``pt[dims]`` adds to its generator state: its
    number of 32-bit words (XLA's ``GetNumberOf32bitUnits``)."""
    return math.prod(dims) * (2 if generation_type(pt).bit_width == 64 else 1)


def device_key(key: int, replica: int, partition: int, num_replicas: int, num_partitions: int) -> int:
    """An ``rng`` key on one device of several: xor the replica id (when there
    are several replicas) and the partition id times 2**32 (several partitions)."""
    if num_replicas > 1:
        key ^= replica
    if num_partitions > 1:
        key ^= (partition << 32) & _M64
    return key


def _uniform_floats(bits: np.ndarray, a, b, dt: np.dtype) -> np.ndarray:
    """XLA's ConvertRandomBitsToUniformFloatingPoint: the mantissa's worth of
    high bits as a number in [0, 1), scaled to ``[a, b)``, in ``dt``."""
    width, mantissa = bits.dtype.itemsize * 8, np.finfo(dt).nmant
    unit = (bits >> bits.dtype.type(width - mantissa)).astype(dt) * dt.type(2.0 ** -mantissa)
    with np.errstate(all="ignore"):
        return unit * (dt.type(b) - dt.type(a)) + dt.type(a)


def _uniform_ints(bits: np.ndarray, a, b, dt: np.dtype) -> np.ndarray:
    """XLA's ConvertRandomBitsToUniformInt: ``a + bits % (b - a)``, the sum
    taken in two halves so it cannot overflow (``x % 0`` is ``x``)."""
    ut = bits.dtype
    span = (np.asarray(b, dt).view(ut) - np.asarray(a, dt).view(ut)).astype(ut)
    dist = bits if span == 0 else bits % span
    half = dist >> ut.type(1)
    with np.errstate(over="ignore"):
        return (np.asarray(a, dt) + half.view(dt) + (dist - half).view(dt)).astype(dt)


def _transcendental(fn, x: np.ndarray) -> np.ndarray:
    return fn(x.astype(np.float64)).astype(x.dtype)


def _box_muller(x0: np.ndarray, x1: np.ndarray) -> tuple:
    """XLA's BoxMullerTransform of two uniform [0, 1) arrays."""
    dt = x0.dtype
    u1 = np.maximum(x0, dt.type(np.float32(1e-7)))
    v1 = dt.type(2.0 * math.pi) * x1
    u2 = _transcendental(np.sqrt, dt.type(-2.0) * _transcendental(np.log, u1))
    return _transcendental(np.sin, v1) * u2, _transcendental(np.cos, v1) * u2


def _normals(key: int, low: int, high: int, dims: tuple, dt: np.dtype) -> np.ndarray:
    """XLA's NormalFloatingPointDistribution: uniform pairs side by side along
    the split dimension, Box-Muller, the two results interleaved back."""
    split, half, pair, pair_dim = split_pair(dims)
    bits, _ = _philox([key, low, high], pair, dt.itemsize * 8)
    u = _uniform_floats(bits, 0.0, 1.0, dt)
    z0, z1 = _box_muller(np.take(u, [0], axis=pair_dim), np.take(u, [1], axis=pair_dim))
    if not dims:
        return z0.reshape(())
    both = np.concatenate([z0, z1], axis=pair_dim)
    full = both.reshape(dims[:split] + (2 * half[split],) + dims[split + 1:])
    return full[(slice(None),) * split + (slice(0, dims[split]),)]


def rng_values(distribution: str, key: int, state: np.ndarray, a, b, pt: PrimitiveType,
               dims: tuple) -> np.ndarray:
    """What ``rng`` makes: ``pt[dims]`` numbers of ``distribution`` with the
    parameters ``a, b`` (uniform: ``[a, b)``; normal: mean and deviation),
    from the Philox key ``key`` and the 128-bit counter ``state`` (``(low,
    high)``, what rng-get-and-update-state returned).  A uniform float that
    rounds to ``b`` becomes ``a``, so every value is in ``[a, b)``."""
    gen = generation_type(pt)
    dt = gen.dtype
    low, high = (int(v) for v in np.asarray(state, _U64).reshape(-1))
    a_gen, b_gen = np.asarray(a).astype(dt), np.asarray(b).astype(dt)
    if distribution == "rng_normal":
        values = a_gen + b_gen * _normals(key, low, high, tuple(dims), dt)
    else:
        bits, _ = _philox([key, low, high], tuple(dims), gen.bit_width)
        convert = _uniform_floats if gen.is_float else _uniform_ints
        values = convert(bits, a_gen, b_gen, dt)
    out = np.asarray(values).astype(pt.dtype)
    if distribution == "rng_uniform" and pt.is_float:
        out = np.where(out < np.asarray(b, pt.dtype), out, np.asarray(a, pt.dtype)).astype(pt.dtype)
    return np.array(out, order="C")
