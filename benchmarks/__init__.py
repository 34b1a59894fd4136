"""xlac's benchmark harness (``python -m benchmarks`` or ``xlac bench``).

``kernels``: the kernels (builder, HLO file, numpy / jax / numba versions, inputs,
bytes and flops); ``harness``: timing, checks, machine limits; ``limits``: STREAM
triad and sgemm; ``report``: Markdown tables and the PNG chart.  jax, numba and
matplotlib are optional: their columns are skipped when they are absent.
"""
