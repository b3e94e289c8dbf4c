"""The read side: a consistent, in-memory snapshot of an index, built once and reused.

Readers never lock. They read the manifest, then each source file it names, and check
that the file carries the hash the manifest expects; a writer that replaced a file in
between makes the check fail, and the snapshot is simply read again.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from . import store
from .errors import GmtoolError
from .types import Entry, SourceMeta

if TYPE_CHECKING:
    import numpy as np

    from .rank.bm25 import BM25Index, Tokenized
    from .rank.fuzzy import TitleMatcher

KEYWORD_VERSION = 1  # bump when the keyword documents or weights change
TITLE_WEIGHT = 3.0


def keyword_digest(manifest: store.Manifest) -> str:
    h = hashlib.sha1(f"kw{KEYWORD_VERSION}".encode())
    for sid in sorted(manifest.sources):
        m = manifest.sources[sid]
        h.update(f"|{sid}:{m.sha256}:{m.entry_count}:{m.indexed_at}".encode())
    return h.hexdigest()[:16]


def _keyword_fields(entries: list[Entry]) -> dict[str, list[str]]:
    return {"title": [e.title for e in entries], "body": [e.body for e in entries]}


def _build_keyword(entries: list[Entry]) -> tuple[BM25Index, TitleMatcher]:
    from .rank.bm25 import BM25Index
    from .rank.fuzzy import TitleMatcher

    bm25 = BM25Index.build(_keyword_fields(entries), weights={"title": TITLE_WEIGHT, "body": 1.0})
    fuzzy = TitleMatcher.build([e.title for e in entries])
    return bm25, fuzzy


def _token_cache(index_dir: Path, sid: str, meta: SourceMeta) -> Path:
    """Keyed by everything that makes the entries: the file's hash and when it was extracted."""
    key = hashlib.sha1(f"{meta.sha256}:{meta.entry_count}:{meta.indexed_at}".encode()).hexdigest()[:16]
    return index_dir / "tokens" / f"{sid}.{key}.v{KEYWORD_VERSION}.npz"


def _source_tokens(index_dir: Path, sid: str, meta: SourceMeta, entries: list[Entry]) -> dict[str, Tokenized]:
    """A source's title and body tokens: from its cache, else tokenized now and cached."""
    import io

    import numpy as np

    from .rank.bm25 import Tokenized, tokenize_block

    path = _token_cache(index_dir, sid, meta)
    try:
        with np.load(path, allow_pickle=False) as z:
            return {f: Tokenized(z[f"{f}_vocab"].tolist(), z[f"{f}_cols"], z[f"{f}_lengths"]) for f in ("title", "body")}
    except (OSError, ValueError, KeyError):
        pass
    out = {name: tokenize_block(texts) for name, texts in _keyword_fields(entries).items()}
    buf = io.BytesIO()
    arrays = {}
    for f, t in out.items():
        arrays[f"{f}_vocab"] = np.array(t.vocab, dtype=str)
        arrays[f"{f}_cols"] = t.cols
        arrays[f"{f}_lengths"] = t.lengths
    np.savez(buf, **arrays)  # type: ignore[arg-type]
    store.atomic_write(path, buf.getvalue())
    return out


def build_keyword_index(index_dir: Path, manifest: store.Manifest) -> None:
    """Writer side: build and persist the library-wide keyword index for this manifest.

    Each source's tokens are cached beside the index, so a change to one book re-tokenizes
    only that book; the library-wide matrix is then a cheap merge."""
    digest = keyword_digest(manifest)
    kdir = index_dir / "keyword"
    if manifest.extra.get("keyword") == digest and (kdir / f"{digest}.bm25").exists():
        return
    from .rank.bm25 import BM25Index
    from .rank.fuzzy import TitleMatcher

    titles: list[str] = []
    blocks: dict[str, list[Tokenized]] = {"title": [], "body": []}
    keep: set[str] = set()
    for sid in sorted(manifest.sources):
        meta = manifest.sources[sid]
        entries = store.load_source(index_dir, sid, meta.sha256).entries
        titles.extend(e.title for e in entries)
        toks = _source_tokens(index_dir, sid, meta, entries)
        if len(toks["title"].lengths) != len(entries):  # a damaged cache: tokenize again
            _token_cache(index_dir, sid, meta).unlink(missing_ok=True)
            toks = _source_tokens(index_dir, sid, meta, entries)
        for f in blocks:
            blocks[f].append(toks[f])
        keep.add(_token_cache(index_dir, sid, meta).name)
    bm25 = BM25Index.build_tokenized(blocks, len(titles), weights={"title": TITLE_WEIGHT, "body": 1.0})
    fuzzy = TitleMatcher.build(titles)
    tdir = index_dir / "tokens"
    if tdir.is_dir():
        for old in tdir.iterdir():
            if old.name not in keep:
                with contextlib.suppress(OSError):
                    old.unlink()
    kdir.mkdir(parents=True, exist_ok=True)
    bm25.save(kdir / f"{digest}.bm25")
    fuzzy.save(kdir / f"{digest}.fuzzy")
    manifest.extra["keyword"] = digest
    store.save_manifest(index_dir, manifest)
    for old in kdir.iterdir():
        if not old.name.startswith(digest):
            with contextlib.suppress(OSError):
                old.unlink()


