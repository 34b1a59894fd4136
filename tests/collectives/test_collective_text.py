"""HLO text of the collectives: every form parses to typed attributes and prints
back as it was written (XLA's spellings, as hlo_parser.cc reads and XLA and JAX
print them)."""
import re

import pytest

import xlac
from xlac.errors import HloParseError
from xlac.hlo.collectives import IotaGroups, ReplicaGroups
from xlac.hlo.verifier import verify

ADD = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""


def module(body: str, header: str = "HloModule m", params: str = "  p = f32[8] parameter(0)\n") -> str:
    return f"{header}\n\n{ADD}\nENTRY e {{\n{params}{body}\n}}\n"


def roundtrip(text: str):
    m = xlac.parse_hlo(text)
    printed = m.to_text()
    again = xlac.parse_hlo(printed)
    assert again.to_text() == printed
    verify(m)
    return m, printed


def inst(m, name):
    return m.entry.instruction(name)


@pytest.mark.parametrize("groups, expected", [
    ("{{0,1},{2,3}}", ((0, 1), (2, 3))),
    ("{}", ()),
    ("{{0,1,2,3}}", ((0, 1, 2, 3),)),
    ("{{0},{1},{2},{3}}", ((0,), (1,), (2,), (3,))),
    ("[2,2]<=[4]", ((0, 1), (2, 3))),
    ("[1,4]<=[4]", ((0, 1, 2, 3),)),
    ("[2,2]<=[2,2]T(1,0)", ((0, 2), (1, 3))),
    ("[4,2]<=[2,2,2]T(0,2,1)", ((0, 2), (1, 3), (4, 6), (5, 7))),
])
def test_replica_groups_forms_round_trip(groups, expected):
    text = module(f"  ROOT ar = f32[8] all-reduce(p), replica_groups={groups}, to_apply=add")
    m, printed = roundtrip(text)
    value = inst(m, "ar").attrs["replica_groups"]
    assert isinstance(value, ReplicaGroups)
    assert value.groups == expected
    assert f"replica_groups={groups}," in printed          # the form read is the form printed


def test_iota_groups_match_numpy_reshape_transpose():
    import numpy as np
    for dims, perm, g, s in [((8,), None, 2, 4), ((2, 4), (1, 0), 4, 2), ((2, 2, 2), (2, 0, 1), 2, 4),
                             ((3, 2), (1, 0), 2, 3)]:
        a = np.arange(int(np.prod(dims))).reshape(dims)
        if perm is not None:
            a = a.transpose(perm)
        want = tuple(tuple(int(v) for v in row) for row in a.reshape(g, s))
        assert ReplicaGroups.iota(g, s, dims, perm).groups == want


@pytest.mark.parametrize("groups, expected", [
    # XLA's mesh-axes form: a group of the devices that differ only in the named axes.
    ("mesh['a'=2,'b'=2] {'a'}", ((0, 2), (1, 3))),
    ("mesh[a=2,b=2] {b}", ((0, 1), (2, 3))),
    ("mesh['a'=2,'b'=2] {'a','b'}", ((0, 1, 2, 3),)),
    ("mesh['a'=2,'b'=2] {'b','a'}", ((0, 1, 2, 3),)),          # mesh order, as XLA reads it
    # Devices not in order: explicitly, or as an iota (XLA prints the 3-axis mesh of a
    # nested shard_map so).
    ("mesh['a'=2,'b'=2], device_ids=(3,2,1,0) {'a'}", ((3, 1), (2, 0))),
    ("mesh['axis_0'=1,'axis_1'=2,'axis_2'=2], device_ids=([2,2]T(1,0)) {'axis_1'}", ((0, 1), (2, 3))),
    # Sub-axes 'name':(pre_size)size, in the order written.
    ("mesh['x'=4] {'x':(1)2}", ((0, 2), (1, 3))),
    ("mesh['x'=4] {'x':(2)2}", ((0, 1), (2, 3))),
    ("mesh['x'=8] {'x':(1)2,'x':(4)2}", ((0, 1, 4, 5), (2, 3, 6, 7))),
    ("mesh['x'=8] {'x':(4)2,'x':(1)2}", ((0, 4, 1, 5), (2, 6, 3, 7))),
])
def test_mesh_axes_replica_groups(groups, expected):
    text = module(f"  ROOT ar = f32[8] all-reduce(p), channel_id=1, replica_groups={groups}, "
                  "use_global_device_ids=true, to_apply=add", header="HloModule m, num_partitions=" +
                  str(sum(len(g) for g in expected)))
    m, printed = roundtrip(text)
    assert inst(m, "ar").attrs["replica_groups"].groups == expected
    assert "replica_groups={{" in printed                   # printed in the list form


