"""Optimizer zoos on an MLP (flax.linen + optax), a VAE train step and RNG samplers.

The zoos give each layer its own optimizer through ``optax.multi_transform``
(several parameter groups, each with its own state), the way fine-tuning
recipes do: (adam, lamb, lion, sgd+momentum) and (adafactor, adabelief, yogi,
novograd, adagrad, frozen), each chained with clipping and schedules.
"""
import re

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

BATCH, IN, HID, OUT = 16, 24, 32, 6


class MLP(nn.Module):
    layers: int = 6

    @nn.compact
    def __call__(self, x):
        for k in range(self.layers - 1):
            x = nn.gelu(nn.LayerNorm(name=f"ln{k}")(nn.Dense(HID, name=f"dense{k}")(x)))
        return nn.Dense(OUT, name=f"dense{self.layers - 1}")(x)


def _zoo(groups: dict):
    """A train step of MLP with ``groups[label]`` the optax transformation of the layers
    labelled ``label`` (labels assigned round-robin over the layers)."""
    model = MLP()
    rng = np.random.default_rng(8)
    x = rng.standard_normal((BATCH, IN)).astype(np.float32)
    y = rng.standard_normal((BATCH, OUT)).astype(np.float32)
    params = model.init(jax.random.PRNGKey(0), x)["params"]
    labels = list(groups)
    # Layer k's Dense and LayerNorm ("dense{k}", "ln{k}") go to group k mod len(groups).
    layer_label = {n: labels[int(re.search(r"\d+$", n).group()) % len(labels)] for n in params}
    tx = optax.chain(optax.clip_by_global_norm(2.0), optax.multi_transform(
        groups, {n: jax.tree_util.tree_map(lambda _, n=n: layer_label[n], params[n]) for n in params}))
    opt_state = tx.init(params)

    def train_step(params, opt_state, x, y):
        def loss_fn(p):
            return optax.huber_loss(model.apply({"params": p}, x), y).mean()
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    for _ in range(3):   # moments and step counts a few steps in
        params, opt_state, _ = jax.jit(train_step)(params, opt_state, x * 0.5, y)
    return train_step, (params, opt_state, x, y)


def optim_zoo_a():
    """MLP (6 Dense + LayerNorm) with four parameter groups via optax.multi_transform:
    adam (warmup), lamb, lion (cosine schedule), sgd with momentum; global-norm clipping."""
    return _zoo({"adam": optax.adam(optax.linear_schedule(0.0, 1e-3, 10)), "lamb": optax.lamb(1e-3),
                 "lion": optax.lion(optax.cosine_decay_schedule(1e-4, 100)), "sgd": optax.sgd(1e-2, momentum=0.9)})


def optim_zoo_b():
    """The same MLP with six groups: adafactor, adabelief, yogi, novograd, adagrad, and frozen
    (set_to_zero), with an exponential-decay schedule and an optax.MultiSteps accumulator."""
    return _zoo({"adafactor": optax.adafactor(1e-3, min_dim_size_to_factor=8),
                 "adabelief": optax.adabelief(optax.exponential_decay(1e-3, 10, 0.9)),
                 "yogi": optax.yogi(1e-3), "novograd": optax.novograd(1e-3),
                 "adagrad": optax.MultiSteps(optax.adagrad(1e-2), every_k_schedule=2),
                 "frozen": optax.set_to_zero()})


optim_zoo_a.tolerance = (2e-4, 2e-5)
optim_zoo_b.tolerance = (2e-4, 2e-5)


class VAE(nn.Module):
    latent: int = 8

    @nn.compact
    def __call__(self, x, key):
        h = nn.relu(nn.Dense(64)(nn.relu(nn.Dense(128)(x))))
        mean, logvar = nn.Dense(self.latent)(h), nn.Dense(self.latent)(h)
        z = mean + jnp.exp(0.5 * logvar) * jax.random.normal(key, mean.shape)
        logits = nn.Dense(x.shape[-1])(nn.relu(nn.Dense(128)(nn.relu(nn.Dense(64)(z)))))
        return logits, mean, logvar


def vae_train():
    """VAE train step: MLP encoder to a diagonal Gaussian, reparameterised sample, MLP decoder;
    Bernoulli likelihood (sigmoid cross-entropy) + KL; adam."""
    model = VAE()
    rng = np.random.default_rng(9)
    x = (rng.random((BATCH, 196)) > 0.7).astype(np.float32)
    params = model.init(jax.random.PRNGKey(0), x, jax.random.PRNGKey(1))["params"]
    tx = optax.adam(1e-3)
    opt_state = tx.init(params)

    def train_step(params, opt_state, x, key):
        def loss_fn(p):
            logits, mean, logvar = model.apply({"params": p}, x, key)
            rec = optax.sigmoid_binary_cross_entropy(logits, x).sum(-1)
            kl = -0.5 * jnp.sum(1 + logvar - mean ** 2 - jnp.exp(logvar), axis=-1)
            return jnp.mean(rec + kl), (rec.mean(), kl.mean())
        (loss, parts), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss, parts

    return train_step, (params, opt_state, x, np.asarray(jax.random.PRNGKey(5)))


def rng_samplers():
    """jax.random samplers from one key: normal, uniform, truncated normal, categorical,
    gamma/beta/dirichlet (rejection loops), bernoulli dropout, permutation, choice without replacement."""
    def sample(key, logits, x):
        ks = jax.random.split(key, 9)
        keep = jax.random.bernoulli(ks[0], 0.9, x.shape)
        return {"normal": jax.random.normal(ks[1], (64,)),
                "uniform": jax.random.uniform(ks[2], (8, 8), minval=-1.0, maxval=2.0),
                "truncnorm": jax.random.truncated_normal(ks[3], -1.5, 2.0, (64,)),
                "categorical": jax.random.categorical(ks[4], logits, shape=(32, logits.shape[0])),
                "gamma": jax.random.gamma(ks[5], jnp.array([0.5, 1.0, 3.0, 9.0]), (16, 4)),
                "beta": jax.random.beta(ks[6], 2.0, 5.0, (32,)),
                "dirichlet": jax.random.dirichlet(ks[7], jnp.array([0.3, 1.0, 4.0]), (8,)),
                "dropout": jnp.where(keep, x / 0.9, 0.0),
                "perm": jax.random.permutation(ks[8], 20),
                "choice": jax.random.choice(ks[8], 50, (10,), replace=False, p=jnp.linspace(0.1, 1.0, 50))}
    rng = np.random.default_rng(10)
    return sample, (np.asarray(jax.random.PRNGKey(42)), rng.standard_normal((4, 7)).astype(np.float32),
                    rng.standard_normal((16, 16)).astype(np.float32))


PROGRAMS = {"optim_zoo_a": optim_zoo_a, "optim_zoo_b": optim_zoo_b, "vae_train": vae_train,
            "rng_samplers": rng_samplers}
