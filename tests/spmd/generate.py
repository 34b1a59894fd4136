"""Generates ``tests/spmd/``: automatically sharded programs (``jax.jit`` with
``NamedSharding``s and ``with_sharding_constraint``, no ``shard_map``) as jax
0.10 lowers them for 4 CPU devices, with their global inputs and jax's
outputs.  For each case:

* ``NAME.hlo`` — ``jax.jit(f, in_shardings=..., out_shardings=...).lower(*args).as_text(dialect="hlo")``:
  the global program with its shardings (``sharding=`` and Shardy's
  ``xla.sdy.sharding``);
* ``NAME.mlir`` (some cases) — ``lower(*args).as_text()``: the same in
  StableHLO with ``sdy.mesh`` and ``sdy.sharding``;
* ``NAME.npz`` / ``NAME.expected.npz`` — the global inputs and jax's outputs
  (``arr_0, arr_1, ...``);
* ``manifest.json`` — per case, the devices of its mesh and the collectives
  XLA's partitioned program (``compile().as_text()``) has, with the bytes they
  move per device (compared with xlac's in the tests).

jax is not a dependency of xlac: run this in a scratch environment that has it,

    /tmp/jaxenv/bin/python tests/spmd/generate.py

and commit the files it writes.
"""
import json
import os
import re
from pathlib import Path

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4 --xla_allow_excess_precision=false"
os.environ["JAX_PLATFORMS"] = "cpu"
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

OUT = Path(__file__).resolve().parent


def mesh_of(shape, names):
    devices = np.array(jax.devices()[:int(np.prod(shape))]).reshape(shape)
    return jax.sharding.Mesh(devices, names, axis_types=(AxisType.Auto,) * len(names))


