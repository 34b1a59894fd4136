"""ir_text.function_text prints a function as llvmlite does, byte for byte."""
from pathlib import Path

from llvmlite import ir

import xlac
from xlac.codegen.compiler import lower
from xlac.codegen.ir_text import function_text

MODELS = Path(__file__).resolve().parents[2] / "benchmarks" / "models"


def test_a_training_step_prints_as_llvmlite_prints_it():
    # Loops, while bodies, phis, selects, compares, casts, calls, metadata.
    module = xlac.parse_hlo((MODELS / "eqx_lstm_train.hlo").read_text(encoding="utf-8"))
    llvm = lower(module, optimize=True, aligned_results=True).llvm_module
    functions = [f for f in llvm.functions if f.blocks]
    assert len(functions) > 10
    for f in functions:
        assert function_text(f) == str(f), f.name


def test_flags_metadata_and_every_printed_class():
    module = ir.Module("m")
    i32, f32 = ir.IntType(32), ir.FloatType()
    fn = ir.Function(module, ir.FunctionType(i32, [i32, f32, i32.as_pointer()]), "f")
    fn.linkage = "internal"
    x, y, p = fn.args
    entry, other, done = fn.append_basic_block("entry"), fn.append_basic_block("b.1"), fn.append_basic_block("x y")
    b = ir.IRBuilder(entry)
    node = module.add_metadata([ir.IntType(64)(1)])
    s = b.add(x, x, flags=("nsw",))
    s.set_metadata("foo", node)
    g = b.gep(p, [s], inbounds=True)
    v = b.load(g, align=4)
    v.set_metadata("invariant.load", module.add_metadata([]))
    b.store(v, g, align=4)
    b.store(v, b.gep(p, [x]))
    fm = b.fmul(y, y, flags=("fast",))
    c = b.fcmp_ordered("<", fm, y, flags=("nnan",))
    sel = b.select(c, x, s, flags=())
    w = b.zext(b.icmp_unsigned("==", sel, x), i32)
    br = b.cbranch(c, other, done)
    br.set_weights([1, 9])
    b.position_at_end(other)
    b.alloca(i32, size=x)                 # llvmlite prints it (no printer here)
    b.call(fn, [w, y, p])
    b.branch(done)
    b.position_at_end(done)
    phi = b.phi(i32)
    phi.add_incoming(w, entry)
    phi.add_incoming(x, other)
    b.ret(phi)
    void = ir.Function(module, ir.FunctionType(ir.VoidType(), []), "g")
    ir.IRBuilder(void.append_basic_block()).ret_void()
    declared = ir.Function(module, ir.FunctionType(i32, []), "h")
    for f in (fn, void, declared):
        assert function_text(f) == str(f)
