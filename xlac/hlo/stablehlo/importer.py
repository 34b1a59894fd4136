"""StableHLO syntax tree -> :class:`xlac.hlo.ir.HloModule`.

Each ``func.func`` becomes a computation (``main`` the entry), each op one or a
few HLO instructions, built by the converter registered for its name in
:data:`CONVERTERS` (one entry per op; the ``chlo`` ops XLA legalises are in
``xlac.hlo.stablehlo.chlo``).  What the translation does, after XLA's
``mlir_hlo_to_hlo``:

* ops of several results (``sort``, ``while``, ``reduce`` of several inputs,
  ``custom_call`` ...) become one tuple-shaped instruction and a
  ``get-tuple-element`` per result; functions of several results return a tuple;
* ``func.call`` is ``call``; ``stablehlo.composite`` a ``call`` with
  ``is_composite=true`` and the ``composite.*`` frontend attributes;
* regions become computations; a ``while``, ``if`` or ``case`` region may use
  values defined outside it (StableHLO allows it, HLO does not): they are
  passed in, as extra loop state or as the branch operand tuple;
* ``select`` with a scalar ``i1`` predicate broadcasts it (HLO wants its shape).

Every instruction's declared type is checked against HLO shape inference as it
is built, so an ill-typed module fails at the op, with its location.
"""
from __future__ import annotations

import math
import re
from typing import Callable

import numpy as np

from ...errors import HloParseError, ShapeError, UnsupportedError, at_location
from ...shape import Shape
from ..attributes import Raw
from ..collectives import DeviceGroupError, check_device_count, check_device_counts
from ..ir import HloComputation, HloInstruction, HloModule
from ..shape_inference import has_rule, infer_shape
from .syntax import ArrayAttr, Block, Dense, DialectAttr, ModuleSyntax, Op, Word, int_text
from .types import TypeProblem, to_shape

__all__ = ["import_module", "CONVERTERS", "OpContext"]


class ImportProblem(ValueError):
    """A malformed op (missing attribute, wrong operand count ...); located by the caller."""


# ---------------------------------------------------------------------------
# attribute helpers
# ---------------------------------------------------------------------------

def _enum(v) -> str:
    """``GT``, ``#stablehlo<comparison_direction GT>``, ``"GT"`` -> ``GT``."""
    if isinstance(v, Word):
        return v.text
    if isinstance(v, DialectAttr):
        return (v.body or "").split()[-1]
    return str(v)


#: The most elements an integer-list attribute (dimensions, padding, groups)
#: may have; a splat ``dense<0> : tensor<1000000000000xi64>`` is refused, not expanded.
MAX_INT_LIST = 1 << 20


def _ints(v) -> tuple:
    if isinstance(v, ArrayAttr):
        return tuple(_int(x) for x in v.values)
    if isinstance(v, Dense):
        out: list = []
        _flat(v.value, out)
        count = math.prod(d or 0 for d in v.type[1]) if v.type[0] == "tensor" and v.type[1] else 1
        if len(out) == 1 and count > 1:              # a splat
            if count > MAX_INT_LIST:
                raise TypeProblem(f"an integer list attribute of {count} elements (at most {MAX_INT_LIST})")
            out = out * count
        return tuple(_int(x) for x in out)
    if isinstance(v, (list, tuple)):
        out = []
        for x in v:
            out.extend(_ints(x) if isinstance(x, (list, tuple, ArrayAttr, Dense)) else [_int(x)])
        return tuple(out)
    return (_int(v),)


def _int(x) -> int:
    """An integer attribute element: an int (a bool counts as 0/1), a float of
    integral value, or an integer literal's text; else a TypeProblem (not
    Python's OverflowError for ``inf`` or a silent truncation of 1.5)."""
    if isinstance(x, int):
        return int(x)
    if isinstance(x, float) and x.is_integer():
        return int(x)
    if isinstance(x, str) and re.fullmatch(r"[-+]?(?:0[xX][0-9a-fA-F]{1,40}|[0-9]{1,40})", x):
        return int_text(x)
    raise TypeProblem(f"expected an integer, found {str(x)[:24]}")


