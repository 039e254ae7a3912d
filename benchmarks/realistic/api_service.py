"""The product-catalogue HTTP API the tools call: a small asyncio protocol on httptools' parser and uvloop,
so that it is never the bottleneck of the benchmark.

    python benchmarks/realistic/api_service.py PORT

- ``GET /products?q=&category=&limit=``: ``{"total": matches, "items": [product, ...]}`` (see dataset.search)
- ``GET /products/{id}``: the product, or 404 ``{"error":"not found"}``
- ``POST /cart/calculate`` with ``{"tier": str, "items": [{"product_id": int, "quantity": int}, ...]}``: the
  priced cart (see dataset.price_cart), or 400 ``{"error":"bad cart"}``

Keep-alive HTTP/1.1 on loopback; answers to the same GET are encoded once and kept.
"""

from __future__ import annotations

import asyncio
import os
import sys
from urllib.parse import parse_qs

import httptools
import orjson

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import dataset  # noqa: E402

CATALOGUE = dataset.products()
BY_ID = {p["id"]: p for p in CATALOGUE}
PRODUCT_BODIES = {str(p["id"]).encode(): orjson.dumps(p) for p in CATALOGUE}
NOT_FOUND = b'{"error":"not found"}'
BAD_CART = b'{"error":"bad cart"}'
STATUS_LINES = {200: b"HTTP/1.1 200 OK\r\n", 400: b"HTTP/1.1 400 Bad Request\r\n", 404: b"HTTP/1.1 404 Not Found\r\n"}
#: Most search answers kept encoded (the benchmark asks far fewer distinct ones).
SEARCH_CACHE_SIZE = 10_000


def search_body(query: bytes, cache: dict) -> bytes:
    body = cache.get(query)
    if body is None:
        fields = parse_qs(query.decode("ascii", "replace"))
        try:
            limit = int(fields.get("limit", ["10"])[0])
        except ValueError:
            limit = 10
        found = dataset.search(CATALOGUE, fields.get("q", [""])[0], fields.get("category", [""])[0], limit)
        body = orjson.dumps(found)
        if len(cache) < SEARCH_CACHE_SIZE:
            cache[query] = body
    return body


def cart_body(body: bytes) -> tuple[int, bytes]:
    try:
        order = orjson.loads(body)
        lines = [(int(item["product_id"]), int(item["quantity"])) for item in order["items"]]
        priced = dataset.price_cart(BY_ID, lines, str(order.get("tier", "")))
    except (ValueError, TypeError, KeyError):
        priced = None
    return (400, BAD_CART) if priced is None else (200, orjson.dumps(priced))


def answer(method: bytes, url: bytes, body: bytes, cache: dict) -> tuple[int, bytes]:
    """The status and JSON body for one request."""
    path, _, query = url.partition(b"?")
    if method == b"GET" and path == b"/products":
        return 200, search_body(query, cache)
    if method == b"GET" and path.startswith(b"/products/"):
        found = PRODUCT_BODIES.get(path[10:])
        return (404, NOT_FOUND) if found is None else (200, found)
    if method == b"POST" and path == b"/cart/calculate":
        return cart_body(body)
    return 404, NOT_FOUND


class ApiProtocol(asyncio.Protocol):
    """One connection: parse requests with httptools, answer each as soon as its body is whole."""

    cache: dict = {}

    def connection_made(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        self.parser = httptools.HttpRequestParser(self)
        self.url = b""
        self.body: list = []

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self.transport.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            self.transport.close()

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        status, body = answer(self.parser.get_method(), self.url, b"".join(self.body), self.cache)
        keep = self.parser.should_keep_alive()
        self.transport.write(
            STATUS_LINES[status]
            + b"Content-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode()
            + (b"\r\n\r\n" if keep else b"\r\nConnection: close\r\n\r\n")
            + body
        )
        self.url, self.body = b"", []
        if not keep:
            self.transport.close()


async def serve(port: int) -> None:
    server = await asyncio.get_running_loop().create_server(ApiProtocol, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    import signal

    import uvloop

    # Nothing to flush: stop at once, whatever keep-alive connections are still open (closing the server would
    # wait for each of them).
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    uvloop.run(serve(int(sys.argv[1])))
