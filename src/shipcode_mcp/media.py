"""``Image``, ``Audio`` and ``File``: bytes (given, or read from a path) a tool returns as one content block.

- ``Image`` -> ``{"type":"image","data":<base64>,"mimeType"}``; ``Audio`` -> the same with ``"audio"``.
- ``File`` -> an embedded resource ``{"type":"resource","resource":{"uri","mimeType","text"|"blob"}}``:
  ``text`` (UTF-8, else Latin-1) when the type is ``text/*``, a base64 ``blob`` otherwise.

The MIME type comes from ``format`` when given (``Image(data, format="jpeg")`` -> ``image/jpeg``; a
``File``'s ``format`` ``"txt"``, ``"text"`` or ``"plain"`` -> ``text/plain``, any other -> ``application/<format>``),
else from the path's suffix, else ``image/png``, ``audio/wav`` or ``application/octet-stream``.
A path is read when the result is made, not before; ``annotations`` (a dict, or an object with
``model_dump``) are added to the block as given.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Audio", "File", "Image"]

# Suffixes whose type the system's table may lack or name otherwise (``audio/x-wav``).
_IMAGE_SUFFIXES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
_AUDIO_SUFFIXES = {
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
    ".flac": "audio/flac",
    ".aac": "audio/aac",
    ".m4a": "audio/mp4",
}
_TEXT_FORMATS = frozenset({"txt", "text", "plain"})
_UNKNOWN = "application/octet-stream"


def base64_text(data: bytes) -> str:
    """``data`` in base64, as text."""
    import base64

    return base64.b64encode(data).decode("ascii")


def jsonable(value: object) -> object:
    """A dict as given; an object with pydantic's ``model_dump``, dumped by alias without ``None`` members."""
    dump = getattr(value, "model_dump", None)
    return value if dump is None else dump(mode="json", by_alias=True, exclude_none=True)


class Media:
    """Bytes from ``data`` or from the file at ``path`` (exactly one of them), with a MIME type."""

    kind = "binary"  # the content block's type, and the MIME type's first part
    default_mime_type = _UNKNOWN
    suffixes: dict[str, str] = {}

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        data: bytes | None = None,
        format: str | None = None,
        annotations: Any = None,
    ) -> None:
        if (path is None) == (data is None):
            raise ValueError(f"{type(self).__name__}() takes either path= or data=, exactly one")
        #: The file's path (``$VARS`` and ``~`` expanded), or None.
        self.path = None if path is None else os.path.expanduser(os.path.expandvars(os.fspath(path)))
        self.data = data
        self.format = format
        self.annotations = annotations
        self.mime_type = self.mime_type_for(format) if format else self.guess_mime_type()

    def mime_type_for(self, format: str) -> str:
        return f"{self.kind}/{format.lower()}"

    def guess_mime_type(self) -> str:
        if self.path is None:
            return self.default_mime_type
        import mimetypes

        suffix = os.path.splitext(self.path)[1].lower()
        return self.suffixes.get(suffix) or mimetypes.guess_type(self.path, strict=False)[0] or _UNKNOWN

    def read(self) -> bytes:
        """The bytes: ``data``, or the file's contents."""
        if self.data is not None:
            return bytes(self.data)
        with open(self.path, "rb") as file:
            return file.read()

    def finish(self, block: dict[str, Any]) -> dict[str, Any]:
        if self.annotations is not None:
            block["annotations"] = jsonable(self.annotations)
        return block

    def content_block(self) -> dict[str, Any]:
        """The content block of this media, as a dict."""
        return self.finish({"type": self.kind, "data": base64_text(self.read()), "mimeType": self.mime_type})


class Image(Media):
    """An image a tool returns: ``Image(path="chart.png")`` or ``Image(data=png_bytes, format="png")``."""

    kind = "image"
    default_mime_type = "image/png"
    suffixes = _IMAGE_SUFFIXES


class Audio(Media):
    """A sound a tool returns: ``Audio(path="note.wav")`` or ``Audio(data=wav_bytes, format="wav")``."""

    kind = "audio"
    default_mime_type = "audio/wav"
    suffixes = _AUDIO_SUFFIXES


class File(Media):
    """A file a tool returns as an embedded resource: ``File(path="report.pdf")`` or
    ``File(data=csv_bytes, format="csv", name="rows")`` (uri ``file:///rows.csv``)."""

    kind = "file"

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        data: bytes | None = None,
        format: str | None = None,
        name: str | None = None,
        annotations: Any = None,
    ) -> None:
        super().__init__(path, data, format, annotations)
        self.name = name

    def mime_type_for(self, format: str) -> str:
        format = format.lower()
        return "text/plain" if format in _TEXT_FORMATS else f"application/{format}"

    def content_block(self) -> dict[str, Any]:
        raw = self.read()
        if self.path is not None:
            from pathlib import Path

            uri = Path(self.path).resolve().as_uri()
        else:
            uri = f"file:///{self.name or 'resource'}.{self.mime_type.partition('/')[2]}"
        resource: dict[str, Any] = {"uri": uri, "mimeType": self.mime_type}
        if self.mime_type.startswith("text/"):
            try:
                resource["text"] = raw.decode("utf-8")
            except UnicodeDecodeError:
                resource["text"] = raw.decode("latin-1")
        else:
            resource["blob"] = base64_text(raw)
        return self.finish({"type": "resource", "resource": resource})
