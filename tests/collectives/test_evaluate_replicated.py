"""The multi-device reference evaluator (xlac/evaluator_replicated.py) and the
collective rules of xlac/evaluator.py: the spec's own examples, group modes,
async pairs, send/recv, loops, and the errors that replace hangs."""
import time

import numpy as np
import pytest

import xlac
from xlac import CollectiveError, evaluate, evaluate_replicated
from xlac.errors import UnsupportedError

F32 = np.float32


def f32(*v):
    return np.array(v, F32)


ADD = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""


def module(body: str, header: str = "HloModule m", params: str = "  x = f32[2] parameter(0)\n",
           extra: str = "") -> str:
    return f"{header}\n\n{ADD}\n{extra}\nENTRY e {{\n{params}{body}\n}}\n"


# ----------------------------------------------------------------------------
# The spec's examples
# ----------------------------------------------------------------------------

def test_spec_all_gather_example():
    # "[1.0, 2.5] and [3.0, 5.25] ... [1.0, 2.5, 3.0, 5.25] on both replicas"
    text = module("  ROOT ag = f32[4] all-gather(x), replica_groups={}, dimensions={0}",
                  header="HloModule m, replica_count=2")
    out = evaluate_replicated(text, [[f32(1.0, 2.5)], [f32(3.0, 5.25)]])
    for r in out:
        np.testing.assert_array_equal(r, f32(1.0, 2.5, 3.0, 5.25))


def test_spec_all_reduce_example():
    # "... the output value from this op and summation computation will be [4.0, 7.75]"
    text = module("  ROOT ar = f32[2] all-reduce(x), replica_groups={}, to_apply=add")
    out = evaluate_replicated(text, [[f32(1.0, 2.5)], [f32(3.0, 5.25)]])   # 2 argument lists: 2 replicas
    assert len(out) == 2
    for r in out:
        np.testing.assert_array_equal(r, f32(4.0, 7.75))


def test_spec_reduce_scatter_example():
    # "[1.0, 2.25] and [3.0, 5.25] ... [4.0] for the first replica and [7.5] for the second"
    text = module("  ROOT rs = f32[1] reduce-scatter(x), replica_groups={}, dimensions={0}, to_apply=add")
    out = evaluate_replicated(text, [[f32(1.0, 2.25)], [f32(3.0, 5.25)]])
    np.testing.assert_array_equal(out[0], f32(4.0))
    np.testing.assert_array_equal(out[1], f32(7.5))


def test_spec_all_to_all_example():
    # 4 cores, f32[4,16] split along 1 into f32[4,4] blocks, concatenated along 0: f32[16,4]
    from xlac import ops
    b = xlac.XlaBuilder("alltoall")
    x = ops.parameter(b, 0, xlac.shape("f32[4,16]"), "x")
    comp = b.build(ops.all_to_all(x, split_dimension=1, concat_dimension=0, split_count=4))
    assert comp.result_shape == xlac.shape("f32[16,4]")
    args = [np.arange(64, dtype=F32).reshape(4, 16) + 100 * d for d in range(4)]
    out = evaluate_replicated(comp, [[a] for a in args])
    for core in range(4):
        want = np.concatenate([args[j][:, 4 * core:4 * core + 4] for j in range(4)], axis=0)
        np.testing.assert_array_equal(out[core], want)


def test_spec_replica_groups_0_2_and_1_3():
    # "replica_groups = {0, 2}, {1, 3} performs reduction between the replicas 0 and 2, and 1 and 3"
    text = module("  ar = f32[2] all-reduce(x), replica_groups={{0,2},{1,3}}, to_apply=add\n"
                  "  ag = f32[4] all-gather(x), replica_groups={{0,2},{1,3}}, dimensions={0}\n"
                  "  ROOT t = (f32[2], f32[4]) tuple(ar, ag)", header="HloModule m, replica_count=4")
    args = [[f32(d, 10 * d)] for d in range(4)]
    out = evaluate_replicated(text, args)
    for d in range(4):
        partner = (d + 2) % 4
        np.testing.assert_array_equal(out[d][0], f32(d + partner, 10 * (d + partner)))
        lo, hi = sorted((d, partner))
        np.testing.assert_array_equal(out[d][1], f32(lo, 10 * lo, hi, 10 * hi))


