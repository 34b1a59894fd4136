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
    xla_bridge.register_plugin(PLUGIN_NAME, priority=-100, c_api=capsule(), factory=_make_client)


def _make_client():
    """The client jax makes for ``xlac`` (its default factory's), and jax's CPU
    backend beside it when ``JAX_PLATFORMS`` names xlac but not cpu: jax puts
    host callbacks' arguments on a device it finds by the name ``cpu``
    (``pure_callback`` and ``io_callback`` fail without one), and code that asks
    for ``jax.devices("cpu")`` by name gets jax's CPU devices, as beside an
    accelerator plugin.  xlac stays the default backend (jax picks it among the
    platforms it lists), and jax's configuration is left as the user set it."""
    from jax._src import config, xla_bridge

    client = xla_bridge.make_pjrt_c_api_client(PLUGIN_NAME)
    value = config.jax_platforms.value
    listed = [p.strip() for p in value.split(",")] if value else None
    if listed is not None and "cpu" not in listed and "cpu" not in xla_bridge._backends:
        # Called by jax's backends() while it fills xla_bridge._backends (its lock held).
        xla_bridge._backends["cpu"] = xla_bridge._init_backend("cpu")
    return client
