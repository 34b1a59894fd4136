"""Generates ``tests/jax_multidevice/``: programs with collectives, as jax
0.10 lowers them for 4 CPU devices, with their global inputs and jax's
outputs.  For each case:

* ``NAME.hlo`` — ``jax.jit(f).lower(*args).as_text(dialect="hlo")``: the
  *global* program with Shardy annotations (sharded entry parameters,
  ``xla.sdy.GlobalToLocalShape`` / ``LocalToGlobalShape`` around a ``call``
  of the ``xla.sdy.manual_computation_body`` holding the collectives);
* ``NAME.spmd.hlo`` — ``lowered.compile().as_text()``: the per-device
  program after XLA's SPMD partitioner (``num_partitions=4``, local shapes);
* ``NAME.npz`` / ``NAME.expected.npz`` — the global inputs and jax's outputs
  (``arr_0, arr_1, ...``), as in ``tests/jax_cases``.

jax is not a dependency of xlac: run this in a scratch environment that has it,

    python3 -m venv /tmp/jaxvenv && /tmp/jaxvenv/bin/pip install jax jaxlib
    /tmp/jaxvenv/bin/python tests/jax_multidevice/generate.py

and commit the files it writes.
"""
import json
import os
from functools import partial
from pathlib import Path

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4 --xla_allow_excess_precision=false"
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

try:
    from jax import shard_map
except ImportError:  # older jax
    from jax.experimental.shard_map import shard_map

OUT = Path(__file__).resolve().parent
N = 4


