"""GPT-style transformer language models (flax.linen + optax): a train step with
adamw, its sampling step, and the same model with its layers under ``nn.scan``
and ``nn.remat`` (one while loop whose body is a whole block, rematerialised).

The widths are tiny (the data committed stays small); the structure is a real
one: pre-LayerNorm blocks, causal multi-head attention, GELU MLP, dropout, tied
embeddings, gradient clipping, a warmup-cosine schedule and weight decay masked
off biases, LayerNorm scales and embeddings.
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

VOCAB, D, HEADS, LAYERS, SEQ, BATCH, DROPOUT = 96, 32, 4, 6, 16, 4, 0.1


class Block(nn.Module):
    d: int
    heads: int
    dropout: float
    train: bool

    @nn.compact
    def __call__(self, x, _=None):
        mask = nn.make_causal_mask(jnp.ones(x.shape[:2], jnp.int32))
        h = nn.LayerNorm()(x)
        h = nn.MultiHeadDotProductAttention(num_heads=self.heads, dropout_rate=self.dropout,
                                            deterministic=not self.train)(h, h, mask=mask)
        x = x + nn.Dropout(self.dropout, deterministic=not self.train)(h)
        h = nn.LayerNorm()(x)
        h = nn.Dense(self.d)(nn.gelu(nn.Dense(4 * self.d)(h)))
        x = x + nn.Dropout(self.dropout, deterministic=not self.train)(h)
        return x, None


class GPT(nn.Module):
    vocab: int = VOCAB
    d: int = D
    heads: int = HEADS
    layers: int = LAYERS
    dropout: float = DROPOUT
    train: bool = True
    scan_layers: bool = False

    @nn.compact
    def __call__(self, tokens):
        embed = nn.Embed(self.vocab, self.d, embedding_init=nn.initializers.normal(0.02))
        pos = self.param("pos", nn.initializers.normal(0.02), (SEQ, self.d))
        x = embed(tokens) + pos[: tokens.shape[1]]
        x = nn.Dropout(self.dropout, deterministic=not self.train)(x)
        if self.scan_layers:
            stack = nn.scan(nn.remat(Block), variable_axes={"params": 0}, split_rngs={"params": True, "dropout": True},
                            length=self.layers)
            x, _ = stack(self.d, self.heads, self.dropout, self.train)(x, None)
        else:
            for _ in range(self.layers):
                x, _ = Block(self.d, self.heads, self.dropout, self.train)(x)
        x = nn.LayerNorm()(x)
        return embed.attend(x)


def _decay_mask(params):
    """Weight decay on the matrices of Dense layers only (as nanoGPT does)."""
    return jax.tree_util.tree_map_with_path(
        lambda path, p: p.ndim >= 2 and "Embed" not in jax.tree_util.keystr(path)
        and "pos" not in jax.tree_util.keystr(path), params)


def _tokens(rng, n=BATCH, s=SEQ + 1):
    return rng.integers(0, VOCAB, (n, s)).astype(np.int32)


def _train_step(scan_layers: bool):
    model = GPT(scan_layers=scan_layers)
    rng = np.random.default_rng(1)
    tokens = _tokens(rng)
    params = model.init({"params": jax.random.PRNGKey(0), "dropout": jax.random.PRNGKey(1)}, tokens[:, :-1])["params"]
    schedule = optax.warmup_cosine_decay_schedule(0.0, 3e-3, warmup_steps=10, decay_steps=200)
    tx = optax.chain(optax.clip_by_global_norm(1.0),
                     optax.adamw(schedule, b1=0.9, b2=0.95, weight_decay=0.1, mask=_decay_mask))
    opt_state = tx.init(params)

    def train_step(params, opt_state, tokens, key):
        def loss_fn(p):
            logits = model.apply({"params": p}, tokens[:, :-1], rngs={"dropout": key})
            return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss, optax.global_norm(grads)

    key = np.asarray(jax.random.PRNGKey(7))
    for k in range(3):   # warm the optimizer state: moments and the step count are non-zero
        step_key = np.asarray(jax.random.PRNGKey(k))
        params, opt_state, _, _ = jax.jit(train_step)(params, opt_state, _tokens(rng), step_key)
    return train_step, (params, opt_state, tokens, key)


def gpt_train_adamw():
    """GPT LM train step: 6 pre-LN blocks unrolled, dropout, adamw + clipping + schedule."""
    return _train_step(scan_layers=False)


def gpt_scan_remat_train():
    """The same GPT with its blocks under nn.scan(nn.remat(Block)): one while loop forward, one backward."""
    return _train_step(scan_layers=True)


def gpt_sample():
    """GPT inference: logits of a prompt, then top-k (k=8) temperature sampling of the next token."""
    model = GPT(train=False)
    rng = np.random.default_rng(2)
    prompt = _tokens(rng, s=SEQ)
    params = model.init(jax.random.PRNGKey(0), prompt)["params"]

    def sample(params, prompt, key):
        logits = model.apply({"params": params}, prompt)[:, -1, :] / 0.8
        top, idx = jax.lax.top_k(logits, 8)
        choice = jax.random.categorical(key, top, axis=-1)
        nxt = jnp.take_along_axis(idx, choice[:, None], axis=-1)
        return jnp.concatenate([prompt[:, 1:], nxt], axis=1), jax.nn.log_softmax(logits)

    return sample, (params, prompt, np.asarray(jax.random.PRNGKey(3)))


PROGRAMS = {"gpt_train_adamw": gpt_train_adamw, "gpt_scan_remat_train": gpt_scan_remat_train,
            "gpt_sample": gpt_sample}
