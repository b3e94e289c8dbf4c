"""Which files a scan or an index run looks at."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

from .config import INDEX_DIRNAME
from .types import SUPPORTED_SUFFIXES


def _match(rel: str, patterns: list[str]) -> bool:
    """Glob match where `**/` may also match nothing, as users expect from shells."""
    for pat in patterns:
        if fnmatch.fnmatchcase(rel, pat):
            return True
        if "**/" in pat and fnmatch.fnmatchcase(rel, pat.replace("**/", "")):
            return True
    return False


def normalise_types(types: list[str] | None) -> tuple[str, ...]:
    if not types:
        return SUPPORTED_SUFFIXES
    out = []
    for t in types:
        for part in t.split(","):
            part = part.strip().lower()
            if part:
                out.append(part if part.startswith(".") else "." + part)
    return tuple(out)


def discover(
    library: Path,
    include: list[str] | None = None,
    exclude: list[str] | None = None,
    types: list[str] | None = None,
) -> list[Path]:
    """Every supported file below the library, sorted, skipping hidden dirs and the index dir."""
    suffixes = normalise_types(types)
    found: list[Path] = []
    for root, dirs, files in os.walk(library):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != INDEX_DIRNAME)
        for name in sorted(files):
            if name.startswith("."):
                continue
            if not name.lower().endswith(suffixes):
                continue
            path = Path(root) / name
            rel = path.relative_to(library).as_posix()
            if include and not _match(rel, include):
                continue
            if exclude and _match(rel, exclude):
                continue
            found.append(path)
    return found
