"""A folder of Markdown chapter files (see `gmtool.index.shelf`) -> one Document.

Each chapter is parsed on its own (`markdown.parse_chapter`), so a rescan re-reads only the
chapters that changed; the parts are then joined in reading order:

- a sub-folder's first file heads the folder when it is its index page, a heading-only or
  front-matter-only stub (`# Classes`, Hugo's `_index.md`), or numbered 0 (`00_Glossary.md`):
  the folder's other files nest under it, their levels moved down as far as needed, so the
  class files that start at `## Barbarian` sit under `Classes`;
- a heading-only chapter (`# Classes`) heads the chapters after it in its folder while their
  headings start deeper (`## Fighter`): headings that continue across files;
- a chapter with several top-level headings (or text before them) is wrapped in one chapter
  node, named by its front matter or its file name, so the TOC has one node per chapter file;
- every entry keeps its chapter file (`Entry.file`) and its line in it;
- a bold run-in name that LABEL_CHAPTERS or more chapters print ("**Effect:**" in every note of a
  vault made from one template) is a field label, not an entry, as one printed twice in one file is.

The book's title is the marker file's, else the root index page's title heading or front
matter title, else the folder name made readable; an acronym in the folder name that the
book's own opening pages define (`System Reference Document 5.1 ("SRD 5.1")`) is spelled out.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from gmtool.index.extract.inline import norm
from gmtool.index.extract.markdown import Parsed, book_entries, spelled_out
from gmtool.index.extract.mdrows import without
from gmtool.types import Document, Entry

_PREFIX = re.compile(r"^\d+(?:\.\d+)*[-_. ]*")
_ZERO = re.compile(r"^0+(?:[-_. ]|$)")
_INDEX_STEMS = ("_index", "index", "readme")
# A bold run-in name printed in this many chapter files is a template's field label ("**Effect:**" in every
# note of a vault), not an entry: set by hand on a vault sample (every note prints it); in md-more it drops
# six "Skills:" run-ins of three Cypher chapters and no gold entry.
LABEL_CHAPTERS = 3
_ENTRY_FIELDS = tuple(f.name for f in dataclasses.fields(Entry))  # asdict deep-copies: 4x slower for the cache


@dataclass
class Chapter:
    """One chapter file of a folder book, parsed."""

    in_book: str  # path inside the book folder, POSIX
    file: str  # library-relative path, what results name
    sha256: str
    parsed: Parsed

    def to_json(self) -> dict[str, Any]:
        p = self.parsed
        return {"in_book": self.in_book, "file": self.file, "sha256": self.sha256, "title": p.title,
                "front_title": p.front_title, "heading_title": p.heading_title, "headings": p.headings,
                "has_text": p.has_text, "preamble": p.preamble, "lines": p.lines,
                "entries": [{f: getattr(e, f) for f in _ENTRY_FIELDS} for e in p.entries]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Chapter:
        p = Parsed([Entry(**e) for e in d["entries"]], d["title"], d["front_title"], d["headings"], d["has_text"],
                   d["preamble"], d["heading_title"], d.get("lines", 0))
        return cls(d["in_book"], d["file"], d["sha256"], p)


def readable(name: str) -> str:
    """A file or folder name as a title: numeric prefix, extension and separators gone."""
    stem = name.rsplit(".", 1)[0] if name.lower().endswith((".md", ".markdown")) else name
    words = " ".join(_PREFIX.sub("", stem).replace("_", " ").replace("-", " ").split()) or stem
    return " ".join(w[:1].upper() + w[1:] for w in words.split()) if words.islower() else words


def _is_head(ch: Chapter, first_in_folder: bool) -> bool:
    path = PurePosixPath(ch.in_book)
    if not first_in_folder or len(path.parts) < 2:
        return False
    p = ch.parsed
    stub = p.headings <= 1 and not p.has_text
    return stub or path.stem.lower() in _INDEX_STEMS or bool(_ZERO.match(path.name))


def _wrap(local: list[Entry], ch: Chapter) -> list[Entry]:
    """One chapter node over a chapter's several top-level entries (see the module docstring)."""
    tops = [i for i, e in enumerate(local) if e.parent is None]
    if len(tops) <= 1:
        return local
    if ch.parsed.preamble:
        others = tops[1:]
    else:
        name = ch.parsed.front_title or readable(PurePosixPath(ch.in_book).name)
        node = Entry(title=name, level=1, page=None, origin="markdown", line=1)
        for e in local:
            e.parent = e.parent + 1 if e.parent is not None else None
        local = [node, *local]
        others = [i + 1 for i in tops]
    child_min = min(local[i].level for i in others)
    if child_min < 2:
        for e in local[1:]:
            e.level += 2 - child_min
        child_min = 2
    local[0].level = child_min - 1
    for i in others:
        local[i].parent = 0
    return local


