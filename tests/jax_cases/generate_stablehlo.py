"""Writes the StableHLO text of every program in ``tests/jax_cases`` beside its HLO:

* ``NAME.mlir``: ``jax.jit(f, keep_unused=True).lower(*args).as_text()`` (jax's
  default text: StableHLO MLIR, pretty-printed, no locations);
* ``NAME.export.mlir``: ``jax.export.export(jax.jit(f, keep_unused=True))(*args)
  .mlir_module()`` (what a serialised ``Exported`` holds, with ``loc(...)``
  locations and ``#loc`` aliases).

The programs and inputs are ``generate.py``'s (same seeds); the inputs are
checked against the committed ``NAME.npz`` so both texts describe the case whose
``NAME.expected.npz`` is committed.  Run it where jax is installed, as
``generate.py``::

    /tmp/jaxvenv/bin/python tests/jax_cases/generate_stablehlo.py
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # noqa: E402  (sets XLA_FLAGS before jax starts)
from generate import OUT, jax, np  # noqa: E402


def write_texts(name: str, fn, args) -> list:
    """Writes the two texts of one case; the problems found, as strings."""
    problems = []
    with np.load(OUT / f"{name}.npz") as data:
        for k, a in enumerate(args):
            if not np.array_equal(np.asarray(a), data[f"arr_{k}"], equal_nan=True):
                problems.append(f"{name}: input arr_{k} differs from the committed one")
    jf = jax.jit(fn, keep_unused=True)
    (OUT / f"{name}.mlir").write_text(jf.lower(*args).as_text(), encoding="utf-8")
    try:
        exported = jax.export.export(jf)(*args)
        (OUT / f"{name}.export.mlir").write_text(exported.mlir_module(), encoding="utf-8")
    except Exception as e:  # noqa: BLE001 - e.g. a custom call jax.export refuses
        problems.append(f"{name}: jax.export: {type(e).__name__}: {e}")
    return problems


def main() -> None:
    wanted = {c["name"] for c in json.loads((OUT / "manifest.json").read_text(encoding="utf-8"))["cases"]}
    makers = ((False, generate.cases_32), (True, generate.cases_64),
              (False, lambda r: generate.cases_both(r, False)),
              (True, lambda r: generate.cases_both(r, True)), (False, generate.cases_more))
    problems, done = [], 0
    for x64, make in makers:
        jax.config.update("jax_enable_x64", x64)
        for name, (fn, args) in make(np.random.default_rng(0)).items():
            if name in wanted:
                problems += write_texts(name, fn, args)
                done += 1
    jax.config.update("jax_enable_x64", False)
    print(f"{done} cases written to {OUT}")
    for p in problems:
        print(p, file=sys.stderr)


if __name__ == "__main__":
    main()
