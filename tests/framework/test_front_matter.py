"""The front matter of ``SKILL.md`` (``shipcode_mcp.frontmatter``): the YAML real skills are written in, read as YAML
reads it, without a YAML library; whatever else is asked of it is refused with one line saying what.

PyYAML (a test dependency only) is the oracle: every written case, and thousands of generated ones, give exactly
the ``name`` and ``description`` ``yaml.safe_load`` gives, or are refused; a refused case is never one the subset
claims. A skill whose description is folded (``>``) is served with it, whole bytes, on both engines.
"""

from __future__ import annotations

import hashlib
import random

import pytest
import yaml
from support.wire import engine, request

from shipcode_mcp import Server
from shipcode_mcp.frontmatter import MAX_FRONT_MATTER_CHARS, read_front_matter

KEYS = ("name", "description")
WRITTEN = [
    "name: pdf\ndescription: Fill PDF forms",
    "name: pdf\ndescription: >\n  Fill PDF forms and\n  extract text.\n",
    "name: pdf\ndescription: >-\n  Fill PDF forms and\n  extract text.\n\n\n",
    "name: pdf\ndescription: >+\n  Fill PDF forms and\n  extract text.\n\n\n",
    "name: pdf\ndescription: |\n  Line one\n  Line two\n\n  After blank\n",
    "name: pdf\ndescription: |-\n  Line one\n    indented\n  Line two\n",
    "name: pdf\ndescription: |+\n  keep\n\n",
    "name: pdf\ndescription: >\n  para one\n  continues\n\n  para two\n    more indented\n    again\n  back\n",
    "name: pdf\ndescription: >2\n   starts indented\n  normal\n",
    "name: pdf\ndescription: |2-\n    four\n  two\n",
    "name: pdf\ndescription: >-2\n    four\n  two\n",
    "name: pdf\ndescription: > # a comment\n  text\n",
    "description:\n  on the next line\n  and more\nname: pdf",
    "name: pdf # a comment\ndescription: text # trailing",
    "name: 'pdf'\ndescription: 'it''s quoted'",
    'name: "pdf"\ndescription: "tab\\tand \\u00e9 and \\"q\\""',
    "name: pdf\ndescription: plain\n  continued\n\n  new paragraph\n",
    "# comment\nname: pdf\n\ndescription: x\nlicense: MIT\nmetadata:\n  author: me\n  version: 1\nallowed-tools:\n"
    "  - Bash\n  - Read\n",
    "name: pdf\ndescription: >\n\n  leading blank\n",
    "name: pdf\ndescription: |\n\n\n  two leading blanks\n  x\n",
    "name: pdf\ndescription: >-\n  a\n\n\n  b\n",
    "name: pdf\ndescription: >\n  a\n   b\n  c\n",
    "name: pdf\ndescription: >\n   a\n  \n   b\n",
    "name: pdf\ndescription: café ünïcode — dash",
    "name: pdf\ndescription: 'a # not a comment'",
    "name: pdf\ndescription: a#b c",
    "name: pdf\ndescription:   spaced   \n",
    "name: pdf\ndescription: x:y",
    "name: pdf\ndescription: 'multi'  # c",
    "name: pdf\ndescription: >\n  a\n  b\n\n\n  c\n\n",
    "description: |\nname: pdf",
    "description: >-\nname: pdf",
    "description: |+\n\n\nname: pdf",
    "name: pdf\ndescription: >\n  a\n    \n  b\n",
    "name: pdf\ndescription: |\n  a\n     \n  b\n",
    "name: pdf\ndescription: # just a comment\n  # another\n  real text\n",
    "name: pdf\ndescription:\n  'quoted on the next line'\n",
    'name:   pdf   \ndescription: "a: b # c"\n',
    "name: pdf\ndescription:\n",
]
#: The one leniency, kept from before multi-line values were read: a plain value on one line is read as written,
#: though YAML refuses a ``: `` inside it (real descriptions say "Use when: ...").
LENIENT = "name: pdf\ndescription: Use when: the user asks\n"


def as_yaml_reads_it(source: str) -> dict:
    """``name`` and ``description`` as PyYAML reads them (a key without a value left out)."""
    loaded = yaml.safe_load(source)
    return {key: value for key, value in loaded.items() if key in KEYS and value is not None}


def skill_md(source: str) -> str:
    return "---\n" + source + ("" if source.endswith("\n") else "\n") + "---\nThe body.\n"


@pytest.mark.parametrize("source", WRITTEN)
def test_what_skills_write_is_read_as_yaml_reads_it(source: str) -> None:
    assert read_front_matter(skill_md(source), KEYS) == as_yaml_reads_it(source)
    crlf = skill_md(source).replace("\n", "\r\n")
    assert read_front_matter(crlf, KEYS) == as_yaml_reads_it(source)


def test_a_colon_inside_a_value_on_one_line_is_read_as_written() -> None:
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load(LENIENT)
    assert read_front_matter(skill_md(LENIENT), KEYS) == {"name": "pdf", "description": "Use when: the user asks"}


#: What the generated values are made of: words, indicators, comments, quotes, spaces and blank lines.
PIECES = ["alpha", "beta gamma", "x: y", "k:", "a #b", "#c", "é", "- item", "'q'", '"d"', "...", "--", "x ", " lead"]


