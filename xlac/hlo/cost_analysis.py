"""Cost analysis of an HLO module: flops, transcendentals and bytes accessed.

What ``exe.cost_analysis()`` returns, counted as XLA's ``HloCostAnalysis``
(``xla/service/hlo_cost_analysis.cc``) counts them, under the key names of
jax's ``compiled.cost_analysis()``:

* ``"flops"`` — one per output element of an elementwise op (compare, select,
  clamp and convert included); ``2 * M * N * K`` for a dot (one fused
  multiply-add is two flops: the output elements times the product of the
  contracting dimensions); for a convolution ``2 * (input features /
  feature_group_count) * output features * (batch / batch_group_count)`` times
  the product, over the spatial dimensions, of the (output, kernel) position
  pairs that read a real input element (padding and base dilation holes do not
  count); for reduce, the reducer's flops times ``input elements - output
  elements``; for reduce-window ``(window elements - 1) * output elements``
  reducer applications; for map the mapped computation's per element; for
  select-and-scatter ``window - 1`` selections and one scatter per source
  element; ``2 * n * elements(b)`` for triangular-solve (``n`` the last
  dimension of ``a``), ``n * elements(a) / 3`` for cholesky, ``8 * prod(floor(
  log2 fft_length)) * elements`` for fft.
* ``"transcendentals"`` — the output elements of XLA's transcendental
  elementwise ops (exp, log, tanh, logistic, power, sqrt, rsqrt, cbrt, sin,
  cos, tan, atan2, erf, expm1, log1p, acosh) and of rng ops, instead of flops.
* ``"bytes accessed"`` — per instruction the bytes of its operands plus its
  result; nothing for parameter, constant, get-tuple-element, bitcast, tuple
  (a pointer table: its own size only), after-all and add-dependency; for
  slice and dynamic-slice twice the result (what is read equals what is
  written); for a fusion only its operands and result (the fused intermediates
  never touch memory).  ``"bytes accessed{k}{}"`` and ``"bytes
  accessedout{}"`` give operand ``k`` and the result of the entry as a whole,
  as jax prints them.

A while loop counts its body and condition once (the trip count is unknown
before running, as in XLA); a conditional counts its costliest branch; call,
fusion and async wrappers count the called computation.  Custom calls and
collectives other than all-reduce count their bytes only.
"""
from __future__ import annotations

from collections import Counter
from math import prod

from ..shape import Shape
from .ir import HloComputation, HloInstruction, HloModule
from .opcodes import OPCODES
from .window import conv_dimension_numbers_of, window_of

__all__ = ["cost_analysis", "instruction_cost", "TRANSCENDENTAL_OPCODES"]

FLOPS, TRANSCENDENTALS, BYTES = "flops", "transcendentals", "bytes accessed"

#: XLA's HandleElementwiseOp list: one transcendental per output element, no flop.
TRANSCENDENTAL_OPCODES = frozenset({
    "acosh", "erf", "exponential", "log", "logistic", "power", "sqrt", "cbrt", "rsqrt", "tanh",
    "sine", "cosine", "exponential-minus-one", "log-plus-one", "atan2", "tan"})

#: Elementwise opcodes XLA counts although shape inference calls them something else.
_ELEMENTWISE_EXTRA = frozenset({"select", "clamp", "compare", "convert", "reduce-precision"})

#: No computation and no memory traffic (plumbing; XLA zeroes bytes for these).
_FREE = frozenset({"parameter", "constant", "get-tuple-element", "bitcast", "after-all",
                   "add-dependency", "domain", "opt-barrier"})


def _size(shape: Shape) -> int:
    """Bytes of every array leaf of ``shape`` (tokens count nothing)."""
    return sum(leaf.byte_size() for leaf in (shape.leaves() if shape.is_tuple else [shape])
               if leaf.is_array)


def _elements(shape: Shape) -> int:
    return shape.element_count() if shape.is_array else sum(
        leaf.element_count() for leaf in shape.leaves() if leaf.is_array)


def _first_array(shape: Shape) -> Shape:
    return shape.tuple_shapes[0] if shape.is_tuple else shape


