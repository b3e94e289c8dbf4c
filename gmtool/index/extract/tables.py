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
import itertools
import re
from collections.abc import Callable
from statistics import median
from typing import NamedTuple

from gmtool.index.extract.inline import DIE_HEADER, Inline, Pos, namelike
from gmtool.index.extract.pdf_layout import Line
from gmtool.index.extract.pdf_sections import CONTENT_SHAPE

_ROLL = re.compile(r"^(\d*d\d+|\d+(\s*[-\u2013]\s*\d+)?\+?|[-\u2013])$", re.IGNORECASE)
_MIN_ROWS = 4
# A column of names beside another column of names is a list set in columns, unless the second
# repeats itself: a table's trait or range column ("Agility", "Melee" down a weapon table) holds
# at most this share of distinct values.
_DISTINCT = 0.6


class Cell(NamedTuple):
    x0: float
    x1: float
    top: float
    bottom: float
    text: str
    line: int
    name: bool  # namelike(text)
    named_row: bool = False  # its line is a whole data row: a name, then cells with numbers (see _beside)
    col: int = 0  # its line's layout column


def _cells(lines: list[Line], skip: set[int], thr: float) -> list[Cell]:
    out: list[Cell] = []
    for i, ln in enumerate(lines):
        if i in skip or ln.size >= thr:
            continue
        if ln.cells:
            named_row = (len(ln.cells) >= 2 and namelike(ln.cells[0][2])
                         and any(ch.isdigit() for cell in ln.cells[1:] for ch in cell[2]))
            out.extend(Cell(c[0], c[1], ln.top, ln.bottom, c[2], i, namelike(c[2]), named_row, ln.col) for c in ln.cells)
        else:
            out.append(Cell(ln.x0, ln.x1, ln.top, ln.bottom, ln.text, i, len(ln.text) <= 48 and namelike(ln.text), False,
                            ln.col))
    return out


def _columns(cells: list[Cell]) -> list[list[Cell]]:
    """Cells grouped by left edge, then by centre (centred columns), within 3 pt."""
    out: list[list[Cell]] = []
    for key in (lambda c: c.x0, lambda c: (c.x0 + c.x1) / 2):
        cols: list[list[Cell]] = []
        for c in sorted(cells, key=key):
            if cols and key(c) - key(cols[-1][-1]) <= 3:
                cols[-1].append(c)
            else:
                cols.append([c])
        out.extend(sorted(col, key=lambda c: c.top) for col in cols)
    return out


def _right_of(c: Cell, cells: list[Cell]) -> list[Cell]:
    """Cells to the right of c on its row (cells sorted by top)."""
    return sorted(_beside(c, cells, lambda d: d.x0 > c.x1 + 2), key=lambda d: d.x0)


def _beside(c: Cell, cells: list[Cell], side: Callable[[Cell], bool]) -> list[Cell]:
    """Cells on one side of c on its row, except another table's: a whole data row led by a name, read
    as a line of cells in another page column (a table beside another shares its baselines, not its
    rows)."""
    lo = bisect.bisect_left(cells, c.top - 60, key=lambda d: d.top)
    out = []
    for k in range(lo, len(cells)):  # by index: a slice would copy the rest of the page's cells
        d = cells[k]
        if d.top >= c.bottom + 2:
            break
        if side(d) and d.bottom > c.top - 2 and not (d.named_row and d.col != c.col):
            out.append(d)
    return out


def _is_header(row: tuple[Cell, list[Cell]]) -> bool:
    """A first row of short cells without numbers: "ITEM COST NOTES", "name notes" (a die
    label such as "d10" heads a roll column)."""
    c, right = row
    cells = [c, *(d for d in right if not re.fullmatch(r"d\d+", d.text.strip(), re.IGNORECASE))]
    return all(not re.search(r"\d", d.text) and len(d.text.split()) <= 3 for d in cells)


def _partners(c: Cell, cells: list[Cell]) -> list[Cell]:
    """The other cells of c's row: those to its right, or the roll number to its left
    when the name is the last column ("1-2 | free colony")."""
    right = _right_of(c, cells)
    if right:
        return right
    return [d for d in _left_of(c, cells) if _ROLL.match(d.text)]


