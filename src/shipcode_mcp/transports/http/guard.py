"""Who may call, and in what form: Host and Origin (DNS rebinding), content type and Accept.

Host and Origin values are RFC 3986 authorities: a name (letters, digits, ``-._~``), an IPv4
address or a bracketed IPv6 address, and an optional port of digits, 1 to 65535; anything else
(userinfo, quotes, spaces, an empty or zero port) is not. An invalid Host is 400 (RFC 9112).
Origins (RFC 6454) are ``http`` or ``https``, a host and a port, compared exactly: a port not
written is the scheme's default (80, 443).

On a loopback address (the connection arrived on 127.0.0.0/8 or ::1) only the localhost
names pass by default: ``localhost``, ``127.0.0.1`` and ``[::1]``, at any port (as Host, and in
an ``http`` or ``https`` Origin). Elsewhere any Host passes by default, and an Origin must be
the server's own: the public URL's when one is configured, else the request's scheme and Host.
``allowed_hosts`` and ``allowed_origins`` replace the defaults; their entries are exact:
``host`` is that host at the scheme's default port, ``host:port`` that port, ``host:*`` any
port (``http://host``, ``http://host:8000`` and ``http://host:*`` for origins), ``*`` anything.
"""

from __future__ import annotations

import re
from functools import lru_cache
from ipaddress import IPv6Address, ip_address

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    #: ``(scheme, host, port)``: an origin, its port always written out.
    Origin = tuple[str, str, int]

#: The port a scheme means when none is written.
DEFAULT_PORTS = {"http": 80, "https": 443}
#: An entry's port that admits every port.
ANY_PORT = -1
LOCAL_NAMES = ("localhost", "127.0.0.1", "[::1]")
#: The message of each status :meth:`Guard.refusal` gives.
REFUSALS = {
    400: "Bad Request: Host header is not a valid host[:port]",
    421: "Misdirected Request: Host not allowed",
    403: "Forbidden: Origin not allowed",
}
#: ``host[:port]`` with a wildcard port allowed (checked further by :func:`_authority`).
_AUTHORITY = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::([0-9]{1,5}|\*))?")
_ORIGIN = re.compile(r"([A-Za-z]+)://([^/?#]*)")


@lru_cache(maxsize=1024)
def _authority(text: str, wildcard: bool) -> tuple[str, int | None] | None:
    """``(host, port)`` of a ``host[:port]`` text: the host lower-cased (an IPv6 address in its short
    form, bracketed), the port None when not written (:data:`ANY_PORT` for ``*`` when ``wildcard``);
    None when the text is not one."""
    match = _AUTHORITY.fullmatch(text)
    if match is None:
        return None
    host, port = match.group(1).lower(), match.group(2)
    if host.startswith("["):
        try:
            host = f"[{IPv6Address(host[1:-1]).compressed}]"
        except ValueError:
            return None
    if port is None:
        return host, None
    if port == "*":
        return (host, ANY_PORT) if wildcard else None
    number = int(port)
    return (host, number) if 1 <= number <= 65535 else None


def authority(text: str) -> tuple[str, int | None] | None:
    """``(host, port)`` of a Host value (:func:`_authority`; spaces and tabs around it ignored), or None."""
    return _authority(text.strip(" \t"), False)


def origin_of(text: str, wildcard: bool = False) -> Origin | None:
    """``(scheme, host, port)`` of an ``http(s)://host[:port]`` origin, the port the scheme's default
    when not written (:data:`ANY_PORT` for ``:*`` when ``wildcard``); None when the text is not one."""
    match = _ORIGIN.fullmatch(text.strip(" \t"))
    if match is None:
        return None
    scheme = match.group(1).lower()
    named = _authority(match.group(2), wildcard)
    if scheme not in DEFAULT_PORTS or named is None:
        return None
    host, port = named
    return scheme, host, DEFAULT_PORTS[scheme] if port is None else port


def serialized(scheme: str, host: str, port: int | None) -> str:
    """An origin as text (RFC 6454): the port left out when it is the scheme's default."""
    if port is None or port == DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def public_origin(url: str) -> str:
    """The public URL of a server (``http(s)://host[:port]``), as :func:`serialized` writes it;
    ValueError when it is not one."""
    origin = origin_of(url.removesuffix("/")) if type(url) is str else None  # the root path is the origin's
    if origin is None:
        raise ValueError(f"public URL {url!r} is not http(s)://host[:port]")
    return serialized(*origin)


def loopback_address(host: str | None) -> bool:
    """Whether an address (the one a connection arrived on) is a loopback one."""
    try:
        return host is not None and ip_address(host).is_loopback
    except ValueError:
        return False


def _entries(entries: Iterable[str] | None, shown: str) -> list[str] | None:
    """A list of allowed values: None stays None (the defaults); an empty one is refused."""
    if entries is None:
        return None
    if isinstance(entries, str):
        raise ValueError(f"allowed {shown}s must be a list of strings, not a string")
    listed = [entry.strip() if type(entry) is str else entry for entry in entries]
    if not listed:
        raise ValueError(f"allowed {shown}s: the list is empty (it would refuse every request)")
    return listed


