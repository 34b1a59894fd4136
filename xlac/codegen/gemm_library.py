"""The GEMM library: shape-generic packed GEMM tasks, compiled once per process.

Why: LLVM (the llvmlite wheel's build in particular) spends ~100 ms on the
packing loops, block loop nest and micro-kernel of one GEMM.  Emitted per
module they cost that for every dot; here they are emitted once with the
problem's sizes and strides read at run time from a *descriptor*, compiled
once per process (lazily, under a lock), and stored in the disk cache
(``disk_cache.library_dir()``: by default ``~/.cache/xlac`` even without
``XLAC_CACHE_DIR``, so only a machine's first process builds it).  A module's
dot kernel (``kernels/dot_library.py``) only fills a descriptor and calls the
library through ``KernelContext.parallel_for``.

**Variants.**  What must be known at compile time to keep the code as fast
as the per-module GEMM is a :class:`Variant`: element type, tile (MR x NR,
vector width) and which index of each operand is unit-stride (this picks the
packing code: streaming copies, in-register transposes or strided loads).
Each variant is its own small LLVM module, built on its first use.  Sizes,
strides, blocking and the task grid are run-time values.

**Functions** of a variant (``void f(ptr desc, i64 worker)``):

* ``run``: a worker: takes task numbers from the atomic counter
  ``desc.counter`` until ``desc.n_tasks`` are taken, and computes each
  (``gemm_task.emit_task``, the per-module GEMM's loop nest, here with
  run-time sizes: :class:`_LibraryTask`; ``dot.md`` describes it).  With a
  shared B, the first task to need a block of B packs it into
  ``desc.bshared`` for all (``gemm.pack_once``, one flag per block in
  ``desc.bflags``).

**Epilogue.**  A kOutput fusion's elementwise epilogue stays in the module:
``desc.epi_fn`` (or null) is called as ``epi(desc.epi_ctx, batch, r0, c0,
rows, cols)`` on every finished tile of C (after its last K block, while it
is in L1); it reads the tile from the result buffer and overwrites it.  (A
dot run as one task leaves ``epi_fn`` null and applies its epilogue after the
call: ``kernels/dot_library.py``.)

**Symbols** are ``xlac_gemm_<hash>_<variant>_<fn>`` where ``hash`` is a hash
of what the variant's code is made from (xlac's source, the host, the variant:
:func:`name_hash`): an object in the disk cache that calls a library function
binds only to that very code, and checking it needs no IR built.  In the JIT the library's functions
are registered with ``llvmlite.binding.add_symbol``; :func:`ensure_symbols`
loads the variants an object file names before MCJIT links it.  An AOT object
links the variants' IR in (:func:`link_into`), so it stays self-contained.
"""
from __future__ import annotations

import hashlib
import re
import threading
import time
from dataclasses import dataclass

import llvmlite.binding as llvm
from llvmlite import ir

from ..shape import PrimitiveType as PT
from . import fft_functions, gemm_amx, gemm_native, linalg_functions, types
from .gemm import (I1, PTR, Loop, add, by_pack_rows, grab_tasks, imin, indirect_micro_kernel, micro_kernel,
                   mul_const, pack_panel, widen)
from .gemm_task import RUN_TIME, GemmTask, TaskBuffers, emit_task
from ..runtime import disk_cache
from ..runtime.disk_cache import code_fingerprint
from ..passes.pipeline import dump_module
from .compile_cache import load_or_compile
from .jit import LIBRARY_PREFIX, LIBRARY_SPEED_LEVEL
from .ir_array import I64, i64
from .loops import for_range_dynamic, loop_hints
from .target import host_description

PREFIX = LIBRARY_PREFIX
I8 = ir.IntType(8)
WORKER_TYPE = ir.FunctionType(ir.VoidType(), [PTR, I64])
EPILOGUE_TYPE = ir.FunctionType(ir.VoidType(), [PTR, I64, I64, I64, I64, I64])

#: The descriptor: 8-byte slots (pointers or i64), in this order.
FIELDS = (
    "a", "b", "c",              # operand and result base pointers (A: M x K, B: K x N, C: M x N)
    "scratch",                  # the workers' scratch regions: worker w at scratch + w * task_bytes
    "bshared",                  # B packed once for all tasks (null: each task packs its own)
    "bflags",                   # i32 per (batch, K block, NR panel) of B, zeroed: gemm.pack_once
    "counter",                  # the task counter
    "epi_fn", "epi_ctx",        # the epilogue (null: none) and its first argument
    "M", "N", "K", "nb",
    "a_bs", "a_rs", "a_cs",     # element strides of the batch, row and column index
    "b_bs", "b_rs", "b_cs",
    "c_bs", "c_rs", "c_cs",
    # The batch index in two levels (batch dimensions not one stride apart, as
    # attention's (B, H) of [B, S, H, D]): index i is at (i % nbi) * x_bs +
    # (i / nbi) * x_bo; nbi >= nb when one stride does.
    "nbi", "a_bo", "b_bo", "c_bo",
    # The same for A's row (M) index and the K index, in variants with
    # ``levels`` "m" / "k" (attention's heads and head dimension contracted
    # or kept together, not one stride apart): row i of A at
    # (i % mi) * a_rs + (i / mi) * a_ro; k at (k % ki) * x + (k / ki) * y
    # with (x, y) = (a_cs, a_co) in A and (b_rs, b_ro) in B.
    "mi", "a_ro", "ki", "a_co", "b_ro",
    "kc", "mc", "nc",           # K block, M block, N block
    "nbt", "nmt", "nnt",        # task grid over batch, M and N
    "n_tasks", "task_bytes", "b_off",   # b_off: the packed B block in a worker's region
)
SLOT = {name: k for k, name in enumerate(FIELDS)}
_POINTERS = {"a", "b", "c", "scratch", "bshared", "bflags", "counter", "epi_fn", "epi_ctx"}


