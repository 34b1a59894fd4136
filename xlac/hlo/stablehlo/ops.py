"""The converter of each ``stablehlo`` (and ``func``) op into HLO instructions.

Attribute names are StableHLO's (``openxla/stablehlo docs/spec.md``); a
converter reads them in either form (the generic form's property, or the
pretty form's keyword: ``dims = [0]`` is ``broadcast_dimensions``), through
:meth:`OpContext.attr` with both names.
"""
from __future__ import annotations

import dataclasses
import re

from ...errors import UnsupportedError
from ...shape import PrimitiveType, Shape
from ..attributes import Raw
from ..collectives import ReplicaGroups, all_to_all_regroup
from ..custom_call import NO_OP_TARGETS
from ..window import Window, format_window
from .importer import (CONVERTERS, ImportProblem, OpContext, _bools, _enum, _fields, _groups, _ints, _pairs,
                       converter, free_values)
from .syntax import Dense, DialectAttr, Symbol, Word
from .types import dense_literal, element_type

# -- element-wise: the HLO opcode is the StableHLO name with '-' for '_' ----------------------
_ELEMENTWISE = """abs add and atan2 cbrt ceil count_leading_zeros cosine divide exponential
exponential_minus_one floor imag is_finite log log_plus_one logistic maximum minimum multiply negate not
or popcnt power real remainder round_nearest_afz round_nearest_even rsqrt shift_left shift_right_arithmetic
shift_right_logical sign sine sqrt subtract tan tanh xor complex convert bitcast_convert clamp""".split()
_ELEMENTWISE_HLO = {f"stablehlo.{n}": n.replace("_", "-") for n in _ELEMENTWISE}
# XLA has an opcode for this mhlo op too (the chlo ops are chlo.py's).
_ELEMENTWISE_HLO.update({"mhlo.erf": "erf"})


def _elementwise(ctx: OpContext) -> list:
    return [ctx.add(_ELEMENTWISE_HLO[ctx.name], ctx.result_shape(), ctx.operands)]


for _name in _ELEMENTWISE_HLO:
    converter(_name)(_elementwise)


@converter("stablehlo.compare")
def _compare(ctx: OpContext) -> list:
    words = ctx.words()
    direction = ctx.attr("comparison_direction", default=None)
    direction = _enum(direction) if direction is not None else (words[0] if words else None)
    if direction is None:
        raise ImportProblem("missing comparison_direction")
    ctype = ctx.attr("compare_type", default=None)
    ctype = _enum(ctype) if ctype is not None else (words[1] if len(words) > 1 else None)
    attrs = {"direction": direction}
    if ctype is not None and ctype != "NOTYPE":
        attrs["type"] = ctype
    return [ctx.add("compare", ctx.result_shape(), ctx.operands, attrs)]


@converter("stablehlo.select")
def _select(ctx: OpContext) -> list:
    ins, outs = ctx.op.signature
    shape = ctx.shape_of(outs[0]) if outs else ctx.shape_of(ins[-1])
    pred, a, b = ctx.operands
    if pred.shape.rank == 0 and shape.rank > 0:     # StableHLO allows a scalar predicate
        pred = ctx.add("broadcast", Shape(PrimitiveType.PRED, shape.dimensions), [pred], {"dimensions": ()})
    return [ctx.add("select", shape, [pred, a, b])]


@converter("stablehlo.constant")
def constant_converter(ctx: OpContext) -> list:
    value = ctx.attr("value", default=None)
    if value is None:
        attrs = ctx.items("attr")
        value = attrs[0] if attrs else None
    if not isinstance(value, Dense):
        raise ImportProblem("constant without a dense<...> value")
    shape = ctx.shape_of(value.type) if not ctx.result_types() else ctx.result_shape()
    literal = dense_literal(value, shape)
    if literal.size > 1 and _is_splat(value, literal.dtype.itemsize):
        # jax writes filled tensors as splats (dense<1.0> : tensor<16x4x128x128xf32>):
        # a scalar broadcast is what they mean, and it fuses into the loops that read
        # it instead of being a constant of millions of elements in the program.
        scalar = Shape(shape.element_type, ())
        one = ctx.add("constant", scalar, [], {"literal": literal.reshape(-1)[:1].reshape(())})
        return [ctx.add("broadcast", shape, [one], {"dimensions": ()})]
    return [ctx.add("constant", shape, [], {"literal": literal})]


def _is_splat(dense: Dense, itemsize: int) -> bool:
    """Whether a ``dense<...>`` gives one element for all (a lone text, or a blob of
    one element's bytes)."""
    value = dense.value
    if isinstance(value, tuple) and value and value[0] == "blob":
        return len(value[1]) - 2 == 2 * itemsize
    return not isinstance(value, list)


@converter("stablehlo.iota")
def _iota(ctx: OpContext) -> list:
    return [ctx.add("iota", ctx.result_shape(), [], {"iota_dimension": int(ctx.attr("iota_dimension", "dim"))})]


