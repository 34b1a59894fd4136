"""Infeed and outfeed (issue 15, item 7) through all five stages.

A linear-regression SGD loop in a ``while`` reads (x, y) batches from the
infeed and writes each iteration's loss to the outfeed; it runs compiled (the
batches put before the call or by another thread while it waits) and through
the evaluator, and its final weights match numpy's.  Then tuple infeeds in
other layouts, the errors (a wrong value put, a timeout, a value that does
not fit the infeed that runs), Ctrl-C while a call waits, the text round trip
and the shape rules.  The AOT path (a C service) is in tests/test_aot.py.
"""
from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.errors import FeedError, FeedTimeoutError
from xlac.runtime import interrupt

F32 = xlac.F32
D, B, STEPS, LR = 3, 8, 25, 0.1


# ---------------------------------------------------------------------------------------
# The training loop
# ---------------------------------------------------------------------------------------

def _add(pt=F32) -> xlac.XlaComputation:
    b = xlac.XlaBuilder("add")
    ops.add(ops.parameter(b, 0, xlac.Shape(pt, ()), "a"), ops.parameter(b, 1, xlac.Shape(pt, ()), "b"))
    return b.build()


STATE = xlac.shape(f"(s32[], f32[{D}], f32[], token[])")


def _condition() -> xlac.XlaComputation:
    b = xlac.XlaBuilder("cond")
    s = ops.parameter(b, 0, STATE, "s")
    ops.lt(ops.get_tuple_element(s, 0), ops.constant(b, np.int32(STEPS)))
    return b.build()


def _body() -> xlac.XlaComputation:
    """One SGD step on a batch read from the infeed; the loss goes to the outfeed."""
    b = xlac.XlaBuilder("body")
    s = ops.parameter(b, 0, STATE, "s")
    i, w, bias, token = (ops.get_tuple_element(s, k) for k in range(4))
    got = ops.infeed_with_token(token, f"(f32[{B},{D}], f32[{B}])", config="batch")
    x, y = (ops.get_tuple_element(ops.get_tuple_element(got, 0), k) for k in range(2))
    err = ops.dot(x, w) + ops.broadcast(bias, [B]) - y                        # f32[B]
    zero = ops.constant(b, np.float32(0))
    loss = ops.reduce(err * err, zero, _add(), [0]) / np.float32(B)
    scale = np.float32(2 * LR / B)
    grad_w = ops.dot_general(err, x, (((0,), (0,)), ((), ())))                # f32[D]
    grad_b = ops.reduce(err, zero, _add(), [0])
    done = ops.outfeed(loss, ops.get_tuple_element(got, 1), config="loss")
    ops.tuple(b, [i + np.int32(1), w - ops.broadcast(ops.constant(b, scale), [D]) * grad_w,
                  bias - scale * grad_b, done])
    return b.build()


def training_loop() -> xlac.XlaComputation:
    b = xlac.XlaBuilder("sgd")
    w0 = ops.parameter(b, 0, f"f32[{D}]", "w0")
    b0 = ops.parameter(b, 1, "f32[]", "b0")
    init = ops.tuple(b, [ops.constant(b, np.int32(0)), w0, b0, ops.after_all(b)])
    final = ops.while_loop(_condition(), _body(), init)
    ops.tuple(b, [ops.get_tuple_element(final, 1), ops.get_tuple_element(final, 2)])
    return b.build()


def batches(seed: int = 0):
    rng = np.random.default_rng(seed)
    true_w, true_b = np.array([1.5, -2.0, 0.5], np.float32), np.float32(0.25)
    out = []
    for _ in range(STEPS):
        x = rng.standard_normal((B, D)).astype(np.float32)
        y = (x @ true_w + true_b + 0.01 * rng.standard_normal(B)).astype(np.float32)
        out.append((x, y))
    return out


def numpy_sgd(data, w, b):
    w, b, losses = w.astype(np.float64), float(b), []
    for x, y in data:
        err = x @ w + b - y
        losses.append(np.mean(err * err))
        w = w - 2 * LR / B * (err @ x)
        b = b - 2 * LR / B * err.sum()
    return w, b, np.array(losses)


W0, B0 = np.zeros(D, np.float32), np.float32(0)


@pytest.fixture(scope="module")
def sgd():
    return xlac.jit(training_loop())


