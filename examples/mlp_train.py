"""A two-layer MLP trained by SGD with xlac.jit: cross-entropy and its gradient by hand.

    python examples/mlp_train.py

One ``@xlac.jit`` step takes the parameters (a dict: a pytree), a batch and the
learning rate, and returns the new parameters and the loss; the parameters are
donated, so the step may update them in place.
"""
import numpy as np

import xlac
from xlac import lax


def forward(params, x):
    h = lax.max(x @ params["w1"] + params["b1"], 0.0)           # relu
    return h, h @ params["w2"] + params["b2"]


@xlac.jit(donate_argnums=0)
def sgd_step(params, x, labels, lr):
    batch, classes = x.shape[0], params["b2"].shape[0]
    h, logits = forward(params, x)
    z = logits - logits.max(axis=1, keepdims=True)                # stable log-softmax
    logp = z - lax.log(lax.exp(z).sum(axis=1, keepdims=True))
    onehot = (labels[:, None] == lax.broadcasted_iota(np.int32, (batch, classes), 1)).astype(x.dtype)
    loss = -(onehot * logp).sum() / batch
    # d loss / d logits = (softmax - onehot) / batch, then back through each layer.
    dlogits = (lax.exp(logp) - onehot) / batch
    dh = (dlogits @ params["w2"].T) * (h > 0)
    grads = {"w2": h.T @ dlogits, "b2": dlogits.sum(axis=0),
             "w1": x.T @ dh, "b1": dh.sum(axis=0)}
    return {k: params[k] - lr * grads[k] for k in params}, loss


def init(rng, sizes=(8, 16, 3)):
    d, h, c = sizes
    return {"w1": (rng.standard_normal((d, h)) / np.sqrt(d)).astype(np.float32),
            "b1": np.zeros(h, np.float32),
            "w2": (rng.standard_normal((h, c)) / np.sqrt(h)).astype(np.float32),
            "b2": np.zeros(c, np.float32)}


def data(rng, n=64, d=8, c=3):
    centers = rng.standard_normal((c, d)).astype(np.float32) * 3
    labels = rng.integers(0, c, n).astype(np.int32)
    return (centers[labels] + rng.standard_normal((n, d)).astype(np.float32)), labels


def main(steps=20, seed=0):
    rng = np.random.default_rng(seed)
    params, (x, labels) = init(rng), data(rng)
    losses = []
    for _ in range(steps):
        params, loss = sgd_step(params, x, labels, 0.1)
        losses.append(float(loss))
    return params, losses


if __name__ == "__main__":
    _, losses = main()
    print("loss:", " ".join(f"{v:.3f}" for v in losses))
