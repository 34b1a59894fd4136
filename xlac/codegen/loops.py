"""Loop emission helpers (in the spirit of numba's cgutils.for_range / loop_nest).

Shapes are static, so trip counts are Python ints and loops are bottom-tested:
body, increment, compare, branch back.  A zero-trip loop emits nothing, so the
callers skip empty arrays before calling.
"""
from __future__ import annotations

from contextlib import contextmanager

from llvmlite import ir

from ..shape import Shape, padding_scalar, strides
from . import types
from .emission import context_of
from .ir_array import I64, Index, IrArray, i64
from .target import host_vector_bits


class Chain:
    """An open basic block in front of a loop: code appended to it runs once
    per entry into the loop, before the first iteration (a hoisting point).
    The loop emitter closes it with the branch into the loop."""

    def __init__(self, block: ir.Block):
        self.block = block
        #: Values hoisted into this chain: key -> (generator, index values,
        #: value); the first two are kept so their ids stay unique.
        self.values: dict = {}
        #: The chain whose hoisted code this loop's chain is part of, at its
        #: top level (a row reduction's loop emitted into the chain in front
        #: of the output's inner loop); values hoisted here are visible there.
        self.parent: "Chain | None" = None


class _DistinctNode(ir.values.MDValue):
    """``distinct !{}``: LLVM wants access groups distinct (llvmlite prints
    only uniqued metadata nodes)."""

    def descr(self, buf):
        buf.append("distinct ")
        super().descr(buf)

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)


def new_access_group(module: ir.Module):
    """A fresh access group (``distinct !{}``) of ``module``."""
    return _DistinctNode(module, [], name=str(len(module.metadata)))


def _access_group(module: ir.Module):
    """The module's one access group for parallel loops (created on first use)."""
    ctx = context_of(module)
    if ctx.parallel_group is None:
        ctx.parallel_group = new_access_group(module)
    return ctx.parallel_group


@contextmanager
def parallel_loops(module: ir.Module):
    """Mark the loops emitted with the yielded loop ID as parallel for the
    buffer accesses emitted meanwhile (``llvm.loop.parallel_accesses`` over an
    ``llvm.access.group``).

    For a kernel that writes each output element once and reads only its
    inputs (or, updating in place, the element it writes), iterations carry no
    memory dependence; saying so lets LLVM vectorise without the run-time
    overlap checks that fail when a result is written over its input.
    """
    group = _access_group(module)
    parallel = module.add_metadata([ir.MetaDataString(module, "llvm.loop.parallel_accesses"), group])
    loop_id = ir.values.MDValue(module, [], name=str(len(module.metadata)))
    loop_id.operands = (loop_id, parallel)  # a loop ID refers to itself
    groups = context_of(module).access_groups
    groups.append(group)
    try:
        yield loop_id
    finally:
        groups.pop()


#: Vector iterations a reduction loop runs side by side (independent
#: accumulators hide the latency of the add or max).
REDUCTION_INTERLEAVE = 4


