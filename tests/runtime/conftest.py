"""Hand-written native kernels that call the services of ``xlac_run_options``.

Each has the entry ABI ``void f(void **results, const void *const *params,
void *temp, const xlac_run_options *opts)`` and is compiled with the JIT's own
``compile_ir``, so the tests exercise ``parallel_for`` whatever the emitter does.
"""
import ctypes

import numpy as np
import pytest

import xlac.codegen.runtime_code  # noqa: F401  (provides the native helpers threads.py runs)
from xlac.codegen.jit import compile_ir
from xlac.runtime import abi

# counts = results[0] (int64[n]); n = *params[0]. Every task i does counts[i] += 1
# (atomically). With opts->parallel_for NULL the kernel loops itself.
FLAT_IR = r"""
define internal void @body(ptr %ctx, i64 %i) {
  %p = getelementptr i64, ptr %ctx, i64 %i
  %old = atomicrmw add ptr %p, i64 1 seq_cst
  ret void
}
define void @flat(ptr %results, ptr %params, ptr %temp, ptr %opts) {
entry:
  %np = load ptr, ptr %params
  %n = load i64, ptr %np
  %counts = load ptr, ptr %results
  %pfp = getelementptr ptr, ptr %opts, i64 2
  %pf = load ptr, ptr %pfp
  %has = icmp ne ptr %pf, null
  br i1 %has, label %par, label %ser
par:
  %rcp = getelementptr ptr, ptr %opts, i64 1
  %rc = load ptr, ptr %rcp
  call void %pf(ptr %rc, i64 %n, ptr @body, ptr %counts)
  ret void
ser:
  %any = icmp sgt i64 %n, 0
  br i1 %any, label %loop, label %done
loop:
  %i = phi i64 [0, %ser], [%nx, %loop]
  call void @body(ptr %counts, i64 %i)
  %nx = add i64 %i, 1
  %c = icmp slt i64 %nx, %n
  br i1 %c, label %loop, label %done
done:
  ret void
}
"""

# counts = results[0] (int64[n*m]); n = *params[0], m = *params[1]. An outer
# parallel_for over i in [0, n) whose body runs an inner parallel_for over j in
# [0, m) doing counts[i*m + j] += 1: the nested call must run inline.
NESTED_IR = r"""
define internal void @inner(ptr %row, i64 %j) {
  %p = getelementptr i64, ptr %row, i64 %j
  %o = atomicrmw add ptr %p, i64 1 seq_cst
  ret void
}
define internal void @outer(ptr %ctx, i64 %i) {
  %opts = load ptr, ptr %ctx
  %cp = getelementptr ptr, ptr %ctx, i64 1
  %counts = load ptr, ptr %cp
  %mp = getelementptr ptr, ptr %ctx, i64 2
  %m = load i64, ptr %mp
  %off = mul i64 %i, %m
  %row = getelementptr i64, ptr %counts, i64 %off
  %pfp = getelementptr ptr, ptr %opts, i64 2
  %pf = load ptr, ptr %pfp
  %rcp = getelementptr ptr, ptr %opts, i64 1
  %rc = load ptr, ptr %rcp
  call void %pf(ptr %rc, i64 %m, ptr @inner, ptr %row)
  ret void
}
define void @nested(ptr %results, ptr %params, ptr %temp, ptr %opts) {
  %np = load ptr, ptr %params
  %n = load i64, ptr %np
  %mpp = getelementptr ptr, ptr %params, i64 1
  %mptr = load ptr, ptr %mpp
  %m = load i64, ptr %mptr
  %counts = load ptr, ptr %results
  %ctx = alloca [3 x i64]
  store ptr %opts, ptr %ctx
  %c1 = getelementptr ptr, ptr %ctx, i64 1
  store ptr %counts, ptr %c1
  %c2 = getelementptr ptr, ptr %ctx, i64 2
  store i64 %m, ptr %c2
  %pfp = getelementptr ptr, ptr %opts, i64 2
  %pf = load ptr, ptr %pfp
  %rcp = getelementptr ptr, ptr %opts, i64 1
  %rc = load ptr, ptr %rcp
  call void %pf(ptr %rc, i64 %n, ptr @outer, ptr %ctx)
  ret void
}
"""

# Calls opts->report_error(opts->runtime_ctx, 5, "the service broke").
REPORT_IR = r"""
@msg = private constant [18 x i8] c"the service broke\00"
define void @report(ptr %results, ptr %params, ptr %temp, ptr %opts) {
  %rep = getelementptr ptr, ptr %opts, i64 9
  %f = load ptr, ptr %rep
  %rcp = getelementptr ptr, ptr %opts, i64 1
  %rc = load ptr, ptr %rcp
  call void %f(ptr %rc, i32 5, ptr @msg)
  ret void
}
"""


class Kernel:
    """A compiled hand-written kernel called with int64 scalars, returning counts."""

    def __init__(self, ir_text: str, name: str):
        self.jit = compile_ir(ir_text, name)
        self.fn = abi.ENTRY(self.jit.address)

    def __call__(self, opts, *scalars, size: int) -> np.ndarray:
        counts = np.zeros(max(size, 1), np.int64)
        vals = [np.array(v, np.int64) for v in scalars]
        results = (ctypes.c_void_p * 1)(counts.ctypes.data)
        params = (ctypes.c_void_p * max(1, len(vals)))(*[v.ctypes.data for v in vals])
        self.fn(ctypes.addressof(results), ctypes.addressof(params), None, ctypes.addressof(opts))
        return counts[:size]


@pytest.fixture(scope="session")
def flat_kernel():
    return Kernel(FLAT_IR, "flat")


@pytest.fixture(scope="session")
def nested_kernel():
    return Kernel(NESTED_IR, "nested")


@pytest.fixture(scope="session")
def report_kernel():
    return Kernel(REPORT_IR, "report")
