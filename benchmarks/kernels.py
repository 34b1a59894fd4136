"""The benchmark kernels: one :class:`Kernel` entry per kernel.

Each entry has

* ``build(p)``: the computation built with :mod:`xlac.ops`, the same one the
  JAX-exported HLO in ``benchmarks/hlo/<hlo>`` holds;
* ``hlo``: that file's name (its dimensions are rewritten for small sizes, see
  :func:`scale_hlo`);
* ``numpy(*args)``: the reference, also timed;
* ``jax(*args)``: a function of ``jax.numpy`` arrays (``jax.jit`` is applied by
  the harness), or None;
* ``numba``: a plain Python function the harness compiles with ``numba.njit``
  when numba is installed (written in the subset numba compiles), or None;
* ``inputs(rng, p)``: the arguments, in parameter order;
* ``nbytes(p)`` / ``flops(p)``: the bytes a kernel must move at least (inputs
  read once, outputs written once) and its floating-point operations, for the
  rate column; ``kind`` says which one the rate is and what it is compared with
  ("memory": GB/s against the measured STREAM triad, "compute": GFLOP/s
  against the measured best sgemm, or with ``gemm`` against xlac's own
  GEMM of a size and element type, "overhead": per-call time only).

``p`` is a dict of sizes: ``Kernel.full`` is the benchmark size (the size the
HLO file was exported at), ``Kernel.quick`` a tiny one for ``--quick`` and the
tests.  Nothing here imports jax or numba.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import xlac
from xlac import ops

F32 = np.float32


@dataclass
class Kernel:
    name: str
    label: str
    hlo: str | None
    build: Callable[[dict], object]
    numpy: Callable
    inputs: Callable[[np.random.Generator, dict], list]
    full: dict
    quick: dict
    kind: str = "memory"                  # memory | compute | overhead
    nbytes: Callable[[dict], int] = lambda p: 0
    flops: Callable[[dict], int] = lambda p: 0
    jax: Callable | None = None
    numba: Callable | None = None
    tol: float = 1e-4                     # max |xlac - numpy| / max(|numpy|, 1e-30)
    scale_constants: bool = False         # rewrite integer constants equal to a size too
    size: Callable[[dict], str] = field(default=lambda p: "")
    primary: str = "xlac_hlo"             # the xlac column the ratios and the rate use
    note: str = ""                        # a footnote under the table
    #: ``p -> (n, dtype)``: the xlac GEMM (an n^3 ``dot`` of that type) whose rate,
    #: timed in the same rounds, the kernel's rate is a fraction of ("of limit");
    #: None: the best sgemm of the machine limits.
    gemm: Callable[[dict], tuple] | None = None


# ---------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------

def _param(b, k, dims, name, pt=xlac.F32):
    return ops.parameter(b, k, xlac.Shape(pt, tuple(dims)), name)


def _scalar_comp(name, fn):
    b = xlac.XlaBuilder(name)
    x = ops.parameter(b, 0, xlac.Shape(xlac.F32, ()), "x")
    y = ops.parameter(b, 1, xlac.Shape(xlac.F32, ()), "y")
    return b.build(fn(x, y))


def _add_comp():
    return _scalar_comp("add", ops.add)


def _max_comp():
    return _scalar_comp("max", ops.max)


def _c(b, v):
    return ops.constant(b, F32(v))


def _mb(n):
    """A size in the table's units: 16777216 -> '16M', 4096 -> '4096'."""
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20}M"
    return str(n)


def scale_hlo(text: str, full: dict, small: dict, constants: bool = False) -> str:
    """The HLO text of a kernel exported at sizes ``full``, rewritten for sizes ``small``.

    Every dimension inside a shape's brackets or a ``slice_sizes`` /
    ``dynamic_slice_sizes`` attribute equal to a size of ``full`` becomes
    the matching size of ``small`` (``constants``: also integer ``constant(N)``,
    for divisors like layernorm's row length).  Raises ValueError when two sizes
    of equal value would need different replacements.
    """
    mapping: dict[int, int] = {}
    for key, v in full.items():
        w = small[key]
        if mapping.setdefault(int(v), int(w)) != int(w):
            raise ValueError(f"scale_hlo: size {v} maps to both {mapping[int(v)]} and {w}")
    if all(k == v for k, v in mapping.items()):
        return text

    def dims(m, group: int = 1):
        inner = ",".join(str(mapping.get(int(d), int(d))) if d.strip().isdigit() else d
                         for d in m.group(group).split(","))
        return f"[{inner}]"

    out = re.sub(r"\[([0-9,\s]*)\]", dims, text)
    # Sizes written as attributes (a gather's or dynamic-slice's slice sizes).
    out = re.sub(r"((?:dynamic_)?slice_sizes=)\{([0-9,\s]*)\}", lambda m: f"{m.group(1)}{{{dims(m, 2)[1:-1]}}}", out)
    if constants:
        out = re.sub(r"constant\((\d+)\)", lambda m: f"constant({mapping.get(int(m.group(1)), int(m.group(1)))})", out)
    return out


# ---------------------------------------------------------------------------------
# chain: tanh(a*x + b)*c + x
# ---------------------------------------------------------------------------------

def build_chain(p):
    b = xlac.XlaBuilder("chain")
    x = _param(b, 0, (p["n"],), "x")
    a = _param(b, 1, (), "a")
    bb = _param(b, 2, (), "b")
    c = _param(b, 3, (), "c")
    n = (p["n"],)
    y = ops.tanh(ops.add(ops.mul(ops.broadcast(a, n), x), ops.broadcast(bb, n)))
    return b.build(ops.add(ops.mul(y, ops.broadcast(c, n)), x))


def np_chain(x, a, b, c):
    return np.tanh(a * x + b) * c + x


def jax_chain(x, a, b, c):
    import jax.numpy as jnp
    return jnp.tanh(a * x + b) * c + x


def nb_chain(x, a, b, c):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = math.tanh(a * x[i] + b) * c + x[i]
    return out


def in_chain(rng, p):
    return [rng.standard_normal(p["n"], dtype=F32), F32(0.5), F32(0.25), F32(1.5)]


