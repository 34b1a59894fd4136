"""Guard-page mode (``XLAC_GUARD_PAGES=1``, ``allocator.configure(guard_pages=True)``):
every result, temp arena and argument copy ends flush against a PROT_NONE
page, so an out-of-bounds read faults instead of returning a neighbour's bytes.

The fault tests run in a subprocess (a SIGSEGV would end the test process),
and so do the edge-case tests of tests/codegen/test_zero_size.py (with the
gather/scatter/sort/window/plumbing op tests too under XLAC_FUZZ_LONG=1).
The corpus test runs every public corpus case and every jax case under the
mode, through ``tests/test_corpus.py``'s own machinery; a case that reads out
of bounds crashes its pytest-xdist worker, which pytest reports against that
case (without ``-n``, faulthandler prints the case's traceback).
"""
import importlib.util
import mmap
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.runtime import allocator

PAGE = mmap.PAGESIZE


@pytest.fixture
def guard_pages():
    """Guard-page mode for executables created inside the test."""
    before = allocator.guard_pages_enabled()
    allocator.configure(guard_pages=True)
    try:
        yield
    finally:
        allocator.configure(guard_pages=before)


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, encoding="utf-8", timeout=120)


def _ends_at_page(a: np.ndarray) -> bool:
    return (a.ctypes.data + a.nbytes) % PAGE == 0


# ---------------------------------------------------------------------------
# the blocks themselves
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("size", [1, 60, 64, PAGE, PAGE + 4])
def test_block_is_usable_up_to_its_last_byte(size):
    b = allocator.GuardBlock(size)
    assert (b.address + size) % PAGE == 0
    a = allocator.wrap(b, (size,), np.dtype(np.uint8))
    a[:] = 7                                   # every byte, first to last, is writeable
    assert a[0] == 7 and a[-1] == 7


@pytest.mark.parametrize("size,address,what", [
    (60, "b.address + size", "one byte past the end"),
    (PAGE + 4, "b.address + size", "one byte past the end"),
    (0, "b.address", "the first byte of an empty block"),
    (60, "page_start - 1", "the byte before the block's page"),
])
def test_access_outside_a_block_faults(size, address, what):
    """A read of ``what`` raises SIGSEGV (the child prints 'read' if it did not)."""
    proc = _run(f"""
        import ctypes, mmap
        from xlac.runtime import allocator
        size = {size}
        b = allocator.GuardBlock(size)
        page_start = b.address - b.address % mmap.PAGESIZE
        ctypes.string_at(b.address, size)      # the block itself is readable
        ctypes.string_at({address}, 1)
        print("read")
    """)
    assert proc.returncode == -signal.SIGSEGV, (what, proc.returncode, proc.stdout, proc.stderr)
    assert "read" not in proc.stdout


@pytest.mark.parametrize("what", ["result", "argument"])
def test_reading_past_an_executables_buffer_faults(what):
    """End to end: with XLAC_GUARD_PAGES=1, the byte after a small result (a plain
    np.empty array without the mode), or after an argument's copy, is not readable."""
    proc = _run(f"""
        import ctypes, os
        os.environ["XLAC_GUARD_PAGES"] = "1"
        import numpy as np, xlac
        from xlac.runtime import allocator
        copies = []
        real = allocator.guarded_copy
        allocator.guarded_copy = lambda buf: copies.append(real(buf)) or copies[-1]
        exe = xlac.jit("HloModule m\\nENTRY e {{\\n p = f32[5] parameter(0)\\n ROOT n = f32[5] negate(p)\\n}}")
        r = exe(np.arange(5, dtype=np.float32))
        buf = r if "{what}" == "result" else copies[0]
        assert list(buf) == ([-0.0, -1, -2, -3, -4] if "{what}" == "result" else [0, 1, 2, 3, 4])
        ctypes.string_at(buf.ctypes.data + buf.nbytes - 1, 1)   # its last byte is readable
        ctypes.string_at(buf.ctypes.data + buf.nbytes, 1)
        print("read")
    """)
    assert proc.returncode == -signal.SIGSEGV, (proc.returncode, proc.stdout, proc.stderr)
    assert "read" not in proc.stdout


def _pooled_guard_blocks() -> int:
    return sum(isinstance(b, allocator.GuardBlock) for free in allocator._pool._free.values() for b in free)


def test_guard_blocks_are_never_recycled_into_the_normal_pool():
    allocator.release(allocator.GuardBlock(4096))
    assert _pooled_guard_blocks() == 0


