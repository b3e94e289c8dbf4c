"""Which entries are the same thing held by several books, and which only share a name.

Computed once per keyword index (scan time), where every text is at hand; queries fold rows
with the two integer lists this returns and open no source.
"""

from __future__ import annotations

from collections.abc import Sequence

COPY_SIMILARITY = 90.0  # rapidfuzz ratio (0-100) of two same-titled texts above which they are one entry
COMPARE_CHARS = 600  # the start of a text identifies an entry; PDF and Markdown copies agree there


def copy_groups(
    titles: Sequence[str], types: Sequence[str | None], sources: Sequence[str], bodies: Sequence[str]
) -> tuple[list[int], list[int]]:
    """(copy, name) per document: `copy` numbers the groups of near-identical same-titled texts
    in different sources (-1: no copy elsewhere); `name` numbers the titles that several
    sources hold with texts that differ, another edition (-1: none)."""
    from rapidfuzz import fuzz

    from gmtool.textnorm import normalize, tokenize

    by_key: dict[tuple[str, str | None], list[int]] = {}
    for i, (t, ty) in enumerate(zip(titles, types, strict=True)):
        by_key.setdefault((normalize(t), ty), []).append(i)
    copy = [-1] * len(titles)
    name = [-1] * len(titles)
    n_copy = n_name = 0
    for members in by_key.values():
        if len({sources[i] for i in members}) < 2:
            continue
        texts = {i: " ".join(tokenize(bodies[i][: COMPARE_CHARS * 2]))[:COMPARE_CHARS] for i in members}
        clusters: list[list[int]] = []
        for i in members:
            best, best_score = None, COPY_SIMILARITY
            for c in clusters:
                if any(sources[j] == sources[i] for j in c):
                    continue
                score = max(fuzz.ratio(texts[i], texts[j]) for j in c)
                if score >= best_score:
                    best, best_score = c, score
            if best is None:
                clusters.append([i])
            else:
                best.append(i)
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
