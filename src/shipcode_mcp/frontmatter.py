"""The front matter of a ``SKILL.md``, read as the YAML subset skills are written in, without a YAML library.

The front matter is the lines between a ``---`` first line and the next ``---`` line: a mapping of
``key: value`` lines at the left margin. Only the keys asked for are read (:func:`read_front_matter`), as YAML
reads them: a plain value (on its line, or continued on more-indented lines, folded into one line), a single-
or double-quoted one on its line (a double-quoted one with JSON's escapes), or a block scalar, literal
``|`` or folded ``>`` with its chomping (``-``, ``+``) and indentation indicators. Comments (``#`` at the start
of a line or after a space) are skipped. The other keys' values, nested mappings and lists included, are
not read. Everything else about a key asked for is refused with a :class:`ValueError` saying what: a list or
mapping, an anchor, alias or tag, a quoted value that does not close on its line, a tab or a line indented
less than its block, a key given twice; so is a line at the margin that is not ``key:``, and front matter
longer than :data:`MAX_FRONT_MATTER_CHARS`.
"""

from __future__ import annotations

import re

from orjson import JSONDecodeError, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

#: The longest front matter read, in characters (its lines and their line breaks).
MAX_FRONT_MATTER_CHARS = 64 * 1024
#: A block scalar's header: ``|`` or ``>``, then a chomping and an indentation indicator in either order.
_BLOCK_HEADER = re.compile(r"([|>])(?:([+-])([1-9])?|([1-9])([+-])?)?(?:[ \t]+#.*|[ \t]*)")
#: What a plain value may not begin with (YAML's indicators), with the refusal's words.
_NOT_TEXT = {
    "[": "a list",
    "{": "a mapping",
    "&": "an anchor",
    "*": "an alias",
    "!": "a tag",
    "@": "a reserved character",
    "`": "a reserved character",
    "%": "a directive",
}


def read_front_matter(text: str, keys: Iterable[str]) -> dict[str, str]:
    """The values of ``keys`` in the front matter opening ``text``, as YAML reads them (a key given without a
    value, or not at all, is left out). ValueError for front matter missing, too long, or not in the subset."""
    lines = text.split("\n")
    end = next((number for number, line in enumerate(lines) if number and line.rstrip("\r") == "---"), 0)
    if not lines or lines[0].rstrip("\r") != "---" or not end:
        raise ValueError("SKILL.md does not begin with front matter between '---' lines")
    body = [line.removesuffix("\r") for line in lines[1:end]]
    if sum(len(line) + 1 for line in body) > MAX_FRONT_MATTER_CHARS:
        raise ValueError(f"its front matter is longer than {MAX_FRONT_MATTER_CHARS} characters")
    wanted = set(keys)
    values: dict[str, str] = {}
    seen: set[str] = set()
    number = 0
    while number < len(body):
        line = body[number]
        number += 1
        if not line.strip() or line.lstrip(" ").startswith("#") or line[0] in " \t":
            continue  # blank, a comment, or what belongs to a key not read
        key, colon, rest = line.partition(":")
        key = key.rstrip(" \t")
        if not colon or not key or (rest and rest[0] not in " \t") or key[0] in "-?\"'[{&*!|>%@`#":
            raise ValueError(f"front matter line {number} is not 'key: value'")
        block = []
        while number < len(body) and (not body[number].strip() or body[number][0] in " \t"):
            block.append(body[number])
            number += 1
        if key not in wanted:
            continue
        if key in seen:
            raise ValueError(f"front matter: {key} is given twice")
        seen.add(key)
        value = _value(rest.strip(" \t"), block, key)
        if value is not None:
            values[key] = value
    return values


def _value(head: str, block: list[str], key: str) -> str | None:
    """The value of ``key``: ``head`` is what follows its colon, ``block`` its more-indented lines."""
    if head.startswith(("|", ">")):
        return _block_scalar(head, block, key)
    if head.startswith(('"', "'")):
        if any(line.strip() and not line.strip().startswith("#") for line in block):
            raise ValueError(f"front matter: the quoted value of {key} must close on its line")
        return _quoted(head, key)
    if head.startswith("#"):
        head = ""
    if not head:  # comment lines before a value that begins on the next line are not part of it
        while block and (not block[0].strip() or block[0].strip(" ").startswith("#")):
            block = block[1:]
    text_lines = [line.strip(" ") for line in block if line.strip()]
    if not head and text_lines and text_lines[0].startswith(('"', "'")):
        if len(text_lines) > 1:
            raise ValueError(f"front matter: the quoted value of {key} must close on its line")
        return _quoted(text_lines[0], key)
    lines = [head] if head else []
    for line in block:
        if "\t" in line[: len(line) - len(line.lstrip(" \t"))]:
            raise ValueError(f"front matter: a tab indents the value of {key}")
        lines.append(line.strip(" "))
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    if not lines:
        return None
    first = lines[0]
    what = _NOT_TEXT.get(first[0]) or ("a list" if first[:2] in ("- ", "-") or first == "-" else None)
    if what is None and (first.startswith(("? ", ": ")) or first in ("?", ":")):
        what = "a mapping"
    if what is None and head == "" and _is_key(first):
        what = "a mapping"
    if what is not None:
        raise ValueError(f"front matter: {key} must be text, not {what}")
    if "\t" in "".join(lines):
        raise ValueError(f"front matter: a tab in the value of {key}; quote it")
    if len([line for line in lines if line]) > 1 and not all(_plain_line(line) for line in lines if line):
        raise ValueError(
            f"front matter: the value of {key} spans lines that are not plain text; quote it, or use '>' or '|'"
        )
    return _fold_plain(lines, key)


