"""PJRT_Executable and PJRT_LoadedExecutable: a program compiled by xlac.

``compile`` reads jax's program (:mod:`xlac.pjrt.program`), imports it with
``xlac.parse_stablehlo`` and compiles it with ``xlac.jit``; ``execute`` runs
it on the buffers of one device and returns new buffers, one per output (a
tuple-shaped result is flattened, as PJRT's outputs are).  A program on
several devices is compiled and run by :mod:`xlac.pjrt.multidevice`
(``execute_devices``: one list of buffers per device in, one per device
out).  An executable is its own loaded form: xlac's code is loaded when it is
compiled.

Donation: parameters jax marks donated (``tf.aliasing_output``,
``jax.buffer_donor``) have their argument buffers deleted by ``execute``
(PJRT's contract: a donated buffer is consumed), except those the call lists
in ``non_donatable_input_indices``.
"""
from __future__ import annotations

import ctypes
import hashlib
import json

import numpy as np

from ..executable import jit
from ..hlo.cost_analysis import cost_analysis
from ..hlo.sharding import replicated
from ..hlo.stablehlo import parse_stablehlo
from ..shape import Shape
from ..runtime import c_memory
from . import capi, handles
from .handles import find as find_handle
from .buffer import TOKEN_CODE, Buffer, type_code_of
from .client import MEMORY_KIND, Client, Device, Strings
from .compile_options import CompileOptions, device_assignment_proto
from .errors import PjrtError, unimplemented
from .host_callbacks import outside_manual_computations, prepare as prepare_host_callbacks, running
from .multidevice import ShardedProgram, compile_program
from .program import Program, hlo_as_stablehlo, hlo_exportable
from .sharding import op_sharding_proto

_SERIAL_MAGIC = b"xlac-pjrt-executable 1\n"


_TOKEN_ARRAY = Shape.array("pred", (0,))


def _leaves(shape: Shape) -> list:
    return list(shape.tuple_shapes) if shape.is_tuple else [shape]


