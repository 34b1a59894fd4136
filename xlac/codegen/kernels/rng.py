"""``rng-get-and-update-state``: the generator state of a compiled program.

Each instruction gets a state of its own: an internal global ``[2 x i64]``
(low, high words of a 128-bit number) in the program's code, starting at
``xlac.hlo.rng.RNG_STATE_INITIAL`` (XLA:CPU's ``RngGetAndUpdateStateThunk``
keeps one per instruction the same way).  The kernel writes the state to its
u64[2] result and adds ``delta`` to it with atomic adds, so concurrent calls
of the program each get a state of their own: the low word with one atomic
add, its carry into the high word with another (only two calls racing across
a carry out of the low word, after 2**64 words of output, could see a high
word without the other's carry).

The state lives as long as the code: a JIT executable keeps it from call to
call (executables of the same module text share the code, so the state too,
through the in-memory compile cache); ``xlac.clear_caches()`` then a new
``xlac.jit``, a new process, or loading from the disk cache start again from
the initial value.  In an AOT object it is a private variable of the object,
shared by every call in the process.
"""
from __future__ import annotations

from llvmlite import ir

from ...hlo import rng
from ..emitter import KernelContext
from ..ir_array import I64, Index, i64
from ..kernel_choice import KernelCandidate

_STATE_TYPE = ir.ArrayType(I64, 2)
_M64 = (1 << 64) - 1


def _state_global(ctx: KernelContext) -> ir.GlobalVariable:
    me = ctx.me
    g = ir.GlobalVariable(me.llvm, _STATE_TYPE, me.unique_name(f"rng_state.{ctx.inst.name}"))
    g.initializer = ir.Constant(_STATE_TYPE, [i64(rng.RNG_STATE_INITIAL & _M64), i64(rng.RNG_STATE_INITIAL >> 64)])
    g.linkage = "internal"
    g.align = 16
    return g


def _emit_get_and_update(ctx: KernelContext) -> None:
    b = ctx.b
    delta = int(str(ctx.inst.attrs["delta"]))
    g = _state_global(ctx)
    low_ptr = b.gep(g, [i64(0), i64(0)], inbounds=True, source_etype=_STATE_TYPE)
    high_ptr = b.gep(g, [i64(0), i64(1)], inbounds=True, source_etype=_STATE_TYPE)
    low = b.atomic_rmw("add", low_ptr, i64(delta & _M64), "monotonic")
    carry = b.zext(b.icmp_unsigned("<", b.add(low, i64(delta & _M64)), low), I64)
    high = b.atomic_rmw("add", high_ptr, b.add(carry, i64((delta >> 64) & _M64)), "monotonic")
    (out,) = ctx.output_arrays()
    out.write(b, Index([i64(0)]), low)
    out.write(b, Index([i64(1)]), high)


#: ``rng-get-and-update-state``: the instruction's state, then advance it by ``delta``.
RNG_GET_AND_UPDATE_STATE = KernelCandidate("rng-get-and-update-state", _emit_get_and_update)
