"""A folder served as resources: every regular file under it, and nothing outside it.

``scan_folder(directory)`` lists the folder once, when it is added (the listing is fixed
for the life of the server, as the ``resources`` capability declares no ``listChanged``):

- every regular file under the folder, in path order (component by component); symlinks
  are followed only while they stay inside the folder, and a file reached twice (through a
  symlink) is listed once, under its real path;
- uri ``Path(file).resolve().as_uri()``, name the path relative to the folder with ``/``
  separators, mimeType guessed from the name with Python's built-in table plus a few common
  text types (the machine's ``/etc/mime.types`` is not read, so listings are the same
  everywhere); a name the table does not know is sniffed: ``text/plain`` when its first
  8 KiB are UTF-8 without NUL bytes, else ``application/octet-stream``.

Reading a file re-checks everything at read time: the path is walked from the folder one
component at a time, refusing symlinks at every step (``O_NOFOLLOW``) and anything that is
not a regular file, so a file replaced by a symlink that escapes the folder after start-up
is never read: it is ``Resource not found`` (-32002), as is a file removed since. A file of
a textual type that is valid UTF-8 is read as ``text``, anything else as a base64 ``blob``.
A file larger than the size cap is never read into memory: it gets the JSON-RPC error
-32603 ``Resource too large``.
"""

from __future__ import annotations

import errno
import os
import stat

from ._log import log
from .handlers import Resource
from .limits import DEFAULT_MAX_RESOURCE_BYTES
from .protocol import INTERNAL_ERROR, RESOURCE_NOT_FOUND, RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["DEFAULT_MAX_RESOURCE_BYTES", "FolderResource", "guess_mime_type", "scan_folder"]

#: Default size cap per file (16 MiB), the ``--max-resource-bytes`` default.
_SNIFF_BYTES = 8192
_CHUNK = 1024 * 1024
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _O_CLOEXEC
# What opening a path that changed under us gives: gone, a symlink, a file in the way.
_GONE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EMLINK})

# Text types the built-in table lacks; JSON and XML flavours are recognised by suffix.
_EXTRA_TYPES = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
}
_TEXT_APPLICATION_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/x-sh",
        "application/x-csh",
        "application/yaml",
        "application/toml",
        "application/sql",
        "application/x-tex",
        "application/x-latex",
        "image/svg+xml",
    }
)


def _not_found() -> RpcError:
    return RpcError(RESOURCE_NOT_FOUND, "Resource not found")


def _too_large() -> RpcError:
    return RpcError(INTERNAL_ERROR, "Resource too large")


_mime_table = None


def guess_mime_type(name: str) -> str | None:
    """The mime type of a file name from Python's built-in table (``None`` if unknown)."""
    global _mime_table
    extension = os.path.splitext(name)[1].lower()
    if extension in _EXTRA_TYPES:
        return _EXTRA_TYPES[extension]
    if _mime_table is None:
        import mimetypes

        _mime_table = mimetypes.MimeTypes()  # built-in table only, not the machine's files
    return _mime_table.guess_type(name, strict=False)[0]


def is_textual(mime_type: str) -> bool:
    """Whether files of this type are text (read as ``text`` when they are valid UTF-8)."""
    return (
        mime_type.startswith("text/") or mime_type in _TEXT_APPLICATION_TYPES or mime_type.endswith(("+json", "+xml"))
    )


def _sniff(path: str) -> str:
    """``text/plain`` for a file that starts as UTF-8 text, else ``application/octet-stream``."""
    import codecs

    try:
        fd = os.open(path, _FILE_FLAGS)
    except OSError:
        return "application/octet-stream"
    try:
        head = os.read(fd, _SNIFF_BYTES)
    except OSError:
        return "application/octet-stream"
    finally:
        os.close(fd)
    if b"\0" in head:
        return "application/octet-stream"
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=len(head) < _SNIFF_BYTES)
    except UnicodeDecodeError:
        return "application/octet-stream"
    return "text/plain"


class FolderResource(Resource):
    """One file of a served folder, read afresh (and re-checked) on every ``resources/read``."""

    __slots__ = ("root", "parts", "max_bytes", "textual")

    def __init__(self, root: str, parts: tuple[str, ...], uri: str, mime_type: str, max_bytes: int) -> None:
        super().__init__(uri, self.read_file, name="/".join(parts), mime_type=mime_type)
        self.root = root
        self.parts = parts
        self.max_bytes = max_bytes
        self.textual = is_textual(mime_type)

    def read_file(self) -> str | bytes:
        """The file's text (textual type, valid UTF-8) or bytes; RpcError when it cannot be served."""
        fd = self._open()
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise _not_found()
            if info.st_size > self.max_bytes:
                self._too_large()
            chunks = []
            left = self.max_bytes + 1  # one byte more tells a file that grew past the cap
            while left > 0:
                chunk = os.read(fd, min(left, _CHUNK))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
        finally:
            os.close(fd)
        if left <= 0:
            self._too_large()
        data = b"".join(chunks)
        if self.textual:
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                pass
        return data

    def _open(self) -> int:
        """Open the file by walking from the folder without following any symlink."""
        try:
            dir_fd = os.open(self.root, _DIR_FLAGS)
        except OSError as error:
            if error.errno in _GONE:
                raise _not_found() from None
            raise
        try:
            for part in self.parts[:-1]:
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=dir_fd)
                os.close(dir_fd)
                dir_fd = next_fd
            return os.open(self.parts[-1], _FILE_FLAGS, dir_fd=dir_fd)
        except OSError as error:
            if error.errno in _GONE:
                raise _not_found() from None
            raise
        finally:
            os.close(dir_fd)

    def _too_large(self) -> None:
        log("warning", f"{self.uri} is larger than the resource size cap ({self.max_bytes} bytes); not served")
        raise _too_large()


def _regular_files(root: str) -> Iterator[str]:
    """Real paths of the regular files under ``root`` (symlinks resolved, escapes dropped)."""
    prefix = root if root.endswith(os.sep) else root + os.sep

    def skip(error: OSError) -> None:
        log("warning", f"--resources: cannot list {error.filename}: {error.strerror}")

    for dirpath, _dirnames, filenames in os.walk(root, onerror=skip):
        for filename in filenames:
            real = os.path.realpath(os.path.join(dirpath, filename))
            if not real.startswith(prefix):
                continue  # a symlink that leaves the folder
            try:
                if stat.S_ISREG(os.stat(real).st_mode):
                    yield real
            except OSError:
                continue  # dangling or unreadable


def scan_folder(directory: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_RESOURCE_BYTES) -> list[FolderResource]:
    """The folder's regular files as resources, in path order.

    Raises :class:`NotADirectoryError` (or :class:`FileNotFoundError`) when ``directory`` is
    not a folder.
    """
    from pathlib import Path

    if max_bytes < 0:
        raise ValueError("max_bytes must not be negative")
    root = os.path.realpath(directory)
    if not os.path.isdir(root):
        if not os.path.exists(root):
            raise FileNotFoundError(errno.ENOENT, "no such folder", os.fspath(directory))
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", os.fspath(directory))
    resources: dict[str, FolderResource] = {}
    for real in _regular_files(root):
        uri = Path(real).as_uri()
        if uri in resources:
            continue
        parts = tuple(os.path.relpath(real, root).split(os.sep))
        mime_type = guess_mime_type(parts[-1]) or _sniff(real)
        resources[uri] = FolderResource(root, parts, uri, mime_type, max_bytes)
    return sorted(resources.values(), key=lambda resource: resource.parts)
