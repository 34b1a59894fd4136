"""Shape rules of the collectives (xlac/hlo/shape_inference.py), with XLA's
shapes for the -start/-done forms (xla/service/shape_inference.cc,
hlo_verifier.cc), and their errors: each names the op, the shapes and the rule."""
import pytest

import xlac
from xlac.errors import ShapeError, UnsupportedError
from xlac.hlo.collectives import ReplicaGroups
from xlac.hlo.ir import HloComputation, HloInstruction
from xlac.hlo.shape_inference import RESULT_SHAPE_GIVEN, infer_shape
from xlac.hlo.verifier import verify


def S(text):
    return xlac.shape(text)


def reducer(t="f32"):
    a = HloInstruction("parameter", S(f"{t}[]"), [], {"parameter_number": 0}, "a")
    b = HloInstruction("parameter", S(f"{t}[]"), [], {"parameter_number": 1}, "b")
    return HloComputation(f"add_{t}", [a, b, HloInstruction("add", S(f"{t}[]"), [a, b], {}, "s")])


G = ReplicaGroups.of


def test_all_reduce_shapes():
    assert infer_shape("all-reduce", [S("f32[2,3]")], {"to_apply": reducer()}) == S("f32[2,3]")
    assert infer_shape("all-reduce", [S("f32[2]"), S("f32[5]")], {"to_apply": reducer()}) == S("(f32[2], f32[5])")
    # XLA's InferAllReduceStartShape: the all-reduce's shape; -done forwards it.
    assert infer_shape("all-reduce-start", [S("f32[4]")], {"to_apply": reducer()}) == S("f32[4]")
    assert infer_shape("all-reduce-done", [S("f32[4]")], {}) == S("f32[4]")


def test_all_gather_shapes():
    attrs = {"dimensions": (1,), "replica_groups": G([[0, 1, 2, 3]])}
    assert infer_shape("all-gather", [S("f32[2,3]")], attrs) == S("f32[2,12]")
    # empty groups: the shard count comes from the given result
    assert infer_shape("all-gather", [S("f32[2,3]")], {"dimensions": (0,)}, shape=S("f32[6,3]")) == S("f32[6,3]")
    # XLA's InferAllGatherStartShape: (operand(s), result(s)); -done takes element 1
    start = infer_shape("all-gather-start", [S("f32[2]"), S("s32[3]")], {"dimensions": (0,)},
                        shape=S("((f32[2], s32[3]), (f32[8], s32[12]))"))
    assert start == S("((f32[2], s32[3]), (f32[8], s32[12]))")
    assert infer_shape("all-gather-start", [S("u32[1,8,4]")], {"dimensions": (0,),
                       "replica_groups": G([list(range(8))])}) == S("(u32[1,8,4], u32[8,8,4])")
    assert infer_shape("all-gather-done", [S("(f32[2], f32[8])")], {}) == S("f32[8]")


def test_reduce_scatter_and_all_to_all_shapes():
    attrs = {"dimensions": (0,), "replica_groups": G([[0, 1]]), "to_apply": reducer()}
    assert infer_shape("reduce-scatter", [S("f32[8,3]")], attrs) == S("f32[4,3]")
    assert infer_shape("reduce-scatter", [S("f32[8]")], {"dimensions": (0,), "to_apply": reducer()},
                       shape=S("f32[2]")) == S("f32[2]")
    # array form: the operand's shape; tuple form: a tuple of the operands
    assert infer_shape("all-to-all", [S("f32[4,16]")], {"dimensions": (1,), "replica_groups": G([[0, 1, 2, 3]])}) \
        == S("f32[4,16]")
    assert infer_shape("all-to-all", [S("f32[3]")] * 2, {"replica_groups": G([[0, 1]])}) == S("(f32[3], f32[3])")


def test_permute_and_device_id_shapes():
    pairs = {"source_target_pairs": ((0, 1), (1, 0))}
    assert infer_shape("collective-permute", [S("f32[4]")], pairs) == S("f32[4]")
    assert infer_shape("collective-permute", [S("f32[4]"), S("s8[2]")], pairs) == S("(f32[4], s8[2])")
    # XLA's CreateCollectivePermuteStart: (operand, result, u32[], u32[])
    assert infer_shape("collective-permute-start", [S("f32[4]")], pairs) == S("(f32[4], f32[4], u32[], u32[])")
    assert infer_shape("collective-permute-done", [S("(f32[4], f32[4], u32[], u32[])")], {}) == S("f32[4]")
    assert infer_shape("replica-id", [], {}) == S("u32[]")
    assert infer_shape("partition-id", [], {}) == S("u32[]")


