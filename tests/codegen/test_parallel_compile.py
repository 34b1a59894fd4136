"""Compiling a module in parts on several threads (codegen/split.py, jit.compile_ir)."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import pytest
from llvmlite import ir

import xlac
from xlac.codegen import emitter, jit, split
from xlac.codegen.compiler import lower
from xlac.codegen.loops import for_range
from xlac.codegen.target import init_llvm
from xlac.program import ENTRY_NAME, ensure_symbols

pytestmark = pytest.mark.timeout(600)

JAX_CASES = Path(__file__).resolve().parents[1] / "jax_cases"
#: Cases with while loops, rng state, sorts, gathers, reductions and dots.
CASES = ["gamma_rng", "rng_randint_perm", "shuffle", "categorical", "interp"]


def _inputs(name: str) -> list:
    with np.load(JAX_CASES / f"{name}.npz") as d:
        return [d[f"arr_{k}"] for k in range(len(d.files))]


def _leaves(value) -> list:
    if isinstance(value, tuple):
        return [leaf for v in value for leaf in _leaves(v)]
    return [np.asarray(value)]


@pytest.fixture
def tiny_parts(monkeypatch):
    """Split every module that can be split (parts of any size), no kernel
    left to the entry's part as cold."""
    monkeypatch.setattr(jit, "MIN_PART_INSTRUCTIONS", 1)
    monkeypatch.setattr(jit, "TAIL_PART_INSTRUCTIONS", 1)
    monkeypatch.setattr(emitter, "COLD_MAX_WORK", -1)


# ------------------------------------------------------------------------------------
# Results
# ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", CASES)
def test_results_identical_with_one_and_several_compile_threads(name, tiny_parts, monkeypatch):
    text = (JAX_CASES / f"{name}.hlo").read_text(encoding="utf-8")
    lowered = lower(xlac.parse_hlo(text), entry_name=ENTRY_NAME, aligned_results=True, native=True)
    assert len(split.split_module(lowered.llvm_module, ENTRY_NAME, 4)) > 1   # it is really split
    inputs = _inputs(name)
    got = {}
    for threads in ("1", "4"):
        monkeypatch.setenv("XLAC_COMPILE_THREADS", threads)
        xlac.clear_caches()
        exe = xlac.jit(text)
        parts = len(exe._program.jit.object_parts)
        assert parts == 1 if threads == "1" else parts > 1
        got[threads] = _leaves(exe(*inputs))
    for a, b in zip(got["1"], got["4"]):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes(), name


def test_parts_are_compiled_and_linked_into_one_engine(tiny_parts):
    text = (JAX_CASES / "gamma_rng.hlo").read_text(encoding="utf-8")
    lowered = lower(xlac.parse_hlo(text), entry_name=ENTRY_NAME, aligned_results=True, native=True)
    one = jit.compile_ir(lowered.llvm_module, ENTRY_NAME, before_load=ensure_symbols, threads=1)
    three = jit.compile_ir(lowered.llvm_module, ENTRY_NAME, before_load=ensure_symbols, threads=3)
    count = 3 * jit.PARTS_PER_THREAD        # parts of any size (tiny_parts)
    assert len(one.object_parts) == 1 and len(three.object_parts) == count
    assert sum(three.object_parts) == len(three.object_code)
    assert three.optimized_ir.count("; ---- part ") == count
    assert set(three.timings) >= {"split", "optimize", "codegen", "backend", "load"}
    # The entry is defined in the first part only; every part is a module LLVM accepts.
    texts = split.split_module(lowered.llvm_module, ENTRY_NAME, 3)
    assert len(texts) == 3
    defines_entry = [bool(re.search(rf'^define .*@"?{ENTRY_NAME}"?\(', t, re.M)) for t in texts]
    assert defines_entry == [True, False, False]
    init_llvm()
    for t in texts:
        llvm.parse_assembly(t, llvm.create_context()).verify()


def test_two_split_programs_with_the_same_kernel_names_do_not_mix(tiny_parts, monkeypatch):
    """Both programs export kernels of the same names from their parts: each
    engine links its own."""
    monkeypatch.setenv("XLAC_COMPILE_THREADS", "3")
    template = """HloModule m

ENTRY e {
  x = f32[256] parameter(0)
  c = f32[256] broadcast(f32[] constant(%s)), dimensions={}
  a = f32[256] multiply(x, c)
  d = f32[] dot(a, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  e = f32[256] exponential(a)
  t = f32[256] tanh(e)
  s = f32[] reduce(t, f32[] constant(0)), dimensions={0}, to_apply=add
  ROOT r = (f32[], f32[], f32[256]) tuple(d, s, t)
}

add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT r = f32[] add(p, q)
}
"""
    x = np.linspace(-1, 1, 256, dtype=np.float32)
    exes = [xlac.jit(template % v) for v in ("0.5", "-2")]
    for exe in exes:
        assert len(exe._program.jit.object_parts) > 1
    for exe, v in zip(exes, (0.5, -2.0)):
        ref = xlac.evaluate(xlac.parse_hlo(template % v), x)
        for a, b in zip(_leaves(exe(x)), _leaves(ref)):
            np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)


# ------------------------------------------------------------------------------------
# Splitting
# ------------------------------------------------------------------------------------

