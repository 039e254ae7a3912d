"""Who may call, and in what form: Host and Origin (DNS rebinding), content type and Accept.

On a loopback address (the connection arrived on 127.0.0.0/8 or ::1) only the localhost
names pass by default: ``localhost``, ``127.0.0.1`` and ``[::1]``, with any port. Elsewhere any
Host passes by default, and an Origin must name the request's own Host. ``allowed_hosts`` and
``allowed_origins`` replace the defaults: an entry without a port admits every port, ``"*"``
admits all.
"""

from __future__ import annotations

from functools import lru_cache
from ipaddress import ip_address

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})
#: The message of each status :meth:`Guard.refusal` gives.
REFUSALS = {421: "Misdirected Request: Host not allowed", 403: "Forbidden: Origin not allowed"}


def split_host(host: str) -> tuple[str, str | None]:
    """``("name", "port")`` of a Host value (``[v6]:port`` included); the port is None when absent."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        if end > 0 and (end + 1 == len(host) or host[end + 1] == ":"):
            return host[: end + 1], host[end + 2 :] or None
        return host, None
    name, colon, port = host.partition(":")
    return name, (port if colon else None)


def loopback_address(host: str | None) -> bool:
    """Whether an address (the one a connection arrived on) is a loopback one."""
    try:
        return host is not None and ip_address(host).is_loopback
    except ValueError:
        return False


class HostRule:
    """Which Host (or Origin host) values pass: exact names, optionally with a port, or all."""

    __slots__ = ("everyone", "names", "pairs")

    def __init__(self, entries: Iterable[str]) -> None:
        self.everyone = False
        self.names: set[str] = set()
        self.pairs: set[tuple[str, str]] = set()
        for entry in entries:
            if entry.strip() == "*":
                self.everyone = True
                continue
            name, port = split_host(entry)
            if port is None:
                self.names.add(name)
            else:
                self.pairs.add((name, port))

    def admits(self, host: str) -> bool:
        if self.everyone:
            return True
        name, port = split_host(host)
        return name in self.names or (port is not None and (name, port) in self.pairs)


LOCAL_RULE = HostRule(LOCAL_NAMES)


def origin_host(origin: str) -> str | None:
    """The ``host[:port]`` of an Origin value ``scheme://host[:port]`` (None: not one)."""
    scheme, sep, rest = origin.strip().partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest or "/" in rest:
        return None
    return rest


class Guard:
    """The Host and Origin checks of one app."""

    def __init__(self, allowed_hosts: Iterable[str] | None, allowed_origins: Iterable[str] | None) -> None:
        self.hosts = None if allowed_hosts is None else HostRule(allowed_hosts)
        self.origins = None if allowed_origins is None else HostRule(_origin_hosts(allowed_origins))
        #: :meth:`_refusal`, remembered: a server sees the same few Host and Origin values again and again.
        self.refusal = lru_cache(maxsize=256)(self._refusal)

    def _refusal(self, host: bytes | None, origin: bytes | None, address: str | None) -> int:
        """0 when the Host and Origin headers pass, else the status refusing them: 421 (Host) or 403 (Origin).

        ``address``: where the connection arrived (``scope["server"][0]``; None when unknown).
        """
        loopback = loopback_address(address)
        host_text = None if host is None else host.decode("latin-1")
        if self.host_refused(host_text, loopback):
            return 421
        if origin is not None and self.origin_refused(origin.decode("latin-1"), host_text, loopback):
            return 403
        return 0

    def host_refused(self, host: str | None, loopback: bool) -> bool:
        """Whether the Host header refuses the request (a missing Host passes only off loopback)."""
        rule = self.hosts if self.hosts is not None else LOCAL_RULE if loopback else None
        if rule is None:
            return False
        return host is None or not rule.admits(host)

    def origin_refused(self, origin: str | None, host: str | None, loopback: bool) -> bool:
        """Whether the Origin header (when present) refuses the request."""
        if origin is None:
            return False
        named = origin_host(origin)
        if named is None:
            return True
        if self.origins is not None:
            return not self.origins.admits(named)
        if loopback:
            return not LOCAL_RULE.admits(named)
        return host is None or split_host(named) != split_host(host)


def post_refusal(content_type: bytes | None, encoding: bytes | None, accept: bytes | None) -> tuple[int, str] | None:
    """``(status, message)`` refusing a POST by its Content-Type, Content-Encoding and Accept values, or None."""
    if not is_json(content_type):
        return 415, "Unsupported Media Type: send application/json"
    if encoding is not None and encoding.strip().lower() != b"identity":
        return 415, "Unsupported Media Type: send the body unencoded"
    if accepts(accept) == (False, False):
        return 406, "Not Acceptable: accept application/json or text/event-stream"
    return None


#: :func:`post_refusal` and :func:`accepts` together, remembered: a client sends the same few values.
@lru_cache(maxsize=256)
def post_verdict(
    content_type: bytes | None, encoding: bytes | None, accept: bytes | None
) -> tuple[tuple[int, str] | None, bool, bool]:
    """``(refusal, json_ok, stream_ok)`` of a POST's Content-Type, Content-Encoding and Accept values."""
    return (post_refusal(content_type, encoding, accept), *accepts(accept))


def _origin_hosts(origins: Iterable[str]) -> list[str]:
    hosts = []
    for origin in origins:
        if origin.strip() == "*":
            hosts.append("*")
            continue
        named = origin_host(origin)
        if named is None:
            raise ValueError(f"allowed origin {origin!r} is not of the form http(s)://host[:port]")
        hosts.append(named)
    return hosts


def media_types(accept: str) -> set[str]:
    """The media types an Accept value admits (those with ``q=0`` left out)."""
    admitted = set()
    for item in accept.split(","):
        kind, _, parameters = item.partition(";")
        refused = any(
            p.strip().replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000") for p in parameters.split(";")
        )
        if kind.strip() and not refused:
            admitted.add(kind.strip().lower())
    return admitted


def _is_zero_quality(parameter: str) -> bool:
    name, _, value = parameter.partition("=")
    try:
        return name.strip().lower() == "q" and float(value) == 0
    except ValueError:
        return False


@lru_cache(maxsize=256)
def accepts(accept: bytes | None) -> tuple[bool, bool]:
    """``(json, event_stream)``: which answers an Accept value admits (no Accept admits both)."""
    if accept is None:
        return True, True
    types = media_types(accept.decode("latin-1"))
    anything = "*/*" in types
    return (
        anything or "application/json" in types or "application/*" in types,
        anything or "text/event-stream" in types or "text/*" in types,
    )


@lru_cache(maxsize=256)
def is_json(content_type: bytes | None) -> bool:
    """Whether a Content-Type is JSON: ``application/json``, with no charset but UTF-8."""
    if content_type is None:
        return False
    kind, _, parameters = content_type.decode("latin-1").partition(";")
    if kind.strip().lower() != "application/json":
        return False
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return False
    return True