@pytest.mark.parametrize("groups, words", [
    ("mesh['x'=2] {'y'}", "axis 'y' is not an axis of the mesh"),
    ("mesh['x'=4] {'x':(2)4}", "sub-axis x:(2)4 does not divide"),
    ("mesh['x'=2,'y'=2], device_ids=(0,1,1,3) {'x'}", "must be a permutation"),
    ("mesh['x'=2,'y'=1] {'y'}", "one device per group"),
    ("mesh['x'=2], devices=(0,1) {'x'}", "expected '{' opening the grouped mesh axes"),
])
def test_mesh_axes_replica_groups_refused(groups, words):
    with pytest.raises(HloParseError, match=re.escape(words)):
        xlac.parse_hlo(module(f"  ROOT ar = f32[8] all-reduce(p), channel_id=1, replica_groups={groups}, "
                              "use_global_device_ids=true, to_apply=add"))


def test_replica_groups_with_blanks_and_the_parse_helper():
    m = xlac.parse_hlo(module("  ROOT ar = f32[8] all-reduce(p), replica_groups={ {0, 1}, {2, 3} }, to_apply=add"))
    assert inst(m, "ar").attrs["replica_groups"].groups == ((0, 1), (2, 3))
    assert "replica_groups={{0,1},{2,3}}" in m.to_text()     # XLA's spelling has no blanks
    assert str(ReplicaGroups.parse("[2,2]<=[2,2]T(1,0)")) == "[2,2]<=[2,2]T(1,0)"
    assert ReplicaGroups.parse("{{1,0}}").groups == ((1, 0),)
    assert ReplicaGroups.of([[0, 2], [1, 3]]) == ReplicaGroups.parse("{{0,2},{1,3}}")
    assert ReplicaGroups.iota(2, 2).iota_form == IotaGroups(2, 2, (4,), None)


def test_all_reduce_attributes_as_jax_prints_them():
    text = module("  ROOT ar = f32[8] all-reduce(p), channel_id=1, replica_groups=[1,4]<=[4], "
                  "use_global_device_ids=true, to_apply=add",
                  header="HloModule jit_f, entry_computation_layout={(f32[8]{0})->f32[8]{0}}, "
                         "replica_count=1, num_partitions=4")
    m, printed = roundtrip(text)
    ar = inst(m, "ar")
    assert ar.attrs["channel_id"] == 1 and ar.attrs["use_global_device_ids"] is True
    assert ar.attrs["to_apply"].name == "add"
    assert m.attrs["replica_count"] == 1 and m.attrs["num_partitions"] == 4
    assert (m.replica_count, m.num_partitions) == (1, 4)
    assert printed.splitlines()[0].endswith("replica_count=1, num_partitions=4")
    assert ("ar = f32[8]{0} all-reduce(p), channel_id=1, replica_groups=[1,4]<=[4], "
            "use_global_device_ids=true, to_apply=add") in printed


def test_long_form_with_operand_shapes():
    text = """HloModule m, replica_count=4

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %e (p: f32[2]) -> f32[8] {
  %p = f32[2]{0} parameter(0)
  %ags = (f32[2]{0}, f32[8]{0}) all-gather-start(f32[2]{0} %p), replica_groups={{0,1,2,3}}, dimensions={0}
  ROOT %agd = f32[8]{0} all-gather-done((f32[2]{0}, f32[8]{0}) %ags)
}
"""
    m, printed = roundtrip(text)
    assert inst(m, "ags").attrs["dimensions"] == (0,)
    assert "agd = f32[8]{0} all-gather-done(ags)" in printed


START_DONE = [
    ("  ars = f32[8] all-reduce-start(p), replica_groups={}, to_apply=add\n"
     "  ROOT ard = f32[8] all-reduce-done(ars)"),
    ("  ags = (f32[8], f32[32]) all-gather-start(p), channel_id=2, replica_groups={{0,1,2,3}}, "
     "dimensions={0}, use_global_device_ids=true\n"
     "  ROOT agd = f32[32] all-gather-done(ags)"),
    ("  cps = (f32[8], f32[8], u32[], u32[]) collective-permute-start(p), channel_id=3, "
     "source_target_pairs={{0,1},{1,2},{2,3},{3,0}}\n"
     "  ROOT cpd = f32[8] collective-permute-done(cps)"),
]


@pytest.mark.parametrize("body", START_DONE)
def test_start_done_pairs_round_trip(body):
    m, printed = roundtrip(module(body))
    for line in body.splitlines():
        name = line.split("=")[0].replace("ROOT", "").strip()
        assert name in printed