def _drain(queue) -> list:
    return [queue.get(timeout=0) for _ in range(len(queue))]


def test_training_loop_reads_batches_from_the_infeed(sgd):
    data = batches()
    for batch in data:
        sgd.infeed.put(batch)
    w, b = sgd(W0, B0)
    ref_w, ref_b, ref_losses = numpy_sgd(data, W0, B0)
    np.testing.assert_allclose(w, ref_w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b, ref_b, rtol=1e-4, atol=1e-5)
    losses = _drain(sgd.outfeed)
    assert len(losses) == STEPS and all(l.dtype == np.float32 and l.shape == () for l in losses)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-4, atol=1e-6)
    assert losses[-1] < losses[0] / 10                      # it learned
    assert sgd.infeed.empty() and sgd.outfeed.empty()


def test_training_loop_waits_for_a_producer_thread(sgd):
    data = batches(1)

    def produce():
        for batch in data:
            time.sleep(0.002)
            sgd.infeed.put(batch)

    producer = threading.Thread(target=produce)
    producer.start()
    w, b = sgd(W0, B0)
    producer.join()
    ref_w, ref_b, ref_losses = numpy_sgd(data, W0, B0)
    np.testing.assert_allclose(w, ref_w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_drain(sgd.outfeed), ref_losses, rtol=1e-4, atol=1e-6)


def test_training_loop_through_the_evaluator():
    data = batches(2)
    losses = []
    w, b = xlac.evaluate(training_loop(), W0, B0, infeed=data, outfeed=losses)
    ref_w, ref_b, ref_losses = numpy_sgd(data, W0, B0)
    np.testing.assert_allclose(w, ref_w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b, ref_b, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-4, atol=1e-6)


def test_evaluator_reads_and_writes_an_executables_queues(sgd):
    data = batches(3)
    for batch in data:
        sgd.infeed.put(batch)
    w, _ = xlac.evaluate(training_loop(), W0, B0, infeed=sgd.infeed, outfeed=sgd.outfeed)
    np.testing.assert_allclose(w, numpy_sgd(data, W0, B0)[0], rtol=1e-4, atol=1e-5)
    assert len(sgd.outfeed) == STEPS
    sgd.outfeed.clear()


def test_training_loop_text_round_trip(sgd):
    text = training_loop().as_hlo_text()
    assert 'infeed_config="batch"' in text and 'outfeed_config="loss"' in text
    assert "outfeed_shape=f32[]" in text
    module = xlac.parse_hlo(text)
    assert module.to_text() == text
    data = batches(4)
    exe = xlac.jit(text)
    for batch in data:
        exe.infeed.put(batch)
    np.testing.assert_allclose(exe(W0, B0)[0], numpy_sgd(data, W0, B0)[0], rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------------------
# Tuples, layouts, empty tuples
# ---------------------------------------------------------------------------------------

TUPLE_IO = """HloModule tuple_io
ENTRY e {
  t0 = token[] after-all()
  in = ((f32[2,3]{0,1}, s8[4], pred[2,2]{0,1}), token[]) infeed(t0), infeed_config="cfg \\"q\\""
  data = (f32[2,3]{0,1}, s8[4], pred[2,2]{0,1}) get-tuple-element(in), index=0
  t1 = token[] get-tuple-element(in), index=1
  a = f32[2,3]{0,1} get-tuple-element(data), index=0
  s = s8[4] get-tuple-element(data), index=1
  p = pred[2,2]{0,1} get-tuple-element(data), index=2
  n = f32[2,3]{0,1} negate(a)
  out = (f32[2,3]{0,1}, pred[2,2]{0,1}) tuple(n, p)
  t2 = token[] outfeed(out, t1), outfeed_shape=(f32[2,3]{1,0}, pred[2,2]{1,0})
  ROOT r = (f32[2,3], s8[4]) tuple(a, s)
}
"""


def _tuple_value():
    return (np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, -2, 3, -4], np.int8),
            np.array([[True, False], [False, True]]))


