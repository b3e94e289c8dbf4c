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
EXACT_CHARS = 120  # copies whose texts start alike are grouped without a fuzzy comparison
MAX_FUZZY_CLUSTERS = 40  # beyond this many texts under one title (a "Speed" in every race) only exact starts group
MIN_EVIDENCE = 40  # shorter texts than this prove nothing: a heading whose text sits in its subsections


def entity_texts(bodies: Sequence[str], parents: Sequence[int | None], limit: int = COMPARE_CHARS * 2) -> list[str]:
    """Each entry's text followed by its subsections' (document order), cut at `limit` characters:
    one book puts a class's text under its heading, another in subsections."""
    out = [b[:limit] for b in bodies]
    for i in range(len(bodies) - 1, -1, -1):  # children come after their parent
        p = parents[i]
        if p is not None and 0 <= p < i and len(out[p]) < limit:
            out[p] = (out[p] + " " + out[i])[:limit]
    return out


def same_text(a: str, b: str) -> bool:
    """Near-identical starts; a text cut shorter in one book (the rest in subsections) still matches."""
    from rapidfuzz import fuzz

    n = min(len(a), len(b), COMPARE_CHARS)
    if n < MIN_EVIDENCE:
        return True
    return fuzz.ratio(a[:n], b[:n]) >= COPY_SIMILARITY


def copy_groups(
    titles: Sequence[str], types: Sequence[str | None], sources: Sequence[str], texts: Sequence[str],
    fields: Sequence[dict | None] | None = None, bodies: Sequence[str] | None = None,
) -> tuple[list[int], list[int]]:
    """(copy, name) per document: `copy` numbers the groups of same-titled entries of one type,
    in different sources, whose texts (and typed fields, where both have them) agree (-1: no copy
    elsewhere); `name` numbers the titles that several sources hold with differing texts, another
    edition (-1: none). `texts` are entity texts (see entity_texts); `bodies`, the entries' own
    texts, decide first where both have some (books order the subsections differently)."""
    from gmtool.textnorm import normalize

    by_key: dict[tuple[str, str | None], list[int]] = {}
    for i, (t, ty) in enumerate(zip(titles, types, strict=True)):
        by_key.setdefault((normalize(t), ty), []).append(i)
    copy = [-1] * len(titles)
    name = [-1] * len(titles)
    n_copy = n_name = 0
    for members in by_key.values():
        if len({sources[i] for i in members}) < 2:
            continue
        norm = {i: " ".join(_WORDS.findall(normalize(texts[i][: COMPARE_CHARS + 100]))) for i in members}
        own = {i: " ".join(_WORDS.findall(normalize(bodies[i][: COMPARE_CHARS + 100]))) for i in members} if bodies else {}

        def alike(i: int, j: int, norm: dict[int, str] = norm, own: dict[int, str] = own) -> bool:
            fi, fj = (fields[i], fields[j]) if fields is not None else (None, None)
            if fi and fj and fi != fj:
                return False
            if own and min(len(own[i]), len(own[j])) >= MIN_EVIDENCE and same_text(own[i], own[j]):
                return True
            return same_text(norm[i], norm[j])

        clusters: list[list[int]] = []
        held: list[set[str]] = []  # the sources of each cluster: one copy per book
        exact: dict[str, list[int]] = {}  # text start -> clusters that begin with it (the common, cheap case)
        for i in members:
            start = norm[i][:EXACT_CHARS]
            home = next((k for k in exact.get(start, ()) if sources[i] not in held[k] and alike(i, clusters[k][0])), None)
            if home is None and len(clusters) <= MAX_FUZZY_CLUSTERS:
                home = next((k for k, c in enumerate(clusters) if sources[i] not in held[k] and alike(i, c[0])), None)
            if home is None:
                home = len(clusters)
                clusters.append([])
                held.append(set())
                exact.setdefault(start, []).append(home)
            clusters[home].append(i)
            held[home].add(sources[i])
        for c in clusters:
            if len(c) > 1:
                for i in c:
                    copy[i] = n_copy
                n_copy += 1
        if len(clusters) > 1:
            for i in members:
                name[i] = n_name
            n_name += 1
    return copy, name
