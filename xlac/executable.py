"""Executable: a compiled module called from Python with numpy arrays.

``xlac.jit(x, num_threads=None, donate_argnums=(), optimize=True)`` accepts an
XlaComputation, an HloModule or HLO text and returns an :class:`Executable`.
Calling it:

* checks the number of arguments, then each argument's shape and dtype against
  its parameter (``TypeError`` for a wrong dtype, ``ValueError`` for a wrong
  shape, both naming the parameter, the expected and the actual);
* lays each argument out as its parameter's layout says (any numpy strides are
  accepted; a C-contiguous, aligned array of the right dtype for a parameter
  with the default layout is passed as is, without a copy);
* runs the native entry with the GIL released, passing an ``xlac_run_options``
  whose ``parallel_for`` runs loop tasks on ``num_threads`` threads
  (:mod:`xlac.runtime.threads`; ``num_threads=1``: NULL, loops run inline);
* returns the results in logical order: one numpy array, or a tuple for a
  tuple-shaped result.  Result memory comes from a caching pool
  (:mod:`xlac.runtime.allocator`) and goes back to it when the array is gone;
  the temp arena is reused between calls (one per concurrent call).

That is the Python path (``Executable._call``).  ``Executable.__call__`` is
native code (:mod:`xlac.codegen.fast_call`) that does all of it for the common
case — C-contiguous, aligned ndarrays of the parameters' exact dtypes and
shapes; results of at most ``FAST_RESULT_MAX`` bytes allocated through numpy,
bigger ones from the pool — in about 0.2 µs plus about 0.1 µs per buffer, and
hands every other call, untouched, to the Python path, the only place argument
errors are raised (:meth:`Executable._make_fast_call`
says which executables have the fast path; ``exe.fast_calls`` counts its calls).

``donate_argnums`` (as in ``jax.jit``): a donated argument's memory may be
reused for a result of the same shape, layout and dtype — the result array then
shares memory with the argument, whose contents are overwritten. **A donated
argument must not be used after the call.**  Donation happens only where it is
safe — the result is computed by the only instruction that reads the
parameter, reading it only at the index it writes — and only for an argument
that is a C-contiguous, aligned, writeable numpy array of the parameter's dtype
and default layout, not overlapping another argument; otherwise it is silently
ignored (``Executable.donations`` lists the possible (result, parameter) pairs).
Code is compiled for the pool's 64-byte aligned result buffers
(``lower(aligned_results=True)``); the first call that donates an argument
that is not 64-byte aligned to a result that relies on it compiles the module
again without that promise, and such calls run that code.

A module with dynamic dimensions (``f32[<=10]``) gives a
:class:`DynamicExecutable`: it takes arrays of their actual sizes (any size up
to the bound in a dynamic dimension, the exact size in a static one) and
returns results of their actual sizes, as a numpy user expects.  Inside, the
module is compiled padded (``xlac.passes.dynamic_padder``): each dynamic
argument is copied into a zero-padded array of the bound's size and its sizes
passed as ``s32`` scalars; the results come back padded with their sizes and
are sliced (views of the padded arrays).

Where the code comes from — the in-memory and disk caches, or a compilation —
is :mod:`xlac.program`'s business (:func:`~xlac.program.compile_program`).
``exe.compile_time_s`` is the time the constructor took to get the code,
``exe.from_cache`` where it came from (``"memory"``, ``"disk"`` or None),
``exe.compile_stats`` the phases.
"""
from __future__ import annotations

import ctypes
import gc
import re
import threading
import time
import weakref
from dataclasses import dataclass

import numpy as np

from . import custom_calls
from .codegen import fast_call
from .codegen import runtime_code  # noqa: F401  (provides the runtime's native helpers)
from .codegen.compiler import lower
from .codegen.jit import optimized_ir
from .hlo.cost_analysis import cost_analysis
from .hlo.feeds import feed_instructions
from .hlo.ir import HloModule
from .hlo.verifier import verify
from .passes.dynamic_padder import DynamicSignature, is_dynamic_module, pad_dynamic
from .program import as_module, compile_program
from .runtime import abi, allocator, c_memory, interrupt, threads
from .runtime.feeds import InfeedQueue, OutfeedQueue, make_infeed_service, make_outfeed_service
from .runtime.feeds import queues_for as feed_queues
from .shape import Shape, from_buffer, to_buffer

__all__ = ["Executable", "DynamicExecutable", "MemoryAnalysis", "jit"]

_ENTRY = abi.ENTRY
_MAX_IDLE_FRAMES = 4          # idle call frames (pointer arrays + temp arena) kept per executable
#: The native fast path (xlac.codegen.fast_call) allocates result leaves of at
#: most this many bytes through numpy (malloc's free lists recycle them); bigger
#: ones, and padded layouts, come from the pool through ``_fast_result``.
FAST_RESULT_MAX = 64 << 10
#: A temp arena up to this big is taken for the fast path when the executable is
#: made; a bigger one on its first call (an executable never called holds none).
FAST_TEMP_MAX = 1 << 20
#: ... and whose parameters and results are at most this many (their pointers live
#: on the native stack).
FAST_MAX_BUFFERS = 1024


@dataclass(frozen=True)
class MemoryAnalysis:
    """What ``exe.memory_analysis()`` returns (jax's ``CompiledMemoryStats`` field names)."""

    argument_size_in_bytes: int
    output_size_in_bytes: int
    alias_size_in_bytes: int
    temp_size_in_bytes: int
    generated_code_size_in_bytes: int

    @property
    def peak_memory_in_bytes(self) -> int:
        """Arguments, results not aliased to an argument, and the temp arena."""
        return (self.argument_size_in_bytes + self.output_size_in_bytes
                - self.alias_size_in_bytes + self.temp_size_in_bytes)


