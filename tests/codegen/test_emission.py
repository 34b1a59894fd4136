"""Emission state (``xlac/codegen/emission.py``): an Index is only a value; what
the emitter remembers while it emits belongs to the module being emitted, so
threads lowering different modules at once do not disturb each other."""
from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

import xlac
from xlac.codegen.compiler import lower
from xlac.codegen.emission import context_of
from xlac.codegen.ir_array import Index, i64

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "hlo"
# Kernels with parallel loops (access groups), hoisting (softmax, layernorm),
# row scratch, GEMMs and transposes.
MODULES = ["softmax", "layernorm", "chain", "transpose", "mlp", "sum_axis0"]


def _texts():
    if not BENCH.is_dir():
        pytest.skip(f"no benchmark modules at {BENCH}")
    return [(BENCH / f"{name}.hlo").read_text(encoding="utf-8") for name in MODULES]


def _ir(text: str) -> str:
    return lower(xlac.parse_hlo(text), aligned_results=True, native=True).llvm_ir


def test_index_is_only_a_value():
    # The values, their linear offset, and the static range they lie in.
    assert set(Index.__dataclass_fields__) == {"multi", "linear", "linear_shape", "bounds"}


def test_two_threads_lowering_at_once_give_the_single_threaded_ir():
    texts = _texts()
    expected = [_ir(t) for t in texts]
    errors: list = []
    rounds = 12
    start = threading.Barrier(2)

    def work(order: list[int]) -> None:
        try:
            start.wait()
            for _ in range(rounds):
                for k in order:
                    got = _ir(texts[k])
                    if got != expected[k]:
                        errors.append(MODULES[k])
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(repr(e))

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)     # switch threads often, mid-kernel
    try:
        threads = [threading.Thread(target=work, args=(order,))
                   for order in (list(range(len(texts))), list(reversed(range(len(texts)))))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors


def test_context_belongs_to_the_module():
    from llvmlite import ir
    a, b = ir.Module("a"), ir.Module("b")
    assert context_of(a) is context_of(a)
    assert context_of(a) is not context_of(b)
    ctx = context_of(a)
    index = Index([i64(0)])
    assert ctx.point(index) is None
    ctx.place(index, [0], [])
    assert ctx.point(index).depths == [0] and ctx.point(index).avail == []
    ctx.values_at(index)["x"] = 1
    assert ctx.values_at(index) == {"x": 1}
    with ctx.kernel():      # a kernel emitted meanwhile has indices of its own
        assert ctx.point(index) is None and ctx.values_at(index) == {}
    assert ctx.point(index).depths == [0] and ctx.values_at(index) == {"x": 1}
