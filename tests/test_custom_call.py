"""CustomCall with the user's targets: ``xlac.register_custom_call`` in all stages.

Python callables and C functions (built here with the system C compiler, with
XLA's three CPU calling conventions), through the builder, HLO text, the
evaluator, ``xlac.jit`` (the ``opts->custom_call`` service) and AOT objects
called from C (``xlac_custom_call_register`` / ``xlac_custom_call_dispatch``).
"""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac import ops
from xlac.hlo import custom_call as hcc

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "runtime"
CC = next((c for c in (os.environ.get("CC"), "cc", "gcc", "clang") if c and shutil.which(c)), None)
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler (cc, gcc or clang) on PATH")


@pytest.fixture(autouse=True)
def _clean_registry():
    yield
    from xlac import custom_calls
    for name in custom_calls.registered_targets():
        if name.startswith("t_"):
            custom_calls.unregister_custom_call(name)


def _one(target, shape_in="f32[4]", shape_out="f32[4]", **kw):
    b = xlac.XlaBuilder("cc")
    x = ops.parameter(b, 0, xlac.shape(shape_in), "x")
    return b.build(ops.custom_call(b, target, [x], xlac.shape(shape_out), **kw))


X = np.array([1.0, 4.0, 9.0, 16.0], np.float32)


def _both(comp, *args):
    """(evaluate, jit) of ``comp`` on ``args``."""
    return xlac.evaluate(comp, *args), xlac.jit(comp)(*args)


# ---------------------------------------------------------------------------------------
# Python callables
# ---------------------------------------------------------------------------------------

def test_python_callable_single_result():
    xlac.register_custom_call("t_double", lambda x: x * 2)
    for got in _both(_one("t_double"), X):
        np.testing.assert_array_equal(got, X * 2)


def test_python_callable_tuple_result_and_opaque():
    seen = []

    def stats(x, y, opaque):
        seen.append(opaque)
        return x.sum(keepdims=False).astype(np.float32), (x[:, None] * y[None, :]).astype(np.float32)
    xlac.register_custom_call("t_stats", stats)
    b = xlac.XlaBuilder("stats")
    x = ops.parameter(b, 0, xlac.shape("f32[4]"))
    y = ops.parameter(b, 1, xlac.shape("f32[3]"))
    r = ops.custom_call(b, "t_stats", [x, y], xlac.shape("(f32[], f32[4,3])"), opaque=b'say "hi"\n')
    comp = b.build(r)
    y_val = np.array([1, 2, 3], np.float32)
    for total, outer in _both(comp, X, y_val):
        assert total == X.sum()
        np.testing.assert_array_equal(outer, np.outer(X, y_val))
    assert seen == [b'say "hi"\n'] * 2


def test_typed_ffi_attributes_are_keyword_arguments():
    def scaled(x, *, factor, offset, name, flags):
        assert name == "abc" and flags == (1, 2)
        return (x * factor + offset).astype(np.float32)
    xlac.register_custom_call("t_scaled", scaled)
    comp = _one("t_scaled", api_version="API_VERSION_TYPED_FFI",
                attributes={"factor": 3, "offset": 0.5, "name": "abc", "flags": (1, 2)})
    assert "backend_config={factor = 3 : i64, flags = array<i64: 1, 2>, name = \"abc\", offset = 0.5 : f64}" \
        in comp.as_hlo_text()
    for got in _both(comp, X):
        np.testing.assert_array_equal(got, X * 3 + 0.5)


def test_operands_arrive_logical_whatever_the_layout():
    xlac.register_custom_call("t_transpose", lambda a: np.ascontiguousarray(a.T))
    b = xlac.XlaBuilder("layout")
    a = ops.parameter(b, 0, xlac.shape("f32[2,3]"))
    r = ops.custom_call(b, "t_transpose", [a], xlac.shape("f32[3,2]{0,1}"),
                        operand_shapes_with_layout=[xlac.shape("f32[2,3]{0,1}")])
    comp = b.build(ops.add(r, r))
    a_val = np.arange(6, dtype=np.float32).reshape(2, 3)
    for got in _both(comp, a_val):
        np.testing.assert_array_equal(got, 2 * a_val.T)


