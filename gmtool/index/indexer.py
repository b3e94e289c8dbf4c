"""The write side: files -> extract -> classify -> fields -> store (+ keyword index, vectors).

The parent process is the only writer. It saves each source atomically and updates the
manifest right after, so the manifest always describes files that exist and match; a run
killed at any point leaves a valid index, and the next run completes the work.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from gmtool import __version__
from gmtool.errors import GmtoolError, UsageError
from gmtool.index import books as folder_books
from gmtool.index.discover import discover_all
from gmtool.index.extract import EXTRACT_VERSION
from gmtool.index.extract.mdbook import readable
from gmtool.index.files import hash_file, resolve_target
from gmtool.index.oplog import OpLog
from gmtool.index.shelf import FolderBook, book_name, shelve
from gmtool.index.workers import iter_extracted, worth_a_pool
from gmtool.settings import Paths, Settings, available_cores
from gmtool.storage import checksums, store
from gmtool.storage.atomic import atomic_write
from gmtool.storage.hashing import FileStamp
from gmtool.storage.hits import HITS_MIN_ENTRIES
from gmtool.storage.layout import KEYWORD_DIR, TOKENS_DIR, VECTORS_DIR, hits_file, keyword_files
from gmtool.storage.manifest import FailedFile, Manifest
from gmtool.textnorm import shown_name
from gmtool.types import Document, Failure, ScanReport, SourceMeta

Progress = Callable[[int, int, str], None]  # (done, total, message)

_FORMAT_RANK = {".pdf": 0, ".md": 1, ".markdown": 1, ".txt": 2}
# The manifest is written (and the books' files made durable, with one sync) once this many seconds
# have passed since the last write, or this many books, whichever comes first, and at the end: a
# kill loses at most that batch, which the next run redoes. Per book, a 100,000-file library took
# a full manifest rewrite and five fsyncs each (4,000 files: 194 s; measured on the build host).
FLUSH_EVERY_S = 5.0
FLUSH_EVERY_BOOKS = 2_000
# A source id names its index files (`SID.prev.index.json`, `SID.KEY.vN.npz`); a file name of up
# to 255 bytes must leave room for those suffixes, so the slug of a longer name is cut here.
MAX_SID_CHARS = 80


def assign_source_ids(new: list[Path], taken: set[str]) -> dict[str, str]:
    """Stable, readable ids: the slug of the file name; on a clash the PDF keeps the bare slug
    and the others get their format ("cc-srd5" and "cc-srd5-md"), then a number."""
    from gmtool.textnorm import slugify

    out: dict[str, str] = {}
    ordered = sorted(new, key=lambda p: (_FORMAT_RANK.get(p.suffix.lower(), 3), str(p)))
    for p in ordered:
        folder = p.is_dir()  # a folder book: named by the folder, whatever dots it has ("srd-5.1")
        base = slugify(book_name(p) if folder else p.stem)[:MAX_SID_CHARS].rstrip("-") or "source"
        candidates = [base, f"{base}-{'book' if folder else p.suffix.lower().lstrip('.')}"]
        sid = next((c for c in candidates if c not in taken), None)
        n = 2
        while sid is None:
            sid = f"{base}-{n}" if f"{base}-{n}" not in taken else None
            n += 1
        taken.add(sid)
        out[str(p)] = sid
    return out


@dataclass(frozen=True, slots=True)
class IndexOptions:
    """What to index and how; the defaults are a plain `gmtool scan`."""

    files: list[Path] | None = None  # a targeted run: only these files, never dropping others
    include: list[str] | None = None
    exclude: list[str] | None = None
    types: list[str] | None = None
    force: bool = False
    max_files: int = 250_000  # a guard against scanning a whole disk; a wiki export may hold 100,000 notes
    workers: int | None = None
    embed: bool = True
    wait: bool = True
    device: str = "auto"
    progress: Progress | None = None
    notice: Callable[[str], None] | None = None  # one-line news for the user now (waiting for the lock)
    settings: Settings | None = None  # None: read from the environment once, here

    @property
    def targeted(self) -> bool:
        return self.files is not None

    @property
    def whole_library(self) -> bool:
        return not (self.include or self.exclude or self.types)


@dataclass(frozen=True, slots=True)
class _Changed:
    """A file to (re)extract and what was true of it when it was looked at."""

    path: Path
    stamp: FileStamp
    mtime: float
    sha256: str


class Indexer:
    """One index run. Each step is a method; they share the manifest, the report and the log."""

    def __init__(self, paths: Paths, opts: IndexOptions) -> None:
        self.paths = paths
        self.index_dir = paths.index_dir
        self.library = paths.library
        self.opts = opts
        self.settings = opts.settings or Settings.from_env()
        self.workers, self.clamped = _worker_count(opts.workers)
        self.report = ScanReport(library=str(self.library), index_dir=str(self.index_dir))
        self.log = OpLog()
        self.manifest = Manifest()
        self.by_file: dict[str, SourceMeta] = {}
        self.dirty = False
        self._library_prefix = os.path.join(str(self.library), "")
        self._sources_dir = str(store.source_file(self.index_dir, "x").parent)
        # sources written since the manifest was (and whether it named them before): their kept
        # versions go once it is written again, or come back if it cannot be
        self._saved: list[tuple[str, bool]] = []
        self._doomed: list[str] = []  # sources dropped from the manifest: their files go after it is written
        self._flushed_at = time.monotonic()
        self._flush_cost = 0.0  # seconds the last flush took
        self.books: dict[str, FolderBook] = {}  # folder path -> the folder book (see index.shelf)
        self.looks: dict[str, folder_books.BookLook] = {}  # folder path -> its chapters as found now

    # --- the run ------------------------------------------------------------------------------

    def run(self) -> ScanReport:
        t0 = time.perf_counter()
        if not self.library.is_dir():
            raise UsageError(
                "INVALID_PATH", f"{self.library} is not a directory", "pass the folder that holds your rulebooks"
            )
        if self.clamped:
            self.report.warnings.append(
                f"WORKERS_CLAMPED: --workers {self.opts.workers} is more than the {self.workers} core(s) available; "
                f"using {self.workers}")
        self.log(f"gmtool {__version__} index run in {self.library} (workers={self.workers}, force={self.opts.force})")
        chosen, in_scope = self._choose()
        with store.writer_lock(self.index_dir, wait=self.opts.wait, on_wait=self._waiting) as held:
            for w in held.warnings:
                self.report.warnings.append(w)
                self.log(w)
            self._open_manifest()
            if not self.opts.targeted:
                self._drop_gone(in_scope)
                self._flush()  # before new files are given ids, which may be the dropped ones
            todo = self._changed(chosen)
            self._extract_and_save(todo, (held.fd,) if held.fd >= 0 else ())
            self._flush()
            self._library_artefacts()
        self._warn_empty()
        self._finish(t0)
        return self.report

    def _waiting(self, pid: int | None, since: float | None, waited: float) -> None:
        """Another writer holds the lock: say who and since when, at once and while waiting."""
        who = f"pid {pid}" if pid is not None else "another process"
        when = (f", since {datetime.fromtimestamp(since, timezone.utc):%H:%M:%S} UTC"
                if since is not None else "")
        msg = (f"WAITING: another scan ({who}{when}) is writing this index; waiting for it to finish "
               f"({waited:.0f} s so far; Ctrl-C to stop, or --no-wait to fail at once)")
        self.log(msg)
        if self.opts.notice is not None:
            self.opts.notice(msg)

    def _choose(self) -> tuple[list[Path], list[Path]]:
        """(files this run looks at, every file in scope); --max-files caps only the first:
        a capped-off file is not a removed one."""
        if self.opts.files is not None:
            chosen = self._targeted_files()
        else:
            found = discover_all(self.library, self.opts.include, self.opts.exclude, self.opts.types)
            chosen = self._shelve(found.files)
            self.report.failed.extend(found.problems)  # loops, dangling links, FIFOs, devices
        in_scope = list(chosen)
        cap = self.opts.max_files
        if len(chosen) > cap:
            left = chosen[cap:]
            self.report.warnings.append(
                f"MAX_FILES: {len(left)} file(s) left out by --max-files {cap}, e.g. {left[0].name}"
            )
            chosen = chosen[:cap]
        self.report.files_found = len(chosen)
        return chosen, in_scope

    def _targeted_files(self) -> list[Path]:
        chosen: list[Path] = []
        for f in self.opts.files or []:
            target = resolve_target(f, self.library)  # the symlink policy of gmtool.index.files
            if isinstance(target, Failure):
                self.report.failed.append(target)
            else:
                chosen.append(target)
        if any(len(p.relative_to(self.library).parts) > 1 for p in chosen):  # a chapter indexes its book
            _, books = shelve(self.library, discover_all(self.library).files)
            owner = {str(ch): b for b in books for ch in b.chapters}
            for b in {owner[str(p)].rel: owner[str(p)] for p in chosen if str(p) in owner}.values():
                self.books[str(b.folder)] = b
            chosen = [p for p in chosen if str(p) not in owner] + [b.folder for b in self.books.values()]
        return chosen

    def _shelve(self, files: list[Path]) -> list[Path]:
        """The files, with each folder book's chapters replaced by its folder (see index.shelf)."""
        loose, books = shelve(self.library, files)
        self.books = {str(b.folder): b for b in books}
        return sorted(loose + [b.folder for b in books], key=lambda p: p.relative_to(self.library).as_posix())

    # --- the manifest -------------------------------------------------------------------------

    def _open_manifest(self) -> None:
        manifest, bad = store.load_manifest_or_empty(self.index_dir)
        if bad:
            self.report.warnings.append(f"{bad}: the index manifest could not be read; rebuilding it")
            self.log(f"manifest unreadable ({bad}); rebuilding")
        for stray in store.sweep(self.index_dir, manifest):
            self.log(f"swept {stray.relative_to(self.index_dir)} (left by an interrupted run)")
        self.manifest = manifest
        self.by_file = {m.file: m for m in manifest.sources.values()}
        self.dirty = bool(bad)
        self._remove_damaged()

    def _remove_damaged(self) -> None:
        """Index files that no longer match their checksums are deleted, so this run writes them
        again: a hits file or token cache with its source's check, the keyword index and the vectors
        in the library-wide steps (whose bookkeeping is reset here)."""
        state = self.manifest.state
        for path in checksums.damaged(state.checksums, self.index_dir):
            rel = path.relative_to(self.index_dir).as_posix()
            path.unlink(missing_ok=True)
            checksums.forget(state.checksums, self.index_dir, path)
            folder = rel.split("/", 1)[0]
            if folder in (KEYWORD_DIR, TOKENS_DIR):  # a token cache is written by the keyword build
                state.keyword = None
            elif folder == VECTORS_DIR:
                state.embed_stamp = None
            self.report.warnings.append(f"CHECKSUM_MISMATCH: {rel} was damaged; written again by this scan")
            self.log(f"damaged {rel}: removed, to be written again")
            self.dirty = True

    def _save_manifest(self) -> None:
        self.manifest.generation += 1
        store.save_manifest(self.index_dir, self.manifest)
        self.dirty = False

    def _flush(self) -> None:
        """Make the books saved since the last manifest durable (one sync), write the manifest that
        names them, then delete what it no longer names: the previous versions kept while they were
        replaced, and the files of dropped sources."""
        if not self._saved and not self._doomed:
            return
        t0 = time.monotonic()
        try:
            if self._saved:
                store.sync_files(self.index_dir)
            self._save_manifest()
        except (GmtoolError, OSError):  # a full disk; a kill leaves the kept versions for the next run
            for sid, known in self._saved:
                store.roll_back(self.index_dir, sid, known)
            raise
        for sid, _ in self._saved:
            store.drop_prev(self.index_dir, sid)
        for sid in self._doomed:
            store.remove_source(self.index_dir, sid)
            checksums.forget_source(self.manifest.state.checksums, sid)
        self._saved.clear()
        self._doomed.clear()
        self._flushed_at = time.monotonic()
        self._flush_cost = self._flushed_at - t0

    def _maybe_flush(self) -> None:
        """Batches grow with the manifest: writing it never takes more than a fifth of the run."""
        since = time.monotonic() - self._flushed_at
        if len(self._saved) >= FLUSH_EVERY_BOOKS or since >= max(FLUSH_EVERY_S, 4 * self._flush_cost):
            self._flush()

    def _rel(self, p: Path) -> str:
        s, lib = str(p), self._library_prefix
        if s.startswith(lib) and os.sep == "/":  # the common case, without a Path per file
            return s[len(lib):]
        try:
            return p.relative_to(self.library).as_posix()
        except ValueError:
            return s

    def _drop(self, sid: str, why: str) -> None:
        meta = self.manifest.sources.pop(sid)
        self.manifest.state.forget(sid)
        self.dirty = True
        self._doomed.append(sid)  # removed once the manifest no longer names it (`_flush`)
        self.report.removed += 1
        self.log(f"removed {meta.file} ({sid}): {why}")

    def _record_failure(self, f: Failure, r: str, size: int, mtime: float) -> None:
        f.file = r
        self.report.failed.append(f)
        known = FailedFile(size, mtime, f.code, f.message, f.hint)
        if self.manifest.state.failed.get(r) != known:
            self.manifest.state.failed[r] = known
            self.dirty = True
        self.log(f"failed {r}: {f.code} {f.message}")

    def _vanished(self, r: str) -> None:
        """Deleted while this run was looking at it: not a failure, just gone."""
        self.report.warnings.append(f"VANISHED: {r} was removed during the run")
        self.log(f"vanished {r}")
        old = self.by_file.get(r)
        if old is not None and old.source_id in self.manifest.sources:
            self._drop(old.source_id, "the file vanished during the run")

    # --- 1. drop sources whose files are gone (whole-library runs only) -----------------------

    def _drop_gone(self, in_scope: list[Path]) -> None:
        present = {self._rel(p) for p in in_scope}
        scope_all = self.opts.whole_library
        for sid, meta in list(self.manifest.sources.items()):
            if meta.file in present:  # found by this run's walk: it exists
                continue
            gone = not (self.library / meta.file).exists()
            if gone or scope_all:
                self._drop(sid, "the file is gone" if gone else "no longer in the library")
        failed = self.manifest.state.failed
        for r in list(failed):
            if r not in present and (scope_all or not (self.library / r).exists()):
                del failed[r]
                self.dirty = True

    # --- 2. decide what changed: the stat stamp first, then the content hash -------------------

    def _changed(self, chosen: list[Path]) -> list[_Changed]:
        todo: list[_Changed] = []
        for p in chosen:
            r = self._rel(p)
            if str(p) in self.books:
                todo.extend(self._changed_book(self.books[str(p)], r))
                continue
            st = None
            try:
                st = p.stat()
                if self._unchanged(r, st):
                    self.report.unchanged += 1
                    continue
                sha = hash_file(p)  # regular files only, size- and time-bounded
            except GmtoolError as exc:
                self._record_failure(Failure(r, exc.code, exc.message, exc.hint), r,
                                     st.st_size if st else -1, st.st_mtime if st else -1.0)
                continue
            except FileNotFoundError:
                self._vanished(r)
                continue
            except OSError as exc:
                self._record_failure(
                    Failure(r, "UNREADABLE", str(exc).split("] ")[-1], "check the file's permissions"),
                    r, st.st_size if st else -1, st.st_mtime if st else -1.0,
                )
                continue
            if self._touched_only(r, st, sha):
                self.report.unchanged += 1
                continue
            todo.append(_Changed(p, FileStamp.of(st), st.st_mtime, sha))
        return todo

    def _changed_book(self, book: FolderBook, r: str) -> list[_Changed]:
        """A folder book is looked at as one: unchanged when every chapter's stamp is, else re-hashed
        where a stamp changed, and re-extracted only when that changes the book's hash."""
        old = self._valid_old(r)
        known = self.manifest.state.chapters.get(old.source_id, {}) if old else {}
        try:
            found = folder_books.look(book, self.library, known)
            if old is not None and folder_books.unchanged(found, known):
                self.report.unchanged += 1
                return []
            folder_books.finish_hash(found, self.library)
        except GmtoolError as exc:
            self._record_failure(Failure(r, exc.code, exc.message, exc.hint), r, -1, -1.0)
            return []
        except OSError as exc:
            self._record_failure(Failure(r, "UNREADABLE", str(exc).split("] ")[-1], "check the files' permissions"),
                                 r, -1, -1.0)
            return []
        self.looks[str(book.folder)] = found
        if old is not None and old.sha256 == found.sha256:  # touched only: remember the stamps
            old.size, old.mtime = found.size, found.mtime
            self.manifest.state.files[old.source_id] = folder_books.stamp_of(found)
            self.manifest.state.chapters[old.source_id] = found.state()
            self.dirty = True
            self.report.unchanged += 1
            return []
        return [_Changed(book.folder, folder_books.stamp_of(found), found.mtime, found.sha256)]

    def _valid_old(self, r: str) -> SourceMeta | None:
        """The indexed version of this file, when its index files are sound."""
        old = self.by_file.get(r)
        if old is None or self.opts.force or old.extract_version != EXTRACT_VERSION:
            return None  # forced, or read by another version of extraction: index it again
        before = self.manifest.state.index_stat.get(old.source_id)
        intact = self._index_intact(old)
        self.dirty = self.dirty or self.manifest.state.index_stat.get(old.source_id) != before
        return old if intact else None

    def _unchanged(self, r: str, st: os.stat_result) -> bool:
        """Same size, mtime, inode and ctime as when indexed: no need to read the file."""
        old = self._valid_old(r)
        return (old is not None and (old.size, old.mtime) == (st.st_size, st.st_mtime)
                and self.manifest.state.files.get(old.source_id) == FileStamp.of(st))

    def _touched_only(self, r: str, st: os.stat_result, sha: str) -> bool:
        """A new stamp but the same content: remember the stamp, keep the index."""
        old = self._valid_old(r)
        if old is None or old.sha256 != sha:
            return False
        old.size, old.mtime = st.st_size, st.st_mtime
        self.manifest.sources[old.source_id] = old
        self.manifest.state.files[old.source_id] = FileStamp.of(st)
        self.dirty = True
        return True

    def _index_intact(self, meta: SourceMeta) -> bool:
        """Cheap when nothing was touched; otherwise the files are loaded to prove they are sound."""
        stats = _source_stats(self._sources_dir, meta.source_id)
        if -1 in stats:
            return False
        touched = self.manifest.state.index_stat.get(meta.source_id) != stats
        if touched:
            try:
                store.load_source(self.index_dir, meta.source_id, meta.sha256, fallback=False)
            except GmtoolError:
                return False
            if not store.pages_sound(self.index_dir, meta.source_id, meta.sha256):
                return False
            self.manifest.state.index_stat[meta.source_id] = stats
        if touched or (meta.entry_count >= HITS_MIN_ENTRIES and not hits_file(self.index_dir, meta.source_id).exists()):
            with contextlib.suppress(GmtoolError):  # an index of an older gmtool: add the hits file
                if store.ensure_hits(self.index_dir, meta):
                    checksums.record(self.manifest.state.checksums, self.index_dir,
                                     hits_file(self.index_dir, meta.source_id))
                    self.dirty = True
        return True

    # --- 3. extract (in parallel), then save each source and the manifest right after ---------

    def _extract_and_save(self, todo: list[_Changed], lock_fds: tuple[int, ...]) -> None:
        by_path = {str(c.path): c for c in todo}
        new = [c.path for c in todo if self._rel(c.path) not in self.by_file]
        new_ids = assign_source_ids(new, set(self.manifest.sources)) if new else {}
        progress = self.opts.progress
        if progress:
            progress(0, len(todo), "extracting")
        paths = [c.path for c in todo]
        workers = self.workers
        if not paths or (self.opts.workers is None and workers > 1 and not worth_a_pool(paths)):
            workers = 1  # chosen for the user, so a small job need not pay for starting processes
        self.report.workers = workers if workers > 1 else 0
        plans = {}
        for p in paths:
            if (found := self.looks.get(str(p))) is not None:
                old = self.by_file.get(self._rel(p))
                cached = store.load_chapters(self.index_dir, old.source_id) if old and not self.opts.force else {}
                plans[str(p)] = folder_books.plan(found, self.library, cached)
        extracted = iter_extracted(paths, workers, lock_fds, self.settings.debug, plans)
        for done, (path_str, result, toks) in enumerate(extracted, start=1):
            change = by_path[path_str]
            r = self._rel(change.path)
            if isinstance(result, Failure):
                if not change.path.exists():
                    self._vanished(r)
                else:
                    self._record_failure(result, r, change.stamp.size, change.mtime)
                if progress:
                    progress(done, len(todo), f"failed {change.path.name}")
                continue
            old = self.by_file.get(r)
            self._save_source(old.source_id if old else new_ids[path_str], change, r, result, toks)
            if progress:
                progress(done, len(todo), change.path.name)

    def _save_source(self, sid: str, change: _Changed, r: str, doc: Document, toks: object) -> None:
        meta = _meta(sid, change, r, doc)
        found = self.looks.get(str(change.path))
        if found is not None:
            meta.files = [c["file"] for c in doc.chapters or []]
        for w in doc.warnings:  # coded ones (a cap reached) are the user's business, with the file's name
            code, sep, rest = w.partition(": ")
            if sep and code.isupper() and code.replace("_", "").isalpha():
                self.report.warnings.append(f"{code}: {r}: {rest}")
                self.log(f"{code}: {r}: {rest}")
            elif found is not None:  # a folder book's chapter notes name their chapter already
                self.report.warnings.append(w)
        known = r in self.by_file  # the manifest on disk names this source
        store.save_source(self.index_dir, meta, doc, durable=False)  # made durable by `_flush`
        sums = self.manifest.state.checksums
        checksums.forget_source(sums, sid)
        if len(doc.entries) >= HITS_MIN_ENTRIES:
            checksums.record(sums, self.index_dir, hits_file(self.index_dir, sid))
        if toks is not None:
            from gmtool.rank.keyword import save_tokens, worth_caching

            if worth_caching(doc.entries):
                checksums.record(sums, self.index_dir,
                                 save_tokens(self.index_dir, sid, meta, toks, durable=False))  # type: ignore[arg-type]
        self.manifest.sources[sid] = meta
        self.manifest.state.files[sid] = change.stamp
        self.manifest.state.index_stat[sid] = _source_stats(self._sources_dir, sid)
        self.manifest.state.failed.pop(r, None)
        if found is not None:
            self.manifest.state.chapters[sid] = found.state()
            store.save_chapters(self.index_dir, sid, doc.chapters or [])
        self.dirty = True
        self._saved.append((sid, known))
        self._maybe_flush()
        self.report.indexed += 1
        self.report.indexed_files.extend([c["file"] for c in doc.chapters or [] if c.get("read")] if found else [r])
        self.log(f"indexed {r} as {sid}: {meta.pages} pages, {meta.entry_count} entries")

    # --- 4. library-level artefacts, then the manifest once more ------------------------------

    def _library_artefacts(self) -> None:
        from gmtool.rank.keyword import build_keyword_index

        self._check_keyword()
        build_keyword_index(self.index_dir, self.manifest)  # saves the manifest: keyword search works now
        self._record_keyword()
        if self.opts.embed:
            from gmtool.index.embedding import embed_library

            n, warn = embed_library(self.index_dir, self.manifest, device=self.opts.device,
                                    progress=self.opts.progress, settings=self.settings,
                                    commit=self._save_manifest)
            self.report.embeddings_generated = n
            if warn:
                self.report.warnings.append(warn)
            self.dirty = True
        if self.dirty or not store.manifest_path(self.index_dir).exists():
            self._save_manifest()

    def _check_keyword(self) -> None:
        """A keyword file changed since it was written (damaged, truncated) is deleted, so
        `build_keyword_index` writes it again; one stat per file when all is well."""
        state = self.manifest.state
        if not state.keyword or state.keyword_stat is None:
            return
        files = keyword_files(self.index_dir, state.keyword)
        if _stats(*files) != state.keyword_stat:
            for f in files:
                f.unlink(missing_ok=True)

    def _record_keyword(self) -> None:
        state = self.manifest.state
        stats = _stats(*keyword_files(self.index_dir, state.keyword)) if state.keyword else None
        if state.keyword_stat != stats:
            state.keyword_stat = stats
            self.dirty = True

    # --- the summary --------------------------------------------------------------------------

    def _warn_empty(self) -> None:
        """A book with no entries cannot be found by anything: say so, by name."""
        empty = sorted(m.file for m in self.manifest.sources.values() if m.entry_count == 0)
        if empty:
            shown = ", ".join(empty[:10]) + (f" and {len(empty) - 10} more" if len(empty) > 10 else "")
            self.report.warnings.append(
                f"NO_ENTRIES: {len(empty)} book(s) gave no entries, so nothing in them can be found: {shown}")

    def _finish(self, t0: float) -> None:
        report = self.report
        report.sections = sum(m.entry_count for m in self.manifest.sources.values())
        report.duration_ms = int((time.perf_counter() - t0) * 1000)
        report.storage = {"index_dir": str(self.index_dir), "size_bytes": store.dir_size(self.index_dir)}
        self.log(f"done: {asdict(report)}")
        report.log_file = self.log.write(self.index_dir, "failed" if report.failed else "ok")
        if report.files_found == 0:  # a wrong folder: the library used so far stays the default
            report.warnings.append(
                f"NO_BOOKS: no .pdf, .md, .markdown or .txt files under {self.paths.library}; "
                "the default library was not changed (check the folder)")
        elif not self.opts.targeted and not self.opts.include and not self.opts.exclude:
            _remember_library(self.paths)


