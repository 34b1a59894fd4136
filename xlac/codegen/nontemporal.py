"""Non-temporal stores for the big results of loop kernels.

A loop kernel writing a big result reads every line of it from memory before
overwriting it (the cache's write-allocate): a third of the traffic of a kernel
that reads one array and writes one.  x86's non-temporal vector stores skip that
read, but LLVM's loop vectoriser will not vectorise a store marked
``!nontemporal`` unless the store is known to be aligned to the vector size, and
the elemental emitter's stores are scalar (the vectoriser makes the vectors).
So the work is split in two:

1. The emitter (``emitter._emit_nontemporal_versions``) emits the kernel's
   inner loop twice (``loops.loop_nest_versions``), chosen per row by the
   row's address (:func:`row_aligned`).  When it is 64-byte aligned (always,
   for the JIT's pooled results; not promised for AOT callers' or donated
   buffers) an ``llvm.assume`` tells LLVM so (:func:`assume_aligned`), and the
   result stores carry the access group :func:`group` (the module's named
   metadata ``!xlac.nontemporal`` points at it) besides the parallel loop's
   group.  What is hoisted in front of the inner loop (row reductions) is
   emitted once, for both versions.  The JIT promises aligned buffers (its
   pool's blocks and temp arena are; ``lower(aligned_results=True)``), so
   its code has only the non-temporal version and no test; the first call
   that donates an unaligned argument to such a result compiles the module
   again with both versions (``Executable._general_entry``).  Ahead-of-time
   objects always have both.
2. After LLVM's optimisation, :func:`mark_stores` adds ``!nontemporal`` to the
   vector stores of that group that LLVM proved aligned to their size, or to a
   cache line for a store of whole lines (LLVM may store an unrolled loop's
   vectors as one wider vector, ``<64 x float>`` with ``align 64``: four
   aligned 64-byte stores once legalised).  The rewrite goes through the
   module's text: llvmlite cannot set metadata on a parsed module.

Measured on layernorm 8192x1024 f32 (2 threads): 1.45 -> 0.96 ms; compiling
the second inner loop costs about 3 ms of its ~40 (duplicating the whole nest
cost 15).
"""
from __future__ import annotations

import re

from llvmlite import ir

from ..shape import PrimitiveType as PT
from . import types
from .emission import context_of
from .ir_array import Index, IrArray, i64
from .loops import new_access_group

#: Results at least this large are written with non-temporal stores (smaller
#: ones may still be in cache when their consumer reads them, and the store
#: buffer's write-combining costs more than the read it saves while input and
#: output fit the last-level cache: f64 -> f32 -> f64 of 1024 rows of 1024 on
#: the 2-core AMD EPYC, 32 MiB of L3, 0.41 ms with them, 0.33 without; 2048
#: rows 0.87 either way; 4096 rows 1.98 against 2.50).
MIN_BYTES = 16 << 20
NAMED = "xlac.nontemporal"
_TYPES = {PT.BF16, PT.F16, PT.S16, PT.U16, PT.F32, PT.F64, PT.S32, PT.U32, PT.S64, PT.U64}


def eligible(inst, outputs: list, loop_shape) -> bool:
    """Whether loop kernel ``inst`` writing ``outputs`` over ``loop_shape`` gets
    the non-temporal version: one big dense result of a 2-, 4- or 8-byte type whose
    rows (minor dimension) are whole cache lines, so every vector store can be
    aligned."""
    if len(outputs) != 1:
        return False
    shape = outputs[0].shape
    if shape.element_type not in _TYPES or shape.layout.padded_dimensions \
            or tuple(shape.dimensions) != tuple(loop_shape.dimensions) \
            or tuple(shape.layout.minor_to_major) != tuple(loop_shape.layout.minor_to_major):
        return False
    size = shape.element_type.byte_size
    if shape.element_count() * size < MIN_BYTES:
        return False
    minor = shape.layout.minor_to_major[0] if shape.rank else None
    return minor is not None and shape.dimensions[minor] * size % 64 == 0


def row_aligned(b: ir.IRBuilder, array: IrArray, offset: ir.Value) -> ir.Value:
    """``i1``: ``array`` and its element at linear ``offset`` (a row's first)
    are both 64-byte aligned, so :func:`assume_aligned` may be made.

    The addresses go through an empty inline-asm copy: LLVM would otherwise
    see that, rows being whole cache lines, the test is the same for every row
    and unswitch the row loop on it, duplicating the whole nest (the row
    reductions in front of the inner loop too) instead of the inner loop."""
    i64t = ir.IntType(64)
    row = b.gep(array.ptr, [offset], inbounds=True, source_etype=types.memory_type(array.shape.element_type))
    both = b.or_(b.ptrtoint(array.ptr, i64t), b.ptrtoint(row, i64t))
    opaque = ir.InlineAsm(ir.FunctionType(i64t, [i64t]), "", "=r,0")
    return b.icmp_unsigned("==", b.and_(b.call(opaque, [both]), i64(63)), i64(0))


