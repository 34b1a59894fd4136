"""Small random programs over ``jax.lax``'s API and the numpy-style operators of traced
values, which run unchanged on jax (``jax.jit``, ``jax.lax``) and on xlac (``xlac.jit``,
``xlac.lax``): the lax-semantics fuzzer's programs (test_lax_programs.py) and the
generator of its jax expectations (generate_lax_programs.py).

This module imports numpy only (and ml_dtypes for bf16), so the generator runs where
jax is installed and xlac is not.

A program is JSON data: ``inputs`` (element type and shape of each argument; the
scalar ``s32`` ones serve as run-time indices) and ``steps``, each computing one value
from earlier ones (by number: the inputs first) or Python literals (weakly typed):

* ``bin``: a numpy-style binary operator (``+ - * / // % < == & | ^``), operands of
  mixed types and Python scalars, so the result type is jax's promotion;
* ``un``: ``-x``, ``abs(x)``, ``~x``, ``x ** k``;
* ``reduce``: ``x.sum/prod/max/min/mean/any/all(axis)``;
* ``dslice`` / ``dus``: ``lax.dynamic_slice`` / ``dynamic_update_slice`` at start
  indices that are literals or run-time indices, negative ones included;
* ``index``: ``x[i]`` for a run-time index ``i``;
* ``sort`` / ``sortkv`` / ``sort2``: ``lax.sort``, ``lax.sort_key_val`` against an iota
  (the permutation shows how ties -0.0/0.0 and NaNs were ordered), a two-key sort;
* ``cum``: ``lax.cumsum/cumprod/cummax/cummin`` (some axes empty).

The generator knows shapes, not types: a step either side refuses with a TypeError (a
bool subtracted, a float shifted, ...) yields zeros of its shape instead, and the
refused steps are part of the result, so both sides must refuse the same ones.
Results of float sums, products and means are inexact (a reduction may be
reassociated): they are results only, never operands of later steps, and compare within
a tolerance.
"""
from __future__ import annotations

import operator

import numpy as np

#: Element types of the arrays (HLO name -> numpy name).
# The environment jax computes the expectations in: XLA without excess precision or its
# algebraic simplifier (see generate_lax_programs.py), on jax's own CPU.
JAX_ENV = {"XLA_FLAGS": "--xla_allow_excess_precision=false --xla_disable_hlo_passes=algsimp",
           "JAX_PLATFORMS": "cpu"}
DTYPES = {"pred": "bool", "s8": "int8", "s32": "int32", "u8": "uint8", "u32": "uint32",
          "f16": "float16", "bf16": "bfloat16", "f32": "float32"}
SHAPES = [(2, 3), (3,), (4,), (0, 3), (2, 0), (1, 3), (3, 1), ()]
BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
          "//": operator.floordiv, "%": operator.mod, "<": operator.lt, "==": operator.eq,
          "&": operator.and_, "|": operator.or_, "^": operator.xor}
UNARY = {"neg": operator.neg, "abs": abs, "invert": operator.invert}
REDUCTIONS = ("sum", "prod", "max", "min", "mean", "any", "all")
INEXACT = ("sum", "prod", "mean", "cumsum", "cumprod")   # float results within a tolerance
CUMULATIVE = ("cumsum", "cumprod", "cummax", "cummin")
SPECIAL = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1.0, -1.0, 0.5, 2.0]


def dtype(name: str) -> np.dtype:
    if name == "bf16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(DTYPES[name])


# ---------------------------------------------------------------------------
# random programs (shapes only) and inputs
# ---------------------------------------------------------------------------

def random_program(rng: np.random.Generator, n_steps: int = 8) -> dict:
    """A program of ``n_steps`` steps over 2-3 arrays of one base shape (or a broadcast
    or scalar variant of it) and two run-time indices."""
    base = SHAPES[rng.integers(len(SHAPES))]
    inputs = []
    for _ in range(rng.integers(2, 4)):
        kind = rng.random()
        shape = base if kind < 0.7 or not base else () if kind < 0.85 else tuple(1 if d else d for d in base)
        inputs.append([list(DTYPES)[rng.integers(len(DTYPES))], list(shape)])
    inputs += [["s32", []], ["s32", []]]
    prog = {"inputs": inputs, "steps": []}
    shapes = [tuple(s) for _, s in inputs]
    operands = list(range(len(inputs) - 2))             # values later steps may read
    indices = [len(inputs) - 2, len(inputs) - 1]
    while len(prog["steps"]) < n_steps:
        step = _random_step(rng, shapes, operands, indices)
        if step is None:
            continue
        prog["steps"].append(step)
        shapes.append(tuple(step["shape"]))
        if not step.get("inexact"):
            operands.append(len(shapes) - 1)
    return prog


