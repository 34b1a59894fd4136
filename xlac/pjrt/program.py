"""The program jax hands to ``PJRT_Client_Compile``, as StableHLO text.

jax's PJRT client sends format ``mlir``: a StableHLO portable artifact (MLIR
bytecode of the versioned VHLO dialect, at the StableHLO version the plugin
reports in its attributes) or plain MLIR bytecode/text.  xlac has no MLIR
bytecode reader of its own (docs/stablehlo.md), but the plugin runs inside
jax's process, so jaxlib's MLIR reads it: the artifact is deserialised to
StableHLO and printed as text (pretty form, no locations), which
``xlac.parse_stablehlo`` imports.  Only this module of the plugin touches
jaxlib's MLIR.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from . import capi
from .errors import PjrtError, unimplemented


@dataclass
class Program:
    """A program as xlac compiles it: StableHLO ``text``, the numbers of the
    entry function's parameters jax donates (``tf.aliasing_output`` or
    ``jax.buffer_donor``), and the memory kind of each parameter and result
    (``mhlo.memory_kind``; None where it names none: the device's memory)."""
    text: str
    donated: tuple
    parameter_kinds: tuple = ()
    result_kinds: tuple = ()


def stablehlo_version() -> tuple | None:
    """The StableHLO version of the jaxlib in this process (major, minor,
    patch): jax writes the program at this version when the plugin reports it."""
    try:
        from jax._src.lib.mlir.dialects import hlo
        return tuple(int(x) for x in hlo.get_current_version().split("."))
    except Exception:          # noqa: BLE001 - no jaxlib (or an older one): jax picks its default
        return None


def read(code: bytes, format: str) -> Program:
    """The Program of ``code`` in PJRT program format ``format``.

    Raises PjrtError: UNIMPLEMENTED for a format other than ``mlir`` (an
    ``hlo`` HloModuleProto), INVALID_ARGUMENT for code MLIR cannot read.
    """
    if format != "mlir":
        raise unimplemented(f"PJRT program format {format!r} (xlac reads 'mlir': StableHLO)")
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir
    from jax._src.lib.mlir.dialects import hlo

    context = jax_mlir.make_ir_context()
    with context:
        try:
            module = hlo.deserialize_portable_artifact(context, code)
        except Exception:       # noqa: BLE001 - not an artifact: plain bytecode or text
            try:
                module = ir.Module.parse(code)
            except Exception as exc:   # noqa: BLE001
                raise PjrtError(capi.INVALID_ARGUMENT, f"the program is not MLIR that jaxlib reads: "
                                                       f"{str(exc).splitlines()[0] if str(exc) else exc}")
        text = module.operation.get_asm(enable_debug_info=False)
        main = _main_attributes(module)
        args, results = (list(main[name]) if main and name in main else [] for name in ("arg_attrs", "res_attrs"))
        types = ir.FunctionType(ir.TypeAttr(main["function_type"]).value) if main else None
        axes = _mesh_axes(text)

        def sizes(kinds, attrs):
            return [_tile_bytes(str(t), a, axes) for t, a in zip(kinds, attrs + [{}] * len(kinds))] if types else []
        donated = _donated(args, sizes(types.inputs if types else [], args),
                           sizes(types.results if types else [], results))
        return Program(text, donated, tuple(_memory_kind(d) for d in args), tuple(_memory_kind(d) for d in results))


def _mesh_axes(text: str) -> dict:
    """``{axis: size}`` of every ``sdy.mesh`` of the program ``text``."""
    bodies = " ".join(re.findall(r"sdy\.mesh @\S+ = <\[(.*?)\]", text))
    return {a: int(n) for a, n in re.findall(r'"([^"]+)"\s*=\s*(\d+)', bodies)}


def _tile_bytes(tensor_type: str, attrs, axes: dict) -> tuple | None:
    """(the bytes of a value of ``tensor<4x8xf32>``, those of one device's
    tile of it with the Shardy sharding in ``attrs`` over mesh ``axes``, None
    when no sharding is written); None for what is not a tensor."""
    m = re.fullmatch(r"tensor<((?:\d+x)*)(complex<)?[a-z]*?(\d+)\w*>?>", tensor_type.strip())
    if m is None:
        return None
    dims = [int(d) for d in m.group(1).split("x") if d]
    bits = int(m.group(3)) * (2 if m.group(2) else 1)            # f32, bf16, f8E4M3FN, ui8, complex<f32>
    size = max(bits, 8) // 8
    whole = math.prod(dims) * size
    if "sdy.sharding" not in attrs:
        return whole, None
    split = re.search(r"\[(.*)\]", str(attrs["sdy.sharding"]).split("]>")[0] + "]")
    for d, group in enumerate(re.findall(r"\{([^{}]*)\}", split.group(1)) if split else []):
        if d < len(dims):
            ways = math.prod(axes.get(a, 1) for a in re.findall(r'"([^"]+)"', group))
            dims[d] = -(-dims[d] // ways)
    return whole, math.prod(dims) * size


def _donated(args: list, arg_bytes: list, result_bytes: list) -> tuple:
    """The parameters a call consumes: those jax aliases to a result
    (``tf.aliasing_output``), and the donors (``jax.buffer_donor``) XLA finds
    a result for, in order, among the results not aliased already — one
    whose tile on each device has the donor's size, which XLA:CPU's buffer
    can take (a result whose sharding is left to the compiler: one of the
    donor's whole size); a donor with none stays the caller's (XLA's buffer
    donors are offers, not promises: ``x @ x.T`` cannot reuse ``x``)."""
    def fits(donor, result) -> bool:
        if donor is None or result is None:
            return False
        return result[1] == (donor[1] if donor[1] is not None else donor[0]) if result[1] is not None \
            else result[0] == donor[0]
    claimed = {int(str(d["tf.aliasing_output"]).split(":")[0]) for d in args if "tf.aliasing_output" in d}
    donated = []
    for k, d in enumerate(args):
        if "tf.aliasing_output" in d:
            donated.append(k)
        elif "jax.buffer_donor" in d and k < len(arg_bytes):
            j = next((j for j, n in enumerate(result_bytes) if j not in claimed and fits(arg_bytes[k], n)), None)
            if j is not None:
                claimed.add(j)
                donated.append(k)
    return tuple(donated)


def _main_attributes(module):
    """The attributes of ``@main`` (None without one)."""
    for op in module.body.operations:
        attrs = op.operation.attributes
        if "sym_name" in attrs and str(attrs["sym_name"]).strip('"') == "main":
            return attrs
    return None


def _memory_kind(attrs) -> str | None:
    """An argument's or result's ``mhlo.memory_kind`` (``"pinned_host"``, ...), or None."""
    return str(attrs["mhlo.memory_kind"]).strip('"') if "mhlo.memory_kind" in attrs else None


def hlo_exportable(text: str) -> str:
    """``text`` with its asynchronous pairs inlined (:func:`_inline_async`) and
    Shardy's ops (``sdy.manual_computation``, ``sdy.sharding_constraint``,
    ``sdy.mesh``) in the form XLA's HLO export writes them (custom calls,
    ``mhlo.sharding``), through jaxlib: jaxlib turns the "optimized program" it
    is handed into HLO (``compiled.as_text()``), and its converter takes no
    ``sdy`` op.  A program without them, or one
    jaxlib cannot convert, is returned as it is."""
    if "async_start" in text:
        text = _inline_async(text)
    if "sdy." not in text:
        return text
    try:
        from jax._src.lib import _jax
        computation = _jax.mlir.mlir_module_to_xla_computation(text, use_tuple_args=False, return_tuple=False)
        return _jax.mlir.xla_computation_to_mlir_module(computation)
    except Exception:        # noqa: BLE001 - the program as it came is still the best description
        return text


def hlo_to_stablehlo(text: str) -> str:
    """HLO ``text`` as StableHLO, through jaxlib's HLO parser and converter
    (what jax hands a client; an "optimized program" of format ``mlir``).
    Needs jax; jaxlib's error when it cannot read the text."""
    from jax._src.lib import _jax
    from jaxlib import _hlo
    module = _hlo.hlo_module_from_text(text)
    computation = _hlo.XlaComputation(module.as_serialized_hlo_module_proto())
    return _jax.mlir.xla_computation_to_mlir_module(computation)


def hlo_as_stablehlo(text: str) -> str | None:
    """:func:`hlo_to_stablehlo`, or None when jaxlib cannot read ``text``."""
    try:
        return hlo_to_stablehlo(text)
    except Exception:        # noqa: BLE001 - then the program as jax gave it
        return None


def _inline_async(text: str) -> str:
    """``text`` with each ``stablehlo.async_start``/``async_done`` pair (jax's
    ``psum_start(...).done()``) replaced by the ops of its region, as xlac runs
    it: jaxlib converts neither back into HLO.  ``text`` as it is when MLIR
    cannot read it."""
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir
    try:
        with jax_mlir.make_ir_context():
            module = ir.Module.parse(text)
            for start in _ops_named(module.operation, "stablehlo.async_start"):
                op = start.operation
                body = op.regions[0].blocks[0]
                for arg, operand in zip(body.arguments, op.operands):
                    arg.replace_all_uses_with(operand)
                *ops, ret = list(body.operations)
                returned = list(ret.operation.operands)
                for inner in ops:
                    inner.operation.move_before(op)
                for done in [use.owner for use in op.results[0].uses]:
                    for result, value in zip(done.results, returned):
                        result.replace_all_uses_with(value)
                    done.erase()
                op.erase()
            return module.operation.get_asm(enable_debug_info=False)
    except Exception:        # noqa: BLE001 - the program as it came
        return text


def _ops_named(operation, name: str) -> list:
    """The operations called ``name`` nested anywhere in ``operation``, outer ones first."""
    found = []
    for region in operation.regions:
        for block in region.blocks:
            for op in block.operations:
                if op.operation.name == name:
                    found.append(op)
                found.extend(_ops_named(op.operation, name))
    return found

