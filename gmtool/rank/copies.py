"""Which entries are the same thing held by several books, and which only share a name.

Computed once per keyword index (scan time), where every text is at hand; queries fold rows
with the two integer lists this returns and open no source.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

COPY_SIMILARITY = 90.0  # rapidfuzz ratio (0-100) of two same-titled texts above which they are one entry
COMPARE_CHARS = 600  # the start of a text identifies an entry; PDF and Markdown copies agree there
_WORDS = re.compile(r"\w+")
# On ASCII text `\w` is a letter, a digit or "_": these bytes kept (letters lower-cased, as normalize does)
# and every other byte a space, splitting gives _WORDS's words of the normalised text at C speed.
_ASCII_WORDS = bytes(ord(chr(c).lower()) if chr(c).isalnum() or chr(c) == "_" else 32 for c in range(128)) + b" " * 128
EXACT_CHARS = 120  # copies whose texts start alike are grouped without a fuzzy comparison
MAX_FUZZY_CLUSTERS = 40  # beyond this many texts under one title (a "Speed" in every race) only exact starts group
MIN_EVIDENCE = 40  # shorter texts than this prove nothing: a heading whose text sits in its subsections
# Two books order an entry's subsections differently (a class's features, tables), so a whole entry
# is also compared as a bag of word trigrams: the share of the smaller bag found in the other. On the
# SRD 5.1 classes held three times (Sorcerer, Wizard, Cleric, Fighter), copies share 0.85-0.98, the
# SRD 5.2 namesakes 0.18-0.35 and other games' classes 0.00-0.04.
SHARED_TRIGRAMS = 0.6
MIN_TRIGRAMS = 20  # fewer trigrams than this are no evidence either
# ...but a short text that is word for word the same, of this many words or more, under one title and type
# in one game system, is one entry ("Grappling hook | 2 gp | 4 lb." in both SRD 5.1 PDFs' gear tables)
SHORT_EQUAL_WORDS = 3
SUBTREE_CHARS = 20_000  # an entry's text with its subsections, cut here


def entity_texts(bodies: Sequence[str], parents: Sequence[int | None], limit: int = COMPARE_CHARS * 2) -> list[str]:
    """Each entry's text followed by its subsections' (document order), cut at `limit` characters:
    one book puts a class's text under its heading, another in subsections."""
    out = [b[:limit] for b in bodies]
    for i in range(len(bodies) - 1, -1, -1):  # children come after their parent
        p = parents[i]
        if p is not None and 0 <= p < i and len(out[p]) < limit:
            out[p] = (out[p] + " " + out[i])[:limit]
    return out


def subtree_ends(parents: Sequence[int | None]) -> list[int]:
    """Per entry, the index of its last descendant (itself when it has none): children follow
    their parent in document order, so an entry and its subsections are one slice."""
    ends = list(range(len(parents)))
    for i in range(len(parents) - 1, -1, -1):
        p = parents[i]
        if p is not None and 0 <= p < i and ends[i] > ends[p]:
            ends[p] = ends[i]
    return ends


