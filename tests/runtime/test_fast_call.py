"""The native fast call of an Executable (``xlac.codegen.fast_call``).

The layouts it reads are checked against the running interpreter and numpy;
the common case must take it (``exe.fast_calls`` counts), everything else must
take the Python path with today's errors and results; errors, Ctrl-C, threads
and reference counts behave as on the Python path.
"""
import ctypes
import errno
import gc
import os
import signal
import sys
import threading
import time
import tracemalloc

import ml_dtypes
import numpy as np
import pytest

import xlac
from xlac.codegen import fast_call
from xlac.executable import FAST_TEMP_MAX
from xlac.runtime import allocator, interrupt, threads

pytestmark = pytest.mark.skipif(not fast_call.supported(), reason="an interpreter whose layouts are not known")

ADD = """HloModule add8
ENTRY main {
  x = f32[8]{0} parameter(0)
  y = f32[8]{0} parameter(1)
  ROOT r = f32[8]{0} add(x, y)
}"""

FMA = """HloModule fma
ENTRY main {
  x = f32[1024]{0} parameter(0)
  y = f32[1024]{0} parameter(1)
  z = f32[1024]{0} parameter(2)
  m = f32[1024]{0} multiply(x, y)
  ROOT r = f32[1024]{0} add(m, z)
}"""

MATMUL = """HloModule mm
ENTRY main {
  x = f32[64,64]{1,0} parameter(0)
  y = f32[64,64]{1,0} parameter(1)
  ROOT r = f32[64,64]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}"""

# A tuple of results of several dtypes and ranks, from scalar and matrix parameters.
MIXED = """HloModule mixed
ENTRY main {
  s = f64[] parameter(0)
  m = s32[3,4]{1,0} parameter(1)
  b = pred[3,4]{1,0} parameter(2)
  c = s32[] constant(0)
  cb = s32[3,4]{1,0} broadcast(c), dimensions={}
  k = s32[3,4]{1,0} select(b, m, cb)
  t = f64[] add(s, s)
  ROOT r = (f64[], s32[3,4]{1,0}, pred[3,4]{1,0}) tuple(t, k, b)
}"""

# n iterations of a doubling on f32[4] (a loop: the code polls the cancel flag).
LOOP = """HloModule loop
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(%d)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  h = f32[4] constant({0.5, 0.5, 0.5, 0.5})
  w = f32[4] multiply(v, h)
  u = f32[4] add(w, h)
  ROOT t = (s32[], f32[4]) tuple(j, u)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[4]) tuple(z, x)
  ROOT w = (s32[], f32[4]) while(t), condition=cond, body=body
}
"""


def f32(*shape, value=1.0):
    return np.full(shape, value, np.float32)


# ---------------------------------------------------------------------------------------
# The layouts the native code depends on
# ---------------------------------------------------------------------------------------

def test_layouts_match_this_interpreter_and_numpy():
    assert sys.version_info[:2] >= (3, 9) and fast_call._layouts_hold()
    for a in (np.zeros(()), np.arange(24, dtype=np.int16).reshape(2, 3, 4)[:, ::2].T, np.ones(5, bool)):
        base = id(a)
        assert ctypes.c_void_p.from_address(base + fast_call.OB_TYPE).value == id(np.ndarray)
        assert ctypes.c_void_p.from_address(base + fast_call.ARRAY_DATA).value == a.ctypes.data
        assert ctypes.c_int.from_address(base + fast_call.ARRAY_ND).value == a.ndim
        assert ctypes.c_void_p.from_address(base + fast_call.ARRAY_DESCR).value == id(a.dtype)
        if a.ndim:
            dims = ctypes.c_void_p.from_address(base + fast_call.ARRAY_DIMS).value
            strides = ctypes.c_void_p.from_address(base + fast_call.ARRAY_STRIDES).value
            assert list((ctypes.c_int64 * a.ndim).from_address(dims)) == list(a.shape)
            assert list((ctypes.c_int64 * a.ndim).from_address(strides)) == list(a.strides)
    assert ctypes.sizeof(fast_call.PyMethodDef) == 32


