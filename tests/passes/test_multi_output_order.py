"""Multi-output fusion's dependency test across merges: merging two siblings
must keep later questions right about instructions that read the merged ones
(a wrong "independent" merges a fusion with its own consumer and the kernels
run out of order)."""
import numpy as np

import xlac
from xlac.hlo.verifier import verify
from xlac.passes.fusion import Fuser, InstructionFusion
from xlac.passes.multi_output_fusion import MultiOutputFusion, _TopologicalOrder

ADD = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""

# ``sa`` and ``sb`` are independent siblings over x; ``t`` reads ``sa`` (through a
# broadcast) and x, and sits between them in post order: merging sa and sb puts
# the merged fusion after t's old place, so t must be keyed after it.
TEXT = f"""
HloModule m
{ADD}
ENTRY e {{
  x = f32[64,128]{{1,0}} parameter(0)
  z = f32[] constant(0)
  sa = f32[64]{{0}} reduce(x, z), dimensions={{1}}, to_apply=add
  b = f32[64,128]{{1,0}} broadcast(sa), dimensions={{0}}
  y = f32[64,128]{{1,0}} multiply(x, b)
  t = f32[64]{{0}} reduce(y, z), dimensions={{1}}, to_apply=add
  sq = f32[64,128]{{1,0}} multiply(x, x)
  sb = f32[64]{{0}} reduce(sq, z), dimensions={{1}}, to_apply=add
  ROOT r = (f32[64]{{0}}, f32[64]{{0}}, f32[64]{{0}}) tuple(sa, t, sb)
}}"""


def _keys_increase(comp, order: _TopologicalOrder) -> bool:
    return all(order.key[op] < order.key[inst]
               for inst in comp.instructions if inst.parent is comp for op in inst.operands)


def test_a_consumer_between_merged_siblings_is_not_merged_with_them():
    module = xlac.parse_hlo(TEXT)
    InstructionFusion().run(module)
    assert len([i for i in module.entry.instructions if i.opcode == "fusion"]) == 3
    MultiOutputFusion().run(module)
    verify(module)
    notes = [str(d) for d in module.diagnostics if d.source == "multi-output-fusion"]
    assert any("fusion.multi" in n and "one depends on the other" in n for n in notes), notes
    x = np.random.default_rng(4).standard_normal((64, 128)).astype(np.float32)
    sa, t, sb = xlac.jit(module)(x)
    np.testing.assert_allclose(sa, x.sum(1), rtol=1e-4)
    np.testing.assert_allclose(t, (x * x.sum(1, keepdims=True)).sum(1), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(sb, (x * x).sum(1), rtol=1e-4)


def test_keys_grow_along_every_edge_after_a_merge():
    module = xlac.parse_hlo(TEXT)
    InstructionFusion().run(module)
    comp = module.entry
    comp.compute_users()
    order = _TopologicalOrder(comp)
    sa, t, sb = (next(f for f in comp.instructions if f.opcode == "fusion" and f.name.endswith(n))
                 for n in ("sa", "t", "sb"))
    first, later = order.sorted(sa, sb)
    assert (first, later) == (sa, sb)
    assert order.sorted(t, sa) == (sa, t)
    assert order.descendants_before(sa, t) is None       # t reads sa
    moved = order.descendants_before(sa, sb)
    assert t in moved                                      # keyed between sa and sb: moves
    merged, created = MultiOutputFusion()._merge(Fuser(module, comp), comp, sa, sb)
    order.merged(first, later, merged, created, moved)
    assert _keys_increase(comp, order)
    assert order.sorted(t, merged) == (merged, t)
    assert order.descendants_before(merged, t) is None


def test_a_fusion_merged_twice_prints_hlo_that_parses_again():
    # eqx_transformer_train merges multi-output fusions again (vit_train did
    # too before its residual gradient stayed in one buffer): the old tuple
    # root used to be cloned beside a new one of the same name ("tuple.root"
    # twice), so the optimised module's text (XLAC_DUMP_TO) did not parse.
    from pathlib import Path

    import xlac
    from xlac.codegen.compiler import lower
    text = (Path(__file__).resolve().parents[2] / "benchmarks" / "models" / "eqx_transformer_train.hlo").read_text(encoding="utf-8")
    low = lower(xlac.parse_hlo(text))
    fused = [c for c in low.hlo.computations if c.name.startswith("fused_multi")]
    assert any(sum(i.opcode == "tuple" for i in c.instructions) == 1 and len(c.root.operands) > 2
               for c in fused)
    assert all(sum(i.opcode == "tuple" for i in c.instructions) == 1 for c in fused)
    xlac.parse_hlo(low.hlo.to_text())
