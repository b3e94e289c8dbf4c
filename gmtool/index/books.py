"""The writer's side of folder books (see `gmtool.index.shelf`): their stamps, hashes and plans.

A folder book is one source. Its content hash is the hash of its chapters' paths and hashes,
so a renamed, added, removed or edited chapter changes it; the manifest keeps each chapter's
stat stamp and hash (`IndexState.chapters`), so a rescan stats every chapter, hashes only those
whose stamp changed, and the extraction re-reads only those (the others come from the
source's chapter cache).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gmtool.index.extract.mdbook import BookPlan, ChapterPlan
from gmtool.index.files import hash_file
from gmtool.index.shelf import FolderBook, book_name
from gmtool.storage.hashing import FileStamp


@dataclass
class BookLook:
    """A folder book as found now: each chapter's stamp and (where needed) hash."""

    book: FolderBook
    stamps: dict[str, FileStamp]  # library-relative chapter -> stamp
    shas: dict[str, str]
    size: int
    mtime: float
    sha256: str = ""

    def state(self) -> dict[str, list[Any]]:
        return {r: [*self.stamps[r].to_list(), self.shas[r]] for r in self.stamps}


def look(book: FolderBook, library: Path, known: dict[str, list[Any]]) -> BookLook:
    """Stat every chapter; reuse the known hash of a chapter whose stamp is unchanged, hash the
    others (raises what `hash_file` and `stat` raise, naming nothing: the caller names the book)."""
    stamps: dict[str, FileStamp] = {}
    shas: dict[str, str] = {}
    size, mtime = 0, 0.0
    for ch in book.chapters:
        r = ch.relative_to(library).as_posix()
        st = os.stat(ch)
        stamp = FileStamp.of(st)
        stamps[r] = stamp
        size += st.st_size
        mtime = max(mtime, st.st_mtime)
        was = known.get(r)
        if isinstance(was, list) and len(was) == 5 and FileStamp.from_list(was[:4]) == stamp:
            shas[r] = str(was[4])
    return BookLook(book, stamps, shas, size, mtime)


def unchanged(found: BookLook, known: dict[str, list[Any]]) -> bool:
    """Same chapters, in the same order, with the same stamps: no need to hash anything."""
    return list(known) == list(found.stamps) and len(found.shas) == len(found.stamps)


def finish_hash(found: BookLook, library: Path) -> None:
    for ch in found.book.chapters:
        r = ch.relative_to(library).as_posix()
        if r not in found.shas:
            found.shas[r] = hash_file(ch)
    h = hashlib.sha256()
    for r in found.stamps:
        h.update(f"{r}\0{found.shas[r]}\n".encode("utf-8", "surrogateescape"))  # a non-UTF-8 chapter name
    found.sha256 = h.hexdigest()


def plan(found: BookLook, library: Path, cached: dict[str, dict[str, Any]]) -> BookPlan:
    chapters = []
    for ch in found.book.chapters:
        r = ch.relative_to(library).as_posix()
        chapters.append(ChapterPlan(ch.relative_to(found.book.folder).as_posix(), str(ch), r, found.shas[r],
                                    cached.get(r)))
    return BookPlan(book_name(found.book.folder), tuple(chapters), found.book.title)


def stamp_of(found: BookLook) -> FileStamp:
    """The book's one stamp in the manifest (its chapters' stamps are kept beside it)."""
    latest = max(found.stamps.values(), key=lambda s: s.mtime_ns)
    return FileStamp(found.size, latest.mtime_ns, 0, max(s.ctime_ns for s in found.stamps.values()))
