"""The shared-memory collective protocol as native code.

``xlac.runtime.shm_transport`` describes the protocol (a segment of control
lines and data slots, rounds, a barrier on per-device round counters, slot
halves used alternately).  Its waiting and its small collectives are native
code built here, so that a collective inside a compiled ``while`` loop costs
a few hundred nanoseconds of shared-memory traffic, not a Python call:

* ``xlac_shm_wait(state, mask, target)``: wait until every device of
  ``mask`` (a bit per global device id) has published a round ``>= target``:
  spin (``pause``), then yield the core, then sleep in short steps (devices
  may outnumber cores), watching the abort word and the deadline;
* ``xlac_shm_barrier(state, mask, signature)``: publish the next round and
  the signature of this collective, wait for the members, compare their
  signatures (a device running another collective is reported);
* ``xlac_shm_begin_piece(state)`` / ``xlac_shm_end_piece(state, mask)``:
  before a device writes its slot half, the devices that read it last must
  have moved on (they may belong to another group by now);
* ``xlac_shm_collective(state, op)``: an ``xlac_collective_op`` that fits one
  slot half done in one round — write, barrier, read: an all-reduce of up to
  ``state->small_bytes`` (every member reduces the whole buffer, in group
  order, so there is one barrier), an all-gather, reduce-scatter, all-to-all
  or collective-permute.  Returns 0, ``NOT_HANDLED`` (-1: too big, or a type
  or reduction with no native loop; nothing was touched) or an error status
  with ``state->error_*`` set for the caller to describe;
* ``xlac_shm_service(state, runtime_ctx, op)``: the ``collective`` service of
  generated code: ``xlac_shm_collective``, else ``state->fallback`` (the
  transport's Python pieces) for what it does not handle, and
  ``state->fail`` (which raises the error in Python terms) when it fails.

The reduction loops are the code generator's own elementwise ops
(:func:`~xlac.codegen.scalar_ops.emit_elementwise`), one per element type and
reduction, vectorised by LLVM.  :func:`make_service` binds the service to one
transport's state (a two-instruction function compiled per transport).
"""
from __future__ import annotations

import ctypes

from llvmlite import ir

from ..runtime import abi, native
from ..runtime.shm_transport import (ERROR_MISMATCH, ERROR_PEER_FAILED, ERROR_TIMEOUT, NOT_HANDLED, ShmState)
from ..shape import PrimitiveType as PT
from . import types
from .compile_cache import load_runtime_code
from .ir_text import final_text
from .jit import compile_ir
from . import native_function
from .native_function import I1, I8, I32, I64, PTR, VOID, Callee, cpu_relax, i32 as _i32, i64 as _i64, monotonic_ns
from .scalar_ops import emit_elementwise, emits

__all__ = ["make_service", "native_functions"]


#: Pauses before a waiting device starts to yield its core, then yields before
#: it sleeps (``SLEEP_NS`` a step).
SPIN_PAUSES = 4096
YIELDS = 4096
SLEEP_NS = 20_000

#: xlac_reduction -> the elementwise opcode that combines two values (pred:
#: add is or, multiply and min are and).
_COMBINE = {"sum": "add", "product": "multiply", "min": "minimum", "max": "maximum", "and": "and", "or": "or"}
_PRED_COMBINE = {"sum": "or", "product": "and", "min": "and", "max": "or", "and": "and", "or": "or"}
_TABLE_STRIDE = 8          # reduction numbers are < 8
_TABLE_SIZE = (max(abi.ELEMENT_TYPE_NUMBERS.values()) + 1) * _TABLE_STRIDE


class _ShmFunction(native_function.NativeFunction):
    """With this protocol's structures: ``ShmState`` fields and ``xlac_collective_op`` fields."""

    def at(self, state, name: str):
        """Address of ``state->name``."""
        return self.field(state, ShmState, name)

    def get(self, state, name: str, ty=I64):
        return self.b.load(self.at(state, name), typ=ty)

    def put(self, state, name: str, value) -> None:
        self.b.store(value, self.at(state, name))

    def op_field(self, op, name: str, ty):
        """``op->name`` of an ``xlac_collective_op``."""
        return self.load_field(op, abi.CollectiveOp, name, ty)


