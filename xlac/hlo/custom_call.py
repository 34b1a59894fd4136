"""What a ``custom-call`` instruction says, read once for every stage.

A custom call names a *target* (``custom_call_target="..."``) that runs
outside the compiler.  Its attributes, as XLA prints them:

* ``api_version``: how the target is called — ``API_VERSION_ORIGINAL``
  (the default; on the CPU ``void f(void *out, const void **in)``),
  ``API_VERSION_STATUS_RETURNING`` (``..., XlaCustomCallStatus *status)``),
  ``API_VERSION_STATUS_RETURNING_UNIFIED`` (``..., const char *opaque,
  size_t opaque_len, XlaCustomCallStatus *status)``) and
  ``API_VERSION_TYPED_FFI`` (XLA's FFI: typed buffers and named attributes);
* ``backend_config``: the *opaque* bytes of the older APIs (a quoted string),
  or, for the typed FFI, a dictionary of attributes written as MLIR does
  (``{mode = 86 : ui8, uplo = 76 : ui8}``): :func:`ffi_attributes`;
* ``operand_layout_constraints={f32[4,4]{0,1}, ...}``: the layout each
  operand must have when the target reads it (:func:`operand_layouts`); the
  result's layout is the instruction's own shape.

The targets xlac provides itself are jax's LAPACK calls on the CPU,
``lapack_{s,d,c,z}<routine>_ffi`` (:data:`LAPACK_ROUTINES`): a
:class:`LapackTarget` says which routine and element type a name means, and
:func:`check_lapack` checks an instruction's operands and results against
what jax emits for it (shape inference calls it); and jaxlib's
``tridiagonal_solve_perturbed_ffi`` (:data:`TRIDIAGONAL_SOLVE_PERTURBED`,
:func:`check_tridiagonal_solve`) and ``cpu_csr_sparse_dense_ffi``
(:data:`CSR_SPARSE_DENSE`, :func:`check_csr_sparse_dense`), which the
op-expander turns into HLO (:data:`EXPANDED_TARGETS`).  Every other target is
looked up when the module is compiled or evaluated
(``xlac.register_custom_call``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UnsupportedError
from .attributes import Raw
from ..shape import C64, C128, F32, F64, S32, S64, PrimitiveType, Shape, parse_shape, parse_shape_prefix

__all__ = ["API_VERSIONS", "target_of", "is_sharding_annotation", "SHARDING_ANNOTATIONS", "api_version_of", "opaque_of", "ffi_attributes",
           "operand_layouts", "LapackTarget", "lapack_target", "LAPACK_ROUTINES", "check_lapack",
           "is_builtin", "unquote", "parse_mlir_attributes", "lapack_options", "lapack_attributes",
           "check_custom_call", "quote", "format_mlir_attributes", "in_place_operand", "host_callback_error",
           "MATRIX_OPERAND", "matrix_operand", "SINGLE_RESULT",
           "check_no_host_callback", "topk_of", "xla_lapack_call", "is_no_op", "NO_OP_TARGETS", "SHARDING_GROUP", "INSPECT_SHARDING",
           "PLACEMENT_ANNOTATIONS", "UNSUPPORTED_XLA_TARGETS",
           "TRIDIAGONAL_SOLVE_PERTURBED", "check_tridiagonal_solve", "CSR_SPARSE_DENSE", "check_csr_sparse_dense",
           "EXPANDED_TARGETS", "approx_topk_of"]

#: XLA's CustomCallApiVersion numbers, by the name HLO text uses.
API_VERSIONS = {"API_VERSION_UNSPECIFIED": 0, "API_VERSION_ORIGINAL": 1, "API_VERSION_STATUS_RETURNING": 2,
                "API_VERSION_STATUS_RETURNING_UNIFIED": 3, "API_VERSION_TYPED_FFI": 4}
API_VERSION_NAMES = {v: k for k, v in API_VERSIONS.items()}


def unquote(text: str) -> str:
    """The content of a C-style quoted string (``"a\\"b"`` -> ``a"b``); text
    that is not quoted is returned as it is."""
    text = text.strip()
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return text
    body = text[1:-1]
    if "\\" not in body:
        return body
    out, k = [], 0
    simple = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'", "0": "\0"}
    while k < len(body):
        ch = body[k]
        if ch == "\\" and k + 1 < len(body):
            nxt = body[k + 1]
            if nxt == "x" and re.match(r"[0-9a-fA-F]{2}", body[k + 2:k + 4]):
                out.append(chr(int(body[k + 2:k + 4], 16)))
                k += 4
                continue
            out.append(simple.get(nxt, nxt))
            k += 2
            continue
        out.append(ch)
        k += 1
    return "".join(out)


def _attrs(x) -> dict:
    """An instruction's attributes, or the attribute dict itself."""
    return x if isinstance(x, dict) else x.attrs


def target_of(x) -> str:
    """The ``custom_call_target`` (unquoted) of an instruction or attribute dict."""
    return unquote(str(_attrs(x).get("custom_call_target", "")))


