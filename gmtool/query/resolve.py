"""What a user may type to name a book, and the one function that maps it to source ids.

Every command and MCP tool resolves a book through `find_sources` (the engine for `toc`,
`show`, `open`, the search filters for `--source`), so `bestiary`, `bestiary.pdf`,
`books/bestiary.pdf` and the title's slug name the same book everywhere.
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
    return []