@pytest.mark.parametrize("optimize", [True, False])
def test_tuple_infeed_and_outfeed_in_other_layouts(optimize):
    exe = xlac.jit(TUPLE_IO, optimize=optimize)
    value = _tuple_value()
    exe.infeed.put(value)
    a, s = exe()
    np.testing.assert_array_equal(a, value[0])
    np.testing.assert_array_equal(s, value[1])
    n, p = exe.outfeed.get(timeout=1)
    np.testing.assert_array_equal(n, -value[0])
    np.testing.assert_array_equal(p, value[2])
    out = []
    ref = xlac.evaluate(TUPLE_IO, infeed=[value], outfeed=out)
    np.testing.assert_array_equal(ref[0], a)
    np.testing.assert_array_equal(out[0][0], n)


def test_text_round_trip_keeps_configs_and_outfeed_shape():
    module = xlac.parse_hlo(TUPLE_IO)
    text = module.to_text()
    assert 'infeed_config="cfg \\"q\\""' in text
    assert "outfeed_shape=(f32[2,3]{1,0}, pred[2,2]{1,0})" in text
    assert xlac.parse_hlo(text).to_text() == text
    outfeed = next(i for i in module.entry.instructions if i.opcode == "outfeed")
    assert outfeed.attrs["outfeed_shape"] == xlac.shape("(f32[2,3]{1,0}, pred[2,2]{1,0})")


def test_xla_text_without_layouts_or_outfeed_shape():
    text = """HloModule xla
ENTRY e {
  tok = token[] after-all()
  in = (f32[2,3], token[]) infeed(tok), infeed_config="abc"
  x = f32[2,3] get-tuple-element(in), index=0
  t1 = token[] get-tuple-element(in), index=1
  o = token[] outfeed(x, t1)
  ROOT y = f32[2,3] add(x, x)
}
"""
    exe = xlac.jit(text)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    exe.infeed.put(x)
    np.testing.assert_array_equal(exe(), 2 * x)
    np.testing.assert_array_equal(exe.outfeed.get(timeout=1), x)


def test_empty_tuple_infeed_and_outfeed_transfer_nothing():
    b = xlac.XlaBuilder("empty")
    got = ops.infeed(b, "()")
    ops.outfeed(ops.get_tuple_element(got, 0), ops.get_tuple_element(got, 1))
    x = ops.parameter(b, 0, "f32[2]", "x")
    comp = b.build(x + x)
    exe = xlac.jit(comp)
    np.testing.assert_array_equal(exe(np.ones(2, np.float32)), [2, 2])
    assert exe.outfeed.empty()
    out = []
    np.testing.assert_array_equal(xlac.evaluate(comp, np.ones(2, np.float32), outfeed=out), [2, 2])
    assert out == []


def test_unused_outfeed_runs_and_outfeeds_keep_token_order():
    b = xlac.XlaBuilder("order")
    x = ops.parameter(b, 0, "s32[]", "x")
    t = ops.outfeed(x, ops.after_all(b))
    t = ops.outfeed(x + np.int32(1), t)
    ops.outfeed(ops.tuple(b, [x + np.int32(2), ops.constant(b, np.float32(0.5))]), t)
    comp = b.build(x)
    exe = xlac.jit(comp)
    assert exe(np.int32(10)) == 10
    got = _drain(exe.outfeed)
    assert [int(np.asarray(v if not isinstance(v, tuple) else v[0])) for v in got] == [10, 11, 12]
    assert got[2][1] == np.float32(0.5)
    out = []
    xlac.evaluate(comp, np.int32(10), outfeed=out)
    assert [int(np.asarray(v if not isinstance(v, tuple) else v[0])) for v in out] == [10, 11, 12]


# ---------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------

TWO_INFEEDS = """HloModule two
ENTRY e {
  t0 = token[] after-all()
  a = (f32[2], token[]) infeed(t0)
  t1 = token[] get-tuple-element(a), index=1
  b = (s32[3], token[]) infeed(t1)
  x = f32[2] get-tuple-element(a), index=0
  y = s32[3] get-tuple-element(b), index=0
  ROOT r = (f32[2], s32[3]) tuple(x, y)
}
"""


