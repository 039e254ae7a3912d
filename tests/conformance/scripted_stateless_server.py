"""A scripted stdio server of the 2026-07-28 kind (standard library only) for the stateless bridge's tests.

Requests it serves (any other: -32601), all ``tools/call`` by ``params.name`` but the last:

- ``report``: answers ``{"pending": [...], "cancelled": [...], "notified": [...]}``: the ids of
  the requests it holds unanswered, of those it was told were cancelled, and the methods of the
  client notifications it got, each in order;
- ``chatty``: writes progress 1 of 1 (for ``_meta.progressToken``) and a log message, then answers;
- ``fail``: answers the error ``{"code": arguments.code, "message": "Failed"}``;
- ``hold``: writes progress 0 of 1 at once, and answers when the client notification
  ``notifications/release`` comes (not at all once cancelled);
- ``change``: writes ``notifications/tools/list_changed`` tagged for each open listen, then answers;
- ``exit``: exits at once with status 3, answering nothing;
- ``subscriptions/listen``: writes the acknowledgement tagged with the request's id; the
  subscription ends with a ``notifications/cancelled`` for it.
"""

from __future__ import annotations

import json
import sys

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


def send(message: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def text(value: str) -> dict:
    return {"resultType": "complete", "content": [{"type": "text", "text": value}]}


def main() -> None:
    held: list = []  # ids of hold requests not answered yet
    cancelled: list = []
    notified: list[str] = []
    listens: list = []
    for line in sys.stdin:
        message = json.loads(line)
        method, params = message.get("method"), message.get("params") or {}
        if "id" not in message:
            notified.append(method)
            if method == "notifications/cancelled":
                request = params.get("requestId")
                cancelled.append(request)
                for pending in (held, listens):
                    if request in pending:
                        pending.remove(request)
            elif method == "notifications/release":
                for request in held:
                    send({"id": request, "result": text("released")})
                held.clear()
            continue
        request, name = message["id"], params.get("name")
        token = params.get("_meta", {}).get("progressToken")
        if method == "subscriptions/listen":
            listens.append(request)
            acknowledged = {"_meta": {SUBSCRIPTION_ID: request}, "notifications": params.get("notifications", {})}
            send({"method": "notifications/subscriptions/acknowledged", "params": acknowledged})
            continue
        if method != "tools/call" or name not in ("report", "chatty", "fail", "hold", "change", "exit"):
            send({"id": request, "error": {"code": -32601, "message": "Method not found"}})
        elif name == "report":
            report = {"pending": held, "cancelled": cancelled, "notified": notified}
            send({"id": request, "result": text(json.dumps(report, separators=(",", ":")))})
        elif name == "chatty":
            send({"method": "notifications/progress", "params": {"progressToken": token, "progress": 1, "total": 1}})
            send({"method": "notifications/message", "params": {"level": "info", "data": "working"}})
            send({"id": request, "result": text("done")})
        elif name == "fail":
            send({"id": request, "error": {"code": params["arguments"]["code"], "message": "Failed"}})
        elif name == "hold":
            held.append(request)
            send({"method": "notifications/progress", "params": {"progressToken": token, "progress": 0, "total": 1}})
        elif name == "change":
            for listen in listens:
                send({"method": "notifications/tools/list_changed", "params": {"_meta": {SUBSCRIPTION_ID: listen}}})
            send({"id": request, "result": text("changed")})
        else:
            raise SystemExit(3)


if __name__ == "__main__":
    main()
