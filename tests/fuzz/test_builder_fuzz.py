"""Builder fuzzer: random — mostly invalid — configurations of the ``xlac.ops``
functions, with integer arguments.

Contract (README "Errors", the ops module docstring): an ill-shaped op raises
``xlac.ShapeError`` at build time whose message names the op (its Python name
or its HLO opcode); nothing else escapes (no IndexError, KeyError,
AssertionError, a plain TypeError or ValueError for integer arguments, ...).
A configuration with a non-integer where integers belong may raise TypeError
(naming the op) instead.  A configuration the builder accepts must verify,
evaluate, and JIT to what the evaluator computes on random inputs.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, note, strategies as st

import xlac
from xlac import ops
from xlac.hlo.verifier import verify
from fuzzconf import RTOL, describe_inputs, fuzz_settings, jit_or_unsupported, leaves, mismatch, random_array
from graphs import reducer

SETTINGS = fuzz_settings(ci=400, long=20_000)
TYPES = ("f32", "s32", "pred", "f64", "u8", "bf16")
SIZES = (2, 1, 3, 0, 4)


class Config:
    """Draws for one op configuration: operand shapes, parameters and argument lists."""

    def __init__(self, data):
        self.data = data
        self.b = xlac.XlaBuilder("fuzz")
        self.params: list[tuple[str, tuple]] = []
        self.non_integer = False          # a non-integer was drawn where integers belong

    def draw(self, strategy):
        return self.data.draw(strategy)

    def choice(self, seq):
        return self.draw(st.sampled_from(list(seq)))

    def flag(self, p_true_in_8: int = 4) -> bool:
        return self.draw(st.integers(0, 7)) < p_true_in_8

    def int_(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def dims(self, rank: int | None = None) -> tuple:
        rank = self.int_(0, 3) if rank is None else rank
        return tuple(self.choice(SIZES) for _ in range(rank))

    def permutation(self, n: int) -> list:
        return list(self.draw(st.permutations(range(n))))

    def subset(self, items) -> list:
        return [x for x in items if self.flag()]

    def vary_one(self, value: int, lo: int, hi: int):
        """A valid integer argument as is half of the time, else another integer in
        ``[lo, hi]`` or (rarely) no integer at all."""
        how = self.int_(0, 15)
        if how < 8:
            return value
        if how < 15:
            return self.int_(lo, hi)
        self.non_integer = True
        return self.choice((1.5, None, "1"))

    def vary(self, values: list, lo: int, hi: int, of_lists: bool = False) -> list:
        """``values`` (a valid argument list) as is half of the time, else with one
        change: an entry set to an integer in ``[lo, hi]``, dropped or added, or
        (rarely) replaced by something that is no integer at all.  ``of_lists``:
        the entries are lists (padding pairs), so an integer entry is of the wrong kind."""
        values = list(values)
        how = self.int_(0, 15)
        if how < 8:
            return values
        if how < 12 and values:
            k = self.int_(0, len(values) - 1)
            self.non_integer |= of_lists
            values[k] = self.int_(lo, hi)
        elif how < 14 and values:
            del values[self.int_(0, len(values) - 1)]
        elif how < 15:
            self.non_integer |= of_lists
            values.insert(self.int_(0, len(values)), self.int_(lo, hi))
        elif values:
            values[self.int_(0, len(values) - 1)] = self.choice((1.5, None, "1"))
            self.non_integer = True
        return values

    def param(self, et: str | None = None, dims: tuple | None = None):
        et = et or self.choice(TYPES)
        dims = self.dims() if dims is None else tuple(dims)
        shape = xlac.Shape(xlac.PrimitiveType.from_name(et), dims)
        self.params.append((et, dims))
        return ops.parameter(self.b, len(self.params) - 1, shape, f"p{len(self.params) - 1}")

    def like(self, x, change: int = 2):
        """A parameter of ``x``'s shape, or (sometimes) of a slightly different one."""
        et, dims = x.shape.element_type.value, list(x.shape.dimensions)
        if self.flag(change):
            what = self.int_(0, 2)
            if what == 0:
                et = self.choice(TYPES)
            elif what == 1 and dims:
                dims[self.int_(0, len(dims) - 1)] = self.choice(SIZES)
            else:
                dims = list(self.dims())
        return self.param(et, dims)

    def scalar(self, et: str):
        return ops.constant(self.b, np.array(self.choice((0, 1, 2))).astype(_dtype(et)))

    def computation(self, et: str, arity: int = 2, result_tuple: bool = False, types=TYPES):
        """A scalar reducer-like computation, sometimes of a wrong type (one of
        ``types``) or arity."""
        if self.flag(1):
            et = self.choice(types)
        if self.flag(1):
            arity = self.int_(1, 3)
        name = {"pred": "or_"}.get(et, "add")
        if arity == 2 and not result_tuple:
            return reducer(et, name)
        cb = xlac.XlaBuilder("comp")
        s = xlac.Shape(xlac.PrimitiveType.from_name(et), ())
        ps = [ops.parameter(cb, k, s) for k in range(arity)]
        out = ps[0] if arity == 1 else getattr(ops, name)(ps[0], ps[1])
        return cb.build(ops.tuple(cb, [out]) if result_tuple else out)


