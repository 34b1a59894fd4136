"""PJRT_Executable and PJRT_LoadedExecutable: a program compiled by xlac.

``compile`` reads jax's program (:mod:`xlac.pjrt.program`), imports it with
``xlac.parse_stablehlo`` and compiles it with ``xlac.jit``; ``execute`` runs
it on the buffers of one device and returns new buffers, one per output (a
tuple-shaped result is flattened, as PJRT's outputs are).  An executable is
its own loaded form: xlac's code is loaded when it is compiled.

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
from ..hlo.stablehlo import parse_stablehlo
from ..shape import Shape
from . import capi, handles
from .buffer import Buffer, type_code_of
from .client import MEMORY_KIND, Client, Device, Strings
from .compile_options import CompileOptions, device_assignment_proto
from .errors import PjrtError, unimplemented
from .program import Program

_SERIAL_MAGIC = b"xlac-pjrt-executable 1\n"


def _leaves(shape: Shape) -> list:
    return list(shape.tuple_shapes) if shape.is_tuple else [shape]


class Executable:
    """A compiled program: ``name``, ``outputs`` (Shapes), the device it runs on."""

    def __init__(self, client: Client, program: Program, options: CompileOptions):
        self.client, self.program, self.options = client, program, options
        count = options.num_replicas * options.num_partitions
        if count != 1:
            raise unimplemented(f"a program on {count} devices ({options.num_replicas} replicas x "
                                f"{options.num_partitions} partitions) through PJRT")
        self.module = parse_stablehlo(program.text)
        self.name = self.module.name
        device_id = options.device_ids[0] if options.device_ids else 0
        self.device: Device = client.device(device_id)
        self.compiled = jit(self.module)           # one device: in this process
        self.outputs = _leaves(self.module.result_shape)
        if any(not s.is_array for s in self.outputs):
            raise unimplemented("a program with a token or nested tuple output through PJRT")
        self.tuple_result = self.module.result_shape.is_tuple
        self.num_parameters = len(self.module.entry.parameter_shapes())
        self.fingerprint = hashlib.sha256(program.text.encode() + repr(options).encode()).hexdigest()
        self.deleted = False
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
        self.c_output_types = (ctypes.c_int * max(1, n))(*[type_code_of(s.element_type) for s in self.outputs])
        dims = [d for s in self.outputs for d in s.dimensions]
        self.c_output_dims = (ctypes.c_int64 * max(1, len(dims)))(*dims)
        self.c_output_ranks = (ctypes.c_size_t * max(1, n))(*[len(s.dimensions) for s in self.outputs])
        kind = MEMORY_KIND.encode()
        self._kind = ctypes.create_string_buffer(kind)
        self.c_output_kinds = (ctypes.c_void_p * max(1, n))(*[ctypes.addressof(self._kind)] * n)
        self.c_output_kind_sizes = (ctypes.c_size_t * max(1, n))(*[len(kind)] * n)
        p = self.num_parameters
        self.c_parameter_kinds = (ctypes.c_void_p * max(1, p))(*[ctypes.addressof(self._kind)] * p)
        self.c_parameter_kind_sizes = (ctypes.c_size_t * max(1, p))(*[len(kind)] * p)
        self.c_devices = (ctypes.c_void_p * 1)(self.device.handle)
        self.c_logical_ids = (capi.LogicalDeviceIds * 1)(capi.LogicalDeviceIds(0, 0))
        self.device_assignment = device_assignment_proto(1, 1, [self.device.id])
        self.optimized_text = self.program.text.encode()
        self._cost = None

    def cost_properties(self):
        """PJRT_Executable_GetCostAnalysis's named values (xlac's cost analysis, floats)."""
        if self._cost is None:
            from .client import named_values
            self._cost = named_values({k: float(v) for k, v in self.compiled.cost_analysis().items()})
        return self._cost

    def serialize(self) -> bytes:
        """PJRT_Executable_Serialize: the program and options (compiled again,
        from xlac's caches, when loaded)."""
        header = json.dumps({"donated": list(self.program.donated), "num_replicas": self.options.num_replicas,
                             "num_partitions": self.options.num_partitions,
                             "device_ids": list(self.options.device_ids or ())})
        return _SERIAL_MAGIC + header.encode() + b"\n" + self.program.text.encode()

    # -- running ----------------------------------------------------------------------------
    def execute(self, arguments: list, non_donatable: set, device: Device | None = None) -> list:
        """Run on ``arguments`` (Buffers); the output Buffers.  Donated
        arguments are deleted afterwards."""
        if self.deleted:
            raise PjrtError(capi.FAILED_PRECONDITION, f"executable {self.name} has been deleted")
        if len(arguments) != self.num_parameters:
            raise PjrtError(capi.INVALID_ARGUMENT, f"{self.name} takes {self.num_parameters} arguments, "
                                                   f"got {len(arguments)}")
        device = device or self.device
        arrays = [b.array for b in arguments]
        if any(b.deleted for b in arguments):
            k = next(k for k, b in enumerate(arguments) if b.deleted)
            arguments[k].data(f"argument {k} of {self.name}")          # raises, naming it
        results = self.compiled(*arrays)
        results = results if self.tuple_result else (results,)
        outputs = [Buffer(r if type(r) is np.ndarray else np.asarray(r), device) for r in results]
        for k in self.program.donated:
            if k not in non_donatable and k < len(arguments):
                arguments[k].delete()
        return outputs


def deserialize(client: Client, data: bytes) -> Executable:
    """PJRT_Executable_DeserializeAndLoad of what ``Executable.serialize`` wrote."""
    if not data.startswith(_SERIAL_MAGIC):
        raise PjrtError(capi.INVALID_ARGUMENT, "not an executable serialized by xlac's PJRT plugin")
    header, _, text = data[len(_SERIAL_MAGIC):].partition(b"\n")
    meta = json.loads(header)
    options = CompileOptions(meta["num_replicas"], meta["num_partitions"], tuple(meta["device_ids"]) or None)
    return Executable(client, Program(text.decode(), tuple(meta["donated"])), options)
