"""The native fast path of ``Executable.__call__``: a small module's call in well under a microsecond.

Calling a compiled module from Python costs more than running it when the
module is small: checking each argument, allocating the results and passing
pointers through ctypes took about 2.3 µs for an 8-element add.  This module
builds, once per process, one native function (LLVM IR, JIT-compiled through
:func:`~xlac.codegen.compile_cache.load_or_compile`, ~60 ms, and kept in the
runtime library's cache, ``disk_cache.library_dir()``, as the GEMM library's
code is: later processes load it in a few ms) and makes it the executable class's
``__call__``: a ``METH_FASTCALL | METH_KEYWORDS`` method descriptor (``PyDescr_NewMethod``),
which CPython calls directly with the executable and the arguments.  For the
common case it does everything the Python path does, in native code:

1. finds the executable's :class:`CallSpec` (the executable's ``_fast_call``
   attribute, an int address; 0: no fast path for this executable);
2. checks the argument count and each argument: exactly a ``numpy.ndarray``
   whose dtype is the parameter's (the same descriptor object, as the Python
   path's ``a.dtype is dt``), of the parameter's shape, with C strides, its
   data aligned to the element; takes its data pointer.  A 0-d parameter also
   takes a numpy scalar of exactly its dtype's scalar type (``np.float32(2)``,
   ``a.sum()``): the value inside the scalar object is passed in place; and a
   Python scalar where the Python path's ``np.asarray(x, dtype)`` gives the
   same value silently (:data:`PYTHON_SCALARS`): a ``float`` for an f64
   parameter (read in place) or an f32 one (rounded to nearest, as numpy
   casts; one that overflows to infinity goes to the Python path, which warns
   as numpy does), an ``int`` for an s64 or s32 parameter (one out of range
   goes to the Python path, which raises numpy's ``OverflowError``), ``True``
   or ``False`` for a pred parameter;
3. takes the executable's fast-path temp arena (an atomic flag: a concurrent or
   re-entrant call takes the Python path, which has arenas of its own);
4. allocates the results through numpy's C API (``PyArray_NewFromDescr``):
   as ``np.empty`` does, or, for results the spec marks ``aligned`` (those
   the Python path takes from the pool: 4 KiB and more), 64-byte aligned
   inside a numpy byte array that is their ``base`` (the alignment the pool
   gives them, which code compiled with ``aligned_results`` relies on), with
   the strides of the result's layout where it is not row-major (the view the
   Python path makes); results the spec marks ``pooled`` (big ones, padded
   layouts) are made by the executable's ``result(exe, index)``, one Python
   call each, which takes the pool's memory;
5. on the main thread, for code that polls the cancel flag: puts the SIGINT
   handler in front (``xlac.runtime.interrupt``) and clears the flag, then
   passes the run options that point at it;
6. releases the GIL, calls the module's entry, takes the GIL back;
7. returns the result (or the tuple of results) — unless a callback recorded
   an error (``xlac.runtime.threads``' error dict is not empty) or Ctrl-C set
   the flag (which it clears), in which case the executable's ``finish(exe,
   result, stopped)`` (Python) raises what the Python path raises.

Anything else — a wrong count, another Python scalar, a numpy scalar of another type, a list, a wrong dtype or
shape, other strides, a misaligned array, an ndarray subclass, an error left
over from an earlier native call, the arena in use or not made yet, a failed
numpy allocation — calls the executable's Python path ``slow(exe, *args)`` untouched, which
gives today's behaviour and messages (it is the only place that raises
argument errors).  Which executables get a spec at all (static shapes, array
parameters of the default layout, no donation, no feeds) is the
executable's decision.

Why results from numpy: the pool's blocks and their owner objects are Python
objects (acquiring one and wrapping it costs about a microsecond from native
code too); numpy's allocator is callable from C, tracemalloc sees it, and
malloc's free lists recycle the memory of results up to the executable's
limit (64 KiB) without fresh pages.  Code compiled with ``aligned_results``
relies on 64-byte aligned results only where it writes a big result (8 MiB
and more) with non-temporal stores, which no fast call has; the aligned
results keep the pool's promise anyway, so a kernel that comes to rely on it
stays correct.  Why a method descriptor: CPython's ``slot_tp_call`` finds ``__call__`` on
the type and, for a method descriptor, calls it with ``self`` prepended and
no bound-method object; a plain builtin function would not receive the
executable.  Why a spec found by attribute: one native function serves every
executable; a dict lookup (~20 ns) is cheaper than compiling a function per
executable (milliseconds).

The layouts this depends on — CPython's object header, numpy's
``PyArrayObject`` fields, numpy's C-API table indices, ``PyMethodDef`` — are
the constants and structures below, and ``tests/runtime/test_fast_call.py``
checks each one against the running interpreter and numpy.
"""
from __future__ import annotations

import ctypes
import threading
from ctypes import c_char_p, c_int, c_int64, c_void_p

import numpy as np

from ..runtime import c_memory, disk_cache
from ..runtime import threads as _threads
from .compile_cache import load_or_compile

__all__ = ["ParamSpec", "ResultSpec", "CallSpec", "install", "make_spec", "supported"]

# ---------------------------------------------------------------------------------------
# Layouts (CPython 3.11 on a 64-bit platform; numpy 1.x and 2.x)
# ---------------------------------------------------------------------------------------

#: ``Py_TYPE(o)``: ``ob_type`` follows ``ob_refcnt``.
OB_TYPE = 8
#: numpy's scalar objects (``PyFloatScalarObject`` and kin): the value follows the header.
SCALAR_VALUE = 16
#: ``PyFloatObject``'s ``ob_fval`` (a C double) follows the header too.
FLOAT_VALUE = 16
#: ``PyArrayObject_fields``: data, nd (int), dimensions, strides, descr.
ARRAY_DATA, ARRAY_ND, ARRAY_DIMS, ARRAY_STRIDES, ARRAY_DESCR = 16, 24, 32, 40, 56
#: Indices into numpy's C-API table (``_ARRAY_API``).
API_ARRAY_TYPE, API_NEW_FROM_DESCR, API_SET_BASE_OBJECT = 2, 94, 282
#: ``NPY_ARRAY_CARRAY``: C-contiguous, aligned, writeable.
NPY_ARRAY_CARRAY = 0x1 | 0x100 | 0x400
METH_FASTCALL, METH_KEYWORDS = 0x80, 0x2
#: The alignment of results marked ``aligned`` (the pool's).
ALIGNMENT = 64


