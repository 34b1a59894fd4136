"""Non-temporal stores for big loop-kernel results (xlac/codegen/nontemporal.py):
which kernels get them, that the optimised IR carries them only where LLVM
proved the alignment, and that both versions (aligned result, unaligned
donated buffer) compute the same values as numpy and as the plain kernel.
The JIT compiles for its pool's aligned buffers (one version) and compiles
the versioned code the first time a donated buffer is not aligned.

The tests that look at the optimised IR compile for pinned CPUs (the
``pinned_target`` fixture): the vectors LLVM stores are 256 bits for an AVX2
CPU and for Intel's AVX-512 CPUs (they prefer 256-bit vectors), 512 bits for
an AVX-512 target without that preference."""
import ctypes
import re

import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.codegen import nontemporal
from xlac.codegen.compiler import lower
from xlac.codegen.jit import parse_and_optimize
from xlac.codegen.target import host_target_machine
from xlac.runtime import abi, threads
from xlac.program import compile_program

ROWS, COLS = 4096, 1024          # 16 MiB of f32: the smallest result that qualifies


def _layernorm_like(rows=ROWS, cols=COLS):
    """(x - mean(x, row)) * g[col] + b[col]: a row reduction broadcast back."""
    bld = xlac.XlaBuilder("rownorm")
    x = ops.parameter(bld, 0, xlac.Shape(xlac.F32, (rows, cols)), "x")
    g = ops.parameter(bld, 1, xlac.Shape(xlac.F32, (cols,)), "g")
    zero = ops.constant(bld, np.float32(0))
    add = xlac.XlaBuilder("add")
    p0 = ops.parameter(add, 0, xlac.Shape(xlac.F32, ()), "a")
    p1 = ops.parameter(add, 1, xlac.Shape(xlac.F32, ()), "b")
    sum_ = ops.reduce(x, zero, add.build(ops.add(p0, p1)), (1,))
    mean = ops.div(sum_, ops.broadcast_in_dim(ops.constant(bld, np.float32(cols)), (rows,), ()))
    centred = ops.sub(x, ops.broadcast_in_dim(mean, (rows, cols), (0,)))
    return bld.build(ops.mul(centred, ops.broadcast_in_dim(g, (rows, cols), (1,))))


def _reference(x, g):
    return (x - x.sum(axis=1, keepdims=True) / x.shape[1]) * g


def _optimised_ir(comp) -> str:
    return str(parse_and_optimize(lower(comp.module).llvm_module, host_target_machine()))


def _args(rows=ROWS, cols=COLS):
    rng = np.random.default_rng(0)
    return rng.standard_normal((rows, cols)).astype(np.float32), rng.standard_normal(cols).astype(np.float32)


def _nt_stores(ir: str) -> set:
    """(vector type, alignment) of the non-temporal stores in ``ir``."""
    return set(re.findall(r"store <(\d+ x \w+)> [^\n]*, align (\d+), !nontemporal", ir))


