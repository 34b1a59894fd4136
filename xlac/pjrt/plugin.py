"""The entry point jax finds: ``[project.entry-points.jax_plugins] xlac =
"xlac.pjrt.plugin"``.  jax imports this module at start-up and calls
``initialize()``, which registers the PJRT plugin ``xlac`` with the C API
table of :mod:`xlac.pjrt.api`; nothing is compiled or allocated until jax
creates the client (``JAX_PLATFORMS=xlac``, ``jax.devices("xlac")``).
"""
from __future__ import annotations

PLUGIN_NAME = "xlac"


def initialize() -> None:
    """Register the ``xlac`` PJRT plugin with jax (jax calls this once)."""
    from jax._src import xla_bridge

    from .api import capsule
    # Below jax's own CPU backend (priority 0; plugins default to 400): with
    # no JAX_PLATFORMS jax's default backend stays its CPU, and xlac's devices
    # are there for jax.devices("xlac"); JAX_PLATFORMS=xlac selects xlac.
    xla_bridge.register_plugin(PLUGIN_NAME, priority=-100, c_api=capsule())
    _keep_cpu_backend()


def _keep_cpu_backend() -> None:
    """``JAX_PLATFORMS=xlac`` also starts jax's CPU backend, after xlac (so
    xlac's devices stay the default): jax runs host callbacks' arguments
    through a CPU device (``pure_callback``, ``io_callback`` look one up by
    the name ``cpu``, and fail without it), and code that asks for
    ``jax.devices("cpu")`` by name gets jax's CPU devices, as beside any
    accelerator plugin.  jax reads the setting after its plugins are
    initialised."""
    from jax._src import config

    value = config.jax_platforms.value
    names = [p.strip() for p in value.split(",")] if value else []
    if PLUGIN_NAME in names and "cpu" not in names:
        config.update("jax_platforms", ",".join(names + ["cpu"]))

