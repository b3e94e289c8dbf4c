"""Rows of name-first Markdown tables as entries (the Markdown side of `extract.tables`).

A pipe table (or a raw `<table>`, which `mdmarkup.prepare` has turned into pipe rows) is a
list of things when its first column holds short distinct names: weapons, gear, creatures by
level. A leading column of numbers or dice ranges is a roll column, and the name column is the
one after it. Tables whose first column is numbers, sentences or repeated labels give nothing.
"""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple

from gmtool.index import genre
from gmtool.index.extract import mdmarkup
from gmtool.index.extract.inline import DIE_HEADER, namelike, norm
from gmtool.index.lists import field_meaning
from gmtool.types import Entry

# A table's delimiter row: cells of dashes, each perhaps with an alignment colon (":--", ":-:", "---").
TABLE_SEP = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_ROLL = re.compile(r"^(\d*d\d+|\d+(\s*[-\u2013]\s*\d+)?\+?|[-\u2013])$", re.IGNORECASE)
# A number in a name column's cell: cells that differ only in theirs ("TL 7", "TL 8"; "+9 vs. AC", "+10 vs.
# AC"; "+1 level", "+2 levels") are the steps of a scale, not names of things.
_NUMBER = re.compile(r"[+\-\u2013]?\d+(?:[.,/]\d+)*")
# A name column headed by a scale ("Level | Cost | Impact" over "Marginal", "Minor", "Major"): its cells are
# the scale's steps, not things.
_SCALE = re.compile(r"^(?:levels?|ranks?|tiers?|degrees?|grades?)$", re.IGNORECASE)
# A list needs a few members; two rows are as often a key/value box as a list. Fitted on
# md-more (its named gear tables have 3+ rows); the PDF side asks for four (extract.tables).
_MIN_ROWS = 3
# Most first cells must be names: a table of rules text with the odd short cell is not a list.
_MIN_NAME_SHARE = 0.75
# A field's name or value in a table that prints one thing's fields is short ("Armor Class", "40 ft.").
FIELD_CHARS = 24


class Row(NamedTuple):
    idx: int  # line index
    name: str
    body: str


def _is_row(line: str) -> bool:
    if "|" not in line:  # most lines: no need to strip them
        return False
    s = line.strip()
    return s.startswith("|") or (s.endswith("|") and s.count("|") >= 2)


def _raw_cells(line: str) -> list[str]:
    """A pipe row's cells as written, markup and all."""
    return line.strip().strip("|").split("|")


def _cells(line: str) -> list[str]:
    return [" ".join(mdmarkup.inline_text(mdmarkup.ESCAPED.sub(r"\1", c)).replace("*", "").replace("_", " ").split())
            for c in _raw_cells(line)]


def _blocks(lines: list[str], start: int) -> list[list[int]]:
    out: list[list[int]] = []
    cur: list[int] = []
    for i in range(start, len(lines)):
        if _is_row(lines[i]):
            cur.append(i)
        elif cur:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def _table(lines: list[str], block: list[int], heading: str = "") -> list[Row]:
    """The rows of one table that name things (see the module docstring); `heading`: the title of the
    heading above it."""
    if len(block) < _MIN_ROWS + 1:
        return []
    seps = {i for i in block if TABLE_SEP.match(lines[i])}
    by_line = {i: _cells(lines[i]) for i in block if i not in seps}  # each line's cells, once
    block = [i for i in block if i in seps or any(by_line[i])]
    header: list[str] = []
    data = block
    if len(block) > 1 and block[1] in seps:
        header, data = by_line.get(block[0], []), block[2:]
    elif len(block) > 1:  # a raw HTML table: its first row is the header
        header, data = by_line.get(block[0], []), block[1:]
    if not any(header) and data and data[0] not in seps and _bold_row(lines[data[0]]):
        header, data = by_line[data[0]], data[1:]  # a blank header row, the real one bold below it
    rows = [(i, by_line[i]) for i in data if i not in seps]
    if len(rows) < _MIN_ROWS:
        return []
    col = _roll_columns([c for _, c in rows])
    halves = _halves(rows, col, header)
    rows = halves or rows
    # a random table printed in two halves has no values beside its names: its rows name things when the
    # name column's header or the heading above the table says what they are ("d20 | Background", a table
    # under "Background"), else ideas to roll for ("1 | Athletic | 6 | Scrawny" under "Physique")
    alone_ok = bool(halves) and (genre.header_type(header[col] if len(header) > col else "") is not None
                                 or genre.context_of(norm(heading), singular=True) is not None)
    names = [c[col] if len(c) > col + 1 or (len(c) == col + 1 and alone_ok) else "" for _, c in rows]
    for k, ((i, c), n) in enumerate(zip(rows, names, strict=True)):
        # "**Molotov Cocktail** (sets area alight, causing d6 continued damage until put out)", too long for a
        # name: the bold lead is the name and the rest its text, which is then all the row needs beside it
        # ("5 | **Mirror World:** Everything seemed okay at first…")
        lead = _bold_lead(lines[i], col) if len(c) > col and not halves and not namelike(n) else None
        if lead is not None:
            names[k], rows[k] = lead[0], (i, [*c[:col], lead[1], *c[col + 1:]])
    if _steps(names) or (len(header) > col and _SCALE.match(header[col])):
        return []  # a key column of one scale's steps (a technology level, a rank): a progression, no list
    good = [n for n in names if namelike(n)]
    if len(good) < _MIN_NAME_SHARE * len(rows) or len({norm(n) for n in good}) < len(good):
        return []
    labelled = sum(_field_label(n.rstrip(":")) for n in names)
    if labelled >= 2 and 3 * labelled >= len(rows):
        return []  # a stat table with a column per thing ("Armor Class", "Hit Dice" down the side): no list
    die = col >= 1 and bool(header) and bool(DIE_HEADER.match(header[0]))
    out = []
    for (i, cells), name in zip(rows, names, strict=True):
        if not namelike(name):
            continue
        rest = cells[col] if cells[col] != name else ""  # the rest of a bold-led name cell
        pairs = [rest] if rest else []
        pairs += [f"{h}: {v}" if h else v for h, v in zip(header[col + 1:] or [""] * len(cells), cells[col + 1:],
                                                           strict=False) if v]
        if die:  # the roll that picks it: a random table's row names an idea to roll for (genre.roll_result)
            pairs[:0] = [f"{h}: {v}" for h, v in zip(header[:col], cells[:col], strict=False)]
        elif col:  # numbers before the name are its values ("HP | Pips | Background")
            pairs[:0] = [f"{h}: {v}" for h, v in zip(header[:col], cells[:col], strict=False) if h and v]
        out.append(Row(i, name, name + "\n" + "; ".join(pairs)))
    return out


