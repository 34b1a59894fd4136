"""Shardings of jax's multi-device programs: which piece of each global
argument and result every device holds.

jax writes them on ``@main``'s arguments and results: Shardy's
``sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>`` over a module-level
``sdy.mesh @mesh = <["x"=2]>`` (jax's default), or GSPMD's ``mhlo.sharding =
"{devices=[2,1]<=[2]}"`` (``jax_use_shardy_partitioner=False``).  Where jax
leaves a result's sharding to the compiler (no annotation), xlac takes the
sharding of what ``@main`` returns there when that says one — an
``sdy.manual_computation``'s ``out_shardings`` (a ``shard_map``'s
``out_specs``), an ``sdy.sharding_constraint``, an argument — and makes it
replicated otherwise (jax reads the choice back through
:func:`op_sharding_proto`).  An unannotated argument is replicated.  Devices
are the program's logical ids (the position in the device assignment), as in
XLA.

Accepted: any tiling of dimensions over mesh axes (several axes on one
dimension, axes left out = replicated over them), open dimensions (``?``:
xlac shards them no further), priorities, ``replicated={...}``; GSPMD's
``{replicated}`` and ``{devices=[...]...}`` with or without
``last_tile_dim_replicate``; meshes of devices in any order
(``device_ids=[3, 2, 1, 0]``: the program then runs unpartitioned).  Refused, with an UNIMPLEMENTED error naming the
value and the form: sub-axes (``"x":(1)2``), maximal (one-device) shardings, manual and tuple
GSPMD shardings, and tilings that do not divide a dimension evenly.
"""
from __future__ import annotations

import ctypes
import math
import re
import struct
from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError
from ..hlo.custom_call import unquote
from ..hlo.sharding import Sharding, assemble_tiles, parse_sharding
from ..hlo.stablehlo.syntax import DialectAttr, parse_mlir
from ..passes.shard_map import mesh_groups, sdy_to_sharding
from . import capi
from .compile_options import _encode_varint, _field
from .errors import PjrtError

# xla.OpSharding.Type
_REPLICATED, _OTHER, _UNREDUCED = 0, 3, 6


def replicated(num_devices: int) -> Sharding:
    return Sharding((1,), tuple(range(num_devices)), num_devices)


def entry_shardings(text: str, num_devices: int) -> tuple[list, list, bool]:
    """(parameter shardings, result shardings, whether any was written) of
    the StableHLO program ``text`` on ``num_devices`` devices."""
    syntax = parse_mlir(text)
    meshes = {name: body for name, body in syntax.attrs.get("sdy.meshes") or ()}
    funcs = {f.func["name"]: f.func for f in syntax.funcs if f.func}
    main = funcs.get("main") or next((f for f in funcs.values() if f["visibility"] == "public"), None)
    if main is None:
        return [], [], False
    found = False

    def read(attrs, type_, what: str) -> Sharding:
        nonlocal found
        attrs = attrs if isinstance(attrs, dict) else {}
        rank = len(type_[1]) if isinstance(type_, tuple) and type_[0] == "tensor" else None
        dims = tuple(type_[1]) if rank is not None else ()
        sdy, gspmd = attrs.get("sdy.sharding"), attrs.get("mhlo.sharding")
        if sdy is None and gspmd is None:
            return replicated(num_devices)
        found = True
        try:
            if sdy is not None:
                s = _from_sdy(sdy.body if isinstance(sdy, DialectAttr) else str(sdy), meshes, num_devices)
            else:
                s = _from_gspmd(str(gspmd), num_devices)
            _check_fits(s, dims, rank)
        except _Refused as e:
            raise UnsupportedError("sharding", f"{what}: {e}") from None
        return s

    args = [t for _, t, _ in main["args"]]
    params = [read(a, t, f"parameter {k}") for k, (a, t) in
              enumerate(zip(_padded(main.get("arg_attrs"), len(args)), args))]
    result_attrs = _padded(main.get("result_attrs"), len(main["results"]))
    returned = _returned_shardings(main, dict(zip((name for name, _, _ in main["args"]), main.get("arg_attrs") or [])),
                                   funcs)
    results = [read(a if _annotated(a) else returned[k], t, f"result {k}") for k, (a, t) in
               enumerate(zip(result_attrs, main["results"]))]
    return params, results, found


def _annotated(attrs) -> bool:
    return isinstance(attrs, dict) and ("sdy.sharding" in attrs or "mhlo.sharding" in attrs)


