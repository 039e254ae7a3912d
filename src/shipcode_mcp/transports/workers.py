"""What both transports do with deferred work: worker threads, and a finished job's answer."""

from __future__ import annotations

import threading
from concurrent.futures import Executor, Future

from .._log import log, log_exception
from ..protocol import INTERNAL_ERROR_TAIL, RESPONSE_HEAD, RESULT_MID, RESULT_TAIL, RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class WorkerPool(Executor):
    """Up to ``workers`` daemon threads, started as needed: a blocking tool that never
    returns cannot keep the process from exiting. Each thread first calls ``setup()``."""

    def __init__(self, workers: int, setup: Callable[[], object] | None = None) -> None:
        import queue

        self._queue: Any = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._workers = workers
        self._started = 0
        self._setup = setup

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        self._queue.put((future, fn, args, kwargs))
        if not self._idle.acquire(blocking=False) and self._started < self._workers:
            self._started += 1
            threading.Thread(target=self._work, name=f"shipcode-worker-{self._started}", daemon=True).start()
        return future

    def _work(self) -> None:
        if self._setup is not None:
            self._setup()
        while True:
            future, fn, args, kwargs = self._queue.get()
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as error:  # noqa: BLE001 - handed to the awaiting task
                    future.set_exception(error)
                else:
                    future.set_result(result)
            del future, fn, args, kwargs
            self._idle.release()


def job_answer(id_bytes: bytes, job: Any) -> bytes:
    """The answer line of the request ``id_bytes`` whose deferred work ``job`` (a task or future) is done."""
    if job.cancelled():
        log("error", "a handler was cancelled from within; answering Internal error")
        return RESPONSE_HEAD + id_bytes + INTERNAL_ERROR_TAIL
    error = job.exception()
    if error is None:
        body = job.result()
        if type(body) is bytes:
            return RESPONSE_HEAD + id_bytes + RESULT_MID + body + RESULT_TAIL
        log("error", f"internal error: a handler returned {type(body).__name__}, not bytes")
    elif isinstance(error, RpcError):
        return RESPONSE_HEAD + id_bytes + error.tail
    else:
        log_exception("internal error in a handler", error)
    return RESPONSE_HEAD + id_bytes + INTERNAL_ERROR_TAIL
