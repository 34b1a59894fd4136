"""Session-wide test set-up.

``UNIMPLEMENTED`` is an opcode that exists only in the tests: defined (so it
parses and verifies) but with no shape rule, evaluator rule or kernel, it is
what the "not supported yet: <op>" tests use — not a real op, which would one
day be implemented and silently stop testing the error path.
"""
import os

from xlac.hlo import opcodes

# `xlac bench MODULE` times XLA:CPU beside xlac when jax is installed, starting
# jax in a process of its own each time: only the tests of that ask for it.
os.environ.setdefault("XLAC_BENCH_XLA", "0")

UNIMPLEMENTED = "xlac-test-unimplemented"


def default_sigint() -> None:
    """``preexec_fn`` of a child whose Ctrl-C a test checks: SIGINT at its default
    disposition, as in a process started from a shell.  A disposition of
    ``SIG_IGN`` is inherited across exec, and Python then installs no handler
    of its own: a pytest worker seen with SIGINT ignored (something in the
    suite leaves it so) made such children deaf to Ctrl-C."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_DFL)

if UNIMPLEMENTED not in opcodes.OPCODES:
    opcodes.register(opcodes.OpDef(UNIMPLEMENTED, "other", 1, {}, frozenset(), ""))


# ---------------------------------------------------------------------------
# Pinned targets: tests that look at generated code (vector widths, which
# stores are non-temporal, kernel plans) compile for a named CPU instead of
# this machine's, so that they give the same answer on AMD and Intel, AVX2
# and AVX-512 machines (xlac.codegen.target: XLAC_TARGET_CPU/_FEATURES).
# ---------------------------------------------------------------------------

import pytest  # noqa: E402

from xlac.codegen import target as _target  # noqa: E402


class PinnedTarget:
    """A target a test compiles for: ``name``, the LLVM CPU and features, the
    width of its vector registers and of the vectors LLVM's loop vectoriser
    makes for it (Intel's AVX-512 CPUs and x86-64-v4 prefer 256-bit ones)."""

    def __init__(self, name: str, cpu: str, features: str, vector_bits: int, loop_vector_bits: int):
        self.name, self.cpu, self.features = name, cpu, features
        self.vector_bits, self.loop_vector_bits = vector_bits, loop_vector_bits

    def require_runnable(self) -> None:
        """Skip the test unless this machine can run code for the target."""
        try:
            _target.check_runnable()
        except RuntimeError as ex:
            pytest.skip(str(ex))


PINNED_TARGETS = {
    "avx2": PinnedTarget("avx2", "haswell", "", 256, 256),
    "avx512": PinnedTarget("avx512", "x86-64-v4", "-prefer-256-bit", 512, 512),
    "avx512-prefer-256": PinnedTarget("avx512-prefer-256", "skylake-avx512", "", 512, 256),
}


@pytest.fixture(params=sorted(PINNED_TARGETS))
def pinned_target(request):
    """Runs the test once per :data:`PINNED_TARGETS` entry, with code generated
    for it (``target.override``); yields the :class:`PinnedTarget`."""
    if not _target.host().is_x86:
        pytest.skip("the pinned targets are x86 CPUs")
    pinned = PINNED_TARGETS[request.param]
    with _target.override(cpu=pinned.cpu, features=pinned.features or None):
        yield pinned


@pytest.fixture
def avx2_target():
    """Code generated for an AVX2 CPU without AVX-512 (haswell)."""
    if not _target.host().is_x86:
        pytest.skip("the pinned targets are x86 CPUs")
    pinned = PINNED_TARGETS["avx2"]
    with _target.override(cpu=pinned.cpu):
        yield pinned
