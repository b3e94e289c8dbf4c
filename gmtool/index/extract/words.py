"""Word repair against the book's own vocabulary: words broken at a line end or by a gap
inside a line, and words run together where the text layer lost a space.

The layout (`pdf_layout`) cannot tell a kerning gap from a word space, nor a lost space from a
tight pair of glyphs, on its own: it marks the doubtful places in a line's text (`GAP` where it
put a space between two runs, `JOINT` where two runs meet letter to letter across a font change
or a wide glyph gap) and `resolve` decides each one with the words the book prints elsewhere.
A line that ends with a hyphen (or a soft hyphen, or a discretionary break pdfium reports) is
joined to the next line's first word when the joined form is a word of the book, or when its
parts are not; a compound whose parts are words ("two-handed") keeps its hyphen.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter

# a space the layout put between two runs of one line (a word space, or a kerning gap)
GAP = "\ue001"
# two runs of one line meeting letter to letter (the same word, or a lost word space)
JOINT = "\ue000"
MARKS = GAP + JOINT

# a word: letters not run into digits ("d6", "1st" and "10HP" are no words)
_WORD = re.compile(r"(?<![0-9])[A-Za-z]+(?![0-9])")
# a word with a lower-case letter right before a capital ("aUsage", "successfulWIS", "ofHD")
_CAMEL = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]*[a-z][A-Z][A-Za-z]*(?![A-Za-z0-9])")
_CAMEL_AT = re.compile(r"(?<=[a-z])(?=[A-Z])")
# a word printed this often is common: run into a long (this many letters) unknown word at a
# wide glyph gap, the two are two words ("forspace": "space" is printed nowhere else)
_COMMON = 20
_LONG = 4
# a space the text layer put after a ligature glyph ("fi ery", "halfl ing", "aff ects")
_LIGATURE_SPACE = re.compile(r"\b([A-Za-z]*(?:ff|fi|fl)) ([a-z]+)\b")
_LIGATURES = ("ff", "fi", "fl", "ffi", "ffl")  # a ligature alone is no word: the word goes on
# a one-letter word ("a") is printed alone at least this often
_LETTER_WORD_MIN = 20
_MARKED = re.compile(f"[A-Za-z{MARKS}]*[{MARKS}][A-Za-z{MARKS}]*")
_SPLIT_MARKS = re.compile(f"([{MARKS}])")
_COMPOUND = re.compile(r"[A-Za-z]+-[A-Za-z]+")
# the last word of a line, with the hyphen it may end with; the next line's first word
_TAIL = re.compile(r"([A-Za-z]+)(-?)$")
_HEAD = re.compile(r"^([A-Za-z]+)(\S*)\s*")
# a part printed at most this often (its own place included) is no word of the book on its own
_FRAGMENT_MAX = 2
# a word printed this many times more often than a part makes that part a fragment of it
# (SRD 5.1: "creatu res" beside 1,000 "creatures")
_FRAGMENT_RATIO = 20
# each part of a glued word is printed at least this often elsewhere (a glued form counts as one word)
_PART_MIN = 1
# a drop cap: one capital set apart from the rest of its word (not the words "A", "I", "O")
_DROP_CAP = re.compile(r"^[B-HJ-NP-Z]$")


class Vocabulary(Counter):
    """How often each lower-cased word is printed whole: a mark counts as a space, so a word
    counts only where the layout had no doubt about it (a glued form or a broken word's whole
    form does not count where it is in doubt; their parts do). `loose` counts the words read
    across the marks instead ("C|HA" is "cha" there)."""

    loose: Counter


def vocabulary(texts) -> Vocabulary:
    c = Vocabulary()
    c.loose = Counter()
    for t in texts:
        c.update(w.lower() for w in _WORD.findall(t))
        if GAP in t or JOINT in t:
            c.loose.update(w.lower() for w in _WORD.findall(t.replace(JOINT, "").replace(GAP, "")))
    return c


def hyphenated(texts) -> Counter:
    """Hyphenated compounds printed inside lines ("two-handed"), lower-cased."""
    c: Counter = Counter()
    for t in texts:
        if "-" in t:
            c.update(m.lower() for m in _COMPOUND.findall(t.rstrip("-")))
    return c


def _fragment(part: str, joined: int, vocab: Counter) -> bool:
    n = vocab[part.lower()]
    return n <= _FRAGMENT_MAX or n * _FRAGMENT_RATIO <= joined


def _join_gap(a: str, b: str, vocab: Counter) -> bool:
    """A gap inside a line that breaks one word: "creatu res", "m ust", "N imble"."""
    if not a or not b or not b[0].islower():
        return False
    joined = vocab[(a + b).lower()]
    if joined >= 1 and (_fragment(a, joined, vocab) or _fragment(b, joined, vocab)):
        return True
    return bool(_DROP_CAP.match(a)) and vocab[b.lower()] <= 1 and len(b) >= 3


def _split_joint(a: str, b: str, vocab: Counter, name: bool = False) -> bool:
    """Two words run together at a run boundary: "Theplayer", "forspace". The glued form is
    printed whole nowhere, and both parts are printed elsewhere too (their counts include this
    place), or one is a common word and the other is long. In a `name` (a line set larger than
    the text: a heading) only a lower-to-upper junction parts: "Oathbow" is one word."""
    if not a or not b or vocab[(a + b).lower()] or len(a) < 2 or len(b) < 2:
        return False
    if a[-1].islower() and b[0].isupper():
        return _camel_parts(a, b, vocab, own=1)
    if name or not b.islower():
        return False
    na, nb = vocab[a.lower()], vocab[b.lower()]
    if na > _PART_MIN and nb > _PART_MIN:
        return True
    return (na >= _COMMON and len(b) >= _LONG) or (nb >= _COMMON and len(a) >= _LONG)


def _camel_parts(a: str, b: str, vocab: Counter, own: int) -> bool:
    """Both parts are words the book prints elsewhere, or the second is an abbreviation it prints
    twice ("freeWIS"); `own` is how many of the counts are this place's."""
    if len(a) == 1 and vocab[a.lower()] < _LETTER_WORD_MIN:
        return False
    na, nb = vocab[a.lower()] - own, vocab[b.lower()] - own
    loose = getattr(vocab, "loose", None)
    if loose is not None and nb < _PART_MIN:
        nb = loose[b.lower()]  # an abbreviation printed with a kerning gap ("C|HA")
    return nb >= _PART_MIN and (na >= _PART_MIN or (len(b) >= 2 and b.isupper() and nb >= 2))


