"""Clean entry titles: what a reader would call the entry, not what the text layer holds.

Bookmarks and printed lines carry decoration (a permalink sign, TeX quotes), damage from the
text layer (kerning gaps, lost ligatures) and, for stat-block names, the tag line printed after
the name. The repairs use only the book itself: its own words (to rejoin a split word or fill a
lost ligature) and its own typography (the font change between a name and its tags).
"""

from __future__ import annotations

import re
from collections import Counter

from gmtool.index.extract.pdf_layout import LIGATURE
from gmtool.textnorm import STOPWORDS

# the letters a lost ligature glyph stood for, most common first
_LIGATURES = ("fi", "fl", "ff", "ffi", "ffl", "ft", "st")
# decoration after a title: pilcrow, section and dagger signs, bullets, stars, markup marks
_TRAIL = re.compile(r"[\s\u00b6\u00a7\u2020\u2021\u2022\u25aa\u25cf*#_~|=]+$")
_LEAD = re.compile(r"^[\s\u00b6\u00a7\u2022\u25aa\u25cf*#_~|=]+")
_TEX_OPEN = re.compile(r"``")
_TEX_CLOSE = re.compile(r"''")
_WORD = re.compile(r"[A-Za-z" + LIGATURE + r"]+")
# a short abbreviation in brackets after a run-in name: "Weak (STR)"
_ABBREV = re.compile(r"\s*\(([A-Z]{2,5})\)$")
_SEPARATOR = re.compile(r"\s*[:.\u2013\u2014-]+$")
# a tag in brackets after a name: "Grappled [Condition]", "Falling [Hazard]"
_BRACKET_TAG = re.compile(r"\s*\[([A-Za-z][^\[\]]{0,30})\]$")
# a price in brackets after a name: "Grappling Hook (2 GP)", "Rope (1 sp)", "Torch (5 coins)"
_PRICE = re.compile(r"\s*\((\d[\d,.]*\s*(?:[cseg]p|pp|gc|sc|cc|gold|silver|copper|coins?)\.?)\)$", re.IGNORECASE)
# a tag word must be printed as a tag of this many other title lines of the book to be cut off a
# name (Dungeon World's "Halberd reach, +1 damage" makes "Reach" a tag)
_TAG_SEEN = 1


def word_counts(texts) -> Counter:
    """How often each lower-cased word occurs in the book (the evidence for word repairs)."""
    c: Counter = Counter()
    for t in texts:
        for w in _WORD.findall(t):
            if LIGATURE not in w:
                c[w.lower()] += 1
    return c


def repair_ligatures(text: str, vocab: Counter) -> str:
    """Fill each lost ligature with the letters that make a word the book prints elsewhere;
    where no candidate or several do, the marker is dropped (the old behaviour)."""
    if LIGATURE not in text:
        return text

    def fix(m: re.Match) -> str:
        w = m.group(0)
        if LIGATURE not in w:
            return w
        hits = [c for c in _LIGATURES if vocab.get(w.replace(LIGATURE, c).lower())]
        if len(hits) == 1:
            return w.replace(LIGATURE, hits[0])
        return w.replace(LIGATURE, "")

    return _WORD.sub(fix, text)


def repair_kerning(title: str, vocab: Counter) -> str:
    """Rejoin a word split by a kerning gap ("Two-Hand ed"): the joined form is a word the
    book prints, and the tail on its own is not."""
    words = title.split(" ")
    out: list[str] = []
    for w in words:
        if out and w.isalpha() and w.islower() and len(w) <= 4:
            prev = out[-1]
            m = re.search(r"[A-Za-z]+$", prev)
            if m and vocab.get((m.group(0) + w).lower(), 0) >= 2 and vocab.get(w.lower(), 0) <= vocab.get((m.group(0) + w).lower(), 0) // 4:
                out[-1] = prev + w
                continue
        out.append(w)
    return " ".join(out)


def clean_title(title: str) -> str:
    """Strip decoration and markup from a title (the words themselves are kept)."""
    t = title.replace("\u00ad", "-")
    t = _TEX_OPEN.sub("\u201c", t)
    t = _TEX_CLOSE.sub("\u201d", t)
    t = _TRAIL.sub("", t)
    t = _LEAD.sub("", t)
    return " ".join(t.split())


def split_tags(title: str) -> tuple[str, list[str]]:
    """A name without its trailing bracketed tags and price, and those as tags:
    "Grappled [Condition]" -> ("Grappled", ["Condition"]), "Grappling Hook (2 GP)" ->
    ("Grappling Hook", ["2 GP"]). A title that is nothing but a tag is kept whole."""
    tags: list[str] = []
    while True:
        m = _BRACKET_TAG.search(title) or _PRICE.search(title)
        if not m or m.start() == 0:
            return title, tags
        tags.insert(0, m.group(1).strip())
        title = title[: m.start()].rstrip()


