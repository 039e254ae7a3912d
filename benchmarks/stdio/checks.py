"""Semantic checks, for servers whose bytes differ from shipcode-mcp's (SDKs, outside servers)."""

from __future__ import annotations

import math

import orjson
from common import PROTOCOL

from .workloads import INIT_EXPECTED, RESOURCES_RESULT, TOOLS_RESULT


def norm_tools(result):
    out = []
    for tool in result["tools"]:
        schema = tool.get("inputSchema") or {}
        props = {k: (v or {}).get("type") for k, v in (schema.get("properties") or {}).items()}
        out.append((tool["name"], tool.get("description"), props, sorted(schema.get("required") or [])))
    return out


CANON_TOOLS = norm_tools(orjson.loads(TOOLS_RESULT))
CANON_READ = [("file:///hello.txt", "text/plain", "Hello, world!")]


def norm_resources(result):
    return [(r.get("uri"), r.get("name"), r.get("mimeType")) for r in result["resources"]]


CANON_RESOURCES = norm_resources(orjson.loads(RESOURCES_RESULT))


def norm_read(result):
    return [(c.get("uri"), c.get("mimeType"), c.get("text")) for c in result["contents"]]


def texts_of(result):
    return [(c.get("type"), c.get("text")) for c in result["content"]], bool(result.get("isError"))


class Expect:
    """What a server's answers must mean. Built-in peers serve the standard catalogue; an outside server's
    tools/list and resources/read answers are taken from the probe (so they only have to stay consistent)."""

    def __init__(self, tools=None, read=None, supports=("echo", "add", "read")):
        self.tools = CANON_TOOLS if tools is None else tools
        self.read = CANON_READ if read is None else read
        self.supports = set(supports)

    def check(self, kind: str, value, result) -> str | None:
        """None when `result` is right, else a short reason."""
        try:
            if not isinstance(result, dict):
                return "result is not an object"
            if kind == "ping":
                return None
            if kind == "echo":
                got = texts_of(result)
                return None if got == ([("text", value)], False) else f"echo gave {str(got)[:120]}"
            if kind == "add":
                (items, is_error) = texts_of(result)
                if is_error or len(items) != 1 or items[0][0] != "text":
                    return f"add gave {str((items, is_error))[:120]}"
                got = float(items[0][1])
                return None if math.isclose(got, value, rel_tol=1e-12) else f"add gave {items[0][1]!r}, want {value!r}"
            if kind == "list":
                return None if norm_tools(result) == self.tools else "tools/list differs"
            if kind == "rlist":
                return None if norm_resources(result) == CANON_RESOURCES else "resources/list differs"
            if kind == "read":
                return None if norm_read(result) == self.read else "resources/read differs"
            if kind == "sleep":
                got = texts_of(result)
                return None if got == ([("text", "ok")], False) else f"sleep gave {str(got)[:120]}"
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            return f"malformed {kind} result ({exc!r})"
        return f"unknown kind {kind}"


def check_init(line: bytes, spec) -> str | None:
    if spec.check == "lines":
        return None
    if spec.check == "exact":
        return None if line == (spec.init or INIT_EXPECTED) else f"initialize answer differs: {line[:300]!r}"
    try:
        msg = orjson.loads(line)
        result = msg["result"]
        if msg.get("id") != 1:
            return f"initialize answer has id {msg.get('id')!r}"
        if spec.custom:
            return None if isinstance(result.get("protocolVersion"), str) else "no protocolVersion"
        caps = result["capabilities"]
        if result["protocolVersion"] != PROTOCOL or "tools" not in caps or "resources" not in caps:
            return f"initialize answer: {line[:300]!r}"
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return f"initialize answer is not a result: {line[:300]!r}"
    return None


def check_semantic(lines: list, expectations: list, expect: Expect) -> tuple[list, int]:
    """(problems, reordered) for parsed responses vs (id, kind, value) expectations. Responses may come in any
    order (JSON-RPC allows it; some SDK servers answer concurrently): the count of out-of-place ones is returned."""
    problems = []
    pending = {e[0]: e for e in expectations}
    reordered = 0
    for pos, msg in enumerate(lines):
        rid = msg.get("id") if isinstance(msg, dict) else None
        exp = pending.pop(rid, None) if isinstance(rid, int) else None
        if exp is None:
            problems.append(f"response {pos + 1}: unexpected id {rid!r}: {orjson.dumps(msg)[:200]!r}")
            if len(problems) > 5:
                break
            continue
        if pos < len(expectations) and expectations[pos][0] != rid:
            reordered += 1
        if "result" not in msg:
            problems.append(f"id {rid}: error {orjson.dumps(msg.get('error'))[:200]!r}")
        else:
            why = expect.check(exp[1], exp[2], msg["result"])
            if why:
                problems.append(f"id {rid}: {why}")
        if len(problems) > 5:
            break
    if pending and len(problems) <= 5:
        problems.append(f"{len(pending)} requests got no answer (first id {min(pending)})")
    return problems, reordered


def check_exact_any_order(data: bytes, template: bytes, first_id: int, n: int) -> tuple[list, int]:
    """(problems, reordered) for n answers that must each be exactly ``template % id``, in any order.

    For shipcode-mcp's answers to async tools: each line is compared byte for byte with the answer its id
    must get; every id from ``first_id`` must come exactly once. Answers that finish out of order may be
    written out of order (JSON-RPC matches them by id)."""
    problems = []
    pending = set(range(first_id, first_id + n))
    reordered = 0
    lines = data.split(b"\n")
    if lines[-1] != b"":
        problems.append(f"output does not end with a newline: {lines[-1][:200]!r}")
    for pos, line in enumerate(lines[:-1]):
        try:
            rid = orjson.loads(line).get("id")
        except (orjson.JSONDecodeError, AttributeError):
            rid = None
        if not isinstance(rid, int) or rid not in pending:
            problems.append(f"response {pos + 1}: unexpected or repeated id {rid!r}: {line[:200]!r}")
        elif line + b"\n" != template % rid:
            problems.append(f"id {rid} differs:\n    want {(template % rid)[:-1]!r}\n    got  {line[:300]!r}")
        else:
            pending.discard(rid)
            reordered += rid != first_id + pos
        if len(problems) > 5:
            break
    if pending and len(problems) <= 5:
        problems.append(f"{len(pending)} requests got no answer (first id {min(pending)})")
    return problems, reordered
