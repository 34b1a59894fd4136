"""Collectives compiled and run natively on device processes over shared memory
(``xlac.jit`` of a multi-device module, ``xlac/devices.py``), checked against
the multi-device reference evaluator (``xlac.evaluate_replicated``)."""
from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac.devices import ReplicatedExecutable, jit as device_jit
from xlac.evaluator_replicated import evaluate_replicated

REDUCERS = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

maxs {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] maximum(a, b)
}

// Not one of the service's reductions: gathered, then applied here in group order.
affine {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  two = f32[] constant(2)
  a2 = f32[] multiply(a, two)
  ROOT s = f32[] add(a2, b)
}
"""


def _module(header: str, params: str, body: str) -> str:
    return f"HloModule {header}\n{REDUCERS}\nENTRY e {{\n{params}{body}\n}}\n"


def _check(text: str, per_device: list, rtol=1e-6):
    """Run ``text`` natively and in the reference; compare every device's results."""
    ref = evaluate_replicated(text, per_device)
    exe = device_jit(text)
    assert isinstance(exe, ReplicatedExecutable)
    stacked = [np.stack([np.asarray(a[k]) for a in per_device]) for k in range(len(per_device[0]))]
    got = exe(*stacked)
    got = got if isinstance(got, tuple) else (got,)
    for d, want in enumerate(ref):
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g[d], w, rtol=rtol, err_msg=f"device {d}")
    return got


def _f32(*rows):
    return [[np.asarray(r, np.float32)] for r in rows]


def test_spec_examples_all_gather_and_all_reduce():
    x = _f32([1.0, 2.5], [3.0, 5.25])
    got = _check(_module("m, replica_count=2", "  x = f32[2] parameter(0)\n",
                         "  ROOT r = f32[2] all-reduce(x), replica_groups={}, to_apply=add"), x)
    np.testing.assert_array_equal(got[0], [[4.0, 7.75]] * 2)
    got = _check(_module("m, replica_count=2", "  x = f32[2] parameter(0)\n",
                         "  ROOT r = f32[4] all-gather(x), replica_groups={}, dimensions={0}"), x)
    np.testing.assert_array_equal(got[0], [[1.0, 2.5, 3.0, 5.25]] * 2)


def test_spec_example_all_to_all_4_replicas():
    """The spec's example through the builder (``ops.all_to_all`` is an HLO
    all-to-all along the split dimension, then a reshape-transpose-reshape)."""
    from xlac import ops
    bld = xlac.XlaBuilder("a2a")
    x = ops.parameter(bld, 0, xlac.Shape(xlac.F32, (4, 16)), "x")
    ops.all_to_all(x, split_dimension=1, concat_dimension=0, split_count=4)
    comp = bld.build()
    exe = device_jit(comp, num_replicas=4)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((4, 4, 16)).astype(np.float32)
    got = exe(xs)
    assert got.shape == (4, 16, 4)
    ref = evaluate_replicated(exe.text, [[a] for a in xs])
    for d in range(4):
        np.testing.assert_array_equal(got[d], ref[d])
    # Device d gets column block d of every device, the devices' blocks stacked in order.
    np.testing.assert_array_equal(got[1], np.concatenate([xs[k][:, 4:8] for k in range(4)], axis=0))
    text = _module("m, replica_count=4", "  x = f32[4,16] parameter(0)\n",
                   "  ROOT r = f32[4,16] all-to-all(x), replica_groups={}, dimensions={1}")
    _check(text, [[a] for a in xs])


def test_groups_integer_reduction_and_custom_reducer():
    ints = [[np.arange(6, dtype=np.int32) * (d - 1)] for d in range(4)]
    _check(_module("m, replica_count=4", "  x = s32[6] parameter(0)\n",
                   "  ROOT r = s32[6] all-reduce(x), replica_groups={{0,2},{1,3}}, to_apply=maxs"), ints)
    floats = [[np.linspace(-1, 1, 5).astype(np.float32) + d] for d in range(4)]
    _check(_module("m, replica_count=4", "  x = f32[5] parameter(0)\n",
                   "  ROOT r = f32[5] all-reduce(x), replica_groups=[2,2]<=[4], to_apply=affine"), floats)


SUB = """
subs {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] subtract(a, b)
}
"""


