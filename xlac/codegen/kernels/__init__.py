"""Kernel emitters for opcodes that are not a loop over an elemental generator.

Each module here registers its opcodes with ``emitter.register_kernel``;
importing this package registers them all.
"""
from . import control_flow  # noqa: F401,E402  (while, conditional, call)
from . import dynamic_slice  # noqa: F401,E402  (dynamic-slice, dynamic-update-slice)
from . import map_op  # noqa: F401,E402  (map)
from . import sort  # noqa: F401,E402  (sort, topk)
from . import convolution  # noqa: F401,E402  (convolution, elemental)
from . import fft  # noqa: F401,E402  (fft)
from . import gather  # noqa: F401,E402  (gather, elemental)
from . import windows  # noqa: F401,E402  (reduce-window elemental, select-and-scatter)
from . import scatter  # noqa: F401,E402  (scatter)
from . import dot  # noqa: F401,E402  (dot, fusion:kOutput: packed GEMM)
from . import conv_gemm  # noqa: F401,E402  (convolution, fusion:kOutput of a convolution: implicit GEMM)
from . import transpose  # noqa: F401,E402  (transpose, copy changing the minor dimension: in-register blocks)
