"""The dominant eigenpair of a symmetric matrix by power iteration, in one xlac.lax.while_loop.

    python examples/power_iteration.py

The loop state is a tuple; the body reads the matrix ``a`` of the enclosing
function (xlac passes it into the loop), and stops when the Rayleigh quotient
settles or after ``max_iters``.
"""
import numpy as np

import xlac
from xlac import lax


@xlac.jit(static_argnums=3)
def power_iteration(a, v0, tol, max_iters=1000):
    def not_done(state):
        _, lam, prev, i = state
        return (abs(lam - prev) > tol) & (i < max_iters)

    def step(state):
        v, lam, _, i = state
        w = a @ v
        w = w / lax.sqrt(w @ w)
        return w, w @ (a @ w), lam, i + 1

    v0 = v0 / lax.sqrt(v0 @ v0)
    v, lam, _, iters = lax.while_loop(not_done, step, (v0, v0 @ (a @ v0), lam_inf(a), 0))
    return v, lam, iters


def lam_inf(a):
    return lax.full((), np.inf, a.dtype)


def main(n=32, seed=0):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n)).astype(np.float32)
    a = (m + m.T) / 2 + n * np.eye(n, dtype=np.float32)        # a clear dominant eigenvalue
    return a, power_iteration(a, np.ones(n, np.float32), 1e-6)


if __name__ == "__main__":
    a, (v, lam, iters) = main()
    print(f"lambda = {lam:.5f} after {iters} iterations; numpy: {np.linalg.eigvalsh(a)[-1]:.5f}")
