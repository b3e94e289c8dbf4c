"""`index --verify`: find every way the index disagrees with the files, change nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import store
from .config import Paths
from .discover import discover
from .errors import GmtoolError
from .indexer import file_sha256

if TYPE_CHECKING:
    from .engine import Problem, VerifyReport

_FIX = "run `gmtool index` to repair it"


def verify(paths: Paths) -> VerifyReport:
    from .engine import Problem, VerifyReport
    from .library import keyword_digest

    problems: list[Problem] = []
    idx = paths.index_dir
    try:
        manifest = store.load_manifest(idx)
    except GmtoolError as exc:
        problems.append(Problem(exc.code, str(store.manifest_path(idx)), exc.message, exc.hint))
        return VerifyReport(healthy=False, sources=0, problems=problems)

    files = {p.relative_to(paths.library).as_posix(): p for p in discover(paths.library)}
    indexed = {m.file for m in manifest.sources.values()}
    for sid, meta in sorted(manifest.sources.items()):
        path = paths.library / meta.file
        if not path.exists():
            problems.append(Problem("MISSING", meta.file, f"{sid}: the file is gone but still indexed", _FIX))
        else:
            try:
                st = path.stat()
                if (st.st_size, st.st_mtime) != (meta.size, meta.mtime) and file_sha256(path) != meta.sha256:
                    problems.append(Problem("STALE", meta.file, f"{sid}: the file changed since it was indexed", _FIX))
            except OSError as exc:
                problems.append(Problem("UNREADABLE", meta.file, str(exc), "check the file's permissions"))
        try:
            store.load_source(idx, sid, meta.sha256)
        except GmtoolError as exc:
            code = "CORRUPT" if exc.code in ("INDEX_CORRUPT", "INDEX_VERSION") else exc.code
            problems.append(Problem(code, str(store.source_file(idx, sid)), exc.message, _FIX))
    for rel in sorted(set(files) - indexed):
        problems.append(Problem("NOT_INDEXED", rel, "the file is in the library but not indexed", "run `gmtool scan`"))
    known = set(manifest.sources)
    idir = idx / "index"
    if idir.is_dir():
        for f in sorted(idir.iterdir()):
            sid = f.name.split(".")[0]
            if f.name.startswith("."):
                problems.append(Problem("ORPHANED", str(f), "a temp file left by an interrupted run", _FIX))
            elif sid not in known:
                problems.append(Problem("ORPHANED", str(f), "an index file that no source owns", _FIX))
    digest = keyword_digest(manifest)
    if manifest.sources and not (idx / "keyword" / f"{digest}.bm25").exists():
        problems.append(Problem("KEYWORD_STALE", str(idx / "keyword"), "the keyword index is missing or stale", _FIX))
    return VerifyReport(healthy=not problems, sources=len(manifest.sources), problems=problems)
