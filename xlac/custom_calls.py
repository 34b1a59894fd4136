"""Custom-call targets of the user: ``xlac.register_custom_call`` and how they are called.

A ``custom-call`` instruction names a target that runs outside the compiler.
xlac provides jax's LAPACK targets itself (``lapack_*_ffi``,
:mod:`xlac.hlo.custom_call`); every other target must be registered before a
module using it is compiled (``xlac.jit``) or evaluated (``xlac.evaluate``),
else that is an ``UnsupportedError`` naming the target::

    xlac.register_custom_call("my_softplus", lambda x: np.log1p(np.exp(x)))   # numpy in, numpy out
    xlac.register_custom_call("my_c_target", lib.my_c_target)                 # a C function (ctypes)
    xlac.register_custom_call("my_c_target", 0x7f..., api_version="API_VERSION_STATUS_RETURNING")

A **Python callable** gets the operands as numpy arrays (logical order,
whatever their layout) and returns one array, or a tuple/list of arrays for a
tuple-shaped result; each is checked against the instruction's result shape
(``TypeError`` for a wrong dtype, ``ValueError`` for a wrong shape or count,
naming the target).  The instruction's opaque data is passed as XLA passes
it: ``opaque=<bytes>`` for the older APIs when ``backend_config`` is not
empty, the typed FFI's attributes as keyword arguments
(``backend_config={eps = 1.0e-3 : f32}`` -> ``eps=0.001``).  A ``token[]``
operand (what orders side effects, as jax's ordered callbacks do) arrives as
``None`` (a C function gets NULL) and a token result is not written: return
anything in its place.

A **C function** (an address, a ctypes function, or a PyCapsule as jax's
``register_custom_call_target`` takes) is called with XLA's CPU calling
conventions, chosen by the instruction's ``api_version``:

* ``API_VERSION_ORIGINAL``: ``void f(void *out, const void **in)``;
* ``API_VERSION_STATUS_RETURNING``: ``void f(void *out, const void **in, XlaCustomCallStatus *status)``;
* ``API_VERSION_STATUS_RETURNING_UNIFIED``: ``void f(void *out, const void **in,
  const char *opaque, size_t opaque_len, XlaCustomCallStatus *status)``.

``in[i]`` is operand ``i``'s buffer, laid out as the instruction's
``operand_layout_constraints`` say (default: row-major); ``out`` is the
result's buffer, or for a tuple result an array of its elements' buffers
(``void **``), laid out as the result shape says.  A failure set with
``XlaCustomCallStatusSetFailure`` (``runtime/xlac_runtime.h``) raises
:class:`xlac.CustomCallError` naming the target and the message.  The typed
FFI is not available to C functions (``UnsupportedError``).

``api_version=`` at registration is optional; when given, instructions naming
the target must use that version.  Registering a name again replaces it.
"""
from __future__ import annotations

import ctypes
import functools
import threading
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import lapack_reference
from .errors import CustomCallError, UnsupportedError
from .hlo import custom_call as hcc
from .shape import Shape, from_buffer, parse_shape, to_buffer

__all__ = ["register_custom_call", "unregister_custom_call", "lookup", "registered_targets",
           "CustomCallTarget", "CallInfo", "XlaCustomCallStatus", "call_python", "call_c",
           "check_target", "evaluate"]

ORIGINAL = hcc.API_VERSIONS["API_VERSION_ORIGINAL"]
STATUS_RETURNING = hcc.API_VERSIONS["API_VERSION_STATUS_RETURNING"]
UNIFIED = hcc.API_VERSIONS["API_VERSION_STATUS_RETURNING_UNIFIED"]
TYPED_FFI = hcc.API_VERSIONS["API_VERSION_TYPED_FFI"]

#: XLAC_CUSTOM_CALL_MESSAGE_MAX of runtime/xlac_runtime.h.
MESSAGE_MAX = 1024


class XlaCustomCallStatus(ctypes.Structure):
    """``XlaCustomCallStatus`` of ``runtime/xlac_runtime.h`` (tests/runtime/test_abi.py
    checks the layout)."""

    _fields_ = [("failed", ctypes.c_int32), ("message_len", ctypes.c_int32),
                ("message", ctypes.c_char * MESSAGE_MAX)]


