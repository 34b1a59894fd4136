"""A function's LLVM IR text, as llvmlite prints it, in fewer Python steps; a
printed module freed at once (``tear_down``).

Printing the module is a tenth of a big module's time in Python: llvmlite
prints each instruction through half a dozen calls (``format`` of the
instruction, its cached ``__str__``, ``_to_string``, ``descr``, the metadata's
and the operands' formatting).  :func:`function_text` prints the most common
instruction classes (arithmetic, ``getelementptr``, loads and stores,
branches, compares, selects, phis, casts, ``ret``) with one f-string each and
leaves every other one (calls, allocas, vector operations, ...) to llvmlite.
The text is llvmlite's own, byte for byte (``tests/codegen/test_ir_text.py``
compares them); only exact classes are printed here, so a subclass with a
printer of its own (or a newer llvmlite's) still prints itself.
"""
from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as _i


def _metadata(inst) -> str:
    """llvmlite's ``_stringify_metadata(leading_comma=True)``."""
    md = inst.metadata
    if not md:
        return ""
    return "".join([f", !{k} {v.get_reference()}" for k, v in md.items()])


def _prefix(inst) -> str:
    return "" if isinstance(inst.type, ir.VoidType) else f"{inst.get_reference()} = "


def _plain(inst) -> str:             # add, fmul, xor, ... (``Instruction.descr``)
    opname = inst.opname
    if inst.flags:
        opname = " ".join([opname] + inst.flags)
    ops = ", ".join([op.get_reference() for op in inst.operands])
    return f"{_prefix(inst)}{opname} {inst.type} {ops}{_metadata(inst)}".rstrip()


def _gep(inst) -> str:
    pointer = inst.pointer
    indices = ", ".join([f"{i.type} {i.get_reference()}" for i in inst.indices])
    op = "getelementptr inbounds" if inst.inbounds else "getelementptr"
    return (f"{inst.get_reference()} = {op} {inst.source_etype}, {pointer.type} {pointer.get_reference()}, "
            f"{indices}{_metadata(inst)}").rstrip()


def _load(inst) -> str:
    [val] = inst.operands
    align = "" if inst.align is None else ", align %d" % inst.align
    return f"{inst.get_reference()} = load {inst.type}, {val.type} {val.get_reference()}{align}{_metadata(inst)}".rstrip()


def _store(inst) -> str:
    val, ptr = inst.operands
    align = "" if inst.align is None else ", align %d" % inst.align
    return f"store {val.type} {val.get_reference()}, {ptr.type} {ptr.get_reference()}{align}{_metadata(inst)}".rstrip()


def _terminator(inst) -> str:        # br (``Terminator.descr``)
    ops = ", ".join([f"{op.type} {op.get_reference()}" for op in inst.operands])
    return f"{inst.opname} {ops}{_metadata(inst)}".rstrip()


def _ret(inst) -> str:
    if inst.operands:
        value = inst.operands[0]
        return f"{inst.opname} {value.type} {value.get_reference()}{_metadata(inst)}".rstrip()
    return f"{inst.opname}{_metadata(inst)}".rstrip()


def _compare(inst) -> str:
    flags = "".join([" " + f for f in inst.flags])
    lhs, rhs = inst.operands
    return (f"{inst.get_reference()} = {inst.opname}{flags} {inst.op} {lhs.type} {lhs.get_reference()}, "
            f"{rhs.get_reference()} {_metadata(inst)}").rstrip()


def _select(inst) -> str:
    cond, lhs, rhs = inst.operands
    return (f"{inst.get_reference()} = select {' '.join(inst.flags)} {cond.type} {cond.get_reference()}, "
            f"{lhs.type} {lhs.get_reference()}, {rhs.type} {rhs.get_reference()} {_metadata(inst)}").rstrip()


def _phi(inst) -> str:
    incoming = ", ".join([f"[{v.get_reference()}, {b.get_reference()}]" for v, b in inst.incomings])
    return f"{inst.get_reference()} = phi {' '.join(inst.flags)} {inst.type} {incoming} {_metadata(inst)}".rstrip()


def _cast(inst) -> str:
    op = inst.operands[0]
    return (f"{inst.get_reference()} = {inst.opname} {op.type} {op.get_reference()} to {inst.type} "
            f"{_metadata(inst)}").rstrip()


#: Printers by exact class (a subclass may print differently: llvmlite prints it).
_PRINTERS = {
    _i.Instruction: _plain,
    _i.GEPInstr: _gep,
    _i.LoadInstr: _load,
    _i.StoreInstr: _store,
    _i.Branch: _terminator,
    _i.ConditionalBranch: _terminator,
    _i.Ret: _ret,
    _i.ICMPInstr: _compare,
    _i.FCMPInstr: _compare,
    _i.SelectInstr: _select,
    _i.PhiInstr: _phi,
    _i.CastInstr: _cast,
}


def function_text(fn: ir.Function) -> str:
    """``str(fn)``, the same text."""
    buf: list[str] = []
    fn.descr_prototype(buf)
    if fn.blocks:
        buf.append("{\n")
        printers = _PRINTERS
        for block in fn.blocks:
            buf.append(f"{block._format_name()}:\n")
            for inst in block.instructions:
                printer = printers.get(type(inst))
                buf.append(f"  {printer(inst) if printer is not None else inst}\n")
        buf.append("}\n")
    return "".join(buf)


def tear_down(module: ir.Module) -> None:
    """Free ``module`` now, by reference counting, and leave it unusable.

    llvmlite's IR is cyclic (an instruction and its block point to each other,
    as do a function and its arguments, a phi and the values of a loop, a loop
    ID and itself), so a dropped module waits for Python's cyclic collector:
    tens of thousands of objects for a training step, and a compilation that
    leaves garbage behind (jax's ``core_test`` checks that a jitted call
    leaves none).  Emptying each object's attributes breaks every cycle.
    A module torn down already is left as it is."""
    if "globals" not in module.__dict__:
        return
    for value in list(module.globals.values()):
        for block in getattr(value, "blocks", ()):
            for inst in block.instructions:
                inst.__dict__.clear()
            block.__dict__.clear()
        for arg in getattr(value, "args", ()):
            arg.__dict__.clear()
        value.__dict__.clear()
    for node in module.metadata:
        node.__dict__.clear()
    module.__dict__.clear()


def final_text(module: ir.Module) -> str:
    """``str(module)``, the module torn down (``tear_down``): for IR built only to be printed."""
    text = str(module)
    tear_down(module)
    return text
