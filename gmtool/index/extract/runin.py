"""Run-in entries: a name at the start of a paragraph, then a separator, then its text.

"Bless : Nearby allies gain +1", "Weak (STR): You can't exert much force", "Fragile – Items
that are prone to breaking". They are found by their typography repeating on a page, never by
their words: paragraph starts that share a separator and an indent (three or more), or that set
the name in a font of its own before the separator (two or more).
"""

from __future__ import annotations

import re

from gmtool.index.extract.inline import Inline, Pos, namelike
from gmtool.index.extract.pdf_layout import Line
from gmtool.index.extract.titles import split_abbrev

# name, separator, text: "Name : text", "Name: text", "Name – text", "Name — text", "Name - text"
_TEXT_SEP = re.compile(
    r"^(?P<name>[^\s:\u2013\u2014][^:\u2013\u2014]{0,47}?)"
    r"(?P<sep>\s+:\s+|:\s+|\s+[\u2013\u2014]\s+|[\u2014]|\s+-\s+)(?P<rest>\S.*)$"
)
_LEAD_SEP = re.compile(r"^(?P<name>.+?)\s*(?P<sep>[:.\u2013\u2014]|\s-)$")
# repetitions on a page that make a pattern: plain text needs more evidence than a font change
_MIN_TEXT = 3
_MIN_STYLED = 2


def _starts_paragraph(lines: list[Line], i: int, skip: set[int]) -> bool:
    j = i - 1
    while j >= 0 and j in skip:
        j -= 1
    if j < 0:
        return True
    prev, ln = lines[j], lines[i]
    return (
        prev.col != ln.col
        or prev.text.endswith((".", "!", "?", ":", ")"))
        or ln.base - prev.base > 1.4 * max(ln.size, prev.size)
        or ln.base < prev.base
        or abs(prev.size - ln.size) > 0.3
        or abs(prev.x0 - ln.x0) > 0.7 * ln.size
    )


def _candidate(ln: Line) -> tuple[str, str, str] | None:
    """(name, separator kind, rest) of a line that opens with a run-in name."""
    if ln.lead:
        m = _LEAD_SEP.match(ln.lead)
        rest = ln.text[len(ln.lead):].strip()
        if m and rest and namelike(m.group("name")):
            return m.group("name"), "font", rest
        if not m and rest[:1] in (":", ".", "\u2013", "\u2014") and namelike(ln.lead):
            return ln.lead, "font", rest[1:].strip()
    m = _TEXT_SEP.match(ln.text)
    if m and namelike(m.group("name"), 5):
        name = m.group("name").strip()
        if name[:1].isupper() or name[:1].isdigit() or name[:1] in "+":
            return name, m.group("sep").strip() or " ", m.group("rest")
    return None


def _paragraph(lines: list[Line], i: int, starts: set[int], skip: set[int]) -> list[int]:
    """Line indexes of the paragraph opened at line i (up to the next run-in or break)."""
    out = [i]
    j = i + 1
    while j < len(lines):
        if j in skip:
            j += 1
            continue
        if j in starts or _starts_paragraph(lines, j, skip):
            break
        out.append(j)
        j += 1
    return out


def find_runins(pages, drop, thr: float) -> list[Inline]:
    """Run-in entries of every page, in document order."""
    found: list[Inline] = []
    for pi, (_w, _h, lines) in enumerate(pages):
        cands: dict[int, tuple[str, str, str]] = {}
        for i, ln in enumerate(lines):
            if i in drop[pi] or ln.size >= thr or len(ln.text) < 4:
                continue
            c = _candidate(ln)
            if c and _starts_paragraph(lines, i, drop[pi]):
                cands[i] = c
        if not cands:
            continue
        groups: dict[tuple, list[int]] = {}
        for i, (_n, sep, _r) in cands.items():
            ln = lines[i]
            groups.setdefault((sep, ln.col, round(ln.x0 / 4)), []).append(i)
        keep: set[int] = set()
        for (sep, _col, _x), idxs in groups.items():
            if len(idxs) >= (_MIN_STYLED if sep == "font" else _MIN_TEXT):
                keep.update(idxs)
        for i in sorted(keep):
            name, _sep, rest = cands[i]
            name, tags = split_abbrev(name)
            para = _paragraph(lines, i, keep, drop[pi])
            body = " ".join([rest] + [lines[j].text for j in para[1:]])
            found.append(Inline(Pos(pi, i), name.strip(), body, tags or None, "runin"))
    return found