_ORIGINAL_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
_STATUS_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(XlaCustomCallStatus))
_UNIFIED_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                               ctypes.POINTER(XlaCustomCallStatus))
_PROTOTYPES = {ORIGINAL: _ORIGINAL_FN, STATUS_RETURNING: _STATUS_FN, UNIFIED: _UNIFIED_FN}


@dataclass(frozen=True)
class CustomCallTarget:
    """A registered target: a Python callable, or the address of a C function."""

    name: str
    fn: Callable | None = None
    address: int | None = None
    api_version: int | None = None          # declared at registration (None: any)
    keepalive: object = field(default=None, compare=False, repr=False)

    @property
    def is_c(self) -> bool:
        return self.address is not None

    @functools.cached_property
    def _c_functions(self) -> dict:
        return {v: proto(self.address) for v, proto in _PROTOTYPES.items()}

    def c_function(self, api_version: int):
        return self._c_functions[api_version]


_registry: dict[str, CustomCallTarget] = {}
_lock = threading.Lock()


def capsule_address(capsule) -> int:
    """The pointer a PyCapsule holds (a C function scipy or a user exports), or 0."""
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get_pointer(capsule, get_name(capsule)) or 0


def _api_version_arg(target: str, api_version) -> int | None:
    if api_version is None:
        return None
    if isinstance(api_version, str):
        if api_version not in hcc.API_VERSIONS:
            raise ValueError(f"register_custom_call({target!r}): api_version={api_version!r} is not one of "
                             f"{', '.join(hcc.API_VERSIONS)}")
        return hcc.API_VERSIONS[api_version]
    if isinstance(api_version, bool) or not isinstance(api_version, int) or not 1 <= api_version <= 4:
        raise ValueError(f"register_custom_call({target!r}): api_version must be 1..4 or an "
                         f"API_VERSION_* name, got {api_version!r}")
    return api_version


def register_custom_call(target: str, fn, *, api_version=None) -> None:
    """Make ``target`` callable from custom-call instructions (see the module
    docstring): ``fn`` is a Python callable (numpy arrays in and out) or a C
    function — its address (int), a ctypes function, or a PyCapsule.
    ``api_version`` (optional): the XLA API version (number or
    ``"API_VERSION_*"`` name) instructions naming ``target`` must have.
    Registering a name again replaces it.  The targets xlac provides itself
    (jax's ``lapack_*_ffi``, jaxlib's kernels in ``hlo.custom_call.EXPANDED_TARGETS``) cannot be replaced."""
    if not isinstance(target, str) or not target:
        raise TypeError(f"register_custom_call: target must be a non-empty string, got {target!r}")
    if hcc.is_builtin(target) or target in hcc.EXPANDED_TARGETS:
        raise ValueError(f"register_custom_call: {target!r} is provided by xlac (jax's LAPACK targets, "
                         f"jaxlib's {', '.join(sorted(hcc.EXPANDED_TARGETS))}) and cannot be replaced")
    version = _api_version_arg(target, api_version)
    if isinstance(fn, ctypes._CFuncPtr):                     # noqa: SLF001 - ctypes' function type
        entry = CustomCallTarget(target, address=ctypes.cast(fn, ctypes.c_void_p).value, api_version=version,
                                 keepalive=fn)
    elif type(fn).__name__ == "PyCapsule":
        entry = CustomCallTarget(target, address=capsule_address(fn), api_version=version, keepalive=fn)
    elif isinstance(fn, (int, np.integer)) and not isinstance(fn, bool):
        entry = CustomCallTarget(target, address=int(fn), api_version=version)
    elif callable(fn):
        entry = CustomCallTarget(target, fn=fn, api_version=version)
    else:
        raise TypeError(f"register_custom_call({target!r}): fn must be a Python callable or a C function "
                        f"(address, ctypes function or PyCapsule), got {type(fn).__name__}")
    if entry.is_c:
        if not entry.address:
            raise ValueError(f"register_custom_call({target!r}): the C function's address is NULL")
        if version == TYPED_FFI:
            raise ValueError(f"register_custom_call({target!r}): C functions of the typed FFI "
                             "(API_VERSION_TYPED_FFI) are not supported; use API_VERSION_ORIGINAL, "
                             "_STATUS_RETURNING or _STATUS_RETURNING_UNIFIED, or a Python callable")
    with _lock:
        _registry[target] = entry


