"""Native low-precision GEMM: micro-kernels on AVX512_BF16's ``vdpbf16ps``
and AVX512_VNNI's ``vpdpbusd``, and the packing they read (used by the GEMM
library, ``gemm_library.py``; ``docs/dot.md`` has the design and figures).

Both instructions multiply *groups* of narrow elements along K and add the
group's sum into a 32-bit lane: ``vdpbf16ps`` two bf16 products into an f32
lane, ``vpdpbusd`` four u8 x s8 products into an s32 lane.  So the packed
panels keep each group of ``group`` consecutive k together, one 32-bit word
per row (A) or column (B):

    A micro-panel: word (g, i) = A[i, g*group : g*group + group]   g < ceil(kc/group), i < MR
    B micro-panel: [header: NR s32]  word (g, j) = B[g*group : ..., j]   j < NR

(K padded with zeros to a multiple of ``group``; panels at the M and N edges
padded with zeros, as the f32 panels are.)  The micro-kernel broadcasts A's
word of a row over a vector and multiplies it with ``NR / 16`` vectors of B
words: ``MR * NR / 16`` instructions per group, each ``group`` products per
lane -- twice (bf16) or four times (8-bit) the f32 FMA's work.

**Signedness.**  ``vpdpbusd`` multiplies unsigned bytes by signed ones.  u8 x
s8 and s8 x u8 map onto it directly (the unsigned operand is the broadcast A
or the vector of B).  s8 x s8 packs A + 128 as u8 (a xor of the sign bit)
and u8 x u8 packs A - 128 as s8 (the same xor), and both add a correction of
-128 (resp. +128) times B's column sums over the K block: the packing of B
computes them (``vpdpbusd`` against a vector of ones) into the panel's
header, and the micro-kernel starts its accumulators from it.  Every step is
s32 arithmetic modulo 2**32, so the result is the exact dot product wrapped
to s32, as XLA's integer dot is.

**bf16.**  ``vdpbf16ps`` adds both products of a pair into the f32
accumulator with round-to-nearest-even, treating bf16 denormal inputs and
f32 denormal results as zero (DAZ/FTZ, whatever MXCSR says): a result
differs from the widened f32 GEMM's by the pairwise order of the sums and,
where denormals occur, by the flush.
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ..shape import PrimitiveType as PT
from . import gemm_amx, types
from .gemm import I32, PTR, Loop, add, imin, intrinsic, splat, store_tile
from .ir_array import I64, i64
from ..runtime import amx
from .target import current, features_of, host

I8 = ir.IntType(8)
I1 = ir.IntType(1)
#: 32-bit lanes of a zmm register: the native kernels' vector width.
VW = 16
V_I32 = ir.VectorType(I32, VW)
V_F32 = ir.VectorType(ir.FloatType(), VW)

#: The CPU features each native kernel needs (LLVM's names): ``bf16`` and
#: ``vnni`` on vectors (here), ``amxbf16`` and ``amxint8`` on AMX tiles
#: (``gemm_amx``; the packing of B is shared).
FEATURES = {"bf16": ("avx512f", "avx512bf16"), "vnni": ("avx512f", "avx512bw", "avx512vnni"),
            "amxbf16": ("avx512f", "amx-tile", "amx-bf16"), "amxint8": ("avx512f", "amx-tile", "amx-int8")}
#: What dumps call the instruction each kernel is built on.
INSTRUCTION = {"bf16": "vdpbf16ps", "vnni": "vpdpbusd", "amxbf16": "AMX tdpbf16ps",
               "amxint8": "AMX tdpb[su][su]d"}
#: The kernels a dot of bf16 and of 8-bit integers may run, in the order preferred.
PREFERENCE = {"bf16": ("amxbf16", "bf16"), "int8": ("amxint8", "vnni")}


def missing_features(kind: str) -> list:
    """The features native kernel ``kind`` needs that the current target
    (``target.current``: the host, or ``--cpu`` / ``XLAC_TARGET_*``) lacks."""
    have = features_of(current())
    return [f for f in FEATURES[kind] if f not in have]


#: Whether bf16 dots run the ``vdpbf16ps`` kernel: ``"auto"`` where it is the
#: faster one (:func:`unavailable`), True wherever the target has the
#: instruction, False never (tests set it; read when a dot is planned).
BF16_KERNEL = "auto"
#: Whether dots run the AMX kernels where the target has AMX (tests switch
#: them off to run the vector kernels; read when a dot is planned).
AMX_KERNEL = True


def switches() -> str:
    """The kernel switches above where they are not at their defaults ("" when
    all are): compiled code depends on them, so the compile caches key on them."""
    changed = [f"{name}={value}" for name, value, default in
               (("bf16_kernel", BF16_KERNEL, "auto"), ("amx_kernel", AMX_KERNEL, True)) if value != default]
    return ",".join(changed)


def unavailable(kind: str) -> str | None:
    """Why native kernel ``kind`` does not run on the current target, or None.

    ``vdpbf16ps`` does two products per f32 lane, but where it issues at half
    the rate of the f32 FMAs it is no faster than the widened f32 kernel:
    measured so on a Sapphire Rapids (one every 2 cycles against two FMAs
    per cycle, a 1024^3 product 15-20 % slower than widened).  Intel's
    server cores with AMX are these; CPUs with AVX512_BF16 and no AMX (AMD
    Zen 4 and 5) issue it at the FMA's rate."""
    # A switch the user set is the reason whatever the target has.
    if kind.startswith("amx") and not AMX_KERNEL:
        return "switched off (gemm_native.AMX_KERNEL)"
    if kind == "bf16" and BF16_KERNEL is False:
        return "switched off (gemm_native.BF16_KERNEL)"
    missing = missing_features(kind)
    if missing:
        return f"the target lacks {', '.join(missing)}"
    if kind.startswith("amx"):
        return tile_data_refused()
    if kind == "bf16":
        if BF16_KERNEL == "auto" and "amx-bf16" in features_of(current()):
            return ("vdpbf16ps issues at half the f32 FMA rate on this CPU (an AMX one): "
                    "the widened f32 kernel is faster")
    return None