def cases(rng):
    mesh = Mesh(np.array(jax.devices()[:N]), ("i",))
    mesh2 = Mesh(np.array(jax.devices()[:N]).reshape(2, 2), ("a", "b"))

    def f32(*s):
        return rng.standard_normal(s).astype(np.float32)

    def smap(fn, in_specs, out_specs, m=mesh):
        return shard_map(fn, mesh=m, in_specs=in_specs, out_specs=out_specs)

    ring = [(k, (k + 1) % N) for k in range(N)]
    partial_ring = [(0, 1), (1, 2)]

    def mlp_step(w1, w2, x, y):
        def loss(params, x, y):
            a, b = params
            h = jnp.tanh(x @ a)
            return jnp.mean((h @ b - y) ** 2)
        g = jax.grad(loss)((w1, w2), x, y)
        g = jax.tree_util.tree_map(lambda t: jax.lax.pmean(t, "i"), g)
        return w1 - 0.1 * g[0], w2 - 0.1 * g[1]

    def partial_manual(x, w):
        # Manual over "a" only: "b" stays automatic (every value whole along it).
        h = jnp.tanh(x @ w)
        return jax.lax.psum(h, "a") + jax.lax.all_gather(h, "a", tiled=True)[:2] * jax.lax.axis_index("a")

    def nested(x):
        inner = shard_map(lambda v: jax.lax.psum(jnp.sin(v), "b") * (1.0 + jax.lax.axis_index("b")),
                          in_specs=P(None, "b"), out_specs=P(None, "b"), axis_names={"b"})
        return jax.lax.pmax(inner(x), "a")

    explicit = Mesh(np.array(jax.devices()[:N]).reshape(2, 2), ("x", "y"),
                    axis_types=(jax.sharding.AxisType.Explicit,) * 2)

    def unreduced(a, b):
        # A partial product per device, unreduced over "y", summed by the next shard_map's psum.
        a = jax.reshard(a, NamedSharding(explicit, P("x", "y")))
        b = jax.reshard(b, NamedSharding(explicit, P("y", None)))
        parts = shard_map(lambda u, v: u @ v, mesh=explicit, in_specs=(P("x", "y"), P("y", None)),
                          out_specs=P("x", None, unreduced={"y"}))(a, b)
        return shard_map(lambda c: jax.lax.psum(c, "y") * 2.0, mesh=explicit,
                         in_specs=P("x", None, unreduced={"y"}), out_specs=P("x", None))(parts)

    return {
        "pmap_psum": (jax.pmap(lambda x: jax.lax.psum(x, "i") * 2.0, axis_name="i"), [f32(N, 3)]),
        "pmap_pmean_pmax": (jax.pmap(lambda x: (jax.lax.pmean(x, "i"), jax.lax.pmax(x, "i")), axis_name="i"),
                            [f32(N, 5)]),
        "pmap_int_psum": (jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i"),
                          [rng.integers(-9, 9, (N, 4)).astype(np.int32)]),
        "pmap_axis_index": (jax.pmap(lambda x: x + jax.lax.axis_index("i"), axis_name="i"), [f32(N, 2)]),
        "pmap_ppermute_ring": (jax.pmap(lambda x: jax.lax.ppermute(x, "i", ring), axis_name="i"), [f32(N, 3)]),
        "pmap_ppermute_partial": (jax.pmap(lambda x: jax.lax.ppermute(x, "i", partial_ring), axis_name="i"),
                                  [f32(N, 3)]),
        "pmap_all_gather": (jax.pmap(lambda x: jax.lax.all_gather(x, "i"), axis_name="i"), [f32(N, 3)]),
        "pmap_all_gather_tiled": (jax.pmap(lambda x: jax.lax.all_gather(x, "i", tiled=True), axis_name="i"),
                                  [f32(N, 2, 3)]),
        "pmap_groups": (jax.pmap(lambda x: jax.lax.psum(x, "i", axis_index_groups=[[0, 2], [1, 3]]),
                                 axis_name="i"), [f32(N, 3)]),
        "pmap_fori_psum": (jax.pmap(lambda x: jax.lax.fori_loop(0, 5, lambda k, v: jax.lax.pmean(v * 1.5, "i") + k,
                                                                x), axis_name="i"), [f32(N, 4)]),
        "smap_psum_scatter": (jax.jit(smap(lambda x: jax.lax.psum_scatter(x, "i", scatter_dimension=0, tiled=True),
                                           P(None, "i"), P("i", None))), [f32(8, 8)]),
        "smap_all_to_all": (jax.jit(smap(lambda x: jax.lax.all_to_all(x, "i", 0, 0, tiled=True),
                                         P("i", None), P("i", None))), [f32(16, 3)]),
        "smap_psum_2d": (jax.jit(smap(lambda x: jax.lax.psum(x, "b"), P("a", "b"), P("a", None), m=mesh2)),
                         [f32(4, 6)]),
        "smap_replicated_arg": (jax.jit(smap(lambda x, w: jax.lax.psum(x @ w, "i"), (P("i", None), P()), P())),
                                [f32(8, 3), f32(3, 2)]),
        "pmap_mlp_step": (jax.pmap(mlp_step, axis_name="i", in_axes=(None, None, 0, 0)),
                          [f32(3, 8) * 0.5, f32(8, 2) * 0.5, f32(N, 5, 3), f32(N, 5, 2)]),
        "smap_partial_manual": (jax.jit(shard_map(partial_manual, mesh=mesh2, in_specs=(P("a"), P()),
                                                  out_specs=P("a"), axis_names={"a"}),
                                        in_shardings=(NamedSharding(mesh2, P("a", "b")), NamedSharding(mesh2, P()))),
                                [f32(4, 6), f32(6, 4)]),
        "smap_nested_partial": (jax.jit(shard_map(nested, mesh=mesh2, in_specs=P("a"), out_specs=P(),
                                                  axis_names={"a"}),
                                        out_shardings=NamedSharding(mesh2, P())), [f32(4, 8)]),
        "smap_unreduced": (jax.jit(unreduced), [f32(4, 6), f32(6, 3)]),
    }


def main():
    rng = np.random.default_rng(0)
    manifest = {}
    for name, (fn, args) in cases(rng).items():
        lowered = fn.lower(*args)
        text = lowered.as_text(dialect="hlo")
        spmd = lowered.compile().as_text()
        out = fn(*args)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        (OUT / f"{name}.hlo").write_text(text, encoding="utf-8")
        (OUT / f"{name}.spmd.hlo").write_text(spmd, encoding="utf-8")
        np.savez(OUT / f"{name}.npz", *[np.asarray(a) for a in args])
        np.savez(OUT / f"{name}.expected.npz", *[np.asarray(o) for o in outs])
        manifest[name] = {"inputs": [list(np.shape(a)) for a in args],
                          "outputs": [list(np.shape(o)) for o in outs]}
        print(name, [np.shape(o) for o in outs])
    (OUT / "manifest.json").write_text(json.dumps({"jax": jax.__version__, "devices": N, "cases": manifest},
                                                  indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
