"""Passes and pipelines.

A pass is an object with a ``name`` and ``run(module) -> changed``.  A
:class:`Pipeline` runs passes in order; ``fixed_point=True`` repeats the list
until no pass changes anything.  With ``verify=True`` (tests, dumps) the
verifier runs after every pass so a broken rewrite is caught where it happens.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..hlo.ir import HloModule


@dataclass
class Pipeline:
    name: str
    passes: list = field(default_factory=list)
    fixed_point: bool = False
    verify: bool = False
    max_iterations: int = 25

    def run(self, module: HloModule) -> bool:
        changed_any = False
        for _ in range(self.max_iterations if self.fixed_point else 1):
            changed = False
            for p in self.passes:
                if p.run(module):
                    changed = True
                if self.verify:
                    from ..hlo.verifier import verify
                    verify(module)
            changed_any |= changed
            if not changed:
                break
        return changed_any


def codegen_pipeline(verify: bool = False) -> Pipeline:
    """What every module goes through before emission."""
    from .call_inliner import CallInliner
    return Pipeline("codegen", [CallInliner()], verify=verify)