def test_environment_variable_switches_the_mode_on():
    proc = _run("""
        import os
        os.environ["XLAC_GUARD_PAGES"] = "1"
        from xlac.runtime import allocator
        print(allocator.guard_pages_enabled(), allocator.results_aligned())
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "False"]


# ---------------------------------------------------------------------------
# executables in guard-page mode
# ---------------------------------------------------------------------------

def _add_comp():
    cb = xlac.XlaBuilder("add")
    return cb.build(ops.add(ops.parameter(cb, 0, xlac.shape("f32[]")),
                            ops.parameter(cb, 1, xlac.shape("f32[]"))))


def _elementwise_small():
    b = xlac.XlaBuilder("small")
    x = ops.parameter(b, 0, xlac.shape("f32[3,5]"), "x")
    return b.build(ops.add(ops.exp(x), x)), [np.linspace(-2, 2, 15, dtype=np.float32).reshape(3, 5)]


def _permuted_layout_tuple():
    b = xlac.XlaBuilder("layouts")
    x = ops.parameter(b, 0, xlac.shape("f32[4,7]{0,1}"), "x")
    y = ops.parameter(b, 1, xlac.shape("s32[7]"), "y")
    r = ops.mul(x, ops.convert_element_type(ops.broadcast_in_dim(y, [4, 7], [1]), xlac.F32))
    total = ops.reduce(r, np.float32(0), _add_comp(), [0])
    return b.build(ops.tuple(b, [r, total, ops.gt(y, 3)])), \
        [np.arange(28, dtype=np.float32).reshape(4, 7), np.arange(7, dtype=np.int32)]


def _dot_and_transpose():
    b = xlac.XlaBuilder("dot")
    x = ops.parameter(b, 0, xlac.shape("f64[5,3]"), "x")
    w = ops.parameter(b, 1, xlac.shape("f64[3,6]"), "w")
    return b.build(ops.transpose(ops.dot(x, w), [1, 0])), \
        [np.arange(15, dtype=np.float64).reshape(5, 3), np.linspace(-1, 1, 18).reshape(3, 6)]


def _narrow_types():
    b = xlac.XlaBuilder("narrow")
    x = ops.parameter(b, 0, xlac.shape("u8[13]"), "x")
    h = ops.parameter(b, 1, xlac.shape("bf16[5]"), "h")
    return b.build(ops.tuple(b, [ops.add(x, x), ops.mul(h, h), ops.rev(ops.not_(ops.eq(x, 3)), [0])])), \
        [np.arange(13, dtype=np.uint8), np.arange(5).astype(xlac.Shape(xlac.BF16, ()).dtype)]


def _gather_and_dynamic_slice():
    b = xlac.XlaBuilder("gather")
    x = ops.parameter(b, 0, xlac.shape("f32[6,4]"), "x")
    i = ops.parameter(b, 1, xlac.shape("s32[3,1]"), "i")
    g = ops.gather(x, i, {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,),
                          "index_vector_dim": 1}, (1, 4))
    d = ops.dynamic_slice(x, [ops.constant(b, np.int32(5)), ops.constant(b, np.int32(1))], [2, 3])
    return b.build(ops.tuple(b, [g, d])), \
        [np.arange(24, dtype=np.float32).reshape(6, 4), np.array([[5], [0], [9]], np.int32)]


def _zero_size():
    b = xlac.XlaBuilder("empty")
    x = ops.parameter(b, 0, xlac.shape("f32[0,3]"), "x")
    y = ops.parameter(b, 1, xlac.shape("f32[2]"), "y")
    pad = ops.pad(ops.reduce(x, np.float32(0), _add_comp(), [0]), np.float32(1), [(1, 1, 0)])
    return b.build(ops.tuple(b, [ops.neg(x), pad, ops.concat_in_dim(b, [y, y], 0)])), \
        [np.zeros((0, 3), np.float32), np.array([1.5, -2], np.float32)]


def _while_loop():
    """State in the temp arena and the result buffers across iterations."""
    s = xlac.shape("(s32[], f32[33])")
    cb = xlac.XlaBuilder("cond")
    cond = cb.build(ops.lt(ops.get_tuple_element(ops.parameter(cb, 0, s), 0), 5))
    bb = xlac.XlaBuilder("body")
    t = ops.parameter(bb, 0, s)
    i, v = ops.get_tuple_element(t, 0), ops.get_tuple_element(t, 1)
    body = bb.build(ops.tuple(bb, [ops.add(i, 1), ops.add(ops.mul(v, 1.5), ops.rev(v, [0]))]))
    b = xlac.XlaBuilder("loop")
    x = ops.parameter(b, 0, xlac.shape("f32[33]"), "x")
    return b.build(ops.while_loop(cond, body, ops.tuple(b, [ops.constant(b, np.int32(0)), x]))), \
        [np.linspace(0, 1, 33, dtype=np.float32)]


def _big():
    """A result over 8 MiB whose size is no multiple of 64 (so not 64-byte aligned)."""
    b = xlac.XlaBuilder("big")
    x = ops.parameter(b, 0, xlac.shape("f32[1025,2049]"), "x")
    return b.build(ops.tanh(x)), [np.linspace(-3, 3, 1025 * 2049, dtype=np.float32).reshape(1025, 2049)]


CASES = {f.__name__.lstrip("_"): f for f in (_elementwise_small, _permuted_layout_tuple, _dot_and_transpose,
                                             _narrow_types, _gather_and_dynamic_slice, _zero_size,
                                             _while_loop, _big)}


def _leaves(x):
    return [leaf for v in x for leaf in _leaves(v)] if isinstance(x, tuple) else [x]


@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("name", sorted(CASES))
def test_results_and_arguments_are_right_and_guarded(name, optimize, guard_pages, monkeypatch):
    comp, args = CASES[name]()
    copies = []
    real_copy = allocator.guarded_copy
    monkeypatch.setattr(allocator, "guarded_copy", lambda buf: copies.append(real_copy(buf)) or copies[-1])
    exe = xlac.jit(comp, optimize=optimize)
    assert not exe._program.assumes_aligned_results
    for _ in range(2):                                       # the second call reuses the frame
        copies.clear()
        got = _leaves(exe(*args))
        want = _leaves(xlac.evaluate(comp, *args))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                       rtol=1e-5, atol=1e-6)
            if g.nbytes:                                     # from a guard block, however small
                assert isinstance(g.base, allocator.owner_class(g.nbytes, guarded=True)) and _ends_at_page(g)
        assert len(copies) == len(args) and all(_ends_at_page(c) for c in copies if c.nbytes)


def test_temp_arenas_are_guard_blocks(guard_pages):
    comp, args = _while_loop()
    exe = xlac.jit(comp)
    exe(*args)
    temps = [f.temp for f in exe._frames if f.temp is not None]
    assert temps and all(isinstance(t, allocator.GuardBlock) and t.address % 64 == 0 for t in temps)


def test_mode_off_leaves_executables_as_they_were(guard_pages):
    comp, args = _elementwise_small()
    guarded = xlac.jit(comp)
    allocator.configure(guard_pages=False)
    plain = xlac.jit(comp)
    r = plain(*args)
    assert not isinstance(r.base, allocator.owner_class(r.nbytes, guarded=True))   # a small np.empty
    np.testing.assert_array_equal(guarded(*args), r)      # the guarded one keeps working
    del guarded                                            # its frames' temps are not pooled
    assert _pooled_guard_blocks() == 0


# ---------------------------------------------------------------------------
# edge-case tests, the public corpus and the jax cases under guard-page mode
# ---------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
#: Edge cases of the data-addressed ops (zero-size dimensions, clamped starts):
#: the first always, the others (12 s more) in the long run (XLAC_FUZZ_LONG=1).
EDGE_CASES = ["tests/codegen/test_zero_size.py"]
EDGE_CASES_LONG = ["tests/codegen/test_gather_conv.py", "tests/codegen/test_sort_scatter.py",
                   "tests/codegen/test_windows.py", "tests/codegen/test_plumbing_ops.py"]


def test_edge_case_tests_pass_under_guard_pages():
    """Run in a pytest of their own with XLAC_GUARD_PAGES=1: an out-of-bounds read
    there crashes that process, not this one."""
    long = os.environ.get("XLAC_FUZZ_LONG", "").strip() not in ("", "0")
    files = [f for f in EDGE_CASES + (EDGE_CASES_LONG if long else []) if (ROOT / f).exists()]
    if not files:
        pytest.skip("no edge-case tests")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files],
                          cwd=ROOT, env=dict(os.environ, XLAC_GUARD_PAGES="1"),
                          capture_output=True, encoding="utf-8", timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def _corpus_machinery():
    """tests/test_corpus.py (as pytest imported it, or loaded from its path)."""
    mod = sys.modules.get("test_corpus")
    if mod is None:
        path = Path(__file__).resolve().parents[1] / "test_corpus.py"
        spec = importlib.util.spec_from_file_location("test_corpus", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["test_corpus"] = mod
        spec.loader.exec_module(mod)
    return mod


_CORPUS = _corpus_machinery()


@pytest.mark.parametrize("directory,case", _CORPUS.MANIFEST,
                         ids=[f"{d.name}/{c['name']}" for d, c in _CORPUS.MANIFEST])
def test_corpus_case_under_guard_pages(directory, case, guard_pages):
    _CORPUS.test_corpus_case(directory, case)