def _controls(f: _ShmFunction, state, device, column: int):
    """Address of word ``column`` of ``device``'s 64-byte control line."""
    b = f.b
    base = f.get(state, "controls", PTR)
    return b.gep(base, [b.add(b.mul(device, _i64(8)), _i64(column))], source_etype=I64)


def _in_mask(b, mask, device):
    return b.icmp_unsigned("!=", b.and_(b.lshr(mask, device), _i64(1)), _i64(0))


# -- waiting ----------------------------------------------------------------------------

def _emit_late(m: ir.Module) -> ir.Function:
    """``i64 xlac_shm_late(state, mask, target)``: the devices of ``mask`` whose
    published round is below ``target`` (a mask; 0 when all are there)."""
    f = _ShmFunction(m, "xlac_shm_late", I64, [PTR, I64, I64], "state mask target")
    state, mask, target = f.args
    b = f.b
    late = f.local(I64, _i64(0), "late")
    n = f.get(state, "num_devices")

    def check(d):
        with b.if_then(_in_mask(b, mask, d)):
            r = b.load_atomic(_controls(f, state, d, ShmState.ROUND), "acquire", 8, typ=I64)
            with b.if_then(b.icmp_signed("<", r, target)):
                b.store(b.or_(b.load(late), b.shl(_i64(1), d)), late)
    f.for_range(_i64(0), n, check, "d")
    b.ret(b.load(late))
    return f.fn


def _emit_wait(m: ir.Module, now, late_fn) -> ir.Function:
    """``i32 xlac_shm_wait(state, mask, target)``: 0 when every device of
    ``mask`` is at ``target``; ERROR_PEER_FAILED when the abort word is set,
    ERROR_TIMEOUT after ``state->timeout_ns`` (``state->error_*`` say which)."""
    pause = cpu_relax(m)
    sched_yield = ir.Function(m, ir.FunctionType(I32, []), "sched_yield")
    nanosleep = ir.Function(m, ir.FunctionType(I32, [PTR, PTR]), "nanosleep")
    f = _ShmFunction(m, "xlac_shm_wait", I32, [PTR, I64, I64], "state mask target")
    state, mask, target = f.args
    b = f.b
    spins = f.local(I64, _i64(0), "spins")
    deadline = f.local(I64, _i64(0), "deadline")
    sleep = b.alloca(ir.ArrayType(I64, 2))
    b.store(_i64(0), b.gep(sleep, [_i64(0), _i64(0)]))
    b.store(_i64(SLEEP_NS), b.gep(sleep, [_i64(0), _i64(1)]))
    loop = b.append_basic_block("poll")
    b.branch(loop)
    b.position_at_end(loop)
    missing = b.call(late_fn, [state, mask, target])
    f.ret_if(b.icmp_unsigned("==", missing, _i64(0)), _i32(0))
    count = b.add(b.load(spins), _i64(1))
    b.store(count, spins)
    with b.if_then(b.icmp_signed("<", count, _i64(SPIN_PAUSES)), likely=True):
        if pause is not None:
            b.call(pause, [])
        b.branch(loop)
    # Slow path: a failed device, the deadline, then give the core away.
    base = f.get(state, "base", PTR)
    abort = b.load_atomic(b.gep(base, [_i64(3)], source_etype=I64), "acquire", 8, typ=I64)
    with b.if_then(b.icmp_unsigned("!=", abort, _i64(0)), likely=False):
        _set_error(f, state, ERROR_PEER_FAILED, b.sub(abort, _i64(1)), target)
        b.ret(_i32(ERROR_PEER_FAILED))
    t = b.call(now, [])
    first = b.icmp_unsigned("==", b.load(deadline), _i64(0))
    with b.if_else(first) as (then, otherwise):
        with then:
            b.store(b.add(t, f.get(state, "timeout_ns")), deadline)
        with otherwise:
            with b.if_then(b.icmp_signed(">", t, b.load(deadline)), likely=False):
                _set_error(f, state, ERROR_TIMEOUT, missing, target)
                b.ret(_i32(ERROR_TIMEOUT))
    with b.if_else(b.icmp_signed("<", count, _i64(SPIN_PAUSES + YIELDS))) as (then, otherwise):
        with then:
            b.call(sched_yield, [])
        with otherwise:
            b.call(nanosleep, [sleep, ir.Constant(PTR, None)])
    b.branch(loop)
    return f.fn