def _bools(v) -> tuple:
    if isinstance(v, ArrayAttr):
        return tuple(bool(x) for x in v.values)
    if isinstance(v, Dense):
        out: list = []
        _flat(v.value, out)
        return tuple(x == "true" for x in out)
    return tuple(bool(x) for x in v)


def _pairs(v) -> list:
    """``dense<[[0, 1], [2, 3]]>`` (N x 2) -> [(0, 1), (2, 3)]."""
    flat = _ints(v)
    return [(flat[k], flat[k + 1]) for k in range(0, len(flat), 2)]


def _groups(v) -> list:
    """A 2-d dense of ids (``replica_groups``), rows with ``-1`` padding removed."""
    if isinstance(v, Dense):
        rows = v.value if isinstance(v.value, list) else [v.value]
        rows = [[_int(x) for x in (r if isinstance(r, list) else [r])] for r in rows]
        return [[x for x in r if x >= 0] for r in rows]
    return [list(_ints(r)) for r in v]


def _flat(v, out: list) -> None:
    if isinstance(v, list):
        for x in v:
            _flat(x, out)
    else:
        out.append(v)


def _fields(attr: DialectAttr) -> dict:
    """``#stablehlo.gather<offset_dims = [1], index_vector_dim = 1>`` -> {name: ints or int}."""
    out = {}
    for m in re.finditer(r"([A-Za-z_]+)\s*=\s*(\[[^\]]*\]|[-0-9]+)", attr.body or ""):
        text = m.group(2)
        if text.startswith("["):
            out[m.group(1)] = tuple(int(x) for x in text[1:-1].split(",") if x.strip())
        else:
            out[m.group(1)] = int(text)
    return out


# ---------------------------------------------------------------------------
# the context a converter sees
# ---------------------------------------------------------------------------

class OpContext:
    """One op being converted: its operands (HLO instructions), result shapes and
    attributes, whatever the form it was written in; ``add`` builds an
    instruction in the current computation."""

    def __init__(self, imp: "Importer", op: Op, scope: "Scope"):
        self.imp, self.op, self.scope = imp, op, scope
        self.name = op.name
        self._values = None

    # -- operands and results ----------------------------------------------------
    def value_names(self) -> list:
        if self.op.generic:
            return list(self.op.operands)
        return _item_values(self.op.items)

    @property
    def operands(self) -> list:
        if self._values is None:
            self._values = [self.scope.lookup(n, self) for n in self.value_names()]
        return self._values

    def result_types(self) -> list:
        ins, outs = self.op.signature
        if outs is None:
            return list(ins or [])
        return list(outs)

    def result_shapes(self) -> list:
        return [self.shape_of(t) for t in self.result_types()]

    def result_shape(self) -> Shape:
        shapes = self.result_shapes()
        if len(shapes) != 1:
            raise ImportProblem(f"expected one result type, found {len(shapes)}")
        return shapes[0]

    def shape_of(self, t, layout=None) -> Shape:
        return to_shape(t, layout)

    # -- attributes -----------------------------------------------------------------
    def attr(self, *names, default=KeyError):
        for n in names:
            if n in self.op.attrs:
                return self.op.attrs[n]
        for it in _top_items(self.op.items):
            if it.kind == "keyword" and it.value[0] in names:
                return it.value[1]
        if default is KeyError:
            raise ImportProblem(f"missing attribute {names[0]}")
        return default

    def words(self) -> list:
        return [it.value for it in self.op.items if it.kind == "word"]

    def items(self, kind: str) -> list:
        return [it.value for it in _top_items(self.op.items) if it.kind == kind]

    # -- building -----------------------------------------------------------------------
    def add(self, opcode: str, shape: Shape, operands, attrs: dict | None = None) -> HloInstruction:
        return self.imp.add(self.scope.comp, opcode, shape, list(operands), attrs or {}, self)

    def results_of(self, inst: HloInstruction, count: int | None = None) -> list:
        """The op's results from a tuple-shaped ``inst`` (one get-tuple-element each)."""
        n = len(inst.shape.tuple_shapes) if count is None else count
        return [self.add("get-tuple-element", inst.shape.tuple_shapes[k], [inst], {"index": k}) for k in range(n)]

    def multi(self, opcode: str, operands, attrs: dict) -> list:
        """An op of one or several results: a plain instruction or a tuple and its elements."""
        shapes = self.result_shapes()
        if len(shapes) == 1:
            return [self.add(opcode, shapes[0], operands, attrs)]
        return self.results_of(self.add(opcode, Shape.tuple(shapes), operands, attrs))

    def region_computation(self, k: int, what: str, arg_shapes=None) -> HloComputation:
        """Region ``k`` as a computation of its block arguments (no captures allowed)."""
        return self.imp.region_computation(self, self.op.regions[k], what, arg_shapes)