def _name_column(col: list[Cell], cells: list[Cell]) -> list[tuple[Cell, list[Cell]]] | None:
    rows = [(c, _partners(c, cells)) for c in col]
    rows = [(c, r) for c, r in rows if r]
    if len(rows) < _MIN_ROWS:
        return None
    names = [c for c, _ in rows if c.name]
    if len(names) < 0.75 * len(rows):
        return None
    nxt = [r[0] for _, r in rows]
    if (sum(1 for d in nxt if namelike(d.text, 4) and d.text[:1].isupper()) >= 0.7 * len(nxt)
            and len({d.text.lower() for d in nxt}) > _DISTINCT * len(nxt)):
        return None  # a list of names set in columns, not a table (whose next column repeats: "Agility")
    # the names come first: nothing but a roll number left of them ("Level | Features" is not)
    lefts = sum(1 for c, _ in rows if any(not _ROLL.match(d.text) for d in _left_of(c, cells)))
    if lefts > 0.25 * len(rows):
        return None
    return rows


def _left_of(c: Cell, cells: list[Cell]) -> list[Cell]:
    return _beside(c, cells, lambda d: d.x1 < c.x0 - 2)


def find_rows(pages, drop, thr: float) -> list[Inline]:
    """Rows of name-first tables on every page, in document order.

    A table needs a header row, or must continue a table of the previous page in the same
    column position (a long table breaks across pages without repeating its header).
    """
    found: list[Inline] = []
    carried: list[float] = []  # name-column x0 of the tables that ran to the previous page's end
    heads: set[str] = set()  # the header rows of the previous page's tables
    for pi, (_w, _h, lines) in enumerate(pages):
        if len(lines) < _MIN_ROWS:
            carried, heads = [], set()
            continue
        cells = sorted(_cells(lines, drop[pi], thr), key=lambda c: c.top)
        used: set[tuple[int, float]] = set()
        now: list[float] = []
        now_heads: set[str] = set()
        page_top = min((ln.top for i, ln in enumerate(lines) if i not in drop[pi]), default=0.0)
        for col in _columns(cells):
            col = [c for c in col if (c.line, c.x0) not in used]
            if len(col) < _MIN_ROWS:
                continue
            if sum(1 for c in col if c.name) < _MIN_ROWS:
                continue
            if sum(1 for c in col if _ROLL.match(c.text)) >= 0.75 * len(col):
                continue  # a roll column: the names are in the next one
            rows = _name_column(col, cells)
            if rows is None:
                continue
            header = _is_header(rows[0])
            if not header and not any(abs(x - col[0].x0) <= 3 for x in carried):
                continue
            numbered = {c.top: roll for c in col
                        if (roll := next((d.text.strip() for d in _left_of(c, cells) if _ROLL.match(d.text)), None))}
            dice = [d.text.strip() for d in _left_of(rows[0][0], cells) if DIE_HEADER.match(d.text.strip())] if header else []
            got = _entries(pi, rows, col, header, numbered, dice[0] if dice else None)
            if header:
                head = _header_text(rows[0])
                now_heads.add(head)
                if head not in heads and rows[0][0].top - page_top < (rows[0][0].bottom - rows[0][0].top) / 2:
                    got = [e._replace(opens_page=Pos(pi, rows[0][0].line)) for e in got]
            found.extend(got)
            used.update((c.line, c.x0) for c in col)
            now.append(col[0].x0)
        carried, heads = now, now_heads
    return found


def _header_text(row: tuple[Cell, list[Cell]]) -> str:
    """A header row's cells as one text ("ITEM COST USAGE DIE"): a long table repeats it on each page."""
    return " ".join(d.text for d in (row[0], *row[1])).lower()


