"""Handwritten digits with xlac: train in Python, classify from C.

    pip install -e '.[examples]'             # scikit-learn and matplotlib
    python examples/digits/digits.py [--epochs 40] [--out DIR] [--no-c]

1. Loads the 8x8 digits that ship inside scikit-learn (``load_digits``: 1797
   images, no download) and splits them 80/20 into training and test sets.
2. Trains a 64-64-10 ReLU network with plain SGD: every step is
   ``train_step.hlo`` — one SGD step of the softmax cross-entropy, exported
   from JAX by ``make_hlo.py`` — compiled by ``xlac.jit`` and called on numpy
   arrays.  JAX is not needed to run this.
3. Plots the loss per epoch to ``DIR/loss.png`` (when matplotlib is installed) and reports the
   test accuracy of ``predict.hlo`` (one image -> class, logits) under xlac.
4. Compiles ``predict.hlo`` ahead of time (``xlac.compile_aot``: an object file
   and a C header), builds ``classify.c`` with it and the C runtime, runs it on
   the test set and checks that C and Python predict the same classes.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import time

import numpy as np

import xlac

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH = 32                      # the batch train_step.hlo was exported for
HIDDEN = 64


def load_data(seed: int):
    """(x_train, y_train, x_test, y_test): pixels scaled to [0, 1] (f32), labels s32."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.2, stratify=y, random_state=seed)
    return x_tr, y_tr, x_te, y_te


def init_params(seed: int) -> list:
    """He-initialised weights, zero biases: [w1 f32[64,64], b1 f32[64], w2 f32[64,10], b2 f32[10]]."""
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((64, HIDDEN)) * np.sqrt(2 / 64)
    w2 = rng.standard_normal((HIDDEN, 10)) * np.sqrt(2 / HIDDEN)
    return [w1.astype(np.float32), np.zeros(HIDDEN, np.float32), w2.astype(np.float32),
            np.zeros(10, np.float32)]


def train(x, y, epochs: int, lr: float, seed: int, log=print):
    """SGD over shuffled batches of BATCH (the last partial batch is dropped);
    returns the parameters and the mean loss of each epoch."""
    step = xlac.jit(os.path.join(HERE, "train_step.hlo"))
    params = init_params(seed)
    rng = np.random.default_rng(seed + 1)
    onehot = np.eye(10, dtype=np.float32)[y]
    rate = np.float32(lr)
    losses = []
    for epoch in range(epochs):
        order = rng.permutation(len(x))
        batch_losses = []
        for start in range(0, len(x) - BATCH + 1, BATCH):
            idx = order[start:start + BATCH]
            *params, loss = step(*params, x[idx], onehot[idx], rate)
            batch_losses.append(float(loss))
        losses.append(float(np.mean(batch_losses)))
        if epoch == 0 or (epoch + 1) % 10 == 0 or epoch == epochs - 1:
            log(f"epoch {epoch + 1:3d}: mean loss {losses[-1]:.4f}")
    return params, losses


def predict_all(params, x) -> np.ndarray:
    """The class predict.hlo gives each image (xlac.jit, one call per image)."""
    predict = xlac.jit(os.path.join(HERE, "predict.hlo"))
    return np.array([int(predict(*params, image)[0]) for image in x], np.int32)


