"""Kernel sharing (``xlac/codegen/kernel_sharing.py``): structurally identical
kernels are emitted once per module and called from every site; sites whose
context differs (in place or not, a different scalar constant) get functions
of their own; results stay the evaluator's."""
from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.codegen.compiler import lower
from xlac.hlo.fingerprint import computation_fingerprint, fingerprint

pytestmark = pytest.mark.timeout(300)


def _entry_calls(llvm_ir: str) -> list[str]:
    """The functions the entry calls, in order (not the library's ``fill_slots``,
    which fills a site's slot array from its table)."""
    body = llvm_ir[llvm_ir.index("define external"):]
    body = body[:body.index("\n}")]
    return [c for c in re.findall(r'call void @"?([\w.]+)"?\(', body) if not c.endswith("_helpers_fill_slots")]


def _kernels(llvm_ir: str) -> list[str]:
    return [n for n in re.findall(r'^define internal void @"?([\w.]+)"?\(ptr %"results"', llvm_ir, re.M)]


def _layers(n: int):
    b = xlac.XlaBuilder("layers")
    h = ops.parameter(b, 0, xlac.shape("f32[64,32]"), "x")
    for k in range(n):
        w = ops.parameter(b, 1 + k, xlac.shape("f32[32,32]"), f"w{k}")
        h = ops.tanh(ops.dot(h, w) + ops.constant(b, np.float32(1)))
    return b.build(h)


def test_identical_layers_share_one_kernel():
    comp = _layers(4)
    low = lower(comp.module)
    calls = Counter(c for c in _entry_calls(low.llvm_ir) if not c.startswith("xlac_gemm_"))
    assert len(calls) == 1 and list(calls.values()) == [4], calls
    assert len(_kernels(low.llvm_ir)) == 1


def test_sites_with_many_slots_fill_them_from_a_constant_table():
    # Four layers: each site passes more than SLOT_STORES_MAX buffers, so the
    # entry calls the library's fill_slots (compiled once per machine, not in
    # the module) with a constant table per site instead of storing each
    # address; the shared kernel is never inlined (its slot loads are
    # !invariant.load).
    from xlac.codegen import emitter, gemm_library
    low = lower(_layers(4).module)
    text = low.llvm_ir
    tables = re.findall(r'^@"?xlac_entry\.slots[\w.]*"? = internal constant \[(\d+) x i64\]', text, re.M)
    kernel = _kernels(text)[0]
    assert len(tables) == 4 and all(int(n) > 2 * emitter.SLOT_STORES_MAX for n in tables), tables
    fill = gemm_library.symbol(gemm_library.HELPERS, "fill_slots")
    assert text.count(f'call void @"{fill}"(') == 4
    assert f'declare void @"{fill}"(' in text
    assert re.search(rf'define internal void @"{re.escape(kernel)}"\([^)]*\) noinline', text)


def test_identical_layers_match_the_evaluator():
    comp = _layers(4)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((64, 32), np.float32)] + \
           [rng.standard_normal((32, 32), np.float32) * 0.2 for _ in range(4)]
    got = xlac.jit(comp)(*args)
    np.testing.assert_allclose(got, xlac.evaluate(comp, *args), rtol=1e-5, atol=1e-5)


# e1 and e2 are the same kernel on other buffers; s1 adds in place (its
# operand's buffer is its own), s2 does not, so they must not share code.
ALIASING = """HloModule alias
ENTRY main {
  p0 = f32[4096] parameter(0)
  e1 = f32[4096] exponential(p0)
  s1 = f32[4096] add(e1, e1)
  e2 = f32[4096] exponential(s1)
  s2 = f32[4096] add(e2, s1)
  ROOT r = (f32[4096], f32[4096]) tuple(s2, e2)
}
"""


def test_sites_with_different_aliasing_get_different_functions():
    low = lower(xlac.parse_hlo(ALIASING), optimize=False)
    insts = {i.name: i for i in low.hlo.entry.instructions}
    a = low.assignment
    assert a.slice_of(insts["s1"]) == a.slice_of(insts["e1"])      # in place
    assert a.slice_of(insts["s2"]) != a.slice_of(insts["e2"])      # not
    e1, s1, e2, s2 = _entry_calls(low.llvm_ir)
    assert e1 == e2
    assert s1 != s2
    x = np.linspace(-2, 1, 4096, dtype=np.float32)
    got = xlac.jit(ALIASING, optimize=False)(x)
    want = xlac.evaluate(ALIASING, x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5)


CONSTANTS = """HloModule consts
ENTRY main {
  p0 = f32[4] parameter(0)
  c1 = f32[4] constant({1, 2, 3, 4})
  c2 = f32[4] constant({10, 20, 30, 40})
  k1 = f32[] constant(1)
  k2 = f32[] constant(2)
  b1 = f32[4] broadcast(k1), dimensions={}
  b2 = f32[4] broadcast(k2), dimensions={}
  a1 = f32[4] add(p0, c1)
  a2 = f32[4] add(p0, c2)
  m1 = f32[4] multiply(a1, b1)
  m2 = f32[4] multiply(a2, b2)
  ROOT r = (f32[4], f32[4]) tuple(m1, m2)
}
"""