class PyMethodDef(ctypes.Structure):
    _fields_ = [("ml_name", c_char_p), ("ml_meth", c_void_p), ("ml_flags", c_int), ("ml_doc", c_char_p)]


#: The Python scalars a 0-d parameter of a dtype takes on the fast path
#: (``ParamSpec.python``): dtype -> kind.  ``PY_FLOAT_IN_PLACE``: a float's
#: double as is; ``PY_FLOAT_TO_F32``: rounded to f32; ``PY_INT_TO_S64`` /
#: ``PY_INT_TO_S32``: an int in range; ``PY_BOOL``: True or False as a byte.
PY_NONE, PY_FLOAT_IN_PLACE, PY_FLOAT_TO_F32, PY_INT_TO_S64, PY_INT_TO_S32, PY_BOOL = range(6)
PYTHON_SCALARS = {np.dtype(np.float64): PY_FLOAT_IN_PLACE, np.dtype(np.float32): PY_FLOAT_TO_F32,
                  np.dtype(np.int64): PY_INT_TO_S64, np.dtype(np.int32): PY_INT_TO_S32,
                  np.dtype(np.bool_): PY_BOOL}


class ParamSpec(ctypes.Structure):
    """What an argument must be: ``descr`` (the dtype object's address), its
    ``ndim`` dimensions and strides in bytes, and ``align_mask`` (element size - 1);
    ``scalar_type``: for a 0-d parameter, the numpy scalar type whose objects are
    taken as they are (NULL: none, see :func:`scalar_type`); ``python``: the
    Python scalar it takes (a ``PY_*`` kind of :data:`PYTHON_SCALARS`)."""

    _fields_ = [("descr", c_void_p), ("ndim", c_int64), ("dims", ctypes.POINTER(c_int64)),
                ("strides", ctypes.POINTER(c_int64)), ("align_mask", c_int64), ("scalar_type", c_void_p),
                ("python", c_int64)]


class ResultSpec(ctypes.Structure):
    """A result to allocate: dtype, dimensions, bytes; ``aligned``: 64-byte
    aligned; ``strides``: its strides in bytes (NULL: C order; given, the result
    is an aligned one); ``pooled``: made by the executable's Python ``result(exe,
    index)`` instead (``index``: the int object), which takes the pool's memory."""

    _fields_ = [("descr", c_void_p), ("ndim", c_int64), ("dims", ctypes.POINTER(c_int64)),
                ("nbytes", c_int64), ("aligned", c_int64), ("strides", ctypes.POINTER(c_int64)),
                ("pooled", c_int64), ("index", c_void_p)]


class CallSpec(ctypes.Structure):
    """One executable's fast call.  ``cancel``: the Ctrl-C flag (NULL when the
    code never polls it), ``arm``: ``xlac_sigint_ensure``; ``busy``: the temp
    arena is in use; ``calls``: the calls the fast path made (tests read it);
    ``temp_wanted``: the module needs a temp arena and ``temp`` is not there yet
    (the Python path makes it: a big arena is taken on first call, not at compile time)."""

    _fields_ = [("nparams", c_int64), ("nresults", c_int64), ("tuple_result", c_int64),
                ("params", ctypes.POINTER(ParamSpec)), ("results", ctypes.POINTER(ResultSpec)),
                ("entry", c_void_p), ("opts", c_void_p), ("main_opts", c_void_p),
                ("cancel", c_void_p), ("arm", c_void_p), ("temp", c_void_p),
                ("busy", c_int64), ("calls", c_int64), ("temp_wanted", c_int64)]


#: The C API functions the native code calls (from ``ctypes.pythonapi``).
_PYTHON_FUNCTIONS = ("PyObject_GetAttr", "PyLong_AsVoidPtr", "PyErr_Clear", "PyDict_Size", "Py_IncRef",
                     "Py_DecRef", "PyEval_SaveThread", "PyEval_RestoreThread", "PyTuple_New", "PyTuple_SetItem",
                     "PyObject_Vectorcall", "PyTuple_Size", "PyMem_Malloc", "PyMem_Free", "PyErr_NoMemory",
                     "PyErr_CheckSignals", "PyLong_AsLongLongAndOverflow")


class Runtime(ctypes.Structure):
    """What the native function needs of the process: CPython and numpy
    functions (passed in, no symbol lookup) and objects."""

    _fields_ = [(name, c_void_p) for name in (
        *_PYTHON_FUNCTIONS, "pthread_self", "PyArray_NewFromDescr", "PyArray_SetBaseObject",
        "ndarray", "errors", "slow", "finish", "result", "attr", "u8_descr", "main_thread", "true", "false",
        "float_type", "int_type")]

# ---------------------------------------------------------------------------------------
# The native function
# ---------------------------------------------------------------------------------------

_ENTRY = "xlac_fast_call"
#: Arguments (with the executable) the Python path is called with from a stack
#: array; more take a heap array.
_STACK_ARGS = 16


def _at(ptr: str, struct, name: str, ty: str, out: str) -> list:
    """``out = ptr->name`` (a field of a ctypes ``struct``)."""
    off = getattr(struct, name).offset
    return [f"  {out}.p = getelementptr i8, ptr {ptr}, i64 {off}", f"  {out} = load {ty}, ptr {out}.p"]


def _rt(name: str, out: str) -> list:
    return _at("%rt", Runtime, name, "ptr", out)


