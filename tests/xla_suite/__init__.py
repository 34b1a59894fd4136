"""XLA's own tests as a conformance suite: the HLO modules of XLA's C++ tests, run through
XLA:CPU (recorded in a scratch environment with jax) and through xlac, compared.

    python -m tests.xla_suite --xla PATH [--reference RESULTS] [-k TEXT]

See ``tests/xla_suite/__main__.py`` and docs/support.md.
"""
