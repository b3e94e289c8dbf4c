"""Run-in entries: a name at the start of a paragraph, then a separator, then its text.

"Bless : Nearby allies gain +1", "Weak (STR): You can't exert much force", "Fragile – Items
that are prone to breaking". They are found by their typography repeating on a page, never by
their words: paragraph starts that share a separator and an indent (three or more), or that set
the name in a font of its own before the separator (two or more).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter

from gmtool.index.extract.inline import Inline, Pos, namelike
from gmtool.index.extract.pdf_layout import Line
from gmtool.index.extract.titles import split_abbrev
from gmtool.textnorm import STOPWORDS

# name, separator, text: "Name : text", "Name: text", "Name – text", "Name — text", "Name - text"
_TEXT_SEP = re.compile(
    r"^(?P<name>[^\s:\u2013\u2014][^:\u2013\u2014]{0,47}?)"
    r"(?P<sep>\s+:\s+|:\s+|\s+[\u2013\u2014]\s+|[\u2014]|\s+-\s+)(?P<rest>\S.*)$"
)
_LEAD_SEP = re.compile(r"^(?P<name>.+?)\s*(?P<sep>[:.\u2013\u2014]|\s-)$")
# repetitions on a page that make a pattern: plain text needs more evidence than a font change
_MIN_TEXT = 3
_MIN_STYLED = 2
# lines on each side of a line that must step the same way for it to sit on a slanted edge
_SLANT_REACH = 2
# a paragraph's first line may be indented by up to this many font sizes (in ems)
_FIRST_INDENT = 2.5


def _line_before(i: int, skip: set[int]) -> int:
    """The index of the kept line before line i, or -1."""
    j = i - 1
    while j >= 0 and j in skip:
        j -= 1
    return j


def _starts_paragraph(
    lines: list[Line], i: int, skip: set[int], right: dict[int, float] | None = None, first_indent: bool = False
) -> bool:
    """Line i opens a paragraph: a break in column, spacing, size or indent before it, the
    line before it ends a sentence, or (given the columns' right edges) ends well short.
    With first_indent, line i may sit left of an indented first line (a paragraph's
    first-line indent is no break)."""
    j = _line_before(i, skip)
    if j < 0:
        return True
    prev, ln = lines[j], lines[i]
    return (
        prev.col != ln.col
        or (right is not None and prev.x1 < right.get(prev.col, prev.x1) - 3 * prev.size)
        or prev.text.endswith((".", "!", "?", ":", ")"))
        or ln.base - prev.base > 1.4 * max(ln.size, prev.size)
        or ln.base < prev.base
        or abs(prev.size - ln.size) > 0.3
        or abs(prev.x0 - ln.x0) > (_FIRST_INDENT if first_indent and prev.x0 > ln.x0 else 0.7) * ln.size
    )


def _goes_on(lines: list[Line], i: int, skip: set[int]) -> bool:
    """Line i goes on with the sentence of the line before it: it starts in lower case right
    below a line of its column that ends without a stop ("...using your" / "spell save DC: ...")."""
    j = _line_before(i, skip)
    if j < 0 or not lines[i].text[:1].islower():
        return False
    prev, ln = lines[j], lines[i]
    return (
        prev.col == ln.col
        and not prev.text.endswith((".", "!", "?", ":", ")"))
        and 0 < ln.base - prev.base <= 1.4 * max(ln.size, prev.size)
    )


def _right_edges(lines: list[Line]) -> dict[int, float]:
    right: dict[int, float] = {}
    for ln in lines:
        right[ln.col] = max(right.get(ln.col, 0.0), ln.x1)
    return right


def _indent_groups(lines: list[Line], idxs, key) -> list[list[int]]:
    """Line indexes grouped by column, a key, and left edge (within 2.5 pt of a neighbour)."""
    out: list[list[int]] = []
    for i in sorted(idxs, key=lambda i: (lines[i].col, key(i), lines[i].x0)):
        g = out[-1] if out else None
        if g and (lines[g[-1]].col, key(g[-1])) == (lines[i].col, key(i)) and lines[i].x0 - lines[g[-1]].x0 <= 2.5:
            g.append(i)
        else:
            out.append([i])
    return [sorted(g) for g in out]


def _on_slant(lines: list[Line], i: int, skip: set[int]) -> bool:
    """Line i is one of a run of lines whose left edges step the same way, at least a point a
    line: text wrapped around a slanted picture edge, where each run-in name starts further in
    than the last and no two share an indent. A hanging indent or a list steps back and forth."""
    col = lines[i].col

    def near(step: int) -> list[float]:
        out: list[float] = []
        j = i + step
        while 0 <= j < len(lines) and len(out) < _SLANT_REACH:
            if j not in skip and lines[j].col == col:
                out.append(lines[j].x0)
            j += step
        return out

    before, after = near(-1), near(1)
    if len(before) < _SLANT_REACH or len(after) < _SLANT_REACH:
        return False
    xs = [*reversed(before), lines[i].x0, *after]
    steps = [b - a for a, b in itertools.pairwise(xs)]
    return all(d >= 1.0 for d in steps) or all(d <= -1.0 for d in steps)


def _candidate(ln: Line) -> tuple[str, str, str] | None:
    """(name, separator kind, rest) of a line that opens with a run-in name."""
    head = ln.text[:52]
    if not ln.lead and ":" not in head and "\u2013" not in head and "\u2014" not in head and " - " not in head:
        return None
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
        if j in starts or _starts_paragraph(lines, j, skip, first_indent=len(out) == 1):
            break
        out.append(j)
        j += 1
    return out


def find_runins(pages, drop, thr: float) -> list[Inline]:
    """Run-in entries of every page, in document order."""
    found: list[Inline] = []
    for pi, (_w, _h, lines) in enumerate(pages):
        cands: dict[int, tuple[str, str, str]] = {}
        right = _right_edges(lines)
        for i, ln in enumerate(lines):
            if i in drop[pi] or ln.size >= thr or len(ln.text) < 4:
                continue
            c = _candidate(ln)
            if c and _starts_paragraph(lines, i, drop[pi], right) and not _goes_on(lines, i, drop[pi]):
                cands[i] = c
        if not cands:
            continue
        keep: set[int] = set()
        seps = {i: c[1] for i, c in cands.items()}
        for idxs in _indent_groups(lines, cands, seps.__getitem__):
            if len(idxs) >= (_MIN_STYLED if seps[idxs[0]] == "font" else _MIN_TEXT):
                keep.update(idxs)
        styled_cols = {lines[i].col for i in keep if seps[i] == "font"}
        keep.update(i for i in cands if seps[i] == "font" and lines[i].col in styled_cols
                    and _on_slant(lines, i, drop[pi]))
        for i in sorted(keep):
            name, _sep, rest = cands[i]
            name, tags = split_abbrev(name)
            para = _paragraph(lines, i, keep, drop[pi])
            body = " ".join([rest] + [lines[j].text for j in para[1:]])
            found.append(Inline(Pos(pi, i), name.strip(), body, tags or None, "runin"))
    return found


_DIGIT = re.compile(r"\d")
# lower-case words after a line's first word that, with a function word among them, make it a
# phrase ("An evening of song and dance"), not a name and its tags
_PHRASE_WORDS = 3


def _phrase(text: str) -> bool:
    words = text.lower().split()
    return len(words) >= _PHRASE_WORDS and any(w in STOPWORDS for w in words)


_CUT = re.compile(r"\s(?=[\d+(\u2013-])")


def _capital_ahead(words: list[str]) -> bool:
    """A capitalised word within the next two, before any number: "Axe of the Conqueror"."""
    for w in words:
        if w[:1].isupper():
            return True
        if not w[:1].isalpha():
            return False
    return False


def _name_of(text: str) -> tuple[str, list[str]]:
    """Name and tags of a title line: the name ends before the first number, bracket or
    lower-case word that is not followed by a capitalised one ("Keg of Dwarven Stout 10
    coins", "Ragged Bow near, 15 coins"), an inverted name's tail aside ("Lock, simple")."""
    words = text.split()
    cut = len(words)
    k = 1
    while k < len(words):
        w = words[k]
        ahead = words[k + 1 : k + 3]
        inverted = _inverted(words, k)
        if inverted:
            k = inverted
            continue
        if w[:1].isdigit() or w[:1] in "+(\u2013-" or (w[:1].islower() and not _capital_ahead(ahead)):
            cut = k
            break
        k += 1
    name = " ".join(words[:cut]).rstrip(",;")
    rest = " ".join(words[cut:])
    return name, [t.strip() for t in rest.split(",") if t.strip()]


def _inverted(words: list[str], k: int) -> int:
    """Where an inverted name's lower-case tail ends ("Lock, simple 20gp", "Mirror, small steel
    10gp": up to two lower-case words after a comma, then a price or a bracket), else 0."""
    if not words[k - 1].endswith(","):
        return 0
    j = k
    while j < len(words) and j - k < 2 and words[j][:1].islower() and not words[j].endswith(","):
        j += 1
    if j == k or j == len(words) or not (words[j][:1].isdigit() or words[j][:1] == "("):
        return 0
    return j


def _title_candidate(lines: list[Line], i: int, skip: set[int], edges: tuple[dict, dict], thr: float, tail: bool) -> bool:
    """Line i may be a title line: short, at body size, not a sentence, opening a paragraph,
    above a paragraph that starts with its indent (on the next page when `tail`: the line is
    the last of its page)."""
    ln = lines[i]
    t = ln.text
    right, left = edges
    if i in skip or ln.size >= thr or (i + 2 >= len(lines) and not tail) or not (t[:1].isupper() or t[:1].isdigit()):
        return False
    if t.endswith((".", ":", ";", ",", "!", "?")) or ": " in t or len(t.split()) > 10 or ". " in t:
        return False
    full = ln.x1 > right[ln.col] - 2 * ln.size
    if tail:
        return not full and _starts_paragraph(lines, i, skip)
    j = i + 1
    if j in skip or not _starts_paragraph(lines, i, skip) or not _starts_paragraph(lines, j, skip):
        return False
    nxt = lines[j].text
    if (lines[j].col == ln.col and abs(lines[j].x0 - ln.x0) > 2) or not (nxt[:1].isupper() or nxt[:1].isdigit()) or lines[j].lead or lines[j].lead_bold:
        return False  # a sentence's first words, not a title above its paragraph
    tags = _name_of(t)[1]
    priced = not ln.lead and not ln.lead_bold and any(re.search(r"\d", g) for g in tags)
    if full and not priced:
        return False
    # the next paragraph is one short line too: a list, a stat block
    return priced or not (_starts_paragraph(lines, j + 1, skip) and lines[j].x1 - lines[j].x0 < 0.8 * (right[ln.col] - left[ln.col]))


def _tag_words(s: str) -> list[str]:
    """A tag line's words, a capitalised word and its number kept together ("Level 1")."""
    return re.findall(r"[A-Z][a-z]+\s+\d+\b|\S+", s)


def find_title_lines(pages, drop, thr: float) -> list[Inline]:
    """One-line paragraphs set at body size above a paragraph, repeating down a page with
    the same indent ("Bless Level 1 Ongoing", "Bandages 3 uses, slow, 5 coins"): minor
    entries that no bookmark or font size marks. One that ends a page has its paragraph on the
    next one ("Dispel Magic Level 3" at the foot of Dungeon World p.45)."""
    from gmtool.index.extract.titles import sibling_tag_cuts

    found: list[Inline] = []
    for pi, (_w, _h, lines) in enumerate(pages):
        skip = drop[pi]
        right: dict[int, float] = {}
        left: dict[int, float] = {}
        for ln in lines:
            right[ln.col] = max(right.get(ln.col, 0.0), ln.x1)
            left[ln.col] = min(left.get(ln.col, 1e9), ln.x0)
        kept = [i for i in range(len(lines)) if i not in skip]
        last = kept[-1] if kept and pi + 1 < len(pages) else -1
        cands = [i for i in range(len(lines)) if _title_candidate(lines, i, skip, (right, left), thr, i == last)]
        named: list[tuple[int, str, list[str]]] = []
        for idxs in _indent_groups(lines, cands, lambda i: ""):
            if len([i for i in idxs if i != last]) < _MIN_TEXT:
                continue  # a line at a page's foot joins a list of title lines, it makes none
            texts = [lines[i].text for i in idxs]
            cuts = sibling_tag_cuts(texts)
            for i, t, cut in zip(idxs, texts, cuts, strict=False):
                if cut:
                    name, tags = t[:cut].strip(), _tag_words(t[cut:])
                else:
                    name, tags = _name_of(t)
                    if tags and _phrase(_DIGIT.split(tags[0], 1)[0]):
                        continue  # "An evening of song and dance 18 coins": a phrase, no name first
                named.append((i, name, tags))
        titled = {i for i, _name, _tags in named}
        for i, name, tags in _shared_first_tags(named, lines):
            if not name or not namelike(name):
                continue
            if i == last:
                nxt, nskip = pages[pi + 1][2], drop[pi + 1]
                first = next((k for k in range(len(nxt)) if k not in nskip), len(nxt))
                if first == len(nxt) or abs(nxt[first].size - lines[i].size) > 0.3 or nxt[first].text == lines[i].text:
                    continue  # a chapter title at a page's foot, printed again on the next page
                body = " ".join(nxt[j].text for j in _paragraph(nxt, first, set(), nskip))
            else:
                para = list(_paragraph(lines, i + 1, set(), skip))
                # a title line straight above the next one has no paragraph ("Crossbow near, 35
                # coins" above "Bundle of Arrows 3 ammo"): the next line is not its text
                body = "" if para and para[0] in titled else " ".join(lines[j].text for j in para)
            found.append(Inline(Pos(pi, i), name, body, tags or None, "line"))
    return found


def _shared_first_tags(named: list[tuple[int, str, list[str]]], lines: list[Line]) -> list[tuple[int, str, list[str]]]:
    """A capitalised word that ends several names on a page and is followed by a comma in
    each is their first tag ("Elven Bread Ration, 7 uses", "Bloodweed Dangerous, touch"),
    not a part of each name."""
    def last(i: int, name: str) -> str | None:
        words = name.split()
        rest = lines[i].text[len(name):]
        return words[-1] if len(words) > 1 and words[-1][:1].isupper() and rest.startswith(",") else None

    counts = Counter(w for i, name, _ in named if (w := last(i, name)))
    out = []
    for i, name, tags in named:
        w = last(i, name)
        if w and counts[w] >= _MIN_TEXT:
            name, tags = name[: -len(w)].rstrip(), [w, *tags]
        out.append((i, name, tags))
    return out