def _ir() -> str:
    P, R, C = ctypes.sizeof(ParamSpec), ctypes.sizeof(ResultSpec), CallSpec
    L = [
        "@rt.slot = internal global ptr null",
        "",
        f"define void @{_ENTRY}_init(ptr %rt) {{",
        "  store ptr %rt, ptr @rt.slot",
        "  ret void",
        "}",
        "",
        "; A result array of spec %s: numpy's own memory, or (aligned) 64-byte aligned",
        "; memory inside a byte array that becomes its base, or (pooled) what the",
        "; executable's result(self, index) returns.  NULL (error set) on failure.",
        "define internal ptr @new_result(ptr %rt, ptr %s, ptr %self) {",
        "entry:",
        *_at("%s", ResultSpec, "pooled", "i64", "%pooled"),
        "  %is.pooled = icmp ne i64 %pooled, 0",
        "  br i1 %is.pooled, label %pool, label %numpy",
        "pool:",
        *_rt("PyObject_Vectorcall", "%pcall"), *_rt("result", "%result.fn"),
        *_at("%s", ResultSpec, "index", "ptr", "%index"),
        "  %pa = alloca [2 x ptr]",
        "  store ptr %self, ptr %pa",
        "  %pa.1 = getelementptr ptr, ptr %pa, i64 1",
        "  store ptr %index, ptr %pa.1",
        "  %pr = call ptr %pcall(ptr %result.fn, ptr %pa, i64 2, ptr null)",
        "  ret ptr %pr",
        "numpy:",
        *_rt("PyArray_NewFromDescr", "%new"), *_rt("Py_IncRef", "%incref"), *_rt("Py_DecRef", "%decref"),
        *_rt("ndarray", "%nda"),
        *_at("%s", ResultSpec, "descr", "ptr", "%descr"), *_at("%s", ResultSpec, "ndim", "i64", "%ndim"),
        *_at("%s", ResultSpec, "dims", "ptr", "%dims"), *_at("%s", ResultSpec, "aligned", "i64", "%aligned"),
        *_at("%s", ResultSpec, "strides", "ptr", "%strides"),
        "  %nd = trunc i64 %ndim to i32",
        "  %size = alloca i64",
        "  call void %incref(ptr %descr)",                # PyArray_NewFromDescr steals it
        "  %is.al = icmp ne i64 %aligned, 0",
        "  br i1 %is.al, label %al, label %plain",
        "plain:",
        "  %a = call ptr %new(ptr %nda, ptr %descr, i32 %nd, ptr %dims, ptr null, ptr null, i32 0, ptr null)",
        "  ret ptr %a",
        "al:",
        *_rt("u8_descr", "%u8"), *_at("%s", ResultSpec, "nbytes", "i64", "%nbytes"),
        f"  %padded = add i64 %nbytes, {ALIGNMENT - 1}",
        "  store i64 %padded, ptr %size",
        "  call void %incref(ptr %u8)",
        "  %base = call ptr %new(ptr %nda, ptr %u8, i32 1, ptr %size, ptr null, ptr null, i32 0, ptr null)",
        "  %base.null = icmp eq ptr %base, null",
        "  br i1 %base.null, label %fail.base, label %view",
        "fail.base:",
        "  call void %decref(ptr %descr)",
        "  ret ptr null",
        "view:",
        f"  %bd.p = getelementptr i8, ptr %base, i64 {ARRAY_DATA}",
        "  %bd = load ptr, ptr %bd.p",
        "  %bdi = ptrtoint ptr %bd to i64",
        f"  %adi.0 = add i64 %bdi, {ALIGNMENT - 1}",
        f"  %adi = and i64 %adi.0, {-ALIGNMENT}",
        "  %ad = inttoptr i64 %adi to ptr",
        # numpy sets the contiguity flags from the strides it is given.
        "  %v = call ptr %new(ptr %nda, ptr %descr, i32 %nd, ptr %dims, ptr %strides, ptr %ad, "
        f"i32 {NPY_ARRAY_CARRAY}, ptr null)",
        "  %v.null = icmp eq ptr %v, null",
        "  br i1 %v.null, label %fail.view, label %setbase",
        "fail.view:",
        "  call void %decref(ptr %base)",
        "  ret ptr null",
        "setbase:",
        *_rt("PyArray_SetBaseObject", "%setbase.fn"),
        "  %sb = call i32 %setbase.fn(ptr %v, ptr %base)",          # steals %base, also on failure
        "  %sb.ok = icmp eq i32 %sb, 0",
        "  br i1 %sb.ok, label %done, label %fail.set",
        "fail.set:",
        "  call void %decref(ptr %v)",
        "  ret ptr null",
        "done:",
        "  ret ptr %v",
        "}",
        "",
    ]

    L += [
        f"define ptr @{_ENTRY}(ptr %self, ptr %args, i64 %nargs, ptr %kwnames) {{",
        "entry:",
        f"  %stack = alloca [{_STACK_ARGS} x ptr]",
        "  %rt = load ptr, ptr @rt.slot",
        *_rt("PyObject_GetAttr", "%getattr"), *_rt("attr", "%attr"), *_rt("PyErr_Clear", "%clear"),
        *_rt("Py_DecRef", "%decref"),
        "  %o = call ptr %getattr(ptr %self, ptr %attr)",
        "  %o.null = icmp eq ptr %o, null",
        "  br i1 %o.null, label %slow.clear, label %have",
        "have:",
        *_rt("PyLong_AsVoidPtr", "%aslong"),
        "  %d = call ptr %aslong(ptr %o)",
        "  call void %decref(ptr %o)",
        "  %d.null = icmp eq ptr %d, null",
        "  br i1 %d.null, label %slow.clear, label %count",
        "count:",
        *_at("%d", C, "nparams", "i64", "%np"),
        "  %n.ok = icmp eq i64 %nargs, %np",
        "  %no.kw = icmp eq ptr %kwnames, null",
        "  %n.kw.ok = and i1 %n.ok, %no.kw",
        "  br i1 %n.kw.ok, label %errors0, label %slow",
        "errors0:",
        *_rt("PyDict_Size", "%dictsize"), *_rt("errors", "%errs"),
        "  %ne0 = call i64 %dictsize(ptr %errs)",
        "  %ne0.z = icmp eq i64 %ne0, 0",
        "  br i1 %ne0.z, label %prep, label %slow",
        "prep:",
        *_at("%d", C, "params", "ptr", "%params"), *_rt("ndarray", "%nda"),
        "  %pp = alloca ptr, i64 %np",
        "  %sv = alloca i64, i64 %np",                  # Python scalars' values, converted
        "  %ovf = alloca i32",
        "  br label %arg.loop",
        # -- arguments ------------------------------------------------------------------
        "arg.loop:",
        "  %k = phi i64 [0, %prep], [%k1, %arg.ok]",
        "  %k.more = icmp slt i64 %k, %np",
        "  br i1 %k.more, label %arg, label %claim",
        "arg:",
        "  %a.p = getelementptr ptr, ptr %args, i64 %k",
        "  %a = load ptr, ptr %a.p",
        f"  %ps.o = mul i64 %k, {P}",
        "  %ps = getelementptr i8, ptr %params, i64 %ps.o",
        f"  %aty.p = getelementptr i8, ptr %a, i64 {OB_TYPE}",
        "  %aty = load ptr, ptr %aty.p",
        "  %is.nd = icmp eq ptr %aty, %nda",
        "  br i1 %is.nd, label %arg.descr, label %arg.scalar",
        "arg.scalar:",                                    # a numpy scalar for a 0-d parameter
        *_at("%ps", ParamSpec, "scalar_type", "ptr", "%stype"),
        "  %is.sc = icmp eq ptr %aty, %stype",
        "  br i1 %is.sc, label %arg.svalue, label %arg.py",
        "arg.svalue:",
        f"  %sdata = getelementptr i8, ptr %a, i64 {SCALAR_VALUE}",
        "  br label %arg.ok",
        # -- a Python scalar for a 0-d parameter: its value, converted into %sv[k] ----------
        "arg.py:",
        *_at("%ps", ParamSpec, "python", "i64", "%pykind"),
        "  %slot = getelementptr i64, ptr %sv, i64 %k",
        *_rt("float_type", "%pyfloat"), *_rt("int_type", "%pyint"),
        "  %is.float = icmp eq ptr %aty, %pyfloat",
        "  %is.int = icmp eq ptr %aty, %pyint",
        f"  switch i64 %pykind, label %slow [i64 {PY_FLOAT_IN_PLACE}, label %py.f64 "
        f"i64 {PY_FLOAT_TO_F32}, label %py.f32 i64 {PY_INT_TO_S64}, label %py.int "
        f"i64 {PY_INT_TO_S32}, label %py.int i64 {PY_BOOL}, label %py.bool]",
        "py.f64:",
        "  br i1 %is.float, label %py.f64.v, label %slow",
        "py.f64.v:",
        f"  %fdata = getelementptr i8, ptr %a, i64 {FLOAT_VALUE}",
        "  br label %arg.ok",
        "py.f32:",
        "  br i1 %is.float, label %py.f32.v, label %slow",
        "py.f32.v:",
        f"  %fd.p = getelementptr i8, ptr %a, i64 {FLOAT_VALUE}",
        "  %fd = load double, ptr %fd.p",
        "  %ff = fptrunc double %fd to float",
        # Rounded to infinity from a finite double: numpy warns of the overflow.
        "  %ff.abs = call float @llvm.fabs.f32(float %ff)",
        "  %fd.abs = call double @llvm.fabs.f64(double %fd)",
        "  %ff.inf = fcmp oeq float %ff.abs, 0x7FF0000000000000",
        "  %fd.fin = fcmp one double %fd.abs, 0x7FF0000000000000",
        "  %f.ovf = and i1 %ff.inf, %fd.fin",
        "  br i1 %f.ovf, label %slow, label %py.f32.st",
        "py.f32.st:",
        "  store float %ff, ptr %slot",
        "  br label %arg.ok",
        "py.int:",
        "  br i1 %is.int, label %py.int.v, label %slow",
        "py.int.v:",
        *_rt("PyLong_AsLongLongAndOverflow", "%aslonglong"),
        "  %iv = call i64 %aslonglong(ptr %a, ptr %ovf)",
        "  %iovf = load i32, ptr %ovf",
        "  %iv.t = trunc i64 %iv to i32",
        "  %iv.s = sext i32 %iv.t to i64",
        "  %fits32 = icmp eq i64 %iv.s, %iv",
        f"  %is.s32 = icmp eq i64 %pykind, {PY_INT_TO_S32}",
        "  %out32 = xor i1 %fits32, true",
        "  %bad32 = and i1 %is.s32, %out32",
        "  %ovf.any = icmp ne i32 %iovf, 0",
        "  %bad = or i1 %ovf.any, %bad32",
        "  br i1 %bad, label %slow, label %py.int.st",
        "py.int.st:",
        "  store i64 %iv, ptr %slot",                    # little-endian: an s32 is its low half
        "  br label %arg.ok",
        "py.bool:",
        *_rt("true", "%b.true"), *_rt("false", "%b.false"),
        "  %is.t = icmp eq ptr %a, %b.true",
        "  %is.f = icmp eq ptr %a, %b.false",
        "  %is.b = or i1 %is.t, %is.f",
        "  br i1 %is.b, label %py.bool.st, label %slow",
        "py.bool.st:",
        "  %bv = zext i1 %is.t to i8",
        "  store i8 %bv, ptr %slot",
        "  br label %arg.ok",
        "arg.descr:",
        f"  %ad.p = getelementptr i8, ptr %a, i64 {ARRAY_DESCR}",
        "  %adescr = load ptr, ptr %ad.p",
        *_at("%ps", ParamSpec, "descr", "ptr", "%pdescr"),
        "  %same.d = icmp eq ptr %adescr, %pdescr",
        "  br i1 %same.d, label %arg.nd, label %slow",
        "arg.nd:",
        f"  %and.p = getelementptr i8, ptr %a, i64 {ARRAY_ND}",
        "  %and32 = load i32, ptr %and.p",
        "  %and = sext i32 %and32 to i64",
        *_at("%ps", ParamSpec, "ndim", "i64", "%pnd"),
        "  %same.nd = icmp eq i64 %and, %pnd",
        "  br i1 %same.nd, label %arg.dims0, label %slow",
        "arg.dims0:",
        f"  %adims.p = getelementptr i8, ptr %a, i64 {ARRAY_DIMS}",
        "  %adims = load ptr, ptr %adims.p",
        f"  %astr.p = getelementptr i8, ptr %a, i64 {ARRAY_STRIDES}",
        "  %astr = load ptr, ptr %astr.p",
        *_at("%ps", ParamSpec, "dims", "ptr", "%pdims"), *_at("%ps", ParamSpec, "strides", "ptr", "%pstr"),
        "  br label %dim.loop",
        "dim.loop:",
        "  %i = phi i64 [0, %arg.dims0], [%i1, %dim.ok]",
        "  %i.more = icmp slt i64 %i, %pnd",
        "  br i1 %i.more, label %dim, label %arg.data",
        "dim:",
        "  %ad.i.p = getelementptr i64, ptr %adims, i64 %i",
        "  %ad.i = load i64, ptr %ad.i.p",
        "  %pd.i.p = getelementptr i64, ptr %pdims, i64 %i",
        "  %pd.i = load i64, ptr %pd.i.p",
        "  %as.i.p = getelementptr i64, ptr %astr, i64 %i",
        "  %as.i = load i64, ptr %as.i.p",
        "  %pst.i.p = getelementptr i64, ptr %pstr, i64 %i",
        "  %pst.i = load i64, ptr %pst.i.p",
        "  %same.dim = icmp eq i64 %ad.i, %pd.i",
        "  %same.str = icmp eq i64 %as.i, %pst.i",
        "  %same.both = and i1 %same.dim, %same.str",
        "  br i1 %same.both, label %dim.ok, label %slow",
        "dim.ok:",
        "  %i1 = add i64 %i, 1",
        "  br label %dim.loop",
        "arg.data:",
        f"  %data.p = getelementptr i8, ptr %a, i64 {ARRAY_DATA}",
        "  %data = load ptr, ptr %data.p",
        "  %datai = ptrtoint ptr %data to i64",
        *_at("%ps", ParamSpec, "align_mask", "i64", "%mask"),
        "  %mis = and i64 %datai, %mask",
        "  %is.al = icmp eq i64 %mis, 0",
        "  br i1 %is.al, label %arg.ok, label %slow",
        "arg.ok:",
        "  %adata = phi ptr [%data, %arg.data], [%sdata, %arg.svalue], [%fdata, %py.f64.v], "
        "[%slot, %py.f32.st], [%slot, %py.int.st], [%slot, %py.bool.st]",
        "  %pp.k = getelementptr ptr, ptr %pp, i64 %k",
        "  store ptr %adata, ptr %pp.k",
        "  %k1 = add i64 %k, 1",
        "  br label %arg.loop",
        # -- the temp arena, then the results -------------------------------------------
        "claim:",
        *_at("%d", C, "temp_wanted", "i64", "%wanted"),
        "  %no.arena = icmp ne i64 %wanted, 0",
        "  br i1 %no.arena, label %slow, label %claim.busy",
        "claim.busy:",
        f"  %busy.p = getelementptr i8, ptr %d, i64 {C.busy.offset}",
        "  %was = atomicrmw xchg ptr %busy.p, i64 1 acquire",
        "  %free = icmp eq i64 %was, 0",
        "  br i1 %free, label %results, label %slow",
        "results:",
        *_at("%d", C, "nresults", "i64", "%nr"), *_at("%d", C, "results", "ptr", "%rspecs"),
        "  %ro = alloca ptr, i64 %nr",
        "  %rp = alloca ptr, i64 %nr",
        "  br label %res.loop",
        "res.loop:",
        "  %j = phi i64 [0, %results], [%j1, %res.ok]",
        "  %j.more = icmp slt i64 %j, %nr",
        "  br i1 %j.more, label %res, label %cancel0",
        "res:",
        f"  %rs.o = mul i64 %j, {R}",
        "  %rs = getelementptr i8, ptr %rspecs, i64 %rs.o",
        "  %r = call ptr @new_result(ptr %rt, ptr %rs, ptr %self)",
        "  %r.null = icmp eq ptr %r, null",
        "  br i1 %r.null, label %undo, label %res.ok",
        "res.ok:",
        "  %ro.j = getelementptr ptr, ptr %ro, i64 %j",
        "  store ptr %r, ptr %ro.j",
        f"  %rd.p = getelementptr i8, ptr %r, i64 {ARRAY_DATA}",
        "  %rd = load ptr, ptr %rd.p",
        "  %rp.j = getelementptr ptr, ptr %rp, i64 %j",
        "  store ptr %rd, ptr %rp.j",
        "  %j1 = add i64 %j, 1",
        "  br label %res.loop",
        # An allocation failed: drop the results made so far, free the arena, and let
        # the Python path try (and name the buffer if it fails too); a pooled
        # result's exception is the call's (result() names the buffer; it may be
        # a KeyboardInterrupt that came while Python code ran).
        "undo:",
        "  br label %undo.loop",
        "undo.loop:",
        "  %u = phi i64 [0, %undo], [%u1, %undo.one]",
        "  %u.more = icmp slt i64 %u, %j",
        "  br i1 %u.more, label %undo.one, label %undo.done",
        "undo.one:",
        "  %ro.u = getelementptr ptr, ptr %ro, i64 %u",
        "  %r.u = load ptr, ptr %ro.u",
        "  call void %decref(ptr %r.u)",
        "  %u1 = add i64 %u, 1",
        "  br label %undo.loop",
        "undo.done:",
        "  store atomic i64 0, ptr %busy.p release, align 8",
        *_at("%rs", ResultSpec, "pooled", "i64", "%failed.pooled"),
        "  %raise = icmp ne i64 %failed.pooled, 0",
        "  br i1 %raise, label %undo.raise, label %slow.clear",
        "undo.raise:",
        "  ret ptr null",
        # -- Ctrl-C: on the main thread, for code that polls the flag -----------------------
        "cancel0:",
        *_at("%d", C, "opts", "ptr", "%opts0"), *_at("%d", C, "cancel", "ptr", "%cflag"),
        "  %polls = icmp ne ptr %cflag, null",
        "  br i1 %polls, label %which, label %run",
        "which:",
        *_rt("pthread_self", "%self.fn"), *_rt("main_thread", "%main.id.p"),
        "  %me = call i64 %self.fn()",
        "  %main.id = ptrtoint ptr %main.id.p to i64",
        "  %is.main = icmp eq i64 %me, %main.id",
        "  br i1 %is.main, label %arm, label %run",
        "arm:",
        *_at("%d", C, "arm", "ptr", "%arm.fn"), *_at("%d", C, "main_opts", "ptr", "%opts.main"),
        "  %armed = call i32 %arm.fn()",
        "  store atomic volatile i32 0, ptr %cflag seq_cst, align 4",
        # A Ctrl-C that came before the flag was cleared is one Python has noted
        # and not yet raised (no bytecode ran since): it stops this call at once.
        *_rt("PyErr_CheckSignals", "%checksig"),
        "  %sig = call i32 %checksig()",
        "  %pending = icmp ne i32 %sig, 0",
        "  br i1 %pending, label %pend, label %armed.done",
        "pend:",
        *_rt("PyErr_Clear", "%clear.sig"),
        "  call void %clear.sig()",
        "  store atomic volatile i32 1, ptr %cflag seq_cst, align 4",
        "  br label %armed.done",
        "armed.done:",
        "  br label %run",
        # -- the call ---------------------------------------------------------------------
        "run:",
        "  %opts = phi ptr [%opts0, %cancel0], [%opts0, %which], [%opts.main, %armed.done]",
        "  %main = phi i1 [false, %cancel0], [false, %which], [true, %armed.done]",
        f"  %calls.p = getelementptr i8, ptr %d, i64 {C.calls.offset}",
        "  %calls = load i64, ptr %calls.p",
        "  %calls1 = add i64 %calls, 1",
        "  store i64 %calls1, ptr %calls.p",
        *_at("%d", C, "entry", "ptr", "%entry.fn"), *_at("%d", C, "temp", "ptr", "%temp"),
        *_rt("PyEval_SaveThread", "%save"), *_rt("PyEval_RestoreThread", "%restore"),
        "  %ts = call ptr %save()",
        "  call void %entry.fn(ptr %rp, ptr %pp, ptr %temp, ptr %opts)",
        "  call void %restore(ptr %ts)",
        "  store atomic i64 0, ptr %busy.p release, align 8",
        *_at("%d", C, "tuple_result", "i64", "%tup"),
        "  %is.tup = icmp ne i64 %tup, 0",
        "  br i1 %is.tup, label %tuple, label %single",
        "single:",
        "  %r0 = load ptr, ptr %ro",
        "  br label %check",
        "tuple:",
        *_rt("PyTuple_New", "%tnew"), *_rt("PyTuple_SetItem", "%tset"),
        "  %t = call ptr %tnew(i64 %nr)",
        "  %t.null = icmp eq ptr %t, null",
        "  br i1 %t.null, label %tfail, label %tfill",
        "tfail:",                    # (MemoryError set): drop the results
        "  br label %tfail.loop",
        "tfail.loop:",
        "  %f = phi i64 [0, %tfail], [%f1, %tfail.one]",
        "  %f.more = icmp slt i64 %f, %nr",
        "  br i1 %f.more, label %tfail.one, label %tfail.done",
        "tfail.one:",
        "  %ro.f = getelementptr ptr, ptr %ro, i64 %f",
        "  %r.f = load ptr, ptr %ro.f",
        "  call void %decref(ptr %r.f)",
        "  %f1 = add i64 %f, 1",
        "  br label %tfail.loop",
        "tfail.done:",
        "  ret ptr null",
        "tfill:",
        "  br label %tfill.loop",
        "tfill.loop:",
        "  %q = phi i64 [0, %tfill], [%q1, %tfill.one]",
        "  %q.more = icmp slt i64 %q, %nr",
        "  br i1 %q.more, label %tfill.one, label %tfill.done",
        "tfill.one:",
        "  %ro.q = getelementptr ptr, ptr %ro, i64 %q",
        "  %r.q = load ptr, ptr %ro.q",
        "  %set = call i32 %tset(ptr %t, i64 %q, ptr %r.q)",    # steals %r.q
        "  %q1 = add i64 %q, 1",
        "  br label %tfill.loop",
        "tfill.done:",
        "  br label %check",
        # -- an error a callback recorded, or Ctrl-C: the Python path's finish ---------------
        "check:",
        "  %ret = phi ptr [%r0, %single], [%t, %tfill.done]",
        "  %ne1 = call i64 %dictsize(ptr %errs)",
        "  %err = icmp ne i64 %ne1, 0",
        "  br i1 %main, label %check.c, label %check.e",
        "check.c:",
        "  %cf = load atomic volatile i32, ptr %cflag seq_cst, align 4",
        "  %stopped.c = icmp ne i32 %cf, 0",
        "  br i1 %stopped.c, label %clear.flag, label %check.e",
        # Cleared here: Python's own SIGINT handler may raise KeyboardInterrupt before
        # finish runs, and the flag has done its job.
        "clear.flag:",
        "  store atomic volatile i32 0, ptr %cflag seq_cst, align 4",
        "  br label %finish",
        "check.e:",
        "  br i1 %err, label %finish, label %done",
        "done:",
        "  ret ptr %ret",
        "finish:",
        "  %stopped = phi i1 [true, %clear.flag], [false, %check.e]",
        *_rt("PyObject_Vectorcall", "%vcall.f"), *_rt("finish", "%finish.fn"),
        *_rt("true", "%py.true"), *_rt("false", "%py.false"),
        "  %stopped.o = select i1 %stopped, ptr %py.true, ptr %py.false",
        "  %fa = alloca [3 x ptr]",
        "  store ptr %self, ptr %fa",
        "  %fa.1 = getelementptr ptr, ptr %fa, i64 1",
        "  store ptr %ret, ptr %fa.1",
        "  %fa.2 = getelementptr ptr, ptr %fa, i64 2",
        "  store ptr %stopped.o, ptr %fa.2",
        "  %fr = call ptr %vcall.f(ptr %finish.fn, ptr %fa, i64 3, ptr null)",
        "  call void %decref(ptr %ret)",
        "  ret ptr %fr",
        # -- the Python path: slow(self, *args) ----------------------------------------------
        "slow.clear:",
        "  call void %clear()",
        "  br label %slow",
        # Keyword arguments too (their values follow the positional ones), so that
        # the Python path says what it says of them.
        "slow:",
        *_rt("PyObject_Vectorcall", "%vcall"), *_rt("slow", "%slow.fn"), *_rt("PyTuple_Size", "%tsize"),
        "  %has.kw = icmp ne ptr %kwnames, null",
        "  br i1 %has.kw, label %slow.kw, label %slow.call",
        "slow.kw:",
        "  %nkw.kw = call i64 %tsize(ptr %kwnames)",
        "  br label %slow.call",
        "slow.call:",
        "  %nkw = phi i64 [0, %slow], [%nkw.kw, %slow.kw]",
        "  %n1 = add i64 %nargs, 1",
        "  %nall = add i64 %n1, %nkw",
        "  %nall.bytes = shl i64 %nall, 3",
        # exe(*a_million_things) must get its TypeError, not overflow the stack.
        f"  %big = icmp ugt i64 %nall, {_STACK_ARGS}",
        "  br i1 %big, label %slow.heap, label %slow.fill",
        "slow.heap:",
        *_rt("PyMem_Malloc", "%malloc"),
        "  %heap = call ptr %malloc(i64 %nall.bytes)",
        "  %heap.null = icmp eq ptr %heap, null",
        "  br i1 %heap.null, label %slow.nomem, label %slow.fill",
        "slow.nomem:",
        *_rt("PyErr_NoMemory", "%nomem"),
        "  %nm = call ptr %nomem()",
        "  ret ptr null",
        "slow.fill:",
        "  %sa = phi ptr [%stack, %slow.call], [%heap, %slow.heap]",
        "  store ptr %self, ptr %sa",
        "  %sa.1 = getelementptr ptr, ptr %sa, i64 1",
        "  %nitems = add i64 %nargs, %nkw",
        "  %nbytes = shl i64 %nitems, 3",
        "  call void @llvm.memcpy.p0.p0.i64(ptr %sa.1, ptr %args, i64 %nbytes, i1 false)",
        "  %sr = call ptr %vcall(ptr %slow.fn, ptr %sa, i64 %n1, ptr %kwnames)",
        "  br i1 %big, label %slow.free, label %slow.done",
        "slow.free:",
        *_rt("PyMem_Free", "%mfree"),
        "  call void %mfree(ptr %sa)",
        "  br label %slow.done",
        "slow.done:",
        "  ret ptr %sr",
        "}",
        "",
        "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)",
        "declare float @llvm.fabs.f32(float)",
        "declare double @llvm.fabs.f64(double)",
        "",
    ]
    return "\n".join(L)