def _top_items(items: list) -> list:
    """The items, those of parenthesised groups included (``chlo.top_k(%x, k = 3)``)."""
    out = []
    for it in items:
        if it.kind == "group":
            out.extend(_top_items(it.value))
        else:
            out.append(it)
    return out


def _item_values(items: list) -> list:
    """The SSA names a pretty op uses, in order (a ``bind``'s first name is a definition)."""
    out = []
    for it in items:
        if it.kind == "value":
            out.append(it.value)
        elif it.kind == "init":
            out.extend(it.value)
        elif it.kind == "bind":
            out.append(it.value[1])
        elif it.kind == "group":
            out.extend(_item_values(it.value))
    return out


# ---------------------------------------------------------------------------
# scopes: SSA names -> instructions
# ---------------------------------------------------------------------------

class Scope:
    """The values visible in one computation being built; ``parent`` is the
    enclosing region's scope when this region may capture from it."""

    def __init__(self, comp: HloComputation, parent: "Scope | None" = None, captures: dict | None = None):
        self.comp = comp
        self.values: dict[str, HloInstruction] = {}
        self.parent = parent
        self.captures = captures          # name -> instruction in this computation (bound up front)
        self.importer = None              # set for regions that may copy in outer constants

    def lookup(self, name: str, ctx: OpContext | None = None) -> HloInstruction:
        v = self.values.get(name)
        if v is not None:
            return v
        if self.captures is not None and name in self.captures:
            return self.captures[name]
        if self.parent is not None and self.captures is None and self.importer is not None:
            outer = self.parent.lookup(name, ctx)
            if outer.opcode != "constant":          # captured by a region in between (a sort inside a case)
                outer = self.parent.constant(name) or outer
            if outer.opcode == "constant":          # a constant used in a to_apply region: a copy
                copy = self.importer.add(self.comp, "constant", outer.shape, [], dict(outer.attrs), None)
                self.values[name] = copy
                return copy
            raise ImportProblem(f"a region of this op uses {name}, defined outside it (HLO computations "
                                f"such as reducers and comparators can only copy in constants)")
        raise ImportProblem(f"use of undefined value {name}" +
                            (" (a region of this op may not use values from outside it)"
                             if self.parent is not None else ""))

    def constant(self, name: str) -> HloInstruction | None:
        """The constant ``name`` is, followed out through the captures of the
        regions in between to where it is defined (None: not a constant)."""
        v = self.values.get(name)
        if v is not None:
            return v if v.opcode == "constant" else None
        if self.parent is not None and (self.importer is not None
                                        or (self.captures is not None and name in self.captures)):
            return self.parent.constant(name)
        return None


# ---------------------------------------------------------------------------
# the importer
# ---------------------------------------------------------------------------

