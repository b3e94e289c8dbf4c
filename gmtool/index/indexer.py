"""The write side: files -> extract -> classify -> fields -> store (+ keyword index, vectors).

The parent process is the only writer. It saves each source atomically and updates the
manifest right after, so the manifest always describes files that exist and match; a run
killed at any point leaves a valid index, and the next run completes the work.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from gmtool import __version__
from gmtool.errors import GmtoolError, UsageError
from gmtool.index.discover import discover_all
from gmtool.index.files import hash_file, resolve_target
from gmtool.settings import Paths, remember_library
from gmtool.storage import store
from gmtool.types import Document, Failure, ScanReport, SourceMeta

if TYPE_CHECKING:
    from gmtool.index.extract.pdf import PdfHead
    from gmtool.rank.bm25 import Tokenized

Progress = Callable[[int, int, str], None]  # (done, total, message)



def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_FORMAT_RANK = {".pdf": 0, ".md": 1, ".markdown": 1, ".txt": 2}


def assign_source_ids(new: list[Path], taken: set[str]) -> dict[str, str]:
    """Stable, readable ids: the slug of the file name; on a clash the PDF keeps the bare slug
    and the others get their format ("cc-srd5" and "cc-srd5-md"), then a number."""
    from gmtool.textnorm import slugify

    out: dict[str, str] = {}
    ordered = sorted(new, key=lambda p: (_FORMAT_RANK.get(p.suffix.lower(), 3), str(p)))
    for p in ordered:
        base = slugify(p.stem) or "source"
        candidates = [base, f"{base}-{p.suffix.lower().lstrip('.')}"]
        sid = next((c for c in candidates if c not in taken), None)
        n = 2
        while sid is None:
            sid = f"{base}-{n}" if f"{base}-{n}" not in taken else None
            n += 1
        taken.add(sid)
        out[str(p)] = sid
    return out


def _process(doc: Document) -> Document:
    """Classification and typed fields: the same for every format."""
    from gmtool.index.classify import classify
    from gmtool.index.fields import parse_fields

    classify(doc)
    for e in doc.entries:
        e.fields = parse_fields(e.content_type, e.title, e.body)
    return doc


def _guarded(path: Path, work: Callable[[], Document]) -> Document | Failure:
    """Never raises, so one bad file cannot stop the run (or a worker pool)."""
    try:
        return _process(work())
    except GmtoolError as exc:
        return Failure(path.name, exc.code, exc.message, exc.hint)
    except MemoryError:
        return Failure(path.name, "EXTRACT_FAILED", "out of memory while reading", "")
    except Exception as exc:  # noqa: BLE001 - a third-party parser failing on a hostile file
        detail = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        if os.environ.get("GMTOOL_DEBUG"):
            traceback.print_exc()
        return Failure(path.name, "EXTRACT_FAILED", detail, "the file may be damaged; re-export it")


Extracted = tuple[str, "Document | Failure", "dict[str, Tokenized] | None"]


def _with_tokens(path_str: str, result: Document | Failure) -> Extracted:
    """Tokenize for the keyword index where the extraction ran (a worker), not in the parent."""
    from gmtool.rank.keyword import tokenize_entries

    return path_str, result, tokenize_entries(result.entries) if isinstance(result, Document) else None


def _extract_job(path_str: str, workers: int) -> Extracted:
    """A whole file, extracted and classified (in the parent or in a worker process)."""
    from gmtool.index.extract import extract

    path = Path(path_str)
    return _with_tokens(path_str, _guarded(path, lambda: extract(path, workers=workers)))


def _iter_extracted(todo: list[Path], workers: int) -> Iterator[Extracted]:
    """Results in `todo` order. With workers > 1 one process pool serves the whole run: a big PDF's
    page ranges and whole small files are all queued at once, so workers never wait for the parent,
    which merges and classifies one book while the workers read the next."""
    if workers <= 1:
        for p in todo:
            yield _extract_job(str(p), 1)
        return
    from concurrent.futures import Future, ProcessPoolExecutor

    from gmtool.index.extract.pdf import page_ranges, read_head
    from gmtool.index.extract.pdf_layout import extract_page_range

    plan: list[tuple[Path, PdfHead | None, list[Future[Any]], Failure | None]] = []
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for p in todo:
            if p.suffix.lower() == ".pdf":
                head_or_fail = _guarded_head(p, read_head)
                if isinstance(head_or_fail, Failure):
                    plan.append((p, None, [], head_or_fail))
                    continue
                ranges = page_ranges(head_or_fail.pages, workers)
                if len(ranges) > 1:
                    futs = [pool.submit(extract_page_range, str(p), a, b) for a, b in ranges]
                    plan.append((p, head_or_fail, futs, None))
                    continue
            plan.append((p, None, [pool.submit(_extract_job, str(p), 1)], None))
        # Merging and classifying a big PDF runs in the pool too, so the parent only saves.
        finals: list[Future[Any] | Extracted] = []
        for p, head, futs, fail in plan:
            if fail is not None:
                finals.append((str(p), fail, None))
            elif head is None:
                finals.append(futs[0])
            else:
                try:
                    pages = [page for f in futs for page in f.result()]
                except Exception as exc:  # noqa: BLE001 - a worker failing on a hostile page
                    finals.append((str(p), Failure(p.name, "EXTRACT_FAILED", f"{type(exc).__name__}: {exc}"[:200],
                                                   "the file may be damaged; re-export it"), None))
                    continue
                finals.append(pool.submit(_assemble_job, str(p), head, pages))
        for item in finals:
            yield item if isinstance(item, tuple) else cast("Extracted", item.result())


def _assemble_job(path_str: str, head: PdfHead, pages: list[Any]) -> Extracted:
    from gmtool.index.extract.pdf import assemble

    path = Path(path_str)
    return _with_tokens(path_str, _guarded(path, lambda: assemble(path, head, pages)))


def _guarded_head(path: Path, read: Callable[[Path], PdfHead]) -> PdfHead | Failure:
    try:
        return read(path)
    except GmtoolError as exc:
        return Failure(path.name, exc.code, exc.message, exc.hint)
    except Exception as exc:  # noqa: BLE001 - pdfium refusing a hostile file
        return Failure(path.name, "EXTRACT_FAILED", f"{type(exc).__name__}: {exc}"[:200], "the file may be damaged")


class _OpLog:
    """The per-run operation log under .gmtool/logs/."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, msg: str) -> None:
        self.lines.append(f"{datetime.now(timezone.utc).isoformat(timespec='seconds')} {msg}")

    def write(self, index_dir: Path, kind: str) -> str | None:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        logs = index_dir / "logs"
        path = logs / f"{kind}-{stamp}.log"
        try:
            logs.mkdir(parents=True, exist_ok=True)
            with open(path, "x", encoding="utf-8") as fh:  # a log needs no fsync, only a fresh name
                fh.write("\n".join(self.lines) + "\n")
        except OSError:
            return None
        _prune_logs(logs)
        return str(path)


