"""Bold run-in names in Markdown: a paragraph that opens with its name set in bold.

`**Adroit Cypher Use:** You can bear…`, `***Nimble Escape.*** The goblin…`, `**_Drow Poison
(Injury)._** This poison…`. The bold span must end in `.` or `:` (inside or right after it) and be
followed by text, and the name must be name-like; a parenthesised tail (a cost, a poison's kind)
is a tag, not part of the name. List items are field lines (`- **Armor Class:** 17`), not
entries, and a bold name repeated in one file is a shared trait or a label ("Motive:",
"Health:"), not an entry (`inline.drop_repeats`): its text stays in its section either way.

A paragraph may also open with a line that is its bold name alone (`**Ghost**`, then its stat
line, or a blank line and its text): a heading set in bold, as exports from word processors and
wikis print them. Its text runs on to the next such name or run-in, or the next heading, so a
creature's bullet lines stay with it. One that opens its section's text and runs to its end is the
section's subtitle ("### Rations", then "**Food for the road**"), not an entry of its own.

Measured and not kept: list items that open with a bold name ("- **ECM Array**: Electronic counter-measures…",
"1. **Clairvoyance**: You can see…") as run-ins, on answer keys of eight Markdown books no development set holds.
All of them, and then only runs of three or more such items whose names no heading or paragraph run-in
prints: about 20 more gold names found, but outcome and column definitions ("Success", "Failure", "Type",
"Hands") were typed spell or item by their chapter, Plerion's implant rows lost their item type to run-ins
of the same name, and the Cypher SRD's summary lists ("* **Dog:** level 2") hid its run-in creatures (a name
printed twice is a label). Names in list items stay text of their section.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from gmtool.index.extract.inline import Inline, Pos, drop_repeats, namelike

_BOLD = re.compile(r"^ {0,3}(\*\*\*|\*\*_|_\*\*|\*\*|__)(.{2,90}?)(\*\*\*|_\*\*|\*\*_|\*\*|__)(.*)$")
_HEAD = re.compile(r"^ {0,3}(\*\*|__)([^*_]{2,60}?)\1\s*:?\s*$")  # a bold line alone: `**Ghost**`
_TAIL = re.compile(r"\s*\(([^()]{1,40})\)$")
# A run-in's text is prose; a field's is a value ("**Range:** 150 feet", "**Motive:** Hungers for
# flesh"). Six words is above the longest field values of the corpus's stat blocks and spell headers.
_MIN_TEXT_WORDS = 6
# A bold name printed twice in one file is a trait several entries share ("***Tunneler.***" under
# two monsters, "**Motive:**" under every creature), not a thing of its own.
_MAX_REPEATS = 1


class RunIn(NamedTuple):
    idx: int  # line index of the name
    end: int  # one past the paragraph's last line
    name: str
    tags: list[str] | None
    head: bool = False  # a bold line alone: a heading, whose text starts on the next line


def _name_of(line: str) -> tuple[str, list[str] | None] | None:
    m = _BOLD.match(line)
    if m is None:
        return None
    inner, rest = m.group(2).strip(" _*"), m.group(4)
    after = rest.lstrip(" _*")
    if inner.endswith((".", ":")):
        name, text = inner[:-1].strip(" _*"), after
    elif after.startswith((".", ":")):
        name, text = inner, after[1:]
    else:
        return None
    if not text.strip() and not name:
        return None
    tags = None
    t = _TAIL.search(name)
    if t:
        name, tags = name[: t.start()].strip(), [t.group(1).strip()]
    return (name, tags) if namelike(name) else None


def _head_of(line: str) -> tuple[str, list[str] | None] | None:
    """The name of a bold line that is nothing else (`**Ghost**`, `**Restrictions**:`)."""
    m = _HEAD.match(line)
    if m is None:
        return None
    name, tags = m.group(2).strip(), None
    t = _TAIL.search(name)
    if t:
        name, tags = name[: t.start()].strip(), [t.group(1).strip()]
    return (name, tags) if namelike(name) else None


def _opens(lines: list[str], i: int, start: int, heading_idx: set[int]) -> bool:
    """Line i may open a run-in: it starts a paragraph with emphasis and is not a heading."""
    return (i not in heading_idx and lines[i].lstrip().startswith(("*", "_"))
            and not (i > start and lines[i - 1].strip()))


def _head_end(lines: list[str], i: int, start: int, heading_idx: set[int]) -> int:
    """One past the last line of a bold head's text: up to the next heading or bold name."""
    end = i + 1
    while end < len(lines) and end not in heading_idx and not (
            _opens(lines, end, start, heading_idx) and (_name_of(lines[end]) or _head_of(lines[end]))):
        end += 1
    while end > i + 1 and not lines[end - 1].strip():
        end -= 1
    return end


def _whole_section(lines: list[str], i: int, end: int, start: int, heading_idx: set[int]) -> bool:
    """A bold head that opens its section's text and runs to its end: the section's subtitle."""
    before = next((j for j in range(i - 1, start - 1, -1) if lines[j].strip()), None)
    after = next((j for j in range(end, len(lines)) if lines[j].strip()), None)
    return (before is None or before in heading_idx) and (after is None or after in heading_idx)


def runins(lines: list[str], start: int, heading_idx: set[int]) -> list[RunIn]:
    """The run-in names after line `start`, in line order (see the module docstring)."""
    found: list[Inline] = []
    ends: dict[int, int] = {}
    heads: set[int] = set()
    for i in range(start, len(lines)):
        line = lines[i]
        if not _opens(lines, i, start, heading_idx):
            continue
        got = _name_of(line)
        head = _head_of(line) if got is None else None
        named = got or head
        if named is None:
            continue
        if head is not None:
            end = _head_end(lines, i, start, heading_idx)
            if _whole_section(lines, i, end, start, heading_idx):
                continue  # a subtitle ("### Rations" then "**Food for the road**"): the section is the entry
            text = " ".join(lines[i + 1:end])
            heads.add(i)
        else:
            end = i + 1
            while end < len(lines) and lines[end].strip() and end not in heading_idx:
                end += 1
            text = " ".join([_BOLD.match(line).group(4), *lines[i + 1:end]])  # type: ignore[union-attr]
        if len(text.split()) < _MIN_TEXT_WORDS:
            continue  # a field and its value, or a bold line alone: not a run-in
        found.append(Inline(Pos(0, i), named[0], "", named[1], "runin"))
        ends[i] = end
    return [RunIn(f.pos.idx, ends[f.pos.idx], f.title, f.tags, f.pos.idx in heads)
            for f in drop_repeats(found, _MAX_REPEATS)]
