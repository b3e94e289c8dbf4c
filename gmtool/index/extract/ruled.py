"""Rows of ruled tables (every cell boxed or lined) as entries, found by pdfplumber's table finder.

The gap-based finder in tables.py reads a table from its text alone; where a table is ruled,
the rules say exactly where each row and cell ends, which text alone cannot when a name or a
note wraps inside its cell ("Hooked Glaive of the River" / "Wardens"). pdfplumber's
TableFinder (edge snapping and joining, intersections, cells, tables) is run with the
"explicit" strategy on the rule and box outlines that pypdfium2 already reported while the
page was read (`PageLines.rules`), so pdfminer never parses the page: the finder costs
about a millisecond on a page that has a grid of rules, and nothing on the others. The cell
text comes from the page's own laid-out lines.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from gmtool.index.extract.inline import Inline, Pos, namelike
from gmtool.index.extract.pdf_layout import Line

# a rule is at most this thick (points); a box thinner than this on one side is a line
_THIN = 2.5
# distinct rule positions a grid needs on each axis: two columns have three vertical rules
_MIN_AXIS = 3
# rows of a table, header included, before its rows are entries (as in tables.py)
_MIN_ROWS = 4
# share of the body rows whose first cell must read as a name
_NAME_SHARE = 0.75
# rule pairs the crossing test looks at before it gives up (a page of hatching is no table)
_MAX_PAIRS = 20_000
_ROLL = re.compile(r"^(\d*d\d+|\d+(\s*[-\u2013]\s*\d+)?\+?|[-\u2013])$", re.IGNORECASE)


class _Frame:
    """What TableFinder reads of a page under the "explicit" strategy with objects: its box."""

    def __init__(self, width: float, height: float) -> None:
        self.bbox = (0.0, 0.0, width, height)


def _crossings(hs: list[tuple], vs: list[tuple]) -> int:
    """Vertical rules that cross (or touch) at least three horizontal ones."""
    n = 0
    for x, y0, y1 in vs:
        hits = sum(1 for y, x0, x1 in hs if x0 - _THIN <= x <= x1 + _THIN and y0 - _THIN <= y <= y1 + _THIN)
        n += hits >= _MIN_AXIS
    return n


def _touching(boxes: list[tuple]) -> int:
    """Boxes with another box of the same height right beside them: cells drawn one by one."""
    boxes = sorted(boxes, key=lambda b: (round(b[1]), b[0]))
    return sum(
        1 for a, b in itertools.pairwise(boxes)
        if abs(a[1] - b[1]) <= _THIN and abs(a[3] - b[3]) <= _THIN and abs(a[2] - b[0]) <= _THIN
    )


def may_be_grid(rules: tuple) -> bool:
    """A grid of rules: long rules crossing each other, or cell boxes side by side in rows.
    The cheap test that decides whether the table finder runs on a page: shading bands,
    frames and ornaments (most pages with paths) have neither."""
    if len(rules) < _MIN_AXIS:
        return False
    hs: list[tuple] = []
    vs: list[tuple] = []
    boxes: list[tuple] = []
    for x0, top, x1, bottom in rules:
        w, h = x1 - x0, bottom - top
        if h <= _THIN and w > _THIN:
            hs.append((top, x0, x1))
        elif w <= _THIN and h > _THIN:
            vs.append((x0, top, bottom))
        elif w > _THIN and h > _THIN:
            boxes.append((x0, top, x1, bottom))
    if _touching(boxes) >= _MIN_ROWS:
        return True
    return len(hs) >= _MIN_AXIS and len(vs) >= _MIN_AXIS and len(hs) * len(vs) <= _MAX_PAIRS and _crossings(hs, vs) >= _MIN_AXIS


def _ruled_header(lines: list[Line], rules: tuple) -> bool:
    """A header line (several short cells, no numbers) with a rule just above and just below
    it: a ruled table of named things starts here. Shaded bands and stat-block bars leave
    their header lines unruled, so the finder does not run for them."""
    heads = [ln for ln in lines if len(ln.cells) >= 2 and _is_header([c[2] for c in ln.cells])]
    if not heads:
        return False
    edges = [(top, x0, x1) for x0, top, x1, _b in rules] + [(b, x0, x1) for x0, _t, x1, b in rules]
    for ln in heads:
        near = [y for y, x0, x1 in edges if x0 - _THIN <= ln.x0 < x1]  # over its first cell
        if any(ln.top - ln.size <= y <= ln.top + 1 for y in near) and any(
            ln.bottom - 1 <= y <= ln.bottom + ln.size for y in near
        ):
            return True
    return False


def _rect(box: tuple, height: float) -> dict[str, Any]:
    x0, top, x1, bottom = box
    return {
        "object_type": "rect", "x0": x0, "x1": x1, "top": top, "bottom": bottom, "doctop": top,
        "width": x1 - x0, "height": bottom - top, "y0": height - bottom, "y1": height - top,
    }


def table_grids(rules: tuple, width: float, height: float) -> list[list[list[tuple | None]]]:
    """Tables on the page as rows of cell boxes (x0, top, x1, bottom), None for a merged cell."""
    from pdfplumber.table import TableFinder

    objs = [_rect(b, height) for b in rules]
    settings = {
        "vertical_strategy": "explicit", "horizontal_strategy": "explicit",
        "explicit_vertical_lines": objs, "explicit_horizontal_lines": objs,
    }
    finder = TableFinder(_Frame(width, height), settings)  # type: ignore[arg-type]
    return [[list(row.cells) for row in table.rows] for table in finder.tables]


def _fragments(lines: list[Line], skip: set[int]) -> list[tuple[int, float, float, float, str]]:
    """(line index, x centre, y centre, top, text) of every gap-separated piece of text."""
    out = []
    for i, ln in enumerate(lines):
        if i in skip:
            continue
        mid = (ln.top + ln.bottom) / 2
        for x0, x1, text in ln.cells or ((ln.x0, ln.x1, ln.text),):
            out.append((i, (x0 + x1) / 2, mid, ln.top, text))
    return out


def _cell_text(frags: list, box: tuple | None) -> tuple[str, int | None]:
    """The text inside a cell box, in reading order, and the line its first piece is on."""
    if box is None:
        return "", None
    x0, top, x1, bottom = box
    inside = sorted((f for f in frags if x0 <= f[1] <= x1 and top <= f[2] <= bottom), key=lambda f: (f[3], f[1]))
    return " ".join(" ".join(f[4] for f in inside).split()), (inside[0][0] if inside else None)


def _is_header(texts: list[str]) -> bool:
    return all(not re.search(r"\d", t) and len(t.split()) <= 3 for t in texts if t) and any(texts)


def _name_rows(cells: list[list[tuple[str, int | None]]]) -> tuple[int, list[list[tuple[str, int | None]]]] | None:
    """(name column, body rows) of a name-first table with a header row, or None."""
    if len(cells) < _MIN_ROWS or min(len(r) for r in cells) < 2 or not _is_header([t for t, _ in cells[0]]):
        return None
    body = cells[1:]
    col = 0
    if sum(1 for r in body if _ROLL.match(r[0][0])) >= _NAME_SHARE * len(body) and len(cells[0]) > 2:
        col = 1  # a roll table: the names follow the roll column
    names = [r[col][0] for r in body]
    if sum(1 for t in names if t and namelike(t)) < _NAME_SHARE * len(body):
        return None
    nxt = [r[col + 1][0] for r in body if col + 1 < len(r)]
    if sum(1 for t in nxt if namelike(t, 4) and t[:1].isupper()) >= 0.7 * len(nxt):
        return None  # a list of names set in columns, not a table of things
    return col, body


def find_ruled_rows(pages, rules: list[tuple], drop, thr: float) -> tuple[list[Inline], set[Pos]]:
    """Rows of name-first ruled tables, and every line position inside such a table (the
    text-only finders leave those lines to this one)."""
    found: list[Inline] = []
    covered: set[Pos] = set()
    for pi, (w, h, lines) in enumerate(pages):
        if pi >= len(rules) or not _ruled_header(lines, rules[pi]) or not may_be_grid(rules[pi]):
            continue
        frags = _fragments(lines, drop[pi] | {i for i, ln in enumerate(lines) if ln.size >= thr})
        for grid in table_grids(rules[pi], w, h):
            if len(grid) < _MIN_ROWS or not _is_header([_cell_text(frags, box)[0] for box in grid[0]]):
                continue  # most grids are boxes, stat blocks or roll tables: no header of names
            cells = [[_cell_text(frags, box) for box in row] for row in grid]
            named = _name_rows(cells)
            if named is None:
                continue
            col, body = named
            for row in body:
                name, at = row[col]
                if at is None or not namelike(name):
                    continue
                rest = " ".join(t for k, (t, _) in enumerate(row) if k != col and t)
                found.append(Inline(Pos(pi, at), name, rest, None, "row"))
            covered.update(Pos(pi, at) for row in cells for _t, at in row if at is not None)
            covered.update(_lines_in(lines, grid, pi))
    return found, covered


def _lines_in(lines: list[Line], grid: list[list[tuple | None]], pi: int) -> set[Pos]:
    boxes = [b for row in grid for b in row if b is not None]
    x0, top = min(b[0] for b in boxes), min(b[1] for b in boxes)
    x1, bottom = max(b[2] for b in boxes), max(b[3] for b in boxes)
    return {
        Pos(pi, i) for i, ln in enumerate(lines)
        if x0 - 1 <= ln.x0 and ln.x1 <= x1 + 1 and top - 1 <= ln.top and ln.bottom <= bottom + 1
    }
