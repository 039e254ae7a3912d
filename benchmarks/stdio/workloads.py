"""The workloads: requests as pre-built blobs and the exact bytes shipcode-mcp answers them with.

Every benchmarked server serves the same catalogue (tools ``echo`` and ``add``, resource
``file:///hello.txt``); the bytes below are shipcode-mcp's, which the naive loop copies. The ``slow``
workload calls one more tool, ``sleep``, an async tool that awaits ``SLOW_MS`` milliseconds: servers serve it
from a separate command line (``benchmarks/common/slow_app.py`` for shipcode-mcp, ``--slow`` for the peers).
"""

from __future__ import annotations

import random
from collections import OrderedDict

TOOLS_RESULT = (
    b'{"tools":[{"name":"echo","description":"Echo back the given text","inputSchema":{"type":"object",'
    b'"properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}},'
    b'{"name":"add","description":"Add two numbers","inputSchema":{"type":"object","properties":'
    b'{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}}]}'
)
RESOURCES_RESULT = b'{"resources":[{"uri":"file:///hello.txt","name":"hello.txt","mimeType":"text/plain"}]}'
READ_RESULT = b'{"contents":[{"uri":"file:///hello.txt","mimeType":"text/plain","text":"Hello, world!"}]}'
INIT_REQUEST = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"shipcode-mcp-benchmark","version":"1.0.0"}}}\n'
)
INIT_EXPECTED = (
    b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{},'
    b'"resources":{}},"serverInfo":{"name":"shipcode-mcp","version":"1.0.0"}}}\n'
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'

REQ = {
    "ping": b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n',
    "list": b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n',
    "rlist": b'{"jsonrpc":"2.0","id":%d,"method":"resources/list"}\n',
    "read": b'{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"file:///hello.txt"}}\n',
    "echo": b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"}}}\n',
    "add": b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":%d,"b":%s}}}\n',
    "sleep": b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":20}}}\n',
}
#: The ``_meta`` of a 2026-07-28 request (~190 bytes, as official clients send it) and the members its
#: answers end with, from the default catalogue served with ``--protocol-versions 2026-07-28,2025-06-18``.
META_2026 = (
    b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},'
    b'"io.modelcontextprotocol/clientInfo":{"name":"shipcode-mcp-benchmark","version":"1.0.0"}}'
)
RESULT_2026 = (
    b'"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"shipcode-mcp","version":"1.0.0"}}'
)
#: The ``tasks/get`` workload (``TASKS_GET``) reads one finished task of ``common/tasks_app.py``, which gives every
#: task this id and these time stamps; its requests declare the tasks extension in their 2026-07-28 ``_meta``.
TASK_ID = b"finished-task-for-the-benchmark0"
TASKS_GET = "tasks/get"
META_TASKS = META_2026.replace(
    b'clientCapabilities":{}', b'clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}'
)
_TASK = (
    b'"taskId":"' + TASK_ID + b'","status":"%s","createdAt":"2026-07-28T00:00:00.000Z",'
    b'"lastUpdatedAt":"2026-07-28T00:00:00.000Z","ttlMs":3600000,"pollIntervalMs":1000'
)
#: Before the measured requests: the call that makes the task (id 0), and what it answers.
TASK_CREATE = (
    b'{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},"_meta":'
    + META_TASKS
    + b"}}\n"
)
TASK_CREATED = (
    b'{"jsonrpc":"2.0","id":0,"result":{"resultType":"task",'
    + _TASK % b"working"
    + b","
    + RESULT_2026.removeprefix(b'"resultType":"complete",')
    + b"}}\n"
)
TASKS_INIT_EXPECTED = INIT_EXPECTED.replace(
    b'"resources":{}}', b'"resources":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}'
)
#: The suffix of the 2026-07-28 form of a tool-call workload: ``echo100@2026`` is ``echo100`` with ``_meta``.
MODERN = "@2026"
SLOW_MS = 20  # what each "sleep" request asks the tool to wait
SLOW = "slow"  # the workload of pipelined "sleep" calls; its sizes are counts of calls
EXP = {
    "ping": b'{"jsonrpc":"2.0","id":%d,"result":{}}\n',
    "list": b'{"jsonrpc":"2.0","id":%d,"result":' + TOOLS_RESULT + b"}\n",
    "rlist": b'{"jsonrpc":"2.0","id":%d,"result":' + RESOURCES_RESULT + b"}\n",
    "read": b'{"jsonrpc":"2.0","id":%d,"result":' + READ_RESULT + b"}\n",
    "text": b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}]}}\n',
    "sleep": b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"ok"}]}}\n',
}
REQ["taskget"] = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{"taskId":"'
    + TASK_ID
    + b'","_meta":'
    + META_TASKS
    + b"}}\n"
)
EXP["taskget"] = (
    b'{"jsonrpc":"2.0","id":%d,"result":{'
    + _TASK % b"completed"
    + b',"result":{"content":[{"type":"text","text":"3"}]},'
    + RESULT_2026
    + b"}}\n"
)