def _dtype(et: str) -> np.dtype:
    return xlac.Shape(xlac.PrimitiveType.from_name(et), ()).dtype


def _rank(x) -> int:
    return len(x.shape.dimensions) if x.shape.is_array else 0


# ---------------------------------------------------------------------------
# one function per op: draw a configuration, return (names, thunk that builds it)
# ---------------------------------------------------------------------------

def c_broadcast_in_dim(c: Config):
    x = c.param()
    r = _rank(x)
    out_rank = r + c.int_(0, 2)
    bd = sorted(c.permutation(out_rank)[:r])
    out = list(c.dims(out_rank))
    for i, d in enumerate(bd):
        out[d] = x.shape.dimensions[i] if c.flag(6) else out[d]
    out, bd = c.vary(out, -1, 4), c.vary(bd, -1, out_rank)
    return ("broadcast_in_dim", "broadcast"), lambda: ops.broadcast_in_dim(x, out, bd)


def c_broadcast(c: Config):
    x = c.param()
    sizes = c.vary(list(c.dims(c.int_(0, 2))), -2, 3)
    return ("broadcast",), lambda: ops.broadcast(x, sizes)


def _factor(c: Config, n: int) -> list:
    dims = [1] * c.int_(1, 3)
    if n == 0:
        dims[c.int_(0, len(dims) - 1)] = 0
    p = 2
    while n > 1:
        while n % p:
            p += 1
        n //= p
        dims[c.int_(0, len(dims) - 1)] *= p
    return dims


def c_reshape(c: Config):
    x = c.param()
    sizes = c.vary(_factor(c, int(np.prod(x.shape.dimensions))), -1, 6)
    if c.flag(2):
        perm = c.vary(c.permutation(_rank(x)), -1, _rank(x))
        return ("reshape", "transpose"), lambda: ops.reshape(x, perm, sizes)
    return ("reshape",), lambda: ops.reshape(x, sizes)


def c_collapse(c: Config):
    x = c.param()
    r = _rank(x)
    lo = c.int_(0, max(r - 1, 0))
    dims = c.vary(list(range(lo, c.int_(lo, r))), -1, 3)
    return ("collapse", "reshape"), lambda: ops.collapse(x, dims)


def c_transpose(c: Config):
    x = c.param()
    perm = c.vary(c.permutation(_rank(x)), -1, _rank(x))
    return ("transpose",), lambda: ops.transpose(x, perm)


def c_rev(c: Config):
    x = c.param()
    dims = c.vary(c.subset(range(_rank(x))), -1, 3)
    return ("rev", "reverse"), lambda: ops.rev(x, dims)


def _slice_config(c: Config, n: int) -> tuple:
    lo = c.int_(0, n)
    return lo, c.int_(lo, n), c.int_(1, 3)


def c_slice(c: Config):
    x = c.param()
    config = [_slice_config(c, n) for n in x.shape.dimensions]
    start, limit, strides = (c.vary([t[k] for t in config], -1, 5) for k in range(3))
    if c.flag(2):
        return ("slice",), lambda: ops.slice(x, start, limit)
    return ("slice",), lambda: ops.slice(x, start, limit, strides)