def assemble(chapters: list[Chapter], folder_name: str, marker_title: str | None = None) -> Document:
    """The book's entries, in reading order, from its parsed chapters."""
    entries: list[Entry] = []
    heads: dict[tuple[str, ...], int] = {}  # folder inside the book -> the entry that heads it
    seen: set[tuple[str, ...]] = set()
    stubs: dict[tuple[str, ...], int] = {}  # folder -> its last heading-only chapter, while later files continue it
    for ch in chapters:
        folder = PurePosixPath(ch.in_book).parts[:-1]
        head = _is_head(ch, folder not in seen)
        seen.add(folder)
        above = folder[:-1] if head else folder
        parent = next((heads[above[:d]] for d in range(len(above), 0, -1) if above[:d] in heads), None)
        local = [dataclasses.replace(e) for e in ch.parsed.entries]
        if not local and head and ch.parsed.front_title:
            local = [Entry(title=ch.parsed.front_title, level=1, page=None, origin="markdown", line=1)]
        if not local:
            continue
        if not head:
            local = _wrap(local, ch)
            stub = stubs.pop(folder, None)
            if stub is not None and min(e.level for e in local) > entries[stub].level:
                parent = stub  # headings that continue across files: "# Classes", then "## Fighter"
                stubs[folder] = stub
            elif ch.parsed.headings == 1 and not ch.parsed.has_text and len(local) == 1:
                stubs[folder] = len(entries)
        base = entries[parent].level if parent is not None else 0
        shift = max(0, base + 1 - min(e.level for e in local))
        off = len(entries)
        for e in local:
            e.level += shift
            e.parent = off + e.parent if e.parent is not None else parent
            e.file = ch.file
        if head:
            heads[folder] = off
        entries.extend(local)
    title = marker_title or _root_title(chapters) or spelled_out(folder_name, entries) or readable(folder_name)
    entries = _without_labels(entries)
    return Document(format="md", title=title, pages=1, entries=book_entries(entries), page_texts=[],
                    lines=sum(ch.parsed.lines for ch in chapters))


def _without_labels(entries: list[Entry]) -> list[Entry]:
    """Without the run-in names that LABEL_CHAPTERS or more chapter files print (their text stays in
    their sections)."""
    files: dict[str, set[str | None]] = {}
    for e in entries:
        if e.origin == "runin":
            files.setdefault(norm(e.title), set()).add(e.file)
    labels = {t for t, fs in files.items() if len(fs) >= LABEL_CHAPTERS}
    if not labels:
        return entries
    parents = {e.parent for e in entries}
    return without(entries, [e.origin == "runin" and norm(e.title) in labels and i not in parents
                             for i, e in enumerate(entries)])


def _root_title(chapters: list[Chapter]) -> str | None:
    for ch in chapters:
        path = PurePosixPath(ch.in_book)
        if len(path.parts) == 1 and path.stem.lower() in _INDEX_STEMS:
            return ch.parsed.heading_title or ch.parsed.front_title
    return None


@dataclass(frozen=True)
class ChapterPlan:
    """One chapter to read, or to take from the last scan's parse when its hash is the same."""

    in_book: str
    path: str  # absolute
    file: str  # library-relative
    sha256: str
    cached: dict[str, Any] | None = None


@dataclass(frozen=True)
class BookPlan:
    folder_name: str
    chapters: tuple[ChapterPlan, ...]
    marker_title: str | None = None


def read_book(plan: BookPlan) -> Document:
    """Parse the chapters that changed, reuse the others, and join them (in a worker or the parent).
    `Document.chapters` carries every chapter's parse for the cache, with `read` set on those read now."""
    from pathlib import Path

    from gmtool.errors import GmtoolError
    from gmtool.index.extract.markdown import parse_chapter, read_text_file

    chapters: list[Chapter] = []
    read: set[str] = set()
    warnings: list[str] = []
    for cp in plan.chapters:
        if cp.cached is not None and cp.cached.get("sha256") == cp.sha256:
            chapters.append(Chapter.from_json(cp.cached))
            continue
        try:
            text = read_text_file(Path(cp.path))
        except GmtoolError as exc:
            warnings.append(f"{exc.code}: {cp.file}: {exc.message}")
            continue
        capped: list[str] = []
        parsed = parse_chapter(text, readable(Path(cp.path).name), capped)
        warnings += [w.replace(": ", f": {cp.file}: ", 1) for w in capped]  # ENTRIES_CAPPED, naming the chapter
        chapters.append(Chapter(cp.in_book, cp.file, cp.sha256, parsed))
        read.add(cp.file)
    doc = assemble(chapters, plan.folder_name, plan.marker_title)
    doc.chapters = [{**c.to_json(), "read": c.file in read} for c in chapters]
    doc.warnings.extend(warnings)
    return doc
