"""xlac's benchmark harness (``python -m benchmarks`` or ``xlac bench``).

``kernels``: the kernels (builder, HLO file, numpy / jax / numba versions, inputs,
bytes and flops); ``harness``: timing, checks, machine limits; ``limits``: STREAM
triad and sgemm; ``report``: Markdown tables and the PNG chart.  jax, numba and
matplotlib are optional: their columns are skipped when they are absent.
"""
import os as _os

# OpenBLAS's idle threads spin for ~0.1 s of CPU after each numpy BLAS call
# (measured here), stealing a core from whatever is timed next on a 2-core
# machine; with the shortest timeout they sleep at once.  It must be set before
# numpy loads OpenBLAS, i.e. before any module of the harness imports numpy.
_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