class Executable:
    """A compiled program: ``name``, ``outputs`` (Shapes), the devices it runs on
    (``devices``, in the order of the device assignment; ``device``, the first)."""

    def __init__(self, client: Client, program: Program, options: CompileOptions):
        self.client, self.program, self.options = client, program, options
        count = options.num_replicas * options.num_partitions
        ids = options.device_ids or tuple(range(count))
        if len(ids) != count:
            raise PjrtError(capi.INVALID_ARGUMENT, f"a device assignment of {len(ids)} devices for "
                                                   f"{options.num_replicas} replicas x {options.num_partitions} "
                                                   f"partitions")
        # In logical order (replica-major): devices[i] runs replica i // P, partition i % P.
        self.devices: list = [client.device(i) for i in ids]
        self.device: Device = self.devices[0]
        self.module = parse_stablehlo(program.text)
        self.name = self.module.name
        self.host_callbacks = prepare_host_callbacks(self.module)
        outside = outside_manual_computations(self.module) if self.host_callbacks and count > 1 else []
        if outside:
            raise unimplemented(f"host callbacks (jax.debug.print / pure_callback) in a program on {count} "
                                f"devices outside shard_map (instruction {outside[0].name}): xlac's devices "
                                f"would each call it, XLA calls it once")
        # jax's runtime tokens (of ordered effects) are pred[0] arrays outside the program.
        leaves = _leaves(self.module.result_shape)
        self.outputs = [_TOKEN_ARRAY if s.is_token else s for s in leaves]
        #: Token results (``lax.create_token()`` returned by a program) are TOKEN
        #: buffers to the caller, as XLA's: jax then refuses to read them as arrays.
        self.token_outputs = [s.is_token for s in leaves]
        if any(not s.is_array for s in self.outputs):
            raise unimplemented("a program with a nested tuple output through PJRT")
        self.tuple_result = self.module.result_shape.is_tuple
        self.num_parameters = len(self.module.entry.parameter_shapes())
        self.shardings = None              # (parameters, results) of a program on several devices
        if count == 1:
            self.compiled = jit(self.module)           # one device: in this process
            self.multi = None
        else:
            self.multi = compile_program(self.module, program.text, options.num_replicas, options.num_partitions)
            self.compiled = self.multi.compiled
            if isinstance(self.multi, ShardedProgram):
                self.shardings = (self.multi.params, self.multi.results)
        self.fingerprint = hashlib.sha256(program.text.encode() + repr(options).encode()).hexdigest()
        self.deleted = False
        #: Runs through :meth:`execute_handles`: one device, nothing donated, no host callbacks.
        self.lean = count == 1 and not program.donated and not self.host_callbacks
        self._result_codes = [type_code_of(s.element_type) for s in self.outputs]
        #: Each result's memory kind (None: the device's memory); whether any is named.
        self.result_kinds = [_kind_at(program.result_kinds, k) for k in range(len(self.outputs))]
        self.kinds_named = any(k not in (None, MEMORY_KIND) for k in self.result_kinds)
        for kind in set(self.result_kinds) | set(program.parameter_kinds):
            self.device.memory_of(kind)      # an unknown kind (a TPU's) fails here, naming it
        self._init_c_views()
        self.references = 1                  # the loaded executable's; GetExecutable adds one
        self.handle = handles.new(self, tag=handles.EXECUTABLE_TAG,
                                  fields=(options.num_replicas, options.num_partitions, len(self.outputs)))

    def unref(self) -> None:
        """Drop one holder's reference; the handle goes with the last."""
        self.references -= 1
        if self.references <= 0:
            handles.release(self.handle)

    # -- what the caller reads, kept as C data for the executable's life -----------------
    def _init_c_views(self) -> None:
        self.strings = Strings()
        n = len(self.outputs)
        shown = [(TOKEN_CODE, ()) if token else (type_code_of(s.element_type), s.dimensions)
                 for s, token in zip(self.outputs, self.token_outputs)]
        self.c_output_types = c_memory.array(ctypes.c_int, [code for code, _ in shown])
        dims = [d for _, ds in shown for d in ds]
        self.c_output_dims = c_memory.array(ctypes.c_int64, dims)
        self.c_output_ranks = c_memory.array(ctypes.c_size_t, [len(ds) for _, ds in shown])
        # Each result and parameter's memory kind: the program's (``mhlo.memory_kind``), else
        # the device's memory.
        outputs = [self.result_kinds[k] or MEMORY_KIND for k in range(n)]
        parameters = [_kind_at(self.program.parameter_kinds, k) or MEMORY_KIND for k in range(self.num_parameters)]
        self._kinds = {kind: kind.encode() for kind in set(outputs + parameters)}
        self.c_output_kinds = c_memory.array(ctypes.c_void_p, [c_memory.address_of(self._kinds[k]) for k in outputs])
        self.c_output_kind_sizes = c_memory.array(ctypes.c_size_t, [len(k) for k in outputs])
        self.c_parameter_kinds = c_memory.array(ctypes.c_void_p,
                                                [c_memory.address_of(self._kinds[k]) for k in parameters])
        self.c_parameter_kind_sizes = c_memory.array(ctypes.c_size_t, [len(k) for k in parameters])
        self.c_devices = c_memory.array(ctypes.c_void_p, [d.handle for d in self.devices])
        partitions = self.options.num_partitions
        self.c_logical_ids = (capi.LogicalDeviceIds * len(self.devices))(
            *[capi.LogicalDeviceIds(i // partitions, i % partitions) for i in range(len(self.devices))])
        self.device_assignment = device_assignment_proto(self.options.num_replicas, partitions,
                                                         [d.id for d in self.devices])
        self._optimized_text = None
        self._cost = None
        self.c_parameter_shardings = self.c_output_shardings = None
        if self.shardings is not None:
            self.c_parameter_shardings = _proto_array([op_sharding_proto(s) for s in self.shardings[0]])
            # An empty result tuple has one sharding, the tuple's (as XLA reports it).
            outputs = self.shardings[1] or [replicated(len(self.devices), 0)]
            self.c_output_shardings = _proto_array([op_sharding_proto(s) for s in outputs])

    @property
    def optimized_text(self) -> bytes:
        """PJRT_Executable_OptimizedProgram's program (made on first use): a
        program on several devices as each device runs it (partitioned, with
        its collectives), as XLA's is; else jax's, Shardy's ops exported as
        XLA exports them."""
        if self._optimized_text is None:
            per_device = getattr(getattr(self.multi, "compiled", None), "text", None)
            text = per_device and hlo_as_stablehlo(per_device)
            self._optimized_text = (text or hlo_exportable(self.program.text)).encode()
        return self._optimized_text

    def cost_properties(self):
        """PJRT_Executable_GetCostAnalysis's named values (xlac's cost analysis, floats)."""
        if self._cost is None:
            from .client import named_values
            # A program on several devices: counted on the module as xlac runs it.
            cost = self.compiled.cost_analysis() if self.multi is None else cost_analysis(self.module)
            self._cost = named_values({k: float(v) for k, v in cost.items()})
        return self._cost

    def memory_analysis(self):
        if self.multi is not None:
            raise unimplemented("memory statistics of a program on several devices")
        return self.compiled.memory_analysis()

    def serialize(self) -> bytes:
        """PJRT_Executable_Serialize: the program and options (compiled again,
        from xlac's caches, when loaded)."""
        header = json.dumps({"donated": list(self.program.donated), "num_replicas": self.options.num_replicas,
                             "num_partitions": self.options.num_partitions,
                             "device_ids": list(self.options.device_ids or ()),
                             "parameter_kinds": list(self.program.parameter_kinds),
                             "result_kinds": list(self.program.result_kinds)})
        return _SERIAL_MAGIC + header.encode() + b"\n" + self.program.text.encode()

    # -- running ----------------------------------------------------------------------------
    def execute(self, arguments: list, non_donatable: set, device: Device | None = None,
                host_callbacks: list | None = None) -> list:
        """Run on ``arguments`` (Buffers); the output Buffers.  Donated
        arguments are deleted afterwards.  ``host_callbacks``: the Python
        functions of the program's host callbacks (:mod:`.host_callbacks`)."""
        if self.deleted:
            raise PjrtError(capi.FAILED_PRECONDITION, f"executable {self.name} has been deleted")
        if len(arguments) != self.num_parameters:
            raise PjrtError(capi.INVALID_ARGUMENT, f"{self.name} takes {self.num_parameters} arguments, "
                                                   f"got {len(arguments)}")
        device = device or self.device
        self._check_donated(arguments, non_donatable)
        arrays = [b.array for b in arguments]
        if any(b.deleted for b in arguments):
            k = next(k for k, b in enumerate(arguments) if b.deleted)
            arguments[k].data(f"argument {k} of {self.name}")          # raises, naming it
        if self.host_callbacks:
            with running(host_callbacks):
                results = self.compiled(*arrays)
        else:
            results = self.compiled(*arrays)
        results = results if self.tuple_result else (results,)
        outputs = [_output(r, device, kind) for r, kind in zip(results, self.result_kinds)]
        self._consume_donated([arguments], non_donatable)
        return outputs

    def execute_handles(self, addresses: list) -> list | None:
        """The common execution (``lean``, on ``self.device``) from the argument
        buffers' handles (``addresses``, ints): the output buffers' handles;
        None, having done nothing, for anything ``execute`` must look at (a
        deleted, unknown or foreign handle, a wrong count: it reports them)."""
        if len(addresses) != self.num_parameters or self.deleted:
            return None
        arrays = []
        append = arrays.append
        for address in addresses:
            entry = find_handle(address)
            if entry is None:
                return None
            buffer = entry[0]
            if type(buffer) is not Buffer or buffer.deleted:
                return None
            append(buffer.array)
        results = self.compiled(*arrays)
        results = results if self.tuple_result else (results,)
        device = self.device
        if not self.kinds_named and all(type(r) is np.ndarray and r.flags.c_contiguous
                                        for r in results):   # what compiled code returns
            return Buffer.results(results, device, self._result_codes, device.buffer_block)
        return [_output(r, device, kind).handle for r, kind in zip(results, self.result_kinds)]

    def execute_devices(self, argument_lists: list, non_donatable: set, host_callbacks: list | None = None) -> list:
        """Run a program on several devices: ``argument_lists[i]`` holds the
        Buffers of ``self.devices[i]``; returns each device's output Buffers.
        ``host_callbacks``: as for :meth:`execute` (called from the device
        processes, in this thread)."""
        if self.deleted:
            raise PjrtError(capi.FAILED_PRECONDITION, f"executable {self.name} has been deleted")
        n = len(self.devices)
        if len(argument_lists) != n:
            raise PjrtError(capi.INVALID_ARGUMENT, f"{self.name} runs on {n} devices, got argument lists "
                                                   f"for {len(argument_lists)}")
        per_device, keys = [], []
        for i, (device, arguments) in enumerate(zip(self.devices, argument_lists)):
            if len(arguments) != self.num_parameters:
                raise PjrtError(capi.INVALID_ARGUMENT, f"{self.name} takes {self.num_parameters} arguments, "
                                                       f"got {len(arguments)} for device {device.id}")
            self._check_donated(arguments, non_donatable)
            per_device.append([b.data(f"argument {k} of {self.name} on device {device.id}")
                               for k, b in enumerate(arguments)])
            # A buffer's bytes never change while it lives (a donated one is
            # deleted by the call): the device processes keep the ones they
            # were given last.
            keys.append(arguments)
        with running(host_callbacks):
            results = self.multi.run(per_device, keys)
        outputs = [[_output(r, device, kind) for r, kind in zip(rs, self.result_kinds)]
                   for device, rs in zip(self.devices, results)]
        self._consume_donated(argument_lists, non_donatable)
        return outputs

    def _check_donated(self, arguments: list, non_donatable: set) -> None:
        """A donated buffer is consumed: passing it again in the same call (donated
        or not) is an error, as in XLA's CPU client."""
        for k in self.program.donated:
            if k in non_donatable or k >= len(arguments):
                continue
            again = [j for j, b in enumerate(arguments) if b is arguments[k] and j != k]
            if again:
                raise PjrtError(capi.INVALID_ARGUMENT,
                                f"Attempt to donate the same buffer twice in Execute(): argument {k} of "
                                f"{self.name} is donated and also passed as argument {again[0]}")

    def _consume_donated(self, argument_lists: list, non_donatable: set) -> None:
        for arguments in argument_lists:
            for k in self.program.donated:
                if k not in non_donatable and k < len(arguments):
                    arguments[k].delete()


def _output(result, device, kind: str | None = None) -> Buffer:
    """The buffer of one result of the compiled code (None: a token), in the
    device's memory of ``kind`` (None: its default)."""
    if result is None:
        return Buffer.token(device)
    if type(result) is not np.ndarray:
        result = np.zeros(0, np.bool_) if result is None else np.asarray(result)
    return Buffer(result, device, None if kind is None else device.memory_of(kind))


def _kind_at(kinds: tuple, k: int) -> str | None:
    return kinds[k] if k < len(kinds) else None


def _proto_array(protos: list) -> tuple:
    """(char* array, size_t array, kept buffers) of serialized protos, for the C caller."""
    kept = [bytes(p) for p in protos]
    pointers = c_memory.array(ctypes.c_void_p, [c_memory.address_of(b) for b in kept])
    sizes = c_memory.array(ctypes.c_size_t, [len(p) for p in protos])
    return pointers, sizes, kept, len(protos)


def deserialize(client: Client, data: bytes) -> Executable:
    """PJRT_Executable_DeserializeAndLoad of what ``Executable.serialize`` wrote."""
    if not data.startswith(_SERIAL_MAGIC):
        raise PjrtError(capi.INVALID_ARGUMENT, "not an executable serialized by xlac's PJRT plugin")
    header, _, text = data[len(_SERIAL_MAGIC):].partition(b"\n")
    meta = json.loads(header)
    options = CompileOptions(meta["num_replicas"], meta["num_partitions"], tuple(meta["device_ids"]) or None)
    program = Program(text.decode(), tuple(meta["donated"]), tuple(meta.get("parameter_kinds", ())),
                      tuple(meta.get("result_kinds", ())))
    return Executable(client, program, options)
