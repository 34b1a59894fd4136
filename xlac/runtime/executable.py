"""Executable: a compiled module called from Python with numpy arrays.

``xlac.jit(x)`` accepts an XlaComputation, an HloModule or HLO text and returns
an :class:`Executable`.  Calling it:

* checks the number of arguments, then each argument's shape and dtype against
  its parameter (``TypeError`` for a wrong dtype, ``ValueError`` for a wrong
  shape, both naming the parameter, the expected and the actual);
* lays each argument out as its parameter's layout says (any numpy strides are
  accepted; a C-contiguous array with the default layout is passed as is);
* runs the native entry (the GIL is released by ctypes meanwhile);
* returns the results in logical order: one numpy array, or a tuple for a
  tuple-shaped result.

Compiled code is cached in memory by the module's fingerprint, so jitting the
same module twice compiles once.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from ..codegen.compiler import Lowered, lower
from ..codegen.jit import JitFunction, compile_ir
from ..hlo.ir import HloModule
from ..shape import Shape, from_buffer, to_buffer

_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_cache: dict[str, tuple[Lowered, JitFunction]] = {}
_cache_lock = threading.Lock()


def as_module(x) -> HloModule:
    """An HloModule from an XlaComputation, an HloModule or HLO text."""
    if isinstance(x, HloModule):
        return x
    if isinstance(x, str):
        from ..hlo.parser import parse_hlo
        return parse_hlo(x)
    module = getattr(x, "module", None)
    if isinstance(module, HloModule):
        return module
    raise TypeError(f"expected an XlaComputation, an HloModule or HLO text, got {type(x).__name__}")


def _compile(module: HloModule, optimize: bool = True) -> tuple[Lowered, JitFunction]:
    key = f"{module.fingerprint()}:{int(optimize)}"
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None:
        return hit
    lowered = lower(module, optimize=optimize)
    fn = compile_ir(lowered.llvm_module, lowered.entry_name)
    with _cache_lock:
        _cache.setdefault(key, (lowered, fn))
        return _cache[key]


class Executable:
    """A JIT-compiled module. See the module docstring for calling conventions."""

    def __init__(self, module: HloModule, optimize: bool = True):
        self.module = module
        self.lowered, self._jit = _compile(module, optimize)
        self._fn = _ENTRY(self._jit.address)
        entry = module.entry
        self.parameters = entry.parameters
        self.parameter_shapes: list[Shape] = [p.shape for p in self.parameters]
        self.result_shape: Shape = self.lowered.hlo.entry.root.shape
        self._result_leaves = self.lowered.assignment.result_shapes
        self.temp_size = self.lowered.assignment.temp_size

    # -- introspection ---------------------------------------------------------------
    @property
    def llvm_ir(self) -> str:
        """LLVM IR as emitted, before optimisation."""
        return self.lowered.llvm_ir

    @property
    def optimized_llvm_ir(self) -> str:
        return self._jit.optimized_ir

    @property
    def optimized_hlo(self) -> HloModule:
        return self.lowered.hlo

    # -- calling ------------------------------------------------------------------------
    def __call__(self, *args):
        if len(args) != len(self.parameter_shapes):
            raise TypeError(f"{self.module.name} takes {len(self.parameter_shapes)} argument(s) "
                            f"({self._signature()}), got {len(args)}")
        keep = []  # arrays whose memory the native call reads; alive until it returns
        params = (ctypes.c_void_p * max(1, len(args)))()
        for k, (arg, param) in enumerate(zip(args, self.parameters)):
            buf = self._argument_buffer(k, param, arg)
            keep.append(buf)
            params[k] = buf.ctypes.data
        results = []
        result_ptrs = (ctypes.c_void_p * max(1, len(self._result_leaves)))()
        for k, s in enumerate(self._result_leaves):
            buf = np.empty(max(1, s.buffer_element_count()), dtype=s.dtype)
            results.append(buf)
            result_ptrs[k] = buf.ctypes.data
        temp = _aligned_empty(self.temp_size)
        self._fn(ctypes.addressof(result_ptrs), ctypes.addressof(params),
                 temp.ctypes.data if temp is not None else None, None)
        arrays = iter([from_buffer(buf[:s.buffer_element_count()], s)
                       for buf, s in zip(results, self._result_leaves)])
        return _restructure(self.result_shape, arrays)

    def _argument_buffer(self, k: int, param, arg) -> np.ndarray:
        shape = param.shape
        label = f"parameter {k}" + (f" ({param.name})" if param.name else "")
        if isinstance(arg, (bool, int, float, complex)) and not isinstance(arg, np.generic):
            arg = np.asarray(arg, dtype=shape.dtype)  # Python scalars take the parameter's type
        a = np.asarray(arg)
        if a.dtype != shape.dtype:
            raise TypeError(f"{label}: expected dtype {shape.dtype} ({shape}), got {a.dtype}")
        if a.shape != shape.dimensions:
            raise ValueError(f"{label}: expected shape {shape.dimensions} ({shape}), got {a.shape}")
        if shape.has_default_layout() and a.flags.c_contiguous and a.flags.aligned:
            return a
        return to_buffer(a, shape)

    def _signature(self) -> str:
        return ", ".join(f"{p.name or p.parameter_number}: {p.shape}" for p in self.parameters)

    def __repr__(self) -> str:
        return f"<xlac.Executable {self.module.name}({self._signature()}) -> {self.result_shape}>"


def _aligned_empty(nbytes: int):
    if nbytes <= 0:
        return None
    raw = np.empty(nbytes + 64, dtype=np.uint8)
    start = (-raw.ctypes.data) % 64
    return raw[start:start + nbytes]


def _restructure(shape: Shape, arrays):
    if shape.is_tuple:
        return tuple(_restructure(s, arrays) for s in shape.tuple_shapes)
    return next(arrays)


def jit(x, *, optimize: bool = True) -> Executable:
    """Compile an XlaComputation, HloModule or HLO text for this CPU.

    ``optimize=False`` compiles every instruction as its own kernel, without
    simplification or fusion (for debugging and as a reference).

    Raises ``xlac.HloParseError`` for bad text, ``xlac.ShapeError`` for an
    ill-shaped module and ``xlac.UnsupportedError`` ("not supported yet: <op>")
    for an operation the code generator does not handle.
    """
    return Executable(as_module(x), optimize)
