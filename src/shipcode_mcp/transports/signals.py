"""Stop signals: SIGTERM, SIGINT and SIGHUP end serving quietly with exit status 0.

The first stop signal counts; later ones change nothing. Its handler stays installed to the
end (swapping in ``SIG_IGN`` while a signal is pending makes CPython print "Signal N
ignored due to race condition"); on the way out the signals are blocked instead, since the
interpreter resets Python-level handlers to the default (termination) as it shuts down.

While :attr:`StopSignals.interruptible` is true (the line processor is running or blocked
writing) the first signal raises :class:`~shipcode_mcp.protocol.ServerStop` where the
program is; otherwise it is only recorded in :attr:`StopSignals.signum`, and the concurrent
scheduler, woken through ``signal.set_wakeup_fd``, stops at its next turn.
"""

from __future__ import annotations

import signal
import sys

from ..protocol import ServerStop

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class StopSignals:
    """The process's stop-signal state (one instance: :data:`stop_signals`)."""

    def __init__(self) -> None:
        #: The first stop signal received, or None.
        self.signum: int | None = None
        #: Whether the first signal may raise ServerStop where the program is.
        self.interruptible = True
        #: Set on the way out: from then on every stop signal is ignored.
        self.ended = False

    def install(self) -> None:
        """Handle SIGTERM, SIGINT and SIGHUP from now on (again serving, if it ended before)."""
        self.ended = False
        self.interruptible = True
        if sys.unraisablehook is not _quiet_about_stops:
            global _previous_unraisablehook
            _previous_unraisablehook = sys.unraisablehook
            sys.unraisablehook = _quiet_about_stops
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._handle)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)

    def end(self) -> None:
        """The server is on its way out: further stop signals change nothing."""
        self.ended = True
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)

    def check(self) -> None:
        """Raise the ServerStop of a stop signal that came already (its own raise may have
        been lost: raised inside a callback Python ignores, such as a weakref callback)."""
        if self.signum is not None:
            raise ServerStop(self.signum)

    def _handle(self, signum: int, frame: object) -> None:
        if self.signum is not None or self.ended:
            return
        self.signum = signum
        if self.interruptible:
            raise ServerStop(signum)


stop_signals = StopSignals()
_previous_unraisablehook = sys.__unraisablehook__


def _quiet_about_stops(unraisable: object) -> None:
    """``sys.unraisablehook``: a ServerStop raised inside a callback Python ignores is not
    reported (serving acts on it, see :meth:`StopSignals.check`); anything else is."""
    if getattr(unraisable, "exc_type", None) is not ServerStop:
        _previous_unraisablehook(unraisable)


def keep_off_this_thread() -> None:
    """Block the stop signals in the calling (worker) thread: they are the main thread's."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
