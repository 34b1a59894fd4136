"""DynamicPadder: dynamic dimensions become padded static arrays plus s32 sizes.

XLA's ``DynamicPadder``, the way xlac runs dynamic shapes: after this pass no
shape of the module is dynamic.  Every value with a dynamic dimension
(``f32[<=10]``) is its padded array (``f32[10]``, the bound's worth of
elements; past the size, the padding holds whatever the computation put
there), and the size of each dynamic dimension is an ``s32[]`` value computed
next to it by the size rules of :mod:`xlac.hlo.dynamic`:

* ``set-dimension-size(x, n)`` is ``x``, its size ``clamp(0, n, bound)``;
  ``get-dimension-size`` is the size (a constant when it is static);
* elementwise ops, broadcast, transpose, slice, reshapes that keep the valid
  elements a prefix, tuple and get-tuple-element work on the padded arrays
  as they are;
* ops that would read the padding are made not to: a reduce selects its init
  value past the size (only the valid elements are combined: the spec's
  padding-aware reduction), a dot zeroes the padding of its contracting
  dimensions, a pad puts its padding value there, a reverse moves the valid
  elements back to the front (pad + dynamic-slice), a concatenate along a
  dynamic dimension writes each operand at the sum of the sizes before it
  (dynamic-update-slice), a reshape merging a dynamic dimension that is not
  the major-most gathers the valid elements together first (and a reshape
  splitting a group into dimensions whose dynamic one is not the major-most
  spreads them out again, a gather), a one-element dynamic-slice of a dynamic
  dimension starts within the valid elements;
* a sort along a dynamic dimension gets one more operand (which elements are
  valid) and a comparator that orders valid before invalid (XLA's
  ``RewriteDynamicSort``): the padding sorts last;
* a reduce-window's windows over a dynamic dimension all lie inside the valid
  elements (the size rule counts only those), so it runs as it is;
* a gather's start into a dynamic dimension is clamped to the valid elements;
  a scatter's index is made out of bounds (skipping its window) for padded
  updates and for windows that do not fit the operand's valid elements;
* ``dynamic-reshape`` and ``real-dynamic-slice`` (sizes from operands) are
  gathers from the operand (its valid elements gathered together first for
  a dynamic-reshape), whose clamped starts keep reads inside it;
* an op without a size rule refuses dynamic operands (``UnsupportedError``
  naming the op and the dimension).

The entry computation's signature changes (:class:`DynamicSignature`): each
dynamic dimension of a parameter gets an ``s32[]`` parameter after the others
holding its size, and the result becomes ``(result, size, size, ...)``: the
padded result and the size of each dynamic dimension of its leaves.  The
executables (``xlac.jit``: arrays of the actual sizes in and out; AOT: the
extra parameters and results, documented in the header) take care of it.
Dynamic values cross conditionals and while loops as XLA's DynamicPadder
passes them: a branch's (a loop condition's and body's) parameter becomes
``(padded value, sizes...)`` at the dimensions it declares dynamic, and a
branch (a loop body) returns ``(padded result, sizes...)`` at the dimensions
the conditional's result (the loop state) has dynamic; the caller wraps the
operand and unwraps the result.  Each call site gets its own padded copy of
the computations it calls (another caller may pass other sizes), and the
originals are dropped.  Calls are inlined first; a dynamic operand of any
other called computation (scan, ...) is refused by its op.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError
from ..hlo import dynamic
from ..hlo.ir import HloComputation, HloInstruction, HloModule, fresh_name
from ..shape import PRED, S32, PrimitiveType, Shape
from .call_inliner import CallInliner

__all__ = ["DynamicPadder", "DynamicSignature", "pad_dynamic", "is_dynamic_module", "REPLACED_OPCODES"]

#: Opcodes the pass replaces (by a size, by their operand, by a gather): no code of their own.
REPLACED_OPCODES = frozenset({"get-dimension-size", "set-dimension-size", "dynamic-reshape",
                              "real-dynamic-slice"})


@dataclass(frozen=True)
class DynamicSignature:
    """How the padded entry relates to the dynamic one.

    ``parameter_shapes``/``result_shape``: the entry's signature as declared
    (dynamic).  ``parameter_sizes``: ``(parameter number, dimension)`` of each
    ``s32[]`` parameter appended, in order.  ``result_sizes``: ``(result leaf,
    dimension)`` of each size after the padded result in the new root tuple.
    """

    parameter_shapes: tuple
    result_shape: Shape
    parameter_sizes: tuple
    result_sizes: tuple


def is_dynamic_module(module: HloModule) -> bool:
    """Whether any instruction of ``module`` has a dynamic shape."""
    return any(inst.shape.is_dynamic for inst in module.instructions())


def _needs_padding(module: HloModule) -> bool:
    return any(inst.shape.is_dynamic or inst.opcode in REPLACED_OPCODES for inst in module.instructions())


def pad_dynamic(module: HloModule) -> DynamicSignature | None:
    """Rewrite ``module`` in place (calls inlined, then padded; a module without
    dynamic shapes or size ops is left alone).  Returns how the entry's
    signature changed, or None when it did not (no dynamic parameter or result)."""
    if not _needs_padding(module):
        return None
    CallInliner().run(module)
    entry = module.entry
    parameters, result = tuple(p.shape for p in entry.parameters), entry.root.shape
    names = module.name_uniquer()
    copied: set = set()
    module.sort_computations()
    param_sizes, result_sizes = _Padding(entry, names, copied).run(entry=True)
    for comp in reversed(list(module.computations)):     # callers first: they copy their callees
        if comp is not entry and id(comp) not in copied:
            _Padding(comp, names, copied).run(entry=False)
    if copied:
        module.drop_uncalled_computations()
    if not any(s.is_dynamic for s in parameters + (result,)):
        return None
    return DynamicSignature(parameters, result, tuple(param_sizes), tuple(result_sizes))


class DynamicPadder:
    """Pass: :func:`pad_dynamic` (the entry's signature changes as it says)."""

    name = "dynamic-padder"

    def run(self, module: HloModule) -> bool:
        changed = _needs_padding(module)
        pad_dynamic(module)
        return changed


# ---------------------------------------------------------------------------------------
# Building s32 sizes and masks
# ---------------------------------------------------------------------------------------

class _Builder(dynamic.SizeArith):
    """Sizes as ``s32[]`` instructions appended to ``comp`` (sorted into place
    at the end), plus the instructions the fixes need."""

    def __init__(self, comp: HloComputation, names):
        self.comp, self.names = comp, names
        self._constants: dict = {}

    def emit(self, opcode: str, *operands, attrs=None, shape: Shape) -> HloInstruction:
        inst = HloInstruction(opcode, shape, list(operands), attrs or {}, self.names(opcode))
        return self.comp.add_instruction(inst)

    def runtime(self, opcode: str, a, b):
        return self.emit(opcode, self.size(a), self.size(b), shape=Shape(S32, ()))

    def size(self, v) -> HloInstruction:
        """An ``s32[]`` instruction holding size ``v`` (an int or one already)."""
        if isinstance(v, HloInstruction):
            return v
        if v not in self._constants:
            self._constants[v] = self.constant(np.int32(v))
        return self._constants[v]

    def element(self, vector: HloInstruction, k: int) -> HloInstruction:
        """Element ``k`` of an integer vector, as an ``s32[]`` size."""
        et = vector.shape.element_type
        one = self.emit("slice", vector, attrs={"slice": ((k, k + 1, 1),)}, shape=Shape(et, (1,)))
        return self.s32(self.emit("reshape", one, shape=Shape(et, ())))

    def s32(self, x: HloInstruction) -> HloInstruction:
        """``x`` (integers) converted to s32 where it is not."""
        if x.shape.element_type is S32:
            return x
        return self.emit("convert", x, shape=Shape(S32, x.shape.dimensions))

    def positions(self, shape: Shape, strides) -> HloInstruction:
        """``s32[shape]`` holding ``sum(i_d * strides[d])`` at index ``i`` (strides:
        sizes, None for a dimension left out)."""
        out = None
        for d, stride in enumerate(strides):
            if stride is None or shape.dimensions[d] == 1:
                continue
            term = self.emit("iota", attrs={"iota_dimension": d}, shape=shape)
            if not (isinstance(stride, int) and stride == 1):
                term = self.emit("multiply", term, self.broadcast(self.size(stride), shape), shape=shape)
            out = term if out is None else self.emit("add", out, term, shape=shape)
        return out if out is not None else self.broadcast(self.size(0), shape)

    def constant(self, value: np.ndarray) -> HloInstruction:
        value = np.asarray(value)
        return self.emit("constant", attrs={"literal": value},
                        shape=Shape(PrimitiveType.from_dtype(value.dtype), value.shape))

    def zero(self, shape: Shape) -> HloInstruction:
        return self.constant(np.zeros((), shape.dtype))

    def mask(self, x: HloInstruction, sizes, dims, fill: HloInstruction) -> HloInstruction:
        """``x`` with ``fill`` (a scalar) past ``sizes`` in dimensions ``dims``."""
        shape = x.shape.static()
        keep = None
        for d in dims:
            s = sizes[d]
            if isinstance(s, int) and s == shape.dimensions[d]:
                continue
            index = self.emit("iota", attrs={"iota_dimension": d}, shape=Shape(S32, shape.dimensions))
            limit = self.broadcast(self.size(s), Shape(S32, shape.dimensions))
            inside = self.emit("compare", index, limit, attrs={"direction": "LT"},
                              shape=Shape(PRED, shape.dimensions))
            keep = inside if keep is None else self.emit("and", keep, inside, shape=inside.shape)
        if keep is None:
            return x
        plain = Shape(shape.element_type, shape.dimensions)
        return self.emit("select", keep, x, self.broadcast(fill, plain), shape=plain)

    def broadcast(self, scalar: HloInstruction, shape: Shape) -> HloInstruction:
        return self.emit("broadcast", scalar, attrs={"dimensions": ()}, shape=shape)


# ---------------------------------------------------------------------------------------
# One computation
# ---------------------------------------------------------------------------------------

class _Padding:
    """The walk over one computation: sizes of every instruction, fixes,
    replacements applied at the end (so that sizes stay keyed by the original
    instructions during the walk)."""

    def __init__(self, comp: HloComputation, names, copied: set):
        self.comp = comp
        self.b = _Builder(comp, names)
        self.copied = copied            # ids of computations replaced by padded copies
        self.sizes: dict[int, object] = {}
        self.replaced: dict[int, HloInstruction] = {}
        self.replacements: list = []

    def run(self, entry: bool, carried=None, returned=None) -> tuple:
        """Pad the computation.  ``carried``/``returned`` (a called computation's
        dynamic dimensions, ``(leaf, dimension)``): its parameter arrives as
        ``(padded value, sizes at carried...)`` and its root leaves as
        ``(padded result, sizes at returned...)``."""
        comp = self.comp
        if not entry and not carried and not returned and not any(
                i.shape.is_dynamic or i.opcode in REPLACED_OPCODES for i in comp.instructions):
            return [], []
        if carried is not None:
            self._carry_in(carried)
        param_sizes = []
        for inst in list(comp.instructions):
            if id(inst) in self.sizes:
                continue
            if inst.opcode == "parameter":
                self.sizes[id(inst)] = self._parameter(inst, entry, param_sizes)
            else:
                self._instruction(inst)
        if entry:
            result_sizes = self._result(dynamic.dynamic_dims(comp.root.shape))
        else:
            self._check_static_result(returned or [])
            result_sizes = self._result(returned or [])
        self._finish()
        return param_sizes, result_sizes

    def _carry_in(self, dims: list) -> None:
        """The parameter becomes ``(padded value, its sizes at dims...)``
        (none: it stays, its dynamic dimensions at their bounds)."""
        b, p = self.b, self.comp.parameters[0]
        if not dims:
            self.sizes[id(p)] = dynamic.static_sizes(p.shape)
            return
        value_shape = p.shape.static()
        tup = b.emit("parameter", attrs={"parameter_number": 0},
                     shape=Shape.tuple([value_shape] + [Shape(S32, ())] * len(dims)))
        value = b.emit("get-tuple-element", tup, attrs={"index": 0}, shape=value_shape)
        sizes = [b.emit("get-tuple-element", tup, attrs={"index": 1 + i}, shape=Shape(S32, ()))
                 for i in range(len(dims))]
        for inst in (tup, value, *sizes):
            self.sizes[id(inst)] = dynamic.static_sizes(inst.shape)
        self.sizes[id(p)] = dynamic.sizes_at(p.shape, dims, sizes)
        self._replace(p, value)

    def _parameter(self, p: HloInstruction, entry: bool, added: list):
        if not p.shape.is_dynamic:
            return dynamic.static_sizes(p.shape)
        where = f"parameter {p.parameter_number} ({p.name}: {p.shape}) of computation {self.comp.name}"
        if not entry:
            raise UnsupportedError("a dynamic parameter of a called computation",
                                   f"{where}: dynamic values do not cross while, conditional, map or "
                                   "other called computations")
        if not p.shape.is_array:
            raise UnsupportedError("a tuple entry parameter with dynamic dimensions", where)
        sizes = []
        for d, bound in enumerate(p.shape.dimensions):
            if p.shape.is_dynamic_dimension(d):
                number = len(self.comp.parameters)
                size = self.b.emit("parameter", attrs={"parameter_number": number}, shape=Shape(S32, ()))
                size.name = fresh_name(f"{p.name or 'param'}_size{d}", self.b.names.used)
                added.append((p.parameter_number, d))
                sizes.append(size)
            else:
                sizes.append(bound)
        return tuple(sizes)

    def _instruction(self, inst: HloInstruction) -> None:
        ops = list(inst.operands)
        shapes = [o.shape for o in ops]
        if inst.opcode not in REPLACED_OPCODES and not dynamic.involved(inst.opcode, shapes, inst.shape,
                                                                        inst.attrs) \
                and not any(dynamic.carries_size(self.sizes[id(o)]) for o in ops):
            self.sizes[id(inst)] = dynamic.static_sizes(inst.shape)
            return
        if inst.opcode == "call":
            raise UnsupportedError("call of a dynamic shape", f"{inst.name} in {self.comp.name}: only the "
                                   "entry computation's calls are inlined")
        if inst.opcode in _CALLED:
            _CALLED[inst.opcode](self, inst)
            return
        operand_sizes = [self.sizes[id(o)] for o in ops]
        tree, want = dynamic.propagate(inst.opcode, inst.attrs, shapes, operand_sizes, inst.shape, self.b,
                                       value=lambda i, k=None: ops[i] if k is None else self.b.element(ops[i], k))
        # Not normalised: a dimension declared static keeps the run-time size it is
        # given (see dynamic.propagate); get-dimension-size reads the declared bound.
        self.sizes[id(inst)] = tree
        fix = _FIXES.get(inst.opcode)
        if fix is not None:
            new = fix(self, inst, operand_sizes, want)
            if new is not None and new is not inst:
                self._replace(inst, new)

    def _replace(self, old: HloInstruction, new: HloInstruction) -> None:
        new = self.replaced.get(id(new), new)
        self.replaced[id(old)] = new
        self.replacements.append((old, new))

    def _result(self, dims: list) -> list:
        """The root becomes ``(padded result, sizes at dims...)`` (none: unchanged)."""
        if not dims:
            return []
        root = self.comp.root
        sizes = [self.b.size(n) for n in self.sizes_at(root, dims)]
        shape = Shape.tuple([root.shape.static()] + [s.shape for s in sizes])
        self.comp.root = self.b.emit("tuple", root, *sizes, shape=shape)
        return list(dims)

    def _check_static_result(self, returned: list) -> None:
        """A called computation gives back only the sizes its caller asks for:
        any other dimension its root has dynamic must be at its bound."""
        root = self.comp.root
        dims = [kd for kd in dynamic.dynamic_dims(root.shape) if kd not in returned]
        if any(not isinstance(n, int) for n in self.sizes_at(root, dims)):
            raise UnsupportedError("a dynamic result of a called computation",
                                   f"computation {self.comp.name} returns {root.shape}")

    def sizes_at(self, inst: HloInstruction, dims: list) -> list:
        """The sizes of ``inst`` at ``dims`` (``(leaf, dimension)``): ints or ``s32[]`` instructions."""
        leaves = _flatten(dynamic.normalize(self.sizes[id(inst)], inst.shape))
        return [leaves[k][d] for k, d in dims]

    def _finish(self) -> None:
        comp = self.comp
        comp.compute_users()
        for old, new in self.replacements:
            comp.replace_all_uses(old, self.replaced.get(id(new), new))
        comp.remove_instructions([old for old, _ in self.replacements])
        for inst in comp.instructions:
            inst.shape = inst.shape.static()
        comp.sort_topologically()
        comp.compute_users()


# ---------------------------------------------------------------------------------------
# Called computations: sizes passed in and out beside the padded values
# ---------------------------------------------------------------------------------------

def _conditional(pad: _Padding, inst: HloInstruction) -> None:
    """XLA's way: each branch's parameter becomes ``(padded operand, its
    sizes...)`` at the dimensions the parameter declares dynamic, and each
    branch returns ``(padded result, sizes...)`` at the dimensions the
    conditional's result has dynamic, so the sizes are those of the branch
    taken.  The branches are padded copies (another caller may pass other sizes)."""
    _check(pad, inst)
    returned = dynamic.dynamic_dims(inst.shape)
    ops, branches = list(inst.operands), []
    for k, comp in enumerate(dynamic.branch_computations(inst.attrs)):
        carried = dynamic.dynamic_dims(comp.parameters[0].shape)
        ops[1 + k] = _with_sizes(pad, ops[1 + k], carried)
        branches.append(_padded_copy(pad, comp, carried, returned))
    attrs = dict(inst.attrs)
    if "branch_computations" in attrs:
        attrs["branch_computations"] = tuple(branches)
    else:
        attrs["true_computation"], attrs["false_computation"] = branches
    new = pad.b.emit("conditional", *ops, attrs=attrs, shape=_sized_shape(inst.shape, returned))
    _unpack(pad, inst, new, returned)


def _while(pad: _Padding, inst: HloInstruction) -> None:
    """The loop state becomes ``(padded state, sizes...)`` at the dimensions
    the body's parameter declares dynamic: the condition and the body take
    it so, and the body returns it so (XLA carries the sizes in the state)."""
    _check(pad, inst)
    body, cond = inst.attrs["body"], inst.attrs["condition"]
    carried = dynamic.dynamic_dims(body.parameters[0].shape)
    attrs = dict(inst.attrs, body=_padded_copy(pad, body, carried, carried),
                 condition=_padded_copy(pad, cond, carried, []))
    state = _with_sizes(pad, inst.operands[0], carried)
    new = pad.b.emit("while", state, attrs=attrs, shape=_sized_shape(inst.shape, carried))
    _unpack(pad, inst, new, carried)


def _check(pad: _Padding, inst: HloInstruction) -> None:
    """The size rule's refusals (a size that would be lost)."""
    shapes = [o.shape for o in inst.operands]
    dynamic.propagate(inst.opcode, inst.attrs, shapes, [dynamic.flag_sizes(s) for s in shapes], inst.shape,
                      dynamic.FLAGS)


def _with_sizes(pad: _Padding, x: HloInstruction, dims: list) -> HloInstruction:
    """``(x, its sizes at dims...)``, or ``x`` when there are none."""
    if not dims:
        return x
    sizes = [pad.b.size(n) for n in pad.sizes_at(x, dims)]
    return pad.b.emit("tuple", x, *sizes, shape=_sized_shape(x.shape, dims))


def _sized_shape(shape: Shape, dims: list) -> Shape:
    shape = shape.static()
    return Shape.tuple([shape] + [Shape(S32, ())] * len(dims)) if dims else shape


def _unpack(pad: _Padding, inst: HloInstruction, new: HloInstruction, dims: list) -> None:
    """``inst`` replaced by ``new`` = ``(padded value, sizes at dims...)``."""
    b = pad.b
    if dims:
        value = b.emit("get-tuple-element", new, attrs={"index": 0}, shape=inst.shape.static())
        sizes = [b.emit("get-tuple-element", new, attrs={"index": 1 + i}, shape=Shape(S32, ()))
                 for i in range(len(dims))]
    else:
        value, sizes = new, []
    pad.sizes[id(inst)] = dynamic.sizes_at(inst.shape, dims, sizes)
    pad._replace(inst, value)


def _padded_copy(pad: _Padding, comp: HloComputation, carried: list, returned: list) -> HloComputation:
    """A copy of ``comp`` padded to take its parameter as ``(padded value, sizes
    at carried...)`` and to return ``(padded result, sizes at returned...)``
    (a dimension its parameter declares dynamic but not carried is at its bound)."""
    copy = _copy_computation(pad.b, comp)
    pad.copied.add(id(comp))
    _Padding(copy, pad.b.names, pad.copied).run(entry=False, carried=carried, returned=returned)
    return copy


def _copy_computation(b: _Builder, comp: HloComputation) -> HloComputation:
    """A copy of ``comp`` (fresh names) added to the module, before its callers."""
    copies: dict = {}
    for inst in comp.instructions:
        copies[id(inst)] = HloInstruction(inst.opcode, inst.shape, [copies[id(o)] for o in inst.operands],
                                          dict(inst.attrs), b.names(inst.name))
    module = b.comp.parent
    new = HloComputation(fresh_name(comp.name, {c.name for c in module.computations}),
                         list(copies.values()), root=copies[id(comp.root)])
    new.compute_users()
    new.parent = module
    module.computations.insert(0, new)
    return new


_CALLED = {"conditional": _conditional, "while": _while}


def _flatten(tree) -> list:
    if isinstance(tree, list):
        return [leaf for t in tree for leaf in _flatten(t)]
    return [tree]


# ---------------------------------------------------------------------------------------
# Fixes: ops that would read the padding, and the two size ops
# ---------------------------------------------------------------------------------------

def _get_dimension_size(pad: _Padding, inst, operand_sizes, want):
    (d,) = (int(str(v)) for v in inst.attrs["dimensions"])
    size = dynamic.normalize(operand_sizes[0], inst.operands[0].shape)[d]
    return pad.b.size(size)


def _set_dimension_size(pad: _Padding, inst, operand_sizes, want):
    return inst.operands[0]


def _reduce(pad: _Padding, inst, operand_sizes, want):
    """Past the size, every input reads its init value: only valid elements combine."""
    n = len(inst.operands) // 2
    axes = [int(str(v)) for v in inst.attrs["dimensions"]]
    ops = list(inst.operands)
    for i in range(n):
        ops[i] = pad.b.mask(ops[i], want[i], axes, ops[n + i])
    inst.operands = ops
    return None


def _dot(pad: _Padding, inst, operand_sizes, want):
    """Zeros past the size of the contracting dimensions, on both sides."""
    ops = list(inst.operands)
    for k, name in enumerate(("lhs_contracting_dims", "rhs_contracting_dims")):
        dims = [int(str(v)) for v in inst.attrs.get(name, ())]
        ops[k] = pad.b.mask(ops[k], want[k], dims, pad.b.zero(ops[k].shape))
    inst.operands = ops
    return None


def _pad(pad: _Padding, inst, operand_sizes, want):
    """The operand's own padding becomes the padding value, which the pad then
    extends: high and interior padding land right after the valid elements."""
    x, value = inst.operands
    inst.operands = [pad.b.mask(x, want[0], range(x.shape.rank), value), value]
    return None


def _reverse(pad: _Padding, inst, operand_sizes, want):
    """Reversed, a dynamic dimension's valid elements end the bound: pad with
    the bound and dynamic-slice them back to the front."""
    x = inst.operands[0]
    shape = inst.shape.static()
    sizes = operand_sizes[0]
    dims = [d for d in (int(str(v)) for v in inst.attrs["dimensions"])
            if not (isinstance(sizes[d], int) and sizes[d] == shape.dimensions[d])]
    if not dims:
        return None
    b = pad.b
    flipped = b.emit("reverse", x, attrs=dict(inst.attrs), shape=shape)
    config = tuple((0, shape.dimensions[d] if d in dims else 0, 0) for d in range(shape.rank))
    wide = Shape(shape.element_type, [n + (n if d in dims else 0) for d, n in enumerate(shape.dimensions)])
    padded = b.emit("pad", flipped, b.zero(shape), attrs={"padding": config}, shape=wide)
    starts = [b.size(b.sub(shape.dimensions[d], sizes[d]) if d in dims else 0) for d in range(shape.rank)]
    return b.emit("dynamic-slice", padded, *starts, attrs={"dynamic_slice_sizes": shape.dimensions},
                 shape=shape)


def _concatenate(pad: _Padding, inst, operand_sizes, want):
    """Along a dynamic dimension: each operand written at the sum of the sizes
    before it (later operands overwrite the padding of earlier ones)."""
    (cat,) = (int(str(v)) for v in inst.attrs["dimensions"])
    ops = list(inst.operands)
    if all(isinstance(w[cat], int) and w[cat] == o.shape.dimensions[cat] for o, w in zip(ops[:-1], want)):
        return None
    b = pad.b
    shape = inst.shape.static()
    first = ops[0].shape
    config = tuple((0, shape.dimensions[d] - first.dimensions[d] if d == cat else 0, 0)
                   for d in range(shape.rank))
    acc = b.emit("pad", ops[0], b.zero(shape), attrs={"padding": config}, shape=shape)
    offset = want[0][cat]
    for op, w in zip(ops[1:], want[1:]):
        starts = [b.size(offset if d == cat else 0) for d in range(shape.rank)]
        acc = b.emit("dynamic-update-slice", acc, op, *starts, shape=shape)
        offset = b.add(offset, w[cat])
    return acc


def _reshape(pad: _Padding, inst, operand_sizes, want):
    """Group by group of dimensions that reshape into each other: operand
    dimensions whose valid elements are not a prefix of the group (a dynamic
    dimension that is not the major-most, or two dynamic dimensions) are first
    gathered together (XLA's ``RewriteDynamicReshapeCombineInput``); the
    group's valid elements, row-major, are then a prefix, which a plain
    reshape keeps in place unless the group splits into result dimensions
    whose dynamic one is not the major-most: those are spread out by a gather
    (XLA's ``RewriteDynamicReshapeSplitInput``)."""
    x = inst.operands[0]
    src, dst = x.shape.static(), inst.shape.static()
    sizes = operand_sizes[0]
    if 0 in src.dimensions or 0 in dst.dimensions:
        return None
    bounds = dynamic.common_factors(src.dimensions, dst.dimensions)
    pairs = list(zip(bounds, bounds[1:]))
    gathered = [(i0, i1) for (i0, _), (i1, _) in pairs if _scattered(src, sizes, i0, i1)]
    spread = [(j0, j1) for (_, j0), (_, j1) in pairs if _scattered(dst, pad.sizes[id(inst)], j0, j1)]
    if not gathered and not spread:
        return None
    for i0, i1 in reversed(gathered):             # later groups first: earlier dimensions keep their place
        x = _compact(pad.b, x, sizes, i0, i1)
    if not spread:
        return pad.b.emit("reshape", x, shape=dst)
    return _spread(pad.b, x, pad.sizes[id(inst)], spread, dst)


def _spread(b: _Builder, x: HloInstruction, sizes, groups, dst: Shape) -> HloInstruction:
    """``dst`` from ``x`` whose groups of result dimensions ``groups`` hold their
    valid elements as a row-major prefix: result index ``i`` of a group reads
    element ``sum(i_k * prod(sizes after k))`` of it (a gather at the padded
    positions; the others read themselves)."""
    merged, indices, index_shape = [], [], Shape(S32, dst.dimensions)
    starts = {j0: j1 for j0, j1 in groups}
    k = 0
    while k < dst.rank:
        if k not in starts:
            merged.append(dst.dimensions[k])
            indices.append(b.positions(index_shape, [1 if e == k else None for e in range(dst.rank)]))
            k += 1
            continue
        j1 = starts[k]
        strides, stride = {}, 1
        for e in reversed(range(k, j1)):
            strides[e] = stride
            stride = b.mul(stride, sizes[e])
        merged.append(math.prod(dst.dimensions[k:j1]))
        indices.append(b.positions(index_shape, [strides.get(e) for e in range(dst.rank)]))
        k = j1
    flat = b.emit("reshape", x, shape=Shape(dst.element_type, tuple(merged)))
    return _gather_elements(b, flat, indices, dst)


def _scattered(shape: Shape, sizes, i0: int, i1: int) -> bool:
    """Whether the valid elements of dimensions [i0, i1) merged are not a prefix."""
    short = [d for d in range(i0, i1) if not (isinstance(sizes[d], int) and sizes[d] == shape.dimensions[d])]
    if not short:
        return False
    return len(short) > 1 or any(shape.dimensions[k] != 1 for k in range(i0, short[0]))


def _compact(b: _Builder, x: HloInstruction, sizes, i0: int, i1: int) -> HloInstruction:
    """``x`` with dimensions [i0, i1) merged into one, its valid elements first:
    element j of the merged dimension is the one whose digits in the sizes'
    radices are j's (a gather at the padded positions)."""
    shape = x.shape.static()
    dims = list(shape.dimensions)
    total = int(np.prod(dims[i0:i1]))
    merged = dims[:i0] + [total] + dims[i1:]
    flat = b.emit("reshape", x, shape=Shape(shape.element_type, merged))
    vector = Shape(S32, (total,))
    rest = b.emit("iota", attrs={"iota_dimension": 0}, shape=vector)
    position, stride = None, 1
    for k in reversed(range(i0, i1)):
        radix = b.broadcast(b.size(b.max(sizes[k], 1)), vector)
        digit = rest if k == i0 else b.emit("remainder", rest, radix, shape=vector)
        if k > i0:
            rest = b.emit("divide", rest, radix, shape=vector)
        term = digit if stride == 1 else b.emit("multiply", digit, b.broadcast(b.size(stride), vector),
                                                shape=vector)
        position = term if position is None else b.emit("add", position, term, shape=vector)
        stride *= dims[k]
    attrs = {"offset_dims": tuple(d for d in range(len(merged)) if d != i0), "collapsed_slice_dims": (i0,),
             "start_index_map": (i0,), "index_vector_dim": 1,
             "slice_sizes": tuple(1 if d == i0 else n for d, n in enumerate(merged))}
    return b.emit("gather", flat, position, attrs=attrs, shape=Shape(shape.element_type, merged))


def _dynamic_slice(pad: _Padding, inst, operand_sizes, want):
    """A one-element slice of a dynamic dimension starts within its valid elements."""
    x = inst.operands[0]
    sizes = operand_sizes[0]
    ops = list(inst.operands)
    b = pad.b
    for d in range(x.shape.rank):
        if not x.shape.is_dynamic_dimension(d) or inst.shape.dimensions[d] != 1:
            continue
        start = ops[1 + d]
        last = b.max(b.sub(sizes[d], 1), 0)
        hi = b.emit("convert", b.size(last), shape=start.shape.static())
        ops[1 + d] = b.emit("clamp", b.zero(start.shape), start, hi, shape=start.shape.static())
    inst.operands = ops
    return None


def _dynamic_reshape(pad: _Padding, inst, operand_sizes, want):
    """XLA's DynamicReshape: the operand's valid elements gathered together in
    row-major order (as a reshape merging every dimension), then result
    element ``i`` (within the sizes) reads valid element ``sum(i_d *
    prod(sizes after d))`` of them, a gather whose clamped starts keep every
    read inside the operand whatever the sizes."""
    b = pad.b
    x = inst.operands[0]
    src, dst = x.shape.static(), inst.shape.static()
    out_sizes = pad.sizes[id(inst)]
    flat_shape = Shape(src.element_type, (src.element_count(),))
    if src.element_count() == 0:
        return b.emit("reshape", x, shape=dst)
    if src.rank and _scattered(src, operand_sizes[0], 0, src.rank):
        flat = _compact(b, x, operand_sizes[0], 0, src.rank)
    else:
        flat = b.emit("reshape", x, shape=flat_shape)
    if all(isinstance(n, int) and n == bound for n, bound in zip(out_sizes, dst.dimensions)):
        return b.emit("reshape", flat, shape=dst)
    strides, stride = [], 1
    for n in reversed(out_sizes):
        strides.append(stride)
        stride = b.mul(stride, n)
    index = b.positions(Shape(S32, dst.dimensions), strides[::-1])
    return _gather_elements(b, flat, [index], dst)


def _real_dynamic_slice(pad: _Padding, inst, operand_sizes, want):
    """Result element ``i`` reads operand element ``start + i * stride`` in
    each dimension: a gather, whose clamped starts keep every read inside the
    operand whatever the starts, limits and strides."""
    b = pad.b
    x, start, _, stride = inst.operands
    dst = inst.shape.static()
    index_shape = Shape(S32, dst.dimensions)
    indices = []
    for d in range(dst.rank):
        step = b.max(b.element(stride, d), 1)
        index = b.positions(index_shape, [step if e == d else None for e in range(dst.rank)])
        indices.append(b.emit("add", index, b.broadcast(b.element(start, d), index_shape), shape=index_shape))
    return _gather_elements(b, x, indices, dst)


def _gather_elements(b: _Builder, x: HloInstruction, indices: list, dst: Shape) -> HloInstruction:
    """``dst`` whose element ``i`` is ``x[indices[0][i], indices[1][i], ...]``
    (one ``s32[dst]`` index per dimension of ``x``; clamped into ``x``)."""
    if dst.element_count() == 0:
        return b.broadcast(b.zero(dst), Shape(dst.element_type, dst.dimensions))
    k = len(indices)
    vector = Shape(S32, dst.dimensions + (1,))
    parts = [b.emit("reshape", i, shape=vector) for i in indices]
    whole = parts[0] if k == 1 else b.emit("concatenate", *parts, attrs={"dimensions": (dst.rank,)},
                                           shape=Shape(S32, dst.dimensions + (k,)))
    attrs = {"offset_dims": (), "collapsed_slice_dims": tuple(range(k)), "start_index_map": tuple(range(k)),
             "index_vector_dim": dst.rank, "slice_sizes": (1,) * k}
    return b.emit("gather", x, whole, attrs=attrs, shape=Shape(dst.element_type, dst.dimensions))


def _implicit_broadcast(pad: _Padding, inst, operand_sizes, want):
    """An elementwise binary op whose operands both have run-time sizes in a dimension: where
    one's size is 1 and the other's larger, the first element along that dimension is
    repeated (XLA's implicit broadcast: ``select(size == 1 & size < other, broadcast(slice),
    operand)``); reading the larger at the smaller size needs nothing (a prefix)."""
    if len(inst.operands) != 2 or not inst.shape.is_array:
        return None
    a, b = inst.operands
    if not (a.shape.is_array and b.shape.is_array and a.shape.rank == b.shape.rank == inst.shape.rank):
        return None
    ops = [a, b]
    for d in range(inst.shape.rank):
        sa, sb = operand_sizes[0][d], operand_sizes[1][d]
        if isinstance(sa, int) or isinstance(sb, int) or sa is sb:
            continue                    # a size known at compile time is a static one (XLA's rule)
        for k, (mine, other) in enumerate(((sa, sb), (sb, sa))):
            ops[k] = _repeat_first(pad.b, ops[k], d, mine, other)
    if ops == [a, b]:
        return None
    inst.operands = ops
    return inst


def _repeat_first(b: _Builder, x: HloInstruction, d: int, mine, other) -> HloInstruction:
    """``x`` with its first element along ``d`` repeated over the dimension when ``mine``
    is 1 and ``other`` larger (sizes: ints or ``s32[]`` instructions)."""
    shape = x.shape.static()
    first = Shape(shape.element_type, shape.dimensions[:d] + (1,) + shape.dimensions[d + 1:])
    start = b.emit("slice", x, attrs={"slice": tuple((0, n, 1) for n in first.dimensions)}, shape=first)
    kept = tuple(k for k in range(shape.rank) if k != d)
    row = b.emit("reshape", start, shape=Shape(shape.element_type, tuple(shape.dimensions[k] for k in kept)))
    repeated = b.emit("broadcast", row, attrs={"dimensions": kept}, shape=shape)
    one, scalar = b.size(1), Shape(PRED, ())
    is_one = b.emit("compare", b.size(mine), one, attrs={"direction": "EQ"}, shape=scalar)
    smaller = b.emit("compare", b.size(mine), b.size(other), attrs={"direction": "LT"}, shape=scalar)
    repeat = b.emit("and", is_one, smaller, shape=scalar)
    return b.emit("select", b.broadcast(repeat, Shape(PRED, shape.dimensions)), repeated, x, shape=shape)


def _sort(pad: _Padding, inst, operand_sizes, want):
    """Along a dynamic sort dimension the padding sorts last (XLA's
    ``RewriteDynamicSort``): one more operand says which elements are valid,
    and the comparator puts a valid element before an invalid one."""
    x = inst.operands[0].shape
    (d,) = [int(str(v)) for v in inst.attrs.get("dimensions", ())] or [x.rank - 1]
    size = want[0][d]
    if isinstance(size, int) and size == x.dimensions[d]:
        return None
    b = pad.b
    inside = b.mask(b.broadcast(b.constant(np.bool_(True)), Shape(PRED, x.dimensions)), want[0], [d],
                    b.constant(np.bool_(False)))
    leaves = [o.shape.static() for o in inst.operands]
    attrs = dict(inst.attrs, to_apply=_valid_first(b, inst.attrs["to_apply"]))
    sort = b.emit("sort", *inst.operands, inside, attrs=attrs, shape=Shape.tuple(leaves + [inside.shape]))
    parts = [b.emit("get-tuple-element", sort, attrs={"index": k}, shape=s) for k, s in enumerate(leaves)]
    return b.emit("tuple", *parts, shape=Shape.tuple(leaves)) if inst.shape.is_tuple else parts[0]


def _valid_first(b: _Builder, comp: HloComputation) -> HloComputation:
    """A copy of comparator ``comp`` taking two more ``pred[]`` parameters (is the
    left, the right element valid) that says ``lhs_valid & (comp | !rhs_valid)``:
    valid elements keep their order, invalid ones go after them."""
    copies: dict = {}
    for inst in comp.instructions:
        copies[id(inst)] = HloInstruction(inst.opcode, inst.shape, [copies[id(o)] for o in inst.operands],
                                          dict(inst.attrs), b.names(inst.name))
    scalar = Shape(PRED, ())
    n = comp.num_parameters
    valid = [HloInstruction("parameter", scalar, [], {"parameter_number": n + k}, b.names(name))
             for k, name in enumerate(("lhs_valid", "rhs_valid"))]
    invalid_rhs = HloInstruction("not", scalar, [valid[1]], {}, b.names("not"))
    either = HloInstruction("or", scalar, [copies[id(comp.root)], invalid_rhs], {}, b.names("or"))
    root = HloInstruction("and", scalar, [valid[0], either], {}, b.names("and"))
    insts = list(copies.values()) + valid + [invalid_rhs, either, root]
    module = b.comp.parent
    taken = {c.name for c in module.computations}
    new = HloComputation(fresh_name(f"{comp.name}_valid_first", taken), insts, root=root)
    new.compute_users()
    new.parent = module
    module.computations.insert(0, new)            # callees before callers
    return new


def _gather(pad: _Padding, inst, operand_sizes, want):
    """A start into a dynamic dimension is clamped to its valid elements
    (``min(index, size - slice)``; the gather clamps below at 0 itself), as the
    evaluator's gather of the valid elements clamps."""
    x, idx = inst.operands
    sizes, bounds = operand_sizes[0], x.shape.dimensions
    slices = [int(str(v)) for v in inst.attrs["slice_sizes"]]
    smap = [int(str(v)) for v in inst.attrs["start_index_map"]]
    if all(isinstance(sizes[d], int) and sizes[d] == bounds[d] for d in smap):
        return None
    b = pad.b
    limits = [b.max(b.sub(sizes[d], slices[d]), 0) for d in smap]
    ivd = int(str(inst.attrs["index_vector_dim"]))
    top = _index_vector(b, limits, idx.shape.static(), ivd)
    inst.operands = [x, b.emit("minimum", idx, top, shape=idx.shape.static())]
    return None


def _scatter(pad: _Padding, inst, operand_sizes, want):
    """Updates that must not be scattered get an out-of-bounds index (the
    type's largest value), which skips their window: those past the size of a
    dynamic batch dimension of the indices or updates (XLA pads the indices so),
    and those whose window does not fit the valid elements of a dynamic operand
    dimension (``index > size - window``), as the evaluator skips them."""
    n = (len(inst.operands) - 1) // 2
    x, idx = inst.operands[0], inst.operands[n]
    shape = idx.shape.static()
    a = inst.attrs
    ivd = int(str(a["index_vector_dim"]))
    uwd, iwd, batching = ([int(str(v)) for v in a.get(name, ())]
                          for name in ("update_window_dims", "inserted_window_dims", "input_batching_dims"))
    window = [d for d in range(x.shape.rank) if d not in iwd and d not in batching]
    u = inst.operands[n + 1].shape
    b = pad.b
    bad = []
    for d in range(shape.rank):                 # padded updates of a dynamic batch dimension
        size = want[n][d]
        if d != ivd and not (isinstance(size, int) and size == shape.dimensions[d]):
            bad.append(_past(b, shape, d, size))
    limits, checked = [], False                 # windows past a dynamic operand dimension's size
    for d in (int(str(v)) for v in a["scatter_dims_to_operand_dims"]):
        size, extent = want[0][d], 1 if d not in window else u.dimensions[uwd[window.index(d)]]
        whole = d in window and not (isinstance(want[n + 1][uwd[window.index(d)]], int)
                                     and want[n + 1][uwd[window.index(d)]] == extent)
        if whole or (isinstance(size, int) and size == x.shape.dimensions[d]):
            limits.append(x.shape.dimensions[d] - extent + 1)   # the scatter's own bound check
        else:
            limits.append(b.max(b.add(b.sub(size, extent), 1), 0))
            checked = True
    if checked:
        bad.append(b.emit("compare", idx, _index_vector(b, limits, shape, ivd), attrs={"direction": "GE"},
                          shape=Shape(PRED, shape.dimensions)))
    if not bad:
        return None
    for more in bad[1:]:
        bad[0] = b.emit("or", bad[0], more, shape=bad[0].shape)
    top = b.constant(np.array(np.iinfo(shape.dtype).max, shape.dtype))
    ops = list(inst.operands)
    ops[n] = b.emit("select", bad[0], b.broadcast(top, shape), idx, shape=shape)
    inst.operands = ops
    return None


def _past(b: _Builder, shape: Shape, d: int, size) -> HloInstruction:
    """``pred[shape]``: whether the index along ``d`` is at or past ``size``."""
    index = b.emit("iota", attrs={"iota_dimension": d}, shape=Shape(S32, shape.dimensions))
    return b.emit("compare", index, b.broadcast(b.size(size), Shape(S32, shape.dimensions)),
                  attrs={"direction": "GE"}, shape=Shape(PRED, shape.dimensions))


def _index_vector(b: _Builder, values: list, shape: Shape, ivd: int) -> HloInstruction:
    """An array of ``shape`` (integers) holding ``values[k]`` (sizes) at
    position ``k`` of the index vector dimension ``ivd`` (``ivd == rank``: one
    value everywhere)."""
    et = shape.element_type
    scalars = [b.emit("convert", b.size(v), shape=Shape(et, ())) for v in values]
    if ivd == shape.rank:
        return b.broadcast(scalars[0], shape)
    slab = Shape(et, shape.dimensions[:ivd] + (1,) + shape.dimensions[ivd + 1:])
    parts = [b.broadcast(s, slab) for s in scalars]
    if len(parts) == 1:
        return parts[0]
    return b.emit("concatenate", *parts, attrs={"dimensions": (ivd,)}, shape=shape)


_FIXES = {
    "dynamic-reshape": _dynamic_reshape,
    "real-dynamic-slice": _real_dynamic_slice,
    "dynamic-slice": _dynamic_slice,
    "reshape": _reshape,
    "get-dimension-size": _get_dimension_size,
    "set-dimension-size": _set_dimension_size,
    "reduce": _reduce,
    "dot": _dot,
    "pad": _pad,
    "reverse": _reverse,
    "concatenate": _concatenate,
    "sort": _sort,
    "gather": _gather,
    "scatter": _scatter,
    **{op: _implicit_broadcast for op in ("add", "subtract", "multiply", "divide", "remainder", "maximum",
                                          "minimum", "power", "atan2", "and", "or", "xor", "shift-left",
                                          "shift-right-arithmetic", "shift-right-logical", "complex", "compare")},
}
