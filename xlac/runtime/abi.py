"""ctypes mirror of ``runtime/xlac_runtime.h`` (the ABI of generated code).

Only layout lives here: the structures and function-pointer types exactly as
the header declares them (``tests/runtime/test_abi.py`` compiles the header and
compares every offset).  The services themselves are in
:mod:`xlac.runtime.threads` (``parallel_for``, ``report_error``).
"""
from __future__ import annotations

import ctypes
from ctypes import c_char_p, c_int, c_int32, c_int64, c_void_p

from ..custom_calls import XlaCustomCallStatus  # noqa: F401  (defined where C targets are called)
from ..shape import PrimitiveType as PT

ABI_VERSION = 6      # XLAC_ABI_VERSION (2: xlac_run_options.cancel; 3: partitions, resolved device groups;
                     # 4: custom_call takes an xlac_custom_call_op; 5: xlac_run_options.num_threads;
                     # 6: xlac_program_info's CPU features, XLAC_ERROR_CPU_UNSUPPORTED)
ALIGNMENT = 64       # XLAC_ALIGNMENT

#: xlac_element_type (= XLA's PrimitiveType numbers).
ELEMENT_TYPE_NUMBERS = {
    PT.PRED: 1, PT.S8: 2, PT.S16: 3, PT.S32: 4, PT.S64: 5, PT.U8: 6, PT.U16: 7, PT.U32: 8,
    PT.U64: 9, PT.F16: 10, PT.F32: 11, PT.F64: 12, PT.TUPLE: 13, PT.C64: 15, PT.BF16: 16,
    PT.TOKEN: 17, PT.C128: 18, PT.F8E5M2: 19, PT.F8E4M3FN: 20, PT.S4: 21, PT.U4: 22,
    PT.F8E4M3B11FNUZ: 23, PT.F8E5M2FNUZ: 24, PT.F8E4M3FNUZ: 25, PT.S2: 26, PT.U2: 27, PT.F8E4M3: 28,
    PT.F8E3M4: 29, PT.S1: 30, PT.U1: 31, PT.F4E2M1FN: 32, PT.F8E8M0FNU: 33,
}

#: xlac_collective_kind and xlac_reduction.
COLLECTIVE_KINDS = {"all-reduce": 1, "all-gather": 2, "reduce-scatter": 3, "all-to-all": 4,
                    "collective-permute": 5}
REDUCTIONS = {"none": 0, "sum": 1, "product": 2, "min": 3, "max": 4, "and": 5, "or": 6}

# Status codes.
XLAC_OK = 0
XLAC_ERROR_INVALID_ARGUMENT = 1
XLAC_ERROR_NO_MEMORY = 2
XLAC_ERROR_MISSING_SERVICE = 3
XLAC_ERROR_ABI_MISMATCH = 4
XLAC_ERROR_SERVICE_FAILED = 5
XLAC_ERROR_CPU_UNSUPPORTED = 6

#: void (*)(void **results, const void *const *params, void *temp, const xlac_run_options *opts)
ENTRY = ctypes.CFUNCTYPE(None, c_void_p, c_void_p, c_void_p, c_void_p)
#: void (*xlac_parallel_body)(void *ctx, int64_t i)
PARALLEL_BODY = ctypes.CFUNCTYPE(None, c_void_p, c_int64)
#: void (*xlac_parallel_for_fn)(void *runtime_ctx, int64_t n, xlac_parallel_body body, void *ctx)
#: (body is passed as a plain pointer: the Python side calls it through native code)
PARALLEL_FOR = ctypes.CFUNCTYPE(None, c_void_p, c_int64, c_void_p, c_void_p)


class CollectiveOp(ctypes.Structure):
    """xlac_collective_op."""

    _fields_ = [
        ("kind", c_int32),
        ("element_type", c_int32),
        ("reduction", c_int32),
        ("dimension", c_int32),
        ("channel_id", c_int64),
        ("input", c_void_p),
        ("input_bytes", c_int64),
        ("output", c_void_p),
        ("output_bytes", c_int64),
        ("replica_groups", c_char_p),
        ("source_target_pairs", c_char_p),
        # -- version 3 --
        ("instruction", c_char_p),
        ("num_groups", c_int32),
        ("group_size", c_int32),
        ("groups", ctypes.POINTER(c_int64)),
        ("num_pairs", c_int64),
        ("pairs", ctypes.POINTER(c_int64)),
    ]


COLLECTIVE = ctypes.CFUNCTYPE(c_int, c_void_p, ctypes.POINTER(CollectiveOp))
INFEED = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_int64, c_char_p)
OUTFEED = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_int64, c_char_p)

#: XLA's CustomCallApiVersion numbers (XLAC_CUSTOM_CALL_API_*).
CUSTOM_CALL_API_ORIGINAL = 1
CUSTOM_CALL_API_STATUS_RETURNING = 2
CUSTOM_CALL_API_STATUS_RETURNING_UNIFIED = 3
CUSTOM_CALL_API_TYPED_FFI = 4
#: XLAC_CUSTOM_CALL_MESSAGE_MAX: bytes of a custom call's error message, NUL included.
CUSTOM_CALL_MESSAGE_MAX = 1024


class CustomCallOp(ctypes.Structure):
    """xlac_custom_call_op (version 4)."""

    _fields_ = [
        ("target", c_char_p),
        ("instruction", c_char_p),
        ("api_version", c_int32),
        ("result_is_tuple", c_int32),
        ("num_operands", c_int64),
        ("operands", ctypes.POINTER(c_void_p)),
        ("operand_shapes", ctypes.POINTER(c_char_p)),
        ("num_results", c_int64),
        ("results", ctypes.POINTER(c_void_p)),
        ("result_shapes", ctypes.POINTER(c_char_p)),
        ("opaque", ctypes.POINTER(ctypes.c_char)),
        ("opaque_len", c_int64),
        ("error", ctypes.POINTER(ctypes.c_char)),
        ("error_capacity", c_int64),
    ]


#: int (*xlac_custom_call_fn)(void *runtime_ctx, xlac_custom_call_op *op)
CUSTOM_CALL = ctypes.CFUNCTYPE(c_int, c_void_p, ctypes.POINTER(CustomCallOp))
REPORT_ERROR = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_char_p)


class RunOptions(ctypes.Structure):
    """xlac_run_options, version 5 (fields are only ever appended; version 4
    changed the type of ``custom_call``, which no earlier object calls)."""

    _fields_ = [
        ("abi_version", c_int64),
        ("runtime_ctx", c_void_p),
        ("parallel_for", PARALLEL_FOR),
        ("replica_id", c_int64),
        ("num_replicas", c_int64),
        ("collective", COLLECTIVE),
        ("infeed", INFEED),
        ("outfeed", OUTFEED),
        ("custom_call", CUSTOM_CALL),
        ("report_error", REPORT_ERROR),
        # -- version 2 --
        ("cancel", ctypes.POINTER(c_int32)),
        # -- version 3 --
        ("partition_id", c_int64),
        ("num_partitions", c_int64),
        # -- version 5 --
        ("num_threads", c_int64),
    ]