# Texts are ASCII letters and digits (no JSON escaping): request i's text starts with i, zero-padded.
_FILL = (b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" * 70000)[: 4 * 1024 * 1024]


def echo_text(i: int, size: int) -> bytes:
    if size <= 10:
        return (b"%010d" % i)[10 - size :]
    return b"%010d" % i + _FILL[: size - 10]


def add_args(i: int) -> tuple[int, bytes, bytes]:
    """(a, b as sent, expected text): integers on even requests, an integer plus 0.25 on odd ones."""
    if i & 1:
        return i, b"0.25", repr(i + 0.25).encode()
    return i, b"3", b"%d" % (i + 3)


# The non-integers of the "add, decimals" workload: short decimals and exponents, as clients write them.
DECIMALS = (b"49.25", b"0.5", b"-1.75", b"2.5e1", b"1e-2", b"3.125E2", b"-6.5e-1", b"1.5e+3")


def add_decimal_args(i: int) -> tuple[int, bytes, bytes]:
    """(a, b as sent, expected text): integers on even requests, an integer plus one of DECIMALS on odd ones."""
    if not i & 1:
        return i, b"3", b"%d" % (i + 3)
    b = DECIMALS[(i >> 1) % len(DECIMALS)]
    text = repr(i + float(b))  # the sums stay within 1e-4 <= |x| < 1e16: positional, as ECMAScript writes them
    return i, b, (text[:-2] if text.endswith(".0") else text).encode()


# The mix: 40% echo of ~100 B, 30% add, 20% tools/list, 10% resources/read, in a fixed shuffled order.
_MIX_PATTERN = ["echo"] * 40 + ["add"] * 30 + ["list"] * 20 + ["read"] * 10
random.Random(20250618).shuffle(_MIX_PATTERN)

WORKLOADS = OrderedDict(
    [
        ("ping", "ping"),
        ("add", "add"),
        ("echo100", "echo 100 B"),
        ("echo64k", "echo 64 KiB"),
        ("tools/list", "tools/list"),
        ("resources/list", "resources/list"),
        ("resources/read", "resources/read"),
        ("add-decimals", "add, decimals"),
        ("mix", "mix"),
        ("add" + MODERN, "add, 2026-07-28"),
        ("echo100" + MODERN, "echo 100 B, 2026-07-28"),
        (TASKS_GET, "tasks/get, finished task"),
    ]
)
NEEDS = {  # what a server must serve for a workload to make sense
    "ping": set(),
    "add": {"add"},
    "echo100": {"echo"},
    "echo64k": {"echo"},
    "tools/list": set(),
    "resources/list": {"read"},
    "resources/read": {"read"},
    "add-decimals": {"add"},
    "mix": {"echo", "add", "read"},
    "add" + MODERN: {"add", "2026-07-28"},
    "echo100" + MODERN: {"echo", "2026-07-28"},
    TASKS_GET: {"tasks"},
    SLOW: {"sleep"},
}


#: The kind of request each workload of one kind sends.
_SINGLE_KINDS = {
    "ping": "ping",
    "add": "add",
    "add-decimals": "addd",
    "tools/list": "list",
    "resources/list": "rlist",
    "resources/read": "read",
    SLOW: "sleep",
    TASKS_GET: "taskget",
}
#: The kinds whose requests differ only by their id.
_ID_ONLY = ("ping", "list", "rlist", "read", "sleep", "taskget")


def wl_kinds(wl: str):
    """('single', kind, echo size) or ('mix', None, 100)."""
    wl = wl.removesuffix(MODERN)
    if wl == "mix":
        return "mix", None, 100
    if wl.startswith("echo"):
        return "single", "echo", echo_size_of(wl)
    return "single", _SINGLE_KINDS[wl], 0


def echo_size_of(wl: str) -> int:
    if wl == "echo100":
        return 100
    if wl == "echo64k":
        return 65536
    return int(wl.split(":", 1)[1])  # "echo:<bytes>" for the size sweep


def kind_at(wl: str, i: int) -> str:
    shape, kind, _ = wl_kinds(wl)
    return _MIX_PATTERN[i % 100] if shape == "mix" else kind


def build_requests(wl: str, n: int, first_id: int = 2) -> bytes:
    if wl.endswith(MODERN):  # the same tool calls, each with the _meta of 2026-07-28 after its arguments
        return build_requests(wl.removesuffix(MODERN), n, first_id).replace(
            b"}}}\n", b'},"_meta":' + META_2026 + b"}}\n"
        )
    shape, kind, size = wl_kinds(wl)
    ids = range(first_id, first_id + n)
    if shape == "single" and kind in _ID_ONLY:
        tpl = REQ[kind]
        return b"".join([tpl % j for j in ids])
    parts = []
    for i, j in enumerate(ids):
        k = kind if shape == "single" else _MIX_PATTERN[i % 100]
        if k == "echo":
            parts.append(REQ["echo"] % (j, echo_text(i, size)))
        elif k == "add":
            a, b, _ = add_args(i)
            parts.append(REQ["add"] % (j, a, b))
        elif k == "addd":
            a, b, _ = add_decimal_args(i)
            parts.append(REQ["add"] % (j, a, b))
        else:
            parts.append(REQ[k] % j)
    return b"".join(parts)


def build_expected(wl: str, n: int, first_id: int = 2) -> bytes:
    """The exact bytes shipcode-mcp answers with, all n responses concatenated."""
    if wl.endswith(MODERN):  # every result ends with resultType and the server's identity
        return build_expected(wl.removesuffix(MODERN), n, first_id).replace(b"]}}\n", b"]," + RESULT_2026 + b"}}\n")
    shape, kind, size = wl_kinds(wl)
    ids = range(first_id, first_id + n)
    if shape == "single" and kind in _ID_ONLY:
        tpl = EXP[kind]
        return b"".join([tpl % j for j in ids])
    parts = []
    tpl = EXP["text"]
    for i, j in enumerate(ids):
        k = kind if shape == "single" else _MIX_PATTERN[i % 100]
        if k == "echo":
            parts.append(tpl % (j, echo_text(i, size)))
        elif k == "add":
            parts.append(tpl % (j, add_args(i)[2]))
        elif k == "addd":
            parts.append(tpl % (j, add_decimal_args(i)[2]))
        else:
            parts.append(EXP[k] % j)
    return b"".join(parts)


def build_semantic(wl: str, n: int, first_id: int = 2) -> list:
    """Per request: (id, kind, expected value) for the field-by-field check of servers that are not byte-exact."""
    _, _, size = wl_kinds(wl)
    out = []
    for i in range(n):
        k = kind_at(wl, i)
        if k == "echo":
            out.append((first_id + i, "echo", echo_text(i, size).decode()))
        elif k in ("add", "addd"):
            a, b, _ = (add_args if k == "add" else add_decimal_args)(i)
            out.append((first_id + i, "add", a + float(b)))
        else:
            out.append((first_id + i, k, None))
    return out


class BlobCache:
    """Request and expected-response blobs, keyed by (what, workload, n), bounded in bytes."""

    def __init__(self, limit: int = 2 << 30):
        self.limit = limit
        self.items: OrderedDict = OrderedDict()
        self.size = 0

    def get(self, what: str, wl: str, n: int):
        key = (what, wl, n)
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        value = {"req": build_requests, "exp": build_expected, "sem": build_semantic}[what](wl, n)
        size = len(value) if isinstance(value, bytes) else 64 * len(value)
        while self.items and self.size + size > self.limit:
            _, old = self.items.popitem(last=False)
            self.size -= len(old) if isinstance(old, bytes) else 64 * len(old)
        self.items[key] = value
        self.size += size
        return value


BLOBS = BlobCache()