def _returned_shardings(main: dict, arg_attrs: dict, funcs: dict, depth: int = 0) -> list:
    """For each value ``@main`` returns, the attributes of the sharding it was
    given where it was made (``{"sdy.sharding": ...}``), or None; a value a
    ``call`` returns, the sharding its function returns it with (jax wraps a
    jitted function's body so)."""
    body = main.get("body")
    ops = getattr(body, "ops", body) or []
    made = {}                       # SSA value -> the sharding attributes it was made with

    def name(results: list, k: int) -> list:
        """The names op result ``k`` is read by (``%0`` alone, ``%0#k``)."""
        base = results[0].split(":")[0].split("#")[0] if results else ""
        return ([results[k]] if k < len(results) else []) + [f"{base}#{k}"] + ([base] if k == 0 else [])

    def record(results: list, shardings: list) -> None:
        for k, attrs in enumerate(shardings):
            for n in name(results, k):
                made.setdefault(n, attrs)
    values = []
    for op in ops:
        callee = next((it.value for it in op.items if it.kind == "symbol"), None) \
            if op.name in ("call", "func.call") else None
        if callee in funcs and depth < 16:
            record(op.results, _returned_shardings(funcs[callee], {}, funcs, depth + 1))
        elif op.name == "sdy.manual_computation":
            record(op.results, [_sdy_attrs(t) for t in _top_level(op.attrs.get("out_shardings", "").strip()[1:-1])])
        elif op.name == "sdy.sharding_constraint" and op.results:
            record(op.results, [_sdy_attrs(op.attrs.get("sharding"))])
        elif op.name in ("func.return", "return"):
            values = op.operands or [it.value for it in op.items if it.kind == "value"]
    out = []
    for v in values:
        if v in arg_attrs:
            out.append(arg_attrs[v] if _annotated(arg_attrs[v]) else None)
        else:
            out.append(made.get(v))
    return out + [None] * (len(main["results"]) - len(out))


def _sdy_attrs(text) -> dict | None:
    """``<@mesh, [...]>`` as the attributes of a value written with it."""
    return {"sdy.sharding": DialectAttr("#sdy.sharding", str(text).strip()[1:-1])} if text else None