def test_iota_replica_groups_in_a_run():
    text = module("  ROOT ar = f32[2] all-reduce(x), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=add",
                  header="HloModule m, replica_count=4")
    out = evaluate_replicated(text, [[f32(d, d)] for d in range(4)])
    assert [float(o[0]) for o in out] == [2.0, 4.0, 2.0, 4.0]       # groups {0,2} and {1,3}


def test_spec_collective_permute_with_a_missing_source():
    # "If a replica id is not a target in any pair, then the output on that replica is ... 0(s)"
    text = module("  ROOT cp = f32[2] collective-permute(x), source_target_pairs={{0,1},{1,2}}",
                  header="HloModule m, replica_count=3")
    out = evaluate_replicated(text, [[f32(1, 2)], [f32(3, 4)], [f32(5, 6)]])
    np.testing.assert_array_equal(out[0], f32(0, 0))
    np.testing.assert_array_equal(out[1], f32(1, 2))
    np.testing.assert_array_equal(out[2], f32(3, 4))


def test_replica_id_and_partition_id():
    text = module("  r = u32[] replica-id()\n  p = u32[] partition-id()\n  ROOT t = (u32[], u32[]) tuple(r, p)",
                  header="HloModule m, replica_count=2, num_partitions=3", params="")
    out = evaluate_replicated(text, [[] for _ in range(6)])
    assert [(int(r), int(p)) for r, p in out] == [(d // 3, d % 3) for d in range(6)]
    assert out[0][0].dtype == np.uint32


# ----------------------------------------------------------------------------
# Reductions: integers, any reducer, tuples
# ----------------------------------------------------------------------------

def test_integer_reductions_wrap_and_order():
    extra = """max_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}

mul_u8 {
  a = u8[] parameter(0)
  b = u8[] parameter(1)
  ROOT m = u8[] multiply(a, b)
}

and_pred {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT m = pred[] and(a, b)
}

sub_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] subtract(a, b)
}
"""
    params = "  i = s32[3] parameter(0)\n  u = u8[2] parameter(1)\n  p = pred[2] parameter(2)\n"
    body = ("  mx = s32[3] all-reduce(i), replica_groups={}, to_apply=max_s32\n"
            "  mu = u8[2] all-reduce(u), replica_groups={}, to_apply=mul_u8\n"
            "  an = pred[2] all-reduce(p), replica_groups={}, to_apply=and_pred\n"
            "  sb = s32[3] all-reduce(i), replica_groups={}, to_apply=sub_s32\n"
            "  ROOT t = (s32[3], u8[2], pred[2], s32[3]) tuple(mx, mu, an, sb)")
    text = module(body, header="HloModule m, replica_count=3", params=params, extra=extra)
    ints = [np.array(v, np.int32) for v in ([1, -5, 7], [2**31 - 1, 0, -8], [3, 3, 3])]
    u8s = [np.array(v, np.uint8) for v in ([16, 3], [16, 5], [2, 7])]
    preds = [np.array(v, bool) for v in ([True, True], [True, False], [True, True])]
    out = evaluate_replicated(text, [[i, u, p] for i, u, p in zip(ints, u8s, preds)])
    for mx, mu, an, sb in out:
        np.testing.assert_array_equal(mx, np.array([2**31 - 1, 3, 7], np.int32))
        np.testing.assert_array_equal(mu, np.array([(16 * 16 * 2) % 256, 105], np.uint8))
        np.testing.assert_array_equal(an, np.array([True, False]))
        # any reducer, applied in group order ({} lists the devices in id order): (v0 - v1) - v2, wrapping
        want = ((ints[0].astype(np.int64) - ints[1] - ints[2] + 2**31) % 2**32 - 2**31).astype(np.int32)
        np.testing.assert_array_equal(sb, want)


def test_a_reducer_is_applied_in_group_order_not_device_id_order():
    """The groups list their devices out of id order: a non-commutative reducer
    folds the members as the group lists them, on every member."""
    extra = """sub_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] subtract(a, b)
}
"""
    body = ("  ar = s32[3] all-reduce(i), replica_groups={{2,0,1}}, to_apply=sub_s32\n"
            "  rs = s32[1] reduce-scatter(i), replica_groups={{1,2,0}}, dimensions={0}, to_apply=sub_s32\n"
            "  ROOT t = (s32[3], s32[1]) tuple(ar, rs)")
    text = module(body, header="HloModule m, replica_count=3", params="  i = s32[3] parameter(0)\n", extra=extra)
    i = [np.array(v, np.int32) for v in ([1, 2, 3], [10, 20, 30], [100, 200, 300])]
    out = evaluate_replicated(text, [[v] for v in i])
    for d, (ar, rs) in enumerate(out):
        np.testing.assert_array_equal(ar, i[2] - i[0] - i[1])
        # the group {1,2,0}: device 1 gets block 0, device 2 block 1, device 0 block 2
        k = [1, 2, 0].index(d)
        np.testing.assert_array_equal(rs, (i[1] - i[2] - i[0])[k:k + 1])


def test_variadic_all_reduce_and_tuple_all_to_all():
    body = ("  y = f32[2] negate(x)\n"
            "  ar = (f32[2], f32[2]) all-reduce(x, y), replica_groups={}, to_apply=add\n"
            "  a2a = (f32[2], f32[2]) all-to-all(x, y), replica_groups={}\n"
            "  ROOT t = ((f32[2], f32[2]), (f32[2], f32[2])) tuple(ar, a2a)")
    out = evaluate_replicated(module(body), [[f32(1, 2)], [f32(10, 20)]])
    for d, (ar, a2a) in enumerate(out):
        np.testing.assert_array_equal(ar[0], f32(11, 22))
        np.testing.assert_array_equal(ar[1], f32(-11, -22))
        # operand i goes to device i: device 0 gets x of both, device 1 gets y of both
        want = [f32(1, 2), f32(10, 20)] if d == 0 else [f32(-1, -2), f32(-10, -20)]
        np.testing.assert_array_equal(a2a[0], want[0])
        np.testing.assert_array_equal(a2a[1], want[1])


def test_all_to_all_array_form_and_bf16_all_reduce():
    body = ("  a2a = f32[4] all-to-all(x), replica_groups={{0,1}}, dimensions={0}\n"
            "  h = bf16[4] convert(x)\n"
            "  ar = bf16[4] all-reduce(h), replica_groups={}, to_apply=add_bf16\n"
            "  ROOT t = (f32[4], bf16[4]) tuple(a2a, ar)")
    extra = "add_bf16 {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n  ROOT s = bf16[] add(a, b)\n}\n"
    out = evaluate_replicated(module(body, params="  x = f32[4] parameter(0)\n", extra=extra),
                              [[f32(1, 2, 3, 4)], [f32(5, 6, 7, 8)]])
    np.testing.assert_array_equal(out[0][0], f32(1, 2, 5, 6))
    np.testing.assert_array_equal(out[1][0], f32(3, 4, 7, 8))
    assert out[0][1].dtype == xlac.BF16.dtype
    np.testing.assert_array_equal(out[1][1].astype(F32), f32(6, 8, 10, 12))


# ----------------------------------------------------------------------------
# Partitions and group modes
# ----------------------------------------------------------------------------

def test_group_modes_in_a_run():
    # 2 replicas x 2 partitions; device d = replica * 2 + partition holds [d].
    body = ("  cr = f32[1] all-reduce(x), replica_groups={}, to_apply=add\n"                   # replicas of a partition
            "  crp = f32[1] all-reduce(x), channel_id=1, replica_groups={{0},{1}}, to_apply=add\n"  # both partitions
            "  fid = f32[1] all-reduce(x), channel_id=2, replica_groups={{0,3},{1,2}}, "
            "use_global_device_ids=true, to_apply=add\n"
            "  cp = f32[2] all-to-all(y), channel_id=3, replica_groups={{0,1}}, dimensions={0}\n"  # partitions
            "  perm = f32[1] collective-permute(x), channel_id=4, source_target_pairs={{0,1}}\n"  # partition 0 -> 1
            "  ROOT t = (f32[1], f32[1], f32[1], f32[2], f32[1]) tuple(cr, crp, fid, cp, perm)")
    params = "  x = f32[1] parameter(0)\n  y = f32[2] parameter(1)\n"
    text = module(body, header="HloModule m, replica_count=2, num_partitions=2", params=params)
    out = evaluate_replicated(text, [[f32(d), f32(10 * d, 10 * d + 1)] for d in range(4)])
    for d, (cr, crp, fid, cp, perm) in enumerate(out):
        r, p = divmod(d, 2)
        assert float(cr[0]) == p + (2 + p)                  # devices p and 2 + p
        assert float(crp[0]) == 2 * r + (2 * r + 1)         # both partitions of replica r
        assert float(fid[0]) == (0 + 3 if d in (0, 3) else 1 + 2)
        other = r * 2 + (1 - p)
        blocks = {p: 10 * d + p, 1 - p: 10 * other + p}       # block p of each partition of replica r
        np.testing.assert_array_equal(cp, f32(blocks[0], blocks[1]))
        assert float(perm[0]) == (r * 2 if p == 1 else 0)


def test_device_counts_from_arguments_and_header():
    text = module("  ROOT r = u32[] replica-id()", params="")
    assert [int(v) for v in evaluate_replicated(text, [[], [], []])] == [0, 1, 2]
    assert [int(v) for v in evaluate_replicated(text, [[]] * 4, num_partitions=2)] == [0, 0, 1, 1]
    with pytest.raises(ValueError, match="3 argument list"):
        evaluate_replicated(text, [[]] * 3, num_partitions=2)
    with_header = module("  ROOT r = u32[] replica-id()", header="HloModule m, replica_count=2", params="")
    with pytest.raises(ValueError, match="3 argument list"):
        evaluate_replicated(with_header, [[]] * 3)
    with pytest.raises(ValueError, match="replica_count is 4 here but 2 in the header"):
        evaluate_replicated(with_header, [[]] * 4, num_replicas=4)
    with pytest.raises(ValueError, match="empty"):
        evaluate_replicated(text, [])


def test_argument_errors_name_the_device():
    text = module("  ROOT n = f32[2] negate(x)")
    with pytest.raises(TypeError, match=r"device 1 \(replica 1, partition 0\): parameter 0 \(x\)"):
        evaluate_replicated(text, [[f32(1, 2)], [np.array([1, 2], np.int32)]])
    with pytest.raises(TypeError, match="device 0 .* got 2"):
        evaluate_replicated(text, [[f32(1, 2), f32(1, 2)], [f32(1, 2)]])
    with pytest.raises(TypeError, match="must be a list or tuple"):
        evaluate_replicated(text, [f32(1, 2), f32(1, 2)])


# ----------------------------------------------------------------------------
# Async pairs, send/recv, loops
# ----------------------------------------------------------------------------

def test_start_done_pairs():
    body = ("  ars = f32[2] all-reduce-start(x), replica_groups={}, to_apply=add\n"
            "  ard = f32[2] all-reduce-done(ars)\n"
            "  ags = (f32[2], f32[4]) all-gather-start(x), replica_groups={}, dimensions={0}\n"
            "  agd = f32[4] all-gather-done(ags)\n"
            "  cps = (f32[2], f32[2], u32[], u32[]) collective-permute-start(x), source_target_pairs={{0,1},{1,0}}\n"
            "  cpd = f32[2] collective-permute-done(cps)\n"
            "  ROOT t = (f32[2], f32[4], f32[2]) tuple(ard, agd, cpd)")
    out = evaluate_replicated(module(body), [[f32(1, 2)], [f32(3, 4)]])
    for d, (ard, agd, cpd) in enumerate(out):
        np.testing.assert_array_equal(ard, f32(4, 6))
        np.testing.assert_array_equal(agd, f32(1, 2, 3, 4))
        np.testing.assert_array_equal(cpd, f32(3, 4) if d == 0 else f32(1, 2))


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


def test_send_recv_pairs_by_channel():
    out = evaluate_replicated(SEND_RECV, [[f32(1, 2)], [f32(3, 4)], [f32(5, 6)]])
    np.testing.assert_array_equal(out[0], f32(0, 0))          # no source: zeros
    np.testing.assert_array_equal(out[1], f32(1, 2))
    np.testing.assert_array_equal(out[2], f32(3, 4))


def test_send_recv_builders():
    from xlac import ops
    b = xlac.XlaBuilder("ring")
    x = ops.parameter(b, 0, xlac.shape("f32[2]"), "x")
    ring = [(0, 1), (1, 2), (2, 0)]
    token = ops.send(x, channel_id=7, source_target_pairs=ring)
    got = ops.recv(b, "f32[2]", channel_id=7, token=token, source_target_pairs=ring)
    out = evaluate_replicated(b.build(got), [[f32(d, d)] for d in range(3)])
    assert [float(o[0]) for o in out] == [2.0, 0.0, 1.0]


def test_collective_inside_a_while_loop():
    text = """HloModule loop, replica_count=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[2] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[2] all-reduce(v), replica_groups={}, to_apply=add
  ROOT t = (s32[], f32[2]) tuple(j, w)
}

ENTRY e {
  x = f32[2] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[2]) tuple(zero, x)
  w = (s32[], f32[2]) while(init), condition=cond, body=body
  ROOT r = f32[2] get-tuple-element(w), index=1
}
"""
    out = evaluate_replicated(text, [[f32(1, 2)], [f32(3, 4)]])
    for r in out:
        np.testing.assert_array_equal(r, f32(4, 6) * 4)           # summed, then doubled twice


# ----------------------------------------------------------------------------
# Errors instead of hangs
# ----------------------------------------------------------------------------

BRANCHES = """HloModule m, replica_count=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

b0 {
  p = f32[2] parameter(0)
  ROOT ar = f32[2] all-reduce(p), replica_groups={}, to_apply=add
}

b1 {
  p = f32[2] parameter(0)
  BRANCH1
}

ENTRY e {
  x = f32[2] parameter(0)
  r = u32[] replica-id()
  c = s32[] convert(r)
  ROOT out = f32[2] conditional(c, x, x), branch_computations={b0, b1}
}
"""


def test_devices_at_different_collectives_are_named():
    text = BRANCHES.replace("BRANCH1", "ag = f32[4] all-gather(p), replica_groups={}, dimensions={0}\n"
                                       "  ROOT s = f32[2] slice(ag), slice={[0:2]}")
    start = time.monotonic()
    with pytest.raises(CollectiveError, match=r"reached different collectives .*device 0 at all-reduce ar in b0; "
                                              r"device 1 at all-gather ag in b1"):
        evaluate_replicated(text, [[f32(1, 2)], [f32(3, 4)]])
    assert time.monotonic() - start < 10


def test_a_device_that_finishes_while_another_waits():
    text = BRANCHES.replace("BRANCH1", "ROOT n = f32[2] negate(p)")
    with pytest.raises(CollectiveError, match=r"device 0 waits at all-reduce ar in b0 for devices \[1\].*"
                                              r"device 1 has finished"):
        evaluate_replicated(text, [[f32(1, 2)], [f32(3, 4)]])


def test_same_channel_in_different_computations_meets():
    # With a channel_id, the devices meet by channel (XLA: only ops of the same
    # channel_id communicate), wherever the instruction is.
    text = BRANCHES.replace("all-reduce(p), replica_groups={}", "all-reduce(p), channel_id=5, replica_groups={}")
    text = text.replace("BRANCH1", "ROOT ar2 = f32[2] all-reduce(p), channel_id=5, replica_groups={}, to_apply=add")
    out = evaluate_replicated(text, [[f32(1, 2)], [f32(3, 4)]])
    np.testing.assert_array_equal(out[1], f32(4, 6))


def test_timeout_names_the_waiting_and_the_busy_device():
    spin = """spin_cond {
  s = s64[] parameter(0)
  n = s64[] constant(100000000000)
  ROOT lt = pred[] compare(s, n), direction=LT
}

spin_body {
  s = s64[] parameter(0)
  one = s64[] constant(1)
  ROOT t = s64[] add(s, one)
}
"""
    text = BRANCHES.replace("b1 {", spin + "\nb1 {").replace(
        "BRANCH1", "z = s64[] constant(0)\n  w = s64[] while(z), condition=spin_cond, body=spin_body\n"
                   "  wf = f32[] convert(w)\n  wb = f32[2] broadcast(wf), dimensions={}\n"
                   "  ROOT n = f32[2] add(p, wb)")
    start = time.monotonic()
    with pytest.raises(CollectiveError, match=r"timed out after 0.5 s: device 0 waits at all-reduce ar.*"
                                              r"device 1 is running"):
        evaluate_replicated(text, [[f32(1, 2)], [f32(3, 4)]], timeout=0.5)
    assert time.monotonic() - start < 10          # the busy device stopped too


def test_an_error_on_one_device_stops_the_others():
    text = BRANCHES.replace("BRANCH1", "ROOT u = f32[2] xlac-test-unimplemented(p)")
    with pytest.raises(UnsupportedError, match="xlac-test-unimplemented") as e:
        evaluate_replicated(text, [[f32(1, 2)], [f32(3, 4)]])
    assert any("device 1 (replica 1, partition 0)" in note for note in e.value.__notes__)


def test_shard_count_other_than_the_group_size():
    text = module("  ROOT ag = f32[6] all-gather(x), replica_groups={}, dimensions={0}")
    with pytest.raises(CollectiveError, match=r"the result f32\[6\].* has 3 shard\(s\) along dimension 0, but "
                                              r"the group \{0,1\}.* has 2 device\(s\)"):
        evaluate_replicated(text, [[f32(1, 2)], [f32(3, 4)]])


# ----------------------------------------------------------------------------
# The one-device evaluator
# ----------------------------------------------------------------------------

def test_one_device_module_behaves_as_xla():
    body = ("  ar = f32[2] all-reduce(x), replica_groups={}, to_apply=add\n"
            "  ag = f32[2] all-gather(x), replica_groups={{0}}, dimensions={0}\n"
            "  rs = f32[2] reduce-scatter(x), replica_groups={}, dimensions={0}, to_apply=add\n"
            "  cp = f32[2] collective-permute(x), source_target_pairs={{0,0}}\n"
            "  cz = f32[2] collective-permute(x), source_target_pairs={}\n"
            "  r = u32[] replica-id()\n  p = u32[] partition-id()\n"
            "  ROOT t = (f32[2], f32[2], f32[2], f32[2], f32[2], u32[], u32[]) tuple(ar, ag, rs, cp, cz, r, p)")
    out = evaluate(module(body, header="HloModule m, replica_count=1"), f32(1.5, -2))
    for v in out[:4]:
        np.testing.assert_array_equal(v, f32(1.5, -2))
    np.testing.assert_array_equal(out[4], f32(0, 0))
    assert int(out[5]) == 0 and int(out[6]) == 0


def test_one_device_evaluate_refuses_several_devices():
    text = module("  ROOT ar = f32[2] all-reduce(x), replica_groups={}, to_apply=add",
                  header="HloModule m, replica_count=4")
    with pytest.raises(CollectiveError, match=r"all-reduce ar: the module runs on 4 replica\(s\) x 1 "
                                              r"partition\(s\) = 4 devices.*evaluate_replicated"):
        evaluate(text, f32(1, 2))
    text = module("  ROOT r = u32[] replica-id()", header="HloModule m, num_partitions=2", params="")
    with pytest.raises(CollectiveError, match="replica-id r: .*evaluate_replicated"):
        evaluate(text)
    # groups that need a second device in a module of one
    text = module("  ROOT ar = f32[2] all-reduce(x), replica_groups={{0,1}}, to_apply=add")
    with pytest.raises(CollectiveError, match=r"all-reduce ar: replica group \{0,1\} names replica 1.*"
                                              "evaluate_replicated"):
        evaluate(text, f32(1, 2))
    text = module("  ROOT cp = f32[2] collective-permute(x), source_target_pairs={{0,1}}")
    with pytest.raises(CollectiveError, match="names replica 1.*evaluate_replicated"):
        evaluate(text, f32(1, 2))


def test_send_without_pairs_is_refused_by_name():
    text = SEND_RECV.replace(', frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2}}"}', "")
    with pytest.raises(UnsupportedError, match="not supported yet: recv .*_xla_send_recv_source_target_pairs"):
        evaluate_replicated(text, [[f32(1, 2)]] * 3)


def test_constant_folding_leaves_collectives_alone():
    from xlac.passes.constant_folding import foldable
    m = xlac.parse_hlo(module("  c = f32[2] constant({1, 2})\n"
                              "  ROOT ar = f32[2] all-reduce(c), replica_groups={}, to_apply=add", params=""))
    assert not foldable(m.entry.root)
