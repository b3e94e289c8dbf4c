"""Which files a scan or an index run looks at."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from gmtool.settings import INDEX_DIRNAME
from gmtool.types import SUPPORTED_SUFFIXES


@functools.lru_cache(maxsize=256)
def _glob_regex(pat: str) -> re.Pattern[str]:
    """Shell-style glob on a library-relative path: `*` and `?` stay within one folder,
    `**` spans folders (`**/` may match none), `[abc]` is a class."""
    out: list[str] = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and (j := pat.find("]", i + 2)) != -1:
            body = pat[i + 1 : j]
            neg = body[:1] in ("!", "^")
            body = body[1:] if neg else body
            out.append(f"[{'^' if neg else ''}{re.escape(body).replace(chr(92) + '-', '-')}]")
            i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out) + r"\Z")


def _match(rel: str, patterns: list[str]) -> bool:
    """A pattern with a `/` matches the whole relative path; one without matches the file
    name in any folder (as in .gitignore), so `*.md` means every Markdown file."""
    name = rel.rsplit("/", 1)[-1]
    for pat in patterns:
        pat = pat.strip().removeprefix("./")
        target = rel if "/" in pat else name
        if _glob_regex(pat).match(target):
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
