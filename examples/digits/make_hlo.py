"""Regenerate the HLO of the digits example from JAX (needs jax; not needed to run the example).

    python examples/digits/make_hlo.py      # writes train_step.hlo and predict.hlo beside this file

The model: 64 pixels -> 64 hidden units (ReLU) -> 10 logits.  ``train_step`` is one
step of plain SGD on the mean softmax cross-entropy of a batch of ``BATCH``
images; ``predict`` classifies one image.  Both are exported as HLO text, the
way any JAX program can be handed to xlac:
``jax.jit(f).lower(*args).as_text(dialect="hlo")``.
"""
import os

import jax
import jax.numpy as jnp

PIXELS, HIDDEN, CLASSES, BATCH = 64, 64, 10, 32
HERE = os.path.dirname(os.path.abspath(__file__))


def logits(w1, b1, w2, b2, x):
    return jnp.maximum(x @ w1 + b1, 0.0) @ w2 + b2


def loss(params, x, y_onehot):
    z = logits(*params, x)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(z) * y_onehot, axis=-1))


def train_step(w1, b1, w2, b2, x, y_onehot, lr):
    """(parameters, a batch, the learning rate) -> (new parameters..., the batch's loss)."""
    params = (w1, b1, w2, b2)
    value, grads = jax.value_and_grad(loss)(params, x, y_onehot)
    return (*(p - lr * g for p, g in zip(params, grads)), value)


def predict(w1, b1, w2, b2, image):
    """One image (64 pixels in [0, 1]) -> its class (s32) and its 10 logits."""
    z = logits(w1, b1, w2, b2, image[None, :])[0]
    return jnp.argmax(z).astype(jnp.int32), z


def main():
    f32 = jnp.float32
    params = (jnp.zeros((PIXELS, HIDDEN), f32), jnp.zeros((HIDDEN,), f32),
              jnp.zeros((HIDDEN, CLASSES), f32), jnp.zeros((CLASSES,), f32))
    step_args = (*params, jnp.zeros((BATCH, PIXELS), f32), jnp.zeros((BATCH, CLASSES), f32), f32(0.1))
    texts = {"train_step.hlo": jax.jit(train_step).lower(*step_args).as_text(dialect="hlo"),
             "predict.hlo": jax.jit(predict).lower(*params, jnp.zeros((PIXELS,), f32)).as_text(dialect="hlo")}
    for name, text in texts.items():
        with open(os.path.join(HERE, name), "w", encoding="utf-8") as fh:
            fh.write(text)
        print(f"wrote {name} ({len(text.splitlines())} lines, jax {jax.__version__})")


if __name__ == "__main__":
    main()