_KEEP_LOGS = 50


def _prune_logs(logs: Path) -> None:
    """Keep the newest logs only; names sort by time within each kind."""
    try:
        names = [n for n in os.listdir(logs) if n.endswith(".log")]
    except OSError:
        return
    if len(names) <= _KEEP_LOGS:
        return
    names.sort(key=lambda n: n.split("-", 1)[-1])
    for name in names[:-_KEEP_LOGS]:
        with contextlib.suppress(OSError):
            os.unlink(logs / name)


def run_index(
    paths: Paths,
    *,
    files: list[Path] | None = None,
    include: list[str] | None = None,
    exclude: list[str] | None = None,
    types: list[str] | None = None,
    force: bool = False,
    max_files: int = 10_000,
    workers: int | None = None,
    embed: bool = True,
    wait: bool = True,
    device: str = "auto",
    progress: Progress | None = None,
) -> ScanReport:
    t0 = time.perf_counter()
    library = paths.library
    if not library.is_dir():
        raise UsageError(
            "INVALID_PATH", f"{library} is not a directory", "pass the folder that holds your rulebooks"
        )
    workers = max(1, workers or os.cpu_count() or 1)
    report = ScanReport(library=str(library), index_dir=str(paths.index_dir))
    log = _OpLog()
    log(f"gmtool {__version__} index run in {library} (workers={workers}, force={force})")

    targeted = files is not None
    if targeted:
        chosen: list[Path] = []
        for f in files or []:
            target = resolve_target(f, library)  # the symlink policy of gmtool.index.files
            if isinstance(target, Failure):
                report.failed.append(target)
            else:
                chosen.append(target)
    else:
        found = discover_all(library, include, exclude, types)
        chosen = found.files
        report.failed.extend(found.problems)  # loops, dangling links, FIFOs, devices
    in_scope = list(chosen)  # before the cap: a capped-off file is not a removed one
    if len(chosen) > max_files:
        left = chosen[max_files:]
        report.warnings.append(
            f"MAX_FILES: {len(left)} file(s) left out by --max-files {max_files}, e.g. {left[0].name}"
        )
        chosen = chosen[:max_files]
    report.files_found = len(chosen)

    with store.writer_lock(paths.index_dir, wait=wait):
        manifest, bad = store.load_manifest_or_empty(paths.index_dir)
        if bad:
            report.warnings.append(f"{bad}: the index manifest could not be read; rebuilding it")
            log(f"manifest unreadable ({bad}); rebuilding")
        for stray in store.sweep(paths.index_dir, manifest):
            log(f"swept {stray.relative_to(paths.index_dir)} (left by an interrupted run)")
        by_file = {m.file: m for m in manifest.sources.values()}
        failed_before: dict[str, list] = manifest.extra.setdefault("failed", {})
        dirty = bool(bad)

        def save_manifest() -> None:
            nonlocal dirty
            manifest.generation += 1
            store.save_manifest(paths.index_dir, manifest)
            dirty = False

        def drop(sid: str, why: str) -> None:
            meta = manifest.sources.pop(sid)
            manifest.extra.get("index_stat", {}).pop(sid, None)
            save_manifest()
            store.remove_source(paths.index_dir, sid)
            _remove_vectors(paths.index_dir, sid)
            report.removed += 1
            log(f"removed {meta.file} ({sid}): {why}")

        def record_failure(f: Failure, r: str, size: int, mtime: float) -> None:
            nonlocal dirty
            f.file = r
            report.failed.append(f)
            if failed_before.get(r) != [size, mtime, f.code]:
                failed_before[r] = [size, mtime, f.code]
                dirty = True
            log(f"failed {r}: {f.code} {f.message}")

        def rel(p: Path) -> str:
            try:
                return p.relative_to(library).as_posix()
            except ValueError:
                return str(p)

        # 1. drop sources whose files are gone (whole-library runs only)
        if not targeted:
            present = {rel(p) for p in in_scope}
            scope_all = not (include or exclude or types)
            for sid, meta in list(manifest.sources.items()):
                gone = not (library / meta.file).exists()
                out_of_scope = scope_all and meta.file not in present
                if gone or out_of_scope:
                    drop(sid, "the file is gone" if gone else "no longer in the library")
            for r in list(failed_before):
                if not (library / r).exists() or (scope_all and r not in present):
                    del failed_before[r]
                    dirty = True

        def vanished(p: Path, r: str) -> None:
            """Deleted while this run was looking at it: not a failure, just gone."""
            report.warnings.append(f"VANISHED: {r} was removed during the run")
            log(f"vanished {r}")
            old = by_file.get(r)
            if old is not None and old.source_id in manifest.sources:
                drop(old.source_id, "the file vanished during the run")

        # 2. decide what changed: size+mtime first, then the content hash
        todo: list[Path] = []
        stats: dict[str, tuple[int, float, str]] = {}
        for p in chosen:
            r = rel(p)
            st = None
            try:
                st = p.stat()
                old = by_file.get(r)
                stat_before = _index_stat(manifest, old)
                valid_old = old is not None and _index_intact(paths.index_dir, manifest, old)
                dirty = dirty or _index_stat(manifest, old) != stat_before
                if not force and valid_old and old is not None and (old.size, old.mtime) == (st.st_size, st.st_mtime):
                    report.unchanged += 1
                    continue
                sha = hash_file(p)  # regular files only, size- and time-bounded
            except GmtoolError as exc:
                record_failure(Failure(r, exc.code, exc.message, exc.hint), r,
                               st.st_size if st else -1, st.st_mtime if st else -1.0)
                continue
            except FileNotFoundError:
                vanished(p, r)
                continue
            except OSError as exc:
                record_failure(
                    Failure(r, "UNREADABLE", str(exc).split("] ")[-1], "check the file's permissions"),
                    r, st.st_size if st else -1, st.st_mtime if st else -1.0,
                )
                continue
            if not force and valid_old and old is not None and old.sha256 == sha:
                old.size, old.mtime = st.st_size, st.st_mtime  # touched, not changed
                manifest.sources[old.source_id] = old
                dirty = True
                report.unchanged += 1
                continue
            stats[str(p)] = (st.st_size, st.st_mtime, sha)
            todo.append(p)

        # 3. extract (in parallel), then save each source and the manifest right after
        new = [p for p in todo if rel(p) not in by_file]
        new_ids = assign_source_ids(new, set(manifest.sources)) if new else {}
        done = 0
        if progress:
            progress(0, len(todo), "extracting")
        for path_str, result, toks in _iter_extracted(todo, workers):
            p = Path(path_str)
            r = rel(p)
            done += 1
            size, mtime, sha = stats[path_str]
            if isinstance(result, Failure):
                if not p.exists():
                    vanished(p, r)
                else:
                    record_failure(result, r, size, mtime)
                if progress:
                    progress(done, len(todo), f"failed {p.name}")
                continue
            old = by_file.get(r)
            sid = old.source_id if old else new_ids[path_str]
            meta = _meta(sid, p, r, result, size, mtime, sha)
            store.save_source(paths.index_dir, meta, result)
            if toks is not None:
                from gmtool.rank.keyword import save_tokens

                save_tokens(paths.index_dir, sid, meta, toks)
            manifest.sources[sid] = meta
            _record_stat(paths.index_dir, manifest, sid)
            failed_before.pop(r, None)
            save_manifest()
            store.drop_prev(paths.index_dir, sid)
            report.indexed += 1
            report.indexed_files.append(r)
            log(f"indexed {r} as {sid}: {meta.pages} pages, {meta.entry_count} entries")
            if progress:
                progress(done, len(todo), p.name)

        # 4. library-level artefacts, then the manifest once more
        from gmtool.rank.keyword import build_keyword_index

        _check_keyword(paths.index_dir, manifest)
        build_keyword_index(paths.index_dir, manifest)
        dirty = _record_keyword(paths.index_dir, manifest) or dirty
        if embed:
            from gmtool.index.embedding import embed_library

            n, warn = embed_library(paths.index_dir, manifest, device=device, progress=progress)
            report.embeddings_generated = n
            if warn:
                report.warnings.append(warn)
            dirty = True
        if dirty or not store.manifest_path(paths.index_dir).exists():
            save_manifest()

    report.sections = sum(m.entry_count for m in manifest.sources.values())
    report.duration_ms = int((time.perf_counter() - t0) * 1000)
    report.storage = {"index_dir": str(paths.index_dir), "size_bytes": store.dir_size(paths.index_dir)}
    log(f"done: {asdict(report)}")
    report.log_file = log.write(paths.index_dir, "failed" if report.failed else "ok")
    if not targeted and not include and not exclude:
        remember_library(library)
    return report


