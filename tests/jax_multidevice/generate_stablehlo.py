"""Writes ``NAME.mlir`` beside each program's HLO here: ``fn.lower(*args).as_text()``,
jax's default StableHLO text of the global program (Shardy: ``sdy.mesh``,
``sdy.manual_computation``), for the programs and inputs of ``generate.py``.
Run it where jax is installed, as ``generate.py``::

    /tmp/jaxvenv/bin/python tests/jax_multidevice/generate_stablehlo.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # noqa: E402  (sets XLA_FLAGS: 4 host devices)
from generate import OUT, np  # noqa: E402


def main() -> None:
    for name, (fn, args) in generate.cases(np.random.default_rng(0)).items():
        with np.load(OUT / f"{name}.npz") as data:
            for k, a in enumerate(args):
                assert np.array_equal(np.asarray(a), data[f"arr_{k}"]), f"{name}: input arr_{k} differs"
        (OUT / f"{name}.mlir").write_text(fn.lower(*args).as_text(), encoding="utf-8")
        print(name)


if __name__ == "__main__":
    main()