@converter("stablehlo.broadcast_in_dim")
def _broadcast_in_dim(ctx: OpContext) -> list:
    (x,) = ctx.operands
    return [broadcast_to(ctx, x, _ints(ctx.attr("broadcast_dimensions", "dims")), ctx.result_shape(),
                         always=True)]


def broadcast_to(ctx: OpContext, x, dims: tuple, shape: Shape, always: bool = False):
    """``x`` broadcast to ``shape``, operand dimension k becoming dimension
    ``dims[k]`` (``x`` itself when it has that shape already, unless ``always``)."""
    if not always and x.shape.compatible(shape):
        return x
    # StableHLO expands an operand dimension of size 1 to any size; HLO's broadcast
    # maps dimensions of equal size only: reshape the expanding ones away first.
    keep = [k for k, d in enumerate(dims) if k >= x.shape.rank or x.shape.dimensions[k] == shape.dimensions[d]]
    if len(keep) != len(dims) and len(dims) == x.shape.rank:
        x = ctx.add("reshape", Shape(x.shape.element_type, [x.shape.dimensions[k] for k in keep]), [x])
        dims = tuple(dims[k] for k in keep)
    return ctx.add("broadcast", shape, [x], {"dimensions": tuple(dims)})


@converter("stablehlo.broadcast")
def _broadcast(ctx: OpContext) -> list:
    # stablehlo.broadcast prepends broadcast_sizes: the operand maps to the trailing dims.
    shape = ctx.result_shape()
    rank = ctx.operands[0].shape.rank
    dims = tuple(range(shape.rank - rank, shape.rank))
    return [ctx.add("broadcast", shape, ctx.operands, {"dimensions": dims})]


@converter("stablehlo.reshape")
def _reshape(ctx: OpContext) -> list:
    return [ctx.add("reshape", ctx.result_shape(), ctx.operands)]


@converter("stablehlo.transpose")
def _transpose(ctx: OpContext) -> list:
    return [ctx.add("transpose", ctx.result_shape(), ctx.operands,
                    {"dimensions": _ints(ctx.attr("permutation", "dims"))})]


@converter("stablehlo.reverse")
def _reverse(ctx: OpContext) -> list:
    return [ctx.add("reverse", ctx.result_shape(), ctx.operands,
                    {"dimensions": _ints(ctx.attr("dimensions", "dims"))})]


@converter("stablehlo.slice")
def _slice(ctx: OpContext) -> list:
    index = ctx.items("index")
    if index:
        spec = tuple((g[0], g[1], g[2] if len(g) > 2 else 1) for g in index[0])
    else:
        starts = _ints(ctx.attr("start_indices"))
        limits = _ints(ctx.attr("limit_indices"))
        strides = _ints(ctx.attr("strides", default=[1] * len(starts)))
        spec = tuple(zip(starts, limits, strides))
    return [ctx.add("slice", ctx.result_shape(), ctx.operands, {"slice": spec})]


@converter("stablehlo.dynamic_slice")
def _dynamic_slice(ctx: OpContext) -> list:
    sizes = _ints(ctx.attr("slice_sizes", "sizes"))
    return [ctx.add("dynamic-slice", ctx.result_shape(), ctx.operands, {"dynamic_slice_sizes": sizes})]


@converter("stablehlo.dynamic_update_slice")
def _dynamic_update_slice(ctx: OpContext) -> list:
    return [ctx.add("dynamic-update-slice", ctx.result_shape(), ctx.operands)]


@converter("stablehlo.concatenate")
def _concatenate(ctx: OpContext) -> list:
    dim = ctx.attr("dimension", "dim")
    return [ctx.add("concatenate", ctx.result_shape(), ctx.operands, {"dimensions": _ints(dim)})]


@converter("stablehlo.pad")
def _pad(ctx: OpContext) -> list:
    lo = _ints(ctx.attr("edge_padding_low", "low"))
    hi = _ints(ctx.attr("edge_padding_high", "high"))
    interior = _ints(ctx.attr("interior_padding", "interior"))
    return [ctx.add("pad", ctx.result_shape(), ctx.operands, {"padding": tuple(zip(lo, hi, interior))})]


@converter("stablehlo.get_tuple_element")
def _gte(ctx: OpContext) -> list:
    index = ctx.items("index")
    k = index[0][0][0] if index else int(ctx.attr("index"))
    return [ctx.add("get-tuple-element", ctx.result_shape(), ctx.operands, {"index": k})]


@converter("stablehlo.tuple")
def _tuple(ctx: OpContext) -> list:
    return [ctx.add("tuple", Shape.tuple([o.shape for o in ctx.operands]), ctx.operands)]


@converter("stablehlo.optimization_barrier")
def _opt_barrier(ctx: OpContext) -> list:
    ops = ctx.operands
    t = ctx.add("tuple", Shape.tuple([o.shape for o in ops]), ops)
    return ctx.results_of(ctx.add("opt-barrier", t.shape, [t]))