def api_version_of(x) -> int:
    """The API version as XLA's number (ORIGINAL when not written)."""
    value = _attrs(x).get("api_version")
    if value is None:
        return API_VERSIONS["API_VERSION_ORIGINAL"]
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    name = str(value).strip()
    if name not in API_VERSIONS:
        raise ValueError(f"unknown api_version={name} (one of {', '.join(API_VERSIONS)})")
    return API_VERSIONS[name]


def opaque_of(x) -> bytes:
    """The opaque bytes the target gets: ``backend_config``'s string (unquoted),
    or the attribute dictionary's text as written for the typed FFI."""
    value = _attrs(x).get("backend_config")
    if value is None:
        return b""
    return unquote(str(value)).encode("utf-8", "surrogateescape")


def ffi_attributes(x) -> dict:
    """The typed-FFI attributes of ``backend_config={name = value : type, ...}`` as
    Python values ({} when there are none); ValueError when the dictionary
    does not parse."""
    value = _attrs(x).get("backend_config")
    if value is None:
        return {}
    text = str(value).strip()
    if not text.startswith("{"):
        return {}
    try:
        return parse_mlir_attributes(text)
    except ValueError as e:
        raise ValueError(f"backend_config {text!r}: {e}") from None


def operand_layouts(x) -> list | None:
    """The shapes (with layouts) of ``operand_layout_constraints``, or None;
    ValueError when they do not parse."""
    value = _attrs(x).get("operand_layout_constraints")
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [parse_shape(str(s)) if not isinstance(s, Shape) else s for s in value]
    text = str(value).strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"operand_layout_constraints={text} is not a list of shapes")
    body, pos, out = text[1:-1], 0, []
    try:
        while body[pos:].strip():
            shape, pos = parse_shape_prefix(body, pos)
            out.append(shape)
            rest = body[pos:].lstrip()
            if rest.startswith(","):
                pos = len(body) - len(rest) + 1
            elif rest:
                raise ValueError(f"expected ',' at {rest[:20]!r}")
    except ValueError as e:
        raise ValueError(f"operand_layout_constraints={text}: {e}") from None
    return out


# ---------------------------------------------------------------------------------------
# MLIR attribute dictionaries (the typed FFI's backend_config)
# ---------------------------------------------------------------------------------------

_INT_TYPE = re.compile(r"[ui]\d+|index")
_FLOAT_TYPE = re.compile(r"f\d+|bf16")


class _Reader:
    def __init__(self, text: str):
        self.text, self.pos = text, 0

    def ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
            self.pos += 1

    def peek(self, s: str) -> bool:
        self.ws()
        return self.text.startswith(s, self.pos)

    def take(self, s: str) -> bool:
        if self.peek(s):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str) -> None:
        if not self.take(s):
            raise ValueError(f"expected {s!r} at column {self.pos + 1}")

    def match(self, pattern: str) -> str | None:
        self.ws()
        m = re.compile(pattern).match(self.text, self.pos)
        if m is None:
            return None
        self.pos = m.end()
        return m.group(0)


def parse_mlir_attributes(text: str) -> dict:
    """``{a = 1 : i32, b = "s", c = array<i64: 1, 2>, d = true, e = 1.5 : f32}`` -> dict."""
    r = _Reader(text)
    value = _dictionary(r)
    r.ws()
    if r.pos != len(r.text):
        raise ValueError(f"unexpected text at column {r.pos + 1}")
    return value


def _dictionary(r: _Reader) -> dict:
    r.expect("{")
    out = {}
    if r.take("}"):
        return out
    while True:
        name = r.match(r'"(?:[^"\\]|\\.)*"|[A-Za-z_][\w.$-]*')
        if name is None:
            raise ValueError(f"expected an attribute name at column {r.pos + 1}")
        name = unquote(name)
        out[name] = _value(r) if r.take("=") else True      # a unit attribute
        if r.take("}"):
            return out
        r.expect(",")


def _value(r: _Reader):
    if r.peek("{"):
        return _dictionary(r)
    if r.peek('"'):
        return unquote(r.match(r'"(?:[^"\\]|\\.)*"'))
    if r.take("array<"):
        r.match(r"[a-z0-9]+")
        items = []
        if r.take(":"):
            while not r.peek(">"):
                items.append(_number(r))
                if not r.take(","):
                    break
        r.expect(">")
        return tuple(items)
    if r.take("["):
        items = []
        while not r.take("]"):
            items.append(_value(r))
            if not r.take(","):
                r.expect("]")
                break
        return items
    word = r.match(r"true|false|unit")
    if word is not None:
        return word != "false"
    return _number(r)


def _number(r: _Reader):
    tok = r.match(r"[-+]?(?:0x[0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|inf|nan)")
    if tok is None:
        raise ValueError(f"expected a value at column {r.pos + 1}")
    is_float = any(c in tok for c in ".eEn") and not tok.lower().startswith(("0x", "-0x"))
    value = float(tok) if is_float else int(tok, 0)
    if r.take(":"):
        ty = r.match(r"[a-z]+[0-9]*")
        if ty and _FLOAT_TYPE.fullmatch(ty):
            value = float(value)
        elif ty and _INT_TYPE.fullmatch(ty):
            value = int(value)
    return value


# ---------------------------------------------------------------------------------------
# jax's LAPACK targets
# ---------------------------------------------------------------------------------------