def loop_hints(module: ir.Module, vectorize: bool = True, interleave: int | None = None, base=None,
               element_bytes: int | None = None, trip_count: int | None = None):
    """A fresh loop ID for a loop LLVM should not unroll
    (``llvm.loop.unroll.disable``): a short fixed-trip loop such as a row
    reduction (fully unrolled, a 1024-element row sum is 64 vector adds of code
    the machine-code emitter pays for at every compile, for no measurable
    speed), a block loop around explicit vectors, a serial task loop.  With
    ``interleave``, that many vector iterations run side by side (unroll.disable
    alone also stops the vectoriser from interleaving, leaving one latency-bound
    accumulator: reductions pass ``REDUCTION_INTERLEAVE``); with
    ``vectorize=False``, the loop is not vectorised either (scalar edges, loops
    whose vectorised versions would only cost compile time).  With ``base``, a
    loop ID, its hints (e.g. parallel accesses) are kept too.

    With ``element_bytes`` (the size of the loop's values in registers) and a
    ``trip_count`` of at least that many vectors, ``interleave`` is asked for
    as one vector ``interleave`` registers wide instead
    (``llvm.loop.vectorize.width``): the machine code is the same (the
    backend splits the wide vector into registers), but the passes after the
    vectoriser see a quarter of the instructions (softmax compiles in 17%
    less time, chain and layernorm in 10% less)."""
    hints = [h for h in base.operands if h is not base] if base is not None else []
    hints.append(module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")]))
    if not vectorize:
        hints.append(_vectorizer_off(module))
    width = _wide_vector(interleave, element_bytes, trip_count) if vectorize and interleave else None
    if interleave and not width:
        interleave = _fitting_interleave(interleave, element_bytes, trip_count)
    loop_id = _loop_id(module, hints + _interleave_hints(module, interleave, width))
    if vectorize:
        # Where the body turns out to call a function the vectoriser cannot
        # widen, the latch gets these hints with the vectoriser off; where it
        # reads with a stride, these without the width (settle_loop_id).
        loop_id.scalar_hints = (module, hints)
        loop_id.forced_width = bool(width)
    return loop_id


#: Trip counts up to which a window loop is unrolled completely (see
#: :func:`full_unroll_hints`).
FULL_UNROLL_MAX = 16
#: A loop nest's innermost loop of at most this many iterations is unrolled
#: completely (when there is a loop around it to vectorise instead).
SHORT_INNER_MAX = 4


def full_unroll_hints(module: ir.Module, base=None):
    """A fresh loop ID asking LLVM to unroll the loop completely
    (``llvm.loop.unroll.full``).  The pass pipeline (``jit.optimize``) unrolls
    only loops that ask: LLVM's own unrolling of every short loop made the
    optimised code of a training step four times its size, and slower.  What
    asks is a short loop inside an elementwise loop: a window loop
    (``reduce-window``'s 2x2 max pool), a convolution's few input features, the
    innermost dimension of a loop nest of at most ``SHORT_INNER_MAX`` (an
    image's 3 channels): unrolled, the loop around it vectorises (rolled, a
    DDPM U-Net's rng kernels over u32[8,16,16,3] ran masked 4-lane vectors
    of 3 lanes).  With ``base``, a loop ID, its hints are kept too."""
    hints = [h for h in base.operands if h is not base and not _is_unroll_hint(h)] if base is not None else []
    return _loop_id(module, hints + [module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.full")])])


def _is_unroll_hint(node) -> bool:
    return _hint_starts(node, "llvm.loop.unroll.")


def _hint_starts(node, *prefixes: str) -> bool:
    name = node.operands[0] if getattr(node, "operands", None) else None
    return isinstance(name, ir.MetaDataString) and name.string.startswith(prefixes)


#: A loop kernel of the entry (run once per call) whose nest has at most
#: this many elements is emitted scalar (``loop_nest(scalar=True)``):
#: neither vectorised nor unrolled.  It runs for a few dozen nanoseconds
#: either way, but its vector code is LLVM's longest work per element:
#: vector loops of one iteration, interleaved-group shuffles, lanes taken
#: apart (an 8 x 3 threefry round took 31 ms to compile vectorised, 14 ms
#: scalar).  Kernels of loop bodies stay vectorised (32 elements: the
#: rejection loops of rng_samplers ran 1.4 times as long scalar).
TINY_NEST_ELEMENTS = 32


#: A loop kernel of the entry of fewer elements than this is emitted for
#: running once: no long-math interleaving (``kernels/loop.MATH_INTERLEAVE``),
#: and scalar when tiny (``TINY_NEST_ELEMENTS``).  The kernel sharing key
#: tells such kernels from a loop body's (``ModuleEmitter._sharing_key``).
SMALL_ONCE_ELEMENTS = 1024


def small_once(shape: Shape) -> bool:
    """Whether a loop kernel of the entry over ``shape`` is emitted for
    running once (see ``SMALL_ONCE_ELEMENTS``)."""
    return shape.element_count() < SMALL_ONCE_ELEMENTS


def scalar_nest(shape: Shape, runs_once: bool) -> bool:
    """Whether a loop kernel's nest over ``shape`` is emitted scalar (see
    ``TINY_NEST_ELEMENTS``); ``runs_once``: the kernel is the entry's."""
    return runs_once and shape.element_count() <= TINY_NEST_ELEMENTS


def scalar_loop_id(module: ir.Module, loop_id):
    """A fresh loop ID with ``loop_id``'s hints (parallel accesses), if
    any, but not vectorised, interleaved or unrolled."""
    hints = [h for h in loop_id.operands if h is not loop_id and not _hint_starts(
        h, "llvm.loop.unroll.", "llvm.loop.vectorize.", "llvm.loop.interleave.")] if loop_id is not None else []
    return _loop_id(module, hints + [module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")]),
                                     _vectorizer_off(module)])


def _interleave_hints(module: ir.Module, interleave: int | None, width: int | None) -> list:
    out = []
    if width:
        out.append(module.add_metadata([ir.MetaDataString(module, "llvm.loop.vectorize.width"),
                                        ir.Constant(ir.IntType(32), width)]))
    if interleave:
        out.append(module.add_metadata([ir.MetaDataString(module, "llvm.loop.interleave.count"),
                                        ir.Constant(ir.IntType(32), 1 if width else interleave)]))
    return out


def _loop_id(module: ir.Module, hints: list):
    loop_id = ir.values.MDValue(module, [], name=str(len(module.metadata)))
    loop_id.operands = (loop_id, *hints)  # a loop ID refers to itself
    return loop_id


def settle_loop_id(loop_id, body_blocks, iv=None):
    """The loop ID for a latch whose loop body is ``body_blocks``: ``loop_id``,
    or, when it may be vectorised and the body calls something the
    vectoriser cannot widen (a libm function such as ``tanf``, an intrinsic
    such as ``llvm.sin`` that becomes one, inline asm, the function of
    another computation), the same hints without a width or interleaving and
    with the vectoriser off.  The calls run one element at a time whatever
    happens, and a vector loop around them (lanes taken apart for the calls
    and put back) only costs compile time: a 100-element ``sin`` took 6 ms of
    machine code emission in a 17 ms compilation, 64 calls in a row.  And an
    explicit width makes LLVM report every loop it then fails to vectorise
    ("remark: loop not vectorized: library call cannot be vectorized"), and
    its diagnostics go straight to the process's stderr: a successful
    ``xlac run`` must print nothing there.

    With ``iv``, the loop's induction variable: a body that scales it (an
    access with a stride, a transposed operand's) is not forced to a wide
    vector: its hints keep no width and no interleaving, and LLVM's cost
    model picks the factor.  Forced to a wide vector, every strided load
    became a lane-by-lane gather of 32 loads and inserts (a transformer's
    fused reductions: ~40% of their instruction selection time)."""
    scalar = getattr(loop_id, "scalar_hints", None)
    if scalar is None:
        return loop_id
    module, hints = scalar
    for block in body_blocks:
        for instr in block.instructions:
            if isinstance(instr, ir.CallInstr) and not _widenable(instr.callee):
                return _loop_id(module, hints + [_vectorizer_off(module)])
    if iv is not None and getattr(loop_id, "forced_width", False) and STRIDED_UNFORCED \
            and _scales(iv, body_blocks):
        return _loop_id(module, hints)
    return loop_id


#: See :func:`settle_loop_id`.
STRIDED_UNFORCED = True


def _scales(iv, body_blocks) -> bool:
    """Whether an instruction of ``body_blocks`` multiplies ``iv`` by a
    constant other than 0 or 1 (or shifts it left)."""
    for block in body_blocks:
        for instr in block.instructions:
            if instr.opname not in ("mul", "shl") or not any(o is iv for o in instr.operands):
                continue
            if instr.opname == "shl":
                return True
            other = instr.operands[1] if instr.operands[0] is iv else instr.operands[0]
            if not (isinstance(other, ir.Constant) and other.constant in (0, 1)):
                return True
    return False


def _vectorizer_off(module: ir.Module):
    return module.add_metadata([ir.MetaDataString(module, "llvm.loop.vectorize.enable"),
                                ir.Constant(ir.IntType(1), 0)])


#: LLVM intrinsics with no vector instruction on the host: their vector forms
#: are scalarised into one C library call per lane (a 64-lane ``llvm.sin``,
#: 64 calls to ``sinf`` and the shuffles around them: three times the machine
#: code emitter's time of the scalar loop, for the same calls).
LIBCALL_INTRINSICS = frozenset(("sin", "cos", "tan", "pow", "exp", "exp2", "exp10", "log", "log2", "log10"))


def _widenable(callee) -> bool:
    # LLVM's intrinsics (llvm.fma, llvm.maxnum, llvm.sqrt, ...) have vector
    # forms the host runs; any other call stays a scalar call.
    if not isinstance(callee, ir.Function) or not callee.name.startswith("llvm."):
        return False
    return callee.name.split(".")[1] not in LIBCALL_INTRINSICS


def _wide_vector(interleave: int, element_bytes: int | None, trip_count: int | None) -> int | None:
    """Lanes of ``interleave`` host vector registers of ``element_bytes``
    values (sub-word values count as 4 bytes: their arithmetic is widened),
    or None when the loop may run fewer iterations than that (it would not
    be vectorised at that width) or the size is unknown."""
    if not element_bytes or not trip_count or element_bytes > 8:
        return None
    width = interleave * host_vector_bits() // 8 // max(element_bytes, 4)
    return width if width > 1 and trip_count >= width else None


def _fitting_interleave(interleave: int, element_bytes: int | None, trip_count: int | None) -> int:
    """``interleave`` capped at the host vectors a loop of ``trip_count``
    iterations fills (at least 1).  Asked for more vector iterations side by
    side than the loop has, LLVM's vectoriser folds the tail into the vector
    loop, each lane's load and store behind a branch of its own: an 8 x 2
    ``exp`` took 30 ms to compile as 500 lines of predicated code."""
    if not element_bytes or not trip_count or element_bytes > 8:
        return interleave
    lanes = host_vector_bits() // 8 // max(element_bytes, 4)
    return max(1, min(interleave, trip_count // lanes))


@contextmanager
def for_range(builder: ir.IRBuilder, count: int, name: str = "i", chains: list | None = None,
              loop_id=None):
    """Emit ``for (i = 0; i < count; ++i) { <body> }``; yields ``i`` (an i64 value).

    With ``chains`` (a list), a :class:`Chain` in front of the loop is appended
    to it for the duration of the body.  The builder is left positioned after
    the loop when the block exits.
    """
    count = int(count)
    if count <= 0:
        raise ValueError("for_range needs a positive trip count; skip empty loops before calling")
    if count == 1:
        yield i64(0)
        return
    with for_range_dynamic(builder, i64(0), i64(count), name, chains, loop_id) as iv:
        yield iv


@contextmanager
def for_range_dynamic(builder: ir.IRBuilder, lo: ir.Value, hi: ir.Value, name: str = "i",
                      chains: list | None = None, loop_id=None):
    """``for (i = lo; i < hi; ++i)`` with run-time bounds; the caller guarantees
    ``lo < hi`` (the loop is bottom-tested).  Otherwise as :func:`for_range`."""
    first = len(builder.function.blocks)
    pre = builder.append_basic_block(f"{name}.pre")
    body = builder.append_basic_block(f"{name}.body")
    after = builder.append_basic_block(f"{name}.after")
    builder.branch(pre)
    chain = Chain(pre)
    if chains is not None:
        chains.append(chain)
    builder.position_at_end(body)
    iv = builder.phi(I64, name=name)
    try:
        yield iv
    finally:
        if chains is not None:
            chains.pop()
    nxt = builder.add(iv, i64(1), name=f"{name}.next", flags=["nsw", "nuw"])
    iv.add_incoming(nxt, builder.block)
    latch = builder.cbranch(builder.icmp_signed("<", nxt, hi), body, after)
    if loop_id is not None:
        # The body: every block made since this loop's (the pre-header holds
        # hoisted code, which runs outside the loop; `after` is still empty).
        blocks = builder.function.blocks[first + 1:]
        latch.set_metadata("llvm.loop", settle_loop_id(loop_id, [k for k in blocks if k is not after], iv))
    # Close the chain: whatever was hoisted into it runs, then the loop starts.
    builder.position_at_end(chain.block)
    builder.branch(body)
    iv.add_incoming(lo, chain.block)
    builder.position_at_end(after)


@contextmanager
def dyn_range(b: ir.IRBuilder, start: ir.Value, stop: ir.Value, step=1, name: str = "j"):
    """``for (i = start; i < stop; i += step)`` with run-time ``start``/``stop``
    (same integer type; signed comparison); yields ``i``.  Top-tested, so zero
    trips are fine.  A negative constant ``step`` counts down: ``i > stop``.
    The builder ends after the loop."""
    ty = start.type
    step_v = step if isinstance(step, ir.Value) else ir.Constant(ty, int(step))
    down = not isinstance(step, ir.Value) and int(step) < 0
    pre = b.block
    head = b.append_basic_block(f"{name}.head")
    body = b.append_basic_block(f"{name}.body")
    after = b.append_basic_block(f"{name}.after")
    b.branch(head)
    b.position_at_end(head)
    iv = b.phi(ty, name=name)
    iv.add_incoming(start, pre)
    b.cbranch(b.icmp_signed(">" if down else "<", iv, stop), body, after)
    b.position_at_end(body)
    yield iv
    nxt = b.add(iv, step_v, name=f"{name}.next")
    iv.add_incoming(nxt, b.block)
    b.branch(head)
    b.position_at_end(after)


@contextmanager
def loop_nest(builder: ir.IRBuilder, shape: Shape, name: str = "d", dims: list | None = None,
              outer_range: tuple | None = None, dim_ranges: dict | None = None, loop_id=None,
              scalar: bool = False):
    """Loop over every index of ``shape``'s logical dimensions (padding excluded).

    Loops run major-to-minor as the layout says, so the innermost loop walks
    consecutive memory.  ``dims`` restricts the nest to those dimensions (others
    are indexed 0).  ``outer_range=(lo, hi)`` (run-time values, lo < hi)
    restricts the outermost non-trivial dimension to [lo, hi): one task of a
    parallel loop.  With ``scalar``, the loops are neither vectorised nor
    unrolled (``scalar_loop_id``; see ``TINY_NEST_ELEMENTS``).  Yields an
    :class:`Index` whose ``linear`` is the element offset in a buffer of
    ``shape``.
    """
    order = [d for d in reversed(shape.layout.minor_to_major) if dims is None or d in dims]
    multi = [i64(0)] * shape.rank
    depths = [0] * shape.rank
    chains: list = []
    ranges = dict(dim_ranges or {})  # dimension -> (lo, hi) run-time bounds
    if outer_range is not None:
        first = next(d for d in order if shape.dimensions[d] != 1)
        ranges[first] = outer_range
    if scalar:
        loop_id = scalar_loop_id(builder.module, loop_id)
    with _nest(builder, shape, order, multi, depths, chains, name, ranges, loop_id, unroll_short=not scalar):
        linear = _linear(builder, shape, [d for d in order if shape.dimensions[d] != 1], multi)
        yield context_of(builder.module).place(Index(list(multi), linear, shape), list(depths), list(chains))


@contextmanager
def counted_loop(builder: ir.IRBuilder, count: ir.Value, shape: Shape, name: str = "n", loop_id=None):
    """One loop over ``count`` elements (an i64 >= 1 known at run time) of a
    dense rank-1 ``shape``, as :func:`loop_nest` over it: yields the
    :class:`Index` whose component and linear offset are the loop's counter."""
    chains: list = []
    with for_range_dynamic(builder, i64(0), count, name, chains, loop_id) as iv:
        yield context_of(builder.module).place(Index([iv], iv, shape), [len(chains)], list(chains))


def loop_nest_versions(builder: ir.IRBuilder, shape: Shape, cond, prologues: list, name: str = "d",
                       outer_range: tuple | None = None, loop_id=None, inner_loop_id=None):
    """:func:`loop_nest` whose innermost loop comes in two versions: a generator
    yielding ``(k, index)`` once per version, the caller emitting version k's
    body between yields.  ``cond(builder, row)`` (an ``i1``, evaluated in front of
    the inner loop, after its hoisted code) picks version 0 when it holds and
    version 1 otherwise, ``row`` being the linear offset (elements) of the
    inner loop's first element; ``prologues[k](builder)``, when not None,
    runs on entry to version k (e.g. an ``llvm.assume`` that only that side
    may make).  With ``cond`` None and one prologue there is one version, and
    no test.

    Both versions share the hoist chain in front of them, so a value hoisted
    there (a row reduction, a row scratch) is computed once and read by
    either: duplicating only the inner loop costs a fraction of the compile
    time that duplicating the whole nest does.  The inner loops carry
    ``inner_loop_id`` (the outer ones ``loop_id``)."""
    order = [d for d in reversed(shape.layout.minor_to_major) if shape.dimensions[d] != 1]
    inner, outer = order[-1], order[:-1]
    multi = [i64(0)] * shape.rank
    depths = [0] * shape.rank
    chains: list = []
    ranges = {order[0]: outer_range} if outer_range is not None else {}
    with _nest(builder, shape, outer, multi, depths, chains, name, ranges, loop_id):
        lo, hi = ranges.get(inner, (i64(0), i64(shape.dimensions[inner])))
        pre = builder.append_basic_block(f"{name}{inner}.pre")
        after = builder.append_basic_block(f"{name}{inner}.after")
        builder.branch(pre)
        chain = Chain(pre)
        chains.append(chain)
        entries = []
        for k, prologue in enumerate(prologues):
            entry = builder.append_basic_block(f"{name}{inner}.v{k}")
            first = len(builder.function.blocks)
            body = builder.append_basic_block(f"{name}{inner}.v{k}.body")
            builder.position_at_end(entry)
            if prologue is not None:
                prologue(builder)
            builder.branch(body)
            entries.append(entry)
            builder.position_at_end(body)
            iv = builder.phi(I64, name=f"{name}{inner}.v{k}")
            iv.add_incoming(lo, entry)
            multi[inner], depths[inner] = iv, len(chains)
            index = Index(list(multi), _linear(builder, shape, order, multi), shape)
            yield k, context_of(builder.module).place(index, list(depths), list(chains))
            nxt = builder.add(iv, i64(1), flags=["nsw", "nuw"])
            iv.add_incoming(nxt, builder.block)
            latch = builder.cbranch(builder.icmp_signed("<", nxt, hi), body, after)
            if inner_loop_id is not None:
                latch.set_metadata("llvm.loop",
                                   settle_loop_id(inner_loop_id, builder.function.blocks[first:], iv))
        chains.pop()
        builder.position_at_end(chain.block)
        multi[inner] = lo
        if cond is None:
            builder.branch(entries[0])
        else:
            builder.cbranch(cond(builder, _linear(builder, shape, order, multi)), entries[0], entries[1])
        builder.position_at_end(after)


def _linear(builder, shape: Shape, dims: list, multi: list) -> ir.Value:
    """The element offset of index ``multi`` (over ``dims``; the others 0) in a
    dense buffer of ``shape``."""
    st = strides(shape)
    linear = None
    for d in dims:
        term = multi[d] if st[d] == 1 else builder.mul(multi[d], i64(st[d]), flags=["nsw", "nuw"])
        linear = term if linear is None else builder.add(linear, term, flags=["nsw", "nuw"])
    return linear if linear is not None else i64(0)


@contextmanager
def _nest(builder, shape, order, multi, depths, chains, name, ranges, loop_id, outer: bool = False,
          unroll_short: bool = True):
    if not order:
        yield
        return
    d = order[0]
    if shape.dimensions[d] == 1:
        with _nest(builder, shape, order[1:], multi, depths, chains, name, ranges, loop_id, outer, unroll_short):
            yield
        return
    if d in ranges:
        loop = for_range_dynamic(builder, *ranges[d], f"{name}{d}", chains, loop_id)
    else:
        innermost = all(shape.dimensions[e] == 1 for e in order[1:])
        short = unroll_short and outer and innermost and shape.dimensions[d] <= SHORT_INNER_MAX
        loop = for_range(builder, shape.dimensions[d], f"{name}{d}", chains,
                         full_unroll_hints(builder.module, loop_id) if short else loop_id)
    with loop as iv:
        multi[d] = iv
        depths[d] = len(chains)
        with _nest(builder, shape, order[1:], multi, depths, chains, name, ranges, loop_id, True, unroll_short):
            yield


@contextmanager
def tiled_loop_nest(builder: ir.IRBuilder, shape: Shape, tiles: dict, name: str = "t",
                    outer_range: tuple | None = None, loop_id=None):
    """Like :func:`loop_nest`, but the dimensions in ``tiles`` (dim -> tile size)
    are walked tile by tile: loops over the tiles in layout order, then loops
    inside one tile.  A transpose read this way touches a tile of its input at a
    time instead of a cache line per element.  ``outer_range`` (in units of the
    first loop: tiles when the first dimension is tiled) selects one task.
    """
    order = [d for d in reversed(shape.layout.minor_to_major) if shape.dimensions[d] != 1]
    specs = [("tile" if d in tiles else "full", d) for d in order] + \
        [("inner", d) for d in order if d in tiles]
    multi = [i64(0)] * shape.rank
    depths = [0] * shape.rank
    chains: list = []
    tile_start: dict = {}

    def emit(k):
        if k == len(specs):
            yield context_of(builder.module).place(Index(list(multi)), list(depths), list(chains))
            return
        kind, d = specs[k]
        n = shape.dimensions[d]
        if kind == "inner":
            t = tiles[d]
            lo = tile_start[d]
            hi = builder.add(lo, i64(t))
            hi = builder.select(builder.icmp_signed("<", hi, i64(n)), hi, i64(n))
            loop = for_range_dynamic(builder, lo, hi, f"{name}{d}i", chains, loop_id)
        else:
            count = -(-n // tiles[d]) if kind == "tile" else n
            if k == 0 and outer_range is not None:
                loop = for_range_dynamic(builder, *outer_range, f"{name}{d}", chains, loop_id)
            elif count == 1:
                loop = _constant_zero()
            else:
                loop = for_range(builder, count, f"{name}{d}", chains, loop_id)
        with loop as iv:
            if kind == "tile":
                tile_start[d] = builder.mul(iv, i64(tiles[d]))
            else:
                multi[d] = iv
                depths[d] = len(chains)
            yield from emit(k + 1)

    gen = emit(0)
    index = next(gen)
    try:
        yield index
    finally:
        for _ in gen:
            pass


@contextmanager
def _constant_zero():
    yield i64(0)


def fill_padding(b: ir.IRBuilder, array: IrArray) -> None:
    """Write the padding value over the padding of a padded buffer."""
    shape = array.shape
    if not shape.layout.is_padded or shape.buffer_element_count() == shape.element_count():
        return
    value = types.constant(shape.element_type, padding_scalar(shape))
    ety = types.memory_type(shape.element_type)
    with for_range(b, shape.buffer_element_count(), "pad") as i:
        types.store_element(b, value, b.gep(array.ptr, [i], inbounds=True, source_etype=ety),
                            shape.element_type)