# ---------------------------------------------------------------------------------
# bcast: X*v[j] + w[i]
# ---------------------------------------------------------------------------------

def build_bcast(p):
    b = xlac.XlaBuilder("bcast")
    m, n = p["m"], p["n"]
    X = _param(b, 0, (m, n), "X")
    v = _param(b, 1, (n,), "v")
    w = _param(b, 2, (m,), "w")
    return b.build(ops.add(ops.mul(X, v, broadcast_dimensions=[1]), w, broadcast_dimensions=[0]))


def np_bcast(X, v, w):
    return X * v + w[:, None]


def jax_bcast(X, v, w):
    return X * v + w[:, None]


def nb_bcast(X, v, w):
    m, n = X.shape
    out = np.empty_like(X)
    for i in range(m):
        wi = w[i]
        for j in range(n):
            out[i, j] = X[i, j] * v[j] + wi
    return out


def in_bcast(rng, p):
    m, n = p["m"], p["n"]
    return [rng.standard_normal((m, n), dtype=F32), rng.standard_normal(n, dtype=F32),
            rng.standard_normal(m, dtype=F32)]


# ---------------------------------------------------------------------------------
# softmax over rows
# ---------------------------------------------------------------------------------

def build_softmax(p):
    b = xlac.XlaBuilder("softmax")
    x = _param(b, 0, (p["m"], p["n"]), "x")
    mx = ops.reduce(x, _c(b, -np.inf), _max_comp(), [1])
    e = ops.exp(ops.sub(x, mx, broadcast_dimensions=[0]))
    s = ops.reduce(e, _c(b, 0), _add_comp(), [1])
    return b.build(ops.div(e, s, broadcast_dimensions=[0]))


def np_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def jax_softmax(x):
    import jax.numpy as jnp
    e = jnp.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def nb_softmax(x):
    m, n = x.shape
    out = np.empty_like(x)
    for i in range(m):
        mx = x[i, 0]
        for j in range(1, n):
            mx = max(mx, x[i, j])
        s = np.float32(0)
        for j in range(n):
            e = np.exp(x[i, j] - mx)
            out[i, j] = e
            s += e
        inv = np.float32(1) / s
        for j in range(n):
            out[i, j] *= inv
    return out


def in_rows(rng, p):
    return [rng.standard_normal((p["m"], p["n"]), dtype=F32)]


# ---------------------------------------------------------------------------------
# layernorm with gamma and beta
# ---------------------------------------------------------------------------------

EPS = 1e-5


def build_layernorm(p):
    b = xlac.XlaBuilder("layernorm")
    m, n = p["m"], p["n"]
    x = _param(b, 0, (m, n), "x")
    g = _param(b, 1, (n,), "g")
    be = _param(b, 2, (n,), "b")
    inv_n = _c(b, n)
    mean = ops.div(ops.reduce(x, _c(b, 0), _add_comp(), [1]), inv_n)
    d = ops.sub(x, mean, broadcast_dimensions=[0])
    var = ops.div(ops.reduce(ops.mul(d, d), _c(b, 0), _add_comp(), [1]), inv_n)
    r = ops.rsqrt(ops.add(var, _c(b, EPS)))
    y = ops.mul(d, r, broadcast_dimensions=[0])
    y = ops.mul(y, g, broadcast_dimensions=[1])
    return b.build(ops.add(y, be, broadcast_dimensions=[1]))


def np_layernorm(x, g, b):
    mean = x.mean(axis=1, keepdims=True)
    d = x - mean
    var = (d * d).mean(axis=1, keepdims=True)
    return d / np.sqrt(var + F32(EPS)) * g + b


def jax_layernorm(x, g, b):
    import jax
    mean = x.mean(axis=1, keepdims=True)
    d = x - mean
    var = (d * d).mean(axis=1, keepdims=True)
    return d * jax.lax.rsqrt(var + EPS) * g + b


def nb_layernorm(x, g, b):
    m, n = x.shape
    out = np.empty_like(x)
    for i in range(m):
        s = np.float32(0)
        for j in range(n):
            s += x[i, j]
        mean = s / n
        v = np.float32(0)
        for j in range(n):
            d = x[i, j] - mean
            v += d * d
        r = np.float32(1) / np.sqrt(v / n + np.float32(1e-5))
        for j in range(n):
            out[i, j] = (x[i, j] - mean) * r * g[j] + b[j]
    return out


def in_layernorm(rng, p):
    m, n = p["m"], p["n"]
    return [rng.standard_normal((m, n), dtype=F32), rng.uniform(0.5, 1.5, n).astype(F32),
            rng.standard_normal(n, dtype=F32)]


# ---------------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------------

def build_sum_all(p):
    b = xlac.XlaBuilder("sum_all")
    x = _param(b, 0, (p["n"],), "x")
    return b.build(ops.reduce(x, _c(b, 0), _add_comp(), [0]))


def np_sum_all(x):
    return np.asarray(x.sum(), dtype=F32)


def jax_sum_all(x):
    return x.sum()


def nb_sum_all(x):
    s = np.float32(0)
    for i in range(x.shape[0]):
        s += x[i]
    return s


def in_uniform_1d(rng, p):
    return [rng.random(p["n"], dtype=F32)]


def in_uniform_2d(rng, p):
    return [rng.random((p["m"], p["n"]), dtype=F32)]


def _build_sum_axis(axis):
    def build(p):
        b = xlac.XlaBuilder(f"sum_axis{axis}")
        x = _param(b, 0, (p["m"], p["n"]), "X")
        return b.build(ops.reduce(x, _c(b, 0), _add_comp(), [axis]))
    return build


def np_sum_axis0(x):
    return x.sum(axis=0)


def np_sum_axis1(x):
    return x.sum(axis=1)


def jax_sum_axis0(x):
    return x.sum(axis=0)


def jax_sum_axis1(x):
    return x.sum(axis=1)


def nb_sum_axis0(x):
    m, n = x.shape
    out = np.zeros(n, dtype=x.dtype)
    for i in range(m):
        for j in range(n):
            out[j] += x[i, j]
    return out


