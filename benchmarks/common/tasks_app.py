"""The app of the benchmark's ``tasks/get`` workload: ``shipcode-mcp benchmarks/common/tasks_app.py``.

The default catalogue's ``add`` as a task tool (``task=True``: a task for a client that declares
``io.modelcontextprotocol/tasks``, a plain answer for one that does not), with the tasks kept in memory. Every
task gets the same id and time stamps, so the benchmark knows the bytes of each answer before it asks: one
call makes the task, and once it is ``completed`` the measured requests read it with ``tasks/get``.
"""

from __future__ import annotations

from shipcode_mcp import Server
from shipcode_mcp.tasks import Tasks

#: The id of every task: as long as a real one (``secrets.token_urlsafe(24)``).
TASK_ID = "finished-task-for-the-benchmark0"
#: ``createdAt`` and ``lastUpdatedAt`` of every task.
STAMP = "2026-07-28T00:00:00.000Z"


class KnownTasks(Tasks):
    """Tasks whose id and time stamps are known in advance; everything else as in any app."""

    def new_task_id(self) -> str:
        return TASK_ID

    def timestamp(self) -> str:
        return STAMP


app = Server("shipcode-mcp", version="1.0.0", extensions=[KnownTasks()])


@app.tool(task=True)
def add(a: float, b: float) -> float:
    """Add two numbers"""
    return a + b
