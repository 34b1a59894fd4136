"""xlac: XLA for the CPU, in Python.

Build a computation with :class:`XlaBuilder` and :mod:`xlac.ops` (or parse HLO
text with :func:`parse_hlo`), then :func:`jit` it into native code through
llvmlite, or run it through the numpy reference :func:`evaluate` (every device
of a multi-device module: :func:`evaluate_replicated`).  Or write a Python
function with :mod:`xlac.lax` (jax.lax's names) and numpy-style operators and
decorate it with ``@xlac.jit``: it is traced per signature and compiled.

The public API (``xlac.__all__``; the heavier parts load on first use):

* building: ``XlaBuilder``, ``XlaOp``, ``XlaComputation``, ``ops`` (XLA's
  operations by their snake_case names), ``shape``/``Shape``/``Layout``,
  element types ``PRED, S8 .. U64, F16, BF16, F32, F64, C64, C128, ...``;
* HLO text: ``parse_hlo`` (an ``HloModule``; ``module.to_text()``), StableHLO
  text: ``parse_stablehlo``;
* Python functions: ``jit`` as a decorator, ``lax``;
* compiling and running: ``jit`` (an ``Executable``: ``exe(*arrays)``,
  ``exe.cost_analysis()``, ``exe.memory_analysis()``, ``exe.compile_stats``),
  ``evaluate``/``evaluate_replicated`` (numpy reference), ``compile_aot``
  (an object file and a C header), ``clear_caches``,
  ``set_memory_cache_limit``, ``register_custom_call``/``unregister_custom_call``;
* errors: ``ShapeError``, ``UnsupportedError``, ``HloParseError``,
  ``CustomCallError``, ``CollectiveError``.

The command line is ``xlac`` (``xlac --help``); the user guide is
``docs/guide.md`` of the source tree.
"""
from .errors import CustomCallError, HloParseError, ShapeError, UnsupportedError
from .shape import (BF16, C64, C128, F16, F32, F64, PRED, S8, S16, S32, S64, TOKEN, TUPLE, U8, U16,
                    U32, U64, Layout, PrimitiveType, Shape, shape)
from .shape import (F4E2M1FN, F8E3M4, F8E4M3, F8E4M3B11FNUZ, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ,
                    F8E8M0FNU, S1, S2, S4, U1, U2, U4)

__version__ = "0.1.0"


#: Names loaded on first use (module, attribute; None: the module itself), so
#: ``import xlac`` stays cheap and a missing piece fails only where it is needed.
_LAZY = {
        "XlaBuilder": ("frontend.builder", "XlaBuilder"),
        "XlaOp": ("frontend.builder", "XlaOp"),
        "XlaComputation": ("frontend.builder", "XlaComputation"),
        "ops": ("frontend.ops", None),
        "parse_hlo": ("hlo.parser", "parse_hlo"),
        "parse_stablehlo": ("hlo.stablehlo", "parse_stablehlo"),
        "HloModule": ("hlo.ir", "HloModule"),
        "evaluate": ("evaluator", "evaluate"),
        "evaluate_replicated": ("evaluator_replicated", "evaluate_replicated"),
        "CollectiveError": ("errors", "CollectiveError"),
        "jit": ("function_jit", "jit"),
        "lax": ("lax", None),
        "Executable": ("executable", "Executable"),
        "compile_aot": ("aot", "compile_aot"),
        "clear_caches": ("program", "clear_caches"),
        "set_memory_cache_limit": ("program", "set_memory_cache_limit"),
        "register_custom_call": ("custom_calls", "register_custom_call"),
        "unregister_custom_call": ("custom_calls", "unregister_custom_call"),
        "MemoryAnalysis": ("executable", "MemoryAnalysis"),
        "bench": ("bench", None),
}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'xlac' has no attribute {name!r}")
    import importlib
    mod_name, attr = _LAZY[name]
    mod = importlib.import_module(f".{mod_name}", __name__)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value
    return value


def __dir__() -> list:
    """The loaded names and the lazy ones: ``dir(xlac)`` lists ``jit``, ``ops``, ... before their first use."""
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["XlaBuilder", "XlaOp", "XlaComputation", "ops", "parse_hlo", "parse_stablehlo", "HloModule", "evaluate",
           "evaluate_replicated", "CollectiveError", "CustomCallError", "register_custom_call",
           "unregister_custom_call", "compile_aot", "MemoryAnalysis", "__version__",
           "jit", "lax", "Executable", "clear_caches", "set_memory_cache_limit", "Shape", "Layout",
           "PrimitiveType", "shape", "ShapeError", "UnsupportedError", "HloParseError", "PRED", "S8",
           "S16", "S32", "S64", "U8", "U16", "U32", "U64", "F16", "BF16", "F32", "F64", "C64", "C128",
           "TUPLE", "TOKEN", "S1", "S2", "S4", "U1", "U2", "U4", "F4E2M1FN", "F8E3M4", "F8E4M3", "F8E4M3FN",
           "F8E4M3B11FNUZ", "F8E4M3FNUZ", "F8E5M2", "F8E5M2FNUZ", "F8E8M0FNU"]
