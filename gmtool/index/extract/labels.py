"""Repeated labels out of the tree: a short title printed as its own heading again and again
("Bonds", "Alignment", "Look" under every class) names a slot of a template, not a place to
look something up. Such a leaf is folded into its parent: its title and text join the
parent's body, so the words stay searchable there.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Container

from gmtool.types import INLINE_ORIGINS, Entry

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

    return _drop(entries, fold, lambda p: entries[p].parent, lambda par, e: _join_into(par, e, e.title, e.body))


def _join_into(par: Entry, e: Entry, *texts: str) -> None:
    """A folded entry's `texts` follow its new parent's own text, and the parent spans its pages."""
    par.body = "\n".join(x for x in (par.body, *texts) if x)
    par.end_page = max(par.end_page, e.end_page)


def drop_template_rows(entries: list[Entry]) -> list[Entry]:
    """A table row whose first cell names the same slot in table after table ("Hit Point Die",
    "Saving Throw Proficiencies" in every class's key-value table) is a field of a template, not a
    thing to look up: out of the tree. Its text stays where its table is, in its parent's body."""
    parents: dict[str, set[int | None]] = {}
    for e in entries:
        if e.origin == "row":
            parents.setdefault(_norm(e.title), set()).add(e.parent)
    slots = {t for t, ps in parents.items() if len(ps) >= _REPEATS}
    if not slots:
        return entries
    dropped = {k for k, e in enumerate(entries) if e.origin == "row" and _norm(e.title) in slots}
    return _drop(entries, dropped, lambda p: entries[p].parent)


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


# A field label printed with its value at the start of a line or after a comma: "Challenge 7 (2,900 XP)",
# "Armor Class 12", "STR 14", "Range: 50 feet". The label is one or two capitalised words.
_FIELD = re.compile(r"(?:^|[,;]\s+)([A-Z][A-Za-z]*(?: [A-Za-z]+)?)(?::\s*\S|\s+[+\-\u2212]?\d)", re.MULTILINE)
# entries (besides the one judged and its parent) that must print a label with a value before it is
# a field of the book: one stat block could be prose that happens to start "Level 3 ..."
_FIELD_SEEN = 3
# a label's text is its value: a number, or a few words ("Touch", "Saltglass Gazer."); a heading over
# a sentence or more explains a rule ("Speed: a monster's speed tells you...") and stays
_VALUE_WORDS = 6
_TITLE_VALUE = re.compile(r"^(.+?)(?:\s+[+\-\u2212]?\d+)?$")
_STARTS_NUMBER = re.compile(r"^[+\-\u2212]?\d")


def _field_labels(entries: list[Entry]) -> dict[str, set[int]]:
    """Each label the book prints with a value, and the entries that print it so."""
    seen: dict[str, set[int]] = {}
    for k, e in enumerate(entries):
        for m in _FIELD.finditer(e.body):
            seen.setdefault(_norm(m.group(1)), set()).add(k)
    return seen


def _is_field_label(k: int, e: Entry, fields: dict[str, set[int]]) -> bool:
    """`e` is titled by a field of the book's own stat lines ("Challenge 2", "Con", "Range"), alone
    or with a number, and its text is a value, not a section: a label, not a place to look up."""
    if e.origin in ("row", "outline"):
        # a row's first cell is the table's name column, its value cells are no evidence; a bookmark
        # is the author's own entry ("Traits" of an appendix, though character sheets print "Traits:")
        return False
    m = _TITLE_VALUE.match(e.title.strip())
    label = _norm(m.group(1)) if m else ""
    if not label or len(label.split()) > 2:
        return False
    printed = fields.get(label, set()) - {k, e.parent}
    if len(printed) < _FIELD_SEEN:
        return False
    body = e.body.strip()
    return len(body.split()) <= _VALUE_WORDS or bool(_STARTS_NUMBER.match(body))


def fold_field_labels(entries: list[Entry]) -> list[Entry]:
    """Leaves titled by a field label with its value ("Challenge 2" over a list of names, "Hit" over
    "6 (1d8 + 2) piercing damage") out of the tree. A heading's title and text join its parent's body;
    a name found in the text (run-in, row) is dropped, its section already prints it."""
    fields = _field_labels(entries)
    has_kids = {e.parent for e in entries if e.parent is not None}
    fold = {
        k for k, e in enumerate(entries)
        if e.parent is not None and k not in has_kids and _is_field_label(k, e, fields)
    }
    if not fold:
        return entries

    def absorb(par: Entry, e: Entry) -> None:
        if e.origin not in INLINE_ORIGINS:
            _join_into(par, e, e.title, e.body)

    return _drop(entries, fold, lambda p: entries[p].parent, absorb)


def fold_table_breaks(entries: list[Entry], origin: str) -> list[Entry]:
    """The untitled entries that close a section at a table of its own (pdf_sections.table_breaks) out of
    the tree: their rows become the parent's children and their text follows the parent's own, so the
    table is no longer read as part of the section before it."""
    gone = {k for k, e in enumerate(entries) if e.origin == origin}
    if not gone:
        return entries

    return _drop(entries, gone, lambda p: entries[p].parent, lambda par, e: _join_into(par, e, e.body))
