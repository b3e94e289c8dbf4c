"""Repeated labels out of the tree: a short title printed as its own heading again and again
("Bonds", "Alignment", "Look" under every class) names a slot of a template, not a place to
look something up. Such a leaf is folded into its parent: its title and text join the
parent's body, so the words stay searchable there.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Container

from gmtool.types import Entry

_NORM = re.compile(r"[^a-z0-9]+")
# how often a short leaf title must repeat in one book to count as a template label
_REPEATS = 5
_MAX_WORDS = 3


def _norm(s: str) -> str:
    return _NORM.sub(" ", s.lower()).strip()


_HEADINGS = ("outline", "heading", "markdown")  # entries made from headings, not from names in the text


def fold_labels(entries: list[Entry], leaves_only: bool = False) -> list[Entry]:
    """`leaves_only` (Markdown, whose headings are exact): a label with headings below it stays,
    since in Markdown "Class Features" over "Hit Points", "Proficiencies" is structure, not a slot."""
    n = len(entries)
    has_kids = [False] * n
    for e in entries:
        if e.parent is not None and e.origin in _HEADINGS:
            has_kids[e.parent] = True
    counts = Counter(_norm(e.title) for e in entries if e.origin in _HEADINGS)
    kids: dict[int, list[int]] = {}
    for k, e in enumerate(entries):
        if e.parent is not None and e.origin in _HEADINGS:
            kids.setdefault(e.parent, []).append(k)
    fold: set[int] = set()

    def label(k: int, need: int) -> bool:
        e = entries[k]
        return e.origin in _HEADINGS and counts[_norm(e.title)] >= need and len(e.title.split()) <= _MAX_WORDS

    # a label folds with its children when they are labels too ("Alignment" > "Good", "Evil")
    for k in range(n - 1, -1, -1):
        if entries[k].parent is None or not label(k, _REPEATS):
            continue
        ch = kids.get(k, [])
        if leaves_only and ch:
            continue
        if all(c in fold or (not has_kids[c] and label(c, 2)) for c in ch):
            fold.add(k)
            fold.update(ch)
    if not fold:
        return entries

    def absorb(par: Entry, e: Entry) -> None:
        par.body = "\n".join(x for x in (par.body, e.title, e.body) if x)
        par.end_page = max(par.end_page, e.end_page)

    return _drop(entries, fold, lambda p: entries[p].parent, absorb)


def merge_twins(entries: list[Entry]) -> list[Entry]:
    """A bookmark and the heading detected for the same place (same title, next to each
    other, same or next page) are one entry: the bookmark's title and level are kept, the
    bodies joined, and the heading's children move to it."""
    n = len(entries)
    into: dict[int, int] = {}
    for k in range(n - 1):
        a, b = entries[k], entries[k + 1]
        if k in into or {a.origin, b.origin} != {"outline", "heading"} or abs((a.page or 0) - (b.page or 0)) > 1:
            continue
        if _norm(a.title) != _norm(b.title) or not _norm(a.title):
            continue
        keep, gone = (k, k + 1) if a.origin == "outline" else (k + 1, k)
        ke, ge = entries[keep], entries[gone]
        ke.body = "\n".join(x for x in ((a.body, b.body)) if x)
        ke.page = min(a.page or 0, b.page or 0)  # PDF entries always have a page
        ke.end_page = max(a.end_page, b.end_page)
        if keep > gone:
            ke.parent = ge.parent
            ke.level = ge.level
        into[gone] = keep
    if not into:
        return entries
    return _drop(entries, into, into.__getitem__)


def _drop(entries: list[Entry], dropped: Container[int], redirect: Callable[[int], int | None],
          absorb: Callable[[Entry, Entry], None] | None = None) -> list[Entry]:
    """The entries without the `dropped` ones, re-indexed. A child of a dropped entry moves to
    `redirect(parent)` (again while that is dropped too); a dropped entry is handed to
    `absorb(new parent, entry)` when there is one. Levels follow the new tree."""
    out: list[Entry] = []
    new_index: dict[int, int] = {}
    for k, e in enumerate(entries):
        p = e.parent
        while p is not None and p in dropped:
            p = redirect(p)
        if k in dropped:
            if absorb is not None and p is not None:
                absorb(out[new_index[p]], e)
            continue
        e.parent = new_index.get(p) if p is not None else None
        new_index[k] = len(out)
        out.append(e)
    for e in out:
        e.level = out[e.parent].level + 1 if e.parent is not None else 1
    return out