def test_result_checks_name_the_target():
    comp = _one("t_bad")
    for fn, err, words in [(lambda x: x.astype(np.float64), TypeError, "dtype float64"),
                           (lambda x: x[:2], ValueError, "shape (2,)"),
                           (lambda x: [x], TypeError, "must be a numpy array")]:
        xlac.register_custom_call("t_bad", fn)
        exe = xlac.jit(comp)
        for run in (lambda: xlac.evaluate(comp, X), lambda: exe(X)):
            with pytest.raises(err, match="custom call target 't_bad'") as info:
                run()
            assert words in str(info.value)


def test_tuple_count_is_checked():
    xlac.register_custom_call("t_pair", lambda x: (x,))
    comp = _one("t_pair", shape_out="(f32[4], f32[4])")
    with pytest.raises(ValueError, match="tuple of 2 arrays"):
        xlac.jit(comp)(X)


def test_exception_becomes_custom_call_error_with_cause():
    def boom(x):
        raise KeyError("nope")
    xlac.register_custom_call("t_boom", boom)
    comp = _one("t_boom")
    for run in (lambda: xlac.evaluate(comp, X), lambda: xlac.jit(comp)(X)):
        with pytest.raises(xlac.CustomCallError, match="'t_boom'.*raised KeyError") as info:
            run()
        assert isinstance(info.value.__cause__, KeyError)


def test_xla_layout_constraint_is_refused_naming_the_feature():
    """XLA's ``LayoutConstraint`` (jax's with_sharding_constraint to a Format
    with a Layout) is refused as the layout feature it is, not as a target
    to register."""
    text = ("HloModule m\nENTRY e {\n  x = f32[4,8] parameter(0)\n"
            "  ROOT c = f32[4,8]{0,1} custom-call(x), custom_call_target=\"LayoutConstraint\"\n}")
    with pytest.raises(xlac.UnsupportedError, match="custom-call LayoutConstraint.*row-major") as info:
        xlac.jit(xlac.parse_hlo(text))
    assert "register_custom_call" not in str(info.value)


def test_unregistered_target_is_refused_when_compiling():
    comp = _one("t_missing")
    with pytest.raises(xlac.UnsupportedError, match="'t_missing' is not registered.*register_custom_call"):
        xlac.jit(comp)
    with pytest.raises(xlac.UnsupportedError, match="t_missing"):
        xlac.evaluate(comp, X)
    xlac.register_custom_call("t_missing", lambda x: -x)   # the same module, now registered
    np.testing.assert_array_equal(xlac.jit(comp)(X), -X)
    xlac.unregister_custom_call("t_missing")
    with pytest.raises(xlac.UnsupportedError, match="t_missing"):   # a cached program is checked again
        xlac.jit(comp)


def test_replacing_a_target_takes_effect_on_the_next_call():
    comp = _one("t_swap")
    xlac.register_custom_call("t_swap", lambda x: x + 1)
    exe = xlac.jit(comp)
    np.testing.assert_array_equal(exe(X), X + 1)
    xlac.register_custom_call("t_swap", lambda x: x - 1)
    np.testing.assert_array_equal(exe(X), X - 1)


def test_registration_errors():
    with pytest.raises(ValueError, match="provided by xlac"):
        xlac.register_custom_call("lapack_spotrf_ffi", lambda x: x)
    with pytest.raises(TypeError, match="Python callable or a C function"):
        xlac.register_custom_call("t_x", "not callable")
    with pytest.raises(TypeError, match="non-empty string"):
        xlac.register_custom_call("", lambda x: x)
    with pytest.raises(ValueError, match="api_version"):
        xlac.register_custom_call("t_x", lambda x: x, api_version="API_VERSION_NEW")
    with pytest.raises(ValueError, match="NULL"):
        xlac.register_custom_call("t_x", 0)
    with pytest.raises(ValueError, match="typed FFI"):
        xlac.register_custom_call("t_x", 1234, api_version="API_VERSION_TYPED_FFI")
    xlac.register_custom_call("t_versioned", lambda x: x, api_version="API_VERSION_STATUS_RETURNING")
    with pytest.raises(xlac.UnsupportedError, match="registered for API_VERSION_STATUS_RETURNING"):
        xlac.jit(_one("t_versioned"))
    assert not xlac.unregister_custom_call("t_never_registered")


