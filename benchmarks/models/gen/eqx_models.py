"""Equinox models (modules as pytrees, ``eqx.partition`` into arrays and static
parts, per-example code under ``jax.vmap``): a CNN train step, an LSTM
(``lax.scan`` over ``eqx.nn.LSTMCell``) train step, and a transformer encoder
train step with dropout.
"""
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

BATCH = 8


def _train(model, loss_one, data, tx):
    """A train step of ``model`` (an equinox module): ``loss_one(model, *example, key)`` vmapped
    over the batch, ``eqx.partition`` keeping the arrays as the step's inputs."""
    params, static = eqx.partition(model, eqx.is_array)
    opt_state = tx.init(params)

    def train_step(params, opt_state, key, *batch):
        def loss_fn(p):
            m = eqx.combine(p, static)
            keys = jax.random.split(key, batch[0].shape[0])
            return jnp.mean(jax.vmap(lambda *ex: loss_one(m, *ex))(*batch, keys))
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return eqx.apply_updates(params, updates), opt_state, loss

    return train_step, (params, opt_state, np.asarray(jax.random.PRNGKey(21)), *data)


class CNN(eqx.Module):
    layers: list

    def __init__(self, key):
        k = jax.random.split(key, 4)
        self.layers = [eqx.nn.Conv2d(1, 8, 3, padding=1, key=k[0]), jax.nn.relu, eqx.nn.MaxPool2d(2, 2),
                       eqx.nn.Conv2d(8, 16, 3, padding=1, key=k[1]), jax.nn.relu, eqx.nn.MaxPool2d(2, 2),
                       jnp.ravel, eqx.nn.Linear(16 * 4 * 4, 32, key=k[2]), jax.nn.relu,
                       eqx.nn.Linear(32, 10, key=k[3]), jax.nn.log_softmax]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def eqx_cnn_train():
    """Equinox CNN (2 conv + max-pool, 2 linear) on 16x16 images, NLL loss; adam."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((BATCH, 1, 16, 16)).astype(np.float32)
    y = rng.integers(0, 10, BATCH).astype(np.int32)
    return _train(CNN(jax.random.PRNGKey(0)), lambda m, x, y, key: -m(x)[y], (x, y), optax.adam(3e-4))


class LSTMRegressor(eqx.Module):
    cell: eqx.nn.LSTMCell
    out: eqx.nn.Linear

    def __init__(self, key):
        k1, k2 = jax.random.split(key)
        self.cell = eqx.nn.LSTMCell(4, 24, key=k1)
        self.out = eqx.nn.Linear(24, 1, key=k2)

    def __call__(self, xs):
        h0 = (jnp.zeros(24), jnp.zeros(24))
        (h, _), _ = jax.lax.scan(lambda hc, x: (self.cell(x, hc), None), h0, xs)
        return self.out(h)[0]


def eqx_lstm_train():
    """Equinox LSTM (lax.scan over eqx.nn.LSTMCell, 20 steps) regressing a sequence's sum; adamw."""
    rng = np.random.default_rng(13)
    xs = rng.standard_normal((BATCH, 20, 4)).astype(np.float32)
    ys = xs.sum(axis=(1, 2)).astype(np.float32) * 0.1
    return _train(LSTMRegressor(jax.random.PRNGKey(0)), lambda m, xs, y, key: (m(xs) - y) ** 2, (xs, ys),
                  optax.adamw(1e-3))


class EncoderLayer(eqx.Module):
    attn: eqx.nn.MultiheadAttention
    ln1: eqx.nn.LayerNorm
    ln2: eqx.nn.LayerNorm
    mlp: eqx.nn.MLP
    drop: eqx.nn.Dropout

    def __init__(self, d, key):
        k1, k2 = jax.random.split(key)
        self.attn = eqx.nn.MultiheadAttention(4, d, key=k1)
        self.ln1, self.ln2 = eqx.nn.LayerNorm(d), eqx.nn.LayerNorm(d)
        self.mlp = eqx.nn.MLP(d, d, 2 * d, 1, activation=jax.nn.gelu, key=k2)
        self.drop = eqx.nn.Dropout(0.1)

    def __call__(self, x, key):
        k1, k2 = jax.random.split(key)
        h = jax.vmap(self.ln1)(x)
        x = x + self.drop(self.attn(h, h, h), key=k1)
        return x + self.drop(jax.vmap(self.mlp)(jax.vmap(self.ln2)(x)), key=k2)


class Encoder(eqx.Module):
    embed: eqx.nn.Embedding
    layers: list
    head: eqx.nn.Linear

    def __init__(self, key):
        ks = jax.random.split(key, 5)
        self.embed = eqx.nn.Embedding(50, 32, key=ks[0])
        self.layers = [EncoderLayer(32, k) for k in ks[1:4]]
        self.head = eqx.nn.Linear(32, 2, key=ks[4])

    def __call__(self, tokens, key):
        x = jax.vmap(self.embed)(tokens)
        for layer, k in zip(self.layers, jax.random.split(key, len(self.layers))):
            x = layer(x, k)
        return jax.nn.log_softmax(self.head(jnp.mean(x, axis=0)))


def eqx_transformer_train():
    """Equinox transformer encoder (3 layers: eqx.nn.MultiheadAttention, MLP, LayerNorm, dropout
    with per-example keys) classifying token sequences; adam with a warmup-cosine schedule."""
    rng = np.random.default_rng(14)
    tokens = rng.integers(0, 50, (BATCH, 12)).astype(np.int32)
    y = rng.integers(0, 2, BATCH).astype(np.int32)
    return _train(Encoder(jax.random.PRNGKey(0)), lambda m, t, y, key: -m(t, key)[y], (tokens, y),
                  optax.adam(optax.warmup_cosine_decay_schedule(0.0, 1e-3, 5, 50)))


PROGRAMS = {"eqx_cnn_train": eqx_cnn_train, "eqx_lstm_train": eqx_lstm_train,
            "eqx_transformer_train": eqx_transformer_train}