#: Stands for ``llvm.assume(true) ["align"(ptr, 64)]`` until :func:`prepare`
#: (llvmlite's IR builder has no operand bundles).
_ASSUME = "xlac.assume_aligned64"


def assume_aligned(b: ir.IRBuilder, array: IrArray) -> None:
    """Tell LLVM that ``array`` is 64-byte aligned (an ``llvm.assume`` with an
    ``align`` bundle; the caller is on the branch where :func:`row_aligned`
    held).  A branch condition alone, or ``llvm.ptrmask``, which LLVM folds
    away under that condition, left the vectorised stores at ``align 4``."""
    fn = b.module.globals.get(_ASSUME)
    if fn is None:
        fn = ir.Function(b.module, ir.FunctionType(ir.VoidType(), [ir.PointerType()]), _ASSUME)
    b.call(fn, [array.ptr])


_ASSUME_CALL = re.compile(r'call void @"?' + re.escape(_ASSUME) + r'"?\(ptr (%[^)]+)\)')
_ASSUME_DECL = re.compile(r'^declare void @"?' + re.escape(_ASSUME) + r'"?\(ptr[^)]*\).*$', re.M)


def prepare(text: str) -> str:
    """The module text with the alignment assumptions of :func:`assume_aligned`
    written as LLVM wants them (before parsing)."""
    if _ASSUME not in text:
        return text
    text = _ASSUME_DECL.sub("", text)
    text = _ASSUME_CALL.sub(r'call void @llvm.assume(i1 true) [ "align"(ptr \1, i64 64) ]', text)
    if "declare void @llvm.assume(i1" not in text:
        text += "\ndeclare void @llvm.assume(i1)\n"
    return text


def group(module: ir.Module):
    """The module's access group for non-temporal stores (made on first use and
    named by ``!xlac.nontemporal``)."""
    ctx = context_of(module)
    if ctx.nontemporal_group is None:
        ctx.nontemporal_group = new_access_group(module)
        module.add_named_metadata(NAMED, ctx.nontemporal_group)
    return ctx.nontemporal_group


def write(b: ir.IRBuilder, array: IrArray, index: Index, value) -> None:
    """``array.write`` whose store joins :func:`group` as well as the enclosing
    parallel loop's group."""
    start = len(b.block.instructions)
    array.write(b, index, value)
    open_groups = context_of(b.module).access_groups
    groups = [open_groups[-1]] if open_groups else []
    node = b.module.add_metadata(groups + [group(b.module)]) if groups else group(b.module)
    for inst in b.block.instructions[start:]:
        if inst.opname == "store":
            inst.set_metadata("llvm.access.group", node)


_NAMED_RE = re.compile(r"^!" + re.escape(NAMED) + r" = !\{!(\d+)\}", re.M)
_NODE_RE = re.compile(r"^!(\d+) = (?:distinct )?!\{(.*)\}$", re.M)
_STORE_RE = re.compile(r"^\s*store <(\d+) x (half|bfloat|float|double|i16|i32|i64)> .*, align (\d+)(?:,|$).*"
                       r"!llvm\.access\.group !(\d+)")
_BYTES = {"half": 2, "bfloat": 2, "i16": 2, "float": 4, "double": 8, "i32": 4, "i64": 8}


def mark_stores(text: str) -> str | None:
    """The optimised module ``text`` with ``!nontemporal`` on the vector stores
    of the non-temporal group that are aligned to their size (or, being whole
    cache lines, to 64 bytes); None when there is nothing to mark (no such
    group, or no such store)."""
    m = _NAMED_RE.search(text)
    if m is None:
        return None
    g = f"!{m.group(1)}"
    ids = {m.group(1)}
    top = 0
    for node in _NODE_RE.finditer(text):
        top = max(top, int(node.group(1)))
        if g in re.findall(r"!\d+", node.group(2)):
            ids.add(node.group(1))
    nt = top + 1
    lines, marked = text.split("\n"), 0
    for k, line in enumerate(lines):
        s = _STORE_RE.match(line)
        if s is None or s.group(4) not in ids:
            continue
        nbytes, align = int(s.group(1)) * _BYTES[s.group(2)], int(s.group(3))
        if nbytes >= 16 and (align >= nbytes or (align >= 64 and nbytes % 64 == 0)):
            lines[k] = f"{line}, !nontemporal !{nt}"
            marked += 1
    if not marked:
        return None
    return "\n".join(lines) + f"\n!{nt} = !{{i32 1}}\n"


__all__ = ["MIN_BYTES", "eligible", "row_aligned", "assume_aligned", "group", "write", "prepare",
           "mark_stores"]