_PREFIX_TYPES = {"s": F32, "d": F64, "c": C64, "z": C128}
_REAL_OF = {F32: F32, F64: F64, C64: F32, C128: F64}

#: routine -> the prefixes it exists with (BLAS trsm included: jax calls it as a LAPACK target).
LAPACK_ROUTINES = {
    "potrf": "sdcz", "trsm": "sdcz", "getrf": "sdcz", "geqrf": "sdcz", "orgqr": "sd", "ungqr": "cz",
    "syevd": "sd", "heevd": "cz", "gesdd": "sdcz", "gesvd": "sdcz", "geev": "sdcz", "gees": "sdcz",
    "gehrd": "sdcz", "sytrd": "sd", "hetrd": "cz", "ormqr": "sd", "unmqr": "cz",
    "geqp3": "sdcz", "gtsv": "sdcz",
}

#: routine -> the operand that is the (batched) matrix of the call: its rank is the
#: matrices' rank, its batch the call's batch, and (but ``geev``) the first result is a
#: copy of it updated in place (``gtsv``: results are copies of dl, d, du, b, in that
#: order).  Operand 0 for the routines not listed.
MATRIX_OPERAND = {"trsm": 1, "ormqr": 2, "unmqr": 2, "gtsv": 3}

#: The routines with one result (an array, not a tuple).
SINGLE_RESULT = ("trsm", "orgqr", "ungqr", "ormqr", "unmqr")

_LAPACK_NAME = re.compile(r"lapack_([sdcz])([a-z][a-z0-9]*)_ffi")


@dataclass(frozen=True)
class LapackTarget:
    """A jax LAPACK target: ``lapack_<prefix><routine>_ffi``."""

    name: str
    prefix: str                 # s, d, c, z
    routine: str                # potrf, trsm, ...

    @property
    def dtype(self) -> PrimitiveType:
        return _PREFIX_TYPES[self.prefix]

    @property
    def real(self) -> PrimitiveType:
        """The real type of the element type (singular values, eigenvalues)."""
        return _REAL_OF[self.dtype]

    @property
    def is_complex(self) -> bool:
        return self.prefix in "cz"

    @property
    def symbol(self) -> str:
        """The Fortran symbol of the routine (``spotrf_``)."""
        return f"{self.prefix}{self.routine}_"


def lapack_target(name: str) -> LapackTarget | None:
    """The LAPACK target ``name`` means, or None when it is not one."""
    m = _LAPACK_NAME.fullmatch(name)
    if m is None:
        return None
    prefix, routine = m.groups()
    if prefix not in LAPACK_ROUTINES.get(routine, ""):
        return None
    return LapackTarget(name, prefix, routine)


# XLA's own targets that stand for an HLO operation; XLA rewrites them before it compiles
# (TopkDecomposer, ShardingRemover, QrExpander) and so does xlac (``op-expander``, and the
# evaluator): ``TopK`` is ``topk`` (:func:`topk_of`); ``Sharding`` only annotates how its
# operand is laid out over devices, so its value is the operand's; ``Qr`` and
# ``ProductOfElementaryHouseholderReflectors`` are LAPACK's geqrf and orgqr/ungqr
# (:func:`xla_lapack_call`: the same results, in the same Householder form); jax's
# ``dce_sink`` (``lax.dce_sink``: it keeps a value alive through MLIR's dead-code
# elimination) and ``control_dep`` (``jax.experimental.control_deps``: its first
# operand computed before its second, a hint to XLA's scheduler) have no result
# and, as XLA:CPU, do nothing; nor does Shardy's ``xla.sdy.ShardingGroup`` (values
# to be sharded alike: what sharding propagation reads) once propagation is done.

#: XLA's QR targets: the LAPACK routine for real and for complex types.
_XLA_LAPACK = {"Qr": ("geqrf", "geqrf"), "ProductOfElementaryHouseholderReflectors": ("orgqr", "ungqr")}


#: Custom calls that only say how their operand is sharded (``with_sharding_constraint``,
#: a result's sharding in Shardy's HLO export) or ask what it is (jax's
#: ``inspect_array_sharding``): their value is their operand's.
INSPECT_SHARDING = "InspectSharding"
#: Custom calls that say in which memory a value lives (jax's
#: ``annotate_device_placement`` of ``jax.device_put(x, memory_kind=...)`` and
#: ``compute_on``, XLA's host-offloading ``MoveToHost`` / ``MoveToDevice``): a
#: CPU has one memory, so their value is their operand's too.
PLACEMENT_ANNOTATIONS = ("annotate_device_placement", "MoveToHost", "MoveToDevice")
SHARDING_ANNOTATIONS = ("Sharding", "xla.sdy.FuncResultSharding", INSPECT_SHARDING) + PLACEMENT_ANNOTATIONS


def is_sharding_annotation(inst) -> bool:
    """Whether ``inst`` is a sharding (or placement) annotation of one operand, of its shape."""
    return (target_of(inst) in SHARDING_ANNOTATIONS and len(inst.operands) == 1
            and inst.operands[0].shape.dimensions == inst.shape.dimensions)


