"""The on-disk index: one orjson file per source, and a manifest written last.

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
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson

from gmtool import __version__
from gmtool.errors import GmtoolError, IndexError_
from gmtool.types import Document, Entry, SourceMeta

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
LOCKFILE = "lock"


def atomic_write(path: Path, data: bytes) -> None:
    """Write via a temp file in the same directory, fsync, then rename over the target."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def is_temp_name(name: str) -> bool:
    """Temp files of atomic writes here and in rank/: `.NAME.PID.tmp`, `.NAME.XXXXXX.tmp`."""
    return name.startswith(".") and name.endswith(".tmp")


def source_file(index_dir: Path, source_id: str) -> Path:
    return index_dir / "index" / f"{source_id}.index.json"


def pages_file(index_dir: Path, source_id: str) -> Path:
    return index_dir / "index" / f"{source_id}.pages.json"


def prev_file(path: Path) -> Path:
    """Where the version the manifest still names is kept while `path` is being replaced."""
    sid, _, rest = path.name.partition(".")
    return path.with_name(f"{sid}.prev.{rest}")


def _keep_prev(path: Path) -> None:
    """Hard-link the current file aside, so it stays readable after `path` is replaced.

    An existing kept version is left alone: `sweep` only leaves one in place when it is the
    version the manifest names (and `path` is not).
    """
    prev = prev_file(path)
    if prev.exists():
        return
    tmp = prev.with_name(f".{prev.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    try:
        os.link(path, tmp)
    except FileNotFoundError:
        return
    except OSError:  # no hard links on this file system: copy
        import shutil

        shutil.copyfile(path, tmp)
    os.replace(tmp, prev)


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


def dumps(obj: Any) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS)


class SourceRecord:
    """A loaded source: its metadata, entries and page texts."""

    __slots__ = ("entries", "meta", "page_labels")

    def __init__(self, meta: SourceMeta, entries: list[Entry], page_labels: list[str] | None) -> None:
        self.meta = meta
        self.entries = entries
        self.page_labels = page_labels


def save_source(index_dir: Path, meta: SourceMeta, doc: Document) -> None:
    payload = {
        "format_version": FORMAT_VERSION,
        "gmtool_version": __version__,
        "meta": asdict(meta),
        "entries": [asdict(e) for e in doc.entries],
        "page_labels": doc.page_labels,
    }
    # Page texts go in a file of their own: searches never need them, so loads stay fast.
    pages = {"format_version": FORMAT_VERSION, "sha256": meta.sha256, "page_texts": doc.page_texts}
    for path, data in ((pages_file(index_dir, meta.source_id), pages), (source_file(index_dir, meta.source_id), payload)):
        _keep_prev(path)
        atomic_write(path, dumps(data))


def drop_prev(index_dir: Path, source_id: str) -> None:
    """Once the manifest names the new version, the kept previous one is not needed."""
    for path in (source_file(index_dir, source_id), pages_file(index_dir, source_id)):
        with contextlib.suppress(FileNotFoundError):
            prev_file(path).unlink()


def _entry(d: dict[str, Any]) -> Entry:
    return Entry(**d)


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


def _load_source_at(path: Path, source_id: str, expect_sha: str | None) -> SourceRecord:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise IndexError_(
            "INDEX_MISSING", f"index file for '{source_id}' is missing", "run `gmtool scan` to rebuild it"
        ) from None
    try:
        data = orjson.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not an object")
    except ValueError:
        raise IndexError_(
            "INDEX_CORRUPT", f"index file for '{source_id}' is corrupt", "run `gmtool scan` to rebuild it"
        ) from None
    if data.get("format_version") != FORMAT_VERSION:
        raise IndexError_(
            "INDEX_VERSION",
            f"index file for '{source_id}' has format {data.get('format_version')}, expected {FORMAT_VERSION}",
            "run `gmtool scan` to rebuild it",
        )
    try:
        meta = SourceMeta(**data["meta"])
        entries = [_entry(e) for e in data["entries"]]
    except (KeyError, TypeError):
        raise IndexError_(
            "INDEX_CORRUPT", f"index file for '{source_id}' is corrupt", "run `gmtool scan` to rebuild it"
        ) from None
    if expect_sha is not None and meta.sha256 != expect_sha:
        raise IndexError_(
            "INDEX_STALE", f"index file for '{source_id}' does not match the manifest", "run `gmtool scan`"
        )
    return SourceRecord(meta, entries, data.get("page_labels"))


def remove_source(index_dir: Path, source_id: str) -> None:
    for path in (source_file(index_dir, source_id), pages_file(index_dir, source_id)):
        for p in (path, prev_file(path)):
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


