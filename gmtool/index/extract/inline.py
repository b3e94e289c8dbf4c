"""Entries that are not headings: what a run-in or table-row detector hands to the tree.

An inline entry sits inside a section (its parent is the innermost heading before it), is
never a parent itself, and keeps its own text as body; the section keeps that text too, so
nothing becomes harder to find.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Pos(NamedTuple):
    page: int  # 0-based
    idx: int  # line index in that page


class Inline(NamedTuple):
    pos: Pos  # the line the name is printed on
    title: str
    body: str
    tags: list[str] | None
    kind: str  # runin | row
    # a table row: the table's header line when that header is the first line of its page and does not
    # repeat the header of a table the page before (see pdf_sections.table_breaks)
    opens_page: Pos | None = None


_NORM = re.compile(r"[^a-z0-9]+")
# a number, an ordinal, a share or a roll ("1d4", "d6+1", "d6/d8"; "D20 Tests" is a term of the SRD 5.2)
_NUMBER_WORD = re.compile(r"^(?:[\d.,/]+(?:st|nd|rd|th|%)?|(?:\d+[dD]|d)\d+(?:[+\-\u2013/](?:\d*[dD])?\d+)*)$")


# A random table's roll column header: a die ("d20", "d6 or d8", "1d66", "d%") or the word "roll". Its row's roll
# is kept as a field ("d20: 7"), so typing can tell a result to roll for from a thing (genre.roll_result).
DIE_HEADER = re.compile(r"^(?:\d*d(?:\d+|%)(?:\s+or\s+\d*d\d+)?|roll)$", re.IGNORECASE)


def norm(s: str) -> str:
    return _NORM.sub(" ", s.lower()).strip()


def namelike(text: str, max_words: int = 6) -> bool:
    """A short name, not a sentence, a number or a dice range."""
    t = text.strip()
    if len(t) > 48:
        return False
    words = t.split()
    if not words or len(words) > max_words:
        return False
    if not t[:1].isalnum() and t[:1] not in "+'\u2018\"\u201c(":
        return False
    letters = sum(map(str.isalpha, t))
    if letters < 2 or letters * 2 < len(t.replace(" ", "")):
        return False
    if _NUMBER_WORD.match(words[0]) or ": " in t:
        return False  # "10 gp", "14th", "1d4 Stress", "Hit Dice: 1d8": a value or a label, not a name
    return not t.endswith((".", ":", ",", ";")) or t.endswith("...")


def drop_repeats(found: list[Inline], limit: int = 3) -> list[Inline]:
    """A name printed as a run-in or row again and again is a label ("Bite.", "Range:"),
    not an entry; the text stays in its section."""
    counts: dict[str, int] = {}
    for e in found:
        k = norm(e.title)
        counts[k] = counts.get(k, 0) + 1
    return [e for e in found if counts[norm(e.title)] <= limit and norm(e.title)]
