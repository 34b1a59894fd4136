"""xlac's benchmark harness (``python -m benchmarks`` or ``xlac bench``).

``kernels``: the kernels (builder, HLO file, numpy / jax / numba versions, inputs,
bytes and flops); ``harness``: timing, checks, machine limits; ``limits``: STREAM
triad and sgemm; ``report``: Markdown tables and the PNG chart.  jax, numba and
matplotlib are optional: their columns are skipped when they are absent.
``models`` (``python -m benchmarks.models``): compile time on real models' train
and inference steps, xlac against jax, and where xlac's compile time goes.
"""
import os as _os

# OpenBLAS's idle threads spin for ~0.1 s of CPU after each numpy BLAS call
# (measured here), stealing a core from whatever is timed next on a 2-core
# machine; with the shortest timeout they sleep at once.  It must be set before
# numpy loads OpenBLAS, i.e. before any module of the harness imports numpy.
_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
# numba's parallel loops run on GNU OpenMP, whose idle threads spin after each
# parallel region for long enough (default GOMP_SPINCOUNT, ~0.3 s here) that the
# next implementation timed ran up to 2.8x slower despite its untimed settle
# call (xlac's softmax: 1.0 ms alone, 2.8 ms right after numba's).  10000 spins
# still cover the gap between numba's back-to-back calls (its own times are
# unchanged) and end before the next sample.  Read when libgomp loads.
_os.environ.setdefault("GOMP_SPINCOUNT", "10000")
