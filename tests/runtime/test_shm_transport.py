"""The shared-memory collective transport (``xlac/runtime/shm_transport.py``):
every collective against numpy, slot-sized pieces, groups, and failures
(a device that fails, dies, never comes, or runs another collective)."""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from xlac.runtime.shm_transport import CollectiveError, Segment, ShmTransport


def _run_threads(n, body, slot_bytes=1 << 12, timeout=10.0, **options):
    """Run ``body(transport, device)`` on ``n`` devices (threads) of one segment;
    returns the results by device, re-raising the first error."""
    seg = Segment.create(n, slot_bytes)
    results, errors = [None] * n, [None] * n

    def run(d):
        try:
            results[d] = body(ShmTransport(seg, d, timeout=timeout, **options), d)
        except BaseException as e:  # noqa: BLE001
            errors[d] = e
            seg.abort(d, f"{type(e).__name__}: {e}")
    threads = [threading.Thread(target=run, args=(d,)) for d in range(n)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        seg.close()
    return results, errors


def _data(d, n=1000, dtype=np.float32):
    return (np.arange(n) * (d + 1) % 17).astype(dtype)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("reduction, ref", [("sum", np.sum), ("max", np.max), ("min", np.min),
                                            ("product", np.prod)])
def test_all_reduce_in_pieces_matches_numpy(n, reduction, ref):
    # 1000 f32 = 4000 bytes through slot halves of 2 KiB: two pieces.
    def body(t, d):
        out = np.empty(1000, np.float32)
        t.all_reduce(_data(d), out, reduction, tuple(range(n)))
        return out
    results, errors = _run_threads(n, body)
    assert errors == [None] * n
    want = ref(np.stack([_data(d) for d in range(n)]), axis=0)
    for r in results:
        np.testing.assert_array_equal(r, want)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype, reduction", [(np.float32, "sum"), (np.float64, "max"), (np.int32, "min"),
                                              (np.int8, "sum"), (np.float16, "sum"), (np.uint16, "or"),
                                              (np.complex64, "product")])
def test_native_split_all_reduce_matches_numpy(n, dtype, reduction):
    """Bigger than ``small_bytes``, within half a slot: the native two-round
    all-reduce (member k reduces chunk k); 1001 elements do not split evenly."""
    ref = {"sum": np.add, "max": np.maximum, "min": np.minimum, "or": np.bitwise_or,
           "product": np.multiply}[reduction].reduce

    def body(t, d):
        out = np.empty(1001, dtype)
        for _ in range(3):          # slot halves and rounds come back
            t.all_reduce(_data(d, 1001, dtype), out, reduction, tuple(range(n)))
        return out
    results, errors = _run_threads(n, body, slot_bytes=1 << 15, small_bytes=64)
    assert errors == [None] * n
    want = ref(np.stack([_data(d, 1001, dtype) for d in range(n)]), axis=0)
    for d in range(n):
        np.testing.assert_array_equal(results[d], want)


def test_spec_examples_all_gather_and_all_reduce():
    xs = [np.array([1.0, 2.5], np.float32), np.array([3.0, 5.25], np.float32)]

    def body(t, d):
        g = np.empty(4, np.float32)
        t.all_gather(xs[d], g, (0, 1))
        s = np.empty(2, np.float32)
        t.all_reduce(xs[d], s, "sum", (0, 1))
        return g, s
    results, errors = _run_threads(2, body)
    assert errors == [None, None]
    for g, s in results:
        np.testing.assert_array_equal(g, [1.0, 2.5, 3.0, 5.25])
        np.testing.assert_array_equal(s, [4.0, 7.75])


def test_groups_and_integer_and_pred_reductions():
    groups = {0: (0, 2), 2: (0, 2), 1: (1, 3), 3: (1, 3)}

    def body(t, d):
        out = np.empty(300, np.int32)
        t.all_reduce(_data(d, 300, np.int32), out, "sum", groups[d])
        flags = np.empty(5, np.bool_)
        t.all_reduce(np.array([d % 2 == 0] * 5), flags, "and", groups[d])
        return out, flags
    results, errors = _run_threads(4, body)
    assert errors == [None] * 4
    for d, (out, flags) in enumerate(results):
        g = groups[d]
        np.testing.assert_array_equal(out, _data(g[0], 300, np.int32) + _data(g[1], 300, np.int32))
        assert flags.all() == (d % 2 == 0)


@pytest.mark.parametrize("n", [2, 4])
def test_reduce_scatter_all_to_all_and_permute(n):
    pairs = tuple((i, i + 1) for i in range(n - 1))       # device 0 has no source

    def body(t, d):
        x = _data(d, 600 * n)
        rs = np.empty(600, np.float32)
        t.reduce_scatter(x, rs, "sum", tuple(range(n)))
        a2a = np.empty(600 * n, np.float32)
        t.all_to_all(x, a2a, tuple(range(n)))
        p = np.empty(600 * n, np.float32)
        t.permute(x, p, pairs)
        return rs, a2a, p
    results, errors = _run_threads(n, body)
    assert errors == [None] * n
    xs = [_data(d, 600 * n) for d in range(n)]
    total = sum(xs)
    for d, (rs, a2a, p) in enumerate(results):
        np.testing.assert_array_equal(rs, total[600 * d:600 * (d + 1)])
        np.testing.assert_array_equal(a2a, np.concatenate([xs[k][600 * d:600 * (d + 1)] for k in range(n)]))
        np.testing.assert_array_equal(p, xs[d - 1] if d else np.zeros_like(p))


