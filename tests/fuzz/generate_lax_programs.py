"""Writes ``jax_lax_programs.json``: random programs of ``lax_programs.py`` (seeds
0..N-1), their inputs and what ``jax.jit`` computes for them (every step's value and the
steps jax refuses), for ``test_lax_programs.py`` to hold ``xlac.jit`` to.

jax is not a dependency of xlac: run this where jax is installed,

    python tests/fuzz/generate_lax_programs.py [N]

and commit the JSON.  XLA runs with ``--xla_allow_excess_precision=false``, so f16 and
bf16 values are rounded after every operation, as xlac rounds them, and without its
algebraic simplifier, whose rewrites are not IEEE arithmetic (``x / 300`` becomes
``x * (1/300)``, off by an ulp; ``convert(p) * y`` a select that gives 0 for
``False * inf``): the expectations are what the program computes, which xlac computes.
"""
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lax_programs as lp  # noqa: E402

# Set for this process only when run as a script: a test importing this module sets
# them around its own calls, never for the subprocesses of other tests.
if __name__ == "__main__":
    for _k, _v in lp.JAX_ENV.items():
        os.environ.setdefault(_k, _v)
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

OUT = Path(__file__).resolve().parent / "jax_lax_programs.json"
REFUSALS = (TypeError, jax.dtypes.TypePromotionError)


def run_jax(prog: dict, args: list):
    """``(results, refused)`` of ``prog`` under ``jax.jit``."""
    refused = []

    def f(*xs):
        outs, r = lp.run(prog, jax.lax, xs, lambda shape: jnp.zeros(shape, jnp.float32), REFUSALS)
        refused[:] = r
        return outs
    outs = jax.jit(f)(*args)
    return [np.asarray(o) for o in outs], refused


def case(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    prog = lp.random_program(rng)
    args = lp.random_inputs(rng, prog)
    outs, refused = run_jax(prog, args)
    return {"seed": seed, "program": prog, "inputs": [lp.encode(a) for a in args],
            "results": [lp.encode(o) for o in outs], "refused": refused}


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    cases = [case(seed) for seed in range(n)]
    OUT.write_text(json.dumps({"jax": jax.__version__, "cases": cases}, separators=(",", ":")) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
