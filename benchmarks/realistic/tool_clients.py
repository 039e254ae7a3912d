"""The tools' clients: redis-py's asyncio client (with hiredis's parser whenever it is installed) and an HTTP
client for the API service, httpx by default or aiohttp, chosen by the environment:

- ``REALISTIC_REDIS_URL``: ``redis://127.0.0.1:PORT/0``
- ``REALISTIC_API_URL``: ``http://127.0.0.1:PORT``
- ``REALISTIC_HTTP_CLIENT``: ``httpx`` (default) or ``aiohttp``
- ``REALISTIC_REDIS_PARSER``: ``hiredis`` (default: hiredis's C parser, redis-py's own choice when it is
  installed) or ``python`` (redis-py's pure-Python RESP parser, as without hiredis)

Each server process makes its clients once, on its first tool call, in its own event loop (:func:`shared`).
"""

from __future__ import annotations

import os

HTTP_CLIENTS = ("httpx", "aiohttp")
REDIS_PARSERS = ("hiredis", "python")
#: Connections kept open to the API service per process: more than the calls one process has in flight.
POOL = 100


class HttpxApi:
    def __init__(self, base_url: str) -> None:
        import httpx

        limits = httpx.Limits(max_connections=POOL, max_keepalive_connections=POOL)
        self.client = httpx.AsyncClient(base_url=base_url, limits=limits)

    async def get_json(self, path: str, params: dict | None) -> dict | None:
        """The JSON of a GET, None on 404."""
        response = await self.client.get(path, params=params)
        if response.status_code == 404:
            return None
        response.raise_for_status()
        return response.json()

    async def post_json(self, path: str, body: dict) -> dict:
        response = await self.client.post(path, json=body)
        response.raise_for_status()
        return response.json()


class AiohttpApi:
    def __init__(self, base_url: str) -> None:
        import aiohttp

        self.client = aiohttp.ClientSession(base_url=base_url, connector=aiohttp.TCPConnector(limit=POOL))

    async def get_json(self, path: str, params: dict | None) -> dict | None:
        """The JSON of a GET, None on 404."""
        async with self.client.get(path, params=params) as response:
            if response.status == 404:
                return None
            response.raise_for_status()
            return await response.json()

    async def post_json(self, path: str, body: dict) -> dict:
        async with self.client.post(path, json=body) as response:
            response.raise_for_status()
            return await response.json()


class Clients:
    """What the tools are given: ``redis`` (redis.asyncio.Redis) and ``api`` (get_json, post_json)."""

    def __init__(self, redis_url: str, api_url: str, http_client: str = "httpx", redis_parser: str = "hiredis") -> None:
        import redis.asyncio

        if http_client not in HTTP_CLIENTS:
            raise ValueError(f"unknown HTTP client {http_client!r} (one of {', '.join(HTTP_CLIENTS)})")
        if redis_parser not in REDIS_PARSERS:
            raise ValueError(f"unknown Redis parser {redis_parser!r} (one of {', '.join(REDIS_PARSERS)})")
        if redis_parser == "python":
            from redis._parsers import _AsyncRESP2Parser

            self.redis = redis.asyncio.Redis.from_url(redis_url, parser_class=_AsyncRESP2Parser)
        else:
            self.redis = redis.asyncio.Redis.from_url(redis_url)
        self.api = HttpxApi(api_url) if http_client == "httpx" else AiohttpApi(api_url)


_shared: Clients | None = None


def shared() -> Clients:
    """This process's clients, made on first use from the environment."""
    global _shared
    if _shared is None:
        _shared = Clients(
            os.environ["REALISTIC_REDIS_URL"],
            os.environ["REALISTIC_API_URL"],
            os.environ.get("REALISTIC_HTTP_CLIENT", "httpx"),
            os.environ.get("REALISTIC_REDIS_PARSER", "hiredis"),
        )
    return _shared