def test_array_constants_are_arguments_scalar_constants_are_code():
    low = lower(xlac.parse_hlo(CONSTANTS), optimize=False)
    calls = dict(zip([i.name for i in low.assignment.materialized()], _entry_calls(low.llvm_ir)))
    assert calls["a1"] == calls["a2"]          # differ only by an array constant: one function
    x = np.array([1, -1, 0.5, 2], np.float32)
    got = xlac.jit(CONSTANTS, optimize=False)(x)
    want = xlac.evaluate(CONSTANTS, x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_scalar_constant_operands_are_part_of_the_key():
    # The broadcasts of different scalars are materialized (optimize=False):
    # their kernels fold the value into the code, so they differ.
    low = lower(xlac.parse_hlo(CONSTANTS), optimize=False)
    calls = dict(zip([i.name for i in low.assignment.materialized()], _entry_calls(low.llvm_ir)))
    assert calls["b1"] != calls["b2"]


def test_parallel_tasks_in_a_shared_kernel():
    text = """HloModule big
ENTRY main {
  p0 = f32[512,1024] parameter(0)
  p1 = f32[512,1024] parameter(1)
  e1 = f32[512,1024] exponential(p0)
  e2 = f32[512,1024] exponential(p1)
  ROOT r = (f32[512,1024], f32[512,1024]) tuple(e1, e2)
}
"""
    low = lower(xlac.parse_hlo(text), optimize=False)
    e1, e2 = _entry_calls(low.llvm_ir)
    assert e1 == e2 and "parallel_for" not in e1
    assert ".task" in low.llvm_ir                       # split into tasks
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((2, 512, 1024), np.float32)
    got = xlac.jit(text, optimize=False)(x, y)
    np.testing.assert_allclose(got[0], np.exp(x), rtol=1e-5)
    np.testing.assert_allclose(got[1], np.exp(y), rtol=1e-5)


def test_fingerprint_ignores_names_but_not_structure():
    a = xlac.parse_hlo("""HloModule a
ENTRY e {
  x = f32[8] parameter(0)
  ROOT y = f32[8] negate(x)
}""").entry
    b = xlac.parse_hlo("""HloModule b
ENTRY other {
  arg = f32[8] parameter(0)
  ROOT out = f32[8] negate(arg)
}""").entry
    c = xlac.parse_hlo("""HloModule c
ENTRY e {
  x = f32[8] parameter(0)
  ROOT y = f32[8] exponential(x)
}""").entry
    d = xlac.parse_hlo("""HloModule d
ENTRY e {
  x = f32[8]{0} parameter(0)
  ROOT y = f64[8] convert(x)
}""").entry
    assert computation_fingerprint(a) == computation_fingerprint(b)
    assert computation_fingerprint(a) != computation_fingerprint(c)
    assert computation_fingerprint(c) != computation_fingerprint(d)
    assert fingerprint(a.root) == fingerprint(b.root) != fingerprint(c.root)


_WHILES = """HloModule whiles

cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  one = s32[] constant(1)
  half = f32[8] broadcast(f32[] constant(0.5)), dimensions={}
  ROOT t = (s32[], f32[8]) tuple(add(i, one), add(multiply(x, half), half))
}

other_body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  one = s32[] constant(1)
  half = f32[8] broadcast(f32[] constant(0.5)), dimensions={}
  ROOT t = (s32[], f32[8]) tuple(add(i, one), add(multiply(x, half), half))
}

ENTRY e {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  c = f32[8] parameter(2)
  zero = s32[] constant(0)
  w1 = (s32[], f32[8]) while((s32[], f32[8]) tuple(zero, a)), condition=cond, body=body
  w2 = (s32[], f32[8]) while((s32[], f32[8]) tuple(zero, b)), condition=cond, body=body
  w3 = (s32[], f32[8]) while((s32[], f32[8]) tuple(zero, c)), condition=cond, body=other_body
  r1 = f32[8] get-tuple-element(w1), index=1
  r2 = f32[8] get-tuple-element(w2), index=1
  r3 = f32[8] get-tuple-element(w3), index=1
  ROOT s = (f32[8], f32[8], f32[8]) tuple(r1, r2, r3)
}
"""


def test_loops_running_the_same_computations_share_one_kernel():
    """Two while loops on the same condition and body (a computation inlined
    at two call sites) are one kernel; so is a loop on a look-alike body (the
    computation deduplicator makes it the same computation): one kernel
    called three times, one body function."""
    module = xlac.parse_hlo(_WHILES)
    low = lower(module)
    calls = Counter(c for c in _entry_calls(low.llvm_ir) if ".w" in c or "while" in c)
    assert sorted(calls.values()) == [3], calls
    assert not re.search(r'define [^@]*@"?xlac_entry\.other_body', low.llvm_ir)
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(8).astype(np.float32) for _ in range(3)]
    got = xlac.jit(_WHILES)(*args)
    for g, want in zip(got, xlac.evaluate(module, *args)):
        np.testing.assert_allclose(g, want, rtol=1e-6)
    assert not np.allclose(got[0], got[1])