def cases(rng):
    m4 = mesh_of((4,), ("d",))
    m2 = mesh_of((2,), ("d",))
    m22 = mesh_of((2, 2), ("x", "y"))

    def f32(*s):
        return rng.standard_normal(s).astype(np.float32)

    def ns(mesh, *spec):
        return NamedSharding(mesh, P(*spec))

    # A data-parallel training step: batch split, parameters replicated, SGD with momentum.
    def dp_step(w1, b1, w2, m1, m2_, x, y):
        def loss(params):
            a, b, c = params
            h = jnp.tanh(x @ a + b)
            return jnp.mean((h @ c - y) ** 2)
        lval, (g1, gb, g2) = jax.value_and_grad(loss)((w1, b1, w2))
        m1 = 0.9 * m1 + g1
        m2_ = 0.9 * m2_ + g2
        return w1 - 0.1 * m1, b1 - 0.1 * gb, w2 - 0.1 * m2_, m1, m2_, lval

    # Megatron MLP: first weight split by columns, second by rows (one all-reduce).
    def megatron(x, w1, b1, w2):
        h = jax.nn.gelu(x @ w1 + b1)
        return h @ w2

    def contracting(x, w):
        return x @ w

    def reductions(x):
        return x.sum(axis=0), x.max(axis=1), x.sum(), jnp.mean(x * x, axis=1)

    def wsc_layers(x, w1, w2):
        h = jnp.tanh(x @ w1)
        h = jax.lax.with_sharding_constraint(h, ns(m22, "x", "y"))
        h = jnp.tanh(h @ w2)
        h = jax.lax.with_sharding_constraint(h, ns(m22, None, "y"))
        return h * 2.0

    def transposes(x):
        y = x.reshape(4, 2, 6).transpose(0, 2, 1)          # [4, 6, 2]
        z = jnp.transpose(x) + 1.0                         # [6, 8]
        return y * 2.0, z, y.reshape(8, 6)

    def uneven(x, v, w):
        # 6 rows on 4 devices (jax takes no unevenly split argument: the
        # constraints split the values inside).  The padding of the tiles of
        # exp(x) would hold exp(0) = 1: never read by the reductions.
        x = jax.lax.with_sharding_constraint(x, ns(m4, "d", None))
        v = jax.lax.with_sharding_constraint(v, ns(m4, "d", None))
        h = jnp.exp(x)
        return h.sum(axis=0), h @ w, jnp.max(x, axis=0), h.T @ v

    def reshard_dims(x):
        y = jax.lax.with_sharding_constraint(x * 2.0, ns(m4, None, "d"))
        return y + 1.0

    def batched_attention(q, k, v):
        s = jnp.einsum("bqd,bkd->bqk", q, k) / 4.0
        p = jax.nn.softmax(s, axis=-1)
        return jnp.einsum("bqk,bkd->bqd", p, v)

    # What the partitioner does not split (while from scan, gather, concatenate,
    # sort, cumsum's reduce-window): computed whole, operands all-gathered.
    def fallbacks(emb, ids, ws, x):
        e = emb[ids]
        def body(h, w):
            return jnp.tanh(h @ w), h.sum()
        h, s = jax.lax.scan(body, x, ws)
        return e, h, s, jnp.concatenate([h, h[:, :2]], axis=1), jnp.sort(x, axis=0), jnp.cumsum(x, axis=0)

    # FSDP over layers: a scan whose stacked weights are split by rows, the
    # carry by batch; each layer's weights are gathered inside the loop.
    def scan_fsdp(x, ws, bs):
        def body(h, wb):
            w, b = wb
            h = jnp.tanh(h @ w + b)
            return h, jnp.sum(h * h)
        return jax.lax.scan(body, x, (ws, bs))

    # Megatron layers in a scan: the carry stays replicated, each layer's
    # first weight split by columns and the second by rows (an all-reduce per
    # layer); a cond on the result with a split operand.
    def scan_megatron(x, w1s, w2s):
        def body(h, w):
            a, b = w
            return h + jnp.tanh(h @ a) @ b, None
        h, _ = jax.lax.scan(body, x, (w1s, w2s))
        h = jax.lax.with_sharding_constraint(h, ns(m4, "d", None))
        return jax.lax.cond(h.sum() > 0, lambda v: v * 2.0, lambda v: -v, h)

    # An embedding table split by vocabulary (rows), looked up by replicated
    # ids and by batch-split ids; a replicated table looked up by batch-split
    # ids; the table's gradient (a scatter-add into the row-split table).
    def embedding(table, ids, bids, small, g):
        def lookup(t):
            return jnp.sum(t[ids] * g)
        grad = jax.lax.with_sharding_constraint(jax.grad(lookup)(table), ns(m4, "d", None))
        return table[ids], table[bids], small[bids], grad

    # Slicing, concatenate, pad, dynamic slices, iota and constants on values
    # split by rows.
    def slicing(x, i):
        a = x[:, 1:5] * 2.0                                    # columns: rows stay split
        b = jnp.concatenate([x, a], axis=1)
        c = jnp.pad(x, ((0, 0), (1, 2)), constant_values=-1.0)
        d = jax.lax.dynamic_slice_in_dim(x, i, 3, axis=1)
        e = jax.lax.dynamic_update_slice_in_dim(x, d * 0.5, i, axis=1)
        r = jnp.arange(8, dtype=np.float32)[:, None] * x       # iota by rows
        k = x + jnp.asarray(np.linspace(0.0, 1.0, 48, dtype=np.float32).reshape(8, 6))
        return b, c, e, r, k, x[2:6] + 1.0, jnp.flip(x, axis=1)

    # Convolutions: batch split, output features split, a spatial dimension split (halo exchange).
    def conv(x, k):
        return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    # Slices, pads and reverses across split rows: tiles shifted between
    # neighbours by collective-permute (6 rows on 4 devices: uneven tiles).
    def shifts(x, y):
        y = jax.lax.with_sharding_constraint(y, ns(m4, "d", None))
        return (jnp.pad(x, ((1, 2), (0, 0)), constant_values=-1.0), x[1:7:2] * 3.0, jnp.flip(x, 0),
                jnp.flip(y, 0) + 1.0, y[1:5] * 2.0, jnp.pad(y, ((2, 0), (0, 0)))[:6])

    # Pooling split on a spatial dimension: a 3x3 max pool (stride 1, SAME:
    # a halo from each neighbour, -inf past the ends) and a 2x2 sum pool
    # (stride 2, VALID: within each tile).
    def pooling(x):
        m = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
        a = jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return m, a

    # A data-parallel CNN training step: conv, relu, 2x2 max pool (its
    # gradient a select-and-scatter), dense, softmax cross-entropy, SGD, and
    # the accuracy (an argmax: a variadic reduce) — the batch split.
    def cnn_step(k, w, x, labels):
        def forward(params):
            kk, ww = params
            h = jax.nn.relu(conv(x, kk))
            h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
            return h.reshape(h.shape[0], -1) @ ww

        def loss(params):
            logits = forward(params)
            return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1))
        lval, (gk, gw) = jax.value_and_grad(loss)((k, w))
        accuracy = jnp.mean(jnp.argmax(forward((k, w)), axis=1) == labels)
        return k - 0.1 * gk, w - 0.1 * gw, lval, accuracy

    # Argmax across and along a split dimension (variadic reduces), sort along
    # a dimension that is not split.
    def argmax_sort(x):
        return jnp.argmax(x, axis=1), jnp.argmax(x, axis=0), jnp.max(x, axis=1), jnp.sort(x, axis=0)

    return [
        ("dp_mlp_step", dp_step, m4,
         (ns(m4), ns(m4), ns(m4), ns(m4), ns(m4), ns(m4, "d", None), ns(m4, "d", None)),
         None,
         [f32(6, 16), f32(16), f32(16, 3), np.zeros((6, 16), np.float32), np.zeros((16, 3), np.float32),
          f32(8, 6), f32(8, 3)], True),
        ("megatron_mlp", megatron, m4, (ns(m4), ns(m4, None, "d"), ns(m4, "d"), ns(m4, "d", None)), ns(m4),
         [f32(8, 6), f32(6, 16), f32(16), f32(16, 6)], True),
        ("megatron_mlp_2dev", megatron, m2, (ns(m2), ns(m2, None, "d"), ns(m2, "d"), ns(m2, "d", None)), ns(m2),
         [f32(4, 6), f32(6, 8), f32(8), f32(8, 6)], False),
        ("contracting_dot", contracting, m4, (ns(m4, None, "d"), ns(m4, "d", None)), ns(m4, "d", None),
         [f32(8, 12), f32(12, 4)], False),
        ("reductions_2d", reductions, m22, (ns(m22, "x", "y"),), None, [f32(8, 6)], False),
        ("wsc_layers_2d", wsc_layers, m22, (ns(m22, "x", None), ns(m22, None, "y"), ns(m22, "y", None)), None,
         [f32(8, 6), f32(6, 4), f32(4, 4)], True),
        ("transposes", transposes, m4, (ns(m4, "d", None),), None, [f32(8, 6)], False),
        ("uneven", uneven, m4, (ns(m4), ns(m4), ns(m4)), None, [f32(6, 5), f32(6, 3), f32(5, 3)], False),
        ("reshard_dims", reshard_dims, m4, (ns(m4, "d", None),), None, [f32(8, 8)], False),
        ("attention_2d", batched_attention, m22,
         (ns(m22, "x", None, "y"), ns(m22, "x", None, "y"), ns(m22, "x", None, None)), ns(m22, "x"),
         [f32(2, 4, 8), f32(2, 4, 8), f32(2, 4, 8)], False),
        ("fallbacks", fallbacks, m4, (ns(m4, "d", None), ns(m4), ns(m4, None, None, "d"), ns(m4, "d", None)), None,
         [f32(8, 4), np.array([1, 7, 3, 0, 5], np.int32), f32(3, 4, 4), f32(8, 4)], False),
        ("scan_fsdp", scan_fsdp, m4, (ns(m4, "d", None), ns(m4, None, "d", None), ns(m4, None, "d")), None,
         [f32(8, 8), f32(3, 8, 8) * 0.5, f32(3, 8)], False),
        ("scan_megatron", scan_megatron, m4, (ns(m4), ns(m4, None, None, "d"), ns(m4, None, "d", None)), None,
         [f32(4, 6), f32(2, 6, 8) * 0.5, f32(2, 8, 6) * 0.5], False),
        ("embedding", embedding, m4, (ns(m4, "d", None), ns(m4), ns(m4, "d"), ns(m4), ns(m4)), None,
         [f32(16, 4), np.array([1, 15, 3, 0, 5, 9], np.int32), np.array([2, 14, 7, 7, 0, 11, 4, 8], np.int32),
          f32(16, 4), f32(6, 4)], False),
        ("slicing", slicing, m4, (ns(m4, "d", None), ns(m4)), None, [f32(8, 6), np.int32(2)], False),
        ("conv_batch", conv, m4, (ns(m4, "d", None, None, None), ns(m4)), None,
         [f32(4, 6, 6, 3), f32(3, 3, 3, 8)], False),
        ("conv_feature", conv, m4, (ns(m4), ns(m4, None, None, None, "d")), ns(m4, None, None, None, "d"),
         [f32(2, 6, 6, 3), f32(3, 3, 3, 8)], False),
        ("conv_spatial", conv, m4, (ns(m4, None, "d", None, None), ns(m4)), ns(m4, None, "d", None, None),
         [f32(2, 8, 6, 3), f32(3, 3, 3, 4)], False),
        ("pooling", pooling, m4, (ns(m4, None, "d", None, None),), ns(m4, None, "d", None, None),
         [f32(2, 8, 6, 3)], False),
        ("shifts", shifts, m4, (ns(m4, "d", None), ns(m4)), None, [f32(8, 6), f32(6, 3)], False),
        ("cnn_dp_step", cnn_step, m4, (ns(m4), ns(m4), ns(m4, "d", None, None, None), ns(m4, "d")), None,
         [f32(3, 3, 3, 4) * 0.3, f32(64, 5) * 0.2, f32(8, 8, 8, 3), np.array([0, 1, 2, 3, 4, 0, 1, 2], np.int32)],
         True),
        ("argmax_sort", argmax_sort, m4, (ns(m4, None, "d"),), None, [f32(6, 12)], False),
    ]