def sweep(index_dir: Path, manifest: Manifest) -> list[Path]:
    """Writers only, under the lock: delete what killed runs left behind: temp files, index
    files of sources the manifest does not name, and kept previous versions, except where
    the kept one is what the manifest names and the current file is not."""
    removed: list[Path] = []
    if not index_dir.is_dir():
        return removed
    idir = index_dir / "index"
    for root, _dirs, names in os.walk(index_dir):
        for name in names:
            path = Path(root) / name
            stale = is_temp_name(name)
            if not stale and path.parent == idir:
                sid, _, rest = name.partition(".")
                meta = manifest.sources.get(sid)
                if meta is None:
                    stale = True
                elif rest.startswith("prev."):
                    cur = path.with_name(f"{sid}.{rest[len('prev.'):]}")
                    stale = _sound(cur, sid, meta.sha256) or not _sound(path, sid, meta.sha256)
            if stale:
                with contextlib.suppress(OSError):
                    path.unlink()
                    removed.append(path)
    return removed


# --- manifest -------------------------------------------------------------------------------


class Manifest:
    """Which sources are indexed (with their metadata) plus library-level artefacts."""

    def __init__(
        self, sources: dict[str, SourceMeta] | None = None, generation: int = 0, extra: dict[str, Any] | None = None
    ) -> None:
        self.sources: dict[str, SourceMeta] = sources or {}
        self.generation = generation
        self.extra: dict[str, Any] = extra or {}

    def to_bytes(self) -> bytes:
        return dumps(
            {
                "format_version": FORMAT_VERSION,
                "gmtool_version": __version__,
                "generation": self.generation,
                "written_at": time.time(),
                "sources": {k: asdict(v) for k, v in sorted(self.sources.items())},
                "extra": self.extra,
            }
        )


def manifest_path(index_dir: Path) -> Path:
    return index_dir / MANIFEST


def load_manifest(index_dir: Path) -> Manifest:
    """Missing manifest -> INDEX_NOT_FOUND; unreadable or other version -> INDEX_CORRUPT/INDEX_VERSION."""
    path = manifest_path(index_dir)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise IndexError_(
            "INDEX_NOT_FOUND",
            f"no index at {index_dir}",
            "run `gmtool scan DIR` on your rulebook folder first (or pass --library DIR)",
        ) from None
    try:
        data = orjson.loads(raw)
        if data.get("format_version") != FORMAT_VERSION:
            raise IndexError_(
                "INDEX_VERSION",
                f"index format {data.get('format_version')} is not {FORMAT_VERSION}",
                "run `gmtool scan --force` to rebuild the index",
            )
        sources = {k: SourceMeta(**v) for k, v in data["sources"].items()}
    except GmtoolError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError):
        raise IndexError_(
            "INDEX_CORRUPT", f"the index manifest in {index_dir} is corrupt", "run `gmtool scan` to rebuild it"
        ) from None
    return Manifest(sources, int(data.get("generation", 0)), data.get("extra") or {})


def load_manifest_or_empty(index_dir: Path) -> tuple[Manifest, str | None]:
    """For writers: a corrupt manifest is reported but never stops a scan from rebuilding."""
    try:
        return load_manifest(index_dir), None
    except GmtoolError as exc:
        if exc.code == "INDEX_NOT_FOUND":
            return Manifest(), None
        return Manifest(), exc.code


def save_manifest(index_dir: Path, manifest: Manifest) -> None:
    atomic_write(manifest_path(index_dir), manifest.to_bytes())


def manifest_stamp(index_dir: Path) -> tuple[int, int] | None:
    """Cheap change detector for long-lived readers (serve): (mtime_ns, size) of the manifest."""
    try:
        st = manifest_path(index_dir).stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


# --- writer lock ------------------------------------------------------------------------------


@contextlib.contextmanager
def writer_lock(index_dir: Path, wait: bool = True, timeout: float = 600.0) -> Iterator[None]:
    """One writer at a time. Readers never lock: they rely on atomic renames."""
    import fcntl

    index_dir.mkdir(parents=True, exist_ok=True)
    fh = open(index_dir / LOCKFILE, "a+")  # noqa: SIM115 - held open for the whole block
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait or time.monotonic() > deadline:
                    raise IndexError_(
                        "INDEX_LOCKED",
                        f"another gmtool process is writing the index in {index_dir}",
                        "wait for it to finish, or run without --no-wait to queue behind it",
                    ) from None
                time.sleep(0.1)
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            fh.seek(0)
            fh.truncate()  # an empty lock file: no writer; a pid left behind: a killed one
        with contextlib.suppress(OSError):
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        fh.close()


def active_writer(index_dir: Path) -> int | None:
    """The pid of a live process holding the writer lock, read without taking it."""
    try:
        pid = int((index_dir / LOCKFILE).read_text().strip() or 0)
    except (OSError, ValueError):
        return None
    if pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    return pid


def dir_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.stat(os.path.join(root, name)).st_size
    return total