@dataclass(frozen=True)
class Variant:
    """What the library code is specialised on.

    ``a_kind``: ``"k"`` when A's column (K) index is unit-stride (a row-major
    A), ``"m"`` when its row index is, ``"g"`` otherwise, or ``"d"``: A's K
    index unit-stride and its full row panels read in place by the
    strided-A micro-kernel (``DotPlan.a_direct``); ``b_kind``: ``"n"``
    / ``"k"`` / ``"g"`` likewise for B's column (N) and row (K) index, or
    ``"d"``: B read in place by the strided micro-kernel (a short M; B's
    columns unit-stride).  ``a_pt``/``b_pt``: A's and B's element types when
    narrower than ``pt`` (bf16, f16, f8, f4: widened to ``pt`` = f32 while packed;
    never read in place).  ``native``: ``"bf16"``, ``"vnni"``, ``"amxbf16"``
    or ``"amxint8"`` when the variant runs a native low-precision micro-kernel
    on ``a_pt`` x ``b_pt``
    (``gemm_native``; ``pt`` is then f32 or s32, the accumulators' type).
    ``levels``: the groups indexed in two levels (``"m"``: A's rows, ``"k"``:
    the K index of A and B; see the descriptor's ``mi`` and ``ki``): their
    offsets take a division per row of a panel or per k of a block, which
    the other variants' code does not pay."""

    pt: PT
    mr: int
    nr: int
    vw: int
    a_kind: str
    b_kind: str
    a_pt: PT | None = None
    b_pt: PT | None = None
    native: str | None = None
    levels: str = ""

    functions = {"run": WORKER_TYPE}

    @property
    def tag(self) -> str:
        tag = f"{self.pt.value}_{self.mr}x{self.nr}v{self.vw}_a{self.a_kind}_b{self.b_kind}"
        if self.native:
            tag += f"_n{self.format.tag}"
        elif self.a_pt or self.b_pt:
            tag += f"_w{(self.a_pt or self.pt).value}{(self.b_pt or self.pt).value}"
        return tag + (f"_l{self.levels}" if self.levels else "")

    @property
    def format(self) -> gemm_native.Format | None:
        """The native kernel's packing format, or None."""
        if not self.native:
            return None
        return gemm_native.Format(self.native, self.a_pt or self.pt, self.b_pt or self.pt)

    def build(self, module: ir.Module, name_of, linkage: str) -> None:
        # The micro-kernels ahead of the worker in the module (emit_task
        # finds them by name), in the order they are called.
        if self.native:
            gemm_native.micro_kernel(module, self.format, self.mr, self.nr)
        else:
            micro_kernel(module, self.pt, self.mr, self.nr, self.vw, strided_b=self.b_kind == "d")
        if self.a_kind == "d":
            micro_kernel(module, self.pt, self.mr, self.nr, self.vw, strided_a=True)
        _worker(module, name_of("run"), linkage,
                lambda b, ab, d, t, w: emit_task(b, ab, _LibraryTask(b, self, d), t, w),
                amx=self.native is not None and self.format.amx)


CONV_UK_TYPE = ir.FunctionType(ir.VoidType(), [I64, I64, PTR, I64, PTR, PTR, I64, I1])
#: ``void table(ptr geom, ptr x, ptr zeros, i64 m0, i64 m_end, i64 s0, i64 ns, ptr table)``
CONV_TABLE_TYPE = ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR, I64, I64, I64, I64, PTR])
#: ``void pack(ptr src, i64 rs, i64 cs, i64 n, i64 k0, i64 kc, ptr dst)``
CONV_PACK_TYPE = ir.FunctionType(ir.VoidType(), [PTR, I64, I64, I64, I64, I64, PTR])

#: Spatial dimensions the library's indirection tables take at most; the
#: output pixel index has one more (the batch).
GEOM_SPATIAL = 3
GEOM_MDIMS = GEOM_SPATIAL + 1
#: The geometry of a convolution's indirection table, an i64 array (a
#: constant of the module): ``M`` pixels, ``spb`` window positions per K
#: block, ``base0`` the input offset of pixel 0's window origin; per output
#: pixel dimension ``k`` (major first): its
#: size, its multiplier of the input offset, and of each spatial origin
#: (the window stride, or 0); per spatial dimension ``d``: the origin of
#: pixel 0 (``start``: ``-padding_low``), the input size, window size,
#: window dilation and the input stride.  Fields of dimensions the
#: convolution does not have are not read.
GEOM = (("M", "spb", "base0")
        + tuple(f"{name}{k}" for k in range(GEOM_MDIMS)
                for name in ("size", "xmul", *(f"org{d}_" for d in range(GEOM_SPATIAL))))
        + tuple(f"{name}{d}" for d in range(GEOM_SPATIAL) for name in ("start", "in", "ks", "dil", "xst")))
GEOM_SLOT = {name: k for k, name in enumerate(GEOM)}


@dataclass(frozen=True)
class ConvVariant:
    """The implicit-GEMM convolution's program-independent code
    (``kernels/conv_gemm.py`` calls it), for one element type and tile:

    * ``uk``: the indirect micro-kernel (``gemm.indirect_micro_kernel``);
    * ``pack``: a K block of B (the kernel as a K x N matrix with a row and a
      column stride) into NR-wide panels, zero-padded at the N edge.

    ``b_kind`` is B's unit-stride index (``"n"``, ``"k"``, or ``"g"``: neither)
    and ``b_pt`` B's element type when narrower than ``pt`` (widened as it is
    packed).  The indirection tables are :class:`TableVariant`'s."""

    pt: PT
    mr: int
    nr: int
    vw: int
    b_kind: str = "n"
    b_pt: PT | None = None

    functions = {"uk": CONV_UK_TYPE, "pack": CONV_PACK_TYPE}
    native = None

    @property
    def tag(self) -> str:
        tag = f"{self.pt.value}_conv{self.mr}x{self.nr}v{self.vw}_b{self.b_kind}"
        return tag + (f"_w{self.b_pt.value}" if self.b_pt else "")

    def build(self, module: ir.Module, name_of, linkage: str) -> None:
        indirect_micro_kernel(module, self.pt, self.mr, self.nr, self.vw, name=name_of("uk"), linkage=linkage)
        _conv_pack(module, self, name_of("pack"), linkage)