def run_index(paths: Paths, **options: object) -> ScanReport:
    """One index run with `IndexOptions` given by keyword (the engine's entry point)."""
    return Indexer(paths, IndexOptions(**options)).run()  # type: ignore[arg-type]


def _worker_count(asked: int | None) -> tuple[int, bool]:
    """(extraction processes, whether `asked` was cut): more processes than cores only add memory
    (each holds a parser and a page) and never speed."""
    cores = available_cores()
    if asked is None:
        return cores, False
    return max(1, min(asked, cores)), asked > cores


def _remember_library(paths: Paths) -> None:
    """Best effort: a read-only config dir must never fail a scan."""
    import json

    try:
        atomic_write(paths.config_file, json.dumps({"library": str(paths.library.resolve())}).encode())
    except (OSError, GmtoolError):
        pass


def _stats(*paths: Path | str) -> list[int]:
    """(size, mtime_ns) of each file, flattened; a missing file gives -1, -1."""
    out: list[int] = []
    for path in paths:
        try:
            st = os.stat(path)
            out += [st.st_size, st.st_mtime_ns]
        except OSError:
            out += [-1, -1]
    return out


def _source_stats(folder: str, sid: str) -> list[int]:
    """`folder` is the index dir's sources folder, as a string: a rescan stats every source."""
    return _stats(f"{folder}/{sid}.index.json", f"{folder}/{sid}.pages.json")


def _untitled(path: Path, fmt: str) -> str:
    """The title of a book that prints none: a Markdown file's name made readable ("plerion.md" is
    "Plerion", as a folder book's is), any other file's name as it is."""
    return shown_name(readable(path.name) if fmt == "md" else path.stem)


def _meta(sid: str, change: _Changed, r: str, doc: Document) -> SourceMeta:
    counts: dict[str, int] = {}
    for e in doc.entries:
        if e.content_type:
            counts[e.content_type] = counts.get(e.content_type, 0) + 1
    return SourceMeta(
        source_id=sid,
        title=(doc.title or "").strip() or _untitled(change.path, doc.format),
        file=r,
        path=str(change.path),
        format=doc.format,
        size=change.stamp.size,
        mtime=change.mtime,
        sha256=change.sha256,
        pages=doc.pages,
        has_outline=doc.has_outline,
        pages_without_text=doc.pages_without_text,
        indexed_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        gmtool_version=__version__,
        format_version=store.FORMAT_VERSION,
        extract_version=EXTRACT_VERSION,
        entry_count=len(doc.entries),
        lines=doc.lines,
        type_counts=dict(sorted(counts.items())),
    )
