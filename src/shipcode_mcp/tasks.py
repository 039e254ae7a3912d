"""Tasks (``io.modelcontextprotocol/tasks``): a tool call answered at once with a task the client polls.

A tool registered with ``task=True`` (or ``"required"``, or a function deciding per call) answers a
client that declares the extension with ``resultType: "task"`` and a ``taskId``; its work goes on in
the background. The client reads it with ``tasks/get`` (the result inlined once ``completed``, the
JSON-RPC error once ``failed``), answers its questions with ``tasks/update`` (a task whose tool asks,
``ctx.elicit(...)`` as in any tool, is ``input_required`` with ``inputRequests``; the tool runs again
from the start with the answers, as in a 2026-07-28 multi round-trip request) and stops it with
``tasks/cancel``. A ``subscriptions/listen`` filter naming ``taskIds`` receives ``notifications/tasks``
(the task as ``tasks/get`` shows it) at each change. Tasks live in a :class:`~shipcode_mcp.taskstore.TaskStore`.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import inspect
import secrets
import time
from functools import partial

from orjson import loads

from ._log import log, log_exception
from .asking.rounds import InputRequired, Round
from .bus import TASK
from .context import CALLER, Context
from .deferred import ASYNC, Deferred
from .eras import bound_to
from .errors import HANDLER_FAULTS
from .extensions import Extension, client_declares, missing_extension
from .jsontext import dumps
from .protocol import INTERNAL_ERROR, INVALID_PARAMS, META_SUBSCRIPTION, RpcError
from .results import error_result
from .schema import InvalidArguments
from .taskstore import TERMINAL, MemoryTaskStore, TaskLimit, now_ms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .catalogue import Catalogue
    from .handlers import Tool
    from .taskstore import TaskStore

__all__ = ["TASKS", "Tasks"]

TASKS = "io.modelcontextprotocol/tasks"
#: How long a task is kept after it was created, by default (ms).
DEFAULT_TTL_MS = 3_600_000
#: How often a client is told to poll, by default (ms).
DEFAULT_POLL_INTERVAL_MS = 1_000
#: With a shared store: how long a process's word that it still runs a task holds, by default (ms); it
#: renews it three times as often. A ``working`` task whose word lapsed failed with its process.
DEFAULT_LEASE_MS = 15_000
#: The members of a task as ``tasks/get`` shows it, besides ``inputRequests``, ``result`` and ``error``.
ENVELOPE = ("taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs")
_NO_ARGUMENTS: dict = {}
_ACK = b"{}"


def iso(ms: int) -> str:
    """An instant as ISO 8601 in UTC, to the millisecond."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def detailed(record: dict[str, Any]) -> bytes:
    """A task as ``tasks/get`` and ``notifications/tasks`` show it."""
    shown = {name: record[name] for name in ENVELOPE}
    status = record["status"]
    if status == "input_required":
        shown["inputRequests"] = record["inputRequests"]
    elif status == "failed":
        shown["error"] = record["error"]
    body = dumps(shown)
    if status == "completed":
        body = body[:-1] + b',"result":' + record["result"] + b"}"
    return body


def created(record: dict[str, Any]) -> bytes:
    """The ``tools/call`` result of a call that became a task (``CreateTaskResult``)."""
    return b'{"resultType":"task",' + dumps({name: record[name] for name in ENVELOPE})[1:]


def error_object(error: RpcError) -> dict[str, Any]:
    """A JSON-RPC error object: ``code``, ``message`` and ``data`` when there is one."""
    shown: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        shown["data"] = error.data
    return shown


def owner_of(caller: Any) -> str | None:
    """Who may see a task made by ``caller``: a digest of its identity (None without authentication)."""
    identity = bound_to(caller)
    return None if identity is None else hashlib.sha256(identity).hexdigest()


def owned(record: dict[str, Any] | None, task_id: str, owner: str | None) -> dict[str, Any]:
    """The record of a task of this caller; -32602 when there is none, or it is someone else's."""
    if record is None or record["owner"] != owner:
        raise RpcError(INVALID_PARAMS, "Unknown task", {"taskId": task_id})
    return record


class TaskIds(list):
    """The ``taskIds`` a ``subscriptions/listen`` filter acknowledged, and who asked for them."""

    owner: str | None = None