@dataclass(frozen=True)
class TableVariant:
    """The implicit-GEMM convolution's indirection table builder (``table``)
    for one element type and tile height, reading the convolution's
    geometry from an array (``GEOM``) instead of constants.  It is
    specialised on what changes its loops: ``checked``, one ``"1"`` or
    ``"0"`` per spatial dimension (whether a window position can leave the
    input there: padding, strides), and ``edge`` (whether pixels past M
    exist).  Emitted per module this was about a third of a convolution
    kernel's LLVM time."""

    pt: PT
    mr: int
    checked: str
    edge: bool

    functions = {"table": CONV_TABLE_TYPE}
    native = None

    @property
    def tag(self) -> str:
        return f"{self.pt.value}_table{self.mr}_c{self.checked}" + ("_e" if self.edge else "")

    def build(self, module: ir.Module, name_of, linkage: str) -> None:
        _conv_table(module, self, name_of("table"), linkage)


#: How ``fill_slots`` reads a slot table's kinds (``emitter.fill_slots_function``).
SLOT_KINDS = {"temp": 0, "parameter": 1, "result": 2, "constant": 3}
FILL_SLOTS_TYPE = ir.FunctionType(ir.VoidType(), [PTR, PTR, I64, PTR, PTR, PTR])


@dataclass(frozen=True)
class HelperVariant:
    """Small run-time helpers the emitted modules call (``fill_slots``: a
    shared kernel's slot array from its site's constant table).  Emitted in
    every module they had cost each a few ms of LLVM; here they are compiled
    once per machine like the GEMM code."""

    functions = {"fill_slots": FILL_SLOTS_TYPE}
    native = None
    tag = "helpers"

    def build(self, module: ir.Module, name_of, linkage: str) -> None:
        _fill_slots(module, name_of("fill_slots"), linkage)


HELPERS = HelperVariant()


def _fill_slots(module, name: str, linkage: str) -> None:
    fn = ir.Function(module, FILL_SLOTS_TYPE, name)
    fn.linkage = linkage
    fn.attributes.add("noinline")
    slots, table, n, results, params, temp = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    with for_range_dynamic(b, i64(0), n, "slot", loop_id=loop_hints(module, vectorize=False)) as k:
        at = b.shl(k, i64(1))
        kind = b.load(b.gep(table, [at], source_etype=I64), typ=I64)
        value = b.load(b.gep(table, [b.add(at, i64(1))], source_etype=I64), typ=I64)
        out = b.gep(slots, [k], source_etype=PTR)
        done = b.append_basic_block("slot.done")
        cases = {
            "temp": lambda: b.gep(temp, [value], inbounds=True, source_etype=I8),
            "parameter": lambda: b.load(b.gep(params, [value], source_etype=PTR), typ=PTR),
            "result": lambda: b.load(b.gep(results, [value], source_etype=PTR), typ=PTR),
            "constant": lambda: b.inttoptr(value, PTR),
        }
        blocks = {name: b.append_basic_block(f"slot.{name}") for name in cases}
        switch = b.switch(kind, blocks["constant"])
        for name, address in cases.items():
            switch.add_case(i64(SLOT_KINDS[name]), blocks[name])
            b.position_at_end(blocks[name])
            b.store(address(), out)
            b.branch(done)
        b.position_at_end(done)
    b.ret_void()


def _function(module, fnty, name: str, linkage: str, arg_names):
    """A new function with named arguments: (function, allocas builder, body builder)."""
    fn = ir.Function(module, fnty, name)
    fn.linkage = linkage
    fn.attributes.add("nounwind")
    for arg, nm in zip(fn.args, arg_names):
        arg.name = nm
    ab = ir.IRBuilder(fn.append_basic_block("allocas"))
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ab.branch(b.block)
    ab.position_at_start(ab.block)
    return fn, ab, b