def test_numpy_api_table_entries():
    api = fast_call.numpy_api()
    assert api[fast_call.API_ARRAY_TYPE] == id(np.ndarray)
    new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                            ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                            ctypes.c_void_p)(api[fast_call.API_NEW_FROM_DESCR])
    dt = np.dtype(np.float64)
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(dt))           # stolen by PyArray_NewFromDescr
    dims = (ctypes.c_int64 * 2)(2, 3)
    a = new(id(np.ndarray), id(dt), 2, dims, None, None, 0, None)
    assert type(a) is np.ndarray and a.shape == (2, 3) and a.dtype == dt and a.flags.owndata
    set_base = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.py_object)(api[fast_call.API_SET_BASE_OBJECT])
    owner = np.zeros(6)
    view = np.frombuffer(owner, np.float64)       # its base is already set: refused, -1
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(owner))
    with pytest.raises(ValueError):
        set_base(view, owner)


# ---------------------------------------------------------------------------------------
# The common case takes it
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,args,want", [
    (ADD, lambda: (f32(8, value=2), f32(8, value=0.5)), lambda a: a[0] + a[1]),
    (FMA, lambda: (np.arange(1024, dtype=np.float32), f32(1024, value=2), f32(1024, value=1)),
     lambda a: a[0] * a[1] + a[2]),
    (MATMUL, lambda: (np.arange(4096, dtype=np.float32).reshape(64, 64) / 4096, f32(64, 64)),
     lambda a: a[0] @ a[1]),
])
def test_common_case_takes_the_fast_call(text, args, want):
    exe = xlac.jit(text)
    assert exe.has_fast_call
    a = args()
    for k in range(3):
        r = exe(*a)
        assert exe.fast_calls == k + 1
        np.testing.assert_allclose(r, want(a), rtol=1e-6)
        assert type(r) is np.ndarray and r.dtype == np.float32 and r.flags.c_contiguous
        assert r.flags.writeable and r.flags.aligned
        if r.nbytes >= allocator.SMALL_RESULT:          # as the pool's blocks, for aligned_results
            assert r.ctypes.data % 64 == 0


def test_tuple_results_scalars_and_other_dtypes():
    exe = xlac.jit(MIXED)
    m = np.arange(12, dtype=np.int32).reshape(3, 4)
    b = (m % 3 == 0)
    t, k, bb = exe(1.25, m, b)                    # a Python float for f64: read in place
    assert exe.fast_calls == 1
    t, k, bb = exe(np.array(1.25), m, b)
    assert exe.fast_calls == 2
    t2, _, _ = exe(np.float64(1.25), m, b)        # a numpy scalar of the dtype's type: read in place
    assert exe.fast_calls == 3 and t2 == t == 2.5
    with pytest.raises(TypeError, match=r"parameter 0.*expected dtype float64.*got float32"):
        exe(np.float32(1.25), m, b)               # another scalar type: the Python path's error
    assert exe.fast_calls == 3
    assert t.shape == () and t == 2.5 and t.dtype == np.float64
    np.testing.assert_array_equal(k, np.where(b, m, 0))
    np.testing.assert_array_equal(bb, b)
    assert not np.shares_memory(bb, b)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.complex64, np.int8, np.uint64, np.bool_,
                                   ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn])
