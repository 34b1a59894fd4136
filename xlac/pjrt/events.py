"""PJRT_Event: completion of a transfer or an execution.

xlac's executions and transfers finish before the PJRT function that starts
them returns, so an event is ready when it is made (``ready()``), carrying the
operation's error if it had one.  ``PJRT_Event_Create``/``Set`` events (made
by the caller) start unready and become ready when set; an ``OnReady``
callback registered before then runs when the event is set.
"""
from __future__ import annotations

from . import capi, errors, handles


class Event:
    """A PJRT_Event: ``is_ready``, and ``error`` (code, message) or None."""

    def __init__(self, is_ready: bool = True, error: tuple[int, str] | None = None):
        self.is_ready = is_ready
        self.error = error
        self.waiting = []                 # (callback address, user_arg) registered before ready
        self.handle = handles.new(self)

    def set(self, error: tuple[int, str] | None = None) -> None:
        """Make the event ready (with ``error``) and run the waiting callbacks."""
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


def ready() -> int:
    """The handle of a new event that is ready (no error)."""
    return Event().handle


def lookup(address) -> Event:
    return handles.lookup(address, Event, "PJRT_Event")