@converter("stablehlo.after_all")
def _after_all(ctx: OpContext) -> list:
    return [ctx.add("after-all", Shape.token(), ctx.operands)]


@converter("stablehlo.create_token")
def _create_token(ctx: OpContext) -> list:
    """StableHLO's deprecated spelling of ``after_all()`` with no operands."""
    return [ctx.add("after-all", Shape.token(), [])]


@converter("stablehlo.replica_id")
def _replica_id(ctx: OpContext) -> list:
    return [ctx.add("replica-id", ctx.result_shape(), [])]


@converter("stablehlo.partition_id")
def _partition_id(ctx: OpContext) -> list:
    return [ctx.add("partition-id", ctx.result_shape(), [])]


@converter("stablehlo.get_dimension_size")
def _get_dimension_size(ctx: OpContext) -> list:
    return [ctx.add("get-dimension-size", ctx.result_shape(), ctx.operands,
                    {"dimensions": _ints(ctx.attr("dimension", "dim"))})]


@converter("stablehlo.set_dimension_size")
def _set_dimension_size(ctx: OpContext) -> list:
    return [ctx.add("set-dimension-size", ctx.result_shape(), ctx.operands,
                    {"dimensions": _ints(ctx.attr("dimension", "dim"))})]


@converter("stablehlo.reduce_precision")
def _reduce_precision(ctx: OpContext) -> list:
    fmt = ctx.attr("format", default=None)
    if fmt is not None:                           # pretty: format = e5m10
        text = _enum(fmt)
        e, m = text[1:].split("m")
        exponent, mantissa = int(e), int(m)
    else:
        exponent, mantissa = int(ctx.attr("exponent_bits")), int(ctx.attr("mantissa_bits"))
    return [ctx.add("reduce-precision", ctx.result_shape(), ctx.operands,
                    {"exponent_bits": exponent, "mantissa_bits": mantissa})]


@converter("stablehlo.cholesky")
def _cholesky(ctx: OpContext) -> list:
    return [ctx.add("cholesky", ctx.result_shape(), ctx.operands, {"lower": bool(ctx.attr("lower", default=False))})]


@converter("stablehlo.triangular_solve")
def _triangular_solve(ctx: OpContext) -> list:
    return [ctx.add("triangular-solve", ctx.result_shape(), ctx.operands, {
        "left_side": bool(ctx.attr("left_side")), "lower": bool(ctx.attr("lower")),
        "unit_diagonal": bool(ctx.attr("unit_diagonal")), "transpose_a": _enum(ctx.attr("transpose_a"))})]


@converter("stablehlo.fft")
def _fft(ctx: OpContext) -> list:
    return [ctx.add("fft", ctx.result_shape(), ctx.operands, {
        "fft_type": _enum(ctx.attr("fft_type", "type")), "fft_length": _ints(ctx.attr("fft_length", "length"))})]


_RNG_ALGORITHMS = {"DEFAULT": "rng_default", "THREE_FRY": "rng_three_fry", "PHILOX": "rng_philox"}


@converter("stablehlo.rng_bit_generator")
def _rng_bit_generator(ctx: OpContext) -> list:
    algorithm = _RNG_ALGORITHMS[_enum(ctx.attr("rng_algorithm", "algorithm"))]
    return ctx.multi("rng-bit-generator", ctx.operands, {"algorithm": algorithm})


@converter("stablehlo.rng")
def _rng(ctx: OpContext) -> list:
    a, b, shape_operand = ctx.operands
    if shape_operand.opcode != "constant":
        raise UnsupportedError("stablehlo.rng", "the shape operand must be a constant")
    return [ctx.add("rng", ctx.result_shape(), [a, b],
                    {"distribution": "rng_" + _enum(ctx.attr("rng_distribution", "distribution")).lower()})]


def _batch_norm(opcode: str):
    def convert(ctx: OpContext) -> list:
        attrs = {"epsilon": float(ctx.attr("epsilon")), "feature_index": int(ctx.attr("feature_index"))}
        return ctx.multi(opcode, ctx.operands, attrs)
    return convert


for _name, _opcode in (("stablehlo.batch_norm_training", "batch-norm-training"),
                       ("stablehlo.batch_norm_inference", "batch-norm-inference"),
                       ("stablehlo.batch_norm_grad", "batch-norm-grad")):
    converter(_name)(_batch_norm(_opcode))