def test_numpy_scalars_of_each_type_are_read_in_place(dtype):
    dt = np.dtype(dtype)
    pt = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32", np.dtype(np.complex64): "c64",
          np.dtype(np.int8): "s8", np.dtype(np.uint64): "u64", np.dtype(np.bool_): "pred",
          np.dtype(ml_dtypes.bfloat16): "bf16", np.dtype(ml_dtypes.float8_e4m3fn): "f8e4m3fn"}[dt]
    exe = xlac.jit(f"HloModule s\nENTRY e {{\n  a = {pt}[] parameter(0)\n"
                   f"  ROOT b = {pt}[3]{{0}} broadcast(a), dimensions={{}}\n}}")
    v = np.full((), 3 if dt.kind != "b" else True, dt)[()]
    assert type(v) is dt.type
    r = exe(v)
    assert exe.fast_calls == 1 and r.dtype == dt
    np.testing.assert_array_equal(r, np.full(3, v, dt))
    assert fast_call.scalar_type(dt) is dt.type


def _broadcast3(pt):
    return xlac.jit(f"HloModule s\nENTRY e {{\n  a = {pt}[] parameter(0)\n"
                    f"  ROOT b = {pt}[3]{{0}} broadcast(a), dimensions={{}}\n}}")


@pytest.mark.parametrize("pt,dtype,values", [
    ("f64", np.float64, [1.25, -0.0, 1e-310, 1e300, float("inf"), -float("inf"), 0.1]),
    ("f32", np.float32, [1.25, -0.0, 0.1, 1e-40, 1e-50, 3.4028235e38, 3.40282356e38, float("inf"),
                         -float("inf"), 16777217.0]),
    ("s64", np.int64, [0, -1, 2**63 - 1, -2**63, 12345678901]),
    ("s32", np.int32, [0, -1, 2**31 - 1, -2**31, 7]),
    ("pred", np.bool_, [True, False]),
])
def test_python_scalars_take_it_with_numpys_values(pt, dtype, values):
    """A Python scalar of a 0-d parameter: the value np.asarray(x, dtype) gives, on the fast path."""
    exe = _broadcast3(pt)
    for n, v in enumerate(values, 1):
        r = exe(v)
        assert exe.fast_calls == n, v
        want = np.full(3, np.asarray(v, dtype), dtype)
        assert r.dtype == want.dtype and r.tobytes() == want.tobytes(), (v, r, want)
    nan = exe(float("nan")) if pt in ("f32", "f64") else None
    if nan is not None:
        assert np.isnan(nan).all()


def test_python_scalars_numpy_would_complain_of_take_the_python_path():
    f32, s32, s64, f64, pred = (_broadcast3(t) for t in ("f32", "s32", "s64", "f64", "pred"))
    for v in (1e39, -1e39, 3.4028235677973366e38):    # finite, rounds to inf (the last a tie): numpy warns
        with pytest.warns(RuntimeWarning, match="overflow"):
            r = f32(v)
        assert np.isinf(r).all() and f32.fast_calls == 0
    for exe, v in ((s32, 2**31), (s32, -2**31 - 1), (s64, 2**63), (s64, -2**70)):
        with pytest.raises(OverflowError):
            exe(v)
        assert exe.fast_calls == 0
    # Other Python types: the Python path converts them as numpy does.
    np.testing.assert_array_equal(f64(3), 3.0)
    np.testing.assert_array_equal(s32(True), 1)
    np.testing.assert_array_equal(pred(1), True)
    np.testing.assert_array_equal(f32(2), 2.0)
    assert f64.fast_calls == s32.fast_calls == pred.fast_calls == f32.fast_calls == 0
    assert s32(5)[0] == 5 and s32.fast_calls == 1


def test_read_only_arguments_take_it():
    exe = xlac.jit(ADD)
    x = f32(8, value=3)
    x.flags.writeable = False
    np.testing.assert_array_equal(exe(x, x), 6)
    assert exe.fast_calls == 1


def test_results_are_fresh_arrays_the_caller_owns():
    for text, args in ((ADD, (f32(8), f32(8))), (MATMUL, (f32(64, 64), f32(64, 64)))):
        exe = xlac.jit(text)
        a = exe(*args)
        b = exe(*args)
        assert exe.fast_calls == 2
        assert not np.shares_memory(a, b)
        a[...] = 7
        assert (b != 7).all()
        assert sys.getrefcount(a) == 2            # only the caller holds it
        v = a[1:]                                 # a view keeps the memory alive
        del a
        gc.collect()
        exe(*args)
        assert (v == 7).all()


