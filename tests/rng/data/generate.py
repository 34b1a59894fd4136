"""Generates ``tests/rng/data/``: what XLA:CPU (through jax) computes for
``rng-bit-generator``, the references ``tests/rng/test_rng_bit_generator.py``
checks xlac against bit for bit.

For each algorithm (``rng_three_fry``, ``rng_philox``, ``rng_default``) and
output type (u8, u16, u32, u64) one module, ``NAME.hlo``, is the HLO text jax
emits for ``jax.lax.rng_bit_generator`` of every shape in ``SHAPES`` from one
``u64[2]`` state (jax's x64 mode, so the state is the parameter itself);
``NAME.npz`` holds, for every state in ``STATES``, the state (``state_K``)
and the module's outputs (``out_K_J``: the new state and the bits of shape J,
in the order of the result tuple).  ``philox_state3_*`` are the same for a
``u64[3]`` Philox state, which jax's API does not take: their StableHLO is
compiled by jax's XLA client directly and the equivalent HLO text is written
beside it.  ``jax_rng_uniform.hlo`` is what ``jax.lax.rng_uniform`` lowers to
(``rng`` instructions; XLA seeds them at random, so only the text is kept).

jax is not a dependency of xlac: run this in a scratch environment that has it,

    python3 -m venv /tmp/jaxvenv && /tmp/jaxvenv/bin/pip install jax
    /tmp/jaxvenv/bin/python tests/rng/data/generate.py

and commit the files it writes (``jax.__version__`` is recorded in
``manifest.json``).
"""
import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)
from jax._src import xla_bridge  # noqa: E402
from jax._src.lib import xla_client  # noqa: E402

OUT = Path(__file__).resolve().parent
ALGORITHMS = {"three_fry": jax.lax.RandomAlgorithm.RNG_THREE_FRY,
              "philox": jax.lax.RandomAlgorithm.RNG_PHILOX,
              "default": jax.lax.RandomAlgorithm.RNG_DEFAULT}
DTYPES = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
# Scalars, odd sizes, sizes that are not multiples of 2 or 4, size-1 and
# empty dimensions, 2-D and 3-D.
SHAPES = [(), (1,), (2,), (3,), (4,), (5,), (7,), (13,), (3, 5), (4, 6), (5, 2), (1, 9), (9, 1),
          (2, 3, 5), (5, 1, 3), (3, 3, 3), (2, 4, 3), (0,), (2, 0)]
M64 = (1 << 64) - 1
STATES = [np.array(s, np.uint64) for s in (
    [0, 0], [1, 2], [0x0123456789ABCDEF, 0xFEDCBA9876543210],
    [M64, M64 - 3],                  # counters wrap around 2**64
    [42, M64 - 1])]                  # Philox: the low counter word carries
STATES3 = [np.array(s, np.uint64) for s in (
    [1, 2, 3], [0x0123456789ABCDEF, 0xFEDCBA9876543210, 7], [5, M64 - 1, M64], [0, 0, 0])]


def bits_of_every_shape(algorithm, dtype):
    def f(state):
        outs = [jax.lax.rng_bit_generator(state, s, dtype, algorithm=algorithm) for s in SHAPES]
        return tuple(x for pair in outs for x in pair)
    return jax.jit(f)


def save(name: str, hlo: str, runs: dict) -> dict:
    (OUT / f"{name}.hlo").write_text(hlo, encoding="utf-8")
    np.savez(OUT / f"{name}.npz", **runs)
    return {"name": name, "states": sum(k.startswith("state_") for k in runs)}


def jax_cases() -> list:
    cases = []
    for alg_name, alg in ALGORITHMS.items():
        for dt_name, dt in DTYPES.items():
            f = bits_of_every_shape(alg, dt)
            hlo = f.lower(STATES[0]).as_text(dialect="hlo")
            runs = {}
            for k, state in enumerate(STATES):
                runs[f"state_{k}"] = state
                for j, out in enumerate(f(state)):
                    runs[f"out_{k}_{j}"] = np.asarray(out)
            cases.append(save(f"{alg_name}_{dt_name}", hlo, runs))
    return cases