def _set_error(f: _ShmFunction, state, kind: int, detail, target) -> None:
    f.put(state, "error_kind", _i64(kind))
    f.put(state, "error_detail", detail)
    f.put(state, "error_round", target)


def _emit_barrier(m: ir.Module, wait) -> ir.Function:
    """``i32 xlac_shm_barrier(state, mask, signature)``: the next round."""
    f = _ShmFunction(m, "xlac_shm_barrier", I32, [PTR, I64, I64], "state mask sig")
    state, mask, sig = f.args
    b = f.b
    me = f.get(state, "device")
    rnd = b.add(f.get(state, "round"), _i64(1))
    f.put(state, "round", rnd)
    column = b.add(_i64(ShmState.SIGNATURE), b.and_(rnd, _i64(1)))
    line = b.gep(f.get(state, "controls", PTR), [b.mul(me, _i64(8))], source_etype=I64)
    b.store(sig, b.gep(line, [column], source_etype=I64))
    # The signature and the data before the round: release (an exchange:
    # llvmlite's atomic store needs typed pointers).
    b.atomic_rmw("xchg", _controls(f, state, me, ShmState.ROUND), rnd, "release")
    status = b.call(wait, [state, mask, rnd])
    f.ret_if(b.icmp_signed("!=", status, _i32(0)), status)
    others = f.local(I64, _i64(0), "others")

    def compare(d):
        with b.if_then(_in_mask(b, mask, d)):
            theirs = b.load(b.gep(_controls(f, state, d, 0), [column], source_etype=I64), typ=I64)
            with b.if_then(b.icmp_unsigned("!=", theirs, sig), likely=False):
                b.store(b.or_(b.load(others), b.shl(_i64(1), d)), others)
    f.for_range(_i64(0), f.get(state, "num_devices"), compare, "d")
    bad = b.load(others)
    with b.if_then(b.icmp_unsigned("!=", bad, _i64(0)), likely=False):
        _set_error(f, state, ERROR_MISMATCH, bad, rnd)
        b.ret(_i32(ERROR_MISMATCH))
    b.ret(_i32(0))
    return f.fn


def _emit_pieces(m: ir.Module, wait) -> tuple:
    """``xlac_shm_begin_piece(state)`` (the next slot half; waits until its last
    readers moved on) and ``xlac_shm_end_piece(state, readers)``."""
    f = _ShmFunction(m, "xlac_shm_begin_piece", I32, [PTR], "state")
    (state,) = f.args
    b = f.b
    pieces = b.add(f.get(state, "pieces"), _i64(1))
    f.put(state, "pieces", pieces)
    parity = b.and_(pieces, _i64(1))
    readers = b.load(b.gep(f.at(state, "readers"), [parity], source_etype=I64), typ=I64)
    after = b.load(b.gep(f.at(state, "readers_round"), [parity], source_etype=I64), typ=I64)
    b.ret(b.call(wait, [state, readers, after]))
    begin = f.fn

    f = _ShmFunction(m, "xlac_shm_end_piece", VOID, [PTR, I64], "state readers")
    state, readers = f.args
    b = f.b
    parity = b.and_(f.get(state, "pieces"), _i64(1))
    b.store(readers, b.gep(f.at(state, "readers"), [parity], source_etype=I64))
    # They have read it once they publish the round after this one.
    b.store(b.add(f.get(state, "round"), _i64(1)), b.gep(f.at(state, "readers_round"), [parity],
                                                           source_etype=I64))
    b.ret_void()
    return begin, f.fn