# ---------------------------------------------------------------------------------------
# Building it, checking the layouts, installing it
# ---------------------------------------------------------------------------------------

#: The attribute of an executable that holds its CallSpec's address (0: none).
ATTRIBUTE = "_fast_call"
_attr = ATTRIBUTE                     # the very str object the native code looks up
_lock = threading.Lock()
_installed: dict = {}                 # class -> what keeps its fast call alive (forever)


def supported() -> bool:
    """Whether this interpreter is one whose layouts the native code knows
    (CPython on a 64-bit platform, without ``Py_TRACE_REFS``) and the layouts
    check out on live objects."""
    import sys
    if sys.implementation.name != "cpython" or ctypes.sizeof(c_void_p) != 8 or hasattr(sys, "getobjects"):
        return False
    try:
        return _layouts_hold()
    except Exception:  # noqa: BLE001 - any surprise: no fast path
        return False


def _read(address: int, ctype):
    return ctype.from_address(address).value


def _layouts_hold() -> bool:
    """Every offset the native code reads, checked on a live object and array."""
    a = np.zeros((3, 5), np.float32)[:, ::2]
    base = id(a)
    return (_read(base + OB_TYPE, c_void_p) == id(np.ndarray)
            and _read(base + ARRAY_DATA, c_void_p) == a.ctypes.data
            and _read(base + ARRAY_ND, ctypes.c_int) == a.ndim
            and list((c_int64 * 2).from_address(_read(base + ARRAY_DIMS, c_void_p))) == list(a.shape)
            and list((c_int64 * 2).from_address(_read(base + ARRAY_STRIDES, c_void_p))) == list(a.strides)
            and _read(base + ARRAY_DESCR, c_void_p) == id(a.dtype)
            and _read(id(_PROBE_FLOAT) + FLOAT_VALUE, ctypes.c_double) == _PROBE_FLOAT
            and numpy_api()[API_ARRAY_TYPE] == id(np.ndarray))


