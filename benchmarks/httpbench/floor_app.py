"""The floor: a bare ASGI app on the same uvicorn (httptools, uvloop) that reads each POST's body and
answers one fixed JSON-RPC result, with no parsing and no checks. No Python server on HTTP here does less.

usage: python floor_app.py PORT
"""

from __future__ import annotations

import sys

import uvicorn

ANSWER = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"floor"}]}}\n'
START = {
    "type": "http.response.start",
    "status": 200,
    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(ANSWER)).encode())],
}
BODY = {"type": "http.response.body", "body": ANSWER}


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    while (await receive()).get("more_body"):
        pass
    await send(START)
    await send(BODY)


if __name__ == "__main__":
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=int(sys.argv[1]),
        http="httptools",
        loop="uvloop",
        log_level="warning",
        server_header=False,
        lifespan="on",
    )