# -- reductions -------------------------------------------------------------------------

def _emit_reductions(m: ir.Module) -> ir.GlobalVariable:
    """``void reduce(dst, a, b, nbytes)`` per (element type, reduction) the code
    generator emits; a table of them indexed ``type * 8 + reduction``."""
    table = [ir.Constant(PTR, None)] * _TABLE_SIZE
    made: dict = {}
    for pt, number in abi.ELEMENT_TYPE_NUMBERS.items():
        if not pt.is_array:
            continue
        for red, red_number in abi.REDUCTIONS.items():
            if red == "none":
                continue
            opcode = (_PRED_COMBINE if pt is PT.PRED else _COMBINE)[red]
            if not emits(opcode, pt):
                continue
            if (pt, opcode) not in made:
                made[pt, opcode] = _emit_reduction(m, pt, opcode)
            table[number * _TABLE_STRIDE + red_number] = made[pt, opcode]
    g = ir.GlobalVariable(m, ir.ArrayType(PTR, _TABLE_SIZE), "xlac_shm_reductions")
    g.initializer = ir.Constant(ir.ArrayType(PTR, _TABLE_SIZE), table)
    g.global_constant = True
    g.linkage = "internal"
    return g


def _emit_sizes(m: ir.Module) -> ir.GlobalVariable:
    """Bytes per element, indexed by element type number (0: not an array type)."""
    sizes = [0] * (max(abi.ELEMENT_TYPE_NUMBERS.values()) + 1)
    for pt, number in abi.ELEMENT_TYPE_NUMBERS.items():
        if pt.is_array:
            sizes[number] = pt.byte_size
    ty = ir.ArrayType(I64, len(sizes))
    g = ir.GlobalVariable(m, ty, "xlac_shm_element_bytes")
    g.initializer = ir.Constant(ty, sizes)
    g.global_constant = True
    g.linkage = "internal"
    return g


def _emit_reduction(m: ir.Module, pt: PT, opcode: str) -> ir.Function:
    name = f"xlac_shm_{opcode}_{pt.value}"
    f = _ShmFunction(m, name, VOID, [PTR, PTR, PTR, I64], "dst a b nbytes")
    dst, x, y, nbytes = f.args
    f.fn.linkage = "internal"
    b = f.b
    ty = types.memory_type(pt)
    count = b.udiv(nbytes, _i64(pt.byte_size))

    def body(i):
        u = types.load_element(b, b.gep(x, [i], source_etype=ty), pt)
        v = types.load_element(b, b.gep(y, [i], source_etype=ty), pt)
        types.store_element(b, emit_elementwise(b, opcode, [u, v], [pt, pt], pt), b.gep(dst, [i], source_etype=ty),
                            pt)
    f.for_range(_i64(0), count, body, "i")
    b.ret_void()
    return f.fn


# -- one-round collectives ----------------------------------------------------------------

class _Group:
    """This device's group in ``op``: its members (a list of global device ids:
    the op's row holding this device, else ``state->everyone``), their count,
    their mask and this device's index among them; ``found`` is 0 when no
    row holds this device."""

    def __init__(self, f: _ShmFunction, state, op):
        b = f.b
        self.f = f
        me = f.get(state, "device")
        groups = f.op_field(op, "groups", PTR)
        num_groups = b.sext(f.op_field(op, "num_groups", I32), I64)
        size = b.sext(f.op_field(op, "group_size", I32), I64)
        explicit = b.and_(b.icmp_unsigned("!=", groups, ir.Constant(PTR, None)),
                          b.icmp_signed(">", num_groups, _i64(0)))
        self.list = f.local(PTR, f.get(state, "everyone", PTR), "group")
        self.size = f.local(I64, f.get(state, "num_devices"), "group_size")
        self.index = f.local(I64, me, "group_index")
        self.found = f.local(I1, ir.Constant(I1, 1), "found")
        with b.if_then(explicit):
            b.store(size, self.size)
            b.store(ir.Constant(I1, 0), self.found)

            def scan(k):
                with b.if_then(b.icmp_unsigned("==", b.load(b.gep(groups, [k], source_etype=I64), typ=I64), me)):
                    start = b.mul(b.sdiv(k, size), size)
                    b.store(b.gep(groups, [start], source_etype=I64), self.list)
                    b.store(b.sub(k, start), self.index)
                    b.store(ir.Constant(I1, 1), self.found)
            f.for_range(_i64(0), b.mul(num_groups, size), scan, "g")
        self.mask = f.local(I64, _i64(0), "mask")

        def add(k):
            b.store(b.or_(b.load(self.mask), b.shl(_i64(1), self.member(k))), self.mask)
        f.for_range(_i64(0), b.load(self.size), add, "m")

    def member(self, k):
        b = self.f.b
        return b.load(b.gep(b.load(self.list), [k], source_etype=I64), typ=I64)