def tile_data_refused() -> str | None:
    """Why this process may not use AMX tiles, or None: asked of Linux
    (``runtime.amx``) when this CPU has them, so that code JIT-compiled here
    never stops on its first tile instruction.  Code for a target with AMX
    compiled on a host without it (an AOT object) needs no answer here: its
    ``NAME_run`` asks on the CPU it runs on (``xlac_check_cpu``)."""
    if "amx-tile" not in features_of(host()):
        return None
    why = amx.tile_data_refused()
    return None if why is None else f"this process may not use AMX tiles ({why})"


class _BFloat(ir.Type):
    """LLVM's ``bfloat`` (llvmlite has no such type): only for the operands of
    ``vdpbf16ps``'s intrinsic; bf16 data is otherwise i16 (``types``)."""

    def _to_string(self):
        return "bfloat"

    def __str__(self):
        return "bfloat"

    def __eq__(self, other):
        return isinstance(other, _BFloat)

    def __hash__(self):
        return hash("bfloat")


V_BF16 = ir.VectorType(_BFloat(), 2 * VW)
V_I8 = ir.VectorType(I8, 4 * VW)


@dataclass(frozen=True)
class Format:
    """A native kernel and its operand types: ``kind`` ``"bf16"`` (bf16 x
    bf16, f32 accumulators) or ``"vnni"`` (8-bit integers, s32
    accumulators); ``a_pt``/``b_pt``: A's and B's stored types (after the
    dot's orientation)."""

    kind: str
    a_pt: PT
    b_pt: PT

    @property
    def group(self) -> int:
        """Consecutive k in one 32-bit word."""
        return 2 if self.kind in ("bf16", "amxbf16") else 4

    @property
    def amx(self) -> bool:
        """Whether the kernel runs on AMX tiles (``gemm_amx``)."""
        return self.kind.startswith("amx")

    @property
    def k_step(self) -> int:
        """K is padded with zeros to a multiple of this: a word's group, or a
        tile's 16 groups (64 bytes of k) for AMX."""
        return 16 * self.group if self.amx else self.group

    @property
    def acc_pt(self) -> PT:
        return PT.F32 if self.group == 2 else PT.S32

    @property
    def correction(self) -> int:
        """What each column sum of B adds to C: -128 for s8 x s8 (A packed
        as A + 128), +128 for u8 x u8 (A packed as A - 128), else 0."""
        if self.kind != "vnni" or self.a_pt is not self.b_pt:
            return 0
        return -128 if self.a_pt is PT.S8 else 128

    @property
    def header(self) -> int:
        """Rows of s32 (NR each) ahead of a packed B panel: its corrections."""
        return 1 if self.correction else 0

    @property
    def a_unsigned(self) -> bool:
        """Whether A (as packed) is ``vpdpbusd``'s unsigned operand (else B is)."""
        return (self.a_pt is PT.U8) != bool(self.correction)

    @property
    def tag(self) -> str:
        return f"{self.kind}_{self.a_pt.value}{self.b_pt.value}"