def test_custom_call_inside_a_while_loop_and_from_threads():
    calls = []

    def step(x):
        calls.append(1)
        return (x * 0.5).astype(np.float32)
    xlac.register_custom_call("t_halve", step)
    text = """HloModule loop
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  y = f32[4] custom-call(x), custom_call_target="t_halve"
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[4]) tuple(next, y)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
}
"""
    exe = xlac.jit(text)
    _, got = exe(X)
    np.testing.assert_array_equal(got, X / 8)
    assert len(calls) == 3
    results = []
    threads = [threading.Thread(target=lambda: results.append(exe(X)[1])) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and all(np.array_equal(r, X / 8) for r in results)


def test_hlo_text_round_trip_keeps_the_attributes():
    comp = _one("t_text", opaque="a\\b", operand_shapes_with_layout=["f32[4]{0}"], has_side_effect=True,
                api_version="API_VERSION_STATUS_RETURNING")
    text = comp.as_hlo_text()
    inst = [i for i in xlac.parse_hlo(text).entry.instructions if i.opcode == "custom-call"][0]
    assert hcc.target_of(inst) == "t_text"
    assert hcc.opaque_of(inst) == b"a\\b"
    assert hcc.api_version_of(inst) == 2
    assert [str(s) for s in hcc.operand_layouts(inst)] == ["f32[4]{0}"]
    assert xlac.parse_hlo(text).to_text() == text


def test_shape_errors_of_the_builder():
    b = xlac.XlaBuilder("bad")
    x = ops.parameter(b, 0, xlac.shape("f32[4]"))
    with pytest.raises(xlac.ShapeError, match="operand_layout_constraints has 2 shape"):
        ops.custom_call(b, "t_y", [x], xlac.shape("f32[4]"), operand_shapes_with_layout=["f32[4]", "f32[4]"])
    with pytest.raises(xlac.ShapeError, match=r"operand_layout_constraints\[0\] is f32\[5\]"):
        ops.custom_call(b, "t_y", [x], xlac.shape("f32[4]"), operand_shapes_with_layout=["f32[5]"])
    with pytest.raises(ValueError, match="api_version"):
        ops.custom_call(b, "t_y", [x], xlac.shape("f32[4]"), api_version="V9")


def test_mlir_attribute_parser():
    got = hcc.parse_mlir_attributes('{a = 76 : ui8, b = -1.5e+00 : f32, c = "x\\"y", d = array<i64: 1, -2>, '
                                    'e = true, f = {g = 1 : i32}, h, i = 0x10 : i64}')
    assert got == {"a": 76, "b": -1.5, "c": 'x"y', "d": (1, -2), "e": True, "f": {"g": 1}, "h": True, "i": 16}
    with pytest.raises(ValueError):
        hcc.parse_mlir_attributes("{a = }")


# ---------------------------------------------------------------------------------------
# C functions
# ---------------------------------------------------------------------------------------

C_TARGETS = r"""
#include "xlac_runtime.h"
#include <stdlib.h>
#include <string.h>

/* API_VERSION_ORIGINAL: y = x + 1 (f32[4]) */
void add_one(void *out, const void **in) {
  const float *x = (const float *)in[0];
  float *y = (float *)out;
  int i;
  for (i = 0; i < 4; ++i) y[i] = x[i] + 1.0f;
}

/* API_VERSION_STATUS_RETURNING: y = x * x, failing on a negative element */
void checked_square(void *out, const void **in, XlaCustomCallStatus *status) {
  const float *x = (const float *)in[0];
  float *y = (float *)out;
  int i;
  for (i = 0; i < 4; ++i) {
    if (x[i] < 0) {
      const char *msg = "negative input to checked_square";
      XlaCustomCallStatusSetFailure(status, msg, strlen(msg));
      return;
    }
    y[i] = x[i] * x[i];
  }
}

/* API_VERSION_STATUS_RETURNING_UNIFIED: y = x * (the number in opaque) */
void scale_by_opaque(void *out, const void **in, const char *opaque, size_t opaque_len,
                     XlaCustomCallStatus *status) {
  char buf[64];
  const float *x = (const float *)in[0];
  float *y = (float *)out;
  int i;
  if (opaque_len == 0 || opaque_len >= sizeof buf) {
    XlaCustomCallStatusSetFailure(status, "no factor", 9);
    return;
  }
  memcpy(buf, opaque, opaque_len);
  buf[opaque_len] = 0;
  for (i = 0; i < 4; ++i) y[i] = x[i] * (float)atof(buf);
}

/* A tuple result: out is void ** of the element buffers: (sum f32[], first s32[]) */
void sum_and_first(void *out, const void **in) {
  void **outs = (void **)out;
  const float *x = (const float *)in[0];
  float s = 0;
  int i;
  for (i = 0; i < 4; ++i) s += x[i];
  *(float *)outs[0] = s;
  *(int32_t *)outs[1] = (int32_t)x[0];
}

/* The bytes of a f32[2,3] operand as they are stored, into f32[6] */
void storage_order(void *out, const void **in) { memcpy(out, in[0], 6 * sizeof(float)); }
"""


@pytest.fixture(scope="module")
def c_targets(tmp_path_factory):
    if CC is None:
        pytest.skip("no C compiler (cc, gcc or clang) on PATH")
    d = tmp_path_factory.mktemp("cc_targets")
    (d / "targets.c").write_text(C_TARGETS, encoding="utf-8")
    lib = d / "libtargets.so"
    subprocess.run([CC, "-std=c99", "-Wall", "-Werror", "-O1", "-fPIC", "-shared", f"-I{RUNTIME}",
                    str(d / "targets.c"), "-o", str(lib)], check=True, capture_output=True, timeout=120)
    return ctypes.CDLL(str(lib))


def _capsule(address: int):
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new(address, b"xla._CUSTOM_CALL_TARGET", None)


@needs_cc
@pytest.mark.parametrize("how", ["ctypes", "address", "capsule"])
def test_c_original_api(c_targets, how):
    fn = c_targets.add_one
    address = ctypes.cast(fn, ctypes.c_void_p).value
    xlac.register_custom_call("t_add_one", {"ctypes": fn, "address": address, "capsule": _capsule(address)}[how])
    for got in _both(_one("t_add_one"), X):
        np.testing.assert_array_equal(got, X + 1)


@needs_cc
def test_c_status_returning_success_and_failure(c_targets):
    xlac.register_custom_call("t_square", c_targets.checked_square, api_version="API_VERSION_STATUS_RETURNING")
    comp = _one("t_square", api_version="API_VERSION_STATUS_RETURNING")
    exe = xlac.jit(comp)
    for got in (xlac.evaluate(comp, X), exe(X)):
        np.testing.assert_array_equal(got, X * X)
    bad = -X
    for run in (lambda: xlac.evaluate(comp, bad), lambda: exe(bad)):
        with pytest.raises(xlac.CustomCallError, match="'t_square'.*failed: negative input to checked_square"):
            run()
    np.testing.assert_array_equal(exe(X), X * X)      # the executable is fine afterwards


@needs_cc
def test_c_unified_api_gets_the_opaque_bytes(c_targets):
    xlac.register_custom_call("t_scale", c_targets.scale_by_opaque)
    comp = _one("t_scale", api_version="API_VERSION_STATUS_RETURNING_UNIFIED", opaque="2.5")
    for got in _both(comp, X):
        np.testing.assert_array_equal(got, X * 2.5)
    empty = _one("t_scale", api_version="API_VERSION_STATUS_RETURNING_UNIFIED")
    with pytest.raises(xlac.CustomCallError, match="no factor"):
        xlac.jit(empty)(X)


@needs_cc
def test_c_tuple_result_gets_an_array_of_buffers(c_targets):
    xlac.register_custom_call("t_sum_first", c_targets.sum_and_first)
    comp = _one("t_sum_first", shape_out="(f32[], s32[])")
    for total, first in _both(comp, X):
        assert total == X.sum() and first == 1


@needs_cc
def test_c_function_reads_the_constrained_layout(c_targets):
    xlac.register_custom_call("t_storage", c_targets.storage_order)
    b = xlac.XlaBuilder("storage")
    a = ops.parameter(b, 0, xlac.shape("f32[2,3]"))
    comp = b.build(ops.custom_call(b, "t_storage", [a], xlac.shape("f32[6]"),
                                   operand_shapes_with_layout=[xlac.shape("f32[2,3]{0,1}")]))
    a_val = np.arange(6, dtype=np.float32).reshape(2, 3)
    for got in _both(comp, a_val):
        np.testing.assert_array_equal(got, a_val.T.reshape(-1))     # column-major storage


@needs_cc
def test_c_function_refuses_the_typed_ffi(c_targets):
    xlac.register_custom_call("t_add_one", c_targets.add_one)
    with pytest.raises(xlac.UnsupportedError, match="C function.*API_VERSION_TYPED_FFI"):
        xlac.jit(_one("t_add_one", api_version="API_VERSION_TYPED_FFI"))


# ---------------------------------------------------------------------------------------
# AOT: the targets provided from C
# ---------------------------------------------------------------------------------------

AOT_MAIN = r"""
#include "cc_mod.h"
#include <stdio.h>
#include <string.h>

void add_one(void *out, const void **in);
void checked_square(void *out, const void **in, XlaCustomCallStatus *status);

static char last_error[2048];
static void remember(void *ctx, int status, const char *message) {
  (void)ctx;
  snprintf(last_error, sizeof last_error, "%d %s", status, message);
}

int main(void) {
  float x[4] = {1, 2, 3, 4}, y[4] = {0};
  xlac_run_options opts;
  int k, status;
  xlac_run_options_init(&opts);
  printf("needs custom call=%d\n", (CC_MOD_REQUIRED_SERVICES & XLAC_SERVICE_CUSTOM_CALL) != 0);
  opts.custom_call = xlac_custom_call_dispatch;
  opts.report_error = remember;
  xlac_custom_call_register("t_add_one", (xlac_custom_call_target)add_one, XLAC_CUSTOM_CALL_API_ORIGINAL);
  xlac_custom_call_register("t_square", (xlac_custom_call_target)checked_square, 0);
  status = cc_mod_run(x, y, &opts);
  printf("status=%d y=", status);
  for (k = 0; k < 4; ++k) printf("%g ", y[k]);
  printf("\nerror=[%s]\n", last_error);
  x[0] = -3;
  cc_mod_run(x, y, &opts);
  printf("error=[%s]\n", last_error);
  return 0;
}
"""

AOT_HLO = """HloModule cc_mod
ENTRY e {
  x = f32[4] parameter(0)
  a = f32[4] custom-call(x), custom_call_target="t_add_one"
  ROOT s = f32[4] custom-call(a), custom_call_target="t_square", api_version=API_VERSION_STATUS_RETURNING
}
"""


@needs_cc
def test_aot_object_calls_targets_registered_in_c(tmp_path):
    res = xlac.compile_aot(AOT_HLO, tmp_path / "cc_mod.o", header=tmp_path / "cc_mod.h", name="cc_mod")
    assert res.required_services & 16                         # XLAC_SERVICE_CUSTOM_CALL
    (tmp_path / "main.c").write_text(AOT_MAIN, encoding="utf-8")
    (tmp_path / "targets.c").write_text(C_TARGETS, encoding="utf-8")
    exe = tmp_path / "main"
    subprocess.run([CC, "-std=c99", "-Wall", "-Werror", "-O1", f"-I{RUNTIME}", f"-I{tmp_path}",
                    str(tmp_path / "main.c"), str(tmp_path / "targets.c"), str(tmp_path / "cc_mod.o"),
                    str(RUNTIME / "xlac_runtime.c"), "-o", str(exe), "-lm", "-lpthread"],
                   check=True, capture_output=True, timeout=120)
    out = subprocess.run([str(exe)], check=True, capture_output=True, encoding="utf-8", timeout=60).stdout.splitlines()
    assert out[0] == "needs custom call=1"
    assert out[1] == "status=0 y=4 9 16 25 "
    assert out[2] == "error=[]"
    assert out[3].startswith("error=[5 custom call target \"t_square\" (instruction s): "
                             "negative input to checked_square")


JAX_FFI_CALL = """HloModule jit_f, entry_computation_layout={(f32[2,3]{1,0})->f32[2,3]{1,0}}

ENTRY main.1 {
  x.1 = f32[2,3]{1,0} parameter(0)
  ROOT ffi_call.1 = f32[2,3]{1,0} custom-call(x.1), custom_call_target="t_my_scale", operand_layout_constraints={f32[2,3]{1,0}}, api_version=API_VERSION_TYPED_FFI, backend_config={factor = 2.500000e+00 : f32, mode = 3 : i32}
}
"""


def test_a_jax_ffi_call_runs_a_registered_python_target():
    # What jax.ffi.ffi_call("t_my_scale", ...)(x, factor=np.float32(2.5), mode=np.int32(3)) lowers to.
    xlac.register_custom_call("t_my_scale", lambda x, factor, mode: (x * factor + mode).astype(np.float32))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for got in (xlac.evaluate(JAX_FFI_CALL, x), xlac.jit(JAX_FFI_CALL)(x)):
        np.testing.assert_array_equal(got, x * 2.5 + 3)


@pytest.mark.parametrize("target, operands", [("dce_sink", "a"), ("control_dep", "a, p")])
def test_jax_no_op_calls_do_nothing(target, operands):
    """``lax.dce_sink(x)`` and ``control_deps.control_dep(a, b)``: side-effecting
    custom calls with no results, needing no registration; the program computes
    what it would without them."""
    text = f"""HloModule m

ENTRY main {{
  p = f32[] parameter(0)
  a = f32[] add(p, p)
  s = () custom-call({operands}), custom_call_target="{target}", custom_call_has_side_effect=true, api_version=API_VERSION_TYPED_FFI
  ROOT r = f32[] negate(p)
}}
"""
    assert xlac.jit(text)(np.float32(2)) == -2
    assert xlac.evaluate(text, np.float32(2)) == -2


@pytest.mark.parametrize("target", ["annotate_device_placement", "MoveToHost", "MoveToDevice"])
def test_memory_placement_annotations_are_their_operand(target):
    """jax's ``annotate_device_placement`` (``device_put(x, memory_kind=...)`` in a
    program) and XLA's host-offloading calls: one memory on a CPU, so the value
    passes through, as sharding annotations' do."""
    text = f"""HloModule m

ENTRY main {{
  p = f32[2,3] parameter(0)
  a = f32[2,3] add(p, p)
  h = f32[2,3] custom-call(a), custom_call_target="{target}", custom_call_has_side_effect=true, frontend_attributes={{_xla_buffer_placement="pinned_host"}}
  ROOT r = f32[2,3] negate(h)
}}
"""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(xlac.jit(text)(x), -2 * x)
    np.testing.assert_array_equal(xlac.evaluate(text, x), -2 * x)


_TOKENS = """
HloModule tokens
ENTRY e {
  p = f32[3] parameter(0)
  t = token[] after-all()
  first = () custom-call(p), custom_call_target="t_log", custom_call_has_side_effect=true,
    api_version=API_VERSION_TYPED_FFI, backend_config="{index = 0 : ui64}"
  c = (token[], f32[3]) custom-call(t, p), custom_call_target="t_log", custom_call_has_side_effect=true,
    api_version=API_VERSION_TYPED_FFI, backend_config="{index = 1 : ui64}"
  g = f32[3] get-tuple-element(c), index=1
  ROOT r = f32[3] add(g, p)
}
"""


@pytest.mark.parametrize("how", ["jit", "evaluate"])
def test_token_operands_and_results_and_unused_side_effects(how):
    """What jax's ordered host callbacks look like: a token operand reaches a Python
    target as None, a token result is not written, and a side-effecting call whose
    result nobody reads still runs, before the next one."""
    calls = []

    def log(*args, index):
        calls.append((index, [None if a is None else a.tolist() for a in args]))
        return () if index == 0 else (None, args[1] * 2)

    xlac.register_custom_call("t_log", log)
    module = xlac.parse_hlo(_TOKENS)
    x = np.arange(3, dtype=np.float32)
    out = xlac.jit(module)(x) if how == "jit" else xlac.evaluate(module, x)
    assert np.asarray(out).tolist() == [0, 3, 6]
    assert calls == [(0, [[0, 1, 2]]), (1, [None, [0, 1, 2]])]


# -- jaxlib's own CPU kernels, expanded into HLO (hlo.custom_call.EXPANDED_TARGETS) ---------
_TRIDIAGONAL, _CSR = "tridiagonal_solve_perturbed_ffi", "cpu_csr_sparse_dense_ffi"


@pytest.mark.parametrize("target,operands,result,rule", [
    (_TRIDIAGONAL, ["f32[4]", "f32[4]", "f32[4]", "f32[4,2]"], "f64[4,2]", "one element type"),
    (_TRIDIAGONAL, ["s32[4]", "s32[4]", "s32[4]", "s32[4,2]"], "s32[4,2]", "one element type"),
    (_TRIDIAGONAL, ["f32[4]", "f32[5]", "f32[4]", "f32[4,2]"], "f32[4,2]", "without its last dimension"),
    (_TRIDIAGONAL, ["f32[4]", "f32[4]", "f32[4]", "f32[4]"], "f32[4]", "without its last dimension"),
    (_TRIDIAGONAL, ["f32[4]", "f32[4]", "f32[4,2]"], "f32[4,2]", "takes arrays dl, d, du, b"),
    (_TRIDIAGONAL, ["f32[4]", "f32[4]", "f32[4]", "f32[4,2]"], "f32[4,3]", "b's shape"),
    (_CSR, ["f32[4]", "s32[3]", "s32[4]", "f64[5]"], "f32[2]", "one element type"),
    (_CSR, ["bf16[4]", "s32[3]", "s32[4]", "bf16[5]"], "bf16[2]", "one element type"),
    (_CSR, ["f32[4]", "s32[3]", "s64[4]", "f32[5]"], "f32[2]", "indptr and indices"),
    (_CSR, ["f32[4]", "s32[3]", "s32[5]", "f32[5]"], "f32[2]", r"\[nse\]"),
    (_CSR, ["f32[4]", "s32[3]", "s32[4]", "f32[5]"], "f32[3]", r"rows = 2"),
    (_CSR, ["f32[4]", "s32[3]", "s32[4]", "f32[5,2,1]"], "f32[2,2,1]", r"\[cols, n\]"),
    (_CSR, ["f32[4]", "s32[3]", "s32[4]"], "f32[2]", "takes arrays data, indptr, indices, rhs"),
])
def test_jaxlib_kernel_shape_errors_name_the_target_and_the_rule(target, operands, result, rule):
    params = "\n".join(f"  p{j} = {s} parameter({j})" for j, s in enumerate(operands))
    names = ", ".join(f"p{j}" for j in range(len(operands)))
    text = (f"HloModule m\nENTRY e {{\n{params}\n  ROOT r = {result} custom-call({names}), "
            f'custom_call_target="{target}", api_version=API_VERSION_TYPED_FFI\n}}\n')
    with pytest.raises(ValueError, match=rf"{target}.*{rule}"):
        xlac.jit(text)


@pytest.mark.parametrize("target", [_TRIDIAGONAL, _CSR])
def test_jaxlib_kernels_cannot_be_registered_over(target):
    with pytest.raises(ValueError, match="provided by xlac"):
        xlac.register_custom_call(target, lambda *a: None)
