"""`index --verify`: find every way the index disagrees with the files, change nothing
(beyond its own log under .gmtool/logs/)."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import TYPE_CHECKING

from gmtool.errors import GmtoolError
from gmtool.index.discover import discover
from gmtool.index.files import hash_file
from gmtool.index.oplog import OpLog
from gmtool.settings import Paths
from gmtool.storage import checksums, layout, store
from gmtool.storage.hashing import FileStamp
from gmtool.storage.manifest import Manifest

if TYPE_CHECKING:
    from gmtool.types import Problem, SourceMeta, VerifyReport

_FIX = "run `gmtool index` to repair it"


def verify(paths: Paths) -> VerifyReport:
    from gmtool.types import VerifyReport

    problems = _problems(paths)
    report = VerifyReport(healthy=not problems, sources=0, problems=problems)
    try:
        report.sources = len(store.load_manifest(paths.index_dir).sources)
    except GmtoolError:
        pass
    if store.has_marker(paths.index_dir):  # never create an index dir, or write into a foreign one
        log = OpLog()
        log(f"verify {paths.library}: {'healthy' if report.healthy else f'{len(problems)} problem(s)'}")
        for p in problems:
            log(f"{p.code} {p.file}: {p.message} ({p.hint})")
        report.log_file = log.write(paths.index_dir, "verify")
    return report


def _problems(paths: Paths) -> list[Problem]:
    from gmtool.types import Problem

    problems: list[Problem] = []
    idx = paths.index_dir
    try:
        manifest = store.load_manifest(idx)
    except GmtoolError as exc:
        return [Problem(exc.code, str(store.manifest_path(idx)), exc.message, exc.hint)]

    files = {p.relative_to(paths.library).as_posix(): p for p in discover(paths.library)}
    indexed = {f for m in manifest.sources.values() for f in (m.files or [m.file])}
    failed = manifest.state.failed
    if (pid := store.stale_lock(idx)) is not None:
        problems.append(Problem("STALE_LOCK", str(layout.lock_path(idx)), store.stale_lock_message(pid),
                                "the next `gmtool scan` or `gmtool index` takes it over"))
    for sid, meta in sorted(manifest.sources.items()):
        problems.extend(_file_problems(paths, manifest, sid, meta))
        try:
            store.load_source(idx, sid, meta.sha256, fallback=False)
        except GmtoolError as exc:
            code = "CORRUPT" if exc.code in ("INDEX_CORRUPT", "INDEX_VERSION") else exc.code
            problems.append(Problem(code, str(store.source_file(idx, sid)), exc.message, _FIX))
        else:
            if not store.pages_sound(idx, sid, meta.sha256):
                problems.append(Problem("CORRUPT", str(store.pages_file(idx, sid)),
                                        f"the page texts of '{sid}' are missing, damaged or stale", _FIX))
    for rel in sorted(set(files) - indexed):
        known = failed.get(rel)
        if known:  # the last run tried it and reported why it failed: nothing the index can do
            try:
                st = files[rel].stat()
                if known.same_file(st.st_size, st.st_mtime):
                    continue
            except OSError:
                pass
        problems.append(Problem("NOT_INDEXED", rel, "the file is in the library but not indexed", _FIX))
    problems.extend(_orphans(paths, set(manifest.sources)))
    for path in checksums.damaged(manifest.state.checksums, idx, full=True):  # every byte, every time
        problems.append(Problem("CHECKSUM_MISMATCH", str(path),
                                "the file does not match the checksum written with it (damaged)",
                                "run `gmtool scan`: it writes the file again"))
    if manifest.sources:
        problems.extend(_keyword_problems(idx, manifest))
    return problems


def _file_problems(paths: Paths, manifest: Manifest, sid: str, meta: SourceMeta) -> list[Problem]:
    """The library file of one source: gone, changed since indexed (even when a replacement
    kept its size and mtime: the stamp's inode and ctime differ), or unreadable."""
    from gmtool.types import Problem

    path = paths.library / meta.file
    if not path.exists():
        return [Problem("MISSING", meta.file, f"{sid}: the file is gone but still indexed", _FIX)]
    if meta.files:
        return _book_problems(paths, manifest, sid, meta)
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):  # a FIFO or device in its place: never read it (it would hang)
            return [Problem("NOT_A_FILE", meta.file, f"{sid}: the indexed path is no longer a regular file",
                            "put the book back, or run `gmtool index` to drop it")]
        same = ((st.st_size, st.st_mtime) == (meta.size, meta.mtime)
                and manifest.state.files.get(sid) in (None, FileStamp.of(st)))
        if same and sid not in manifest.state.files and st.st_ctime_ns > _indexed_ns(meta):
            same = False  # no stamp recorded (an older index): a change after indexing needs the hash
        if same or hash_file(path) == meta.sha256:  # regular files only, bounded (never blocks on a FIFO)
            return []
    except GmtoolError as exc:
        return [Problem(exc.code, meta.file, exc.message, exc.hint)]
    except OSError as exc:
        return [Problem("UNREADABLE", meta.file, str(exc), "check the file's permissions")]
    known = manifest.state.failed.get(meta.file)
    hint = _FIX
    if known and known.same_file(st.st_size, st.st_mtime):
        hint = f"its new version failed to index ({known.code}); fix or re-export the file"
    return [Problem("STALE", meta.file, f"{sid}: the file changed since it was indexed", hint)]


