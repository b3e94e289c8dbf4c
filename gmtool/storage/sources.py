"""Per-source index files: INDEX_DIR/index/SID.index.json (entries) and SID.pages.json (page texts),
and SID.hits.jsonl, the same entries each readable alone (see storage.hits).

Crash safety comes from ordering: source files are replaced atomically first, the manifest
(which names every source and its content hash) is replaced last. A reader trusts only what
the manifest names, and checks that each source file carries the hash the manifest expects.
Before a source file is replaced, the version the manifest still names is kept as a hard
link (`SID.prev.*.json`), so a run killed between the two renames leaves the previous index
readable; the next writer run finishes the work and sweeps what the killed one left.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson

from gmtool import __version__
from gmtool.errors import IndexError_
from gmtool.storage.atomic import atomic_write, is_temp_name, no_space_is_disk_full, temp_name
from gmtool.storage.hits import HITS_MIN_ENTRIES, load_hits, save_hits
from gmtool.storage.layout import (
    SOURCES_DIR,
    chapters_file,
    hits_file,
    owned_names,
    pages_file,
    prev_file,
    source_file,
    unit_index_file,
    vector_files,
)
from gmtool.storage.manifest import FORMAT_VERSION, Manifest, dumps, loads
from gmtool.types import Document, Entry, SourceMeta


class SourceRecord:
    """A loaded source: its metadata, entries and page labels."""

    __slots__ = ("entries", "meta", "page_labels")

    def __init__(self, meta: SourceMeta, entries: list[Entry], page_labels: list[str] | None) -> None:
        self.meta = meta
        self.entries = entries
        self.page_labels = page_labels


def _keep_prev(path: Path) -> bool:
    """Hard-link the current file aside, so it stays readable after `path` is replaced.

    An existing kept version is left alone: `sweep` only leaves one in place when it is the
    version the manifest names (and `path` is not). True when a version was kept now.
    """
    prev = prev_file(path)
    if prev.exists():
        return False
    tmp = temp_name(prev)
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    try:
        with no_space_is_disk_full(prev):
            try:
                os.link(path, tmp)
            except FileNotFoundError:
                return False
            except OSError:  # no hard links on this file system: copy
                shutil.copyfile(path, tmp)
            os.replace(tmp, prev)  # a rename can fail on a full disk too: never leave the temp file
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return True


def _load_pages_at(path: Path, sha256: str) -> list[str] | None:
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("sha256") != sha256:
        return None
    texts = data.get("page_texts")
    return [str(t) for t in texts] if isinstance(texts, list) else None


def pages_sound(index_dir: Path, source_id: str, sha256: str) -> bool:
    """The page-text file exists, parses and belongs to this version of the file."""
    return _load_pages_at(pages_file(index_dir, source_id), sha256) is not None


def load_pages(index_dir: Path, source_id: str, sha256: str) -> list[str]:
    """Page texts of one source; empty when missing or written for another file version."""
    path = pages_file(index_dir, source_id)
    texts = _load_pages_at(path, sha256)
    if texts is None:
        texts = _load_pages_at(prev_file(path), sha256)
    return texts or []


def save_source(index_dir: Path, meta: SourceMeta, doc: Document, durable: bool = True) -> None:
    payload = {
        "format_version": FORMAT_VERSION,
        "gmtool_version": __version__,
        "meta": asdict(meta),
        "entries": doc.entries,  # orjson writes each as its asdict(), without the deep copy (see storage.hits)
        "page_labels": doc.page_labels,
    }
    # Page texts go in a file of their own: searches never need them, so loads stay fast.
    pages = {"format_version": FORMAT_VERSION, "sha256": meta.sha256, "page_texts": doc.page_texts}
    for path, data in ((pages_file(index_dir, meta.source_id), pages), (source_file(index_dir, meta.source_id), payload)):
        kept = _keep_prev(path)
        try:
            atomic_write(path, dumps(data), durable)
        except BaseException:
            if kept:  # `path` is still the version the manifest names: no copy needed
                prev_file(path).unlink(missing_ok=True)
            raise
    # Last: until the manifest names the new version, readers find the new hits file's hash
    # wrong and read the full index file (or, before this write, the old hits file, still right).
    if len(doc.entries) >= HITS_MIN_ENTRIES:
        save_hits(index_dir, meta.source_id, meta.sha256, doc.entries, doc.page_labels, durable)
    else:
        hits_file(index_dir, meta.source_id).unlink(missing_ok=True)


def ensure_hits(index_dir: Path, meta: SourceMeta) -> bool:
    """Writers, for a source kept as it is: write its hits file when it is missing or stale (an
    index of an older gmtool), from the full index file. True when it was written."""
    if meta.entry_count < HITS_MIN_ENTRIES or load_hits(index_dir, meta.source_id, meta.sha256,
                                                        meta.entry_count) is not None:
        return False
    rec = load_source(index_dir, meta.source_id, meta.sha256, fallback=False)
    save_hits(index_dir, meta.source_id, meta.sha256, rec.entries, rec.page_labels)
    return True


def roll_back(index_dir: Path, source_id: str, known: bool) -> None:
    """The manifest naming a new version could not be written (a full disk): put back the version it
    still names, kept beside it, or (`known` False: a source it never named) remove the new files."""
    if not known:
        remove_source(index_dir, source_id)
        return
    for path in (source_file(index_dir, source_id), pages_file(index_dir, source_id)):
        with contextlib.suppress(FileNotFoundError):
            os.replace(prev_file(path), path)
    hits_file(index_dir, source_id).unlink(missing_ok=True)  # the next writer writes it again


def drop_prev(index_dir: Path, source_id: str) -> None:
    """Once the manifest names the new version, the kept previous one is not needed."""
    for path in (source_file(index_dir, source_id), pages_file(index_dir, source_id)):
        with contextlib.suppress(FileNotFoundError):
            prev_file(path).unlink()


def load_source(
    index_dir: Path, source_id: str, expect_sha: str | None = None, fallback: bool = True
) -> SourceRecord:
    """Load one source; INDEX_MISSING / INDEX_CORRUPT / INDEX_VERSION / INDEX_STALE otherwise.

    With `expect_sha` and `fallback`, a file a killed writer replaced ahead of the manifest is
    read from the previous version it kept (readers); `fallback=False` sees only the file
    itself (writers and verify, which must notice and repair it).
    """
    path = source_file(index_dir, source_id)
    try:
        return _load_source_at(path, source_id, expect_sha)
    except IndexError_:
        prev = prev_file(path)
        if not fallback or expect_sha is None or not prev.exists():
            raise
        with contextlib.suppress(IndexError_):
            return _load_source_at(prev, source_id, expect_sha)
        raise


def _corrupt(source_id: str) -> IndexError_:
    return IndexError_("INDEX_CORRUPT", f"index file for '{source_id}' is corrupt", "run `gmtool scan` to rebuild it")


def _load_source_at(path: Path, source_id: str, expect_sha: str | None) -> SourceRecord:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise IndexError_(
            "INDEX_MISSING", f"index file for '{source_id}' is missing", "run `gmtool scan` to rebuild it"
        ) from None
    try:
        data = loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not an object")
    except ValueError:
        raise _corrupt(source_id) from None
    if data.get("format_version") != FORMAT_VERSION:
        raise IndexError_(
            "INDEX_VERSION",
            f"index file for '{source_id}' has format {data.get('format_version')}, expected {FORMAT_VERSION}",
            "run `gmtool scan` to rebuild it",
        )
    try:
        meta = SourceMeta(**data["meta"])
        entries = [Entry(**e) for e in data["entries"]]
    except (KeyError, TypeError):
        raise _corrupt(source_id) from None
    if expect_sha is not None and meta.sha256 != expect_sha:
        raise IndexError_(
            "INDEX_STALE", f"index file for '{source_id}' does not match the manifest", "run `gmtool scan`"
        )
    return SourceRecord(meta, entries, data.get("page_labels"))


def remove_source(index_dir: Path, source_id: str) -> None:
    """Every file of one source: index, page texts, kept versions, hits and vectors."""
    paths: list[Path] = []
    for path in (source_file(index_dir, source_id), pages_file(index_dir, source_id)):
        paths += [path, prev_file(path)]
    paths += [hits_file(index_dir, source_id), chapters_file(index_dir, source_id), *vector_files(index_dir, source_id), unit_index_file(index_dir, source_id)]
    for p in paths:
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


def _sound(path: Path, source_id: str, sha256: str) -> bool:
    if path.name.endswith(".pages.json"):
        return _load_pages_at(path, sha256) is not None
    try:
        _load_source_at(path, source_id, sha256)
    except IndexError_:
        return False
    return True


def _leftover(folder: str, name: str, index_dir: Path, manifest: Manifest) -> bool:
    """A file of ours that a killed run left behind: a temp file, an index file of a source the
    manifest does not name, or a kept previous version, except where the kept one is what the
    manifest names and the current file is not. Decided on the name alone for all but the last."""
    if is_temp_name(name):
        return True
    if folder != SOURCES_DIR:
        return False
    sid, _, rest = name.partition(".")
    meta = manifest.sources.get(sid)
    if meta is None:
        return True
    if not rest.startswith("prev."):
        return False
    path = index_dir / folder / name
    cur = path.with_name(f"{sid}.{rest[len('prev.'):]}")
    return _sound(cur, sid, meta.sha256) or not _sound(path, sid, meta.sha256)


def sweep(index_dir: Path, manifest: Manifest) -> list[Path]:
    """Writers only, under the lock: delete what killed runs left behind (only our own files)."""
    removed: list[Path] = []
    for folder, name in owned_names(index_dir):
        if _leftover(folder, name, index_dir, manifest):  # a Path only for what goes: there may be 400,000
            path = index_dir / folder / name if folder else index_dir / name
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed


def write_json(path: Path, obj: Any) -> None:
    atomic_write(path, dumps(obj))


def save_chapters(index_dir: Path, source_id: str, chapters: list[dict[str, Any]]) -> None:
    """A folder book's parsed chapters (see `index.extract.mdbook.Chapter`): a cache, written after
    the source; a missing or damaged one only means every chapter is read again."""
    atomic_write(chapters_file(index_dir, source_id), dumps({"format_version": FORMAT_VERSION, "chapters": chapters}))


def load_chapters(index_dir: Path, source_id: str) -> dict[str, dict[str, Any]]:
    """The cached chapters of a folder book by library path ({} when there are none)."""
    try:
        data = orjson.loads(chapters_file(index_dir, source_id).read_bytes())
        if data.get("format_version") != FORMAT_VERSION:
            return {}
        return {c["file"]: c for c in data["chapters"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}
