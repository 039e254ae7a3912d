"""The ``shipcode-mcp`` command line: parse the options, build the app, serve it.

``shipcode-mcp [TARGET] [--resources DIR]... [options]``: see ``--help``. Loading a target
lives in :mod:`shipcode_mcp.target`, serving in :mod:`shipcode_mcp.transports.stdio` (or ``.http``); both are
imported only when needed, so ``--help`` and ``--version`` stay fast. An empty command line
(the default catalogue, every default) is answered by :class:`Options` alone: the parser
and ``argparse`` are built only when there is something to parse.
"""

from __future__ import annotations

import sys

from ._log import DEFAULT_LEVEL, LEVELS, set_level
from .protocol import ALL_VERSIONS, DEFAULT_MAX_MESSAGE_BYTES, ServerStop
from .transports.signals import stop_signals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import NoReturn

EXIT_OK = 0
EXIT_USAGE = 2


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


_positive_int.__name__ = "positive integer"


def _size(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


_size.__name__ = "size in bytes"


def _seconds(text: str) -> float:
    from .limits import check_seconds

    return check_seconds(float(text), "SECONDS", zero=True)


_seconds.__name__ = "finite number of seconds"


def _positive_seconds(text: str) -> float:
    from .limits import check_seconds

    return check_seconds(float(text), "SECONDS")


_positive_seconds.__name__ = "finite positive number of seconds"


def _address(text: str) -> tuple[str, int]:
    from .transports.http.serve import parse_address

    return parse_address(text)


_address.__name__ = "[HOST:]PORT"


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


_names.__name__ = "comma-separated list"


def _guarded(option: str, value: list[str] | str) -> list[str] | str:
    """A value of ``--allowed-hosts``, ``--allowed-origins`` or ``--public-url``, checked by the rules
    ``http_app()`` applies (:class:`~shipcode_mcp.transports.http.guard.Guard`)."""
    import argparse

    from .transports.http.guard import Guard

    try:
        Guard(**{"allowed_hosts": None, "allowed_origins": None, "public_url": None, option: value})
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return value


def _allowed_hosts(text: str) -> list[str]:
    return _guarded("allowed_hosts", _names(text))


def _allowed_origins(text: str) -> list[str]:
    return _guarded("allowed_origins", _names(text))


def _public_url(text: str) -> str:
    return _guarded("public_url", text)


def _versions(text: str) -> tuple[str, ...]:
    chosen = tuple(version.strip() for version in text.split(","))
    if not all(version in ALL_VERSIONS for version in chosen):
        raise ValueError(text)
    return chosen


_versions.__name__ = "list of protocol versions"


class Options:
    """The settings the command line gives; a new instance holds the defaults.

    The parser fills one in (it leaves alone what the command line does not mention), so
    each default is written here only.
    """

    def __init__(self) -> None:
        self.max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
        self.max_concurrency: int | None = None
        self.workers: int | None = None
        self.eof_grace: float | None = None
        self.log_level = DEFAULT_LEVEL
        self.target: str | None = None
        self.resources: list[str] = []
        self.skills: list[str] = []
        self.max_resource_bytes: int | None = None
        self.protocol_versions: tuple[str, ...] | None = None
        self.list_page_size: int | None = None
        self.http: tuple[str, int] | None = None
        self.processes = 1
        self.redis: str | None = None
        self.allowed_hosts: list[str] | None = None
        self.allowed_origins: list[str] | None = None
        self.body_timeout: float | None = None
        self.public_url: str | None = None
        self.max_head_bytes: int | None = None
        self.head_timeout: float | None = None


def parse_command_line(argv: Sequence[str]) -> Options:
    """The options of ``argv`` (without the program name); exits on ``--help``, ``--version``
    and usage errors, as ``argparse`` does."""
    options = Options()
    if argv:
        build_parser().parse_args(argv, namespace=options)
    return options


def usage_error(message: str) -> NoReturn:
    """A usage error: one line on stderr, exit status 2."""
    sys.stderr.write(f"shipcode-mcp: error: {message}\n")
    raise SystemExit(EXIT_USAGE)


def build_parser():  # -> argparse.ArgumentParser
    """The command-line parser (every option documented in ``--help``).

    Parse into an :class:`Options`: it holds the defaults, which the parser does not know.
    """
    import argparse

    from ._engine import IMPLEMENTATION

    class UsageParser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:  # one line, not the whole usage
            usage_error(message)

    from ._version import __version__
    from .limits import (
        DEFAULT_BODY_SECONDS,
        DEFAULT_EOF_GRACE,
        DEFAULT_HEAD_SECONDS,
        DEFAULT_MAX_CONCURRENCY,
        DEFAULT_MAX_HEAD_BYTES,
        DEFAULT_MAX_RESOURCE_BYTES,
        DEFAULT_WORKERS,
    )

    parser = UsageParser(
        prog="shipcode-mcp",
        description=(
            "Serve the Model Context Protocol (2025-06-18) over stdio: newline-delimited "
            "JSON-RPC 2.0 on stdin, one compact JSON answer per line on stdout, diagnostics on "
            "stderr, exit 0 at end of input. Without a target it serves the default catalogue: "
            "the tools echo and add and the resource file:///hello.txt."
        ),
        epilog=(
            "Output written by the app (print, sys.stdout, or a C library writing to file "
            "descriptor 1) goes to stderr: stdout carries protocol messages only. "
            "Exit status: 0 at end of input, when stdout is closed, or on SIGTERM, SIGINT or SIGHUP; "
            "2 for a usage error or a target that cannot be loaded. "
            "Environment: SHIPCODE_MCP_NO_EXTENSIONS=1 forces the pure-Python engine "
            "(the compiled engine is used when it is installed); SHIPCODE_MCP_REQUIRE_EXTENSIONS=1 "
            "refuses to start on the pure engine when the compiled one cannot be imported; "
            "SHIPCODE_MCP_NO_UVLOOP=1 serves async apps on asyncio's event loop even when uvloop "
            "is installed."
        ),
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"shipcode-mcp {__version__} (engine: {IMPLEMENTATION})",
        help="print the version and the live engine (compiled or pure), then exit",
    )
    parser.add_argument(
        "--max-message-bytes",
        type=_positive_int,
        metavar="N",
        help=(
            "longest accepted input line in bytes, not counting its line ending; a longer line "
            "is answered -32600 Invalid Request and discarded as it streams in "
            f"(default: {DEFAULT_MAX_MESSAGE_BYTES}, i.e. 16 MiB)"
        ),
    )
    parser.add_argument(
        "--max-concurrency",
        type=_positive_int,
        metavar="N",
        help=(
            "most handlers in flight (async tools, blocking tools); at the limit the server "
            f"stops reading input until one finishes (default: {DEFAULT_MAX_CONCURRENCY})"
        ),
    )
    parser.add_argument(
        "--workers",
        type=_positive_int,
        metavar="N",
        help=f"worker threads for tools registered with blocking=True (default: {DEFAULT_WORKERS})",
    )
    parser.add_argument(
        "--eof-grace",
        type=_seconds,
        metavar="SECONDS",
        help=(
            "at end of input, how long handlers in flight may still run; then each is cancelled "
            f"and answered -32603 'Request cancelled at end of input' (default: {DEFAULT_EOF_GRACE:g})"
        ),
    )
    parser.add_argument(
        "--protocol-versions",
        type=_versions,
        metavar="LIST",
        help=(
            "the protocol versions to speak, comma-separated, instead of the app's own "
            f"(implemented: {','.join(ALL_VERSIONS)}; apps speak them all by default, the "
            "built-in catalogue only 2025-06-18)"
        ),
    )
    parser.add_argument(
        "--list-page-size",
        type=_positive_int,
        metavar="N",
        help=(
            "serve tools/list, resources/list, resources/templates/list and prompts/list in pages of at most N "
            "items, each but the last with a nextCursor, instead of the app's own list_page_size (default: the "
            "app's; one page unless it sets one)"
        ),
    )
    parser.add_argument(
        "--log-level",
        choices=list(LEVELS),
        help=f"what to log on stderr (default: {DEFAULT_LEVEL}); stdout carries protocol messages only",
    )
    parser.add_argument(
        "target",
        nargs="?",
        help=(
            "the app to serve: path/to/file.py[:ATTR] or package.module[:ATTR], where ATTR names a "
            "shipcode_mcp.Server or its factory (default: the module's server, whatever its name; with --http, "
            "ATTR may name a host ASGI app mounting one); a module is looked up from the current directory "
            "first. Default: the built-in catalogue"
        ),
    )
    parser.add_argument(
        "--resources",
        action="append",
        metavar="DIR",
        help=(
            "also serve every regular file under DIR as a resource (repeatable): uri "
            "file:///<real path>, name the path relative to DIR, mimeType guessed from the name; "
            "text files are read as text, others as base64 blobs. Files are listed at start-up "
            "and re-checked on every read: nothing outside DIR is ever listed or read (symlinks "
            "leading out of DIR included)"
        ),
    )
    parser.add_argument(
        "--skills",
        action="append",
        metavar="DIR",
        help=(
            "also serve the skills of DIR (repeatable): one directory per skill, with a SKILL.md whose "
            "front matter names it and describes it; skills/list, skills/get and skill://NAME/PATH "
            "resources (the io.modelcontextprotocol/skills extension). Read once at start-up, within "
            "bounds; a symlink leading out of DIR is refused"
        ),
    )
    parser.add_argument(
        "--max-resource-bytes",
        type=_size,
        metavar="N",
        help=(
            "largest file served from a --resources folder; reading a larger one is answered "
            f"-32603 'Resource too large' without reading it (default: {DEFAULT_MAX_RESOURCE_BYTES}, i.e. 16 MiB)"
        ),
    )
    http = parser.add_argument_group("serving over HTTP (needs the extra shipcode-mcp[http])")
    http.add_argument(
        "--http",
        type=_address,
        metavar="[HOST:]PORT",
        help=(
            "serve Streamable HTTP at http://HOST:PORT/mcp with uvicorn instead of stdio "
            "(HOST: 127.0.0.1 unless given; see docs/http.md)"
        ),
    )
    http.add_argument(
        "--processes",
        type=_positive_int,
        metavar="N",
        help="with --http: N server processes on one socket, sharing one state key; each legacy session's "
        "requests are relayed to the process holding it (default: 1)",
    )
    http.add_argument(
        "--redis",
        metavar="URL",
        help=(
            "with --http: share the bus through the Redis at URL (redis://HOST:PORT/DB, rediss:// for TLS): "
            "resource updates, list changes and task notifications reach the listeners of every process "
            "and every server sharing it, and tasks are kept there (needs the extra shipcode-mcp[redis])"
        ),
    )
    http.add_argument(
        "--allowed-hosts",
        type=_allowed_hosts,
        metavar="LIST",
        help=(
            "with --http: the Host values accepted, comma-separated: host (at the default port), host:port, "
            "host:* (any port), * (any Host); default: localhost names at any port on a loopback address, "
            "any elsewhere"
        ),
    )
    http.add_argument(
        "--allowed-origins",
        type=_allowed_origins,
        metavar="LIST",
        help=(
            "with --http: the Origin values accepted, comma-separated, compared exactly: http(s)://host "
            "(at the scheme's default port), http(s)://host:port, http(s)://host:* (any port), * (any Origin); "
            "default: localhost origins on a loopback address, the server's own origin elsewhere"
        ),
    )
    http.add_argument(
        "--public-url",
        type=_public_url,
        metavar="URL",
        help=(
            "with --http: the server's origin as clients see it, http(s)://host[:port] (behind a proxy, say): "
            "the base of the URLs it writes (bearer-token metadata) and the one Origin passing by default "
            "off loopback (default: the request's scheme and Host)"
        ),
    )
    http.add_argument(
        "--body-timeout",
        type=_positive_seconds,
        metavar="SECONDS",
        help=(
            "with --http: a request body not whole this long after the app starts reading it is refused "
            f"408 and its connection closed (default: {DEFAULT_BODY_SECONDS:g})"
        ),
    )
    http.add_argument(
        "--max-head-bytes",
        type=_positive_int,
        metavar="N",
        help=(
            "with --http: a request head (request line and header fields) longer than N bytes, or with more "
            f"than 100 fields, is refused 431 and its connection closed (default: {DEFAULT_MAX_HEAD_BYTES}, "
            "i.e. 64 KiB)"
        ),
    )
    http.add_argument(
        "--head-timeout",
        type=_positive_seconds,
        metavar="SECONDS",
        help=(
            "with --http: a request head not whole this long after its first byte (or a new connection that "
            f"sends nothing) ends its connection, with 408 once part of it came (default: {DEFAULT_HEAD_SECONDS:g})"
        ),
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``shipcode-mcp`` and ``python -m shipcode_mcp``."""
    try:
        try:
            stop_signals.install()  # from the start: a stop during start-up is quiet too
            return _main(argv)
        finally:
            stop_signals.end()
    except ServerStop:
        return EXIT_OK


def build_app(args: Options):  # -> Server
    """The app the options name, with their resources and protocol versions (TargetError if it cannot load)."""
    from .app import Server, check_versions
    from .target import TargetError, load_target

    if args.target is None:
        from .defaults import app
    else:
        from .compat import hook

        hook.install()  # an app written for another framework's API imports ours instead
        app = load_target(args.target, hosts=args.http is not None)
        written_for = hook.api_used()
        if written_for is not None:
            sys.stderr.write(f"shipcode-mcp: serving an app written for {written_for}\n")
    changes = args.resources or args.skills or args.protocol_versions or args.list_page_size
    if not isinstance(app, Server):  # a host app (Starlette, FastAPI) mounting a server: served as it is
        if changes or args.redis:
            raise TargetError(
                "--resources, --skills, --protocol-versions, --list-page-size and --redis are for a server, "
                "not for a host ASGI app"
            )
        return app
    if args.redis:  # the module's own app: its handlers publish on its bus
        try:
            app.use_redis(args.redis)
        except (TypeError, ValueError) as error:
            raise TargetError(f"--redis {args.redis}: {error}") from None
    if changes:
        import copy

        app = copy.copy(app)  # the app object itself stays as its module defined it
        app.resources = dict(app.resources)
        app.extensions = dict(app.extensions)
    if args.protocol_versions:
        app.protocol_versions = check_versions(args.protocol_versions)
    if args.list_page_size:
        app.list_page_size = args.list_page_size
    for directory in args.resources:
        try:
            app.add_resource_folder(directory, args.max_resource_bytes)
        except OSError as error:
            raise TargetError(f"--resources {directory}: {error.strerror or error}") from None
    for directory in args.skills:
        try:
            app.add_skills(directory)
        except (OSError, ValueError) as error:
            raise TargetError(f"--skills {directory}: {error}") from None
    return app


def http_app_of(args: Options, app):  # -> the ASGI app
    given = {
        name: value
        for name, value in (
            ("body_timeout", args.body_timeout),
            ("max_head_bytes", args.max_head_bytes),
            ("head_timeout", args.head_timeout),
        )
        if value is not None
    }
    return app.http_app(
        allowed_hosts=args.allowed_hosts,
        allowed_origins=args.allowed_origins,
        max_message_bytes=args.max_message_bytes,
        max_concurrency=args.max_concurrency,
        workers=args.workers,
        public_url=args.public_url,
        **given,
    )


def http_app_of_command_line(argv: list[str]):  # -> the ASGI app
    """The ASGI app a command line serves: what each process of ``--http --processes N`` builds (a host
    app as it is; a server's app relaying its sessions' requests to the other processes)."""
    import os

    from .target import is_host_app
    from .transports.http.relay import Relay
    from .transports.http.serve import RELAY_DIRECTORY_VARIABLE

    args = parse_command_line(argv)
    set_level(args.log_level)
    app = build_app(args)
    if is_host_app(app):
        return app
    asgi = http_app_of(args, app)
    directory = os.environ.get(RELAY_DIRECTORY_VARIABLE)
    if directory:
        asgi.relay = Relay(directory, args.processes)
    return asgi


def serve_http(args: Options, argv: Sequence[str], app) -> int:
    """Serve ``app`` (a server, or a host ASGI app mounting one) over HTTP as the options say; 2 when uvicorn
    is missing or the app's lifespan failed."""
    from .target import is_host_app
    from .transports.http import serve

    missing = serve.uvicorn_missing()
    if missing is not None:
        sys.stderr.write(f"shipcode-mcp: error: {missing}\n")
        return EXIT_USAGE
    host_app = is_host_app(app)
    try:  # here, before any process starts: a value no process could serve with is a usage error
        asgi = app if host_app else http_app_of(args, app)
    except ValueError as error:
        usage_error(str(error))
    host, port = args.http
    heads = () if host_app else (asgi.max_head_bytes, asgi.head_timeout)
    if args.processes > 1:
        builder = f"{__name__}:http_app_of_command_line"
        state_key = None if host_app else app.state_key
        return serve.serve_processes(builder, list(argv), state_key, host, port, args.processes, args.log_level, *heads)
    return serve.serve(asgi, host, port, 1, args.log_level, *heads)


def _main(argv: Sequence[str] | None) -> int:
    from .asking.state import StateKeyError
    from .target import TargetError, app_failure, is_host_app
    from .transports.stdio import guard_stdout, serve_app, standard_descriptors_ready

    if not standard_descriptors_ready():
        return EXIT_OK

    argv = sys.argv[1:] if argv is None else argv
    args = parse_command_line(argv)
    http_only = (
        args.processes,
        args.allowed_hosts,
        args.allowed_origins,
        args.body_timeout,
        args.public_url,
        args.max_head_bytes,
        args.head_timeout,
        args.redis,
    )
    if args.http is None and http_only != (1, None, None, None, None, None, None, None):
        sys.stderr.write(
            "shipcode-mcp: error: --processes, --redis, --allowed-hosts, --allowed-origins, --public-url, "
            "--body-timeout, --max-head-bytes and --head-timeout need --http\n"
        )
        return EXIT_USAGE
    set_level(args.log_level)
    guard_stdout()  # before any user code runs: even an import-time print must not reach stdout
    try:
        app = build_app(args)
        if args.http is not None and is_host_app(app):
            return serve_http(args, argv, app)
        try:
            catalogue = app.catalogue()
        except StateKeyError as error:  # configuration, not the app's code: its own line
            raise TargetError(str(error)) from None
        except Exception as error:
            raise app_failure("serve", args.target or "the default catalogue", error) from None
    except TargetError as error:
        sys.stderr.write(f"shipcode-mcp: error: {error}\n")
        return EXIT_USAGE
    if args.http is not None:
        return serve_http(args, argv, app)
    return serve_app(
        app,
        catalogue,
        max_message_bytes=args.max_message_bytes,
        max_concurrency=args.max_concurrency,
        workers=args.workers,
        eof_grace=args.eof_grace,
    )


if __name__ == "__main__":
    raise SystemExit(main())
