"""Emit an optimised HloModule as one LLVM module with one C-callable entry.

Entry ABI (see ``runtime/xlac_runtime.h``)::

    void NAME(void **results, const void *const *params, void *temp,
              const xlac_run_options *opts);

``results[i]`` / ``params[i]`` point to the i-th result leaf / parameter buffer,
laid out as its shape's layout says; ``temp`` points to an arena of
``BufferAssignment.temp_size`` bytes, 64-byte aligned.  ``opts`` carries the
services generated code may call (none are needed by the ops of this stage; it
may be NULL).

Each instruction that owns a buffer becomes an internal kernel function — one
loop nest over its result shape that writes ``generator(index)`` — and the
entry calls the kernels in schedule order, then copies the root leaves that
are not computed in place.
"""
from __future__ import annotations

from llvmlite import ir

from ..errors import UnsupportedError
from ..hlo.ir import HloInstruction, HloModule
from ..passes.buffer_assignment import BufferAssignment, BufferSlice
from ..shape import Shape, padding_scalar, to_buffer
from . import types
from .elemental import ElementalEmitter
from .ir_array import I64, IrArray, i64, scalar_index
from .loops import for_range, loop_nest

PTR = ir.PointerType()
I8 = ir.IntType(8)
KERNEL_TYPE = ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR])
ENTRY_TYPE = ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR, PTR])


class ModuleEmitter:
    """Builds the LLVM module for ``module`` with buffers from ``assignment``."""

    def __init__(self, module: HloModule, assignment: BufferAssignment, entry_name: str,
                 triple: str = "", data_layout: str = ""):
        self.hlo = module
        self.assignment = assignment
        self.entry_name = entry_name
        self.llvm = ir.Module(name=module.name)
        if triple:
            self.llvm.triple = triple
        if data_layout:
            self.llvm.data_layout = data_layout
        self._globals: dict[int, ir.GlobalVariable] = {}
        self._names: set[str] = set()

    def emit(self) -> ir.Module:
        kernels = []
        for inst in self.assignment.materialized():
            kernels.append(self._emit_kernel(inst))
        for number, src in self.assignment.copies:
            kernels.append(self._emit_copy(number, src))
        entry = ir.Function(self.llvm, ENTRY_TYPE, self.entry_name)
        results, params, temp, _opts = entry.args
        for arg, nm in zip(entry.args, ("results", "params", "temp", "opts")):
            arg.name = nm
        b = ir.IRBuilder(entry.append_basic_block("entry"))
        for kernel in kernels:
            if kernel is not None:
                b.call(kernel, [results, params, temp])
        b.ret_void()
        return self.llvm

    # -- kernels -------------------------------------------------------------------
    def _new_kernel(self, base: str) -> tuple[ir.Function, ir.IRBuilder, ir.IRBuilder]:
        name = _unique(f"{self.entry_name}.{_sanitize(base)}", self._names)
        fn = ir.Function(self.llvm, KERNEL_TYPE, name)
        fn.linkage = "internal"
        for arg, nm in zip(fn.args, ("results", "params", "temp")):
            arg.name = nm
        alloca_block = fn.append_basic_block("allocas")
        body = fn.append_basic_block("body")
        alloca_builder = ir.IRBuilder(alloca_block)
        alloca_builder.branch(body)
        alloca_builder.position_at_start(alloca_block)
        return fn, ir.IRBuilder(body), alloca_builder

    def _buffer_pointer(self, b: ir.IRBuilder, fn: ir.Function, sl: BufferSlice,
                        inst: HloInstruction | None = None) -> ir.Value:
        results, params, temp = fn.args
        if sl.kind == "parameter":
            return b.load(b.gep(params, [i64(sl.number)], source_etype=PTR), typ=PTR)
        if sl.kind == "result":
            return b.load(b.gep(results, [i64(sl.number)], source_etype=PTR), typ=PTR)
        if sl.kind == "temp":
            return b.gep(temp, [i64(sl.offset)], inbounds=True, source_etype=I8)
        if sl.kind == "constant":
            return self._constant_global(inst)
        raise AssertionError(sl.kind)

    def _operand_generator(self, em: ElementalEmitter, b, fn, op: HloInstruction):
        """A generator reading ``op``'s value from its buffer(s)."""
        if op.opcode == "constant" and op.literal.size <= 1:
            return em.make_generator(op, [])
        if op.shape.is_tuple:
            leaves = [self._leaf_array(b, fn, op, k) for k in range(len(op.shape.leaves()))]
            return _tuple_reader(b, op.shape, leaves)
        array = self._leaf_array(b, fn, op, 0)
        return lambda index: array.read(b, index)

    def _leaf_array(self, b, fn, op, leaf) -> IrArray:
        sl = self.assignment.slice_of(op, leaf)
        src = op
        if sl.kind == "constant":
            src = self._constant_source(op, leaf)
        return IrArray(self._buffer_pointer(b, fn, sl, src), sl.shape)

    def _constant_source(self, op, leaf):
        src, _ = self.assignment.defining(op, leaf)
        return src

    def _emit_kernel(self, inst: HloInstruction) -> ir.Function | None:
        leaves = inst.shape.leaves()
        if any(not s.is_array for s in leaves):
            raise UnsupportedError(inst.opcode, f"{inst.shape} results")
        fn, b, ab = self._new_kernel(inst.name or inst.opcode)
        em = ElementalEmitter(b, ab, lambda c: IrArray(self._constant_global(c), c.shape))
        operand_gens = [self._operand_generator(em, b, fn, op) for op in inst.operands]
        gen = em.make_generator(inst, operand_gens)
        outputs = [IrArray(self._buffer_pointer(b, fn, self.assignment.slice_of(inst, k)),
                           self.assignment.slice_of(inst, k).shape) for k in range(len(leaves))]
        for out in outputs:
            _fill_padding(b, out)
        loop_shape = outputs[0].shape
        if loop_shape.element_count() > 0:
            with loop_nest(b, loop_shape) as index:
                value = gen(index)
                values = value if isinstance(value, tuple) else (value,)
                for out, v in zip(outputs, values):
                    out.write(b, index, v)
        b.ret_void()
        return fn

    def _emit_copy(self, number: int, src: BufferSlice) -> ir.Function:
        fn, b, _ab = self._new_kernel(f"copy_result{number}")
        shape = self.assignment.result_shapes[number]
        if not shape.is_array:
            b.ret_void()
            return fn
        src_inst = None
        if src.kind == "constant":
            src_inst = self._find_constant(number)
        source = IrArray(self._buffer_pointer(b, fn, src, src_inst), src.shape)
        out = IrArray(self._buffer_pointer(b, fn, BufferSlice("result", number, 0, 0, shape)), shape)
        _fill_padding(b, out)
        if shape.element_count() > 0:
            if src_inst is not None and src_inst.literal.size == 1:
                value = types.constant(shape.element_type, src_inst.literal.reshape(-1)[0])
                with loop_nest(b, shape) as index:
                    out.write(b, index, value)
            else:
                with loop_nest(b, shape) as index:
                    out.write(b, index, source.read(b, index))
        b.ret_void()
        return fn

    def _find_constant(self, number: int) -> HloInstruction:
        src, _ = self.assignment.defining(self.hlo.entry.root, number)
        return src

    # -- constants -------------------------------------------------------------------
    def _constant_global(self, inst: HloInstruction) -> ir.GlobalVariable:
        g = self._globals.get(id(inst))
        if g is None:
            data = to_buffer(inst.literal, inst.shape).tobytes()
            ty = ir.ArrayType(I8, max(len(data), 1))
            g = ir.GlobalVariable(self.llvm, ty, _unique(f"const.{_sanitize(inst.name)}", self._names))
            g.initializer = ir.Constant(ty, bytearray(data or b"\0"))
            g.global_constant = True
            g.linkage = "internal"
            g.align = 64
            self._globals[id(inst)] = g
        return g