def generated(rng: random.Random) -> str:
    style = rng.choice(["|", ">", "", "next"])
    chomp = rng.choice(["", "-", "+", "2", "-1", "1+"]) if style in ("|", ">") else ""
    indent = rng.choice([1, 2, 4])
    lines = []
    for _ in range(rng.randint(0, 6)):
        roll = rng.random()
        if roll < 0.2:
            lines.append("")
        elif roll < 0.3:
            lines.append(" " * rng.randint(0, 6))
        elif roll < 0.45:
            lines.append(" " * (indent + rng.randint(1, 3)) + rng.choice(PIECES))
        else:
            lines.append(" " * indent + rng.choice(PIECES))
    if style in ("|", ">"):
        value = " " + style + chomp + "\n" + "\n".join(lines)
    elif style == "":
        value = " " + rng.choice(PIECES) + "".join("\n" + line for line in lines)
    else:
        value = "\n" + "\n".join(lines)
    return "name: pdf\ndescription:" + value + "\n" + rng.choice(["", "license: x\n", "\n", "metadata:\n  a: b\n"])


def test_generated_front_matter_is_read_as_yaml_reads_it_or_refused() -> None:
    rng = random.Random(20260728)
    read = 0
    for _ in range(4000):
        source = generated(rng)
        try:
            got = read_front_matter(skill_md(source), KEYS)
        except ValueError:
            continue
        read += 1
        try:
            expected = as_yaml_reads_it(source)
        except yaml.YAMLError:  # the one leniency: a value on one line read as written, colons and all
            value = source.split("\n")[1].removeprefix("description: ")
            assert (": " in value or value.endswith(":"), got["description"]) == (True, value), source
            continue
        assert got == expected, source
    assert read > 2000  # most of them are read, not refused


@pytest.mark.parametrize(
    ("source", "refusal"),
    [
        ("name: pdf\ndescription: [a, b]", "front matter: description must be text, not a list"),
        ("name: pdf\ndescription: {a: b}", "front matter: description must be text, not a mapping"),
        ("name: pdf\ndescription:\n  - a\n  - b", "front matter: description must be text, not a list"),
        ("name: pdf\ndescription:\n  short: x", "front matter: description must be text, not a mapping"),
        ("name: &n pdf\ndescription: x", "front matter: name must be text, not an anchor"),
        ("name: pdf\ndescription: *n", "front matter: description must be text, not an alias"),
        ("name: !!str pdf\ndescription: x", "front matter: name must be text, not a tag"),
        (
            "name: pdf\ndescription: 'open\n  still open'",
            "front matter: the quoted value of description must close on its line",
        ),
        ('name: pdf\ndescription: "\\x41"', "front matter: the value of description may use JSON's escapes only"),
        ("name: pdf\ndescription: 'a' b", "front matter: text after the quoted value of description"),
        (
            "name: pdf\ndescription: >x\n  a",
            "front matter: '>x' is not a block scalar header ('|' or '>', then '-', '+' or a digit)",
        ),
        (
            "name: pdf\ndescription: |\n    a\n  b",
            "front matter: a line of description is indented less than its first",
        ),
        ("name: pdf\ndescription: |\n\t a", "front matter: a tab indents the value of description"),
        ("name: pdf\ndescription: a\tb", "front matter: a tab in the value of description; quote it"),
        (
            "name: pdf\ndescription: a\n  b: c",
            "front matter: the value of description spans lines that are not plain text; quote it, or use '>' or '|'",
        ),
        (
            "name: pdf\ndescription: |\n     \n  a",
            "front matter: a blank line opening description holds more spaces than its first line",
        ),
        ("name: pdf\nname: pdf\ndescription: x", "front matter: name is given twice"),
        ("name: pdf\n- item\ndescription: x", "front matter line 2 is not 'key: value'"),
        ("name: pdf\njust words\ndescription: x", "front matter line 2 is not 'key: value'"),
        (
            "name: pdf\ndescription: x\nlicense: " + "x" * MAX_FRONT_MATTER_CHARS,
            "its front matter is longer than 65536 characters",
        ),
    ],
)
def test_what_the_subset_does_not_read_is_refused_with_one_line(source: str, refusal: str) -> None:
    with pytest.raises(ValueError) as refused:
        read_front_matter(skill_md(source), KEYS)
    assert str(refused.value) == refusal


def test_a_skill_with_a_folded_description_is_served_with_it(engine_name: str, tmp_path) -> None:
    (tmp_path / "pdf").mkdir()
    text = "---\nname: pdf\ndescription: >-\n  Fill PDF forms\n  and extract text.\nlicense: MIT\n---\nRun it.\n"
    (tmp_path / "pdf" / "SKILL.md").write_text(text)
    app = Server("sk", version="1.0.0")
    app.add_skills(tmp_path)
    listed = engine(engine_name).Engine(app.catalogue(), 1 << 20).feed(request("skills/list"))
    digest = hashlib.sha256(text.encode()).hexdigest().encode()
    assert listed == (
        b'{"jsonrpc":"2.0","id":1,"result":{"skills":[{"name":"pdf","description":"Fill PDF forms and extract text.",'
        b'"uri":"skill://pdf/SKILL.md","sha256":"' + digest + b'"}]}}\n'
    )
    (tmp_path / "pdf" / "SKILL.md").write_text("---\nname: pdf\ndescription: Fill PDF forms\n  and: extract\n---\n")
    with pytest.raises(ValueError) as refused:
        Server("sk").add_skills(tmp_path)
    assert str(refused.value) == (
        "skill 'pdf': front matter: the value of description spans lines that are not plain text; quote it, "
        "or use '>' or '|'"
    )