def _leaf_bytes(shape: Shape) -> int:
    return sum(s.byte_size() for s in (shape.leaves() if shape.is_tuple else [shape]) if s.is_array)


# ---------------------------------------------------------------------------------------
# Calling
# ---------------------------------------------------------------------------------------

class _Frame:
    """What one call needs besides the arrays: the results/params pointer arrays
    and a temp arena. Frames are reused; concurrent calls never share one."""

    __slots__ = ("ptrs", "results_addr", "params_addr", "temp", "temp_addr")

    def __init__(self, n_results: int, n_params: int, temp_size: int):
        self.temp = None                 # __del__ runs even when acquiring the arena failed
        self.ptrs = c_memory.array(ctypes.c_void_p, length=max(1, n_results + n_params))
        self.results_addr = ctypes.addressof(self.ptrs)
        self.params_addr = self.results_addr + ctypes.sizeof(ctypes.c_void_p) * n_results
        if temp_size > 0:
            self.temp = allocator.acquire_temp(temp_size)
            self.temp_addr = self.temp.address
        else:
            self.temp = None
            self.temp_addr = None

    def __del__(self):
        temp, self.temp = self.temp, None
        if temp is not None:
            try:
                allocator.release(temp)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass


def _c_strides(dims: tuple, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for d in reversed(dims):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def _fast_spec(shape: Shape):
    """(dtype, dims, C strides, alignment mask, nbytes) for an array shape with the
    default layout (arguments matching it are passed as they are), else None."""
    if not shape.is_array or not shape.has_default_layout() \
            or shape.buffer_element_count() != shape.element_count():
        return None
    dtype = shape.dtype
    return (dtype, shape.dimensions, _c_strides(shape.dimensions, dtype.itemsize),
            shape.element_type.component_type.byte_size - 1, shape.byte_size())


def _exports_buffer(dtype: np.dtype) -> bool:
    """Whether arrays of ``dtype`` export a Python buffer (ml_dtypes' bf16 does not)."""
    try:
        ctypes.c_char.from_buffer(np.empty(1, dtype))
        return True
    except (TypeError, ValueError):
        return False


def _interrupted(blocks) -> None:
    """A call that Ctrl-C stopped: its results are garbage; give their blocks
    back and raise ``KeyboardInterrupt`` (Python's own handler, which SIGINT
    also reached, may raise it first: the flag is cleared by the next call)."""
    interrupt.clear()
    for block in blocks:
        if isinstance(block, allocator.Block):
            allocator.release(block)
    raise KeyboardInterrupt


_MAIN_THREAD = threading.main_thread().ident
_arm = interrupt.arm
#: Runs Python's pending signal handlers (a noted Ctrl-C raises KeyboardInterrupt).
_check_signals = ctypes.pythonapi.PyErr_CheckSignals
_get_ident = threading.get_ident
_ndarray = np.ndarray
_empty = np.empty
_addressof = ctypes.addressof
_c_char = ctypes.c_char
_errors = threads._errors
_wrap = allocator.wrap


class Executable:
    """A JIT-compiled module. See the module docstring for calling conventions."""

    def __init__(self, module, optimize: bool = True, *, num_threads: int | None = None,
                 donate_argnums=()):
        if num_threads is None:
            num_threads = threads.default_num_threads()
        if isinstance(num_threads, bool) or not isinstance(num_threads, (int, np.integer)) \
                or num_threads < 1:
            raise ValueError(f"num_threads must be a positive integer, got {num_threads!r}")
        self.num_threads = int(num_threads)
        t0 = time.perf_counter()
        # Guard-page mode's results are not 64-byte aligned (see xlac.runtime.allocator).
        program, source, mod, lowered = compile_program(module, optimize,
                                                         aligned_results=allocator.results_aligned())
        self.compile_time_s = time.perf_counter() - t0
        for target, api_version, instruction in program.custom_calls:   # registered, callable so
            custom_calls.check_target(target, api_version, instruction)
        self.from_cache = source
        self.optimize = optimize
        self._program = program
        self._source = module
        self._module = mod
        self._parameters = None
        self._fn = _ENTRY(program.address)
        self._general_fn = None          # compiled for unaligned results, on first need
        # Introspection: this compilation's lowering without its LLVM module (see
        # ``lowered``), or made on first use.
        self._lowered = lowered
        self._llvm_ir = None
        self._optimized_ir = None

        # -- threads, and Ctrl-C for calls from the main thread ----------------------------
        self._opts = threads.make_run_options(self.num_threads)
        self._opts_addr = ctypes.addressof(self._opts)
        # Code that polls opts->cancel gets the flag Ctrl-C sets, in calls from
        # the main thread (None: such calls run to their end, as short ones do).
        self._cancel = interrupt.flag_view() if program.polls_cancel else None
        self._main_opts_addr = self._opts_addr
        if self._cancel is not None:
            self._main_opts = threads.make_run_options(self.num_threads)
            self._main_opts.cancel = ctypes.cast(interrupt.flag_address(),
                                                 ctypes.POINTER(ctypes.c_int32))
            self._main_opts_addr = ctypes.addressof(self._main_opts)

        # -- infeed and outfeed: queues, and the services that serve them -----------------
        self._infeed = self._outfeed = None
        self._feed_services = ()
        feed_list = program.feeds if program.feeds is not None else feed_instructions(self.module)
        if feed_list:
            self._install_feeds(feed_list)

        # -- parameters ------------------------------------------------------------------
        self.parameter_shapes: list[Shape] = list(program.param_shapes)
        self._nparams = len(self.parameter_shapes)
        self._labels = [f"parameter {k}" + (f" ({nm})" if nm else "")
                        for k, nm in enumerate(program.param_names)]
        self._slots = []                 # first params[] slot of each parameter
        slot = 0
        for s in self.parameter_shapes:
            self._slots.append(slot)
            slot += len(s.leaves()) if s.is_tuple else 1
        self._nslots = slot
        self._fast = [_fast_spec(s) if not s.is_tuple else None for s in self.parameter_shapes]
        self._simple_params = all(s is not None for s in self._fast) and slot == self._nparams
        if allocator.guard_pages_enabled():       # every argument copied against a guard page
            self._simple_params, self._leaf_buffer = False, allocator.guard_arguments(self._leaf_buffer)

        # -- results ---------------------------------------------------------------------
        self.result_shape: Shape = program.result_shape
        self._result_leaves = program.result_leaves
        self._nresults = len(self._result_leaves)
        self._rspecs = []                # (size class or 0, dims, dtype, default layout, shape)
        for s in self._result_leaves:
            if s.is_token:
                self._rspecs.append((0, None, None, False, s, None))
                continue
            nbytes = s.byte_size()
            default = s.has_default_layout() and s.buffer_element_count() == s.element_count()
            size = allocator.result_block_size(nbytes)   # -1: a plain np.empty (allocator.SMALL_RESULT)
            if size < 0 and not (default and _exports_buffer(s.dtype)):
                size = allocator.size_class(nbytes)
            self._rspecs.append((size, s.dimensions, s.dtype, default, s,
                                 allocator.owner_class(size) if size > 0 else None))
        self._single = not self.result_shape.is_tuple
        self.temp_size = program.temp_size
        self._frames: list[_Frame] = []
        # Buffers that can never fit this machine are refused now, by name.
        allocator.check_buffers(self._buffers(), f"module {self._module_name()}")

        # -- donation --------------------------------------------------------------------
        if isinstance(donate_argnums, (int, np.integer)) and not isinstance(donate_argnums, bool):
            donate_argnums = (donate_argnums,)
        donate = []
        for p in donate_argnums:
            if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
                raise TypeError(f"donate_argnums must be parameter numbers, got {p!r}")
            p = int(p)
            if not -self._nparams <= p < self._nparams:
                raise ValueError(f"donate_argnums: {p} is not a parameter number "
                                 f"({self._module_name()} has {self._nparams} parameters)")
            donate.append(p % self._nparams)
        self.donate_argnums = tuple(sorted(set(donate)))
        #: (result leaf, parameter) pairs whose memory is shared when the argument allows
        self.donations = []
        for p in self.donate_argnums:
            k = program.donatable.get(p)
            if k is not None and self._fast[p] is not None and all(k != kk for kk, _ in self.donations):
                self.donations.append((k, p))      # one donated argument per result
        self._donate_by_result = {k: p for k, p in self.donations}
        self._state = (self._nparams, self._frames, self._simple_params,
                       [f[:4] for f in self._fast] if self._simple_params else None,
                       self._nresults, self._rspecs, self._donate_by_result, self._fn,
                       self._opts_addr, self._single, allocator.pool().acquire,
                       self._main_opts_addr, self._cancel)

        # -- the native fast path ----------------------------------------------------------
        self._fast_call_spec = self._make_fast_call()
        self._fast_call = ctypes.addressof(self._fast_call_spec) if self._fast_call_spec is not None else 0

    def _make_fast_call(self):
        """The :class:`~xlac.codegen.fast_call.CallSpec` of this executable's
        native fast path, or None where every call takes the Python path: a
        tuple, token or non-default-layout parameter, guard-page mode, donation,
        infeed/outfeed, a token or nested tuple result, more than
        ``FAST_MAX_BUFFERS`` parameters and results, or an interpreter whose
        layouts it does not know.  Result leaves up to ``FAST_RESULT_MAX``
        bytes are made by numpy (a non-default layout as a strided array over
        aligned memory, the view the Python path returns); bigger ones, and
        padded layouts, come from the pool (``_fast_result``)."""
        if not self._simple_params or self._donate_by_result or self._feed_services \
                or self._nparams + self._nresults > FAST_MAX_BUFFERS:
            return None
        shape = self.result_shape
        if shape.is_tuple and any(s.is_tuple for s in shape.tuple_shapes):
            return None
        results = []
        for size, dims, dtype, default, s, _owner in self._rspecs:
            if s.is_token:
                return None
            nbytes = s.byte_size()
            unpadded = s.buffer_element_count() == s.element_count()
            if size > 0 and (nbytes > FAST_RESULT_MAX or not unpadded):
                results.append((dtype, dims, nbytes, True, None, True))
            elif default:
                results.append((dtype, dims, nbytes, size > 0, None, False))    # pool-sized: 64-byte aligned
            elif unpadded and nbytes > 0:
                strides = from_buffer(np.empty(s.element_count(), dtype), s).strides
                results.append((dtype, dims, nbytes, True, strides, False))
            else:
                return None
        if not fast_call.install(Executable, Executable._slow_call, Executable._finish_fast_call,
                                 Executable._fast_result):
            return None
        # The fast path's own temp arena (concurrent calls take the Python path's
        # frames); a big one is made by the first call (``_slow_call``).
        later = self.temp_size > FAST_TEMP_MAX
        self._fast_call_frame = None if later else _Frame(0, 0, self.temp_size)
        polls = self._cancel is not None
        return fast_call.make_spec(
            [f[:4] for f in self._fast], results, shape.is_tuple, self._program.address,
            self._opts_addr, self._main_opts_addr,
            interrupt.flag_address() if polls else None, interrupt.arm_address() if polls else None,
            None if later else self._fast_call_frame.temp_addr, temp_wanted=later)

    @property
    def fast_calls(self) -> int:
        """How many calls the native fast path made (0 for an executable that has none)."""
        return self._fast_call_spec.calls if self._fast_call_spec is not None else 0

    @property
    def has_fast_call(self) -> bool:
        """Whether calls with C-contiguous arrays of the parameters' dtypes and shapes
        take the native fast path (see :mod:`xlac.codegen.fast_call`)."""
        return self._fast_call_spec is not None

    def _slow_call(self, *args):
        """What the fast path calls for anything it does not do itself: the
        Python path, after making the fast path's temp arena if it waits for one."""
        spec = self._fast_call_spec
        if spec is not None and spec.temp_wanted:
            frame = _Frame(0, 0, self.temp_size)
            # Asked again: making the frame runs Python code, during which another
            # thread's call may have made one (and fast calls may be using it).
            if spec.temp_wanted:
                self._fast_call_frame = frame
                spec.temp = frame.temp_addr
                spec.temp_wanted = 0
        return self._call(*args)

    _slow_call.__qualname__ = "Executable.__call__"     # as the Python path's errors say

    def _fast_result(self, k: int) -> np.ndarray:
        """Result leaf ``k`` of a fast call, in memory from the pool (the array
        the Python path returns, whose data pointer is the block's address); a
        failed allocation raises what the Python path raises (the call's error)."""
        try:
            block = allocator.pool().acquire(self._rspecs[k][0])
        except allocator.OutOfMemory as e:      # free when nothing is raised (Python 3.11)
            raise self._out_of_memory(e) from None
        return self._result_array(k, block, (), None)

    def _finish_fast_call(self, result, stopped: bool):
        """After a fast call a callback recorded an error or Ctrl-C stopped it
        (the native code has cleared the flag): what the Python path does then
        (raise the error, or KeyboardInterrupt)."""
        if _errors:
            self._raise_pending(())
        if stopped:
            raise KeyboardInterrupt
        return result

    # -- devices ---------------------------------------------------------------------
    def set_device(self, replica_id: int, num_replicas: int, partition_id: int = 0, num_partitions: int = 1,
                   collective=None, cancel: int | None = None) -> None:
        """Run as device ``(replica_id, partition_id)`` of ``num_replicas x
        num_partitions`` (XLA's counting): what ``replica-id`` and
        ``partition-id`` return, and the ``collective`` service (an
        ``abi.COLLECTIVE`` callback, kept alive here) collectives call.
        ``cancel``: the address of an int32 flag the code polls instead of the
        one Ctrl-C sets; whoever sets it owns it (a call it stops returns early
        without an error, and its results are to be dropped).  Used by the
        device processes of ``xlac.devices``, whose parent stops their calls."""
        if not (0 <= replica_id < num_replicas and 0 <= partition_id < num_partitions):
            raise ValueError(f"device (replica {replica_id}, partition {partition_id}) is not one of "
                             f"{num_replicas} replicas x {num_partitions} partitions")
        self._collective = collective
        for opts in {id(o): o for o in (self._opts, getattr(self, "_main_opts", self._opts))}.values():
            opts.replica_id, opts.num_replicas = replica_id, num_replicas
            opts.partition_id, opts.num_partitions = partition_id, num_partitions
            if collective is not None:
                opts.collective = collective
            if cancel is not None:
                opts.cancel = ctypes.cast(cancel, ctypes.POINTER(ctypes.c_int32))

    # -- infeed and outfeed ------------------------------------------------------------
    def _install_feeds(self, feed_list: list) -> None:
        """Queues and services for the module's infeeds and outfeeds.  A failed
        transfer stops its call: the service sets the call's cancel flag (the
        Ctrl-C flag on the main thread, a flag of the calling thread's own run
        options on others), so no later infeed or outfeed of the call runs."""
        self._infeed, self._outfeed = feed_queues(self._module_name(), feed_list)
        self._feed_local = threading.local()
        me = weakref.ref(self)

        def stop():
            exe = me()
            if exe is not None:
                exe._stop_call()

        infeed, keep_in = make_infeed_service(self._infeed, stop)
        outfeed, keep_out = make_outfeed_service(self._outfeed, stop)
        self._feed_services = (infeed, keep_in, outfeed, keep_out)     # alive as long as the code
        for opts in {id(o): o for o in (self._opts, getattr(self, "_main_opts", self._opts))}.values():
            opts.infeed, opts.outfeed = infeed, outfeed

    def _thread_opts(self) -> int:
        """The address of this thread's run options (a copy of the executable's
        whose ``cancel`` is a flag of this thread), the flag cleared."""
        local = self._feed_local
        opts = getattr(local, "opts", None)
        if opts is None:
            flag = (ctypes.c_int32 * 1)()
            opts = abi.RunOptions.from_buffer_copy(self._opts)
            opts.cancel = ctypes.cast(flag, ctypes.POINTER(ctypes.c_int32))
            local.opts, local.flag = opts, flag
        local.flag[0] = 0
        return ctypes.addressof(opts)

    def _stop_call(self) -> None:
        """Make the calling thread's running call stop at its next check."""
        if self._cancel is not None and _get_ident() == _MAIN_THREAD:
            self._cancel[0] = 1
            return
        flag = getattr(self._feed_local, "flag", None)
        if flag is not None:
            flag[0] = 1

    @property
    def infeed(self) -> InfeedQueue:
        """The values the module's infeeds read (``exe.infeed.put(value)``; see
        :mod:`xlac.runtime.feeds`).  ``exe.infeed.timeout`` (seconds, default 60)
        is how long a running infeed waits for a value."""
        if self._infeed is None:
            self._infeed, self._outfeed = feed_queues(self._module_name(), [])
        return self._infeed

    @property
    def outfeed(self) -> OutfeedQueue:
        """The values the module's outfeeds wrote, oldest first (``exe.outfeed.get(timeout=...)``)."""
        if self._outfeed is None:
            self._infeed, self._outfeed = feed_queues(self._module_name(), [])
        return self._outfeed

    # -- introspection ---------------------------------------------------------------
    @property
    def _jit(self):
        """The :class:`~xlac.codegen.jit.JitFunction` (shared by executables of one module)."""
        return self._program.jit

    @property
    def module(self) -> HloModule:
        """The module as given (parsed on first use when given as text)."""
        if self._module is None:
            self._module = as_module(self._source)
        return self._module

    @property
    def parameters(self):
        if self._parameters is None:
            self._parameters = self.module.entry.parameters
        return self._parameters

    @property
    def argument_shapes(self) -> list[Shape]:
        """The shape of each argument a call takes (every executable kind has
        this: ``xlac run --random-inputs`` makes arrays of these shapes)."""
        return [p.shape for p in self.parameters]

    @property
    def lowered(self):
        """The :class:`~xlac.codegen.compiler.Lowered` module (the optimised HLO,
        its buffer assignment, ...): the one this executable's compilation made,
        or, when its code came from a cache (which keeps only code and calling
        metadata), the module lowered again on first use, under the settings of
        then (``XLAC_EXACT_MATH``, ...), and kept.  Kept without its LLVM module
        (``llvm_module`` is None): that is one Python object per LLVM
        instruction, about 25 MB for a training step of 7,000 HLO
        instructions; :attr:`llvm_ir` and :attr:`optimized_llvm_ir` lower the
        module again for it."""
        if self._lowered is None:
            self._lowered = self._from_lowering_again(lambda lowered: lowered.without_llvm_module())
        return self._lowered

    def _from_lowering_again(self, what):
        """``what(lowering)`` of the module lowered again (under the settings of
        now); the rest of that lowering freed before this returns: its LLVM
        module torn down and the emission's cycles collected, as
        ``compile_program`` does."""
        p = self._program
        lowered = lower(self.module, entry_name=p.entry_name, optimize=self.optimize,
                        aligned_results=p.assumes_aligned_results, native=True)
        try:
            return what(lowered)
        finally:
            lowered.release_llvm_module()
            del lowered
            gc.collect(1)

    @property
    def llvm_ir(self) -> str:
        """LLVM IR as emitted, before optimisation (the module lowered again on
        first use, under the settings of then, see :attr:`lowered`; the text is
        kept)."""
        if self._llvm_ir is None:
            self._llvm_ir = self._from_lowering_again(lambda lowered: lowered.llvm_ir)
        return self._llvm_ir

    @property
    def optimized_llvm_ir(self) -> str:
        """LLVM IR after LLVM's optimisation: the module lowered again and its IR optimised on
        first use (split into parts as a compilation that is not streamed
        splits it, each part through the same pipeline; a streamed
        compilation may group the kernels into other parts; every part,
        each headed by a ``; ---- part K of N ----`` comment, when there are
        several), then kept by this executable."""
        if self._optimized_ir is None:
            self._optimized_ir = self._from_lowering_again(
                lambda lowered: optimized_ir(lowered.llvm_module, lowered.entry_name))
        return self._optimized_ir

    @property
    def optimized_hlo(self) -> HloModule:
        return self.lowered.hlo

    @property
    def compile_stats(self) -> dict:
        """Where the code came from and the seconds of each phase of its compilation
        (``lower``, ``split``, ``optimize``, ``codegen``, ``backend``, ``load``,
        ``total``; ``optimize`` and ``codegen`` are summed over the parts of a
        module compiled in parts on several threads, ``backend`` is the wall time
        they took together; a disk-cache hit records its own ``load`` beside the
        original compilation's phases), and ``passes_s``: the seconds each HLO
        pass took, by name (part of ``lower``)."""
        p = self._program
        stats = {"from_cache": self.from_cache, "compile_time_s": self.compile_time_s,
                 "object_bytes": p.object_bytes, "temp_size": self.temp_size}
        stats.update({f"{k}_s": v for k, v in p.timings.items()})
        if self.from_cache == "disk":
            stats["load_s"] = p.jit.timings.get("load")
        return stats

    def cost_analysis(self) -> dict:
        """Flops, transcendentals and bytes accessed of one call, counted on the
        optimised module as XLA's ``HloCostAnalysis`` does, under jax's keys
        (``"flops"``, ``"transcendentals"``, ``"bytes accessed"``, ``"bytes
        accessed{k}{}"``, ``"bytes accessedout{}"``; floats).  See
        :mod:`xlac.hlo.cost_analysis` for how each op counts.  The first call on
        code that came from a cache lowers the module again (see :attr:`lowered`)."""
        return cost_analysis(self.lowered.hlo)

    def memory_analysis(self) -> MemoryAnalysis:
        """The memory one call uses, in bytes, under the field names of jax's
        ``compiled.memory_analysis()``: ``argument_size_in_bytes`` (every
        parameter's buffers), ``output_size_in_bytes`` (every result leaf's),
        ``alias_size_in_bytes`` (results that may take over a donated argument's
        memory, see ``donate_argnums``), ``temp_size_in_bytes`` (the temp arena
        of buffer assignment) and ``generated_code_size_in_bytes`` (the object
        code).  Sizes are of the laid-out buffers (padded layouts included)."""
        p = self._program
        args = sum(_leaf_bytes(s) for s in p.param_shapes)
        outs = sum(s.byte_size() for s in p.result_leaves if s.is_array)
        alias = sum(p.result_leaves[k].byte_size() for k, _ in self.donations)
        return MemoryAnalysis(argument_size_in_bytes=args, output_size_in_bytes=outs,
                              alias_size_in_bytes=alias, temp_size_in_bytes=self.temp_size,
                              generated_code_size_in_bytes=p.object_bytes)

    # -- calling ------------------------------------------------------------------------
    def _call(self, *args):
        """The Python path of a call (see the module docstring); the native fast
        path (``__call__``, :mod:`xlac.codegen.fast_call`) calls it for whatever
        it does not handle itself."""
        try:
            (nparams, frames, simple, fast, nres, rspecs, donating, fn, opts_addr, single,
             acquire, main_opts_addr, cancel) = self._state
            # Calls on the main thread pass the flag Ctrl-C sets (opts->cancel);
            # others cannot be interrupted, as only the main thread gets KeyboardInterrupt.
            main = cancel is not None and _get_ident() == _MAIN_THREAD
            if main:
                _arm()                       # ~0.3 us: code that polls the flag runs long anyway
                cancel[0] = 0                # a Ctrl-C already raised KeyboardInterrupt ...
                _check_signals()             # ... or is noted and raises now (none is lost)
                opts_addr = main_opts_addr
            elif self._feed_services:
                opts_addr = self._thread_opts()  # a failed transfer stops this call through its own flag
            if len(args) != nparams:
                raise TypeError(f"{self._module_name()} takes {nparams} argument(s) "
                                f"({self._signature()}), got {len(args)}")
            try:
                frame = frames.pop()
            except IndexError:
                frame = _Frame(nres, self._nslots, self.temp_size)
            ptrs = frame.ptrs
            keep = None                     # copies made for the call (alive until it returns)
            if simple:
                slot = nres
                for a, (dt, dims, strides, mask) in zip(args, fast):
                    if type(a) is _ndarray and a.dtype is dt and a.shape == dims and a.strides == strides:
                        try:
                            addr = _addressof(_c_char.from_buffer(a))
                        except (TypeError, ValueError):      # read-only or empty
                            addr = a.ctypes.data
                        if not addr & mask:
                            ptrs[slot] = addr
                            slot += 1
                            continue
                    k = slot - nres
                    buf = self._leaf_buffer(self._labels[k], self.parameter_shapes[k], a)
                    if keep is None:
                        keep = []
                    keep.append(buf)
                    ptrs[slot] = buf.ctypes.data
                    slot += 1
            else:
                keep = []
                for k in range(nparams):
                    base = nres + self._slots[k]
                    for j, buf in enumerate(self._argument_leaves(k, args[k])):
                        keep.append(buf)
                        ptrs[base + j] = buf.ctypes.data if buf is not None else None

            if _errors:                     # left by a native call made outside an Executable
                threads.take_error()
            if single and not donating:
                size, dims, dtype, default, shape, owner_cls = rspecs[0]
                if size < 0:
                    out = _empty(dims, dtype)
                    ptrs[0] = _addressof(_c_char.from_buffer(out))
                    fn(frame.results_addr, frame.params_addr, frame.temp_addr, opts_addr)
                    if len(frames) < _MAX_IDLE_FRAMES:
                        frames.append(frame)
                    if _errors:
                        self._raise_pending(())
                    if main and cancel[0]:
                        _interrupted(())
                    return out
                if size:
                    block = acquire(size)
                    ptrs[0] = block.address
                else:
                    block = ptrs[0] = None
                fn(frame.results_addr, frame.params_addr, frame.temp_addr, opts_addr)
                if len(frames) < _MAX_IDLE_FRAMES:
                    frames.append(frame)
                if _errors:
                    self._raise_pending([block])
                if main and cancel[0]:
                    _interrupted([block])
                if default and block is not None:
                    owner = owner_cls.from_address(block.address)
                    owner._block = block
                    return _ndarray(dims, dtype, owner)
                return self._result_array(0, block, args, None)

            # Results: donated arguments' memory, or blocks from the pool.
            donated = self._donated_arguments(args, ptrs) if donating else None
            blocks = []
            for k in range(nres):
                if donated is not None and k in donated:
                    blocks.append(None)
                    ptrs[k] = ptrs[nres + self._slots[donating[k]]]
                    continue
                size = rspecs[k][0]
                if size > 0:
                    block = acquire(size)
                    blocks.append(block)
                    ptrs[k] = block.address
                elif size < 0:
                    block = _empty(rspecs[k][1], rspecs[k][2])
                    blocks.append(block)
                    ptrs[k] = _addressof(_c_char.from_buffer(block))
                else:
                    blocks.append(None)
                    ptrs[k] = None
            if donated is not None and self._program.assumes_aligned_results \
                    and any(ptrs[k] & 63 for k in donated):
                fn = self._general_entry()
            fn(frame.results_addr, frame.params_addr, frame.temp_addr, opts_addr)
            if len(frames) < _MAX_IDLE_FRAMES:
                frames.append(frame)
            if _errors:
                self._raise_pending(blocks)
            if main and cancel[0]:
                _interrupted(blocks)
            if single:
                return self._result_array(0, blocks[0], args, donated)
            arrays = iter([self._result_array(k, blocks[k], args, donated) for k in range(nres)])
            return _restructure(self.result_shape, arrays)
        except allocator.OutOfMemory as e:      # free when nothing is raised (Python 3.11)
            raise self._out_of_memory(e) from None

    _call.__qualname__ = "Executable.__call__"      # what errors about the call's arguments say
    __call__ = _call            # the native fast call once installed (first executable made)

    def _buffers(self) -> list:
        """(name, bytes) of every buffer a call allocates: result leaves and the temp arena."""
        out = [(f"result {k} ({shape})", shape.byte_size())
               for k, shape in enumerate(self._result_leaves) if shape.is_array]
        if self.temp_size:
            out.append(("the temp arena", self.temp_size))
        return out

    def _out_of_memory(self, e: allocator.OutOfMemory) -> MemoryError:
        """``e`` with the buffers it could have been for named."""
        names = [name for name, nbytes in self._buffers()
                 if e.nbytes in (nbytes, allocator.size_class(nbytes), allocator.result_block_size(nbytes))]
        which = " or ".join(names) or "a buffer"
        return allocator.OutOfMemory(f"module {self._module_name()}: {which}: {e}", e.nbytes)

    def _general_entry(self):
        """The entry of this module compiled for result buffers of any alignment
        (a donated argument's memory is not the pool's), compiled on first need."""
        if self._general_fn is None:
            program = compile_program(self._module if self._module is not None else self._source,
                                      self.optimize, aligned_results=False).program
            if program.temp_size != self.temp_size:
                raise AssertionError("the general program's temp size differs")
            self._general_program = program          # keeps its code alive
            self._general_fn = _ENTRY(program.address)
        return self._general_fn

    @staticmethod
    def _raise_pending(blocks) -> None:
        """Re-raise an exception a callback recorded during this thread's native call."""
        err = threads.take_error()
        if err is not None and _get_ident() == _MAIN_THREAD:
            interrupt.clear()            # a service stopped the call (or Ctrl-C did): the flag has done its job
        if err is not None:
            for block in blocks:
                if isinstance(block, allocator.Block):
                    allocator.release(block)
            raise err

    def _result_array(self, k: int, block, args, donated):
        size, dims, dtype, default, shape, owner_cls = self._rspecs[k]
        if shape.is_token:
            return None
        if donated is not None and k in donated:
            return args[self._donate_by_result[k]].view()
        if size < 0:                                # a small result: the array itself
            return block
        if block is None:                           # zero bytes
            return np.empty(dims, dtype)
        if default:
            return _wrap(block, dims, dtype, owner_cls)
        return from_buffer(_wrap(block, (shape.buffer_element_count(),), dtype, owner_cls), shape)

    def _donated_arguments(self, args, ptrs) -> set | None:
        """The result leaves that take their donated argument's memory this call:
        the argument was passed as is (no copy), is writeable, and overlaps no
        other argument."""
        nres = self._nresults
        out = None
        for k, p in self.donations:
            a = args[p]
            addr = ptrs[nres + self._slots[p]]
            if type(a) is not _ndarray or addr is None or not a.flags.writeable \
                    or not a.flags.c_contiguous or a.ctypes.data != addr:
                continue
            end = addr + a.nbytes
            overlap = False
            for q in range(self._nparams):
                if q == p:
                    continue
                other = args[q]
                qa = ptrs[nres + self._slots[q]]
                if qa is None:
                    continue
                qn = other.nbytes if isinstance(other, _ndarray) else self.parameter_shapes[q].byte_size()
                if qa < end and addr < qa + max(qn, 1):
                    overlap = True
                    break
            if not overlap:
                if out is None:
                    out = set()
                out.add(k)
        return out

    def _argument_leaves(self, k: int, arg) -> list:
        shape = self.parameter_shapes[k]
        label = self._labels[k]
        if not shape.is_tuple:
            return [self._leaf_buffer(label, shape, arg)]
        out = []

        def flatten(s: Shape, a, where: str):
            if s.is_tuple:
                if not isinstance(a, (tuple, list)) or len(a) != len(s.tuple_shapes):
                    raise TypeError(f"{label}: expected a tuple {s}{where}, got {_describe(a)}")
                for i, (ss, aa) in enumerate(zip(s.tuple_shapes, a)):
                    flatten(ss, aa, f"{where}{{{i}}}")
            else:
                out.append(self._leaf_buffer(f"{label}{where}", s, a))

        flatten(shape, arg, "")
        return out

    @staticmethod
    def _leaf_buffer(label: str, shape: Shape, arg) -> np.ndarray | None:
        """The argument laid out as ``shape`` says (as is when it already is), or a
        TypeError/ValueError naming the parameter."""
        if shape.is_token:
            return None
        if isinstance(arg, (bool, int, float, complex)) and not isinstance(arg, np.generic):
            arg = np.asarray(arg, dtype=shape.dtype)  # Python scalars take the parameter's type
        a = np.asarray(arg)
        if a.dtype != shape.dtype:
            raise TypeError(f"{label}: expected dtype {shape.dtype} ({shape}), got {a.dtype}")
        if a.shape != shape.dimensions:
            raise ValueError(f"{label}: expected shape {shape.dimensions} ({shape}), got {a.shape}")
        if shape.has_default_layout() and shape.buffer_element_count() == shape.element_count() \
                and a.flags.c_contiguous and a.flags.aligned:
            return a
        return to_buffer(a, shape)

    def _module_name(self) -> str:
        return self._program.module_name

    def _signature(self) -> str:
        return ", ".join(f"{nm or k}: {s}" for k, (nm, s) in
                         enumerate(zip(self._program.param_names, self.parameter_shapes)))

    def __repr__(self) -> str:
        return f"<xlac.Executable {self._module_name()}({self._signature()}) -> {self.result_shape}>"


def _describe(x) -> str:
    if isinstance(x, np.ndarray):
        return f"an array {x.dtype}{list(x.shape)}"
    return type(x).__name__


def _restructure(shape: Shape, arrays):
    if shape.is_tuple:
        return tuple(_restructure(s, arrays) for s in shape.tuple_shapes)
    return next(arrays)


# ---------------------------------------------------------------------------------------
# Dynamic dimensions: actual sizes in and out, padded inside
# ---------------------------------------------------------------------------------------

class DynamicExecutable:
    """A module with dynamic dimensions: called with arrays of their actual
    sizes, returning results of their actual sizes (see the module docstring).

    ``parameter_shapes``/``result_shape`` are the module's (dynamic) ones;
    ``padded`` is the :class:`Executable` of the padded module, whose
    parameters are the padded arrays then one ``s32`` size per dynamic
    dimension, and whose result is ``(padded result, sizes...)``
    (``signature``: a :class:`~xlac.passes.dynamic_padder.DynamicSignature`).
    Other attributes (``compile_stats``, ``lowered``, ...) are the padded
    executable's."""

    def __init__(self, module: HloModule, optimize: bool = True, *, num_threads: int | None = None,
                 donate_argnums=()):
        verify(module)
        module = module.clone()
        static = DynamicSignature(tuple(p.shape for p in module.entry.parameters), module.entry.root.shape, (), ())
        self.signature = pad_dynamic(module) or static
        self.padded = Executable(module, optimize, num_threads=num_threads, donate_argnums=donate_argnums)
        self.parameter_shapes = list(self.signature.parameter_shapes)
        self.result_shape = self.signature.result_shape
        names = self.padded._program.param_names
        self._labels = [f"parameter {k}" + (f" ({names[k]})" if names[k] else "")
                        for k in range(len(self.parameter_shapes))]

    def __getattr__(self, name):
        return getattr(self.padded, name)

    @property
    def argument_shapes(self) -> list[Shape]:
        """The module's parameter shapes (a dynamic dimension at its bound)."""
        return [s.static() for s in self.parameter_shapes]

    def __call__(self, *args):
        n = len(self.parameter_shapes)
        if len(args) != n:
            raise TypeError(f"{self.padded._module_name()} takes {n} argument(s), got {len(args)}")
        arrays = [_dynamic_argument(label, shape, a)
                  for label, shape, a in zip(self._labels, self.parameter_shapes, args)]
        sizes = [np.int32(arrays[p].shape[d]) for p, d in self.signature.parameter_sizes]
        padded = [_padded(a, s) for a, s in zip(arrays, self.parameter_shapes)]
        out = self.padded(*padded, *sizes)
        if not self.signature.result_sizes:
            return out
        return _sliced(self.result_shape, out[0], out[1:], self.signature.result_sizes)

    def __repr__(self) -> str:
        params = ", ".join(str(s) for s in self.parameter_shapes)
        return f"<xlac.DynamicExecutable {self.padded._module_name()}({params}) -> {self.result_shape}>"


def _dynamic_argument(label: str, shape: Shape, arg):
    """``arg`` checked against a parameter that may have dynamic dimensions."""
    if not shape.is_dynamic:
        return arg
    a = np.asarray(arg)
    if a.dtype != shape.dtype:
        raise TypeError(f"{label}: expected dtype {shape.dtype} ({shape}), got {a.dtype}")
    ok = a.ndim == shape.rank and all(
        n <= b if shape.is_dynamic_dimension(d) else n == b for d, (n, b) in enumerate(zip(a.shape, shape.dimensions)))
    if not ok:
        raise ValueError(f"{label}: expected shape {shape.dimensions}, at most that in the dynamic "
                         f"dimensions ({shape}), got {a.shape}")
    return a


def _padded(a, shape: Shape):
    """``a`` zero-padded to the bounds of ``shape``."""
    if not shape.is_dynamic or a.shape == shape.dimensions:
        return a
    out = np.zeros(shape.dimensions, shape.dtype)
    out[tuple(slice(0, n) for n in a.shape)] = a
    return out


def _sliced(shape: Shape, data, sizes, where):
    """The padded result ``data`` with each leaf cut to its sizes."""
    leaves = list(_restructure_leaves(shape, data))
    cuts = [[slice(None)] * (leaf.rank if leaf.is_array else 0) for leaf in shape.leaves()]
    for (k, d), n in zip(where, sizes):
        cuts[k][d] = slice(0, int(n))
    cut = [leaf[tuple(c)] if isinstance(leaf, np.ndarray) else leaf for leaf, c in zip(leaves, cuts)]
    return _restructure(shape, iter(cut))


def _restructure_leaves(shape: Shape, value):
    if shape.is_tuple:
        for s, v in zip(shape.tuple_shapes, value):
            yield from _restructure_leaves(s, v)
    else:
        yield value


def _as_dynamic_module(x) -> HloModule | None:
    """The module of ``x`` when it has dynamic dimensions (text is parsed only
    when it may: it contains ``<=`` followed by a digit)."""
    if isinstance(x, str) and not _BOUNDED.search(x):
        return None
    module = as_module(x)
    return module if is_dynamic_module(module) else None


_BOUNDED = re.compile(r"<=\s*[0-9]")


def jit(x, *, num_threads: int | None = None, donate_argnums=(), optimize: bool = True) -> Executable:
    """Compile an XlaComputation, HloModule or HLO text for this CPU.

    ``num_threads``: threads for loops the generated code splits into tasks
    (default: the CPUs this process may use, ``len(os.sched_getaffinity(0))``;
    1 runs everything on the calling thread). ``donate_argnums``: parameter
    numbers whose argument memory a result may reuse (see the module docstring:
    a donated argument must not be used afterwards; where donation is not
    possible it is silently ignored). ``optimize=False`` compiles every
    instruction as its own kernel, without simplification or fusion (for
    debugging and as a reference).

    A module with dynamic dimensions gives a :class:`DynamicExecutable`
    (arrays of their actual sizes in and out).

    Raises ``xlac.HloParseError`` for bad text, ``xlac.ShapeError`` for an
    ill-shaped module and ``xlac.UnsupportedError`` ("not supported yet: <op>")
    for an operation the code generator does not handle.
    """
    module = _as_dynamic_module(x)
    if module is not None:
        return DynamicExecutable(module, optimize, num_threads=num_threads, donate_argnums=donate_argnums)
    return Executable(x, optimize, num_threads=num_threads, donate_argnums=donate_argnums)
