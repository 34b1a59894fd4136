"""Parser fuzzer: seeded mutations of the public corpus and the jax cases, HLO
and StableHLO (mutations.py), through the parser, the verifier, the printer
round trip and, for a sample, the compiler (parser_check.py).

Every mutation is reproducible from its number (``random.Random(seed)``); CI
runs a fixed range of them, the long mode many more from a random base
(``XLAC_FUZZ_SEED=N`` replays a base).  A failing chunk reports each distinct
failure once: the seed, the file it mutated, and the text minimised by delta
debugging (also written to a file).
"""
import os
import random
from pathlib import Path

import pytest

from fuzzconf import LONG, examples
from mutations import minimize, mutate
from parser_check import check_text, fails_the_same_way, failure_kind

ROOT = Path(__file__).resolve().parents[2]
SEEDS = (sorted((ROOT / "tests" / "hlo_corpus").glob("*.hlo"))
         + sorted((ROOT / "tests" / "jax_cases").glob("*.hlo"))
         + sorted((ROOT / "tests" / "stablehlo_corpus").glob("*.mlir"))           # StableHLO
         + sorted((ROOT / "tests" / "jax_cases").glob("*.export.mlir")))
CHUNKS = 4
PER_CHUNK = examples(ci=4_000, long=400_000) // CHUNKS
COMPILE_ONE_IN = 40           # mutants that verify are also compiled, one in this many
BASE = int(os.environ.get("XLAC_FUZZ_SEED", random.randrange(2**31) if LONG else 0))


def _texts() -> list:
    return [p.read_text(encoding="utf-8") for p in SEEDS]


def _one(seed: int, texts: list) -> tuple:
    """(file index, mutated text) of mutation number ``seed``."""
    rng = random.Random(seed)
    k = rng.randrange(len(texts))
    return k, mutate(texts[k], rng, texts)


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_mutated_hlo_raises_only_documented_errors(chunk, tmp_path):
    texts = _texts()
    failures = {}
    for seed in range(BASE + chunk * PER_CHUNK, BASE + (chunk + 1) * PER_CHUNK):
        k, text = _one(seed, texts)
        compile_it = seed % COMPILE_ONE_IN == 0
        try:
            check_text(text, compile_it)
        except Exception as e:  # noqa: BLE001 - every escape is a finding
            failures.setdefault(failure_kind(e), (seed, k, text, compile_it, e))
    if failures:
        pytest.fail("\n\n".join(_report(kind, *f, tmp_path) for kind, f in failures.items()), pytrace=False)


def _report(kind: str, seed: int, k: int, text: str, compile_it: bool, exc: Exception, tmp_path) -> str:
    small = minimize(text, fails_the_same_way(kind, compile_it), budget_s=10.0)
    path = tmp_path / f"mutation_{seed}.hlo"
    path.write_text(text, errors="surrogatepass", encoding="utf-8")
    return (f"{kind}: {type(exc).__name__}: {str(exc)[:300]}\n"
            f"  mutation {seed} of {SEEDS[k].name} (full text: {path}; compile={compile_it})\n"
            f"  minimised ({len(small)} chars):\n{small[:2000]!r}")


if __name__ == "__main__":          # python tests/fuzz/test_parser_fuzz.py SEED: print mutation SEED
    import sys
    index, mutated = _one(int(sys.argv[1]), _texts())
    print(f"// mutation {sys.argv[1]} of {SEEDS[index].name}", file=sys.stderr)
    sys.stdout.write(mutated.encode("utf-8", "surrogatepass").decode("utf-8", "replace"))
