"""The read side: a consistent, in-memory snapshot of an index, built once and reused.

Readers never lock. They read the manifest, then each source file it names, and check
that the file carries the hash the manifest expects; a writer that replaced a file in
between makes the check fail, and the snapshot is simply read again.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gmtool.errors import GmtoolError
from gmtool.rank.keyword import keyword_digest
from gmtool.storage import layout
from gmtool.storage.checksums import intact
from gmtool.storage.hits import HitsFile, load_hits
from gmtool.storage.manifest import load_manifest, manifest_stamp
from gmtool.storage.sources import SourceRecord, load_source
from gmtool.types import Entry, SourceMeta

if TYPE_CHECKING:
    import numpy as np

    from gmtool.rank.bm25 import BM25Index
    from gmtool.rank.fuzzy import TitleMatcher

class _Records(Mapping[str, SourceRecord]):
    """Source records, read from disk on first use, so a search opens only the books it shows."""

    def __init__(self, lib: Library) -> None:
        self._lib = lib

    def __getitem__(self, sid: str) -> SourceRecord:
        rec = self._lib.record(sid)
        if rec is None:
            raise KeyError(sid)
        return rec

    def __iter__(self) -> Iterator[str]:
        return (sid for sid in self._lib.metas if self._lib.record(sid) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def distinct_titles(metas: dict[str, SourceMeta]) -> dict[str, SourceMeta]:
    """Books that share a title (two PDFs both titled "The Black Hack -- English") told apart
    ("The Black Hack -- English (additional-things-english-v1.0.pdf)"):
    the one whose file is named after the title keeps it, else the one indexed first; each other
    one (not a copy of the same file) gets its file name after the title. Only the copies in memory change; the index keeps
    what the files say."""
    from gmtool.textnorm import slugify

    groups: dict[str, list[SourceMeta]] = {}
    for m in metas.values():
        groups.setdefault(" ".join(m.title.lower().split()), []).append(m)
    out = dict(metas)
    for same in groups.values():
        if len(same) < 2:
            continue
        slug = slugify(same[0].title)
        named = sorted(same, key=partial(_title_order, slug))
        for m in named[1:]:
            if m.sha256 == named[0].sha256:
                continue  # a copy of the same file: search folds it ("also in"), nothing to tell apart
            out[m.source_id] = replace(m, title=f"{m.title} ({Path(m.file).name})")
    return out


def _title_order(title_slug: str, m: SourceMeta) -> tuple[int, str, str]:
    """Who keeps a shared title: a file named exactly after it, then one whose name starts with
    it, then the one indexed first."""
    from gmtool.textnorm import slugify

    stem = slugify(Path(m.file).stem)
    return (0 if stem == title_slug else 1 if stem.startswith(title_slug) else 2), m.indexed_at, m.file


class Library:
    """All indexed sources, flattened: global doc `gid` is entry `gid - offsets[sid]` of `source_of(gid)`.

    The layout (which documents belong to which source) comes from the manifest alone, so the
    persisted keyword index can answer before any source file is read; a source is read when a
    result needs it, and then only the entries it needs, from the source's hits file, unless the
    whole source is already in memory. A damaged source keeps its place (as empty entries) and
    yields no results, only a warning, until the next scan rebuilds it.
    """

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = index_dir
        self.stamp = manifest_stamp(self.index_dir)
        self.manifest = load_manifest(self.index_dir)
        self.warnings: list[str] = []
        self.metas: dict[str, SourceMeta] = distinct_titles(dict(sorted(self.manifest.sources.items())))
        self.offsets: dict[str, int] = {}
        n = 0
        for sid, meta in self.metas.items():
            self.offsets[sid] = n
            n += meta.entry_count
        self.n_docs = n
        self._sids = list(self.offsets)
        self._starts = list(self.offsets.values())
        self._loaded: dict[str, SourceRecord | None] = {}
        self._hits: dict[str, HitsFile | None] = {}
        self.records = _Records(self)
        self._entries: list[Entry] | None = None
        self._keyword: tuple[BM25Index, TitleMatcher] | None = None
        self._mapped: list[tuple[Path, os.stat_result]] = []  # the mapped keyword files, as loaded
        self._docs: dict[str, list] | None = None
        self._source_idx: np.ndarray | None = None
        self.cache: dict[str, object] = {}  # derived arrays that rankers build once per snapshot

    def record(self, sid: str) -> SourceRecord | None:
        """One source, or None (with a warning) when its index file is damaged or changed under us."""
        if sid not in self._loaded:
            meta = self.metas[sid]
            rec: SourceRecord | None = None
            try:
                rec = load_source(self.index_dir, sid, meta.sha256)
                if len(rec.entries) != meta.entry_count:
                    raise GmtoolError("INDEX_CORRUPT", f"index file for '{sid}' does not match the manifest",
                                      "run `gmtool scan` to rebuild it")
            except GmtoolError as exc:
                rec = None
                self.warnings.append(f"{exc.code}: {exc.message}; {exc.hint}")
            self._loaded[sid] = rec
        return self._loaded[sid]

    def _hits_of(self, sid: str) -> HitsFile | None:
        """The source's hits file, while its full record is not loaded; None: use the record."""
        if sid in self._loaded:
            return None
        if sid not in self._hits:
            meta = self.metas[sid]
            self._hits[sid] = load_hits(self.index_dir, sid, meta.sha256, meta.entry_count)
        return self._hits[sid]

    def _hit_entry(self, sid: str, i: int) -> Entry | None:
        """Entry `i` of a source from its hits file; None when there is none (or it is damaged:
        then the full record is read from now on)."""
        hits = self._hits_of(sid)
        if hits is None:
            return None
        try:
            return hits.entry(i)
        except (ValueError, TypeError, KeyError, IndexError):
            self._hits[sid] = None
            return None

    def require(self, sid: str) -> SourceRecord:
        """One source for a command that cannot do without it (toc, show): damaged is an error."""
        rec = self.record(sid)
        if rec is None:
            raise GmtoolError("INDEX_CORRUPT", f"the index of '{sid}' is damaged", "run `gmtool scan` to rebuild it")
        return rec

    @property
    def entries(self) -> list[Entry]:
        """Every entry of every source (damaged sources as empty placeholders), in layout order."""
        if self._entries is None:
            out: list[Entry] = []
            for sid, meta in self.metas.items():
                rec = self.record(sid)
                if rec is not None:
                    out.extend(rec.entries)
                else:
                    out.extend(Entry(title="", level=1, page=1) for _ in range(meta.entry_count))
            self._entries = out
        return self._entries

    def source_of(self, gid: int) -> str:
        import bisect

        return self._sids[bisect.bisect_right(self._starts, gid) - 1]

    def entry(self, gid: int) -> Entry | None:
        """Global doc `gid`, reading only its own source; None when that source is damaged."""
        sid = self.source_of(gid)
        if self._entries is not None:
            return self._entries[gid] if self._loaded.get(sid) is not None else None
        e = self._hit_entry(sid, gid - self.offsets[sid])
        if e is not None:
            return e
        rec = self.record(sid)
        return rec.entries[gid - self.offsets[sid]] if rec is not None else None

    def is_current(self) -> bool:
        return manifest_stamp(self.index_dir) == self.stamp

    def _persisted(self) -> str | None:
        digest = keyword_digest(self.manifest)
        return digest if self.manifest.state.keyword == digest else None

    def keyword(self) -> tuple[BM25Index, TitleMatcher]:
        """The persisted keyword index when it matches this snapshot, else one built in memory.

        The saved matrices are memory-mapped. Writers never change them in place (a new index
        gets new names), but something else might truncate one, and reading a mapped page past
        the end kills the process (SIGBUS): each use first checks the files are whole, and a
        shrunken one is read again (then found damaged)."""
        if self._keyword is not None and not self._mapped_whole():
            self._keyword = None
        if self._keyword is None:
            digest = self._persisted()
            loaded = None
            if digest:
                with contextlib.suppress(GmtoolError, OSError, ValueError):
                    from gmtool.rank.bm25 import BM25Index
                    from gmtool.rank.fuzzy import TitleMatcher

                    bm25_path, fuzzy_path = layout.keyword_files(self.index_dir, digest)
                    sums = self.manifest.state.checksums
                    if not all(intact(sums, self.index_dir, p) for p in (bm25_path, fuzzy_path)):
                        raise ValueError("the keyword index does not match its checksums")
                    self._mapped = [(p, os.stat(p)) for p in (bm25_path, fuzzy_path)]
                    bm25 = BM25Index.load(bm25_path, mapped=True)
                    fuzzy = TitleMatcher.load(fuzzy_path, mapped=True)
                    if bm25.n_docs == self.n_docs:
                        loaded = (bm25, fuzzy)
            if loaded is None and self.n_docs:
                self.warnings.append(
                    "KEYWORD_STALE: the saved keyword index is missing or out of date, so it was rebuilt in "
                    "memory for this query; run `gmtool scan` to save it and make searches fast again"
                )
            if loaded is None:
                from gmtool.rank.keyword import _build_keyword

                loaded = _build_keyword(self.entries)
            self._keyword = loaded
        return self._keyword

    def _mapped_whole(self) -> bool:
        for path, was in self._mapped:
            try:
                now = os.stat(path)
            except OSError:
                continue  # replaced or removed: the mapping keeps the version it was made of
            if (now.st_ino, now.st_dev) == (was.st_ino, was.st_dev) and now.st_size < was.st_size:
                self._mapped = []
                return False
        return True

    def titles_and_types(self) -> tuple[list[str], list[str | None]]:
        """Every document's title and content type, from the small file beside the keyword index
        (so filters and exact-title checks need no source file), else from the entries."""
        docs = self.doc_table()
        return docs["titles"], docs["types"]

    def doc_fields(self) -> list[dict | None]:
        """Every document's typed fields (or None): ranking and filters read them without opening a source.
        They are saved apart from the doc table (only filters and `ask` need them) and read on first use."""
        docs = self.doc_table()
        if "fields" not in docs:
            fields = self._saved("fields", layout.keyword_fields_file)
            if fields is None:  # the fields file is missing or damaged: the whole table from the entries
                docs = self._docs = self._table_from_entries()
            else:
                docs["fields"] = fields
        return docs["fields"]

    def doc_table(self) -> dict[str, list]:
        """Per document: titles, types, pages, copy and name groups (see rank.keyword.doc_table),
        from the file beside the keyword index, else from the entries; `doc_fields` adds the fields."""
        if self._docs is None:
            docs = self._saved("docs", layout.keyword_docs_file)
            self._docs = docs if docs is not None else self._table_from_entries()
        return self._docs

    def _saved(self, what: str, where: Callable[[Path, str], Path]) -> Any:
        """The saved docs table (`what` "docs") or fields list when they match this snapshot, else None."""
        digest = self._persisted()
        if not digest:
            return None
        path = where(self.index_dir, digest)
        if not intact(self.manifest.state.checksums, self.index_dir, path):
            return None  # damaged: built from the entries instead, until a scan writes it again
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            import orjson

            data = orjson.loads(path.read_bytes())
            if what == "fields":
                return data if isinstance(data, list) and len(data) == self.n_docs else None
            keys = ("titles", "types", "pages", "target", "rollup", "copy", "name")
            members = data["members"]
            if all(len(data[k]) == self.n_docs for k in keys) and len(members) == max(data["copy"], default=-1) + 1:
                return {**{k: data[k] for k in keys}, "members": members}
        return None

    def _table_from_entries(self) -> dict[str, list]:
        from gmtool.rank.copies import book_system, entity_texts, subtree_ends
        from gmtool.rank.keyword import doc_table
        from gmtool.rank.units import fold_targets, rollup_targets

        es = self.entries
        sources: list[str] = []
        texts: list[str] = []
        targets: list[int] = []
        rollups: list[int] = []
        systems: list[str] = []
        ends: list[int] = []
        for sid, m in self.metas.items():
            sources.extend(sid for _ in range(m.entry_count))
            off = self.offsets[sid]
            mine = es[off : off + m.entry_count]
            texts.extend(entity_texts([e.body for e in mine], [e.parent for e in mine]))
            targets.extend(off + t for t in fold_targets(mine))
            rollups.extend(off + t for t in rollup_targets(mine))
            system = book_system(sid, self.manifest.sources[sid].title, [e.body for e in mine])  # as printed
            systems.extend(system for _ in mine)
            ends.extend(off + end for end in subtree_ends([e.parent for e in mine]))
        return doc_table([e.title for e in es], [e.content_type for e in es], [e.fields or None for e in es],
                         [e.page for e in es], sources, texts, targets, [e.body for e in es], systems, ends,
                         rollups)

    def copy_members(self) -> list[list[int]]:
        """Copy group -> its documents (library order), for folding rows (see rank.keyword.doc_table)."""
        return self.doc_table()["members"]

    def source_index(self) -> np.ndarray:
        """Per global doc, the position of its source in `sorted(self.metas)`."""
        if self._source_idx is None:
            import numpy as np

            counts = [m.entry_count for m in self.metas.values()]
            self._source_idx = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
        return self._source_idx

    def section_path(self, gid: int) -> list[str]:
        sid = self.source_of(gid)
        hits = self._hits_of(sid)
        if hits is not None:
            found = self._hits_path(sid, hits, gid - self.offsets[sid])
            if found is not None:
                return found
        rec = self.record(sid)
        if rec is None:
            return []
        entries = rec.entries
        path: list[str] = []
        parent = entries[gid - self.offsets[sid]].parent
        while parent is not None and len(path) < 12:
            path.append(entries[parent].title)
            parent = entries[parent].parent
        return list(reversed(path))

    def _hits_path(self, sid: str, hits: HitsFile, i: int) -> list[str] | None:
        path: list[str] = []
        parent = hits.parents[i]
        while parent is not None and len(path) < 12:
            e = self._hit_entry(sid, parent)
            if e is None:
                return None
            path.append(e.title)
            parent = hits.parents[parent]
        return list(reversed(path))

    def page_label(self, sid: str, page: int | None) -> str | None:
        if page is None:  # Markdown/text
            return None
        hits = self._hits_of(sid)
        if hits is not None:
            labels = hits.page_labels
        else:
            rec = self.record(sid)
            labels = rec.page_labels if rec is not None else None
        if labels and 0 < page <= len(labels):
            return labels[page - 1]
        return None
