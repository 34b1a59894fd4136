"""Vision models: a ViT train step (flax.nnx), a ResNet with BatchNorm (flax.linen;
train step with batch statistics and the running-average update, and its eval
step), and a small U-Net denoiser's DDPM train step (GroupNorm, transposed
convolutions, sinusoidal time embedding, random timesteps and noise).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

IMG, CH, CLASSES, BATCH = 16, 3, 10, 8


def _images(rng, n=BATCH):
    return rng.standard_normal((n, IMG, IMG, CH)).astype(np.float32)


def _labels(rng, n=BATCH):
    return rng.integers(0, CLASSES, n).astype(np.int32)


# -- ViT (nnx) -----------------------------------------------------------------------

class EncoderBlock(nnx.Module):
    def __init__(self, d: int, heads: int, rngs: nnx.Rngs):
        self.ln1 = nnx.LayerNorm(d, rngs=rngs)
        self.attn = nnx.MultiHeadAttention(num_heads=heads, in_features=d, decode=False, rngs=rngs)
        self.ln2 = nnx.LayerNorm(d, rngs=rngs)
        self.fc1 = nnx.Linear(d, 4 * d, rngs=rngs)
        self.fc2 = nnx.Linear(4 * d, d, rngs=rngs)

    def __call__(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h)
        return x + self.fc2(nnx.gelu(self.fc1(self.ln2(x))))


class ViT(nnx.Module):
    def __init__(self, d=32, heads=4, layers=4, patch=4, rngs: nnx.Rngs = None):
        self.patch = nnx.Conv(CH, d, kernel_size=(patch, patch), strides=(patch, patch), rngs=rngs)
        n = (IMG // patch) ** 2
        self.cls = nnx.Param(jax.random.normal(rngs.params(), (1, 1, d)) * 0.02)
        self.pos = nnx.Param(jax.random.normal(rngs.params(), (1, n + 1, d)) * 0.02)
        self.blocks = nnx.List([EncoderBlock(d, heads, rngs) for _ in range(layers)])
        self.ln = nnx.LayerNorm(d, rngs=rngs)
        self.head = nnx.Linear(d, CLASSES, rngs=rngs)

    def __call__(self, images):
        x = self.patch(images)
        x = x.reshape(x.shape[0], -1, x.shape[-1])
        cls = jnp.broadcast_to(self.cls[...], (x.shape[0], 1, x.shape[-1]))
        x = jnp.concatenate([cls, x], axis=1) + self.pos[...]
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x[:, 0]))


def vit_train():
    """ViT train step (flax.nnx): 4x4 patches by a strided conv, class token, 4 encoder blocks;
    adamw with label smoothing and a cosine schedule."""
    model = ViT(rngs=nnx.Rngs(0))
    graphdef, params = nnx.split(model, nnx.Param)
    tx = optax.adamw(optax.cosine_decay_schedule(1e-3, 100), weight_decay=0.05)
    opt_state = tx.init(params)

    def train_step(params, opt_state, images, labels):
        def loss_fn(p):
            logits = nnx.merge(graphdef, p)(images)
            targets = optax.smooth_labels(jax.nn.one_hot(labels, CLASSES), 0.1)
            return optax.softmax_cross_entropy(logits, targets).mean(), logits
        (loss, logits), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        acc = jnp.mean(jnp.argmax(logits, -1) == labels)
        return optax.apply_updates(params, updates), opt_state, loss, acc

    rng = np.random.default_rng(3)
    return train_step, (params, opt_state, _images(rng), _labels(rng))


# -- ResNet with BatchNorm (linen) ---------------------------------------------------

class ResBlock(nn.Module):
    features: int
    strides: int
    train: bool

    @nn.compact
    def __call__(self, x):
        norm = lambda: nn.BatchNorm(use_running_average=not self.train, momentum=0.9)  # noqa: E731
        y = nn.relu(norm()(nn.Conv(self.features, (3, 3), self.strides, use_bias=False)(x)))
        y = norm()(nn.Conv(self.features, (3, 3), use_bias=False)(y))
        if x.shape != y.shape:
            x = norm()(nn.Conv(self.features, (1, 1), self.strides, use_bias=False)(x))
        return nn.relu(x + y)


class ResNet(nn.Module):
    train: bool = True

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.BatchNorm(use_running_average=not self.train, momentum=0.9)(
            nn.Conv(8, (3, 3), use_bias=False)(x)))
        for stage, features in enumerate((8, 16, 32)):
            for k in range(2):
                x = ResBlock(features, 2 if stage and not k else 1, self.train)(x)
        return nn.Dense(CLASSES)(jnp.mean(x, axis=(1, 2)))


def _resnet_variables():
    rng = np.random.default_rng(4)
    variables = ResNet().init(jax.random.PRNGKey(0), _images(rng))
    # Running statistics a few steps in, not the initial zeros and ones.
    stats = jax.tree_util.tree_map(lambda s: s + 0.1 * rng.standard_normal(s.shape).astype(np.float32) ** 2,
                                   variables["batch_stats"])
    return variables["params"], stats, rng


def resnet_bn_train():
    """ResNet train step (flax.linen): 13 convolutions with BatchNorm on batch statistics,
    the running averages updated; sgd with nesterov momentum and weight decay."""
    params, stats, rng = _resnet_variables()
    model = ResNet(train=True)
    tx = optax.chain(optax.add_decayed_weights(5e-4), optax.sgd(0.05, momentum=0.9, nesterov=True))
    opt_state = tx.init(params)

    def train_step(params, batch_stats, opt_state, images, labels):
        def loss_fn(p):
            logits, new = model.apply({"params": p, "batch_stats": batch_stats}, images, mutable=["batch_stats"])
            return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean(), new["batch_stats"]
        (loss, new_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), new_stats, opt_state, loss

    return train_step, (params, stats, opt_state, _images(rng), _labels(rng))


def resnet_bn_eval():
    """The ResNet's eval step: BatchNorm on the running averages; softmax and top-3 classes."""
    params, stats, rng = _resnet_variables()
    model = ResNet(train=False)

    def eval_step(params, batch_stats, images):
        logits = model.apply({"params": params, "batch_stats": batch_stats}, images)
        probs = jax.nn.softmax(logits)
        return probs, jax.lax.top_k(probs, 3)[1]

    return eval_step, (params, stats, _images(rng))