def _conv_table(module, v: TableVariant, name: str, linkage: str) -> None:
    """``table[(p*spb + s - s0)*mr + j]`` = the input run of pixel ``m0 + p*mr + j``
    at window position ``s`` (s0 <= s < s0 + ns), or ``zeros`` (padding, a
    pixel past M), for the pixels of [m0, m_end) in whole micro-panels: the
    same pointers as ``conv_gemm._build_table`` computes from constants.  A
    pixel's dimensions are counted up from m0's (no division per pixel), its
    offset and window origin worked out once per panel, a window position's
    shift once per position."""
    fn, ab, b = _function(module, CONV_TABLE_TYPE, name, linkage,
                          ("geom", "x", "zeros", "m0", "m_end", "s0", "ns", "table"))
    geom, x, zeros, m0, m_end, s0, ns, table = fn.args
    mr, ety = v.mr, types.memory_type(v.pt)
    nd = len(v.checked)
    nk = nd + 1

    def g(field):
        return b.load(b.gep(geom, [i64(GEOM_SLOT[field])], inbounds=True, source_etype=I64), typ=I64, align=8)
    M, spb = g("M"), g("spb")
    sizes = [g(f"size{k}") for k in range(nk)]
    xmul = [g(f"xmul{k}") for k in range(nk)]
    org = [[g(f"org{d}_{k}") for d in range(nd)] for k in range(nk)]
    org0 = [g(f"start{d}") for d in range(nd)]
    insz = [g(f"in{d}") for d in range(nd)]
    ks = [g(f"ks{d}") for d in range(nd)]
    dil = [g(f"dil{d}") for d in range(nd)]
    xst = [g(f"xst{d}") for d in range(nd)]
    base0 = g("base0")
    # The pixel counter: m0's dimensions, minor one first.
    comp = [ab.alloca(I64, name=f"c{k}") for k in range(nk)]
    rest = m0
    for k in reversed(range(nk)):
        b.store(b.urem(rest, sizes[k]) if k else rest, comp[k])
        rest = b.udiv(rest, sizes[k])
    wpos = [ab.alloca(I64, name=f"w{d}") for d in range(nd)]
    base_of = ab.alloca(I64, size=mr, name="tbase")
    origin_of = [ab.alloca(I64, size=mr, name=f"torg{d}") for d in range(nd)]
    valid_of = ab.alloca(I64, size=mr, name="tvalid") if v.edge else None
    with Loop(b, m0, m_end, mr, "tp") as r0:
        row_base = b.mul(b.udiv(b.sub(r0, m0), i64(mr)), b.mul(spb, i64(mr)))
        with Loop(b, 0, mr, 1, "tj", vectorize=False) as j:
            m = b.add(r0, j)
            if v.edge:
                b.store(b.zext(b.icmp_signed("<", m, M), I64), _gep(b, valid_of, j, PT.S64))
            cs = [b.load(comp[k], typ=I64) for k in range(nk)]
            off = base0
            for k in range(nk):
                off = b.add(off, b.mul(cs[k], xmul[k]))
            b.store(off, _gep(b, base_of, j, PT.S64))
            for d in range(nd):
                if v.checked[d] == "1":
                    o = org0[d]
                    for k in range(nk):
                        o = b.add(o, b.mul(cs[k], org[k][d]))
                    b.store(o, _gep(b, origin_of[d], j, PT.S64))
            _count_up(b, cs, sizes, comp)
        # Window position s0 -> (w_0, ..., w_{nd-1}), major first; the next
        # positions are counted up (a division per position cost the
        # filter gradients' tables, thousands of positions, ~60% more time).
        rest = s0
        for d in reversed(range(nd)):
            b.store(b.urem(rest, ks[d]) if d else rest, wpos[d])
            rest = b.udiv(rest, ks[d])
        with Loop(b, 0, ns, 1, "ts", vectorize=False) as si:
            ws = [b.load(wpos[d], typ=I64) for d in range(nd)]
            _count_up(b, ws, ks, wpos)
            shifts = [b.mul(ws[d], dil[d]) for d in range(nd)]
            soff = i64(0)
            for d in range(nd):
                soff = b.add(soff, b.mul(shifts[d], xst[d]))
            slot0 = b.add(row_base, b.mul(si, i64(mr)))
            with Loop(b, 0, mr, 1, "tk") as j:
                ok = None
                if v.edge:
                    ok = b.icmp_unsigned("!=", b.load(_gep(b, valid_of, j, PT.S64), typ=I64), i64(0))
                off = b.add(b.load(_gep(b, base_of, j, PT.S64), typ=I64), soff)
                for d in range(nd):
                    if v.checked[d] == "1":
                        pos = b.add(b.load(_gep(b, origin_of[d], j, PT.S64), typ=I64), shifts[d])
                        inside = b.icmp_unsigned("<", pos, insz[d])
                        ok = inside if ok is None else b.and_(ok, inside)
                ptr = b.gep(x, [off], source_etype=ety)
                if ok is not None:
                    ptr = b.select(ok, ptr, zeros)
                b.store(ptr, b.gep(table, [b.add(slot0, j)], inbounds=True, source_etype=PTR), align=8)
    b.ret_void()


def _count_up(b, digits, sizes, slots) -> None:
    """Store ``digits`` (major first, the first unbounded) plus one into
    ``slots``: the minor digit counts up, carrying into the next."""
    carry = ir.Constant(I1, 1)
    for k in reversed(range(len(digits))):
        bumped = b.add(digits[k], b.zext(carry, I64))
        wraps = b.and_(carry, b.icmp_unsigned(">=", bumped, sizes[k])) if k else ir.Constant(I1, 0)
        b.store(b.select(wraps, i64(0), bumped), slots[k])
        carry = wraps


def _conv_pack(module, v: ConvVariant, name: str, linkage: str) -> None:
    """Columns [0, n) and rows [k0, k0 + kc) of B (element (r, c) at
    ``src[r*rs + c*cs]``) into NR-wide panels at ``dst`` (panel q at
    ``dst + q*kc*NR``), the last one zero-padded: ``gemm.pack_block``'s
    layout (``_pack_block`` with run-time sizes)."""
    fn, _ab, b = _function(module, CONV_PACK_TYPE, name, linkage, ("src", "rs", "cs", "n", "k0", "kc", "dst"))
    src, rs, cs, n, k0, kc, dst = fn.args
    rs = 1 if v.b_kind == "k" else rs
    cs = 1 if v.b_kind == "n" else cs
    view = _View(v.b_pt or v.pt, src, _BatchGroup(i64(0), i64(0), i64(1)), rs, cs)
    _pack_block(b, v, view, i64(0), i64(0), n, n, k0, kc, dst, v.nr, False)
    b.ret_void()


#: The element types a variant's operands may be stored in (its tag names two of
#: them one after the other: the longest alternative first).
_STORED = "|".join(sorted((t.value for t in PT if t.is_float and t.bit_width <= 32), key=len, reverse=True))
_NATIVE_STORED = rb"bf16|s8|u8"
_HELPERS_NAME_RE = re.compile(rb"xlac_gemm_([0-9a-f]{16})_helpers_(\w+)")
_TABLE_NAME_RE = re.compile(rb"xlac_gemm_([0-9a-f]{16})_(f32|f64)_table(\d+)_c([01]*)(_e)?_(\w+)")
_CONV_NAME_RE = re.compile(rb"xlac_gemm_([0-9a-f]{16})_(f32|f64)_conv(\d+)x(\d+)v(\d+)_b([nkg])"
                           rb"(?:_w(" + _STORED.encode() + rb"))?_(\w+)")
_NAME_RE = re.compile(rb"xlac_gemm_([0-9a-f]{16})_(f32|f64|s32)_(\d+)x(\d+)v(\d+)_a([kmgd])_b([nkgd])"
                      rb"(?:_w(" + _STORED.encode() + rb")(" + _STORED.encode() + rb"))?"
                      rb"(?:_n(bf16|vnni|amxbf16|amxint8)_(" + _NATIVE_STORED + rb")(" + _NATIVE_STORED + rb"))?"
                      rb"(?:_l(mk|m|k))?_(\w+)")


