"""fusion's per-fusion index (parameters, operand -> parameter, names, uses)
is updated by each fuse step instead of rescanned: it must always equal the
index built from scratch from the fused computation."""
from pathlib import Path

import pytest

import xlac
from xlac.passes.call_inliner import sequential_computations
from xlac.passes.fusion import Fuser, _FusedIndex

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = {"attention": ROOT / "tests/jax_cases/attention.hlo", "mlp_grad": ROOT / "tests/jax_cases/mlp_grad.hlo",
            "ce_loss_grad": ROOT / "tests/jax_cases/ce_loss_grad.hlo",
            "optim_zoo_a": ROOT / "benchmarks/models/optim_zoo_a.hlo"}


def _snapshot(index: _FusedIndex) -> tuple:
    return ([id(p) for p in index.params], dict((k, id(p)) for k, p in index.by_operand.items()),
            set(index.names), {k: [(id(u), j) for u, j in v] for k, v in index.uses.items() if v},
            index.partitioned)


class CheckingFuser(Fuser):
    checked = 0

    def fuse_into(self, fusion, producer):
        super().fuse_into(fusion, producer)
        assert _snapshot(self.fused_index(fusion)) == _snapshot(_FusedIndex(fusion)), fusion.name
        CheckingFuser.checked += 1


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_kept_index_equals_a_fresh_one_after_every_fuse_step(name):
    module = xlac.parse_hlo(PROGRAMS[name].read_text(encoding="utf-8"))
    CheckingFuser.checked = 0
    for comp in sequential_computations(module):
        CheckingFuser(module, comp).run()
    assert CheckingFuser.checked > 0