def plot_losses(losses, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(range(1, len(losses) + 1), losses, marker="o", markersize=3)
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean training loss (cross-entropy)")
    ax.set_yscale("log")
    ax.set_title("digits: 64-64-10 MLP, SGD, each step compiled by xlac")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _runtime_dir() -> str | None:
    """runtime/ of the source tree (xlac_runtime.c/.h), or None (an installed xlac)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(xlac.__file__)))
    path = os.path.join(root, "runtime")
    return path if os.path.isfile(os.path.join(path, "xlac_runtime.c")) else None


def classify_in_c(params, x, y, out: str) -> np.ndarray:
    """Compile predict.hlo ahead of time, build classify.c, run it on (x, y);
    returns its predictions.  Raises RuntimeError when no C compiler or no
    runtime/ directory is found, or when the program fails."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    runtime = _runtime_dir()
    if cc is None or runtime is None:
        raise RuntimeError("no C compiler" if cc is None else "no runtime/ directory (xlac's source tree)")
    xlac.compile_aot(os.path.join(HERE, "predict.hlo"), os.path.join(out, "digits.o"),
                     header=os.path.join(out, "digits.h"), name="digits")
    np.concatenate([p.ravel() for p in params]).astype(np.float32).tofile(os.path.join(out, "weights.f32"))
    np.ascontiguousarray(x, np.float32).tofile(os.path.join(out, "test_images.f32"))
    np.ascontiguousarray(y, np.int32).tofile(os.path.join(out, "test_labels.s32"))
    exe = os.path.join(out, "classify")
    subprocess.run([cc, "-std=c99", "-O2", f"-I{out}", f"-I{runtime}", os.path.join(HERE, "classify.c"),
                    os.path.join(out, "digits.o"), os.path.join(runtime, "xlac_runtime.c"), "-o", exe,
                    "-lm", "-lpthread"], check=True, capture_output=True, text=True)
    run = subprocess.run([exe, out], check=True, capture_output=True, text=True)
    lines = run.stdout.split()
    return np.array([int(v) for v in lines[:len(x)]], np.int32)


def run(epochs: int = 40, lr: float = 0.1, seed: int = 0, out: str = "digits_out", c: bool = True,
        plot: bool = True, log=print) -> dict:
    """The whole example; returns {"losses", "accuracy", "c_accuracy", "c_agrees", "plot"}."""
    os.makedirs(out, exist_ok=True)
    x_tr, y_tr, x_te, y_te = load_data(seed)
    log(f"digits: {len(x_tr)} training and {len(x_te)} test images of 8x8 pixels")
    t0 = time.perf_counter()
    params, losses = train(x_tr, y_tr, epochs, lr, seed, log)
    log(f"trained {epochs} epoch(s) in {time.perf_counter() - t0:.1f} s (compilation included)")
    pred = predict_all(params, x_te)
    result = {"losses": losses, "accuracy": float(np.mean(pred == y_te)), "plot": None,
              "c_accuracy": None, "c_agrees": None}
    log(f"test accuracy (xlac.jit): {result['accuracy']:.4f} ({int(np.sum(pred == y_te))}/{len(y_te)})")
    if plot and importlib.util.find_spec("matplotlib") is None:
        log("loss curve: not plotted, matplotlib is not installed (pip install 'xlac[examples]')")
    elif plot:
        result["plot"] = os.path.join(out, "loss.png")
        plot_losses(losses, result["plot"])
        log(f"loss curve: {result['plot']}")
    if c:
        c_pred = classify_in_c(params, x_te, y_te, out)
        result["c_accuracy"] = float(np.mean(c_pred == y_te))
        result["c_agrees"] = bool(np.array_equal(c_pred, pred))
        log(f"test accuracy (C, xlac compile): {result['c_accuracy']:.4f}; "
            f"{'the same' if result['c_agrees'] else 'NOT the same'} predictions as Python")
    return result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=40, help="passes over the training set (default 40)")
    p.add_argument("--lr", type=float, default=0.1, help="SGD learning rate (default 0.1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the split, the weights and the order")
    p.add_argument("--out", default="digits_out", help="directory for loss.png and the C build")
    p.add_argument("--no-c", action="store_true", help="skip the ahead-of-time C part")
    p.add_argument("--no-plot", action="store_true", help="skip the loss plot (no matplotlib needed)")
    args = p.parse_args(argv)
    result = run(args.epochs, args.lr, args.seed, args.out, c=not args.no_c, plot=not args.no_plot)
    return 0 if result["c_agrees"] in (None, True) else 1


if __name__ == "__main__":
    sys.exit(main())