def _parse_name(name: bytes):
    """``(hash, variant)`` of a library symbol, or None."""
    m = fft_functions.NAME_RE.fullmatch(name)
    if m is not None:
        h, pt, radix, sign, lanes, mc, _ = (g.decode() if g else None for g in m.groups())
        fv = fft_functions.parse_tag(pt, radix, sign, lanes, mc)
        return (h, fv) if fv is not None else None
    m = linalg_functions.NAME_RE.fullmatch(name)
    if m is not None:
        h, pt, routine, _ = (g.decode() for g in m.groups())
        lv = linalg_functions.parse_tag(pt, routine)
        return (h, lv) if lv is not None else None
    m = _HELPERS_NAME_RE.fullmatch(name)
    if m is not None:
        h, fn = (g.decode() for g in m.groups())
        return (h, HELPERS) if fn in HELPERS.functions else None
    m = _TABLE_NAME_RE.fullmatch(name)
    if m is not None:
        h, pt, mr, checked, edge, fn = (g.decode() if g else None for g in m.groups())
        # (``checked`` is empty for a convolution without spatial dimensions)
        tv = TableVariant(PT(pt), int(mr), checked or "", edge is not None)
        return (h, tv) if fn in tv.functions else None
    m = _CONV_NAME_RE.fullmatch(name)
    if m is not None:
        h, pt, mr, nr, vw, bk, wb, fn = (g.decode() if g else None for g in m.groups())
        cv = ConvVariant(PT(pt), int(mr), int(nr), int(vw), bk, PT(wb) if wb else None)
        return (h, cv) if fn in cv.functions else None
    m = _NAME_RE.fullmatch(name)
    if m is None:
        return None
    h, pt, mr, nr, vw, ak, bk, wa, wb, native, na, nb, levels, fn = (g.decode() if g else None for g in m.groups())
    narrow = lambda w: PT(w) if w and w != pt else None      # noqa: E731
    if native:
        wa, wb = na, nb
    v = Variant(PT(pt), int(mr), int(nr), int(vw), ak, bk, narrow(wa), narrow(wb), native, levels or "")
    return (h, v) if fn in v.functions else None


# ---------------------------------------------------------------------------
# IR of a variant
# ---------------------------------------------------------------------------

class _Group:
    """An affine index group with a run-time stride (or the known stride 1)."""

    affine = True

    def __init__(self, stride):
        self.stride = stride

    def offset(self, b, i):
        return mul_const(b, i, self.stride)


class _BatchGroup(_Group):
    """The batch group: index ``i`` at ``(i % inner) * stride + (i / inner) *
    outer`` (run-time values; see the descriptor's ``nbi``).  Asked once per
    batch index a task works on, never inside its loops."""

    def __init__(self, stride, outer, inner):
        super().__init__(stride)
        self.outer, self.inner = outer, inner

    def offset(self, b, i):
        return b.add(b.mul(b.urem(i, self.inner), self.stride), b.mul(b.udiv(i, self.inner), self.outer))


class _TwoLevels(_Group):
    """A row or K group in two levels: index ``i`` at ``(i % inner) * stride
    + (i / inner) * outer`` (run-time values).  Not affine: ``gemm.pack_panel``
    works out a panel's row offsets once per panel and a k's once per k,
    and never reads it as one unit-stride run."""

    affine = False
    #: ``gemm.pack_panel`` walks it with ``gemm.TwoLevelLoop`` (no division per k).
    stepped = True

    def __init__(self, stride, outer, inner):
        super().__init__(stride)
        self.outer, self.inner = outer, inner

    def offset(self, b, i):
        return b.add(b.mul(b.urem(i, self.inner), self.stride), b.mul(b.udiv(i, self.inner), self.outer))


class _View:
    """An operand as ``gemm.pack_panel`` sees it: a buffer with three index groups."""

    is_array = True

    def __init__(self, pt, ptr, batch: _BatchGroup, rs, cs):
        self.pt, self.ptr = pt, ptr
        self.gb = batch
        self.gr = rs if isinstance(rs, _Group) else _Group(rs)
        self.gc = cs if isinstance(cs, _Group) else _Group(cs)

    def element_pointer(self, b, offset):
        return b.gep(self.ptr, [offset], inbounds=True, source_etype=types.memory_type(self.pt))


class _Desc:
    """The descriptor's fields loaded in a function (``d.M``, ``d.a`` ...)."""

    def __init__(self, b, desc):
        for name in FIELDS:
            p = b.gep(desc, [i64(SLOT[name])], inbounds=True, source_etype=I64)
            setattr(self, name, b.load(p, typ=PTR if name in _POINTERS else I64, align=8))


def _views(b, v: Variant, d: _Desc):
    """A and B with the strides the variant knows to be 1 as constants (so the
    fast packing paths are chosen at compile time), the others run-time."""
    a_rs = 1 if v.a_kind == "m" else d.a_rs
    a_cs = 1 if v.a_kind in ("k", "d") else d.a_cs
    b_rs = 1 if v.b_kind == "k" else d.b_rs
    b_cs = 1 if v.b_kind in ("n", "d") else d.b_cs
    if "m" in v.levels:
        a_rs = _TwoLevels(d.a_rs, d.a_ro, d.mi)
    if "k" in v.levels:
        a_cs, b_rs = _TwoLevels(d.a_cs, d.a_co, d.ki), _TwoLevels(d.b_rs, d.b_ro, d.ki)
    return (_View(v.a_pt or v.pt, d.a, _BatchGroup(d.a_bs, d.a_bo, d.nbi), a_rs, a_cs),
            _View(v.b_pt or v.pt, d.b, _BatchGroup(d.b_bs, d.b_bo, d.nbi), b_rs, b_cs))


def _gep(b, ptr, elements, pt):
    return b.gep(ptr, [elements], inbounds=True, source_etype=types.memory_type(pt))