def _vnni(module):
    return intrinsic(module, "llvm.x86.avx512.vpdpbusd.512", ir.FunctionType(V_I32, [V_I32, V_I8, V_I8]))


def _dpbf16(module):
    return intrinsic(module, "llvm.x86.avx512bf16.dpbf16ps.512", ir.FunctionType(V_F32, [V_F32, V_BF16, V_BF16]))


def _product(b, fmt: Format, acc, a_word, b_word):
    """``acc`` + the group products of a broadcast A word and a vector of B words."""
    if fmt.kind == "bf16":
        return b.call(_dpbf16(b.module), [acc, b.bitcast(a_word, V_BF16), b.bitcast(b_word, V_BF16)])
    u, s = (a_word, b_word) if fmt.a_unsigned else (b_word, a_word)
    return b.call(_vnni(b.module), [acc, b.bitcast(u, V_I8), b.bitcast(s, V_I8)])


def micro_kernel(module: ir.Module, fmt: Format, mr: int, nr: int) -> ir.Function:
    """``void uk(i64 kc, ptr a, ptr b, ptr c, i64 ldc, i1 accumulate)``: the
    MR x NR tile of C (f32 or s32, rows ``ldc`` apart) (+)= the packed A
    panel times the packed B panel over ``kc`` k (``ceil(kc / group)``
    words).  The accumulators start from B's header (the corrections) when
    the format has one, else from zero.  AMX formats: ``gemm_amx``'s."""
    if fmt.amx:
        return gemm_amx.micro_kernel(module, fmt, mr, nr)
    name = f"xlac.gemm.uk.{fmt.tag}.{mr}x{nr}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [I64, PTR, PTR, PTR, I64, I1]), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    for arg, nm in zip(fn.args, ("kc", "a", "b", "c", "ldc", "accumulate")):
        arg.name = nm
    kc, a, bp, c, ldc, accumulate = fn.args
    for p in (a, bp, c):
        p.add_attribute("noalias")
    acc_pt = fmt.acc_pt
    ety = types.memory_type(acc_pt)
    vty = V_F32 if fmt.kind == "bf16" else V_I32
    nv = nr // VW
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    g_count = b.udiv(b.add(kc, i64(fmt.group - 1)), i64(fmt.group))
    if fmt.header:
        init = [b.load(b.gep(bp, [i64(j * VW)], inbounds=True, source_etype=I32), typ=V_I32, align=64)
                for j in range(nv)]
        data = b.gep(bp, [i64(nr)], inbounds=True, source_etype=I32)
    else:
        init = [ir.Constant(vty, None)] * nv
        data = bp
    entry = b.block
    loop = fn.append_basic_block("g")
    exit_ = fn.append_basic_block("store")
    b.branch(loop)
    b.position_at_end(loop)
    g = b.phi(I64, "g")
    g.add_incoming(i64(0), entry)
    phis = []
    for i in range(mr):
        for j in range(nv):
            phi = b.phi(vty, f"acc{i}_{j}")
            phi.add_incoming(init[j], entry)
            phis.append(phi)
    b_row = b.gep(data, [b.mul(g, i64(nr))], inbounds=True, source_etype=I32)
    bvec = [b.load(b.gep(b_row, [i64(j * VW)], inbounds=True, source_etype=I32), typ=V_I32, align=64)
            for j in range(nv)]
    a_row = b.gep(a, [b.mul(g, i64(mr))], inbounds=True, source_etype=I32)
    out = []
    for i in range(mr):
        word = b.load(b.gep(a_row, [i64(i)], inbounds=True, source_etype=I32), typ=I32, align=4)
        aw = splat(b, word, V_I32)
        for j in range(nv):
            out.append(_product(b, fmt, phis[i * nv + j], aw, bvec[j]))
    g_next = b.add(g, i64(1), flags=["nsw", "nuw"])
    g.add_incoming(g_next, b.block)
    for phi, val in zip(phis, out):
        phi.add_incoming(val, b.block)
    b.cbranch(b.icmp_signed("<", g_next, g_count), loop, exit_)
    b.position_at_end(exit_)
    store_tile(b, fn, c, ldc, accumulate, out, mr, nv, VW, ety, vty, 4, integer=fmt.kind == "vnni")
    return fn


