"""A convolution as an explicit im2col and one matrix product, for the native
low-precision GEMM kernels (AMX, AVX512_BF16, AVX512_VNNI).

The implicit-GEMM convolution (``codegen/kernels/conv_gemm.py``) computes in
f32 or f64 only: a bf16 convolution runs widened and an 8-bit integer one as
an exact f32 one.  The GEMM library's native kernels are 2-8x faster than
that on a host with them, and a convolution is a dot once its input is
unrolled::

    cols[b, o..., s*C + c] = padded(x)[b, o*stride + w(s)*rhs_dilation, c]
        (one strided slice of the zero-padded, base-dilated input per window
         position s, concatenated along the features)
    result[b, o..., co] = sum_k cols[b, o..., k] * kernel[s, c, co]   (k = s*C + c)

``cols`` is ``prod(window)`` times the output's pixels times C elements: a
loop fusion writes it once, the dot reads it as a plain row-major matrix.
At the sizes convolutions have, that traffic is small next to the product
(``docs/conv.md`` has the measurements).  Any dim_labels (transposes around
the dot, which layout assignment and the simplifier fold), strides, padding
(negative too), both dilations and window reversal.  Grouped convolutions,
ones whose ``cols`` would exceed :data:`MAX_COLS_BYTES` and windows of more than
:data:`MAX_WINDOW_POSITIONS` are left as they are.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..hlo.ir import HloInstruction
from ..hlo.window import conv_dimension_numbers_of, window_of
from ..shape import Shape

#: The largest im2col matrix (bytes) a convolution is rewritten with; a
#: larger one keeps the implicit GEMM (which needs no such buffer).  bf16
#: 3x3 64 -> 64 against the widened implicit GEMM (2 threads, loaded
#: machine): cols of 29 MB 1.9x faster, 58 MB 1.1x (128 -> 128: 1.6x),
#: 116 MB 0.97x.
MAX_COLS_BYTES = 64 << 20
#: The most window positions a rewritten convolution has: each is a slice
#: and a copy loop of its own (~10 ms of compile time each), and a kernel
#: gradient's window (the whole image: 56 x 56 positions) would be thousands.
MAX_WINDOW_POSITIONS = 49


def why_not(inst: HloInstruction) -> str | None:
    """Why convolution ``inst`` cannot be rewritten as im2col + dot, or None."""
    a = inst.attrs
    if int(str(a.get("feature_group_count", 1))) != 1 or int(str(a.get("batch_group_count", 1))) != 1:
        return "grouped (feature_group_count or batch_group_count > 1)"
    if 0 in inst.shape.dimensions or any(0 in o.shape.dimensions for o in inst.operands[:2]):
        return "empty"
    dn = conv_dimension_numbers_of(a)
    out, rs = inst.shape.dimensions, inst.operands[1].shape
    M = out[dn.output_batch_dimension] * math.prod(out[d] for d in dn.output_spatial_dimensions)
    N = rs.dimensions[dn.kernel_output_feature_dimension]
    K = math.prod(rs.dimensions) // N
    if M <= 1 or N <= 1:
        return "a matrix-vector product"
    positions = math.prod(wd.size for wd in window_of(a))
    if positions > MAX_WINDOW_POSITIONS:
        return f"a window of {positions} positions (more than {MAX_WINDOW_POSITIONS})"
    if M * K * inst.operands[0].shape.element_type.byte_size > MAX_COLS_BYTES:
        return f"its im2col matrix ({M} x {K}) exceeds {MAX_COLS_BYTES >> 20} MB"
    return None


def _transpose(rw, x: HloInstruction, perm: tuple) -> HloInstruction:
    """``x`` with dimension ``perm[i]`` as dimension i (nothing when ``perm`` is the identity)."""
    if perm == tuple(range(len(perm))):
        return x
    dims = tuple(x.shape.dimensions[p] for p in perm)
    return rw.create("transpose", Shape(x.shape.element_type, dims), [x], {"dimensions": perm})


def _columns(rw, inst: HloInstruction, dn, window) -> HloInstruction:
    """The im2col array [batch, output spatial..., prod(window), C] of ``inst``'s input
    (the dot reads it as a matrix: its leading and its last two dimensions are
    each adjacent in memory; no reshape, which a loop fusion would compute per
    element)."""
    x = inst.operands[0]
    et = x.shape.element_type
    nsp = len(window)
    x = _transpose(rw, x, (dn.input_batch_dimension, *dn.input_spatial_dimensions, dn.input_feature_dimension))
    nb, C = x.shape.dimensions[0], x.shape.dimensions[-1]
    spec = ((0, 0, 0),) + tuple((wd.padding_low, wd.padding_high, wd.base_dilation - 1) for wd in window) + \
        ((0, 0, 0),)
    if any(p != (0, 0, 0) for p in spec):
        dims = (nb,) + tuple((n - 1) * wd.base_dilation + 1 + wd.padding_low + wd.padding_high
                             for n, wd in zip(x.shape.dimensions[1:-1], window)) + (C,)
        zero = rw.create("constant", Shape(et, ()), [], {"literal": np.zeros((), et.dtype)})
        x = rw.create("pad", Shape(et, dims), [x, zero], {"padding": spec})
    out_sp = tuple(inst.shape.dimensions[d] for d in dn.output_spatial_dimensions)
    pieces = []
    for pos in itertools.product(*(range(wd.size) for wd in window)):
        starts = [p * wd.window_dilation for p, wd in zip(pos, window)]
        slice_spec = ((0, nb, 1),) + tuple((s, s + (o - 1) * wd.stride + 1, wd.stride)
                                           for s, o, wd in zip(starts, out_sp, window)) + ((0, C, 1),)
        piece = x
        if any(spec_d != (0, n, 1) for spec_d, n in zip(slice_spec, x.shape.dimensions)):
            piece = rw.create("slice", Shape(et, (nb,) + out_sp + (C,)), [x], {"slice": slice_spec})
        pieces.append(rw.create("reshape", Shape(et, (nb,) + out_sp + (1, C)), [piece]))
    # Stacked along a new dimension ahead of the features, not concatenated
    # along them: a loop fusion then copies whole runs of C features.
    return pieces[0] if len(pieces) == 1 else rw.create(
        "concatenate", Shape(et, (nb,) + out_sp + (len(pieces), C)), pieces, {"dimensions": (nsp + 1,)})


def _kernel_matrix(rw, inst: HloInstruction, dn, window) -> HloInstruction:
    """The kernel as [prod(window), I, O], window positions major (reversed where asked)."""
    w = inst.operands[1]
    et = w.shape.element_type
    w = _transpose(rw, w, (*dn.kernel_spatial_dimensions, dn.kernel_input_feature_dimension,
                           dn.kernel_output_feature_dimension))
    reversed_ = tuple(d for d, wd in enumerate(window) if wd.window_reversal)
    if reversed_:
        w = rw.create("reverse", w.shape, [w], {"dimensions": reversed_})
    I, O = w.shape.dimensions[-2:]
    return rw.create("reshape", Shape(et, (math.prod(w.shape.dimensions) // (I * O), I, O)), [w])


def conv_as_dot(inst: HloInstruction, rw, dot_type) -> HloInstruction:
    """The value of convolution ``inst`` (``why_not(inst)`` is None) as im2col and a
    dot whose result is of ``dot_type`` (converted to ``inst``'s type when it differs)."""
    dn = conv_dimension_numbers_of(inst.attrs)
    window = list(window_of(inst.attrs))
    cols = _columns(rw, inst, dn, window)
    kernel = _kernel_matrix(rw, inst, dn, window)
    nsp = len(window)
    attrs = {"lhs_contracting_dims": (nsp + 1, nsp + 2), "rhs_contracting_dims": (0, 1)}
    if "precision_config" in inst.attrs:
        attrs["precision_config"] = inst.attrs["precision_config"]
    out = inst.shape.dimensions
    value = rw.create("dot", Shape(dot_type, cols.shape.dimensions[:nsp + 1] + kernel.shape.dimensions[2:]),
                      [cols, kernel], attrs)
    perm = [0] * len(out)
    perm[dn.output_batch_dimension] = 0
    for k, d in enumerate(dn.output_spatial_dimensions):
        perm[d] = k + 1
    perm[dn.output_feature_dimension] = len(out) - 1
    value = _transpose(rw, value, tuple(perm))
    if dot_type != inst.shape.element_type:
        value = rw.create("convert", Shape(inst.shape.element_type, out), [value])
    return value