def c_slice_in_dim(c: Config):
    x = c.param()
    r = _rank(x)
    dimno = c.int_(0, r - 1) if r and c.flag(6) else c.int_(-1, 3)
    n = x.shape.dimensions[dimno] if 0 <= dimno < r else 2
    args = [c.vary_one(v, -1, 5) for v in _slice_config(c, n)] + [dimno]
    return ("slice_in_dim", "slice"), lambda: ops.slice_in_dim(x, *args)


def c_pad(c: Config):
    x = c.param()
    et = x.shape.element_type.value if c.flag(7) else c.choice(TYPES)
    config = [c.vary([c.int_(-1, 2), c.int_(-1, 2), c.int_(0, 2)], -3, 3) for _ in x.shape.dimensions]
    if c.flag(1):
        config = c.vary(config, -1, 1, of_lists=True)      # an entry missing, or a bare integer
    value = c.scalar(et)
    return ("pad",), lambda: ops.pad(x, value, config)


def c_concat_in_dim(c: Config):
    x = c.param()
    r = _rank(x)
    d = c.int_(0, r - 1) if r and c.flag(7) else c.int_(-1, 3)
    others = []
    for _ in range(c.int_(0, 2)):
        dims = list(x.shape.dimensions)
        if 0 <= d < r:
            dims[d] = c.choice(SIZES)
        others.append(c.like(c.param(x.shape.element_type.value, dims), change=1))
    return ("concat_in_dim", "concatenate"), lambda: ops.concat_in_dim(c.b, [x] + others, d)


def c_reduce(c: Config):
    x = c.param()
    et = x.shape.element_type.value
    init = c.scalar(et if c.flag(7) else c.choice(TYPES))
    comp = c.computation(et, result_tuple=c.flag(1))
    dims = c.vary(c.subset(range(_rank(x))), -1, 3)
    return ("reduce",), lambda: ops.reduce(x, init, comp, dims)


def c_dot_general(c: Config):
    et = c.choice(("f32", "s32", "f64", "bf16", "pred"))
    lhs_dims = c.dims(c.int_(1, 3))
    r = len(lhs_dims)
    contracting = c.subset(range(r))[:2]
    batch = [d for d in range(r) if d not in contracting][:c.int_(0, 1)]
    free = list(c.dims(c.int_(0, 1)))
    rhs_dims = [lhs_dims[d] for d in batch] + [lhs_dims[d] for d in contracting] + free
    x, y = c.param(et, lhs_dims), c.param(et if c.flag(7) else c.choice(TYPES), rhs_dims)
    nb = len(batch)
    dn = {"lhs_contracting_dimensions": c.vary(contracting, -1, 3),
          "rhs_contracting_dimensions": c.vary(list(range(nb, nb + len(contracting))), -1, 3),
          "lhs_batch_dimensions": c.vary(batch, -1, 3), "rhs_batch_dimensions": c.vary(list(range(nb)), -1, 3)}
    return ("dot_general", "dot"), lambda: ops.dot_general(x, y, dn)


def c_dot(c: Config):
    x = c.param(c.choice(("f32", "s32")), c.dims(c.int_(1, 2)))
    k = x.shape.dimensions[-1]
    y = c.like(c.param(x.shape.element_type.value, (k,) + c.dims(c.int_(0, 1))), change=2)
    return ("dot",), lambda: ops.dot(x, y)


def c_gather(c: Config):
    """A valid gather (as in graphs.op_gather), then maybe one attribute varied."""
    x = c.param(c.choice(("f32", "s32", "pred")), c.dims(c.int_(1, 3)))
    dims = x.shape.dimensions
    r = len(dims)
    start_index_map = c.permutation(r)[:c.int_(1, r)]
    collapsed = c.subset(range(r))
    sizes = [min(1, dims[d]) if d in collapsed else c.int_(0, dims[d]) for d in range(r)]
    batch = c.dims(c.int_(0, 2))
    idx = c.param(c.choice(("s32", "s32", "u8", "f32")), batch + (len(start_index_map),))
    out_rank = len(batch) + r - len(collapsed)
    dn = {"offset_dims": c.vary(sorted(c.permutation(out_rank)[:r - len(collapsed)]), -1, out_rank + 1),
          "collapsed_slice_dims": c.vary(collapsed, -1, r),
          "start_index_map": c.vary(start_index_map, -1, r),
          "index_vector_dim": c.vary_one(len(batch), -1, len(batch) + 2) if c.flag(6) else c.int_(-1, 3)}
    sizes = c.vary(sizes, -1, 4)
    return ("gather",), lambda: ops.gather(x, idx, dn, sizes)