def test_send_recv_shapes():
    tok = S("token[]")
    assert infer_shape("send", [S("f32[4]"), tok], {"channel_id": 1}) == S("(f32[4], u32[], token[])")
    assert infer_shape("send-done", [S("(f32[4], u32[], token[])")], {}) == tok
    assert "recv" in RESULT_SHAPE_GIVEN
    assert infer_shape("recv", [tok], {}, shape=S("(f32[4], u32[], token[])")) == S("(f32[4], u32[], token[])")
    assert infer_shape("recv-done", [S("(f32[4], u32[], token[])")], {}) == S("(f32[4], token[])")
    assert infer_shape("after-all", [tok, tok], {}) == tok


@pytest.mark.parametrize("opcode, shapes, attrs, shape, message", [
    ("all-gather", ["f32[2,3]"], {"dimensions": (2,), "replica_groups": G([[0, 1]])}, None,
     r"all-gather: all-gather dimension 2 is out of range for operand 0 f32\[2,3\]\{1,0\} of rank 2"),
    ("all-gather", ["f32[2,3]"], {"dimensions": (0,)}, None,
     "shard count is not known from the replica groups"),
    ("all-gather", ["f32[2,3]"], {"dimensions": (0,), "replica_groups": G([[0, 1]])}, "f32[6,3]",
     r"the result has 3 shard\(s\) along dimension 0 but each replica group has 2 device\(s\)"),
    ("all-gather", ["f32[2,3]"], {"dimensions": (0, 1)}, "f32[4,3]", "must name exactly one"),
    ("reduce-scatter", ["f32[5]"], {"dimensions": (0,), "replica_groups": G([[0, 1]]), "to_apply": reducer()},
     None, r"reduce-scatter: scatter dimension 0 of operand 0 f32\[5\]\{0\} has size 5, which is not divisible by "
     r"the shard count 2"),
    ("all-to-all", ["f32[4,6]"], {"dimensions": (1,), "replica_groups": G([[0, 1, 2, 3]])}, None,
     r"all-to-all: split dimension 1 of f32\[4,6\]\{1,0\} has size 6, which is not divisible by the split count 4"),
    ("all-to-all", ["f32[4]", "f32[5]"], {}, None, "must have one shape"),
    ("all-to-all", ["f32[4]"] * 3, {"replica_groups": G([[0, 1]])}, None, r"2 device\(s\), 3 operand\(s\)"),
    ("all-to-all", ["f32[4]", "f32[4]"], {"dimensions": (0,)}, None, "takes one operand"),
    ("all-reduce", ["f32[2]"], {"to_apply": "int"}, None, "to_apply must be a computation"),
    ("all-reduce", ["(f32[2])"], {}, None, "must be an array"),
    ("all-reduce", ["f32[2]"], {"use_global_device_ids": True}, None,
     "use_global_device_ids=true needs a channel_id"),
    ("all-reduce", ["f32[2]"], {"replica_groups": G([[0, 1], [1, 2]])}, None, "id 1 is repeated"),
    ("all-reduce", ["f32[2]"], {"replica_groups": G([[0, 2]])}, None, "do not name id 1"),
    ("all-reduce", ["f32[2]"], {"replica_groups": G([[0], []])}, None, "empty group"),
    ("all-reduce", ["f32[2]"], {"channel_id": 1, "use_global_device_ids": True}, None,
     "replica groups must be given"),
    ("all-gather", ["f32[2]"], {"dimensions": (0,), "replica_groups": G([[0], [1, 2]])}, "f32[2]",
     "must all have the same size"),
    ("collective-permute", ["f32[2]"], {"source_target_pairs": ((0, 1), (2, 1))}, None,
     "target 1 appears more than once"),
    ("collective-permute", ["f32[2]"], {"source_target_pairs": ((0, 1), (0, 2))}, None,
     "source 0 appears more than once"),
    ("send", ["f32[2]", "f32[2]"], {}, None, r"operand 1 must be a token, got f32\[2\]"),
    ("recv", ["token[]"], {}, "(f32[2], s32[], token[])", "must be \\(data, u32\\[\\], token\\[\\]\\)"),
    ("all-gather-done", ["f32[2]"], {}, None, "must be the tuple a all-gather-start returns"),
    ("replica-id", ["f32[2]"], {}, None, r"takes 0 operand\(s\), got 1"),
])
def test_shape_errors(opcode, shapes, attrs, shape, message):
    with pytest.raises(ShapeError, match=message) as e:
        infer_shape(opcode, [S(s) for s in shapes], attrs, shape=None if shape is None else S(shape))
    assert str(e.value).startswith(f"{opcode}: ")
    assert "operand shapes:" in str(e.value)