class Library:
    """All indexed sources, flattened: global doc i is entry `doc_entry[i]` of `doc_source[i]`."""

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = index_dir
        for attempt in range(3):
            try:
                self._load()
                break
            except GmtoolError as exc:
                if exc.code != "INDEX_STALE" or attempt == 2:
                    raise

    def _load(self) -> None:
        self.stamp = store.manifest_stamp(self.index_dir)
        self.manifest = store.load_manifest(self.index_dir)
        self.warnings: list[str] = []
        self.metas: dict[str, SourceMeta] = {}
        self.records: dict[str, store.SourceRecord] = {}
        self.entries: list[Entry] = []
        self.doc_source: list[str] = []
        self.doc_entry: list[int] = []
        self.offsets: dict[str, int] = {}
        for sid in sorted(self.manifest.sources):
            meta = self.manifest.sources[sid]
            try:
                rec = store.load_source(self.index_dir, sid, meta.sha256)
            except GmtoolError as exc:
                if exc.code == "INDEX_STALE":
                    raise
                self.warnings.append(f"{exc.code}: {exc.message}; {exc.hint}")
                continue
            self.metas[sid] = rec.meta
            self.records[sid] = rec
            self.offsets[sid] = len(self.entries)
            self.entries.extend(rec.entries)
            self.doc_source.extend([sid] * len(rec.entries))
            self.doc_entry.extend(range(len(rec.entries)))
        self._keyword: tuple[BM25Index, TitleMatcher] | None = None
        self._source_idx: np.ndarray | None = None
        self.cache: dict[str, object] = {}  # derived arrays that rankers build once per snapshot

    def is_current(self) -> bool:
        return store.manifest_stamp(self.index_dir) == self.stamp

    @property
    def n_docs(self) -> int:
        return len(self.entries)

    def keyword(self) -> tuple[BM25Index, TitleMatcher]:
        """The persisted keyword index when it matches this snapshot, else one built in memory."""
        if self._keyword is None:
            digest = keyword_digest(self.manifest)
            kdir = self.index_dir / "keyword"
            loaded = None
            if not self.warnings and self.manifest.extra.get("keyword") == digest:
                with contextlib.suppress(GmtoolError, OSError, ValueError):
                    from .rank.bm25 import BM25Index
                    from .rank.fuzzy import TitleMatcher

                    bm25 = BM25Index.load(kdir / f"{digest}.bm25")
                    fuzzy = TitleMatcher.load(kdir / f"{digest}.fuzzy")
                    if bm25.n_docs == self.n_docs:
                        loaded = (bm25, fuzzy)
            self._keyword = loaded or _build_keyword(self.entries)
        return self._keyword

    def source_index(self) -> np.ndarray:
        """Per global doc, the position of its source in `sorted(self.metas)`."""
        if self._source_idx is None:
            import numpy as np

            order = {sid: i for i, sid in enumerate(sorted(self.metas))}
            self._source_idx = np.fromiter((order[s] for s in self.doc_source), dtype=np.int32, count=self.n_docs)
        return self._source_idx

    def section_path(self, gid: int) -> list[str]:
        sid = self.doc_source[gid]
        entries = self.records[sid].entries
        path: list[str] = []
        parent = entries[self.doc_entry[gid]].parent
        while parent is not None and len(path) < 12:
            path.append(entries[parent].title)
            parent = entries[parent].parent
        return list(reversed(path))

    def page_label(self, sid: str, page: int) -> str | None:
        labels = self.records[sid].page_labels
        if labels and 0 < page <= len(labels):
            return labels[page - 1]
        return None