# ---------------------------------------------------------------------------------------
# Everything else takes the Python path: today's errors and results
# ---------------------------------------------------------------------------------------

class Sub(np.ndarray):
    pass


def test_fallbacks_give_the_python_paths_errors():
    exe = xlac.jit(ADD)
    ok = f32(8)
    cases = [
        ((ok,), TypeError, r"add8 takes 2 argument\(s\) \(x: f32\[8\]\{0\}, y: f32\[8\]\{0\}\), got 1"),
        ((ok, ok, ok), TypeError, "got 3"),
        ((ok, np.ones(8)), TypeError, r"parameter 1 \(y\): expected dtype float32 \(f32\[8\]\{0\}\), got float64"),
        ((np.ones(8, np.int32), ok), TypeError, r"parameter 0 \(x\).*got int32"),
        ((np.ones(8, ">f4"), ok), TypeError, r"parameter 0 \(x\): expected dtype float32"),
        ((f32(9), ok), ValueError, r"parameter 0 \(x\): expected shape \(8,\) \(f32\[8\]\{0\}\), got \(9,\)"),
        ((ok, f32(2, 4)), ValueError, r"parameter 1 \(y\).*got \(2, 4\)"),
        ((1.0, ok), ValueError, "parameter 0"),
        ((ok, "x"), TypeError, r"parameter 1 \(y\): expected dtype float32"),
    ]
    for args, err, message in cases:
        with pytest.raises(err, match=message):
            exe(*args)
    with pytest.raises(TypeError, match=r"Executable.__call__\(\) got an unexpected keyword argument 'y'"):
        exe(ok, y=ok)
    with pytest.raises(TypeError, match=r"add8 takes 2 argument\(s\) .*, got 1000000"):
        exe(*[ok] * 1_000_000)                     # passed on from a heap array, not the stack
    with pytest.raises(TypeError, match="unexpected keyword argument .k0."):
        exe(*[ok] * 10, **{f"k{i}": ok for i in range(10)})
    assert exe.fast_calls == 0


def test_fallbacks_give_the_python_paths_results():
    exe = xlac.jit(ADD)
    x = np.arange(8, dtype=np.float32)
    want = x + 1
    raw = np.zeros(8 * 4 + 1, np.uint8)
    mis = raw[1:].view(np.float32)
    mis[:] = x
    others = [np.repeat(x, 3)[::3], mis, list(x), x.view(Sub), np.asarray(x, ">f4").astype(np.float32)]
    for arg in others[:4]:
        r = exe(arg, f32(8))
        np.testing.assert_array_equal(r, want)
        assert type(r) is np.ndarray
    assert exe.fast_calls == 0
    np.testing.assert_array_equal(exe(others[4], f32(8)), want)       # a plain copy: fast again
    assert exe.fast_calls == 1
    m = xlac.jit(MATMUL)
    a = np.asfortranarray(np.arange(4096, dtype=np.float32).reshape(64, 64))
    np.testing.assert_allclose(m(a, f32(64, 64)), a @ f32(64, 64), rtol=1e-6)
    assert m.fast_calls == 0


def _leaves(r):
    return [x for t in r for x in _leaves(t)] if isinstance(r, tuple) else [r]


def _same_arrays(a, b) -> bool:
    """The same values, dtype, shape, strides and flags (the fast path's arrays
    against the Python path's)."""
    fa, fb = a.flags, b.flags
    return (type(a) is type(b) is np.ndarray and a.dtype == b.dtype and a.shape == b.shape
            and a.strides == b.strides and np.array_equal(a, b)
            and (fa.c_contiguous, fa.f_contiguous, fa.writeable, fa.aligned, fa.owndata)
            == (fb.c_contiguous, fb.f_contiguous, fb.writeable, fb.aligned, fb.owndata))