def nb_sum_axis1(x):
    m, n = x.shape
    out = np.empty(m, dtype=x.dtype)
    for i in range(m):
        s = np.float32(0)
        for j in range(n):
            s += x[i, j]
        out[i] = s
    return out


# ---------------------------------------------------------------------------------
# transpose (materialised)
# ---------------------------------------------------------------------------------

def build_transpose(p):
    b = xlac.XlaBuilder("transpose")
    x = _param(b, 0, (p["m"], p["n"]), "X")
    return b.build(ops.transpose(x, [1, 0]))


def np_transpose(x):
    return np.ascontiguousarray(x.T)


def jax_transpose(x):
    return x.T


def nb_transpose(x):
    m, n = x.shape
    out = np.empty((n, m), dtype=x.dtype)
    bs = 64
    for i0 in range(0, m, bs):
        for j0 in range(0, n, bs):
            for i in range(i0, min(i0 + bs, m)):
                for j in range(j0, min(j0 + bs, n)):
                    out[j, i] = x[i, j]
    return out


# ---------------------------------------------------------------------------------
# matmul, batched matmul, MLP
# ---------------------------------------------------------------------------------

def build_matmul(p):
    b = xlac.XlaBuilder("matmul")
    A = _param(b, 0, (p["m"], p["k"]), "A")
    B = _param(b, 1, (p["k"], p["n"]), "B")
    return b.build(ops.dot(A, B))


def np_matmul(A, B):
    return A @ B


def jax_matmul(A, B):
    return A @ B


def nb_matmul(A, B):
    m, k = A.shape
    n = B.shape[1]
    C = np.zeros((m, n), dtype=A.dtype)
    for i in range(m):
        for p in range(k):
            a = A[i, p]
            for j in range(n):
                C[i, j] += a * B[p, j]
    return C


def in_matmul(rng, p):
    return [rng.standard_normal((p["m"], p["k"]), dtype=F32),
            rng.standard_normal((p["k"], p["n"]), dtype=F32)]


def build_bmm(p):
    b = xlac.XlaBuilder("bmm")
    A = _param(b, 0, (p["b"], p["m"], p["k"]), "A")
    B = _param(b, 1, (p["b"], p["k"], p["n"]), "B")
    return b.build(ops.dot_general(A, B, {"lhs_contracting_dimensions": [2],
                                          "rhs_contracting_dimensions": [1],
                                          "lhs_batch_dimensions": [0],
                                          "rhs_batch_dimensions": [0]}))


def nb_bmm(A, B):
    nb, m, k = A.shape
    n = B.shape[2]
    C = np.zeros((nb, m, n), dtype=A.dtype)
    for q in range(nb):
        for i in range(m):
            for p in range(k):
                a = A[q, i, p]
                for j in range(n):
                    C[q, i, j] += a * B[q, p, j]
    return C


def in_bmm(rng, p):
    return [rng.standard_normal((p["b"], p["m"], p["k"]), dtype=F32),
            rng.standard_normal((p["b"], p["k"], p["n"]), dtype=F32)]


def build_mlp(p):
    b = xlac.XlaBuilder("mlp")
    x = _param(b, 0, (p["batch"], p["d_in"]), "x")
    w1 = _param(b, 1, (p["d_in"], p["d_hidden"]), "W1")
    b1 = _param(b, 2, (p["d_hidden"],), "b1")
    w2 = _param(b, 3, (p["d_hidden"], p["d_out"]), "W2")
    b2 = _param(b, 4, (p["d_out"],), "b2")
    h = ops.max(ops.add(ops.dot(x, w1), b1, broadcast_dimensions=[1]), _c(b, 0))
    logits = ops.add(ops.dot(h, w2), b2, broadcast_dimensions=[1])
    mx = ops.reduce(logits, _c(b, -np.inf), _max_comp(), [1])
    e = ops.exp(ops.sub(logits, mx, broadcast_dimensions=[0]))
    s = ops.reduce(e, _c(b, 0), _add_comp(), [1])
    return b.build(ops.div(e, s, broadcast_dimensions=[0]))


def np_mlp(x, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, F32(0))
    return np_softmax(h @ w2 + b2)


def jax_mlp(x, w1, b1, w2, b2):
    import jax.numpy as jnp
    h = jnp.maximum(x @ w1 + b1, 0)
    return jax_softmax(h @ w2 + b2)


def nb_mlp(x, w1, b1, w2, b2):
    batch, d_in = x.shape
    d_hidden = w1.shape[1]
    d_out = w2.shape[1]
    h = np.zeros((batch, d_hidden), dtype=x.dtype)
    for i in range(batch):
        for p in range(d_in):
            a = x[i, p]
            for j in range(d_hidden):
                h[i, j] += a * w1[p, j]
        for j in range(d_hidden):
            h[i, j] = max(h[i, j] + b1[j], np.float32(0))
    out = np.zeros((batch, d_out), dtype=x.dtype)
    for i in range(batch):
        for p in range(d_hidden):
            a = h[i, p]
            for j in range(d_out):
                out[i, j] += a * w2[p, j]
        mx = np.float32(-np.inf)
        for j in range(d_out):
            out[i, j] += b2[j]
            mx = max(mx, out[i, j])
        s = np.float32(0)
        for j in range(d_out):
            out[i, j] = np.exp(out[i, j] - mx)
            s += out[i, j]
        for j in range(d_out):
            out[i, j] /= s
    return out


def in_mlp(rng, p):
    d_in, d_h, d_out = p["d_in"], p["d_hidden"], p["d_out"]
    return [rng.standard_normal((p["batch"], d_in), dtype=F32),
            (rng.standard_normal((d_in, d_h), dtype=F32) / np.sqrt(d_in)).astype(F32),
            rng.standard_normal(d_h, dtype=F32) * F32(0.1),
            (rng.standard_normal((d_h, d_out), dtype=F32) / np.sqrt(d_h)).astype(F32),
            rng.standard_normal(d_out, dtype=F32) * F32(0.1)]


# ---------------------------------------------------------------------------------
# conv2d (NHWC, HWIO, 3x3, SAME) and maxpool (2x2, stride 2)
# ---------------------------------------------------------------------------------