# -- contractions ---------------------------------------------------------------------------
@converter("stablehlo.dot_general")
def _dot_general(ctx: OpContext) -> list:
    dn = ctx.attr("dot_dimension_numbers", default=None)
    if isinstance(dn, DialectAttr):
        f = _fields(dn)
        lb, rb = f.get("lhs_batching_dimensions", ()), f.get("rhs_batching_dimensions", ())
        lc, rc = f.get("lhs_contracting_dimensions", ()), f.get("rhs_contracting_dimensions", ())
    else:
        batching = ctx.attr("batching_dims", default=None)
        contracting = ctx.attr("contracting_dims")
        lb, rb = (_ints(batching[1]), _ints(batching[2])) if batching else ((), ())
        lc, rc = _ints(contracting[1]), _ints(contracting[2])
    attrs = {"lhs_batch_dims": tuple(lb), "rhs_batch_dims": tuple(rb),
             "lhs_contracting_dims": tuple(lc), "rhs_contracting_dims": tuple(rc)}
    algorithm = ctx.attr("algorithm", default=None)
    if algorithm is None:
        return [ctx.add("dot", ctx.result_shape(), ctx.operands, attrs)]
    return [_dot_with_algorithm(ctx, algorithm, attrs)]


def _dot_algorithm_types(algorithm) -> tuple:
    """``(lhs precision, rhs precision, accumulation)`` element types and the
    component counts of a ``#stablehlo.dot_algorithm<...>``."""
    body = algorithm.body if isinstance(algorithm, DialectAttr) else str(algorithm)
    fields = dict(re.findall(r"([a-z_]+)\s*=\s*([A-Za-z0-9_]+)", body or ""))
    try:
        types = tuple(element_type(fields[k]) for k in ("lhs_precision_type", "rhs_precision_type", "accumulation_type"))
    except KeyError as e:
        raise UnsupportedError("stablehlo.dot_general algorithm", f"<{body}> (no {e})") from None
    counts = (int(fields.get("lhs_component_count", 1)), int(fields.get("rhs_component_count", 1)))
    return types, counts


def _dot_with_algorithm(ctx: OpContext, algorithm, attrs: dict):
    """A dot whose algorithm names its precision and accumulation types: each operand
    rounded to its precision type (one component: e.g. BF16_BF16_F32 multiplies
    bf16-rounded f32 values, as XLA:CPU does), the products summed in the
    accumulation type, converted to the result type.  Algorithms of several
    components (BF16_BF16_F32_X3, ...) approximate the accumulation type's own
    product, which is what xlac computes for them."""
    (lhs_t, rhs_t, acc_t), counts = _dot_algorithm_types(algorithm)
    result = ctx.result_shape()
    operands = []
    for x, precision, count in zip(ctx.operands, (lhs_t, rhs_t), counts):
        if count == 1 and precision != x.shape.element_type:
            x = ctx.add("convert", x.shape.with_element_type(precision), [x])
        if x.shape.element_type != acc_t:
            x = ctx.add("convert", x.shape.with_element_type(acc_t), [x])
        operands.append(x)
    dot = ctx.add("dot", result.with_element_type(acc_t), operands, attrs)
    if acc_t == result.element_type:
        return dot
    return ctx.add("convert", result, [dot])


@converter("stablehlo.dot")
def _dot(ctx: OpContext) -> list:
    lhs, _ = ctx.operands
    attrs = {"lhs_contracting_dims": (lhs.shape.rank - 1,) if lhs.shape.rank else (),
             "rhs_contracting_dims": (0,) if lhs.shape.rank else ()}
    return [ctx.add("dot", ctx.result_shape(), ctx.operands, attrs)]


def _conv_labels(text: str) -> str:
    """``[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`` -> ``b01f_01io->b01f``."""
    text = text.replace(" ", "")
    lhs, rest = text.split("x", 1) if text.startswith("[") else (None, None)
    rhs, out = rest.split("->")
    return "_".join(p.strip("[]").replace(",", "") for p in (lhs, rhs)) + "->" + out.strip("[]").replace(",", "")


@converter("stablehlo.convolution")
def _convolution(ctx: OpContext) -> list:
    dn = ctx.attr("dimension_numbers", "dim_numbers")
    labels = _conv_labels(dn.text if isinstance(dn, Word) else dn.body)
    lhs, rhs = ctx.operands
    window = ctx.attr("window", default=None)
    if isinstance(window, dict):                   # pretty: window = {stride = [..], pad = [[..]], ...}
        get = window.get
        names = dict(strides="stride", padding="pad", lhs="lhs_dilate", rhs="rhs_dilate", rev="reverse")
    else:
        get = lambda k, d=None: ctx.attr(k, default=d)  # noqa: E731
        names = dict(strides="window_strides", padding="padding", lhs="lhs_dilation", rhs="rhs_dilation",
                     rev="window_reversal")
    kernel_spatial = [k for k, c in enumerate(labels.split("_")[1].split("->")[0]) if c.isdigit()]
    order = [int(c) for c in labels.split("_")[1].split("->")[0] if c.isdigit()]
    sizes = [0] * len(order)
    for dim, sp in zip(kernel_spatial, order):
        sizes[sp] = rhs.shape.dimensions[dim]
    n = len(sizes)
    strides = get(names["strides"])
    padding = get(names["padding"])
    lhs_d, rhs_d, rev = get(names["lhs"]), get(names["rhs"]), get(names["rev"])
    win = Window.make(sizes, _ints(strides) if strides is not None else None,
                      _pairs(padding) if padding is not None else None,
                      _ints(lhs_d) if lhs_d is not None else None, _ints(rhs_d) if rhs_d is not None else None,
                      _bools(rev) if rev is not None else None)
    attrs = {"window": Raw(format_window(win)) if n else Raw("{}"), "dim_labels": Raw(labels),
             "feature_group_count": int(ctx.attr("feature_group_count", default=1)),
             "batch_group_count": int(ctx.attr("batch_group_count", default=1))}
    if not n:
        del attrs["window"]
    return [ctx.add("convolution", ctx.result_shape(), ctx.operands, attrs)]


