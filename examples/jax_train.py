"""A plain jax training loop, run unchanged on xlac's PJRT backend:

    JAX_PLATFORMS=xlac python examples/jax_train.py

A two-layer MLP fitted to sin(x) by gradient descent: ``jax.jit``,
``jax.value_and_grad``, ``jax.lax.scan`` (ten steps per call), the parameters
donated to each call, and ``jax.debug.print`` from inside the compiled step.
Nothing here names xlac: every program jax compiles goes to the backend
``JAX_PLATFORMS`` selects (``cpu`` runs the same script on XLA:CPU).
"""
from functools import partial

import jax
import jax.numpy as jnp


def init(key, hidden=32):
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (1, hidden)) * 0.5, "b1": jnp.zeros(hidden),
            "w2": jax.random.normal(k2, (hidden, 1)) / hidden, "b2": jnp.zeros(1)}


def loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


@partial(jax.jit, donate_argnums=0)
def ten_steps(params, x, y):
    def step(p, _):
        value, grads = jax.value_and_grad(loss)(p, x, y)
        return jax.tree.map(lambda w, g: w - 0.05 * g, p, grads), value
    params, values = jax.lax.scan(step, params, None, length=10)
    jax.debug.print("loss {first:.4f} -> {last:.4f}", first=values[0], last=values[-1])
    return params, values[-1]


def main():
    x = jnp.linspace(-3, 3, 256).reshape(-1, 1)
    y = jnp.sin(x)
    params = init(jax.random.key(0))
    first = float(loss(params, x, y))
    for _ in range(20):
        params, last = ten_steps(params, x, y)
    print(f"{jax.devices()[0]}: loss {first:.4f} -> {float(last):.4f} after 200 steps")
    assert float(last) < first / 4


if __name__ == "__main__":
    main()