# A bold name, then its text: in parentheses, or after a colon or full stop inside or right after the bold
# ("**Stims** (immediate recovery…)", "**Mirror World:** Everything seemed okay at first…").
_BOLD_LEAD = re.compile(r"^\s*(\*\*|__)([^*_|]{2,48}?)([.:])?\1\s*(\(.*|(?(3)|[.:])\s*\S.*)$")


def _bold_lead(line: str, col: int) -> tuple[str, str] | None:
    """(name, rest) of a row's name cell that opens with a bold name and goes on with its description, in
    parentheses or as a run-in's text: the rest describes the thing the bold name names."""
    raw = _raw_cells(line)
    m = _BOLD_LEAD.match(raw[col]) if len(raw) > col else None
    if m is None:
        return None
    name = " ".join(mdmarkup.inline_text(m.group(2)).split())
    rest = " ".join(mdmarkup.inline_text(m.group(4).lstrip(".:")).replace("*", "").split())
    return (name, rest) if namelike(name) else None


def _roll_columns(cells: list[list[str]]) -> int:
    """How many leading columns hold only rolls or numbers ("d6 | d6 | Background", "HP | Pips |
    Background"): the name column is the one after them."""
    n = 0
    while cells and all(len(c) > n + 1 and _ROLL.match(c[n]) for c in cells):
        n += 1
    return n


def _halves(rows: list[tuple[int, list[str]]], col: int, header: list[str]) -> list[tuple[int, list[str]]]:
    """The rows of a random table printed in two halves side by side ("1 | Aurifex | 11 | Half-Witch"),
    each half's row on its own; [] for any other table. The halves are known by every row repeating its
    roll columns after its name (the right half's last rows may be empty), under a header that repeats
    the left half's or leaves the right half blank."""
    width = col + 1
    if col == 0 or any(len(c) != 2 * width for _, c in rows):
        return []
    if any(header[width:]) and [norm(h) for h in header[width:]] != [norm(h) for h in header[:width]]:
        return []
    right = [(i, c[width:]) for i, c in rows if any(c[width:])]
    if len(right) < _MIN_ROWS or _roll_columns([c for _, c in right]) != col:
        return []
    return [(i, c[:width]) for i, c in rows] + right


def _steps(names: list[str]) -> bool:
    """Whether a column's cells are one scale's steps: each holds a number, and they differ in nothing else."""
    shapes = {_NUMBER.sub("#", n).lower().rstrip("s") for n in names}
    return len(shapes) == 1 and "#" in next(iter(shapes))


_BOLD_CELL = re.compile(r"^(\*\*|__)[^*_]+\1$")


def _bold_row(line: str) -> bool:
    """Every filled cell set in bold: a header row that a converter wrote below an empty one."""
    cells = [c.strip() for c in _raw_cells(line) if c.strip()]
    return len(cells) >= 2 and all(_BOLD_CELL.match(c) for c in cells)


def _field_label(text: str) -> bool:
    """A short cell that a stat block uses as a field's name ("Armor Class", "HP", "Attack")."""
    return len(text) <= FIELD_CHARS and len(text.split()) <= 3 and field_meaning(text) is not None


