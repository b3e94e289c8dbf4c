"""The library-wide keyword index: what is tokenized, how it is cached per source, and how the
saved BM25 and title matrices are rebuilt for a manifest (writer side); readers load them."""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from gmtool.storage import layout
from gmtool.storage.checksums import Checksums, forget_folder, intact, record
from gmtool.types import Entry, SourceMeta

if TYPE_CHECKING:
    from gmtool.rank.bm25 import BM25Index, Tokenized
    from gmtool.rank.fuzzy import TitleMatcher
    from gmtool.storage import store

KEYWORD_VERSION = 17  # bump when the keyword documents, weights or side files change (17: a class's features stand alone; 16: copies share the name after a "Kind: " label; 15: a book's short forms read with their long forms; 14: rollups, an untyped heading under a rule stands alone unless it holds typed entries; 12: short texts word for word the same are copies; 5: Snowball stems; fields, pages, targets, copies in docs.json; 6: fields in a file of their own; 7: BM25 with Lucene's idf; 8: copies within one game system, short texts no evidence; 9: a book without an SRD edition is the system of its title; 10: a rule and an untyped section can be copies; 11: a long list's members stand alone, its own text is its lead)
TITLE_WEIGHT = 3.0


def keyword_digest(manifest: store.Manifest) -> str:
    h = hashlib.sha1(f"kw{KEYWORD_VERSION}".encode())
    for sid in sorted(manifest.sources):
        m = manifest.sources[sid]
        h.update(f"|{sid}:{m.sha256}:{m.entry_count}:{m.indexed_at}".encode())
    return h.hexdigest()[:16]


def _keyword_fields(entries: list[Entry]) -> dict[str, list[str]]:
    """Titles, and bodies with the book's short forms spelled out beside them (rank.abbrev)."""
    from gmtool.rank.abbrev import expander
    from gmtool.rank.units import own_bodies

    bodies = own_bodies(entries)
    expand = expander(bodies)
    return {"title": [e.title for e in entries], "body": [expand(b) for b in bodies]}


def doc_table(
    titles: list[str], types: list[str | None], fields: list[dict | None], pages: list[int | None], sources: list[str],
    texts: list[str], targets: list[int], bodies: list[str] | None = None, systems: list[str] | None = None,
    ends: list[int] | None = None, rollups: list[int] | None = None,
) -> dict[str, list]:
    """What queries read about every document without opening a source: title, type, typed
    fields, page, the entity a result names (`target`, rank.units.fold_targets, global ids),
    and its copy and namesake groups (see rank.copies; `texts` are entity texts). `members`
    lists each copy group's documents (library order), so folding a result's copies reads
    them instead of walking every document. `systems`: each document's game system (see
    rank.copies.book_system); copies never fold across two. `rollups`: the entity each document's
    evidence adds to (rank.units.rollup_targets; `targets` when not given)."""
    from gmtool.rank.copies import copy_groups

    copy, name = copy_groups(titles, types, sources, texts, fields, bodies, systems, ends)
    members: list[list[int]] = [[] for _ in range(max(copy, default=-1) + 1)]
    for gid, c in enumerate(copy):
        if c >= 0:
            members[c].append(gid)
    return {"titles": titles, "types": types, "fields": fields, "pages": pages, "target": targets,
            "rollup": rollups if rollups is not None else targets, "copy": copy, "name": name, "members": members}


def _build_keyword(entries: list[Entry]) -> tuple[BM25Index, TitleMatcher]:
    from gmtool.rank.bm25 import BM25Index
    from gmtool.rank.fuzzy import TitleMatcher

    bm25 = BM25Index.build(_keyword_fields(entries), weights={"title": TITLE_WEIGHT, "body": 1.0})
    fuzzy = TitleMatcher.build([e.title for e in entries])
    return bm25, fuzzy


# A source with less text than this is tokenized again when the keyword index is built rather than
# cached: reading an .npz back costs more than tokenizing ~4,000 characters (about 1 ms), and a
# library of 100,000 one-line notes would otherwise write and read 100,000 cache files.
TOKEN_CACHE_MIN_CHARS = 4_000


def worth_caching(entries: list[Entry]) -> bool:
    """Whether a source's tokens are worth a cache file (see TOKEN_CACHE_MIN_CHARS)."""
    total = 0
    for e in entries:
        total += len(e.title) + len(e.body)
        if total >= TOKEN_CACHE_MIN_CHARS:
            return True
    return False


def _token_cache(index_dir: Path, sid: str, meta: SourceMeta) -> Path:
    """Keyed by everything that makes the entries: the file's hash and when it was extracted."""
    key = hashlib.sha1(f"{meta.sha256}:{meta.entry_count}:{meta.indexed_at}".encode()).hexdigest()[:16]
    return layout.token_cache_file(index_dir, sid, key, KEYWORD_VERSION)


def load_tokens(index_dir: Path, sid: str, meta: SourceMeta) -> dict[str, Tokenized] | None:
    import numpy as np

    from gmtool.rank.bm25 import Tokenized

    try:
        with np.load(_token_cache(index_dir, sid, meta), allow_pickle=False) as z:
            return {f: Tokenized(z[f"{f}_vocab"].tolist(), z[f"{f}_cols"], z[f"{f}_lengths"]) for f in ("title", "body")}
    except (OSError, ValueError, KeyError):
        return None


def tokenize_entries(entries: list[Entry]) -> dict[str, Tokenized]:
    """Title and body tokens of one source (runs in the extraction workers when there are some)."""
    from gmtool.rank.bm25 import tokenize_block

    return {name: tokenize_block(texts) for name, texts in _keyword_fields(entries).items()}