class Importer:
    def __init__(self, syntax: ModuleSyntax, filename: str | None = None):
        self.syntax = syntax
        self.filename = filename
        self.funcs = {f.func["name"]: f for f in syntax.funcs}
        self.done: dict[str, HloComputation] = {}
        self.in_progress: set = set()
        self.computations: list[HloComputation] = []
        self._names: dict[str, int] = {}
        self._lines = None

    # -- names and locations -------------------------------------------------------
    def fresh(self, base: str) -> str:
        base = hlo_name(base, "v")
        k = self._names.get(base, 0) + 1
        self._names[base] = k
        return f"{base}.{k}"

    def where(self, op: Op | None, pos: int | None = None) -> str:
        text = self.syntax.text
        p = op.pos if op is not None else (pos or 0)
        line = text.count("\n", 0, p) + 1
        col = p - (text.rfind("\n", 0, p) + 1) + 1
        here = f"{self.filename}:{line}:{col}" if self.filename else f"line {line}, column {col}"
        src = self.syntax.locations.describe(op.loc) if op is not None else None
        return here + (f", from {src}" if src else "")

    def located(self, e: Exception, op: Op, ctx_name: str) -> Exception:
        """``e`` with the op's name and location in its message, same type."""
        if getattr(e, "stablehlo_located", False):
            return e
        out = self._located(e, op, ctx_name)
        out.stablehlo_located = True
        return out

    def _located(self, e: Exception, op: Op, ctx_name: str) -> Exception:
        """The error with ``ctx_name`` and its place in the message; as
        attributes too (``at_location``: ``line``, ``column`` and the message
        without the place, for a tool's ``FILE:LINE:COL:`` prefix)."""
        if isinstance(e, HloParseError):
            return e
        place = self._line_col(op.pos)
        src = self.syntax.locations.describe(op.loc)
        at = f"{ctx_name} at {self.where(op)}"
        unplaced = ctx_name + (f", from {src}" if src else "")
        if isinstance(e, UnsupportedError):
            detail = str(e)[len(f"not supported yet: {e.what}"):].strip()
            if detail.startswith("(") and detail.endswith(")"):
                detail = detail[1:-1] + "; "
            return at_location(UnsupportedError(e.what, detail + at), place,
                               str(UnsupportedError(e.what, detail + unplaced)))
        if isinstance(e, ShapeError):
            return at_location(ShapeError(f"{at}: {e}"), place, f"{unplaced}: {e}")
        out = HloParseError(f"StableHLO: {at}: {e}", *place)
        out.message = f"StableHLO: {unplaced}: {e}"
        return out

    # -- building ----------------------------------------------------------------------
    def add(self, comp: HloComputation, opcode: str, shape: Shape, operands: list, attrs: dict,
            ctx: OpContext | None) -> HloInstruction:
        inst = HloInstruction(opcode, shape, operands, attrs, self.fresh(opcode))
        if has_rule(opcode) and opcode not in ("parameter",):
            try:
                inferred = infer_shape(opcode, [o.shape for o in operands], attrs, shape=shape)
            except UnsupportedError:
                inferred = None
            if inferred is not None and not inferred.compatible(shape):
                raise ShapeError(f"result type {shape} differs from the type HLO infers for {opcode}: "
                                 f"{inferred} (operands: {', '.join(str(o.shape) for o in operands) or 'none'})")
        comp.add_instruction(inst)
        return inst

    def new_computation(self, name: str) -> HloComputation:
        comp = HloComputation(self.fresh(name))
        self.computations.append(comp)
        return comp

    def parameter(self, comp: HloComputation, k: int, shape: Shape, name: str = "Arg") -> HloInstruction:
        inst = HloInstruction("parameter", shape, [], {"parameter_number": k}, self.fresh(name))
        comp.add_instruction(inst)
        return inst

    # -- module -------------------------------------------------------------------------
    def module(self) -> HloModule:
        entry_name = "main" if "main" in self.funcs else None
        if entry_name is None:
            public = [n for n, f in self.funcs.items() if f.func["visibility"] == "public"]
            if len(public) != 1:
                raise HloParseError("StableHLO: no @main function (and not exactly one public function)", 1, 1)
            entry_name = public[0]
        entry = self.function(entry_name)
        attrs = {}
        meshes = self.syntax.attrs.get("sdy.meshes")
        if meshes:
            # Shardy's global program, as jax's HLO text writes it: the meshes as a
            # frontend attribute, the device count left to the shard-map partitioner.
            text = ", ".join(f"{name} = #sdy.mesh{body}" for name, body in meshes)
            attrs["frontend_attributes"] = Raw("{xla.sdy.meshes={" + text + "}}")
        else:
            attrs.update(self._device_counts())
        self._sharding(entry, self.funcs[entry_name])
        comps = list(self.computations)
        module = HloModule(hlo_name(self.syntax.name or "", "module"), comps, entry=entry, attrs=attrs)
        for c in comps:
            c.is_entry = c is entry
            c.compute_users()
        if not meshes and _global_gspmd_program(module):
            # jax's global program in the GSPMD form (no Shardy): its device
            # count is its shardings', as in jax's HLO text of it, which has no
            # num_partitions (a module with num_partitions and shardings is a
            # per-device program: XLA's partitioned one).
            module.attrs.pop("num_partitions", None)
        module.sort_computations()
        return module

    def _device_counts(self) -> dict:
        """``mhlo.num_replicas`` / ``mhlo.num_partitions`` as the HLO header's
        ``replica_count`` / ``num_partitions`` (only those other than 1), checked
        as every entry point checks them (``collectives.check_device_counts``)."""
        keys = ("mhlo.num_replicas", "mhlo.num_partitions")
        values = [self.syntax.attrs.get(key, 1) for key in keys]
        try:
            for key, value in zip(keys, values):
                failing = key
                check_device_count(key, value)
            failing = keys[0]
            counts = check_device_counts(*values, names=keys)
        except DeviceGroupError as e:
            pos = max(self.syntax.text.find(failing), 0)
            line = self.syntax.text.count("\n", 0, pos) + 1
            col = pos - (self.syntax.text.rfind("\n", 0, pos) + 1) + 1
            raise HloParseError(f"StableHLO: module attribute {e}", line, col) from None
        return {k: n for k, n in zip(("replica_count", "num_partitions"), counts) if n != 1}

    def _sharding(self, comp: HloComputation, fop: Op) -> None:
        """``mhlo.sharding`` of the entry's arguments and results as HLO
        ``sharding=``; Shardy's ``sdy.sharding`` as the ``xla.sdy.sharding``
        frontend attribute, as XLA's HLO export writes it (the results' on the
        root, one per result: ``<@mesh, []>`` for a result without)."""
        f = fop.func
        arg_attrs = f.get("arg_attrs") or []
        for p, a in zip(comp.parameters, arg_attrs):
            if isinstance(a, dict) and isinstance(a.get("mhlo.sharding"), str):
                p.attrs["sharding"] = Raw(a["mhlo.sharding"])
            elif isinstance(a, dict) and _sdy_body(a.get("sdy.sharding")) is not None:
                _add_sdy_sharding(p, f"#sdy.sharding<{_sdy_body(a['sdy.sharding'])}>")
        sdy = [_sdy_body(a.get("sdy.sharding")) if isinstance(a, dict) else None
               for a in (f.get("result_attrs") or [])]
        if any(b is not None for b in sdy):
            values = ", ".join(f"<{b}>" if b is not None else "<@mesh, []>" for b in sdy)
            if comp.root.opcode == "parameter":
                # An argument returned as it is: the result's sharding on a
                # copy, the argument keeping its own (one attribute each).
                comp.root = comp.add_instruction(HloInstruction("copy", comp.root.shape, [comp.root], {},
                                                                self.fresh("copy")))
            _add_sdy_sharding(comp.root, f"#sdy.sharding_per_value<[{values}]>")
        res = [a.get("mhlo.sharding") if isinstance(a, dict) else None for a in (f.get("result_attrs") or [])]
        if any(isinstance(s, str) for s in res):
            if len(res) == 1:
                comp.root.attrs["sharding"] = Raw(res[0])
            else:
                comp.root.attrs["sharding"] = Raw("{" + ", ".join(s or "{replicated}" for s in res) + "}")

    def function(self, name: str) -> HloComputation:
        if name in self.done:
            return self.done[name]
        fop = self.funcs.get(name)
        if fop is None:
            raise ImportProblem(f"call of an undefined function @{name}")
        if name in self.in_progress:
            raise ImportProblem(f"function @{name} calls itself (HLO has no recursion)")
        self.in_progress.add(name)
        f = fop.func
        comp = self.new_computation(name)
        scope = Scope(comp)
        for k, (arg, t, *_rest) in enumerate(f["args"]):
            scope.values[arg] = self.parameter(comp, k, self._arg_shape(t, fop), "Arg_" + str(k))
        returned = self.body(f["body"], scope, "func.return")
        declared = [self._arg_shape(t, fop) for t in f["results"]]
        if len(declared) != len(returned) or any(not d.compatible(r.shape) for d, r in zip(declared, returned)):
            raise self.located(ShapeError(
                f"@{name} returns ({', '.join(str(r.shape) for r in returned)}), its signature says "
                f"({', '.join(map(str, declared))})"), fop, "func.func")
        self.in_progress.discard(name)
        self.done[name] = comp
        return comp

    def _arg_shape(self, t, op: Op) -> Shape:
        try:
            return to_shape(t)
        except (UnsupportedError, TypeProblem) as e:
            raise self.located(e, op, "func.func") from None

    def body(self, block: Block, scope: Scope, terminator: str) -> list:
        """Converts the ops of ``block``; sets the root from its return; the returned values."""
        returned = None
        for op in block.ops:
            if op.name in ("func.return", "return", "stablehlo.return", "mhlo.return", "sdy.return"):
                ctx = OpContext(self, op, scope)
                try:
                    returned = ctx.operands
                except (ImportProblem, ShapeError, UnsupportedError) as e:
                    raise self.located(e, op, op.name) from None
                break
            self.operation(op, scope)
        if returned is None:
            raise HloParseError(f"StableHLO: a region or function body without a return ({self.where(None, block.pos)})",
                                *self._line_col(block.pos))
        comp = scope.comp
        if len(returned) == 1 and terminator != "tuple":
            comp.root = returned[0]
        else:
            comp.root = self.add(comp, "tuple", Shape.tuple([v.shape for v in returned]), list(returned), {}, None)
        return returned

    def _line_col(self, pos: int) -> tuple:
        text = self.syntax.text
        return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1

    def operation(self, op: Op, scope: Scope) -> None:
        ctx = OpContext(self, op, scope)
        conv = CONVERTERS.get(op.name)
        try:
            if conv is None:
                raise UnsupportedError(op.name, "no StableHLO import rule")
            results = conv(ctx)
            if len(results) != len(op.results):
                raise ImportProblem(f"{len(op.results)} results named, the op has {len(results)}")
        except (ImportProblem, ShapeError, UnsupportedError, TypeProblem, KeyError, IndexError, TypeError,
                AttributeError, OverflowError) as e:      # (int() of an inf attribute)
            raise self.located(e, op, op.name) from None
        except ValueError as e:
            if isinstance(e, HloParseError):
                raise
            raise self.located(e, op, op.name) from None
        for name, inst in zip(op.results, results):
            scope.values[name] = inst
            if name.endswith("#0") and len(results) == 1:
                scope.values[name[:-2]] = inst

    # -- regions ---------------------------------------------------------------------------
    def region_computation(self, ctx: OpContext, block: Block, what: str, arg_shapes=None,
                           captures: list | None = None, tuple_param: bool = False,
                           root_tuple: bool = False) -> HloComputation:
        """A computation from a region.  Without ``tuple_param``, one parameter per
        block argument; with it, one tuple parameter of the block arguments then
        the ``captures`` (names of outer values)."""
        comp = self.new_computation(f"{ctx.name.split('.')[-1]}_{what}")
        shapes = arg_shapes if arg_shapes is not None else [to_shape(a[1]) for a in block.args]
        if len(shapes) != len(block.args) and arg_shapes is None:
            raise ImportProblem(f"{what} region: {len(block.args)} arguments")
        scope = Scope(comp, parent=ctx.scope)
        if tuple_param:
            cap_insts = [ctx.scope.lookup(n) for n in (captures or [])]
            all_shapes = list(shapes) + [c.shape for c in cap_insts]
            param = self.parameter(comp, 0, Shape.tuple(all_shapes), "param")
            for k, a in enumerate(block.args):
                scope.values[a[0]] = self.add(comp, "get-tuple-element", shapes[k], [param], {"index": k}, None)
            scope.captures = {}
            for j, n in enumerate(captures or []):
                scope.captures[n] = self.add(comp, "get-tuple-element", all_shapes[len(shapes) + j], [param],
                                             {"index": len(shapes) + j}, None)
        else:
            scope.importer = self
            for k, a in enumerate(block.args):
                scope.values[a[0]] = self.parameter(comp, k, shapes[k], "Arg_" + str(k))
        self.body(block, scope, "tuple" if root_tuple else "return")
        return comp