@pytest.mark.parametrize("body", [
    "  ROOT ag = f32[32] all-gather(p), replica_groups={{0,1,2,3}}, dimensions={0}",
    "  ROOT ag = f32[16] all-gather(p), channel_id=5, replica_groups={{0,1},{2,3}}, dimensions={0}, "
    "constrain_layout=true, use_global_device_ids=true",
    "  ROOT rs = f32[2] reduce-scatter(p), replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=add",
    "  ROOT a2a = f32[8] all-to-all(p), replica_groups={{0,1}}, dimensions={0}",
    "  ROOT a2a = (f32[8], f32[8]) all-to-all(p, p), channel_id=4, replica_groups={{0,1}}",
    "  ROOT cp = f32[8] collective-permute(p), source_target_pairs={{0,1},{1,0}}",
    "  ROOT cp = f32[8] collective-permute(p), channel_id=1, source_target_pairs={}",
    "  ROOT r = u32[] replica-id()",
    "  ROOT r = u32[] partition-id()",
])
def test_collectives_round_trip(body):
    _, printed = roundtrip(module(body))
    # Everything from the opcode on (operands and attributes) prints as written.
    opcode_on = body[re.search(r" [a-z][a-z-]*\(", body).start() + 1:]
    assert opcode_on in printed, (opcode_on, printed)


def test_source_target_pairs_are_typed():
    m, printed = roundtrip(module("  ROOT cp = f32[8] collective-permute(p), source_target_pairs={{0,1}, {1,2}}"))
    assert inst(m, "cp").attrs["source_target_pairs"] == ((0, 1), (1, 2))
    assert "source_target_pairs={{0,1},{1,2}}" in printed


@pytest.mark.parametrize("pairs_attr", [
    'frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2}}"}',
    "frontend_attributes={_xla_send_recv_source_target_pairs={{0,1},{1,2}}}",
])
def test_send_recv_with_frontend_attributes(pairs_attr):
    body = f"""  tok = token[] after-all()
  recv = (f32[8], u32[], token[]) recv(tok), channel_id=2, {pairs_attr}
  send = (f32[8], u32[], token[]) send(p, tok), channel_id=2, {pairs_attr}
  recv-done = (f32[8], token[]) recv-done(recv), channel_id=2, {pairs_attr}
  send-done = token[] send-done(send), channel_id=2, {pairs_attr}
  ROOT d = f32[8] get-tuple-element(recv-done), index=0"""
    m, printed = roundtrip(module(body))
    assert pairs_attr in printed
    assert inst(m, "send").attrs["channel_id"] == 2
    from xlac.hlo.collectives import device_pairs, frontend_attributes
    assert frontend_attributes(inst(m, "recv"))["_xla_send_recv_source_target_pairs"] == "{{0,1},{1,2}}"
    assert device_pairs(inst(m, "send"), 3, 1) == [(0, 1), (1, 2)]


def test_host_transfer_flag():
    body = """  tok = token[] after-all()
  send = (f32[8], u32[], token[]) send(p, tok), channel_id=1, is_host_transfer=true
  ROOT send-done = token[] send-done(send), channel_id=1, is_host_transfer=true"""
    m, printed = roundtrip(module(body))
    assert inst(m, "send").attrs["is_host_transfer"] is True
    assert "is_host_transfer=true" in printed


@pytest.mark.parametrize("attr, message", [
    ("replica_groups=[2,2]<=[5]", "hold 5"),
    ("replica_groups=[2,2]<=[2,2]T(0,0)", "not a permutation"),
    ("replica_groups=[2,2]<[4]", "'<='"),
    ("replica_groups={{0,1}", "unterminated"),
    ("replica_groups={0,1}", "'{'"),
])
def test_replica_group_text_errors(attr, message):
    with pytest.raises(HloParseError, match=message):
        xlac.parse_hlo(module(f"  ROOT ar = f32[8] all-reduce(p), {attr}, to_apply=add"))


def test_source_target_pair_errors():
    with pytest.raises(HloParseError, match="must have 2 ids"):
        xlac.parse_hlo(module("  ROOT cp = f32[8] collective-permute(p), source_target_pairs={{0,1,2}}"))


@pytest.mark.parametrize("header, message", [
    ("HloModule m, replica_count=0", "replica_count=0 is out of range: a module runs on 1 to 1024 devices"),
    ("HloModule m, num_partitions=two", "num_partitions=two must be an integer from 1 to 1024"),
    ("HloModule m, replica_count=-2", "replica_count=-2 is out of range"),
])
def test_module_device_count_errors(header, message):
    with pytest.raises(HloParseError, match=message):
        xlac.parse_hlo(module("  ROOT n = f32[8] negate(p)", header=header))


def test_module_without_counts_runs_on_one_device():
    m = xlac.parse_hlo(module("  ROOT n = f32[8] negate(p)"))
    assert (m.replica_count, m.num_partitions) == (1, 1)
    assert "replica_count" not in m.to_text()
    m.num_partitions = 2
    assert m.to_text().splitlines()[0].endswith("num_partitions=2")