#: Shardy's sharding group: its operand is to be sharded as the group's others are.
SHARDING_GROUP = "xla.sdy.ShardingGroup"
#: jax's custom calls of no result that compute nothing (see above).
NO_OP_TARGETS = ("dce_sink", "control_dep", SHARDING_GROUP)


#: XLA's own targets xlac does not take yet, and why (the error names the feature
#: rather than asking for a registration).
UNSUPPORTED_XLA_TARGETS = {
    "LayoutConstraint": "a layout constraint (jax's with_sharding_constraint to a Format with a "
                        "concrete Layout): xlac's arrays are row-major, other layouts are not "
                        "supported yet",
}


def is_no_op(inst) -> bool:
    """Whether ``inst`` is one of :data:`NO_OP_TARGETS`' custom calls (no
    results: an empty tuple)."""
    shape = inst.shape
    return target_of(inst) in NO_OP_TARGETS and shape.is_tuple and not shape.tuple_shapes


def xla_lapack_call(inst) -> dict | None:
    """The attributes of the call to jax's LAPACK target that computes XLA's own target
    ``inst`` (``Qr``: ``lapack_?geqrf_ffi``; ``ProductOfElementaryHouseholderReflectors``:
    ``lapack_?orgqr_ffi`` / ``lapack_?ungqr_ffi``), or None for another target.
    ``UnsupportedError`` for an element type LAPACK has no routine for."""
    target = target_of(inst)
    if target not in _XLA_LAPACK:
        return None
    et = inst.operands[0].shape.element_type if inst.operands else None
    letter = {F32: "s", F64: "d", C64: "c", C128: "z"}.get(et)
    if letter is None:
        raise UnsupportedError(f"custom-call {target} of {et}", f"instruction {inst.name}: LAPACK has "
                               "f32, f64, c64 and c128 routines")
    routine = _XLA_LAPACK[target][letter in "cz"]
    attrs = {k: v for k, v in _attrs(inst).items() if k not in ("backend_config", "api_version")}
    attrs["custom_call_target"] = Raw(quote(f"lapack_{letter}{routine}_ffi"))
    attrs["api_version"] = "API_VERSION_TYPED_FFI"
    return attrs


def topk_of(inst) -> dict:
    """The ``topk`` attributes (``k``, ``largest``) of XLA's ``TopK`` custom call ``inst``:
    ``(T[..., k], s32[..., k]) custom-call(T[..., n]), custom_call_target="TopK"``, with an
    optional comparator (``called_computations`` / ``to_apply``) that compares its two
    parameters ``GT`` (the largest, also without one) or ``LT`` (the smallest).
    ``UnsupportedError`` for another comparator, ``ValueError`` for other shapes."""
    shape = inst.shape
    if not (shape.is_tuple and len(shape.tuple_shapes) == 2 and len(inst.operands) == 1
            and shape.tuple_shapes[1].element_type == S32):
        raise ValueError(f"custom-call {inst.name} (TopK) must take one array and give (values, s32 "
                         f"indices), not {shape}")
    largest = True
    for comp in inst.called_computations():
        root = comp.root
        params = comp.parameters
        if root.opcode != "compare" or len(params) < 2 or list(root.operands) != params[:2] \
                or str(root.attrs.get("direction")) not in ("GT", "LT"):
            raise UnsupportedError("custom-call TopK with a comparator other than compare(p0, p1), "
                                   "direction=GT or LT", f"instruction {inst.name}")
        largest = str(root.attrs.get("direction")) == "GT"
    return {"k": shape.tuple_shapes[0].dimensions[-1], "largest": largest}


def approx_topk_of(inst) -> dict:
    """What XLA's ``ApproxTopK`` custom call ``inst`` (``jax.lax.approx_max_k`` /
    ``approx_min_k``) computes off TPU, XLA's ``ApproxTopKFallback``: the ``n``
    array operands (values, then what travels with them: jax's iota) sorted
    along ``reduction_dim`` with the called comparator (``2n`` scalar
    parameters), each cut to its result's size there (``top_k``, or the
    approximate output size when not ``aggregate_to_topk``); the ``n`` scalar
    operands after them (the init values) are not read.  Returns
    ``{"dimension": d, "arrays": n}``; ValueError naming the rule broken."""
    attrs = ffi_attributes(inst)
    ops, shape = list(inst.operands), inst.shape
    results = list(shape.tuple_shapes) if shape.is_tuple else [shape]
    n = len(ops) // 2
    if len(ops) != 2 * n or n == 0 or len(results) != n:
        raise ValueError(f"custom-call {inst.name} (ApproxTopK) takes n arrays and n init values and gives n "
                         f"arrays, not {len(ops)} operand(s) -> {len(results)} result(s)")
    if "reduction_dim" not in attrs:
        raise ValueError(f"custom-call {inst.name} (ApproxTopK) needs reduction_dim in its backend_config")
    dims = ops[0].shape.dimensions
    d = int(attrs["reduction_dim"])
    d = d + len(dims) if d < 0 else d
    if not 0 <= d < len(dims):
        raise ValueError(f"custom-call {inst.name} (ApproxTopK): reduction_dim {attrs['reduction_dim']} of an "
                         f"array of rank {len(dims)}")
    for k, (o, r) in enumerate(zip(ops[:n], results)):
        want = dims[:d] + (r.dimensions[d] if r.rank == len(dims) else -1,) + dims[d + 1:]
        if o.shape.dimensions != dims or r.dimensions != want or r.dimensions[d] > dims[d] \
                or r.element_type != o.shape.element_type:
            raise ValueError(f"custom-call {inst.name} (ApproxTopK): operand {k} {o.shape} and result {k} {r} "
                             f"must be arrays of {ops[0].shape.dimensions} and its type, cut along dimension {d}")
    comps = inst.called_computations()
    if len(comps) != 1 or len(comps[0].parameters) != 2 * n:
        raise ValueError(f"custom-call {inst.name} (ApproxTopK) needs one comparator of {2 * n} parameters")
    return {"dimension": d, "arrays": n}


