"""Rows of name-first tables as entries (equipment, creatures, origins...).

The pypdfium2 layout already tells where a table is: cells set apart by wide gaps, either
within one line (`Line.cells`) or as narrow columns read side by side. A name column is a
column of at least four short, name-like cells, each with a cell to its right on the same
row, where the cells to the right are mostly not names themselves (that would be a list set
in columns). A leading column of numbers or dice ranges ("1-2", "d10") is skipped, so the
name column of a roll table is the one after it. A name that wraps inside its cell
("Giant Vampire" / "Bat") is joined: its second line follows closer than the row pitch.
"""

from __future__ import annotations

import bisect
import re
from statistics import median
from typing import NamedTuple

from gmtool.index.extract.inline import Inline, Pos, namelike
from gmtool.index.extract.pdf_layout import Line

_ROLL = re.compile(r"^(\d*d\d+|\d+(\s*[-\u2013]\s*\d+)?\+?|[-\u2013])$", re.IGNORECASE)
_MIN_ROWS = 4


class Cell(NamedTuple):
    x0: float
    x1: float
    top: float
    bottom: float
    text: str
    line: int


def _cells(lines: list[Line], skip: set[int], thr: float) -> list[Cell]:
    out: list[Cell] = []
    for i, ln in enumerate(lines):
        if i in skip or ln.size >= thr:
            continue
        if ln.cells:
            out.extend(Cell(c[0], c[1], ln.top, ln.bottom, c[2], i) for c in ln.cells)
        else:
            out.append(Cell(ln.x0, ln.x1, ln.top, ln.bottom, ln.text, i))
    return out


def _columns(cells: list[Cell]) -> list[list[Cell]]:
    """Cells grouped by left edge (within 3 pt)."""
    cols: list[list[Cell]] = []
    for c in sorted(cells, key=lambda c: c.x0):
        if cols and c.x0 - cols[-1][-1].x0 <= 3:
            cols[-1].append(c)
        else:
            cols.append([c])
    return [sorted(col, key=lambda c: c.top) for col in cols]


def _right_of(c: Cell, cells: list[Cell]) -> list[Cell]:
    """Cells to the right of c on its row (cells sorted by top)."""
    lo = bisect.bisect_left(cells, c.top - 60, key=lambda d: d.top)
    out = []
    for d in cells[lo:]:
        if d.top >= c.bottom + 2:
            break
        if d.x0 > c.x1 + 2 and d.bottom > c.top - 2:
            out.append(d)
    return sorted(out, key=lambda d: d.x0)


def _name_column(col: list[Cell], cells: list[Cell]) -> list[tuple[Cell, list[Cell]]] | None:
    rows = [(c, _right_of(c, cells)) for c in col]
    rows = [(c, r) for c, r in rows if r]
    if len(rows) < _MIN_ROWS:
        return None
    names = [c for c, _ in rows if namelike(c.text)]
    if len(names) < 0.75 * len(rows):
        return None
    nxt = [r[0] for _, r in rows]
    if sum(1 for d in nxt if namelike(d.text, 4) and d.text[:1].isupper()) >= 0.7 * len(nxt):
        return None  # a list of names set in columns, not a table
    return rows


def find_rows(pages, drop, thr: float) -> list[Inline]:
    """Rows of name-first tables on every page, in document order."""
    found: list[Inline] = []
    for pi, (_w, _h, lines) in enumerate(pages):
        if len(lines) < _MIN_ROWS:
            continue
        cells = sorted(_cells(lines, drop[pi], thr), key=lambda c: c.top)
        used: set[int] = set()
        for col in _columns(cells):
            if len(col) < _MIN_ROWS or any(c.line in used for c in col):
                continue
            if sum(1 for c in col if namelike(c.text)) < _MIN_ROWS:
                continue
            if sum(1 for c in col if _ROLL.match(c.text)) >= 0.75 * len(col):
                continue  # a roll column: the names are in the next one
            rows = _name_column(col, cells)
            if rows is None:
                continue
            found.extend(_entries(pi, rows, col, lines))
            used.update(c.line for c in col)
    return found


def _entries(pi: int, rows, col: list[Cell], lines: list[Line]) -> list[Inline]:
    tops = [c.top for c, _ in rows]
    pitch = median(b - a for a, b in zip(tops, tops[1:], strict=False)) if len(tops) > 1 else 0.0
    out: list[Inline] = []
    first = rows[0]
    # a first row of short wordless cells is the header ("ITEM COST NOTES", "name notes")
    header = all(not re.search(r"\d", c.text) and len(c.text.split()) <= 3 for c in [first[0], *first[1]])
    by_top = {c.top: r for c, r in rows}
    prev: Cell | None = None
    for c in col:
        if prev is not None and out and 0 < c.top - prev.top < 0.8 * pitch and namelike(f"{out[-1].title} {c.text}"):
            # the second line of a wrapped name
            last = out[-1]
            out[-1] = last._replace(title=f"{last.title} {c.text}")
            prev = c
            continue
        right = by_top.get(c.top)
        prev = c
        if right is None or (header and c is first[0]) or not namelike(c.text):
            continue
        body = " ".join(d.text for d in right)
        out.append(Inline(Pos(pi, c.line), c.text, body, None, "row"))
    return out