def build_conv2d(p):
    b = xlac.XlaBuilder("conv2d")
    x = _param(b, 0, (p["N"], p["H"], p["W"], p["C"]), "x")
    w = _param(b, 1, (p["K"], p["K"], p["C"], p["O"]), "w")
    pad = p["K"] // 2
    return b.build(ops.conv_general_dilated(x, w, [1, 1], [(pad, pad), (pad, pad)],
                                            dimension_numbers="b01f_01io->b01f"))


def np_conv2d(x, w):
    N, H, W, C = x.shape
    K, O = w.shape[0], w.shape[3]
    pad = K // 2
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    out = np.zeros((N, H, W, O), dtype=x.dtype)
    for i in range(K):
        for j in range(K):
            out += xp[:, i:i + H, j:j + W, :] @ w[i, j]
    return out


def jax_conv2d(x, w):
    import jax
    pad = w.shape[0] // 2
    return jax.lax.conv_general_dilated(x, w, (1, 1), ((pad, pad), (pad, pad)),
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))


def nb_conv2d(x, w):
    N, H, W, C = x.shape
    K, O = w.shape[0], w.shape[3]
    pad = K // 2
    out = np.zeros((N, H, W, O), dtype=x.dtype)
    for n in range(N):
        for h in range(H):
            for ww in range(W):
                for i in range(K):
                    hi = h + i - pad
                    if hi < 0 or hi >= H:
                        continue
                    for j in range(K):
                        wj = ww + j - pad
                        if wj < 0 or wj >= W:
                            continue
                        for c in range(C):
                            a = x[n, hi, wj, c]
                            for o in range(O):
                                out[n, h, ww, o] += a * w[i, j, c, o]
    return out


def in_conv2d(rng, p):
    fan_in = p["K"] * p["K"] * p["C"]
    return [rng.standard_normal((p["N"], p["H"], p["W"], p["C"]), dtype=F32),
            (rng.standard_normal((p["K"], p["K"], p["C"], p["O"]), dtype=F32)
             / np.sqrt(fan_in)).astype(F32)]


def build_maxpool(p):
    b = xlac.XlaBuilder("maxpool")
    x = _param(b, 0, (p["N"], p["H"], p["W"], p["C"]), "x")
    return b.build(ops.reduce_window(x, _c(b, -np.inf), _max_comp(), [1, 2, 2, 1], [1, 2, 2, 1]))