def free_values(blocks: list) -> list:
    """The SSA names the ops of ``blocks`` (and their nested regions) use but do
    not define, in first-use order."""
    defined, used = set(), []

    def walk(block: Block):
        for a in block.args:
            defined.add(a[0])
        for op in block.ops:
            names = list(op.operands) if op.generic else _item_values(op.items)
            for n in names:
                if n not in defined and n not in used:
                    used.append(n)
            for r in op.regions:
                walk(r)
            if not op.generic:
                defined.update(it.value[0] for it in _top_items(op.items) if it.kind == "bind")
            defined.update(op.results)
            defined.update(r[:-2] for r in op.results if r.endswith("#0"))
    for b in blocks:
        walk(b)
    return [n for n in used if n not in defined]


def hlo_name(name: str, default: str) -> str:
    """``name`` (an MLIR symbol or value name: any string) as an HLO name, which
    the HLO parser reads back: ASCII letters, digits, ``_ . -``, not starting
    with a digit, dot or dash (others become ``_``); ``default`` when empty."""
    name = re.sub(r"[^A-Za-z0-9_.\-]", "_", name)
    if not name:
        return default
    return name if name[0].isalpha() or name[0] == "_" else "_" + name


#: Converters by op name: ``fn(ctx) -> [HloInstruction per result]``.
CONVERTERS: dict[str, Callable[[OpContext], list]] = {}


