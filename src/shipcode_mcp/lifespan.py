"""An app's lifespan: ``Server(lifespan=factory)``, entered once per process before the first request.

``factory(server)`` returns an async context manager (an ``@asynccontextmanager`` function, as the
official SDK and FastMCP take it); what it yields is the lifespan's value, which handlers reach as
``ctx.lifespan_context``. It is left at the end of input, on a stop signal or at the ASGI lifespan's
shutdown. A lifespan that raises stops the server: :class:`LifespanFailed` carries the one line
said on stderr, and the server exits with status 2.
"""

from __future__ import annotations

import os

from ._log import log

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .app import Server

#: The exit status of a server whose lifespan raised.
EXIT_LIFESPAN = 2
#: Names a file that a process of ``--http --processes N`` writes when its lifespan fails, so the
#: parent process exits with :data:`EXIT_LIFESPAN` too.
FAILED_FILE_VARIABLE = "SHIPCODE_MCP_LIFESPAN_FAILED"


class LifespanFailed(Exception):
    """The app's lifespan raised; ``args[0]`` is the line said on stderr."""


def failure_line(server: Server, stage: str, error: BaseException) -> str:
    """``the lifespan of <app> failed <stage>: <Type>: <first line of its message>``."""
    text = str(error).strip().partition("\n")[0]
    reason = f"{type(error).__name__}: {text}" if text else type(error).__name__
    return f"the lifespan of {server.name} failed {stage}: {reason}"


def report(line: str) -> None:
    """Say why the lifespan failed (one line on stderr), and tell a parent process that waits to know."""
    log("error", line)
    path = os.environ.get(FAILED_FILE_VARIABLE)
    if path:
        try:
            with open(path, "w", encoding="utf-8") as marker:
                marker.write(line)
        except OSError:
            pass


class Lifespan:
    """The running lifespan of one server in this process (see :func:`enter`)."""

    __slots__ = ("server", "manager", "value", "users")

    def __init__(self, server: Server) -> None:
        self.server = server
        self.manager: Any = None
        #: What the lifespan yielded.
        self.value: Any = None
        #: How many servings entered it (a host app's and the endpoint's own): left when the last leaves.
        self.users = 0


async def enter(server: Server) -> None:
    """Enter ``server``'s lifespan unless it runs already in this process; :class:`LifespanFailed` if it raises."""
    running = server.running_lifespan
    if running is not None:
        running.users += 1
        return
    if server.lifespan is None:
        return
    running = Lifespan(server)
    try:
        running.manager = server.lifespan(server)
        running.value = await running.manager.__aenter__()
    except Exception as error:
        raise LifespanFailed(failure_line(server, "at start-up", error)) from None
    running.users = 1
    server.running_lifespan = running


async def leave(server: Server) -> None:
    """Leave ``server``'s lifespan when its last serving ends; :class:`LifespanFailed` if it raises."""
    running = server.running_lifespan
    if running is None:
        return
    running.users -= 1
    if running.users > 0:
        return
    server.running_lifespan = None
    try:
        await running.manager.__aexit__(None, None, None)
    except Exception as error:
        raise LifespanFailed(failure_line(server, "at shutdown", error)) from None
