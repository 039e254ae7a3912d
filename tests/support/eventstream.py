"""An event stream from a server process, read one event at a time over a plain socket (``subscriptions/listen``,
a legacy session's GET stream): its status, its headers, then each event's whole bytes as they arrive."""

from __future__ import annotations

import socket
import time

#: A keep-alive comment between events: skipped.
KEEPALIVE = b":\n\n"
#: Every stream opened and not yet closed (:func:`close_all` closes them, whatever the test's outcome).
OPENED: list[EventStream] = []


def close_all() -> None:
    while OPENED:
        OPENED.pop().close()


class EventStream:
    """One request to ``127.0.0.1:port/mcp`` whose answer is read as an event stream."""

    def __init__(self, port: int, method: str, headers: dict[str, str], body: bytes = b"", seconds: float = 20) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=seconds)
        OPENED.append(self)
        #: How long :meth:`event` waits for an event, keep-alive comments or not.
        self.seconds = seconds
        head = f"{method} /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-length: {len(body)}\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in headers.items() if name != "host")
        self.sock.sendall(head.encode() + b"\r\n" + body)
        self._raw = b""
        self._body = b""
        while b"\r\n\r\n" not in self._raw:
            self._more()
        head_bytes, self._raw = self._raw.split(b"\r\n\r\n", 1)
        lines = head_bytes.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split()[1])
        self.headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}

    def _more(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("the stream ended")
        self._raw += data

    def _decode(self) -> bool:
        """Move one whole chunk of the chunked body from the raw bytes to the body; False when none is whole."""
        size_line, crlf, rest = self._raw.partition(b"\r\n")
        if not crlf:
            return False
        size = int(size_line, 16)
        if size == 0:
            raise EOFError("the stream ended")
        if len(rest) < size + 2:
            return False
        self._body += rest[:size]
        self._raw = rest[size + 2 :]
        return True

    def event(self) -> bytes:
        """The next event's whole bytes (keep-alive comments skipped), waiting for it (``TimeoutError`` after
        :attr:`seconds`)."""
        deadline = time.monotonic() + self.seconds
        while True:
            end = self._body.find(b"\n\n")
            if end >= 0:
                event, self._body = self._body[: end + 2], self._body[end + 2 :]
                if event != KEEPALIVE:
                    return event
                continue
            if not self._decode():
                if time.monotonic() > deadline:
                    raise TimeoutError("no event came")
                self._more()

    def ended(self) -> bool:
        """Whether the server ends the stream next (its last chunk), nothing else before it."""
        try:
            self.event()
        except EOFError:
            return True
        return False

    def close(self) -> None:
        self.sock.close()
