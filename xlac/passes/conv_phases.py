"""A convolution of a base-dilated input as one convolution per output phase.

The input gradient of a strided convolution is a convolution of the output
gradient dilated by the stride (``lhs_dilate=2x2``): three quarters of the
dilated input are holes, and a convolution computed as written (the implicit
GEMM too) multiplies every window position by them.  XLA:CPU's backward-input
convolution skips them.  Here the output is split by phase: along a spatial
dimension of base dilation ``D``, the outputs ``y = D*y' + r`` read real input
elements only through the kernel taps ``ky = c + D*t`` with
``c = (pad_low - r) mod D``, at input ``y' + t + q`` (``q = (r + c -
pad_low) / D``, exact).  So each phase is a plain convolution of the
undilated input with the kernel sliced at those taps (stride ``D``), padded
by ``-q`` low (negative padding allowed) and enough high to give that
phase's outputs, ``ceil(O / D)`` of them (zeros past the phase's own).  The
phases are then interleaved into the output: along each such dimension, every
phase reshaped to one more dimension of size 1 after it, the ``D`` of them
concatenated along that one and the pair merged (``y' * D + r``), the rest
past ``O`` sliced off; a loop kernel of reshapes and concatenations that
reads every phase once.  (Placed back with interior-padded pads and
added, the phases had been ``prod(D)`` kernels writing the whole output and
an add reading them all.)  The same products are summed (in another order), about
``1/prod(D)`` of the work.

Applies to convolutions with a base dilation above 1, window strides and
window dilations of 1, no window reversal and no feature or batch groups, of
at least :data:`MIN_FLOPS` as written (a small one stays one kernel rather
than several: compile time).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..hlo.ir import HloInstruction
from ..hlo.window import Window, WindowDimension, conv_dimension_numbers_of, format_window, window_of
from ..shape import Shape

#: Convolutions with fewer multiply-adds (as written, holes included) than
#: this stay as they are: each phase is a kernel of its own to compile.
MIN_FLOPS = 1 << 24


def why_not(inst: HloInstruction) -> str | None:
    """Why convolution ``inst`` is not split by output phase, or None."""
    a = inst.attrs
    if int(str(a.get("feature_group_count", 1))) != 1 or int(str(a.get("batch_group_count", 1))) != 1:
        return "grouped"
    window = window_of(a).dimensions
    if not window or all(wd.base_dilation == 1 for wd in window):
        return "no base dilation"
    if any(wd.stride != 1 or wd.window_dilation != 1 or wd.window_reversal for wd in window):
        return "a window stride, window dilation or reversal"
    if not inst.shape.is_array or 0 in inst.shape.dimensions or any(0 in o.shape.dimensions for o in inst.operands):
        return "empty"
    dn = conv_dimension_numbers_of(a)
    taps = math.prod(wd.size for wd in window)
    features = inst.operands[1].shape.dimensions[dn.kernel_input_feature_dimension]
    if inst.shape.element_count() * taps * features < MIN_FLOPS:
        return f"fewer than {MIN_FLOPS} multiply-adds"
    return None


def _phase(wd: WindowDimension, r: int, n: int, o: int):
    """``(c, taps, q, outputs)`` of phase ``r`` along a spatial dimension with
    window ``wd``, ``n`` input and ``o`` output elements."""
    d = wd.base_dilation
    c = (wd.padding_low - r) % d
    taps = -(-(wd.size - c) // d) if c < wd.size else 0
    outputs = -(-(o - r) // d) if o > r else 0
    return c, taps, (r + c - wd.padding_low) // d, outputs


def conv_phases(inst: HloInstruction, rw) -> HloInstruction:
    """The value of convolution ``inst`` (``why_not(inst)`` is None) as its
    phases' convolutions interleaved."""
    x, w = inst.operands[:2]
    dn = conv_dimension_numbers_of(inst.attrs)
    window = window_of(inst.attrs).dimensions
    et = inst.shape.element_type
    zero = rw.create("constant", Shape(et, ()), [], {"literal": np.zeros((), et.dtype)})
    # Every phase's array: ceil(O / D) outputs along each dilated dimension.
    full = list(inst.shape.dimensions)
    for wd, do in zip(window, dn.output_spatial_dimensions):
        full[do] = -(-full[do] // wd.base_dilation)
    arrays = {}
    for rs in itertools.product(*(range(wd.base_dilation) for wd in window)):
        phases = [_phase(wd, r, x.shape.dimensions[di], inst.shape.dimensions[do])
                  for wd, r, di, do in zip(window, rs, dn.input_spatial_dimensions, dn.output_spatial_dimensions)]
        if any(taps == 0 or outputs == 0 for _, taps, _, outputs in phases):
            # reads only holes (or has no outputs): zeros
            arrays[rs] = rw.create("broadcast", Shape(et, full), [zero], {"dimensions": ()})
            continue
        kernel_slice = [(0, n, 1) for n in w.shape.dimensions]
        out_dims = list(inst.shape.dimensions)
        sub_window, padding = [], [(0, 0, 0)] * inst.shape.rank
        for wd, (c, taps, q, outputs), dk, di, do in zip(
                window, phases, dn.kernel_spatial_dimensions, dn.input_spatial_dimensions,
                dn.output_spatial_dimensions):
            d = wd.base_dilation
            kernel_slice[dk] = (c, c + (taps - 1) * d + 1, d)
            out_dims[do] = outputs
            sub_window.append(WindowDimension(taps, 1, -q, outputs - 1 + taps - x.shape.dimensions[di] + q))
            padding[do] = (0, full[do] - outputs, 0)
        w_dims = [(hi - lo + st - 1) // st for lo, hi, st in kernel_slice]
        sub_w = rw.create("slice", Shape(w.shape.element_type, w_dims), [w], {"slice": tuple(kernel_slice)})
        attrs = dict(inst.attrs)
        attrs["window"] = format_window(Window(tuple(sub_window)))
        part = rw.create("convolution", Shape(et, out_dims, inst.shape.layout), [x, sub_w], attrs)
        if out_dims != full:
            part = rw.create("pad", Shape(et, full), [part, zero], {"padding": tuple(padding)})
        arrays[rs] = part
    # Interleave, the last dilated dimension first: the phases that differ
    # only in its r become one array of D times its length.
    dims = list(full)
    for k in reversed(range(len(window))):
        d, do = window[k].base_dilation, dn.output_spatial_dimensions[k]
        if d == 1:
            arrays = {rs[:k]: a for rs, a in arrays.items()}
            continue
        apart = dims[:do + 1] + [1] + dims[do + 1:]
        joined = dims[:do + 1] + [d] + dims[do + 1:]
        dims[do] *= d
        groups: dict = {}
        for rs, a in sorted(arrays.items()):
            groups.setdefault(rs[:k], []).append(rw.create("reshape", Shape(et, apart), [a]))
        arrays = {key: rw.create("reshape", Shape(et, dims),
                                 [rw.create("concatenate", Shape(et, joined), parts, {"dimensions": (do + 1,)})])
                  for key, parts in groups.items()}
    (out,) = arrays.values()
    if dims != list(inst.shape.dimensions):
        out = rw.create("slice", Shape(et, inst.shape.dimensions), [out],
                        {"slice": tuple((0, n, 1) for n in inst.shape.dimensions)})
    return out
