#!/usr/bin/env python
"""Coverage-guided fuzzing of the HLO and StableHLO parsers, verifier and printer
with atheris (libFuzzer for Python): the long campaign's parser fuzzer.  Not a
pytest test.

    pip install atheris      # optional: the `fuzz` extra; skips cleanly without it
    python tests/fuzz/atheris_parser.py -max_total_time=120 [-jobs=2 -workers=2] [CORPUS_DIR]

Each input is decoded as UTF-8 (undecodable bytes become lone surrogates, a
hostile input in itself) and held to parser_check.check_text: only
HloParseError, ShapeError, VerifierError and UnsupportedError may escape, and
a module that verifies must round-trip through to_text.  The first CORPUS_DIR
(a fresh temporary directory when none is given) is seeded with the public
corpus, tests/jax_cases (HLO and StableHLO) and tests/stablehlo_corpus, and
collects the inputs that reach new code.  A
failure stops the run and leaves ``crash-<sha1>`` in the working directory;
``python tests/fuzz/atheris_parser.py crash-<sha1>`` replays it.
"""
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

try:
    import atheris
except ImportError:
    print("atheris is not installed (pip install atheris, or the 'fuzz' extra): nothing to do")
    sys.exit(0)

with atheris.instrument_imports(include=["xlac"]):
    import xlac.hlo.parser  # noqa: F401 - instrumented for coverage
    import xlac.hlo.printer  # noqa: F401
    import xlac.hlo.verifier  # noqa: F401
    import xlac.hlo.shape_inference  # noqa: F401
    import xlac.hlo.stablehlo.importer  # noqa: F401
    import xlac.hlo.stablehlo.syntax  # noqa: F401
    import xlac.hlo.stablehlo.types  # noqa: F401
    import xlac.shape  # noqa: F401

from parser_check import check_text  # noqa: E402


def test_one_input(data: bytes) -> None:
    check_text(data.decode("utf-8", "surrogateescape"))


def _seed_corpus(argv: list) -> list:
    """argv with a corpus directory that holds the seed files (created if none is given)."""
    dirs = [a for a in argv[1:] if not a.startswith("-")]
    if dirs and Path(dirs[0]).is_file():          # replaying a crash file
        return argv
    target = Path(dirs[0]) if dirs else Path(tempfile.mkdtemp(prefix="xlac-hlo-fuzz-"))
    target.mkdir(parents=True, exist_ok=True)
    if not any(target.iterdir()):
        seeds = sorted((ROOT / "tests" / "hlo_corpus").glob("*.hlo")) + \
            sorted((ROOT / "tests" / "jax_cases").glob("*.hlo")) + \
            sorted((ROOT / "tests" / "stablehlo_corpus").glob("*.mlir")) + \
            sorted((ROOT / "tests" / "jax_cases").glob("*.export.mlir"))
        for seed in seeds:
            shutil.copy(seed, target / f"{seed.parent.name}-{seed.name}")
        print(f"seeded {target} with {len(seeds)} files", file=sys.stderr)
    return argv if dirs else argv + [str(target)]


if __name__ == "__main__":
    atheris.Setup(_seed_corpus(sys.argv), test_one_input)
    atheris.Fuzz()
