"""Plain text -> Document, with headings guessed from the shape of the lines.

A heading is a short line after a blank line (or at the top) that is ALL CAPS or Title Case
and does not end like a sentence, or any short line underlined with `===`/`---`.
ALL CAPS and `===` headings are level 1; Title Case and `---` headings are level 2 (level 1
when the file has no level-1 headings at all).
"""

from __future__ import annotations

import re
from pathlib import Path

from gmtool.index.extract.markdown import read_text_file
from gmtool.index.extract.sections import EntryList
from gmtool.textnorm import shown_name
from gmtool.types import Document, Entry

_MINOR = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "and",
        "or",
        "nor",
        "but",
        "in",
        "on",
        "at",
        "to",
        "for",
        "with",
        "without",
        "within",
        "by",
        "from",
        "as",
        "into",
        "onto",
        "vs",
        "via",
        "per",
        "over",
        "under",
        "upon",
        "about",
        "after",
        "before",
        "between",
        "through",
        "than",
        "versus",
    ]
)
_UNDERLINE = re.compile(r"^\s*(=+|-+)\s*$")
_NUMBERED = re.compile(r"^(chapter|part|appendix|section|book)\b|^\d+(\.\d+)*[.)]?\s+\S", re.IGNORECASE)
_WORD = re.compile(r"(?<!\w)[A-Za-z][\w'’\-]*")
# stat lines and field lines that happen to be short and capitalised: "Skills Perception +6",
# "Challenge 1/4 (50 XP)", "Tools: None"
_STATLIKE = re.compile(r"(^|\s)[+\-−–]\d|\d+/\d+|\(\d|^[A-Z][a-z]+( [A-Za-z]+)?: \S")
_MAX_LEN = 70
_MAX_WORDS = 9


def _looks_like_heading(line: str) -> int:
    """0 when not a heading, 1 for an ALL CAPS (or chapter-like) line, 2 for Title Case."""
    s = line.strip()
    if not s or len(s) > _MAX_LEN or s[-1] in ".,;:!" or s.startswith(("-", "*", "•", "(", "[", "|", ">")):
        return 0
    if (_STATLIKE.search(s) or s[-1].isdigit()) and not _NUMBERED.match(s):
        return 0
    words = _WORD.findall(s)
    if not words or len(s.split()) > _MAX_WORDS:
        return 0
    if not (s[0].isupper() or s[0].isdigit()):
        return 0
    letters = [c for c in s if c.isalpha()]
    if len(letters) < 2:
        return 0
    if all(c.isupper() for c in letters):
        return 1
    significant = [w for w in words if w.lower() not in _MINOR]
    if not significant or not words[0][0].isupper():
        return 0
    lower = sum(1 for w in significant if not w[0].isupper())
    if lower:
        return 0
    if _NUMBERED.match(s):
        return 1
    return 2


def _drop_runs(found: list[tuple[int, int, int]], lines: list[str]) -> list[tuple[int, int, int]]:
    """Drop runs of 3+ candidates with nothing between them: a list or a table column, not headings."""

    def empty_after(n: int) -> bool:
        nxt = found[n + 1][0] if n + 1 < len(found) else len(lines)
        return not any(ln.strip() for ln in lines[found[n][2] : nxt])

    keep: list[tuple[int, int, int]] = []
    n = 0
    while n < len(found):
        m = n
        while m < len(found) and empty_after(m):
            m += 1
        run = m - n  # candidates n..m-1 have empty bodies; m (if any) has a body
        if run >= 3:
            keep.extend(found[m : m + 1])
            n = m + 1
            continue
        keep.extend(found[n : m + 1])
        n = m + 1
    return keep


def parse_text(text: str, name: str | None = None) -> list[Entry]:
    """Entries with bodies; text before the first heading (all of it, in a file without
    headings) is an entry titled by `name`, the file's stem."""
    lines = text.split("\n")
    found: list[tuple[int, int, int]] = []  # (line index, level, first body line)
    i = 0
    while i < len(lines):
        line = lines[i]
        prev_blank = i == 0 or not lines[i - 1].strip()
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if (
            line.strip()
            and len(line.strip()) <= _MAX_LEN
            and _UNDERLINE.match(nxt)
            and len(nxt.strip()) >= max(3, len(line.strip()) // 2)
            and not _UNDERLINE.match(line)
        ):
            found.append((i, 1 if nxt.strip()[0] == "=" else 2, i + 2))
            i += 2
            continue
        if prev_blank and line.strip():
            kind = _looks_like_heading(line)
            # a heading is followed by more text, not by the end of the file
            if kind and any(ln.strip() for ln in lines[i + 1 : i + 4]):
                found.append((i, kind, i + 1))
        i += 1
    found = _drop_runs(found, lines)
    if found and all(level == 2 for _, level, _ in found):
        found = [(i, 1, b) for i, _, b in found]
    out = EntryList("text")
    first = found[0][0] if found else len(lines)
    out.add_preamble(name or "Notes", _join(lines[:first]), 1)
    for n, (idx, level, body_start) in enumerate(found):
        body_end = found[n + 1][0] if n + 1 < len(found) else len(lines)
        out.add(" ".join(lines[idx].split()), level, _join(lines[body_start:body_end]), idx + 1,
                body_line=body_start + 1)
    return out.entries


def _join(lines: list[str]) -> str:
    return re.sub(r"\n{3,}", "\n\n", "\n".join(ln.rstrip() for ln in lines)).strip()


def extract_text(path: Path) -> Document:
    """Extract a plain-text file's guessed headings and sections."""
    path = Path(path)
    text = read_text_file(path)
    return Document(format="txt", title=None, pages=1, entries=parse_text(text, shown_name(path.stem)), page_texts=[text], lines=text.count("\n") + 1)