def _maps(shapes: list, dtype: str = "f32") -> str:
    """Per shape, ``tanh(x * y + x)`` (one fusion) and its negation (a
    kernel of its own) as results: kernels that differ only in their sizes."""
    lines, roots = [], []
    for k, s in enumerate(shapes):
        t = f"{dtype}[{','.join(map(str, s))}]"
        lines += [f"  x{k} = {t} parameter({2 * k})", f"  y{k} = {t} parameter({2 * k + 1})",
                  f"  m{k} = {t} multiply(x{k}, y{k})", f"  a{k} = {t} add(m{k}, x{k})",
                  f"  t{k} = {t} tanh(a{k})", f"  n{k} = {t} negate(t{k})"]
        roots += [f"t{k}", f"n{k}"]
    out = ", ".join(f"{dtype}[{','.join(map(str, s))}]" for s in shapes for _ in range(2))
    return "HloModule maps\nENTRY main {\n" + "\n".join(lines) + f"\n  ROOT r = ({out}) tuple({', '.join(roots)})\n}}\n"


def _map_args(shapes: list, dtype=np.float32) -> list:
    rng = np.random.default_rng(5)
    return [rng.standard_normal(s).astype(dtype) for s in shapes for _ in range(2)]


@pytest.mark.parametrize("shapes", [[(3, 5), (7,), (2, 3, 4), (1000,)], [(2,), (64, 33), (5, 1, 7), (4096, 16)]])
def test_elementwise_maps_of_several_sizes_share_one_kernel(shapes):
    # Every kernel is a flat map run on one thread: one size-generic kernel
    # for the fusions and one for the negations, each site's element count
    # in its slot array, each result right.
    from xlac.codegen import emitter
    assert len({np.prod(s) for s in shapes}) >= emitter.SIZES_TO_GENERIC
    text = _maps(shapes)
    low = lower(xlac.parse_hlo(text))
    calls = _entry_calls(low.llvm_ir)
    assert len(calls) == 2 * len(shapes) and sorted(Counter(calls).values()) == [len(shapes)] * 2, calls
    assert len(_kernels(low.llvm_ir)) == 2
    args = _map_args(shapes)
    got = xlac.jit(text)(*args)
    for k, s in enumerate(shapes):
        want = np.tanh(args[2 * k] * args[2 * k + 1] + args[2 * k])
        assert got[2 * k].shape == s
        np.testing.assert_allclose(got[2 * k], want, rtol=2e-6, atol=1e-6)
        np.testing.assert_array_equal(got[2 * k + 1], -got[2 * k])


def test_size_generic_sites_storing_their_slots(monkeypatch):
    # Sites of few slots store the addresses and the count themselves.
    from xlac.codegen import emitter
    monkeypatch.setattr(emitter, "SLOT_STORES_MAX", 8)
    shapes = [(3,), (17, 2), (100,)]
    text = _maps(shapes)
    low = lower(xlac.parse_hlo(text))
    assert "fill_slots" not in low.llvm_ir and len(_kernels(low.llvm_ir)) == 2
    args = _map_args(shapes)
    got = xlac.jit(text)(*args)
    for k in range(len(shapes)):
        np.testing.assert_allclose(got[2 * k], np.tanh(args[2 * k] * args[2 * k + 1] + args[2 * k]),
                                   rtol=2e-6, atol=1e-6)


def test_a_map_of_two_sizes_is_a_kernel_per_size():
    # Below SIZES_TO_GENERIC sizes the loops keep their constant counts.
    text = _maps([(8,), (32,), (8,)])
    calls = _entry_calls(lower(xlac.parse_hlo(text)).llvm_ir)
    assert len(set(calls)) == 4 and calls[:2] == calls[4:], calls


def test_size_generic_kernels_are_only_flat_maps_on_one_thread():
    # A map big enough for tasks, or one reading a row broadcast, keeps its
    # sizes in the key.
    from xlac.codegen.kernels.loop import size_generic
    module = xlac.parse_hlo(_maps([(4,), (1024, 512)]))
    fused = {i.shape.element_count(): i for i in lower(module).assignment.materialized()
             if i.opcode == "fusion"}
    assert size_generic(fused[4]) and not size_generic(fused[1024 * 512])
    row = xlac.parse_hlo("""HloModule row
ENTRY main {
  x = f32[6,5] parameter(0)
  v = f32[5] parameter(1)
  b = f32[6,5] broadcast(v), dimensions={1}
  ROOT a = f32[6,5] add(x, b)
}""")
    (add,) = [i for i in lower(row).assignment.materialized() if i.opcode in ("fusion", "add")]
    assert not size_generic(add)


def test_fingerprint_without_sizes():
    def fused(text):
        return [i for i in lower(xlac.parse_hlo(text)).assignment.materialized() if i.opcode == "fusion"][0]
    small, big = fused(_maps([(3,)])), fused(_maps([(9, 2)]))
    other = fused(_maps([(3,)], "f64"))
    assert fingerprint(small) != fingerprint(big)
    assert fingerprint(small, sizes=False) == fingerprint(big, sizes=False) != fingerprint(other, sizes=False)
