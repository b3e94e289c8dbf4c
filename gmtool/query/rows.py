"""One row per thing: copies of an entry held by several books fold into the best-ranked one.

A pure function over ranked document ids and the copy/name groups of the keyword index
(rank.copies), so `search` and `ask` fold alike and it is tested without a library.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field


@dataclass
class Row:
    gid: int  # the best-ranked copy, shown
    score: float
    copies: list[int] = field(default_factory=list)  # the same entry in other books (library order)
    duplicate_of: int | None = None  # --all-copies: the first row that shows this entry
    namesake_of: int | None = None  # a higher row with the same title and type but another text


def fold_rows(
    order: Sequence[int],
    scores: Sequence[float],
    copy: Sequence[int],
    name: Sequence[int],
    limit: int,
    all_copies: bool = False,
    groups: Mapping[int, list[int]] | Sequence[list[int]] | None = None,
    precision: Sequence[int] | None = None,
    allowed: Callable[[int], bool] | None = None,
) -> list[Row]:
    """Rows for the ranked documents `order`: at most `limit`, copies folded unless `all_copies`.
    `groups` (copy group -> its documents, library order; see copy_members) saves a pass over
    every document when the caller keeps them. With `precision` (per document, lower is more
    precise; see location_precision), a folded row shows the copy with the most precise location,
    then the best-ranked; `allowed` keeps the shown copy within the filters."""
    members = groups
    if members is None:
        wanted = {copy[g] for g in order if copy[g] >= 0}
        members = copy_members(copy, wanted) if wanted else {}
    rank = {g: i for i, g in enumerate(order)}
    first_of_copy: dict[int, int] = {}
    first_of_name: dict[int, tuple[int, int]] = {}  # name group -> (copy group or -gid-1, first row's gid)
    rows: list[Row] = []
    for gid, score in zip(order, scores, strict=True):
        if len(rows) >= limit:
            break
        c, n = copy[gid], name[gid]
        if c >= 0 and c in first_of_copy and not all_copies:
            continue
        shown = gid
        if c >= 0 and not all_copies and precision is not None:
            shown = _openable(members[c], rank, precision, allowed, gid)
        row = Row(shown, float(score))
        if c >= 0:
            row.copies = [g for g in members[c] if g != shown]
            if c in first_of_copy:
                row.duplicate_of = first_of_copy[c]
            else:
                first_of_copy[c] = shown
        if n >= 0:
            ident = c if c >= 0 else -gid - 1
            seen = first_of_name.setdefault(n, (ident, shown))
            if seen[0] != ident:
                row.namesake_of = seen[1]
        rows.append(row)
    return rows


# How precisely a copy's location points at it (lower is better). A chapter file of a folder book and
# its line: a short file, named for its chapter, at the line. A PDF page: `open` jumps to it. A line of
# a one-file Markdown or text book: a line among thousands, and `open` cannot jump there.
CHAPTER_LINE, PDF_PAGE, FILE_LINE = 0, 1, 2


def location_precision(page: int | None, in_folder_book: bool) -> int:
    if in_folder_book:
        return CHAPTER_LINE
    return PDF_PAGE if page is not None else FILE_LINE


def _openable(
    group: list[int], rank: Mapping[int, int], precision: Sequence[int], allowed: Callable[[int], bool] | None,
    best: int,
) -> int:
    """The copy to show: the most precise location first (see location_precision), then by rank
    (copies the ranking did not reach come last, in library order)."""
    unranked = len(rank)
    pool = [g for g in group if allowed is None or allowed(g)] or [best]
    return min(pool, key=lambda g: (precision[g], rank.get(g, unranked), g))


def copy_members(copy: Sequence[int], wanted: set[int] | None = None) -> dict[int, list[int]]:
    """Copy group -> its documents in library order (only the `wanted` groups, when given)."""
    members: dict[int, list[int]] = {}
    for gid, c in enumerate(copy):
        if c >= 0 and (wanted is None or c in wanted):
            members.setdefault(c, []).append(gid)
    return members
