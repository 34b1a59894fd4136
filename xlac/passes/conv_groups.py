"""A grouped convolution as one convolution per group.

With ``feature_group_count = G`` (spec: *ConvWithGeneralPadding*), output
features ``[g*O/G, (g+1)*O/G)`` are the convolution of input features
``[g*C/G, (g+1)*C/G)`` with the same output features of the kernel; with
``batch_group_count = G`` (a grouped convolution's kernel gradient) they are
the convolution of input batch elements ``[g*N/G, (g+1)*N/G)`` with them.
Each group is a plain convolution of a slice of the input and a slice of the
kernel, and the groups' results are concatenated along the output feature
dimension.  Plain convolutions run on the implicit GEMM (``kernels/conv_gemm.py``)
or im2col + a native dot, where a grouped one has only the elemental loop
(an 8x32x32x64 f32 3x3 convolution in 4 groups: 31 ms as one grouped loop
against 10 ms for XLA:CPU's Eigen kernel on the 2-core EPYC).  The same
products are summed in the same order per output element.

Applies to convolutions of at most :data:`MAX_GROUPS` groups, each reading at
least :data:`MIN_GROUP_FEATURES` input features and producing at least as
many output features (a depthwise convolution, one feature per group, stays
one elemental loop: vectorised along the features, no contraction to
block), of at least :data:`MIN_FLOPS` multiply-adds (a small one stays one
kernel: each group is a kernel to compile, though structurally identical
ones are emitted once).
"""
from __future__ import annotations

from ..hlo.ir import HloInstruction
from ..hlo.window import conv_dimension_numbers_of
from ..shape import Shape
from .rewriter import slice_along

#: Groups at most: more are as many kernels and slices.
MAX_GROUPS = 32
#: Input and output features per group at least: narrower groups are mostly
#: packing overhead for a GEMM.
MIN_GROUP_FEATURES = 8
#: Convolutions with fewer multiply-adds stay one kernel (the elemental loop).
MIN_FLOPS = 1 << 20


def _groups(inst: HloInstruction) -> tuple[int, int]:
    a = inst.attrs
    return int(str(a.get("feature_group_count", 1))), int(str(a.get("batch_group_count", 1)))


def why_not(inst: HloInstruction) -> str | None:
    """Why convolution ``inst`` is not split into one convolution per group, or None."""
    fgc, bgc = _groups(inst)
    groups = max(fgc, bgc)
    if groups == 1:
        return "not grouped"
    if fgc > 1 and bgc > 1:
        return "both feature and batch groups"
    if groups > MAX_GROUPS:
        return f"more than {MAX_GROUPS} groups"
    if not inst.shape.is_array or 0 in inst.shape.dimensions or any(0 in o.shape.dimensions for o in inst.operands):
        return "empty"
    dn = conv_dimension_numbers_of(inst.attrs)
    kernel = inst.operands[1].shape
    in_features = kernel.dimensions[dn.kernel_input_feature_dimension]
    out_features = kernel.dimensions[dn.kernel_output_feature_dimension] // groups
    if min(in_features, out_features) < MIN_GROUP_FEATURES:
        return f"fewer than {MIN_GROUP_FEATURES} input or output features per group"
    taps = kernel.element_count() // (in_features * out_features * groups)
    if inst.shape.element_count() * taps * in_features < MIN_FLOPS:
        return f"fewer than {MIN_FLOPS} multiply-adds"
    return None


def _slice(rw, x: HloInstruction, dim: int, group: int, groups: int) -> HloInstruction:
    """Group ``group`` of ``groups`` equal parts of ``x`` along ``dim``."""
    size = x.shape.dimensions[dim] // groups
    return slice_along(rw, x, dim, group * size, (group + 1) * size, x.shape.layout)


def conv_groups(inst: HloInstruction, rw) -> HloInstruction:
    """The value of convolution ``inst`` (``why_not(inst)`` is None) as the
    concatenation of its groups' convolutions along the output features."""
    x, w = inst.operands[:2]
    dn = conv_dimension_numbers_of(inst.attrs)
    fgc, bgc = _groups(inst)
    groups = max(fgc, bgc)
    x_dim = dn.input_feature_dimension if fgc > 1 else dn.input_batch_dimension
    out_dims = list(inst.shape.dimensions)
    out_dims[dn.output_feature_dimension] //= groups
    attrs = {k: v for k, v in inst.attrs.items() if k not in ("feature_group_count", "batch_group_count")}
    parts = []
    for g in range(groups):
        xg = _slice(rw, x, x_dim, g, groups)
        wg = _slice(rw, w, dn.kernel_output_feature_dimension, g, groups)
        parts.append(rw.create("convolution", Shape(inst.shape.element_type, out_dims, inst.shape.layout),
                               [xg, wg], attrs))
    return rw.create("concatenate", inst.shape, parts, {"dimensions": (dn.output_feature_dimension,)})
