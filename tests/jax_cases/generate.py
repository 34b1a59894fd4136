"""Generates ``tests/jax_cases/``: the HLO that ``jax.jit`` emits for a few
hundred small programs, their inputs and jax's outputs, in the format of
``tests/hlo_corpus`` (``NAME.hlo``, ``NAME.npz``, ``NAME.expected.npz``,
``manifest.json``); ``tests/test_corpus.py`` runs them like the shared corpus.

jax is not a dependency of xlac: run this in a scratch environment that has it,

    python3 -m venv /tmp/jaxvenv && /tmp/jaxvenv/bin/pip install jax jaxlib
    /tmp/jaxvenv/bin/python tests/jax_cases/generate.py

and commit the files it writes.  As for the shared corpus, XLA runs with
``--xla_allow_excess_precision=false``, so bf16/f16 results are rounded where
the HLO says, and programs are lowered with ``keep_unused=True``.
"""
import json
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_allow_excess_precision=false")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

OUT = Path(__file__).resolve().parent
bf, hf = jnp.bfloat16, jnp.float16


def cases_32(rng) -> dict:
    """{name: (function, inputs)} with jax's default 32-bit types."""
    def f32(*s):
        return rng.standard_normal(s).astype(np.float32)

    def i32(*s, lo=-50, hi=50):
        return rng.integers(lo, hi, s).astype(np.int32)
    key = jax.random.key(3)
    return {
        "cumsum_ax1": (lambda x: jnp.cumsum(x, axis=1), [f32(5, 17)]),
        "cumprod": (lambda x: jnp.cumprod(x * 0.1 + 1, axis=0), [f32(9, 4)]),
        "cummax": (lambda x: jax.lax.cummax(x, axis=1), [f32(3, 33)]),
        "logcumsumexp": (lambda x: jax.lax.cumlogsumexp(x, axis=0), [f32(20, 3)]),
        "sort2d": (lambda x: jnp.sort(x, axis=0), [f32(13, 5)]),
        "argsort_stable": (lambda x: jnp.argsort(jnp.round(x), axis=1, stable=True), [f32(4, 19)]),
        "topk": (lambda x: jax.lax.top_k(x, 3), [f32(6, 11)]),
        "einsum_bij_bjk": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), [f32(3, 4, 5), f32(3, 5, 6)]),
        "einsum_trace": (lambda a: jnp.einsum("ii->", a), [f32(7, 7)]),
        "conv1d_stride": (lambda x, w: jax.lax.conv_general_dilated(x, w, (2,), "VALID"), [f32(2, 3, 17), f32(4, 3, 5)]),
        "conv2d_grouped": (lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=2), [f32(1, 4, 9, 9), f32(6, 2, 3, 3)]),
        "conv_transpose": (lambda x, w: jax.lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), [f32(1, 5, 5, 3), f32(3, 3, 3, 2)]),
        "pad_neg": (lambda x: jax.lax.pad(x, 0.0, [(1, -1, 1), (-2, 3, 0)]), [f32(5, 6)]),
        "gather_take": (lambda x, i: jnp.take(x, i, axis=0), [f32(10, 3), i32(7, lo=-3, hi=12)]),
        "scatter_set": (lambda x, i, u: x.at[i].set(u), [f32(10, 3), i32(4, lo=0, hi=10), f32(4, 3)]),
        "scatter_max": (lambda x, i, u: x.at[i].max(u), [f32(8), i32(12, lo=0, hi=8), f32(12)]),
        "dus": (lambda x, u, i: jax.lax.dynamic_update_slice(x, u, (i, i + 1)), [f32(6, 6), f32(3, 2), np.int32(5)]),
        "ds_clamp": (lambda x, i: jax.lax.dynamic_slice(x, (i, -i), (3, 2)), [f32(6, 6), np.int32(9)]),
        "while_loop": (lambda x: jax.lax.fori_loop(0, 7, lambda k, v: v * 0.9 + jnp.sin(v + k), x), [f32(4)]),
        "cond": (lambda p, x: jax.lax.cond(p > 0, lambda y: y * 2, lambda y: -y, x), [np.float32(-1.0), f32(3)]),
        "switch": (lambda i, x: jax.lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x), [np.int32(2), f32(5)]),
        "remainder": (lambda a, b: jnp.remainder(a, b), [f32(10), f32(10)]),
        "fmod": (lambda a, b: jnp.fmod(a, b), [f32(10), f32(10)]),
        "int_div": (lambda a, b: a // jnp.where(b == 0, 1, b), [i32(20), i32(20)]),
        "int_rem": (lambda a, b: jax.lax.rem(a, jnp.where(b == 0, 1, b)), [i32(20), i32(20)]),
        "shifts": (lambda a, b: (a << (b & 31), a >> (b & 31), jax.lax.shift_right_logical(a, b & 31)), [i32(16), i32(16, lo=0, hi=40)]),
        "clz_popcnt": (lambda a: (jax.lax.clz(a), jax.lax.population_count(a)), [i32(16)]),
        "erfinv": (lambda x: jax.scipy.special.erfinv(jnp.tanh(x) * 0.99), [f32(30)]),
        "lgamma": (lambda x: jax.lax.lgamma(jnp.abs(x) + 0.1), [f32(30)]),
        "digamma": (lambda x: jax.lax.digamma(jnp.abs(x) + 0.1), [f32(30)]),
        "atanh_asinh": (lambda x: (jnp.arctanh(jnp.tanh(x) * 0.9), jnp.arcsinh(x), jnp.arccosh(jnp.abs(x) + 1)), [f32(20)]),
        "asin_acos_atan": (lambda x: (jnp.arcsin(jnp.tanh(x)), jnp.arccos(jnp.tanh(x)), jnp.arctan(x)), [f32(20)]),
        "sinh_cosh": (lambda x: (jnp.sinh(x), jnp.cosh(x)), [f32(20)]),
        "logistic_softplus": (lambda x: (jax.nn.sigmoid(x), jax.nn.softplus(x), jax.nn.gelu(x)), [f32(20)]),
        "reduce_prod_min": (lambda x: (jnp.prod(x, axis=0), jnp.min(x, axis=1), jnp.argmax(x, axis=0)), [f32(6, 7)]),
        "var_std": (lambda x: (jnp.var(x, axis=1), jnp.std(x)), [f32(8, 9)]),
        "norm_l2": (lambda x: jnp.linalg.norm(x, axis=-1), [f32(5, 6)]),
        "reduce_window_sum": (lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, (2, 3), (1, 2), "SAME"), [f32(7, 9)]),
        "avg_pool_pad": (lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 3, 3, 1), (1, 2, 2, 1), ((0, 0), (1, 1), (1, 1), (0, 0))) / 9, [f32(2, 8, 8, 3)]),
        "rev_concat": (lambda a, b: jnp.concatenate([a[::-1], b], axis=0), [f32(3, 4), f32(2, 4)]),
        "iota_select": (lambda x: jnp.where(jnp.arange(x.shape[0])[:, None] > jnp.arange(x.shape[1]), x, -x), [f32(5, 6)]),
        "bitcast_roundtrip": (lambda x: jax.lax.bitcast_convert_type(jax.lax.bitcast_convert_type(x, jnp.int32) ^ 1, jnp.float32), [f32(8)]),
        "convert_sat": (lambda x: (x * 1e10).astype(jnp.int32), [f32(10)]),
        "u8_ops": (lambda a, b: (a + b, a * b, a // jnp.maximum(b, 1), a > b), [rng.integers(0, 255, 10).astype(np.uint8), rng.integers(0, 255, 10).astype(np.uint8)]),
        "bf16_matmul": (lambda a, b: (a.astype(jnp.bfloat16) @ b.astype(jnp.bfloat16)).astype(jnp.float32), [f32(8, 16), f32(16, 4)]),
        "f16_ops": (lambda a: (jnp.exp(a.astype(jnp.float16)) + 1).astype(jnp.float32), [f32(12)]),
        "complex_ops": (lambda a, b: jnp.abs(jnp.exp((a + 1j * b)) * (a - 1j * b)), [f32(10), f32(10)]),
        "fft_c2c": (lambda a, b: jnp.abs(jnp.fft.fft(a + 1j * b)), [f32(4, 16), f32(4, 16)]),
        "rfft2": (lambda a: jnp.abs(jnp.fft.rfft2(a)), [f32(8, 12)]),
        "is_finite_nan": (lambda x: (jnp.isfinite(x / (x - x)), jnp.nan_to_num(x / 0)), [f32(6)]),
        "clamp_round": (lambda x: (jnp.clip(x, -0.5, 0.5), jnp.round(x * 3), jnp.floor(x), jnp.sign(x)), [f32(15)]),
        "expm1_log1p": (lambda x: (jnp.expm1(x * 1e-3), jnp.log1p(jnp.abs(x) * 1e-4)), [f32(15)]),
        "pow_int": (lambda x: (x ** 3, jnp.power(jnp.abs(x), 0.37)), [f32(15)]),
        "select_n": (lambda i, a, b, c: jax.lax.select_n(i, a, b, c), [i32(6, lo=0, hi=3), f32(6), f32(6), f32(6)]),
        "one_hot_ce": (lambda x, y: -jnp.sum(jax.nn.one_hot(y, 5) * jax.nn.log_softmax(x), axis=-1), [f32(4, 5), i32(4, lo=0, hi=5)]),
        "scan_rnn": (lambda h, xs, w: jax.lax.scan(lambda c, x: (jnp.tanh(c @ w + x), c.sum()), h, xs), [f32(3), f32(5, 3), f32(3, 3)]),
        "vmap_dot": (lambda a, b: jax.vmap(jnp.dot)(a, b), [f32(4, 6), f32(4, 6)]),
        "triu_tril": (lambda x: (jnp.triu(x), jnp.tril(x, -1)), [f32(5, 5)]),
        "meshgrid_outer": (lambda a, b: jnp.outer(a, b) + jnp.add.outer(a, b), [f32(4), f32(6)]),
        "max_pool_grad": (lambda x: jax.grad(lambda y: jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (2, 2), (2, 2), "VALID").sum())(x), [f32(6, 6)]),
        "logsumexp_axis": (lambda x: jax.scipy.special.logsumexp(x, axis=(0, 2)), [f32(3, 4, 5)]),
        "x_broadcast_in_dim": (lambda x: jnp.broadcast_to(x[:, None, :], (3, 4, 5)) * 2, [f32(3, 5)]),
        "transpose3d": (lambda x: jnp.transpose(x, (2, 0, 1)) + 1, [f32(3, 4, 5)]),
        "searchsorted": (lambda a, v: jnp.searchsorted(jnp.sort(a), v), [f32(20), f32(7)]),
        "unique_size": (lambda a: jnp.unique(jnp.round(a), size=8, fill_value=0.0), [f32(20)]),
        "argwhere_nonzero": (lambda a: jnp.nonzero(a > 0, size=6, fill_value=-1)[0], [f32(12)]),
        "interp": (lambda x: jnp.interp(x, jnp.linspace(-2, 2, 9), jnp.sin(jnp.linspace(-2, 2, 9))), [f32(15)]),
        "median": (lambda x: jnp.median(x, axis=1), [f32(5, 9)]),
        "percentile": (lambda x: jnp.percentile(x, 30.0), [f32(25)]),
        "histogram_like": (lambda x: jnp.bincount(jnp.clip((x * 2 + 5).astype(jnp.int32), 0, 9), length=10), [f32(40)]),
        "rng_uniform": (lambda k: jax.random.uniform(jax.random.wrap_key_data(k), (5, 7)), [np.asarray(jax.random.key_data(key))]),
        "rng_normal_bern": (lambda k: (jax.random.normal(jax.random.wrap_key_data(k), (9,)), jax.random.bernoulli(jax.random.wrap_key_data(k), 0.3, (9,))), [np.asarray(jax.random.key_data(key))]),
        "rng_randint_perm": (lambda k: (jax.random.randint(jax.random.wrap_key_data(k), (6,), 0, 100), jax.random.permutation(jax.random.wrap_key_data(k), 10)), [np.asarray(jax.random.key_data(key))]),
        "attention": (lambda q, k, v: jax.nn.softmax(q @ k.T / 4.0 + jnp.triu(jnp.full((6, 6), -1e9), 1), axis=-1) @ v, [f32(6, 8), f32(6, 8), f32(6, 8)]),
        "mlp_grad": (lambda w, x, y: jax.value_and_grad(lambda w: jnp.mean((jnp.tanh(x @ w) - y) ** 2))(w), [f32(5, 3), f32(4, 5), f32(4, 3)]),
        "layernorm_grad": (lambda x: jax.grad(lambda x: jnp.sum(((x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5)) ** 3))(x), [f32(3, 8)]),
        "adv_index": (lambda x, i, j: x[i, :, j], [f32(5, 3, 6), i32(4, lo=0, hi=5), i32(4, lo=0, hi=6)]),
        "take_along": (lambda x, i: jnp.take_along_axis(x, i, axis=1), [f32(4, 7), i32(4, 3, lo=0, hi=7)]),
        "scatter_add_oob_drop": (lambda x, i, u: x.at[i].add(u, mode="drop"), [f32(6), i32(9, lo=-8, hi=9), f32(9)]),
        "scatter_mul_clip": (lambda x, i, u: x.at[i].multiply(u, mode="clip"), [f32(6), i32(9, lo=-8, hi=9), f32(9)]),
        "scatter_2d_min": (lambda x, i, u: x.at[i[:, 0], i[:, 1]].min(u), [f32(5, 5), i32(7, 2, lo=0, hi=5), f32(7)]),
        "gather_oob_fill": (lambda x, i: x.at[i].get(mode="fill", fill_value=-7.0), [f32(6), i32(8, lo=-9, hi=9)]),
        "logaddexp_hypot": (lambda a, b: (jnp.logaddexp(a, b), jnp.hypot(a, b), jnp.copysign(a, b)), [f32(10), f32(10)]),
        "nextafter": (lambda a, b: jnp.nextafter(a, b), [f32(10), f32(10)]),
        "argmax_nan_ties": (lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=0)), [np.array([[1, 3, 3, np.nan], [2, 2, 1, 0], [np.nan, 5, 5, 5]], np.float32)]),
        "lexsort": (lambda a, b: jax.lax.sort((a, b), num_keys=2), [jnp.asarray(i32(12, lo=0, hi=3)), f32(12)]),
        "sort_desc_int": (lambda x: -jnp.sort(-x), [i32(15)]),
        "sort_bool": (lambda x: jnp.sort(x > 0), [f32(11)]),
        "dus_in_loop": (lambda x: jax.lax.fori_loop(0, 5, lambda i, v: jax.lax.dynamic_update_slice(v, jnp.full((1, 3), i, v.dtype), (i, 0)), x), [f32(5, 3)]),
        "while_early": (lambda x: jax.lax.while_loop(lambda c: (c[0] < 10) & (c[1].sum() < 50.0), lambda c: (c[0] + 1, c[1] * 1.5 + 1), (0, x)), [np.abs(f32(4))]),
        "cumsum_rev_cummin": (lambda x: (jnp.flip(jnp.cumsum(jnp.flip(x, 0), 0), 0), jax.lax.cummin(x, axis=0, reverse=True)), [f32(9, 2)]),
        "roll_tile_repeat": (lambda x: (jnp.roll(x, 2, axis=1), jnp.tile(x, (2, 1)), jnp.repeat(x, 2, axis=0)), [f32(3, 5)]),
        "conv_dilated": (lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), ((2, 1), (0, 3)), lhs_dilation=(2, 1), rhs_dilation=(1, 2)), [f32(2, 3, 6, 7), f32(4, 3, 3, 2)]),
        "conv3d": (lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 2, 1), "SAME"), [f32(1, 2, 5, 6, 4), f32(3, 2, 2, 3, 2)]),
        "depthwise_grad": (lambda x, w: jax.grad(lambda w: jnp.sum(jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=3) ** 2))(w), [f32(2, 3, 6, 6), f32(3, 1, 3, 3)]),
        "dot_general_multi": (lambda a, b: jax.lax.dot_general(a, b, (((1, 3), (2, 0)), ((0,), (1,)))), [f32(2, 3, 4, 5), f32(5, 2, 3, 6)]),
        "int8_dot": (lambda a, b: jax.lax.dot(a, b, preferred_element_type=jnp.int32), [rng.integers(-128, 127, (4, 9)).astype(np.int8), rng.integers(-128, 127, (9, 3)).astype(np.int8)]),
        "complex_matmul": (lambda a, b: jnp.abs((a + 1j * b) @ (b - 1j * a).T), [f32(3, 4), f32(3, 4)]),
        "ifft_irfft": (lambda a: (jnp.fft.irfft(jnp.fft.rfft(a)), jnp.real(jnp.fft.ifft(a))), [f32(3, 10)]),
        "fftn": (lambda a: jnp.abs(jnp.fft.fftn(a)), [f32(4, 6, 8)]),
        "angle_conj": (lambda a, b: (jnp.angle(a + 1j * b), jnp.imag(jnp.conj(a + 1j * b))), [f32(8), f32(8)]),
        "u8_wrap": (lambda a, b: (a + b, a - b, a * b, a << 3, ~a), [rng.integers(0, 255, 10).astype(np.uint8), rng.integers(0, 255, 10).astype(np.uint8)]),
        "i16_ops": (lambda a, b: (a * b, a // jnp.where(b == 0, 1, b), jnp.abs(a), jnp.maximum(a, b)), [rng.integers(-30000, 30000, 10).astype(np.int16), rng.integers(-300, 300, 10).astype(np.int16)]),
        "convert_to_int8": (lambda x: ((x * 100).astype(jnp.int8), (x * 1000).astype(jnp.uint8)), [f32(10)]),
        "convert_bool": (lambda x: (x.astype(bool), (x > 0).astype(jnp.float32), (x > 0).astype(jnp.int32)), [f32(10)]),
        "reduce_precision": (lambda x: jax.lax.reduce_precision(x * 1000, exponent_bits=5, mantissa_bits=2), [f32(12)]),
        "select_and_scatter_stride": (lambda x: jax.grad(lambda y: jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (3, 3), (2, 2), "SAME").sum())(x), [f32(7, 7)]),
        "avgpool_grad": (lambda x: jax.grad(lambda y: jax.lax.reduce_window(y, 0.0, jax.lax.add, (2, 2), (1, 1), "VALID").sum())(x), [f32(5, 5)]),
        "rsqrt_cbrt": (lambda x: (jax.lax.rsqrt(jnp.abs(x) + 0.1), jnp.cbrt(x)), [f32(20)]),
        "tan_atan2": (lambda a, b: (jnp.tan(a), jnp.arctan2(a, b)), [f32(20), f32(20)]),
        "integer_pow": (lambda x: (jax.lax.integer_pow(x, 5), jax.lax.integer_pow(x, -2)), [f32(10) + 3]),
        "int_pow": (lambda a, b: a ** jnp.abs(b % 5), [i32(10, lo=-5, hi=5), i32(10)]),
        "round_afz_even": (lambda x: (jnp.round(x * 2.5), jax.lax.round(x * 2.5, jax.lax.RoundingMethod.AWAY_FROM_ZERO)), [f32(20)]),
        "mean_keepdims_bcast": (lambda x: x - x.mean(axis=(0, 2), keepdims=True), [f32(3, 4, 5)]),
        "clip_nan": (lambda x: jnp.clip(x, -1.0, 1.0), [np.array([np.nan, -2, 0.5, 3, -np.inf], np.float32)]),
        "min_max_nan": (lambda a, b: (jnp.minimum(a, b), jnp.maximum(a, b), jnp.fmin(a, b), jnp.fmax(a, b)), [np.array([np.nan, 1, -0.0, 2], np.float32), np.array([1, np.nan, 0.0, np.nan], np.float32)]),
        "expand_squeeze": (lambda x: jnp.squeeze(jnp.expand_dims(x, (0, 2)), 0) * 2, [f32(3, 4)]),
        "einsum_broadcast": (lambda a, b: jnp.einsum("...ij,...jk->...ik", a, b), [f32(2, 1, 3, 4), f32(1, 5, 4, 2)]),
        "segment_sum": (lambda d, s: jax.ops.segment_sum(d, s, num_segments=4), [f32(10, 2), i32(10, lo=0, hi=4)]),
        "polyval": (lambda c, x: jnp.polyval(c, x), [f32(5), f32(9)]),
        "linspace_arange": (lambda x: x + jnp.linspace(0, 1, 7) + jnp.arange(7), [f32(7)]),
        "diag_trace": (lambda x: (jnp.diag(x), jnp.trace(x), jnp.diagflat(x[0])), [f32(4, 4)]),
        "kron": (lambda a, b: jnp.kron(a, b), [f32(2, 3), f32(3, 2)]),
        "cross": (lambda a, b: jnp.cross(a, b), [f32(5, 3), f32(5, 3)]),
        "bf16_sum": (lambda x: jnp.sum(x.astype(bf), axis=1), [f32(4, 300)]),
        "f16_sum_all": (lambda x: jnp.sum(x.astype(hf)), [f32(1000)]),
        "bf16_mean_var": (lambda x: (jnp.mean(x.astype(bf), axis=0), jnp.var(x.astype(bf), axis=0)), [f32(50, 3)]),
        "bf16_softmax": (lambda x: jax.nn.softmax(x.astype(bf), axis=-1), [f32(4, 33)]),
        "f16_layernorm": (lambda x: ((x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5)).astype(hf), [f32(3, 20)]),
        "f16_ln_inside": (lambda x: (lambda h: (h - h.mean(-1, keepdims=True)) * jax.lax.rsqrt(h.var(-1, keepdims=True) + hf(1e-3)))(x.astype(hf)), [f32(3, 20)]),
        "bf16_conv": (lambda x, w: jax.lax.conv_general_dilated(x.astype(bf), w.astype(bf), (1, 1), "SAME"), [f32(1, 3, 6, 6), f32(4, 3, 3, 3)]),
        "f16_unary": (lambda x: (jnp.exp(x.astype(hf)), jnp.tanh(x.astype(hf)), jnp.log(jnp.abs(x).astype(hf) + hf(0.01)), jax.nn.sigmoid(x.astype(hf))), [f32(30)]),
        "bf16_unary": (lambda x: (jnp.exp(x.astype(bf)), jnp.sin(x.astype(bf)), jnp.sqrt(jnp.abs(x).astype(bf)), jax.lax.erf(x.astype(bf))), [f32(30)]),
        "bf16_matmul_f32out": (lambda a, b: jnp.dot(a.astype(bf), b.astype(bf), preferred_element_type=jnp.float32), [f32(8, 64), f32(64, 4)]),
        "f16_batched_dot": (lambda a, b: jnp.einsum("bij,bjk->bik", a.astype(hf), b.astype(hf)), [f32(2, 5, 33), f32(2, 33, 3)]),
        "bf16_reduce_max_window": (lambda x: jax.lax.reduce_window(x.astype(bf), -jnp.inf, jax.lax.max, (2, 2), (2, 2), "VALID"), [f32(6, 6)]),
        "bf16_avgpool": (lambda x: jax.lax.reduce_window(x.astype(bf), bf(0), jax.lax.add, (3, 3), (1, 1), "SAME") / 9, [f32(6, 6)]),
        "f16_scatter_add": (lambda x, i, u: x.astype(hf).at[i].add(u.astype(hf)), [f32(6), rng.integers(0, 6, 20).astype(np.int32), f32(20)]),
        "bf16_mlp": (lambda x, w1, w2: jax.nn.relu(x.astype(bf) @ w1.astype(bf)) @ w2.astype(bf), [f32(4, 32), f32(32, 16), f32(16, 3)]),
        "bf16_convert_roundtrip": (lambda x: ((x * 300).astype(bf).astype(jnp.int32), (x * 1e5).astype(hf)), [f32(12)]),
    }