_PROBE_FLOAT = 1.2345678


def scalar_type(dtype: np.dtype) -> type | None:
    """``dtype``'s numpy scalar type if its objects hold their value at
    ``SCALAR_VALUE`` in the dtype's bytes (checked on a live scalar; numpy's
    own scalar types do, extension types such as ml_dtypes' may not), else None."""
    t = _scalar_types.get(dtype)
    if t is None and dtype not in _scalar_types:
        v = np.full((), 1 if dtype.kind != "b" else True, dtype)[()]
        held = (type(v) is dtype.type and dtype.isnative and not dtype.hasobject
                and ctypes.string_at(id(v) + SCALAR_VALUE, dtype.itemsize) == np.asarray(v).tobytes())
        t = _scalar_types[dtype] = dtype.type if held else None
    return t


_scalar_types: dict = {}


def numpy_api():
    """numpy's C-API table (``_ARRAY_API``), as an array of addresses."""
    try:
        from numpy._core import _multiarray_umath as m      # numpy 2
    except ImportError:                                      # pragma: no cover - numpy 1.x
        from numpy.core import _multiarray_umath as m
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = c_void_p, [ctypes.py_object, c_char_p]
    return c_memory.array_type(c_void_p, API_SET_BASE_OBJECT + 1).from_address(get(m._ARRAY_API, None))