def _random_step(rng, shapes, operands, indices):
    kind = ["bin", "bin", "bin", "un", "reduce", "dslice", "dus", "index", "sort", "sortkv", "sort2",
            "cum"][rng.integers(12)]
    x = operands[rng.integers(len(operands))]
    sx = shapes[x]
    if kind == "bin":
        partners = [v for v in operands if _broadcasts(sx, shapes[v])]
        if rng.random() < 0.35:
            lit = [3, -1, 0, 2.5, -0.0, True, 300][rng.integers(7)]
            a, b = (x, {"lit": lit}) if rng.random() < 0.6 else ({"lit": lit}, x)
            shape = sx
        else:
            y = partners[rng.integers(len(partners))]
            a, b, shape = x, y, np.broadcast_shapes(sx, shapes[y])
        return {"op": "bin", "sym": list(BINARY)[rng.integers(len(BINARY))], "a": a, "b": b, "shape": list(shape)}
    if kind == "un":
        if rng.random() < 0.35:
            return {"op": "pow", "x": x, "k": int([-1, 0, 2, 3][rng.integers(4)]), "shape": list(sx)}
        return {"op": "un", "fn": list(UNARY)[rng.integers(len(UNARY))], "x": x, "shape": list(sx)}
    if kind == "reduce":
        method = REDUCTIONS[rng.integers(len(REDUCTIONS))]
        axis = None if not sx or rng.random() < 0.4 else int(rng.integers(len(sx)))
        kept = [] if axis is None else [d for i, d in enumerate(sx) if i != axis]
        if method in ("max", "min") and (0 in sx if axis is None else sx[axis] == 0):
            return None                                  # (jax: no identity, an error)
        return {"op": "reduce", "method": method, "x": x, "axis": axis, "shape": kept,
                "inexact": method in INEXACT}
    if not sx:
        return None                                      # the rest need an axis
    if kind in ("dslice", "dus"):
        sizes = [int(rng.integers(0, d + 1)) for d in sx]
        starts = [indices[rng.integers(2)] if rng.random() < 0.5 else {"lit": int(rng.integers(-d - 2, d + 3))}
                  for d in sx]
        return {"op": kind, "x": x, "starts": starts, "sizes": sizes,
                "shape": list(sizes) if kind == "dslice" else list(sx)}
    if kind == "index":
        if sx[0] == 0:
            return None                                  # (jax: an IndexError)
        return {"op": "index", "x": x, "i": indices[rng.integers(2)], "shape": list(sx[1:])}
    dim = int(rng.integers(len(sx)))
    if kind == "sort2":
        same = [v for v in operands if shapes[v] == sx and v != x]
        if not same:
            return None
        return {"op": "sort2", "x": x, "y": same[rng.integers(len(same))], "dim": dim, "shape": list(sx)}
    if kind in ("sort", "sortkv"):
        return {"op": kind, "x": x, "dim": dim, "shape": list(sx)}
    fn = CUMULATIVE[rng.integers(len(CUMULATIVE))]
    return {"op": "cum", "fn": fn, "x": x, "axis": dim, "reverse": bool(rng.random() < 0.5), "shape": list(sx),
            "inexact": fn in INEXACT}


def _broadcasts(a: tuple, b: tuple) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


def random_inputs(rng: np.random.Generator, prog: dict) -> list:
    """Arguments for ``prog``: small values with the edge cases mixed in (floats: signed
    zeros, NaNs of both signs, infinities; integers: their extremes; indices in -6..6)."""
    args = []
    for k, (name, shape) in enumerate(prog["inputs"]):
        shape = tuple(shape)
        n = int(np.prod(shape, dtype=np.int64))
        dt = dtype(name)
        if k >= len(prog["inputs"]) - 2:
            args.append(np.int32(rng.integers(-6, 7)))
            continue
        if name == "pred":
            a = rng.random(n) < 0.5
        elif name in ("f16", "bf16", "f32"):
            a = np.round(rng.normal(0, 3, n) * 4) / 4        # a few exact binary fractions
            special = rng.random(n) < 0.3
            a[special] = rng.choice(SPECIAL, int(special.sum()))
        else:
            info = np.iinfo(dt)
            a = rng.integers(max(info.min, -9), min(info.max, 9), n, endpoint=True)
            extreme = rng.random(n) < 0.15
            a[extreme] = rng.choice([info.min, info.max, 0], int(extreme.sum()))
        args.append(np.asarray(a).astype(dt).reshape(shape))
    return args