# -- gather / scatter -----------------------------------------------------------------------
@converter("stablehlo.gather")
def _gather(ctx: OpContext) -> list:
    f = _fields(ctx.attr("dimension_numbers"))
    attrs = {"offset_dims": f.get("offset_dims", ()), "collapsed_slice_dims": f.get("collapsed_slice_dims", ()),
             "start_index_map": f.get("start_index_map", ()), "index_vector_dim": f.get("index_vector_dim", 0),
             "slice_sizes": _ints(ctx.attr("slice_sizes")),
             "indices_are_sorted": bool(ctx.attr("indices_are_sorted", default=False))}
    for k in ("operand_batching_dims", "start_indices_batching_dims"):
        if f.get(k):
            attrs[k] = f[k]
    return [ctx.add("gather", ctx.result_shape(), ctx.operands, attrs)]


@converter("stablehlo.scatter")
def _scatter(ctx: OpContext) -> list:
    f = _fields(ctx.attr("scatter_dimension_numbers"))
    n = (len(ctx.operands) - 1) // 2
    elt = [Shape(o.shape.element_type, ()) for o in ctx.operands[:n]]
    attrs = {"update_window_dims": f.get("update_window_dims", ()),
             "inserted_window_dims": f.get("inserted_window_dims", ()),
             "scatter_dims_to_operand_dims": f.get("scatter_dims_to_operand_dims", ()),
             "index_vector_dim": f.get("index_vector_dim", 0),
             "indices_are_sorted": bool(ctx.attr("indices_are_sorted", default=False)),
             "unique_indices": bool(ctx.attr("unique_indices", default=False)),
             "to_apply": ctx.region_computation(0, "update", elt + elt)}
    for k in ("input_batching_dims", "scatter_indices_batching_dims"):
        if f.get(k):
            attrs[k] = f[k]
    return ctx.multi("scatter", ctx.operands, attrs)


# -- reductions and windows ----------------------------------------------------------------
def _scalars(insts) -> list:
    return [Shape(i.shape.element_type, ()) for i in insts]


def _applies(ctx: OpContext, body_op: str, shapes: list):
    """The computation of ``applies stablehlo.add``: the op on two scalars."""
    comp = ctx.imp.new_computation(body_op.split(".")[-1])
    a = ctx.imp.parameter(comp, 0, shapes[0], "lhs")
    b = ctx.imp.parameter(comp, 1, shapes[1], "rhs")
    opcode = {"stablehlo.and": "and", "stablehlo.or": "or", "stablehlo.xor": "xor"}.get(body_op) \
        or body_op.split(".")[-1].replace("_", "-")
    comp.root = ctx.imp.add(comp, opcode, shapes[0], [a, b], {}, ctx)
    return comp


def _reduce_inputs(ctx: OpContext):
    pairs = ctx.items("init")
    if not ctx.op.generic and pairs:
        look = ctx.scope.lookup
        return [look(p[0], ctx) for p in pairs], [look(p[1], ctx) for p in pairs]
    ops = ctx.operands
    n = len(ops) // 2
    return ops[:n], ops[n:]


def _reducer(ctx: OpContext, inits) -> object:
    shapes = _scalars(inits)
    words = ctx.words()
    if "applies" in words:
        return _applies(ctx, words[words.index("applies") + 1], shapes + shapes)
    return ctx.region_computation(0, "reducer", shapes + shapes)


@converter("stablehlo.reduce")
def _reduce(ctx: OpContext) -> list:
    inputs, inits = _reduce_inputs(ctx)
    attrs = {"dimensions": _ints(ctx.attr("dimensions")), "to_apply": _reducer(ctx, inits)}
    return ctx.multi("reduce", inputs + inits, attrs)


def _window(ctx: OpContext, sizes) -> Window:
    def opt(name, conv):
        v = ctx.attr(name, default=None)
        return conv(v) if v is not None else None
    return Window.make(sizes, opt("window_strides", _ints), opt("padding", _pairs), opt("base_dilations", _ints),
                       opt("window_dilations", _ints))


@converter("stablehlo.reduce_window")
def _reduce_window(ctx: OpContext) -> list:
    inputs, inits = _reduce_inputs(ctx)
    window = _window(ctx, _ints(ctx.attr("window_dimensions")))
    attrs = {"window": Raw(format_window(window)), "to_apply": _reducer(ctx, inits)}
    return ctx.multi("reduce-window", inputs + inits, attrs)