_FNV_OFFSET, _FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3


def _emit_signature(m: ir.Module) -> ir.Function:
    """``i64 xlac_shm_signature(op)``: FNV-1a of the op's kind, type, reduction,
    channel, sizes and instruction name — equal on every device running the
    same collective."""
    f = _ShmFunction(m, "xlac_shm_signature", I64, [PTR], "op")
    (op,) = f.args
    f.fn.linkage = "internal"
    b = f.b
    h = f.local(I64, ir.Constant(I64, _FNV_OFFSET - (1 << 64)), "h")

    def mix(v):
        b.store(b.mul(b.xor(b.load(h), v), _i64(_FNV_PRIME)), h)
    for name, ty in (("kind", I32), ("element_type", I32), ("reduction", I32)):
        mix(b.zext(f.op_field(op, name, ty), I64))
    for name in ("channel_id", "input_bytes", "output_bytes"):
        mix(f.op_field(op, name, I64))
    text = f.op_field(op, "instruction", PTR)
    with b.if_then(b.icmp_unsigned("!=", text, ir.Constant(PTR, None))):
        pos = f.local(I64, _i64(0), "pos")
        head = b.append_basic_block("name")
        done = b.append_basic_block("name.done")
        b.branch(head)
        b.position_at_end(head)
        ch = b.load(b.gep(text, [b.load(pos)], source_etype=I8), typ=I8)
        with b.if_then(b.icmp_unsigned("==", ch, ir.Constant(I8, 0))):
            b.branch(done)
        mix(b.zext(ch, I64))
        b.store(b.add(b.load(pos), _i64(1)), pos)
        b.branch(head)
        b.position_at_end(done)
    b.ret(b.load(h))
    return f.fn


class _Natives:
    """The declared intrinsics and the protocol's functions, for the collective."""

    def __init__(self, m: ir.Module):
        self.memcpy = ir.Function(m, ir.FunctionType(VOID, [PTR, PTR, I64, I1]), "llvm.memcpy.p0.p0.i64")
        self.memset = ir.Function(m, ir.FunctionType(VOID, [PTR, I8, I64, I1]), "llvm.memset.p0.i64")
        now = monotonic_ns(m)
        self.wait = _emit_wait(m, now, _emit_late(m))
        self.barrier = _emit_barrier(m, self.wait)
        self.begin, self.end = _emit_pieces(m, self.wait)
        self.signature = _emit_signature(m)
        self.reductions = _emit_reductions(m)
        self.sizes = _emit_sizes(m)