class HostRule:
    """Which Host values pass: a host at the scheme's default port, at one port or at any, or all."""

    __slots__ = ("everyone", "pairs")

    def __init__(self, entries: Iterable[str]) -> None:
        self.everyone = False
        #: ``(host, port)`` pairs; port None: the scheme's default port, :data:`ANY_PORT`: any port.
        self.pairs: set[tuple[str, int | None]] = set()
        for entry in entries:
            if entry == "*":
                self.everyone = True
                continue
            named = _authority(entry, True) if type(entry) is str else None
            if named is None:
                raise ValueError(f"allowed host {entry!r} is not host, host:port, host:* or *")
            self.pairs.add(named)

    def admits(self, host: str, port: int | None, scheme: str) -> bool:
        """Whether the Host ``host[:port]`` passes on a request of ``scheme``."""
        if self.everyone or (host, ANY_PORT) in self.pairs or (host, port) in self.pairs:
            return True
        default = DEFAULT_PORTS.get(scheme)
        if port is None:
            return (host, default) in self.pairs
        return port == default and (host, None) in self.pairs


class OriginRule:
    """Which origins pass: exact origins, a scheme and host at any port, or all."""

    __slots__ = ("everyone", "origins")

    def __init__(self, entries: Iterable[str]) -> None:
        self.everyone = False
        self.origins: set[Origin] = set()
        for entry in entries:
            if entry == "*":
                self.everyone = True
                continue
            origin = origin_of(entry, wildcard=True) if type(entry) is str else None
            if origin is None:
                raise ValueError(f"allowed origin {entry!r} is not http(s)://host[:port], http(s)://host:* or *")
            self.origins.add(origin)

    def admits(self, origin: Origin) -> bool:
        return self.everyone or origin in self.origins or (*origin[:2], ANY_PORT) in self.origins


LOCAL_HOSTS = HostRule(f"{name}:*" for name in LOCAL_NAMES)
LOCAL_ORIGINS = OriginRule(f"{scheme}://{name}:*" for scheme in DEFAULT_PORTS for name in LOCAL_NAMES)


class Guard:
    """The Host and Origin checks of one app."""

    def __init__(
        self,
        allowed_hosts: Iterable[str] | None,
        allowed_origins: Iterable[str] | None,
        public_url: str | None = None,
    ) -> None:
        hosts = _entries(allowed_hosts, "host")
        origins = _entries(allowed_origins, "origin")
        self.hosts = None if hosts is None else HostRule(hosts)
        self.origins = None if origins is None else OriginRule(origins)
        #: The server's own origin when a public URL is configured (else the request's scheme and Host).
        self.public = None if public_url is None else origin_of(public_origin(public_url))
        self.public_url = None if self.public is None else serialized(*self.public)
        #: :meth:`_refusal`, remembered: a server sees the same few Host and Origin values again and again.
        self.refusal = lru_cache(maxsize=256)(self._refusal)

    def _refusal(self, host: bytes | None, origin: bytes | None, address: str | None, scheme: str = "http") -> int:
        """0 when the Host and Origin headers pass, else the status refusing them: 400 (a Host that is not
        ``host[:port]``), 421 (a Host not allowed) or 403 (an Origin not allowed).

        ``address``: where the connection arrived (``scope["server"][0]``; None when unknown);
        ``scheme``: the request's (``scope["scheme"]``).
        """
        loopback = loopback_address(address)
        named = None
        if host is not None:
            named = authority(host.decode("latin-1"))
            if named is None:
                return 400
        rule = self.hosts if self.hosts is not None else LOCAL_HOSTS if loopback else None
        if rule is not None and (named is None or not rule.admits(*named, scheme)):
            return 421
        if origin is not None and self.origin_refused(origin_of(origin.decode("latin-1")), named, scheme, loopback):
            return 403
        return 0

    def origin_refused(
        self, origin: Origin | None, host: tuple[str, int | None] | None, scheme: str, loopback: bool
    ) -> bool:
        """Whether a request's Origin (None: not a valid origin) refuses it."""
        if origin is None:
            return True
        if self.origins is not None:
            return not self.origins.admits(origin)
        if loopback:
            return not LOCAL_ORIGINS.admits(origin)
        if self.public is not None:
            return origin != self.public
        if host is None or scheme not in DEFAULT_PORTS:
            return True
        return origin != (scheme, host[0], DEFAULT_PORTS[scheme] if host[1] is None else host[1])

    def own_origin(self, scheme: str, host: bytes | None, server: tuple[str, int] | None) -> str:
        """The server's origin as text, for the URLs it writes: the public URL, else the request's scheme
        and Host (one :meth:`refusal` let pass), else the address the connection arrived on."""
        if self.public_url is not None:
            return self.public_url
        named = None if host is None else authority(host.decode("latin-1"))
        if named is None:
            address, port = server or ("localhost", None)
            named = (f"[{address}]" if ":" in address else address, port)
        return serialized(scheme if scheme in DEFAULT_PORTS else "http", *named)


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