def _address(name: str) -> int:
    return ctypes.cast(getattr(ctypes.pythonapi, name), c_void_p).value


def install(cls: type, slow, finish, result) -> bool:
    """Make ``cls.__call__`` the native fast call (once per class), which falls
    back to ``slow(exe, *args)``, finishes unusual calls with ``finish(exe,
    result, stopped)`` (``stopped``: Ctrl-C stopped the call; the flag is
    cleared) and makes a ``pooled`` result with ``result(exe, index)`` (an
    ndarray whose data pointer is the buffer the code writes; the exception
    it raises is the call's).  Returns False (``cls`` untouched) where it is
    not supported."""
    with _lock:
        if cls in _installed:
            return True
        if not supported():
            return False
        jf = load_or_compile(("fast-call", _ir()), _ENTRY, lambda: (_ir(), None),
                             directory=disk_cache.library_dir()).jit
        api = numpy_api()
        rt = Runtime(**{name: _address(name) for name in _PYTHON_FUNCTIONS})
        # The pool's C library, kept: a CDLL made here and dropped would be a
        # cycle (its function-pointer class), garbage after the first compile.
        rt.pthread_self = ctypes.cast(_threads._c.pthread_self, c_void_p).value
        rt.PyArray_NewFromDescr = api[API_NEW_FROM_DESCR]
        rt.PyArray_SetBaseObject = api[API_SET_BASE_OBJECT]
        rt.ndarray, rt.errors, rt.slow, rt.finish = id(np.ndarray), id(_threads._errors), id(slow), id(finish)
        rt.result = id(result)
        rt.attr, rt.u8_descr = id(_attr), id(np.dtype(np.uint8))
        rt.main_thread = threading.main_thread().ident
        rt.true, rt.false = id(True), id(False)
        rt.float_type, rt.int_type = id(float), id(int)
        ctypes.CFUNCTYPE(None, c_void_p)(jf.engine.get_function_address(f"{_ENTRY}_init"))(ctypes.addressof(rt))
        doc = (cls.__call__.__doc__ or "Call the compiled module.").encode()
        mdef = PyMethodDef(b"__call__", jf.address, METH_FASTCALL | METH_KEYWORDS, doc)
        new = ctypes.pythonapi.PyDescr_NewMethod
        new.restype, new.argtypes = ctypes.py_object, [ctypes.py_object, c_void_p]
        descriptor = new(cls, ctypes.addressof(mdef))
        # Kept for the life of the process: the descriptor points at mdef and the code.
        _installed[cls] = (jf, rt, mdef, doc, slow, finish, result, descriptor)
        cls.__call__ = descriptor
        return True


