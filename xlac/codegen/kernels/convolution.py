"""``convolution`` as an elemental generator (spec: *ConvWithGeneralPadding*).

One output element ``(b, o, y...)`` is a sum over the kernel window and the
input features of its group::

    for each kernel spatial position k (loops, kernel-layout order):
        undilated = y * stride - pad_low + k * rhs_dilation      (per spatial dim)
        skip unless undilated % lhs_dilation == 0 and the input index
             undilated / lhs_dilation is inside the input       (a branch: padding
                                                                 and holes read nothing)
        for iz in 0 .. input features per group:                 (innermost loop)
            acc += lhs[b', g * I + iz, x...] * rhs[o, iz, k...]

with ``g = o // (O / feature_group_count)`` and, for ``batch_group_count > 1``,
``b' = (o // (O / batch_group_count)) * (N / batch_group_count) + b`` (output
feature group g reads lhs batch group g).  ``rhs_reversal`` reads the kernel
backwards.  Bounds checks are emitted only for the spatial dimensions where
the window can leave the input (padding, lhs dilation); the others are proved
in bounds from the static sizes.

Accumulation is in the result type (f16/bf16 in f32, rounded once at the end;
integers wrap); operands are converted to it first (``preferred_element_type``).
This is the correct, simple form.  f32/f64 convolutions without feature or
batch groups run as an implicit GEMM instead (``kernels/conv_gemm.py``,
``docs/conv.md``); this generator is what the other cases use.
"""
from __future__ import annotations

from llvmlite import ir

from ...hlo.ir import HloInstruction
from ...hlo.window import conv_dimension_numbers_of, window_of
from .. import scalar_ops, types
from ..elemental import ElementalEmitter
from ..ir_array import Index, i64
from ..loops import FULL_UNROLL_MAX, for_range, full_unroll_hints

_TRUE = ir.Constant(ir.IntType(1), 1)


def spatial_position(b: ir.IRBuilder, out_pos, k, wd, in_size: int, out_size: int):
    """Input index and in-bounds flag of window position ``k`` for output position
    ``out_pos`` along one window dimension ``wd`` over ``in_size`` input elements.

    Returns ``(index, ok)``; ``ok`` is None when the position is in bounds for
    every output position and window position (proved from the static sizes)."""
    pos = out_pos
    if wd.stride != 1:
        pos = b.mul(pos, i64(wd.stride))
    if wd.padding_low:
        pos = b.sub(pos, i64(wd.padding_low))
    if not (isinstance(k, ir.Constant) and k.constant == 0):
        pos = b.add(pos, k if wd.window_dilation == 1 else b.mul(k, i64(wd.window_dilation)))
    lowest = -wd.padding_low
    highest = (out_size - 1) * wd.stride - wd.padding_low + (wd.size - 1) * wd.window_dilation
    if wd.base_dilation == 1:
        if lowest >= 0 and highest < in_size:
            return pos, None
        return pos, b.icmp_unsigned("<", pos, i64(in_size))  # negative -> huge unsigned
    on_grid = b.icmp_signed("==", b.srem(pos, i64(wd.base_dilation)), i64(0))
    index = b.sdiv(pos, i64(wd.base_dilation))
    return index, b.and_(on_grid, b.icmp_unsigned("<", index, i64(in_size)))


#: Window positions times input features up to which a convolution's inner
#: loops are unrolled completely (see :func:`_unrolled_loops`).
UNROLLED_PRODUCTS_MAX = 64


def _unrolled_loops(features: int, window_sizes: list) -> int:
    """How many of a direct convolution's inner loops (the feature loop, then
    the window loops from the innermost out) are unrolled completely: while
    their trip counts multiply to at most ``UNROLLED_PRODUCTS_MAX``.  LLVM
    unrolls only loops that ask (``jit.optimize``); unrolled, the loop over
    output positions around them vectorises (a DDPM U-Net's small convolutions
    ran 24% slower rolled).  The feature loop counts first: the window loop
    ``m``-th from the innermost is unrolled when the count exceeds ``m``."""
    product, count = 1, 0
    for size in [features] + list(window_sizes):
        product *= size
        if size > FULL_UNROLL_MAX or product > UNROLLED_PRODUCTS_MAX:
            break
        count += 1
    return count