def _as_fields(lines: list[str], block: list[int]) -> list[str] | None:
    """One pipe table's lines as "label: value" lines when it prints one thing's fields, else None:
    two columns whose labels are, a third of them or more, ones a stat block uses ("| Armor Class | 13 |",
    "| Hit Points | 42 |", "| Senses | darkvision |"),
    or one row of short values under a header of labels ("| AC | HP | Speed |" over "| 13 | 42 | 40 ft. |").
    Its rows are then the section's fields, not things of their own."""
    if len(block) < 3 or not TABLE_SEP.match(lines[block[1]]):
        return None
    header = _cells(lines[block[0]])
    rows = [_cells(lines[i]) for i in block[2:]]
    # two columns, a label and its value (more value columns compare several things: a column each); a
    # Markdown table needs a header row, and one of two fields ("| Armor Class | 15 |") is a field too
    first = len([c for c in header if c]) == 2 and _field_label(header[0].rstrip(":"))
    pairs = [header, *rows] if first else rows
    column = len(pairs) >= 2 and all(len([c for c in r if c]) == 2 and r[0] for r in pairs)
    labelled = sum(_field_label(r[0].rstrip(":")) for r in pairs) if column else 0
    if labelled >= 2 and 3 * labelled >= len(pairs):
        shown = [f"{r[0].rstrip(':')}: " + "; ".join(v for v in r[1:] if v) for r in pairs]
        return [shown[0], "", *shown[1:]] if first else ["", "", *shown]
    record = len(rows) == 1 and len(header) == len(rows[0]) >= 2 and all(header)
    if record and any(map(_field_label, header)) and all(0 < len(v) <= FIELD_CHARS for v in rows[0]):
        return ["", "", "; ".join(f"{h}: {v}" for h, v in zip(header, rows[0], strict=True))]
    return None


def field_tables(lines: list[str], start: int) -> list[str]:
    """`lines` with every table that prints one thing's fields (see _as_fields) rewritten in place,
    line for line, so the fields read as a stat block's lines and the rows are not entries."""
    out = lines
    for block in _blocks(lines, start):
        fields = _as_fields(lines, block)
        if fields is not None:
            if out is lines:
                out = list(lines)
            for i, text in zip(block, fields + [""] * (len(block) - len(fields)), strict=True):
                out[i] = text
    return out


def table_rows(lines: list[str], start: int, heading_idx: list[int]) -> list[Row]:
    """Rows that name things, in line order, from every table after line `start` that no heading interrupts."""
    heads = set(heading_idx)
    ordered = sorted(heading_idx)
    out: list[Row] = []
    for block in _blocks(lines, start):
        if heads.intersection(block):
            continue
        at = bisect.bisect_left(ordered, block[0])
        heading = _HEADING_MARKS.sub("", lines[ordered[at - 1]]) if at else ""
        out.extend(_table(lines, block, mdmarkup.inline_text(heading)))
    return out


_HEADING_MARKS = re.compile(r"^[\s>]*#*\s*|\s*#+\s*$")


def drop_index_rows(entries: list[Entry]) -> list[Entry]:
    """Without the rows that only repeat a heading's name: a glossary table listing every spell
    again is an index of the book, not a second "Fireball". Rows have no children, so only the
    parents after a dropped row move."""
    heads = {norm(e.title) for e in entries if e.origin != "row"}
    drop = [e.origin == "row" and norm(e.title) in heads for e in entries]
    _give_values(entries, drop)
    return without(entries, drop)


def _give_values(entries: list[Entry], drop: list[bool]) -> None:
    """A run-in that describes a row of a table in its section ("**Bioscanner:** The bioscanner
    sniffs…" beside "| Bioscanner | 15 | Cr350,000 |") takes the row's values as its last line: they
    are its own (a price, a weight), and with them it reads, and is typed, as what it is."""
    by_name: dict[str, list[int]] = {}
    for k, e in enumerate(entries):
        if e.origin == "runin":
            by_name.setdefault(norm(e.title), []).append(k)
    for k, e in enumerate(entries):
        got = by_name.get(norm(e.title)) if drop[k] else None
        if got is None or len(got) != 1 or entries[got[0]].parent != e.parent:
            continue
        values = e.body.split("\n", 1)[1].strip() if "\n" in e.body else ""
        if values:
            entries[got[0]].body = f"{entries[got[0]].body}\n{values}"


def without(entries: list[Entry], drop: list[bool]) -> list[Entry]:
    """`entries` less those marked in `drop` (leaves: no entry's parent is dropped), parents renumbered."""
    if not any(drop):
        return entries
    new_index: list[int] = []
    n = 0
    for d in drop:
        new_index.append(n)
        n += not d
    out = []
    for e, d in zip(entries, drop, strict=True):
        if not d:
            e.parent = new_index[e.parent] if e.parent is not None else None
            out.append(e)
    return out