def _tuple_reader(b, shape: Shape, leaves: list[IrArray]):
    """Generator for a tuple-shaped buffer: a (nested) tuple of element reads."""
    def build(s: Shape, it):
        if s.is_tuple:
            return tuple(build(e, it) for e in s.tuple_shapes)
        array = next(it)
        return array

    structure = build(shape, iter(leaves))

    def read(node, index):
        if isinstance(node, tuple):
            return tuple(read(n, index) for n in node)
        return node.read(b, index)

    return lambda index: read(structure, index)


def _fill_padding(b: ir.IRBuilder, array: IrArray) -> None:
    """Write the padding value over a padded buffer (the logical elements follow)."""
    shape = array.shape
    if not shape.layout.is_padded or shape.buffer_element_count() == shape.element_count():
        return
    value = types.constant(shape.element_type, padding_scalar(shape))
    ety = types.memory_type(shape.element_type)
    with for_range(b, shape.buffer_element_count(), "pad") as i:
        ptr = b.gep(array.ptr, [i], inbounds=True, source_etype=ety)
        types.store_element(b, value, ptr, shape.element_type)


def _sanitize(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._" else "_" for c in name) or "x"


def _unique(name: str, used: set) -> str:
    candidate, k = name, 1
    while candidate in used:
        k += 1
        candidate = f"{name}.{k}"
    used.add(candidate)
    return candidate


def emit_module(module: HloModule, assignment: BufferAssignment, entry_name: str,
                triple: str = "", data_layout: str = "") -> ir.Module:
    """LLVM IR of ``module`` (see the module docstring for the entry ABI)."""
    return ModuleEmitter(module, assignment, entry_name, triple, data_layout).emit()