# Results in other layouts than row-major, padded, and above FAST_RESULT_MAX.
LAYOUTS = """HloModule lay
ENTRY main {
  x = f32[2,3]{1,0} parameter(0)
  y = f32[128,256]{1,0} parameter(1)
  n = f32[2,3]{0,1} negate(x)
  b = bf16[2,3]{0,1} convert(x)
  p = f32[2,3]{1,0:P(8,128)} negate(x)
  t = f32[256,128]{0,1} transpose(y), dimensions={1,0}
  c = f32[3,2,2]{0,2,1} broadcast(x), dimensions={1,0}
  ROOT r = (f32[2,3]{0,1}, bf16[2,3]{0,1}, f32[2,3]{1,0:P(8,128)}, f32[128,256]{1,0}, f32[256,128]{0,1},
            f32[3,2,2]{0,2,1}) tuple(n, b, p, y, t, c)
}"""


def test_strided_padded_and_big_results_take_the_fast_call():
    exe = xlac.jit(LAYOUTS)
    assert exe.has_fast_call
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.arange(128 * 256, dtype=np.float32).reshape(128, 256)
    want = exe._call(x, y)                              # the Python path
    for k in range(3):
        got = exe(x, y)
        assert exe.fast_calls == k + 1
        assert all(_same_arrays(g, w) for g, w in zip(_leaves(got), _leaves(want)))
    n, b, p, yy, t, c = got
    np.testing.assert_array_equal(n, -x)
    assert n.strides == (4, 8) and not n.flags.c_contiguous and n.flags.f_contiguous
    np.testing.assert_array_equal(b.astype(np.float32), x)
    assert p.strides == (512, 4) and (p == -x).all()   # a view of the padded buffer
    assert (yy == y).all() and yy.flags.c_contiguous and (t == y.T).all()
    np.testing.assert_array_equal(c, np.broadcast_to(x.T[:, :, None], (3, 2, 2)))
    # The big and padded results' memory is the pool's; the small ones' numpy's.
    for r in (p, yy, t):
        owner = r.base if r.base is not None else r
        while isinstance(owner, np.ndarray) and owner.base is not None:
            owner = owner.base
        assert isinstance(owner._block, allocator.Block), type(owner)
    assert isinstance(n.base, np.ndarray) and n.base.dtype == np.uint8
    assert n.ctypes.data % fast_call.ALIGNMENT == 0