def unregister_custom_call(target: str) -> bool:
    """Forget ``target``; True when it was registered."""
    with _lock:
        return _registry.pop(target, None) is not None


def lookup(target: str) -> CustomCallTarget | None:
    """The registered target called ``target``, or None."""
    return _registry.get(target)


def registered_targets() -> list[str]:
    """The names registered, sorted."""
    return sorted(_registry)


def check_target(target: str, api_version: int, instruction: str = "") -> CustomCallTarget:
    """The registered target ``target`` if an instruction of ``api_version`` may
    call it, else ``UnsupportedError`` naming it and saying why."""
    where = f"instruction {instruction}: " if instruction else ""
    entry = lookup(target)
    callback = hcc.host_callback_error(target, f"instruction {instruction}" if instruction else "")
    if callback is not None:
        raise callback
    if entry is None and target in hcc.UNSUPPORTED_XLA_TARGETS:
        raise UnsupportedError(f"custom-call {target}", f"{where}{hcc.UNSUPPORTED_XLA_TARGETS[target]}")
    if entry is None:
        raise UnsupportedError("custom-call", f"{where}target {target!r} is not registered; register it with "
                                              f"xlac.register_custom_call({target!r}, fn)")
    if entry.api_version is not None and entry.api_version != api_version:
        raise UnsupportedError("custom-call", f"{where}target {target!r} was registered for "
                                              f"{hcc.API_VERSION_NAMES[entry.api_version]}, the instruction "
                                              f"has {hcc.API_VERSION_NAMES.get(api_version, api_version)}")
    if entry.is_c and api_version not in _PROTOTYPES:
        raise UnsupportedError("custom-call", f"{where}target {target!r} is a C function and the instruction "
                                              f"has {hcc.API_VERSION_NAMES.get(api_version, api_version)}: "
                                              "C functions take API_VERSION_ORIGINAL, _STATUS_RETURNING or "
                                              "_STATUS_RETURNING_UNIFIED (register a Python callable instead)")
    return entry


# ---------------------------------------------------------------------------------------
# Calling a target
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CallInfo:
    """What one custom-call instruction tells its target."""

    target: str
    instruction: str
    api_version: int
    operand_shapes: tuple          # array shapes with the layouts the target reads
    result_shapes: tuple           # array shapes (tuple elements in order) with their layouts
    result_is_tuple: bool
    opaque: bytes = b""

    @property
    def label(self) -> str:
        return f"custom call target {self.target!r} (instruction {self.instruction})"

    def keywords(self) -> dict:
        """The keyword arguments a Python callable gets (see the module docstring)."""
        if self.api_version == TYPED_FFI:
            text = self.opaque.decode("utf-8", "replace").strip()
            return hcc.parse_mlir_attributes(text) if text.startswith("{") else {}
        return {"opaque": self.opaque} if self.opaque else {}


@functools.lru_cache(maxsize=1024)
def shape_of_text(text: str) -> Shape:
    """A shape's HLO text parsed (cached: the service sees the same few texts)."""
    return parse_shape(text)


def call_info(inst) -> CallInfo:
    """The :class:`CallInfo` of a custom-call instruction; ``UnsupportedError``
    for operands or results xlac cannot pass (tuple operands, nested tuples)."""
    layouts = hcc.operand_layouts(inst) or [None] * len(inst.operands)
    operands = []
    for k, (op, want) in enumerate(zip(inst.operands, layouts)):
        if op.shape.is_token:              # ordering only: a Python target gets None, a C one NULL
            operands.append(op.shape)
            continue
        if not op.shape.is_array:
            raise UnsupportedError("custom-call", f"instruction {inst.name}: operand {k} is {op.shape}; custom "
                                                  "calls take array operands")
        operands.append(want if want is not None else op.shape.with_layout(None))
    shape = inst.shape
    results = list(shape.tuple_shapes) if shape.is_tuple else [shape]
    if any(not (s.is_array or s.is_token) for s in results):
        raise UnsupportedError("custom-call", f"instruction {inst.name}: result {shape}; custom calls "
                                              "return an array or a tuple of arrays")
    return CallInfo(hcc.target_of(inst), inst.name, hcc.api_version_of(inst), tuple(operands), tuple(results),
                    shape.is_tuple, hcc.opaque_of(inst))