def test_reducer_signature_errors():
    with pytest.raises(ShapeError, match=r"reducer add_f32 must have the signature \(s32\[\], s32\[\]\) -> s32\[\]"):
        infer_shape("all-reduce", [S("s32[2]")], {"to_apply": reducer("f32")})
    with pytest.raises(ShapeError, match="reducer add_f32 must have the signature"):
        infer_shape("reduce-scatter", [S("s32[4]")], {"to_apply": reducer("f32"), "dimensions": (0,),
                                                      "replica_groups": G([[0, 1]])})


def test_in_place_collective_permute_is_refused_by_name():
    with pytest.raises(UnsupportedError, match="collective-permute"):
        infer_shape("collective-permute", [S("f32[2]")] * 4, {"slice_sizes": "{{1}}"})


def test_the_verifier_checks_collectives():
    text = """HloModule m, replica_count=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[4] parameter(0)
  ROOT ag = f32[12] all-gather(p), replica_groups={{0,1}}, dimensions={0}
}
"""
    with pytest.raises(ShapeError, match=r"instruction 'ag' \(all-gather\).*3 shard\(s\)"):
        verify(xlac.parse_hlo(text))
    verify(xlac.parse_hlo(text.replace("f32[12]", "f32[8]")))


@pytest.mark.parametrize("header, body, error, message", [
    ("replica_count=4", "ROOT ar = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=add",
     "VerifierError", r"replica groups \{\{0,1\}\} do not name every one of the module's 4 replica\(s\)"),
    ("replica_count=2", "ROOT ar = f32[4] all-reduce(p), replica_groups={{0,1,2}}, to_apply=add",
     "VerifierError", "name replica 2, but the module runs 2 replica"),
    ("replica_count=4", "ROOT ag = f32[8] all-gather(p), replica_groups={}, dimensions={0}",
     "ShapeError", r"f32\[8\].* along dimension 0 is not .* the 4 devices of each replica group"),
    # cross-replica-and-partition: a group is a replica's 2 partitions
    ("replica_count=2, num_partitions=2", "ROOT ag = f32[16] all-gather(p), channel_id=1, "
     "replica_groups={{0},{1}}, dimensions={0}", "ShapeError", "the 2 devices"),
    ("replica_count=3", "ROOT a2a = f32[4] all-to-all(p), replica_groups={}, dimensions={0}",
     "ShapeError", r"split dimension 0 of f32\[4\].* is not divisible by the 3 devices"),
    ("replica_count=2", "ROOT cp = f32[4] collective-permute(p), source_target_pairs={{0,2}}",
     "VerifierError", "names replica 2"),
])
def test_the_verifier_checks_groups_against_the_device_counts(header, body, error, message):
    from xlac.hlo.verifier import VerifierError
    text = f"""HloModule m, {header}

add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

ENTRY e {{
  p = f32[4] parameter(0)
  {body}
}}
"""
    with pytest.raises({"VerifierError": VerifierError, "ShapeError": ShapeError}[error], match=message):
        verify(xlac.parse_hlo(text))


def test_the_verifier_accepts_xla_modules_of_several_devices():
    text = """HloModule jit_f, replica_count=1, num_partitions=4

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[4] parameter(0)
  ar = f32[4] all-reduce(p), channel_id=1, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=add
  ag = f32[8] all-gather(p), channel_id=2, replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}, use_global_device_ids=true
  a2a = f32[4] all-to-all(p), channel_id=3, replica_groups={{0,1,2,3}}, dimensions={0}
  cp = f32[4] collective-permute(p), channel_id=4, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  ROOT t = (f32[4], f32[8], f32[4], f32[4]) tuple(ar, ag, a2a, cp)
}
"""
    verify(xlac.parse_hlo(text))
