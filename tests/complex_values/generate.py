"""Generates ``tests/complex_values/xla_cpu.npz``: what XLA:CPU computes for the
complex element-wise ops on special values, the table
``tests/test_complex_special_values.py`` holds xlac's evaluator and compiled code to.

Each part (real and imaginary) of an operand runs over ``PARTS`` (0, -0, finite,
+-inf, NaN, huge, tiny), so a unary op sees every pair and a binary op every pair of
pairs from ``BINARY_PARTS``.  The modules are HLO text (``HloModule ... ENTRY ...``),
compiled by jaxlib's XLA client for the CPU exactly as written (no jax.numpy
lowering in between), so the values are XLA's own for the HLO ops.  Keys:
``{op}_{c64|c128}`` for results, ``x_{dtype}``/``y_{dtype}`` (binary: ``bx_``/``by_``)
for operands.

jax is not a dependency of xlac: run this where jax is installed,

    /tmp/jaxenv/bin/python tests/complex_values/generate.py

and commit the file it writes.
"""
from pathlib import Path

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
from jax._src import xla_bridge  # noqa: E402
from jax._src.interpreters import mlir  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402
from jax._src.lib.mlir import ir  # noqa: E402

OUT = Path(__file__).resolve().parent / "xla_cpu.npz"
UNARY = {"sqrt": None, "log": None, "exponential": None, "abs": "real", "sign": None, "tanh": None}
BINARY = ("divide", "power")
COMPONENT = {"c64": ("f32", np.float32, 1e38, 1e-30), "c128": ("f64", np.float64, 1e307, 1e-300)}


def parts(dtype: str, binary: bool) -> list:
    _, _, huge, tiny = COMPONENT[dtype]
    inf, nan = float("inf"), float("nan")
    if binary:
        return [0.0, -0.0, 1.5, -2.0, inf, -inf, nan, huge, tiny]
    return [0.0, -0.0, 1.5, -2.0, 0.5, inf, -inf, nan, huge, -huge, tiny, -tiny]


def operands(dtype: str, binary: bool):
    ps = parts(dtype, binary)
    z = np.array([complex(a, b) for a in ps for b in ps], {"c64": np.complex64, "c128": np.complex128}[dtype])
    if not binary:
        return (z,)
    return np.repeat(z, len(z)), np.tile(z, len(z))


def run_hlo(text: str, *args) -> np.ndarray:
    module = xc.hlo.hlo_module_from_text(text)
    bytecode = xc._xla.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
    with mlir.make_ir_context():
        mlir_text = str(ir.Module.parse(bytecode))
    backend = xla_bridge.get_backend("cpu")
    exe = backend.compile_and_load(mlir_text, xc.DeviceList(tuple(backend.devices()[:1])), xc.CompileOptions())
    res = exe.execute_sharded([jax.device_put(a, backend.devices()[0]) for a in args])
    return np.asarray(res.disassemble_into_single_device_arrays()[0][0])


def module(op: str, dtype: str, n: int, arity: int, result: str) -> str:
    params = "\n".join(f"  p{i} = {dtype}[{n}] parameter({i})" for i in range(arity))
    args = ", ".join(f"p{i}" for i in range(arity))
    return f"HloModule {op}_{dtype}\n\nENTRY main {{\n{params}\n  ROOT r = {result}[{n}] {op}({args})\n}}\n"


def main() -> None:
    data = {}
    for dtype, (real, *_rest) in COMPONENT.items():
        (x,) = operands(dtype, False)
        data[f"x_{dtype}"] = x
        for op, result in UNARY.items():
            data[f"{op}_{dtype}"] = run_hlo(module(op, dtype, len(x), 1, real if result else dtype), x)
        bx, by = operands(dtype, True)
        data[f"bx_{dtype}"], data[f"by_{dtype}"] = bx, by
        for op in BINARY:
            data[f"{op}_{dtype}"] = run_hlo(module(op, dtype, len(bx), 2, dtype), bx, by)
    np.savez_compressed(OUT, jax_version=np.array(jax.__version__), **data)
    print(f"{len(data)} arrays written to {OUT}")


if __name__ == "__main__":
    main()