def _plain_line(line: str) -> bool:
    """Whether a line of a value spanning lines is plain text: no ``: `` or ending colon, no comment,
    not beginning with an indicator or a document marker (what YAML reads otherwise is refused, not guessed)."""
    return not (
        ": " in line
        or line.endswith(":")
        or " #" in line
        or line[0] in "-?:,[]{}#&*!|>'\"%@`"
        or line.startswith(("...", "---"))
    )


def _is_key(line: str) -> bool:
    """Whether a line reads as ``key: value`` (a nested mapping when it opens a value)."""
    key, colon, rest = line.partition(":")
    return bool(colon and key and (not rest or rest[0] in " \t"))


def _fold_plain(lines: list[str], key: str) -> str:
    """A plain value's lines folded: one line break is a space, each blank line a line break; a comment ends it."""
    out = ""
    blanks = 0
    for number, line in enumerate(lines):
        if not line:
            blanks += 1
            continue
        if line.startswith("#") and number:
            raise ValueError(f"front matter: a comment inside the value of {key}")
        text, ended = _uncomment(line)
        if number:
            out += "\n" * blanks if blanks else " "
        out += text
        blanks = 0
        if ended and number + 1 < len(lines):
            raise ValueError(f"front matter: a comment inside the value of {key}")
    return out


def _uncomment(line: str) -> tuple[str, bool]:
    """A plain value's line without its comment (`` #`` and what follows), and whether it had one."""
    at = line.find(" #")
    tab = line.find("\t#")
    if tab >= 0 and (at < 0 or tab < at):
        at = tab
    return (line, False) if at < 0 else (line[:at].rstrip(" \t"), True)


def _quoted(head: str, key: str) -> str:
    """A single- or double-quoted value closing on its line (a comment may follow it)."""
    quote = head[0]
    if quote == "'":
        at = 1
        while True:
            at = head.find("'", at)
            if at < 0:
                raise ValueError(f"front matter: the quoted value of {key} must close on its line")
            if head[at + 1 : at + 2] != "'":
                break
            at += 2
        text, after = head[1:at].replace("''", "'"), head[at + 1 :]
    else:
        at = 1
        while True:
            at = head.find('"', at)
            if at < 0:
                raise ValueError(f"front matter: the quoted value of {key} must close on its line")
            slashes = len(head[:at]) - len(head[:at].rstrip("\\"))
            if slashes % 2 == 0:
                break
            at += 1
        try:
            text = loads(head[: at + 1])
        except JSONDecodeError:
            raise ValueError(f"front matter: the value of {key} may use JSON's escapes only") from None
        after = head[at + 1 :]
    if after.strip(" \t") and not (after[0] in " \t" and after.strip(" \t").startswith("#")):
        raise ValueError(f"front matter: text after the quoted value of {key}")
    return text


def _block_scalar(head: str, block: list[str], key: str) -> str:
    """A literal (``|``) or folded (``>``) block scalar, chomped as its header says."""
    header = _BLOCK_HEADER.fullmatch(head)
    if header is None:
        raise ValueError(f"front matter: {head!r} is not a block scalar header ('|' or '>', then '-', '+' or a digit)")
    style, chomp, digit = header[1], header[2] or header[5] or "", header[3] or header[4]
    for line in block:
        if "\t" in line[: len(line) - len(line.lstrip(" \t"))] and line.strip():
            raise ValueError(f"front matter: a tab indents the value of {key}")
    content = [line for line in block if line.strip()]
    if digit:
        indent = int(digit)
    elif content:
        indent = len(content[0]) - len(content[0].lstrip(" "))
    else:
        indent = max([1, *(len(line) for line in block)])  # no text: every line is blank
    if not digit and content:
        leading = block[: block.index(content[0])]
        if any(len(line) > indent for line in leading):
            raise ValueError(f"front matter: a blank line opening {key} holds more spaces than its first line")
    lines = []
    for line in block:
        if line.strip() and len(line) - len(line.lstrip(" ")) < indent:
            raise ValueError(f"front matter: a line of {key} is indented less than its first")
        lines.append(line[indent:])  # a blank line's spaces beyond the indentation are text
    trailing = 0
    while lines and not lines[-1]:
        lines.pop()
        trailing += 1
    text = "\n".join(lines) if style == "|" else _fold_block(lines)
    if not lines:
        return "\n" * trailing if chomp == "+" else ""
    if chomp == "-":
        return text
    return text + "\n" * (trailing + 1 if chomp == "+" else 1)


def _fold_block(lines: list[str]) -> str:
    """A folded block's lines: a line break between two lines of text is a space, unless either line is
    more indented (begins with a space or tab), and each blank line between them a line break."""
    out = ""
    previous: str | None = None
    blanks = 0
    for line in lines:
        if not line:
            blanks += 1
            continue
        if previous is not None:
            folds = previous[0] not in " \t" and line[0] not in " \t"
            out += ("\n" * blanks if blanks else " ") if folds else "\n" * (blanks + 1)
        elif blanks:
            out += "\n" * blanks
        out += line
        previous = line
        blanks = 0
    return out
