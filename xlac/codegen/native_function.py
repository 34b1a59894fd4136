"""Building the runtime's hand-written native functions with llvmlite.

The shared-memory collective protocol (``shm_collective``) and the thread
pool (``thread_pool``) are small C-like functions written with llvmlite's
builder; :class:`NativeFunction` gives them what C would: locals, fields of
a ``ctypes.Structure`` laid out as Python declares it, a counted loop, early
returns, and indirect calls through function pointers (:class:`Callee`).
"""
from __future__ import annotations

import ctypes
import platform

from llvmlite import ir

from .loops import dyn_range

__all__ = ["NativeFunction", "Callee", "I1", "I8", "I32", "I64", "PTR", "VOID", "i32", "i64", "cpu_relax",
           "monotonic_ns", "SYS_FUTEX", "SYS_GETTID"]

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()
VOID = ir.VoidType()


def i64(v: int) -> ir.Constant:
    return ir.Constant(I64, v)


def i32(v: int) -> ir.Constant:
    return ir.Constant(I32, v)


#: Linux's futex system call number on this machine (None: no futex; sleep instead).
SYS_FUTEX = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98}.get(platform.machine().lower())
#: ... and gettid's.
SYS_GETTID = {"x86_64": 186, "amd64": 186, "aarch64": 178, "arm64": 178}.get(platform.machine().lower())


def cpu_relax(module: ir.Module):
    """A function ``void()`` that tells the CPU this is a spin-wait (x86's
    ``pause``; nothing elsewhere), declared in ``module``; None when there is none."""
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686"):
        return None
    name = "llvm.x86.sse2.pause"
    return module.globals.get(name) or ir.Function(module, ir.FunctionType(VOID, []), name)


def monotonic_ns(module: ir.Module) -> ir.Function:
    """``int64_t xlac_monotonic_ns(void)`` (``clock_gettime(CLOCK_MONOTONIC)``), defined in ``module``."""
    name = "xlac_monotonic_ns"
    if name in module.globals:
        return module.globals[name]
    clock = ir.Function(module, ir.FunctionType(I32, [I32, PTR]), "clock_gettime")
    f = NativeFunction(module, name, I64, [], internal=True)
    b = f.b
    ts = b.alloca(ir.ArrayType(I64, 2))
    b.call(clock, [i32(1), ts])         # CLOCK_MONOTONIC
    sec = b.load(b.gep(ts, [i64(0), i64(0)]), typ=I64)
    nsec = b.load(b.gep(ts, [i64(0), i64(1)]), typ=I64)
    b.ret(b.add(b.mul(sec, i64(1_000_000_000)), nsec))
    return f.fn


class Callee:
    """An indirect callee for ``IRBuilder.call``: a pointer value and its function type."""

    def __init__(self, value, fnty: ir.FunctionType):
        self.value, self.function_type = value, fnty
        self.type = PTR

    def get_reference(self):
        return self.value.get_reference()


class NativeFunction:
    """A function being built: ``fn``, its builder ``b``, its ``args``."""

    def __init__(self, module: ir.Module, name: str, ret, args: list, names: str = "", internal: bool = False):
        self.fn = ir.Function(module, ir.FunctionType(ret, args), name)
        if internal:
            self.fn.linkage = "internal"
        self.b = ir.IRBuilder(self.fn.append_basic_block("entry"))
        self.args = self.fn.args
        for a, n in zip(self.args, names.split()):
            a.name = n

    def local(self, ty, init, name: str):
        """A stack slot (in the entry block) initialised to ``init`` here."""
        b = self.b
        with b.goto_block(self.fn.entry_basic_block):
            b.position_at_start(self.fn.entry_basic_block)
            slot = b.alloca(ty, name=name)
        b.store(init, slot)
        return slot

    def field(self, ptr, struct: type[ctypes.Structure], name: str):
        """Address of ``ptr->name``, ``ptr`` pointing at a ``struct``."""
        return self.b.gep(ptr, [i64(getattr(struct, name).offset)], source_etype=I8)

    def load_field(self, ptr, struct, name: str, ty=I64, ordering: str | None = None):
        addr = self.field(ptr, struct, name)
        if ordering is None:
            return self.b.load(addr, typ=ty)
        return self.b.load_atomic(addr, ordering, 8 if ty is PTR else ty.width // 8, typ=ty)

    def store_field(self, ptr, struct, name: str, value) -> None:
        self.b.store(value, self.field(ptr, struct, name))

    def for_range(self, lo, hi, body, name: str = "k") -> None:
        """``for (k = lo; k < hi; ++k) body(k)`` (i64; no trip when ``lo >= hi``)."""
        with dyn_range(self.b, lo, hi, name=name) as k:
            body(k)

    def loop(self, name: str = "loop"):
        """A block to branch back to: ``head = f.loop(); ...; b.branch(head)``."""
        head = self.b.append_basic_block(name)
        self.b.branch(head)
        self.b.position_at_end(head)
        return head

    def ret_if(self, cond, value=None) -> None:
        """``if (cond) return value;``"""
        with self.b.if_then(cond, likely=False):
            if value is None:
                self.b.ret_void()
            else:
                self.b.ret(value)