def make_spec(params: list, results: list, tuple_result: bool, entry: int, opts: int, main_opts: int,
              cancel: int | None, arm: int | None, temp: int | None, temp_wanted: bool = False) -> CallSpec:
    """A :class:`CallSpec`.  ``params``: ``(dtype, dims, strides, align_mask)``
    per parameter; ``results``: ``(dtype, dims, nbytes, aligned, strides,
    pooled)`` per result leaf (``strides`` None: C order; ``pooled``: made by
    the installed ``result`` function); the rest are addresses (``cancel``/``arm``
    None: the code never polls the flag; ``temp`` None with ``temp_wanted``: the
    arena is still to be made, calls take the Python path until it is).  The
    spec keeps what it points at alive; the caller keeps the spec."""
    spec = CallSpec()
    keep = []

    # Pointers are cast from addresses: ``ctypes.cast`` of an array would put
    # the array in its own ``_objects`` (a cycle, garbage once the spec dies).
    def ints(values):
        arr = c_memory.array(c_int64, values)
        keep.append(arr)
        return ctypes.cast(ctypes.addressof(arr), ctypes.POINTER(c_int64))

    ps = c_memory.array(ParamSpec, length=max(1, len(params)))
    for p, (dtype, dims, strides, mask) in zip(ps, params):
        keep.append(dtype)
        p.descr, p.ndim, p.dims, p.strides, p.align_mask = id(dtype), len(dims), ints(dims), ints(strides), mask
        stype = scalar_type(dtype) if not dims else None
        if stype is not None:
            keep.append(stype)
            p.scalar_type = id(stype)
        if not dims:
            p.python = PYTHON_SCALARS.get(dtype, PY_NONE)
    rs = c_memory.array(ResultSpec, length=max(1, len(results)))
    for k, (r, (dtype, dims, nbytes, aligned, strides, pooled)) in enumerate(zip(rs, results)):
        keep.append(dtype)
        r.descr, r.ndim, r.dims, r.nbytes = id(dtype), len(dims), ints(dims), nbytes
        r.aligned = int(aligned or strides is not None)
        if strides is not None:
            r.strides = ints(strides)
        if pooled:
            keep.append(k)
            r.pooled, r.index = 1, id(k)
    spec.nparams, spec.nresults, spec.tuple_result = len(params), len(results), int(tuple_result)
    spec.params = ctypes.cast(ctypes.addressof(ps), ctypes.POINTER(ParamSpec))
    spec.results = ctypes.cast(ctypes.addressof(rs), ctypes.POINTER(ResultSpec))
    spec.entry, spec.opts, spec.main_opts = entry, opts, main_opts
    spec.cancel, spec.arm, spec.temp, spec.temp_wanted = cancel, arm, temp, int(temp_wanted)
    spec._keep = (keep, ps, rs)
    return spec