def _result_error(info: CallInfo, k: int, want: Shape, got) -> Exception:
    which = f"result {k}" if info.result_is_tuple else "the result"
    if not isinstance(got, np.ndarray):
        return TypeError(f"{info.label}: {which} must be a numpy array of {want}, got {type(got).__name__}")
    if got.dtype != want.dtype:
        return TypeError(f"{info.label}: {which} has dtype {got.dtype}, the instruction's shape is {want} "
                         f"(dtype {want.dtype})")
    return ValueError(f"{info.label}: {which} has shape {got.shape}, the instruction's shape is {want}")


def call_python(entry: CustomCallTarget, info: CallInfo, operands: list) -> list:
    """Call a Python target on logical numpy arrays; returns the results (a
    list, one per result array), checked against ``info.result_shapes``."""
    try:
        out = entry.fn(*operands, **info.keywords())
    except Exception as e:  # noqa: BLE001 - named and chained
        raise CustomCallError(f"{info.label} raised {type(e).__name__}: {e}") from e
    if info.result_is_tuple:
        if not isinstance(out, (tuple, list)) or len(out) != len(info.result_shapes):
            n = len(out) if isinstance(out, (tuple, list)) else "not a tuple"
            raise ValueError(f"{info.label}: the result is a tuple of {len(info.result_shapes)} arrays "
                             f"({', '.join(map(str, info.result_shapes))}), the callable returned "
                             f"{type(out).__name__} ({n})")
        values = list(out)
    else:
        values = [out]
    checked = []
    for k, (v, want) in enumerate(zip(values, info.result_shapes)):
        if want.is_token:                  # nothing to write: whatever the target gave
            checked.append(None)
            continue
        if isinstance(v, np.generic):
            v = np.asarray(v)
        if not isinstance(v, np.ndarray) or v.dtype != want.dtype or v.shape != tuple(want.dimensions):
            raise _result_error(info, k, want, v)
        checked.append(v)
    return checked


def call_c(entry: CustomCallTarget, info: CallInfo, result_ptrs: list, operand_ptrs: list) -> None:
    """Call a C target on buffers (addresses) with XLA's calling convention of
    ``info.api_version``; ``CustomCallError`` when it reports a failure."""
    # The pointer arrays are numpy's: a ctypes array of a new length would be a
    # new class per call, left to the cyclic collector.
    ins = np.array(operand_ptrs or [0], np.uintp)
    outs = np.array(result_ptrs or [0], np.uintp)
    out = outs.ctypes.data if info.result_is_tuple else (result_ptrs[0] if result_ptrs else None)
    fn = entry.c_function(info.api_version)
    if info.api_version == ORIGINAL:
        fn(out, ins.ctypes.data)
        return
    status = XlaCustomCallStatus()
    if info.api_version == STATUS_RETURNING:
        fn(out, ins.ctypes.data, ctypes.byref(status))
    else:
        fn(out, ins.ctypes.data, info.opaque, len(info.opaque), ctypes.byref(status))
    if status.failed:
        n = max(0, min(int(status.message_len), MESSAGE_MAX - 1))
        message = bytes(status.message[:n]).decode("utf-8", "replace")
        raise CustomCallError(f"{info.label} failed: {message}")


def evaluate(inst, values: list):
    """The evaluator's rule for ``custom-call``: run ``inst`` on numpy ``values``
    (jax's LAPACK targets through :mod:`xlac.lapack_reference`, others as registered)."""
    if hcc.is_builtin(hcc.target_of(inst)):
        return lapack_reference.evaluate(inst, values)
    info = call_info(inst)
    entry = check_target(info.target, info.api_version, inst.name)
    if entry.is_c:
        buffers = [None if s.is_token else to_buffer(v, s) for v, s in zip(values, info.operand_shapes)]
        outs = [None if s.is_token else np.zeros(s.buffer_element_count(), s.dtype) for s in info.result_shapes]
        call_c(entry, info, [0 if o is None else o.ctypes.data for o in outs],
               [0 if b is None else b.ctypes.data for b in buffers])     # a token: NULL, as in compiled code
        results = [None if o is None else np.array(from_buffer(o, s)) for o, s in zip(outs, info.result_shapes)]
    else:
        results = call_python(entry, info, [None if s.is_token else np.asarray(v)
                                            for v, s in zip(values, info.operand_shapes)])
    return tuple(results) if info.result_is_tuple else results[0]
