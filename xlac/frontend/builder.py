"""XlaBuilder, XlaOp and XlaComputation: build HLO from Python.

::

    b = xlac.XlaBuilder("axpy")
    x = ops.parameter(b, 0, xlac.shape("f32[1024]"), "x")
    y = ops.parameter(b, 1, xlac.shape("f32[1024]"), "y")
    comp = b.build(2 * x + y)          # XlaComputation
    comp.module                        # HloModule, entry = the built computation
    comp.as_hlo_text()                 # module.to_text()
    comp.program_shape                 # ProgramShape((f32[1024], f32[1024]) -> f32[1024])

Every op (see :mod:`xlac.frontend.ops`) appends one HloInstruction to its
builder, named ``<opcode>.<n>`` and shaped by :mod:`xlac.passes.shape_inference`,
so a bad graph raises :class:`xlac.ShapeError` when it is built, not later.
Computations used by ``reduce``/``call``/... are copied into the caller's
module (once per XlaComputation, with names made unique).
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import numpy as np

from ..hlo.ir import HloComputation, HloInstruction, HloModule
from ..hlo.shape_inference import infer_shape
from ..shape import Shape

__all__ = ["XlaBuilder", "XlaOp", "XlaComputation", "ProgramShape"]


# ---------------------------------------------------------------------------
# XlaOp
# ---------------------------------------------------------------------------

class XlaOp:
    """A value in an XlaBuilder's graph: the builder plus the HloInstruction.

    ``.shape`` is the instruction's Shape.  Python operators build ops:
    ``+ - * / % **``, unary ``-``, ``abs()``, ``& | ^ ~``, ``<< >>`` (``>>`` is
    arithmetic for signed and logical for unsigned integers) and ``@`` (dot).
    A Python or numpy scalar (or array) on either side becomes a constant of the
    XlaOp's element type.  ``== != < <= > >=`` build ``compare`` ops (``pred``
    results), as ``x.eq(y)``, ``x.lt(y)``, ... do; XlaOps still hash by identity,
    so they can be dict keys, and ``bool(x)`` is a TypeError (the value is not
    known while building: use ``ops.select`` or ``ops.conditional``).  These
    operators keep XLA's strict rules (no implicit rank broadcasting, no type
    promotion); inside ``@xlac.jit`` the values are numpy-style tracers instead
    (:mod:`xlac.frontend.tracer`).
    """

    __slots__ = ("builder", "instruction")
    # Make numpy hand `np.float32(2) * x` back to XlaOp.__rmul__ instead of
    # building an object array.
    __array_ufunc__ = None

    def __init__(self, builder: "XlaBuilder", instruction: HloInstruction):
        self.builder = builder
        self.instruction = instruction

    @property
    def shape(self) -> Shape:
        return self.instruction.shape

    @property
    def name(self) -> str:
        return self.instruction.name

    @property
    def dtype(self) -> np.dtype:
        return self.shape.dtype

    def __repr__(self) -> str:
        return f"<XlaOp {self.instruction.name} = {self.shape} {self.instruction.opcode} ({self.builder.name})>"

    # -- arithmetic -------------------------------------------------------
    def __add__(self, o): return _ops.add(self, o)
    def __radd__(self, o): return _ops.add(o, self)
    def __sub__(self, o): return _ops.sub(self, o)
    def __rsub__(self, o): return _ops.sub(o, self)
    def __mul__(self, o): return _ops.mul(self, o)
    def __rmul__(self, o): return _ops.mul(o, self)
    def __truediv__(self, o): return _ops.div(self, o)
    def __rtruediv__(self, o): return _ops.div(o, self)
    def __mod__(self, o): return _ops.rem(self, o)
    def __rmod__(self, o): return _ops.rem(o, self)
    def __pow__(self, o): return _ops.pow(self, o)
    def __rpow__(self, o): return _ops.pow(o, self)
    def __matmul__(self, o): return _ops.dot(self, o)
    def __rmatmul__(self, o): return _ops.dot(o, self)
    def __neg__(self): return _ops.neg(self)
    def __pos__(self): return self
    def __abs__(self): return _ops.abs(self)

    # -- bitwise / logical --------------------------------------------------
    def __and__(self, o): return _ops.and_(self, o)
    def __rand__(self, o): return _ops.and_(o, self)
    def __or__(self, o): return _ops.or_(self, o)
    def __ror__(self, o): return _ops.or_(o, self)
    def __xor__(self, o): return _ops.xor(self, o)
    def __rxor__(self, o): return _ops.xor(o, self)
    def __invert__(self): return _ops.not_(self)
    def __lshift__(self, o): return _ops.shift_left(self, o)
    def __rlshift__(self, o): return _ops.shift_left(o, self)
    def __rshift__(self, o): return _shift_right(self, o, self)
    def __rrshift__(self, o): return _shift_right(o, self, self)

    # -- comparisons as methods ----------------------------------------------
    def eq(self, o, broadcast_dimensions=None): return _ops.eq(self, o, broadcast_dimensions)
    def ne(self, o, broadcast_dimensions=None): return _ops.ne(self, o, broadcast_dimensions)
    def lt(self, o, broadcast_dimensions=None): return _ops.lt(self, o, broadcast_dimensions)
    def le(self, o, broadcast_dimensions=None): return _ops.le(self, o, broadcast_dimensions)
    def gt(self, o, broadcast_dimensions=None): return _ops.gt(self, o, broadcast_dimensions)
    def ge(self, o, broadcast_dimensions=None): return _ops.ge(self, o, broadcast_dimensions)

    # `x == None` stays Python's identity test (False); every array-like value builds a compare.
    def __eq__(self, o): return NotImplemented if o is None else _ops.eq(self, o)  # type: ignore[override]
    def __ne__(self, o): return NotImplemented if o is None else _ops.ne(self, o)  # type: ignore[override]
    def __lt__(self, o): return _ops.lt(self, o)
    def __le__(self, o): return _ops.le(self, o)
    def __gt__(self, o): return _ops.gt(self, o)
    def __ge__(self, o): return _ops.ge(self, o)
    __hash__ = object.__hash__

    def __bool__(self):
        raise TypeError(f"the truth value of {self.name} ({self.shape}) is not known while the "
                        "graph is built; use ops.select / ops.conditional (xlac.lax.cond) "
                        "instead of Python if/and/or")


def not_an_xla_op_hint(value) -> str:
    """For a message about a non-XlaOp operand: how to pass a traced value (a Tracer) to ops."""
    if getattr(type(value), "is_xlac_tracer", False):
        return ("; a traced value inside @xlac.jit goes to xlac.lax (or pass its XlaOp: "
                "tracer.value)")
    return ""


#: The module of the ops functions (``xlac.frontend.ops``), which XlaOp's
#: operators call; ops builds on this module, so the package binds it
#: (``xlac/frontend/__init__.py``: ``bind_operators(ops)``).
_ops = None


def bind_operators(ops_module) -> None:
    """Make XlaOp's operators (``+``, ``@``, ``<<``, ``.eq``, ...) call ``ops_module``'s functions."""
    global _ops
    _ops = ops_module


def _shift_right(lhs, rhs, typed: XlaOp):
    if typed.shape.is_array and typed.shape.element_type.is_unsigned_int:
        return _ops.shift_right_logical(lhs, rhs)
    return _ops.shift_right_arithmetic(lhs, rhs)


# ---------------------------------------------------------------------------
# XlaComputation
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ProgramShape:
    """Parameter shapes (in parameter-number order), their names and the result shape."""

    parameters: tuple
    result: Shape
    parameter_names: tuple = ()

    def __str__(self) -> str:
        names = self.parameter_names or tuple(f"p{i}" for i in range(len(self.parameters)))
        params = ", ".join(f"{n}: {s}" for n, s in zip(names, self.parameters))
        return f"({params}) -> {self.result}"


class XlaComputation:
    """A built computation: ``.module`` is an HloModule whose entry it is.

    Sub-computations (reducers, callees) are in ``module.computations``,
    callees before callers, entry last.
    """

    def __init__(self, module: HloModule):
        self.module = module

    @property
    def name(self) -> str:
        return self.module.entry.name

    @property
    def program_shape(self) -> ProgramShape:
        entry = self.module.entry
        params = entry.parameters
        return ProgramShape(tuple(p.shape for p in params), entry.root.shape,
                            tuple(p.name for p in params))

    def get_program_shape(self) -> ProgramShape:
        return self.program_shape

    @property
    def result_shape(self) -> Shape:
        return self.module.entry.root.shape

    @property
    def parameter_shapes(self) -> list:
        return self.module.entry.parameter_shapes()

    def as_hlo_text(self) -> str:
        """HLO text of the module (``module.to_text()``)."""
        return self.module.to_text()

    def __repr__(self) -> str:
        return f"<XlaComputation {self.name}: {self.program_shape}>"


# ---------------------------------------------------------------------------
# XlaBuilder
# ---------------------------------------------------------------------------

_NAME_OK = re.compile(r"[^A-Za-z0-9_.\-]")


class _NameUniquer:
    """Hands out names not used before (``add``, ``add.1``, ...), HLO-identifier safe."""

    def __init__(self):
        self.used: set[str] = set()

    def get(self, base: str) -> str:
        base = _NAME_OK.sub("_", base or "x")
        if not (base[0].isalpha() or base[0] == "_"):
            base = "_" + base
        name, n = base, 0
        while name in self.used:
            n += 1
            name = f"{base}.{n}"
        self.used.add(name)
        return name


class XlaBuilder:
    """Builds one computation, op by op (spec: *XlaBuilder*).

    ``XlaBuilder(name)``; ops are added by :mod:`xlac.ops` functions; then
    ``build(root=None)`` returns an :class:`XlaComputation` (root defaults to the
    last op added).  Mixing XlaOps of different builders raises ``ValueError``.
    """

    _count = itertools.count(1)

    def __init__(self, name: str = "computation"):
        # A serial number tells apart builders that share a name in messages.
        self.serial = next(XlaBuilder._count)
        self._comp_names = _NameUniquer()
        self._inst_names = _NameUniquer()
        self.name = self._comp_names.get(name)
        self._instructions: list[HloInstruction] = []
        self._next_id = 0
        self._parameters: dict[int, XlaOp] = {}
        # Imported sub-computations, callees first; cache keyed by the XlaComputation.
        self._callees: list[HloComputation] = []
        self._imported: dict[int, tuple[XlaComputation, HloComputation]] = {}

    def __repr__(self) -> str:
        return f"<XlaBuilder {self.name}: {len(self._instructions)} ops>"

    def label(self, other: "XlaBuilder | None" = None) -> str:
        """``'name'`` for messages; ``'name' (builder #n)`` when ``other`` has the same name."""
        if other is not None and other is not self and other.name == self.name:
            return f"{self.name!r} (builder #{self.serial})"
        return repr(self.name)

    # -- adding instructions ------------------------------------------------
    def add_instruction(self, opcode: str, operands=(), attrs: dict | None = None,
                        shape: Shape | None = None, name: str | None = None) -> XlaOp:
        """Append an HLO instruction; its shape comes from shape inference.

        ``shape`` is passed on to :func:`infer_shape` for ops whose result cannot
        be inferred (parameter, constant, iota, broadcast, reshape, convert, ...).
        Raises ShapeError (the op is then not added).
        """
        operands = list(operands)
        self.check_operands(opcode, operands)
        attrs = dict(attrs or {})
        result = infer_shape(opcode, [o.shape for o in operands], attrs, shape=shape)
        self._next_id += 1
        inst = HloInstruction(opcode, result, [o.instruction for o in operands], attrs,
                              name=self._inst_names.get(name or f"{opcode}.{self._next_id}"))
        self._instructions.append(inst)
        return XlaOp(self, inst)

    def check_operands(self, what: str, operands) -> None:
        """ValueError unless every operand is an XlaOp of this builder."""
        for i, o in enumerate(operands):
            if not isinstance(o, XlaOp):
                raise TypeError(f"{what}: operand {i} must be an XlaOp, got {type(o).__name__}"
                                + not_an_xla_op_hint(o))
            if o.builder is not self:
                raise ValueError(f"{what}: operand {i} ({o.name}) belongs to builder "
                                 f"{o.builder.label(self)}, not {self.label(o.builder)}; XlaOps of "
                                 "different builders cannot be mixed")

    def register_parameter(self, number: int, op_factory) -> XlaOp:
        if number in self._parameters:
            raise ValueError(f"parameter: builder {self.name!r} already has parameter {number} "
                             f"({self._parameters[number].name})")
        op = op_factory()
        self._parameters[number] = op
        return op

    def import_computation(self, computation: "XlaComputation", op: str = "import_computation",
                           argument: str = "computation") -> HloComputation:
        """Copy ``computation`` (and what it calls) into this builder, once; its entry copy.

        TypeError naming ``op`` and ``argument`` when ``computation`` is not an XlaComputation.
        """
        if not isinstance(computation, XlaComputation):
            hint = ("; xlac.lax takes Python functions where a computation is expected"
                    if callable(computation) else "")
            raise TypeError(f"{op}: {argument} must be an XlaComputation (built with an XlaBuilder), "
                            f"got {type(computation).__name__} {computation!r}"[:300] + hint)
        hit = self._imported.get(id(computation))
        if hit is not None:
            return hit[1]
        comp_map: dict[int, HloComputation] = {}
        for c in computation.module.computations:
            comp_map[id(c)] = _clone(c.instructions, c.root, self._comp_names.get(c.name),
                                     comp_map, self._inst_names.get)
            self._callees.append(comp_map[id(c)])
        entry = comp_map[id(computation.module.entry)]
        self._imported[id(computation)] = (computation, entry)  # keep it alive: ids stay unique
        return entry

    # -- building -----------------------------------------------------------
    def build(self, root: XlaOp | None = None) -> XlaComputation:
        """The XlaComputation of everything added so far, with ``root`` as its result.

        The module is an independent copy: adding ops afterwards does not change it.
        Raises ValueError for an empty builder, a foreign root or parameter numbers
        that are not 0..n-1.
        """
        if not self._instructions:
            raise ValueError(f"build: builder {self.name!r} has no ops")
        if root is None:
            root_inst = self._instructions[-1]
        else:
            self.check_operands("build (root)", [root])
            root_inst = root.instruction
        numbers = sorted(self._parameters)
        if numbers != list(range(len(numbers))):
            missing = sorted(set(range(max(numbers) + 1)) - set(numbers))
            raise ValueError(f"build: parameters of {self.name!r} must be numbered 0..n-1; "
                             f"have {numbers}, missing {missing}")

        # Keep only the sub-computations the entry (transitively) calls.
        needed, stack = set(), [c for i in self._instructions for c in i.called_computations()]
        while stack:
            c = stack.pop()
            if id(c) not in needed:
                needed.add(id(c))
                stack.extend(cc for i in c.instructions for cc in i.called_computations())
        comp_map: dict[int, HloComputation] = {}
        comps = []
        for c in self._callees:
            if id(c) in needed:
                comp_map[id(c)] = _clone(c.instructions, c.root, c.name, comp_map)
                comps.append(comp_map[id(c)])
        entry = _clone(self._instructions, root_inst, self.name, comp_map)
        comps.append(entry)
        return XlaComputation(HloModule(self.name, comps, entry=entry))


def _clone(instructions, root: HloInstruction, name: str, comp_map: dict,
           rename=None) -> HloComputation:
    """A computation of copies of ``instructions``, called computations remapped."""
    mapping: dict[int, HloInstruction] = {}
    insts = []
    for inst in instructions:
        attrs = {k: _remap(v, comp_map) for k, v in inst.attrs.items()}
        new = HloInstruction(inst.opcode, inst.shape, [mapping[id(o)] for o in inst.operands],
                             attrs, name=rename(inst.name) if rename else inst.name)
        mapping[id(inst)] = new
        insts.append(new)
    return HloComputation(name, insts, root=mapping[id(root)])


def _remap(value, comp_map: dict):
    if isinstance(value, HloComputation):
        return comp_map.get(id(value), value)
    if isinstance(value, tuple) and value and all(isinstance(c, HloComputation) for c in value):
        return tuple(comp_map.get(id(c), c) for c in value)
    return value