def collective_bytes(text):
    """(opcode, bytes received per device) of each collective of XLA's
    partitioned program, counted as ``xlac.passes.spmd_partitioner.collective_bytes``
    counts them (ring algorithms)."""
    sizes = {"f32": 4, "s32": 4, "pred": 1, "f64": 8, "u32": 4, "bf16": 2}
    out = []
    for line in text.splitlines():
        m = re.search(r"= (.*?) (all-gather|all-reduce|reduce-scatter|all-to-all|collective-permute)"
                      r"(?:-start)?\(", line)
        if not m:
            continue
        nbytes = sum(int(np.prod([int(v) for v in dims.split(",") if v] or [1])) * sizes.get(t, 4)
                     for t, dims in re.findall(r"(\w+)\[([\d,]*)\]", m.group(1)))
        g = re.search(r"replica_groups=\[(\d+),(\d+)\]", line)
        lists = re.search(r"replica_groups=\{\{([\d,]*)\}", line)
        size = int(g.group(2)) if g else (len(lists.group(1).split(",")) if lists else 4)
        mesh = re.search(r"replica_groups=mesh\[(.*?)\] \{(.*?)\}", line)
        if mesh:
            axes = {k: int(v) for k, v in re.findall(r"'(\w+)'=(\d+)", mesh.group(1))}
            size = int(np.prod([axes[a] for a in re.findall(r"'(\w+)'", mesh.group(2))]))
        op = m.group(2)
        if op == "all-gather":
            moved = nbytes - nbytes // size
        elif op == "all-reduce":
            moved = 2 * nbytes * (size - 1) // size
        elif op == "reduce-scatter":
            moved = nbytes * (size - 1)
        elif op == "collective-permute":
            moved = nbytes
        else:
            moved = nbytes * (size - 1) // size
        out.append([op, moved])
    return out


