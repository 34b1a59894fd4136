"""The collective service callback (``xlac/runtime/collective_service.py``):
an ``xlac_collective_op`` as generated code fills it, served over the
shared-memory transport."""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from xlac.runtime import abi, threads
from xlac.runtime.collective_service import make_service
from xlac.runtime.shm_transport import Segment, ShmTransport
from xlac.shape import F32, S32


def _op(kind, pt, x, out, groups=None, pairs=None, reduction="none", name="c.1"):
    op = abi.CollectiveOp()
    op.kind = abi.COLLECTIVE_KINDS[kind]
    op.element_type = abi.ELEMENT_TYPE_NUMBERS[pt]
    op.reduction = abi.REDUCTIONS[reduction]
    op.dimension = -1
    op.input, op.input_bytes = x.ctypes.data, x.nbytes
    op.output, op.output_bytes = out.ctypes.data, out.nbytes
    op.instruction = name.encode()
    keep = []
    if groups is not None:
        g = np.ascontiguousarray(groups, np.int64)
        keep.append(g)
        op.num_groups, op.group_size = g.shape
        op.groups = g.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
    if pairs is not None:
        p = np.ascontiguousarray(pairs, np.int64)
        keep.append(p)
        op.num_pairs = len(p)
        op.pairs = p.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
    return op, keep


def _serve(n, body):
    seg = Segment.create(n, 1 << 14)
    out, status = [None] * n, [None] * n

    def run(d):
        fn = make_service(ShmTransport(seg, d, timeout=5), d, n, on_failure=lambda m: seg.abort(d, m))
        call = ctypes.cast(fn, ctypes.c_void_p).value
        callee = abi.COLLECTIVE(call)
        out[d], status[d] = body(d, lambda op: callee(None, ctypes.byref(op)))
        out[d] = (out[d], threads.take_error())
    ts = [threading.Thread(target=run, args=(d,)) for d in range(n)]
    try:
        for t in ts:
            t.start()
        for t in ts:
            t.join(30)
    finally:
        seg.close()
    return out, status


def test_all_reduce_in_groups_and_permute_through_the_callback():
    groups = [[0, 2], [1, 3]]

    def body(d, call):
        x = np.arange(8, dtype=np.int32) * (d + 1)
        r = np.empty_like(x)
        op, keep = _op("all-reduce", S32, x, r, groups=groups, reduction="sum")
        s1 = call(op)
        y = np.full(3, float(d), np.float32)
        p = np.empty_like(y)
        op2, keep2 = _op("collective-permute", F32, y, p, pairs=[[0, 1], [1, 2], [2, 3]])
        s2 = call(op2)
        return (r, p), (s1, s2)
    out, status = _serve(4, body)
    assert status == [(abi.XLAC_OK, abi.XLAC_OK)] * 4
    for d, ((r, p), err) in enumerate(out):
        assert err is None
        partner = {0: 2, 2: 0, 1: 3, 3: 1}[d]
        np.testing.assert_array_equal(r, np.arange(8) * (d + 1 + partner + 1))
        np.testing.assert_array_equal(p, np.full(3, d - 1.0) if d else np.zeros(3))


def test_a_failure_is_recorded_and_returned_as_a_status():
    def body(d, call):
        x = np.ones(4, np.float32)
        r = np.empty(4 if d == 0 else 8, np.float32)     # device 1 asks for a gather: a mismatch
        op, keep = _op("all-reduce" if d == 0 else "all-gather", F32, x, r, reduction="sum" if d == 0 else "none",
                       name=f"c.{d}")
        return r, call(op)
    out, status = _serve(2, body)
    assert status == [abi.XLAC_ERROR_SERVICE_FAILED] * 2
    for _, err in out:
        assert "different collective" in str(err) or "failed" in str(err)