def resolve(text: str, vocab: Counter, name: bool = False) -> str:
    """The text with every GAP and JOINT decided (a space or nothing), and words run together
    at a lower-to-upper junction parted. `name`: the text is a heading (see _split_joint)."""
    if GAP in text or JOINT in text:
        text = _MARKED.sub(lambda m: _resolve_marked(m.group(0), vocab, name), text)
    text = _LIGATURE_SPACE.sub(lambda m: _ligature_space(m, vocab), text)
    return _CAMEL.sub(lambda m: _split_camel(m.group(0), vocab), text) if _has_camel(text) else text


def _ligature_space(m: re.Match[str], vocab: Counter) -> str:
    """"fi ery" -> "fiery": the word goes on after a ligature glyph the text layer set apart.
    Joined when the whole word is printed elsewhere or the left part is the ligature alone;
    ("staff absorbs", "off hapless" stay apart)."""
    a, b = m.group(1), m.group(2)
    if vocab[(a + b).lower()] or a.lower() in _LIGATURES:
        return a + b
    # few words end in "fi" or "fl", many in "ff" ("staff", "off"): only a left part ending in
    # "fi"/"fl" that is no word, or a right part that is none, is read as a broken word
    if not a.lower().endswith("ff") and (vocab[a.lower()] <= _FRAGMENT_MAX or vocab[b] <= _FRAGMENT_MAX):
        return a + b
    return m.group(0)


def _has_camel(text: str) -> bool:
    return not text.islower() and not text.isupper() and _CAMEL.search(text) is not None


def _split_camel(tok: str, vocab: Counter) -> str:
    """"aUsage" -> "a Usage" when the glued form is printed nowhere else and its parts are words
    of the book; "McDonald" or "DnD" stay (their parts are no words)."""
    if vocab[tok.lower()] > 1:
        return tok
    for m in _CAMEL_AT.finditer(tok):
        a, b = tok[: m.start()], tok[m.start():]
        if _camel_parts(a, b, vocab, own=0):
            return f"{a} {b}"
    return tok