def test_empty_buffers_still_meet():
    def body(t, d):
        out = np.empty(0, np.float32)
        t.all_reduce(np.empty(0, np.float32), out, "sum", (0, 1))
        t.all_gather(np.empty(0, np.float32), out, (0, 1))
        return t.round
    results, errors = _run_threads(2, body)
    assert errors == [None, None] and results[0] == results[1]


def test_a_transport_restarts_after_a_reset_in_place():
    """A device pool resets its segment before every call; a device's transport
    then restarts from round 0 keeping its state's address and services, so the
    service bound to it (compiled code) serves the next call too."""
    seg = Segment.create(2, 1 << 12)
    transports = [ShmTransport(seg, d, timeout=10) for d in range(2)]
    for t in transports:
        t.state.fallback, t.state.fail = 1234, 5678         # what make_native_service sets
    addresses = [ctypes.addressof(t.state) for t in transports]
    sync = threading.Barrier(2)
    outs = [[None, None], [None, None]]

    def device(d):
        t = transports[d]
        for call in range(2):
            out = np.empty(3, np.float32)
            t.all_reduce(np.full(3, d + 1 + call, np.float32), out, "sum", (0, 1))
            outs[d][call] = out
            sync.wait()
            if d == 0:
                seg.reset()                     # the owner, between calls
            sync.wait()
            t.restart()
            assert t.round == 0
    try:
        threads = [threading.Thread(target=device, args=(d,)) for d in range(2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(30)
    finally:
        seg.close()
    assert [o.tolist() for o in outs[0]] == [[3, 3, 3], [5, 5, 5]] and outs[1][1].tolist() == [5, 5, 5]
    assert [ctypes.addressof(t.state) for t in transports] == addresses
    assert all((t.state.fallback, t.state.fail) == (1234, 5678) for t in transports)


def test_a_failing_device_makes_the_others_raise_naming_it():
    def body(t, d):
        if d == 1:
            raise ValueError("boom on purpose")
        t.all_reduce(np.ones(4, np.float32), np.empty(4, np.float32), "sum", (0, 1, 2))
    _, errors = _run_threads(3, body)
    assert isinstance(errors[1], ValueError)
    for d in (0, 2):
        assert isinstance(errors[d], CollectiveError)
        assert "device 1 failed: ValueError: boom on purpose" in str(errors[d])


def test_a_device_that_never_comes_times_out_naming_it():
    def body(t, d):
        if d == 0:
            t.all_reduce(np.ones(4, np.float32), np.empty(4, np.float32), "sum", (0, 1), what="all-reduce ar.1")
    start = time.monotonic()
    _, errors = _run_threads(2, body, timeout=0.5)
    assert time.monotonic() - start < 10
    assert isinstance(errors[0], CollectiveError)
    assert "all-reduce ar.1: device(s) [1] did not reach it within 0.5 s" in str(errors[0])


def test_mismatched_collectives_are_reported():
    def body(t, d):
        if d == 0:
            t.all_reduce(np.ones(4, np.float32), np.empty(4, np.float32), "sum", (0, 1), what="all-reduce a")
        else:
            t.all_gather(np.ones(2, np.float32), np.empty(4, np.float32), (0, 1), what="all-gather b")
    _, errors = _run_threads(2, body)
    assert all(isinstance(e, CollectiveError) for e in errors)
    assert "different collective" in str(errors[0]) and "all-reduce a" in str(errors[0])


_CHILD = textwrap.dedent("""
    import sys, time
    import numpy as np
    import xlac.codegen.runtime_code  # the native protocol
    from xlac.runtime.shm_transport import Segment, ShmTransport
    seg = Segment.attach(sys.argv[1])
    d = int(sys.argv[2])
    t = ShmTransport(seg, d, timeout=float(sys.argv[3]))
    out = np.empty(1 << 16, np.float64)
    t.all_reduce(np.full(1 << 16, d + 1.0), out, "sum", (0, 1, 2))
    assert (out == 6.0).all(), out[:4]
    if d == 2:
        time.sleep(60)          # killed here by the test
    t.all_reduce(np.full(4, 1.0), np.empty(4), "sum", (0, 1, 2), what="all-reduce second")
""")


def test_processes_and_a_killed_device(tmp_path):
    """Three processes: the first all-reduce works; then device 2 is killed -9
    before the second: the parent marks it failed and the others raise at once;
    no segment is left in /dev/shm."""
    script = tmp_path / "child.py"
    script.write_text(_CHILD, encoding="utf-8")
    seg = Segment.create(3, 1 << 16)
    try:
        procs = [subprocess.Popen([sys.executable, str(script), seg.name, str(d), "30"],
                                  stderr=subprocess.PIPE, encoding="utf-8") for d in range(3)]
        deadline = time.monotonic() + 60
        while seg.controls[2, 0] < 32 and time.monotonic() < deadline:   # 16 pieces x 2 rounds: done
            time.sleep(0.01)
        time.sleep(0.2)
        procs[2].send_signal(signal.SIGKILL)
        procs[2].wait()
        seg.abort(2, "the process died (signal 9)")
        start = time.monotonic()
        for p in procs[:2]:
            _, err = p.communicate(timeout=20)
            assert p.returncode != 0
            assert "device 2 failed: the process died (signal 9)" in err
        assert time.monotonic() - start < 10
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        seg.close()
    assert not os.path.exists(os.path.join("/dev/shm", seg.name))