def is_builtin(target: str) -> bool:
    """Whether xlac provides ``target`` itself (jax's LAPACK targets)."""
    return lapack_target(target) is not None


#: The targets jax's host callbacks (``jax.debug.print``, ``jax.pure_callback``,
#: ``io_callback``, ``buffer_callback``) lower to: ``xla_ffi_python_cpu_callback``,
#: its ``_partitioned_`` and GPU forms, and the older ``xla_python_cpu_callback``.
_HOST_CALLBACK = re.compile(r"xla_(?:ffi_(?:partitioned_)?|buffer_)?python_(?:cpu|gpu)_callback")


def host_callback_error(target: str, where: str = "") -> UnsupportedError | None:
    """The refusal of a custom call to one of jax's host-callback targets, or None
    for another target.  Such a call names, by an index in its backend config, a
    Python function of the jax process that traced the program: nothing another
    process (xlac's) can call, whatever is registered."""
    if not _HOST_CALLBACK.fullmatch(target):
        return None
    return UnsupportedError(f"host callback (jax.debug.print / pure_callback): custom_call @{target}",
                            where or "the callback's Python function stays in the jax process that "
                                     "traced the program")


def check_no_host_callback(module) -> None:
    """``UnsupportedError`` naming the first host-callback custom call of ``module``."""
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode == "custom-call":
                error = host_callback_error(target_of(inst), f"instruction {inst.name}")
                if error is not None:
                    raise error


def _char(attrs: dict, name: str, allowed: str, default: str | None = None) -> str:
    """A character attribute (jax passes them as ui8 codes: ``uplo = 76 : ui8`` is 'L')."""
    value = attrs.get(name)
    if value is None:
        if default is None:
            raise ValueError(f"missing attribute {name!r}")
        return default
    ch = chr(value) if isinstance(value, int) else str(value)[:1]
    if ch not in allowed:
        raise ValueError(f"attribute {name}={value!r} ({ch!r}) must be one of {', '.join(allowed)}")
    return ch


def lapack_options(t: LapackTarget, attrs: dict) -> dict:
    """The routine's options from the instruction's FFI attributes, as LAPACK
    characters and integers; ValueError naming the bad attribute."""
    r = t.routine
    if r in ("potrf", "syevd", "heevd", "sytrd", "hetrd"):
        out = {"uplo": _char(attrs, "uplo", "LU", "L")}
        if r in ("syevd", "heevd"):
            out["mode"] = _char(attrs, "mode", "VN", "V")
        return out
    if r == "trsm":
        return {"side": _char(attrs, "side", "LR", "L"), "uplo": _char(attrs, "uplo", "LU", "L"),
                "trans": _char(attrs, "trans_x", "NTC", "N"), "diag": _char(attrs, "diag", "NU", "N")}
    if r in ("gesdd", "gesvd"):
        mode = _char(attrs, "mode", "ASNO", "A")
        if mode == "O":
            raise UnsupportedError("custom-call", f"target {t.name}: mode 'O' (overwrite a with U)")
        return {"mode": mode}
    if r == "geev":
        return {"jobvl": _char(attrs, "compute_left", "VN", "N"), "jobvr": _char(attrs, "compute_right", "VN", "V")}
    if r == "gees":
        sort = _char(attrs, "sort", "NS", "N")
        if sort != "N":
            raise UnsupportedError("custom-call", f"target {t.name}: sort='S' (ordering eigenvalues needs a "
                                                  "select function, which jax does not pass either)")
        return {"mode": _char(attrs, "mode", "VN", "V"), "sort": sort}
    if r == "gehrd":
        return {"low": int(attrs.get("low", 1)), "high": attrs.get("high")}
    if r in ("ormqr", "unmqr"):
        return {"side": "L" if _bool(attrs, "left", True) else "R",
                "trans": ("C" if t.is_complex else "T") if _bool(attrs, "transpose", False) else "N"}
    return {}


def _bool(attrs: dict, name: str, default: bool) -> bool:
    """A boolean attribute (jax passes ``left = true``)."""
    value = attrs.get(name, default)
    if isinstance(value, str):
        if value.lower() not in ("true", "false"):
            raise ValueError(f"attribute {name}={value!r} must be true or false")
        return value.lower() == "true"
    return bool(value)


def _batch_matrix(op: Shape, what: str, square: bool = False) -> tuple:
    if not op.is_array or op.rank < 2:
        raise ValueError(f"{what} must be an array of rank >= 2 (matrices), got {op}")
    m, n = op.dimensions[-2:]
    if square and m != n:
        raise ValueError(f"{what} must be square matrices, got {op}")
    return tuple(op.dimensions[:-2]), m, n