BIG_TEMP_N = (FAST_TEMP_MAX // 4) * 2
BIG_TEMP = f"""HloModule bigtemp
ENTRY main {{
  x = f32[{BIG_TEMP_N}]{{0}} parameter(0)
  e = f32[{BIG_TEMP_N}]{{0}} exponential(x)
  s = f32[{BIG_TEMP_N}]{{0}} sine(e)
  c = f32[{BIG_TEMP_N}]{{0}} cosine(e)
  ROOT r = (f32[{BIG_TEMP_N}]{{0}}, f32[{BIG_TEMP_N}]{{0}}) tuple(s, c)
}}"""


def test_a_big_temp_arena_is_made_by_the_first_call():
    n = BIG_TEMP_N
    exe = xlac.jit(BIG_TEMP, optimize=False)
    assert exe.temp_size > FAST_TEMP_MAX and exe.has_fast_call
    assert exe._fast_call_frame is None                     # nothing held before the first call
    x = np.linspace(-1, 1, n, dtype=np.float32)
    first = exe(x)
    assert exe.fast_calls == 0 and exe._fast_call_frame is not None
    for k in range(2):
        got = exe(x)
        assert exe.fast_calls == k + 1
        assert all(_same_arrays(g, w) for g, w in zip(got, first))


def test_threads_making_the_big_temp_arena_at_once():
    exe = xlac.jit(BIG_TEMP, optimize=False, num_threads=1)
    x = np.linspace(-1, 1, BIG_TEMP_N, dtype=np.float32)
    want = exe._call(x)
    bad, start = [], threading.Barrier(4)

    def work():
        start.wait()
        for _ in range(10):
            got = exe(x)
            if not all(np.array_equal(g, w) for g, w in zip(got, want)):
                bad.append(1)
    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad and exe.fast_calls > 0 and not exe._fast_call_spec.temp_wanted


def test_a_failed_pool_allocation_raises_and_keeps_nothing(monkeypatch):
    exe = xlac.jit(LAYOUTS)
    x, y = f32(2, 3), f32(128, 256)
    exe(x, y)
    real = allocator.Block._allocate

    def no_big_blocks(self, size):
        if size >= 1 << 16:
            raise OSError(errno.ENOMEM, "Cannot allocate memory")
        return real(self, size)
    gc.collect()
    allocator.trim()
    monkeypatch.setattr(allocator.Block, "_allocate", no_big_blocks)
    # Result 2 (padded, 4 KiB) is made, result 3 (128 KiB) fails: the call raises
    # what the Python path raises, and result 2's block goes back to the pool.
    with pytest.raises(MemoryError, match=r"module lay: result 3 \(f32\[128,256\]\{1,0\}\).*131072 bytes"):
        exe(x, y)
    assert exe.fast_calls == 1 and not exe._fast_call_spec.busy     # (it counts calls that ran)
    assert allocator.stats()["idle_blocks"] == 1
    monkeypatch.undo()
    got = exe(x, y)
    assert exe.fast_calls == 2 and (got[3] == 1).all() and (got[0] == -1).all()


def test_executables_without_a_fast_call():
    nested = """HloModule nest
ENTRY main {
  x = f32[2]{0} parameter(0)
  t = (f32[2]{0}) tuple(x)
  ROOT r = ((f32[2]{0}), f32[2]{0}) tuple(t, x)
}"""
    tuple_param = """HloModule tp
ENTRY main {
  p = (f32[4]{0}, s32[]) parameter(0)
  ROOT a = f32[4]{0} get-tuple-element(p), index=0
}"""
    for text in (nested, tuple_param):
        assert not xlac.jit(text).has_fast_call, text
    donating = xlac.jit(ADD, donate_argnums=0)
    assert donating.donations and not donating.has_fast_call
    x = f32(8, value=2)
    np.testing.assert_array_equal(donating(x, f32(8)), 3)
    r = xlac.jit(nested)(f32(2))
    assert isinstance(r[0], tuple) and (r[1] == 1).all()
    dynamic = xlac.jit("""HloModule dyn
ENTRY main {
  x = f32[<=8]{0} parameter(0)
  ROOT r = f32[<=8]{0} negate(x)
}""")
    np.testing.assert_array_equal(dynamic(f32(5)), -f32(5))


def test_an_arena_in_use_sends_the_call_to_the_python_path():
    exe = xlac.jit(MATMUL)
    spec = exe._fast_call_spec
    assert exe.temp_size > 0
    spec.busy = 1                                  # as while another thread's call runs
    try:
        np.testing.assert_allclose(exe(f32(64, 64), f32(64, 64)), 64)
        assert exe.fast_calls == 0
    finally:
        spec.busy = 0
    exe(f32(64, 64), f32(64, 64))
    assert exe.fast_calls == 1


def test_an_error_left_over_is_cleared_by_the_python_path():
    exe = xlac.jit(ADD)
    threads.record_error(RuntimeError("left by a native call made outside an Executable"))
    np.testing.assert_array_equal(exe(f32(8), f32(8)), 2)
    assert exe.fast_calls == 0 and threads.take_error() is None
    exe(f32(8), f32(8))
    assert exe.fast_calls == 1


# ---------------------------------------------------------------------------------------
# Errors from the generated code, Ctrl-C, threads
# ---------------------------------------------------------------------------------------

def test_errors_reported_during_the_call_raise_as_before():
    from xlac import ops

    def boom(x):
        raise KeyError("nope")
    xlac.register_custom_call("t_fast_boom", boom)
    try:
        b = xlac.XlaBuilder("cc")
        x = ops.parameter(b, 0, xlac.shape("f32[4]"), "x")
        exe = xlac.jit(b.build(ops.custom_call(b, "t_fast_boom", [x], xlac.shape("f32[4]"))))
        assert exe.has_fast_call
        for k in range(2):
            with pytest.raises(xlac.CustomCallError, match="'t_fast_boom'.*raised KeyError") as info:
                exe(f32(4))
            assert isinstance(info.value.__cause__, KeyError)
            assert exe.fast_calls == k + 1
        assert not threads._errors
    finally:
        xlac.unregister_custom_call("t_fast_boom")


@pytest.fixture
def python_sigint_handler():
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


@pytest.mark.skipif(not interrupt.supported(), reason="Linux only")
@pytest.mark.timeout(60)
def test_ctrl_c_stops_a_fast_call(python_sigint_handler):
    exe = xlac.jit(LOOP % 2_000_000_000)
    assert exe.has_fast_call and exe._program.polls_cancel
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        exe(f32(4))
    assert time.perf_counter() - t0 < 5 and exe.fast_calls == 1
    assert not interrupt.pending()
    short = xlac.jit(LOOP % 3)
    i, v = short(f32(4, value=8))                   # the flag is down: calls run to their end
    assert i == 3 and (v == 1.875).all() and short.fast_calls == 1


@pytest.mark.skipif(not interrupt.supported(), reason="Linux only")
@pytest.mark.timeout(60)
def test_fast_calls_on_other_threads_are_not_cancelled(python_sigint_handler):
    n = 60_000_000
    exe = xlac.jit(LOOP % n)
    out = []
    worker = threading.Thread(target=lambda: out.append(exe(f32(4, value=8))))
    worker.start()
    timer = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        time.sleep(10)
    worker.join()
    assert out and out[0][0] == n and exe.fast_calls == 1


def test_threads_calling_one_executable():
    exe = xlac.jit(MATMUL, num_threads=1)
    bad = []

    def work(seed):
        x = np.full((64, 64), float(seed), np.float32)
        want = x @ x
        for _ in range(300):
            if not np.array_equal(exe(x, x), want):
                bad.append(seed)
                return

    ts = [threading.Thread(target=work, args=(s,)) for s in range(1, 5)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert bad == [] and exe.fast_calls > 0


# ---------------------------------------------------------------------------------------
# Reference counts and memory
# ---------------------------------------------------------------------------------------

def test_no_reference_or_memory_leaks():
    exe = xlac.jit(MIXED)
    s, m, b = np.array(1.5), np.arange(12, dtype=np.int32).reshape(3, 4), np.ones((3, 4), bool)
    mm = xlac.jit(MATMUL)
    x = f32(64, 64)
    dtypes = [np.dtype(t) for t in (np.float64, np.int32, np.bool_, np.float32, np.uint8)]

    def counts():
        return ([sys.getrefcount(o) for o in (exe, mm, s, m, b, x)]
                + [sys.getrefcount(d) for d in dtypes])

    for _ in range(100):
        exe(s, m, b), mm(x, x)
    gc.collect()
    before = counts()
    tracemalloc.start()
    try:
        snap0 = tracemalloc.take_snapshot()
        for _ in range(5000):
            exe(s, m, b)
            mm(x, x)
        gc.collect()
        snap1 = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    assert counts() == before
    grown = sum(d.size_diff for d in snap1.compare_to(snap0, "filename"))
    assert grown < 64 * 1024, grown                  # 5000 calls allocating ~17 KiB each: none kept
    assert exe.fast_calls >= 5100 and mm.fast_calls >= 5100