def _tensor(shape, etype: str) -> str:
    return f"tensor<{'x'.join(map(str, shape)) + 'x' if shape else ''}{etype}>"


def _hlo_shape(shape, etype: str) -> str:
    return f"{etype}[{','.join(map(str, shape))}]"


def philox_state3(dt_name: str) -> tuple:
    """The StableHLO and HLO text of Philox on a u64[3] state, every shape."""
    ui = "ui" + dt_name[1:]
    outs = ", ".join(f"{_tensor((3,), 'ui64')}, {_tensor(s, ui)}" for s in SHAPES)
    lines = [f"  %s{j}, %v{j} = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : "
             f"({_tensor((3,), 'ui64')}) -> ({_tensor((3,), 'ui64')}, {_tensor(s, ui)})"
             for j, s in enumerate(SHAPES)]
    rets = ", ".join(f"%s{j}, %v{j}" for j in range(len(SHAPES)))
    mlir = (f"module @philox_state3_{dt_name} attributes {{mhlo.num_partitions = 1 : i32, "
            f"mhlo.num_replicas = 1 : i32}} {{\n  func.func public @main(%arg0: {_tensor((3,), 'ui64')}) "
            f"-> ({outs}) {{\n" + "\n".join("  " + ln for ln in lines) + f"\n    return {rets} : {outs}\n  }}\n}}\n")
    body = ["  state = u64[3]{0} parameter(0)"]
    leaves = []
    for j, s in enumerate(SHAPES):
        data = _hlo_shape(s, dt_name)
        body.append(f"  rbg.{j} = (u64[3]{{0}}, {data}) rng-bit-generator(state), algorithm=rng_philox")
        body.append(f"  s.{j} = u64[3]{{0}} get-tuple-element(rbg.{j}), index=0")
        body.append(f"  v.{j} = {data} get-tuple-element(rbg.{j}), index=1")
        leaves += [f"s.{j}", f"v.{j}"]
    shapes = ", ".join(f"u64[3], {_hlo_shape(s, dt_name)}" for s in SHAPES)
    body.append(f"  ROOT out = ({shapes}) tuple({', '.join(leaves)})")
    hlo = f"HloModule philox_state3_{dt_name}\n\nENTRY main {{\n" + "\n".join(body) + "\n}\n"
    return mlir, hlo


def xla_cases() -> list:
    backend = xla_bridge.get_backend("cpu")
    devices = xla_client.DeviceList(tuple(backend.devices()[:1]))
    cases = []
    for dt_name in ("u32", "u64", "u8"):
        mlir, hlo = philox_state3(dt_name)
        exe = backend.compile_and_load(mlir, devices, xla_client.CompileOptions())
        runs = {}
        for k, state in enumerate(STATES3):
            runs[f"state_{k}"] = state
            res = exe.execute_sharded([jax.device_put(state, backend.devices()[0])])
            for j, out in enumerate(res.disassemble_into_single_device_arrays()):
                runs[f"out_{k}_{j}"] = np.asarray(out[0])
        (OUT / f"philox_state3_{dt_name}.mlir").write_text(mlir, encoding="utf-8")
        cases.append(save(f"philox_state3_{dt_name}", hlo, runs))
    return cases


def rng_uniform_text() -> None:
    def f(a, b):
        return (jax.lax.rng_uniform(a, b, (3, 4)),
                jax.lax.rng_uniform(a.astype(jnp.int32), b.astype(jnp.int32), (5,)))
    hlo = jax.jit(f).lower(np.float32(0), np.float32(1)).as_text(dialect="hlo")
    (OUT / "jax_rng_uniform.hlo").write_text(hlo, encoding="utf-8")


def main() -> None:
    rng_uniform_text()
    cases = jax_cases() + xla_cases()
    manifest = {"jax": jax.__version__, "shapes": [list(s) for s in SHAPES], "cases": cases}
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
