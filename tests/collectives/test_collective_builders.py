"""xlac.ops builders of the collectives: the HLO they build, as XlaBuilder
would, and their errors."""
import ast
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.errors import ShapeError
from xlac.hlo.collectives import ReplicaGroups


def add_computation(t="f32"):
    sub = xlac.XlaBuilder(f"add_{t}")
    a = ops.parameter(sub, 0, xlac.shape(f"{t}[]"), "a")
    b = ops.parameter(sub, 1, xlac.shape(f"{t}[]"), "b")
    return sub.build(ops.add(a, b))


def param(shape="f32[4,6]", name="x"):
    b = xlac.XlaBuilder("c")
    return b, ops.parameter(b, 0, xlac.shape(shape), name)


def lines(comp):
    return comp.as_hlo_text().splitlines()


def test_all_reduce_builds_xlas_text():
    b, x = param()
    y = ops.all_reduce(x, add_computation(), replica_groups=[[0, 1], [2, 3]], channel_id=3,
                       use_global_device_ids=True)
    text = b.build(y).as_hlo_text()
    assert ("all-reduce(x), channel_id=3, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, "
            "to_apply=add_f32") in text
    assert y.shape == xlac.shape("f32[4,6]")
    xlac.parse_hlo(text)


def test_all_reduce_of_a_tuple_and_of_a_list():
    b, x = param("f32[2]")
    y = ops.neg(x)
    t = ops.tuple(b, [x, y])
    r = ops.all_reduce(t, add_computation())
    assert r.shape == xlac.shape("(f32[2], f32[2])")
    r2 = ops.all_reduce([x, y], add_computation(), replica_groups=ReplicaGroups.iota(1, 2))
    text = b.build(r2).as_hlo_text()
    assert "replica_groups=[1,2]<=[2]" in text
    out = xlac.evaluate_replicated(b.build(r2), [[np.ones(2, np.float32)], [np.full(2, 2, np.float32)]])
    np.testing.assert_array_equal(out[0][1], np.full(2, -3, np.float32))


def test_cross_replica_sum():
    b, x = param("s32[3]")
    r = ops.cross_replica_sum(x, replica_groups=[[0, 1]])
    out = xlac.evaluate_replicated(b.build(r), [[np.array([1, 2, 3], np.int32)], [np.array([4, 5, 6], np.int32)]])
    np.testing.assert_array_equal(out[1], np.array([5, 7, 9], np.int32))
    b, p = param("pred[2]")
    assert "or(" in b.build(ops.cross_replica_sum(p)).as_hlo_text()


def test_all_gather_and_reduce_scatter():
    b, x = param()
    g = ops.all_gather(x, 1, 2, replica_groups=[[0, 1]])
    assert g.shape == xlac.shape("f32[4,12]")
    assert "all-gather(x), replica_groups={{0,1}}, dimensions={1}" in b.build(g).as_hlo_text()
    g2 = ops.all_gather(x, 0, 3)                          # empty groups: the shard count says it
    assert g2.shape == xlac.shape("f32[12,6]")
    s = ops.reduce_scatter(x, add_computation(), 1, 3)
    assert s.shape == xlac.shape("f32[4,2]")
    assert "reduce-scatter(x), replica_groups={}, dimensions={1}, to_apply=add_f32" in b.build(s).as_hlo_text()


@pytest.mark.parametrize("call, message", [
    (lambda x: ops.all_gather(x, 2, 2), r"all_gather: all_gather_dimension 2 is out of range for rank 2"),
    (lambda x: ops.all_gather(x, 0, 3, replica_groups=[[0, 1]]),
     r"all-gather: the result has 3 shard\(s\) along dimension 0 but each replica group has 2 device\(s\)"),
    (lambda x: ops.reduce_scatter(x, add_computation(), 0, 3),
     r"reduce_scatter: scatter dimension 0 has size 4, which is not divisible by shard_count 3"),
    (lambda x: ops.reduce_scatter(x, add_computation("s32"), 0, 2),
     r"reducer add_s32.* must have the signature \(f32\[\], f32\[\]\) -> f32\[\]"),
    (lambda x: ops.all_to_all(x, 1, 0, 4), r"all_to_all: split_dimension 1 has size 6, which is not divisible by "
                                           r"split_count 4"),
    (lambda x: ops.all_to_all(x, 0, 5, 2), "concat_dimension 5 is out of range"),
    (lambda x: ops.all_reduce(x, add_computation(), use_global_device_ids=True),
     "use_global_device_ids=true needs a channel_id"),
    (lambda x: ops.all_reduce(x, add_computation(), replica_groups=[[0, 1], [1]]), "id 1 is repeated"),
    (lambda x: ops.collective_permute(x, [(0, 1), (1, 1)]), "target 1 appears more than once"),
])
def test_builder_shape_errors(call, message):
    _, x = param()
    with pytest.raises(ShapeError, match=message):
        call(x)


