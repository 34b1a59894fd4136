"""The native helpers the runtime's services call, provided by the code generator.

The runtime layer compiles nothing (it sits below ``xlac.codegen``), yet its
services are native code where Python would cost too much: the thread pool
behind ``parallel_for`` (``xlac.runtime.threads``), the shared-memory
collective protocol (``xlac.runtime.shm_transport``), and the signal handler
that turns Ctrl-C into a flag (``xlac.runtime.interrupt``).
``xlac.codegen.runtime_code`` builds them and :func:`provide`\\ s a loader for
each name when it is imported (``xlac.executable`` imports it); a service asks
for its helper with :func:`get` on first use, and the loader runs once.
"""
from __future__ import annotations

import threading
from typing import Callable

__all__ = ["provide", "get"]

_loaders: dict[str, Callable[[], object]] = {}
_loaded: dict[str, object] = {}
_lock = threading.Lock()


def provide(name: str, loader: Callable[[], object]) -> None:
    """Register ``loader()``, which returns the native helper ``name``."""
    _loaders[name] = loader


def get(name: str):
    """The native helper ``name`` (loaded on first use; thread-safe)."""
    helper = _loaded.get(name)
    if helper is not None:
        return helper
    with _lock:
        if name not in _loaded:
            loader = _loaders.get(name)
            if loader is None:
                raise RuntimeError(f"native helper {name!r} is not available: import "
                                   f"xlac.codegen.runtime_code (xlac.jit does) before using it")
            _loaded[name] = loader()
        return _loaded[name]