def _pack_block(b, v: Variant, view: _View, boff, lo, hi, total, inner0, kc, dst, width: int,
                outer_is_row: bool) -> None:
    """``gemm.pack_block`` with a run-time ``total``: the full panels of outer
    indices [lo, hi) through ``gemm.pack_panel`` (or ``gemm.PACK_ROWS`` streams when
    the outer index is unit-stride), then a zero-padded edge panel if [lo, hi)
    reaches the partial last one.  Elements of a narrower type than the
    variant's (bf16, f16, f8, f4) are widened as they are copied (``gemm.widen``)."""
    pt, spt = v.pt, view.pt
    ety, sty = types.memory_type(pt), types.memory_type(spt)
    esize, sesize = pt.byte_size, spt.byte_size
    vw = v.vw
    g_outer = view.gr if outer_is_row else view.gc
    g_inner = view.gc if outer_is_row else view.gr
    edge = b.srem(total, i64(width))
    full_end = b.sub(total, edge)
    n_full = b.sdiv(b.sub(imin(b, hi, full_end), lo), i64(width))   # may be <= 0
    panel_elems = b.mul(kc, i64(width))
    if g_outer.affine and g_outer.stride == 1:
        base = view.element_pointer(b, add(b, boff, lo))
        vec = width % vw == 0
        sty_v = ir.VectorType(sty, vw)
        step, lty = (vw, sty_v) if vec else (1, sty)

        def rows(k0, k1, unroll):
            with Loop(b, k0, k1, unroll, "sk") as k:
                src_rows = [_gep(b, base, g_inner.offset(b, add(b, inner0, b.add(k, i64(u)))), spt)
                            for u in range(unroll)]
                dst_row = _gep(b, dst, b.mul(k, i64(width)), pt)
                with Loop(b, 0, n_full, 1, "sq", vectorize=False) as q:
                    out = _gep(b, dst_row, b.mul(q, panel_elems), pt)
                    for u, src_row in enumerate(src_rows):
                        src = _gep(b, src_row, b.mul(q, i64(width)), spt)
                        for j in range(0, width, step):
                            x = widen(b, b.load(_gep(b, src, i64(j), spt), typ=lty, align=sesize), spt, pt)
                            b.store(x, _gep(b, out, i64(u * width + j), pt),
                                    align=min(64, vw * esize) if vec else esize)

        with b.if_then(b.icmp_signed(">", n_full, i64(0))):
            by_pack_rows(b, kc, rows)
    else:
        with Loop(b, 0, n_full, 1, "pq") as q:
            outer0 = b.add(lo, b.mul(q, i64(width)))
            pdst = _gep(b, dst, b.mul(q, panel_elems), pt)
            pack_panel(b, view, None, boff, outer0, width, inner0, kc, pdst, width, width, outer_is_row, vw,
                       pt)
    # The partial last panel: scalar, with a run-time number of valid outer
    # indices (a branch-free version that LLVM vectorises measured no faster
    # and tripled the library's object code and build time).
    has_edge = b.and_(b.icmp_signed(">", edge, i64(0)), b.icmp_signed(">", hi, full_end))
    with b.if_then(has_edge):
        pdst = _gep(b, dst, b.mul(b.sdiv(b.sub(full_end, lo), i64(width)), panel_elems), pt)
        # (a two-level outer group: each index's offset from the panel's first,
        # as ``gemm.pack_panel`` takes them)
        o0 = g_outer.offset(b, full_end)
        base = view.element_pointer(b, add(b, boff, o0))
        with Loop(b, 0, kc, 1, "ek") as k:
            src = _gep(b, base, g_inner.offset(b, add(b, inner0, k)), spt)
            out = _gep(b, pdst, b.mul(k, i64(width)), pt)
            with Loop(b, 0, edge, 1, "ej", vectorize=False) as j:
                rel = g_outer.offset(b, j) if g_outer.affine else b.sub(g_outer.offset(b, b.add(full_end, j)), o0)
                x = widen(b, b.load(_gep(b, src, rel, spt), typ=sty, align=sesize), spt, pt)
                b.store(x, _gep(b, out, j, pt), align=esize)
            with Loop(b, edge, width, 1, "ez", vectorize=False) as j:
                b.store(types.constant(pt, 0), _gep(b, out, j, pt), align=esize)


def _worker(module, name: str, linkage: str, body, amx: bool = False) -> None:
    """``void name(ptr desc, i64 worker)``: take task numbers from the counter
    until ``n_tasks`` are taken; ``body(b, allocas, desc_fields, task, worker)`` for each.
    ``amx``: the tiles are configured before the first task and released
    after the last (``gemm_amx``: once per call, not per micro-kernel)."""
    fn = ir.Function(module, WORKER_TYPE, name)
    fn.linkage = linkage
    fn.attributes.add("nounwind")
    desc, w = fn.args
    desc.name, w.name = "desc", "worker"
    alloca_b = ir.IRBuilder(fn.append_basic_block("allocas"))
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    alloca_b.branch(b.block)
    alloca_b.position_at_start(alloca_b.block)
    d = _Desc(b, desc)
    if amx:
        gemm_amx.configure(b)
    grab_tasks(b, d.counter, d.n_tasks, lambda t: body(b, alloca_b, d, t, w))
    if amx:
        gemm_amx.release(b)
    b.ret_void()