def test_builder_argument_errors():
    _, x = param()
    with pytest.raises(TypeError, match="all_gather: shard_count must be an integer"):
        ops.all_gather(x, 0, "two")
    with pytest.raises(ValueError, match="all_gather: shard_count must be >= 1"):
        ops.all_gather(x, 0, 0)
    with pytest.raises(TypeError, match="replica_groups must be a list of lists of ints"):
        ops.all_reduce(x, add_computation(), replica_groups=[[0, "1"]])
    with pytest.raises(TypeError, match="source_target_pairs must be a sequence"):
        ops.collective_permute(x, [(0, 1, 2)])
    with pytest.raises(TypeError, match="replica_id: builder must be an XlaBuilder"):
        ops.replica_id(x)


def test_all_to_all_forms():
    b, x = param("f32[4,4]")
    same = ops.all_to_all(x, 0, 0, 2)
    assert same.shape == xlac.shape("f32[4,4]")
    t = ops.all_to_all_tuple([x, x], replica_groups=[[0, 1]], channel_id=1)
    assert t.shape == xlac.shape("(f32[4,4], f32[4,4])")
    assert "all-to-all(x, x), channel_id=1, replica_groups={{0,1}}" in b.build(t).as_hlo_text()
    with pytest.raises(ShapeError, match=r"2 device\(s\), 3 operand\(s\)"):
        ops.all_to_all_tuple([x, x, x], replica_groups=[[0, 1]])


def test_permute_ids_and_tokens():
    b, x = param("f32[2]")
    cp = ops.collective_permute(x, [(0, 1), (1, 0)], channel_id=2)
    r, p = ops.replica_id(b), ops.partition_id(b)
    tok = ops.after_all(b, [ops.create_token(b)])
    text = b.build(ops.tuple(b, [cp, r, p, tok])).as_hlo_text()
    assert "collective-permute(x), channel_id=2, source_target_pairs={{0,1},{1,0}}" in text
    assert "u32[] replica-id()" in text and "u32[] partition-id()" in text
    assert r.shape == xlac.shape("u32[]")


def test_builder_docstrings_name_the_spec_section():
    for fn, section in [(ops.all_reduce, "AllReduce"), (ops.all_gather, "AllGather"),
                        (ops.reduce_scatter, "ReduceScatter"), (ops.all_to_all, "AllToAll"),
                        (ops.collective_permute, "CollectivePermute"), (ops.cross_replica_sum, "CrossReplicaSum"),
                        (ops.replica_id, "ReplicaId"), (ops.send, "Send"), (ops.recv_with_token, "Recv")]:
        assert f"*{section}*" in fn.__doc__, fn.__name__
    for opcode in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute", "replica-id",
                   "partition-id", "send", "send-done", "recv", "recv-done"):
        assert ops.BUILDERS.get(opcode), opcode


def test_the_replicated_evaluator_stays_in_the_evaluator_layer():
    # import-linter checks xlac.evaluator; this module is checked here: it may
    # import the evaluator, xlac.hlo, xlac.shape and xlac.errors only.
    path = Path(xlac.__file__).parent / "evaluator_replicated.py"
    allowed = {"evaluator", "hlo", "shape", "errors"}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            top = (node.module or "").split(".")[0]
            assert top in allowed, f"evaluator_replicated imports .{node.module}"
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and getattr(node, "level", 0) == 0:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            assert not any(n.startswith("xlac") for n in names), names