def _expected_results(t: LapackTarget, operands: list, opts: dict, given: list) -> list:
    """The result shapes (no layouts) jax's target produces for ``operands``."""
    dt, real, r = t.dtype, t.real, t.routine
    info = None
    if r == "trsm":
        if len(operands) not in (2, 3):
            raise ValueError(f"takes 2 operands (a, b) or 3 (a, b, alpha), got {len(operands)}")
        ab, k, k2 = _batch_matrix(operands[0], "operand 0 (a)", square=True)
        bb, m, n = _batch_matrix(operands[1], "operand 1 (b)")
        if ab != bb:
            raise ValueError(f"a and b must have the same batch dimensions, got {operands[0]} and {operands[1]}")
        if k != (m if opts["side"] == "L" else n):
            raise ValueError(f"a ({k}x{k}) does not fit b ({m}x{n}) on side {opts['side']}")
        if len(operands) == 3 and (operands[2].dimensions != () or operands[2].element_type is not dt):
            raise ValueError(f"alpha (operand 2) must be a {dt.name.lower()} scalar, got {operands[2]}")
        return [Shape(dt, operands[1].dimensions)]
    if r in ("orgqr", "ungqr"):
        if len(operands) != 2:
            raise ValueError(f"takes 2 operands (a, tau), got {len(operands)}")
        b, m, n = _batch_matrix(operands[0], "operand 0 (a)")
        tau = operands[1]
        if not tau.is_array or tau.dimensions[:-1] != b or tau.rank != len(b) + 1 or tau.dimensions[-1] > min(m, n):
            raise ValueError(f"tau must be [batch..., k] with k <= min(m, n), got {tau}")
        return [Shape(dt, operands[0].dimensions)]
    if r in ("ormqr", "unmqr"):
        if len(operands) != 3:
            raise ValueError(f"takes 3 operands (a, tau, c), got {len(operands)}")
        b, ma, na = _batch_matrix(operands[0], "operand 0 (a)")
        cb, mc, nc = _batch_matrix(operands[2], "operand 2 (c)")
        tau = operands[1]
        for k, op in enumerate(operands):
            if op.element_type is not dt:
                raise ValueError(f"operand {k} must be {dt.name.lower()}, got {op}")
        if cb != b:
            raise ValueError(f"a and c must have the same batch dimensions, got {operands[0]} and {operands[2]}")
        if tau.dimensions[:-1] != b or tau.rank != len(b) + 1 or tau.dimensions[-1] > min(ma, na):
            raise ValueError(f"tau must be [batch..., k] with k <= min(m, n) of a, got {tau}")
        side = opts["side"]
        if ma != (mc if side == "L" else nc):
            raise ValueError(f"a has {ma} rows but c is {mc}x{nc}: on side {side} they must be c's "
                             f"{'rows' if side == 'L' else 'columns'}")
        return [Shape(dt, operands[2].dimensions)]
    if r == "gtsv":
        if len(operands) != 4:
            raise ValueError(f"takes 4 operands (dl, d, du, b), got {len(operands)}")
        b, m, nrhs = _batch_matrix(operands[3], "operand 3 (b)")
        for k, op in enumerate(operands):
            if op.element_type is not dt:
                raise ValueError(f"operand {k} must be {dt.name.lower()}, got {op}")
        for k, what in enumerate(("dl", "d", "du")):
            if operands[k].dimensions != b + (m,):
                raise ValueError(f"{what} (operand {k}) must be [batch..., m] = {list(b + (m,))} as b, "
                                 f"got {operands[k]}")
        return [Shape(dt, b + (m,))] * 3 + [Shape(dt, operands[3].dimensions), Shape(S32, b)]
    if r == "geqp3":
        if len(operands) != 2:
            raise ValueError(f"takes 2 operands (a, jpvt), got {len(operands)}")
        b, m, n = _batch_matrix(operands[0], "operand 0 (a)")
        jpvt = operands[1]
        if jpvt.element_type is not S32 or jpvt.dimensions != b + (n,):
            raise ValueError(f"jpvt (operand 1) must be s32[batch..., n] = s32{list(b + (n,))}, got {jpvt}")
        return [Shape(dt, operands[0].dimensions), Shape(S32, b + (n,)), Shape(dt, b + (min(m, n),))]
    if len(operands) != 1:
        raise ValueError(f"takes 1 operand, got {len(operands)}")
    square = r not in ("getrf", "geqrf", "gesdd", "gesvd")
    b, m, n = _batch_matrix(operands[0], "the operand", square=square)
    a = Shape(dt, operands[0].dimensions)
    info = Shape(S32, b)
    k = min(m, n)

    def vec(t_, size):
        return Shape(t_, b + (size,))
    if r == "potrf":
        return [a, info]
    if r == "getrf":
        return [a, vec(S32, k), info]
    if r == "geqrf":
        return [a, vec(dt, k)]
    if r in ("syevd", "heevd"):
        return [a, vec(real, n), info]
    if r in ("gesdd", "gesvd"):
        mode = opts["mode"]
        full = (Shape(dt, b + (m, m)), Shape(dt, b + (n, n)))
        thin = (Shape(dt, b + (m, k)), Shape(dt, b + (k, n)))
        uv = full if mode == "A" else thin
        if mode == "N" and len(given) == 5 and given[2].compatible(full[0]) and given[3].compatible(full[1]):
            uv = full
        return [a, vec(real, k), uv[0], uv[1], info]
    if r == "geev":
        c = Shape(C64 if real is F32 else C128, b + (n, n))
        w = [vec(dt, n), vec(dt, n)] if not t.is_complex else [vec(dt, n)]
        return w + [c, c, info]
    if r == "gees":
        w = [vec(dt, n), vec(dt, n)] if not t.is_complex else [vec(dt, n)]
        return [a, a] + w + [info, info]
    if r == "gehrd":
        return [a, vec(dt, max(n - 1, 0)), info]
    if r in ("sytrd", "hetrd"):
        return [a, vec(real, n), vec(real, max(n - 1, 0)), vec(dt, max(n - 1, 0)), info]
    raise AssertionError(r)