def words_of(text: str) -> list[str]:
    """The words (`\\w+`) of the normalised text."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_WORDS).decode("ascii").split()
    from gmtool.textnorm import normalize

    return _WORDS.findall(normalize(text))


def trigrams(text: str) -> set[str]:
    w = words_of(text)
    return {" ".join(w[k : k + 3]) for k in range(len(w) - 2)}


def same_bag(a: set[str], b: set[str]) -> bool:
    """Most word trigrams of the smaller text are in the other (order not considered)."""
    small = min(len(a), len(b))
    return small >= MIN_TRIGRAMS and len(a & b) >= SHARED_TRIGRAMS * small


def same_text(a: str, b: str) -> bool:
    """Near-identical starts; a text cut shorter in one book (the rest in subsections) still matches.
    Texts shorter than MIN_EVIDENCE prove nothing: two empty or one-line texts are not one entry
    (a two-word stat line of one game beside another game's)."""
    from rapidfuzz import fuzz

    n = min(len(a), len(b), COMPARE_CHARS)
    if n < MIN_EVIDENCE:
        return False
    return fuzz.ratio(a[:n], b[:n]) >= COPY_SIMILARITY


def fields_agree(a: dict | None, b: dict | None) -> bool:
    """The numbers both copies carry agree (a spell's level, a monster's challenge): they tell two
    versions of a thing apart. Text fields do not: a PDF lacks a "Classes:" line the other has, or
    its duration runs on into the description, which is no evidence that the texts differ."""
    from gmtool.fieldspec import FIELD_TYPES

    if not a or not b:
        return True
    return all(a[k] == b[k] for k in a.keys() & b.keys() if FIELD_TYPES.get(k) in ("int", "float"))


# "This work includes material taken from the System Reference Document 5.1 ("SRD 5.1")": an SRD
# names its game's edition in its licence, and a copy of it keeps the licence.
_EDITION = re.compile(r"(?:system reference document|\bsrd)[ \t]*v?(\d+\.\d+)\b", re.IGNORECASE)
# Every _EDITION match holds one of these: a text holding neither is not searched (most of a book's texts).
_EDITION_WORDS = ("srd", "system reference document")


def book_system(own_id: str, title: str, texts: Sequence[str]) -> str:
    """The game and edition a book declares, as a key: the edition its SRD licence names most
    often ("srd 5.1"), else the book's title as printed (a reprint, or the same book as PDF and as
    Markdown, carries it), else its own id: a book whose system is unknown is its own system.
    Copies fold only within one system: another game's Goblin is not this one's."""
    from gmtool.textnorm import folded_has

    seen: dict[str, int] = {}
    for text in (title, *texts):
        if not folded_has(text, *_EDITION_WORDS):
            continue
        for m in _EDITION.finditer(text):
            seen[m.group(1)] = seen.get(m.group(1), 0) + 1
    if not seen:
        named = " ".join(title.lower().split())
        return f"book:{named}" if named else f"book:{own_id}"
    return "srd " + max(sorted(seen), key=lambda v: seen[v])


# One shape of a book heads an entry with its kind or place ("Barbarian Subclass: Path of the Berserker",
# "Level 3: Frenzy"), another prints the name alone: the name after a label of up to LABEL_WORDS words and
# a colon is the title that copies share.
_LABEL = re.compile(r"^[^:\n]{1,40}:\s+(?=\S)")
LABEL_WORDS = 3


def copy_title(title: str) -> str:
    """The title that copies of an entry share: its name, without a leading "Kind: " label."""
    m = _LABEL.match(title)
    return title[m.end():] if m and len(m.group(0).split()) <= LABEL_WORDS else title


def copy_groups(
    titles: Sequence[str], types: Sequence[str | None], sources: Sequence[str], texts: Sequence[str],
    fields: Sequence[dict | None] | None = None, bodies: Sequence[str] | None = None,
    systems: Sequence[str] | None = None, ends: Sequence[int] | None = None,
) -> tuple[list[int], list[int]]:
    """(copy, name) per document: `copy` numbers the groups of same-titled entries (see copy_title) of one type (a rule
    and an untyped section count as one) and
    one game system (`systems`, per document: see book_system; default: all one), in different
    sources, whose texts agree and whose typed fields do not disagree (-1: no copy elsewhere);
    `name` numbers the titles that several sources hold as different things, another edition or
    game (-1: none). `texts` are entity texts (see entity_texts); `bodies`, the entries' own texts,
    decide first where both have enough (books order the subsections differently); with `ends`
    (subtree_ends, global) the whole entries are compared as bags of words last. Texts too short
    to compare are neither copies nor namesakes: nothing is known of them."""
    from gmtool.textnorm import normalize

    by_key: dict[str, list[int]] = {}
    for i, (t, ty) in enumerate(zip(titles, types, strict=True)):
        # a rules section and an untyped one are both plain prose: one book's chapter map types a
        # section "rule" that another shape of the same book leaves untyped (Drow Poison, SRD 5.1)
        kind = None if ty == "rule" else ty
        by_key.setdefault(f"{normalize(copy_title(t))}\x00{kind}", []).append(i)
    copy = [-1] * len(titles)
    name = [-1] * len(titles)
    n_copy = n_name = 0
    for members in by_key.values():
        if len({sources[i] for i in members}) < 2:
            continue
        clusters = _clusters(members, sources, texts, fields, bodies, systems, ends)
        for c in clusters:
            if len(c) > 1:
                for i in c:
                    copy[i] = n_copy
                n_copy += 1
        known = [c for c in clusters if any(_evidence(texts[i]) for i in c)]
        if len(known) > 1:
            for c in known:
                for i in c:
                    name[i] = n_name
            n_name += 1
    return copy, name


def _evidence(text: str) -> bool:
    return len(text.strip()) >= MIN_EVIDENCE


def _clusters(
    members: list[int], sources: Sequence[str], texts: Sequence[str], fields: Sequence[dict | None] | None,
    bodies: Sequence[str] | None, systems: Sequence[str] | None, ends: Sequence[int] | None = None,
) -> list[list[int]]:
    """The members (one title and type) grouped into copies: an entry joins the first cluster of
    its system, without a copy from its own book, holding an entry with the same text (single
    link, so a chain of copies that each match the next is one entry)."""
    def words(s: str) -> str:
        return " ".join(words_of(s[: COMPARE_CHARS + 100]))

    norm = {i: words(texts[i]) for i in members}
    owns: dict[int, str] = {}  # the entries' own texts' words, read when first compared (many never are)

    def own(i: int) -> str:
        if i not in owns:
            assert bodies is not None
            owns[i] = words(bodies[i])
        return owns[i]

    bags: dict[int, set[str]] = {}

    def bag(i: int) -> set[str]:
        if i not in bags:
            assert bodies is not None and ends is not None
            bags[i] = trigrams(" ".join(bodies[i : ends[i] + 1])[:SUBTREE_CHARS])
        return bags[i]

    def alike(i: int, j: int) -> bool:
        if fields is not None and not fields_agree(fields[i], fields[j]):
            return False
        if bodies and min(len(own(i)), len(own(j))) >= MIN_EVIDENCE and same_text(own(i), own(j)):
            return True
        if same_text(norm[i], norm[j]):
            return True
        if norm[i] and norm[i] == norm[j] and len(norm[i].split()) >= SHORT_EQUAL_WORDS:
            return True  # too short to compare, but word for word the same in one system: a price row
        return bodies is not None and ends is not None and same_bag(bag(i), bag(j))

    clusters: list[list[int]] = []
    held: list[set[str]] = []  # the sources of each cluster: one copy per book
    system: list[str] = []
    exact: dict[str, list[int]] = {}  # text start -> clusters that begin with it (the common, cheap case)
    for i in members:
        start = norm[i][:EXACT_CHARS]
        sys_i = systems[i] if systems is not None else ""

        def fits(k: int, i: int = i, sys_i: str = sys_i) -> bool:
            return system[k] == sys_i and sources[i] not in held[k] and any(alike(i, j) for j in clusters[k])

        home = next((k for k in exact.get(start, ()) if fits(k)), None) if len(start) >= MIN_EVIDENCE else None
        if home is None and len(clusters) <= MAX_FUZZY_CLUSTERS:
            home = next((k for k in range(len(clusters)) if fits(k)), None)
        if home is None:
            home = len(clusters)
            clusters.append([])
            held.append(set())
            system.append(sys_i)
            exact.setdefault(start, []).append(home)
        clusters[home].append(i)
        held[home].add(sources[i])
    return clusters
