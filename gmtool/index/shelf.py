"""Which Markdown files are chapters of one book: a folder of chapter files is one book.

SRDs are published as repositories of chapter files, wikis and static sites export a folder
per book. A folder below the library root is one book when

- it holds a marker file `.gmtool-book` (the user says so; see below), or
- its Markdown is laid out as chapters: two or more of the files and sub-folders directly in
  it carry a numeric prefix (`01_Abilities.md`, `07-combat/`) and they are at least half of
  them, or it has an index page (`_index.md`, `index.md`, `README.md`) and sub-folders of
  Markdown (a static site's sections).

The topmost such folder wins: everything below it is its chapters. Loose files at the library
root, and Markdown in folders that are not books, stay books of their own; PDFs and text files
are never chapters.

The marker file `.gmtool-book` (hidden, so it is never indexed itself) may be empty, or hold
`key: value` lines:

    title: The Book's Title      # the title `ls` shows (else the index page's, else the folder's name)
    book: no                     # the folder is NOT one book: each file stays its own

Reading order, in every folder: the index page first, then files and sub-folders in natural
order of their numeric prefixes (`2-…` before `10-…`), then the unnumbered ones by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

MARKER = ".gmtool-book"
CHAPTER_SUFFIXES = (".md", ".markdown")
INDEX_STEMS = ("_index", "index", "readme")
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)(?=[-_. ]|[A-Za-z]|$)")
_NO = ("no", "false", "off", "0")


@dataclass
class FolderBook:
    """A folder read as one book: its chapter files in reading order."""

    folder: Path
    rel: str  # library-relative, POSIX
    chapters: list[Path] = field(default_factory=list)
    title: str | None = None  # from the marker file


def read_marker(folder: Path) -> dict[str, str] | None:
    """The marker's settings ({} for an empty one), or None when the folder has no marker."""
    path = folder / MARKER
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return None
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and not line.lstrip().startswith("#"):
            out[key.strip().lower()] = value.strip()
    return out


def order_key(name: str) -> tuple[int, tuple[int, ...], str]:
    """Index page first, then numbered names in natural order, then the rest by name."""
    stem = name.rsplit(".", 1)[0] if "." in name else name
    if stem.lower() in INDEX_STEMS:
        return (0, (), name.lower())
    m = _NUMBERED.match(name)
    if m:
        return (1, tuple(int(x) for x in m.group(1).split(".")), name.lower())
    return (2, (), name.lower())


def is_index(path: Path) -> bool:
    return path.stem.lower() in INDEX_STEMS


def _chaptered(children: set[str], has_index: bool, has_subfolders: bool) -> bool:
    numbered = sum(1 for c in children if _NUMBERED.match(c))
    return (numbered >= 2 and numbered * 2 >= len(children)) or (has_index and has_subfolders)


def shelve(library: Path, files: list[Path]) -> tuple[list[Path], list[FolderBook]]:
    """(files that are books of their own, folder books), from the files a scan found."""
    tree: dict[tuple[str, ...], set[str]] = {}  # folder parts -> names of Markdown children
    for f in files:
        if f.suffix.lower() not in CHAPTER_SUFFIXES:
            continue
        parts = f.relative_to(library).parts
        for depth in range(1, len(parts)):
            tree.setdefault(parts[:depth], set()).add(parts[depth])
    decided: dict[tuple[str, ...], bool] = {}

    def is_book(folder: tuple[str, ...]) -> bool:
        if folder not in decided:
            marker = read_marker(library.joinpath(*folder))
            if marker is not None:
                decided[folder] = marker.get("book", "yes").lower() not in _NO
            else:
                kids = tree.get(folder, set())
                subs = any((*folder, k) in tree for k in kids)
                index = any(k.rsplit(".", 1)[0].lower() in INDEX_STEMS for k in kids if (*folder, k) not in tree)
                decided[folder] = len(_files_below(tree, folder)) >= 2 and _chaptered(kids, index, subs)
        return decided[folder]

    books: dict[tuple[str, ...], FolderBook] = {}
    loose: list[Path] = []
    for f in files:
        parts = f.relative_to(library).parts
        owner = None
        if f.suffix.lower() in CHAPTER_SUFFIXES:
            owner = next((parts[:d] for d in range(1, len(parts)) if is_book(parts[:d])), None)
        if owner is None:
            loose.append(f)
            continue
        if owner not in books:
            marker = read_marker(library.joinpath(*owner)) or {}
            books[owner] = FolderBook(library.joinpath(*owner), "/".join(owner), title=marker.get("title") or None)
        books[owner].chapters.append(f)
    for book in books.values():
        book.chapters.sort(key=lambda p: [order_key(x) for x in p.relative_to(book.folder).parts])
    return loose, sorted(books.values(), key=lambda b: b.rel)


def _files_below(tree: dict[tuple[str, ...], set[str]], folder: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for k in tree.get(folder, set()):
        out.extend(_files_below(tree, (*folder, k)) if (*folder, k) in tree else [k])
    return out