def c_scatter(c: Config):
    """A valid scatter (update windows of the operand at scattered starts), then maybe varied."""
    et = c.choice(("f32", "s32"))
    x = c.param(et, c.dims(c.int_(1, 3)))
    dims = x.shape.dimensions
    r = len(dims)
    to_operand = c.permutation(r)[:c.int_(1, r)]
    inserted = [d for d in c.subset(range(r)) if dims[d] >= 1]
    window = [c.int_(0, dims[d]) for d in range(r) if d not in inserted]
    batch = c.dims(c.int_(0, 2))
    idx = c.param(c.choice(("s32", "s32", "u8")), batch + (len(to_operand),))
    window_pos = sorted(c.permutation(len(batch) + len(window))[:len(window)])
    upd_dims, wi, bi = [], iter(window), iter(batch)
    for p in range(len(batch) + len(window)):
        upd_dims.append(next(wi) if p in window_pos else next(bi))
    upd = c.like(c.param(et, upd_dims), change=1)
    comp = c.computation(et)
    kw = {"index_vector_dim": c.vary_one(len(batch), -1, len(batch) + 2),
          "update_window_dims": c.vary(window_pos, -1, 3),
          "inserted_window_dims": c.vary(inserted, -1, r),
          "scatter_dims_to_operand_dims": c.vary(to_operand, -1, r)}
    return ("scatter",), lambda: ops.scatter(x, idx, upd, comp, **kw)


def c_dynamic_slice(c: Config):
    x = c.param()
    r = _rank(x)
    et = c.choice(("s32", "s32", "u8", "f32"))
    n = r + (c.choice((-1, 1)) if c.flag(1) else 0)
    starts = [c.param(et if c.flag(7) else c.choice(TYPES), ()) for _ in range(n)]
    sizes = c.vary([c.int_(0, d) for d in x.shape.dimensions], -1, 5)
    return ("dynamic_slice", "dynamic-slice"), lambda: ops.dynamic_slice(x, starts, sizes)


def c_dynamic_update_slice(c: Config):
    x = c.param()
    update = c.param(x.shape.element_type.value if c.flag(7) else c.choice(TYPES),
                     tuple(min(n, c.choice(SIZES)) for n in x.shape.dimensions) if c.flag(6) else c.dims())
    starts = [c.param(c.choice(("s32", "s32", "u8", "f32")), ()) for _ in range(_rank(x))]
    return ("dynamic_update_slice", "dynamic-update-slice"), lambda: ops.dynamic_update_slice(x, update, starts)


