"""ComputationDeduplicator: one computation for identical ones that control
flow runs (XLA's ``HloComputationDeduplicator``).

jax lowers a bidirectional RNN's two scans, or the same ``fori_loop`` at two
places, to ``while`` loops whose condition and body are separate computations
with the same instructions up to names.  Each would be fused, emitted and
optimised by LLVM on its own; here every ``while``, ``conditional`` and
``call`` that names one of a group of structurally identical computations
(:func:`xlac.hlo.fingerprint.computation_fingerprint`: the same instructions,
shapes with layouts, attributes and constants, up to names) names the
group's first one instead, and the others are dropped.  Nothing changes for
the code a loop runs: a computation's buffers are its own whatever calls it
(its parameters and temps reach it as pointers from each call site), as for
a computation inlined at several call sites.

Fused computations and reductions' ``to_apply`` are left alone: they are
emitted inline into their kernels, which kernel sharing already merges.
"""
from __future__ import annotations

from ..hlo.fingerprint import computation_fingerprint
from ..hlo.ir import HloComputation, HloModule
from .call_inliner import SEQUENTIAL_OPCODES

__all__ = ["ComputationDeduplicator"]


class ComputationDeduplicator:
    name = "computation-deduplicator"

    def run(self, module: HloModule) -> bool:
        called = {}                              # id -> computation, in module order
        for comp in module.computations:
            for inst in comp.instructions:
                if inst.opcode in SEQUENTIAL_OPCODES:
                    for c in inst.called_computations():
                        called.setdefault(id(c), c)
        memo: dict = {}
        first: dict[str, HloComputation] = {}
        same: dict[int, HloComputation] = {}     # id of a duplicate -> the one kept
        for comp in (c for c in module.computations if id(c) in called):
            kept = first.setdefault(computation_fingerprint(comp, memo), comp)
            if kept is not comp:
                same[id(comp)] = kept
        if not same:
            return False
        for comp in module.computations:
            for inst in comp.instructions:
                if inst.opcode not in SEQUENTIAL_OPCODES:
                    continue
                for key, value in inst.attrs.items():
                    if isinstance(value, HloComputation):
                        inst.attrs[key] = same.get(id(value), value)
                    elif isinstance(value, tuple) and value and all(isinstance(v, HloComputation) for v in value):
                        inst.attrs[key] = tuple(same.get(id(v), v) for v in value)
        module.drop_uncalled_computations()
        return True