def cases_64(rng) -> dict:
    """{name: (function, inputs)} with ``jax_enable_x64``."""
    def f64(*s):
        return rng.standard_normal(s).astype(np.float64)
    return {
        "x64_int_ops": (lambda a, b: (a * b, a // jnp.where(b == 0, 1, b), a % jnp.where(b == 0, 1, b), a >> 3, jnp.bitwise_xor(a, b)), [rng.integers(-2**40, 2**40, 10), rng.integers(-1000, 1000, 10)]),
        "x64_uint": (lambda a, b: (a + b, a * b, a >> jnp.uint64(5), jnp.maximum(a, b)), [rng.integers(0, 2**63, 10, dtype=np.uint64), rng.integers(0, 2**63, 10, dtype=np.uint64)]),
        "x64_f64_math": (lambda x: (jnp.exp(x), jnp.log1p(jnp.abs(x)), jnp.tanh(x), jnp.sin(x * 100), jnp.arctan2(x, 1 - x), jax.scipy.special.erf(x)), [f64(20)]),
        "x64_f64_matmul": (lambda a, b: a @ b, [f64(30, 40), f64(40, 20)]),
        "x64_converts": (lambda x: (x.astype(jnp.int64), x.astype(jnp.float32), (x * 1e10).astype(jnp.int64), x.astype(jnp.uint32)), [np.abs(f64(10)) * 100]),
        "x64_cumsum_sort": (lambda x: (jnp.cumsum(x), jnp.sort(x), jnp.argsort(x)), [f64(17)]),
        "x64_rng": (lambda k: jax.random.uniform(jax.random.wrap_key_data(k), (6,), dtype=jnp.float64), [np.asarray(jax.random.key_data(jax.random.key(5)))]),
        "x64_reduce": (lambda x: (x.sum(0), x.prod(1), x.max(), jnp.argmax(x)), [f64(6, 5)]),
        "x64_fft": (lambda x: jnp.abs(jnp.fft.rfft(x)), [f64(16)]),
        "x64_scatter": (lambda x, i, u: x.at[i].add(u), [f64(7), rng.integers(0, 7, 10), f64(10)]),
        "x64_int_to_float": (lambda a: (a.astype(jnp.float64), a.astype(jnp.float32)), [rng.integers(-2**62, 2**62, 10)]),
    }


def cases_both(rng, x64: bool) -> dict:
    """Programs built in both widths: f32/s32 and, with ``jax_enable_x64``,
    f64/s64 (names ending ``_x64``)."""
    F = np.float64 if x64 else np.float32

    def f(*s):
        return rng.standard_normal(s).astype(F)

    def ii(*s, lo=-50, hi=50):
        return rng.integers(lo, hi, s).astype(np.int64 if x64 else np.int32)
    cases = {
        "rmsnorm_bf16": (lambda x, g: (x.astype(bf) * jax.lax.rsqrt(jnp.mean(x.astype(bf) ** 2, -1, keepdims=True) + bf(1e-6)) * g.astype(bf)), [f(4, 64), f(64)]),
        "ce_loss_grad": (lambda w, x, y: jax.grad(lambda w: -jnp.mean(jnp.sum(jax.nn.one_hot(y, 6) * jax.nn.log_softmax(x @ w), -1)))(w), [f(8, 6), f(5, 8), ii(5, lo=0, hi=6)]),
        "topk_acc": (lambda x, y: jnp.mean(jnp.any(jax.lax.top_k(x, 2)[1] == y[:, None], axis=1)), [f(9, 7), ii(9, lo=0, hi=7)]),
        "gru_scan": (lambda h, xs, w, u: jax.lax.scan(lambda h, x: ((1 - jax.nn.sigmoid(x @ w)) * h + jax.nn.sigmoid(x @ w) * jnp.tanh(x @ u + h), h.sum()), h, xs), [f(4), f(6, 4), f(4, 4), f(4, 4)]),
        "scatter_add_dup_2d": (lambda x, i, u: x.at[i].add(u), [f(5, 3), ii(8, lo=0, hi=5), f(8, 3)]),
        "gather_2d_window": (lambda x, i: jax.vmap(lambda s: jax.lax.dynamic_slice(x, (s, s), (2, 3)))(i), [f(6, 7), ii(4, lo=-2, hi=9)]),
        "argsort_desc_stable": (lambda x: jnp.argsort(-jnp.round(x * 2), stable=True), [f(21)]),
        "sort_nan_inf": (lambda x: jnp.sort(x), [np.array([3, np.nan, -np.inf, 0.0, -0.0, np.inf, -1, np.nan], F)]),
        "nan_inf_arith": (lambda x: (x * 0, x - x, 1 / x, jnp.log(x), jnp.sqrt(x), jnp.exp(x)), [np.array([0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1], F)]),
        "maxpool_grad_pad": (lambda x: jax.grad(lambda y: jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME").sum())(x), [f(2, 5, 5, 2)]),
        "conv_bwd_input": (lambda x, w: jax.grad(lambda x: jnp.sum(jax.lax.conv_general_dilated(x, w, (2, 2), "SAME") ** 2))(x), [f(1, 2, 7, 7), f(3, 2, 3, 3)]),
        "conv_bwd_filter": (lambda x, w: jax.grad(lambda w: jnp.sum(jax.lax.conv_general_dilated(x, w, (2, 2), "VALID") ** 2))(w), [f(2, 2, 7, 7), f(3, 2, 3, 3)]),
        "einsum_attn": (lambda q, k: jnp.einsum("bhqd,bhkd->bhqk", q, k), [f(2, 3, 4, 5), f(2, 3, 6, 5)]),
        "cumlogsumexp_rev": (lambda x: jax.lax.cumlogsumexp(x, axis=0, reverse=True), [f(12, 2)]),
        "reduce_and_or": (lambda x: (jnp.all(x > 0, axis=0), jnp.any(x > 1, axis=1), jnp.sum(x > 0)), [f(5, 6)]),
        "bitwise_mix": (lambda a, b: (a & b, a | b, a ^ b, ~a, jnp.left_shift(a, 3), jnp.right_shift(a, 2)), [ii(10), ii(10)]),
        "int_minmax_abs": (lambda a, b: (jnp.minimum(a, b), jnp.maximum(a, b), jnp.abs(a), jnp.sign(a), -a), [ii(12), ii(12)]),
        "float_mod_floor": (lambda a, b: (jnp.floor_divide(a, b), jnp.mod(a, b)), [f(10), f(10)]),
        "expm1_small": (lambda x: (jnp.expm1(x * 1e-8), jnp.log1p(x * 1e-8)), [f(10)]),
        "big_reduce": (lambda x: (x.sum(), x.max(axis=0), x.mean(axis=1)), [f(64, 257)]),
        "big_softmax": (lambda x: jax.nn.softmax(x, axis=0), [f(129, 65)]),
        "pad_interior_neg": (lambda x: jnp.pad(x, ((1, 2), (0, 3)), mode="reflect"), [f(4, 5)]),
        "edge_pad_wrap": (lambda x: (jnp.pad(x, 2, mode="edge"), jnp.pad(x, 1, mode="wrap")), [f(3, 4)]),
        "clip_int": (lambda x: jnp.clip(x, -10, 10), [ii(15)]),
        "where_bcast": (lambda c, a, b: jnp.where(c > 0, a, b[:, None]), [f(4, 5), f(4, 5), f(4)]),
        "matvec": (lambda a, x: (a @ x, x @ a.T), [f(17, 9), f(9)]),
        "outer_prod_sum": (lambda a, b: jnp.sum(a[:, None, :] * b[None, :, :], -1), [f(7, 5), f(6, 5)]),
    }
    return {f"{name}_x64" if x64 else name: case for name, case in cases.items()}


def cases_more(rng) -> dict:
    """Transformations (vmap, checkpoint, custom JVPs, lax.map), more RNG, a few
    LAPACK custom calls (``tests/jax_linalg`` has them all), and programs xlac
    must refuse by name when it does not handle them (rng-bit-generator)."""
    def f32(*s):
        return rng.standard_normal(s).astype(np.float32)
    return {
        "linalg_inv": (lambda a: jnp.linalg.inv(a + 4 * jnp.eye(4)), [f32(4, 4)]),
        "cholesky": (lambda a: jnp.linalg.cholesky(a @ a.T + jnp.eye(3)), [f32(3, 3)]),
        "rbg_key": (lambda: jax.random.uniform(jax.random.key(0, impl="rbg"), (4,)), []),
        "variadic_reduce": (lambda x: jax.lax.reduce((x, jnp.arange(x.shape[0], dtype=jnp.int32)), (-jnp.inf, 0), lambda a, b: (jnp.maximum(a[0], b[0]), jnp.where(a[0] >= b[0], a[1], b[1])), (0,)), [f32(9)]),
        "lax_map": (lambda x: jax.lax.map(lambda r: jnp.sort(r)[::-1], x), [f32(4, 6)]),
        "vmap_while": (lambda x: jax.vmap(lambda v: jax.lax.while_loop(lambda c: c < 10.0, lambda c: c * 1.7 + 0.1, v))(x), [np.abs(f32(5)) + 0.1]),
        "checkpoint_grad": (lambda x: jax.grad(jax.checkpoint(lambda y: jnp.sum(jnp.sin(y) ** 2)))(x), [f32(6)]),
        "custom_jvp_relu6": (lambda x: jax.grad(lambda y: jnp.sum(jax.nn.relu6(y) * jax.nn.silu(y)))(x), [f32(8) * 4]),
        "eye_tri_solve": (lambda a, b: jax.scipy.linalg.solve_triangular(jnp.tril(a) + 3 * jnp.eye(3), b, lower=True), [f32(3, 3), f32(3, 2)]),
        "stop_grad_opt_barrier": (lambda x: jax.lax.optimization_barrier(jax.lax.stop_gradient(x) * 2), [f32(4)]),
        "nested_cond_while": (lambda x: jax.lax.fori_loop(0, 4, lambda i, v: jax.lax.cond(i % 2 == 0, lambda u: u + 1, lambda u: u * 2, v), x), [f32(3)]),
        "dynamic_index_in_loop": (lambda x: jax.lax.fori_loop(0, 6, lambda i, acc: acc + x[i % 3], jnp.zeros(4, x.dtype)), [f32(3, 4)]),
        "complex_fft_roundtrip": (lambda x: jnp.real(jnp.fft.ifft2(jnp.fft.fft2(x))), [f32(6, 10)]),
        "u32_rng_bits": (lambda k: jax.random.bits(jax.random.wrap_key_data(k), (7,)), [np.asarray(jax.random.key_data(jax.random.key(11)))]),
        "shuffle": (lambda k, x: jax.random.permutation(jax.random.wrap_key_data(k), x), [np.asarray(jax.random.key_data(jax.random.key(12))), f32(9)]),
        "categorical": (lambda k, l: jax.random.categorical(jax.random.wrap_key_data(k), l, shape=(6,)), [np.asarray(jax.random.key_data(jax.random.key(13))), f32(5)]),
        "gamma_rng": (lambda k: jax.random.gamma(jax.random.wrap_key_data(k), 2.5, (5,)), [np.asarray(jax.random.key_data(jax.random.key(14)))]),
        "associative_scan_add": (lambda x: jax.lax.associative_scan(jnp.add, x, axis=1), [f32(6, 37)]),
        "associative_scan_max_rev": (lambda x: jax.lax.associative_scan(jnp.maximum, x, reverse=True, axis=0), [f32(19, 5)]),
    }


#: (rtol, atol) of floating outputs, by dtype.
TOLERANCE = {"float64": (1e-9, 1e-12), "float32": (1e-4, 1e-5), "complex64": (1e-4, 1e-5),
             "complex128": (1e-9, 1e-12), "bfloat16": (8e-3, 1e-3), "float16": (8e-3, 1e-3)}


def _opcode(line: str):
    """The opcode of an HLO instruction line (after the shape, which may be a
    tuple with spaces), or None."""
    rest = line.split(" = ", 1)[1]
    if rest.startswith("("):
        depth = 0
        for k, ch in enumerate(rest):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 0:
                rest = rest[k + 1:]
                break
    else:
        rest = rest.split(" ", 1)[1] if " " in rest else ""
    m = re.match(r"\s*([a-z][a-z0-9-]*)\(", rest)
    return m.group(1) if m else None


def write_case(name: str, fn, args, x64: bool) -> dict:
    jf = jax.jit(fn, keep_unused=True)
    text = jf.lower(*args).as_text(dialect="hlo")
    outs = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(jf(*args))]
    ins = [np.asarray(a) for a in args]
    (OUT / f"{name}.hlo").write_text(text, encoding="utf-8")
    np.savez(OUT / f"{name}.npz", *ins)
    np.savez(OUT / f"{name}.expected.npz", *outs)
    outputs = []
    for k, o in enumerate(outs):
        rtol, atol = TOLERANCE.get(str(o.dtype), (0.0, 0.0))
        outputs.append({"name": f"arr_{k}", "dtype": str(o.dtype), "shape": list(o.shape),
                        "rtol": rtol, "atol": atol})
    opcodes = sorted({_opcode(line) for line in text.splitlines() if " = " in line} - {None})
    return {"name": name, "opcodes": opcodes, "x64": x64,
            "equal_nan": bool(any(np.issubdtype(o.dtype, np.inexact) and np.isnan(o).any() for o in outs)),
            "inputs": [{"name": f"arr_{k}", "dtype": str(a.dtype), "shape": list(a.shape)}
                       for k, a in enumerate(ins)],
            "outputs": outputs}


def main() -> None:
    manifest = []
    makers = ((False, cases_32), (True, cases_64), (False, lambda r: cases_both(r, False)),
              (True, lambda r: cases_both(r, True)), (False, cases_more))
    for x64, make in makers:
        jax.config.update("jax_enable_x64", x64)
        for name, (fn, args) in make(np.random.default_rng(0)).items():
            try:
                manifest.append(write_case(name, fn, args, x64))
            except Exception as e:  # noqa: BLE001 - a program jax cannot lower is left out
                print(f"skipped {name}: {type(e).__name__}: {e}", file=sys.stderr)
    jax.config.update("jax_enable_x64", False)
    (OUT / "manifest.json").write_text(json.dumps(
        {"format": "xlac-hlo-corpus/1", "set": "xlac jax cases",
         "generator": f"jax {jax.__version__}, XLA:CPU, XLA_FLAGS={os.environ['XLA_FLAGS']}",
         "num_cases": len(manifest), "cases": manifest}, indent=1), encoding="utf-8")
    print(f"{len(manifest)} cases written to {OUT}")


if __name__ == "__main__":
    main()