def _resolve_marked(tok: str, vocab: Counter, name: bool) -> str:
    pieces = _SPLIT_MARKS.split(tok)  # word, mark, word, mark, ..., word
    words = pieces[0::2]
    out = [words[0]]
    for k, mark in enumerate(pieces[1::2]):
        left = "".join(out).rsplit(" ", 1)[-1]
        if mark == GAP:
            out.append("" if _join_gap(left, words[k + 1], vocab) else " ")
        elif _split_joint(left, "".join(words[k + 1:]), vocab, name):  # later joints read as nothing
            out.append(" ")
        out.append(words[k + 1])
    return "".join(out).strip()


def join_break(tail: str, head: str, vocab: Counter, hyphens: Counter, hyphen: bool) -> str | None:
    """How a word split at a line end rejoins: `tail` is the last word of the line (without its
    hyphen), `head` the next line's first word. The joined word, the hyphenated compound (when
    `hyphen` and the parts are words of the book), or None: they stay apart."""
    joined = (tail + head).lower()
    n = vocab[joined]
    if n >= 1 and (hyphen or _fragment(tail, n, vocab) or _fragment(head, n, vocab)):
        return tail + head
    if not hyphen:
        return None
    if hyphens[f"{tail}-{head}".lower()] or (vocab[tail.lower()] > _FRAGMENT_MAX and vocab[head.lower()] > _FRAGMENT_MAX):
        return f"{tail}-{head}"  # a compound: printed so elsewhere, or two words of the book
    return tail + head


def rejoin(prev: str, nxt: str, soft: bool, vocab: Counter, hyphens: Counter) -> tuple[str, str] | None:
    """The two lines' texts with a word broken across them made whole on the first one, or None
    when there is none. A line ending in a hyphen or a soft hyphen is a break when the next line
    starts in lower case; a line ending without one is when the vocabulary says so."""
    t = _TAIL.search(prev)
    h = _HEAD.match(nxt)
    if t is None or h is None:
        return None
    hyphen = bool(t.group(2)) or soft
    if not h.group(1)[0].islower():
        if not hyphen:
            return None
        # a capital after a line-end hyphen: a compound ("Far-Away", "Butter-Fingered")
        word: str | None = f"{t.group(1)}-{h.group(1)}"
    else:
        word = join_break(t.group(1), h.group(1), vocab, hyphens, hyphen)
    if word is None:
        return None
    before, after = prev[: t.start()], nxt[h.end():]
    if after:
        return before + word + h.group(2), after
    if before.strip():  # the next line is the rest of the word alone ("ment."): the word goes down
        return before.rstrip(), word + h.group(2)
    return None


def resolve_pages(pages: list, vocab: Counter, heading_size: float) -> None:  # type: ignore[type-arg]
    """Decide, in place, every mark the layout left in the pages' lines (text, lead, cells);
    lines set at `heading_size` or larger are names (see _split_joint)."""
    for _w, _h, lines in pages:
        for i, ln in enumerate(lines):
            if GAP in ln.text or JOINT in ln.text or _has_camel(ln.text) or _LIGATURE_SPACE.search(ln.text):
                name = ln.size >= heading_size
                lead = resolve(ln.lead, vocab, name) if ln.lead else ln.lead
                cells = tuple((a, b, resolve(t, vocab, name)) for a, b, t in ln.cells)
                lines[i] = ln._replace(text=resolve(ln.text, vocab, name), lead=lead, cells=cells)