def cut_tag_words(entries) -> None:
    """Tag words the book prints as tags elsewhere, cut off the end of title-line names into
    their tags: "Vorpal Sword Close" (DW weapons print "close" as a tag) -> "Vorpal Sword",
    "The Carcosan Spire Reach, Thrown" -> "The Carcosan Spire"."""
    seen: Counter = Counter()
    for e in entries:
        if e.origin == "line" and e.tags:
            seen.update({t.lower() for t in e.tags})
    if not seen:
        return
    for e in entries:
        if e.origin != "line":
            continue
        own = {t.lower() for t in e.tags or ()}

        def tag(w: str, own: set[str] = own) -> bool:
            return seen[w.lower()] - (w.lower() in own) >= _TAG_SEEN

        cut: list[str] = []
        parts = e.title.split(", ")
        while len(parts) > 1 and tag(parts[-1]):
            cut.insert(0, parts.pop())
        words = parts[0].split(" ")
        while len(words) > 1 and tag(words[-1]):
            cut.insert(0, words.pop())
        # the name left must keep two words of its own ("The Sterling Hand" is a name: "hand"
        # is a range tag, but "The Sterling" would be no name)
        if cut and len(parts) == 1 and sum(1 for w in words if w.lower() not in STOPWORDS) >= 2:
            e.title = " ".join(words)
            e.tags = cut + (e.tags or [])


def split_lead(title: str, lead: str) -> tuple[str, list[str]] | None:
    """Name and tags when the printed line sets the name in one font and a tag line after
    it in another ("Goblin" bold, "Horde, Small" bold italic)."""
    lead = _SEPARATOR.sub("", lead).strip()
    if not lead or len(lead) >= len(title) or not title.startswith(lead):
        return None
    rest = title[len(lead):].strip(" ,:;\u2013\u2014-")
    if not rest or not any(ch.isalpha() for ch in lead):
        return None
    tags = [t.strip() for t in rest.split(",") if t.strip()]
    return lead, tags


def split_abbrev(name: str) -> tuple[str, list[str]]:
    """A run-in name's trailing bracketed abbreviation is a tag: "Weak (STR)" -> "Weak"."""
    m = _ABBREV.search(name)
    if m and m.start() > 0:
        return name[: m.start()], [m.group(1)]
    return name, []


def sibling_tag_cuts(titles: list[str]) -> list[int | None]:
    """Where a run of sibling titles shares a tag shape "Name Word N ..." ("Sleep Level 3
    Enchantment"), the cut before Word for each title that has it.

    The shape must repeat (the same capitalised word followed by a number in at least three
    siblings, and a third of them), so a name that merely contains a number is kept whole.
    """
    pat = re.compile(r"^(.+?)\s+([A-Z][a-z]+)\s+\d+\b")
    found = [pat.match(t) for t in titles]
    words = Counter(m.group(2) for m in found if m)
    out: list[int | None] = []
    for m in found:
        if m and words[m.group(2)] >= 3 and words[m.group(2)] * 3 >= len(titles):
            out.append(m.end(1))
        else:
            out.append(None)
    return out


def tidy_titles(entries, leads: list[str | None], vocab: Counter) -> None:
    """Clean every title in place; split tag lines off names (by font, then by a tag shape
    shared by siblings) into `Entry.tags`. `leads[k]` is the leading font run of the line
    entry k is printed on, when known."""
    for e, lead in zip(entries, leads, strict=False):
        t = clean_title(repair_ligatures(e.title, vocab))
        t = repair_kerning(t, vocab)
        t, tags = split_tags(t)
        if tags:
            e.tags = (e.tags or []) + tags
        if lead:
            split = split_lead(t, clean_title(lead))
            if split:
                t, tags = split
                e.tags = (e.tags or []) + tags
        e.title = t
    kids: dict[int | None, list[int]] = {}
    for k, e in enumerate(entries):
        if e.origin in ("outline", "heading"):
            kids.setdefault(e.parent, []).append(k)
    for group in kids.values():
        cuts = sibling_tag_cuts([entries[k].title for k in group])
        for k, cut in zip(group, cuts, strict=False):
            if cut:
                e = entries[k]
                e.tags = (e.tags or []) + [w for w in e.title[cut:].split() if w]
                e.title = e.title[:cut].strip()