def test_non_commutative_reducer_follows_group_order_in_compiled_code_and_reference():
    """A reducer that is neither commutative nor associative (subtract) with
    replica groups listed out of device order: compiled code and
    ``evaluate_replicated`` both fold the members' values in group order,
    ((v[g0] - v[g1]) - v[g2]) - ..., for all-reduce and reduce-scatter."""
    xs = [np.array([1, 10, 100, 1000, 7, 70, 700, 7000], np.int32) * (d + 1) + d for d in range(4)]
    body = ("  a = s32[8] all-reduce(x), replica_groups={{2,0,3,1}}, to_apply=subs\n"
            "  b = s32[8] all-reduce(x), replica_groups={{1,0},{3,2}}, to_apply=subs\n"
            "  c = s32[2] reduce-scatter(x), replica_groups={{3,1,0,2}}, dimensions={0}, to_apply=subs\n"
            "  ROOT t = (s32[8], s32[8], s32[2]) tuple(a, b, c)")
    text = _module("m, replica_count=4", "  x = s32[8] parameter(0)\n", body).replace(REDUCERS, REDUCERS + SUB)
    got = _check(text, [[x] for x in xs])

    def fold(order):
        acc = xs[order[0]].copy()
        for d in order[1:]:
            acc -= xs[d]
        return acc
    for d in range(4):
        np.testing.assert_array_equal(got[0][d], fold((2, 0, 3, 1)))
        np.testing.assert_array_equal(got[1][d], fold((1, 0) if d in (0, 1) else (3, 2)))
        position = (3, 1, 0, 2).index(d)
        np.testing.assert_array_equal(got[2][d], fold((3, 1, 0, 2))[2 * position:2 * position + 2])


def test_reduce_scatter_along_a_minor_dimension_and_gather_along_one():
    args = [[np.arange(24, dtype=np.float32).reshape(3, 8) * (d + 1)] for d in range(2)]
    _check(_module("m, replica_count=2", "  x = f32[3,8] parameter(0)\n",
                   "  ROOT r = f32[3,4] reduce-scatter(x), replica_groups={}, dimensions={1}, to_apply=add"), args)
    _check(_module("m, replica_count=2", "  x = f32[3,8] parameter(0)\n",
                   "  ROOT r = f32[3,4] reduce-scatter(x), replica_groups={}, dimensions={1}, to_apply=affine"),
           args)
    _check(_module("m, replica_count=2", "  x = f32[3,8] parameter(0)\n",
                   "  ROOT r = f32[3,16] all-gather(x), replica_groups={}, dimensions={1}"), args)


def test_collective_permute_with_a_missing_source_and_tuple_all_reduce():
    args = _f32([1, 2], [3, 4], [5, 6])
    got = _check(_module("m, replica_count=3", "  x = f32[2] parameter(0)\n",
                         "  ROOT r = f32[2] collective-permute(x), source_target_pairs={{0,1},{1,2}}"), args)
    np.testing.assert_array_equal(got[0], [[0, 0], [1, 2], [3, 4]])
    two = [[np.float32([d, d]), np.float32([d] * 3)] for d in range(2)]
    _check(_module("m, replica_count=2", "  x = f32[2] parameter(0)\n  y = f32[3] parameter(1)\n",
                   "  ROOT r = (f32[2], f32[3]) all-reduce(x, y), replica_groups={}, to_apply=add"), two)


def test_all_reduce_inside_a_while_loop_runs_natively():
    text = """HloModule loop, replica_count=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(50)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  half = f32[] constant(0.5)
  h = f32[4] broadcast(half), dimensions={}
  s = f32[4] all-reduce(x), replica_groups={}, to_apply=add
  y = f32[4] multiply(s, h)
  ROOT t = (s32[], f32[4]) tuple(j, y)
}

ENTRY e {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[4]) tuple(z, x)
  w = (s32[], f32[4]) while(t), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
"""
    _check(text, _f32([1, 2, 3, 4], [5, 6, 7, 8]))


def test_replica_id_and_a_bad_leading_axis():
    text = _module("m, replica_count=2", "  x = f32[3] parameter(0)\n",
                   "  r = u32[] replica-id()\n  c = f32[] convert(r)\n  b = f32[3] broadcast(c), dimensions={}\n"
                   "  ROOT a = f32[3] add(x, b)")
    _check(text, _f32([1, 1, 1], [1, 1, 1]))
    with pytest.raises(ValueError, match="parameter 0: expected a leading axis of 2"):
        device_jit(text)(np.zeros((3, 3), np.float32))


def test_a_one_device_module_needs_no_service():
    text = _module("m", "  x = f32[2] parameter(0)\n",
                   "  ag = f32[2] all-gather(x), replica_groups={}, dimensions={0}\n"
                   "  ROOT r = f32[2] all-reduce(ag), replica_groups={}, to_apply=add")
    exe = xlac.jit(text)
    np.testing.assert_array_equal(exe(np.float32([1, 2])), [1, 2])