def _whole_f32_vectors(pinned) -> set:
    """What :func:`_nt_stores` gives for f32 results: the target's loop
    vectors, aligned to their size (64 bytes for 512 bits, 32 for 256)."""
    return {(f"{pinned.loop_vector_bits // 32} x float", str(pinned.loop_vector_bits // 8))}


def test_big_result_gets_nontemporal_stores_small_does_not(pinned_target):
    ir_big = _optimised_ir(_layernorm_like())
    assert _nt_stores(ir_big) == _whole_f32_vectors(pinned_target)
    ir_small = _optimised_ir(_layernorm_like(rows=64))
    assert "!nontemporal" not in ir_small


def test_row_reduction_is_emitted_once_for_both_versions(pinned_target):
    """Only the inner loop is versioned: the row sum hoisted in front of it is
    compiled once (LLVM does not unswitch the row loop on the alignment test),
    and a row fusion with costly math (softmax's exp) gets the versions too."""
    ir = _optimised_ir(_layernorm_like())
    assert ir.count("@llvm.vector.reduce.fadd.v") == 2     # one call and its declaration
    bld = xlac.XlaBuilder("softmaxbig")
    x = ops.parameter(bld, 0, xlac.Shape(xlac.F32, (ROWS, COLS)), "x")
    add = xlac.XlaBuilder("add")
    add_comp = add.build(ops.add(ops.parameter(add, 0, xlac.Shape(xlac.F32, ()), "a"),
                                 ops.parameter(add, 1, xlac.Shape(xlac.F32, ()), "b")))
    e = ops.exp(x)
    total = ops.reduce(e, ops.constant(bld, np.float32(0)), add_comp, (1,))
    ir = _optimised_ir(bld.build(ops.div(e, ops.broadcast_in_dim(total, (ROWS, COLS), (0,)))))
    assert _nt_stores(ir) == _whole_f32_vectors(pinned_target)
    assert ir.count("@llvm.vector.reduce.fadd.v") == 2


@pytest.mark.parametrize("num_threads", [1, 2])
def test_aligned_results_match_numpy_and_the_plain_kernel(num_threads, monkeypatch):
    x, g = _args()
    got = xlac.jit(_layernorm_like(), num_threads=num_threads)(x, g)
    assert got.ctypes.data % 64 == 0          # the pool's block: the non-temporal version ran
    np.testing.assert_allclose(got, _reference(x, g), rtol=1e-4, atol=1e-4)
    monkeypatch.setattr(nontemporal, "eligible", lambda inst, outputs, shape: False)
    plain = xlac.jit(_layernorm_like(), num_threads=num_threads)(x, g)
    np.testing.assert_array_equal(got, plain)


def _scale_columns():
    bld = xlac.XlaBuilder("scalecols")
    x = ops.parameter(bld, 0, xlac.Shape(xlac.F32, (ROWS, COLS)), "x")
    g = ops.parameter(bld, 1, xlac.Shape(xlac.F32, (COLS,)), "g")
    return bld.build(ops.add(ops.mul(x, ops.broadcast_in_dim(g, (ROWS, COLS), (1,))), x))


def test_aligned_results_lowering_has_one_version_and_says_so(pinned_target):
    """``lower(aligned_results=True)`` (the JIT's) writes a big result without
    the alignment test and its second inner loop, and records that it relied
    on aligned buffers; a module without big results relies on nothing."""
    general = lower(_scale_columns().module)
    aligned = lower(_scale_columns().module, aligned_results=True)
    assert not general.assumes_aligned_results and aligned.assumes_aligned_results
    assert "call i64 asm" in general.llvm_ir and "call i64 asm" not in aligned.llvm_ir
    assert general.llvm_ir.count(".body:") > aligned.llvm_ir.count(".body:")
    ir = str(parse_and_optimize(aligned.llvm_module, host_target_machine()))
    assert _nt_stores(ir) == _whole_f32_vectors(pinned_target)
    assert not lower(_layernorm_like(rows=64).module, aligned_results=True).assumes_aligned_results


@pytest.mark.parametrize("offset", [0, 16])
def test_donated_buffer_aligned_or_not(offset):
    """A donated argument is the result's buffer: 64-byte aligned, the
    non-temporal version runs; 16 bytes off, the module is compiled again
    without the alignment promise (once) and its plain version runs."""
    x, g = _args()
    assert "!nontemporal" in _optimised_ir(_scale_columns())
    want = x * g + x
    raw = np.empty(x.size * 4 + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    buf = raw[start:start + x.size * 4].view(np.float32).reshape(x.shape)
    buf[...] = x
    for threads in (1, 2):
        buf[...] = x
        exe = xlac.jit(_scale_columns(), donate_argnums=(0,), num_threads=threads)
        assert exe._program.assumes_aligned_results
        out = exe(buf, g)
        assert np.shares_memory(out, buf) and out.ctypes.data % 64 == offset
        np.testing.assert_array_equal(out, want)
        assert (exe._general_fn is not None) == (offset != 0)


@pytest.mark.parametrize("offset", [0, 16])
def test_row_fusion_into_an_unaligned_result(offset):
    """The entry compiled without the alignment promise (as ahead-of-time
    objects are) called with a result buffer 16 bytes off a cache line: the
    plain inner loop runs, with the row sums shared by both versions, and
    gives the aligned result's values."""
    x, g = _args()
    exe = xlac.jit(_layernorm_like())
    program = compile_program(_layernorm_like(), aligned_results=False).program
    assert not program.assumes_aligned_results
    fn = abi.ENTRY(program.jit.address)
    raw = np.empty(x.size * 4 + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    out = raw[start:start + x.size * 4].view(np.float32).reshape(x.shape)
    temp = np.empty(program.temp_size + 64, np.uint8)
    temp_ptr = temp.ctypes.data + (-temp.ctypes.data) % 64
    results = (ctypes.c_void_p * 1)(out.ctypes.data)
    params = (ctypes.c_void_p * 2)(x.ctypes.data, g.ctypes.data)
    for threads_ in (1, 2):
        out[...] = np.nan
        opts = threads.make_run_options(threads_)
        fn(ctypes.addressof(results), ctypes.addressof(params), temp_ptr, ctypes.addressof(opts))
        np.testing.assert_array_equal(out, exe(x, g))


def test_mark_stores_needs_the_group_and_the_alignment():
    text = "\n".join([
        "define void @f(ptr %p, <16 x float> %v) {",
        "  store <16 x float> %v, ptr %p, align 64, !llvm.access.group !2",
        "  store <16 x float> %v, ptr %p, align 4, !llvm.access.group !2",
        "  store <16 x float> %v, ptr %p, align 64, !llvm.access.group !1",
        "  ret void",
        "}",
        "!xlac.nontemporal = !{!0}",
        "!0 = distinct !{}",
        "!1 = distinct !{}",
        "!2 = !{!1, !0}",
    ])
    out = nontemporal.mark_stores(text).split("\n")
    assert out[1].endswith("!nontemporal !3")
    assert "nontemporal" not in out[2] and "nontemporal" not in out[3]
    assert out[-2] == "!3 = !{i32 1}"
    assert nontemporal.mark_stores(text.replace("!xlac.nontemporal = !{!0}", "")) is None


def test_big_result_inside_a_while_body_relies_on_aligned_temps():
    """A loop body writing a big result into the loop state (temp and result
    buffers the caller hands it): the JIT's single non-temporal version
    relies on those being 64-byte aligned, and computes what the evaluator
    does, with 1 and 2 threads."""
    st = "(s32[], f32[4096,1024]{1,0})"
    text = f"""HloModule whilebig
cond {{
  p = {st} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}}
body {{
  p = {st} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4096,1024]{{1,0}} get-tuple-element(p), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  h = f32[] constant(0.5)
  hb = f32[4096,1024]{{1,0}} broadcast(h), dimensions={{}}
  y = f32[4096,1024]{{1,0}} multiply(x, hb)
  xr = f32[4096,1024]{{1,0}} reverse(x), dimensions={{0}}
  y2 = f32[4096,1024]{{1,0}} add(y, xr)
  ROOT r = {st} tuple(i2, y2)
}}
ENTRY e {{
  x = f32[4096,1024]{{1,0}} parameter(0)
  z = s32[] constant(0)
  s = {st} tuple(z, x)
  w = {st} while(s), condition=cond, body=body
  ROOT o = f32[4096,1024]{{1,0}} get-tuple-element(w), index=1
}}"""
    x, _ = _args()
    want = xlac.evaluate(text, x)
    for threads_ in (1, 2):
        exe = xlac.jit(text, num_threads=threads_)
        assert exe._program.assumes_aligned_results and "!nontemporal" in exe.optimized_llvm_ir
        np.testing.assert_allclose(exe(x), want, rtol=1e-5, atol=1e-5)


def test_mark_stores_takes_wide_vectors_aligned_to_a_line():
    """LLVM may store a loop's vectors as one wider vector (``<64 x float>``,
    four 64-byte stores): aligned to a cache line it is marked, as a
    ``<64 x i16>`` (a 2-byte result) is; a half-aligned one is not, nor one
    that ends inside a line."""
    text = "\n".join([
        "define void @f(ptr %p, <64 x float> %v, <64 x i16> %h, <24 x float> %w) {",
        "  store <64 x float> %v, ptr %p, align 64, !llvm.access.group !2",
        "  store <64 x float> %v, ptr %p, align 32, !llvm.access.group !2",
        "  store <64 x i16> %h, ptr %p, align 64, !llvm.access.group !2",
        "  store <24 x float> %w, ptr %p, align 64, !llvm.access.group !2",
        "  ret void",
        "}",
        "!xlac.nontemporal = !{!0}",
        "!0 = distinct !{}",
        "!1 = distinct !{}",
        "!2 = !{!1, !0}",
    ])
    out = nontemporal.mark_stores(text).split("\n")
    assert out[1].endswith("!nontemporal !3") and out[3].endswith("!nontemporal !3")
    assert "nontemporal" not in out[2] and "nontemporal" not in out[4]


def _chain(pt, n=None):
    """``tanh(a*x + b)*c + x`` over a vector (the benchmark's chain), by
    default of the smallest size that qualifies."""
    n = n or nontemporal.MIN_BYTES // pt.byte_size
    bld = xlac.XlaBuilder(f"chain_{pt.value}")
    x = ops.parameter(bld, 0, xlac.Shape(pt, (n,)), "x")
    a, b, c = (ops.broadcast(ops.parameter(bld, k, xlac.Shape(pt, ()), name), (n,))
               for k, name in ((1, "a"), (2, "b"), (3, "c")))
    return bld.build(ops.add(ops.mul(ops.tanh(ops.add(ops.mul(a, x), b)), c), x))


@pytest.mark.parametrize("pt", [xlac.F32, xlac.BF16], ids=lambda t: t.value)
def test_vector_chain_gets_nontemporal_stores(pt, pinned_target):
    """A 1-D elementwise kernel (f32, and a 2-byte bf16 result) writes its big
    result non-temporally, whatever width LLVM gives the stored vectors."""
    ir = _optimised_ir(_chain(pt))
    stores = _nt_stores(ir)
    elem = "float" if pt is xlac.F32 else "i16"
    assert stores and all(t.endswith(f" x {elem}") and int(a) >= min(64, pinned_target.loop_vector_bits // 8)
                          for t, a in stores), stores


@pytest.mark.parametrize("pt", [xlac.F32, xlac.BF16], ids=lambda t: t.value)
def test_vector_chain_with_nontemporal_stores_matches_the_evaluator(pt):
    dt = xlac.Shape(pt, ()).dtype
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(nontemporal.MIN_BYTES // pt.byte_size).astype(dt), dt.type(0.5), dt.type(0.25),
            dt.type(1.5)]
    exe = xlac.jit(_chain(pt))
    assert "!nontemporal" in exe.optimized_llvm_ir
    got = exe(*args)
    want = xlac.evaluate(_chain(pt), *args)
    if pt is xlac.BF16:
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