def convolution_generator(em: ElementalEmitter, inst: HloInstruction, gens):
    g_lhs, g_rhs = gens
    dn = conv_dimension_numbers_of(inst.attrs)
    window = window_of(inst.attrs)
    fgc = int(str(inst.attrs.get("feature_group_count", 1)))
    bgc = int(str(inst.attrs.get("batch_group_count", 1)))
    ls, rs = inst.operands[0].shape, inst.operands[1].shape
    pt = inst.shape.element_type
    acc_t = types.accumulation_type(pt)
    lt, rt = ls.element_type, rs.element_type
    N = ls.dimensions[dn.input_batch_dimension]
    O = rs.dimensions[dn.kernel_output_feature_dimension]
    I = rs.dimensions[dn.kernel_input_feature_dimension]
    nsp = dn.num_spatial_dims
    ksizes = [wd.size for wd in window]
    in_sizes = [ls.dimensions[d] for d in dn.input_spatial_dimensions]
    out_sizes = [inst.shape.dimensions[d] for d in dn.output_spatial_dimensions]
    # Kernel spatial loops major-to-minor in the kernel's layout.
    order = sorted(range(nsp), key=lambda k: -rs.layout.minor_to_major.index(dn.kernel_spatial_dimensions[k]))
    empty = I == 0 or 0 in ksizes
    zero = types.constant(acc_t, 0)
    unrolled = _unrolled_loops(I, [ksizes[k] for k in reversed(order)])

    def gen(index: Index):
        b = em.b
        out_b = index.multi[dn.output_batch_dimension]
        out_f = index.multi[dn.output_feature_dimension]
        out_sp = [index.multi[d] for d in dn.output_spatial_dimensions]
        acc = em.alloca(acc_t, "conv.acc")
        b.store(zero, acc)
        if not empty:
            lhs_b = out_b
            if bgc > 1:
                group = b.udiv(out_f, i64(O // bgc))
                lhs_b = b.add(b.mul(group, i64(N // bgc)), out_b)
            f0 = b.mul(b.udiv(out_f, i64(O // fgc)), i64(I)) if fgc > 1 else None
            lmulti = [i64(0)] * ls.rank
            rmulti = [i64(0)] * rs.rank
            lmulti[dn.input_batch_dimension] = lhs_b
            rmulti[dn.kernel_output_feature_dimension] = out_f

            def features():
                def body(iz):
                    lm, rm = list(lmulti), list(rmulti)
                    lm[dn.input_feature_dimension] = iz if f0 is None else b.add(f0, iz)
                    rm[dn.kernel_input_feature_dimension] = iz
                    x = scalar_ops.convert_value(b, g_lhs(Index(lm)), lt, acc_t)
                    y = scalar_ops.convert_value(b, g_rhs(Index(rm)), rt, acc_t)
                    prod = scalar_ops.emit_elementwise(b, "multiply", [x, y], [acc_t, acc_t], acc_t)
                    s = scalar_ops.emit_elementwise(b, "add", [b.load(acc), prod], [acc_t, acc_t], acc_t)
                    b.store(s, acc)
                hints = full_unroll_hints(b.module) if unrolled >= 1 else None
                with for_range(b, I, "conv.iz", loop_id=hints) as iz:
                    body(iz)

            def level(j: int):
                if j == nsp:
                    features()
                    return
                k = order[j]
                wd = window[k]
                hints = full_unroll_hints(b.module) if unrolled > nsp - j else None
                with for_range(b, ksizes[k], f"conv.k{k}", loop_id=hints) as kv:
                    rmulti[dn.kernel_spatial_dimensions[k]] = (
                        b.sub(i64(wd.size - 1), kv) if wd.window_reversal else kv)
                    pos, ok = spatial_position(b, out_sp[k], kv, wd, in_sizes[k], out_sizes[k])
                    lmulti[dn.input_spatial_dimensions[k]] = pos
                    if ok is None:
                        level(j + 1)
                    else:
                        with b.if_then(ok):
                            level(j + 1)
            level(0)
        value = b.load(acc)
        return value if acc_t is pt else scalar_ops.convert_value(b, value, acc_t, pt)
    return gen