def _too_big_to_copy(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    """``v`` through more instructions than the split copies a function of."""
    i32 = ir.IntType(32)
    for k in range(split.COPY_MAX_INSTRUCTIONS + 10):
        v = b.xor(b.mul(v, ir.Constant(i32, 3 + k)), ir.Constant(i32, k))
    return v


def _entry_calling(m: ir.Module, fty: ir.FunctionType, kernels: list) -> ir.Function:
    """``entry(p)``: calls every function of ``kernels`` with ``p``, in order."""
    entry = ir.Function(m, fty, "entry")
    b = ir.IRBuilder(entry.append_basic_block())
    for fn in kernels:
        b.call(fn, [entry.args[0]])
    b.ret_void()
    return entry


def _module_with_shared_values() -> ir.Module:
    """An entry calling three kernels that share a small helper, a small and a big
    constant, a big helper and a mutable counter."""
    m = ir.Module("shared")
    fty = ir.FunctionType(ir.VoidType(), [ir.PointerType()])
    i32, i64 = ir.IntType(32), ir.IntType(64)

    def constant(name, n):
        ty = ir.ArrayType(i32, n)
        g = ir.GlobalVariable(m, ty, name)
        g.initializer = ir.Constant(ty, list(range(n)))
        g.global_constant = True
        g.linkage = "internal"
        return g

    small, big = constant("small", 4), constant("big", 4096)
    counter = ir.GlobalVariable(m, i64, "counter")
    counter.initializer = ir.Constant(i64, 0)
    counter.linkage = "internal"
    helper = ir.Function(m, ir.FunctionType(i32, [i32]), "helper")
    helper.linkage = "internal"
    b = ir.IRBuilder(helper.append_basic_block())
    b.ret(b.add(helper.args[0], ir.Constant(i32, 1)))
    heavy = ir.Function(m, ir.FunctionType(i32, [i32]), "heavy")
    heavy.linkage = "internal"
    heavy.attributes.add("noinline")
    b = ir.IRBuilder(heavy.append_basic_block())
    b.ret(_too_big_to_copy(b, heavy.args[0]))
    kernels = []
    for k in range(3):
        fn = ir.Function(m, fty, f"kernel{k}")
        fn.linkage = "internal"
        fn.attributes.add("noinline")
        b = ir.IRBuilder(fn.append_basic_block())
        out = fn.args[0]
        at = ir.Constant(i64, k)
        s = b.load(b.gep(small, [ir.Constant(i64, 0), at]), typ=i32)
        g = b.load(b.gep(big, [ir.Constant(i64, 0), ir.Constant(i64, 100 + k)]), typ=i32)
        r = b.add(b.call(helper, [s]), b.call(heavy, [g]))
        for j in range(split.COPY_MAX_INSTRUCTIONS):       # big enough not to be copied
            r = b.add(b.mul(r, ir.Constant(i32, 1)), ir.Constant(i32, 0))
        b.atomic_rmw("add", counter, ir.Constant(i64, 1), "monotonic")
        b.store(r, b.gep(out, [at], source_etype=i32))
        b.ret_void()
        kernels.append(fn)
    _entry_calling(m, fty, kernels)
    return m


def _definitions(text: str) -> set:
    names = set(re.findall(r'^define [^@]*@"?([^"(]+)"?\(', text, re.M))
    names |= set(re.findall(r'^@"?([^" ]+)"? = (?!external)', text, re.M))
    return names


def test_split_copies_small_values_and_exports_shared_ones():
    m = _module_with_shared_values()
    texts = split.split_module(m, "entry", 3)
    assert len(texts) == 3
    defs = [_definitions(t) for t in texts]
    assert "entry" in defs[0] and all("entry" not in d for d in defs[1:])
    for k in range(3):
        assert sum(f"kernel{k}" in d for d in defs) == 1
    # Placed once: the big constant, the big helper and the mutable counter.
    for name in ("big", "heavy", "counter"):
        assert sum(name in d for d in defs) == 1, name
    # Copied into every part that uses it: the small helper and the small constant.
    users = sum(any(f"kernel{k}" in d for k in range(3)) for d in defs)
    assert sum("helper" in d for d in defs) == users
    assert sum("small" in d for d in defs) == users
    # What a part uses from another is hidden there and declared here.
    for t in texts:
        for name in re.findall(r'^declare hidden [^@]*@"?([^"(]+)"?\(', t, re.M):
            home = [u for u in texts if name in _definitions(u)]
            assert len(home) == 1 and re.search(rf'^define hidden [^@]*@"?{name}"?\(', home[0], re.M)


def test_split_finds_globals_named_only_in_constant_expressions():
    # The split reads references from instruction operands, not from text: a
    # global reached only through a constant getelementptr must still be
    # declared in the part that uses it (else LLVM refuses that part).
    init_llvm()
    i32, i64 = ir.IntType(32), ir.IntType(64)
    m = ir.Module("constexpr")
    table = ir.GlobalVariable(m, ir.ArrayType(i32, 4096), "table")
    table.initializer = ir.Constant(ir.ArrayType(i32, 4096), [k for k in range(4096)])
    table.linkage, table.global_constant = "internal", True
    fty = ir.FunctionType(ir.VoidType(), [ir.PointerType()])
    kernels = []
    for k in range(2):
        fn = ir.Function(m, fty, f"kernel{k}")
        fn.linkage = "internal"
        fn.attributes.add("noinline")
        b = ir.IRBuilder(fn.append_basic_block())
        r = b.load(table.gep([ir.Constant(i64, 0), ir.Constant(i64, 7 + k)]), typ=i32)
        for _ in range(split.COPY_MAX_INSTRUCTIONS):
            r = b.add(r, ir.Constant(i32, 1))
        b.store(r, b.gep(fn.args[0], [ir.Constant(i64, k)], source_etype=i32))
        b.ret_void()
        kernels.append(fn)
    _entry_calling(m, fty, kernels)
    texts = split.split_module(m, "entry", 3)
    assert len(texts) == 3
    for t in texts:
        llvm.parse_assembly(t, llvm.create_context()).verify()
    assert sum("table" in _definitions(t) for t in texts) == 1


def _link_parts(texts: list[str]):
    """The parts' objects, each verified and emitted, loaded as one program."""
    tm = jit.host_target_machine()
    objects = []
    for t in texts:
        ref = llvm.parse_assembly(t, llvm.create_context())
        ref.verify()
        objects.append(jit.emit_object(tm, ref))
    return jit.load_object(b"".join(objects), "entry", parts=[len(o) for o in objects])


def test_split_parts_link_and_run_like_the_whole_module():
    init_llvm()
    m = _module_with_shared_values()
    for parts in (1, 3):
        texts = split.split_module(m, "entry", parts)
        assert len(texts) == parts
        fn = _link_parts(texts)
        import ctypes
        out = (ctypes.c_int32 * 3)()
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(fn.address)(ctypes.addressof(out))
        heavy = []
        for k in range(3):
            v = 100 + k
            for j in range(split.COPY_MAX_INSTRUCTIONS + 10):
                v = ((v * (3 + j)) & 0xFFFFFFFF) ^ j
            heavy.append(np.int32(np.uint32(v)))
        assert list(out) == [int(np.int32(k + 1 + int(h))) for k, h in enumerate(heavy)]


def test_small_modules_and_text_stay_one_part():
    b = xlac.XlaBuilder("small")
    x = xlac.ops.parameter(b, 0, xlac.shape("f32[8]"), "x")
    lowered = lower(b.build(xlac.ops.exp(x)).module)
    assert jit.part_count(lowered.llvm_module, threads=8) == 1
    assert jit.part_count(str(lowered.llvm_module), threads=8) == 1
    assert split.split_module(lowered.llvm_module, lowered.entry_name, 1) == [str(lowered.llvm_module)]


def test_load_object_rejects_parts_that_do_not_fit():
    with pytest.raises(ValueError, match="do not cover"):
        jit.split_objects(b"\x7fELF" * 4, [4, 4])
    with pytest.raises(ValueError, match="not an ELF"):
        jit.split_objects(b"\x7fELFabcd", [4, 4])
    assert jit.split_objects(b"\x7fELF\x7fELF", [4, 4]) == [b"\x7fELF", b"\x7fELF"]


@pytest.mark.parametrize("value,expected", [("3", 3), ("1", 1), ("0", None), ("-2", None), ("two", None),
                                            ("", None)])
def test_compile_threads_from_the_environment(value, expected, monkeypatch):
    monkeypatch.setenv("XLAC_COMPILE_THREADS", value)
    default = len(os.sched_getaffinity(0))
    assert jit.compile_threads() == (expected if expected is not None else default)


# ------------------------------------------------------------------------------------
# Disk cache and dumps
# ------------------------------------------------------------------------------------

def test_disk_cache_round_trips_a_split_module(tiny_parts, monkeypatch, tmp_path):
    monkeypatch.setenv("XLAC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("XLAC_COMPILE_THREADS", "3")
    text = (JAX_CASES / "categorical.hlo").read_text(encoding="utf-8")
    inputs = _inputs("categorical")
    xlac.clear_caches()
    first = xlac.jit(text)
    expected = _leaves(first(*inputs))
    assert first.from_cache is None
    metas = [json.loads(p.read_text(encoding="utf-8")) for p in tmp_path.glob("*.json")]
    split_meta = [m for m in metas if len(m.get("object_parts", [])) > 1]
    assert len(split_meta) == 1
    meta = split_meta[0]
    assert sum(meta["object_parts"]) == meta["object_size"]
    xlac.clear_caches()
    again = xlac.jit(text)
    assert again.from_cache == "disk"
    for a, b in zip(_leaves(again(*inputs)), expected):
        assert a.tobytes() == b.tobytes()
    # Sizes that do not fit the object are a miss: compiled again, never a crash.
    path = tmp_path / f"{meta['key']}.json"
    bad = dict(meta, object_parts=[meta["object_size"] - 1, 1])
    from xlac.runtime import disk_cache
    bad["meta_sha256"] = disk_cache._meta_digest(bad)
    path.write_text(json.dumps(bad), encoding="utf-8")
    xlac.clear_caches()
    monkeypatch.setenv("XLAC_COMPILE_THREADS", "1")
    third = xlac.jit(xlac.parse_hlo(text))
    assert third.from_cache is None
    for a, b in zip(_leaves(third(*inputs)), expected):
        assert a.tobytes() == b.tobytes()


def test_dumps_show_every_part(tiny_parts, monkeypatch, tmp_path):
    monkeypatch.setenv("XLAC_DUMP_TO", str(tmp_path))
    monkeypatch.setenv("XLAC_COMPILE_THREADS", "2")
    lowered = lower(xlac.parse_hlo((JAX_CASES / "interp.hlo").read_text(encoding="utf-8")))
    jit.compile_ir(lowered.llvm_module, lowered.entry_name, before_load=ensure_symbols)
    # module_NNNN.<name>.<stage> (the names XLA's --xla_dump_to gives)
    names = sorted(n.split(".", 2)[2] for n in os.listdir(tmp_path) if n.endswith((".ll", ".s")))
    parts = range(sum(n.endswith(".s") for n in names))   # interp: 3 units, so 2 or 3 parts
    assert len(parts) > 1 and names == sorted(["ir-no-opt.ll"] + [f"ir-with-opt.part{k}.ll" for k in parts]
                           + [f"part{k}.s" for k in parts])
    init_llvm()
    for name in os.listdir(tmp_path):
        if name.endswith(".ll"):
            llvm.parse_assembly((tmp_path / name).read_text(encoding="utf-8"), llvm.create_context()).verify()


def test_optimized_llvm_ir_shows_the_parts(tiny_parts, monkeypatch):
    monkeypatch.setenv("XLAC_COMPILE_THREADS", "2")
    monkeypatch.setattr(jit, "BATCH_INSTRUCTIONS", 1 << 30)    # split once emitted, as optimized_ir does
    exe = xlac.jit((JAX_CASES / "interp.hlo").read_text(encoding="utf-8"))
    text = exe.optimized_llvm_ir
    count = len(exe._program.jit.object_parts)
    assert count > 1 and text.startswith(f"; ---- part 0 of {count} ----") and f"; ---- part {count - 1} of {count} ----" in text


# ------------------------------------------------------------------------------------
# Compiling while emitting (split.StreamSplit, jit.StreamedCompile)
# ------------------------------------------------------------------------------------

def test_streamed_batches_and_the_rest_link_and_run_like_the_whole_module():
    """Kernels go out one batch each as they are finished; the rest (the entry,
    the big constant, the counter) is split when the emission ends.  Every
    value is defined once, small ones are copied, and the parts link."""
    init_llvm()
    m = _module_with_shared_values()
    stream = split.StreamSplit(m, batch=1)
    kernels = [m.globals[f"kernel{k}"] for k in range(3)]
    texts = [stream.finished([fn]) for fn in kernels]
    assert all(t is not None for t in texts) and stream.batches == 3
    assert stream.finished([kernels[0]]) is None          # sent already
    assert stream.finished([m.globals["helper"]]) is None  # small: copied where used, never sent
    plan = stream.rest("entry", 2)
    texts += [plan.text(k) for k in range(plan.count)]
    defs = [_definitions(t) for t in texts]
    for name in ("entry", "kernel0", "kernel1", "kernel2", "big", "heavy", "counter"):
        assert sum(name in d for d in defs) == 1, name
    assert "heavy" in defs[0]                  # reached first from kernel0's batch, exported there
    assert all("big" not in d for d in defs[:3])   # globals wait for the end
    assert sum("helper" in d for d in defs) == 3   # copied into each kernel's batch
    fn = _link_parts(texts)
    whole = jit.compile_ir(str(m), "entry", threads=1)
    import ctypes
    outs = []
    for f in (fn, whole):
        out = (ctypes.c_int32 * 3)()
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(f.address)(ctypes.addressof(out))
        outs.append(list(out))
    assert outs[0] == outs[1]


def test_a_part_prints_only_the_metadata_it_uses():
    text = (JAX_CASES / "interp.hlo").read_text(encoding="utf-8")
    lowered = lower(xlac.parse_hlo(text), entry_name=ENTRY_NAME, aligned_results=True, native=True)
    texts = split.split_module(lowered.llvm_module, ENTRY_NAME, 3)
    total = len(lowered.llvm_module.metadata)
    assert len(texts) > 1
    for t in texts:
        used = set(re.findall(r"!(\d+)\b", "\n".join(line for line in t.split("\n") if not line.startswith("!"))))
        defined = set(re.findall(r"^!(\d+) = ", t, re.M))
        assert used <= defined and len(defined) < total


@pytest.mark.parametrize("name", CASES)
def test_results_identical_when_compiled_while_emitting(name, tiny_parts, monkeypatch):
    """Every finished kernel a batch of its own (the most parts there can be):
    the same bits as one part on one thread."""
    monkeypatch.setattr(jit, "BATCH_INSTRUCTIONS", 1)
    sent = []
    finish = jit.StreamedCompile.finish

    def counting_finish(self):
        sent.append(self.sent_while_emitting)
        return finish(self)

    monkeypatch.setattr(jit.StreamedCompile, "finish", counting_finish)
    text = (JAX_CASES / f"{name}.hlo").read_text(encoding="utf-8")
    inputs = _inputs(name)
    got = {}
    for threads in ("1", "2"):
        monkeypatch.setenv("XLAC_COMPILE_THREADS", threads)
        xlac.clear_caches()
        got[threads] = _leaves(xlac.jit(text)(*inputs))
    assert len(sent) == 1 and sent[0] > 1          # threads=1 does not stream
    for a, b in zip(got["1"], got["2"]):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes(), name


def test_the_emission_is_freed_while_the_threads_compile_and_leaves_no_garbage(monkeypatch):
    """Once every part is printed, the LLVM module is torn down and the
    emission's cycles collected before the compile threads are waited for
    (``program._EmissionFreer``); a compilation still leaves nothing for the
    cyclic collector (jax's core_test checks that), and the code runs."""
    import gc

    from xlac import program
    monkeypatch.setenv("XLAC_COMPILE_THREADS", "2")
    monkeypatch.setattr(jit, "BATCH_INSTRUCTIONS", 1)
    states = []
    close = jit.StreamedCompile._close

    def watching_close(self):       # runs after ``on_printed``, before the threads are joined
        states.append(("globals" in self.module.__dict__, self._closed))
        return close(self)

    monkeypatch.setattr(jit.StreamedCompile, "_close", watching_close)
    text = (JAX_CASES / "gamma_rng.hlo").read_text(encoding="utf-8")
    freed = []
    free = program._EmissionFreer.__call__
    monkeypatch.setattr(program._EmissionFreer, "__call__", lambda self, m: (freed.append(1), free(self, m)))
    xlac.clear_caches()
    gc.collect()
    exe = xlac.jit(text)
    debug = gc.get_debug()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        found = gc.collect()
        garbage = [type(o).__name__ for o in gc.garbage[:20]]
        gc.garbage.clear()
    finally:
        gc.set_debug(debug)
    assert freed == [1] and states == [(False, False)]
    assert found == 0, garbage
    assert all(np.all(np.isfinite(a)) for a in _leaves(exe(*_inputs("gamma_rng"))) if a.dtype.kind == "f")


def test_a_failed_emission_leaves_nothing_running(monkeypatch):
    """A lowering that fails halfway: the parts already sent are dropped or run
    out, and the next compilation works."""
    monkeypatch.setenv("XLAC_COMPILE_THREADS", "2")
    monkeypatch.setattr(jit, "BATCH_INSTRUCTIONS", 1)
    abandoned = []
    abandon = jit.StreamedCompile.abandon
    monkeypatch.setattr(jit.StreamedCompile, "abandon", lambda self: (abandoned.append(1), abandon(self)))
    real = emitter.ModuleEmitter._emit_function

    def failing(self, comp, name, linkage):       # after every kernel was sent
        fn = real(self, comp, name, linkage)
        if comp is self.hlo.entry:
            raise RuntimeError("emission failed")
        return fn

    text = (JAX_CASES / "gamma_rng.hlo").read_text(encoding="utf-8")
    monkeypatch.setattr(emitter.ModuleEmitter, "_emit_function", failing)
    xlac.clear_caches()
    with pytest.raises(RuntimeError, match="emission failed"):
        xlac.jit(text)
    assert abandoned == [1]
    monkeypatch.setattr(emitter.ModuleEmitter, "_emit_function", real)
    exe = xlac.jit(text)
    assert all(np.all(np.isfinite(a)) for a in _leaves(exe(*_inputs("gamma_rng"))) if a.dtype.kind == "f")


def test_cold_kernels_compile_with_the_entry_and_compute_the_same_bits(monkeypatch):
    """Kernels of the entry doing little work are reported cold and go out in
    cold batches; the entry's part is compiled as the entry; the program
    computes what it computes compiled in one part.  (Every kernel out of
    line here: the case's one-element kernels are tiny enough to be inlined
    into the entry otherwise.)"""
    monkeypatch.setattr(jit, "BATCH_INSTRUCTIONS", 1)
    monkeypatch.setattr(emitter, "INLINE_MAX_INSTRUCTIONS", 0)
    tiers = []
    compile_part = jit._compile_part

    def recording(text, speed_level, module_options, keep, tier=jit.HOT):
        tiers.append(tier)
        return compile_part(text, speed_level, module_options, keep, tier)

    monkeypatch.setattr(jit, "_compile_part", recording)
    text = (JAX_CASES / "categorical.hlo").read_text(encoding="utf-8")
    inputs = _inputs("categorical")
    got = {}
    for threads in ("1", "2"):
        monkeypatch.setenv("XLAC_COMPILE_THREADS", threads)
        xlac.clear_caches()
        got[threads] = _leaves(xlac.jit(text)(*inputs))
    # one part on one thread; then cold batches, hot ones and the entry's part
    assert tiers[0] == jit.HOT and set(tiers[1:]) == {jit.HOT, jit.COLD, jit.ENTRY}
    assert tiers[1:].count(jit.ENTRY) == 1 and tiers[1:].count(jit.COLD) >= 2
    for a, b in zip(got["1"], got["2"]):
        assert a.tobytes() == b.tobytes()


def test_fast_math_kernels_stay_out_of_line_and_hot():
    """A kernel with fast-math arithmetic (a reduction's ``reassoc contract``)
    is never inlined into another part nor compiled cold, however small: its
    bits would depend on the part it lands in."""
    module = ir.Module()
    fty = ir.FunctionType(ir.FloatType(), [ir.FloatType(), ir.FloatType()])

    def small(name: str, flags: list) -> ir.Function:
        fn = ir.Function(module, fty, name)
        fn.linkage = "internal"
        b = ir.IRBuilder(fn.append_basic_block())
        b.ret(b.fadd(*fn.args, flags=flags))
        return fn

    strict, fast = small("strict", []), small("fast", ["reassoc", "nsz", "contract"])
    caller = ir.Function(module, fty, "caller")
    b = ir.IRBuilder(caller.append_basic_block())
    b.ret(b.call(fast, list(caller.args)))
    for fn in (strict, fast, caller):
        emitter.keep_out_of_line(fn)
    assert "noinline" not in strict.attributes and "noinline" in fast.attributes
    assert not emitter.fast_math(strict) and emitter.fast_math(fast)
    assert not emitter.fast_math(caller) and emitter.fast_math(caller, callees=True)
    assert split._copyable(strict) and not split._copyable(fast)


def _module_with_a_shared_kernel() -> ir.Module:
    """entry -> kernel0, kernel1 (out of line) -> shared (out of line) -> body:
    a computation's function only ``shared`` calls, too big to be copied."""
    m = ir.Module("shared_kernel")
    fty = ir.FunctionType(ir.VoidType(), [ir.PointerType()])
    i32 = ir.IntType(32)

    def function(name, callees, noinline=True):
        fn = ir.Function(m, fty, name)
        fn.linkage = "internal"
        if noinline:
            fn.attributes.add("noinline")
        b = ir.IRBuilder(fn.append_basic_block())
        b.store(_too_big_to_copy(b, b.load(fn.args[0], typ=i32)), fn.args[0])
        for callee in callees:
            b.call(callee, [fn.args[0]])
        b.ret_void()
        return fn

    body = function("body", [], noinline=False)
    shared = function("shared", [body])
    kernels = [function(f"kernel{k}", [shared]) for k in range(2)]
    _entry_calling(m, fty, kernels)
    return m


def test_a_function_only_a_shared_kernel_calls_stays_with_it():
    """``shared`` is reached from two kernels and becomes a unit of its own;
    ``body``, reached only through it, belongs to that unit (a root of its own,
    it went to another part, where LLVM could not inline it)."""
    m = _module_with_a_shared_kernel()
    defs = [_definitions(t) for t in split.split_module(m, "entry", 4)]
    part = {name: k for k, d in enumerate(defs) for name in d}
    assert part["body"] == part["shared"], defs
    assert sum("body" in d for d in defs) == 1


def test_streamed_private_functions_stay_internal_to_their_part():
    m = _module_with_a_shared_kernel()
    g = m.globals
    stream = split.StreamSplit(m, batch=1)
    # A computation's function and the kernel calling it, reported together:
    # the function only that kernel calls stays internal, the kernel is exported.
    text = stream.finished([g["body"], g["shared"]], private=[g["body"]])
    assert re.search(r'^define internal void @"?body"?\(', text, re.M), text
    assert re.search(r'^define hidden void @"?shared"?\(', text, re.M), text
    later = stream.finished([g["kernel0"]])
    assert re.search(r'^declare hidden void @"?shared"?\(', later, re.M), later
    texts = [text, later] + [stream.rest("entry", 2).text(k) for k in range(stream.rest("entry", 2).count)]
    assert sum("body" in _definitions(t) for t in texts) == 1
    _link_parts(texts)


def test_a_private_function_called_from_a_later_part_is_an_error():
    m = _module_with_a_shared_kernel()
    g = m.globals
    stream = split.StreamSplit(m, batch=1)
    stream.finished([g["shared"]], private=[g["shared"]])     # wrongly: two kernels call it
    with pytest.raises(AssertionError, match="private.*shared"):
        stream.finished([g["kernel0"]])


def test_the_emitter_reports_a_while_body_with_the_kernel_running_it():
    """Functions finished inside a computation wait for the entry's kernel that
    runs it; a body's own kernels and a computation called from one kernel are
    private (internal to the part, where LLVM may inline them)."""
    reports = []
    lower(xlac.parse_hlo((JAX_CASES / "gamma_rng.hlo").read_text(encoding="utf-8")), entry_name=ENTRY_NAME,
          on_finished=lambda fns, cold, private: reports.append(([f.name for f in fns], [f.name for f in private])))
    # (A kernel shared by two sites is reported again, alone, at the second.)
    whiles = [r for r in reports if len(r[0]) > 1]
    assert whiles
    for names, private in whiles:
        # The while kernel comes last, after its condition's and body's functions and kernels.
        assert ".while." in names[-1] and len(names) > 3 and set(private) <= set(names[:-1]), names
        assert private
    assert all(not private for names, private in reports if len(names) == 1)


def test_switch_interval_is_short_while_compiling_during_emission_and_restored(monkeypatch):
    """A compiling thread takes the GIL back after every LLVM call: while the
    emitting thread runs Python, the interpreter hands the GIL over every
    ``SWITCH_INTERVAL`` instead of every 5 ms; the setting it found comes back
    when the last compilation ends (also an abandoned one)."""
    import sys
    monkeypatch.setenv("XLAC_COMPILE_THREADS", "2")
    monkeypatch.setattr(jit, "MIN_PART_INSTRUCTIONS", 1)      # parts, not one on this thread
    seen = []
    original = jit._compile_part

    def spy(*args, **kwargs):
        seen.append(sys.getswitchinterval())
        return original(*args, **kwargs)

    monkeypatch.setattr(jit, "_compile_part", spy)
    before = sys.getswitchinterval()
    xlac.clear_caches()
    exe = xlac.jit((JAX_CASES / "interp.hlo").read_text(encoding="utf-8"), optimize=True)
    assert jit.SWITCH_INTERVAL in seen        # the module's parts (library code is compiled apart)
    assert sys.getswitchinterval() == before and exe is not None
    stream = jit.StreamedCompile(ENTRY_NAME, 2)
    assert sys.getswitchinterval() == before and not stream._workers     # they start with a part
    stream._start_workers()
    assert sys.getswitchinterval() == jit.SWITCH_INTERVAL
    stream.abandon()
    assert sys.getswitchinterval() == before


def test_a_small_module_is_one_part_compiled_on_the_calling_thread(monkeypatch):
    """Below a part's worth of instructions a streamed compilation starts no
    workers: the module, entry included, is one part compiled where it was
    emitted, and computes what the evaluator does."""
    import threading

    from xlac.bench import random_inputs
    monkeypatch.setenv("XLAC_COMPILE_THREADS", "2")
    text = (JAX_CASES / "cumsum_ax1.hlo").read_text(encoding="utf-8")
    xlac.jit(text, optimize=True)           # the library units it calls built first
    where = []
    original = jit._compile_part

    def spy(*args, **kwargs):
        where.append(threading.current_thread())
        return original(*args, **kwargs)

    monkeypatch.setattr(jit, "_compile_part", spy)
    xlac.clear_caches()
    exe = xlac.jit(text, optimize=True)
    assert where == [threading.current_thread()]
    args = random_inputs(exe.module)
    np.testing.assert_allclose(np.asarray(exe(*args)), np.asarray(xlac.evaluate(text, *args)), rtol=1e-6)


def test_a_small_module_with_glue_compiles_its_cold_part_cold(monkeypatch):
    """A small module whose cold kernels (the blocked cholesky's glue around
    the library's routines, with its task functions) weigh
    COLD_PART_INSTRUCTIONS is two parts or more: the glue compiled cold (not
    all hot as one part); it computes the factor as the evaluator does."""
    monkeypatch.setenv("XLAC_COMPILE_THREADS", "2")
    text = """HloModule c
ENTRY e {
  a = f32[256,256] parameter(0)
  ROOT l = f32[256,256] cholesky(a), lower=true
}"""
    xlac.jit(text)                          # the library units it calls built first
    tiers = []
    original = jit._compile_part

    def spy(text, *args):
        tiers.append(args[-1] if len(args) > 3 else jit.HOT)
        return original(text, *args)

    monkeypatch.setattr(jit, "_compile_part", spy)
    xlac.clear_caches()
    exe = xlac.jit(text)
    assert jit.COLD in tiers and len(tiers) >= 2
    x = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
    a = x @ x.T + 256 * np.eye(256, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(exe(a)), np.asarray(xlac.evaluate(text, a)), rtol=1e-5, atol=1e-5)


def test_a_kernel_that_only_dispatches_its_tasks_is_compiled_cold_its_tasks_hot(monkeypatch):
    """A parallel loop kernel of the entry (two of them, one reading a
    transpose) does nothing but hand its tasks to parallel_for: the kernel
    goes to a cold part, its task function to a hot one, and the results are
    the evaluator's with and without a thread pool."""
    monkeypatch.setenv("XLAC_COMPILE_THREADS", "2")
    text = """HloModule d
ENTRY e {
  a = f32[512,512] parameter(0)
  t = f32[512,512] transpose(a), dimensions={1,0}
  s = f32[512,512] add(a, t)
  ROOT m = f32[512,512] multiply(s, s)
}"""
    parts = []
    original = jit._compile_part

    def spy(text, *args):
        parts.append((args[-1] if len(args) > 3 else jit.HOT, text))
        return original(text, *args)

    monkeypatch.setattr(jit, "_compile_part", spy)
    xlac.clear_caches()
    exe = xlac.jit(text)
    defined = [(tier, set(re.findall(r'^define [^@]*@"?([^"(]+)', t, re.M))) for tier, t in parts]
    tasks = {(tier, name) for tier, names in defined for name in names if ".task" in name}
    kernels = {(tier, name) for tier, names in defined for name in names
               if name.startswith(ENTRY_NAME + ".") and ".task" not in name}
    assert tasks and all(tier == jit.HOT for tier, _ in tasks)
    assert kernels and all(tier == jit.COLD for tier, _ in kernels)
    a = np.random.default_rng(1).standard_normal((512, 512)).astype(np.float32)
    want = np.asarray(xlac.evaluate(text, a))
    np.testing.assert_allclose(np.asarray(exe(a)), want, rtol=1e-6)
    serial = xlac.jit(text, num_threads=1)          # opts->parallel_for NULL: the kernel's own loop
    np.testing.assert_allclose(np.asarray(serial(a)), want, rtol=1e-6)


def test_back_edges_count_loops_not_joins():
    """``emitter._back_edges``: an if/else's join block (appended before the
    branches' blocks) is not a loop; each counted loop is."""
    m = ir.Module()
    fn = ir.Function(m, ir.FunctionType(ir.VoidType(), [ir.IntType(1)]), "f")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    with b.if_else(fn.args[0]) as (then, otherwise):
        with then:
            with for_range(b, 4):
                pass
        with otherwise:
            pass
    b.ret_void()
    assert emitter._back_edges(fn) == 1


def test_a_streamed_compile_failing_in_finish_stops_its_workers_and_restores_the_interval(monkeypatch):
    import sys
    monkeypatch.setattr(jit, "MIN_PART_INSTRUCTIONS", 1)      # parts, not one on this thread
    before = sys.getswitchinterval()
    stream = jit.StreamedCompile(ENTRY_NAME, 2)
    stream.module = ir.Module(name="m")
    fn = ir.Function(stream.module, ir.FunctionType(ir.VoidType(), []), ENTRY_NAME)
    ir.IRBuilder(fn.append_basic_block()).ret_void()

    def fail(*args, **kwargs):
        raise RuntimeError("split failed")

    monkeypatch.setattr(split.StreamSplit, "rest", fail)
    with pytest.raises(RuntimeError, match="split failed"):
        stream.finish()
    assert sys.getswitchinterval() == before
    assert not any(w.is_alive() for w in stream._workers)


def test_tiny_straight_line_kernels_stay_inlinable():
    """A kernel's ``allocas`` block that only branches to its body is not
    control flow: a one-element copy or scalar update stays inlinable (its
    caller, the entry or a while body, takes it in), a kernel with a loop
    does not."""
    text = """HloModule m

ENTRY e {
  s = f32[] parameter(0)
  v = f32[64]{0} parameter(1)
  one = f32[] constant(1)
  t = f32[] add(s, one)
  w = f32[64]{0} exponential(v)
  ROOT r = (f32[], f32[64]{0}, f32[]) tuple(t, w, s)
}"""
    exe = xlac.jit(text)
    heads = [line for line in exe.llvm_ir.splitlines() if line.startswith("define internal void")]
    inlinable = [h for h in heads if "noinline" not in h]
    assert inlinable and any("noinline" in h for h in heads), heads
    s, v = np.float32(2), np.arange(64, dtype=np.float32) / 64
    t, w, s2 = exe(s, v)
    assert t == 3 and s2 == 2 and np.allclose(w, np.exp(v))


_GLUE_CASES = {
    "convolution": ("""HloModule c
ENTRY e {
  x = f32[4,16,16,32] parameter(0)
  w = f32[3,3,32,32] parameter(1)
  bias = f32[32] parameter(2)
  c = f32[4,16,16,32] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[4,16,16,32] broadcast(bias), dimensions={3}
  s = f32[4,16,16,32] add(c, bb)
  z = f32[] constant(0)
  zb = f32[4,16,16,32] broadcast(z), dimensions={}
  ROOT r = f32[4,16,16,32] maximum(s, zb)
}""", ((4, 16, 16, 32), (3, 3, 32, 32), (32,))),
    "dot": ("""HloModule d
ENTRY e {
  x = f32[256,384] parameter(0)
  w = f32[384,512] parameter(1)
  bias = f32[512] parameter(2)
  c = f32[256,512] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[256,512] broadcast(bias), dimensions={1}
  s = f32[256,512] add(c, bb)
  z = f32[] constant(0)
  zb = f32[256,512] broadcast(z), dimensions={}
  ROOT r = f32[256,512] maximum(s, zb)
}""", ((256, 384), (384, 512), (512,))),
}


@pytest.mark.parametrize("case", _GLUE_CASES)
def test_glue_kernels_epilogue_is_compiled_hot(case, monkeypatch):
    """A convolution or a library dot with a fused epilogue whose kernel is
    glue (``conv_gemm.is_glue``, ``dot_library.is_glue``): the kernel's
    loops go to a cold part, its epilogue, a function of its own, to a hot
    one (declared in the cold part), and the result is the evaluator's."""
    from xlac.codegen.kernels import conv_gemm, dot_library
    monkeypatch.setenv("XLAC_COMPILE_THREADS", "2")
    text, shapes = _GLUE_CASES[case]
    hlo = lower(xlac.parse_hlo(text)).hlo
    (fusion,) = [i for i in hlo.entry.instructions if i.opcode == "fusion"]
    assert (conv_gemm if case == "convolution" else dot_library).is_glue(fusion)
    xlac.jit(text)                          # the library units it calls built first
    parts = []
    original = jit._compile_part

    def spy(text, *args):
        tier = args[-1] if len(args) > 3 else jit.HOT
        defined = set(re.findall(r'^define [^@]*@"([^"]+)"', text, re.M))
        parts.append((tier, defined))
        return original(text, *args)

    monkeypatch.setattr(jit, "_compile_part", spy)
    xlac.clear_caches()
    exe = xlac.jit(text)
    where = {name: tier for tier, names in parts for name in names}
    epilogues = [n for n in where if n.endswith(".epilogue")]
    assert len(epilogues) == 1 and where[epilogues[0]] == jit.HOT, parts
    assert where[epilogues[0][:-len(".epilogue")]] == jit.COLD, parts
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    np.testing.assert_allclose(np.asarray(exe(*args)), np.asarray(xlac.evaluate(text, *args)), rtol=1e-4, atol=1e-4)


def test_program_and_library_optimised_at_their_levels(monkeypatch, tmp_path):
    """A program's hot parts go through LLVM's ``PROGRAM_SPEED_LEVEL`` pipeline,
    the GEMM library's variants (compiled once per machine) through
    ``LIBRARY_SPEED_LEVEL``'s, in the JIT and in an AOT object alike."""
    seen = []
    real = jit.optimize

    def recording(module_ref, tm, speed_level=3, *args, **kwargs):
        names = [f.name for f in module_ref.functions if not f.is_declaration]
        seen.append((speed_level, any(n.startswith(jit.LIBRARY_PREFIX) for n in names)))
        return real(module_ref, tm, speed_level, *args, **kwargs)

    monkeypatch.setattr(jit, "optimize", recording)
    monkeypatch.setenv("XLAC_CACHE_DIR", "")
    text = """HloModule m
ENTRY e {
  a = f32[64,64] parameter(0)
  b = f32[64,64] parameter(1)
  d = f32[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[64,64] tanh(d)
}"""
    xlac.clear_caches()
    x = np.random.default_rng(0).standard_normal((2, 64, 64)).astype(np.float32)
    np.testing.assert_allclose(xlac.jit(text)(x[0], x[1]), np.tanh(x[0] @ x[1]), rtol=1e-4, atol=1e-5)
    program = {level for level, library in seen if not library and level > jit.CHEAP_SPEED_LEVEL}
    assert program == {jit.PROGRAM_SPEED_LEVEL}, seen
    import xlac.aot as aot
    monkeypatch.setattr(aot, "optimize", recording)
    seen.clear()
    aot.compile_aot(xlac.parse_hlo(text), tmp_path / "m.o")
    assert (jit.PROGRAM_SPEED_LEVEL, False) in seen and (jit.LIBRARY_SPEED_LEVEL, True) in seen, seen
