"""Generates ``promotion.json``: the dtype (and weak type) jax gives the result of
each numpy-style operator and method of a traced value, for every pair of xlac's
element types and Python scalars, or the exception jax raises.
``tests/frontend/test_promotion_table.py`` holds xlac's tracer to it.

jax is not a dependency of xlac: run this where jax is installed,

    python tests/frontend/jax_dtypes/generate.py

and commit the JSON it writes.  xlac keeps 64-bit arrays 64-bit (as jax with
``jax_enable_x64``) while its Python scalars are 32-bit (as jax without it), so an
operation with a 64-bit operand is asked of jax with x64 enabled, any other of jax
without (each in its own process: the flag is read at start-up).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "promotion.json"

#: xlac's element types by HLO name -> numpy/ml_dtypes name; Python scalars last.
DTYPES = {
    "pred": "bool", "s8": "int8", "s16": "int16", "s32": "int32", "s64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
    "c64": "complex64", "c128": "complex128",
}
#: Narrow types: only ``+`` against everything (jax promotes them to nothing else).
NARROW = {
    "s1": "int1", "s2": "int2", "s4": "int4", "u1": "uint1", "u2": "uint2", "u4": "uint4",
    "f4e2m1fn": "float4_e2m1fn", "f8e3m4": "float8_e3m4", "f8e4m3": "float8_e4m3",
    "f8e4m3fn": "float8_e4m3fn", "f8e4m3b11fnuz": "float8_e4m3b11fnuz",
    "f8e4m3fnuz": "float8_e4m3fnuz", "f8e5m2": "float8_e5m2", "f8e5m2fnuz": "float8_e5m2fnuz",
    "f8e8m0fnu": "float8_e8m0fnu",
}
#: Python scalars, passed as arguments (weakly typed traced values, bool strong).
SCALARS = {"int": 3, "float": 2.0, "complex": 1 + 2j, "bool": True}
WIDE = {"s64", "u64", "f64", "c128"}

BINARY = ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>", "<", "==", "@"]
UNARY = {
    "-x": lambda x: -x, "~x": lambda x: ~x, "abs": abs,
    "sum": lambda x: x.sum(), "prod": lambda x: x.prod(), "max": lambda x: x.max(),
    "min": lambda x: x.min(), "mean": lambda x: x.mean(), "any": lambda x: x.any(),
    "all": lambda x: x.all(), "x**3": lambda x: x ** 3, "x**-2": lambda x: x ** -2,
    "x**0": lambda x: x ** 0, "x+-1": lambda x: x + -1, "x+1.5": lambda x: x + 1.5,
    "2**x": lambda x: 2 ** x, "x//2": lambda x: x // 2, "x%2": lambda x: x % 2,
    "x>>1": lambda x: x >> 1, "x<<1": lambda x: x << 1, "x/2": lambda x: x / 2,
}


def names(wide: bool) -> list:
    return [n for n in DTYPES if (n in WIDE) == wide]


def _result(fn, *args) -> str:
    """``dtype`` or ``dtype~`` (weakly typed) of ``fn(*args)`` in jax, or ``!Exception``."""
    import warnings

    import jax
    warnings.simplefilter("ignore")
    try:
        out = jax.eval_shape(fn, *args)
    except Exception as e:  # noqa: BLE001 - the class is the datum
        return "!" + type(e).__name__
    return _name(out.dtype) + ("~" if out.weak_type else "")


def _name(dt) -> str:
    import numpy as np
    return {np.dtype(v).name: k for k, v in {**DTYPES, **NARROW}.items()}[np.dtype(dt).name]


def _arg(label: str, matrix: bool):
    import jax
    import ml_dtypes  # noqa: F401 - registers the narrow types' names with numpy
    import numpy as np
    if label in SCALARS:
        return SCALARS[label]
    return jax.ShapeDtypeStruct((2, 2) if matrix else (2,), np.dtype({**DTYPES, **NARROW}[label]))


def _binary(op: str, a: str, b: str) -> str:
    if op == "@" and (a in SCALARS or b in SCALARS):
        return ""
    fn = eval(f"lambda x, y: x {op} y")  # noqa: S307 - a fixed operator list
    return _result(fn, _arg(a, op == "@"), _arg(b, op == "@"))


def worker(wide: bool) -> dict:
    """The table rows jax computes in this process's x64 mode."""
    operands = list(DTYPES) + list(SCALARS)
    out = {"binary": {}, "unary": {}, "narrow": {}}
    for op in BINARY:
        for a in operands:
            for b in operands:
                if (a in WIDE or b in WIDE) == wide:
                    out["binary"].setdefault(op, {}).setdefault(a, {})[b] = _binary(op, a, b)
    for name, fn in UNARY.items():
        for a in operands:
            if (a in WIDE) == wide:
                out["unary"].setdefault(name, {})[a] = _result(fn, _arg(a, False))
    if not wide:
        for a in list(NARROW) + operands:
            for b in list(NARROW) + operands:
                if (a in NARROW or b in NARROW) and a not in WIDE and b not in WIDE:
                    out["narrow"].setdefault(a, {})[b] = _binary("+", a, b)
    return out


def merge(parts: list) -> dict:
    table: dict = {}
    for part in parts:
        for section, rows in part.items():
            for k, row in rows.items():
                dst = table.setdefault(section, {}).setdefault(k, {})
                for k2, v in row.items():
                    if isinstance(v, dict):
                        dst.setdefault(k2, {}).update(v)
                    else:
                        dst[k2] = v
    return table


def main() -> None:
    if len(sys.argv) == 2 and sys.argv[1] in ("x32", "x64"):
        json.dump(worker(sys.argv[1] == "x64"), sys.stdout)
        return
    parts = []
    for mode in ("x32", "x64"):
        env = dict(os.environ, JAX_ENABLE_X64="1" if mode == "x64" else "0", JAX_PLATFORMS="cpu")
        res = subprocess.run([sys.executable, __file__, mode], env=env, check=True, capture_output=True, encoding="utf-8")
        parts.append(json.loads(res.stdout))
    import jax
    table = merge(parts)
    operands = list(DTYPES) + list(SCALARS)
    narrow = list(NARROW) + [a for a in operands if a not in WIDE]
    out = {
        "jax": jax.__version__,
        "format": "each row: the results of `row OP column` for the columns in order, space-separated; "
                  "a dtype, with ~ when weakly typed, !Exception when jax raises, - when not asked",
        "operands": operands,
        "binary": {op: {a: _row(rows[a], operands) for a in operands} for op, rows in table["binary"].items()},
        "unary": {name: _row(row, operands) for name, row in table["unary"].items()},
        "narrow_operands": narrow,
        "narrow_add": {a: _row(table["narrow"].get(a, {}), narrow) for a in narrow},
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


def _row(results: dict, columns: list) -> str:
    return " ".join(results.get(c) or "-" for c in columns)

if __name__ == "__main__":
    main()
