"""Writes the text jax emits for its host callbacks (``jax.debug.print``,
``jax.pure_callback``, ``io_callback``): custom calls to
``@xla_ffi_python_cpu_callback`` whose Python function stays in the jax
process.  xlac refuses them by name (``tests/hlo/test_chlo_import.py``).
Run it where jax is installed (jax 0.10.2 wrote the committed files)::

    /tmp/jaxenv/bin/python tests/stablehlo_corpus/callbacks/generate.py
"""
from pathlib import Path

import jax
import numpy as np
from jax.experimental import io_callback

OUT = Path(__file__).resolve().parent


def debug_print(x):
    jax.debug.print("x={x}", x=x)
    return x * 2


def pure(x):
    return jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x) + 1


def io_ordered(x):
    return io_callback(np.cos, jax.ShapeDtypeStruct(x.shape, x.dtype), x, ordered=True) + 1


def main() -> None:
    x = np.arange(4, dtype=np.float32)
    for name, fn in (("debug_print", debug_print), ("pure_callback", pure), ("io_callback_ordered", io_ordered)):
        lowered = jax.jit(fn).lower(x)
        (OUT / f"{name}.mlir").write_text(lowered.as_text(), encoding="utf-8")
        (OUT / f"{name}.hlo").write_text(lowered.as_text(dialect="hlo"), encoding="utf-8")
    # the older GSPMD form: mhlo.sharding strings instead of Shardy's meshes
    jax.config.update("jax_use_shardy_partitioner", False)
    (OUT / "debug_print_gspmd.mlir").write_text(jax.jit(debug_print).lower(x).as_text(), encoding="utf-8")


if __name__ == "__main__":
    main()