def main():
    rng = np.random.default_rng(20250)
    manifest = {"cases": {}}
    made = {}
    for name, fn, mesh, in_sh, out_sh, args, mlir in cases(rng):
        made[name] = (fn, in_sh, out_sh, args)
        kwargs = {"in_shardings": in_sh}
        if out_sh is not None:
            kwargs["out_shardings"] = out_sh
        jf = jax.jit(fn, **kwargs)
        lowered = jf.lower(*args)
        (OUT / f"{name}.hlo").write_text(lowered.as_text(dialect="hlo"), encoding="utf-8")
        if mlir:
            (OUT / f"{name}.mlir").write_text(lowered.as_text(), encoding="utf-8")
        out = jf(*args)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        np.savez(OUT / f"{name}.npz", *args)
        np.savez(OUT / f"{name}.expected.npz", *[np.asarray(o) for o in outs])
        compiled = lowered.compile().as_text()
        manifest["cases"][name] = {"devices": int(mesh.devices.size), "mlir": mlir,
                                   "xla_collectives": collective_bytes(compiled)}
    # The older GSPMD form of some (no Shardy: ``sharding=`` / ``mhlo.sharding``
    # only, no mesh): NAME.gspmd.hlo and NAME.gspmd.mlir, same inputs and outputs.
    jax.config.update("jax_use_shardy_partitioner", False)
    for name in GSPMD_CASES:
        fn, in_sh, out_sh, args = made[name]
        kwargs = {"in_shardings": in_sh} | ({"out_shardings": out_sh} if out_sh is not None else {})
        lowered = jax.jit(fn, **kwargs).lower(*args)
        (OUT / f"{name}.gspmd.hlo").write_text(lowered.as_text(dialect="hlo"), encoding="utf-8")
        (OUT / f"{name}.gspmd.mlir").write_text(lowered.as_text(), encoding="utf-8")
        manifest["cases"][name]["gspmd"] = True
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")


GSPMD_CASES = ("megatron_mlp", "scan_fsdp", "embedding")


if __name__ == "__main__":
    main()