@converter("stablehlo.select_and_scatter")
def _select_and_scatter(ctx: OpContext) -> list:
    operand, source, init = ctx.operands
    s = _scalars([operand])
    window = _window(ctx, _ints(ctx.attr("window_dimensions")))
    attrs = {"window": Raw(format_window(window)),
             "select": ctx.region_computation(0, "select", s + s),
             "scatter": ctx.region_computation(1, "scatter", _scalars([source]) * 2)}
    return [ctx.add("select-and-scatter", ctx.result_shape(), ctx.operands, attrs)]


@converter("stablehlo.sort")
def _sort(ctx: OpContext) -> list:
    shapes = _scalars(ctx.operands)
    comparator = ctx.region_computation(0, "comparator", [s for s in shapes for _ in (0, 1)])
    attrs = {"dimensions": (int(ctx.attr("dimension", default=-1)) % max(ctx.operands[0].shape.rank, 1),),
             "is_stable": bool(ctx.attr("is_stable", default=False)), "to_apply": comparator}
    return ctx.multi("sort", ctx.operands, attrs)


@converter("stablehlo.map")
def _map(ctx: OpContext) -> list:
    comp = ctx.region_computation(0, "computation", _scalars(ctx.operands))
    return [ctx.add("map", ctx.result_shape(), ctx.operands,
                    {"dimensions": _ints(ctx.attr("dimensions")), "to_apply": comp})]


# -- control flow ---------------------------------------------------------------------------
def _call_results(ctx: OpContext, comp, operands, attrs: dict) -> list:
    shapes = ctx.result_shapes()
    if len(shapes) == 1:
        return [ctx.add("call", shapes[0], operands, {"to_apply": comp, **attrs})]
    call = ctx.add("call", comp.root.shape, operands, {"to_apply": comp, **attrs})
    return ctx.results_of(call, len(shapes))


@converter("func.call", "call")
def _func_call(ctx: OpContext) -> list:
    callee = ctx.attr("callee", default=None)
    name = callee.name if isinstance(callee, Symbol) else ctx.items("symbol")[0]
    return _call_results(ctx, ctx.imp.function(name), ctx.operands, {})


@converter("stablehlo.composite")
def _composite(ctx: OpContext) -> list:
    name = ctx.attr("name", default=None) or ctx.items("string")[0]
    decomposition = ctx.attr("decomposition")
    comp = ctx.imp.function(decomposition.name)
    frontend = [f"composite.name={_quote(name)}"]
    cattrs = ctx.attr("composite_attributes", default=None)
    if cattrs:
        frontend.append("composite.attributes={" + ", ".join(f"{k} = {_attr_text(v)}" for k, v in cattrs.items())
                        + "}")
    frontend.append(f"composite.version={_quote(str(int(ctx.attr('version', default=0))))}")
    return _call_results(ctx, comp, ctx.operands,
                         {"is_composite": True, "frontend_attributes": Raw("{" + ",".join(sorted(frontend)) + "}")})


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _attr_text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return _quote(v)
    if isinstance(v, Dense):
        return f"dense<{v.value}>"
    return str(v)


def _while_parts(ctx: OpContext):
    """(init values, their block-argument names) of a while in either form."""
    if ctx.op.generic:
        return ctx.operands, None
    pairs = ctx.items("bind")
    look = ctx.scope.lookup
    return [look(p[1], ctx) for p in pairs], [p[0] for p in pairs]


@converter("stablehlo.async_start")
def _async_start(ctx: OpContext) -> list:
    """An asynchronous computation (jax's ``all_gather_start``): its region is
    called where it starts (a device runs its program in order), and the
    ``!stablehlo.future`` is the call's value, a tuple when the region
    returns several."""
    comp = ctx.region_computation(0, "async", [o.shape for o in ctx.operands])
    return [ctx.add("call", comp.root.shape, ctx.operands, {"to_apply": comp})]


@converter("stablehlo.async_done")
def _async_done(ctx: OpContext) -> list:
    (future,) = ctx.operands
    count = len(ctx.result_types())
    return ctx.results_of(future, count) if count != 1 else [future]


@converter("stablehlo.while")
def _while(ctx: OpContext) -> list:
    inits, names = _while_parts(ctx)
    cond_b, body_b = ctx.op.regions
    if names is not None:                        # pretty: the iter args are the regions' arguments
        for b in (cond_b, body_b):
            if not b.args:
                b.args = [(n, None, None) for n in names]
    captures = [n for n in free_values([cond_b, body_b]) if _visible(ctx, n)]
    cap = [ctx.scope.lookup(n) for n in captures]
    shapes = [i.shape for i in inits]
    state = ctx.add("tuple", Shape.tuple(shapes + [c.shape for c in cap]), inits + cap)
    imp = ctx.imp
    cond = imp.region_computation(ctx, cond_b, "cond", shapes, captures, tuple_param=True)
    body = imp.region_computation(ctx, body_b, "body", shapes, captures, tuple_param=True, root_tuple=True)
    if cap:                                      # the body passes the captured values on unchanged
        root = body.root
        param = body.parameters[0]
        extra = [imp.add(body, "get-tuple-element", c.shape, [param], {"index": len(shapes) + k}, None)
                 for k, c in enumerate(cap)]
        elems = list(root.operands) + extra
        body.root = imp.add(body, "tuple", state.shape, elems, {}, None)
    loop = ctx.add("while", state.shape, [state], {"condition": cond, "body": body})
    return ctx.results_of(loop, len(shapes))


