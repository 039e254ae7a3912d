"""The floor: a plain Python loop that answers the benchmark catalogue with no validation at all.

    python naive_loop.py           # iterate sys.stdin.buffer, write each reply and flush after every line
    python naive_loop.py --batch   # os.read() big chunks, one write per chunk (flushes when input is drained)

Each line is `orjson.loads`-ed and answered with a preformatted reply around the request's id. It knows only
the methods the benchmark sends and trusts every request: it is what "the minimum work a Python process must
do per message" looks like, not a server.
"""

import os
import sys

import orjson

loads = orjson.loads
dumps = orjson.dumps

HEAD = b'{"jsonrpc":"2.0","id":'
TAILS = {
    "initialize": b',"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{}},'
    b'"serverInfo":{"name":"shipcode-mcp","version":"1.0.0"}}}\n',
    "ping": b',"result":{}}\n',
    "tools/list": b',"result":{"tools":[{"name":"echo","description":"Echo back the given text","inputSchema":'
    b'{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}},'
    b'{"name":"add","description":"Add two numbers","inputSchema":{"type":"object","properties":{"a":{"type":'
    b'"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}}]}}\n',
    "resources/list": b',"result":{"resources":[{"uri":"file:///hello.txt","name":"hello.txt",'
    b'"mimeType":"text/plain"}]}}\n',
    "resources/read": b',"result":{"contents":[{"uri":"file:///hello.txt","mimeType":"text/plain",'
    b'"text":"Hello, world!"}]}}\n',
}
NOT_FOUND = b',"error":{"code":-32601,"message":"Method not found"}}\n'
TEXT_HEAD = b',"result":{"content":[{"type":"text","text":'
TEXT_TAIL = b"}]}}\n"


def reply(line):
    msg = loads(line)
    if "id" not in msg:
        return None
    method = msg["method"]
    tail = TAILS.get(method)
    if tail is None:
        if method != "tools/call":
            return HEAD + dumps(msg["id"]) + NOT_FOUND
        params = msg["params"]
        args = params["arguments"]
        if params["name"] == "echo":
            text = args["text"]
        else:
            total = args["a"] + args["b"]
            if type(total) is float and total.is_integer() and abs(total) < 1e21:
                total = int(total)
            text = str(total)
        tail = TEXT_HEAD + dumps(text) + TEXT_TAIL
    return HEAD + dumps(msg["id"]) + tail


def per_line():
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        data = reply(line)
        if data is not None:
            out.write(data)
            out.flush()


def batch():
    pending = b""
    while True:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            break
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        replies = [r for r in map(reply, lines) if r is not None]
        if replies:
            os.write(1, b"".join(replies))
    if pending.strip():
        data = reply(pending)
        if data is not None:
            os.write(1, data)


if __name__ == "__main__":
    batch() if "--batch" in sys.argv[1:] else per_line()