def _emit_collective(m: ir.Module, nat: _Natives) -> ir.Function:
    """``i32 xlac_shm_collective(state, op)``: one op in one round, or NOT_HANDLED."""
    f = _ShmFunction(m, "xlac_shm_collective", I32, [PTR, PTR], "state op")
    state, op = f.args
    b = f.b
    kind = f.op_field(op, "kind", I32)
    et = b.zext(f.op_field(op, "element_type", I32), I64)
    red = b.zext(f.op_field(op, "reduction", I32), I64)
    inb, outb = f.op_field(op, "input_bytes", I64), f.op_field(op, "output_bytes", I64)
    src, dst = f.op_field(op, "input", PTR), f.op_field(op, "output", PTR)
    half = f.get(state, "half_bytes")
    me = f.get(state, "device")
    group = _Group(f, state, op)
    f.ret_if(b.not_(b.load(group.found)), _i32(NOT_HANDLED))
    n = b.load(group.size)
    index = b.load(group.index)

    # The reduction loop (null: none for this type and reduction).
    slot = b.add(b.mul(et, _i64(_TABLE_STRIDE)), red)
    in_table = b.and_(b.icmp_unsigned("<", slot, _i64(_TABLE_SIZE)), b.icmp_unsigned("<", red, _i64(_TABLE_STRIDE)))
    reduce_fn = f.local(PTR, ir.Constant(PTR, None), "reduce")
    with b.if_then(in_table):
        b.store(b.load(b.gep(nat.reductions, [_i64(0), slot]), typ=PTR), reduce_fn)
    has_reduce = b.icmp_unsigned("!=", b.load(reduce_fn), ir.Constant(PTR, None))

    # What fits one round (sizes as each kind requires them; else Python's pieces explain).
    fits_half = b.icmp_signed("<=", inb, half)
    small = b.icmp_signed("<=", inb, f.get(state, "small_bytes"))
    fits = {
        "all-reduce": b.and_(fits_half, b.and_(has_reduce, b.icmp_signed("==", outb, inb))),
        "all-gather": b.and_(fits_half, b.icmp_signed("==", outb, b.mul(inb, n))),
        "reduce-scatter": b.and_(b.and_(fits_half, has_reduce), b.icmp_signed("==", inb, b.mul(outb, n))),
        "all-to-all": b.and_(b.and_(fits_half, b.icmp_signed("==", outb, inb)),
                             b.icmp_signed("==", b.srem(inb, n), _i64(0))),
        "collective-permute": b.and_(fits_half, b.icmp_signed("==", outb, inb)),
    }
    ok = ir.Constant(I1, 0)
    for name, cond in fits.items():
        ok = b.select(b.icmp_signed("==", kind, _i32(abi.COLLECTIVE_KINDS[name])), cond, ok)
    f.ret_if(b.not_(ok), _i32(NOT_HANDLED))

    # A permute meets every device (any of them may read this one's half).
    n_dev = f.get(state, "num_devices")
    everyone = b.select(b.icmp_signed(">=", n_dev, _i64(64)), _i64(-1), b.sub(b.shl(_i64(1), n_dev), _i64(1)))
    is_permute = b.icmp_signed("==", kind, _i32(abi.COLLECTIVE_KINDS["collective-permute"]))
    mask = b.select(is_permute, everyone, b.load(group.mask))

    status = b.call(nat.begin, [state])
    f.ret_if(b.icmp_signed("!=", status, _i32(0)), status)
    parity = b.and_(f.get(state, "pieces"), _i64(1))
    slots, slot_bytes = f.get(state, "slots", PTR), f.get(state, "slot_bytes")

    def half_of(device, offset=None):
        at = b.add(b.mul(device, slot_bytes), b.mul(parity, half))
        return b.gep(slots, [at if offset is None else b.add(at, offset)], source_etype=I8)
    false = ir.Constant(I1, 0)
    # A split all-reduce (see below) leaves its own chunk out: it reads it from ``src``.
    is_all_reduce = b.icmp_signed("==", kind, _i32(abi.COLLECTIVE_KINDS["all-reduce"]))
    split = b.and_(is_all_reduce, b.not_(b.or_(small, b.icmp_signed("==", n, _i64(1)))))
    item = b.load(b.gep(nat.sizes, [_i64(0), b.select(split, et, _i64(0))]), typ=I64)
    count = b.udiv(inb, b.select(split, item, _i64(1)))

    def bound(k):
        """Byte offset of chunk ``k`` of a split all-reduce."""
        return b.mul(b.udiv(b.mul(count, k), n), item)
    with b.if_else(split) as (own_left_out, whole):
        with own_left_out:
            lo, hi = bound(index), bound(b.add(index, _i64(1)))
            b.call(nat.memcpy, [half_of(me), src, lo, false])
            b.call(nat.memcpy, [half_of(me, hi), b.gep(src, [hi], source_etype=I8), b.sub(inb, hi), false])
        with whole:
            b.call(nat.memcpy, [half_of(me), src, inb, false])
    status = b.call(nat.barrier, [state, mask, b.call(nat.signature, [op])])
    f.ret_if(b.icmp_signed("!=", status, _i32(0)), status)

    def reduce_into(offset, nbytes):
        """dst = the members' halves (from ``offset``) reduced in group order."""
        fn = Callee(b.load(reduce_fn), ir.FunctionType(VOID, [PTR, PTR, PTR, I64]))
        with b.if_else(b.icmp_signed("==", n, _i64(1))) as (one, more):
            with one:
                b.call(nat.memcpy, [dst, half_of(group.member(_i64(0)), offset), nbytes, false])
            with more:
                b.call(fn, [dst, half_of(group.member(_i64(0)), offset), half_of(group.member(_i64(1)), offset),
                            nbytes])
                f.for_range(_i64(2), n, lambda k: b.call(fn, [dst, dst, half_of(group.member(k), offset), nbytes]))

    def gather():
        f.for_range(_i64(0), n, lambda k: b.call(nat.memcpy, [b.gep(dst, [b.mul(k, inb)], source_etype=I8),
                                                              half_of(group.member(k)), inb, false]))

    def all_to_all():
        block = b.sdiv(inb, n)
        f.for_range(_i64(0), n, lambda k: b.call(
            nat.memcpy, [b.gep(dst, [b.mul(k, block)], source_etype=I8),
                         half_of(group.member(k), b.mul(index, block)), block, false]))

    def permute():
        pairs = f.op_field(op, "pairs", PTR)
        source = f.local(I64, _i64(-1), "source")

        def look(p):
            target = b.load(b.gep(pairs, [b.add(b.mul(p, _i64(2)), _i64(1))], source_etype=I64), typ=I64)
            with b.if_then(b.icmp_unsigned("==", target, me)):
                b.store(b.load(b.gep(pairs, [b.mul(p, _i64(2))], source_etype=I64), typ=I64), source)
        with b.if_then(b.icmp_unsigned("!=", pairs, ir.Constant(PTR, None))):
            f.for_range(_i64(0), f.op_field(op, "num_pairs", I64), look, "p")
        s = b.load(source)
        with b.if_else(b.icmp_signed("<", s, _i64(0))) as (none, some):
            with none:
                b.call(nat.memset, [dst, ir.Constant(I8, 0), outb, false])
            with some:
                b.call(nat.memcpy, [dst, half_of(s), inb, false])

    def split_all_reduce():
        """A bigger all-reduce: member k reduces chunk k (its own from its
        input) into its half, a second round, then every chunk is copied out."""
        lo, hi = bound(index), bound(b.add(index, _i64(1)))
        width = b.sub(hi, lo)
        fn = Callee(b.load(reduce_fn), ir.FunctionType(VOID, [PTR, PTR, PTR, I64]))
        mine = half_of(me, lo)

        def part(k):
            own = b.icmp_unsigned("==", group.member(k), me)
            return b.select(own, b.gep(src, [lo], source_etype=I8), half_of(group.member(k), lo))
        with b.if_then(b.icmp_signed(">", width, _i64(0))):
            b.call(fn, [mine, part(_i64(0)), part(_i64(1)), width])
            f.for_range(_i64(2), n, lambda k: b.call(fn, [mine, mine, part(k), width]))
        status = b.call(nat.barrier, [state, mask, b.call(nat.signature, [op])])
        f.ret_if(b.icmp_signed("!=", status, _i32(0)), status)

        def copy_out(k):
            a, z = bound(k), bound(b.add(k, _i64(1)))
            b.call(nat.memcpy, [b.gep(dst, [a], source_etype=I8), half_of(group.member(k), a), b.sub(z, a), false])
        f.for_range(_i64(0), n, copy_out)

    def all_reduce():
        # Small: every member reduces the whole buffer (one round); else split.
        with b.if_else(split) as (in_chunks, whole):
            with in_chunks:
                split_all_reduce()
            with whole:
                reduce_into(_i64(0), inb)

    reads = {
        "all-reduce": all_reduce,
        "all-gather": gather,
        "reduce-scatter": lambda: reduce_into(b.mul(index, outb), outb),
        "all-to-all": all_to_all,
        "collective-permute": permute,
    }
    after = b.append_basic_block("read.done")
    switch = b.switch(kind, after)
    for name, emit in reads.items():
        block = b.append_basic_block(f"read.{name}")
        switch.add_case(_i32(abi.COLLECTIVE_KINDS[name]), block)
        b.position_at_end(block)
        emit()
        b.branch(after)
    b.position_at_end(after)
    b.call(nat.end, [state, mask])
    b.ret(_i32(0))
    return f.fn


