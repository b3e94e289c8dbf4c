"""`index --verify`: find every way the index disagrees with the files, change nothing
(beyond its own log under .gmtool/logs/)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gmtool.errors import GmtoolError
from gmtool.index.discover import discover
from gmtool.index.indexer import _OpLog, file_sha256
from gmtool.settings import Paths
from gmtool.storage import store

if TYPE_CHECKING:
    from gmtool.types import Problem, VerifyReport

_FIX = "run `gmtool index` to repair it"


def verify(paths: Paths) -> VerifyReport:
    from gmtool.types import VerifyReport

    problems = _problems(paths)
    report = VerifyReport(healthy=not problems, sources=0, problems=problems)
    try:
        report.sources = len(store.load_manifest(paths.index_dir).sources)
    except GmtoolError:
        pass
    if paths.index_dir.is_dir():  # never create an index dir just to log into it
        log = _OpLog()
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
    indexed = {m.file for m in manifest.sources.values()}
    failed = manifest.extra.get("failed") or {}
    for sid, meta in sorted(manifest.sources.items()):
        path = paths.library / meta.file
        if not path.exists():
            problems.append(Problem("MISSING", meta.file, f"{sid}: the file is gone but still indexed", _FIX))
        else:
            try:
                st = path.stat()
                if (st.st_size, st.st_mtime) != (meta.size, meta.mtime) and file_sha256(path) != meta.sha256:
                    known = failed.get(meta.file)
                    hint = _FIX
                    if known and known[:2] == [st.st_size, st.st_mtime]:
                        hint = f"its new version failed to index ({known[2]}); fix or re-export the file"
                    problems.append(Problem("STALE", meta.file, f"{sid}: the file changed since it was indexed", hint))
            except OSError as exc:
                problems.append(Problem("UNREADABLE", meta.file, str(exc), "check the file's permissions"))
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
                if known[:2] == [st.st_size, st.st_mtime]:
                    continue
            except OSError:
                pass
        problems.append(Problem("NOT_INDEXED", rel, "the file is in the library but not indexed", _FIX))
    problems.extend(_orphans(paths, set(manifest.sources)))
    if manifest.sources:
        problems.extend(_keyword_problems(idx, manifest))
    return problems


def _keyword_problems(idx: Path, manifest: store.Manifest) -> list[Problem]:
    from gmtool.rank.keyword import keyword_digest
    from gmtool.types import Problem

    digest = keyword_digest(manifest)
    bm25, fuzzy = idx / "keyword" / f"{digest}.bm25", idx / "keyword" / f"{digest}.fuzzy"
    if manifest.extra.get("keyword") != digest or not bm25.exists() or not fuzzy.exists():
        return [Problem("KEYWORD_STALE", str(idx / "keyword"), "the keyword index is missing or stale", _FIX)]
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
    idir = idx / "index"
    for path in sorted(p for p in idx.rglob("*") if p.is_file()):
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
