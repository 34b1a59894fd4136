"""Recurrent models (flax.linen): a stacked-LSTM classifier train step and a
bidirectional-GRU sequence tagger train step with padding masks; both run their
cells under ``nn.RNN`` (a ``lax.scan``: while loops forward and backward).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

SEQ, FEATURES, HIDDEN, BATCH, CLASSES, VOCAB = 12, 8, 32, 4, 5, 40


class LSTMClassifier(nn.Module):
    @nn.compact
    def __call__(self, x):
        for _ in range(2):
            x = nn.RNN(nn.OptimizedLSTMCell(HIDDEN))(x)
        return nn.Dense(CLASSES)(x[:, -1])


def lstm_train():
    """Stacked 2-layer LSTM (nn.RNN over OptimizedLSTMCell) classifying sequences by their last
    state; adam after global-norm clipping."""
    model = LSTMClassifier()
    rng = np.random.default_rng(6)
    x = rng.standard_normal((BATCH, SEQ, FEATURES)).astype(np.float32)
    y = rng.integers(0, CLASSES, BATCH).astype(np.int32)
    params = model.init(jax.random.PRNGKey(0), x)["params"]
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3))
    opt_state = tx.init(params)

    def train_step(params, opt_state, x, y):
        def loss_fn(p):
            return optax.softmax_cross_entropy_with_integer_labels(model.apply({"params": p}, x), y).mean()
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return train_step, (params, opt_state, x, y)


class BiGRUTagger(nn.Module):
    @nn.compact
    def __call__(self, tokens, lengths):
        x = nn.Embed(VOCAB, 16)(tokens)
        x = nn.Bidirectional(nn.RNN(nn.GRUCell(HIDDEN)), nn.RNN(nn.GRUCell(HIDDEN)))(x, seq_lengths=lengths)
        return nn.Dense(CLASSES)(nn.LayerNorm()(x))


def bigru_tagger_train():
    """Bidirectional GRU tagger (embedding, nn.Bidirectional of two nn.RNN(GRUCell) with
    sequence lengths, LayerNorm) trained with a masked per-token loss; rmsprop."""
    model = BiGRUTagger()
    rng = np.random.default_rng(7)
    tokens = rng.integers(0, VOCAB, (BATCH, SEQ)).astype(np.int32)
    tags = rng.integers(0, CLASSES, (BATCH, SEQ)).astype(np.int32)
    lengths = np.array([SEQ, 9, 5, 11], np.int32)
    params = model.init(jax.random.PRNGKey(0), tokens, lengths)["params"]
    tx = optax.rmsprop(1e-3, decay=0.9, momentum=0.9)
    opt_state = tx.init(params)

    def train_step(params, opt_state, tokens, tags, lengths):
        mask = jnp.arange(SEQ)[None, :] < lengths[:, None]

        def loss_fn(p):
            logits = model.apply({"params": p}, tokens, lengths)
            losses = optax.softmax_cross_entropy_with_integer_labels(logits, tags)
            return jnp.sum(losses * mask) / jnp.sum(mask)
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return train_step, (params, opt_state, tokens, tags, lengths)


PROGRAMS = {"lstm_train": lstm_train, "bigru_tagger_train": bigru_tagger_train}
