"""pandoc's simple and multiline tables, read as pipe tables.

Markdown made by pandoc from a word-processor file (a common way an SRD reaches Markdown) lays tables
out in columns of spaces under a rule of dash groups, one group per column:

      -----------------------------------------------
      Armor Type        Base AC        Atk Penalty
      ----------------- -------------- --------------
      None              10             ---

      Shield            +1             --2
      -----------------------------------------------

Read as plain Markdown, a row followed by the closing rule is a setext heading ("Shield +1 --2") and
the other rows are paragraphs. Here each such table becomes pipe rows (header, separator, one row per
table row, a multiline table's row joined across its lines), written at the top of the table's lines;
the rest of those lines are left blank, so the file's line count is unchanged and `mdrows` reads the
rows like any pipe table's.
"""

from __future__ import annotations

import re

# the rule under the header: two or more dash groups parted by spaces, one per column
_COLUMNS = re.compile(r"^( *)(-{2,}(?: +-{2,})+) *$")
# a multiline table's opening and closing rule: one run of dashes
_FULL_RULE = re.compile(r"^ {0,3}-{8,} *$")
# how far a multiline table's rows may run before its closing rule
MAX_TABLE_LINES = 600


def has_tables(text: str) -> bool:
    return "-- --" in text or "--  --" in text


def as_pipes(lines: list[str]) -> list[str]:
    """`lines` with every pandoc simple or multiline table (with a header) rewritten as pipe rows."""
    out = lines
    i = 0
    while i < len(lines):
        m = _COLUMNS.match(lines[i]) if "-- " in lines[i] else None
        found = _table_at(lines, i, m) if m else None
        if found is None:
            i += 1
            continue
        start, end, rows = found
        if out is lines:
            out = list(lines)
        pipes = ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in rows]
        pipes.insert(1, "| " + " | ".join("---" for _ in rows[0]) + " |")
        out[start:end] = pipes + [""] * (end - start - len(pipes))
        i = end
    return out


def _table_at(lines: list[str], rule: int, m: re.Match[str]) -> tuple[int, int, list[list[str]]] | None:
    """(first line, one past the last line, [header cells, row cells...]) of the table whose
    column rule is line `rule`; None when it has no header or no rows."""
    spans = [(g.start(), g.end()) for g in re.finditer(r"-+", m.group(0))]
    top = rule
    while top > 0 and lines[top - 1].strip() and not _FULL_RULE.match(lines[top - 1]):
        top -= 1
    if top == rule:
        return None  # no header: a rule of its own
    multiline = top > 0 and bool(_FULL_RULE.match(lines[top - 1]))
    header = [lines[top:rule]]
    rows, end = (_multiline_rows(lines, rule + 1) if multiline else None) or _simple_rows(lines, rule + 1)
    if not rows:
        return None
    cells = [_cells(group, spans) for group in header + rows]
    return (top - 1 if multiline else top), end, cells


def _simple_rows(lines: list[str], at: int) -> tuple[list[list[str]], int]:
    """One row a line, up to a blank line (a closing column rule is the table's too)."""
    rows: list[list[str]] = []
    i = at
    while i < len(lines) and lines[i].strip() and not _COLUMNS.match(lines[i]):
        rows.append([lines[i]])
        i += 1
    if i < len(lines) and lines[i].strip() and _COLUMNS.match(lines[i]):
        i += 1
    return rows, i


def _multiline_rows(lines: list[str], at: int) -> tuple[list[list[str]], int] | None:
    """Rows parted by blank lines, up to the closing rule; None when there is none."""
    rows: list[list[str]] = []
    cur: list[str] = []
    for i in range(at, min(len(lines), at + MAX_TABLE_LINES)):
        line = lines[i]
        if _FULL_RULE.match(line):
            if cur:
                rows.append(cur)
            return rows, i + 1
        if line.strip():
            cur.append(line)
        elif cur:
            rows.append(cur)
            cur = []
    return None


def _cells(group: list[str], spans: list[tuple[int, int]]) -> list[str]:
    """A row's cells: each column's text from its start to the next column's start, across the
    row's lines."""
    starts = [s for s, _ in spans]
    out = []
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else None
        out.append(" ".join(" ".join(line[s:e].split()) for line in group if line[s:e].strip()))
    return out
