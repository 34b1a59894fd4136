"""PJRT_Event: completion of a transfer or an execution.

xlac's executions and transfers finish before the PJRT function that starts
them returns, so an event is ready when it is made, carrying the operation's
error if it had one.  A ready event without an error is always the same one,
:func:`ready`'s: it is never freed (destroying it does nothing), and the
native entries answer every call on it without Python
(``xlac.pjrt.trampolines``: the callback of ``OnReady`` runs at once).  ``PJRT_Event_Create``/``Set`` events (made
by the caller) start unready and become ready when set; an ``OnReady``
callback registered before then runs when the event is set.
"""
from __future__ import annotations

from . import capi, errors, handles


class Event:
    """A PJRT_Event: ``is_ready``, and ``error`` (code, message) or None."""

    def __init__(self, is_ready: bool = True, error: tuple[int, str] | None = None, tag: int = 0):
        self.is_ready = is_ready
        self.error = error
        self.waiting = []                 # (callback address, user_arg) registered before ready
        self.handle = handles.new(self, tag=tag)

    def set(self, error: tuple[int, str] | None = None) -> None:
        """Make the event ready (with ``error``) and run the waiting callbacks."""
        if self is _READY:
            raise errors.PjrtError(capi.FAILED_PRECONDITION, "PJRT_Event_Set on an event xlac made (it is ready)")
        self.is_ready, self.error = True, error
        waiting, self.waiting = self.waiting, []
        for callback, user_arg in waiting:
            self.call(callback, user_arg)

    def error_handle(self):
        """A new PJRT_Error for the event's error, or None."""
        return errors.new_error(*self.error) if self.error else None

    def on_ready(self, callback: int, user_arg) -> None:
        """PJRT_Event_OnReady: ``callback(error, user_arg)`` now if ready, else when set.
        The callback owns the error it is given."""
        if self.is_ready:
            self.call(callback, user_arg)
        else:
            self.waiting.append((callback, user_arg))

    def call(self, callback: int, user_arg) -> None:
        capi.EVENT_CALLBACK(callback)(self.error_handle(), user_arg)


_READY = None


def ready() -> int:
    """The handle of the event that is ready without an error."""
    global _READY
    if _READY is None:
        _READY = Event(tag=handles.READY_EVENT_TAG)
    return _READY.handle


def destroy(address) -> None:
    """PJRT_Event_Destroy (the ready event stays)."""
    if _READY is None or address != _READY.handle:
        handles.release(address)


def lookup(address) -> Event:
    return handles.lookup(address, Event, "PJRT_Event")
