"""A scripted stdio MCP server (standard library only) for the bridge's tests.

It answers ``initialize`` and ``ping``; its one tool, ``round_trip``, talks back before it
answers: a log message, progress 1 of 2, the requests ``sampling/createMessage``,
``elicitation/create`` and ``roots/list`` (ids ``s-1`` to ``s-3``, each awaited in turn),
``notifications/resources/updated``, progress 2 of 2; its result's text is the JSON list of
the three responses as received. Any other request: -32601.
"""

from __future__ import annotations

import json
import sys

SERVER_REQUESTS = [
    (
        "s-1",
        "sampling/createMessage",
        {"messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}], "maxTokens": 5},
    ),
    (
        "s-2",
        "elicitation/create",
        {"message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}},
    ),
    ("s-3", "roots/list", {}),
]


def send(message: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def response_to(request_id: str) -> dict:
    """Read lines until the response with this id; answer pings met on the way."""
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("id") == request_id and "method" not in message:
            return message
        if message.get("method") == "ping":
            send({"id": message["id"], "result": {}})
    raise SystemExit(f"input ended while waiting for {request_id}")


def round_trip(token: object) -> dict:
    send({"method": "notifications/message", "params": {"level": "info", "data": "started"}})
    send({"method": "notifications/progress", "params": {"progressToken": token, "progress": 1, "total": 2}})
    answers = []
    for request_id, method, params in SERVER_REQUESTS:
        send({"id": request_id, "method": method, "params": params})
        answers.append(response_to(request_id))
    send({"method": "notifications/resources/updated", "params": {"uri": "test://watched"}})
    send({"method": "notifications/progress", "params": {"progressToken": token, "progress": 2, "total": 2}})
    return {"content": [{"type": "text", "text": json.dumps(answers, separators=(",", ":"))}]}


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # notifications, and responses nobody waits for
        method, params = message["method"], message.get("params") or {}
        if method == "initialize":
            capabilities = {"tools": {}, "logging": {}, "resources": {"subscribe": True}}
            result = {
                "protocolVersion": params["protocolVersion"],
                "capabilities": capabilities,
                "serverInfo": {"name": "scripted", "version": "1.0.0"},
            }
        elif method == "ping":
            result = {}
        elif method == "tools/call" and params.get("name") == "round_trip":
            result = round_trip(params.get("_meta", {}).get("progressToken"))
        else:
            send({"id": message["id"], "error": {"code": -32601, "message": "Method not found"}})
            continue
        send({"id": message["id"], "result": result})


if __name__ == "__main__":
    main()