def _emit_service(m: ir.Module, collective) -> ir.Function:
    """``i32 xlac_shm_service(state, runtime_ctx, op)``."""
    f = _ShmFunction(m, "xlac_shm_service", I32, [PTR, PTR, PTR], "state runtime_ctx op")
    state, runtime_ctx, op = f.args
    b = f.b
    status = b.call(collective, [state, op])
    f.ret_if(b.icmp_signed("==", status, _i32(0)), status)
    service = ir.FunctionType(I32, [PTR, PTR])
    with b.if_then(b.icmp_signed("==", status, _i32(NOT_HANDLED))):
        b.ret(b.call(Callee(f.get(state, "fallback", PTR), service), [runtime_ctx, op]))
    b.ret(b.call(Callee(f.get(state, "fail", PTR), service), [state, op]))
    return f.fn


def build_module() -> ir.Module:
    """The protocol's LLVM module."""
    m = ir.Module("xlac_shm")
    nat = _Natives(m)
    _emit_service(m, _emit_collective(m, nat))
    return m


#: The exported functions and their ctypes types.
_EXPORTS = {
    "xlac_shm_wait": ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64),
    "xlac_shm_barrier": ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64),
    "xlac_shm_begin_piece": ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p),
    "xlac_shm_end_piece": ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64),
    "xlac_shm_collective": ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p),
    "xlac_shm_service": None,           # an address: generated code calls it through a trampoline
}