def _visible(ctx: OpContext, name: str) -> bool:
    try:
        ctx.scope.lookup(name)
        return True
    except ImportProblem:
        return False


def _branches(ctx: OpContext):
    captures = [n for n in free_values(ctx.op.regions) if _visible(ctx, n)]
    cap = [ctx.scope.lookup(n) for n in captures]
    arg = ctx.add("tuple", Shape.tuple([c.shape for c in cap]), cap)
    multi = len(ctx.result_types()) != 1
    comps = [ctx.imp.region_computation(ctx, b, f"branch_{k}", [], captures, tuple_param=True, root_tuple=multi)
             for k, b in enumerate(ctx.op.regions)]
    return arg, comps


@converter("stablehlo.case")
def _case(ctx: OpContext) -> list:
    arg, comps = _branches(ctx)
    return _conditional(ctx, [ctx.operands[0]] + [arg] * len(comps), {"branch_computations": tuple(comps)})


@converter("stablehlo.if")
def _if(ctx: OpContext) -> list:
    arg, (then, else_) = _branches(ctx)
    return _conditional(ctx, [ctx.operands[0], arg, arg], {"true_computation": then, "false_computation": else_})


def _conditional(ctx: OpContext, operands, attrs) -> list:
    shapes = ctx.result_shapes()
    if len(shapes) == 1:
        return [ctx.add("conditional", shapes[0], operands, attrs)]
    return ctx.results_of(ctx.add("conditional", Shape.tuple(shapes), operands, attrs), len(shapes))


# -- custom calls ---------------------------------------------------------------------------
_API_VERSIONS = {0: "API_VERSION_UNSPECIFIED", 1: "API_VERSION_ORIGINAL", 2: "API_VERSION_STATUS_RETURNING",
                 3: "API_VERSION_STATUS_RETURNING_UNIFIED", 4: "API_VERSION_TYPED_FFI"}


def _layouts(v) -> list:
    return [_ints(d) for d in v] if v is not None else None


@converter("stablehlo.custom_call")
def _custom_call(ctx: OpContext) -> list:
    target = ctx.attr("call_target_name", default=None) or ctx.items("symbol")[0]
    if target in CONVERTERS and target.startswith("mhlo."):
        # An MHLO op that StableHLO has not (mhlo.topk): serialising a program writes
        # it as a custom call to its name with its attributes in mhlo.attributes, and
        # XLA reads it back as the op.
        op = dataclasses.replace(ctx.op, name=target,
                                 attrs={**ctx.op.attrs, **(ctx.attr("mhlo.attributes", default=None) or {})})
        return CONVERTERS[target](OpContext(ctx.imp, op, ctx.scope))
    attrs = {"custom_call_target": Raw(_quote(target))}
    api = ctx.attr("api_version", default=None)
    if api is None and isinstance(ctx.attr("mhlo.backend_config", default=None), dict):
        api = 4             # a dictionary backend config is XLA's typed FFI (jax's lapack_*_ffi)
    if api is not None:
        attrs["api_version"] = _API_VERSIONS.get(int(api) if not isinstance(api, (Word, DialectAttr)) else
                                                 {"API_VERSION_TYPED_FFI": 4}.get(_enum(api), 1), "API_VERSION_ORIGINAL")
    config = ctx.op.attrs.get("mhlo.backend_config#text")
    if config is None:
        bc = ctx.attr("backend_config", default=None)
        if isinstance(bc, str) and bc:
            config = _quote(bc)
        elif isinstance(bc, dict):
            config = ctx.op.attrs.get("backend_config#text")
    if config is not None:
        attrs["backend_config"] = Raw(config)
    if ctx.attr("has_side_effect", default=False) is True:
        attrs["custom_call_has_side_effect"] = True
    sharding = ctx.attr("mhlo.sharding", default=None)
    if isinstance(sharding, str):
        attrs["sharding"] = Raw(sharding)
    called = ctx.attr("called_computations", default=None)
    if called:
        attrs["called_computations"] = tuple(ctx.imp.function(s.name) for s in called)
    operand_layouts = _layouts(ctx.attr("operand_layouts", default=None))
    result_layouts = _layouts(ctx.attr("result_layouts", default=None))
    if target in NO_OP_TARGETS:
        operand_layouts = None          # reads nothing (control_dep's operand may be a future)
    if operand_layouts is not None:
        # a token (io_callback's ordering operand) has no layout to constrain
        shapes = [Shape.array(o.shape.element_type, o.shape.dimensions, lay) if o.shape.is_array else o.shape
                  for o, lay in zip(ctx.operands, operand_layouts)]
        attrs["operand_layout_constraints"] = Raw("{" + ", ".join(str(s) for s in shapes) + "}")
    aliases = ctx.attr("output_operand_aliases", default=None)
    if aliases:
        parts = []
        for a in aliases:
            f = _fields(a)
            out = ",".join(map(str, f.get("output_tuple_indices", ())))
            opnd = ",".join(map(str, f.get("operand_tuple_indices", ())))
            parts.append(f"{{{out}}}: ({f.get('operand_index', 0)}, {{{opnd}}})")
        attrs["output_to_operand_aliasing"] = Raw("{" + ", ".join(parts) + "}")
    types = ctx.result_types()
    shapes = [ctx.shape_of(t, result_layouts[k] if result_layouts and ctx.shape_of(t).is_array else None)
              for k, t in enumerate(types)]
    if len(shapes) == 1:
        return [ctx.add("custom-call", shapes[0], ctx.operands, attrs)]
    call = ctx.add("custom-call", Shape.tuple(shapes), ctx.operands, attrs)
    return ctx.results_of(call)


