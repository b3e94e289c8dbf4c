"""What a user may type to name a book, and the one function that maps it to source ids.

Every command and MCP tool resolves a book through `find_sources` (the engine for `toc`,
`show`, `open`, the search filters for `--source`), so `bestiary`, `bestiary.pdf`,
`books/bestiary.pdf`, the title's slug, a unique start of the id (`the-black-hack`) and a
title typed loosely, when one book clearly wins, name the same book everywhere. A name that
matches nothing gets the nearest ids (`nearest_ids`) as suggestions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import PurePosixPath

from gmtool.textnorm import slugify
from gmtool.types import SUPPORTED_SUFFIXES, SourceMeta


def _stem(name: str) -> str:
    """The name without its folder and a rulebook extension: "books/Bestiary.PDF" -> "Bestiary"."""
    p = PurePosixPath(name.replace("\\", "/"))
    return p.stem if p.suffix.lower() in SUPPORTED_SUFFIXES else p.name


def find_sources(metas: Mapping[str, SourceMeta], name: str) -> list[str]:
    """The ids `name` can mean, by the first rule that matches anything, most exact first:
    the id itself, the id's slug, the file (its path in the library or its bare name, case
    ignored), the file name without its extension, then the title. Several ids come back only
    when one rule matches several books (two books with the same title)."""
    name = name.strip()
    if not name:
        return []
    key = slugify(name)
    lowered = name.replace("\\", "/").lower()
    stem = slugify(_stem(name))
    rules: list[Callable[[str, SourceMeta], bool]] = [
        lambda sid, m: sid == name,
        lambda sid, m: sid == key,
        lambda sid, m: m.file.lower() == lowered or PurePosixPath(m.file).name.lower() == lowered,
        lambda sid, m: bool(stem) and slugify(PurePosixPath(m.file).stem) == stem,
        lambda sid, m: bool(key) and slugify(m.title) == key,
    ]
    for rule in rules:
        found = sorted(sid for sid, m in metas.items() if rule(sid, m))
        if found:
            return found
    if key:
        prefixed = sorted(sid for sid in metas if sid.startswith(key))
        if prefixed:
            return prefixed  # one book, or several that the caller reports as ambiguous
    return _clear_winner(metas, name)


FUZZY_MIN = 85.0  # rapidfuzz WRatio (0-100) of a loosely typed name to a book's title, id or file name
FUZZY_MARGIN = 10.0  # ...and by how much it must beat the next book, or the name is not clear
SUGGEST_MIN = 50.0  # the nearest ids suggested for a name that matches no book


def _closeness(metas: Mapping[str, SourceMeta], name: str) -> list[tuple[float, str]]:
    """(best WRatio of `name` to the id, title or file stem, id) per book, closest first."""
    from rapidfuzz import fuzz
    from rapidfuzz.utils import default_process

    out = []
    for sid, m in metas.items():
        best = max(fuzz.WRatio(name, s, processor=default_process) for s in (sid, m.title, _stem(m.file)))
        out.append((float(best), sid))
    return sorted(out, key=lambda t: (-t[0], t[1]))


def _clear_winner(metas: Mapping[str, SourceMeta], name: str) -> list[str]:
    ranked = _closeness(metas, name)
    if not ranked or ranked[0][0] < FUZZY_MIN:
        return []
    if len(ranked) > 1 and ranked[0][0] - ranked[1][0] < FUZZY_MARGIN:
        return []
    return [ranked[0][1]]


def nearest_ids(metas: Mapping[str, SourceMeta], name: str, k: int = 3) -> list[str]:
    """Up to `k` ids closest to a name that matches no book (ids containing it first), else the first k."""
    key = slugify(name).replace("-", "")
    inside = [sid for sid in sorted(metas) if key and key in sid.replace("-", "")]
    close = [sid for score, sid in _closeness(metas, name) if score >= SUGGEST_MIN and sid not in inside]
    return (inside + close)[:k] or sorted(metas)[:k]