def converter(*names: str):
    def deco(fn):
        for n in names:
            CONVERTERS[n] = fn
        return fn
    return deco


def import_module(syntax: ModuleSyntax, filename: str | None = None) -> HloModule:
    """The HloModule of a parsed StableHLO module (see the module docstring)."""
    from . import chlo, ops, sdy  # noqa: F401  (fill CONVERTERS)
    return Importer(syntax, filename).module()


def _sdy_body(attr) -> str | None:
    """The body of a ``#sdy.sharding<...>`` attribute (``@mesh, [{"x"}, {}]``), or None."""
    body = getattr(attr, "body", None)
    return body if isinstance(body, str) and getattr(attr, "name", "").lstrip("#").startswith("sdy") else None


def _global_gspmd_program(module: HloModule) -> bool:
    """Whether the entry's parameters or results carry a tiled ``mhlo.sharding``
    and nothing says the program is already per device (collectives,
    partition-id, the manual partitioning custom calls of ``shard_map``)."""
    per_device = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
                  "partition-id", "replica-id", "collective-broadcast")
    manual = ("SPMDFullToShardShape", "SPMDShardToFullShape")
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode in per_device or (inst.opcode == "custom-call" and
                                              str(inst.attrs.get("custom_call_target", "")).strip('"') in manual):
                return False
    entry = module.entry
    return any("devices=" in str(getattr(i.attrs.get("sharding"), "text", i.attrs.get("sharding", "")))
               for i in entry.parameters + [entry.root])


def _add_sdy_sharding(inst: HloInstruction, value: str) -> None:
    """``inst``'s frontend attributes with ``xla.sdy.sharding=value`` added."""
    item = 'xla.sdy.sharding="' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    old = str(inst.attrs.get("frontend_attributes") or "{}").strip()
    inner = old[1:-1].strip() if old.startswith("{") and old.endswith("}") else old
    inst.attrs["frontend_attributes"] = Raw("{" + (inner + "," if inner else "") + item + "}")