def _top_level(text: str) -> list:
    """``<a, [..]>, <b, [..]>`` split at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "<[{(":
            depth += 1
        elif c in ">]})":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def _padded(attrs, n: int) -> list:
    attrs = list(attrs or [])
    return attrs + [None] * (n - len(attrs))


class _Refused(Exception):
    """A sharding form xlac does not run (the message says which)."""


def _refuse(detail: str) -> _Refused:
    return _Refused(detail)


def _mesh(name: str, meshes: dict, num_devices: int) -> tuple[dict, list | None]:
    """The mesh ``{axis: size}`` named ``name`` (``@mesh``) or written inline
    (``mesh<[...]>``), and its ``device_ids`` (the device at each mesh
    position, row-major) when they are not in order, else None."""
    if name.startswith("@"):
        key = name[1:].strip('"')
        if key not in meshes:
            raise _refuse(f"mesh {name} is not defined")
        body = meshes[key]
    else:
        body = name[len("mesh"):] if name.startswith("mesh") else name
    m = re.fullmatch(r"\s*<\s*\[(.*?)\]\s*(?:,\s*device_ids\s*=\s*\[([\d,\s]*)\])?\s*>\s*", body, re.S)
    if m is None:
        raise _refuse(f"mesh {body}")
    axes = {a: int(n) for a, n in re.findall(r'"([^"]+)"\s*=\s*(\d+)', m.group(1))}
    size = math.prod(axes.values())
    ids = None
    if m.group(2) is not None:
        ids = [int(v) for v in m.group(2).replace(" ", "").split(",") if v]
        if not axes:
            raise _refuse(f"a maximal sharding (mesh {body}: the whole value on one device)")
        if sorted(ids) != list(range(size)):
            raise _refuse(f"mesh {body}: device ids that are not each of 0..{size - 1} once")
        if ids == list(range(size)):
            ids = None
    if axes and size != num_devices:
        raise _refuse(f"mesh {body} has {size} devices, the program runs on {num_devices}")
    return axes, ids


@dataclass(frozen=True)
class UnreducedSharding(Sharding):
    """A value ``unreduced`` over mesh axes (jax's explicit partial sums):
    every device holds a part, the tiles of the global value being the sums
    of the parts of the devices that differ only in those axes.
    ``parts[d]``: device ``d``'s index along them.  xlac makes a result's
    parts the whole tile on the first device along them and zeros on the
    others (jax lets only linear operations touch an unreduced value, so any
    parts summing to the value compute the same)."""

    parts: tuple = ()

    def tile(self, array: np.ndarray, device: int) -> np.ndarray:
        tile = super().tile(array, device)
        return tile if self.parts[device] == 0 else np.zeros_like(tile)

    def assemble_part(self, tiles: list, dims, u: int) -> np.ndarray:
        """Part ``u`` of the global value: the tiles of the devices whose
        index along the unreduced axes is ``u`` (``tiles[d]`` of device
        ``d``) put together."""
        order = []
        for k in range(0, len(self.devices), self.replicas):       # part u's holder of each tile first
            order += sorted(self.devices[k:k + self.replicas], key=lambda d: self.parts[d] != u)
        return assemble_tiles(tiles, Sharding(self.tile_dims, tuple(order), self.replicas), dims)

    def assemble_sum(self, tiles: list, dims) -> np.ndarray:
        """The global value from every device's part: the parts summed in order."""
        total = None
        for u in sorted(set(self.parts)):
            value = self.assemble_part(tiles, dims, u)
            total = value.copy() if total is None else total + value
        return total


def _from_sdy(body: str, meshes: dict, num_devices: int) -> Sharding:
    """``@mesh, [{"x"}, {}]`` (the body of ``#sdy.sharding<...>``), with
    ``replicated={...}`` (nothing more) or ``unreduced={...}`` after it."""
    m = re.fullmatch(r"\s*(@[\w.$-]+|@\"[^\"]*\"|mesh\s*<.*?>)\s*,\s*\[(.*)\]\s*(.*?)\s*", body, re.S)
    if m is None:
        raise _refuse(f"#sdy.sharding<{body}>")
    mesh, ids = _mesh(m.group(1), meshes, num_devices)
    rest = m.group(3).strip()
    unreduced = []
    for part in filter(None, (p.strip() for p in re.split(r",\s*(?=\w+\s*=)", rest.lstrip(",")))):
        if part.startswith("unreduced"):
            unreduced += re.findall(r'"([^"]+)"', part)
            if any(a not in mesh for a in unreduced) or re.search(r'"\s*:', part):
                raise _refuse(f"#sdy.sharding<{body}>: unreduced over axes not in the mesh, or sub-axes")
        elif not part.startswith("replicated"):          # explicitly replicated axes change nothing
            raise _refuse(f"#sdy.sharding<{body}>: {part.split('=')[0].strip()}")
    spec = []
    for group, _priority in re.findall(r"\{([^{}]*)\}(p\d+)?", m.group(2)):
        axes = []
        for token in filter(None, (t.strip() for t in group.split(","))):
            if token == "?":                # open: xlac splits the dimension no further
                continue
            a = re.fullmatch(r'"([^"]+)"', token)
            if a is None:
                raise _refuse(f"#sdy.sharding<{body}>: sub-axis {token}")
            if a.group(1) not in mesh:
                raise _refuse(f"#sdy.sharding<{body}>: axis {token} is not in the mesh")
            axes.append(a.group(1))
        spec.append(axes)
    if not mesh:
        return replicated(num_devices)
    s = sdy_to_sharding(spec, mesh)
    parts = _parts(mesh, unreduced) if unreduced else None
    if ids is not None:                 # mesh position -> device id
        s = Sharding(s.tile_dims, tuple(ids[p] for p in s.devices), s.replicas)
        if parts is not None:
            parts = tuple(parts[ids.index(d)] for d in range(len(ids)))
    if parts is None:
        return s
    return UnreducedSharding(s.tile_dims, s.devices, s.replicas, parts)


def _parts(mesh: dict, axes: list) -> tuple:
    """Each device's index along mesh ``axes`` (row-major device order)."""
    parts = [0] * math.prod(mesh.values())
    for group in mesh_groups(mesh, axes):
        for index, device in enumerate(group):
            parts[device] = index
    return tuple(parts)


def _from_gspmd(text: str, num_devices: int) -> Sharding:
    """``{devices=[2,1]<=[2]}``, ``{replicated}``; maximal, manual and tuple refused."""
    s = text.strip()
    if re.match(r"\{\s*maximal\b", s):
        raise _refuse(f"{s}: a maximal sharding (the whole value on one device)")
    try:
        sharding = parse_sharding(s, num_devices)
    except (UnsupportedError, ValueError):          # manual, tuple, subgroup forms
        raise _refuse(s) from None
    if sorted(sharding.devices) != list(range(num_devices)):
        raise _refuse(f"{s}: not every one of the {num_devices} devices holds a tile")
    return sharding


def _check_fits(s: Sharding, dims: tuple, rank: int | None) -> None:
    """A tiling has one entry per dimension of a value of known sizes (an
    uneven split has tiles of ``ceil(n / t)``, the last ones shorter, as
    XLA's and jax's)."""
    if s.is_replicated:
        return
    if rank is None or len(s.tile_dims) != rank:
        raise _refuse(f"{_describe(s)} for a value of rank {rank}")
    for d, (size, t) in enumerate(zip(dims, s.tile_dims)):
        if size is None:
            raise _refuse(f"{_describe(s)}: dimension {d} of unknown size split into {t} tiles")


def _describe(s: Sharding) -> str:
    tail = f",{s.replicas}" if s.replicas > 1 else ""
    return f"tiles [{','.join(map(str, s.tile_dims))}{tail}]"


def local_shape(s: Sharding, global_shape: tuple, device: int) -> tuple:
    """The shape of ``device``'s tile of an array of ``global_shape``: tiles
    of ``ceil(n / t)``, the last ones shorter (or empty) where ``t`` does not
    divide ``n``."""
    if s.is_replicated:
        return tuple(global_shape)
    shape = []
    for g, t, k in zip(global_shape, s.tile_dims, s.tile_index(device)):
        size = -(-g // t)
        shape.append(max(0, min(g, (k + 1) * size) - k * size))
    return tuple(shape)


def op_sharding_proto(s: Sharding) -> bytes:
    """``s`` as a serialized ``xla.OpSharding`` (what PJRT's shardings extension returns)."""
    if isinstance(s, UnreducedSharding):
        return _unreduced_proto(s)
    if s.is_replicated:
        return _field(1, 0, _encode_varint(_REPLICATED))
    dims = list(s.tile_dims) + ([s.replicas] if s.replicas > 1 else [])
    out = _field(1, 0, _encode_varint(_OTHER))
    out += _packed(3, dims) + _packed(4, s.devices)
    if s.replicas > 1:
        out += _field(6, 0, _encode_varint(1))
    return out


def _unreduced_proto(s: UnreducedSharding) -> bytes:
    """XLA's form of an unreduced sharding (as jax makes it): the tile
    dimensions, then a subgroup dimension of the parts (``last_tile_dims``
    UNREDUCED) and one of the replicas of each part (REPLICATED) when there
    are any; each tile's devices by part, then replica.  Unreduced over
    every device: type UNREDUCED alone."""
    parts = len(set(s.parts))
    if parts == len(s.devices):
        return _field(1, 0, _encode_varint(_UNREDUCED))
    devices = []
    for k in range(0, len(s.devices), s.replicas):
        devices += sorted(s.devices[k:k + s.replicas], key=lambda d: s.parts[d])   # (stable: replicas in order)
    subgroups = [(_UNREDUCED, parts)] + ([(_REPLICATED, s.replicas // parts)] if s.replicas > parts else [])
    dims = list(s.tile_dims) + [n for _, n in subgroups]
    return (_field(1, 0, _encode_varint(_OTHER)) + _packed(3, dims) + _packed(4, devices)
            + _packed(8, [t for t, _ in subgroups]))


def _packed(number: int, values) -> bytes:
    data = b"".join(_encode_varint(v) for v in values)
    return _field(number, 2, _encode_varint(len(data)) + data)


# -- jax.debug.inspect_array_sharding ------------------------------------------------------
class _InspectArgs(ctypes.Structure):
    """jaxlib's ``JAX_InspectSharding_Callback_Args`` (xla/python/inspect_sharding.h)."""

    _fields_ = [("sharding_spec", ctypes.c_void_p), ("sharding_spec_size", ctypes.c_size_t),
                ("error_txt", ctypes.c_char_p), ("error_scratch", ctypes.c_void_p),
                ("free_error", ctypes.c_void_p)]


_INSPECT_CALL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(_InspectArgs))
_FREE_ERROR = ctypes.CFUNCTYPE(None, ctypes.POINTER(_InspectArgs))


def call_inspect_sharding(inst, s: Sharding) -> None:
    """Hand ``s``, the sharding an ``InspectSharding`` custom call's operand is
    partitioned with, to jax's callback, as XLA's partitioner does: the call's
    ``backend_config`` holds jaxlib's ``JAX_InspectSharding_Callback`` (a
    function and its data, 16 bytes, in this process), which takes a
    serialized ``xla.OpSharding``; an error the callback reports is the
    compilation's."""
    text = unquote(str(inst.attrs.get("backend_config", "")))
    try:
        raw = text.encode("latin-1")
    except UnicodeEncodeError:
        raw = b""
    if len(raw) != 2 * ctypes.sizeof(ctypes.c_void_p):
        raise UnsupportedError("custom-call", f"instruction {inst.name}: InspectSharding's backend_config is "
                                              f"{len(raw)} bytes, not jaxlib's callback")
    call, data = struct.unpack("<QQ", raw)
    spec = op_sharding_proto(s)
    held = ctypes.create_string_buffer(spec, len(spec))
    args = _InspectArgs(ctypes.cast(held, ctypes.c_void_p), len(spec), None, None, None)
    _INSPECT_CALL(call)(data, ctypes.byref(args))
    if args.error_txt:
        message = args.error_txt.decode("utf-8", "replace")
        if args.free_error:
            _FREE_ERROR(args.free_error)(ctypes.byref(args))
        raise PjrtError(capi.INTERNAL, f"inspect_array_sharding callback (instruction {inst.name}): {message}")