def check_lapack(t: LapackTarget, operands: list, result: Shape, attrs: dict) -> None:
    """Check a LAPACK custom call against jax's conventions: operand element
    types, matrix ranks, square matrices where the routine needs them, and the
    result (a tuple unless the routine has one result).  ValueError with the
    rule broken."""
    for k, op in enumerate(operands):
        if not op.is_array:
            raise ValueError(f"operand {k} must be an array, got {op}")
    if operands and operands[0].element_type is not t.dtype:
        raise ValueError(f"operand 0 must be {t.dtype.name.lower()}, got {operands[0]}")
    opts = lapack_options(t, attrs)
    given = list(result.tuple_shapes) if result.is_tuple else [result]
    want = _expected_results(t, operands, opts, given)
    single = t.routine in SINGLE_RESULT
    if single == result.is_tuple or len(given) != len(want) or \
            not all(g.is_array and g.compatible(w) for g, w in zip(given, want)):
        shown = want[0] if single else Shape.tuple(want)
        raise ValueError(f"the result must be {shown.to_string(print_layout=False)}, got {result}")
    if t.routine == "gehrd":
        n = operands[0].dimensions[-1]
        high = opts["high"] if opts["high"] is not None else n
        if not 1 <= opts["low"] <= max(1, high) <= max(1, n):
            raise ValueError(f"need 1 <= low <= high <= n, got low={opts['low']}, high={high}, n={n}")


def matrix_operand(inst) -> int | None:
    """The index of the (batched) matrix operand of a call of jax's LAPACK
    targets (:data:`MATRIX_OPERAND`), None for other targets."""
    t = lapack_target(target_of(inst))
    return None if t is None else MATRIX_OPERAND.get(t.routine, 0)


def in_place_operand(x) -> int | None:
    """The operand whose buffer a LAPACK custom call may factor in place (its
    first result is a copy of it, jax's ``output_to_operand_aliasing``): the
    matrix (``trsm``: the right-hand sides; ``ormqr``/``unmqr``: c); None for other targets and ``geev``."""
    t = lapack_target(target_of(x))
    if t is None or t.routine == "geev":
        return None
    return 0 if t.routine == "gtsv" else MATRIX_OPERAND.get(t.routine, 0)


def lapack_attributes(x) -> dict:
    """The LAPACK options of a LAPACK custom call (see :func:`lapack_options`)."""
    t = lapack_target(target_of(x))
    return lapack_options(t, ffi_attributes(x))


def check_custom_call(operands: list, attrs: dict, result: Shape) -> Shape:
    """The shape rule of ``custom-call``: the result is the one written (it
    cannot be inferred); the API version must be known, the layout
    constraints one array shape per operand, of its dimensions and type
    (``token[]`` for a token operand), and
    a LAPACK target's operands and results what jax emits.  ValueError with the
    rule broken, naming the target."""
    target = target_of(attrs)
    if not target:
        raise ValueError("needs custom_call_target")
    api_version_of(attrs)
    layouts = operand_layouts(attrs)
    if layouts is not None:
        if len(layouts) != len(operands):
            raise ValueError(f"target {target!r}: operand_layout_constraints has {len(layouts)} shape(s) "
                             f"for {len(operands)} operand(s)")
        for k, (want, op) in enumerate(zip(layouts, operands)):
            token = want.is_token and op.is_token             # io_callback's ordering token: no layout
            if not token and (not want.is_array or not op.is_array or not want.compatible(op)):
                raise ValueError(f"target {target!r}: operand_layout_constraints[{k}] is {want}, "
                                 f"but operand {k} is {op}")
    t = lapack_target(target)
    if t is not None:
        try:
            check_lapack(t, operands, result, ffi_attributes(attrs))
        except ValueError as e:
            raise ValueError(f"target {target}: {e}") from None
    expanded = EXPANDED_TARGETS.get(target)
    if expanded is not None:
        expanded(operands, result)
    return result


#: jaxlib's CPU target of ``tridiagonal_solve(..., perturb_singular=True)`` (not LAPACK:
#: ``xlac/tridiagonal_reference.py``); xlac expands it into HLO (``passes/tridiagonal_expander.py``).
TRIDIAGONAL_SOLVE_PERTURBED = "tridiagonal_solve_perturbed_ffi"