def save_tokens(index_dir: Path, sid: str, meta: SourceMeta, toks: dict[str, Tokenized], durable: bool = True) -> Path:
    import io

    import numpy as np

    buf = io.BytesIO()
    arrays = {}
    for f, t in toks.items():
        arrays[f"{f}_vocab"] = np.array(t.vocab, dtype=str)
        arrays[f"{f}_cols"] = t.cols
        arrays[f"{f}_lengths"] = t.lengths
    np.savez(buf, **arrays)  # type: ignore[arg-type]
    from gmtool.storage import store

    path = _token_cache(index_dir, sid, meta)
    store.atomic_write(path, buf.getvalue(), durable)
    return path


def _source_tokens(index_dir: Path, sid: str, meta: SourceMeta, entries: list[Entry],
                   sums: Checksums) -> dict[str, Tokenized]:
    """A source's title and body tokens: from its cache (when it matches its checksum), else tokenized
    now (and cached, unless small)."""
    if not worth_caching(entries):
        return tokenize_entries(entries)
    cache = _token_cache(index_dir, sid, meta)
    toks = load_tokens(index_dir, sid, meta) if intact(sums, index_dir, cache) else None
    if toks is None or len(toks["title"].lengths) != len(entries):
        toks = tokenize_entries(entries)
        record(sums, index_dir, save_tokens(index_dir, sid, meta, toks))
    return toks


def build_keyword_index(index_dir: Path, manifest: store.Manifest) -> None:
    """Writer side: build and persist the library-wide keyword index for this manifest.

    Each source's tokens are cached beside the index, so a change to one book re-tokenizes
    only that book; the library-wide matrix is then a cheap merge."""
    digest = keyword_digest(manifest)
    kdir = layout.keyword_dir(index_dir)
    bm25_path, fuzzy_path = layout.keyword_files(index_dir, digest)
    if manifest.state.keyword == digest and bm25_path.exists():
        return
    from gmtool.rank.bm25 import BM25Index
    from gmtool.rank.copies import book_system, entity_texts, subtree_ends
    from gmtool.rank.fuzzy import TitleMatcher
    from gmtool.rank.units import fold_targets, rollup_targets
    from gmtool.storage import store

    titles: list[str] = []
    types: list[str | None] = []
    fields: list[dict | None] = []
    pages: list[int | None] = []
    sources: list[str] = []
    texts: list[str] = []
    bodies: list[str] = []
    systems: list[str] = []
    ends: list[int] = []
    targets: list[int] = []
    rollups: list[int] = []
    blocks: dict[str, list[Tokenized]] = {"title": [], "body": []}
    keep: set[str] = set()
    for sid in sorted(manifest.sources):
        meta = manifest.sources[sid]
        entries = store.load_source(index_dir, sid, meta.sha256).entries
        titles.extend(e.title for e in entries)
        types.extend(e.content_type for e in entries)
        fields.extend(e.fields or None for e in entries)
        pages.extend(e.page for e in entries)
        sources.extend(sid for _ in entries)
        texts.extend(entity_texts([e.body for e in entries], [e.parent for e in entries]))
        bodies.extend(e.body for e in entries)
        system = book_system(sid, meta.title, [e.body for e in entries])
        systems.extend(system for _ in entries)
        ends.extend(len(titles) - len(entries) + end for end in subtree_ends([e.parent for e in entries]))
        targets.extend(len(titles) - len(entries) + t for t in fold_targets(entries))
        rollups.extend(len(titles) - len(entries) + t for t in rollup_targets(entries))
        toks = _source_tokens(index_dir, sid, meta, entries, manifest.state.checksums)
        for f in blocks:
            blocks[f].append(toks[f])
        keep.add(_token_cache(index_dir, sid, meta).name)
    bm25 = BM25Index.build_tokenized(blocks, len(titles), weights={"title": TITLE_WEIGHT, "body": 1.0})
    fuzzy = TitleMatcher.build(titles)
    _prune(index_dir, layout.tokens_dir(index_dir), keep)
    kdir.mkdir(parents=True, exist_ok=True)
    bm25.save(bm25_path)
    fuzzy.save(fuzzy_path)
    docs = layout.keyword_docs_file(index_dir, digest)
    fields_file = layout.keyword_fields_file(index_dir, digest)
    table = doc_table(titles, types, fields, pages, sources, texts, targets, bodies, systems, ends, rollups)
    # The typed fields are half the bytes and are read only by --where and `ask`: a plain search
    # parses the rest alone.
    store.atomic_write(fields_file, store.dumps(table.pop("fields")))
    store.atomic_write(docs, store.dumps(table))
    sums = manifest.state.checksums
    forget_folder(sums, layout.KEYWORD_DIR)
    forget_folder(sums, layout.TOKENS_DIR, keep)  # the caches `_prune` deleted
    record(sums, index_dir, bm25_path, fuzzy_path, docs, fields_file)
    manifest.state.keyword = digest
    store.save_manifest(index_dir, manifest)
    _prune(index_dir, kdir, {p.name for p in (bm25_path, fuzzy_path, docs, fields_file)})


def _prune(index_dir: Path, folder: Path, keep: set[str]) -> None:
    """Delete our files in `folder` that this manifest no longer uses (never anyone else's)."""
    if not folder.is_dir():
        return
    for old in folder.iterdir():
        if old.name not in keep and layout.is_ours(old, index_dir):
            with contextlib.suppress(OSError):
                old.unlink()