class Tasks(Extension):
    """The tasks extension: its tools' calls, ``tasks/get``, ``tasks/update``, ``tasks/cancel``.

    ``store`` keeps the tasks (default: a :class:`~shipcode_mcp.taskstore.MemoryTaskStore`);
    ``ttl_ms`` is how long a task is kept after it was created, ``poll_interval_ms`` how often
    clients are told to poll; with a shared store, a ``working`` task whose process has not renewed
    its word for ``lease_ms`` failed with that process.
    """

    name = TASKS
    named_by = {"tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}

    def __init__(
        self,
        store: TaskStore | None = None,
        ttl_ms: int = DEFAULT_TTL_MS,
        poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS,
        lease_ms: int = DEFAULT_LEASE_MS,
    ) -> None:
        for value, what in ((ttl_ms, "ttl_ms"), (poll_interval_ms, "poll_interval_ms"), (lease_ms, "lease_ms")):
            if type(value) is not int or value < 1:
                raise ValueError(f"{what} is a whole number of milliseconds, 1 or more")
        self.store = MemoryTaskStore() if store is None else store
        #: Whether the store is the default one (then an app using Redis keeps its tasks there).
        self.default_store = store is None
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        #: With a shared store: how long this process's word that it runs a task holds (ms).
        self.lease_ms = lease_ms
        #: The work running in this process, by task id.
        self.running: dict[str, asyncio.Task] = {}
        self.app: Any = None

    def added(self, app: Any) -> None:
        self.app = app
        app.bus.on(TASK, self.tell)
        if app.redis is not None:
            self.share(app.redis)

    def share(self, url: str) -> None:
        """The app uses the Redis at ``url``: the tasks of the default store are kept there."""
        if self.default_store:
            from .redisstore import RedisTaskStore

            self.store = RedisTaskStore(url)
            self.default_store = False

    def new_task_id(self) -> str:
        """A new task's id: 192 random bits (unguessable: with authentication, ids are also bound to
        their caller)."""
        return secrets.token_urlsafe(24)

    def timestamp(self) -> str:
        """Now, as a task's ``createdAt`` and ``lastUpdatedAt`` show it."""
        return iso(now_ms())

    def concurrent(self, tools: dict[str, Tool]) -> bool:
        return True

    def claims(self, catalogue: Catalogue) -> dict[str, Any]:
        return {
            name: partial(self.call, catalogue, tool) for name, tool in catalogue.tools.items() if tool.task is not None
        }

    def methods(self, catalogue: Catalogue) -> dict[str, Any]:
        return {
            "tasks/get": partial(self.get, catalogue),
            "tasks/update": partial(self.update, catalogue),
            "tasks/cancel": partial(self.cancel, catalogue),
        }

    def listen_filters(self, catalogue: Catalogue) -> dict[str, Any]:
        return {"taskIds": self.agree}

    # -- tools/call ------------------------------------------------------------------------

    def call(self, catalogue: Catalogue, tool: Tool, params: dict[str, Any]) -> Any:
        """``tools/call`` of a task tool: a task for a client declaring the extension, else as any call."""
        if not client_declares(catalogue, params, TASKS):
            if tool.task == "required":
                raise missing_extension(TASKS)
            return catalogue.call_tool(params)
        try:
            arguments = tool.check_arguments(params.get("arguments", _NO_ARGUMENTS))
        except InvalidArguments as invalid:
            return error_result(invalid.args[0]) if invalid.args else catalogue.invalid_arguments[tool.name]
        return Deferred(self.start, ASYNC, None, False, (catalogue, tool, arguments, owner_of(CALLER.get())))

    async def start(
        self, catalogue: Catalogue, tool: Tool, arguments: dict[str, Any], owner: str | None, ctx: Context
    ) -> bytes:
        """Decide (a tool's own function may, and may ask the client first), then make the task."""
        decide = tool.task
        if callable(decide):
            chosen = decide(arguments, ctx)
            if inspect.isawaitable(chosen):
                chosen = await chosen
            if not chosen:
                return await self.execute(tool, arguments, ctx)
        round_ = ctx._round  # the request's round: the answers gathered before the task
        moment = now_ms()
        stamp = self.timestamp()
        record = {
            "taskId": self.new_task_id(),
            "status": "working",
            "createdAt": stamp,
            "lastUpdatedAt": stamp,
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_interval_ms,
            "expiresAt": moment + self.ttl_ms,
            "owner": owner,
            "tool": tool.name,
            "arguments": arguments,
            "capabilities": ctx.client_capabilities,
            "answers": dict(round_.answers) if round_ is not None else {},
            "responses": {},
            "state": round_.state if round_ is not None else None,
            "inputRequests": None,
            "lease": moment + self.lease_ms,
        }
        try:
            await self.store.create(record)
        except TaskLimit as error:
            log("warning", f"tool {tool.name!r}: {error}")
            raise RpcError(INTERNAL_ERROR, "Too many tasks in flight") from None
        self.launch(catalogue, tool, record)
        body = created(record)
        if round_ is not None and round_.modern and catalogue.modern is not None:
            body = body[:-1] + catalogue.modern.meta + b"}"  # as every 2026-07-28 result, it names the server
        return body

    def launch(self, catalogue: Catalogue, tool: Tool, record: dict[str, Any]) -> None:
        """Run a task's work in the background of this process."""
        task_id = record["taskId"]
        job = asyncio.get_running_loop().create_task(self.run(catalogue, tool, record))
        self.running[task_id] = job
        job.add_done_callback(lambda done: self.running.pop(task_id) if self.running.get(task_id) is done else None)

    async def run(self, catalogue: Catalogue, tool: Tool, record: dict[str, Any]) -> None:
        """One run of a task's tool, its outcome kept: completed, failed or input_required."""
        task_id = record["taskId"]
        round_ = Round(True, record["capabilities"], None, record["responses"], record["state"], record["answers"])
        ctx = Context(catalogue.session, dumps(task_id), None, round_)
        renewing = asyncio.get_running_loop().create_task(self.renew(task_id)) if self.store.shared else None
        try:
            body = await self.execute(tool, record["arguments"], ctx)
        except InputRequired as ask:
            status, changes = "input_required", {"inputRequests": ask.requests, "state": ask.state, "responses": {}}
        except RpcError as error:
            status, changes = "failed", {"error": error_object(error)}
        except asyncio.CancelledError:
            raise
        except BaseException:  # noqa: BLE001 - the task fails, the server goes on
            log_exception(f"task of tool {tool.name!r} failed")
            status, changes = "failed", {"error": {"code": INTERNAL_ERROR, "message": "Internal error"}}
        else:
            status, changes = "completed", {"result": body}
        finally:
            if renewing is not None:
                renewing.cancel()
        try:
            await self.settle(task_id, status, **changes)
        except Exception:  # noqa: BLE001 - a store that failed (Redis gone, say): logged, the server goes on
            log_exception(f"the outcome of task {task_id} could not be kept")

    async def execute(self, tool: Tool, arguments: dict[str, Any], ctx: Context) -> bytes:
        """The tool's result body (a sync tool runs in a worker thread); an :class:`RpcError` it raises,
        and its questions (:class:`InputRequired`), go on up."""
        kwargs = arguments if tool.context_name is None else {**arguments, tool.context_name: ctx}
        try:
            if tool.is_async:
                value = await tool.func(**kwargs)
            else:
                run = contextvars.copy_context().run
                value = await asyncio.get_running_loop().run_in_executor(None, run, partial(tool.func, **kwargs))
            return tool.encode(value)
        except RpcError:
            raise
        except HANDLER_FAULTS as error:
            return tool.failed(error)

    async def settle(self, task_id: str, status: str, **changes: Any) -> None:
        """A task's new status, unless it already ended (cancelled meanwhile, say); its listeners told."""

        def change(record: dict[str, Any]) -> dict[str, Any] | None:
            if record["status"] in TERMINAL:
                return None
            record.update(changes, status=status, lastUpdatedAt=self.timestamp())
            if status != "input_required":
                record["inputRequests"] = None
            return record

        record = await self.store.change(task_id, change)
        if record is not None and record["status"] == status:
            self.notify(record)

    async def renew(self, task_id: str) -> None:
        """With a shared store: renew this process's word that it runs the task; stop the work when
        another process cancelled it."""
        while True:
            await asyncio.sleep(self.lease_ms / 3000)

            def change(record: dict[str, Any]) -> dict[str, Any] | None:
                if record["status"] in TERMINAL:
                    return None
                record["lease"] = now_ms() + self.lease_ms
                return record

            try:
                record = await self.store.change(task_id, change)
            except Exception:  # noqa: BLE001 - the store failed: tried again at the next renewal
                log_exception(f"task {task_id}: the word that this process runs it could not be renewed")
                continue
            if record is None or record["status"] == "cancelled":
                job = self.running.get(task_id)
                if job is not None:
                    job.cancel()
                return

    # -- tasks/get, tasks/update, tasks/cancel ----------------------------------------------

    def task_id(self, catalogue: Catalogue, params: Any) -> str:
        """The request's ``taskId``: -32021 for a client without the extension, -32602 without an id."""
        if not client_declares(catalogue, params, TASKS):
            raise missing_extension(TASKS)
        task_id = params.get("taskId") if type(params) is dict else None
        if type(task_id) is not str:
            raise RpcError(INVALID_PARAMS, "Invalid params")
        return task_id

    async def lookup(self, task_id: str, owner: str | None) -> dict[str, Any]:
        """The caller's task (-32602 when there is none, or it is someone else's); a ``working`` task
        whose process ended (its word lapsed) failed."""
        record = owned(await self.store.get(task_id), task_id, owner)
        if self.store.shared and record["status"] == "working" and record["lease"] < now_ms():
            await self.settle(
                task_id, "failed", error={"code": INTERNAL_ERROR, "message": "The process running the task ended"}
            )
            record = await self.store.get(task_id) or record
        return record

    def get(self, catalogue: Catalogue, params: Any) -> bytes | Deferred:
        """``tasks/get``: the task, its result or error inlined once it ended (at once from a store that can)."""
        task_id = self.task_id(catalogue, params)
        owner = owner_of(CALLER.get())
        if self.store.at_once:
            return detailed(owned(self.store.read(task_id), task_id, owner))
        return Deferred(self.get_task, ASYNC, None, False, (task_id, owner), False)

    async def get_task(self, task_id: str, owner: str | None) -> bytes:
        return detailed(await self.lookup(task_id, owner))

    def update(self, catalogue: Catalogue, params: Any) -> Deferred:
        """``tasks/update``: answers to an ``input_required`` task's requests; an empty acknowledgement."""
        task_id = self.task_id(catalogue, params)
        responses = params.get("inputResponses")
        if type(responses) is not dict:
            raise RpcError(INVALID_PARAMS, "Invalid inputResponses")
        args = (catalogue, task_id, responses, owner_of(CALLER.get()))
        return Deferred(self.update_task, ASYNC, None, False, args, False)

    async def update_task(
        self, catalogue: Catalogue, task_id: str, responses: dict[str, Any], owner: str | None
    ) -> bytes:
        await self.lookup(task_id, owner)
        resumed = []

        def change(record: dict[str, Any]) -> dict[str, Any] | None:
            asked = record["inputRequests"]
            if record["status"] != "input_required" or not asked:
                return None
            given = {key: value for key, value in responses.items() if key in asked and type(value) is dict}
            if not given:
                return None
            record["answers"] = {**record["answers"], **given}
            record["responses"] = {**record["responses"], **given}
            pending = {key: request for key, request in asked.items() if key not in given}
            record["lastUpdatedAt"] = self.timestamp()
            if pending:
                record["inputRequests"] = pending
            else:
                record.update(status="working", inputRequests=None, lease=now_ms() + self.lease_ms)
                resumed.append(True)
            return record

        record = await self.store.change(task_id, change)
        if resumed:
            self.notify(record)
            tool = catalogue.tools.get(record["tool"])
            if tool is None:
                await self.settle(task_id, "failed", error={"code": INTERNAL_ERROR, "message": "Unknown tool"})
            else:
                self.launch(catalogue, tool, record)
        return _ACK

    def cancel(self, catalogue: Catalogue, params: Any) -> Deferred:
        """``tasks/cancel``: the task ends ``cancelled`` (unless it already ended); an empty acknowledgement."""
        args = (self.task_id(catalogue, params), owner_of(CALLER.get()))
        return Deferred(self.cancel_task, ASYNC, None, False, args, False)

    async def cancel_task(self, task_id: str, owner: str | None) -> bytes:
        await self.lookup(task_id, owner)
        await self.settle(task_id, "cancelled")
        job = self.running.get(task_id)
        if job is not None:
            job.cancel()
        return _ACK

    # -- notifications/tasks ----------------------------------------------------------------

    def agree(self, value: Any) -> TaskIds:
        """The ``taskIds`` member of a ``subscriptions/listen`` filter: the ids, for this caller's tasks."""
        if type(value) is not list or any(type(task_id) is not str for task_id in value):
            raise RpcError(INVALID_PARAMS, "Invalid taskIds")
        agreed = TaskIds(value)
        agreed.owner = owner_of(CALLER.get())
        return agreed

    def notify(self, record: dict[str, Any]) -> None:
        """``notifications/tasks`` to the listeners that named the task (and are its owner), through the bus:
        this process's, and with Redis every process's."""
        head = dumps([record["taskId"], record["owner"]])
        self.app.bus.publish(TASK, head + b"\n" + detailed(record))

    def tell(self, payload: bytes) -> None:
        """The bus's task changes: ``notifications/tasks`` to this process's listeners that named the task."""
        head, _, body = payload.partition(b"\n")
        task_id, owner = loads(head)
        for session in list(self.app._sessions):
            for subscription, agreed in list(session.listeners.values()):
                ids = agreed.get("taskIds")
                if ids is None or task_id not in ids or ids.owner != owner:
                    continue
                meta = b'{"_meta":{"%s":%s},' % (META_SUBSCRIPTION.encode(), dumps(subscription))
                session.send(b'{"jsonrpc":"2.0","method":"notifications/tasks","params":' + meta + body[1:] + b"}\n")