def test_put_checks_the_value_against_the_infeed_shapes(sgd):
    good_x, good_y = batches()[0]
    with pytest.raises(ValueError, match=r"infeed .* of \(f32\[8,3\]\{1,0\}, f32\[8\]\{0\}\), element 0: "
                                         r"expected shape \(8, 3\)"):
        sgd.infeed.put((good_x[:4], good_y))
    with pytest.raises(TypeError, match=r"element 1: expected dtype float32 .* got float64"):
        sgd.infeed.put((good_x, good_y.astype(np.float64)))
    with pytest.raises(TypeError, match="expected a tuple"):
        sgd.infeed.put(good_x)
    with pytest.raises(ValueError, match="expected a tuple of 2 element"):
        sgd.infeed.put((good_x, good_y, good_y))
    assert sgd.infeed.empty()
    with pytest.raises(ValueError, match="has no infeed"):
        xlac.jit("HloModule n\nENTRY e {\n  ROOT x = f32[] parameter(0)\n}\n").infeed.put(np.float32(1))


def test_put_copies_the_value_and_takes_python_scalars():
    exe = xlac.jit(TWO_INFEEDS)
    x = np.array([1, 2], np.float32)
    exe.infeed.put(x)
    with pytest.raises(TypeError, match=r"fits none of the infeeds of module two \(infeed a of f32\[2\]\{0\}: "
                                        r"expected dtype float32 .*got int64"):
        exe.infeed.put([4, 5, 6])       # numpy makes int64 of Python ints: s32 needs int32
    exe.infeed.put(np.array([4, 5, 6], np.int32))
    x[:] = 0
    rx, ry = exe()
    np.testing.assert_array_equal(rx, [1, 2])
    np.testing.assert_array_equal(ry, [4, 5, 6])

    b = xlac.XlaBuilder("scalar")
    got = ops.get_tuple_element(ops.infeed(b, "(f32[], s32[], pred[])"), 0)
    exe = xlac.jit(b.build(got))
    exe.infeed.put((2.5, 7, True))      # Python scalars take the leaf's dtype
    assert exe() == (np.float32(2.5), np.int32(7), np.True_)
    with pytest.raises(TypeError, match=r"element 1: expected s32\[\], got Python float 7.5"):
        exe.infeed.put((2.5, 7.5, True))


def test_a_value_that_does_not_fit_the_infeed_that_runs_stays_queued():
    exe = xlac.jit(TWO_INFEEDS)
    y = np.array([4, 5, 6], np.int32)
    x = np.array([1, 2], np.float32)
    exe.infeed.put(y)                   # fits the second infeed, but the first runs first
    with pytest.raises(FeedError, match=r"infeed a of \(?f32\[2\]\{0\}\)?: the next value in exe.infeed is "
                                        r"int32\[3\]"):
        exe()
    assert len(exe.infeed) == 1
    exe.infeed.clear()
    exe.infeed.put(x)
    exe.infeed.put(y)
    rx, ry = exe()
    np.testing.assert_array_equal(rx, x)
    np.testing.assert_array_equal(ry, y)


def test_timeout_names_the_instruction_and_shape():
    exe = xlac.jit(TWO_INFEEDS)
    exe.infeed.timeout = 0.2
    exe.infeed.put(np.array([1, 2], np.float32))
    t0 = time.perf_counter()
    with pytest.raises(FeedTimeoutError, match=r"infeed b of s32\[3\]\{0\}: no value came within 0.2 s"):
        exe()
    assert time.perf_counter() - t0 < 5
    assert isinstance(FeedTimeoutError("x"), TimeoutError)
    # The executable stays usable.
    exe.infeed.put(np.array([3, 4], np.float32))
    exe.infeed.put(np.array([7, 8, 9], np.int32))
    np.testing.assert_array_equal(exe()[1], [7, 8, 9])


def test_outfeed_get_times_out_and_modules_without_outfeed_say_so(sgd):
    with pytest.raises(FeedTimeoutError, match=r"outfeed of module sgd: no value came within 0.05 s"):
        sgd.outfeed.get(timeout=0.05)
    with pytest.raises(FeedError, match="has no outfeed"):
        xlac.jit(TWO_INFEEDS).outfeed.get()


def test_evaluator_errors_name_the_instruction():
    with pytest.raises(FeedError, match=r"infeed b of s32\[3\]\{0\}: the infeed= values are used up \(1 read\)"):
        xlac.evaluate(TWO_INFEEDS, infeed=[np.zeros(2, np.float32)])
    with pytest.raises(FeedError, match="infeed a .*given no infeed= values"):
        xlac.evaluate(TWO_INFEEDS)
    with pytest.raises(ValueError, match=r"infeed a of f32\[2\]\{0\}: expected shape \(2,\)"):
        xlac.evaluate(TWO_INFEEDS, infeed=[np.zeros(3, np.float32)])
    with pytest.raises(TypeError, match="infeed= takes a list"):
        xlac.evaluate(TWO_INFEEDS, infeed=np.zeros(2, np.float32))
    with pytest.raises(FeedError, match="outfeed .*given no outfeed= list"):
        xlac.evaluate(training_loop(), W0, B0, infeed=batches())