# ---------------------------------------------------------------------------
# running a program: the same code on jax and on xlac
# ---------------------------------------------------------------------------

def run(prog: dict, lax, args: list, zeros, refusals: tuple):
    """``(results, refused)``: every step's value, traced with ``lax`` (``jax.lax`` or
    ``xlac.lax``) on ``args`` (traced values), and the numbers of the steps that raised one
    of ``refusals`` (their value: ``zeros(shape)``)."""
    vals = list(args)
    refused = []
    for k, step in enumerate(prog["steps"]):
        try:
            v = _STEPS[step["op"]](step, vals, lax)
        except refusals:
            refused.append(k)
            v = zeros(tuple(step["shape"]))
        vals.append(v)
    return vals[len(args):], refused


def _val(ref, vals):
    return ref["lit"] if isinstance(ref, dict) else vals[ref]


def _iota(lax, x, dim):
    return lax.broadcasted_iota(np.int32, tuple(x.shape), dim)


def _dus(step, vals, lax):
    x = vals[step["x"]]
    rank = len(x.shape)
    update = lax.rev(lax.dynamic_slice(x, [0] * rank, step["sizes"]), list(range(rank)))
    return lax.dynamic_update_slice(x, update, [_val(s, vals) for s in step["starts"]])


_STEPS = {
    "bin": lambda s, v, lax: BINARY[s["sym"]](_val(s["a"], v), _val(s["b"], v)),
    "un": lambda s, v, lax: UNARY[s["fn"]](v[s["x"]]),
    "pow": lambda s, v, lax: v[s["x"]] ** s["k"],
    "reduce": lambda s, v, lax: getattr(v[s["x"]], s["method"])(axis=s["axis"]),
    "dslice": lambda s, v, lax: lax.dynamic_slice(v[s["x"]], [_val(i, v) for i in s["starts"]], s["sizes"]),
    "dus": _dus,
    "index": lambda s, v, lax: v[s["x"]][v[s["i"]]],
    "sort": lambda s, v, lax: lax.sort(v[s["x"]], dimension=s["dim"]),
    "sortkv": lambda s, v, lax: lax.sort_key_val(v[s["x"]], _iota(lax, v[s["x"]], s["dim"]), dimension=s["dim"])[1],
    "sort2": lambda s, v, lax: lax.sort((v[s["x"]], v[s["y"]], _iota(lax, v[s["x"]], s["dim"])),
                                        dimension=s["dim"], num_keys=2)[2],
    "cum": lambda s, v, lax: getattr(lax, s["fn"])(v[s["x"]], axis=s["axis"], reverse=s["reverse"]),
}


# ---------------------------------------------------------------------------
# arrays as JSON
# ---------------------------------------------------------------------------

def dtype_name(dt) -> str:
    names = {dtype(k): k for k in DTYPES}
    names.update({np.dtype("float64"): "f64", np.dtype("int64"): "s64", np.dtype("uint64"): "u64",
                  np.dtype("int16"): "s16", np.dtype("uint16"): "u16", np.dtype("complex64"): "c64"})
    return names[np.dtype(dt)]


def encode(a) -> dict:
    a = np.asarray(a)
    return {"dtype": dtype_name(a.dtype), "shape": list(a.shape), "hex": np.ascontiguousarray(a).tobytes().hex()}


def decode(d: dict) -> np.ndarray:
    name = d["dtype"]
    dt = dtype(name) if name in DTYPES else np.dtype({"f64": "float64", "s64": "int64", "u64": "uint64",
                                                      "s16": "int16", "u16": "uint16", "c64": "complex64"}[name])
    return np.frombuffer(bytes.fromhex(d["hex"]), dt).reshape(d["shape"]).copy()