def _stats(*paths: Path) -> list[int]:
    """(size, mtime_ns) of each file, flattened; a missing file gives -1, -1."""
    out: list[int] = []
    for path in paths:
        try:
            st = path.stat()
            out += [st.st_size, st.st_mtime_ns]
        except OSError:
            out += [-1, -1]
    return out


def _source_stats(index_dir: Path, sid: str) -> list[int]:
    return _stats(store.source_file(index_dir, sid), store.pages_file(index_dir, sid))


def _record_stat(index_dir: Path, manifest: store.Manifest, sid: str) -> None:
    """Remember the index files' sizes and mtimes so a no-change rescan trusts them with a stat."""
    manifest.extra.setdefault("index_stat", {})[sid] = _source_stats(index_dir, sid)


def _index_stat(manifest: store.Manifest, meta: SourceMeta | None) -> list[int] | None:
    return manifest.extra.get("index_stat", {}).get(meta.source_id) if meta else None


def _index_intact(index_dir: Path, manifest: store.Manifest, meta: SourceMeta) -> bool:
    """Cheap when nothing was touched; otherwise the files are loaded to prove they are sound."""
    stats = _source_stats(index_dir, meta.source_id)
    if -1 in stats:
        return False
    if _index_stat(manifest, meta) == stats:
        return True
    try:
        store.load_source(index_dir, meta.source_id, meta.sha256, fallback=False)
    except GmtoolError:
        return False
    if not store.pages_sound(index_dir, meta.source_id, meta.sha256):
        return False
    _record_stat(index_dir, manifest, meta.source_id)
    return True


