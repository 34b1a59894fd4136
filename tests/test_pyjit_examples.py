"""The @xlac.jit examples (examples/*.py) run and agree with numpy."""
import importlib.util
import pathlib

import numpy as np
import pytest

pytestmark = pytest.mark.timeout(600)

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def numpy_sgd_step(p, x, labels, lr):
    h = np.maximum(x @ p["w1"] + p["b1"], 0)
    logits = h @ p["w2"] + p["b2"]
    z = logits - logits.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    onehot = np.eye(p["b2"].shape[0], dtype=np.float32)[labels]
    d = (np.exp(logp) - onehot) / len(x)
    dh = d @ p["w2"].T * (h > 0)
    g = {"w2": h.T @ d, "b2": d.sum(0), "w1": x.T @ dh, "b1": dh.sum(0)}
    return {k: p[k] - lr * g[k] for k in p}, -(onehot * logp).sum() / len(x)


def test_mlp_train():
    mod = load("mlp_train")
    rng = np.random.default_rng(3)
    params, (x, labels) = mod.init(rng), mod.data(rng)
    want, want_loss = numpy_sgd_step(params, x, labels, 0.1)
    got, loss = mod.sgd_step({k: v.copy() for k, v in params.items()}, x, labels, 0.1)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-6)
    _, losses = mod.main(steps=10)
    assert losses[-1] < 0.5 * losses[0]


def test_power_iteration():
    mod = load("power_iteration")
    a, (v, lam, iters) = mod.main()
    w, vecs = np.linalg.eigh(a.astype(np.float64))
    np.testing.assert_allclose(lam, w[-1], rtol=1e-5)
    np.testing.assert_allclose(np.abs(v @ vecs[:, -1]), 1, rtol=1e-4)
    assert 1 < iters < 1000


def test_conv_relu_maxpool():
    mod = load("conv_relu_maxpool")
    (images, kernel, bias), out = mod.main()
    n, hh, ww, _ = images.shape
    p = np.pad(images, ((0, 0), (1, 1), (1, 1), (0, 0)))
    conv = np.zeros((n, hh, ww, kernel.shape[3]), np.float32)
    for i in range(3):
        for j in range(3):
            conv += np.einsum("nhwc,co->nhwo", p[:, i:i + hh, j:j + ww], kernel[i, j])
    relu = np.maximum(conv + bias, 0)
    want = relu.reshape(n, hh // 2, 2, ww // 2, 2, -1).max((2, 4))
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)