def rejoin_pages(pages: list, drop: list, vocab: Counter, hyphens: Counter) -> None:  # type: ignore[type-arg]
    """Make whole, in place, the words broken across two lines that are read one after the other
    (across columns and page turns too; page furniture between them is skipped)."""
    prev: tuple[int, int] | None = None
    for pi, (_w, _h, lines) in enumerate(pages):
        for i, ln in enumerate(lines):
            if i in drop[pi]:
                continue
            if prev is not None:
                pl = pages[prev[0]][2][prev[1]]
                if abs(pl.size - ln.size) <= 0.3 and (ln.text[:1].islower() or (ln.text[:1].isupper() and (pl.soft_end or pl.text.endswith("-")))):
                    done = rejoin(pl.text, ln.text, pl.soft_end, vocab, hyphens)
                    if done is not None:
                        pages[prev[0]][2][prev[1]] = pl._replace(text=done[0], soft_end=False)
                        # a line that ends someone else's word opens with no name: no leading run
                        lines[i] = ln = ln._replace(text=done[1], lead="")
            prev = (pi, i)


# A word printed once that parts into two words the book prints elsewhere (each at least this
# often and two letters long) may be two words run together with no mark: the space lost in the
# text layer, or in the book itself ("Youmust", "youare").
_GLUE_PART_MIN = 2
_GLUE_LEN = (4, 30)
# Parted on the book's words alone (no gap in the layout) only when both parts are among its
# commonest words, each this share of all its words, this often and this long, and the two are
# printed apart elsewhere ("youare" beside "you are"; "atone" and "upon" have a two-letter part
# and stay).
_COMMON_SHARE = 0.003
_COMMON_MIN = 10
_COMMON_LEN = 3


def glued_candidates(vocab: Counter) -> dict[str, list[int]]:
    """Lower-cased words printed once whose letters part into two words of the book: the word
    -> where it may part. The layout (a gap at the cut) or `common_glue` decides each."""
    out: dict[str, list[int]] = {}
    for w, n in vocab.items():
        if n != 1 or not _GLUE_LEN[0] <= len(w) <= _GLUE_LEN[1]:
            continue
        cuts = [i for i in range(2, len(w) - 1) if vocab.get(w[:i], 0) >= _GLUE_PART_MIN and vocab.get(w[i:], 0) >= _GLUE_PART_MIN]
        if cuts:
            out[w] = cuts
    return out


def glued_places(pages: list, cands: dict[str, list[int]]) -> dict[int, dict[str, list[int]]]:  # type: ignore[type-arg]
    """Where each candidate is printed: page index -> the word as printed -> its cuts."""
    out: dict[int, dict[str, list[int]]] = {}
    for pi, (_w, _h, lines) in enumerate(pages):
        for ln in lines:
            for w in _WORD.findall(ln.text):
                cuts = cands.get(w.lower())
                if cuts is not None:
                    out.setdefault(pi, {})[w] = cuts
    return out


def common_glue(cands: dict[str, list[int]], vocab: Counter, texts: list[str]) -> dict[str, int]:
    """The candidates that part on the book's words alone (see _COMMON_SHARE): word -> cut."""
    total = sum(vocab.values())
    least = max(_COMMON_MIN, _COMMON_SHARE * total)
    common = {w for w, n in vocab.items() if n >= least and len(w) >= _COMMON_LEN}
    found = {w: i for w, cuts in cands.items() for i in cuts if w[:i] in common and w[i:] in common}
    if not found:
        return {}
    pairs = {(w[:i], w[i:]) for w, i in found.items()}
    apart = {p for t in texts for p in _spaced_pairs(t, pairs)}
    return {w: i for w, i in found.items() if (w[:i], w[i:]) in apart}


def _spaced_pairs(text: str, pairs: set[tuple[str, str]]) -> set[tuple[str, str]]:
    words = [w.lower() for w in text.split()]
    return {p for p in itertools.pairwise(words) if p in pairs}


def split_glued(pages: list, cuts: dict[int, dict[str, int]]) -> None:  # type: ignore[type-arg]
    """Part, in place, the words run together that `cuts` names per page (word as printed -> cut)."""
    for pi, words in cuts.items():
        pat = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, words)) + r")(?![A-Za-z0-9])")

        def part(m: re.Match[str], words: dict[str, int] = words) -> str:
            w = m.group(1)
            return f"{w[: words[w]]} {w[words[w]:]}"

        lines = pages[pi][2]
        for i, ln in enumerate(lines):
            if pat.search(ln.text):
                lines[i] = ln._replace(text=pat.sub(part, ln.text), lead=pat.sub(part, ln.lead),
                                       cells=tuple((a, b, pat.sub(part, t)) for a, b, t in ln.cells))