def _keyword_files(index_dir: Path, digest: str) -> list[Path]:
    return [index_dir / "keyword" / f"{digest}{ext}" for ext in (".bm25", ".fuzzy")]


def _check_keyword(index_dir: Path, manifest: store.Manifest) -> None:
    """A keyword file changed since it was written (damaged, truncated) is deleted, so
    `build_keyword_index` writes it again; one stat per file when all is well."""
    digest = manifest.extra.get("keyword")
    recorded = manifest.extra.get("keyword_stat")
    if not digest or recorded is None:
        return
    files = _keyword_files(index_dir, digest)
    if _stats(*files) != recorded:
        for f in files:
            with contextlib.suppress(OSError):
                f.unlink()


def _record_keyword(index_dir: Path, manifest: store.Manifest) -> bool:
    digest = manifest.extra.get("keyword")
    stats = _stats(*_keyword_files(index_dir, digest)) if digest else None
    if manifest.extra.get("keyword_stat") == stats:
        return False
    manifest.extra["keyword_stat"] = stats
    return True


def _remove_vectors(index_dir: Path, sid: str) -> None:
    for suffix in (".npy", ".keys.json", ".units.json"):
        with contextlib.suppress(FileNotFoundError):
            (index_dir / "vectors" / f"{sid}{suffix}").unlink()


def _meta(sid: str, p: Path, r: str, doc: Document, size: int, mtime: float, sha: str) -> SourceMeta:
    counts: dict[str, int] = {}
    for e in doc.entries:
        if e.content_type:
            counts[e.content_type] = counts.get(e.content_type, 0) + 1
    return SourceMeta(
        source_id=sid,
        title=(doc.title or "").strip() or p.stem,
        file=r,
        path=str(p),
        format=doc.format,
        size=size,
        mtime=mtime,
        sha256=sha,
        pages=doc.pages,
        has_outline=doc.has_outline,
        pages_without_text=doc.pages_without_text,
        indexed_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        gmtool_version=__version__,
        format_version=store.FORMAT_VERSION,
        entry_count=len(doc.entries),
        lines=doc.lines,
        type_counts=dict(sorted(counts.items())),
    )