def test_xlac_run_a_per_replica_module(tmp_path):
    """``xlac run`` of a multi-device module: inputs and outputs carry the
    leading device axis; ``--devices`` for a module that does not say; the
    reference evaluator gives the same; a success prints nothing on stderr."""
    import subprocess
    import sys
    text = _module("m", "  x = f32[2] parameter(0)\n",
                   "  ROOT r = f32[2] all-reduce(x), replica_groups={}, to_apply=add")
    path = tmp_path / "ar.hlo"
    path.write_text(text, encoding="utf-8")
    xs = np.float32([[1.0, 2.5], [3.0, 5.25], [0.5, 0.25]])
    np.savez(tmp_path / "in.npz", xs)
    for extra in ([], ["--reference"]):
        out = tmp_path / f"out{len(extra)}.npz"
        run = subprocess.run([sys.executable, "-m", "xlac", "run", str(path), "--inputs", str(tmp_path / "in.npz"),
                              "--out", str(out), "--devices", "3", *extra], capture_output=True, encoding="utf-8")
        assert run.returncode == 0 and run.stderr == "", run.stderr
        with np.load(out) as got:
            np.testing.assert_array_equal(got["arr_0"], np.tile(xs.sum(0), (3, 1)))
    bad = subprocess.run([sys.executable, "-m", "xlac", "run", str(path), "--inputs", str(tmp_path / "in.npz"),
                          "--devices", "2"], capture_output=True, encoding="utf-8")
    assert bad.returncode != 0 and "parameter 0: expected a leading axis of 2" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_async_pairs_run_as_the_synchronous_collectives():
    body = """  ars = f32[2] all-reduce-start(x), replica_groups={}, to_apply=add
  ar = f32[2] all-reduce-done(ars)
  ags = (f32[2], f32[4]) all-gather-start(ar), replica_groups={}, dimensions={0}
  ag = f32[4] all-gather-done(ags)
  cps = (f32[4], f32[4], u32[], u32[]) collective-permute-start(ag), source_target_pairs={{0,1},{1,0}}
  ROOT cp = f32[4] collective-permute-done(cps)"""
    got = _check(_module("m, replica_count=2", "  x = f32[2] parameter(0)\n", body), _f32([1, 2], [3, 5]))
    np.testing.assert_array_equal(got[0], [[4, 7, 4, 7]] * 2)
    # One device: no service, and the same rewrite.
    one = body.replace("{{0,1},{1,0}}", "{{0,0}}").replace("f32[4]", "f32[2]")
    np.testing.assert_array_equal(xlac.jit(_module("m", "  x = f32[2] parameter(0)\n", one))(np.float32([1, 2])),
                                  [1, 2])
    # Shapes that do not fit the device count the code is compiled for are refused.
    with pytest.raises(xlac.ShapeError, match=r"all-gather.*on 1 device\(s\).*2 devices|1 devices"):
        xlac.jit(_module("m", "  x = f32[2] parameter(0)\n",
                         "  ROOT ag = f32[4] all-gather(x), replica_groups={}, dimensions={0}"))


def test_scalar_arguments_and_results_keep_their_rank():
    text = _module("m, replica_count=2", "  s = f32[] parameter(0)\n",
                   "  ROOT r = f32[] all-reduce(s), replica_groups={}, to_apply=add")
    got = device_jit(text)(np.float32([1.5, 2.0]))
    assert got.shape == (2,)
    np.testing.assert_array_equal(got, [3.5, 3.5])


def test_all_to_all_tuple_form():
    """Operand k goes to device k; result k comes from device k (as XLA's SPMD
    partitioner emits it for jax's all_to_all)."""
    args = [[np.float32([[10 * d + k] * 3]) for k in range(4)] for d in range(4)]
    body = ("  ROOT a = (f32[1,3], f32[1,3], f32[1,3], f32[1,3]) all-to-all(x0, x1, x2, x3), "
            "replica_groups={{0,1,2,3}}")
    params = "".join(f"  x{k} = f32[1,3] parameter({k})\n" for k in range(4))
    got = _check(_module("m, replica_count=4", params, body), args)
    for d in range(4):
        for k in range(4):
            np.testing.assert_array_equal(got[k][d], [[10 * k + d] * 3])


SEND_RECV = """HloModule pipeline, replica_count=1, num_partitions=3

ENTRY e {
  x = f32[2] parameter(0)
  tok = token[] after-all()
  recv = (f32[2], u32[], token[]) recv(tok), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2}}"}
  send = (f32[2], u32[], token[]) send(x, tok), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2}}"}
  recv-done = (f32[2], token[]) recv-done(recv), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2}}"}
  send-done = token[] send-done(send), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2}}"}
  ROOT d = f32[2] get-tuple-element(recv-done), index=0
}
"""


def test_send_recv_pairs_run_as_a_permute():
    got = _check(SEND_RECV, _f32([1, 2], [3, 4], [5, 6]))
    np.testing.assert_array_equal(got[0], [[0, 0], [1, 2], [3, 4]])
