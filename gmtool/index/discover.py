"""Which files a scan or an index run looks at (the symlink policy is in `gmtool.index.files`)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from wcmatch import glob as wcglob

from gmtool.index.files import link_problem
from gmtool.settings import INDEX_DIRNAME
from gmtool.types import SUPPORTED_SUFFIXES, Failure

# `*` and `?` stay within one folder, `**` spans folders (`**/` may match none), `[abc]` and
# `[!abc]` are classes; a pattern without `/` matches the file name in any folder (as in
# .gitignore), so `*.md` means every Markdown file. Hidden files are skipped before matching.
_GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.MATCHBASE | wcglob.DOTMATCH


def _match(rel: str, patterns: list[str]) -> bool:
    pats = [p.strip().removeprefix("./") for p in patterns if p.strip()]
    return bool(pats) and wcglob.globmatch(rel, pats, flags=_GLOB_FLAGS)


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


@dataclass
class Discovered:
    """The files to read, and the library entries that cannot be read (with a code each)."""

    files: list[Path] = field(default_factory=list)
    problems: list[Failure] = field(default_factory=list)


def discover_all(
    library: Path,
    include: list[str] | None = None,
    exclude: list[str] | None = None,
    types: list[str] | None = None,
) -> Discovered:
    """Every supported regular file below the library, sorted, skipping hidden folders and the
    index folder; symlinks are followed (and loops, dangling links and special files reported)
    under the policy in `gmtool.index.files`."""
    suffixes = normalise_types(types)
    out = Discovered()

    def wanted(rel: str, name: str) -> bool:
        if name.startswith(".") or not name.lower().endswith(suffixes):
            return False
        if include and not _match(rel, include):
            return False
        return not (exclude and _match(rel, exclude))

    def walk(folder: Path, rel_dir: str, ancestors: frozenset[tuple[int, int]], seen: set[tuple[int, int]]) -> None:
        try:
            names = sorted(os.listdir(folder))
        except OSError as exc:
            out.problems.append(Failure(rel_dir or ".", "UNREADABLE", exc.strerror or str(exc),
                                        "check the folder's permissions"))
            return
        subdirs: list[tuple[str, tuple[int, int]]] = []
        for name in names:
            path = folder / name
            rel = f"{rel_dir}{name}"
            try:
                st = os.stat(path)
            except OSError:
                st = None
            if st is not None and stat.S_ISDIR(st.st_mode):
                if not name.startswith(".") and name != INDEX_DIRNAME:
                    subdirs.append((name, (st.st_dev, st.st_ino)))
                continue
            if not wanted(rel, name):
                continue
            if st is not None and stat.S_ISREG(st.st_mode):  # the common case: no second stat
                out.files.append(path)
                continue
            problem = link_problem(path, rel)
            if problem is None:
                out.files.append(path)
            else:
                out.problems.append(problem)
        for name, key in subdirs:
            rel = f"{rel_dir}{name}"
            if key in ancestors:
                out.problems.append(Failure(rel, "SYMLINK_LOOP", "the folder link leads back to a folder that holds it",
                                            "point the link elsewhere or remove it; the folder is read once"))
                continue
            if key in seen:
                continue  # the same folder behind a second link: read once
            seen.add(key)
            walk(folder / name, rel + "/", ancestors | {key}, seen)

    root = os.stat(library)
    key = (root.st_dev, root.st_ino)
    walk(library, "", frozenset({key}), {key})
    return out


def discover(
    library: Path,
    include: list[str] | None = None,
    exclude: list[str] | None = None,
    types: list[str] | None = None,
) -> list[Path]:
    """The readable files of `discover_all`."""
    return discover_all(library, include, exclude, types).files
