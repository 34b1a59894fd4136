"""Writes ``NAME.mlir`` here for every case of the public corpus
(``tests/hlo_corpus``): its HLO translated to StableHLO by XLA's own
translator (``hlo_to_stablehlo``, the one ``jax`` ships), printed in MLIR's
generic form.  The corpus's jax programs are not published, so this is the
StableHLO of the same programs that can be made without them; the inputs and
expected outputs stay the corpus's (``tests/test_stablehlo_corpus.py`` reads them
from there).  Run it where jax is installed::

    /tmp/jaxvenv/bin/python tests/stablehlo_corpus/generate.py [CORPUS_DIR]
"""
import sys
from pathlib import Path

from jax._src.interpreters import mlir
from jax._src.lib import xla_client as xc
from jax._src.lib.mlir import ir

HERE = Path(__file__).resolve().parent
CORPUS = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent / "hlo_corpus"


def main() -> None:
    n = 0
    for hlo in sorted(CORPUS.glob("*.hlo")):
        module = xc.hlo.hlo_module_from_text(hlo.read_text(encoding="utf-8"))
        bytecode = xc._xla.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
        with mlir.make_ir_context():
            text = ir.Module.parse(bytecode).operation.get_asm(print_generic_op_form=True)
        (HERE / f"{hlo.stem}.mlir").write_text(text, encoding="utf-8")
        n += 1
    print(f"{n} modules written to {HERE}")


if __name__ == "__main__":
    main()