def _computation_cost(comp: HloComputation) -> Counter:
    total: Counter = Counter()
    for inst in comp.instructions:
        total.update(instruction_cost(inst))
    return total


def _scaled(cost: Counter, factor: int) -> Counter:
    """The flops and transcendentals of ``cost`` times ``factor`` (bytes stay out:
    a subcomputation's scalar traffic is in registers, as in XLA)."""
    return Counter({k: v * factor for k, v in cost.items() if k in (FLOPS, TRANSCENDENTALS)})


def _dot_flops(inst: HloInstruction) -> int:
    lhs = inst.operands[0].shape
    width = prod(lhs.dimensions[d] for d in inst.attrs.get("lhs_contracting_dims", ()))
    return 2 * _elements(inst.shape) * width


def _valid_positions(in_size: int, out_size: int, kernel: int, wd) -> int:
    """(output, kernel) position pairs of one spatial dimension that land on a
    real input element (not padding, not a base-dilation hole)."""
    count = 0
    for k in range(kernel):
        for o in range(out_size):
            undilated = o * wd.stride - wd.padding_low + k * wd.window_dilation
            if undilated % wd.base_dilation:
                continue
            if 0 <= undilated // wd.base_dilation < in_size:
                count += 1
    return count


def _conv_flops(inst: HloInstruction) -> int:
    lhs, rhs, out = inst.operands[0].shape, inst.operands[1].shape, inst.shape
    dn = conv_dimension_numbers_of(inst.attrs)
    window = window_of(inst.attrs)
    positions = prod(
        _valid_positions(lhs.dimensions[dn.input_spatial_dimensions[s]],
                         out.dimensions[dn.output_spatial_dimensions[s]],
                         rhs.dimensions[dn.kernel_spatial_dimensions[s]], window[s])
        for s in range(dn.num_spatial_dims))
    fgc = int(inst.attrs.get("feature_group_count", 1))
    bgc = int(inst.attrs.get("batch_group_count", 1))
    fma = (lhs.dimensions[dn.input_feature_dimension] // fgc) \
        * out.dimensions[dn.output_feature_dimension] \
        * (lhs.dimensions[dn.input_batch_dimension] // bgc) * positions
    return 2 * fma


def _reduce(inst: HloInstruction) -> Counter:
    count = _elements(inst.operands[0].shape) - _elements(_first_array(inst.shape))
    return _scaled(_computation_cost(inst.attrs["to_apply"]), count)


def _reduce_window(inst: HloInstruction) -> Counter:
    window = window_of(inst.attrs)
    count = (prod(wd.size for wd in window) - 1) * _elements(_first_array(inst.shape))
    return _scaled(_computation_cost(inst.attrs["to_apply"]), count)


def _map(inst: HloInstruction) -> Counter:
    return _scaled(_computation_cost(inst.attrs["to_apply"]), _elements(inst.shape))


def _called(inst: HloInstruction) -> Counter:
    """Call, fusion, while, async wrappers: the called computations' costs."""
    total: Counter = Counter()
    for comp in inst.called_computations():
        total.update(_scaled(_computation_cost(comp), 1))
    return total


def _conditional(inst: HloInstruction) -> Counter:
    branches = [_scaled(_computation_cost(c), 1) for c in inst.called_computations()]
    return max(branches, key=lambda c: (c[FLOPS] + c[TRANSCENDENTALS]), default=Counter())


def _all_reduce(inst: HloInstruction) -> Counter:
    return Counter({FLOPS: _elements(inst.shape)})    # XLA assumes two replicas


def _transcendental_per_element(inst: HloInstruction) -> Counter:
    return Counter({TRANSCENDENTALS: _elements(inst.shape)})


def _select_and_scatter(inst: HloInstruction) -> Counter:
    # Per source element: window - 1 selections and one scatter.
    source = _elements(inst.operands[1].shape)
    window = prod(wd.size for wd in window_of(inst.attrs))
    cost = _scaled(_computation_cost(inst.attrs["select"]), source * (window - 1))
    cost.update(_scaled(_computation_cost(inst.attrs["scatter"]), source))
    return cost


def _fft(inst: HloInstruction) -> Counter:
    # XLA: 2 flops per FMA x 4 FMAs per complex multiply x prod(floor(log2 n)) x elements.
    log_factors = prod(max(int(n), 1).bit_length() - 1 for n in inst.attrs.get("fft_length", ()))
    return Counter({FLOPS: 2 * 4 * log_factors * _elements(_first_array(inst.operands[0].shape))})


def _triangular_solve(inst: HloInstruction) -> Counter:
    a, b = inst.operands[0].shape, inst.operands[1].shape
    return Counter({FLOPS: 2 * a.dimensions[-1] * _elements(b)})


def _cholesky(inst: HloInstruction) -> Counter:
    a = inst.operands[0].shape
    return Counter({FLOPS: a.dimensions[-1] * _elements(a) // 3})


#: Opcode -> its flops and transcendentals (bytes are counted by :func:`_bytes`).
_RULES = {
    "dot": lambda i: Counter({FLOPS: _dot_flops(i)}),
    "convolution": lambda i: Counter({FLOPS: _conv_flops(i)}),
    "reduce": _reduce,
    "reduce-window": _reduce_window,
    "map": _map,
    "call": _called, "fusion": _called, "while": _called, "async-start": _called,
    "conditional": _conditional,
    "all-reduce": _all_reduce, "all-reduce-start": _all_reduce,
    "rng": _transcendental_per_element, "rng-bit-generator": _transcendental_per_element,
    "select-and-scatter": _select_and_scatter,
    "fft": _fft, "triangular-solve": _triangular_solve, "cholesky": _cholesky,
}


def _bytes(inst: HloInstruction) -> int:
    op = inst.opcode
    if op in _FREE:
        return 0
    if op == "tuple":
        return 8 * len(inst.operands)          # the index table of pointers
    if op in ("slice", "dynamic-slice"):
        return 2 * _size(inst.shape) + sum(_size(o.shape) for o in inst.operands[1:])
    if op == "dynamic-update-slice":           # operand 0 is updated in place
        return 2 * _size(inst.operands[1].shape) + sum(_size(o.shape) for o in inst.operands[2:])
    if op == "triangular-solve":               # half of the triangular matrix is read
        return _size(inst.shape) + _size(inst.operands[0].shape) // 2 + _size(inst.operands[1].shape)
    if op == "cholesky":                       # half read, half written
        return _size(inst.operands[0].shape)
    return _size(inst.shape) + sum(_size(o.shape) for o in inst.operands)


def _is_elementwise(inst: HloInstruction) -> bool:
    opdef = OPCODES.get(inst.opcode)
    return inst.opcode in _ELEMENTWISE_EXTRA or (opdef is not None and opdef.is_elementwise)


def instruction_cost(inst: HloInstruction) -> Counter:
    """``{"flops", "transcendentals", "bytes accessed"}`` of one instruction
    (called computations included, see the module docstring)."""
    rule = _RULES.get(inst.opcode)
    if rule is not None:
        cost = rule(inst)
    elif inst.opcode in TRANSCENDENTAL_OPCODES:
        cost = _transcendental_per_element(inst)
    elif _is_elementwise(inst):
        cost = Counter({FLOPS: _elements(inst.shape)})
    else:
        cost = Counter()
    cost[BYTES] += _bytes(inst)
    return cost


def cost_analysis(module: HloModule) -> dict:
    """The cost of running ``module``'s entry once (see the module docstring).

    Returns a dict of floats: ``"flops"``, ``"transcendentals"``, ``"bytes
    accessed"``, and ``"bytes accessed{k}{}"`` per entry parameter ``k`` and
    ``"bytes accessedout{}"`` for the result (jax's keys).  Raises
    ``xlac.hlo.window.WindowError`` for a convolution without dim_labels.
    """
    entry = module.entry
    total = _computation_cost(entry)
    out = {FLOPS: float(total[FLOPS]), TRANSCENDENTALS: float(total[TRANSCENDENTALS]),
           BYTES: float(total[BYTES])}
    for p in entry.parameters:
        out[f"{BYTES}{p.parameter_number}{{}}"] = float(_size(p.shape))
    out[f"{BYTES}out{{}}"] = float(_size(entry.root.shape))
    return out