def _book_problems(paths: Paths, manifest: Manifest, sid: str, meta: SourceMeta) -> list[Problem]:
    """A folder book (see index.shelf): each chapter gone, or changed since indexed by its stamp
    and then its hash; a chapter added to the folder shows as NOT_INDEXED."""
    from gmtool.types import Problem

    known = manifest.state.chapters.get(sid, {})
    out: list[Problem] = []
    for rel in meta.files:
        path = paths.library / rel
        was = known.get(rel)
        try:
            st = path.stat()
            if not stat.S_ISREG(st.st_mode):
                out.append(Problem("NOT_A_FILE", rel, f"{sid}: a chapter is no longer a regular file", _FIX))
            elif not (isinstance(was, list) and len(was) == 5
                      and (FileStamp.of(st) == FileStamp.from_list(was[:4]) or hash_file(path) == was[4])):
                out.append(Problem("STALE", rel, f"{sid}: the chapter changed since it was indexed", _FIX))
        except FileNotFoundError:
            out.append(Problem("MISSING", rel, f"{sid}: the chapter is gone but still indexed", _FIX))
        except GmtoolError as exc:
            out.append(Problem(exc.code, rel, exc.message, exc.hint))
        except OSError as exc:
            out.append(Problem("UNREADABLE", rel, str(exc), "check the file's permissions"))
    return out


def _indexed_ns(meta: SourceMeta) -> int:
    from datetime import datetime

    try:
        return int(datetime.fromisoformat(meta.indexed_at).timestamp() * 1e9)
    except ValueError:
        return 0


def _keyword_problems(idx: Path, manifest: Manifest) -> list[Problem]:
    from gmtool.rank.keyword import keyword_digest
    from gmtool.types import Problem

    digest = keyword_digest(manifest)
    bm25, fuzzy = layout.keyword_files(idx, digest)
    if manifest.state.keyword != digest or not bm25.exists() or not fuzzy.exists():
        return [Problem("KEYWORD_STALE", str(layout.keyword_dir(idx)), "the keyword index is missing or stale", _FIX)]
    from gmtool.rank.bm25 import BM25Index
    from gmtool.rank.fuzzy import TitleMatcher

    for path, cls in ((bm25, BM25Index), (fuzzy, TitleMatcher)):
        try:
            cls.load(path)
        except Exception as exc:  # noqa: BLE001 - whatever a damaged file makes the loader raise
            return [Problem("CORRUPT", str(path), f"the keyword index is damaged ({exc})"[:300], _FIX)]
    return []


def _orphans(paths: Paths, known: set[str]) -> list[Problem]:
    """Files a killed run left behind; a live writer's temp files are work in progress."""
    from gmtool.types import Problem

    out: list[Problem] = []
    idx = paths.index_dir
    writing = store.active_writer(idx) is not None
    idir = store.source_file(idx, "x").parent
    for path in layout.owned_files(idx):
        if store.is_temp_name(path.name):
            if not writing:
                out.append(Problem("ORPHANED", str(path), "a temp file left by an interrupted run", _FIX))
        elif path.parent == idir:
            sid, _, rest = path.name.partition(".")
            if sid not in known and not writing:
                out.append(Problem("ORPHANED", str(path), "an index file that no source owns", _FIX))
            elif rest.startswith("prev.") and not writing:
                out.append(Problem("ORPHANED", str(path), "a previous version kept by an interrupted run", _FIX))
    return out