@pytest.mark.skipif(not interrupt.supported(), reason="Linux only")
@pytest.mark.timeout(60)
def test_ctrl_c_stops_a_call_waiting_on_the_infeed():
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        exe = xlac.jit(TWO_INFEEDS)
        exe.infeed.timeout = 30
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        t0 = time.perf_counter()
        with pytest.raises(KeyboardInterrupt):
            exe()
        assert time.perf_counter() - t0 < 5
        assert not interrupt.pending()
        exe.infeed.put(np.array([3, 4], np.float32))
        exe.infeed.put(np.array([7, 8, 9], np.int32))
        np.testing.assert_array_equal(exe()[0], [3, 4])
    finally:
        signal.signal(signal.SIGINT, old)


def test_several_devices_are_refused():
    with pytest.raises(xlac.UnsupportedError, match=r"not supported yet: infeed .*2 devices"):
        xlac.jit(training_loop(), num_replicas=2)


# ---------------------------------------------------------------------------------------
# Builder and shape rules
# ---------------------------------------------------------------------------------------

def test_builder_returns_data_and_token():
    b = xlac.XlaBuilder("b")
    got = ops.infeed(b, "(f32[2]{0}, s32[])", config="c")
    assert got.shape == xlac.shape("((f32[2]{0}, s32[]), token[])")
    assert got.instruction.attrs["infeed_config"].text == '"c"'
    tok = ops.outfeed(ops.get_tuple_element(got, 0), ops.get_tuple_element(got, 1),
                      shape="(f32[2]{0}, s32[])")
    assert tok.shape.is_token
    assert "infeed_config" not in ops.infeed(b, "f32[]").instruction.attrs   # XLA prints no empty config


@pytest.mark.parametrize("shape, rule", [
    ("((f32[2], s32[]), f32[])", "nested tuple shapes are not supported"),
    ("(f32[2], token[])", "element 1 is a token"),
    ("token[]", "is a token"),
])
def test_infeed_shape_errors(shape, rule):
    b = xlac.XlaBuilder("b")
    with pytest.raises(xlac.ShapeError, match=rf"infeed: .*{rule}"):
        ops.infeed(b, shape)


def test_outfeed_shape_errors():
    b = xlac.XlaBuilder("b")
    x = ops.parameter(b, 0, "f32[2,3]", "x")
    with pytest.raises(xlac.ShapeError, match=r"outfeed: outfeed_shape f32\[3,2\]\{1,0\} must be compatible "
                                              r"with the operand shape f32\[2,3\]"):
        ops.outfeed(x, None, shape="f32[3,2]")
    with pytest.raises(xlac.ShapeError, match="outfeed: operand 1 must be a token"):
        ops.outfeed(x, x)
    with pytest.raises(xlac.ShapeError, match="outfeed: .*nested tuple"):
        ops.outfeed(ops.tuple(b, [ops.tuple(b, [x])]))
    with pytest.raises(TypeError, match="infeed: config must be a str"):
        ops.infeed(b, "f32[]", config=3)


def test_parser_and_verifier_errors():
    bad_result = """HloModule m
ENTRY e {
  t = token[] after-all()
  ROOT in = f32[2] infeed(t)
}
"""
    with pytest.raises(xlac.ShapeError, match=r"infeed: the result must be \(data, token\[\]\)"):
        xlac.jit(bad_result)
    not_token = """HloModule m
ENTRY e {
  x = f32[] parameter(0)
  ROOT in = (f32[2], token[]) infeed(x)
}
"""
    with pytest.raises(xlac.ShapeError, match="infeed: operand 0 must be a token"):
        xlac.jit(not_token)
    bad_shape = """HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  t = token[] after-all()
  ROOT o = token[] outfeed(x, t), outfeed_shape=f32[3]
}
"""
    with pytest.raises(xlac.ShapeError, match=r"outfeed_shape f32\[3\]\{0\} must be compatible"):
        xlac.jit(bad_shape)