def c_conv_general_dilated(c: Config):
    """A valid convolution (bf01_oi01->bf01, groups), then maybe varied."""
    n = c.int_(1, 2)
    groups = c.choice((1, 1, 2))
    batch_groups = 1 if groups > 1 or c.flag(6) else 2
    cin, cout = groups * c.int_(1, 2), groups * batch_groups * c.int_(1, 2)
    spatial = c.dims(n)
    kernel = tuple(c.int_(1, max(1, s)) for s in spatial)
    et = c.choice(("f32", "f32", "s32", "bf16"))
    lhs = c.param(et, (batch_groups * c.int_(1, 2), cin) + spatial)
    rhs = c.like(c.param(et, (cout, cin // groups) + kernel), change=1)
    strides = c.vary([c.int_(1, 2) for _ in range(n)], -1, 3)
    padding = c.choice(("SAME", "VALID")) if c.flag(2) else \
        c.vary([c.vary([c.int_(0, 1), c.int_(0, 1)], -2, 2) for _ in range(n)], 0, 1, of_lists=True)
    lhs_dil = c.vary([1] * n if isinstance(padding, str) else [c.int_(1, 2) for _ in range(n)], -1, 2)
    rhs_dil = c.vary([c.int_(1, 2) for _ in range(n)], -1, 2)
    groups, batch_groups = (c.vary([groups, batch_groups], 0, 3) + [1, 1])[:2]
    return ("conv_general_dilated", "convolution"), lambda: ops.conv_general_dilated(
        lhs, rhs, strides, padding, lhs_dil, rhs_dil, None, groups, batch_groups)


def c_reduce_window(c: Config):
    x = c.param(c.choice(("f32", "s32", "f64")))
    r = _rank(x)
    init = c.scalar(x.shape.element_type.value if c.flag(7) else c.choice(TYPES))
    comp = c.computation(x.shape.element_type.value)
    window = c.vary([c.int_(1, max(1, n)) for n in x.shape.dimensions], -1, 3)
    strides = c.vary([c.int_(1, 2) for _ in range(r)], -1, 3)
    base, wdil = c.vary([c.int_(1, 2) for _ in range(r)], -1, 2), c.vary([c.int_(1, 2) for _ in range(r)], -1, 2)
    padding = c.choice(("SAME", "VALID")) if c.flag(2) else \
        c.vary([c.vary([c.int_(0, 1), c.int_(0, 1)], -2, 2) for _ in range(r)], 0, 1, of_lists=True)
    return ("reduce_window", "reduce-window"), lambda: ops.reduce_window(
        x, init, comp, window, strides, base, wdil, padding)


def c_select(c: Config):
    a = c.param()
    b = c.like(a, change=2)
    p = c.param("pred" if c.flag(6) else c.choice(TYPES),
                a.shape.dimensions if c.flag(5) else () if c.flag() else c.dims())
    return ("select",), lambda: ops.select(p, a, b)


def c_clamp(c: Config):
    x = c.param(c.choice(("f32", "s32", "u8", "pred")))
    lo = c.like(x, change=3) if c.flag() else c.scalar(x.shape.element_type.value)
    hi = c.like(x, change=3) if c.flag() else c.scalar(x.shape.element_type.value)
    return ("clamp",), lambda: ops.clamp(lo, x, hi)


def c_binary(c: Config):
    x = c.param()
    bd = None
    if c.flag(3):                           # lower rank, broadcast along some dimensions
        bd = c.subset(range(_rank(x)))
        y = c.like(c.param(x.shape.element_type.value, [x.shape.dimensions[d] for d in bd]), change=1)
        bd = c.vary(bd, -1, 3)
    else:
        y = c.like(x, change=3)
    name = c.choice(("add", "sub", "mul", "max", "and_", "shift_left", "atan2", "rem", "pow", "div"))
    return (name,), lambda: getattr(ops, name)(x, y, bd)


def c_compare(c: Config):
    x = c.param()
    y = c.like(x, change=2)
    direction = c.choice(("EQ", "LT", "GE", "ne", "XX") if c.flag(1) else ("EQ", "LT", "GE", "ne"))
    ctype = c.choice(("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED", "BOGUS")) if c.flag(2) else None
    return ("compare",), lambda: ops.compare(x, y, direction, compare_type=ctype)


def c_convert(c: Config):
    x = c.param()
    et = xlac.PrimitiveType.from_name(c.choice(TYPES + ("s8", "f16", "u32", "c64")))
    if c.flag():
        return ("bitcast_convert_type", "bitcast-convert"), lambda: ops.bitcast_convert_type(x, et)
    return ("convert_element_type", "convert"), lambda: ops.convert_element_type(x, et)


def c_reduce_precision(c: Config):
    x = c.param()
    e, m = c.int_(-1, 9), c.int_(-1, 24)
    return ("reduce_precision", "reduce-precision"), lambda: ops.reduce_precision(x, e, m)


def c_iota(c: Config):
    shape = xlac.Shape(xlac.PrimitiveType.from_name(c.choice(TYPES)), c.dims(c.int_(1, 3)))
    d = c.vary_one(c.int_(0, len(shape.dimensions) - 1), -1, 3)
    return ("iota",), lambda: ops.iota(c.b, shape, d)


def c_sort(c: Config):
    x = c.param()
    others = [c.like(x, change=2) for _ in range(c.int_(0, 1))]
    d = c.vary_one(c.int_(-1, max(_rank(x) - 1, 0)), -2, 3)
    comparator = None                       # the default: ascending by the first operand
    et = x.shape.element_type.value
    if c.flag(2):                           # not pred-valued, or of a wrong arity: invalid
        comparator = c.computation(et if et != "pred" else "s32", arity=2 * (1 + len(others)),
                                   types=[t for t in TYPES if t != "pred"])
    elif c.flag(2):                         # a strict weak order of its own (sort needs one)
        comparator = _less_than(et, 1 + len(others))
    return ("sort",), lambda: ops.sort([x] + others if others else x, comparator, d)


def _less_than(et: str, n: int):
    """``lhs.0 > rhs.0``: a descending sort on the first of ``n`` operands."""
    cb = xlac.XlaBuilder("greater")
    s = xlac.Shape(xlac.PrimitiveType.from_name(et), ())
    ps = [ops.parameter(cb, k, s) for k in range(2 * n)]
    return cb.build(ops.gt(ps[0], ps[1]))


def c_top_k(c: Config):
    x = c.param(c.choice(("f32", "s32", "pred", "bf16")))
    last = x.shape.dimensions[-1] if _rank(x) else 1
    k = c.vary_one(c.int_(0, last), -1, 5)
    largest = c.flag()
    return ("top_k", "topk"), lambda: ops.top_k(x, k, largest)


def c_get_tuple_element(c: Config):
    x = c.param()
    n = c.int_(0, 2)
    t = ops.tuple(c.b, [x] * n) if c.flag(6) else x
    i = c.vary_one(c.int_(0, max(n - 1, 0)), -1, 3)
    return ("get_tuple_element", "get-tuple-element"), lambda: ops.get_tuple_element(t, i)


def c_map(c: Config):
    x = c.param()
    others = [c.like(x, change=2) for _ in range(c.int_(0, 1))]
    comp = c.computation(x.shape.element_type.value, arity=1 + len(others))
    dims = None if c.flag() else c.vary(list(range(_rank(x))), -1, 3)
    return ("map",), lambda: ops.map(c.b, [x] + others, comp, dims)


def c_select_and_scatter(c: Config):
    et = c.choice(("f32", "s32"))
    x = c.param(et)
    r = _rank(x)
    select = c.computation(et)                   # wrong: select must return pred
    if c.flag(6):
        cb = xlac.XlaBuilder("select")
        s = xlac.Shape(xlac.PrimitiveType.from_name(et), ())
        select = cb.build(ops.ge(ops.parameter(cb, 0, s), ops.parameter(cb, 1, s)))
    window = [c.int_(1, max(n, 1)) for n in x.shape.dimensions]
    strides = [1] * r if c.flag() else list(window)
    padding = c.choice(("VALID", "SAME"))
    source_dims = [(n - w) // s + 1 if n >= w else 0 for n, w, s in zip(x.shape.dimensions, window, strides)]
    if padding == "SAME":
        source_dims = [-(-n // s) for n, s in zip(x.shape.dimensions, strides)]
    source = c.like(c.param(et, source_dims), change=1)
    window, strides = c.vary(window, -1, 3), c.vary(strides, -1, 3)
    init = c.scalar(et)
    scatter = c.computation(et)
    return ("select_and_scatter", "select-and-scatter"), lambda: ops.select_and_scatter(
        x, select, window, strides, padding, source, init, scatter)


def c_while_loop(c: Config):
    """A counting loop (3 iterations when valid) whose signatures are sometimes wrong."""
    state = xlac.shape("(s32[], f32[2])") if c.flag(6) else xlac.shape("(s32[], f32[3])")
    cb = xlac.XlaBuilder("cond")
    cp = ops.parameter(cb, 0, state)
    cond = cb.build(ops.lt(ops.get_tuple_element(cp, 0), 3) if c.flag(7) else ops.get_tuple_element(cp, 0))
    bb = xlac.XlaBuilder("body")
    bp = ops.parameter(bb, 0, xlac.shape("(s32[], f32[2])") if c.flag(7) else state)
    i, v = ops.get_tuple_element(bp, 0), ops.get_tuple_element(bp, 1)
    body = bb.build(ops.tuple(bb, [ops.add(i, 1), ops.mul(v, 2.0)]))
    init = ops.tuple(c.b, [ops.constant(c.b, np.int32(0)), c.param("f32", (2,))])
    return ("while_loop", "while"), lambda: ops.while_loop(cond, body, init)


def c_fft(c: Config):
    """A valid transform over the last 1-3 dimensions, then maybe varied."""
    kind = c.choice(("FFT", "IFFT", "RFFT", "IRFFT"))
    n = c.int_(1, 3)
    lengths = [c.int_(1, 4) for _ in range(n)]
    batch = c.dims(c.int_(0, 1))
    if kind == "RFFT":
        et, last = c.choice(("f32", "f64")), lengths[-1]
    else:
        et, last = c.choice(("c64", "c128")), lengths[-1] // 2 + 1 if kind == "IRFFT" else lengths[-1]
    x = c.like(c.param(et, batch + tuple(lengths[:-1]) + (last,)), change=1)
    lengths = c.vary(lengths, -1, 5)
    return ("fft",), lambda: ops.fft(x, kind, lengths)


CASES = {f.__name__[2:]: f for f in (
    c_broadcast_in_dim, c_broadcast, c_reshape, c_collapse, c_transpose, c_rev, c_slice, c_slice_in_dim,
    c_pad, c_concat_in_dim, c_reduce, c_dot_general, c_dot, c_gather, c_scatter, c_dynamic_slice,
    c_dynamic_update_slice, c_conv_general_dilated, c_reduce_window, c_select, c_clamp, c_binary,
    c_compare, c_convert, c_reduce_precision, c_iota, c_sort, c_top_k, c_get_tuple_element, c_map,
    c_select_and_scatter, c_while_loop, c_fft)}


# ---------------------------------------------------------------------------
# the check
# ---------------------------------------------------------------------------

def _tolerance(out_leaf) -> float:
    """Float results may be reassociated (dot, conv, reductions): compare within RTOL."""
    et = out_leaf.dtype
    name = xlac.PrimitiveType.from_dtype(et).value
    return RTOL.get(name, 0.0)


def check_config(data, name: str) -> None:
    c = Config(data)
    names, build = CASES[name](c)
    note(f"op: {name}")
    try:
        out = build()
    except xlac.ShapeError as e:
        assert any(n in str(e) for n in names), f"ShapeError does not name the op ({names}): {e}"
        return
    except TypeError as e:
        assert c.non_integer, f"TypeError for integer arguments (expected ShapeError): {e}"
        assert any(n in str(e) for n in names), f"TypeError does not name the op ({names}): {e}"
        return
    comp = c.b.build(out)
    note(f"HLO:\n{comp.as_hlo_text()}")
    verify(comp.module)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    args = [random_array(rng, et, dims, special=False) for et, dims in c.params]
    note(f"inputs:\n{describe_inputs(args)}")
    with np.errstate(all="ignore"):
        want = leaves(xlac.evaluate(comp, *args))
    exe = jit_or_unsupported(comp)
    if exe is None:
        return
    got = leaves(exe(*args))
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        why = mismatch(g, w, _tolerance(w) if hasattr(w, "dtype") else 0.0)
        assert why is None, f"jit differs from the evaluator in result {k}: {why}"


@SETTINGS
@given(st.data())
def test_builder_shape_ops(data):
    check_config(data, data.draw(st.sampled_from(
        ["broadcast_in_dim", "broadcast", "reshape", "collapse", "transpose", "rev", "slice", "slice_in_dim",
         "pad", "concat_in_dim", "select", "clamp", "binary", "compare", "convert", "reduce_precision",
         "iota", "get_tuple_element", "map"])))


@SETTINGS
@given(st.data())
def test_builder_indexing_and_reduction_ops(data):
    check_config(data, data.draw(st.sampled_from(
        ["reduce", "dot_general", "dot", "gather", "scatter", "dynamic_slice", "dynamic_update_slice",
         "conv_general_dilated", "reduce_window", "sort", "top_k", "select_and_scatter", "while_loop",
         "fft"])))