# ---------------------------------------------------------------------------
# Packing
# ---------------------------------------------------------------------------

def pack(b: ir.IRBuilder, fmt: Format, view, boff, lo, hi, total, inner0, kc, dst, width: int,
         is_b: bool) -> None:
    """Pack the micro-panels of outer indices [lo, hi) (``lo`` a multiple of
    ``width``, ``hi <= total``), inner (K) indices [inner0, inner0 + kc), of
    ``view`` (a strided operand view: ``gemm_library._View``) into ``dst``
    in the grouped layout above, panel after panel (``panel_words`` apart).
    A's outer index is the row, B's the column.  Values are i64 or ints."""
    if fmt.amx and not is_b:
        gemm_amx.pack_a(b, fmt, view, boff, lo, hi, total, inner0, kc, dst, width)
        return
    spt = view.pt
    group, header = fmt.group, (fmt.header if is_b else 0)
    g_outer = view.gc if is_b else view.gr
    g_inner = view.gr if is_b else view.gc
    flip = bool(fmt.correction) and not is_b
    g_count = words(b, fmt, kc)
    g_full = b.udiv(kc, i64(group))
    pw = b.mul(b.add(g_count, i64(header)), i64(width))
    n_pan = b.sdiv(b.add(b.sub(hi, lo), i64(width - 1)), i64(width))
    with Loop(b, 0, n_pan, 1, "np", vectorize=False) as q:
        outer0 = b.add(lo, b.mul(q, i64(width)))
        valid = imin(b, i64(width), b.sub(total, outer0))
        pdst = b.gep(dst, [b.mul(q, pw)], inbounds=True, source_etype=I32)
        data = b.gep(pdst, [i64(header * width)], inbounds=True, source_etype=I32)
        base = view.element_pointer(b, add(b, boff, g_outer.offset(b, outer0)))
        with b.if_else(b.icmp_signed("==", valid, i64(width))) as (full, edge):
            with full:
                fast = _pack_full_groups(b, fmt, spt, g_outer, g_inner, base, inner0, g_full, data, width,
                                         flip)
                _pack_elements(b, fmt, spt, g_outer, g_inner, base, inner0, kc, g_full if fast else None,
                               g_count, data, width, valid, flip)
            with edge:
                _pack_elements(b, fmt, spt, g_outer, g_inner, base, inner0, kc, None, g_count, data,
                               width, valid, flip)
        if header:
            _column_sums(b, fmt, pdst, data, g_count, width)