class _LibraryTask(GemmTask):
    """A task of variant ``v`` on the descriptor ``d``: ``gemm_task.emit_task``
    with sizes, strides, blocking and grid read at run time; tiles reach C
    through its strides, and ``d.epi_fn`` (when not null) finishes them."""

    ix = RUN_TIME
    a_pointer_at_call = True

    def __init__(self, b, v: Variant, d: _Desc):
        self.v, self.d = v, d
        self.pt, self.mr, self.nr, self.vw = v.pt, v.mr, v.nr, v.vw
        self.M, self.N, self.K, self.nb = d.M, d.N, d.K, d.nb
        self.kc, self.mc, self.nc, self.grid = d.kc, d.mc, d.nc, (d.nbt, d.nmt, d.nnt)
        self.A, self.B = _views(b, v, d)
        self.a_direct, self.b_direct = v.a_kind == "d", v.b_kind == "d"
        self.native = v.format
        self.epi = _Callee(d.epi_fn, EPILOGUE_TYPE)

    def begin(self, b) -> None:
        d = self.d
        self.direct_c = b.icmp_signed("==", d.c_cs, i64(1))
        self.has_epi = b.icmp_unsigned("!=", d.epi_fn, ir.Constant(PTR, None))

    def buffers(self, b, w) -> TaskBuffers:
        d = self.d
        base = b.gep(d.scratch, [b.mul(w, d.task_bytes)], inbounds=True, source_etype=I8)
        b_buf = b.gep(base, [d.b_off], inbounds=True, source_etype=I8)
        shared = b.icmp_unsigned("!=", d.bshared, ir.Constant(PTR, None))
        return TaskBuffers(base, b_buf, d.bshared, d.bflags, shared)

    def c_batch(self, b, bi):
        d = self.d
        return _gep(b, d.c, _BatchGroup(d.c_bs, d.c_bo, d.nbi).offset(b, bi), self.pt)

    def pack(self, b, view, bi, boff, lo, hi, total, inner0, kc, dst, width, outer_is_row) -> None:
        if self.native is not None:
            gemm_native.pack(b, self.native, view, boff, lo, hi, total, inner0, kc, dst, width, not outer_is_row)
            return
        _pack_block(b, self.v, view, boff, lo, hi, total, inner0, kc, dst, width, outer_is_row)

    def pack_edge(self, b, view, bi, boff, full_end, hi, total, inner0, kc, dst, width, outer_is_row) -> None:
        _pack_block(b, self.v, view, boff, full_end, hi, total, inner0, kc, dst, width, outer_is_row)

    def store_full_tile(self, b, uk, t) -> None:
        d = self.d
        cp = _gep(b, t.c_batch, b.add(b.mul(t.r0, d.c_rs), t.c0), self.pt)
        t.call(b, uk, cp, d.c_rs, b.not_(t.first))
        with b.if_then(b.and_(t.last, self.has_epi)):
            b.call(self.epi, [d.epi_ctx, t.bi, t.r0, t.c0, i64(self.mr), i64(self.nr)])

    def store_edge_tile(self, b, uk, t, tile) -> None:
        d, v = self.d, self.v
        t.call(b, uk, tile, i64(v.nr), ir.Constant(I1, 0))
        rows = imin(b, i64(v.mr), b.sub(d.M, t.r0))
        cols = imin(b, i64(v.nr), b.sub(d.N, t.c0))
        whole_rows = b.and_(self.direct_c, b.icmp_signed("==", cols, i64(v.nr)))
        with b.if_else(whole_rows) as (then_rows, otherwise_el):
            with then_rows:
                # Only rows missing (the M edge): whole vector rows
                # (a scalar loop here cost bmm ~1.5 %).
                _add_rows(b, v, tile, t.c_batch, t.r0, t.c0, d.c_rs, rows, t.first)
            with otherwise_el:
                _add_elements(b, v, tile, t.c_batch, t.r0, t.c0, d.c_rs, d.c_cs, rows, cols, t.first)
        with b.if_then(b.and_(t.last, self.has_epi)):
            b.call(self.epi, [d.epi_ctx, t.bi, t.r0, t.c0, rows, cols])


def _add_rows(b, v: Variant, tile, c_b, r0, n0, ldc, rows, first) -> None:
    """C rows [r0, r0 + rows), columns [n0, n0 + NR) (unit-stride) (+)= the stack tile's rows."""
    ety = types.memory_type(v.pt)
    vty = ir.VectorType(ety, v.vw)
    esize = v.pt.byte_size
    with Loop(b, 0, rows, 1, "gr") as i:
        crow = _gep(b, c_b, b.add(b.mul(b.add(r0, i), ldc), n0), v.pt)
        trow = _gep(b, tile, b.mul(i, i64(v.nr)), v.pt)
        for j in range(0, v.nr, v.vw):
            x = b.load(_gep(b, trow, i64(j), v.pt), typ=vty, align=esize)
            cp = _gep(b, crow, i64(j), v.pt)
            prev = b.load(cp, typ=vty, align=esize)
            b.store(b.select(first, x, _add(b, v.pt, prev, x)), cp, align=esize)


def _add_elements(b, v: Variant, tile, c_b, r0, n0, ldc, c_cs, rows, cols, first) -> None:
    """C (+)= the stack tile's ``rows x cols`` corner, element by element through C's strides."""
    ety = types.memory_type(v.pt)
    esize = v.pt.byte_size
    with Loop(b, 0, rows, 1, "gi") as i:
        crow = _gep(b, c_b, b.mul(b.add(r0, i), ldc), v.pt)
        with Loop(b, 0, cols, 1, "gj", vectorize=False) as j:
            x = b.load(_gep(b, tile, b.add(b.mul(i, i64(v.nr)), j), v.pt), typ=ety, align=esize)
            cp = _gep(b, crow, b.mul(b.add(n0, j), c_cs), v.pt)
            prev = b.load(cp, typ=ety, align=esize)
            b.store(b.select(first, x, _add(b, v.pt, prev, x)), cp, align=esize)


def _add(b, pt: PT, x, y):
    """``x + y`` of C's type (integers wrap)."""
    return b.fadd(x, y) if pt.is_float else b.add(x, y)


class _Callee:
    """An indirect callee for llvmlite: a pointer value plus its function type."""

    def __init__(self, value, fnty):
        self.value, self.function_type = value, fnty
        self.type = PTR

    def get_reference(self):
        return self.value.get_reference()


def _build_ir(v, name_hash: str, linkage: str) -> str:
    module = ir.Module(name=f"xlac.gemm.{v.tag}")
    v.build(module, lambda fn: _symbol(name_hash, v, fn), linkage)
    return str(module)


def _symbol(name_hash: str, v: Variant, fn: str) -> str:
    return f"{PREFIX}{name_hash}_{v.tag}_{fn}"


