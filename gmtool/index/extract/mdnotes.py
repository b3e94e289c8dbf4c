"""Note-vault markup: what an Obsidian note's front matter and Dataview fields say, read as text.

GMs keep rules and compendiums as vaults of notes, one thing per note, made from a template: the
thing's facts sit in the note's front matter, and the body shows them through Dataview's inline
queries (`` `= this.Description` ``) and inline fields (`**Good Starter**:: No`). Read as plain
Markdown, such a note is titled "`= this.name`" and says nothing. Here an inline query that reads one
field of the note is replaced by that field's value (Dataview's field names ignore case), any other
inline query (a computed expression) by nothing, an inline field reads `Key: value`, and a line of
nothing but tags (`#PokeroleSRD/Moves`) goes. Line count is kept.
"""

from __future__ import annotations

import re

# `= this.Field` (Dataview's inline query of the note's own field), and any other inline query
_THIS_FIELD = re.compile(r"`=\s*this\.([A-Za-z_][\w-]*)\s*`")
_INLINE_QUERY = re.compile(r"`=[^`]*`")
# an inline field: "Key:: value" (at a line's start or after emphasis: "**Good Starter**:: No")
_INLINE_FIELD = re.compile(r"(?<=\S)::(?=\s)")
_TAG_LINE = re.compile(r"^\s*#[^\s#][^\s]*(?:\s+#[^\s#][^\s]*)*\s*$")
# a top-level scalar of YAML front matter: "Key: value" at column 0 (lists, maps and empty values
# are not text), and the indented lines that continue a folded value
_FM_SCALAR = re.compile(r"^([A-Za-z_][\w -]{0,40}):[ \t]+(\S.*)$")
_FM_KEY = re.compile(r"^([A-Za-z_][\w -]{0,40}):", re.M)


def front_fields(lines: list[str], start: int) -> dict[str, str]:
    """The front matter's top-level scalar fields, keys lower-cased; `start` is the first line after
    the front matter (0 when there is none)."""
    out: dict[str, str] = {}
    key = None
    for line in lines[1 : start - 1]:
        m = _FM_SCALAR.match(line)
        if m:
            key = m.group(1).strip().lower()
            value = m.group(2).strip()
            out[key] = "" if value[0] in "[{|>&*!" else _unquote(value)
        elif key and line.startswith((" ", "\t")) and not line.strip().startswith("- ") and out.get(key):
            out[key] += " " + line.strip()
        elif _FM_KEY.match(line):
            key = None
    return out


def front_keys(front: str) -> frozenset[str]:
    """The top-level keys of a front matter block, lower-cased (a vault template's fields)."""
    return frozenset(k.lower() for k in _FM_KEY.findall(front))


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return value


def render(lines: list[str], start: int, fields: dict[str, str]) -> list[str]:
    """The lines after the front matter with inline queries, inline fields and tag lines read as
    text (a new list; `lines` itself is left as it is)."""
    out = list(lines)
    for i in range(start, len(lines)):
        line = lines[i]
        if "`=" in line:
            line = _THIS_FIELD.sub(lambda m: fields.get(m.group(1).lower(), ""), line)
            line = _INLINE_QUERY.sub("", line)
        if "::" in line:
            line = _INLINE_FIELD.sub(":", line)
        if line.lstrip().startswith("#") and _TAG_LINE.match(line):
            line = ""
        out[i] = line
    return out


# a tag line's start, after a newline (not re.M and "^": looking for a newline first is 7x faster)
_ANY_TAG_LINE = re.compile(r"\n[ \t]*#[^\s#]")
_TAG_FIRST = re.compile(r"[ \t]*#[^\s#]")  # ...or at the very start of the file


def has_markup(text: str) -> bool:
    """Whether a note uses any of it (most files do not: they skip the line-by-line pass)."""
    return "`=" in text or "::" in text or bool(_TAG_FIRST.match(text) or _ANY_TAG_LINE.search(text))