def words(b, fmt: Format, kc):
    """The 32-bit words along K of a packed row of A or column of B over a
    K block of ``kc`` (i64): ``kc`` padded to ``k_step``, in groups."""
    return b.mul(b.udiv(b.add(kc, i64(fmt.k_step - 1)), i64(fmt.k_step)), i64(fmt.k_step // fmt.group))


def _is_one(stride) -> bool:
    return isinstance(stride, int) and stride == 1


def _pack_full_groups(b, fmt, spt, g_outer, g_inner, base, inner0, g_full, data, width, flip) -> bool:
    """The whole groups of a full panel, where a layout allows it: K
    unit-stride (a row-major A, a transposed B): one 32-bit load per row or
    column; the outer index unit-stride (a row-major B, a column-major A):
    ``group`` vector loads interleaved by a shuffle.  Returns whether it
    packed them (else the element loop does)."""
    ety = types.memory_type(spt)
    esize = spt.byte_size
    group = fmt.group
    if _is_one(g_inner.stride):
        rel = [g_outer.offset(b, i64(j)) for j in range(width)]
        with Loop(b, 0, g_full, 1, "pw") as gi:
            src = b.gep(base, [add(b, inner0, b.mul(gi, i64(group)))], inbounds=True, source_etype=ety)
            out = b.gep(data, [b.mul(gi, i64(width))], inbounds=True, source_etype=I32)
            for j in range(width):
                w = b.load(b.gep(src, [rel[j]], inbounds=True, source_etype=ety), typ=I32, align=esize)
                if flip:
                    w = b.xor(w, ir.Constant(I32, 0x80808080))
                b.store(w, b.gep(out, [i64(j)], inbounds=True, source_etype=I32), align=4)
        return True
    if _is_one(g_outer.stride):
        vty = ir.VectorType(ety, width)
        with Loop(b, 0, g_full, 1, "pv") as gi:
            k0 = add(b, inner0, b.mul(gi, i64(group)))
            rows = [b.load(b.gep(base, [g_inner.offset(b, add(b, k0, i64(s)))], inbounds=True, source_etype=ety),
                        typ=vty, align=esize) for s in range(group)]
            words = _interleave(b, rows, width)
            if flip:
                words = b.xor(words, ir.Constant(words.type, [0x80] * (width * group)))
            b.store(words, b.gep(data, [b.mul(gi, i64(width))], inbounds=True, source_etype=I32),
                    align=min(64, 4 * (width & -width)))
        return True
    return False


def _interleave(b, rows: list, width: int):
    """``out[j*n + s] = rows[s][j]`` for the ``n`` vectors ``rows`` (2 or 4) of ``width`` lanes."""
    n = len(rows)
    ity = ir.VectorType(I32, 2 * width)
    pair = lambda x, y: b.shuffle_vector(x, y, ir.Constant(ity, list(range(2 * width))))  # noqa: E731
    if n == 2:
        lo, hi = rows
    else:
        lo, hi = pair(rows[0], rows[1]), pair(rows[2], rows[3])
    mask = [s * width + j for j in range(width) for s in range(n)]
    return b.shuffle_vector(lo, hi, ir.Constant(ir.VectorType(I32, n * width), mask))


def _pack_elements(b, fmt, spt, g_outer, g_inner, base, inner0, kc, g_start, g_count, data, width, valid,
                   flip) -> None:
    """Groups [g_start, g_count) (all when ``g_start`` is None) of a panel
    element by element: rows/columns past ``valid`` and k past ``kc`` are zeros."""
    ety = types.memory_type(spt)
    esize = spt.byte_size
    group = fmt.group
    start = i64(0) if g_start is None else g_start
    with Loop(b, start, g_count, 1, "eg", vectorize=False) as gi:
        with Loop(b, 0, width, 1, "ej", vectorize=False) as j:
            out = b.gep(data, [b.mul(b.add(b.mul(gi, i64(width)), j), i64(group))], inbounds=True,
                        source_etype=ety)
            src_j = b.gep(base, [g_outer.offset(b, j)], inbounds=True, source_etype=ety)
            for s in range(group):
                k = b.add(b.mul(gi, i64(group)), i64(s))
                p = b.gep(out, [i64(s)], inbounds=True, source_etype=ety)
                b.store(ir.Constant(ety, 0x80 if flip else 0), p, align=esize)
                ok = b.and_(b.icmp_signed("<", j, valid), b.icmp_signed("<", k, kc))
                with b.if_then(ok):
                    v = b.load(b.gep(src_j, [g_inner.offset(b, add(b, inner0, k))], inbounds=True,
                                     source_etype=ety), typ=ety, align=esize)
                    if flip:
                        v = b.xor(v, ir.Constant(ety, 0x80))
                    b.store(v, p, align=esize)


def _column_sums(b, fmt: Format, pdst, data, g_count, width: int) -> None:
    """The header of a packed B panel: ``correction`` times each column's sum
    over the panel's k (``vpdpbusd`` of the B words against ones)."""
    ones = ir.Constant(V_I32, [0x01010101] * VW)
    b_signed = fmt.a_unsigned
    for jv in range(width // VW):
        hp = b.gep(pdst, [i64(jv * VW)], inbounds=True, source_etype=I32)
        b.store(ir.Constant(V_I32, None), hp, align=64)
        with Loop(b, 0, g_count, 1, "cs", vectorize=False) as gi:
            w = b.load(b.gep(data, [b.add(b.mul(gi, i64(width)), i64(jv * VW))], inbounds=True, source_etype=I32),
                       typ=V_I32, align=64)
            u, s = (ones, w) if b_signed else (w, ones)
            acc = b.load(hp, typ=V_I32, align=64)
            b.store(b.call(_vnni(b.module), [acc, b.bitcast(u, V_I8), b.bitcast(s, V_I8)]), hp, align=64)
        corr = b.mul(b.load(hp, typ=V_I32, align=64), ir.Constant(V_I32, [fmt.correction] * VW))
        b.store(corr, hp, align=64)
