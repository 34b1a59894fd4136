"""Ctrl-C stops a running call (issue 12, item 4).

SIGINT reaches a native handler chained in front of Python's (``xlac.runtime.
interrupt``) that sets the flag ``opts->cancel`` points to; generated code
polls it at every while iteration, every parallel task and after every long
kernel, and the executable raises ``KeyboardInterrupt``.  Each test sends the
signal from a timer thread, as a terminal would.
"""
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import xlac
from xlac.runtime import interrupt


def default_sigint() -> None:
    """``preexec_fn`` of a child whose Ctrl-C is checked: SIGINT at its default
    disposition (tests/conftest.py's ``default_sigint`` says why)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)

pytestmark = pytest.mark.skipif(not interrupt.supported(), reason="Linux only")

# A loop that never ends: the state doubles forever.
FOREVER = """HloModule forever
cond {
  s = (s32[], f32[4]) parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[4] add(v, v)
  ROOT t = (s32[], f32[4]) tuple(j, w)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[4]) tuple(z, x)
  ROOT w = (s32[], f32[4]) while(t), condition=cond, body=body
}
"""

# A finite loop of big parallel kernels: n iterations of sqrt over 4M elements
# (several seconds when n is large).
LONG = """HloModule long
cond {
  s = (s32[], f32[4194304]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(%d)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4194304]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[4194304] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  r = f32[4194304] sqrt(v)
  ROOT t = (s32[], f32[4194304]) tuple(j, r)
}
ENTRY e {
  x = f32[4194304] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[4194304]) tuple(z, x)
  w = (s32[], f32[4194304]) while(t), condition=cond, body=body
  ROOT v = f32[4194304] get-tuple-element(w), index=1
}
"""


def _interrupt_after(seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


@pytest.fixture
def python_sigint_handler():
    # pytest keeps Python's default SIGINT handler; make sure of it.
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("num_threads", [1, 2])
def test_ctrl_c_stops_a_loop_that_never_ends(python_sigint_handler, num_threads):
    exe = xlac.jit(FOREVER, num_threads=num_threads)
    _interrupt_after(0.3)
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        exe(np.ones(4, np.float32))
    assert time.perf_counter() - t0 < 5
    # The executable stays usable, and the flag is down again.
    finite = xlac.jit(LONG % 3, num_threads=num_threads)
    x = np.full(4194304, 256, np.float32)
    np.testing.assert_array_equal(finite(x)[:4], np.full(4, 2, np.float32))
    assert not interrupt.pending()


@pytest.mark.timeout(60)
def test_ctrl_c_stops_long_parallel_kernels_within_a_fraction_of_a_second(python_sigint_handler):
    exe = xlac.jit(LONG % 100000, num_threads=2)
    x = np.full(4194304, 2, np.float32)
    _interrupt_after(0.3)
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        exe(x)
    assert time.perf_counter() - t0 < 3


@pytest.mark.timeout(60)
def test_ctrl_c_while_waiting_for_the_workers_waits_for_them(python_sigint_handler):
    """Regression: a KeyboardInterrupt raised in the caller while it waited for
    the pool's workers used to end the wait, so workers went on running tasks
    over buffers the call had already given back (a crash, seen as a
    segfault in a worker thread during a later test).  The wait now goes on:
    when the call has raised, every worker is idle."""
    from xlac.runtime import threads
    exe = xlac.jit(LONG % 100000, num_threads=2)
    x = np.full(4194304, 2, np.float32)
    for delay in (0.05, 0.1, 0.15, 0.2, 0.25):
        _interrupt_after(delay)
        with pytest.raises(KeyboardInterrupt):
            exe(x)
        assert threads.pool().state.lock == 0     # the dispatch ended: no task is running


@pytest.mark.timeout(60)
def test_a_user_handler_installed_later_is_chained_too():
    seen = []
    old = signal.signal(signal.SIGINT, lambda sig, frame: seen.append(sig))
    try:
        exe = xlac.jit(FOREVER)
        # SIGINT again every 0.3 s until the call ends: on a loaded machine the
        # first one may come before the call has started (the user's handler
        # alone sees it then, and the loop would run on).
        done = threading.Event()

        def interrupt():
            while not done.wait(0.3):
                os.kill(os.getpid(), signal.SIGINT)
        threading.Thread(target=interrupt, daemon=True).start()
        try:
            with pytest.raises(KeyboardInterrupt):      # the call still ends, and says so
                exe(np.ones(4, np.float32))
        finally:
            done.set()
        time.sleep(0.05)
        assert seen and set(seen) == {signal.SIGINT}     # and the user's handler ran
    finally:
        signal.signal(signal.SIGINT, old)


@pytest.mark.timeout(60)
def test_calls_on_other_threads_are_not_cancelled(python_sigint_handler):
    exe = xlac.jit(LONG % 60, num_threads=1)
    x = np.full(4194304, 2.0 ** 64, np.float32)
    out = []
    worker = threading.Thread(target=lambda: out.append(exe(x)))
    worker.start()
    _interrupt_after(0.05)
    with pytest.raises(KeyboardInterrupt):
        time.sleep(10)
    worker.join()
    np.testing.assert_array_equal(out[0][:4], np.ones(4, np.float32))   # 60 square roots of 2**64


def test_cli_run_is_interrupted_with_a_clear_message(tmp_path):
    hlo = tmp_path / "forever.hlo"
    hlo.write_text(FOREVER, encoding="utf-8")
    np.savez(tmp_path / "in.npz", np.ones(4, np.float32))
    dumps = tmp_path / "dump"
    proc = subprocess.Popen([sys.executable, "-m", "xlac", "run", str(hlo), "--inputs",
                             str(tmp_path / "in.npz")], stderr=subprocess.PIPE, encoding="utf-8",
                            preexec_fn=default_sigint,
                            env=dict(os.environ, XLAC_DUMP_TO=str(dumps)))
    try:
        # The assembly is the last thing compiling dumps: then the loop runs
        # (a fixed sleep could land in the imports on a loaded machine).
        deadline = time.monotonic() + 120
        while not list(dumps.glob("*.s")) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert err.strip() == "xlac: error: interrupted"


def _raw_entry(text):
    """The entry of ``text`` compiled as AOT users get it, with its signature."""
    from xlac.codegen.compiler import lower
    from xlac.codegen.jit import compile_ir
    from xlac.runtime import abi
    lowered = lower(xlac.parse_hlo(text))
    jf = compile_ir(lowered.llvm_module, lowered.entry_name)
    return jf, abi.ENTRY(jf.address), lowered.assignment.temp_size


THREE_TIMES = FOREVER.replace("ROOT t = pred[] constant(true)", """i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT t = pred[] compare(i, n), direction=LT""")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("abi_version", [1, 2])
def test_opts_cancel_is_read_by_abi_version_2_callers_only(abi_version):
    # The ABI field an AOT user sets from their own signal handler.  A caller
    # built against version 1 has no `cancel` field: it must not be read.
    import ctypes
    from xlac.runtime import abi
    jf, entry, temp_size = _raw_entry(THREE_TIMES)
    flag = ctypes.c_int32(1)                              # set before the call
    opts = abi.RunOptions()
    opts.abi_version = abi_version
    opts.num_replicas = 1
    opts.cancel = ctypes.pointer(flag)
    x = np.ones(4, np.float32)
    i, v = np.full((), -1, np.int32), np.zeros(4, np.float32)
    results = (ctypes.c_void_p * 2)(i.ctypes.data, v.ctypes.data)
    params = (ctypes.c_void_p * 1)(x.ctypes.data)
    temp = np.zeros(temp_size + 64, np.uint8)
    entry(ctypes.addressof(results), ctypes.addressof(params),
          temp.ctypes.data + (-temp.ctypes.data) % 64, ctypes.addressof(opts))
    if abi_version == 1:                                  # ran its three iterations
        assert int(i) == 3
        np.testing.assert_array_equal(v, 8 * x)
    else:                                                 # stopped before the first
        assert int(i) == 0


def test_a_ctrl_c_just_before_the_call_is_not_lost(tmp_path):
    """SIGINT raised right before a call of code that never ends stops it, through
    the native fast call and the Python path alike: a call clears the flag at its
    start, then runs the handlers of signals Python has noted (a Ctrl-C between
    the two must not be swallowed; seen once on a loaded machine as a CLI run
    that ignored Ctrl-C)."""
    script = tmp_path / "race.py"
    script.write_text(
        "import signal, numpy as np, xlac\n"
        f"exe = xlac.jit({FOREVER!r})\n"
        "x = np.ones(4, np.float32)\n"
        "for args in ((x,), (x.astype(np.float64).astype(np.float32)[::1],)):\n"
        "    try:\n"
        "        exe(signal.raise_signal(signal.SIGINT) or args[0])\n"
        "    except KeyboardInterrupt:\n"
        "        print('interrupted', flush=True)\n"
        "try:\n"
        "    exe._call(signal.raise_signal(signal.SIGINT) or x)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, encoding="utf-8", timeout=120,
                          preexec_fn=default_sigint)
    assert done.stdout.split() == ["interrupted"] * 3, (done.stdout, done.stderr[-2000:])