def check_tridiagonal_solve(operands: list, result: Shape) -> None:
    """Operands ``dl, d, du`` of ``T[..., n]`` and ``b`` of ``T[..., n, k]``, result
    ``T[..., n, k]``, ``T`` one of f32, f64, c64, c128 (jaxlib's kernel); ValueError
    naming the target and the rule broken."""
    name = TRIDIAGONAL_SOLVE_PERTURBED
    shapes = ", ".join(str(o) for o in operands)
    if len(operands) != 4 or not all(o.is_array for o in operands) or not result.is_array:
        raise ValueError(f"target {name}: takes arrays dl, d, du, b and gives one array, not ({shapes}) -> {result}")
    dl, d, du, b = operands
    et = b.element_type
    if et not in (F32, F64, C64, C128) or any(o.element_type != et for o in operands) or result.element_type != et:
        raise ValueError(f"target {name}: dl, d, du, b and the result must have one element type of f32, f64, "
                         f"c64, c128, not ({shapes}) -> {result}")
    if b.rank < 2 or any(o.dimensions != b.dimensions[:-1] for o in (dl, d, du)):
        raise ValueError(f"target {name}: dl, d and du must be b's shape without its last dimension "
                         f"(b: [..., n, k]), not ({shapes})")
    if result.dimensions != b.dimensions:
        raise ValueError(f"target {name}: the result must have b's shape {b.dimensions}, not {result}")


#: jaxlib's CPU target of a BCSR matrix times a dense vector or matrix (``bcsr @ x``
#: with ``jax.experimental.sparse``: Eigen's row-major sparse product, not LAPACK);
#: xlac expands it into HLO (``passes/sparse_expander.py``).
CSR_SPARSE_DENSE = "cpu_csr_sparse_dense_ffi"

_CSR_TYPES = (S32, S64, F32, F64, C64, C128)


def check_csr_sparse_dense(operands: list, result: Shape) -> None:
    """Operands ``data`` ``T[nse]``, ``indptr`` ``I[rows + 1]``, ``indices`` ``I[nse]``
    and ``rhs`` ``T[cols]`` or ``T[cols, n]``, result ``T[rows]`` or ``T[rows, n]``
    (``rhs``'s rank), ``T`` one of s32, s64, f32, f64, c64, c128 and ``I`` s32 or
    s64 (jaxlib's kernel); ValueError naming the target and the rule broken."""
    name = CSR_SPARSE_DENSE
    shapes = ", ".join(str(o) for o in operands)
    if len(operands) != 4 or not all(o.is_array for o in operands) or not result.is_array:
        raise ValueError(f"target {name}: takes arrays data, indptr, indices, rhs and gives one array, "
                         f"not ({shapes}) -> {result}")
    data, indptr, indices, rhs = operands
    et = data.element_type
    if et not in _CSR_TYPES or rhs.element_type != et or result.element_type != et:
        raise ValueError(f"target {name}: data, rhs and the result must have one element type of "
                         f"{', '.join(t.value for t in _CSR_TYPES)}, not ({shapes}) -> {result}")
    if indptr.element_type not in (S32, S64) or indices.element_type != indptr.element_type:
        raise ValueError(f"target {name}: indptr and indices must have one element type, s32 or s64, not ({shapes})")
    if data.rank != 1 or indptr.rank != 1 or indices.dimensions != data.dimensions or indptr.dimensions[0] < 1:
        raise ValueError(f"target {name}: data and indices must be [nse] and indptr [rows + 1], not ({shapes})")
    rows = indptr.dimensions[0] - 1
    want = (rows,) + rhs.dimensions[1:]
    if rhs.rank not in (1, 2) or result.dimensions != want:
        raise ValueError(f"target {name}: rhs must be [cols] or [cols, n] and the result [rows] or [rows, n] "
                         f"(rows = {rows} from indptr), not ({shapes}) -> {result}")


#: The targets of jaxlib's own CPU kernels that xlac expands into HLO, with their shape rules.
EXPANDED_TARGETS = {TRIDIAGONAL_SOLVE_PERTURBED: check_tridiagonal_solve, CSR_SPARSE_DENSE: check_csr_sparse_dense}


def quote(text: str) -> str:
    """``text`` as an HLO string literal (the inverse of :func:`unquote`)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _format_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value} : i64"
    if isinstance(value, float):
        return f"{value!r} : f64"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, dict):
        return format_mlir_attributes(value)
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return "array<i64" + (": " + ", ".join(str(v) for v in value) if value else "") + ">"
    raise TypeError(f"attribute value {value!r}: expected bool, int, float, str, dict or a sequence of ints")


def format_mlir_attributes(attrs: dict) -> str:
    """The typed FFI's ``backend_config`` text of ``attrs`` (ints as i64, floats as f64)."""
    parts = []
    for name, value in sorted(attrs.items()):
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][\w.$-]*", name):
            raise ValueError(f"attribute name {name!r} is not an identifier")
        parts.append(f"{name} = {_format_value(value)}")
    return "{" + ", ".join(parts) + "}"