# ---------------------------------------------------------------------------
# Building, loading, naming
# ---------------------------------------------------------------------------

_lock = threading.RLock()
_ir: dict[str, str] = {}                       # name hash -> IR text with external linkage
_loaded: dict[str, object] = {}                # name hash -> JitFunction (keeps the code alive)
#: Per unit tag loaded in this process: ("compiled" or "disk", seconds it took).
loaded_from: dict[str, tuple[str, float]] = {}


_hashes: dict[tuple, str] = {}                 # (target description, variant) -> name hash


def name_hash(v: Variant) -> str:
    """The hash in ``v``'s symbol names: of what its code is made from — xlac's
    code (``disk_cache.code_fingerprint``), the target (CPU features choose vector
    widths; ``target.current``) and the variant — so that naming a function, or
    checking the name an object file calls, never needs the IR built (10-20 ms
    per variant).  Code for two targets (the host's, an AOT object's) has two names."""
    key = (host_description(), v)
    got = _hashes.get(key)
    if got is None:
        parts = "|".join([code_fingerprint(), *key[0], v.tag])
        got = _hashes[key] = hashlib.sha256(parts.encode()).hexdigest()[:16]
    return got


def variant_ir(v: Variant) -> tuple[str, str]:
    """``(hash, IR text)`` of a variant for the current target (built once per process)."""
    with _lock:
        h = name_hash(v)
        text = _ir.get(h)
        if text is None:
            text = _ir[h] = _build_ir(v, h, "external")
        return h, text


def symbol(v: Variant, fn: str) -> str:
    """The name of library function ``fn`` (``"run"``) of ``v``."""
    return _symbol(name_hash(v), v, fn)


def declare(module: ir.Module, v, fn: str) -> ir.Function:
    """A declaration of library function ``fn`` of unit ``v`` in ``module``."""
    name = symbol(v, fn)
    f = module.globals.get(name)
    if f is None:
        f = ir.Function(module, v.functions[fn], name)
    return f


def ensure_loaded(v: Variant) -> None:
    """Compile (or load from the disk cache) variant ``v`` and register its
    functions with the JIT linker (``llvmlite.binding.add_symbol``)."""
    with _lock:
        h = name_hash(v)
        if h in _loaded:
            return
        if v.native is not None and v.format.amx:
            # Every process that runs AMX code asks Linux first (a refused
            # process would stop on the first tile instruction).
            why = gemm_native.tile_data_refused()
            if why is not None:
                raise RuntimeError(f"GEMM library: {v.tag} runs on AMX tiles, but {why}; "
                                   "compile without AMX (gemm_native.AMX_KERNEL = False, or a target "
                                   "without amx-tile: XLAC_TARGET_FEATURES=-amx-tile)")
        t0 = time.perf_counter()
        names = [_symbol(h, v, fn) for fn in v.functions]
        with dump_module(f"gemm_library.{v.tag}", own=True):   # XLAC_DUMP_TO: not the program's files
            got = load_or_compile(("xlac-gemm-library", v.tag, h), names[0], lambda: (variant_ir(v)[1], None),
                                  directory=disk_cache.library_dir(),
                                  metadata=lambda built, jf: {"library": v.tag, "symbols": names},
                                  before_load=defines_itself, module_options=False,
                                  speed_level=LIBRARY_SPEED_LEVEL)
        jf, origin = got.jit, got.origin
        for name in names:
            addr = jf.engine.get_function_address(name)
            if not addr:
                raise RuntimeError(f"GEMM library: {name} missing from its object")
            llvm.add_symbol(name, addr)
        _loaded[h] = jf
        loaded_from[v.tag] = (origin, time.perf_counter() - t0)


def defines_itself(object_code: bytes) -> None:
    """``before_load`` of the library's own objects: the names they hold are
    the functions they define, nothing to load first."""


def _referenced(names) -> list[Variant]:
    """The variants named by library symbols ``names`` (bytes); raises when a
    name's hash is not the one this process builds (stale code)."""
    out = []
    for name in sorted(set(names)):
        parsed = _parse_name(name)
        if parsed is None:
            if re.fullmatch(rb"xlac_gemm_[0-9a-f]{16}_\w+", name):
                # A variant this parser cannot name would stay unloaded, and MCJIT
                # would link its calls to address 0.
                raise RuntimeError(f"GEMM library symbol {name.decode()} names no variant")
            continue
        h, v = parsed
        if name_hash(v) != h:
            raise RuntimeError(f"GEMM library symbol {name.decode()} is from another library version")
        if v not in out:
            out.append(v)
    return out


def ensure_symbols(object_code: bytes) -> None:
    """Load every library variant an object file calls (its symbol names are
    in the object's string table) before MCJIT links it.  An object with AMX
    tile code of its own (the direct 8-bit convolution) asks Linux for the
    tiles first, as an AMX variant's loading does: a refused process raises
    (a disk-cache entry then counts as a miss) instead of stopping on SIGILL."""
    if gemm_amx.MARKER in object_code:
        why = gemm_native.tile_data_refused()
        if why is not None:
            raise RuntimeError(f"the object runs AMX tile code, but {why}")
    if PREFIX.encode() not in object_code:
        return
    for v in _referenced(re.findall(rb"xlac_gemm_[0-9a-z_]+", object_code)):
        ensure_loaded(v)


def link_into(ref, prepare=None) -> None:
    """Link the IR of every library variant ``ref`` (a parsed ModuleRef) declares
    into it: an ahead-of-time object carries the library code it calls.
    ``prepare(lib)``, when given, returns the variant's module to link (its
    optimised form)."""
    import llvmlite.binding as llvm
    names = [f.name.encode() for f in ref.functions if f.is_declaration and f.name.startswith(PREFIX)]
    for v in _referenced(names):
        lib = llvm.parse_assembly(variant_ir(v)[1])
        lib.triple = ref.triple
        lib.data_layout = ref.data_layout
        ref.link_in(lib if prepare is None else prepare(lib))