# -- DDPM U-Net (linen) ----------------------------------------------------------------

def _time_embedding(t, dim):
    freqs = jnp.exp(-jnp.log(10000.0) * jnp.arange(dim // 2) / (dim // 2))
    args = t[:, None].astype(jnp.float32) * freqs[None]
    return jnp.concatenate([jnp.sin(args), jnp.cos(args)], axis=-1)


class UBlock(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x, temb):
        h = nn.Conv(self.features, (3, 3))(nn.swish(nn.GroupNorm(num_groups=4)(x)))
        h = h + nn.Dense(self.features)(temb)[:, None, None, :]
        h = nn.Conv(self.features, (3, 3))(nn.swish(nn.GroupNorm(num_groups=4)(h)))
        if x.shape[-1] != self.features:
            x = nn.Conv(self.features, (1, 1))(x)
        return x + h


class UNet(nn.Module):
    @nn.compact
    def __call__(self, x, t):
        temb = nn.Dense(32)(nn.swish(nn.Dense(32)(_time_embedding(t, 16))))
        h1 = UBlock(8)(nn.Conv(8, (3, 3))(x), temb)
        h2 = UBlock(16)(nn.Conv(16, (3, 3), strides=2)(h1), temb)
        h3 = UBlock(16)(nn.Conv(16, (3, 3), strides=2)(h2), temb)
        u2 = UBlock(16)(jnp.concatenate([nn.ConvTranspose(16, (2, 2), strides=(2, 2))(h3), h2], -1), temb)
        u1 = UBlock(8)(jnp.concatenate([nn.ConvTranspose(8, (2, 2), strides=(2, 2))(u2), h1], -1), temb)
        return nn.Conv(CH, (1, 1))(nn.swish(nn.GroupNorm(num_groups=4)(u1)))


def ddpm_unet_train():
    """DDPM train step: a U-Net (GroupNorm, strided and transposed convolutions, time embedding)
    predicts the noise added at random timesteps of a linear beta schedule; adam with EMA params."""
    model = UNet()
    rng = np.random.default_rng(5)
    x0 = _images(rng)
    params = model.init(jax.random.PRNGKey(0), x0, jnp.zeros((BATCH,), jnp.int32))["params"]
    tx = optax.adam(2e-4)
    opt_state = tx.init(params)
    betas = jnp.linspace(1e-4, 0.02, 1000)
    alpha_bar = jnp.cumprod(1.0 - betas)

    def train_step(params, ema, opt_state, x0, key):
        k_t, k_noise = jax.random.split(key)
        t = jax.random.randint(k_t, (x0.shape[0],), 0, 1000)
        noise = jax.random.normal(k_noise, x0.shape)
        ab = alpha_bar[t][:, None, None, None]
        xt = jnp.sqrt(ab) * x0 + jnp.sqrt(1.0 - ab) * noise

        def loss_fn(p):
            return jnp.mean((model.apply({"params": p}, xt, t) - noise) ** 2)
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        ema = optax.incremental_update(params, ema, 0.001)
        return params, ema, opt_state, loss

    return train_step, (params, params, opt_state, x0, np.asarray(jax.random.PRNGKey(11)))


PROGRAMS = {"vit_train": vit_train, "resnet_bn_train": resnet_bn_train, "resnet_bn_eval": resnet_bn_eval,
            "ddpm_unet_train": ddpm_unet_train}