def native_functions() -> dict:
    """name -> ctypes function (``xlac_shm_service``: its address), compiled once
    per process (``compile_cache.load_runtime_code``)."""
    jf = load_runtime_code("xlac_shm_collective", lambda: final_text(build_module()))
    out = {"_jit": jf}
    for name, proto in _EXPORTS.items():
        address = jf.engine.get_function_address(name)
        out[name] = address if proto is None else proto(address)
    return out




def make_service(state_address: int):
    """The ``collective`` service (``abi.COLLECTIVE``) of the transport whose
    ``ShmState`` is at ``state_address``: ``xlac_shm_service`` with the state
    bound (a two-instruction function compiled here, kept alive by the result)."""
    service = native.get("shm_collective")["xlac_shm_service"]
    text = (f"define i32 @xlac_shm_bound(ptr %runtime_ctx, ptr %op) {{\n"
            f"  %s = call i32 inttoptr (i64 {service} to ptr)(ptr inttoptr (i64 {state_address} to ptr), "
            f"ptr %runtime_ctx, ptr %op)\n"
            f"  ret i32 %s\n}}\n")
    jf = compile_ir(text, "xlac_shm_bound", speed_level=1)
    fn = abi.COLLECTIVE(jf.address)
    fn._jit = jf
    return fn


native.provide("shm_collective", native_functions)
native.provide("shm_bind", lambda: make_service)
