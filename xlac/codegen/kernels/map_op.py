"""``map``: apply a scalar computation at every index (an elemental generator).

The ``to_apply`` computation is emitted inline (``emit_scalar_computation``)
on the operands' elements at the same index, so a map fuses like any
elementwise op.
"""
from __future__ import annotations



def map_generator(em, inst, gens):
    comp = inst.attrs["to_apply"]

    def gen(index):
        return em.emit_scalar_computation(comp, [g(index) for g in gens])
    return gen