def np_maxpool(x):
    N, H, W, C = x.shape
    return x.reshape(N, H // 2, 2, W // 2, 2, C).max(axis=(2, 4))


def jax_maxpool(x):
    import jax
    return jax.lax.reduce_window(x, -jax.numpy.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def nb_maxpool(x):
    N, H, W, C = x.shape
    out = np.empty((N, H // 2, W // 2, C), dtype=x.dtype)
    for n in range(N):
        for h in range(H // 2):
            for w in range(W // 2):
                for c in range(C):
                    out[n, h, w, c] = max(max(x[n, 2 * h, 2 * w, c], x[n, 2 * h, 2 * w + 1, c]),
                                          max(x[n, 2 * h + 1, 2 * w, c], x[n, 2 * h + 1, 2 * w + 1, c]))
    return out


def in_maxpool(rng, p):
    return [rng.standard_normal((p["N"], p["H"], p["W"], p["C"]), dtype=F32)]


# ---------------------------------------------------------------------------------
# add8: per-call overhead
# ---------------------------------------------------------------------------------

def build_add8(p):
    b = xlac.XlaBuilder("add")
    x = _param(b, 0, (p["n"],), "a")
    y = _param(b, 1, (p["n"],), "b")
    return b.build(ops.add(x, y))


def np_add(a, b):
    return a + b


def jax_add(a, b):
    return a + b


def nb_add(a, b):
    return a + b


def in_add8(rng, p):
    return [rng.standard_normal(p["n"], dtype=F32), rng.standard_normal(p["n"], dtype=F32)]


# -- linear algebra: cholesky and triangular-solve (f32 and f64) ---------------------
# The jax columns are jax.jit of jnp.linalg.cholesky / jax.scipy.linalg.solve_triangular
# (LAPACK through custom calls on the CPU); the harness turns on jax's x64 mode for f64
# inputs.  The numpy column of the solve is scipy.linalg.solve_triangular when scipy
# is installed (numpy.linalg.solve otherwise).

def _linalg_param(b, k, dims, name, dtype):
    return ops.parameter(b, k, xlac.Shape(xlac.F64 if dtype == np.float64 else xlac.F32, tuple(dims)), name)


def _build_cholesky(dtype):
    def build(p):
        b = xlac.XlaBuilder("cholesky")
        return b.build(ops.cholesky(_linalg_param(b, 0, (p["n"], p["n"]), "a", dtype), lower=True))
    return build


def _build_trsm(dtype):
    def build(p):
        b = xlac.XlaBuilder("trsm")
        a = _linalg_param(b, 0, (p["n"], p["n"]), "a", dtype)
        x = _linalg_param(b, 1, (p["n"], p["k"]), "b", dtype)
        return b.build(ops.triangular_solve(a, x, True, True, False, "NO_TRANSPOSE"))
    return build


def np_cholesky(a):
    return np.linalg.cholesky(a)


def jax_cholesky(a):
    import jax.numpy as jnp
    return jnp.linalg.cholesky(a)


def np_trsm(a, b):
    try:
        from scipy.linalg import solve_triangular
    except ImportError:
        return np.linalg.solve(np.tril(a), b)
    return solve_triangular(a, b, lower=True, check_finite=False)


def jax_trsm(a, b):
    import jax.scipy.linalg as jsl
    return jsl.solve_triangular(a, b, lower=True)


def _in_spd(dtype):
    def inputs(rng, p):
        m = rng.standard_normal((p["n"], p["n"]))
        return [(m @ m.T / p["n"] + np.eye(p["n"])).astype(dtype)]
    return inputs


def _in_trsm(dtype):
    def inputs(rng, p):
        n = p["n"]
        a = np.tril(rng.standard_normal((n, n)) / np.sqrt(n)) + 2 * np.eye(n)
        return [a.astype(dtype), rng.standard_normal((n, p["k"])).astype(dtype)]
    return inputs


def _linalg_kernels() -> list:
    out = []
    for dtype, tag, tol in ((F32, "f32", 1e-4), (np.float64, "f64", 1e-9)):
        size = np.dtype(dtype).itemsize
        out.append(Kernel(
            f"cholesky_{tag}", f"cholesky {tag} (lower)", None, _build_cholesky(dtype), np_cholesky,
            _in_spd(dtype), {"n": 512}, {"n": 16}, "compute", lambda p, s=size: 2 * s * p["n"] ** 2,
            lambda p: p["n"] ** 3 // 3, jax_cholesky, None, tol, size=lambda p: f"{p['n']}x{p['n']}",
            primary="xlac_builder", gemm=lambda p, d=dtype: (p["n"], d),
            note="cholesky and triangular solve have no JAX-exported HLO (jax lowers them to LAPACK "
                 "custom calls on the CPU): the xlac column is the computation built with `xlac.ops`"))
        out.append(Kernel(
            f"trsm_{tag}", f"triangular solve {tag} (left, lower)", None, _build_trsm(dtype), np_trsm,
            _in_trsm(dtype), {"n": 512, "k": 512}, {"n": 16, "k": 8}, "compute",
            lambda p, s=size: s * (p["n"] ** 2 + 2 * p["n"] * p["k"]),
            lambda p: p["n"] ** 2 * p["k"], jax_trsm, None, tol,
            size=lambda p: f"{p['n']}x{p['n']}, {p['k']} rhs", primary="xlac_builder",
            gemm=lambda p, d=dtype: (p["n"], d)))
    return out


# ---------------------------------------------------------------------------------
# bf16 and f16 products (f32 accumulation, rounded once, as XLA:CPU)
# ---------------------------------------------------------------------------------
# numpy has no bf16 arithmetic (ml_dtypes' matmul loops in Python-level
# casts): the "numpy" reference computes in f32 and rounds once to the result
# type, which is what XLA specifies; jax.jit of the same program is the
# library to compare with.

def _half_matmul(pt, out_pt=None):
    def build(p):
        b = xlac.XlaBuilder("matmul_half")
        A = _param(b, 0, (p["m"], p["k"]), "A", pt)
        B = _param(b, 1, (p["k"], p["n"]), "B", pt)
        return b.build(ops.dot(A, B, preferred_element_type=out_pt))

    def ref(A, B):
        out = (A.astype(F32) @ B.astype(F32))
        return out if out_pt is xlac.F32 else out.astype(A.dtype)

    def jax_fn(A, B):
        import jax.numpy as jnp
        return jnp.matmul(A, B, preferred_element_type=jnp.float32 if out_pt is xlac.F32 else None)

    def inputs(rng, p):
        dt = xlac.Shape(pt, ()).dtype
        return [rng.standard_normal((p["m"], p["k"]), dtype=F32).astype(dt),
                rng.standard_normal((p["k"], p["n"]), dtype=F32).astype(dt)]
    return build, ref, jax_fn, inputs


def build_conv2d_bf16(p):
    b = xlac.XlaBuilder("conv2d_bf16")
    x = _param(b, 0, (p["N"], p["H"], p["W"], p["C"]), "x", xlac.BF16)
    w = _param(b, 1, (p["K"], p["K"], p["C"], p["O"]), "w", xlac.BF16)
    pad = p["K"] // 2
    return b.build(ops.conv_general_dilated(x, w, [1, 1], [(pad, pad), (pad, pad)],
                                            dimension_numbers="b01f_01io->b01f"))


def np_conv2d_bf16(x, w):
    return np_conv2d(x.astype(F32), w.astype(F32)).astype(x.dtype)


def in_conv2d_bf16(rng, p):
    dt = xlac.Shape(xlac.BF16, ()).dtype
    return [a.astype(dt) for a in in_conv2d(rng, p)]


def _half_kernels() -> list:
    def mm_bytes(size):
        return lambda p: size * (p["m"] * p["k"] + p["k"] * p["n"] + p["m"] * p["n"])
    full, quick = {"m": 1024, "k": 1024, "n": 1024}, {"m": 64, "k": 64, "n": 64}
    flops = lambda p: 2 * p["m"] * p["k"] * p["n"]          # noqa: E731
    size = lambda p: f"{p['m']}^3"                           # noqa: E731
    out = []
    for name, label, pt, out_pt, tol in (
            ("matmul_bf16", "matmul bf16", xlac.BF16, None, 1e-2),
            ("matmul_f16", "matmul f16", xlac.F16, None, 2e-3),
            ("matmul_bf16_f32", "matmul bf16 x bf16 -> f32", xlac.BF16, xlac.F32, 1e-5)):
        build, ref, jax_fn, inputs = _half_matmul(pt, out_pt)
        out.append(Kernel(name, label, f"{name}.hlo", build, ref, inputs, full, quick, "compute",
                          mm_bytes(2), flops, jax_fn, None, tol, size=size,
                          note="bf16/f16: the numpy column computes in f32 and rounds once (numpy "
                               "has no bf16 arithmetic); jax.jit runs the same program"))
    out.append(Kernel(
        "conv2d_bf16", "conv2d bf16 3x3 SAME (NHWC, HWIO)", "conv2d_bf16.hlo", build_conv2d_bf16,
        np_conv2d_bf16, in_conv2d_bf16, {"N": 8, "H": 32, "W": 32, "C": 64, "O": 64, "K": 3},
        {"N": 2, "H": 8, "W": 8, "C": 4, "O": 4, "K": 3}, "compute",
        lambda p: 2 * (2 * p["N"] * p["H"] * p["W"] * p["C"] + p["K"] ** 2 * p["C"] * p["O"]),
        lambda p: 2 * p["N"] * p["H"] * p["W"] * p["O"] * p["C"] * p["K"] ** 2, jax_conv2d, None, 1e-2,
        size=lambda p: f"{p['N']}x{p['H']}x{p['W']}x{p['C']}, {p['K']}x{p['K']}x{p['C']}x{p['O']}"))
    return out


def _typed_conv2d(name: str, pt, out_pt, tol: float, note: str):
    """conv2d 3x3 SAME (NHWC, HWIO) of ``pt`` operands to ``out_pt`` (as jax's
    ``preferred_element_type``), on the shape of ``conv2d_bf16``."""
    dt = xlac.Shape(pt, ()).dtype
    out_dt = xlac.Shape(out_pt, ()).dtype
    integer = dt.kind in "iu"

    def build(p):
        b = xlac.XlaBuilder(name)
        x = _param(b, 0, (p["N"], p["H"], p["W"], p["C"]), "x", pt)
        w = _param(b, 1, (p["K"], p["K"], p["C"], p["O"]), "w", pt)
        pad = p["K"] // 2
        return b.build(ops.conv_general_dilated(x, w, [1, 1], [(pad, pad), (pad, pad)],
                                                dimension_numbers="b01f_01io->b01f",
                                                preferred_element_type=None if out_pt is pt else out_pt))

    def ref(x, w):
        # Integers: an f64 product (exact, every sum below 2**53); halves: f32, rounded once.
        wide = np.float64 if integer or dt == np.float64 else (np.complex64 if dt.kind == "c" else F32)
        return np_conv2d(x.astype(wide), w.astype(wide)).astype(out_dt)

    def jax_fn(x, w):
        import jax
        import jax.numpy as jnp
        pad = w.shape[0] // 2
        return jax.lax.conv_general_dilated(
            x, w, (1, 1), ((pad, pad), (pad, pad)), dimension_numbers=("NHWC", "HWIO", "NHWC"),
            preferred_element_type=None if out_pt is pt else jnp.dtype(out_dt))

    def inputs(rng, p):
        shapes = ((p["N"], p["H"], p["W"], p["C"]), (p["K"], p["K"], p["C"], p["O"]))
        if integer:
            return [rng.integers(-128, 128, s).astype(dt) for s in shapes]
        x, w = in_conv2d(rng, p)
        if dt.kind == "c":
            x2, w2 = in_conv2d(rng, p)
            x, w = x + 1j * x2, w + 1j * w2
        return [x.astype(dt), w.astype(dt)]

    size = out_pt.byte_size
    return Kernel(
        name, f"conv2d {pt.value}" + ("" if out_pt is pt else f" x {pt.value} -> {out_pt.value}")
        + " 3x3 SAME (NHWC, HWIO)", f"{name}.hlo", build, ref, inputs,
        {"N": 8, "H": 32, "W": 32, "C": 64, "O": 64, "K": 3}, {"N": 2, "H": 8, "W": 8, "C": 4, "O": 4, "K": 3},
        "compute",
        lambda p, e=pt.byte_size, s=size: e * (p["N"] * p["H"] * p["W"] * p["C"] + p["K"] ** 2 * p["C"] * p["O"])
        + s * p["N"] * p["H"] * p["W"] * p["O"],
        lambda p, c=dt.kind == "c": (8 if c else 2) * p["N"] * p["H"] * p["W"] * p["O"] * p["C"] * p["K"] ** 2,
        jax_fn, None, tol,
        size=lambda p: f"{p['N']}x{p['H']}x{p['W']}x{p['C']}, {p['K']}x{p['K']}x{p['C']}x{p['O']}", note=note)


def _typed_conv_kernels() -> list:
    return [
        _typed_conv2d("conv2d_s8", xlac.S8, xlac.S32, 0.0,
                      "s8: the numpy column is an f64 convolution converted to s32 (exact); rates count "
                      "integer multiply-adds as flops"),
        _typed_conv2d("conv2d_f16", xlac.F16, xlac.F16, 5e-3,
                      "f16: the numpy column computes in f32 and rounds once"),
        _typed_conv2d("conv2d_f64", xlac.F64, xlac.F64, 1e-10, ""),
        _typed_conv2d("conv2d_c64", xlac.C64, xlac.C64, 1e-4,
                      "c64: a complex multiply-add counted as 8 real flops; jax exports it as three "
                      "real convolutions (the HLO xlac runs too)"),
        _typed_conv2d("conv2d_bf16_f32", xlac.BF16, xlac.F32, 1e-5,
                      "bf16 x bf16 -> f32 (preferred_element_type): the numpy column computes in f32"),
    ]


# 8-bit integer products (s8 x s8 -> s32, exact): the numpy reference is an
# f64 product (exact: every sum below 2**53), BLAS-fast, converted to s32.

def _int8_matmul():
    def build(p):
        b = xlac.XlaBuilder("matmul_s8")
        A = _param(b, 0, (p["m"], p["k"]), "A", xlac.S8)
        B = _param(b, 1, (p["k"], p["n"]), "B", xlac.S8)
        return b.build(ops.dot(A, B, preferred_element_type=xlac.S32))

    def ref(A, B):
        return (A.astype(np.float64) @ B.astype(np.float64)).astype(np.int32)

    def jax_fn(A, B):
        import jax.numpy as jnp
        return jnp.matmul(A, B, preferred_element_type=jnp.int32)

    def inputs(rng, p):
        return [rng.integers(-128, 128, (p["m"], p["k"])).astype(np.int8),
                rng.integers(-128, 128, (p["k"], p["n"])).astype(np.int8)]
    return build, ref, jax_fn, inputs


def _int8_kernels() -> list:
    build, ref, jax_fn, inputs = _int8_matmul()
    out = []
    for n in (512, 1024):
        out.append(Kernel(
            f"matmul_s8_{n}", "matmul s8 x s8 -> s32", f"matmul_s8_{n}.hlo", build, ref, inputs,
            {"m": n, "k": n, "n": n}, {"m": 64, "k": 64, "n": 64}, "compute",
            lambda p: 2 * p["m"] * p["k"] + 4 * p["m"] * p["n"], lambda p: 2 * p["m"] * p["k"] * p["n"],
            jax_fn, None, 0.0, size=lambda p: f"{p['m']}^3",
            note="s8: the numpy column is an f64 product converted to s32 (exact); rates count "
                 "integer multiply-adds as flops"))
    return out


# f64 and c64 products, bf16 elementwise: the element types beside f32 that
# numpy has (f64, c64: BLAS) or has not (bf16: computed in f32 and rounded once,
# the reference XLA's semantics allow).

def _typed_matmul(pt):
    dt = xlac.Shape(pt, ()).dtype

    def build(p):
        b = xlac.XlaBuilder(f"matmul_{pt.value}")
        A = _param(b, 0, (p["m"], p["k"]), "A", pt)
        B = _param(b, 1, (p["k"], p["n"]), "B", pt)
        return b.build(ops.dot(A, B))

    def inputs(rng, p):
        def one(shape):
            x = rng.standard_normal(shape)
            return (x + 1j * rng.standard_normal(shape) if dt.kind == "c" else x).astype(dt)
        return [one((p["m"], p["k"])), one((p["k"], p["n"]))]
    return build, inputs


def _typed_chain(pt):
    """(build, inputs) of the chain in a 16-bit float type (computed in f32,
    rounded after every op, as XLA:CPU does)."""
    def build(p):
        b = xlac.XlaBuilder(f"chain_{pt.value}")
        x = _param(b, 0, (p["n"],), "x", pt)
        a, bb, c = (_param(b, k, (), name, pt) for k, name in ((1, "a"), (2, "b"), (3, "c")))
        n = (p["n"],)
        y = ops.tanh(ops.add(ops.mul(ops.broadcast(a, n), x), ops.broadcast(bb, n)))
        return b.build(ops.add(ops.mul(y, ops.broadcast(c, n)), x))

    def inputs(rng, p):
        dt = xlac.Shape(pt, ()).dtype
        return [v.astype(dt) for v in in_chain(rng, p)]
    return build, inputs


def np_chain_narrow(x, a, b, c):
    f = [v.astype(F32) for v in (x, a, b, c)]
    return np_chain(*f).astype(x.dtype)


def _wide_kernels() -> list:
    out = []
    for pt, size, tol in ((xlac.F64, 8, 1e-10), (xlac.C64, 8, 1e-4)):
        build, inputs = _typed_matmul(pt)
        complex_ = pt is xlac.C64
        out.append(Kernel(
            f"matmul_{pt.value}", f"matmul {pt.value}", f"matmul_{pt.value}.hlo", build, np_matmul, inputs,
            {"m": 512, "k": 512, "n": 512}, {"m": 64, "k": 64, "n": 64}, "compute",
            lambda p, s=size: s * (p["m"] * p["k"] + p["k"] * p["n"] + p["m"] * p["n"]),
            lambda p, c=complex_: (8 if c else 2) * p["m"] * p["k"] * p["n"], jax_matmul, None, tol,
            size=lambda p: f"{p['m']}^3",
            note="a complex multiply-add counted as 8 real flops" if complex_ else ""))
    for pt in (xlac.BF16, xlac.F16):
        build, inputs = _typed_chain(pt)
        out.append(Kernel(
            f"chain_{pt.value}", f"chain {pt.value} `tanh(a*x+b)*c + x`", f"chain_{pt.value}.hlo", build,
            np_chain_narrow, inputs, {"n": 16 << 20}, {"n": 4096}, "memory", lambda p: 4 * p["n"],
            lambda p: 6 * p["n"], jax_chain, None, 2e-2 if pt is xlac.BF16 else 2e-3, size=lambda p: _mb(p["n"]),
            note=f"{pt.value}: the numpy column computes in f32 and rounds once"))
    return out


# ---------------------------------------------------------------------------------
# the table
# ---------------------------------------------------------------------------------

def _mn(p):
    return p["m"] * p["n"]


KERNELS: list[Kernel] = [
    Kernel("chain", "chain `tanh(a*x+b)*c + x`", "chain.hlo", build_chain, np_chain, in_chain,
           {"n": 16 << 20}, {"n": 4096}, "memory", lambda p: 8 * p["n"], lambda p: 6 * p["n"],
           jax_chain, nb_chain, 1e-5, size=lambda p: _mb(p["n"])),
    Kernel("bcast", "bcast `X*v[j] + w[i]`", "bcast.hlo", build_bcast, np_bcast, in_bcast,
           {"m": 4096, "n": 4096}, {"m": 64, "n": 64}, "memory",
           lambda p: 8 * _mn(p) + 4 * (p["m"] + p["n"]), lambda p: 2 * _mn(p),
           jax_bcast, nb_bcast, 1e-6, size=lambda p: f"{p['m']}x{p['n']}"),
    Kernel("softmax", "softmax over rows", "softmax.hlo", build_softmax, np_softmax, in_rows,
           {"m": 4096, "n": 1024}, {"m": 32, "n": 64}, "memory", lambda p: 8 * _mn(p),
           lambda p: 5 * _mn(p), jax_softmax, nb_softmax, 1e-5,
           size=lambda p: f"{p['m']}x{p['n']}"),
    Kernel("layernorm", "layernorm (gamma, beta)", "layernorm.hlo", build_layernorm, np_layernorm,
           in_layernorm, {"m": 8192, "n": 1024}, {"m": 32, "n": 64}, "memory",
           lambda p: 8 * _mn(p) + 8 * p["n"], lambda p: 8 * _mn(p), jax_layernorm, nb_layernorm,
           1e-4, scale_constants=True, size=lambda p: f"{p['m']}x{p['n']}"),
    Kernel("sum_all", "sum of all", "sum_all.hlo", build_sum_all, np_sum_all, in_uniform_1d,
           {"n": 16 << 20}, {"n": 4096}, "memory", lambda p: 4 * p["n"], lambda p: p["n"],
           jax_sum_all, nb_sum_all, 1e-4, size=lambda p: _mb(p["n"])),
    Kernel("sum_axis0", "sum over axis 0", "sum_axis0.hlo", _build_sum_axis(0), np_sum_axis0,
           in_uniform_2d, {"m": 4096, "n": 4096}, {"m": 64, "n": 64}, "memory",
           lambda p: 4 * _mn(p) + 4 * p["n"], _mn, jax_sum_axis0, nb_sum_axis0, 1e-4,
           size=lambda p: f"{p['m']}x{p['n']}"),
    Kernel("sum_axis1", "sum over axis 1", "sum_axis1.hlo", _build_sum_axis(1), np_sum_axis1,
           in_uniform_2d, {"m": 4096, "n": 4096}, {"m": 64, "n": 64}, "memory",
           lambda p: 4 * _mn(p) + 4 * p["m"], _mn, jax_sum_axis1, nb_sum_axis1, 1e-4,
           size=lambda p: f"{p['m']}x{p['n']}"),
    Kernel("transpose", "transpose (materialised)", "transpose.hlo", build_transpose, np_transpose,
           in_uniform_2d, {"m": 4096, "n": 4096}, {"m": 64, "n": 64}, "memory",
           lambda p: 8 * _mn(p), lambda p: 0, jax_transpose, nb_transpose, 0.0,
           size=lambda p: f"{p['m']}x{p['n']}", primary="xlac_builder",
           note="the exported HLO's result layout is `{0,1}`, the input's own memory order, so "
                "*xlac (HLO)* is a plain copy returned as a transposed view; *xlac (builder)* "
                "(`ops.transpose`, row-major result) is the real transpose numpy, jax and numba "
                "do, so ratios, rate and fraction use the builder column"),
    Kernel("matmul_1024", "matmul", "matmul_1024.hlo", build_matmul, np_matmul, in_matmul,
           {"m": 1024, "k": 1024, "n": 1024}, {"m": 64, "k": 64, "n": 64}, "compute",
           lambda p: 4 * (p["m"] * p["k"] + p["k"] * p["n"] + p["m"] * p["n"]),
           lambda p: 2 * p["m"] * p["k"] * p["n"], jax_matmul, nb_matmul, 1e-4,
           size=lambda p: f"{p['m']}^3" if p["m"] == p["k"] == p["n"] else f"{p['m']}x{p['k']}x{p['n']}"),
    Kernel("matmul_2048", "matmul", "matmul_2048.hlo", build_matmul, np_matmul, in_matmul,
           {"m": 2048, "k": 2048, "n": 2048}, {"m": 48, "k": 48, "n": 48}, "compute",
           lambda p: 4 * (p["m"] * p["k"] + p["k"] * p["n"] + p["m"] * p["n"]),
           lambda p: 2 * p["m"] * p["k"] * p["n"], jax_matmul, nb_matmul, 1e-4,
           size=lambda p: f"{p['m']}^3" if p["m"] == p["k"] == p["n"] else f"{p['m']}x{p['k']}x{p['n']}"),
    Kernel("bmm", "batched matmul", "bmm.hlo", build_bmm, np_matmul, in_bmm,
           {"b": 64, "m": 128, "k": 128, "n": 128}, {"b": 4, "m": 16, "k": 16, "n": 16}, "compute",
           lambda p: 4 * p["b"] * (p["m"] * p["k"] + p["k"] * p["n"] + p["m"] * p["n"]),
           lambda p: 2 * p["b"] * p["m"] * p["k"] * p["n"], jax_matmul, nb_bmm, 1e-4,
           size=lambda p: f"{p['b']}x{p['m']}x{p['k']}x{p['n']}"),
    Kernel("mlp", "MLP forward (784-512-10, bias, relu, softmax)", "mlp.hlo", build_mlp, np_mlp,
           in_mlp, {"batch": 256, "d_in": 784, "d_hidden": 512, "d_out": 10},
           {"batch": 8, "d_in": 32, "d_hidden": 16, "d_out": 10}, "compute",
           lambda p: 4 * (p["batch"] * p["d_in"] + p["d_in"] * p["d_hidden"] + p["d_hidden"]
                          + p["d_hidden"] * p["d_out"] + p["d_out"] + p["batch"] * p["d_out"]),
           lambda p: 2 * p["batch"] * (p["d_in"] * p["d_hidden"] + p["d_hidden"] * p["d_out"]),
           jax_mlp, nb_mlp, 1e-4, size=lambda p: f"batch {p['batch']}"),
    Kernel("conv2d", "conv2d 3x3 SAME (NHWC, HWIO)", "conv2d.hlo", build_conv2d, np_conv2d,
           in_conv2d, {"N": 32, "H": 56, "W": 56, "C": 64, "O": 64, "K": 3},
           {"N": 2, "H": 8, "W": 8, "C": 4, "O": 4, "K": 3}, "compute",
           lambda p: 4 * (2 * p["N"] * p["H"] * p["W"] * p["C"] + p["K"] ** 2 * p["C"] * p["O"]),
           lambda p: 2 * p["N"] * p["H"] * p["W"] * p["O"] * p["C"] * p["K"] ** 2,
           jax_conv2d, nb_conv2d, 1e-4,
           size=lambda p: f"{p['N']}x{p['H']}x{p['W']}x{p['C']}, {p['K']}x{p['K']}x{p['C']}x{p['O']}"),
    Kernel("maxpool", "maxpool 2x2 stride 2 (NHWC)", "maxpool.hlo", build_maxpool, np_maxpool,
           in_maxpool, {"N": 32, "H": 112, "W": 112, "C": 64, "Ho": 56, "Wo": 56},
           {"N": 2, "H": 16, "W": 16, "C": 4, "Ho": 8, "Wo": 8}, "memory",
           lambda p: 4 * p["N"] * p["C"] * (p["H"] * p["W"] + p["Ho"] * p["Wo"]),
           lambda p: 3 * p["N"] * p["C"] * p["Ho"] * p["Wo"], jax_maxpool, nb_maxpool, 0.0,
           size=lambda p: f"{p['N']}x{p['H']}x{p['W']}x{p['C']}"),
    Kernel("add8", "add of 8 elements (per-call overhead)", "add8.hlo", build_add8, np_add, in_add8,
           {"n": 8}, {"n": 8}, "overhead", lambda p: 12 * p["n"], lambda p: p["n"],
           jax_add, nb_add, 0.0, size=lambda p: str(p["n"])),
]

KERNELS += _half_kernels()
KERNELS += _int8_kernels()
KERNELS += _typed_conv_kernels()
KERNELS += _wide_kernels()
KERNELS += _linalg_kernels()

BY_NAME = {k.name: k for k in KERNELS}
# Kernels the test suite's quick run uses (small, one of each kind).
QUICK_DEFAULT = ["chain", "softmax", "sum_axis0", "transpose", "matmul_1024", "add8"]