def _entries(pi: int, rows, col: list[Cell], header: bool, numbered: dict[float, str] | None = None,  # type: ignore[no-untyped-def]
             die: str | None = None) -> list[Inline]:
    """One entry per row. `numbered` maps the tops of the name cells with a roll number left of
    them to that number: where most rows have one, a line without one is the rest of the row above
    (its cells wrapped: "in the depth of a" / "dungeon"). Under a `die` header ("d20") a row keeps
    its roll as a field ("d20: 7"): a random table's result (see inline.DIE_HEADER)."""
    numbered = numbered or {}
    tops = [c.top for c, _ in rows]
    by_number = len(numbered) >= 0.75 * len(rows)
    pitch = median(b - a for a, b in itertools.pairwise(tops)) if len(tops) > 1 else 0.0
    out: list[Inline] = []
    out_top: list[float] = []
    first = rows[0]
    by_top = {c.top: r for c, r in rows}
    last_top = rows[-1][0].top
    prev: Cell | None = None
    prev_right: list[Cell] = []
    row_top = -1.0  # the top of the row a wrapped line belongs to
    for c in col:
        if c.top < first[0].top or c.top > last_top + pitch:
            continue
        right = by_top.get(c.top)
        if by_number and prev is not None and c.top not in numbered and 0 < c.top - prev.top < 1.5 * pitch:
            if out and out_top[-1] == row_top:  # the row above is an entry: its text goes on
                last = out[-1]
                more = " ".join(d.text for d in right or [])
                out[-1] = last._replace(title=f"{last.title} {c.text}", body=f"{last.body} {more}".strip())
            prev = c
            continue
        row_top = c.top
        if (
            prev is not None and out and 0 < c.top - prev.top < 0.8 * pitch
            and all(d in prev_right for d in right or [])
            and namelike(f"{out[-1].title} {c.text}")
        ):
            # the second line of a name wrapped in its cell: it shares the row's other cells
            last = out[-1]
            out[-1] = last._replace(title=f"{last.title} {c.text}")
            prev = c
            continue
        prev, prev_right = c, right or []
        if (header and c is first[0]) or not namelike(c.text) or CONTENT_SHAPE.search(c.text):
            continue  # a header, no name, or a stat line ("Hit Points 13 (2d10 + 2)") beside another
        if right is None and (not out or c.top - out_top[-1] < 0.8 * pitch):
            continue
        body = " ".join(d.text for d in right or [])
        if die and c.top in numbered:  # (the roll may be the row's only other cell: "1-2 | free colony")
            rest = "" if body.strip() == numbered[c.top] else body
            body = f"{die}: {numbered[c.top]}; {rest}".rstrip("; ")
        out.append(Inline(Pos(pi, c.line), c.text, body, None, "row"))
        out_top.append(c.top)
    return out


def find_captions(pages, drop, thr: float) -> list[Inline]:
    """Table titles that no bookmark or font size marks ("OUT OF ACTION" above a roll
    table): a short line in capitals at body size, set in from the text's left edge with
    space above it, over a block that is set in as well."""
    found: list[Inline] = []
    for pi, (_w, _h, lines) in enumerate(pages):
        keep = [i for i in range(len(lines)) if i not in drop[pi]]
        if len(keep) < 4:
            continue
        left = median(lines[i].x0 for i in keep)
        for a, i, b in zip(keep, keep[1:], keep[2:], strict=False):
            ln, up, nxt = lines[i], lines[a], lines[b]
            t = ln.text
            if ln.size >= thr or len(t) > 40 or not t.isupper() or len(t.split()) > 5 or ln.col != nxt.col:
                continue
            em = ln.size
            if ln.x0 < left + em or nxt.x0 < left + 0.7 * em or ln.top - up.bottom < 1.2 * em:
                continue
            if nxt.top - ln.bottom > 2.5 * em or up.col != ln.col:
                continue
            if len(ln.cells) >= 2 and _aligned(ln.cells, nxt.cells):
                continue  # the header row of a table ("STR DEX CON"), not its title
            found.append(Inline(Pos(pi, i), " ".join(t.split()), nxt.text, None, "caption"))
    return found


def _aligned(head: tuple, row: tuple) -> bool:
    """Every cell of `head` lines up (left, centre or right edge) with a cell of `row`."""

    def edges(c: tuple) -> tuple[float, float, float]:
        return c[0], (c[0] + c[1]) / 2, c[1]

    return bool(row) and all(
        any(abs(a - b) <= 3 for d in row for a, b in zip(edges(c), edges(d), strict=True)) for c in head
    )