# -- collectives -----------------------------------------------------------------------------
def _collective_attrs(ctx: OpContext) -> dict:
    attrs = {"replica_groups": ReplicaGroups.of(_groups(ctx.attr("replica_groups", default=[])))}
    handle = ctx.attr("channel_handle", default=None)
    if isinstance(handle, DialectAttr):
        h = _fields(handle).get("handle", 0)
        if h > 0:
            attrs["channel_id"] = h
    if ctx.attr("use_global_device_ids", default=False) is True:
        attrs["use_global_device_ids"] = True
    return attrs


@converter("stablehlo.all_reduce")
def _all_reduce(ctx: OpContext) -> list:
    attrs = _collective_attrs(ctx)
    attrs["to_apply"] = ctx.region_computation(0, "reduction", _scalars(ctx.operands[:1]) * 2)
    return ctx.multi("all-reduce", ctx.operands, attrs)


@converter("stablehlo.reduce_scatter")
def _reduce_scatter(ctx: OpContext) -> list:
    attrs = _collective_attrs(ctx)
    attrs["dimensions"] = _ints(ctx.attr("scatter_dimension"))
    attrs["to_apply"] = ctx.region_computation(0, "reduction", _scalars(ctx.operands[:1]) * 2)
    return ctx.multi("reduce-scatter", ctx.operands, attrs)


@converter("stablehlo.all_gather")
def _all_gather(ctx: OpContext) -> list:
    attrs = _collective_attrs(ctx)
    attrs["dimensions"] = _ints(ctx.attr("all_gather_dim"))
    return ctx.multi("all-gather", ctx.operands, attrs)


@converter("stablehlo.all_to_all")
def _all_to_all(ctx: OpContext) -> list:
    """HLO's all-to-all splits and concatenates one dimension; with another
    concat dimension (``lax.all_to_all(x, name, split_axis, concat_axis)``)
    the blocks it leaves along the split one are regrouped, as XlaBuilder's
    ``AllToAll`` does (``collectives.all_to_all_regroup``)."""
    split, concat = int(ctx.attr("split_dimension")), int(ctx.attr("concat_dimension"))
    attrs = _collective_attrs(ctx)
    attrs["dimensions"] = (split,)
    if split == concat:
        return ctx.multi("all-to-all", ctx.operands, attrs)
    xs = ctx.operands
    if len(xs) == 1:
        moved = [ctx.add("all-to-all", xs[0].shape, xs, attrs)]
    else:
        moved = ctx.results_of(ctx.add("all-to-all", Shape.tuple([x.shape for x in xs]), xs, attrs))
    out = []
    for y in moved:
        t = y.shape.element_type
        blocked, perm, final = all_to_all_regroup(y.shape.dimensions, split, concat, int(ctx.attr("split_count")))
        y = ctx.add("reshape", Shape(t, blocked), [y])
        y = ctx.add("transpose", Shape(t, [blocked[p] for p in perm]), [y], {"dimensions": tuple(perm)})
        out.append(ctx.add("reshape", Shape(t, final), [y]))
    return out


@converter("stablehlo.collective_permute")
def _collective_permute(ctx: OpContext) -> list:
    attrs = {"source_target_pairs": tuple(_pairs(ctx.attr("source_target_pairs")))}
    handle = ctx.attr("channel_handle", default=None)
    if isinstance(handle, DialectAttr) and _fields(handle).get("handle", 0) > 0:
        attrs["channel_id"] = _fields(handle)["handle"]
    return [ctx.add("collective-permute", ctx.result_shape(), ctx.operands, attrs)]


# The dynamic-shape ops need HLO opcodes another change adds (dynamic-reshape,
# real-dynamic-slice); until then they are refused by name, as every op
# without a converter is.
